//! Packed postings: the List Array in blocks of [`BLOCK`] postings, each block kept as the
//! offsets of its ids from its smallest id, in as many bits as its largest offset needs (a frame
//! of reference). A posting is read at its position alone: its block's header gives the base and
//! the first word, the next header the block's width, and the value is one or two words of the
//! block's bits. So the count kernels read a packed list exactly as they read a plain one, posting
//! by posting, with no prefix sums (docs/journal/engine.md, "Packed postings").
//!
//! A list's ids ascend, so a block within one list spans about `BLOCK` times the list's mean gap:
//! on the SIFT-like shape (lists of one object in 67) 14 bits a posting and a half-bit of header,
//! 45% of the plain 32 bits. Blocks are cut at every [`BLOCK`]-th position of the whole List
//! Array, not at list boundaries: a block that holds the end of one list and the start of the next
//! spans most of the objects and takes their width, one such block a list.
//!
//! The kernels' reader (`Postings::at` in `kernels/cpq.cu`) and [`PackedPostings::get`] do the
//! same arithmetic; the tests hold the second against the plain ids. Which form a GPU holds is
//! `backend::cuda::PostingsForm`'s choice: the count reads plain ids faster, so they are packed
//! where the plain ones would crowd the device. An index file may store the packed form
//! ([`PackedPostings::words`], `genie build --postings packed`): a GPU then copies it as it is and
//! unpacks it on the device (kernel `unpack_postings`), the CPU unpacks it on all cores
//! ([`PackedPostings::unpack`], `index::ListArray`).

use super::section::Section;
use rayon::prelude::*;

/// Postings a block.
pub const BLOCK: usize = 128;

/// Blocks a task of the parallel packing.
const GROUP: usize = 1024;

/// The List Array packed in blocks (see the module's doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackedPostings {
    /// The headers, then the blocks' bits (one array, as the index file holds it):
    ///
    /// - headers, per block `b`: `[2b]` its smallest id, `[2b + 1]` its first word in the bits;
    ///   then one more pair whose word is the end of the bits. Block `b`'s width is
    ///   `([2b + 3] - [2b + 1]) / 4` bits (a block of `BLOCK` postings of `w` bits is `4 w` words);
    /// - bits: the blocks' bits, block after block; each value's low bit first, from bit `i w` of
    ///   its block (spanning two words where it crosses one).
    words: Section<u32>,
    /// Words of headers (`2 blocks + 2`).
    head: usize,
    /// Postings packed.
    len: u64,
}

/// Words of headers for `len` postings: a pair a block and the end's pair.
fn header_words(len: u64) -> Option<usize> {
    usize::try_from(len.div_ceil(BLOCK as u64).checked_mul(2)?.checked_add(2)?).ok()
}

/// Bits that hold `span` (0 for 0).
fn width(span: u32) -> u32 {
    32 - span.leading_zeros()
}

impl PackedPostings {
    /// Packs `postings` (any order within a block is kept; ascending lists pack smallest). `None`
    /// when the packed words would not be addressed by 32 bits (more than 16 GiB of them).
    pub fn pack(postings: &[u32]) -> Option<Self> {
        let blocks: Vec<(u32, u32)> = postings
            .par_chunks(BLOCK)
            .map(|b| {
                let (lo, hi) = b
                    .iter()
                    .fold((u32::MAX, 0), |(lo, hi), &x| (lo.min(x), hi.max(x)));
                (lo, width(hi - lo))
            })
            .collect();
        let mut headers = Vec::with_capacity(2 * blocks.len() + 2);
        let mut word = 0u64;
        for &(base, w) in &blocks {
            headers.push(base);
            headers.push(u32::try_from(word).ok()?);
            word += 4 * u64::from(w);
        }
        headers.push(0);
        headers.push(u32::try_from(word).ok()?);
        let head = headers.len();
        let mut words = headers;
        words.resize(head + usize::try_from(word).ok()?, 0);
        let (headers, data) = words.split_at_mut(head);
        let headers = &*headers;
        // cut `data` into the words of each group of blocks, then fill the groups in parallel
        let mut slices = Vec::with_capacity(blocks.len().div_ceil(GROUP));
        let mut rest = data;
        for g in (0..blocks.len()).step_by(GROUP) {
            let end = (g + GROUP).min(blocks.len());
            let words = (headers[2 * end + 1] - headers[2 * g + 1]) as usize;
            let (mine, tail) = rest.split_at_mut(words);
            slices.push((g, mine));
            rest = tail;
        }
        slices.into_par_iter().for_each(|(g, words)| {
            let first = headers[2 * g + 1];
            let end = (g + GROUP).min(blocks.len());
            for b in g..end {
                let (base, w) = blocks[b];
                if w == 0 {
                    continue;
                }
                let at = (headers[2 * b + 1] - first) as usize;
                let ids = &postings[b * BLOCK..((b + 1) * BLOCK).min(postings.len())];
                let out = &mut words[at..at + 4 * w as usize];
                for (i, &id) in ids.iter().enumerate() {
                    let v = id - base;
                    let bit = i as u32 * w;
                    let (wi, sh) = ((bit >> 5) as usize, bit & 31);
                    out[wi] |= v << sh;
                    if sh + w > 32 {
                        out[wi + 1] |= v >> (32 - sh);
                    }
                }
            }
        });
        Some(Self {
            words: words.into(),
            head,
            len: postings.len() as u64,
        })
    }

