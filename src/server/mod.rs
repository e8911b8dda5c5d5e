//! The HTTP server of `genie serve` (axum on tokio) over a [`Service`], and its client
//! ([`client`], for `genie search --server`).
//!
//! API (JSON):
//! - `POST /v1/indexes/{name}/search` with `{"queries": [...], "k": 10, "min_count": 2,
//!   "options": {...}}`: queries in the kind's own form (a keyword line `"7 10-20 3:2"` or an
//!   array `[7, [10, 20], [3, 3, 2]]`; a sequence, document or table row or conditions as a
//!   string; a vector as an array of numbers). `k` defaults to 10; `min_count` keeps only hits
//!   of at least that count; `options` are the kind's search options (`candidates`, `radius`,
//!   ...). Answer: `{"results": [{"query": 0, "hits": [{"id": 12, "count": 3}]}, ...]}`, each
//!   result the JSON line `genie search` writes for that query.
//!   A search may carry `"filter": {"ids": [...]}` (only those objects) and `"exclude": {"ids":
//!   [...]}` (never those), applied on the device before the top-k.
//! - Live indexes (`genie serve --writable`): `POST /v1/indexes/{name}/objects` with
//!   `{"objects": [{"id": 17, "object": ...}, ...]}` (the object in the kind's query form) adds or
//!   replaces objects, answered `{"written": n}` once they are in the log on disk;
//!   `POST /v1/indexes/{name}/delete` with `{"ids": [...]}`, answered `{"deleted": n}` (the ids
//!   that had an object); `POST /v1/indexes/{name}/flush` writes the segments and deletes to
//!   disk; `PUT /v1/indexes/{name}` with `{"kind": "keywords"}` creates an empty live index
//!   (`genie serve --writable --data DIR`: in `DIR/NAME.live`, served again after a restart),
//!   answered 201 `{"created": name, "kind": ...}`.
//! - `GET /v1/indexes`: name, kind, objects and devices of each index.
//! - `GET /healthz`: `ok`. `GET /metrics`: Prometheus text.
//!
//! Errors are `{"error": "..."}` with 400 (a field named), 401 (token), 404 (index), 413 (body
//! size), 503 (overloaded or shutting down) or 500. With a token, every route but `/healthz`
//! needs `Authorization: Bearer TOKEN` (compared in constant time).

#[cfg(feature = "client")]
pub mod client;
pub mod metrics;
mod write;
pub use write::{decode_ids, decode_objects};

use crate::kind::{kind_of, Answer, Filter, Options};
use crate::service::{SearchError, Service};
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use metrics::Metrics;
use serde::Deserialize;
use serde_json::{json, Value};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;
use subtle::ConstantTimeEq;

/// Limits on what one request may ask.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of a request body (413 above).
    pub max_body_bytes: usize,
    /// Queries in one request.
    pub max_queries: usize,
    /// Keyword items one query may become.
    pub max_items: usize,
    /// Hits per query.
    pub max_k: u32,
    /// Objects (or ids) in one write request.
    pub max_objects: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: 64 << 20,
            max_queries: 16_384,
            max_items: 1 << 16,
            max_k: 10_000,
            max_objects: 1 << 16,
        }
    }
}

/// How the server runs.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The address to listen on (127.0.0.1:7700 by default).
    pub listen: SocketAddr,
    /// A bearer token every request but `/healthz` must carry.
    pub token: Option<String>,
    /// Request limits.
    pub limits: Limits,
    /// Whether live indexes take writes (`--writable`).
    pub writable: bool,
    /// How stale a search of a live index may be (`--refresh-ms`; see
    /// [`crate::live::LiveConfig::refresh`]).
    pub refresh: std::time::Duration,
    /// Where `PUT /v1/indexes/{name}` makes live indexes, and how it places them (`--data`);
    /// `None`: the route is refused.
    pub create: Option<Creating>,
}

/// How the server creates live indexes (`genie serve --writable --data DIR`).
#[derive(Clone, Debug)]
pub struct Creating {
    /// The folder: index NAME is `DIR/NAME.live`.
    pub dir: std::path::PathBuf,
    /// The devices it is placed on.
    pub spec: crate::open::OpenSpec,
    /// Its flushes, merges and refresh.
    pub live: crate::live::LiveConfig,
    /// The kinds it may be of.
    pub registry: crate::kind::Registry,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 7700)),
            token: None,
            limits: Limits::default(),
            writable: false,
            refresh: std::time::Duration::from_millis(DEFAULT_REFRESH_MS),
            create: None,
        }
    }
}

/// What the handlers share.
struct AppState {
    service: Service,
    token: Option<String>,
    limits: Limits,
    metrics: Metrics,
    writable: bool,
    create: Option<Creating>,
}

