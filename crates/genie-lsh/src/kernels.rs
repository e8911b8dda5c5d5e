//! This crate's GPU kernels, as data ([`genie_core::backend::kernels::KernelModule`]):
//! `kernels/lsh.cu` (LSH hashing) and `kernels/vectors.cu` (re-rank distances, a codebook index's
//! scan and planning, nearest centres), each after genie-core's shared header, with their builds
//! made ahead for sm_90 in `kernels/shipped/` (listed in the `MANIFEST` there). The launchers are in [`crate::gpu`].

use genie_core::backend::kernels::{KernelModule, ShippedBuild, COMMON_HEADER, SHIPPED_ARCH};

/// This crate's `kernels/shipped/MANIFEST`.
const MANIFEST: &str = include_str!("../kernels/shipped/MANIFEST");

/// `kernels/lsh.cu`: LSH hashing (projections, sign projections, random binning) with
/// CPU-identical signatures.
pub static LSH: KernelModule = KernelModule {
    name: "lsh.cu",
    parts: &[COMMON_HEADER, include_str!("../kernels/lsh.cu")],
    entry_points: &["project_hash", "sign_hash", "binning_hash"],
    builds: &[ShippedBuild::listed(
        MANIFEST,
        "lsh.cu",
        SHIPPED_ARCH,
        include_bytes!("../kernels/shipped/lsh.sm_90.cubin"),
    )],
};

/// `kernels/vectors.cu` and its part `kernels/codebook_scan.cuh`: the kernels of vectors resident
/// on a GPU (re-rank distances, a codebook index's scan and planning, nearest centres), in the
/// order [`crate::gpu::GpuVectors`] takes them.
pub static VECTORS: KernelModule = KernelModule {
    name: "vectors.cu",
    parts: &[
        COMMON_HEADER,
        include_str!("../kernels/vectors.cu"),
        include_str!("../kernels/codebook_scan.cuh"),
    ],
    entry_points: &[
        "rerank_distance",
        "codebook_scan",
        "rank_top_k",
        "nearest_scores",
        "smallest_rows",
        "codebook_picks",
        "codeword_products",
        "object_terms",
        "rerank_compact",
    ],
    builds: &[ShippedBuild::listed(
        MANIFEST,
        "vectors.cu",
        SHIPPED_ARCH,
        include_bytes!("../kernels/shipped/vectors.sm_90.cubin"),
    )],
};

/// This crate's kernel modules (its `kernels/` folder).
pub static MODULES: [&KernelModule; 2] = [&LSH, &VECTORS];

#[cfg(test)]
mod tests {
    use super::*;
    use genie_core::backend::kernels::manifest_hash;

    #[test]
    fn each_source_hashes_as_its_shipped_build_was_made_from() {
        for module in MODULES {
            assert_eq!(
                manifest_hash(MANIFEST, module.name, SHIPPED_ARCH),
                Some(module.source_hash()),
                "{}",
                module.name
            );
            assert!(module.shipped(SHIPPED_ARCH).is_some(), "{}", module.name);
            assert!(module.shipped("sm_80").is_none());
        }
    }
}
