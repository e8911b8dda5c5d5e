//! `genie`: build, search, serve and inspect GENIE match-count inverted indexes from the command
//! line. A thin front end: it parses the arguments ([`args`]), sets up logging and signals, hands
//! each command to the library ([`genie::cli`]: build, search and serve over [`genie::kind`],
//! [`genie::service`] and [`genie::server`]) and turns the outcome into an exit code.

mod args;

use anyhow::{bail, Context, Result};
use args::{Cli, Command, InfoArgs, SearchArgs, ServeArgs};
use clap::parser::ValueSource;
use clap::{ArgMatches, FromArgMatches};
use genie::cli::search::SearchJob;
use genie::cli::Devices;
use genie::kind::Registry;
use genie::server::{Limits, ServerConfig};
use genie::service::BatchPolicy;
use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let registry = Registry::default();
    let matches = args::command(&registry).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let sub = matches
        .subcommand()
        .map_or_else(ArgMatches::default, |(_, m)| m.clone());
    init_logging(cli.verbose, cli.quiet);
    if matches!(cli.command, Command::Build(_) | Command::Search(_)) {
        remove_temporaries_on_signal();
    }
    let result = match &cli.command {
        Command::Build(a) => {
            genie::cli::build::build(&registry, &a.input, &a.output, &a.kind, &sub, cli.quiet)
        }
        Command::Search(args) => search(&registry, args, &sub, cli.quiet),
        Command::Info(args) => info(args),
        Command::Serve(args) => serve(&registry, args, cli.quiet),
        Command::Add(a) => genie::cli::live::add(&registry, &a.index, &a.input, a.ids.as_deref())
            .map(|n| {
                summary(
                    cli.quiet,
                    format!("wrote {n} objects to {}", a.index.display()),
                )
            }),
        Command::Delete(a) => genie::cli::live::delete(&registry, &a.index, &a.ids).map(|n| {
            summary(
                cli.quiet,
                format!("deleted {n} objects from {}", a.index.display()),
            )
        }),
        Command::Compact(a) => genie::cli::live::compact(&registry, &a.index).map(|n| {
            summary(
                cli.quiet,
                format!(
                    "compacted {} into one segment of {n} live objects",
                    a.index.display()
                ),
            )
        }),
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

/// A command's one-line summary on stderr (not with --quiet).
fn summary(quiet: bool, line: String) {
    if !quiet {
        eprintln!("genie: {line}");
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

/// The filter of `--filter-ids`, `--exclude-ids` and `--filter-where`.
fn filter_of(args: &SearchArgs) -> Result<Option<std::sync::Arc<genie::kind::Filter>>> {
    use genie::cli::live::read_ids;
    if args.filter_ids.is_none() && args.exclude_ids.is_none() && args.filter_where.is_none() {
        return Ok(None);
    }
    let allow = args.filter_ids.as_deref().map(read_ids).transpose()?;
    let deny = args
        .exclude_ids
        .as_deref()
        .map(read_ids)
        .transpose()?
        .unwrap_or_default();
    let filter = genie::kind::Filter::new(allow, deny);
    Ok(Some(std::sync::Arc::new(match &args.filter_where {
        Some(c) => filter.with_condition(c.clone()),
        None => filter,
    })))
}

/// `genie search`, here or (with --server) on a server, which refuses the flags of where to
/// search here.
fn search(registry: &Registry, args: &SearchArgs, matches: &ArgMatches, quiet: bool) -> Result<()> {
    let job = SearchJob {
        index: &args.index,
        queries: &args.queries,
        k: args.k,
        min_count: args.min_count,
        kind: args.kind.as_deref(),
        output: args.output.as_deref(),
        batch_queries: args.batch_queries,
        quiet,
        filter: filter_of(args)?,
        dispatch: args.dispatch,
    };
    let Some(url) = &args.server else {
        let devices = Devices {
            device: args.device.map(Into::into),
            devices: args.devices.clone(),
            parts: args.parts,
            method: args.method.into(),
        };
        return genie::cli::search::search(registry, &job, &devices, matches);
    };
    for local in ["device", "devices", "parts", "method"] {
        if matches.value_source(local) == Some(ValueSource::CommandLine) {
            bail!("--{local} applies to a local search, not to --server (the server chooses)");
        }
    }
    genie::cli::search::search_remote(registry, &job, url, args.token.clone(), matches)
}

/// `genie serve`: the flags become the batching policy and the server's configuration.
fn serve(registry: &Registry, args: &ServeArgs, quiet: bool) -> Result<()> {
    let devices = Devices {
        device: args.device.map(Into::into),
        devices: args.devices.clone(),
        ..Devices::default()
    };
    let policy = BatchPolicy {
        max_batch: args.max_batch,
        max_wait: Duration::try_from_secs_f64(args.max_wait_ms.max(0.0) / 1e3)
            .context("--max-wait-ms")?,
        queue_timeout: Duration::from_millis(args.queue_timeout_ms),
        gpu_pipeline: args.gpu_pipeline,
        dispatch: args.dispatch,
    };
    let config = ServerConfig {
        listen: args.listen,
        token: args.token.clone().filter(|t| !t.is_empty()),
        limits: Limits {
            max_body_bytes: args.max_body_bytes,
            max_queries: args.max_queries,
            max_items: args.max_items,
            max_k: args.max_k,
            max_objects: args.max_objects,
        },
        writable: args.writable,
        refresh: Duration::from_millis(args.refresh_ms),
        create: None,
    };
    genie::cli::serve::serve(
        registry,
        &args.indexes,
        args.data.as_deref(),
        &devices,
        policy,
        &config,
        quiet,
    )
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
