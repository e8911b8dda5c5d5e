//! `genie-bench --mode multiload`: a resident index against the same index in `--parts` parts
//! streamed through the GPU (genie_core's `PartedEngine`), on the synthetic workload
//! ([`crate::synthetic`]): the results must be identical; prints how much of the parts' uploads
//! the searches hid, and with `--csv FILE` writes one row per part.

use crate::bench_args::BenchArgs;
use crate::synthetic::{generate, queries};
use anyhow::{bail, Context, Result};
use genie_core::backend::cuda::Ceilings;
use genie_core::{Backend, CudaBackend, Engine, PartSource, PartedEngine, SearchParams};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

/// A resident index against the same index in `--parts` parts streamed through the GPU;
/// `ceilings` give the pinned upload ceiling printed beside the parts' upload speed.
pub fn run(args: &BenchArgs, gpu: &CudaBackend, ceilings: &Ceilings) -> Result<()> {
    let index = Arc::new(generate(args)?);
    let nq = args.queries.first().copied().unwrap_or(1024);
    let qs = queries(&index, args, nq);
    let params = SearchParams::top_k(args.k);
    let budget = gpu.memory_budget();
    let index_gb = index.num_postings() as f64 * 4e-9;
    println!(
        "multiload: index {index_gb:.2} GB, batch budget {:.2} GB ({:.1}x smaller than the index), {} parts, {nq} queries",
        budget as f64 * 1e-9,
        index_gb / (budget as f64 * 1e-9),
        args.parts
    );
    let t = Instant::now();
    let resident = Engine::with_backend(index.clone(), gpu)?;
    let upload_s = t.elapsed().as_secs_f64();
    resident.search(&qs[..8.min(nq)], &params)?; // warm-up
    let t = Instant::now();
    let want = resident.search(&qs, &params)?;
    let resident_s = t.elapsed().as_secs_f64();
    drop(resident);

    let parts: Vec<PartSource> = index
        .split(args.parts)
        .into_iter()
        .map(PartSource::Memory)
        .collect();
    let engine = PartedEngine::new(parts, vec![gpu])?;
    let t = Instant::now();
    let got = engine.search(&qs, &params)?;
    let parted_s = t.elapsed().as_secs_f64();
    if got != want {
        bail!("multi-loaded results differ from the resident ones");
    }
    let stats = engine.last_stats();
    let load: f64 = stats.iter().map(|s| s.load_s).sum();
    let search: f64 = stats.iter().map(|s| s.search_s).sum();
    // the first part's upload cannot overlap anything; the rest can hide behind searches
    let hideable = load - stats.first().map_or(0.0, |s| s.load_s);
    let exposed = (parted_s - search - stats.first().map_or(0.0, |s| s.load_s)).max(0.0);
    let hidden = if hideable > 0.0 {
        (1.0 - exposed / hideable).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut bw: Vec<f64> = stats
        .iter()
        .map(|s| s.bytes as f64 / s.load_s / 1e9)
        .collect();
    bw.sort_by(f64::total_cmp);
    let median_bw = bw.get(bw.len() / 2).copied().unwrap_or(0.0);
    println!("results identical to the resident index: true");
    println!("\n{:<28} {:>10}", "measure", "value");
    println!("{:<28} {:>10.3}", "resident upload s", upload_s);
    println!("{:<28} {:>10.3}", "resident search s", resident_s);
    println!("{:<28} {:>10.3}", "multi-load end-to-end s", parted_s);
    println!("{:<28} {:>10.3}", "  sum of part uploads s", load);
    println!("{:<28} {:>10.3}", "  sum of part searches s", search);
    println!(
        "{:<28} {:>9.0}%",
        "uploads hidden by searches",
        hidden * 100.0
    );
    println!("{:<28} {:>10.1}", "part upload GB/s (median)", median_bw);
    println!(
        "{:<28} {:>10.1}",
        "pinned H2D ceiling GB/s", ceilings.h2d_pinned_gbs
    );
    println!(
        "{:<28} {:>10.2}",
        "multi-load / resident",
        parted_s / resident_s
    );
    if let Some(path) = &args.csv {
        let mut csv = String::from("part_base,device,bytes,load_s,search_s\n");
        for s in &stats {
            writeln!(
                csv,
                "{},{},{},{:.6},{:.6}",
                s.base, s.device, s.bytes, s.load_s, s.search_s
            )?;
        }
        writeln!(csv, "# resident_upload_s={upload_s:.6} resident_s={resident_s:.6} parted_s={parted_s:.6} hidden={hidden:.4} queries={nq} objects={} budget={budget}", args.objects)?;
        std::fs::write(path, csv).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
