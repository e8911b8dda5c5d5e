//! Recall floor on a slice of real data: the first 2,000 Fashion-MNIST training images as data,
//! the first 50 test images as queries, default parameters estimated from the data (E2LSH, m by
//! Eqn. 9, w from the sample), K = 10 k candidates re-ranked by L2. Prints `skipped: <reason>`
//! when the data set is absent (see scripts/fetch-fashion-mnist.sh).
#![allow(clippy::unwrap_used)]

use genie_core::DeviceChoice;
use genie_lsh::{estimate, io, Family, VectorIndex, VectorSet};
use std::path::PathBuf;

/// `$GENIE_DATA/fashion-mnist` when the environment variable names a folder of data sets, else
/// `data/fashion-mnist` inside the repository.
fn data_dir() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::env::var_os("GENIE_DATA")
        .map(|d| PathBuf::from(d).join("fashion-mnist"))
        .into_iter()
        .chain([root.join("data/fashion-mnist")])
        .find(|d| d.join("train-images-idx3-ubyte.gz").is_file())
}

fn exact_top(data: &VectorSet, q: &[f32], family: Family, k: usize) -> Vec<u32> {
    let mut d: Vec<(f64, u32)> = data
        .rows()
        .enumerate()
        .map(|(i, r)| (family.metric().distance(q, r), i as u32))
        .collect();
    d.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    d.into_iter().take(k).map(|x| x.1).collect()
}

fn recall(family: Family, k: usize, candidates: usize) -> Option<f64> {
    let Some(dir) = data_dir() else {
        println!(
            "skipped: Fashion-MNIST not found in $GENIE_DATA or data/ (run scripts/fetch-fashion-mnist.sh)"
        );
        return None;
    };
    let data = io::read_vectors(dir.join("train-images-idx3-ubyte.gz"))
        .unwrap()
        .head(2000);
    let queries = io::read_vectors(dir.join("t10k-images-idx3-ubyte.gz"))
        .unwrap()
        .head(50);
    let params = estimate::estimate(&data, family, 1).unwrap();
    let index = VectorIndex::build(data.clone(), params, DeviceChoice::Cpu).unwrap();
    let hits = index.search(&queries, k, candidates).unwrap();
    let mut found = 0;
    for (q, h) in queries.rows().zip(&hits) {
        let truth = exact_top(&data, q, family, k);
        found += h.iter().filter(|x| truth.contains(&x.id)).count();
        // distances are exact and ascending
        assert!(h.windows(2).all(|w| w[0].distance <= w[1].distance));
        assert_eq!(h.len(), k);
    }
    let r = found as f64 / (k * queries.len()) as f64;
    println!("{} recall@{k} with K = {candidates}: {r:.3}", family.name());
    Some(r)
}

#[test]
fn e2lsh_recall_at_10_on_fashion_mnist() {
    if let Some(r) = recall(Family::E2lsh, 10, 100) {
        assert!(r >= 0.95, "recall@10 {r}");
    }
}

#[test]
fn l1_families_recall_at_10_on_fashion_mnist() {
    for family in [Family::L1, Family::Rbh] {
        if let Some(r) = recall(family, 10, 100) {
            assert!(r >= 0.9, "{family:?} recall@10 {r}");
        }
    }
}

#[test]
fn srp_recall_at_10_on_fashion_mnist() {
    if let Some(r) = recall(Family::Srp, 10, 100) {
        assert!(r >= 0.9, "recall@10 {r}");
    }
}
