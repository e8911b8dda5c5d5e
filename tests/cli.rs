//! End-to-end tests of the `genie` binary.

#![allow(clippy::unwrap_used)]

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use tempfile::TempDir;

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

/// A scratch directory with the objects and queries files and a built index.
struct Fixture {
    dir: TempDir,
}

impl Fixture {
    fn new() -> Self {
        let f = Self {
            dir: tempfile::tempdir().expect("temp dir"),
        };
        f.write("objects.txt", OBJECTS.as_bytes());
        f.write("queries.txt", QUERIES.as_bytes());
        let out = genie(&[
            "build".as_ref(),
            "--input".as_ref(),
            f.path("objects.txt").as_os_str(),
            "--output".as_ref(),
            f.path("index.genie").as_os_str(),
        ]);
        assert_success(&out);
        f
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, bytes).expect("write fixture file");
        p
    }

    /// `genie search --index index.genie --queries <queries> --k <k>` plus `extra`.
    fn search(&self, queries: &str, k: &str, extra: &[&str]) -> Output {
        command()
            .args(["search", "--index"])
            .arg(self.path("index.genie"))
            .arg("--queries")
            .arg(self.path(queries))
            .args(["--k", k])
            .args(extra)
            .output()
            .expect("run genie")
    }
}

#[path = "common/bin.rs"]
mod bin;
use bin::binary;

fn command() -> Command {
    let mut cmd = Command::new(binary());
    cmd.env_remove("GENIE_DEVICE").env_remove("RUST_LOG");
    cmd
}

fn genie<S: AsRef<OsStr>>(args: &[S]) -> Output {
    command().args(args).output().expect("run genie")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("UTF-8 stdout")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "genie failed ({:?}): {}",
        out.status,
        stderr(out)
    );
}

/// Asserts a clean failure (non-zero exit, no panic) and returns stderr.
fn assert_failure(out: &Output) -> String {
    let err = stderr(out);
    assert!(!out.status.success(), "genie succeeded; stderr: {err}");
    assert_ne!(out.status.code(), None, "killed by a signal: {err}");
    assert!(!err.contains("panicked"), "genie panicked: {err}");
    assert!(err.contains("error"), "no error message: {err}");
    err
}

fn search_ok(f: &Fixture, queries: &str, k: &str, extra: &[&str]) -> String {
    let out = f.search(queries, k, extra);
    assert_success(&out);
    stdout(&out)
}

#[test]
fn build_and_search_round_trip() {
    let f = Fixture::new();
    let out = genie(&[
        "build".as_ref(),
        "--input".as_ref(),
        f.path("objects.txt").as_os_str(),
        "--output".as_ref(),
        f.path("again.genie").as_os_str(),
    ]);
    assert_success(&out);
    let summary = stderr(&out);
    for part in ["6 objects", "12 postings", "keyword space 10"] {
        assert!(summary.contains(part), "summary lacks {part:?}: {summary}");
    }
    assert_eq!(stdout(&out), "");
    assert_eq!(search_ok(&f, "queries.txt", "3", &[]), EXPECTED);
}

#[test]
fn output_file() {
    let f = Fixture::new();
    let dest = f.path("hits.jsonl");
    let out = f.search(
        "queries.txt",
        "3",
        &["--output", dest.to_str().expect("UTF-8")],
    );
    assert_success(&out);
    assert_eq!(stdout(&out), "");
    assert_eq!(
        std::fs::read_to_string(&dest).expect("output file"),
        EXPECTED
    );
}

#[test]
fn every_line_is_json() {
    let f = Fixture::new();
    let text = search_ok(&f, "queries.txt", "10", &["--device", "cpu"]);
    for (i, line) in text.lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).expect("JSON line");
        assert_eq!(v["query"], i as u64);
        assert!(v["hits"].is_array());
    }
    assert_eq!(text.lines().count(), QUERIES.lines().count());
}

#[test]
fn device_cpu() {
    let f = Fixture::new();
    assert_eq!(
        search_ok(&f, "queries.txt", "3", &["--device", "cpu"]),
        EXPECTED
    );
    let out = command()
        .env("GENIE_DEVICE", "cpu")
        .args(["search", "--index"])
        .arg(f.path("index.genie"))
        .arg("--queries")
        .arg(f.path("queries.txt"))
        .args(["--k", "3"])
        .output()
        .expect("run genie");
    assert_success(&out);
    assert_eq!(stdout(&out), EXPECTED);
}

