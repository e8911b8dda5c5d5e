//! The error type of genie-sa. Every fallible function of the crate returns [`Result`]; a
//! [`SaError`] converts into [`genie_core::GenieError::InvalidParameter`] where a
//! [`genie_core::Transform`] method has to return the core's error type.

use std::path::PathBuf;

/// Errors of the shotgun-and-assembly plugins.
#[derive(Debug, thiserror::Error)]
pub enum SaError {
    /// A parameter is out of its valid range (e.g. `n = 0`).
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// A sequence is not valid UTF-8 where Unicode scalar values were asked for.
    #[error("not valid UTF-8 (invalid byte at offset {offset})")]
    NotUtf8 {
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
    /// An object holds an n-gram or word that the dictionary built at index time does not know.
    #[error("{0} is not in the dictionary built at index time")]
    NotInDictionary(String),
    /// A table query or row names an attribute the schema does not have.
    #[error("unknown attribute {name:?} (known: {known})")]
    UnknownAttribute {
        /// The name given.
        name: String,
        /// The schema's attribute names, comma-separated.
        known: String,
    },
    /// A value does not fit its attribute (e.g. text for a numeric attribute).
    #[error("attribute {attribute:?}: {reason}")]
    BadValue {
        /// The attribute.
        attribute: String,
        /// What is wrong.
        reason: String,
    },
    /// A table row or query condition is malformed.
    #[error("{0}")]
    BadQuery(String),
    /// A row has another number of fields than the schema has attributes.
    #[error("row has {found} fields, expected {expected}")]
    RaggedRow {
        /// Fields in the row.
        found: usize,
        /// Attributes of the schema.
        expected: usize,
    },
    /// Reading or writing a file failed.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause (part of the message, so not a separate source).
        error: std::io::Error,
    },
    /// A side file (sequences, words) is truncated, corrupted or does not belong to the index.
    #[error("{}: {reason}", path.display())]
    BadSideFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Index metadata written by another plugin, version or configuration.
    #[error("bad index metadata: {0}")]
    BadMetadata(String),
    /// An error of the core (index, engine).
    #[error(transparent)]
    Core(#[from] genie_core::GenieError),
}

/// Result alias of genie-sa.
pub type Result<T, E = SaError> = std::result::Result<T, E>;

impl From<SaError> for genie_core::GenieError {
    fn from(e: SaError) -> Self {
        match e {
            SaError::Core(core) => core,
            other => Self::InvalidParameter(other.to_string()),
        }
    }
}
