//! `genie-bench --mode scale`: the GPU c-PQ on the synthetic workload ([`crate::synthetic`]) at
//! each number of objects of `--scale` (the paper's Table II sizes by default): build, upload and
//! search times, queries/s and postings/s. Prints a table; `--csv FILE` writes the rows.

use crate::bench_args::BenchArgs;
use crate::synthetic::{generate, queries};
use crate::timed_search::timed;
use anyhow::{Context, Result};
use genie_core::{CudaBackend, Engine, Method, SearchParams};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

/// The c-PQ on a growing number of objects (the paper's Table II sizes).
pub fn run(args: &BenchArgs, gpu: &CudaBackend) -> Result<()> {
    let nq = args.queries.first().copied().unwrap_or(1024);
    let params = SearchParams::top_k(args.k);
    let mut table = format!(
        "{:>10} {:>8} {:>9} {:>9} {:>8} {:>9} {:>8} {:>8}\n",
        "objects", "build_s", "upload_s", "search_s", "q/s", "Gpost/s", "batches", "MB/q"
    );
    let mut csv = String::from("objects,dims,values,queries,k,build_s,upload_s,search_s,qps,gpostings_per_s,batches,mb_per_query\n");
    for &n in &args.scale {
        let a = BenchArgs {
            objects: n,
            ..args.clone()
        };
        let t = Instant::now();
        let index = Arc::new(generate(&a)?);
        let build_s = t.elapsed().as_secs_f64();
        let qs = queries(&index, &a, nq);
        let t = Instant::now();
        let engine = Engine::with_backend(index.clone(), gpu)?;
        let upload_s = t.elapsed().as_secs_f64();
        engine.search(&qs[..8.min(nq)], &params)?;
        let (row, _) = timed(&engine, &qs, a.k, Method::Cpq, "gpu")?;
        let gps = row.postings as f64 / row.wall_s / 1e9;
        let qps = nq as f64 / row.wall_s;
        writeln!(
            table,
            "{n:>10} {build_s:>8.1} {upload_s:>9.2} {:>9.3} {qps:>8.0} {gps:>9.2} {:>8} {:>8.1}",
            row.wall_s, row.batches, row.mb_per_query
        )?;
        writeln!(
            csv,
            "{n},{},{},{nq},{},{build_s:.3},{upload_s:.4},{:.6},{qps:.1},{gps:.4},{},{:.3}",
            a.dims, a.values, a.k, row.wall_s, row.batches, row.mb_per_query
        )?;
        println!("{n} objects done");
    }
    if let Some(path) = &args.csv {
        std::fs::write(path, csv).with_context(|| format!("writing {}", path.display()))?;
    }
    println!("\n{table}");
    Ok(())
}
