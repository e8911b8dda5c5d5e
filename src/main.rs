//! `genie`: build, search and inspect GENIE match-count inverted indexes from the command line.

use anyhow::{anyhow, bail, Context, Result};
use clap::parser::ValueSource;
use clap::{
    ArgAction, ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum,
};
use genie::core::{
    DeviceChoice, Engine, GenieError, IndexBuilder, InvertedIndex, Method, Query, SearchParams,
};
use genie::input::{display_path, LineReader};
use genie::kinds::Kind;
use genie::lsh::{Family, LshError};
use genie::output;
use genie::progress::bytes_bar;
use genie::sa::{Alphabet, InferOptions, NGramConfig, SequenceSearchParams, Tokenizer};
use genie::searcher::Searcher;
use genie::{documents, sequences, table, vectors};
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
    /// Build an index from an objects file and save it.
    ///
    /// The objects file has one object per line: its keywords as whitespace-separated unsigned
    /// 32-bit integers (duplicates count once). An empty line is an object without keywords.
    /// Object ids are the 0-based line numbers. A one-line summary goes to stderr.
    ///
    /// With --kind, the input holds other data: `sequences` (one per line, searched by edit
    /// distance; the sequences are saved beside the index as INDEX.seqs), `documents` (one per
    /// line, or a CSV column with --column; the word dictionary is saved as INDEX.words) or
    /// `table` (a CSV file; numeric columns are discretized into --bins intervals). Object ids are
    /// the 0-based line or row numbers, a header excluded.
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
    /// For indexes of other kinds (read from the index), the queries are of that kind:
    /// sequences (one per line; hits carry their edit distance and each query an `exact` flag),
    /// documents (one per line, or a CSV column with --column), or table rows (a CSV row per line,
    /// numeric values searched +- --radius intervals, or conditions such as
    /// `age=30..40 workclass=Private`).
    ///
    /// For a vector index (--kind vectors) the queries file is a vector file; each query takes the
    /// K2 objects of the largest match counts (--candidates) and re-ranks them by the exact
    /// distance of the family (L2 for e2lsh, L1 for l1 and rbh, cosine distance for srp), e.g.
    /// {"query":0,"hits":[{"id":12,"count":250,"distance":3.5}]}, hits sorted by distance, then
    /// count descending, then id.
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

    /// What the input holds.
    #[arg(long, value_enum, default_value_t = KindArg::Keywords, value_name = "KIND")]
    kind: KindArg,

    /// Sequences: the n-gram length n.
    #[arg(long, value_name = "N", default_value_t = NGramConfig::default().n, help_heading = "Sequences")]
    ngram: usize,

    /// Sequences: n-grams of Unicode characters or of bytes.
    #[arg(long, value_enum, default_value_t = AlphabetArg::Chars, help_heading = "Sequences")]
    alphabet: AlphabetArg,

    /// Sequences: no n - 1 pad symbols at both ends (a sequence shorter than n then has no
    /// n-gram and is found by no query).
    #[arg(long, help_heading = "Sequences")]
    no_pad: bool,

    /// Documents: read the documents from this column of a CSV file with a header.
    #[arg(long, value_name = "NAME", help_heading = "Documents")]
    column: Option<String>,

    /// Documents: keep English stop words (dropped by default).
    #[arg(long, help_heading = "Documents")]
    keep_stop_words: bool,

    /// Table: equal-width intervals per numeric column.
    #[arg(long, value_name = "B", default_value_t = genie::sa::schema::DEFAULT_BINS, help_heading = "Table")]
    bins: u32,

    /// Table: the column names, comma-separated (the file then has no header row).
    #[arg(
        long,
        value_name = "NAMES",
        value_delimiter = ',',
        help_heading = "Table"
    )]
    names: Option<Vec<String>>,

    /// Table: take the column names from a UCI .names file (the file then has no header row).
    /// Default: INPUT's STEM.names when it exists, else the header row.
    #[arg(long, value_name = "FILE", help_heading = "Table")]
    names_file: Option<PathBuf>,

    /// Table: the first row is the header, even if a STEM.names file lies beside the input.
    #[arg(long, help_heading = "Table")]
    header: bool,

    /// Table: columns that must be numeric (comma-separated names).
    #[arg(
        long,
        value_name = "NAMES",
        value_delimiter = ',',
        help_heading = "Table"
    )]
    numeric: Vec<String>,

    /// Table: columns to treat as categorical even if their values are numbers.
    #[arg(
        long,
        value_name = "NAMES",
        value_delimiter = ',',
        help_heading = "Table"
    )]
    categorical: Vec<String>,

    #[command(flatten)]
    lsh: LshArgs,
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

    /// What the index holds; default: the kind recorded in the index (a mismatch is an error).
    #[arg(long, value_enum, value_name = "KIND")]
    kind: Option<KindArg>,

    /// Candidates K2 taken by match count, then verified by the true measure. Sequences: by edit
    /// distance [default: 32]. Vectors: re-ranked by exact distance; K2 = K gives the pure tau-ANN
    /// answer of the paper [default: max(20 x K, 200)].
    #[arg(long, value_name = "K2")]
    candidates: Option<u32>,

    /// Sequences: queries not proven exact are searched again with K doubled, up to this K
    /// (no repetition when not above --candidates).
    #[arg(long, value_name = "K", default_value_t = genie::sa::seq_search::DEFAULT_MAX_CANDIDATES, help_heading = "Sequences")]
    max_candidates: u32,

    /// Sequences: verify queries still not proven after the last round against all sequences,
    /// so that every result is exact.
    #[arg(long, help_heading = "Sequences")]
    exhaustive: bool,

    /// Documents: read the queries from this column of a CSV file with a header.
    #[arg(long, value_name = "NAME", help_heading = "Documents")]
    column: Option<String>,

    /// Table: intervals on each side of the numeric values of CSV-row queries.
    #[arg(long, value_name = "R", default_value_t = 0, help_heading = "Table")]
    radius: u32,

    /// Table: how query lines are read.
    #[arg(long, value_enum, default_value_t = QueryFormatArg::Auto, value_name = "FORMAT", help_heading = "Table")]
    query_format: QueryFormatArg,
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

