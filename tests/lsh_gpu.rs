//! LSH hashing on the GPU gives the CPU's keywords bit for bit (E2LSH and its L1 variant), on
//! vectors whose dimension is not a multiple of the CPU's 8 summation lanes. Without a GPU it
//! prints `skipped: <reason>`.

#![allow(clippy::unwrap_used)]

use genie::lsh::{Family, LshParams, VectorSet, VectorTransform};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn skip(reason: impl std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "skipped: {reason}");
}

#[test]
fn gpu_projection_hashing_equals_cpu() {
    if let Err(reason) = genie::core::backend::cuda_probe() {
        skip(reason);
        return;
    }
    let mut rng = StdRng::seed_from_u64(9);
    let (n, d) = (3000usize, 101usize);
    let data: Vec<f32> = (0..n * d)
        .map(|_| rng.random_range(-50.0f32..200.0))
        .collect();
    let vectors = VectorSet::new(d, data).unwrap();
    for (family, width) in [
        (Family::E2lsh, 40.0),
        (Family::L1, 300.0),
        (Family::E2lsh, 0.5),
    ] {
        let t = VectorTransform::new(LshParams::new(family, d, 97, width, 5)).unwrap();
        let gpu = t
            .keywords_of_all_gpu(&vectors)
            .unwrap()
            .expect("a projection family");
        let cpu: Vec<u32> = (0..n)
            .flat_map(|i| t.keywords(vectors.row(i)).unwrap())
            .collect();
        let differ = gpu.iter().zip(&cpu).filter(|(a, b)| a != b).count();
        assert_eq!(
            differ,
            0,
            "{family:?} width {width}: {differ} of {} keywords differ",
            cpu.len()
        );
    }
}
