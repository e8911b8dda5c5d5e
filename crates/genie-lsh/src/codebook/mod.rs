//! The codebook family (IVF + product quantization as keywords, after Juno: Liu et al., "Juno:
//! Optimizing High-Dimensional Approximate Nearest Neighbour Search with Sparsity-Aware Algorithm
//! and Ray-Tracing Core Mapping"): k-means cuts the space into `cells`; the residual of a vector
//! from its cell's centre is cut into `subspaces` slices, each quantized to the nearest of 256
//! codewords (k-means per slice). An object becomes `subspaces` keywords, one per slice:
//! `(cell x subspaces + s) x 256 + code`.
//!
//! A query probes its `probes` nearest cells; in each, per slice, it takes the `entries` codewords
//! nearest its own residual (a radius of its own per slice and cell) as keywords, weighted by
//! closeness when `weighted` (the nearest `entries`, the farthest 1). An object's match count is
//! then Juno's hit count: the slices on which its code lies within the query's radius, so only
//! objects of the probed cells count, and the top `candidates` by count are re-ranked by the exact
//! L2 distance.

pub mod assign;
pub mod index;
pub mod kmeans;
pub mod scan;
pub mod space;
pub mod tune;
pub mod weights;

use crate::error::{LshError, Result};
use crate::vectors::VectorSet;
use assign::Assigner;
use genie_core::{Item, Keyword, Query};
use kmeans::{kmeans_by, smallest, Centres};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

pub use index::{CodebookIndex, CodebookMetadata};
pub use scan::{CellCodes, Plan};

/// Codewords per slice (one byte of code).
pub const CODES: usize = 256;

/// Most cells of a default build (the build's cost grows with cells x rows).
pub const MAX_DEFAULT_CELLS: usize = 4096;

/// What a codebook index is built with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodebookParams {
    /// The dimension of the vectors.
    pub dim: u32,
    /// Coarse cells (k-means centres).
    pub cells: u32,
    /// Slices of a residual, each coded in one byte.
    pub subspaces: u32,
    /// Rows sampled to train the centres and codewords.
    pub train_rows: u32,
    /// Lloyd iterations.
    pub iterations: u32,
    /// The seed of the samples and of k-means.
    pub seed: u64,
}

impl CodebookParams {
    /// Defaults for `rows` vectors of dimension `dim`: `2 sqrt(rows)` cells (at most
    /// [`MAX_DEFAULT_CELLS`]), slices of about 4 dimensions (at most 64 slices), 32 training rows
    /// per cell (at least 10,000), 8 iterations.
    pub fn for_data(rows: usize, dim: usize, seed: u64) -> Self {
        let cells = ((2.0 * (rows as f64).sqrt()).round() as usize).clamp(1, MAX_DEFAULT_CELLS);
        let subspaces = dim.div_ceil(4).clamp(1, 64);
        Self {
            dim: dim as u32,
            cells: cells as u32,
            subspaces: subspaces as u32,
            train_rows: (10_000usize.max(32 * cells)).min(u32::MAX as usize) as u32,
            iterations: 8,
            seed,
        }
    }

    /// Checks the ranges: at least one cell and slice, at most `dim` slices, a keyword space
    /// within 32 bits.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(LshError::InvalidParameter(m));
        if self.dim == 0 {
            return bad("codebook: dimension 0".into());
        }
        if self.cells == 0 || self.subspaces == 0 {
            return bad("codebook: cells and subspaces must be at least 1".into());
        }
        if self.subspaces > self.dim {
            return bad(format!(
                "codebook: {} subspaces for {} dimensions (at most one subspace per dimension)",
                self.subspaces, self.dim
            ));
        }
        if self.keyword_space() > genie_core::index::MAX_KEYWORD_SPACE {
            return bad(format!(
                "codebook: {} cells x {} subspaces x {CODES} codes exceed the keyword space",
                self.cells, self.subspaces
            ));
        }
        Ok(())
    }

    /// Keywords of the index: `cells x subspaces x 256`.
    pub fn keyword_space(&self) -> u64 {
        u64::from(self.cells) * u64::from(self.subspaces) * CODES as u64
    }

    /// First dimension of each slice, and `dim` at the end.
    pub fn bounds(&self) -> Vec<usize> {
        let (d, m) = (self.dim as usize, self.subspaces as usize);
        (0..=m).map(|s| s * d / m).collect()
    }
}

