//! `genie search`: a queries file searched here ([`search`]: the index opened on the devices
//! and searched through the batching [`Service`] over the [`super::pipeline`]) or on a
//! `genie serve` server ([`search_remote`]), with the same JSON lines out either way.

use anyhow::{anyhow, bail, Context, Result};
use clap::ArgMatches;
use rayon::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::flags::{kind_options, Phase};
use super::pipeline::{read_chunk, search_chunks, Chunk, Output};
use super::progress::bytes_bar;
use super::{explain_placement, part_files, Devices};
use crate::data_error::DataError;
use crate::kind::{write_answers, Filter, Kind, PlacedError, Registry};
use crate::live::{place_live_on, LiveConfig, LiveIndex};
use crate::open::{load, open_backends};
use crate::safety::{refuse_overwrite, Read};
use crate::server::client::Client;
use crate::service::{BatchPolicy, Service};

/// Queries per request of a search on a server.
const REMOTE_CHUNK: usize = 4096;

/// The name the local search gives its one index in the service.
const LOCAL: &str = "local";

/// Queries a chunk holds by default: [`CHUNK_PER_GPU`] for each GPU, at least [`MIN_CHUNK`]. A
/// chunk is read and parsed while the one before is searched and the one before that written, and
/// each GPU takes its share as one batch (which the GPU backend pipelines in batches of 2,048).
/// The measured 65,536 queries of a 1 M SIFT-like index (docs/journal/scaling.md): on two H100s
/// the search stage 864 ms on one GPU in one chunk, 656 ms in chunks of 8,192; on four H200s in
/// chunks of 8,192 against 16,384, 178.5 against 268.8 ms (2,048 queries a GPU a chunk: the next
/// chunk reaches the GPUs sooner, and the chunks' latencies add up when the reader leads).
pub fn chunk_queries(gpus: usize) -> usize {
    (CHUNK_PER_GPU * gpus).max(MIN_CHUNK)
}

/// Queries a GPU takes from a chunk by default (see [`chunk_queries`]).
pub const CHUNK_PER_GPU: usize = 2048;
/// The smallest default chunk (the one of the CPU and of one to four GPUs).
pub const MIN_CHUNK: usize = 8192;

/// What a search is asked, wherever it runs.
#[derive(Clone, Debug)]
pub struct SearchJob<'a> {
    /// The index file (on a server: the name the server gives the index).
    pub index: &'a Path,
    /// The queries file (`-`: standard input).
    pub queries: &'a Path,
    /// Hits per query.
    pub k: u32,
    /// Only hits of at least this count.
    pub min_count: Option<u32>,
    /// The kind the index must hold (`--kind`), if given.
    pub kind: Option<&'a str>,
    /// Where the answers go (default: standard output).
    pub output: Option<&'a Path>,
    /// Queries per chunk; default [`chunk_queries`] of the devices.
    pub batch_queries: Option<usize>,
    /// No progress bar and no summary.
    pub quiet: bool,
    /// The objects the hits may be (`--filter-ids`, `--exclude-ids`).
    pub filter: Option<Arc<Filter>>,
    /// How the chunk's batches go to the devices.
    pub dispatch: crate::service::Dispatch,
}

/// The filter of `--filter-ids`, `--exclude-ids` and `--filter-where`: none when none is given.
pub fn filter_of(
    allow: Option<&Path>,
    deny: Option<&Path>,
    condition: Option<&str>,
) -> Result<Option<Arc<Filter>>> {
    use super::live::read_ids;
    if allow.is_none() && deny.is_none() && condition.is_none() {
        return Ok(None);
    }
    let allow = allow.map(read_ids).transpose()?;
    let deny = deny.map(read_ids).transpose()?.unwrap_or_default();
    let filter = Filter::new(allow, deny);
    Ok(Some(Arc::new(match condition {
        Some(c) => filter.with_condition(c.to_string()),
        None => filter,
    })))
}

