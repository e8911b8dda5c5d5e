//! The charts of the benchmark runs kept under `bench/runs/`, for `docs/BENCHMARKS.md`, drawn by
//! [`render_all`]: time and queries/s against the number of queries, and search time against the
//! number of objects ([`queries`]); how much faster than the paper each workload of the suite
//! runs, the suite's queries/s against the number of queries, and genie's queries/s on the
//! suite's workloads against the PyTorch peer's ([`suite`]). Here too: the runs they are drawn
//! from (file names in the runs folder, `genie-charts --runs`) and the device they ran on. The
//! vector-search benchmark's recall/throughput charts are [`ann`].
//!
//! What the charts share: the benchmark CSVs read by column name with errors that name the file
//! and line ([`csv_table`]), axes with chosen ticks ([`axis`]), the line chart ([`line`]) and the
//! bar charts ([`bars`]), a canvas whose text is drawn with an embedded font (Noto Sans, from the
//! `ttf-noto-sans` crate, so no system font library is needed; [`canvas`]) and number formats
//! ([`format`]).

pub mod ann;
pub mod axis;
pub mod bars;
pub mod canvas;
pub mod csv_table;
pub mod format;
pub mod line;
pub mod queries;
pub mod series;
pub mod suite;

use anyhow::{Context, Result};
use bars::Chart;
use canvas::register_embedded_font;
use queries::{QueryRuns, ScaleRuns};
use std::path::{Path, PathBuf};
use suite::{Suite, SuiteCurve, SuitePeer};

/// genie's query runs: time and queries/s of each method at several numbers of queries.
pub const QUERIES_CSV: &str = "2026-11-22-h200-ed40c6b-queries.csv";
/// The PyTorch peer at the numbers of queries of [`QUERIES_CSV`].
pub const PEER_QUERIES_CSV: &str = "2026-11-22-h200-ed40c6b-torch-peer-queries.csv";
/// Search time against the number of objects, the tiled kernel.
pub const SCALE_TILED_CSV: &str = "2026-11-22-h200-f2f64b1-scale.csv";
/// Search time against the number of objects, the global kernel.
pub const SCALE_GLOBAL_CSV: &str = "2026-11-22-h200x2-e40308d-scale.csv";
/// The suite: each keyword-level workload's speed-up over the paper and queries/s.
pub const SUITE_CSV: &str = "2026-11-22-h200-6fe2b67-suite.csv";
/// The suite's GPU c-PQ at other numbers of queries (the same run as [`SUITE_CSV`]).
pub const SUITE_CURVE_CSV: &str = "2026-11-22-h200-6fe2b67-suite-curve.csv";
/// genie's suite and the PyTorch peer on the suite's workloads, measured in one device run.
pub const PEER_SUITE_GENIE_CSV: &str = "2026-11-22-h200-0849bf5-suite.csv";
/// The PyTorch peer's side of [`PEER_SUITE_GENIE_CSV`].
pub const PEER_SUITE_CSV: &str = "2026-11-22-h200-0849bf5-torch-peer-suite.csv";

