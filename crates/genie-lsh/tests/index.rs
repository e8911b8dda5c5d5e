//! The vector index end to end on the CPU backend: exact answers for points in the data, K = k
//! (pure tau-ANN) against K > k, save and load, and the errors of mismatched files and queries.
#![allow(clippy::unwrap_used)]

use genie_core::DeviceChoice;
use genie_lsh::index::vectors_path;
use genie_lsh::{estimate, Family, LshError, VectorIndex, VectorSet};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// 300 points in 10-d around 10 centres `100 e_j`, apart both in distance and in angle.
fn clustered() -> VectorSet {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let mut data = Vec::new();
    for i in 0..300 {
        data.extend((0..DIM).map(|j| {
            let centre = if j == i % 10 { 100.0 } else { 0.0 };
            centre + rng.random_range(-1.0f32..1.0)
        }));
    }
    VectorSet::new(DIM, data).unwrap()
}

const DIM: usize = 10;

fn index(family: Family) -> VectorIndex {
    let data = clustered();
    let params = estimate::estimate(&data, family, 3).unwrap();
    VectorIndex::build(data, params, DeviceChoice::Cpu).unwrap()
}

#[test]
fn points_of_the_data_find_themselves() {
    for family in [Family::E2lsh, Family::L1, Family::Rbh, Family::Srp] {
        let idx = index(family);
        let queries = idx.vectors().head(20);
        let hits = idx.search(&queries, 5, 50).unwrap();
        for (i, h) in hits.iter().enumerate() {
            assert_eq!(h[0].id, i as u32, "{family:?}");
            assert!(h[0].distance < 1e-9, "{family:?}: {h:?}");
            assert_eq!(h[0].count, idx.metadata().params.functions);
            // neighbours come from the same cluster
            assert!(
                h.iter().all(|x| x.id % 10 == i as u32 % 10),
                "{family:?}: {h:?}"
            );
        }
    }
}

#[test]
fn k_equal_candidates_is_the_count_top_k() {
    let idx = index(Family::E2lsh);
    let q = idx.vectors().select(&[3, 77, 150]).unwrap();
    let counts = idx.search_counts(&q, 10).unwrap();
    let pure = idx.search(&q, 10, 10).unwrap();
    for (c, p) in counts.iter().zip(&pure) {
        let mut a: Vec<u32> = c.iter().map(|h| h.id).collect();
        let mut b: Vec<u32> = p.iter().map(|h| h.id).collect();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }
    // the count table gives the same answers as the c-PQ
    let table = idx
        .search_with(&q, 10, 10, genie_core::Method::CountTable)
        .unwrap();
    assert_eq!(table, pure);
    // more candidates never make the k-th distance worse
    let wide = idx.search(&q, 10, 100).unwrap();
    for (p, w) in pure.iter().zip(&wide) {
        assert!(w[9].distance <= p[9].distance);
    }
}

#[test]
fn save_and_load_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.genie");
    let idx = index(Family::Rbh);
    idx.save(&path).unwrap();
    assert!(vectors_path(&path).is_file());
    let back = VectorIndex::load(&path, DeviceChoice::Cpu).unwrap();
    assert_eq!(back.metadata(), idx.metadata());
    assert_eq!(back.vectors(), idx.vectors());
    let q = idx.vectors().head(5);
    assert_eq!(
        back.search(&q, 3, 30).unwrap(),
        idx.search(&q, 3, 30).unwrap()
    );
}

#[test]
fn mismatched_files_and_queries_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.genie");
    let idx = index(Family::E2lsh);
    idx.save(&path).unwrap();
    // a vectors file of another index
    let other = dir.path().join("o.genie");
    let small = VectorSet::new(DIM, vec![1.0; 2 * DIM]).unwrap();
    let params = genie_lsh::LshParams::new(Family::E2lsh, DIM, 4, 1.0, 0);
    VectorIndex::build(small, params, DeviceChoice::Cpu)
        .unwrap()
        .save(&other)
        .unwrap();
    std::fs::copy(vectors_path(&other), vectors_path(&path)).unwrap();
    let e = VectorIndex::load(&path, DeviceChoice::Cpu).unwrap_err();
    assert!(e.to_string().contains("does not belong to"), "{e}");
    std::fs::remove_file(vectors_path(&path)).unwrap();
    let e = VectorIndex::load(&path, DeviceChoice::Cpu).unwrap_err();
    assert!(e.to_string().contains("v.genie.vectors"), "{e}");
    // a core index without LSH metadata
    let mut b = genie_core::IndexBuilder::new();
    b.push_object(&[1, 2]).unwrap();
    let plain = dir.path().join("plain.genie");
    b.build().unwrap().save(&plain).unwrap();
    let e = VectorIndex::load(&plain, DeviceChoice::Cpu).unwrap_err();
    assert!(
        e.to_string().contains("not a genie-lsh vector index"),
        "{e}"
    );
    // queries of another dimension
    let q = VectorSet::new(3, vec![0.0; 3]).unwrap();
    assert!(matches!(
        idx.search(&q, 1, 10),
        Err(LshError::Dimension {
            expected: DIM,
            found: 3
        })
    ));
    // parameters of another dimension
    let p = genie_lsh::LshParams::new(Family::E2lsh, 4, 4, 1.0, 0);
    assert!(VectorIndex::build(clustered(), p, DeviceChoice::Cpu).is_err());
}

#[test]
fn empty_query_set_and_empty_results() {
    let idx = index(Family::Srp);
    let none = VectorSet::empty(DIM).unwrap();
    assert!(idx.search(&none, 5, 50).unwrap().is_empty());
    let q = idx.vectors().head(1);
    assert!(idx.search(&q, 0, 0).unwrap()[0].is_empty());
    // more candidates than objects: every object with a count is a candidate, no huge buffers
    let all = idx.search(&q, 1000, usize::MAX).unwrap();
    let n = idx.vectors().len();
    assert_eq!(all[0].len(), idx.search_counts(&q, n).unwrap()[0].len());
    assert_eq!(all[0][0].id, 0);
}
