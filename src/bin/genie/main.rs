//! `genie`: build, search, serve and inspect GENIE match-count inverted indexes from the command
//! line. A thin front end: every kind of data, the batching and the server live in the `genie`
//! library ([`genie::kind`], [`genie::service`], [`genie::server`]).

mod args;
mod pipeline;
mod progress;

use anyhow::{anyhow, bail, Context, Result};
use args::{
    kind_options, option_paths, BuildArgs, Cli, Command, DeviceArg, InfoArgs, Phase, SearchArgs,
    ServeArgs,
};
use clap::parser::ValueSource;
use clap::{ArgMatches, FromArgMatches};
use genie::core::atomic::AtomicFile;
use genie::core::{DeviceChoice, GenieError};
use genie::data_error::DataError;
use genie::input::display_path;
use genie::kind::{write_answers, BuildJob, Kind, KindIndex, QueryReader, Registry};
use genie::open::{load, open_backends, place, OpenSpec};
use genie::safety::{refuse_overwrite, Read};
use genie::server::client::Client;
use genie::server::{Limits, ServerConfig};
use genie::service::{BatchPolicy, Service};
use pipeline::{search_chunks, Chunk};
use progress::bytes_bar;
use rayon::prelude::*;
use serde_json::Value;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Queries per request of `genie search --server`.
const REMOTE_CHUNK: usize = 4096;

/// The name the local search gives its one index in the service.
const LOCAL: &str = "local";

fn main() -> ExitCode {
    let registry = Registry::default();
    let matches = args::command(&registry).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let sub = matches
        .subcommand()
        .map_or_else(ArgMatches::default, |(_, m)| m.clone());
    let given = given_flags(Some(&sub));
    init_logging(cli.verbose, cli.quiet);
    if matches!(cli.command, Command::Build(_) | Command::Search(_)) {
        remove_temporaries_on_signal();
    }
    let result = match &cli.command {
        Command::Build(args) => build(&registry, args, &sub, cli.quiet),
        Command::Search(args) => search(&registry, args, &sub, &given, cli.quiet),
        Command::Info(args) => info(args),
        Command::Serve(args) => serve(&registry, args, cli.quiet),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("genie: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// On SIGINT, SIGTERM or SIGHUP: the temporary files of the writes in progress (an index, an
/// output) are removed, the destinations stay as they were, and the process ends as the signal
/// would have ended it. (`genie serve` handles its signals itself: it finishes its requests.)
fn remove_temporaries_on_signal() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = match signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) {
        Ok(s) => s,
        Err(e) => {
            log::warn!("cannot watch for signals ({e}): an interrupted run may leave temporary files, removed by the next run");
            return;
        }
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            genie::core::atomic::abandon_all();
            let _ = signal_hook::low_level::emulate_default_handler(signal);
            std::process::exit(128 + signal);
        }
    });
}

/// The ids of the flags given on the command line of the subcommand.
fn given_flags(matches: Option<&ArgMatches>) -> Vec<String> {
    let Some(m) = matches else { return Vec::new() };
    m.ids()
        .map(|id| id.as_str())
        .filter(|id| m.value_source(id) == Some(ValueSource::CommandLine))
        .map(str::to_string)
        .collect()
}

/// Info messages of the genie crates by default (the target `genie` also covers `genie_core`),
/// more with each -v, warnings only with --quiet; RUST_LOG, when set, overrides this.
fn init_logging(verbose: u8, quiet: bool) {
    let default = match (quiet, verbose) {
        (true, _) => "warn",
        (false, 0) => "warn,genie=info",
        (false, 1) => "info,genie=debug",
        (false, 2) => "debug,genie=trace",
        (false, _) => "trace",
    };
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(default)).init();
}

/// Whether the error is a closed standard output (e.g. `genie search ... | head`).
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.root_cause()
        .downcast_ref::<io::Error>()
        .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
}

