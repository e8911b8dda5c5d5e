//! End-to-end tests of `genie build --kind vectors` and `genie search --kind vectors` on a tiny
//! generated vector file.

#[path = "common/cli.rs"]
mod cli;
use cli::{failure, stderr, success, Dir};

/// 40 vectors of dimension 4 in 4 clusters (row i in cluster i % 4), as CSV.
fn data_csv() -> String {
    let mut s = String::from("a,b,c,d\n");
    for i in 0..40u32 {
        let c = i % 4;
        let row: Vec<String> = (0..4)
            .map(|j| {
                let base = if j == c { 50.0 } else { 0.0 };
                let jitter = ((i * 7 + j * 3) % 11) as f32 / 10.0;
                format!("{}", base + jitter)
            })
            .collect();
        s.push_str(&row.join(","));
        s.push('\n');
    }
    s
}

/// A folder with the data (`data.csv`) and three of its rows as queries (`q.csv`).
fn fixture() -> Dir {
    let d = Dir::new();
    d.write("data.csv", data_csv());
    // queries: rows 0, 5 and 10 of the data
    let data = data_csv();
    let q: Vec<&str> = data.lines().skip(1).collect();
    d.write("q.csv", format!("{}\n{}\n{}\n", q[0], q[5], q[10]));
    d
}

/// `genie build --kind vectors --lsh e2lsh` of `data.csv` into `output` succeeds, its summary
/// with `parts`.
fn build_vectors(d: &Dir, output: &str, parts: &[&str]) {
    let built = d.run(&[
        "build", "--kind", "vectors", "--lsh", "e2lsh", "--input", "data.csv", "--output", output,
    ]);
    success(&built);
    let summary = stderr(&built);
    for part in parts {
        assert!(summary.contains(part), "summary lacks {part:?}: {summary}");
    }
}

#[test]
fn build_and_search_vectors() {
    let d = fixture();
    build_vectors(
        &d,
        "v.genie",
        &[
            "40 vectors of dimension 4",
            "e2lsh with 258 functions",
            "8192 buckets",
            "seed 1",
        ],
    );
    assert!(d.path("v.genie.vectors").is_file());

    let text = success(&d.search("v.genie", "q.csv", "3", &["--kind", "vectors"]));
    // the count table and one query at a time give the same lines
    let same = success(&d.search(
        "v.genie",
        "q.csv",
        "3",
        &[
            "--kind",
            "vectors",
            "--method",
            "count-table",
            "--batch-queries",
            "1",
        ],
    ));
    assert_eq!(same, text);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(lines.len(), 3);
    for (i, (line, row)) in lines.iter().zip([0u64, 5, 10]).enumerate() {
        assert_eq!(line["query"], i as u64);
        let hits = line["hits"].as_array().expect("hits");
        assert_eq!(hits.len(), 3);
        // the query is a row of the data: found first, at distance 0, colliding everywhere
        assert_eq!(hits[0]["id"], row);
        assert_eq!(hits[0]["distance"], 0.0);
        assert_eq!(hits[0]["count"], 258);
        for h in hits {
            assert_eq!(h["id"].as_u64().expect("id") % 4, row % 4, "{line}");
        }
        let d: Vec<f64> = hits
            .iter()
            .map(|h| h["distance"].as_f64().expect("distance"))
            .collect();
        assert!(d.windows(2).all(|w| w[0] <= w[1]));
    }

    // the same with explicit parameters, another family and pure tau-ANN (K2 = K)
    success(&d.run(&[
        "build",
        "--kind",
        "vectors",
        "--lsh",
        "rbh",
        "--functions",
        "32",
        "--width",
        "100",
        "--buckets",
        "64",
        "--seed",
        "9",
        "--input",
        "data.csv",
        "--output",
        "r.genie",
    ]));
    let info = success(&d.run(&["info", "--json", "--index", "r.genie"]));
    for part in [
        "\"family\":\"rbh\"",
        "\"functions\":32",
        "\"width\":100.0",
        "\"buckets\":64",
        "\"seed\":9",
    ] {
        assert!(info.contains(part), "info lacks {part}: {info}");
    }
    let text = success(&d.search(
        "r.genie",
        "q.csv",
        "2",
        &["--kind", "vectors", "--candidates", "2", "--device", "cpu"],
    ));
    assert_eq!(text.lines().count(), 3);
}

