//! Keyword objects from binary inputs (a NumPy CSR pair, Parquet, Arrow IPC file and stream) give
//! the same index, byte for byte, as the text file of the same objects, parted builds included;
//! bad binary inputs fail with a message that names the file and what was expected.

#![allow(clippy::unwrap_used)]

use arrow_array::{
    Array, ArrayRef, Int64Array, LargeListArray, ListArray, RecordBatch, UInt32Array,
};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use genie::kind::{BuildJob, Options, Registry};
use genie::npy;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tempfile::TempDir;

#[path = "common/bin.rs"]
mod bin;

type Objects = Vec<Vec<u32>>;

/// Objects with empty ones (first, middle, last), duplicates, unsorted keywords and a large one.
fn objects() -> Objects {
    let mut objs: Objects = vec![vec![], vec![3, 1, 2], vec![5, 5, 0]];
    for i in 0..200u32 {
        objs.push((0..i % 9).map(|k| (i * 31 + k * 7) % 97).collect());
    }
    objs.push(vec![]);
    objs.push(vec![100_000, 0]);
    objs.push(vec![]);
    objs
}

fn csr(objs: &Objects) -> (Vec<u64>, Vec<u32>) {
    let mut offsets = vec![0u64];
    let mut keywords = Vec::new();
    for o in objs {
        keywords.extend_from_slice(o);
        offsets.push(keywords.len() as u64);
    }
    (offsets, keywords)
}

fn write_text(path: &Path, objs: &Objects) {
    let text: String = objs
        .iter()
        .map(|o| {
            let words: Vec<String> = o.iter().map(u32::to_string).collect();
            words.join(" ") + "\n"
        })
        .collect();
    std::fs::write(path, text).unwrap();
}

fn list_column(objs: &Objects, large: bool) -> ArrayRef {
    let (offsets, keywords) = csr(objs);
    let item = Arc::new(Field::new("item", DataType::UInt32, false));
    let values = Arc::new(UInt32Array::from(keywords));
    if large {
        let offs: Vec<i64> = offsets.iter().map(|&o| o as i64).collect();
        Arc::new(LargeListArray::new(
            item,
            OffsetBuffer::new(ScalarBuffer::from(offs)),
            values,
            None,
        ))
    } else {
        let offs: Vec<i32> = offsets.iter().map(|&o| o as i32).collect();
        Arc::new(ListArray::new(
            item,
            OffsetBuffer::new(ScalarBuffer::from(offs)),
            values,
            None,
        ))
    }
}

/// A record batch of named columns.
fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), a.null_count() > 0))
        .collect();
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
}

/// One record batch of a column "kw": lists of `values` cut at `offsets`, null where `nulls`
/// says so.
fn kw_lists(values: ArrayRef, offsets: Vec<i32>, nulls: Option<NullBuffer>) -> Vec<RecordBatch> {
    let item = Arc::new(Field::new("item", values.data_type().clone(), false));
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    let lists = ListArray::new(item, offsets, values, nulls);
    vec![batch(vec![("kw", Arc::new(lists) as ArrayRef)])]
}

/// Writes `batches` (of one schema) as Parquet, in row groups of 50 rows.
fn write_parquet(path: &Path, batches: &[RecordBatch]) {
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(50))
        .build();
    let mut w = parquet::arrow::ArrowWriter::try_new(
        File::create(path).unwrap(),
        batches[0].schema(),
        Some(props),
    )
    .unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.close().unwrap();
}

fn write_arrow(path: &Path, batches: &[RecordBatch], stream: bool) {
    let file = File::create(path).unwrap();
    if stream {
        let mut w = arrow_ipc::writer::StreamWriter::try_new(file, &batches[0].schema()).unwrap();
        for b in batches {
            w.write(b).unwrap();
        }
        w.finish().unwrap();
    } else {
        let mut w = arrow_ipc::writer::FileWriter::try_new(file, &batches[0].schema()).unwrap();
        for b in batches {
            w.write(b).unwrap();
        }
        w.finish().unwrap();
    }
}

