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
}

impl RawBlock {
    /// The queries it holds.
    pub fn len(&self) -> usize {
        match self {
            Self::Values(raws, _) => raws.len(),
            Self::Lines(lines) => lines.len(),
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
