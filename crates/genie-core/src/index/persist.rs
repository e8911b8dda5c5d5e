//! The index file (format version 2): little-endian, every array at a page boundary, so that an
//! index opens by memory map and its List Array and Position Map are used in place
//! ([`super::section`]), never copied.
//!
//! Layout: a header page, then the arrays in this order, each starting at a multiple of
//! [`ALIGN`] with zeros between:
//!
//! | bytes | field |
//! | --- | --- |
//! | 0..8 | magic `GENIEIDX` |
//! | 8..12 | version u32 = 2 |
//! | 12..16 | flags u32: 0, or 1 for a packed List Array |
//! | 16..20, 20..24 | num_objects u32, keyword_space u32 |
//! | 24..32 | num_postings u64 |
//! | 32..36, 36..40, 40..44 | max_object_len u32, num_blocks u32, metadata bytes u32 |
//! | 44..48 | log2 of the checksum chunk u32 |
//! | 48..168 | per array (offsets `[u64; keyword_space + 1]`, postings `[u32; num_postings]` (packed: the words of [`crate::packed::PackedPostings::words`]), block_starts `[u32; num_blocks]`, block_max `[u32; num_blocks]`, metadata UTF-8): file offset u64, bytes u64, checksum u64 |
//! | 168..176 | XXH3-64 of bytes 0..168 |
//! | 176..4096 | zeros |
//!
//! An array's checksum is the XXH3-64 of the little-endian XXH3-64s of its chunks (each
//! 2^log2 bytes, the last shorter; [`super::checksum`]), so that the chunks are checked in
//! parallel, at memory speed.
//! Opening checks every byte: the header, every array's checksum, the zeros between, the file's
//! length, and the structure search relies on (the Position Map ascending over the List Array,
//! every posting below num_objects, in the same pass as the postings' checksum). A truncated,
//! corrupted or unknown file is an error naming the file; files of version 1 are still read
//! ([`super::legacy`]), into memory.

use super::checksum::{checksum, CHUNK_LOG2};
use super::file::{bad, io_err, MAGIC};
use super::section::{Section, Word};
use super::InvertedIndex;
use crate::atomic::AtomicFile;
use crate::error::{GenieError, Result};
use memmap2::Mmap;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use xxhash_rust::xxh3::xxh3_64;

/// The index file format version this build writes (it reads this one and version 1).
pub const FORMAT_VERSION: u32 = 2;
/// Arrays start at multiples of this (a page: mapped arrays are aligned for any word).
pub const ALIGN: u64 = 4096;
/// The flag of a file whose List Array is packed ([`crate::packed`]).
const FLAG_PACKED: u32 = 1;
/// The header's bytes before its own checksum.
const HEAD: usize = 168;
/// The arrays, in file order.
const ARRAYS: [&str; 5] = [
    "position map",
    "list array",
    "block starts",
    "block maxima",
    "metadata",
];

/// Where one array lies and its checksum.
#[derive(Clone, Copy, Debug)]
struct Extent {
    at: u64,
    bytes: u64,
    sum: u64,
}

/// A file's header: what it announces and where its arrays lie.
#[derive(Clone, Debug)]
struct Layout {
    flags: u32,
    num_objects: u32,
    keyword_space: u32,
    num_postings: u64,
    max_object_len: u32,
    num_blocks: u32,
    meta_len: u32,
    chunk_log2: u32,
    arrays: [Extent; 5],
}

/// What the layout of an index file follows from: its counts.
#[derive(Clone, Copy, Debug)]
pub(super) struct Shape {
    pub num_objects: u32,
    pub keyword_space: u32,
    pub num_postings: u64,
    pub max_object_len: u32,
    pub num_blocks: u32,
    pub meta_len: u32,
}

