//! `genie-bench --mode vectors`: genie's own points on the vector-search benchmark's
//! recall/throughput curves (issue 13), beside the peers' (`bench/peers/ann_peers.py`), in the same
//! CSV schema (`data,system,params,recall,qps,seconds,queries,device`, see [`crate::charts::ann`]).
//!
//! It opens an index built by `genie build --kind vectors` (the codebook family or an LSH family)
//! through the library a Rust user would call ([`CodebookIndex`], [`VectorIndex`]), and for each
//! setting of the sweep searches the whole query file: one warm-up search, then three timed ones,
//! of which the median is kept. A timed search starts with the query vectors in host memory and
//! ends with every query's hits in host memory, so on a GPU it includes copying the queries in and
//! the hits out; the torch peer's timing starts with its data already on the device, so the
//! comparison is, if anything, in the peer's favour. Loading the index (and uploading it) is not
//! timed.
//!
//! Recall@k is computed as ann_peers.py computes it: the share of each query's k true neighbour
//! ids (the first k of its row of the truth file, by `bench/peers/knn_truth.py`) found among its
//! first k hits, over all queries. Each setting also reports the index's own stage times
//! ([`SearchStages`]: probes or hashing, counting, re-ranking), per search.
//!
//! Settings (`--sweep`): `probes:entries:candidates[:levels]` for a codebook index, `candidates` for an LSH
//! one. By default the index's own defaults (the codebook's tuned probe; for LSH the kind's
//! default number of candidates) and then a small sweep around them ([`default_sweep`]).

use crate::vecs::read_ivecs;
use anyhow::{bail, ensure, Context, Result};
use genie::core::{select_backend, DeviceChoice, InvertedIndex, VerifiedHit};
use genie::lsh::stored::IndexFamily;
use genie::lsh::{CodebookIndex, Probe, SearchStages, VectorIndex, VectorSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Timed searches per setting (after one warm-up); the median is kept.
pub const RUNS: usize = 3;

/// The CSV header, the same as the peers'.
pub const HEADER: [&str; 8] = [
    "data", "system", "params", "recall", "qps", "seconds", "queries", "device",
];

/// The command line of `genie-bench --mode vectors`.
#[derive(clap::Parser, Debug, Clone)]
#[command(
    name = "genie-bench --mode vectors",
    about = "genie's recall/throughput points on a vector index built by `genie build --kind vectors`"
)]
pub struct VectorsArgs {
    /// The mode; always `vectors` here.
    #[arg(long, default_value = "vectors")]
    pub mode: String,
    /// The index, built by `genie build --kind vectors` (`--lsh codebook` or an LSH family).
    #[arg(long)]
    pub index: PathBuf,
    /// The query vectors (.fvecs, or any format genie reads).
    #[arg(long)]
    pub queries: PathBuf,
    /// The exact neighbour ids, one row per query, at least k each (.ivecs, from
    /// bench/peers/knn_truth.py).
    #[arg(long)]
    pub truth: PathBuf,
    /// The data set's name (the CSV's data column).
    #[arg(long)]
    pub data: String,
    /// Hits per query (recall@k).
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    /// auto (the GPU when there is one), cpu or gpu.
    #[arg(long, default_value = "auto")]
    pub device: DeviceChoice,
    /// Settings, comma-separated: `probes:entries:candidates[:levels]` for a codebook index (e.g.
    /// 8:2:1000,16:4:200), `candidates` for an LSH index. Default: the index's defaults, then a
    /// small sweep around them.
    #[arg(long, value_delimiter = ',')]
    pub sweep: Vec<String>,
    /// Append the rows to this CSV (the header is written when the file is new).
    #[arg(long)]
    pub csv: Option<PathBuf>,
}

/// One setting of a search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// A codebook probe (probes, entries, candidates; `weighted` as the index stores it).
    Codebook(Probe),
    /// The candidates an LSH search re-ranks.
    Lsh {
        /// Objects re-ranked exactly (at least k).
        candidates: usize,
    },
}

