//! The charts of genie's query runs: time and queries/s against the number of queries (genie's
//! GPU c-PQ with the tiled and the global kernel, the GPU count table, the CPU backend, the
//! PyTorch peer), and search time against the number of objects at the paper's Table II sizes,
//! with the paper's own times.

use super::axis::Axis;
use super::bars::RUNS_DEVICE;
use super::csv_table::{CsvError, Table};
use super::format::{file_name, millions, plain, thousands};
use super::line::{LineChart, Series, PALETTE};
use anyhow::Result;
use plotters::prelude::SeriesLabelPosition;
use std::path::Path;

/// The paper's Table II: GENIE's time in seconds for 1,024 queries on SIFT_LARGE, by number of
/// objects (TITAN X, loaded 6 M objects at a time).
const PAPER_TABLE_II: [(f64, f64); 4] = [
    (6.0e6, 4.32),
    (12.0e6, 8.62),
    (24.0e6, 17.26),
    (36.0e6, 25.90),
];

/// One run of a batch: (queries, wall s, queries/s).
type QueryPoint = (f64, f64, f64);

/// Time and queries/s against the batch size: genie's methods and the PyTorch peer.
pub struct QueryRuns {
    device: String,
    workload: String,
    sources: String,
    /// (label, runs) per method.
    series: Vec<(String, Vec<QueryPoint>)>,
}

impl QueryRuns {
    /// Reads genie's runs (`genie`, one row per method and number of queries) and the PyTorch
    /// peer's (`peer`).
    pub fn read(genie: &Path, peer: &Path) -> Result<Self, CsvError> {
        let table = Table::read(genie)?;
        table.require(&["device", "backend", "method", "queries", "wall_s", "qps"])?;
        let first = table.first();
        let device = first.text("device")?.to_string();
        let workload = format!(
            "{} objects, {} dimensions x {} values, k = {}",
            thousands(first.positive("objects")?),
            first.text("dims")?,
            first.text("values")?,
            first.text("k")?,
        );
        let mut series: Vec<(String, Vec<QueryPoint>)> = Vec::new();
        for row in table.rows() {
            let label = method_label(row.text("backend")?, row.text("method")?);
            let point = (
                row.positive("queries")?,
                row.positive("wall_s")?,
                row.positive("qps")?,
            );
            match series.iter_mut().find(|(l, _)| *l == label) {
                Some((_, points)) => points.push(point),
                None => series.push((label, vec![point])),
            }
        }

        let table = Table::read(peer)?;
        table.require(&["torch", "queries", "wall_s", "qps"])?;
        let label = format!(
            "PyTorch SpMM + topk (torch {})",
            table.first().text("torch")?
        );
        let points = table
            .rows()
            .map(|row| {
                Ok((
                    row.positive("queries")?,
                    row.positive("wall_s")?,
                    row.positive("qps")?,
                ))
            })
            .collect::<Result<Vec<_>, CsvError>>()?;
        series.push((label, points));
        Ok(Self {
            device,
            workload,
            sources: format!("{}, {}", file_name(genie), file_name(peer)),
            series,
        })
    }

    fn lines(&self, y: impl Fn(&QueryPoint) -> f64) -> Vec<Series> {
        self.series
            .iter()
            .zip(PALETTE.iter().cycle())
            .map(|((label, points), color)| Series {
                label: label.clone(),
                points: points.iter().map(|p| (p.0, y(p))).collect(),
                color: *color,
                dashed: false,
            })
            .collect()
    }

    /// Wall time against the number of queries.
    pub fn time_chart(&self) -> Result<LineChart> {
        let series = self.lines(|p| p.1);
        Ok(LineChart {
            title: format!("Time against the number of queries, {}", self.device),
            x: Axis::log_at_data("queries in the batch", &series, |p| p.0, thousands)?,
            y: Axis::log("wall time for all the queries (s)", &series, |p| p.1, plain)?,
            footer: format!("{}; sources: {}", self.workload, self.sources),
            marks: Vec::new(),
            legend: SeriesLabelPosition::UpperLeft,
            series,
        })
    }

