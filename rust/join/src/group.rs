//! All rows stored under one join key, in one allocation.
//!
//! A group is a sequence of entries, each a small header followed by the row's encoded bytes:
//!
//! ```text
//! entry := row_len u32 | count u32 (multiset layout only) | matches u32 (outer side only)
//!          | written_at i64 (with TTL only) | row bytes
//! ```
//!
//! Keeping a key's rows contiguous costs one heap block per join key instead of one per row plus a
//! collection, which is what keeps state within a few dozen bytes of the payload. The price is a
//! `memmove` of the group on insert and delete, cheap for the handful of rows a key usually holds.
//! The join key itself is not stored: it is projected from the rows when needed.

use cdcjoin_model::{RowLayout, RowRef};
use std::fmt;
use std::ops::Range;

/// Which header fields a side keeps per stored row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryLayout {
    count: bool,
    matches: bool,
    ttl: bool,
}

impl EntryLayout {
    /// A layout with a multiplicity (`count`), a match counter (`matches`, for outer sides) and a
    /// write time (`ttl`) as asked.
    pub fn new(count: bool, matches: bool, ttl: bool) -> EntryLayout {
        EntryLayout {
            count,
            matches,
            ttl,
        }
    }

    /// Bytes of header before each row.
    pub fn header_len(&self) -> usize {
        4 + 4 * self.count as usize + 4 * self.matches as usize + 8 * self.ttl as usize
    }

    fn count_at(&self) -> usize {
        4
    }

    fn matches_at(&self) -> usize {
        4 + 4 * self.count as usize
    }

    fn written_at(&self) -> usize {
        self.matches_at() + 4 * self.matches as usize
    }

    /// Encodes the layout in one byte (for snapshots).
    pub fn to_byte(self) -> u8 {
        self.count as u8 | (self.matches as u8) << 1 | (self.ttl as u8) << 2
    }
}

/// The header fields in order, as in the format above: `row_len, matches` for an outer side with
/// a primary key (how a snapshot names the layout it was taken with).
impl fmt::Display for EntryLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("row_len")?;
        for (present, name) in [
            (self.count, "count"),
            (self.matches, "matches"),
            (self.ttl, "written_at"),
        ] {
            if present {
                write!(f, ", {name}")?;
            }
        }
        Ok(())
    }
}

/// Where one entry lies in its group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Offset of the header.
    pub at: usize,
    /// The row's bytes.
    pub row: Range<usize>,
}

/// The entries of one join key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Group(Box<[u8]>);

impl Group {
    /// The raw bytes (for snapshots and size accounting).
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// True when no row is stored.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entry whose header starts at `at` (an offset produced by this group).
    pub fn entry_at(&self, layout: EntryLayout, at: usize) -> Entry {
        let len = u32::from_le_bytes(self.0[at..at + 4].try_into().expect("4 bytes")) as usize;
        let start = at + layout.header_len();
        Entry {
            at,
            row: start..start + len,
        }
    }

