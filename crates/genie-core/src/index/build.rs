//! Parallel index build, counting-sort style (DESIGN.md section 2): objects are de-duplicated in
//! parallel, keyword counts are taken per chunk of objects, a prefix sum gives each (keyword, chunk)
//! its place, and each chunk scatters its postings there, so ids stay ascending within a keyword.

use super::checksum::{array_sum, ChunkSums};
use super::file::io_err;
use super::persist::{le_bytes, IndexWriter, Shape};
use super::sort::{
    block_maxima, count_keywords, dedup_objects, keyword_ranges, list_array_room, scatter,
    sort_postings, sort_ranges, ObjectView, SharedOut, SortChunk,
};
use super::InvertedIndex;
use crate::atomic::AtomicFile;
use crate::error::{GenieError, Result};
use crate::model::{Keyword, ObjectId};
use rayon::prelude::*;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// Largest keyword space accepted (the Position Map holds `8 * (U + 1)` bytes).
pub const MAX_KEYWORD_SPACE: u64 = 1 << 31;

/// Collects objects, then builds an [`InvertedIndex`].
///
/// ```
/// use genie_core::{IndexBuilder, Query};
/// let mut b = IndexBuilder::new();
/// b.push_object(&[1, 5, 9]).unwrap();
/// b.push_object(&[5, 9]).unwrap();
/// let index = b.build().unwrap();
/// assert_eq!(index.num_objects(), 2);
/// assert_eq!(index.postings_of(5), &[0, 1]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct IndexBuilder {
    object_starts: Vec<u64>,
    keywords: Vec<Keyword>,
    keyword_space: Option<u32>,
    block_starts: Vec<Keyword>,
    metadata: String,
}

