//! [`VectorVerifier`]: the exact distance between a query vector and a stored vector, which
//! re-ranks the top-K candidates of the match count (DESIGN.md section 5) so that a search returns
//! the true distance beside the count.

use crate::metric::Metric;
use crate::vectors::VectorSet;
use genie_core::{GenieError, ObjectId, Verifier};
use std::sync::Arc;

/// Exact distances to the vectors of an index.
#[derive(Clone, Debug)]
pub struct VectorVerifier {
    vectors: Arc<VectorSet>,
    metric: Metric,
}

impl VectorVerifier {
    /// A verifier over `vectors` (object `i` is row `i`) by `metric`.
    pub fn new(vectors: Arc<VectorSet>, metric: Metric) -> Self {
        Self { vectors, metric }
    }

    /// The metric.
    pub fn metric(&self) -> Metric {
        self.metric
    }
}

impl Verifier for VectorVerifier {
    type QueryInput = [f32];

    fn distance(&self, query: &[f32], id: ObjectId) -> genie_core::Result<f64> {
        if query.len() != self.vectors.dim() {
            return Err(GenieError::InvalidParameter(format!(
                "query of dimension {}, the vectors have {}",
                query.len(),
                self.vectors.dim()
            )));
        }
        let row = self.vectors.get(id as usize).ok_or_else(|| {
            GenieError::Internal(format!(
                "object {id} beyond the {} stored vectors",
                self.vectors.len()
            ))
        })?;
        Ok(self.metric.distance(query, row))
    }
}