impl Setting {
    /// `key=value;...` as the CSV's params column holds it (without k and the backend).
    pub fn params(&self) -> String {
        match self {
            Self::Codebook(p) => format!(
                "probes={};entries={};candidates={};levels={}",
                p.probes, p.entries, p.candidates, p.levels
            ),
            Self::Lsh { candidates } => format!("candidates={candidates}"),
        }
    }
}

/// An opened vector index of either kind.
pub enum Opened {
    /// The codebook family.
    Codebook(Box<CodebookIndex>),
    /// An LSH family.
    Lsh(Box<VectorIndex>),
}

impl Opened {
    /// Opens the index at `path` on `device`, whichever family built it.
    pub fn open(path: &Path, device: DeviceChoice) -> Result<Self> {
        let core = Arc::new(
            InvertedIndex::load(path).with_context(|| format!("opening {}", path.display()))?,
        );
        let family = serde_json::from_str::<serde_json::Value>(core.metadata())
            .ok()
            .and_then(|m| IndexFamily::of(&m));
        let backend = select_backend(device)?;
        match family {
            Some(IndexFamily::Codebook) => Ok(Self::Codebook(Box::new(CodebookIndex::open_on(
                path,
                core,
                backend.as_ref(),
            )?))),
            Some(IndexFamily::Lsh) => Ok(Self::Lsh(Box::new(VectorIndex::open_on(
                path,
                core,
                backend.as_ref(),
            )?))),
            _ => bail!(
                "{}: not an index of vectors (built by `genie build --kind vectors`)",
                path.display()
            ),
        }
    }

    /// `genie-codebook` or `genie-<family>`.
    pub fn system(&self) -> String {
        match self {
            Self::Codebook(_) => "genie-codebook".into(),
            Self::Lsh(i) => format!("genie-{}", i.metadata().params.family.name()),
        }
    }

    /// The number of indexed vectors and their dimension.
    pub fn shape(&self) -> (usize, usize) {
        match self {
            Self::Codebook(i) => (i.len(), i.dim()),
            Self::Lsh(i) => (i.vectors().len(), i.vectors().dim()),
        }
    }

    fn engine(&self) -> &genie::core::Engine {
        match self {
            Self::Codebook(i) => i.engine(),
            Self::Lsh(i) => i.engine(),
        }
    }

    /// The dimension of a user's query (an inner-product index stores one more).
    pub fn query_dim(&self) -> usize {
        match self {
            Self::Codebook(i) => i.space().user_dim(i.dim()),
            Self::Lsh(i) => i.vectors().dim(),
        }
    }

    /// A user's `queries` as the index searches them (a codebook index's space: cosine scales
    /// each to length 1, inner product adds a zero).
    pub fn in_space(&self, queries: VectorSet) -> Result<VectorSet> {
        Ok(match self {
            Self::Codebook(i) => i.space().queries(queries)?,
            Self::Lsh(_) => queries,
        })
    }