/// The `--kind` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum KindArg {
    /// Objects as lists of keywords (unsigned 32-bit integers).
    Keywords,
    /// Sequences (one per line) under edit distance, by ordered n-grams.
    Sequences,
    /// Short documents (one per line or a CSV column), by shared words.
    Documents,
    /// Rows of a CSV table, by attribute conditions.
    Table,
    /// Dense vectors hashed by an LSH family; queries are vectors, answers re-ranked.
    Vectors,
}

impl From<KindArg> for Kind {
    fn from(k: KindArg) -> Self {
        match k {
            KindArg::Keywords => Self::Keywords,
            KindArg::Sequences => Self::Sequences,
            KindArg::Documents => Self::Documents,
            KindArg::Table => Self::Table,
            KindArg::Vectors => Self::Vectors,
        }
    }
}

/// The `--alphabet` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum AlphabetArg {
    /// Unicode scalar values.
    Chars,
    /// Bytes.
    Bytes,
}

/// The `--query-format` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum QueryFormatArg {
    /// Conditions when the first word is NAME=..., else a CSV row.
    Auto,
    /// CSV rows.
    Csv,
    /// Conditions NAME=VALUE, NAME=LO..HI, NAME=V~R.
    Conditions,
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

/// Options that only apply to one kind of data: (argument id, kind).
const KIND_OPTIONS: &[(&str, Kind)] = &[
    ("ngram", Kind::Sequences),
    ("alphabet", Kind::Sequences),
    ("no_pad", Kind::Sequences),
    ("max_candidates", Kind::Sequences),
    ("exhaustive", Kind::Sequences),
    ("column", Kind::Documents),
    ("keep_stop_words", Kind::Documents),
    ("bins", Kind::Table),
    ("names", Kind::Table),
    ("names_file", Kind::Table),
    ("header", Kind::Table),
    ("numeric", Kind::Table),
    ("categorical", Kind::Table),
    ("radius", Kind::Table),
    ("query_format", Kind::Table),
    ("lsh", Kind::Vectors),
    ("functions", Kind::Vectors),
    ("width", Kind::Vectors),
    ("buckets", Kind::Vectors),
    ("bits", Kind::Vectors),
    ("seed", Kind::Vectors),
];

