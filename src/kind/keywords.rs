//! The `keywords` kind: objects given as keyword lists, queries as keyword items (the paper's
//! model as it is). Objects file: one object per line, whitespace-separated unsigned 32-bit
//! keywords; queries: `KW` or `LO-HI` items with optional `:WEIGHT` ([`crate::input`]), or in
//! JSON an array whose elements are a keyword `7`, a range `[10, 20]` or `[10, 20, 2]` with a
//! weight. The objects may also come as a NumPy CSR pair or a list column of a Parquet or Arrow
//! file ([`crate::objects`]). The only kind whose index may be built and searched in parts.

use super::{
    BuildJob, BuildReport, CountIndex, CountParser, IndexSource, Kind, KindInfo, OpenOptions,
    Opened, OptionSpec, OptionType, Options, Placement,
};
use crate::data_error::DataError;
use crate::input::{display_path, parse_query_line};
use crate::objects::{Batch, Source};
use crate::searcher::Searcher;
use genie_core::parts::PartWriter;
use genie_core::{IndexBuilder, InvertedIndex, Item, Keyword, Query};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;

/// The kind of keyword objects.
#[derive(Clone, Copy, Debug, Default)]
pub struct Keywords;

/// The build options of keyword objects.
const BUILD_OPTIONS: &[OptionSpec] = &[
    OptionSpec::new(
        "parts",
        OptionType::U32 {
            min: 1,
            max: u32::MAX,
        },
        "N",
        "Save the index in N parts over consecutive object ranges: INDEX is then a manifest and \
         INDEX.part0 .. INDEX.partN-1 the parts. Each part is built and saved as soon as its \
         objects are read, so the whole index is never in memory; a search streams the parts \
         [default: 1].",
    ),
    OptionSpec::u32(
        "part_objects",
        1,
        "M",
        "Save a parted index of M objects per part (instead of --parts; works on standard input).",
    ),
    OptionSpec::new(
        "offsets",
        OptionType::Path,
        "OFFSETS.npy",
        "The object offsets of a NumPy CSR pair whose keywords are --input KEYWORDS.npy: n + 1 \
         ascending int64 or uint64 values from 0 to the number of keywords (uint32; int32, int64 \
         and uint64 are taken when every value fits); object i has the keywords \
         offsets[i]..offsets[i + 1]. With --input DIR, DIR/offsets.npy and DIR/keywords.npy.",
    ),
    OptionSpec::new(
        "column",
        OptionType::Text,
        "NAME",
        "The list column of a Parquet or Arrow input (list<uint32> or large_list<uint32>; int32, \
         int64, uint64 items are taken when every value fits) [default: the only list column].",
    ),
];

/// The kind of keyword objects.
const INFO: KindInfo = KindInfo {
    build_options: BUILD_OPTIONS,
    ..KindInfo::new(
        "keywords",
        "Objects as lists of keywords (unsigned 32-bit integers)",
    )
};

impl Kind for Keywords {
    fn info(&self) -> &KindInfo {
        &INFO
    }

    fn holds(&self, metadata: &Value) -> bool {
        matches!(
            metadata.get("kind").and_then(Value::as_str),
            None | Some("keywords")
        ) && metadata.get("plugin").is_none()
    }

    fn build(&self, job: &BuildJob<'_>) -> Result<BuildReport, DataError> {
        build(job)
    }

    fn live_objects(
        &self,
        _setup: &super::LiveSetup,
    ) -> Result<Arc<dyn super::LiveObjects>, DataError> {
        Ok(Arc::new(super::KeywordObjects))
    }

    fn live_metadata(&self, options: &super::Options) -> Result<Value, DataError> {
        options.check(self.name(), &[])?;
        Ok(serde_json::json!({}))
    }

    fn open(&self, source: &IndexSource, placement: Placement, options: &OpenOptions) -> Opened {
        let searcher = match (placement, &source.index) {
            (placement, Some(index)) => placement.searcher(Arc::clone(index))?,
            (Placement::Parted { backends, .. }, None) => {
                Searcher::open_manifest(&source.path, backends)?
            }
            (Placement::Resident(backend), None) => {
                Searcher::open_manifest(&source.path, vec![backend])?
            }
        };
        let reference = searcher.reference_index()?;
        Ok(Box::new(CountIndex::new(
            KeywordParser { reference },
            searcher,
            options.method,
        )))
    }
}

/// Parses keyword queries, checked against the index (or its first part: all parts share the
/// keyword space and count bounds), so that a bad one fails alone.
pub struct KeywordParser {
    reference: Arc<InvertedIndex>,
}

