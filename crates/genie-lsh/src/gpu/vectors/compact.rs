//! Re-rank distances from a compact copy of the vectors (kernels/vectors.cu `rerank_compact`):
//! half-precision values, 8-bit codes by dimension, or a codebook index's own codes
//! ([`DeviceRows`]), identical to the CPU's distances on the rebuilt rows.

use super::super::DeviceRows;
use super::*;

/// A compact copy on the device; the arrays a form does not use hold one dummy element.
pub(super) struct Compact {
    form: u32,
    half: CudaSlice<u16>,
    bytes: CudaSlice<u8>,
    lo: CudaSlice<f32>,
    step: CudaSlice<f32>,
    pos: CudaSlice<u32>,
    centres: CudaSlice<f32>,
    books: CudaSlice<f32>,
    bounds: CudaSlice<u32>,
    slice_of: CudaSlice<u32>,
}

/// `v` on the device, or one default element when it is empty.
fn up<T: cudarc::driver::DeviceRepr + Default + Clone + Unpin>(
    s: &Arc<CudaStream>,
    v: &[T],
) -> Result<CudaSlice<T>> {
    let one = [T::default()];
    s.clone_htod(if v.is_empty() { &one[..] } else { v })
        .map_err(cuda_err)
}

impl GpuVectors {
    /// The re-rank `rows` on device `ordinal`: floats as [`GpuVectors::new`] puts them, a
    /// compact copy as it is (a codebook's codes need its cells attached too).
    pub fn from_rows(ordinal: usize, rows: DeviceRows<'_>) -> Result<Self> {
        let dim = rows.dim();
        if let DeviceRows::F32 { data, .. } = rows {
            return Self::new(ordinal, data, dim);
        }
        let mut g = Self::new(ordinal, &[], dim)?;
        g.n = u32::try_from(rows.len()).map_err(|_| {
            GenieError::InvalidParameter("more than 2^32 vectors to re-rank on a GPU".into())
        })?;
        let s = &g.stream;
        let (none32, nonef): (&[u32], &[f32]) = (&[], &[]);
        let (form, half, bytes, lo, step): (u32, &[u16], &[u8], &[f32], &[f32]) = match rows {
            DeviceRows::F16 { data, .. } => (1, data, &[], nonef, nonef),
            DeviceRows::Sq8 { lo, step, data, .. } => (2, &[], data, lo, step),
            _ => (3, &[], &[], nonef, nonef),
        };
        let (pos, centres, books, bounds, slice_of) = match rows {
            DeviceRows::Codes {
                pos,
                centres,
                books,
                bounds,
                ..
            } => {
                let mut slice_of = vec![0u32; dim];
                for (sl, w) in bounds.windows(2).enumerate() {
                    slice_of[w[0]..w[1]].fill(sl as u32);
                }
                let bounds: Vec<u32> = bounds.iter().map(|&b| b as u32).collect();
                (
                    up(s, pos)?,
                    up(s, centres)?,
                    up(s, books)?,
                    up(s, &bounds)?,
                    up(s, &slice_of)?,
                )
            }
            _ => (
                up(s, none32)?,
                up(s, nonef)?,
                up(s, nonef)?,
                up(s, none32)?,
                up(s, none32)?,
            ),
        };
        let compact = Compact {
            form,
            half: up(s, half)?,
            bytes: up(s, bytes)?,
            lo: up(s, lo)?,
            step: up(s, step)?,
            pos,
            centres,
            books,
            bounds,
            slice_of,
        };
        s.synchronize().map_err(cuda_err)?;
        g.compact = Some(compact);
        Ok(g)
    }

    /// Whether the device can compute re-rank distances (a codebook's codes need its cells).
    pub fn can_rerank(&self) -> bool {
        match &self.compact {
            Some(c) if c.form == 3 => self.cell_arrays().is_some(),
            _ => true,
        }
    }

    /// Launches `rerank_compact` (see [`GpuVectors::launch_distances`]).
    pub(super) fn launch_compact(
        &self,
        c: &Compact,
        pairs: &Pairs<'_>,
        out: &mut Out<'_>,
    ) -> Result<()> {
        let dummy_u32 = &c.bounds;
        let dummy_u8 = &c.bytes;
        let (starts, codes, ncells, m) = match (c.form, self.cell_arrays()) {
            (3, Some(a)) => a,
            (3, None) => {
                return Err(GenieError::Cuda(
                    "re-ranking from codes needs the codebook's cells on the GPU".into(),
                ))
            }
            _ => (dummy_u32, dummy_u8, 0, 0),
        };
        // SAFETY: argument types and order match kernels/vectors.cu `rerank_compact`; each array
        // holds what its form reads (`n x dim` values, `dim` steps, `n` positions, the cells'
        // `ncells + 1` starts and `m` codes a position); `launch_pairs` pushes the rest
        unsafe {
            let mut args = self.stream.launch_builder(&self.compact_fn);
            args.arg(&c.form)
                .arg(&c.half)
                .arg(&c.bytes)
                .arg(&c.lo)
                .arg(&c.step)
                .arg(&c.pos)
                .arg(starts)
                .arg(&ncells)
                .arg(codes)
                .arg(&m)
                .arg(&c.centres)
                .arg(&c.books)
                .arg(&c.bounds)
                .arg(&c.slice_of);
            self.launch_pairs(&mut args, pairs, out)
        }
    }
}