impl IndexBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self {
            object_starts: vec![0],
            ..Self::default()
        }
    }

    /// Declares the keyword space `[0, space)` (default: largest keyword + 1). Keywords of pushed
    /// objects must lie inside it.
    pub fn keyword_space(mut self, space: u32) -> Self {
        self.keyword_space = Some(space);
        self
    }

    /// Declares keyword blocks (e.g. one per dimension): `starts` are the first keywords of the
    /// blocks, ascending. The index records per block the most keywords one object has in it, which
    /// tightens the count bound of range queries (one value per dimension gives 1 per block).
    pub fn blocks(mut self, mut starts: Vec<Keyword>) -> Self {
        starts.sort_unstable();
        starts.dedup();
        self.block_starts = starts;
        self
    }

    /// Plugin metadata stored in the index file.
    pub fn metadata(mut self, metadata: impl Into<String>) -> Self {
        self.metadata = metadata.into();
        self
    }

    /// Number of objects pushed so far.
    pub fn len(&self) -> usize {
        self.object_starts.len() - 1
    }

    /// Whether no object was pushed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds an object (a set of keywords; duplicates are removed at build) and returns its id.
    pub fn push_object(&mut self, keywords: &[Keyword]) -> Result<ObjectId> {
        let id = self.len();
        if id >= u32::MAX as usize {
            return Err(GenieError::Capacity(format!(
                "more than {} objects",
                u32::MAX
            )));
        }
        self.keywords.extend_from_slice(keywords);
        self.object_starts.push(self.keywords.len() as u64);
        Ok(id as ObjectId)
    }

    /// Adds `keywords.len() / per_object` objects of `per_object` keywords each, in order (a bulk
    /// form of [`IndexBuilder::push_object`] for generated data).
    pub fn push_fixed(&mut self, keywords: &[Keyword], per_object: usize) -> Result<()> {
        if per_object == 0 || keywords.len() % per_object != 0 {
            return Err(GenieError::InvalidParameter(format!(
                "{} keywords do not split into objects of {per_object}",
                keywords.len()
            )));
        }
        let count = keywords.len() / per_object;
        if self.len() + count >= u32::MAX as usize {
            return Err(GenieError::Capacity(format!(
                "more than {} objects",
                u32::MAX
            )));
        }
        let base = self.keywords.len() as u64;
        self.keywords.extend_from_slice(keywords);
        self.object_starts
            .extend((1..=count as u64).map(|i| base + i * per_object as u64));
        Ok(())
    }

    /// Adds the objects of a CSR pair in order: object `i` is `keywords[offsets[i]..offsets[i + 1]]`
    /// (`offsets` ascending, its last entry at most `keywords.len()`; only the keywords from
    /// `offsets[0]` on are taken). The bulk form of [`IndexBuilder::push_object`] for readers of
    /// large inputs.
    ///
    /// ```
    /// use genie_core::IndexBuilder;
    /// let mut b = IndexBuilder::new();
    /// b.push_csr(&[0, 2, 2, 3], &[4, 1, 9]).unwrap();
    /// let index = b.build().unwrap();
    /// assert_eq!(index.num_objects(), 3);
    /// assert_eq!(index.postings_of(9), &[2]);
    /// ```
    pub fn push_csr(&mut self, offsets: &[u64], keywords: &[Keyword]) -> Result<()> {
        let Some((&first, rest)) = offsets.split_first() else {
            return Err(GenieError::InvalidParameter(
                "CSR offsets need at least one entry".into(),
            ));
        };
        let last = rest.last().copied().unwrap_or(first);
        if last > keywords.len() as u64 {
            return Err(GenieError::InvalidParameter(format!(
                "CSR offset {last} lies past the {} keywords",
                keywords.len()
            )));
        }
        if let Some(w) = offsets.windows(2).find(|w| w[0] > w[1]) {
            return Err(GenieError::InvalidParameter(format!(
                "CSR offsets not ascending: {} then {}",
                w[0], w[1]
            )));
        }
        if self.len() + rest.len() >= u32::MAX as usize {
            return Err(GenieError::Capacity(format!(
                "more than {} objects",
                u32::MAX
            )));
        }
        let base = self.keywords.len() as u64;
        // copied on all cores: the source is often a mapped file, whose pages fault in as read
        // (an indexed parallel extend writes straight into the reserved room, no zeroing first)
        self.keywords
            .par_extend(keywords[first as usize..last as usize].par_iter().copied());
        self.object_starts
            .extend(rest.iter().map(|&o| base + (o - first)));
        Ok(())
    }

    /// A builder holding `keywords.len() / per_object` objects of `per_object` keywords each,
    /// taking the buffer without a copy (for large generated data).
    pub fn from_fixed(keywords: Vec<Keyword>, per_object: usize) -> Result<Self> {
        if per_object == 0 || keywords.len() % per_object != 0 {
            return Err(GenieError::InvalidParameter(format!(
                "{} keywords do not split into objects of {per_object}",
                keywords.len()
            )));
        }
        let count = keywords.len() / per_object;
        if count >= u32::MAX as usize {
            return Err(GenieError::Capacity(format!(
                "more than {} objects",
                u32::MAX
            )));
        }
        let object_starts = (0..=count as u64).map(|i| i * per_object as u64).collect();
        Ok(Self {
            object_starts,
            keywords,
            ..Self::default()
        })
    }

    /// Builds the index (parallel).
    pub fn build(self) -> Result<InvertedIndex> {
        let t = Instant::now();
        let built = self.prepare()?;
        let dedup = t.elapsed();
        let objects = built.objects();
        let (offsets, mut chunks) = count_keywords(&objects, built.space);
        let counted = t.elapsed();
        let total = offsets[built.space as usize];
        let (postings, passes) = sort_postings(&objects, &mut chunks, &offsets, sort_ranges(total));
        log::debug!(
            "index build: objects de-duplicated in {dedup:.2?}, keywords counted in {:.2?}, \
             postings sorted by keyword in {:.2?} ({passes} passes)",
            counted - dedup,
            t.elapsed() - counted,
        );
        let block_max = block_maxima(&objects, &built.block_starts);
        Ok(built.into_index(offsets, postings, block_max))
    }

    /// Builds the index and writes it to `path` while it is being built, the file byte for byte
    /// that of [`IndexBuilder::build`] then [`InvertedIndex::save`]; returns the index.
    ///
    /// The postings are sorted one keyword range at a time, and each range's part of the List
    /// Array is written (by a thread of its own) while the next range is sorted, so a large index
    /// is on disk about when its last range is sorted rather than a whole write later. Whole or
    /// not at all like [`InvertedIndex::save`]: on any error no file is left under `path`.
    ///
    /// ```
    /// use genie_core::{IndexBuilder, InvertedIndex};
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("i.genie");
    /// let mut b = IndexBuilder::new();
    /// b.push_object(&[1, 5, 9]).unwrap();
    /// b.push_object(&[5, 9]).unwrap();
    /// let index = b.build_and_save(&path).unwrap();
    /// assert_eq!(index.postings_of(5), &[0, 1]);
    /// assert_eq!(InvertedIndex::load(&path).unwrap(), index);
    /// ```
    pub fn build_and_save(self, path: impl AsRef<Path>) -> Result<InvertedIndex> {
        self.build_and_save_as(path.as_ref(), Plan::default())
    }

    /// [`IndexBuilder::build_and_save`] as `plan` says.
    fn build_and_save_as(self, path: &Path, plan: Plan) -> Result<InvertedIndex> {
        let t = Instant::now();
        // first, so that an unwritable destination fails before the work
        let file = AtomicFile::create(path).map_err(io_err(path))?;
        let built = self.prepare()?;
        let meta_len = u32::try_from(built.metadata.len())
            .map_err(|_| io_err(path)(std::io::Error::other("metadata of 4 GiB or more")))?;
        let dedup = t.elapsed();
        let objects = built.objects();
        let (offsets, mut chunks) = count_keywords(&objects, built.space);
        let counted = t.elapsed();
        let total = offsets[built.space as usize];
        let shape = Shape {
            num_objects: objects.len() as u32,
            keyword_space: built.space,
            num_postings: total,
            max_object_len: built.max_object_len,
            num_blocks: built.block_starts.len() as u32,
            meta_len,
        };
        #[allow(unused_mut)] // set up for a failure in tests
        let mut file = IndexWriter::new(path, file, shape)?;
        #[cfg(test)]
        {
            file.fail_past = plan.fail_past;
        }
        let ranges = keyword_ranges(&offsets, plan.ranges.unwrap_or(sort_ranges(total)));
        let offsets_sum = array_sum(le_bytes(&offsets));
        let mut postings = list_array_room(total as usize);
        let out = SharedOut(postings.as_mut_ptr());
        let Streamed {
            mut file,
            sorted_to,
            list_sums,
            block_max,
            times,
        } = sort_while_writing(
            &objects,
            &mut chunks,
            &offsets,
            &ranges,
            out,
            file,
            &built.block_starts,
        )?;
        if sorted_to != total {
            return Err(GenieError::Internal(format!(
                "the sort stopped at posting {sorted_to} of {total}"
            )));
        }
        // SAFETY: the passes over the keyword ranges, which cover the keyword space, wrote every
        // place of 0..total (the prefix sum of `count_keywords`).
        unsafe { postings.set_len(total as usize) };
        let list_sum = list_sums.finish(le_bytes(&postings));
        let tail: [&[u8]; 3] = [
            le_bytes(&built.block_starts),
            le_bytes(&block_max),
            built.metadata.as_bytes(),
        ];
        let mut sums = [offsets_sum, list_sum, 0, 0, 0];
        for (i, bytes) in tail.iter().enumerate() {
            file.append(2 + i, bytes)?;
            sums[2 + i] = array_sum(bytes);
        }
        let (writing, file_len) = (file.writing, file.len());
        let synced = file.finish(sums)?;
        log::debug!(
            "index build: objects de-duplicated in {dedup:.2?}, keywords counted in {:.2?}, \
             postings sorted by keyword in {:.2?} ({} passes, their checksums {:.2?}), block \
             maxima in {:.2?}",
            counted - dedup,
            times.sorting,
            ranges.len(),
            times.summing,
            times.blocks
        );
        log::debug!(
            "saved {} while building: {:.1} MB written in {:.0} ms, the writer waiting {:.0} ms \
             for the sort and the sort {:.0} ms for the writer; on disk (sync and rename) {:.0} ms \
             later, {:.2?} in all",
            path.display(),
            file_len as f64 / 1e6,
            writing.as_secs_f64() * 1e3,
            times.writer_waited.as_secs_f64() * 1e3,
            times.sort_waited.as_secs_f64() * 1e3,
            synced.as_secs_f64() * 1e3,
            t.elapsed()
        );
        Ok(built.into_index(offsets, postings, block_max))
    }

    /// De-duplicates the objects and settles the keyword space and blocks: all a build does
    /// before the sort.
    fn prepare(self) -> Result<Prepared> {
        let Self {
            object_starts,
            mut keywords,
            keyword_space,
            block_starts,
            metadata,
        } = self;
        let lens = dedup_objects(&object_starts, &mut keywords);
        let max_kw = keywords.par_iter().copied().max();
        let space = resolve_space(keyword_space, max_kw)?;
        let mut block_starts = if block_starts.first() == Some(&0) {
            block_starts
        } else {
            std::iter::once(0).chain(block_starts).collect()
        };
        block_starts.retain(|&s| s < space.max(1));
        let max_object_len = lens.par_iter().copied().max().unwrap_or(0);
        Ok(Prepared {
            object_starts,
            keywords,
            lens,
            space,
            block_starts,
            max_object_len,
            metadata,
        })
    }
}

