//! NumPy `.npy` files (format versions 1 to 3): a 2-D array `(n, d)` is `n` vectors, a 1-D array
//! `(d,)` one vector. Element types `f4`, `f8` and `u1` (either byte order); C or Fortran order.
//! The header is read and written by [`genie_core::npy`].

use crate::error::{LshError, Result};
use crate::io::payload_len;
use crate::vectors::VectorSet;
use genie_core::npy::{header_bytes, parse_header};
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dtype {
    F32 { big: bool },
    F64 { big: bool },
    U8,
}

impl Dtype {
    fn size(self) -> usize {
        match self {
            Self::U8 => 1,
            Self::F32 { .. } => 4,
            Self::F64 { .. } => 8,
        }
    }

    fn read(self, b: &[u8]) -> f32 {
        match self {
            Self::U8 => f32::from(b[0]),
            Self::F32 { big } => {
                let a = [b[0], b[1], b[2], b[3]];
                if big {
                    f32::from_be_bytes(a)
                } else {
                    f32::from_le_bytes(a)
                }
            }
            Self::F64 { big } => {
                let a = [b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]];
                (if big {
                    f64::from_be_bytes(a)
                } else {
                    f64::from_le_bytes(a)
                }) as f32
            }
        }
    }

    /// The element type of `descr`, one of those the vector reader takes.
    fn of(descr: &str) -> std::result::Result<Self, String> {
        Ok(match descr {
            "<f4" | "=f4" | "f4" => Dtype::F32 { big: false },
            ">f4" => Dtype::F32 { big: true },
            "<f8" | "=f8" | "f8" => Dtype::F64 { big: false },
            ">f8" => Dtype::F64 { big: true },
            "|u1" | "u1" | "<u1" | ">u1" => Dtype::U8,
            other => {
                return Err(format!(
                    "unsupported dtype {other:?} (expected f4, f8 or u1)"
                ))
            }
        })
    }
}

/// Parses a whole `.npy` file.
pub fn parse(bytes: &[u8], path: &Path) -> Result<VectorSet> {
    let err = |reason: String| LshError::format(path, reason);
    let header = parse_header(bytes).map_err(err)?;
    let dtype = Dtype::of(&header.descr)
        .map_err(|r| err(format!("bad .npy header {:?}: {r}", header.dict)))?;
    let (rows, dim) = match header.shape[..] {
        [d] => (1, d),
        [n, d] => (n, d),
        _ => {
            return Err(err(format!(
                "expected a 1-D or 2-D array, found shape {:?}",
                header.shape
            )))
        }
    };
    if dim == 0 {
        return Err(err("the array has dimension 0".into()));
    }
    let size = dtype.size();
    let data = &bytes[header.data_at..];
    let need = payload_len(rows, dim, size as u64)
        .ok_or_else(|| err(format!("shape {:?} is too large", header.shape)))?;
    if (data.len() as u64) < need {
        return Err(err(format!(
            "truncated: shape {:?} needs {need} bytes of data, found {}",
            header.shape,
            data.len()
        )));
    }
    let (rows, dim) = (rows as usize, dim as usize);
    let values = data[..need as usize]
        .chunks_exact(size)
        .map(|b| dtype.read(b));
    let out: Vec<f32> = if header.fortran && rows > 1 {
        let col_major: Vec<f32> = values.collect();
        (0..rows * dim)
            .map(|k| col_major[(k % dim) * rows + k / dim])
            .collect()
    } else {
        values.collect()
    };
    VectorSet::new(dim, out)
}

/// The bytes of a version 1.0 `.npy` file of `rows x dim` little-endian `f32` in C order (for
/// tests and tools).
pub fn to_npy_f32(vectors: &VectorSet) -> Vec<u8> {
    let mut out = header_bytes("<f4", &[vectors.len(), vectors.dim()]);
    for x in vectors.as_slice() {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use genie_core::npy::MAGIC;

    fn p() -> &'static Path {
        Path::new("a.npy")
    }

    fn npy(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        out.extend_from_slice(dict.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn kinds_and_orders() {
        let set = VectorSet::new(3, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        assert_eq!(parse(&to_npy_f32(&set), p()).unwrap(), set);
        let f64s: Vec<u8> = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let c = npy(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
            &f64s,
        );
        assert_eq!(parse(&c, p()).unwrap(), set);
        // Fortran order: columns stored one after the other
        let f = npy(
            "{'descr': '<f8', 'fortran_order': True, 'shape': (3, 2), }",
            &f64s,
        );
        let t = parse(&f, p()).unwrap();
        assert_eq!(t.as_slice(), &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        let u = npy(
            "{'descr': '|u1', 'fortran_order': False, 'shape': (2,2), }",
            &[1, 2, 3, 255],
        );
        assert_eq!(parse(&u, p()).unwrap().as_slice(), &[1.0, 2.0, 3.0, 255.0]);
        let be: Vec<u8> = [1.5f32, -2.0]
            .iter()
            .flat_map(|x| x.to_be_bytes())
            .collect();
        let b = npy(
            "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
            &be,
        );
        assert_eq!(parse(&b, p()).unwrap().as_slice(), &[1.5, -2.0]);
        assert_eq!(parse(&b, p()).unwrap().len(), 1);
    }

    #[test]
    fn bad_inputs() {
        let msg = |b: &[u8]| parse(b, p()).unwrap_err().to_string();
        assert!(msg(b"hello").contains("not a NumPy .npy file"));
        assert!(msg(b"\x93NUMPY").contains("truncated"));
        assert!(msg(b"\x93NUMPY\x09\x00").contains("unsupported .npy format version 9"));
        assert!(msg(b"\x93NUMPY\x01\x00\xff\x00{").contains("truncated .npy header"));
        let d = |dict: &str, data: &[u8]| msg(&npy(dict, data));
        assert!(d(
            "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 1), }",
            &[0; 8]
        )
        .contains("unsupported dtype \"<i8\""));
        assert!(d(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
            &[0; 12]
        )
        .contains("truncated: shape [2, 2] needs 16 bytes"));
        assert!(d(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1), }",
            &[0; 4]
        )
        .contains("1-D or 2-D"));
        assert!(d(
            "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }",
            &[0; 4]
        )
        .contains("bad fortran_order"));
        assert!(d(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (x, 1), }",
            &[0; 4]
        )
        .contains("bad shape"));
        assert!(d("{'descr': '<f4', 'fortran_order': False}", &[0; 4]).contains("no 'shape'"));
        assert!(d(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }",
            &[0; 4]
        )
        .contains("too large"));
        assert!(d(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 0), }",
            &[]
        )
        .contains("dimension 0"));
    }
}
