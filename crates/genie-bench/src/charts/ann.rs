//! The vector-search benchmark's recall/throughput charts, as ann-benchmarks draws them: recall
//! across (linear), queries/s up (logarithmic), one line per system and device through its Pareto
//! frontier, one chart per data set, with a dashed line at the target recall. A system measured
//! on two devices (genie's GPU and CPU backends in one CSV) is two lines, each keeping its colour
//! across the charts.
//!
//! The rows come from CSVs with the header `data,system,params,recall,qps,seconds,queries,device`
//! (one row per measured point), as `bench/peers/ann_peers.py` and genie-bench write them.

use super::axis::Axis;
use super::canvas::register_embedded_font;
use super::csv_table::Table;
use super::format::{file_name, plain, thousands};
use super::line::{LineChart, Series, PALETTE};
use anyhow::{bail, Context, Result};
use plotters::prelude::SeriesLabelPosition;
use std::path::{Path, PathBuf};

/// The recall the benchmark aims at, drawn as a dashed vertical line.
pub const TARGET_RECALL: f64 = 0.95;

/// The left end of the recall axis when the data reach lower (the frontier is cut there).
const MIN_RECALL: f64 = 0.5;

/// One measured point: a row of an ANN CSV.
#[derive(Debug, Clone, PartialEq)]
pub struct AnnPoint {
    /// The data set's name (one chart each).
    pub data: String,
    /// The system measured (one line each).
    pub system: String,
    /// Its configuration, `key=value;key=value`.
    pub params: String,
    /// Recall@k against the exact neighbours, 0 to 1.
    pub recall: f64,
    /// Queries per second.
    pub qps: f64,
    /// Where it ran: a GPU's name or `cpu N threads`.
    pub device: String,
}

/// Reads the points of every CSV, in order; errors name the file and line.
pub fn read_points(csvs: &[PathBuf]) -> Result<Vec<AnnPoint>> {
    let mut points = Vec::new();
    for path in csvs {
        let table = Table::read(path)?;
        table.require(&["data", "system", "params", "recall", "qps", "device"])?;
        for row in table.rows() {
            let text = |column: &str| -> Result<String> {
                let value = row.text(column)?;
                if value.is_empty() {
                    return Err(row.bad(column, "a name", value).into());
                }
                Ok(value.to_string())
            };
            let recall = row.number("recall")?;
            if !(0.0..=1.0).contains(&recall) {
                return Err(row
                    .bad("recall", "a number from 0 to 1", row.text("recall")?)
                    .into());
            }
            points.push(AnnPoint {
                data: text("data")?,
                system: text("system")?,
                params: row.text("params")?.to_string(),
                recall,
                qps: row.positive("qps")?,
                device: text("device")?,
            });
        }
    }
    Ok(points)
}

/// The points of `points` (recall, queries/s) that no other point beats in both, sorted by
/// recall: each has fewer queries/s than the one before it. Of equal points one is kept.
pub fn frontier(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.total_cmp(&a.1)));
    let mut kept: Vec<(f64, f64)> = Vec::new();
    for p in sorted {
        if kept.last().is_none_or(|best| p.1 > best.1) {
            kept.push(p);
        }
    }
    kept.reverse();
    kept
}

/// `line` (sorted by recall) from recall `lo` on: the part below `lo` replaced by the point where
/// the line crosses it (interpolated on the logarithmic axis of queries/s).
fn clip_below(line: &[(f64, f64)], lo: f64) -> Vec<(f64, f64)> {
    let first = line.iter().position(|p| p.0 >= lo).unwrap_or(line.len());
    let mut clipped = Vec::new();
    if first > 0 && first < line.len() {
        let ((x0, y0), (x1, y1)) = (line[first - 1], line[first]);
        let t = (lo - x0) / (x1 - x0);
        clipped.push((lo, 10f64.powf(y0.log10() + t * (y1.log10() - y0.log10()))));
    }
    clipped.extend_from_slice(&line[first..]);
    clipped
}

/// `recall@k` when every point that names a k in its params names the same, else `recall`.
fn recall_label(points: &[&AnnPoint]) -> String {
    match common_k(points) {
        Some(k) => format!("recall@{k}"),
        None => "recall".to_string(),
    }
}

