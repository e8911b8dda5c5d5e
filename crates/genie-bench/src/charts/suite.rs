//! The charts of the suite of keyword-level workloads: how much faster than the paper each
//! workload runs, the suite's queries/s against the number of queries for each workload, and
//! genie's queries/s on those workloads against the PyTorch peer's (cuSPARSE SpMM + torch.topk).

use super::axis::Axis;
use super::bars::{BarChart, Pair, PairChart, RUNS_DEVICE};
use super::csv_table::{CsvError, Table};
use super::format::{file_name, plain, thousands};
use super::line::{LineChart, Series, PALETTE};
use anyhow::{bail, Result};
use plotters::prelude::SeriesLabelPosition;
use std::path::Path;

/// The number of queries of the suite's main run (its CSV has no column for it).
const SUITE_QUERIES: f64 = 1024.0;

/// The suite's target: end-to-end 30x faster than the paper's query time.
const SUITE_TARGET: f64 = 30.0;

/// The suite: how much faster than the paper each workload runs, and its queries/s.
pub struct Suite {
    /// (workload, speed-up over the paper, queries/s) per row.
    rows: Vec<(String, f64, f64)>,
    sources: String,
}

impl Suite {
    /// Reads the suite's CSV; only the workload, speed-up and queries/s must be filled in (the
    /// DBLP-like row leaves the per-posting columns and the baselines empty).
    pub fn read(path: &Path) -> Result<Self, CsvError> {
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

    /// Each workload's speed-up over the paper, against the target.
    pub fn chart(&self) -> BarChart {
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
pub struct SuiteCurve {
    /// (workload, (queries, queries/s) sorted by queries) per workload.
    series: Vec<(String, Vec<(f64, f64)>)>,
    /// Points run in more than one batch: (workload, queries, batches).
    split: Vec<(String, f64, f64)>,
    sources: String,
}

impl SuiteCurve {
    /// Reads the curve run (`curve`); `suite` gives each workload's point at the suite's number
    /// of queries where the curve has none.
    pub fn read(curve: &Path, suite: &Suite) -> Result<Self> {
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

    /// Queries/s against the number of queries, a line per workload.
    pub fn chart(&self) -> Result<LineChart> {
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
pub struct SuitePeer {
    device: String,
    torch: String,
    k: String,
    /// Whether the peer's top-k counts equal genie's on every query (`None`: not recorded).
    all_equal: Option<bool>,
    groups: Vec<Pair>,
    sources: String,
}

impl SuitePeer {
    /// Reads genie's suite (`genie`) and the peer's run on its workloads (`peer`), paired by
    /// workload; the peer must have run the suite's number of queries.
    pub fn read(genie: &Path, peer: &Path) -> Result<Self> {
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

    /// genie's queries/s beside the peer's, per workload.
    pub fn chart(&self) -> Result<PairChart> {
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
    use crate::charts::tests::{CURVE, PEER_SUITE, SUITE};

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
    fn memory_per_query() {
        assert_eq!(mb_per_query(36.036), "36.0 MB/q");
    }
}
