//! Extraction of the top-k from a finished c-PQ (Theorem 3.1; DESIGN.md section 3): every object
//! with count >= AT is in the hash table; the k-th count is AT - 1, and the objects of count AT - 1
//! fill the remaining places in ascending id order, taken from a scan of the bitmap counter (they
//! need not all be in the table). Counts are read from the bitmap counter, which is exact.

use super::{BitmapCounter, Gate, RobinHoodTable};
use crate::error::{GenieError, Result};
use crate::model::{contract_order, Hit};

/// The top-k of one query in the contract order.
pub fn extract(
    bitmap: &BitmapCounter,
    gate: &Gate,
    table: &RobinHoodTable,
    k: usize,
    n: u32,
) -> Result<Vec<Hit>> {
    let at = gate.audit_threshold();
    let mut hits: Vec<Hit> = table
        .ids()
        .map(|id| Hit {
            id,
            count: bitmap.get(id),
        })
        .filter(|h| h.count >= at.max(1))
        .collect();
    hits.sort_unstable_by(contract_order);
    hits.dedup_by_key(|h| h.id);
    if hits.len() >= k {
        // more than k at or above AT only after a lost race on the Gate; all of them are here, so
        // the first k are still exact
        hits.truncate(k);
        return Ok(hits);
    }
    if at >= 2 {
        let need = k - hits.len();
        let mut ties = Vec::with_capacity(need);
        bitmap.scan_equal(at - 1, n, need, &mut ties);
        if ties.len() < need {
            return Err(GenieError::Internal(format!(
                "c-PQ tie fill found {} of {need} objects of count {}",
                ties.len(),
                at - 1
            )));
        }
        hits.extend(ties.into_iter().map(|id| Hit { id, count: at - 1 }));
    }
    Ok(hits)
}