/// The k every point that names one in its params names, if they agree.
fn common_k(points: &[&AnnPoint]) -> Option<String> {
    let mut ks = points.iter().filter_map(|p| {
        p.params
            .split(';')
            .find_map(|kv| kv.trim().strip_prefix("k="))
            .map(str::to_string)
    });
    let k = ks.next()?;
    ks.all(|other| other == k).then_some(k)
}

/// `data` as a file name: letters, digits, `.`, `_` and `-` kept, anything else `-`.
fn file_stem(data: &str) -> String {
    data.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Draws `ann-<data>.png` into `out_dir` for each data set of the CSVs; returns the files.
pub fn ann_charts(csvs: &[PathBuf], out_dir: &Path) -> Result<Vec<PathBuf>> {
    let points = read_points(csvs)?;
    if points.is_empty() {
        bail!("no ANN rows to draw");
    }
    register_embedded_font()?;
    std::fs::create_dir_all(out_dir)
        .with_context(|| format!("cannot create {}", out_dir.display()))?;
    let mut lines: Vec<Line<'_>> = Vec::new();
    let mut datasets: Vec<&str> = Vec::new();
    for p in &points {
        let line = (p.system.as_str(), p.device.as_str());
        if !lines.contains(&line) {
            lines.push(line);
        }
        if !datasets.contains(&p.data.as_str()) {
            datasets.push(&p.data);
        }
    }
    let sources: Vec<String> = csvs.iter().map(|p| file_name(p)).collect();
    let mut written = Vec::new();
    for data in datasets {
        let of_data: Vec<&AnnPoint> = points.iter().filter(|p| p.data == data).collect();
        let path = out_dir.join(format!("ann-{}.png", file_stem(data)));
        let chart = chart(data, &of_data, &lines, &sources)
            .with_context(|| format!("{}: data set `{data}`", path.display()))?;
        chart.draw(&path)?;
        written.push(path);
    }
    Ok(written)
}

/// A line of a chart: a system on a device.
type Line<'a> = (&'a str, &'a str);

/// The chart of one data set; the order of `every_line` fixes each line's colour across the
/// charts.
fn chart(
    data: &str,
    points: &[&AnnPoint],
    every_line: &[Line<'_>],
    sources: &[String],
) -> Result<LineChart> {
    let mut lines = Vec::new();
    for (&(system, device), &color) in every_line.iter().zip(PALETTE.iter().cycle()) {
        let of_line: Vec<(f64, f64)> = points
            .iter()
            .filter(|p| p.system == system && p.device == device)
            .map(|p| (p.recall, p.qps))
            .collect();
        if !of_line.is_empty() {
            lines.push((format!("{system} ({device})"), color, frontier(&of_line)));
        }
    }
    let min = lines
        .iter()
        .flat_map(|l| l.2.iter().map(|p| p.0))
        .fold(1.0, f64::min);
    // 0.5 to 1, the left end moved in to the lowest recall drawn (a multiple of 0.05)
    let lo = ((min * 20.0).floor() / 20.0).clamp(MIN_RECALL, TARGET_RECALL - 0.05);
    let step = if lo < 0.8 { 0.05 } else { 0.02 };
    let x = Axis::linear(&recall_label(points), lo - 0.01, 1.01, step, plain)?;
    let mut series = Vec::new();
    let mut below = Vec::new();
    for (label, color, line) in lines {
        let line = clip_below(&line, x.lo);
        if line.is_empty() {
            below.push(label);
            continue;
        }
        series.push(Series {
            label,
            points: line,
            color,
            dashed: false,
        });
    }
    if series.is_empty() {
        bail!("every system's recall is below {lo}");
    }
    let below = if below.is_empty() {
        String::new()
    } else {
        format!("; not drawn (recall below {lo}): {}", below.join(", "))
    };
    Ok(LineChart {
        title: format!("Queries per second against {}, {data}", x.label),
        y: Axis::log("queries per second", &series, |p| p.1, thousands)?,
        marks: vec![(TARGET_RECALL, format!("target {} {TARGET_RECALL}", x.label))],
        x,
        legend: SeriesLabelPosition::LowerLeft,
        footer: format!(
            "each line: a system's Pareto frontier on one device (points with no other point of more recall \
             and more queries/s){below}\nsources: {}",
            sources.join(", ")
        ),
        series,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_frontier_keeps_only_points_nothing_beats_in_both() {
        let points = [
            (0.90, 1000.0),
            (0.80, 900.0), // beaten by (0.90, 1000)
            (0.99, 200.0),
            (0.95, 200.0), // beaten by (0.99, 200): as fast, less recall
            (0.60, 5000.0),
            (0.60, 4000.0), // beaten by (0.60, 5000): as much recall, slower
            (0.90, 1000.0), // equal to a kept point
            (1.00, 50.0),
        ];
        assert_eq!(
            frontier(&points),
            [(0.60, 5000.0), (0.90, 1000.0), (0.99, 200.0), (1.00, 50.0)]
        );
        assert_eq!(frontier(&[]), []);
        assert_eq!(frontier(&[(0.5, 1.0)]), [(0.5, 1.0)]);
    }

    #[test]
    fn the_line_is_cut_where_it_crosses_the_axis() {
        let line = [(0.3, 10_000.0), (0.7, 100.0), (0.9, 10.0)];
        let clipped = clip_below(&line, 0.5);
        assert_eq!(clipped.len(), 3);
        assert_eq!(clipped[0].0, 0.5);
        assert!((clipped[0].1 - 1000.0).abs() < 1e-6, "{clipped:?}");
        assert_eq!(&clipped[1..], &line[1..]);
        assert!(clip_below(&[(0.2, 5.0)], 0.5).is_empty());
        assert_eq!(clip_below(&line, 0.1), line);
    }

    #[test]
    fn k_and_file_names() {
        let point = |params: &str| AnnPoint {
            data: "d".into(),
            system: "s".into(),
            params: params.into(),
            recall: 0.9,
            qps: 1.0,
            device: "cpu".into(),
        };
        let (a, b, c) = (point("nprobe=4;k=10"), point("k=10"), point("probes=2"));
        assert_eq!(common_k(&[&a, &b, &c]), Some("10".into()));
        let d = point("k=100");
        assert_eq!(common_k(&[&a, &d]), None);
        assert_eq!(common_k(&[&c]), None);
        assert_eq!(file_stem("fashion mnist/784"), "fashion-mnist-784");
    }

    #[test]
    fn genie_is_drawn_beside_the_peers_one_line_per_device() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ann-genie.csv");
        let points = read_points(&[fixture]).unwrap();
        let of_data: Vec<&AnnPoint> = points.iter().collect();
        let mut every_line: Vec<Line<'_>> = Vec::new();
        for p in &points {
            if !every_line.contains(&(p.system.as_str(), p.device.as_str())) {
                every_line.push((&p.system, &p.device));
            }
        }
        let chart = chart("clusters-1m", &of_data, &every_line, &[]).unwrap();
        let labels: Vec<&str> = chart.series.iter().map(|s| s.label.as_str()).collect();
        let h100 = "NVIDIA H100 80GB HBM3";
        assert_eq!(
            labels,
            [
                format!("torch-exact-fp32 ({h100})"),
                "faiss-ivfpq (cpu 16 threads)".into(),
                format!("genie-codebook ({h100})"),
                "genie-codebook (cpu 16 threads)".into(),
            ]
        );
        // each device its own frontier: the CPU's points are not lost under the GPU's
        assert_eq!(
            chart.series[2].points,
            [(0.9606, 334_448.2), (0.988, 190_114.1)]
        );
        assert_eq!(
            chart.series[3].points,
            [(0.9606, 25_634.4), (0.988, 14_903.1)]
        );
        assert_ne!(chart.series[2].color, chart.series[3].color);
        assert_eq!(chart.x.label, "recall@10");
        assert!(
            chart.footer.contains(&format!(
                "not drawn (recall below 0.5): genie-e2lsh ({h100})"
            )),
            "{}",
            chart.footer
        );
    }

    #[test]
    fn a_bad_recall_names_file_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ann.csv");
        std::fs::write(
            &path,
            "data,system,params,recall,qps,seconds,queries,device\n\
             d,faiss-flat,k=10,1.0,3000,0.1,300,cpu 2 threads\n\
             d,faiss-ivfpq,nprobe=1,1.5,9000,0.03,300,cpu 2 threads\n",
        )
        .unwrap();
        let message = format!(
            "{:#}",
            ann_charts(std::slice::from_ref(&path), dir.path()).unwrap_err()
        );
        assert!(
            message.contains(&format!("{}:3: column `recall`", path.display())),
            "{message}"
        );
    }
}
