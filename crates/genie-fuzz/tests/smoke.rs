//! A short run of every fuzz target (CI): valid inputs of each decoder as seeds, then random
//! mutations of them (bit flips, random and boundary bytes, insertions, deletions, repeats) and
//! random bytes, bounded in time and count. The long runs are cargo-fuzz's (docs/RELIABILITY.md).

use genie_fuzz::TARGETS;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Seconds per target.
const SECONDS: f64 = 2.0;
/// Executions per target at most.
const MAX_RUNS: u64 = 200_000;

fn seeds(target: &str) -> Vec<Vec<u8>> {
    match target {
        "index_file" => {
            let mut b = genie_core::IndexBuilder::new().metadata(r#"{"kind":"keywords"}"#);
            for obj in [[1u32, 4, 7], [2, 4, 8], [1, 4, 8]] {
                b.push_object(&obj).expect("object");
            }
            vec![b.build().expect("index").to_bytes()]
        }
        "string_table" => vec![["kitten", "", "sitting"].iter().collect::<genie_sa::StringTable>().to_bytes()],
        "raw_vectors" => {
            let v = genie_lsh::VectorSet::new(3, vec![1.0, 2.0, 3.0, -4.5, 0.0, 1e-3]).expect("vectors");
            vec![genie_lsh::io::raw::to_bytes(&v)]
        }
        "vector_files" => {
            let mut fvecs = vec![0u8];
            for row in [[1.0f32, 2.0], [3.0, 4.0]] {
                fvecs.extend_from_slice(&2i32.to_le_bytes());
                for x in row {
                    fvecs.extend_from_slice(&x.to_le_bytes());
                }
            }
            let mut npy = vec![3u8];
            npy.extend_from_slice(b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }");
            while npy.len() < 1 + 10 + 118 {
                npy.push(b' ');
            }
            npy.push(b'\n');
            npy.extend_from_slice(&[0, 0, 128, 63, 0, 0, 0, 64]);
            let mut idx = vec![4u8, 0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 2];
            idx.extend_from_slice(&[1, 2, 3, 4]);
            vec![fvecs, npy, idx, b"\x05a,b\n1,2\n3.5,-4\n".to_vec()]
        }
        "gzip" => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(b"1,2\n3,4\n").expect("gzip");
            vec![e.finish().expect("gzip")]
        }
        "manifest" => vec![br#"{"format":"genie-parts","version":1,"num_objects":3,"keyword_space":9,"parts":[{"file":"x.genie.part0","base":0,"objects":2},{"file":"x.genie.part1","base":2,"objects":1}],"metadata":"{}"}"#.to_vec()],
        "text_lines" => vec![b"1 2 3\n7 10-20 3:2\n\n4294967295 0-0:1\n".to_vec()],
        "keyword_objects" => vec![
            b"1 2 3\r\n\n  7\t8 \n4294967295 0\n9".to_vec(),
            b"\x93NUMPY\x01\x00\x36\x00{'descr': '<u4', 'fortran_order': False, 'shape': (3,), }\n".to_vec(),
        ],
        "csv_table" => vec![b"age,job,hours\n25,clerk,40\n38,engineer,?\nage=30..40 job=clerk\n30, clerk, 35\n".to_vec()],
        "server_request" => vec![
            b"\x00{\"queries\": [\"1 5\", [1, [2, 3], [4, 4, 2]]], \"k\": 3, \"min_count\": 1}".to_vec(),
            b"\x01{\"queries\": [\"kiten\"], \"k\": 2, \"options\": {\"candidates\": 4}}".to_vec(),
            b"\x02{\"queries\": [\"quick dogs\"]}".to_vec(),
            b"\x03{\"queries\": [\"age=30..40\", \"30, clerk\"], \"options\": {\"radius\": 1}}".to_vec(),
            b"\x04{\"queries\": [[1, 2, 3]], \"k\": 2}".to_vec(),
        ],
        other => panic!("no seeds for {other}"),
    }
}

/// The system allocator, recording the largest single allocation.
struct Largest;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged.
unsafe impl GlobalAlloc for Largest {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on as it is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is passed on as it is.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on as it is.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Largest = Largest;

/// Every aligned 4- and 8-byte field of every seed set to a huge count, one at a time: a decoder
/// must refuse such a header before it allocates what it claims (none here needs 64 MiB).
#[test]
fn huge_length_fields_allocate_nothing_large() {
    // the fixtures of the server target are built first (their allocations are not the point)
    genie_fuzz::server_request(b"\x00{}");
    let huge: [u64; 4] = [0x7fff_ffff, 0xffff_ffff, 1 << 40, u64::MAX];
    let mut tried = 0;
    for &(name, target) in TARGETS {
        for seed in seeds(name) {
            for at in (0..seed.len()).step_by(4) {
                for &h in &huge {
                    for width in [4usize, 8] {
                        if at + width > seed.len() {
                            continue;
                        }
                        let mut data = seed.clone();
                        data[at..at + width].copy_from_slice(&h.to_le_bytes()[..width]);
                        LARGEST.store(0, Ordering::Relaxed);
                        target(&data);
                        let largest = LARGEST.load(Ordering::Relaxed);
                        assert!(
                            largest < 64 << 20,
                            "{name}: a field at byte {at} set to {h:#x} made it allocate {largest} bytes"
                        );
                        tried += 1;
                    }
                }
            }
        }
    }
    println!("huge length fields: {tried} inputs, none allocated 64 MiB");
}

/// Boundary values a length field may be given.
const INTERESTING: [u32; 8] = [0, 1, 0x7f, 0xff, 0xffff, 0x7fff_ffff, 0xffff_ffff, 1 << 24];

fn mutate(rng: &mut SmallRng, data: &mut Vec<u8>) {
    for _ in 0..rng.random_range(1..=8) {
        let len = data.len();
        match rng.random_range(0..7) {
            0 if len > 0 => {
                let i = rng.random_range(0..len);
                data[i] ^= 1 << rng.random_range(0..8);
            }
            1 if len > 0 => {
                let i = rng.random_range(0..len);
                data[i] = rng.random();
            }
            2 => {
                let i = rng.random_range(0..=len);
                data.insert(i, rng.random());
            }
            3 if len > 0 => {
                let i = rng.random_range(0..len);
                let n = rng.random_range(1..=(len - i).min(16));
                data.drain(i..i + n);
            }
            4 if len >= 4 => {
                let i = rng.random_range(0..=len - 4);
                let v = INTERESTING[rng.random_range(0..INTERESTING.len())];
                data[i..i + 4].copy_from_slice(&v.to_le_bytes());
            }
            5 if len > 0 => {
                let i = rng.random_range(0..len);
                let n = rng.random_range(1..=(len - i).min(32));
                let chunk = data[i..i + n].to_vec();
                let at = rng.random_range(0..=len);
                data.splice(at..at, chunk);
            }
            _ => data.truncate(rng.random_range(0..=len)),
        }
    }
}

/// With `GENIE_FUZZ_SEEDS=DIR`, writes each target's seeds to `DIR/TARGET/seed-N`: the starting
/// corpora of the long runs (`scripts/fuzz-all.sh`).
#[test]
fn seeds_as_files() {
    let Some(dir) = std::env::var_os("GENIE_FUZZ_SEEDS") else {
        println!("skipped: GENIE_FUZZ_SEEDS names no folder to write the seeds to");
        return;
    };
    for &(name, _) in TARGETS {
        let d = std::path::Path::new(&dir).join(name);
        std::fs::create_dir_all(&d).expect("a seed folder");
        for (i, seed) in seeds(name).iter().enumerate() {
            std::fs::write(d.join(format!("seed-{i}")), seed).expect("a seed file");
        }
    }
}

#[test]
fn every_target_survives_a_short_run() {
    let mut report = Vec::new();
    for &(name, target) in TARGETS {
        let seeds = seeds(name);
        for s in &seeds {
            target(s);
        }
        let mut rng = SmallRng::seed_from_u64(0x5eed);
        let start = Instant::now();
        let mut runs = 0u64;
        while runs < MAX_RUNS && start.elapsed() < Duration::from_secs_f64(SECONDS) {
            let mut data = if rng.random_bool(0.9) {
                seeds[rng.random_range(0..seeds.len())].clone()
            } else {
                (0..rng.random_range(0..64)).map(|_| rng.random()).collect()
            };
            mutate(&mut rng, &mut data);
            target(&data);
            runs += 1;
        }
        report.push(format!("{name}: {runs} executions"));
    }
    println!("fuzz smoke: {}", report.join(", "));
}
