//! `genie-bench --mode serve`: the server under load, beside the offline batch throughput of the
//! same queries in the same run.
//!
//! It generates the suite's SIFT-like workload (4.5 M objects of 237 keywords, 67 values each;
//! `--quick`: a tenth), serves it with `genie::server` on 127.0.0.1 (a free port, this process
//! only), and sends single-query requests over loopback HTTP:
//! - **closed loop**: C concurrent clients, each sending its next request when the last is
//!   answered, for each C of `--clients`;
//! - **open loop**: requests started at a fixed rate for each rate of `--rates` (latency counted
//!   from the scheduled start, so a slow server cannot hide its queueing);
//! - **soak** (`--soak-secs`): the closed loop at the largest C with `--malformed` of the requests
//!   malformed (each must get a 400), resident and device memory sampled at start and end.
//!
//! Every valid answer is checked against the offline answer of its query; a wrong one counts as
//! an error. Every loop is bounded in time and in requests, and stops by itself.

use crate::bench_args::BenchArgs;
use crate::workloads::attribute_workload;
use anyhow::{bail, Context, Result};
use genie::core::{DeviceChoice, Query};
use genie::kind::{keywords::Keywords, Answer, IndexSource, KindIndex, Request};
use genie::open::{place, Loaded, OpenSpec};
use genie::server::{serve_on, Limits, ServerConfig};
use genie::service::{BatchPolicy, Dispatch, IndexStats, Service};
use rand::rngs::SmallRng;
use rand::Rng;
use rand::SeedableRng;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the load test runs.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// Objects of the SIFT-like index.
    pub objects: usize,
    /// Distinct queries (cycled through).
    pub queries: usize,
    /// Hits per query.
    pub k: u32,
    /// Seed of the data.
    pub seed: u64,
    /// Concurrent clients of the closed-loop levels.
    pub clients: Vec<usize>,
    /// Request rates of the open-loop levels (requests per second).
    pub rates: Vec<f64>,
    /// Seconds per level.
    pub seconds: f64,
    /// Requests per level at most.
    pub max_requests: usize,
    /// Seconds of the soak (0: none).
    pub soak_secs: f64,
    /// Share of malformed requests in the soak.
    pub malformed: f64,
    /// Where to search.
    pub device: DeviceChoice,
    /// The GPUs (default all).
    pub devices: Option<Vec<usize>>,
    /// The service's largest batch.
    pub max_batch: usize,
    /// Sets of GPUs served in turn (`None`: `devices`).
    pub device_sets: Vec<Option<Vec<usize>>>,
    /// Dispatch rules served in turn.
    pub dispatches: Vec<Dispatch>,
}

