//! A web service of one's own that embeds genie: an axum app with its own routes, one of which
//! searches through the batching handle ([`genie::service::Service`]), and genie's whole JSON API
//! nested under `/genie`. Queries from concurrent requests are gathered into batches.
//!
//! ```sh
//! cargo run --example service            # starts, calls itself a few times, stops
//! cargo run --example service -- --serve # keeps serving on 127.0.0.1:7800 until Ctrl-C
//! ```
//!
//! It indexes `examples/data/objects.txt` and runs on the GPU when there is one, else the CPU.

use anyhow::{Context, Result};
use axum::extract::{Path, State};
use axum::routing::get;
use axum::{Json, Router};
use genie::kind::{BuildJob, Options, Registry};
use genie::open::OpenSpec;
use genie::server::ServerConfig;
use genie::service::{BatchPolicy, Service};
use serde_json::{json, Value};

/// `GET /similar/{keywords}`: the 3 objects sharing the most of the comma-separated keywords.
async fn similar(State(genie): State<Service>, Path(keywords): Path<String>) -> Json<Value> {
    let line = keywords.replace(',', " ");
    let answer = match genie.parse("objects", &json!(line), &Options::new()) {
        Ok(query) => genie.search("objects", query, 3, None).await,
        Err(e) => Err(e),
    };
    Json(match answer {
        Ok(a) => {
            json!({ "similar": a.hits.iter().map(|h| json!({"id": h.id, "shared": h.count})).collect::<Vec<_>>() })
        }
        Err(e) => json!({ "error": e.to_string() }),
    })
}

#[tokio::main]
async fn main() -> Result<()> {
    let serve_forever = std::env::args().any(|a| a == "--serve");
    // an index of the example objects (a service would open one built by `genie build`)
    let dir = tempfile::tempdir()?;
    let index = dir.path().join("objects.genie");
    let input = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/objects.txt");
    let registry = Registry::default();
    registry.get("keywords")?.build(&BuildJob {
        input: &input,
        output: &index,
        options: &Options::new(),
        progress: &|_| {},
    })?;
    let genie = Service::open(
        &registry,
        &[("objects", index.as_path())],
        &OpenSpec::default(),
        BatchPolicy::default(),
    )?;

    let app = Router::new()
        .route("/hello", get(|| async { "hello from my own service\n" }))
        .route("/similar/{keywords}", get(similar))
        .with_state(genie.clone())
        .nest(
            "/genie",
            genie::server::router(genie.clone(), &ServerConfig::default()),
        );

    let addr = if serve_forever {
        "127.0.0.1:7800"
    } else {
        "127.0.0.1:0"
    };
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let base = format!("http://{}", listener.local_addr()?);
    println!("serving on {base} (its own /hello and /similar/..., genie's API under /genie)");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await
    });
    if serve_forever {
        genie::server::shutdown_signal().await;
    } else {
        let client = reqwest::Client::new();
        for path in ["/hello", "/similar/1,5,10", "/genie/v1/indexes"] {
            let text = client
                .get(format!("{base}{path}"))
                .send()
                .await?
                .text()
                .await?;
            println!("GET {path} -> {}", text.trim_end());
        }
        // concurrent callers of the handle: their queries are searched in shared batches
        let calls: Vec<_> = (1..=8u32)
            .map(|k| {
                let g = genie.clone();
                tokio::spawn(async move {
                    let q = g.parse("objects", &json!(format!("{k} 5 10")), &Options::new())?;
                    g.search("objects", q, 2, None).await
                })
            })
            .collect();
        for c in calls {
            let a = c.await.context("task")??;
            println!(
                "{:?}",
                a.hits.iter().map(|h| (h.id, h.count)).collect::<Vec<_>>()
            );
        }
        let stats = &genie.stats()[0];
        println!("{} queries in {} batches", stats.queries, stats.batches);
    }
    let _ = stop.send(());
    server.await??;
    genie.shutdown();
    Ok(())
}
