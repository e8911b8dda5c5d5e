//! LSH hashing on the GPU gives the CPU's keywords bit for bit, for every family (E2LSH, its L1
//! variant, random binning and sign random projections), on vectors whose dimension is not a
//! multiple of the CPU's 8 summation lanes, is one, or is below it, with values of every
//! magnitude and sign, zeros (sign ties), infinities and NaN (saturated and NaN conversions); and
//! an index tuned at build is the same on both. Without a GPU it prints `skipped: <reason>`.

#![allow(clippy::unwrap_used)]

use genie::lsh::{Family, LshParams, VectorSet, VectorTransform};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Whether no GPU is usable (then the reason is printed: `skipped: <reason>`).
fn no_gpu() -> bool {
    match genie::core::backend::cuda_probe() {
        Ok(_) => false,
        Err(reason) => {
            skip(reason);
            true
        }
    }
}

fn skip(reason: impl std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "skipped: {reason}");
}

/// The data sets of [`datasets`] whose distances are finite (infinities and NaN make distances
/// NaN, which equal nothing), each with its first `queries` rows as queries.
fn finite_sets(n: usize, queries: usize) -> Vec<(&'static str, VectorSet, VectorSet)> {
    datasets(n)
        .into_iter()
        .filter(|(name, _)| !name.starts_with("special") && !name.starts_with("magnitudes"))
        .map(|(name, v)| {
            let d = v.dim();
            let q = VectorSet::new(d, v.as_slice()[..queries * d].to_vec()).unwrap();
            (name, v, q)
        })
        .collect()
}

/// Named data sets of `n` vectors.
fn datasets(n: usize) -> Vec<(&'static str, VectorSet)> {
    let mut rng = StdRng::seed_from_u64(9);
    let mut sets = Vec::new();
    let mut add = |name, d: usize, data: Vec<f32>| {
        sets.push((name, VectorSet::new(d, data).unwrap()));
    };
    // a dimension with full lanes and a tail
    let d = 101;
    let data = (0..n * d)
        .map(|_| rng.random_range(-50.0f32..200.0))
        .collect();
    add("uniform -50..200, dim 101", d, data);
    // magnitudes 1e-3 to 1e30 of either sign: E2LSH signatures and RBH cells saturate
    let d = 16;
    let data = (0..n * d)
        .map(|_| {
            let mag = 10f32.powf(rng.random_range(-3.0f32..30.0));
            if rng.random_bool(0.5) {
                -mag
            } else {
                mag
            }
        })
        .collect();
    add("magnitudes 1e-3..1e30, dim 16", d, data);
    // a tail only, and special values
    let d = 3;
    let specials = [
        0.0f32,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MAX,
        f32::MIN,
        1e-40,
        -1e-40,
    ];
    let data = (0..n * d)
        .map(|_| {
            if rng.random_bool(0.3) {
                specials[rng.random_range(0..specials.len())]
            } else {
                rng.random_range(-5.0f32..5.0)
            }
        })
        .collect();
    add("special values, dim 3", d, data);
    // zero vectors (every SRP dot product is a tie at 0)
    let d = 37;
    let data = (0..n * d)
        .map(|i| {
            if (i / d) % 7 == 0 {
                0.0
            } else {
                rng.random_range(-1.0f32..1.0)
            }
        })
        .collect();
    add("small, every 7th vector zero, dim 37", d, data);
    sets
}

