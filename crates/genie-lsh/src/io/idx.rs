//! The IDX format of MNIST and Fashion-MNIST: two zero bytes, a type byte (0x08 u8, 0x09 i8, 0x0B
//! i16, 0x0C i32, 0x0D f32, 0x0E f64), the number of dimensions, then each size as a big-endian
//! `u32`, then the values big-endian. The first dimension counts the vectors; the others are
//! flattened (28 x 28 images become 784-d vectors).

use crate::error::{LshError, Result};
use crate::io::payload_len;
use crate::vectors::VectorSet;
use std::path::Path;

/// Reads one big-endian value.
type ReadValue = fn(&[u8]) -> f32;

fn element(code: u8) -> Option<(usize, ReadValue)> {
    Some(match code {
        0x08 => (1, |b| f32::from(b[0])),
        0x09 => (1, |b| f32::from(b[0] as i8)),
        0x0B => (2, |b| f32::from(i16::from_be_bytes([b[0], b[1]]))),
        0x0C => (4, |b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]) as f32),
        0x0D => (4, |b| f32::from_be_bytes([b[0], b[1], b[2], b[3]])),
        0x0E => (8, |b| {
            f64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) as f32
        }),
        _ => return None,
    })
}

/// Parses a whole (gunzipped) IDX file.
pub fn parse(bytes: &[u8], path: &Path) -> Result<VectorSet> {
    let err = |reason: String| LshError::format(path, reason);
    let magic = bytes
        .get(..4)
        .ok_or_else(|| err("truncated IDX header".into()))?;
    if magic[0] != 0 || magic[1] != 0 {
        return Err(err(format!(
            "not an IDX file (magic {:02x} {:02x} {:02x} {:02x}, expected 00 00 TYPE DIMS)",
            magic[0], magic[1], magic[2], magic[3]
        )));
    }
    let (size, read) = element(magic[2])
        .ok_or_else(|| err(format!("unknown IDX element type 0x{:02x}", magic[2])))?;
    let ndims = usize::from(magic[3]);
    if ndims == 0 {
        return Err(err("IDX header announces 0 dimensions".into()));
    }
    let sizes_end = 4 + 4 * ndims;
    let sizes: Vec<u64> = bytes
        .get(4..sizes_end)
        .ok_or_else(|| {
            err(format!(
                "truncated IDX header ({ndims} dimension sizes announced)"
            ))
        })?
        .chunks_exact(4)
        .map(|b| u64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]])))
        .collect();
    let rows = sizes[0];
    let dim = sizes[1..]
        .iter()
        .try_fold(1u64, |acc, &s| acc.checked_mul(s))
        .ok_or_else(|| err(format!("IDX sizes {sizes:?} are too large")))?;
    if dim == 0 {
        return Err(err(format!(
            "IDX sizes {sizes:?} give vectors of dimension 0"
        )));
    }
    let need = payload_len(rows, dim, size as u64)
        .ok_or_else(|| err(format!("IDX sizes {sizes:?} are too large")))?;
    let data = &bytes[sizes_end..];
    if (data.len() as u64) < need {
        return Err(err(format!(
            "truncated: sizes {sizes:?} need {need} bytes of data, found {}",
            data.len()
        )));
    }
    let values = data[..need as usize].chunks_exact(size).map(read).collect();
    VectorSet::new(dim as usize, values)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn p() -> &'static Path {
        Path::new("images-idx3-ubyte")
    }

    #[test]
    fn images_and_types() {
        // 2 images of 2 x 2 u8
        let b = [
            0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3, 4, 5, 6, 7, 255,
        ];
        let s = parse(&b, p()).unwrap();
        assert_eq!((s.len(), s.dim()), (2, 4));
        assert_eq!(s.row(1), &[5.0, 6.0, 7.0, 255.0]);
        // labels-like 1-D file: vectors of dimension 1
        let l = parse(&[0, 0, 8, 1, 0, 0, 0, 3, 9, 8, 7], p()).unwrap();
        assert_eq!((l.len(), l.dim()), (3, 1));
        let mut f = vec![0, 0, 0x0D, 2, 0, 0, 0, 1, 0, 0, 0, 2];
        f.extend_from_slice(&1.5f32.to_be_bytes());
        f.extend_from_slice(&(-3.0f32).to_be_bytes());
        assert_eq!(parse(&f, p()).unwrap().as_slice(), &[1.5, -3.0]);
        let i = [0, 0, 0x09, 1, 0, 0, 0, 1, 0xff];
        assert_eq!(parse(&i, p()).unwrap().as_slice(), &[-1.0]);
    }

    #[test]
    fn bad_inputs() {
        let msg = |b: &[u8]| parse(b, p()).unwrap_err().to_string();
        assert!(msg(&[0, 0]).contains("truncated IDX header"));
        assert!(msg(&[1, 2, 8, 1]).contains("not an IDX file"));
        assert!(msg(&[0, 0, 0x42, 1]).contains("unknown IDX element type 0x42"));
        assert!(msg(&[0, 0, 8, 0]).contains("0 dimensions"));
        assert!(msg(&[0, 0, 8, 3, 0, 0, 0, 2]).contains("3 dimension sizes announced"));
        assert!(msg(&[0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3]).contains("need 4 bytes"));
        assert!(msg(&[0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 0]).contains("dimension 0"));
        let huge = [
            0, 0, 0x0E, 3, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        ];
        assert!(msg(&huge).contains("truncated") || msg(&huge).contains("too large"));
        assert!(msg(&huge).starts_with("images-idx3-ubyte: "));
    }
}