/// How [`IndexBuilder::build_and_save`] goes about its work (tests choose).
#[derive(Clone, Copy, Debug, Default)]
struct Plan {
    /// Keyword ranges of the sort (default: [`sort_ranges`]).
    ranges: Option<usize>,
    /// Writes fail once the file would pass this many bytes (a full disk).
    #[cfg(test)]
    fail_past: Option<u64>,
}

/// The objects of a builder after de-duplication, with what the sort needs to know of them.
struct Prepared {
    object_starts: Vec<u64>,
    keywords: Vec<Keyword>,
    lens: Vec<u32>,
    space: u32,
    block_starts: Vec<Keyword>,
    max_object_len: u32,
    metadata: String,
}

impl Prepared {
    fn objects(&self) -> ObjectView<'_> {
        ObjectView {
            starts: &self.object_starts,
            lens: &self.lens,
            keywords: &self.keywords,
        }
    }

    fn into_index(
        self,
        offsets: Vec<u64>,
        postings: Vec<ObjectId>,
        block_max: Vec<u32>,
    ) -> InvertedIndex {
        InvertedIndex {
            num_objects: self.lens.len() as u32,
            keyword_space: self.space,
            offsets: offsets.into(),
            postings: postings.into(),
            block_starts: self.block_starts,
            block_max,
            max_object_len: self.max_object_len,
            metadata: self.metadata,
        }
    }
}

