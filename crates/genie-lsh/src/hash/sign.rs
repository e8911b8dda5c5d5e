//! Sign random projections for the angle (Charikar, the paper's reference 5): a bit is the sign
//! of `a.v` with `a ~ N(0, 1)^d`, and two vectors at angle `theta` agree on it with probability
//! `1 - theta / pi`. A function concatenates `bits` such signs (collision `(1 - theta/pi)^bits`),
//! which shortens the posting lists of each function's `2^bits` buckets.

use super::{draw_functions, GpuParams, VectorHash};
use crate::family::LshParams;
use crate::metric::dot;
use rand_distr::{Distribution, StandardNormal};

/// `m` sign-projection functions of `bits` bits over vectors of dimension `d`.
#[derive(Clone, Debug)]
pub struct SignProjection {
    dim: usize,
    bits: usize,
    /// `m x bits x d` hyperplane normals, row-major.
    a: Vec<f32>,
    seeds: Vec<u32>,
}

impl SignProjection {
    /// The functions of `params` (family SRP).
    pub fn new(params: &LshParams) -> Self {
        let (dim, bits) = (params.dim as usize, params.bits.clamp(1, 64) as usize);
        let m = params.functions as usize;
        let mut a = Vec::with_capacity(m * bits * dim);
        let seeds = draw_functions(params, |rng| {
            for _ in 0..bits * dim {
                let x: f64 = StandardNormal.sample(rng);
                a.push(x as f32);
            }
        });
        Self {
            dim,
            bits,
            a,
            seeds,
        }
    }

    /// The `bits` sign bits of function `i` (bit `j` set when `a_ij . v >= 0`).
    pub fn value(&self, i: usize, v: &[f32]) -> u64 {
        let mut sig = 0u64;
        for j in 0..self.bits {
            let row = (i * self.bits + j) * self.dim;
            if dot(&self.a[row..row + self.dim], v) >= 0.0 {
                sig |= 1 << j;
            }
        }
        sig
    }
}

/// The parameters of sign random projections, borrowed for GPU hashing.
#[derive(Clone, Copy, Debug)]
pub struct SignParams<'a> {
    /// Sign bits per function.
    pub bits: u32,
    /// `m x bits x dim` hyperplane normals, row-major.
    pub a: &'a [f32],
    /// The re-hash seeds.
    pub seeds: &'a [u32],
}

impl VectorHash for SignProjection {
    fn seeds(&self) -> &[u32] {
        &self.seeds
    }

    fn gpu_params(&self) -> Option<GpuParams<'_>> {
        Some(GpuParams::Sign(SignParams {
            bits: self.bits as u32,
            a: &self.a,
            seeds: &self.seeds,
        }))
    }

    fn signature(&self, i: usize, v: &[f32], out: &mut Vec<u8>) {
        out.extend_from_slice(&self.value(i, v).to_le_bytes());
    }
}
