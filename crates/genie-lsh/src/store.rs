//! [`Store`]: what a vector index re-ranks from, in one of four [`Form`]s chosen at build.
//!
//! - `f32`: the vectors themselves, 4 bytes a dimension (`INDEX.vectors` in the raw format of
//!   [`crate::io::raw`]); the re-rank distance is exact.
//! - `f16`: each value rounded to half precision, 2 bytes a dimension.
//! - `sq8`: each dimension quantized to 256 even steps between its least and greatest value
//!   (`lo + step x code`), 1 byte a dimension.
//! - `codes` (codebook indexes only): no copy at all; a vector is rebuilt from its cell's centre
//!   and its codewords, which the index keeps for its scan anyway. Beside the codes it costs a
//!   4-byte position a vector (where its codes lie).
//!
//! A compact form's distances are those of the rebuilt rows, the same on the CPU and the GPU
//! (each value rebuilt by one rounding, as `kernels/vectors.cu` `rerank_compact` does), so the
//! re-ranked order is approximate while the count is not. A compact store is saved as
//! `INDEX.vectors` too, with a header of its own: magic `GENIERRK`, form, dimension, rows and the
//! payload's CRC-32.

use crate::codebook::{CellCodes, Codebook};
use crate::error::{LshError, Result};
use crate::gpu::DeviceRows;
use crate::vectors::VectorSet;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

/// What a vector index re-ranks from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    /// The float vectors (exact distances).
    #[default]
    F32,
    /// Half-precision floats.
    F16,
    /// 8-bit scalar quantization, by dimension.
    Sq8,
    /// The codebook's own codes (no copy).
    Codes,
}

impl Form {
    /// Every form, by name.
    pub const NAMES: [&'static str; 4] = ["f32", "f16", "sq8", "codes"];

    /// The form's name (as `--rerank` takes it).
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// Bytes a vector of `dim` dimensions costs for re-ranking in this form: the copy's, or for
    /// `codes` its `subspaces` codes and a 4-byte position (the shared centres and codewords left
    /// out).
    pub fn bytes_per_vector(self, dim: usize, subspaces: usize) -> usize {
        match self {
            Form::F32 => 4 * dim,
            Form::F16 => 2 * dim,
            Form::Sq8 => dim,
            Form::Codes => subspaces + 4,
        }
    }

    /// Its number in the file header and for the GPU kernel.
    fn code(self) -> u32 {
        self as u32
    }

    fn from_code(code: u32) -> Option<Self> {
        [Form::F32, Form::F16, Form::Sq8, Form::Codes]
            .get(code as usize)
            .copied()
    }
}

impl std::str::FromStr for Form {
    type Err = LshError;
    fn from_str(s: &str) -> Result<Self> {
        Self::NAMES
            .iter()
            .position(|n| *n == s)
            .and_then(|i| Self::from_code(i as u32))
            .ok_or_else(|| {
                LshError::InvalidParameter(format!(
                    "re-rank form {s:?}: expected one of {}",
                    Self::NAMES.join(", ")
                ))
            })
    }
}

/// A codebook's arrays a `codes` store rebuilds rows from.
#[derive(Clone, Debug, PartialEq)]
pub struct CodesRows {
    /// Where each object's codes lie in `cells` (its position in `cells.ids`).
    pub pos: Vec<u32>,
    /// The cells' objects and codes.
    pub cells: Arc<CellCodes>,
    /// `cells x dim` centres.
    pub centres: Vec<f32>,
    /// Per slice, its 256 codewords (`256 x dim` floats, slice after slice).
    pub books: Vec<f32>,
    /// `subspaces + 1` first dimensions of the slices.
    pub bounds: Vec<usize>,
}

impl CodesRows {
    /// The arrays of `codebook` over the objects of `cells`.
    pub fn new(codebook: &Codebook, cells: Arc<CellCodes>) -> Result<Self> {
        let mut pos = vec![u32::MAX; cells.ids.len()];
        for (p, &id) in cells.ids.iter().enumerate() {
            let slot = pos.get_mut(id as usize).ok_or_else(|| {
                LshError::InvalidParameter(format!("codebook cells: object {id} out of range"))
            })?;
            *slot = p as u32;
        }
        let a = codebook.device_arrays();
        Ok(Self {
            pos,
            cells,
            centres: a.centres.to_vec(),
            books: a.books,
            bounds: a.bounds.iter().map(|&b| b as usize).collect(),
        })
    }