#[test]
fn device_gpu_without_gpu_is_an_error() {
    let f = Fixture::new();
    let out = f.search("queries.txt", "3", &["--device", "gpu"]);
    if out.status.success() {
        skip("a usable GPU is present, so --device gpu succeeded");
        assert_eq!(stdout(&out), EXPECTED);
        return;
    }
    let err = assert_failure(&out);
    assert!(err.contains("GPU"), "{err}");
    assert!(err.contains("--device"), "{err}");
    assert_eq!(stdout(&out), "");

    let out = command()
        .env("GENIE_DEVICE", "gpu")
        .args(["search", "--index"])
        .arg(f.path("index.genie"))
        .arg("--queries")
        .arg(f.path("queries.txt"))
        .args(["--k", "3"])
        .output()
        .expect("run genie");
    let err = assert_failure(&out);
    assert!(err.contains("GPU") && err.contains("GENIE_DEVICE"), "{err}");
}

#[test]
fn bad_device_values() {
    let f = Fixture::new();
    assert_failure(&f.search("queries.txt", "3", &["--device", "tpu"]));
    let out = command()
        .env("GENIE_DEVICE", "tpu")
        .args(["search", "--index"])
        .arg(f.path("index.genie"))
        .arg("--queries")
        .arg(f.path("queries.txt"))
        .args(["--k", "3"])
        .output()
        .expect("run genie");
    let err = assert_failure(&out);
    assert!(err.contains("GENIE_DEVICE") && err.contains("tpu"), "{err}");
    // --device takes precedence over GENIE_DEVICE
    let out = command()
        .env("GENIE_DEVICE", "tpu")
        .args(["search", "--device", "cpu", "--index"])
        .arg(f.path("index.genie"))
        .arg("--queries")
        .arg(f.path("queries.txt"))
        .args(["--k", "3"])
        .output()
        .expect("run genie");
    assert_success(&out);
    assert_eq!(stdout(&out), EXPECTED);
}

#[test]
fn count_table_matches_cpq() {
    let f = Fixture::new();
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
    let f = Fixture::new();
    let text = search_ok(&f, "queries.txt", "0", &[]);
    let expected: String = (0..8)
        .map(|q| format!("{{\"query\":{q},\"hits\":[]}}\n"))
        .collect();
    assert_eq!(text, expected);
}

#[test]
fn chunked_search_matches_default() {
    let f = Fixture::new();
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
    assert_failure(&f.search("five.txt", "3", &["--batch-queries", "0"]));
}

#[test]
fn queries_from_stdin() {
    let f = Fixture::new();
    let mut child = command()
        .args(["search", "--queries", "-", "--k", "3", "--index"])
        .arg(f.path("index.genie"))
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
    assert_success(&out);
    assert_eq!(stdout(&out), EXPECTED);
}

#[test]
fn empty_files() {
    let f = Fixture::new();
    f.write("none.txt", b"");
    assert_eq!(search_ok(&f, "none.txt", "3", &[]), "");

    f.write("no-objects.txt", b"");
    let out = genie(&[
        "build".as_ref(),
        "--input".as_ref(),
        f.path("no-objects.txt").as_os_str(),
        "--output".as_ref(),
        f.path("index.genie").as_os_str(),
    ]);
    assert_success(&out);
    assert_eq!(
        search_ok(&f, "queries.txt", "3", &[]).lines().count(),
        QUERIES.lines().count()
    );
}

#[test]
fn info_prints_statistics() {
    let f = Fixture::new();
    let out = genie(&[
        "info".as_ref(),
        "--index".as_ref(),
        f.path("index.genie").as_os_str(),
    ]);
    assert_success(&out);
    let text = stdout(&out);
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
    let out = genie(&[
        "info".as_ref(),
        "--json".as_ref(),
        "--index".as_ref(),
        f.path("index.genie").as_os_str(),
    ]);
    assert_success(&out);
    let info: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(info["objects"], 6);
    assert_eq!(info["postings"], 12);
    assert_eq!(info["format_version"], 2);
    let input = info["metadata"]["input"].as_str().unwrap_or_default();
    assert!(input.ends_with("objects.txt"), "{info}");
}

#[test]
fn help_of_every_subcommand() {
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
        let out = genie(args);
        assert_success(&out);
        let text = stdout(&out);
        for w in words {
            assert!(
                text.contains(w),
                "`genie {}` lacks {w:?}:\n{text}",
                args.join(" ")
            );
        }
    }
    assert_success(&genie(&["--version"]));
    assert_failure(&genie::<&str>(&[]));
}