    /// The packed form of `len` postings held in `words` (headers, then bits, as
    /// [`PackedPostings::words`] gives them), checked so that every read stays inside: the
    /// headers' count, their words ascending from 0 in steps of whole blocks of at most 32 bits,
    /// and the last one at the end of the bits. The error says what is wrong.
    pub fn from_words(words: Section<u32>, len: u64) -> std::result::Result<Self, String> {
        let head = header_words(len)
            .filter(|&h| h <= words.len())
            .ok_or_else(|| {
                format!(
                    "{} words cannot hold the headers of {len} postings",
                    words.len()
                )
            })?;
        let headers = &words[..head];
        if headers[1] != 0 {
            return Err("the first block does not start at the first word".into());
        }
        let blocks = head / 2 - 1;
        let bad_step = (0..blocks).into_par_iter().find_any(|&b| {
            let (a, z) = (headers[2 * b + 1], headers[2 * b + 3]);
            z < a || (z - a) % 4 != 0 || z - a > 128
        });
        if let Some(b) = bad_step {
            return Err(format!(
                "block {b}'s headers do not give it a width of 0 to 32 bits"
            ));
        }
        if headers[head - 1] as usize != words.len() - head {
            return Err(format!(
                "the headers end at word {} of {} words of bits",
                headers[head - 1],
                words.len() - head
            ));
        }
        Ok(Self { words, head, len })
    }

    /// The headers, then the bits: the array the index file holds.
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// Whether the words lie in a mapped file.
    pub fn is_mapped(&self) -> bool {
        self.words.is_mapped()
    }

    /// Decodes block `b`'s postings into `out` (as many as `out` holds, at most [`BLOCK`]).
    fn decode(&self, b: usize, out: &mut [u32]) {
        let (headers, data) = (self.headers(), self.data());
        let (base, first) = (headers[2 * b], headers[2 * b + 1]);
        let w = (headers[2 * b + 3] - first) >> 2;
        if w == 0 {
            out.fill(base);
            return;
        }
        let mask = if w == 32 { u32::MAX } else { (1 << w) - 1 };
        // the bits streamed through a 64-bit window, a word read whenever fewer than `w` are left
        let words = &data[first as usize..];
        let (mut window, mut have, mut next) = (0u64, 0u32, 0usize);
        for o in out.iter_mut() {
            if have < w {
                window |= u64::from(words[next]) << have;
                next += 1;
                have += 32;
            }
            *o = base.wrapping_add(window as u32 & mask);
            window >>= w;
            have -= w;
        }
    }

    /// The postings, unpacked on all cores.
    pub fn unpack(&self) -> Vec<u32> {
        self.range(0, self.len)
    }

    /// The postings at positions `[start, end)`, unpacked (groups of blocks on all cores).
    pub fn range(&self, start: u64, end: u64) -> Vec<u32> {
        let end = end.min(self.len);
        if start >= end {
            return Vec::new();
        }
        let (b0, b1) = (
            (start / BLOCK as u64) as usize,
            end.div_ceil(BLOCK as u64) as usize,
        );
        let first = (b0 * BLOCK) as u64;
        let mut out = vec![0u32; (end - first) as usize];
        out.par_chunks_mut(BLOCK * GROUP)
            .enumerate()
            .for_each(|(g, o)| {
                for (b, o) in o.chunks_mut(BLOCK).enumerate() {
                    self.decode(b0 + g * GROUP + b, o);
                }
            });
        debug_assert!(b1 - b0 == out.len().div_ceil(BLOCK));
        out.drain(..(start - first) as usize);
        out
    }

