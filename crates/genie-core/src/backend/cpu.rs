//! The CPU backend (rayon): parallel over queries, and over the sublists of a query whose lists
//! are long. It runs the same c-PQ as the GPU kernels and is the reference for them; a query whose
//! postings are many for the objects is counted over tiles of objects instead
//! ([`super::cpu_tiles`]), with the same answers.

use super::cpu_tiles::{tiled_query, TileScratch};
use super::{Backend, Method, ResidentIndex, SearchParams};
use crate::baseline::run_query_count_table;
use crate::cpq::run_query;
use crate::error::Result;
use crate::index::{InvertedIndex, PreparedQuery};
use crate::model::Hit;
use rayon::prelude::*;
use std::sync::Arc;

/// A query with at least `objects / TILED_SHARE` postings is counted over tiles: the tiles
/// then scan their counters for fewer than `TILED_SHARE` objects per posting.
pub const TILED_SHARE: u64 = 16;

/// Default working-memory budget of a CPU batch.
pub const CPU_DEFAULT_BUDGET: u64 = 2 << 30;

/// The CPU backend.
#[derive(Clone, Debug)]
pub struct CpuBackend {
    budget: u64,
}

impl Default for CpuBackend {
    fn default() -> Self {
        Self {
            budget: CPU_DEFAULT_BUDGET,
        }
    }
}

impl CpuBackend {
    /// A CPU backend with the default budget.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the batch memory budget in bytes.
    pub fn with_budget(mut self, bytes: u64) -> Self {
        self.budget = bytes.max(1);
        self
    }
}

impl Backend for CpuBackend {
    fn name(&self) -> String {
        format!("cpu ({} threads)", rayon::current_num_threads())
    }

    fn memory_budget(&self) -> u64 {
        self.budget
    }

    fn upload(&self, index: Arc<InvertedIndex>) -> Result<Box<dyn ResidentIndex>> {
        Ok(Box::new(CpuResident { index }))
    }
}

struct CpuResident {
    index: Arc<InvertedIndex>,
}

impl ResidentIndex for CpuResident {
    fn index(&self) -> &InvertedIndex {
        &self.index
    }

    fn shared_index(&self) -> Arc<InvertedIndex> {
        self.index.clone()
    }

    fn search_batch(
        &self,
        batch: &[PreparedQuery],
        params: &SearchParams,
    ) -> Result<Vec<Vec<Hit>>> {
        let wl = self.index.work_list(batch, params.sublist_len);
        let n = u64::from(self.index.num_objects());
        (0..batch.len())
            .into_par_iter()
            .map_init(TileScratch::default, |scratch, q| {
                let tasks = wl.of_query(q);
                let postings: u64 = tasks.iter().map(|t| u64::from(t.len)).sum();
                if params.cpu_tiles && params.method == Method::Cpq && postings * TILED_SHARE >= n {
                    return Ok(tiled_query(&self.index, &batch[q], params.k, scratch));
                }
                match params.method {
                    Method::Cpq => run_query(
                        &self.index,
                        tasks,
                        params.k,
                        batch[q].bound,
                        params.table_factor,
                    ),
                    Method::CountTable => run_query_count_table(&self.index, tasks, params.k),
                }
            })
            .collect()
    }
}