/// How a query probes (stored in the index as its tuned defaults; a search may override each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Probe {
    /// Cells probed.
    pub probes: u32,
    /// Codewords taken per slice and cell (the query's radius).
    pub entries: u32,
    /// Objects re-ranked exactly for `k` hits (at least `k`).
    pub candidates: u32,
    /// Whether nearer codewords weigh more.
    pub weighted: bool,
    /// Closeness weights of this many levels for every codeword ([`weights`]); 0: the `entries`
    /// nearest codewords weighted by rank (or 1 each when not `weighted`).
    #[serde(default)]
    pub levels: u32,
}

impl Default for Probe {
    fn default() -> Self {
        Self {
            probes: 8,
            entries: 4,
            candidates: 100,
            weighted: true,
            levels: 0,
        }
    }
}

impl Probe {
    /// Checks that every knob is at least 1 and `entries` at most 256.
    pub fn validate(&self) -> Result<()> {
        if self.probes == 0 || self.entries == 0 || self.candidates == 0 {
            return Err(LshError::InvalidParameter(
                "codebook: probes, entries and candidates must be at least 1".into(),
            ));
        }
        if self.entries as usize > CODES {
            return Err(LshError::InvalidParameter(format!(
                "codebook: entries {} exceed the {CODES} codewords of a slice",
                self.entries
            )));
        }
        if self.levels > weights::MAX_LEVELS {
            return Err(LshError::InvalidParameter(format!(
                "codebook: {} levels of closeness weights (at most {})",
                self.levels,
                weights::MAX_LEVELS
            )));
        }
        Ok(())
    }
}

/// Trained centres and codewords.
#[derive(Clone, Debug, PartialEq)]
pub struct Codebook {
    params: CodebookParams,
    cells: Centres,
    /// One set of 256 codewords per slice (each as wide as its slice).
    codes: Vec<Centres>,
    bounds: Vec<usize>,
    /// `c_s . w_j` for every cell `c`, slice `s` and codeword `j` (`cells x subspaces x 256`): a
    /// query's residual scores then cost one subtraction per codeword and probed cell.
    cross: Vec<f32>,
}

impl Codebook {
    /// Trains the centres on a sample of `vectors` and the codewords on the sample's residuals,
    /// the nearest centres of the coarse k-means found by `assigner` (the same centres on the GPU
    /// as on the CPU).
    pub fn train(vectors: &VectorSet, params: CodebookParams, assigner: &Assigner) -> Result<Self> {
        params.validate()?;
        check_dim(params.dim, vectors.dim())?;
        if vectors.is_empty() {
            return Err(LshError::InvalidParameter(
                "codebook: no vector to train on".into(),
            ));
        }
        let sample = vectors.sample(params.train_rows as usize, params.seed ^ 0xc0de_b00c);
        let dim = params.dim as usize;
        let cells = kmeans_by(
            sample.as_slice(),
            dim,
            params.cells as usize,
            params.iterations,
            params.seed,
            &|c, rows| assigner.nearest(c, rows),
        )?;
        let near = assigner.nearest(&cells, sample.as_slice())?;
        let residuals: Vec<f32> = sample
            .as_slice()
            .par_chunks_exact(dim)
            .zip(near.par_iter())
            .flat_map_iter(|(x, &c)| {
                let c = cells.row(c as usize);
                x.iter().zip(c).map(|(a, b)| a - b).collect::<Vec<_>>()
            })
            .collect();
        let bounds = params.bounds();
        // per slice, k-means of the residuals' slice, its nearest codewords found where the
        // coarse ones were (one GPU assigner per slice width; the slices in turn there, at once
        // on the cores)
        let train_slice = |s: usize, w: &[usize], on: &Assigner| -> Result<Centres> {
            let width = w[1] - w[0];
            let slice: Vec<f32> = residuals
                .chunks_exact(dim)
                .flat_map(|r| r[w[0]..w[1]].iter().copied())
                .collect();
            let seed = params.seed.wrapping_add(1 + s as u64);
            let c = kmeans_by(&slice, width, CODES, params.iterations, seed, &|c, rows| {
                on.nearest(c, rows)
            })?;
            Ok(pad_codes(c, width))
        };
        let codes = if assigner.on_gpu() {
            let slicers = Slicers::new(assigner, &bounds);
            bounds
                .windows(2)
                .enumerate()
                .map(|(s, w)| train_slice(s, w, slicers.of(w[1] - w[0])))
                .collect::<Result<Vec<_>>>()?
        } else {
            bounds
                .par_windows(2)
                .enumerate()
                .map(|(s, w)| train_slice(s, w, &Assigner::cpu(w[1] - w[0])))
                .collect::<Result<Vec<_>>>()?
        };
        let mut params = params;
        params.cells = cells.len() as u32;
        Ok(Self::assemble(params, cells, codes, bounds))
    }

