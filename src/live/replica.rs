//! A live index placed on one device: the [`KindIndex`] the service, the server, the CLI and
//! Python search through. Each segment of a snapshot is made resident on the device the first
//! time a search sees it (and let go when no snapshot holds it); a search runs every segment with
//! its live mask and the request's filter applied on the device, and merges the answers.

use super::{LiveIndex, Segment, SegmentView, Snapshot};
use crate::data_error::DataError;
use crate::kind::{
    by_filter, condition_mask, prepared, search_counts, sort_by_distance, Answer, AnswerHit,
    Candidate, KindIndex, LiveObjects, LiveQuery, Options, Prepared, Request,
};
use crate::open::OpenSpec;
use crate::searcher::Searcher;
use genie_core::{select_backends, Backend, Engine, Method, ObjectMask, Query, StageTimes};
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
            let searched: Vec<(&SegmentView, &Arc<Searcher>, Option<ObjectMask>)> = snapshot
                .segments
                .iter()
                .zip(&searchers)
                .zip(masks)
                .filter(|(_, mask)| mask.count() > 0)
                .map(|((view, searcher), mask)| (view, searcher, (!mask.is_all()).then_some(mask)))
                .collect();
            // rounds: every segment counts every query; then, for queries that re-rank and
            // prove their answers, the segments whose candidates leave the merged answer
            // unproven count theirs again with twice as many
            let n = part.len();
            let mut ks: Vec<Vec<u32>> = vec![counted.iter().map(|r| r.k).collect(); searched.len()];
            let mut todo: Vec<Vec<usize>> = vec![(0..n).collect(); searched.len()];
            let mut results: Vec<Vec<Counted>> = vec![vec![Counted::default(); n]; searched.len()];
            let mut merged: Vec<Answer>;
            loop {
                let round: Vec<Vec<(usize, Counted)>> = std::thread::scope(|s| {
                    // a thread per segment, not rayon's workers: a segment's search holds its
                    // resident index's lock while its own parallel work runs, which a worker
                    // must not (it could take up another search of the same segment, waiting
                    // on that lock)
                    let running: Vec<_> = searched
                        .iter()
                        .zip(&todo)
                        .zip(&ks)
                        .map(|(((view, searcher, mask), todo), ks)| {
                            let (queries, counted, live_queries) =
                                (&queries, &counted, &live_queries);
                            s.spawn(move || {
                                SegmentSearch {
                                    codec: codec.as_ref(),
                                    segment: &view.segment,
                                    searcher,
                                    method: self.method,
                                    mask: mask.clone(),
                                }
                                .run(
                                    todo,
                                    ks,
                                    queries,
                                    counted,
                                    live_queries,
                                    part,
                                )
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
                for (seg, found) in round.into_iter().enumerate() {
                    for (i, c) in found {
                        results[seg][i] = c;
                    }
                }
                merged = (0..n)
                    .into_par_iter()
                    .map(|i| merge(&results, i, &part[i], reranking(i).is_some()))
                    .collect();
                let mut more = false;
                for (seg, todo) in todo.iter_mut().enumerate() {
                    todo.clear();
                    for (i, answer) in merged.iter().enumerate() {
                        let Some(q) = reranking(i) else { continue };
                        let c = &results[seg][i];
                        let Some(outside) = c.outside else { continue };
                        let tau = answer
                            .hits
                            .get(part[i].k as usize - 1)
                            .and_then(|h| h.distance);
                        let certified = tau.is_some_and(|t| codec.proves(q, t, outside));
                        let k = ks[seg][i];
                        let most = codec.max_candidates(q, part[i].k);
                        if !certified && !c.complete && k < most {
                            ks[seg][i] = k.saturating_mul(2).min(most);
                            todo.push(i);
                            more = true;
                        }
                    }
                }
                if !more {
                    break;
                }
            }
            times[2] += t.elapsed().as_secs_f64() * 1e3;
            let t = std::time::Instant::now();
            // proven: every segment's unverified objects are too far from the query
            for (i, answer) in merged.iter_mut().enumerate() {
                let Some(q) = reranking(i) else { continue };
                if results.iter().any(|r| r[i].outside.is_none()) {
                    continue;
                }
                let tau = answer
                    .hits
                    .get(part[i].k as usize - 1)
                    .and_then(|h| h.distance);
                answer.exact = Some(
                    part[i].k == 0
                        || tau.is_some_and(|t| {
                            results
                                .iter()
                                .all(|r| r[i].outside.is_some_and(|o| codec.proves(q, t, o)))
                        }),
                );
                answer.candidates = results.iter().map(|r| r[i].counted).max();
            }
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

/// What one segment found for one query in the last round that counted it.
#[derive(Clone, Debug, Default)]
struct Counted {
    /// Its best hits, the user's ids.
    hits: Vec<AnswerHit>,
    /// For a kind that proves its answers: the largest count an object not verified may have.
    outside: Option<u32>,
    /// Whether the candidates were every object the query counts above zero.
    complete: bool,
    /// The candidates counted.
    counted: u32,
}

/// The answer of query `i` from every segment's: merged in the kind's order, cut to `k`.
fn merge(results: &[Vec<Counted>], i: usize, request: &Request<'_>, reranked: bool) -> Answer {
    let lists = results.iter().map(|r| &r[i].hits[..]);
    let hits = match reranked {
        true => merge_by_distance(lists, request.k),
        false => merge_hits(lists, request.k),
    };
    let mut answer = Answer {
        hits,
        ..Answer::default()
    };
    answer.keep_min_count(request.min_count);
    answer
}

/// One round of one segment: the queries `todo` counted (each at its `ks`) and, for those that
/// re-rank, their candidates re-ranked by the kind.
struct SegmentSearch<'a> {
    codec: &'a dyn LiveObjects,
    segment: &'a Segment,
    searcher: &'a Searcher,
    method: Method,
    mask: Option<ObjectMask>,
}

impl SegmentSearch<'_> {
    fn run(
        &self,
        todo: &[usize],
        ks: &[u32],
        queries: &[&Query],
        counted: &[Request<'_>],
        live: &[Option<&LiveQuery>],
        part: &[Request<'_>],
    ) -> Result<Vec<(usize, Counted)>, DataError> {
        if todo.is_empty() {
            return Ok(Vec::new());
        }
        let qs: Vec<&Query> = todo.iter().map(|&i| queries[i]).collect();
        let reqs: Vec<Request<'_>> = todo
            .iter()
            .map(|&i| Request {
                k: ks[i],
                ..counted[i]
            })
            .collect();
        let answers = search_counts(self.searcher, &qs, &reqs, self.method, self.mask.clone())?;
        todo.par_iter()
            .zip(answers)
            .map(|(&i, a)| Ok((i, self.finish(live[i], &part[i], ks[i], a)?)))
            .collect()
    }

    /// What the segment found for one query from its counted hits (object numbers).
    fn finish(
        &self,
        live: Option<&LiveQuery>,
        request: &Request<'_>,
        counted_k: u32,
        counted: Answer,
    ) -> Result<Counted, DataError> {
        let segment = self.segment;
        let complete = (counted.hits.len() as u32) < counted_k;
        let Some(q) = live.filter(|q| q.rerank.is_some()) else {
            let mut hits = counted.hits;
            for h in &mut hits {
                h.id = segment.id(h.id as u32);
            }
            return Ok(Counted {
                hits,
                outside: None,
                complete,
                counted: counted_k,
            });
        };
        let candidates: Vec<Candidate<'_>> = counted
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
        let r = self.codec.rerank(q, request.k, &candidates)?;
        // an object not verified counts no more than the last candidate (nothing when all were)
        let outside = match complete {
            true => 0,
            false => candidates.last().map_or(0, |c| c.1),
        };
        Ok(Counted {
            hits: r,
            outside: self.codec.proves_answers().then_some(outside),
            complete,
            counted: counted_k,
        })
    }
}

/// The first `k` hits of lists each in (distance asc, count desc, id asc) order, merged in
/// that order.
fn merge_by_distance<'a>(lists: impl Iterator<Item = &'a [AnswerHit]>, k: u32) -> Vec<AnswerHit> {
    let mut all: Vec<AnswerHit> = lists.flatten().copied().collect();
    sort_by_distance(&mut all);
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