    /// Whether any posting is `limit` or more: decoded only in the blocks whose smallest id and
    /// width allow one (few, in an index of ascending lists), on all cores.
    pub fn any_at_or_above(&self, limit: u32) -> bool {
        let headers = self.headers();
        let blocks = (self.len as usize).div_ceil(BLOCK);
        (0..blocks).into_par_iter().with_min_len(GROUP).any(|b| {
            let w = (headers[2 * b + 3] - headers[2 * b + 1]) >> 2;
            let top = u64::from(headers[2 * b]) + (1u64 << w) - 1;
            if top < u64::from(limit) {
                return false;
            }
            let mut buf = [0u32; BLOCK];
            let n = ((self.len as usize) - b * BLOCK).min(BLOCK);
            self.decode(b, &mut buf[..n]);
            buf[..n].iter().any(|&x| x >= limit)
        })
    }

    /// Postings packed.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether no posting is packed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The posting at position `p` (`p < len`), as the kernels read it.
    pub fn get(&self, p: u64) -> u32 {
        let (headers, data) = (self.headers(), self.data());
        let b = (p / BLOCK as u64) as usize;
        let (base, first) = (headers[2 * b], headers[2 * b + 1]);
        let w = (headers[2 * b + 3] - first) >> 2;
        if w == 0 {
            return base;
        }
        let bit = (p % BLOCK as u64) as u32 * w;
        let (word, sh) = ((first + (bit >> 5)) as usize, bit & 31);
        let mut v = data[word] >> sh;
        if sh + w > 32 {
            v |= data[word + 1] << (32 - sh);
        }
        if w < 32 {
            v &= (1 << w) - 1;
        }
        base.wrapping_add(v)
    }

    /// The headers: per block its smallest id and first word, then the end word.
    pub fn headers(&self) -> &[u32] {
        &self.words[..self.head]
    }

    /// The blocks' bits.
    pub fn data(&self) -> &[u32] {
        &self.words[self.head..]
    }

    /// Bytes of the packed form (headers and bits).
    pub fn bytes(&self) -> u64 {
        4 * self.words.len() as u64
    }

    /// Bits a posting, headers included (32 for the plain form).
    pub fn bits_per_posting(&self) -> f64 {
        if self.len == 0 {
            return 0.0;
        }
        8.0 * self.bytes() as f64 / self.len as f64
    }
}

/// Whether packing saves enough to be worth its slower count: at most [`PACKED_SHARE`] of the
/// plain bytes.
pub fn pays(packed: &PackedPostings) -> bool {
    packed.bytes() as f64 <= PACKED_SHARE * 4.0 * packed.len() as f64
}