/// An error answer: a status and a message.
struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({ "error": self.1 }).to_string();
        (self.0, [(header::CONTENT_TYPE, "application/json")], body).into_response()
    }
}

fn bad(message: impl Into<String>) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, message.into())
}

impl From<SearchError> for ApiError {
    fn from(e: SearchError) -> Self {
        let status = match &e {
            SearchError::UnknownIndex(_) => StatusCode::NOT_FOUND,
            SearchError::BadQuery(_) => StatusCode::BAD_REQUEST,
            SearchError::Overloaded(_) | SearchError::ShutDown => StatusCode::SERVICE_UNAVAILABLE,
            SearchError::Failed(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Self(status, e.to_string())
    }
}

/// The body of a search request.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchBody {
    queries: Vec<Value>,
    #[serde(default)]
    k: Option<u32>,
    #[serde(default)]
    min_count: Option<u32>,
    #[serde(default)]
    options: Value,
    #[serde(default)]
    filter: Option<Value>,
    #[serde(default)]
    exclude: Option<Value>,
}

/// A decoded search request: the parsed queries, each with its `k` and `min_count`, and the
/// filter they share.
pub struct DecodedSearch {
    /// The queries.
    pub queries: Vec<(crate::kind::Prepared, u32, Option<u32>)>,
    /// The objects they may return.
    pub filter: Option<Filter>,
}

/// The default of `genie serve --refresh-ms`.
/// (Measured on an H100 under 100 K writes/s: 50 ms gave reads a p99 4.87x the read-only one,
/// 250 ms 3.34x; docs/journal/live.md.)
pub const DEFAULT_REFRESH_MS: u64 = 250;

/// The default `k` of a request that gives none.
pub const DEFAULT_K: u32 = 10;

/// The routes of the API over a service (to serve, or to nest in an app of one's own).
pub fn router(service: Service, config: &ServerConfig) -> Router {
    let state = Arc::new(AppState {
        service,
        token: config.token.clone().filter(|t| !t.is_empty()),
        limits: config.limits.clone(),
        metrics: Metrics::default(),
        writable: config.writable,
        create: config.create.clone(),
    });
    Router::new()
        .route("/v1/indexes/{name}", axum::routing::put(write::create))
        .route("/v1/indexes/{name}/search", post(search))
        .route("/v1/indexes/{name}/objects", post(write::add))
        .route("/v1/indexes/{name}/delete", post(write::delete))
        .route("/v1/indexes/{name}/flush", post(write::flush))
        .route("/v1/indexes", get(list))
        .route("/metrics", get(metrics_text))
        .route("/healthz", get(|| async { "ok\n" }))
        .fallback(|uri: axum::http::Uri| async move {
            ApiError(
                StatusCode::NOT_FOUND,
                format!(
                    "no route {} (routes: POST /v1/indexes/NAME/search, \
                     POST /v1/indexes/NAME/objects, POST /v1/indexes/NAME/delete, \
                     POST /v1/indexes/NAME/flush, PUT /v1/indexes/NAME, GET /v1/indexes, \
                     GET /metrics, GET /healthz)",
                    uri.path()
                ),
            )
        })
        .method_not_allowed_fallback(
            |method: axum::http::Method, uri: axum::http::Uri| async move {
                let path = uri.path();
                let allowed = if path.starts_with("/v1/indexes/") && path.matches('/').count() == 3
                {
                    "PUT"
                } else if path.starts_with("/v1/indexes/") {
                    "POST"
                } else {
                    "GET"
                };
                let mut r = ApiError(
                    StatusCode::METHOD_NOT_ALLOWED,
                    format!("{method} is not allowed on {} (use {allowed})", uri.path()),
                )
                .into_response();
                r.headers_mut()
                    .insert(header::ALLOW, header::HeaderValue::from_static(allowed));
                r
            },
        )
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            account,
        ))
        .with_state(state)
}

/// Checks the token and records each request's status and time.
async fn account(
    State(state): State<Arc<AppState>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let start = Instant::now();
    let open = request.uri().path() == "/healthz";
    let response = if open || authorized(state.token.as_deref(), request.headers()) {
        next.run(request).await
    } else {
        let mut r = ApiError(
            StatusCode::UNAUTHORIZED,
            "missing or wrong bearer token (Authorization: Bearer TOKEN)".into(),
        )
        .into_response();
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
        r
    };
    state
        .metrics
        .record(response.status().as_u16(), start.elapsed());
    response
}

/// Whether the request carries the token (always, when there is none).
fn authorized(token: Option<&str>, headers: &HeaderMap) -> bool {
    let Some(token) = token else { return true };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    bool::from(given.as_bytes().ct_eq(token.as_bytes()))
}

