//! Vectors in a live index ([`crate::live`]): a written vector is hashed by the functions of the
//! index it was made from (an LSH family's, or the codebook's cells and codewords), logged as
//! its floats and kept with its segment for the re-rank. A query counts its candidates in every
//! segment, re-ranks each segment's by the exact distance, and the segments' best are merged by
//! distance, as a search of one vector index would order them.
//!
//! A codebook index also watches for drift: a written vector whose nearest cell has grown more
//! than [`CROWDED`] times as fast as the index as a whole since it was opened counts as crowded
//! ([`LiveObjects::drift`]). Data like the training data spreads over the cells as the build's
//! did, and each cell grows at about the index's pace; data that moves away from it gathers in
//! the few cells nearest to it, which outgrow the rest, and the share grows. Past a quarter of
//! at least a thousand writes it is logged once (rebuild the index then).

use super::{
    vector_query, AnswerHit, Candidate, Encoded, LiveObjects, LiveQuery, LiveSetup, Options,
};
use crate::data_error::DataError;
use genie_core::{InvertedIndex, Keyword, Query};
use genie_lsh::codebook::assign::Assigner;
use genie_lsh::codebook::space::Space;
use genie_lsh::codebook::{Codebook, CodebookMetadata};
use genie_lsh::io::raw;
use genie_lsh::stored::IndexFamily;
use genie_lsh::{IndexMetadata, Metric, Probe, VectorSet, VectorTransform};
use genie_sa::StringTable;
use serde_json::Value;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// A cell grown more than this many times as fast as the whole index counts as over-full.
pub const CROWDED: f64 = 4.0;

/// How written vectors become keywords (one per live index: the variants' sizes do not matter).
#[allow(clippy::large_enum_variant)]
enum Coder {
    /// An LSH family's functions.
    Lsh {
        transform: VectorTransform,
        meta: Box<IndexMetadata>,
    },
    /// A codebook's cells and codewords (the lists counted, as `--counting lists`).
    Codebook {
        book: Box<Codebook>,
        assigner: Assigner,
        meta: Box<CodebookMetadata>,
        /// Vectors per cell when opened, and their sum.
        opened: Vec<u32>,
        opened_total: u64,
        /// Vectors per cell now (those written since added; never lowered), and their sum.
        cells: Vec<AtomicU32>,
        total: AtomicU64,
    },
}

/// Vectors in a live index made from a built vector index.
pub struct LiveVectors {
    /// The dimension of a stored vector.
    dim: usize,
    metric: Metric,
    /// How a user's vectors and queries become stored ones (a codebook's metric).
    space: Space,
    coder: Coder,
    written: AtomicU64,
    crowded: AtomicU64,
    warned: AtomicBool,
}

/// What a live vector query re-ranks with.
struct VectorRerank {
    /// The query as searched (in the stored vectors' space).
    vector: Vec<f32>,
    /// The user's query's squared length.
    len2: f32,
    candidates: Option<u32>,
}

fn format_error(message: String) -> DataError {
    DataError::Unsupported(format!("a live vector index: {message}"))
}

impl LiveVectors {
    /// The vectors of a live index made from the vector index file `setup.base` (its metadata
    /// and, for a codebook, its codebook: the saved state, else the file beside the base).
    pub fn new(setup: &LiveSetup) -> Result<Self, DataError> {
        let json: Value = serde_json::from_str(&setup.metadata)
            .map_err(|e| format_error(format!("metadata: {e}")))?;
        match IndexFamily::of(&json) {
            Some(IndexFamily::Lsh) => {
                let meta = IndexMetadata::parse(&setup.metadata)?;
                let transform = VectorTransform::new(meta.params.clone())?;
                Ok(Self {
                    dim: meta.vectors.dim as usize,
                    metric: meta.metric,
                    space: Space::L2,
                    coder: Coder::Lsh {
                        transform,
                        meta: Box::new(meta),
                    },
                    written: AtomicU64::new(0),
                    crowded: AtomicU64::new(0),
                    warned: AtomicBool::new(false),
                })
            }
            Some(IndexFamily::Codebook) => {
                let meta = CodebookMetadata::parse(&setup.metadata)?;
                let (rows, cells) = match (&setup.state, &setup.base) {
                    (Some(state), _) => parse_state(state)?,
                    (None, Some(base)) => {
                        let path = genie_lsh::codebook::index::codebook_path(base);
                        let (rows, _) = raw::load(&path)?;
                        let index = InvertedIndex::load(base)?;
                        (rows, cell_sizes(&index, &meta))
                    }
                    (None, None) => {
                        return Err(format_error(
                            "its codebook is neither saved with it nor beside its index file"
                                .into(),
                        ))
                    }
                };
                let book = Codebook::from_rows(meta.params.clone(), &rows)?;
                let dim = meta.params.dim as usize;
                let total = cells.iter().map(|&c| u64::from(c)).sum();
                Ok(Self {
                    dim,
                    metric: Metric::L2,
                    space: meta.space,
                    coder: Coder::Codebook {
                        book: Box::new(book),
                        assigner: Assigner::cpu(dim),
                        meta: Box::new(meta),
                        cells: cells.iter().copied().map(AtomicU32::new).collect(),
                        total: AtomicU64::new(total),
                        opened: cells,
                        opened_total: total,
                    },
                    written: AtomicU64::new(0),
                    crowded: AtomicU64::new(0),
                    warned: AtomicBool::new(false),
                })
            }
            None => Err(format_error("not a vector index".into())),
        }
    }