/// Runs `genie build` on `content` and checks the error names the file, the line and `needle`.
fn check_bad_objects(content: &[u8], line: u32, needle: &str) {
    let f = Fixture::new();
    let input = f.write("bad-objects.txt", content);
    let output = f.path("bad.genie");
    let out = genie(&[
        "build".as_ref(),
        "--input".as_ref(),
        input.as_os_str(),
        "--output".as_ref(),
        output.as_os_str(),
    ]);
    let err = assert_failure(&out);
    assert!(
        err.contains(&format!("bad-objects.txt:{line}:")),
        "no file:line in {err}"
    );
    assert!(err.contains(needle), "{needle:?} not in {err}");
    assert!(!output.exists(), "an index was written despite the error");
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
    let f = Fixture::new();
    let out = genie(&[
        "build".as_ref(),
        "--input".as_ref(),
        f.path("absent-objects.txt").as_os_str(),
        "--output".as_ref(),
        f.path("x.genie").as_os_str(),
    ]);
    assert!(assert_failure(&out).contains("absent-objects.txt"));

    let err = assert_failure(&f.search("absent-queries.txt", "3", &[]));
    assert!(err.contains("absent-queries.txt"), "{err}");

    let out = genie(&[
        "search".as_ref(),
        "--index".as_ref(),
        f.path("absent.genie").as_os_str(),
        "--queries".as_ref(),
        f.path("queries.txt").as_os_str(),
        "--k".as_ref(),
        "3".as_ref(),
    ]);
    assert!(assert_failure(&out).contains("absent.genie"));
}

/// Runs `genie search` on `content` and checks the error names the file, the line and `needle`.
fn check_bad_queries(content: &[u8], line: u32, needle: &str) {
    let f = Fixture::new();
    f.write("bad-queries.txt", content);
    let err = assert_failure(&f.search("bad-queries.txt", "3", &[]));
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
    let f = Fixture::new();
    f.write("late.txt", b"1\n2\n3\n4\n5\nx\n");
    let dest = f.path("late.jsonl");
    let out = f.search(
        "late.txt",
        "3",
        &["--batch-queries", "2", "-o", dest.to_str().expect("UTF-8")],
    );
    let err = assert_failure(&out);
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
    let f = Fixture::new();
    f.write("many.txt", many_queries().as_bytes());
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
    let dest = f.path("many.jsonl");
    let out = f.search(
        "many.txt",
        "4",
        &["--batch-queries", "3", "-o", dest.to_str().expect("UTF-8")],
    );
    assert_success(&out);
    assert_eq!(std::fs::read_to_string(&dest).expect("output file"), whole);
}

#[test]
fn bad_query_in_a_later_chunk_stops_the_pipeline() {
    let f = Fixture::new();
    let mut text = many_queries();
    // line 11: the first query of the fourth chunk of 3 is the bad one; more chunks follow
    let at = text.match_indices('\n').nth(9).expect("10 lines").0 + 1;
    text.insert_str(at, "7 oops\n");
    f.write("later.txt", text.as_bytes());
    let out = f.search("later.txt", "4", &["--batch-queries", "3"]);
    let err = assert_failure(&out);
    assert!(
        err.contains("later.txt:11:") && err.contains("\"oops\""),
        "{err}"
    );
    // the chunks before the bad one are written, in order, and nothing after them
    f.write("many.txt", many_queries().as_bytes());
    let whole = search_ok(&f, "many.txt", "4", &[]);
    let before: String = whole.lines().take(9).map(|l| format!("{l}\n")).collect();
    assert_eq!(stdout(&out), before);

    let dest = f.path("later.jsonl");
    let out = f.search(
        "later.txt",
        "4",
        &["--batch-queries", "3", "-o", dest.to_str().expect("UTF-8")],
    );
    assert!(assert_failure(&out).contains("later.txt:11:"));
    assert!(!dest.exists(), "a failed search left its output");
}

/// A full standard output stops the search with an error naming it (no hang, no panic), while
/// later chunks are still to be read.
#[cfg(target_os = "linux")]
#[test]
fn output_write_failure_stops_the_pipeline() {
    let f = Fixture::new();
    let text: String = (0..20_000u32)
        .map(|i| format!("{} {}\n", i % 10, (i / 10) % 10))
        .collect();
    f.write("lots.txt", text.as_bytes());
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("open /dev/full");
    let out = command()
        .args(["search", "--k", "6", "--batch-queries", "50", "--index"])
        .arg(f.path("index.genie"))
        .arg("--queries")
        .arg(f.path("lots.txt"))
        .stdout(full)
        .output()
        .expect("run genie");
    let err = assert_failure(&out);
    assert!(err.contains("cannot write to <stdout>"), "{err}");
}

