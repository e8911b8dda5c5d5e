//! The server and the batching handle, on the CPU: every kind through the HTTP API and through
//! `genie search --server`, with answers identical to a local `genie search`; tokens, limits and
//! malformed requests (fuzzed); many concurrent clients; graceful shutdown with requests in
//! flight; a failing query that fails alone; a dropped caller; `min_count`; a kind of one's own.
//! Every server here listens on 127.0.0.1 only.

use genie::core::{DeviceChoice, InvertedIndex};
use genie::data_error::DataError;
use genie::kind::{Answer, KindIndex, Options, Prepared, Registry, Request};
use genie::open::OpenSpec;
use genie::server::{serve_on, Limits, ServerConfig};
use genie::service::{BatchPolicy, SearchError, Service};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::any::Any;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tempfile::TempDir;

#[path = "common/bin.rs"]
mod bin;
use bin::binary;

/// Objects, queries and a build command of each kind (files written in a temp dir).
struct Fixture {
    dir: TempDir,
}

const SEQUENCES: &str = "kitten\nsitting\nmitten\nbitten\nkitchen\nwritten\nsmitten\n";
const DOCUMENTS: &str =
    "the quick brown fox\nlazy dogs sleep all day\nquick brown dogs run\nfoxes and dogs\n";
const TABLE: &str = "age,job,hours\n25,clerk,40\n38,engineer,45\n52,clerk,20\n41,nurse,36\n";

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let f = Self { dir };
        f.write(
            "objects.txt",
            "1 5 10\n2 5 11\n5 9 10\n3 4\n\n1 2 3 5 10 11\n",
        );
        f.write("queries.txt", "1-2 5 10-11\n3 5 9\n5:2 10\n\n4294967295\n");
        f.write("seqs.txt", SEQUENCES);
        f.write("seq-queries.txt", "kiten\nsittin\nwriten\nzzz\n");
        f.write("docs.txt", DOCUMENTS);
        f.write("doc-queries.txt", "quick dogs\nthe fox\nnothing here\n");
        f.write("table.csv", TABLE);
        f.write(
            "table-queries.txt",
            "age=30..45\njob=clerk hours=40\n40, nurse, 36\n",
        );
        let mut vecs = String::from("a,b,c\n");
        for i in 0..30u32 {
            vecs.push_str(&format!("{},{},{}\n", i % 7, (i * 3) % 11, (i * 5) % 13));
        }
        f.write("vecs.csv", &vecs);
        f.write("vec-queries.csv", "1,2,3\n6,10,12\n0,0,0\n");
        for (kind, input, index) in [
            ("keywords", "objects.txt", "k.genie"),
            ("sequences", "seqs.txt", "s.genie"),
            ("documents", "docs.txt", "d.genie"),
            ("table", "table.csv", "t.genie"),
            ("vectors", "vecs.csv", "v.genie"),
        ] {
            f.genie(&["build", "--kind", kind, "--input", input, "--output", index]);
        }
        f
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.path(name), text).expect("write fixture");
    }

    /// Runs `genie ARGS` in the fixture's directory; its standard output.
    fn genie(&self, args: &[&str]) -> String {
        let out = Command::new(binary())
            .current_dir(self.dir.path())
            .env_remove("GENIE_DEVICE")
            .env_remove("GENIE_TOKEN")
            .arg("--quiet")
            .args(args)
            .output()
            .expect("run genie");
        assert!(
            out.status.success(),
            "genie {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("UTF-8")
    }

    /// The five indexes, by name.
    fn indexes(&self) -> Vec<(&'static str, PathBuf)> {
        ["k", "s", "d", "t", "v"]
            .into_iter()
            .map(|n| (n, self.path(&format!("{n}.genie"))))
            .collect()
    }
}

/// The queries file of each index.
const QUERY_FILES: [(&str, &str); 5] = [
    ("k", "queries.txt"),
    ("s", "seq-queries.txt"),
    ("d", "doc-queries.txt"),
    ("t", "table-queries.txt"),
    ("v", "vec-queries.csv"),
];