/// What [`sort_while_writing`] leaves: the file, written up to the List Array; how far the
/// postings are sorted (all of them unless a write failed) and their chunks' checksums so far;
/// the block maxima; the times.
struct Streamed {
    file: IndexWriter,
    sorted_to: u64,
    list_sums: ChunkSums,
    block_max: Vec<u32>,
    times: StreamTimes,
}

/// Where the time of [`sort_while_writing`] went.
struct StreamTimes {
    /// In the passes of the sort.
    sorting: Duration,
    /// In the List Array's checksums between the passes.
    summing: Duration,
    /// In the block maxima (after the sort, while the writes go on).
    blocks: Duration,
    /// The writer, waiting for the sort's next range.
    writer_waited: Duration,
    /// The sort, waiting for the writer to finish the List Array once all was sorted.
    sort_waited: Duration,
}

/// The sort of [`IndexBuilder::build_and_save`], one pass per keyword range of `ranges` (in
/// order, covering the keyword space), and the writes, on a thread of their own, of the Position
/// Map and then of each range's part of the List Array as soon as its pass ends. A write error
/// stops the sort at the next pass and is returned.
fn sort_while_writing(
    objects: &ObjectView<'_>,
    chunks: &mut [SortChunk],
    offsets: &[u64],
    ranges: &[std::ops::Range<Keyword>],
    out: SharedOut,
    file: IndexWriter,
    block_starts: &[Keyword],
) -> Result<Streamed> {
    let failed = AtomicBool::new(false);
    let failed = &failed;
    let mut sorted_to = 0;
    let mut list_sums = ChunkSums::default();
    let (mut sorting, mut summing) = (Duration::ZERO, Duration::ZERO);
    let (writer, block_max, blocks, sort_waited) = std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel::<(usize, &[u8])>();
        let writer = s.spawn(move || write_pieces(file, &rx, failed));
        // a send fails only when the writer is gone, which its join reports
        let send = |array: usize, bytes| tx.send((array, bytes)).is_ok();
        let mut sent = send(0, le_bytes(offsets));
        for keywords in ranges {
            if !sent || failed.load(Ordering::Relaxed) {
                break;
            }
            let pass = Instant::now();
            scatter(chunks, objects, out, keywords.clone());
            sorting += pass.elapsed();
            let (a, b) = (
                offsets[keywords.start as usize] as usize,
                offsets[keywords.end as usize] as usize,
            );
            sorted_to = b as u64;
            // SAFETY: the places before `b` are written (by the passes so far, over the keywords
            // below keywords.end) and no later pass writes them: the later passes write only the
            // places of larger keywords, from `b` on.
            let done = unsafe { std::slice::from_raw_parts(out.ptr().cast::<u8>(), b * 4) };
            let sum = Instant::now();
            list_sums.advance(done);
            summing += sum.elapsed();
            sent = send(1, &done[a * 4..]);
        }
        let blocks = Instant::now();
        let block_max = if failed.load(Ordering::Relaxed) {
            Vec::new()
        } else {
            block_maxima(objects, block_starts)
        };
        let blocks = blocks.elapsed();
        drop(tx);
        let waiting = Instant::now();
        let writer = writer.join();
        (writer, block_max, blocks, waiting.elapsed())
    });
    let (file, written, writer_waited) =
        writer.map_err(|_| GenieError::Internal("the index file writer panicked".into()))?;
    written?;
    Ok(Streamed {
        file,
        sorted_to,
        list_sums,
        block_max,
        times: StreamTimes {
            sorting,
            summing,
            blocks,
            writer_waited,
            sort_waited,
        },
    })
}

