//! Live indexes against a model: random interleavings of adds, upserts, deletes, flushes,
//! merges, reopenings and filtered searches, each search compared with brute force over the
//! model's live, allowed objects.

use super::*;
use crate::kind::{Filter, KindIndex, Request};
use crate::open::OpenSpec;
use genie_core::oracle::match_count;
use genie_core::{DeviceChoice, Item, Query};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

type Model = BTreeMap<u64, Vec<u32>>;

#[derive(Clone, Debug)]
enum Op {
    Add(Vec<(u64, Vec<u32>)>),
    Delete(Vec<u64>),
    Flush,
    Merge,
    Compact,
    Reopen,
    Search {
        query: Vec<(u32, u32, u32)>,
        k: u32,
        allow: Option<Vec<u64>>,
        deny: Vec<u64>,
    },
}

const IDS: u64 = 60;
const SPACE: u32 = 24;

fn op() -> impl Strategy<Value = Op> {
    let object = proptest::collection::vec(0..SPACE, 0..6);
    let ids = proptest::collection::vec(0..IDS, 0..8);
    prop_oneof![
        4 => proptest::collection::vec((0..IDS, object), 1..12).prop_map(Op::Add),
        2 => ids.clone().prop_map(Op::Delete),
        1 => Just(Op::Flush),
        1 => Just(Op::Merge),
        1 => Just(Op::Compact),
        1 => Just(Op::Reopen),
        4 => (
            proptest::collection::vec((0..SPACE, 0..3u32, 1..3u32), 1..5),
            0..12u32,
            proptest::option::of(ids.clone()),
            ids,
        )
            .prop_map(|(query, k, allow, deny)| Op::Search { query, k, allow, deny }),
    ]
}

fn config() -> LiveConfig {
    LiveConfig {
        merge_factor: 3,
        background: false,
        ..LiveConfig::default()
    }
}

fn temp_dir(tag: &str) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "genie-live-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn expected(model: &Model, query: &Query, k: u32, filter: &Filter) -> Vec<(u64, u32)> {
    let mut hits: Vec<(u64, u32)> = model
        .iter()
        .filter(|(id, _)| filter.passes(**id))
        .filter_map(|(&id, o)| {
            let c = match_count(query, o) as u32;
            (c > 0).then_some((id, c))
        })
        .collect();
    hits.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    hits.truncate(k as usize);
    hits
}

fn replica(live: &Arc<LiveIndex>) -> Arc<dyn KindIndex> {
    on(live, DeviceChoice::Cpu).expect("placed")
}

fn on(live: &Arc<LiveIndex>, device: DeviceChoice) -> Result<Arc<dyn KindIndex>, DataError> {
    let spec = OpenSpec {
        device,
        devices: (device == DeviceChoice::Gpu).then(|| vec![0]),
        ..OpenSpec::default()
    };
    Ok(place_live(live, &spec)?.remove(0))
}

/// The GPU replica, when there is a GPU (else why not, printed).
fn gpu_replica(live: &Arc<LiveIndex>) -> Option<Arc<dyn KindIndex>> {
    match on(live, DeviceChoice::Gpu) {
        Ok(r) => Some(r),
        Err(e) => {
            eprintln!("GPU side skipped: {e}");
            None
        }
    }
}

fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let dir = temp_dir("model");
    let mut live = LiveIndex::create(&dir, "keywords", config()).expect("created");
    let mut placed = replica(&live);
    let mut gpu = gpu_replica(&live);
    let mut model = Model::new();
    for op in ops {
        match op {
            Op::Add(objects) => {
                let ids: Vec<u64> = objects.iter().map(|o| o.0).collect();
                let kws: Vec<Vec<u32>> = objects.iter().map(|o| o.1.clone()).collect();
                live.add_keywords(&ids, kws).expect("added");
                for (id, kw) in objects {
                    model.insert(id, kw);
                }
            }
            Op::Delete(ids) => {
                let want = ids
                    .iter()
                    .collect::<std::collections::BTreeSet<_>>()
                    .iter()
                    .filter(|id| model.contains_key(id))
                    .count() as u64;
                prop_assert_eq!(live.delete(&ids).expect("deleted"), want);
                for id in ids {
                    model.remove(&id);
                }
            }
            Op::Flush => live.flush().expect("flushed"),
            Op::Merge => while live.merge_once().expect("merged") {},
            Op::Compact => live.compact().expect("compacted"),
            Op::Reopen => {
                drop(placed);
                drop(gpu);
                drop(live);
                live = LiveIndex::open(&dir, config()).expect("reopened");
                placed = replica(&live);
                gpu = gpu_replica(&live);
            }
            Op::Search {
                query,
                k,
                allow,
                deny,
            } => {
                let query = Query::new(
                    query
                        .into_iter()
                        .map(|(lo, w, weight)| {
                            Item::new(lo, (lo + w).min(SPACE), weight).expect("item")
                        })
                        .collect(),
                )
                .expect("query");
                let filter = Filter::new(allow, deny);
                let request = Request {
                    query: &query,
                    k,
                    min_count: None,
                    filter: (!filter.is_everything()).then_some(&filter),
                };
                let answer = placed.search(&[request]).expect("searched").remove(0);
                let got: Vec<(u64, u32)> = answer.hits.iter().map(|h| (h.id, h.count)).collect();
                prop_assert_eq!(&got, &expected(&model, &query, k, &filter));
                if let Some(g) = &gpu {
                    let on_gpu = g.search(&[request]).expect("searched on the GPU").remove(0);
                    prop_assert_eq!(on_gpu.hits, answer.hits, "GPU and CPU differ");
                }
            }
        }
        prop_assert_eq!(live.live_objects(), model.len() as u64);
    }
    drop(placed);
    drop(gpu);
    drop(live);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn live_indexes_answer_as_brute_force_over_the_live_objects(
        ops in proptest::collection::vec(op(), 1..40)
    ) {
        run(ops)?;
    }
}

