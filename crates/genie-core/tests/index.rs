//! The index: layout, build, prepare (count bounds, clipping, bad items) and the file format.

#![allow(clippy::unwrap_used)]

use genie_core::{
    oracle, CpuBackend, Engine, GenieError, IndexBuilder, InvertedIndex, Item, Query, SearchParams,
};
use std::sync::Arc;

fn build(objects: &[&[u32]]) -> InvertedIndex {
    let mut b = IndexBuilder::new();
    for o in objects {
        b.push_object(o).unwrap();
    }
    b.build().unwrap()
}

#[test]
fn list_array_and_position_map() {
    let idx = build(&[&[3, 1, 1], &[], &[1, 2]]);
    assert_eq!(idx.num_objects(), 3);
    assert_eq!(idx.keyword_space(), 4);
    assert_eq!(idx.offsets(), &[0, 0, 2, 3, 4]);
    assert_eq!(idx.postings(), &[0, 2, 2, 0]);
    assert_eq!(
        idx.num_postings(),
        4,
        "duplicates inside an object are removed"
    );
    assert_eq!(
        idx.slice_of(1, 3),
        Some((0, 4)),
        "a range is one contiguous slice"
    );
    assert_eq!(
        idx.slice_of(2, 100),
        Some((2, 4)),
        "clipped to the keyword space"
    );
    assert_eq!(idx.slice_of(4, 9), None);
}

#[test]
fn parallel_build_keeps_ids_ascending_per_keyword() {
    let mut b = IndexBuilder::new();
    let objects: Vec<Vec<u32>> = (0..20_000u32)
        .map(|i| vec![i % 7, (i * 31) % 101, 200])
        .collect();
    for o in &objects {
        b.push_object(o).unwrap();
    }
    let idx = b.build().unwrap();
    for kw in 0..idx.keyword_space() {
        let p = idx.postings_of(kw);
        assert!(p.windows(2).all(|w| w[0] < w[1]), "keyword {kw}");
        let want: Vec<u32> = (0..20_000u32)
            .filter(|&i| objects[i as usize].contains(&kw))
            .collect();
        assert_eq!(p, want.as_slice());
    }
}

#[test]
fn count_bound_uses_blocks_and_object_sizes() {
    // 3 dimensions of 10 values, one value per dimension
    let mut b = IndexBuilder::new()
        .blocks(vec![0, 10, 20])
        .keyword_space(30);
    b.push_object(&[1, 12, 25]).unwrap();
    b.push_object(&[3, 10, 29]).unwrap();
    let idx = b.build().unwrap();
    let q = Query::new(vec![
        Item::new(0, 9, 1).unwrap(),
        Item::new(10, 29, 2).unwrap(),
    ])
    .unwrap();
    // first item: 1 per object in block 0; second spans blocks 1 and 2: 2 keywords, weight 2
    assert_eq!(idx.prepare(&q).unwrap().bound, 1 + 4);
    // without blocks the bound falls back to min(width, max object length)
    let plain = build(&[&[1, 12, 25], &[3, 10, 29]]);
    assert_eq!(plain.prepare(&q).unwrap().bound, 3 + 2 * 3);
}

#[test]
fn bad_items_are_errors_and_outside_keywords_match_nothing() {
    assert!(matches!(
        Item::new(5, 4, 1),
        Err(GenieError::InvalidRange { lo: 5, hi: 4 })
    ));
    assert!(matches!(Item::new(1, 4, 0), Err(GenieError::ZeroWeight)));
    let idx = build(&[&[1, 2], &[2]]);
    let bad = Query {
        items: vec![Item {
            lo: 3,
            hi: 1,
            weight: 1,
        }],
    };
    assert!(
        idx.prepare(&bad).is_err(),
        "prepare validates items built without Item::new"
    );
    let outside = Query::from_keywords(&[50, 1_000_000]);
    let pq = idx.prepare(&outside).unwrap();
    assert!(pq.items.is_empty());
    assert_eq!(pq.bound, 0);
}

