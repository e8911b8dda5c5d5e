//! Approximate nearest neighbours on Fashion-MNIST with the LSH plugin (paper section VI-D1):
//! recall@1/10/100 and the approximation ratio of Eqn. 13 against brute force, for several
//! settings of the number of functions m, the width w and the candidates K re-ranked.
//!
//! ```text
//! cargo run --release --example ann -- [--data DIR] [--train N] [--queries Q] [--family F]
//!     [--device auto|cpu|gpu] [--settings M:WF:K,...] [--truth-out FILE.ivecs] [--csv FILE]
//! ```
//!
//! `--data` is the folder of the IDX files (default `$GENIE_DATA/fashion-mnist` when `GENIE_DATA`
//! names a folder of data sets, else `data/fashion-mnist`, which scripts/fetch-fashion-mnist.sh
//! fills). Each setting is
//! `M:WF:K`: M functions (0: the default of Eqn. 9), the width as WF times the default estimate
//! (1: the default), K candidates re-ranked. The search runs on the CPU when no GPU is usable.
//! `--truth-out` also writes the exact 100 nearest ids of each query as `.ivecs` (to check the
//! output of `genie search --kind vectors`); `--csv` writes one row per setting (raw results, as
//! under bench/runs/).

use anyhow::{bail, Context, Result};
use genie::core::DeviceChoice;
use genie_lsh::{estimate, io, Family, Metric, VectorIndex, VectorSet};
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::Instant;

const K_MAX: usize = 100;

struct Options {
    data: Option<PathBuf>,
    train: usize,
    queries: usize,
    family: Family,
    device: DeviceChoice,
    settings: Vec<(u32, f64, usize)>,
    truth_out: Option<PathBuf>,
    csv: Option<PathBuf>,
}

fn parse_args() -> Result<Options> {
    let mut o = Options {
        data: None,
        train: 60_000,
        queries: 1000,
        family: Family::E2lsh,
        device: DeviceChoice::Auto,
        settings: vec![
            (0, 1.0, 100),
            (0, 1.0, 200),
            (0, 1.0, 1000),
            (0, 0.5, 200),
            (0, 2.0, 200),
            (64, 1.0, 200),
            (128, 1.0, 200),
            (512, 1.0, 200),
        ],
        truth_out: None,
        csv: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--data" => o.data = Some(value()?.into()),
            "--train" => o.train = value()?.parse()?,
            "--queries" => o.queries = value()?.parse()?,
            "--family" => o.family = value()?.parse()?,
            "--truth-out" => o.truth_out = Some(value()?.into()),
            "--csv" => o.csv = Some(value()?.into()),
            "--device" => {
                o.device = match value()?.as_str() {
                    "auto" => DeviceChoice::Auto,
                    "cpu" => DeviceChoice::Cpu,
                    "gpu" => DeviceChoice::Gpu,
                    other => bail!("unknown device {other:?}"),
                }
            }
            "--settings" => {
                o.settings = value()?
                    .split(',')
                    .map(|s| {
                        let p: Vec<&str> = s.split(':').collect();
                        if p.len() != 3 {
                            bail!("bad setting {s:?}: expected M:WF:K");
                        }
                        Ok((p[0].parse()?, p[1].parse()?, p[2].parse()?))
                    })
                    .collect::<Result<_>>()?
            }
            other => bail!("unknown argument {other:?}"),
        }
    }
    Ok(o)
}

fn data_dir(given: Option<PathBuf>) -> Result<PathBuf> {
    let candidates = given.map_or_else(
        || {
            let mut dirs: Vec<PathBuf> = std::env::var_os("GENIE_DATA")
                .map(|d| PathBuf::from(d).join("fashion-mnist"))
                .into_iter()
                .collect();
            dirs.push(PathBuf::from("data/fashion-mnist"));
            dirs
        },
        |d| vec![d],
    );
    candidates
        .into_iter()
        .find(|d| d.join("train-images-idx3-ubyte.gz").exists())
        .context("no Fashion-MNIST: run scripts/fetch-fashion-mnist.sh or pass --data DIR")
}

