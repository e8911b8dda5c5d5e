//! One conformance suite, instantiated per backend: the CPU runs everywhere; the CUDA backend runs
//! where a GPU is usable and otherwise prints `skipped: <reason>`.

#![allow(clippy::unwrap_used)]

#[path = "common/cases.rs"]
mod conformance;

use genie_core::backend::cuda::PostingsForm;
use genie_core::backend::ResidentIndex;
use genie_core::{Backend, CpuBackend, CudaBackend, InvertedIndex};
use std::sync::Arc;

fn cpu() -> Option<Box<dyn Backend>> {
    Some(Box::new(CpuBackend::new()))
}

/// The GPU with its List Arrays in `form`, or why there is none (printed).
fn gpu_with(form: PostingsForm) -> Option<Box<dyn Backend>> {
    match CudaBackend::new(0) {
        Ok(b) => Some(Box::new(b.with_postings(form))),
        Err(e) => {
            conformance::skip(format!(
                "{} ({e})",
                std::thread::current().name().unwrap_or("gpu")
            ));
            None
        }
    }
}

/// The GPU as it chooses the form of the postings.
fn gpu() -> Option<Box<dyn Backend>> {
    gpu_with(PostingsForm::Auto)
}

/// The GPU reading every List Array packed in blocks.
fn gpu_packed() -> Option<Box<dyn Backend>> {
    gpu_with(PostingsForm::Packed)
}

/// The GPU reading every List Array as plain ids.
fn gpu_plain() -> Option<Box<dyn Backend>> {
    gpu_with(PostingsForm::Plain)
}

/// A backend given every index with its List Array packed, as a packed index file holds it.
struct PackedFiles(Box<dyn Backend>);

impl Backend for PackedFiles {
    fn name(&self) -> String {
        format!("{} (packed index files)", self.0.name())
    }
    fn memory_budget(&self) -> u64 {
        self.0.memory_budget()
    }
    fn gpu_ordinal(&self) -> Option<usize> {
        self.0.gpu_ordinal()
    }
    fn upload(&self, index: Arc<InvertedIndex>) -> genie_core::Result<Box<dyn ResidentIndex>> {
        let packed = (*index).clone().into_packed();
        assert!(packed.list_array().packed().is_some() || index.num_postings() == 0);
        self.0.upload(Arc::new(packed))
    }
}

/// The CPU given packed index files (unpacked on the host at the first search).
fn cpu_packed_file() -> Option<Box<dyn Backend>> {
    Some(Box::new(PackedFiles(cpu()?)))
}

/// The GPU given packed index files, choosing the form (plain: unpacked on the device).
fn gpu_packed_file() -> Option<Box<dyn Backend>> {
    Some(Box::new(PackedFiles(gpu()?)))
}

/// The GPU given packed index files and keeping them packed.
fn gpu_packed_file_kept() -> Option<Box<dyn Backend>> {
    Some(Box::new(PackedFiles(gpu_packed()?)))
}

macro_rules! conformance_suite {
    ($backend:ident: $($case:ident),* $(,)?) => {
        mod $backend {
            $(
                #[test]
                fn $case() {
                    if let Some(b) = super::$backend() {
                        super::conformance::$case(b.as_ref());
                    }
                }
            )*
        }
    };
}

macro_rules! all_cases {
    ($backend:ident) => {
        conformance_suite!($backend:
            paper_example,
            random_seeds,
            tiny_tables_force_reruns,
            many_ties,
            k_larger_than_matches,
            weights_and_overlapping_ranges,
            one_hot_keyword,
            one_query,
            ten_thousand_queries,
            ten_million_objects,
            parts_equal_one_part,
            part_boundary_inside_ties,
            two_gpus_equal_one_part,
            wide_count_bounds,
            many_lists_per_query,
            many_short_lists_over_tiles,
            masked_random_seeds,
            masked_tiles_and_dense_lists,
            masked_parts,
        );
    };
}

all_cases!(cpu);
all_cases!(gpu);
all_cases!(gpu_packed);
all_cases!(gpu_plain);
all_cases!(cpu_packed_file);
all_cases!(gpu_packed_file);
all_cases!(gpu_packed_file_kept);
