//! `genie`: build, search, serve and inspect GENIE match-count inverted indexes from the command
//! line. A thin front end: it parses the arguments ([`args`]) and hands each command to the
//! library ([`genie::cli`]: build, search and serve over [`genie::kind`], [`genie::service`] and
//! [`genie::server`]; logging, signals and the exit code in [`genie::cli::program`]).

mod args;

use anyhow::{Context, Result};
use args::{Cli, Command, SearchArgs, ServeArgs};
use clap::{ArgMatches, FromArgMatches};
use genie::cli::program::{self, summary};
use genie::cli::search::{filter_of, SearchJob};
use genie::cli::{live, Devices};
use genie::kind::Registry;
use genie::server::{Limits, ServerConfig};
use genie::service::BatchPolicy;
use std::process::ExitCode;
use std::time::Duration;

/// The program's allocator (see the note in Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // the debug log's clock starts with the process
    genie::clock_ms();
    let registry = Registry::default();
    let matches = args::command(&registry).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let sub = matches
        .subcommand()
        .map_or_else(ArgMatches::default, |(_, m)| m.clone());
    program::init_logging(cli.verbose, cli.quiet);
    if matches!(cli.command, Command::Build(_) | Command::Search(_)) {
        program::remove_temporaries_on_signal();
    }
    let quiet = cli.quiet;
    program::exit_code(match &cli.command {
        Command::Build(a) => {
            genie::cli::build::build(&registry, &a.input, &a.output, &a.kind, &sub, quiet)
                .and_then(|()| genie::cli::build::store(&a.output, a.postings, quiet))
        }
        Command::Search(args) => search(&registry, args, &sub, quiet),
        Command::Info(a) => program::info(&a.index, a.json),
        Command::Serve(args) => serve(&registry, args, quiet),
        Command::Add(a) => live::add(&registry, &a.index, &a.input, a.ids.as_deref())
            .map(|n| summary(quiet, format!("wrote {n} objects to {}", a.index.display()))),
        Command::Delete(a) => live::delete(&registry, &a.index, &a.ids).map(|n| {
            summary(
                quiet,
                format!("deleted {n} objects from {}", a.index.display()),
            )
        }),
        Command::Compact(a) => live::compact(&registry, &a.index).map(|n| {
            let index = a.index.display();
            summary(
                quiet,
                format!("compacted {index} into one segment of {n} live objects"),
            )
        }),
    })
}

/// `genie search`, here or (with --server) on a server.
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
        filter: filter_of(
            args.filter_ids.as_deref(),
            args.exclude_ids.as_deref(),
            args.filter_where.as_deref(),
        )?,
        dispatch: args.dispatch,
    };
    match &args.server {
        Some(url) => {
            genie::cli::search::search_remote(registry, &job, url, args.token.clone(), matches)
        }
        None => {
            let devices = Devices {
                device: args.device,
                devices: args.devices.clone(),
                parts: args.parts,
                method: args.method,
            };
            genie::cli::search::search(registry, &job, &devices, matches)
        }
    }
}

/// `genie serve`: the flags become the batching policy and the server's configuration.
fn serve(registry: &Registry, args: &ServeArgs, quiet: bool) -> Result<()> {
    let devices = Devices {
        device: args.device,
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
        own_threads: false,
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
    let data = args.data.as_deref();
    genie::cli::serve::serve(
        registry,
        &args.indexes,
        data,
        &devices,
        policy,
        &config,
        quiet,
    )
}
