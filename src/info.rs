//! What `genie info` tells about an index file: its sizes, and its metadata summarised in lines a
//! person reads (a table's columns one a line, long lists cut to their first items), or whole as
//! JSON (`genie info --json`).

use genie_core::parts::{is_manifest, open_parts};
use genie_core::{GenieError, InvertedIndex};
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

/// Items of a list shown before the rest is counted (`clerk, engineer, nurse, ... (512 in all)`).
pub const SHOWN_ITEMS: usize = 5;

/// A string longer than this is cut in the summary.
const SHOWN_CHARS: usize = 80;

/// The facts of an index file.
#[derive(Clone, Debug, Serialize)]
pub struct IndexInfo {
    /// The file, as given.
    pub index: String,
    /// The format version of a single index file (`None` for a parted index's manifest).
    pub format_version: Option<u32>,
    /// Objects indexed.
    pub objects: u64,
    /// Postings of the List Array (`None` for a parted index).
    pub postings: Option<u64>,
    /// How the List Array is held: `plain` (32 bits a posting) or `packed` (`None` for a parted
    /// index).
    pub list_array: Option<&'static str>,
    /// Bytes a posting of the List Array as held, headers included (`None` for a parted index).
    pub bytes_per_posting: Option<f64>,
    /// The keyword space.
    pub keyword_space: u64,
    /// The longest object, in keywords (`None` for a parted index).
    pub max_object_len: Option<u64>,
    /// The file's size in bytes.
    pub bytes: u64,
    /// The parts of a parted index: file and object range.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartInfo>,
    /// The metadata the kind recorded, whole.
    pub metadata: Value,
}

/// One part of a parted index.
#[derive(Clone, Debug, Serialize)]
pub struct PartInfo {
    /// The part's file.
    pub file: String,
    /// Its first object.
    pub first: u64,
    /// One past its last object.
    pub end: u64,
}

/// Opens an index (a single file, every byte checked; or a parted index's manifest) and gathers
/// its facts.
pub fn index_info(path: &Path) -> Result<IndexInfo, GenieError> {
    let bytes = std::fs::metadata(path)
        .map_err(|error| GenieError::Io {
            path: path.to_path_buf(),
            error,
        })?
        .len();
    let name = path.display().to_string();
    if is_manifest(path)? {
        let (m, _) = open_parts(path)?;
        return Ok(IndexInfo {
            index: name,
            format_version: None,
            objects: m.num_objects,
            postings: None,
            list_array: None,
            bytes_per_posting: None,
            keyword_space: u64::from(m.keyword_space),
            max_object_len: None,
            bytes,
            parts: m
                .parts
                .iter()
                .map(|p| PartInfo {
                    file: p.file.clone(),
                    first: u64::from(p.base),
                    end: u64::from(p.base) + u64::from(p.objects),
                })
                .collect(),
            metadata: parse_metadata(&m.metadata),
        });
    }
    let index = InvertedIndex::load(path)?;
    Ok(IndexInfo {
        index: name,
        format_version: Some(InvertedIndex::format_version(path)?),
        objects: u64::from(index.num_objects()),
        postings: Some(index.num_postings()),
        list_array: Some(crate::kind::ListForm::of(&index).name()),
        bytes_per_posting: Some(index.bits_per_posting() / 8.0),
        keyword_space: u64::from(index.keyword_space()),
        max_object_len: Some(u64::from(index.max_object_len())),
        bytes,
        parts: Vec::new(),
        metadata: parse_metadata(index.metadata()),
    })
}

/// The metadata as JSON (a string that is not JSON stays a string).
fn parse_metadata(text: &str) -> Value {
    if text.is_empty() {
        return Value::Object(serde_json::Map::new());
    }
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

impl IndexInfo {
    /// The lines of `genie info`: the sizes, then the metadata summarised.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!(
            "index: {}{}",
            self.index,
            if self.parts.is_empty() {
                ""
            } else {
                " (parted)"
            }
        )];
        if let Some(v) = self.format_version {
            out.push(format!("format version: {v}"));
        }
        out.push(format!("objects: {}", self.objects));
        if let Some(p) = self.postings {
            out.push(format!("postings: {p}"));
        }
        if let (Some(form), Some(b)) = (self.list_array, self.bytes_per_posting) {
            out.push(format!("list array: {form}, {b:.2} bytes a posting"));
        }
        out.push(format!("keyword space: {}", self.keyword_space));
        if let Some(m) = self.max_object_len {
            out.push(format!("max object length: {m}"));
        }
        out.push(format!("file: {} bytes", self.bytes));
        for p in &self.parts {
            out.push(format!("part {}: objects {}..{}", p.file, p.first, p.end));
        }
        out.extend(metadata_lines(&self.metadata));
        out
    }
}

/// The metadata in lines: `key: value` for each field (lists cut to [`SHOWN_ITEMS`]), a table's
/// schema one column a line.
pub fn metadata_lines(metadata: &Value) -> Vec<String> {
    let Value::Object(map) = metadata else {
        return vec![format!("metadata: {}", short(metadata))];
    };
    let mut out = Vec::new();
    for (key, value) in map {
        if key == "schema" {
            if let Some(lines) = schema_lines(value) {
                out.extend(lines);
                continue;
            }
        }
        out.push(format!("{}: {}", key.replace('_', " "), short(value)));
    }
    out.extend(rerank_line(metadata));
    out
}

