//! Kernels are data (CONVENTIONS.md 2): every crate with code for a GPU declares its CUDA C++
//! sources as [`KernelModule`] values beside its launchers (this crate's are [`CPQ`] and
//! [`BENCH`], in its `kernels/` folder). A module is compiled by NVRTC for the device's
//! architecture, its PTX cached on disk keyed by the source's hash and the architecture, and
//! loaded once per context ([`load`]). A compile error names the module and carries NVRTC's log.
//!
//! For Hopper (sm_90: H100, H200) a module also carries its build made ahead (CUBIN, in its
//! crate's `kernels/shipped/`, listed in the `MANIFEST` there as `FILE ARCH CRC32-OF-SOURCE`), so a
//! first search on a fresh machine loads it in milliseconds instead of compiling for seconds. A
//! shipped build is used only while its source's hash is the source's (the workspace's
//! `tests/kernels.rs` keeps them in step; `cargo test --test kernels -- --ignored ship` rebuilds
//! them).

#[cfg(not(feature = "cuda"))]
use crate::error::GenieError;
use crate::error::Result;
use std::borrow::Cow;
use std::path::PathBuf;

/// `kernels/common.cuh`: the types and the hash finalizer every kernel shares, the first part of
/// each module's source (other crates' modules prepend it too).
pub const COMMON_HEADER: &str = include_str!("../../../kernels/common.cuh");

/// The architecture the shipped builds are for.
pub const SHIPPED_ARCH: &str = "sm_90";

/// A build of a module made ahead for one architecture.
#[derive(Clone, Copy)]
pub struct ShippedBuild {
    /// The architecture, e.g. `sm_90`.
    pub arch: &'static str,
    /// The CUBIN (embedded with `include_bytes!`).
    pub cubin: &'static [u8],
    /// CRC-32 of the source it was built from; `None` (not listed) is never used.
    pub source_hash: Option<u32>,
}

impl ShippedBuild {
    /// The CUBIN `cubin` of `file` for `arch`, built from the source whose hash the crate's
    /// `manifest` (its `kernels/shipped/MANIFEST`) lists for them.
    pub const fn listed(
        manifest: &str,
        file: &str,
        arch: &'static str,
        cubin: &'static [u8],
    ) -> Self {
        Self {
            arch,
            cubin,
            source_hash: manifest_hash(manifest, file, arch),
        }
    }
}

impl std::fmt::Debug for ShippedBuild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShippedBuild")
            .field("arch", &self.arch)
            .field("bytes", &self.cubin.len())
            .field("source_hash", &self.source_hash.map(|h| format!("{h:08x}")))
            .finish()
    }
}

/// A kernel module as a crate declares it (a `static`): a CUDA C++ source, its entry points and
/// its builds made ahead. Loaded by [`load`] (or `cuda::open_module`), compiled by [`compile`].
#[derive(Clone, Copy)]
pub struct KernelModule {
    /// The file name (`cpq.cu`): the program's name for NVRTC, errors and the PTX disk cache.
    pub name: &'static str,
    /// The source in parts, concatenated: [`COMMON_HEADER`], then the file.
    pub parts: &'static [&'static str],
    /// The `extern "C"` entry points.
    pub entry_points: &'static [&'static str],
    /// Its builds made ahead (none: always compiled by NVRTC).
    pub builds: &'static [ShippedBuild],
}

impl std::fmt::Debug for KernelModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelModule")
            .field("name", &self.name)
            .field("source_hash", &format!("{:08x}", self.source_hash()))
            .field("entry_points", &self.entry_points)
            .field("builds", &self.builds)
            .finish()
    }
}