/// The writer thread of [`IndexBuilder::build_and_save`]: writes the pieces `(array, bytes)` as
/// they come, until the sender is dropped. After an error it sets `failed` (the sort stops) and
/// takes the remaining pieces without writing them. Returns the file, the first error and how
/// long it waited for pieces.
fn write_pieces(
    mut file: IndexWriter,
    pieces: &Receiver<(usize, &[u8])>,
    failed: &AtomicBool,
) -> (IndexWriter, Result<()>, Duration) {
    let mut result = Ok(());
    let mut waited = Duration::ZERO;
    loop {
        let t = Instant::now();
        let Ok((array, bytes)) = pieces.recv() else {
            break;
        };
        waited += t.elapsed();
        if result.is_ok() {
            result = file.append(array, bytes);
            if result.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
        }
    }
    (file, result, waited)
}

fn resolve_space(declared: Option<u32>, max_kw: Option<Keyword>) -> Result<u32> {
    let needed = max_kw.map_or(0, |k| u64::from(k) + 1);
    let space = u64::from(declared.unwrap_or(0)).max(needed);
    if let (Some(d), Some(k)) = (declared, max_kw) {
        if u64::from(k) >= u64::from(d) {
            return Err(GenieError::InvalidParameter(format!(
                "keyword {k} lies outside the declared keyword space [0, {d})"
            )));
        }
    }
    if space > MAX_KEYWORD_SPACE {
        return Err(GenieError::Capacity(format!(
            "keyword space of {space} exceeds the supported {MAX_KEYWORD_SPACE}"
        )));
    }
    Ok(space as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::ALIGN;
    use proptest::prelude::*;

    /// The builder of `objects`, with a keyword space `extra` beyond the largest keyword when
    /// given, blocks and metadata.
    fn builder(objects: &[Vec<Keyword>], extra: Option<u32>, blocks: &[Keyword]) -> IndexBuilder {
        let mut b = IndexBuilder::new()
            .blocks(blocks.to_vec())
            .metadata("{\"built_by\":\"a test\"}");
        if let Some(extra) = extra {
            let largest = objects.iter().flatten().copied().max().unwrap_or(0);
            b = b.keyword_space(largest + 1 + extra);
        }
        for o in objects {
            b.push_object(o).expect("push");
        }
        b
    }

    /// Builds `b` both ways; checks that the file written while building is the saved one, byte
    /// for byte, and that both return the same index.
    fn check_both_ways(b: IndexBuilder, plan: Plan) -> std::result::Result<(), TestCaseError> {
        let dir = tempfile::tempdir().expect("temp dir");
        let (saved, streamed) = (dir.path().join("saved.genie"), dir.path().join("s.genie"));
        let built = b.clone().build().expect("build");
        built.save(&saved).expect("save");
        let index = b
            .build_and_save_as(&streamed, plan)
            .expect("build and save");
        let want = std::fs::read(&saved).expect("read");
        let got = std::fs::read(&streamed).expect("read");
        prop_assert_eq!(got.len(), want.len());
        prop_assert!(got == want, "the files differ");
        prop_assert_eq!(&index, &built);
        prop_assert_eq!(
            std::fs::read_dir(dir.path()).expect("list").count(),
            2,
            "no temporary file stays behind"
        );
        Ok(())
    }

    /// The List Array sorted in `ranges` keyword ranges.
    fn sorted_in(b: IndexBuilder, ranges: usize) -> (Vec<u64>, Vec<ObjectId>) {
        let built = b.prepare().expect("prepare");
        let objects = built.objects();
        let (offsets, mut chunks) = count_keywords(&objects, built.space);
        let (postings, _) = sort_postings(&objects, &mut chunks, &offsets, ranges);
        (offsets, postings)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        /// The sort in any number of keyword ranges gives each keyword the ascending ids of the
        /// objects that hold it (once), whatever the objects' order and duplicates.
        #[test]
        fn a_sort_in_keyword_ranges_lists_each_keywords_objects(
            objects in prop::collection::vec(prop::collection::vec(0u32..60, 0..25), 0..150),
            ranges in prop_oneof![Just(1usize), 2usize..12, 50usize..100],
        ) {
            let (offsets, postings) = sorted_in(builder(&objects, None, &[]), ranges);
            let space = offsets.len() - 1;
            prop_assert_eq!(space as u32, objects.iter().flatten().max().map_or(0, |&k| k + 1));
            for kw in 0..space {
                let want: Vec<ObjectId> = (0..objects.len() as ObjectId)
                    .filter(|&i| objects[i as usize].contains(&(kw as Keyword)))
                    .collect();
                let got = &postings[offsets[kw] as usize..offsets[kw + 1] as usize];
                prop_assert_eq!(got, &want[..], "keyword {}", kw);
            }
        }

        /// Empty, unsorted, duplicate and single keywords, a declared keyword space larger than
        /// the keywords, blocks, one keyword range or many (more than keywords).
        #[test]
        fn build_and_save_writes_the_file_of_build_then_save(
            objects in (1u32..400).prop_flat_map(|kw| {
                prop::collection::vec(
                    prop_oneof![
                        1 => Just(Vec::new()),
                        1 => (0..kw).prop_map(|k| vec![k]),
                        6 => prop::collection::vec(0..kw, 0..14),
                    ],
                    0..90,
                )
            }),
            extra in prop_oneof![Just(None), (0u32..300).prop_map(Some)],
            blocks in prop::collection::vec(0u32..420, 0..4),
            ranges in prop_oneof![Just(None), Just(Some(1usize)), (2usize..200).prop_map(Some)],
        ) {
            check_both_ways(builder(&objects, extra, &blocks), Plan { ranges, ..Plan::default() })?;
        }
    }

    #[test]
    fn a_list_array_over_several_checksum_chunks() {
        // 40 MiB of postings: chunks of 16 MiB cut by the ranges' ends anywhere in them
        let per = 35;
        let n = 300_000u32;
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let keywords: Vec<Keyword> = (0..n as usize * per)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 5000) as Keyword
            })
            .collect();
        let b = IndexBuilder::from_fixed(keywords, per).expect("builder");
        for ranges in [Some(1), Some(7), None] {
            check_both_ways(
                b.clone(),
                Plan {
                    ranges,
                    ..Plan::default()
                },
            )
            .expect("same file");
        }
    }

    #[test]
    fn build_and_save_fails_without_a_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let objects = vec![vec![3, 1, 2], vec![], vec![7, 7]];
        // a destination in a missing directory
        let missing = dir.path().join("missing").join("i.genie");
        let e = builder(&objects, None, &[])
            .build_and_save(&missing)
            .expect_err("no directory");
        assert!(
            matches!(e, GenieError::Io { ref path, .. } if path == &missing),
            "{e}"
        );
        assert!(!missing.exists());
        // a keyword outside the declared space
        let path = dir.path().join("i.genie");
        let mut bad = IndexBuilder::new().keyword_space(5);
        bad.push_object(&[1, 9]).expect("push");
        let e = bad.build_and_save(&path).expect_err("keyword 9");
        assert!(e.to_string().contains("keyword 9"), "{e}");
        // a disk that fills in the Position Map, the List Array, the metadata
        let full = builder(&objects, Some(3), &[0, 4]).metadata("m".repeat(100));
        let len = full.clone().build().expect("build").to_bytes().len() as u64;
        for fail_past in [ALIGN, ALIGN + 20, 2 * ALIGN + 8, len - 1] {
            let plan = Plan {
                ranges: Some(3),
                fail_past: Some(fail_past),
            };
            let e = full
                .clone()
                .build_and_save_as(&path, plan)
                .expect_err("disk full");
            assert!(e.to_string().contains("disk full"), "{e}");
        }
        // an earlier file under the name stays as it was
        std::fs::write(&path, b"earlier").expect("write");
        let plan = Plan {
            ranges: Some(2),
            fail_past: Some(2 * ALIGN + 8),
        };
        assert!(full.clone().build_and_save_as(&path, plan).is_err());
        assert_eq!(std::fs::read(&path).expect("read"), b"earlier");
        assert_eq!(
            std::fs::read_dir(dir.path()).expect("list").count(),
            1,
            "no file but the earlier one"
        );
        full.build_and_save(&path).expect("room enough");
        assert_eq!(std::fs::read(&path).expect("read").len() as u64, len);
    }

    #[test]
    fn push_csr_equals_push_object() {
        let objects: [&[Keyword]; 4] = [&[4, 1], &[], &[9, 9, 2], &[7]];
        let mut one = IndexBuilder::new();
        for o in objects {
            one.push_object(o).expect("push");
        }
        // a slice of a larger CSR pair (offsets not from 0), after objects already pushed
        let keywords = [99, 99, 4, 1, 9, 9, 2, 7, 99];
        let mut csr = IndexBuilder::new();
        csr.push_csr(&[2, 4, 4], &keywords).expect("first two");
        csr.push_csr(&[4, 7, 8], &keywords).expect("last two");
        csr.push_csr(&[8], &keywords).expect("none");
        let (a, b) = (one.build().expect("build"), csr.build().expect("build"));
        assert_eq!(a.num_objects(), 4);
        for kw in 0..10 {
            assert_eq!(a.postings_of(kw), b.postings_of(kw), "keyword {kw}");
        }
        let mut bad = IndexBuilder::new();
        assert!(bad.push_csr(&[], &keywords).is_err());
        assert!(bad.push_csr(&[0, 10], &keywords).is_err());
        assert!(bad.push_csr(&[0, 3, 2], &keywords).is_err());
        assert!(bad.is_empty());
    }
}