/// A server on 127.0.0.1 (a free port) over a service, in a runtime of its own thread.
struct Server {
    url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl Server {
    fn start(service: Service, config: ServerConfig) -> Self {
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let done = std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
                tx.send(listener.local_addr()?).expect("send address");
                serve_on(listener, service, &config, async {
                    let _ = stopped.await;
                })
                .await
            })
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("server address");
        Self {
            url: format!("http://{addr}"),
            stop: Some(stop),
            done: Some(done),
        }
    }

    /// Stops the server (after the requests in flight) and waits for it.
    fn stop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(d) = self.done.take() {
            d.join().expect("server thread").expect("server result");
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn cpu() -> OpenSpec {
    OpenSpec {
        device: DeviceChoice::Cpu,
        ..OpenSpec::default()
    }
}

fn open_service(f: &Fixture, policy: BatchPolicy) -> Service {
    let files = f.indexes();
    let named: Vec<(&str, &Path)> = files.iter().map(|(n, p)| (*n, p.as_path())).collect();
    Service::open(&Registry::default(), &named, &cpu(), policy).expect("open the indexes")
}

/// A blocking HTTP call: (status, body).
fn call(method: &str, url: &str, token: Option<&str>, body: Option<Vec<u8>>) -> (u16, String) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let client = reqwest::Client::new();
        let mut r = match method {
            "POST" => client.post(url).body(body.unwrap_or_default()),
            "GET" => client.get(url),
            other => client.request(
                reqwest::Method::from_bytes(other.as_bytes()).expect("method"),
                url,
            ),
        };
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        let resp = r.send().await.expect("request");
        let status = resp.status().as_u16();
        (status, resp.text().await.expect("body"))
    })
}

fn post(server: &Server, index: &str, body: &Value) -> (u16, Value) {
    let (status, text) = call(
        "POST",
        &format!("{}/v1/indexes/{index}/search", server.url),
        None,
        Some(body.to_string().into_bytes()),
    );
    (status, serde_json::from_str(&text).expect("JSON answer"))
}

/// The JSON lines of a `results` list, as `genie search` writes them.
fn lines_of(results: &Value) -> String {
    results["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            let a = genie::server::client::answer_of(r).expect("an answer");
            let q = r["query"].as_u64().expect("query");
            let mut out = Vec::new();
            a.write_json(&mut out, q).expect("to a Vec");
            String::from_utf8(out).expect("UTF-8")
        })
        .collect()
}

