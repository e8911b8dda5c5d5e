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
//! a GPU 300 G postings/s and about 0.45 s to open and to take the index (683 ms for 1,024
//! queries of a 1 M index whole, against 223 ms on the CPU).

use std::io::Read;
use std::path::Path;

/// Postings a CPU core counts a second through the CLI.
const CPU_POSTINGS_PER_CORE_S: f64 = 0.6e9;
/// Postings a GPU counts a second.
const GPU_POSTINGS_S: f64 = 300e9;
/// Seconds to open a GPU (context, kernels) before the index goes up.
const GPU_OPEN_S: f64 = 0.35;
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
/// the most (doubling) whose expected saving exceeds the contexts they add; with the reason.
pub fn gpus_for(gpu_search_s: f64, available: usize) -> (usize, String) {
    let mut g = 1;
    while g * 2 <= available {
        let next = g * 2;
        let saved = gpu_search_s * (1.0 - 1.0 / next as f64) * GPU_SHARE;
        if saved < (next - 1) as f64 * GPU_CONTEXT_S {
            break;
        }
        g = next;
    }
    let note = format!(
        "{g} of {available} GPUs: about {gpu_search_s:.2} s of device time on one, {:.2} s saved \
         on {g} against {:.2} s to open the {} more",
        gpu_search_s * (1.0 - 1.0 / g as f64) * GPU_SHARE,
        (g - 1) as f64 * GPU_CONTEXT_S,
        g - 1
    );
    (g, note)
}

/// The choice for searching the index file `index` with the queries of the file `queries` on
/// `cores` host cores; `None` when it cannot be estimated (an index file of another format,
/// queries from standard input, an empty file).
pub fn choose(index: &Path, queries: &Path, cores: usize) -> Option<AutoChoice> {
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
    let start_s = GPU_OPEN_S + (postings as f64 * 4.0 + f64::from(space) * 8.0) / UPLOAD_BYTES_S;
    let gpu_s = start_s + work / GPU_POSTINGS_S;
    let cpu = cpu_s < gpu_s;
    Some(AutoChoice {
        cpu,
        gpu_search_s: work / GPU_POSTINGS_S,
        note: format!(
            "--device auto: about {n:.0} queries of {:.2} M postings each: the CPU's {cores} \
             cores in about {cpu_s:.2} s, a GPU in about {gpu_s:.2} s ({start_s:.2} s to open and \
             take the index): {}",
            per_query / 1e6,
            if cpu { "the CPU" } else { "the GPUs" }
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_queries_of_a_large_index_stay_on_the_cpu_and_many_go_to_the_gpu() {
        let dir = tempfile::tempdir().expect("dir");
        // 2,000 objects of 50 keywords over a space of 100: lists of 1,000 postings
        let objects: Vec<Vec<u32>> = (0..2000u32)
            .map(|o| (0..50).map(|i| (o * 7 + i * 2) % 100).collect())
            .collect();
        let mut b = genie_core::IndexBuilder::new();
        for o in &objects {
            b.push_object(o).expect("pushed");
        }
        let index = dir.path().join("i.genie");
        b.build().expect("built").save(&index).expect("saved");
        let line = "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20\n";
        let queries = |n: usize, name: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, line.repeat(n)).expect("queries");
            p
        };
        let few = choose(&index, &queries(10, "few.txt"), 2).expect("estimated");
        assert!(few.cpu, "{}", few.note);
        assert!(few.note.contains("about 10 queries"), "{}", few.note);
        // 0.05 M postings a query: on one core, 10,000 queries outweigh a GPU's start
        let many = choose(&index, &queries(10_000, "many.txt"), 1).expect("estimated");
        assert!(!many.cpu, "{}", many.note);
        assert_eq!(choose(&index, Path::new("-"), 2), None);
        assert_eq!(choose(&dir.path().join("few.txt"), &index, 2), None);
    }

    #[test]
    fn more_gpus_only_where_they_save_more_than_their_contexts() {
        // the measured 65,536 queries: 0.77 s on one GPU: two GPUs, not four
        assert_eq!(gpus_for(0.77, 4).0, 2);
        assert_eq!(gpus_for(0.02, 4).0, 1);
        assert_eq!(gpus_for(10.0, 4).0, 4);
        assert_eq!(gpus_for(10.0, 1).0, 1);
        assert_eq!(gpus_for(10.0, 3).0, 2);
        assert!(gpus_for(0.77, 4).1.starts_with("2 of 4 GPUs"));
    }
}
