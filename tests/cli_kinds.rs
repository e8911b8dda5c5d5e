//! End-to-end tests of `genie build --kind` and `genie search` on sequences, documents and tables.

#[path = "common/args.rs"]
mod args;
#[path = "common/cli.rs"]
mod cli;
use cli::Dir;

fn search(d: &Dir, index: &str, queries: &str, k: &str, extra: &[&str]) -> String {
    let out = d.search_cpu(index, queries, k, extra);
    assert!(
        out.status.success(),
        "search {index} {extra:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// `genie build --kind KIND FLAGS... --input INPUT --output OUTPUT` succeeds.
fn build(d: &Dir, kind: &str, flags: &[&str], input: &str, output: &str) {
    d.ok(&args::build(kind, flags, input, output));
}

/// `genie build --kind KIND FLAGS... --input INPUT --output OUTPUT` fails: its message.
fn build_fails(d: &Dir, kind: &str, flags: &[&str], input: &str, output: &str) -> String {
    d.fails(&args::build(kind, flags, input, output))
}

/// Each `genie build --kind KIND FLAGS... --input INPUT --output x.genie` of `cases` (FLAGS,
/// INPUT, NEEDLES) fails with a message that holds every one of its NEEDLES.
fn builds_fail(d: &Dir, kind: &str, cases: &[(&[&str], &str, &[&str])]) {
    for (flags, input, needles) in cases {
        let err = build_fails(d, kind, flags, input, "x.genie");
        assert!(needles.iter().all(|n| err.contains(n)), "{err}");
    }
}

/// `genie search --index INDEX --queries QUERIES --k 1 EXTRA...` fails: its message.
fn search_fails(d: &Dir, index: &str, queries: &str, extra: &[&str]) -> String {
    d.fails(&args::search(index, queries, "1", extra))
}

#[test]
fn sequences_round_trip() {
    let d = Dir::new();
    d.write("seqs.txt", b"aabaab\naab\nbaab\nhello\nhelp\n");
    d.write("q.txt", b"helo\naabaab\n");
    build(&d, "sequences", &[], "seqs.txt", "s.genie");
    assert!(d.path("s.genie.seqs").is_file());
    // padded 3-grams; "helo": hello shares ^^h ^he hel lo$ o$$ (5), help ^^h ^he hel (3), both at
    // distance 1; "aabaab" is itself (8 n-grams), then baab at distance 2 (4 shared)
    let expected = concat!(
        r#"{"query":0,"exact":true,"candidates":32,"hits":[{"id":3,"count":5,"distance":1},{"id":4,"count":3,"distance":1}]}"#,
        "\n",
        r#"{"query":1,"exact":true,"candidates":32,"hits":[{"id":0,"count":8,"distance":0},{"id":2,"count":4,"distance":2}]}"#,
        "\n"
    );
    assert_eq!(search(&d, "s.genie", "q.txt", "2", &[]), expected);
    // K = 2 proves neither query (e.g. "helo": c_K = 3 is not below 6 - 3 * 1); K = 4 holds every
    // sequence of count 1 or more, so the counts outside are 0 and both are proven
    assert_eq!(
        search(
            &d,
            "s.genie",
            "q.txt",
            "2",
            &["--kind", "sequences", "--candidates", "2"]
        ),
        expected.replace("\"candidates\":32", "\"candidates\":4")
    );
    let info = d.ok(&["info", "--json", "--index", "s.genie"]);
    assert!(info.contains("\"kind\":\"sequences\""), "{info}");
    assert!(info.contains("\"n\":3"), "{info}");
}

#[test]
fn sequence_options_and_errors() {
    let d = Dir::new();
    d.write("seqs.txt", b"abc\nab\n");
    d.write("q.txt", b"ab\n");
    build(
        &d,
        "sequences",
        &["--ngram", "3", "--no-pad", "--alphabet", "bytes"],
        "seqs.txt",
        "s.genie",
    );
    // without padding "ab" has no 3-gram: no candidate, not proven
    assert_eq!(
        search(&d, "s.genie", "q.txt", "1", &[]),
        "{\"query\":0,\"exact\":false,\"candidates\":32,\"hits\":[]}\n"
    );
    // the exhaustive fallback verifies all sequences
    assert_eq!(
        search(&d, "s.genie", "q.txt", "1", &["--exhaustive"]),
        "{\"query\":0,\"exact\":true,\"candidates\":2,\"hits\":[{\"id\":1,\"count\":0,\"distance\":0}]}\n"
    );
    let err = build_fails(&d, "sequences", &["--ngram", "0"], "seqs.txt", "z.genie");
    assert!(err.contains("n-gram length 0"), "{err}");
    d.write("bad.txt", b"fine\nnot \xff utf-8\n");
    let err = build_fails(&d, "sequences", &[], "bad.txt", "z.genie");
    assert!(err.contains("bad.txt:2: line is not valid UTF-8"), "{err}");
    std::fs::remove_file(d.path("s.genie.seqs")).expect("remove side file");
    let err = search_fails(&d, "s.genie", "q.txt", &[]);
    assert!(err.contains("s.genie.seqs"), "{err}");
    let err = search_fails(&d, "s.genie", "q.txt", &["--kind", "table"]);
    assert!(err.contains("holds sequences, not table"), "{err}");
}

#[test]
fn documents_from_lines_and_csv() {
    let d = Dir::new();
    d.write(
        "docs.txt",
        b"The cat sat on the mat\nA dog and a cat\nDogs bark at the CAT's mat\n\n",
    );
    d.write("q.txt", b"cat mat\nthe\ndog, cat!\n");
    build(&d, "documents", &[], "docs.txt", "d.genie");
    assert!(d.path("d.genie.words").is_file());
    // words: 0 cat sat mat | 1 dog cat | 2 dogs bark cat mat (the "s" of CAT's is a stop word)
    let expected = concat!(
        r#"{"query":0,"hits":[{"id":0,"count":2},{"id":2,"count":2},{"id":1,"count":1}]}"#,
        "\n",
        r#"{"query":1,"hits":[]}"#,
        "\n",
        r#"{"query":2,"hits":[{"id":1,"count":2},{"id":0,"count":1},{"id":2,"count":1}]}"#,
        "\n"
    );
    assert_eq!(search(&d, "d.genie", "q.txt", "3", &[]), expected);
    // the same answers from an index split into parts that stream through the device
    for parts in ["2", "3"] {
        assert_eq!(
            search(&d, "d.genie", "q.txt", "3", &["--parts", parts]),
            expected
        );
    }

    d.write(
        "docs.csv",
        b"id,text\n1,\"The cat sat\non the mat\"\n2,A dog and a cat\n3,\"Dogs bark at the CAT's mat\"\n4,\n",
    );
    d.write("q.csv", b"text\ncat mat\nthe\n\"dog, cat!\"\n");
    let column = ["--column", "text"];
    build(&d, "documents", &column, "docs.csv", "c.genie");
    assert_eq!(search(&d, "c.genie", "q.csv", "3", &column), expected);
    d.write("ragged.csv", b"id,text\n1,a\n2,b,c\n");
    d.write("bad.csv", b"id,text\n1,caf\xe9\n");
    builds_fail(
        &d,
        "documents",
        &[
            (&["--column", "body"], "docs.csv", &["no column \"body\""]),
            (
                &column,
                "ragged.csv",
                &["ragged.csv:3: row has 3 fields, expected 2"],
            ),
            (&column, "bad.csv", &["bad.csv:2:", "UTF-8"]),
        ],
    );
}

#[test]
fn tables_with_header_and_names() {
    let d = Dir::new();
    d.write(
        "people.csv",
        b"age,job,hours\n25,clerk,40\n35,nurse,38\n45,clerk,?\n55,pilot,60\n",
    );
    build(&d, "table", &["--bins", "10"], "people.csv", "p.genie");
    // age [25, 55] in 10 intervals of 3; hours [38, 60] in 10 of 2.2
    d.write(
        "q.txt",
        b"age=30..40 job=clerk\n45,clerk,40\njob=pilot hours=59~1\n",
    );
    // query 0: rows 0 and 2 (clerk) and 1 (age 35) meet one condition each: ids ascending;
    // query 1 (a row, radius 0): row 0 (clerk, 40) and row 2 (45, clerk) meet two;
    // query 2: row 3 (pilot, 60 in the last interval)
    let expected = concat!(
        r#"{"query":0,"hits":[{"id":0,"count":1},{"id":1,"count":1}]}"#,
        "\n",
        r#"{"query":1,"hits":[{"id":0,"count":2},{"id":2,"count":2}]}"#,
        "\n",
        r#"{"query":2,"hits":[{"id":3,"count":2}]}"#,
        "\n"
    );
    assert_eq!(search(&d, "p.genie", "q.txt", "2", &[]), expected);
    assert_eq!(
        search(&d, "p.genie", "q.txt", "2", &["--parts", "2"]),
        expected
    );

    let err = search_fails(&d, "p.genie", "q.txt", &["--query-format", "conditions"]);
    assert!(err.contains("q.txt:2:"), "{err}");
    d.write("bad.txt", b"age=30\nsalary=3\n");
    let err = search_fails(&d, "p.genie", "bad.txt", &[]);
    assert!(
        err.contains("bad.txt:2: unknown attribute \"salary\" (known: age, job, hours)"),
        "{err}"
    );

    // header-less with a UCI .names description beside it
    d.write("jobs.data", b"25, clerk, 40, yes\n35, nurse, 38, no\n\n");
    d.write(
        "jobs.names",
        b"| comment\nyes, no.\n\nage: continuous.\njob: clerk, nurse.\nhours: continuous.\n",
    );
    build(&d, "table", &[], "jobs.data", "j.genie");
    let info = d.ok(&["info", "--json", "--index", "j.genie"]);
    assert!(info.contains("\"name\":\"class\""), "{info}");
    builds_fail(
        &d,
        "table",
        &[
            (
                &["--names", "age,job"],
                "jobs.data",
                &["jobs.data:1: row has 4 fields, expected 2"],
            ),
            (
                &["--numeric", "job", "--header"],
                "people.csv",
                &["\"clerk\" is not a number"],
            ),
            (
                &["--numeric", "salary"],
                "people.csv",
                &["unknown attribute \"salary\""],
            ),
        ],
    );
}

#[test]
fn keyword_indexes_accept_kind_keywords() {
    let d = Dir::new();
    d.write("objects.txt", b"1 2\n2 3\n");
    d.write("q.txt", b"2\n");
    d.ok(&["build", "--input", "objects.txt", "--output", "k.genie"]);
    let out = search(&d, "k.genie", "q.txt", "2", &["--kind", "keywords"]);
    assert_eq!(
        out,
        "{\"query\":0,\"hits\":[{\"id\":0,\"count\":1},{\"id\":1,\"count\":1}]}\n"
    );
    let err = search_fails(&d, "k.genie", "q.txt", &["--kind", "documents"]);
    assert!(err.contains("holds keywords, not documents"), "{err}");
    // options of another kind are errors, not silently ignored
    let err = d.fails(&[
        "build",
        "--ngram",
        "4",
        "--input",
        "objects.txt",
        "--output",
        "x.genie",
    ]);
    assert!(
        err.contains("--ngram applies to --kind sequences, not to keywords"),
        "{err}"
    );
    let err = search_fails(&d, "k.genie", "q.txt", &["--radius", "2"]);
    assert!(
        err.contains("--radius applies to --kind table, not to keywords"),
        "{err}"
    );
}