    fn assemble(
        params: CodebookParams,
        cells: Centres,
        codes: Vec<Centres>,
        bounds: Vec<usize>,
    ) -> Self {
        let mut cross = vec![0f32; cells.len() * codes.len() * CODES];
        cross
            .par_chunks_mut(codes.len() * CODES)
            .enumerate()
            .for_each(|(c, out)| {
                let centre = cells.row(c);
                for (s, (book, slot)) in codes.iter().zip(out.chunks_mut(CODES)).enumerate() {
                    let part = &centre[bounds[s]..bounds[s + 1]];
                    for (j, o) in slot.iter_mut().enumerate() {
                        *o = kmeans::dot(part, book.row(j));
                    }
                }
            });
        Self {
            params,
            cells,
            codes,
            bounds,
            cross,
        }
    }

    /// The parameters (cells may be fewer than asked when there were fewer training rows).
    pub fn params(&self) -> &CodebookParams {
        &self.params
    }

    /// The keyword of code `code` of slice `s` in cell `cell`.
    fn keyword(&self, cell: usize, s: usize, code: usize) -> Keyword {
        ((cell * self.params.subspaces as usize + s) * CODES + code) as Keyword
    }

    /// The `subspaces` keywords of one vector of nearest cell `cell`, into `out`.
    fn encode_into(&self, x: &[f32], cell: usize, residual: &mut Vec<f32>, out: &mut [Keyword]) {
        residual.clear();
        residual.extend(x.iter().zip(self.cells.row(cell)).map(|(a, b)| a - b));
        for (s, slot) in out.iter_mut().enumerate() {
            let r = &residual[self.bounds[s]..self.bounds[s + 1]];
            *slot = self.keyword(cell, s, self.codes[s].nearest(r));
        }
    }

    /// The keywords of every vector, `rows x subspaces`, row-major: the nearest cells found by
    /// `assigner`, the codes on all cores or, when `assigner` is on a GPU, there too (a block of
    /// rows at a time, one slice of their residuals after another). The same codes either way.
    pub fn encode_all(&self, vectors: &VectorSet, assigner: &Assigner) -> Result<Vec<Keyword>> {
        self.encode_blocks(vectors, assigner, ENCODE_FLOATS)
    }

    /// [`Codebook::encode_all`] with GPU blocks of at most `block_floats` residual floats (at
    /// least one row).
    pub fn encode_blocks(
        &self,
        vectors: &VectorSet,
        assigner: &Assigner,
        block_floats: usize,
    ) -> Result<Vec<Keyword>> {
        check_dim(self.params.dim, vectors.dim())?;
        let m = self.params.subspaces as usize;
        let near = assigner.nearest(&self.cells, vectors.as_slice())?;
        let mut out = vec![0; vectors.len() * m];
        if !assigner.on_gpu() {
            out.par_chunks_mut(m)
                .zip(vectors.as_slice().par_chunks_exact(vectors.dim()))
                .zip(near.par_iter())
                .for_each_init(Vec::new, |buf, ((slot, x), &c)| {
                    self.encode_into(x, c as usize, buf, slot)
                });
            return Ok(out);
        }
        let dim = vectors.dim();
        let slicers = Slicers::new(assigner, &self.bounds);
        let rows = (block_floats / dim.max(1)).max(1);
        let mut slices: Vec<Vec<f32>> = vec![Vec::new(); m];
        for (block, (xs, cells)) in vectors
            .as_slice()
            .chunks(rows * dim)
            .zip(near.chunks(rows))
            .enumerate()
        {
            // the block's residuals, slice by slice
            slices.par_iter_mut().enumerate().for_each(|(s, slice)| {
                let (lo, hi) = (self.bounds[s], self.bounds[s + 1]);
                slice.clear();
                for (x, &c) in xs.chunks_exact(dim).zip(cells) {
                    let centre = self.cells.row(c as usize);
                    slice.extend(x[lo..hi].iter().zip(&centre[lo..hi]).map(|(a, b)| a - b));
                }
            });
            let base = block * rows;
            for (s, slice) in slices.iter().enumerate() {
                let codes = slicers
                    .of(self.bounds[s + 1] - self.bounds[s])
                    .nearest(&self.codes[s], slice)?;
                for (i, (&code, &c)) in codes.iter().zip(cells).enumerate() {
                    out[(base + i) * m + s] = self.keyword(c as usize, s, code as usize);
                }
            }
        }
        Ok(out)
    }

