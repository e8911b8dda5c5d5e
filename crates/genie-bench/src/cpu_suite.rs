//! `genie-bench --mode cpu`: the CPU backend on the suite's keyword-level workloads
//! ([`crate::workloads::keyword_suite`]), on any machine (no GPU needed). Per workload and
//! thread count it times the CPU's default path (the cost model's choice: the tiled count for
//! these workloads, in cohorts where the plan finds them worth it) and the same with cohorts off
//! on every query, and the c-PQ and the count table of the paper on a prefix of them, checks that
//! all give the same hits, and reports queries/s and G postings/s per core. `--similar G` makes
//! the queries near-duplicate groups. `--dump DIR` writes each workload with genie's top-k counts for
//! `bench/peers/scipy_csr.py --load DIR` (the SciPy peer of the same run).

use crate::workloads::{keyword_suite, postings_of};
use anyhow::{bail, Context, Result};
use genie_core::{CpuBackend, Engine, Hit, Method, Query, SearchParams};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// The command line of `genie-bench --mode cpu`.
#[derive(clap::Parser, Debug, Clone)]
#[command(
    name = "genie-bench --mode cpu",
    about = "the CPU backend (tiled count, c-PQ, count table) on the suite's keyword workloads"
)]
pub struct CpuArgs {
    /// The mode; always `cpu` here.
    #[arg(long, default_value = "cpu")]
    pub mode: String,
    /// The workloads' sizes divided by this (1: the paper's sizes).
    #[arg(long, default_value_t = 1)]
    pub scale_div: usize,
    /// Queries per workload (the default path runs them all).
    #[arg(long, default_value_t = 1024)]
    pub queries: usize,
    /// Queries of the c-PQ and the count table (a prefix of the others; their hits are compared).
    #[arg(long, default_value_t = 64)]
    pub reference_queries: usize,
    /// Hits per query.
    #[arg(long, default_value_t = 100)]
    pub k: u32,
    /// Thread counts to run, comma-separated (default: the machine's cores).
    #[arg(long, value_delimiter = ',')]
    pub threads: Vec<usize>,
    /// Also run the default path with tiles of these KiB of counters (comma-separated; the
    /// default path's own size is the host's, genie_core's `cpu_tiles::host_tile_bytes`).
    #[arg(long, value_delimiter = ',')]
    pub tile_kib: Vec<usize>,
    /// Timed runs of each measurement after an untimed one; the best is reported.
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Only these workloads (comma-separated names, e.g. SIFT-like,Tweets-like).
    #[arg(long, value_delimiter = ',')]
    pub workloads: Vec<String>,
    /// Near-duplicate queries: the workload's queries in groups of this many, each group's
    /// queries its first one with one item taken from their own (0: the workload's queries).
    /// Where queries share their lists so, the CPU counts them in cohorts.
    #[arg(long, default_value_t = 0)]
    pub similar: usize,
    /// Seed of the generated data (the suite's default, so the data are the GPU suite's).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Write each workload for the SciPy peer into DIR/<workload>/.
    #[arg(long, value_name = "DIR")]
    pub dump: Option<PathBuf>,
    /// Write the rows as CSV here.
    #[arg(long)]
    pub csv: Option<PathBuf>,
}

/// One timed measurement.
struct Timed {
    wall_s: f64,
    hits: Vec<Vec<Hit>>,
}

