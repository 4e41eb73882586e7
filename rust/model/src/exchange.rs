//! The batch exchange: changes travel between the decoder and the join in *blocks*, one per key
//! group, instead of one Flink record per change.
//!
//! The decoder writes, per decoded batch, one block for each key group it has changes of (see
//! [`Partitioner`]); the Java layer wraps each block's changes in one Flink record routed to the
//! key group's subtask, and the join operator hands them to the engine behind a side byte (the
//! join's input framing, `cdcjoin_join::batch`). A block holds a single key group so that Flink can
//! route it, and re-route it when an unaligned checkpoint's in-flight data is restored at another
//! parallelism, by key group alone.
//!
//! # Grammar (little-endian)
//!
//! ```text
//! block   := key_group u16 | count u32 | len u32 | change{count}   len: bytes of the changes
//! change  := kind u8 | stamp | row_len u32 | row bytes             kind: Flink's RowKind byte
//! stamp   := flag u8 | timestamp i64                               flag: STAMP_NONE | STAMP_PRESENT
//! ```
//! A stamp is the Flink timestamp of the input record a change came from (Flink records may have
//! none, hence the flag; with [`STAMP_NONE`] the timestamp bytes are zero), so that whatever the
//! change causes downstream carries it. Key groups are Flink's ([`crate::key_group`]).

use crate::key_group::{check_max_parallelism, key_group};
use crate::RowKind;

/// Stamp flag: the record has no timestamp.
pub const STAMP_NONE: u8 = 0;
/// Stamp flag: the record has the timestamp that follows.
pub const STAMP_PRESENT: u8 = 1;
/// Bytes of a stamp.
pub const STAMP_LEN: usize = 9;
/// Bytes of a block header (`key_group | count | len`).
pub const BLOCK_HEADER_LEN: usize = 10;
/// Bytes of a change before its row (`kind | stamp | row_len`).
pub const CHANGE_HEADER_LEN: usize = 1 + STAMP_LEN + 4;

/// The bytes of a stamp: `Some(t)` for a record with timestamp `t`, `None` for one without.
fn stamp(timestamp: Option<i64>) -> [u8; STAMP_LEN] {
    let mut bytes = [0; STAMP_LEN]; // STAMP_NONE, then a zero timestamp
    if let Some(t) = timestamp {
        bytes[0] = STAMP_PRESENT;
        bytes[1..].copy_from_slice(&t.to_le_bytes());
    }
    bytes
}

/// Appends a stamp: `Some(t)` for a record with timestamp `t`, `None` for one without.
pub fn write_stamp(out: &mut Vec<u8>, timestamp: Option<i64>) {
    out.extend_from_slice(&stamp(timestamp));
}

/// Reads the stamp at the start of `buf`.
pub fn read_stamp(buf: &[u8]) -> Result<Option<i64>, String> {
    let head = buf.get(..STAMP_LEN).ok_or("truncated stamp")?;
    let timestamp = i64::from_le_bytes(head[1..].try_into().expect("8 bytes"));
    match head[0] {
        STAMP_NONE => Ok(None),
        STAMP_PRESENT => Ok(Some(timestamp)),
        flag => Err(format!("bad stamp flag {flag}")),
    }
}

/// Appends one change: its header in one copy, then its row.
pub fn write_change(out: &mut Vec<u8>, kind: RowKind, timestamp: Option<i64>, row: &[u8]) {
    let mut head = [0; CHANGE_HEADER_LEN];
    head[0] = kind as u8;
    head[1..1 + STAMP_LEN].copy_from_slice(&stamp(timestamp));
    head[1 + STAMP_LEN..].copy_from_slice(&(row.len() as u32).to_le_bytes());
    out.reserve(CHANGE_HEADER_LEN + row.len());
    out.extend_from_slice(&head);
    out.extend_from_slice(row);
}

/// The header of a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockHeader {
    /// Flink key group of every change in the block.
    pub key_group: u16,
    /// Changes in the block.
    pub count: u32,
    /// Bytes of the changes.
    pub len: u32,
}

