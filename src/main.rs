//! `genie`: build, search and inspect GENIE match-count inverted indexes from the command line.

use anyhow::{anyhow, Context, Result};
use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use genie::core::{
    DeviceChoice, GenieError, IndexBuilder, InvertedIndex, Method, Query, SearchParams,
};
use genie::input::{display_path, LineReader};
use genie::output;
use genie::progress::bytes_bar;
use genie::searcher::Searcher;
use indicatif::{HumanCount, ProgressBar};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Default number of queries read, searched and written at a time.
const DEFAULT_BATCH_QUERIES: usize = 65_536;

/// Lines between two updates of the build progress bar.
const PROGRESS_EVERY: u64 = 4096;

#[derive(Debug, Parser)]
#[command(
    name = "genie",
    version,
    about = "Generic match-count inverted index for similarity search (GENIE), on the CPU or a GPU",
    long_about = "Generic match-count inverted index for similarity search (GENIE), on the CPU or \
                  a GPU.\n\nAn object is a set of keywords (unsigned 32-bit integers). A query is \
                  a list of items: keywords or keyword ranges, each with a weight. The match \
                  count of an object is the weighted number of its keywords inside the query's \
                  items; a search returns the top-k objects by count, ties broken by ascending \
                  object id."
)]
struct Cli {
    /// More log output on stderr; repeat for more (-vv, -vvv).
    ///
    /// By default genie logs warnings and its info messages (such as the backend in use and, with
    /// --device auto, why the CPU was chosen); -v adds genie's debug messages and other crates'
    /// info, -vv genie's trace messages and other crates' debug, -vvv everything. RUST_LOG, when
    /// set, overrides this (e.g. RUST_LOG=genie_core=debug).
    #[arg(short, long, action = ArgAction::Count, global = true, display_order = 900)]
    verbose: u8,

    /// No progress bars and no summary lines; only warnings and errors on stderr.
    #[arg(short, long, global = true, display_order = 901)]
    quiet: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Build an index from an objects file and save it.
    ///
    /// The objects file has one object per line: its keywords as whitespace-separated unsigned
    /// 32-bit integers (duplicates count once). An empty line is an object without keywords.
    /// Object ids are the 0-based line numbers. A one-line summary goes to stderr.
    Build(BuildArgs),
    /// Search an index with a file of queries; writes one JSON line per query.
    ///
    /// Each line of the queries file is one query: whitespace-separated items KW or LO-HI (an
    /// inclusive keyword range), each optionally followed by :WEIGHT (at least 1), e.g.
    /// `7 10-20 3:2`. An empty line is an empty query.
    ///
    /// The output has one line per query, in input order, e.g.
    /// {"query":0,"hits":[{"id":12,"count":3}]}, where query is the 0-based line number and the
    /// hits are sorted by count descending, then id ascending.
    ///
    /// The queries file is read, searched and written in chunks (--batch-queries), so it may be
    /// larger than memory.
    Search(SearchArgs),
    /// Print the statistics and metadata of an index file.
    Info(InfoArgs),
}

#[derive(Debug, Args)]
struct BuildArgs {
    /// The objects file, one object per line ("-" reads standard input).
    #[arg(short, long, value_name = "OBJECTS")]
    input: PathBuf,

    /// The index file to write (overwritten if it exists).
    #[arg(short, long, value_name = "INDEX")]
    output: PathBuf,

    /// Save the index in N parts over consecutive object ranges: INDEX is then a manifest and
    /// INDEX.part0 .. INDEX.partN-1 the parts. Each part is built and saved as soon as its objects
    /// are read, so the whole index is never in memory; a search streams the parts.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    parts: usize,

    /// Save a parted index of M objects per part (instead of --parts; works on standard input).
    #[arg(long, value_name = "M", conflicts_with = "parts",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    part_objects: Option<usize>,
}

#[derive(Debug, Args)]
struct SearchArgs {
    /// The index file written by `genie build`.
    #[arg(long, value_name = "INDEX")]
    index: PathBuf,

