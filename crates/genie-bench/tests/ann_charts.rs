//! The recall/throughput charts drawn from a small CSV of the vector-search benchmark's schema.
#![allow(clippy::unwrap_used)]

use genie_bench::charts::ann::{ann_charts, frontier, read_points};
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ann-small.csv")
}

#[test]
fn one_chart_per_data_set() {
    let out = tempfile::tempdir().unwrap();
    let written = ann_charts(&[fixture()], &out.path().join("charts")).unwrap();
    let names: Vec<String> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["ann-gauss-20k.png", "ann-fashion-mnist.png"]);
    for path in &written {
        let bytes = std::fs::read(path).unwrap();
        assert!(
            bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
            "{} is not a PNG",
            path.display()
        );
        // an empty white canvas of the same size compresses to a few kB
        assert!(
            bytes.len() > 20_000,
            "{} is only {} bytes",
            path.display(),
            bytes.len()
        );
    }
}

#[test]
fn the_fixture_frontiers() {
    let points = read_points(&[fixture()]).unwrap();
    assert_eq!(points.len(), 15);
    let line = |data: &str, system: &str| {
        let of: Vec<(f64, f64)> = points
            .iter()
            .filter(|p| p.data == data && p.system == system)
            .map(|p| (p.recall, p.qps))
            .collect();
        frontier(&of)
    };
    assert_eq!(
        line("gauss-20k", "faiss-ivfpq"),
        [(0.2512, 63058.1), (0.6884, 37782.2), (0.9976, 29881.9)]
    );
    assert_eq!(
        line("gauss-20k", "genie-e2lsh gpu"),
        [(0.72, 150000.0), (0.97, 95000.0)]
    );
    assert_eq!(line("fashion-mnist", "faiss-flat"), [(1.0, 410.5)]);
}

#[test]
fn a_missing_file_and_a_missing_column_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.csv");
    let message = format!(
        "{:#}",
        ann_charts(std::slice::from_ref(&missing), dir.path()).unwrap_err()
    );
    assert!(
        message.contains(&missing.display().to_string()),
        "{message}"
    );

    let short = dir.path().join("short.csv");
    std::fs::write(&short, "data,system,recall,qps\nd,s,0.9,100\n").unwrap();
    let message = format!(
        "{:#}",
        ann_charts(std::slice::from_ref(&short), dir.path()).unwrap_err()
    );
    assert!(
        message.contains(&format!(
            "{}: the header has no column `params`",
            short.display()
        )),
        "{message}"
    );
}

#[test]
fn genie_rows_are_drawn_with_the_peers_rows() {
    let genie = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ann-genie.csv");
    let points = read_points(&[fixture(), genie.clone()]).unwrap();
    assert_eq!(points.len(), 15 + 9);
    assert!(points
        .iter()
        .any(|p| p.system == "genie-codebook" && p.device == "cpu 16 threads"));
    let out = tempfile::tempdir().unwrap();
    let written = ann_charts(&[fixture(), genie], out.path()).unwrap();
    let names: Vec<String> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "ann-gauss-20k.png",
            "ann-fashion-mnist.png",
            "ann-clusters-1m.png"
        ]
    );
}