#[test]
fn an_index_file_becomes_the_first_segment_and_keeps_row_ids() {
    let dir = temp_dir("file");
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("base.genie");
    let index =
        crate::kind::keywords::build_csr(&[0, 2, 4, 5], &[1, 2, 2, 3, 1], "base").expect("built");
    index.save(&file).expect("saved");
    let registry = crate::kind::Registry::default();
    let live = LiveIndex::open_file(&registry, &file, config()).expect("live");
    live.add(&[7], &[serde_json::json!("1 2 3")])
        .expect("added");
    live.delete(&[0]).expect("deleted");
    let placed = replica(&live);
    let q = Query::from_keywords(&[1, 2]);
    let request = Request {
        query: &q,
        k: 10,
        min_count: None,
        filter: None,
    };
    let hits: Vec<(u64, u32)> = placed.search(&[request]).expect("search")[0]
        .hits
        .iter()
        .map(|h| (h.id, h.count))
        .collect();
    assert_eq!(hits, [(7, 2), (1, 1), (2, 1)]);
    live.compact().expect("compacted");
    drop(placed);
    drop(live);
    // the file is never changed, and a reopening sees the same
    assert_eq!(
        genie_core::InvertedIndex::load(&file)
            .expect("base")
            .num_objects(),
        3
    );
    let live = LiveIndex::open_file(&registry, &file, config()).expect("reopened");
    let placed = replica(&live);
    let again: Vec<(u64, u32)> = placed.search(&[request]).expect("search")[0]
        .hits
        .iter()
        .map(|h| (h.id, h.count))
        .collect();
    assert_eq!(again, [(7, 2), (1, 1), (2, 1)]);
    assert_eq!(live.stats().segments, 1);
    drop(placed);
    drop(live);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_objects_are_refused_naming_the_object() {
    let dir = temp_dir("bad");
    let live = LiveIndex::create(&dir, "keywords", config()).expect("created");
    let e = live
        .add(
            &[1, 2],
            &[serde_json::json!("1 2"), serde_json::json!("3 x")],
        )
        .expect_err("bad keyword");
    assert!(e.to_string().contains("object 1 (id 2)"), "{e}");
    assert!(live.add(&[1], &[]).is_err());
    assert_eq!(
        live.live_objects(),
        0,
        "nothing of a refused batch is written"
    );
    drop(live);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn writers_and_searches_at_once_leave_the_objects_written() {
    let dir = temp_dir("threads");
    let cfg = LiveConfig {
        merge_factor: 3,
        refresh: Duration::ZERO,
        ..LiveConfig::default()
    };
    let live = LiveIndex::create(&dir, "keywords", cfg).expect("created");
    let placed = replica(&live);
    let stop = AtomicBool::new(false);
    let models: Vec<Model> = std::thread::scope(|s| {
        let readers: Vec<_> = (0..2)
            .map(|r| {
                let (placed, stop) = (&placed, &stop);
                s.spawn(move || {
                    let q = Query::from_keywords(&[r, 3, 7]);
                    let mut searches = 0;
                    while !stop.load(Ordering::Relaxed) || searches == 0 {
                        let request = Request {
                            query: &q,
                            k: 5,
                            min_count: None,
                            filter: None,
                        };
                        let hits = &placed.search(&[request]).expect("searched")[0].hits;
                        assert!(hits.windows(2).all(|w| w[0].count >= w[1].count));
                        searches += 1;
                    }
                })
            })
            .collect();
        let writers: Vec<_> = (0..3u64)
            .map(|t| {
                let live = &live;
                s.spawn(move || {
                    let mut model = Model::new();
                    for step in 0..300u64 {
                        let id = (t << 32) | (step * 7 % 41);
                        if step % 4 == 3 {
                            live.delete(&[id]).expect("deleted");
                            model.remove(&id);
                        } else {
                            let kw = vec![(step % 11) as u32, (t as u32) + 20];
                            live.add_keywords(&[id], vec![kw.clone()]).expect("added");
                            model.insert(id, kw);
                        }
                        if step % 50 == 0 {
                            while live.merge_once().expect("merged") {}
                        }
                    }
                    model
                })
            })
            .collect();
        let models = writers
            .into_iter()
            .map(|w| w.join().expect("writer"))
            .collect();
        stop.store(true, Ordering::Relaxed);
        for r in readers {
            r.join().expect("reader");
        }
        models
    });
    let mut want = Model::new();
    for m in models {
        want.extend(
            m.into_iter()
                .map(|(id, kw)| (id, crate::kind::codec::normalize(kw))),
        );
    }
    assert_eq!(live.objects().expect("objects"), want);
    live.flush().expect("flushed");
    drop(placed);
    drop(live);
    let again = LiveIndex::open(&dir, config()).expect("reopened");
    assert_eq!(again.objects().expect("objects"), want);
    drop(again);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_index_file_rebuilt_under_its_live_index_is_refused() {
    let dir = temp_dir("rebuilt");
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("base.genie");
    let build = |offsets: &[u64], keywords: &[u32]| {
        crate::kind::keywords::build_csr(offsets, keywords, "base")
            .expect("built")
            .save(&file)
            .expect("saved");
    };
    build(&[0, 2, 4], &[1, 2, 2, 3]);
    let registry = crate::kind::Registry::default();
    let live = LiveIndex::open_file(&registry, &file, config()).expect("live");
    drop(live);
    build(&[0, 1, 2, 3], &[1, 2, 3]);
    let e = LiveIndex::open_file(&registry, &file, config()).expect_err("another file");
    assert!(e.to_string().contains("rebuilt"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_refresh_interval_spaces_the_refreshes_of_searches_back_to_back() {
    let dir = temp_dir("refresh");
    let cfg = LiveConfig {
        refresh: Duration::from_millis(300),
        background: false,
        ..LiveConfig::default()
    };
    let live = LiveIndex::create(&dir, "keywords", cfg).expect("created");
    live.add_keywords(&[1], vec![vec![4]]).expect("added");
    // no search had the snapshot of the opening: the first search sees the write
    assert_eq!(live.snapshot().expect("snapshot").live_objects, 1);
    live.add_keywords(&[2], vec![vec![4]]).expect("added");
    let t = Instant::now();
    let second = live.snapshot().expect("snapshot").live_objects;
    if t.elapsed() < Duration::from_millis(250) {
        assert_eq!(
            second, 1,
            "a search right after another waits for the interval"
        );
    }
    std::thread::sleep(Duration::from_millis(320));
    assert_eq!(live.snapshot().expect("snapshot").live_objects, 2);
    drop(live);
    let _ = std::fs::remove_dir_all(&dir);
}
