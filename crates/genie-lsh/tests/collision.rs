//! Collision probabilities of each family against its theory, over many random pairs and
//! functions (paper section IV): Eqn. 11 for E2LSH (Gaussian) and its Cauchy variant, the Laplacian
//! kernel `exp(-||p - q||_1 / sigma)` for random binning, `(1 - theta/pi)^bits` for sign random
//! projections, the Jaccard similarity for MinHash, and `s + (1 - s) / D` after the re-hash
//! (Theorem 4.1's `omega = 1/D`). Each estimate must lie within 5 standard errors of the theory.
#![allow(clippy::unwrap_used)]

use genie_lsh::hash::binning::RandomBinning;
use genie_lsh::hash::minhash::MinHash;
use genie_lsh::hash::projection::ProjectionHash;
use genie_lsh::hash::sign::SignProjection;
use genie_lsh::hash::VectorHash;
use genie_lsh::metric::{angle, l1};
use genie_lsh::{Family, LshParams, VectorTransform};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use std::f64::consts::PI;

const DIM: usize = 8;
const FUNCTIONS: u32 = 400;
const PAIRS: usize = 50;

fn gaussian(rng: &mut ChaCha8Rng, scale: f64) -> Vec<f32> {
    (0..DIM)
        .map(|_| {
            let x: f64 = StandardNormal.sample(rng);
            (x * scale) as f32
        })
        .collect()
}

fn unit(rng: &mut ChaCha8Rng) -> Vec<f64> {
    let v: Vec<f64> = (0..DIM).map(|_| StandardNormal.sample(rng)).collect();
    let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

/// Asserts that `hits / trials` is within 5 standard errors of `p` (plus a little slack for `p`
/// near 0 or 1).
fn assert_close(hits: usize, trials: usize, p: f64, what: &str) {
    let est = hits as f64 / trials as f64;
    let se = (p * (1.0 - p) / trials as f64).sqrt();
    assert!(
        (est - p).abs() <= 5.0 * se + 0.003,
        "{what}: measured {est:.4} over {trials} trials, theory {p:.4} (se {se:.4})"
    );
}

/// Standard normal CDF (Abramowitz & Stegun 7.1.26, error < 1.5e-7).
fn phi(x: f64) -> f64 {
    let z = x.abs() / 2f64.sqrt();
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-z * z).exp();
    if x >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// Eqn. 11 for the Gaussian (2-stable) family, `c = w / Delta`.
fn psi_l2(c: f64) -> f64 {
    1.0 - 2.0 * phi(-c) - 2.0 / ((2.0 * PI).sqrt() * c) * (1.0 - (-c * c / 2.0).exp())
}

/// Eqn. 11 for the Cauchy (1-stable) family, `c = w / Delta`.
fn psi_l1(c: f64) -> f64 {
    2.0 * c.atan() / PI - (1.0 + c * c).ln() / (PI * c)
}

fn collisions(h: &dyn VectorHash, p: &[f32], q: &[f32]) -> usize {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    (0..h.functions() as usize)
        .filter(|&i| {
            a.clear();
            b.clear();
            h.signature(i, p, &mut a);
            h.signature(i, q, &mut b);
            a == b
        })
        .count()
}

fn params(family: Family, width: f64, seed: u64) -> LshParams {
    LshParams {
        functions: FUNCTIONS,
        ..LshParams::new(family, DIM, FUNCTIONS, width, seed)
    }
}

#[test]
fn e2lsh_follows_eqn_11() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for c in [0.5, 1.0, 2.0, 4.0] {
        let h = ProjectionHash::new(&params(Family::E2lsh, 1.0, 11));
        let (mut hits, mut trials) = (0, 0);
        for _ in 0..PAIRS {
            // a pair at L2 distance 1 / c, so that w / Delta = c
            let p = gaussian(&mut rng, 3.0);
            let u = unit(&mut rng);
            let q: Vec<f32> = p.iter().zip(&u).map(|(&x, d)| x + (d / c) as f32).collect();
            hits += collisions(&h, &p, &q);
            trials += FUNCTIONS as usize;
        }
        assert_close(hits, trials, psi_l2(c), &format!("E2LSH w/Delta = {c}"));
    }
}

#[test]
fn cauchy_variant_follows_eqn_11() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for c in [0.5, 1.0, 2.0, 4.0] {
        let h = ProjectionHash::new(&params(Family::L1, 1.0, 12));
        let (mut hits, mut trials) = (0, 0);
        for _ in 0..PAIRS {
            let p = gaussian(&mut rng, 3.0);
            let d = gaussian(&mut rng, 1.0);
            let norm: f64 = d.iter().map(|x| f64::from(x.abs())).sum();
            let q: Vec<f32> = p
                .iter()
                .zip(&d)
                .map(|(&x, &y)| x + (f64::from(y) / (norm * c)) as f32)
                .collect();
            hits += collisions(&h, &p, &q);
            trials += FUNCTIONS as usize;
        }
        assert_close(hits, trials, psi_l1(c), &format!("L1 w/Delta = {c}"));
    }
}

