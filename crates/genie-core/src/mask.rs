//! The objects a search may return ([`ObjectMask`]): deletes and per-search filters of a live
//! index. A search with a mask counts only the allowed objects, before the top-k selection, so
//! its answers are the top-k of the allowed objects in the contract order (k of them whenever k
//! allowed objects match), never a larger top-k with the others dropped afterwards.
//!
//! The layout is the one the GPU kernels read: bit `i % 32` of word `i / 32` is object `i`, and
//! the bits past the mask's length are always 0.

use crate::error::{GenieError, Result};
use crate::model::ObjectId;
use std::ops::Range;
use std::sync::Arc;

/// The objects a search may return: bit `i % 32` of word `i / 32` set = object `i` allowed.
///
/// Cheap to clone (the words are shared). Two masks are equal when their lengths and allowed
/// objects are.
///
/// ```
/// use genie_core::ObjectMask;
/// let mask = ObjectMask::from_allowed(100, [3, 50, 99]).unwrap();
/// assert!(mask.contains(50) && !mask.contains(51) && !mask.contains(100));
/// assert_eq!(mask.count(), 3);
/// let deleted = ObjectMask::from_allowed(100, [50]).unwrap();
/// assert_eq!(mask.and_not(&deleted).unwrap().count(), 2);
/// ```
#[derive(Clone)]
pub struct ObjectMask {
    words: Arc<[u32]>,
    len: u32,
    /// Objects allowed (the set bits), counted once when the mask is made.
    allowed: u32,
}

/// Words of a mask of `len` objects.
fn words_for(len: u32) -> usize {
    len.div_ceil(32) as usize
}

/// The bits of the last word that are objects of a mask of `len` (all of them for a whole word).
fn last_word_bits(len: u32) -> u32 {
    match len % 32 {
        0 => u32::MAX,
        r => (1u32 << r) - 1,
    }
}

impl ObjectMask {
    /// A mask from words whose bits past `len` are already 0.
    fn from_clean(words: Vec<u32>, len: u32) -> Self {
        let allowed = words.iter().map(|w| w.count_ones()).sum();
        Self {
            words: words.into(),
            len,
            allowed,
        }
    }

    /// Every one of `len` objects allowed.
    pub fn all(len: u32) -> Self {
        let mut words = vec![u32::MAX; words_for(len)];
        if let Some(last) = words.last_mut() {
            *last &= last_word_bits(len);
        }
        Self::from_clean(words, len)
    }

    /// None of `len` objects allowed.
    pub fn none(len: u32) -> Self {
        Self::from_clean(vec![0; words_for(len)], len)
    }

    /// The objects `ids` of `len` allowed (duplicates are harmless); an id at or past `len` is an
    /// error naming it.
    pub fn from_allowed(len: u32, ids: impl IntoIterator<Item = ObjectId>) -> Result<Self> {
        let mut b = MaskBuilder::none(len);
        for id in ids {
            b.allow(id)?;
        }
        Ok(b.build())
    }

    /// A mask of `len` objects from its words (bit `i % 32` of word `i / 32` is object `i`):
    /// `words` must hold `len.div_ceil(32)` words; bits past `len` are cleared.
    pub fn from_words(len: u32, mut words: Vec<u32>) -> Result<Self> {
        if words.len() != words_for(len) {
            return Err(GenieError::InvalidParameter(format!(
                "an object mask of {len} objects takes {} words, not {}",
                words_for(len),
                words.len()
            )));
        }
        if let Some(last) = words.last_mut() {
            *last &= last_word_bits(len);
        }
        Ok(Self::from_clean(words, len))
    }

    /// The number of objects the mask covers (allowed or not): the index's object count.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether the mask covers no object.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether object `id` is allowed (false past the mask's length).
    #[inline]
    pub fn contains(&self, id: ObjectId) -> bool {
        allowed(&self.words, id)
    }

    /// The number of allowed objects.
    pub fn count(&self) -> u32 {
        self.allowed
    }