    /// The cell of the object at position `p` of `cells.ids`.
    fn cell_at(&self, p: usize) -> usize {
        self.cells.starts.partition_point(|&s| s as usize <= p) - 1
    }

    fn row_into(&self, i: usize, out: &mut [f32]) -> Option<()> {
        let p = *self.pos.get(i)? as usize;
        let m = self.cells.subspaces;
        let codes = self.cells.codes.get(p * m..(p + 1) * m)?;
        let dim = out.len();
        let centre = self.centres.get(self.cell_at(p) * dim..)?;
        for (s, &code) in codes.iter().enumerate() {
            let (b, e) = (self.bounds[s], self.bounds[s + 1]);
            let word = &self.books[256 * b + code as usize * (e - b)..][..e - b];
            for (j, &w) in (b..e).zip(word) {
                out[j] = centre[j] + w;
            }
        }
        Some(())
    }
}

/// The rows a vector index re-ranks from.
#[derive(Clone, Debug, PartialEq)]
pub enum Store {
    /// The float vectors.
    F32(Arc<VectorSet>),
    /// Half-precision bits, row-major.
    F16 {
        /// The dimension.
        dim: usize,
        /// `rows x dim` values.
        data: Vec<u16>,
    },
    /// 8-bit codes by dimension: value `lo[j] + step[j] x code`.
    Sq8 {
        /// The dimension.
        dim: usize,
        /// Each dimension's least value.
        lo: Vec<f32>,
        /// Each dimension's step.
        step: Vec<f32>,
        /// `rows x dim` codes.
        data: Vec<u8>,
    },
    /// Rebuilt from a codebook's codes.
    Codes {
        /// The dimension.
        dim: usize,
        /// The codebook's arrays.
        rows: Box<CodesRows>,
    },
}

/// Half-precision bits of `x`, rounded to nearest even.
fn to_f16(x: f32) -> u16 {
    half::f16::from_f32(x).to_bits()
}

/// The value of half-precision bits (exact).
pub fn from_f16(h: u16) -> f32 {
    half::f16::from_bits(h).to_f32()
}

impl Store {
    /// `vectors` in `form` (`codes` needs the index's codebook and cells).
    pub fn encode(
        vectors: &Arc<VectorSet>,
        form: Form,
        codes: Option<(&Codebook, Arc<CellCodes>)>,
    ) -> Result<Self> {
        let dim = vectors.dim();
        Ok(match form {
            Form::F32 => Store::F32(Arc::clone(vectors)),
            Form::F16 => Store::F16 {
                dim,
                data: vectors.as_slice().par_iter().map(|&x| to_f16(x)).collect(),
            },
            Form::Sq8 => {
                let mut lo = vec![f32::INFINITY; dim];
                let mut hi = vec![f32::NEG_INFINITY; dim];
                for row in vectors.rows() {
                    for (j, &x) in row.iter().enumerate() {
                        lo[j] = lo[j].min(x);
                        hi[j] = hi[j].max(x);
                    }
                }
                for (l, h) in lo.iter_mut().zip(&mut hi) {
                    if !l.is_finite() || !h.is_finite() {
                        (*l, *h) = (0.0, 0.0);
                    }
                }
                let step: Vec<f32> = lo.iter().zip(&hi).map(|(l, h)| (h - l) / 255.0).collect();
                let data = vectors
                    .as_slice()
                    .par_chunks(dim)
                    .flat_map_iter(|row| {
                        row.iter().enumerate().map(|(j, &x)| {
                            if step[j] > 0.0 {
                                ((x - lo[j]) / step[j]).round().clamp(0.0, 255.0) as u8
                            } else {
                                0
                            }
                        })
                    })
                    .collect();
                Store::Sq8 {
                    dim,
                    lo,
                    step,
                    data,
                }
            }
            Form::Codes => {
                let (book, cells) = codes.ok_or_else(|| {
                    LshError::InvalidParameter(
                        "re-ranking from codes needs a codebook index".into(),
                    )
                })?;
                if cells.ids.len() != vectors.len() {
                    return Err(LshError::InvalidParameter(format!(
                        "codebook cells hold {} objects, the vectors {}",
                        cells.ids.len(),
                        vectors.len()
                    )));
                }
                Store::Codes {
                    dim,
                    rows: Box::new(CodesRows::new(book, cells)?),
                }
            }
        })
    }

