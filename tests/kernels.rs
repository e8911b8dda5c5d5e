//! The kernel modules of every crate (genie-core's, genie-lsh's, genie-sa's): each compiles with
//! NVRTC for the Hopper architecture (sm_90) and for sm_80, without a GPU; each ships a build for
//! Hopper made from its current source, listed in its crate's `kernels/shipped/MANIFEST`; and a
//! module declared outside the engine loads and runs through the public API. CI installs NVRTC
//! from PyPI and sets GENIE_REQUIRE_NVRTC=1, so there a missing library is a failure, not a skip.

#![allow(clippy::unwrap_used)]

use genie_core::backend::kernels::{
    compile, manifest_hash, KernelModule, COMMON_HEADER, SHIPPED_ARCH,
};
use genie_core::GenieError;
use std::path::{Path, PathBuf};

/// Every crate with kernels: its folder (from the workspace's root) and its modules.
fn crates() -> [(&'static str, &'static [&'static KernelModule]); 3] {
    [
        ("crates/genie-core", &genie_core::backend::kernels::MODULES),
        ("crates/genie-lsh", &genie_lsh::kernels::MODULES),
        ("crates/genie-sa", &genie_sa::kernels::MODULES),
    ]
}

/// Every kernel module of every crate.
fn modules() -> impl Iterator<Item = &'static KernelModule> {
    crates().into_iter().flat_map(|(_, m)| m.iter().copied())
}

/// A crate's `kernels/` folder.
fn kernels_dir(krate: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(krate)
        .join("kernels")
}

fn nvrtc_required() -> bool {
    std::env::var("GENIE_REQUIRE_NVRTC").ok().as_deref() == Some("1")
}

#[test]
fn every_kernel_compiles_with_nvrtc() {
    for module in modules() {
        for arch in ["sm_90", "sm_80"] {
            match compile(module, arch) {
                Ok(ptx) => {
                    for entry in module.entry_points {
                        assert!(
                            ptx.contains(&format!(".entry {entry}(")),
                            "{} lacks entry {entry}",
                            module.name
                        );
                    }
                }
                Err(GenieError::GpuUnavailable(reason)) if !nvrtc_required() => {
                    skip(reason);
                    return;
                }
                Err(e) => panic!("{} for {arch}: {e}", module.name),
            }
        }
    }
}

#[test]
fn a_compile_error_names_the_kernel_and_carries_the_log() {
    // the real kernels compile (above); here a broken source must give a readable error
    let err = genie_core::backend::kernels::compile_source(
        "broken.cu",
        "extern \"C\" __global__ void f() { int x = ; }",
        "sm_90",
    );
    match err {
        Err(GenieError::KernelCompile { kernel, log }) => {
            assert_eq!(kernel, "broken.cu");
            assert!(log.contains("expected an expression"), "{log}");
        }
        Err(GenieError::GpuUnavailable(reason)) => skip(reason),
        other => panic!("expected a compile error, got {other:?}"),
    }
}

/// Reports a skipped test on stderr past the test harness's capture.
fn skip(reason: impl std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "skipped: {reason}");
}

/// Every kernel ships a build for Hopper made from its current source: a changed kernel without
/// a rebuilt CUBIN fails here (no NVRTC needed), since it would be compiled on every fresh machine.
/// Each crate's MANIFEST lists its own modules, and the bytes each module embeds are the CUBIN in
/// its crate's folder.
#[test]
fn the_shipped_builds_are_of_the_current_sources() {
    for (krate, modules) in crates() {
        let shipped = kernels_dir(krate).join("shipped");
        let manifest = std::fs::read_to_string(shipped.join("MANIFEST")).unwrap();
        for module in modules {
            let hash = module.source_hash();
            assert_eq!(
                manifest_hash(&manifest, module.name, SHIPPED_ARCH),
                Some(hash),
                "{krate}/kernels/shipped/MANIFEST lists no build of {} (hash {hash:08x}) for \
                 {SHIPPED_ARCH}: run `cargo test --test kernels -- --ignored ship` where NVRTC is \
                 installed, and commit the crates' kernels/shipped",
                module.name
            );
            let cubin = module
                .shipped(SHIPPED_ARCH)
                .unwrap_or_else(|| panic!("{} embeds no build for {SHIPPED_ARCH}", module.name));
            let on_disk = std::fs::read(shipped.join(cubin_file(module))).unwrap();
            assert!(
                on_disk == cubin,
                "{}: another CUBIN is embedded",
                module.name
            );
            assert!(
                module.shipped("sm_80").is_none(),
                "only {SHIPPED_ARCH} ships"
            );
            assert!(
                module.source().starts_with(COMMON_HEADER),
                "{}: the shared header first",
                module.name
            );
        }
        // no build listed for a module the crate does not declare, no source without a module
        for line in manifest.lines().filter(|l| !l.starts_with('#')) {
            let file = line.split_whitespace().next().unwrap_or_default();
            assert!(
                modules.iter().any(|m| m.name == file),
                "{krate}: MANIFEST lists {file}, not a module of the crate"
            );
        }
        for entry in std::fs::read_dir(kernels_dir(krate)).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".cu") {
                assert!(
                    modules.iter().any(|m| m.name == name),
                    "{krate}/kernels/{name} is not a module of the crate"
                );
            }
        }
    }
}