    /// Whether every object is allowed (a search then filters nothing); constant time.
    pub fn is_all(&self) -> bool {
        self.allowed == self.len
    }

    /// The words (bit `i % 32` of word `i / 32` is object `i`; bits past the length are 0).
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// Whether `other` shares this mask's words (the same allocation, not only the same bits).
    pub fn shares_words(&self, other: &ObjectMask) -> bool {
        Arc::ptr_eq(&self.words, &other.words) && self.len == other.len
    }

    /// The allowed objects, ascending.
    pub fn iter(&self) -> impl Iterator<Item = ObjectId> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut bits = w;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let j = bits.trailing_zeros();
                    bits &= bits - 1;
                    i as u32 * 32 + j
                })
            })
        })
    }

    fn same_len(&self, other: &ObjectMask, op: &str) -> Result<()> {
        if self.len == other.len {
            return Ok(());
        }
        Err(GenieError::InvalidParameter(format!(
            "object masks of {} and {} objects: {op} needs masks of the same length",
            self.len, other.len
        )))
    }

    /// The objects allowed by both masks (of the same length, else an error).
    pub fn and(&self, other: &ObjectMask) -> Result<Self> {
        self.same_len(other, "and")?;
        let words = self.words.iter().zip(other.words.iter());
        Ok(Self::from_clean(
            words.map(|(a, b)| a & b).collect(),
            self.len,
        ))
    }

    /// The objects this mask allows and `other` does not (a deny-list: deleted objects), of the
    /// same length, else an error.
    pub fn and_not(&self, other: &ObjectMask) -> Result<Self> {
        self.same_len(other, "and_not")?;
        let words = self.words.iter().zip(other.words.iter());
        Ok(Self::from_clean(
            words.map(|(a, b)| a & !b).collect(),
            self.len,
        ))
    }

    /// The objects of `range` (clipped to the mask), renumbered from 0: the mask of a part of an
    /// index that covers those objects.
    pub fn slice(&self, range: Range<u32>) -> ObjectMask {
        let end = range.end.min(self.len);
        let start = range.start.min(end);
        if start == 0 && end == self.len {
            return self.clone();
        }
        let len = end - start;
        let (first, shift) = ((start / 32) as usize, start % 32);
        let mut words: Vec<u32> = (0..words_for(len))
            .map(|i| {
                let lo = self.words[first + i];
                if shift == 0 {
                    return lo;
                }
                let hi = self.words.get(first + i + 1).copied().unwrap_or(0);
                (lo >> shift) | (hi << (32 - shift))
            })
            .collect();
        if let Some(last) = words.last_mut() {
            *last &= last_word_bits(len);
        }
        Self::from_clean(words, len)
    }

    /// A copy with object `id` allowed or not; an id past the length is an error. For many
    /// changes, a [`MaskBuilder`] copies the words once.
    pub fn with(&self, id: ObjectId, allowed: bool) -> Result<Self> {
        let mut b = MaskBuilder::from(self.clone());
        b.set(id, allowed)?;
        Ok(b.build())
    }
}

/// Whether bit `id` of `words` is set (false past them).
#[inline(always)]
pub(crate) fn allowed(words: &[u32], id: ObjectId) -> bool {
    words
        .get((id / 32) as usize)
        .is_some_and(|w| (w >> (id % 32)) & 1 == 1)
}

impl PartialEq for ObjectMask {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len
            && self.allowed == other.allowed
            && (Arc::ptr_eq(&self.words, &other.words) || self.words == other.words)
    }
}

impl Eq for ObjectMask {}

impl std::fmt::Debug for ObjectMask {
    /// The length and the allowed count, not the words (a mask of millions of objects).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectMask")
            .field("len", &self.len)
            .field("allowed", &self.allowed)
            .finish()
    }
}