#[test]
fn vector_errors_are_clear() {
    let d = fixture();
    d.write("bad.csv", "1,2\n3\n");
    let err = failure(&d.run(&[
        "build", "--kind", "vectors", "--input", "bad.csv", "--output", "b.genie",
    ]));
    assert!(err.contains("bad.csv:2: 1 values, expected 2"), "{err}");

    let err = failure(&d.run(&[
        "build", "--lsh", "e2lsh", "--input", "data.csv", "--output", "b.genie",
    ]));
    assert!(
        err.contains("--lsh applies to --kind vectors, not to keywords"),
        "{err}"
    );

    success(&d.run(&[
        "build", "--kind", "vectors", "--input", "data.csv", "--output", "v.genie",
    ]));
    d.write("q3.csv", "1,2,3\n");
    let err = failure(&d.search("v.genie", "q3.csv", "1", &["--kind", "vectors"]));
    assert!(
        err.contains(
            "q3.csv: vector 0 (0-based): a query of dimension 3, the index holds vectors of \
             dimension 4"
        ),
        "{err}"
    );

    std::fs::remove_file(d.path("v.genie.vectors")).expect("remove");
    let err = failure(&d.search("v.genie", "q.csv", "1", &["--kind", "vectors"]));
    assert!(err.contains("v.genie.vectors"), "{err}");
}

#[test]
fn tuned_defaults_are_printed_stored_and_overridden() {
    let d = fixture();
    build_vectors(
        &d,
        "t.genie",
        &[
            "tuned in",
            "on 20 held-out vectors",
            "x the estimate",
            "candidates give recall@10",
            "(target 0.95)",
        ],
    );
    let info = success(&d.run(&["info", "--json", "--index", "t.genie"]));
    for part in ["\"candidates\":", "\"tuned\":", "\"width_tuned\":true"] {
        assert!(info.contains(part), "info lacks {part}: {info}");
    }

    // a width and candidates given at build: nothing tuned, the candidates stored
    let built = d.run(&[
        "build",
        "--kind",
        "vectors",
        "--lsh",
        "e2lsh",
        "--width",
        "2",
        "--candidates",
        "5",
        "--input",
        "data.csv",
        "--output",
        "g.genie",
    ]);
    success(&built);
    let summary = stderr(&built);
    assert!(
        summary.contains("width 2.000000") && summary.contains("5 candidates by default (given"),
        "{summary}"
    );
    let info = success(&d.run(&["info", "--json", "--index", "g.genie"]));
    assert!(
        info.contains("\"candidates\":5") && !info.contains("\"tuned\""),
        "{info}"
    );
    // the width given, the candidates tuned
    let built = d.run(&[
        "build",
        "--kind",
        "vectors",
        "--lsh",
        "l1",
        "--width",
        "3",
        "--target-recall",
        "0.9",
        "--input",
        "data.csv",
        "--output",
        "w.genie",
    ]);
    success(&built);
    let summary = stderr(&built);
    assert!(
        summary.contains("width 3.000000 (given)") && summary.contains("(target 0.9)"),
        "{summary}"
    );
    // a search without --candidates re-ranks the stored default (for k up to 10), one with it
    // re-ranks what it asks
    let search = |index: &str, extra: &[&str]| {
        success(&d.search(index, "q.csv", "3", &[&["--device", "cpu"], extra].concat()))
    };
    let meta = serde_json::from_str::<serde_json::Value>(&info).expect("JSON")["metadata"].clone();
    assert_eq!(meta["candidates"], 5);
    assert_eq!(
        search("g.genie", &[]),
        search("g.genie", &["--candidates", "5"])
    );
    let info = success(&d.run(&["info", "--json", "--index", "t.genie"]));
    let meta = serde_json::from_str::<serde_json::Value>(&info).expect("JSON")["metadata"].clone();
    let tuned = meta["candidates"]
        .as_u64()
        .expect("tuned candidates")
        .to_string();
    assert_eq!(
        search("t.genie", &[]),
        search("t.genie", &["--candidates", &tuned])
    );
    success(&d.search("t.genie", "q.csv", "3", &["--candidates", "1"]));

    // targets outside (0, 1] and zero candidates are refused, naming the option
    for bad in ["0", "1.5", "-1"] {
        let flag = format!("--target-recall={bad}");
        let err = failure(&d.run(&[
            "build", "--kind", "vectors", &flag, "--input", "data.csv", "--output", "x.genie",
        ]));
        assert!(
            err.contains("option target_recall: expected a recall in (0, 1]"),
            "{bad}: {err}"
        );
    }
    let err = failure(&d.run(&[
        "build",
        "--kind",
        "vectors",
        "--candidates",
        "0",
        "--input",
        "data.csv",
        "--output",
        "x.genie",
    ]));
    assert!(err.contains("--candidates"), "{err}");
    let err = failure(&d.run(&[
        "build",
        "--kind",
        "vectors",
        "--lsh",
        "codebook",
        "--candidates",
        "9",
        "--input",
        "data.csv",
        "--output",
        "x.genie",
    ]));
    assert!(err.contains("option candidates"), "{err}");
}