impl CountParser for KeywordParser {
    fn kind(&self) -> &str {
        "keywords"
    }

    fn parse(&self, raw: &Value, options: &Options) -> Result<Query, DataError> {
        options.check("keywords", &[])?;
        self.checked(parse_keyword_query(raw)?)
    }

    fn parse_line(&self, line: &str, options: &Options) -> Result<Query, DataError> {
        options.check("keywords", &[])?;
        self.checked(parse_query_line(line).map_err(|e| DataError::BadQuery(e.to_string()))?)
    }
}

impl KeywordParser {
    /// `query` if the index can search it (see [`InvertedIndex::check`]).
    fn checked(&self, query: Query) -> Result<Query, DataError> {
        self.reference
            .check(&query)
            .map_err(|e| DataError::BadQuery(e.to_string()))?;
        Ok(query)
    }
}

/// Parses a keyword object given to a live index: a text line of keywords (`"3 17 40"`) or an
/// array of them; the error says which keyword was wrong.
pub fn keyword_object(raw: &Value) -> Result<Vec<Keyword>, String> {
    match raw {
        Value::String(line) => line
            .split_ascii_whitespace()
            .enumerate()
            .map(|(i, t)| {
                t.parse::<Keyword>().map_err(|_| {
                    format!("keyword {i}: expected an unsigned 32-bit integer, found {t:?}")
                })
            })
            .collect(),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_u64()
                    .and_then(|n| Keyword::try_from(n).ok())
                    .ok_or_else(|| {
                        format!("keyword {i}: expected an unsigned 32-bit integer, found {v}")
                    })
            })
            .collect(),
        other => Err(format!(
            "expected a line of keywords or an array of keywords, found {}",
            super::kind_of(other)
        )),
    }
}

/// Parses a JSON keyword query: a text line, or an array of keywords and `[lo, hi(, weight)]`.
pub fn parse_keyword_query(raw: &Value) -> Result<Query, DataError> {
    match raw {
        Value::String(line) => {
            parse_query_line(line).map_err(|e| DataError::BadQuery(e.to_string()))
        }
        Value::Array(items) => {
            let item = |(i, v): (usize, &Value)| -> Result<Item, DataError> {
                let num = |v: &Value| v.as_u64().and_then(|n| u32::try_from(n).ok());
                let bad = || {
                    DataError::BadQuery(format!(
                        "item {i}: expected a keyword or [lo, hi] or [lo, hi, weight] of unsigned \
                         32-bit integers, found {v}"
                    ))
                };
                let (lo, hi, weight) = match v {
                    Value::Number(_) => {
                        let k = num(v).ok_or_else(bad)?;
                        (k, k, 1)
                    }
                    Value::Array(a) if a.len() == 2 || a.len() == 3 => {
                        let n: Option<Vec<u32>> = a.iter().map(num).collect();
                        let n = n.ok_or_else(bad)?;
                        (n[0], n[1], n.get(2).copied().unwrap_or(1))
                    }
                    _ => return Err(bad()),
                };
                Item::new(lo, hi, weight).map_err(|e| DataError::BadQuery(format!("item {i}: {e}")))
            };
            Ok(Query {
                items: items
                    .iter()
                    .enumerate()
                    .map(item)
                    .collect::<Result<_, _>>()?,
            })
        }
        other => Err(DataError::BadQuery(format!(
            "expected a line of items or an array of items, found {}",
            super::kind_of(other)
        ))),
    }
}

