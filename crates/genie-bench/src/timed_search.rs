//! One timed search of a batch of queries on an engine, with the engine's stage breakdown: the
//! row that `genie-bench`'s `table`, `scale` and `suite` modes report.

use crate::workloads::postings_of;
use anyhow::Result;
use genie_core::{Engine, Hit, Method, Query, SearchParams};
use std::time::Instant;

/// One timed search of a batch.
pub struct Row {
    /// The backend's name, as the caller gave it.
    pub backend: String,
    /// The method: `c-PQ`, `c-PQ global` (the GPU c-PQ without tiles) or `count-table`.
    pub method: &'static str,
    /// Queries in the batch.
    pub queries: usize,
    /// Batches run, reruns included (at least as many as planned).
    pub batches: u64,
    /// Wall time of the search (s).
    pub wall_s: f64,
    /// Transfers to and from the device (ms).
    pub transfer_ms: f64,
    /// The match stage (ms).
    pub match_ms: f64,
    /// The select stage (ms).
    pub select_ms: f64,
    /// Postings of the queries' lists.
    pub postings: u64,
    /// Planned batch memory per query (MB).
    pub mb_per_query: f64,
    /// Host: preparing the queries (timed apart; ms).
    pub prepare_ms: f64,
    /// Host: planning the batches (keyword lists, metadata; ms).
    pub host_plan_ms: f64,
    /// Host: waiting for and unpacking the batches' results (ms).
    pub host_finish_ms: f64,
    /// Host: launching the batches (ms).
    pub host_launch_ms: f64,
    /// Queries rerun after a full hash table or a lost race.
    pub reruns: u64,
}

/// Times `qs` on `engine` with the top-`k` search by `method`; see [`timed_with`].
pub fn timed(
    engine: &Engine,
    qs: &[Query],
    k: u32,
    method: Method,
    name: &str,
) -> Result<(Row, Vec<Vec<Hit>>)> {
    timed_with(engine, qs, SearchParams::top_k(k).with_method(method), name)
}

/// Times `qs` on `engine` with `params`: the queries prepared twice (the second time timed), one
/// untimed search (the timed one finds its buffers allocated, as in a server's steady state), then
/// one timed search with the engine's stage times. Returns the row, named `name`, and the hits.
pub fn timed_with(
    engine: &Engine,
    qs: &[Query],
    params: SearchParams,
    name: &str,
) -> Result<(Row, Vec<Vec<Hit>>)> {
    let method = params.method;
    let prepared = engine.index().prepare_all(qs)?;
    // prepared again: the first call may also pay one-time work of the index
    let t = Instant::now();
    engine.index().prepare_all(qs)?;
    let prepare_ms = t.elapsed().as_secs_f64() * 1e3;
    let per_query = engine
        .plan_batches(&prepared, &params)
        .iter()
        .map(|b| engine.batch_bytes(&prepared[b.clone()], &params) as f64)
        .sum::<f64>()
        / qs.len().max(1) as f64;
    // an untimed run of the same batch first: the timed one finds its buffers allocated (the
    // steady state of a server; the first batch ever also pays the allocations)
    engine.search(qs, &params)?;
    let _ = engine.take_stage_times();
    let t = Instant::now();
    let hits = engine.search(qs, &params)?;
    let wall_s = t.elapsed().as_secs_f64();
    let st = engine.take_stage_times().unwrap_or_default();
    let row = Row {
        backend: name.into(),
        method: match (method, params.gpu_tiles) {
            (Method::Cpq, true) => "c-PQ",
            (Method::Cpq, false) => "c-PQ global",
            _ => "count-table",
        },
        queries: qs.len(),
        batches: st
            .batches
            .max(engine.plan_batches(&prepared, &params).len() as u64),
        wall_s,
        transfer_ms: st.transfer_in_ms + st.transfer_out_ms,
        match_ms: st.match_ms,
        select_ms: st.select_ms,
        postings: postings_of(engine.index(), qs),
        mb_per_query: per_query / 1e6,
        prepare_ms,
        host_plan_ms: st.host_plan_ms,
        host_finish_ms: st.host_finish_ms,
        host_launch_ms: st.host_launch_ms,
        reruns: st.reruns,
    };
    Ok((row, hits))
}