#[test]
fn huge_count_bound_is_an_error() {
    let idx = build(&[&[0, 1, 2, 3]]);
    let q = Query {
        items: vec![Item {
            lo: 0,
            hi: 3,
            weight: u32::MAX,
        }],
    };
    assert!(matches!(
        idx.prepare(&q),
        Err(GenieError::CountBoundTooLarge { .. })
    ));
}

#[test]
fn k_zero_and_empty_queries_give_empty_results() {
    let e = Engine::with_backend(Arc::new(build(&[&[1], &[1, 2]])), &CpuBackend::new()).unwrap();
    let qs = vec![Query::default(), Query::from_keywords(&[1])];
    assert_eq!(
        e.search(&qs, &SearchParams::top_k(0)).unwrap(),
        vec![vec![], vec![]]
    );
    let r = e.search(&qs, &SearchParams::top_k(5)).unwrap();
    assert!(r[0].is_empty());
    assert_eq!(r[1].len(), 2);
}

#[test]
fn tiny_budget_splits_batches_with_identical_results() {
    let objects: Vec<Vec<u32>> = (0..500u32)
        .map(|i| vec![i % 13, 20 + i % 17, 40 + i % 5])
        .collect();
    let mut b = IndexBuilder::new();
    objects.iter().for_each(|o| {
        b.push_object(o).unwrap();
    });
    let idx = Arc::new(b.build().unwrap());
    let queries: Vec<Query> = (0..50u32)
        .map(|i| Query::from_keywords(&[i % 13, 20 + i % 17, 40]))
        .collect();
    let p = SearchParams::top_k(10);
    let whole = Engine::with_backend(idx.clone(), &CpuBackend::new()).unwrap();
    let tiny = Engine::with_backend(idx, &CpuBackend::new().with_budget(1)).unwrap();
    let prepared = tiny.index().prepare_all(&queries).unwrap();
    assert_eq!(
        tiny.plan_batches(&prepared, &p).len(),
        50,
        "one query per batch under a 1-byte budget"
    );
    assert_eq!(whole.plan_batches(&prepared, &p).len(), 1);
    let want = oracle::top_k(&objects, &queries, 10);
    assert_eq!(whole.search(&queries, &p).unwrap(), want);
    assert_eq!(tiny.search(&queries, &p).unwrap(), want);
}

#[test]
fn declared_keyword_space_is_enforced() {
    let mut b = IndexBuilder::new().keyword_space(4);
    b.push_object(&[7]).unwrap();
    assert!(matches!(b.build(), Err(GenieError::InvalidParameter(_))));
}

mod file {
    use super::*;
    use xxhash_rust::xxh3::xxh3_64;

    fn sample() -> InvertedIndex {
        let mut b = IndexBuilder::new()
            .blocks(vec![0, 4])
            .metadata(r#"{"kind":"test"}"#);
        for o in [&[1u32, 5][..], &[], &[2, 3, 7]] {
            b.push_object(o).unwrap();
        }
        b.build().unwrap()
    }

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.genie");
        let idx = sample();
        idx.save(&path).unwrap();
        assert_eq!(InvertedIndex::load(&path).unwrap(), idx);
    }

