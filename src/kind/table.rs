//! The `table` kind: rows of a relational table (paper section V-C).
//!
//! `genie build --kind table` reads a CSV file (fields trimmed; every row as long as the first;
//! object id = 0-based row number, header excluded). Column names come from, in this order:
//! `--names a,b,c`; `--names-file F` (a UCI `.names` description, see [`genie_sa::table::uci`]); a file
//! `STEM.names` beside the input (so `adult.data` is read header-less with the names of
//! `adult.names`), unless `--header` is given; else the first row, the header. The schema is
//! inferred ([`genie_sa::table::schema`]) and stored in the index metadata.
//!
//! `genie search` reads one query per line, either **conditions** `age=30..40 workclass=Private`
//! ([`genie_sa::table::query`]) or a **CSV row** in the table's column order (no header), whose
//! numeric values are searched `+- --radius` intervals. With `--query-format auto` (the default)
//! a line whose first word is `NAME=...` with no comma before the `=` is read as conditions, any
//! other as a row. Output: `{"query":0,"hits":[{"id":12,"count":3}]}` lines, the count being the
//! number of conditions a row meets.

use super::{
    metadata_with, text_query, BuildJob, BuildReport, CountIndex, CountParser, Encoded,
    IndexSource, Kind, KindInfo, LiveObjects, LiveSetup, OpenOptions, Opened, OptionSpec,
    OptionType, Options, Placement,
};
use crate::csv_input;
use crate::data_error::DataError;
use crate::input::display_path;
use genie_core::{InvertedIndex, Keyword, Query, Transform};
use genie_sa::table::schema::KindHint;
use genie_sa::table::uci;
use genie_sa::{InferOptions, SaError, Schema, TableMetadata, TableQuery, TableTransform};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where the column names of a table come from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameSource {
    /// Names given on the command line.
    pub names: Option<Vec<String>>,
    /// A UCI `.names` file.
    pub names_file: Option<PathBuf>,
    /// The first row is the header, even if a `.names` file lies beside the input.
    pub header: bool,
}

/// How the lines of a table queries file are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueryFormat {
    /// Conditions when the first word looks like `NAME=`, else a CSV row.
    #[default]
    Auto,
    /// Every line is a CSV row.
    Csv,
    /// Every line is a list of conditions.
    Conditions,
}

/// The column names of `input` if it is read header-less (`None`: the first row is the header).
pub fn header_less_names(
    input: &Path,
    source: &NameSource,
) -> Result<Option<Vec<String>>, DataError> {
    if let Some(names) = &source.names {
        return Ok(Some(names.clone()));
    }
    let file = match &source.names_file {
        Some(f) => f.clone(),
        None if source.header => return Ok(None),
        None => {
            let sibling = input.with_extension("names");
            if sibling == input || !sibling.is_file() {
                return Ok(None);
            }
            log::info!(
                "{}: no header; column names from {}",
                display_path(input),
                sibling.display()
            );
            sibling
        }
    };
    let text = std::fs::read_to_string(&file).map_err(|error| DataError::Io {
        path: file.clone(),
        error,
    })?;
    let names = uci::column_names(&text).map_err(|e| DataError::File {
        path: file.clone(),
        message: e.to_string(),
    })?;
    Ok(Some(names))
}

/// The rows of a table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rows {
    /// Column names.
    pub names: Vec<String>,
    /// Fields per row (trimmed).
    pub rows: Vec<Vec<String>>,
    /// The 1-based line each row starts on.
    pub lines: Vec<u64>,
}

/// Reads the rows of `input` (a CSV file; see the module docs for the names).
pub fn read_rows(input: &Path, source: &NameSource) -> Result<Rows, DataError> {
    let given = header_less_names(input, source)?;
    let reader = csv_input::reader(input, given.is_none())?;
    rows_of(reader, input, given)
}

/// The rows of a CSV reader (`input` names it in errors): column names `given`, else the header.
pub fn rows_of(
    mut reader: csv::Reader<Box<dyn std::io::Read>>,
    input: &Path,
    given: Option<Vec<String>>,
) -> Result<Rows, DataError> {
    let names = match given {
        Some(n) => n,
        None => reader
            .headers()
            .map_err(|e| DataError::csv(input, &e))?
            .iter()
            .map(String::from)
            .collect(),
    };
    let mut out = Rows {
        names,
        ..Rows::default()
    };
    let mut record = csv::StringRecord::new();
    while let Some(line) = csv_input::next_record(&mut reader, input, &mut record)? {
        if record.len() != out.names.len() {
            return Err(DataError::Csv {
                path: input.to_path_buf(),
                line,
                message: format!(
                    "row has {} fields, expected {} ({})",
                    record.len(),
                    out.names.len(),
                    out.names.join(", ")
                ),
            });
        }
        out.rows.push(record.iter().map(String::from).collect());
        out.lines.push(line);
    }
    Ok(out)
}

