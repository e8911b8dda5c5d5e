//! `genie-bench --mode serve-client`: the closed-loop load of `--mode serve` against a server in
//! another process (`genie serve`, each pinned to its own cores by the caller), so that the
//! figure is the server's alone, not shared with a load generator in the same process.
//!
//! The queries are the first `--distinct` keyword lines of `--queries`, one per request. Each is
//! first asked once and its answer kept; every later answer must equal it (a wrong or failed one
//! counts as an error). Every loop is bounded in time and requests; the server must listen on
//! 127.0.0.1 (or [::1]).

use crate::serve_load::{report, row, warmed_closed_loop, Level, Probe, Workload};
use anyhow::{bail, Context, Result};
use clap::Parser;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The command line of `--mode serve-client`.
#[derive(Parser, Debug)]
#[command(about = "Closed-loop load against a genie server in another process")]
pub struct ClientArgs {
    /// Always `serve-client`.
    #[arg(long)]
    pub mode: String,
    /// The search route, e.g. http://127.0.0.1:7711/v1/indexes/sift/search (loopback only).
    #[arg(long)]
    pub url: String,
    /// The requests' queries.
    #[command(flatten)]
    pub lines: QueryLines,
    /// Concurrent clients of each level, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,1024,4096")]
    pub clients: Vec<usize>,
    /// Seconds per level.
    #[arg(long, default_value_t = 8.0)]
    pub seconds: f64,
    /// Requests per level at most.
    #[arg(long, default_value_t = 2_000_000)]
    pub max_requests: usize,
    /// The label of the rows (what serves: "4 GPU").
    #[arg(long, default_value = "external")]
    pub label: String,
    /// Tokio worker threads of the client (default: the cores it may use).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Write the rows as CSV here.
    #[arg(long)]
    pub csv: Option<PathBuf>,
}

/// The keyword queries requests carry: the first `--distinct` lines of `--queries`, one a request.
#[derive(clap::Args, Debug, Clone)]
pub struct QueryLines {
    /// A file of keyword queries, one per line.
    #[arg(long)]
    pub queries: PathBuf,
    /// Distinct queries (the first lines of the file), cycled through.
    #[arg(long, default_value_t = 1024)]
    pub distinct: usize,
    /// Hits per query.
    #[arg(long, default_value_t = 100)]
    pub k: u32,
}

impl QueryLines {
    /// The request bodies ([`query_bodies`]).
    pub fn bodies(&self) -> Result<Vec<Vec<u8>>> {
        query_bodies(&self.queries, self.distinct, self.k)
    }
}

/// The request bodies of the first `distinct` keyword lines of `queries`, one query each:
/// `{"queries": [line], "k": k}`.
pub fn query_bodies(queries: &Path, distinct: usize, k: u32) -> Result<Vec<Vec<u8>>> {
    let file = std::fs::File::open(queries)
        .with_context(|| format!("cannot open {}", queries.display()))?;
    let lines: Vec<String> = BufReader::new(file)
        .lines()
        .take(distinct)
        .collect::<std::io::Result<_>>()?;
    if lines.is_empty() {
        bail!("{}: no queries", queries.display());
    }
    Ok(lines
        .iter()
        .map(|l| {
            serde_json::json!({"queries": [l], "k": k})
                .to_string()
                .into_bytes()
        })
        .collect())
}

/// Runs the levels and prints the table.
pub fn run(args: &ClientArgs) -> Result<()> {
    let host = args
        .url
        .strip_prefix("http://")
        .and_then(|r| r.split('/').next())
        .unwrap_or("");
    if !(host.starts_with("127.0.0.1:") || host.starts_with("[::1]:")) {
        bail!(
            "--url {}: the server under test must listen on 127.0.0.1 or [::1]",
            args.url
        );
    }
    let bodies = args.lines.bodies()?;
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(8, std::num::NonZeroUsize::get)
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .enable_all()
        .build()?;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(8192)
        .build()?;
    // each query asked once: its answer is the one every later request must get
    let expected = rt.block_on(async {
        let mut out = Vec::with_capacity(bodies.len());
        for body in &bodies {
            let bytes = client
                .post(&args.url)
                .header("content-type", "application/json")
                .body(body.clone())
                .send()
                .await?
                .error_for_status()?
                .bytes()
                .await?;
            let v: serde_json::Value = serde_json::from_slice(&bytes)?;
            out.push(
                genie::server::client::answer_of(&v["results"][0])
                    .map_err(|e| anyhow::anyhow!("the server's answer: {e}"))?,
            );
        }
        anyhow::Ok(out)
    })?;
    let workload = Arc::new(Workload { bodies, expected });
    let probe = Probe {
        service: None,
        gpu: None,
    };
    let mut levels: Vec<Level> = Vec::new();
    println!(
        "{} distinct queries, k {}, {threads} client threads, against {}",
        workload.bodies.len(),
        args.lines.k,
        args.url
    );
    for &c in &args.clients {
        let mut level = rt.block_on(warmed_closed_loop(
            &client,
            &args.url,
            &workload,
            c,
            args.seconds,
            args.max_requests,
            &probe,
        ))?;
        level.mode = "closed".into();
        level.config = args.label.clone();
        println!("{}", row(&level));
        levels.push(level);
    }
    let (table, csv) = report(&levels);
    println!("\n{table}");
    if let Some(path) = &args.csv {
        std::fs::write(path, csv).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}
