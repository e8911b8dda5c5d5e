//! Live indexes of documents and table rows: documents learn new words in the log's order and
//! keep their dictionary across flushes, merges and reopenings, each answer compared with brute
//! force over the live documents' word sets; table rows keep the build's bins; the CLI and the
//! server write them. Every search on the CPU and, where there is one, the GPU, compared.

use genie::kind::{Filter, KindIndex, Options, Registry};
use genie::live::{LiveConfig, LiveIndex};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

#[path = "common/live.rs"]
mod live;
use live::{build, config, cpu};

/// The hits `(id, count)` of one raw query.
fn search(
    index: &dyn KindIndex,
    raw: &Value,
    options: &Options,
    k: u32,
    filter: Option<&Filter>,
) -> Vec<(u64, u32)> {
    live::answer(index, raw, options, k, filter)
        .hits
        .iter()
        .map(|h| (h.id, h.count))
        .collect()
}

/// The distinct words of a document as the default tokenizer sees them.
fn words(doc: &str) -> BTreeSet<String> {
    genie_sa::Tokenizer::default()
        .words(doc)
        .into_iter()
        .collect()
}

fn expected(model: &BTreeMap<u64, String>, query: &str, k: u32) -> Vec<(u64, u32)> {
    let q = words(query);
    let mut hits: Vec<(u64, u32)> = model
        .iter()
        .filter_map(|(&id, d)| {
            let c = words(d).intersection(&q).count() as u32;
            (c > 0).then_some((id, c))
        })
        .collect();
    hits.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    hits.truncate(k as usize);
    hits
}

#[derive(Clone, Debug)]
enum Op {
    Add(Vec<(u64, String)>),
    Delete(Vec<u64>),
    Flush,
    Compact,
    Reopen,
    Search(String),
}

