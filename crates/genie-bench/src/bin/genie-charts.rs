//! genie-charts: PNG charts of the benchmark results kept under `bench/runs/`, for
//! `docs/BENCHMARKS.md` (`genie_bench::charts`). With `--ann CSV`: the vector-search benchmark's
//! recall/throughput chart of each data set in the CSVs instead (`genie_bench::charts::ann`).
//!
//! Regenerate with `cargo run --release --bin genie-charts`.

use anyhow::Result;
use clap::Parser;
use genie_bench::charts::ann::ann_charts;
use genie_bench::charts::render_all;
use std::path::PathBuf;

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
