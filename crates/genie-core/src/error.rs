//! The error type of genie-core: every fallible operation of the crate returns [`Result`].

use std::path::PathBuf;

/// Errors of genie-core. "No GPU" is a value ([`GenieError::GpuUnavailable`]), not a panic.
#[derive(Debug, thiserror::Error)]
pub enum GenieError {
    /// An item of a query has `lo > hi`.
    #[error("invalid item {lo}-{hi}: lo must not exceed hi")]
    InvalidRange {
        /// Lower end of the range.
        lo: u32,
        /// Upper end of the range.
        hi: u32,
    },
    /// An item has weight 0.
    #[error("invalid item weight 0: weights start at 1")]
    ZeroWeight,
    /// A query's count bound does not fit the 32-bit counters.
    #[error("query count bound {bound} exceeds the largest supported count {max}")]
    CountBoundTooLarge {
        /// The bound the query would need.
        bound: u64,
        /// The largest supported bound.
        max: u64,
    },
    /// Too many objects or postings for the index layout.
    #[error("capacity exceeded: {0}")]
    Capacity(String),
    /// A configuration value is out of its valid range.
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// Reading or writing a file failed.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause (part of the message, so not a separate source: a chain of causes would
        /// print it twice).
        error: std::io::Error,
    },
    /// An index file is truncated, corrupted, or of another version.
    #[error("{}: {reason}", path.display())]
    BadIndexFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A write-ahead log is corrupted, of another format, or refuses a record or an append.
    #[error("{}: {reason}", path.display())]
    Log {
        /// The log file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The GPU backend was asked for but cannot run here; the reason says why.
    #[error("GPU unavailable: {0}")]
    GpuUnavailable(String),
    /// A CUDA driver, NVRTC or kernel failure.
    #[error("CUDA error: {0}")]
    Cuda(String),
    /// A kernel failed to compile; carries the kernel name and NVRTC's log.
    #[error("kernel {kernel} failed to compile:\n{log}")]
    KernelCompile {
        /// The kernel source's name.
        kernel: String,
        /// NVRTC's log.
        log: String,
    },
    /// An internal invariant was violated (a bug): the result would be wrong, so none is returned.
    #[error("internal error: {0}")]
    Internal(String),
}

/// Result alias of genie-core.
pub type Result<T, E = GenieError> = std::result::Result<T, E>;
