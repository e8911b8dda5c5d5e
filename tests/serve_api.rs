//! The HTTP API on the CPU: every kind through the API and through `genie search --server`,
//! with answers identical to a local `genie search`; tokens, limits and malformed requests
//! (fuzzed); `genie serve` itself, stopped by SIGTERM. Every server here listens on 127.0.0.1
//! only.

use genie::kind::{Options, Registry};
use genie::server::{Limits, ServerConfig};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::process::Command;

#[path = "common/serve.rs"]
mod serve;
use serve::*;

#[test]
fn every_kind_answers_as_the_cli_does() {
    let f = Fixture::new();
    let server = Server::over_fixture(&f, ServerConfig::default());
    for (name, queries) in QUERY_FILES {
        let index = format!("{name}.genie");
        let local = f.search_cpu(&index, queries, "3");
        assert!(!local.is_empty(), "{name}: no output");
        // the CLI as the server's client
        let remote = f.genie(&args::search_server(&server.url, name, queries, "3", &[]));
        assert_eq!(
            remote, local,
            "{name}: genie search --server differs from a local search"
        );
        // the same answers written to --output, by the local search and through the server
        for (how, mut args) in [
            (
                "local",
                vec!["search", "--device", "cpu", "--index", &index],
            ),
            (
                "remote",
                vec!["search", "--server", &server.url, "--index", name],
            ),
        ] {
            let out = format!("{name}-{how}.jsonl");
            args.extend(["--queries", queries, "--k", "3", "--output", &out]);
            assert_eq!(
                f.genie(&args),
                "",
                "{name} {how}: --output writes nothing to stdout"
            );
            let written = std::fs::read_to_string(f.path(&out))
                .unwrap_or_else(|e| panic!("{name} {how}: --output {out} was not written: {e}"));
            assert_eq!(written, local, "{name} {how}: --output differs from stdout");
        }
        // the API with the queries in JSON, read as the CLI's client reads them
        let kind = Registry::default();
        let kind_name = match name {
            "k" => "keywords",
            "s" => "sequences",
            "d" => "documents",
            "t" => "table",
            _ => "vectors",
        };
        let mut reader = kind
            .get(kind_name)
            .expect("kind")
            .read_queries(&f.path(queries), &Options::new())
            .expect("reader");
        let mut raws = Vec::new();
        while let Some(q) = reader.next_query().expect("query") {
            raws.push(q);
        }
        let (status, body) = post(&server, name, &json!({"queries": raws, "k": 3}));
        assert_eq!(status, 200, "{name}: {body}");
        assert_eq!(
            lines_of(&body),
            local,
            "{name}: the API differs from a local search"
        );
    }
    // keyword queries also as arrays of items
    let (status, body) = post(
        &server,
        "k",
        &json!({"queries": [[[1, 2], 5, [10, 11]], [3, 5, 9], [[5, 5, 2], 10]], "k": 3}),
    );
    assert_eq!(status, 200, "{body}");
    let local = f.search_cpu("k.genie", "queries.txt", "3");
    let first3: String = local.lines().take(3).map(|l| format!("{l}\n")).collect();
    assert_eq!(lines_of(&body), first3);
    // the index list and the health check
    let (status, list) = call("GET", &format!("{}/v1/indexes", server.url), None, None);
    assert_eq!(status, 200);
    let list: Value = serde_json::from_str(&list).expect("JSON");
    let kinds: Vec<(&str, &str, u64)> = list["indexes"]
        .as_array()
        .expect("indexes")
        .iter()
        .map(|i| {
            (
                i["name"].as_str().unwrap_or(""),
                i["kind"].as_str().unwrap_or(""),
                i["objects"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("d", "documents", 4),
            ("k", "keywords", 6),
            ("s", "sequences", 7),
            ("t", "table", 4),
            ("v", "vectors", 30)
        ]
    );
    assert_eq!(
        call("GET", &format!("{}/healthz", server.url), None, None),
        (200, "ok\n".to_string())
    );
    let (status, metrics) = call("GET", &format!("{}/metrics", server.url), None, None);
    assert_eq!(status, 200);
    for series in [
        "genie_requests_total{status=\"200\"}",
        "genie_request_duration_seconds_bucket{le=\"+Inf\"}",
        "genie_queue_depth{index=\"k\"} 0",
        "genie_batch_size_bucket{index=\"k\",le=\"1\"}",
        "genie_queries_total{index=\"v\"}",
    ] {
        assert!(metrics.contains(series), "no {series} in\n{metrics}");
    }
}

#[test]
fn tokens_limits_and_bad_requests() {
    let f = Fixture::new();
    let config = ServerConfig {
        token: Some("s3cret".into()),
        limits: Limits {
            max_body_bytes: 2000,
            max_queries: 3,
            max_items: 4,
            max_k: 50,
            max_objects: 4,
        },
        ..ServerConfig::default()
    };
    let server = Server::over_fixture(&f, config);
    let url = format!("{}/v1/indexes/k/search", server.url);
    let ok_body = json!({"queries": ["1 5"], "k": 2}).to_string().into_bytes();
    let send = |token: Option<&str>, body: Vec<u8>| call("POST", &url, token, Some(body));
    // token
    assert_eq!(send(None, ok_body.clone()).0, 401);
    assert_eq!(send(Some("wrong"), ok_body.clone()).0, 401);
    assert_eq!(
        call("GET", &format!("{}/v1/indexes", server.url), None, None).0,
        401
    );
    assert_eq!(
        call("GET", &format!("{}/healthz", server.url), None, None).0,
        200
    );
    let (status, body) = send(Some("s3cret"), ok_body);
    assert_eq!(status, 200, "{body}");
    // a wrong method or route: a JSON error that says what to use
    for (method, path, want_status, want) in [
        (
            "GET",
            "/v1/indexes/k/search",
            405,
            "GET is not allowed on /v1/indexes/k/search (use POST)",
        ),
        (
            "DELETE",
            "/v1/indexes",
            405,
            "DELETE is not allowed on /v1/indexes (use GET)",
        ),
        ("GET", "/v2/nothing", 404, "no route /v2/nothing"),
    ] {
        let (status, body) = call(
            method,
            &format!("{}{path}", server.url),
            Some("s3cret"),
            None,
        );
        assert_eq!(status, want_status, "{method} {path}: {body}");
        let v: Value = serde_json::from_str(&body).expect("a JSON error");
        let message = v["error"].as_str().unwrap_or_default();
        assert!(message.starts_with(want), "{method} {path}: {message}");
    }
    // limits and malformed requests: status and the field the message names
    let cases: Vec<(Vec<u8>, u16, &str)> = vec![
        (vec![b' '; 3000], 413, "--max-body-bytes"),
        (
            json!({"queries": ["1", "2", "3", "4"]}).to_string().into(),
            400,
            "--max-queries",
        ),
        (
            json!({"queries": ["1 2 3 4 5"]}).to_string().into(),
            400,
            "queries[0]: 5 items",
        ),
        (
            json!({"queries": ["1"], "k": 51}).to_string().into(),
            400,
            "k: 51",
        ),
        (
            json!({"queries": ["1"], "k": -1}).to_string().into(),
            400,
            "request body",
        ),
        (
            json!({"queries": ["1", "4-x"]}).to_string().into(),
            400,
            "queries[1]: bad item \"4-x\"",
        ),
        (
            json!({"queries": [{"a": 1}]}).to_string().into(),
            400,
            "queries[0]",
        ),
        (
            json!({"queries": ["1"], "kk": 3}).to_string().into(),
            400,
            "unknown field `kk`",
        ),
        (
            json!({"queries": ["1"], "options": {"radius": 2}})
                .to_string()
                .into(),
            400,
            "option radius",
        ),
        (
            json!({"queries": ["1"], "options": [1]}).to_string().into(),
            400,
            "option",
        ),
        (
            json!({"k": 3}).to_string().into(),
            400,
            "missing field `queries`",
        ),
        (b"{not json".to_vec(), 400, "request body"),
        (
            json!({"queries": ["1:20000000"]}).to_string().into(),
            400,
            "count bound",
        ),
    ];
    for (body, want, needle) in cases {
        let (status, text) = send(Some("s3cret"), body);
        assert_eq!(status, want, "{needle}: {text}");
        let v: Value = serde_json::from_str(&text).expect("a JSON error");
        let message = v["error"].as_str().expect("an error message");
        assert!(message.contains(needle), "{needle:?} not in {message:?}");
    }
    let (status, _) = call(
        "POST",
        &format!("{}/v1/indexes/nope/search", server.url),
        Some("s3cret"),
        Some(b"{}".to_vec()),
    );
    assert_eq!(status, 404);
    // vectors: wrong dimension, not numbers
    let vurl = format!("{}/v1/indexes/v/search", server.url);
    let (status, text) = call(
        "POST",
        &vurl,
        Some("s3cret"),
        Some(json!({"queries": [[1, 2]]}).to_string().into()),
    );
    assert_eq!(status, 400);
    assert!(text.contains("dimension 2"), "{text}");
    let (status, text) = call(
        "POST",
        &vurl,
        Some("s3cret"),
        Some(json!({"queries": [[1, "x", 2]]}).to_string().into()),
    );
    assert_eq!(status, 400);
    assert!(text.contains("element 1"), "{text}");
    // still serving
    let (status, _) = send(
        Some("s3cret"),
        json!({"queries": ["1 5"], "k": 2}).to_string().into_bytes(),
    );
    assert_eq!(status, 200);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Random bodies never crash the request decoding: every answer is 200 or a 4xx with a JSON
    /// message (the server runs in-process: a panic would fail the test).
    #[test]
    fn random_requests_get_answers(body in request_body()) {
        let server = fuzz_server();
        for index in ["k", "s", "d", "t", "v"] {
            let (status, text) = call("POST", &format!("{}/v1/indexes/{index}/search", server.url), None, Some(body.clone()));
            prop_assert!(status == 200 || status == 400 || status == 413, "{status}: {text}");
            let v: Value = serde_json::from_str(&text).expect("JSON");
            prop_assert!(status == 200 || v["error"].is_string());
        }
    }
}

/// One server for all fuzz cases.
fn fuzz_server() -> &'static Server {
    static SERVER: std::sync::OnceLock<(Fixture, Server)> = std::sync::OnceLock::new();
    let (_, server) = SERVER.get_or_init(|| {
        let f = Fixture::new();
        let config = ServerConfig {
            limits: Limits {
                max_k: 1000,
                ..Limits::default()
            },
            ..ServerConfig::default()
        };
        let s = Server::over_fixture(&f, config);
        (f, s)
    });
    server
}

/// Request bodies: raw bytes, or JSON shaped like a request with random parts.
fn request_body() -> impl Strategy<Value = Vec<u8>> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u32>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|x| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)),
        "[ -~]{0,12}".prop_map(Value::from),
        "[0-9 :-]{0,16}".prop_map(Value::from),
    ];
    let value = leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..200),
        (
            prop::collection::vec(value.clone(), 0..5),
            prop::option::of(0u32..2000),
            value.clone(),
            prop::option::of(0u32..5)
        )
            .prop_map(|(queries, k, options, min_count)| {
                let mut body = json!({"queries": queries, "options": options});
                if let Some(k) = k {
                    body["k"] = k.into();
                }
                if let Some(t) = min_count {
                    body["min_count"] = t.into();
                }
                body.to_string().into_bytes()
            }),
        value.prop_map(|v| v.to_string().into_bytes()),
    ]
}

