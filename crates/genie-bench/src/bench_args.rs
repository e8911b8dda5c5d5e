//! The command line of `genie-bench` shared by the modes on the synthetic workload and the GPU
//! suite: `ceilings`, `table` (the default), `multiload`, `scale`, `multigpu`, `ann`, `suite` and
//! `serve`. The other modes have command lines of their own ([`crate::cpu_suite::CpuArgs`],
//! [`crate::dump::DumpArgs`], [`crate::write_keywords::WriteArgs`],
//! [`crate::kind_bench::KindArgs`], [`crate::ann_genie::VectorsArgs`]).

/// The command line of `genie-bench` (its default mode and the modes that share it).
#[derive(clap::Parser, Debug, Clone)]
#[command(about = "Benchmark: GPU c-PQ vs GPU count table vs CPU backend on a synthetic workload")]
pub struct BenchArgs {
    /// Number of objects.
    #[arg(long, default_value_t = 10_000_000)]
    pub objects: u32,
    /// Dimensions per object (one keyword each).
    #[arg(long, default_value_t = 128)]
    pub dims: u32,
    /// Values per dimension.
    #[arg(long, default_value_t = 64)]
    pub values: u32,
    /// Query batch sizes to run, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1024,8192")]
    pub queries: Vec<usize>,
    /// Mode suite: also time the GPU c-PQ on each keyword-level workload at these numbers of
    /// queries (comma-separated, e.g. 64,256,4096,16384).
    #[arg(long, value_delimiter = ',')]
    pub curve: Vec<usize>,
    /// Hits per query.
    #[arg(long, default_value_t = 100)]
    pub k: u32,
    /// Queries run on the CPU backend (its results are checked against the GPU's).
    #[arg(long, default_value_t = 64)]
    pub cpu_queries: usize,
    /// Seed of the generated data.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Small sizes for a routine check (1M objects, 1,024 queries).
    #[arg(long)]
    pub quick: bool,
    /// Skip the GPU count-table baseline.
    #[arg(long)]
    pub no_count_table: bool,
    /// Write the raw rows as CSV here.
    #[arg(long)]
    pub csv: Option<std::path::PathBuf>,
    /// What to measure: `ceilings` (the hardware ceilings alone), `table` (GPU c-PQ vs GPU count
    /// table vs CPU), `multiload` (a resident index vs the same index in --parts parts streamed through the GPU), `scale` (c-PQ time as
    /// the number of objects grows, --scale), `multigpu`, `ann`, `suite`, `serve`, or `vectors`
    /// (genie's recall/throughput points on a built vector index: `--mode vectors --help`).
    #[arg(long, default_value = "table")]
    pub mode: String,
    /// Parts of the multi-loaded index (mode multiload).
    #[arg(long, default_value_t = 8)]
    pub parts: usize,
    /// Batch memory budget in MB (default: half the free device memory).
    #[arg(long)]
    pub budget_mb: Option<u64>,
    /// Mode ann: the Fashion-MNIST folder (train and t10k IDX files); skipped when absent.
    #[arg(long, default_value = "data/fashion-mnist")]
    pub fashion: std::path::PathBuf,
    /// Mode ann: vectors of the generated Gaussian mixture (128 dimensions, 100 clusters).
    #[arg(long, default_value_t = 1_000_000)]
    pub mixture: usize,
    /// Object counts to run (mode scale), comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "6000000,12000000,24000000,36000000"
    )]
    pub scale: Vec<u32>,
    /// Mode suite: write each keyword-level workload (index, queries, genie's top-k counts) as
    /// NumPy files into DIR/<workload>/ for `bench/peers/torch_spmm.py --load` (see genie_bench::dump).
    #[arg(long, value_name = "DIR")]
    pub dump: Option<std::path::PathBuf>,
    /// Mode serve: concurrent clients of the closed-loop levels, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,64,1024")]
    pub clients: Vec<usize>,
    /// Mode serve: request rates of the open-loop levels (requests/s), comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub rates: Vec<f64>,
    /// Mode serve: seconds per level.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
    /// Mode serve: requests per level at most.
    #[arg(long, default_value_t = 2_000_000)]
    pub max_requests: usize,
    /// Mode serve: seconds of the soak at the largest --clients (0: none).
    #[arg(long, default_value_t = 0.0)]
    pub soak_secs: f64,
    /// Mode serve: share of malformed requests in the soak.
    #[arg(long, default_value_t = 0.1)]
    pub malformed: f64,
    /// Mode serve: cpu, gpu or auto.
    #[arg(long, default_value = "auto")]
    pub device: String,
    /// Mode serve: the GPUs that hold a replica each (default all).
    #[arg(long, value_delimiter = ',')]
    pub devices: Option<Vec<usize>>,
    /// Mode serve: the largest batch of the service.
    #[arg(long, default_value_t = genie::service::BatchPolicy::default().max_batch)]
    pub max_batch: usize,
    /// Mode serve: sets of GPUs served in turn, each a replica per GPU, separated by `;`
    /// (`0;0,1;0,1,2,3`); default the one set of --devices.
    #[arg(long, value_name = "SETS")]
    pub device_sets: Option<String>,
    /// Mode serve: the dispatch rules served in turn (greedy, cohort), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "greedy")]
    pub dispatch: Vec<genie::service::Dispatch>,
    /// Mode suite: only these workloads (comma-separated names, e.g. SIFT-like,Tweets-like);
    /// default all.
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Mode suite: each workload's index with its List Array packed, as an index file of
    /// `genie build --postings packed` holds it (the GPU copies the packed words and unpacks them
    /// on the device; the index upload column includes that).
    #[arg(long)]
    pub packed_file: bool,
}
