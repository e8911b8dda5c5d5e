//! Random binning hashing for the Laplacian kernel `k(p, q) = exp(-||p - q||_1 / sigma)` (paper
//! section IV-A3, Eqn. 2, after Rahimi and Recht): per function and dimension a regular grid of
//! width `g ~ Gamma(2, sigma)` (the density `g k''(g)` of the 1-D Laplacian kernel) shifted by
//! `u ~ U[0, g)`. The signature is the vector of cells `floor((p^j - u^j) / g^j)`; two points share
//! a cell in every dimension with probability `k(p, q)`. The signature is long (one cell per
//! dimension) and is re-hashed as a whole. Cells are written as zigzag LEB128 varints, a prefix
//! code (so equal byte strings mean equal cells) that is one byte for the small cell numbers a
//! grid wider than the data gives, which makes the re-hash about four times shorter.

use super::{draw_functions, GpuParams, VectorHash};
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
        let gamma = Gamma::new(2.0, params.width).ok();
        let seeds = draw_functions(params, |rng| {
            for _ in 0..dim {
                let g: f64 = gamma
                    .as_ref()
                    .map_or(params.width, |d| d.sample(rng))
                    .max(f64::MIN_POSITIVE);
                inv_width.push(1.0 / g);
                shift.push(rng.random_range(0.0..1.0) * g);
            }
        });
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
        floor_i32((f64::from(x) - self.shift[k]) * self.inv_width[k])
    }
}

/// `y.floor() as i32` (saturating, NaN to 0) without a call to libm's `floor`, which the baseline
/// x86-64 target lacks an instruction for.
#[inline]
fn floor_i32(y: f64) -> i32 {
    let t = y as i32;
    t.saturating_sub(i32::from(f64::from(t) > y))
}

/// Appends `x` as a zigzag LEB128 varint (1 byte for -64..=63).
fn push_varint(out: &mut Vec<u8>, x: i32) {
    let mut z = ((x << 1) ^ (x >> 31)) as u32;
    while z >= 0x80 {
        out.push((z as u8 & 0x7f) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// The grids of random binning, borrowed for GPU hashing.
#[derive(Clone, Copy, Debug)]
pub struct BinningParams<'a> {
    /// `m x dim` reciprocal grid widths `1 / g`, row-major.
    pub inv_width: &'a [f64],
    /// `m x dim` shifts `u`, row-major.
    pub shift: &'a [f64],
    /// The re-hash seeds.
    pub seeds: &'a [u32],
}

impl VectorHash for RandomBinning {
    fn seeds(&self) -> &[u32] {
        &self.seeds
    }

    fn gpu_params(&self) -> Option<GpuParams<'_>> {
        Some(GpuParams::Binning(BinningParams {
            inv_width: &self.inv_width,
            shift: &self.shift,
            seeds: &self.seeds,
        }))
    }

    fn signature(&self, i: usize, v: &[f32], out: &mut Vec<u8>) {
        let base = i * self.dim;
        let (inv, shift) = (
            &self.inv_width[base..base + self.dim],
            &self.shift[base..base + self.dim],
        );
        out.reserve(self.dim);
        let mut cells = [0i32; 64];
        for ((xs, iws), us) in v.chunks(64).zip(inv.chunks(64)).zip(shift.chunks(64)) {
            // computed apart from the encoding, so that this loop vectorizes
            for (((c, &x), &iw), &u) in cells.iter_mut().zip(xs).zip(iws).zip(us) {
                *c = floor_i32((f64::from(x) - u) * iw);
            }
            for &c in &cells[..xs.len()] {
                push_varint(out, c);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{floor_i32, push_varint};

    #[test]
    fn floors() {
        for y in [
            -2.5,
            -1.0,
            -0.5,
            -0.0,
            0.0,
            0.3,
            1.0,
            2.7,
            1e12,
            -1e12,
            2147483647.5,
        ] {
            assert_eq!(floor_i32(y), y.floor() as i32, "{y}");
        }
        assert_eq!(floor_i32(f64::NAN), 0);
        assert_eq!(floor_i32(f64::NEG_INFINITY), i32::MIN);
    }

    #[test]
    fn varints() {
        let enc = |x| {
            let mut v = Vec::new();
            push_varint(&mut v, x);
            v
        };
        assert_eq!(enc(0), [0]);
        assert_eq!(enc(-1), [1]);
        assert_eq!(enc(1), [2]);
        assert_eq!(enc(63), [126]);
        assert_eq!(enc(-64), [127]);
        assert_eq!(enc(64), [0x80, 1]);
        assert_eq!(enc(i32::MIN), [0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(enc(i32::MAX), [0xfe, 0xff, 0xff, 0xff, 0x0f]);
    }
}
