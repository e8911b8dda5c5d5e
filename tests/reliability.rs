//! Never destroy a user's data, never answer from bad numbers, say what was wrong once: the
//! `genie` program's refusals, its whole-or-nothing writes (a build killed at many points leaves
//! the earlier index loadable) and the text of its common error messages.

use genie::core::InvertedIndex;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

#[path = "common/args.rs"]
mod args;
#[path = "common/cli.rs"]
mod cli;
use cli::Dir;

/// `search --device cpu --index o.genie --queries QUERIES --k 1 EXTRA...`.
fn search_o<'a>(queries: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    args::search_cpu("o.genie", queries, "1", extra)
}

#[test]
fn an_output_that_is_an_input_is_refused() {
    let d = Dir::new();
    d.write("objects.txt", b"1 2\n3 4\n");
    d.write("q.txt", b"1\n3 4\n");
    std::fs::create_dir(d.path("sub")).expect("dir");
    for out in ["objects.txt", "./sub/../objects.txt"] {
        let err = d.fails(&["build", "--input", "objects.txt", "--output", out]);
        assert!(
            err.contains("is the same file as the input objects.txt: refusing to write over it"),
            "{err}"
        );
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(d.path("objects.txt"), d.path("link.genie")).expect("link");
        let err = d.fails(&["build", "--input", "objects.txt", "--output", "link.genie"]);
        assert!(err.contains("is the same file as the input"), "{err}");
    }
    assert_eq!(d.read("objects.txt"), b"1 2\n3 4\n");
    // a side file of the output is the input
    d.write("words.txt", b"kitten\nsitting\n");
    std::fs::copy(d.path("words.txt"), d.path("w.genie.seqs")).expect("copy");
    let err = d.fails(&args::build("sequences", &[], "w.genie.seqs", "w.genie"));
    assert!(
        err.contains("w.genie.seqs: is the same file as the input"),
        "{err}"
    );
    assert_eq!(d.read("w.genie.seqs"), b"kitten\nsitting\n");
    // a search's output is its queries, its index or a side file of it
    d.ok(&["build", "--input", "objects.txt", "--output", "o.genie"]);
    d.ok(&args::build("sequences", &[], "words.txt", "s.genie"));
    let index = d.read("o.genie");
    for (idx, out, what) in [
        ("o.genie", "q.txt", "the queries"),
        ("o.genie", "o.genie", "the index"),
        ("s.genie", "s.genie.seqs", "a file of the index"),
    ] {
        let err = d.fails(&args::search_cpu(idx, "q.txt", "1", &["-o", out]));
        assert!(
            err.contains(&format!("is the same file as {what}")),
            "{err}"
        );
    }
    assert_eq!(d.read("q.txt"), b"1\n3 4\n");
    assert_eq!(d.read("o.genie"), index);
    assert!(
        d.names().iter().all(|n| !n.contains("genie-tmp")),
        "{:?}",
        d.names()
    );
}

#[test]
fn a_failed_search_leaves_no_output_and_keeps_an_earlier_one() {
    let d = Dir::new();
    d.write("objects.txt", b"1 2\n3 4\n");
    d.ok(&["build", "--input", "objects.txt", "--output", "o.genie"]);
    d.write("q.txt", b"1\n2\n3\n4\nx\n");
    // the bad query is in the third chunk: two chunks were searched and written before it
    let err = d.fails(&search_o(
        "q.txt",
        &["--batch-queries", "2", "-o", "new.jsonl"],
    ));
    assert!(err.contains("q.txt:5:"), "{err}");
    assert!(
        !d.path("new.jsonl").exists(),
        "a half-written output was left"
    );
    d.write("old.jsonl", b"earlier results\n");
    d.fails(&search_o(
        "q.txt",
        &["--batch-queries", "2", "-o", "old.jsonl"],
    ));
    assert_eq!(d.read("old.jsonl"), b"earlier results\n");
    assert!(
        d.names().iter().all(|n| !n.contains("genie-tmp")),
        "{:?}",
        d.names()
    );
    d.write("q.txt", b"1\n3 4\n");
    d.ok(&search_o("q.txt", &["-o", "old.jsonl"]));
    assert_eq!(
        String::from_utf8(d.read("old.jsonl"))
            .expect("UTF-8")
            .lines()
            .count(),
        2
    );
}

