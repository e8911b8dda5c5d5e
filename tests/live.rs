//! Live indexes through the front ends on the CPU: the server's write routes and filters (on
//! 127.0.0.1 only), and `genie add`, `genie delete`, `genie compact` and `genie search
//! --filter-ids` / `--exclude-ids`, each answer compared with what the objects say.

use genie::kind::Registry;
use genie::live::{place_live, LiveConfig, LiveIndex};
use genie::server::ServerConfig;
use genie::service::{BatchPolicy, Service};
use serde_json::{json, Value};

#[path = "common/serve.rs"]
mod serve;
use serve::*;

fn hits(v: &Value) -> Vec<Vec<(u64, u64)>> {
    v["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            r["hits"]
                .as_array()
                .expect("hits")
                .iter()
                .map(|h| {
                    (
                        h["id"].as_u64().expect("id"),
                        h["count"].as_u64().expect("count"),
                    )
                })
                .collect()
        })
        .collect()
}

fn route(server: &Server, index: &str, what: &str, body: &Value) -> (u16, Value) {
    let (status, text) = call(
        "POST",
        &format!("{}/v1/indexes/{index}/{what}", server.url),
        None,
        Some(body.to_string().into_bytes()),
    );
    (status, serde_json::from_str(&text).expect("JSON answer"))
}

#[test]
fn the_server_takes_writes_deletes_and_filters() {
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("k.genie");
    std::fs::write(dir.path().join("objects.txt"), "1 2 3\n2 3\n3 4\n").expect("objects");
    let registry = Registry::default();
    let f = cli::Dir(dir);
    f.ok(&["build", "--input", "objects.txt", "--output", "k.genie"]);
    let start = |writable: bool| {
        let live = LiveIndex::open_file(&registry, &file, LiveConfig::default()).expect("live");
        let replicas = place_live(&live, &cpu()).expect("placed");
        let service =
            Service::new(vec![("k".into(), replicas)], BatchPolicy::default()).expect("service");
        Server::start(
            service,
            ServerConfig {
                writable,
                ..ServerConfig::default()
            },
        )
    };
    let mut server = start(true);
    let search = json!({"queries": ["2 3"], "k": 5});
    let (status, v) = post(&server, "k", &search);
    assert_eq!(status, 200, "{v}");
    assert_eq!(hits(&v), [vec![(0, 2), (1, 2), (2, 1)]]);
    // add, replace, delete
    let (status, v) = route(
        &server,
        "k",
        "objects",
        &json!({"objects": [{"id": 1_000_000_000_000u64, "object": "2 3 9"}, {"id": 2, "object": [7]}]}),
    );
    assert_eq!((status, v.clone()), (200, json!({"written": 2})), "{v}");
    let (_, v) = route(&server, "k", "delete", &json!({"ids": [0, 55]}));
    assert_eq!(v, json!({"deleted": 1}));
    let (_, v) = post(&server, "k", &search);
    assert_eq!(hits(&v), [vec![(1, 2), (1_000_000_000_000, 2)]]);
    // filters: allow, deny, both
    let (_, v) = post(
        &server,
        "k",
        &json!({"queries": ["2 3"], "k": 1, "filter": {"ids": [1_000_000_000_000u64, 2]}}),
    );
    assert_eq!(hits(&v), [vec![(1_000_000_000_000, 2)]]);
    let (_, v) = post(
        &server,
        "k",
        &json!({"queries": ["2 3"], "k": 5, "exclude": {"ids": [1]}}),
    );
    assert_eq!(hits(&v), [vec![(1_000_000_000_000, 2)]]);
    // bad bodies are 400s naming the field, and the server goes on
    for (what, body, field) in [
        (
            "objects",
            json!({"objects": [{"id": -1, "object": "1"}]}),
            "objects[0].id",
        ),
        (
            "objects",
            json!({"objects": [{"id": 1, "object": "1 x"}]}),
            "object 0 (id 1)",
        ),
        ("objects", json!({"things": []}), "unknown field"),
        ("delete", json!({"ids": ["a"]}), "ids[0]"),
        (
            "search",
            json!({"queries": ["1"], "filter": {"ids": 3}}),
            "\"filter\"",
        ),
    ] {
        let (status, v) = route(&server, "k", what, &body);
        assert_eq!(status, 400, "{what} {body}: {v}");
        assert!(v["error"].as_str().expect("error").contains(field), "{v}");
    }
    let (_, text) = call("GET", &format!("{}/metrics", server.url), None, None);
    assert!(
        text.contains("genie_live_written_total{index=\"k\"} 2"),
        "{text}"
    );
    assert!(text.contains("genie_live_log_syncs_total"), "{text}");
    server.stop();
    drop(server);
    // a restart serves the same state; without --writable, writes are refused
    let server = start(false);
    let (_, v) = post(&server, "k", &search);
    assert_eq!(hits(&v), [vec![(1, 2), (1_000_000_000_000, 2)]]);
    let (status, v) = route(&server, "k", "objects", &json!({"objects": []}));
    assert_eq!(status, 403, "{v}");
    assert!(
        v["error"].as_str().expect("error").contains("--writable"),
        "{v}"
    );
}

