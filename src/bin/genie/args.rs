//! The command line of `genie`: subcommands and their flags (clap). The flags of the kinds of
//! data are not written here: each kind declares its options once
//! ([`genie::kind::OptionSpec`]), and [`command`] adds a flag of each
//! ([`genie::cli::flags::kind_flags`]), so a kind registered in the [`Registry`] gets its flags
//! with no edit here.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{ArgAction, Args, CommandFactory, Parser, Subcommand};
use genie::cli::flags::{kind_flags, Phase};
use genie::core::{DeviceChoice, Method};
use genie::kind::Registry;
use std::net::SocketAddr;
use std::path::PathBuf;

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
pub struct Cli {
    /// More log output on stderr; repeat for more (-vv, -vvv).
    ///
    /// By default genie logs warnings and its info messages (such as the backend in use and, with
    /// --device auto, why the CPU was chosen); -v adds genie's debug messages and other crates'
    /// info, -vv genie's trace messages and other crates' debug, -vvv everything. RUST_LOG, when
    /// set, overrides this (e.g. RUST_LOG=genie_core=debug).
    #[arg(short, long, action = ArgAction::Count, global = true, display_order = 900)]
    pub verbose: u8,

    /// No progress bars and no summary lines; only warnings and errors on stderr.
    #[arg(short, long, global = true, display_order = 901)]
    pub quiet: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build an index from an objects file and save it.
    ///
    /// The objects file has one object per line: its keywords as whitespace-separated unsigned
    /// 32-bit integers (duplicates count once). An empty line is an object without keywords.
    /// Object ids are the 0-based line numbers. A one-line summary goes to stderr.
    ///
    /// The same objects may come in binary form, giving the same index: a NumPy CSR pair
    /// (--input KEYWORDS.npy --offsets OFFSETS.npy, or --input DIR holding offsets.npy and
    /// keywords.npy), or a Parquet or Arrow IPC file with a list<uint32> column (one object per
    /// row; --column NAME, default the only list column). Object ids are then the 0-based rows.
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
    /// Serve indexes over HTTP (JSON API) until Ctrl-C or SIGTERM.
    ///
    /// The indexes stay resident (replicated on each GPU in use when they fit one, else streamed
    /// in parts), and queries arriving one at a time from many clients are searched in batches:
    /// an idle device launches at once, a busy one gathers the next batch.
    ///
    /// API: POST /v1/indexes/NAME/search with {"queries": [...], "k": 10}, where each query is in
    /// the kind's form (a keyword line "7 10-20 3:2" or [7, [10, 20]], a sequence, a document, a
    /// table row or conditions as a string, a vector as an array of numbers); GET /v1/indexes,
    /// GET /healthz, GET /metrics (Prometheus). README.md has examples with curl.
    Serve(ServeArgs),
    /// Add objects to a live index, or replace those of ids it holds.
    ///
    /// INDEX is a live index folder, or an index file from `genie build`: its live index is the
    /// folder INDEX.live beside it, made on first use with the file as its first segment (the
    /// file is never changed). OBJECTS has one keyword object per line; with --ids, line i of
    /// IDS is the id of object i, else ids follow the largest id in the index. The objects are
    /// in the index's log on disk when the command ends, and flushed into a segment.
    Add(AddArgs),
    /// Delete the objects of the ids in a file (one per line) from a live index.
    Delete(DeleteArgs),
    /// Merge every segment of a live index into one, dropping deleted objects.
    Compact(CompactArgs),
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// The live index folder, or an index file (its live index is INDEX.live).
    #[arg(long, value_name = "INDEX")]
    pub index: PathBuf,

    /// The objects, one keyword line each.
    #[arg(short, long, value_name = "OBJECTS")]
    pub input: PathBuf,

    /// The objects' ids, one unsigned 64-bit integer per line.
    #[arg(long, value_name = "IDS")]
    pub ids: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The live index folder, or an index file (its live index is INDEX.live).
    #[arg(long, value_name = "INDEX")]
    pub index: PathBuf,

    /// The ids to delete, one per line.
    #[arg(long, value_name = "IDS")]
    pub ids: PathBuf,
}

#[derive(Debug, Args)]
pub struct CompactArgs {
    /// The live index folder, or an index file (its live index is INDEX.live).
    #[arg(long, value_name = "INDEX")]
    pub index: PathBuf,
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The objects: a text file, one object per line ("-" reads standard input); or, for
    /// --kind keywords, a Parquet or Arrow IPC file (.parquet, .arrow/.feather/.ipc, .arrows; a
    /// list column, see --column), a NumPy keywords file (.npy, with --offsets) or a directory
    /// holding offsets.npy and keywords.npy. Other names are recognized by their first bytes.
    #[arg(short, long, value_name = "OBJECTS")]
    pub input: PathBuf,

    /// The index file to write (overwritten if it exists).
    #[arg(short, long, value_name = "INDEX")]
    pub output: PathBuf,