/// A codebook index's re-rank copy: its form, its bytes a vector beside the float copy's, and
/// the recall the build measured with it (`re-rank: sq8, 96 bytes a vector (f32: 384),
/// recall@10 0.962 at build`).
fn rerank_line(metadata: &Value) -> Option<String> {
    if metadata.get("family")?.as_str()? != genie_lsh::stored::CODEBOOK {
        return None;
    }
    let dim = metadata.pointer("/params/dim")?.as_u64()?;
    let subspaces = metadata.pointer("/params/subspaces")?.as_u64()?;
    let form = metadata
        .get("rerank")
        .and_then(Value::as_str)
        .unwrap_or(genie_lsh::Form::F32.name());
    let bytes = form
        .parse::<genie_lsh::Form>()
        .ok()?
        .bytes_per_vector(dim as usize, subspaces as usize);
    let recall = match (
        metadata.pointer("/tuned/recall").and_then(Value::as_f64),
        metadata.pointer("/tuned/k").and_then(Value::as_u64),
    ) {
        (Some(r), Some(k)) => format!(", recall@{k} {r:.3} at build"),
        _ => String::new(),
    };
    Some(format!(
        "re-rank: {form}, {bytes} bytes a vector (f32: {}){recall}",
        genie_lsh::Form::F32.bytes_per_vector(dim as usize, 0)
    ))
}

/// A table's schema: a line per column (type, bins and range, or the number of categories and
/// the first few), then the values read as missing.
fn schema_lines(schema: &Value) -> Option<Vec<String>> {
    let columns = schema.get("attributes")?.as_array()?;
    let width = columns
        .iter()
        .filter_map(|c| c.get("name")?.as_str().map(str::len))
        .max()
        .unwrap_or(0);
    let mut out = vec![format!("columns: {}", columns.len())];
    for c in columns {
        let name = c.get("name").and_then(Value::as_str).unwrap_or("?");
        let what = match c.get("type").and_then(Value::as_str) {
            Some("numeric") => format!(
                "numeric, {} bins over {}..{}",
                short(c.get("bins").unwrap_or(&Value::Null)),
                short(c.get("min").unwrap_or(&Value::Null)),
                short(c.get("max").unwrap_or(&Value::Null)),
            ),
            Some("categorical") => {
                let values = c.get("values").and_then(Value::as_array);
                let n = values.map_or(0, Vec::len);
                format!(
                    "categorical, {n} {}: {}",
                    if n == 1 { "value" } else { "values" },
                    values.map_or_else(String::new, |v| items(v, false))
                )
            }
            _ => short(c),
        };
        out.push(format!("  {name:<width$}  {what}"));
    }
    if let Some(missing) = schema.get("missing") {
        out.push(format!("missing values: {}", short(missing)));
    }
    Some(out)
}

/// A value in one short line: strings as they are (cut when long), lists cut to their first
/// items, objects as compact JSON of short values.
fn short(value: &Value) -> String {
    match value {
        Value::String(s) => cut(s),
        Value::Array(a) => format!("[{}]", items(a, true)),
        Value::Object(m) => {
            let fields: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{k}: {}", short(v)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        other => other.to_string(),
    }
}

/// The first [`SHOWN_ITEMS`] items of a list, then how many there are in all.
fn items(a: &[Value], quoted: bool) -> String {
    let mut shown: Vec<String> = a
        .iter()
        .take(SHOWN_ITEMS)
        .map(|v| match v {
            Value::String(s) if quoted => format!("{:?}", cut(s)),
            v => short(v),
        })
        .collect();
    if a.len() > SHOWN_ITEMS {
        shown.push(format!("... ({} in all)", a.len()));
    }
    shown.join(", ")
}

/// A string cut to [`SHOWN_CHARS`] characters.
fn cut(s: &str) -> String {
    match s.char_indices().nth(SHOWN_CHARS) {
        None => s.to_string(),
        Some((at, _)) => format!("{}...", &s[..at]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_table_schema_is_a_line_per_column() {
        let values: Vec<String> = (0..512).map(|i| format!("city{i:03}")).collect();
        let meta = json!({
            "built_by": "genie 0.1.0",
            "input": "cities.csv",
            "kind": "table",
            "schema": {
                "attributes": [
                    {"bins": 1024, "max": 52.0, "min": 25.0, "name": "age", "type": "numeric"},
                    {"name": "city", "type": "categorical", "values": values},
                    {"name": "one", "type": "categorical", "values": ["x"]},
                ],
                "missing": ["", "?"],
            },
        });
        let lines = metadata_lines(&meta);
        assert_eq!(
            lines,
            [
                "built by: genie 0.1.0",
                "input: cities.csv",
                "kind: table",
                "columns: 3",
                "  age   numeric, 1024 bins over 25.0..52.0",
                "  city  categorical, 512 values: city000, city001, city002, city003, city004, \
                 ... (512 in all)",
                "  one   categorical, 1 value: x",
                "missing values: [\"\", \"?\"]",
            ]
        );
        assert!(lines.iter().all(|l| l.len() < 120));
    }

    #[test]
    fn long_values_are_cut() {
        let long = "y".repeat(500);
        let meta =
            json!({"n": 3, "list": (0..100).collect::<Vec<u32>>(), "s": long, "o": {"a": [1, 2]}});
        let lines = metadata_lines(&meta);
        assert!(lines.contains(&"n: 3".to_string()), "{lines:?}");
        assert!(lines.contains(&"list: [0, 1, 2, 3, 4, ... (100 in all)]".to_string()));
        assert!(lines.contains(&"o: {a: [1, 2]}".to_string()));
        let s = lines.iter().find(|l| l.starts_with("s: ")).expect("s");
        assert_eq!(s.len(), 3 + SHOWN_CHARS + 3);
        assert_eq!(metadata_lines(&json!("plain")), ["metadata: plain"]);
    }
}