    fn load_err(bytes: &[u8]) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.genie");
        std::fs::write(&path, bytes).unwrap();
        let err = InvertedIndex::load(&path).unwrap_err();
        assert!(matches!(err, GenieError::BadIndexFile { .. }));
        let msg = err.to_string();
        assert!(msg.contains("bad.genie"), "the error names the file: {msg}");
        msg
    }

    #[test]
    fn truncated_corrupted_and_wrong_version_files_are_clear_errors() {
        let bytes = sample().to_bytes();
        for cut in [0, 5, 20, 4095, 4096, bytes.len() / 2, bytes.len() - 1] {
            let msg = load_err(&bytes[..cut]);
            assert!(
                msg.contains("truncated") || msg.contains("magic"),
                "{cut}: {msg}"
            );
        }
        let mut flipped = bytes.clone();
        flipped[60] ^= 0x40;
        assert!(load_err(&flipped).contains("checksum"));
        let mut v3 = bytes.clone();
        v3[8] = 3;
        assert!(load_err(&v3).contains("version 3"));
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(load_err(&longer).contains("trailing"));
        assert!(load_err(b"hello world, not an index").contains("magic"));
    }

    /// An index of `n` objects whose List Array spans several checksum chunks when large.
    fn large(n: u32) -> InvertedIndex {
        let mut b = IndexBuilder::new().metadata("{}");
        for i in 0..n {
            b.push_object(&[i % 97, 100 + i % 1013, 2000 + i % 50_000])
                .unwrap();
        }
        b.build().unwrap()
    }

    /// The arrays of a file, as (name, start, end) from its header.
    fn arrays(bytes: &[u8]) -> Vec<(&'static str, usize, usize)> {
        let names = [
            "position map",
            "list array",
            "block starts",
            "block maxima",
            "metadata",
        ];
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
        (0..5)
            .map(|i| {
                (
                    names[i],
                    word(48 + 24 * i),
                    word(48 + 24 * i) + word(56 + 24 * i),
                )
            })
            .collect()
    }

    /// The mapped `load` and `from_bytes` give the same index or the same error whatever the
    /// damage: a bit flipped in the header, in the zeros after it, at the start, middle and end
    /// of every array and between arrays; cuts inside every array; a longer file; and a file
    /// whose checksums are right but whose structure is wrong.
    #[test]
    fn corruption_anywhere_is_refused_by_load_and_from_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.genie");
        for idx in [sample(), large(40_000)] {
            let good = idx.to_bytes();
            let n = good.len();
            let mut cases = vec![(good.clone(), None), (Vec::new(), Some("magic"))];
            let flip = |at: usize, what: &'static str| {
                let mut bad = good.clone();
                bad[at] ^= 0x21;
                (bad, Some(what))
            };
            let mut flips = vec![flip(0, "magic"), flip(8, "version"), flip(20, "checksum")];
            flips.push(flip(200, "not zero"));
            flips.push(flip(4000, "not zero"));
            for (name, start, end) in arrays(&good) {
                if end > start {
                    for at in [start, (start + end) / 2, end - 1] {
                        flips.push(flip(at, name));
                    }
                }
                if end % 4096 != 0 && end < n {
                    flips.push(flip(end, "not zero"));
                }
            }
            cases.extend(flips);
            for (_, start, end) in arrays(&good) {
                if end > start + 1 {
                    cases.push((good[..(start + end) / 2].to_vec(), Some("truncated")));
                }
            }
            let mut longer = good.clone();
            longer.extend_from_slice(&[0; 9]);
            cases.push((longer, Some("trailing")));
            for (bytes, want) in cases {
                std::fs::write(&path, &bytes).unwrap();
                let got = InvertedIndex::load(&path).map_err(|e| e.to_string());
                let parsed = InvertedIndex::from_bytes(&bytes).map_err(|reason| {
                    GenieError::BadIndexFile {
                        path: path.clone(),
                        reason,
                    }
                    .to_string()
                });
                assert_eq!(got, parsed, "{} bytes", bytes.len());
                match want {
                    None => assert_eq!(got.as_ref().ok(), Some(&idx)),
                    Some(w) => {
                        let e = got.expect_err("refused");
                        assert!(e.contains(w) && e.contains("x.genie"), "expected {w}: {e}");
                    }
                }
            }
        }
    }

    /// A file whose checksums are right but whose structure is wrong is refused too.
    #[test]
    fn right_checksums_wrong_structure_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.genie");
        let mut b = IndexBuilder::new().metadata("{}");
        b.push_object(&[1, 2]).unwrap();
        b.push_object(&[2]).unwrap();
        let mut bytes = b.build().unwrap().to_bytes();
        // a posting past the objects, with the list array's and the header's checksums redone
        // as the format says (XXH3-64 of the chunks' XXH3-64s; of the header's first 168 bytes)
        let (_, start, _) = arrays(&bytes)[1];
        bytes[start..start + 4].copy_from_slice(&7u32.to_le_bytes());
        let (_, s, e) = arrays(&bytes)[1];
        let sum = xxh3_64(&xxh3_64(&bytes[s..e]).to_le_bytes());
        bytes[48 + 24 + 16..48 + 24 + 24].copy_from_slice(&sum.to_le_bytes());
        let head = xxh3_64(&bytes[..168]);
        bytes[168..176].copy_from_slice(&head.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let e = InvertedIndex::load(&path).unwrap_err().to_string();
        assert!(e.contains("beyond"), "{e}");
    }

    #[test]
    fn missing_file_is_an_io_error_naming_it() {
        let err = InvertedIndex::load("/nonexistent/x.genie").unwrap_err();
        assert!(matches!(err, GenieError::Io { .. }));
        assert!(err.to_string().contains("/nonexistent/x.genie"));
    }
}

