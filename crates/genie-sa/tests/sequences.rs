//! Sequence search against brute force: Lemma 5.1 and Theorem 5.1 as properties, the soundness of
//! the Theorem 5.2 certificate, and a slice of a real word list.
#![allow(clippy::unwrap_used)]

mod common;

use common::{data_dir, modify, Rng};
use genie_core::{oracle, CpuBackend, Engine, SearchParams};
use genie_sa::sequences::edit_distance::edit_distance_dp;
use genie_sa::*;
use proptest::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

struct Fixture {
    transform: SequenceTransform,
    store: SequenceStore,
    engine: Engine,
}

impl Fixture {
    fn new<S: AsRef<[u8]>>(config: NGramConfig, seqs: &[S]) -> Self {
        let table: StringTable = seqs.iter().collect();
        let (transform, index) = build_sequence_index(config, &table).unwrap();
        let engine = Engine::with_backend(Arc::new(index), &CpuBackend::new()).unwrap();
        let store = SequenceStore::new(table, config.alphabet).unwrap();
        Self {
            transform,
            store,
            engine,
        }
    }

    fn searcher(&self) -> SequenceSearcher<'_> {
        SequenceSearcher::new(&self.engine, &self.transform, &self.store).unwrap()
    }
}

/// Lemma 5.1 straight from the n-gram multisets: `sum_g min(c_s(g), c_q(g))`.
fn lemma_count(config: &NGramConfig, s: &[u8], q: &[u8]) -> u32 {
    let counts = |x: &[u8]| {
        let mut m: HashMap<Vec<u32>, u32> = HashMap::new();
        let sym = config.padded_symbols(x).unwrap();
        if sym.len() >= config.n {
            for g in sym.windows(config.n) {
                *m.entry(g.to_vec()).or_default() += 1;
            }
        }
        m
    };
    let (cs, cq) = (counts(s), counts(q));
    cq.iter()
        .map(|(g, c)| (*c).min(cs.get(g).copied().unwrap_or(0)))
        .sum()
}

/// The brute-force top-k of all sequences by (edit distance, count desc, id).
fn brute_force(config: &NGramConfig, seqs: &[Vec<u8>], q: &[u8], k: usize) -> Vec<SequenceHit> {
    let qs = config.alphabet.symbols(q).unwrap();
    let mut all: Vec<SequenceHit> = seqs
        .iter()
        .enumerate()
        .map(|(id, s)| SequenceHit {
            id: id as u32,
            count: lemma_count(config, s, q),
            distance: edit_distance_dp(&config.alphabet.symbols(s).unwrap(), &qs),
        })
        .collect();
    all.sort_by_key(|h| (h.distance, std::cmp::Reverse(h.count), h.id));
    all.truncate(k);
    all
}

fn config_strategy() -> impl Strategy<Value = NGramConfig> {
    (1usize..5, any::<bool>(), any::<bool>()).prop_map(|(n, pad, bytes)| {
        let alphabet = if bytes {
            Alphabet::Bytes
        } else {
            Alphabet::Chars
        };
        NGramConfig::new(n, alphabet, pad).unwrap()
    })
}

fn text(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(vec!["a", "b", "c", "é"]), 0..max)
        .prop_map(|v| v.concat().into_bytes())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The index's match count of two sequences is Lemma 5.1's sum of minimum repetitions.
    #[test]
    fn lemma_5_1(config in config_strategy(), seqs in prop::collection::vec(text(10), 1..8), q in text(10)) {
        let f = Fixture::new(config, &seqs);
        let query = f.transform.prepare(&q).unwrap();
        let mut kws = Vec::new();
        for (id, s) in seqs.iter().enumerate() {
            kws.clear();
            f.transform.keywords(s, &mut kws).unwrap();
            let expected = lemma_count(&config, s, &q);
            prop_assert_eq!(oracle::match_count(&query.query, &kws), u64::from(expected), "object {}", id);
        }
        let hits = f.engine.search(std::slice::from_ref(&query.query), &SearchParams::top_k(seqs.len() as u32)).unwrap();
        for h in &hits[0] {
            prop_assert_eq!(h.count, lemma_count(&config, &seqs[h.id as usize], &q));
        }
    }

    /// Theorem 5.1: MC(G(S), G(Q)) >= |G(Q)| - n * ed(S, Q).
    #[test]
    fn theorem_5_1(config in config_strategy(), s in text(16), q in text(16)) {
        let f = Fixture::new(config, &[&s]);
        let query = f.transform.prepare(&q).unwrap();
        let ed = edit_distance_dp(&config.alphabet.symbols(&s).unwrap(), &query.symbols);
        let mc = i64::from(lemma_count(&config, &s, &q));
        prop_assert!(mc >= config.count_bound(query.grams, ed));
    }

    /// A result flagged exact equals the brute-force top-k; every result is in the right order
    /// with true distances and counts.
    #[test]
    fn certificate_is_sound(
        config in config_strategy(),
        seqs in prop::collection::vec(text(9), 1..24),
        queries in prop::collection::vec(text(9), 1..6),
        k in 1u32..4,
        big_k in 1u32..8,
        cap in 1u32..32,
    ) {
        let f = Fixture::new(config, &seqs);
        let params = SequenceSearchParams::top_k(k).with_candidates(big_k).repeat_until(cap);
        let refs: Vec<&[u8]> = queries.iter().map(|q| q.as_slice()).collect();
        let results = f.searcher().search(&refs, &params).unwrap();
        let full = f.searcher().search(&refs, &params.clone().exhaustive()).unwrap();
        for ((q, r), all) in queries.iter().zip(&results).zip(&full) {
            let truth = brute_force(&config, &seqs, q, k as usize);
            if r.exact {
                prop_assert_eq!(&r.hits, &truth);
            }
            prop_assert!(all.exact);
            prop_assert_eq!(&all.hits, &truth);
            for h in &r.hits {
                let t = brute_force(&config, &seqs[h.id as usize..=h.id as usize], q, 1)[0];
                prop_assert_eq!((h.count, h.distance), (t.count, t.distance));
            }
            let keys: Vec<_> = r.hits.iter().map(|h| (h.distance, std::cmp::Reverse(h.count), h.id)).collect();
            prop_assert!(keys.windows(2).all(|w| w[0] < w[1]));
        }
    }
}

