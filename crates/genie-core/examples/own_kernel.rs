//! A plugin's own GPU kernel, as a crate outside the engine ships one: the source declared as a
//! [`KernelModule`] (genie-core's shared header, then the plugin's code), opened on a device with
//! [`open_module`] (compiled by NVRTC once, its PTX cached on disk; a module with builds made
//! ahead would list them in `builds`), and launched with the `cudarc` that genie-core re-exports.
//! This one adds 1 to every value of an array on GPU 0 and checks the result.
//!
//! ```text
//! cargo run -p genie-core --example own_kernel
//! ```
//!
//! Without a GPU (or without NVRTC, or without the `cuda` feature) it says why it did nothing.

#[path = "own_kernel/add_one.rs"]
mod add_one;

use add_one::ADD_ONE;

#[cfg(feature = "cuda")]
fn main() -> Result<(), genie_core::GenieError> {
    use genie_core::backend::cuda::cudarc::driver::{LaunchConfig, PushKernelArg};
    use genie_core::backend::cuda::{cuda_err, open_module};
    use genie_core::GenieError;

    if let Err(reason) = genie_core::backend::cuda_probe() {
        println!("skipped: {reason}");
        return Ok(());
    }
    let (_ctx, functions, stream) = match open_module(0, &ADD_ONE, ADD_ONE.entry_points) {
        Err(GenieError::GpuUnavailable(reason)) => {
            println!("skipped: {reason}");
            return Ok(());
        }
        other => other?,
    };
    let add_one = functions
        .first()
        .ok_or_else(|| GenieError::Internal("add_one did not load".into()))?;
    let host: Vec<u32> = (0..1_000_000).collect();
    let mut values = stream.clone_htod(&host).map_err(cuda_err)?;
    let n = host.len() as u32;
    // SAFETY: `add_one(u32*, u32)` reads and writes the `n` values of `values`, no more.
    unsafe {
        stream
            .launch_builder(add_one)
            .arg(&mut values)
            .arg(&n)
            .launch(LaunchConfig::for_num_elems(n))
            .map_err(cuda_err)?;
    }
    let back = stream.clone_dtoh(&values).map_err(cuda_err)?;
    stream.synchronize().map_err(cuda_err)?;
    let wrong = back
        .iter()
        .zip(&host)
        .filter(|(b, h)| **b != *h + 1)
        .count();
    if wrong > 0 {
        return Err(GenieError::Internal(format!(
            "add_one: {wrong} of {n} values wrong"
        )));
    }
    println!("add_one.cu on GPU 0: {n} values, each one more");
    Ok(())
}

#[cfg(not(feature = "cuda"))]
fn main() {
    let _ = &ADD_ONE;
    println!("skipped: genie-core was built without the `cuda` feature");
}
