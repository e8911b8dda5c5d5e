//! A live index placed on one device: the [`KindIndex`] the service, the server, the CLI and
//! Python search through. Each segment of a snapshot is made resident on the device the first
//! time a search sees it (and let go when no snapshot holds it); a search runs every segment with
//! its live mask and the request's filter applied on the device, and merges the answers.

use super::{LiveIndex, Segment, SegmentIds, Snapshot};
use crate::data_error::DataError;
use crate::kind::{
    by_filter, condition_mask, prepared, search_counts, Answer, AnswerHit, Candidate, KindIndex,
    LiveObjects, LiveQuery, Options, Prepared, Request,
};
use crate::open::OpenSpec;
use crate::searcher::Searcher;
use genie_core::{select_backends, Backend, Engine, Method, Query, StageTimes};
use rayon::prelude::*;
use serde_json::Value;
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A live index on one device (objects of a kind whose answers are count hits).
pub struct LiveCountIndex {
    live: Arc<LiveIndex>,
    backend: Box<dyn Backend>,
    method: Method,
    /// The segments resident on the device, by number.
    resident: Mutex<HashMap<u64, Arc<Searcher>>>,
    /// Host milliseconds since the last [`KindIndex::take_search_stages`]: snapshot, masks,
    /// segment searches, merge.
    stages: Mutex<[f64; 4]>,
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
                stages: Mutex::new([0.0; 4]),
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
        Ok(Box::new(self.live.codec().query(raw, options)?))
    }

    fn check_filter(&self, filter: &crate::kind::Filter) -> Result<(), DataError> {
        match filter.condition() {
            None => Ok(()),
            Some(c) => self.live.codec().clauses(c).map(|_| ()),
        }
    }

    fn items(&self, query: &(dyn Any + Send + Sync)) -> usize {
        match query.downcast_ref::<LiveQuery>() {
            Some(q) => q.query.items.len(),
            None => query.downcast_ref::<Query>().map_or(0, |q| q.items.len()),
        }
    }

    fn search(&self, batch: &[Request<'_>]) -> Result<Vec<Answer>, DataError> {
        let t = std::time::Instant::now();
        let snapshot = self.live.snapshot()?;
        let searchers = self.searchers(&snapshot)?;
        let mut times = [t.elapsed().as_secs_f64() * 1e3, 0.0, 0.0, 0.0];
        let codec = self.live.codec();
        let answers = by_filter(batch, |part, filter| {
            // parsed by this index, or core queries built by the caller (counted alone)
            let live_queries: Vec<Option<&LiveQuery>> = part
                .iter()
                .map(|r| r.query.downcast_ref::<LiveQuery>())
                .collect();
            let queries = part
                .iter()
                .zip(&live_queries)
                .map(|(r, l)| match l {
                    Some(l) => Ok(&l.query),
                    None => prepared::<Query>(r.query),
                })
                .collect::<Result<Vec<&Query>, _>>()?;
            let reranking = |i: usize| live_queries[i].filter(|q| q.rerank.is_some());
            // a query that re-ranks counts its candidates in each segment, then re-ranks them
            let reranks = (0..part.len()).any(|i| reranking(i).is_some());
            let counted: Vec<Request<'_>> = part
                .iter()
                .enumerate()
                .map(|(i, r)| match reranking(i) {
                    Some(q) => Request {
                        k: codec.candidates(q, r.k).max(r.k),
                        min_count: None,
                        ..*r
                    },
                    None => *r,
                })
                .collect();
            // per segment, per request: hits in (count desc, id asc), ids the user's
            // the masks, then every segment searched at once: each resident segment has its own
            // stream on a GPU, so one's host work overlaps another's kernels
            let t = std::time::Instant::now();
            let clauses = filter
                .and_then(|f| f.condition())
                .map(|c| codec.clauses(c))
                .transpose()?;
            let masks = snapshot
                .segments
                .par_iter()
                .map(|view| match filter {
                    None => Ok(view.live.clone()),
                    Some(f) => {
                        let meeting = clauses
                            .as_ref()
                            .map(|c| condition_mask(&view.segment.index, c))
                            .transpose()?;
                        f.mask(view.segment.id_space(), Some(&view.live), meeting.as_ref())
                    }
                })
                .collect::<Result<Vec<_>, DataError>>()?;
            times[1] += t.elapsed().as_secs_f64() * 1e3;
            let t = std::time::Instant::now();
            // a thread per segment, not rayon's workers: a segment's search holds its resident
            // index's lock while its own parallel work runs, which a worker must not (it could
            // take up another search of the same segment, waiting on that lock)
            let per_segment: Vec<Vec<Answer>> = std::thread::scope(|s| {
                let running: Vec<_> = snapshot
                    .segments
                    .iter()
                    .zip(&searchers)
                    .zip(masks)
                    .filter(|(_, mask)| mask.count() > 0)
                    .map(|((view, searcher), mask)| {
                        let (queries, counted, live_queries) = (&queries, &counted, &live_queries);
                        s.spawn(move || -> Result<Vec<Answer>, DataError> {
                            let mask = (!mask.is_all()).then_some(mask);
                            let mut answers =
                                search_counts(searcher, queries, counted, self.method, mask)?;
                            if reranks {
                                rerank(
                                    codec.as_ref(),
                                    &view.segment,
                                    live_queries,
                                    part,
                                    &mut answers,
                                )?;
                                return Ok(answers);
                            }
                            if let SegmentIds::Listed(ids) = &view.segment.ids {
                                answers.par_iter_mut().for_each(|a| {
                                    for h in &mut a.hits {
                                        h.id = ids[h.id as usize];
                                    }
                                });
                            }
                            Ok(answers)
                        })
                    })
                    .collect();
                running
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(DataError::Unsupported("a segment's search panicked".into()))
                        })
                    })
                    .collect::<Result<Vec<_>, DataError>>()
            })?;
            times[2] += t.elapsed().as_secs_f64() * 1e3;
            let t = std::time::Instant::now();
            let merged = (0..part.len())
                .into_par_iter()
                .map(|i| {
                    let lists = per_segment.iter().map(|a| &a[i].hits[..]);
                    let hits = match reranking(i) {
                        Some(_) => merge_by_distance(lists, part[i].k),
                        None => merge_hits(lists, part[i].k),
                    };
                    Answer {
                        hits,
                        ..Answer::default()
                    }
                })
                .collect();
            times[3] += t.elapsed().as_secs_f64() * 1e3;
            Ok(merged)
        });
        let mut stages = self.stages.lock().unwrap_or_else(|e| e.into_inner());
        for (sum, t) in stages.iter_mut().zip(times) {
            *sum += t;
        }
        answers
    }

    fn take_search_stages(&self) -> Vec<(&'static str, f64)> {
        let mut stages = self.stages.lock().unwrap_or_else(|e| e.into_inner());
        let taken = std::mem::take(&mut *stages);
        ["snapshot", "masks", "segments", "merge"]
            .into_iter()
            .zip(taken)
            .collect()
    }

    fn take_stage_times(&self) -> Option<StageTimes> {
        let resident = self.resident.lock().unwrap_or_else(|e| e.into_inner());
        let mut all: Option<StageTimes> = None;
        for t in resident.values().filter_map(|s| s.take_stage_times()) {
            let sum = all.get_or_insert_with(StageTimes::default);
            sum.transfer_in_ms += t.transfer_in_ms;
            sum.match_ms += t.match_ms;
            sum.select_ms += t.select_ms;
            sum.transfer_out_ms += t.transfer_out_ms;
            sum.batches += t.batches;
            sum.reruns += t.reruns;
            sum.peak_batch_bytes = sum.peak_batch_bytes.max(t.peak_batch_bytes);
            sum.host_plan_ms += t.host_plan_ms;
            sum.host_launch_ms += t.host_launch_ms;
            sum.host_finish_ms += t.host_finish_ms;
        }
        all
    }

    fn gpu_ordinal(&self) -> Option<usize> {
        self.backend.gpu_ordinal()
    }

    fn writes(&self) -> Option<Arc<dyn crate::kind::Writes>> {
        Some(Arc::clone(&self.live) as Arc<dyn crate::kind::Writes>)
    }
}

