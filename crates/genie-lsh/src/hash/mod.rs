//! The LSH functions `h_i` of paper section IV-A and the re-hash `r_i` of Fig. 7. Each family
//! writes function `i`'s signature of a vector as bytes; [`rehash`] maps it into `[0, D)`. Every
//! function draws its parameters from its own ChaCha8 stream (stream `i` of the seed), so the
//! first `m` functions of a larger transform are the functions of a smaller one.

pub mod binning;
pub mod minhash;
pub mod projection;
pub mod rehash;
pub mod sign;

use crate::family::{Family, LshParams};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The random stream of function `i` under `seed`.
pub fn function_rng(seed: u64, i: u32) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(u64::from(i));
    rng
}

/// Draws the re-hash seed of a function: the first draw of its stream.
pub fn rehash_seed(rng: &mut ChaCha8Rng) -> u32 {
    rng.random()
}

/// Draws the `params.functions` functions of `params`: each from its own stream, which gives
/// first its re-hash seed and then, through `draw`, the function's own parameters. Returns the
/// re-hash seeds in function order.
pub fn draw_functions(params: &LshParams, mut draw: impl FnMut(&mut ChaCha8Rng)) -> Vec<u32> {
    (0..params.functions)
        .map(|i| {
            let mut rng = function_rng(params.seed, i);
            let seed = rehash_seed(&mut rng);
            draw(&mut rng);
            seed
        })
        .collect()
}

/// A set of `m` hash functions over vectors of one dimension.
pub trait VectorHash: Send + Sync {
    /// The re-hash seeds, one per function.
    fn seeds(&self) -> &[u32];
    /// Number of functions `m`.
    fn functions(&self) -> u32 {
        self.seeds().len() as u32
    }
    /// Appends the signature of function `i` for `v` (of the family's dimension) to `out`.
    fn signature(&self, i: usize, v: &[f32], out: &mut Vec<u8>);
    /// The re-hash seed of function `i`.
    fn rehash_seed(&self, i: usize) -> u32 {
        self.seeds()[i]
    }
    /// The parameters a GPU hashes this family with, borrowed; `None` for a family without a
    /// GPU kernel (every family of [`build`] has one).
    fn gpu_params(&self) -> Option<GpuParams<'_>> {
        None
    }
}

/// A family's parameters as the GPU kernels (kernels/lsh.cu) take them.
#[derive(Clone, Copy, Debug)]
pub enum GpuParams<'a> {
    /// E2LSH and L1.
    Projection(projection::Projection<'a>),
    /// Sign random projections.
    Sign(sign::SignParams<'a>),
    /// Random binning.
    Binning(binning::BinningParams<'a>),
}

/// The functions of `params` (which must be valid).
pub fn build(params: &LshParams) -> Box<dyn VectorHash> {
    match params.family {
        Family::E2lsh | Family::L1 => Box::new(projection::ProjectionHash::new(params)),
        Family::Rbh => Box::new(binning::RandomBinning::new(params)),
        Family::Srp => Box::new(sign::SignProjection::new(params)),
    }
}
