//! The checksums of the index file's arrays (format version 2): an array is cut into chunks of
//! `2^log2` bytes, each chunk hashed with XXH3-64, and the array's checksum is the XXH3-64 of its
//! chunks' little-endian sums, so that the chunks are hashed in parallel, at memory speed. The
//! List Array's largest posting is found in the same pass ([`sum_and_largest`]), and a build that
//! writes the file while it sorts takes the sums as the array is filled ([`ChunkSums`]).

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

/// log2 of the checksum chunk this build writes (16 MiB).
pub(super) const CHUNK_LOG2: u32 = 24;

/// The checksum of `bytes` cut into chunks of `2^log2` bytes, the chunks hashed in parallel;
/// with `max`, also the largest little-endian u32 in them (read in the same pass).
pub(super) fn checksum(bytes: &[u8], log2: u32, max: bool) -> (u64, u32) {
    let chunk = 1usize << log2;
    let sums: Vec<(u64, u32)> = bytes
        .par_chunks(chunk)
        .map(|c| {
            if max {
                sum_and_largest(c)
            } else {
                (xxh3_64(c), 0)
            }
        })
        .collect();
    let m = sums.iter().map(|&(_, m)| m).max().unwrap_or(0);
    (combine(sums.iter().map(|&(s, _)| s)), m)
}

/// The XXH3-64 of `chunk` and its largest little-endian u32 ([`largest_word`]), the chunk read
/// from memory once: hashed and scanned a cache-sized piece at a time (`load`'s pass over the
/// List Array).
pub fn sum_and_largest(chunk: &[u8]) -> (u64, u32) {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut m = 0u32;
    for piece in chunk.chunks(1 << 16) {
        h.update(piece);
        m = m.max(largest_word(piece));
    }
    (h.digest(), m)
}

/// The largest little-endian u32 of `bytes` (a trailing part word is left out): 16 running
/// maxima over 64-byte blocks, which the compiler turns into vector maxima (a single running
/// maximum over the words measured at half the hashing's speed).
pub fn largest_word(bytes: &[u8]) -> u32 {
    let word = |w: &[u8]| u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
    let mut lanes = [0u32; 16];
    let blocks = bytes.chunks_exact(64);
    let tail = blocks.remainder();
    for block in blocks {
        for (lane, w) in lanes.iter_mut().zip(block.chunks_exact(4)) {
            *lane = (*lane).max(word(w));
        }
    }
    let tail = tail.chunks_exact(4).map(word).max().unwrap_or(0);
    lanes.into_iter().max().unwrap_or(0).max(tail)
}

/// An array's checksum from its chunks' sums, in order.
fn combine(sums: impl Iterator<Item = u64>) -> u64 {
    let list: Vec<u8> = sums.flat_map(u64::to_le_bytes).collect();
    xxh3_64(&list)
}

/// The checksum of an array taken while the array is being filled from its start: each time more
/// of its first bytes are final, [`ChunkSums::advance`] hashes the chunks they complete (in
/// parallel), and [`ChunkSums::finish`] the rest. The result is [`checksum`]'s.
#[derive(Debug)]
pub(super) struct ChunkSums {
    log2: u32,
    sums: Vec<u64>,
}

impl Default for ChunkSums {
    /// The sums of the chunks this build writes.
    fn default() -> Self {
        Self::new(CHUNK_LOG2)
    }
}

impl ChunkSums {
    fn new(log2: u32) -> Self {
        Self {
            log2,
            sums: Vec::new(),
        }
    }

    /// Hashes the whole chunks of `done`, the array's first bytes (final), not hashed before.
    pub(super) fn advance(&mut self, done: &[u8]) {
        let chunk = 1usize << self.log2;
        let whole = done.len() / chunk * chunk;
        let from = self.sums.len() * chunk;
        if whole > from {
            self.sums
                .par_extend(done[from..whole].par_chunks(chunk).map(xxh3_64));
        }
    }

    /// The checksum of the whole array `all` (whose first bytes [`ChunkSums::advance`] saw).
    pub(super) fn finish(mut self, all: &[u8]) -> u64 {
        self.advance(all);
        let rest = &all[(self.sums.len() << self.log2).min(all.len())..];
        if !rest.is_empty() {
            self.sums.push(xxh3_64(rest));
        }
        combine(self.sums.into_iter())
    }
}

/// The checksum of a whole array as the file holds it (taken in parallel).
pub(super) fn array_sum(bytes: &[u8]) -> u64 {
    checksum(bytes, CHUNK_LOG2, false).0
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn largest_word_is_the_largest_whole_word(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..700),
        ) {
            let words = bytes.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
            proptest::prop_assert_eq!(largest_word(&bytes), words.max().unwrap_or(0));
        }
    }

    #[test]
    fn chunk_sums_taken_piece_by_piece_are_the_checksum() {
        let bytes: Vec<u8> = (0..50_000u32).flat_map(|w| (w * 7).to_le_bytes()).collect();
        for ends in [
            &[][..],
            &[0, 1, 4095, 4096, 4097, 100_000, 100_000][..],
            &[8192, 12_288, 199_999][..],
            &[200_000][..],
        ] {
            for len in [0, 4096, 8192, 100_001, 200_000] {
                let all = &bytes[..len];
                let mut sums = ChunkSums::new(12);
                for &end in ends.iter().filter(|&&e| e <= len) {
                    sums.advance(&all[..end]);
                }
                assert_eq!(
                    sums.finish(all),
                    checksum(all, 12, false).0,
                    "{len} bytes, {ends:?}"
                );
            }
        }
    }

    #[test]
    fn small_chunks_checksum_as_the_writer_wrote() {
        // the chunked checksum of a chunk size is a function of the bytes alone
        let bytes: Vec<u8> = (0..100_000u32).flat_map(|w| w.to_le_bytes()).collect();
        let (a, max) = checksum(&bytes, 12, true);
        assert_eq!(max, 99_999);
        assert_eq!(a, checksum(&bytes, 12, false).0);
        assert_ne!(a, checksum(&bytes, 13, false).0);
    }
}