#[test]
fn every_kind_answers_as_the_cli_does() {
    let f = Fixture::new();
    let server = Server::start(
        open_service(&f, BatchPolicy::default()),
        ServerConfig::default(),
    );
    for (name, queries) in QUERY_FILES {
        let index = format!("{name}.genie");
        let local = f.genie(&[
            "search",
            "--device",
            "cpu",
            "--index",
            &index,
            "--queries",
            queries,
            "--k",
            "3",
        ]);
        assert!(!local.is_empty(), "{name}: no output");
        // the CLI as the server's client
        let remote = f.genie(&[
            "search",
            "--server",
            &server.url,
            "--index",
            name,
            "--queries",
            queries,
            "--k",
            "3",
        ]);
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
    let local = f.genie(&[
        "search",
        "--device",
        "cpu",
        "--index",
        "k.genie",
        "--queries",
        "queries.txt",
        "--k",
        "3",
    ]);
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
        },
        ..ServerConfig::default()
    };
    let server = Server::start(open_service(&f, BatchPolicy::default()), config);
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
        let s = Server::start(open_service(&f, BatchPolicy::default()), config);
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
fn concurrent_clients_get_the_cli_answers() {
    let f = Fixture::new();
    let server = Server::start(
        open_service(&f, BatchPolicy::default()),
        ServerConfig::default(),
    );
    let mut lines_all = Vec::new();
    for (name, queries) in [("k", "queries.txt"), ("s", "seq-queries.txt")] {
        let index = format!("{name}.genie");
        let local = f.genie(&[
            "search",
            "--device",
            "cpu",
            "--index",
            &index,
            "--queries",
            queries,
            "--k",
            "3",
        ]);
        let raws: Vec<String> = std::fs::read_to_string(f.path(queries))
            .expect("read")
            .lines()
            .map(String::from)
            .collect();
        lines_all.push((name, raws, local));
    }
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let url = server.url.clone();
    let lines_all = Arc::new(lines_all);
    rt.block_on(async move {
        let client = reqwest::Client::new();
        let mut tasks = Vec::new();
        for c in 0..64usize {
            let (client, url, all) = (client.clone(), url.clone(), Arc::clone(&lines_all));
            tasks.push(tokio::spawn(async move {
                for round in 0..10usize {
                    let (name, raws, local) = &all[(c + round) % all.len()];
                    let q = (c * 7 + round) % raws.len();
                    let body = json!({"queries": [raws[q]], "k": 3}).to_string();
                    let resp = client
                        .post(format!("{url}/v1/indexes/{name}/search"))
                        .body(body)
                        .send()
                        .await
                        .expect("send");
                    assert_eq!(resp.status().as_u16(), 200);
                    let v: Value =
                        serde_json::from_str(&resp.text().await.expect("text")).expect("JSON");
                    let a = genie::server::client::answer_of(&v["results"][0]).expect("answer");
                    let mut line = Vec::new();
                    a.write_json(&mut line, q as u64).expect("to a Vec");
                    let want = local.lines().nth(q).expect("line");
                    assert_eq!(String::from_utf8(line).expect("UTF-8").trim_end(), want);
                }
            }));
        }
        for t in tasks {
            t.await.expect("client task");
        }
    });
    let (_, metrics) = call("GET", &format!("{}/metrics", server.url), None, None);
    assert!(
        metrics.contains("genie_requests_total{status=\"200\"} 640"),
        "{metrics}"
    );
}

/// A kind index of one's own that wraps another and waits before each batch (to keep requests
/// in flight), fails batches holding a "poison" query, and counts batches.
struct Wrapped {
    inner: Arc<dyn KindIndex>,
    delay: Duration,
    batches: AtomicUsize,
}

struct Poison;

impl KindIndex for Wrapped {
    fn kind(&self) -> &str {
        self.inner.kind()
    }
    fn num_objects(&self) -> u64 {
        self.inner.num_objects()
    }
    fn backend_name(&self) -> String {
        format!("slow {}", self.inner.backend_name())
    }
    fn parse(&self, raw: &Value, options: &Options) -> Result<Prepared, DataError> {
        if raw == "poison" {
            return Ok(Box::new(Poison));
        }
        self.inner.parse(raw, options)
    }
    fn items(&self, query: &(dyn Any + Send + Sync)) -> usize {
        self.inner.items(query)
    }
    fn search(&self, batch: &[Request<'_>]) -> Result<Vec<Answer>, DataError> {
        self.batches.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(self.delay);
        if batch.iter().any(|r| r.query.is::<Poison>()) {
            return Err(DataError::BadQuery("poisoned".into()));
        }
        self.inner.search(batch)
    }
}

fn wrapped(f: &Fixture, delay: Duration) -> (Arc<Wrapped>, Service) {
    let loaded = genie::open::load(&Registry::default(), &f.path("k.genie")).expect("load");
    let inner = genie::open::place(&loaded, &cpu())
        .expect("place")
        .remove(0);
    let w = Arc::new(Wrapped {
        inner,
        delay,
        batches: AtomicUsize::new(0),
    });
    let service = Service::new(
        vec![("k".to_string(), vec![Arc::clone(&w) as Arc<dyn KindIndex>])],
        BatchPolicy::default(),
    )
    .expect("service");
    (w, service)
}

#[test]
fn shutdown_finishes_requests_in_flight() {
    let f = Fixture::new();
    let (w, service) = wrapped(&f, Duration::from_millis(300));
    let mut server = Server::start(service, ServerConfig::default());
    let url = format!("{}/v1/indexes/k/search", server.url);
    let clients: Vec<_> = (0..8)
        .map(|i| {
            let url = url.clone();
            std::thread::spawn(move || {
                call(
                    "POST",
                    &url,
                    None,
                    Some(
                        json!({"queries": [format!("{} 5", i % 3 + 1)], "k": 2})
                            .to_string()
                            .into(),
                    ),
                )
            })
        })
        .collect();
    // let the requests reach the runner, then stop
    std::thread::sleep(Duration::from_millis(100));
    let t = std::time::Instant::now();
    server.stop();
    assert!(
        t.elapsed() >= Duration::from_millis(150),
        "stopped before the batch finished"
    );
    for c in clients {
        let (status, body) = c.join().expect("client");
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("\"hits\":[{"), "{body}");
    }
    assert!(w.batches.load(Ordering::SeqCst) >= 1);
}

