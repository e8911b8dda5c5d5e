//! What a newcomer meets first, end to end: every option that does not apply to an index (or to a
//! kind), or whose value cannot work, is refused naming the option; a huge `--k` costs nothing;
//! `genie info` stays short on a table of many categories; byte sequences; an empty input; a
//! server that is not there.

use std::path::PathBuf;

#[path = "common/args.rs"]
mod args;
#[path = "common/cli.rs"]
mod cli;
use cli::Dir;

/// 40 vectors of dimension 4 in 4 clusters, as CSV.
fn vectors_csv() -> String {
    let mut s = String::from("a,b,c,d\n");
    for i in 0..40u32 {
        let row: Vec<String> = (0..4)
            .map(|j| {
                let base = if j == i % 4 { 50.0 } else { 0.0 };
                format!("{}", base + ((i * 7 + j * 3) % 11) as f32 / 10.0)
            })
            .collect();
        s.push_str(&row.join(","));
        s.push('\n');
    }
    s
}

/// One index of each kind (two vector families), with a queries file for each.
fn indexes() -> (Dir, Vec<(&'static str, &'static str)>) {
    let d = Dir::new();
    d.write(
        "objects.txt",
        "1 5 10\n2 5 11\n5 9 10\n3 4\n\n1 2 3 5 10 11\n",
    );
    d.write("q.txt", "1-2 5 10-11\n3 5 9\n");
    d.write("seqs.txt", "kitten\nsitting\nmitten\nbitten\n");
    d.write("sq.txt", "kiten\nsittin\n");
    d.write(
        "docs.txt",
        "the quick brown fox\nlazy dogs sleep\nquick brown dogs\n",
    );
    d.write("dq.txt", "quick dogs\n");
    d.write("table.csv", "age,job\n25,clerk\n38,engineer\n52,clerk\n");
    d.write("tq.txt", "age=30..45\n");
    d.write("vecs.csv", vectors_csv());
    d.write("vq.csv", "50,0,0,0\n0,50,0,0\n");
    for (kind, input, index, extra) in [
        ("keywords", "objects.txt", "k.genie", &[][..]),
        ("sequences", "seqs.txt", "s.genie", &[]),
        ("documents", "docs.txt", "d.genie", &[]),
        ("table", "table.csv", "t.genie", &[]),
        ("vectors", "vecs.csv", "e.genie", &["--lsh", "e2lsh"]),
        ("vectors", "vecs.csv", "c.genie", &["--lsh", "codebook"]),
    ] {
        let mut args = vec!["build", "--kind", kind, "--input", input, "--output", index];
        args.extend_from_slice(extra);
        d.ok(&args);
    }
    let pairs = vec![
        ("k.genie", "q.txt"),
        ("s.genie", "sq.txt"),
        ("d.genie", "dq.txt"),
        ("t.genie", "tq.txt"),
        ("e.genie", "vq.csv"),
        ("c.genie", "vq.csv"),
    ];
    (d, pairs)
}

/// Each search option with a value that would work where it applies.
const SEARCH_OPTIONS: [(&str, &[&str]); 10] = [
    ("candidates", &["--candidates", "8"]),
    ("probes", &["--probes", "2"]),
    ("entries", &["--entries", "2"]),
    ("levels", &["--levels", "0"]),
    ("counting", &["--counting", "lists"]),
    ("max_candidates", &["--max-candidates", "64"]),
    ("exhaustive", &["--exhaustive"]),
    ("column", &["--column", "text"]),
    ("radius", &["--radius", "1"]),
    ("query_format", &["--query-format", "conditions"]),
];

/// Whether an error names option `name` (as a flag or as an option).
fn names_option(err: &str, name: &str) -> bool {
    err.contains(&format!("--{}", name.replace('_', "-")))
        || err.contains(&format!("option {name}"))
}