fn build(registry: &Registry, args: &BuildArgs, matches: &ArgMatches, quiet: bool) -> Result<()> {
    let start = Instant::now();
    let kind = registry.get(&args.kind)?;
    let options = kind_options(registry, kind.as_ref(), matches, Phase::Build)?;
    let mut writes = vec![args.output.clone()];
    writes.extend(kind.side_files(&args.output));
    writes.extend(part_files(&args.output));
    let inputs = option_paths(kind.as_ref(), &options, Phase::Build);
    let mut reads: Vec<Read<'_>> = vec![(&args.input, "the input")];
    reads.extend(inputs.iter().map(|(p, what)| (p.as_path(), what.as_str())));
    refuse_overwrite(&writes, &reads)?;
    genie::safety::refuse_index_as_input(&args.input)?;
    let len = std::fs::metadata(&args.input)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len());
    let bar = bytes_bar("building the index", len, quiet);
    if len.is_none() {
        bar.enable_steady_tick(Duration::from_millis(120));
    }
    let progress = |bytes: u64| bar.set_position(bytes);
    let job = BuildJob {
        input: &args.input,
        output: &args.output,
        options: &options,
        progress: &progress,
    };
    let report = kind.build(&job);
    bar.finish_and_clear();
    let report = report.with_context(|| format!("cannot build {}", display_path(&args.output)))?;
    if report.objects == 0 {
        log::warn!(
            "{} holds no objects: {} has none (an index to add to later, or the wrong file?)",
            display_path(&args.output),
            display_path(&args.input)
        );
    }
    if !quiet {
        let side = if report.side_files.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = report
                .side_files
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            format!(" (side data: {})", names.join(", "))
        };
        eprintln!(
            "built {}: {} in {:.2?}{side}",
            args.output.display(),
            report.summary,
            start.elapsed()
        );
    }
    Ok(())
}

/// The part files `INDEX.part0`, `INDEX.part1`, ... that exist.
fn part_files(index: &Path) -> Vec<PathBuf> {
    (0..)
        .map(|i| genie::kind::side_path(index, &format!("part{i}")))
        .take_while(|p| p.exists())
        .collect()
}

/// The device to use and what asked for it (for error messages).
fn device_choice(arg: Option<DeviceArg>) -> Result<(DeviceChoice, String)> {
    match arg {
        Some(d) => Ok((d.into(), "--device".to_string())),
        None => {
            let choice = DeviceChoice::from_env().context("bad GENIE_DEVICE")?;
            Ok((choice, "GENIE_DEVICE".to_string()))
        }
    }
}

/// Places an index on the devices; a missing GPU names what asked for it.
fn place_on(
    loaded: &genie::open::Loaded,
    spec: &OpenSpec,
    asked_by: &str,
) -> Result<Vec<Arc<dyn KindIndex>>> {
    explain_placement(place(loaded, spec), asked_by)
}

/// The placement's error, with what asked for the GPU when there is none.
fn explain_placement(
    placed: Result<Vec<Arc<dyn KindIndex>>, DataError>,
    asked_by: &str,
) -> Result<Vec<Arc<dyn KindIndex>>> {
    placed.map_err(|e| match e {
        DataError::Core(GenieError::GpuUnavailable(_)) => anyhow!(
            "{e} (the GPU was requested by {asked_by}; use --device cpu or --device auto to \
             search on the CPU)"
        ),
        other => anyhow!(other).context("cannot start the search backend"),
    })
}

/// Where the search writes: standard output, or a file that appears only when the search is
/// done ([`AtomicFile`]: a failed or killed search leaves no half-written output, and an earlier
/// file of that name as it was). Standard output is locked per write of the buffer, not for
/// the whole search: the output thread of [`search_chunks`] writes it.
enum Output {
    Stdout(BufWriter<io::Stdout>),
    File(AtomicFile),
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Stdout(w) => w.write(buf),
            Self::File(f) => f.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Stdout(w) => w.flush(),
            Self::File(f) => f.flush(),
        }
    }
}

impl Output {
    /// Finishes: flushes standard output, or puts the file in place.
    fn finish(self, name: &str) -> Result<()> {
        match self {
            Self::Stdout(mut w) => w.flush(),
            Self::File(f) => f.commit(),
        }
        .with_context(|| format!("cannot write to {name}"))
    }
}

/// The search output (`--output FILE`, else standard output) and its name for errors.
fn open_output(path: Option<&Path>) -> Result<(Output, String)> {
    let name = path.map_or_else(|| "<stdout>".to_string(), |p| p.display().to_string());
    let out = match path {
        Some(p) => Output::File(
            AtomicFile::create(p).with_context(|| format!("{}: cannot create", p.display()))?,
        ),
        None => Output::Stdout(BufWriter::with_capacity(1 << 16, io::stdout())),
    };
    Ok((out, name))
}

