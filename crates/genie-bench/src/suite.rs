//! `genie-bench --mode suite`: the paper's workloads generated at its sizes
//! ([`crate::workloads::keyword_suite`] and [`crate::workloads::sequence_workload`]), each timed
//! by Table I's stages on the GPU c-PQ, beside the GPU count table and the CPU backend, with the
//! tiled kernel's dense-list settings and, with `--curve`, the c-PQ at other numbers of queries.
//! With `--dump DIR` it also writes each keyword-level workload and genie's top-k counts as NumPy
//! files for the PyTorch peer (`bench/peers/torch_spmm.py --load DIR/<workload>`, see
//! [`crate::dump`]).

use crate::bench_args::BenchArgs;
use crate::timed_search::{timed, timed_with, Row};
use crate::workloads::sequence_workload;
use anyhow::{bail, Context, Result};
use genie_core::{CpuBackend, CudaBackend, Engine, InvertedIndex, Method, Query, SearchParams};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

/// The name of the suite's sequence workload (for `--only`).
const SEQUENCES: &str = "DBLP-like";

/// One workload of the suite: an index and its queries, with the paper's Table I figures
/// (TITAN X, 1,024 queries): index build, index transfer, query transfer, match, select (s).
struct Workload {
    name: &'static str,
    index: InvertedIndex,
    queries: Vec<Query>,
    paper: [f64; 5],
}

