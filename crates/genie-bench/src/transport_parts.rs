//! `genie-bench --mode transport-parts`: where a served query's host time goes, outside HTTP.
//! On one thread, for the bodies `--mode serve-client` sends (`{"queries": [line], "k": K}`, one
//! query each), it times the server's own steps one after the other:
//!
//! - **decode**: [`genie::server::decode_search`], the JSON body parsed into the kind's query;
//! - **service**: the query queued to a [`Service`] over the index (on `--device`, default the
//!   CPU) and its answer awaited: the hand-off to a runner thread and the search;
//! - **encode**: the answer written as the server writes it ([`genie::kind::Answer::push_json`]).
//!
//! Run against the server's CPU seconds per query under load (`bench/device-run-transport.sh`
//! measures both on one host), the rest of the server's time is HTTP: the connection, the
//! request's framing and the response's, and the async runtime.

use anyhow::Result;
use clap::Parser;
use genie::core::DeviceChoice;
use genie::kind::Registry;
use genie::open::{load, place, OpenSpec};
use genie::server::{decode_search, Limits};
use genie::service::{BatchPolicy, Service};
use std::path::PathBuf;
use std::time::Instant;

/// The command line of `--mode transport-parts`.
#[derive(Parser, Debug)]
#[command(about = "A served query's host time by step (decode, service, encode)")]
pub struct PartsArgs {
    /// Always `transport-parts`.
    #[arg(long)]
    pub mode: String,
    /// The index file.
    #[arg(long)]
    pub index: PathBuf,
    /// The queries, as `--mode serve-client` sends them.
    #[command(flatten)]
    pub lines: crate::serve_client::QueryLines,
    /// Passes over the queries (the best pass of each step is reported).
    #[arg(long, default_value_t = 5)]
    pub repeats: usize,
    /// Where the service searches.
    #[arg(long, default_value = "cpu")]
    pub device: DeviceChoice,
}

/// Microseconds a query of each step, best pass of `--repeats`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Parts {
    /// Parsing the body.
    pub decode_us: f64,
    /// Queueing, searching and awaiting the answer.
    pub service_us: f64,
    /// Writing the answer's JSON.
    pub encode_us: f64,
    /// Bytes of an answer's JSON, on average.
    pub answer_bytes: f64,
}

/// Times the steps and prints one line per step.
pub fn run(args: &PartsArgs) -> Result<Parts> {
    let bodies = args.lines.bodies()?;
    let loaded = load(&Registry::default(), &args.index)?;
    let spec = OpenSpec {
        device: args.device,
        ..OpenSpec::default()
    };
    let service = Service::new(
        vec![("i".to_string(), place(&loaded, &spec)?)],
        BatchPolicy::default(),
    )?;
    let index = service.index("i")?;
    let limits = Limits::default();
    let per = |t: Instant| t.elapsed().as_secs_f64() * 1e6 / bodies.len() as f64;
    let mut best = Parts {
        decode_us: f64::MAX,
        service_us: f64::MAX,
        encode_us: f64::MAX,
        answer_bytes: 0.0,
    };
    for _ in 0..args.repeats.max(1) {
        let t = Instant::now();
        let mut decoded = Vec::with_capacity(bodies.len());
        for b in &bodies {
            decoded.push(
                decode_search(b, index.as_ref(), &limits)
                    .map_err(|e| anyhow::anyhow!("a body the server would refuse: {e}"))?,
            );
        }
        best.decode_us = best.decode_us.min(per(t));
        let t = Instant::now();
        let mut answers = Vec::with_capacity(bodies.len());
        for d in decoded {
            for ticket in service.submit_filtered("i", d.queries, None)? {
                answers.push(ticket.wait()?);
            }
        }
        best.service_us = best.service_us.min(per(t));
        let t = Instant::now();
        let mut bytes = 0usize;
        for a in &answers {
            let mut out = Vec::with_capacity(4096);
            a.push_json(&mut out, 0);
            bytes += out.len();
        }
        best.encode_us = best.encode_us.min(per(t));
        best.answer_bytes = bytes as f64 / answers.len().max(1) as f64;
    }
    service.shutdown();
    println!(
        "transport parts ({} queries, k = {}, {} on {:?}): decode {:.1} us, service {:.1} us, encode {:.1} us a query; answers {:.0} bytes",
        bodies.len(),
        args.lines.k,
        args.index.display(),
        args.device,
        best.decode_us,
        best.service_us,
        best.encode_us,
        best.answer_bytes
    );
    Ok(best)
}
