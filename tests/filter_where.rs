//! Filters by a condition on columns (`"where"`) on table indexes, built and live, through the
//! library, the server (127.0.0.1) and the CLI: the hits are those of the unfiltered search
//! among the rows that meet the condition, in the same order.

use genie::kind::{BuildJob, Filter, KindIndex, Options, Registry, Request};
use genie::live::{LiveConfig, LiveIndex};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;

#[path = "common/live.rs"]
mod live;
use live::both;
#[path = "common/serve.rs"]
mod serve;

const JOBS: [&str; 3] = ["clerk", "pilot", "nurse"];

/// Rows `(age, job, hours)`: a fixed pattern.
fn rows() -> Vec<(u32, &'static str, u32)> {
    (0..120u32)
        .map(|i| {
            (
                20 + (i * 7) % 45,
                JOBS[(i % 3) as usize],
                10 + (i * 11) % 50,
            )
        })
        .collect()
}

fn write_table(path: &Path) {
    let mut csv = String::from("age,job,hours\n");
    for (a, j, h) in rows() {
        csv.push_str(&format!("{a},{j},{h}\n"));
    }
    std::fs::write(path, csv).expect("csv");
}

fn search(index: &dyn KindIndex, q: &str, k: u32, filter: Option<&Filter>) -> Vec<(u64, u32)> {
    live::answer(index, &json!(q), &Options::new(), k, filter)
        .hits
        .iter()
        .map(|h| (h.id, h.count))
        .collect()
}

/// The hits of `q` among the rows `keep` says yes to: the unfiltered answer, cut.
fn expected(index: &dyn KindIndex, q: &str, k: u32, keep: impl Fn(u64) -> bool) -> Vec<(u64, u32)> {
    let mut all = search(index, q, 10_000, None);
    all.retain(|h| keep(h.0));
    all.truncate(k as usize);
    all
}

