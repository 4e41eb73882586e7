//! Wire formats of a batch, so that a caller crosses into native code once per batch.
//!
//! ```text
//! input record := side u8 (0 left, 1 right) | kind u8 (Flink RowKind byte) | key_group u16
//!                 | row_len u32 | row bytes                                  (little-endian)
//! output entry := input u32 | kind u8 | body
//!   kind 0..=3 (a RowKind byte, a joined row):
//!          body := left_len u32 | left bytes | right_len u32 | right bytes
//!   kind REJECTED (0xFF, the input record is refused, see below):
//!          body := msg_len u32 | message bytes (UTF-8)
//! ```
//! In output entries `input` is the index in the batch of the input record that caused the entry
//! (so the caller can give a row that record's timestamp, as Flink's own join does, or route a
//! rejection to the bad-record policy). In a joined row a length of [`NULL_SIDE`] stands for a
//! null side (null padding of outer joins); each side's bytes are a row in the compact encoding of
//! that side's schema.
//!
//! A *rejection* ([`REJECTED`]) says the input record was not applied and nothing else was emitted
//! for it, with a message naming the side, the row (printed as Flink prints rows, an unavailable
//! column as `<unavailable>`), the columns and the reason: a change the join cannot complete (see
//! the engine's rules on unavailable columns). It does not fail the batch: the records after it are
//! applied, and the caller decides, per its bad-record policy, whether to fail the job or to route
//! the record aside.

use crate::spec::Side;
use cdcjoin_model::RowKind;

/// Length marking a null side in an output row.
pub const NULL_SIDE: u32 = u32::MAX;

/// Kind byte of an output entry that rejects its input record (see the module docs).
pub const REJECTED: u8 = 0xFF;

/// One input record, borrowed from a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputRecord<'a> {
    /// Which input.
    pub side: Side,
    /// Its change kind.
    pub kind: RowKind,
    /// Flink key group of its join key.
    pub key_group: u16,
    /// The row, in the side's compact encoding.
    pub row: &'a [u8],
}

/// Appends one input record to a batch.
pub fn write_input(out: &mut Vec<u8>, rec: &InputRecord<'_>) {
    out.push(rec.side as u8);
    out.push(rec.kind as u8);
    out.extend_from_slice(&rec.key_group.to_le_bytes());
    out.extend_from_slice(&(rec.row.len() as u32).to_le_bytes());
    out.extend_from_slice(rec.row);
}

/// Reads input records from a batch, refusing malformed framing with the record's index.
pub struct BatchReader<'a> {
    buf: &'a [u8],
    at: usize,
    index: usize,
}

impl<'a> BatchReader<'a> {
    /// A reader over `buf`.
    pub fn new(buf: &'a [u8]) -> BatchReader<'a> {
        BatchReader {
            buf,
            at: 0,
            index: 0,
        }
    }

    fn read(&mut self) -> Result<InputRecord<'a>, String> {
        let head = self
            .buf
            .get(self.at..self.at + 8)
            .ok_or("truncated record header")?;
        let side = Side::from_byte(head[0]).ok_or_else(|| format!("bad side byte {}", head[0]))?;
        let kind =
            RowKind::from_byte(head[1]).ok_or_else(|| format!("bad row kind byte {}", head[1]))?;
        let key_group = u16::from_le_bytes([head[2], head[3]]);
        let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
        let start = self.at + 8;
        let row = self
            .buf
            .get(start..start.saturating_add(len))
            .ok_or("truncated row")?;
        self.at = start + len;
        Ok(InputRecord {
            side,
            kind,
            key_group,
            row,
        })
    }
}

impl<'a> Iterator for BatchReader<'a> {
    /// A record, or the reason the batch is malformed at this record's index.
    type Item = Result<(usize, InputRecord<'a>), String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.buf.len() {
            return None;
        }
        let index = self.index;
        self.index += 1;
        Some(match self.read() {
            Ok(r) => Ok((index, r)),
            Err(e) => {
                self.at = self.buf.len();
                Err(format!("batch record #{index}: {e}"))
            }
        })
    }
}

/// Appends output entries (joined rows and rejections) to a caller-owned buffer.
pub struct OutputWriter<'a> {
    buf: &'a mut Vec<u8>,
    rows: usize,
    input: u32,
}

impl<'a> OutputWriter<'a> {
    /// A writer appending to `buf`.
    pub fn new(buf: &'a mut Vec<u8>) -> OutputWriter<'a> {
        OutputWriter {
            buf,
            rows: 0,
            input: 0,
        }
    }

    /// Names the input record (its index in the batch) that the next rows are caused by.
    pub fn set_input(&mut self, index: usize) {
        self.input = index as u32;
    }

    /// Rows written so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Appends `len u32 | bytes`.
    fn bytes(&mut self, bytes: &[u8]) {
        self.buf
            .extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        self.buf.extend_from_slice(bytes);
    }

    fn side(&mut self, row: Option<&[u8]>) {
        match row {
            Some(r) => self.bytes(r),
            None => self.buf.extend_from_slice(&NULL_SIDE.to_le_bytes()),
        }
    }

    /// Appends the head of an entry of the current input record.
    fn head(&mut self, kind: u8) {
        self.buf.extend_from_slice(&self.input.to_le_bytes());
        self.buf.push(kind);
    }

    /// Emits `kind[left, right]`, a `None` side being null padding.
    pub fn emit(&mut self, kind: RowKind, left: Option<&[u8]>, right: Option<&[u8]>) {
        self.head(kind as u8);
        self.side(left);
        self.side(right);
        self.rows += 1;
    }

    /// Rejects the current input record with `message` (not counted in [`OutputWriter::rows`]).
    pub fn reject(&mut self, message: &str) {
        self.head(REJECTED);
        self.bytes(message.as_bytes());
    }
}

/// One joined row, borrowed from an output buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputRow<'a> {
    /// Index in the batch of the input record that caused the row.
    pub input: u32,
    /// Change kind.
    pub kind: RowKind,
    /// Left row, `None` when null-padded.
    pub left: Option<&'a [u8]>,
    /// Right row, `None` when null-padded.
    pub right: Option<&'a [u8]>,
}

