//! Debezium JSON change envelopes decoded into a Flink changelog of compact rows.
//!
//! This is the ingest end of the native hot path: Kafka records from a Debezium connector come in
//! as bytes, and leave as `(RowKind, row)` pairs in the canonical row encoding of
//! [`cdcjoin_model`], ready for the join. It does what Flink's `debezium-json` format does, without
//! building a Java object (or a JSON tree) per record:
//!
//! * **One pass, zero copy.** The message is indexed 64 bytes at a time with SIMD (simdjson's
//!   stage 1; AVX-512, AVX2 or SSE2 chosen at run time) and walked through the index once, with
//!   JSON's grammar; fields other than `op`, `before`, `after` (`source`, `ts_ms`,
//!   `transaction`, ...) are only syntax-checked, and each declared column is captured as the span
//!   of its raw JSON text (the `envelope` module). A message the walk declines (every malformed
//!   one) is scanned by serde_json instead, whose errors are reported. Values are then decoded
//!   straight into the output row, in schema order, only for the images the op needs.
//! * **Batches.** A [`Decoder`] appends to a caller-owned [`ChangeSink`]: one byte buffer and one
//!   entry table for a whole batch, reused across batches, so steady-state decoding does not
//!   allocate.
//! * **One set of op rules** ([`split_envelope`]): `c`/`r` → `+I(after)`; `u` → `-U(before)`,
//!   `+U(after)` (or `-D`, `+I` with [`UpdateMode::DeleteInsert`]); `d` → `-D(before)`; the
//!   retraction first. In upsert mode a `u` without `before` is `+U(after)` alone, and a `d` whose
//!   `before` holds only the primary key deletes by key. Envelopes decoded elsewhere (rows
//!   already encoded, e.g. by Java) go through the same function.
//! * **Errors say where and why** ([`DecodeError`]): a caller-given position (`users@offset 42`)
//!   and the reason, in Flink's words where Flink has them. Tombstones are not errors but a
//!   [`Decoded::Tombstone`] outcome, for the caller to count and skip.
//!
//! Both message shapes are accepted: the bare envelope, and Kafka Connect's
//! `{"schema": ..., "payload": envelope}` (detected per message: a top-level object with a
//! `schema` key and an object or null `payload`), whose Connect schema then names each column's
//! encoding. [`Decoder::decode_upsert`] reads upsert-kafka records instead (key = primary key,
//! value = flat row, null value = delete by key).
//!
//! # Column encodings
//!
//! Columns are found by name (any order; extra columns ignored; an absent nullable column is null,
//! an absent or null NOT NULL column an error) and read according to the declared type and the
//! encoding the side declares ([`DecoderConfig`]: the connector's `decimal.handling.mode`,
//! `time.precision.mode`, `binary.handling.mode`, each defaulting to what Flink's
//! `debezium-json` reads), or, for schema-wrapped messages, the one their Connect schema names.
//! Nothing is guessed from a value: one that does not fit is a bad record naming the encoding.
//!
//! | Declared type | Setting | Accepted JSON |
//! |---|---|---|
//! | `BOOLEAN` | | `true`, `false` |
//! | `TINYINT`, `SMALLINT`, `INT`, `BIGINT` | | integers, range-checked (also Postgres `interval` as `MicroDuration` micros into BIGINT) |
//! | `FLOAT`, `DOUBLE` | | numbers; `"NaN"`, `"Infinity"`, `"-Infinity"` |
//! | `DECIMAL(p, s)` | `decimal_handling=flink` (default) | a number, or decimal text in a string (what Flink reads; never base64) |
//! | | `precise` | base64 of the unscaled value at scale `s` (or the Connect schema's `scale`); `{"scale", "value"}` (`VariableScaleDecimal`) |
//! | | `string` | decimal text in a string only |
//! | | `double` | a number only |
//! | `STRING` | | strings (Postgres `uuid`, `json`/`jsonb`, enums, `interval` in `interval.handling.mode=string` are strings too) |
//! | `BYTES` | `binary_handling=bytes` (default), `base64` | base64 strings |
//! | | `hex` | hex strings |
//! | `DATE` | `time_precision=flink` (default) | `"yyyy-MM-dd"` |
//! | | `adaptive*`, `connect`, `micro/nanoseconds` | epoch days (`io.debezium.time.Date`) |
//! | | `isostring` | `"yyyy-MM-ddZ"` (`IsoDate`) |
//! | `TIME(p)` | `flink` | `"HH:mm:ss[.f]"`, whole seconds kept (as Flink's json format does) |
//! | | `adaptive` | integer of the day: millis (`Time`), micros (`MicroTime`) or nanos (`NanoTime`) by the declared `source_precision` |
//! | | `adaptive_time_microseconds` | micros of the day (`MicroTime`) |
//! | | `connect` | millis of the day |
//! | | `microseconds`, `nanoseconds` | micros (`MicroTime`), nanos (`NanoTime`) of the day |
//! | | `isostring` | `"HH:mm:ss[.f]Z"` (`IsoTime`) |
//! | `TIMESTAMP(p)` | `flink` | `"yyyy-MM-dd HH:mm:ss[.f]"` or `"yyyy-MM-ddTHH:mm[:ss[.f]]"` |
//! | | `adaptive*` | epoch millis / micros / nanos (`Timestamp`, `MicroTimestamp`, `NanoTimestamp`) by the declared `source_precision` |
//! | | `connect` | epoch millis |
//! | | `microseconds`, `nanoseconds` | epoch micros, nanos |
//! | | `isostring` | `"yyyy-MM-ddTHH:mm:ss[.f]Z"` (`IsoTimestamp`) |
//! | `TIMESTAMP_LTZ(p)` | `flink` | as TIMESTAMP with a trailing `Z` (or an offset) |
//! | | any other | `ZonedTimestamp` text, `"yyyy-MM-ddTHH:mm:ss[.f]Z"` or with an offset |
//!
//! Money (`money`) is a DECIMAL in whichever `decimal_handling` the connector uses. TIME keeps at
//! most milliseconds and TIMESTAMPs are truncated (floor) to the declared precision, as Flink
//! holds them. DATEs and TIMESTAMPs hold the years 0000 to 9999, as Flink's do: an integer beyond
//! them, and `i64::MIN`/`i64::MAX` in any unit (how Debezium sends Postgres' `infinity` and
//! `-infinity`), is out of range. The `Z` of the `isostring` texts is required: another offset is
//! a zoned value, which only TIMESTAMP_LTZ reads. A value equal to the connector's
//! `unavailable.value.placeholder` (or, for an `hstore` as JSON text, the map from it to itself)
//! is an *unavailable* column, not a value ([`DecoderConfig`]).
//!
//! Nothing panics on any input: every malformed message, however odd, is a [`DecodeError`].

#![warn(missing_docs)]

pub mod batch;
mod connect;
mod decoder;
mod encoding;
mod envelope;
mod error;
mod numbers;
mod ops;
mod sink;
mod structural;
mod temporal;
mod text;
mod values;

pub use decoder::{Decoded, Decoder, DecoderConfig, DEFAULT_PLACEHOLDER};
pub use encoding::{BinaryHandling, DecimalHandling, TimePrecision};
pub use error::{DecodeError, ErrorKind, Side};
pub use ops::{split_envelope, UpdateMode};
pub use sink::ChangeSink;