    /// The keywords of one vector, sorted.
    fn keywords(&self, v: &[f32]) -> Result<Vec<Keyword>, DataError> {
        let mut keywords = match &self.coder {
            Coder::Lsh { transform, .. } => transform.keywords(v)?,
            Coder::Codebook { book, assigner, .. } => {
                let set = VectorSet::new(self.dim, v.to_vec())?;
                book.encode_all(&set, assigner)?
            }
        };
        keywords.sort_unstable();
        keywords.dedup();
        Ok(keywords)
    }

    /// Counts a written vector of cell `cell` (a codebook index), and warns once when the
    /// crowded share grows past a quarter.
    fn count_cell(&self, cell: usize) {
        let Coder::Codebook {
            opened,
            opened_total,
            cells,
            total,
            ..
        } = &self.coder
        else {
            return;
        };
        let Some(c) = cells.get(cell) else { return };
        let now = f64::from(c.fetch_add(1, Ordering::Relaxed) + 1);
        let total = total.fetch_add(1, Ordering::Relaxed) + 1;
        // the cell's size had it grown at the index's pace (one more, for cells that were empty)
        let pace = total as f64 / (*opened_total).max(1) as f64;
        let expected = f64::from(opened.get(cell).copied().unwrap_or(0) + 1) * pace;
        let written = self.written.fetch_add(1, Ordering::Relaxed) + 1;
        if now > CROWDED * expected {
            let crowded = self.crowded.fetch_add(1, Ordering::Relaxed) + 1;
            if written >= 1000
                && crowded * 4 > written
                && !self.warned.swap(true, Ordering::Relaxed)
            {
                log::warn!(
                    "{crowded} of the {written} vectors written to this live index went to \
                     cells growing over {CROWDED} times as fast as the index: the data has moved \
                     away from what the codebook was trained on; rebuild the index from its \
                     vectors"
                );
            }
        }
    }
}

/// The vectors per cell of a codebook index: the objects of the lists of each cell's first
/// subspace.
fn cell_sizes(index: &InvertedIndex, meta: &CodebookMetadata) -> Vec<u32> {
    let p = &meta.params;
    let per_cell = p.subspaces as usize * genie_lsh::codebook::CODES;
    (0..p.cells as usize)
        .map(|c| {
            (0..genie_lsh::codebook::CODES)
                .map(|code| index.postings_of((c * per_cell + code) as Keyword).len() as u32)
                .sum()
        })
        .collect()
}

/// The state of a codebook index: its rows (centres and codewords) and its cell sizes.
fn state_bytes(book: &Codebook, cells: &[u32]) -> Option<Vec<u8>> {
    let rows = raw::to_bytes(&book.to_rows().ok()?);
    let mut out = Vec::with_capacity(8 + rows.len() + cells.len() * 4);
    out.extend_from_slice(&(rows.len() as u64).to_le_bytes());
    out.extend_from_slice(&rows);
    for c in cells {
        out.extend_from_slice(&c.to_le_bytes());
    }
    Some(out)
}

fn parse_state(state: &[u8]) -> Result<(VectorSet, Vec<u32>), DataError> {
    let bad = || format_error("its saved codebook is damaged".into());
    let len = state
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .ok_or_else(bad)? as usize;
    let rows = state.get(8..8 + len).ok_or_else(bad)?;
    let (rows, _) = raw::parse(rows, Path::new("the saved codebook"))?;
    let cells = state[8 + len..]
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Ok((rows, cells))
}

/// The floats of a logged vector.
fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

impl LiveObjects for LiveVectors {
    fn kind(&self) -> &str {
        "vectors"
    }

    /// Logged as its floats (little-endian), hashed here.
    fn encode(&self, raw: &Value) -> Result<Encoded, DataError> {
        let v = vector_query(raw, self.space.user_dim(self.dim))?;
        let v = self
            .space
            .object(&v)
            .map_err(|e| DataError::BadQuery(e.to_string()))?;
        let keywords = self.keywords(&v)?;
        if let Coder::Codebook { meta, .. } = &self.coder {
            // the first keyword of a codebook object names its cell
            let per_cell = meta.params.subspaces as usize * genie_lsh::codebook::CODES;
            let cell = keywords.first().map_or(0, |&k| k as usize / per_cell);
            self.count_cell(cell);
        }
        Ok(Encoded {
            log: v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            keywords: Some(keywords),
        })
    }