/// The largest share of the plain bytes at which the packed form is used.
pub const PACKED_SHARE: f64 = 0.75;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn unpacked(p: &PackedPostings) -> Vec<u32> {
        (0..p.len()).map(|i| p.get(i)).collect()
    }

    #[test]
    fn every_width_reads_back() {
        // one block per width 0..=32: from a base up to the base plus the largest offset of w
        // bits, in even steps
        let mut ids = Vec::new();
        for w in 0..=32u32 {
            let base = if w == 32 { 0 } else { 1000 * w };
            let top = (1u64 << w) - 1;
            let last = BLOCK as u64 - 1;
            ids.extend((0..=last).map(|i| base + (i * top / last) as u32));
        }
        let p = PackedPostings::pack(&ids).unwrap();
        assert_eq!(unpacked(&p), ids);
        for w in 0..=32u32 {
            let b = w as usize;
            assert_eq!(
                (p.headers()[2 * b + 3] - p.headers()[2 * b + 1]) / 4,
                w,
                "block {b}"
            );
        }
    }

    #[test]
    fn a_part_block_and_no_block() {
        let p = PackedPostings::pack(&[]).unwrap();
        assert!(p.is_empty());
        assert_eq!(p.headers(), &[0, 0]);
        let ids: Vec<u32> = (0..300).map(|i| 7 * i + 3).collect();
        let p = PackedPostings::pack(&ids).unwrap();
        assert_eq!(unpacked(&p), ids);
        assert_eq!(p.headers().len(), 2 * 3 + 2);
    }

    #[test]
    fn lists_of_one_object_in_67_take_under_half_the_bytes() {
        // the SIFT-like shape: 237 x 67 lists over 200 K objects, each object in one list of
        // each attribute
        let n = 200_000u32;
        let mut lists = vec![Vec::new(); 67];
        let mut x = 12345u32;
        for o in 0..n {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            lists[(x >> 16) as usize % 67].push(o);
        }
        let ids: Vec<u32> = lists.concat();
        let p = PackedPostings::pack(&ids).unwrap();
        assert_eq!(unpacked(&p), ids);
        assert!(p.bits_per_posting() < 16.0, "{}", p.bits_per_posting());
        assert!(pays(&p));
        // random ids over all of u32 do not pay
        let wild: Vec<u32> = (0..10_000u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let q = PackedPostings::pack(&wild).unwrap();
        assert_eq!(unpacked(&q), wild);
        assert!(!pays(&q));
    }

    #[test]
    fn the_forms_choose_as_documented() {
        use crate::backend::cuda::PostingsForm;
        let small = PackedPostings::pack(&(0..1000).collect::<Vec<u32>>()).unwrap();
        let wild: Vec<u32> = (0..1000u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let wild = PackedPostings::pack(&wild).unwrap();
        assert!(!PostingsForm::Plain.tries_packing(u64::MAX, 0));
        assert!(!PostingsForm::Plain.keeps(&small));
        assert!(PostingsForm::Packed.tries_packing(0, u64::MAX));
        assert!(PostingsForm::Packed.keeps(&wild));
        // Auto: plain while the ids take at most half the free memory, then packed if it pays
        assert!(!PostingsForm::Auto.tries_packing(50, 100));
        assert!(PostingsForm::Auto.tries_packing(51, 100));
        assert!(PostingsForm::Auto.keeps(&small));
        assert!(!PostingsForm::Auto.keeps(&wild));
        // the environment turns Auto into either, and leaves the others
        assert_eq!(PostingsForm::Plain.resolved(), PostingsForm::Plain);
        assert_eq!(PostingsForm::Packed.resolved(), PostingsForm::Packed);
        let auto = PostingsForm::Auto.resolved();
        match std::env::var("GENIE_PACKED_POSTINGS").as_deref() {
            Ok("on") => assert_eq!(auto, PostingsForm::Packed),
            Ok("off") => assert_eq!(auto, PostingsForm::Plain),
            _ => assert_eq!(auto, PostingsForm::Auto),
        }
    }

    #[test]
    fn unpack_range_and_bounds_agree_with_get() {
        let ids: Vec<u32> = (0..1000u32).map(|i| (i * 37) % 5003 + i / 9).collect();
        let p = PackedPostings::pack(&ids).unwrap();
        assert_eq!(p.unpack(), ids);
        for (a, b) in [
            (0, 0),
            (0, 1000),
            (5, 130),
            (127, 129),
            (128, 256),
            (900, 2000),
        ] {
            assert_eq!(
                p.range(a, b),
                ids[a as usize..(b as usize).min(1000)],
                "{a}..{b}"
            );
        }
        let top = *ids.iter().max().unwrap();
        assert!(p.any_at_or_above(top) && !p.any_at_or_above(top + 1));
        assert!(p.any_at_or_above(0) && !PackedPostings::pack(&[]).unwrap().any_at_or_above(0));
    }

    #[test]
    fn words_read_back_and_bad_words_are_refused() {
        let ids: Vec<u32> = (0..600u32).map(|i| i * 3).collect();
        let p = PackedPostings::pack(&ids).unwrap();
        let again = PackedPostings::from_words(p.words().to_vec().into(), 600).unwrap();
        assert_eq!(again, p);
        let refused = |words: Vec<u32>, len: u64| {
            PackedPostings::from_words(words.into(), len).expect_err("bad words")
        };
        // too few words for the headers of the postings announced
        assert!(refused(p.words().to_vec(), 100_000).contains("headers"));
        // a block of 33 bits
        let mut w = p.words().to_vec();
        w[3] = 33 * 4;
        assert!(refused(w, 600).contains("block 0"));
        // headers whose end is not the end of the bits
        let mut w = p.words().to_vec();
        w.push(0);
        assert!(refused(w, 600).contains("end"));
        // a first block that does not start at word 0
        let mut w = p.words().to_vec();
        w[1] = 4;
        assert!(!refused(w, 600).is_empty());
    }

    proptest! {
        #[test]
        fn sorted_lists_read_back(
            lists in proptest::collection::vec(
                proptest::collection::btree_set(any::<u32>().prop_map(|x| x % 1_000_000), 0..400),
                0..12,
            ),
            shift in 0u32..32,
        ) {
            let ids: Vec<u32> = lists
                .iter()
                .flat_map(|l| l.iter().map(move |&x| x.wrapping_shl(shift) >> shift.min(31)))
                .collect();
            let p = PackedPostings::pack(&ids).unwrap();
            prop_assert_eq!(p.len(), ids.len() as u64);
            prop_assert_eq!(unpacked(&p), ids);
        }

        #[test]
        fn any_ids_read_back(ids in proptest::collection::vec(any::<u32>(), 0..700)) {
            let p = PackedPostings::pack(&ids).unwrap();
            prop_assert_eq!(unpacked(&p), ids);
        }
    }
}
