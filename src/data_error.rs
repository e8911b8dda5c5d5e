//! The error type of the data kinds ([`crate::kind`]): every message names the file and, where
//! one is to blame, the 1-based line, or the option or query that was wrong.

use crate::input::{display_path, InputError};
use genie_core::GenieError;
use genie_sa::SaError;
use std::path::{Path, PathBuf};

/// An error building or searching an index of sequences, documents or a table.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// Reading a text file line by line failed (the error names the file and line).
    #[error(transparent)]
    Input(#[from] InputError),
    /// A CSV file is malformed at a line.
    #[error("{}:{line}: {message}", display_path(path))]
    Csv {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// A line of a text file was rejected.
    #[error("{}:{line}: {message}", display_path(path))]
    Line {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// A record of a file was rejected by a plugin.
    #[error("{}:{line}: {error}", display_path(path))]
    Record {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: u64,
        /// Why (part of the message, so not a separate source).
        error: SaError,
    },
    /// A file as a whole was rejected (e.g. a missing column, bad column names).
    #[error("{}: {message}", display_path(path))]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A plugin error without a line (e.g. a side file that does not match the index).
    #[error(transparent)]
    Sa(#[from] SaError),
    /// An index or search error.
    #[error(transparent)]
    Core(#[from] GenieError),
    /// A vector-plugin error (files, parameters, the index).
    #[error(transparent)]
    Lsh(#[from] genie_lsh::LshError),
    /// A query was rejected (the caller adds where it came from).
    #[error("{0}")]
    BadQuery(String),
    /// An option was rejected.
    #[error("option {name}: {message}")]
    BadOption {
        /// The option's name.
        name: String,
        /// What was wrong.
        message: String,
    },
    /// Something this kind or index cannot do.
    #[error("{0}")]
    Unsupported(String),
    /// Reading a file failed.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause (part of the message).
        error: std::io::Error,
    },
}

impl DataError {
    /// A plugin error at `path:line`.
    pub fn at(path: &Path, line: u64, source: SaError) -> Self {
        Self::Record {
            path: path.to_path_buf(),
            line,
            error: source,
        }
    }

    /// A CSV reader's error, placed at its line.
    pub fn csv(path: &Path, e: &csv::Error) -> Self {
        let line = e.position().map_or(0, csv::Position::line);
        let message = match e.kind() {
            csv::ErrorKind::UnequalLengths {
                expected_len, len, ..
            } => format!("row has {len} fields, expected {expected_len}"),
            csv::ErrorKind::Utf8 { err, .. } => format!(
                "field {} is not valid UTF-8 (invalid byte at offset {})",
                err.field() + 1,
                err.valid_up_to()
            ),
            csv::ErrorKind::Io(io) => format!("read error: {io}"),
            _ => e.to_string(),
        };
        Self::Csv {
            path: path.to_path_buf(),
            line,
            message,
        }
    }
}