/// Re-ranks the counted candidates of a segment's answers (object numbers) for the queries that
/// re-rank, in place: hits with the user's ids and distances, the best `k` of each.
fn rerank(
    codec: &dyn LiveObjects,
    segment: &Segment,
    queries: &[Option<&LiveQuery>],
    part: &[Request<'_>],
    answers: &mut [Answer],
) -> Result<(), DataError> {
    answers
        .par_iter_mut()
        .zip(queries.par_iter().zip(part))
        .try_for_each(|(a, (q, r))| -> Result<(), DataError> {
            let Some(q) = q.filter(|q| q.rerank.is_some()) else {
                for h in &mut a.hits {
                    h.id = segment.id(h.id as u32);
                }
                return Ok(());
            };
            let candidates: Vec<Candidate<'_>> = a
                .hits
                .iter()
                .map(|h| {
                    let local = h.id as u32;
                    let stored = segment.stored(local).ok_or_else(|| {
                        DataError::Unsupported(format!(
                            "segment {} keeps no objects to re-rank",
                            segment.number
                        ))
                    })?;
                    Ok((segment.id(local), h.count, stored))
                })
                .collect::<Result<_, DataError>>()?;
            a.hits = codec.rerank(q, r.k, &candidates)?;
            Ok(())
        })
}

/// The first `k` hits of lists each in (distance asc, id asc) order, merged in that order.
fn merge_by_distance<'a>(lists: impl Iterator<Item = &'a [AnswerHit]>, k: u32) -> Vec<AnswerHit> {
    let mut all: Vec<AnswerHit> = lists.flatten().copied().collect();
    let key = |h: &AnswerHit| h.distance.unwrap_or(f64::INFINITY);
    all.sort_by(|a, b| key(a).total_cmp(&key(b)).then(a.id.cmp(&b.id)));
    all.truncate(k as usize);
    all
}

