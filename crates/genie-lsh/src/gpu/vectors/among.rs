//! A filter's exact search on the GPU: every query against the same candidates, the objects a
//! filter allows, with the distances and the top `k` of each query taken on the device. The
//! candidates go up once and only `k` hits a query come back, where the per-query path would
//! upload every query's copy of them and bring back every distance. Up to [`AMONG_MAX_K`] hits
//! and where a block's tile of rows fits its shared memory ([`AMONG_SHARED_BYTES`]), one launch
//! keeps each query's best as it goes (kernels/vectors.cu `among_top`); else the distances go to
//! device memory (`rerank_distance` or `rerank_compact` with `shared` set) and `rank_top_k`
//! ranks them.

use super::{among_shared_bytes, GpuVectors, Out, Top, AMONG_MAX_K};
use crate::gpu::VectorDistance;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use genie_core::backend::cuda::cuda_err;
use genie_core::{GenieError, Result, VerifiedHit};
use rayon::prelude::*;

/// Shared memory a block of a fused launch may hold (the default limit): with up to 32 hits a
/// query, rows of up to 256 dimensions fit; past it the distances go to device memory and a
/// second kernel ranks them.
const AMONG_SHARED_BYTES: usize = 48 << 10;

/// The most (query, candidate) distances held on the device at once (8 bytes each): queries
/// are taken in chunks of this many pairs.
const PAIRS_AT_ONCE: usize = 1 << 26;

impl GpuVectors {
    /// The `k` nearest of `ids` (the same candidates for every query; each below the number of
    /// vectors) to each query of `queries` (rows of the vectors' dimension), ranked as
    /// `genie_core::rank_verified` ranks them, with counts 0: each query's list equals the
    /// per-query re-rank of the same candidates.
    pub fn top_k_among(
        &self,
        queries: &[f32],
        ids: &[u32],
        k: usize,
        metric: VectorDistance,
    ) -> Result<Vec<Vec<VerifiedHit>>> {
        let dim = self.dim as usize;
        if dim == 0 || queries.len() % dim != 0 {
            return Err(GenieError::InvalidParameter(format!(
                "{} query floats for vectors of dimension {dim}",
                queries.len()
            )));
        }
        let nq = queries.len() / dim;
        let (m, k) = (ids.len(), k.min(ids.len()));
        if m == 0 || k == 0 {
            return Ok(vec![Vec::new(); nq]);
        }
        let too_many = |what: &str| GenieError::InvalidParameter(format!("too many {what}"));
        let m32 = u32::try_from(m).map_err(|_| too_many("candidates"))?;
        let s = &self.stream;
        let cands = s.clone_htod(ids).map_err(cuda_err)?;
        if k <= AMONG_MAX_K && among_shared_bytes(k, dim) <= AMONG_SHARED_BYTES {
            return self.among_fused(queries, &cands, m32, k, metric);
        }
        let counts = s.alloc_zeros::<u32>(m).map_err(cuda_err)?;
        let n_cand = s.clone_htod(&[m32]).map_err(cuda_err)?;
        let chunk = (PAIRS_AT_ONCE / m).clamp(1, nq.max(1));
        let mut out = Vec::with_capacity(nq);
        for rows in queries.chunks(chunk * dim) {
            let nc = rows.len() / dim;
            let nc32 = u32::try_from(nc).map_err(|_| too_many("queries"))?;
            let q = self.upload(rows)?;
            // SAFETY: `rerank_*` writes each of the `nc x m` distances before `rank_top_k` reads
            let mut dist = unsafe { s.alloc::<f64>(nc * m) }.map_err(cuda_err)?;
            self.launch_distances(
                &q,
                &cands,
                (m32, true),
                nc32,
                metric,
                Out::Distances(&mut dist),
            )?;
            out.extend(self.rank_on_device(
                &dist,
                (&cands, &counts, &n_cand),
                (m32, true),
                nc,
                k,
                256,
            )?);
        }
        Ok(out)
    }