#[test]
fn a_failing_query_fails_alone_and_dropped_callers_cost_nothing() {
    let f = Fixture::new();
    let (w, service) = wrapped(&f, Duration::from_millis(100));
    let parse = |q: &str| {
        service
            .parse("k", &json!(q), &Options::new())
            .expect("parse")
    };
    // the runner is busy with a first batch while the next three queue up: one batch
    let first = service
        .submit_one("k", parse("1"), 2, None)
        .expect("submit");
    std::thread::sleep(Duration::from_millis(30));
    let tickets = service
        .submit(
            "k",
            vec![
                (parse("1 5"), 2, None),
                (parse("poison"), 2, None),
                (parse("5 10"), 2, None),
            ],
        )
        .expect("submit");
    assert!(first.wait().is_ok());
    let results: Vec<_> = tickets.into_iter().map(|t| t.wait()).collect();
    assert!(results[0].as_ref().is_ok_and(|a| !a.hits.is_empty()));
    assert!(matches!(&results[1], Err(SearchError::Failed(m)) if m.contains("poisoned")));
    assert!(results[2].as_ref().is_ok_and(|a| !a.hits.is_empty()));
    // a caller that gives up: its query is never searched
    let before = w.batches.load(Ordering::SeqCst);
    let busy = service
        .submit_one("k", parse("1"), 2, None)
        .expect("submit");
    std::thread::sleep(Duration::from_millis(30));
    drop(
        service
            .submit_one("k", parse("2"), 2, None)
            .expect("submit"),
    );
    assert!(busy.wait().is_ok());
    std::thread::sleep(Duration::from_millis(50));
    let stats = &service.stats()[0];
    assert_eq!(stats.cancelled, 1, "{stats:?}");
    assert_eq!(w.batches.load(Ordering::SeqCst), before + 1);
    // an unknown index and a closed service
    assert!(matches!(
        service.submit("nope", Vec::new()),
        Err(SearchError::UnknownIndex(_))
    ));
    service.shutdown();
    assert!(matches!(
        service.submit_one("k", parse("1"), 2, None),
        Err(SearchError::ShutDown)
    ));
}

