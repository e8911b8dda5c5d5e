//! The `vectors` kind: `genie build --kind vectors` hashes a vector
//! file with a genie-lsh family and saves the index with a copy of the vectors beside it
//! (`INDEX.vectors`); the build tunes the width and the candidates re-ranked for a recall@10
//! (`--target-recall`, default 0.95) on a held-out sample of the vectors, unless `--width` and
//! `--candidates` say otherwise (see [`genie_lsh::tune`]), and prints the recall it measured.
//! `genie search --kind vectors` hashes a query vector file, takes the top-K
//! objects by match count and re-ranks them by the exact distance, writing JSON lines
//! `{"query":0,"hits":[{"id":12,"count":250,"distance":3.5}]}` (ids and query numbers are 0-based
//! rows of the files).
//!
//! Vector files: `.fvecs`, `.bvecs`, `.ivecs`, `.npy`, IDX (e.g. `train-images-idx3-ubyte`), `.csv`,
//! any of them gzipped (see [`genie_lsh::io`]).

use super::{
    prepared, vector_json, vector_query, vector_row, Answer, BuildJob, BuildReport, IndexSource,
    Kind, KindIndex, KindInfo, OpenOptions, Opened, OptionSpec, OptionType, Options, Placement,
    Prepared, QueryFile, QueryReader, RawBlock, Request, VectorRows,
};
use crate::data_error::DataError;
use genie_core::{DeviceChoice, Method};
use genie_lsh::stored::IndexFamily;
use genie_lsh::tune::{self, TuneReport, TuneSpec, TUNE_K};
use genie_lsh::tuning::{check_target, DEFAULT_TARGET};
use genie_lsh::{estimate, io, Family, LshError, LshParams, VectorIndex, VectorSet};
use serde_json::Value;
use std::any::Any;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Default seed of the hash functions.
pub const DEFAULT_SEED: u64 = 1;

/// The number of candidates re-ranked for `k` hits by an index without defaults of its own
/// (built before the tuning, or too small to tune): `max(20 k, 200)` (see
/// [`genie_lsh::index::untuned_candidates`]).
pub fn default_candidates(k: usize) -> usize {
    genie_lsh::index::untuned_candidates(k)
}

/// What `genie build --kind vectors` needs.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// The vector file.
    pub input: PathBuf,
    /// The index file to write (the vectors go to `INDEX.vectors`).
    pub output: PathBuf,
    /// The hash family.
    pub family: Family,
    /// Number of functions `m` (default: Eqn. 9 with epsilon = delta = 0.06).
    pub functions: Option<u32>,
    /// Bucket width `w` (E2LSH, L1) or kernel width `sigma` (RBH) (default: tuned, from the
    /// estimate).
    pub width: Option<f64>,
    /// Candidates a search re-ranks for `k <= 10` when it asks for none (default: tuned).
    pub candidates: Option<u32>,
    /// The recall@10 the tuning aims at, in `(0, 1]`.
    pub target: f64,
    /// Buckets `D` of the re-hash (default 8192).
    pub buckets: Option<u32>,
    /// Sign bits per SRP function (default 8).
    pub bits: Option<u32>,
    /// Seed of the functions.
    pub seed: u64,
}

/// What a build did.
#[derive(Clone, Debug)]
pub struct BuildSummary {
    /// The parameters used.
    pub params: LshParams,
    /// Number of vectors indexed.
    pub rows: usize,
    /// Postings of the core index.
    pub postings: u64,
    /// The candidates a search re-ranks by default for `k <= 10` (`None`: `max(20 k, 200)`).
    pub candidates: Option<u32>,
    /// What the tuning chose and measured, when it ran.
    pub tuning: Option<TuneReport>,
}

