//! Tests of the write-ahead log: round trips, torn tails, corruption, group commit.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use proptest::prelude::*;

use super::wal::{Record, Wal, HEADER_LEN, MAX_PAYLOAD};
use crate::error::GenieError;

fn records(n: u64) -> Vec<Record> {
    (0..n)
        .map(|i| match i % 3 {
            0 => Record::Delete { id: i * 7 },
            // every third object empty, the others of varied lengths
            1 => Record::Upsert {
                id: i,
                object: Vec::new(),
            },
            _ => Record::Upsert {
                id: u64::MAX - i,
                object: (0..(i * 13 % 300)).map(|b| (b * 31 + i) as u8).collect(),
            },
        })
        .collect()
}

fn numbered(first: u64, records: &[Record]) -> Vec<(u64, Record)> {
    (first..).zip(records.iter().cloned()).collect()
}

#[test]
fn round_trip_and_sequence_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.wal");
    let all = records(500);
    {
        let (wal, replayed) = Wal::open(&path).unwrap();
        assert!(replayed.is_empty());
        assert_eq!(wal.append(&all[..1]).unwrap(), 1..2);
        assert_eq!(wal.append(&all[1..200]).unwrap(), 2..201);
        assert_eq!(wal.append(&[]).unwrap(), 201..201);
    }
    {
        let (wal, replayed) = Wal::open(&path).unwrap();
        assert_eq!(replayed, numbered(1, &all[..200]));
        assert_eq!(wal.next_seq(), 201);
        assert_eq!(wal.append(&all[200..]).unwrap(), 201..501);
    }
    let (_, replayed) = Wal::open(&path).unwrap();
    assert_eq!(replayed, numbered(1, &all));
}

/// A log of `n` records; returns its path and the offset where the last frame starts.
fn log_with(dir: &std::path::Path, n: u64) -> (std::path::PathBuf, u64, Vec<Record>) {
    let path = dir.join("log.wal");
    let all = records(n);
    let (wal, _) = Wal::open(&path).unwrap();
    wal.append(&all[..all.len() - 1]).unwrap();
    let last_start = std::fs::metadata(&path).unwrap().len();
    wal.append(&all[all.len() - 1..]).unwrap();
    (path, last_start, all)
}

#[test]
fn a_torn_tail_is_cut_at_every_offset_of_the_last_frame() {
    let dir = tempfile::tempdir().unwrap();
    // record 5 (index 5 % 3 == 2) is an upsert with a 65-byte object
    let (path, last_start, all) = log_with(dir.path(), 6);
    let whole = std::fs::read(&path).unwrap();
    assert!(whole.len() as u64 > last_start + 25);
    for cut in last_start..whole.len() as u64 {
        std::fs::write(&path, &whole[..cut as usize]).unwrap();
        let (wal, replayed) = Wal::open(&path).unwrap();
        assert_eq!(replayed, numbered(1, &all[..5]), "cut at {cut}");
        assert_eq!(std::fs::metadata(&path).unwrap().len(), last_start);
        assert_eq!(wal.next_seq(), 6);
    }
    // a flipped byte in the last frame (its checksum no longer matches) is a torn tail too
    for at in last_start..whole.len() as u64 {
        let mut bytes = whole.clone();
        bytes[at as usize] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        let (_, replayed) = Wal::open(&path).unwrap();
        assert_eq!(replayed, numbered(1, &all[..5]), "flip at {at}");
        assert_eq!(std::fs::metadata(&path).unwrap().len(), last_start);
    }
    // appending after the cut continues the sequence and reads back whole
    std::fs::write(&path, &whole[..whole.len() - 3]).unwrap();
    let (wal, _) = Wal::open(&path).unwrap();
    assert_eq!(wal.append(&all[5..]).unwrap(), 6..7);
    drop(wal);
    assert_eq!(Wal::open(&path).unwrap().1, numbered(1, &all));
}

