//! Readers of keyword objects, in every input format of `genie build --kind keywords`: text
//! ([`text`], one object per line), a NumPy CSR pair ([`csr`]: `offsets.npy` and `keywords.npy`)
//! and a list column of a Parquet or Arrow IPC file ([`columnar`]). Each hands the objects to a
//! [`Sink`] in order, in batches of consecutive objects in CSR form, so that every format gives
//! the same objects, hence the same index.
//!
//! The format is taken from the input: a directory holds a CSR pair; `.npy`, `.parquet`,
//! `.arrow`/`.feather`/`.ipc` (Arrow IPC file or stream) and `.arrows` (stream) name theirs;
//! any other name is looked at: the magic bytes of those formats, else text.

pub mod columnar;
pub mod csr;
pub mod text;

use crate::data_error::DataError;
use crate::input::{display_path, STDIN_PATH};
use genie_core::Keyword;
use std::fs::File;
use std::io::{self, BufRead, Read};
use std::path::{Path, PathBuf};

/// Consecutive objects: object `first + i` is `keywords[offsets[i]..offsets[i + 1]]`.
#[derive(Clone, Copy, Debug)]
pub struct Batch<'a> {
    /// Ascending offsets into `keywords`, one more than the objects.
    pub offsets: &'a [u64],
    /// The keywords (those outside `offsets[0]..offsets[last]` belong to no object here).
    pub keywords: &'a [Keyword],
    /// The 0-based number of the first object (its line or row).
    pub first: u64,
    /// The input read so far, in bytes (for progress; an estimate for columnar files).
    pub bytes: u64,
}

impl Batch<'_> {
    /// The number of objects.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether the batch has no object.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What takes the objects, batch by batch, in order.
pub type Sink<'a> = dyn FnMut(Batch<'_>) -> Result<(), DataError> + 'a;

/// The formats of keyword objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One object per line.
    Text,
    /// `offsets.npy` and `keywords.npy`.
    NpyCsr,
    /// A Parquet file with a list column.
    Parquet,
    /// An Arrow IPC file (also Feather version 2).
    ArrowFile,
    /// An Arrow IPC stream.
    ArrowStream,
}

impl Format {
    /// The format's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::NpyCsr => "NumPy CSR (offsets.npy, keywords.npy)",
            Self::Parquet => "Parquet",
            Self::ArrowFile => "Arrow IPC file",
            Self::ArrowStream => "Arrow IPC stream",
        }
    }
}

/// An objects input: its format and files.
#[derive(Clone, Debug)]
pub struct Source {
    /// The format.
    pub format: Format,
    /// The file of the objects (of the keywords, for a CSR pair).
    pub path: PathBuf,
    /// The offsets file of a CSR pair.
    pub offsets: Option<PathBuf>,
    /// The list column of a Parquet or Arrow file (`None`: the only list column).
    pub column: Option<String>,
}

impl Source {
    /// The input `input` (`-`: standard input, text), with the CSR offsets file `offsets` (the
    /// keywords file is then `input`) and a `column` of a columnar file.
    pub fn resolve(
        input: &Path,
        offsets: Option<&Path>,
        column: Option<&str>,
    ) -> Result<Self, DataError> {
        let (format, path, offsets) = if input.is_dir() {
            if let Some(o) = offsets {
                return Err(DataError::BadOption {
                    name: "offsets".into(),
                    message: format!(
                        "the input {} is a directory, which holds offsets.npy itself; give \
                         either the directory or --input KEYWORDS.npy --offsets {}",
                        input.display(),
                        o.display()
                    ),
                });
            }
            (
                Format::NpyCsr,
                input.join("keywords.npy"),
                Some(input.join("offsets.npy")),
            )
        } else {
            let format = detect(input)?;
            if format == Format::NpyCsr && offsets.is_none() {
                return Err(DataError::File {
                    path: input.to_path_buf(),
                    message: "a .npy input holds the keywords of a CSR pair: give their object \
                              offsets with --offsets OFFSETS.npy, or --input DIR holding \
                              offsets.npy and keywords.npy"
                        .into(),
                });
            }
            if format != Format::NpyCsr && offsets.is_some() {
                return Err(DataError::BadOption {
                    name: "offsets".into(),
                    message: format!(
                        "applies to a .npy keywords input, not to {} ({} input)",
                        display_path(input),
                        format.name()
                    ),
                });
            }
            (format, input.to_path_buf(), offsets.map(Path::to_path_buf))
        };
        if column.is_some()
            && !matches!(
                format,
                Format::Parquet | Format::ArrowFile | Format::ArrowStream
            )
        {
            return Err(DataError::BadOption {
                name: "column".into(),
                message: format!(
                    "applies to Parquet and Arrow inputs, not to {} ({} input)",
                    display_path(input),
                    format.name()
                ),
            });
        }
        Ok(Self {
            format,
            path,
            offsets,
            column: column.map(str::to_string),
        })
    }

