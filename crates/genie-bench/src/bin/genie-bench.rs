//! genie-bench: the benchmark program of genie-rs, a front end of the genie_bench library. The
//! default mode (`table`) times the GPU c-PQ against the GPU count table and the CPU backend on one
//! synthetic workload generated from a seed, with the hardware ceilings measured in the same run
//! (genie_bench::table, genie_bench::synthetic). Prints a table; `--csv FILE` writes the raw rows.
//!
//! The modes sharing its command line (genie_bench::bench_args): `ceilings`, `multiload`, `scale`,
//! `multigpu` and `suite` (the genie_bench modules of those names; `--mode suite --dump DIR` also
//! writes each keyword-level workload for the PyTorch peer), `ann` (E2LSH on the GPU against exact
//! neighbours, genie_bench::ann_e2lsh) and `serve` (the server under load,
//! genie_bench::serve_load).
//!
//! Modes with command lines of their own (`genie-bench --mode MODE --help`): `dump` (an index file
//! and text queries for the peers, with genie's hits; genie_bench::dump), `write-keywords` (the
//! SIFT-like keyword objects as text, NumPy CSR, Parquet and Arrow files for timing `genie build`;
//! genie_bench::write_keywords), `cpu` (the CPU backend on the suite's keyword workloads;
//! genie_bench::cpu_suite), `kind` (an index of any kind with a file of text queries and the
//! kind's stage breakdown; genie_bench::kind_bench), `check` (how fast an index file opens:
//! load against the bare checksum pass over mappings made in several ways;
//! genie_bench::check_speed) and `vectors` (genie's rows on the
//! recall/throughput curves from an index built by `genie build --kind vectors`;
//! genie_bench::ann_genie).

use anyhow::{bail, Result};
use clap::Parser;
use genie_bench::bench_args::BenchArgs;

/// The allocator of the front ends users run (see genie-bench's Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Whether the command line asks for `--mode MODE`: the modes with command lines of their own are
/// dispatched before the shared command line is parsed (`--mode vectors` takes `--queries` as a
/// file, not batch sizes).
fn mode_is(mode: &str, argv: impl Iterator<Item = String>) -> bool {
    let argv: Vec<String> = argv.collect();
    argv.windows(2).any(|w| w[0] == "--mode" && w[1] == mode)
        || argv.iter().any(|a| *a == format!("--mode={mode}"))
}

fn main() -> Result<()> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    if mode_is("vectors", std::env::args()) {
        // genie's points on the recall/throughput curves (genie_bench::ann_genie)
        let args = genie_bench::ann_genie::VectorsArgs::parse();
        let report = genie_bench::ann_genie::run(&args)?;
        println!("\n{}", report.table);
        return Ok(());
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
    if mode_is("check", std::env::args()) {
        // how fast an index file opens, and what bounds it (genie_bench::check_speed)
        let args = genie_bench::check_speed::CheckArgs::parse();
        return genie_bench::check_speed::run(&args);
    }
    if mode_is("live", std::env::args()) {
        // live indexes: ingest, segments against merged, filters, reads under writes
        let args = genie_bench::live_bench::LiveArgs::parse();
        return genie_bench::live_bench::run(&args);
    }
    if mode_is("serve-client", std::env::args()) {
        // the closed loop against a server in another process (genie_bench::serve_client)
        let args = genie_bench::serve_client::ClientArgs::parse();
        return genie_bench::serve_client::run(&args);
    }
    if mode_is("transport-parts", std::env::args()) {
        // a served query's host time by step (genie_bench::transport_parts)
        let args = genie_bench::transport_parts::PartsArgs::parse();
        return genie_bench::transport_parts::run(&args).map(|_| ());
    }
    if mode_is("kind", std::env::args()) {
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
        // the ceilings above and the staged uploads
        "ceilings" => genie_bench::ceilings::staged_uploads(&ceilings),
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