    /// The probes of one vector: its `probes` nearest cells into `cells` and, per cell and
    /// slice, its `entries` nearest codewords into `picks`.
    fn plan_one(&self, q: &[f32], probes: usize, entries: usize, scratch: &mut Scratch) {
        self.cells.scores(q, &mut scratch.scores);
        smallest(&scratch.scores, probes, &mut scratch.cells);
        scratch.cell_scores.clear();
        scratch
            .cell_scores
            .extend(scratch.cells.iter().map(|&c| scratch.scores[c as usize]));
        scratch.picks.clear();
        if entries == 0 {
            return;
        }
        // q_s . w_j once per query; per probed cell, |w_j|^2 - 2 (q_s - c_s) . w_j
        self.codeword_products(q, &mut scratch.qw);
        let m = self.params.subspaces as usize;
        for &cell in &scratch.cells {
            let cross = &self.cross[cell as usize * m * CODES..(cell as usize + 1) * m * CODES];
            for s in 0..m {
                let (qw, cw) = (
                    &scratch.qw[s * CODES..(s + 1) * CODES],
                    &cross[s * CODES..(s + 1) * CODES],
                );
                scratch.scores.clear();
                scratch.scores.extend(
                    self.codes[s]
                        .norms
                        .iter()
                        .zip(qw.iter().zip(cw))
                        .map(|(&n, (&a, &b))| n - 2.0 * (a - b)),
                );
                smallest(&scratch.scores, entries, &mut scratch.picked);
                scratch
                    .picks
                    .extend(scratch.picked.iter().map(|&code| code as u8));
            }
        }
    }

    /// `q_s . w_j` for every slice `s` and codeword `j` (`subspaces x 256`, `kmeans::dot`), into
    /// `out`: the query's part of every codeword score, for rank and closeness weights alike.
    fn codeword_products(&self, q: &[f32], out: &mut Vec<f32>) {
        out.clear();
        for (s, book) in self.codes.iter().enumerate() {
            let part = &q[self.bounds[s]..self.bounds[s + 1]];
            out.extend((0..CODES).map(|j| kmeans::dot(part, book.row(j))));
        }
    }

    /// The probes of every vector (all cores).
    pub fn plan(&self, vectors: &VectorSet, probe: &Probe) -> Result<Plan> {
        check_dim(self.params.dim, vectors.dim())?;
        let shape = self.plan_shape(probe)?;
        let (probes, entries) = (shape.probes, shape.picked());
        let per = probes * shape.subspaces * entries;
        let mut cells = vec![u32::MAX; vectors.len() * probes];
        let mut scores = vec![0f32; vectors.len() * probes];
        // one byte a query at least, so that the zip below visits every query
        let mut picks = vec![0u8; vectors.len() * per.max(1)];
        cells
            .par_chunks_mut(probes)
            .zip(scores.par_chunks_mut(probes))
            .zip(picks.par_chunks_mut(per.max(1)))
            .zip(vectors.as_slice().par_chunks_exact(vectors.dim()))
            .for_each_init(Scratch::default, |scratch, (((c, sc), p), q)| {
                self.plan_one(q, probes, entries, scratch);
                c[..scratch.cells.len()].copy_from_slice(&scratch.cells);
                sc[..scratch.cell_scores.len()].copy_from_slice(&scratch.cell_scores);
                p[..scratch.picks.len()].copy_from_slice(&scratch.picks);
            });
        picks.truncate(vectors.len() * per);
        Ok(Plan {
            cells,
            scores,
            picks,
            ..shape
        })
    }

