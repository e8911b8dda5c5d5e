//! A process appending to a write-ahead log is killed (SIGKILL) again and again; after each kill
//! the log reopens and holds every record the process had acknowledged, intact.
//!
//! The test binary runs itself as the appending process: with `GENIE_WAL_CRASH_CHILD` set to a
//! log's path, the test appends from several threads and prints `ACK seq id` once each append has
//! returned.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

/// The environment variable that makes this test the appending child; its value is the log.
const CHILD: &str = "GENIE_WAL_CRASH_CHILD";
const TEST_NAME: &str = "killed_appends_keep_every_acknowledged_record";

/// The record a child appends for `id` (the parent rebuilds it to compare).
#[cfg(target_os = "linux")]
fn record_of(id: u64) -> genie_core::live::wal::Record {
    use genie_core::live::wal::Record;
    if id % 5 == 0 {
        Record::Delete { id }
    } else {
        let len = (id.wrapping_mul(0x9e37_79b9) % 700) as usize;
        let object = (0..len).map(|i| (id as usize * 31 + i * 7) as u8).collect();
        Record::Upsert { id, object }
    }
}

/// The child: appends from 4 threads, batches of 1 to 3 records, until killed.
#[cfg(target_os = "linux")]
fn child(path: &str) {
    use genie_core::live::wal::Wal;
    use std::io::Write;
    use std::sync::Arc;
    let (wal, _) = Wal::open(path).expect("open the log");
    let wal = Arc::new(wal);
    let pid = u64::from(std::process::id());
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let wal = Arc::clone(&wal);
            std::thread::spawn(move || {
                for i in 0u64.. {
                    let n = 1 + (i + t) % 3;
                    let ids: Vec<u64> = (0..n)
                        .map(|k| (pid << 32) | (t << 24) | (i * 3 + k))
                        .collect();
                    let records: Vec<_> = ids.iter().map(|&id| record_of(id)).collect();
                    let range = wal.append(&records).expect("append");
                    let mut out = std::io::stdout().lock();
                    for (seq, id) in range.zip(&ids) {
                        writeln!(out, "ACK {seq} {id}").expect("stdout");
                    }
                    out.flush().expect("stdout");
                }
            })
        })
        .collect();
    for t in threads {
        let _ = t.join();
    }
}

#[test]
fn killed_appends_keep_every_acknowledged_record() {
    if let Ok(path) = std::env::var(CHILD) {
        #[cfg(target_os = "linux")]
        child(&path);
        let _ = path;
        return;
    }
    #[cfg(target_os = "linux")]
    parent();
    #[cfg(not(target_os = "linux"))]
    eprintln!("skipped: the crash test kills a child process with SIGKILL, on Linux only");
}

#[cfg(target_os = "linux")]
fn parent() {
    use genie_core::live::wal::Wal;
    use rand::Rng;
    use std::collections::HashMap;
    use std::io::Read;
    use std::process::{Command, Stdio};
    use std::time::Instant;

    const KILLS: usize = 200;
    const MIN_KILLS: usize = 50;
    let budget = Duration::from_secs(20);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.wal");
    let exe = std::env::current_exe().unwrap();
    let mut rng = rand::rng();
    let start = Instant::now();
    let (mut kills, mut acked_total, mut max_seq) = (0usize, 0usize, 0u64);
    // every acknowledged (seq, id) of every child so far
    let mut acked: HashMap<u64, u64> = HashMap::new();
    while kills < KILLS && start.elapsed() < budget {
        let mut child = Command::new(&exe)
            .args([TEST_NAME, "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD, &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.random_range(0..40_000)));
        child.kill().unwrap(); // SIGKILL
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        let status = child.wait().unwrap();
        assert!(!status.success(), "the child ended on its own: {status:?}");
        kills += 1;
        // only whole lines: the last one may have been cut by the kill
        let whole = out.rfind('\n').map_or("", |end| &out[..end]);
        for line in whole.lines().filter_map(|l| l.strip_prefix("ACK ")) {
            let (seq, id) = line.split_once(' ').unwrap();
            let (seq, id): (u64, u64) = (seq.parse().unwrap(), id.parse().unwrap());
            assert!(
                acked.insert(seq, id).is_none(),
                "sequence {seq} acknowledged twice"
            );
            acked_total += 1;
        }
        let (_, replayed) = Wal::open(&path).unwrap();
        for (i, (seq, _)) in replayed.iter().enumerate() {
            assert_eq!(*seq, i as u64 + 1);
        }
        let by_seq: HashMap<u64, &genie_core::live::wal::Record> =
            replayed.iter().map(|(s, r)| (*s, r)).collect();
        for (&seq, &id) in &acked {
            let got = by_seq.get(&seq).unwrap_or_else(|| {
                panic!("kill {kills}: acknowledged sequence {seq} (id {id}) is missing")
            });
            assert_eq!(**got, record_of(id), "kill {kills}: record {seq} differs");
        }
        max_seq = replayed.len() as u64;
    }
    eprintln!(
        "{kills} kills in {:.1} s, {acked_total} records acknowledged, {max_seq} in the log",
        start.elapsed().as_secs_f64()
    );
    assert!(kills >= MIN_KILLS, "only {kills} kills in {budget:?}");
    assert!(acked_total > 0, "no child acknowledged a record");
}
