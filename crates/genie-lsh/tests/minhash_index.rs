//! MinHash through the core engine: sets of keywords indexed with the transform's builder and
//! searched on the CPU backend rank by Jaccard similarity (the match count estimates it).
#![allow(clippy::unwrap_used)]

use genie_core::{CpuBackend, Engine, SearchParams, Transform};
use genie_lsh::metric::jaccard;
use genie_lsh::{MinHashParams, MinHashTransform};
use std::sync::Arc;

#[test]
fn counts_rank_sets_by_jaccard() {
    let t = MinHashTransform::new(MinHashParams {
        functions: 200,
        buckets: 4096,
        seed: 3,
    })
    .unwrap();
    // set i shares 100 - 10 i of its 100 elements with the query [0, 100)
    let sets: Vec<Vec<u32>> = (0..10u32)
        .map(|i| (10 * i..10 * i + 100).collect())
        .collect();
    let mut b = t.builder();
    let mut kws = Vec::new();
    for s in &sets {
        kws.clear();
        t.object(s, &mut kws).unwrap();
        b.push_object(&kws).unwrap();
    }
    let engine = Engine::with_backend(Arc::new(b.build().unwrap()), &CpuBackend::new()).unwrap();
    let query: Vec<u32> = (0..100).collect();
    let hits = engine
        .search(&[t.query(&query).unwrap()], &SearchParams::top_k(10))
        .unwrap();
    let ids: Vec<u32> = hits[0].iter().map(|h| h.id).collect();
    // the identical set first with every function colliding, then roughly by similarity
    assert_eq!((hits[0][0].id, hits[0][0].count), (0, 200));
    assert_eq!(&ids[..3], &[0, 1, 2]);
    for h in &hits[0] {
        let j = jaccard(&query, &sets[h.id as usize]);
        let est = f64::from(h.count) / 200.0;
        // 200 functions: standard error at most 0.036, plus 1/D from the re-hash
        assert!(
            (est - j).abs() < 0.15,
            "set {}: count {est}, Jaccard {j}",
            h.id
        );
    }
    assert!(t.query(&[]).unwrap().items.is_empty());
}