/// The parameters of a build: the estimates of [`genie_lsh::estimate`], overridden by the options.
pub fn build_params(vectors: &VectorSet, opts: &BuildOptions) -> Result<LshParams, LshError> {
    let width = match opts.width {
        Some(w) => w,
        None => estimate::default_width(vectors, opts.family, opts.seed)?,
    };
    let mut params = LshParams::new(
        opts.family,
        vectors.dim(),
        opts.functions
            .unwrap_or_else(genie_lsh::params::default_functions),
        width,
        opts.seed,
    );
    if let Some(d) = opts.buckets {
        params.buckets = d;
    }
    if let Some(b) = opts.bits {
        params.bits = b;
    }
    params.validate()?;
    Ok(params)
}

/// Reads the vectors, tunes what the options leave open, hashes them and saves the index and its
/// vectors.
pub fn build(opts: &BuildOptions) -> Result<BuildSummary, LshError> {
    check_target(opts.target)?;
    let vectors = io::read_vectors(&opts.input)?;
    if vectors.is_empty() {
        return Err(LshError::format(&opts.input, "no vector to index"));
    }
    let params = build_params(&vectors, opts)?;
    let rows = vectors.len();
    let source = Some(opts.input.display().to_string());
    let spec = TuneSpec {
        target: opts.target,
        keep_width: opts.width.is_some(),
        candidates: opts.candidates,
    };
    let (index, tuning) = tune::build_tuned(vectors, params, &spec, DeviceChoice::Cpu, source)?;
    index.save(&opts.output)?;
    Ok(BuildSummary {
        params: index.metadata().params.clone(),
        rows,
        postings: index.engine().index().num_postings(),
        candidates: index.metadata().candidates,
        tuning,
    })
}

/// The build summary's account of the defaults: what the tuning chose, what it measured and
/// what it cost.
fn defaults_summary(summary: &BuildSummary) -> String {
    let Some(t) = &summary.tuning else {
        return match summary.candidates {
            Some(c) => format!("; {c} candidates by default (given, not tuned)"),
            None => format!(
                "; too few vectors to tune: max(20 k, 200) candidates by default \
                 ({} for k = {TUNE_K})",
                default_candidates(TUNE_K)
            ),
        };
    };
    let p = &t.params;
    let width = if !p.family.has_width() {
        String::new()
    } else if t.tuned.width_tuned {
        format!(
            "width {:.6} ({:.2} x the estimate {:.6}; {} widths compared on {} rows), ",
            p.width,
            p.width / t.start_width,
            t.start_width,
            t.trials.len(),
            t.width_rows
        )
    } else {
        format!("width {:.6} (given), ", p.width)
    };
    let given = if t.tuned.candidates_tuned {
        ""
    } else {
        " (given)"
    };
    let below = if t.tuned.reached {
        ""
    } else {
        " (below the target: the best recall found)"
    };
    let sample = &t.tuned.sample;
    format!(
        "; tuned in {:.1} s on {} held-out vectors: {width}{}{given} candidates give \
         recall@{} {:.3} (target {}){below}",
        t.seconds, sample.queries, t.candidates, sample.k, sample.recall, sample.target
    )
}

/// The kind of dense vectors.
#[derive(Clone, Copy, Debug, Default)]
pub struct Vectors;

/// The LSH family of a checked `lsh` option (one of the declared words; codebook is built
/// apart).
fn family(name: Option<&str>) -> Family {
    match name {
        Some("l1") => Family::L1,
        Some("rbh") => Family::Rbh,
        Some("srp") => Family::Srp,
        _ => Family::E2lsh,
    }
}

