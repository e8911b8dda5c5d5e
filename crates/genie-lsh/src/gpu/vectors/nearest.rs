//! The nearest centres of rows on the GPU (kernels/vectors.cu `nearest_scores`, `smallest`): k-means
//! training and the assignment of vectors and queries to cells, bit for bit the CPU's.

use super::*;

impl GpuVectors {
    /// The `top` nearest of `ncells` centres (resident, `ncells x dim`, with their squared norms)
    /// to each of `nrows` rows (resident): `nrows x top` indices, nearest first (`u32::MAX` past
    /// the centres), and their scores `|c|^2 - 2 x.c`. genie-lsh's `Centres::scores` and
    /// `smallest`, bit for bit.
    pub(super) fn nearest_on_device(
        &self,
        centres: &CudaSlice<f32>,
        cnorms: &CudaSlice<f32>,
        ncells: usize,
        rows: &CudaSlice<f32>,
        nrows: usize,
        top: usize,
    ) -> Result<(CudaSlice<u32>, CudaSlice<f32>)> {
        let s = &self.stream;
        let dim = self.dim as usize;
        let mut idx = s
            .alloc_zeros::<u32>((nrows * top).max(1))
            .map_err(cuda_err)?;
        let mut best = s
            .alloc_zeros::<f32>((nrows * top).max(1))
            .map_err(cuda_err)?;
        if nrows == 0 || top == 0 {
            return Ok((idx, best));
        }
        let shared = NEAREST_ROWS * dim * 4;
        self.nearest
            .set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared as i32,
            )
            .map_err(cuda_err)?;
        // rows in slices whose score matrix stays under NEAREST_SCRATCH floats
        let per = (NEAREST_SCRATCH / ncells.max(1) / NEAREST_ROWS * NEAREST_ROWS).max(NEAREST_ROWS);
        let mut scores = s
            .alloc_zeros::<f32>(per.min(nrows) * ncells)
            .map_err(cuda_err)?;
        let chunk = 128usize;
        let (nc32, dim32, chunk32, top32) = (ncells as u32, self.dim, chunk as u32, top as u32);
        for lo in (0..nrows).step_by(per) {
            let n = per.min(nrows - lo);
            let n32 = n as u32;
            let part = rows.slice(lo * dim..(lo + n) * dim);
            let cfg = LaunchConfig {
                grid_dim: (
                    n.div_ceil(NEAREST_ROWS) as u32,
                    ncells.div_ceil(chunk) as u32,
                    1,
                ),
                block_dim: (256, 1, 1),
                shared_mem_bytes: shared as u32,
            };
            // SAFETY: argument types and order match kernels/vectors.cu `nearest_scores`; `scores`
            // holds `n x ncells` floats and the shared memory NEAREST_ROWS rows.
            unsafe {
                s.launch_builder(&self.nearest)
                    .arg(centres)
                    .arg(cnorms)
                    .arg(&nc32)
                    .arg(&dim32)
                    .arg(&part)
                    .arg(&n32)
                    .arg(&chunk32)
                    .arg(&mut scores)
                    .launch(cfg)
                    .map_err(cuda_err)?;
            }
            let mut out_i = idx.slice_mut(lo * top..(lo + n) * top);
            let mut out_s = best.slice_mut(lo * top..(lo + n) * top);
            let (cfg, window) = smallest_launch(n, ncells, top);
            // SAFETY: argument types and order match kernels/vectors.cu `smallest_rows`; the outputs
            // hold `n x top` entries and the shared memory `window` keys.
            unsafe {
                s.launch_builder(&self.smallest)
                    .arg(&scores)
                    .arg(&n32)
                    .arg(&nc32)
                    .arg(&top32)
                    .arg(&window)
                    .arg(&mut out_i)
                    .arg(&mut out_s)
                    .launch(cfg)
                    .map_err(cuda_err)?;
            }
        }
        Ok((idx, best))
    }
    /// The nearest of `centres` (`k x dim`, with their squared norms `norms`) to each row of
    /// `rows`: genie-lsh's `Centres::nearest` for every row, computed on this device.
    pub fn nearest_centres(
        &self,
        centres: &[f32],
        norms: &[f32],
        rows: &[f32],
    ) -> Result<Vec<u32>> {
        Ok(self.nearest_rows(centres, norms, rows, 1, false)?.0)
    }

    /// The `top` nearest of `centres` (`k x dim`, with their squared norms `norms`) to each row
    /// of `rows`, nearest first (`u32::MAX` past the centres), and their scores `|c|^2 - 2 x.c`:
    /// genie-lsh's `Centres::scores` and `smallest` for every row, computed on this device.
    pub fn nearest_top(
        &self,
        centres: &[f32],
        norms: &[f32],
        rows: &[f32],
        top: usize,
    ) -> Result<(Vec<u32>, Vec<f32>)> {
        self.nearest_rows(centres, norms, rows, top, true)
    }

    /// [`GpuVectors::nearest_top`]; the scores copied back only `with_scores` (else none).
    fn nearest_rows(
        &self,
        centres: &[f32],
        norms: &[f32],
        rows: &[f32],
        top: usize,
        with_scores: bool,
    ) -> Result<(Vec<u32>, Vec<f32>)> {
        let dim = self.dim as usize;
        let k = norms.len();
        if k == 0 || centres.len() != k * dim || rows.len() % dim != 0 || top == 0 {
            return Err(GenieError::InvalidParameter(format!(
                "nearest centres: {} centre floats and {k} norms for dimension {dim}, top {top}",
                centres.len()
            )));
        }
        if !nearest_fits(dim) {
            return Err(GenieError::InvalidParameter(format!(
                "nearest centres: dimension {dim} too wide for the device"
            )));
        }
        let s = &self.stream;
        let (c, n) = (
            s.clone_htod(centres).map_err(cuda_err)?,
            s.clone_htod(norms).map_err(cuda_err)?,
        );
        let nrows = rows.len() / dim;
        let (mut out, mut scores) = (Vec::with_capacity(nrows * top), Vec::new());
        // rows go up in slices of at most 256 MiB
        let per = ((256usize << 20) / (4 * dim)).max(1);
        for part in rows.chunks(per * dim) {
            let r = self.upload(part)?;
            let n_part = part.len() / dim;
            let (idx, best) = self.nearest_on_device(&c, &n, k, &r, n_part, top)?;
            let mut idx = s.clone_dtoh(&idx).map_err(cuda_err)?;
            idx.truncate(n_part * top);
            out.extend(idx);
            if with_scores {
                let mut best = s.clone_dtoh(&best).map_err(cuda_err)?;
                best.truncate(n_part * top);
                scores.extend(best);
            }
        }
        s.synchronize().map_err(cuda_err)?;
        self.ctx.check_err().map_err(cuda_err)?;
        Ok((out, scores))
    }
}