/// The paper's section VI-A workloads at its scale (the keyword level: LSH signatures, words and
/// intervals generated from a seed), each timed by Table I's stages on the GPU c-PQ, beside the GPU
/// count table and the CPU backend.
pub fn run(args: &BenchArgs, gpu: &CudaBackend) -> Result<()> {
    let nq = args.queries.first().copied().unwrap_or(1024);
    let scale = if args.quick { 10 } else { 1 };
    if let Some(root) = &args.dump {
        // fail before minutes of work, not after
        std::fs::create_dir_all(root)
            .with_context(|| format!("--dump: cannot create the folder {}", root.display()))?;
    }
    let mut out = String::new();
    writeln!(
        out,
        "{:<14} {:>9} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8} {:>8} {:>9} {:>8} {:>9} {:>8} {:>9}",
        "workload",
        "objects",
        "build_s",
        "xfer_s",
        "q_xfer",
        "match_s",
        "select_s",
        "host_s",
        "q/s",
        "Gpost/s",
        "MB/q",
        "paper_q_s",
        "speedup",
        "ct_q/s"
    )?;
    let mut csv = String::from("workload,objects,build_s,index_transfer_s,query_transfer_s,match_s,select_s,wall_s,qps,gpostings_per_s,mb_per_query,paper_query_s,speedup,count_table_qps,cpu_qps,prepare_s,host_plan_s,ct_query_transfer_s,ct_match_s,ct_select_s,ct_wall_s,ct_gpostings_per_s,ct_mb_per_query,cpu_queries,cpu_wall_s,cpu_mb_per_query\n");
    let mut dense_out = format!(
        "{:<14} {:>8} {:>7} {:>9} {:>9} {:>9}\n",
        "workload", "dense", "tiles", "match_s", "wall_s", "q/s"
    );
    let mut dense_csv = String::from("workload,dense_div,tiles,match_s,wall_s,qps\n");
    let mut curve_out = format!(
        "{:<14} {:>8} {:>8} {:>9} {:>9}\n",
        "workload", "queries", "batches", "wall_s", "q/s"
    );
    let mut curve_csv = String::from("workload,queries,batches,wall_s,qps\n");
    let mut baseline_out = format!(
        "{:<14} {:>12} {:>6} {:>8} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8}\n",
        "workload",
        "method",
        "q",
        "q_xfer",
        "match_s",
        "select_s",
        "wall_s",
        "q/s",
        "Gpost/s",
        "MB/q"
    );
    let gen_nq = args.curve.iter().copied().fold(nq, usize::max);
    let jobs = crate::workloads::keyword_suite(scale, gen_nq, args.seed);
    // a workload runs when --only names it or names none
    let wanted = |name: &str| args.only.is_empty() || args.only.iter().any(|o| o == name);
    if let Some(unknown) = args
        .only
        .iter()
        .find(|o| *o != SEQUENCES && !jobs.iter().any(|j| j.name == o.as_str()))
    {
        let names: Vec<_> = jobs.iter().map(|j| j.name).chain([SEQUENCES]).collect();
        bail!(
            "--only: no workload {unknown} (the suite's: {})",
            names.join(", ")
        );
    }
    for job in jobs {
        if !wanted(job.name) {
            continue;
        }
        let (name, paper, make) = (job.name, job.paper, job.make);
        let t = Instant::now();
        let (index, mut queries) = make()?;
        let build_s = t.elapsed().as_secs_f64();
        // the first nq queries are the main batch; the curve takes longer prefixes
        let all_queries = queries.clone();
        queries.truncate(nq);
        let w = Workload {
            name,
            index,
            queries,
            paper,
        };
        let index = if args.packed_file {
            let t = Instant::now();
            let packed = w.index.into_packed();
            eprintln!(
                "{name}: List Array packed as a packed index file holds it in {:.3} s, {:.2} bits a posting",
                t.elapsed().as_secs_f64(),
                packed.bits_per_posting()
            );
            packed
        } else {
            w.index
        };
        let index = Arc::new(index);
        let t = Instant::now();
        let engine = Engine::with_backend(index.clone(), gpu)?;
        let xfer_s = t.elapsed().as_secs_f64();
        engine.search(&w.queries[..8.min(nq)], &SearchParams::top_k(args.k))?;
        let (row, hits) = timed(&engine, &w.queries, args.k, Method::Cpq, name)?;
        let (ct, ct_hits) = timed(&engine, &w.queries, args.k, Method::CountTable, name)?;
        if ct_hits != hits {
            bail!("{name}: count table and c-PQ differ");
        }
        // the tiled kernel with dense lists read as ids only (0) or as bitmaps from several shares
        // of the objects on; the default is the main row
        let default_dense = genie_core::backend::DEFAULT_GPU_DENSE;
        let configs = [0u32, 64, 32, 16, 8]
            .map(|d| (d, true))
            .into_iter()
            .chain([(default_dense, false)]);
        for (div, wide) in configs {
            let mut p = SearchParams::top_k(args.k);
            p.gpu_dense = div;
            p.gpu_wide_tiles = wide;
            let (r, h) = timed_with(&engine, &w.queries, p, name)?;
            let tiles = if wide { "wide" } else { "narrow" };
            if h != hits {
                bail!("{name}: dense lists from 1/{div} of the objects, {tiles} tiles, change the hits");
            }
            let dense = if div == 0 {
                "ids".to_string()
            } else {
                format!("1/{div}")
            };
            writeln!(
                dense_out,
                "{name:<14} {dense:>8} {tiles:>7} {:>9.4} {:>9.4} {:>9.0}",
                r.match_ms / 1e3,
                r.wall_s,
                nq as f64 / r.wall_s
            )?;
            writeln!(
                dense_csv,
                "{name},{div},{tiles},{:.5},{:.5},{:.1}",
                r.match_ms / 1e3,
                r.wall_s,
                nq as f64 / r.wall_s
            )?;
        }
        for &c in &args.curve {
            let (r, _) = timed(&engine, &all_queries[..c], args.k, Method::Cpq, name)?;
            writeln!(
                curve_out,
                "{name:<14} {c:>8} {:>8} {:>9.4} {:>9.0}",
                r.batches,
                r.wall_s,
                c as f64 / r.wall_s
            )?;
            writeln!(
                curve_csv,
                "{name},{c},{},{:.5},{:.1}",
                r.batches,
                r.wall_s,
                c as f64 / r.wall_s
            )?;
        }
        // (a packed List Array is unpacked here, before the CPU's timed searches)
        let _ = index.postings();
        let cpu_engine = Engine::with_backend(index.clone(), &CpuBackend::new())?;
        let nc = args.cpu_queries.min(nq);
        let (cpu, cpu_hits) = timed(&cpu_engine, &w.queries[..nc], args.k, Method::Cpq, "cpu")?;
        if cpu_hits[..] != hits[..nc] {
            bail!("{name}: CPU and GPU differ");
        }
        let paper_q = w.paper[2] + w.paper[3] + w.paper[4];
        let qps = nq as f64 / row.wall_s;
        let gps = row.postings as f64 / row.wall_s / 1e9;
        writeln!(
            out,
            "{:<14} {:>9} {:>8.1} {:>8.3} {:>8.4} {:>9.4} {:>9.4} {:>8.4} {:>8.0} {:>9.1} {:>8.2} {:>9.3} {:>7.0}x {:>9.0}",
            w.name, index.num_objects(), build_s, xfer_s, row.transfer_ms / 1e3, row.match_ms / 1e3, row.select_ms / 1e3,
            (row.prepare_ms + row.host_plan_ms + row.host_launch_ms) / 1e3,
            qps, gps, row.mb_per_query, paper_q, paper_q / row.wall_s, nq as f64 / ct.wall_s
        )?;
        writeln!(
            csv,
            "{},{},{:.3},{:.4},{:.5},{:.5},{:.5},{:.5},{:.1},{:.3},{:.3},{:.4},{:.1},{:.1},{:.1},{:.5},{:.5},{:.5},{:.5},{:.5},{:.5},{:.3},{:.3},{},{:.5},{:.3}",
            w.name,
            index.num_objects(),
            build_s,
            xfer_s,
            row.transfer_ms / 1e3,
            row.match_ms / 1e3,
            row.select_ms / 1e3,
            row.wall_s,
            qps,
            gps,
            row.mb_per_query,
            paper_q,
            paper_q / row.wall_s,
            nq as f64 / ct.wall_s,
            nc as f64 / cpu.wall_s,
            row.prepare_ms / 1e3,
            row.host_plan_ms / 1e3,
            ct.transfer_ms / 1e3,
            ct.match_ms / 1e3,
            ct.select_ms / 1e3,
            ct.wall_s,
            ct.postings as f64 / ct.wall_s / 1e9,
            ct.mb_per_query,
            nc,
            cpu.wall_s,
            cpu.mb_per_query
        )?;
        baseline_out.push_str(&baseline_line(name, "count table", nq, &ct, true));
        baseline_out.push_str(&baseline_line(name, "CPU c-PQ", nc, &cpu, false));
        println!(
            "{name} done: CPU {:.0} q/s on {nc} queries; c-PQ: wall {:.1} ms = prepare {:.1} + plan {:.1} + launch {:.1} + wait and unpack {:.1} + other; {} batches, {} reruns",
            nc as f64 / cpu.wall_s,
            row.wall_s * 1e3,
            row.prepare_ms,
            row.host_plan_ms,
            row.host_launch_ms,
            row.host_finish_ms,
            row.batches,
            row.reruns
        );
        // after every timed run of the workload: the files' writes do not overlap its timings
        if let Some(root) = &args.dump {
            let dir = root.join(name);
            let t = Instant::now();
            crate::dump::dump_workload(&dir, name, &index, &w.queries, &hits, args.k)?;
            println!(
                "{name} dumped to {} in {:.1} s ({:.2} GB of postings)",
                dir.display(),
                t.elapsed().as_secs_f64(),
                index.num_postings() as f64 * 4e-9
            );
        }
    }
    if wanted(SEQUENCES) {
        let (row, line) = sequence_workload(5_000_000 / scale, nq, args.seed, gpu)?;
        out.push_str(&row);
        csv.push_str(&line);
    }
    if let Some(path) = &args.csv {
        std::fs::write(path, csv).with_context(|| format!("writing {}", path.display()))?;
        let dense_path = path.with_extension("dense.csv");
        std::fs::write(&dense_path, dense_csv)
            .with_context(|| format!("writing {}", dense_path.display()))?;
        if !args.curve.is_empty() {
            let curve_path = path.with_extension("curve.csv");
            std::fs::write(&curve_path, curve_csv)
                .with_context(|| format!("writing {}", curve_path.display()))?;
        }
    }
    if !args.curve.is_empty() {
        println!("\n{curve_out}");
    }
    println!("\n{dense_out}\nbaselines (GPU count table, CPU backend):\n{baseline_out}\n{out}");
    Ok(())
}

/// A line of the baselines' table: `system` timed on `queries` queries of workload `name`, its
/// query transfer, match and select seconds where `stages` (else `-`).
fn baseline_line(name: &str, system: &str, queries: usize, r: &Row, stages: bool) -> String {
    let stage = |ms: f64, width: usize| {
        if stages {
            format!("{:>width$.4}", ms / 1e3)
        } else {
            format!("{:>width$}", "-")
        }
    };
    format!(
        "{name:<14} {system:>12} {queries:>6} {} {} {} {:>9.4} {:>9.0} {:>8.1} {:>8.2}\n",
        stage(r.transfer_ms, 8),
        stage(r.match_ms, 9),
        stage(r.select_ms, 9),
        r.wall_s,
        queries as f64 / r.wall_s,
        r.postings as f64 / r.wall_s / 1e9,
        r.mb_per_query
    )
}
