//! Property tests against naive oracles (CONVENTIONS.md 4): the c-PQ and the count table against
//! brute-force counts + sort; the bitmap counter against `Vec<u32>`; the hash table against
//! `HashMap`; the re-rank order against a full stable sort cut to `k`.

#![allow(clippy::unwrap_used)]

use genie_core::cpq::{BitmapCounter, Gate, RobinHoodTable};
use genie_core::{
    oracle, rank_verified, CpuBackend, Engine, IndexBuilder, Item, Method, Query, SearchParams,
    VerifiedHit,
};
use proptest::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

fn item_strategy(space: u32) -> impl Strategy<Value = Item> {
    (0..space + 4, 0u32..6, 1u32..4).prop_map(|(lo, w, weight)| Item {
        lo,
        hi: lo + w,
        weight,
    })
}

fn case_strategy() -> impl Strategy<Value = (Vec<Vec<u32>>, Vec<Query>, u32, u32, f64)> {
    (4u32..40, 1usize..120).prop_flat_map(|(space, n)| {
        (
            prop::collection::vec(prop::collection::vec(0..space, 0..10), n),
            prop::collection::vec(
                prop::collection::vec(item_strategy(space), 0..6).prop_map(|items| Query { items }),
                1..8,
            ),
            0u32..20,
            prop_oneof![Just(4u32), Just(16), Just(4096)],
            prop_oneof![Just(1.5f64), Just(0.01)],
        )
    })
}

fn engine(objects: &[Vec<u32>]) -> Engine {
    engine_packed(objects, false)
}

/// The CPU engine of `objects`, its List Array packed when `packed` (as a packed index file).
fn engine_packed(objects: &[Vec<u32>], packed: bool) -> Engine {
    let mut b = IndexBuilder::new();
    for o in objects {
        b.push_object(o).unwrap();
    }
    let index = b.build().unwrap();
    let index = if packed { index.into_packed() } else { index };
    Engine::with_backend(Arc::new(index), &CpuBackend::new()).unwrap()
}

/// Verified hits with many ties: few distinct distances (signed zeros and a NaN among them), few
/// counts, ids that may repeat.
fn verified_strategy() -> impl Strategy<Value = Vec<VerifiedHit>> {
    let distance = prop_oneof![
        Just(0.0f64),
        Just(-0.0),
        Just(f64::NAN),
        Just(f64::INFINITY),
        (0u32..6).prop_map(f64::from),
        any::<f64>(),
    ];
    prop::collection::vec(
        (0u32..40, 0u32..4, distance).prop_map(|(id, count, distance)| VerifiedHit {
            id,
            count,
            distance,
        }),
        0..200,
    )
}

/// The contract order by a full stable sort, cut to `k`.
fn rank_by_sorting(mut hits: Vec<VerifiedHit>, k: usize) -> Vec<VerifiedHit> {
    hits.sort_by(|a, b| {
        a.distance
            .total_cmp(&b.distance)
            .then(b.count.cmp(&a.count))
            .then(a.id.cmp(&b.id))
    });
    hits.truncate(k);
    hits
}