/// Whether `head`, a file's first bytes, announce format version 1.
fn is_version_one(head: &[u8]) -> bool {
    head.len() >= 12 && &head[..8] == MAGIC && le_u32(head, 8) == super::legacy::FORMAT_VERSION
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

fn align(x: u64) -> u64 {
    x.div_ceil(ALIGN) * ALIGN
}

impl Layout {
    /// The layout of `index`'s arrays (checksums filled in by the writer).
    fn of(index: &InvertedIndex, meta_len: u32) -> Self {
        let packed = index.postings.packed().is_some();
        Self::sized(
            Shape {
                num_objects: index.num_objects,
                keyword_space: index.keyword_space,
                num_postings: index.postings.len() as u64,
                max_object_len: index.max_object_len,
                num_blocks: index.block_starts.len() as u32,
                meta_len,
            },
            if packed { FLAG_PACKED } else { 0 },
            index.postings.bytes(),
        )
    }

    /// The layout of an index of this shape (checksums filled in by the writer).
    fn new(shape: Shape) -> Self {
        Self::sized(shape, 0, shape.num_postings * 4)
    }

    /// The layout of an index of this shape with these flags and List Array bytes.
    fn sized(shape: Shape, flags: u32, list_bytes: u64) -> Self {
        let sizes = [
            (u64::from(shape.keyword_space) + 1) * 8,
            list_bytes,
            u64::from(shape.num_blocks) * 4,
            u64::from(shape.num_blocks) * 4,
            u64::from(shape.meta_len),
        ];
        let mut at = ALIGN;
        let arrays = sizes.map(|bytes| {
            let e = Extent { at, bytes, sum: 0 };
            at = align(at + bytes);
            e
        });
        Self {
            flags,
            num_objects: shape.num_objects,
            keyword_space: shape.keyword_space,
            num_postings: shape.num_postings,
            max_object_len: shape.max_object_len,
            num_blocks: shape.num_blocks,
            meta_len: shape.meta_len,
            chunk_log2: CHUNK_LOG2,
            arrays,
        }
    }

    /// The header page.
    fn header(&self) -> Vec<u8> {
        let mut h = Vec::with_capacity(ALIGN as usize);
        h.extend_from_slice(MAGIC);
        for v in [
            FORMAT_VERSION,
            self.flags,
            self.num_objects,
            self.keyword_space,
        ] {
            h.extend_from_slice(&v.to_le_bytes());
        }
        h.extend_from_slice(&self.num_postings.to_le_bytes());
        for v in [
            self.max_object_len,
            self.num_blocks,
            self.meta_len,
            self.chunk_log2,
        ] {
            h.extend_from_slice(&v.to_le_bytes());
        }
        for e in &self.arrays {
            for v in [e.at, e.bytes, e.sum] {
                h.extend_from_slice(&v.to_le_bytes());
            }
        }
        debug_assert_eq!(h.len(), HEAD);
        let sum = xxh3_64(&h);
        h.extend_from_slice(&sum.to_le_bytes());
        h.resize(ALIGN as usize, 0);
        h
    }

    /// The end of the last array: the file's length.
    fn end(&self) -> u64 {
        let m = &self.arrays[4];
        m.at + m.bytes
    }

    /// Parses and checks the header page at the start of a file of `len` bytes (`head`: its
    /// first page, or all of it when shorter); the error says what is wrong.
    fn parse(head: &[u8], len: u64) -> std::result::Result<Self, String> {
        if head.len() < 8 || &head[..8] != MAGIC {
            return Err("not a genie index file (bad magic)".into());
        }
        if (head.len() as u64) < ALIGN.min(len) || len < ALIGN {
            return Err(format!(
                "truncated: {len} bytes, the header alone takes {ALIGN}"
            ));
        }
        let version = le_u32(head, 8);
        if version != FORMAT_VERSION {
            return Err(format!(
                "format version {version}, this build reads versions 1 and {FORMAT_VERSION}"
            ));
        }
        if xxh3_64(&head[..HEAD]) != le_u64(head, HEAD) {
            return Err("header checksum mismatch: the file is corrupted".into());
        }
        if head[HEAD + 8..ALIGN as usize].iter().any(|&b| b != 0) {
            return Err("bytes after the header are not zero: the file is corrupted".into());
        }
        let flags = le_u32(head, 12);
        if flags & !FLAG_PACKED != 0 {
            return Err(format!(
                "flags {flags:#x}: this build knows only {FLAG_PACKED:#x} (a packed List Array)"
            ));
        }
        let mut arrays = [Extent {
            at: 0,
            bytes: 0,
            sum: 0,
        }; 5];
        for (i, e) in arrays.iter_mut().enumerate() {
            let at = 48 + 24 * i;
            *e = Extent {
                at: le_u64(head, at),
                bytes: le_u64(head, at + 8),
                sum: le_u64(head, at + 16),
            };
        }
        let l = Self {
            flags,
            num_objects: le_u32(head, 16),
            keyword_space: le_u32(head, 20),
            num_postings: le_u64(head, 24),
            max_object_len: le_u32(head, 32),
            num_blocks: le_u32(head, 36),
            meta_len: le_u32(head, 40),
            chunk_log2: le_u32(head, 44),
            arrays,
        };
        if !(12..=40).contains(&l.chunk_log2) {
            return Err(format!("a checksum chunk of 2^{} bytes", l.chunk_log2));
        }
        let packed_bytes = l.arrays[1].bytes;
        let want = [
            (u64::from(l.keyword_space) + 1).checked_mul(8),
            if l.packed() {
                // whole words; `PackedPostings::from_words` checks the rest
                Some(packed_bytes).filter(|b| b % 4 == 0)
            } else {
                l.num_postings.checked_mul(4)
            },
            Some(u64::from(l.num_blocks) * 4),
            Some(u64::from(l.num_blocks) * 4),
            Some(u64::from(l.meta_len)),
        ];
        let mut at = ALIGN;
        for ((e, want), name) in l.arrays.iter().zip(want).zip(ARRAYS) {
            if Some(e.bytes) != want || e.at != at {
                return Err(format!("the header's {name} does not match its sizes"));
            }
            at =
                e.at.checked_add(e.bytes)
                    .map(align)
                    .ok_or("header sizes overflow")?;
        }
        let end = l.end();
        if len < end {
            return Err(format!("truncated: {len} bytes, header says {end}"));
        }
        if len > end {
            return Err(format!("{} trailing bytes after the index", len - end));
        }
        Ok(l)
    }

    /// Whether the List Array is packed.
    fn packed(&self) -> bool {
        self.flags & FLAG_PACKED != 0
    }

    /// Checks every array of the whole file `bytes` (and the zeros between them); returns the
    /// largest posting of a plain List Array (`None` for a packed one, whose words are not ids).
    fn verify(&self, bytes: &[u8]) -> std::result::Result<Option<u32>, String> {
        let mut largest = None;
        let plain = !self.packed();
        let mut gap_from = ALIGN as usize;
        for (i, (e, name)) in self.arrays.iter().zip(ARRAYS).enumerate() {
            let (at, end) = (e.at as usize, (e.at + e.bytes) as usize);
            if bytes[gap_from..at].iter().any(|&b| b != 0) {
                return Err(format!(
                    "bytes before the {name} are not zero: the file is corrupted"
                ));
            }
            let (sum, max) = checksum(&bytes[at..end], self.chunk_log2, i == 1 && plain);
            if sum != e.sum {
                return Err(format!("{name} checksum mismatch: the file is corrupted"));
            }
            if i == 1 && plain {
                largest = Some(max);
            }
            gap_from = end;
        }
        Ok(largest)
    }

    /// The index over the checked file `bytes`: its big arrays mapped in place when `map` is
    /// the file's mapping, else copied.
    fn index(
        &self,
        bytes: &[u8],
        map: Option<&Arc<Mmap>>,
    ) -> std::result::Result<InvertedIndex, String> {
        fn section<T: Word>(
            bytes: &[u8],
            map: Option<&Arc<Mmap>>,
            e: &Extent,
        ) -> std::result::Result<Section<T>, String> {
            let (at, n) = (e.at as usize, e.bytes as usize);
            match map {
                Some(map) => Section::mapped(map, at, n)
                    .ok_or_else(|| "an array not aligned for its words".to_string()),
                None => Ok(words(&bytes[at..at + n]).into()),
            }
        }
        let [offsets, postings, starts, maxima, meta] = &self.arrays;
        let metadata =
            std::str::from_utf8(&bytes[meta.at as usize..(meta.at + meta.bytes) as usize])
                .map_err(|_| "metadata is not UTF-8")?
                .to_string();
        Ok(InvertedIndex {
            num_objects: self.num_objects,
            keyword_space: self.keyword_space,
            offsets: section(bytes, map, offsets)?,
            postings: if self.packed() {
                crate::packed::PackedPostings::from_words(
                    section(bytes, map, postings)?,
                    self.num_postings,
                )
                .map_err(|e| format!("packed list array: {e}"))?
                .into()
            } else {
                section::<u32>(bytes, map, postings)?.into()
            },
            block_starts: words(&bytes[starts.at as usize..(starts.at + starts.bytes) as usize]),
            block_max: words(&bytes[maxima.at as usize..(maxima.at + maxima.bytes) as usize]),
            max_object_len: self.max_object_len,
            metadata,
        })
    }
}

/// An index file written in file order while the index is still being built ([`super::build`]):
/// a placeholder for the header page, then each array's bytes, in as many pieces as the caller
/// likes, with the zeros before it; the header, with the checksums the caller took, is written
/// last. Whole or not at all like every file genie writes ([`crate::atomic`]): the file appears
/// under its name only at [`IndexWriter::finish`], and one dropped before is removed.
#[derive(Debug)]
pub(super) struct IndexWriter {
    path: PathBuf,
    file: AtomicFile,
    layout: Layout,
    /// The array being written (its index in [`ARRAYS`]) and its bytes written so far.
    array: usize,
    filled: u64,
    /// Bytes written.
    pos: u64,
    /// Time spent in writes.
    pub(super) writing: Duration,
    /// Writes fail once the file would pass this many bytes (a full disk, in tests).
    #[cfg(test)]
    pub(super) fail_past: Option<u64>,
}

impl IndexWriter {
    /// Starts `file` (to be `path`) as the index file of this shape: the header's placeholder.
    pub(super) fn new(path: &Path, mut file: AtomicFile, shape: Shape) -> Result<Self> {
        let t = Instant::now();
        file.write_all(&[0; ALIGN as usize]).map_err(io_err(path))?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
            layout: Layout::new(shape),
            array: 0,
            filled: 0,
            pos: ALIGN,
            writing: t.elapsed(),
            #[cfg(test)]
            fail_past: None,
        })
    }

    /// The file's length once written.
    pub(super) fn len(&self) -> u64 {
        self.layout.end()
    }

    /// Appends the next `bytes` of array `array` (its index in file order: position map, list
    /// array, block starts, block maxima, metadata); the arrays before it must be complete.
    pub(super) fn append(&mut self, array: usize, bytes: &[u8]) -> Result<()> {
        while self.array < array {
            self.next_array()?;
        }
        let e = self.layout.arrays[self.array];
        if array != self.array || self.filled + bytes.len() as u64 > e.bytes {
            return Err(GenieError::Internal(format!(
                "index file writer: {} bytes of the {} do not follow the bytes written",
                bytes.len(),
                ARRAYS.get(array).unwrap_or(&"unknown array")
            )));
        }
        self.write(bytes)?;
        self.filled += bytes.len() as u64;
        Ok(())
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        #[cfg(test)]
        if self
            .fail_past
            .is_some_and(|limit| self.pos + bytes.len() as u64 > limit)
        {
            return Err(io_err(&self.path)(std::io::Error::other(
                "disk full (a test)",
            )));
        }
        let t = Instant::now();
        self.file.write_all(bytes).map_err(io_err(&self.path))?;
        self.writing += t.elapsed();
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Checks that the current array is complete and moves to the next, writing the zeros before it.
    fn next_array(&mut self) -> Result<()> {
        let e = self.layout.arrays[self.array];
        if self.filled != e.bytes {
            return Err(GenieError::Internal(format!(
                "index file writer: the {} has {} of its {} bytes",
                ARRAYS[self.array], self.filled, e.bytes
            )));
        }
        let next = self.layout.arrays[self.array + 1];
        self.write(&[0; ALIGN as usize][..(next.at - (e.at + e.bytes)) as usize])?;
        self.array += 1;
        self.filled = 0;
        Ok(())
    }

    /// Writes the header with the arrays' checksums `sums` (in file order), flushes the file to
    /// disk and renames it over the destination; returns how long the sync and rename took.
    pub(super) fn finish(mut self, sums: [u64; 5]) -> Result<Duration> {
        while self.array < ARRAYS.len() - 1 {
            self.next_array()?;
        }
        let last = self.layout.arrays[self.array];
        if self.filled != last.bytes {
            return Err(GenieError::Internal(format!(
                "index file writer: the {} has {} of its {} bytes",
                ARRAYS[self.array], self.filled, last.bytes
            )));
        }
        debug_assert_eq!(self.pos, self.layout.end());
        for (e, sum) in self.layout.arrays.iter_mut().zip(sums) {
            e.sum = sum;
        }
        let path = self.path;
        self.file
            .write_at(0, &self.layout.header())
            .map_err(io_err(&path))?;
        let t = Instant::now();
        self.file.commit().map_err(io_err(&path))?;
        Ok(t.elapsed())
    }
}