    /// Queries/s against the number of queries.
    pub fn rate_chart(&self) -> Result<LineChart> {
        let series = self.lines(|p| p.2);
        Ok(LineChart {
            title: format!("Queries per second against the batch size, {}", self.device),
            x: Axis::log_at_data("queries in the batch", &series, |p| p.0, thousands)?,
            y: Axis::log("queries per second", &series, |p| p.1, thousands)?,
            footer: format!("{}; sources: {}", self.workload, self.sources),
            marks: Vec::new(),
            legend: SeriesLabelPosition::LowerRight,
            series,
        })
    }
}

/// A legend label for a row of genie-bench's query runs (the CPU backend has one method).
fn method_label(backend: &str, method: &str) -> String {
    let method = match method {
        "c-PQ" => "c-PQ, tiled kernel",
        "c-PQ global" => "c-PQ, global kernel",
        "count-table" => "count table",
        other => other,
    };
    match backend.strip_prefix("cpu") {
        Some(threads) => format!("genie CPU backend{threads}"),
        None => format!("genie GPU {method}"),
    }
}

/// Search time against the number of objects (the paper's Table II sizes).
pub struct ScaleRuns {
    tiled: Vec<(f64, f64)>,
    global: Vec<(f64, f64)>,
    queries: f64,
    workload: String,
    sources: String,
}

impl ScaleRuns {
    /// Reads the runs of the tiled kernel (`tiled`) and of the global kernel (`global`).
    pub fn read(tiled: &Path, global: &Path) -> Result<Self, CsvError> {
        let read = |path: &Path| -> Result<(Table, Vec<(f64, f64)>), CsvError> {
            let table = Table::read(path)?;
            table.require(&["objects", "queries", "search_s"])?;
            let points = table
                .rows()
                .map(|row| Ok((row.positive("objects")?, row.positive("search_s")?)))
                .collect::<Result<Vec<_>, CsvError>>()?;
            Ok((table, points))
        };
        let (table, tiled_points) = read(tiled)?;
        let (_, global_points) = read(global)?;
        let first = table.first();
        let queries = first.positive("queries")?;
        let workload = format!(
            "{} keywords per object x {} values, {} queries, k = {}, index resident",
            first.text("dims")?,
            first.text("values")?,
            thousands(queries),
            first.text("k")?,
        );
        Ok(Self {
            tiled: tiled_points,
            global: global_points,
            queries,
            workload,
            sources: format!("{}, {}", file_name(tiled), file_name(global)),
        })
    }

    /// Search time against the number of objects, beside the paper's.
    pub fn chart(&self) -> Result<LineChart> {
        let series = vec![
            Series {
                label: "genie GPU c-PQ, tiled kernel".into(),
                points: self.tiled.clone(),
                color: PALETTE[0],
                dashed: false,
            },
            Series {
                label: "genie GPU c-PQ, global kernel".into(),
                points: self.global.clone(),
                color: PALETTE[1],
                dashed: false,
            },
            Series {
                label: "the paper's GENIE (TITAN X, 6 M objects per loading; Table II)".into(),
                points: PAPER_TABLE_II.to_vec(),
                color: PALETTE[6],
                dashed: true,
            },
        ];
        Ok(LineChart {
            title: format!(
                "Search time for {} queries against the number of objects, {RUNS_DEVICE}",
                thousands(self.queries)
            ),
            x: Axis::log_at_data("objects", &series, |p| p.0, millions)?,
            y: Axis::log("search time (s)", &series, |p| p.1, plain)?,
            footer: format!("SIFT-like: {}; sources: {}", self.workload, self.sources),
            marks: Vec::new(),
            legend: SeriesLabelPosition::UpperLeft,
            series,
        })
    }
}
