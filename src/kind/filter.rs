//! A search's filter: the objects it may return, by the user's ids (an allow-list: only these;
//! a deny-list: never these) and, on a table index, by a **condition** on columns
//! (`age=30..40 job=clerk`: every condition met). It becomes an [`ObjectMask`] per index or
//! segment and is applied by the backends before the top-k selection, so a filtered search
//! still returns `k` hits whenever `k` allowed objects match.
//!
//! A condition is resolved by the index's kind into [`Clause`]s, each a set of keyword ranges
//! (one column's condition), and an object meets it when each clause holds one of its keywords
//! ([`condition_mask`]: the lists of the clauses' keywords read once).

use crate::data_error::DataError;
use genie_core::{InvertedIndex, Keyword, ObjectMask};

/// The objects a search may return, by id (sorted and de-duplicated on construction) and by a
/// condition on columns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    allow: Option<Vec<u64>>,
    deny: Vec<u64>,
    condition: Option<String>,
}

/// Keyword ranges (inclusive), any of which an object must hold: one condition of a filter.
pub type Clause = Vec<(Keyword, Keyword)>;

/// The objects of `index` that hold a keyword of every clause.
pub fn condition_mask(index: &InvertedIndex, clauses: &[Clause]) -> Result<ObjectMask, DataError> {
    let n = index.num_objects();
    let mut out: Option<ObjectMask> = None;
    for clause in clauses {
        let mut words = vec![0u32; (n as usize).div_ceil(32)];
        for &(lo, hi) in clause {
            for kw in lo..=hi.min(index.keyword_space().saturating_sub(1)) {
                for &o in index.postings_of(kw) {
                    words[(o / 32) as usize] |= 1 << (o % 32);
                }
            }
        }
        let mask = ObjectMask::from_words(n, words)?;
        out = Some(match out {
            None => mask,
            Some(m) => m.and(&mask)?,
        });
    }
    Ok(out.unwrap_or_else(|| ObjectMask::all(n)))
}

/// The error of a condition given to an index whose kind has no columns.
pub fn no_conditions(kind: &str) -> DataError {
    DataError::BadQuery(format!(
        "a filter's \"where\" condition applies to table indexes, not to an index of {kind}"
    ))
}

/// How the objects of an index (or a segment of a live index) are numbered for the user.
#[derive(Clone, Copy, Debug)]
pub enum IdSpace<'a> {
    /// Object `i` has id `i` (an index from `genie build`): `n` objects.
    Rows(u32),
    /// Object `i` has id `ids[i]`; `ids` is ascending.
    Sorted(&'a [u64]),
}

impl IdSpace<'_> {
    /// The number of objects.
    pub fn len(&self) -> u32 {
        match self {
            Self::Rows(n) => *n,
            Self::Sorted(ids) => u32::try_from(ids.len()).unwrap_or(u32::MAX),
        }
    }

    /// Whether there is no object.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The objects of the ids `sorted` (ascending) that it holds, ascending: for listed ids, a
    /// merge of the two sorted lists in parallel chunks, each searching only the window of ids
    /// its first and last id bound (a binary search per id would miss the cache at every step).
    pub fn positions(&self, sorted: &[u64]) -> Vec<u32> {
        use rayon::prelude::*;
        match self {
            Self::Rows(_) => sorted.iter().filter_map(|&id| self.position(id)).collect(),
            Self::Sorted(ids) => sorted
                .par_chunks(4096)
                .flat_map_iter(|chunk| {
                    let (Some(&first), Some(&last)) = (chunk.first(), chunk.last()) else {
                        return Vec::new().into_iter();
                    };
                    let lo = ids.partition_point(|&x| x < first);
                    let hi = ids.partition_point(|&x| x <= last);
                    let window = &ids[lo..hi];
                    let mut out = Vec::with_capacity(chunk.len().min(window.len()));
                    let mut j = 0;
                    for &id in chunk {
                        while j < window.len() && window[j] < id {
                            j += 1;
                        }
                        if j < window.len() && window[j] == id {
                            out.push((lo + j) as u32);
                        }
                    }
                    out.into_iter()
                })
                .collect(),
        }
    }

    /// The object whose id is `id`, if any.
    pub fn position(&self, id: u64) -> Option<u32> {
        match self {
            Self::Rows(n) => u32::try_from(id).ok().filter(|&i| i < *n),
            Self::Sorted(ids) => ids
                .binary_search(&id)
                .ok()
                .and_then(|i| u32::try_from(i).ok()),
        }
    }
}

