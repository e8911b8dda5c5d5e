//! The charts of the benchmark runs kept under `bench/runs/`, for `docs/BENCHMARKS.md`: the
//! runs they are drawn from (file names in the runs folder, `genie-charts --runs`) and the device
//! they ran on.

/// genie's query runs: time and queries/s of each method at several numbers of queries.
pub const QUERIES_CSV: &str = "2026-11-22-h200-ed40c6b-queries.csv";
/// The PyTorch peer at the numbers of queries of [`QUERIES_CSV`].
pub const PEER_QUERIES_CSV: &str = "2026-11-22-h200-ed40c6b-torch-peer-queries.csv";
/// Search time against the number of objects, the tiled kernel.
pub const SCALE_TILED_CSV: &str = "2026-11-22-h200-f2f64b1-scale.csv";
/// Search time against the number of objects, the global kernel.
pub const SCALE_GLOBAL_CSV: &str = "2026-11-22-h200x2-e40308d-scale.csv";
/// The suite: each keyword-level workload's speed-up over the paper and queries/s.
pub const SUITE_CSV: &str = "2026-11-22-h200-6fe2b67-suite.csv";
/// The suite's GPU c-PQ at other numbers of queries (the same run as [`SUITE_CSV`]).
pub const SUITE_CURVE_CSV: &str = "2026-11-22-h200-6fe2b67-suite-curve.csv";
/// genie's suite and the PyTorch peer on the suite's workloads, measured in one device run.
pub const PEER_SUITE_GENIE_CSV: &str = "2026-11-22-h200-0849bf5-suite.csv";
/// The PyTorch peer's side of [`PEER_SUITE_GENIE_CSV`].
pub const PEER_SUITE_CSV: &str = "2026-11-22-h200-0849bf5-torch-peer-suite.csv";

/// The device of the runs whose CSVs have no device column (scale and suite): one H200 each (the
/// global-kernel scale run on a two-GPU host, with one GPU).
pub const RUNS_DEVICE: &str = "NVIDIA H200";
