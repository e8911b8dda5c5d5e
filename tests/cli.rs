//! End-to-end tests of the `genie` binary.

#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::process::Stdio;

#[path = "common/cli.rs"]
mod cli;
use cli::{error, skip, stderr, stdout, success, Dir};

/// Six objects (ids are line numbers). Object 2 repeats keyword 5 (counted once), object 3 is
/// empty, object 4 ends with CRLF. Keyword space: 10.
const OBJECTS: &str = "1 2 3\n2 3 4\n3 4 5 5\n\n1 5\r\n9\n";

/// Queries and their top-3 worked out by hand (count desc, then id asc):
/// 0 `3`            objects 0, 1, 2 each 1                        -> (0,1) (1,1) (2,1)
/// 1 `1:2 4`        0: 2, 4: 2, 1: 1, 2: 1 (tie at 1, cut by k)    -> (0,2) (4,2) (1,1)
/// 2 `2-4`          1: 3, 0: 2, 2: 2                               -> (1,3) (0,2) (2,2)
/// 3 (empty)                                                       -> none
/// 4 `100 4294967295` beyond the keyword space                     -> none
/// 5 `9`            only 5 (k larger than the matches)             -> (5,1)
/// 6 `4-100:2 1`    2: 4, 4: 2+1, 1: 2, 5: 2, 0: 1                 -> (2,4) (4,3) (1,2)
/// 7 `5-5:3 9`      2: 3, 4: 3, 5: 1                               -> (2,3) (4,3) (5,1)
const QUERIES: &str = "3\n1:2 4\n2-4\n\n100 4294967295\n  9 \n4-100:2\t1\n5-5:3 9\n";

const EXPECTED: &str = concat!(
    r#"{"query":0,"hits":[{"id":0,"count":1},{"id":1,"count":1},{"id":2,"count":1}]}"#,
    "\n",
    r#"{"query":1,"hits":[{"id":0,"count":2},{"id":4,"count":2},{"id":1,"count":1}]}"#,
    "\n",
    r#"{"query":2,"hits":[{"id":1,"count":3},{"id":0,"count":2},{"id":2,"count":2}]}"#,
    "\n",
    r#"{"query":3,"hits":[]}"#,
    "\n",
    r#"{"query":4,"hits":[]}"#,
    "\n",
    r#"{"query":5,"hits":[{"id":5,"count":1}]}"#,
    "\n",
    r#"{"query":6,"hits":[{"id":2,"count":4},{"id":4,"count":3},{"id":1,"count":2}]}"#,
    "\n",
    r#"{"query":7,"hits":[{"id":2,"count":3},{"id":4,"count":3},{"id":5,"count":1}]}"#,
    "\n",
);

/// A folder with the objects and queries files and their index, `index.genie`.
fn fixture() -> Dir {
    let d = Dir::new();
    d.write("objects.txt", OBJECTS);
    d.write("queries.txt", QUERIES);
    success(&d.run(&["build", "--input", "objects.txt", "--output", "index.genie"]));
    d
}

/// `genie search` of `queries` in the fixture's index, succeeding: the hits.
fn search_ok(f: &Dir, queries: &str, k: &str, extra: &[&str]) -> String {
    success(&f.search("index.genie", queries, k, extra))
}

#[test]
fn build_and_search_round_trip() {
    let f = fixture();
    let out = f.run(&["build", "--input", "objects.txt", "--output", "again.genie"]);
    assert_eq!(success(&out), "");
    let summary = stderr(&out);
    for part in ["6 objects", "12 postings", "keyword space 10"] {
        assert!(summary.contains(part), "summary lacks {part:?}: {summary}");
    }
    assert_eq!(search_ok(&f, "queries.txt", "3", &[]), EXPECTED);
}