    /// The entries, in insertion order.
    pub fn entries(&self, layout: EntryLayout) -> impl Iterator<Item = Entry> + '_ {
        let mut at = 0;
        std::iter::from_fn(move || {
            (at < self.0.len()).then(|| {
                let e = self.entry_at(layout, at);
                at = e.row.end;
                e
            })
        })
    }

    /// The first entry.
    pub fn first(&self, layout: EntryLayout) -> Option<Entry> {
        self.entries(layout).next()
    }

    /// The row of `e`.
    pub fn row(&self, e: &Entry) -> &[u8] {
        &self.0[e.row.clone()]
    }

    fn get_u32(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.0[at..at + 4].try_into().expect("4 bytes"))
    }

    /// Multiplicity of `e` (1 unless the layout is a multiset).
    pub fn count(&self, layout: EntryLayout, e: &Entry) -> u32 {
        if layout.count {
            self.get_u32(e.at + layout.count_at())
        } else {
            1
        }
    }

    /// Number of rows on the other side matching `e` (0 unless the side is outer).
    pub fn matches(&self, layout: EntryLayout, e: &Entry) -> u32 {
        if layout.matches {
            self.get_u32(e.at + layout.matches_at())
        } else {
            0
        }
    }

    /// Write time of `e` (0 unless the side has a TTL).
    pub fn written_at(&self, layout: EntryLayout, e: &Entry) -> i64 {
        if !layout.ttl {
            return 0;
        }
        let at = e.at + layout.written_at();
        i64::from_le_bytes(self.0[at..at + 8].try_into().expect("8 bytes"))
    }

    /// Sets the multiplicity of `e` (multiset layout only).
    pub fn set_count(&mut self, layout: EntryLayout, e: &Entry, count: u32) {
        if layout.count {
            let at = e.at + layout.count_at();
            self.0[at..at + 4].copy_from_slice(&count.to_le_bytes());
        }
    }

    /// Sets the match counter of `e` and, as any write does, its write time.
    pub fn set_matches(&mut self, layout: EntryLayout, e: &Entry, matches: u32, now: i64) {
        if layout.matches {
            let at = e.at + layout.matches_at();
            self.0[at..at + 4].copy_from_slice(&matches.to_le_bytes());
        }
        self.touch(layout, e, now);
    }

    /// Sets the write time of `e` (TTL counts from the last write, as Flink's `OnCreateAndWrite`).
    pub fn touch(&mut self, layout: EntryLayout, e: &Entry, now: i64) {
        if layout.ttl {
            let at = e.at + layout.written_at();
            self.0[at..at + 8].copy_from_slice(&now.to_le_bytes());
        }
    }

    fn encode_entry(
        layout: EntryLayout,
        row: &[u8],
        count: u32,
        matches: u32,
        now: i64,
        out: &mut Vec<u8>,
    ) {
        out.extend_from_slice(&(row.len() as u32).to_le_bytes());
        if layout.count {
            out.extend_from_slice(&count.to_le_bytes());
        }
        if layout.matches {
            out.extend_from_slice(&matches.to_le_bytes());
        }
        if layout.ttl {
            out.extend_from_slice(&now.to_le_bytes());
        }
        out.extend_from_slice(row);
    }

    /// Appends a row.
    pub fn push(&mut self, layout: EntryLayout, row: &[u8], count: u32, matches: u32, now: i64) {
        let mut v = std::mem::take(&mut self.0).into_vec();
        v.reserve_exact(layout.header_len() + row.len());
        Self::encode_entry(layout, row, count, matches, now, &mut v);
        self.0 = v.into_boxed_slice();
    }

    /// Removes the entry `e`.
    pub fn remove(&mut self, e: &Entry) {
        let mut v = std::mem::take(&mut self.0).into_vec();
        v.drain(e.at..e.row.end);
        self.0 = v.into_boxed_slice();
    }

    /// Drops the entries written at or before `now - ttl_ms`; returns how many rows (with
    /// multiplicity) went.
    pub fn purge_expired(&mut self, layout: EntryLayout, ttl_ms: u64, now: i64) -> u64 {
        let deadline = now.saturating_sub(ttl_ms.min(i64::MAX as u64) as i64);
        let expired = |g: &Group, e: &Entry| g.written_at(layout, e) <= deadline;
        if !layout.ttl || !self.entries(layout).any(|e| expired(self, &e)) {
            return 0;
        }
        let mut kept = Vec::with_capacity(self.0.len());
        let mut gone = 0;
        for e in self.entries(layout) {
            if expired(self, &e) {
                gone += self.count(layout, &e) as u64;
            } else {
                kept.extend_from_slice(&self.0[e.at..e.row.end]);
            }
        }
        self.0 = kept.into_boxed_slice();
        gone
    }

    /// Rebuilds a group from snapshot bytes, checking every entry so that a corrupt snapshot is an
    /// error, never an out-of-bounds read later (nor an unavailable column emitted).
    pub fn from_bytes(
        bytes: Vec<u8>,
        layout: EntryLayout,
        rows: &RowLayout,
    ) -> Result<Group, String> {
        let mut at = 0;
        while at < bytes.len() {
            let header = layout.header_len();
            if at + header > bytes.len() {
                return Err(format!("truncated entry header at byte {at}"));
            }
            let len = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as usize;
            let row = at + header..(at + header).saturating_add(len);
            let row_bytes = bytes
                .get(row.clone())
                .ok_or_else(|| format!("truncated row at byte {at}"))?;
            rows.validate(row_bytes)
                .map_err(|e| format!("invalid row at byte {at}: {e}"))?;
            if RowRef::new(rows, row_bytes).has_unavailable() {
                return Err(format!(
                    "row at byte {at} has an unavailable column, which state never holds"
                ));
            }
            at = row.end;
        }
        if bytes.is_empty() {
            return Err("empty group".into());
        }
        Ok(Group(bytes.into_boxed_slice()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdcjoin_model::{DataType, Field, Schema};

    fn rows() -> RowLayout {
        RowLayout::new(&Schema::new(vec![Field::new("x", DataType::Int)]))
    }

    fn row(x: i32) -> Vec<u8> {
        let mut v = vec![0];
        v.extend_from_slice(&x.to_le_bytes());
        v
    }

    #[test]
    fn push_update_remove() {
        let l = EntryLayout::new(true, true, true);
        let mut g = Group::default();
        g.push(l, &row(1), 2, 0, 10);
        g.push(l, &row(2), 1, 3, 20);
        let es: Vec<Entry> = g.entries(l).collect();
        assert_eq!(es.len(), 2);
        assert_eq!(g.row(&es[1]), row(2));
        assert_eq!(
            (
                g.count(l, &es[0]),
                g.matches(l, &es[1]),
                g.written_at(l, &es[1])
            ),
            (2, 3, 20)
        );
        g.set_matches(l, &es[0], 5, 30);
        assert_eq!((g.matches(l, &es[0]), g.written_at(l, &es[0])), (5, 30));
        g.touch(l, &es[0], 40);
        assert_eq!((g.matches(l, &es[0]), g.written_at(l, &es[0])), (5, 40));
        let first = g.first(l).unwrap();
        g.remove(&first);
        assert_eq!(g.entries(l).count(), 1);
        assert_eq!(g.row(&g.first(l).unwrap()), row(2));
    }

    #[test]
    fn minimal_header_without_optional_fields() {
        let l = EntryLayout::new(false, false, false);
        let mut g = Group::default();
        g.push(l, &row(1), 1, 0, 0);
        assert_eq!(g.bytes().len(), 4 + 5);
        let e = g.first(l).unwrap();
        assert_eq!(
            (g.count(l, &e), g.matches(l, &e), g.written_at(l, &e)),
            (1, 0, 0)
        );
    }

    #[test]
    fn purges_expired_rows() {
        let l = EntryLayout::new(true, false, true);
        let mut g = Group::default();
        g.push(l, &row(1), 3, 0, 100);
        g.push(l, &row(2), 1, 0, 200);
        assert_eq!(g.purge_expired(l, 50, 180), 3);
        assert_eq!(g.entries(l).count(), 1);
        assert_eq!(g.purge_expired(l, 50, 249), 0);
        assert_eq!(g.purge_expired(l, 50, 250), 1);
        assert!(g.is_empty());
    }

    #[test]
    fn from_bytes_checks_everything() {
        let l = EntryLayout::new(false, true, false);
        let mut g = Group::default();
        g.push(l, &row(1), 1, 0, 0);
        let good = g.bytes().to_vec();
        assert_eq!(Group::from_bytes(good.clone(), l, &rows()).unwrap(), g);
        assert!(Group::from_bytes(good[..good.len() - 1].to_vec(), l, &rows()).is_err());
        assert!(Group::from_bytes(vec![], l, &rows()).is_err());
        let mut huge = good.clone();
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Group::from_bytes(huge, l, &rows()).is_err());
        let mut unavailable = good.clone();
        let row_at = l.header_len();
        unavailable[row_at..].copy_from_slice(&[1, 1, 0, 0, 0]); // null bit, marked slot
        let err = Group::from_bytes(unavailable, l, &rows()).unwrap_err();
        assert!(err.contains("unavailable column"), "{err}");
    }
}
