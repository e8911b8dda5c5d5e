//! `genie`: build, search and inspect GENIE match-count inverted indexes from the command line.

use anyhow::{anyhow, Context, Result};
use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use genie::core::{
    DeviceChoice, Engine, GenieError, IndexBuilder, InvertedIndex, Method, Query, SearchParams,
};
use genie::input::{display_path, LineReader};
use genie::lsh::{Family, LshError};
use genie::output;
use genie::progress::bytes_bar;
use genie::vectors;
use indicatif::{HumanCount, ProgressBar};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
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
    /// Build an index from an objects file (or a vector file) and save it.
    ///
    /// The objects file has one object per line: its keywords as whitespace-separated unsigned
    /// 32-bit integers (duplicates count once). An empty line is an object without keywords.
    /// Object ids are the 0-based line numbers. A one-line summary goes to stderr.
    ///
    /// With --kind vectors the input is a vector file (.fvecs, .bvecs, .ivecs, .npy, IDX such as
    /// train-images-idx3-ubyte, .csv; optionally gzipped), hashed by an LSH family into one keyword
    /// per hash function (paper section IV). The index stores the family, its parameters and seed,
    /// and a copy of the vectors is saved beside it as INDEX.vectors so that a search can re-rank.
    /// Object ids are the 0-based rows of the file.
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
    ///
    /// With --kind vectors the index is one built with --kind vectors and the queries file is a
    /// vector file; each query takes the K2 objects of the largest match counts (--candidates) and
    /// re-ranks them by the exact distance of the family (L2 for e2lsh, L1 for l1 and rbh, cosine
    /// distance for srp), e.g. {"query":0,"hits":[{"id":12,"count":250,"distance":3.5}]}, hits
    /// sorted by distance, then count descending, then id.
    Search(SearchArgs),
    /// Print the statistics and metadata of an index file.
    Info(InfoArgs),
}

#[derive(Debug, Args)]
struct BuildArgs {
    /// The objects file, one object per line ("-" reads standard input); with --kind vectors, a
    /// vector file.
    #[arg(short, long, value_name = "OBJECTS")]
    input: PathBuf,

    /// The index file to write (overwritten if it exists); with --kind vectors also INDEX.vectors.
    #[arg(short, long, value_name = "INDEX")]
    output: PathBuf,

    /// What the input holds.
    #[arg(long, value_enum, default_value_t = KindArg::Keywords, value_name = "KIND")]
    kind: KindArg,

    #[command(flatten)]
    lsh: LshArgs,
}

/// The LSH options of `genie build --kind vectors`.
#[derive(Debug, Args)]
#[command(next_help_heading = "Vector indexes (--kind vectors)")]
struct LshArgs {
    /// The LSH family [default: e2lsh].
    #[arg(long, value_enum, value_name = "FAMILY")]
    lsh: Option<LshArg>,

    /// Number of hash functions m, one keyword each [default: 258, the largest m that Eqn. 9 of
    /// the paper needs for epsilon = delta = 0.06].
    #[arg(long, value_name = "M", value_parser = clap::value_parser!(u32).range(1..))]
    functions: Option<u32>,

    /// Bucket width w of e2lsh and l1, kernel width sigma of rbh (unused by srp) [default: from a
    /// sample of 1,000 vectors: 2 x the median nearest-neighbour distance for e2lsh and l1, the
    /// mean pairwise L1 distance for rbh].
    #[arg(long, value_name = "W")]
    width: Option<f64>,

    /// Buckets D each signature is re-hashed into by MurmurHash3 [default: 8192].
    #[arg(long, value_name = "D", value_parser = clap::value_parser!(u32).range(1..))]
    buckets: Option<u32>,

    /// Sign bits per srp function, 1 to 64 [default: 8].
    #[arg(long, value_name = "B", value_parser = clap::value_parser!(u32).range(1..=64))]
    bits: Option<u32>,

    /// Seed of every random draw of the hash functions [default: 1].
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
}

impl LshArgs {
    fn any(&self) -> bool {
        self.lsh.is_some()
            || self.functions.is_some()
            || self.width.is_some()
            || self.buckets.is_some()
            || self.bits.is_some()
            || self.seed.is_some()
    }
}

