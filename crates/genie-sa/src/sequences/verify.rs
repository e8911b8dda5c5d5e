//! The "assembly" step for sequences: Algorithm 2 of the paper (section V-A.2) over the top-K
//! candidates by match count, generalised from top-1 to top-k, and the certificate of
//! Theorem 5.2.
//!
//! The candidates arrive in the contract order of the index (count descending, then id
//! ascending). The result order is edit distance ascending, then count descending, then id
//! ascending; so among candidates of equal distance an earlier one always ranks first, and a
//! later candidate enters the top-k only with a distance *below* the current k-th distance
//! `tau_k`. Two filters skip candidates that cannot:
//! * **count filter** (line 5): a sequence within distance `tau_k - 1` has a match count of at least
//!   `|G(Q)| - n * (tau_k - 1)` (Theorem 5.1). Once a candidate's count is below that, so is every
//!   later one's: stop.
//! * **length filter** (line 7): `ed(Q, S) >= ||Q| - |S||`; skip `S` when that is `>= tau_k`.
//!
//! **Certificate** (Theorem 5.2): let `c_out` be the largest count an object outside the
//! candidates can have (the K-th candidate's count when the index returned K candidates; 0 when it
//! returned fewer, since then every object with a count of 1 or more is a candidate). If `k`
//! sequences were verified and `c_out < |G(Q)| - n * tau_k`, every sequence within distance
//! `tau_k` of `Q` is a candidate, so the returned top-k equals the top-k of a scan of all
//! sequences by (distance, count, id): the result is **exact**. When no object lies outside the
//! candidates, the result is exact too; [`zero_count_tail`] completes the candidates of count 1 or
//! more with the objects of count 0, so that Algorithm 2 can run over all objects (the exhaustive
//! fallback of [`super::search`]).

use crate::error::Result;
use crate::sequences::edit_distance::Pattern;
use crate::sequences::ngram::NGramConfig;
use crate::sequences::store::SequenceStore;
use crate::sequences::transform::SequenceQuery;
use genie_core::{Hit, ObjectId};
use serde::{Deserialize, Serialize};

/// A sequence hit verified by edit distance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SequenceHit {
    /// The object (0-based sequence number).
    pub id: ObjectId,
    /// Its match count with the query (shared ordered n-grams).
    pub count: u32,
    /// Its edit distance to the query.
    pub distance: u32,
}

/// The objects of an index of `num_objects` that are not among `hits`, as hits of count 0 in
/// ascending id order: after the hits, they complete the contract order of all objects.
pub fn zero_count_tail(hits: &[Hit], num_objects: u32) -> impl Iterator<Item = Hit> {
    let mut ids: Vec<ObjectId> = hits.iter().map(|h| h.id).collect();
    ids.sort_unstable();
    let mut j = 0;
    (0..num_objects)
        .filter(move |&id| {
            while j < ids.len() && ids[j] < id {
                j += 1;
            }
            ids.get(j) != Some(&id)
        })
        .map(|id| Hit { id, count: 0 })
}

/// What lies outside a query's candidate list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outside {
    /// Every indexed object is a candidate.
    Nothing,
    /// Objects outside have a match count of at most this.
    AtMost(u32),
}

impl Outside {
    /// What lies outside `candidates`, the top-`requested` of an index of `num_objects` objects.
    pub fn of(candidates: &[Hit], requested: usize, num_objects: u32) -> Self {
        if candidates.len() >= num_objects as usize {
            Self::Nothing
        } else if candidates.len() < requested {
            Self::AtMost(0)
        } else {
            Self::AtMost(candidates.last().map_or(0, |h| h.count))
        }
    }
}

/// The verified top-k of one query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    /// Up to k hits, distance ascending, then count descending, then id ascending.
    pub hits: Vec<SequenceHit>,
    /// Whether Theorem 5.2 proves `hits` equal to the top-k of all sequences.
    pub exact: bool,
    /// Edit distances computed (candidates not cut by the filters).
    pub computed: usize,
}

/// Algorithm 2 over `candidates` (in contract order) and the certificate of Theorem 5.2.
pub fn verify(
    config: &NGramConfig,
    query: &SequenceQuery,
    candidates: impl IntoIterator<Item = Hit>,
    outside: Outside,
    k: usize,
    store: &SequenceStore,
) -> Result<Verified> {
    let pattern = Pattern::new(&query.symbols);
    verify_by(config, query, candidates, outside, k, store, |_, id| {
        store.distance_to(&pattern, id)
    })
}

