//! The CPU backend (rayon): parallel over queries, and over the sublists of a query whose lists
//! are long. It runs the same c-PQ as the GPU kernels and is the reference for them; a query whose
//! postings are many for the objects is counted over tiles of objects instead
//! ([`super::cpu_tiles`]), with the same answers. A search's mask ([`SearchParams::mask`]) goes
//! to every path: the c-PQ and the count table skip the postings of denied objects, the tiled
//! count clears their counters before a tile is offered to the top-k.

use super::cpu_cohorts::{cohort_query, plan, CohortScratch, COHORT_TILE_FACTOR};
use super::cpu_tiles::{merge_top_k, tiled_query, DenseBits, TileScratch};
use super::{Backend, Method, ResidentIndex, SearchParams};
use crate::baseline::run_query_count_table;
use crate::cpq::run_query;
use crate::error::Result;
use crate::index::{InvertedIndex, PreparedQuery};
use crate::model::Hit;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::Arc;

/// The CPU's cost model: nanoseconds per unit of work of each path on one core, measured by
/// the criterion benches of `benches/cpu_kernels.rs` (and on the device by `genie-bench --mode
/// cpu`); a query goes the way the model finds cheaper. Only the ratios matter.
#[derive(Clone, Copy, Debug)]
pub struct CpuCosts {
    /// The tiled count, per posting counted.
    pub tiled_posting_ns: f64,
    /// The tiled count, per object of the index scanned for the top-k (and cleared).
    pub tiled_object_ns: f64,
    /// The c-PQ, per posting counted.
    pub cpq_posting_ns: f64,
    /// A cohort's tiled count ([`super::cpu_cohorts`]), per posting counted (an add to a 64-bit
    /// word of lanes: the tile's objects take 8 times the bytes, so its adds reach further
    /// into the cache and its lists' slices of a tile are shorter).
    pub cohort_posting_ns: f64,
    /// A cohort's tiled count, per object of the index scanned for its members' top-k (a 64-bit
    /// word of lanes, and cleared).
    pub cohort_object_ns: f64,
    /// A cohort plan ([`super::cpu_cohorts::plan`]), per keyword of the candidate queries, in
    /// the batch's wall time (some of its steps run on one thread).
    pub plan_keyword_ns: f64,
}

impl Default for CpuCosts {
    fn default() -> Self {
        Self {
            // cpu_kernels on a 2-core EPYC (2026-11-24): tiled 0.8-1.0 ns a posting of many
            // lists, 0.09-0.14 ns an object; the c-PQ 5.5-6.5 ns a posting: the tiles pay from
            // about one posting per 50 objects
            tiled_posting_ns: 1.0,
            tiled_object_ns: 0.1,
            cpq_posting_ns: 6.0,
            // a cohort's (the same EPYC, 2 cores, `genie-bench --mode cpu --similar 8`, 1,024
            // queries): a posting about 2x a lone query's (1.5 ns); a word of lanes 9x a lone
            // query's object (5.7 ns against 0.64 on OCR-like), 3.8 of the postings' here
            cohort_posting_ns: 2.2,
            cohort_object_ns: 4.0,
            // Adult-x20-like's plan of 1.4 M keywords: 13 ms on 2 cores, 9 ns a keyword
            plan_keyword_ns: 6.0,
        }
    }
}

impl CpuCosts {
    /// Whether a query of `postings` postings over `objects` objects counts faster over tiles.
    pub fn tiles_pay(&self, postings: u64, objects: u64) -> bool {
        let tiled = self.tiled_posting_ns * postings as f64 + self.tiled_object_ns * objects as f64;
        tiled < self.cpq_posting_ns * postings as f64
    }
}

/// The fewest objects of a part of a tiled query's objects (two 16-bit tiles): below it, the
/// parts' own costs (each list's slice found, a top-k each) outweigh the threads' gain.
const MIN_PART: u32 = 1 << 18;

/// Default working-memory budget of a CPU batch.
pub const CPU_DEFAULT_BUDGET: u64 = 2 << 30;

/// The CPU backend.
#[derive(Clone, Debug)]
pub struct CpuBackend {
    budget: u64,
}

impl Default for CpuBackend {
    fn default() -> Self {
        Self {
            budget: CPU_DEFAULT_BUDGET,
        }
    }
}

impl CpuBackend {
    /// A CPU backend with the default budget.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the batch memory budget in bytes.
    pub fn with_budget(mut self, bytes: u64) -> Self {
        self.budget = bytes.max(1);
        self
    }
}

impl Backend for CpuBackend {
    fn name(&self) -> String {
        format!("cpu ({} threads)", rayon::current_num_threads())
    }

    fn memory_budget(&self) -> u64 {
        self.budget
    }

    fn upload(&self, index: Arc<InvertedIndex>) -> Result<Box<dyn ResidentIndex>> {
        // the count reads ids: a packed List Array is unpacked here, once
        index.list_array().unpack_now();
        let t = std::time::Instant::now();
        let dense = DenseBits::of_index(&index);
        if !dense.is_empty() {
            log::debug!(
                "{} dense keyword lists (1/{} of the objects or more) as {:.1} MB of bitmaps in {:.1?}",
                dense.len(),
                super::cpu_tiles::DENSE_SHARE,
                dense.bytes() as f64 / 1e6,
                t.elapsed()
            );
        }
        Ok(Box::new(CpuResident { index, dense }))
    }
}