    fn decode(&self, log: &[u8]) -> Result<Vec<Keyword>, DataError> {
        if log.len() != self.dim * 4 {
            return Err(super::undecodable("a vector"));
        }
        self.keywords(&floats(log))
    }

    fn query(&self, raw: &Value, options: &Options) -> Result<LiveQuery, DataError> {
        let (vector, len2) = self
            .space
            .query(&vector_query(raw, self.space.user_dim(self.dim))?);
        let allowed: &[&str] = match self.coder {
            Coder::Lsh { .. } => &["candidates"],
            Coder::Codebook { .. } => &["candidates", "probes"],
        };
        if let Some(other) = options.names().find(|n| !allowed.contains(n)) {
            return Err(DataError::BadOption {
                name: other.into(),
                message: format!(
                    "does not apply to a live vector index (it takes {})",
                    allowed.join(", ")
                ),
            });
        }
        let candidates = options.u32("candidates")?;
        let query = match &self.coder {
            Coder::Lsh { .. } => Query::from_keywords(&self.keywords(&vector)?),
            Coder::Codebook { book, meta, .. } => {
                let mut probe: Probe = meta.probe;
                // the lists count every probed codeword: no closeness levels
                probe.levels = 0;
                if let Some(p) = options.u32("probes")? {
                    probe.probes = p;
                }
                probe.validate().map_err(|e| DataError::BadOption {
                    name: "probes".into(),
                    message: e.to_string(),
                })?;
                let set = VectorSet::new(self.dim, vector.clone())?;
                let plan = book.plan(&set, &probe)?;
                book.queries_of_plan(&plan, &set)
                    .pop()
                    .unwrap_or_else(|| Query::from_keywords(&[]))
            }
        };
        Ok(LiveQuery {
            query,
            rerank: Some(Box::new(VectorRerank {
                vector,
                len2,
                candidates,
            })),
        })
    }

    fn keeps_objects(&self) -> bool {
        true
    }

    fn base_objects(
        &self,
        base: &Path,
        index: &InvertedIndex,
    ) -> Result<Option<StringTable>, DataError> {
        let vectors = match &self.coder {
            Coder::Lsh { .. } => genie_lsh::index::read_vectors(base, index)?,
            _ => genie_lsh::codebook::index::read_rows(base, index)?,
        };
        let mut table = StringTable::new();
        let mut row = Vec::with_capacity(self.dim * 4);
        for i in 0..vectors.len() {
            row.clear();
            row.extend(vectors.row(i).iter().flat_map(|x| x.to_le_bytes()));
            table.push(&row);
        }
        Ok(Some(table))
    }

    fn candidates(&self, query: &LiveQuery, k: u32) -> u32 {
        let asked = query.rerank_as::<VectorRerank>().and_then(|r| r.candidates);
        let default = match &self.coder {
            Coder::Lsh { meta, .. } => meta.default_candidates(k as usize) as u32,
            Coder::Codebook { meta, .. } => meta.probe.candidates,
        };
        asked.unwrap_or(default).max(k)
    }

    fn rerank(
        &self,
        query: &LiveQuery,
        k: u32,
        candidates: &[Candidate<'_>],
    ) -> Result<Vec<AnswerHit>, DataError> {
        let r = query
            .rerank_as::<VectorRerank>()
            .ok_or_else(|| super::undecodable("a vector query"))?;
        let mut hits: Vec<AnswerHit> = candidates
            .iter()
            .map(|&(id, count, stored)| AnswerHit {
                id,
                count,
                distance: Some(
                    self.space
                        .distance(self.metric.distance(&r.vector, &floats(stored)), r.len2),
                ),
            })
            .collect();
        super::sort_by_distance(&mut hits);
        hits.truncate(k as usize);
        Ok(hits)
    }

    /// A codebook index saves its codebook and cell sizes (the live folder then needs nothing
    /// beside it); an LSH index's functions are in its metadata.
    fn state(&self) -> Option<Vec<u8>> {
        match &self.coder {
            Coder::Lsh { .. } => None,
            Coder::Codebook { book, cells, .. } => {
                let cells: Vec<u32> = cells.iter().map(|c| c.load(Ordering::Relaxed)).collect();
                state_bytes(book, &cells)
            }
        }
    }

    fn drift(&self) -> Option<(u64, u64)> {
        matches!(self.coder, Coder::Codebook { .. }).then(|| {
            (
                self.written.load(Ordering::Relaxed),
                self.crowded.load(Ordering::Relaxed),
            )
        })
    }

    /// Changes with every vector a codebook index counts in its cells (their sizes are saved).
    fn state_version(&self) -> u64 {
        match &self.coder {
            Coder::Lsh { .. } => 1,
            Coder::Codebook { total, .. } => total.load(Ordering::Relaxed),
        }
    }
}
