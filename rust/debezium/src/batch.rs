//! Whole batches of messages decoded in one call, for callers that cross an FFI boundary (the JNI
//! bridge) once per batch rather than once per record.
//!
//! A [`BatchDecoder`] is a [`Decoder`] plus the join key of the table: every change it emits
//! carries its join key (a [`KeyProjection`] of the row, in the compact row encoding of the key
//! columns), so the caller can partition by key without reading the row.
//!
//! Asked to (a `max_parallelism` in its configuration), it also *partitions* its output for the
//! batch exchange: each message comes with its Flink timestamp, and the changes of a batch leave
//! grouped by the key group of their join key, one block per key group
//! ([`cdcjoin_model::exchange`]), so that the Java layer routes whole blocks instead of one record
//! per change.
//!
//! # Wire formats (little-endian)
//!
//! ```text
//! JSON batch   := (stamp? | len u32 | message bytes)*  len = 0xFFFF_FFFF: a null message (tombstone)
//! row batch    := (stamp? | op u8 | before | after)*   op: b'c', b'r', b'u', b'd'
//!   before, after := len u32 | row bytes               len = 0xFFFF_FFFF: null image
//! upsert batch := (stamp? | key | value)*              upsert-kafka records (Decoder::decode_upsert)
//!   key, value    := len u32 | JSON bytes              len = 0xFFFF_FFFF: null (a null value deletes)
//!   stamp         := flag u8 | timestamp i64           only when partitioned (exchange::write_stamp)
//! output       := changes u32 | errors u32 | tombstones u32 | entry*
//! entry        := TAG_CHANGE u8 | index u32 | kind u8 | key_len u32 | key | row_len u32 | row
//!               | TAG_ERROR u8  | index u32 | msg_len u32 | message (UTF-8)
//! partitioned output := changes u32 | errors u32 | tombstones u32 | error entry{errors} | block*
//!   error entry   := TAG_ERROR u8 | index u32 | msg_len u32 | message (UTF-8)
//!   block         := key_group u16 | count u32 | len u32 | (kind u8 | stamp | row_len u32 | row)*
//! ```
//! `index` is the message's position in its batch. Entries follow the messages' order; a message
//! yields zero (tombstone), one or two changes, or one error. A bad message never affects the
//! others of its batch. Error messages name the message as `<source> record #<n>`, `n` counting
//! from the `first_index` given with the batch. In a partitioned output the blocks come in key
//! group order, each change carrying the stamp of its message, a key group's changes in the
//! messages' order.

use crate::decoder::{Decoded, Decoder, DecoderConfig};
use crate::error::DecodeError;
use crate::sink::ChangeSink;
use cdcjoin_model::exchange::{read_stamp, Partitioner, STAMP_LEN};
use cdcjoin_model::{KeyProjection, RowKind, RowRef};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Length marking a null message or a null row image in a batch.
pub const NULL_LEN: u32 = u32::MAX;
/// Tag of a change entry in the output.
pub const TAG_CHANGE: u8 = 0;
/// Tag of an error entry in the output.
pub const TAG_ERROR: u8 = 1;
/// Bytes of the output header.
pub const HEADER_LEN: usize = 12;

/// Configuration of a [`BatchDecoder`]: the decoder's, plus the join key and a source name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchDecoderConfig {
    /// Schema and decoding options.
    #[serde(flatten)]
    pub decoder: DecoderConfig,
    /// Join key columns, by name: the key written with each change.
    pub join_key: Vec<String>,
    /// Names the input in error messages (`users record #42`).
    #[serde(default)]
    pub source: String,
    /// Partition the output into key group blocks for this max parallelism (the join's), each
    /// message preceded by its stamp (see the module documentation); absent: one entry per change.
    #[serde(default)]
    pub max_parallelism: Option<u32>,
}

/// Counts of one decoded batch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchSummary {
    /// Messages read.
    pub messages: usize,
    /// Changes written.
    pub changes: usize,
    /// Messages rejected.
    pub errors: usize,
    /// Tombstones skipped.
    pub tombstones: usize,
}

/// Decodes batches of one table's messages into one reusable output buffer.
#[derive(Debug)]
pub struct BatchDecoder {
    decoder: Decoder,
    key: KeyProjection,
    /// The primary key, when the table declares one ([`BatchDecoder::unfillable_retraction`]).
    primary_key: Option<KeyProjection>,
    source: String,
    sink: ChangeSink,
    out: Vec<u8>,
    /// Set when the output is partitioned by key group.
    partitioner: Option<Partitioner>,
    /// The join key of the change being partitioned.
    key_buf: Vec<u8>,
}

