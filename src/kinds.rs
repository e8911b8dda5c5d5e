//! The kinds of data an index can hold, read from and written to the index metadata, and the
//! side files kept beside an index.
//!
//! Every index built by `genie build` has JSON metadata with `built_by` and `input`; the plugins'
//! indexes add their own record (`kind`, parameters, dictionaries' checksums, the schema). An
//! index without `kind` holds keyword objects.

use crate::input::display_path;
use genie_core::GenieError;
use std::path::{Path, PathBuf};

/// What an index holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Objects given as keyword lists (the default).
    Keywords,
    /// Sequences under edit distance (ordered n-grams).
    Sequences,
    /// Short documents (words).
    Documents,
    /// Rows of a relational table.
    Table,
    /// Dense vectors hashed by an LSH family (genie-lsh).
    Vectors,
}

impl Kind {
    /// The name used in metadata and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Keywords => "keywords",
            Self::Sequences => genie_sa::sequence::KIND,
            Self::Documents => genie_sa::document::KIND,
            Self::Table => genie_sa::table::KIND,
            Self::Vectors => "vectors",
        }
    }

    /// The kind recorded in an index's metadata (keywords when there is none).
    pub fn of_metadata(metadata: &str) -> Result<Self, GenieError> {
        let value: serde_json::Value = serde_json::from_str(metadata).unwrap_or_default();
        if value.get("plugin").and_then(|p| p.as_str()) == Some(genie_lsh::index::PLUGIN) {
            return Ok(Self::Vectors);
        }
        match value.get("kind").and_then(|k| k.as_str()) {
            None | Some("keywords") => Ok(Self::Keywords),
            Some(k) if k == genie_sa::sequence::KIND => Ok(Self::Sequences),
            Some(k) if k == genie_sa::document::KIND => Ok(Self::Documents),
            Some(k) if k == genie_sa::table::KIND => Ok(Self::Table),
            Some(other) => Err(GenieError::InvalidParameter(format!(
                "the index holds data of kind {other:?}, which this genie does not know"
            ))),
        }
    }
}

/// The metadata of an index built from `input`: the plugin's JSON record (an object) with
/// `built_by` and `input` added.
pub fn metadata_with(record: &str, input: &Path) -> String {
    let mut value: serde_json::Value =
        serde_json::from_str(record).unwrap_or_else(|_| serde_json::json!({}));
    if let Some(map) = value.as_object_mut() {
        map.insert(
            "built_by".into(),
            format!("genie {}", env!("CARGO_PKG_VERSION")).into(),
        );
        map.insert("input".into(), display_path(input).into());
    }
    value.to_string()
}

/// The side file `INDEX.EXT` of an index (e.g. `words.genie.seqs`).
pub fn side_path(index: &Path, ext: &str) -> PathBuf {
    let mut name = index.as_os_str().to_owned();
    name.push(".");
    name.push(ext);
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_from_metadata() {
        assert_eq!(Kind::of_metadata("").ok(), Some(Kind::Keywords));
        assert_eq!(
            Kind::of_metadata(r#"{"built_by":"genie 0.1.0"}"#).ok(),
            Some(Kind::Keywords)
        );
        assert_eq!(
            Kind::of_metadata(r#"{"kind":"sequences","n":3}"#).ok(),
            Some(Kind::Sequences)
        );
        assert!(Kind::of_metadata(r#"{"kind":"graphs"}"#).is_err());
        let m = metadata_with(r#"{"kind":"table"}"#, Path::new("a.csv"));
        assert_eq!(Kind::of_metadata(&m).ok(), Some(Kind::Table));
        assert!(m.contains("\"input\":\"a.csv\""));
        assert_eq!(
            side_path(Path::new("x/w.genie"), "seqs"),
            PathBuf::from("x/w.genie.seqs")
        );
    }
}
