//! The match-count model (paper section II, Definition 2.1, with weights; DESIGN.md section 1):
//! keywords, queries of weighted keyword-range items, hits and the contract order of results.

use crate::error::{GenieError, Result};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// A keyword of the universe U of one index.
pub type Keyword = u32;
/// A dense object id, in insertion order.
pub type ObjectId = u32;

/// One item of a query: the keyword range `[lo, hi]` (inclusive) with a weight.
///
/// An object matching `j` keywords of the range gains `weight * j` to its match count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Item {
    /// First keyword of the range.
    pub lo: Keyword,
    /// Last keyword of the range (inclusive).
    pub hi: Keyword,
    /// Weight of every match in the range, at least 1.
    pub weight: u32,
}

impl Item {
    /// A single keyword with weight 1.
    pub fn keyword(kw: Keyword) -> Self {
        Self {
            lo: kw,
            hi: kw,
            weight: 1,
        }
    }

    /// A checked range item: `lo <= hi` and `weight >= 1`.
    pub fn new(lo: Keyword, hi: Keyword, weight: u32) -> Result<Self> {
        let item = Self { lo, hi, weight };
        item.validate()?;
        Ok(item)
    }

    /// Checks `lo <= hi` and `weight >= 1`.
    pub fn validate(&self) -> Result<()> {
        if self.lo > self.hi {
            return Err(GenieError::InvalidRange {
                lo: self.lo,
                hi: self.hi,
            });
        }
        if self.weight == 0 {
            return Err(GenieError::ZeroWeight);
        }
        Ok(())
    }
}

/// A query: a list of items. An empty query matches nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Query {
    /// The items; overlapping ranges each count.
    pub items: Vec<Item>,
}

impl Query {
    /// A query from items (validated).
    pub fn new(items: Vec<Item>) -> Result<Self> {
        items.iter().try_for_each(Item::validate)?;
        Ok(Self { items })
    }

    /// A query of single keywords, weight 1 each.
    pub fn from_keywords(keywords: &[Keyword]) -> Self {
        Self {
            items: keywords.iter().map(|&k| Item::keyword(k)).collect(),
        }
    }
}

/// One result: an object and its match count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Hit {
    /// The object's id.
    pub id: ObjectId,
    /// Its match count with the query.
    pub count: u32,
}

/// The contract order of hits: count descending, then id ascending.
pub fn contract_order(a: &Hit, b: &Hit) -> Ordering {
    b.count.cmp(&a.count).then(a.id.cmp(&b.id))
}

/// Sorts hits in the contract order and keeps the first `k`.
pub fn sort_and_cut(hits: &mut Vec<Hit>, k: usize) {
    if hits.len() > k {
        if k > 0 {
            hits.select_nth_unstable_by(k - 1, contract_order);
        }
        hits.truncate(k);
    }
    hits.sort_unstable_by(contract_order);
}