impl KernelModule {
    /// The CUDA C++ source: the parts one after the other.
    pub fn source(&self) -> Cow<'static, str> {
        match self.parts {
            [one] => Cow::Borrowed(one),
            parts => Cow::Owned(parts.concat()),
        }
    }

    /// The hash that keys the module's builds: CRC-32 of its source.
    pub fn source_hash(&self) -> u32 {
        let mut h = crc32fast::Hasher::new();
        for part in self.parts {
            h.update(part.as_bytes());
        }
        h.finalize()
    }

    /// The CUBIN built ahead for `arch`, when one ships for this very source.
    pub fn shipped(&self, arch: &str) -> Option<&'static [u8]> {
        let hash = self.source_hash();
        self.builds
            .iter()
            .find(|b| b.arch == arch && b.source_hash == Some(hash) && !b.cubin.is_empty())
            .map(|b| b.cubin)
    }
}

/// This crate's `kernels/shipped/MANIFEST`.
const MANIFEST: &str = include_str!("../../../kernels/shipped/MANIFEST");

/// `kernels/cpq.cu` and its part `kernels/cpq_tiles.cuh` (the tiled count; one module): c-PQ
/// and count-table match and select (each match kernel also reading packed postings: the
/// `_packed` entry points).
pub static CPQ: KernelModule = KernelModule {
    name: "cpq.cu",
    parts: &[
        COMMON_HEADER,
        include_str!("../../../kernels/cpq.cu"),
        include_str!("../../../kernels/cpq_tiles.cuh"),
    ],
    entry_points: &[
        "cpq_init",
        "cpq_match",
        "cpq_match_packed",
        "cpq_select",
        "ct_match",
        "ct_match_packed",
        "ct_select",
        "tile_match",
        "tile_match_packed",
        "tile_match16",
        "tile_match16_packed",
        "tile_match_wide",
        "tile_match_wide_packed",
        "tile_match16_wide",
        "tile_match16_wide_packed",
    ],
    builds: &[ShippedBuild::listed(
        MANIFEST,
        "cpq.cu",
        SHIPPED_ARCH,
        include_bytes!("../../../kernels/shipped/cpq.sm_90.cubin"),
    )],
};

/// `kernels/bench.cu`: microbenchmarks of the hardware ceilings.
pub static BENCH: KernelModule = KernelModule {
    name: "bench.cu",
    parts: &[COMMON_HEADER, include_str!("../../../kernels/bench.cu")],
    entry_points: &["random_atomic_add", "shared_tile_add"],
    builds: &[ShippedBuild::listed(
        MANIFEST,
        "bench.cu",
        SHIPPED_ARCH,
        include_bytes!("../../../kernels/shipped/bench.sm_90.cubin"),
    )],
};

/// This crate's kernel modules (its `kernels/` folder).
pub static MODULES: [&KernelModule; 2] = [&CPQ, &BENCH];

/// The hash a `MANIFEST` lists for `file` and `arch`: the third field of the first line whose
/// first two are they (fields split by whitespace, the hash in hex), or `None`.
pub const fn manifest_hash(manifest: &str, file: &str, arch: &str) -> Option<u32> {
    let m = manifest.as_bytes();
    let mut start = 0;
    while start < m.len() {
        let mut end = start;
        while end < m.len() && m[end] != b'\n' {
            end += 1;
        }
        let (a, b) = token(m, start, end);
        if same(m, a, b, file.as_bytes()) {
            let (c, d) = token(m, b, end);
            if same(m, c, d, arch.as_bytes()) {
                let (e, f) = token(m, d, end);
                if let Some(h) = hex(m, e, f) {
                    return Some(h);
                }
            }
        }
        start = end + 1;
    }
    None
}

/// The next whitespace-separated token of `m[from..end]`, as its bounds (empty at the end).
const fn token(m: &[u8], from: usize, end: usize) -> (usize, usize) {
    let mut a = from;
    while a < end && m[a].is_ascii_whitespace() {
        a += 1;
    }
    let mut b = a;
    while b < end && !m[b].is_ascii_whitespace() {
        b += 1;
    }
    (a, b)
}

