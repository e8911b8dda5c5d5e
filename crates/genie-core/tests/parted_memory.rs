#![allow(clippy::unwrap_used)]
//! A parted index far larger than the memory the search may take: its part files are mapped,
//! never read into the heap (which may not grow by half a part), and at most two parts (the one
//! searched and the next) are resident at once.
//! Alone in its test binary, because it resets and reads the process's peak resident set.

use genie_core::parts::{open_parts, PartWriter};
use genie_core::{Backend, CpuBackend, IndexBuilder, PartedEngine, Query, SearchParams};

/// A `kB` field of /proc/self/status, in bytes.
fn status_bytes(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[test]
fn a_parted_index_is_mapped_and_about_two_parts_are_resident() {
    if status_bytes("VmHWM:").is_none() || std::fs::write("/proc/self/clear_refs", "5").is_err() {
        println!("skipped: needs Linux's /proc/self/status and clear_refs to measure memory");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.genie");
    // 8 parts of 300,000 objects x 10 keywords: 12 MB of postings each, 96 MB in all
    let (parts, per_part, words) = (8u32, 300_000u32, 10u32);
    let mut w = PartWriter::new(&path);
    for p in 0..parts {
        let mut b = IndexBuilder::new().metadata("{}");
        for i in 0..per_part {
            let o = p * per_part + i;
            let kws: Vec<u32> = (0..words)
                .map(|j| j * 1000 + o.wrapping_mul(2_654_435_761) % 1000)
                .collect();
            b.push_object(&kws).unwrap();
        }
        w.add(&b.build().unwrap()).unwrap();
    }
    w.finish().unwrap();
    let part_bytes: u64 = 4 * u64::from(per_part * words);
    let total = part_bytes * u64::from(parts);

    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let (anon0, rss0) = (
        status_bytes("RssAnon:").unwrap(),
        status_bytes("VmRSS:").unwrap(),
    );
    let (_, sources) = open_parts(&path).unwrap();
    let queries: Vec<Query> = (0..64u32)
        .map(|q| {
            Query::from_keywords(
                &(0..words)
                    .map(|j| j * 1000 + q * 7 % 1000)
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    // the search on another thread; this one samples the heap (anonymous memory) meanwhile
    let done = std::sync::atomic::AtomicBool::new(false);
    let mut anon_peak = anon0;
    let hits = std::thread::scope(|s| {
        let search = s.spawn(|| {
            let cpu = CpuBackend::new();
            let engine = PartedEngine::new(sources, vec![&cpu as &dyn Backend]).unwrap();
            let hits = engine.search(&queries, &SearchParams::top_k(10)).unwrap();
            done.store(true, std::sync::atomic::Ordering::Release);
            hits
        });
        while !done.load(std::sync::atomic::Ordering::Acquire) {
            anon_peak = anon_peak.max(status_bytes("RssAnon:").unwrap_or(0));
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        search.join().unwrap()
    });
    let peak = status_bytes("VmHWM:").unwrap();
    assert!(hits.iter().all(|h| h.len() == 10 && h[0].count >= 1));
    let grew = peak.saturating_sub(rss0);
    let heap = anon_peak.saturating_sub(anon0);
    println!(
        "index {:.0} MB in {parts} parts of {:.0} MB: resident grew {:.1} MB at most, the heap {:.1} MB",
        total as f64 / 1e6,
        part_bytes as f64 / 1e6,
        grew as f64 / 1e6,
        heap as f64 / 1e6
    );
    assert!(
        heap < part_bytes / 2,
        "the heap grew by {heap} bytes: a part ({part_bytes} bytes) was read into it"
    );
    assert!(
        grew < part_bytes * 5 / 2 + (8 << 20),
        "resident memory grew by {grew} bytes, about two parts ({part_bytes} bytes each) expected"
    );
}