impl BlockHeader {
    /// Appends the header.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.key_group.to_le_bytes());
        out.extend_from_slice(&self.count.to_le_bytes());
        out.extend_from_slice(&self.len.to_le_bytes());
    }

    /// Reads the header at the start of `buf`.
    pub fn read(buf: &[u8]) -> Result<BlockHeader, String> {
        let h = buf
            .get(..BLOCK_HEADER_LEN)
            .ok_or("truncated block header")?;
        Ok(BlockHeader {
            key_group: u16::from_le_bytes([h[0], h[1]]),
            count: u32::from_le_bytes(h[2..6].try_into().expect("4 bytes")),
            len: u32::from_le_bytes(h[6..10].try_into().expect("4 bytes")),
        })
    }
}

/// One change, borrowed from a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Change<'a> {
    /// Its kind.
    pub kind: RowKind,
    /// Its input record's timestamp, if that had one.
    pub timestamp: Option<i64>,
    /// The row, in its table's compact encoding.
    pub row: &'a [u8],
}

/// Reads the changes of a block's body, refusing malformed ones.
#[derive(Clone)]
pub struct Changes<'a> {
    buf: &'a [u8],
}

impl<'a> Changes<'a> {
    /// The changes of `body` (a block's `len` bytes after its header).
    pub fn new(body: &'a [u8]) -> Changes<'a> {
        Changes { buf: body }
    }

    /// The bytes of the changes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.buf
    }

    #[inline(always)]
    fn read(&mut self) -> Result<Change<'a>, String> {
        let head = self
            .buf
            .get(..CHANGE_HEADER_LEN)
            .ok_or("truncated change header")?;
        let kind =
            RowKind::from_byte(head[0]).ok_or_else(|| format!("bad row kind byte {}", head[0]))?;
        let timestamp = read_stamp(&head[1..])?;
        let len = u32::from_le_bytes(head[1 + STAMP_LEN..].try_into().expect("4 bytes")) as usize;
        let end = CHANGE_HEADER_LEN.saturating_add(len);
        let row = self
            .buf
            .get(CHANGE_HEADER_LEN..end)
            .ok_or("truncated row")?;
        self.buf = &self.buf[end..];
        Ok(Change {
            kind,
            timestamp,
            row,
        })
    }
}

impl<'a> Iterator for Changes<'a> {
    /// A change, or why the block is malformed there (the rest of the block is then skipped).
    type Item = Result<Change<'a>, String>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.buf.is_empty() {
            return None;
        }
        let change = self.read();
        if change.is_err() {
            self.buf = &[];
        }
        Some(change)
    }
}

/// Groups changes by the key group of their join key and writes them as blocks.
#[derive(Debug)]
pub struct Partitioner {
    max_parallelism: u32,
    /// Per key group: its changes so far and their count.
    buckets: Vec<(u32, Vec<u8>)>,
    /// Key groups with changes, in first-change order.
    touched: Vec<u16>,
}

impl Partitioner {
    /// A partitioner into `max_parallelism` key groups, or why that is not a max parallelism.
    pub fn new(max_parallelism: u32) -> Result<Partitioner, String> {
        let n = check_max_parallelism(max_parallelism)? as usize;
        Ok(Partitioner {
            max_parallelism,
            buckets: (0..n).map(|_| (0, Vec::new())).collect(),
            touched: Vec::new(),
        })
    }

    /// The max parallelism (number of key groups) it partitions into.
    pub fn max_parallelism(&self) -> u32 {
        self.max_parallelism
    }

    /// Adds a change whose join key (compact encoding) is `key` to its key group's block.
    pub fn add(&mut self, key: &[u8], kind: RowKind, timestamp: Option<i64>, row: &[u8]) {
        let group = key_group(key, self.max_parallelism);
        let (count, bytes) = &mut self.buckets[group as usize];
        if *count == 0 {
            self.touched.push(group);
        }
        *count += 1;
        write_change(bytes, kind, timestamp, row);
    }

