//! `genie-bench --mode live`: live indexes measured against the targets of their issue, in one
//! run, on SIFT-like objects (237 keywords of 67 values each, generated from a seed), k = 100:
//! - **ingest, library**: objects added by `--ingest-threads` threads in batches, each batch
//!   acknowledged durably (the log synced; concurrent batches share syncs);
//! - **segments**: an index of `--objects` objects, 90% in one segment (a file from the builder),
//!   10% added in ten batches (ten unmerged segments), 5% of all deleted; all queries searched,
//!   then the same data compacted into one segment and searched again: both throughputs, and
//!   whether the answers are identical;
//! - **filter**: the compacted index searched with a filter that allows 1% of the objects,
//!   against the unfiltered search; the first queries' answers checked against the CPU backend;
//! - **HTTP**: the server on 127.0.0.1 (a free port, this process only): `--read-clients` search
//!   clients in a closed loop, read-only, then while `--writers` writers add
//!   `--write-rate` objects/s; then the writers alone as fast as they go (ingest through HTTP).
//!
//! Every loop is bounded in time and stops by itself.

use crate::workloads::{attribute_keywords, attribute_queries};
use anyhow::{bail, Context, Result};
use clap::Parser;
use genie::core::{DeviceChoice, IndexBuilder, Query};
use genie::kind::{Answer, Filter, KindIndex, Request};
use genie::live::{place_live, LiveConfig, LiveIndex};
use genie::open::OpenSpec;
use genie::server::{serve_on, Limits, ServerConfig};
use genie::service::{BatchPolicy, Service};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const DIMS: u32 = 237;
const VALUES: u32 = 67;

/// The command line of `--mode live`.
#[derive(Debug, Parser)]
pub struct LiveArgs {
    /// The mode; always `live` here.
    #[arg(long, default_value = "live")]
    pub mode: String,
    /// Objects of the searched index.
    #[arg(long, default_value_t = 4_500_000)]
    pub objects: usize,
    /// Queries.
    #[arg(long, default_value_t = 1024)]
    pub queries: usize,
    /// Hits per query.
    #[arg(long, default_value_t = 100)]
    pub k: u32,
    /// cpu, gpu or auto.
    #[arg(long, default_value = "auto")]
    pub device: DeviceChoice,
    /// The folder for the indexes (default: a new folder in the temporary folder).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Objects added in the library ingest.
    #[arg(long, default_value_t = 2_000_000)]
    pub ingest_objects: usize,
    /// Threads adding in the library ingest.
    #[arg(long, default_value_t = 16)]
    pub ingest_threads: usize,
    /// Objects per add in the library ingest.
    #[arg(long, default_value_t = 8192)]
    pub ingest_batch: usize,
    /// HTTP writers.
    #[arg(long, default_value_t = 64)]
    pub writers: usize,
    /// Objects per HTTP write request.
    #[arg(long, default_value_t = 256)]
    pub write_batch: usize,
    /// Objects per second the writers add during the reads-under-writes loop.
    #[arg(long, default_value_t = 100_000)]
    pub write_rate: u64,
    /// HTTP search clients.
    #[arg(long, default_value_t = 1024)]
    pub read_clients: usize,
    /// Seconds of each HTTP loop.
    #[arg(long, default_value_t = 10.0)]
    pub secs: f64,
    /// Timed runs of each in-process search (after one warm-up).
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// The seed of the data.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// A CSV to write the rows to.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// The phases to run, of ingest, segments, http (http alone serves the objects as one
    /// built segment).
    #[arg(long, value_delimiter = ',', default_value = "ingest,segments,http")]
    pub phases: Vec<String>,
    /// The served live index's merge factor (the tiered policy's).
    #[arg(long, default_value_t = genie::live::policy::DEFAULT_FACTOR)]
    pub merge_factor: usize,
    /// The served live index's refresh interval, in milliseconds.
    #[arg(long, default_value_t = genie::server::DEFAULT_REFRESH_MS)]
    pub refresh_ms: u64,
}

