//! The write routes of a live index: objects added or replaced, deleted, flushed. Each answers
//! once the change is in the log on disk; the disk work runs off the async threads.

use super::{bad, ApiError, AppState, Limits};
use crate::kind::Writes;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use std::sync::Arc;

/// The live index of `name`, or why it takes no writes.
fn live_of(state: &AppState, name: &str) -> Result<Arc<dyn Writes>, ApiError> {
    let index = state.service.index(name)?;
    match index.writes() {
        Some(live) if state.writable => Ok(live),
        _ => Err(ApiError(
            StatusCode::FORBIDDEN,
            format!(
                "index {name} takes no writes: serve it with `genie serve --writable` (an index \
                 file or a live index folder)"
            ),
        )),
    }
}

/// A request's body, at most `limits.max_body_bytes` (else a 413).
pub(super) async fn body_bytes(body: Body, limits: &Limits) -> Result<axum::body::Bytes, ApiError> {
    axum::body::to_bytes(body, limits.max_body_bytes)
        .await
        .map_err(|_| {
            ApiError(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "request body larger than {} bytes (the server's --max-body-bytes)",
                    limits.max_body_bytes
                ),
            )
        })
}

/// Decodes `{"objects": [{"id": 17, "object": ...}, ...]}` within `limits`: the ids and the
/// objects. The error names the field.
pub fn decode_objects(bytes: &[u8], limits: &Limits) -> Result<(Vec<u64>, Vec<Value>), String> {
    let body: Value = serde_json::from_slice(bytes).map_err(|e| format!("request body: {e}"))?;
    let Some(map) = body.as_object() else {
        return Err("request body: expected an object {\"objects\": [...]}".into());
    };
    if let Some(other) = map.keys().find(|k| k.as_str() != "objects") {
        return Err(format!(
            "request body: unknown field {other:?}, expected \"objects\""
        ));
    }
    let objects = map
        .get("objects")
        .and_then(Value::as_array)
        .ok_or("objects: expected an array of {\"id\": ..., \"object\": ...}")?;
    if objects.len() > limits.max_objects {
        return Err(format!(
            "objects: {} objects, at most {} per request (--max-objects)",
            objects.len(),
            limits.max_objects
        ));
    }
    let mut ids = Vec::with_capacity(objects.len());
    let mut out = Vec::with_capacity(objects.len());
    for (i, o) in objects.iter().enumerate() {
        let id = o
            .get("id")
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("objects[{i}].id: expected an unsigned 64-bit integer"))?;
        let object = o
            .get("object")
            .ok_or_else(|| format!("objects[{i}].object: missing"))?;
        if let Some(other) = o
            .as_object()
            .and_then(|m| m.keys().find(|k| *k != "id" && *k != "object"))
        {
            return Err(format!("objects[{i}]: unknown field {other:?}"));
        }
        ids.push(id);
        out.push(object.clone());
    }
    Ok((ids, out))
}

/// Decodes `{"ids": [...]}` within `limits`.
pub fn decode_ids(bytes: &[u8], limits: &Limits) -> Result<Vec<u64>, String> {
    let body: Value = serde_json::from_slice(bytes).map_err(|e| format!("request body: {e}"))?;
    let ids = crate::kind::ids_field(&body, "request body").map_err(|e| e.to_string())?;
    if ids.len() > limits.max_objects {
        return Err(format!(
            "ids: {} ids, at most {} per request (--max-objects)",
            ids.len(),
            limits.max_objects
        ));
    }
    Ok(ids)
}

/// Runs a blocking write; its error is a 400 when the request was at fault, else a 500.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, crate::data_error::DataError> + Send + 'static,
) -> Result<T, ApiError> {
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e @ crate::data_error::DataError::BadQuery(_))) => Err(bad(e.to_string())),
        Ok(Err(e)) => Err(ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())),
        Err(_) => Err(ApiError(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the write panicked".into(),
        )),
    }
}

/// What a write route does with the objects or ids of its body.
#[derive(Clone, Copy)]
enum Change {
    Add,
    Delete,
}

pub(super) async fn add(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    body: Body,
) -> Result<Response, ApiError> {
    write(&state, &name, body, Change::Add).await
}

pub(super) async fn delete(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    body: Body,
) -> Result<Response, ApiError> {
    write(&state, &name, body, Change::Delete).await
}