/// One entry of an output buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputEntry<'a> {
    /// A joined row.
    Row(OutputRow<'a>),
    /// The input record `input` was refused, for the reason `message`.
    Rejected {
        /// Index in the batch of the refused input record.
        input: u32,
        /// Why, naming the side, the row and the columns.
        message: &'a str,
    },
}

/// Iterates the entries of an output buffer written by [`OutputWriter`].
pub struct OutputEntries<'a> {
    buf: &'a [u8],
}

impl<'a> OutputEntries<'a> {
    /// Entries of `buf`.
    pub fn new(buf: &'a [u8]) -> OutputEntries<'a> {
        OutputEntries { buf }
    }

    fn u32(&mut self) -> u32 {
        let (n, rest) = self.buf.split_at(4);
        self.buf = rest;
        u32::from_le_bytes(n.try_into().expect("4 bytes"))
    }

    fn bytes(&mut self, len: u32) -> &'a [u8] {
        let (bytes, rest) = self.buf.split_at(len as usize);
        self.buf = rest;
        bytes
    }

    fn side(&mut self) -> Option<&'a [u8]> {
        let len = self.u32();
        (len != NULL_SIDE).then(|| self.bytes(len))
    }
}

impl<'a> Iterator for OutputEntries<'a> {
    type Item = OutputEntry<'a>;

    fn next(&mut self) -> Option<OutputEntry<'a>> {
        if self.buf.is_empty() {
            return None;
        }
        let input = self.u32();
        let (&kind, rest) = self.buf.split_first()?;
        self.buf = rest;
        if kind == REJECTED {
            let len = self.u32();
            let message = std::str::from_utf8(self.bytes(len)).expect("written from a str");
            return Some(OutputEntry::Rejected { input, message });
        }
        let kind = RowKind::from_byte(kind).expect("written by OutputWriter");
        let left = self.side();
        let right = self.side();
        Some(OutputEntry::Row(OutputRow {
            input,
            kind,
            left,
            right,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_round_trip_and_errors() {
        let mut buf = Vec::new();
        let a = InputRecord {
            side: Side::Right,
            kind: RowKind::UpdateBefore,
            key_group: 300,
            row: b"abc",
        };
        write_input(&mut buf, &a);
        write_input(&mut buf, &InputRecord { row: b"", ..a });
        let recs: Vec<_> = BatchReader::new(&buf).collect::<Result<_, _>>().unwrap();
        assert_eq!(recs, vec![(0, a), (1, InputRecord { row: b"", ..a })]);
        let truncated = &buf[..buf.len() - 9];
        let err = BatchReader::new(truncated).find_map(Result::err).unwrap();
        assert!(err.contains("#0") && err.contains("truncated row"), "{err}");
        let mut bad = buf.clone();
        bad[0] = 7;
        assert!(BatchReader::new(&bad)
            .next()
            .unwrap()
            .unwrap_err()
            .contains("bad side"));
    }

    #[test]
    fn output_round_trip() {
        let mut buf = Vec::new();
        let mut w = OutputWriter::new(&mut buf);
        w.emit(RowKind::Insert, Some(b"l"), None);
        w.set_input(3);
        w.reject("left row +I[<unavailable>]: why");
        w.emit(RowKind::Delete, None, Some(b"rr"));
        assert_eq!(w.rows(), 2, "a rejection is not a row");
        let entries: Vec<_> = OutputEntries::new(&buf).collect();
        assert_eq!(
            entries,
            vec![
                OutputEntry::Row(OutputRow {
                    input: 0,
                    kind: RowKind::Insert,
                    left: Some(b"l"),
                    right: None
                }),
                OutputEntry::Rejected {
                    input: 3,
                    message: "left row +I[<unavailable>]: why"
                },
                OutputEntry::Row(OutputRow {
                    input: 3,
                    kind: RowKind::Delete,
                    left: None,
                    right: Some(b"rr")
                }),
            ]
        );
    }

    /// The bytes of a rejection, as the Java layer reads them.
    #[test]
    fn rejection_layout() {
        let mut buf = Vec::new();
        let mut w = OutputWriter::new(&mut buf);
        w.set_input(2);
        w.reject("é");
        assert_eq!(buf, [2, 0, 0, 0, 0xFF, 2, 0, 0, 0, 0xC3, 0xA9]);
    }
}
