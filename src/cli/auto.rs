//! `genie search --device auto` between the CPU and the GPUs: the CPU backend when it would
//! finish the whole search sooner than a GPU could start, from estimates made before anything is
//! opened (the index file's header, the queries file's size and first lines, the host's cores).
//! Only for kinds whose search is the count alone (keywords, documents, table rows): vectors and
//! sequences also re-rank, which these rates do not cover.
//!
//! A query of a keyword-count index reads about `L * M` postings, `L` the mean object length
//! (postings / objects: a query of the data's own shape has as many keywords) and `M` the mean
//! list length (postings / keyword space). The rates are those measured on the device
//! (docs/journal/scaling.md, two H100s with 32 host cores, 2026-11-26): the CPU backend 0.6 G
//! postings/s a core through the CLI (12.2 s for 65,536 queries of 3.5 M postings on 32 cores),
//! a GPU 300 G postings/s. A GPU's start (opening it, taking the index) differs from machine to
//! machine (about 0.45 s on that host, 1.1 s on a four-H100 host): each search on GPUs keeps the
//! seconds it waited for them in the device cache (`gpu-start-N.txt` for N GPUs), and the rule
//! uses this machine's own figure once there is one, the constants before.

use std::io::Read;
use std::path::Path;

/// Postings a CPU core counts a second through the CLI.
const CPU_POSTINGS_PER_CORE_S: f64 = 0.6e9;
/// Postings a GPU counts a second.
const GPU_POSTINGS_S: f64 = 300e9;
/// Seconds to open a GPU (context, kernels) before the index goes up, until this machine has
/// measured its own ([`record_start`]).
const GPU_OPEN_S: f64 = 0.35;
/// Seconds a GPU search's process takes to end after its last answer: the driver hands the
/// device and its memory back at the exit, which the start kept in the device cache does not
/// see (one H200, a 948 MB index, 1,024 queries: 0.35 s in the process, 0.43-0.45 s for the whole
/// command; the CPU backend's command ends with its last answer). Without it the rule chose the
/// GPU at 446 ms against the CPU's 403 (medians of 10, 16 cores, 2026-11-26).
const GPU_EXIT_S: f64 = 0.09;
/// Bytes a second of the index's upload.
const UPLOAD_BYTES_S: f64 = 8e9;
/// Bytes of the queries file read to estimate how many queries it holds.
const SAMPLE: usize = 1 << 16;
/// Seconds one more GPU's context adds to a command (4 H100s: 1,024 queries took 1.32 s whole on
/// one GPU, 1.37 s on two, 1.61 s on four).
const GPU_CONTEXT_S: f64 = 0.1;
/// The share of the ideal saving (`1 - 1/g` of the device time) that more GPUs gave the search
/// stage (65,536 queries: 916 ms on one H100, 750 ms on two, 640 ms on four: 0.36 and 0.40 of
/// the ideal; a chunk's host work does not split).
const GPU_SHARE: f64 = 0.4;

/// The device cache (`GENIE_CACHE_DIR`, else the user's cache folder), where this machine's GPU
/// start times are kept.
pub fn device_cache() -> Option<std::path::PathBuf> {
    genie_core::backend::cuda::kernels::cache_dir()
}

/// The file of the device cache `cache` holding the seconds `gpus` GPUs took to be ready.
fn start_file(cache: &Path, gpus: usize) -> std::path::PathBuf {
    cache.join(format!("gpu-start-{gpus}.txt"))
}

/// The seconds `gpus` GPUs took to open and take an index here last time (kept in `cache`),
/// scaled to an index of `bytes` bytes (the upload's share at [`UPLOAD_BYTES_S`]); `None` before
/// any such search.
fn measured_start(cache: Option<&Path>, gpus: usize, bytes: f64) -> Option<f64> {
    Some(measured_fixed(cache, gpus)?.max(0.0) + bytes / UPLOAD_BYTES_S)
}

/// The part of `gpus` GPUs' start measured here that does not grow with the index: the seconds
/// kept less the upload's share at [`UPLOAD_BYTES_S`]. It may be negative (an upload faster
/// than that rate): the difference between two counts of GPUs is kept whole.
fn measured_fixed(cache: Option<&Path>, gpus: usize) -> Option<f64> {
    let text = std::fs::read_to_string(start_file(cache?, gpus)).ok()?;
    let mut words = text.split_whitespace();
    let (secs, was): (f64, f64) = (words.next()?.parse().ok()?, words.next()?.parse().ok()?);
    Some(secs - was / UPLOAD_BYTES_S)
}