#[test]
fn every_search_option_is_refused_where_it_does_nothing() {
    let (d, pairs) = indexes();
    // what each index takes; everything else must be refused, naming the option
    let takes: [(&str, &[&str]); 6] = [
        ("k.genie", &[]),
        ("s.genie", &["candidates", "max_candidates", "exhaustive"]),
        ("d.genie", &["column"]),
        ("t.genie", &["radius", "query_format"]),
        ("e.genie", &["candidates"]),
        (
            "c.genie",
            &["candidates", "probes", "entries", "levels", "counting"],
        ),
    ];
    for ((index, queries), (same, accepted)) in pairs.iter().zip(takes) {
        assert_eq!(*index, same);
        for (name, flag) in SEARCH_OPTIONS {
            let out = d.search_cpu(index, queries, "2", flag);
            let err = String::from_utf8_lossy(&out.stderr).into_owned();
            if accepted.contains(&name) {
                assert!(
                    !err.contains("applies to") && !err.contains("not an option"),
                    "{index} {flag:?} is refused: {err}"
                );
                continue;
            }
            assert!(!out.status.success(), "{index} takes {flag:?} silently");
            assert!(names_option(&err, name), "{index} {flag:?}: {err}");
        }
    }
    // the same refusals through the server's options (and Python's): parse checks them
    let e2lsh_probes = d.fails(&args::search_cpu(
        "e.genie",
        "vq.csv",
        "2",
        &["--probes", "2"],
    ));
    assert!(
        e2lsh_probes.contains(
            "option probes: applies to vector indexes of --lsh codebook, not to this e2lsh index"
        ),
        "{e2lsh_probes}"
    );
}

#[test]
fn option_values_that_cannot_work_are_refused() {
    let (d, _) = indexes();
    for (index, queries, flags, name, want) in [
        (
            "e.genie",
            "vq.csv",
            &["--candidates", "0"][..],
            "candidates",
            "expected at least 1, found 0",
        ),
        (
            "c.genie",
            "vq.csv",
            &["--candidates", "0"],
            "candidates",
            "expected at least 1, found 0",
        ),
        (
            "s.genie",
            "sq.txt",
            &["--candidates", "0"],
            "candidates",
            "expected at least 1, found 0",
        ),
        (
            "s.genie",
            "sq.txt",
            &["--max-candidates", "0"],
            "max_candidates",
            "expected at least 1, found 0",
        ),
        (
            "c.genie",
            "vq.csv",
            &["--levels", "2", "--entries", "3"],
            "entries",
            "does nothing with closeness weights",
        ),
        (
            "t.genie",
            "tq.txt",
            &["--radius", "2", "--query-format", "conditions"],
            "radius",
            "applies to CSV-row queries",
        ),
        ("c.genie", "vq.csv", &["--probes", "0"], "probes", ""),
    ] {
        let out = d.search_cpu(index, queries, "2", flags);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!out.status.success(), "{index} {flags:?} accepted");
        assert!(!err.contains("panicked"), "{err}");
        // the command line refuses a value out of the option's declared range itself
        let want = if err.contains("is not in 1..") {
            ""
        } else {
            want
        };
        assert!(
            names_option(&err, name) && err.contains(want),
            "{index} {flags:?}: {err}"
        );
    }
    // the same values through the library (a server request's options, Python's keywords)
    let paths: Vec<(&str, PathBuf)> = ["e", "c", "s"]
        .iter()
        .map(|n| (*n, d.path(&format!("{n}.genie"))))
        .collect();
    let named: Vec<(&str, &std::path::Path)> =
        paths.iter().map(|(n, p)| (*n, p.as_path())).collect();
    let spec = genie::open::OpenSpec {
        device: genie::core::DeviceChoice::Cpu,
        ..genie::open::OpenSpec::default()
    };
    let service = genie::service::Service::open(
        &genie::kind::Registry::default(),
        &named,
        &spec,
        genie::service::BatchPolicy::default(),
    )
    .expect("open");
    let vector = serde_json::json!([50, 0, 0, 0]);
    for (index, raw, options, want) in [
        (
            "e",
            &vector,
            serde_json::json!({"candidates": 0}),
            "option candidates: expected at least 1, found 0",
        ),
        (
            "c",
            &vector,
            serde_json::json!({"probes": 0}),
            "option probes: expected at least 1, found 0",
        ),
        (
            "s",
            &serde_json::json!("kiten"),
            serde_json::json!({"max_candidates": 0}),
            "option max_candidates: expected at least 1, found 0",
        ),
        (
            "e",
            &vector,
            serde_json::json!({"levels": 2}),
            "option levels: applies to vector indexes of --lsh codebook",
        ),
    ] {
        let options = genie::kind::Options::from_json(&options).expect("options");
        let err = service
            .parse(index, raw, &options)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains(want), "{index} {options:?}: {err:?}");
    }
    service.shutdown();
}