    /// The shape of a plan for `probe`, no query in it: at most one probe per cell, at most
    /// [`CODES`] entries.
    pub fn plan_shape(&self, probe: &Probe) -> Result<Plan> {
        probe.validate()?;
        Ok(Plan {
            probes: (probe.probes as usize).min(self.cells.len()).max(1),
            subspaces: self.params.subspaces as usize,
            entries: (probe.entries as usize).min(CODES),
            weighted: probe.weighted,
            levels: probe.levels,
            cells: Vec::new(),
            scores: Vec::new(),
            picks: Vec::new(),
        })
    }

    /// The queries of a plan as keyword items (for the inverted lists): item `(cell, s, code)`
    /// weighted as the plan weighs it.
    ///
    /// With closeness weights (`plan.levels`), every codeword of non-zero weight is an item.
    pub fn queries_of_plan(&self, plan: &Plan, queries: &VectorSet) -> Vec<Query> {
        if plan.levels > 0 {
            return self.closeness_queries(plan, queries);
        }
        (0..plan.len())
            .into_par_iter()
            .map(|q| {
                let mut items = Vec::with_capacity(plan.probes * plan.subspaces * plan.entries);
                for p in 0..plan.probes {
                    let cell = plan.cells[q * plan.probes + p];
                    if cell == u32::MAX {
                        break;
                    }
                    for (i, &code) in plan.picks_of(q, p).iter().enumerate() {
                        let kw = self.keyword(cell as usize, i / plan.entries, code as usize);
                        items.push(Item {
                            lo: kw,
                            hi: kw,
                            weight: plan.weight(i % plan.entries),
                        });
                    }
                }
                Query { items }
            })
            .collect()
    }

    fn closeness_queries(&self, plan: &Plan, queries: &VectorSet) -> Vec<Query> {
        let m = plan.subspaces;
        (0..plan.len())
            .into_par_iter()
            .map_init(
                || (weights::Closeness::default(), vec![0u16; m * CODES]),
                |(state, lut), q| {
                    let mut items = Vec::new();
                    for p in 0..plan.probes {
                        if !self.closeness_fill(plan, queries.row(q), q, p, state, lut) {
                            break;
                        }
                        let cell = plan.cells[q * plan.probes + p] as usize;
                        for (i, &w) in lut.iter().enumerate().filter(|(_, &w)| w > 0) {
                            let kw = self.keyword(cell, i / CODES, i % CODES);
                            items.push(Item {
                                lo: kw,
                                hi: kw,
                                weight: u32::from(w),
                            });
                        }
                    }
                    Query { items }
                },
            )
            .collect()
    }

    /// The closeness weights of query `q` (vector `x`) in its `p`-th probed cell into `lut`
    /// (starting the query at `p` 0); false past its cells.
    pub fn closeness_fill(
        &self,
        plan: &Plan,
        x: &[f32],
        q: usize,
        p: usize,
        state: &mut weights::Closeness,
        lut: &mut [u16],
    ) -> bool {
        let at = q * plan.probes;
        let cell = plan.cells[at + p];
        if cell == u32::MAX || cell as usize >= self.cells.len() {
            return false;
        }
        if p == 0 {
            self.closeness_begin(x, cell, plan.scores[at], plan.levels, state);
        }
        self.closeness_lut(state, cell, plan.scores[at + p], plan.levels, lut);
        true
    }

    /// The queries of every vector as keyword items (all cores).
    pub fn queries_of_all(&self, vectors: &VectorSet, probe: &Probe) -> Result<Vec<Query>> {
        Ok(self.queries_of_plan(&self.plan(vectors, probe)?, vectors))
    }

