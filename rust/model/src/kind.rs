//! Row kinds of a changelog, numbered as Flink's `org.apache.flink.types.RowKind#toByteValue`.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The kind of change a row carries, exactly Flink's `RowKind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum RowKind {
    /// `+I`: a row is added.
    Insert = 0,
    /// `-U`: the old content of an updated row is retracted.
    UpdateBefore = 1,
    /// `+U`: the new content of an updated row is added.
    UpdateAfter = 2,
    /// `-D`: a row is removed.
    Delete = 3,
}

impl RowKind {
    /// Parses Flink's byte value; `None` for anything else.
    pub fn from_byte(b: u8) -> Option<RowKind> {
        match b {
            0 => Some(RowKind::Insert),
            1 => Some(RowKind::UpdateBefore),
            2 => Some(RowKind::UpdateAfter),
            3 => Some(RowKind::Delete),
            _ => None,
        }
    }

    /// Flink's short string: `+I`, `-U`, `+U`, `-D`.
    pub fn short_string(self) -> &'static str {
        match self {
            RowKind::Insert => "+I",
            RowKind::UpdateBefore => "-U",
            RowKind::UpdateAfter => "+U",
            RowKind::Delete => "-D",
        }
    }

    /// Parses a short string (`+I`, `-U`, `+U`, `-D`).
    pub fn from_short_string(s: &str) -> Option<RowKind> {
        [
            RowKind::Insert,
            RowKind::UpdateBefore,
            RowKind::UpdateAfter,
            RowKind::Delete,
        ]
        .into_iter()
        .find(|k| k.short_string() == s)
    }

    /// True for `+I` and `+U`: the row is added to the table.
    pub fn is_accumulate(self) -> bool {
        matches!(self, RowKind::Insert | RowKind::UpdateAfter)
    }
}

impl fmt::Display for RowKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_and_string_round_trip() {
        for b in 0..4u8 {
            let k = RowKind::from_byte(b).unwrap();
            assert_eq!(k as u8, b);
            assert_eq!(RowKind::from_short_string(k.short_string()), Some(k));
        }
        assert_eq!(RowKind::from_byte(4), None);
        assert!(RowKind::Insert.is_accumulate() && RowKind::UpdateAfter.is_accumulate());
        assert!(!RowKind::Delete.is_accumulate() && !RowKind::UpdateBefore.is_accumulate());
    }
}