impl SearchJob<'_> {
    /// An error when `--kind` names another kind than the index holds.
    fn check_kind(&self, index: &str, holds: &str) -> Result<()> {
        match self.kind {
            Some(asked) if asked != holds => bail!(
                "{index} holds {holds}, not {asked} (leave out --kind to search what it holds)"
            ),
            _ => Ok(()),
        }
    }

    /// Refuses an output that is the index, one of its side or part files, or the queries.
    fn refuse_overwrite(&self, kind: &dyn Kind) -> Result<()> {
        let Some(out) = self.output else {
            return Ok(());
        };
        let side: Vec<PathBuf> = kind
            .side_files(self.index)
            .into_iter()
            .chain(part_files(self.index))
            .collect();
        let mut reads: Vec<Read<'_>> =
            vec![(self.index, "the index"), (self.queries, "the queries")];
        reads.extend(side.iter().map(|p| (p.as_path(), "a file of the index")));
        Ok(refuse_overwrite(&[out.to_path_buf()], &reads)?)
    }
}

/// Searches the index file on `devices`, with the kind's options given in `matches` (the
/// subcommand's), and writes one JSON line per query.
pub fn search(
    registry: &Registry,
    job: &SearchJob<'_>,
    devices: &Devices,
    matches: &ArgMatches,
) -> Result<()> {
    let start = Instant::now();
    let (mut spec, asked_by) = devices.spec()?;
    // --device auto: the CPU when it would finish before a GPU could start (decided before any
    // device opens: an opening GPU would hold the exit)
    // and the GPUs that save more than their contexts cost, unless --devices names them
    let auto = spec.device == genie_core::DeviceChoice::Auto;
    if spec.device != genie_core::DeviceChoice::Cpu && !LiveIndex::is_live(job.index) {
        let cores = rayon::current_num_threads();
        let cache = super::auto::device_cache();
        if let Some(choice) = super::auto::choose(job.index, job.queries, cores, cache.as_deref()) {
            if auto {
                log::info!("{}", choice.note);
            }
            if auto && choice.cpu {
                spec.device = genie_core::DeviceChoice::Cpu;
            } else if spec.devices.is_none() {
                let available = genie_core::backend::cuda::visible_count();
                if available > 1 {
                    let (g, note) =
                        super::auto::gpus_for(choice.gpu_search_s, available, cache.as_deref());
                    log::info!("{note}");
                    spec.devices = Some((0..g).collect());
                }
            }
        }
    }
    // the CUDA driver starts every GPU it shows: it is shown those this search uses alone
    if spec.device != genie_core::DeviceChoice::Cpu {
        if let Some(devices) = &spec.devices {
            if let Some(renumbered) = genie_core::backend::cuda::show_only(devices) {
                log::debug!("GPUs {devices:?} alone shown to the CUDA driver");
                spec.devices = Some(renumbered);
            }
        }
    }
    // the devices open while the index is mapped and checked
    let opening = open_backends(&spec);
    // a live index folder, or an index file (the error names it)
    let (loaded, live) = if LiveIndex::is_live(job.index) {
        let config = LiveConfig {
            background: false,
            ..LiveConfig::default()
        };
        let live = LiveIndex::open_with(registry, job.index, config)
            .context("cannot open the live index")?;
        (None, Some(live))
    } else {
        let loaded = load(registry, job.index).context("cannot open the index")?;
        (Some(loaded), None)
    };
    let kind = match (&loaded, &live) {
        (Some(l), _) => Arc::clone(&l.kind),
        (None, Some(live)) => Arc::clone(registry.get(live.kind())?),
        (None, None) => bail!("nothing opened"),
    };
    job.check_kind(&job.index.display().to_string(), kind.name())?;
    let options = kind_options(registry, kind.as_ref(), matches, Phase::Search)?;
    job.refuse_overwrite(kind.as_ref())?;
    let mut reader = kind.read_queries(job.queries, &options)?;
    let t = Instant::now();
    let backends = opening.join().map_err(DataError::from);
    let replicas = explain_placement(
        backends.and_then(|b| match (&loaded, &live) {
            (Some(loaded), _) => crate::open::place_on(loaded, &spec, b),
            (None, Some(live)) => Ok(place_live_on(live, b, spec.method)),
            (None, None) => Err(DataError::Unsupported("nothing opened".into())),
        }),
        &asked_by,
    )?;
    drop(loaded);
    replicas[0]
        .check_options(&options)
        .with_context(|| format!("cannot search {}", job.index.display()))?;
    if let Some(f) = &job.filter {
        replicas[0]
            .check_filter(f)
            .with_context(|| format!("cannot search {}", job.index.display()))?;
    }
    let names: Vec<String> = replicas.iter().map(|r| r.backend_name()).collect();
    log::info!(
        "backend: {} (ready in {:.3} s)",
        names.join(", "),
        t.elapsed().as_secs_f64()
    );
    // this machine's GPU start, for the next searches' --device auto rule: from the command's
    // start to the GPUs ready (opening them, the index mapped and checked meanwhile, uploaded).
    // The wait after the mapping alone (0.17 s on one H100) made a 1,024-query search choose a
    // GPU that took 458 ms whole against 361 ms on the CPU.
    let gpus = replicas
        .iter()
        .filter(|r| r.gpu_ordinal().is_some())
        .count();
    if gpus > 0 {
        if let Some((_, space, postings, _)) = genie_core::InvertedIndex::peek(job.index) {
            super::auto::record_start(
                super::auto::device_cache().as_deref(),
                gpus,
                start.elapsed().as_secs_f64(),
                postings * 4 + u64::from(space) * 8,
            );
        }
    }
    let batch_queries = job.batch_queries.unwrap_or_else(|| chunk_queries(gpus));
    log::debug!("chunks of {batch_queries} queries");
    let policy = BatchPolicy {
        max_batch: batch_queries.div_ceil(replicas.len()).max(1),
        max_wait: Duration::ZERO,
        queue_timeout: Duration::MAX,
        dispatch: job.dispatch,
        own_threads: true,
        ..BatchPolicy::default()
    };
    let service = Service::new(vec![(LOCAL.to_string(), replicas)], policy)?;
    let (mut out, out_name) = Output::open(job.output)?;
    let bar = bytes_bar("searching", reader.progress().1, job.quiet);
    // of the reader's time, the lines read in order (the rest: parsed on all cores, queued)
    let reading_ms = std::cell::Cell::new(0.0f64);
    let index = service.index(LOCAL)?;
    let next_chunk = || {
        // read in order into one block, then parsed on all cores; the first bad query (in
        // order) is the error
        let t = Instant::now();
        let block = reader.next_block(batch_queries)?;
        reading_ms.set(reading_ms.get() + t.elapsed().as_secs_f64() * 1e3);
        if block.is_empty() {
            return Ok(None);
        }
        let parsing = Instant::now();
        let parsed: Vec<_> = (0..block.len())
            .into_par_iter()
            .map(|i| block.parse(i, index.as_ref(), &options))
            .collect();
        let chunk = parsed
            .into_iter()
            .enumerate()
            .map(|(i, q)| match q {
                Ok(q) => Ok((q, job.k, job.min_count)),
                Err(PlacedError::Placed(e)) => Err(anyhow::Error::new(e)),
                Err(PlacedError::Unplaced(e)) => Err(anyhow!("{}: {e}", block.place(i))),
            })
            .collect::<Result<Vec<_>>>()?;
        let tickets = service.submit_filtered(LOCAL, chunk, job.filter.clone())?;
        let submitted = Instant::now();
        log::trace!(
            "at {:.1} ms: a chunk of {} queries submitted, read in {:.1} ms, parsed in {:.1} ms",
            crate::clock_ms(),
            tickets.len(),
            (parsing - t).as_secs_f64() * 1e3,
            (submitted - parsing).as_secs_f64() * 1e3
        );
        let read_bytes = reader.progress().0;
        Ok(Some(Chunk {
            tickets,
            read_bytes,
            submitted,
        }))
    };
    let stages = search_chunks(next_chunk, &mut out, &out_name, &bar)?;
    bar.finish_and_clear();
    out.finish(&out_name)?;
    if let Ok(index) = service.index(LOCAL) {
        log_stages(index.take_stage_times());
        let inner: Vec<String> = index
            .take_search_stages()
            .iter()
            .map(|(name, ms)| format!("{name} {ms:.1} ms"))
            .collect();
        let inner = if inner.is_empty() {
            String::new()
        } else {
            format!(" ({})", inner.join(", "))
        };
        log::info!(
            "stages: read and parse {:.1} ms (lines read {:.1} ms), search {:.1} ms (answered \
             {:.1} ms after submission){inner}, output {:.1} ms",
            stages.read_ms,
            reading_ms.get(),
            stages.search_ms,
            stages.answered_ms,
            stages.output_ms
        );
    }
    service.shutdown();
    if !job.quiet {
        let secs = start.elapsed().as_secs_f64();
        log::info!(
            "searched {} queries in {secs:.2}s ({:.0} queries/s)",
            stages.queries,
            stages.queries as f64 / secs.max(1e-9)
        );
    }
    // the process ends next, and its exit hands the devices and the index's memory back faster
    // than releasing them one by one: 78.5 ms to drop the service of a 948 MB index on an H200,
    // and the whole command 452 ms against 491 ms (medians of 7) when left to the exit
    // (docs/BENCHMARKS.md, issue 15). The runners are joined, so no thread is in the driver.
    std::mem::forget(service);
    Ok(())
}

