//! The engine: prepares queries against an index, plans batches that fit the backend's memory
//! budget (bitmap + hash table + Gate + work list per query), runs them and returns per-query
//! top-k in input order. Any number of queries is searched in bounded memory.

use crate::backend::{select_backend, Backend, DeviceChoice, Method, ResidentIndex, SearchParams};
use crate::cpq::{bits_for_bound, table_slots, words_for};
use crate::error::Result;
use crate::index::{InvertedIndex, PreparedQuery};
use crate::model::{Hit, Query};
use std::borrow::Borrow;
use std::sync::Arc;

/// An index made ready on a backend, searched through `&self`.
///
/// ```
/// use genie_core::{Engine, IndexBuilder, Query, SearchParams, CpuBackend};
/// use std::sync::Arc;
/// let mut b = IndexBuilder::new();
/// for obj in [[1u32, 4, 7], [2, 4, 8], [1, 4, 8]] {
///     b.push_object(&obj).unwrap();
/// }
/// let engine = Engine::with_backend(Arc::new(b.build().unwrap()), &CpuBackend::new()).unwrap();
/// let hits = engine.search(&[Query::from_keywords(&[1, 4, 8])], &SearchParams::top_k(1)).unwrap();
/// assert_eq!((hits[0][0].id, hits[0][0].count), (2, 3));
/// ```
pub struct Engine {
    resident: Box<dyn ResidentIndex>,
    backend_name: String,
    budget: u64,
    gpu_ordinal: Option<usize>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("backend", &self.backend_name)
            .field("budget", &self.budget)
            .finish()
    }
}

impl Engine {
    /// An engine on the backend chosen by `device`.
    pub fn new(index: Arc<InvertedIndex>, device: DeviceChoice) -> Result<Self> {
        let backend = select_backend(device)?;
        Self::with_backend(index, backend.as_ref())
    }

    /// An engine on a given backend.
    pub fn with_backend(index: Arc<InvertedIndex>, backend: &dyn Backend) -> Result<Self> {
        // upload first: a GPU's budget is a share of the memory left beside the index
        let resident = backend.upload(index)?;
        Ok(Self {
            resident,
            backend_name: backend.name(),
            budget: backend.memory_budget(),
            gpu_ordinal: backend.gpu_ordinal(),
        })
    }

    /// Overrides the batch memory budget (bytes).
    pub fn with_budget(mut self, bytes: u64) -> Self {
        self.budget = bytes.max(1);
        self
    }

    /// The GPU the engine searches on (`None` on the CPU).
    pub fn gpu_ordinal(&self) -> Option<usize> {
        self.gpu_ordinal
    }

    /// The backend's name.
    pub fn backend_name(&self) -> &str {
        &self.backend_name
    }

    /// Device time per stage since the last call (GPU backends; `None` on the CPU).
    pub fn take_stage_times(&self) -> Option<crate::backend::StageTimes> {
        self.resident.take_stage_times()
    }

    /// The index, shared.
    pub fn shared_index(&self) -> Arc<InvertedIndex> {
        self.resident.shared_index()
    }

    /// The index.
    pub fn index(&self) -> &InvertedIndex {
        self.resident.index()
    }

    /// Working bytes one query needs during a batch (its counters at its own width).
    pub fn bytes_per_query(&self, q: &PreparedQuery, params: &SearchParams) -> u64 {
        let (bits, rest) = self.query_parts(q, params);
        self.counter_bytes(bits, params) + rest
    }

    /// Working bytes of a batch: every query's counters take the widest of the batch (the GPU's
    /// tiled kernel lays a batch out at one width), plus each query's tables and work lists.
    pub fn batch_bytes(&self, batch: &[PreparedQuery], params: &SearchParams) -> u64 {
        let (bits, rest) = batch.iter().fold((0, 0), |(b, r), q| {
            let (qb, qr) = self.query_parts(q, params);
            (b.max(qb), r + qr)
        });
        rest + batch.len() as u64 * self.counter_bytes(bits, params)
    }

