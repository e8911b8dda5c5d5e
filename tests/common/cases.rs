//! The conformance suite (CONVENTIONS.md 3): the same cases for every backend. Each case checks a
//! backend's results against the brute-force oracle, or, where the oracle is too slow, against
//! the CPU count table; the contract order makes results comparable bit for bit.

#![allow(clippy::unwrap_used)]

use genie_core::{
    oracle, Backend, CpuBackend, Engine, IndexBuilder, InvertedIndex, Item, Method, ObjectMask,
    Query, SearchParams,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::Arc;

pub fn build(objects: &[Vec<u32>]) -> Arc<InvertedIndex> {
    let mut b = IndexBuilder::new();
    for o in objects {
        b.push_object(o).expect("push");
    }
    Arc::new(b.build().expect("build"))
}

fn engine(backend: &dyn Backend, index: Arc<InvertedIndex>) -> Engine {
    Engine::with_backend(index, backend).expect("upload")
}

fn params(k: u32, method: Method, sublist_len: u32, table_factor: f64) -> SearchParams {
    let mut p = SearchParams::top_k(k).with_method(method);
    p.sublist_len = sublist_len;
    p.table_factor = table_factor;
    p
}

/// Checks both methods against `want`.
fn check(
    e: &Engine,
    queries: &[Query],
    k: u32,
    sublist_len: u32,
    table_factor: f64,
    want: &[Vec<genie_core::Hit>],
    what: &str,
) {
    check_masked(e, queries, k, sublist_len, table_factor, None, want, what);
}

/// Checks both methods, every counting path, with the object mask `mask` against `want`.
#[allow(clippy::too_many_arguments)]
fn check_masked(
    e: &Engine,
    queries: &[Query],
    k: u32,
    sublist_len: u32,
    table_factor: f64,
    mask: Option<&ObjectMask>,
    want: &[Vec<genie_core::Hit>],
    what: &str,
) {
    // on a GPU the c-PQ has two counting kernels (tiled byte counters, with dense lists as
    // bitmaps or not, and the global bitmap counter); on the CPU the tiled count or the c-PQ
    let default_dense = genie_core::backend::DEFAULT_GPU_DENSE;
    // (and on a GPU the tiled count in sweeps of 1 and 3 tiles a launch, whatever the batch)
    for (method, tiles, dense, wide, sweep) in [
        (Method::Cpq, true, default_dense, true, None),
        (Method::Cpq, true, 0, true, None),
        (Method::Cpq, true, 1_000_000, true, None),
        (Method::Cpq, true, default_dense, false, None),
        (Method::Cpq, true, 1_000_000, false, None),
        (Method::Cpq, true, default_dense, true, Some(1)),
        (Method::Cpq, true, 0, false, Some(3)),
        (Method::Cpq, false, 0, true, None),
        (Method::CountTable, false, 0, true, None),
    ] {
        let mut p = params(k, method, sublist_len, table_factor);
        p.gpu_tiles = tiles;
        p.cpu_tiles = tiles;
        p.gpu_dense = dense;
        p.gpu_wide_tiles = wide;
        p.gpu_sweep_tiles = sweep;
        p.mask = mask.cloned();
        let got = e.search(queries, &p).expect("search");
        let how =
            format!("{what} {method:?} tiles {tiles} dense 1/{dense} wide {wide} sweep {sweep:?}");
        assert_eq!(got.len(), want.len(), "{how}");
        for (q, (g, w)) in got.iter().zip(want).enumerate() {
            assert_eq!(g, w, "{how} query {q}");
        }
    }
}

/// Random objects over `space` keywords and queries of weighted, possibly overlapping ranges.
pub fn random_case(
    seed: u64,
    n: usize,
    space: u32,
    max_len: usize,
    nq: usize,
) -> (Vec<Vec<u32>>, Vec<Query>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let objects = (0..n)
        .map(|_| {
            (0..rng.random_range(0..=max_len))
                .map(|_| rng.random_range(0..space))
                .collect()
        })
        .collect();
    let queries = (0..nq)
        .map(|_| {
            let items = (0..rng.random_range(0..12))
                .map(|_| {
                    let lo = rng.random_range(0..space + 3);
                    Item {
                        lo,
                        hi: lo + rng.random_range(0..8),
                        weight: rng.random_range(1..4),
                    }
                })
                .collect();
            Query { items }
        })
        .collect();
    (objects, queries)
}

/// Paper Fig. 1 / Example 3.1: attributes A, B, C with values 1..3, keyword = 4 * attribute + value.
pub fn paper_example(backend: &dyn Backend) {
    let objects = vec![
        vec![1, 4 + 2, 8 + 1],
        vec![2, 4 + 1, 8 + 2],
        vec![1, 4 + 3, 8 + 3],
    ];
    let q = Query::new(vec![
        Item::new(1, 2, 1).unwrap(),
        Item::new(5, 5, 1).unwrap(),
        Item::new(10, 11, 1).unwrap(),
    ])
    .unwrap();
    let e = engine(backend, build(&objects));
    for method in [Method::Cpq, Method::CountTable] {
        let top1 = e
            .search(
                std::slice::from_ref(&q),
                &SearchParams::top_k(1).with_method(method),
            )
            .unwrap();
        assert_eq!(
            top1[0],
            vec![genie_core::Hit { id: 1, count: 3 }],
            "top-1 is O2 with count 3"
        );
        let all = e
            .search(
                std::slice::from_ref(&q),
                &SearchParams::top_k(3).with_method(method),
            )
            .unwrap();
        let pairs: Vec<(u32, u32)> = all[0].iter().map(|h| (h.id, h.count)).collect();
        assert_eq!(pairs, vec![(1, 3), (2, 2), (0, 1)]);
    }
}

pub fn random_seeds(backend: &dyn Backend) {
    for seed in 0..24u64 {
        let mut rng = StdRng::seed_from_u64(1000 + seed);
        let n = rng.random_range(1..3000);
        let space = rng.random_range(4..400);
        let (objects, queries) = random_case(seed, n, space, 24, 40);
        let e = engine(backend, build(&objects));
        for k in [1u32, 7, 100, 5000] {
            let sublist = [4u32, 64, 4096][(seed % 3) as usize];
            let want = oracle::top_k(&objects, &queries, k as usize);
            check(
                &e,
                &queries,
                k,
                sublist,
                1.5,
                &want,
                &format!("seed {seed} k {k}"),
            );
        }
    }
}

pub fn tiny_tables_force_reruns(backend: &dyn Backend) {
    for seed in 0..8u64 {
        let (objects, queries) = random_case(50 + seed, 2000, 60, 20, 30);
        let e = engine(backend, build(&objects));
        let want = oracle::top_k(&objects, &queries, 50);
        check(&e, &queries, 50, 32, 0.0001, &want, &format!("seed {seed}"));
    }
}

pub fn many_ties(backend: &dyn Backend) {
    // 5000 identical objects, and every 10th has one more keyword
    let objects: Vec<Vec<u32>> = (0..5000)
        .map(|i| {
            if i % 10 == 3 {
                vec![1, 2, 3, 9]
            } else {
                vec![1, 2, 3]
            }
        })
        .collect();
    let queries = vec![
        Query::from_keywords(&[1, 2, 3, 9]),
        Query::from_keywords(&[2]),
        Query::from_keywords(&[1, 2]),
    ];
    let e = engine(backend, build(&objects));
    for k in [1u32, 10, 100, 499, 500, 501, 4999] {
        let want = oracle::top_k(&objects, &queries, k as usize);
        check(&e, &queries, k, 256, 1.5, &want, &format!("k {k}"));
    }
}

pub fn k_larger_than_matches(backend: &dyn Backend) {
    let objects = vec![vec![1, 2], vec![3], vec![2, 3], vec![]];
    let queries = vec![Query::from_keywords(&[2, 3]), Query::from_keywords(&[7])];
    let e = engine(backend, build(&objects));
    let want = oracle::top_k(&objects, &queries, 1000);
    assert_eq!(want[0].len(), 3);
    assert!(want[1].is_empty());
    check(&e, &queries, 1000, 4096, 1.5, &want, "k 1000");
}

pub fn weights_and_overlapping_ranges(backend: &dyn Backend) {
    let objects: Vec<Vec<u32>> = (0..300u32)
        .map(|i| vec![i % 10, 10 + i % 7, 20 + i % 3])
        .collect();
    let q = Query::new(vec![
        Item::new(0, 5, 3).unwrap(),
        Item::new(3, 12, 2).unwrap(),
        Item::new(11, 11, 5).unwrap(),
        Item::new(20, 22, 1).unwrap(),
        Item::new(21, 21, 4).unwrap(),
    ])
    .unwrap();
    let queries = vec![q];
    let e = engine(backend, build(&objects));
    for k in [1u32, 5, 33, 300] {
        let want = oracle::top_k(&objects, &queries, k as usize);
        check(&e, &queries, k, 16, 1.5, &want, &format!("k {k}"));
    }
}

pub fn one_hot_keyword(backend: &dyn Backend) {
    // keyword 0 is in every object: one list of 200k postings, cut into sublists
    let mut rng = StdRng::seed_from_u64(7);
    let objects: Vec<Vec<u32>> = (0..200_000)
        .map(|_| vec![0, rng.random_range(1..50), rng.random_range(50..1000)])
        .collect();
    let queries: Vec<Query> = (0..16u32)
        .map(|i| Query::from_keywords(&[0, 1 + i, 50 + i * 7]))
        .collect();
    let e = engine(backend, build(&objects));
    let want = oracle::top_k(&objects, &queries, 100);
    check(&e, &queries, 100, 4096, 1.5, &want, "hot keyword");
}

/// Objects of `dims` dimensions with `values` values each (one keyword per dimension), the
/// workload shape of LSH and relational data; queries of one range item per dimension.
pub fn dims_case(
    seed: u64,
    n: usize,
    dims: u32,
    values: u32,
    nq: usize,
) -> (Arc<InvertedIndex>, Vec<Query>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut b = IndexBuilder::new()
        .blocks((0..dims).map(|d| d * values).collect())
        .keyword_space(dims * values);
    let mut obj = vec![0u32; dims as usize];
    for _ in 0..n {
        for d in 0..dims {
            obj[d as usize] = d * values + rng.random_range(0..values);
        }
        b.push_object(&obj).expect("push");
    }
    let queries = (0..nq)
        .map(|_| {
            let items = (0..dims)
                .map(|d| {
                    let v = rng.random_range(0..values);
                    let r = rng.random_range(0..2);
                    Item {
                        lo: d * values + v.saturating_sub(r),
                        hi: d * values + (v + r).min(values - 1),
                        weight: 1,
                    }
                })
                .collect();
            Query { items }
        })
        .collect();
    (Arc::new(b.build().expect("build")), queries)
}

/// Compares a backend's c-PQ with the CPU count table on the same index.
fn check_against_cpu(
    backend: &dyn Backend,
    index: Arc<InvertedIndex>,
    queries: &[Query],
    k: u32,
    what: &str,
) {
    let reference = engine(&CpuBackend::new(), index.clone())
        .search(
            queries,
            &SearchParams::top_k(k).with_method(Method::CountTable),
        )
        .expect("cpu");
    let e = engine(backend, index);
    check(&e, queries, k, 4096, 1.5, &reference, what);
}

pub fn one_query(backend: &dyn Backend) {
    let (index, queries) = dims_case(3, 20_000, 32, 16, 1);
    check_against_cpu(backend, index, &queries, 100, "1 query");
}

pub fn ten_thousand_queries(backend: &dyn Backend) {
    let (index, queries) = dims_case(4, 4_000, 32, 16, 10_000);
    check_against_cpu(backend, index, &queries, 10, "10,000 queries");
}

/// 10M objects: large for a CI machine, so it runs when GENIE_LARGE_TESTS=1 (set on the device).
pub fn ten_million_objects(backend: &dyn Backend) {
    if std::env::var("GENIE_LARGE_TESTS").ok().as_deref() != Some("1") {
        skip("10M-object case runs with GENIE_LARGE_TESTS=1");
        return;
    }
    let (index, queries) = dims_case(5, 10_000_000, 16, 64, 64);
    check_against_cpu(backend, index, &queries, 100, "10M objects");
}

/// Reports a skipped test on stderr past the test harness's capture, so the reason shows in a
/// plain `cargo test` run.
pub fn skip(reason: impl std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "skipped: {reason}");
}