/// `genie-bench --mode serve`: [`run`] with the options of the shared command line (the
/// SIFT-like index of 4.5 M objects, `--quick` a tenth; the first of `--queries` distinct
/// queries), then prints the table and writes the CSV to `--csv`.
pub fn run_from_args(args: &BenchArgs) -> Result<()> {
    let device = match args.device.as_str() {
        "cpu" => DeviceChoice::Cpu,
        "gpu" => DeviceChoice::Gpu,
        "auto" => DeviceChoice::Auto,
        other => bail!("--device {other}: expected cpu, gpu or auto"),
    };
    let opts = LoadOptions {
        objects: if args.quick { 450_000 } else { 4_500_000 },
        queries: args.queries.first().copied().unwrap_or(1024),
        k: args.k,
        seed: args.seed,
        clients: args.clients.clone(),
        rates: args.rates.clone(),
        seconds: args.seconds,
        max_requests: args.max_requests,
        soak_secs: args.soak_secs,
        malformed: args.malformed,
        device,
        devices: args.devices.clone(),
        max_batch: args.max_batch,
        device_sets: match &args.device_sets {
            None => vec![args.devices.clone()],
            Some(text) => text
                .split(';')
                .map(|set| {
                    set.split(',')
                        .map(|d| d.trim().parse::<usize>())
                        .collect::<Result<Vec<_>, _>>()
                        .map(Some)
                        .with_context(|| format!("--device-sets: {set:?} is not a list of GPUs"))
                })
                .collect::<Result<_>>()?,
        },
        dispatches: args.dispatch.clone(),
    };
    let (table, csv) = run(&opts)?;
    println!("\n{table}");
    if let Some(path) = &args.csv {
        std::fs::write(path, csv).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// One measured level.
#[derive(Clone, Debug, Default)]
pub struct Level {
    /// `offline`, `closed`, `open` or `soak`.
    pub mode: String,
    /// The replicas and the dispatch rule served (`4 GPU cohort`).
    pub config: String,
    /// Clients (closed loop).
    pub clients: usize,
    /// Offered rate (open loop).
    pub rate: f64,
    /// Wall seconds.
    pub secs: f64,
    /// Requests answered (valid ones).
    pub requests: u64,
    /// Answered queries per second.
    pub qps: f64,
    /// Latency percentiles, ms.
    pub p50: f64,
    /// 95th percentile, ms.
    pub p95: f64,
    /// 99th percentile, ms.
    pub p99: f64,
    /// Largest, ms.
    pub max: f64,
    /// Valid requests not answered correctly, and malformed ones not answered 400.
    pub errors: u64,
    /// Malformed requests sent (soak).
    pub malformed: u64,
    /// Batches launched.
    pub batches: u64,
    /// Batches by size bucket (1, 2, 4, ...).
    pub sizes: Vec<u64>,
    /// Resident bytes of this process at the start and end.
    pub rss: (u64, u64),
    /// Device bytes in use at the start and end (first GPU).
    pub device_mem: (u64, u64),
}

/// The answers of the offline batch, the request bodies and the service under test.
pub(crate) struct Workload {
    pub(crate) bodies: Vec<Vec<u8>>,
    pub(crate) expected: Vec<Answer>,
}

/// Runs the load test and returns the table text and the CSV.
pub fn run(opts: &LoadOptions) -> Result<(String, String)> {
    let t = Instant::now();
    let (index, queries) =
        attribute_workload(opts.objects, 237, 67, 0, opts.queries, opts.seed, |r| {
            r.random_range(0..67)
        })?;
    println!(
        "SIFT-like index: {} objects, {} postings; generated and built in {:.1} s",
        index.num_objects(),
        index.num_postings(),
        t.elapsed().as_secs_f64()
    );
    let loaded = Loaded {
        source: IndexSource::new(
            "SIFT-like (generated)".into(),
            Some(Arc::new(index)),
            serde_json::json!({}),
        ),
        kind: Arc::new(Keywords),
    };
    let mut levels = Vec::new();
    let mut workload: Option<Arc<Workload>> = None;
    let sets = opts.device_sets.len();
    for (s, set) in opts.device_sets.iter().enumerate() {
        let spec = OpenSpec {
            device: opts.device,
            devices: set.clone(),
            ..OpenSpec::default()
        };
        for (d, &dispatch) in opts.dispatches.iter().enumerate() {
            let replicas = place(&loaded, &spec).context("cannot place the index")?;
            let names: Vec<String> = replicas.iter().map(|r| r.backend_name()).collect();
            let config = format!("{} {}", describe(&replicas), dispatch.name());
            println!("{config}: replicas {}", names.join(", "));
            let workload = match &workload {
                Some(w) => Arc::clone(w),
                None => {
                    let (mut offline, expected) = offline(replicas[0].as_ref(), &queries, opts.k)?;
                    offline.config = describe(&replicas[..1]);
                    levels.push(offline);
                    let w = Arc::new(Workload {
                        bodies: queries.iter().map(|q| body_of(q, opts.k)).collect(),
                        expected,
                    });
                    workload = Some(Arc::clone(&w));
                    w
                }
            };
            let last = s + 1 == sets && d + 1 == opts.dispatches.len();
            serve_levels(
                opts,
                replicas,
                dispatch,
                &workload,
                &config,
                last,
                &mut levels,
            )?;
        }
    }
    Ok(report(&levels))
}

/// "1 GPU", "4 GPU", "CPU": what the replicas are.
fn describe(replicas: &[Arc<dyn KindIndex>]) -> String {
    match replicas
        .iter()
        .filter(|r| r.gpu_ordinal().is_some())
        .count()
    {
        0 => "CPU".into(),
        n => format!("{n} GPU"),
    }
}

/// Serves `replicas` under `dispatch` on 127.0.0.1 and runs the closed- and open-loop levels
/// (and, when `last`, the soak) against it, each level labelled `config`.
#[allow(clippy::too_many_arguments)]
fn serve_levels(
    opts: &LoadOptions,
    replicas: Vec<Arc<dyn KindIndex>>,
    dispatch: Dispatch,
    workload: &Arc<Workload>,
    config: &str,
    last: bool,
    levels: &mut Vec<Level>,
) -> Result<()> {
    let gpu = replicas[0].gpu_ordinal();
    let policy = BatchPolicy {
        max_batch: opts.max_batch,
        dispatch,
        ..BatchPolicy::default()
    };
    let service = Service::new(vec![("sift".to_string(), replicas)], policy)?;
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(8)
        .thread_name("server")
        .enable_all()
        .build()?;
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(8)
        .thread_name("client")
        .enable_all()
        .build()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let listener = server_rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let url = format!("http://{}/v1/indexes/sift/search", listener.local_addr()?);
    let server_config = ServerConfig {
        limits: Limits::default(),
        ..ServerConfig::default()
    };
    let served = service.clone();
    let server = server_rt.spawn(async move {
        serve_on(listener, served, &server_config, async {
            let _ = stopped.await;
        })
        .await
    });
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(4096)
        .build()?;
    let probe = Probe {
        service: Some(service.clone()),
        gpu,
    };
    let mut push = |mut level: Level, mode: &str| {
        level.mode = mode.into();
        level.config = config.into();
        println!("{}", row(&level));
        // the batch times the cohort rule works from
        if let Some(s) = service.stats().first() {
            let lines: Vec<String> = s
                .batch_lines
                .iter()
                .map(|l| match l {
                    Some(l) => format!(
                        "{:.2} ms + {:.1} us/query",
                        l.fixed * 1e3,
                        l.per_query * 1e6
                    ),
                    None => "not fitted".into(),
                })
                .collect();
            println!("  batch time per replica: {}", lines.join("; "));
        }
        levels.push(level);
    };
    for &c in &opts.clients {
        let level = client_rt.block_on(warmed_closed_loop(
            &client,
            &url,
            workload,
            c,
            opts.seconds,
            opts.max_requests,
            &probe,
        ))?;
        push(level, "closed");
    }
    for &rate in &opts.rates {
        let level = client_rt.block_on(open_loop(
            &client,
            &url,
            workload,
            rate,
            opts.seconds,
            opts.max_requests,
            &probe,
        ))?;
        push(level, "open");
    }
    if last && opts.soak_secs > 0.0 {
        let c = opts.clients.iter().copied().max().unwrap_or(64);
        let level = client_rt.block_on(closed_loop(
            &client,
            &url,
            workload,
            c,
            opts.soak_secs,
            usize::MAX,
            opts.malformed,
            &probe,
        ))?;
        push(level, "soak");
    }
    let _ = stop.send(());
    server_rt
        .block_on(server)
        .context("the server task")?
        .context("the server")?;
    drop(service);
    Ok(())
}

/// The offline batch: every query in one search on the first replica (an untimed run first,
/// then the median of three).
fn offline(index: &dyn KindIndex, queries: &[Query], k: u32) -> Result<(Level, Vec<Answer>)> {
    let requests: Vec<Request<'_>> = queries
        .iter()
        .map(|q| Request {
            query: q,
            k,
            min_count: None,
            filter: None,
        })
        .collect();
    let expected = index.search(&requests)?;
    let mut times = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let again = index.search(&requests)?;
        times.push(t.elapsed().as_secs_f64());
        if again != expected {
            bail!("the offline batch gave different answers on a second run");
        }
    }
    times.sort_by(f64::total_cmp);
    let secs = times[1];
    let level = Level {
        mode: "offline".into(),
        secs,
        requests: queries.len() as u64,
        qps: queries.len() as f64 / secs,
        batches: 1,
        ..Level::default()
    };
    println!("{}", row(&level));
    Ok((level, expected))
}

/// A request body of one query: its keywords as a text line.
fn body_of(q: &Query, k: u32) -> Vec<u8> {
    let line: Vec<String> = q
        .items
        .iter()
        .map(|it| {
            if it.lo == it.hi {
                it.lo.to_string()
            } else {
                format!("{}-{}", it.lo, it.hi)
            }
        })
        .collect();
    serde_json::json!({"queries": [line.join(" ")], "k": k})
        .to_string()
        .into_bytes()
}

/// Malformed request bodies of the soak, each of which must get a 400.
const MALFORMED: [&str; 5] = [
    "{\"queries\": [\"1 2 x\"], \"k\": 100}",
    "{\"queries\": [\"5-1\"]}",
    "{\"queries\": [\"1\"], \"k\": 1000000}",
    "{\"queries\": [\"1\"], \"kk\": 3}",
    "{not json",
];

/// Latencies in a fixed histogram (20 µs buckets up to 5 s, the exact maximum beside), so that
/// the memory of the load generator stays flat however long it runs: the soak's resident memory
/// is then the server's.
struct Latencies {
    buckets: Vec<AtomicU64>,
    max_us: AtomicU64,
}

/// Width of a latency bucket, µs.
const BUCKET_US: u64 = 20;

impl Latencies {
    fn new() -> Self {
        Self {
            buckets: (0..250_000).map(|_| AtomicU64::new(0)).collect(),
            max_us: AtomicU64::new(0),
        }
    }

    fn add(&self, us: u64) {
        let b = ((us / BUCKET_US) as usize).min(self.buckets.len() - 1);
        self.buckets[b].fetch_add(1, Ordering::Relaxed);
        self.max_us.fetch_max(us, Ordering::Relaxed);
    }

    fn count(&self) -> u64 {
        self.buckets.iter().map(|b| b.load(Ordering::Relaxed)).sum()
    }

    /// The `p` quantile in ms (the upper edge of its bucket, at most the maximum).
    fn quantile(&self, p: f64) -> f64 {
        let n = self.count();
        if n == 0 {
            return 0.0;
        }
        let rank = ((n - 1) as f64 * p).round() as u64 + 1;
        let mut seen = 0;
        let max = self.max_us.load(Ordering::Relaxed);
        for (i, b) in self.buckets.iter().enumerate() {
            seen += b.load(Ordering::Relaxed);
            if seen >= rank {
                return ((i as u64 + 1) * BUCKET_US).min(max) as f64 / 1e3;
            }
        }
        max as f64 / 1e3
    }
}

/// What is read before and after a level.
pub(crate) struct Probe {
    /// The service under test, when it runs in this process.
    pub(crate) service: Option<Service>,
    pub(crate) gpu: Option<usize>,
}

impl Probe {
    fn stats(&self) -> IndexStats {
        self.service
            .as_ref()
            .and_then(|s| s.stats().into_iter().next())
            .unwrap_or_default()
    }

    fn memory(&self) -> (u64, u64) {
        let rss = genie::server::metrics::resident_bytes().unwrap_or(0);
        let dev = self
            .gpu
            .and_then(genie::core::backend::cuda::device_memory)
            .map_or(0, |(free, total)| total - free);
        (rss, dev)
    }
}

/// The outcome of one request: latency in µs, and whether it was right.
async fn one(
    client: &reqwest::Client,
    url: &str,
    body: Vec<u8>,
    expected: Option<&Answer>,
) -> (u64, bool) {
    let t = Instant::now();
    let sent = client.post(url).body(body).send().await;
    let ok = match sent {
        Ok(r) => {
            let status = r.status().as_u16();
            match (r.bytes().await, expected) {
                (Ok(bytes), Some(want)) => status == 200 && answer_matches(&bytes, want),
                (Ok(_), None) => status == 400,
                (Err(_), _) => false,
            }
        }
        Err(_) => false,
    };
    (t.elapsed().as_micros() as u64, ok)
}

fn answer_matches(bytes: &[u8], want: &Answer) -> bool {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(bytes) else {
        return false;
    };
    genie::server::client::answer_of(&v["results"][0]).is_ok_and(|a| &a == want)
}

/// [`closed_loop`] of valid requests for `secs`, after a warm-up of one second at the same
/// concurrency (which opens the connections, and fits the batch times the cohort rule uses).
pub(crate) async fn warmed_closed_loop(
    client: &reqwest::Client,
    url: &str,
    w: &Arc<Workload>,
    clients: usize,
    secs: f64,
    cap: usize,
    probe: &Probe,
) -> Result<Level> {
    closed_loop(client, url, w, clients, 1.0, cap, 0.0, probe).await?;
    closed_loop(client, url, w, clients, secs, cap, 0.0, probe).await
}

/// Closed loop: `clients` tasks, each sending its next request when the last is answered,
/// until `secs` pass or `cap` requests are sent; a share `malformed` of them malformed.
#[allow(clippy::too_many_arguments)]
async fn closed_loop(
    client: &reqwest::Client,
    url: &str,
    w: &Arc<Workload>,
    clients: usize,
    secs: f64,
    cap: usize,
    malformed: f64,
    probe: &Probe,
) -> Result<Level> {
    let before = probe.stats();
    let mem0 = probe.memory();
    let next = Arc::new(AtomicUsize::new(0));
    let bad_sent = Arc::new(AtomicU64::new(0));
    let lat = Arc::new(Latencies::new());
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(secs);
    let mut tasks = Vec::new();
    for c in 0..clients {
        let (client, url, w, next, bad_sent, lat) = (
            client.clone(),
            url.to_string(),
            Arc::clone(w),
            Arc::clone(&next),
            Arc::clone(&bad_sent),
            Arc::clone(&lat),
        );
        tasks.push(tokio::spawn(async move {
            let mut rng = SmallRng::seed_from_u64(c as u64);
            let mut errors = 0u64;
            while Instant::now() < deadline {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= cap {
                    break;
                }
                if malformed > 0.0 && rng.random_bool(malformed.min(1.0)) {
                    bad_sent.fetch_add(1, Ordering::Relaxed);
                    let body = MALFORMED[i % MALFORMED.len()].as_bytes().to_vec();
                    let (_, ok) = one(&client, &url, body, None).await;
                    errors += u64::from(!ok);
                    continue;
                }
                let q = i % w.bodies.len();
                let (us, ok) = one(&client, &url, w.bodies[q].clone(), Some(&w.expected[q])).await;
                lat.add(us);
                errors += u64::from(!ok);
            }
            errors
        }));
    }
    let mut errors = 0;
    for t in tasks {
        errors += t.await?;
    }
    let secs = start.elapsed().as_secs_f64();
    let mut level = summarize(&lat, errors, secs, &before, &probe.stats());
    level.clients = clients;
    level.malformed = bad_sent.load(Ordering::Relaxed);
    level.rss = (mem0.0, probe.memory().0);
    level.device_mem = (mem0.1, probe.memory().1);
    Ok(level)
}

/// Open loop: a request started every `1 / rate` seconds (late ones at once), latency from the
/// scheduled start, for `secs` or `cap` requests.
async fn open_loop(
    client: &reqwest::Client,
    url: &str,
    w: &Arc<Workload>,
    rate: f64,
    secs: f64,
    cap: usize,
    probe: &Probe,
) -> Result<Level> {
    let before = probe.stats();
    let mem0 = probe.memory();
    let start = Instant::now();
    let period = Duration::from_secs_f64(1.0 / rate.max(1e-3));
    let total = ((secs * rate) as usize).min(cap);
    let mut tasks = Vec::with_capacity(total);
    for i in 0..total {
        let at = start + period.mul_f64(i as f64);
        tokio::time::sleep_until(at.into()).await;
        let (client, url, w) = (client.clone(), url.to_string(), Arc::clone(w));
        tasks.push(tokio::spawn(async move {
            let q = i % w.bodies.len();
            let (_, ok) = one(&client, &url, w.bodies[q].clone(), Some(&w.expected[q])).await;
            (at.elapsed().as_micros() as u64, ok)
        }));
    }
    let lat = Latencies::new();
    let mut errors = 0;
    for t in tasks {
        let (us, ok) = t.await?;
        lat.add(us);
        errors += u64::from(!ok);
    }
    let secs = start.elapsed().as_secs_f64();
    let mut level = summarize(&lat, errors, secs, &before, &probe.stats());
    level.rate = rate;
    level.rss = (mem0.0, probe.memory().0);
    level.device_mem = (mem0.1, probe.memory().1);
    Ok(level)
}

fn summarize(
    lat: &Latencies,
    errors: u64,
    secs: f64,
    before: &IndexStats,
    after: &IndexStats,
) -> Level {
    let n = lat.count();
    Level {
        secs,
        requests: n,
        qps: n as f64 / secs.max(1e-9),
        p50: lat.quantile(0.5),
        p95: lat.quantile(0.95),
        p99: lat.quantile(0.99),
        max: lat.max_us.load(Ordering::Relaxed) as f64 / 1e3,
        errors,
        batches: after.batches - before.batches,
        sizes: after
            .batch_sizes
            .iter()
            .zip(&before.batch_sizes)
            .map(|(a, b)| a - b)
            .collect(),
        ..Level::default()
    }
}

/// The table line of a level.
pub(crate) fn row(l: &Level) -> String {
    let hist: Vec<String> = l
        .sizes
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(i, n)| format!("{}:{n}", 1u64 << i))
        .collect();
    format!(
        "{:<14} {:<8} {:>7} {:>7.0} {:>7.1} {:>8} {:>9.0} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>6} {:>6} {:>7} {}",
        l.config,
        l.mode,
        l.clients,
        l.rate,
        l.secs,
        l.requests,
        l.qps,
        l.p50,
        l.p95,
        l.p99,
        l.max,
        l.errors,
        l.malformed,
        l.batches,
        hist.join(" ")
    )
}