#[test]
fn min_count_is_every_object_up_to_k() {
    // 600 objects sharing keyword 1; a third also have 2, a fifth also 3
    let dir = tempfile::tempdir().expect("dir");
    let mut objects = String::new();
    for i in 0..600u32 {
        let mut kws = vec![1];
        if i % 3 == 0 {
            kws.push(2);
        }
        if i % 5 == 0 {
            kws.push(3);
        }
        objects.push_str(&kws.iter().map(u32::to_string).collect::<Vec<_>>().join(" "));
        objects.push('\n');
    }
    let input = dir.path().join("o.txt");
    let index = dir.path().join("o.genie");
    std::fs::write(&input, objects).expect("write");
    let kind = Arc::clone(Registry::default().get("keywords").expect("kind"));
    kind.build(&genie::kind::BuildJob {
        input: &input,
        output: &index,
        options: &Options::new(),
        progress: &|_| {},
    })
    .expect("build");
    let service = Service::open(
        &Registry::default(),
        &[("o", index.as_path())],
        &cpu(),
        BatchPolicy::default(),
    )
    .expect("open");
    let q = |k, t| {
        let p = service
            .parse("o", &json!("1 2 3"), &Options::new())
            .expect("parse");
        service
            .submit_one("o", p, k, t)
            .expect("submit")
            .wait()
            .expect("answer")
    };
    // count >= 2: the 200 multiples of 3 and the 120 multiples of 5, less the 40 of 15 counted twice
    let all = q(1000, Some(2));
    assert_eq!(all.hits.len(), 280);
    assert!(all.hits.iter().all(|h| h.count >= 2));
    let full = q(600, None);
    let want: Vec<_> = full.hits.iter().filter(|h| h.count >= 2).cloned().collect();
    assert_eq!(all.hits, want);
    // k caps it; mixed k and min_count in one batch
    assert_eq!(q(10, Some(2)).hits, want[..10]);
    assert_eq!(q(1000, Some(3)).hits.len(), 40);
    assert!(q(5, Some(4)).hits.is_empty());
}

/// A kind of one's own, registered beside the built-in ones: objects are words, keywords their
/// bytes. Building and searching it goes through the same library as every other kind.
mod letters {
    use super::*;
    use genie::core::{IndexBuilder, Query};
    use genie::kind::{
        BuildJob, BuildReport, IndexSource, Kind, LineQueries, OpenOptions, Placement, QueryReader,
    };

    pub struct Letters;

    pub struct LetterIndex(genie::core::Engine);

    impl Kind for Letters {
        fn name(&self) -> &str {
            "letters"
        }
        fn about(&self) -> &str {
            "words, by the letters they share"
        }
        fn build(&self, job: &BuildJob<'_>) -> Result<BuildReport, DataError> {
            let text = std::fs::read_to_string(job.input).map_err(|error| DataError::Io {
                path: job.input.into(),
                error,
            })?;
            let mut b = IndexBuilder::new()
                .keyword_space(256)
                .metadata(r#"{"kind":"letters"}"#);
            for w in text.lines() {
                let kws: Vec<u32> = w.bytes().map(u32::from).collect();
                b.push_object(&kws)?;
            }
            let index = b.build()?;
            index.save(job.output)?;
            Ok(BuildReport {
                summary: format!("{} words", index.num_objects()),
                objects: u64::from(index.num_objects()),
                side_files: Vec::new(),
            })
        }
        fn read_queries(
            &self,
            path: &Path,
            _: &Options,
        ) -> Result<Box<dyn QueryReader>, DataError> {
            Ok(Box::new(LineQueries(genie::input::LineReader::open(path)?)))
        }
        fn open(
            &self,
            source: &IndexSource,
            placement: Placement,
            _: &OpenOptions,
        ) -> Result<Box<dyn KindIndex>, DataError> {
            let index: Arc<InvertedIndex> = source
                .index
                .clone()
                .ok_or_else(|| DataError::Unsupported("parted".into()))?;
            Ok(Box::new(LetterIndex(placement.engine(index, "letters")?)))
        }
    }