#[test]
fn gpu_hashing_equals_cpu_for_every_family() {
    if no_gpu() {
        return;
    }
    // (family, width, SRP bits, functions, buckets)
    let cases = [
        (Family::E2lsh, 40.0, 1, 48, 8192),
        (Family::E2lsh, 0.5, 1, 48, 1000),
        (Family::L1, 300.0, 1, 48, 8192),
        (Family::Rbh, 50.0, 1, 48, 8192),
        (Family::Rbh, 0.01, 1, 48, 977),
        (Family::Srp, 0.0, 8, 48, 8192),
        (Family::Srp, 0.0, 1, 48, 8192),
        (Family::Srp, 0.0, 33, 6, 8192),
        (Family::Srp, 0.0, 64, 6, 8192),
    ];
    let mut failures = Vec::new();
    for (name, vectors) in datasets(2000) {
        let (n, d) = (vectors.len(), vectors.dim());
        for (family, width, bits, functions, buckets) in cases {
            let params = LshParams {
                bits,
                buckets,
                ..LshParams::new(family, d, functions, width, 5)
            };
            let t = VectorTransform::new(params).unwrap();
            let gpu = t
                .keywords_of_all_gpu(&vectors)
                .unwrap()
                .expect("every family hashes on a GPU");
            let cpu: Vec<u32> = (0..n)
                .flat_map(|i| t.keywords(vectors.row(i)).unwrap())
                .collect();
            let differ = gpu.iter().zip(&cpu).filter(|(a, b)| a != b).count();
            if gpu.len() != cpu.len() || differ > 0 {
                failures.push(format!(
                    "{name}: {family:?} width {width} bits {bits}: {differ} of {} keywords differ \
                     ({} from the GPU)",
                    cpu.len(),
                    gpu.len()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Re-ranking on the GPU (the vectors resident beside the index) gives the CPU's results: the same
/// candidates, distances equal bit for bit, the same order, for each measure (L2, L1, cosine).
#[test]
fn gpu_reranking_equals_cpu_for_every_metric() {
    use genie::core::DeviceChoice;
    use genie::lsh::VectorIndex;
    if no_gpu() {
        return;
    }
    let mut failures = Vec::new();
    for (name, vectors, queries) in finite_sets(3000, 200) {
        let d = vectors.dim();
        for (family, width) in [(Family::E2lsh, 8.0), (Family::L1, 60.0), (Family::Srp, 0.0)] {
            let params = LshParams::new(family, d, 32, width, 3);
            let gpu =
                VectorIndex::build(vectors.clone(), params.clone(), DeviceChoice::Gpu).unwrap();
            assert!(
                gpu.reranks_on_gpu(),
                "{name} {family:?}: the vectors are not on the GPU"
            );
            let cpu = VectorIndex::build(vectors.clone(), params, DeviceChoice::Cpu).unwrap();
            assert!(!cpu.reranks_on_gpu());
            let (g, c) = (
                gpu.search(&queries, 10, 100).unwrap(),
                cpu.search(&queries, 10, 100).unwrap(),
            );
            if g != c {
                let differ = g.iter().zip(&c).filter(|(a, b)| a != b).count();
                failures.push(format!("{name} {family:?}: {differ} of 200 queries differ"));
            }
            assert!(
                c.iter().all(|h| h.len() == 10),
                "{name} {family:?}: short results"
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// An index tuned at build (width and candidates) on the GPU is the one tuned on the CPU (the
/// tuning changes parameters, not arithmetic), and answers the same with its defaults.
#[test]
fn gpu_tuned_index_equals_cpu() {
    use genie::core::DeviceChoice;
    use genie::lsh::tune::{build_tuned, TuneSpec};
    use genie::lsh::{estimate, VectorIndex};
    if no_gpu() {
        return;
    }
    let (_, vectors) = datasets(3000)
        .into_iter()
        .find(|(name, _)| name.starts_with("uniform"))
        .unwrap();
    let d = vectors.dim();
    let queries = VectorSet::new(d, vectors.as_slice()[..200 * d].to_vec()).unwrap();
    for family in [Family::E2lsh, Family::Rbh, Family::Srp] {
        let params = estimate::estimate(&vectors, family, 3).unwrap();
        let spec = TuneSpec {
            target: 0.9,
            keep_width: false,
            candidates: None,
        };
        let build = |device| -> VectorIndex {
            build_tuned(vectors.clone(), params.clone(), &spec, device, None)
                .unwrap()
                .0
        };
        let (gpu, cpu) = (build(DeviceChoice::Gpu), build(DeviceChoice::Cpu));
        assert_eq!(gpu.metadata(), cpu.metadata(), "{family:?}");
        let c = cpu.default_candidates(10);
        assert_eq!(
            gpu.search(&queries, 10, c).unwrap(),
            cpu.search(&queries, 10, c).unwrap(),
            "{family:?}"
        );
    }
}

/// The codebook scan on the GPU (hit counts, candidates, exact distances and the top `k` on the
/// device) gives the CPU's answers: the same candidates in the same order, the same re-ranked hits
/// bit for bit, for probes weighted or not, one codeword to all 256, few candidates (ties cut in
/// scan order) to more than the probed cells hold, and a batch of mixed `k` and candidates equal
/// to its queries searched alone.
/// A probe of each weighting: ranks of the nearest codewords, and closeness of 31 levels.
fn both_weightings() -> [genie::lsh::Probe; 2] {
    use genie::lsh::Probe;
    [
        Probe::default(),
        Probe {
            levels: 31,
            entries: 256,
            ..Probe::default()
        },
    ]
}

#[test]
fn gpu_codebook_scan_equals_cpu() {
    use genie::core::DeviceChoice;
    use genie::lsh::codebook::index::Counting;
    use genie::lsh::{CodebookIndex, CodebookParams, Probe};
    if no_gpu() {
        return;
    }
    let (name, vectors) = datasets(6000).swap_remove(0);
    let d = vectors.dim();
    let queries = VectorSet::new(d, vectors.as_slice()[..300 * d].to_vec()).unwrap();
    let params = CodebookParams::for_data(vectors.len(), d, 5);
    let cpu = CodebookIndex::build(
        vectors.clone(),
        params,
        Probe::default(),
        DeviceChoice::Cpu,
        None,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cb.genie");
    cpu.save(&path).unwrap();
    let gpu = CodebookIndex::load(&path, DeviceChoice::Gpu).unwrap();
    assert!(gpu.scans_on_gpu(), "{name}: the cells are not on the GPU");
    assert!(gpu.plans_on_gpu(), "{name}: the codebook is not on the GPU");
    assert!(!cpu.scans_on_gpu());
    let mut failures = Vec::new();
    // the device's probes are the CPU's, cell for cell and codeword for codeword
    for (probes, entries) in [(1, 1), (8, 4), (16, 256), (500, 3)] {
        let probe = Probe {
            probes,
            entries,
            ..Probe::default()
        };
        let want = cpu.codebook().plan(&queries, &probe).unwrap();
        let got = gpu.gpu_plan(&queries, &probe).unwrap().unwrap();
        if got.cells != want.cells {
            failures.push(format!("{probe:?}: the device's cells differ"));
        }
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        if bits(&got.scores) != bits(&want.scores) {
            failures.push(format!("{probe:?}: the device's cell scores differ"));
        }
        if got.picks != want.picks {
            let differ = got
                .picks
                .iter()
                .zip(&want.picks)
                .filter(|(a, b)| a != b)
                .count();
            failures.push(format!(
                "{probe:?}: {differ} of the device's codewords differ"
            ));
        }
    }
    for (probes, entries, weighted, candidates, levels) in [
        (8, 4, true, 100, 0),
        (3, 1, false, 10, 0),
        (16, 8, true, 100_000, 0),
        (2, 256, true, 50, 0),
        (1, 2, false, 1, 0),
        (8, 256, true, 100, 31),
        (3, 256, true, 7, 2),
        (16, 256, true, 100_000, 255),
        (100, 256, true, 300, 31),
    ] {
        let probe = Probe {
            probes,
            entries,
            candidates,
            weighted,
            levels,
        };
        let (g, c) = (
            gpu.search_counts(&queries, candidates as usize, &probe, Counting::Scan)
                .unwrap(),
            cpu.search_counts(&queries, candidates as usize, &probe, Counting::Scan)
                .unwrap(),
        );
        if g != c {
            let differ = g.iter().zip(&c).filter(|(a, b)| a != b).count();
            failures.push(format!(
                "{probe:?}: candidates of {differ} of 300 queries differ"
            ));
        }
        let (g, c) = (
            gpu.search(&queries, 10, &probe).unwrap(),
            cpu.search(&queries, 10, &probe).unwrap(),
        );
        if g != c {
            let differ = g.iter().zip(&c).filter(|(a, b)| a != b).count();
            failures.push(format!(
                "{probe:?}: answers of {differ} of 300 queries differ"
            ));
        }
    }
    // a served batch: each query its own k and candidates, as if alone, for both weightings
    for probe in both_weightings() {
        let ks: Vec<usize> = (0..queries.len()).map(|i| [1, 10, 25][i % 3]).collect();
        let cands: Vec<usize> = (0..queries.len()).map(|i| [20, 100][i % 2]).collect();
        let batch = gpu
            .search_each(&queries, &ks, &cands, &probe, Counting::Scan)
            .unwrap();
        for (i, got) in batch.iter().enumerate() {
            let one = queries.select(&[i]).unwrap();
            let alone = cpu
                .search(
                    &one,
                    ks[i],
                    &Probe {
                        candidates: cands[i] as u32,
                        ..probe
                    },
                )
                .unwrap();
            if got != &alone[0] {
                failures.push(format!(
                    "{probe:?}: batch query {i} differs from its lone search"
                ));
            }
        }
    }
    // rows held apart go to the device as they lie, through the pinned lanes once the batch
    // passes a million floats (rows cut across the lanes' slots): the answers of the gathered
    // batch, on the device and on the CPU
    let big = (1 << 20) / d + 777;
    let all: Vec<f32> = (0..big)
        .flat_map(|i| vectors.row(i % vectors.len()).to_vec())
        .collect();
    let flat = VectorSet::new(d, all).unwrap();
    let rows: Vec<&[f32]> = (0..big).map(|i| flat.row(i)).collect();
    for probe in both_weightings() {
        let ks = vec![10; big];
        let cands = vec![probe.candidates as usize; big];
        let from_rows = gpu
            .search_rows(&rows, &ks, &cands, &probe, Counting::Scan)
            .unwrap();
        let gathered = gpu
            .search_each(&flat, &ks, &cands, &probe, Counting::Scan)
            .unwrap();
        let on_cpu = cpu
            .search_rows(&rows, &ks, &cands, &probe, Counting::Scan)
            .unwrap();
        if from_rows != gathered || from_rows != on_cpu {
            let differ = from_rows
                .iter()
                .zip(&on_cpu)
                .filter(|(a, b)| a != b)
                .count();
            failures.push(format!(
                "{probe:?}: rows held apart: {differ} of {big} answers differ from the CPU's"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A codebook trained and encoded with the nearest centres found on the GPU is the CPU's, centre
/// for centre and code for code, and the device's nearest centres of wide rows are the CPU's.
#[test]
fn gpu_training_equals_cpu() {
    use genie::core::DeviceChoice;
    use genie::lsh::codebook::assign::Assigner;
    use genie::lsh::{CodebookIndex, CodebookParams, Probe};
    if no_gpu() {
        return;
    }
    let mut failures = Vec::new();
    // finite data (the CPU's and the device's NaN differ in sign bit)
    for (name, vectors) in datasets(6000).into_iter().take(1) {
        let d = vectors.dim();
        let params = CodebookParams::for_data(vectors.len(), d, 7);
        let build = |train_on| {
            CodebookIndex::build_on(
                vectors.clone(),
                params.clone(),
                Probe::default(),
                DeviceChoice::Cpu,
                train_on,
                None,
            )
            .unwrap()
        };
        let (cpu, gpu) = (build(DeviceChoice::Cpu), build(DeviceChoice::Gpu));
        if cpu.codebook() != gpu.codebook() {
            failures.push(format!("{name}: the GPU-trained codebook differs"));
        }
        if cpu.cells() != gpu.cells() {
            failures.push(format!("{name}: the GPU-encoded codes differ"));
        }
        let assigner = Assigner::new(DeviceChoice::Gpu, d).unwrap();
        assert!(assigner.on_gpu());
        // the GPU encoding in blocks of 700 rows, the last one partial
        let book = cpu.codebook();
        let want = book.encode_all(&vectors, &Assigner::cpu(d)).unwrap();
        let got = book.encode_blocks(&vectors, &assigner, 700 * d).unwrap();
        if got != want {
            let differ = got.iter().zip(&want).filter(|(a, b)| a != b).count();
            failures.push(format!("{name}: {differ} codes encoded in blocks differ"));
        }
        let centres =
            genie::lsh::codebook::kmeans::Centres::new(vectors.as_slice()[..300 * d].to_vec(), d);
        let want = Assigner::cpu(d)
            .nearest(&centres, vectors.as_slice())
            .unwrap();
        let got = assigner.nearest(&centres, vectors.as_slice()).unwrap();
        if got != want {
            let differ = got.iter().zip(&want).filter(|(a, b)| a != b).count();
            failures.push(format!("{name}: {differ} nearest centres differ"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Re-ranking from a compact copy on the GPU gives the CPU's distances on the rebuilt rows, bit
/// for bit: half precision and 8-bit steps for every metric (a re-ranker of its own), and each
/// form of a codebook index (its codes too) searched whole, scanned and re-ranked on the device.
#[test]
fn gpu_compact_reranking_equals_cpu() {
    use genie::core::{DeviceChoice, Hit};
    use genie::lsh::rerank::Reranker;
    use genie::lsh::{CodebookIndex, CodebookParams, Form, Metric, Probe, Store};
    use std::sync::Arc;
    if no_gpu() {
        return;
    }
    let mut failures = Vec::new();
    for (name, vectors, queries) in finite_sets(3000, 100) {
        let hits: Vec<Vec<Hit>> = (0..100u32)
            .map(|q| {
                (0..150u32)
                    .map(|j| Hit {
                        id: (q * 37 + j * 11) % 3000,
                        count: 0,
                    })
                    .collect()
            })
            .collect();
        let floats = Arc::new(vectors.clone());
        for form in [Form::F16, Form::Sq8] {
            let store = Arc::new(Store::encode(&floats, form, None).unwrap());
            for metric in [Metric::L2, Metric::L1, Metric::Cosine] {
                let gpu = Reranker::from_store(Arc::clone(&store), metric, Some(0));
                assert!(gpu.on_gpu(), "{name} {form:?}: not on the GPU");
                let cpu = Reranker::from_store(Arc::clone(&store), metric, None);
                let (g, c) = (
                    gpu.rerank(&queries, &hits, 10).unwrap(),
                    cpu.rerank(&queries, &hits, 10).unwrap(),
                );
                if g != c {
                    let differ = g.iter().zip(&c).filter(|(a, b)| a != b).count();
                    failures.push(format!(
                        "{name} {form:?} {metric:?}: {differ} of 100 differ"
                    ));
                }
            }
        }
    }
    let (name, vectors) = datasets(6000).swap_remove(0);
    let d = vectors.dim();
    let queries = VectorSet::new(d, vectors.as_slice()[..300 * d].to_vec()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for form in [Form::F16, Form::Sq8, Form::Codes] {
        let params = CodebookParams::for_data(vectors.len(), d, 5);
        let mut cpu = CodebookIndex::build(
            vectors.clone(),
            params,
            Probe::default(),
            DeviceChoice::Cpu,
            None,
        )
        .unwrap();
        cpu.set_rerank(form).unwrap();
        let path = dir.path().join(format!("{}.genie", form.name()));
        cpu.save(&path).unwrap();
        let gpu = CodebookIndex::load(&path, DeviceChoice::Gpu).unwrap();
        assert!(
            gpu.reranks_on_gpu(),
            "{name} {form:?}: re-rank not on the GPU"
        );
        assert!(gpu.scans_on_gpu(), "{name} {form:?}: scan not on the GPU");
        for (probes, entries, candidates, levels) in [(8, 4, 100, 0), (16, 256, 500, 31)] {
            let probe = Probe {
                probes,
                entries,
                candidates,
                weighted: true,
                levels,
            };
            let (g, c) = (
                gpu.search(&queries, 10, &probe).unwrap(),
                cpu.search(&queries, 10, &probe).unwrap(),
            );
            if g != c {
                let differ = g.iter().zip(&c).filter(|(a, b)| a != b).count();
                failures.push(format!("{name} {form:?} {probe:?}: {differ} of 300 differ"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A filter's exact search on the GPU (every query against the same allowed objects, ranked on
/// the device: `Reranker::rank_allowed`) gives the CPU's hits bit for bit, for the float copy and
/// the compact ones, every metric, each query's own `k` (0 and past the allowed included), and
/// filters that allow none, a few or all objects.
#[test]
fn gpu_filtered_exact_search_equals_cpu() {
    use genie::core::ObjectMask;
    use genie::lsh::rerank::Reranker;
    use genie::lsh::stages::StageClock;
    use genie::lsh::{Form, Metric, Store};
    use std::sync::Arc;
    if no_gpu() {
        return;
    }
    let mut failures = Vec::new();
    for (name, vectors, queries) in finite_sets(3000, 100) {
        let n = vectors.len() as u32;
        // each query's own k; the largest decides the device's path: up to 32 one launch that
        // keeps each query's best (a last tile of fewer rows than 32 included), past it the
        // distances then a top k
        let k_sets = [[0, 1, 10, 37, 500], [0, 1, 5, 10, 32], [3, 10, 1, 0, 7]];
        let masks = [
            ObjectMask::from_allowed(n, []).unwrap(),
            ObjectMask::from_allowed(n, (0..n).filter(|i| i % 97 == 5)).unwrap(),
            ObjectMask::from_allowed(n, (0..n).filter(|i| i % 7 == 3)).unwrap(),
            ObjectMask::from_allowed(n, 0..n).unwrap(),
        ];
        let floats = Arc::new(vectors.clone());
        for form in [None, Some(Form::F16), Some(Form::Sq8)] {
            for metric in [Metric::L2, Metric::L1, Metric::Cosine] {
                let make = |gpu| match form {
                    None => Reranker::new(Arc::clone(&floats), metric, gpu),
                    Some(f) => Reranker::from_store(
                        Arc::new(Store::encode(&floats, f, None).unwrap()),
                        metric,
                        gpu,
                    ),
                };
                let (gpu, cpu) = (make(Some(0)), make(None));
                assert!(gpu.on_gpu(), "{name} {form:?}: not on the GPU");
                for (mask, set) in masks
                    .iter()
                    .flat_map(|m| k_sets.iter().map(move |s| (m, s)))
                {
                    let ks: Vec<usize> = (0..queries.len()).map(|q| set[q % 5]).collect();
                    let clock = StageClock::default();
                    let (g, c) = (
                        gpu.rank_allowed(&queries, &ks, mask, &clock).unwrap(),
                        cpu.rank_allowed(&queries, &ks, mask, &clock).unwrap(),
                    );
                    let allowed = mask.count();
                    if g != c {
                        let differ = g.iter().zip(&c).filter(|(a, b)| a != b).count();
                        failures.push(format!(
                            "{name} {form:?} {metric:?}, {allowed} allowed, ks {set:?}: {differ} of 100 differ"
                        ));
                    }
                    for (h, &k) in c.iter().zip(&ks) {
                        assert_eq!(h.len(), k.min(allowed as usize));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The device's `top` nearest centres of each row are the CPU's `scores` and `smallest`, index
/// for index and score for score: ranks chosen one warp a row (a small `top`) and one block a row
/// (a larger one, in one window or several), centres repeated (equal scores, ordered by index),
/// and a `top` past the number of centres.
#[test]
fn gpu_nearest_k_equals_cpu() {
    use genie::core::DeviceChoice;
    use genie::lsh::codebook::assign::Assigner;
    use genie::lsh::codebook::kmeans::Centres;
    if no_gpu() {
        return;
    }
    let mut rng = StdRng::seed_from_u64(41);
    let d = 37;
    let rows: Vec<f32> = (0..60 * d)
        .map(|_| rng.random_range(-1.0f32..1.0))
        .collect();
    let (cpu, gpu) = (
        Assigner::cpu(d),
        Assigner::new(DeviceChoice::Gpu, d).unwrap(),
    );
    let mut failures = Vec::new();
    for (ncells, tops) in [
        (20usize, vec![1usize, 8, 9, 20, 500]),
        (9000, vec![1, 5, 9, 300, 4096, 4097, 8999, 9000, 9500]),
    ] {
        // the second half repeats the first: every score appears twice
        let half: Vec<f32> = (0..ncells / 2 * d)
            .map(|_| rng.random_range(-1.0f32..1.0))
            .collect();
        let data = [half.clone(), half].concat();
        let centres = Centres::new(data, d);
        for top in tops {
            let want = cpu.nearest_k(&centres, &rows, top).unwrap();
            let got = gpu.nearest_k(&centres, &rows, top).unwrap();
            if got.0 != want.0 {
                let differ = got.0.iter().zip(&want.0).filter(|(a, b)| a != b).count();
                failures.push(format!(
                    "{ncells} cells, top {top}: {differ} indices differ"
                ));
            }
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            if bits(&got.1) != bits(&want.1) {
                failures.push(format!("{ncells} cells, top {top}: the scores differ"));
            }
            assert_eq!(want.0.len(), 60 * top);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