/// The kind-specific options given on the command line of a subcommand.
fn kind_options_given(matches: Option<&ArgMatches>) -> Vec<(&'static str, Kind)> {
    let Some(m) = matches else { return Vec::new() };
    KIND_OPTIONS
        .iter()
        .filter(|(id, _)| {
            m.try_get_raw(id).is_ok_and(|v| v.is_some())
                && m.value_source(id) == Some(ValueSource::CommandLine)
        })
        .copied()
        .collect()
}

/// An error for an option of another kind than `kind`.
fn check_kind_options(given: &[(&str, Kind)], kind: Kind) -> Result<()> {
    match given.iter().find(|(_, k)| *k != kind) {
        Some((id, k)) => bail!(
            "--{} applies to --kind {}, not to {}",
            id.replace('_', "-"),
            k.name(),
            kind.name()
        ),
        None => Ok(()),
    }
}

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let given = kind_options_given(
        matches
            .subcommand()
            .map(|(_, m)| m)
            .filter(|_| !matches!(cli.command, Command::Info(_))),
    );
    init_logging(cli.verbose, cli.quiet);
    let result = match &cli.command {
        Command::Build(args) => check_kind_options(&given, args.kind.into()).and_then(|()| {
            if args.kind == KindArg::Vectors {
                build_vectors(args, cli.quiet)
            } else {
                build(args, cli.quiet)
            }
        }),
        Command::Search(args) => search(args, &given, cli.quiet),
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
    if args.kind != KindArg::Keywords {
        return build_kind(args, quiet);
    }
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
    let (mut out, out_name) = open_output(args.output.as_deref())?;
    let opts = vectors::SearchOptions {
        queries: args.queries.clone(),
        k: args.k as usize,
        candidates: args.candidates.map(|c| c as usize),
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

fn search(args: &SearchArgs, given: &[(&str, Kind)], quiet: bool) -> Result<()> {
    let start = Instant::now();
    let (device, asked_by) = device_choice(args.device)?;
    let reader = LineReader::open(&args.queries)?;
    let gpu_error = |e: GenieError| match e {
        GenieError::GpuUnavailable(_) => anyhow!(
            "{e} (the GPU was requested by {asked_by}; use --device cpu or --device auto to \
             search on the CPU)"
        ),
        e @ (GenieError::Io { .. } | GenieError::BadIndexFile { .. }) => {
            anyhow!(e).context("cannot load the index")
        }
        other => anyhow!(other).context("cannot start the search backend"),
    };
    // a parted index (a manifest of part files) holds keyword objects
    let parted = genie::core::parts::is_manifest(&args.index).context("cannot load the index")?;
    let index = if parted {
        None
    } else {
        Some(InvertedIndex::load(&args.index).context("cannot load the index")?)
    };
    log::debug!("opened {} in {:.2?}", args.index.display(), start.elapsed());
    let kind = match &index {
        Some(i) => Kind::of_metadata(i.metadata())
            .with_context(|| format!("cannot search {}", args.index.display()))?,
        None => Kind::Keywords,
    };
    if let Some(asked) = args.kind.map(Kind::from) {
        if asked != kind {
            bail!(
                "{} holds {}, not {} (leave out --kind to search what it holds)",
                args.index.display(),
                kind.name(),
                asked.name()
            );
        }
    }
    check_kind_options(given, kind)?;
    if kind == Kind::Vectors {
        drop(index);
        return search_vectors(args, quiet);
    }
    if args.candidates.is_some() && kind != Kind::Sequences {
        bail!(
            "--candidates applies to --kind sequences and vectors, not to {}",
            kind.name()
        );
    }

    let (mut out, out_name) = open_output(args.output.as_deref())?;
    let searched = match (kind, index) {
        (Kind::Keywords, index) => {
            let (parts, devices) = (args.parts, args.devices.as_deref());
            let t = Instant::now();
            let searcher = match index {
                Some(i) => Searcher::from_index(i, device, parts, devices),
                None => Searcher::open(&args.index, device, parts, devices),
            }
            .map_err(gpu_error)?;
            log::info!(
                "backend: {} (ready in {:.3} s)",
                searcher.backend_name(),
                t.elapsed().as_secs_f64()
            );
            let n = search_keywords(args, &searcher, reader, &mut out, &out_name, quiet)?;
            log_stages(searcher.take_stage_times());
            n
        }
        (_, Some(index)) => {
            drop(reader);
            let index = Arc::new(index);
            let t = Instant::now();
            let engine = start_engine(Arc::clone(&index), device, &asked_by)?;
            log::info!(
                "backend: {} (index uploaded in {:.3} s)",
                engine.backend_name(),
                t.elapsed().as_secs_f64()
            );
            let bar = spinner("searching", quiet);
            let n = search_kind(args, kind, &engine, &index, &mut out);
            bar.finish_and_clear();
            log_stages(engine.take_stage_times());
            n?
        }
        (_, None) => bail!(
            "{}: a parted index holds keyword objects only",
            args.index.display()
        ),
    };
    out.flush()
        .with_context(|| format!("cannot write to {out_name}"))?;
    if !quiet {
        let secs = start.elapsed().as_secs_f64();
        log::info!(
            "searched {searched} queries in {secs:.2}s ({:.0} queries/s)",
            searched as f64 / secs.max(1e-9)
        );
    }
    Ok(())
}

/// The search output (`--output FILE`, else standard output), buffered, and its name for errors.
fn open_output(path: Option<&Path>) -> Result<(BufWriter<Box<dyn Write>>, String)> {
    let name = path.map_or_else(|| "<stdout>".to_string(), |p| p.display().to_string());
    let sink: Box<dyn Write> = match path {
        Some(p) => {
            Box::new(File::create(p).with_context(|| format!("{}: cannot create", p.display()))?)
        }
        None => Box::new(io::stdout().lock()),
    };
    Ok((BufWriter::with_capacity(1 << 16, sink), name))
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
    }
}

/// An engine on the chosen device; a missing GPU names what asked for it.
fn start_engine(index: Arc<InvertedIndex>, device: DeviceChoice, asked_by: &str) -> Result<Engine> {
    Engine::new(index, device).map_err(|e| match e {
        GenieError::GpuUnavailable(_) => anyhow!(
            "{e} (the GPU was requested by {asked_by}; use --device cpu or --device auto to \
             search on the CPU)"
        ),
        other => anyhow!(other).context("cannot start the search backend"),
    })
}

/// Searches a queries file of keyword items; returns the number of queries.
fn search_keywords(
    args: &SearchArgs,
    engine: &Searcher,
    mut reader: LineReader,
    out: &mut BufWriter<Box<dyn Write>>,
    out_name: &str,
    quiet: bool,
) -> Result<u64> {
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
            .map_err(|e| locate_query_error(e, engine, &queries, reader.path(), first))?;
        output::write_results(out, first, &results)
            .and_then(|()| out.flush())
            .with_context(|| format!("cannot write to {out_name}"))?;
        first += n as u64;
    }
    bar.finish_and_clear();
    Ok(first)
}