async fn list(State(state): State<Arc<AppState>>) -> Response {
    let indexes: Vec<Value> = state
        .service
        .stats()
        .into_iter()
        .map(|s| {
            json!({
                "name": s.name,
                "kind": s.kind,
                "objects": s.objects,
                "devices": s.devices,
            })
        })
        .collect();
    axum::Json(json!({ "indexes": indexes })).into_response()
}

async fn metrics_text(State(state): State<Arc<AppState>>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(&state.service),
    )
        .into_response()
}

async fn search(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    body: Body,
) -> Result<Response, ApiError> {
    let limits = &state.limits;
    let bytes = write::body_bytes(body, limits).await?;
    let service = &state.service;
    let index = service.index(&name)?;
    let parsed = decode_search(&bytes, index.as_ref(), limits).map_err(bad)?;
    let tickets = service.submit_filtered(&name, parsed.queries, parsed.filter.map(Arc::new))?;
    let mut out = Vec::with_capacity(64 * tickets.len() + 16);
    out.extend_from_slice(b"{\"results\":[");
    for (i, t) in tickets.into_iter().enumerate() {
        let answer: Answer = t.await?;
        if i > 0 {
            out.push(b',');
        }
        answer.push_json(&mut out, i as u64);
        // the JSON line's newline
        out.pop();
    }
    out.extend_from_slice(b"]}");
    Ok(([(header::CONTENT_TYPE, "application/json")], out).into_response())
}

/// Decodes a search request's body for `index` within `limits`: the parsed queries, each with
/// its `k` and `min_count`. The error (a 400) names the field that is wrong. Public so that the
/// decoding can be fuzzed on its own.
pub fn decode_search(
    bytes: &[u8],
    index: &dyn crate::kind::KindIndex,
    limits: &Limits,
) -> Result<DecodedSearch, String> {
    let body: SearchBody =
        serde_json::from_slice(bytes).map_err(|e| format!("request body: {e}"))?;
    let k = body.k.unwrap_or(DEFAULT_K);
    if k > limits.max_k {
        return Err(format!(
            "k: {k} is above the server's limit of {} (--max-k)",
            limits.max_k
        ));
    }
    if body.queries.len() > limits.max_queries {
        return Err(format!(
            "queries: {} queries, at most {} per request (--max-queries)",
            body.queries.len(),
            limits.max_queries
        ));
    }
    let options = Options::from_json(&body.options).map_err(|e| e.to_string())?;
    let filter = Filter::from_json(body.filter.as_ref(), body.exclude.as_ref())
        .map_err(|e| e.to_string())?;
    if let Some(f) = &filter {
        index.check_filter(f).map_err(|e| e.to_string())?;
    }
    let mut parsed = Vec::with_capacity(body.queries.len());
    for (i, raw) in body.queries.iter().enumerate() {
        let q = index
            .parse(raw, &options)
            .map_err(|e| format!("queries[{i}]: {e}"))?;
        let items = index.items(q.as_ref());
        if items > limits.max_items {
            return Err(format!(
                "queries[{i}]: {items} items ({}), at most {} (--max-items)",
                kind_of(raw),
                limits.max_items
            ));
        }
        parsed.push((q, k, body.min_count));
    }
    Ok(DecodedSearch {
        queries: parsed,
        filter,
    })
}

/// Serves the API on `config.listen` until `shutdown` completes, then finishes the requests in
/// flight, and the service's queued queries, before it returns.
pub async fn serve(
    service: Service,
    config: &ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(config.listen).await?;
    serve_on(listener, service, config, shutdown).await
}

/// As [`serve`], on a listener already bound (port 0 picks a free port).
pub async fn serve_on(
    listener: tokio::net::TcpListener,
    service: Service,
    config: &ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = router(service.clone(), config);
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await?;
    let s = service.clone();
    tokio::task::spawn_blocking(move || s.shutdown())
        .await
        .map_err(std::io::Error::other)?;
    Ok(())
}

/// Completes on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    log::info!("shutting down: finishing the requests in flight");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        let mut h = HeaderMap::new();
        assert!(authorized(None, &h));
        assert!(!authorized(Some("s3cret"), &h));
        h.insert(
            header::AUTHORIZATION,
            "Bearer s3cret".parse().expect("header"),
        );
        assert!(authorized(Some("s3cret"), &h));
        assert!(!authorized(Some("s3cret!"), &h));
        h.insert(
            header::AUTHORIZATION,
            "Basic s3cret".parse().expect("header"),
        );
        assert!(!authorized(Some("s3cret"), &h));
    }
}