#[test]
fn the_cli_adds_deletes_filters_and_compacts() {
    let d = cli::Dir::new();
    d.write("objects.txt", "1 2 3\n2 3\n3 4\n");
    d.write("more.txt", "2 3 5\n9\n");
    d.write("more-ids.txt", "40\n41\n");
    d.write("q.txt", "2 3\n");
    d.ok(&["build", "--input", "objects.txt", "--output", "k.genie"]);
    d.ok(&[
        "add",
        "--index",
        "k.genie",
        "--input",
        "more.txt",
        "--ids",
        "more-ids.txt",
    ]);
    // `genie search` of q.txt in the live index on the CPU, top 3, with `extra`
    fn args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec![
            "search",
            "--device",
            "cpu",
            "--index",
            "k.genie.live",
            "--queries",
            "q.txt",
            "--k",
            "3",
        ];
        args.extend_from_slice(extra);
        args
    }
    let search = |extra: &[&str]| d.ok(&args(extra));
    assert_eq!(
        search(&[]),
        "{\"query\":0,\"hits\":[{\"id\":0,\"count\":2},{\"id\":1,\"count\":2},{\"id\":40,\"count\":2}]}\n"
    );
    d.write("del.txt", "0\n");
    d.ok(&["delete", "--index", "k.genie.live", "--ids", "del.txt"]);
    d.write("allow.txt", "2\n40\n");
    assert_eq!(
        search(&["--filter-ids", "allow.txt"]),
        "{\"query\":0,\"hits\":[{\"id\":40,\"count\":2},{\"id\":2,\"count\":1}]}\n"
    );
    d.write("deny.txt", "40\n");
    let denied = search(&["--exclude-ids", "deny.txt"]);
    assert_eq!(
        denied,
        "{\"query\":0,\"hits\":[{\"id\":1,\"count\":2},{\"id\":2,\"count\":1}]}\n"
    );
    // ids after the largest when none are given; compact keeps the answers
    d.write("one.txt", "2 3 4\n");
    d.ok(&["add", "--index", "k.genie.live", "--input", "one.txt"]);
    d.ok(&["compact", "--index", "k.genie.live"]);
    assert_eq!(
        search(&[]),
        "{\"query\":0,\"hits\":[{\"id\":1,\"count\":2},{\"id\":40,\"count\":2},{\"id\":42,\"count\":2}]}\n"
    );
    // bad input names the file and line
    d.write("bad.txt", "1 2\n3 x\n");
    let e = d.fails(&["add", "--index", "k.genie.live", "--input", "bad.txt"]);
    assert!(e.contains("bad.txt:2"), "{e}");
    let e = d.fails(&[
        "add",
        "--index",
        "k.genie.live",
        "--input",
        "more.txt",
        "--ids",
        "del.txt",
    ]);
    assert!(e.contains("expected one id per object"), "{e}");
    d.write("badids.txt", "7\n-1\n");
    let e = d.fails(&args(&["--filter-ids", "badids.txt"]));
    assert!(e.contains("badids.txt:2"), "{e}");
}

#[test]
fn the_server_creates_live_indexes_in_its_folder() {
    let dir = tempfile::tempdir().expect("dir");
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).expect("data");
    let start = |create: bool| {
        let service = Service::new(Vec::new(), BatchPolicy::default()).expect("service");
        Server::start(
            service,
            ServerConfig {
                writable: true,
                create: create.then(|| genie::server::Creating {
                    dir: data.clone(),
                    spec: cpu(),
                    live: LiveConfig::default(),
                    registry: genie::kind::Registry::default(),
                }),
                ..ServerConfig::default()
            },
        )
    };
    let server = start(true);
    let put = |server: &Server, name: &str, body: &Value| {
        let (status, text) = call(
            "PUT",
            &format!("{}/v1/indexes/{name}", server.url),
            None,
            Some(body.to_string().into_bytes()),
        );
        (status, serde_json::from_str::<Value>(&text).expect("JSON"))
    };
    let (status, v) = put(&server, "fresh", &json!({"kind": "keywords"}));
    assert_eq!(
        (status, v),
        (201, json!({"created": "fresh", "kind": "keywords"}))
    );
    let (status, v) = put(&server, "fresh", &json!({"kind": "keywords"}));
    assert_eq!(status, 409, "{v}");
    for (name, body, field) in [
        ("bad/name", json!({"kind": "keywords"}), "no route"),
        ("b@d", json!({"kind": "keywords"}), "index name"),
        ("other", json!({"kind": "vectors"}), "kind:"),
        (
            "other",
            json!({"kind": "keywords", "options": {"parts": 2}}),
            "options:",
        ),
        ("other", json!({"type": "keywords"}), "unknown field"),
    ] {
        let (status, v) = put(&server, name, &body);
        assert!(
            status == 400 || status == 404,
            "{name} {body}: {status} {v}"
        );
        assert!(v["error"].as_str().expect("error").contains(field), "{v}");
    }
    let (status, v) = route(
        &server,
        "fresh",
        "objects",
        &json!({"objects": [{"id": 5, "object": "1 2"}, {"id": 9, "object": "2"}]}),
    );
    assert_eq!((status, v), (200, json!({"written": 2})));
    let (_, v) = post(&server, "fresh", &json!({"queries": ["1 2"], "k": 5}));
    assert_eq!(hits(&v), [vec![(5, 2), (9, 1)]]);
    let (_, v) = call("GET", &format!("{}/v1/indexes", server.url), None, None);
    assert!(v.contains("\"fresh\""), "{v}");
    drop(server);
    assert!(LiveIndex::is_live(&data.join("fresh.live")));
    // a server without a folder refuses
    let server = start(false);
    let (status, v) = put(&server, "more", &json!({"kind": "keywords"}));
    assert_eq!(status, 403, "{v}");
    assert!(
        v["error"].as_str().expect("error").contains("--data"),
        "{v}"
    );
}