    /// [`GpuVectors::top_k_among`] of `k <= AMONG_MAX_K` hits in one launch (kernels/vectors.cu
    /// `among_top`): no distance goes to memory, and a block reads each candidate's row once
    /// for several queries. The hits equal the two-kernel path's.
    fn among_fused(
        &self,
        queries: &[f32],
        cands: &CudaSlice<u32>,
        m: u32,
        k: usize,
        metric: VectorDistance,
    ) -> Result<Vec<Vec<VerifiedHit>>> {
        let nq = queries.len() / self.dim as usize;
        let nq32 = u32::try_from(nq)
            .map_err(|_| GenieError::InvalidParameter("too many queries".into()))?;
        let s = &self.stream;
        let q = self.upload(queries)?;
        let mut top_ids = s.alloc_zeros::<u32>(nq * k).map_err(cuda_err)?;
        let mut top_dist = s.alloc_zeros::<f64>(nq * k).map_err(cuda_err)?;
        let mut top_n = s.alloc_zeros::<u32>(nq).map_err(cuda_err)?;
        let top = Top {
            k: k as u32,
            ids: &mut top_ids,
            dist: &mut top_dist,
            n: &mut top_n,
        };
        self.launch_distances(&q, cands, (m, true), nq32, metric, Out::Top(top))?;
        let (ids, dists, n) = (
            s.clone_dtoh(&top_ids).map_err(cuda_err)?,
            s.clone_dtoh(&top_dist).map_err(cuda_err)?,
            s.clone_dtoh(&top_n).map_err(cuda_err)?,
        );
        s.synchronize().map_err(cuda_err)?;
        self.ctx.check_err().map_err(cuda_err)?;
        Ok(hits_of(&ids, None, &dists, &n, k))
    }

    /// Each query's top `k` of its candidates' distances `dist` (`nq x per_query`), ranked on
    /// the device (kernels/vectors.cu `rank_top_k`, blocks of `threads`): `cands` their ids,
    /// counts and numbers a query (with `shared`, one query's worth serving every query).
    pub(super) fn rank_on_device(
        &self,
        dist: &CudaSlice<f64>,
        cands: (&CudaSlice<u32>, &CudaSlice<u32>, &CudaSlice<u32>),
        (per_query, shared): (u32, bool),
        nq: usize,
        k: usize,
        threads: u32,
    ) -> Result<Vec<Vec<VerifiedHit>>> {
        let s = &self.stream;
        let out_len = (nq * k).max(1);
        let mut top_ids = s.alloc_zeros::<u32>(out_len).map_err(cuda_err)?;
        let mut top_counts = s.alloc_zeros::<u32>(out_len).map_err(cuda_err)?;
        let mut top_dist = s.alloc_zeros::<f64>(out_len).map_err(cuda_err)?;
        let mut top_n = s.alloc_zeros::<u32>(nq.max(1)).map_err(cuda_err)?;
        let (nq32, k32, shared32) = (nq as u32, k as u32, u32::from(shared));
        let cfg = LaunchConfig {
            grid_dim: (nq.min(1 << 16) as u32, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: argument types and order match kernels/vectors.cu `rank_top_k`; `dist` holds
        // `nq x per_query` distances, `cands` as many ids and counts (`per_query` with `shared`)
        // and `nq` numbers (one with `shared`); the outputs hold `nq x k` hits and `nq` lengths
        unsafe {
            s.launch_builder(&self.top_k)
                .arg(dist)
                .arg(cands.0)
                .arg(cands.1)
                .arg(cands.2)
                .arg(&per_query)
                .arg(&shared32)
                .arg(&nq32)
                .arg(&k32)
                .arg(&mut top_ids)
                .arg(&mut top_counts)
                .arg(&mut top_dist)
                .arg(&mut top_n)
                .launch(cfg)
                .map_err(cuda_err)?;
        }
        let (ids, counts, dists, n) = (
            s.clone_dtoh(&top_ids).map_err(cuda_err)?,
            s.clone_dtoh(&top_counts).map_err(cuda_err)?,
            s.clone_dtoh(&top_dist).map_err(cuda_err)?,
            s.clone_dtoh(&top_n).map_err(cuda_err)?,
        );
        s.synchronize().map_err(cuda_err)?;
        self.ctx.check_err().map_err(cuda_err)?;
        Ok(hits_of(&ids, Some(&counts), &dists, &n, k))
    }
}

/// Each query's hits from a top-k kernel's outputs: `n[q]` of them at `q x k` in `ids`, `counts`
/// (0 where there are none) and `dists`.
fn hits_of(
    ids: &[u32],
    counts: Option<&[u32]>,
    dists: &[f64],
    n: &[u32],
    k: usize,
) -> Vec<Vec<VerifiedHit>> {
    (0..n.len())
        .into_par_iter()
        .with_min_len(256)
        .map(|q| {
            (q * k..q * k + n[q] as usize)
                .map(|o| VerifiedHit {
                    id: ids[o],
                    count: counts.map_or(0, |c| c[o]),
                    distance: dists[o],
                })
                .collect()
        })
        .collect()
}
