//! `genie build`: the kind's options taken from the command line, the files it would write
//! checked against those it reads, the build run under a progress bar, and its summary.

use anyhow::{Context, Result};
use clap::ArgMatches;
use std::path::Path;
use std::time::{Duration, Instant};

use super::flags::{kind_options, option_paths, Phase};
use super::part_files;
use super::progress::bytes_bar;
use crate::input::display_path;
use crate::kind::{BuildJob, Registry};
use crate::safety::{refuse_index_as_input, refuse_overwrite, Read};

/// Builds the index `output` of kind `kind` from `input`, with the kind's options given in
/// `matches` (the subcommand's); `quiet`: no progress bar and no summary line.
pub fn build(
    registry: &Registry,
    input: &Path,
    output: &Path,
    kind: &str,
    matches: &ArgMatches,
    quiet: bool,
) -> Result<()> {
    let start = Instant::now();
    let kind = registry.get(kind)?;
    let options = kind_options(registry, kind.as_ref(), matches, Phase::Build)?;
    let mut writes = vec![output.to_path_buf()];
    writes.extend(kind.side_files(output));
    writes.extend(part_files(output));
    let inputs = option_paths(kind.as_ref(), &options, Phase::Build);
    let mut reads: Vec<Read<'_>> = vec![(input, "the input")];
    reads.extend(inputs.iter().map(|(p, what)| (p.as_path(), what.as_str())));
    refuse_overwrite(&writes, &reads)?;
    refuse_index_as_input(input)?;
    let len = std::fs::metadata(input)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len());
    let bar = bytes_bar("building the index", len, quiet);
    if len.is_none() {
        bar.enable_steady_tick(Duration::from_millis(120));
    }
    let progress = |bytes: u64| bar.set_position(bytes);
    let job = BuildJob {
        input,
        output,
        options: &options,
        progress: &progress,
    };
    let report = kind.build(&job);
    bar.finish_and_clear();
    let report = report.with_context(|| format!("cannot build {}", display_path(output)))?;
    if report.objects == 0 {
        log::warn!(
            "{} holds no objects: {} has none (an index to add to later, or the wrong file?)",
            display_path(output),
            display_path(input)
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
            output.display(),
            report.summary,
            start.elapsed()
        );
    }
    Ok(())
}

/// Rewrites the index files just built at `output` with their List Arrays in `form`
/// ([`crate::kind::store_list_arrays`]), saying what each became unless `quiet`.
pub fn store(output: &Path, form: crate::kind::ListForm, quiet: bool) -> Result<()> {
    let t = Instant::now();
    let stored = crate::kind::store_list_arrays(output, form)
        .with_context(|| format!("cannot store the postings of {}", display_path(output)))?;
    if !quiet {
        for s in &stored {
            eprintln!(
                "stored {} with its postings {}: {} bytes, {:.1}% of {} ({:.2} bytes a posting) in {:.2?}",
                s.file.display(),
                form.name(),
                s.bytes_after,
                100.0 * s.bytes_after as f64 / s.bytes_before.max(1) as f64,
                s.bytes_before,
                s.bytes_per_posting,
                t.elapsed()
            );
        }
    }
    Ok(())
}