#[test]
fn corrupted_index() {
    let f = Fixture::new();
    let good = std::fs::read(f.path("index.genie")).expect("index bytes");

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
        let index = f.path(name);
        let out = genie(&[
            "search".as_ref(),
            "--index".as_ref(),
            index.as_os_str(),
            "--queries".as_ref(),
            f.path("queries.txt").as_os_str(),
            "--k".as_ref(),
            "3".as_ref(),
        ]);
        let err = assert_failure(&out);
        assert!(err.contains(name), "{name}: {err}");
        assert_eq!(stdout(&out), "");

        let out = genie(&["info".as_ref(), "--index".as_ref(), index.as_os_str()]);
        assert!(assert_failure(&out).contains(name));
    }
}

#[test]
fn quiet_build_prints_nothing() {
    let f = Fixture::new();
    let out = genie(&[
        "--quiet".as_ref(),
        "build".as_ref(),
        "--input".as_ref(),
        f.path("objects.txt").as_os_str(),
        "--output".as_ref(),
        f.path("q.genie").as_os_str(),
    ]);
    assert_success(&out);
    assert_eq!(stderr(&out), "");
    assert!(Path::new(&f.path("q.genie")).exists());
}

/// Reports a skipped test on stderr past the test harness's capture.
fn skip(reason: impl std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "skipped: {reason}");
}

#[test]
fn parted_build_and_in_memory_parts_match_one_part() {
    let dir = tempfile::tempdir().unwrap();
    let objects: String = (0..500u32)
        .map(|i| format!("{} {} {}\n", i % 11, 20 + i % 7, 40 + i % 3))
        .collect();
    let queries: String = (0..40u32)
        .map(|i| format!("{} {}-{} 40:2\n", i % 11, 20 + i % 7, 22 + i % 7))
        .collect();
    let obj = dir.path().join("o.txt");
    let qs = dir.path().join("q.txt");
    std::fs::write(&obj, objects).unwrap();
    std::fs::write(&qs, queries).unwrap();
    let one = dir.path().join("one.genie");
    let parted = dir.path().join("parted.genie");
    assert!(genie(&[
        "build",
        "--input",
        obj.to_str().unwrap(),
        "--output",
        one.to_str().unwrap()
    ])
    .status
    .success());
    let out = genie(&[
        "build",
        "--input",
        obj.to_str().unwrap(),
        "--output",
        parted.to_str().unwrap(),
        "--parts",
        "4",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("parted.genie.part3").exists());
    let search = |index: &std::path::Path, extra: &[&str]| {
        let mut args = vec![
            "search",
            "--index",
            index.to_str().unwrap(),
            "--queries",
            qs.to_str().unwrap(),
            "--k",
            "7",
            "--device",
            "cpu",
        ];
        args.extend_from_slice(extra);
        let out = genie(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let want = search(&one, &[]);
    assert_eq!(want.lines().count(), 40);
    assert_eq!(search(&parted, &[]), want, "parted index file");
    assert_eq!(search(&one, &["--parts", "3"]), want, "split in memory");
    let info = genie(&["info", "--index", parted.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&info.stdout).contains("parted.genie.part3: objects 375..500"));
    // parts of 150 objects, streamed from standard input: 4 parts, the last of 50
    let streamed = dir.path().join("streamed.genie");
    let out = Command::new(binary())
        .args([
            "build",
            "--input",
            "-",
            "--output",
            streamed.to_str().unwrap(),
            "--part-objects",
            "150",
        ])
        .stdin(std::fs::File::open(&obj).unwrap())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info = genie(&["info", "--index", streamed.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&info.stdout).contains("streamed.genie.part3: objects 450..500")
    );
    assert_eq!(search(&streamed, &[]), want, "streamed parted build");
    let stdin_parts = Command::new(binary())
        .args([
            "build",
            "--input",
            "-",
            "--output",
            streamed.to_str().unwrap(),
            "--parts",
            "2",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!stdin_parts.status.success());
    assert!(String::from_utf8_lossy(&stdin_parts.stderr).contains("--part-objects"));
}