#[test]
fn genie_serve_answers_and_stops_on_sigterm() {
    use std::io::{BufRead, BufReader};
    let f = Fixture::new();
    let mut child = f
        .command()
        .args([
            "serve",
            "--device",
            "cpu",
            "--index",
            "k=k.genie",
            "--index",
            "s=s.genie",
            "--listen",
            "127.0.0.1:0",
            "--token",
            "t0k",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start genie serve");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("genie serve ended early")
            .expect("read stderr");
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.trim().to_string();
        }
    };
    let local = f.search_cpu("k.genie", "queries.txt", "2");
    // the CLI as a client of it: `genie --quiet search --server URL --index NAME EXTRA...`
    let client = |name: &str, extra: &[&str]| {
        let mut c = f.command();
        c.arg("--quiet")
            .args(args::search_server(&url, name, "queries.txt", "2", extra));
        c
    };
    let out = client("k", &[])
        .env("GENIE_TOKEN", "t0k")
        .output()
        .expect("run the client");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).expect("UTF-8"), local);
    // a wrong token, an unknown index: clear errors
    let out = client("nope", &["--token", "t0k"])
        .output()
        .expect("run the client");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("serves no index \"nope\" (it serves: k, s)"),
        "{err}"
    );
    let out = client("k", &["--token", "bad"])
        .output()
        .expect("run the client");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("401"), "{err}");
    // SIGTERM: it finishes and exits 0
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let status = child.wait().expect("wait");
    assert!(status.success(), "genie serve exited with {status}");
}