    /// The form.
    pub fn form(&self) -> Form {
        match self {
            Store::F32(_) => Form::F32,
            Store::F16 { .. } => Form::F16,
            Store::Sq8 { .. } => Form::Sq8,
            Store::Codes { .. } => Form::Codes,
        }
    }

    /// The dimension.
    pub fn dim(&self) -> usize {
        match self {
            Store::F32(v) => v.dim(),
            Store::F16 { dim, .. } | Store::Sq8 { dim, .. } | Store::Codes { dim, .. } => *dim,
        }
    }

    /// The number of vectors.
    pub fn len(&self) -> usize {
        match self {
            Store::F32(v) => v.len(),
            Store::F16 { dim, data } => data.len() / dim.max(&1),
            Store::Sq8 { dim, data, .. } => data.len() / dim.max(&1),
            Store::Codes { rows, .. } => rows.pos.len(),
        }
    }

    /// Whether there is no vector.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The float vectors, when the store is of them.
    pub fn floats(&self) -> Option<&Arc<VectorSet>> {
        match self {
            Store::F32(v) => Some(v),
            _ => None,
        }
    }

    /// Bytes a vector costs for re-ranking: the copy's, or for `codes` the codes and the
    /// position (the shared centres and codewords left out).
    pub fn bytes_per_vector(&self) -> f64 {
        let subspaces = match self {
            Store::Codes { rows, .. } => rows.cells.subspaces,
            _ => 0,
        };
        self.form().bytes_per_vector(self.dim(), subspaces) as f64
    }

    /// The rows as a GPU takes them ([`crate::gpu::GpuVectors::from_rows`]).
    pub fn device_rows(&self) -> DeviceRows<'_> {
        let dim = self.dim();
        match self {
            Store::F32(v) => DeviceRows::F32 {
                data: v.as_slice(),
                dim,
            },
            Store::F16 { data, .. } => DeviceRows::F16 { data, dim },
            Store::Sq8 { lo, step, data, .. } => DeviceRows::Sq8 {
                lo,
                step,
                data,
                dim,
            },
            Store::Codes { rows, .. } => DeviceRows::Codes {
                pos: &rows.pos,
                centres: &rows.centres,
                books: &rows.books,
                bounds: &rows.bounds,
                dim,
            },
        }
    }

    /// Asks the CPU to bring row `i` of float vectors into its caches ([`VectorSet::prefetch`]).
    pub fn prefetch(&self, i: usize) {
        if let Store::F32(v) = self {
            v.prefetch(i);
        }
    }

    /// Row `i` rebuilt into `out` (of the store's dimension); `None` beyond the rows.
    pub fn row_into(&self, i: usize, out: &mut [f32]) -> Option<()> {
        let dim = self.dim();
        if out.len() != dim {
            return None;
        }
        match self {
            Store::F32(v) => out.copy_from_slice(v.get(i)?),
            Store::F16 { data, .. } => {
                for (o, &h) in out.iter_mut().zip(data.get(i * dim..(i + 1) * dim)?) {
                    *o = from_f16(h);
                }
            }
            Store::Sq8 { lo, step, data, .. } => {
                let row = data.get(i * dim..(i + 1) * dim)?;
                for (j, o) in out.iter_mut().enumerate() {
                    *o = lo[j] + step[j] * f32::from(row[j]);
                }
            }
            Store::Codes { rows, .. } => rows.row_into(i, out)?,
        }
        Some(())
    }

    /// Every row rebuilt (for checks and tests).
    pub fn to_vectors(&self) -> Result<VectorSet> {
        let dim = self.dim();
        let mut data = vec![0f32; self.len() * dim];
        data.par_chunks_mut(dim.max(1))
            .enumerate()
            .try_for_each(|(i, row)| self.row_into(i, row))
            .ok_or_else(|| LshError::InvalidParameter("a row beyond the store".into()))?;
        VectorSet::new(dim, data)
    }

