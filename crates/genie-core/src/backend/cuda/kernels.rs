//! Kernels are data (CONVENTIONS.md 2): the `.cu` sources of `kernels/`, embedded, compiled once
//! per context by NVRTC for the device's architecture, PTX cached on disk keyed by the source's
//! hash and the architecture. A compile error names the kernel and carries NVRTC's log.
//!
//! For Hopper (sm_90: H100, H200) the binary also carries each kernel built ahead (CUBIN, in
//! `kernels/shipped/`), so a first search on a fresh machine loads it in milliseconds instead of
//! compiling for seconds. A shipped build is used only while its source's hash is the source's
//! (a test keeps them in step; `cargo test --test kernels -- --ignored ship` rebuilds them).

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

/// The architecture the shipped builds are for.
pub const SHIPPED_ARCH: &str = "sm_90";

/// `kernels/shipped/MANIFEST`: a line per shipped build, `FILE ARCH CRC32-OF-SOURCE`.
pub const SHIPPED_MANIFEST: &str = include_str!("../../../../../kernels/shipped/MANIFEST");

/// The hash that keys a kernel's builds: CRC-32 of its source.
pub fn source_hash(kernel: Kernel) -> u32 {
    crc32fast::hash(kernel.source().as_bytes())
}

/// Whether NVRTC may compile kernels: installed, and not turned off by `GENIE_NVRTC=off` (then
/// the shipped builds alone serve: for a machine whose NVRTC is broken, or to check them).
pub fn nvrtc_available() -> bool {
    if std::env::var_os("GENIE_NVRTC").is_some_and(|v| v == "off") {
        return false;
    }
    // SAFETY: only tries to load the library.
    #[cfg(feature = "cuda")]
    return unsafe { cudarc::nvrtc::sys::is_culib_present() };
    #[cfg(not(feature = "cuda"))]
    false
}

/// Why NVRTC cannot compile (when [`nvrtc_available`] is false).
#[cfg(feature = "cuda")]
pub(crate) fn nvrtc_missing() -> &'static str {
    if std::env::var_os("GENIE_NVRTC").is_some_and(|v| v == "off") {
        "NVRTC is turned off (GENIE_NVRTC=off)"
    } else {
        "NVRTC (libnvrtc) is not installed"
    }
}

/// The CUBIN of `kernel` built ahead for `arch`, when one ships for this very source.
pub fn shipped(kernel: Kernel, arch: &str) -> Option<&'static [u8]> {
    let bytes: &'static [u8] = match kernel {
        Kernel::Cpq => include_bytes!("../../../../../kernels/shipped/cpq.sm_90.cubin"),
        Kernel::Bench => include_bytes!("../../../../../kernels/shipped/bench.sm_90.cubin"),
        Kernel::Lsh => include_bytes!("../../../../../kernels/shipped/lsh.sm_90.cubin"),
        Kernel::Seq => include_bytes!("../../../../../kernels/shipped/seq.sm_90.cubin"),
    };
    let current = SHIPPED_MANIFEST.lines().any(|line| {
        let mut f = line.split_whitespace();
        f.next() == Some(kernel.name())
            && f.next() == Some(arch)
            && f.next().and_then(|h| u32::from_str_radix(h, 16).ok()) == Some(source_hash(kernel))
    });
    (arch == SHIPPED_ARCH && current && !bytes.is_empty()).then_some(bytes)
}

