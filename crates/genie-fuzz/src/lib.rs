//! Fuzz targets of every decoder of user input (docs/RELIABILITY.md). Each target takes arbitrary
//! bytes and panics only when a property breaks:
//! - no decoder panics;
//! - no length field makes a decoder allocate beyond what the input can hold (libFuzzer's
//!   `-malloc_limit_mb` catches one; the smoke test runs them in bounded memory);
//! - every error names its file (a file decoder) or its field (the server's request decoding);
//! - a decoded value re-encodes to the same bytes where there is an encoder (index files, string
//!   tables, raw vector files, keyword lines), or re-decodes to the same value, or decodes as the
//!   reference decoder does (keyword objects read in parallel blocks against the line reader).
//!
//! [`TARGETS`] lists them for the smoke test (`tests/smoke.rs`, run by CI) and `fuzz/` holds the
//! cargo-fuzz wrappers for the long runs (`cargo +nightly fuzz run NAME`).
#![deny(missing_docs)]

use genie::kind::{Options, Registry};
use genie::server::{decode_ids, decode_objects, decode_search, Limits};
use genie_core::InvertedIndex;
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// A target: its name and the function that takes the fuzzer's bytes.
pub type Target = (&'static str, fn(&[u8]));

/// Every target.
pub const TARGETS: &[Target] = &[
    ("index_file", index_file),
    ("string_table", string_table),
    ("raw_vectors", raw_vectors),
    ("vector_files", vector_files),
    ("gzip", gzip),
    ("manifest", manifest),
    ("text_lines", text_lines),
    ("keyword_objects", keyword_objects),
    ("csv_table", csv_table),
    ("server_request", server_request),
];

/// The path files are decoded under, to check that errors name it.
const NAME: &str = "fuzz-input";

fn names_file(message: &str) {
    assert!(
        message.contains(NAME),
        "an error that names no file: {message}"
    );
}

/// Index files (`InvertedIndex::from_bytes`): a file of the current version re-encodes to the
/// same bytes; one of version 1 to a current file of the same index.
pub fn index_file(data: &[u8]) {
    match InvertedIndex::from_bytes(data) {
        Ok(index) => {
            let again = index.to_bytes();
            let current =
                data.get(8..12) == Some(&genie_core::index::FORMAT_VERSION.to_le_bytes()[..]);
            assert!(
                if current {
                    again == data
                } else {
                    InvertedIndex::from_bytes(&again).as_ref() == Ok(&index)
                },
                "an index file that re-encodes otherwise"
            )
        }
        Err(reason) => assert!(!reason.is_empty()),
    }
}

/// The side files of sequences and documents (`StringTable`): re-encode to the same bytes.
pub fn string_table(data: &[u8]) {
    if let Ok(t) = genie_sa::StringTable::from_bytes(data) {
        assert!(
            t.to_bytes() == data,
            "a string table that re-encodes otherwise"
        );
    }
}

/// The vectors side file (`INDEX.vectors`): re-encodes to the same bytes; errors name the file.
pub fn raw_vectors(data: &[u8]) {
    match genie_lsh::io::raw::parse(data, Path::new(NAME)) {
        Ok((set, _)) => assert!(
            genie_lsh::io::raw::to_bytes(&set) == data,
            "raw vectors that re-encode otherwise"
        ),
        Err(e) => names_file(&e.to_string()),
    }
}

/// Vector files of every format (the first byte picks it): finite values of one dimension, or
/// an error naming the file.
pub fn vector_files(data: &[u8]) {
    use genie_lsh::io::Format;
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let formats = [
        Format::Fvecs,
        Format::Bvecs,
        Format::Ivecs,
        Format::Npy,
        Format::Idx,
        Format::Csv,
    ];
    let format = formats[usize::from(pick) % formats.len()];
    match genie_lsh::io::parse(rest, format, Path::new(NAME)) {
        Ok(set) => {
            assert!(set.as_slice().iter().all(|x| x.is_finite()));
            assert_eq!(set.as_slice().len(), set.len() * set.dim());
        }
        Err(e) => names_file(&e.to_string()),
    }
}

/// Gzipped input: bounded by the input (deflate expands at most about 1,032-fold).
pub fn gzip(data: &[u8]) {
    match genie_lsh::io::gunzip(data.to_vec(), Path::new(NAME)) {
        Ok(out) => assert!(
            out.len() <= data.len() * 1100 + 4096,
            "{} bytes from {}",
            out.len(),
            data.len()
        ),
        Err(e) => names_file(&e.to_string()),
    }
}

/// Parted-index manifests: parts in the manifest's folder, or an error naming the file.
pub fn manifest(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let path = Path::new("/manifests").join(NAME);
    match genie_core::parts::parse_manifest(&text, &path) {
        Ok((_, sources)) => {
            for s in sources {
                if let genie_core::PartSource::File { path: p, .. } = s {
                    assert_eq!(p.parent(), Some(Path::new("/manifests")), "{}", p.display());
                }
            }
        }
        Err(e) => names_file(&e.to_string()),
    }
}

/// Objects and queries lines: a parsed line re-encodes to a line that parses to the same value;
/// an error quotes the token and says what was expected.
pub fn text_lines(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        let mut kws = Vec::new();
        match genie::input::parse_object_line(line, &mut kws) {
            Ok(()) => {
                let again: Vec<String> = kws.iter().map(u32::to_string).collect();
                let mut back = Vec::new();
                genie::input::parse_object_line(&again.join(" "), &mut back).expect("re-parse");
                assert_eq!(back, kws);
            }
            Err(e) => assert!(e.to_string().contains("expected"), "{e}"),
        }
        match genie::input::parse_query_line(line) {
            Ok(q) => {
                let again: Vec<String> = q
                    .items
                    .iter()
                    .map(|i| format!("{}-{}:{}", i.lo, i.hi, i.weight))
                    .collect();
                let back = genie::input::parse_query_line(&again.join(" ")).expect("re-parse");
                assert_eq!(back, q);
            }
            Err(e) => assert!(e.to_string().contains("expected"), "{e}"),
        }
    }
}

