//! All rows stored under one join key: one allocation while the key holds a few rows, an indexed
//! arena once it holds many.
//!
//! A group is a sequence of entries, each a small header followed by the row's encoded bytes:
//!
//! ```text
//! entry := row_len u32 | count u32 (multiset layout only) | matches u32 (outer side only)
//!          | written_at i64 (with TTL only) | row bytes
//! ```
//!
//! Most keys hold a handful of rows. For them the entries live back to back in one heap block
//! ([`Group::Compact`]) of the allocator's size class for them ([`Block`]): one block per join key
//! instead of one per row plus a collection, which is what keeps state within a few dozen bytes of
//! the payload. A row is found by a scan and a change moves the entries after it, both cheap at
//! that size but O(n) in the rows of the key; the block is reallocated only when the entries
//! outgrow it, and after a removal keeps room for the bytes removed (so an update allocates
//! nothing).
//!
//! Real change streams are skewed (one customer with tens of thousands of orders), and there an
//! O(n) change makes the join quadratic. From [`INDEX_AT`] rows on, a group is
//! [`Group::Indexed`]: the same entries in an arena that grows at its end, with a hash index from
//! each row's identity (its primary key, or on a multiset side its value, see [`RowIdentity`]) to
//! its entry. A row is then found, added, replaced and removed in O(1) expected: a removed entry is
//! only marked (the high bit of its `row_len`), and the arena is compacted once removed entries
//! outweigh half the live ones, so the cost is amortized. The entries keep their insertion order
//! in both forms, and a snapshot writes the live entries in the compact format, whatever the form.
//!
//! The join key itself is not stored: it is projected from the rows when needed.

use crate::block::Block;
use cdcjoin_model::{KeyProjection, RowLayout, RowRef};
use hashbrown::HashTable;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::ops::Range;

/// Rows from which a group is indexed. Below it a scan of the one block is as fast as a hash
/// lookup (measured by `cargo bench -p cdcjoin-join --bench hot_key`), and the block costs no
/// index.
pub const INDEX_AT: usize = 32;

/// Rows below which an indexed group goes back to one block: well below [`INDEX_AT`], so that a
/// group hovering around the threshold does not convert back and forth.
const COMPACT_BELOW: usize = INDEX_AT / 4;

/// Marks a removed entry of an indexed group, in its `row_len`.
const REMOVED: u32 = 1 << 31;

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

/// How the rows of one side are told apart under a join key: by primary key on sides that have
/// one, by the whole row on multiset sides. It is what an indexed group hashes.
#[derive(Clone, Copy)]
pub struct RowIdentity<'a> {
    rows: &'a RowLayout,
    key: Option<&'a KeyProjection>,
}

impl<'a> RowIdentity<'a> {
    /// Rows of `rows`' layout told apart by `key`, or by their bytes when there is none.
    pub fn new(rows: &'a RowLayout, key: Option<&'a KeyProjection>) -> RowIdentity<'a> {
        RowIdentity { rows, key }
    }

    /// The hash of `row`'s identity. Fixed seed: deterministic across runs and instances.
    fn hash(&self, row: &[u8]) -> u64 {
        let mut h = foldhash::fast::FixedState::with_seed(0x1de4_7117_ee00_cdc0).build_hasher();
        match self.key {
            None => h.write(row),
            Some(key) => {
                let row = RowRef::new(self.rows, row);
                for &c in key.columns() {
                    match row.column_bytes(c) {
                        None => h.write_u8(0),
                        Some(b) => {
                            h.write_u8(1);
                            h.write(b);
                        }
                    }
                }
            }
        }
        h.finish()
    }

    /// Whether rows `a` and `b` are the same row (same primary key, or same bytes).
    pub fn same(&self, a: &[u8], b: &[u8]) -> bool {
        match self.key {
            None => a == b,
            Some(key) => key.same_key(&RowRef::new(self.rows, a), &RowRef::new(self.rows, b)),
        }
    }
}

