//! A process writing to a live index (adds, replacements, deletes from several threads, with
//! flushes and merges running in the background) is killed (SIGKILL) again and again; after each
//! kill the index reopens with every acknowledged write in it, and each write that was in flight
//! either wholly there or not at all.
//!
//! The test binary runs itself as the writer: with `GENIE_LIVE_CRASH_CHILD` set to the index's
//! folder, it writes and prints `ACK thread step` once each write has returned.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::time::Duration;

const CHILD: &str = "GENIE_LIVE_CRASH_CHILD";
const RUN: &str = "GENIE_LIVE_CRASH_RUN";
const TEST_NAME: &str = "killed_writers_keep_every_acknowledged_write";
/// Set for a child that writes documents (its words `w<keyword>`): their dictionary is learned
/// in the log's order and must survive the kills with the objects.
const DOCS: &str = "GENIE_LIVE_CRASH_DOCS";
const DOCS_TEST_NAME: &str = "killed_document_writers_keep_their_words";

/// The document of a keyword object: a word per keyword.
fn doc_of(kw: &[u32]) -> String {
    kw.iter()
        .map(|k| format!("w{k}"))
        .collect::<Vec<_>>()
        .join(" ")
}
const THREADS: u64 = 3;

/// What step `step` of thread `thread` in run `run` does: (id, Some(object)) to write, None to
/// delete. A thread's ids are its own; steps revisit them, so replacements and deletes happen.
fn step_of(run: u64, thread: u64, step: u64) -> Vec<(u64, Option<Vec<u32>>)> {
    let base = (run << 32) | (thread << 24);
    let n = 1 + step % 4;
    (0..n)
        .map(|j| {
            let id = base | ((step * 7 + j * 13) % 97);
            if (step + j) % 5 == 4 {
                (id, None)
            } else {
                let kw = (0..(step + j) % 9 + 1)
                    .map(|i| ((id as u32) ^ (step as u32 * 31 + i as u32 * 17)) % 5000)
                    .collect();
                (id, Some(kw))
            }
        })
        .collect()
}

fn normalized(mut kw: Vec<u32>) -> Vec<u32> {
    kw.sort_unstable();
    kw.dedup();
    kw
}

