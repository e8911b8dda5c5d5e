//! Index files of format version 1, read (and, for tests, written) as before version 2's
//! mapped format ([`super::persist`]): a little-endian stream with a CRC-32 trailer, decoded
//! into memory.
//!
//! Layout (version 1): magic `GENIEIDX`, version u32, flags u32, num_objects u32,
//! keyword_space u32, num_postings u64, max_object_len u32, num_blocks u32, metadata_len u32,
//! then offsets `[u64; keyword_space + 1]`, postings `[u32; num_postings]`,
//! block_starts `[u32; num_blocks]`, block_max `[u32; num_blocks]`, metadata bytes (UTF-8),
//! and the CRC-32 of everything before it. A truncated, corrupted or other-version file is an
//! error naming the file; loading never panics on bad bytes.

use super::InvertedIndex;
use crate::error::Result;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use super::file::{bad, io_err, MAGIC};

/// This format's version.
pub(super) const FORMAT_VERSION: u32 = 1;
/// magic 8 + four u32 + one u64 + three u32.
const HEADER_LEN: usize = 44;

impl InvertedIndex {
    /// The index in format version 1 (files of older builds, for tests of reading them).
    #[cfg(test)]
    pub(super) fn to_bytes_v1(&self) -> Vec<u8> {
        let metadata = &self.metadata;
        let mut out = Vec::with_capacity(self.heap_bytes() as usize + 64 + metadata.len());
        out.extend_from_slice(MAGIC);
        for v in [FORMAT_VERSION, 0, self.num_objects, self.keyword_space] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&(self.postings.len() as u64).to_le_bytes());
        let nb = self.block_starts.len() as u32;
        for v in [self.max_object_len, nb, metadata.len() as u32] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        debug_assert_eq!(out.len(), HEADER_LEN);
        self.offsets
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        self.postings
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        self.block_starts
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        self.block_max
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        out.extend_from_slice(metadata.as_bytes());
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Reads a version-1 file, checked and decoded as it is read, a chunk at a time (no second
    /// copy of it in memory), with the errors of [`InvertedIndex::from_bytes_v1`].
    pub(super) fn load_v1(path: &Path, mut file: File) -> Result<Self> {
        let len = file.metadata().map_err(io_err(path))?.len();
        let mut head = Vec::with_capacity(HEADER_LEN);
        (&mut file)
            .take(HEADER_LEN as u64)
            .read_to_end(&mut head)
            .map_err(io_err(path))?;
        let h = Header::parse(&head, len).map_err(|reason| bad(path, reason))?;
        let mut r = Stream {
            file,
            crc: crc32fast::Hasher::new(),
            buf: vec![0u8; CHUNK],
        };
        r.crc.update(&head);
        let read = |e: std::io::Error| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                bad(path, "truncated: the file changed while it was read")
            } else {
                io_err(path)(e)
            }
        };
        let offsets = r
            .words(h.keyword_space as usize + 1, u64::from_le_bytes)
            .map_err(read)?;
        let postings = r
            .words(h.num_postings as usize, u32::from_le_bytes)
            .map_err(read)?;
        let block_starts = r
            .words(h.num_blocks as usize, u32::from_le_bytes)
            .map_err(read)?;
        let block_max = r
            .words(h.num_blocks as usize, u32::from_le_bytes)
            .map_err(read)?;
        let metadata = r.bytes(h.meta_len as usize).map_err(read)?;
        let computed = r.crc.clone().finalize();
        let mut stored = [0u8; 4];
        r.file.read_exact(&mut stored).map_err(read)?;
        if computed != u32::from_le_bytes(stored) {
            return Err(bad(path, "checksum mismatch: the file is corrupted"));
        }
        let metadata =
            String::from_utf8(metadata).map_err(|_| bad(path, "metadata is not UTF-8"))?;
        let index = h.index(offsets, postings, block_starts, block_max, metadata);
        index
            .check_structure(None)
            .map_err(|reason| bad(path, reason))?;
        Ok(index)
    }

    /// Parses a version-1 file; the error is a description of what is wrong.
    pub(super) fn from_bytes_v1(bytes: &[u8]) -> std::result::Result<Self, String> {
        let h = Header::parse(&bytes[..bytes.len().min(HEADER_LEN)], bytes.len() as u64)?;
        let body = &bytes[..bytes.len() - 4];
        let stored = u32::from_le_bytes(bytes[bytes.len() - 4..].try_into().map_err(|_| "crc")?);
        if crc32fast::hash(body) != stored {
            return Err("checksum mismatch: the file is corrupted".into());
        }
        let mut r = Reader {
            bytes,
            pos: HEADER_LEN,
        };
        let offsets = r.vec_u64(h.keyword_space as usize + 1);
        let postings = r.vec_u32(h.num_postings as usize);
        let block_starts = r.vec_u32(h.num_blocks as usize);
        let block_max = r.vec_u32(h.num_blocks as usize);
        let metadata = std::str::from_utf8(r.take(h.meta_len as usize))
            .map_err(|_| "metadata is not UTF-8")?
            .to_string();
        let index = h.index(offsets, postings, block_starts, block_max, metadata);
        index.check_structure(None)?;
        Ok(index)
    }
}

