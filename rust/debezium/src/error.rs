//! Decoding errors.
//!
//! A record that cannot be decoded is a *corrupt* record in Flink's terms: the caller either fails
//! the job or drops and counts it (Flink's `ignore-parse-errors`). Either way a human reads the
//! message, so every error names where the record came from (a caller-given position such as
//! `users@offset 42`) and why it was rejected, in the words Flink's own `debezium-json` format uses
//! where one exists.
//!
//! The reason is an [`ErrorKind`], built deep inside the decoder where the position is unknown;
//! [`DecodeError`] pairs it with the position at the API boundary. Formatting the position happens
//! only on the error path, so passing it costs nothing per record.

use cdcjoin_model::DataType;
use std::fmt;
use thiserror::Error;

/// Which image of the row an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The envelope's `before` image.
    Before,
    /// The envelope's `after` image.
    After,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Before => "before",
            Side::After => "after",
        })
    }
}

/// Why a record was rejected, without saying which record.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ErrorKind {
    /// The bytes are not JSON, or not a JSON object where the envelope needs one. The message is
    /// serde_json's and ends with the line and column.
    #[error("malformed JSON: {0}")]
    Malformed(String),
    /// The envelope has no `op` field (or `op` is null).
    #[error("missing \"op\" field")]
    MissingOp,
    /// The `op` field is not one of `c`, `r`, `u`, `d` (for example `t` for TRUNCATE or `m` for a
    /// logical-decoding message). Holds the value as JSON text.
    #[error("unknown \"op\" value {0} (expected \"c\", \"r\", \"u\" or \"d\")")]
    UnknownOp(String),
    /// An UPDATE or DELETE without a `before` image (Flink's message, word for word).
    #[error(
        "The \"before\" field of {0} message is null, if you are using Debezium Postgres \
         Connector, please check the Postgres table has been set REPLICA IDENTITY to FULL level."
    )]
    MissingBefore(&'static str),
    /// A CREATE, READ or UPDATE without an `after` image.
    #[error("The \"after\" field of {0} message is null.")]
    MissingAfter(&'static str),
    /// A NOT NULL column is absent from the row image or null.
    #[error(
        "column \"{column}\" of the \"{side}\" row is declared NOT NULL but is missing or null"
    )]
    MissingColumn {
        /// The row image.
        side: Side,
        /// The column's name.
        column: String,
    },
    /// A column's JSON value has no meaning for the column's declared type.
    #[error(
        "column \"{column}\" ({data_type}) of the \"{side}\" row: expected {expected}, found {found}"
    )]
    MistypedColumn {
        /// The row image.
        side: Side,
        /// The column's name.
        column: String,
        /// The declared type.
        data_type: DataType,
        /// What the column's declared encoding accepts, naming the encoding.
        expected: String,
        /// The JSON found (shortened when long).
        found: String,
    },
    /// A column's value is well-formed but does not fit the declared type (an INT above 2^31, a
    /// DECIMAL with more digits than its precision, a TIMESTAMP beyond the storable range...).
    #[error(
        "column \"{column}\" ({data_type}) of the \"{side}\" row: value {found} is out of range"
    )]
    OutOfRange {
        /// The row image.
        side: Side,
        /// The column's name.
        column: String,
        /// The declared type.
        data_type: DataType,
        /// The JSON found (shortened when long).
        found: String,
    },
    /// An integer TIME/TIMESTAMP in an adaptive `time.precision.mode` whose unit (the source
    /// column's precision) is neither declared in `source_precision` nor named by a Connect
    /// schema.
    #[error(
        "column \"{column}\" ({data_type}) of the \"{side}\" row: the integer {found} under \
         {mode} is in millis, micros or nanos as the source column's precision is <= 3, <= 6 or \
         more, which the message does not say: declare it, e.g. \"source_precision\": \
         {{\"{column}\": 6}}"
    )]
    UnknownUnit {
        /// The row image.
        side: Side,
        /// The column's name.
        column: String,
        /// The declared type.
        data_type: DataType,
        /// The declared mode.
        mode: &'static str,
        /// The JSON found (shortened when long).
        found: String,
    },
    /// The Connect schema of a schema-wrapped message cannot be read, or contradicts the declared
    /// types or settings.
    #[error("the message's Connect schema: {0}")]
    Schema(String),
    /// In upsert mode, a `before` image that holds only the primary key lacks a key column.
    #[error(
        "the \"before\" row holds only key columns (upsert mode: a delete by key) but its \
         primary key column \"{0}\" is missing or null"
    )]
    MissingKey(String),
    /// In upsert mode, a record value (the row) lacks a primary key column.
    #[error(
        "the value's primary key column \"{0}\" is missing or null (a value wrapped by Kafka \
         Connect's JsonConverter needs schemas.enable=false; values written with \
         value.fields-include=EXCEPT_KEY are not read)"
    )]
    ValueWithoutKey(String),
    /// In upsert mode, a delete (a null value) whose record key is null or absent.
    #[error(
        "an upsert-kafka delete (a null value) needs the record key, which holds the primary key"
    )]
    DeleteWithoutKey,
    /// An upsert-kafka record given to a decoder not in upsert mode.
    #[error("upsert-kafka records need upsert mode (\"upsert\": true and a primary key)")]
    NotUpsert,
    /// A row handed over already encoded (see [`crate::Decoder::split_rows`]) is not a valid row
    /// of the schema.
    #[error("the \"{side}\" row is not a valid encoded row: {reason}")]
    InvalidRow {
        /// The row image.
        side: Side,
        /// What [`cdcjoin_model::RowLayout::validate`] found.
        reason: String,
    },
}

impl ErrorKind {
    /// Attaches the position of the record the error is about.
    pub fn at(self, position: &dyn fmt::Display) -> DecodeError {
        DecodeError {
            position: position.to_string(),
            kind: self,
        }
    }
}

/// A record that could not be decoded: where it is and why.
///
/// Displays as `<position>: <reason>`, e.g.
/// `users@offset 42: unknown "op" value "t" (expected "c", "r", "u" or "d")`.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{position}: {kind}")]
pub struct DecodeError {
    /// The caller-given position of the record (`users@offset 42`, `record #17`).
    pub position: String,
    /// The reason.
    pub kind: ErrorKind,
}

/// Longest JSON excerpt quoted in a message.
const MAX_FOUND: usize = 64;

/// A JSON excerpt for an error message, cut at a character boundary when long.
pub(crate) fn excerpt(json: &[u8]) -> String {
    let text = String::from_utf8_lossy(json);
    if text.chars().count() <= MAX_FOUND {
        return text.into_owned();
    }
    let mut cut: String = text.chars().take(MAX_FOUND).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_position_and_reason() {
        let e = ErrorKind::UnknownOp("\"t\"".into()).at(&"users@offset 42");
        assert_eq!(
            e.to_string(),
            "users@offset 42: unknown \"op\" value \"t\" (expected \"c\", \"r\", \"u\" or \"d\")"
        );
        let e = ErrorKind::MissingBefore("UPDATE").at(&format_args!("record #{}", 17));
        assert!(e.to_string().starts_with(
            "record #17: The \"before\" field of UPDATE message is null, if you are using"
        ));
        assert!(e.to_string().ends_with("REPLICA IDENTITY to FULL level."));
    }

    #[test]
    fn excerpt_shortens_long_json() {
        assert_eq!(excerpt(b"\"abc\""), "\"abc\"");
        let long = "é".repeat(100);
        let cut = excerpt(long.as_bytes());
        assert_eq!(cut.chars().count(), MAX_FOUND + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(excerpt(&[0xff, b'a']), "\u{fffd}a");
    }
}