    /// `gpu` or `cpu`: where the index's engine runs.
    pub fn backend(&self) -> &'static str {
        if self.engine().gpu_ordinal().is_some() {
            "gpu"
        } else {
            "cpu"
        }
    }

    /// The CSV's device column: the GPU's name or `cpu N threads`.
    pub fn device(&self) -> String {
        if self.engine().gpu_ordinal().is_some() {
            self.engine().backend_name().to_string()
        } else {
            format!("cpu {} threads", rayon::current_num_threads())
        }
    }

    /// Searches every query with `setting`: per query its k hits, nearest first.
    pub fn search(
        &self,
        queries: &VectorSet,
        k: usize,
        setting: &Setting,
    ) -> Result<Vec<Vec<VerifiedHit>>> {
        Ok(match (self, setting) {
            (Self::Codebook(i), Setting::Codebook(probe)) => i.search(queries, k, probe)?,
            (Self::Lsh(i), Setting::Lsh { candidates }) => i.search(queries, k, *candidates)?,
            _ => bail!("setting {} does not fit this index", setting.params()),
        })
    }

    /// The index's stage times since the last take.
    pub fn take_stages(&self) -> SearchStages {
        match self {
            Self::Codebook(i) => i.take_stages(),
            Self::Lsh(i) => i.take_stages(),
        }
    }

    /// The settings of `--sweep` (each item `probes:entries:candidates` or `candidates`), or the
    /// default sweep when there are none.
    pub fn settings(&self, sweep: &[String], k: usize) -> Result<Vec<Setting>> {
        if sweep.is_empty() {
            return Ok(default_sweep(self, k));
        }
        sweep.iter().map(|s| self.parse_setting(s.trim())).collect()
    }

    fn parse_setting(&self, text: &str) -> Result<Setting> {
        let number = |part: &str, what: &str| -> Result<u32> {
            part.trim()
                .parse::<u32>()
                .ok()
                .filter(|&n| n > 0)
                .with_context(|| {
                    format!("--sweep {text:?}: {what} {part:?} is not a whole number >= 1")
                })
        };
        match self {
            Self::Codebook(index) => {
                let parts: Vec<&str> = text.split(':').collect();
                let (p, e, c, l) = match parts[..] {
                    [p, e, c] => (p, e, c, None),
                    [p, e, c, l] => (p, e, c, Some(l)),
                    _ => bail!(
                        "--sweep {text:?}: a codebook index takes probes:entries:candidates \
                         or probes:entries:candidates:levels (e.g. 8:2:1000, 8:256:200:31)"
                    ),
                };
                let levels = match l {
                    None => index.probe().levels,
                    Some(l) => l.trim().parse::<u32>().ok().with_context(|| {
                        format!("--sweep {text:?}: levels {l:?} is not a whole number")
                    })?,
                };
                let probe = Probe {
                    probes: number(p, "probes")?,
                    entries: number(e, "entries")?,
                    candidates: number(c, "candidates")?,
                    levels,
                    ..index.probe()
                };
                probe
                    .validate()
                    .with_context(|| format!("--sweep {text:?}"))?;
                Ok(Setting::Codebook(probe))
            }
            Self::Lsh(_) => {
                if text.contains(':') {
                    bail!(
                        "--sweep {text:?}: an LSH index ({}) takes a number of candidates only \
                         (e.g. 200,1000)",
                        self.system()
                    );
                }
                Ok(Setting::Lsh {
                    candidates: number(text, "candidates")? as usize,
                })
            }
        }
    }
}

/// The index's defaults, then settings around them, each once. Codebook: the tuned probe, then
/// half, twice and four times its probes, half and twice its entries and candidates, and twice
/// and four times both probes and candidates (within 1..=cells probes, 1..=256 entries,
/// 1..=objects candidates). LSH: the index's default candidates D (tuned at build, else
/// max(20k, 200)), then k (no re-rank beyond the top k by count), D/4, D/2, 2D and 4D (at most
/// the objects).
pub fn default_sweep(index: &Opened, k: usize) -> Vec<Setting> {
    let n = index.shape().0.max(1);
    let mut out: Vec<Setting> = Vec::new();
    let mut add = |s: Setting| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    match index {
        Opened::Codebook(i) => {
            let base = i.probe();
            let cells = i.codebook().params().cells.max(1);
            // (probes, entries, candidates) as multiples of the defaults, in halves
            let halves = [
                (2, 2, 2),
                (1, 2, 2),
                (4, 2, 2),
                (8, 2, 2),
                (2, 1, 2),
                (2, 4, 2),
                (2, 2, 1),
                (2, 2, 4),
                (4, 2, 4),
                (8, 2, 8),
            ];
            let scale = |x: u32, h: u32, hi: u32| {
                (u64::from(x) * u64::from(h) / 2).clamp(1, u64::from(hi)) as u32
            };
            let most = u32::try_from(n).unwrap_or(u32::MAX);
            for (p, e, c) in halves {
                add(Setting::Codebook(Probe {
                    probes: scale(base.probes, p, cells),
                    entries: scale(base.entries, e, genie::lsh::codebook::CODES as u32),
                    candidates: scale(base.candidates, c, most),
                    ..base
                }));
            }
        }
        Opened::Lsh(i) => {
            // the index's stored (tuned) candidates, else the kind's default
            let d = i.default_candidates(k);
            for c in [d, k, d / 4, d / 2, 2 * d, 4 * d] {
                add(Setting::Lsh {
                    candidates: c.clamp(1, n),
                });
            }
        }
    }
    out
}