/// Keeps in the device cache `cache` the seconds `gpus` GPUs took to be ready (opened, the index
/// of `bytes` bytes uploaded), for the next searches' rule; a failure to write is no error.
pub fn record_start(cache: Option<&Path>, gpus: usize, secs: f64, bytes: u64) {
    let Some(cache) = cache else { return };
    let _ = std::fs::create_dir_all(cache);
    let path = start_file(cache, gpus);
    let _ = genie_core::atomic::write_atomic(&path, format!("{secs:.4} {bytes}\n").as_bytes());
}

/// What the rule chose and why.
#[derive(Clone, Debug, PartialEq)]
pub struct AutoChoice {
    /// The CPU backend rather than the GPUs.
    pub cpu: bool,
    /// The rule's numbers, for `genie -v search`.
    pub note: String,
    /// The device seconds of the whole search on one GPU.
    pub gpu_search_s: f64,
}

/// How many of `available` GPUs a search of `gpu_search_s` device seconds on one should open:
/// the most (doubling) whose expected saving exceeds what their start adds (measured here when
/// this machine has opened that many before, else [`GPU_CONTEXT_S`] a GPU); with the reason.
pub fn gpus_for(gpu_search_s: f64, available: usize, cache: Option<&Path>) -> (usize, String) {
    // (the difference unclamped: a 5 GB index on two H200s was ready 0.27 s later than on one,
    // where clamping each start at zero first had made it 0.08 s and chosen two GPUs, 12% slower)
    let extra = |g: usize| match (measured_fixed(cache, g), measured_fixed(cache, 1)) {
        (Some(many), Some(one)) => (many - one).max(0.0),
        _ => (g - 1) as f64 * GPU_CONTEXT_S,
    };
    let mut g = 1;
    while g * 2 <= available {
        let next = g * 2;
        let saved = gpu_search_s * (1.0 - 1.0 / next as f64) * GPU_SHARE;
        if saved < extra(next) {
            break;
        }
        g = next;
    }
    let saved = |g: usize| gpu_search_s * (1.0 - 1.0 / g as f64) * GPU_SHARE;
    // the doubling weighed last: the one refused, else the one taken
    let weighed = if g * 2 <= available { g * 2 } else { g };
    let note = format!(
        "{g} of {available} GPUs: about {gpu_search_s:.2} s of device time on one; {weighed} \
         would save {:.2} s against {:.2} s more to start them",
        saved(weighed),
        extra(weighed),
    );
    (g, note)
}