/// What decoding one message gave.
type DecodeResult = Result<Decoded, DecodeError>;

/// Names a message in error messages.
struct Position<'a> {
    source: &'a str,
    index: u64,
}

impl fmt::Display for Position<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.source.is_empty() {
            write!(f, "record #{}", self.index)
        } else {
            write!(f, "{} record #{}", self.source, self.index)
        }
    }
}

impl BatchDecoder {
    /// A batch decoder, or why the configuration is unusable.
    pub fn new(config: BatchDecoderConfig) -> Result<BatchDecoder, String> {
        if config.join_key.is_empty() {
            return Err("the join key has no column".into());
        }
        let schema = &config.decoder.schema;
        let key = KeyProjection::new(schema, &schema.indices_of(&config.join_key)?);
        let primary_key = match &config.decoder.primary_key {
            Some(names) => Some(KeyProjection::new(schema, &schema.indices_of(names)?)),
            None => None,
        };
        let partitioner = config.max_parallelism.map(Partitioner::new).transpose()?;
        Ok(BatchDecoder {
            decoder: Decoder::new(config.decoder)?,
            key,
            primary_key,
            source: config.source,
            sink: ChangeSink::new(),
            out: Vec::new(),
            partitioner,
            key_buf: Vec::new(),
        })
    }

    /// A batch decoder from its configuration as JSON ([`BatchDecoderConfig`]).
    pub fn from_json(json: &[u8]) -> Result<BatchDecoder, String> {
        let config = serde_json::from_slice(json)
            .map_err(|e| format!("invalid decoder configuration: {e}"))?;
        BatchDecoder::new(config)
    }

    /// The decoder.
    pub fn decoder(&self) -> &Decoder {
        &self.decoder
    }

    /// The output of the last batch (see the module documentation).
    pub fn output(&self) -> &[u8] {
        &self.out
    }

    /// Decodes a JSON batch into [`BatchDecoder::output`]. Fails only when the framing itself is
    /// broken; bad messages become error entries.
    pub fn decode_json(&mut self, batch: &[u8], first_index: u64) -> Result<BatchSummary, String> {
        self.decode_each(batch, first_index, Reader::message, |d, json, at, sink| {
            json.map_or(Ok(Decoded::Tombstone), |json| d.decode(json, at, sink))
        })
    }

    /// Decodes a batch of envelopes whose rows are already encoded (e.g. by Java) into
    /// [`BatchDecoder::output`]; each row is validated against the schema first.
    pub fn decode_rows(&mut self, batch: &[u8], first_index: u64) -> Result<BatchSummary, String> {
        self.decode_each(
            batch,
            first_index,
            Reader::envelope,
            |d, (op, before, after), at, sink| {
                d.split_rows(op, before, after, at, sink)
                    .map(Decoded::Changes)
            },
        )
    }

    /// Decodes a batch of upsert-kafka records (record key = primary key, value = the row, a null
    /// value a delete; see [`Decoder::decode_upsert`]) into [`BatchDecoder::output`].
    pub fn decode_upsert(
        &mut self,
        batch: &[u8],
        first_index: u64,
    ) -> Result<BatchSummary, String> {
        self.decode_each(
            batch,
            first_index,
            Reader::key_value,
            |d, (key, value), at, sink| d.decode_upsert(key, value, at, sink).map(Decoded::Changes),
        )
    }