/// The first `k` hits of lists each in (count desc, id asc) order, merged in that order (a
/// k-way merge: the lists come from segments, whose objects are distinct).
fn merge_hits<'a>(lists: impl Iterator<Item = &'a [AnswerHit]>, k: u32) -> Vec<AnswerHit> {
    let mut lists: Vec<&[AnswerHit]> = lists.filter(|l| !l.is_empty()).collect();
    let mut out = Vec::with_capacity((k as usize).min(lists.iter().map(|l| l.len()).sum()));
    while out.len() < k as usize {
        let best = lists
            .iter()
            .enumerate()
            .filter_map(|(i, l)| l.first().map(|h| (i, h)))
            .min_by(|(_, a), (_, b)| b.count.cmp(&a.count).then(a.id.cmp(&b.id)));
        let Some((i, h)) = best else { break };
        out.push(*h);
        lists[i] = &lists[i][1..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(id: u64, count: u32) -> AnswerHit {
        AnswerHit {
            id,
            count,
            distance: None,
        }
    }

    #[test]
    fn merged_hits_keep_the_contract_order() {
        let a = [hit(5, 9), hit(1, 3), hit(8, 3)];
        let b = [hit(2, 9), hit(4, 3)];
        let got = merge_hits([&a[..], &b[..], &[][..]].into_iter(), 4);
        assert_eq!(got, [hit(2, 9), hit(5, 9), hit(1, 3), hit(4, 3)]);
        assert_eq!(merge_hits([&a[..]].into_iter(), 10).len(), 3);
    }
}
