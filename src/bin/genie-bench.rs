//! genie-bench: the GPU c-PQ against the GPU count table and the CPU backend on one synthetic
//! workload generated from a seed, with the hardware ceilings measured in the same run.
//!
//! Workload (issue 3): N objects of D dimensions x V values (one keyword per dimension); each
//! query perturbs a random object (each dimension kept with probability 1/2, else a random value),
//! one item per dimension. Prints a table; `--csv FILE` writes the raw rows.

use anyhow::{bail, Context, Result};
use clap::Parser;
use genie_core::backend::cuda::measure_ceilings;
use genie_core::{
    Backend, CpuBackend, CudaBackend, Engine, Hit, IndexBuilder, InvertedIndex, Method, Query,
    SearchParams,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(about = "Benchmark: GPU c-PQ vs GPU count table vs CPU backend on a synthetic workload")]
struct Args {
    /// Number of objects.
    #[arg(long, default_value_t = 10_000_000)]
    objects: u32,
    /// Dimensions per object (one keyword each).
    #[arg(long, default_value_t = 128)]
    dims: u32,
    /// Values per dimension.
    #[arg(long, default_value_t = 64)]
    values: u32,
    /// Query batch sizes to run, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1024,8192")]
    queries: Vec<usize>,
    /// Hits per query.
    #[arg(long, default_value_t = 100)]
    k: u32,
    /// Queries run on the CPU backend (its results are checked against the GPU's).
    #[arg(long, default_value_t = 64)]
    cpu_queries: usize,
    /// Seed of the generated data.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Small sizes for a routine check (1M objects, 1,024 queries).
    #[arg(long)]
    quick: bool,
    /// Skip the GPU count-table baseline.
    #[arg(long)]
    no_count_table: bool,
    /// Write the raw rows as CSV here.
    #[arg(long)]
    csv: Option<std::path::PathBuf>,
}