    /// What the input holds: keywords, sequences, documents, table or vectors.
    #[arg(long, default_value = "keywords", value_name = "KIND")]
    pub kind: String,

    /// How the index file stores its List Array: plain (4 bytes a posting, opened in place) or
    /// packed (blocks of offsets in the bits they need: about half the bytes on typical indexes;
    /// a GPU copies the packed form and unpacks it on the device, the CPU unpacks it at its first
    /// search; the same answers either way). `genie info` shows the bytes a posting.
    #[arg(long, value_enum, default_value = "plain", value_name = "FORM")]
    pub postings: genie::kind::ListForm,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The index file written by `genie build` (with --server: the index's name on the server).
    #[arg(long, value_name = "INDEX")]
    pub index: PathBuf,

    /// The queries file, one query per line ("-" reads standard input).
    #[arg(long, value_name = "QUERIES")]
    pub queries: PathBuf,

    /// Hits per query: the K objects of the largest match counts (0 gives no hits).
    #[arg(short = 'k', long = "k", value_name = "K")]
    pub k: u32,

    /// Where to search. Default: the GENIE_DEVICE environment variable, else auto: the CPU when
    /// the search would end there before a GPU could start (a count index, estimated from the
    /// index's size, the queries and the host's cores; the rule is logged), else the GPU when one
    /// is usable, else the CPU. gpu without a usable GPU is an error.
    #[arg(long, value_name = "DEVICE", value_parser = device_values())]
    pub device: Option<DeviceChoice>,

    /// Write the JSON lines to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// How match counts are kept and the top-k selected, with the same results either way: cpq
    /// (the Count Priority Queue: bitmap counter, gate and hash table) or count-table (a full
    /// count table per query, then a k-selection: the baseline).
    #[arg(long, value_name = "METHOD", default_value = "cpq",
          value_parser = PossibleValuesParser::new(["cpq", "count-table"]).try_map(|s| s.parse::<Method>()))]
    pub method: Method,

    /// Queries per chunk: one chunk is read while the one before is searched and the one
    /// before that written, at most 3 chunks searched or written at once (bounds memory use).
    /// Default: 2,048 for each GPU searching, at least 8,192.
    #[arg(long, value_name = "N",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub batch_queries: Option<usize>,

    /// How a chunk's batches go to the devices: `cohort` deals them to idle devices first;
    /// `greedy` lets any free runner take the next (for comparisons).
    #[arg(long, value_name = "RULE", default_value = "cohort", hide = true)]
    pub dispatch: genie::service::Dispatch,

    /// Split the index into N parts that stream through the device one at a time (multi-loading).
    /// Default: the parts of a parted index file; else as many as the device memory budget needs
    /// (one when the index fits), and at least one per GPU.
    #[arg(long, value_name = "N",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub parts: Option<usize>,

    /// GPUs to use, e.g. 0,1 (default: all visible GPUs; parts go to them in turn).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub devices: Option<Vec<usize>>,

    /// What the index holds; default: the kind recorded in the index (a mismatch is an error).
    #[arg(long, value_name = "KIND")]
    pub kind: Option<String>,

    /// Only hits whose match count is at least T (with --k as the cap: every object of count
    /// >= T, up to K of them).
    #[arg(long, value_name = "T")]
    pub min_count: Option<u32>,

    /// Only objects of the ids in FILE (one per line) may be hits; applied before the top-k,
    /// so K hits come back whenever K such objects match.
    #[arg(long, value_name = "FILE")]
    pub filter_ids: Option<PathBuf>,

    /// Objects of the ids in FILE (one per line) are never hits.
    #[arg(long, value_name = "FILE")]
    pub exclude_ids: Option<PathBuf>,

    /// Only rows that meet CONDITIONS (a table index: `age=30..40 job=clerk`, every condition
    /// met; a numeric interval passes the rows of the bins it touches) may be hits.
    #[arg(long, value_name = "CONDITIONS")]
    pub filter_where: Option<String>,

    /// Send the queries to a `genie serve` server at URL (e.g. http://127.0.0.1:7700) instead of
    /// searching here; --index is then the name the server gives the index. The output is the
    /// same JSON lines.
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,

    /// The server's bearer token (with --server).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "GENIE_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The index file to describe.
    #[arg(long, value_name = "INDEX")]
    pub index: PathBuf,

    /// Print everything, the whole metadata included, as one line of JSON (the default
    /// summarises long metadata: a table's columns one a line, long lists cut).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// An index to serve, as NAME=PATH (repeat for more).
    #[arg(long = "index", value_name = "NAME=PATH", required_unless_present = "data", value_parser = parse_named)]
    pub indexes: Vec<(String, PathBuf)>,

    /// With --writable: a folder of live indexes, each NAME.live served as NAME, where
    /// `PUT /v1/indexes/NAME` creates new ones (made if missing).
    #[arg(long, value_name = "DIR", requires = "writable")]
    pub data: Option<PathBuf>,

    /// The address to listen on. The default is loopback only: other machines reach the server
    /// only when told so (e.g. 0.0.0.0:7700), and then a --token is strongly advised.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7700")]
    pub listen: SocketAddr,

    /// Where to search. Default: the GENIE_DEVICE environment variable, else auto.
    #[arg(long, value_name = "DEVICE", value_parser = device_values())]
    pub device: Option<DeviceChoice>,

    /// GPUs to use, e.g. 0,1 (default: all visible GPUs; each holds a replica of an index that
    /// fits it, and batches are dealt among them).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub devices: Option<Vec<usize>>,

    /// Require `Authorization: Bearer TOKEN` on every request but /healthz.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "GENIE_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,

    /// Largest request body in bytes (413 above).
    #[arg(long, value_name = "BYTES", default_value_t = genie::server::Limits::default().max_body_bytes)]
    pub max_body_bytes: usize,

    /// Most queries in one request.
    #[arg(long, value_name = "N", default_value_t = genie::server::Limits::default().max_queries)]
    pub max_queries: usize,

    /// Most keyword items one query may become.
    #[arg(long, value_name = "N", default_value_t = genie::server::Limits::default().max_items)]
    pub max_items: usize,

    /// Largest k of a request.
    #[arg(long, value_name = "K", default_value_t = genie::server::Limits::default().max_k)]
    pub max_k: u32,

    /// Most objects (or ids) in one write request.
    #[arg(long, value_name = "N", default_value_t = genie::server::Limits::default().max_objects)]
    pub max_objects: usize,

    /// Take writes: each INDEX file becomes the first segment of a live index in the folder
    /// INDEX.live beside it (made on first use; the file is never changed), and objects can be
    /// added, replaced and deleted through the API. A live index folder is served too.
    #[arg(long)]
    pub writable: bool,

    /// How stale a search of a live index may be, in milliseconds: writes answered within this
    /// time before a search may not be in it yet; writes arriving faster are gathered into one
    /// new segment (0: every answered write is in every later search).
    #[arg(long, value_name = "MS", default_value_t = genie::server::DEFAULT_REFRESH_MS)]
    pub refresh_ms: u64,

    /// Most queries in one batch on a device.
    #[arg(long, value_name = "N", default_value_t = genie::service::BatchPolicy::default().max_batch)]
    pub max_batch: usize,

    /// How long an idle device waits for a fuller batch, in milliseconds (0: launch at once).
    #[arg(long, value_name = "MS", default_value_t = 0.0)]
    pub max_wait_ms: f64,

    /// Batches in flight per GPU: the next one's host work overlaps the current one's device
    /// work (the GPU still runs one at a time).
    #[arg(long, value_name = "N", default_value_t = genie::service::BatchPolicy::default().gpu_pipeline)]
    pub gpu_pipeline: usize,

    /// When an idle device launches while others are busy: `greedy` at once with whatever is
    /// queued; `cohort` a batch to an idle device first, and once the queue holds a batch it runs
    /// efficiently (from its measured batch times) or the oldest query waited one launch's fixed
    /// cost (measured slower on 1, 2 and 4 GPUs: docs/BENCHMARKS.md).
    #[arg(long, value_name = "RULE", default_value = "greedy")]
    pub dispatch: genie::service::Dispatch,

    /// A query still queued after this many milliseconds fails with 503 (overloaded).
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    pub queue_timeout_ms: u64,
}