/// The little-endian `u32` at `at` in `raw`.
fn u32_at(raw: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(raw[at..at + 4].try_into().expect("4 bytes"))
}

/// The entry whose header starts at `at` in `raw`, and whether it was removed.
fn entry_at(raw: &[u8], layout: EntryLayout, at: usize) -> (Entry, bool) {
    let word = u32_at(raw, at);
    let start = at + layout.header_len();
    let row = start..start + (word & !REMOVED) as usize;
    (Entry { at, row }, word & REMOVED != 0)
}

/// The first entry at or after `at` that was not removed.
fn live_from(raw: &[u8], layout: EntryLayout, mut at: usize) -> Option<Entry> {
    while at < raw.len() {
        let (e, removed) = entry_at(raw, layout, at);
        if !removed {
            return Some(e);
        }
        at = e.row.end;
    }
    None
}

/// The live entries of `raw` from `at` on, in order.
fn live_entries(raw: &[u8], layout: EntryLayout, at: usize) -> impl Iterator<Item = Entry> + '_ {
    let mut next = live_from(raw, layout, at);
    std::iter::from_fn(move || {
        let e = next.take()?;
        next = live_from(raw, layout, e.row.end);
        Some(e)
    })
}

/// Whether `raw` holds [`INDEX_AT`] live entries or more (a group of them is indexed). Every
/// entry takes at least its header and its row's fixed part, so a block too short for that many
/// (each push to a small group asks) is answered without walking it.
fn reaches_index(raw: &[u8], layout: EntryLayout, id: &RowIdentity<'_>) -> bool {
    raw.len() >= INDEX_AT * (layout.header_len() + id.rows.fixed_len())
        && live_entries(raw, layout, 0).nth(INDEX_AT - 1).is_some()
}

/// The header of an entry in the format above, in the first [`EntryLayout::header_len`] bytes.
fn entry_header(layout: EntryLayout, row: &[u8], count: u32, matches: u32, now: i64) -> [u8; 20] {
    let mut h = [0; 20];
    h[..4].copy_from_slice(&(row.len() as u32).to_le_bytes());
    if layout.count {
        h[layout.count_at()..][..4].copy_from_slice(&count.to_le_bytes());
    }
    if layout.matches {
        h[layout.matches_at()..][..4].copy_from_slice(&matches.to_le_bytes());
    }
    if layout.ttl {
        h[layout.written_at()..][..8].copy_from_slice(&now.to_le_bytes());
    }
    h
}

/// The time at or before which a row written under a retention of `ttl_ms` has expired at `now`.
pub fn expiry_deadline(ttl_ms: u64, now: i64) -> i64 {
    now.saturating_sub(ttl_ms.min(i64::MAX as u64) as i64)
}

/// The rows of one join key on one side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Group {
    /// The entries back to back in one block (few rows).
    Compact(Block),
    /// The entries in an arena with an index by row identity (many rows).
    Indexed(Box<Indexed>),
}

impl Default for Group {
    fn default() -> Group {
        Group::Compact(Block::default())
    }
}

/// A group of many rows: entries in an arena, removed ones marked until the next compaction, and
/// an index from each live row's identity hash to its entry's offset.
#[derive(Clone, Debug)]
pub struct Indexed {
    layout: EntryLayout,
    arena: Vec<u8>,
    index: HashTable<usize>,
    /// Offset of the first live entry (removed entries before it are skipped once, not per read).
    head: usize,
    /// Bytes of the live entries.
    live_bytes: usize,
    /// Rows of the live entries, with multiplicity (so that counting them is O(1)).
    rows: u64,
}

/// Two indexed groups are equal when they hold the same live entries in the same order.
impl PartialEq for Indexed {
    fn eq(&self, other: &Indexed) -> bool {
        self.layout == other.layout
            && self.live_bytes == other.live_bytes
            && self.live_bytes() == other.live_bytes()
    }
}

