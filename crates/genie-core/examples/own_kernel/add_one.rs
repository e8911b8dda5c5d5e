//! The kernel module of the `own_kernel` example (also loaded by the root package's
//! `tests/kernels.rs`).

use genie_core::backend::kernels::{KernelModule, COMMON_HEADER};

/// A module as a plugin crate outside the engine declares one: its own source after the shared
/// header, no build made ahead (NVRTC compiles it). `add_one(u32* xs, u32 n)` adds 1 to each of
/// the `n` values of `xs`.
pub static ADD_ONE: KernelModule = KernelModule {
    name: "add_one.cu",
    parts: &[
        COMMON_HEADER,
        r#"
extern "C" __global__ void add_one(u32* xs, u32 n) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        xs[i] += 1;
    }
}
"#,
    ],
    entry_points: &["add_one"],
    builds: &[],
};