/// One measured setting: a CSV row and the index's stage times.
#[derive(Clone, Debug, PartialEq)]
pub struct AnnRow {
    /// The data set's name.
    pub data: String,
    /// `genie-codebook` or `genie-<family>`.
    pub system: String,
    /// The setting.
    pub setting: Setting,
    /// `key=value;...`: the setting, k and the backend.
    pub params: String,
    /// Recall@k against the truth.
    pub recall: f64,
    /// Queries per second (queries / seconds).
    pub qps: f64,
    /// The median time of a search of every query.
    pub seconds: f64,
    /// Queries searched.
    pub queries: usize,
    /// The GPU's name or `cpu N threads`.
    pub device: String,
    /// The index's stage times of one search (the mean of the timed runs).
    pub stages: SearchStages,
}

impl AnnRow {
    /// The row's cells in [`HEADER`]'s order, formatted as ann_peers.py formats them.
    pub fn record(&self) -> [String; 8] {
        [
            self.data.clone(),
            self.system.clone(),
            self.params.clone(),
            format!("{:.4}", self.recall),
            format!("{:.1}", self.qps),
            format!("{:.6}", self.seconds),
            self.queries.to_string(),
            self.device.clone(),
        ]
    }
}

/// What a run measured.
#[derive(Debug)]
pub struct Report {
    /// One row per setting, in sweep order.
    pub rows: Vec<AnnRow>,
    /// The table printed to stdout.
    pub table: String,
}

/// Recall@k: the share of each query's first k true ids found among its first k hits.
pub fn recall_at_k(hits: &[Vec<VerifiedHit>], truth: &[Vec<u32>], k: usize) -> f64 {
    let total = truth.len() * k;
    if total == 0 {
        return 0.0;
    }
    let found: usize = hits
        .iter()
        .zip(truth)
        .map(|(h, t)| {
            let t = &t[..k.min(t.len())];
            h.iter().take(k).filter(|x| t.contains(&x.id)).count()
        })
        .sum();
    found as f64 / total as f64
}

/// Reads the queries and the truth and checks them against each other, `k` and the index.
fn read_inputs(args: &VectorsArgs, index: &Opened) -> Result<(VectorSet, Vec<Vec<u32>>)> {
    ensure!(args.k >= 1, "--k must be at least 1");
    let queries = genie::lsh::io::read_vectors(&args.queries)
        .with_context(|| format!("reading the queries {}", args.queries.display()))?;
    ensure!(
        !queries.is_empty(),
        "{}: no query vector",
        args.queries.display()
    );
    let dim = index.query_dim();
    ensure!(
        queries.dim() == dim,
        "{}: queries of dimension {}, the index {} holds vectors of dimension {dim}",
        args.queries.display(),
        queries.dim(),
        args.index.display()
    );
    // as the index searches them: scaled to length 1 for cosine, widened for inner product
    let queries = index.in_space(queries)?;
    let truth = read_ivecs(&args.truth)?;
    ensure!(
        truth.len() == queries.len(),
        "{}: {} rows of neighbour ids for {} queries in {} (one row per query expected)",
        args.truth.display(),
        truth.len(),
        queries.len(),
        args.queries.display()
    );
    let n = index.shape().0;
    for (r, row) in truth.iter().enumerate() {
        ensure!(
            row.len() >= args.k,
            "{}: row {r} holds {} ids, fewer than k = {}",
            args.truth.display(),
            row.len(),
            args.k
        );
        if let Some(bad) = row.iter().find(|&&id| id as usize >= n) {
            bail!(
                "{}: row {r}: id {bad}, but the index holds {n} vectors (truth of another data set?)",
                args.truth.display()
            );
        }
    }
    Ok((queries, truth))
}