/// NaN, infinite values and an empty file are refused with the file, the vector and the column,
/// by both vector families at build and by a search's queries.
#[test]
fn non_finite_and_empty_vector_files_are_refused() {
    let d = fixture();
    d.write("nan.csv", "1,2,3,4\nnan,2,3,4\n");
    d.write("inf.csv", "1,2,3,4\n5,inf,3,4\n");
    d.write("empty.csv", "");
    for lsh in ["codebook", "e2lsh"] {
        for (file, want) in [
            (
                "nan.csv",
                "nan.csv: vector 1 (0-based), column 0: NaN is not a finite number",
            ),
            (
                "inf.csv",
                "inf.csv: vector 1 (0-based), column 1: inf is not a finite number",
            ),
            ("empty.csv", "empty.csv: no vector"),
        ] {
            let err = failure(&d.run(&[
                "build", "--kind", "vectors", "--lsh", lsh, "--input", file, "--output", "x.genie",
            ]));
            assert!(err.contains(want), "{lsh} {file}: {err}");
            assert_eq!(err.matches(file).count(), 1, "the file named once: {err}");
            assert!(!err.contains("cannot build a"), "{err}");
        }
    }
    success(&d.run(&[
        "build", "--kind", "vectors", "--lsh", "codebook", "--input", "data.csv", "--output",
        "c.genie",
    ]));
    for (file, want) in [
        (
            "nan.csv",
            "nan.csv: vector 1 (0-based), column 0: NaN is not a finite number",
        ),
        ("empty.csv", "empty.csv: no vector"),
    ] {
        let err = failure(&d.search("c.genie", file, "1", &[]));
        assert!(err.contains(want), "search {file}: {err}");
    }
}

/// The hits of `search`'s JSON lines: (id, distance) per query.
fn hits_of(text: &str) -> Vec<Vec<(u64, f64)>> {
    text.lines()
        .map(|l| {
            let line: serde_json::Value = serde_json::from_str(l).expect("JSON line");
            line["hits"]
                .as_array()
                .expect("hits")
                .iter()
                .map(|h| {
                    let id = h["id"].as_u64().expect("id");
                    (id, h["distance"].as_f64().expect("distance"))
                })
                .collect()
        })
        .collect()
}