fn generate(args: &Args) -> Result<InvertedIndex> {
    let (d, v) = (args.dims as usize, args.values);
    let chunk = 1 << 16;
    let n = args.objects as usize;
    let mut keywords = vec![0u32; n * d];
    keywords
        .par_chunks_mut(chunk * d)
        .enumerate()
        .for_each(|(c, out)| {
            let mut rng =
                SmallRng::seed_from_u64(args.seed ^ (c as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            for obj in out.chunks_mut(d) {
                for (dim, kw) in obj.iter_mut().enumerate() {
                    *kw = dim as u32 * v + rng.random_range(0..v);
                }
            }
        });
    let mut b = IndexBuilder::new()
        .blocks((0..args.dims).map(|x| x * v).collect())
        .keyword_space(args.dims * v);
    b.push_fixed(&keywords, d)?;
    drop(keywords);
    Ok(b.build()?)
}

fn queries(index: &InvertedIndex, args: &Args, count: usize) -> Vec<Query> {
    let (d, v) = (args.dims, args.values);
    let mut rng = SmallRng::seed_from_u64(args.seed.wrapping_add(7));
    (0..count)
        .map(|_| {
            let base = rng.random_range(0..index.num_objects());
            let kws: Vec<u32> = (0..d)
                .map(|dim| {
                    if rng.random_bool(0.5) {
                        // the base object's value: find it in the dimension's block
                        (dim * v..(dim + 1) * v)
                            .find(|&kw| index.postings_of(kw).binary_search(&base).is_ok())
                            .unwrap_or(dim * v)
                    } else {
                        dim * v + rng.random_range(0..v)
                    }
                })
                .collect();
            Query::from_keywords(&kws)
        })
        .collect()
}

struct Row {
    backend: String,
    method: &'static str,
    queries: usize,
    batches: u64,
    wall_s: f64,
    transfer_ms: f64,
    match_ms: f64,
    select_ms: f64,
    postings: u64,
    mb_per_query: f64,
}

fn postings_of(index: &InvertedIndex, qs: &[Query]) -> u64 {
    qs.iter()
        .flat_map(|q| &q.items)
        .filter_map(|it| index.slice_of(it.lo, it.hi))
        .map(|(a, b)| b - a)
        .sum()
}

fn run(
    engine: &Engine,
    qs: &[Query],
    k: u32,
    method: Method,
    name: &str,
) -> Result<(Row, Vec<Vec<Hit>>)> {
    let params = SearchParams::top_k(k).with_method(method);
    let prepared = engine.index().prepare_all(qs)?;
    let per_query: f64 = prepared
        .iter()
        .map(|q| engine.bytes_per_query(q, &params) as f64)
        .sum::<f64>()
        / qs.len().max(1) as f64;
    let _ = engine.take_stage_times();
    let t = Instant::now();
    let hits = engine.search(qs, &params)?;
    let wall_s = t.elapsed().as_secs_f64();
    let st = engine.take_stage_times().unwrap_or_default();
    let row = Row {
        backend: name.into(),
        method: if method == Method::Cpq {
            "c-PQ"
        } else {
            "count-table"
        },
        queries: qs.len(),
        batches: st
            .batches
            .max(engine.plan_batches(&prepared, &params).len() as u64),
        wall_s,
        transfer_ms: st.transfer_in_ms + st.transfer_out_ms,
        match_ms: st.match_ms,
        select_ms: st.select_ms,
        postings: postings_of(engine.index(), qs),
        mb_per_query: per_query / 1e6,
    };
    Ok((row, hits))
}

fn main() -> Result<()> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let mut args = Args::parse();
    if args.quick {
        args.objects = args.objects.min(1_000_000);
        args.queries = vec![1024];
    }
    let gpu = CudaBackend::new(0).context("genie-bench needs a GPU")?;
    let ceilings = measure_ceilings(0).unwrap_or_default();
    println!(
        "device: {}\nceilings: d2d copy {:.0} GB/s, random atomics {:.1} G/s, h2d pinned {:.1} GB/s, pageable {:.1} GB/s",
        gpu.name(),
        ceilings.copy_gbs,
        ceilings.atomic_gops,
        ceilings.h2d_pinned_gbs,
        ceilings.h2d_pageable_gbs
    );
    let t = Instant::now();
    let index = Arc::new(generate(&args)?);
    let build_s = t.elapsed().as_secs_f64();
    println!(
        "index: {} objects, {} postings, {} keywords; generated and built in {build_s:.1} s",
        index.num_objects(),
        index.num_postings(),
        index.keyword_space()
    );
    let t = Instant::now();
    let gpu_engine = Engine::with_backend(index.clone(), &gpu)?;
    println!(
        "index upload: {:.3} s ({:.2} GB)",
        t.elapsed().as_secs_f64(),
        index.num_postings() as f64 * 4e-9
    );
    let cpu = CpuBackend::new();
    let cpu_engine = Engine::with_backend(index.clone(), &cpu)?;
    let max_q = args
        .queries
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .max(args.cpu_queries);
    let all_queries = queries(&index, &args, max_q);
    // warm-up: module load, first allocations
    run(
        &gpu_engine,
        &all_queries[..8.min(max_q)],
        args.k,
        Method::Cpq,
        "warm-up",
    )?;

    let mut rows = Vec::new();
    let gpu_name = gpu.name();
    let mut reference: Option<Vec<Vec<Hit>>> = None;
    for &nq in &args.queries {
        let qs = &all_queries[..nq];
        let (row, hits) = run(&gpu_engine, qs, args.k, Method::Cpq, &gpu_name)?;
        rows.push(row);
        if !args.no_count_table {
            let (row, ct) = run(&gpu_engine, qs, args.k, Method::CountTable, &gpu_name)?;
            rows.push(row);
            if ct != hits {
                bail!("GPU count table and GPU c-PQ differ on {nq} queries");
            }
        }
        if reference.as_ref().is_none_or(|r| r.len() < hits.len()) {
            reference = Some(hits);
        }
    }
    let nc = args.cpu_queries.min(max_q);
    let (row, cpu_hits) = run(
        &cpu_engine,
        &all_queries[..nc],
        args.k,
        Method::Cpq,
        &cpu.name(),
    )?;
    rows.push(row);
    let identical = reference
        .as_ref()
        .map(|r| r[..nc.min(r.len())] == cpu_hits[..nc.min(r.len())]);
    println!("CPU and GPU results identical on the first {nc} queries: {identical:?}");
    if identical == Some(false) {
        bail!("CPU and GPU results differ");
    }

    let mut table = String::new();
    writeln!(
        table,
        "{:<34} {:<11} {:>6} {:>4} {:>8} {:>9} {:>9} {:>9} {:>9} {:>8} {:>7} {:>8}",
        "backend",
        "method",
        "q",
        "bat",
        "wall_s",
        "xfer_ms",
        "match_ms",
        "select_ms",
        "q/s",
        "Gpost/s",
        "%atom",
        "MB/q"
    )?;
    let mut csv = String::from(
        "device,backend,method,queries,batches,wall_s,transfer_ms,match_ms,select_ms,qps,gpostings_per_s,atomic_ceiling_gops,copy_ceiling_gbs,mb_per_query,objects,dims,values,k,seed\n",
    );
    for r in &rows {
        let qps = r.queries as f64 / r.wall_s;
        let gps = r.postings as f64 / r.wall_s / 1e9;
        let pct = if ceilings.atomic_gops > 0.0 {
            100.0 * gps / ceilings.atomic_gops
        } else {
            0.0
        };
        writeln!(
            table,
            "{:<34} {:<11} {:>6} {:>4} {:>8.3} {:>9.1} {:>9.1} {:>9.1} {:>9.0} {:>8.2} {:>7.1} {:>8.2}",
            r.backend, r.method, r.queries, r.batches, r.wall_s, r.transfer_ms, r.match_ms, r.select_ms, qps, gps, pct, r.mb_per_query
        )?;
        writeln!(
            csv,
            "{},{},{},{},{},{:.6},{:.3},{:.3},{:.3},{:.1},{:.4},{:.3},{:.1},{:.3},{},{},{},{},{}",
            gpu_name,
            r.backend,
            r.method,
            r.queries,
            r.batches,
            r.wall_s,
            r.transfer_ms,
            r.match_ms,
            r.select_ms,
            qps,
            gps,
            ceilings.atomic_gops,
            ceilings.copy_gbs,
            r.mb_per_query,
            args.objects,
            args.dims,
            args.values,
            args.k,
            args.seed
        )?;
    }
    if let Some(path) = &args.csv {
        std::fs::write(path, csv).with_context(|| format!("writing {}", path.display()))?;
    }
    println!("\n{table}");
    Ok(())
}