/// Builds the index of the table `input`.
pub fn build(
    input: &Path,
    source: &NameSource,
    options: &InferOptions,
) -> Result<(InvertedIndex, TableTransform), DataError> {
    let rows = read_rows(input, source)?;
    let schema = Schema::infer(&rows.names, &rows.rows, options).map_err(|e| DataError::File {
        path: input.to_path_buf(),
        message: e.to_string(),
    })?;
    let transform = TableTransform::new(schema);
    let mut builder = transform
        .builder()
        .metadata(metadata_with(&transform.metadata(), input));
    let mut keywords = Vec::new();
    for (row, &line) in rows.rows.iter().zip(&rows.lines) {
        keywords.clear();
        transform
            .keywords(row, &mut keywords)
            .map_err(|e| DataError::at(input, line, e))?;
        builder.push_object(&keywords)?;
    }
    Ok((builder.build()?, transform))
}

/// The transform of a loaded index.
pub fn open(index: &InvertedIndex, index_path: &Path) -> Result<TableTransform, DataError> {
    let meta: TableMetadata = serde_json::from_str(index.metadata())
        .map_err(|e| SaError::BadMetadata(format!("{}: {e}", index_path.display())))?;
    Ok(TableTransform::from_metadata(&meta)?)
}

/// Whether a query line reads as conditions under `format`.
fn is_conditions(line: &str, format: QueryFormat) -> bool {
    match format {
        QueryFormat::Csv => false,
        QueryFormat::Conditions => true,
        QueryFormat::Auto => line
            .split_whitespace()
            .next()
            .and_then(|w| w.split_once('='))
            .is_some_and(|(name, _)| !name.is_empty() && !name.contains(',')),
    }
}

/// The fields of one CSV line (trimmed; none for a line of no record); the error says why it is
/// not a CSV row.
fn csv_line(line: &str) -> Result<Vec<String>, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .trim(csv::Trim::All)
        .from_reader(line.as_bytes());
    let mut record = csv::StringRecord::new();
    match reader.read_record(&mut record) {
        Ok(true) => Ok(record.iter().map(String::from).collect()),
        Ok(false) => Ok(Vec::new()),
        Err(e) => Err(format!("not a CSV row: {e}")),
    }
}

/// Parses one line of a table queries file (an empty line is an empty query).
pub fn parse_query_line(
    line: &str,
    schema: &Schema,
    radius: u32,
    format: QueryFormat,
) -> Result<TableQuery, SaError> {
    if line.trim().is_empty() {
        return Ok(TableQuery::default());
    }
    if is_conditions(line, format) {
        return TableQuery::parse(line, schema);
    }
    let fields = csv_line(line).map_err(SaError::BadQuery)?;
    if fields.is_empty() {
        return Ok(TableQuery::default());
    }
    TableQuery::from_row(&fields, schema, radius)
}

/// The kind of table rows.
#[derive(Clone, Copy, Debug, Default)]
pub struct Table;

/// The build options of tables.
const BUILD_OPTIONS: &[OptionSpec] = &[
    OptionSpec::u32(
        "bins",
        1,
        "B",
        "Equal-width intervals per numeric column [default: 1024].",
    ),
    OptionSpec::new(
        "names",
        OptionType::Names,
        "NAMES",
        "The column names, comma-separated (the file then has no header row).",
    ),
    OptionSpec::new(
        "names_file",
        OptionType::Path,
        "FILE",
        "Take the column names from a UCI .names file (the file then has no header row). \
         Default: INPUT's STEM.names when it exists, else the header row.",
    ),
    OptionSpec::flag(
        "header",
        "The first row is the header, even if a STEM.names file lies beside the input.",
    ),
    OptionSpec::new(
        "numeric",
        OptionType::Names,
        "NAMES",
        "Columns that must be numeric (comma-separated names).",
    ),
    OptionSpec::new(
        "categorical",
        OptionType::Names,
        "NAMES",
        "Columns to treat as categorical even if their values are numbers.",
    ),
];