/// The same queries file sent to the `genie serve` server at `url` (with the bearer `token`),
/// where the job's index is the name the server gives it; the same output.
pub fn search_remote(
    registry: &Registry,
    job: &SearchJob<'_>,
    url: &str,
    token: Option<String>,
    matches: &ArgMatches,
) -> Result<()> {
    for local in ["device", "devices", "parts", "method"] {
        if matches.value_source(local) == Some(clap::parser::ValueSource::CommandLine) {
            bail!("--{local} applies to a local search, not to --server (the server chooses)");
        }
    }
    let client = Client::new(url, token)?;
    let name = job.index.to_string_lossy();
    let served = client.indexes()?;
    let remote = served.iter().find(|i| i.name == name).ok_or_else(|| {
        let names: Vec<&str> = served.iter().map(|i| i.name.as_str()).collect();
        anyhow!(
            "{url} serves no index {name:?} (it serves: {})",
            names.join(", ")
        )
    })?;
    let kind = registry.get(&remote.kind)?;
    job.check_kind(&name, kind.name())?;
    if let Some(out) = job.output {
        refuse_overwrite(&[out.to_path_buf()], &[(job.queries, "the queries")])?;
    }
    let options = kind_options(registry, kind.as_ref(), matches, Phase::Search)?;
    let mut reader = kind.read_queries(job.queries, &options)?;
    let (mut out, out_name) = Output::open(job.output)?;
    let mut first = 0u64;
    let per_request = job.batch_queries.unwrap_or(REMOTE_CHUNK).min(REMOTE_CHUNK);
    loop {
        let (raws, places) = read_chunk(reader.as_mut(), per_request)?;
        if raws.is_empty() {
            break;
        }
        let answers = client
            .search_filtered(
                &name,
                &raws,
                job.k,
                job.min_count,
                &options,
                job.filter.as_deref(),
            )
            .map_err(|e| anyhow!("{} to {}: {e}", places[0], places[places.len() - 1]))?;
        write_answers(&mut out, first, &answers)
            .with_context(|| format!("cannot write to {out_name}"))?;
        first += answers.len() as u64;
        out.flush()
            .with_context(|| format!("cannot write to {out_name}"))?;
    }
    out.finish(&out_name)
}

/// Logs the device time of the paper's Table I query stages (GPU backends).
fn log_stages(times: Option<genie_core::StageTimes>) {
    if let Some(t) = times {
        log::info!(
            "stages: query transfer {:.2} ms, match {:.2} ms, select {:.2} ms, results back {:.2} ms ({} batches, {} reruns)",
            t.transfer_in_ms,
            t.match_ms,
            t.select_ms,
            t.transfer_out_ms,
            t.batches,
            t.reruns
        );
        log::info!(
            "host: planning {:.2} ms, launching {:.2} ms, waiting and unpacking {:.2} ms",
            t.host_plan_ms,
            t.host_launch_ms,
            t.host_finish_ms
        );
    }
}