#[test]
fn a_killed_build_leaves_the_earlier_index_whole() {
    let d = Dir::new();
    d.write("small.txt", b"1 2\n3 4\n");
    d.ok(&["build", "--input", "small.txt", "--output", "o.genie"]);
    let old = InvertedIndex::load(d.path("o.genie")).expect("load");
    // an input whose build takes a while
    let mut big = String::new();
    for i in 0..300_000u32 {
        big.push_str(&format!(
            "{} {} {}\n",
            i % 1000,
            1000 + i % 777,
            2000 + i % 31
        ));
    }
    d.write("big.txt", big.as_bytes());
    let mut killed = 0;
    for delay_ms in [5u64, 20, 50, 100, 200, 400, 800] {
        let mut child = d
            .command()
            .args([
                "--quiet", "build", "--input", "big.txt", "--output", "o.genie",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start a build");
        std::thread::sleep(Duration::from_millis(delay_ms));
        if child.try_wait().expect("poll").is_none() {
            child.kill().expect("kill");
            killed += 1;
        }
        let _ = child.wait();
        // the index under the name is the earlier one or the whole new one, never a part
        let now = InvertedIndex::load(d.path("o.genie")).expect("a whole index under the name");
        assert!(
            now.num_objects() == old.num_objects() || now.num_objects() == 300_000,
            "{} objects",
            now.num_objects()
        );
    }
    assert!(
        killed > 0,
        "every build ended before it was killed: make the input larger"
    );
}

#[test]
fn common_messages_say_what_was_wrong_once() {
    let d = Dir::new();
    d.write("objects.txt", b"1 2\n3 x\n");
    d.write("q.txt", b"1\n");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["build", "--input", "nope.txt", "--output", "o.genie"],
            "genie: error: cannot build o.genie: nope.txt: cannot open: No such file or directory (os error 2)\n",
        ),
        (
            vec!["build", "--input", "objects.txt", "--output", "o.genie"],
            "genie: error: cannot build o.genie: objects.txt:2: bad keyword \"x\": expected an unsigned 32-bit integer\n",
        ),
        (
            vec!["search", "--index", "nope.genie", "--queries", "q.txt", "--k", "1"],
            "genie: error: cannot open the index: nope.genie: No such file or directory (os error 2)\n",
        ),
        (
            vec!["build", "--kind", "graphs", "--input", "objects.txt", "--output", "o.genie"],
            "genie: error: no kind \"graphs\" (known: keywords, sequences, documents, table, vectors)\n",
        ),
        (
            vec!["build", "--input", "objects.txt", "--output", "o.genie", "--ngram", "3"],
            "genie: error: --ngram applies to --kind sequences, not to keywords\n",
        ),
    ];
    for (args, want) in cases {
        let err = d.fails(&args);
        assert_eq!(err, want, "genie {args:?}");
    }
    d.write("objects.txt", b"1 2\n3 4\n");
    d.ok(&["build", "--input", "objects.txt", "--output", "o.genie"]);
    let err = d.fails(&search_o("nope.txt", &[]));
    assert_eq!(
        err,
        "genie: error: nope.txt: cannot open: No such file or directory (os error 2)\n"
    );
    d.write("q.txt", b"1\n5-2\n");
    let err = d.fails(&search_o("q.txt", &[]));
    assert_eq!(
        err,
        "genie: error: q.txt:2: bad item \"5-2\": expected LO <= HI in LO-HI\n"
    );
}

/// A `.npy` file of `rows x cols` little-endian f32 values.
fn npy(rows: usize, cols: usize, values: &[f32]) -> Vec<u8> {
    let dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    let mut header = dict.into_bytes();
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(&header);
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

#[test]
fn not_finite_vectors_are_refused() {
    let d = Dir::new();
    d.write("ok.npy", npy(3, 2, &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]));
    d.ok(&args::build("vectors", &[], "ok.npy", "v.genie"));
    for (name, bytes) in [
        ("nan.npy", npy(3, 2, &[0.0, 1.0, 2.0, f32::NAN, 4.0, 5.0])),
        (
            "inf.npy",
            npy(3, 2, &[0.0, 1.0, 2.0, f32::INFINITY, 4.0, 5.0]),
        ),
        ("nan.csv", b"a,b\n0,1\n2,NaN\n4,5\n".to_vec()),
    ] {
        d.write(name, &bytes);
        let err = d.fails(&args::build("vectors", &[], name, "bad.genie"));
        assert!(
            err.contains(&format!("{name}: vector 1 (0-based), column 1: ")),
            "{err}"
        );
        assert!(err.contains("not a finite number"), "{err}");
        assert!(!Path::new(&d.path("bad.genie")).exists());
        // as queries too
        let err = d.fails(&args::search_cpu("v.genie", name, "1", &[]));
        assert!(
            err.contains("column 1: ") && err.contains("not a finite number"),
            "{err}"
        );
    }
}