/// The search options of tables.
const SEARCH_OPTIONS: &[OptionSpec] = &[
    OptionSpec::new(
        "radius",
        OptionType::U32 {
            min: 0,
            max: u32::MAX,
        },
        "R",
        "Intervals on each side of the numeric values of CSV-row queries [default: 0].",
    ),
    OptionSpec::new(
        "query_format",
        OptionType::Choice(&["auto", "csv", "conditions"]),
        "FORMAT",
        "How query lines are read: auto (conditions when the first word is NAME=..., else a CSV \
         row), csv (CSV rows) or conditions (NAME=VALUE, NAME=LO..HI, NAME=V~R) [default: auto].",
    ),
];

/// The kind of table rows.
const INFO: KindInfo = KindInfo {
    build_options: BUILD_OPTIONS,
    search_options: SEARCH_OPTIONS,
    ..KindInfo::new(
        genie_sa::table::transform::KIND,
        "Rows of a CSV table, by attribute conditions",
    )
};

impl Kind for Table {
    fn info(&self) -> &KindInfo {
        &INFO
    }

    fn build(&self, job: &BuildJob<'_>) -> Result<BuildReport, DataError> {
        let o = job.options;
        o.check(self.name(), self.build_options())?;
        let source = NameSource {
            names: o.strings("names")?,
            names_file: o.str("names_file")?.map(PathBuf::from),
            header: o.flag("header")?,
        };
        let mut options = InferOptions::default();
        if let Some(b) = o.u32("bins")? {
            options.bins = b;
        }
        for (name, hint) in [
            ("numeric", KindHint::Numeric),
            ("categorical", KindHint::Categorical),
        ] {
            for column in o.strings(name)?.unwrap_or_default() {
                options.hints.insert(column, hint);
            }
        }
        let (index, _) = build(job.input, &source, &options)?;
        index.save(job.output)?;
        Ok(BuildReport {
            summary: super::summary(&index),
            objects: u64::from(index.num_objects()),
            side_files: Vec::new(),
        })
    }

    fn open(&self, source: &IndexSource, placement: Placement, options: &OpenOptions) -> Opened {
        let index = super::single_index(source, self.name())?;
        let transform = open(&index, &source.path)?;
        Ok(Box::new(CountIndex::new(
            TableParser(transform),
            placement.searcher(index)?,
            options.method,
        )))
    }

    fn live_objects(&self, setup: &LiveSetup) -> Result<Arc<dyn LiveObjects>, DataError> {
        Ok(Arc::new(LiveRows::new(&setup.metadata)?))
    }
}

/// Table rows in a live index: the build's schema and bins (a number outside a column's range
/// goes to its first or last interval; a category the build did not see is refused).
pub struct LiveRows(TableParser);

impl LiveRows {
    /// The rows of a live index whose metadata holds the schema.
    pub fn new(metadata: &str) -> Result<Self, DataError> {
        let meta: TableMetadata = serde_json::from_str(metadata)
            .map_err(|e| SaError::BadMetadata(format!("the live index's metadata: {e}")))?;
        Ok(Self(TableParser(TableTransform::from_metadata(&meta)?)))
    }

