//! The CPU backend (rayon): parallel over queries, and over the sublists of a query whose lists
//! are long. It runs the same c-PQ as the GPU kernels and is the reference for them.

use super::{Backend, Method, ResidentIndex, SearchParams};
use crate::baseline::run_query_count_table;
use crate::cpq::run_query;
use crate::error::Result;
use crate::index::{InvertedIndex, PreparedQuery};
use crate::model::Hit;
use rayon::prelude::*;
use std::sync::Arc;

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
        (0..batch.len())
            .into_par_iter()
            .map(|q| {
                let tasks = wl.of_query(q);
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
