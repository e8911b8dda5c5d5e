//! `genie-bench --mode vectors` on a tiny clustered data set on the CPU: indexes built through
//! the library in a temporary folder, the truth computed here by brute force.
#![allow(clippy::unwrap_used)]

use clap::Parser;
use genie::core::DeviceChoice;
use genie::lsh::{estimate, CodebookIndex, CodebookParams, Family, Probe, VectorIndex, VectorSet};
use genie_bench::ann_genie::{run, Setting, VectorsArgs, HEADER};
use genie_bench::charts::ann::read_points;
use genie_bench::vecs::{write_fvecs, write_ivecs};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Normal};
use std::path::{Path, PathBuf};

const DIM: usize = 16;
const BASE: usize = 600;
const QUERIES: usize = 40;
const K: usize = 10;

/// `n` points around 8 centres (N(0, 10^2) each coordinate), spread N(0, 1).
fn clusters(n: usize, seed: u64) -> VectorSet {
    let mut rng = SmallRng::seed_from_u64(seed);
    let (wide, narrow) = (
        Normal::new(0.0f32, 10.0).unwrap(),
        Normal::new(0.0f32, 1.0).unwrap(),
    );
    let centres: Vec<f32> = (0..8 * DIM).map(|_| wide.sample(&mut rng)).collect();
    let mut data = Vec::with_capacity(n * DIM);
    for _ in 0..n {
        let c = rng.random_range(0..8) * DIM;
        data.extend((0..DIM).map(|j| centres[c + j] + narrow.sample(&mut rng)));
    }
    VectorSet::new(DIM, data).unwrap()
}

/// The ids of the `k` nearest base rows of each query (L2 in f64, ties by id).
fn brute_force(base: &VectorSet, queries: &VectorSet, k: usize) -> Vec<Vec<u32>> {
    queries
        .rows()
        .map(|q| {
            let mut d: Vec<(f64, u32)> = base
                .rows()
                .enumerate()
                .map(|(i, x)| {
                    let s: f64 = x
                        .iter()
                        .zip(q)
                        .map(|(a, b)| (f64::from(*a) - f64::from(*b)).powi(2))
                        .sum();
                    (s, i as u32)
                })
                .collect();
            d.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            d.iter().take(k).map(|x| x.1).collect()
        })
        .collect()
}

