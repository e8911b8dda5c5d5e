//! Sequences resident on a GPU for exact edit-distance scans (`kernels/seq.cu` `seq_nearest`):
//! each query's objects within its exact k-th smallest distance over all the sequences, by the
//! bit-parallel algorithm the CPU uses (`src/edit_distance.rs`), so the distances are the CPU's.

use super::{SeqJob, Within, SEQ_BINS, SEQ_MAX_WORDS};
use crate::kernels::SEQ;
use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use genie_core::backend::cuda::{cuda_err, cuda_probe, open_module};
use genie_core::{GenieError, Result};
use std::sync::Arc;

/// Most objects a query's answer holds on the device (more: the query is left to the host).
const CAP: usize = 1024;
/// Most queries of one launch (their answers take `CAP x 8` bytes each).
const BATCH: usize = 8192;
/// Most bytes of the exhaustive scan's scratch (a byte per sequence for each block at work).
const SCRATCH_BYTES: usize = 1 << 30;
/// Most blocks of the exhaustive scan at work (several per SM fill the GPU).
const SLOTS: usize = 2048;
/// Most shared memory of a pattern's masks.
const MAX_MASK_BYTES: usize = 96 << 10;

/// A batch's patterns on the device.
struct Patterns {
    syms: CudaSlice<u16>,
    starts: CudaSlice<u32>,
    /// Bytes of the widest pattern's masks.
    shared: u32,
}

/// Sequences of dense symbol ids resident on a GPU.
pub struct GpuSequences {
    _ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    func: CudaFunction,
    pairs: CudaFunction,
    syms: CudaSlice<u16>,
    starts: CudaSlice<u32>,
    n: u32,
    alphabet: u32,
}

impl std::fmt::Debug for GpuSequences {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuSequences")
            .field("n", &self.n)
            .field("alphabet", &self.alphabet)
            .finish()
    }
}

impl GpuSequences {
    /// Uploads sequences to device `ordinal`: `syms` their symbols one after the other (each a
    /// dense id below `alphabet`), `starts` the `n + 1` offsets of the sequences in `syms`.
    pub fn new(ordinal: usize, syms: &[u16], starts: &[u32], alphabet: usize) -> Result<Self> {
        cuda_probe().map_err(GenieError::GpuUnavailable)?;
        let bad = |m: String| {
            Err(GenieError::InvalidParameter(format!(
                "sequences on the GPU: {m}"
            )))
        };
        if starts.first() != Some(&0)
            || starts.last().map(|&e| e as usize) != Some(syms.len())
            || starts.windows(2).any(|w| w[0] > w[1])
        {
            return bad("offsets do not cover the symbols in order".into());
        }
        if alphabet == 0 || alphabet > usize::from(u16::MAX) {
            return bad(format!("an alphabet of {alphabet} symbols"));
        }
        if let Some(&s) = syms.iter().find(|&&s| usize::from(s) >= alphabet) {
            return bad(format!("symbol {s} outside an alphabet of {alphabet}"));
        }
        let n = u32::try_from(starts.len() - 1)
            .map_err(|_| GenieError::InvalidParameter("more than 2^32 sequences".into()))?;
        let (ctx, funcs, stream) = open_module(ordinal, &SEQ, &["seq_nearest", "seq_distances"])?;
        let [func, pairs]: [CudaFunction; 2] = funcs
            .try_into()
            .map_err(|_| GenieError::Cuda("the sequence kernels did not load".into()))?;
        let syms = stream
            .clone_htod(if syms.is_empty() { &[0u16][..] } else { syms })
            .map_err(cuda_err)?;
        let starts = stream.clone_htod(starts).map_err(cuda_err)?;
        stream.synchronize().map_err(cuda_err)?;
        Ok(Self {
            _ctx: ctx,
            stream,
            func,
            pairs,
            syms,
            starts,
            n,
            alphabet: alphabet as u32,
        })
    }