/// Words from a small vocabulary, some of them never in the built file.
fn doc() -> impl Strategy<Value = String> {
    const VOCAB: &[&str] = &[
        "river", "stone", "maple", "cloud", "ember", "quartz", "violet", "harbor", "lantern",
        "meadow", "falcon", "copper",
    ];
    proptest::collection::vec(0..VOCAB.len(), 0..6).prop_map(|w| {
        w.into_iter()
            .map(|i| VOCAB[i].to_uppercase())
            .collect::<Vec<_>>()
            .join(", ")
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => proptest::collection::vec((0u64..30, doc()), 1..5).prop_map(Op::Add),
        2 => proptest::collection::vec(0u64..30, 1..4).prop_map(Op::Delete),
        1 => Just(Op::Flush),
        1 => Just(Op::Compact),
        1 => Just(Op::Reopen),
        4 => doc().prop_map(Op::Search),
    ]
}

fn run_documents(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().expect("dir");
    let input = dir.path().join("docs.txt");
    // the built file knows only some of the words
    let base = ["river stone", "maple cloud river", "ember"];
    std::fs::write(&input, base.join("\n") + "\n").expect("docs");
    let file = dir.path().join("docs.genie");
    build("documents", &input, &file, &Options::new());
    let registry = Registry::default();
    let mut model: BTreeMap<u64, String> = (0..).zip(base.iter().map(|d| d.to_string())).collect();
    let mut live = LiveIndex::open_file(&registry, &file, config()).expect("live");
    let mut index = cpu(&live);
    for op in ops {
        match op {
            Op::Add(objects) => {
                let ids: Vec<u64> = objects.iter().map(|o| o.0).collect();
                let raw: Vec<Value> = objects.iter().map(|o| json!(o.1)).collect();
                live.add(&ids, &raw).expect("added");
                model.extend(objects);
            }
            Op::Delete(ids) => {
                let gone = live.delete(&ids).expect("deleted");
                let before = model.len();
                for id in &ids {
                    model.remove(id);
                }
                prop_assert_eq!(gone as usize, before - model.len());
            }
            Op::Flush => live.flush().expect("flushed"),
            Op::Compact => live.compact().expect("compacted"),
            Op::Reopen => {
                drop(index);
                drop(live);
                live = LiveIndex::open_file(&registry, &file, config()).expect("reopened");
                index = cpu(&live);
            }
            Op::Search(query) => {
                let got = search(index.as_ref(), &json!(query), &Options::new(), 5, None);
                prop_assert_eq!(got, expected(&model, &query, 5), "query {:?}", query);
            }
        }
    }
    prop_assert_eq!(live.live_objects(), model.len() as u64);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn live_documents_answer_as_brute_force_over_their_words(
        ops in proptest::collection::vec(op(), 1..24)
    ) {
        run_documents(ops)?;
    }
}

#[test]
fn learned_words_survive_a_merge_of_the_built_file_and_its_removal() {
    let dir = tempfile::tempdir().expect("dir");
    let input = dir.path().join("docs.txt");
    std::fs::write(&input, "red fox\nblue whale\n").expect("docs");
    let file = dir.path().join("docs.genie");
    build("documents", &input, &file, &Options::new());
    let registry = Registry::default();
    let folder = LiveIndex::folder_of(&file);
    {
        let live = LiveIndex::open_file(&registry, &file, config()).expect("live");
        live.add(&[10, 11], &[json!("Red panda"), json!("green sea turtle")])
            .expect("added");
        live.delete(&[1]).expect("deleted");
        live.compact().expect("compacted");
    }
    // the live folder no longer needs the built file or its dictionary
    std::fs::remove_file(&file).expect("removed");
    std::fs::remove_file(dir.path().join("docs.genie.words")).expect("removed words");
    let live = LiveIndex::open_with(&registry, &folder, config()).expect("reopened");
    let index = cpu(&live);
    let o = Options::new();
    assert_eq!(
        search(index.as_ref(), &json!("red turtle"), &o, 10, None),
        [(0, 1), (10, 1), (11, 1)]
    );
    assert_eq!(search(index.as_ref(), &json!("whale"), &o, 10, None), []);
    // a word learned after the reopening gets a keyword of its own, after the saved ones
    live.add(&[12], &[json!("turtle dove")]).expect("added");
    assert_eq!(
        search(index.as_ref(), &json!("dove turtle"), &o, 10, None),
        [(12, 2), (11, 1)]
    );
    let filter = Filter::from_json(Some(&json!({"ids": [11]})), None).expect("filter");
    assert_eq!(
        search(index.as_ref(), &json!("turtle"), &o, 10, filter.as_ref()),
        [(11, 1)]
    );
}

#[test]
fn an_empty_documents_index_is_created_with_its_tokenizer() {
    let dir = tempfile::tempdir().expect("dir");
    let registry = Registry::default();
    let mut options = Options::new();
    options.set("keep_stop_words", true);
    let folder = dir.path().join("d.live");
    let live = LiveIndex::create_with(&registry, &folder, "documents", &options, config())
        .expect("created");
    live.add(&[1, 2], &[json!("the cat"), json!("a dog")])
        .expect("added");
    let index = cpu(&live);
    // stop words kept: "the" is a word of the index
    assert_eq!(
        search(index.as_ref(), &json!("the"), &Options::new(), 10, None),
        [(1, 1)]
    );
    let mut wrong = Options::new();
    wrong.set("radius", 2);
    let e = LiveIndex::create_with(
        &registry,
        &dir.path().join("x"),
        "documents",
        &wrong,
        config(),
    )
    .expect_err("an option of another kind");
    assert!(e.to_string().contains("radius"), "{e}");
    assert!(!dir.path().join("x").exists());
}

#[test]
fn live_table_rows_keep_the_build_bins() {
    let dir = tempfile::tempdir().expect("dir");
    let input = dir.path().join("t.csv");
    let mut csv = String::from("age,job\n");
    for i in 0..40 {
        csv.push_str(&format!("{},{}\n", 20 + i, ["clerk", "pilot"][i % 2]));
    }
    std::fs::write(&input, csv).expect("csv");
    let file = dir.path().join("t.genie");
    build("table", &input, &file, &Options::new());
    let registry = Registry::default();
    let live = LiveIndex::open_file(&registry, &file, config()).expect("live");
    // a CSV line, an array, an object by column; ages outside the built range go to the edge bins
    live.add(
        &[100, 101, 102],
        &[
            json!("25, pilot"),
            json!([200, "clerk"]),
            json!({"job": "pilot", "age": -5}),
        ],
    )
    .expect("added");
    let index = cpu(&live);
    let o = Options::new();
    let ids = |q: &str| -> Vec<u64> {
        let mut ids: Vec<u64> = search(index.as_ref(), &json!(q), &o, 100, None)
            .into_iter()
            .filter(|h| h.1 == 1)
            .map(|h| h.0)
            .collect();
        ids.sort_unstable();
        ids
    };
    // the row of age 25 is in the same bin as the built row of age 25 (id 5)
    let bin_of_25 = ids("age=25");
    assert!(
        bin_of_25.contains(&5) && bin_of_25.contains(&100),
        "{bin_of_25:?}"
    );
    let top = ids("age=59");
    assert!(top.contains(&39) && top.contains(&101), "{top:?}");
    let bottom = ids("age=20");
    assert!(bottom.contains(&0) && bottom.contains(&102), "{bottom:?}");
    assert!(ids("job=pilot").contains(&102));
    for (bad, says) in [
        (json!("31, astronaut"), "astronaut"),
        (json!([31]), "expected 2"),
        (json!({"salary": 3}), "salary"),
        (json!("thirty, clerk"), "thirty"),
        (json!(true), "expected a row"),
    ] {
        let e = live
            .add(&[7], std::slice::from_ref(&bad))
            .expect_err("refused");
        let m = e.to_string();
        assert!(m.contains(says) && m.contains("id 7"), "{bad}: {m}");
    }
    assert_eq!(live.live_objects(), 43);
}

#[path = "common/serve.rs"]
mod serve;

#[test]
fn the_cli_adds_documents_and_rows_and_searches_them() {
    let dir = tempfile::tempdir().expect("dir");
    let genie = serve::binary();
    let run = |args: &[&str]| live::genie_in(&genie, dir.path(), args);
    let ok = |args: &[&str]| -> String {
        let out = run(args);
        assert!(
            out.status.success(),
            "genie {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("UTF-8")
    };
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).expect("w");
    write("docs.txt", "red fox\nblue whale\n");
    write("more.txt", "red panda\ngreen turtle\n");
    write("more-ids.txt", "10\n11\n");
    write("q.txt", "turtle red\n");
    ok(&[
        "build",
        "--kind",
        "documents",
        "--input",
        "docs.txt",
        "--output",
        "d.genie",
    ]);
    ok(&[
        "add",
        "--index",
        "d.genie",
        "--input",
        "more.txt",
        "--ids",
        "more-ids.txt",
    ]);
    let out = ok(&[
        "search",
        "--index",
        "d.genie.live",
        "--queries",
        "q.txt",
        "-k",
        "5",
        "--device",
        "cpu",
    ]);
    let v: Value = serde_json::from_str(out.trim()).expect("JSON line");
    let got: Vec<(u64, u64)> = v["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| {
            (
                h["id"].as_u64().expect("id"),
                h["count"].as_u64().expect("c"),
            )
        })
        .collect();
    assert_eq!(got, [(0, 1), (10, 1), (11, 1)]);
    // a table: a bad row is refused naming its line, and nothing is written
    write("t.csv", "age,job\n20,clerk\n40,pilot\n");
    write("rows.txt", "30, pilot\n31, astronaut\n");
    ok(&[
        "build", "--kind", "table", "--input", "t.csv", "--output", "t.genie",
    ]);
    let out = run(&["add", "--index", "t.genie", "--input", "rows.txt"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("rows.txt:2") && err.contains("astronaut"));
    write("rows.txt", "30, pilot\n99, clerk\n");
    ok(&["add", "--index", "t.genie", "--input", "rows.txt"]);
    write("tq.txt", "age=40..40 job=clerk\n");
    let search = |index: &str| {
        ok(&[
            "search",
            "--index",
            index,
            "--queries",
            "tq.txt",
            "-k",
            "10",
            "--device",
            "cpu",
        ])
    };
    // the built file is searched as built; its live index holds the new rows (99 in the top bin)
    let out = search("t.genie");
    assert!(!out.contains("\"id\":3"), "{out}");
    let out = search("t.genie.live");
    assert!(out.contains("{\"id\":3,\"count\":2}"), "{out}");
}

#[test]
fn the_server_creates_a_documents_index_with_options() {
    use genie::server::{Creating, ServerConfig};
    let dir = tempfile::tempdir().expect("dir");
    let service = genie::service::Service::new(Vec::new(), genie::service::BatchPolicy::default())
        .expect("service");
    let server = serve::Server::start(
        service,
        ServerConfig {
            writable: true,
            refresh: std::time::Duration::ZERO,
            create: Some(Creating {
                dir: dir.path().to_path_buf(),
                spec: serve::cpu(),
                live: LiveConfig::default(),
                registry: Registry::default(),
            }),
            ..ServerConfig::default()
        },
    );
    let call = |method: &str, path: &str, body: Value| -> (u16, Value) {
        let (status, text) = serve::call(
            method,
            &format!("{}{path}", server.url),
            None,
            Some(body.to_string().into_bytes()),
        );
        (status, serde_json::from_str(&text).expect("JSON"))
    };
    let (status, v) = call(
        "PUT",
        "/v1/indexes/notes",
        json!({"kind": "documents", "options": {"keep_stop_words": true}}),
    );
    assert_eq!(status, 201, "{v}");
    let (status, v) = call("PUT", "/v1/indexes/rows", json!({"kind": "table"}));
    assert!(
        status == 400 && v["error"].as_str().expect("e").starts_with("kind:"),
        "{v}"
    );
    let (status, v) = call(
        "POST",
        "/v1/indexes/notes/objects",
        json!({"objects": [{"id": 1, "object": "the red fox"}, {"id": 2, "object": "a fox"}]}),
    );
    assert_eq!((status, v), (200, json!({"written": 2})));
    let (status, v) = call(
        "POST",
        "/v1/indexes/notes/search",
        json!({"queries": ["the fox"], "k": 5}),
    );
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        v["results"][0]["hits"],
        json!([{"id": 1, "count": 2}, {"id": 2, "count": 1}])
    );
    let (status, v) = call(
        "POST",
        "/v1/indexes/notes/objects",
        json!({"objects": [{"id": 3, "object": 7}]}),
    );
    assert!(
        status == 400 && v["error"].as_str().expect("e").contains("id 3"),
        "{v}"
    );
}
