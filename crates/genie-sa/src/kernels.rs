//! This crate's GPU kernels, as data ([`genie_core::backend::kernels::KernelModule`]):
//! `kernels/seq.cu` (edit distances of resident sequences, bit-parallel), after genie-core's shared
//! header, with its build made ahead for sm_90 in `kernels/shipped/` (listed in the `MANIFEST`
//! there). The launcher is [`crate::gpu::GpuSequences`].

use genie_core::backend::kernels::{KernelModule, ShippedBuild, COMMON_HEADER, SHIPPED_ARCH};

/// This crate's `kernels/shipped/MANIFEST`.
const MANIFEST: &str = include_str!("../kernels/shipped/MANIFEST");

/// `kernels/seq.cu`: edit distances of resident sequences (bit-parallel).
pub static SEQ: KernelModule = KernelModule {
    name: "seq.cu",
    parts: &[COMMON_HEADER, include_str!("../kernels/seq.cu")],
    entry_points: &["seq_nearest", "seq_distances"],
    builds: &[ShippedBuild::listed(
        MANIFEST,
        "seq.cu",
        SHIPPED_ARCH,
        include_bytes!("../kernels/shipped/seq.sm_90.cubin"),
    )],
};

/// This crate's kernel modules (its `kernels/` folder).
pub static MODULES: [&KernelModule; 1] = [&SEQ];

#[cfg(test)]
mod tests {
    use super::*;
    use genie_core::backend::kernels::manifest_hash;

    #[test]
    fn the_source_hashes_as_its_shipped_build_was_made_from() {
        // the hash of the source as it was before the move into this crate: the shipped CUBIN
        // is of this very text
        assert_eq!(SEQ.source_hash(), 0x070a09ea);
        assert_eq!(
            manifest_hash(MANIFEST, "seq.cu", SHIPPED_ARCH),
            Some(SEQ.source_hash())
        );
        assert!(SEQ.shipped(SHIPPED_ARCH).is_some());
        assert!(SEQ.shipped("sm_80").is_none());
    }
}
