//! [`Searched`]: what a front end asks of a vector index of either family (an LSH family's
//! [`VectorIndex`], a [`CodebookIndex`]) beside its searches, so that one piece of code serves
//! both.

use crate::stages::SearchStages;
use crate::{CodebookIndex, VectorIndex};
use genie_core::Engine;

/// A vector index as its front ends see it apart from its searches.
pub trait Searched {
    /// The vectors it holds.
    fn objects(&self) -> usize;
    /// Its count engine (backend, device, the engine's stage times).
    fn engine(&self) -> &Engine;
    /// The time of each stage of its searches since the last call.
    fn take_stages(&self) -> SearchStages;
}

impl Searched for VectorIndex {
    fn objects(&self) -> usize {
        self.vectors().len()
    }

    fn engine(&self) -> &Engine {
        VectorIndex::engine(self)
    }

    fn take_stages(&self) -> SearchStages {
        VectorIndex::take_stages(self)
    }
}

impl Searched for CodebookIndex {
    fn objects(&self) -> usize {
        self.len()
    }

    fn engine(&self) -> &Engine {
        CodebookIndex::engine(self)
    }

    fn take_stages(&self) -> SearchStages {
        CodebookIndex::take_stages(self)
    }
}
