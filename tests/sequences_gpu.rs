//! Sequences on the GPU: the device's edit distances against the plain dynamic program, and a
//! sequence search with its distances on the GPU (every round's, and the exhaustive pass)
//! against the CPU's, answer for answer. Without a
//! usable GPU each test prints why it skipped.
#![allow(clippy::unwrap_used)]

use genie::core::backend::{cuda_probe, CudaBackend};
use genie::core::{CpuBackend, Engine};
use genie::sa::sequences::edit_distance::edit_distance_dp;
use genie::sa::{
    build_sequence_index, Alphabet, DeviceSequences, NGramConfig, SequenceSearchParams,
    SequenceSearcher, SequenceStore, StringTable,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::Arc;

fn skip(reason: impl std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "skipped: {reason}");
}

/// A random text of `len` characters: mostly a few letters (so distances vary), some accented
/// and CJK characters.
fn text(rng: &mut StdRng, len: usize) -> String {
    const LETTERS: [char; 9] = ['a', 'b', 'c', 'd', 'e', 'é', 'ü', '日', '本'];
    (0..len)
        .map(|_| LETTERS[rng.random_range(0..LETTERS.len())])
        .collect()
}

fn symbols(s: &str) -> Vec<u32> {
    s.chars().map(u32::from).collect()
}