#[cfg(target_os = "linux")]
fn child(dir: &str, run: u64, docs: bool) {
    use genie::live::{LiveConfig, LiveIndex};
    use std::io::Write;
    use std::sync::Arc;
    let config = LiveConfig {
        flush_objects: 64,
        flush_age: Duration::from_millis(5),
        merge_factor: 3,
        background: true,
        refresh: Duration::ZERO,
    };
    let path = std::path::Path::new(dir);
    let live = if LiveIndex::is_live(path) {
        LiveIndex::open(path, config).unwrap()
    } else {
        let kind = if docs { "documents" } else { "keywords" };
        LiveIndex::create(path, kind, config).unwrap()
    };
    println!("OPEN");
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let live = Arc::clone(&live);
            std::thread::spawn(move || {
                for step in 0u64.. {
                    let ops = step_of(run, t, step);
                    let writes: Vec<(u64, Vec<u32>)> = ops
                        .iter()
                        .filter_map(|(id, o)| o.clone().map(|o| (*id, o)))
                        .collect();
                    let deletes: Vec<u64> = ops
                        .iter()
                        .filter(|(_, o)| o.is_none())
                        .map(|(id, _)| *id)
                        .collect();
                    // one step is one write call: its deletes come after its objects
                    let ids: Vec<u64> = writes.iter().map(|w| w.0).collect();
                    if docs {
                        let texts: Vec<serde_json::Value> =
                            writes.iter().map(|w| doc_of(&w.1).into()).collect();
                        live.add(&ids, &texts).unwrap();
                    } else {
                        live.add_keywords(&ids, writes.into_iter().map(|w| w.1).collect())
                            .unwrap();
                    }
                    live.delete(&deletes).unwrap();
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "ACK {t} {step}").unwrap();
                    out.flush().unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        let _ = t.join();
    }
}

#[test]
fn killed_writers_keep_every_acknowledged_write() {
    if let Ok(dir) = std::env::var(CHILD) {
        let run: u64 = std::env::var(RUN).unwrap().parse().unwrap();
        #[cfg(target_os = "linux")]
        child(&dir, run, false);
        let _ = (dir, run);
        return;
    }
    #[cfg(target_os = "linux")]
    parent(false);
    #[cfg(not(target_os = "linux"))]
    eprintln!("skipped: the crash test kills a child process with SIGKILL, on Linux only");
}

#[test]
fn killed_document_writers_keep_their_words() {
    if let Ok(dir) = std::env::var(CHILD) {
        let run: u64 = std::env::var(RUN).unwrap().parse().unwrap();
        #[cfg(target_os = "linux")]
        child(&dir, run, std::env::var_os(DOCS).is_some());
        let _ = (dir, run);
        return;
    }
    #[cfg(target_os = "linux")]
    parent(true);
    #[cfg(not(target_os = "linux"))]
    eprintln!("skipped: the crash test kills a child process with SIGKILL, on Linux only");
}

/// Whether the document of `id` in the reopened index is the one of `words`: it has as many
/// keywords as words, and a search for its words (it alone allowed) counts them all, so its
/// keywords are its words' (the dictionary numbered them as when they were written).
#[cfg(target_os = "linux")]
fn document_is(
    index: &dyn genie::kind::KindIndex,
    got: &BTreeMap<u64, Vec<u32>>,
    id: u64,
    words: &[u32],
) -> bool {
    use genie::kind::{Filter, Options, Request};
    if got.get(&id).map(Vec::len) != Some(words.len()) {
        return false;
    }
    let q = index
        .parse(&serde_json::json!(doc_of(words)), &Options::new())
        .unwrap();
    let only = Filter::allow(vec![id]);
    let request = Request {
        query: q.as_ref(),
        k: 1,
        min_count: None,
        filter: Some(&only),
    };
    let hits = &index.search(&[request]).unwrap()[0].hits;
    hits.iter().map(|h| (h.id, h.count)).collect::<Vec<_>>() == [(id, words.len() as u32)]
}

/// Applies step `step` of a thread to the model.
fn apply(model: &mut BTreeMap<u64, Vec<u32>>, run: u64, thread: u64, step: u64) {
    let ops = step_of(run, thread, step);
    for (id, o) in &ops {
        if let Some(o) = o {
            model.insert(*id, normalized(o.clone()));
        }
    }
    for (id, o) in &ops {
        if o.is_none() {
            model.remove(id);
        }
    }
}

#[cfg(target_os = "linux")]
fn parent(docs: bool) {
    use genie::live::{LiveConfig, LiveIndex};
    use rand::Rng;
    use std::io::Read;
    use std::process::{Command, Stdio};
    use std::time::Instant;

    // GENIE_LIVE_CRASH_KILLS asks for more (the device run: 1,000), with time for them
    let kills_wanted: usize = std::env::var("GENIE_LIVE_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
        / if docs { 4 } else { 1 };
    let (max_kills, min_kills) = (kills_wanted, kills_wanted / 5);
    let budget = Duration::from_secs(40.max(kills_wanted as u64 / 4));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live");
    let exe = std::env::current_exe().unwrap();
    let mut rng = rand::rng();
    let start = Instant::now();
    let mut model: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    let (mut kills, mut acked_total) = (0usize, 0u64);
    let config = LiveConfig {
        background: false,
        ..LiveConfig::default()
    };
    while kills < max_kills && start.elapsed() < budget {
        let run = kills as u64;
        let mut child = Command::new(&exe)
            .args([
                if docs { DOCS_TEST_NAME } else { TEST_NAME },
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, &path)
            .envs(docs.then_some((DOCS, "1")))
            .env(RUN, run.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.random_range(2_000..60_000)));
        child.kill().unwrap();
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        let _ = child.wait().unwrap();
        kills += 1;
        let whole = out.rfind('\n').map_or("", |end| &out[..end]);
        let mut done = [0u64; THREADS as usize];
        for line in whole.lines().filter_map(|l| l.strip_prefix("ACK ")) {
            let (t, s) = line.split_once(' ').unwrap();
            let (t, s): (usize, u64) = (t.parse().unwrap(), s.parse().unwrap());
            assert_eq!(done[t], s, "steps of a thread acknowledged out of order");
            done[t] = s + 1;
            acked_total += 1;
        }
        for (t, &n) in done.iter().enumerate() {
            for s in 0..n {
                apply(&mut model, run, t as u64, s);
            }
        }
        if !LiveIndex::is_live(&path) {
            assert!(
                model.is_empty(),
                "writes acknowledged before the index existed"
            );
            continue;
        }
        let live = LiveIndex::open(&path, config.clone()).unwrap();
        let got = live.objects().unwrap();
        // each thread's step in flight may be there in part (its objects, not yet its deletes)
        // or whole; the ids it touches are left out of the comparison and settled from the index
        let mut unsure = std::collections::BTreeSet::new();
        for (t, &n) in done.iter().enumerate() {
            for (id, _) in step_of(run, t as u64, n) {
                unsure.insert(id);
            }
        }
        if docs {
            let index = genie::live::place_live(&live, &genie::open::OpenSpec::default())
                .unwrap()
                .remove(0);
            let settled: Vec<(u64, Option<Vec<u32>>)> = unsure
                .iter()
                .map(|&id| {
                    if !got.contains_key(&id) {
                        return (id, None);
                    }
                    // the step in flight, or what was there before it
                    let versions = done
                        .iter()
                        .enumerate()
                        .flat_map(|(t, &n)| step_of(run, t as u64, n))
                        .filter(|(i, _)| *i == id)
                        .filter_map(|(_, o)| o.map(normalized))
                        .chain(model.get(&id).cloned());
                    let found = versions
                        .into_iter()
                        .find(|w| document_is(index.as_ref(), &got, id, w));
                    assert!(
                        found.is_some(),
                        "kill {kills}: id {id} holds a document never written"
                    );
                    (id, found)
                })
                .collect();
            // the others: every one there, and (a sample, each a search) with its words
            for (n, (id, words)) in model
                .iter()
                .filter(|(id, _)| !unsure.contains(id))
                .enumerate()
            {
                assert!(got.contains_key(id), "kill {kills}: id {id} lost");
                if n % 8 == 0 {
                    assert!(
                        document_is(index.as_ref(), &got, *id, words),
                        "kill {kills}: id {id}'s words are not its keywords"
                    );
                }
            }
            for id in got.keys() {
                assert!(
                    model.contains_key(id) || unsure.contains(id),
                    "kill {kills}: id {id} was deleted"
                );
            }
            for (id, found) in settled {
                match found {
                    Some(w) => model.insert(id, w),
                    None => model.remove(&id),
                };
            }
            drop(index);
            drop(live);
            continue;
        }
        for (id, kw) in &model {
            if !unsure.contains(id) {
                assert_eq!(
                    got.get(id),
                    Some(kw),
                    "kill {kills}: id {id} lost or changed"
                );
            }
        }
        for (id, kw) in &got {
            if unsure.contains(id) {
                let in_flight = done.iter().enumerate().any(|(t, &n)| {
                    step_of(run, t as u64, n).iter().any(|(i, o)| {
                        i == id && o.as_ref().map(|o| normalized(o.clone())) == Some(kw.clone())
                    })
                });
                assert!(
                    in_flight || model.get(id) == Some(kw),
                    "kill {kills}: id {id} holds an object never written"
                );
            } else {
                assert!(model.contains_key(id), "kill {kills}: id {id} was deleted");
            }
        }
        // settle the model on what the index holds for the ids of steps in flight
        for id in unsure {
            match got.get(&id) {
                Some(kw) => model.insert(id, kw.clone()),
                None => model.remove(&id),
            };
        }
        drop(live);
    }
    eprintln!(
        "{kills} kills in {:.1} s, {acked_total} steps acknowledged, {} live objects",
        start.elapsed().as_secs_f64(),
        model.len()
    );
    assert!(kills >= min_kills, "only {kills} kills in {budget:?}");
    assert!(acked_total > 0, "no child acknowledged a write");
}