/// The build options of vectors.
const BUILD_OPTIONS: &[OptionSpec] = &[
    OptionSpec::new(
        "lsh",
        OptionType::Choice(&["e2lsh", "l1", "rbh", "srp", "codebook"]),
        "FAMILY",
        "The vector family: codebook (IVF cells and product-quantization codes as keywords, \
         tuned at build time; L2, cosine or inner product by --metric), or an LSH family with \
         the paper's guarantee (e2lsh: L2; l1: L1; rbh: random binning for the Laplacian \
         kernel; srp: sign random projections, the angle) [default: codebook].",
    ),
    OptionSpec::new(
        "metric",
        OptionType::Choice(genie_lsh::codebook::space::METRICS),
        "METRIC",
        "Codebook: the similarity searched: l2; cosine (vectors and queries taken at length 1, \
         the distance reported 1 - cos); or ip, the inner product (the distance reported is \
         minus the inner product, so smaller is closer) [default: l2].",
    ),
    OptionSpec::u32(
        "functions",
        1,
        "M",
        "Number of hash functions m, one keyword each [default: 258, the largest m that Eqn. 9 \
         of the paper needs for epsilon = delta = 0.06].",
    ),
    OptionSpec::new(
        "width",
        OptionType::F64,
        "W",
        "Bucket width w of e2lsh and l1, kernel width sigma of rbh (unused by srp) [default: \
         tuned for --target-recall around an estimate from a sample of 1,000 vectors].",
    ),
    OptionSpec::u32(
        "buckets",
        1,
        "D",
        "Buckets D each signature is re-hashed into by MurmurHash3 [default: 8192].",
    ),
    OptionSpec::new(
        "bits",
        OptionType::U32 { min: 1, max: 64 },
        "B",
        "Sign bits per srp function, 1 to 64 [default: 8].",
    ),
    OptionSpec::new(
        "seed",
        OptionType::U64,
        "S",
        "Seed of every random draw of the hash functions [default: 1].",
    ),
    OptionSpec::u32(
        "candidates",
        1,
        "K",
        "The candidates a search re-ranks by default (for k up to 10, the same share of a larger \
         k; a search's --candidates overrides it) [default: tuned for --target-recall].",
    ),
    OptionSpec::new(
        "target_recall",
        OptionType::F64,
        "R",
        "The recall@10 the build tunes the search defaults for (the LSH families: the width and \
         the candidates; codebook: the probe), measured on a held-out sample of the vectors, in \
         (0, 1] [default: 0.95].",
    ),
    OptionSpec::u32(
        "cells",
        1,
        "C",
        "Codebook: coarse k-means cells [default: 2 x sqrt(rows), at most 4,096].",
    ),
    OptionSpec::u32(
        "subspaces",
        1,
        "M",
        "Codebook: slices of a vector, each coded in one byte [default: dimension / 4, at most \
         64].",
    ),
    OptionSpec::new(
        "rerank",
        OptionType::Choice(&genie_lsh::Form::NAMES),
        "FORM",
        "Codebook: what a search re-ranks its candidates from, kept beside the index: f32, the \
         vectors (4 bytes a dimension, exact distances); f16, half precision (2 bytes); sq8, 8-bit \
         steps by dimension (1 byte); codes, the index's own codes (no copy: the slices' codes \
         and 4 bytes a vector). The build tunes the candidates for --target-recall with the form \
         chosen; `genie info` shows its bytes a vector and recall [default: f32].",
    ),
];

/// The kind of dense vectors; the side files are `INDEX.vectors` (both families) and
/// `INDEX.codebook` (the codebook's), as genie-lsh names them (`vectors_path`, `codebook_path`).
const INFO: KindInfo = KindInfo {
    build_options: BUILD_OPTIONS,
    search_options: super::codebook::SEARCH_OPTIONS,
    side_files: &["vectors", "codebook"],
    ..KindInfo::new(
        "vectors",
        "Dense vectors (codebook, or an LSH family); queries are vectors, answers re-ranked",
    )
};

impl Kind for Vectors {
    fn info(&self) -> &KindInfo {
        &INFO
    }

    fn holds(&self, metadata: &Value) -> bool {
        IndexFamily::of(metadata).is_some()
    }

