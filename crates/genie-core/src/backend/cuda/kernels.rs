//! Kernels are data (CONVENTIONS.md 2): the `.cu` sources of `kernels/`, embedded, compiled once
//! per context by NVRTC for the device's architecture, PTX cached on disk keyed by the source's
//! hash and the architecture. A compile error names the kernel and carries NVRTC's log.

use crate::error::{GenieError, Result};
use std::path::PathBuf;

/// A kernel source file and its entry points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// `kernels/cpq.cu`: c-PQ and count-table match and select.
    Cpq,
    /// `kernels/bench.cu`: microbenchmarks of the hardware ceilings.
    Bench,
    /// `kernels/lsh.cu`: LSH hashing (projections, sign projections, random binning) with
    /// CPU-identical signatures.
    Lsh,
    /// `kernels/seq.cu`: edit distances of resident sequences (bit-parallel).
    Seq,
}

impl Kernel {
    /// Every kernel source.
    pub const ALL: [Kernel; 4] = [Kernel::Cpq, Kernel::Bench, Kernel::Lsh, Kernel::Seq];

    /// The file name.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Cpq => "cpq.cu",
            Kernel::Bench => "bench.cu",
            Kernel::Lsh => "lsh.cu",
            Kernel::Seq => "seq.cu",
        }
    }

    /// The CUDA C++ source (kernels/common.cuh, then the kernel's file).
    pub fn source(self) -> &'static str {
        match self {
            Kernel::Cpq => concat!(
                include_str!("../../../../../kernels/common.cuh"),
                include_str!("../../../../../kernels/cpq.cu")
            ),
            Kernel::Bench => concat!(
                include_str!("../../../../../kernels/common.cuh"),
                include_str!("../../../../../kernels/bench.cu")
            ),
            Kernel::Lsh => concat!(
                include_str!("../../../../../kernels/common.cuh"),
                include_str!("../../../../../kernels/lsh.cu")
            ),
            Kernel::Seq => concat!(
                include_str!("../../../../../kernels/common.cuh"),
                include_str!("../../../../../kernels/seq.cu")
            ),
        }
    }

    /// The `extern "C"` entry points.
    pub fn entry_points(self) -> &'static [&'static str] {
        match self {
            Kernel::Cpq => &[
                "cpq_init",
                "cpq_match",
                "cpq_select",
                "ct_match",
                "ct_select",
                "tile_match",
                "tile_match16",
                "tile_match_wide",
                "tile_match16_wide",
            ],
            Kernel::Bench => &["random_atomic_add"],
            Kernel::Lsh => &[
                "project_hash",
                "sign_hash",
                "binning_hash",
                "rerank_distance",
                "codebook_scan",
                "rank_top_k",
                "nearest_scores",
                "smallest_rows",
                "codebook_picks",
                "codeword_products",
                "object_terms",
            ],
            Kernel::Seq => &["seq_nearest", "seq_distances"],
        }
    }
}

fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("GENIE_CACHE_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("genie"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("genie"))
}

/// PTX of `kernel` for `arch` (e.g. `sm_90`), from the disk cache or compiled by NVRTC.
#[cfg(feature = "cuda")]
pub fn ptx_for(kernel: Kernel, arch: &str) -> Result<String> {
    let key = crc32fast::hash(kernel.source().as_bytes());
    let file = cache_dir().map(|d| d.join(format!("{}-{arch}-{key:08x}.ptx", kernel.name())));
    if let Some(Ok(ptx)) = file.as_ref().map(std::fs::read_to_string) {
        return Ok(ptx);
    }
    let ptx = compile(kernel, arch)?;
    if let Some(f) = file {
        // the cache is an optimisation: failing to write it is not an error
        let tmp = f.with_extension(format!("tmp{}", std::process::id()));
        let _ = f
            .parent()
            .map(std::fs::create_dir_all)
            .transpose()
            .and_then(|_| std::fs::write(&tmp, &ptx))
            .and_then(|_| std::fs::rename(&tmp, &f));
    }
    Ok(ptx)
}

/// Compiles `kernel` for `arch` with NVRTC (no cache, no device needed).
pub fn compile(kernel: Kernel, arch: &str) -> Result<String> {
    compile_source(kernel.name(), kernel.source(), arch)
}

/// Compiles CUDA C++ `source` named `name` for `arch` with NVRTC.
#[cfg(feature = "cuda")]
pub fn compile_source(name: &str, source: &str, arch: &str) -> Result<String> {
    // SAFETY: only tries to load the library.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(GenieError::GpuUnavailable(
            "NVRTC (libnvrtc) is not installed".into(),
        ));
    }
    let opts = cudarc::nvrtc::CompileOptions {
        options: vec![format!("--gpu-architecture={arch}"), "--std=c++17".into()],
        name: Some(name.into()),
        ..Default::default()
    };
    match cudarc::nvrtc::compile_ptx_with_opts(source, opts) {
        Ok(ptx) => Ok(ptx.to_src()),
        Err(cudarc::nvrtc::CompileError::CompileError { log, .. }) => {
            Err(GenieError::KernelCompile {
                kernel: name.into(),
                log: log.to_string_lossy().into_owned(),
            })
        }
        Err(e) => Err(GenieError::KernelCompile {
            kernel: name.into(),
            log: e.to_string(),
        }),
    }
}

/// Without the `cuda` feature there is no NVRTC.
#[cfg(not(feature = "cuda"))]
pub fn compile_source(name: &str, source: &str, arch: &str) -> Result<String> {
    let _ = (name, source, arch, cache_dir());
    Err(GenieError::GpuUnavailable(
        "built without the `cuda` feature".into(),
    ))
}