    /// The queries file, one query per line ("-" reads standard input).
    #[arg(long, value_name = "QUERIES")]
    queries: PathBuf,

    /// Hits per query: the K objects of the largest match counts (0 gives no hits).
    #[arg(short = 'k', long = "k", value_name = "K")]
    k: u32,

    /// Where to search. Default: the GENIE_DEVICE environment variable, else auto (the GPU when
    /// one is usable, else the CPU). gpu without a usable GPU is an error.
    #[arg(long, value_enum, value_name = "DEVICE")]
    device: Option<DeviceArg>,

    /// Write the JSON lines to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,

    /// How match counts are kept and the top-k selected (same results either way).
    #[arg(long, value_enum, default_value_t = MethodArg::Cpq, value_name = "METHOD")]
    method: MethodArg,

    /// Queries read, searched and written at a time (bounds memory use).
    #[arg(
        long,
        value_name = "N",
        default_value_t = DEFAULT_BATCH_QUERIES,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..),
    )]
    batch_queries: usize,

    /// Split the index into N parts that stream through the device one at a time (multi-loading).
    /// Default: the parts of a parted index file; else as many as the device memory budget needs
    /// (one when the index fits), and at least one per GPU.
    #[arg(long, value_name = "N",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    parts: Option<usize>,

    /// GPUs to use, e.g. 0,1 (default: all visible GPUs; parts go to them in turn).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    devices: Option<Vec<usize>>,
}

#[derive(Debug, Args)]
struct InfoArgs {
    /// The index file to describe.
    #[arg(long, value_name = "INDEX")]
    index: PathBuf,
}

/// The `--device` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum DeviceArg {
    /// The GPU when one is usable, else the CPU (the reason is logged).
    Auto,
    /// The CPU backend.
    Cpu,
    /// The CUDA backend; an error when no GPU is usable.
    #[value(alias = "cuda")]
    Gpu,
}

impl From<DeviceArg> for DeviceChoice {
    fn from(d: DeviceArg) -> Self {
        match d {
            DeviceArg::Auto => Self::Auto,
            DeviceArg::Cpu => Self::Cpu,
            DeviceArg::Gpu => Self::Gpu,
        }
    }
}

/// The `--method` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum MethodArg {
    /// The Count Priority Queue (bitmap counter, gate and hash table).
    Cpq,
    /// A full count table per query, then a k-selection (the baseline).
    CountTable,
}

