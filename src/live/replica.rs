//! A live index placed on one device: the [`KindIndex`] the service, the server, the CLI and
//! Python search through. Each segment of a snapshot is made resident on the device the first
//! time a search sees it (and let go when no snapshot holds it); a search runs every segment with
//! its live mask and the request's filter applied on the device, and merges the answers.

use super::{LiveIndex, Snapshot};
use crate::data_error::DataError;
use crate::kind::keywords::parse_keyword_query;
use crate::kind::{
    by_filter, core_queries, search_counts, Answer, AnswerHit, KindIndex, Options, Prepared,
    Request,
};
use crate::open::OpenSpec;
use crate::searcher::Searcher;
use genie_core::{select_backends, Backend, Engine, Method, Query, StageTimes};
use serde_json::Value;
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A live index of keyword objects on one device.
pub struct LiveCountIndex {
    live: Arc<LiveIndex>,
    backend: Box<dyn Backend>,
    method: Method,
    /// The segments resident on the device, by number.
    resident: Mutex<HashMap<u64, Arc<Searcher>>>,
}

/// The live index placed on the devices of `spec`: one replica per device, sharing its state.
pub fn place_live(
    live: &Arc<LiveIndex>,
    spec: &OpenSpec,
) -> Result<Vec<Arc<dyn KindIndex>>, DataError> {
    let backends = select_backends(spec.device, spec.devices.as_deref())?;
    Ok(place_live_on(live, backends, spec.method))
}

/// [`place_live`] on backends already opened.
pub fn place_live_on(
    live: &Arc<LiveIndex>,
    backends: Vec<Box<dyn Backend>>,
    method: Method,
) -> Vec<Arc<dyn KindIndex>> {
    backends
        .into_iter()
        .map(|backend| {
            Arc::new(LiveCountIndex {
                live: Arc::clone(live),
                backend,
                method,
                resident: Mutex::new(HashMap::new()),
            }) as Arc<dyn KindIndex>
        })
        .collect()
}

impl LiveCountIndex {
    /// The searchers of a snapshot's segments, in its order (uploading new segments, letting
    /// go of segments no longer in it).
    fn searchers(&self, snapshot: &Snapshot) -> Result<Vec<Arc<Searcher>>, DataError> {
        let mut resident = self.resident.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::with_capacity(snapshot.segments.len());
        for view in &snapshot.segments {
            let number = view.segment.number;
            let s = match resident.get(&number) {
                Some(s) => Arc::clone(s),
                None => {
                    let engine = Engine::with_backend(
                        Arc::clone(&view.segment.index),
                        self.backend.as_ref(),
                    )?;
                    let s = Arc::new(Searcher::Single(engine));
                    resident.insert(number, Arc::clone(&s));
                    s
                }
            };
            out.push(s);
        }
        resident.retain(|n, _| snapshot.segments.iter().any(|v| v.segment.number == *n));
        Ok(out)
    }
}

impl KindIndex for LiveCountIndex {
    fn kind(&self) -> &str {
        self.live.kind()
    }

    fn num_objects(&self) -> u64 {
        self.live.live_objects()
    }

    fn backend_name(&self) -> String {
        format!("{} (live)", self.backend.name())
    }

    fn parse(&self, raw: &Value, options: &Options) -> Result<Prepared, DataError> {
        options.check("keywords", &[])?;
        Ok(Box::new(parse_keyword_query(raw)?))
    }

    fn items(&self, query: &(dyn Any + Send + Sync)) -> usize {
        query.downcast_ref::<Query>().map_or(0, |q| q.items.len())
    }

    fn search(&self, batch: &[Request<'_>]) -> Result<Vec<Answer>, DataError> {
        let snapshot = self.live.snapshot()?;
        let searchers = self.searchers(&snapshot)?;
        by_filter(batch, |part, filter| {
            let queries = core_queries(part)?;
            let mut merged: Vec<Vec<AnswerHit>> = vec![Vec::new(); part.len()];
            for (view, searcher) in snapshot.segments.iter().zip(&searchers) {
                let mask = match filter {
                    None => view.live.clone(),
                    Some(f) => f.mask(view.segment.id_space(), Some(&view.live))?,
                };
                if mask.count() == 0 {
                    continue;
                }
                let mask = (!mask.is_all()).then_some(mask);
                let answers = search_counts(searcher, &queries, part, self.method, mask)?;
                for (m, a) in merged.iter_mut().zip(answers) {
                    m.extend(a.hits.into_iter().map(|h| AnswerHit {
                        id: view.segment.id(h.id as u32),
                        ..h
                    }));
                }
            }
            Ok(merged
                .into_iter()
                .zip(part)
                .map(|(mut hits, r)| {
                    hits.sort_unstable_by(|a, b| b.count.cmp(&a.count).then(a.id.cmp(&b.id)));
                    hits.truncate(r.k as usize);
                    Answer {
                        hits,
                        ..Answer::default()
                    }
                })
                .collect())
        })
    }

    fn take_stage_times(&self) -> Option<StageTimes> {
        None
    }

    fn gpu_ordinal(&self) -> Option<usize> {
        self.backend.gpu_ordinal()
    }

    fn live(&self) -> Option<&Arc<LiveIndex>> {
        Some(&self.live)
    }
}
