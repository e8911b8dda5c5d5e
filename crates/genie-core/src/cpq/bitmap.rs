//! The Bitmap Counter (paper section III-C, Fig. 5): `b` bits per object packed in 32-bit words,
//! `b` the next power of two at or above the bits the count bound needs, so a field never carries
//! into its neighbour and a plain atomic add on the word updates one field.

use std::sync::atomic::{AtomicU32, Ordering};

/// Bits per counter for a count bound: 1, 2, 4, 8, 16 or 32.
pub fn bits_for_bound(bound: u32) -> u32 {
    let needed = 32 - bound.leading_zeros();
    needed.max(1).next_power_of_two()
}

/// Words of a bitmap for `n` objects at `bits` bits each.
pub fn words_for(n: u32, bits: u32) -> usize {
    (u64::from(n) * u64::from(bits)).div_ceil(32) as usize
}

/// A bitmap counter over `n` objects.
#[derive(Debug)]
pub struct BitmapCounter {
    bits: u32,
    words: Vec<AtomicU32>,
}

impl BitmapCounter {
    /// A zeroed counter for `n` objects and count bound `bound`.
    pub fn new(n: u32, bound: u32) -> Self {
        let bits = bits_for_bound(bound);
        Self {
            bits,
            words: (0..words_for(n, bits)).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    /// Bits per object.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    fn locate(&self, id: u32) -> (usize, u32, u32) {
        let per_word = 32 / self.bits;
        let word = (id / per_word) as usize;
        let shift = (id % per_word) * self.bits;
        let mask = if self.bits == 32 {
            u32::MAX
        } else {
            (1 << self.bits) - 1
        };
        (word, shift, mask)
    }

    /// Adds `w` to `id`'s count; returns the count before and after. The caller keeps counts
    /// within the bound, so the field cannot overflow into its neighbour.
    pub fn add(&self, id: u32, w: u32) -> (u32, u32) {
        let (word, shift, mask) = self.locate(id);
        let old = (self.words[word].fetch_add(w << shift, Ordering::Relaxed) >> shift) & mask;
        (old, old + w)
    }

    /// The count of `id`.
    pub fn get(&self, id: u32) -> u32 {
        let (word, shift, mask) = self.locate(id);
        (self.words[word].load(Ordering::Relaxed) >> shift) & mask
    }

    /// Ids in `[0, n)` whose count equals `value` (at least 1), ascending, at most `limit` of them:
    /// the deterministic tie fill of the extraction.
    pub fn scan_equal(&self, value: u32, n: u32, limit: usize, out: &mut Vec<u32>) {
        let per_word = 32 / self.bits;
        let mask = if self.bits == 32 {
            u32::MAX
        } else {
            (1 << self.bits) - 1
        };
        let mut taken = 0;
        for (wi, word) in self.words.iter().enumerate() {
            let w = word.load(Ordering::Relaxed);
            if w == 0 {
                continue;
            }
            for j in 0..per_word {
                if (w >> (j * self.bits)) & mask == value {
                    let id = wi as u32 * per_word + j;
                    if id >= n || taken == limit {
                        return;
                    }
                    out.push(id);
                    taken += 1;
                }
            }
        }
    }

    /// Sets every count to zero (reuse between queries).
    pub fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w.get_mut() = 0);
    }
}