impl From<MethodArg> for Method {
    fn from(m: MethodArg) -> Self {
        match m {
            MethodArg::Cpq => Self::Cpq,
            MethodArg::CountTable => Self::CountTable,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose, cli.quiet);
    let result = match &cli.command {
        Command::Build(args) => build(args, cli.quiet),
        Command::Search(args) => search(args, cli.quiet),
        Command::Info(args) => info(args),
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

/// A spinner on stderr for a phase without a measurable position.
fn spinner(message: &'static str, quiet: bool) -> ProgressBar {
    let bar = bytes_bar(message, None, quiet);
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

fn build(args: &BuildArgs, quiet: bool) -> Result<()> {
    let start = Instant::now();
    let name = display_path(&args.input);
    let per_part = objects_per_part(args)?;
    let mut reader = LineReader::open(&args.input)?;
    let metadata = serde_json::json!({
        "built_by": format!("genie {}", env!("CARGO_PKG_VERSION")),
        "input": name,
    })
    .to_string();
    let new_builder = || IndexBuilder::new().metadata(metadata.clone());
    let mut builder = new_builder();
    let mut writer = per_part.map(|_| genie::core::parts::PartWriter::new(&args.output));
    let mut totals = Totals::default();
    // a part is built and saved as soon as it is full, so the whole index is never in memory
    let flush = |builder: IndexBuilder,
                 writer: &mut genie::core::parts::PartWriter,
                 totals: &mut Totals| {
        let part = builder
            .build()
            .with_context(|| format!("cannot build an index from {name}"))?;
        totals.add(&part);
        writer.add(&part).context("cannot save the index")
    };
    let bar = bytes_bar("reading objects", reader.len(), quiet);
    let mut keywords = Vec::new();
    while reader.next_object(&mut keywords)? {
        builder
            .push_object(&keywords)
            .with_context(|| format!("{name}:{}", reader.lines_read()))?;
        if let (Some(m), Some(w)) = (per_part, writer.as_mut()) {
            if builder.len() == m {
                flush(
                    std::mem::replace(&mut builder, new_builder()),
                    w,
                    &mut totals,
                )?;
            }
        }
        if reader.lines_read() % PROGRESS_EVERY == 0 {
            bar.set_position(reader.bytes_read());
            bar.set_message(format!("{} objects", HumanCount(reader.lines_read())));
        }
    }
    bar.finish_and_clear();
    log::debug!("read {} objects from {name}", reader.lines_read());

    let bar = spinner("building the index", quiet);
    let saved = match writer.as_mut() {
        Some(w) => {
            if !builder.is_empty() || totals.objects == 0 {
                flush(builder, w, &mut totals)?;
            }
            writer
                .map(|w| w.finish())
                .transpose()
                .map(|_| ())
                .context("cannot save the index")
        }
        None => {
            let index = builder
                .build()
                .with_context(|| format!("cannot build an index from {name}"))?;
            totals.add(&index);
            bar.set_prefix("saving the index");
            index.save(&args.output).context("cannot save the index")
        }
    };
    bar.finish_and_clear();
    saved?;
    if !quiet {
        eprintln!(
            "built {}: {} objects, {} postings, keyword space {} in {:.2?}",
            args.output.display(),
            totals.objects,
            totals.postings,
            totals.space,
            start.elapsed()
        );
    }
    Ok(())
}

/// What a build wrote, for its summary line.
#[derive(Default)]
struct Totals {
    objects: u64,
    postings: u64,
    space: u32,
}

impl Totals {
    fn add(&mut self, index: &InvertedIndex) {
        self.objects += u64::from(index.num_objects());
        self.postings += index.num_postings();
        self.space = self.space.max(index.keyword_space());
    }
}

/// Objects per part of a parted build: `--part-objects`, or the line count split `--parts` ways
/// (a first pass over the file); `None` for a single index.
fn objects_per_part(args: &BuildArgs) -> Result<Option<usize>> {
    if let Some(m) = args.part_objects {
        return Ok(Some(m));
    }
    if args.parts <= 1 {
        return Ok(None);
    }
    if args.input.as_os_str() == "-" {
        anyhow::bail!(
            "--parts needs a file to count its objects; with standard input use --part-objects"
        );
    }
    let f = File::open(&args.input)
        .with_context(|| format!("{}: cannot open", args.input.display()))?;
    let mut lines = 0usize;
    let mut last = b'\n';
    let mut r = io::BufReader::with_capacity(1 << 20, f);
    loop {
        let buf = io::BufRead::fill_buf(&mut r)
            .with_context(|| format!("{}: cannot read", args.input.display()))?;
        if buf.is_empty() {
            break;
        }
        lines += buf.iter().filter(|&&b| b == b'\n').count();
        last = buf[buf.len() - 1];
        let n = buf.len();
        io::BufRead::consume(&mut r, n);
    }
    if last != b'\n' {
        lines += 1;
    }
    Ok(Some(lines.div_ceil(args.parts).max(1)))
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

fn search(args: &SearchArgs, quiet: bool) -> Result<()> {
    let start = Instant::now();
    let (device, asked_by) = device_choice(args.device)?;
    let mut reader = LineReader::open(&args.queries)?;
    let engine =
        Searcher::open(&args.index, device, args.parts, args.devices.as_deref()).map_err(|e| {
            match e {
                GenieError::GpuUnavailable(_) => anyhow!(
            "{e} (the GPU was requested by {asked_by}; use --device cpu or --device auto to \
             search on the CPU)"
        ),
                e @ (GenieError::Io { .. } | GenieError::BadIndexFile { .. }) => {
                    anyhow!(e).context("cannot load the index")
                }
                other => anyhow!(other).context("cannot start the search backend"),
            }
        })?;
    log::debug!("opened {} in {:.2?}", args.index.display(), start.elapsed());
    log::info!("backend: {}", engine.backend_name());

    let out_name = args
        .output
        .as_ref()
        .map_or_else(|| "<stdout>".to_string(), |p| p.display().to_string());
    let sink: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(
            File::create(path).with_context(|| format!("{}: cannot create", path.display()))?,
        ),
        None => Box::new(io::stdout().lock()),
    };
    let mut out = BufWriter::with_capacity(1 << 16, sink);

    let params = SearchParams::top_k(args.k).with_method(args.method.into());
    let bar = bytes_bar("searching", reader.len(), quiet);
    let mut queries = Vec::new();
    let mut first = 0u64;
    loop {
        queries.clear();
        let chunk_start = reader.bytes_read();
        let n = reader.read_queries(args.batch_queries, &mut queries)?;
        if n == 0 {
            break;
        }
        let chunk_bytes = (reader.bytes_read() - chunk_start) as f64;
        let results = engine
            .search_with_progress(&queries, &params, &mut |done| {
                let frac = done as f64 / n as f64;
                bar.set_position(chunk_start + (chunk_bytes * frac) as u64);
                bar.set_message(format!("{} queries", HumanCount(first + done as u64)));
            })
            .map_err(|e| locate_query_error(e, &engine, &queries, reader.path(), first))?;
        output::write_results(&mut out, first, &results)
            .and_then(|()| out.flush())
            .with_context(|| format!("cannot write to {out_name}"))?;
        first += n as u64;
    }
    bar.finish_and_clear();
    out.flush()
        .with_context(|| format!("cannot write to {out_name}"))?;
    if !quiet {
        let secs = start.elapsed().as_secs_f64();
        log::info!(
            "searched {first} queries in {secs:.2}s ({:.0} queries/s)",
            first as f64 / secs.max(1e-9)
        );
    }
    Ok(())
}

/// Names the query line behind a search error when one query is to blame (such as a count bound
/// beyond the supported maximum), else passes the error on.
fn locate_query_error(
    e: GenieError,
    engine: &Searcher,
    queries: &[Query],
    path: &Path,
    first: u64,
) -> anyhow::Error {
    let Ok(index) = engine.reference_index() else {
        return anyhow!(e).context("search failed");
    };
    for (line, q) in (first + 1..).zip(queries) {
        if let Err(why) = index.prepare(q) {
            return anyhow!("{}:{line}: query rejected: {why}", display_path(path));
        }
    }
    anyhow!(e).context("search failed")
}

fn info(args: &InfoArgs) -> Result<()> {
    let mut out = io::stdout().lock();
    if genie::core::parts::is_manifest(&args.index)? {
        let (m, _) =
            genie::core::parts::open_parts(&args.index).context("cannot load the index")?;
        writeln!(out, "index: {} (parted)", args.index.display())?;
        writeln!(out, "objects: {}", m.num_objects)?;
        writeln!(out, "keyword space: {}", m.keyword_space)?;
        for p in &m.parts {
            writeln!(
                out,
                "part {}: objects {}..{}",
                p.file,
                p.base,
                u64::from(p.base) + u64::from(p.objects)
            )?;
        }
        writeln!(out, "metadata: {}", m.metadata)?;
        return Ok(());
    }
    let index = InvertedIndex::load(&args.index).context("cannot load the index")?;
    writeln!(out, "index: {}", args.index.display())?;
    writeln!(out, "objects: {}", index.num_objects())?;
    writeln!(out, "postings: {}", index.num_postings())?;
    writeln!(out, "keyword space: {}", index.keyword_space())?;
    writeln!(out, "max object length: {}", index.max_object_len())?;
    writeln!(out, "memory: {} bytes", index.heap_bytes())?;
    writeln!(out, "metadata: {}", index.metadata())?;
    Ok(())
}
