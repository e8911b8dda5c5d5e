//! `genie build --kind vectors --lsh codebook`: the codebook family of genie-lsh (IVF cells and
//! product-quantization codes as keywords). The build trains the codebook, encodes the vectors,
//! tunes the search defaults for a recall@10 (`--target-recall`, default 0.95) on a held-out
//! sample of the vectors and prints the recall it measured; a search probes with the stored
//! defaults unless `--probes`, `--entries` or `--candidates` say otherwise. Answers are the same
//! JSON lines as the LSH families', with the exact L2 distance.

use super::{
    prepared, vector_query, vector_row, Answer, BuildJob, BuildReport, IndexSource, KindIndex,
    OpenOptions, OptionSpec, OptionType, Options, Prepared, Request,
};
use crate::data_error::DataError;
use genie_core::{Backend, DeviceChoice, InvertedIndex, Method};
use genie_lsh::codebook::index::codebook_path;
use genie_lsh::codebook::index::Counting;
use genie_lsh::codebook::space::Space;
use genie_lsh::codebook::tune::{self, DEFAULT_TARGET};
use genie_lsh::{io, CodebookIndex, CodebookParams, Form, Probe, VectorSet};
use rayon::prelude::*;
use serde_json::Value;
use std::any::Any;
use std::collections::BTreeMap;
use std::sync::Arc;

use genie_lsh::tuning::TUNE_K;

/// The search options of a vector index: the first (candidates) the LSH families' and the
/// codebook's, the rest the codebook's alone.
pub(super) const SEARCH_OPTIONS: &[OptionSpec] = &[
    OptionSpec::u32(
        "candidates",
        1,
        "K2",
        "Candidates K2 taken by match count, then re-ranked by exact distance; K2 = K gives the \
         pure tau-ANN answer of the paper [default: the index's, tuned at build; else \
         max(20 x K, 200)].",
    ),
    OptionSpec::u32(
        "probes",
        1,
        "P",
        "Codebook: cells probed per query [default: tuned at build time].",
    ),
    OptionSpec::new(
        "entries",
        OptionType::U32 { min: 1, max: 256 },
        "E",
        "Codebook: codewords taken per slice and cell, the query's radius [default: tuned at \
         build time].",
    ),
    OptionSpec::new(
        "levels",
        OptionType::U32 { min: 0, max: 255 },
        "L",
        "Codebook: closeness weights of L levels for every codeword of the probed cells (the \
         count then follows the quantized distance); 0 weighs the --entries nearest codewords by \
         rank [default: tuned at build time].",
    ),
    OptionSpec::new(
        "counting",
        OptionType::Choice(&["scan", "lists"]),
        "HOW",
        "Codebook: how the hits of the probed cells are counted: scan reads the codes of their \
         objects (on the GPU when searching there), lists the inverted lists of the query's \
         keywords through the engine [default: scan].",
    ),
];

/// Builds, tunes and saves a codebook index.
pub(super) fn build(job: &BuildJob<'_>, seed: u64) -> Result<BuildReport, DataError> {
    let o = job.options;
    // genie-lsh's errors name the file they are about
    let file_err = DataError::Lsh;
    let target = o.f64("target_recall")?.unwrap_or(DEFAULT_TARGET);
    if !(target > 0.0 && target <= 1.0) {
        return Err(DataError::BadOption {
            name: "target_recall".into(),
            message: format!("expected a recall in (0, 1], found {target}"),
        });
    }
    let vectors = io::read_vectors(job.input)?;
    if vectors.is_empty() {
        return Err(DataError::File {
            path: job.input.to_path_buf(),
            message: "no vector to index".into(),
        });
    }
    // cosine and inner product are searched as L2 on vectors prepared for them
    let space = Space::for_vectors(o.str("metric")?.unwrap_or("l2"), &vectors).map_err(file_err)?;
    let vectors = space.objects(vectors).map_err(file_err)?;
    let mut params = CodebookParams::for_data(vectors.len(), vectors.dim(), seed);
    if let Some(c) = o.u32("cells")? {
        params.cells = c;
    }
    if let Some(m) = o.u32("subspaces")? {
        params.subspaces = m;
    }
    params.validate().map_err(file_err)?;
    let rows = vectors.len();
    let source = Some(job.input.display().to_string());
    // on a GPU if there is one: training and encoding find nearest centres there (the CPU's), and
    // the tuning costs its probes by searches there
    let mut index = CodebookIndex::build(
        vectors,
        params,
        Probe::default(),
        DeviceChoice::Auto,
        source,
    )
    .map_err(file_err)?;
    index.set_space(space);
    let form: Form = o
        .str("rerank")?
        .unwrap_or("f32")
        .parse()
        .map_err(file_err)?;
    // the exact neighbours of the tuning come from the float vectors, while the index re-ranks
    // from the form chosen: the recall tuned for is the one its searches get
    let floats = index
        .vectors()
        .cloned()
        .ok_or_else(|| DataError::Unsupported("a built index without its vectors".into()))?;
    index.set_rerank(form).map_err(file_err)?;
    let report = tune::tune_with(&index, &floats, TUNE_K, target, seed).map_err(file_err)?;
    drop(floats);
    index
        .set_defaults(report.probe, Some(report.tuned.clone()))
        .map_err(file_err)?;
    index.save(job.output).map_err(|e| DataError::File {
        path: job.output.to_path_buf(),
        message: e.to_string(),
    })?;
    let p = index.metadata().params.clone();
    let probe = report.probe;
    let reached = if report.reached {
        String::new()
    } else {
        " (below the target: the best recall found)".into()
    };
    Ok(BuildReport {
        summary: format!(
            "{rows} vectors of dimension {}, metric {}, codebook with {} cells x {} subspaces x \
             256 codes, seed {}, {} postings; tuned on {} held-out vectors: {} probes, {}, {} \
             candidates give recall@{TUNE_K} {:.3} (target {target}){reached}",
            space.user_dim(p.dim as usize),
            space.name(),
            p.cells,
            p.subspaces,
            p.seed,
            index.engine().index().num_postings(),
            report.tuned.queries,
            probe.probes,
            if probe.levels > 0 {
                format!("closeness weights of {} levels", probe.levels)
            } else {
                format!("{} entries", probe.entries)
            },
            probe.candidates,
            report.tuned.recall,
        ),
        objects: rows as u64,
        side_files: vec![
            genie_lsh::index::vectors_path(job.output),
            codebook_path(job.output),
        ],
    })
}