/// Loads `kernel` into `ctx` for `arch`: its shipped build when there is one for this source and
/// architecture and it loads, else PTX from the disk cache or NVRTC.
#[cfg(feature = "cuda")]
pub fn load(
    ctx: &std::sync::Arc<cudarc::driver::CudaContext>,
    kernel: Kernel,
    arch: &str,
) -> Result<std::sync::Arc<cudarc::driver::CudaModule>> {
    use cudarc::nvrtc::Ptx;
    if let Some(cubin) = shipped(kernel, arch) {
        match ctx.load_module(Ptx::from_binary(cubin.to_vec())) {
            Ok(module) => return Ok(module),
            Err(e) => log::debug!(
                "the shipped build of {} for {arch} did not load ({e}): compiling",
                kernel.name()
            ),
        }
    }
    ctx.load_module(Ptx::from_src(ptx_for(kernel, arch)?))
        .map_err(super::cuda_err)
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

/// NVRTC's options for `arch`: the same for the run-time PTX and the shipped CUBINs.
#[cfg(feature = "cuda")]
fn nvrtc_options(arch: &str) -> Vec<String> {
    vec![format!("--gpu-architecture={arch}"), "--std=c++17".into()]
}

/// Compiles `kernel` for `arch` with NVRTC (no cache, no device needed).
pub fn compile(kernel: Kernel, arch: &str) -> Result<String> {
    compile_source(kernel.name(), kernel.source(), arch)
}

/// Compiles CUDA C++ `source` named `name` for `arch` with NVRTC.
#[cfg(feature = "cuda")]
pub fn compile_source(name: &str, source: &str, arch: &str) -> Result<String> {
    if !nvrtc_available() {
        return Err(GenieError::GpuUnavailable(nvrtc_missing().into()));
    }
    let opts = cudarc::nvrtc::CompileOptions {
        options: nvrtc_options(arch),
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

/// Compiles `kernel` with NVRTC into a CUBIN for the real architecture `arch` (e.g. `sm_90`), as
/// shipped in `kernels/shipped/`.
#[cfg(feature = "cuda")]
pub fn compile_cubin(kernel: Kernel, arch: &str) -> Result<Vec<u8>> {
    use cudarc::nvrtc::{result, sys};
    use std::ffi::{CStr, CString};
    if !nvrtc_available() {
        return Err(GenieError::GpuUnavailable(nvrtc_missing().into()));
    }
    let failed = |log: String| GenieError::KernelCompile {
        kernel: kernel.name().into(),
        log,
    };
    let src =
        CString::new(kernel.source()).map_err(|_| failed("a NUL byte in the source".into()))?;
    let name = CString::new(kernel.name()).map_err(|_| failed("a NUL byte in the name".into()))?;
    let prog = result::create_program(&src, Some(&name)).map_err(|e| failed(e.to_string()))?;
    let options = nvrtc_options(arch);
    // SAFETY: `prog` is a live program until destroyed below; the buffers are sized by NVRTC.
    let out = unsafe {
        match result::compile_program(prog, &options) {
            Err(e) => Err(failed(match result::get_program_log(prog) {
                Ok(log) => CStr::from_ptr(log.as_ptr()).to_string_lossy().into_owned(),
                Err(_) => e.to_string(),
            })),
            Ok(()) => {
                let mut size = 0usize;
                sys::nvrtcGetCUBINSize(prog, &mut size)
                    .result()
                    .map_err(|e| failed(e.to_string()))
                    .and_then(|()| {
                        let mut cubin = vec![0u8; size];
                        sys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr().cast())
                            .result()
                            .map(|()| cubin)
                            .map_err(|e| failed(e.to_string()))
                    })
            }
        }
    };
    // SAFETY: created above, not used after.
    let _ = unsafe { result::destroy_program(prog) };
    out
}

/// Without the `cuda` feature there is no NVRTC.
#[cfg(not(feature = "cuda"))]
pub fn compile_cubin(kernel: Kernel, arch: &str) -> Result<Vec<u8>> {
    let _ = (kernel, arch);
    Err(GenieError::GpuUnavailable(
        "built without the `cuda` feature".into(),
    ))
}

/// Without the `cuda` feature there is no NVRTC.
#[cfg(not(feature = "cuda"))]
pub fn compile_source(name: &str, source: &str, arch: &str) -> Result<String> {
    let _ = (name, source, arch, cache_dir());
    Err(GenieError::GpuUnavailable(
        "built without the `cuda` feature".into(),
    ))
}
