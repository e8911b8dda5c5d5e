//! Kinds whose answers are plain count hits (keywords, documents, table rows): they differ only in
//! how a raw query becomes a core query ([`CountParser`]); the opened index and its search are
//! one ([`CountIndex`]).

use super::{
    condition_mask, no_conditions, prepared, Answer, Clause, Filter, IdSpace, KindIndex, Options,
    Prepared, Request,
};
use crate::data_error::DataError;
use crate::searcher::Searcher;
use genie_core::{Method, ObjectMask, Query, SearchParams, StageTimes};
use rayon::prelude::*;
use serde_json::Value;
use std::any::Any;

/// How a kind whose answers are plain count hits turns raw queries into core queries: all such a
/// kind needs besides its [`Kind`] (the keyword, document and table kinds are three of them).
pub trait CountParser: Send + Sync {
    /// The kind's name.
    fn kind(&self) -> &str;
    /// The core query of a raw query under the kind's search options.
    fn parse(&self, raw: &Value, options: &Options) -> Result<Query, DataError>;
    /// [`CountParser::parse`] of a text line, without the JSON string where the kind reads
    /// the line itself.
    fn parse_line(&self, line: &str, options: &Options) -> Result<Query, DataError> {
        self.parse(&Value::String(line.to_owned()), options)
    }
    /// The clauses of a filter's condition on columns (table rows); by default the kind has
    /// no columns.
    fn clauses(&self, condition: &str) -> Result<Vec<Clause>, DataError> {
        let _ = condition;
        Err(no_conditions(self.kind()))
    }
}

/// An opened index of a kind whose answers are count hits: a [`CountParser`] and the search.
pub struct CountIndex<P> {
    parser: P,
    searcher: Searcher,
    method: Method,
}

impl<P: CountParser> CountIndex<P> {
    /// The index searched by `searcher`, its queries parsed by `parser`.
    pub fn new(parser: P, searcher: Searcher, method: Method) -> Self {
        Self {
            parser,
            searcher,
            method,
        }
    }
}

impl<P: CountParser> KindIndex for CountIndex<P> {
    fn kind(&self) -> &str {
        self.parser.kind()
    }

    fn num_objects(&self) -> u64 {
        self.searcher.num_objects()
    }

    fn backend_name(&self) -> String {
        self.searcher.backend_name()
    }

    fn parse(&self, raw: &Value, options: &Options) -> Result<Prepared, DataError> {
        Ok(Box::new(self.parser.parse(raw, options)?))
    }

    fn parse_line(&self, line: &str, options: &Options) -> Result<Prepared, DataError> {
        Ok(Box::new(self.parser.parse_line(line, options)?))
    }

    fn check_filter(&self, filter: &Filter) -> Result<(), DataError> {
        match filter.condition() {
            None => Ok(()),
            Some(c) => self.parser.clauses(c).map(|_| ()),
        }
    }

    fn items(&self, query: &(dyn Any + Send + Sync)) -> usize {
        query.downcast_ref::<Query>().map_or(0, |q| q.items.len())
    }

