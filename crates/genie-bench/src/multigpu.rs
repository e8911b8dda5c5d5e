//! `genie-bench --mode multigpu`: the synthetic workload ([`crate::synthetic`]) split into
//! `--parts` parts (at least one per GPU) and searched on 1, 2, ... up to every visible GPU;
//! the results must be identical on each. Prints the wall time, queries/s and speedup.

use crate::bench_args::BenchArgs;
use crate::synthetic::{generate, queries};
use anyhow::{bail, Result};
use genie_core::{Backend, CudaBackend, PartSource, PartedEngine, SearchParams};
use std::sync::Arc;
use std::time::Instant;

/// The same parted index on one GPU and on all visible GPUs (parts go to them in turn).
pub fn run(args: &BenchArgs) -> Result<()> {
    let count = genie_core::backend::cuda::device_count();
    let index = Arc::new(generate(args)?);
    let nq = args.queries.first().copied().unwrap_or(1024);
    let qs = queries(&index, args, nq);
    let params = SearchParams::top_k(args.k);
    let parts: Vec<PartSource> = index
        .split(args.parts.max(count))
        .into_iter()
        .map(PartSource::Memory)
        .collect();
    let gpus: Vec<CudaBackend> = (0..count).map(CudaBackend::new).collect::<Result<_, _>>()?;
    let mut reference = None;
    let mut rows = Vec::new();
    for devices in 1..=count {
        let engine = PartedEngine::new(
            parts.clone(),
            gpus[..devices].iter().map(|g| g as &dyn Backend).collect(),
        )?;
        engine.search(&qs[..8.min(nq)], &params)?; // warm-up on every device
        let t = Instant::now();
        let hits = engine.search(&qs, &params)?;
        let secs = t.elapsed().as_secs_f64();
        if reference.get_or_insert_with(|| hits.clone()) != &hits {
            bail!("results on {devices} GPUs differ from one GPU");
        }
        rows.push((devices, secs));
    }
    println!(
        "\n{} parts, {nq} queries, results identical on 1..{count} GPUs",
        parts.len()
    );
    println!(
        "{:>8} {:>9} {:>8} {:>8}",
        "gpus", "wall_s", "q/s", "speedup"
    );
    for &(d, secs) in &rows {
        println!(
            "{d:>8} {secs:>9.3} {:>8.0} {:>8.2}",
            nq as f64 / secs,
            rows[0].1 / secs
        );
    }
    Ok(())
}