/// A temporary folder with a codebook index, an E2LSH index, the queries and their truth.
struct Fixture {
    dir: tempfile::TempDir,
    cells: u32,
    stored: Probe,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let all = clusters(BASE + QUERIES, 13);
        let base = VectorSet::new(DIM, all.as_slice()[..BASE * DIM].to_vec()).unwrap();
        let queries = VectorSet::new(DIM, all.as_slice()[BASE * DIM..].to_vec()).unwrap();
        let stored = Probe {
            probes: 2,
            entries: 4,
            candidates: 50,
            weighted: true,
            levels: 0,
        };
        let codebook = CodebookIndex::build(
            base.clone(),
            CodebookParams::for_data(BASE, DIM, 7),
            stored,
            DeviceChoice::Cpu,
            None,
        )
        .unwrap();
        codebook.save(dir.path().join("codebook.genie")).unwrap();
        let params = estimate::estimate(&base, Family::E2lsh, 7).unwrap();
        VectorIndex::build(base.clone(), params, DeviceChoice::Cpu)
            .unwrap()
            .save(dir.path().join("e2lsh.genie"))
            .unwrap();
        write_fvecs(&dir.path().join("queries.fvecs"), &queries).unwrap();
        write_ivecs(
            &dir.path().join("truth.ivecs"),
            &brute_force(&base, &queries, 2 * K),
        )
        .unwrap();
        Self {
            dir,
            cells: codebook.codebook().params().cells,
            stored,
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The command line of the mode on `index`, with `extra` arguments after the common ones.
    fn args(&self, index: &str, extra: &[&str]) -> VectorsArgs {
        let path = |name: &str| self.path(name).display().to_string();
        let mut argv: Vec<String> = [
            "genie-bench",
            "--mode",
            "vectors",
            "--index",
            &path(index),
            "--queries",
            &path("queries.fvecs"),
            "--truth",
            &path("truth.ivecs"),
            "--data",
            "tiny clusters",
            "--device",
            "cpu",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        argv.extend(extra.iter().map(|s| s.to_string()));
        VectorsArgs::try_parse_from(argv).unwrap()
    }
}

fn csv_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn codebook_rows_with_a_sweep_that_reranks_every_object() {
    let f = Fixture::new();
    let csv = f.path("ann.csv");
    let every = format!("{}:256:{BASE}", f.cells);
    let args = f.args(
        "codebook.genie",
        &[
            "--sweep",
            &format!("1:1:10,{every}"),
            "--csv",
            &csv.display().to_string(),
        ],
    );
    let report = run(&args).unwrap();
    assert_eq!(report.rows.len(), 2);
    for row in &report.rows {
        assert!((0.0..=1.0).contains(&row.recall), "{row:?}");
        assert_eq!(row.system, "genie-codebook");
        assert_eq!(row.queries, QUERIES);
        assert!(row.device.starts_with("cpu ") && row.device.ends_with(" threads"));
        assert!(row.qps.is_finite() && row.qps > 0.0 && row.seconds > 0.0);
        assert_eq!(row.stages.queries, QUERIES as u64, "stages of one search");
        assert!(row.stages.rerank_ms > 0.0, "{:?}", row.stages);
        assert!(report.table.contains(&row.params), "{}", report.table);
    }
    // every cell probed, every codeword taken, every object re-ranked: the exact answer
    assert_eq!(
        report.rows[1].params,
        format!(
            "probes={};entries=256;candidates={BASE};levels=0;k=10;backend=cpu",
            f.cells
        )
    );
    assert_eq!(report.rows[1].recall, 1.0);
    assert!(report.rows[0].recall < 1.0, "{:?}", report.rows[0]);

    let lines = csv_lines(&csv);
    assert_eq!(lines[0], HEADER.join(","));
    assert_eq!(lines.len(), 3);
    assert!(
        lines[2].starts_with("tiny clusters,genie-codebook,probes="),
        "{}",
        lines[2]
    );
    assert!(lines[2].contains(",1.0000,"), "{}", lines[2]);
    // appended, one header
    run(&args).unwrap();
    let lines = csv_lines(&csv);
    assert_eq!(lines.len(), 5);
    assert_eq!(lines.iter().filter(|l| l.starts_with("data,")).count(), 1);
    // and the chart's reader takes them
    let points = read_points(&[csv]).unwrap();
    assert_eq!(points.len(), 4);
    assert_eq!(points[1].recall, 1.0);
}

#[test]
fn the_default_sweep_starts_at_the_stored_probe() {
    let f = Fixture::new();
    let report = run(&f.args("codebook.genie", &["--k", "5"])).unwrap();
    assert!(report.rows.len() >= 5, "{}", report.table);
    assert_eq!(report.rows[0].setting, Setting::Codebook(f.stored));
    assert_eq!(
        report.rows[0].params,
        "probes=2;entries=4;candidates=50;levels=0;k=5;backend=cpu"
    );
    for (i, row) in report.rows.iter().enumerate() {
        assert!((0.0..=1.0).contains(&row.recall), "{row:?}");
        let Setting::Codebook(p) = row.setting else {
            panic!("{row:?}")
        };
        assert!(p.probes >= 1 && p.probes <= f.cells && p.entries <= 256);
        assert!(p.candidates >= 1 && p.candidates as usize <= BASE);
        assert!(
            report.rows[..i].iter().all(|r| r.setting != row.setting),
            "setting {i} repeats"
        );
    }
}

#[test]
fn lsh_rows() {
    let f = Fixture::new();
    let report = run(&f.args("e2lsh.genie", &["--sweep", "10, 200"])).unwrap();
    let params: Vec<&str> = report.rows.iter().map(|r| r.params.as_str()).collect();
    assert_eq!(
        params,
        [
            "candidates=10;k=10;backend=cpu",
            "candidates=200;k=10;backend=cpu"
        ]
    );
    for row in &report.rows {
        assert_eq!(row.system, "genie-e2lsh");
        assert!((0.0..=1.0).contains(&row.recall), "{row:?}");
    }
    let defaults = run(&f.args("e2lsh.genie", &[])).unwrap();
    assert_eq!(
        defaults.rows[0].setting,
        Setting::Lsh { candidates: 200 },
        "max(20 k, 200) first"
    );
    assert!(defaults.rows.len() >= 4);
}

/// The error of a run, as the program prints it.
fn error_of(args: &VectorsArgs) -> String {
    format!("{:#}", run(args).unwrap_err())
}

#[test]
fn bad_inputs_are_named() {
    let f = Fixture::new();
    let base = f.args("codebook.genie", &["--sweep", "1:1:10"]);

    // a truth file with fewer rows than queries
    let all = std::fs::read(f.path("truth.ivecs")).unwrap();
    let short = f.path("short.ivecs");
    std::fs::write(&short, &all[..all.len() / 2]).unwrap();
    let message = error_of(&VectorsArgs {
        truth: short.clone(),
        ..base.clone()
    });
    assert!(
        message.contains(&format!(
            "{}: 20 rows of neighbour ids for 40 queries",
            short.display()
        )),
        "{message}"
    );

    // fewer ids per row than k
    let message = error_of(&VectorsArgs {
        k: 30,
        ..base.clone()
    });
    assert!(
        message.contains("row 0 holds 20 ids, fewer than k = 30"),
        "{message}"
    );

    // queries of another dimension
    let wide = f.path("wide.fvecs");
    write_fvecs(
        &wide,
        &VectorSet::new(DIM + 1, vec![0.5; 3 * (DIM + 1)]).unwrap(),
    )
    .unwrap();
    let message = error_of(&VectorsArgs {
        queries: wide.clone(),
        ..base.clone()
    });
    assert!(
        message.contains(&format!(
            "{}: queries of dimension 17, the index {} holds vectors of dimension 16",
            wide.display(),
            f.path("codebook.genie").display()
        )),
        "{message}"
    );

    // a truth file that is not one
    let message = error_of(&VectorsArgs {
        truth: f.path("queries.fvecs"),
        ..base.clone()
    });
    assert!(message.contains("queries.fvecs"), "{message}");

    // settings of the other family, or malformed
    for (sweep, want) in [
        ("8:2", "a codebook index takes probes:entries:candidates"),
        ("8:0:100", "entries \"0\" is not a whole number >= 1"),
        ("8:300:100", "entries 300 exceed the 256 codewords"),
    ] {
        let message = error_of(&VectorsArgs {
            sweep: vec![sweep.into()],
            ..base.clone()
        });
        assert!(message.contains(want), "{sweep}: {message}");
    }
    let message = error_of(&f.args("e2lsh.genie", &["--sweep", "8:2:100"]));
    assert!(
        message.contains("an LSH index (genie-e2lsh) takes a number of candidates only"),
        "{message}"
    );

    // a CSV of another schema is refused before any search
    let other = f.path("other.csv");
    std::fs::write(&other, "workload,objects\nx,1\n").unwrap();
    let message = error_of(&VectorsArgs {
        csv: Some(other.clone()),
        ..base.clone()
    });
    assert!(
        message.contains("the header is workload,objects"),
        "{message}"
    );
    assert_eq!(
        std::fs::read_to_string(&other).unwrap(),
        "workload,objects\nx,1\n"
    );

    // not an index of vectors
    let message = error_of(&VectorsArgs {
        index: f.path("queries.fvecs"),
        ..base
    });
    assert!(message.contains("queries.fvecs"), "{message}");
}

#[test]
fn the_program_reports_a_bad_input_without_a_panic() {
    let f = Fixture::new();
    let short = f.path("short.ivecs");
    let all = std::fs::read(f.path("truth.ivecs")).unwrap();
    std::fs::write(&short, &all[..all.len() / 4]).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_genie-bench"))
        .args([
            "--mode", "vectors", "--device", "cpu", "--data", "tiny", "--index",
        ])
        .arg(f.path("codebook.genie"))
        .arg("--queries")
        .arg(f.path("queries.fvecs"))
        .arg("--truth")
        .arg(&short)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("10 rows of neighbour ids for 40 queries"),
        "{stderr}"
    );

    // and a good run prints the table
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_genie-bench"))
        .args([
            "--mode=vectors",
            "--device",
            "cpu",
            "--data",
            "tiny",
            "--sweep",
            "2:4:50",
            "--index",
        ])
        .arg(f.path("codebook.genie"))
        .arg("--queries")
        .arg(f.path("queries.fvecs"))
        .arg("--truth")
        .arg(f.path("truth.ivecs"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("probes=2;entries=4;candidates=50;levels=0;k=10;backend=cpu"),
        "{stdout}"
    );
    assert!(stdout.contains("rerank_ms"), "{stdout}");
}

/// A cosine index is searched as the CLI searches it: each query scaled to length 1 first. The
/// queries and the same queries four times longer (a power of two: the same unit vectors, bit for
/// bit) give the same recall at every setting.
#[test]
fn a_cosine_index_searches_its_queries_scaled_to_length_1() {
    use genie::lsh::codebook::space::Space;
    use genie_bench::ann_genie::Opened;
    let f = Fixture::new();
    let all = clusters(BASE + QUERIES, 13);
    let base = VectorSet::new(DIM, all.as_slice()[..BASE * DIM].to_vec()).unwrap();
    let queries = VectorSet::new(DIM, all.as_slice()[BASE * DIM..].to_vec()).unwrap();
    let mut index = CodebookIndex::build(
        Space::Cosine.objects(base.clone()).unwrap(),
        CodebookParams::for_data(BASE, DIM, 7),
        f.stored,
        DeviceChoice::Cpu,
        None,
    )
    .unwrap();
    index.set_space(Space::Cosine);
    index.save(f.path("cosine.genie")).unwrap();
    let longer: Vec<f32> = queries.as_slice().iter().map(|x| 4.0 * x).collect();
    write_fvecs(
        &f.path("longer.fvecs"),
        &VectorSet::new(DIM, longer).unwrap(),
    )
    .unwrap();
    // the truth by cosine: L2 among the unit vectors
    let unit = |v: &VectorSet| Space::Cosine.objects(v.clone()).unwrap();
    write_ivecs(
        &f.path("truth.ivecs"),
        &brute_force(&unit(&base), &unit(&queries), 2 * K),
    )
    .unwrap();

    let opened = Opened::open(&f.path("cosine.genie"), DeviceChoice::Cpu).unwrap();
    let searched = opened.in_space(queries.clone()).unwrap();
    for row in searched.rows() {
        let len: f32 = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((len - 1.0).abs() < 1e-5, "a query of length {len}");
    }

    let sweep = format!("1:4:50,2:4:50,{}:256:{BASE}", f.cells);
    let recalls = |queries: &str| -> Vec<f64> {
        let mut args = f.args("cosine.genie", &["--sweep", &sweep]);
        args.queries = f.path(queries);
        run(&args).unwrap().rows.iter().map(|r| r.recall).collect()
    };
    let (plain, long) = (recalls("queries.fvecs"), recalls("longer.fvecs"));
    assert_eq!(plain, long);
    assert_eq!(plain.len(), 3);
    // every cell, every object re-ranked: the exact cosine neighbours
    assert_eq!(plain[2], 1.0);
}