#[test]
fn random_binning_follows_the_laplacian_kernel() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let sigma = 2.0;
    for target in [0.9f64, 0.6, 0.3, 0.1] {
        let h = RandomBinning::new(&params(Family::Rbh, sigma, 13));
        let (mut hits, mut trials, mut expected) = (0, 0, 0.0);
        for _ in 0..PAIRS {
            let p = gaussian(&mut rng, 5.0);
            // an L1 distance of sigma * ln(1 / target), spread at random over the dimensions
            let d = gaussian(&mut rng, 1.0);
            let norm: f64 = d.iter().map(|x| f64::from(x.abs())).sum();
            let dist = sigma * (1.0f64 / target).ln();
            let q: Vec<f32> = p
                .iter()
                .zip(&d)
                .map(|(&x, &y)| x + (f64::from(y) * dist / norm) as f32)
                .collect();
            expected += (-l1(&p, &q) / sigma).exp() * f64::from(FUNCTIONS);
            hits += collisions(&h, &p, &q);
            trials += FUNCTIONS as usize;
        }
        assert_close(
            hits,
            trials,
            expected / trials as f64,
            &format!("RBH k = {target}"),
        );
    }
}

#[test]
fn sign_projections_follow_the_angle() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for bits in [1u32, 3] {
        for theta in [0.2f64, 0.8, 1.6, 2.6] {
            let mut p = params(Family::Srp, 0.0, 14);
            p.bits = bits;
            let h = SignProjection::new(&p);
            let (mut hits, mut trials, mut expected) = (0, 0, 0.0);
            for _ in 0..PAIRS {
                let p = unit(&mut rng);
                let mut o = unit(&mut rng);
                // o orthogonal to p, then q at angle theta from p
                let dot: f64 = p.iter().zip(&o).map(|(a, b)| a * b).sum();
                o.iter_mut().zip(&p).for_each(|(x, y)| *x -= dot * y);
                let n = o.iter().map(|x| x * x).sum::<f64>().sqrt();
                let pf: Vec<f32> = p.iter().map(|&x| x as f32).collect();
                let q: Vec<f32> = p
                    .iter()
                    .zip(&o)
                    .map(|(a, b)| (theta.cos() * a + theta.sin() * b / n) as f32)
                    .collect();
                let per_bit = 1.0 - angle(&pf, &q) / PI;
                expected += per_bit.powi(bits as i32) * f64::from(FUNCTIONS);
                hits += collisions(&h, &pf, &q);
                trials += FUNCTIONS as usize;
            }
            let p = expected / trials as f64;
            assert_close(hits, trials, p, &format!("SRP bits {bits} theta {theta}"));
        }
    }
}

#[test]
fn minhash_follows_jaccard() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for shift in [10u32, 50, 90] {
        let h = MinHash::new(FUNCTIONS, 15);
        let (mut hits, mut trials) = (0, 0);
        for _ in 0..PAIRS {
            let base: u32 = rng.random_range(0..1 << 30);
            let a: Vec<u32> = (base..base + 100).collect();
            let b: Vec<u32> = (base + shift..base + shift + 100).collect();
            hits += (0..FUNCTIONS as usize)
                .filter(|&i| h.value(i, &a) == h.value(i, &b))
                .count();
            trials += FUNCTIONS as usize;
        }
        let jaccard = f64::from(100 - shift) / f64::from(100 + shift);
        assert_close(hits, trials, jaccard, &format!("MinHash J = {jaccard:.3}"));
    }
}

#[test]
fn rehash_adds_one_over_d() {
    // keywords collide when the signatures do, and otherwise with probability 1/D
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let buckets = 8;
    let c = 1.0;
    let mut p = params(Family::E2lsh, 1.0, 16);
    p.buckets = buckets;
    let t = VectorTransform::new(p).unwrap();
    let (mut hits, mut trials) = (0, 0);
    for _ in 0..PAIRS {
        let a = gaussian(&mut rng, 3.0);
        let u = unit(&mut rng);
        let b: Vec<f32> = a.iter().zip(&u).map(|(&x, d)| x + (d / c) as f32).collect();
        let (ka, kb) = (t.keywords(&a).unwrap(), t.keywords(&b).unwrap());
        hits += ka.iter().zip(&kb).filter(|(x, y)| x == y).count();
        trials += FUNCTIONS as usize;
    }
    let s = psi_l2(c);
    let p = s + (1.0 - s) / f64::from(buckets);
    assert_close(hits, trials, p, "re-hashed E2LSH, D = 8");
}

#[test]
fn reference_formulas() {
    // Eqn. 11 limits: collisions vanish as w / Delta -> 0 and approach 1 as it grows
    assert!(psi_l2(0.01) < 0.01 && psi_l2(100.0) > 0.99);
    assert!(psi_l1(0.01) < 0.01 && psi_l1(1000.0) > 0.99);
    assert!((phi(0.0) - 0.5).abs() < 1e-7 && (phi(1.96) - 0.975).abs() < 1e-4);
}