/// The choice for searching the index file `index` with the queries of the file `queries` on
/// `cores` host cores; `None` when it cannot be estimated (an index file of another format,
/// queries from standard input, an empty file).
pub fn choose(
    index: &Path,
    queries: &Path,
    cores: usize,
    cache: Option<&Path>,
) -> Option<AutoChoice> {
    let (objects, space, postings, metadata) = genie_core::InvertedIndex::peek(index)?;
    // kinds whose search is the count alone (vectors and sequences also re-rank)
    let meta: serde_json::Value = serde_json::from_str(&metadata).unwrap_or_default();
    let counts_only = match meta.get("kind").and_then(serde_json::Value::as_str) {
        None => meta.get("plugin").is_none(),
        Some(kind) => ["keywords", "documents", "table"].contains(&kind),
    };
    if !counts_only || objects == 0 || space == 0 || queries == Path::new("-") {
        return None;
    }
    let len = std::fs::metadata(queries).ok()?.len();
    let mut sample = Vec::with_capacity(SAMPLE);
    std::fs::File::open(queries)
        .ok()?
        .take(SAMPLE as u64)
        .read_to_end(&mut sample)
        .ok()?;
    let lines = sample.iter().filter(|&&b| b == b'\n').count();
    if lines == 0 {
        return None;
    }
    let n = (len as f64 * lines as f64 / sample.len() as f64)
        .round()
        .max(1.0);
    let per_query = (postings as f64 / f64::from(objects)) * (postings as f64 / f64::from(space));
    let work = n * per_query;
    let cpu_s = work / (CPU_POSTINGS_PER_CORE_S * cores.max(1) as f64);
    let bytes = postings as f64 * 4.0 + f64::from(space) * 8.0;
    let start_s = measured_start(cache, 1, bytes).unwrap_or(GPU_OPEN_S + bytes / UPLOAD_BYTES_S);
    let gpu_s = start_s + work / GPU_POSTINGS_S + GPU_EXIT_S;
    let cpu = cpu_s < gpu_s;
    Some(AutoChoice {
        cpu,
        gpu_search_s: work / GPU_POSTINGS_S,
        note: format!(
            "--device auto: about {n:.0} queries of {:.2} M postings each: the CPU's {cores} \
             cores in about {cpu_s:.2} s, a GPU in about {gpu_s:.2} s ({start_s:.2} s to open and \
             take the index, {GPU_EXIT_S:.2} s to hand it back): {}",
            per_query / 1e6,
            if cpu { "the CPU" } else { "the GPUs" }
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An index of 2,000 objects of 50 keywords over a space of 100 (lists of 1,000 postings).
    fn index_of(dir: &tempfile::TempDir) -> std::path::PathBuf {
        let mut b = genie_core::IndexBuilder::new();
        for o in 0..2000u32 {
            let keywords: Vec<u32> = (0..50).map(|i| (o * 7 + i * 2) % 100).collect();
            b.push_object(&keywords).expect("pushed");
        }
        let index = dir.path().join("i.genie");
        b.build().expect("built").save(&index).expect("saved");
        index
    }

    /// A file of `n` queries of 20 keywords.
    fn queries_of(dir: &tempfile::TempDir, n: usize, name: &str) -> std::path::PathBuf {
        let line = "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20\n";
        let p = dir.path().join(name);
        std::fs::write(&p, line.repeat(n)).expect("queries");
        p
    }

    #[test]
    fn few_queries_of_a_large_index_stay_on_the_cpu_and_many_go_to_the_gpu() {
        let dir = tempfile::tempdir().expect("dir");
        let index = index_of(&dir);
        let queries = |n: usize, name: &str| queries_of(&dir, n, name);
        let few = choose(&index, &queries(10, "few.txt"), 2, None).expect("estimated");
        assert!(few.cpu, "{}", few.note);
        assert!(few.note.contains("about 10 queries"), "{}", few.note);
        // 0.05 M postings a query: on one core, 10,000 queries outweigh a GPU's start
        let many = choose(&index, &queries(10_000, "many.txt"), 1, None).expect("estimated");
        assert!(!many.cpu, "{}", many.note);
        assert_eq!(choose(&index, Path::new("-"), 2, None), None);
        assert_eq!(choose(&dir.path().join("few.txt"), &index, 2, None), None);
    }

    #[test]
    fn more_gpus_only_where_they_save_more_than_their_contexts() {
        // a device cache with no GPU start measured: the constants apply
        let dir = tempfile::tempdir().expect("dir");
        let cache = Some(dir.path());
        // the measured 65,536 queries: 0.77 s on one GPU: two GPUs, not four
        assert_eq!(gpus_for(0.77, 4, cache).0, 2);
        assert_eq!(gpus_for(0.02, 4, cache).0, 1);
        assert_eq!(gpus_for(10.0, 4, cache).0, 4);
        assert_eq!(gpus_for(10.0, 1, cache).0, 1);
        assert_eq!(gpus_for(10.0, 3, cache).0, 2);
        assert!(gpus_for(0.77, 4, cache).1.starts_with("2 of 4 GPUs"));
        // this machine measured its starts: one GPU 0.2 s, four 1.5 s (for 1 GB), so four
        // GPUs need more than 1.3 s of saving
        record_start(cache, 1, 0.2, 1_000_000_000);
        record_start(cache, 4, 1.5, 1_000_000_000);
        assert_eq!(gpus_for(10.0, 4, cache).0, 4);
        assert_eq!(gpus_for(3.0, 4, cache).0, 2);
        let one = measured_start(cache, 1, 2e9).expect("kept");
        assert!((one - 0.325).abs() < 1e-9, "{one}");
        // a large index uploaded faster than the modelled rate (2 x H200, 5.1 GB: ready in 0.50 s
        // on one GPU, 0.77 s on two): the second GPU costs the 0.27 s between them, more than
        // the 0.11 s it would save
        record_start(cache, 1, 0.50, 5_120_000_000);
        record_start(cache, 2, 0.77, 5_120_000_000);
        assert_eq!(gpus_for(0.54, 2, cache).0, 1);
        assert!(gpus_for(0.54, 2, cache).1.contains("0.27 s more"));
        record_start(cache, 4, 1.5, 1_000_000_000);
        // and the CPU rule weighs the measured start: a slow GPU start keeps more on the CPU
        record_start(cache, 1, 30.0, 1_000_000_000);
        assert!(
            choose(
                &index_of(&dir),
                &queries_of(&dir, 10_000, "q.txt"),
                1,
                cache
            )
            .expect("estimated")
            .cpu
        );
    }
}
