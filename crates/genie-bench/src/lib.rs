//! The benchmark and chart programs of genie-rs (`genie-bench`, `genie-charts`), kept apart from
//! the product package. The library part holds what the benchmark writes for peer implementations:
//! [`dump`] writes an index, its queries and genie's top-k counts as NumPy files ([`npy`]) for
//! `bench/peers/torch_spmm.py --load`. [`charts`] draws the charts of the runs under `bench/runs/`
//! and the vector-search benchmark's recall/throughput charts ([`charts::ann`]); genie's rows on
//! those are measured by [`ann_genie`] (`--mode vectors`).
//! [`ann_e2lsh`] is `--mode ann`, [`vecs`] the `.fvecs`/`.ivecs` files shared with the peers.
//! [`write_keywords`] writes the SIFT-like keyword objects in every input format of `genie build`
//! (`--mode write-keywords`); [`cpu_suite`] times the CPU backend on the suite's keyword workloads
//! (`--mode cpu`, no GPU needed); [`kind_bench`] is `--mode kind`, [`workloads`] the generated
//! workloads of the modes. The modes sharing `genie-bench`'s own command line ([`bench_args`]) are
//! [`ceilings`], [`table`] (the default, on the [`synthetic`] workload), [`multiload`], [`scale`],
//! [`multigpu`], [`suite`] and `--mode serve` ([`serve_load`]); [`timed_search`] times their
//! batches.
#![deny(missing_docs)]

pub mod ann_e2lsh;
pub mod ann_genie;
pub mod bench_args;
pub mod ceilings;
pub mod charts;
pub mod check_speed;
pub mod cpu_suite;
pub mod csv_rows;
pub mod dump;
pub mod kind_bench;
pub mod live_bench;
pub mod multigpu;
pub mod multiload;
pub mod npy;
pub mod scale;
pub mod serve_client;
pub mod serve_load;
pub mod suite;
pub mod synthetic;
pub mod table;
pub mod timed_search;
pub mod transport_parts;
pub mod vecs;
pub mod workloads;
pub mod write_keywords;