fn sorted(mut ids: Vec<u64>) -> Vec<u64> {
    ids.sort_unstable();
    ids.dedup();
    ids
}

impl Filter {
    /// Only the objects of these ids (ids of no object are allowed and match nothing).
    pub fn allow(ids: Vec<u64>) -> Self {
        Self::new(Some(ids), Vec::new())
    }

    /// Every object but those of these ids.
    pub fn deny(ids: Vec<u64>) -> Self {
        Self::new(None, ids)
    }

    /// An allow-list (if any) and a deny-list together: the allowed objects not denied.
    pub fn new(allow: Option<Vec<u64>>, deny: Vec<u64>) -> Self {
        Self {
            allow: allow.map(sorted),
            deny: sorted(deny),
            condition: None,
        }
    }

    /// The same, with only the objects that meet `condition` (a table index's conditions,
    /// `age=30..40 job=clerk`) allowed.
    pub fn with_condition(mut self, condition: impl Into<String>) -> Self {
        self.condition = Some(condition.into());
        self
    }

    /// The condition on columns, if any.
    pub fn condition(&self) -> Option<&str> {
        self.condition.as_deref()
    }

    /// Whether it lets every object through.
    pub fn is_everything(&self) -> bool {
        self.allow.is_none() && self.deny.is_empty() && self.condition.is_none()
    }

    /// The allow-list, sorted (`None`: every object).
    pub fn allowed(&self) -> Option<&[u64]> {
        self.allow.as_deref()
    }

    /// The deny-list, sorted.
    pub fn denied(&self) -> &[u64] {
        &self.deny
    }

    /// Whether the object of `id` passes.
    pub fn passes(&self, id: u64) -> bool {
        self.allow
            .as_ref()
            .is_none_or(|a| a.binary_search(&id).is_ok())
            && self.deny.binary_search(&id).is_err()
    }

    /// The mask of the objects of `space` that pass, `base` (the live objects) included when
    /// given; `meeting`: the objects that meet the condition ([`condition_mask`]), which a
    /// filter with a condition needs.
    pub fn mask(
        &self,
        space: IdSpace<'_>,
        base: Option<&ObjectMask>,
        meeting: Option<&ObjectMask>,
    ) -> Result<ObjectMask, DataError> {
        let base = match (&self.condition, meeting, base) {
            (None, _, base) => base.cloned(),
            (Some(_), Some(m), None) => Some(m.clone()),
            (Some(_), Some(m), Some(b)) => Some(b.and(m)?),
            (Some(_), None, _) => {
                return Err(DataError::Core(genie_core::GenieError::Internal(
                    "a filter's condition was not resolved".into(),
                )))
            }
        };
        let base = base.as_ref();
        let n = space.len();
        let allowed = match &self.allow {
            Some(ids) => ObjectMask::from_allowed(n, space.positions(ids))?,
            None => match base {
                Some(b) => b.clone(),
                None => ObjectMask::all(n),
            },
        };
        let allowed = match (&self.allow, base) {
            (Some(_), Some(b)) => allowed.and(b)?,
            _ => allowed,
        };
        if self.deny.is_empty() {
            return Ok(allowed);
        }
        let denied = ObjectMask::from_allowed(n, space.positions(&self.deny))?;
        Ok(allowed.and_not(&denied)?)
    }