impl Eq for Indexed {}

impl Indexed {
    /// Indexes the entries of `arena` (none removed).
    fn build(arena: Vec<u8>, layout: EntryLayout, id: &RowIdentity<'_>) -> Indexed {
        let mut ix = Indexed {
            layout,
            live_bytes: arena.len(),
            arena,
            index: HashTable::new(),
            head: 0,
            rows: 0,
        };
        ix.reindex(id);
        ix.rows = ix.entries().map(|e| ix.count(&e) as u64).sum();
        ix
    }

    /// Multiplicity of `e`.
    fn count(&self, e: &Entry) -> u32 {
        match self.layout.count {
            true => u32_at(&self.arena, e.at + self.layout.count_at()),
            false => 1,
        }
    }

    /// The live entries, in order.
    fn entries(&self) -> impl Iterator<Item = Entry> + '_ {
        live_entries(&self.arena, self.layout, self.head)
    }

    /// The live entries' bytes, back to back: the compact form of the same rows.
    fn live_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.live_bytes);
        for e in self.entries() {
            out.extend_from_slice(&self.arena[e.at..e.row.end]);
        }
        out
    }

    /// Rebuilds the index from the live entries.
    fn reindex(&mut self, id: &RowIdentity<'_>) {
        let Indexed {
            layout,
            arena,
            index,
            head,
            ..
        } = self;
        let layout = *layout;
        let rehash = |at: &usize| id.hash(&arena[entry_at(arena, layout, *at).0.row]);
        index.clear();
        for e in live_entries(arena, layout, *head) {
            index.insert_unique(id.hash(&arena[e.row.clone()]), e.at, rehash);
        }
    }

    /// The live entry holding the same row as `row`.
    fn find(&self, id: &RowIdentity<'_>, row: &[u8]) -> Option<Entry> {
        let (arena, layout) = (&self.arena, self.layout);
        self.index
            .find(id.hash(row), |&at| {
                id.same(row, &arena[entry_at(arena, layout, at).0.row])
            })
            .map(|&at| entry_at(arena, layout, at).0)
    }

    /// Appends an entry; the arena grows by a quarter at a time, so that it wastes little of a
    /// large group and still grows in amortized O(1).
    fn push(&mut self, id: &RowIdentity<'_>, row: &[u8], count: u32, matches: u32, now: i64) {
        let need = self.layout.header_len() + row.len();
        if self.arena.capacity() - self.arena.len() < need {
            self.arena.reserve_exact(need.max(self.arena.len() / 4));
        }
        let at = self.arena.len();
        let header = entry_header(self.layout, row, count, matches, now);
        self.arena
            .extend_from_slice(&header[..self.layout.header_len()]);
        self.arena.extend_from_slice(row);
        self.live_bytes += need;
        self.rows += count as u64;
        let (arena, layout) = (&self.arena, self.layout);
        let rehash = |at: &usize| id.hash(&arena[entry_at(arena, layout, *at).0.row]);
        self.index.insert_unique(id.hash(row), at, rehash);
    }

    /// Removes the live entry `e`: unindexes and marks it, and compacts the arena once removed
    /// entries outweigh half the live ones.
    fn remove(&mut self, id: &RowIdentity<'_>, e: &Entry) {
        let hash = id.hash(&self.arena[e.row.clone()]);
        if let Ok(found) = self.index.find_entry(hash, |&at| at == e.at) {
            found.remove();
        }
        self.rows -= self.count(e) as u64;
        let word = u32_at(&self.arena, e.at);
        self.arena[e.at..e.at + 4].copy_from_slice(&(word | REMOVED).to_le_bytes());
        self.live_bytes -= e.row.end - e.at;
        if e.at == self.head {
            self.head =
                live_from(&self.arena, self.layout, e.row.end).map_or(self.arena.len(), |n| n.at);
        }
        if (self.arena.len() - self.live_bytes) * 2 > self.live_bytes {
            self.compact(id);
        }
    }

    /// Rewrites the arena with the live entries only, and reindexes them.
    fn compact(&mut self, id: &RowIdentity<'_>) {
        let mut arena = self.live_bytes();
        arena.reserve_exact(arena.len() / 4);
        self.arena = arena;
        self.head = 0;
        self.reindex(id);
    }

    /// Heap bytes held beyond the live entries: the index, the arena's spare capacity and removed
    /// entries, and this struct.
    fn overhead_bytes(&self) -> usize {
        std::mem::size_of::<Indexed>() + self.index.allocation_size() + self.arena.capacity()
            - self.live_bytes
    }
}