/// One row of the table: what, the figure, its unit, a note.
struct Row(String, f64, &'static str, String);

fn value(r: &mut SmallRng) -> u32 {
    r.random_range(0..VALUES)
}

/// Runs the mode; prints the table (and writes the CSV).
pub fn run(args: &LiveArgs) -> Result<()> {
    let root = match &args.dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("genie-live-bench-{}", std::process::id())),
    };
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).with_context(|| format!("cannot make {}", root.display()))?;
    let result = run_in(args, &root);
    let _ = std::fs::remove_dir_all(&root);
    result
}

fn run_in(args: &LiveArgs, root: &std::path::Path) -> Result<()> {
    let t = Instant::now();
    let n = args.objects.max(args.ingest_objects);
    let keywords = attribute_keywords(n, DIMS, VALUES, args.seed, &value);
    let queries = attribute_queries(&keywords, DIMS, VALUES, 0, args.queries, args.seed, &value);
    println!(
        "data: {n} SIFT-like objects of {DIMS} keywords, {} queries, in {:.1} s",
        queries.len(),
        t.elapsed().as_secs_f64()
    );
    let object = |i: usize| keywords[i * DIMS as usize..(i + 1) * DIMS as usize].to_vec();
    let mut rows = Vec::new();
    let phase = |p: &str| args.phases.iter().any(|x| x == p);
    if phase("ingest") {
        ingest_library(args, root, &object, &mut rows)?;
    }
    let dir = if phase("segments") {
        let live = segments(args, root, &keywords, &queries, &mut rows)?;
        live.dir().to_path_buf()
    } else {
        // the objects as one built segment
        let d = DIMS as usize;
        let index = IndexBuilder::from_fixed(keywords[..args.objects * d].to_vec(), d)?
            .blocks((0..DIMS).map(|x| x * VALUES).collect())
            .keyword_space(DIMS * VALUES)
            .metadata("{}")
            .build()?;
        let file = root.join("base.genie");
        index.save(&file)?;
        LiveIndex::folder_of(&file)
    };
    if phase("http") {
        // the server's live index: the folder (re)opened with the background thread (flushes
        // and the tiered merges) and the server's refresh
        let config = LiveConfig {
            refresh: Duration::from_millis(args.refresh_ms),
            merge_factor: args.merge_factor,
            ..LiveConfig::default()
        };
        let live = if LiveIndex::is_live(&dir) {
            LiveIndex::open(&dir, config)?
        } else {
            LiveIndex::open_file(
                &genie::kind::Registry::default(),
                &root.join("base.genie"),
                config,
            )?
        };
        http(args, &live, &queries, &object, &mut rows)?;
    }
    let mut table = String::new();
    let _ = writeln!(
        table,
        "| measure | value | unit | note |\n| --- | ---: | --- | --- |"
    );
    for Row(what, v, unit, note) in &rows {
        let _ = writeln!(table, "| {what} | {v:.1} | {unit} | {note} |");
    }
    println!("\n{table}");
    if let Some(csv) = &args.csv {
        let mut out = String::from("measure,value,unit,note\n");
        for Row(what, v, unit, note) in &rows {
            let _ = writeln!(out, "{what},{v:.3},{unit},\"{}\"", note.replace('"', "'"));
        }
        std::fs::write(csv, out).with_context(|| format!("cannot write {}", csv.display()))?;
    }
    Ok(())
}