    /// The number of objects, for a build in a given number of parts: read from the file's
    /// metadata, or counted by a pass over the input (lines, Arrow batches); `None` for standard
    /// input.
    pub fn count_objects(&self) -> Result<Option<u64>, DataError> {
        match self.format {
            Format::Text if self.path.as_os_str() == STDIN_PATH => Ok(None),
            Format::Text => count_lines(&self.path).map(Some),
            Format::NpyCsr => csr::count(self.offsets_path()).map(Some),
            Format::Parquet => columnar::count_parquet(&self.path).map(Some),
            Format::ArrowFile | Format::ArrowStream => {
                let mut n = 0;
                self.read(&mut |b: Batch<'_>| {
                    n += b.len() as u64;
                    Ok(())
                })?;
                Ok(Some(n))
            }
        }
    }

    /// Reads the objects into `sink`; returns their number.
    pub fn read(&self, sink: &mut Sink<'_>) -> Result<u64, DataError> {
        let column = self.column.as_deref();
        match self.format {
            Format::Text => text::read(&self.path, sink),
            Format::NpyCsr => csr::read(self.offsets_path(), &self.path, sink),
            Format::Parquet => columnar::read_parquet(&self.path, column, sink),
            Format::ArrowFile => columnar::read_arrow(&self.path, false, column, sink),
            Format::ArrowStream => columnar::read_arrow(&self.path, true, column, sink),
        }
    }

    fn offsets_path(&self) -> &Path {
        self.offsets.as_deref().unwrap_or(&self.path)
    }
}

/// The format of a file: by its extension, else by its first bytes.
fn detect(path: &Path) -> Result<Format, DataError> {
    if path.as_os_str() == STDIN_PATH {
        return Ok(Format::Text);
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let magic = magic_bytes(path)?;
    let arrow = |magic: &[u8]| {
        if magic.starts_with(b"ARROW1") {
            Format::ArrowFile
        } else {
            Format::ArrowStream
        }
    };
    Ok(match ext.as_deref() {
        Some("npy") => Format::NpyCsr,
        Some("parquet") => Format::Parquet,
        Some("arrow" | "feather" | "ipc") => arrow(&magic),
        Some("arrows") => Format::ArrowStream,
        _ if magic.starts_with(b"\x93NUMPY") => Format::NpyCsr,
        _ if magic.starts_with(b"PAR1") => Format::Parquet,
        _ if magic.starts_with(b"ARROW1") => Format::ArrowFile,
        _ if magic.starts_with(&[0xff, 0xff, 0xff, 0xff]) => Format::ArrowStream,
        _ => Format::Text,
    })
}

/// Up to the first 8 bytes of a file (none when it cannot be opened: the reader then says why).
fn magic_bytes(path: &Path) -> Result<Vec<u8>, DataError> {
    let Ok(file) = File::open(path) else {
        return Ok(Vec::new());
    };
    let mut magic = Vec::with_capacity(8);
    match file.take(8).read_to_end(&mut magic) {
        Ok(_) => Ok(magic),
        // a directory or an unreadable file: the reader reports it
        Err(_) => Ok(Vec::new()),
    }
}

/// The lines of a text file (a last line without a line end counts).
fn count_lines(path: &Path) -> Result<u64, DataError> {
    let io_err = |error| DataError::Io {
        path: path.to_path_buf(),
        error,
    };
    let mut r = io::BufReader::with_capacity(1 << 20, File::open(path).map_err(io_err)?);
    let (mut lines, mut last) = (0u64, b'\n');
    loop {
        let buf = r.fill_buf().map_err(io_err)?;
        let Some(&end) = buf.last() else { break };
        lines += buf.iter().filter(|&&b| b == b'\n').count() as u64;
        last = end;
        let n = buf.len();
        r.consume(n);
    }
    if last != b'\n' {
        lines += 1;
    }
    Ok(lines)
}
