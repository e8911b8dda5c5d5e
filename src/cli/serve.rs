//! `genie serve`: the named index files opened on the devices, one [`Service`] over them, and
//! the HTTP server ([`crate::server`]) run on its own runtime until Ctrl-C or SIGTERM.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::{explain_placement, Devices};
use crate::kind::Registry;
use crate::live::{place_live, LiveConfig, LiveIndex};
use crate::open::{load, place};
use crate::server::{serve_on, shutdown_signal, Creating, ServerConfig};
use crate::service::{BatchPolicy, Service};

/// Serves `indexes` (name, file) on `devices`, batched by `policy`, as `config` says, until a
/// signal; `quiet`: the address listened on is not printed.
pub fn serve(
    registry: &Registry,
    indexes: &[(String, PathBuf)],
    data: Option<&Path>,
    devices: &Devices,
    policy: BatchPolicy,
    config: &ServerConfig,
    quiet: bool,
) -> Result<()> {
    let (spec, asked_by) = devices.spec()?;
    let mut config = config.clone();
    let mut indexes = indexes.to_vec();
    if let Some(dir) = data {
        // the live indexes of the folder, by name, then created there by PUT
        std::fs::create_dir_all(dir).with_context(|| format!("cannot make {}", dir.display()))?;
        let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read {}", dir.display()))?
            .filter_map(|e| {
                let e = e.ok()?;
                let name = e.file_name().to_str()?.strip_suffix(".live")?.to_string();
                (LiveIndex::is_live(&e.path()) && !indexes.iter().any(|(n, _)| *n == name))
                    .then(|| (name, e.path()))
            })
            .collect();
        found.sort();
        indexes.extend(found);
        config.create = Some(Creating {
            dir: dir.to_path_buf(),
            spec: spec.clone(),
            live: LiveConfig {
                refresh: config.refresh,
                ..LiveConfig::default()
            },
            registry: registry.clone(),
        });
    }
    let config = &config;
    let mut opened = Vec::new();
    for (name, path) in &indexes {
        let t = Instant::now();
        if config.writable || LiveIndex::is_live(path) {
            let live_config = LiveConfig {
                refresh: config.refresh,
                ..LiveConfig::default()
            };
            let live = if LiveIndex::is_live(path) {
                LiveIndex::open_with(registry, path, live_config)
            } else {
                LiveIndex::open_file(registry, path, live_config)
            }
            .with_context(|| format!("cannot serve {name}"))?;
            let replicas = explain_placement(place_live(&live, &spec), &asked_by)?;
            log::info!(
                "live index {name}: {} objects of {} in {} on {} in {:.2} s",
                live.live_objects(),
                live.kind(),
                live.dir().display(),
                replicas
                    .iter()
                    .map(|r| r.backend_name())
                    .collect::<Vec<_>>()
                    .join(", "),
                t.elapsed().as_secs_f64()
            );
            opened.push((name.clone(), replicas));
            continue;
        }
        let loaded = load(registry, path).with_context(|| format!("cannot serve {name}"))?;
        let replicas = explain_placement(place(&loaded, &spec), &asked_by)?;
        let devices: Vec<String> = replicas.iter().map(|r| r.backend_name()).collect();
        log::info!(
            "index {name}: {} objects of {} from {} on {} in {:.2} s",
            replicas[0].num_objects(),
            loaded.kind.name(),
            path.display(),
            devices.join(", "),
            t.elapsed().as_secs_f64()
        );
        opened.push((name.clone(), replicas));
    }
    let service = Service::new(opened, policy)?;
    if !config.listen.ip().is_loopback() && config.token.is_none() {
        log::warn!(
            "listening on {} without a --token: anyone who reaches it may search",
            config.listen
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the server's runtime")?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("cannot listen on {}", config.listen))?;
        let addr = listener.local_addr()?;
        if !quiet {
            eprintln!("genie: listening on http://{addr}");
        }
        serve_on(listener, service, config, shutdown_signal())
            .await
            .context("the server failed")
    })
}