/// Multi-loading: 1, 2, 3 and 7 parts, on one device and on two (the backend twice), in memory
/// and from part files, give the one-part results bit for bit.
pub fn parts_equal_one_part(backend: &dyn Backend) {
    use genie_core::parts::{open_parts, save_parts, PartSource};
    use genie_core::PartedEngine;
    let (index, queries) = dims_case(11, 30_000, 24, 12, 200);
    let p = SearchParams::top_k(50);
    let want = engine(backend, index.clone())
        .search(&queries, &p)
        .expect("one part");
    for n in [1usize, 2, 3, 7] {
        let parts: Vec<PartSource> = index.split(n).into_iter().map(PartSource::Memory).collect();
        assert_eq!(parts.len(), n);
        for devices in [vec![backend], vec![backend, backend]] {
            let pe = PartedEngine::new(parts.clone(), devices.clone()).expect("engine");
            assert_eq!(
                pe.search(&queries, &p).expect("parted"),
                want,
                "{n} parts, {} devices",
                devices.len()
            );
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("idx.genie");
    save_parts(&path, &index.split(3)).expect("save parts");
    let (manifest, sources) = open_parts(&path).expect("open parts");
    assert_eq!(manifest.num_objects, 30_000);
    let pe = PartedEngine::new(sources, vec![backend]).expect("engine");
    assert_eq!(pe.search(&queries, &p).expect("from files"), want);
}

/// A part boundary inside a run of tied counts: ties still fill by ascending global id.
pub fn part_boundary_inside_ties(backend: &dyn Backend) {
    use genie_core::parts::PartSource;
    use genie_core::PartedEngine;
    let objects: Vec<Vec<u32>> = (0..1000)
        .map(|i| {
            if i % 250 == 7 {
                vec![1, 2, 3]
            } else {
                vec![1, 2]
            }
        })
        .collect();
    let queries = vec![Query::from_keywords(&[1, 2, 3]), Query::from_keywords(&[2])];
    let index = build(&objects);
    for k in [3u32, 10, 333, 1000] {
        let want = oracle::top_k(&objects, &queries, k as usize);
        for n in [2usize, 3, 7] {
            let parts = index.split(n).into_iter().map(PartSource::Memory).collect();
            let pe = PartedEngine::new(parts, vec![backend]).expect("engine");
            assert_eq!(
                pe.search(&queries, &SearchParams::top_k(k))
                    .expect("parted"),
                want,
                "k {k}, {n} parts"
            );
        }
    }
}

/// Two real GPUs (when there are two) give the one-part results; `backend` is the first.
pub fn two_gpus_equal_one_part(backend: &dyn Backend) {
    use genie_core::parts::PartSource;
    use genie_core::{CudaBackend, PartedEngine};
    if backend.name().starts_with("cpu") {
        skip("the two-GPU case runs with the GPU backend");
        return;
    }
    if genie_core::backend::cuda::device_count() < 2 {
        skip("the two-GPU case needs two GPUs");
        return;
    }
    let second = CudaBackend::new(1).expect("second GPU");
    let (index, queries) = dims_case(12, 50_000, 32, 16, 300);
    let p = SearchParams::top_k(20);
    let want = engine(backend, index.clone())
        .search(&queries, &p)
        .expect("one GPU");
    let parts: Vec<PartSource> = index.split(5).into_iter().map(PartSource::Memory).collect();
    let pe = PartedEngine::new(parts, vec![backend, &second]).expect("engine");
    assert_eq!(pe.search(&queries, &p).expect("two GPUs"), want);
}

/// Count bounds past the byte counters: 300 (16-bit tiles on a GPU) and 1,200 (the global kernel).
pub fn wide_count_bounds(backend: &dyn Backend) {
    let (index, queries) = dims_case(21, 20_000, 300, 4, 40);
    assert_eq!(index.prepare(&queries[0]).expect("prepare").bound, 300);
    check_against_cpu(backend, index, &queries, 25, "bound 300");
    let (index, mut queries) = dims_case(22, 20_000, 8, 16, 40);
    for q in &mut queries {
        q.items.iter_mut().for_each(|it| it.weight = 150);
    }
    assert_eq!(index.prepare(&queries[0]).expect("prepare").bound, 1200);
    check_against_cpu(backend, index, &queries, 25, "bound 1200");
}

/// Range items of 101 keywords on 14 attributes (the paper's relational queries): 1,414 keyword
/// lists per query, past the 1,024 that the GPU's tiled kernel kept before.
pub fn many_lists_per_query(backend: &dyn Backend) {
    let (dims, values) = (14u32, 256u32);
    let mut rng = StdRng::seed_from_u64(23);
    let mut b = IndexBuilder::new()
        .blocks((0..dims).map(|d| d * values).collect())
        .keyword_space(dims * values);
    for _ in 0..30_000 {
        let obj: Vec<u32> = (0..dims)
            .map(|d| d * values + rng.random_range(0..values))
            .collect();
        b.push_object(&obj).expect("push");
    }
    let index = Arc::new(b.build().expect("build"));
    let queries: Vec<Query> = (0..30)
        .map(|_| Query {
            items: (0..dims)
                .map(|d| {
                    let v = rng.random_range(50..values - 50);
                    Item {
                        lo: d * values + v - 50,
                        hi: d * values + v + 50,
                        weight: 1,
                    }
                })
                .collect(),
        })
        .collect();
    check_against_cpu(backend, index, &queries, 50, "1,414 lists per query");
}

/// Many short lists over many tiles: 300,000 objects (10 narrow tiles, 5 wide ones at 8 bits),
/// 48 attributes of 512 values, each query 48 ranges of 1 to 5 values: a list holds a few dozen
/// objects per tile, the regime the wide tiles serve; both tile widths must match the CPU.
pub fn many_short_lists_over_tiles(backend: &dyn Backend) {
    let (index, queries) = dims_case(11, 300_000, 48, 512, 64);
    check_against_cpu(backend, index, &queries, 50, "many short lists over tiles");
}

/// Masks of `n` objects for the masked cases: none allowed, all, about 1 in 100, about half, all
/// but about 1 in 10 (deletes), one object; by a hash of the id, so they scatter over words and
/// tiles.
fn masks(n: u32, seed: u32) -> Vec<(&'static str, ObjectMask)> {
    let h = |o: u32| genie_core::cpq::hash_id(o ^ seed.wrapping_mul(0x9E37_79B9));
    let some = |keep: &dyn Fn(u32) -> bool| {
        ObjectMask::from_allowed(n, (0..n).filter(|&o| keep(o))).expect("mask")
    };
    let deleted = some(&|o| h(o) % 10 == 0);
    vec![
        ("none", ObjectMask::none(n)),
        ("all", ObjectMask::all(n)),
        ("1%", some(&|o| h(o) % 100 == 0)),
        ("half", some(&|o| h(o) % 2 == 0)),
        (
            "deletes",
            ObjectMask::all(n).and_not(&deleted).expect("and_not"),
        ),
        (
            "one",
            ObjectMask::from_allowed(n, [seed % n.max(1)]).expect("mask"),
        ),
    ]
}

/// Random cases with masks: every path's answers are brute force over the allowed objects.
pub fn masked_random_seeds(backend: &dyn Backend) {
    for seed in 0..8u64 {
        let mut rng = StdRng::seed_from_u64(2000 + seed);
        let n = rng.random_range(1..3000);
        let space = rng.random_range(4..400);
        let (objects, queries) = random_case(300 + seed, n, space, 24, 24);
        let e = engine(backend, build(&objects));
        for (name, mask) in masks(n as u32, seed as u32) {
            for k in [1u32, 7, 100] {
                let sublist = [4u32, 64, 4096][(seed % 3) as usize];
                let want = oracle::top_k_masked(&objects, &queries, k as usize, &mask);
                let what = format!("seed {seed} mask {name} k {k}");
                check_masked(&e, &queries, k, sublist, 1.5, Some(&mask), &want, &what);
            }
        }
    }
}

/// Masks over many tiles and dense lists (100,000 objects of 16 dimensions of 16 values: every
/// list holds 1/16 of the objects), and with 16-bit counters (weights past a byte): each path
/// against the CPU's count table with the same mask; the same mask twice, then others.
pub fn masked_tiles_and_dense_lists(backend: &dyn Backend) {
    let (index, queries) = dims_case(31, 100_000, 16, 16, 24);
    let n = index.num_objects();
    let cpu = engine(&CpuBackend::new(), index.clone());
    let e = engine(backend, index);
    let mut heavy = queries.clone();
    for q in &mut heavy {
        q.items.iter_mut().for_each(|it| it.weight = 20);
    }
    for (name, mask) in masks(n, 5) {
        for (qs, weights) in [(&queries, "weight 1"), (&heavy, "weight 20")] {
            let reference = SearchParams::top_k(40)
                .with_method(Method::CountTable)
                .with_mask(mask.clone());
            let want = cpu.search(qs, &reference).expect("cpu");
            let what = format!("mask {name} {weights}");
            for _ in 0..2 {
                check_masked(&e, qs, 40, 4096, 1.5, Some(&mask), &want, &what);
            }
        }
    }
}

/// Parts with a mask: each part searched with its slice gives the whole index's masked search.
pub fn masked_parts(backend: &dyn Backend) {
    use genie_core::parts::PartSource;
    use genie_core::PartedEngine;
    let (index, queries) = dims_case(13, 30_000, 24, 12, 100);
    let n = index.num_objects();
    let whole = engine(backend, index.clone());
    for (name, mask) in masks(n, 9) {
        let p = SearchParams::top_k(30).with_mask(mask.clone());
        let want = whole.search(&queries, &p).expect("whole");
        for parts in [2usize, 3, 7] {
            let sources = index.split(parts).into_iter().map(PartSource::Memory);
            let pe = PartedEngine::new(sources.collect(), vec![backend]).expect("engine");
            assert_eq!(
                pe.search(&queries, &p).expect("parted"),
                want,
                "mask {name}, {parts} parts"
            );
        }
    }
}
