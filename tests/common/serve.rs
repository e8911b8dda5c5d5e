//! The fixtures of the server tests: one index of each kind with its queries, a server on
//! 127.0.0.1 (a free port) in a runtime of its own, and blocking HTTP calls to it.

#![allow(dead_code)] // each test file uses its part

use genie::core::DeviceChoice;
use genie::kind::{BuildJob, Options, Registry};
use genie::open::OpenSpec;
use genie::server::{serve_on, ServerConfig};
use genie::service::{BatchPolicy, Service};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use tempfile::TempDir;

#[path = "args.rs"]
pub mod args;
/// The CLI tests' harness, for tests that drive both the server and `genie`.
#[path = "cli.rs"]
pub mod cli;
pub use cli::binary;

/// Objects, queries and a build command of each kind (files written in a temp dir).
pub struct Fixture {
    pub dir: TempDir,
}

pub const SEQUENCES: &str = "kitten\nsitting\nmitten\nbitten\nkitchen\nwritten\nsmitten\n";
pub const DOCUMENTS: &str =
    "the quick brown fox\nlazy dogs sleep all day\nquick brown dogs run\nfoxes and dogs\n";
pub const TABLE: &str = "age,job,hours\n25,clerk,40\n38,engineer,45\n52,clerk,20\n41,nurse,36\n";

impl Fixture {
    pub fn new() -> Self {
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

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn write(&self, name: &str, text: &str) {
        std::fs::write(self.path(name), text).expect("write fixture");
    }

    /// `genie` in the fixture's directory, without the environment that would change its
    /// choices.
    pub fn command(&self) -> Command {
        let mut c = Command::new(binary());
        c.current_dir(self.dir.path())
            .env_remove("GENIE_DEVICE")
            .env_remove("GENIE_TOKEN");
        c
    }

    /// Runs `genie ARGS` in the fixture's directory; its standard output.
    pub fn genie(&self, args: &[&str]) -> String {
        let out = self
            .command()
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

    /// The standard output of `genie search --device cpu --index INDEX --queries QUERIES --k K`.
    pub fn search_cpu(&self, index: &str, queries: &str, k: &str) -> String {
        self.genie(&args::search_cpu(index, queries, k, &[]))
    }

    /// The five indexes, by name.
    pub fn indexes(&self) -> Vec<(&'static str, PathBuf)> {
        ["k", "s", "d", "t", "v"]
            .into_iter()
            .map(|n| (n, self.path(&format!("{n}.genie"))))
            .collect()
    }
}

/// The queries file of each index.
pub const QUERY_FILES: [(&str, &str); 5] = [
    ("k", "queries.txt"),
    ("s", "seq-queries.txt"),
    ("d", "doc-queries.txt"),
    ("t", "table-queries.txt"),
    ("v", "vec-queries.csv"),
];

/// A server on 127.0.0.1 (a free port) over a service, in a runtime of its own thread.
pub struct Server {
    pub url: String,
    pub stop: Option<tokio::sync::oneshot::Sender<()>>,
    pub done: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl Server {
    pub fn start(service: Service, config: ServerConfig) -> Self {
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

    /// A server of the fixture's five indexes, batching by default, with `config`.
    pub fn over_fixture(f: &Fixture, config: ServerConfig) -> Self {
        Self::start(open_service(f, BatchPolicy::default()), config)
    }

    /// Stops the server (after the requests in flight) and waits for it.
    pub fn stop(&mut self) {
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

pub fn cpu() -> OpenSpec {
    OpenSpec {
        device: DeviceChoice::Cpu,
        ..OpenSpec::default()
    }
}

pub fn open_service(f: &Fixture, policy: BatchPolicy) -> Service {
    let files = f.indexes();
    let named: Vec<(&str, &Path)> = files.iter().map(|(n, p)| (*n, p.as_path())).collect();
    Service::open(&Registry::default(), &named, &cpu(), policy).expect("open the indexes")
}

/// Builds `input` into `index` with the registry's kind `kind` (no options): a service of that
/// one index, named `name`, on the CPU.
pub fn build_and_open(
    registry: &Registry,
    kind: &str,
    input: &Path,
    index: &Path,
    name: &str,
) -> Service {
    let job = BuildJob {
        input,
        output: index,
        options: &Options::new(),
        progress: &|_| {},
    };
    registry
        .get(kind)
        .expect("kind")
        .build(&job)
        .expect("build");
    Service::open(registry, &[(name, index)], &cpu(), BatchPolicy::default()).expect("open")
}

/// A blocking HTTP call: (status, body).
pub fn call(method: &str, url: &str, token: Option<&str>, body: Option<Vec<u8>>) -> (u16, String) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let client = reqwest::Client::new();
        let mut r = match method {
            "POST" => client.post(url).body(body.unwrap_or_default()),
            "GET" => client.get(url),
            other => client
                .request(
                    reqwest::Method::from_bytes(other.as_bytes()).expect("method"),
                    url,
                )
                .body(body.unwrap_or_default()),
        };
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        let resp = r.send().await.expect("request");
        let status = resp.status().as_u16();
        (status, resp.text().await.expect("body"))
    })
}

pub fn post(server: &Server, index: &str, body: &Value) -> (u16, Value) {
    let (status, text) = call(
        "POST",
        &format!("{}/v1/indexes/{index}/search", server.url),
        None,
        Some(body.to_string().into_bytes()),
    );
    (status, serde_json::from_str(&text).expect("JSON answer"))
}

/// The JSON lines of a `results` list, as `genie search` writes them.
pub fn lines_of(results: &Value) -> String {
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