#[test]
fn device_distances_equal_the_dynamic_program() {
    if let Err(reason) = cuda_probe() {
        skip(reason);
        return;
    }
    let mut rng = StdRng::seed_from_u64(14);
    // empty, one letter, one word (up to 64), several words (up to 300)
    let mut seqs: Vec<String> = vec![String::new(), "a".into(), "日".into()];
    for _ in 0..297 {
        let len = match rng.random_range(0..4) {
            0 => rng.random_range(0..8),
            1 => rng.random_range(8..64),
            2 => rng.random_range(64..130),
            _ => rng.random_range(130..300),
        };
        seqs.push(text(&mut rng, len));
    }
    let table: StringTable = seqs.iter().collect();
    let store = SequenceStore::new(table, Alphabet::Chars).unwrap();
    let device = DeviceSequences::new(&store, 0).unwrap();
    // queries of every shape, one with a symbol no sequence has
    let mut queries: Vec<String> = vec![String::new(), "b".into(), "xyz".into()];
    for len in [5, 31, 32, 33, 63, 64, 65, 128, 129, 200, 300, 511, 512] {
        queries.push(text(&mut rng, len));
    }
    queries.push(format!("{}Ω{}", text(&mut rng, 40), text(&mut rng, 40)));
    let jobs: Vec<(Vec<u16>, u32)> = queries
        .iter()
        .map(|q| (device.pattern(&symbols(q)), u32::MAX))
        .collect();
    // k = all: every sequence within the largest distance, which is below the device's bins;
    // the jobs repeated past the blocks of one launch, so that blocks take second queries and
    // their scratch again
    let copies = 2100usize.div_ceil(jobs.len());
    let repeated: Vec<(Vec<u16>, u32)> = (0..copies).flat_map(|_| jobs.iter().cloned()).collect();
    let mut found = device.nearest(&repeated, seqs.len()).unwrap();
    let mut failures = Vec::new();
    for (i, again) in found.iter().enumerate().skip(jobs.len()) {
        let sorted = |w: &Option<Vec<(u32, u32)>>| {
            w.clone().map(|mut w| {
                w.sort_unstable();
                w
            })
        };
        if sorted(again) != sorted(&found[i % jobs.len()]) {
            failures.push(format!("copy {i} of query {} differs", i % jobs.len()));
        }
    }
    found.truncate(jobs.len());
    // the distances to given candidates, every sequence in reverse order and one twice
    let ids: Vec<u32> = (0..seqs.len() as u32).rev().chain([7]).collect();
    let pairs: Vec<(Vec<u16>, &[u32])> = jobs.iter().map(|(p, _)| (p.clone(), &ids[..])).collect();
    for (q, got) in queries.iter().zip(device.distances(&pairs).unwrap()) {
        let got = got.expect("a pattern of at most 512 symbols is taken");
        for (&id, &d) in ids.iter().zip(&got) {
            let want = edit_distance_dp(&symbols(q), &symbols(&seqs[id as usize]));
            if d != want {
                failures.push(format!(
                    "candidate {id} of a query of {} symbols: {d}, expected {want}",
                    q.chars().count()
                ));
            }
        }
    }
    for (q, within) in queries.iter().zip(found) {
        let Some(within) = within else {
            failures.push(format!("query of {} symbols: no answer", q.chars().count()));
            continue;
        };
        if within.len() != seqs.len() {
            failures.push(format!("{} of {} sequences", within.len(), seqs.len()));
        }
        for (id, d) in within {
            let want = edit_distance_dp(&symbols(q), &symbols(&seqs[id as usize]));
            if d != want {
                failures.push(format!(
                    "query of {} symbols, sequence {id}: {d}, expected {want}",
                    q.chars().count()
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{}",
        failures[..failures.len().min(10)].join("\n")
    );
}

#[test]
fn exhaustive_search_on_the_gpu_equals_the_cpu() {
    if let Err(reason) = cuda_probe() {
        skip(reason);
        return;
    }
    let mut rng = StdRng::seed_from_u64(41);
    let words: Vec<String> = (0..20_000)
        .map(|_| {
            let len = rng.random_range(1..14);
            text(&mut rng, len)
        })
        .collect();
    let table: StringTable = words.iter().collect();
    let config = NGramConfig::default();
    let (transform, index) = build_sequence_index(config, &table).unwrap();
    let index = Arc::new(index);
    let store = SequenceStore::new(table, Alphabet::Chars).unwrap();
    let cpu = Engine::with_backend(index.clone(), &CpuBackend::new()).unwrap();
    let gpu = Engine::with_backend(index, &CudaBackend::new(0).unwrap()).unwrap();
    let device = DeviceSequences::new(&store, 0).unwrap();
    // queries: words with a fifth of their letters changed, and unrelated texts, some long
    let queries: Vec<String> = (0..300)
        .map(|i| {
            if i % 5 == 4 {
                let len = rng.random_range(0..20);
                return text(&mut rng, len);
            }
            // longer than a word of 64: their rounds' distances are computed on the device
            if i % 5 == 3 {
                let len = rng.random_range(65..150);
                return text(&mut rng, len);
            }
            let mut w: Vec<char> = words[rng.random_range(0..words.len())].chars().collect();
            for _ in 0..(w.len() / 5).max(1) {
                let at = rng.random_range(0..w.len());
                w[at] = text(&mut rng, 1).chars().next().unwrap();
            }
            w.into_iter().collect()
        })
        .collect();
    let raw: Vec<&[u8]> = queries.iter().map(|q| q.as_bytes()).collect();
    let on_cpu = SequenceSearcher::new(&cpu, &transform, &store).unwrap();
    let on_gpu = SequenceSearcher::new(&gpu, &transform, &store)
        .unwrap()
        .with_device(Some(&device));
    for (k, exhaustive) in [(1, false), (10, false), (1, true), (10, true)] {
        let mut params = SequenceSearchParams::top_k(k);
        params.exhaustive = exhaustive;
        let want = on_cpu.search(&raw, &params).unwrap();
        let got = on_gpu.search(&raw, &params).unwrap();
        if !exhaustive {
            // every field: the rounds' distances on the device are the CPU's
            assert_eq!(got, want, "k = {k}, the rounds");
            continue;
        }
        assert!(
            want.iter().all(|r| r.exact),
            "k = {k}: an exhaustive answer unproven"
        );
        // (the distances computed differ: all objects on the CPU, those within on the GPU)
        for (q, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                (&g.hits, g.exact, g.candidates, g.rounds),
                (&w.hits, w.exact, w.candidates, w.rounds),
                "k = {k}, query {q} ({:?})",
                queries[q]
            );
        }
    }
}