#[test]
fn every_build_option_is_refused_for_the_kinds_it_does_not_apply_to() {
    let d = Dir::new();
    d.write("in.txt", "1 2\n");
    d.write("n.names", "a: continuous.\n");
    let flags: [(&str, &[&str]); 24] = [
        ("ngram", &["--ngram", "2"]),
        ("alphabet", &["--alphabet", "bytes"]),
        ("no_pad", &["--no-pad"]),
        ("column", &["--column", "c"]),
        ("keep_stop_words", &["--keep-stop-words"]),
        ("bins", &["--bins", "8"]),
        ("names", &["--names", "a,b"]),
        ("names_file", &["--names-file", "n.names"]),
        ("header", &["--header"]),
        ("numeric", &["--numeric", "a"]),
        ("categorical", &["--categorical", "a"]),
        ("lsh", &["--lsh", "e2lsh"]),
        ("functions", &["--functions", "8"]),
        ("width", &["--width", "1.5"]),
        ("buckets", &["--buckets", "64"]),
        ("bits", &["--bits", "4"]),
        ("seed", &["--seed", "3"]),
        ("candidates", &["--candidates", "5"]),
        ("cells", &["--cells", "4"]),
        ("subspaces", &["--subspaces", "2"]),
        ("target_recall", &["--target-recall", "0.9"]),
        ("parts", &["--parts", "2"]),
        ("part_objects", &["--part-objects", "2"]),
        ("offsets", &["--offsets", "o.npy"]),
    ];
    let registry = genie::kind::Registry::default();
    let mut refused = 0;
    for kind in registry.kinds() {
        for (name, flag) in flags {
            if kind.build_options().iter().any(|o| o.name == name) {
                continue;
            }
            let mut args = vec![
                "build",
                "--kind",
                kind.name(),
                "--input",
                "in.txt",
                "--output",
                "x.genie",
            ];
            args.extend_from_slice(flag);
            let err = d.fails(&args);
            assert!(
                err.contains(&format!("--{} applies to --kind", name.replace('_', "-"))),
                "{} {flag:?}: {err}",
                kind.name()
            );
            refused += 1;
        }
    }
    assert!(refused >= 90, "only {refused} pairs refused");
    assert!(!d.path("x.genie").exists());
}

#[test]
fn a_huge_k_costs_no_more_than_k_equal_to_the_objects() {
    let (d, pairs) = indexes();
    for (index, queries) in pairs {
        let search = |k: &str| d.ok(&args::search_cpu(index, queries, k, &[]));
        let all = search("1000");
        for k in ["4294967295", "4000000000"] {
            assert_eq!(search(k), all, "{index} --k {k}");
        }
    }
}

