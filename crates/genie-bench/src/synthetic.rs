//! The synthetic workload of `genie-bench`'s `table`, `multiload`, `scale` and `multigpu` modes
//! (issue 3): N objects of D dimensions x V values (one keyword per dimension) generated from a
//! seed; each query perturbs a random object (each dimension kept with probability 1/2, else a
//! random value), one item per dimension.

use crate::bench_args::BenchArgs;
use anyhow::Result;
use genie_core::{IndexBuilder, InvertedIndex, Query};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

/// The index of `args.objects` objects of `args.dims` dimensions x `args.values` values, one
/// keyword per dimension (`dim * values + value`), the values drawn from `args.seed` (chunks of
/// objects generated in parallel, each from its own seed).
pub fn generate(args: &BenchArgs) -> Result<InvertedIndex> {
    let (d, v) = (args.dims as usize, args.values);
    let chunk = 1 << 16;
    let n = args.objects as usize;
    let mut keywords = vec![0u32; n * d];
    keywords
        .par_chunks_mut(chunk * d)
        .enumerate()
        .for_each(|(c, out)| {
            let mut rng =
                SmallRng::seed_from_u64(args.seed ^ (c as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            for obj in out.chunks_mut(d) {
                for (dim, kw) in obj.iter_mut().enumerate() {
                    *kw = dim as u32 * v + rng.random_range(0..v);
                }
            }
        });
    let mut b = IndexBuilder::new()
        .blocks((0..args.dims).map(|x| x * v).collect())
        .keyword_space(args.dims * v);
    b.push_fixed(&keywords, d)?;
    drop(keywords);
    Ok(b.build()?)
}

/// `count` queries on `index`: each perturbs a random object (each dimension kept with
/// probability 1/2, else a random value), one item per dimension.
pub fn queries(index: &InvertedIndex, args: &BenchArgs, count: usize) -> Vec<Query> {
    let (d, v) = (args.dims, args.values);
    let mut rng = SmallRng::seed_from_u64(args.seed.wrapping_add(7));
    (0..count)
        .map(|_| {
            let base = rng.random_range(0..index.num_objects());
            let kws: Vec<u32> = (0..d)
                .map(|dim| {
                    if rng.random_bool(0.5) {
                        // the base object's value: find it in the dimension's block
                        (dim * v..(dim + 1) * v)
                            .find(|&kw| index.postings_of(kw).binary_search(&base).is_ok())
                            .unwrap_or(dim * v)
                    } else {
                        dim * v + rng.random_range(0..v)
                    }
                })
                .collect();
            Query::from_keywords(&kws)
        })
        .collect()
}