#[test]
fn packed_postings_round_trip() {
    let f = fixture();
    let out = f.run(&[
        "build",
        "--input",
        "objects.txt",
        "--output",
        "packed.genie",
        "--postings",
        "packed",
    ]);
    assert_eq!(success(&out), "");
    assert!(
        stderr(&out).contains("with its postings packed"),
        "{}",
        stderr(&out)
    );
    let info = success(&f.run(&["info", "--index", "packed.genie"]));
    assert!(info.contains("list array: packed"), "{info}");
    let plain = success(&f.run(&["info", "--index", "index.genie"]));
    assert!(
        plain.contains("list array: plain, 4.00 bytes a posting"),
        "{plain}"
    );
    for device in ["cpu", "auto"] {
        let hits = success(&f.search("packed.genie", "queries.txt", "3", &["--device", device]));
        assert_eq!(hits, EXPECTED, "{device}");
    }
    let bad = f.run(&[
        "build",
        "--input",
        "objects.txt",
        "--output",
        "x.genie",
        "--postings",
        "zip",
    ]);
    assert!(error(&bad).contains("--postings"), "{}", error(&bad));
}

#[test]
fn output_file() {
    let f = fixture();
    let out = f.search(
        "index.genie",
        "queries.txt",
        "3",
        &["--output", "hits.jsonl"],
    );
    assert_eq!(success(&out), "");
    assert_eq!(
        String::from_utf8(f.read("hits.jsonl")).expect("UTF-8"),
        EXPECTED
    );
}

#[test]
fn every_line_is_json() {
    let f = fixture();
    let text = search_ok(&f, "queries.txt", "10", &["--device", "cpu"]);
    for (i, line) in text.lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).expect("JSON line");
        assert_eq!(v["query"], i as u64);
        assert!(v["hits"].is_array());
    }
    assert_eq!(text.lines().count(), QUERIES.lines().count());
}

/// `genie search` of the fixture's queries with `GENIE_DEVICE` set to `device`.
fn search_with_env(f: &Dir, device: &str, extra: &[&str]) -> std::process::Output {
    f.command()
        .env("GENIE_DEVICE", device)
        .arg("search")
        .args(extra)
        .args([
            "--index",
            "index.genie",
            "--queries",
            "queries.txt",
            "--k",
            "3",
        ])
        .output()
        .expect("run genie")
}

#[test]
fn device_cpu() {
    let f = fixture();
    assert_eq!(
        search_ok(&f, "queries.txt", "3", &["--device", "cpu"]),
        EXPECTED
    );
    assert_eq!(success(&search_with_env(&f, "cpu", &[])), EXPECTED);
}

#[test]
fn device_gpu_without_gpu_is_an_error() {
    let f = fixture();
    let out = f.search("index.genie", "queries.txt", "3", &["--device", "gpu"]);
    if out.status.success() {
        skip("a usable GPU is present, so --device gpu succeeded");
        assert_eq!(stdout(&out), EXPECTED);
        return;
    }
    let err = error(&out);
    assert!(err.contains("GPU"), "{err}");
    assert!(err.contains("--device"), "{err}");
    assert_eq!(stdout(&out), "");

    let err = error(&search_with_env(&f, "gpu", &[]));
    assert!(err.contains("GPU") && err.contains("GENIE_DEVICE"), "{err}");
}

#[test]
fn bad_device_values() {
    let f = fixture();
    error(&f.search("index.genie", "queries.txt", "3", &["--device", "tpu"]));
    let err = error(&search_with_env(&f, "tpu", &[]));
    assert!(err.contains("GENIE_DEVICE") && err.contains("tpu"), "{err}");
    // --device takes precedence over GENIE_DEVICE
    let out = search_with_env(&f, "tpu", &["--device", "cpu"]);
    assert_eq!(success(&out), EXPECTED);
    // the flags of where to search here are refused with --server, before any connection
    for (flag, value) in [
        ("--device", "cpu"),
        ("--method", "count-table"),
        ("--parts", "2"),
    ] {
        let server = ["--server", "http://127.0.0.1:9", flag, value];
        let err = error(&f.search("index.genie", "queries.txt", "3", &server));
        assert!(
            err.contains(&format!("{flag} applies to a local search")),
            "{err}"
        );
    }
}

