//! Readers of vector files into a [`VectorSet`]: `.fvecs`, `.bvecs`, `.ivecs` (the TEXMEX format of
//! SIFT and GIST), `.npy` (f32, f64, u8; C or Fortran order), IDX (the MNIST family, e.g.
//! Fashion-MNIST's `train-images-idx3-ubyte`), CSV, and the raw format genie writes beside an
//! index ([`raw`]). Any of them may be gzipped (detected by its magic bytes). The format is chosen
//! by the file name; a malformed file is an error naming the file (and the row for CSV), never a
//! panic.

pub mod csv;
pub mod idx;
pub mod npy;
pub mod raw;
pub mod vecs;

use crate::error::{LshError, Result};
use crate::vectors::VectorSet;
use flate2::read::MultiGzDecoder;
use std::io::Read;
use std::path::Path;

/// A vector file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `.fvecs`: per vector a little-endian `i32` dimension, then that many `f32`.
    Fvecs,
    /// `.bvecs`: the same with `u8` values.
    Bvecs,
    /// `.ivecs`: the same with `i32` values.
    Ivecs,
    /// NumPy `.npy`, a 2-D array (or 1-D: one vector) of `f4`, `f8` or `u1`.
    Npy,
    /// IDX (MNIST family): rows are the first dimension, the others are flattened.
    Idx,
    /// Comma-separated values, one vector a line, an optional header line.
    Csv,
    /// genie's raw vectors (`INDEX.vectors`).
    Raw,
}

impl Format {
    /// The format named by a file name (a trailing `.gz` is ignored), if any.
    pub fn from_path(path: &Path) -> Option<Self> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        let ext = name.rsplit_once('.').map(|(_, e)| e);
        match ext {
            Some("fvecs") => Some(Self::Fvecs),
            Some("bvecs") => Some(Self::Bvecs),
            Some("ivecs") => Some(Self::Ivecs),
            Some("npy") => Some(Self::Npy),
            Some("csv") => Some(Self::Csv),
            Some("vectors") => Some(Self::Raw),
            Some("idx") => Some(Self::Idx),
            _ if name.contains("-idx") || name.contains(".idx") => Some(Self::Idx),
            _ => None,
        }
    }

    /// The format's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Fvecs => "fvecs",
            Self::Bvecs => "bvecs",
            Self::Ivecs => "ivecs",
            Self::Npy => "npy",
            Self::Idx => "idx",
            Self::Csv => "csv",
            Self::Raw => "raw vectors",
        }
    }
}

/// The bytes of a file, gunzipped when they start with the gzip magic.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    let bytes = std::fs::read(path).map_err(|e| LshError::io(path, e))?;
    gunzip(bytes, path)
}

/// The bytes gunzipped when they start with the gzip magic, else as they are (deflate expands at
/// most about 1,032-fold, which bounds the output).
pub fn gunzip(bytes: Vec<u8>, path: &Path) -> Result<Vec<u8>> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        MultiGzDecoder::new(&bytes[..])
            .read_to_end(&mut out)
            .map_err(|e| LshError::format(path, format!("bad gzip stream: {e}")))?;
        return Ok(out);
    }
    Ok(bytes)
}

/// Reads a vector file, its format chosen by its name (see [`Format::from_path`]).
pub fn read_vectors(path: impl AsRef<Path>) -> Result<VectorSet> {
    let path = path.as_ref();
    let format = Format::from_path(path).ok_or_else(|| {
        LshError::format(
            path,
            "unknown vector format: expected a name ending in .fvecs, .bvecs, .ivecs, .npy, .csv, \
             .vectors or an IDX name (e.g. train-images-idx3-ubyte), optionally .gz",
        )
    })?;
    read_vectors_as(path, format)
}

/// Reads a vector file of a given format.
pub fn read_vectors_as(path: impl AsRef<Path>, format: Format) -> Result<VectorSet> {
    let path = path.as_ref();
    let bytes = read_bytes(path)?;
    parse(&bytes, format, path)
}