/// Searches a queries file of sequences, documents or table rows; returns the number of queries.
fn search_kind(
    args: &SearchArgs,
    kind: Kind,
    engine: &Engine,
    index: &InvertedIndex,
    out: &mut dyn Write,
) -> Result<u64> {
    let params = SearchParams::top_k(args.k).with_method(args.method.into());
    let batch = args.batch_queries;
    let n = match kind {
        Kind::Sequences => {
            let (transform, store) = sequences::open(index, &args.index)?;
            let searcher = sequences::searcher(engine, &transform, &store)?;
            let mut params = SequenceSearchParams::top_k(args.k)
                .with_candidates(
                    args.candidates
                        .unwrap_or(genie::sa::seq_search::DEFAULT_CANDIDATES),
                )
                .repeat_until(args.max_candidates);
            params.exhaustive = args.exhaustive;
            sequences::search_file(&searcher, &args.queries, &params, batch, out)?
        }
        Kind::Documents => {
            let transform = documents::open(index, &args.index)?;
            let column = args.column.as_deref();
            documents::search_file(
                engine,
                &transform,
                &args.queries,
                column,
                &params,
                batch,
                out,
            )?
        }
        Kind::Table => {
            let transform = table::open(index, &args.index)?;
            let options = table::QueryOptions {
                radius: args.radius,
                format: match args.query_format {
                    QueryFormatArg::Auto => table::QueryFormat::Auto,
                    QueryFormatArg::Csv => table::QueryFormat::Csv,
                    QueryFormatArg::Conditions => table::QueryFormat::Conditions,
                },
            };
            table::search_file(
                engine,
                &transform,
                &args.queries,
                options,
                &params,
                batch,
                out,
            )?
        }
        Kind::Vectors => bail!("internal error: vector queries are searched by search_vectors"),
        Kind::Keywords => bail!("internal error: keyword queries are searched by search_keywords"),
    };
    Ok(n)
}