#[test]
fn count_table_matches_cpq() {
    let f = fixture();
    for k in ["0", "1", "2", "3", "5", "100"] {
        let cpq = search_ok(&f, "queries.txt", k, &["--method", "cpq"]);
        let table = search_ok(&f, "queries.txt", k, &["--method", "count-table"]);
        assert_eq!(cpq, table, "k = {k}");
    }
    assert_eq!(
        search_ok(&f, "queries.txt", "3", &["--method", "count-table"]),
        EXPECTED
    );
}

#[test]
fn k_zero_gives_empty_hits() {
    let f = fixture();
    let text = search_ok(&f, "queries.txt", "0", &[]);
    let expected: String = (0..8)
        .map(|q| format!("{{\"query\":{q},\"hits\":[]}}\n"))
        .collect();
    assert_eq!(text, expected);
}

#[test]
fn chunked_search_matches_default() {
    let f = fixture();
    f.write("five.txt", b"3\n1:2 4\n\n2-4\n9 5\n");
    let whole = search_ok(&f, "five.txt", "3", &[]);
    assert_eq!(whole.lines().count(), 5);
    assert_eq!(
        search_ok(&f, "five.txt", "3", &["--batch-queries", "2"]),
        whole
    );
    for n in ["1", "3", "7", "8", "9"] {
        assert_eq!(
            search_ok(&f, "queries.txt", "3", &["--batch-queries", n]),
            EXPECTED,
            "--batch-queries {n}"
        );
    }
    error(&f.search("index.genie", "five.txt", "3", &["--batch-queries", "0"]));
}