/// Keyword objects in text read in parallel blocks (`genie::objects::text`): the same objects, or
/// the same error, as the line reader gives; and `.npy` headers (`genie::npy::parse_header`).
pub fn keyword_objects(data: &[u8]) {
    if let Ok((_, shape, at)) = genie::npy::parse_header(data) {
        assert!(at <= data.len() && shape.len() <= data.len());
    }
    let path = Path::new(NAME);
    let cursor = || Box::new(std::io::Cursor::new(data.to_vec()));
    let mut blocks: Vec<Vec<u32>> = Vec::new();
    let read = genie::objects::text::read_from(cursor(), path, &mut |b| {
        for w in b.offsets.windows(2) {
            blocks.push(b.keywords[w[0] as usize..w[1] as usize].to_vec());
        }
        Ok(())
    });
    let mut reader = genie::input::LineReader::new(cursor(), path, None);
    let mut lines = Vec::new();
    let mut kws = Vec::new();
    let by_lines = loop {
        match reader.next_object(&mut kws) {
            Ok(true) => lines.push(kws.clone()),
            Ok(false) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    match (read, by_lines) {
        (Ok(n), Ok(())) => {
            assert_eq!(n as usize, lines.len());
            assert!(
                blocks == lines,
                "the blocks' objects differ from the lines'"
            );
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string());
            names_file(&a.to_string());
        }
        (a, b) => panic!("blocks: {a:?}, lines: {b:?}"),
    }
}

/// CSV tables: rows, an inferred schema and every row's keywords, or errors naming the file.
pub fn csv_table(data: &[u8]) {
    let path = Path::new(NAME);
    let reader = genie::csv_input::reader_of(Box::new(std::io::Cursor::new(data.to_vec())), true);
    let rows = match genie::kind::table::rows_of(reader, path, None) {
        Ok(r) => r,
        Err(e) => return names_file(&e.to_string()),
    };
    let Ok(schema) =
        genie_sa::Schema::infer(&rows.names, &rows.rows, &genie_sa::InferOptions::default())
    else {
        return;
    };
    let transform = genie_sa::TableTransform::new(schema);
    let mut kws = Vec::new();
    for row in &rows.rows {
        kws.clear();
        let _ = transform.keywords(row, &mut kws);
        assert!(kws
            .iter()
            .all(|&k| k < genie_core::Transform::keyword_space(&transform)));
    }
    for line in String::from_utf8_lossy(data).lines().take(16) {
        for format in [
            genie::kind::table::QueryFormat::Auto,
            genie::kind::table::QueryFormat::Csv,
        ] {
            if let Ok(q) = genie::kind::table::parse_query_line(line, transform.schema(), 2, format)
            {
                let _ = transform.prepare(&q);
            }
        }
    }
}

/// Opened indexes of the five kinds (built once, in a temporary folder, on the CPU).
fn indexes() -> &'static Vec<Arc<dyn genie::kind::KindIndex>> {
    static INDEXES: OnceLock<(tempfile::TempDir, Vec<Arc<dyn genie::kind::KindIndex>>)> =
        OnceLock::new();
    &INDEXES
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("a temporary folder");
            let registry = Registry::default();
            let spec = genie::open::OpenSpec {
                device: genie_core::DeviceChoice::Cpu,
                ..Default::default()
            };
            let inputs: [(&str, &str, &str); 5] = [
                ("keywords", "o.txt", "1 5 10\n2 5 11\n3 4\n"),
                ("sequences", "s.txt", "kitten\nsitting\nmitten\n"),
                ("documents", "d.txt", "the quick brown fox\nlazy dogs\n"),
                (
                    "table",
                    "t.csv",
                    "age,job\n25,clerk\n38,engineer\n52,clerk\n",
                ),
                ("vectors", "v.csv", "a,b,c\n1,2,3\n4,5,6\n7,8,9\n0,1,0\n"),
            ];
            let mut out = Vec::new();
            for (kind, input, text) in inputs {
                let input = dir.path().join(input);
                let index = dir.path().join(format!("{kind}.genie"));
                std::fs::write(&input, text).expect("write a fixture");
                let job = genie::kind::BuildJob {
                    input: &input,
                    output: &index,
                    options: &Options::new(),
                    progress: &|_| {},
                };
                registry
                    .get(kind)
                    .expect("a kind")
                    .build(&job)
                    .expect("a build");
                let loaded = genie::open::load(&registry, &index).expect("a load");
                out.push(
                    genie::open::place(&loaded, &spec)
                        .expect("a placement")
                        .remove(0),
                );
            }
            (dir, out)
        })
        .1
}

