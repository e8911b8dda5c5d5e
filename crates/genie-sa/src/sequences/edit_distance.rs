//! Edit distance (Levenshtein: unit-cost insertions, deletions and substitutions) for the
//! verification of sequence candidates (paper section V-A.2, Algorithm 2).
//!
//! [`Pattern`] holds a query's bit vectors once and computes the distance to many candidates with
//! Myers' bit-parallel algorithm (G. Myers, "A fast bit-vector algorithm for approximate string
//! matching based on dynamic programming", J. ACM 1999), in the global form of H. Hyyrö
//! ("Explaining and extending the bit-parallel approximate string matching algorithm of Myers",
//! 2001): one 64-bit word per column for a query of up to 64 symbols, and blocks of 64 rows chained
//! by their horizontal deltas beyond that, so a candidate of length `l` costs `O(ceil(m / 64) * l)`
//! word operations. [`edit_distance_dp`] is the textbook dynamic program, the tests' oracle.

/// A query prepared for bit-parallel edit distance.
#[derive(Clone, Debug)]
pub struct Pattern {
    len: usize,
    blocks: usize,
    /// `small[s * blocks + b]`: the match mask of symbol `s < 256` in block `b`.
    small: Vec<u64>,
    /// Symbols `>= 256`, sorted, with the offset of their masks in `large_masks`.
    large: Vec<u32>,
    large_masks: Vec<u64>,
}

impl Pattern {
    /// Prepares `symbols` as the pattern.
    pub fn new(symbols: &[u32]) -> Self {
        let len = symbols.len();
        let blocks = len.div_ceil(64).max(1);
        let mut small = vec![0u64; 256 * blocks];
        let mut large: Vec<u32> = symbols.iter().copied().filter(|&s| s >= 256).collect();
        large.sort_unstable();
        large.dedup();
        let mut large_masks = vec![0u64; large.len() * blocks];
        for (i, &s) in symbols.iter().enumerate() {
            let (b, bit) = (i / 64, 1u64 << (i % 64));
            if s < 256 {
                small[s as usize * blocks + b] |= bit;
            } else if let Ok(j) = large.binary_search(&s) {
                large_masks[j * blocks + b] |= bit;
            }
        }
        Self {
            len,
            blocks,
            small,
            large,
            large_masks,
        }
    }

    /// The number of symbols of the pattern.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the pattern is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn masks(&self, s: u32) -> Option<&[u64]> {
        let b = self.blocks;
        if s < 256 {
            let at = s as usize * b;
            return Some(&self.small[at..at + b]);
        }
        let j = self.large.binary_search(&s).ok()?;
        Some(&self.large_masks[j * b..(j + 1) * b])
    }

    /// The edit distance between the pattern and `text` (given as its symbols).
    pub fn distance(&self, text: impl IntoIterator<Item = u32>) -> u32 {
        if self.len == 0 {
            return text.into_iter().count() as u32;
        }
        if self.blocks == 1 {
            self.distance_one_word(text)
        } else {
            self.distance_blocks(text)
        }
    }

    fn distance_one_word(&self, text: impl IntoIterator<Item = u32>) -> u32 {
        let high = 1u64 << (self.len - 1);
        let (mut pv, mut mv) = (!0u64, 0u64);
        let mut score = self.len as u32;
        for s in text {
            let eq = self.masks(s).map_or(0, |m| m[0]);
            let (hout, npv, nmv) = advance(pv, mv, eq, 1, high);
            (pv, mv) = (npv, nmv);
            score = score.wrapping_add_signed(hout);
        }
        score
    }

    fn distance_blocks(&self, text: impl IntoIterator<Item = u32>) -> u32 {
        let last = self.blocks - 1;
        let last_high = 1u64 << ((self.len - 1) % 64);
        let mut pv = vec![!0u64; self.blocks];
        let mut mv = vec![0u64; self.blocks];
        let mut score = self.len as u32;
        for s in text {
            let masks = self.masks(s);
            // the first row of the table grows by one per column: carry +1 into block 0
            let mut h = 1i32;
            for b in 0..self.blocks {
                let eq = masks.map_or(0, |m| m[b]);
                let high = if b == last { last_high } else { 1 << 63 };
                let (hout, npv, nmv) = advance(pv[b], mv[b], eq, h, high);
                (pv[b], mv[b]) = (npv, nmv);
                h = hout;
            }
            score = score.wrapping_add_signed(h);
        }
        score
    }
}

