//! genie-charts: PNG charts of the benchmark results kept under `bench/runs/`, for
//! `docs/BENCHMARKS.md`.
//!
//! Charts: time and queries/s against the number of queries (genie's GPU c-PQ with the
//! tiled and the global kernel, the GPU count table, the CPU backend, the PyTorch peer); search
//! time against the number of objects at the paper's Table II sizes, with the paper's own times;
//! how much faster than the paper each workload of the suite runs; the suite's queries/s against
//! the number of queries for each keyword-level workload; and genie's queries/s on those
//! workloads against the PyTorch peer's (cuSPARSE SpMM + torch.topk). With `--ann CSV`: the
//! vector-search benchmark's recall/throughput chart of each data set in the CSVs instead
//! (`genie_bench::charts_ann`).
//!
//! Text is drawn with an embedded font (Noto Sans, from the `ttf-noto-sans` crate), so no system
//! font library is needed. Regenerate with `cargo run --release --bin genie-charts`.

use anyhow::{bail, Context, Result};
use clap::Parser;
use genie_bench::chart_kit::{
    file_name, plain, register_embedded_font, thousands, Axis, CsvError, LineChart, Series, Table,
    PALETTE,
};
use genie_bench::charts::{
    PEER_QUERIES_CSV, PEER_SUITE_CSV, PEER_SUITE_GENIE_CSV, QUERIES_CSV, RUNS_DEVICE,
    SCALE_GLOBAL_CSV, SCALE_TILED_CSV, SUITE_CSV, SUITE_CURVE_CSV,
};
use genie_bench::charts_ann::ann_charts;
use genie_bench::charts_plot::{BarChart, Chart, Pair, PairChart};
use genie_bench::charts_queries::{QueryRuns, ScaleRuns};
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// The number of queries of the suite's main run (its CSV has no column for it).
const SUITE_QUERIES: f64 = 1024.0;

/// The suite's target: end-to-end 30x faster than the paper's query time.
const SUITE_TARGET: f64 = 30.0;

#[derive(Parser, Debug)]
#[command(about = "Draw PNG charts of the benchmark results under bench/runs/")]
struct Args {
    /// Folder of the benchmark CSVs.
    #[arg(long, default_value = "bench/runs")]
    runs: PathBuf,
    /// Folder the PNGs are written to (created if missing).
    #[arg(long, default_value = "docs/charts")]
    out: PathBuf,
    /// A CSV of the vector-search benchmark (data,system,params,recall,qps,seconds,queries,device);
    /// repeatable. Draws only `ann-<data>.png` for each data set in them.
    #[arg(long, value_name = "CSV")]
    ann: Vec<PathBuf>,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let written = if args.ann.is_empty() {
        render_all(&args.runs, &args.out)?
    } else {
        ann_charts(&args.ann, &args.out)?
    };
    for path in written {
        println!("{}", path.display());
    }
    Ok(())
}