    fn build(&self, job: &BuildJob<'_>) -> Result<BuildReport, DataError> {
        let o = job.options;
        o.check(self.name(), self.build_options())?;
        let seed = o.u64("seed")?.unwrap_or(DEFAULT_SEED);
        let lsh = o.str("lsh")?;
        if matches!(lsh, None | Some("codebook")) {
            for name in ["functions", "width", "buckets", "bits", "candidates"] {
                if o.has(name) {
                    let message = match lsh {
                        None => {
                            "an option of the LSH families: name one with --lsh (the \
                                 default family is codebook)"
                        }
                        Some(_) => "an option of the LSH families, not of --lsh codebook",
                    };
                    return Err(DataError::BadOption {
                        name: name.into(),
                        message: message.into(),
                    });
                }
            }
            return super::codebook::build(job, seed);
        }
        let target = o.f64("target_recall")?.unwrap_or(DEFAULT_TARGET);
        if check_target(target).is_err() {
            return Err(DataError::BadOption {
                name: "target_recall".into(),
                message: format!("expected a recall in (0, 1], found {target}"),
            });
        }
        for name in ["cells", "subspaces", "metric", "rerank"] {
            if o.has(name) {
                return Err(DataError::BadOption {
                    name: name.into(),
                    message: "an option of --lsh codebook".into(),
                });
            }
        }
        let opts = BuildOptions {
            input: job.input.to_path_buf(),
            output: job.output.to_path_buf(),
            family: family(o.str("lsh")?),
            functions: o.u32("functions")?,
            width: o.f64("width")?,
            candidates: o.u32("candidates")?,
            target,
            buckets: o.u32("buckets")?,
            bits: o.u32("bits")?,
            seed,
        };
        // genie-lsh's errors name the file they are about
        let summary = build(&opts)?;
        let p = &summary.params;
        let width = if p.family.has_width() {
            format!(", width {:.6}", p.width)
        } else {
            format!(", {} bits", p.bits)
        };
        Ok(BuildReport {
            summary: format!(
                "{} vectors of dimension {}, {} with {} functions{width}, {} buckets, seed {}, \
                 {} postings{}",
                summary.rows,
                p.dim,
                p.family.name(),
                p.functions,
                p.buckets,
                p.seed,
                summary.postings,
                defaults_summary(&summary)
            ),
            objects: summary.rows as u64,
            side_files: vec![genie_lsh::index::vectors_path(job.output)],
        })
    }

    fn open_queries(&self, path: &Path, _: &Options) -> QueryFile {
        Ok(Box::new(VectorQueries::open(path)?))
    }

    fn live_objects(
        &self,
        setup: &super::LiveSetup,
    ) -> Result<std::sync::Arc<dyn super::LiveObjects>, DataError> {
        Ok(std::sync::Arc::new(super::live_vectors::LiveVectors::new(
            setup,
        )?))
    }

    fn open(&self, source: &IndexSource, placement: Placement, options: &OpenOptions) -> Opened {
        let index = super::single_index(source, self.name())?;
        let Placement::Resident(backend) = placement else {
            return Err(DataError::Unsupported(
                "an index of vectors cannot be split into parts: it must fit one device".into(),
            ));
        };
        if IndexFamily::of(&source.metadata) == Some(IndexFamily::Codebook) {
            return super::codebook::open(source, index, backend.as_ref(), options);
        }
        let vectors = super::codebook::shared_vectors(source, &index)?;
        let index = VectorIndex::open_with(&source.path, index, backend.as_ref(), vectors)?;
        Ok(Box::new(OpenVectors {
            index,
            method: options.method,
        }))
    }
}

/// The rows of a vector file as queries (the file is read whole: vector files are binary):
/// blocks of rows that vector kinds parse from the floats ([`RawBlock::Rows`]), or JSON arrays.
pub struct VectorQueries {
    vectors: Arc<VectorSet>,
    path: PathBuf,
    next: usize,
}

impl VectorQueries {
    /// Reads the vector file at `path`.
    pub fn open(path: &Path) -> Result<Self, DataError> {
        Ok(Self {
            vectors: Arc::new(io::read_vectors(path)?),
            path: path.to_path_buf(),
            next: 0,
        })
    }

    /// Rows `first..first + len` as a block.
    fn rows(&self, first: usize, len: usize) -> VectorRows {
        VectorRows {
            set: Arc::clone(&self.vectors),
            first,
            len,
            path: self.path.clone(),
        }
    }
}