/// Sends `signal` (`INT`, `TERM`) to a process.
fn send_signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([format!("-{signal}"), pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{signal} {pid}");
}

/// Waits (at most 60 s) until a temporary file shows in the directory; false when the process
/// ended first.
fn wait_for_temporary(d: &Dir, child: &mut std::process::Child) -> bool {
    for _ in 0..6000 {
        if d.names().iter().any(|n| n.contains(".genie-tmp-")) {
            return true;
        }
        if child.try_wait().expect("wait").is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no temporary file appeared in 60 s: {:?}", d.names());
}

/// `genie search` of o.genie to old.jsonl, its queries from a pipe (held by the caller).
fn search_from_a_pipe(d: &Dir, extra: &[&str]) -> std::process::Child {
    d.command()
        .arg("--quiet")
        .args(search_o("-", &["--output", "old.jsonl"]))
        .args(extra)
        .stdin(Stdio::piped())
        .spawn()
        .expect("spawn genie")
}

/// Ctrl-C or SIGTERM while a build or a search writes: the process ends by the signal, no
/// temporary file stays, and the file it was replacing is as it was. A temporary file that a
/// killed process (SIGKILL, no handler) left is removed by the next write of the same file.
#[test]
fn an_interrupted_build_or_search_leaves_no_temporary_file() {
    use std::io::Write;
    use std::os::unix::process::ExitStatusExt;
    let d = Dir::new();
    d.write("small.txt", b"1 2\n3 4\n");
    d.ok(&["build", "--input", "small.txt", "--output", "o.genie"]);
    let before = d.read("o.genie");
    // a build that writes while it sorts: its temporary file exists from the start; an input
    // large enough that it is still writing when signalled (doubled when it was not)
    let mut objects = 200_000usize;
    for (signal, number) in [("INT", 2), ("TERM", 15)] {
        let caught = loop {
            assert!(
                objects <= 6_400_000,
                "the build always ended before the signal"
            );
            let mut text = String::with_capacity(objects * 40);
            for i in 0..objects {
                let x = (i as u64).wrapping_mul(2_654_435_761) % 1_000_000;
                text.push_str(&format!("{x} {} {} {}\n", x / 3, x / 7 + 5, i % 1000));
            }
            d.write("big.txt", text.as_bytes());
            let mut child = d
                .command()
                .args([
                    "--quiet", "build", "--input", "big.txt", "--output", "o.genie",
                ])
                .spawn()
                .expect("spawn genie");
            if wait_for_temporary(&d, &mut child) {
                send_signal(child.id(), signal);
                let status = child.wait().expect("wait");
                if status.success() {
                    // it finished before the signal arrived: the index was replaced
                    d.ok(&["build", "--input", "small.txt", "--output", "o.genie"]);
                } else {
                    break status;
                }
            } else {
                d.ok(&["build", "--input", "small.txt", "--output", "o.genie"]);
            }
            objects *= 2;
        };
        assert_eq!(caught.signal(), Some(number), "build ended by SIG{signal}");
        assert!(
            d.names().iter().all(|n| !n.contains("genie-tmp")),
            "SIG{signal} left {:?}",
            d.names()
        );
        assert_eq!(d.read("o.genie"), before, "the earlier index changed");
    }

    // a search to --output reading queries from a pipe held open: its output's temporary file
    // exists while it waits for more queries
    d.write("old.jsonl", b"earlier results\n");
    for (signal, number) in [("INT", 2), ("TERM", 15)] {
        let mut child = search_from_a_pipe(&d, &["--batch-queries", "1"]);
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(b"1\n3 4\n").expect("queries");
        stdin.flush().expect("flush");
        assert!(wait_for_temporary(&d, &mut child), "the search ended early");
        send_signal(child.id(), signal);
        let status = child.wait().expect("wait");
        drop(stdin);
        assert_eq!(status.signal(), Some(number), "search ended by SIG{signal}");
        assert!(
            d.names().iter().all(|n| !n.contains("genie-tmp")),
            "SIG{signal} left {:?}",
            d.names()
        );
        assert_eq!(d.read("old.jsonl"), b"earlier results\n");
    }

    // SIGKILL cannot be caught: what it leaves goes at the next write of the same file
    let mut child = search_from_a_pipe(&d, &[]);
    assert!(wait_for_temporary(&d, &mut child), "the search ended early");
    child.kill().expect("kill");
    child.wait().expect("wait");
    assert!(
        d.names().iter().any(|n| n.contains("genie-tmp")),
        "SIGKILL leaves one"
    );
    d.write("q.txt", b"1\n");
    d.ok(&search_o("q.txt", &["--output", "old.jsonl"]));
    assert!(
        d.names().iter().all(|n| !n.contains("genie-tmp")),
        "the next write left {:?}",
        d.names()
    );
}