/// The file name of a module's shipped CUBIN.
fn cubin_file(module: &KernelModule) -> String {
    let stem = module.name.trim_end_matches(".cu");
    format!("{stem}.{SHIPPED_ARCH}.cubin")
}

/// Rebuilds every crate's `kernels/shipped/` with NVRTC (run on demand: `-- --ignored ship`).
#[test]
#[ignore = "writes the crates' kernels/shipped; run when a kernel changes"]
fn ship() {
    use genie_core::backend::kernels::compile_cubin;
    for (krate, modules) in crates() {
        let dir = kernels_dir(krate).join("shipped");
        let mut manifest = String::from(
            "# FILE ARCH CRC32-OF-SOURCE: the shipped builds (CUBIN) of this crate's kernels, made by\n\
             # `cargo test --test kernels -- --ignored ship` with NVRTC; used only while the hash is the source's\n",
        );
        for module in modules {
            let cubin = compile_cubin(module, SHIPPED_ARCH).unwrap();
            std::fs::write(dir.join(cubin_file(module)), &cubin).unwrap();
            manifest.push_str(&format!(
                "{} {SHIPPED_ARCH} {:08x}\n",
                module.name,
                module.source_hash()
            ));
            println!("{krate}: {}: {} bytes", module.name, cubin.len());
        }
        std::fs::write(dir.join("MANIFEST"), manifest).unwrap();
    }
}

/// The `own_kernel` example's module, as a plugin crate outside the engine declares one.
#[path = "../crates/genie-core/examples/own_kernel/add_one.rs"]
mod add_one;

use add_one::ADD_ONE;

#[test]
fn a_module_of_ones_own_loads_and_runs() {
    match compile(&ADD_ONE, "sm_90") {
        Ok(ptx) => assert!(ptx.contains(".entry add_one("), "{ptx}"),
        Err(GenieError::GpuUnavailable(reason)) if !nvrtc_required() => skip(reason),
        Err(e) => panic!("add_one.cu: {e}"),
    }
    run_add_one();
}

/// Loads [`ADD_ONE`] on GPU 0, adds one to an array there and checks it; skips (saying why)
/// without a GPU or NVRTC.
#[cfg(feature = "cuda")]
fn run_add_one() {
    use genie_core::backend::cuda::cudarc::driver::{LaunchConfig, PushKernelArg};
    use genie_core::backend::cuda::open_module;
    if let Err(reason) = genie_core::backend::cuda_probe() {
        return skip(reason);
    }
    let (ctx, f, s) = match open_module(0, &ADD_ONE, ADD_ONE.entry_points) {
        Err(GenieError::GpuUnavailable(reason)) if !nvrtc_required() => return skip(reason),
        other => other.unwrap(),
    };
    let host: Vec<u32> = (0..100_000).collect();
    let mut dev = s.clone_htod(&host).unwrap();
    let n = host.len() as u32;
    // SAFETY: `add_one(u32*, u32)` over the `n` values of `dev`.
    unsafe {
        s.launch_builder(&f[0])
            .arg(&mut dev)
            .arg(&n)
            .launch(LaunchConfig::for_num_elems(n))
            .unwrap();
    }
    let back = s.clone_dtoh(&dev).unwrap();
    s.synchronize().unwrap();
    assert!(back.iter().zip(&host).all(|(b, h)| *b == h + 1));
    // loaded once per context: a second load of the module shares the first
    let (major, minor) = ctx.compute_capability().unwrap();
    let arch = format!("sm_{major}{minor}");
    let a = genie_core::backend::kernels::load(&ctx, &ADD_ONE, &arch).unwrap();
    let b = genie_core::backend::kernels::load(&ctx, &ADD_ONE, &arch).unwrap();
    assert!(std::sync::Arc::ptr_eq(&a, &b));
}

#[cfg(not(feature = "cuda"))]
fn run_add_one() {
    skip("built without the `cuda` feature");
}