/// The ranks of `top` above which `smallest_rows` runs one block a row (kernels/vectors.cu
/// `SMALL_TOP`); at or below it, one warp a row.
const SMALL_TOP: usize = 8;
/// Most keys one block of `smallest_rows` sorts at once (8 bytes each in shared memory).
const SELECT_WINDOW: usize = 4096;

/// The launch of `smallest_rows` over `rows` rows of `ncells` scores for their `top` smallest, and
/// its window of ranks: one warp a row for a small `top`, else one block a row with the ranks in
/// windows of a power of two.
fn smallest_launch(rows: usize, ncells: usize, top: usize) -> (LaunchConfig, u32) {
    if top <= SMALL_TOP {
        return (super::warp_per_item(rows), 1);
    }
    let window = top
        .min(ncells)
        .max(1)
        .next_power_of_two()
        .min(SELECT_WINDOW);
    let cfg = LaunchConfig {
        grid_dim: (rows.clamp(1, 1 << 20) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: (window * 8) as u32,
    };
    (cfg, window as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smallest_launch_picks_a_warp_or_a_block_and_a_window() {
        let (cfg, w) = smallest_launch(100, 4000, 1);
        assert_eq!((cfg.grid_dim.0, cfg.block_dim.0, w), (13, 256, 1));
        let (cfg, w) = smallest_launch(100, 4000, 300);
        assert_eq!(
            (cfg.grid_dim.0, cfg.shared_mem_bytes, w),
            (100, 512 * 8, 512)
        );
        // never wider than the row, nor than the window
        assert_eq!(smallest_launch(5, 20, 500).1, 32);
        assert_eq!(smallest_launch(5, 100_000, 9000).1, 4096);
    }
}
