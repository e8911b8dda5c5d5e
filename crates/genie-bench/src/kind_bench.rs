//! `genie-bench --mode kind`: searches an index of any kind built by `genie build` (sequences,
//! documents, table rows, keywords) with a file of text queries, one a line, through the library's
//! kind API (`genie::open`, `KindIndex`): the path `genie search` takes, without reading the file or
//! writing answers inside the timing. One warm-up search of every query, then `--runs` timed ones
//! (the median is kept), each with the kind's own stage breakdown (sequences: count, verify,
//! exhaustive). One CSV row per run of the mode, in the sequence peers' schema
//! (`bench/peers/seq_peers.py`: `data,system,params,queries,seconds,qps,device,agree`), so that
//! genie's rows sit beside RapidFuzz's.

use crate::csv_rows::append_records;
use anyhow::{bail, Context, Result};
use genie::core::DeviceChoice;
use genie::kind::{Options, Registry, Request};
use genie::open::{load, place, OpenSpec};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

/// The CSV header, the sequence peers'.
pub const HEADER: [&str; 8] = [
    "data", "system", "params", "queries", "seconds", "qps", "device", "agree",
];

/// The command line of `genie-bench --mode kind`.
#[derive(clap::Parser, Debug, Clone)]
#[command(
    name = "genie-bench --mode kind",
    about = "searches an index of any kind with a file of text queries, with the kind's stages"
)]
pub struct KindArgs {
    /// The mode; always `kind` here.
    #[arg(long, default_value = "kind")]
    pub mode: String,
    /// The index, built by `genie build`.
    #[arg(long)]
    pub index: PathBuf,
    /// The queries, one a line.
    #[arg(long)]
    pub queries: PathBuf,
    /// Hits per query.
    #[arg(long, default_value_t = 10)]
    pub k: u32,
    /// A search option of the kind, NAME=VALUE (a number, true or false, else text);
    /// repeatable: `--option exhaustive=true`.
    #[arg(long = "option")]
    pub options: Vec<String>,
    /// cpu, gpu or auto (one device).
    #[arg(long, default_value = "auto")]
    pub device: DeviceChoice,
    /// Timed searches (after one warm-up).
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// The data set's name (the CSV's data column).
    #[arg(long, default_value = "data")]
    pub data: String,
    /// A CSV to append the row to (the header when the file is new).
    #[arg(long)]
    pub csv: Option<PathBuf>,
}

/// The kind's search options from `NAME=VALUE` words.
pub fn options(words: &[String]) -> Result<Options> {
    let mut options = Options::new();
    for w in words {
        let Some((name, value)) = w.split_once('=') else {
            bail!("--option {w}: expected NAME=VALUE");
        };
        let value = match value {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            v => v
                .parse::<u64>()
                .map(Value::from)
                .or_else(|_| v.parse::<f64>().map(Value::from))
                .unwrap_or_else(|_| Value::from(v)),
        };
        options.set(name, value);
    }
    Ok(options)
}

/// Runs the mode: prints a table of the runs and returns it.
pub fn run(args: &KindArgs) -> Result<String> {
    let device = args.device;
    let registry = Registry::default();
    let loaded = load(&registry, &args.index)
        .with_context(|| format!("cannot open {}", args.index.display()))?;
    let spec = OpenSpec {
        device,
        devices: (device != DeviceChoice::Cpu).then(|| vec![0]),
        ..OpenSpec::default()
    };
    let index = place(&loaded, &spec)?
        .into_iter()
        .next()
        .context("no device to search on")?;
    let options = options(&args.options)?;
    let text = std::fs::read_to_string(&args.queries)
        .with_context(|| format!("cannot read {}", args.queries.display()))?;
    let parsed = text
        .lines()
        .enumerate()
        .map(|(i, line)| {
            index
                .parse(&Value::from(line), &options)
                .with_context(|| format!("{} line {}", args.queries.display(), i + 1))
        })
        .collect::<Result<Vec<_>>>()?;
    let requests: Vec<Request<'_>> = parsed
        .iter()
        .map(|p| Request {
            query: p.as_ref(),
            k: args.k,
            min_count: None,
            filter: None,
        })
        .collect();
    let n = requests.len();
    index.search(&requests)?;
    index.take_search_stages();
    let mut table = format!(
        "{}: {} ({} objects) on {}; {n} queries, k = {}, options {}\nrun    seconds         q/s   stages (ms)\n",
        args.data,
        index.kind(),
        index.num_objects(),
        index.backend_name(),
        args.k,
        options.to_json()
    );
    let mut seconds = Vec::with_capacity(args.runs);
    for r in 0..args.runs.max(1) {
        let t = Instant::now();
        index.search(&requests)?;
        let s = t.elapsed().as_secs_f64();
        let stages: Vec<String> = index
            .take_search_stages()
            .iter()
            .map(|(name, ms)| format!("{name} {ms:.1}"))
            .collect();
        writeln!(
            table,
            "{r:<3} {s:>10.4} {:>11.1}   {}",
            n as f64 / s,
            stages.join(", ")
        )?;
        seconds.push(s);
    }
    seconds.sort_by(f64::total_cmp);
    let median = seconds[seconds.len() / 2];
    writeln!(
        table,
        "median {median:.4} s, {:.1} queries/s",
        n as f64 / median
    )?;
    print!("{table}");
    if let Some(csv) = &args.csv {
        // the backend the index searched on (auto picks one)
        let backend = index.gpu_ordinal().map_or("cpu", |_| "gpu");
        let params = format!(
            "k={};backend={backend};options={}",
            args.k,
            options.to_json()
        );
        let record = [
            args.data.clone(),
            format!("genie-{}", index.kind()),
            params,
            n.to_string(),
            format!("{median:.6}"),
            format!("{:.1}", n as f64 / median),
            index.backend_name(),
            String::new(),
        ];
        append_records(csv, &HEADER, [record])?;
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_take_numbers_flags_and_text() {
        let o = options(&[
            "exhaustive=true".into(),
            "candidates=64".into(),
            "query_format=conditions".into(),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            o.to_json(),
            serde_json::json!({"exhaustive": true, "candidates": 64, "query_format": "conditions"})
        );
        assert!(options(&["exhaustive".into()]).is_err());
    }
}
