//! The caller-owned buffer decoded changes are appended to.
//!
//! Decoding runs in batches (a Kafka poll, a JNI call): the caller keeps one [`ChangeSink`],
//! decodes many records into it, hands the batch on and clears it. All rows of a batch sit in one
//! contiguous byte buffer with a side table of `(kind, range)` entries, so once the buffers have
//! grown to the batch size, decoding allocates nothing, and the whole batch can cross to Java (or
//! into the join) as two slices.

use cdcjoin_model::RowKind;
use std::ops::Range;

/// A reusable batch of changes: each a [`RowKind`] and a row in the compact row encoding.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChangeSink {
    data: Vec<u8>,
    entries: Vec<(RowKind, Range<usize>)>,
}

/// A point to roll a sink back to (see [`ChangeSink::truncate`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mark {
    data: usize,
    entries: usize,
}

impl ChangeSink {
    /// An empty sink.
    pub fn new() -> ChangeSink {
        ChangeSink::default()
    }

    /// An empty sink with room for `changes` changes of `bytes` row bytes in total.
    pub fn with_capacity(changes: usize, bytes: usize) -> ChangeSink {
        ChangeSink {
            data: Vec::with_capacity(bytes),
            entries: Vec::with_capacity(changes),
        }
    }

    /// Removes every change, keeping the buffers' capacity.
    pub fn clear(&mut self) {
        self.data.clear();
        self.entries.clear();
    }

    /// Number of changes.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there is no change.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The `i`-th change.
    pub fn get(&self, i: usize) -> Option<(RowKind, &[u8])> {
        let (kind, range) = self.entries.get(i)?;
        Some((*kind, &self.data[range.clone()]))
    }

    /// The changes in order, each as its kind and row bytes.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (RowKind, &[u8])> + '_ {
        self.entries
            .iter()
            .map(move |(kind, range)| (*kind, &self.data[range.clone()]))
    }

    /// All row bytes of the batch, back to back (the ranges of [`ChangeSink::entries`] index it).
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The kind and byte range of every change, in order.
    pub fn entries(&self) -> &[(RowKind, Range<usize>)] {
        &self.entries
    }

    /// Appends a change whose row is already encoded.
    pub fn push(&mut self, kind: RowKind, row: &[u8]) {
        let start = self.data.len();
        self.data.extend_from_slice(row);
        self.entries.push((kind, start..self.data.len()));
    }

    /// Appends a change whose row `write` appends to the data buffer.
    pub(crate) fn push_with<E>(
        &mut self,
        kind: RowKind,
        write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        let start = self.data.len();
        write(&mut self.data)?;
        self.entries.push((kind, start..self.data.len()));
        Ok(())
    }

    /// The current end, to roll back to if a record fails half-way.
    pub(crate) fn mark(&self) -> Mark {
        Mark {
            data: self.data.len(),
            entries: self.entries.len(),
        }
    }

    /// Drops everything appended since `mark`.
    pub(crate) fn truncate(&mut self, mark: Mark) {
        self.data.truncate(mark.data);
        self.entries.truncate(mark.entries);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_iter_clear() {
        let mut sink = ChangeSink::with_capacity(4, 16);
        sink.push(RowKind::UpdateBefore, b"ab");
        sink.push(RowKind::UpdateAfter, b"cde");
        assert_eq!(sink.len(), 2);
        let all: Vec<_> = sink.iter().collect();
        assert_eq!(
            all,
            vec![
                (RowKind::UpdateBefore, &b"ab"[..]),
                (RowKind::UpdateAfter, &b"cde"[..])
            ]
        );
        assert_eq!(sink.data(), b"abcde");
        assert_eq!(sink.entries()[1], (RowKind::UpdateAfter, 2..5));
        assert_eq!(sink.get(2), None);
        sink.clear();
        assert!(sink.is_empty() && sink.data().is_empty());
    }

    #[test]
    fn truncate_rolls_back_rows_and_partial_writes() {
        let mut sink = ChangeSink::new();
        sink.push(RowKind::Insert, b"keep");
        let mark = sink.mark();
        sink.push(RowKind::Delete, b"gone");
        let failed: Result<(), ()> = sink.push_with(RowKind::Insert, |buf| {
            buf.extend_from_slice(b"half");
            Err(())
        });
        assert!(failed.is_err());
        sink.truncate(mark);
        assert_eq!(sink.len(), 1);
        assert_eq!(sink.data(), b"keep");
    }
}