/// Draws every chart from the CSVs under `runs` into `out`; returns the files written.
pub fn render_all(runs: &Path, out: &Path) -> Result<Vec<PathBuf>> {
    register_embedded_font()?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let queries = QueryRuns::read(&runs.join(QUERIES_CSV), &runs.join(PEER_QUERIES_CSV))?;
    let scale = ScaleRuns::read(&runs.join(SCALE_TILED_CSV), &runs.join(SCALE_GLOBAL_CSV))?;
    let suite = Suite::read(&runs.join(SUITE_CSV))?;
    let curve = SuiteCurve::read(&runs.join(SUITE_CURVE_CSV), &suite)?;
    let peer = SuitePeer::read(&runs.join(PEER_SUITE_GENIE_CSV), &runs.join(PEER_SUITE_CSV))?;

    let charts = [
        ("queries-time.png", Chart::Line(queries.time_chart()?)),
        ("queries-rate.png", Chart::Line(queries.rate_chart()?)),
        ("scale-time.png", Chart::Line(scale.chart()?)),
        ("suite-speedup.png", Chart::Bar(suite.chart())),
        ("suite-queries.png", Chart::Line(curve.chart()?)),
        ("suite-peer.png", Chart::Pair(peer.chart()?)),
    ];
    let mut written = Vec::new();
    for (name, chart) in charts {
        let path = out.join(name);
        chart.draw(&path)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
pub(crate) mod tests {
    #![allow(clippy::unwrap_used)]

    use super::format::file_name;
    use super::*;

    const QUERIES: &str = "\
device,backend,method,queries,batches,wall_s,qps,objects,dims,values,k
GPU X,GPU X,c-PQ,64,1,0.007,8753.3,1000,8,4,10
GPU X,GPU X,c-PQ,256,1,0.023,10794.1,1000,8,4,10
GPU X,GPU X,count-table,64,1,0.065,973.2,1000,8,4,10
GPU X,GPU X,count-table,256,1,0.158,1618.1,1000,8,4,10
GPU X,cpu (2 threads),c-PQ,64,1,0.98,65.3,1000,8,4,10
";
    const PEER: &str = "\
device,torch,queries,wall_s,qps
GPU X,2.0,64,0.15,423.3
GPU X,2.0,256,0.48,528.8
";
    const SCALE: &str = "\
objects,dims,values,queries,k,search_s
6000000,237,67,1024,100,0.063
12000000,237,67,1024,100,0.105
";
    /// As the suite's CSV: the last row leaves the optional columns empty.
    pub(crate) const SUITE: &str = "\
workload,objects,build_s,wall_s,qps,gpostings_per_s,mb_per_query,paper_query_s,speedup,count_table_qps,cpu_qps,prepare_s,host_plan_s
A-like,3500000,7.1,0.0118,86919.7,8.8,4.032,2.619,222.3,30552.2,5610.7,0.00183,0.00067
B-like,4500000,5.6,0.0421,24316.9,387.0,5.123,7.061,167.7,4510.1,81.3,0.00102,0.00035
C-like,5000000,49.4,0.0277,36933.9,,,0.960,34.6,,,,0.00041
";
    pub(crate) const CURVE: &str = "\
workload,queries,batches,wall_s,qps
A-like,64,1,0.00146,43757.1
A-like,4096,1,0.04734,86522.9
B-like,64,1,0.00395,16204.4
B-like,16384,3,0.54101,30284.3
";
    pub(crate) const PEER_SUITE: &str = "\
device,torch,workload,objects,k,queries,batch,qps,mb_per_query,counts_equal
GPU X,2.0,A-like,3500000,100,1024,1024,773.0,36.036,1024
GPU X,2.0,B-like,4500000,100,1024,1024,930.4,,1024
";

    fn runs_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [
            (QUERIES_CSV, QUERIES),
            (PEER_QUERIES_CSV, PEER),
            (SCALE_TILED_CSV, SCALE),
            (SCALE_GLOBAL_CSV, SCALE),
            (SUITE_CSV, SUITE),
            (SUITE_CURVE_CSV, CURVE),
            (PEER_SUITE_GENIE_CSV, SUITE),
            (PEER_SUITE_CSV, PEER_SUITE),
        ] {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    fn assert_png(path: &Path) {
        let bytes = std::fs::read(path).unwrap();
        assert!(
            bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
            "{} is not a PNG",
            path.display()
        );
        assert!(
            bytes.len() > 10_000,
            "{} is only {} bytes",
            path.display(),
            bytes.len()
        );
    }

    #[test]
    fn draws_every_chart_from_small_runs() {
        let runs = runs_with(&[]);
        let out = runs.path().join("charts");
        let written = render_all(runs.path(), &out).unwrap();
        let names: Vec<String> = written.iter().map(|p| file_name(p)).collect();
        assert_eq!(
            names,
            [
                "queries-time.png",
                "queries-rate.png",
                "scale-time.png",
                "suite-speedup.png",
                "suite-queries.png",
                "suite-peer.png"
            ]
        );
        for path in &written {
            assert_eq!(path.parent(), Some(out.as_path()));
            assert_png(path);
        }
    }

    /// The error of drawing the charts from the small runs with `name` replaced by `text`.
    fn error_with(name: &str, text: &str) -> (String, PathBuf, tempfile::TempDir) {
        let runs = runs_with(&[(name, text)]);
        let err = render_all(runs.path(), &runs.path().join("charts")).unwrap_err();
        (format!("{err:#}"), runs.path().join(name), runs)
    }

    #[test]
    fn a_bad_curve_value_names_file_line_and_column() {
        let (message, file, _runs) = error_with(SUITE_CURVE_CSV, &CURVE.replace("86522.9", "x"));
        assert!(
            message.contains(&format!("{}:3: column `qps`", file.display())),
            "{message}"
        );
        assert!(message.contains("`x`"), "{message}");
    }

    #[test]
    fn a_short_curve_row_names_file_and_line() {
        let bad = CURVE.replace("B-like,64,1,0.00395,16204.4", "B-like,64");
        let (message, file, _runs) = error_with(SUITE_CURVE_CSV, &bad);
        assert!(
            message.contains(&format!(
                "{}:4: row has 2 fields, the header has 5",
                file.display()
            )),
            "{message}"
        );
    }

    #[test]
    fn a_curve_workload_missing_from_the_suite_is_named() {
        let (message, _, _runs) = error_with(SUITE_CURVE_CSV, &CURVE.replace("B-like", "Z-like"));
        assert!(message.contains(SUITE_CSV), "{message}");
        assert!(message.contains("`Z-like`"), "{message}");
    }

    #[test]
    fn a_bad_peer_value_names_file_line_and_column() {
        let (message, file, _runs) = error_with(PEER_SUITE_CSV, &PEER_SUITE.replace("930.4", ""));
        assert!(
            message.contains(&format!("{}:3: column `qps`", file.display())),
            "{message}"
        );
    }

    #[test]
    fn a_short_peer_row_names_file_and_line() {
        let bad = PEER_SUITE.replace(",930.4,,1024", "");
        let (message, file, _runs) = error_with(PEER_SUITE_CSV, &bad);
        assert!(
            message.contains(&format!(
                "{}:3: row has 7 fields, the header has 10",
                file.display()
            )),
            "{message}"
        );
    }

    #[test]
    fn a_peer_at_another_number_of_queries_is_refused() {
        let bad = PEER_SUITE.replace("100,1024,1024,773.0", "100,512,512,773.0");
        let (message, file, _runs) = error_with(PEER_SUITE_CSV, &bad);
        assert!(
            message.contains(&format!("{}:2: column `queries`", file.display())),
            "{message}"
        );
    }

    #[test]
    fn a_peer_workload_missing_from_genie_is_named() {
        let (message, _, _runs) =
            error_with(PEER_SUITE_CSV, &PEER_SUITE.replace("B-like", "Z-like"));
        assert!(message.contains(PEER_SUITE_GENIE_CSV), "{message}");
        assert!(message.contains("`Z-like`"), "{message}");
        assert!(
            message.contains(&format!("{PEER_SUITE_CSV}:3")),
            "{message}"
        );
    }

    #[test]
    fn a_filled_optional_cell_must_be_a_number() {
        let bad = SUITE.replace("8.8,4.032", "8.8,lots");
        let (message, file, _runs) = error_with(PEER_SUITE_GENIE_CSV, &bad);
        assert!(
            message.contains(&format!("{}:2: column `mb_per_query`", file.display())),
            "{message}"
        );
    }

    #[test]
    fn draws_the_committed_runs() {
        let runs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/runs");
        let out = tempfile::tempdir().unwrap();
        for path in render_all(&runs, out.path()).unwrap() {
            assert_png(&path);
        }
    }

    #[test]
    fn a_bad_number_names_file_line_and_column() {
        let bad = QUERIES.replace("0.023", "fast");
        let runs = runs_with(&[(QUERIES_CSV, &bad)]);
        let err = render_all(runs.path(), &runs.path().join("charts")).unwrap_err();
        let message = format!("{err:#}");
        let file = runs.path().join(QUERIES_CSV);
        assert!(
            message.contains(&format!("{}:3:", file.display())),
            "{message}"
        );
        assert!(message.contains("column `wall_s`"), "{message}");
        assert!(message.contains("`fast`"), "{message}");
    }

    #[test]
    fn a_short_row_names_file_and_line() {
        let bad = SCALE.replace("12000000,237,67,1024,100,0.105", "12000000,237");
        let runs = runs_with(&[(SCALE_TILED_CSV, &bad)]);
        let err = render_all(runs.path(), &runs.path().join("charts")).unwrap_err();
        let message = format!("{err:#}");
        let file = runs.path().join(SCALE_TILED_CSV);
        assert!(
            message.contains(&format!(
                "{}:3: row has 2 fields, the header has 6",
                file.display()
            )),
            "{message}"
        );
    }

    #[test]
    fn a_missing_column_is_named() {
        let bad = SUITE.replace("speedup", "faster");
        let runs = runs_with(&[(SUITE_CSV, &bad)]);
        let err = render_all(runs.path(), &runs.path().join("charts")).unwrap_err();
        let message = format!("{err:#}");
        assert!(message.contains(SUITE_CSV), "{message}");
        assert!(
            message.contains("the header has no column `speedup`"),
            "{message}"
        );
    }

    #[test]
    fn a_zero_time_is_refused() {
        let bad = PEER.replace("0.48", "0");
        let runs = runs_with(&[(PEER_QUERIES_CSV, &bad)]);
        let err = render_all(runs.path(), &runs.path().join("charts")).unwrap_err();
        let message = format!("{err:#}");
        assert!(message.contains(":3: column `wall_s`"), "{message}");
        assert!(message.contains("greater than 0"), "{message}");
    }

    #[test]
    fn a_missing_file_is_named() {
        let runs = tempfile::tempdir().unwrap();
        let err = render_all(runs.path(), &runs.path().join("charts")).unwrap_err();
        assert!(format!("{err:#}").contains(QUERIES_CSV), "{err:#}");
    }
}