/// Library ingest: threads adding batches, each durable on return.
fn ingest_library(
    args: &LiveArgs,
    root: &std::path::Path,
    object: &(dyn Fn(usize) -> Vec<u32> + Sync),
    rows: &mut Vec<Row>,
) -> Result<()> {
    let config = LiveConfig {
        background: false,
        ..LiveConfig::default()
    };
    let live = LiveIndex::create(&root.join("ingest"), "keywords", config)?;
    let batches: Vec<std::ops::Range<usize>> = (0..args.ingest_objects)
        .step_by(args.ingest_batch.max(1))
        .map(|s| s..(s + args.ingest_batch).min(args.ingest_objects))
        .collect();
    // the objects made before the clock starts, as a caller would hold them
    let made: Vec<(Vec<u64>, Vec<Vec<u32>>)> = batches
        .iter()
        .map(|r| {
            (
                r.clone().map(|i| i as u64).collect(),
                r.clone().map(object).collect(),
            )
        })
        .collect();
    let work = Mutex::new(made.into_iter());
    let t = Instant::now();
    std::thread::scope(|s| -> Result<()> {
        let handles: Vec<_> = (0..args.ingest_threads)
            .map(|_| {
                s.spawn(|| -> Result<()> {
                    loop {
                        let next = work.lock().map_err(|_| anyhow::anyhow!("poisoned"))?.next();
                        let Some((ids, objects)) = next else {
                            return Ok(());
                        };
                        live.add_keywords(&ids, objects)?;
                    }
                })
            })
            .collect();
        for h in handles {
            h.join()
                .map_err(|_| anyhow::anyhow!("an ingest thread panicked"))??;
        }
        Ok(())
    })?;
    let secs = t.elapsed().as_secs_f64();
    let stats = live.stats();
    let rate = args.ingest_objects as f64 / secs;
    println!(
        "ingest (library): {} objects in {secs:.2} s = {rate:.0} objects/s, {} log syncs",
        args.ingest_objects, stats.log_syncs
    );
    rows.push(Row(
        "ingest, library, durable".into(),
        rate,
        "objects/s",
        format!(
            "{} threads, {} objects per add, {} log syncs",
            args.ingest_threads, args.ingest_batch, stats.log_syncs
        ),
    ));
    let t = Instant::now();
    live.snapshot()?;
    rows.push(Row(
        "first search after the ingest (segment built)".into(),
        t.elapsed().as_secs_f64() * 1e3,
        "ms",
        format!("{} objects made one in-memory segment", args.ingest_objects),
    ));
    Ok(())
}

/// The requests of all queries at k.
fn requests<'a>(queries: &'a [Query], k: u32, filter: Option<&'a Filter>) -> Vec<Request<'a>> {
    queries
        .iter()
        .map(|q| Request {
            query: q,
            k,
            min_count: None,
            filter,
        })
        .collect()
}

/// Queries per second of `runs` timed searches (median), and the answers; prints the device's
/// stage times of the timed runs.
fn timed(
    what: &str,
    index: &dyn KindIndex,
    batch: &[Request<'_>],
    runs: usize,
) -> Result<(f64, Vec<Answer>)> {
    let answers = index.search(batch)?;
    let _ = index.take_stage_times();
    let _ = index.take_search_stages();
    let mut secs = Vec::new();
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        index.search(batch)?;
        secs.push(t.elapsed().as_secs_f64());
    }
    secs.sort_by(f64::total_cmp);
    let host: Vec<String> = index
        .take_search_stages()
        .iter()
        .map(|(name, ms)| format!("{name} {:.1} ms", ms / runs.max(1) as f64))
        .collect();
    if !host.is_empty() {
        println!("  {what}: host per search: {}", host.join(", "));
    }
    if let Some(t) = index.take_stage_times() {
        let r = runs.max(1) as f64;
        println!(
            "  {what}: per search {:.1} ms; device match {:.2} ms, select {:.2} ms, copies {:.2} ms; host plan {:.2} ms, launch {:.2} ms, finish {:.2} ms; {} batches",
            1e3 * secs[secs.len() / 2],
            t.match_ms / r,
            t.select_ms / r,
            (t.transfer_in_ms + t.transfer_out_ms) / r,
            t.host_plan_ms / r,
            t.host_launch_ms / r,
            t.host_finish_ms / r,
            t.batches as f64 / r
        );
    }
    Ok((batch.len() as f64 / secs[secs.len() / 2], answers))
}