/// Whether `m[a..b]` is `want`.
const fn same(m: &[u8], a: usize, b: usize, want: &[u8]) -> bool {
    if b - a != want.len() {
        return false;
    }
    let mut i = 0;
    while i < want.len() {
        if m[a + i] != want[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// `m[a..b]` as a hexadecimal `u32` (1 to 8 digits).
const fn hex(m: &[u8], a: usize, b: usize) -> Option<u32> {
    if b == a || b - a > 8 {
        return None;
    }
    let mut v = 0u32;
    let mut i = a;
    while i < b {
        let d = match m[i] {
            c @ b'0'..=b'9' => c - b'0',
            c @ b'a'..=b'f' => c - b'a' + 10,
            c @ b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | d as u32;
        i += 1;
    }
    Some(v)
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

#[cfg(feature = "cuda")]
mod load;
#[cfg(feature = "cuda")]
pub use load::{compile_cubin, compile_source, load, ptx_for};

/// Compiles `module` for `arch` with NVRTC into PTX (no cache, no device needed).
pub fn compile(module: &KernelModule, arch: &str) -> Result<String> {
    compile_source(module.name, &module.source(), arch)
}

/// The device cache: where compiled PTX is kept (and what this machine's devices measured, such
/// as `genie search`'s GPU start times): `GENIE_CACHE_DIR`, else `$XDG_CACHE_HOME/genie`, else
/// `~/.cache/genie`.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("GENIE_CACHE_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("genie"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("genie"))
}

/// Without the `cuda` feature there is no NVRTC.
#[cfg(not(feature = "cuda"))]
pub fn compile_cubin(module: &KernelModule, arch: &str) -> Result<Vec<u8>> {
    let _ = (module, arch);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sources_hash_as_their_shipped_builds_were_made_from() {
        // the hashes of the sources the shipped CUBINs were made from: a kernel's change re-ships
        // its CUBIN (`cargo test --test kernels -- --ignored ship`) and updates its hash here
        // (cpq.cu: each match kernel also for packed postings, the lists indexed in 32 bits and
        // fetched ahead, dense bitmaps set from the postings, the tiles' lists found once a job
        // and their end pass four words a thread, the tiles' candidates kept as a list, the tie
        // fill eight words a thread; bench.cu: the shared-tile ceiling)
        assert_eq!(CPQ.source_hash(), 0x46643476);
        assert_eq!(BENCH.source_hash(), 0x714b2c5d);
        for module in MODULES {
            let listed = manifest_hash(MANIFEST, module.name, SHIPPED_ARCH);
            assert_eq!(listed, Some(module.source_hash()), "{}", module.name);
            assert!(module.shipped(SHIPPED_ARCH).is_some(), "{}", module.name);
            assert!(module.shipped("sm_80").is_none(), "{}", module.name);
            assert_eq!(module.source(), module.parts.concat());
            assert_eq!(module.parts[0], COMMON_HEADER);
        }
    }

    #[test]
    fn manifest_lines_are_read_field_by_field() {
        let m = "# FILE ARCH CRC\na.cu sm_90 0000000f\n  b.cu\tsm_90   DEADbeef  \nb.cu sm_80 1\n";
        assert_eq!(manifest_hash(m, "a.cu", "sm_90"), Some(15));
        assert_eq!(manifest_hash(m, "b.cu", "sm_90"), Some(0xdeadbeef));
        assert_eq!(manifest_hash(m, "b.cu", "sm_80"), Some(1));
        assert_eq!(manifest_hash(m, "a.cu", "sm_80"), None);
        assert_eq!(manifest_hash(m, "a.c", "sm_90"), None);
        assert_eq!(manifest_hash("c.cu sm_90 123456789", "c.cu", "sm_90"), None);
        assert_eq!(manifest_hash("c.cu sm_90 xyz", "c.cu", "sm_90"), None);
        assert_eq!(manifest_hash("c.cu sm_90", "c.cu", "sm_90"), None);
        // a build not listed is never used, whatever its bytes
        static UNLISTED: KernelModule = KernelModule {
            name: "c.cu",
            parts: &["x"],
            entry_points: &[],
            builds: &[ShippedBuild::listed("", "c.cu", SHIPPED_ARCH, b"cubin")],
        };
        assert!(UNLISTED.shipped(SHIPPED_ARCH).is_none());
        assert_eq!(UNLISTED.source(), "x");
    }
}
