//! What both index file formats share ([`super::persist`], [`super::legacy`]): the magic, the
//! errors that name the file, and the structural checks a loaded index passes before it is used.

use super::InvertedIndex;
use crate::error::GenieError;
use rayon::prelude::*;
use std::path::Path;

/// The first bytes of an index file of any version.
pub(super) const MAGIC: &[u8; 8] = b"GENIEIDX";

pub(super) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> GenieError + '_ {
    move |source| GenieError::Io {
        path: path.to_path_buf(),
        error: source,
    }
}

pub(super) fn bad(path: &Path, reason: impl Into<String>) -> GenieError {
    GenieError::BadIndexFile {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

impl InvertedIndex {
    /// Checks the invariants search relies on, so that a bad file cannot cause a panic later
    /// (`largest`: the largest posting when already known).
    pub(super) fn check_structure(&self, largest: Option<u32>) -> std::result::Result<(), String> {
        if self.offsets.first() != Some(&0)
            || self.offsets.last() != Some(&(self.postings.len() as u64))
        {
            return Err("position map does not span the list array".into());
        }
        if self.offsets.par_windows(2).any(|w| w[0] > w[1]) {
            return Err("position map is not ascending".into());
        }
        let n = self.num_objects;
        let beyond = match largest {
            Some(m) => !self.postings.is_empty() && m >= n,
            None => self.postings.any_at_or_above(n),
        };
        if beyond {
            return Err(format!("a posting names an object beyond {n}"));
        }
        if self.block_starts.first() != Some(&0)
            || self.block_starts.windows(2).any(|w| w[0] >= w[1])
        {
            return Err("keyword blocks are not ascending from 0".into());
        }
        if self.block_max.len() != self.block_starts.len() {
            return Err("keyword blocks and their maxima differ in number".into());
        }
        Ok(())
    }
}
