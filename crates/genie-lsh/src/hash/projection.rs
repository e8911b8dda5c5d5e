//! p-stable LSH (paper section IV-B3, Eqn. 10): `h(v) = floor((a.v + b) / w)` with `a` drawn from
//! a p-stable distribution, N(0, 1) for L2 (E2LSH) or Cauchy(0, 1) for L1, and `b ~ U[0, w)`. The
//! collision probability of two vectors at distance `Delta` is Eqn. 11.

use super::{draw_functions, GpuParams, VectorHash};
use crate::family::{Family, LshParams};
use crate::metric::dot;
use rand::Rng;
use rand_distr::{Cauchy, Distribution, StandardNormal};

/// `m` p-stable functions over vectors of dimension `d`.
#[derive(Clone, Debug)]
pub struct ProjectionHash {
    dim: usize,
    width: f64,
    /// `m x d` projections, row-major.
    a: Vec<f32>,
    offsets: Vec<f64>,
    seeds: Vec<u32>,
}

impl ProjectionHash {
    /// The functions of `params` (family E2LSH or L1).
    pub fn new(params: &LshParams) -> Self {
        let dim = params.dim as usize;
        let m = params.functions as usize;
        let (mut a, mut offsets) = (Vec::with_capacity(m * dim), Vec::with_capacity(m));
        let cauchy = Cauchy::new(0.0f64, 1.0).ok();
        let seeds = draw_functions(params, |rng| {
            for _ in 0..dim {
                let x: f64 = match (params.family, &cauchy) {
                    (Family::L1, Some(c)) => c.sample(rng),
                    _ => StandardNormal.sample(rng),
                };
                a.push(x as f32);
            }
            offsets.push(rng.random_range(0.0..params.width));
        });
        Self {
            dim,
            width: params.width,
            a,
            offsets,
            seeds,
        }
    }

    /// The raw signature `floor((a_i . v + b_i) / w)` of function `i`.
    pub fn value(&self, i: usize, v: &[f32]) -> i64 {
        let a = &self.a[i * self.dim..(i + 1) * self.dim];
        ((dot(a, v) + self.offsets[i]) / self.width).floor() as i64
    }
}

/// The parameters of a projection family, borrowed for GPU hashing.
#[derive(Clone, Copy, Debug)]
pub struct Projection<'a> {
    /// `m x dim` projection vectors, row-major.
    pub a: &'a [f32],
    /// The offsets b.
    pub offsets: &'a [f64],
    /// The bucket width w.
    pub width: f64,
    /// The re-hash seeds.
    pub seeds: &'a [u32],
}

impl VectorHash for ProjectionHash {
    fn seeds(&self) -> &[u32] {
        &self.seeds
    }

    fn gpu_params(&self) -> Option<GpuParams<'_>> {
        Some(GpuParams::Projection(Projection {
            a: &self.a,
            offsets: &self.offsets,
            width: self.width,
            seeds: &self.seeds,
        }))
    }

    fn signature(&self, i: usize, v: &[f32], out: &mut Vec<u8>) {
        out.extend_from_slice(&self.value(i, v).to_le_bytes());
    }
}
