//! Wire formats of a batch, so that a caller crosses into native code once per batch.
//!
//! ```text
//! batch        := input block*
//! input block  := side u8 (0 left, 1 right) | block                          (little-endian)
//!                 (a multi-way join's batch, crate::multiway: input index u8 | block)
//!   block      := key_group u16 | count u32 | len u32 | change{count}   (cdcjoin_model::exchange)
//!   change     := kind u8 | stamp | row_len u32 | row bytes
//!   stamp      := flag u8 (STAMP_NONE, STAMP_PRESENT) | timestamp i64
//! output entry := stamp | kind u8 | body
//!   kind 0..=3 (a RowKind byte, a joined row):
//!          body := left_len u32 | left bytes | right_len u32 | right bytes
//!          (a multi-way join's row, crate::multiway: one len u32 | bytes per input)
//!   kind REJECTED (0xFF, the input change is refused, see below):
//!          body := side u8 | msg_len u32 | message bytes (UTF-8)
//! ```
//! An input block is one key group's changes of one side, as the decoder partitions them
//! ([`cdcjoin_model::exchange`]): the Java layer appends each block it receives behind its side
//! byte in one copy. Changes are applied in batch order; an error names a change by its index in
//! the batch, counting changes across blocks. The Java mirror of these formats is
//! `dev.cdcjoin.flink.runtime.JoinBatches`; `tests/wire/join_*.bin` pin their bytes for the tests
//! of both sides.
//!
//! In output entries the stamp is that of the input change that caused the entry (so the caller
//! gives a row that record's timestamp, as Flink's own join does, without mapping indices to
//! timestamps). In a joined row a length of [`NULL_SIDE`] stands for a null side (null padding of
//! outer joins); each side's bytes are a row in the compact encoding of that side's schema.
//!
//! A *rejection* ([`REJECTED`]) says the input change was not applied and nothing else was emitted
//! for it, with its side and a message naming the side, the row (printed as Flink prints rows, an
//! unavailable column as `<unavailable>`), the columns and the reason: a change the join cannot
//! complete (see the engine's rules on unavailable columns). It does not fail the batch: the
//! changes after it are applied, and the caller decides, per its bad-record policy, whether to fail
//! the job or to route the record aside.

use crate::spec::Side;
use cdcjoin_model::exchange::{
    read_stamp, write_change, write_stamp, BlockHeader, Changes, BLOCK_HEADER_LEN, STAMP_LEN,
};
use cdcjoin_model::{RowKind, Schema};

/// Length marking a null side in an output row.
pub const NULL_SIDE: u32 = u32::MAX;

/// Kind byte of an output entry that rejects its input change (see the module docs).
pub const REJECTED: u8 = 0xFF;

/// The byte in front of an input block: which input its changes are of. A [`Side`] for the
/// two-table join; for a multi-way join ([`crate::multiway`]) the input's index, a `u8`, so that
/// its batches are the two-table join's frames with more inputs (inputs 0 and 1 write the bytes
/// of the left and the right side).
pub trait InputTag: Copy {
    /// The input a wire byte names, if it names one.
    fn from_byte(b: u8) -> Option<Self>;
    /// The wire byte.
    fn byte(self) -> u8;
}

impl InputTag for Side {
    fn from_byte(b: u8) -> Option<Side> {
        Side::from_byte(b)
    }
    fn byte(self) -> u8 {
        self as u8
    }
}

/// A multi-way join's input index, below [`crate::multiway::MAX_INPUTS`] (the join checks it
/// against its own number of inputs).
impl InputTag for u8 {
    fn from_byte(b: u8) -> Option<u8> {
        ((b as usize) < crate::multiway::MAX_INPUTS).then_some(b)
    }
    fn byte(self) -> u8 {
        self
    }
}