    /// Decodes each message of `batch` into the output: `read` takes a message from the batch's
    /// framing (after its stamp), `decode` decodes it into the sink. The kinds of batch differ
    /// only in these two.
    fn decode_each<'b, M>(
        &mut self,
        batch: &'b [u8],
        first_index: u64,
        read: impl Fn(&mut Reader<'b>) -> Result<M, &'static str>,
        decode: impl Fn(&mut Decoder, M, &Position<'_>, &mut ChangeSink) -> DecodeResult,
    ) -> Result<BatchSummary, String> {
        self.begin();
        let mut summary = BatchSummary::default();
        let mut reader = Reader::new(batch);
        while !reader.done() {
            let index = summary.messages;
            let stamp = self.stamp(&mut reader).map_err(|e| frame_error(index, e))?;
            let message = read(&mut reader).map_err(|e| frame_error(index, e))?;
            summary.messages += 1;
            self.sink.clear();
            let at = position(&self.source, first_index, index);
            match decode(&mut self.decoder, message, &at, &mut self.sink) {
                Ok(Decoded::Tombstone) => summary.tombstones += 1,
                Ok(Decoded::Changes(_)) => summary.changes += self.emit_changes(index, stamp),
                Err(e) => summary.errors += self.emit_error(index, &e.to_string()),
            }
        }
        Ok(self.finish(summary))
    }

    fn begin(&mut self) {
        self.out.clear();
        self.out.resize(HEADER_LEN, 0);
    }

    fn finish(&mut self, s: BatchSummary) -> BatchSummary {
        if let Some(p) = &mut self.partitioner {
            p.write_blocks(&mut self.out);
        }
        for (i, n) in [s.changes, s.errors, s.tombstones].into_iter().enumerate() {
            self.out[i * 4..i * 4 + 4].copy_from_slice(&(n as u32).to_le_bytes());
        }
        s
    }

    /// The stamp of the next message: read from the batch when partitioned, else none.
    fn stamp(&self, reader: &mut Reader<'_>) -> Result<Option<i64>, &'static str> {
        match self.partitioner {
            Some(_) => reader.stamp(),
            None => Ok(None),
        }
    }

    /// Appends the sink's changes of message `index` (stamped `stamp`): each with its key, or
    /// into its key group's block when partitioned; returns how many.
    fn emit_changes(&mut self, index: usize, stamp: Option<i64>) -> usize {
        let skip = self.unfillable_retraction();
        let layout = self.decoder.layout();
        if let Some(p) = &mut self.partitioner {
            for (kind, row) in self.sink.iter().skip(skip) {
                self.key_buf.clear();
                self.key.write(&RowRef::new(layout, row), &mut self.key_buf);
                p.add(&self.key_buf, kind, stamp, row);
            }
            return self.sink.len() - skip;
        }
        for (kind, row) in self.sink.iter().skip(skip) {
            self.out.push(TAG_CHANGE);
            put_u32(&mut self.out, index as u32);
            self.out.push(kind as u8);
            let at = self.out.len();
            put_u32(&mut self.out, 0);
            let key_len = self.key.write(&RowRef::new(layout, row), &mut self.out);
            self.out[at..at + 4].copy_from_slice(&(key_len as u32).to_le_bytes());
            put_u32(&mut self.out, row.len() as u32);
            self.out.extend_from_slice(row);
        }
        self.sink.len() - skip
    }

    /// 1 when the sink holds an update (`-U`/`+U`, or `-D`/`+I`) whose new row still has
    /// unavailable columns, keeping its primary key and its join key: its retraction is left out,
    /// else 0. The old row did not carry those columns either (Oracle's LOBs never are, a
    /// Postgres `before` may not be), so only the stored row of the primary key has them; the
    /// update alone is the replacement of that row, which the join fills from it and retracts and
    /// emits as the pair would (README, Semantics). With the retraction first, the join removes
    /// the row the update is to be filled from, and rejects the update.
    fn unfillable_retraction(&self) -> usize {
        let (Some(pk), 2) = (&self.primary_key, self.sink.len()) else {
            return 0;
        };
        let mut changes = self.sink.iter();
        let (Some((k0, before)), Some((k1, after))) = (changes.next(), changes.next()) else {
            return 0;
        };
        let layout = self.decoder.layout();
        let (before, after) = (RowRef::new(layout, before), RowRef::new(layout, after));
        let update = !k0.is_accumulate() && k1.is_accumulate();
        usize::from(
            update
                && after.has_unavailable()
                && pk.same_key(&before, &after)
                && self.key.same_key(&before, &after),
        )
    }

    /// Appends an error entry; returns 1.
    fn emit_error(&mut self, index: usize, message: &str) -> usize {
        self.out.push(TAG_ERROR);
        put_u32(&mut self.out, index as u32);
        put_u32(&mut self.out, message.len() as u32);
        self.out.extend_from_slice(message.as_bytes());
        1
    }
}

fn position(source: &str, first_index: u64, index: usize) -> Position<'_> {
    Position {
        source,
        index: first_index.saturating_add(index as u64),
    }
}

fn frame_error(index: usize, e: &str) -> String {
    format!("malformed batch at message #{index}: {e}")
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends a length-prefixed byte string as the input batches frame one (a JSON message, a row
/// image, an upsert record's key or value): `len u32 | bytes`, or [`NULL_LEN`] alone for `None`.
///
/// The batches a job decodes are framed by the Java layer; this is the same framing for batches
/// built in Rust (tests, benchmarks, fuzz seeds), so that none writes the grammar by hand. A
/// partitioned batch puts [`cdcjoin_model::exchange::write_stamp`]'s stamp before each message.
pub fn write_message(out: &mut Vec<u8>, message: Option<&[u8]>) {
    match message {
        Some(m) => {
            put_u32(out, m.len() as u32);
            out.extend_from_slice(m);
        }
        None => put_u32(out, NULL_LEN),
    }
}

/// Reads the framing of an input batch.
struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf }
    }