mod plugin {
    use genie_core::{rerank, Hit, ObjectId, Verifier};

    struct AbsDiff(Vec<f64>);
    impl Verifier for AbsDiff {
        type QueryInput = f64;
        fn distance(&self, q: &f64, id: ObjectId) -> genie_core::Result<f64> {
            Ok((self.0[id as usize] - q).abs())
        }
    }

    #[test]
    fn rerank_orders_by_distance_then_count_then_id() {
        let v = AbsDiff(vec![5.0, 1.0, 3.0, 1.0]);
        let cands = [
            Hit { id: 0, count: 9 },
            Hit { id: 1, count: 2 },
            Hit { id: 3, count: 4 },
            Hit { id: 2, count: 4 },
        ];
        let got: Vec<(u32, f64)> = rerank(&v, &1.0, &cands, 3)
            .unwrap()
            .iter()
            .map(|h| (h.id, h.distance))
            .collect();
        // ids 1 and 3 tie at distance 0: the larger count (3) first
        assert_eq!(got, vec![(3, 0.0), (1, 0.0), (2, 2.0)]);
    }
}

mod parted_files {
    use genie_core::parts::{is_manifest, open_parts, save_parts, PartWriter};
    use genie_core::{GenieError, IndexBuilder};

    #[test]
    fn parts_built_while_saved_are_the_parts_added() {
        let dir = tempfile::tempdir().unwrap();
        let (added, built) = (dir.path().join("a.genie"), dir.path().join("b.genie"));
        let (mut a, mut b) = (PartWriter::new(&added), PartWriter::new(&built));
        for p in 0..3u32 {
            let mut builder = IndexBuilder::new().metadata(format!("part {p}"));
            for i in 0..50 + p * 20 {
                builder.push_object(&[(i * 7 + p) % 23, i % 5, 40]).unwrap();
            }
            let index = builder.clone().build().unwrap();
            a.add(&index).unwrap();
            assert_eq!(b.build_and_add(builder).unwrap(), index);
        }
        let (ma, mb) = (a.finish().unwrap(), b.finish().unwrap());
        assert_eq!(ma.num_objects, mb.num_objects);
        for p in 0..3 {
            let read = |path: &std::path::Path| {
                std::fs::read(path.with_file_name(format!(
                    "{}.part{p}",
                    path.file_name().unwrap().to_str().unwrap()
                )))
                .unwrap()
            };
            assert_eq!(read(&added), read(&built), "part {p}");
        }
        let manifest = |path: &std::path::Path| {
            std::fs::read_to_string(path)
                .unwrap()
                .replace("b.genie", "a.genie")
        };
        assert_eq!(manifest(&added), manifest(&built));
    }

