//! Every kernel compiles with NVRTC for the Hopper architecture (sm_90) and for sm_80, without a
//! GPU. CI installs NVRTC from PyPI and sets GENIE_REQUIRE_NVRTC=1, so there a missing library is
//! a failure, not a skip.

#![allow(clippy::unwrap_used)]

use genie_core::backend::kernels::{compile, Kernel};
use genie_core::GenieError;

#[test]
fn every_kernel_compiles_with_nvrtc() {
    let required = std::env::var("GENIE_REQUIRE_NVRTC").ok().as_deref() == Some("1");
    for kernel in Kernel::ALL {
        for arch in ["sm_90", "sm_80"] {
            match compile(kernel, arch) {
                Ok(ptx) => {
                    for entry in kernel.entry_points() {
                        assert!(
                            ptx.contains(&format!(".entry {entry}(")),
                            "{} lacks entry {entry}",
                            kernel.name()
                        );
                    }
                }
                Err(GenieError::GpuUnavailable(reason)) if !required => {
                    skip(reason);
                    return;
                }
                Err(e) => panic!("{} for {arch}: {e}", kernel.name()),
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

/// `kernels/shipped/`, beside the workspace's `kernels/`.
fn shipped_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/shipped")
}

/// Every kernel ships a build for Hopper made from its current source: a changed kernel without
/// a rebuilt CUBIN fails here (no NVRTC needed), since it would be compiled on every fresh machine.
#[test]
fn the_shipped_builds_are_of_the_current_sources() {
    use genie_core::backend::kernels::{shipped, source_hash, SHIPPED_ARCH};
    for kernel in Kernel::ALL {
        assert!(
            shipped(kernel, SHIPPED_ARCH).is_some(),
            "kernels/shipped has no build of {} (hash {:08x}) for {SHIPPED_ARCH}: run `cargo test \
             --test kernels -- --ignored ship` where NVRTC is installed, and commit kernels/shipped",
            kernel.name(),
            source_hash(kernel)
        );
        assert!(
            shipped(kernel, "sm_80").is_none(),
            "only {SHIPPED_ARCH} ships"
        );
    }
}

/// Rebuilds `kernels/shipped/` with NVRTC (run on demand: `-- --ignored ship`).
#[test]
#[ignore = "writes kernels/shipped; run when a kernel changes"]
fn ship() {
    use genie_core::backend::kernels::{compile_cubin, source_hash, SHIPPED_ARCH};
    let dir = shipped_dir();
    let mut manifest = String::from(
        "# FILE ARCH CRC32-OF-SOURCE: the shipped builds (CUBIN) of the kernels, made by\n\
         # `cargo test --test kernels -- --ignored ship` with NVRTC; used only while the hash is the source's\n",
    );
    for kernel in Kernel::ALL {
        let cubin = compile_cubin(kernel, SHIPPED_ARCH).unwrap();
        let stem = kernel.name().trim_end_matches(".cu");
        std::fs::write(dir.join(format!("{stem}.{SHIPPED_ARCH}.cubin")), &cubin).unwrap();
        manifest.push_str(&format!(
            "{} {SHIPPED_ARCH} {:08x}\n",
            kernel.name(),
            source_hash(kernel)
        ));
        println!("{}: {} bytes", kernel.name(), cubin.len());
    }
    std::fs::write(dir.join("MANIFEST"), manifest).unwrap();
}