/// [`verify`] with each distance from `distance` (the candidate's position in `candidates`,
/// its id): distances computed elsewhere (on a GPU, say) give the same result when they are
/// the same distances.
pub fn verify_by(
    config: &NGramConfig,
    query: &SequenceQuery,
    candidates: impl IntoIterator<Item = Hit>,
    outside: Outside,
    k: usize,
    store: &SequenceStore,
    mut distance: impl FnMut(usize, ObjectId) -> Result<u32>,
) -> Result<Verified> {
    if k == 0 {
        return Ok(Verified {
            hits: Vec::new(),
            exact: true,
            computed: 0,
        });
    }
    let qlen = query.symbols.len() as i64;
    let mut best: Vec<SequenceHit> = Vec::with_capacity(k + 1);
    let mut computed = 0;
    for (at, c) in candidates.into_iter().enumerate() {
        let tau_k = (best.len() == k).then(|| best[k - 1].distance);
        if let Some(tau) = tau_k {
            if tau == 0 || config.count_bound(query.grams, tau - 1) > i64::from(c.count) {
                break;
            }
            if (qlen - i64::from(store.symbol_len(c.id))).unsigned_abs() >= u64::from(tau) {
                continue;
            }
        }
        let distance = distance(at, c.id)?;
        computed += 1;
        if tau_k.is_some_and(|tau| distance >= tau) {
            continue;
        }
        let at = best.partition_point(|h| h.distance <= distance);
        best.insert(
            at,
            SequenceHit {
                id: c.id,
                count: c.count,
                distance,
            },
        );
        best.truncate(k);
    }
    let exact = match outside {
        Outside::Nothing => true,
        Outside::AtMost(c_out) => {
            best.len() == k
                && i64::from(c_out) < config.count_bound(query.grams, best[k - 1].distance)
        }
    };
    Ok(Verified {
        hits: best,
        exact,
        computed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sequences::ngram::Alphabet;
    use crate::string_table::StringTable;
    use crate::SequenceTransform;

    fn setup(seqs: &[&str], config: NGramConfig) -> (SequenceTransform, SequenceStore) {
        let t =
            SequenceTransform::build(config, seqs.iter().map(|s| s.as_bytes())).expect("transform");
        let table: StringTable = seqs.iter().collect();
        (
            t,
            SequenceStore::new(table, config.alphabet).expect("store"),
        )
    }

    #[test]
    fn top_k_order_and_filters() {
        let config = NGramConfig::new(2, Alphabet::Chars, false).expect("config");
        let seqs = ["abcdef", "abcdxf", "abcdef", "zzzzzz", "abc"];
        let (t, store) = setup(&seqs, config);
        let q = t.prepare(b"abcdef").expect("query");
        // counts: 0: 5, 1: 3, 2: 5, 3: 0, 4: 2 (contract order: 0, 2, 1, 4)
        let cands = [(0, 5), (2, 5), (1, 3), (4, 2)].map(|(id, count)| Hit { id, count });
        let v = verify(&config, &q, cands, Outside::AtMost(0), 2, &store).expect("verify");
        let got: Vec<(u32, u32)> = v.hits.iter().map(|h| (h.id, h.distance)).collect();
        assert_eq!(got, [(0, 0), (2, 0)]);
        // tau_k = 0 after two exact matches: nothing more is computed
        assert_eq!(v.computed, 2);
        // c_out = 0 < |G(Q)| - 0 = 5
        assert!(v.exact);

        let v = verify(&config, &q, cands, Outside::AtMost(0), 3, &store).expect("verify");
        let got: Vec<(u32, u32)> = v.hits.iter().map(|h| (h.id, h.distance)).collect();
        assert_eq!(got, [(0, 0), (2, 0), (1, 1)]);
        // tau_3 = 1: bound 5 - 2 = 3 > c_out = 0
        assert!(v.exact);
        // "abc" (count 2): the count filter needs 5 - 2 * 0 = 5 > 2, so it stops there
        assert_eq!(v.computed, 3);

        // the K-th candidate's count decides: 3 is not below 5 - 2 * 1
        let v = verify(
            &config,
            &q,
            cands[..3].iter().copied(),
            Outside::AtMost(3),
            3,
            &store,
        )
        .expect("verify");
        assert!(!v.exact);
        let v = verify(&config, &q, cands, Outside::Nothing, 5, &store).expect("verify");
        assert!(v.exact);
        assert_eq!(v.hits.len(), 4);
        let v = verify(&config, &q, cands, Outside::AtMost(9), 0, &store).expect("k = 0");
        assert!(v.exact && v.hits.is_empty());
    }

    #[test]
    fn tail_of_zero_counts() {
        let hits = [(4, 2), (1, 1)].map(|(id, count)| Hit { id, count });
        let tail: Vec<u32> = zero_count_tail(&hits, 6).map(|h| h.id).collect();
        assert_eq!(tail, [0, 2, 3, 5]);
        assert!(zero_count_tail(&hits, 0).next().is_none());
    }

    #[test]
    fn fewer_than_k_is_not_exact() {
        let config = NGramConfig::new(2, Alphabet::Chars, false).expect("config");
        let (t, store) = setup(&["ab", "cd"], config);
        let q = t.prepare(b"ab").expect("query");
        let cands = [Hit { id: 0, count: 1 }];
        let v = verify(&config, &q, cands, Outside::AtMost(0), 2, &store).expect("verify");
        assert_eq!(v.hits.len(), 1);
        assert!(!v.exact);
        assert_eq!(Outside::of(&cands, 2, 2), Outside::AtMost(0));
        assert_eq!(Outside::of(&cands, 1, 2), Outside::AtMost(1));
        assert_eq!(Outside::of(&cands, 1, 1), Outside::Nothing);
    }
}