/// Times one setting: a warm-up search, then [`RUNS`] timed ones; the recall of the last.
fn measure(
    index: &Opened,
    queries: &VectorSet,
    truth: &[Vec<u32>],
    k: usize,
    setting: &Setting,
) -> Result<(f64, f64, SearchStages)> {
    let t = Instant::now();
    index.search(queries, k, setting)?;
    let first = t.elapsed().as_secs_f64();
    let s = index.take_stages();
    log::debug!(
        "{}: the untimed first search {:.1} ms (hash {:.1}, upload {:.1}, count {:.1}, rerank {:.1})",
        setting.params(),
        first * 1e3,
        s.hash_ms,
        s.upload_ms,
        s.count_ms,
        s.rerank_ms
    );
    let mut times = Vec::with_capacity(RUNS);
    let mut hits = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        hits = index.search(queries, k, setting)?;
        times.push(t.elapsed().as_secs_f64());
    }
    log::debug!("{}: timed searches {times:?} s", setting.params());
    times.sort_by(f64::total_cmp);
    let mut stages = index.take_stages();
    let runs = RUNS as f64;
    stages.hash_ms /= runs;
    // the table's count includes the queries' upload, as it did before the upload had a stage
    stages.count_ms = (stages.count_ms + stages.upload_ms) / runs;
    stages.upload_ms = 0.0;
    stages.rerank_ms /= runs;
    stages.queries /= RUNS as u64;
    // a clock that reads 0 would make the queries/s infinite, which no chart can place
    let seconds = times[RUNS / 2].max(1e-9);
    Ok((recall_at_k(&hits, truth, k), seconds, stages))
}

/// Runs the mode: opens the index, measures every setting, appends the rows to `--csv` and
/// returns them with the printed table.
pub fn run(args: &VectorsArgs) -> Result<Report> {
    if let Some(csv) = &args.csv {
        // fail before the searches, not after
        check_csv(csv)?;
    }
    let t = Instant::now();
    let index = Opened::open(&args.index, args.device)?;
    let load_s = t.elapsed().as_secs_f64();
    let (queries, truth) = read_inputs(args, &index)?;
    let settings = index.settings(&args.sweep, args.k)?;
    let (system, device, backend) = (index.system(), index.device(), index.backend());
    let mut table = format!(
        "{}: {} ({} vectors of dimension {}) on {device}, opened in {load_s:.2} s; {} queries, \
         k = {}; seconds: median of {RUNS} searches of every query, host to host; stages: the \
         index's own, per search\n",
        args.data,
        system,
        index.shape().0,
        index.shape().1,
        queries.len(),
        args.k
    );
    let params_of = |s: &Setting| format!("{};k={};backend={backend}", s.params(), args.k);
    let width = settings
        .iter()
        .map(|s| params_of(s).len())
        .max()
        .unwrap_or(0);
    writeln!(
        table,
        "{:<width$} {:>8} {:>11} {:>10} {:>9} {:>9} {:>10}",
        "params", "recall", "q/s", "seconds", "hash_ms", "count_ms", "rerank_ms"
    )?;
    let mut rows = Vec::new();
    for setting in &settings {
        let (recall, seconds, stages) = measure(&index, &queries, &truth, args.k, setting)?;
        let params = params_of(setting);
        log::info!(
            "{params}: recall@{} {recall:.4}, {:.1} q/s",
            args.k,
            queries.len() as f64 / seconds
        );
        let row = AnnRow {
            data: args.data.clone(),
            system: system.clone(),
            setting: *setting,
            params,
            recall,
            qps: queries.len() as f64 / seconds,
            seconds,
            queries: queries.len(),
            device: device.clone(),
            stages,
        };
        writeln!(
            table,
            "{:<width$} {:>8.4} {:>11.1} {:>10.6} {:>9.2} {:>9.2} {:>10.2}",
            row.params,
            row.recall,
            row.qps,
            row.seconds,
            stages.hash_ms,
            stages.count_ms,
            stages.rerank_ms
        )?;
        rows.push(row);
    }
    if let Some(csv) = &args.csv {
        append_csv(csv, &rows)?;
    }
    Ok(Report { rows, table })
}