    /// The number of sequences.
    pub fn len(&self) -> usize {
        self.n as usize
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Whether the device takes `pattern`: at most `64 x SEQ_MAX_WORDS` symbols, whose masks fit
    /// in shared memory.
    pub fn fits(&self, pattern: &[u16]) -> bool {
        let words = pattern.len().div_ceil(64).max(1);
        words <= SEQ_MAX_WORDS && self.alphabet as usize * words * 8 <= MAX_MASK_BYTES
    }

    /// Whether the device answers `job` in [`GpuSequences::nearest`]: its pattern
    /// [fits](GpuSequences::fits) and its bound is below `SEQ_BINS`.
    pub fn takes(&self, job: &SeqJob<'_>) -> bool {
        self.fits(job.pattern) && (job.bound as usize) < SEQ_BINS
    }

    /// `patterns` one after the other on the device, with their offsets, and the shared memory
    /// the masks of the widest take, set as `func`'s most.
    fn upload_patterns<'p>(
        &self,
        patterns: impl Iterator<Item = &'p [u16]>,
        func: &CudaFunction,
    ) -> Result<Patterns> {
        let (mut syms, mut starts) = (Vec::<u16>::new(), vec![0u32]);
        let mut words = 1usize;
        for p in patterns {
            syms.extend_from_slice(p);
            starts.push(
                u32::try_from(syms.len())
                    .map_err(|_| GenieError::InvalidParameter("query symbols past 2^32".into()))?,
            );
            words = words.max(p.len().div_ceil(64));
        }
        let shared = self.alphabet as usize * words * 8;
        func.set_attribute(
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            shared as i32,
        )
        .map_err(cuda_err)?;
        let s = &self.stream;
        Ok(Patterns {
            syms: s
                .clone_htod(if syms.is_empty() { &[0u16][..] } else { &syms })
                .map_err(cuda_err)?,
            starts: s.clone_htod(&starts).map_err(cuda_err)?,
            shared: shared as u32,
        })
    }