    /// The filter of a request body's `"filter": {"ids": [...], "where": "..."}` (either or
    /// both) and `"exclude": {"ids": [...]}` (either may be absent); `None` when neither is
    /// given.
    pub fn from_json(
        filter: Option<&serde_json::Value>,
        exclude: Option<&serde_json::Value>,
    ) -> Result<Option<Self>, DataError> {
        if filter.is_none() && exclude.is_none() {
            return Ok(None);
        }
        let mut condition = None;
        let mut allow = None;
        if let Some(f) = filter {
            let map = f.as_object().ok_or_else(|| {
                DataError::BadQuery(
                    "\"filter\": expected an object {\"ids\": [...]} or {\"where\": \"...\"}"
                        .into(),
                )
            })?;
            if let Some(other) = map.keys().find(|k| *k != "ids" && *k != "where") {
                return Err(DataError::BadQuery(format!(
                    "\"filter\": unknown field {other:?}, expected \"ids\" and \"where\""
                )));
            }
            if let Some(w) = map.get("where") {
                let text = w.as_str().ok_or_else(|| {
                    DataError::BadQuery(format!(
                        "\"filter\".where: expected a string of conditions, found {w}"
                    ))
                })?;
                condition = Some(text.to_string());
            }
            if map.contains_key("ids") || condition.is_none() {
                allow = Some(ids_field(f, "filter")?);
            }
        }
        let deny = exclude.map(|e| ids_field(e, "exclude")).transpose()?;
        let f = Self::new(allow, deny.unwrap_or_default());
        Ok(Some(match condition {
            Some(c) => f.with_condition(c),
            None => f,
        }))
    }
}

/// The `"ids"` array of unsigned 64-bit integers of the object `field`.
pub fn ids_field(value: &serde_json::Value, field: &str) -> Result<Vec<u64>, DataError> {
    let ids = value
        .as_object()
        .and_then(|o| o.get("ids"))
        .and_then(|v| v.as_array())
        .ok_or_else(|| {
            DataError::BadQuery(format!(
                "\"{field}\": expected an object {{\"ids\": [...]}} with an array of ids"
            ))
        })?;
    ids.iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_u64().ok_or_else(|| {
                DataError::BadQuery(format!(
                    "\"{field}\".ids[{i}]: expected an unsigned 64-bit integer, found {v}"
                ))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_follow_the_lists() {
        let ids = [3u64, 10, 11, 40];
        let space = IdSpace::Sorted(&ids);
        let f = Filter::new(Some(vec![40, 3, 3, 99]), vec![40]);
        let m = f.mask(space, None, None).expect("mask");
        assert_eq!(
            (0..4).map(|i| m.contains(i)).collect::<Vec<_>>(),
            [true, false, false, false]
        );
        let live = ObjectMask::from_allowed(4, [1, 2, 3]).expect("live");
        let m = Filter::deny(vec![11])
            .mask(space, Some(&live), None)
            .expect("mask");
        assert_eq!(
            (0..4).map(|i| m.contains(i)).collect::<Vec<_>>(),
            [false, true, false, true]
        );
        let rows = Filter::allow(vec![0, 5, 1 << 40])
            .mask(IdSpace::Rows(6), None, None)
            .expect("rows");
        // positions in listed ids, across chunks
        let many: Vec<u64> = (0..20_000u64).map(|i| i * 3).collect();
        let wanted: Vec<u64> = (0..30_000u64).map(|i| i * 2).collect();
        let got = IdSpace::Sorted(&many).positions(&wanted);
        let expected: Vec<u32> = (0..20_000u32).filter(|i| i % 2 == 0).collect();
        assert_eq!(got, expected);
        assert_eq!(rows.count(), 2);
        assert!(f.passes(3) && !f.passes(40) && !f.passes(10));
    }

    #[test]
    fn json_filters_name_the_bad_field() {
        let bad = serde_json::json!({"ids": [1, -2]});
        let e = Filter::from_json(Some(&bad), None).expect_err("negative id");
        assert!(e.to_string().contains("\"filter\".ids[1]"), "{e}");
        let e = Filter::from_json(None, Some(&serde_json::json!([1]))).expect_err("no object");
        assert!(e.to_string().contains("\"exclude\""), "{e}");
        assert_eq!(Filter::from_json(None, None).expect("none"), None);
    }
}
