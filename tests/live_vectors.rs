//! Live vector indexes (e2lsh and codebook): written vectors hashed by the index's own functions
//! or codebook and found as their own nearest, deleted and replaced ones gone, filters applied,
//! the live folder standing alone after a compaction, and a codebook index's drift count; every
//! search on the CPU and, where there is one, the GPU, compared.

use genie::kind::{Filter, KindIndex, Options, Registry};
use genie::live::LiveIndex;
use serde_json::{json, Value};
use std::path::Path;

#[path = "common/live.rs"]
mod live;
use live::{build, config, cpu};

/// Writes `rows` as an `.fvecs` file.
fn write_fvecs(path: &Path, rows: &[Vec<f32>]) {
    let mut bytes = Vec::new();
    for r in rows {
        bytes.extend_from_slice(&(r.len() as i32).to_le_bytes());
        for x in r {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
    }
    std::fs::write(path, bytes).expect("fvecs");
}

/// `n` vectors of `dim` around 8 centres (a fixed seed).
fn clustered(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let centres: Vec<Vec<f32>> = (0..8)
        .map(|_| (0..dim).map(|_| rng.random_range(-10.0..10.0)).collect())
        .collect();
    (0..n)
        .map(|i| {
            centres[i % 8]
                .iter()
                .map(|c| c + rng.random_range(-1.0f32..1.0))
                .collect()
        })
        .collect()
}

/// The hits `(id, distance)` of one vector query.
fn nearest(index: &dyn KindIndex, v: &[f32], k: u32, filter: Option<&Filter>) -> Vec<(u64, f64)> {
    live::answer(index, &json!(v), &Options::new(), k, filter)
        .hits
        .iter()
        .map(|h| (h.id, h.distance.expect("a distance")))
        .collect()
}

fn live_vectors(lsh: &str, metric: Option<&str>) {
    let dir = tempfile::tempdir().expect("dir");
    let base = clustered(400, 16, 1);
    let input = dir.path().join("x.fvecs");
    write_fvecs(&input, &base);
    let file = dir.path().join("x.genie");
    let mut options = Options::new();
    options.set("lsh", lsh);
    if let Some(m) = metric {
        options.set("metric", m);
    }
    build("vectors", &input, &file, &options);
    let registry = Registry::default();
    // before any write, the live index answers as the file does
    let built = genie::open::load(&registry, &file).expect("loaded");
    let from_file = live::both::Both::file(&built);
    let live = LiveIndex::open_file(&registry, &file, config()).expect("live");
    let index = cpu(&live);
    let probe = clustered(20, 16, 9);
    if lsh != "codebook" {
        // (the codebook file is searched by scanning cells, the live index by its lists)
        for v in &probe {
            assert_eq!(
                nearest(index.as_ref(), v, 5, None),
                nearest(from_file.as_ref(), v, 5, None)
            );
        }
    }
    // added vectors are their own nearest; replaced and deleted ones are gone
    let added = clustered(60, 16, 2);
    let ids: Vec<u64> = (1000..1060).collect();
    let raw: Vec<Value> = added.iter().map(|v| json!(v)).collect();
    live.add(&ids, &raw).expect("added");
    live.delete(&[1001, 3]).expect("deleted");
    live.add(&[1002], &[json!(base[7])]).expect("replaced");
    let check = |index: &dyn KindIndex| {
        for (i, v) in added.iter().enumerate() {
            let id = 1000 + i as u64;
            let hits = nearest(index, v, 3, None);
            match id {
                1001 => assert!(hits.iter().all(|h| h.0 != 1001), "{hits:?}"),
                1002 => assert!(hits.iter().all(|h| h.0 != 1002 || h.1 > 0.0)),
                _ => assert_eq!(hits[0], (id, 0.0), "{lsh}: vector {id}"),
            }
        }
        assert!(nearest(index, &base[3], 5, None).iter().all(|h| h.0 != 3));
        let near7 = nearest(index, &base[7], 2, None);
        assert!(near7.iter().any(|h| h == &(1002, 0.0)), "{near7:?}");
        let allow = Filter::from_json(Some(&json!({"ids": [1010, 1011, 5]})), None)
            .expect("filter")
            .expect("some");
        let hits = nearest(index, &added[10], 10, Some(&allow));
        assert_eq!(hits.first().map(|h| h.0), Some(1010));
        assert!(
            hits.iter().all(|h| [1010, 1011, 5].contains(&h.0)),
            "{hits:?}"
        );
    };
    check(index.as_ref());
    live.flush().expect("flushed");
    live.compact().expect("compacted");
    check(index.as_ref());
    drop(index);
    drop(live);
    // the live folder keeps what it needs: the built file's vectors and codebook may go
    std::fs::remove_file(&file).expect("rm");
    let live =
        LiveIndex::open_with(&registry, &LiveIndex::folder_of(&file), config()).expect("reopened");
    check(cpu(&live).as_ref());
    assert_eq!(live.live_objects(), 400 + 60 - 2);
    let e = live
        .add(&[1], &[json!([1.0, 2.0])])
        .expect_err("a short vector");
    assert!(e.to_string().contains("16"), "{e}");
}

#[test]
fn live_lsh_vectors_find_what_was_written() {
    live_vectors("e2lsh", None);
}

#[test]
fn live_codebook_vectors_find_what_was_written() {
    live_vectors("codebook", None);
}

#[test]
fn live_cosine_codebook_vectors_find_what_was_written() {
    // a written vector and the same as a query are scaled alike: at cosine distance 0
    live_vectors("codebook", Some("cosine"));
}

#[test]
fn a_live_inner_product_index_refuses_vectors_longer_than_its_bound() {
    let dir = tempfile::tempdir().expect("dir");
    let base = clustered(300, 16, 1);
    let input = dir.path().join("x.fvecs");
    write_fvecs(&input, &base);
    let file = dir.path().join("x.genie");
    let mut options = Options::new();
    options.set("metric", "ip");
    build("vectors", &input, &file, &options);
    let live = LiveIndex::open_file(&Registry::default(), &file, config()).expect("live");
    let index = cpu(&live);
    // the written vector is found, and its distance is minus its inner product with the query
    let v: Vec<f32> = base[5].iter().map(|x| x * 0.5).collect();
    live.add(&[7000], &[json!(v)]).expect("added");
    let dot: f64 = v.iter().zip(&base[5]).map(|(a, b)| f64::from(a * b)).sum();
    let hits = nearest(index.as_ref(), &base[5], 400, None);
    let got = hits
        .iter()
        .find(|h| h.0 == 7000)
        .expect("the written vector");
    assert!(
        (got.1 + dot).abs() < 1e-3 * dot.abs(),
        "{} against {}",
        got.1,
        -dot
    );
    assert!(hits.windows(2).all(|w| w[0].1 <= w[1].1), "{hits:?}");
    let long: Vec<f32> = base[5].iter().map(|x| x * 100.0).collect();
    let e = live.add(&[7001], &[json!(long)]).expect_err("too long");
    assert!(e.to_string().contains("long"), "{e}");
}

#[test]
fn a_codebook_index_counts_writes_that_drift_from_its_training() {
    let dir = tempfile::tempdir().expect("dir");
    let input = dir.path().join("x.fvecs");
    // one data set: the build takes its first 2,000 vectors, the writes the rest
    let data = clustered(3000, 16, 1);
    write_fvecs(&input, &data[..2000]);
    let file = dir.path().join("x.genie");
    let mut options = Options::new();
    options.set("lsh", "codebook");
    build("vectors", &input, &file, &options);
    let live = LiveIndex::open_file(&Registry::default(), &file, config()).expect("live");
    // more of the same data: few land in over-full cells
    let same: Vec<Value> = data[2000..].iter().map(|v| json!(v)).collect();
    live.add(&(0..1000).map(|i| 10_000 + i).collect::<Vec<u64>>(), &same)
        .expect("added");
    let before = live.stats().crowded;
    assert!(
        before < 100,
        "{before} of 1000 like the training data counted as crowded"
    );
    // data far from the training data piles into the few nearest cells
    let far: Vec<Value> = clustered(1000, 16, 6)
        .iter()
        .map(|v| json!(v.iter().map(|x| x + 100.0).collect::<Vec<f32>>()))
        .collect();
    live.add(&(0..1000).map(|i| 20_000 + i).collect::<Vec<u64>>(), &far)
        .expect("added");
    let after = live.stats().crowded - before;
    assert!(
        after > 500,
        "only {after} of 1000 drifted vectors counted as crowded"
    );
}

#[test]
fn a_built_codebook_index_answers_among_the_allowed() {
    built_index_answers_among_the_allowed("codebook");
}

#[test]
fn a_built_lsh_index_answers_among_the_allowed() {
    built_index_answers_among_the_allowed("e2lsh");
}

/// Filters on a vector index file of family `lsh`: every hit allowed, distances exact and
/// ascending, the nearest allowed vectors found (the codebook answers a filter of a few vectors
/// exactly; an LSH family's count skips the others before its candidates are taken).
fn built_index_answers_among_the_allowed(lsh: &str) {
    let dir = tempfile::tempdir().expect("dir");
    let base = clustered(2000, 16, 3);
    let input = dir.path().join("x.fvecs");
    write_fvecs(&input, &base);
    let file = dir.path().join("x.genie");
    let mut options = Options::new();
    options.set("lsh", lsh);
    build("vectors", &input, &file, &options);
    let built = genie::open::load(&Registry::default(), &file).expect("loaded");
    let index = live::both::Both::file(&built);
    let queries = clustered(30, 16, 11);
    let l2 = |a: &[f32], b: &[f32]| -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| f64::from((x - y) * (x - y)))
            .sum::<f64>()
            .sqrt()
    };
    // every vector allowed first (the recall without a filter, to compare with), then 70%, 10%
    // and 0.5% (answered exactly)
    let mut unfiltered = None;
    for per_mille in [1000u64, 700, 100, 5] {
        let allowed: Vec<u64> = (0..2000u64)
            .filter(|i| (i * 7919) % 1000 < per_mille)
            .collect();
        let filter = Filter::new(Some(allowed.clone()), vec![13]);
        let (mut found, mut total) = (0usize, 0usize);
        for q in &queries {
            let hits = nearest(index.as_ref(), q, 10, Some(&filter));
            assert!(
                hits.iter().all(|h| allowed.contains(&h.0) && h.0 != 13),
                "{hits:?}"
            );
            assert!(hits.windows(2).all(|w| w[0].1 <= w[1].1), "{hits:?}");
            let mut exact: Vec<(f64, u64)> = allowed
                .iter()
                .filter(|&&id| id != 13)
                .map(|&id| (l2(q, &base[id as usize]), id))
                .collect();
            exact.sort_by(|a, b| a.0.total_cmp(&b.0));
            let want: Vec<u64> = exact.iter().take(10).map(|e| e.1).collect();
            assert_eq!(hits.len(), want.len(), "{per_mille} per mille");
            for h in &hits {
                let d = l2(q, &base[h.0 as usize]);
                assert!((h.1 - d).abs() < 1e-3, "{} against {d}", h.1);
            }
            found += hits.iter().filter(|h| want.contains(&h.0)).count();
            total += want.len();
        }
        let recall = found as f64 / total as f64;
        let reference = *unfiltered.get_or_insert(recall);
        assert!(
            recall >= reference - 0.05,
            "{lsh}, {per_mille} per mille: recall {recall} against {reference} unfiltered"
        );
        if lsh == "codebook" {
            assert!(recall >= 0.9, "{per_mille} per mille: recall {recall}");
        }
        if per_mille == 5 {
            assert_eq!(recall, 1.0, "exact among 10 allowed vectors");
        }
    }
}
