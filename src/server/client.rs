//! A client of the server's API, for `genie search --server URL` and for programs of one's own:
//! lists the indexes, sends queries in the kind's JSON form and reads the answers back as
//! [`Answer`]s, which print as the same JSON lines as a local search.

use crate::kind::{Answer, AnswerHit, Filter, Options};
use serde_json::{json, Value};
use std::time::Duration;

/// Why a call to the server failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server could not be reached or the connection broke.
    #[error("{url}: {message}")]
    Http {
        /// The URL called.
        url: String,
        /// What happened.
        message: String,
    },
    /// The server answered with an error status.
    #[error("{url}: the server answered {status}: {message}")]
    Status {
        /// The URL called.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The server's message.
        message: String,
    },
    /// The answer was not what the API promises.
    #[error("{url}: unexpected answer: {message}")]
    Answer {
        /// The URL called.
        url: String,
        /// What was wrong.
        message: String,
    },
}

/// Why a request got no answer, in words: nothing listening, no answer in time, or the
/// connection's own error with its causes.
fn why_unreached(e: &reqwest::Error) -> String {
    let mut causes = Vec::new();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        causes.push(s.to_string());
        source = s.source();
    }
    let refused = causes.iter().any(|c| c.contains("refused"));
    if e.is_connect() && refused {
        return "cannot connect: nothing listens there (connection refused); is `genie serve` \
                running at that address?"
            .into();
    }
    if e.is_timeout() {
        return "no answer in time (the request timed out)".into();
    }
    let what = if e.is_connect() {
        "cannot connect"
    } else {
        "the request failed"
    };
    causes.dedup();
    if causes.is_empty() {
        what.to_string()
    } else {
        format!("{what}: {}", causes.join(": "))
    }
}

/// An index as the server lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteIndex {
    /// Its name.
    pub name: String,
    /// Its kind.
    pub kind: String,
    /// Its objects.
    pub objects: u64,
}

/// A blocking client of one server.
pub struct Client {
    base: String,
    token: Option<String>,
    http: reqwest::Client,
    runtime: tokio::runtime::Runtime,
}

