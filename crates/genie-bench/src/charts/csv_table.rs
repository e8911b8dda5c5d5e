//! The benchmark CSVs the charts read: a file with a header row read whole ([`Table`]), its rows
//! read by column name ([`Row`]), and errors that name the file and line ([`CsvError`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A malformed benchmark CSV; every message names the file and, where one is to blame, the line.
#[derive(Debug, thiserror::Error)]
#[allow(missing_docs)] // each variant's fields are the parts of its message
pub enum CsvError {
    /// The file cannot be opened or its header read.
    #[error("{}: cannot open: {error}", path.display())]
    Open { path: PathBuf, error: csv::Error },
    /// A row that is not CSV or not as long as the header.
    #[error("{}:{line}: {message}", path.display())]
    Malformed {
        path: PathBuf,
        line: u64,
        message: String,
    },
    /// A column the chart needs is not in the header.
    #[error("{}: the header has no column `{column}` (it has: {found})", path.display())]
    MissingColumn {
        path: PathBuf,
        column: String,
        found: String,
    },
    /// A cell that is not what the column holds.
    #[error("{}:{line}: column `{column}`: expected {expected}, found `{value}`", path.display())]
    BadValue {
        path: PathBuf,
        line: u64,
        column: String,
        expected: &'static str,
        value: String,
    },
    /// A header and no rows.
    #[error("{}: no data rows", path.display())]
    Empty { path: PathBuf },
}

/// A CSV file with a header row, read whole.
#[derive(Debug)]
pub struct Table {
    path: PathBuf,
    columns: HashMap<String, usize>,
    header: Vec<String>,
    rows: Vec<(u64, csv::StringRecord)>,
}

/// One data row of a [`Table`], for typed access by column name.
#[derive(Clone, Copy)]
pub struct Row<'a> {
    table: &'a Table,
    /// The row's line in the file (1 is the header).
    pub line: u64,
    record: &'a csv::StringRecord,
}

impl Table {
    /// Reads `path` whole; fails on a malformed row or when there is no data row.
    pub fn read(path: &Path) -> Result<Self, CsvError> {
        let malformed = |e: csv::Error| {
            let line = e.position().map_or(0, csv::Position::line);
            let message = match e.kind() {
                csv::ErrorKind::UnequalLengths {
                    expected_len, len, ..
                } => format!("row has {len} fields, the header has {expected_len}"),
                csv::ErrorKind::Utf8 { err, .. } => {
                    format!("field {} is not valid UTF-8", err.field() + 1)
                }
                csv::ErrorKind::Io(io) => format!("read error: {io}"),
                _ => e.to_string(),
            };
            CsvError::Malformed {
                path: path.to_path_buf(),
                line,
                message,
            }
        };
        let mut reader = csv::Reader::from_path(path).map_err(|error| CsvError::Open {
            path: path.to_path_buf(),
            error,
        })?;
        let header: Vec<String> = reader
            .headers()
            .map_err(malformed)?
            .iter()
            .map(|h| h.trim().to_string())
            .collect();
        let columns = header
            .iter()
            .enumerate()
            .map(|(i, h)| (h.clone(), i))
            .collect();
        let mut rows = Vec::new();
        for record in reader.records() {
            let record = record.map_err(malformed)?;
            let line = record.position().map_or(0, csv::Position::line);
            rows.push((line, record));
        }
        if rows.is_empty() {
            return Err(CsvError::Empty {
                path: path.to_path_buf(),
            });
        }
        Ok(Self {
            path: path.to_path_buf(),
            columns,
            header,
            rows,
        })
    }

    /// Fails unless the header has every one of `names`.
    pub fn require(&self, names: &[&str]) -> Result<(), CsvError> {
        for name in names {
            self.column(name)?;
        }
        Ok(())
    }

    fn column(&self, name: &str) -> Result<usize, CsvError> {
        self.columns
            .get(name)
            .copied()
            .ok_or_else(|| CsvError::MissingColumn {
                path: self.path.clone(),
                column: name.to_string(),
                found: self.header.join(", "),
            })
    }

    /// Whether the header has the column `name`.
    pub fn has(&self, name: &str) -> bool {
        self.columns.contains_key(name)
    }

    /// The data rows, in file order.
    pub fn rows(&self) -> impl Iterator<Item = Row<'_>> {
        self.rows.iter().map(|(line, record)| Row {
            table: self,
            line: *line,
            record,
        })
    }

    /// The first data row (there is one: [`Table::read`] refuses a file without).
    pub fn first(&self) -> Row<'_> {
        let (line, record) = &self.rows[0];
        Row {
            table: self,
            line: *line,
            record,
        }
    }
}

impl<'a> Row<'a> {
    /// The cell of `column`, trimmed (empty where the row is short).
    pub fn text(&self, column: &str) -> Result<&'a str, CsvError> {
        let i = self.table.column(column)?;
        Ok(self.record.get(i).unwrap_or("").trim())
    }

    /// The error of a cell of `column` holding `value` where `expected` was.
    pub fn bad(&self, column: &str, expected: &'static str, value: &str) -> CsvError {
        CsvError::BadValue {
            path: self.table.path.clone(),
            line: self.line,
            column: column.to_string(),
            expected,
            value: value.to_string(),
        }
    }

    /// A finite number.
    pub fn number(&self, column: &str) -> Result<f64, CsvError> {
        let value = self.text(column)?;
        match value.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(self.bad(column, "a number", value)),
        }
    }

    /// A number greater than zero (a time, a rate or a count drawn on a logarithmic axis).
    pub fn positive(&self, column: &str) -> Result<f64, CsvError> {
        let v = self.number(column)?;
        if v > 0.0 {
            Ok(v)
        } else {
            Err(self.bad(column, "a number greater than 0", self.text(column)?))
        }
    }

    /// A number greater than zero, or `None` for an empty cell (a column a run leaves empty for
    /// some workloads, such as the DBLP-like row's memory per query).
    pub fn optional_positive(&self, column: &str) -> Result<Option<f64>, CsvError> {
        if self.text(column)?.is_empty() {
            Ok(None)
        } else {
            self.positive(column).map(Some)
        }
    }
}