    /// The edit distance from each job's pattern to each of its candidates (ids of the
    /// sequences; `u32::MAX` for an id past them), `None` for a pattern the device does not take
    /// (see [`GpuSequences::fits`]).
    pub fn distances(&self, jobs: &[(&[u16], &[u32])]) -> Result<Vec<Option<Vec<u32>>>> {
        let mut out: Vec<Option<Vec<u32>>> = vec![None; jobs.len()];
        let taken: Vec<usize> = (0..jobs.len()).filter(|&i| self.fits(jobs[i].0)).collect();
        if taken.is_empty() {
            return Ok(out);
        }
        let (mut ids, mut cstarts) = (Vec::<u32>::new(), vec![0u32]);
        for &i in &taken {
            ids.extend_from_slice(jobs[i].1);
            cstarts.push(
                u32::try_from(ids.len()).map_err(|_| {
                    GenieError::InvalidParameter("more than 2^32 candidates".into())
                })?,
            );
        }
        let s = &self.stream;
        let nq = taken.len();
        let patterns = self.upload_patterns(taken.iter().map(|&i| jobs[i].0), &self.pairs)?;
        let cid = s
            .clone_htod(if ids.is_empty() { &[0u32][..] } else { &ids })
            .map_err(cuda_err)?;
        let cst = s.clone_htod(&cstarts).map_err(cuda_err)?;
        let mut dist = s.alloc_zeros::<u32>(ids.len().max(1)).map_err(cuda_err)?;
        let cfg = LaunchConfig {
            grid_dim: (nq.min(65_535) as u32, 1, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: patterns.shared,
        };
        let nq32 = nq as u32;
        // SAFETY: argument types and order match kernels/seq.cu `seq_distances`; the patterns'
        // and `cstarts` have `nq + 1` offsets into their symbols and `ids`, `dist` an entry per
        // id, the shared memory the masks of the widest pattern.
        unsafe {
            s.launch_builder(&self.pairs)
                .arg(&self.syms)
                .arg(&self.starts)
                .arg(&self.n)
                .arg(&patterns.syms)
                .arg(&patterns.starts)
                .arg(&nq32)
                .arg(&self.alphabet)
                .arg(&cid)
                .arg(&cst)
                .arg(&mut dist)
                .launch(cfg)
                .map_err(cuda_err)?;
        }
        let dist = s.clone_dtoh(&dist).map_err(cuda_err)?;
        s.synchronize().map_err(cuda_err)?;
        for (j, &i) in taken.iter().enumerate() {
            out[i] = Some(dist[cstarts[j] as usize..cstarts[j + 1] as usize].to_vec());
        }
        Ok(out)
    }

    /// For each job, every sequence within the exact `k`-th smallest edit distance to its
    /// pattern, as `(id, distance)` in no order; `None` where the device cannot tell (a job it
    /// does not take, more than its room of answers, or fewer than `k` sequences within the
    /// job's bound).
    pub fn nearest(&self, jobs: &[SeqJob<'_>], k: usize) -> Result<Vec<Option<Within>>> {
        let mut out: Vec<Option<Within>> = vec![None; jobs.len()];
        let taken: Vec<usize> = (0..jobs.len()).filter(|&i| self.takes(&jobs[i])).collect();
        let k32 = u32::try_from(k.max(1)).unwrap_or(u32::MAX);
        let want = k.min(self.n as usize);
        // a block per query, up to the slots the scratch holds; each block goes on to the next
        // query of the launch
        let slots = taken
            .len()
            .min(SLOTS)
            .min((SCRATCH_BYTES / (self.n as usize).max(1)).max(1));
        // SAFETY: the kernel writes a byte before it reads it (see kernels/seq.cu)
        let mut scratch = unsafe { self.stream.alloc::<u8>((slots * self.n as usize).max(1)) }
            .map_err(cuda_err)?;
        for part in taken.chunks(BATCH) {
            let s = &self.stream;
            let nq = part.len();
            let patterns =
                self.upload_patterns(part.iter().map(|&i| jobs[i].pattern), &self.func)?;
            let taus: Vec<u32> = part.iter().map(|&i| jobs[i].bound).collect();
            let tau = s.clone_htod(&taus).map_err(cuda_err)?;
            // SAFETY: the kernel writes the answers it counts before they are read
            let mut ids = unsafe { s.alloc::<u32>(nq * CAP) }.map_err(cuda_err)?;
            let mut dist = unsafe { s.alloc::<u32>(nq * CAP) }.map_err(cuda_err)?;
            let mut count = s.alloc_zeros::<u32>(nq).map_err(cuda_err)?;
            let cfg = LaunchConfig {
                grid_dim: (nq.min(slots) as u32, 1, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: patterns.shared,
            };
            let (nq32, cap32) = (nq as u32, CAP as u32);
            // SAFETY: argument types and order match kernels/seq.cu `seq_nearest`; the patterns
            // have `nq + 1` offsets into their symbols, the answers `nq x CAP` entries, the shared
            // memory the masks of the widest pattern, the scratch `n` bytes for each block.
            unsafe {
                s.launch_builder(&self.func)
                    .arg(&self.syms)
                    .arg(&self.starts)
                    .arg(&self.n)
                    .arg(&patterns.syms)
                    .arg(&patterns.starts)
                    .arg(&tau)
                    .arg(&nq32)
                    .arg(&k32)
                    .arg(&self.alphabet)
                    .arg(&cap32)
                    .arg(&mut ids)
                    .arg(&mut dist)
                    .arg(&mut count)
                    .arg(&mut scratch)
                    .launch(cfg)
                    .map_err(cuda_err)?;
            }
            let (ids, dist, count) = (
                s.clone_dtoh(&ids).map_err(cuda_err)?,
                s.clone_dtoh(&dist).map_err(cuda_err)?,
                s.clone_dtoh(&count).map_err(cuda_err)?,
            );
            s.synchronize().map_err(cuda_err)?;
            for (j, &i) in part.iter().enumerate() {
                let c = count[j] as usize;
                if c > CAP || c < want {
                    continue;
                }
                let at = j * CAP;
                out[i] = Some(
                    ids[at..at + c]
                        .iter()
                        .copied()
                        .zip(dist[at..at + c].iter().copied())
                        .collect(),
                );
            }
        }
        Ok(out)
    }
}