    /// Appends one block per key group with changes, in key group order, and empties them all;
    /// returns how many blocks.
    pub fn write_blocks(&mut self, out: &mut Vec<u8>) -> usize {
        self.touched.sort_unstable();
        for &group in &self.touched {
            let (count, bytes) = &mut self.buckets[group as usize];
            let header = BlockHeader {
                key_group: group,
                count: *count,
                len: bytes.len() as u32,
            };
            header.write(out);
            out.extend_from_slice(bytes);
            *count = 0;
            bytes.clear();
        }
        let blocks = self.touched.len();
        self.touched.clear();
        blocks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes of a block (golden file `exchange_block.bin`, which the Java mirror `ChangeBlocks`
    /// is held to as well), and the file read back.
    #[test]
    fn block_layout() {
        let mut body = Vec::new();
        write_change(&mut body, RowKind::UpdateAfter, Some(-2), b"ab");
        write_change(&mut body, RowKind::Delete, None, b"");
        let mut out = Vec::new();
        BlockHeader {
            key_group: 300,
            count: 2,
            len: body.len() as u32,
        }
        .write(&mut out);
        out.extend_from_slice(&body);
        crate::golden::check("exchange_block.bin", &out);
        let out = crate::golden::read("exchange_block.bin");
        let header = BlockHeader::read(&out).unwrap();
        assert_eq!((header.key_group, header.count, header.len), (300, 2, 30));
        let changes: Vec<_> = Changes::new(&out[BLOCK_HEADER_LEN..])
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            changes,
            vec![
                Change {
                    kind: RowKind::UpdateAfter,
                    timestamp: Some(-2),
                    row: b"ab"
                },
                Change {
                    kind: RowKind::Delete,
                    timestamp: None,
                    row: b""
                }
            ]
        );
    }

    #[test]
    fn malformed_changes_are_refused() {
        let mut body = Vec::new();
        write_change(&mut body, RowKind::Insert, Some(1), b"xyz");
        let err = |b: &[u8]| Changes::new(b).find_map(Result::err).unwrap();
        assert_eq!(err(&body[..body.len() - 1]), "truncated row");
        assert_eq!(err(&body[..5]), "truncated change header");
        let mut bad = body.clone();
        bad[0] = 9;
        assert_eq!(err(&bad), "bad row kind byte 9");
        bad[0] = 0;
        bad[1] = 2;
        assert_eq!(err(&bad), "bad stamp flag 2");
        assert!(BlockHeader::read(&[0; 9]).is_err());
        let mut twice = body.clone();
        twice.extend_from_slice(&body[..3]);
        assert_eq!(Changes::new(&twice).count(), 2, "stops after the error");
    }

    #[test]
    fn partitioner_groups_by_key_group_in_order() {
        let mut p = Partitioner::new(4).unwrap();
        let keys: [&[u8]; 4] = [b"a", b"b", b"a", b"c"];
        for (i, key) in keys.iter().enumerate() {
            p.add(key, RowKind::Insert, Some(i as i64), key);
        }
        let mut out = Vec::new();
        let blocks = p.write_blocks(&mut out);
        let mut at = 0;
        let mut seen = Vec::new();
        while at < out.len() {
            let h = BlockHeader::read(&out[at..]).unwrap();
            let body = &out[at + BLOCK_HEADER_LEN..at + BLOCK_HEADER_LEN + h.len as usize];
            let changes: Vec<_> = Changes::new(body).map(Result::unwrap).collect();
            assert_eq!(changes.len(), h.count as usize);
            for c in changes {
                assert_eq!(key_group(c.row, 4), h.key_group);
                seen.push((h.key_group, c.timestamp.unwrap()));
            }
            at += BLOCK_HEADER_LEN + h.len as usize;
        }
        assert_eq!(seen.len(), 4);
        assert_eq!(blocks, {
            let mut g: Vec<_> = seen.iter().map(|s| s.0).collect();
            g.dedup();
            g.len()
        });
        assert!(
            seen.windows(2).all(|w| w[0] < w[1]),
            "key group, then input order: {seen:?}"
        );
        let mut again = Vec::new();
        assert_eq!(p.write_blocks(&mut again), 0, "emptied");
        assert!(again.is_empty());
        assert!(Partitioner::new(0).is_err());
    }
}
