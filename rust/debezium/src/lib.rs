//! Debezium JSON change envelopes decoded into a Flink changelog of compact rows.
//!
//! This is the ingest end of the native hot path: Kafka records from a Debezium connector come in
//! as bytes, and leave as `(RowKind, row)` pairs in the canonical row encoding of
//! [`cdcjoin_model`], ready for the join. It does what Flink's `debezium-json` format does, without
//! building a Java object (or a JSON tree) per record:
//!
//! * **One pass, zero copy.** serde_json scans the message once with borrowed deserialization;
//!   fields other than `op`, `before`, `after` (`source`, `ts_ms`, `transaction`, ...) are only
//!   syntax-checked, and each declared column is captured as the span of its raw JSON text
//!   (the `envelope` module). Values are then decoded straight into the output row,
//!   in schema order, only for the images the op needs.
//! * **Batches.** A [`Decoder`] appends to a caller-owned [`ChangeSink`]: one byte buffer and one
//!   entry table for a whole batch, reused across batches, so steady-state decoding does not
//!   allocate.
//! * **One set of op rules** ([`split_envelope`]): `c`/`r` → `+I(after)`; `u` → `-U(before)`,
//!   `+U(after)` (or `-D`, `+I` with [`UpdateMode::DeleteInsert`]); `d` → `-D(before)`; the
//!   retraction first. Envelopes decoded elsewhere (rows already encoded, e.g. by Java) go through
//!   the same function.
//! * **Errors say where and why** ([`DecodeError`]): a caller-given position (`users@offset 42`)
//!   and the reason, in Flink's words where Flink has them. Tombstones are not errors but a
//!   [`Decoded::Tombstone`] outcome, for the caller to count and skip.
//!
//! Both message shapes are accepted: the bare envelope, and Kafka Connect's
//! `{"schema": ..., "payload": envelope}` (detected per message: a top-level object with a
//! `schema` key and an object or null `payload`).
//!
//! # Column encodings
//!
//! Columns are found by name (any order; extra columns ignored; an absent nullable column is null,
//! an absent or null NOT NULL column an error) and read according to the declared type:
//!
//! | Declared type   | Accepted JSON (Debezium converter setting)                                    |
//! |-----------------|-------------------------------------------------------------------------------|
//! | `BOOLEAN`       | `true`, `false`                                                               |
//! | `INT`, `BIGINT` | integers, range-checked                                                       |
//! | `FLOAT`, `DOUBLE` | numbers; `"NaN"`, `"Infinity"`, `"-Infinity"`                               |
//! | `DECIMAL(p, s)` | base64 of the unscaled two's-complement value (`precise`); a number (`double`) or decimal string (`string`), rounded `HALF_UP` from the text; `{"scale", "value"}` (`VariableScaleDecimal`) rescaled; at most `p` digits ([`DecimalStrings`] settles base64-vs-text strings) |
//! | `STRING`        | strings (used in place unless escaped)                                        |
//! | `BYTES`         | base64 strings (`binary.handling.mode=bytes`)                                 |
//! | `DATE`          | epoch days (`io.debezium.time.Date`), `"YYYY-MM-DD"`                           |
//! | `TIMESTAMP(p)`  | epoch millis / micros / nanos per [`TimestampUnit`], `"YYYY-MM-DDTHH:MM:SS.f"` |
//!
//! Nothing panics on any input: every malformed message, however odd, is a [`DecodeError`].

#![warn(missing_docs)]

pub mod batch;
mod decoder;
mod envelope;
mod error;
mod numbers;
mod ops;
mod sink;
mod temporal;
mod text;
mod values;

pub use decoder::{Decoded, Decoder, DecoderConfig};
pub use error::{DecodeError, ErrorKind, Side};
pub use ops::{split_envelope, UpdateMode};
pub use sink::ChangeSink;
pub use temporal::TimestampUnit;
pub use values::DecimalStrings;