/// One input change, borrowed from a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputRecord<'a, S = Side> {
    /// Which input.
    pub side: S,
    /// Its change kind.
    pub kind: RowKind,
    /// Flink key group of its join key.
    pub key_group: u16,
    /// The Flink timestamp of the record it came from, if that had one.
    pub timestamp: Option<i64>,
    /// The row, in the side's compact encoding.
    pub row: &'a [u8],
}

/// Appends one input change to a batch, as a block of one.
pub fn write_input<S: InputTag>(out: &mut Vec<u8>, rec: &InputRecord<'_, S>) {
    let mut change = Vec::new();
    write_change(&mut change, rec.kind, rec.timestamp, rec.row);
    out.push(rec.side.byte());
    BlockHeader {
        key_group: rec.key_group,
        count: 1,
        len: change.len() as u32,
    }
    .write(out);
    out.extend_from_slice(&change);
}

/// Why a join refuses a batch while changes of the previous one wait ([`OutputBound`]).
pub const PENDING: &str =
    "a batch came while the previous batch's changes are not all applied (resume them first)";

/// The changes of a batch a join has not applied yet, because its output reached its bound
/// ([`OutputBound`]): the caller takes that output and asks for the rest.
#[derive(Debug)]
pub struct Pending {
    /// The changes, framed as a batch (see the module docs) whose first block's header is that of
    /// the block they came from but for its length: read them with [`BatchReader::from_start`] at
    /// `start`.
    pub bytes: Vec<u8>,
    /// Where they begin in the batch they came from.
    pub start: BatchStart,
}

/// Where the rest of a batch ([`Pending`]) begins in the batch it came from, so that it is read,
/// and refused when malformed, exactly as the whole batch would have been from there on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchStart {
    /// The index of its first change, which errors name.
    pub index: usize,
    /// The changes of its first block read before it, which that block's header counts.
    pub in_block: u32,
}

/// What a call stopped at its output bound left to the next ([`OutputBound::take`]).
#[derive(Debug)]
pub struct Left<M> {
    /// The changes not applied, the first of them applied in part when `midway` says so.
    pub changes: Pending,
    /// The processing time of the batch, which its later changes are applied at too.
    pub now: i64,
    /// How far the first change got when its own output reached the bound (a key joined with
    /// many rows), in the join's terms: it goes on from there, not from its start.
    pub midway: Option<M>,
}

/// How much output one call of a join may write before it stops, keeping what is left
/// ([`Left`]) for the next call: a key joined with many rows makes each of its changes emit that
/// many rows, so a batch of such changes, or one change on a key joined with millions of rows,
/// would otherwise be joined into one output as large as all of it, held at once in native memory
/// and in the caller's buffers. A call stops after the change, or within a change after the
/// joined row, at which its output reaches the bound; `M` is how a join says where within a
/// change it stopped.
#[derive(Debug)]
pub struct OutputBound<M> {
    bytes: usize,
    left: Option<Left<M>>,
}

/// The output bound of a join created by the JNI layer ([`OutputBound`]): 32 MiB.
pub const DEFAULT_OUTPUT_BOUND: usize = 32 << 20;

impl<M> OutputBound<M> {
    /// At most about `bytes` of output per call (a call always writes at least one row, or
    /// applies at least one change).
    pub fn new(bytes: usize) -> OutputBound<M> {
        OutputBound { bytes, left: None }
    }

    /// No bound: every call applies its whole batch.
    pub fn unbounded() -> OutputBound<M> {
        OutputBound::new(usize::MAX)
    }

    /// A writer appending a call's output to `buf`, full ([`OutputWriter::is_full`]) once it has
    /// written the bound's bytes.
    pub fn writer<'a>(&self, buf: &'a mut Vec<u8>) -> OutputWriter<'a> {
        let limit = buf.len().saturating_add(self.bytes);
        OutputWriter {
            limit,
            ..OutputWriter::new(buf)
        }
    }

    /// Keeps what a stopped call left.
    pub fn keep(&mut self, left: Left<M>) {
        self.left = Some(left);
    }

    /// Takes what a stopped call left, if anything.
    pub fn take(&mut self) -> Option<Left<M>> {
        self.left.take()
    }

    /// Whether changes wait to be applied.
    pub fn is_pending(&self) -> bool {
        self.left.is_some()
    }
}