/// Builds an [`ObjectMask`] by allowing or denying objects one at a time.
///
/// ```
/// use genie_core::mask::MaskBuilder;
/// let mut b = MaskBuilder::all(10);
/// b.deny(3).unwrap().deny(7).unwrap();
/// assert!(b.set(10, false).is_err());
/// let mask = b.build();
/// assert_eq!(mask.iter().collect::<Vec<_>>(), [0, 1, 2, 4, 5, 6, 8, 9]);
/// ```
#[derive(Clone, Debug)]
pub struct MaskBuilder {
    words: Vec<u32>,
    len: u32,
}

impl MaskBuilder {
    /// A builder of `len` objects, none allowed yet.
    pub fn none(len: u32) -> Self {
        Self {
            words: vec![0; words_for(len)],
            len,
        }
    }

    /// A builder of `len` objects, all allowed.
    pub fn all(len: u32) -> Self {
        Self::from(ObjectMask::all(len))
    }

    /// Allows or denies object `id`; an id past the length is an error.
    pub fn set(&mut self, id: ObjectId, allowed: bool) -> Result<&mut Self> {
        if id >= self.len {
            return Err(GenieError::InvalidParameter(format!(
                "object {id} is outside an object mask of {} objects",
                self.len
            )));
        }
        let (w, bit) = ((id / 32) as usize, 1u32 << (id % 32));
        if allowed {
            self.words[w] |= bit;
        } else {
            self.words[w] &= !bit;
        }
        Ok(self)
    }

    /// Allows object `id` (an error past the length).
    pub fn allow(&mut self, id: ObjectId) -> Result<&mut Self> {
        self.set(id, true)
    }

    /// Denies object `id` (an error past the length).
    pub fn deny(&mut self, id: ObjectId) -> Result<&mut Self> {
        self.set(id, false)
    }

    /// The mask.
    pub fn build(self) -> ObjectMask {
        ObjectMask::from_clean(self.words, self.len)
    }
}

