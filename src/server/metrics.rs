//! The server's counters and their Prometheus text (`GET /metrics`): requests by status, a
//! latency histogram, the queues and batches of each index (from [`Service::stats`]), device
//! memory in use and the process's resident memory.

use crate::service::{IndexStats, Service, SIZE_BUCKETS};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds of the latency histogram's buckets, in seconds.
const LATENCY_BOUNDS: [f64; 14] = [
    0.0005, 0.001, 0.002, 0.003, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0,
];

/// Request counters, shared by the handlers.
#[derive(Default)]
pub struct Metrics {
    by_status: Mutex<BTreeMap<u16, u64>>,
    latency: [AtomicU64; LATENCY_BOUNDS.len() + 1],
    latency_sum_us: AtomicU64,
}

impl Metrics {
    /// Records one answered request.
    pub fn record(&self, status: u16, took: Duration) {
        *self
            .by_status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(status)
            .or_default() += 1;
        let secs = took.as_secs_f64();
        let bucket = LATENCY_BOUNDS
            .iter()
            .position(|&b| secs <= b)
            .unwrap_or(LATENCY_BOUNDS.len());
        self.latency[bucket].fetch_add(1, Ordering::Relaxed);
        self.latency_sum_us
            .fetch_add(took.as_micros() as u64, Ordering::Relaxed);
    }

    /// Requests answered with `status` so far.
    pub fn count(&self, status: u16) -> u64 {
        self.by_status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&status)
            .copied()
            .unwrap_or(0)
    }

    /// The Prometheus text of these counters and the service's.
    pub fn render(&self, service: &Service) -> String {
        let mut out = String::new();
        let o = &mut out;
        help(
            o,
            "genie_requests_total",
            "counter",
            "HTTP requests answered, by status.",
        );
        for (status, n) in self
            .by_status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            let _ = writeln!(o, "genie_requests_total{{status=\"{status}\"}} {n}");
        }
        help(
            o,
            "genie_request_duration_seconds",
            "histogram",
            "Time to answer a request.",
        );
        let mut cum = 0;
        for (i, c) in self.latency.iter().enumerate() {
            cum += c.load(Ordering::Relaxed);
            let le = LATENCY_BOUNDS
                .get(i)
                .map_or_else(|| "+Inf".to_string(), |b| b.to_string());
            let _ = writeln!(
                o,
                "genie_request_duration_seconds_bucket{{le=\"{le}\"}} {cum}"
            );
        }
        let sum = self.latency_sum_us.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(o, "genie_request_duration_seconds_sum {sum}");
        let _ = writeln!(o, "genie_request_duration_seconds_count {cum}");
        render_service(o, service);
        if let Some(rss) = resident_bytes() {
            help(
                o,
                "genie_resident_memory_bytes",
                "gauge",
                "Resident memory of the server process.",
            );
            let _ = writeln!(o, "genie_resident_memory_bytes {rss}");
        }
        out
    }
}

fn help(o: &mut String, name: &str, kind: &str, text: &str) {
    let _ = writeln!(o, "# HELP {name} {text}\n# TYPE {name} {kind}");
}

