//! The error type of genie-lsh: bad parameters, unreadable or malformed vector files (each message
//! names the file, and the row where one is to blame), and errors of the core index.

use std::path::PathBuf;

/// Errors of genie-lsh.
#[derive(Debug, thiserror::Error)]
pub enum LshError {
    /// A parameter is out of its valid range.
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// Vectors of different dimensions met (a query against an index, two sets).
    #[error("dimension mismatch: expected {expected}, found {found}")]
    Dimension {
        /// The dimension expected.
        expected: usize,
        /// The dimension found.
        found: usize,
    },
    /// Reading or writing a file failed.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause (part of the message, so not a separate source: a chain of causes would
        /// print it twice).
        error: std::io::Error,
    },
    /// A vector file is malformed (bad header, truncated, wrong dimension).
    #[error("{}: {reason}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A row of a text vector file (CSV) is malformed.
    #[error("{}:{row}: {reason}", path.display())]
    Row {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        row: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// The metadata stored in an index is not genie-lsh's or is damaged.
    #[error("bad index metadata: {0}")]
    Metadata(String),
    /// An error of the core index or engine.
    #[error(transparent)]
    Core(#[from] genie_core::GenieError),
}

impl LshError {
    /// A format error naming `path`.
    pub fn format(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Self::Format {
            path: path.into(),
            reason: reason.into(),
        }
    }

    /// An I/O error naming `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            error: source,
        }
    }
}

impl From<LshError> for genie_core::GenieError {
    fn from(e: LshError) -> Self {
        match e {
            LshError::Core(inner) => inner,
            other => genie_core::GenieError::InvalidParameter(other.to_string()),
        }
    }
}

/// Result alias of genie-lsh.
pub type Result<T, E = LshError> = std::result::Result<T, E>;