/// One column step of one block (Myers 1999, `advance_block`, with the carry-in `hin` of the
/// horizontal delta at the block's top row): returns the horizontal delta at row `high` and the
/// new vertical delta vectors.
#[inline]
fn advance(pv: u64, mv: u64, mut eq: u64, hin: i32, high: u64) -> (i32, u64, u64) {
    let xv = eq | mv;
    if hin < 0 {
        eq |= 1;
    }
    let xh = (((eq & pv).wrapping_add(pv)) ^ pv) | eq;
    let mut ph = mv | !(xh | pv);
    let mut mh = pv & xh;
    let hout = if ph & high != 0 {
        1
    } else if mh & high != 0 {
        -1
    } else {
        0
    };
    ph <<= 1;
    mh <<= 1;
    if hin < 0 {
        mh |= 1;
    } else if hin > 0 {
        ph |= 1;
    }
    (hout, mh | !(xv | ph), ph & xv)
}

/// The edit distance of two symbol sequences (bit-parallel, the shorter one as the pattern).
///
/// ```
/// use genie_sa::sequences::edit_distance::edit_distance;
/// let sym = |s: &str| s.chars().map(u32::from).collect::<Vec<_>>();
/// assert_eq!(edit_distance(&sym("kitten"), &sym("sitting")), 3);
/// ```
pub fn edit_distance(a: &[u32], b: &[u32]) -> u32 {
    let (p, t) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    Pattern::new(p).distance(t.iter().copied())
}

/// The edit distance by the `O(|a| * |b|)` dynamic program (the reference for tests).
pub fn edit_distance_dp(a: &[u32], b: &[u32]) -> u32 {
    let mut row: Vec<u32> = (0..=b.len() as u32).collect();
    for (i, &x) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i as u32 + 1;
        for (j, &y) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = (diag + u32::from(x != y)).min(up + 1).min(row[j] + 1);
            diag = up;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sym(s: &str) -> Vec<u32> {
        s.chars().map(u32::from).collect()
    }

    #[test]
    fn known_distances() {
        for (a, b, d) in [
            ("", "", 0),
            ("", "abc", 3),
            ("abc", "", 3),
            ("kitten", "sitting", 3),
            ("flaw", "lawn", 2),
            ("aabaab", "aabaab", 0),
            ("héllo", "hello", 1),
            ("日本語", "日本", 1),
        ] {
            assert_eq!(edit_distance(&sym(a), &sym(b)), d, "{a} {b}");
            assert_eq!(Pattern::new(&sym(a)).distance(sym(b)), d, "{a} {b}");
            assert_eq!(edit_distance_dp(&sym(a), &sym(b)), d, "{a} {b}");
        }
    }

    #[test]
    fn block_boundaries() {
        for m in [63usize, 64, 65, 127, 128, 129, 200] {
            let a: Vec<u32> = (0..m as u32).map(|i| i % 7).collect();
            let mut b = a.clone();
            b.remove(m / 2);
            b.insert(0, 9);
            b[m - 5] = 8;
            let d = edit_distance_dp(&a, &b);
            assert_eq!(Pattern::new(&a).distance(b.iter().copied()), d, "m = {m}");
            assert_eq!(Pattern::new(&b).distance(a.iter().copied()), d, "m = {m}");
        }
    }

    fn seq(max: usize) -> impl Strategy<Value = Vec<u32>> {
        // a small alphabet with large symbols mixed in, so matches are frequent
        prop::collection::vec(prop_oneof![0u32..4, Just(300u32), Just(0x10FFFF)], 0..max)
    }

    proptest! {
        #[test]
        fn myers_equals_dp(a in seq(150), b in seq(150)) {
            let d = edit_distance_dp(&a, &b);
            prop_assert_eq!(Pattern::new(&a).distance(b.iter().copied()), d);
            prop_assert_eq!(edit_distance(&a, &b), d);
        }
    }
}