/// The objects in two record batches (so that rows continue across batches), with a second,
/// non-list column.
fn list_batches(objs: &Objects, large: bool) -> Vec<RecordBatch> {
    let half = objs.len() / 2;
    [&objs[..half], &objs[half..]]
        .iter()
        .map(|part| {
            let part = part.to_vec();
            let ids = Arc::new(Int64Array::from_iter_values(0..part.len() as i64));
            batch(vec![
                ("id", ids as ArrayRef),
                ("kw", list_column(&part, large)),
            ])
        })
        .collect()
}

/// Builds `input` into `output` with keyword options; the error message on failure.
fn build(input: &Path, output: &Path, set: &[(&str, serde_json::Value)]) -> Result<String, String> {
    let mut options = Options::new();
    for (k, v) in set {
        options.set(k, v.clone());
    }
    let registry = Registry::default();
    let kind = registry.get("keywords").unwrap();
    let progress = |_: u64| {};
    let job = BuildJob {
        input,
        output,
        options: &options,
        progress: &progress,
    };
    kind.build(&job)
        .map(|r| r.summary)
        .map_err(|e| e.to_string())
}

/// The index file and its part files, read.
fn index_bytes(output: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = vec![output.to_path_buf()];
    files.extend(
        (0..)
            .map(|i| genie::kind::side_path(output, &format!("part{i}")))
            .take_while(|p| p.exists()),
    );
    files
        .iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(p).unwrap(),
            )
        })
        .collect()
}

/// Builds from text at `name` and from `write`'s file at the same path (the index records the
/// input's name), each into `out/<tag>/index.genie`; asserts the same bytes.
fn same_as_text(
    dir: &TempDir,
    name: &str,
    objs: &Objects,
    write: impl Fn(&Path),
    extra: &[(&str, serde_json::Value)],
    parts: &[(&str, serde_json::Value)],
) {
    let input = dir.path().join(name);
    let out = |tag: &str| -> PathBuf {
        let d = dir.path().join(format!("{name}-{tag}"));
        std::fs::create_dir_all(&d).unwrap();
        d.join("index.genie")
    };
    write_text(&input, objs);
    let text_out = out("text");
    build(&input, &text_out, parts).unwrap();
    write(&input);
    let bin_out = out("binary");
    let mut set = extra.to_vec();
    set.extend_from_slice(parts);
    let summary = build(&input, &bin_out, &set).unwrap();
    assert!(
        summary.starts_with(&format!("{} objects", objs.len())),
        "{summary}"
    );
    let (a, b) = (index_bytes(&text_out), index_bytes(&bin_out));
    assert!(
        a.len() == b.len() && !a.is_empty(),
        "{name}: {} against {} files",
        a.len(),
        b.len()
    );
    for ((na, ba), (nb, bb)) in a.iter().zip(&b) {
        assert_eq!(na, nb);
        assert!(
            ba == bb,
            "{name} {parts:?}: {na} differs from the text build's"
        );
    }
}

/// Asserts that a NumPy CSR pair gives the text index: the keywords at `keywords{suffix}`, the
/// offsets at `offsets{suffix}` (no extensions: the formats are recognized by their magic bytes).
fn npy_same_as_text<K: npy::Element, O: npy::Element>(
    dir: &TempDir,
    suffix: &str,
    keywords: &[K],
    offsets: &[O],
    objs: &Objects,
    parts: &[(&str, serde_json::Value)],
) {
    let offsets_path = dir.path().join(format!("offsets{suffix}"));
    npy::write(&offsets_path, &[offsets.len()], offsets).unwrap();
    let offs = [("offsets", serde_json::json!(offsets_path.to_str().unwrap()))];
    let write = |p: &Path| npy::write(p, &[keywords.len()], keywords).unwrap();
    same_as_text(dir, &format!("keywords{suffix}"), objs, write, &offs, parts);
}

