//! Searches with an object mask ([`SearchParams::mask`]) on the CPU backend: every path (the
//! c-PQ, the tiled count with and without dense bitmaps, the count table) against brute force
//! over the allowed objects; k answers whenever k allowed objects match; parts with their slices
//! of the mask equal to the whole index's search; a mask of another length refused.

#![allow(clippy::unwrap_used)]

use genie_core::mask::MaskBuilder;
use genie_core::parts::PartSource;
use genie_core::{
    cpq::hash_id, oracle, CpuBackend, Engine, GenieError, Hit, IndexBuilder, InvertedIndex, Item,
    Method, ObjectMask, PartedEngine, Query, SearchParams,
};
use proptest::prelude::*;
use std::sync::Arc;

fn build(objects: &[Vec<u32>]) -> Arc<InvertedIndex> {
    let mut b = IndexBuilder::new();
    for o in objects {
        b.push_object(o).unwrap();
    }
    Arc::new(b.build().unwrap())
}

fn engine(index: Arc<InvertedIndex>) -> Engine {
    Engine::with_backend(index, &CpuBackend::new()).unwrap()
}

/// Masks of `n` objects by kind: 0 none allowed, 1 all, 2 about 1 in 100, 3 about half, 4 all
/// but about 1 in 10 (deletes), 5 a single object.
fn mask_of(kind: u8, n: u32, seed: u32) -> ObjectMask {
    let h = |o: u32| hash_id(o ^ seed.wrapping_mul(0x9E37_79B9));
    match kind {
        0 => ObjectMask::none(n),
        1 => ObjectMask::all(n),
        2 => ObjectMask::from_allowed(n, (0..n).filter(|&o| h(o) % 100 == 0)).unwrap(),
        3 => ObjectMask::from_allowed(n, (0..n).filter(|&o| h(o) % 2 == 0)).unwrap(),
        4 => {
            let deleted = ObjectMask::from_allowed(n, (0..n).filter(|&o| h(o) % 10 == 0)).unwrap();
            ObjectMask::all(n).and_not(&deleted).unwrap()
        }
        _ => ObjectMask::from_allowed(n, (n > 0).then(|| seed % n)).unwrap(),
    }
}

fn item_strategy(space: u32) -> impl Strategy<Value = Item> {
    (0..space + 4, 0u32..6, 1u32..4).prop_map(|(lo, w, weight)| Item {
        lo,
        hi: lo + w,
        weight,
    })
}

/// Objects, queries, k, sublist length, table factor, mask kind and seed.
type Case = (Vec<Vec<u32>>, Vec<Query>, u32, u32, f64, u8, u32);