impl From<ObjectMask> for MaskBuilder {
    fn from(mask: ObjectMask) -> Self {
        Self {
            words: mask.words.to_vec(),
            len: mask.len,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The model: one bool per object.
    fn model(mask: &ObjectMask) -> Vec<bool> {
        (0..mask.len()).map(|i| mask.contains(i)).collect()
    }

    /// Every word past the length is 0 and the count is the bits set.
    fn clean(mask: &ObjectMask) {
        assert_eq!(mask.words().len(), mask.len().div_ceil(32) as usize);
        if let Some(&last) = mask.words().last() {
            assert_eq!(
                last & !last_word_bits(mask.len()),
                0,
                "bits past the length"
            );
        }
        let ones: u32 = mask.words().iter().map(|w| w.count_ones()).sum();
        assert_eq!(ones, mask.count());
    }

    #[test]
    fn all_and_none() {
        for len in [0u32, 1, 31, 32, 33, 64, 100] {
            let all = ObjectMask::all(len);
            let none = ObjectMask::none(len);
            clean(&all);
            clean(&none);
            assert_eq!(all.count(), len);
            assert!(all.is_all());
            assert_eq!(none.count(), 0);
            assert_eq!(none.is_all(), len == 0);
            assert!(!all.contains(len) && !none.contains(len));
            assert_eq!(all.iter().count(), len as usize);
            assert_eq!(all.is_empty(), len == 0);
        }
    }

    #[test]
    fn ids_past_the_length_are_errors() {
        let err = ObjectMask::from_allowed(10, [1, 10]).expect_err("id 10 of 10");
        assert!(err.to_string().contains("object 10"), "{err}");
        assert!(ObjectMask::all(5).with(5, false).is_err());
        assert!(ObjectMask::from_allowed(0, [0]).is_err());
        let mut b = MaskBuilder::none(3);
        assert!(b.allow(u32::MAX).is_err());
        assert!(ObjectMask::from_words(33, vec![0]).is_err());
    }

    #[test]
    fn lengths_must_agree() {
        let (a, b) = (ObjectMask::all(10), ObjectMask::all(11));
        assert!(a.and(&b).is_err());
        let err = a.and_not(&b).expect_err("lengths");
        assert!(err.to_string().contains("10 and 11"), "{err}");
    }

    #[test]
    fn from_words_clears_the_tail() {
        let m = ObjectMask::from_words(33, vec![u32::MAX, u32::MAX]).expect("words");
        clean(&m);
        assert_eq!(m.count(), 33);
        assert!(m.is_all());
        assert_eq!(m, ObjectMask::all(33));
    }

    #[test]
    fn equality_is_by_content() {
        let a = ObjectMask::from_allowed(70, [1, 69]).expect("mask");
        let b = ObjectMask::none(70).with(69, true).expect("with");
        let b = b.with(1, true).expect("with");
        assert_eq!(a, b);
        assert!(!a.shares_words(&b));
        assert!(a.shares_words(&a.clone()));
        assert_ne!(a, ObjectMask::from_allowed(71, [1, 69]).expect("mask"));
        assert_ne!(a, ObjectMask::from_allowed(70, [1]).expect("mask"));
        // the whole range is the mask itself, shared
        assert!(a.slice(0..70).shares_words(&a));
        assert!(a.slice(0..u32::MAX).shares_words(&a));
    }

    proptest! {
        /// Every operation against a `Vec<bool>` model, lengths across word boundaries.
        #[test]
        fn operations_match_the_model(
            len in 0u32..200,
            a in prop::collection::vec(0u32..220, 0..80),
            b in prop::collection::vec(0u32..220, 0..80),
            cut in (0u32..220, 0u32..220),
            flips in prop::collection::vec((0u32..220, any::<bool>()), 0..10),
        ) {
            let ids = |v: &[u32]| v.iter().copied().filter(|&i| i < len).collect::<Vec<_>>();
            let (ia, ib) = (ids(&a), ids(&b));
            let ma = ObjectMask::from_allowed(len, ia.iter().copied()).expect("a");
            let mb = ObjectMask::from_allowed(len, ib.iter().copied()).expect("b");
            let mut want_a = vec![false; len as usize];
            ia.iter().for_each(|&i| want_a[i as usize] = true);
            let mut want_b = vec![false; len as usize];
            ib.iter().for_each(|&i| want_b[i as usize] = true);
            for m in [&ma, &mb] {
                clean(m);
            }
            prop_assert_eq!(model(&ma), want_a.clone());
            prop_assert_eq!(ma.count() as usize, want_a.iter().filter(|&&x| x).count());
            prop_assert_eq!(ma.is_all(), want_a.iter().all(|&x| x));
            let listed: Vec<u32> = ma.iter().collect();
            let want_listed: Vec<u32> = (0..len).filter(|&i| want_a[i as usize]).collect();
            prop_assert_eq!(listed, want_listed);
            prop_assert_eq!(a.iter().any(|&i| i >= len), ObjectMask::from_allowed(len, a.iter().copied()).is_err());

            let and = ma.and(&mb).expect("and");
            let and_not = ma.and_not(&mb).expect("and_not");
            clean(&and);
            clean(&and_not);
            for i in 0..len as usize {
                prop_assert_eq!(and.contains(i as u32), want_a[i] && want_b[i]);
                prop_assert_eq!(and_not.contains(i as u32), want_a[i] && !want_b[i]);
            }

            let (s, e) = (cut.0.min(cut.1), cut.0.max(cut.1));
            let part = ma.slice(s..e);
            clean(&part);
            let (cs, ce) = (s.min(len), e.min(len));
            prop_assert_eq!(part.len(), ce.saturating_sub(cs));
            prop_assert_eq!(model(&part), want_a[cs.min(ce) as usize..ce as usize].to_vec());

            let mut with = ma.clone();
            let mut want_with = want_a.clone();
            for &(id, on) in &flips {
                match with.with(id, on) {
                    Ok(m) => {
                        prop_assert!(id < len);
                        want_with[id as usize] = on;
                        with = m;
                    }
                    Err(_) => prop_assert!(id >= len),
                }
            }
            clean(&with);
            prop_assert_eq!(model(&with), want_with.clone());
            prop_assert_eq!(with == ma, want_with == want_a);
        }
    }
}