/// The `--kind` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum KindArg {
    /// Objects of keywords (one per line) and queries of keyword items.
    Keywords,
    /// Dense vectors hashed by an LSH family; queries are vectors, answers re-ranked.
    Vectors,
}

/// The `--lsh` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum LshArg {
    /// E2LSH for L2: floor((a.v + b) / w), a ~ N(0, 1)^d, b ~ U[0, w).
    E2lsh,
    /// The same with Cauchy a, for L1.
    L1,
    /// Random binning hashing for the Laplacian kernel exp(-||p - q||_1 / sigma).
    Rbh,
    /// Sign random projections, for the angle (cosine distance).
    Srp,
}

impl From<LshArg> for Family {
    fn from(f: LshArg) -> Self {
        match f {
            LshArg::E2lsh => Self::E2lsh,
            LshArg::L1 => Self::L1,
            LshArg::Rbh => Self::Rbh,
            LshArg::Srp => Self::Srp,
        }
    }
}

#[derive(Debug, Args)]
struct SearchArgs {
    /// The index file written by `genie build`.
    #[arg(long, value_name = "INDEX")]
    index: PathBuf,

    /// The queries file, one query per line ("-" reads standard input).
    #[arg(long, value_name = "QUERIES")]
    queries: PathBuf,

    /// Hits per query: the K objects of the largest match counts (0 gives no hits); with --kind
    /// vectors, the K nearest of the candidates.
    #[arg(short = 'k', long = "k", value_name = "K")]
    k: u32,

    /// What the index holds (as given to `genie build --kind`).
    #[arg(long, value_enum, default_value_t = KindArg::Keywords, value_name = "KIND")]
    kind: KindArg,

    /// Vector indexes: candidates taken by match count and re-ranked by the exact distance; K2 = K
    /// gives the pure tau-ANN answer of the paper [default: max(20 x K, 200)].
    #[arg(long, value_name = "K2")]
    candidates: Option<usize>,

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
        Command::Build(args) => match args.kind {
            KindArg::Keywords if args.lsh.any() => Err(anyhow!(
                "--lsh, --functions, --width, --buckets, --bits and --seed need --kind vectors"
            )),
            KindArg::Keywords => build(args, cli.quiet),
            KindArg::Vectors => build_vectors(args, cli.quiet),
        },
        Command::Search(args) => match args.kind {
            KindArg::Keywords if args.candidates.is_some() => {
                Err(anyhow!("--candidates needs --kind vectors"))
            }
            KindArg::Keywords => search(args, cli.quiet),
            KindArg::Vectors => search_vectors(args, cli.quiet),
        },
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
    let mut reader = LineReader::open(&args.input)?;
    let name = display_path(&args.input);
    let metadata = serde_json::json!({
        "built_by": format!("genie {}", env!("CARGO_PKG_VERSION")),
        "input": name,
    });
    let mut builder = IndexBuilder::new().metadata(metadata.to_string());
    let bar = bytes_bar("reading objects", reader.len(), quiet);
    let mut keywords = Vec::new();
    while reader.next_object(&mut keywords)? {
        builder
            .push_object(&keywords)
            .with_context(|| format!("{name}:{}", reader.lines_read()))?;
        if reader.lines_read() % PROGRESS_EVERY == 0 {
            bar.set_position(reader.bytes_read());
            bar.set_message(format!("{} objects", HumanCount(reader.lines_read())));
        }
    }
    bar.finish_and_clear();
    log::debug!("read {} objects from {name}", reader.lines_read());

    let bar = spinner("building the index", quiet);
    let index = builder
        .build()
        .with_context(|| format!("cannot build an index from {name}"))?;
    bar.set_prefix("saving the index");
    let saved = index.save(&args.output);
    bar.finish_and_clear();
    saved.context("cannot save the index")?;

    if !quiet {
        eprintln!(
            "built {}: {} objects, {} postings, keyword space {} in {:.2?}",
            args.output.display(),
            index.num_objects(),
            index.num_postings(),
            index.keyword_space(),
            start.elapsed()
        );
    }
    Ok(())
}

