//! This crate's GPU kernels, as data ([`genie_core::backend::kernels::KernelModule`]):
//! `kernels/lsh.cu` (LSH hashing, re-rank distances, a codebook index's scan and planning, nearest
//! centres), after genie-core's shared header, with its build made ahead for sm_90 in
//! `kernels/shipped/` (listed in the `MANIFEST` there). The launchers are in [`crate::gpu`].

use genie_core::backend::kernels::{KernelModule, ShippedBuild, COMMON_HEADER, SHIPPED_ARCH};

/// This crate's `kernels/shipped/MANIFEST`.
const MANIFEST: &str = include_str!("../kernels/shipped/MANIFEST");

/// The entries of `kernels/lsh.cu`: the three hashing kernels, then those of vectors resident on
/// a GPU ([`VECTOR_ENTRIES`]).
const ENTRY_POINTS: [&str; 11] = [
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
];

/// The entries of `kernels/lsh.cu` that [`crate::gpu::GpuVectors`] loads, in this order.
#[cfg(feature = "cuda")]
pub(crate) const VECTOR_ENTRIES: &[&str] = ENTRY_POINTS.split_at(3).1;

/// `kernels/lsh.cu`: LSH hashing (projections, sign projections, random binning) with
/// CPU-identical signatures, and the kernels of vectors resident on a GPU.
pub static LSH: KernelModule = KernelModule {
    name: "lsh.cu",
    parts: &[COMMON_HEADER, include_str!("../kernels/lsh.cu")],
    entry_points: &ENTRY_POINTS,
    builds: &[ShippedBuild::listed(
        MANIFEST,
        "lsh.cu",
        SHIPPED_ARCH,
        include_bytes!("../kernels/shipped/lsh.sm_90.cubin"),
    )],
};

/// This crate's kernel modules (its `kernels/` folder).
pub static MODULES: [&KernelModule; 1] = [&LSH];

#[cfg(test)]
mod tests {
    use super::*;
    use genie_core::backend::kernels::manifest_hash;

    #[test]
    fn the_source_hashes_as_its_shipped_build_was_made_from() {
        // the hash of the source as it was before the move into this crate: the shipped CUBIN
        // is of this very text
        assert_eq!(LSH.source_hash(), 0xf91b637a);
        assert_eq!(
            manifest_hash(MANIFEST, "lsh.cu", SHIPPED_ARCH),
            Some(LSH.source_hash())
        );
        assert!(LSH.shipped(SHIPPED_ARCH).is_some());
        assert!(LSH.shipped("sm_80").is_none());
    }
}