#[test]
fn queries_from_stdin() {
    let f = fixture();
    let mut child = f
        .command()
        .args([
            "search",
            "--queries",
            "-",
            "--k",
            "3",
            "--index",
            "index.genie",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn genie");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(QUERIES.as_bytes())
        .expect("write queries");
    let out = child.wait_with_output().expect("wait for genie");
    assert_eq!(success(&out), EXPECTED);
}

#[test]
fn empty_files() {
    let f = fixture();
    f.write("none.txt", b"");
    assert_eq!(search_ok(&f, "none.txt", "3", &[]), "");

    f.write("no-objects.txt", b"");
    success(&f.run(&[
        "build",
        "--input",
        "no-objects.txt",
        "--output",
        "index.genie",
    ]));
    assert_eq!(
        search_ok(&f, "queries.txt", "3", &[]).lines().count(),
        QUERIES.lines().count()
    );
}

#[test]
fn info_prints_statistics() {
    let f = fixture();
    let text = success(&f.run(&["info", "--index", "index.genie"]));
    for line in [
        "objects: 6",
        "postings: 12",
        "keyword space: 10",
        "max object length: 3",
        "built by: genie ",
    ] {
        assert!(text.contains(line), "info lacks {line:?}: {text}");
    }
    assert!(
        text.lines()
            .any(|l| l.starts_with("input: ") && l.ends_with("objects.txt")),
        "the metadata names the input: {text}"
    );
    // everything as one line of JSON, the metadata whole
    let out = f.run(&["info", "--json", "--index", "index.genie"]);
    let info: serde_json::Value = serde_json::from_str(&success(&out)).expect("JSON");
    assert_eq!(info["objects"], 6);
    assert_eq!(info["postings"], 12);
    assert_eq!(info["format_version"], 2);
    let input = info["metadata"]["input"].as_str().unwrap_or_default();
    assert!(input.ends_with("objects.txt"), "{info}");
}

#[test]
fn help_of_every_subcommand() {
    let d = Dir::new();
    let cases: [(&[&str], &[&str]); 4] = [
        (
            &["--help"],
            &["build", "search", "info", "--verbose", "--quiet"],
        ),
        (
            &["build", "--help"],
            &["--input", "--output", "OBJECTS", "INDEX"],
        ),
        (
            &["search", "--help"],
            &[
                "--index",
                "--queries",
                "--k",
                "--device",
                "--output",
                "--method",
                "--batch-queries",
                "count-table",
                "GENIE_DEVICE",
            ],
        ),
        (&["info", "--help"], &["--index"]),
    ];
    for (args, words) in cases {
        let text = success(&d.run(args));
        for w in words {
            assert!(
                text.contains(w),
                "`genie {}` lacks {w:?}:\n{text}",
                args.join(" ")
            );
        }
    }
    success(&d.run(&["--version"]));
    error(&d.run(&[]));
}

/// Runs `genie build` on `content` and checks the error names the file, the line and `needle`.
fn check_bad_objects(content: &[u8], line: u32, needle: &str) {
    let f = fixture();
    f.write("bad-objects.txt", content);
    let out = f.run(&[
        "build",
        "--input",
        "bad-objects.txt",
        "--output",
        "bad.genie",
    ]);
    let err = error(&out);
    assert!(
        err.contains(&format!("bad-objects.txt:{line}:")),
        "no file:line in {err}"
    );
    assert!(err.contains(needle), "{needle:?} not in {err}");
    assert!(
        !f.path("bad.genie").exists(),
        "an index was written despite the error"
    );
}

#[test]
fn malformed_objects() {
    let expected = "expected an unsigned 32-bit integer";
    check_bad_objects(b"1 2\n3 x 4\n", 2, "\"x\"");
    check_bad_objects(b"1 2\n3 x 4\n", 2, expected);
    check_bad_objects(b"1\n\n5 -3\n", 3, "\"-3\"");
    check_bad_objects(b"4294967296\n", 1, "\"4294967296\"");
    check_bad_objects(b"1\n2.5\n", 2, "\"2.5\"");
    check_bad_objects(b"1\n2-3\n", 2, "\"2-3\"");
    check_bad_objects(b"1\n2\n3 \xff\xfe\n", 3, "UTF-8");
}

#[test]
fn missing_files() {
    let f = fixture();
    let out = f.run(&[
        "build",
        "--input",
        "absent-objects.txt",
        "--output",
        "x.genie",
    ]);
    assert!(error(&out).contains("absent-objects.txt"));

    let err = error(&f.search("index.genie", "absent-queries.txt", "3", &[]));
    assert!(err.contains("absent-queries.txt"), "{err}");

    let out = f.search("absent.genie", "queries.txt", "3", &[]);
    assert!(error(&out).contains("absent.genie"));
}

/// Runs `genie search` on `content` and checks the error names the file, the line and `needle`.
fn check_bad_queries(content: &[u8], line: u32, needle: &str) {
    let f = fixture();
    f.write("bad-queries.txt", content);
    let err = error(&f.search("index.genie", "bad-queries.txt", "3", &[]));
    assert!(
        err.contains(&format!("bad-queries.txt:{line}:")),
        "no file:line in {err}"
    );
    assert!(err.contains(needle), "{needle:?} not in {err}");
}

#[test]
fn malformed_queries() {
    let syntax = "expected KW, LO-HI, optionally :WEIGHT with unsigned 32-bit integers";
    check_bad_queries(b"1\n2\n4-x\n", 3, "bad item \"4-x\"");
    check_bad_queries(b"1\n2\n4-x\n", 3, syntax);
    check_bad_queries(b"1\n2\nfoo\n", 3, "\"foo\"");
    check_bad_queries(b"1\n2\n7 -5\n", 3, "\"-5\"");
    check_bad_queries(b"1\n2\n7 -5\n", 3, "negative");
    check_bad_queries(b"1\n2\n3:-2\n", 3, "\"3:-2\"");
    check_bad_queries(b"1\n2\n4294967296\n", 3, "\"4294967296\"");
    check_bad_queries(b"1\n2\n1-4294967296\n", 3, "\"1-4294967296\"");
    check_bad_queries(b"1\n2\n20-10\n", 3, "\"20-10\"");
    check_bad_queries(b"1\n2\n20-10\n", 3, "LO <= HI");
    check_bad_queries(b"1\n2\n3:0\n", 3, "\"3:0\"");
    check_bad_queries(b"1\n2\n3:0\n", 3, "weight");
    check_bad_queries(b"1\n2\n3:\n", 3, "\"3:\"");
    check_bad_queries(b"1\n2\n1\xc0\n", 3, "UTF-8");
    // a weight so large that the query's count bound exceeds what the counters support
    check_bad_queries(b"1\n1:20000000\n", 2, "count bound");
    // a chunk's queries are parsed at once: the first bad one (in order) is the one named
    let many_bad: String = (0..3000)
        .map(|i| if i % 7 == 5 { "x\n" } else { "1\n" })
        .collect();
    check_bad_queries(many_bad.as_bytes(), 6, "\"x\"");
}

#[test]
fn malformed_query_after_first_chunk() {
    let f = fixture();
    f.write("late.txt", b"1\n2\n3\n4\n5\nx\n");
    let extra = ["--batch-queries", "2", "-o", "late.jsonl"];
    let err = error(&f.search("index.genie", "late.txt", "3", &extra));
    assert!(
        err.contains("late.txt:6:") && err.contains("\"x\""),
        "{err}"
    );
}

/// 25 queries over the fixture's keywords (0-9), every one different.
fn many_queries() -> String {
    (0..25u32)
        .map(|i| {
            format!(
                "{} {}-{}:{} {}\n",
                i % 10,
                i % 4,
                4 + i % 6,
                1 + i % 3,
                (i * 7) % 10
            )
        })
        .collect()
}

#[test]
fn pipelined_chunks_match_one_chunk() {
    let f = fixture();
    f.write("many.txt", many_queries());
    let whole = search_ok(&f, "many.txt", "4", &["--batch-queries", "1000"]);
    assert_eq!(whole.lines().count(), 25);
    for (q, line) in whole.lines().enumerate() {
        assert!(line.starts_with(&format!("{{\"query\":{q},")), "{line}");
    }
    for n in ["1", "2", "3", "4", "24", "25"] {
        assert_eq!(
            search_ok(&f, "many.txt", "4", &["--batch-queries", n]),
            whole,
            "--batch-queries {n}"
        );
    }
    let extra = ["--batch-queries", "3", "-o", "many.jsonl"];
    success(&f.search("index.genie", "many.txt", "4", &extra));
    assert_eq!(
        String::from_utf8(f.read("many.jsonl")).expect("UTF-8"),
        whole
    );
}

#[test]
fn bad_query_in_a_later_chunk_stops_the_pipeline() {
    let f = fixture();
    let mut text = many_queries();
    // line 11: the first query of the fourth chunk of 3 is the bad one; more chunks follow
    let at = text.match_indices('\n').nth(9).expect("10 lines").0 + 1;
    text.insert_str(at, "7 oops\n");
    f.write("later.txt", text);
    let out = f.search("index.genie", "later.txt", "4", &["--batch-queries", "3"]);
    let err = error(&out);
    assert!(
        err.contains("later.txt:11:") && err.contains("\"oops\""),
        "{err}"
    );
    // the chunks before the bad one are written, in order, and nothing after them
    f.write("many.txt", many_queries());
    let whole = search_ok(&f, "many.txt", "4", &[]);
    let before: String = whole.lines().take(9).map(|l| format!("{l}\n")).collect();
    assert_eq!(stdout(&out), before);

    let extra = ["--batch-queries", "3", "-o", "later.jsonl"];
    let out = f.search("index.genie", "later.txt", "4", &extra);
    assert!(error(&out).contains("later.txt:11:"));
    assert!(
        !f.path("later.jsonl").exists(),
        "a failed search left its output"
    );
}

/// A full standard output stops the search with an error naming it (no hang, no panic), while
/// later chunks are still to be read.
#[cfg(target_os = "linux")]
#[test]
fn output_write_failure_stops_the_pipeline() {
    let f = fixture();
    let text: String = (0..20_000u32)
        .map(|i| format!("{} {}\n", i % 10, (i / 10) % 10))
        .collect();
    f.write("lots.txt", text);
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("open /dev/full");
    let out = f
        .command()
        .args(["search", "--k", "6", "--batch-queries", "50"])
        .args(["--index", "index.genie", "--queries", "lots.txt"])
        .stdout(full)
        .output()
        .expect("run genie");
    let err = error(&out);
    assert!(err.contains("cannot write to <stdout>"), "{err}");
}

#[test]
fn corrupted_index() {
    let f = fixture();
    let good = f.read("index.genie");

    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x5a;
    f.write("flipped.genie", &flipped);
    f.write("truncated.genie", &good[..good.len() - 7]);
    f.write("text.genie", b"1 2 3\n");
    f.write("empty.genie", b"");
    for name in [
        "flipped.genie",
        "truncated.genie",
        "text.genie",
        "empty.genie",
    ] {
        let out = f.search(name, "queries.txt", "3", &[]);
        let err = error(&out);
        assert!(err.contains(name), "{name}: {err}");
        assert_eq!(stdout(&out), "");

        assert!(error(&f.run(&["info", "--index", name])).contains(name));
    }
}

#[test]
fn quiet_build_prints_nothing() {
    let f = fixture();
    let out = f.run(&[
        "--quiet",
        "build",
        "--input",
        "objects.txt",
        "--output",
        "q.genie",
    ]);
    success(&out);
    assert_eq!(stderr(&out), "");
    assert!(f.path("q.genie").exists());
}

#[test]
fn parted_build_and_in_memory_parts_match_one_part() {
    let d = Dir::new();
    let objects: String = (0..500u32)
        .map(|i| format!("{} {} {}\n", i % 11, 20 + i % 7, 40 + i % 3))
        .collect();
    let queries: String = (0..40u32)
        .map(|i| format!("{} {}-{} 40:2\n", i % 11, 20 + i % 7, 22 + i % 7))
        .collect();
    d.write("o.txt", objects);
    d.write("q.txt", queries);
    assert!(d
        .run(&["build", "--input", "o.txt", "--output", "one.genie"])
        .status
        .success());
    let out = d.run(&[
        "build",
        "--input",
        "o.txt",
        "--output",
        "parted.genie",
        "--parts",
        "4",
    ]);
    success(&out);
    assert!(d.path("parted.genie.part3").exists());
    let search = |index: &str, extra: &[&str]| {
        let mut args = vec!["--device", "cpu"];
        args.extend_from_slice(extra);
        success(&d.search(index, "q.txt", "7", &args))
    };
    let want = search("one.genie", &[]);
    assert_eq!(want.lines().count(), 40);
    assert_eq!(search("parted.genie", &[]), want, "parted index file");
    assert_eq!(
        search("one.genie", &["--parts", "3"]),
        want,
        "split in memory"
    );
    let info = d.run(&["info", "--index", "parted.genie"]);
    assert!(stdout(&info).contains("parted.genie.part3: objects 375..500"));
    // parts of 150 objects, streamed from standard input: 4 parts, the last of 50
    let out = d
        .command()
        .args(["build", "--input", "-", "--output", "streamed.genie"])
        .args(["--part-objects", "150"])
        .stdin(std::fs::File::open(d.path("o.txt")).unwrap())
        .output()
        .unwrap();
    success(&out);
    let info = d.run(&["info", "--index", "streamed.genie"]);
    assert!(stdout(&info).contains("streamed.genie.part3: objects 450..500"));
    assert_eq!(search("streamed.genie", &[]), want, "streamed parted build");
    let stdin_parts = d
        .command()
        .args(["build", "--input", "-", "--output", "streamed.genie"])
        .args(["--parts", "2"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!stdin_parts.status.success());
    assert!(stderr(&stdin_parts).contains("--part-objects"));
}