/// Builds an index of keyword objects, in parts when asked (`parts`, `part_objects`): each part
/// is built and saved as soon as its objects are read, so the whole index is never in memory.
/// The input is text, a NumPy CSR pair (`offsets`) or a Parquet or Arrow list column (`column`):
/// [`crate::objects`].
fn build(job: &BuildJob<'_>) -> Result<BuildReport, DataError> {
    let opts = job.options;
    opts.check("keywords", Keywords.build_options())?;
    let name = display_path(job.input);
    let offsets = opts.str("offsets")?.map(PathBuf::from);
    let source = Source::resolve(job.input, offsets.as_deref(), opts.str("column")?)?;
    if opts.has("parts") && opts.has("part_objects") {
        return Err(DataError::BadOption {
            name: "part_objects".into(),
            message: "give parts or part_objects, not both".into(),
        });
    }
    let per_part = objects_per_part(&source, opts.u32("parts")?, opts.u32("part_objects")?)?;
    let metadata = build_metadata(&name);
    let new_builder = || IndexBuilder::new().metadata(metadata.clone());
    let mut builder = new_builder();
    let mut writer = per_part.map(|_| PartWriter::new(job.output));
    let mut totals = Totals::default();
    let flush = |builder: IndexBuilder, writer: &mut PartWriter, totals: &mut Totals| {
        let part = writer.build_and_add(builder)?;
        totals.add(&part);
        Ok::<_, DataError>(())
    };
    let start = std::time::Instant::now();
    let read = source.read(&mut |batch: Batch<'_>| {
        let mut at = 0;
        while at < batch.len() {
            let take = match per_part {
                Some(m) => (m - builder.len()).min(batch.len() - at),
                None => batch.len() - at,
            };
            builder
                .push_csr(&batch.offsets[at..=at + take], batch.keywords)
                .map_err(|e| DataError::File {
                    path: source.path.clone(),
                    message: format!("object {}: {e}", batch.first + at as u64),
                })?;
            at += take;
            if let (Some(m), Some(w)) = (per_part, writer.as_mut()) {
                if builder.len() == m {
                    flush(
                        std::mem::replace(&mut builder, new_builder()),
                        w,
                        &mut totals,
                    )?;
                }
            }
        }
        (job.progress)(batch.bytes);
        Ok(())
    })?;
    log::debug!(
        "read {read} objects from {name} ({}) in {:.2?}",
        source.format.name(),
        start.elapsed()
    );
    match writer {
        Some(mut w) => {
            if !builder.is_empty() || totals.objects == 0 {
                flush(builder, &mut w, &mut totals)?;
            }
            w.finish()?;
        }
        None => {
            // written while it is sorted: the file of a build then a save
            let start = std::time::Instant::now();
            let index = builder.build_and_save(job.output)?;
            log::debug!(
                "built the index and saved {} in {:.2?}",
                job.output.display(),
                start.elapsed()
            );
            totals.add(&index);
        }
    }
    Ok(BuildReport {
        summary: format!(
            "{} objects, {} postings, keyword space {}",
            totals.objects, totals.postings, totals.space
        ),
        objects: totals.objects,
        side_files: Vec::new(),
    })
}

/// The metadata of an index of keyword objects read from `input` (its name in messages).
fn build_metadata(input: &str) -> String {
    serde_json::json!({
        "built_by": format!("genie {}", env!("CARGO_PKG_VERSION")),
        "input": input,
    })
    .to_string()
}

/// The index of keyword objects given in memory as a CSR pair (object `i` is
/// `keywords[offsets[i]..offsets[i + 1]]`, `offsets` ascending from 0 to `keywords.len()`), with
/// the metadata of a `genie build` of a file named `input`: the same index as the build of a file
/// holding those objects, for a program that has them in memory (the Python package). The
/// keywords are read in place.
pub fn build_csr(
    offsets: &[u64],
    keywords: &[u32],
    input: &str,
) -> Result<InvertedIndex, DataError> {
    let bad = |message: String| DataError::File {
        path: PathBuf::from(input),
        message,
    };
    match offsets.first() {
        None => {
            return Err(bad(
                "no offsets: expected n + 1 offsets for n objects (the single offset 0 for none)"
                    .into(),
            ))
        }
        Some(&first) if first != 0 => {
            return Err(bad(format!("the first offset is {first}: expected 0")))
        }
        Some(_) => {}
    }
    let last = offsets[offsets.len() - 1];
    if last != keywords.len() as u64 {
        return Err(bad(format!(
            "the last offset is {last}: expected the number of keywords ({})",
            keywords.len()
        )));
    }
    let mut builder = IndexBuilder::new().metadata(build_metadata(input));
    builder
        .push_csr(offsets, keywords)
        .map_err(|e| bad(e.to_string()))?;
    Ok(builder.build()?)
}

/// What a build wrote, for its summary line.
#[derive(Default)]
struct Totals {
    objects: u64,
    postings: u64,
    space: u32,
}

impl Totals {
    fn add(&mut self, index: &InvertedIndex) {
        self.objects += u64::from(index.num_objects());
        self.postings += index.num_postings();
        self.space = self.space.max(index.keyword_space());
    }
}