impl Client {
    /// A client of the server at `base` (e.g. `http://127.0.0.1:7700`).
    pub fn new(base: &str, token: Option<String>) -> Result<Self, ClientError> {
        let err = |e: &dyn std::fmt::Display| ClientError::Http {
            url: base.to_string(),
            message: e.to_string(),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| err(&e))?;
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(600))
            .build()
            .map_err(|e| err(&e))?;
        Ok(Self {
            base: base.trim_end_matches('/').to_string(),
            token,
            http,
            runtime,
        })
    }

    fn call(&self, path: &str, body: Option<Vec<u8>>) -> Result<Value, ClientError> {
        let url = format!("{}{path}", self.base);
        let http_err = |e: reqwest::Error| ClientError::Http {
            url: url.clone(),
            message: why_unreached(&e),
        };
        let mut request = match body {
            Some(b) => self
                .http
                .post(&url)
                .header("content-type", "application/json")
                .body(b),
            None => self.http.get(&url),
        };
        if let Some(t) = &self.token {
            request = request.bearer_auth(t);
        }
        let (status, bytes) = self.runtime.block_on(async {
            let response = request.send().await.map_err(http_err)?;
            let status = response.status().as_u16();
            let bytes = response.bytes().await.map_err(http_err)?;
            Ok::<_, ClientError>((status, bytes))
        })?;
        let value: Value = match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            // not the API's JSON: what answered is not a genie server (a proxy, another program)
            Err(_) if status != 200 => {
                let text = String::from_utf8_lossy(&bytes);
                let text: String = text.chars().take(200).collect();
                return Err(ClientError::Status {
                    url,
                    status,
                    message: format!("not a genie answer: {:?}", text.trim()),
                });
            }
            Err(e) => {
                return Err(ClientError::Answer {
                    url,
                    message: format!("not JSON ({e})"),
                })
            }
        };
        if status != 200 {
            let message = value
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("no message")
                .to_string();
            return Err(ClientError::Status {
                url,
                status,
                message,
            });
        }
        Ok(value)
    }

    /// The indexes the server holds.
    pub fn indexes(&self) -> Result<Vec<RemoteIndex>, ClientError> {
        let v = self.call("/v1/indexes", None)?;
        let list =
            v.get("indexes")
                .and_then(Value::as_array)
                .ok_or_else(|| ClientError::Answer {
                    url: format!("{}/v1/indexes", self.base),
                    message: "no \"indexes\" list".into(),
                })?;
        Ok(list
            .iter()
            .map(|i| RemoteIndex {
                name: i["name"].as_str().unwrap_or_default().to_string(),
                kind: i["kind"].as_str().unwrap_or_default().to_string(),
                objects: i["objects"].as_u64().unwrap_or(0),
            })
            .collect())
    }

    /// Searches raw queries on index `name`; one answer per query, in order.
    pub fn search(
        &self,
        name: &str,
        queries: &[Value],
        k: u32,
        min_count: Option<u32>,
        options: &Options,
    ) -> Result<Vec<Answer>, ClientError> {
        self.search_filtered(name, queries, k, min_count, options, None)
    }

    /// [`Client::search`] of queries whose hits may only be objects that pass `filter`.
    pub fn search_filtered(
        &self,
        name: &str,
        queries: &[Value],
        k: u32,
        min_count: Option<u32>,
        options: &Options,
        filter: Option<&Filter>,
    ) -> Result<Vec<Answer>, ClientError> {
        let path = format!("/v1/indexes/{name}/search");
        let mut body = json!({ "queries": queries, "k": k, "options": options.to_json() });
        if let Some(t) = min_count {
            body["min_count"] = t.into();
        }
        if let Some(f) = filter {
            let mut allowed = serde_json::Map::new();
            if let Some(allow) = f.allowed() {
                allowed.insert("ids".into(), json!(allow));
            }
            if let Some(c) = f.condition() {
                allowed.insert("where".into(), json!(c));
            }
            if !allowed.is_empty() {
                body["filter"] = Value::Object(allowed);
            }
            if !f.denied().is_empty() {
                body["exclude"] = json!({ "ids": f.denied() });
            }
        }
        let v = self.call(&path, Some(body.to_string().into_bytes()))?;
        let bad = |message: String| ClientError::Answer {
            url: format!("{}{path}", self.base),
            message,
        };
        let results = v
            .get("results")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("no \"results\" list".into()))?;
        if results.len() != queries.len() {
            return Err(bad(format!(
                "{} results for {} queries",
                results.len(),
                queries.len()
            )));
        }
        results.iter().map(|r| answer_of(r).map_err(bad)).collect()
    }
}

/// An answer from its JSON form (a `"distance": null` is a distance that is not finite).
pub fn answer_of(v: &Value) -> Result<Answer, String> {
    let hits = v
        .get("hits")
        .and_then(Value::as_array)
        .ok_or("a result without \"hits\"")?;
    let num = |h: &Value, key: &str| {
        h.get(key)
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("a hit without a valid {key:?}: {h}"))
    };
    let hits = hits
        .iter()
        .map(|h| {
            Ok(AnswerHit {
                id: h
                    .get("id")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| format!("a hit without a valid \"id\": {h}"))?,
                count: num(h, "count")?,
                distance: match h.get("distance") {
                    None => None,
                    Some(Value::Null) => Some(f64::NAN),
                    Some(d) => Some(d.as_f64().ok_or_else(|| format!("a bad distance: {d}"))?),
                },
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Answer {
        hits,
        exact: v.get("exact").and_then(Value::as_bool),
        candidates: v
            .get("candidates")
            .and_then(Value::as_u64)
            .and_then(|c| u32::try_from(c).ok()),
    })
}