#[test]
fn a_corrupt_middle_frame_is_an_error_naming_the_offset() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.wal");
    let all = records(10);
    let (wal, _) = Wal::open(&path).unwrap();
    wal.append(&all[..3]).unwrap();
    let third_end = std::fs::metadata(&path).unwrap().len();
    wal.append(&all[3..4]).unwrap();
    wal.append(&all[4..]).unwrap();
    drop(wal);
    let whole = std::fs::read(&path).unwrap();
    // corrupt the payload of the fourth frame (a delete: its id's last byte)
    let mut bytes = whole.clone();
    bytes[third_end as usize + 8 + 16] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let err = Wal::open(&path).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, GenieError::Log { .. }), "{msg}");
    assert!(msg.contains(&format!("byte {third_end}")), "{msg}");
    assert!(msg.contains("log.wal"), "{msg}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "nothing truncated");
    // a length field corrupted to run past the end, with valid frames after it: corruption too
    let mut bytes = whole.clone();
    bytes[third_end as usize + 3] = 0x7f;
    std::fs::write(&path, &bytes).unwrap();
    let msg = Wal::open(&path).unwrap_err().to_string();
    assert!(msg.contains(&format!("byte {third_end}")), "{msg}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "nothing truncated");
}

#[test]
fn another_magic_or_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.wal");
    drop(Wal::open(&path).unwrap());
    let whole = std::fs::read(&path).unwrap();
    assert_eq!(whole.len() as u64, HEADER_LEN);
    let mut bytes = whole.clone();
    bytes[0] = b'X';
    std::fs::write(&path, &bytes).unwrap();
    let msg = Wal::open(&path).unwrap_err().to_string();
    assert!(
        msg.contains("not a write-ahead log") && msg.contains("log.wal"),
        "{msg}"
    );
    let mut bytes = whole.clone();
    bytes[8] = 9;
    std::fs::write(&path, &bytes).unwrap();
    let msg = Wal::open(&path).unwrap_err().to_string();
    assert!(msg.contains("version 9"), "{msg}");
    // a short file that is not a cut header
    std::fs::write(&path, b"hello").unwrap();
    assert!(Wal::open(&path).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), b"hello");
    // a header cut short (a crash while the file was created) is written again
    std::fs::write(&path, &whole[..5]).unwrap();
    let (wal, replayed) = Wal::open(&path).unwrap();
    assert!(replayed.is_empty());
    assert_eq!(wal.append(&records(2)).unwrap(), 1..3);
}

#[test]
fn an_oversized_record_is_refused_and_the_log_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.wal");
    let (wal, _) = Wal::open(&path).unwrap();
    let big = Record::Upsert {
        id: 3,
        object: vec![0; MAX_PAYLOAD],
    };
    let msg = wal
        .append(&[Record::Delete { id: 1 }, big])
        .unwrap_err()
        .to_string();
    assert!(msg.contains("id 3") && msg.contains("log.wal"), "{msg}");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), HEADER_LEN);
    // the largest object that fits is taken
    let fits = Record::Upsert {
        id: 4,
        object: vec![7; MAX_PAYLOAD - 17],
    };
    assert_eq!(wal.append(std::slice::from_ref(&fits)).unwrap(), 1..2);
    drop(wal);
    assert_eq!(Wal::open(&path).unwrap().1, vec![(1, fits)]);
}

#[test]
fn a_failed_write_refuses_later_appends_until_reopened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.wal");
    let (wal, _) = Wal::open(&path).unwrap();
    wal.append(&records(3)).unwrap();
    let good = std::fs::metadata(&path).unwrap().len();
    drop(wal);
    // a log open read-only fails its first write, as a full disk would
    let (wal, _) = Wal::open(&path).unwrap();
    let ro = std::fs::File::open(&path).unwrap();
    let wal = swap_file(wal, ro);
    let err = wal.append(&records(2)).unwrap_err();
    assert!(err.to_string().contains("log.wal"), "{err}");
    let again = wal.append(&records(1)).unwrap_err().to_string();
    assert!(
        again.contains("refuses appends") && again.contains("log.wal"),
        "{again}"
    );
    drop(wal);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), good);
    let (wal, replayed) = Wal::open(&path).unwrap();
    assert_eq!(replayed.len(), 3);
    assert_eq!(wal.append(&records(1)).unwrap(), 4..5);
}

/// The log with its file replaced by `file` (to make writes fail).
fn swap_file(wal: Wal, file: std::fs::File) -> Wal {
    wal.with_file(file)
}