/// The `--device` values: auto, cpu, gpu (or cuda).
fn device_values() -> impl TypedValueParser<Value = DeviceChoice> {
    let gpu = PossibleValue::new("gpu").alias("cuda");
    PossibleValuesParser::new([PossibleValue::new("auto"), PossibleValue::new("cpu"), gpu])
        .try_map(|s| s.parse::<DeviceChoice>())
}

/// Parses NAME=PATH.
fn parse_named(s: &str) -> Result<(String, PathBuf), String> {
    match s.split_once('=') {
        Some((name, path)) if !name.is_empty() && !path.is_empty() => {
            if name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            {
                Ok((name.to_string(), PathBuf::from(path)))
            } else {
                Err(format!(
                    "index name {name:?}: use letters, digits, '-', '_' and '.'"
                ))
            }
        }
        _ => Err(format!("expected NAME=PATH, found {s:?}")),
    }
}

/// The whole command line: the subcommands above, with a flag for every option the registry's
/// kinds declare (build options on `build`, search options on `search`).
pub fn command(registry: &Registry) -> clap::Command {
    let kinds = registry.names().join(", ");
    Cli::command()
        .mut_subcommand("build", |c| {
            let c = c.mut_arg("kind", |a| {
                a.help(format!("What the input holds: {kinds} [default: keywords]"))
            });
            kind_flags(c, registry, Phase::Build)
        })
        .mut_subcommand("search", |c| kind_flags(c, registry, Phase::Search))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_sound() {
        super::command(&genie::kind::Registry::default()).debug_assert();
    }
}