fn case_strategy() -> impl Strategy<Value = Case> {
    (4u32..40, 1usize..400).prop_flat_map(|(space, n)| {
        (
            prop::collection::vec(prop::collection::vec(0..space, 0..10), n),
            prop::collection::vec(
                prop::collection::vec(item_strategy(space), 0..6).prop_map(|items| Query { items }),
                1..6,
            ),
            0u32..30,
            prop_oneof![Just(4u32), Just(16), Just(4096)],
            prop_oneof![Just(1.5f64), Just(0.01)],
            0u8..6,
            any::<u32>(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Every CPU path with a mask gives brute force over the allowed objects.
    #[test]
    fn masked_searches_equal_brute_force_over_the_allowed(
        (objects, queries, k, sublist, factor, kind, seed) in case_strategy()
    ) {
        let n = objects.len() as u32;
        let mask = mask_of(kind, n, seed);
        let e = engine(build(&objects));
        let want = oracle::top_k_masked(&objects, &queries, k as usize, &mask);
        for (method, tiles) in [(Method::Cpq, true), (Method::Cpq, false), (Method::CountTable, false)] {
            let mut p = SearchParams::top_k(k).with_method(method).with_mask(mask.clone());
            p.sublist_len = sublist;
            p.table_factor = factor;
            p.cpu_tiles = tiles;
            // small tiles: many tiles of few objects
            p.cpu_tile_bytes = 128;
            let got = e.search(&queries, &p).unwrap();
            prop_assert_eq!(&got, &want, "{:?} tiles {}", method, tiles);
            for hits in &got {
                prop_assert!(hits.iter().all(|h| mask.contains(h.id)));
            }
        }
    }
}

/// The objects of a case where the allowed objects match weakly and many denied ones strongly:
/// objects `i % 10 == 0` hold keyword 3 only (count 1), the others 1, 2 and 3 (count 3).
fn weak_and_strong(n: u32) -> Vec<Vec<u32>> {
    (0..n)
        .map(|i| if i % 10 == 0 { vec![3] } else { vec![1, 2, 3] })
        .collect()
}

#[test]
fn k_answers_come_back_when_only_k_allowed_objects_match() {
    let n = 5000;
    let objects = weak_and_strong(n);
    let e = engine(build(&objects));
    let q = vec![Query::from_keywords(&[1, 2, 3])];
    for k in [1u32, 5, 37] {
        // exactly k allowed objects match, all weakly; every strong one is denied; objects of
        // no match (keyword 9 alone does not exist here) stay out
        let allowed: Vec<u32> = (0..n)
            .filter(|i| i % 10 == 0)
            .skip(3)
            .take(k as usize)
            .collect();
        let mask = ObjectMask::from_allowed(n, allowed.iter().copied()).unwrap();
        let want: Vec<Hit> = allowed.iter().map(|&id| Hit { id, count: 1 }).collect();
        for method in [Method::Cpq, Method::CountTable] {
            for tiles in [true, false] {
                for sublist in [8u32, 4096] {
                    let mut p = SearchParams::top_k(k)
                        .with_method(method)
                        .with_mask(mask.clone());
                    p.cpu_tiles = tiles;
                    p.sublist_len = sublist;
                    let got = e.search(&q, &p).unwrap();
                    assert_eq!(
                        got[0], want,
                        "k {k} {method:?} tiles {tiles} sublist {sublist}"
                    );
                    // a larger k gives the same k: there are no more allowed matches
                    p.k = k + 10;
                    assert_eq!(e.search(&q, &p).unwrap()[0], want, "k {} of {k}", k + 10);
                }
            }
        }
    }
}

#[test]
fn a_deny_list_drops_only_the_deleted_objects() {
    let n = 3000;
    let objects = weak_and_strong(n);
    let e = engine(build(&objects));
    let q = vec![Query::from_keywords(&[1, 2, 3])];
    let mut b = MaskBuilder::all(n);
    for id in [1u32, 2, 5, 2999] {
        b.deny(id).unwrap();
    }
    let mask = b.build();
    let got = e
        .search(&q, &SearchParams::top_k(4).with_mask(mask.clone()))
        .unwrap();
    let ids: Vec<u32> = got[0].iter().map(|h| h.id).collect();
    assert_eq!(ids, [3, 4, 6, 7]);
    assert_eq!(
        got,
        oracle::top_k_masked(&objects, &q, 4, &mask),
        "the oracle agrees"
    );
}

#[test]
fn parts_with_a_mask_equal_the_resident_search_with_the_mask() {
    let n = 2000u32;
    let objects: Vec<Vec<u32>> = (0..n)
        .map(|i| vec![i % 7, 7 + i % 11, 18 + i % 5, 23 + (i * 31) % 40])
        .collect();
    let index = build(&objects);
    let queries: Vec<Query> = (0..12u32)
        .map(|q| Query::from_keywords(&[q % 7, 7 + q % 11, 18 + q % 5, 23 + q]))
        .collect();
    let whole = engine(index.clone());
    let cpu = CpuBackend::new();
    for kind in 0u8..6 {
        let mask = mask_of(kind, n, 77);
        for method in [Method::Cpq, Method::CountTable] {
            let p = SearchParams::top_k(25)
                .with_method(method)
                .with_mask(mask.clone());
            let want = whole.search(&queries, &p).unwrap();
            assert_eq!(
                want,
                oracle::top_k_masked(&objects, &queries, 25, &mask),
                "mask {kind}"
            );
            for parts in [1usize, 2, 3, 7] {
                let sources = index.split(parts).into_iter().map(PartSource::Memory);
                let pe = PartedEngine::new(sources.collect(), vec![&cpu, &cpu]).unwrap();
                assert_eq!(pe.num_objects(), u64::from(n));
                assert_eq!(
                    pe.search(&queries, &p).unwrap(),
                    want,
                    "mask {kind} {method:?} {parts} parts"
                );
            }
        }
    }
}

#[test]
fn a_mask_of_another_length_is_a_clear_error() {
    let objects = weak_and_strong(100);
    let index = build(&objects);
    let e = engine(index.clone());
    let cpu = CpuBackend::new();
    let q = vec![Query::from_keywords(&[1])];
    for len in [0u32, 99, 101] {
        let p = SearchParams::top_k(5).with_mask(ObjectMask::all(len));
        match e.search(&q, &p) {
            Err(GenieError::InvalidParameter(msg)) => {
                assert!(
                    msg.contains(&format!("covers {len} objects")) && msg.contains("index has 100"),
                    "{msg}"
                );
            }
            other => panic!("mask of {len} for 100 objects: {other:?}"),
        }
        let pe = PartedEngine::new(
            index.split(3).into_iter().map(PartSource::Memory).collect(),
            vec![&cpu as &dyn genie_core::Backend],
        )
        .unwrap();
        let err = pe.search(&q, &p).unwrap_err();
        assert!(err.to_string().contains("parts hold 100"), "{err}");
    }
    // k = 0 is no excuse: the mask is checked first
    let p = SearchParams::top_k(0).with_mask(ObjectMask::none(7));
    assert!(e.search(&q, &p).is_err());
}

#[test]
fn no_allowed_object_gives_empty_answers() {
    let objects = weak_and_strong(500);
    let e = engine(build(&objects));
    let q = vec![Query::from_keywords(&[1, 2, 3]), Query::from_keywords(&[3])];
    for method in [Method::Cpq, Method::CountTable] {
        let p = SearchParams::top_k(10)
            .with_method(method)
            .with_mask(ObjectMask::none(500));
        assert_eq!(e.search(&q, &p).unwrap(), vec![Vec::<Hit>::new(); 2]);
    }
}