fn all_inputs_match_text(objs: &Objects, parts: &[(&str, serde_json::Value)]) {
    let dir = TempDir::new().unwrap();
    let (offsets, keywords) = csr(objs);
    npy_same_as_text(&dir, "", &keywords, &offsets, objs, parts);
    // int64 keywords and int64 offsets in range are taken too
    let wide: Vec<i64> = keywords.iter().map(|&k| i64::from(k)).collect();
    let offsets_i64: Vec<i64> = offsets.iter().map(|&o| o as i64).collect();
    npy_same_as_text(&dir, "-i64", &wide, &offsets_i64, objs, parts);
    let col = [("column", serde_json::json!("kw"))];
    for large in [false, true] {
        let batches = list_batches(objs, large);
        // Parquet, an Arrow IPC file, an Arrow IPC stream
        for (format, extra) in [("pq", &[][..]), ("ipc", &[]), ("st", &col)] {
            let write = |p: &Path| match format {
                "pq" => write_parquet(p, &batches),
                _ => write_arrow(p, &batches, format == "st"),
            };
            same_as_text(&dir, &format!("{format}{large}"), objs, write, extra, parts);
        }
    }
}

#[test]
fn every_input_gives_the_text_index() {
    all_inputs_match_text(&objects(), &[]);
}

#[test]
fn every_input_gives_the_text_parts() {
    all_inputs_match_text(&objects(), &[("part_objects", serde_json::json!(37))]);
    all_inputs_match_text(&objects(), &[("parts", serde_json::json!(3))]);
}

#[test]
fn only_empty_objects() {
    all_inputs_match_text(&vec![vec![]; 5], &[]);
}

#[test]
fn by_extension_and_directory() {
    let dir = TempDir::new().unwrap();
    let objs = objects();
    let (offsets, keywords) = csr(&objs);
    let csr_dir = dir.path().join("csr");
    std::fs::create_dir(&csr_dir).unwrap();
    npy::write(&csr_dir.join("offsets.npy"), &[offsets.len()], &offsets).unwrap();
    npy::write(&csr_dir.join("keywords.npy"), &[keywords.len()], &keywords).unwrap();
    let batches = list_batches(&objs, false);
    write_parquet(&dir.path().join("o.parquet"), &batches);
    write_arrow(&dir.path().join("o.arrow"), &batches, false);
    write_arrow(&dir.path().join("o.feather"), &batches, false);
    write_arrow(&dir.path().join("o.arrows"), &batches, true);
    write_text(&dir.path().join("o.txt"), &objs);
    let load = |p: &Path| genie::core::InvertedIndex::load(p).unwrap();
    let out = dir.path().join("text.genie");
    build(&dir.path().join("o.txt"), &out, &[]).unwrap();
    let want = load(&out);
    for input in [
        csr_dir,
        dir.path().join("o.parquet"),
        dir.path().join("o.arrow"),
        dir.path().join("o.feather"),
        dir.path().join("o.arrows"),
    ] {
        let out = dir.path().join("x.genie");
        build(&input, &out, &[]).unwrap();
        let got = load(&out);
        assert_eq!(got.num_objects(), want.num_objects(), "{}", input.display());
        for kw in [0, 1, 5, 96, 100_000] {
            assert_eq!(
                got.postings_of(kw),
                want.postings_of(kw),
                "{} keyword {kw}",
                input.display()
            );
        }
    }
}

/// Asserts that building `input` fails with a message naming `file` and containing `expected`.
fn fails(input: &Path, set: &[(&str, serde_json::Value)], file: &Path, expected: &str) {
    let out = input.with_extension("genie");
    let e = build(input, &out, set).expect_err(expected);
    let name = file.file_name().unwrap().to_str().unwrap();
    assert!(
        e.contains(name) && e.contains(expected),
        "{e:?} should name {name} and say {expected:?}"
    );
    assert!(!out.exists(), "no index after a failed build");
}