/// Segmented against merged, and the filter.
fn segments(
    args: &LiveArgs,
    root: &std::path::Path,
    keywords: &[u32],
    queries: &[Query],
    rows: &mut Vec<Row>,
) -> Result<Arc<LiveIndex>> {
    let n = args.objects;
    let d = DIMS as usize;
    let base_n = n * 9 / 10;
    let t = Instant::now();
    let base = IndexBuilder::from_fixed(keywords[..base_n * d].to_vec(), d)?
        .blocks((0..DIMS).map(|x| x * VALUES).collect())
        .keyword_space(DIMS * VALUES)
        .metadata("{}")
        .build()?;
    let file = root.join("base.genie");
    base.save(&file)?;
    drop(base);
    let config = LiveConfig {
        background: false,
        ..LiveConfig::default()
    };
    let live = LiveIndex::open_file(&genie::kind::Registry::default(), &file, config)?;
    let tenth = (n - base_n).div_ceil(10).max(1);
    for start in (base_n..n).step_by(tenth) {
        let end = (start + tenth).min(n);
        let ids: Vec<u64> = (start..end).map(|i| i as u64).collect();
        let objects = (start..end)
            .map(|i| keywords[i * d..(i + 1) * d].to_vec())
            .collect();
        live.add_keywords(&ids, objects)?;
        live.snapshot()?;
    }
    let mut rng = SmallRng::seed_from_u64(args.seed ^ 0xde1e7e);
    let mut deleted: Vec<u64> = (0..n as u64).filter(|_| rng.random_bool(0.05)).collect();
    deleted.sort_unstable();
    live.delete(&deleted)?;
    println!(
        "segments: {} segments, {} live objects (built in {:.1} s)",
        live.stats().segments,
        live.live_objects(),
        t.elapsed().as_secs_f64()
    );
    let spec = OpenSpec {
        device: args.device,
        devices: (args.device != DeviceChoice::Cpu).then(|| vec![0]),
        ..OpenSpec::default()
    };
    let index = place_live(&live, &spec)?.remove(0);
    let batch = requests(queries, args.k, None);
    let (raw_qps, raw_answers) = timed("unmerged", index.as_ref(), &batch, args.runs)?;
    let raw_segs = live.stats().segments;
    // the tiered policy's merges, as the background thread makes them (the base is in a tier
    // of its own: nothing is merged into it)
    while live.merge_once()? {}
    let (seg_qps, seg_answers) = timed("after the policy", index.as_ref(), &batch, args.runs)?;
    let segs = live.stats().segments;
    let t = Instant::now();
    live.compact()?;
    let compact_s = t.elapsed().as_secs_f64();
    let (merged_qps, merged_answers) = timed("merged", index.as_ref(), &batch, args.runs)?;
    let same = seg_answers == merged_answers && raw_answers == merged_answers;
    println!(
        "search: {segs} segments {seg_qps:.0} q/s, merged {merged_qps:.0} q/s ({:.1}%), identical: {same}",
        100.0 * seg_qps / merged_qps
    );
    if !same {
        bail!("the segmented and merged answers differ");
    }
    rows.push(Row(
        format!("search, {raw_segs} segments (10% in 10 unmerged batches, 5% deleted)"),
        raw_qps,
        "queries/s",
        format!("{:.1}% of merged", 100.0 * raw_qps / merged_qps),
    ));
    rows.push(Row(
        format!("search, {segs} segments (the 10% after the tiered policy, 5% deleted)"),
        seg_qps,
        "queries/s",
        format!("{} on {}", n, index.backend_name()),
    ));
    rows.push(Row(
        "search, merged into one".into(),
        merged_qps,
        "queries/s",
        format!("compacted in {compact_s:.1} s"),
    ));
    rows.push(Row(
        "segmented / merged".into(),
        100.0 * seg_qps / merged_qps,
        "%",
        "answers identical".into(),
    ));
    // a filter allowing 1% of the objects
    let allowed: Vec<u64> = (0..n as u64).filter(|_| rng.random_bool(0.01)).collect();
    let filter = Filter::allow(allowed);
    let fbatch = requests(queries, args.k, Some(&filter));
    let (f_qps, f_answers) = timed("filter 1%", index.as_ref(), &fbatch, args.runs)?;
    let check = 16.min(queries.len());
    let cpu = place_live(
        &live,
        &OpenSpec {
            device: DeviceChoice::Cpu,
            ..OpenSpec::default()
        },
    )?
    .remove(0);
    let want = cpu.search(&fbatch[..check])?;
    let right = want == f_answers[..check];
    let full = f_answers
        .iter()
        .filter(|a| a.hits.len() == args.k as usize)
        .count();
    println!(
        "filter 1%: {f_qps:.0} q/s against {merged_qps:.0} unfiltered; first {check} equal to the CPU: {right}; {full} of {} answers hold k hits",
        queries.len()
    );
    if !right {
        bail!("filtered answers differ from the CPU backend's");
    }
    rows.push(Row(
        "search, filter allowing 1%".into(),
        f_qps,
        "queries/s",
        format!(
            "{:.2}x the unfiltered; {full}/{} answers of k hits; CPU-checked",
            f_qps / merged_qps,
            queries.len()
        ),
    ));
    Ok(live)
}

