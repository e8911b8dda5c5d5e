//! `genie-bench --mode table` (the default mode): the GPU c-PQ (tiled and global kernels) against
//! the GPU count table and the CPU backend on the synthetic workload ([`crate::synthetic`]) at
//! each batch size of `--queries`, their hits checked against each other. Prints a table;
//! `--csv FILE` writes the raw rows.

use crate::bench_args::BenchArgs;
use crate::synthetic::{generate, queries};
use crate::timed_search::{timed, timed_with};
use anyhow::{bail, Context, Result};
use genie_core::backend::cuda::Ceilings;
use genie_core::{Backend, CpuBackend, CudaBackend, Engine, Hit, Method, SearchParams};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

/// Runs the mode on `gpu`, whose `ceilings` give the table's share of the atomics ceiling.
pub fn run(args: &BenchArgs, gpu: &CudaBackend, ceilings: &Ceilings) -> Result<()> {
    let t = Instant::now();
    let index = Arc::new(generate(args)?);
    let build_s = t.elapsed().as_secs_f64();
    println!(
        "index: {} objects, {} postings, {} keywords; generated and built in {build_s:.1} s",
        index.num_objects(),
        index.num_postings(),
        index.keyword_space()
    );
    let t = Instant::now();
    let gpu_engine = Engine::with_backend(index.clone(), gpu)?;
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
    let all_queries = queries(&index, args, max_q);
    // warm-up: module load, first allocations
    timed(
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
        let (row, hits) = timed(&gpu_engine, qs, args.k, Method::Cpq, &gpu_name)?;
        rows.push(row);
        let mut global = SearchParams::top_k(args.k);
        global.gpu_tiles = false;
        let (row, g) = timed_with(&gpu_engine, qs, global, &gpu_name)?;
        rows.push(row);
        if g != hits {
            bail!("GPU tiled and global c-PQ kernels differ on {nq} queries");
        }
        if !args.no_count_table {
            let (row, ct) = timed(&gpu_engine, qs, args.k, Method::CountTable, &gpu_name)?;
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
    let (row, cpu_hits) = timed(
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
