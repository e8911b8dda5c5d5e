//! genie-bench: the GPU c-PQ against the GPU count table and the CPU backend on one synthetic
//! workload generated from a seed, with the hardware ceilings measured in the same run.
//!
//! Workload (issue 3): N objects of D dimensions x V values (one keyword per dimension); each
//! query perturbs a random object (each dimension kept with probability 1/2, else a random value),
//! one item per dimension. Prints a table; `--csv FILE` writes the raw rows.
//!
//! `--mode suite` runs the paper's workloads generated at its sizes; with `--dump DIR` it also
//! writes each keyword-level workload and genie's top-k counts as NumPy files for the PyTorch peer
//! (`bench/peers/torch_spmm.py --load DIR/<workload>`).
//!
//! `--mode dump` writes an index file and text queries for the peers, with genie's hits
//! (genie_bench::dump). `--mode write-keywords` writes the SIFT-like keyword objects as text, NumPy CSR, Parquet and
//! Arrow files for timing `genie build` (genie_bench::write_keywords).
//! `--mode kind` searches an index of any kind with a file of text queries and the kind's stage
//! breakdown (genie_bench::kind_bench; `genie-bench --mode kind --help`).
//! The vector modes live in the library: `--mode ann` (E2LSH on the GPU against exact neighbours,
//! genie_bench::ann_e2lsh) and `--mode vectors` (genie's rows on the recall/throughput curves from
//! an index built by `genie build --kind vectors`, genie_bench::ann_genie; its own command line,
//! `genie-bench --mode vectors --help`).

use anyhow::{bail, Result};
use clap::Parser;
use genie_bench::bench_args::BenchArgs;

/// Whether the command line asks for `--mode vectors`, which has a command line of its own
/// (its `--queries` is a file, not batch sizes).
fn vectors_mode(argv: impl Iterator<Item = String>) -> bool {
    let argv: Vec<String> = argv.collect();
    argv.windows(2)
        .any(|w| w[0] == "--mode" && w[1] == "vectors")
        || argv.iter().any(|a| a == "--mode=vectors")
}

/// Whether the command line asks for `--mode MODE`.
fn mode_is(mode: &str, argv: impl Iterator<Item = String>) -> bool {
    let argv: Vec<String> = argv.collect();
    argv.windows(2).any(|w| w[0] == "--mode" && w[1] == mode)
        || argv.iter().any(|a| *a == format!("--mode={mode}"))
}

/// Whether the command line asks for `--mode kind`, which has a command line of its own.
fn kind_mode(argv: impl Iterator<Item = String>) -> bool {
    let argv: Vec<String> = argv.collect();
    argv.windows(2).any(|w| w[0] == "--mode" && w[1] == "kind")
        || argv.iter().any(|a| a == "--mode=kind")
}

/// `--mode vectors`: genie's points on the recall/throughput curves (see genie_bench::ann_genie).
fn vectors() -> Result<()> {
    let args = genie_bench::ann_genie::VectorsArgs::parse();
    let report = genie_bench::ann_genie::run(&args)?;
    println!("\n{}", report.table);
    Ok(())
}

fn main() -> Result<()> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    if vectors_mode(std::env::args()) {
        return vectors();
    }
    if mode_is("dump", std::env::args()) {
        // an index file and text queries as a peer dump, searched by genie (genie_bench::dump)
        let args = genie_bench::dump::DumpArgs::parse();
        return genie_bench::dump::run(&args);
    }
    if mode_is("write-keywords", std::env::args()) {
        // the keyword workload as files of every input format (genie_bench::write_keywords)
        let args = genie_bench::write_keywords::WriteArgs::parse();
        return genie_bench::write_keywords::run(&args);
    }
    if mode_is("cpu", std::env::args()) {
        // the CPU backend on the suite's keyword workloads (genie_bench::cpu_suite)
        let args = genie_bench::cpu_suite::CpuArgs::parse();
        return genie_bench::cpu_suite::run(&args);
    }
    if kind_mode(std::env::args()) {
        // any kind's index and text queries, with the kind's stages (genie_bench::kind_bench)
        let args = genie_bench::kind_bench::KindArgs::parse();
        return genie_bench::kind_bench::run(&args).map(|_| ());
    }
    let mut args = BenchArgs::parse();
    if args.quick {
        args.objects = args.objects.min(1_000_000);
        args.queries = vec![1024];
    }
    if args.dump.is_some() && args.mode != "suite" {
        bail!(
            "--dump writes the workloads of --mode suite, not of --mode {}",
            args.mode
        );
    }
    if args.mode == "serve" {
        return genie_bench::serve_load::run_from_args(&args);
    }
    let (gpu, ceilings) = genie_bench::ceilings::open(&args)?;
    match args.mode.as_str() {
        // the ceilings above and nothing else
        "ceilings" => Ok(()),
        "table" => genie_bench::table::run(&args, &gpu, &ceilings),
        "multiload" => genie_bench::multiload::run(&args, &gpu, &ceilings),
        "scale" => genie_bench::scale::run(&args, &gpu),
        "multigpu" => genie_bench::multigpu::run(&args),
        "ann" => genie_bench::ann_e2lsh::run(&genie_bench::ann_e2lsh::AnnArgs {
            fashion: args.fashion.clone(),
            mixture: args.mixture,
            seed: args.seed,
        }),
        "suite" => genie_bench::suite::run(&args, &gpu),
        other => bail!(
            "unknown --mode {other}: expected ceilings, table, multiload, scale, multigpu, ann, suite, serve, vectors or kind"
        ),
    }
}