    fn done(&self) -> bool {
        self.buf.is_empty()
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        if n > self.buf.len() {
            return Err("truncated");
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    /// A stamp ([`cdcjoin_model::exchange`]).
    fn stamp(&mut self) -> Result<Option<i64>, &'static str> {
        read_stamp(self.take(STAMP_LEN)?).map_err(|_| "bad stamp flag")
    }

    /// A length-prefixed byte string, `None` when null.
    fn message(&mut self) -> Result<Option<&'a [u8]>, &'static str> {
        let len = u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes"));
        if len == NULL_LEN {
            return Ok(None);
        }
        self.take(len as usize).map(Some)
    }

    #[allow(clippy::type_complexity)]
    fn key_value(&mut self) -> Result<(Option<&'a [u8]>, Option<&'a [u8]>), &'static str> {
        Ok((self.message()?, self.message()?))
    }

    #[allow(clippy::type_complexity)]
    fn envelope(&mut self) -> Result<(u8, Option<&'a [u8]>, Option<&'a [u8]>), &'static str> {
        let op = self.take(1)?[0];
        let before = self.message()?;
        let after = self.message()?;
        Ok((op, before, after))
    }
}

/// One entry of an output buffer, borrowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputEntry<'a> {
    /// A change of message `index`: its kind, join key and row.
    Change {
        /// The message's index in its batch.
        index: u32,
        /// The change kind.
        kind: RowKind,
        /// The join key, in the key columns' row encoding.
        key: &'a [u8],
        /// The row.
        row: &'a [u8],
    },
    /// Message `index` was rejected for `message`.
    Error {
        /// The message's index in its batch.
        index: u32,
        /// The reason, naming the message.
        message: &'a str,
    },
}

/// The counts in an output header: (changes, errors, tombstones).
pub fn output_counts(out: &[u8]) -> (u32, u32, u32) {
    let n = |i: usize| u32::from_le_bytes(out[i * 4..i * 4 + 4].try_into().expect("4 bytes"));
    (n(0), n(1), n(2))
}

/// The entries of an output buffer written by a [`BatchDecoder`] that does not partition.
pub fn output_entries(out: &[u8]) -> impl Iterator<Item = OutputEntry<'_>> {
    let mut r = Reader::new(&out[HEADER_LEN..]);
    std::iter::from_fn(move || if r.done() { None } else { read_entry(&mut r) })
}

/// A partitioned output ([`BatchDecoderConfig::max_parallelism`]): its error entries, and the
/// bytes of the key group blocks after them ([`cdcjoin_model::exchange`]); `None` if the errors
/// the header counts are not there.
pub fn partitioned_output(out: &[u8]) -> Option<(Vec<OutputEntry<'_>>, &[u8])> {
    let (_, errors, _) = output_counts(out);
    let mut r = Reader::new(&out[HEADER_LEN..]);
    let errors = (0..errors)
        .map(|_| read_entry(&mut r).filter(|e| matches!(e, OutputEntry::Error { .. })))
        .collect::<Option<Vec<_>>>()?;
    Some((errors, r.buf))
}