/// Reads up to `max` raw queries, each with where it came from (for the errors of its parse or
/// its search); the reader's errors name the place themselves.
fn read_chunk(reader: &mut dyn QueryReader, max: usize) -> Result<(Vec<Value>, Vec<String>)> {
    let (mut raws, mut places) = (Vec::new(), Vec::new());
    while raws.len() < max {
        let Some(raw) = reader.next_query()? else {
            break;
        };
        raws.push(raw);
        places.push(reader.location());
    }
    Ok((raws, places))
}

fn search(
    registry: &Registry,
    args: &SearchArgs,
    matches: &ArgMatches,
    given: &[String],
    quiet: bool,
) -> Result<()> {
    if let Some(url) = &args.server {
        return search_remote(registry, args, url, matches, given);
    }
    let start = Instant::now();
    let (device, asked_by) = device_choice(args.device)?;
    let spec = OpenSpec {
        device,
        devices: args.devices.clone(),
        parts: args.parts,
        method: args.method.into(),
    };
    // the devices open while the index is mapped and checked
    let opening = open_backends(&spec);
    // the error names the file
    let loaded = load(registry, &args.index).context("cannot open the index")?;
    let kind = Arc::clone(&loaded.kind);
    check_kind(args, &args.index.display().to_string(), kind.name())?;
    let options = kind_options(registry, kind.as_ref(), matches, Phase::Search)?;
    refuse_overwrite_search(args, kind.as_ref())?;
    let mut reader = kind.read_queries(&args.queries, &options)?;
    let t = Instant::now();
    let backends = opening.join().map_err(DataError::from);
    let replicas = explain_placement(
        backends.and_then(|b| genie::open::place_on(&loaded, &spec, b)),
        &asked_by,
    )?;
    drop(loaded);
    replicas[0]
        .check_options(&options)
        .with_context(|| format!("cannot search {}", args.index.display()))?;
    let names: Vec<String> = replicas.iter().map(|r| r.backend_name()).collect();
    log::info!(
        "backend: {} (ready in {:.3} s)",
        names.join(", "),
        t.elapsed().as_secs_f64()
    );
    let policy = BatchPolicy {
        max_batch: args.batch_queries.div_ceil(replicas.len()).max(1),
        max_wait: Duration::ZERO,
        queue_timeout: Duration::MAX,
        ..BatchPolicy::default()
    };
    let service = Service::new(vec![(LOCAL.to_string(), replicas)], policy)?;
    let (mut out, out_name) = open_output(args.output.as_deref())?;
    let bar = bytes_bar("searching", reader.progress().1, quiet);
    let next_chunk = || {
        // read in order, then parsed on all cores; the first bad query (in order) is the error
        let (raws, places) = read_chunk(reader.as_mut(), args.batch_queries)?;
        if raws.is_empty() {
            return Ok(None);
        }
        let parsed: Vec<_> = raws
            .par_iter()
            .map(|raw| service.parse(LOCAL, raw, &options))
            .collect();
        let chunk = parsed
            .into_iter()
            .zip(&places)
            .map(|(q, place)| {
                q.map(|q| (q, args.k, args.min_count))
                    .map_err(|e| anyhow!("{place}: {e}"))
            })
            .collect::<Result<Vec<_>>>()?;
        let tickets = service.submit(LOCAL, chunk)?;
        let read_bytes = reader.progress().0;
        Ok(Some(Chunk {
            tickets,
            read_bytes,
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
            "stages: read and parse {:.1} ms, search {:.1} ms{inner}, output {:.1} ms",
            stages.read_ms,
            stages.search_ms,
            stages.output_ms
        );
    }
    service.shutdown();
    if !quiet {
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

/// Refuses an `--output` that is the index, one of its side or part files, or the queries.
fn refuse_overwrite_search(args: &SearchArgs, kind: &dyn Kind) -> Result<()> {
    let Some(out) = &args.output else {
        return Ok(());
    };
    let side: Vec<PathBuf> = kind
        .side_files(&args.index)
        .into_iter()
        .chain(part_files(&args.index))
        .collect();
    let mut reads: Vec<Read<'_>> = vec![(&args.index, "the index"), (&args.queries, "the queries")];
    reads.extend(side.iter().map(|p| (p.as_path(), "a file of the index")));
    Ok(refuse_overwrite(std::slice::from_ref(out), &reads)?)
}

/// An error when `--kind` names another kind than the index holds.
fn check_kind(args: &SearchArgs, index: &str, holds: &str) -> Result<()> {
    match &args.kind {
        Some(asked) if asked != holds => {
            bail!("{index} holds {holds}, not {asked} (leave out --kind to search what it holds)")
        }
        _ => Ok(()),
    }
}

/// `genie search --server URL`: the same queries file, sent to a server; the same output.
fn search_remote(
    registry: &Registry,
    args: &SearchArgs,
    url: &str,
    matches: &ArgMatches,
    given: &[String],
) -> Result<()> {
    for local in ["device", "devices", "parts", "method"] {
        if given.iter().any(|g| g == local) {
            bail!("--{local} applies to a local search, not to --server (the server chooses)");
        }
    }
    let client = Client::new(url, args.token.clone())?;
    let name = args.index.to_string_lossy();
    let served = client.indexes()?;
    let remote = served.iter().find(|i| i.name == name).ok_or_else(|| {
        let names: Vec<&str> = served.iter().map(|i| i.name.as_str()).collect();
        anyhow!(
            "{url} serves no index {name:?} (it serves: {})",
            names.join(", ")
        )
    })?;
    let kind = registry.get(&remote.kind)?;
    check_kind(args, &name, kind.name())?;
    if let Some(out) = &args.output {
        refuse_overwrite(std::slice::from_ref(out), &[(&args.queries, "the queries")])?;
    }
    let options = kind_options(registry, kind.as_ref(), matches, Phase::Search)?;
    let mut reader = kind.read_queries(&args.queries, &options)?;
    let (mut out, out_name) = open_output(args.output.as_deref())?;
    let mut first = 0u64;
    let per_request = args.batch_queries.min(REMOTE_CHUNK);
    loop {
        let (raws, places) = read_chunk(reader.as_mut(), per_request)?;
        if raws.is_empty() {
            break;
        }
        let answers = client
            .search(&name, &raws, args.k, args.min_count, &options)
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
fn log_stages(times: Option<genie::core::StageTimes>) {
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

fn serve(registry: &Registry, args: &ServeArgs, quiet: bool) -> Result<()> {
    let (device, asked_by) = device_choice(args.device)?;
    let spec = OpenSpec {
        device,
        devices: args.devices.clone(),
        ..OpenSpec::default()
    };
    let mut indexes = Vec::new();
    for (name, path) in &args.indexes {
        let t = Instant::now();
        let loaded = load(registry, path).with_context(|| format!("cannot serve {name}"))?;
        let replicas = place_on(&loaded, &spec, &asked_by)?;
        let devices: Vec<String> = replicas.iter().map(|r| r.backend_name()).collect();
        log::info!(
            "index {name}: {} objects of {} from {} on {} in {:.2} s",
            replicas[0].num_objects(),
            loaded.kind.name(),
            path.display(),
            devices.join(", "),
            t.elapsed().as_secs_f64()
        );
        indexes.push((name.clone(), replicas));
    }
    let policy = BatchPolicy {
        max_batch: args.max_batch,
        max_wait: Duration::try_from_secs_f64(args.max_wait_ms.max(0.0) / 1e3)
            .context("--max-wait-ms")?,
        queue_timeout: Duration::from_millis(args.queue_timeout_ms),
        gpu_pipeline: args.gpu_pipeline,
    };
    let service = Service::new(indexes, policy)?;
    let config = ServerConfig {
        listen: args.listen,
        token: args.token.clone().filter(|t| !t.is_empty()),
        limits: Limits {
            max_body_bytes: args.max_body_bytes,
            max_queries: args.max_queries,
            max_items: args.max_items,
            max_k: args.max_k,
        },
    };
    if !args.listen.ip().is_loopback() && config.token.is_none() {
        log::warn!(
            "listening on {} without a --token: anyone who reaches it may search",
            args.listen
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
        genie::server::serve_on(listener, service, &config, genie::server::shutdown_signal())
            .await
            .context("the server failed")
    })
}

fn info(args: &InfoArgs) -> Result<()> {
    // every array checked (mapped, in parallel) so that damage shows here too
    let info = genie::info::index_info(&args.index).context("cannot load the index")?;
    let mut out = io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &info)?;
        writeln!(out)?;
    } else {
        for line in info.lines() {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}