/// Objects per part of a parted build: `part_objects`, or the objects (counted, or read from
/// the file's metadata) split `parts` ways; `None` for a single index.
fn objects_per_part(
    source: &Source,
    parts: Option<u32>,
    part_objects: Option<u32>,
) -> Result<Option<usize>, DataError> {
    if let Some(m) = part_objects {
        return Ok(Some(m as usize));
    }
    let parts = parts.unwrap_or(1) as usize;
    if parts <= 1 {
        return Ok(None);
    }
    let Some(objects) = source.count_objects()? else {
        return Err(DataError::Unsupported(
            "--parts needs a file to count its objects; with standard input use --part-objects"
                .into(),
        ));
    };
    Ok(Some((objects as usize).div_ceil(parts).max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_csr_in_memory_builds_the_index_of_the_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (input, output) = (dir.path().join("o.txt"), dir.path().join("o.genie"));
        std::fs::write(&input, "1 4 7\n\n2 4 4 8\n").expect("write");
        let job = BuildJob {
            input: &input,
            output: &output,
            options: &Options::new(),
            progress: &|_| {},
        };
        build(&job).expect("build");
        let from_file = InvertedIndex::load(&output).expect("load");
        let name = input.display().to_string();
        let in_memory = build_csr(&[0, 3, 3, 7], &[1, 4, 7, 2, 4, 4, 8], &name).expect("csr");
        // the file written while building is that of a build then a save
        assert_eq!(
            std::fs::read(&output).expect("read"),
            in_memory.to_bytes(),
            "the built file"
        );
        assert_eq!(in_memory.num_objects(), 3);
        assert_eq!(in_memory.metadata(), from_file.metadata());
        for k in 0..10 {
            assert_eq!(
                in_memory.postings_of(k),
                from_file.postings_of(k),
                "keyword {k}"
            );
        }
        for (offsets, want) in [
            (&[][..], "no offsets"),
            (&[1, 2][..], "the first offset is 1"),
            (
                &[0, 2][..],
                "the last offset is 2: expected the number of keywords (1)",
            ),
            (&[0, 2, 1][..], "not ascending"),
        ] {
            let e = build_csr(offsets, &[5], "mem").expect_err("rejected");
            assert!(e.to_string().starts_with("mem: "), "{e}");
            assert!(e.to_string().contains(want), "{e}");
        }
    }

    use proptest::prelude::*;

    proptest! {
        /// A query line read as text (`genie search`'s blocks of lines) and as a JSON string (a
        /// server's request) is the same query, or the same error.
        #[test]
        fn a_line_parses_as_its_json_string_does(
            tokens in proptest::collection::vec(
                prop_oneof![
                    (0u32..40).prop_map(|k| k.to_string()),
                    (0u32..40, 0u32..40).prop_map(|(a, b)| format!("{a}-{b}")),
                    (0u32..40, 0u32..4).prop_map(|(a, w)| format!("{a}:{w}")),
                    prop_oneof![
                        Just("x".to_string()),
                        Just("-3".to_string()),
                        Just("4294967296".to_string()),
                        Just("7:20000000".to_string()),
                    ],
                ],
                0..12,
            ),
            sep in prop_oneof![Just(" "), Just("\t"), Just("  ")],
        ) {
            let index = build_csr(&[0, 3, 3, 7, 9], &[1, 4, 7, 2, 4, 4, 8, 8, 1], "mem")
                .expect("index");
            let parser = KeywordParser { reference: Arc::new(index) };
            let line = tokens.join(sep);
            let options = Options::new();
            let as_line = parser.parse_line(&line, &options).map_err(|e| e.to_string());
            let as_json = parser
                .parse(&Value::String(line.clone()), &options)
                .map_err(|e| e.to_string());
            prop_assert_eq!(as_line.map(|q| q.items), as_json.map(|q| q.items), "{:?}", line);
        }
    }

    #[test]
    fn json_queries() {
        let q = parse_keyword_query(&serde_json::json!([7, [10, 20], [3, 3, 2]])).expect("valid");
        assert_eq!(
            q.items,
            [
                Item::keyword(7),
                Item {
                    lo: 10,
                    hi: 20,
                    weight: 1
                },
                Item {
                    lo: 3,
                    hi: 3,
                    weight: 2
                }
            ]
        );
        let line = parse_keyword_query(&serde_json::json!("7 10-20 3:2")).expect("valid");
        assert_eq!(line, q);
        for bad in [
            serde_json::json!([-1]),
            serde_json::json!([[5, 4]]),
            serde_json::json!([[1, 2, 0]]),
            serde_json::json!([[1]]),
            serde_json::json!(["x"]),
            serde_json::json!({"items": []}),
            serde_json::json!("4-x"),
            serde_json::json!([4294967296u64]),
        ] {
            let e = parse_keyword_query(&bad).expect_err("rejected");
            assert!(!e.to_string().is_empty());
        }
        let e = parse_keyword_query(&serde_json::json!([1, [5, 4]])).expect_err("lo > hi");
        assert!(e.to_string().starts_with("item 1:"), "{e}");
    }
}