#[test]
fn bad_numpy_inputs() {
    let dir = TempDir::new().unwrap();
    let p = |n: &str| dir.path().join(n);
    let off = |path: &Path| [("offsets", serde_json::json!(path.to_str().unwrap()))];
    npy::write(&p("k.npy"), &[4], &[1u32, 2, 3, 4]).unwrap();
    npy::write(&p("o.npy"), &[3], &[0u64, 2, 4]).unwrap();
    build(&p("k.npy"), &p("ok.genie"), &off(&p("o.npy"))).unwrap();

    npy::write(&p("f.npy"), &[4], &[1f32, 2., 3., 4.]).unwrap();
    npy::write(&p("k2.npy"), &[2, 2], &[1u32, 2, 3, 4]).unwrap();
    npy::write(&p("big.npy"), &[4], &[1i64, 2, 1 << 32, 4]).unwrap();
    npy::write(&p("negk.npy"), &[4], &[1i32, -2, 3, 4]).unwrap();
    let bytes = std::fs::read(p("k.npy")).unwrap();
    std::fs::write(p("cut.npy"), &bytes[..bytes.len() - 3]).unwrap();
    std::fs::write(p("hdr.npy"), &bytes[..20]).unwrap();
    std::fs::write(p("text.npy"), "1 2 3\n").unwrap();
    // bad keywords with good offsets: the message names the keywords
    for (keywords, expected) in [
        (
            "f.npy",
            "dtype \"<f4\": expected little-endian uint32 or int32",
        ),
        ("k2.npy", "expected a one-dimensional array"),
        (
            "big.npy",
            "keyword 2 is 4294967296: expected an unsigned 32-bit integer",
        ),
        ("negk.npy", "keyword 1 is -2"),
        ("cut.npy", "truncated"),
        ("hdr.npy", "truncated"),
        ("text.npy", "not a NumPy .npy file"),
    ] {
        fails(&p(keywords), &off(&p("o.npy")), &p(keywords), expected);
    }

    npy::write(&p("desc.npy"), &[4], &[0u64, 3, 2, 4]).unwrap();
    npy::write(&p("past.npy"), &[3], &[0u64, 2, 10]).unwrap();
    npy::write(&p("start.npy"), &[2], &[1i64, 4]).unwrap();
    npy::write(&p("neg.npy"), &[4], &[0i64, -1, 2, 4]).unwrap();
    npy::write(&p("none.npy"), &[0], &[0u64; 0]).unwrap();
    // good keywords with bad offsets: the message names the offsets
    for (offsets, expected) in [
        ("f.npy", "expected little-endian int64 or uint64"),
        (
            "desc.npy",
            "offset 2 is 2, below offset 1 (3): expected ascending offsets",
        ),
        (
            "past.npy",
            "the last offset is 10: expected the number of keywords",
        ),
        ("start.npy", "the first offset is 1: expected 0"),
        ("neg.npy", "offset 1 is -1"),
        ("none.npy", "no offsets"),
    ] {
        fails(&p("k.npy"), &off(&p(offsets)), &p(offsets), expected);
    }

    fails(
        &p("k.npy"),
        &[],
        &p("k.npy"),
        "give their object offsets with --offsets",
    );
    std::fs::write(p("o.txt"), "1 2\n").unwrap();
    let e = build(&p("o.txt"), &p("t.genie"), &off(&p("o.npy"))).unwrap_err();
    assert!(
        e.contains("offsets") && e.contains("o.txt") && e.contains("text input"),
        "{e}"
    );
    let e = build(
        &p("o.txt"),
        &p("t.genie"),
        &[("column", serde_json::json!("kw"))],
    )
    .unwrap_err();
    assert!(
        e.contains("column") && e.contains("Parquet and Arrow"),
        "{e}"
    );
    let empty_dir = p("empty");
    std::fs::create_dir(&empty_dir).unwrap();
    let e = build(&empty_dir, &p("d.genie"), &[]).unwrap_err();
    assert!(e.contains("offsets.npy"), "{e}");
}