    /// Hands the payload's bytes to `put`, piece by piece, as a file holds them: the floats (the
    /// raw file's payload), or the compact values (f16 and sq8; none for codes).
    fn payload_pieces(&self, mut put: impl FnMut(&[u8])) {
        const PIECE: usize = 1 << 14;
        let mut buf = Vec::with_capacity(4 * PIECE);
        let mut floats = |xs: &[f32], put: &mut dyn FnMut(&[u8])| {
            for piece in xs.chunks(PIECE) {
                buf.clear();
                buf.extend(piece.iter().flat_map(|x| x.to_le_bytes()));
                put(&buf);
            }
        };
        match self {
            Store::F32(v) => floats(v.as_slice(), &mut put),
            Store::F16 { data, .. } => {
                for piece in data.chunks(PIECE) {
                    let bytes: Vec<u8> = piece.iter().flat_map(|h| h.to_le_bytes()).collect();
                    put(&bytes);
                }
            }
            Store::Sq8 { lo, step, data, .. } => {
                floats(lo, &mut put);
                floats(step, &mut put);
                put(data);
            }
            Store::Codes { .. } => {}
        }
    }

    /// The compact payload (f16 and sq8; empty for codes).
    fn payload(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.payload_pieces(|b| out.extend_from_slice(b));
        out
    }

    /// Saves the store to `path`: the raw float file for `f32`, else the compact file. Returns
    /// the payload's CRC-32.
    pub fn save(&self, path: &Path) -> Result<u32> {
        if let Store::F32(v) = self {
            return crate::io::raw::save(v, path);
        }
        let payload = self.payload();
        let crc = crc32fast::hash(&payload);
        let mut out = Vec::with_capacity(HEADER + payload.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.form().code().to_le_bytes());
        out.extend_from_slice(&(self.dim() as u32).to_le_bytes());
        out.extend_from_slice(&(self.len() as u64).to_le_bytes());
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&payload);
        genie_core::atomic::write_atomic(path, &out).map_err(|e| LshError::io(path, e))?;
        Ok(crc)
    }

    /// Reads a compact store saved by [`Store::save`] (`codes` rebuilt from `codes`), checked
    /// against the form, rows, dimension and checksum the index records.
    pub fn load_compact(
        path: &Path,
        want: (Form, u64, u32, u32),
        codes: Option<(&Codebook, Arc<CellCodes>)>,
    ) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| LshError::io(path, e))?;
        let err = |m: String| LshError::format(path, m);
        if bytes.len() < HEADER || &bytes[..8] != MAGIC {
            return Err(err(
                "not a genie re-rank file (bad or truncated header)".into()
            ));
        }
        let u32_at =
            |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        let form = Form::from_code(u32_at(8))
            .ok_or_else(|| err(format!("unknown re-rank form {}", u32_at(8))))?;
        let dim = u32_at(12);
        let mut r = [0u8; 8];
        r.copy_from_slice(&bytes[16..24]);
        let rows = u64::from_le_bytes(r);
        let crc = u32_at(24);
        let (want_form, want_rows, want_dim, want_crc) = want;
        if (form, rows, dim, crc) != (want_form, want_rows, want_dim, want_crc) {
            return Err(err(format!(
                "does not belong to its index: {} form, {rows} vectors of dimension {dim} \
                 (checksum {crc:08x}); the index expects {} form, {want_rows} of dimension \
                 {want_dim} (checksum {want_crc:08x})",
                form.name(),
                want_form.name()
            )));
        }
        let payload = &bytes[HEADER..];
        if crc32fast::hash(payload) != crc {
            return Err(err("corrupted: checksum mismatch".into()));
        }
        let (n, d) = (rows as usize, dim as usize);
        let expect = match form {
            Form::F16 => n.checked_mul(d).and_then(|x| x.checked_mul(2)),
            Form::Sq8 => n.checked_mul(d).and_then(|x| x.checked_add(8 * d)),
            Form::Codes => Some(0),
            Form::F32 => None,
        };
        if expect != Some(payload.len()) {
            return Err(err(format!(
                "truncated or corrupted: {} payload bytes for {n} vectors of dimension {d} in \
                 the {} form",
                payload.len(),
                form.name()
            )));
        }
        let floats = |b: &[u8]| -> Vec<f32> {
            b.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        };
        Ok(match form {
            Form::F16 => Store::F16 {
                dim: d,
                data: payload
                    .chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .collect(),
            },
            Form::Sq8 => Store::Sq8 {
                dim: d,
                lo: floats(&payload[..4 * d]),
                step: floats(&payload[4 * d..8 * d]),
                data: payload[8 * d..].to_vec(),
            },
            Form::Codes => {
                let (book, cells) = codes
                    .ok_or_else(|| err("re-ranking from codes needs a codebook index".into()))?;
                if cells.ids.len() != n {
                    return Err(err(format!(
                        "{n} vectors recorded, the codebook's cells hold {}",
                        cells.ids.len()
                    )));
                }
                Store::Codes {
                    dim: d,
                    rows: Box::new(CodesRows::new(book, cells)?),
                }
            }
            Form::F32 => unreachable!("expect is None for F32"),
        })
    }

    /// The CRC-32 [`Store::save`] records, without writing (nor building the payload).
    pub fn crc32(&self) -> u32 {
        let mut h = crc32fast::Hasher::new();
        self.payload_pieces(|b| h.update(b));
        h.finalize()
    }
}

