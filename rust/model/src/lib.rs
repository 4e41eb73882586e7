//! The changelog model shared by every other crate: what a row is, what a change is, and how a row
//! is laid out in bytes.
//!
//! Rows travel as the *compact row encoding* ([`row`]): a null bitmap, one fixed-width slot per
//! column and a variable-length tail for strings and bytes. It is canonical (one value has exactly one
//! encoding), so equality and hashing of rows and keys work on raw bytes, the way Flink's
//! `BinaryRowData` does; copying a row is a `memcpy`. Owned [`Value`]s exist only at the edges (tests,
//! printing, the demo), never on the hot path.

pub mod exchange;
pub mod flink_row;
#[cfg(any(test, feature = "golden"))]
pub mod golden;
pub mod key_group;
pub mod kind;
pub mod row;
pub mod schema;
pub mod value;

pub use kind::RowKind;
pub use row::{KeyProjection, RowLayout, RowRef, RowWriter};
pub use schema::{DataType, Field, Schema};
pub use value::Value;