    impl KindIndex for LetterIndex {
        fn kind(&self) -> &str {
            "letters"
        }
        fn num_objects(&self) -> u64 {
            u64::from(self.0.index().num_objects())
        }
        fn backend_name(&self) -> String {
            self.0.backend_name().into()
        }
        fn parse(&self, raw: &Value, _: &Options) -> Result<Prepared, DataError> {
            let w = genie::kind::text_query(raw)?;
            let kws: Vec<u32> = w.bytes().map(u32::from).collect();
            Ok(Box::new(Query::from_keywords(&kws)))
        }
        fn items(&self, q: &(dyn Any + Send + Sync)) -> usize {
            q.downcast_ref::<Query>().map_or(0, |q| q.items.len())
        }
        fn search(&self, batch: &[Request<'_>]) -> Result<Vec<Answer>, DataError> {
            let k = batch.iter().map(|r| r.k).max().unwrap_or(0);
            let qs = batch
                .iter()
                .map(|r| genie::kind::prepared::<Query>(r.query).cloned())
                .collect::<Result<Vec<_>, _>>()?;
            let hits = self.0.search(&qs, &genie::core::SearchParams::top_k(k))?;
            Ok(hits
                .iter()
                .zip(batch)
                .map(|(h, r)| Answer::of_hits(&h[..h.len().min(r.k as usize)]))
                .collect())
        }
    }
}

#[test]
fn a_kind_of_ones_own() {
    let dir = tempfile::tempdir().expect("dir");
    let (input, index) = (dir.path().join("w.txt"), dir.path().join("w.genie"));
    std::fs::write(&input, "abc\nxyz\nabd\n").expect("write");
    let mut registry = Registry::default();
    registry.register(Arc::new(letters::Letters));
    let kind = Arc::clone(registry.get("letters").expect("registered"));
    kind.build(&genie::kind::BuildJob {
        input: &input,
        output: &index,
        options: &Options::new(),
        progress: &|_| {},
    })
    .expect("build");
    let service = Service::open(
        &registry,
        &[("w", index.as_path())],
        &cpu(),
        BatchPolicy::default(),
    )
    .expect("open");
    assert_eq!(service.index("w").expect("index").kind(), "letters");
    let server = Server::start(service, ServerConfig::default());
    let (status, body) = post(&server, "w", &json!({"queries": ["abd"], "k": 2}));
    assert_eq!(status, 200, "{body}");
    let a = genie::server::client::answer_of(&body["results"][0]).expect("answer");
    assert_eq!(
        a.hits.iter().map(|h| (h.id, h.count)).collect::<Vec<_>>(),
        [(2, 3), (0, 2)]
    );
    // the default registry does not know it
    let e = genie::open::load(&Registry::default(), &index)
        .err()
        .expect("unknown kind");
    assert!(e.to_string().contains("\"letters\""), "{e}");
}

#[test]
fn genie_serve_answers_and_stops_on_sigterm() {
    use std::io::{BufRead, BufReader};
    let f = Fixture::new();
    let mut child = Command::new(binary())
        .current_dir(f.dir.path())
        .env_remove("GENIE_TOKEN")
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
    let local = f.genie(&[
        "search",
        "--device",
        "cpu",
        "--index",
        "k.genie",
        "--queries",
        "queries.txt",
        "--k",
        "2",
    ]);
    let out = Command::new(binary())
        .current_dir(f.dir.path())
        .args([
            "--quiet",
            "search",
            "--server",
            &url,
            "--index",
            "k",
            "--queries",
            "queries.txt",
            "--k",
            "2",
        ])
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
    let out = Command::new(binary())
        .current_dir(f.dir.path())
        .args([
            "--quiet",
            "search",
            "--server",
            &url,
            "--index",
            "nope",
            "--queries",
            "queries.txt",
            "--k",
            "2",
            "--token",
            "t0k",
        ])
        .output()
        .expect("run the client");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("serves no index \"nope\" (it serves: k, s)"),
        "{err}"
    );
    let out = Command::new(binary())
        .current_dir(f.dir.path())
        .args([
            "--quiet",
            "search",
            "--server",
            &url,
            "--index",
            "k",
            "--queries",
            "queries.txt",
            "--k",
            "2",
            "--token",
            "bad",
        ])
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
