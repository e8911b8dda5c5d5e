//! Random binning hashing for the Laplacian kernel `k(p, q) = exp(-||p - q||_1 / sigma)` (paper
//! section IV-A3, Eqn. 2, after Rahimi and Recht): per function and dimension a regular grid of
//! width `g ~ Gamma(2, sigma)` (the density `g k''(g)` of the 1-D Laplacian kernel) shifted by
//! `u ~ U[0, g)`. The signature is the vector of cells `floor((p^j - u^j) / g^j)`; two points share
//! a cell in every dimension with probability `k(p, q)`. The signature is long (one cell per
//! dimension) and is re-hashed as a whole.

use super::{function_rng, rehash_seed, VectorHash};
use crate::family::LshParams;
use rand::Rng;
use rand_distr::{Distribution, Gamma};

/// `m` random binning functions over vectors of dimension `d`.
#[derive(Clone, Debug)]
pub struct RandomBinning {
    dim: usize,
    /// `m x d` reciprocal grid widths `1 / g`, row-major.
    inv_width: Vec<f64>,
    /// `m x d` shifts `u`, row-major.
    shift: Vec<f64>,
    seeds: Vec<u32>,
}

impl RandomBinning {
    /// The functions of `params` (family RBH; `width` is the kernel width `sigma`).
    pub fn new(params: &LshParams) -> Self {
        let dim = params.dim as usize;
        let m = params.functions as usize;
        let (mut inv_width, mut shift) = (Vec::with_capacity(m * dim), Vec::with_capacity(m * dim));
        let mut seeds = Vec::with_capacity(m);
        let gamma = Gamma::new(2.0, params.width).ok();
        for i in 0..params.functions {
            let mut rng = function_rng(params.seed, i);
            seeds.push(rehash_seed(&mut rng));
            for _ in 0..dim {
                let g: f64 = gamma
                    .as_ref()
                    .map_or(params.width, |d| d.sample(&mut rng))
                    .max(f64::MIN_POSITIVE);
                inv_width.push(1.0 / g);
                shift.push(rng.random_range(0.0..1.0) * g);
            }
        }
        Self {
            dim,
            inv_width,
            shift,
            seeds,
        }
    }

    /// The cell of `x` in dimension `j` of function `i`.
    pub fn cell(&self, i: usize, j: usize, x: f32) -> i32 {
        let k = i * self.dim + j;
        ((f64::from(x) - self.shift[k]) * self.inv_width[k]).floor() as i32
    }
}

impl VectorHash for RandomBinning {
    fn functions(&self) -> u32 {
        self.seeds.len() as u32
    }

    fn signature(&self, i: usize, v: &[f32], out: &mut Vec<u8>) {
        let base = i * self.dim;
        let (inv, shift) = (
            &self.inv_width[base..base + self.dim],
            &self.shift[base..base + self.dim],
        );
        out.reserve(4 * self.dim);
        for ((&x, &iw), &u) in v.iter().zip(inv).zip(shift) {
            let cell = ((f64::from(x) - u) * iw).floor() as i32;
            out.extend_from_slice(&cell.to_le_bytes());
        }
    }

    fn rehash_seed(&self, i: usize) -> u32 {
        self.seeds[i]
    }
}
