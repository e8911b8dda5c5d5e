//! The relational-table transform (paper section V-C, Fig. 1): a row becomes one keyword per
//! present attribute, inside the attribute's block ([`super::schema`]); a [`TableQuery`] becomes
//! one range item per condition ([`super::query`]). The index's blocks are the attributes'
//! blocks, so the count bound of a query is its number of items.

use crate::error::{Result, SaError};
use crate::table::query::TableQuery;
use crate::table::schema::{Schema, SchemaRecord};
use genie_core::{Keyword, Query, Transform};
use serde::{Deserialize, Serialize};

/// The kind name of table indexes in their metadata.
pub const KIND: &str = "table";

/// Rows of a table to keywords.
///
/// ```
/// use genie_sa::table::schema::{InferOptions, Schema};
/// use genie_sa::table::transform::TableTransform;
/// use genie_sa::table::query::TableQuery;
/// let names = ["age", "workclass"].map(String::from);
/// let rows = [["25", "Private"], ["45", "State-gov"], ["?", "Private"]];
/// let t = TableTransform::new(Schema::infer(&names, &rows, &InferOptions::default()).unwrap());
/// let mut kws = Vec::new();
/// t.keywords(&rows[2], &mut kws).unwrap();
/// assert_eq!(kws.len(), 1); // the missing age is no keyword
/// let q = TableQuery::parse("age=20..30 workclass=Private", t.schema()).unwrap();
/// assert_eq!(t.prepare(&q).unwrap().items.len(), 2);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TableTransform {
    schema: Schema,
}

/// What a table index records about its transform.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableMetadata {
    /// Always [`KIND`].
    pub kind: String,
    /// The schema.
    pub schema: SchemaRecord,
}

impl TableTransform {
    /// The transform of a schema.
    pub fn new(schema: Schema) -> Self {
        Self { schema }
    }

    /// The transform recorded in an index's metadata.
    pub fn from_metadata(metadata: &TableMetadata) -> Result<Self> {
        if metadata.kind != KIND {
            return Err(SaError::BadMetadata(format!(
                "kind {:?}, expected {KIND:?}",
                metadata.kind
            )));
        }
        Ok(Self::new(Schema::new(metadata.schema.clone())?))
    }

    /// The schema.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The metadata stored with an index of this transform.
    pub fn metadata_record(&self) -> TableMetadata {
        TableMetadata {
            kind: KIND.to_string(),
            schema: self.schema.record().clone(),
        }
    }

    /// Appends the keywords of a row (one field per attribute) to `out`.
    pub fn keywords<S: AsRef<str>>(&self, fields: &[S], out: &mut Vec<Keyword>) -> Result<()> {
        let expected = self.schema.attributes().len();
        if fields.len() != expected {
            return Err(SaError::RaggedRow {
                found: fields.len(),
                expected,
            });
        }
        for (attr, f) in fields.iter().enumerate() {
            out.extend(self.schema.field_keyword(attr, f.as_ref())?);
        }
        Ok(())
    }

    /// The match-count query of a table query.
    pub fn prepare(&self, query: &TableQuery) -> Result<Query> {
        query.to_query(&self.schema)
    }
}

impl Transform for TableTransform {
    type Item = [String];
    type QueryInput = TableQuery;

    fn keyword_space(&self) -> u32 {
        self.schema.keyword_space()
    }

    fn blocks(&self) -> Vec<Keyword> {
        self.schema.block_starts().to_vec()
    }

    fn object(&self, item: &[String], out: &mut Vec<Keyword>) -> genie_core::Result<()> {
        Ok(self.keywords(item, out)?)
    }

    fn query(&self, input: &TableQuery) -> genie_core::Result<Query> {
        Ok(self.prepare(input)?)
    }

    fn metadata(&self) -> String {
        serde_json::to_string(&self.metadata_record()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::schema::InferOptions;

    #[test]
    fn golden_keywords_and_bound() {
        let names = ["age", "workclass", "hours"].map(String::from);
        let rows = [
            ["39", "State-gov", "40"],
            ["50", "Self-emp", "13"],
            ["38", "Private", "?"],
            ["17", "Private", "99"],
        ];
        let opts = InferOptions {
            bins: 8,
            ..InferOptions::default()
        };
        let t = TableTransform::new(Schema::infer(&names, &rows, &opts).expect("schema"));
        // age [17, 50] -> 0..8, workclass {Private, Self-emp, State-gov} -> 8..11,
        // hours [13, 99] -> 11..19
        let kws: Vec<Vec<u32>> = rows
            .iter()
            .map(|r| {
                let mut out = Vec::new();
                t.keywords(r, &mut out).expect("row");
                out
            })
            .collect();
        assert_eq!(
            kws,
            [vec![5, 10, 13], vec![7, 9, 11], vec![5, 8], vec![0, 8, 18]]
        );
        assert_eq!(t.blocks(), [0, 8, 11]);
        assert_eq!(t.keyword_space(), 19);

        let mut b = t.builder();
        for k in &kws {
            b.push_object(k).expect("push");
        }
        let index = b.build().expect("index");
        let q = TableQuery::parse("age=30..45 workclass=Private hours=0..100", t.schema())
            .expect("query");
        let prepared = index
            .prepare(&t.prepare(&q).expect("items"))
            .expect("prepared");
        assert_eq!(prepared.bound, 3);

        let meta: TableMetadata = serde_json::from_str(&t.metadata()).expect("json");
        assert_eq!(TableTransform::from_metadata(&meta).expect("back"), t);
        let e = t
            .keywords(&["1", "Private"], &mut Vec::new())
            .expect_err("ragged");
        assert!(matches!(
            e,
            SaError::RaggedRow {
                found: 2,
                expected: 3
            }
        ));
    }
}
