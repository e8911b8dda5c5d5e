//! What a vector index file records of its kind and family: `"kind": "vectors"`, as every kind of
//! data records its `"kind"`, and `"family"`: the LSH family that hashed the vectors (`"e2lsh"`,
//! `"l1"`, `"rbh"`, `"srp"`, the names `--lsh` takes) or `"codebook"`. Files written before named
//! the index by a `"plugin"` field instead (`"genie-lsh"`, `"genie-codebook"`); they still open,
//! and a re-save writes the new fields.

use crate::error::{LshError, Result};
use crate::family::Family;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The kind of data a vector index holds, as recorded in its metadata.
pub const KIND: &str = "vectors";

/// The `"family"` of a codebook index.
pub const CODEBOOK: &str = "codebook";

/// Which index type a vector index file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexFamily {
    /// Vectors hashed by one of the LSH [`Family`]s ([`crate::VectorIndex`]).
    Lsh,
    /// Vectors coded by a codebook ([`crate::CodebookIndex`]).
    Codebook,
}

impl IndexFamily {
    /// The `"plugin"` that files written before recorded instead.
    fn legacy_plugin(self) -> &'static str {
        match self {
            IndexFamily::Lsh => "genie-lsh",
            IndexFamily::Codebook => "genie-codebook",
        }
    }

    /// What an index of this family is called in messages.
    fn what(self) -> &'static str {
        match self {
            IndexFamily::Lsh => "genie-lsh vector index",
            IndexFamily::Codebook => "codebook vector index",
        }
    }

    /// The family of an index's metadata, if it is a vector index (of either form).
    pub fn of(metadata: &Value) -> Option<Self> {
        let field = |name: &str| metadata.get(name).and_then(Value::as_str);
        if let (Some(KIND), Some(family)) = (field("kind"), field("family")) {
            return match family {
                CODEBOOK => Some(IndexFamily::Codebook),
                name => name.parse::<Family>().ok().map(|_| IndexFamily::Lsh),
            };
        }
        [IndexFamily::Lsh, IndexFamily::Codebook]
            .into_iter()
            .find(|f| field("plugin") == Some(f.legacy_plugin()))
    }

    /// Checks that `metadata` records this family; an error naming what it records instead.
    fn expect(self, metadata: &Value) -> Result<()> {
        let what = self.what();
        match Self::of(metadata) {
            Some(f) if f == self => Ok(()),
            Some(_) => Err(LshError::Metadata(format!(
                "not a {what}: an index of the {} family",
                metadata["family"].as_str().unwrap_or("other")
            ))),
            None => Err(LshError::Metadata(format!(
                "not a {what}: its metadata names no family of vectors"
            ))),
        }
    }

    /// `metadata` of this family in today's form: `"kind"` and `"family"` set (an LSH index's
    /// from its parameters), a legacy `"plugin"` removed.
    fn normalise(self, metadata: &mut Value) {
        let family = match self {
            IndexFamily::Codebook => CODEBOOK.to_string(),
            IndexFamily::Lsh => match metadata.pointer("/params/family").and_then(Value::as_str) {
                Some(name) => name.to_string(),
                None => return,
            },
        };
        if let Some(map) = metadata.as_object_mut() {
            map.remove("plugin");
            map.insert("kind".into(), KIND.into());
            map.insert("family".into(), family.into());
        }
    }

    /// Parses the metadata `text` of an index of this family, of either form, into today's
    /// record.
    pub(crate) fn parse<T: DeserializeOwned>(self, text: &str) -> Result<T> {
        let what = self.what();
        let bad = |e: serde_json::Error| LshError::Metadata(format!("not a {what} ({e}): {text}"));
        let mut value: Value = serde_json::from_str(text).map_err(bad)?;
        self.expect(&value)?;
        self.normalise(&mut value);
        serde_json::from_value(value).map_err(bad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_forms_name_the_family() {
        let lsh = json!({"kind": "vectors", "family": "srp", "params": {"family": "srp"}});
        let old_lsh = json!({"plugin": "genie-lsh", "params": {"family": "srp"}});
        let codebook = json!({"kind": "vectors", "family": "codebook"});
        let old_codebook = json!({"plugin": "genie-codebook", "kind": "vectors"});
        for (new, old, f) in [
            (lsh, old_lsh, IndexFamily::Lsh),
            (codebook, old_codebook, IndexFamily::Codebook),
        ] {
            assert_eq!(IndexFamily::of(&new), Some(f));
            assert_eq!(IndexFamily::of(&old), Some(f));
            assert!(f.expect(&old).is_ok());
            let mut norm = old.clone();
            f.normalise(&mut norm);
            assert_eq!(norm, new);
        }
        assert_eq!(IndexFamily::of(&json!({"kind": "vectors"})), None);
        assert_eq!(
            IndexFamily::of(&json!({"kind": "vectors", "family": "x"})),
            None
        );
        assert_eq!(
            IndexFamily::of(&json!({"kind": "table", "family": "srp"})),
            None
        );
        let e = IndexFamily::Lsh
            .expect(&json!({"kind": "vectors", "family": "codebook"}))
            .expect_err("other family");
        assert!(e.to_string().contains("of the codebook family"), "{e}");
    }
}