impl Group {
    /// A group of the entries `bytes` (none removed), indexed when they are [`INDEX_AT`] or more.
    fn of_entries(bytes: Vec<u8>, layout: EntryLayout, id: &RowIdentity<'_>) -> Group {
        if reaches_index(&bytes, layout, id) {
            Group::Indexed(Box::new(Indexed::build(bytes, layout, id)))
        } else {
            Group::Compact(Block::from_vec(bytes))
        }
    }

    /// The entries' bytes, removed ones of an indexed group included.
    fn raw(&self) -> &[u8] {
        match self {
            Group::Compact(b) => b,
            Group::Indexed(ix) => &ix.arena,
        }
    }

    fn raw_mut(&mut self) -> &mut [u8] {
        match self {
            Group::Compact(b) => b,
            Group::Indexed(ix) => &mut ix.arena,
        }
    }

    /// Offset of the first entry to read.
    fn start(&self) -> usize {
        match self {
            Group::Compact(_) => 0,
            Group::Indexed(ix) => ix.head,
        }
    }

    /// The block to prefetch before reading the group: all of a compact group, nothing of an
    /// indexed one (its arena is behind one more pointer, and a lookup reads little of it).
    pub fn prefetch_bytes(&self) -> &[u8] {
        match self {
            Group::Compact(b) => b,
            Group::Indexed(_) => &[],
        }
    }

    /// Whether the group has its index (it holds many rows).
    pub fn is_indexed(&self) -> bool {
        matches!(self, Group::Indexed(_))
    }

    /// True when no row is stored.
    pub fn is_empty(&self) -> bool {
        match self {
            Group::Compact(b) => b.is_empty(),
            Group::Indexed(ix) => ix.index.is_empty(),
        }
    }

    /// Bytes of the live entries (headers and rows): what a snapshot writes.
    pub fn stored_bytes(&self) -> usize {
        match self {
            Group::Compact(b) => b.len(),
            Group::Indexed(ix) => ix.live_bytes,
        }
    }

    /// Heap bytes held beyond [`Group::stored_bytes`] (an indexed group's index and spare room).
    pub fn overhead_bytes(&self) -> usize {
        match self {
            Group::Compact(b) => b.spare(),
            Group::Indexed(ix) => ix.overhead_bytes(),
        }
    }

    /// Appends the live entries, in the compact format, to `out` (for snapshots).
    pub fn write_entries(&self, out: &mut Vec<u8>) {
        let at = out.len();
        out.resize(at + self.stored_bytes(), 0);
        self.copy_entries(&mut out[at..]);
    }

    /// Copies the live entries, in the compact format, to the start of `dst`, which holds
    /// [`Group::stored_bytes`] at least (for snapshots written in place).
    pub fn copy_entries(&self, dst: &mut [u8]) {
        match self {
            Group::Compact(b) => dst[..b.len()].copy_from_slice(b),
            Group::Indexed(ix) => {
                let mut at = 0;
                for e in ix.entries() {
                    let entry = &ix.arena[e.at..e.row.end];
                    dst[at..at + entry.len()].copy_from_slice(entry);
                    at += entry.len();
                }
            }
        }
    }