/// A per-index series: name, type, help and its value in an index's counters `S`.
type Series<S> = (&'static str, &'static str, &'static str, fn(&S) -> u64);

/// Each series' help and type, then its value for each index of `rows` (name, counters).
fn write_series<'a, S: 'a>(
    o: &mut String,
    series: &[Series<S>],
    rows: impl Iterator<Item = (&'a str, &'a S)> + Clone,
) {
    for (name, kind, text, get) in series {
        help(o, name, kind, text);
        for (index, s) in rows.clone() {
            let _ = writeln!(o, "{name}{{index=\"{index}\"}} {}", get(s));
        }
    }
}

/// The per-index series: queries, batches, queue depth, batch sizes, device memory.
fn render_service(o: &mut String, service: &Service) {
    let stats = service.stats();
    let series: [Series<IndexStats>; 6] = [
        ("genie_queries_total", "counter", "Queries searched.", |s| {
            s.queries
        }),
        ("genie_batches_total", "counter", "Batches launched.", |s| {
            s.batches
        }),
        (
            "genie_queue_depth",
            "gauge",
            "Queries waiting to be searched.",
            |s| s.queued as u64,
        ),
        (
            "genie_runners_busy",
            "gauge",
            "Runners searching now.",
            |s| s.busy as u64,
        ),
        (
            "genie_queries_cancelled_total",
            "counter",
            "Queries dropped by their callers.",
            |s| s.cancelled,
        ),
        (
            "genie_queries_overloaded_total",
            "counter",
            "Queries failed by the queue timeout.",
            |s| s.overloaded,
        ),
    ];
    write_series(o, &series, stats.iter().map(|s| (s.name.as_str(), s)));
    help(
        o,
        "genie_batch_size",
        "histogram",
        "Queries per launched batch.",
    );
    for s in &stats {
        let mut cum = 0;
        for (i, n) in s.batch_sizes.iter().enumerate() {
            cum += n;
            let le = if i + 1 == SIZE_BUCKETS {
                "+Inf".to_string()
            } else {
                (1u64 << i).to_string()
            };
            let _ = writeln!(
                o,
                "genie_batch_size_bucket{{index=\"{}\",le=\"{le}\"}} {cum}",
                s.name
            );
        }
        let _ = writeln!(
            o,
            "genie_batch_size_sum{{index=\"{}\"}} {}",
            s.name, s.queries
        );
        let _ = writeln!(o, "genie_batch_size_count{{index=\"{}\"}} {cum}", s.name);
    }
    render_live(o, service);
    let mut gpus: Vec<usize> = stats.iter().flat_map(|s| s.gpus.iter().copied()).collect();
    gpus.sort_unstable();
    gpus.dedup();
    if !gpus.is_empty() {
        help(
            o,
            "genie_device_memory_used_bytes",
            "gauge",
            "GPU memory in use (all processes).",
        );
        for g in gpus {
            if let Some((free, total)) = genie_core::backend::cuda::device_memory(g) {
                let _ = writeln!(
                    o,
                    "genie_device_memory_used_bytes{{gpu=\"{g}\"}} {}",
                    total - free
                );
            }
        }
    }
}

/// Resident memory of this process (Linux), in bytes.
pub fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// The counters of the live indexes served.
fn render_live(o: &mut String, service: &Service) {
    let live: Vec<(String, crate::kind::LiveStats)> = service
        .names()
        .into_iter()
        .filter_map(|n| {
            let stats = service.index(&n).ok()?.writes()?.stats();
            Some((n, stats))
        })
        .collect();
    if live.is_empty() {
        return;
    }
    let series: [Series<crate::kind::LiveStats>; 8] = [
        (
            "genie_live_written_total",
            "counter",
            "Objects added or replaced.",
            |s| s.written,
        ),
        (
            "genie_live_deleted_total",
            "counter",
            "Objects deleted.",
            |s| s.deleted,
        ),
        (
            "genie_live_segments",
            "gauge",
            "Segments of the live index.",
            |s| s.segments,
        ),
        ("genie_live_objects", "gauge", "Live objects.", |s| {
            s.live_objects
        }),
        (
            "genie_live_flushes_total",
            "counter",
            "Flushes to disk.",
            |s| s.flushes,
        ),
        (
            "genie_live_merges_total",
            "counter",
            "Segment merges.",
            |s| s.merges,
        ),
        (
            "genie_live_log_syncs_total",
            "counter",
            "Disk syncs of the write-ahead log.",
            |s| s.log_syncs,
        ),
        (
            "genie_live_crowded_total",
            "counter",
            "Vectors written into over-full codebook cells (drift from the training data).",
            |s| s.crowded,
        ),
    ];
    write_series(
        o,
        &series,
        live.iter().map(|(index, s)| (index.as_str(), s)),
    );
}