#[test]
fn concurrent_appends_share_syncs() {
    const THREADS: u64 = 16;
    const EACH: u64 = 50;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.wal");
    let (wal, _) = Wal::open(&path).unwrap();
    let wal = Arc::new(wal);
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let wal = Arc::clone(&wal);
            std::thread::spawn(move || {
                let mut seqs = Vec::new();
                for i in 0..EACH {
                    let r = Record::Upsert {
                        id: t,
                        object: i.to_le_bytes().to_vec(),
                    };
                    let range = wal.append(&[r]).unwrap();
                    assert_eq!(range.end - range.start, 1);
                    seqs.push(range.start);
                }
                seqs
            })
        })
        .collect();
    let mut acked: Vec<u64> = Vec::new();
    for h in handles {
        let seqs = h.join().unwrap();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]));
        acked.extend(seqs);
    }
    let syncs = wal.syncs();
    assert!(
        syncs < THREADS * EACH,
        "{syncs} syncs for {} appends",
        THREADS * EACH
    );
    drop(wal);
    acked.sort_unstable();
    assert_eq!(acked, (1..=THREADS * EACH).collect::<Vec<_>>());
    let (_, replayed) = Wal::open(&path).unwrap();
    assert_eq!(replayed.len() as u64, THREADS * EACH);
    let mut next = vec![0u64; THREADS as usize];
    for (seq, r) in &replayed {
        let Record::Upsert { id, object } = r else {
            panic!("record {seq}: {r:?}");
        };
        let i = u64::from_le_bytes(object[..].try_into().unwrap());
        assert_eq!(i, next[*id as usize], "thread {id} out of order at {seq}");
        next[*id as usize] += 1;
    }
    assert!(next.iter().all(|&n| n == EACH));
    eprintln!("{} appends, {syncs} syncs", THREADS * EACH);
}

fn record_strategy() -> impl Strategy<Value = Record> {
    prop_oneof![
        any::<u64>().prop_map(|id| Record::Delete { id }),
        (any::<u64>(), prop::collection::vec(any::<u8>(), 0..80))
            .prop_map(|(id, object)| Record::Upsert { id, object }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn replay_after_a_cut_is_a_prefix(
        batches in prop::collection::vec(prop::collection::vec(record_strategy(), 0..6), 0..12),
        cut in 0.0f64..=1.0,
        more in prop::collection::vec(record_strategy(), 1..4),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.wal");
        let all: Vec<Record> = batches.iter().flatten().cloned().collect();
        {
            let (wal, _) = Wal::open(&path).unwrap();
            for b in &batches {
                wal.append(b).unwrap();
            }
        }
        let bytes = std::fs::read(&path).unwrap();
        let keep = ((bytes.len() as f64) * cut) as usize;
        std::fs::write(&path, &bytes[..keep]).unwrap();
        let (wal, replayed) = Wal::open(&path).unwrap();
        prop_assert!(replayed.len() <= all.len());
        prop_assert_eq!(&replayed, &numbered(1, &all[..replayed.len()]));
        if keep == bytes.len() {
            prop_assert_eq!(replayed.len(), all.len());
        }
        let next = replayed.len() as u64 + 1;
        prop_assert_eq!(wal.append(&more).unwrap(), next..next + more.len() as u64);
        drop(wal);
        let (_, again) = Wal::open(&path).unwrap();
        let mut expect = all[..replayed.len()].to_vec();
        expect.extend(more.iter().cloned());
        prop_assert_eq!(again, numbered(1, &expect));
    }
}

#[test]
fn a_log_open_elsewhere_is_refused_until_it_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("held.wal");
    let (wal, _) = Wal::open(&path).unwrap();
    wal.append(&records(3)).unwrap();
    let Err(e) = Wal::open(&path) else {
        panic!("a second open of a held log succeeded");
    };
    assert!(e.to_string().contains("open elsewhere"), "{e}");
    assert!(e.to_string().contains("held.wal"), "{e}");
    drop(wal);
    let (_, replayed) = Wal::open(&path).unwrap();
    assert_eq!(replayed, numbered(1, &records(3)));
}