#[test]
fn info_summarises_a_table_of_many_categories() {
    let d = Dir::new();
    let mut csv = String::from("city,population\n");
    for i in 0..2000 {
        csv.push_str(&format!("town-number-{i:05},{}\n", 1000 + i * 37));
    }
    d.write("cities.csv", &csv);
    d.ok(&args::build("table", &[], "cities.csv", "c.genie"));
    let text = d.ok(&["info", "--index", "c.genie"]);
    assert!(text.len() < 2000, "{} bytes: {text}", text.len());
    assert!(text.lines().all(|l| l.len() < 200), "{text}");
    assert!(
        text.contains("city        categorical, 2000 values: town-number-00000, "),
        "{text}"
    );
    assert!(text.contains("... (2000 in all)"), "{text}");
    assert!(text.contains("population  numeric, "), "{text}");
    // --json: everything
    let json: serde_json::Value =
        serde_json::from_str(&d.ok(&["info", "--json", "--index", "c.genie"])).expect("JSON");
    let columns = json["metadata"]["schema"]["attributes"]
        .as_array()
        .expect("columns");
    assert_eq!(columns[0]["values"].as_array().map(Vec::len), Some(2000));
    assert_eq!(json["objects"], 2000);
}

#[test]
fn byte_sequences_build_and_search_with_alphabet_bytes() {
    let d = Dir::new();
    d.write(
        "dna.bin",
        b"ACGT\xff\xfeACGT\nACGTACGA\n\x00\x01\x02\x03\x04\n",
    );
    d.write("q.bin", b"ACGT\xffACGT\n\x00\x01\x02\x03\n");
    let err = d.fails(&args::build("sequences", &[], "dna.bin", "s.genie"));
    assert!(
        err.contains(
            "dna.bin:1: line is not valid UTF-8 (invalid byte at column 5); --alphabet bytes"
        ),
        "{err}"
    );
    d.ok(&args::build(
        "sequences",
        &["--alphabet", "bytes"],
        "dna.bin",
        "s.genie",
    ));
    let out = d.ok(&args::search_cpu("s.genie", "q.bin", "1", &[]));
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    assert_eq!(lines.len(), 2);
    // one byte deleted, one byte deleted: distance 1 to objects 0 and 2
    assert_eq!(lines[0]["hits"][0]["id"], 0, "{out}");
    assert_eq!(lines[0]["hits"][0]["distance"], 1, "{out}");
    assert_eq!(lines[1]["hits"][0]["id"], 2, "{out}");
    assert_eq!(lines[1]["hits"][0]["distance"], 1, "{out}");
    // a chars index refuses a query of bytes, naming the line
    d.write("words.txt", "kitten\nsitting\n");
    d.ok(&args::build("sequences", &[], "words.txt", "w.genie"));
    let err = d.fails(&args::search_cpu("w.genie", "q.bin", "1", &[]));
    assert!(
        err.contains("q.bin:1: ") && err.contains("--alphabet bytes"),
        "{err}"
    );
}

#[test]
fn an_empty_input_warns() {
    let d = Dir::new();
    d.write("empty.txt", "");
    for kind in ["keywords", "sequences", "documents"] {
        let out = d.genie(&args::build(kind, &[], "empty.txt", "e.genie"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{kind}: {err}");
        assert!(
            err.contains("e.genie holds no objects: empty.txt has none"),
            "{kind}: {err}"
        );
    }
}

#[test]
fn a_server_that_is_not_there_is_named() {
    let d = Dir::new();
    d.write("q.txt", "1\n");
    // a port that nothing listens on: taken, then given back
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let err = d.fails(&args::search_server(&url, "k", "q.txt", "1", &[]));
    assert!(
        err.contains(&format!(
            "{url}/v1/indexes: cannot connect: nothing listens there"
        )),
        "{err}"
    );
}

#[test]
fn an_index_given_as_the_input_is_named() {
    let d = Dir::new();
    d.write("objects.txt", "1 2\n3 4\n");
    d.ok(&["build", "--input", "objects.txt", "--output", "o.genie"]);
    for kind in ["keywords", "sequences", "documents"] {
        let err = d.fails(&args::build(kind, &[], "o.genie", "x.genie"));
        assert!(
            err.contains("o.genie: is an index written by genie build, not data to index"),
            "{kind}: {err}"
        );
    }
}