struct CpuResident {
    index: Arc<InvertedIndex>,
    /// The dense lists as bitmaps, for the tiled count.
    dense: DenseBits,
}

impl ResidentIndex for CpuResident {
    fn host_index(&self) -> &Arc<InvertedIndex> {
        &self.index
    }

    fn search_batch(
        &self,
        batch: &[PreparedQuery],
        params: &SearchParams,
    ) -> Result<Vec<Vec<Hit>>> {
        let index = &*self.index;
        let n = index.num_objects();
        let mask = params.mask_for(n)?;
        let costs = CpuCosts::default();
        let postings: Vec<u64> = batch.iter().map(|q| postings_of(index, q)).collect();
        let tiled: Vec<bool> = postings
            .iter()
            .map(|&p| {
                params.cpu_tiles && params.method == Method::Cpq && costs.tiles_pay(p, u64::from(n))
            })
            .collect();
        // the tiled queries that share lists, in cohorts; the others alone
        let tiled_ids: Vec<usize> = (0..batch.len()).filter(|&q| tiled[q]).collect();
        let cohorts = if params.cpu_cohorts && tiled_ids.len() > 1 {
            let t = std::time::Instant::now();
            let p = plan(index, &self.dense, batch, &tiled_ids, &postings, &costs);
            log::debug!(
                "cpu: {} of {} tiled queries in {} cohorts ({} sparse postings read for {}) planned in {:.1?}",
                p.cohorts.iter().map(|c| c.members.len()).sum::<usize>(),
                tiled_ids.len(),
                p.cohorts.len(),
                p.postings_together,
                p.postings_alone,
                t.elapsed()
            );
            p.cohorts
        } else {
            Vec::new()
        };
        let mut in_cohort = vec![false; batch.len()];
        for c in &cohorts {
            for &q in &c.members {
                in_cohort[q] = true;
            }
        }
        // the units of work: each cohort, and each tiled query in none
        let units: Vec<&[usize]> = cohorts
            .iter()
            .map(|c| c.members.as_slice())
            .chain(
                tiled_ids
                    .iter()
                    .filter(|&&q| !in_cohort[q])
                    .map(std::slice::from_ref),
            )
            .collect();
        // each unit cut into parts of the objects when the batch alone would leave threads idle
        // (a part at least a tile's worth of objects)
        let threads = rayon::current_num_threads();
        let parts = if units.is_empty() {
            1
        } else {
            let by_threads = threads.div_ceil(units.len());
            let by_size = n.div_ceil(MIN_PART).max(1) as usize;
            by_threads.min(by_size).max(1) as u32
        };
        let step = n.div_ceil(parts).max(1);
        let jobs: Vec<(usize, Range<u32>)> = (0..units.len())
            .flat_map(|u| {
                (0..parts).map(move |p| (u, p * step..(p * step).saturating_add(step).min(n)))
            })
            .collect();
        let mut part_hits: Vec<Vec<Vec<Hit>>> = jobs
            .par_iter()
            .map_init(
                || {
                    (
                        TileScratch::with_tile_bytes(params.cpu_tile_bytes),
                        CohortScratch::with_tile_bytes(params.cpu_tile_bytes * COHORT_TILE_FACTOR),
                    )
                },
                |(scratch, cohort_scratch), (u, objects)| match *u {
                    u if u < cohorts.len() => cohort_query(
                        index,
                        &self.dense,
                        batch,
                        &cohorts[u],
                        params.k,
                        objects.clone(),
                        mask,
                        cohort_scratch,
                    ),
                    u => vec![tiled_query(
                        index,
                        &self.dense,
                        &batch[units[u][0]],
                        params.k,
                        objects.clone(),
                        mask,
                        scratch,
                    )],
                },
            )
            .collect();
        // the other queries by the c-PQ (or the count table), over a work list of their own
        let rest: Vec<usize> = (0..batch.len()).filter(|&q| !tiled[q]).collect();
        let rest_batch: Vec<PreparedQuery> = rest.iter().map(|&q| batch[q].clone()).collect();
        let wl = index.work_list(&rest_batch, params.sublist_len);
        let rest_hits: Vec<Vec<Hit>> = (0..rest.len())
            .into_par_iter()
            .map(|r| {
                let tasks = wl.of_query(r);
                match params.method {
                    Method::Cpq => run_query(
                        index,
                        tasks,
                        params.k,
                        rest_batch[r].bound,
                        params.table_factor,
                        mask,
                    ),
                    Method::CountTable => run_query_count_table(index, tasks, params.k, mask),
                }
            })
            .collect::<Result<_>>()?;
        let mut out = vec![Vec::new(); batch.len()];
        for (r, hits) in rest.into_iter().zip(rest_hits) {
            out[r] = hits;
        }
        for (unit, chunk) in units.iter().zip(part_hits.chunks_mut(parts as usize)) {
            for (lane, &q) in unit.iter().enumerate() {
                out[q] = if parts == 1 {
                    std::mem::take(&mut chunk[0][lane])
                } else {
                    merge_top_k(
                        chunk.iter_mut().map(|p| std::mem::take(&mut p[lane])),
                        params.k,
                    )
                };
            }
        }
        Ok(out)
    }
}