    #[test]
    fn manifest_round_trip_and_errors_name_the_file() {
        let mut b = IndexBuilder::new();
        for i in 0..100u32 {
            b.push_object(&[i % 7, 10 + i % 3]).unwrap();
        }
        let index = b.build().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.genie");
        save_parts(&path, &index.split(4)).unwrap();
        assert!(is_manifest(&path).unwrap());
        let (m, sources) = open_parts(&path).unwrap();
        assert_eq!((m.num_objects, sources.len()), (100, 4));
        let bases: Vec<u32> = sources.iter().map(|s| s.base()).collect();
        assert_eq!(bases, vec![0, 25, 50, 75]);
        assert_eq!(sources[2].load().unwrap().num_objects(), 25);

        // a part file that disagrees with the manifest
        std::fs::copy(
            dir.path().join("m.genie.part0"),
            dir.path().join("m.genie.part1"),
        )
        .unwrap();
        let swapped = open_parts(&path).unwrap().1;
        assert!(swapped[1].load().is_ok(), "same size parts load");
        std::fs::write(dir.path().join("m.genie.part1"), b"GENIEIDX junk").unwrap();
        let err = open_parts(&path).unwrap().1[1].load().unwrap_err();
        assert!(err.to_string().contains("m.genie.part1"), "{err}");

        // a manifest with a gap between parts
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("\"base\": 25", "\"base\": 26");
        std::fs::write(&path, text).unwrap();
        let err = open_parts(&path).unwrap_err();
        assert!(
            matches!(err, GenieError::BadIndexFile { .. })
                && err.to_string().contains("expected 25"),
            "{err}"
        );
        std::fs::write(&path, "{ not json").unwrap();
        assert!(open_parts(&path)
            .unwrap_err()
            .to_string()
            .contains("m.genie"));
    }
}

/// A batch lays every query's counters out at the batch's widest width (the GPU's tiled kernel
/// does): mixing a query of bound 300 (16-bit counters) into queries of small bounds costs all of
/// them 16 bits, and a budget that fits the narrow batch splits the mixed one.
#[test]
fn batch_cost_takes_the_widest_counters() {
    let objects: Vec<Vec<u32>> = (0..5000u32).map(|i| vec![i % 7, 10 + i % 3]).collect();
    let mut b = IndexBuilder::new();
    objects.iter().for_each(|o| {
        b.push_object(o).unwrap();
    });
    let idx = Arc::new(b.build().unwrap());
    let narrow: Vec<Query> = (0..8u32).map(|i| Query::from_keywords(&[i % 7])).collect();
    let wide_q = Query::new(vec![genie_core::Item::new(0, 12, 130).unwrap()]).unwrap();
    let p = SearchParams::top_k(10);
    let e = Engine::with_backend(idx.clone(), &CpuBackend::new()).unwrap();
    let narrow_p = e.index().prepare_all(&narrow).unwrap();
    let mut mixed = narrow.clone();
    mixed.push(wide_q);
    let mixed_p = e.index().prepare_all(&mixed).unwrap();
    assert!(mixed_p[8].bound > 255 && mixed_p[8].bound <= 1023);
    let sum: u64 = mixed_p.iter().map(|q| e.bytes_per_query(q, &p)).sum();
    let batch = e.batch_bytes(&mixed_p, &p);
    // 8 narrow queries pay 16-bit counters: 5,000 objects x 1 more byte each
    assert_eq!(batch - sum, 8 * 5000);
    assert_eq!(
        e.batch_bytes(&narrow_p, &p),
        narrow_p
            .iter()
            .map(|q| e.bytes_per_query(q, &p))
            .sum::<u64>()
    );
    // a budget that the per-query sum fits but the batch does not: two batches
    let tight = Engine::with_backend(idx, &CpuBackend::new().with_budget(sum)).unwrap();
    assert_eq!(tight.plan_batches(&mixed_p, &p), vec![0..8, 8..9]);
}