fn check(index: &dyn KindIndex, extra: &[(u64, &'static str)]) {
    let job_of = |id: u64| -> &str {
        extra
            .iter()
            .find(|e| e.0 == id)
            .map(|e| e.1)
            .unwrap_or_else(|| rows()[id as usize].1)
    };
    for q in [
        "age=30..40 hours=20..30",
        "job=nurse age=25",
        "hours=50..59",
    ] {
        for (condition, job) in [("job=clerk", "clerk"), ("job=pilot", "pilot")] {
            let f = Filter::new(None, Vec::new()).with_condition(condition);
            assert_eq!(
                search(index, q, 5, Some(&f)),
                expected(index, q, 5, |id| job_of(id) == job),
                "{q} where {condition}"
            );
        }
        // with ids too: the allowed rows that meet it
        let f = Filter::new(Some((0..60).collect()), vec![3]).with_condition("job=clerk");
        assert_eq!(
            search(index, q, 5, Some(&f)),
            expected(index, q, 5, |id| id < 60
                && id != 3
                && job_of(id) == "clerk")
        );
    }
    // every condition met: rows of age bins touching 30..35 that are nurses
    let f = Filter::new(None, Vec::new()).with_condition("job=nurse age=30..35");
    let hits = search(index, "hours=10..59", 200, Some(&f));
    assert!(!hits.is_empty());
    for (id, _) in &hits {
        assert_eq!(job_of(*id), "nurse");
    }
    for (i, (a, j, _)) in rows().iter().enumerate() {
        if *j == "nurse" && (30..=35).contains(a) && !extra.iter().any(|e| e.0 == i as u64) {
            assert!(
                hits.iter().any(|h| h.0 == i as u64),
                "row {i} (age {a}) left out"
            );
        }
    }
    let bad = Filter::new(None, Vec::new()).with_condition("salary=3");
    let q = index
        .parse(&json!("job=clerk"), &Options::new())
        .expect("q");
    let e = index
        .search(&[Request {
            query: q.as_ref(),
            k: 3,
            min_count: None,
            filter: Some(&bad),
        }])
        .expect_err("an unknown column");
    assert!(e.to_string().contains("salary"), "{e}");
}

#[test]
fn where_filters_keep_the_rows_that_meet_them_built_and_live() {
    let dir = tempfile::tempdir().expect("dir");
    let input = dir.path().join("t.csv");
    write_table(&input);
    let file = dir.path().join("t.genie");
    let registry = Registry::default();
    registry
        .get("table")
        .expect("table")
        .build(&BuildJob {
            input: &input,
            output: &file,
            options: &Options::new(),
            progress: &|_| {},
        })
        .expect("built");
    let loaded = genie::open::load(&registry, &file).expect("loaded");
    let built = both::Both::file(&loaded);
    check(built.as_ref(), &[]);
    let live = LiveIndex::open_file(
        &registry,
        &file,
        LiveConfig {
            background: false,
            ..LiveConfig::default()
        },
    )
    .expect("live");
    // a row replaced (its job changes), one added; then in segments and merged
    live.add(&[0, 500], &[json!("33, nurse, 25"), json!("31, clerk, 22")])
        .expect("added");
    live.delete(&[4]).expect("deleted");
    let index: Arc<dyn KindIndex> = both::Both::live(&live);
    let extra = [(0, "nurse"), (500, "clerk")];
    check(index.as_ref(), &extra);
    live.compact().expect("compacted");
    check(index.as_ref(), &extra);
}

#[test]
fn the_server_and_the_cli_take_where_filters() {
    let dir = tempfile::tempdir().expect("dir");
    let input = dir.path().join("t.csv");
    write_table(&input);
    let file = dir.path().join("t.genie");
    let kw = dir.path().join("k.genie");
    std::fs::write(dir.path().join("k.txt"), "1 2\n2 3\n").expect("k");
    let genie = serve::binary();
    let run = |args: &[&str]| live::genie_in(&genie, dir.path(), args);
    for args in [
        &[
            "build", "--kind", "table", "--input", "t.csv", "--output", "t.genie",
        ][..],
        &["build", "--input", "k.txt", "--output", "k.genie"][..],
    ] {
        assert!(run(args).status.success());
    }
    std::fs::write(dir.path().join("q.txt"), "age=30..40\n").expect("q");
    let search_where = |condition: &str, k: &str| {
        run(&[
            "search",
            "--index",
            "t.genie",
            "--queries",
            "q.txt",
            "-k",
            k,
            "--device",
            "cpu",
            "--filter-where",
            condition,
        ])
    };
    let out = search_where("job=pilot", "50");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON line");
    let hits = v["hits"].as_array().expect("hits");
    assert!(!hits.is_empty());
    for h in hits {
        assert_eq!(rows()[h["id"].as_u64().expect("id") as usize].1, "pilot");
    }
    let out = search_where("job=astronaut", "5");
    // a category no row has: no row meets it
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON line");
    assert_eq!(v["hits"], json!([]));
    let out = search_where("salary=3", "5");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("salary") && !err.contains("panicked"));
    // the server
    let registry = Registry::default();
    let service = genie::service::Service::open(
        &registry,
        &[("t", file.as_path()), ("k", kw.as_path())],
        &serve::cpu(),
        genie::service::BatchPolicy::default(),
    )
    .expect("service");
    let server = serve::Server::start(service, genie::server::ServerConfig::default());
    let post = |index: &str, body: Value| -> (u16, Value) {
        let (status, text) = serve::call(
            "POST",
            &format!("{}/v1/indexes/{index}/search", server.url),
            None,
            Some(body.to_string().into_bytes()),
        );
        (status, serde_json::from_str(&text).expect("JSON"))
    };
    let (status, v) = post(
        "t",
        json!({"queries": ["age=30..40"], "k": 50, "filter": {"where": "job=pilot"}}),
    );
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["results"][0]["hits"].as_array().expect("hits"), hits);
    let (status, v) = post(
        "k",
        json!({"queries": [[1, 2]], "k": 5, "filter": {"where": "job=pilot"}}),
    );
    assert!(
        status == 400 && v["error"].as_str().expect("e").contains("where"),
        "{v}"
    );
    let (status, v) = post(
        "t",
        json!({"queries": ["age=30"], "k": 5, "filter": {"where": 3}}),
    );
    assert!(
        status == 400 && v["error"].as_str().expect("e").contains("where"),
        "{v}"
    );
}
