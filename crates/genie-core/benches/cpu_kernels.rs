//! The CPU kernels' inner loops on one core, as the units of the CPU's cost model
//! (`genie_core::CpuCosts`): the tiled count per posting and per object scanned, the c-PQ per
//! posting. `cargo bench -p genie-core --bench cpu_kernels`; a regression shows as a drop in
//! elements/s. Generated data, fixed seed.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use genie_core::{CpuBackend, Engine, IndexBuilder, InvertedIndex, Item, Query, SearchParams};
use std::sync::Arc;

/// `n` objects of `dims` keywords, one of `values` per dimension (SIFT-like signatures).
fn attributes(n: u32, dims: u32, values: u32, seed: u64) -> InvertedIndex {
    let mut b = IndexBuilder::new();
    let mut x = seed | 1;
    let mut kws = Vec::with_capacity(dims as usize);
    for _ in 0..n {
        kws.clear();
        for d in 0..dims {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            kws.push(d * values + (x % u64::from(values)) as u32);
        }
        b.push_object(&kws).expect("object");
    }
    b.build().expect("index")
}

/// Queries of one keyword per dimension (the objects' own kind of signature).
fn queries(dims: u32, values: u32, count: u32) -> Vec<Query> {
    (0..count)
        .map(|q| Query {
            items: (0..dims)
                .map(|d| {
                    let kw = d * values + (q * 7 + d * 3) % values;
                    Item::new(kw, kw, 1).expect("item")
                })
                .collect(),
        })
        .collect()
}

fn postings(index: &InvertedIndex, qs: &[Query]) -> u64 {
    qs.iter()
        .flat_map(|q| &q.items)
        .filter_map(|i| index.slice_of(i.lo, i.hi))
        .map(|(a, b)| b - a)
        .sum()
}

/// Searches `qs` on one thread with `params`; throughput in `elements` per batch.
fn bench_search(
    c: &mut Criterion,
    group: &str,
    label: &str,
    index: Arc<InvertedIndex>,
    qs: &[Query],
    params: SearchParams,
    elements: u64,
) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let engine = Engine::with_backend(index, &CpuBackend::new()).expect("engine");
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(elements));
    g.sample_size(10);
    g.bench_with_input(BenchmarkId::from_parameter(label), qs, |b, qs| {
        b.iter(|| pool.install(|| engine.search(qs, &params).expect("search")))
    });
    g.finish();
}

fn kernels(c: &mut Criterion) {
    let k = 100;
    let cpq = SearchParams {
        cpu_tiles: false,
        ..SearchParams::top_k(k)
    };
    // postings dominate: 237 lists of 1/67 of the objects each (SIFT-like), 8-bit counters
    let sift = Arc::new(attributes(200_000, 237, 67, 7));
    let qs = queries(237, 67, 8);
    let p = postings(&sift, &qs);
    bench_search(
        c,
        "tiled_per_posting",
        "sift_200k",
        sift.clone(),
        &qs,
        SearchParams::top_k(k),
        p,
    );
    let p2 = postings(&sift, &qs[..2]);
    bench_search(
        c,
        "cpq_per_posting",
        "sift_200k",
        sift,
        &qs[..2],
        cpq.clone(),
        p2,
    );
    // the objects dominate: a query of one short list over many objects (the scan of the tiles'
    // counters for the top-k, and their clearing)
    let wide = Arc::new(attributes(4_000_000, 1, 4_000, 11));
    let one = vec![Query {
        items: vec![Item::new(5, 5, 1).expect("item")],
    }];
    let n = u64::from(wide.num_objects());
    bench_tiles_only(c, wide, &one, k, "tiled_per_object/one_list_4m", n);
    // where the cost model chooses: a query of 1/4 to 1/256 of the objects' postings, by each
    // path (the model should pick the faster)
    let one_dim = Arc::new(attributes(2_000_000, 1, 256, 13));
    for keywords in [64u32, 16, 4, 1] {
        let q = vec![Query {
            items: vec![Item::new(0, keywords - 1, 1).expect("item")],
        }];
        let p = postings(&one_dim, &q);
        let label = format!("1_in_{}", 256 / keywords);
        bench_tiles_only(
            c,
            one_dim.clone(),
            &q,
            k,
            &format!("crossover_tiled/{label}"),
            p,
        );
        bench_search(
            c,
            "crossover_cpq",
            &label,
            one_dim.clone(),
            &q,
            cpq.clone(),
            p,
        );
    }
}

/// The tiled count of a query called directly, whatever the cost model would choose;
/// throughput in `elements` per query.
fn bench_tiles_only(
    c: &mut Criterion,
    index: Arc<InvertedIndex>,
    qs: &[Query],
    k: u32,
    name: &str,
    elements: u64,
) {
    use genie_core::backend::cpu_tiles::{tiled_query, DenseBits, TileScratch};
    let dense = DenseBits::of_index(&index);
    let prepared = index.prepare(&qs[0]).expect("query");
    let n = index.num_objects();
    let (group, label) = name.split_once('/').unwrap_or((name, "query"));
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(elements));
    g.sample_size(10);
    let mut scratch = TileScratch::default();
    g.bench_function(label, |b| {
        b.iter(|| tiled_query(&index, &dense, &prepared, k, 0..n, None, &mut scratch))
    });
    g.finish();
}

criterion_group!(benches, kernels);
criterion_main!(benches);