    /// The live entry after the one that ends at `at` (the first one for `None`).
    pub fn next_entry(&self, layout: EntryLayout, after: Option<&Entry>) -> Option<Entry> {
        live_from(
            self.raw(),
            layout,
            after.map_or(self.start(), |e| e.row.end),
        )
    }

    /// The live entry after the one that ends at `end`, the first one for 0 (no entry ends there).
    pub fn next_entry_after(&self, layout: EntryLayout, end: usize) -> Option<Entry> {
        let at = if end == 0 { self.start() } else { end };
        live_from(self.raw(), layout, at)
    }

    /// The live entries, in insertion order.
    pub fn entries(&self, layout: EntryLayout) -> impl Iterator<Item = Entry> + '_ {
        live_entries(self.raw(), layout, self.start())
    }

    /// The first entry.
    pub fn first(&self, layout: EntryLayout) -> Option<Entry> {
        self.next_entry(layout, None)
    }

    /// The live entry holding the same row as `row` (by `id`): a scan of a compact group, a
    /// lookup in an indexed one.
    pub fn find(&self, layout: EntryLayout, id: &RowIdentity<'_>, row: &[u8]) -> Option<Entry> {
        match self {
            Group::Compact(b) => {
                live_entries(b, layout, 0).find(|e| id.same(row, &b[e.row.clone()]))
            }
            Group::Indexed(ix) => ix.find(id, row),
        }
    }

    /// The row of `e`.
    pub fn row(&self, e: &Entry) -> &[u8] {
        &self.raw()[e.row.clone()]
    }

    fn get_u32(&self, at: usize) -> u32 {
        u32_at(self.raw(), at)
    }

    /// Rows stored, with multiplicity: kept by an indexed group, counted in a compact one (of
    /// fewer than [`INDEX_AT`] entries).
    pub fn rows(&self, layout: EntryLayout) -> u64 {
        match self {
            Group::Compact(_) => (self.entries(layout))
                .map(|e| self.count(layout, &e) as u64)
                .sum(),
            Group::Indexed(ix) => ix.rows,
        }
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
        i64::from_le_bytes(self.raw()[at..at + 8].try_into().expect("8 bytes"))
    }

    /// Sets the multiplicity of `e` (multiset layout only).
    pub fn set_count(&mut self, layout: EntryLayout, e: &Entry, count: u32) {
        if layout.count {
            if let Group::Indexed(ix) = self {
                ix.rows = ix.rows + count as u64 - ix.count(e) as u64;
            }
            let at = e.at + layout.count_at();
            self.raw_mut()[at..at + 4].copy_from_slice(&count.to_le_bytes());
        }
    }

    /// Sets the match counter of `e` and, as any write does, its write time.
    pub fn set_matches(&mut self, layout: EntryLayout, e: &Entry, matches: u32, now: i64) {
        if layout.matches {
            let at = e.at + layout.matches_at();
            self.raw_mut()[at..at + 4].copy_from_slice(&matches.to_le_bytes());
        }
        self.touch(layout, e, now);
    }

    /// Sets the write time of `e` (TTL counts from the last write, as Flink's `OnCreateAndWrite`).
    pub fn touch(&mut self, layout: EntryLayout, e: &Entry, now: i64) {
        if layout.ttl {
            let at = e.at + layout.written_at();
            self.raw_mut()[at..at + 8].copy_from_slice(&now.to_le_bytes());
        }
    }

    /// Appends a row; a compact group reaching [`INDEX_AT`] rows becomes indexed.
    #[inline(always)]
    pub fn push(
        &mut self,
        layout: EntryLayout,
        id: &RowIdentity<'_>,
        row: &[u8],
        (count, matches): (u32, u32),
        now: i64,
    ) {
        match self {
            Group::Indexed(ix) => ix.push(id, row, count, matches, now),
            Group::Compact(b) => {
                let header = entry_header(layout, row, count, matches, now);
                b.append(&[&header[..layout.header_len()], row]);
                if reaches_index(b, layout, id) {
                    *self = Group::Indexed(Box::new(Indexed::build(b.to_vec(), layout, id)));
                }
            }
        }
    }

    /// Removes the entry `e`; an indexed group falling below a quarter of [`INDEX_AT`] rows
    /// becomes compact again.
    pub fn remove(&mut self, id: &RowIdentity<'_>, e: &Entry) {
        match self {
            Group::Compact(b) => b.remove(e.at..e.row.end),
            Group::Indexed(ix) => {
                ix.remove(id, e);
                if ix.index.len() < COMPACT_BELOW {
                    *self = Group::Compact(Block::from_vec(ix.live_bytes()));
                }
            }
        }
    }

    /// Removes one copy of `e`: counts it down on a multiset layout while copies remain, which
    /// is a write of the remaining copies at `now` (as Flink's state update is), else removes it.
    pub fn remove_one(&mut self, layout: EntryLayout, id: &RowIdentity<'_>, e: &Entry, now: i64) {
        match self.count(layout, e) {
            c if c > 1 => {
                self.set_count(layout, e, c - 1);
                self.touch(layout, e, now);
            }
            _ => self.remove(id, e),
        }
    }

    /// Whether an entry was written at or before `now - ttl_ms` (a sweep has something to free).
    pub fn has_expired(&self, layout: EntryLayout, ttl_ms: u64, now: i64) -> bool {
        let deadline = expiry_deadline(ttl_ms, now);
        layout.ttl
            && self
                .entries(layout)
                .any(|e| self.written_at(layout, &e) <= deadline)
    }

    /// Drops the entries written at or before `now - ttl_ms`; returns how many rows (with
    /// multiplicity) went. Reads every entry: for sweeps, and per change for compact groups only.
    pub fn purge_expired(
        &mut self,
        layout: EntryLayout,
        id: &RowIdentity<'_>,
        ttl_ms: u64,
        now: i64,
    ) -> u64 {
        if !self.has_expired(layout, ttl_ms, now) {
            return 0;
        }
        let deadline = expiry_deadline(ttl_ms, now);
        let expired = |g: &Group, e: &Entry| g.written_at(layout, e) <= deadline;
        let mut kept = Vec::with_capacity(self.stored_bytes());
        let mut gone = 0;
        for e in self.entries(layout) {
            if expired(self, &e) {
                gone += self.count(layout, &e) as u64;
            } else {
                kept.extend_from_slice(&self.raw()[e.at..e.row.end]);
            }
        }
        *self = Group::of_entries(kept, layout, id);
        gone
    }

    /// Rebuilds a group from snapshot bytes, checking every entry so that a corrupt snapshot is an
    /// error, never an out-of-bounds read later (nor an unavailable column emitted); the group and
    /// its rows, with multiplicity. One pass checks and counts the entries (a restore runs it for
    /// every stored row), one copy makes the group.
    pub fn from_bytes(
        bytes: &[u8],
        layout: EntryLayout,
        rows: &RowLayout,
        id: &RowIdentity<'_>,
    ) -> Result<(Group, u64), String> {
        if bytes.is_empty() {
            return Err("empty group".into());
        }
        let header = layout.header_len();
        let (mut at, mut entries, mut count) = (0, 0, 0);
        while at < bytes.len() {
            if at + header > bytes.len() {
                return Err(format!("truncated entry header at byte {at}"));
            }
            let len = u32_at(bytes, at) as usize;
            let row = at + header..(at + header).saturating_add(len);
            let row_bytes = bytes
                .get(row.clone())
                .ok_or_else(|| format!("truncated row at byte {at}"))?;
            rows.validate_stored(row_bytes)
                .map_err(|e| format!("invalid row at byte {at}: {e}"))?;
            count += match layout.count {
                true => u32_at(bytes, at + layout.count_at()) as u64,
                false => 1,
            };
            entries += 1;
            at = row.end;
        }
        let group = match entries >= INDEX_AT {
            true => Group::Indexed(Box::new(Indexed::build(bytes.to_vec(), layout, id))),
            false => Group::Compact(Block::from_slice(bytes)),
        };
        Ok((group, count))
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

    fn xs(g: &Group, l: EntryLayout) -> Vec<i32> {
        g.entries(l)
            .map(|e| i32::from_le_bytes(g.row(&e)[1..5].try_into().unwrap()))
            .collect()
    }

    #[test]
    fn push_update_remove() {
        let (l, rl) = (EntryLayout::new(true, true, true), rows());
        let id = RowIdentity::new(&rl, None);
        let mut g = Group::default();
        g.push(l, &id, &row(1), (2, 0), 10);
        g.push(l, &id, &row(2), (1, 3), 20);
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
        g.remove(&id, &first);
        assert_eq!(g.entries(l).count(), 1);
        assert_eq!(g.row(&g.first(l).unwrap()), row(2));
    }

    #[test]
    fn minimal_header_without_optional_fields() {
        let (l, rl) = (EntryLayout::new(false, false, false), rows());
        let mut g = Group::default();
        g.push(l, &RowIdentity::new(&rl, None), &row(1), (1, 0), 0);
        assert_eq!(g.stored_bytes(), 4 + 5);
        let e = g.first(l).unwrap();
        assert_eq!(
            (g.count(l, &e), g.matches(l, &e), g.written_at(l, &e)),
            (1, 0, 0)
        );
    }

    #[test]
    fn purges_expired_rows() {
        let (l, rl) = (EntryLayout::new(true, false, true), rows());
        let id = RowIdentity::new(&rl, None);
        let mut g = Group::default();
        g.push(l, &id, &row(1), (3, 0), 100);
        g.push(l, &id, &row(2), (1, 0), 200);
        assert_eq!(g.purge_expired(l, &id, 50, 180), 3);
        assert_eq!(g.entries(l).count(), 1);
        assert_eq!(g.purge_expired(l, &id, 50, 249), 0);
        assert_eq!(g.purge_expired(l, &id, 50, 250), 1);
        assert!(g.is_empty());
    }

    /// A group grows past the threshold into the indexed form, keeps its order and finds every
    /// row by identity through removals and compactions, and goes back to one block when small.
    #[test]
    fn indexes_many_rows_and_compacts_back() {
        let (l, rl) = (EntryLayout::new(false, true, false), rows());
        let schema = Schema::new(vec![Field::new("x", DataType::Int)]);
        let pk = KeyProjection::new(&schema, &[0]);
        let id = RowIdentity::new(&rl, Some(&pk));
        let mut g = Group::default();
        let n = 1000;
        for x in 0..n {
            g.push(l, &id, &row(x), (1, x as u32), 0);
            assert_eq!(g.is_indexed(), x as usize + 1 >= INDEX_AT, "after {x}");
        }
        assert_eq!(xs(&g, l), (0..n).collect::<Vec<_>>());
        for x in (0..n).filter(|x| x % 3 != 0) {
            let e = g.find(l, &id, &row(x)).expect("stored");
            assert_eq!(g.matches(l, &e), x as u32);
            g.remove(&id, &e);
            assert!(g.find(l, &id, &row(x)).is_none());
        }
        let left: Vec<i32> = (0..n).filter(|x| x % 3 == 0).collect();
        assert_eq!(xs(&g, l), left);
        assert_eq!(g.stored_bytes(), left.len() * (8 + 5));
        for &x in &left {
            assert_eq!(g.row(&g.find(l, &id, &row(x)).unwrap()), row(x));
        }
        let mut snapshot = Vec::new();
        g.write_entries(&mut snapshot);
        let (restored, rows) = Group::from_bytes(&snapshot, l, &rl, &id).unwrap();
        assert!(restored.is_indexed());
        assert_eq!(rows, left.len() as u64);
        assert_eq!(restored, g);
        for &x in &left[..left.len() - COMPACT_BELOW + 1] {
            let e = g.find(l, &id, &row(x)).unwrap();
            g.remove(&id, &e);
        }
        assert!(!g.is_indexed());
        assert_eq!(xs(&g, l), left[left.len() - COMPACT_BELOW + 1..].to_vec());
        assert_eq!(g.overhead_bytes(), 0);
    }

    /// Removing rows from the front moves the first entry without reading removed ones again,
    /// and a multiset side finds rows by value.
    #[test]
    fn indexed_head_and_multiset_identity() {
        let (l, rl) = (EntryLayout::new(true, false, true), rows());
        let id = RowIdentity::new(&rl, None);
        let mut g = Group::default();
        for x in 0..100 {
            g.push(l, &id, &row(x), (1, 0), x as i64);
        }
        for x in 0..50 {
            assert_eq!(g.row(&g.first(l).unwrap()), row(x));
            let e = g.find(l, &id, &row(x)).unwrap();
            g.remove(&id, &e);
        }
        assert_eq!(g.row(&g.first(l).unwrap()), row(50));
        assert_eq!(g.purge_expired(l, &id, 10, 69), 10);
        assert_eq!(xs(&g, l), (60..100).collect::<Vec<_>>());
        assert!(g.is_indexed());
        assert_eq!(g.purge_expired(l, &id, 10, 89), 20);
        assert!(!g.is_indexed(), "20 rows are kept in one block");
    }

    /// The rows of a group, with multiplicity, through pushes, count changes, removals,
    /// compactions, expiry and both forms.
    #[test]
    fn counts_rows_with_multiplicity() {
        let (l, rl) = (EntryLayout::new(true, false, true), rows());
        let id = RowIdentity::new(&rl, None);
        let mut g = Group::default();
        let scan = |g: &Group| g.entries(l).map(|e| g.count(l, &e) as u64).sum::<u64>();
        for x in 0..200 {
            g.push(l, &id, &row(x), (1 + x as u32 % 3, 0), x as i64);
            assert_eq!(g.rows(l), scan(&g));
        }
        assert!(g.is_indexed());
        for x in (0..200).step_by(2) {
            let e = g.find(l, &id, &row(x)).unwrap();
            match x % 4 {
                0 => g.set_count(l, &e, 7),
                _ => g.remove(&id, &e),
            }
            assert_eq!(g.rows(l), scan(&g), "after {x}");
        }
        g.purge_expired(l, &id, 50, 150);
        assert!(g.is_indexed());
        assert_eq!(g.rows(l), scan(&g));
        g.purge_expired(l, &id, 50, 240);
        assert!(!g.is_indexed());
        assert_eq!(g.rows(l), scan(&g));
        assert!(g.rows(l) > 0);
    }

    #[test]
    fn from_bytes_checks_everything() {
        let (l, rl) = (EntryLayout::new(false, true, false), rows());
        let id = RowIdentity::new(&rl, None);
        let mut g = Group::default();
        g.push(l, &id, &row(1), (1, 0), 0);
        let mut good = Vec::new();
        g.write_entries(&mut good);
        assert_eq!(Group::from_bytes(&good, l, &rl, &id).unwrap(), (g, 1));
        assert!(Group::from_bytes(&good[..good.len() - 1], l, &rl, &id).is_err());
        assert!(Group::from_bytes(&[], l, &rl, &id).is_err());
        let mut huge = good.clone();
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Group::from_bytes(&huge, l, &rl, &id).is_err());
        let mut unavailable = good.clone();
        let row_at = l.header_len();
        unavailable[row_at..].copy_from_slice(&[1, 1, 0, 0, 0]); // null bit, marked slot
        let err = Group::from_bytes(&unavailable, l, &rl, &id).unwrap_err();
        assert!(err.contains("column 0 is unavailable"), "{err}");
    }
}
