//! Building blocks of live indexes (objects added, replaced and deleted while an index serves).
//!
//! [`wal`]: the write-ahead log. Every change is appended to it, durable before it is
//! acknowledged, with concurrent appends sharing their disk syncs (group commit); reopening the
//! log replays the changes in order and drops a tail torn by a crash.

pub mod wal;

#[cfg(test)]
mod tests;
