//! A list of byte strings kept beside an index: the sequences that verification reads
//! (`INDEX.seqs`) and the word dictionary of documents (`INDEX.words`).
//!
//! File format (little endian): the magic `GENIESTR`, a `u32` version (1), a `u64` count `N`, a
//! `u64` byte total `B`, `N + 1` `u64` offsets (first 0, last `B`, non-decreasing), the `B` bytes,
//! then a CRC-32 of everything before it. A truncated or corrupted file is an error that names the
//! file, never a panic.

use crate::error::{Result, SaError};
use std::path::Path;

const MAGIC: &[u8; 8] = b"GENIESTR";
const VERSION: u32 = 1;

/// Byte strings addressed by a dense id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StringTable {
    offsets: Vec<u64>,
    bytes: Vec<u8>,
}

impl StringTable {
    /// An empty table.
    pub fn new() -> Self {
        Self {
            offsets: vec![0],
            bytes: Vec::new(),
        }
    }

    /// Appends a string; its id is the previous [`StringTable::len`].
    pub fn push(&mut self, s: &[u8]) {
        self.bytes.extend_from_slice(s);
        self.offsets.push(self.bytes.len() as u64);
    }

    /// The number of strings.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// String `id` (panics beyond [`StringTable::len`], like a slice).
    pub fn get(&self, id: usize) -> &[u8] {
        &self.bytes[self.offsets[id] as usize..self.offsets[id + 1] as usize]
    }

    /// The strings in id order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The file image.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(32 + self.offsets.len() * 8 + self.bytes.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(self.len() as u64).to_le_bytes());
        out.extend_from_slice(&(self.bytes.len() as u64).to_le_bytes());
        for o in &self.offsets {
            out.extend_from_slice(&o.to_le_bytes());
        }
        out.extend_from_slice(&self.bytes);
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Parses a file image; the error says what is wrong.
    pub fn from_bytes(data: &[u8]) -> std::result::Result<Self, String> {
        let body_len = data
            .len()
            .checked_sub(4)
            .ok_or("truncated: too short for a string table")?;
        let (body, crc) = data.split_at(body_len);
        let mut r = Reader { data: body, at: 0 };
        if r.take(8)? != MAGIC {
            return Err("not a genie string table (bad magic)".into());
        }
        let version = u32::from_le_bytes(r.array()?);
        if version != VERSION {
            return Err(format!(
                "string table version {version}, expected {VERSION}"
            ));
        }
        let n = u64::from_le_bytes(r.array()?);
        let total = u64::from_le_bytes(r.array()?);
        let expected = n
            .checked_add(1)
            .and_then(|x| x.checked_mul(8))
            .and_then(|x| x.checked_add(total))
            .and_then(|x| x.checked_add(r.at as u64));
        if expected != Some(body.len() as u64) {
            return Err(format!(
                "truncated or corrupted: {} bytes for {n} strings of {total} bytes",
                data.len()
            ));
        }
        if crc32fast::hash(body).to_le_bytes() != crc {
            return Err("corrupted: checksum mismatch".into());
        }
        let offsets = (0..=n)
            .map(|_| r.array().map(u64::from_le_bytes))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let ordered = offsets.first() == Some(&0)
            && offsets.last() == Some(&total)
            && offsets.windows(2).all(|w| w[0] <= w[1]);
        if !ordered {
            return Err("corrupted: offsets out of order".into());
        }
        let bytes = r.take(total as usize)?.to_vec();
        Ok(Self { offsets, bytes })
    }

    /// Writes the table to `path`.
    pub fn save(&self, path: &Path) -> Result<()> {
        genie_core::atomic::write_atomic(path, &self.to_bytes()).map_err(|error| SaError::Io {
            path: path.to_path_buf(),
            error,
        })
    }

    /// Reads a table written by [`StringTable::save`].
    pub fn load(path: &Path) -> Result<Self> {
        let data = std::fs::read(path).map_err(|error| SaError::Io {
            path: path.to_path_buf(),
            error,
        })?;
        Self::from_bytes(&data).map_err(|reason| SaError::BadSideFile {
            path: path.to_path_buf(),
            reason,
        })
    }
}

impl<S: AsRef<[u8]>> FromIterator<S> for StringTable {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut t = Self::new();
        for s in iter {
            t.push(s.as_ref());
        }
        t
    }
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.data.len());
        let end = end.ok_or("truncated")?;
        let s = &self.data[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> std::result::Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let t: StringTable = ["abc", "", "héllo", "\u{0}\n"].into_iter().collect();
        let back = StringTable::from_bytes(&t.to_bytes()).expect("round trip");
        assert_eq!(back, t);
        assert_eq!(back.get(2), "héllo".as_bytes());
        assert_eq!(back.iter().count(), 4);
        let empty = StringTable::new();
        assert_eq!(
            StringTable::from_bytes(&empty.to_bytes()).expect("empty"),
            empty
        );
    }

    #[test]
    fn damage_is_an_error() {
        let t: StringTable = ["abc", "de"].into_iter().collect();
        let bytes = t.to_bytes();
        for cut in 0..bytes.len() {
            assert!(StringTable::from_bytes(&bytes[..cut]).is_err(), "cut {cut}");
        }
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x40;
            assert!(StringTable::from_bytes(&b).is_err(), "flip {i}");
        }
    }

    #[test]
    fn load_names_the_file() {
        let dir = std::env::temp_dir().join(format!("genie-sa-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("bad.seqs");
        std::fs::write(&path, b"GENIESTRxx").expect("write");
        let e = StringTable::load(&path).expect_err("bad file");
        assert!(
            e.to_string().starts_with(&path.display().to_string()),
            "{e}"
        );
        let missing = StringTable::load(&dir.join("missing.seqs")).expect_err("missing");
        assert!(matches!(missing, SaError::Io { .. }));
        std::fs::remove_dir_all(&dir).ok();
    }
}