/// Draws every chart from the CSVs under `runs` into `out`; returns the files written.
fn render_all(runs: &Path, out: &Path) -> Result<Vec<PathBuf>> {
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

// ---------------------------------------------------------------------------------------------
// The runs

/// The suite: how much faster than the paper each workload runs, and its queries/s.
struct Suite {
    /// (workload, speed-up over the paper, queries/s) per row.
    rows: Vec<(String, f64, f64)>,
    sources: String,
}

impl Suite {
    /// Reads the suite's CSV; only the workload, speed-up and queries/s must be filled in (the
    /// DBLP-like row leaves the per-posting columns and the baselines empty).
    fn read(path: &Path) -> Result<Self, CsvError> {
        let table = Table::read(path)?;
        table.require(&["workload", "speedup", "qps"])?;
        let rows = table
            .rows()
            .map(|row| {
                Ok((
                    row.text("workload")?.to_string(),
                    row.positive("speedup")?,
                    row.positive("qps")?,
                ))
            })
            .collect::<Result<Vec<_>, CsvError>>()?;
        Ok(Self {
            rows,
            sources: file_name(path),
        })
    }

    /// The queries/s of `workload` at the suite's number of queries.
    fn qps(&self, workload: &str) -> Option<f64> {
        self.rows
            .iter()
            .find(|(name, _, _)| name == workload)
            .map(|r| r.2)
    }

    fn chart(&self) -> BarChart {
        BarChart {
            title: format!("Speed-up over the paper's query times (Table I), {RUNS_DEVICE}"),
            y_label: "paper's query time / genie's wall time (x)".into(),
            bars: self
                .rows
                .iter()
                .map(|(name, speedup, _)| (name.clone(), *speedup))
                .collect(),
            bar_label: format!(
                "genie GPU c-PQ, {} queries end to end",
                thousands(SUITE_QUERIES)
            ),
            target: (SUITE_TARGET, format!("target: {SUITE_TARGET}x")),
            footer: format!(
                "the paper's Table I query time (transfer + match + select) for {} queries; \
                 source: {}",
                thousands(SUITE_QUERIES),
                self.sources
            ),
        }
    }
}

/// Queries/s against the number of queries for each keyword-level workload of the suite: the
/// curve run, with the suite's main run as the point at its number of queries.
struct SuiteCurve {
    /// (workload, (queries, queries/s) sorted by queries) per workload.
    series: Vec<(String, Vec<(f64, f64)>)>,
    /// Points run in more than one batch: (workload, queries, batches).
    split: Vec<(String, f64, f64)>,
    sources: String,
}

impl SuiteCurve {
    fn read(curve: &Path, suite: &Suite) -> Result<Self> {
        let table = Table::read(curve)?;
        table.require(&["workload", "queries", "qps"])?;
        let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        let mut split = Vec::new();
        for row in table.rows() {
            let workload = row.text("workload")?;
            if workload.is_empty() {
                return Err(row.bad("workload", "a workload name", "").into());
            }
            let point = (row.positive("queries")?, row.positive("qps")?);
            if table.has("batches") {
                let batches = row.positive("batches")?;
                if batches > 1.0 {
                    split.push((workload.to_string(), point.0, batches));
                }
            }
            match series.iter_mut().find(|(w, _)| w == workload) {
                Some((_, points)) => points.push(point),
                None => series.push((workload.to_string(), vec![point])),
            }
        }
        for (workload, points) in &mut series {
            if !points.iter().any(|p| p.0 == SUITE_QUERIES) {
                let Some(qps) = suite.qps(workload) else {
                    bail!(
                        "{}: no row for the workload `{workload}` of {} (its {}-query point)",
                        suite.sources,
                        curve.display(),
                        thousands(SUITE_QUERIES)
                    );
                };
                points.push((SUITE_QUERIES, qps));
            }
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        Ok(Self {
            series,
            split,
            sources: format!("{}, {}", file_name(curve), suite.sources),
        })
    }

    fn chart(&self) -> Result<LineChart> {
        let series: Vec<Series> = self
            .series
            .iter()
            .zip(PALETTE.iter().cycle())
            .map(|((label, points), color)| Series {
                label: label.clone(),
                points: points.clone(),
                color: *color,
                dashed: false,
            })
            .collect();
        let split = if self.split.is_empty() {
            String::new()
        } else {
            let points: Vec<String> = self
                .split
                .iter()
                .map(|(w, q, b)| format!("{w} at {} in {} batches", thousands(*q), plain(*b)))
                .collect();
            format!("; {}", points.join(", "))
        };
        Ok(LineChart {
            title: format!(
                "Suite: queries per second against the number of queries, {RUNS_DEVICE}"
            ),
            x: Axis::log_at_data("queries", &series, |p| p.0, thousands)?,
            y: Axis::log("queries per second", &series, |p| p.1, thousands)?,
            footer: format!(
                "genie GPU c-PQ on the keyword-level workloads; the {}-query points are the \
                 suite's main run{split}\nsources: {}",
                thousands(SUITE_QUERIES),
                self.sources
            ),
            marks: Vec::new(),
            legend: SeriesLabelPosition::LowerRight,
            series,
        })
    }
}

/// genie's GPU c-PQ against the PyTorch peer on the suite's keyword-level workloads.
struct SuitePeer {
    device: String,
    torch: String,
    k: String,
    /// Whether the peer's top-k counts equal genie's on every query (`None`: not recorded).
    all_equal: Option<bool>,
    groups: Vec<Pair>,
    sources: String,
}

impl SuitePeer {
    fn read(genie: &Path, peer: &Path) -> Result<Self> {
        let table = Table::read(genie)?;
        table.require(&["workload", "qps", "mb_per_query"])?;
        let mut ours = Vec::new();
        for row in table.rows() {
            ours.push((
                row.text("workload")?.to_string(),
                row.positive("qps")?,
                row.optional_positive("mb_per_query")?,
            ));
        }

        let table = Table::read(peer)?;
        table.require(&[
            "device",
            "torch",
            "workload",
            "k",
            "queries",
            "qps",
            "mb_per_query",
        ])?;
        let first = table.first();
        let mut all_equal = table.has("counts_equal").then_some(true);
        let mut groups = Vec::new();
        for row in table.rows() {
            let workload = row.text("workload")?;
            let queries = row.positive("queries")?;
            if queries != SUITE_QUERIES {
                return Err(row
                    .bad(
                        "queries",
                        "1024, the suite's number of queries",
                        row.text("queries")?,
                    )
                    .into());
            }
            if table.has("counts_equal") && row.number("counts_equal")? != queries {
                all_equal = Some(false);
            }
            let Some((_, qps, mb)) = ours.iter().find(|(w, _, _)| w == workload) else {
                bail!(
                    "{}: no row for the workload `{workload}` of {}:{}",
                    genie.display(),
                    peer.display(),
                    row.line
                );
            };
            groups.push(Pair {
                name: workload.to_string(),
                values: [*qps, row.positive("qps")?],
                notes: [
                    mb.map(mb_per_query),
                    row.optional_positive("mb_per_query")?.map(mb_per_query),
                ],
            });
        }
        Ok(Self {
            device: first.text("device")?.to_string(),
            torch: first.text("torch")?.to_string(),
            k: first.text("k")?.to_string(),
            all_equal,
            groups,
            sources: format!("{}, {}", file_name(genie), file_name(peer)),
        })
    }

    fn chart(&self) -> Result<PairChart> {
        let (min, max) = self
            .groups
            .iter()
            .flat_map(|g| g.values)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
        let equal = match self.all_equal {
            Some(true) => "; the peer's top-k counts equal genie's on every query",
            _ => "",
        };
        Ok(PairChart {
            title: format!(
                "Suite: genie against a PyTorch peer, {} queries, {}",
                thousands(SUITE_QUERIES),
                self.device
            ),
            // headroom above the tallest bar for its value and the ratio
            y: Axis::log_span("queries per second", min, max, 2.2, thousands)?,
            groups: self.groups.clone(),
            labels: [
                "genie GPU c-PQ".into(),
                format!("PyTorch: cuSPARSE SpMM + torch.topk (torch {})", self.torch),
            ],
            footer: format!(
                "the same index and {} queries for both, k = {}; MB/q: device memory per query{equal}\n\
                 sources: {}",
                thousands(SUITE_QUERIES),
                self.k,
                self.sources
            ),
        })
    }
}

/// `4.032` -> `4.0 MB/q`.
fn mb_per_query(mb: f64) -> String {
    format!("{mb:.1} MB/q")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

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
    const SUITE: &str = "\
workload,objects,build_s,wall_s,qps,gpostings_per_s,mb_per_query,paper_query_s,speedup,count_table_qps,cpu_qps,prepare_s,host_plan_s
A-like,3500000,7.1,0.0118,86919.7,8.8,4.032,2.619,222.3,30552.2,5610.7,0.00183,0.00067
B-like,4500000,5.6,0.0421,24316.9,387.0,5.123,7.061,167.7,4510.1,81.3,0.00102,0.00035
C-like,5000000,49.4,0.0277,36933.9,,,0.960,34.6,,,,0.00041
";
    const CURVE: &str = "\
workload,queries,batches,wall_s,qps
A-like,64,1,0.00146,43757.1
A-like,4096,1,0.04734,86522.9
B-like,64,1,0.00395,16204.4
B-like,16384,3,0.54101,30284.3
";
    const PEER_SUITE: &str = "\
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
    fn the_curve_takes_the_suite_point_and_sorts() {
        let suite = Suite {
            rows: vec![
                ("A-like".into(), 222.3, 86919.7),
                ("B-like".into(), 167.7, 24316.9),
            ],
            sources: "suite.csv".into(),
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("curve.csv");
        std::fs::write(&path, CURVE).unwrap();
        let curve = SuiteCurve::read(&path, &suite).unwrap();
        assert_eq!(curve.series.len(), 2);
        assert_eq!(curve.series[0].0, "A-like");
        assert_eq!(
            curve.series[0].1,
            [(64.0, 43757.1), (1024.0, 86919.7), (4096.0, 86522.9)]
        );
        assert_eq!(curve.split, [("B-like".to_string(), 16384.0, 3.0)]);
    }

    #[test]
    fn the_peer_pairs_by_workload() {
        let dir = tempfile::tempdir().unwrap();
        let (genie, peer) = (dir.path().join("g.csv"), dir.path().join("p.csv"));
        std::fs::write(&genie, SUITE).unwrap();
        std::fs::write(&peer, PEER_SUITE).unwrap();
        let pairs = SuitePeer::read(&genie, &peer).unwrap();
        assert_eq!(pairs.device, "GPU X");
        assert_eq!(pairs.all_equal, Some(true));
        assert_eq!(pairs.groups.len(), 2);
        assert_eq!(pairs.groups[1].name, "B-like");
        assert_eq!(pairs.groups[1].values, [24316.9, 930.4]);
        assert_eq!(pairs.groups[1].notes, [Some("5.1 MB/q".to_string()), None]);
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

    #[test]
    fn number_formats() {
        assert_eq!(mb_per_query(36.036), "36.0 MB/q");
    }
}