/// Latencies in microseconds, gathered from many tasks.
#[derive(Default)]
struct Latencies(Mutex<Vec<u64>>);

impl Latencies {
    fn percentile(&self, p: f64) -> f64 {
        let mut v = self.0.lock().map(|v| v.clone()).unwrap_or_default();
        if v.is_empty() {
            return f64::NAN;
        }
        v.sort_unstable();
        let i = ((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1;
        v[i] as f64 / 1e3
    }
}

/// Search clients in a closed loop for `secs`: (queries/s, p50 ms, p99 ms, errors).
async fn readers(
    client: &reqwest::Client,
    url: &str,
    bodies: &Arc<Vec<Vec<u8>>>,
    clients: usize,
    secs: f64,
) -> (f64, f64, f64, u64) {
    let lat = Arc::new(Latencies::default());
    let errors = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(secs);
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let (client, url, bodies, lat, errors, done) = (
                client.clone(),
                url.to_string(),
                Arc::clone(bodies),
                Arc::clone(&lat),
                Arc::clone(&errors),
                Arc::clone(&done),
            );
            tokio::spawn(async move {
                let mut mine = Vec::new();
                let mut i = c;
                while Instant::now() < deadline {
                    let t = Instant::now();
                    let ok = match client
                        .post(&url)
                        .body(bodies[i % bodies.len()].clone())
                        .send()
                        .await
                    {
                        Ok(r) => r.status().is_success() && r.bytes().await.is_ok(),
                        Err(_) => false,
                    };
                    mine.push(t.elapsed().as_micros() as u64);
                    if !ok {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                    i += clients;
                }
                if let Ok(mut all) = lat.0.lock() {
                    all.extend(mine);
                }
            })
        })
        .collect();
    for t in tasks {
        let _ = t.await;
    }
    let secs = start.elapsed().as_secs_f64();
    (
        done.load(Ordering::Relaxed) as f64 / secs,
        lat.percentile(0.5),
        lat.percentile(0.99),
        errors.load(Ordering::Relaxed),
    )
}

/// Writers posting batches of objects until `stop`, at most `rate` objects/s in all (0: as fast
/// as they go); returns the objects acknowledged and the errors.
#[allow(clippy::too_many_arguments)]
async fn writers(
    client: &reqwest::Client,
    url: &str,
    bodies: &Arc<Vec<Vec<u8>>>,
    per_body: usize,
    writers: usize,
    rate: u64,
    stop: &Arc<AtomicBool>,
    deadline: Instant,
) -> (u64, u64) {
    let written = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let tasks: Vec<_> = (0..writers)
        .map(|w| {
            let (client, url, bodies, written, errors, stop) = (
                client.clone(),
                url.to_string(),
                Arc::clone(bodies),
                Arc::clone(&written),
                Arc::clone(&errors),
                Arc::clone(stop),
            );
            tokio::spawn(async move {
                let mut i = w;
                let mut sent = 0u64;
                while !stop.load(Ordering::Relaxed) && Instant::now() < deadline && i < bodies.len()
                {
                    if rate > 0 {
                        // this writer's share of the rate
                        let due = start
                            + Duration::from_secs_f64(
                                (sent * per_body as u64 * writers as u64) as f64 / rate as f64,
                            );
                        if let Some(wait) = due.checked_duration_since(Instant::now()) {
                            tokio::time::sleep(wait).await;
                        }
                    }
                    let ok = match client.post(&url).body(bodies[i].clone()).send().await {
                        Ok(r) => r.status().is_success() && r.bytes().await.is_ok(),
                        Err(_) => false,
                    };
                    if ok {
                        written.fetch_add(per_body as u64, Ordering::Relaxed);
                    } else {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                    sent += 1;
                    i += writers;
                }
            })
        })
        .collect();
    for t in tasks {
        let _ = t.await;
    }
    (
        written.load(Ordering::Relaxed),
        errors.load(Ordering::Relaxed),
    )
}

/// The server: reads alone, reads under writes, writes alone.
fn http(
    args: &LiveArgs,
    live: &Arc<LiveIndex>,
    queries: &[Query],
    object: &(dyn Fn(usize) -> Vec<u32> + Sync),
    rows: &mut Vec<Row>,
) -> Result<()> {
    let spec = OpenSpec {
        device: args.device,
        ..OpenSpec::default()
    };
    let replicas = place_live(live, &spec)?;
    let service = Service::new(vec![("sift".into(), replicas)], BatchPolicy::default())?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(8)
        .enable_all()
        .build()?;
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(8)
        .enable_all()
        .build()?;
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let base = format!("http://{}/v1/indexes/sift", listener.local_addr()?);
    let config = ServerConfig {
        writable: true,
        limits: Limits {
            max_k: 1000,
            ..Limits::default()
        },
        ..ServerConfig::default()
    };
    let (stop_server, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = service.clone();
    let server = rt.spawn(async move {
        serve_on(listener, served, &config, async {
            let _ = stopped.await;
        })
        .await
    });
    let search_bodies: Arc<Vec<Vec<u8>>> = Arc::new(
        queries
            .iter()
            .map(|q| {
                let items: Vec<serde_json::Value> = q
                    .items
                    .iter()
                    .map(|it| serde_json::json!([it.lo, it.hi, it.weight]))
                    .collect();
                serde_json::json!({"queries": [items], "k": args.k})
                    .to_string()
                    .into_bytes()
            })
            .collect(),
    );
    // write bodies: new ids past every object's, objects drawn from the data
    let total_writes =
        (args.write_rate as f64 * args.secs * 1.2) as usize + args.writers * args.write_batch * 64;
    let first_id = 1u64 << 40;
    let n_data = args.objects.max(1);
    let write_bodies: Arc<Vec<Vec<u8>>> = Arc::new(
        (0..total_writes.div_ceil(args.write_batch))
            .into_par_iter()
            .map(|b| {
                let objects: Vec<serde_json::Value> = (0..args.write_batch)
                    .map(|j| {
                        let i = b * args.write_batch + j;
                        serde_json::json!({"id": first_id + i as u64, "object": object(i % n_data)})
                    })
                    .collect();
                serde_json::json!({ "objects": objects })
                    .to_string()
                    .into_bytes()
            })
            .collect(),
    );
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(4096)
        .build()?;
    let search_url = format!("{base}/search");
    let write_url = format!("{base}/objects");
    // warm-up
    client_rt.block_on(readers(&client, &search_url, &search_bodies, 64, 1.0));
    let (r_qps, r_p50, r_p99, r_err) = client_rt.block_on(readers(
        &client,
        &search_url,
        &search_bodies,
        args.read_clients,
        args.secs,
    ));
    println!("reads alone: {r_qps:.0} q/s, p50 {r_p50:.1} ms, p99 {r_p99:.1} ms, {r_err} errors");
    let stop = Arc::new(AtomicBool::new(false));
    let (w_written, w_err, (m_qps, m_p50, m_p99, m_err), w_secs) = client_rt.block_on(async {
        let deadline = Instant::now() + Duration::from_secs_f64(args.secs);
        let t = Instant::now();
        let w = {
            let (client, url, bodies, stop) = (
                client.clone(),
                write_url.clone(),
                Arc::clone(&write_bodies),
                Arc::clone(&stop),
            );
            let (per, n, rate) = (args.write_batch, args.writers, args.write_rate);
            tokio::spawn(async move {
                writers(&client, &url, &bodies, per, n, rate, &stop, deadline).await
            })
        };
        let r = readers(
            &client,
            &search_url,
            &search_bodies,
            args.read_clients,
            args.secs,
        )
        .await;
        stop.store(true, Ordering::Relaxed);
        let (written, errors) = w.await.unwrap_or((0, u64::MAX));
        (written, errors, r, t.elapsed().as_secs_f64())
    });
    let w_rate = w_written as f64 / w_secs;
    let segments_then = live.stats().segments;
    println!(
        "reads under writes: {m_qps:.0} q/s, p50 {m_p50:.1} ms, p99 {m_p99:.1} ms ({:.2}x), {m_err} errors; writes {w_rate:.0} objects/s, {w_err} errors",
        m_p99 / r_p99
    );
    rows.push(Row(
        format!("reads alone, {} clients, p99", args.read_clients),
        r_p99,
        "ms",
        format!("{r_qps:.0} q/s, p50 {r_p50:.1} ms, {r_err} errors"),
    ));
    rows.push(Row(
        format!(
            "reads under {} writers, p99 (merge factor {}, refresh {} ms)",
            args.writers, args.merge_factor, args.refresh_ms
        ),
        m_p99,
        "ms",
        format!(
            "{:.2}x read-only p99; {m_qps:.0} q/s, {m_err} errors; writes {w_rate:.0} objects/s, {w_err} errors; {segments_then} segments at the end",
            m_p99 / r_p99
        ),
    ));
    // the writers alone, as fast as they go
    let stop = Arc::new(AtomicBool::new(false));
    let second_half = Arc::new(write_bodies[write_bodies.len() / 2..].to_vec());
    let (h_written, h_err, h_secs) = client_rt.block_on(async {
        let deadline = Instant::now() + Duration::from_secs_f64(args.secs);
        let t = Instant::now();
        let (written, errors) = writers(
            &client,
            &write_url,
            &second_half,
            args.write_batch,
            args.writers,
            0,
            &stop,
            deadline,
        )
        .await;
        (written, errors, t.elapsed().as_secs_f64())
    });
    let h_rate = h_written as f64 / h_secs;
    println!(
        "ingest (HTTP, {} writers): {h_rate:.0} objects/s, {h_err} errors",
        args.writers
    );
    rows.push(Row(
        format!("ingest, HTTP, {} writers, durable", args.writers),
        h_rate,
        "objects/s",
        format!(
            "{} objects per request; {h_err} errors; {} log syncs in all",
            args.write_batch,
            live.stats().log_syncs
        ),
    ));
    let _ = stop_server.send(());
    let _ = rt.block_on(server);
    service.shutdown();
    Ok(())
}