#[test]
fn example_5_1_through_the_index() {
    let config = NGramConfig::new(3, Alphabet::Bytes, false).unwrap();
    let f = Fixture::new(config, &["aabaab", "aab", "baab"]);
    let r = f
        .searcher()
        .search(&[b"aabaab"], &SequenceSearchParams::top_k(3))
        .unwrap();
    let got: Vec<(u32, u32, u32)> = r[0]
        .hits
        .iter()
        .map(|h| (h.id, h.count, h.distance))
        .collect();
    // counts: aab: (aab, 0) -> 1; baab: (baa, 0), (aab, 0) -> 2
    assert_eq!(got, [(0, 4, 0), (2, 2, 2), (1, 1, 3)]);
    assert!(r[0].exact);
}

#[test]
fn sequences_shorter_than_n() {
    // without padding, "ab" has no 3-gram: an empty object, still id 1, found only by a scan
    let config = NGramConfig::new(3, Alphabet::Chars, false).unwrap();
    let f = Fixture::new(config, &["abc", "ab", "abd"]);
    let r = f
        .searcher()
        .search(&[b"ab", b"abc"], &SequenceSearchParams::top_k(1))
        .unwrap();
    assert!(r[0].hits.is_empty());
    assert!(!r[0].exact);
    assert_eq!(r[1].hits[0].id, 0);
    // with padding every sequence has len + n - 1 n-grams
    let f = Fixture::new(NGramConfig::default(), &["abc", "ab", "abd"]);
    let r = f
        .searcher()
        .search(&[b"ab"], &SequenceSearchParams::top_k(1))
        .unwrap();
    assert_eq!((r[0].hits[0].id, r[0].hits[0].distance), (1, 0));
    assert!(r[0].exact);
}

#[test]
fn non_utf8_sequences() {
    let seqs: [&[u8]; 2] = [b"ok", b"bad \xff"];
    let e = SequenceTransform::build(NGramConfig::default(), seqs).unwrap_err();
    assert!(matches!(e, SaError::NotUtf8 { offset: 4 }), "{e}");
    let bytes = NGramConfig::new(3, Alphabet::Bytes, true).unwrap();
    assert!(SequenceTransform::build(bytes, seqs).is_ok());
}

/// 2,000 words of the word list, 300 queries with 10-40% of their letters changed: every result
/// flagged exact equals brute force, and the exhaustive mode equals brute force for all.
#[test]
fn real_words_against_brute_force() {
    let Some(dir) = data_dir("words") else { return };
    let text = std::fs::read_to_string(dir.join("american-english")).unwrap();
    let all: Vec<&str> = text.lines().collect();
    let step = all.len() / 2000;
    let words: Vec<Vec<u8>> = (0..2000)
        .map(|i| all[i * step].as_bytes().to_vec())
        .collect();
    let config = NGramConfig::default();
    let f = Fixture::new(config, &words);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let queries: Vec<String> = (0..300)
        .map(|i| {
            let w = std::str::from_utf8(&words[rng.below(words.len())]).unwrap();
            modify(w, [0.1, 0.2, 0.3, 0.4][i % 4], &mut rng)
        })
        .collect();
    let refs: Vec<&[u8]> = queries.iter().map(|q| q.as_bytes()).collect();
    for k in [1u32, 3] {
        let truth: Vec<_> = queries
            .iter()
            .map(|q| brute_force(&config, &words, q.as_bytes(), k as usize))
            .collect();
        let results = f
            .searcher()
            .search(&refs, &SequenceSearchParams::top_k(k))
            .unwrap();
        let mut exact = 0;
        for ((q, r), t) in queries.iter().zip(&results).zip(&truth) {
            if r.exact {
                exact += 1;
                assert_eq!(&r.hits, t, "query {q:?}");
            }
        }
        // one count at the largest K, rounds by prefixes: the same answers, field for field
        let once = f
            .searcher()
            .count_once(true)
            .search(&refs, &SequenceSearchParams::top_k(k))
            .unwrap();
        assert_eq!(
            once, results,
            "k = {k}: counting once differs from the rounds"
        );
        let params = SequenceSearchParams::top_k(k).exhaustive();
        let full = f.searcher().search(&refs, &params).unwrap();
        for ((q, r), t) in queries.iter().zip(&full).zip(&truth) {
            assert!(r.exact);
            assert_eq!(&r.hits, t, "query {q:?}");
        }
        println!("k = {k}: {exact}/300 proven exact without the exhaustive fallback");
        assert!(exact >= if k == 1 { 240 } else { 10 }, "{exact}");
    }
}
