//! Vector files read from disk: every format round-trips (gzipped too), and every kind of bad
//! input is an error that names the file (and the row for CSV), never a panic.
#![allow(clippy::unwrap_used)]

use flate2::write::GzEncoder;
use flate2::Compression;
use genie_lsh::io::{self, npy, raw, vecs, Format};
use genie_lsh::VectorSet;
use std::io::Write;
use std::path::{Path, PathBuf};

fn sample() -> VectorSet {
    VectorSet::new(3, vec![1.0, 2.0, 3.0, 4.0, 5.0, 255.0]).unwrap()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn idx_u8(set: &VectorSet) -> Vec<u8> {
    let mut b = vec![0, 0, 8, 2];
    b.extend_from_slice(&(set.len() as u32).to_be_bytes());
    b.extend_from_slice(&(set.dim() as u32).to_be_bytes());
    b.extend(set.as_slice().iter().map(|&x| x as u8));
    b
}

fn bvecs(set: &VectorSet) -> Vec<u8> {
    let mut b = Vec::new();
    for r in set.rows() {
        b.extend_from_slice(&(r.len() as i32).to_le_bytes());
        b.extend(r.iter().map(|&x| x as u8));
    }
    b
}

fn ivecs(set: &VectorSet) -> Vec<u8> {
    let mut b = Vec::new();
    for r in set.rows() {
        b.extend_from_slice(&(r.len() as i32).to_le_bytes());
        for &x in r {
            b.extend_from_slice(&(x as i32).to_le_bytes());
        }
    }
    b
}

#[test]
fn every_format_round_trips_plain_and_gzipped() {
    let dir = tempfile::tempdir().unwrap();
    let s = sample();
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("a.fvecs", vecs::to_fvecs(&s)),
        ("a.bvecs", bvecs(&s)),
        ("a.ivecs", ivecs(&s)),
        ("a.npy", npy::to_npy_f32(&s)),
        ("a-idx2-ubyte", idx_u8(&s)),
        ("a.csv", b"c1,c2,c3\n1,2,3\n4,5,255\n".to_vec()),
        ("a.vectors", raw::to_bytes(&s)),
    ];
    for (name, bytes) in files {
        let p = write(dir.path(), name, &bytes);
        assert_eq!(io::read_vectors(&p).unwrap(), s, "{name}");
        let pz = write(dir.path(), &format!("{name}.gz"), &gz(&bytes));
        assert_eq!(io::read_vectors(&pz).unwrap(), s, "{name}.gz");
    }
    // the format can be forced whatever the name
    let p = write(dir.path(), "data.bin", &vecs::to_fvecs(&s));
    assert_eq!(io::read_vectors_as(&p, Format::Fvecs).unwrap(), s);
}

#[test]
fn bad_files_name_themselves() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "bad.fvecs",
            vec![0, 0, 0, 0, 1, 2, 3, 4],
            "bad dimension header 0",
        ),
        ("short.fvecs", vec![2, 0, 0, 0, 1, 2, 3, 4], "truncated"),
        (
            "neg.bvecs",
            vec![255, 255, 255, 127],
            "bad dimension header",
        ),
        (
            "mixed.ivecs",
            {
                let mut b = ivecs(&sample());
                b[16] = 2;
                b
            },
            "vector 1 has dimension 2, expected 3",
        ),
        ("x.npy", b"PK\x03\x04".to_vec(), "not a NumPy .npy file"),
        (
            "i8.npy",
            {
                let mut b = npy::to_npy_f32(&sample());
                let at = b.windows(3).position(|w| w == b"<f4").unwrap();
                b[at..at + 3].copy_from_slice(b"<i8");
                b
            },
            "unsupported dtype",
        ),
        (
            "cut.npy",
            {
                let b = npy::to_npy_f32(&sample());
                b[..b.len() - 3].to_vec()
            },
            "truncated",
        ),
        (
            "t-idx3-ubyte",
            vec![0, 0, 8, 3, 0, 0, 0, 1],
            "dimension sizes announced",
        ),
        ("u-idx1-ubyte", vec![1, 0, 8, 1], "not an IDX file"),
        ("e.csv", Vec::new(), "no vector"),
        (
            "r.csv",
            b"1,2\n3,4,5\n".to_vec(),
            ":2: 3 values, expected 2",
        ),
        (
            "n.csv",
            b"1,2\n3,nope\n".to_vec(),
            ":2: column 2: \"nope\" is not a number",
        ),
        (
            "z.vectors",
            b"GENIEVEC".to_vec(),
            "not a genie vectors file",
        ),
        (
            "broken.fvecs.gz",
            vec![0x1f, 0x8b, 0, 1, 2],
            "bad gzip stream",
        ),
        ("what.dat", vec![1, 2, 3], "unknown vector format"),
    ];
    for (name, bytes, want) in cases {
        let p = write(dir.path(), name, &bytes);
        let e = io::read_vectors(&p).unwrap_err().to_string();
        assert!(e.starts_with(&p.display().to_string()), "{name}: {e}");
        assert!(e.contains(want), "{name}: {e}");
    }
    let missing = dir.path().join("missing.fvecs");
    let e = io::read_vectors(&missing).unwrap_err().to_string();
    assert!(e.starts_with(&missing.display().to_string()), "{e}");
}

#[test]
fn truncating_any_file_anywhere_never_panics() {
    let s = sample();
    let files = [
        (Format::Fvecs, vecs::to_fvecs(&s)),
        (Format::Bvecs, bvecs(&s)),
        (Format::Ivecs, ivecs(&s)),
        (Format::Npy, npy::to_npy_f32(&s)),
        (Format::Idx, idx_u8(&s)),
        (Format::Raw, raw::to_bytes(&s)),
        (Format::Csv, b"1,2,3\n4,5,255\n".to_vec()),
    ];
    for (format, bytes) in files {
        for cut in 0..bytes.len() {
            let _ = io::parse(&bytes[..cut], format, Path::new("t"));
            let mut flipped = bytes.clone();
            flipped[cut] ^= 0xff;
            let _ = io::parse(&flipped, format, Path::new("t"));
        }
    }
}