/// Parses the bytes of a vector file; `path` names it in errors. A NaN or infinite value is an
/// error naming its vector and column: hashed, it would land in buckets as if it were a number.
pub fn parse(bytes: &[u8], format: Format, path: &Path) -> Result<VectorSet> {
    let set = parse_any(bytes, format, path)?;
    check_finite(&set, path)?;
    Ok(set)
}

/// An error at the first value that is not a finite number.
pub fn check_finite(set: &VectorSet, path: &Path) -> Result<()> {
    match set.as_slice().iter().position(|x| !x.is_finite()) {
        None => Ok(()),
        Some(i) => {
            let dim = set.dim().max(1);
            Err(LshError::format(
                path,
                format!(
                    "vector {} (0-based), column {}: {} is not a finite number (NaN and infinite \
                     values are refused)",
                    i / dim,
                    i % dim,
                    set.as_slice()[i]
                ),
            ))
        }
    }
}

fn parse_any(bytes: &[u8], format: Format, path: &Path) -> Result<VectorSet> {
    match format {
        Format::Fvecs => vecs::parse(bytes, vecs::Element::F32, path),
        Format::Bvecs => vecs::parse(bytes, vecs::Element::U8, path),
        Format::Ivecs => vecs::parse(bytes, vecs::Element::I32, path),
        Format::Npy => npy::parse(bytes, path),
        Format::Idx => idx::parse(bytes, path),
        Format::Csv => csv::parse(bytes, path),
        Format::Raw => raw::parse(bytes, path).map(|(set, _)| set),
    }
}

/// A shape check shared by the binary readers: `rows * dim` values, each `size` bytes, in a
/// payload of `available` bytes, without overflow.
pub(crate) fn payload_len(rows: u64, dim: u64, size: u64) -> Option<u64> {
    rows.checked_mul(dim)?.checked_mul(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_by_name() {
        let f = |s: &str| Format::from_path(Path::new(s));
        assert_eq!(f("a/sift_base.fvecs"), Some(Format::Fvecs));
        assert_eq!(f("x.BVECS"), Some(Format::Bvecs));
        assert_eq!(f("gt.ivecs.gz"), Some(Format::Ivecs));
        assert_eq!(f("x.npy"), Some(Format::Npy));
        assert_eq!(f("x.csv"), Some(Format::Csv));
        assert_eq!(f("index.genie.vectors"), Some(Format::Raw));
        assert_eq!(f("train-images-idx3-ubyte.gz"), Some(Format::Idx));
        assert_eq!(f("t10k-images.idx3-ubyte"), Some(Format::Idx));
        assert_eq!(f("x.txt"), None);
        assert_eq!(f("noext"), None);
    }

    #[test]
    fn not_finite_values_are_refused() {
        let path = Path::new("v.csv");
        assert!(parse(b"1,2\n3,4\n", Format::Csv, path).is_ok());
        for bad in [
            "1,2\n3,nan\n",
            "1,2\n3,inf\n",
            "1,2\n3,-inf\n",
            "1,2\n3,1e39\n",
        ] {
            let e = parse(bad.as_bytes(), Format::Csv, path).expect_err(bad);
            let text = e.to_string();
            assert!(
                text.starts_with("v.csv: vector 1 (0-based), column 1: "),
                "{text}"
            );
            assert!(text.contains("not a finite number"), "{text}");
        }
    }

    #[test]
    fn unknown_and_missing() {
        let e = read_vectors("/nonexistent/x.txt").expect_err("unknown");
        assert!(e
            .to_string()
            .starts_with("/nonexistent/x.txt: unknown vector format"));
        let e = read_vectors("/nonexistent/x.fvecs").expect_err("missing");
        assert!(e.to_string().starts_with("/nonexistent/x.fvecs: "), "{e}");
    }
}