#[test]
fn bad_columnar_inputs() {
    let dir = TempDir::new().unwrap();
    let p = |n: &str| dir.path().join(n);
    let col = |c: &str| [("column", serde_json::json!(c))];
    let objs = objects();
    let good = list_batches(&objs, false);
    write_parquet(&p("g.parquet"), &good);
    write_arrow(&p("g.arrow"), &good, false);
    for f in ["g.parquet", "g.arrow"] {
        fails(
            &p(f),
            &col("nope"),
            &p(f),
            "no column \"nope\" (the columns: id (Int64), kw (List",
        );
        fails(
            &p(f),
            &col("id"),
            &p(f),
            "column \"id\" is Int64: expected a list of unsigned 32-bit keywords",
        );
    }
    // two list columns: --column is needed
    let two = vec![batch(vec![
        ("a", list_column(&objs, false)),
        ("b", list_column(&objs, true)),
    ])];
    write_parquet(&p("two.parquet"), &two);
    let none = vec![batch(vec![(
        "id",
        Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef,
    )])];
    write_parquet(&p("none.parquet"), &none);
    // int64 values out of range, a null row, floats
    let wide = Arc::new(Int64Array::from(vec![5, 7, 1 << 32]));
    write_parquet(&p("wide.parquet"), &kw_lists(wide, vec![0, 1, 3], None));
    let some = Arc::new(UInt32Array::from(vec![5, 7]));
    let nulls = Some(NullBuffer::from(vec![true, false, true]));
    write_arrow(
        &p("null.arrow"),
        &kw_lists(some, vec![0, 1, 1, 2], nulls),
        false,
    );
    let floats = Arc::new(arrow_array::Float32Array::from(vec![1.5]));
    write_parquet(&p("floats.parquet"), &kw_lists(floats, vec![0, 1], None));
    // truncated files
    for f in ["g.parquet", "g.arrow"] {
        let bytes = std::fs::read(p(f)).unwrap();
        std::fs::write(p(&format!("cut-{f}")), &bytes[..bytes.len() / 2]).unwrap();
    }
    write_arrow(&p("g.arrows"), &good, true);
    let bytes = std::fs::read(p("g.arrows")).unwrap();
    std::fs::write(p("cut.arrows"), &bytes[..bytes.len() * 2 / 3]).unwrap();
    for (f, expected) in [
        (
            "two.parquet",
            "several list columns, pick one with --column",
        ),
        ("none.parquet", "no list column"),
        (
            "wide.parquet",
            "column \"kw\", row 1: keyword 4294967296 is not an unsigned 32-bit integer",
        ),
        (
            "null.arrow",
            "column \"kw\", row 1: null, expected a list of keywords",
        ),
        (
            "floats.parquet",
            "expected a list of unsigned 32-bit keywords",
        ),
        ("cut-g.parquet", "not a readable Parquet file"),
        ("cut-g.arrow", "not a readable Arrow IPC file"),
        ("cut.arrows", "not a readable Arrow IPC stream"),
    ] {
        fails(&p(f), &[], &p(f), expected);
    }
    build(&p("two.parquet"), &p("two.genie"), &col("b")).unwrap();
    // --parts on an Arrow stream counts its rows first
    build(
        &p("g.arrows"),
        &p("parts.genie"),
        &[("parts", serde_json::json!(2))],
    )
    .unwrap();
    assert!(genie::kind::side_path(&p("parts.genie"), "part1").exists());
}

#[test]
fn command_line_flags() {
    let dir = TempDir::new().unwrap();
    let p = |n: &str| dir.path().join(n);
    let objs = objects();
    let (offsets, keywords) = csr(&objs);
    npy::write(&p("o.npy"), &[offsets.len()], &offsets).unwrap();
    npy::write(&p("k.npy"), &[keywords.len()], &keywords).unwrap();
    // `genie build FLAGS... --input k.npy --offsets o.npy --output OUTPUT`
    let build_csr = |flags: &[&str], output: &str| {
        std::process::Command::new(bin::binary())
            .arg("build")
            .args(flags)
            .arg("--input")
            .arg(p("k.npy"))
            .arg("--offsets")
            .arg(p("o.npy"))
            .arg("--output")
            .arg(p(output))
            .output()
            .unwrap()
    };
    let out = build_csr(&[], "i.genie");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{} objects", objs.len())),
        "{stderr}"
    );
    let out = build_csr(&[], "o.npy");
    assert!(
        !out.status.success(),
        "writing over the offsets file is refused"
    );
    let out = build_csr(&["--kind", "documents"], "d.genie");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("--offsets applies to --kind keywords"),
        "{stderr}"
    );
}