    fn search(&self, batch: &[Request<'_>]) -> Result<Vec<Answer>, DataError> {
        let n = u32::try_from(self.searcher.num_objects())
            .map_err(|_| DataError::Unsupported("more than 2^32 objects".into()))?;
        by_filter(batch, |part, filter| {
            let queries = core_queries(part)?;
            let mask = filter
                .map(|f| -> Result<_, DataError> {
                    let meeting = match f.condition() {
                        None => None,
                        Some(c) => {
                            let clauses = self.parser.clauses(c)?;
                            let Searcher::Single(engine) = &self.searcher else {
                                return Err(DataError::Unsupported(
                                    "a filter's condition on an index searched in parts".into(),
                                ));
                            };
                            Some(condition_mask(engine.index(), &clauses)?)
                        }
                    };
                    f.mask(IdSpace::Rows(n), None, meeting.as_ref())
                })
                .transpose()?;
            search_counts(&self.searcher, &queries, part, self.method, mask)
        })
    }

    fn has_columns(&self) -> bool {
        true
    }

    fn search_columns(
        &self,
        batch: &[Request<'_>],
        k: usize,
        counts: &mut [u32],
        ids: &mut [i64],
    ) -> Result<bool, DataError> {
        if batch
            .iter()
            .any(|r| r.min_count.is_some() || r.filter.is_some() || r.k as usize > k)
            || counts.len() != batch.len() * k
            || ids.len() != batch.len() * k
        {
            return Ok(false);
        }
        let queries = core_queries(batch)?;
        let k_run = batch.iter().map(|r| r.k).max().unwrap_or(0);
        let hits = self.searcher.search(
            &queries,
            &SearchParams::top_k(k_run).with_method(self.method),
        )?;
        if k == 0 {
            return Ok(true);
        }
        counts
            .par_chunks_mut(k)
            .zip(ids.par_chunks_mut(k))
            .zip(hits.par_iter().zip(batch))
            .for_each(|((c, i), (h, r))| {
                for (j, hit) in h.iter().take(r.k as usize).enumerate() {
                    c[j] = hit.count;
                    i[j] = i64::from(hit.id);
                }
            });
        Ok(true)
    }

    fn take_stage_times(&self) -> Option<StageTimes> {
        self.searcher.take_stage_times()
    }

    fn gpu_ordinal(&self) -> Option<usize> {
        self.searcher.gpu_ordinal()
    }
}

/// The core queries behind a batch's requests.
pub fn core_queries<'a>(batch: &'a [Request<'_>]) -> Result<Vec<&'a Query>, DataError> {
    batch.iter().map(|r| prepared::<Query>(r.query)).collect()
}

/// Answers a batch whose requests may carry filters: `search` runs once per distinct filter (by
/// address: the requests of one body share theirs) on the requests that carry it, and the
/// answers come back in the batch's order.
pub fn by_filter(
    batch: &[Request<'_>],
    mut search: impl FnMut(&[Request<'_>], Option<&Filter>) -> Result<Vec<Answer>, DataError>,
) -> Result<Vec<Answer>, DataError> {
    if batch.iter().all(|r| r.filter.is_none()) {
        return search(batch, None);
    }
    let mut groups: Vec<(Option<&Filter>, Vec<usize>)> = Vec::new();
    for (i, r) in batch.iter().enumerate() {
        let same = |g: &(Option<&Filter>, Vec<usize>)| match (g.0, r.filter) {
            (None, None) => true,
            (Some(a), Some(b)) => std::ptr::eq(a, b),
            _ => false,
        };
        match groups.iter_mut().find(|g| same(g)) {
            Some(g) => g.1.push(i),
            None => groups.push((r.filter, vec![i])),
        }
    }
    let mut answers = vec![Answer::default(); batch.len()];
    for (filter, members) in groups {
        let part: Vec<Request<'_>> = members.iter().map(|&i| batch[i]).collect();
        for (i, a) in members.into_iter().zip(search(&part, filter)?) {
            answers[i] = a;
        }
    }
    Ok(answers)
}

/// [`by_filter`] for an index file of `rows` objects (an object's id is its row): each filter
/// handed to `search` as the mask of the objects it allows.
pub fn by_row_mask(
    batch: &[Request<'_>],
    rows: usize,
    mut search: impl FnMut(&[Request<'_>], Option<&ObjectMask>) -> Result<Vec<Answer>, DataError>,
) -> Result<Vec<Answer>, DataError> {
    let n = u32::try_from(rows).unwrap_or(u32::MAX);
    by_filter(batch, |part, filter| {
        let allowed = filter
            .map(|f| f.mask(IdSpace::Rows(n), None, None))
            .transpose()?;
        search(part, allowed.as_ref())
    })
}

/// The search of count hits: one run of the engine at the batch's largest `k`, each request cut
/// to its own (a prefix of the contract order is the smaller top-k). A request with `min_count`
/// and a large `k` starts at [`MIN_COUNT_FIRST_K`] and doubles only while its last hit still
/// reaches `min_count`.
pub fn search_counts(
    searcher: &Searcher,
    queries: &[&Query],
    batch: &[Request<'_>],
    method: Method,
    mask: Option<ObjectMask>,
) -> Result<Vec<Answer>, DataError> {
    let params = |k: u32| SearchParams {
        mask: mask.clone(),
        ..SearchParams::top_k(k).with_method(method)
    };
    let first_k = |r: &Request<'_>| match r.min_count {
        Some(_) => r.k.min(MIN_COUNT_FIRST_K),
        None => r.k,
    };
    let mut k_run = batch.iter().map(first_k).max().unwrap_or(0);
    // read in place (a large batch's items are millions)
    let mut hits = searcher.search(queries, &params(k_run))?;
    loop {
        // requests whose range output may go on past what was fetched
        let more: Vec<usize> = (0..batch.len())
            .filter(|&i| {
                let r = &batch[i];
                match (r.min_count, hits[i].last()) {
                    (Some(t), Some(last)) => {
                        hits[i].len() as u32 == k_run && last.count >= t && r.k > k_run
                    }
                    _ => false,
                }
            })
            .collect();
        if more.is_empty() {
            break;
        }
        let cap = more.iter().map(|&i| batch[i].k).max().unwrap_or(k_run);
        k_run = k_run.saturating_mul(2).min(cap);
        let again: Vec<&Query> = more.iter().map(|&i| queries[i]).collect();
        let found = searcher.search(&again, &params(k_run))?;
        for (i, h) in more.into_iter().zip(found) {
            hits[i] = h;
        }
    }
    Ok(batch
        .par_iter()
        .zip(hits)
        .map(|(r, mut h)| {
            h.truncate(r.k as usize);
            let mut a = Answer::of_hits(&h);
            a.keep_min_count(r.min_count);
            a
        })
        .collect())
}

/// The `k` a `min_count` request is first searched with (then doubled while needed).
pub const MIN_COUNT_FIRST_K: u32 = 256;