/// Opens a codebook index on one backend.
pub(super) fn open(
    source: &IndexSource,
    index: Arc<InvertedIndex>,
    backend: &dyn Backend,
    options: &OpenOptions,
) -> Result<Box<dyn KindIndex>, DataError> {
    let saved = source.shared("rerank", || {
        Ok(genie_lsh::codebook::index::read_saved(
            &source.path,
            &index,
        )?)
    })?;
    let index = CodebookIndex::open_with(&source.path, index, backend, (*saved).clone())?;
    Ok(Box::new(OpenCodebook {
        index,
        method: options.method,
    }))
}

/// The vectors of a vector index of either family (`INDEX.vectors`, checked against the
/// metadata), read once for all its replicas.
pub(super) fn shared_vectors(
    source: &IndexSource,
    index: &genie_core::InvertedIndex,
) -> Result<std::sync::Arc<VectorSet>, DataError> {
    source.shared("vectors", || {
        Ok(genie_lsh::index::read_vectors(&source.path, index)?)
    })
}

/// An opened codebook index.
pub struct OpenCodebook {
    index: CodebookIndex,
    method: Method,
}

/// A parsed query: the vector and its probe (the index's defaults with the request's options).
struct CodebookQuery {
    /// The query as searched (in the stored vectors' space).
    vector: QueryVector,
    /// The user's query's squared length, for the distance reported.
    len2: f32,
    probe: Probe,
    counting: Counting,
}

/// A query vector as searched: its own, or a row of a query file's vectors where the space
/// searches the user's vector as it is (L2), so that parsing copies nothing.
enum QueryVector {
    Own(Vec<f32>),
    Row(Arc<VectorSet>, usize),
}

impl QueryVector {
    fn floats(&self) -> &[f32] {
        match self {
            Self::Own(v) => v,
            Self::Row(set, i) => set.row(*i),
        }
    }
}

impl OpenCodebook {
    /// The probe and the counting of a search: the index's defaults with the options given,
    /// each checked against its declaration and the probe as a whole (a value that cannot work
    /// is an error naming its option).
    fn probe(&self, options: &Options) -> Result<(Probe, Counting), DataError> {
        options.check("vectors", SEARCH_OPTIONS)?;
        let mut probe = self.index.probe();
        if let Some(c) = options.u32("candidates")? {
            probe.candidates = c;
        }
        if let Some(p) = options.u32("probes")? {
            probe.probes = p;
        }
        if let Some(e) = options.u32("entries")? {
            probe.entries = e;
        }
        if let Some(l) = options.u32("levels")? {
            probe.levels = l;
        }
        if options.has("entries") && probe.levels > 0 {
            return Err(DataError::BadOption {
                name: "entries".into(),
                message: format!(
                    "does nothing with closeness weights: this search weighs every codeword by \
                     {} levels (add --levels 0 to probe the nearest entries instead)",
                    probe.levels
                ),
            });
        }
        probe.validate().map_err(|e| DataError::BadOption {
            name: ["levels", "entries", "probes", "candidates"]
                .into_iter()
                .find(|n| options.has(n))
                .unwrap_or("probes")
                .into(),
            message: e.to_string(),
        })?;
        // one of the declared words
        let counting = match options.str("counting")? {
            Some("lists") => Counting::Lists(self.method),
            _ => Counting::Scan,
        };
        Ok((probe, counting))
    }
}

