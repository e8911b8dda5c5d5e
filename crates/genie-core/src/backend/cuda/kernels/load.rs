//! Loading a [`KernelModule`] into a context: its shipped build when one is of its source and
//! the device's architecture, else PTX from the disk cache or NVRTC; once per context, so that
//! every launcher of a context shares a loaded module.

use super::{cache_dir, nvrtc_available, nvrtc_missing, KernelModule};
use crate::backend::cuda::cuda_err;
use crate::error::{GenieError, Result};
use cudarc::driver::{CudaContext, CudaModule};
use std::sync::{Arc, Mutex, Weak};

/// A module loaded into a context: the context (its `Arc`'s address), the module's name and
/// source hash, and the module while anything holds it. A live module holds its context, so an
/// address whose module is alive is that very context.
type Loaded = (usize, &'static str, u32, Weak<CudaModule>);

/// The modules loaded and still held.
static LOADED: Mutex<Vec<Loaded>> = Mutex::new(Vec::new());

/// The module `module` of `ctx` loaded earlier and still held.
fn loaded(ctx: &Arc<CudaContext>, module: &KernelModule, hash: u32) -> Option<Arc<CudaModule>> {
    let at = Arc::as_ptr(ctx) as usize;
    let list = LOADED.lock().ok()?;
    list.iter()
        .filter(|(c, name, h, _)| *c == at && *name == module.name && *h == hash)
        .find_map(|(.., m)| m.upgrade())
}

/// Loads `module` into `ctx` for `arch` (the device's, e.g. `sm_90`), once per context: its
/// shipped build when there is one for this source and architecture and it loads, else PTX from
/// the disk cache or NVRTC. A module loaded into `ctx` and still held is shared.
pub fn load(ctx: &Arc<CudaContext>, module: &KernelModule, arch: &str) -> Result<Arc<CudaModule>> {
    let hash = module.source_hash();
    if let Some(m) = loaded(ctx, module, hash) {
        return Ok(m);
    }
    // loaded without the lock: devices open on threads of their own, at once
    let fresh = load_new(ctx, module, arch)?;
    let mut list = LOADED
        .lock()
        .map_err(|_| GenieError::Internal("the loaded kernels' lock is poisoned".into()))?;
    list.retain(|(.., m)| m.strong_count() > 0);
    let at = Arc::as_ptr(ctx) as usize;
    if let Some(m) = list
        .iter()
        .filter(|(c, name, h, _)| *c == at && *name == module.name && *h == hash)
        .find_map(|(.., m)| m.upgrade())
    {
        return Ok(m);
    }
    list.push((at, module.name, hash, Arc::downgrade(&fresh)));
    Ok(fresh)
}

/// Loads `module` into `ctx` for `arch` (no sharing).
fn load_new(ctx: &Arc<CudaContext>, module: &KernelModule, arch: &str) -> Result<Arc<CudaModule>> {
    use cudarc::nvrtc::Ptx;
    if let Some(cubin) = module.shipped(arch) {
        match ctx.load_module(Ptx::from_binary(cubin.to_vec())) {
            Ok(loaded) => return Ok(loaded),
            Err(e) => log::debug!(
                "the shipped build of {} for {arch} did not load ({e}): compiling",
                module.name
            ),
        }
    }
    ctx.load_module(Ptx::from_src(ptx_for(module, arch)?))
        .map_err(cuda_err)
}

/// PTX of `module` for `arch` (e.g. `sm_90`), from the disk cache or compiled by NVRTC.
pub fn ptx_for(module: &KernelModule, arch: &str) -> Result<String> {
    let key = module.source_hash();
    let file = cache_dir().map(|d| d.join(format!("{}-{arch}-{key:08x}.ptx", module.name)));
    if let Some(Ok(ptx)) = file.as_ref().map(std::fs::read_to_string) {
        return Ok(ptx);
    }
    let ptx = super::compile(module, arch)?;
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
fn nvrtc_options(arch: &str) -> Vec<String> {
    vec![format!("--gpu-architecture={arch}"), "--std=c++17".into()]
}

/// Compiles CUDA C++ `source` named `name` for `arch` with NVRTC.
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

/// Compiles `module` with NVRTC into a CUBIN for the real architecture `arch` (e.g. `sm_90`), as
/// shipped in its crate's `kernels/shipped/`.
pub fn compile_cubin(module: &KernelModule, arch: &str) -> Result<Vec<u8>> {
    use cudarc::nvrtc::{result, sys};
    use std::ffi::{CStr, CString};
    if !nvrtc_available() {
        return Err(GenieError::GpuUnavailable(nvrtc_missing().into()));
    }
    let failed = |log: String| GenieError::KernelCompile {
        kernel: module.name.into(),
        log,
    };
    let src = CString::new(module.source().into_owned())
        .map_err(|_| failed("a NUL byte in the source".into()))?;
    let name = CString::new(module.name).map_err(|_| failed("a NUL byte in the name".into()))?;
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