    /// The arrays the GPU chooses probes with ([`crate::gpu::CodebookRef`]): centres and
    /// their norms, the codewords slice after slice and their norms, the cross table and the
    /// slice bounds.
    pub fn device_arrays(&self) -> DeviceArrays<'_> {
        DeviceArrays {
            centres: &self.cells.data,
            centre_norms: &self.cells.norms,
            books: self
                .codes
                .iter()
                .flat_map(|c| c.data.iter().copied())
                .collect(),
            book_norms: self
                .codes
                .iter()
                .flat_map(|c| c.norms.iter().copied())
                .collect(),
            cross: &self.cross,
            bounds: self.bounds.iter().map(|&b| b as u32).collect(),
        }
    }

    /// The centres then the codewords as rows of `dim` floats (`cells + 256` rows; row `cells + j`
    /// holds codeword `j` of every slice side by side), for saving.
    pub fn to_rows(&self) -> Result<VectorSet> {
        let dim = self.params.dim as usize;
        let mut data = self.cells.data.clone();
        data.reserve(CODES * dim);
        for j in 0..CODES {
            for c in &self.codes {
                data.extend_from_slice(c.row(j));
            }
        }
        VectorSet::new(dim, data)
    }

    /// The codebook saved by [`Codebook::to_rows`].
    pub fn from_rows(params: CodebookParams, rows: &VectorSet) -> Result<Self> {
        params.validate()?;
        check_dim(params.dim, rows.dim())?;
        let (dim, cells) = (params.dim as usize, params.cells as usize);
        if rows.len() != cells + CODES {
            return Err(LshError::InvalidParameter(format!(
                "codebook: {} rows saved, {cells} cells and {CODES} codewords expected",
                rows.len()
            )));
        }
        if let Some(bad) = rows.as_slice().iter().position(|x| x.is_nan()) {
            return Err(LshError::InvalidParameter(format!(
                "codebook: row {} holds NaN",
                bad / dim
            )));
        }
        let bounds = params.bounds();
        let flat = rows.as_slice();
        let codes = bounds
            .windows(2)
            .map(|w| {
                let mut data = Vec::with_capacity(CODES * (w[1] - w[0]));
                for j in 0..CODES {
                    let row = &flat[(cells + j) * dim..(cells + j + 1) * dim];
                    data.extend_from_slice(&row[w[0]..w[1]]);
                }
                Centres::new(data, w[1] - w[0])
            })
            .collect();
        let cells = Centres::new(flat[..cells * dim].to_vec(), dim);
        Ok(Self::assemble(params, cells, codes, bounds))
    }
}

/// A codebook's arrays as the GPU takes them (see [`Codebook::device_arrays`]).
#[derive(Debug)]
pub struct DeviceArrays<'a> {
    /// `cells x dim` centres.
    pub centres: &'a [f32],
    /// Their squared norms.
    pub centre_norms: &'a [f32],
    /// The 256 codewords of each slice, slice after slice (`256 x dim`).
    pub books: Vec<f32>,
    /// `subspaces x 256` squared norms.
    pub book_norms: Vec<f32>,
    /// `cells x subspaces x 256` cross products.
    pub cross: &'a [f32],
    /// `subspaces + 1` slice bounds.
    pub bounds: Vec<u32>,
}

/// 256 codewords: fewer training rows than that leave copies of the last one (a copy is never
/// nearer than its original, which comes first).
/// Floats of residual slices a GPU encoding block holds (256 MiB).
const ENCODE_FLOATS: usize = 1 << 26;

/// One assigner per distinct slice width, where the coarse assigner runs.
struct Slicers {
    by_width: Vec<(usize, Assigner)>,
    cpu: Assigner,
}

impl Slicers {
    fn new(coarse: &Assigner, bounds: &[usize]) -> Self {
        let mut widths: Vec<usize> = bounds.windows(2).map(|w| w[1] - w[0]).collect();
        widths.sort_unstable();
        widths.dedup();
        Self {
            by_width: widths.into_iter().map(|w| (w, coarse.for_dim(w))).collect(),
            cpu: Assigner::cpu(0),
        }
    }

    /// The assigner of slices `width` wide (the CPU's for a width not seen, which answers the same).
    fn of(&self, width: usize) -> &Assigner {
        self.by_width
            .iter()
            .find(|(w, _)| *w == width)
            .map_or(&self.cpu, |(_, a)| a)
    }
}

fn pad_codes(c: Centres, width: usize) -> Centres {
    if c.len() >= CODES || c.is_empty() {
        return c;
    }
    let last = c.row(c.len() - 1).to_vec();
    let mut data = c.data;
    while data.len() < CODES * width {
        data.extend_from_slice(&last);
    }
    Centres::new(data, width)
}

#[derive(Default)]
struct Scratch {
    scores: Vec<f32>,
    cells: Vec<u32>,
    cell_scores: Vec<f32>,
    picked: Vec<u32>,
    qw: Vec<f32>,
    picks: Vec<u8>,
}

fn check_dim(want: u32, found: usize) -> Result<()> {
    if want as usize != found {
        return Err(LshError::Dimension {
            expected: want as usize,
            found,
        });
    }
    Ok(())
}