const MAGIC: &[u8; 8] = b"GENIERRK";
const HEADER: usize = 32;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn set() -> Arc<VectorSet> {
        let data: Vec<f32> = (0..300)
            .map(|i| ((i * 37) % 101) as f32 * 0.25 - 7.0)
            .collect();
        Arc::new(VectorSet::new(6, data).unwrap())
    }

    #[test]
    fn compact_rows_are_near_the_floats_and_round_trip() {
        let v = set();
        let dir = tempfile::tempdir().unwrap();
        for (form, tol) in [(Form::F16, 0.01), (Form::Sq8, 0.07)] {
            let s = Store::encode(&v, form, None).unwrap();
            assert_eq!((s.form(), s.len(), s.dim()), (form, 50, 6));
            let back = s.to_vectors().unwrap();
            for (a, b) in back.as_slice().iter().zip(v.as_slice()) {
                assert!((a - b).abs() <= tol, "{form:?}: {a} for {b}");
            }
            let p = dir.path().join(form.name());
            let crc = s.save(&p).unwrap();
            assert_eq!(crc, s.crc32());
            let again = Store::load_compact(&p, (form, 50, 6, crc), None).expect("reads back");
            assert_eq!(again, s);
            let wrong = Store::load_compact(&p, (form, 51, 6, crc), None).unwrap_err();
            assert!(wrong.to_string().contains("does not belong"), "{wrong}");
            let mut bytes = std::fs::read(&p).unwrap();
            *bytes.last_mut().unwrap() ^= 1;
            std::fs::write(&p, &bytes).unwrap();
            let bad = Store::load_compact(&p, (form, 50, 6, crc), None).unwrap_err();
            assert!(bad.to_string().contains("checksum"), "{bad}");
        }
        assert_eq!(
            Store::encode(&v, Form::F16, None)
                .unwrap()
                .bytes_per_vector(),
            12.0
        );
        assert!(Store::encode(&v, Form::Codes, None).is_err());
        assert_eq!("sq8".parse::<Form>().unwrap(), Form::Sq8);
        assert!("f8"
            .parse::<Form>()
            .unwrap_err()
            .to_string()
            .contains("f32, f16, sq8, codes"));
    }

    #[test]
    fn a_constant_dimension_keeps_its_value() {
        let v = Arc::new(VectorSet::new(2, vec![3.0, 1.0, 3.0, 2.0, 3.0, 5.0]).unwrap());
        let s = Store::encode(&v, Form::Sq8, None).unwrap();
        let back = s.to_vectors().unwrap();
        assert_eq!(back.row(1)[0], 3.0);
        assert_eq!(back.row(2)[1], 5.0);
    }
}