/// Little-endian words decoded from `bytes` (whole words).
fn words<T: Word>(bytes: &[u8]) -> Vec<T> {
    let n = std::mem::size_of::<T>();
    let len = bytes.len() / n;
    let mut out = vec![T::zeroed(); len];
    bytemuck::cast_slice_mut::<T, u8>(&mut out).copy_from_slice(&bytes[..len * n]);
    if cfg!(target_endian = "big") {
        for w in bytemuck::cast_slice_mut::<T, u8>(&mut out).chunks_mut(n) {
            w.reverse();
        }
    }
    out
}

impl InvertedIndex {
    /// Serializes the index to bytes (the file format above).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.to_bytes_with(&self.metadata)
    }

    /// As [`InvertedIndex::to_bytes`] with `metadata` in place of the index's own (a plugin that
    /// settles its metadata after building, e.g. parameters tuned on the built index).
    pub fn to_bytes_with(&self, metadata: &str) -> Vec<u8> {
        let mut out = Vec::new();
        // writing to a vector does not fail
        let _ = self.write_to(&mut out, metadata);
        out
    }

    /// Writes the file format to `w`, an array at a time.
    fn write_to(&self, w: &mut impl Write, metadata: &str) -> std::io::Result<()> {
        let meta_len = u32::try_from(metadata.len())
            .map_err(|_| std::io::Error::other("metadata of 4 GiB or more"))?;
        let mut layout = Layout::of(self, meta_len);
        let list: &[u32] = match self.postings.packed() {
            Some(p) => p.words(),
            None => &self.postings,
        };
        let arrays: [&[u8]; 5] = [
            le_bytes(&self.offsets),
            le_bytes(list),
            le_bytes(&self.block_starts),
            le_bytes(&self.block_max),
            metadata.as_bytes(),
        ];
        for (e, a) in layout.arrays.iter_mut().zip(&arrays) {
            e.sum = checksum(a, CHUNK_LOG2, false).0;
        }
        w.write_all(&layout.header())?;
        let zeros = [0u8; ALIGN as usize];
        let mut pos = ALIGN;
        for (e, a) in layout.arrays.iter().zip(&arrays) {
            w.write_all(&zeros[..(e.at - pos) as usize])?;
            w.write_all(a)?;
            pos = e.at + e.bytes;
        }
        Ok(())
    }

    /// Writes the index to `path`, whole or not at all ([`crate::atomic`]).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        self.save_with_metadata(path, &self.metadata)
    }

    /// As [`InvertedIndex::save`] with `metadata` in place of the index's own.
    pub fn save_with_metadata(&self, path: impl AsRef<Path>, metadata: &str) -> Result<()> {
        let path = path.as_ref();
        let t = std::time::Instant::now();
        let mut f = AtomicFile::create(path).map_err(io_err(path))?;
        self.write_to(&mut f, metadata).map_err(io_err(path))?;
        let written = t.elapsed().as_secs_f64() * 1e3;
        f.commit().map_err(io_err(path))?;
        log::debug!(
            "saved {}: written in {written:.0} ms, on disk (sync and rename) {:.0} ms later",
            path.display(),
            t.elapsed().as_secs_f64() * 1e3 - written
        );
        Ok(())
    }

    /// Opens an index file: a version-2 file is memory-mapped, every byte checked in parallel
    /// before it is returned, and its List Array and Position Map used in place; a version-1
    /// file is read into memory. The errors are [`InvertedIndex::from_bytes`]'s, naming the file.
    ///
    /// The file must not be changed while the index is in use (the usual condition of a
    /// mapping; genie replaces files by renaming a new one over them, which leaves a mapped one
    /// intact).
    pub fn load(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let mut file = File::open(path).map_err(io_err(path))?;
        let len = file.metadata().map_err(io_err(path))?.len();
        let mut head = [0u8; 12];
        let got = (&file).take(12).read(&mut head).map_err(io_err(path))?;
        if is_version_one(&head[..got]) {
            file.seek(std::io::SeekFrom::Start(0))
                .map_err(io_err(path))?;
            return Self::load_v1(path, file);
        }
        if len < ALIGN {
            // too short to map usefully: the same checks on its bytes
            let bytes = std::fs::read(path).map_err(io_err(path))?;
            return Self::from_bytes(&bytes).map_err(|reason| bad(path, reason));
        }
        // SAFETY: the mapping is read only; genie never writes an index file in place, and a
        // file changed by someone else while mapped is the documented misuse above.
        let map = Arc::new(unsafe { Mmap::map(&file) }.map_err(io_err(path))?);
        let opened = std::time::Instant::now();
        let layout = Layout::parse(&map[..ALIGN as usize], len).map_err(|r| bad(path, r))?;
        let largest = layout.verify(&map).map_err(|r| bad(path, r))?;
        let index = layout.index(&map, Some(&map)).map_err(|r| bad(path, r))?;
        index.check_structure(largest).map_err(|r| bad(path, r))?;
        log::debug!(
            "mapped and checked {} ({:.1} MB) in {:.1} ms",
            path.display(),
            len as f64 / 1e6,
            opened.elapsed().as_secs_f64() * 1e3
        );
        Ok(index)
    }

    /// The format version the first bytes of an index file announce (for `genie info`; nothing
    /// else of the file is read or checked).
    pub fn format_version(path: impl AsRef<Path>) -> Result<u32> {
        let path = path.as_ref();
        let mut head = [0u8; 12];
        let got = File::open(path)
            .and_then(|f| f.take(12).read(&mut head))
            .map_err(io_err(path))?;
        if got < 12 || &head[..8] != MAGIC {
            return Err(bad(path, "not a genie index file (bad magic)"));
        }
        Ok(le_u32(&head, 8))
    }

    /// What a version-2 file's header announces, `(num_objects, keyword_space, num_postings,
    /// metadata)`, read from the header and the metadata's bytes and not checked (for estimates
    /// made before the file is opened, such as `genie search --device auto`'s); `None` for
    /// anything else.
    pub fn peek(path: impl AsRef<Path>) -> Option<(u32, u32, u64, String)> {
        use std::io::{Seek, SeekFrom};
        let mut head = [0u8; HEAD];
        let mut f = File::open(path.as_ref()).ok()?;
        f.read_exact(&mut head).ok()?;
        if &head[..8] != MAGIC || le_u32(&head, 8) != FORMAT_VERSION {
            return None;
        }
        let word = |at: usize| u64::from_le_bytes(head[at..at + 8].try_into().unwrap_or([0; 8]));
        // the metadata is the last array: its offset and length
        let (offset, bytes) = (word(48 + 4 * 24), word(48 + 4 * 24 + 8));
        let mut metadata = vec![0u8; usize::try_from(bytes).ok()?.min(1 << 20)];
        f.seek(SeekFrom::Start(offset)).ok()?;
        f.read_exact(&mut metadata).ok()?;
        Some((
            le_u32(&head, 16),
            le_u32(&head, 20),
            word(24),
            String::from_utf8(metadata).ok()?,
        ))
    }

    /// Parses the file format (either version) from its bytes, into memory; the error is a
    /// description of what is wrong.
    pub fn from_bytes(bytes: &[u8]) -> std::result::Result<Self, String> {
        if is_version_one(bytes) {
            return Self::from_bytes_v1(bytes);
        }
        let head = &bytes[..bytes.len().min(ALIGN as usize)];
        let layout = Layout::parse(head, bytes.len() as u64)?;
        let largest = layout.verify(bytes)?;
        let index = layout.index(bytes, None)?;
        index.check_structure(largest)?;
        Ok(index)
    }
}