    /// The fields of a row written as a CSV line (column order), an array of values (column
    /// order) or an object of values by column name (columns left out are missing).
    fn fields(&self, raw: &Value) -> Result<Vec<String>, DataError> {
        let schema = self.0 .0.schema();
        let n = schema.attributes().len();
        let field = |v: &Value| -> Result<String, DataError> {
            match v {
                Value::String(s) => Ok(s.clone()),
                Value::Number(x) => Ok(x.to_string()),
                Value::Null => Ok(String::new()),
                other => Err(DataError::BadQuery(format!(
                    "a field: expected a string or a number, found {}",
                    super::kind_of(other)
                ))),
            }
        };
        let fields: Vec<String> = match raw {
            Value::String(line) => csv_line(line).map_err(DataError::BadQuery)?,
            Value::Array(values) => values.iter().map(field).collect::<Result<_, _>>()?,
            Value::Object(map) => {
                let mut fields = vec![String::new(); n];
                for (name, v) in map {
                    fields[schema.position(name)?] = field(v)?;
                }
                fields
            }
            other => {
                return Err(DataError::BadQuery(format!(
                    "expected a row: a CSV line, an array of values or an object of values by \
                     column, found {}",
                    super::kind_of(other)
                )))
            }
        };
        if fields.len() != n {
            return Err(DataError::BadQuery(format!(
                "a row of {} fields, expected {n} ({})",
                fields.len(),
                schema
                    .attributes()
                    .iter()
                    .map(|a| a.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        Ok(fields)
    }
}

impl LiveObjects for LiveRows {
    fn kind(&self) -> &str {
        genie_sa::table::transform::KIND
    }

    fn encode(&self, raw: &Value) -> Result<Encoded, DataError> {
        let fields = self.fields(raw)?;
        let schema = self.0 .0.schema();
        let mut keywords = Vec::with_capacity(fields.len());
        for (attr, f) in fields.iter().enumerate() {
            keywords.extend(schema.field_keyword_clamped(attr, f)?);
        }
        Ok(Encoded::of_keywords(keywords))
    }

    fn decode(&self, log: &[u8]) -> Result<Vec<Keyword>, DataError> {
        Encoded::keywords_of(log, "table keywords")
    }

    fn query(&self, raw: &Value, options: &Options) -> Result<super::LiveQuery, DataError> {
        Ok(super::LiveQuery::counts(self.0.parse(raw, options)?))
    }

    fn clauses(&self, condition: &str) -> Result<Vec<super::Clause>, DataError> {
        self.0.clauses(condition)
    }
}

/// The `query_format` option (checked: one of the declared words).
fn query_format(options: &Options) -> Result<QueryFormat, DataError> {
    Ok(match options.str("query_format")? {
        Some("csv") => QueryFormat::Csv,
        Some("conditions") => QueryFormat::Conditions,
        _ => QueryFormat::Auto,
    })
}

/// Parses table queries (conditions or CSV rows) with the index's schema.
pub struct TableParser(TableTransform);

impl CountParser for TableParser {
    fn kind(&self) -> &str {
        genie_sa::table::transform::KIND
    }

    fn parse(&self, raw: &Value, options: &Options) -> Result<Query, DataError> {
        options.check(self.kind(), Table.search_options())?;
        let radius = options.u32("radius")?.unwrap_or(0);
        let format = query_format(options)?;
        if radius > 0 && format == QueryFormat::Conditions {
            return Err(DataError::BadOption {
                name: "radius".into(),
                message: "applies to CSV-row queries, not to --query-format conditions (a \
                          condition gives its own interval: age=30..40)"
                    .into(),
            });
        }
        let q = parse_query_line(text_query(raw)?, self.0.schema(), radius, format)?;
        Ok(self.0.prepare(&q)?)
    }

    /// The conditions `age=30..40 job=clerk` as clauses, one per column: the bins a numeric
    /// interval touches, the value a categorical condition names; a condition no row can meet
    /// (a category the index has not seen) is a clause of nothing, which no row meets.
    fn clauses(&self, condition: &str) -> Result<Vec<super::Clause>, DataError> {
        let schema = self.0.schema();
        let q = TableQuery::parse(condition, schema)
            .map_err(|e| DataError::BadQuery(format!("\"where\": {e}")))?;
        let ranges = q
            .condition_ranges(schema)
            .map_err(|e| DataError::BadQuery(format!("\"where\": {e}")))?;
        Ok(ranges
            .into_iter()
            .map(|r| r.into_iter().collect())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Schema {
        let names = ["age", "workclass"].map(String::from);
        let rows = [["20", "Private"], ["60", "State-gov"]];
        Schema::infer(&names, &rows, &InferOptions::default()).expect("schema")
    }

    #[test]
    fn query_lines() {
        let s = schema();
        let conds = parse_query_line("age=30..40 workclass=Private", &s, 0, QueryFormat::Auto)
            .expect("conditions");
        assert_eq!(conds.conditions.len(), 2);
        let row = parse_query_line(" 30, Private", &s, 5, QueryFormat::Auto).expect("row");
        assert_eq!(row.conditions.len(), 2);
        let e = parse_query_line("salary=3 age=30", &s, 0, QueryFormat::Auto).expect_err("unknown");
        assert!(
            e.to_string().contains("unknown attribute \"salary\""),
            "{e}"
        );
        let e = parse_query_line("30", &s, 0, QueryFormat::Auto).expect_err("short row");
        assert_eq!(e.to_string(), "row has 1 fields, expected 2");
        assert!(parse_query_line("age=3,x", &s, 0, QueryFormat::Csv).is_err());
        assert!(parse_query_line("", &s, 0, QueryFormat::Auto)
            .expect("empty")
            .conditions
            .is_empty());
    }
}
