//! `genie-bench --mode check`: how fast an index file opens, and what bounds it. On one index
//! file (page cache warm) it times `InvertedIndex::load` (map, check every byte, check the
//! structure) and, beside it, passes over the same file in 16 MiB chunks on all cores (load's
//! chunks), each a [`Work`] over a [`Mapping`], so that the cost of faulting the mapping in is
//! told apart from the hashing and the scan for the largest posting:
//! - mappings: `fresh` (a new mapping, faulted in by the work itself, as load's), `populate`
//!   (`MAP_POPULATE`: the kernel maps every page first, on one thread), `populate-read` (each
//!   chunk's pages asked for with `madvise(MADV_POPULATE_READ)` by the thread that works on it),
//!   `faulted` (the last fresh mapping again, its pages already mapped: the work alone);
//! - work: the checksum (`xxh3_64` of the chunk, or streamed 64 KiB at a time), the checksum and
//!   the largest word as load does them over the List Array (`index::sum_and_largest`), the
//!   largest word alone (one running maximum, or `index::largest_word`'s 16 lanes), and a sum of
//!   the words: the host's read ceiling for the same bytes.
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

/// The passes' chunk (genie-core's `CHUNK_LOG2`).
const CHUNK: usize = 1 << 24;

/// How a pass gets its mapping.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mapping {
    Fresh,
    Populate,
    PopulateRead,
    Faulted,
}

/// What a pass does with each chunk.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Work {
    Checksum,
    Streamed,
    ChecksumAndLargest,
    Largest,
    LargestLanes,
    Read,
}

/// The passes timed, in order: those over fresh mappings, then those over the last one, faulted.
const PASSES: [(Mapping, Work); 10] = [
    (Mapping::Fresh, Work::Checksum),
    (Mapping::Populate, Work::Checksum),
    (Mapping::PopulateRead, Work::Checksum),
    (Mapping::Fresh, Work::ChecksumAndLargest),
    (Mapping::PopulateRead, Work::ChecksumAndLargest),
    (Mapping::Faulted, Work::Checksum),
    (Mapping::Faulted, Work::Streamed),
    (Mapping::Faulted, Work::Largest),
    (Mapping::Faulted, Work::LargestLanes),
    (Mapping::Faulted, Work::Read),
];

/// A pass's line label.
fn label(mapping: Mapping, work: Work) -> String {
    let mapping = match mapping {
        Mapping::Fresh => "fresh",
        Mapping::Populate => "populate",
        Mapping::PopulateRead => "populate-read",
        Mapping::Faulted => "faulted",
    };
    let work = match work {
        Work::Checksum => "checksum",
        Work::Streamed => "checksum streamed 64 KiB",
        Work::ChecksumAndLargest => "checksum and largest",
        Work::Largest => "largest, one maximum",
        Work::LargestLanes => "largest, 16 lanes",
        Work::Read => "read (sum of words)",
    };
    format!("{mapping}, {work}")
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

/// One chunk's work; a number made of all of it (so that it is not optimised away).
fn work(c: &[u8], work: Work) -> u64 {
    match work {
        Work::Checksum => xxh3_64(c),
        Work::Streamed => {
            let mut h = xxhash_rust::xxh3::Xxh3::new();
            for piece in c.chunks(1 << 16) {
                h.update(piece);
            }
            h.digest()
        }
        Work::ChecksumAndLargest => {
            let (sum, largest) = genie_core::index::sum_and_largest(c);
            sum ^ u64::from(largest)
        }
        Work::Largest => u64::from(c.chunks_exact(4).fold(0u32, |a, w| {
            a.max(u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        })),
        Work::LargestLanes => u64::from(genie_core::index::largest_word(c)),
        Work::Read => c
            .chunks_exact(8)
            .map(|w| u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]))
            .fold(0u64, u64::wrapping_add),
    }
}

/// One pass over `m`, each chunk's pages first asked for when `populate_read`.
fn pass(m: &Mmap, populate_read: bool, what: Work) -> u64 {
    let base = m.as_ptr() as usize;
    m.par_chunks(CHUNK)
        .map(|c| {
            if populate_read {
                // an error (a kernel before 5.14) only leaves the pages to be faulted
                let _ = m.advise_range(Advice::PopulateRead, c.as_ptr() as usize - base, c.len());
            }
            work(c, what)
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
    let mut last: Option<Mmap> = None;
    for (mapping, what) in PASSES {
        let timed = times(args.repeats, || {
            if mapping == Mapping::Faulted {
                let m = last
                    .as_ref()
                    .context("no fresh mapping before a faulted pass")?;
                std::hint::black_box(pass(m, false, what));
                return Ok(());
            }
            let m = map(&file, mapping == Mapping::Populate)?;
            std::hint::black_box(pass(&m, mapping == Mapping::PopulateRead, what));
            last = Some(m);
            Ok(())
        })?;
        line(&label(mapping, what), timed);
    }
    Ok(())
}