impl QueryReader for VectorQueries {
    fn next_query(&mut self) -> Result<Option<Value>, DataError> {
        if self.next >= self.vectors.len() {
            return Ok(None);
        }
        self.next += 1;
        // a non-finite value is refused here, with its file, row and column
        vector_json(self.rows(self.next - 1, 1).row(0)?).map(Some)
    }

    fn location(&self) -> String {
        VectorRows::place_of_row(&self.path, self.next.saturating_sub(1))
    }

    /// The next rows, shared with the reader: a kind that takes floats parses them as they are.
    fn next_block(&mut self, max: usize) -> Result<RawBlock, DataError> {
        let first = self.next;
        let len = max.min(self.vectors.len() - first);
        self.next += len;
        Ok(RawBlock::Rows(self.rows(first, len)))
    }
}

/// An opened vector index.
pub struct OpenVectors {
    index: VectorIndex,
    method: Method,
}

/// A parsed vector query.
struct VectorQuery {
    vector: Vec<f32>,
    candidates: Option<u32>,
}

impl KindIndex for OpenVectors {
    searched_vector_methods!();

    fn check_options(&self, options: &Options) -> Result<(), DataError> {
        let family = self.index.transform().params().family.name();
        if let Some(name) = options.names().find(|n| *n != "candidates") {
            if Vectors.search_options().iter().any(|o| o.name == name) {
                return Err(DataError::BadOption {
                    name: name.to_string(),
                    message: format!(
                        "applies to vector indexes of --lsh codebook, not to this {family} \
                     index (it takes candidates)"
                    ),
                });
            }
        }
        options.check(self.kind(), &super::codebook::SEARCH_OPTIONS[..1])
    }

    fn parse(&self, raw: &Value, options: &Options) -> Result<Prepared, DataError> {
        self.query(options, |dim| vector_query(raw, dim))
    }

    fn parse_vector(&self, row: &[f32], options: &Options) -> Result<Prepared, DataError> {
        self.query(options, |dim| vector_row(row, dim))
    }

    fn items(&self, query: &(dyn Any + Send + Sync)) -> usize {
        query
            .downcast_ref::<VectorQuery>()
            .map_or(0, |_| self.index.transform().params().functions as usize)
    }
}

impl OpenVectors {
    /// A query with its options checked first, then its vector made for the index's dimension.
    fn query(
        &self,
        options: &Options,
        vector: impl FnOnce(usize) -> Result<Vec<f32>, DataError>,
    ) -> Result<Prepared, DataError> {
        self.check_options(options)?;
        let vector = vector(self.index.vectors().dim())?;
        Ok(Box::new(VectorQuery {
            vector,
            candidates: options.u32("candidates")?,
        }))
    }

    /// A batch's answers among the objects `allowed` admits (every object when `None`).
    fn search_among(
        &self,
        batch: &[Request<'_>],
        allowed: Option<&genie_core::ObjectMask>,
    ) -> Result<Vec<Answer>, DataError> {
        let queries = batch
            .iter()
            .map(|r| prepared::<VectorQuery>(r.query))
            .collect::<Result<Vec<_>, _>>()?;
        let dim = self.index.vectors().dim();
        let set = VectorSet::gather(dim, queries.len(), |i| &queries[i].vector)?;
        let ks: Vec<usize> = batch.iter().map(|r| r.k as usize).collect();
        let candidates: Vec<usize> = queries
            .iter()
            .zip(&ks)
            .map(|(q, &k)| {
                q.candidates
                    .map_or_else(|| self.index.default_candidates(k), |c| c as usize)
                    .max(k)
            })
            .collect();
        let hits = self
            .index
            .search_each_allowed(&set, &ks, &candidates, self.method, allowed)?;
        Ok(hits
            .iter()
            .zip(batch)
            .map(|(h, r)| Answer::verified(h, r.min_count))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_default() {
        assert_eq!(default_candidates(1), 200);
        assert_eq!(default_candidates(10), 200);
        assert_eq!(default_candidates(50), 1000);
    }
}