    /// A query's counter width and its bytes besides the counters.
    fn query_parts(&self, q: &PreparedQuery, params: &SearchParams) -> (u32, u64) {
        let n = self.index().num_objects();
        let tasks: u64 = q
            .items
            .iter()
            .filter_map(|it| self.index().slice_of(it.lo, it.hi))
            .map(|(a, b)| {
                (b - a)
                    .div_ceil(u64::from(params.sublist_len.max(1)))
                    .max(1)
            })
            .sum();
        let (bits, tables) = match params.method {
            // at least 8 bits: the GPU's tiled kernel lays counters out as bytes (or 16 bits)
            Method::Cpq => (
                bits_for_bound(q.bound).max(8),
                table_slots(params.k, q.bound, n, params.table_factor) as u64 * 8
                    + (u64::from(q.bound) + 2) * 4,
            ),
            Method::CountTable => (32, 0),
        };
        (
            bits,
            tables + tasks * 24 + u64::from(params.k.next_power_of_two()) * 8,
        )
    }

    /// Bytes of one query's counters at `bits` per object.
    fn counter_bytes(&self, bits: u32, params: &SearchParams) -> u64 {
        let n = self.index().num_objects();
        match params.method {
            Method::Cpq => words_for(n, bits) as u64 * 4,
            Method::CountTable => u64::from(n) * 4,
        }
    }

    /// Splits prepared queries into consecutive batches within the budget (at least one query
    /// each), costed as [`Engine::batch_bytes`] does.
    pub fn plan_batches(
        &self,
        prepared: &[PreparedQuery],
        params: &SearchParams,
    ) -> Vec<std::ops::Range<usize>> {
        use rayon::prelude::*;
        let parts: Vec<(u32, u64)> = prepared
            .par_iter()
            .map(|q| self.query_parts(q, params))
            .collect();
        let mut batches = Vec::new();
        let (mut start, mut rest, mut bits) = (0, 0u64, 0u32);
        for (i, &(qb, qr)) in parts.iter().enumerate() {
            let wide = bits.max(qb);
            let cost = rest + qr + (i - start + 1) as u64 * self.counter_bytes(wide, params);
            if i > start && cost > self.budget {
                batches.push(start..i);
                start = i;
                rest = 0;
                bits = 0;
            }
            rest += qr;
            bits = bits.max(qb);
        }
        if start < prepared.len() {
            batches.push(start..prepared.len());
        }
        batches
    }

    /// Per query, the top-k hits in the contract order (count desc, id asc), among the objects
    /// of `params.mask` when it is set (a mask of another length than the index's object count
    /// is an error). The queries are owned or borrowed (`&[Query]` or `&[&Query]`: a caller
    /// holding references copies nothing).
    pub fn search<Q: Borrow<Query> + Sync>(
        &self,
        queries: &[Q],
        params: &SearchParams,
    ) -> Result<Vec<Vec<Hit>>> {
        self.search_with_progress(queries, params, &mut |_| {})
    }

    /// As [`Engine::search`], calling `progress(queries_done)` after each batch.
    pub fn search_with_progress<Q: Borrow<Query> + Sync>(
        &self,
        queries: &[Q],
        params: &SearchParams,
        progress: &mut dyn FnMut(usize),
    ) -> Result<Vec<Vec<Hit>>> {
        // no more hits than objects (than allowed objects, with a mask): a larger k would only
        // size the tables larger
        let objects = self.index().num_objects();
        let most = params.mask_for(objects)?.map_or(objects, |m| m.count());
        let clamped;
        let params = if params.k > most {
            clamped = SearchParams {
                k: most,
                ..params.clone()
            };
            &clamped
        } else {
            params
        };
        let prepared = self.index().prepare_all(queries)?;
        let batches = self.plan_batches(&prepared, params);
        self.resident
            .search_planned(&prepared, &batches, params, progress)
    }
}