/// Exact top-`k` neighbours (ids and distances, ascending) of every query.
fn brute_force(
    data: &VectorSet,
    queries: &VectorSet,
    metric: Metric,
    k: usize,
) -> Vec<Vec<(u32, f64)>> {
    queries
        .as_slice()
        .par_chunks(queries.dim())
        .map(|q| {
            let mut d: Vec<(u32, f64)> = data
                .rows()
                .enumerate()
                .map(|(i, r)| (i as u32, metric.distance(q, r)))
                .collect();
            let k = k.min(d.len());
            if k > 0 && k < d.len() {
                d.select_nth_unstable_by(k - 1, |a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
            }
            d.truncate(k);
            d.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
            d
        })
        .collect()
}

fn main() -> Result<()> {
    let o = parse_args()?;
    let dir = data_dir(o.data.clone())?;
    let train = io::read_vectors(dir.join("train-images-idx3-ubyte.gz"))?.head(o.train);
    let test = io::read_vectors(dir.join("t10k-images-idx3-ubyte.gz"))?.head(o.queries);
    let metric = o.family.metric();
    println!(
        "Fashion-MNIST from {}: {} x {} data, {} queries, family {}, metric {}",
        dir.display(),
        train.len(),
        train.dim(),
        test.len(),
        o.family.name(),
        metric.name()
    );
    let t = Instant::now();
    let truth = brute_force(&train, &test, metric, K_MAX);
    println!("brute force: {:.2?}", t.elapsed());
    if let Some(path) = &o.truth_out {
        let mut bytes = Vec::new();
        for row in &truth {
            bytes.extend_from_slice(&(row.len() as i32).to_le_bytes());
            for &(id, _) in row {
                bytes.extend_from_slice(&(id as i32).to_le_bytes());
            }
        }
        std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let base = estimate::estimate(&train, o.family, 1)?;
    println!(
        "defaults: m = {}, width = {:.3}, D = {}",
        base.functions, base.width, base.buckets
    );
    let mut csv = String::from(
        "backend,family,train,queries,functions,width,buckets,bits,seed,candidates,\
         recall1,recall10,recall100,ratio1,ratio10,ratio100,build_s,search_s\n",
    );
    println!("     m     width      K | recall@1 recall@10 recall@100 | ratio@1 ratio@10 ratio@100 | build   search");
    for &(m, wf, cand) in &o.settings {
        let mut params = base.clone();
        if m > 0 {
            params.functions = m;
        }
        params.width *= wf;
        let t = Instant::now();
        let index = VectorIndex::build(train.clone(), params.clone(), o.device)?;
        let build = t.elapsed();
        let t = Instant::now();
        let hits = index.search(&test, K_MAX, cand)?;
        let search = t.elapsed();
        let (mut recall, mut ratio) = ([0.0; 3], [0.0; 3]);
        for (h, tr) in hits.iter().zip(&truth) {
            for (slot, k) in [1usize, 10, 100].into_iter().enumerate() {
                let truth_ids: Vec<u32> = tr.iter().take(k).map(|x| x.0).collect();
                let found = h
                    .iter()
                    .take(k)
                    .filter(|x| truth_ids.contains(&x.id))
                    .count();
                recall[slot] += found as f64 / k as f64;
                ratio[slot] += approximation_ratio(h.iter().map(|x| x.distance), tr, k);
            }
        }
        let q = test.len().max(1) as f64;
        // recall@1, @10, @100, then the approximation ratio at the same k, averaged over queries
        let means: Vec<f64> = recall.iter().chain(&ratio).map(|s| s / q).collect();
        println!(
            "{:6} {:9.2} {:6} | {:8.3} {:9.3} {:10.3} | {:7.3} {:8.3} {:9.3} | {:6.2?} {:6.2?} ({})",
            params.functions,
            params.width,
            cand,
            means[0],
            means[1],
            means[2],
            means[3],
            means[4],
            means[5],
            build,
            search,
            index.engine().backend_name()
        );
        csv.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{:.3},{:.3}\n",
            index.engine().backend_name(),
            params.family.name(),
            train.len(),
            test.len(),
            params.functions,
            params.width,
            params.buckets,
            params.bits,
            params.seed,
            cand,
            means
                .iter()
                .map(|m| format!("{m:.4}"))
                .collect::<Vec<_>>()
                .join(","),
            build.as_secs_f64(),
            search.as_secs_f64()
        ));
    }
    if let Some(path) = &o.csv {
        std::fs::write(path, csv).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// Eqn. 13: the mean over `i < k` of `||p_i - q|| / ||p*_i - q||` (terms with a zero true distance
/// count 1 when the found distance is zero too, and are skipped otherwise). Missing results
/// count as the worst found distance.
fn approximation_ratio(found: impl Iterator<Item = f64>, truth: &[(u32, f64)], k: usize) -> f64 {
    let found: Vec<f64> = found.take(k).collect();
    let worst = found.last().copied().unwrap_or(f64::INFINITY);
    let (mut sum, mut n) = (0.0, 0usize);
    for (i, t) in truth.iter().take(k).enumerate() {
        let f = found.get(i).copied().unwrap_or(worst);
        if t.1 > 0.0 {
            sum += f / t.1;
            n += 1;
        } else if f == 0.0 {
            sum += 1.0;
            n += 1;
        }
    }
    if n == 0 {
        1.0
    } else {
        sum / n as f64
    }
}
