//! `genie-bench --mode ceilings`, and the start of every GPU mode of the shared command line: GPU
//! 0 (with `--budget-mb` as its batch memory budget) and its hardware ceilings, printed.

use crate::bench_args::BenchArgs;
use anyhow::{Context, Result};
use genie_core::backend::cuda::{measure_ceilings, measure_staged_uploads, Ceilings};
use genie_core::{Backend, CudaBackend};

/// Opens GPU 0, measures its ceilings (zeros where they cannot be measured) and prints both.
pub fn open(args: &BenchArgs) -> Result<(CudaBackend, Ceilings)> {
    let mut gpu = CudaBackend::new(0).context("genie-bench needs a GPU")?;
    if let Some(mb) = args.budget_mb {
        gpu = gpu.with_budget(mb << 20);
    }
    let ceilings = measure_ceilings(0).unwrap_or_default();
    println!(
        "device: {}\nceilings: d2d copy {:.0} GB/s, random atomics {:.1} G/s, shared-tile increments {:.0} G/s, h2d pinned {:.1} GB/s, pageable {:.1} GB/s",
        gpu.name(),
        ceilings.copy_gbs,
        ceilings.atomic_gops,
        ceilings.shared_gops,
        ceilings.h2d_pinned_gbs,
        ceilings.h2d_pageable_gbs
    );
    Ok((gpu, ceilings))
}

/// `--mode ceilings`: beside the ceilings, 1 GiB of pageable memory uploaded through pinned
/// staging of each layout, as a share of the pinned ceiling.
pub fn staged_uploads(ceilings: &Ceilings) -> Result<()> {
    let rows = measure_staged_uploads(0, 1 << 30).context("staged uploads")?;
    println!(
        "staged upload of 1 GiB (lanes of two slots): lanes, slot, memory, GB/s, share of pinned"
    );
    for r in rows {
        println!(
            "  {:>3} x {:>6} KiB  {:<14} {:>6.1} GB/s  {:>4.0}%{}",
            r.lanes,
            r.slot_bytes >> 10,
            if r.write_combined {
                "write-combined"
            } else {
                "cached"
            },
            r.gbs,
            100.0 * r.gbs / ceilings.h2d_pinned_gbs,
            if r.default { "  (index uploads)" } else { "" }
        );
    }
    Ok(())
}
