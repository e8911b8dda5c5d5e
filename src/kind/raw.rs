//! Raw queries read at once ([`RawBlock`]), and where their errors say they came from.

use super::{KindIndex, Options, Prepared};
use crate::data_error::DataError;
use serde_json::Value;

/// Raw queries read at once ([`QueryReader::next_block`]).
pub enum RawBlock {
    /// JSON values, each with where it came from.
    Values(Vec<Value>, Vec<String>),
    /// Text lines, one query each.
    Lines(crate::input::LineBlock),
    /// Rows of a vector file, one query each, parsed from the floats themselves
    /// ([`KindIndex::parse_vector`]).
    Rows(VectorRows),
}

/// Rows `first..first + len` of a vector file's vectors (shared, not copied).
pub struct VectorRows {
    /// The file's vectors.
    pub set: std::sync::Arc<genie_lsh::VectorSet>,
    /// The block's first row.
    pub first: usize,
    /// Rows in the block.
    pub len: usize,
    /// The file, for messages.
    pub path: std::path::PathBuf,
}

impl VectorRows {
    /// Where row `i` of the file came from, numbered from 0 as object ids and NumPy rows are.
    pub fn place_of_row(path: &std::path::Path, i: usize) -> String {
        format!("{}: vector {i} (0-based)", crate::input::display_path(path))
    }

    /// Row `i` of the block, refused (with its file, row and column) where a value is not
    /// finite, as JSON, which the same query would travel in, has no such number.
    pub fn row(&self, i: usize) -> Result<&[f32], DataError> {
        let at = self.first + i;
        let row = self.set.row(at);
        match row.iter().position(|x| !x.is_finite()) {
            None => Ok(row),
            Some(col) => Err(DataError::BadQuery(format!(
                "{}, column {col}: {} is not a finite number",
                Self::place_of_row(&self.path, at),
                row[col]
            ))),
        }
    }
}

impl RawBlock {
    /// The queries it holds.
    pub fn len(&self) -> usize {
        match self {
            Self::Values(raws, _) => raws.len(),
            Self::Lines(lines) => lines.len(),
            Self::Rows(rows) => rows.len,
        }
    }

    /// Whether it holds none (the input had ended).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where query `i` came from, for messages (`queries.txt:3`).
    pub fn place(&self, i: usize) -> String {
        match self {
            Self::Values(_, places) => places[i].clone(),
            Self::Lines(lines) => lines.place(i),
            Self::Rows(rows) => VectorRows::place_of_row(&rows.path, rows.first + i),
        }
    }

    /// Query `i` parsed for `index`: the error of a line that is not text names its place
    /// itself ([`PlacedError::Placed`]); a parse's error does not.
    pub fn parse(
        &self,
        i: usize,
        index: &dyn KindIndex,
        options: &Options,
    ) -> Result<Prepared, PlacedError> {
        match self {
            Self::Values(raws, _) => index.parse(&raws[i], options),
            Self::Lines(lines) => {
                let line = lines.line(i).map_err(|e| PlacedError::Placed(e.into()))?;
                index.parse_line(line, options)
            }
            Self::Rows(rows) => {
                rows.row(i).map_err(PlacedError::Placed)?;
                index.parse_row(&rows.set, rows.first + i, options)
            }
        }
        .map_err(PlacedError::Unplaced)
    }
}

/// An error of a query in a [`RawBlock`]: whether its message names its place already.
#[derive(Debug)]
pub enum PlacedError {
    /// The message names the file and line.
    Placed(DataError),
    /// The message needs [`RawBlock::place`] before it.
    Unplaced(DataError),
}