/// Hits compared bit for bit (a NaN distance equals itself).
fn bits(hits: &[VerifiedHit]) -> Vec<(u32, u32, u64)> {
    hits.iter()
        .map(|h| (h.id, h.count, h.distance.to_bits()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn rank_verified_equals_sort_and_cut(hits in verified_strategy(), k in 0usize..220) {
        let want = rank_by_sorting(hits.clone(), k);
        prop_assert_eq!(bits(&rank_verified(hits, k)), bits(&want));
    }

    #[test]
    fn cpq_and_count_table_equal_oracle((objects, queries, k, sublist, factor) in case_strategy()) {
        let e = engine(&objects);
        let want = oracle::top_k(&objects, &queries, k as usize);
        let mut p = SearchParams::top_k(k);
        p.sublist_len = sublist;
        p.table_factor = factor;
        prop_assert_eq!(&e.search(&queries, &p).unwrap(), &want);
        prop_assert_eq!(&e.search(&queries, &p.clone().with_method(Method::CountTable)).unwrap(), &want);
        let packed = engine_packed(&objects, true);
        prop_assert!(packed.index().list_array().packed().is_some());
        prop_assert_eq!(&packed.search(&queries, &p).unwrap(), &want);
    }

    #[test]
    fn many_ties_fill_by_ascending_id(n in 1usize..300, k in 1u32..50, extra in 0usize..5) {
        // every object shares keywords 0 and 1; a few also have 2: long runs of tied counts
        let objects: Vec<Vec<u32>> = (0..n).map(|i| if i % 7 < extra { vec![0, 1, 2] } else { vec![0, 1] }).collect();
        let q = vec![Query::from_keywords(&[0, 1, 2])];
        let e = engine(&objects);
        let mut p = SearchParams::top_k(k);
        p.sublist_len = 8;
        prop_assert_eq!(e.search(&q, &p).unwrap(), oracle::top_k(&objects, &q, k as usize));
    }

    #[test]
    fn bitmap_counter_equals_vec(bound in 1u32..300, ops in prop::collection::vec((0u32..64, 1u32..4), 0..200)) {
        let n = 64;
        let bc = BitmapCounter::new(n, bound);
        let mut naive = vec![0u32; n as usize];
        for (id, w) in ops {
            if naive[id as usize] + w > bound { continue; }
            let (old, new) = bc.add(id, w);
            prop_assert_eq!(old, naive[id as usize]);
            naive[id as usize] += w;
            prop_assert_eq!(new, naive[id as usize]);
        }
        for id in 0..n {
            prop_assert_eq!(bc.get(id), naive[id as usize]);
        }
    }

    #[test]
    fn robin_hood_equals_hashmap(ops in prop::collection::vec((0u32..500, 1u32..100), 0..300)) {
        // with AT = 1 nothing expires: the table must hold the max count of every key
        let t = RobinHoodTable::new(1024);
        let mut m: HashMap<u32, u32> = HashMap::new();
        for (id, c) in ops {
            t.insert(id, c, || 1).unwrap();
            let e = m.entry(id).or_insert(0);
            *e = (*e).max(c);
        }
        for (id, c) in &m {
            prop_assert_eq!(t.get(*id), Some(*c));
        }
        let mut ids: Vec<u32> = t.ids().collect();
        ids.sort_unstable();
        ids.dedup();
        prop_assert_eq!(ids.len(), m.len());
    }
}

#[test]
fn robin_hood_reports_full_and_expiry_frees_slots() {
    let t = RobinHoodTable::new(16);
    for id in 0..16 {
        t.insert(id, 5, || 1).unwrap();
    }
    assert!(t.insert(99, 5, || 1).is_err(), "a full table must say so");
    // with AT = 6 every count-5 entry is below AT and counts as free
    t.insert(99, 9, || 6).unwrap();
    assert_eq!(t.get(99), Some(9));
    // an entry at AT is live: with AT = 5 a full table of count-5 entries has no room
    let live = RobinHoodTable::new(16);
    for id in 0..16 {
        live.insert(id, 5, || 1).unwrap();
    }
    assert!(live.insert(99, 9, || 5).is_err());
}

#[test]
fn gate_follows_algorithm_1_on_example_3_1() {
    // paper Example 3.1: k = 1, bound 3; updates O1:1, O2:1, O3:1, O2:2, O2:3, O3:2
    let g = Gate::new(1, 3);
    assert!(g.update(0, 1));
    assert_eq!(g.audit_threshold(), 2);
    assert!(!g.update(0, 1));
    assert!(!g.update(0, 1));
    assert!(g.update(1, 2));
    assert_eq!(g.audit_threshold(), 3);
    assert!(g.update(2, 3));
    assert_eq!(g.audit_threshold(), 4);
    assert!(!g.update(1, 2));
    assert_eq!((g.zipper(1), g.zipper(2), g.zipper(3)), (1, 1, 1));
}

#[test]
fn gate_records_every_value_crossed_by_a_weighted_jump() {
    let g = Gate::new(2, 10);
    assert!(g.update(0, 4));
    assert_eq!((g.zipper(1), g.zipper(4), g.zipper(5)), (1, 1, 0));
    assert!(g.update(0, 3));
    // two objects reached 1, 2 and 3: AT moves past them to 4
    assert_eq!(g.audit_threshold(), 4);
}
