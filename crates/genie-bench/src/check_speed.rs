//! `genie-bench --mode check`: how fast an index file opens, and what bounds it. On one index
//! file (page cache warm) it times `InvertedIndex::load` (map, check every byte, check the
//! structure) and, beside it, the bare checksum pass that load makes (xxh3 of 16 MiB chunks on
//! all cores) over the same file mapped in different ways, so that the cost of faulting the
//! mapping in is told apart from the hashing:
//! - `fresh`: a new mapping, pages faulted in by the hashing itself (what load does);
//! - `populate`: a new mapping made with `MAP_POPULATE` (the kernel maps every page first, on
//!   one thread);
//! - `populate-read`: a new mapping, each chunk's pages asked for with
//!   `madvise(MADV_POPULATE_READ)` by the thread that hashes it;
//! - `faulted`: the mapping of the last pass again, its pages already mapped: the hashing alone;
//! - `read`: a sum of the faulted mapping's words, the host's read ceiling for the same bytes.
//!
//! Each line is the best and the median of `--repeats` timed runs after an untimed one.

use anyhow::{Context, Result};
use memmap2::{Advice, Mmap, MmapOptions};
use rayon::prelude::*;
use std::fs::File;
use std::path::PathBuf;
use std::time::Instant;
use xxhash_rust::xxh3::xxh3_64;

/// The command line of `genie-bench --mode check`.
#[derive(clap::Parser, Debug, Clone)]
#[command(
    name = "genie-bench --mode check",
    about = "how fast an index file opens: load, and the checksum pass over mappings made in several ways"
)]
pub struct CheckArgs {
    /// The mode; always `check` here.
    #[arg(long, default_value = "check")]
    pub mode: String,
    /// The index file.
    #[arg(long)]
    pub index: PathBuf,
    /// Timed runs of each measurement after an untimed one.
    #[arg(long, default_value_t = 5)]
    pub repeats: usize,
}

/// The checksum pass's chunk (genie-core's `CHUNK_LOG2`).
const CHUNK: usize = 1 << 24;

/// How a pass gets its mapping.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Way {
    Fresh,
    Populate,
    PopulateRead,
    Faulted,
    Read,
    Streamed,
    Max,
    Lanes,
    Fused,
    FusedPopulateRead,
}

impl Way {
    fn name(self) -> &'static str {
        match self {
            Way::Fresh => "fresh",
            Way::Populate => "populate",
            Way::PopulateRead => "populate-read",
            Way::Faulted => "faulted",
            Way::Read => "read",
            Way::Streamed => "faulted, streamed 64 KiB",
            Way::Max => "faulted, largest word only",
            Way::Lanes => "faulted, largest, 16 lanes",
            Way::Fused => "fresh, hash and largest",
            Way::FusedPopulateRead => "populate-read, hash and largest",
        }
    }
}

/// Maps `file` (read only), with `MAP_POPULATE` when asked.
fn map(file: &File, populate: bool) -> Result<Mmap> {
    let mut options = MmapOptions::new();
    if populate {
        options.populate();
    }
    // SAFETY: read only; the benchmark's own file, not changed while mapped.
    Ok(unsafe { options.map(file) }?)
}

/// Load's pass over the List Array: the chunk hashed and its largest word found, 64 KiB at a
/// time.
fn fused(c: &[u8]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut m = 0;
    for piece in c.chunks(1 << 16) {
        h.update(piece);
        m = genie_core::index::largest_word(piece).max(m);
    }
    h.digest() ^ u64::from(m)
}

/// One pass over `m` in the way `way`: the combined sum (so the work is not optimised away).
fn pass(m: &Mmap, way: Way) -> u64 {
    let base = m.as_ptr() as usize;
    m.par_chunks(CHUNK)
        .map(|c| match way {
            Way::Read => c
                .chunks_exact(8)
                .map(|w| u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]))
                .fold(0u64, u64::wrapping_add),
            Way::PopulateRead | Way::FusedPopulateRead => {
                // an error (a kernel before 5.14) only leaves the pages to be faulted
                let _ = m.advise_range(Advice::PopulateRead, c.as_ptr() as usize - base, c.len());
                if way == Way::PopulateRead {
                    xxh3_64(c)
                } else {
                    fused(c)
                }
            }
            Way::Streamed => {
                let mut h = xxhash_rust::xxh3::Xxh3::new();
                for piece in c.chunks(1 << 16) {
                    h.update(piece);
                }
                h.digest()
            }
            Way::Max => u64::from(c.chunks_exact(4).fold(0u32, |a, w| {
                a.max(u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            })),
            Way::Lanes => u64::from(genie_core::index::largest_word(c)),
            Way::Fused => fused(c),
            _ => xxh3_64(c),
        })
        .reduce(|| 0, |a, b| a.rotate_left(5) ^ b)
}

/// Best and median seconds of `repeats` timed runs of `f`, after an untimed one.
fn times(repeats: usize, mut f: impl FnMut() -> Result<()>) -> Result<(f64, f64)> {
    f()?;
    let mut t = Vec::with_capacity(repeats.max(1));
    for _ in 0..repeats.max(1) {
        let start = Instant::now();
        f()?;
        t.push(start.elapsed().as_secs_f64());
    }
    t.sort_by(f64::total_cmp);
    Ok((t[0], t[t.len() / 2]))
}

/// Runs the mode: prints a line per measurement.
pub fn run(args: &CheckArgs) -> Result<()> {
    let path = &args.index;
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let bytes = file.metadata()?.len() as f64;
    let threads = rayon::current_num_threads();
    println!(
        "check of {} ({:.1} MB) on {threads} threads, best / median of {}",
        path.display(),
        bytes / 1e6,
        args.repeats
    );
    let line = |what: &str, (best, median): (f64, f64)| {
        println!(
            "{what:<36} {:>9.1} / {:>9.1} ms  {:>6.1} GB/s",
            best * 1e3,
            median * 1e3,
            bytes / best / 1e9
        );
    };
    line(
        "load (map, check, structure)",
        times(args.repeats, || {
            genie_core::InvertedIndex::load(path)?;
            Ok(())
        })?,
    );
    let mut last = None;
    for way in [
        Way::Fresh,
        Way::Populate,
        Way::PopulateRead,
        Way::Fused,
        Way::FusedPopulateRead,
    ] {
        line(
            &format!("checksum pass, {}", way.name()),
            times(args.repeats, || {
                let m = map(&file, way == Way::Populate)?;
                std::hint::black_box(pass(&m, way));
                last = Some(m);
                Ok(())
            })?,
        );
    }
    let m = last.context("no mapping was made")?;
    for way in [Way::Faulted, Way::Streamed, Way::Max, Way::Lanes, Way::Read] {
        line(
            &format!("checksum pass, {}", way.name()),
            times(args.repeats, || {
                std::hint::black_box(pass(&m, way));
                Ok(())
            })?,
        );
    }
    Ok(())
}
