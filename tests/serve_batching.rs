//! The batching handle on the CPU: many concurrent clients; graceful shutdown with requests in
//! flight; a failing query that fails alone; a dropped caller; `min_count`; a kind of one's own.
//! Every server here listens on 127.0.0.1 only.

use genie::data_error::DataError;
use genie::kind::{Answer, KindIndex, Options, Prepared, Registry, Request};
use genie::server::ServerConfig;
use genie::service::{BatchPolicy, SearchError, Service};
use serde_json::{json, Value};
use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[path = "common/serve.rs"]
mod serve;
use serve::*;

#[test]
fn concurrent_clients_get_the_cli_answers() {
    let f = Fixture::new();
    let server = Server::over_fixture(&f, ServerConfig::default());
    let mut lines_all = Vec::new();
    for (name, queries) in [("k", "queries.txt"), ("s", "seq-queries.txt")] {
        let index = format!("{name}.genie");
        let local = f.search_cpu(&index, queries, "3");
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
    let service = build_and_open(&Registry::default(), "keywords", &input, &index, "o");
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

#[test]
fn a_kind_of_ones_own() {
    let dir = tempfile::tempdir().expect("dir");
    let (input, index) = (dir.path().join("w.txt"), dir.path().join("w.genie"));
    std::fs::write(&input, "abc\nxyz\nabd\n").expect("write");
    let mut registry = Registry::default();
    // the template kind, a module of its own, registered by one call
    registry.register(Arc::new(genie::kind::letters::Letters));
    let service = build_and_open(&registry, "letters", &input, &index, "w");
    assert_eq!(service.index("w").expect("index").kind(), "letters");
    let server = Server::start(service, ServerConfig::default());
    let (status, body) = post(&server, "w", &json!({"queries": ["abd"], "k": 2}));
    assert_eq!(status, 200, "{body}");
    let a = genie::server::client::answer_of(&body["results"][0]).expect("answer");
    assert_eq!(
        a.hits.iter().map(|h| (h.id, h.count)).collect::<Vec<_>>(),
        [(2, 3), (0, 2)]
    );
    // its declared option, through a request's options, with no change to the server
    let folded = json!({"queries": ["ABD"], "k": 2, "options": {"case": "fold"}});
    let (status, folded) = post(&server, "w", &folded);
    assert_eq!(status, 200, "{folded}");
    assert_eq!(folded["results"][0], body["results"][0]);
    for (options, says) in [
        (json!({"case": "upper"}), "keep or fold"),
        (json!({"radius": 1}), "radius"),
    ] {
        let bad = json!({"queries": ["abd"], "k": 2, "options": options});
        let (status, e) = post(&server, "w", &bad);
        assert_eq!(status, 400, "{e}");
        assert!(e.to_string().contains(says), "{e}");
    }
    // the default registry knows it only with the feature `test-kind`
    let known = genie::open::load(&Registry::default(), &index);
    if cfg!(feature = "test-kind") {
        assert!(known.is_ok());
    } else {
        let e = known.err().expect("unknown kind");
        assert!(e.to_string().contains("\"letters\""), "{e}");
    }
}