/// The table and the CSV of all levels.
pub(crate) fn report(levels: &[Level]) -> (String, String) {
    let mut table = format!(
        "{:<14} {:<8} {:>7} {:>7} {:>7} {:>8} {:>9} {:>8} {:>8} {:>8} {:>8} {:>6} {:>6} {:>7} batch sizes (size:count)\n",
        "config", "mode", "clients", "rate", "secs", "requests", "q/s", "p50_ms", "p95_ms", "p99_ms", "max_ms", "errors", "bad", "batches"
    );
    let mut csv = String::from(
        "config,mode,clients,rate,secs,requests,qps,p50_ms,p95_ms,p99_ms,max_ms,errors,malformed,batches,rss_start,rss_end,device_start,device_end,batch_sizes\n",
    );
    let offline = levels
        .iter()
        .find(|l| l.mode == "offline")
        .map_or(0.0, |l| l.qps);
    for l in levels {
        let _ = writeln!(table, "{}", row(l));
        let sizes: Vec<String> = l.sizes.iter().map(u64::to_string).collect();
        let _ = writeln!(
            csv,
            "{},{},{},{},{:.3},{},{:.1},{:.3},{:.3},{:.3},{:.3},{},{},{},{},{},{},{},{}",
            l.config,
            l.mode,
            l.clients,
            l.rate,
            l.secs,
            l.requests,
            l.qps,
            l.p50,
            l.p95,
            l.p99,
            l.max,
            l.errors,
            l.malformed,
            l.batches,
            l.rss.0,
            l.rss.1,
            l.device_mem.0,
            l.device_mem.1,
            sizes.join(";")
        );
    }
    for l in levels
        .iter()
        .filter(|l| l.mode != "offline" && offline > 0.0)
    {
        let _ = writeln!(
            table,
            "{} {} {} clients {:.0}/s: {:.1}% of the offline batch throughput ({offline:.0} q/s); memory rss {:.0} -> {:.0} MB, device {:.0} -> {:.0} MB",
            l.config,
            l.mode,
            l.clients,
            l.rate,
            100.0 * l.qps / offline.max(1e-9),
            l.rss.0 as f64 / 1e6,
            l.rss.1 as f64 / 1e6,
            l.device_mem.0 as f64 / 1e6,
            l.device_mem.1 as f64 / 1e6
        );
    }
    (table, csv)
}