/// An error unless `path` is missing, empty or starts with [`HEADER`]; whether it is new.
pub fn check_csv(path: &Path) -> Result<bool> {
    crate::csv_rows::check_header(path, &HEADER)
}

/// Appends `rows` to the CSV at `path`, the header first when the file is new.
pub fn append_csv(path: &Path, rows: &[AnnRow]) -> Result<()> {
    crate::csv_rows::append_records(path, &HEADER, rows.iter().map(AnnRow::record))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A row of setting `candidates=7` on a CPU of 2 threads.
    fn row(data: &str, system: &str, params: &str, measured: (f64, f64, f64, usize)) -> AnnRow {
        let (recall, qps, seconds, queries) = measured;
        AnnRow {
            data: data.into(),
            system: system.into(),
            setting: Setting::Lsh { candidates: 7 },
            params: params.into(),
            recall,
            qps,
            seconds,
            queries,
            device: "cpu 2 threads".into(),
            stages: SearchStages::default(),
        }
    }

    fn hits(ids: &[u32]) -> Vec<VerifiedHit> {
        ids.iter()
            .map(|&id| VerifiedHit {
                id,
                count: 1,
                distance: 0.0,
            })
            .collect()
    }

    #[test]
    fn recall_counts_the_true_ids_among_the_first_k_hits() {
        let truth = vec![vec![1, 2, 3, 9], vec![4, 5, 6, 7]];
        // query 0: 1 and 3 found, 9 is a true id beyond k; query 1: 5 found, 6 comes too late
        let got = vec![hits(&[3, 9, 1]), hits(&[5, 8, 0, 6])];
        assert_eq!(recall_at_k(&got, &truth, 3), 3.0 / 6.0);
        // fewer hits than k count as misses
        assert_eq!(recall_at_k(&[hits(&[1]), hits(&[])], &truth, 3), 1.0 / 6.0);
        assert_eq!(
            recall_at_k(&[hits(&[2, 1, 3]), hits(&[6, 5, 4])], &truth, 3),
            1.0
        );
        assert_eq!(recall_at_k(&[], &[], 3), 0.0);
    }

    #[test]
    fn a_row_is_formatted_as_the_peers_rows() {
        let row = row(
            "d",
            "genie-codebook",
            "candidates=7;k=10;backend=cpu",
            (0.987_66, 12_345.678, 0.081_000_4, 1000),
        );
        assert_eq!(
            row.record().join(","),
            "d,genie-codebook,candidates=7;k=10;backend=cpu,0.9877,12345.7,0.081000,1000,cpu 2 threads"
        );
    }

    #[test]
    fn the_csv_gets_one_header_and_keeps_a_line_without_its_newline() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ann.csv");
        let row = row(
            "d, with a comma",
            "genie-e2lsh",
            "candidates=7",
            (0.5, 10.0, 0.1, 1),
        );
        assert!(check_csv(&path).unwrap());
        append_csv(&path, std::slice::from_ref(&row)).unwrap();
        assert!(!check_csv(&path).unwrap());
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.pop(); // the last newline
        std::fs::write(&path, &text).unwrap();
        append_csv(&path, &[row]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let line =
            "\"d, with a comma\",genie-e2lsh,candidates=7,0.5000,10.0,0.100000,1,cpu 2 threads";
        assert_eq!(text, format!("{}\n{line}\n{line}\n", HEADER.join(",")));
    }
}