/// The output entry at `r`, or `None` if it is not one.
fn read_entry<'a>(r: &mut Reader<'a>) -> Option<OutputEntry<'a>> {
    let tag = r.take(1).ok()?[0];
    let index = u32::from_le_bytes(r.take(4).ok()?.try_into().ok()?);
    if tag == TAG_ERROR {
        let message = std::str::from_utf8(r.message().ok()??).ok()?;
        return Some(OutputEntry::Error { index, message });
    }
    let kind = RowKind::from_byte(r.take(1).ok()?[0])?;
    let key = r.message().ok()??;
    let row = r.message().ok()??;
    Some(OutputEntry::Change {
        index,
        kind,
        key,
        row,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdcjoin_model::golden;
    use cdcjoin_model::value::format_row;
    use cdcjoin_model::{DataType, Field, RowLayout, RowWriter, Schema, Value};

    fn schema() -> Schema {
        Schema::new(vec![
            Field::not_null("id", DataType::Int),
            Field::new("user_id", DataType::BigInt),
            Field::new("name", DataType::String),
        ])
    }

    fn config_json() -> String {
        r#"{"schema":{"fields":[{"name":"id","type":"INT","nullable":false},
            {"name":"user_id","type":"BIGINT"},{"name":"name","type":"STRING"}]},
            "join_key":["user_id"],"source":"domains"}"#
            .into()
    }

    fn frame(messages: &[Option<&str>]) -> Vec<u8> {
        let mut buf = Vec::new();
        for m in messages {
            write_message(&mut buf, m.map(str::as_bytes));
        }
        buf
    }

    /// Entries printed: `#i +I[..] key=[..]` or `#i error: ...`.
    fn show(d: &BatchDecoder) -> Vec<String> {
        let layout = d.decoder().layout();
        let key_layout = RowLayout::new(&schema().project(&[1]));
        output_entries(d.output())
            .map(|e| match e {
                OutputEntry::Change {
                    index,
                    kind,
                    key,
                    row,
                } => {
                    layout.validate(row).unwrap();
                    key_layout.validate(key).unwrap();
                    let r = format_row(kind, &Value::read_row(&RowRef::new(layout, row)));
                    let k = Value::read_row(&RowRef::new(&key_layout, key));
                    format!("#{index} {r} key={}", k[0])
                }
                OutputEntry::Error { index, message } => format!("#{index} error: {message}"),
            })
            .collect()
    }

    #[test]
    fn good_bad_and_tombstones_in_one_batch() {
        let mut d = BatchDecoder::from_json(config_json().as_bytes()).unwrap();
        let batch = frame(&[
            Some(r#"{"op":"c","after":{"id":1,"user_id":10,"name":"a.com"}}"#),
            Some(r#"{"op":"c","after":{"id":2,"#),
            None,
            Some(""),
            Some("null"),
            Some(
                r#"{"op":"u","before":{"id":1,"user_id":10,"name":"a.com"},"after":{"id":1,"user_id":11,"name":"a.com"}}"#,
            ),
            Some(r#"{"op":"t"}"#),
            Some(r#"{"op":"u","before":null,"after":{"id":1,"user_id":11}}"#),
            Some(r#"{"op":"d","before":{"id":1,"user_id":null,"name":"a.com"}}"#),
        ]);
        let s = d.decode_json(&batch, 100).unwrap();
        assert_eq!(
            s,
            BatchSummary {
                messages: 9,
                changes: 4,
                errors: 3,
                tombstones: 3
            }
        );
        assert_eq!(output_counts(d.output()), (4, 3, 3));
        let shown = show(&d);
        assert_eq!(shown[0], "#0 +I[1, 10, a.com] key=10");
        assert!(
            shown[1].starts_with("#1 error: domains record #101: malformed JSON"),
            "{}",
            shown[1]
        );
        assert_eq!(shown[2], "#5 -U[1, 10, a.com] key=10");
        assert_eq!(shown[3], "#5 +U[1, 11, a.com] key=11");
        assert!(shown[4].starts_with("#6 error: domains record #106: unknown \"op\" value"));
        assert!(shown[5].starts_with("#7 error: domains record #107: The \"before\" field"));
        assert_eq!(shown[6], "#8 -D[1, null, a.com] key=null");
        assert_eq!(shown.len(), 7);
    }

    /// Partitioned: each message stamped, changes in key group blocks carrying their message's
    /// stamp, errors first by message index, framing errors still refused.
    #[test]
    fn partitioned_output_groups_changes_by_key_group() {
        use cdcjoin_model::exchange::{write_stamp, BlockHeader, Changes, BLOCK_HEADER_LEN};
        use cdcjoin_model::key_group::key_group;
        let config = config_json().replace(r#""source""#, r#""max_parallelism":4,"source""#);
        let mut d = BatchDecoder::from_json(config.as_bytes()).unwrap();
        let messages = [
            Some(r#"{"op":"c","after":{"id":1,"user_id":10,"name":"a"}}"#),
            Some(r#"{"op":"c","after":{"id":2,"#),
            None,
            Some(r#"{"op":"u","before":{"id":1,"user_id":10},"after":{"id":1,"user_id":11}}"#),
            Some(r#"{"op":"c","after":{"id":3,"user_id":12}}"#),
            Some(r#"{"op":"d","before":{"id":3,"user_id":12}}"#),
        ];
        let mut batch = Vec::new();
        for (i, m) in messages.iter().enumerate() {
            write_stamp(&mut batch, (i != 4).then_some(100 + i as i64));
            batch.extend_from_slice(&frame(&[*m]));
        }
        let s = d.decode_json(&batch, 0).unwrap();
        assert_eq!((s.changes, s.errors, s.tombstones), (5, 1, 1));
        let (errors, blocks) = partitioned_output(d.output()).unwrap();
        let [OutputEntry::Error { index: 1, message }] = errors[..] else {
            panic!("one error entry, of message #1: {errors:?}");
        };
        assert!(message.starts_with("domains record #1: malformed JSON"));
        let layout = d.decoder().layout();
        let key = KeyProjection::new(&schema(), &[1]);
        let mut seen = Vec::new();
        let mut at = 0;
        while at < blocks.len() {
            let h = BlockHeader::read(&blocks[at..]).unwrap();
            let body = &blocks[at + BLOCK_HEADER_LEN..at + BLOCK_HEADER_LEN + h.len as usize];
            for c in Changes::new(body) {
                let c = c.unwrap();
                let mut k = Vec::new();
                key.write(&RowRef::new(layout, c.row), &mut k);
                assert_eq!(key_group(&k, 4), h.key_group);
                let user = Value::read_row(&RowRef::new(layout, c.row))[1].clone();
                seen.push((h.key_group, c.kind, user, c.timestamp));
            }
            at += BLOCK_HEADER_LEN + h.len as usize;
        }
        assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "{seen:?}");
        let mut by_message: Vec<_> = seen.iter().map(|s| (s.3, s.1, s.2.clone())).collect();
        by_message.sort_by_key(|s| (s.0.unwrap_or(104), s.1 as u8));
        let expected = [
            (Some(100), RowKind::Insert, Value::BigInt(10)),
            (Some(103), RowKind::UpdateBefore, Value::BigInt(10)),
            (Some(103), RowKind::UpdateAfter, Value::BigInt(11)),
            (None, RowKind::Insert, Value::BigInt(12)),
            (Some(105), RowKind::Delete, Value::BigInt(12)),
        ];
        assert_eq!(by_message, expected);
        batch.truncate(5);
        assert!(d.decode_json(&batch, 0).unwrap_err().contains("message #0"));
        let bad = config_json().replace(r#""source""#, r#""max_parallelism":0,"source""#);
        assert!(BatchDecoder::from_json(bad.as_bytes()).is_err());
    }

    /// An update whose new row still lacks a TOASTed value (its `before` lacked it too) keeps only
    /// its `+U` when its primary key and join key stay: the join replaces the stored row, filling
    /// the value from it. Otherwise both changes stay.
    #[test]
    fn an_unfillable_retraction_is_left_out_when_the_update_keeps_its_keys() {
        let p = "__debezium_unavailable_value";
        let update = |user_after: i64, name_before: &str| {
            format!(
                r#"{{"op":"u","before":{{"id":1,"user_id":5,"name":"{name_before}"}},
                "after":{{"id":1,"user_id":{user_after},"name":"{p}"}}}}"#
            )
        };
        let with_pk = config_json().replace(
            r#""source":"domains""#,
            r#""source":"domains","primary_key":["id"]"#,
        );
        let kinds = |config: &str, json: &str| {
            let mut d = BatchDecoder::from_json(config.as_bytes()).unwrap();
            d.decode_json(&frame(&[Some(json)]), 0).unwrap();
            show(&d)
                .iter()
                .map(|e| e.split(' ').nth(1).unwrap()[..2].to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(kinds(&with_pk, &update(5, p)), ["+U"]);
        // The join key changes: the old key's row must be retracted there.
        assert_eq!(kinds(&with_pk, &update(6, p)), ["-U", "+U"]);
        // No primary key: nothing to fill from, the join rejects the +U as before.
        assert_eq!(kinds(&config_json(), &update(5, p)), ["-U", "+U"]);
        // The before carries the value: the after is filled from it.
        assert_eq!(kinds(&with_pk, &update(5, "long")), ["-U", "+U"]);
        let delete_insert = with_pk.replace(
            r#""source":"domains""#,
            r#""source":"domains","update_mode":"DeleteInsert""#,
        );
        assert_eq!(kinds(&delete_insert, &update(5, p)), ["+I"]);
    }

    #[test]
    fn upsert_kafka_records_in_one_batch() {
        let config = config_json().replace(
            r#""source":"domains""#,
            r#""source":"domains","primary_key":["id"],"upsert":true"#,
        );
        let mut d = BatchDecoder::from_json(config.as_bytes()).unwrap();
        let mut batch = frame(&[
            Some(r#"{"id":1}"#),
            Some(r#"{"id":1,"user_id":10,"name":"a.com"}"#),
            Some(r#"{"id":1}"#),
            None,
            Some(r#"{"id":2}"#),
            Some(r#"{"id":2,"user_id":"x"}"#),
        ]);
        let s = d.decode_upsert(&batch, 0).unwrap();
        assert_eq!((s.messages, s.changes, s.errors), (3, 2, 1));
        let shown = show(&d);
        assert_eq!(shown[0], "#0 +I[1, 10, a.com] key=10");
        assert!(shown[1].starts_with("#1 -D[1, "), "{}", shown[1]);
        assert!(
            shown[2].starts_with("#2 error: domains record #2"),
            "{}",
            shown[2]
        );
        batch.truncate(batch.len() - 3);
        assert!(d
            .decode_upsert(&batch, 0)
            .unwrap_err()
            .contains("message #2"));
    }

    #[test]
    fn output_is_reset_per_batch_and_framing_errors_are_reported() {
        let mut d = BatchDecoder::from_json(config_json().as_bytes()).unwrap();
        d.decode_json(&frame(&[Some(r#"{"op":"r","after":{"id":3}}"#)]), 0)
            .unwrap();
        assert_eq!(show(&d), vec!["#0 +I[3, null, null] key=null"]);
        let s = d.decode_json(&[], 0).unwrap();
        assert_eq!(s, BatchSummary::default());
        assert_eq!(d.output().len(), HEADER_LEN);
        let mut bad = frame(&[Some("{}")]);
        bad.extend_from_slice(&[9, 0, 0, 0, b'x']);
        let e = d.decode_json(&bad, 0).unwrap_err();
        assert_eq!(e, "malformed batch at message #1: truncated");
        assert!(d.decode_json(&[1, 2], 0).is_err());
    }

    fn encode(id: i32, user: Option<i64>) -> Vec<u8> {
        let layout = RowLayout::new(&schema());
        let mut buf = Vec::new();
        let mut w = RowWriter::new(&layout, &mut buf);
        w.int(id);
        match user {
            Some(u) => w.long(u),
            None => w.null(),
        }
        w.bytes(b"x");
        w.finish();
        buf
    }

    fn envelope(buf: &mut Vec<u8>, op: u8, before: Option<&[u8]>, after: Option<&[u8]>) {
        buf.push(op);
        write_message(buf, before);
        write_message(buf, after);
    }

    #[test]
    fn row_envelopes_split_and_validate() {
        let mut d = BatchDecoder::from_json(config_json().as_bytes()).unwrap();
        let (a, b) = (encode(1, Some(5)), encode(1, Some(6)));
        let mut batch = Vec::new();
        envelope(&mut batch, b'c', None, Some(&a));
        envelope(&mut batch, b'u', Some(&a), Some(&b));
        envelope(&mut batch, b'u', None, Some(&b));
        envelope(&mut batch, b'd', Some(&b[..3]), None);
        envelope(&mut batch, b'd', Some(&b), None);
        let s = d.decode_rows(&batch, 0).unwrap();
        assert_eq!((s.messages, s.changes, s.errors), (5, 4, 2));
        let shown = show(&d);
        assert_eq!(shown[0], "#0 +I[1, 5, x] key=5");
        assert_eq!(shown[1], "#1 -U[1, 5, x] key=5");
        assert_eq!(shown[2], "#1 +U[1, 6, x] key=6");
        assert!(shown[3].starts_with("#2 error: domains record #2: The \"before\""));
        assert!(shown[4].contains("not a valid encoded row"), "{}", shown[4]);
        assert_eq!(shown[5], "#4 -D[1, 6, x] key=6");
        assert!(d.decode_rows(&[b'c', 1, 0], 0).is_err());
    }

    #[test]
    fn bad_configurations_are_refused() {
        let e = BatchDecoder::from_json(b"{").unwrap_err();
        assert!(e.starts_with("invalid decoder configuration"), "{e}");
        let no_key = config_json().replace(r#"["user_id"]"#, "[]");
        assert!(BatchDecoder::from_json(no_key.as_bytes()).is_err());
        let unknown = config_json().replace(r#"["user_id"]"#, r#"["nope"]"#);
        let e = BatchDecoder::from_json(unknown.as_bytes()).unwrap_err();
        assert!(e.contains("nope"), "{e}");
        let mode = config_json().replace(r#""source""#, r#""update_mode":"DeleteInsert","source""#);
        BatchDecoder::from_json(mode.as_bytes()).unwrap();
        // Every decoder setting passes through the flattened configuration.
        let all = config_json().replace(
            r#""source""#,
            r#""decimal_handling":"string","time_precision":"adaptive","binary_handling":"hex",
            "source_precision":{},"unavailable_placeholder":"?","primary_key":["id"],
            "upsert":true,"source""#,
        );
        let d = BatchDecoder::from_json(all.as_bytes()).unwrap();
        let config = d.decoder().config();
        assert!(config.upsert && config.unavailable_placeholder == "?");
        assert_eq!(config.time_precision, Some(crate::TimePrecision::Adaptive));
        let upsert_without_key = all.replace(r#""primary_key":["id"],"#, "");
        let e = BatchDecoder::from_json(upsert_without_key.as_bytes()).unwrap_err();
        assert!(e.starts_with("upsert mode needs a primary key"), "{e}");
        let bad_precision =
            all.replace(r#""source_precision":{}"#, r#""source_precision":{"id":3}"#);
        let e = BatchDecoder::from_json(bad_precision.as_bytes()).unwrap_err();
        assert_eq!(e, "source precision given for column \"id\" of type INT");
    }

    /// The decoder's outputs (golden files `decode_output.bin`, one entry per change, and
    /// `decode_output_partitioned.bin`, key group blocks for max parallelism 128, which the Java
    /// reader `DecoderOutput` is held to): a create, a malformed message and a tombstone.
    #[test]
    fn output_layouts() {
        use cdcjoin_model::exchange::write_stamp;
        let messages = [
            Some(r#"{"op":"c","after":{"id":1,"user_id":10,"name":"a.com"}}"#),
            Some("{"),
            None,
        ];
        let mut d = BatchDecoder::from_json(config_json().as_bytes()).unwrap();
        d.decode_json(&frame(&messages), 7).unwrap();
        golden::check("decode_output.bin", d.output());
        let config = config_json().replace(r#""source""#, r#""max_parallelism":128,"source""#);
        let mut d = BatchDecoder::from_json(config.as_bytes()).unwrap();
        let mut batch = Vec::new();
        for (i, m) in messages.iter().enumerate() {
            write_stamp(&mut batch, Some(100 + i as i64));
            batch.extend_from_slice(&frame(&[*m]));
        }
        d.decode_json(&batch, 7).unwrap();
        golden::check("decode_output_partitioned.bin", d.output());
        assert_eq!(output_counts(d.output()), (1, 1, 1));
    }

    /// The decoder's input framings (golden files `decode_json.bin`, `decode_rows.bin`,
    /// `decode_upsert.bin`, which the Java `InputEncoder`s are held to): Rust has no encoder of
    /// them, so the bytes are framed here and the files decoded back.
    #[test]
    fn input_framings_layout() {
        let json = r#"{"op":"c","after":{"id":1,"user_id":10,"name":"a.com"}}"#;
        golden::check("decode_json.bin", &frame(&[Some(json), None]));
        let mut rows = Vec::new();
        envelope(&mut rows, b'c', None, Some(&encode(1, Some(5))));
        golden::check("decode_rows.bin", &rows);
        let upsert = frame(&[
            Some(r#"{"id":1}"#),
            Some(r#"{"id":1,"user_id":10,"name":"a.com"}"#),
            Some(r#"{"id":2}"#),
            None,
        ]);
        golden::check("decode_upsert.bin", &upsert);

        let mut d = BatchDecoder::from_json(config_json().as_bytes()).unwrap();
        let s = d.decode_json(&golden::read("decode_json.bin"), 0).unwrap();
        assert_eq!((s.messages, s.changes, s.tombstones), (2, 1, 1));
        assert_eq!(show(&d), vec!["#0 +I[1, 10, a.com] key=10"]);
        d.decode_rows(&golden::read("decode_rows.bin"), 0).unwrap();
        assert_eq!(show(&d), vec!["#0 +I[1, 5, x] key=5"]);
        let config = config_json().replace(
            r#""source":"domains""#,
            r#""source":"domains","primary_key":["id"],"upsert":true"#,
        );
        let mut d = BatchDecoder::from_json(config.as_bytes()).unwrap();
        let s = d
            .decode_upsert(&golden::read("decode_upsert.bin"), 0)
            .unwrap();
        assert_eq!((s.messages, s.changes), (2, 2));
        let shown = show(&d);
        assert_eq!(shown[0], "#0 +I[1, 10, a.com] key=10");
        assert!(shown[1].starts_with("#1 -D[2, "), "{}", shown[1]);
    }
}
