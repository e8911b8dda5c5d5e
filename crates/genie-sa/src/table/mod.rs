//! Relational tables (paper section V-C).
//!
//! [`schema`] infers or takes attribute kinds, one contiguous keyword block per attribute (numeric
//! attributes discretized into equal-width intervals), [`query`] parses queries (exact values,
//! ranges, value +- radius), and [`transform`] is the transform; [`uci`] reads the column names
//! of header-less UCI files.

pub mod query;
pub mod schema;
pub mod transform;
pub mod uci;
