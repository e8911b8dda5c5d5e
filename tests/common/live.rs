//! What the live-index tests of each kind share: the configuration (no background thread), a
//! build through the kind, and the live index placed on the CPU and, where there is one, the GPU.

#![allow(dead_code)] // each test file uses its part

use genie::kind::{BuildJob, KindIndex, Options, Registry};
use genie::live::{LiveConfig, LiveIndex};
use std::path::Path;
use std::sync::Arc;

#[path = "both.rs"]
pub mod both;

pub fn config() -> LiveConfig {
    LiveConfig {
        merge_factor: 3,
        background: false,
        ..LiveConfig::default()
    }
}

pub fn build(kind: &str, input: &Path, output: &Path, options: &Options) {
    Registry::default()
        .get(kind)
        .expect("kind")
        .build(&BuildJob {
            input,
            output,
            options,
            progress: &|_| {},
        })
        .expect("built");
}

/// The live index searched on the CPU and, where there is one, on the GPU, answers compared.
pub fn cpu(live: &Arc<LiveIndex>) -> Arc<dyn KindIndex> {
    both::Both::live(live)
}

/// The answer of one raw query of `index`, its hits at most `k`, allowed by `filter`.
pub fn answer(
    index: &dyn KindIndex,
    raw: &serde_json::Value,
    options: &Options,
    k: u32,
    filter: Option<&genie::kind::Filter>,
) -> genie::kind::Answer {
    let q = index.parse(raw, options).expect("parsed");
    let request = genie::kind::Request {
        query: q.as_ref(),
        k,
        min_count: None,
        filter,
    };
    index.search(&[request]).expect("searched").remove(0)
}

/// `genie --quiet ARGS` (the program `genie`) run in the folder `dir` (no GENIE_DEVICE, no
/// RUST_LOG): its output.
pub fn genie_in(genie: &Path, dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(genie)
        .current_dir(dir)
        .env_remove("GENIE_DEVICE")
        .env_remove("RUST_LOG")
        .arg("--quiet")
        .args(args)
        .output()
        .expect("genie")
}
