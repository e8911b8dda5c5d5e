//! CSV files for the data-kind modules: a reader over a file or standard input (`-`), records as
//! trimmed text fields, and column lookup by name. Errors name the file and the 1-based line.

use crate::data_error::DataError;
use crate::input::STDIN_PATH;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

/// A CSV reader over `path`: fields trimmed of surrounding whitespace, every row of the same
/// length as the first (a ragged row is an error naming its line). Only `\n` ends a record: a
/// bare `\r` inside an unquoted field (as in the tweets data) stays in the field, and the `\r`
/// of a CRLF line end is trimmed with the rest of the whitespace.
pub fn reader(path: &Path, has_headers: bool) -> Result<csv::Reader<Box<dyn Read>>, DataError> {
    let source: Box<dyn Read> = if path.as_os_str() == STDIN_PATH {
        Box::new(std::io::stdin())
    } else {
        let file = File::open(path).map_err(|error| DataError::Io {
            path: path.to_path_buf(),
            error,
        })?;
        Box::new(BufReader::with_capacity(1 << 16, file))
    };
    Ok(reader_of(source, has_headers))
}

/// A CSV reader over any source, set up as [`reader`] sets up a file's.
pub fn reader_of(source: Box<dyn Read>, has_headers: bool) -> csv::Reader<Box<dyn Read>> {
    csv::ReaderBuilder::new()
        .has_headers(has_headers)
        .trim(csv::Trim::All)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_reader(source)
}

/// The next record and its 1-based line, `None` at the end.
pub fn next_record(
    reader: &mut csv::Reader<Box<dyn Read>>,
    path: &Path,
    record: &mut csv::StringRecord,
) -> Result<Option<u64>, DataError> {
    match reader.read_record(record) {
        Ok(true) => Ok(Some(record.position().map_or(0, csv::Position::line))),
        Ok(false) => Ok(None),
        Err(e) => Err(DataError::csv(path, &e)),
    }
}

/// The position of column `name` in the header of `reader`.
pub fn column(
    reader: &mut csv::Reader<Box<dyn Read>>,
    path: &Path,
    name: &str,
) -> Result<usize, DataError> {
    let headers = reader.headers().map_err(|e| DataError::csv(path, &e))?;
    headers
        .iter()
        .position(|h| h == name)
        .ok_or_else(|| DataError::File {
            path: path.to_path_buf(),
            message: format!(
                "no column {name:?} in the header (columns: {})",
                headers.iter().collect::<Vec<_>>().join(", ")
            ),
        })
}
