//! How a built index stores its List Array: plain ids (32 bits a posting), or packed in blocks
//! ([`genie_core::packed`]): 44-67% of the plain bytes on the benchmark shapes, and searched with
//! the same answers. Every kind builds plain; [`store_list_arrays`] then rewrites the index files
//! a build wrote in the chosen form, so the kinds need not know of it (the same step for
//! `genie build --postings`, Python's `build(..., postings=)` and any caller of the library).
//!
//! A GPU takes a packed List Array as it is stored and unpacks it on the device (or keeps it
//! packed where the device is short of memory): the copy over the bus shrinks by the packing's
//! ratio. The CPU backend unpacks it on all cores at its first search.

use crate::data_error::DataError;
use genie_core::parts::is_manifest;
use genie_core::InvertedIndex;
use std::path::{Path, PathBuf};

/// The form of the List Array in an index file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum ListForm {
    /// Plain ids, 4 bytes a posting: opened in place by a memory map, nothing to decode.
    #[default]
    Plain,
    /// Blocks of 128 postings, each as offsets from its smallest id in the bits they need.
    Packed,
}

impl ListForm {
    /// The form `index` holds its List Array in.
    pub fn of(index: &InvertedIndex) -> Self {
        if index.list_array().packed().is_some() {
            Self::Packed
        } else {
            Self::Plain
        }
    }

    /// Its name: `plain` or `packed`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Plain => "plain",
            Self::Packed => "packed",
        }
    }
}

impl std::str::FromStr for ListForm {
    type Err = DataError;
    fn from_str(s: &str) -> Result<Self, DataError> {
        match s {
            "plain" => Ok(Self::Plain),
            "packed" => Ok(Self::Packed),
            other => Err(DataError::BadOption {
                name: "postings".into(),
                message: format!("{other:?} is not a List Array form (expected plain or packed)"),
            }),
        }
    }
}

/// One index file rewritten by [`store_list_arrays`].
#[derive(Clone, Debug, PartialEq)]
pub struct Stored {
    /// The file.
    pub file: PathBuf,
    /// Its size before, in bytes.
    pub bytes_before: u64,
    /// Its size after.
    pub bytes_after: u64,
    /// Bytes a posting of its List Array after.
    pub bytes_per_posting: f64,
}

/// Rewrites the index files of the build at `output` (the index file, or a parted index's part
/// files) with their List Arrays in `form`, each whole or not at all; files already in `form` are
/// left as they are. Returns the files rewritten.
pub fn store_list_arrays(output: &Path, form: ListForm) -> Result<Vec<Stored>, DataError> {
    let files: Vec<PathBuf> = if is_manifest(output)? {
        (0..)
            .map(|i| super::side_path(output, &format!("part{i}")))
            .take_while(|p| p.exists())
            .collect()
    } else {
        vec![output.to_path_buf()]
    };
    let mut stored = Vec::new();
    for file in files {
        let index = InvertedIndex::load(&file)?;
        if ListForm::of(&index) == form {
            continue;
        }
        let index = match form {
            ListForm::Packed => index.into_packed(),
            ListForm::Plain => index.into_unpacked(),
        };
        let bytes = |f: &Path| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
        let bytes_before = bytes(&file);
        index.save(&file)?;
        stored.push(Stored {
            bytes_before,
            bytes_after: bytes(&file),
            bytes_per_posting: index.bits_per_posting() / 8.0,
            file,
        });
    }
    Ok(stored)
}