/// The postings a query reads (its items' slices of the List Array).
fn postings_of(index: &InvertedIndex, query: &PreparedQuery) -> u64 {
    query
        .items
        .iter()
        .filter_map(|item| index.slice_of(item.lo, item.hi))
        .map(|(a, b)| b - a)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Engine, IndexBuilder, Item, Query};

    /// A batch smaller than the threads cuts its tiled queries into parts of the objects; the
    /// merged answers are the c-PQ's, whatever the threads, with dense lists from bitmaps.
    #[test]
    fn parts_of_a_small_batch_give_the_cpq_answers() {
        let n = 3 * MIN_PART + 12_345;
        let mut b = IndexBuilder::new();
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..n {
            let mut kws = Vec::new();
            for _ in 0..4 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                kws.push((x % 40) as u32);
            }
            // and one of two dense keywords (half the objects each): counted from bitmaps
            kws.push(40 + (x % 2) as u32);
            b.push_object(&kws).expect("object");
        }
        let index = Arc::new(b.build().expect("index"));
        let queries: Vec<Query> = (0..3)
            .map(|q| Query {
                items: vec![
                    Item::new(q, q + 9, 1).expect("item"),
                    Item::new(20 + q, 22 + q, 2).expect("item"),
                    Item::new(40, 40 + q.min(1), 3).expect("item"),
                ],
            })
            .collect();
        let cpq = SearchParams {
            cpu_tiles: false,
            ..SearchParams::top_k(50)
        };
        let engine = Engine::with_backend(index, &CpuBackend::new()).expect("engine");
        let want = engine.search(&queries, &cpq).expect("c-PQ");
        for threads in [1, 3, 8] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool");
            for batch in [&queries[..1], &queries[..]] {
                let got = pool
                    .install(|| engine.search(batch, &SearchParams::top_k(50)))
                    .expect("tiles");
                assert_eq!(got, want[..batch.len()], "{threads} threads");
            }
        }
    }

    /// A batch of near-duplicate queries (groups of 8 that differ in one item) is counted in
    /// cohorts, and the answers are the oracle's, with cohorts or without, masked or not, with
    /// the objects cut into parts by the threads.
    #[test]
    fn near_duplicates_count_in_cohorts_with_the_oracles_answers() {
        let n = MIN_PART + 999;
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // 24 attributes of 16 values: attribute a, value v is keyword 16 a + v
        let objects: Vec<Vec<u32>> = (0..n)
            .map(|_| (0..24).map(|a| 16 * a + (next() % 16) as u32).collect())
            .collect();
        let mut b = IndexBuilder::new();
        for o in &objects {
            b.push_object(o).expect("object");
        }
        let index = Arc::new(b.build().expect("index"));
        let queries: Vec<Query> = (0..32u32)
            .map(|q| {
                let base = &objects[(q / 8) as usize];
                Query {
                    items: (0..24u32)
                        .map(|a| {
                            let v = if a == q % 24 {
                                (next() % 16) as u32
                            } else {
                                base[a as usize] % 16
                            };
                            Item::new(16 * a + v.saturating_sub(1), 16 * a + (v + 1).min(15), 1)
                                .expect("item")
                        })
                        .collect(),
                }
            })
            .collect();
        let prepared: Vec<PreparedQuery> = queries
            .iter()
            .map(|q| index.prepare(q).expect("prepared"))
            .collect();
        let dense = DenseBits::of_index(&index);
        let all: Vec<usize> = (0..prepared.len()).collect();
        let postings: Vec<u64> = prepared.iter().map(|q| postings_of(&index, q)).collect();
        let p = plan(
            &index,
            &dense,
            &prepared,
            &all,
            &postings,
            &CpuCosts::default(),
        );
        assert!(p.cohorts.len() >= 4, "{p:?}");
        let engine = Engine::with_backend(index, &CpuBackend::new()).expect("engine");
        let mask =
            crate::mask::ObjectMask::from_allowed(n, (0..n).filter(|o| o % 3 != 1)).expect("mask");
        for masked in [false, true] {
            let with = if masked {
                SearchParams::top_k(20).with_mask(mask.clone())
            } else {
                SearchParams::top_k(20)
            };
            let without = SearchParams {
                cpu_cohorts: false,
                ..with.clone()
            };
            let want = if masked {
                crate::oracle::top_k_masked(&objects, &queries, 20, &mask)
            } else {
                crate::oracle::top_k(&objects, &queries, 20)
            };
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .expect("pool");
                for params in [&with, &without] {
                    for batch in [&queries[..8], &queries[..]] {
                        let got = pool
                            .install(|| engine.search(batch, params))
                            .expect("search");
                        assert_eq!(got, want[..batch.len()], "{threads} threads");
                    }
                }
            }
        }
    }
}