impl KindIndex for OpenCodebook {
    searched_vector_methods!();

    fn check_options(&self, options: &Options) -> Result<(), DataError> {
        self.probe(options).map(|_| ())
    }

    fn parse(&self, raw: &Value, options: &Options) -> Result<Prepared, DataError> {
        let dim = self.index.space().user_dim(self.index.dim());
        self.query(vector_query(raw, dim)?, options)
    }

    fn parse_vector(&self, row: &[f32], options: &Options) -> Result<Prepared, DataError> {
        let dim = self.index.space().user_dim(self.index.dim());
        self.query(vector_row(row, dim)?, options)
    }

    fn parse_row(
        &self,
        rows: &Arc<VectorSet>,
        at: usize,
        options: &Options,
    ) -> Result<Prepared, DataError> {
        let row = rows.row(at);
        if !matches!(self.index.space(), Space::L2) || row.len() != self.index.dim() {
            return self.parse_vector(row, options);
        }
        let len2 = Space::L2.query_len2(row);
        self.prepared(QueryVector::Row(Arc::clone(rows), at), len2, options)
    }

    fn items(&self, query: &(dyn Any + Send + Sync)) -> usize {
        let m = self.index.codebook().params().subspaces as usize;
        query.downcast_ref::<CodebookQuery>().map_or(0, |q| {
            q.probe.probes as usize * q.probe.entries as usize * m
        })
    }
}

impl OpenCodebook {
    /// A query of the user's `vector`, with the probe its options ask.
    fn query(&self, vector: Vec<f32>, options: &Options) -> Result<Prepared, DataError> {
        let (vector, len2) = self.index.space().query_vec(vector);
        self.prepared(QueryVector::Own(vector), len2, options)
    }

    /// A query of `vector` as searched (`len2`: the user's vector's squared length), with the
    /// probe its options ask.
    fn prepared(
        &self,
        vector: QueryVector,
        len2: f32,
        options: &Options,
    ) -> Result<Prepared, DataError> {
        let (probe, counting) = self.probe(options)?;
        Ok(Box::new(CodebookQuery {
            vector,
            len2,
            probe,
            counting,
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
            .map(|r| prepared::<CodebookQuery>(r.query))
            .collect::<Result<Vec<_>, _>>()?;
        // one search per probe (cells, entries, weights) among the batch's queries; a batch
        // of one probe (the usual case) is one group without a map
        let key = |q: &CodebookQuery| {
            let p = q.probe;
            (
                p.probes,
                p.entries,
                p.weighted,
                p.levels,
                q.counting == Counting::Scan,
            )
        };
        let groups: Vec<Vec<usize>> = match queries.first().map(|q| key(q)) {
            Some(first) if queries.iter().all(|q| key(q) == first) => {
                vec![(0..queries.len()).collect()]
            }
            _ => {
                let mut map: BTreeMap<_, Vec<usize>> = BTreeMap::new();
                for (i, q) in queries.iter().enumerate() {
                    map.entry(key(q)).or_default().push(i);
                }
                map.into_values().collect()
            }
        };
        log::trace!("at {:.1} ms: grouped", crate::clock_ms());
        let dim = self.index.dim();
        let mut answers = vec![Answer::default(); batch.len()];
        for members in &groups {
            let ks: Vec<usize> = members.iter().map(|&i| batch[i].k as usize).collect();
            let candidates: Vec<usize> = members
                .iter()
                .map(|&i| queries[i].probe.candidates as usize)
                .collect();
            let (probe, counting) = (queries[members[0]].probe, queries[members[0]].counting);
            let rows: Vec<&[f32]> = members
                .iter()
                .map(|&i| queries[i].vector.floats())
                .collect();
            log::trace!("at {:.1} ms: rows ready", crate::clock_ms());
            let hits = match allowed {
                // the rows as they lie (a GPU takes them without a gathered copy)
                None => self
                    .index
                    .search_rows(&rows, &ks, &candidates, &probe, counting)?,
                Some(mask) => self.index.search_each_filtered(
                    &VectorSet::gather(dim, rows.len(), |j| rows[j])?,
                    &ks,
                    &candidates,
                    &probe,
                    counting,
                    mask,
                    self.index.exact_floats(),
                )?,
            };
            log::trace!("at {:.1} ms: searched", crate::clock_ms());
            let space = self.index.space();
            let made: Vec<Answer> = hits
                .into_par_iter()
                .zip(members.par_iter())
                .with_min_len(256)
                .map(|(mut h, &i)| {
                    for hit in &mut h {
                        hit.distance = space.distance(hit.distance, queries[i].len2);
                    }
                    Answer::verified(&h, batch[i].min_count)
                })
                .collect();
            for (a, &i) in made.into_iter().zip(members) {
                answers[i] = a;
            }
        }
        log::trace!("at {:.1} ms: answers made", crate::clock_ms());
        Ok(answers)
    }
}