/// The bytes of little-endian words (this build runs on little-endian machines only for
/// writing; see [`Section`]).
pub(super) fn le_bytes<T: Word>(w: &[T]) -> &[u8] {
    bytemuck::cast_slice(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IndexBuilder;

    fn sample(n: u32) -> InvertedIndex {
        let mut b = IndexBuilder::new()
            .blocks(vec![0, 40])
            .metadata("{\"k\":1}");
        for i in 0..n {
            b.push_object(&[i % 7, 40 + i % 300, 400 + i % 5000])
                .expect("test setup");
        }
        b.build().expect("test setup")
    }

    #[test]
    fn arrays_lie_at_page_boundaries_and_round_trip() {
        let idx = sample(3000);
        let bytes = idx.to_bytes();
        let l = Layout::parse(&bytes[..ALIGN as usize], bytes.len() as u64).expect("test setup");
        assert!(l.arrays.iter().all(|e| e.at % ALIGN == 0));
        assert_eq!(InvertedIndex::from_bytes(&bytes).expect("test setup"), idx);
        let dir = tempfile::tempdir().expect("test setup");
        let path = dir.path().join("i.genie");
        idx.save(&path).expect("test setup");
        assert_eq!(std::fs::read(&path).expect("test setup"), bytes);
        let mapped = InvertedIndex::load(&path).expect("test setup");
        assert!(mapped.postings.is_mapped() && mapped.offsets.is_mapped());
        assert_eq!(mapped, idx);
        assert_eq!(
            InvertedIndex::format_version(&path).expect("test setup"),
            FORMAT_VERSION
        );
    }

    #[test]
    fn a_packed_list_array_round_trips_mapped_and_smaller() {
        let idx = sample(3000);
        let packed = idx.clone().into_packed();
        assert!(packed.list_array().packed().is_some());
        assert!(packed.bits_per_posting() < 32.0);
        let bytes = packed.to_bytes();
        assert!(bytes.len() < idx.to_bytes().len());
        assert_eq!(le_u32(&bytes, 12), FLAG_PACKED);
        let read = InvertedIndex::from_bytes(&bytes).expect("test setup");
        assert!(read.list_array().packed().is_some());
        assert_eq!(read, idx);
        let dir = tempfile::tempdir().expect("test setup");
        let path = dir.path().join("p.genie");
        packed.save(&path).expect("test setup");
        let mapped = InvertedIndex::load(&path).expect("test setup");
        assert!(mapped.postings.is_mapped());
        // read by lists without unpacking, then whole
        assert_eq!(&*mapped.list_of(41), idx.postings_of(41));
        assert_eq!(mapped.postings(), idx.postings());
        assert_eq!(mapped.clone().into_unpacked().to_bytes(), idx.to_bytes());
    }

    #[test]
    fn a_packed_list_array_with_a_posting_past_the_objects_is_refused() {
        let idx = sample(300).into_packed();
        let mut bytes = idx.to_bytes();
        let l = Layout::parse(&bytes[..ALIGN as usize], bytes.len() as u64).expect("test setup");
        // raise the first block's base past every object, and mend the checksums
        let at = l.arrays[1].at as usize;
        bytes[at..at + 4].copy_from_slice(&1_000_000u32.to_le_bytes());
        let mut fixed = l.clone();
        let list = &bytes[at..at + l.arrays[1].bytes as usize];
        fixed.arrays[1].sum = checksum(list, CHUNK_LOG2, false).0;
        bytes[..ALIGN as usize].copy_from_slice(&fixed.header());
        let err = InvertedIndex::from_bytes(&bytes).expect_err("a posting past the objects");
        assert!(err.contains("beyond"), "{err}");
        // an unknown flag
        let mut odd = idx.to_bytes();
        let mut l2 = Layout::parse(&odd[..ALIGN as usize], odd.len() as u64).expect("test setup");
        l2.flags = 2;
        odd[..ALIGN as usize].copy_from_slice(&l2.header());
        let err = InvertedIndex::from_bytes(&odd).expect_err("an unknown flag");
        assert!(err.contains("flags"), "{err}");
    }

    #[test]
    fn version_one_files_are_still_read() {
        let idx = sample(500);
        let v1 = idx.to_bytes_v1();
        assert_eq!(InvertedIndex::from_bytes(&v1).expect("test setup"), idx);
        let dir = tempfile::tempdir().expect("test setup");
        let path = dir.path().join("old.genie");
        std::fs::write(&path, &v1).expect("test setup");
        let loaded = InvertedIndex::load(&path).expect("test setup");
        assert!(!loaded.postings.is_mapped());
        assert_eq!(loaded, idx);
        assert_eq!(InvertedIndex::format_version(&path).expect("test setup"), 1);
    }
}
