//! What every run of the `genie` program does around its command: logging, the signals that
//! remove temporary files, the summary line, `genie info`'s output and the exit code.

use anyhow::{Context, Result};
use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

/// Info messages of the genie crates by default (the target `genie` also covers `genie_core`),
/// more with each -v, warnings only with --quiet; RUST_LOG, when set, overrides this.
pub fn init_logging(verbose: u8, quiet: bool) {
    let default = match (quiet, verbose) {
        (true, _) => "warn",
        (false, 0) => "warn,genie=info",
        (false, 1) => "info,genie=debug",
        (false, 2) => "debug,genie=trace",
        (false, _) => "trace",
    };
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(default)).init();
}

/// On SIGINT, SIGTERM or SIGHUP: the temporary files of the writes in progress (an index, an
/// output) are removed, the destinations stay as they were, and the process ends as the signal
/// would have ended it. (`genie serve` handles its signals itself: it finishes its requests.)
pub fn remove_temporaries_on_signal() {
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
            genie_core::atomic::abandon_all();
            let _ = signal_hook::low_level::emulate_default_handler(signal);
            std::process::exit(128 + signal);
        }
    });
}

/// A command's one-line summary on stderr (not with --quiet).
pub fn summary(quiet: bool, line: impl std::fmt::Display) {
    if !quiet {
        eprintln!("genie: {line}");
    }
}

/// The exit code of a command's outcome, its error written to stderr. A closed standard output
/// (`genie search ... | head`) is a success.
pub fn exit_code(result: Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("genie: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.root_cause()
        .downcast_ref::<io::Error>()
        .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
}

/// `genie info`: the index described on standard output, every array checked (mapped, in
/// parallel) so that damage shows here too; `json` prints everything as one line of JSON.
pub fn info(index: &Path, json: bool) -> Result<()> {
    let info = crate::info::index_info(index).context("cannot load the index")?;
    let mut out = io::stdout().lock();
    if json {
        serde_json::to_writer(&mut out, &info)?;
        writeln!(out)?;
    } else {
        for line in info.lines() {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}