/// What a file's header announces, checked against the file's length.
struct Header {
    num_objects: u32,
    keyword_space: u32,
    num_postings: u64,
    max_object_len: u32,
    num_blocks: u32,
    meta_len: u32,
}

impl Header {
    /// The header at the start of a file of `len` bytes (`head`: its first [`HEADER_LEN`] bytes,
    /// fewer when the file is shorter).
    fn parse(head: &[u8], len: u64) -> std::result::Result<Self, String> {
        if head.len() < 8 || &head[..8] != MAGIC {
            return Err("not a genie index file (bad magic)".into());
        }
        if len < (HEADER_LEN + 4) as u64 {
            return Err(format!(
                "truncated: {len} bytes, header needs {}",
                HEADER_LEN + 4
            ));
        }
        let mut r = Reader {
            bytes: head,
            pos: 8,
        };
        let version = r.u32();
        if version != FORMAT_VERSION {
            return Err(format!(
                "format version {version}, this build reads version {FORMAT_VERSION}"
            ));
        }
        let flags = r.u32();
        if flags != 0 {
            return Err(format!(
                "flags {flags:#x}: this build knows no flags (expected 0)"
            ));
        }
        let (num_objects, keyword_space) = (r.u32(), r.u32());
        let num_postings = r.u64();
        let (max_object_len, num_blocks, meta_len) = (r.u32(), r.u32(), r.u32());
        let expected = (u64::from(keyword_space) + 1)
            .checked_mul(8)
            .and_then(|x| x.checked_add(num_postings.checked_mul(4)?))
            .and_then(|x| {
                x.checked_add(
                    u64::from(num_blocks) * 8 + u64::from(meta_len) + 4 + HEADER_LEN as u64,
                )
            })
            .ok_or("header sizes overflow")?;
        if len < expected {
            return Err(format!("truncated: {len} bytes, header says {expected}"));
        }
        if len > expected {
            return Err(format!("{} trailing bytes after the index", len - expected));
        }
        Ok(Self {
            num_objects,
            keyword_space,
            num_postings,
            max_object_len,
            num_blocks,
            meta_len,
        })
    }

    fn index(
        &self,
        offsets: Vec<u64>,
        postings: Vec<u32>,
        block_starts: Vec<u32>,
        block_max: Vec<u32>,
        metadata: String,
    ) -> InvertedIndex {
        InvertedIndex {
            num_objects: self.num_objects,
            keyword_space: self.keyword_space,
            offsets: offsets.into(),
            postings: postings.into(),
            block_starts,
            block_max,
            max_object_len: self.max_object_len,
            metadata,
        }
    }
}

/// Bytes read at a time by [`InvertedIndex::load`] (a multiple of 8: whole words).
const CHUNK: usize = 1 << 16;

/// A file read a chunk at a time, its CRC-32 updated as it goes.
struct Stream {
    file: File,
    crc: crc32fast::Hasher,
    buf: Vec<u8>,
}

impl Stream {
    /// `n` little-endian words of `N` bytes.
    fn words<T, const N: usize>(
        &mut self,
        n: usize,
        decode: impl Fn([u8; N]) -> T,
    ) -> std::io::Result<Vec<T>> {
        let mut out = Vec::with_capacity(n);
        let mut left = n * N;
        while left > 0 {
            let take = left.min(CHUNK);
            let chunk = &mut self.buf[..take];
            self.file.read_exact(chunk)?;
            self.crc.update(chunk);
            out.extend(chunk.chunks_exact(N).map(|c| {
                let mut word = [0u8; N];
                word.copy_from_slice(c);
                decode(word)
            }));
            left -= take;
        }
        Ok(out)
    }

    fn bytes(&mut self, n: usize) -> std::io::Result<Vec<u8>> {
        let mut out = vec![0u8; n];
        self.file.read_exact(&mut out)?;
        self.crc.update(&out);
        Ok(out)
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        s
    }
    fn u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        b.copy_from_slice(self.take(4));
        u32::from_le_bytes(b)
    }
    fn u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8));
        u64::from_le_bytes(b)
    }
    fn vec_u32(&mut self, n: usize) -> Vec<u32> {
        self.take(n * 4)
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }
    fn vec_u64(&mut self, n: usize) -> Vec<u64> {
        self.take(n * 8)
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect()
    }
}
