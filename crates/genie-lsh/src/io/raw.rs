//! genie's raw vectors file, written beside an index as `INDEX.vectors` so that a search can
//! re-rank: a 32-byte header (magic `GENIEVEC`, format version `u32`, dimension `u32`, row count
//! `u64`, CRC-32 of the payload `u32`, 4 reserved bytes), then the rows as little-endian `f32`.

use crate::error::{LshError, Result};
use crate::io::payload_len;
use crate::vectors::VectorSet;
use std::path::Path;

const MAGIC: &[u8; 8] = b"GENIEVEC";
const VERSION: u32 = 1;
const HEADER: usize = 32;

/// The file bytes of `vectors`.
pub fn to_bytes(vectors: &VectorSet) -> Vec<u8> {
    let mut payload = Vec::with_capacity(4 * vectors.as_slice().len());
    for x in vectors.as_slice() {
        payload.extend_from_slice(&x.to_le_bytes());
    }
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(vectors.dim() as u32).to_le_bytes());
    out.extend_from_slice(&(vectors.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&payload);
    out
}

/// Writes `vectors` to `path`; returns the payload's CRC-32.
pub fn save(vectors: &VectorSet, path: &Path) -> Result<u32> {
    let bytes = to_bytes(vectors);
    let crc = u32::from_le_bytes([bytes[24], bytes[25], bytes[26], bytes[27]]);
    genie_core::atomic::write_atomic(path, &bytes).map_err(|e| LshError::io(path, e))?;
    Ok(crc)
}

/// Parses a raw vectors file; returns the vectors and the payload's CRC-32.
pub fn parse(bytes: &[u8], path: &Path) -> Result<(VectorSet, u32)> {
    let err = |reason: String| LshError::format(path, reason);
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err(err(
            "not a genie vectors file (bad or truncated header)".into()
        ));
    }
    let u32_at =
        |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    let version = u32_at(8);
    if version != VERSION {
        return Err(err(format!(
            "vectors file version {version}, this genie reads version {VERSION}"
        )));
    }
    let dim = u64::from(u32_at(12));
    let mut n = [0u8; 8];
    n.copy_from_slice(&bytes[16..24]);
    let rows = u64::from_le_bytes(n);
    let crc = u32_at(24);
    let reserved = u32_at(28);
    if reserved != 0 {
        return Err(err(format!(
            "corrupted: reserved header bytes are {reserved:#x}, expected 0"
        )));
    }
    let payload = &bytes[HEADER..];
    let need = payload_len(rows, dim, 4);
    if dim == 0 || need != Some(payload.len() as u64) {
        return Err(err(format!(
            "truncated or corrupted: {rows} vectors of dimension {dim} announced, {} payload bytes",
            payload.len()
        )));
    }
    if crc32fast::hash(payload) != crc {
        return Err(err("corrupted: checksum mismatch".into()));
    }
    let data = payload
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    Ok((VectorSet::new(dim as usize, data)?, crc))
}

/// Reads a raw vectors file; returns the vectors and the payload's CRC-32.
pub fn load(path: &Path) -> Result<(VectorSet, u32)> {
    let bytes = std::fs::read(path).map_err(|e| LshError::io(path, e))?;
    parse(&bytes, path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Found by the `raw_vectors` fuzz target: the reserved header bytes were ignored, so a file
    /// with them set decoded but did not re-encode to the same bytes.
    #[test]
    fn reserved_bytes_must_be_zero() {
        let v = VectorSet::new(2, vec![1.0, 2.0]).unwrap();
        let mut bytes = to_bytes(&v);
        assert!(parse(&bytes, Path::new("v.vectors")).is_ok());
        bytes[29] = 1;
        let e = parse(&bytes, Path::new("v.vectors")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("v.vectors: corrupted: reserved header bytes"),
            "{e}"
        );
    }

    #[test]
    fn round_trip_and_damage() {
        let p = Path::new("i.vectors");
        let set = VectorSet::new(2, vec![1.0, 2.0, 3.0, f32::MIN]).unwrap();
        let b = to_bytes(&set);
        assert_eq!(parse(&b, p).unwrap().0, set);
        let msg = |b: &[u8]| parse(b, p).unwrap_err().to_string();
        assert!(msg(&b[..10]).contains("not a genie vectors file"));
        assert!(msg(&b[..b.len() - 1]).contains("truncated or corrupted"));
        let mut c = b.clone();
        c[HEADER] ^= 1;
        assert_eq!(msg(&c), "i.vectors: corrupted: checksum mismatch");
        let mut v = b.clone();
        v[8] = 9;
        assert!(msg(&v).contains("version 9"));
        let mut big = b;
        big[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(msg(&big).contains("truncated or corrupted"));
    }
}
