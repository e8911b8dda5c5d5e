//! A server's batches of codebook searches: each query with its own `k` and candidates
//! ([`CodebookIndex::search_each`]), and the same of rows held apart
//! ([`CodebookIndex::search_rows`]), which a GPU that scans takes as they lie.

use super::{ms_since, CodebookIndex, Counting, LshError, Plan, Result, SearchStages};
use crate::gpu::{GpuVectors, Queries, ScanJob};
use crate::{Probe, VectorSet};
use genie_core::VerifiedHit;
use rayon::prelude::*;
use std::time::Instant;

impl CodebookIndex {
    /// As [`CodebookIndex::search`] with each query's own `k` and candidates (a server's batch):
    /// each query's candidates are its own top by count, as if searched alone.
    pub fn search_each(
        &self,
        queries: &VectorSet,
        ks: &[usize],
        candidates: &[usize],
        probe: &Probe,
        counting: Counting,
    ) -> Result<Vec<Vec<VerifiedHit>>> {
        let gpu = self.scanning_gpu(probe.levels);
        let (Counting::Scan, Some(gpu)) = (counting, gpu) else {
            let t = Instant::now();
            let plan = self.codebook.plan(queries, probe)?;
            let hash_ms = ms_since(t);
            return self.reranker.search_each(
                queries,
                ks,
                candidates,
                &self.stages,
                |most, stages| {
                    stages.hash_ms += hash_ms;
                    self.counts_of(queries, &plan, most, counting, stages)
                },
            );
        };
        if ks.len() != queries.len() || candidates.len() != queries.len() {
            return Err(LshError::InvalidParameter(
                "one k and one number of candidates per query".into(),
            ));
        }
        let mut stages = SearchStages {
            queries: queries.len() as u64,
            ..SearchStages::default()
        };
        let on_device = gpu.has_codebook();
        let plan = if on_device {
            // the device needs the shape only
            self.codebook.plan_shape(probe)?
        } else {
            let t = Instant::now();
            let plan = self.codebook.plan(queries, probe)?;
            stages.hash_ms += ms_since(t);
            plan
        };
        if queries.dim() != self.dim() {
            return Err(LshError::Dimension {
                expected: self.dim(),
                found: queries.dim(),
            });
        }
        // one device pass per number of candidates wanted (usually one for the whole batch)
        let wanted: Vec<usize> = (0..ks.len()).map(|i| candidates[i].max(ks[i])).collect();
        let mut groups: Vec<usize> = wanted.clone();
        groups.sort_unstable();
        groups.dedup();
        let mut out = vec![Vec::new(); queries.len()];
        for c in groups {
            let rows: Vec<usize> = (0..ks.len()).filter(|&i| wanted[i] == c).collect();
            if rows.len() == queries.len() {
                // the whole batch (the usual case), its hits in place
                let whole = Queries::Flat(queries.as_slice());
                out = self.scan_pass(gpu, whole, &plan, on_device, ks, c, &mut stages)?;
                continue;
            }
            let sub_q = queries.select(&rows)?;
            let sub_p = if on_device {
                plan.clone()
            } else {
                plan.select(&rows)
            };
            let sub_ks: Vec<usize> = rows.iter().map(|&i| ks[i]).collect();
            let part = Queries::Flat(sub_q.as_slice());
            let hits = self.scan_pass(gpu, part, &sub_p, on_device, &sub_ks, c, &mut stages)?;
            for (&i, h) in rows.iter().zip(hits) {
                out[i] = h;
            }
        }
        self.stages.record(&stages);
        Ok(out)
    }

    /// [`CodebookIndex::search_each`] of `rows`, each a query vector as the index searches it.
    /// Where a GPU scans and plans the whole batch in one pass, the rows go to the device as
    /// they lie (no gathered copy on the host); otherwise they are gathered first.
    pub fn search_rows(
        &self,
        rows: &[&[f32]],
        ks: &[usize],
        candidates: &[usize],
        probe: &Probe,
        counting: Counting,
    ) -> Result<Vec<Vec<VerifiedHit>>> {
        let wanted = |i: usize| candidates.get(i).map(|&c| c.max(ks[i]));
        let gpu = self
            .scanning_gpu(probe.levels)
            .filter(|g| g.has_codebook() && counting == Counting::Scan);
        let one_pass = ks.len() == rows.len()
            && candidates.len() == rows.len()
            && !rows.is_empty()
            && (1..rows.len()).all(|i| wanted(i) == wanted(0))
            && rows.iter().all(|r| r.len() == self.dim());
        let (Some(gpu), true) = (gpu, one_pass) else {
            let set = VectorSet::gather(self.dim(), rows.len(), |i| rows[i])?;
            return self.search_each(&set, ks, candidates, probe, counting);
        };
        let plan = self.codebook.plan_shape(probe)?;
        let c = wanted(0).unwrap_or(0);
        let mut stages = SearchStages {
            queries: rows.len() as u64,
            ..SearchStages::default()
        };
        let out = self.scan_pass(gpu, Queries::Rows(rows), &plan, true, ks, c, &mut stages)?;
        self.stages.record(&stages);
        Ok(out)
    }

    /// One device pass over `queries`, each with `c` candidates re-ranked and its hits cut to
    /// its own `k` (`ks`, one a query); its times added to `stages`.
    #[allow(clippy::too_many_arguments)]
    fn scan_pass(
        &self,
        gpu: &GpuVectors,
        queries: Queries<'_>,
        plan: &Plan,
        on_device: bool,
        ks: &[usize],
        c: usize,
        stages: &mut SearchStages,
    ) -> Result<Vec<Vec<VerifiedHit>>> {
        let job = ScanJob {
            plan_on_device: on_device,
            ..self.job(queries, plan, c)
        };
        let k = ks.iter().copied().max().unwrap_or(0);
        let (mut out, times) = gpu.scan_top_k(&job, k, self.reranker.device_metric())?;
        stages.hash_ms += times.plan_ms;
        stages.upload_ms += times.upload_ms;
        stages.count_ms += times.scan_ms;
        stages.rerank_ms += times.rerank_ms;
        out.par_iter_mut()
            .zip(ks.par_iter())
            .with_min_len(256)
            .for_each(|(h, &k)| h.truncate(k));
        Ok(out)
    }

    /// Runs one search of a default batch ([`crate::gpu::PREPARED_BATCH`] queries of zeros, at
    /// the index's own probe) on the GPU and forgets it, with the device's memory pool keeping
    /// what it frees: a first batch of that size then finds its buffers mapped and its kernels
    /// loaded. On an H200 the CLI's search of 10,000 queries took 13.3-14.3 ms against 15.2-16.2
    /// (Fashion-MNIST) and 9.3-10.4 against 10.8-12.9 (1 M x 96 clusters). Nothing to do where
    /// no GPU scans.
    pub fn warm_up(&self) -> Result<()> {
        let Some(gpu) = self.scanning_gpu(self.probe().levels) else {
            return Ok(());
        };
        let t = Instant::now();
        gpu.keep_freed_memory()?;
        let n = crate::gpu::PREPARED_BATCH;
        let zero = vec![0.0f32; self.dim()];
        let rows = vec![&zero[..]; n];
        let probe = self.probe();
        let (ks, cands) = (vec![10; n], vec![probe.candidates as usize; n]);
        self.search_rows(&rows, &ks, &cands, &probe, Counting::Scan)?;
        self.take_stages();
        log::debug!(
            "codebook: the GPU warmed up with {n} queries in {:.1} ms",
            ms_since(t)
        );
        Ok(())
    }
}