/// The server's request decoding for each kind (the first byte picks it): the parsed queries, or
/// an error that names the field.
pub fn server_request(data: &[u8]) {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let all = indexes();
    let index = &all[usize::from(pick) % all.len()];
    let limits = Limits {
        max_body_bytes: 1 << 20,
        max_queries: 64,
        max_items: 4096,
        max_k: 1000,
        max_objects: 64,
    };
    // the write routes' bodies: objects with ids, or ids, within the limits, or an error that
    // names the field
    match decode_objects(body, &limits) {
        Ok((ids, objects)) => {
            assert!(ids.len() == objects.len() && ids.len() <= limits.max_objects)
        }
        Err(message) => assert!(
            ["request body", "objects"]
                .iter()
                .any(|f| message.starts_with(f)),
            "an error that names no field: {message}"
        ),
    }
    match decode_ids(body, &limits) {
        Ok(ids) => assert!(ids.len() <= limits.max_objects),
        Err(message) => assert!(
            ["\"request body\"", "request body", "ids"]
                .iter()
                .any(|f| message.starts_with(f)),
            "an error that names no field: {message}"
        ),
    }
    match decode_search(body, index.as_ref(), &limits) {
        Ok(parsed) => assert!(parsed.queries.len() <= limits.max_queries),
        Err(message) => {
            let named = [
                "request body:",
                "k:",
                "queries",
                "option",
                "\"filter\"",
                "\"exclude\"",
            ]
            .iter()
            .any(|f| message.starts_with(f));
            assert!(named, "an error that names no field: {message}");
        }
    }
}