/// Searches `qs` on `engine` in `pool`: one untimed run, then the best of `repeats`.
fn timed(
    pool: &rayon::ThreadPool,
    engine: &Engine,
    qs: &[Query],
    params: &SearchParams,
    repeats: usize,
) -> Result<Timed> {
    let mut hits = pool.install(|| engine.search(qs, params))?;
    let mut best = f64::INFINITY;
    for _ in 0..repeats.max(1) {
        let t = Instant::now();
        hits = pool.install(|| engine.search(qs, params))?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(Timed { wall_s: best, hits })
}

/// 512 Mi pseudo-random 32-bit words (2 GiB, far past the caches) for the host's ceilings.
fn ceiling_words() -> Vec<u32> {
    use rayon::prelude::*;
    (0..(512u32 << 20))
        .into_par_iter()
        .map(|i| i.wrapping_mul(0x9E37_79B1).rotate_left(13) ^ i)
        .collect()
}

/// The best of three passes of `pass` over `words` on `threads` threads: G words per second.
fn best_rate(words: &[u32], threads: usize, pass: impl Fn(&[u32]) -> u64 + Sync) -> Result<f64> {
    use rayon::prelude::*;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t = Instant::now();
        let sum: u64 = pool.install(|| words.par_chunks(1 << 20).map(&pass).sum());
        std::hint::black_box(sum);
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(words.len() as f64 / best / 1e9)
}

/// Tiles of the increment ceiling, in bytes of 8-bit counters (powers of two): a core's L1, the default tile
/// (genie_core's `TILE_BYTES`) and a larger one.
const CEILING_TILES: [usize; 3] = [
    32 << 10,
    genie_core::backend::cpu_tiles::TILE_BYTES,
    1 << 20,
];

/// The host's ceiling for the tiled count's inner loop at its simplest, on `threads` threads: each
/// word streamed in picks a random 8-bit counter of a tile of `tile` bytes, incremented. G
/// increments a second.
fn increment_ceiling(words: &[u32], threads: usize, tile: usize) -> Result<f64> {
    let mask = tile.next_power_of_two() - 1;
    best_rate(words, threads, |c| {
        let mut counts = vec![0u8; mask + 1];
        for &w in c {
            let t = &mut counts[w as usize & mask];
            *t = t.wrapping_add(1);
        }
        counts.iter().map(|&x| u64::from(x)).sum()
    })
}

/// `queries` in groups of `group`: each group's queries are its first one with item `i % len`
/// taken from the query's own (an item of the same place: the same attribute, for the
/// attribute workloads).
fn near_duplicates(queries: &[Query], group: usize) -> Vec<Query> {
    queries
        .iter()
        .enumerate()
        .map(|(i, own)| {
            let mut q = queries[i / group * group].clone();
            let at = i % q.items.len().max(1);
            if let (Some(item), Some(&mine)) = (q.items.get_mut(at), own.items.get(at)) {
                *item = mine;
            }
            q
        })
        .collect()
}

/// Runs the mode; prints the table (and writes the CSV and dumps when asked).
pub fn run(args: &CpuArgs) -> Result<()> {
    let threads = if args.threads.is_empty() {
        vec![std::thread::available_parallelism().map_or(1, |n| n.get())]
    } else {
        args.threads.clone()
    };
    if let Some(root) = &args.dump {
        std::fs::create_dir_all(root)
            .with_context(|| format!("--dump: cannot create the folder {}", root.display()))?;
    }
    let header =
        "workload,objects,threads,path,queries,wall_s,qps,gpostings_per_s,gpostings_per_s_per_core";
    let mut csv = format!("{header}\n");
    let mut table = format!(
        "{:<15} {:>9} {:>7} {:<12} {:>7} {:>9} {:>9} {:>9} {:>10}\n",
        "workload",
        "objects",
        "threads",
        "path",
        "queries",
        "wall_s",
        "q/s",
        "Gpost/s",
        "Gpost/s/c"
    );
    let words = ceiling_words();
    for &t in &threads {
        let g = best_rate(&words, t, |c| c.iter().map(|&w| u64::from(w)).sum())?;
        println!(
            "host read ceiling, {t} threads: {g:.1} G words/s ({:.0} GB/s, {:.2} G postings/s per core)",
            g * 4.0,
            g / t as f64
        );
        for tile in CEILING_TILES {
            let inc = increment_ceiling(&words, t, tile)?;
            println!(
                "host increment ceiling, {t} threads, tile {} KiB: {inc:.1} G random 8-bit increments/s, indices streamed ({:.2} G per core)",
                tile >> 10,
                inc / t as f64
            );
        }
    }
    drop(words);
    let jobs = keyword_suite(args.scale_div, args.queries, args.seed);
    for job in jobs {
        if !args.workloads.is_empty() && !args.workloads.iter().any(|w| w == job.name) {
            continue;
        }
        let t = Instant::now();
        let (index, mut queries) = (job.make)()?;
        if args.similar > 1 {
            queries = near_duplicates(&queries, args.similar);
        }
        let index = Arc::new(index);
        println!(
            "{}: {} objects, {} postings, {} queries, generated in {:.1} s",
            job.name,
            index.num_objects(),
            index.num_postings(),
            queries.len(),
            t.elapsed().as_secs_f64()
        );
        let engine = Engine::with_backend(index.clone(), &CpuBackend::new())?;
        let nr = args.reference_queries.min(queries.len());
        let mut default_hits = None;
        for &t in &threads {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build()?;
            let mut runs = vec![
                (
                    "default".to_string(),
                    SearchParams::top_k(args.k),
                    queries.len(),
                ),
                (
                    "no cohorts".to_string(),
                    SearchParams {
                        cpu_cohorts: false,
                        ..SearchParams::top_k(args.k)
                    },
                    queries.len(),
                ),
            ];
            for &kib in &args.tile_kib {
                let params = SearchParams {
                    cpu_tile_bytes: kib << 10,
                    ..SearchParams::top_k(args.k)
                };
                runs.push((format!("tiles {kib}K"), params, queries.len()));
            }
            runs.extend([
                (
                    "c-PQ".to_string(),
                    SearchParams {
                        cpu_tiles: false,
                        ..SearchParams::top_k(args.k)
                    },
                    nr,
                ),
                (
                    "count table".to_string(),
                    SearchParams::top_k(args.k).with_method(Method::CountTable),
                    nr,
                ),
            ]);
            let mut reference: Option<Vec<Vec<Hit>>> = None;
            for (path, params, nq) in runs {
                let qs = &queries[..nq];
                let r = timed(&pool, &engine, qs, &params, args.repeats)?;
                match &reference {
                    None => reference = Some(r.hits.clone()),
                    Some(want) if want[..nq] != r.hits[..] => {
                        bail!("{}: {path} differs from the default path", job.name)
                    }
                    Some(_) => {}
                }
                let gps = postings_of(&index, qs) as f64 / r.wall_s / 1e9;
                let qps = nq as f64 / r.wall_s;
                writeln!(
                    table,
                    "{:<15} {:>9} {:>7} {:<12} {:>7} {:>9.4} {:>9.0} {:>9.2} {:>10.3}",
                    job.name,
                    index.num_objects(),
                    t,
                    path,
                    nq,
                    r.wall_s,
                    qps,
                    gps,
                    gps / t as f64
                )?;
                writeln!(
                    csv,
                    "{},{},{t},{path},{nq},{:.5},{:.1},{:.4},{:.4}",
                    job.name,
                    index.num_objects(),
                    r.wall_s,
                    qps,
                    gps,
                    gps / t as f64
                )?;
                if path == "default" && default_hits.is_none() {
                    default_hits = Some(r.hits);
                }
            }
        }
        if let (Some(root), Some(hits)) = (&args.dump, &default_hits) {
            let dir = root.join(job.name);
            crate::dump::dump_workload(&dir, job.name, &index, &queries, hits, args.k)?;
            println!("{} dumped to {}", job.name, dir.display());
        }
    }
    if let Some(path) = &args.csv {
        std::fs::write(path, &csv).with_context(|| format!("writing {}", path.display()))?;
    }
    println!("\n{table}");
    Ok(())
}
