//! Generated workloads shared by the benchmark modes.

use anyhow::Result;
use genie_core::{IndexBuilder, InvertedIndex, Query};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

/// Objects of `dims` attributes, each a value in `0..values` drawn by `value`, and queries that
/// keep each attribute of a random object with probability 1/2 (else draw again), as ranges of
/// +- `radius` values.
pub fn attribute_workload(
    n: usize,
    dims: u32,
    values: u32,
    radius: u32,
    nq: usize,
    seed: u64,
    value: impl Fn(&mut SmallRng) -> u32 + Sync,
) -> Result<(InvertedIndex, Vec<Query>)> {
    let keywords = attribute_keywords(n, dims, values, seed, &value);
    let queries = attribute_queries(&keywords, dims, values, radius, nq, seed, &value);
    let d = dims as usize;
    let b = IndexBuilder::from_fixed(keywords, d)?;
    Ok((
        b.blocks((0..dims).map(|x| x * values).collect())
            .keyword_space(dims * values)
            .build()?,
        queries,
    ))
}

/// The keywords of [`attribute_workload`]'s objects, `dims` per object: attribute `dim` with
/// value `v` is keyword `dim * values + v`.
pub fn attribute_keywords(
    n: usize,
    dims: u32,
    values: u32,
    seed: u64,
    value: &(impl Fn(&mut SmallRng) -> u32 + Sync),
) -> Vec<u32> {
    let d = dims as usize;
    let mut keywords = vec![0u32; n * d];
    keywords
        .par_chunks_mut(d * 4096)
        .enumerate()
        .for_each(|(c, out)| {
            let mut rng =
                SmallRng::seed_from_u64(seed ^ (c as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            for obj in out.chunks_mut(d) {
                for (dim, kw) in obj.iter_mut().enumerate() {
                    *kw = dim as u32 * values + value(&mut rng).min(values - 1);
                }
            }
        });
    keywords
}

/// The queries of [`attribute_workload`] on objects `keywords` ([`attribute_keywords`]).
pub fn attribute_queries(
    keywords: &[u32],
    dims: u32,
    values: u32,
    radius: u32,
    nq: usize,
    seed: u64,
    value: &(impl Fn(&mut SmallRng) -> u32 + Sync),
) -> Vec<Query> {
    let d = dims as usize;
    let n = keywords.len() / d.max(1);
    let mut rng = SmallRng::seed_from_u64(seed + 1);
    (0..nq)
        .map(|_| {
            let o = rng.random_range(0..n);
            Query {
                items: (0..dims)
                    .map(|dim| {
                        let v = if rng.random_bool(0.5) {
                            keywords[o * d + dim as usize] - dim * values
                        } else {
                            value(&mut rng).min(values - 1)
                        };
                        let (lo, hi) = (v.saturating_sub(radius), (v + radius).min(values - 1));
                        genie_core::Item {
                            lo: dim * values + lo,
                            hi: dim * values + hi,
                            weight: 1,
                        }
                    })
                    .collect(),
            }
        })
        .collect()
}
