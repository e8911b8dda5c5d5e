//! The TEXMEX `.fvecs` / `.bvecs` / `.ivecs` formats: each vector is a little-endian `i32`
//! dimension followed by that many values (`f32`, `u8` or `i32`); every vector of a file has the
//! same dimension.

use crate::error::{LshError, Result};
use crate::vectors::VectorSet;
use std::path::Path;

/// The value type of a `*vecs` file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Element {
    /// `.fvecs`.
    F32,
    /// `.bvecs`.
    U8,
    /// `.ivecs`.
    I32,
}

impl Element {
    fn size(self) -> usize {
        match self {
            Self::U8 => 1,
            Self::F32 | Self::I32 => 4,
        }
    }

    fn read(self, b: &[u8]) -> f32 {
        match self {
            Self::U8 => f32::from(b[0]),
            Self::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            Self::I32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32,
        }
    }
}

/// Largest dimension accepted (a guard against reading garbage as a header).
pub const MAX_DIM: usize = 1 << 24;

/// Parses a whole `*vecs` file.
pub fn parse(bytes: &[u8], element: Element, path: &Path) -> Result<VectorSet> {
    let err = |reason: String| LshError::format(path, reason);
    if bytes.is_empty() {
        return Err(err("empty file: no vector".into()));
    }
    let dim = header(bytes, 0).map_err(|r| err(format!("vector 0: {r}")))?;
    let record = 4 + dim * element.size();
    if bytes.len() % record != 0 {
        // find the first bad record to name it
        let mut at = 0;
        let mut row = 0;
        while at + 4 <= bytes.len() {
            let d = header(&bytes[at..], 0).map_err(|r| err(format!("vector {row}: {r}")))?;
            if d != dim {
                return Err(err(format!(
                    "vector {row} has dimension {d}, expected {dim} (that of vector 0)"
                )));
            }
            at += record;
            row += 1;
        }
        return Err(err(format!(
            "truncated: {} bytes do not hold whole vectors of dimension {dim} ({record} bytes each)",
            bytes.len()
        )));
    }
    let rows = bytes.len() / record;
    let mut data = Vec::with_capacity(rows * dim);
    for (row, rec) in bytes.chunks_exact(record).enumerate() {
        let d = header(rec, 0).map_err(|r| err(format!("vector {row}: {r}")))?;
        if d != dim {
            return Err(err(format!(
                "vector {row} has dimension {d}, expected {dim} (that of vector 0)"
            )));
        }
        data.extend(
            rec[4..]
                .chunks_exact(element.size())
                .map(|b| element.read(b)),
        );
    }
    VectorSet::new(dim, data)
}

fn header(bytes: &[u8], at: usize) -> std::result::Result<usize, String> {
    let b = bytes
        .get(at..at + 4)
        .ok_or_else(|| "truncated dimension header".to_string())?;
    let d = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    if d <= 0 || d as usize > MAX_DIM {
        return Err(format!(
            "bad dimension header {d} (expected 1 to {MAX_DIM}; is this a *vecs file?)"
        ));
    }
    Ok(d as usize)
}

/// The bytes of `vectors` as `.fvecs`.
pub fn to_fvecs(vectors: &VectorSet) -> Vec<u8> {
    let mut out = Vec::with_capacity(vectors.len() * (4 + 4 * vectors.dim()));
    for row in vectors.rows() {
        out.extend_from_slice(&(row.len() as i32).to_le_bytes());
        for x in row {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn p() -> &'static Path {
        Path::new("v.fvecs")
    }

    #[test]
    fn round_trip_and_kinds() {
        let set = VectorSet::new(3, vec![1.0, -2.5, 3.0, 4.0, 5.0, 6.0]).unwrap();
        assert_eq!(parse(&to_fvecs(&set), Element::F32, p()).unwrap(), set);
        let b = [2, 0, 0, 0, 7, 255, 2, 0, 0, 0, 0, 1];
        let s = parse(&b, Element::U8, p()).unwrap();
        assert_eq!(s.as_slice(), &[7.0, 255.0, 0.0, 1.0]);
        let mut i = Vec::new();
        i.extend_from_slice(&1i32.to_le_bytes());
        i.extend_from_slice(&(-9i32).to_le_bytes());
        assert_eq!(parse(&i, Element::I32, p()).unwrap().as_slice(), &[-9.0]);
    }

    #[test]
    fn bad_inputs() {
        let msg = |b: &[u8]| parse(b, Element::F32, p()).unwrap_err().to_string();
        assert_eq!(msg(&[]), "v.fvecs: empty file: no vector");
        assert!(msg(&[1, 0]).contains("truncated dimension header"));
        assert!(msg(&[0, 0, 0, 0]).contains("bad dimension header 0"));
        assert!(msg(&[255, 255, 255, 255]).contains("bad dimension header -1"));
        assert!(msg(&[1, 0, 0, 0, 0, 0]).contains("truncated"));
        // second vector has dimension 2
        let set = VectorSet::new(1, vec![1.0, 2.0, 3.0]).unwrap();
        let mut b = to_fvecs(&set);
        b[8] = 2;
        let m = msg(&b);
        assert!(m.contains("vector 1 has dimension 2, expected 1"), "{m}");
    }
}