#[test]
fn the_default_family_is_the_codebook_with_three_metrics() {
    let d = fixture();
    let built = d.run(&[
        "build", "--kind", "vectors", "--input", "data.csv", "--output", "c.genie",
    ]);
    success(&built);
    assert!(
        stderr(&built).contains("metric l2, codebook with"),
        "{}",
        stderr(&built)
    );
    let info = success(&d.run(&["info", "--json", "--index", "c.genie"]));
    assert!(info.contains("\"family\":\"codebook\""), "{info}");
    // an LSH option without --lsh names the way to an LSH family
    let err = failure(&d.run(&[
        "build", "--kind", "vectors", "--width", "2", "--input", "data.csv", "--output", "x.genie",
    ]));
    assert!(
        err.contains("option width") && err.contains("name one with --lsh"),
        "{err}"
    );
    let err = failure(&d.run(&[
        "build", "--kind", "vectors", "--lsh", "srp", "--metric", "ip", "--input", "data.csv",
        "--output", "x.genie",
    ]));
    assert!(
        err.contains("option metric") && err.contains("--lsh codebook"),
        "{err}"
    );

    // queries scaled from the data's rows: cosine finds the row at distance 0 whatever the
    // scale; ip reports minus the inner product, checked against the data
    let rows: Vec<Vec<f64>> = data_csv()
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse().expect("number")).collect())
        .collect();
    let scaled: Vec<String> = [3usize, 6, 9]
        .iter()
        .map(|&r| {
            let v: Vec<String> = rows[r].iter().map(|x| format!("{}", x * 3.0)).collect();
            v.join(",")
        })
        .collect();
    d.write("scaled.csv", scaled.join("\n") + "\n");
    for metric in ["cosine", "ip"] {
        let out = format!("{metric}.genie");
        let built = d.run(&[
            "build", "--kind", "vectors", "--metric", metric, "--input", "data.csv", "--output",
            &out,
        ]);
        success(&built);
        assert!(
            stderr(&built).contains(&format!("metric {metric}")),
            "{}",
            stderr(&built)
        );
        let answers = hits_of(&success(&d.search(
            &out,
            "scaled.csv",
            "3",
            &["--kind", "vectors", "--candidates", "40", "--device", "cpu"],
        )));
        for (q, (&row, hits)) in [3usize, 6, 9].iter().zip(&answers).enumerate() {
            assert_eq!(hits.len(), 3, "query {q}");
            let query: Vec<f64> = rows[row].iter().map(|x| x * 3.0).collect();
            for &(id, distance) in hits {
                let x = &rows[id as usize];
                let dot: f64 = query.iter().zip(x).map(|(a, b)| a * b).sum();
                let norm = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>().sqrt();
                let want = match metric {
                    "cosine" => 1.0 - dot / (norm(&query) * norm(x)),
                    _ => -dot,
                };
                assert!(
                    (distance - want).abs() < 1e-3 * want.abs().max(1.0),
                    "{metric} q{q}: {distance} against {want}"
                );
            }
            // every candidate re-ranked: the exact best first
            let best = (0..rows.len())
                .map(|i| {
                    let x = &rows[i];
                    let dot: f64 = query.iter().zip(x).map(|(a, b)| a * b).sum();
                    let norm = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>().sqrt();
                    match metric {
                        "cosine" => 1.0 - dot / (norm(&query) * norm(x)),
                        _ => -dot,
                    }
                })
                .fold(f64::INFINITY, f64::min);
            assert!(
                (hits[0].1 - best).abs() < 1e-3 * best.abs().max(1.0),
                "{metric} q{q}"
            );
        }
    }
}

#[test]
fn each_rerank_form_is_built_described_and_searched() {
    let d = fixture();
    for (form, bytes) in [("f32", 16), ("f16", 8), ("sq8", 4), ("codes", 5)] {
        let out = format!("{form}.genie");
        let built = d.run(&[
            "build", "--kind", "vectors", "--rerank", form, "--input", "data.csv", "--output", &out,
        ]);
        success(&built);
        let info = success(&d.run(&["info", "--index", &out]));
        let line = format!("re-rank: {form}, {bytes} bytes a vector (f32: 16), recall@10 ");
        assert!(info.contains(&line), "{form}: {info}");
        // each query is a row of the data: the nearest cluster's rows come first, the row
        // itself at a distance near 0 (exactly 0 with the floats)
        let answers = hits_of(&success(&d.search(
            &out,
            "q.csv",
            "3",
            &["--kind", "vectors", "--candidates", "40", "--device", "cpu"],
        )));
        for (q, (row, hits)) in [0u64, 5, 10].iter().zip(&answers).enumerate() {
            assert_eq!(hits.len(), 3, "{form} query {q}");
            assert!(
                hits.iter().all(|(id, _)| id % 4 == row % 4),
                "{form} query {q}: {hits:?}"
            );
            if form == "f32" {
                assert_eq!(hits[0], (*row, 0.0), "{form} query {q}");
            }
        }
    }
    let err = failure(&d.run(&[
        "build", "--kind", "vectors", "--rerank", "f8", "--input", "data.csv", "--output",
        "x.genie",
    ]));
    assert!(err.contains("f32") && err.contains("codes"), "{err}");
    let err = failure(&d.run(&[
        "build", "--kind", "vectors", "--lsh", "e2lsh", "--rerank", "sq8", "--input", "data.csv",
        "--output", "x.genie",
    ]));
    assert!(
        err.contains("option rerank") && err.contains("--lsh codebook"),
        "{err}"
    );
}
