//! Hardware ceilings measured on the device in the same run as a benchmark (CONVENTIONS.md 9):
//! device-to-device copy bandwidth, random 32-bit atomic adds into a table larger than L2, random
//! byte increments into a tile of shared memory, and
//! host-to-device copy bandwidth from pinned and from pageable memory; and the uploads through
//! pinned staging of several layouts ([`measure_staged_uploads`]).

use super::cuda_err;
use super::upload::{Stager, LANES, SLOT_BYTES, WRITE_COMBINED};
use super::{Ceilings, StagedUpload};
use crate::error::{GenieError, Result};
use cudarc::driver::{sys, CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use std::sync::Arc;

fn time_ms(s: &Arc<CudaStream>, reps: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?; // warm-up
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let a = s
            .record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(cuda_err)?;
        f()?;
        let b = s
            .record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(cuda_err)?;
        times.push(f64::from(a.elapsed_ms(&b).map_err(cuda_err)?));
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// Measures the ceilings on device `ordinal` (about a second of device time).
pub fn measure_ceilings(ordinal: usize) -> Result<Ceilings> {
    super::cuda_probe().map_err(GenieError::GpuUnavailable)?;
    let ctx = CudaContext::new(ordinal).map_err(cuda_err)?;
    let (major, minor) = ctx.compute_capability().map_err(cuda_err)?;
    let module = super::kernels::load(&ctx, &super::kernels::BENCH, &format!("sm_{major}{minor}"))?;
    let atomic = module
        .load_function("random_atomic_add")
        .map_err(cuda_err)?;
    let s = ctx.new_stream().map_err(cuda_err)?;
    let mut c = Ceilings::default();

    let words = 1usize << 28; // 1 GiB of u32
    let src = s.alloc_zeros::<u32>(words).map_err(cuda_err)?;
    let mut dst = s.alloc_zeros::<u32>(words).map_err(cuda_err)?;
    let ms = time_ms(&s, 5, || s.memcpy_dtod(&src, &mut dst).map_err(cuda_err))?;
    c.copy_gbs = 2.0 * (words * 4) as f64 / (ms * 1e6);

    // G operations/s of a microbenchmark: `per_thread` operations by each of `blocks` x `threads`,
    // launched with (dst, [mask], per_thread, seed)
    let seed = 12345u32;
    let rate =
        |func: &CudaFunction, blocks: u32, threads: u32, per_thread: u32, mask: Option<u32>| {
            let cfg = LaunchConfig {
                grid_dim: (blocks, 1, 1),
                block_dim: (threads, 1, 1),
                shared_mem_bytes: 0,
            };
            let ms = time_ms(&s, 5, || {
                let mut launch = s.launch_builder(func);
                launch.arg(&dst);
                if let Some(m) = &mask {
                    launch.arg(m);
                }
                launch.arg(&per_thread).arg(&seed);
                // SAFETY: arguments match kernels/bench.cu: random_atomic_add's indices are masked
                // into `dst`, and shared_tile_add writes at most one word a block (`dst` holds more).
                unsafe { launch.launch(cfg) }.map(|_| ()).map_err(cuda_err)
            })?;
            Ok::<_, GenieError>(
                f64::from(blocks) * f64::from(threads) * f64::from(per_thread) / (ms * 1e6),
            )
        };
    c.atomic_gops = rate(&atomic, 16384, 256, 256, Some((words - 1) as u32))?;
    let shared = module.load_function("shared_tile_add").map_err(cuda_err)?;
    let sms = ctx
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .map_err(cuda_err)? as u32;
    c.shared_gops = rate(&shared, 4 * sms, 512, 4096, None)?;

    let bytes = 256usize << 20;
    let host = vec![1u32; bytes / 4];
    let mut d = s.alloc_zeros::<u32>(bytes / 4).map_err(cuda_err)?;
    let ms = time_ms(&s, 5, || s.memcpy_htod(&host, &mut d).map_err(cuda_err))?;
    c.h2d_pageable_gbs = bytes as f64 / (ms * 1e6);
    // SAFETY: filled below before any copy reads it.
    let mut pinned = unsafe { ctx.alloc_pinned::<u32>(bytes / 4) }.map_err(cuda_err)?;
    pinned.as_mut_slice().map_err(cuda_err)?.fill(1);
    let ms = time_ms(&s, 5, || s.memcpy_htod(&pinned, &mut d).map_err(cuda_err))?;
    c.h2d_pinned_gbs = bytes as f64 / (ms * 1e6);
    s.synchronize().map_err(cuda_err)?;
    Ok(c)
}

/// Uploads `bytes` of pageable host memory through staging of several layouts (lanes, slot size,
/// cached or write-combined) on device `ordinal`: the median of three, each checked word for word
/// once.
pub fn measure_staged_uploads(ordinal: usize, bytes: usize) -> Result<Vec<StagedUpload>> {
    super::cuda_probe().map_err(GenieError::GpuUnavailable)?;
    let ctx = CudaContext::new(ordinal).map_err(cuda_err)?;
    let s = ctx.new_stream().map_err(cuda_err)?;
    let words = (bytes / 4).max(1);
    let host: Vec<u32> = (0..words as u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let mut dev = s.alloc_zeros::<u32>(words).map_err(cuda_err)?;
    let mut out = Vec::new();
    let threads = rayon::current_num_threads().max(1);
    // the slot sizes with a lane per thread, cached and write-combined; then index uploads'
    // layout and, with as much pinned, half as many lanes of slots twice as large
    let default_lanes = LANES.min(threads);
    let layouts = [false, true]
        .into_iter()
        .flat_map(|wc| {
            [256 << 10, 1 << 20, 2 << 20, 4 << 20, 16 << 20].map(|slot| (threads, slot, wc))
        })
        .chain([
            (default_lanes, SLOT_BYTES, WRITE_COMBINED),
            ((default_lanes / 2).max(1), SLOT_BYTES * 2, WRITE_COMBINED),
        ]);
    for (lanes, slot_bytes, write_combined) in layouts {
        let stager = Stager::new(&ctx, lanes, slot_bytes, write_combined)?;
        stager.copy(&s, &host, &mut dev)?;
        if s.clone_dtoh(&dev).map_err(cuda_err)? != host {
            return Err(GenieError::Internal(format!(
                "an upload through {slot_bytes}-byte slots arrived changed"
            )));
        }
        s.memset_zeros(&mut dev).map_err(cuda_err)?;
        let mut ms = (0..3)
            .map(|_| {
                let t = std::time::Instant::now();
                stager.copy(&s, &host, &mut dev)?;
                Ok(t.elapsed().as_secs_f64() * 1e3)
            })
            .collect::<Result<Vec<f64>>>()?;
        ms.sort_by(f64::total_cmp);
        out.push(StagedUpload {
            lanes,
            slot_bytes,
            write_combined,
            default: (lanes, slot_bytes, write_combined)
                == (default_lanes, SLOT_BYTES, WRITE_COMBINED),
            gbs: (words * 4) as f64 / (ms[1] * 1e6),
        });
    }
    Ok(out)
}