/// Reads the input changes of a batch, refusing malformed framing with the change's index. A
/// clone reads on from where the reader is (a place to come back to).
#[derive(Clone)]
pub struct BatchReader<'a, S = Side> {
    /// The blocks not read yet.
    rest: &'a [u8],
    /// The block being read: its side, header and changes.
    block: Option<(S, BlockHeader, Changes<'a>)>,
    /// Changes of the current block read so far.
    in_block: u32,
    /// Changes of the first block read before the reader's start ([`BatchStart::in_block`]).
    carried: u32,
    index: usize,
}

impl<'a, S: InputTag> BatchReader<'a, S> {
    /// A reader over `buf`.
    pub fn new(buf: &'a [u8]) -> BatchReader<'a, S> {
        BatchReader::from_start(buf, BatchStart::default())
    }

    /// A reader over `buf`, the rest of a batch ([`Pending`]) that begins at `start` in it: its
    /// changes keep their indices in the whole batch, and its first block is counted from the
    /// changes read before.
    pub fn from_start(buf: &'a [u8], start: BatchStart) -> BatchReader<'a, S> {
        BatchReader {
            rest: buf,
            block: None,
            in_block: 0,
            carried: start.in_block,
            index: start.index,
        }
    }

    /// The changes not read yet, as the rest of the batch: what is left of the current block
    /// under its own header, then the following blocks as they are (unread, so a malformed one is
    /// still refused when it is read), numbered on from the last change read.
    pub fn remainder(&self) -> Pending {
        let mut bytes = Vec::new();
        let mut in_block = 0;
        if let Some((side, header, changes)) = &self.block {
            // Bytes past the header's count are kept too: read, they refuse the block.
            if self.in_block < header.count || !changes.rest().is_empty() {
                bytes.push(side.byte());
                BlockHeader {
                    len: changes.rest().len() as u32,
                    ..*header
                }
                .write(&mut bytes);
                bytes.extend_from_slice(changes.rest());
                in_block = self.in_block;
            }
        }
        bytes.extend_from_slice(self.rest);
        Pending {
            bytes,
            start: BatchStart {
                index: self.index,
                in_block,
            },
        }
    }

    /// Opens the next block.
    fn open(&mut self) -> Result<(), String> {
        let (&side, after) = self.rest.split_first().expect("not empty");
        let side = S::from_byte(side).ok_or_else(|| format!("bad side byte {side}"))?;
        let header = BlockHeader::read(after)?;
        let end = BLOCK_HEADER_LEN + header.len as usize;
        let body = after.get(BLOCK_HEADER_LEN..end).ok_or("truncated block")?;
        if header.count == 0 {
            return Err("empty block".into());
        }
        self.rest = &after[end..];
        self.block = Some((side, header, Changes::new(body)));
        self.in_block = std::mem::take(&mut self.carried);
        Ok(())
    }

    fn read(&mut self) -> Result<Option<InputRecord<'a, S>>, String> {
        if self.block.is_none() {
            if self.rest.is_empty() {
                return Ok(None);
            }
            self.open()?;
        }
        let (side, header, changes) = self.block.as_mut().expect("opened");
        let (side, header) = (*side, *header);
        match changes.next() {
            Some(change) => {
                let change = change?;
                self.in_block += 1;
                if self.in_block > header.count {
                    return Err(format!("block holds more than its count {}", header.count));
                }
                Ok(Some(InputRecord {
                    side,
                    kind: change.kind,
                    key_group: header.key_group,
                    timestamp: change.timestamp,
                    row: change.row,
                }))
            }
            None if self.in_block < header.count => Err(format!(
                "block holds {} changes, its count says {}",
                self.in_block, header.count
            )),
            None => {
                self.block = None;
                self.read()
            }
        }
    }
}

impl<'a, S: InputTag> Iterator for BatchReader<'a, S> {
    /// A change, or the reason the batch is malformed at this change's index.
    type Item = Result<(usize, InputRecord<'a, S>), String>;

    fn next(&mut self) -> Option<Self::Item> {
        let index = self.index;
        match self.read() {
            Ok(None) => None,
            Ok(Some(r)) => {
                self.index += 1;
                Some(Ok((index, r)))
            }
            Err(e) => {
                self.rest = &[];
                self.block = None;
                Some(Err(format!("batch record #{index}: {e}")))
            }
        }
    }
}

/// Appends output entries (joined rows and rejections) to a caller-owned buffer.
pub struct OutputWriter<'a> {
    buf: &'a mut Vec<u8>,
    /// The buffer's length at which the output is full ([`OutputBound::writer`]).
    limit: usize,
    rows: usize,
    /// The input byte of the current change ([`InputTag::byte`]).
    side: u8,
    timestamp: Option<i64>,
}

impl<'a> OutputWriter<'a> {
    /// A writer appending to `buf`.
    pub fn new(buf: &'a mut Vec<u8>) -> OutputWriter<'a> {
        OutputWriter {
            buf,
            limit: usize::MAX,
            rows: 0,
            side: Side::Left as u8,
            timestamp: None,
        }
    }

    /// Names the input change that the next entries are caused by: they carry its timestamp, a
    /// rejection its side.
    pub fn set_input<S: InputTag>(&mut self, rec: &InputRecord<'_, S>) {
        self.side = rec.side.byte();
        self.timestamp = rec.timestamp;
    }

    /// Rows written so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Whether the output has reached its bound ([`OutputBound::writer`]; never for a writer
    /// made by [`OutputWriter::new`]).
    #[inline(always)]
    pub fn is_full(&self) -> bool {
        self.buf.len() >= self.limit
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

    /// Appends the head of an entry of the current input change.
    fn head(&mut self, kind: u8) {
        write_stamp(self.buf, self.timestamp);
        self.buf.push(kind);
    }

    /// Emits `kind[left, right]`, a `None` side being null padding.
    pub fn emit(&mut self, kind: RowKind, left: Option<&[u8]>, right: Option<&[u8]>) {
        self.emit_wide(kind, &[left, right]);
    }

    /// Emits `kind[rows...]`, one row per input of a multi-way join ([`crate::multiway`]), a
    /// `None` being null padding: the joined row's format with as many sides as inputs.
    #[inline(always)]
    pub fn emit_wide(&mut self, kind: RowKind, rows: &[Option<&[u8]>]) {
        self.head(kind as u8);
        for &row in rows {
            self.side(row);
        }
        self.rows += 1;
    }

    /// Rejects the current input change with `message` (not counted in [`OutputWriter::rows`]).
    pub fn reject(&mut self, message: &str) {
        self.reject_input(self.side as usize, message);
    }

    /// Rejects a change of input `input` of a multi-way join ([`crate::multiway`]) with
    /// `message`: the two-table join's rejection, the input's index in place of the side byte
    /// (inputs 0 and 1 write the bytes of the left and the right side).
    pub fn reject_input(&mut self, input: usize, message: &str) {
        write_rejection(self.buf, self.timestamp, input as u8, message);
    }
}

/// The input and the column there of each output column of `projection`, whose indexes count
/// the columns of the joined rows' `inputs` in input order (a two-table join's left then right
/// columns); or which output column is not a column of the join.
pub fn output_columns(
    inputs: &[&Schema],
    projection: &[usize],
) -> Result<Vec<(usize, usize)>, String> {
    let starts: Vec<usize> = inputs
        .iter()
        .scan(0, |at, s| {
            let start = *at;
            *at += s.len();
            Some(start)
        })
        .collect();
    projection
        .iter()
        .map(|&c| {
            let input = starts
                .iter()
                .rposition(|&start| start <= c)
                .expect("0 <= c");
            match c - starts[input] {
                at if at < inputs[input].len() => Ok((input, at)),
                _ => Err(format!("output column {c} is not a column of the join")),
            }
        })
        .collect()
}

/// Appends a rejection entry: the change of input `input` (a [`Side`] as its byte, or a
/// multi-way join's input index) stamped `timestamp` was refused for `message`.
pub fn write_rejection(out: &mut Vec<u8>, timestamp: Option<i64>, input: u8, message: &str) {
    write_stamp(out, timestamp);
    out.push(REJECTED);
    out.push(input);
    out.extend_from_slice(&(message.len() as u32).to_le_bytes());
    out.extend_from_slice(message.as_bytes());
}

/// One joined row, borrowed from an output buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputRow<'a> {
    /// Timestamp of the input change that caused the row, if it had one.
    pub timestamp: Option<i64>,
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
    /// An input change was refused, for the reason `message`.
    Rejected {
        /// Timestamp of the refused change, if it had one.
        timestamp: Option<i64>,
        /// Its side.
        side: Side,
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

    /// Reads the body of a rejection: its input byte and message.
    fn rejection(&mut self) -> Option<(u8, &'a str)> {
        let (&input, rest) = self.buf.split_first()?;
        self.buf = rest;
        let len = self.u32();
        let message = std::str::from_utf8(self.bytes(len)).expect("written from a str");
        Some((input, message))
    }

    /// Reads the stamp and kind byte of the next entry, if there is one.
    fn head(&mut self) -> Option<(Option<i64>, u8)> {
        if self.buf.is_empty() {
            return None;
        }
        let timestamp = read_stamp(self.buf).expect("written by OutputWriter");
        let (&kind, rest) = self.buf[STAMP_LEN..].split_first()?;
        self.buf = rest;
        Some((timestamp, kind))
    }
}

/// One joined row of a multi-way join's output ([`OutputWriter::emit_wide`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WideRow<'a> {
    /// Timestamp of the input change that caused the row, if it had one.
    pub timestamp: Option<i64>,
    /// Change kind.
    pub kind: RowKind,
    /// One row per input (the first `arity`), `None` when null-padded: an array rather than a
    /// `Vec`, so that reading a row allocates nothing (a chained join reads every output row).
    inputs: [Option<&'a [u8]>; crate::multiway::MAX_INPUTS],
    arity: usize,
}

impl<'a> WideRow<'a> {
    /// A row of `kind` stamped `timestamp` with one row (or `None`, null padding) per input.
    ///
    /// # Panics
    /// If `rows` holds more than [`crate::multiway::MAX_INPUTS`] inputs.
    pub fn new(timestamp: Option<i64>, kind: RowKind, rows: &[Option<&'a [u8]>]) -> WideRow<'a> {
        let mut inputs = [None; crate::multiway::MAX_INPUTS];
        inputs[..rows.len()].copy_from_slice(rows);
        WideRow {
            timestamp,
            kind,
            inputs,
            arity: rows.len(),
        }
    }

    /// One row per input, `None` when null-padded.
    pub fn rows(&self) -> &[Option<&'a [u8]>] {
        &self.inputs[..self.arity]
    }
}

/// One entry of a multi-way join's output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WideEntry<'a> {
    /// A joined row.
    Row(WideRow<'a>),
    /// A change of input `input` was refused, for the reason `message`
    /// ([`OutputWriter::reject_input`]).
    Rejected {
        /// Timestamp of the refused change, if it had one.
        timestamp: Option<i64>,
        /// Its input.
        input: usize,
        /// Why, naming the input, the row and the columns.
        message: &'a str,
    },
}

/// Iterates the entries of an output buffer written by [`OutputWriter::emit_wide`] with `arity`
/// rows each and [`OutputWriter::reject_input`] (a multi-way join's output).
pub struct WideEntries<'a> {
    entries: OutputEntries<'a>,
    arity: usize,
}

impl<'a> WideEntries<'a> {
    /// Entries of `arity` inputs in `buf`.
    pub fn new(buf: &'a [u8], arity: usize) -> WideEntries<'a> {
        WideEntries {
            entries: OutputEntries::new(buf),
            arity,
        }
    }

    /// The bytes of `buf` not read yet (where an entry ends, when read after it).
    pub fn unread(&self) -> usize {
        self.entries.buf.len()
    }
}

impl<'a> Iterator for WideEntries<'a> {
    type Item = WideEntry<'a>;

    fn next(&mut self) -> Option<WideEntry<'a>> {
        let (timestamp, kind) = self.entries.head()?;
        if kind == REJECTED {
            let (input, message) = self.entries.rejection()?;
            return Some(WideEntry::Rejected {
                timestamp,
                input: input as usize,
                message,
            });
        }
        let kind = RowKind::from_byte(kind).expect("a joined row, written by emit_wide");
        let mut inputs = [None; crate::multiway::MAX_INPUTS];
        for row in &mut inputs[..self.arity] {
            *row = self.entries.side();
        }
        Some(WideEntry::Row(WideRow {
            timestamp,
            kind,
            inputs,
            arity: self.arity,
        }))
    }
}

impl<'a> Iterator for OutputEntries<'a> {
    type Item = OutputEntry<'a>;

    fn next(&mut self) -> Option<OutputEntry<'a>> {
        let (timestamp, kind) = self.head()?;
        if kind == REJECTED {
            let (side, message) = self.rejection()?;
            let side = Side::from_byte(side).expect("written by OutputWriter");
            return Some(OutputEntry::Rejected {
                timestamp,
                side,
                message,
            });
        }
        let kind = RowKind::from_byte(kind).expect("written by OutputWriter");
        let left = self.side();
        let right = self.side();
        Some(OutputEntry::Row(OutputRow {
            timestamp,
            kind,
            left,
            right,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdcjoin_model::golden;

    fn rec(side: Side, kind: RowKind, timestamp: Option<i64>, row: &[u8]) -> InputRecord<'_> {
        InputRecord {
            side,
            kind,
            key_group: 300,
            timestamp,
            row,
        }
    }

    /// `changes` as a block of `key_group` behind `side`, as the Java operator appends a block.
    fn framed(side: Side, key_group: u16, changes: &[(RowKind, Option<i64>, &[u8])]) -> Vec<u8> {
        let mut body = Vec::new();
        for &(kind, timestamp, row) in changes {
            write_change(&mut body, kind, timestamp, row);
        }
        let mut buf = vec![side as u8];
        BlockHeader {
            key_group,
            count: changes.len() as u32,
            len: body.len() as u32,
        }
        .write(&mut buf);
        buf.extend_from_slice(&body);
        buf
    }

    /// A block of two changes as the Java operator appends it (side byte, then the decoder's
    /// block), then a block of one.
    fn two_blocks() -> Vec<u8> {
        let mut buf = framed(
            Side::Right,
            300,
            &[
                (RowKind::UpdateBefore, Some(7), b"abc"),
                (RowKind::Insert, None, b""),
            ],
        );
        write_input(&mut buf, &rec(Side::Left, RowKind::Delete, Some(-1), b"z"));
        buf
    }

    #[test]
    fn input_round_trip() {
        let buf = two_blocks();
        let recs: Vec<_> = BatchReader::new(&buf).collect::<Result<_, _>>().unwrap();
        assert_eq!(
            recs,
            vec![
                (0, rec(Side::Right, RowKind::UpdateBefore, Some(7), b"abc")),
                (1, rec(Side::Right, RowKind::Insert, None, b"")),
                (2, rec(Side::Left, RowKind::Delete, Some(-1), b"z")),
            ]
        );
    }

    #[test]
    fn malformed_input_names_the_change() {
        let buf = two_blocks();
        let err = |b: &[u8]| BatchReader::<Side>::new(b).find_map(Result::err).unwrap();
        assert!(err(&buf[..buf.len() - 1]).starts_with("batch record #2: truncated block"));
        let mut bad = buf.clone();
        bad[0] = 7;
        assert_eq!(err(&bad), "batch record #0: bad side byte 7");
        let mut wrong_count = buf.clone();
        wrong_count[3] = 3;
        assert_eq!(
            err(&wrong_count),
            "batch record #2: block holds 2 changes, its count says 3"
        );
        wrong_count[3] = 1;
        assert_eq!(
            err(&wrong_count),
            "batch record #1: block holds more than its count 1"
        );
        wrong_count[3] = 0;
        assert_eq!(err(&wrong_count), "batch record #0: empty block");
        let mut bad_change = buf.clone();
        bad_change[1 + BLOCK_HEADER_LEN] = 9;
        assert_eq!(err(&bad_change), "batch record #0: bad row kind byte 9");
        assert_eq!(BatchReader::<Side>::new(&[]).count(), 0);
    }

    /// The rest of a batch after any number of its changes gives what the whole batch gives from
    /// there on, a malformed block refused with the batch's own counts (a bounded join goes on
    /// from such a rest, and its error must be the one the unbounded join gives).
    #[test]
    fn the_rest_of_a_batch_reads_as_the_batch_does() {
        let buf = two_blocks();
        let second =
            1 + BLOCK_HEADER_LEN + u32::from_le_bytes(buf[7..11].try_into().unwrap()) as usize;
        let with_count = |block: usize, count: u8| {
            let mut v = buf.clone();
            v[block + 3] = count;
            v
        };
        let variants = [
            buf.clone(),
            with_count(0, 1),      // a change past the count
            with_count(0, 3),      // fewer changes than the count, then a block
            with_count(second, 2), // the last block short of its count
            buf[..buf.len() - 1].to_vec(),
        ];
        for v in &variants {
            let whole: Vec<_> = BatchReader::<Side>::new(v).collect();
            for k in 0..=whole.len() {
                let mut reader = BatchReader::<Side>::new(v);
                reader.by_ref().take(k).for_each(drop);
                let rest = reader.remainder();
                let read: Vec<_> =
                    BatchReader::<Side>::from_start(&rest.bytes, rest.start).collect();
                assert_eq!(read, whole[k..], "after {k} of {whole:?}");
            }
        }
    }

    #[test]
    fn output_round_trip() {
        let mut buf = Vec::new();
        let mut w = OutputWriter::new(&mut buf);
        w.emit(RowKind::Insert, Some(b"l"), None);
        w.set_input(&rec(Side::Right, RowKind::Insert, Some(5), b""));
        w.reject("right row +I[<unavailable>]: why");
        w.emit(RowKind::Delete, None, Some(b"rr"));
        assert_eq!(w.rows(), 2, "a rejection is not a row");
        let entries: Vec<_> = OutputEntries::new(&buf).collect();
        assert_eq!(
            entries,
            vec![
                OutputEntry::Row(OutputRow {
                    timestamp: None,
                    kind: RowKind::Insert,
                    left: Some(b"l"),
                    right: None
                }),
                OutputEntry::Rejected {
                    timestamp: Some(5),
                    side: Side::Right,
                    message: "right row +I[<unavailable>]: why"
                },
                OutputEntry::Row(OutputRow {
                    timestamp: Some(5),
                    kind: RowKind::Delete,
                    left: None,
                    right: Some(b"rr")
                }),
            ]
        );
    }

    /// A multi-way join's entries: one row or null per input, the input change's stamp, a
    /// rejection naming its input; two inputs write the two-table join's entries, byte for byte.
    #[test]
    fn wide_rows_round_trip() {
        let mut buf = Vec::new();
        let mut w = OutputWriter::new(&mut buf);
        w.emit_wide(RowKind::UpdateAfter, &[Some(b"a"), None, Some(b"ccc")]);
        w.set_input(&rec(Side::Left, RowKind::Insert, Some(-3), b""));
        w.emit_wide(RowKind::Delete, &[None, Some(b""), None]);
        w.reject_input(2, "input 2 row +U[<unavailable>]: why");
        assert_eq!(w.rows(), 2, "a rejection is not a row");
        let rows: Vec<_> = WideEntries::new(&buf, 3).collect();
        assert_eq!(
            rows,
            vec![
                WideEntry::Row(WideRow::new(
                    None,
                    RowKind::UpdateAfter,
                    &[Some(&b"a"[..]), None, Some(&b"ccc"[..])]
                )),
                WideEntry::Row(WideRow::new(
                    Some(-3),
                    RowKind::Delete,
                    &[None, Some(&b""[..]), None]
                )),
                WideEntry::Rejected {
                    timestamp: Some(-3),
                    input: 2,
                    message: "input 2 row +U[<unavailable>]: why"
                },
            ]
        );
        let (mut two, mut wide) = (Vec::new(), Vec::new());
        let mut w = OutputWriter::new(&mut two);
        w.emit(RowKind::Insert, Some(b"l"), None);
        w.set_input(&rec(Side::Right, RowKind::Insert, None, b""));
        w.reject("m");
        let mut w = OutputWriter::new(&mut wide);
        w.emit_wide(RowKind::Insert, &[Some(b"l"), None]);
        w.reject_input(1, "m");
        assert_eq!(two, wide, "two inputs write the two-table join's bytes");
    }

    /// A join input frame of one block (golden file `join_input.bin`: the side byte, then the
    /// block of `exchange_block.bin`), as the Java operator frames it, and the file read back.
    #[test]
    fn input_frame_layout() {
        let buf = framed(
            Side::Right,
            300,
            &[
                (RowKind::UpdateAfter, Some(-2), b"ab"),
                (RowKind::Delete, None, b""),
            ],
        );
        golden::check("join_input.bin", &buf);
        let file = golden::read("join_input.bin");
        let recs: Vec<_> = BatchReader::new(&file).collect::<Result<_, _>>().unwrap();
        assert_eq!(
            recs,
            vec![
                (0, rec(Side::Right, RowKind::UpdateAfter, Some(-2), b"ab")),
                (1, rec(Side::Right, RowKind::Delete, None, b"")),
            ]
        );
    }

    /// The bytes of a joined row, a null-padded row and a rejection (golden file
    /// `join_output.bin`, which the Java output reader is held to), and the file read back.
    #[test]
    fn output_layout() {
        let mut buf = Vec::new();
        let mut w = OutputWriter::new(&mut buf);
        w.set_input(&rec(Side::Left, RowKind::Insert, Some(258), b""));
        w.emit(RowKind::Insert, Some(b"l"), Some(b"rr"));
        w.set_input(&rec(Side::Left, RowKind::Insert, None, b""));
        w.emit(RowKind::UpdateAfter, None, Some(b"r"));
        w.set_input(&rec(Side::Right, RowKind::Insert, Some(-1), b""));
        w.reject("é");
        golden::check("join_output.bin", &buf);
        let file = golden::read("join_output.bin");
        assert_eq!(
            OutputEntries::new(&file).collect::<Vec<_>>(),
            vec![
                OutputEntry::Row(OutputRow {
                    timestamp: Some(258),
                    kind: RowKind::Insert,
                    left: Some(b"l"),
                    right: Some(b"rr")
                }),
                OutputEntry::Row(OutputRow {
                    timestamp: None,
                    kind: RowKind::UpdateAfter,
                    left: None,
                    right: Some(b"r")
                }),
                OutputEntry::Rejected {
                    timestamp: Some(-1),
                    side: Side::Right,
                    message: "é"
                },
            ]
        );
    }
}
