//! The library's errors as Python exceptions, with the library's messages (those the `genie`
//! program prints): a missing file is `FileNotFoundError`, another failure of the file system
//! `OSError` (`PermissionError` where access is denied), a missing or failing GPU
//! `RuntimeError`, and everything wrong with the data, a query or an option `ValueError`.

use genie::core::GenieError;
use genie::data_error::DataError;
use genie::input::InputError;
use genie::lsh::LshError;
use genie::sa::SaError;
use pyo3::exceptions::{
    PyFileNotFoundError, PyOSError, PyPermissionError, PyRuntimeError, PyValueError,
};
use pyo3::PyErr;
use std::io;

/// The exception of a library error.
pub fn to_py(e: DataError) -> PyErr {
    let message = e.to_string();
    if let Some(kind) = io_kind(&e) {
        return match kind {
            io::ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
            io::ErrorKind::PermissionDenied => PyPermissionError::new_err(message),
            _ => PyOSError::new_err(message),
        };
    }
    let device = match &e {
        DataError::Core(g) => is_device(g),
        DataError::Lsh(LshError::Core(g)) => is_device(g),
        DataError::Sa(SaError::Core(g)) => is_device(g),
        _ => false,
    };
    if device {
        PyRuntimeError::new_err(message)
    } else {
        PyValueError::new_err(message)
    }
}

/// A `ValueError` with this message.
pub fn value_error(message: impl Into<String>) -> PyErr {
    PyValueError::new_err(message.into())
}

/// Whether the error is the device's (no GPU, CUDA, a kernel, or an internal error).
fn is_device(e: &GenieError) -> bool {
    matches!(
        e,
        GenieError::GpuUnavailable(_)
            | GenieError::Cuda(_)
            | GenieError::KernelCompile { .. }
            | GenieError::Internal(_)
    )
}

/// The kind of the file-system error behind `e`, if it is one.
fn io_kind(e: &DataError) -> Option<io::ErrorKind> {
    let core = |g: &GenieError| match g {
        GenieError::Io { error, .. } => Some(error.kind()),
        _ => None,
    };
    match e {
        DataError::Io { error, .. } => Some(error.kind()),
        DataError::Input(InputError::Open { source, .. } | InputError::Read { source, .. }) => {
            Some(source.kind())
        }
        DataError::Core(g) => core(g),
        DataError::Lsh(LshError::Io { error, .. }) => Some(error.kind()),
        DataError::Lsh(LshError::Core(g)) => core(g),
        DataError::Sa(SaError::Io { error, .. }) => Some(error.kind()),
        DataError::Sa(SaError::Core(g)) => core(g),
        _ => None,
    }
}