/// `change` of the live index `name` by the request's body: `{"written": n}` or
/// `{"deleted": n}`.
async fn write(
    state: &AppState,
    name: &str,
    body: Body,
    change: Change,
) -> Result<Response, ApiError> {
    let live = live_of(state, name)?;
    let bytes = body_bytes(body, &state.limits).await?;
    let answer = match change {
        Change::Add => {
            // decoded off the async threads too: a body of thousands of objects is megabytes of
            // JSON
            let limits = state.limits.clone();
            let written = blocking(move || {
                let (ids, objects) = decode_objects(&bytes, &limits)
                    .map_err(crate::data_error::DataError::BadQuery)?;
                live.add(&ids, &objects)
            })
            .await?;
            json!({ "written": written })
        }
        Change::Delete => {
            let ids = decode_ids(&bytes, &state.limits).map_err(bad)?;
            let deleted = blocking(move || live.delete(&ids)).await?;
            json!({ "deleted": deleted })
        }
    };
    Ok(axum::Json(answer).into_response())
}

pub(super) async fn flush(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    let live = live_of(&state, &name)?;
    blocking(move || live.flush()).await?;
    let stats = live_of(&state, &name)?.stats();
    Ok(axum::Json(json!({ "flushed": true, "segments": stats.segments })).into_response())
}

/// Whether `name` may name an index created through the API (a folder `NAME.live`).
fn good_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `PUT /v1/indexes/{name}` with `{"kind": "keywords"}`: an empty live index, served at once.
pub(super) async fn create(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    body: Body,
) -> Result<Response, ApiError> {
    let refused = |why: &str| {
        ApiError(
            StatusCode::FORBIDDEN,
            format!("cannot create {name}: {why}"),
        )
    };
    if !state.writable {
        return Err(refused(
            "the server takes no writes (`genie serve --writable`)",
        ));
    }
    let Some(creating) = state.create.clone() else {
        return Err(refused(
            "the server has no folder for new indexes (`genie serve --writable --data DIR`)",
        ));
    };
    if !good_name(&name) {
        return Err(bad(format!(
            "index name {name:?}: expected 1 to 64 letters, digits, '_' or '-'"
        )));
    }
    if state.service.index(&name).is_ok() {
        return Err(ApiError(
            StatusCode::CONFLICT,
            format!("an index named {name} is served already"),
        ));
    }
    let bytes = body_bytes(body, &state.limits).await?;
    let body: Value =
        serde_json::from_slice(&bytes).map_err(|e| bad(format!("request body: {e}")))?;
    let Some(map) = body.as_object() else {
        return Err(bad(
            "request body: expected an object {\"kind\": \"keywords\"}",
        ));
    };
    if let Some(other) = map.keys().find(|k| *k != "kind" && *k != "options") {
        return Err(bad(format!(
            "request body: unknown field {other:?}, expected \"kind\" and \"options\""
        )));
    }
    let kind = map
        .get("kind")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("kind: expected the kind's name, e.g. \"keywords\""))?
        .to_string();
    let options = match map.get("options") {
        None => crate::kind::Options::new(),
        Some(o) if o.is_object() => {
            crate::kind::Options::from_json(o).map_err(|e| bad(format!("options: {e}")))?
        }
        Some(_) => {
            return Err(bad(
                "options: expected an object of the kind's build options",
            ))
        }
    };
    // the kind and its options are checked here, for a 400 naming the field
    let kind_of = creating
        .registry
        .get(&kind)
        .map_err(|e| bad(format!("kind: {e}")))?;
    if let Err(e) = kind_of.live_metadata(&options) {
        let field = match e {
            crate::data_error::DataError::BadOption { .. } => "options",
            _ => "kind",
        };
        return Err(bad(format!("{field}: {e}")));
    }
    let service = state.service.clone();
    let made = name.clone();
    let kind_made = kind.clone();
    blocking(move || {
        let dir = creating.dir.join(format!("{made}.live"));
        let live = crate::live::LiveIndex::create_with(
            &creating.registry,
            &dir,
            &kind_made,
            &options,
            creating.live.clone(),
        )
        .map_err(|e| {
            use crate::data_error::DataError as E;
            match e {
                E::Unsupported(_) | E::BadOption { .. } | E::Sa(_) => E::BadQuery(e.to_string()),
                other => other,
            }
        })?;
        let replicas = crate::live::place_live(&live, &creating.spec)?;
        service.add(made, replicas)
    })
    .await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(json!({ "created": name, "kind": kind })),
    )
        .into_response())
}