/// Builds and saves an index of sequences, documents or a table.
fn build_kind(args: &BuildArgs, quiet: bool) -> Result<()> {
    let start = Instant::now();
    let bar = spinner("building the index", quiet);
    let built = build_kind_files(args);
    bar.finish_and_clear();
    let (index, side) = built?;
    if !quiet {
        eprintln!(
            "built {}: {} objects, {} postings, keyword space {} in {:.2?}{}",
            args.output.display(),
            index.num_objects(),
            index.num_postings(),
            index.keyword_space(),
            start.elapsed(),
            side.map_or_else(String::new, |p| format!(" (side data: {})", p.display()))
        );
    }
    Ok(())
}

/// Builds and saves; returns the index and its side file, if any.
fn build_kind_files(args: &BuildArgs) -> Result<(InvertedIndex, Option<PathBuf>)> {
    let input = &args.input;
    let cannot = || format!("cannot build an index from {}", display_path(input));
    match Kind::from(args.kind) {
        Kind::Sequences => {
            let alphabet = match args.alphabet {
                AlphabetArg::Chars => Alphabet::Chars,
                AlphabetArg::Bytes => Alphabet::Bytes,
            };
            let config = NGramConfig::new(args.ngram, alphabet, !args.no_pad)?;
            let (index, table) = sequences::build(input, config).with_context(cannot)?;
            sequences::save(&args.output, &index, &table).context("cannot save the index")?;
            let side = genie::kinds::side_path(&args.output, sequences::SIDE_EXT);
            Ok((index, Some(side)))
        }
        Kind::Documents => {
            let tokenizer = Tokenizer {
                keep_stop_words: args.keep_stop_words,
            };
            let (index, transform) =
                documents::build(input, args.column.as_deref(), tokenizer).with_context(cannot)?;
            documents::save(&args.output, &index, &transform).context("cannot save the index")?;
            let side = genie::kinds::side_path(&args.output, documents::SIDE_EXT);
            Ok((index, Some(side)))
        }
        Kind::Table => {
            let source = table::NameSource {
                names: args.names.clone(),
                names_file: args.names_file.clone(),
                header: args.header,
            };
            let mut options = InferOptions {
                bins: args.bins,
                ..InferOptions::default()
            };
            for (names, hint) in [
                (&args.numeric, genie::sa::schema::KindHint::Numeric),
                (&args.categorical, genie::sa::schema::KindHint::Categorical),
            ] {
                options
                    .hints
                    .extend(names.iter().map(|n| (n.clone(), hint)));
            }
            let (index, _) = table::build(input, &source, &options).with_context(cannot)?;
            index.save(&args.output).context("cannot save the index")?;
            Ok((index, None))
        }
        Kind::Keywords | Kind::Vectors => {
            bail!("internal error: keyword objects and vectors have builds of their own")
        }
    }
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