fn build_vectors(args: &BuildArgs, quiet: bool) -> Result<()> {
    let start = Instant::now();
    let opts = vectors::BuildOptions {
        input: args.input.clone(),
        output: args.output.clone(),
        family: args.lsh.lsh.unwrap_or(LshArg::E2lsh).into(),
        functions: args.lsh.functions,
        width: args.lsh.width,
        buckets: args.lsh.buckets,
        bits: args.lsh.bits,
        seed: args.lsh.seed.unwrap_or(vectors::DEFAULT_SEED),
    };
    let bar = spinner("hashing vectors and building the index", quiet);
    let built = vectors::build(&opts);
    bar.finish_and_clear();
    let summary = built
        .with_context(|| format!("cannot build a vector index from {}", args.input.display()))?;
    let p = &summary.params;
    if !quiet {
        let width = if p.family.has_width() {
            format!(", width {:.6}", p.width)
        } else {
            format!(", {} bits", p.bits)
        };
        eprintln!(
            "built {}: {} vectors of dimension {}, {} with {} functions{width}, {} buckets, \
             seed {}, {} postings in {:.2?}",
            args.output.display(),
            summary.rows,
            p.dim,
            p.family.name(),
            p.functions,
            p.buckets,
            p.seed,
            summary.postings,
            start.elapsed()
        );
    }
    Ok(())
}

fn search_vectors(args: &SearchArgs, quiet: bool) -> Result<()> {
    let start = Instant::now();
    let (device, asked_by) = device_choice(args.device)?;
    let index = vectors::load(&args.index, device).map_err(|e| match e {
        LshError::Core(GenieError::GpuUnavailable(_)) => anyhow!(
            "{e} (the GPU was requested by {asked_by}; use --device cpu or --device auto to \
             search on the CPU)"
        ),
        other => anyhow!(other).context("cannot load the vector index"),
    })?;
    log::info!("backend: {}", index.engine().backend_name());
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
    let opts = vectors::SearchOptions {
        queries: args.queries.clone(),
        k: args.k as usize,
        candidates: args.candidates,
        method: args.method.into(),
        chunk: args.batch_queries,
    };
    let bar = bytes_bar("searching", None, quiet);
    let n = vectors::search(&index, &opts, &mut out, &mut |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        bar.set_message(format!("{} queries", HumanCount(done as u64)));
    });
    bar.finish_and_clear();
    let n = n.map_err(|e| match e {
        LshError::Io { source, .. } => {
            anyhow!(source).context(format!("cannot write to {out_name}"))
        }
        other => anyhow!(other).context("search failed"),
    })?;
    out.flush()
        .with_context(|| format!("cannot write to {out_name}"))?;
    if !quiet {
        let secs = start.elapsed().as_secs_f64();
        log::info!(
            "searched {n} queries in {secs:.2}s ({:.0} queries/s)",
            n as f64 / secs.max(1e-9)
        );
    }
    Ok(())
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
    let index = InvertedIndex::load(&args.index).context("cannot load the index")?;
    log::debug!(
        "loaded {}: {} objects, {} postings in {:.2?}",
        args.index.display(),
        index.num_objects(),
        index.num_postings(),
        start.elapsed()
    );
    let engine = Engine::new(Arc::new(index), device).map_err(|e| match e {
        GenieError::GpuUnavailable(_) => anyhow!(
            "{e} (the GPU was requested by {asked_by}; use --device cpu or --device auto to \
             search on the CPU)"
        ),
        other => anyhow!(other).context("cannot start the search backend"),
    })?;
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
    engine: &Engine,
    queries: &[Query],
    path: &Path,
    first: u64,
) -> anyhow::Error {
    for (line, q) in (first + 1..).zip(queries) {
        if let Err(why) = engine.index().prepare(q) {
            return anyhow!("{}:{line}: query rejected: {why}", display_path(path));
        }
    }
    anyhow!(e).context("search failed")
}

fn info(args: &InfoArgs) -> Result<()> {
    let index = InvertedIndex::load(&args.index).context("cannot load the index")?;
    let mut out = io::stdout().lock();
    writeln!(out, "index: {}", args.index.display())?;
    writeln!(out, "objects: {}", index.num_objects())?;
    writeln!(out, "postings: {}", index.num_postings())?;
    writeln!(out, "keyword space: {}", index.keyword_space())?;
    writeln!(out, "max object length: {}", index.max_object_len())?;
    writeln!(out, "memory: {} bytes", index.heap_bytes())?;
    writeln!(out, "metadata: {}", index.metadata())?;
    Ok(())
}
