//! The join's emission rules, in one place, over every state layout.
//!
//! For an input row `r` on side S with visible matches M on the other side O (Flink's
//! `StreamingJoinOperator#processElement`):
//!
//! | r      | S outer | O outer | M empty    | for each m in M                                        | state           |
//! |--------|---------|---------|------------|--------------------------------------------------------|-----------------|
//! | +I/+U  | no      | no      | -          | `kind(r)[r,m]`                                         | add r           |
//! | +I/+U  | no      | yes     | -          | if matches(m)=0: `-D[null,m]`; matches(m)+=1; `+I[r,m]` | add r           |
//! | +I/+U  | yes     | no      | `+I[r,null]` | `+I[r,m]`                                            | add r, \|M\|    |
//! | +I/+U  | yes     | yes     | `+I[r,null]` | as row 2                                             | add r, \|M\|    |
//! | -U/-D  | no      | no      | -          | `kind(r)[r,m]`                                         | retract r       |
//! | -U/-D  | no      | yes     | -          | `kind(r)[r,m]`; if matches(m)=1: `+I[null,m]`; matches(m)-=1 | retract r |
//! | -U/-D  | yes     | no      | `-D[r,null]` | `-D[r,m]`                                            | retract r       |
//! | -U/-D  | yes     | yes     | `-D[r,null]` | as row 6 but `-D[r,m]`                               | retract r       |
//!
//! A `+I`/`+U` whose primary key is already stored (layouts with a primary key) *replaces* the
//! stored row: when the bytes are the same nothing is emitted (the stored row's write time is
//! refreshed: it is a write); otherwise the stored row is retracted as a `-U` would retract it (rows
//! 5-8 with kind `-U`), then the new row accumulated as a `+U` (rows 1-4). The changelog is then
//! that of Flink's join behind a `ChangelogNormalize`, which turns such a record into `-U(old)
//! +U(new)`, without that operator's second copy of the state.
//!
//! Deliberate differences from Flink 2.3, each making the changelog correct where Flink's is not:
//! - A replacement (above) retracts what the stored row emitted. Flink's join alone (Debezium
//!   re-deliveries after a connector restart, incremental snapshots' `r` for existing rows, upsert
//!   streams) emits the new row's joined rows next to the old ones, which then stay for good.
//! - `matches(m)` always equals the number of rows (with multiplicity) stored on the other side that
//!   match `m`: a replacement retracts its match before counting the new one (FLINK-40681 loses the
//!   null-padded row there), and a duplicate row of a multiset side counts one.
//! - A retraction of a row that is not in state emits nothing (Flink emits retractions of joined rows
//!   that were never emitted); it is counted, and fails the batch under [`RetractionPolicy::Fail`].
//! - A retraction emits the *stored* row (for a primary-key side it is found by primary key), so
//!   what is retracted downstream is exactly what was emitted.
//!   On a side fed by another join (`SideSpec::exact_retractions`, see [`crate::chain`]) a
//!   retraction whose row differs from the stored row of its primary key is stale (the row moved
//!   between the upstream join's keys and its `+U` came first) and counts as absent.
//! - A row whose join key has a null column never matches (SQL equality), but is stored, so its
//!   outer-join null padding is retracted correctly.
//! - *Unavailable* columns (see `cdcjoin_model::row`: values a change does not carry, such as
//!   Debezium's placeholder for an unchanged TOASTed value) are never stored nor emitted; Flink's
//!   `debezium-json` reads the placeholder as the value. On a side with a primary key a `+I`/`+U`
//!   takes them from the stored row of its primary key and goes on as a replacement, and a
//!   `-U`/`-D` retracts the stored row as always. A change is *rejected* (not applied, nothing
//!   emitted, a rejection written to the output for the caller's bad-record policy, see
//!   [`crate::batch`]) when an unavailable column is part of the join key or the primary key, when
//!   its side has no primary key, or when a `+I`/`+U` finds no stored row to fill from (first sight
//!   of the key, or expired).
//!
//! TTL follows `table.exec.state.ttl` with `OnCreateAndWrite` / `NeverReturnExpired`: a row expires
//! `ttl` after its last write (insert, an update of its match counter or of its multiplicity, or an
//! identical replacement), expired rows are invisible at once, and expiry emits nothing. They are
//! freed by a periodic sweep, and before that when their key is touched (a key of few rows) or when
//! a change finds them by primary key or value (a key of many rows: freeing them by a scan there
//! would make a change cost the rows of its key).

use crate::batch::{BatchReader, BatchStart, InputRecord, Left, OutputBound, OutputWriter};
use crate::group::{Entry, EntryLayout, Group};
use crate::overlay::{sum_groups, KeyGroupState};
use crate::reject::{self, Refusal};
use crate::snapshot::{Compression, Definition, Frozen};
use crate::spec::{JoinSpec, KeyGroupRange, ResolvedSide, RetractionPolicy, Side, StateLayout};
use crate::state::{hash_key, KeySlot};
use crate::ttl::{self, Sweep};
use cdcjoin_model::{RowKind, RowRef};
use std::ops::Range;
use std::sync::Weak;

/// Why a batch or a snapshot operation failed. Every message names the record or key group.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum JoinError {
    /// The declaration is inconsistent.
    #[error("invalid join declaration: {0}")]
    Config(String),
    /// The batch framing is malformed.
    #[error("malformed batch: {0}")]
    Batch(String),
    /// A batch came while changes of the previous one wait ([`JoinEngine::resume`]).
    #[error("{}", crate::batch::PENDING)]
    Pending,
    /// A record's row does not match its side's schema.
    #[error("batch record #{index} ({side:?}): invalid row: {reason}")]
    InvalidRow {
        /// Record index in the batch.
        index: usize,
        /// Its side.
        side: Side,
        /// What is wrong.
        reason: String,
    },
    /// A record's key group is not owned by this instance.
    #[error("batch record #{index}: key group {key_group} is outside this instance's range {}..={}", range.start, range.end)]
    KeyGroup {
        /// Record index in the batch.
        index: usize,
        /// The record's key group.
        key_group: u16,
        /// The owned range.
        range: KeyGroupRange,
    },
    /// A retraction of a row that is not in state, under [`RetractionPolicy::Fail`].
    #[error("batch record #{index}: {kind} of a {side:?} row that is not in state (never inserted, already retracted, or expired): {row}")]
    AbsentRetraction {
        /// Record index in the batch.
        index: usize,
        /// Its side.
        side: Side,
        /// `-U` or `-D`.
        kind: RowKind,
        /// The row, printed.
        row: String,
    },
    /// A snapshot could not be read.
    #[error("snapshot of key group {key_group}: {reason}")]
    Snapshot {
        /// The key group.
        key_group: u16,
        /// What is wrong.
        reason: String,
    },
}

/// Counters of one engine, cumulative since creation (restored state counts in `stored_rows`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JoinStats {
    /// Records processed, per side.
    pub records_in: [u64; 2],
    /// Rows emitted.
    pub rows_out: u64,
    /// Retractions of rows that were not in state.
    pub absent_retractions: u64,
    /// Rows dropped by TTL.
    pub expired_rows: u64,
    /// Records rejected (not applied; see [`crate::batch`]), e.g. for unavailable columns that
    /// cannot be filled.
    pub rejected: u64,
    /// Rows currently in state (with multiplicity).
    pub stored_rows: u64,
    /// Join keys currently in state.
    pub stored_keys: u64,
    /// Bytes of all stored groups (rows and their headers), kept up to date per record.
    pub group_bytes: u64,
    /// Heap bytes the groups of many rows hold beyond their rows (indexes, room to grow, removed
    /// entries not compacted yet), kept up to date per record.
    pub index_bytes: u64,
}

/// The names of [`JoinEngine::counters`], in its order: the contract with callers that read the
/// counters by name (the JNI layer hands both to Java, which looks them up by name once).
pub const COUNTER_NAMES: [&str; 11] = [
    "records_in_left",
    "records_in_right",
    "rows_out",
    "absent_retractions",
    "expired_rows",
    "rejected",
    "state_rows",
    "state_keys",
    "state_row_bytes",
    "state_heap_bytes",
    "state_frozen_bytes",
];

/// How much state an engine holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateSize {
    /// Rows stored (with multiplicity).
    pub rows: u64,
    /// Join keys stored.
    pub keys: u64,
    /// Bytes of the stored groups: encoded rows and their per-row headers.
    pub group_bytes: u64,
    /// Heap bytes held by tables and groups (allocator overhead not included), including
    /// `frozen_bytes`.
    pub heap_bytes: u64,
    /// Heap bytes held only by snapshots being written: the frozen versions of the keys the
    /// engine has written to since the freeze (see [`JoinEngine::freeze`]), freed once the
    /// snapshots are done with their key groups (written out, or dropped).
    pub frozen_bytes: u64,
}

/// A join instance owning a range of key groups.
pub struct JoinEngine {
    pub(crate) sides: [ResolvedSide; 2],
    /// What the state depends on, written into and checked against every snapshot section.
    pub(crate) definition: Definition,
    /// How snapshot sections are written (see [`crate::snapshot`]); restore reads every codec.
    pub(crate) compression: Compression,
    pub(crate) range: KeyGroupRange,
    /// One table per key group of the range, shared with the snapshots being written, and the
    /// keys changed meanwhile (see [`crate::overlay`]).
    pub(crate) key_groups: Vec<KeyGroupState>,
    /// The frozen states that may still be being written.
    pub(crate) freezes: Vec<Weak<Frozen>>,
    pub(crate) stats: JoinStats,
    policy: RetractionPolicy,
    sweep: Sweep,
    /// The join keys of the batch being processed, end to end (kept for its capacity).
    keys: Vec<u8>,
    row_buf: Vec<u8>,
    /// A row with its unavailable columns filled from the stored row (kept for its capacity).
    filled: Vec<u8>,
    /// How much output a call may write, and what a stopped call left.
    bound: OutputBound<Midway>,
    /// Where the change being applied goes on from (taken when it is applied), then where it
    /// stopped, if it did.
    midway: Option<Midway>,
}

/// How far a change got when the output reached its bound within the change's own rows (its key
/// joined with many rows): the fan-out it was in and the row of the other side it stopped after.
/// The next call goes on from there; what came before (validation, counters, expiry, finding
/// the stored row, a replacement's filled row) is not done again. Between the two calls nothing
/// else changes the state (a batch is refused while changes wait), so the entries stay where
/// they are.
#[derive(Debug)]
pub(crate) struct Midway<C = Cursor> {
    /// The fan-out left.
    pub(crate) step: Step,
    /// Where in it.
    pub(crate) at: C,
}

impl<C> Midway<C> {
    /// Stopped `at` adding `row` (see [`Step::Add`]).
    pub(crate) fn adding(
        (kind, row): (RowKind, &[u8]),
        stored: Option<Entry>,
        replaces: bool,
        at: C,
    ) -> Midway<C> {
        let row = row.to_vec();
        let step = Step::Add {
            kind,
            row,
            stored,
            replaces,
        };
        Midway { step, at }
    }

    /// Stopped `at` retracting `stored` (see [`Step::Retract`]).
    pub(crate) fn retracting(
        kind: RowKind,
        stored: Entry,
        then: Option<&[u8]>,
        at: C,
    ) -> Midway<C> {
        let then = then.map(<[u8]>::to_vec);
        let step = Step::Retract { kind, stored, then };
        Midway { step, at }
    }
}

/// One fan-out of a change over the rows joined with it, and what follows it.
#[derive(Debug)]
pub(crate) enum Step {
    /// The stored row at `stored` retracted by a change of kind `kind` (rows 5-8), then removed;
    /// for a replacement, `then` the row that replaces it (rows 1-4 with `+U` follow).
    Retract {
        kind: RowKind,
        stored: Entry,
        then: Option<Vec<u8>>,
    },
    /// `row` added with kind `kind` (rows 1-4), then stored: as a copy of `stored` on a multiset
    /// side; `replaces` when it completes a replacement.
    Add {
        kind: RowKind,
        row: Vec<u8>,
        stored: Option<Entry>,
        replaces: bool,
    },
}

/// Where a fan-out goes on: after the other side's entry that ends at `end` (from the first for
/// 0, where no entry ends), with the rows it has matched so far (with multiplicity).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Cursor {
    end: usize,
    total: u32,
}

/// How many records ahead of the one being applied its table bucket is prefetched.
const PREFETCH_BUCKET: usize = 8;
/// How many records ahead of the one being applied its groups are prefetched (their addresses
/// are read from the bucket prefetched [`PREFETCH_BUCKET`] records earlier).
const PREFETCH_GROUPS: usize = 4;

/// A record of a batch, validated, with its join key (a range of the batch's key buffer) hashed.
struct Prepared<'b> {
    index: usize,
    rec: InputRecord<'b>,
    key: Range<usize>,
    hash: u64,
}

/// What one record touches: its side's declaration and rows, and the other side's, under its key.
struct Ctx<'a> {
    input: Side,
    me: &'a ResolvedSide,
    other: &'a ResolvedSide,
    mine: &'a mut Group,
    theirs: &'a mut Group,
    null_key: bool,
    /// Whether the input row has unavailable columns to take from the stored row.
    fill: bool,
    row_buf: &'a mut Vec<u8>,
    filled: &'a mut Vec<u8>,
    now: i64,
    /// Rows (with multiplicity) freed by TTL while the change was applied.
    expired: u64,
    /// Where the change goes on from (taken when applied), then where it stopped, if it did.
    midway: &'a mut Option<Midway>,
}

/// What a record did to state (also what a change did to a multi-way join's input,
/// [`crate::multiway`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Applied {
    /// A row was added.
    Added,
    /// A row replaced the stored row of its primary key.
    Replaced,
    /// A row was the stored row of its primary key again: only its write time changed.
    Unchanged,
    /// A row with unavailable columns found no stored row of its primary key to fill them from.
    Unfillable,
    /// A stored row was retracted.
    Retracted,
    /// A retraction found no such row: nothing happened.
    Absent,
    /// The output reached its bound within the change's rows: the rest is left to the next call.
    Stopped,
}

/// Emits a pair with the input side's row and the other side's row in left/right order.
#[inline(always)]
fn emit(
    out: &mut OutputWriter<'_>,
    input: Side,
    kind: RowKind,
    mine: Option<&[u8]>,
    theirs: Option<&[u8]>,
) {
    match input {
        Side::Left => out.emit(kind, mine, theirs),
        Side::Right => out.emit(kind, theirs, mine),
    }
}

impl Ctx<'_> {
    /// The stored entry that `row` would replace or retract, if any. An expired one is freed
    /// and not returned.
    #[inline(always)]
    fn find_stored(&mut self, row: &[u8]) -> Option<Entry> {
        let (g, el, id) = (&mut *self.mine, self.me.entry, self.me.identity());
        let found = match self.me.layout {
            StateLayout::JoinKeyContainsUniqueKey => g.first(el),
            _ => g.find(el, &id, row),
        }?;
        ttl::unexpired(self.me, g, found, self.now, &mut self.expired)
    }

    /// The write time at or before which the other side's rows have expired (`i64::MIN` without
    /// a TTL: none has).
    fn their_deadline(&self) -> i64 {
        ttl::deadline(self.other, self.now)
    }

    /// The other side's rows of this key, if the key can match at all.
    fn matches(&mut self) -> Option<&mut Group> {
        (!self.null_key && !self.theirs.is_empty()).then_some(&mut *self.theirs)
    }

    /// Frees the expired rows of both sides' groups of few rows (a scan of a few rows; groups of
    /// many rows keep theirs, invisible, until the sweep or until a change finds them).
    fn expire(&mut self) {
        for (g, side) in [(&mut *self.mine, self.me), (&mut *self.theirs, self.other)] {
            self.expired += ttl::purge_few(side, g, self.now);
        }
    }

    /// Applies one change: the emission table's accumulate or retract half, or what is left of
    /// it after its midway.
    fn apply(&mut self, kind: RowKind, row: &[u8], out: &mut OutputWriter<'_>) -> Applied {
        // Tested before it is taken: taking copies the whole (empty) midway, on every change.
        if self.midway.is_some() {
            if let Some(Midway { step, at }) = self.midway.take() {
                return go_on(self, step, at, out);
            }
        }
        self.expire();
        match kind.is_accumulate() {
            true => accumulate(self, kind, row, out),
            false => retract(self, kind, row, out),
        }
    }
}

impl JoinEngine {
    /// An empty engine for `spec`.
    pub fn new(spec: &JoinSpec) -> Result<JoinEngine, JoinError> {
        let sides = spec.resolve().map_err(JoinError::Config)?;
        Ok(JoinEngine {
            sweep: Sweep::new(&sides),
            key_groups: (0..spec.key_groups.len())
                .map(|_| KeyGroupState::default())
                .collect(),
            freezes: Vec::new(),
            range: spec.key_groups,
            definition: Definition::of(spec, &sides),
            compression: Compression::None,
            sides,
            stats: JoinStats::default(),
            policy: spec.absent_retraction,
            keys: Vec::new(),
            row_buf: Vec::new(),
            filled: Vec::new(),
            bound: OutputBound::unbounded(),
            midway: None,
        })
    }

    /// Bounds the output of each [`JoinEngine::process_batch`] or [`JoinEngine::resume`] call to
    /// about `bytes` (see [`OutputBound`]; unbounded by default).
    pub fn set_output_bound(&mut self, bytes: usize) {
        self.bound = OutputBound::new(bytes);
    }

    /// Whether the last call stopped at its output bound with changes left ([`JoinEngine::resume`]
    /// applies them).
    pub fn has_pending(&self) -> bool {
        self.bound.is_pending()
    }

    /// Applies what the last call left (nothing: nothing), as [`JoinEngine::process_batch`]
    /// applies a batch and at its time, stopping again at the output bound.
    pub fn resume(&mut self, out: &mut Vec<u8>) -> Result<usize, JoinError> {
        match self.bound.take() {
            Some(Left {
                changes,
                now,
                midway,
            }) => {
                self.midway = midway;
                self.process_from(&changes.bytes, changes.start, now, out)
            }
            None => Ok(0),
        }
    }

    /// Counters.
    pub fn stats(&self) -> JoinStats {
        self.stats
    }

    /// Every counter and state size, named by [`COUNTER_NAMES`] at the same position.
    pub fn counters(&self) -> [u64; COUNTER_NAMES.len()] {
        let (s, z) = (self.stats, self.state_size());
        [
            s.records_in[0],
            s.records_in[1],
            s.rows_out,
            s.absent_retractions,
            s.expired_rows,
            s.rejected,
            z.rows,
            z.keys,
            z.group_bytes,
            z.heap_bytes,
            z.frozen_bytes,
        ]
    }

    /// The resolved declaration of `side`.
    pub fn side(&self, side: Side) -> &ResolvedSide {
        &self.sides[side as usize]
    }

    /// Processes a batch of input records (see [`crate::batch`]) at time `now` (milliseconds, for
    /// TTL), appending joined rows to `out`. Returns the number of rows emitted. On error, the
    /// records before the failing one have been applied. With an output bound
    /// ([`JoinEngine::set_output_bound`]) it stops after the record, or within a record after the
    /// joined row, at which the output reaches the bound and keeps the rest for
    /// [`JoinEngine::resume`] (a new batch before it is applied is refused).
    ///
    /// The batch is read twice: first every record is validated and its join key projected and
    /// hashed, then the records are applied in order while the table buckets of the record
    /// `PREFETCH_BUCKET` places ahead, and the groups of the one `PREFETCH_GROUPS` ahead, are
    /// prefetched, so the cache misses of several records overlap instead of following each other.
    pub fn process_batch(
        &mut self,
        batch: &[u8],
        now: i64,
        out: &mut Vec<u8>,
    ) -> Result<usize, JoinError> {
        if self.bound.is_pending() {
            return Err(JoinError::Pending);
        }
        self.process_from(batch, BatchStart::default(), now, out)
    }

    /// [`JoinEngine::process_batch`] of a batch, or of the rest of one that begins at `start` in
    /// it, whose first change, when the engine's midway says so, was applied in part; stops after
    /// the change, or within a change after the joined row, at which the output reaches the
    /// bound, keeping the rest.
    fn process_from(
        &mut self,
        batch: &[u8],
        start: BatchStart,
        now: i64,
        out: &mut Vec<u8>,
    ) -> Result<usize, JoinError> {
        if self.midway.is_none() {
            // Not between two parts of a change: a sweep moves the entries a midway points at.
            self.maybe_sweep(now);
        }
        let mut keys = std::mem::take(&mut self.keys);
        keys.clear();
        let (prepared, invalid) = self.prepare_batch(batch, start, &mut keys);
        let mut w = self.bound.writer(out);
        let (mut failed, mut stopped) = (None, None);
        for (i, p) in prepared.iter().enumerate() {
            self.prefetch(
                prepared.get(i + PREFETCH_BUCKET),
                prepared.get(i + PREFETCH_GROUPS),
            );
            w.set_input(&p.rec);
            match self.apply(p, &keys[p.key.clone()], now, &mut w) {
                Err(e) => failed = Some(e),
                Ok(()) if self.midway.is_some() => stopped = Some(i),
                Ok(()) if i + 1 < prepared.len() && w.is_full() => stopped = Some(i + 1),
                Ok(()) => continue,
            }
            break;
        }
        self.keys = keys;
        self.settle();
        if let Some(e) = failed {
            return Err(e);
        }
        if let Some(applied) = stopped {
            let midway = self.midway.take();
            let mut rest = BatchReader::<Side>::from_start(batch, start);
            rest.by_ref().take(applied).for_each(drop);
            let changes = rest.remainder();
            self.bound.keep(Left {
                changes,
                now,
                midway,
            });
            return Ok(w.rows());
        }
        invalid.map_or(Ok(w.rows()), Err)
    }

    /// Merges the keys changed while snapshots held their key groups back into the tables the
    /// snapshots are done with, so that the next freeze finds nothing to merge and the frozen
    /// versions they masked are freed. Each batch ends with it; a caller whose input is idle
    /// calls it once a snapshot is released, or the merge would fall into the next freeze, on the
    /// task thread in a checkpoint's synchronous phase (25-35 ms at 40M rows, bench/README.md).
    pub fn settle(&mut self) {
        for kg in &mut self.key_groups {
            kg.settle(&self.sides);
        }
    }

    /// Validates, projects and hashes the records of `batch` (beginning at `start` in the batch it
    /// came from) up to the first invalid one, whose error is returned with them. The join keys
    /// are appended to `keys`.
    fn prepare_batch<'b>(
        &self,
        batch: &'b [u8],
        start: BatchStart,
        keys: &mut Vec<u8>,
    ) -> (Vec<Prepared<'b>>, Option<JoinError>) {
        let mut prepared = Vec::new();
        for rec in BatchReader::from_start(batch, start) {
            match rec
                .map_err(JoinError::Batch)
                .and_then(|(index, rec)| self.prepare(index, rec, keys))
            {
                Ok(p) => prepared.push(p),
                Err(e) => return (prepared, Some(e)),
            }
        }
        (prepared, None)
    }

    /// Checks one record (`index` names it in errors) and appends its join key to `keys`.
    fn prepare<'b>(
        &self,
        index: usize,
        rec: InputRecord<'b>,
        keys: &mut Vec<u8>,
    ) -> Result<Prepared<'b>, JoinError> {
        let me = &self.sides[rec.side as usize];
        me.row_layout
            .validate(rec.row)
            .map_err(|reason| JoinError::InvalidRow {
                index,
                side: rec.side,
                reason,
            })?;
        if !self.range.contains(rec.key_group) {
            return Err(JoinError::KeyGroup {
                index,
                key_group: rec.key_group,
                range: self.range,
            });
        }
        let start = keys.len();
        me.join_key
            .write(&RowRef::new(&me.row_layout, rec.row), keys);
        Ok(Prepared {
            index,
            rec,
            hash: hash_key(&keys[start..]),
            key: start..keys.len(),
        })
    }

    /// Prefetches the bucket of `bucket`'s key and the groups of `groups`' key.
    fn prefetch(&self, bucket: Option<&Prepared<'_>>, groups: Option<&Prepared<'_>>) {
        let table = |p: &Prepared<'_>| self.key_groups[self.range.offset(p.rec.key_group)].table();
        if let Some(p) = bucket {
            table(p).prefetch_bucket(p.hash);
        }
        if let Some(p) = groups {
            table(p).prefetch_groups(p.hash);
        }
    }

    /// Applies one prepared record whose join key is `key`, or what is left of it after
    /// the engine's midway: changes state and emits, or rejects it (see [`crate::reject`]). Where
    /// it stopped, when the output reached its bound within it, is the engine's midway then.
    fn apply(
        &mut self,
        p: &Prepared<'_>,
        key: &[u8],
        now: i64,
        out: &mut OutputWriter<'_>,
    ) -> Result<(), JoinError> {
        let rec = &p.rec;
        let me = &self.sides[rec.side as usize];
        let unavailable = RowRef::new(&me.row_layout, rec.row).unavailable_columns();
        if self.midway.is_none() {
            self.stats.records_in[rec.side as usize] += 1;
        }
        let why = match reject::refusal(me, &unavailable) {
            Some(why) => why,
            None => match self.change(p, key, !unavailable.is_empty(), now, out) {
                Applied::Unfillable => Refusal::NothingStored,
                Applied::Absent => return self.absent(p),
                Applied::Added => {
                    self.stats.stored_rows += 1;
                    return Ok(());
                }
                Applied::Retracted => {
                    self.stats.stored_rows -= 1;
                    return Ok(());
                }
                Applied::Replaced | Applied::Unchanged | Applied::Stopped => return Ok(()),
            },
        };
        let me = &self.sides[rec.side as usize];
        let row = RowRef::new(&me.row_layout, rec.row);
        out.reject(&reject::message(
            reject::side_name(rec.side),
            me,
            rec.kind,
            &row,
            &unavailable,
            why,
        ));
        self.stats.rejected += 1;
        Ok(())
    }

    /// Counts a retraction of a row that is not in state, and fails under
    /// [`RetractionPolicy::Fail`].
    fn absent(&mut self, p: &Prepared<'_>) -> Result<(), JoinError> {
        self.stats.absent_retractions += 1;
        if self.policy == RetractionPolicy::Ignore {
            return Ok(());
        }
        let rec = &p.rec;
        let row = RowRef::new(&self.sides[rec.side as usize].row_layout, rec.row);
        Err(JoinError::AbsentRetraction {
            index: p.index,
            side: rec.side,
            kind: rec.kind,
            row: reject::print_row(rec.kind, &row),
        })
    }

    /// Applies the change of a record whose join key is `key` to the state of its key, with the
    /// emission table; `fill` when its row has unavailable columns (which the declaration allows)
    /// to take from the stored row; or what is left of it after the engine's midway. Keeps the
    /// key, byte and expiry counters.
    fn change(
        &mut self,
        p: &Prepared<'_>,
        key: &[u8],
        fill: bool,
        now: i64,
        out: &mut OutputWriter<'_>,
    ) -> Applied {
        let rec = &p.rec;
        let s = rec.side as usize;
        let key_group = &mut self.key_groups[self.range.offset(rec.key_group)];
        let me = &self.sides[s];
        let row = RowRef::new(&me.row_layout, rec.row);
        let sides = &self.sides;
        let before = out.rows();
        let (mut expired, mut grown, mut overhead, mut keys) = (0, 0i64, 0i64, 0i64);
        let run = |slot: &mut KeySlot| {
            let [left, right] = &mut slot.sides;
            let (mine, theirs) = if rec.side == Side::Left {
                (left, right)
            } else {
                (right, left)
            };
            let mut ctx = Ctx {
                input: rec.side,
                me,
                other: &sides[1 - s],
                mine,
                theirs,
                null_key: me.join_key.has_null(&row),
                fill,
                row_buf: &mut self.row_buf,
                filled: &mut self.filled,
                now,
                expired: 0,
                midway: &mut self.midway,
            };
            let sizes = |c: &Ctx<'_>| {
                let (a, b) = (&*c.mine, &*c.theirs);
                (
                    (a.stored_bytes() + b.stored_bytes()) as i64,
                    (a.overhead_bytes() + b.overhead_bytes()) as i64,
                )
            };
            let (bytes, extra) = sizes(&ctx);
            let applied = ctx.apply(rec.kind, rec.row, out);
            let (bytes_after, extra_after) = sizes(&ctx);
            (grown, overhead) = (bytes_after - bytes, extra_after - extra);
            expired = ctx.expired;
            applied
        };
        let create = rec.kind.is_accumulate() && !fill;
        let applied = match key_group.change(sides, p.hash, key, create, run) {
            Some((applied, added)) => {
                keys = added;
                applied
            }
            None if rec.kind.is_accumulate() => Applied::Unfillable,
            None => Applied::Absent,
        };
        self.stats.expired_rows += expired;
        self.stats.stored_rows -= expired;
        self.stats.stored_keys = self.stats.stored_keys.saturating_add_signed(keys);
        self.stats.group_bytes = self.stats.group_bytes.saturating_add_signed(grown);
        self.stats.index_bytes = self.stats.index_bytes.saturating_add_signed(overhead);
        self.stats.rows_out += (out.rows() - before) as u64;
        applied
    }

    /// Drops expired rows everywhere when a sweep is due ([`Sweep`]), so rows of keys never
    /// touched again are freed too.
    fn maybe_sweep(&mut self, now: i64) {
        let tables = &mut self.key_groups;
        if let Some(expired) = self.sweep.run(&self.sides, tables, &mut self.freezes, now) {
            self.stats.expired_rows += expired;
            self.stats.stored_rows -= expired;
            self.recount_state();
        }
    }

    /// Recomputes the key and byte counters from the tables (after sweeps and restores).
    pub(crate) fn recount_state(&mut self) {
        self.stats.stored_keys = self.key_groups.iter().map(KeyGroupState::len).sum();
        self.stats.group_bytes = self.sum_groups(|_, g| g.stored_bytes() as u64);
        self.stats.index_bytes = self.sum_groups(|_, g| g.overhead_bytes() as u64);
    }

    /// The sum of `f` over every stored group with its side's declaration (the keys changed while
    /// a snapshot is written included). Walks the whole state.
    fn sum_groups(&self, f: impl Fn(&ResolvedSide, &Group) -> u64) -> u64 {
        sum_groups(&self.key_groups, &self.sides, f)
    }

    /// Size of the state, for metrics: kept up to date per record, so cheap to read after every
    /// batch (it visits each key group's table, not each row).
    pub fn state_size(&self) -> StateSize {
        let tables: usize = self.key_groups.iter().map(KeyGroupState::table_bytes).sum();
        let frozen = self.frozen_bytes();
        StateSize {
            rows: self.stats.stored_rows,
            keys: self.stats.stored_keys,
            group_bytes: self.stats.group_bytes,
            heap_bytes: self.stats.group_bytes + self.stats.index_bytes + tables as u64 + frozen,
            frozen_bytes: frozen,
        }
    }

    /// Encoded bytes of the distinct rows stored (the payload), for benchmarks and tests: walks
    /// every row.
    pub fn payload_bytes(&self) -> u64 {
        self.sum_groups(|side, g| g.entries(side.entry).map(|e| e.row.len() as u64).sum())
    }
}

/// Calls `f(group, entry, count, matches)` for every row of the other side's group `g` written
/// after `deadline` (the others have expired), from the one after `at` on, which `f` may update in
/// place; `f` says whether the output is full. Returns the rows matched, with multiplicity and
/// counting `at.total`; or where it stopped, after a row at which the output was full and before
/// another entry.
fn each_match(
    g: &mut Group,
    el: EntryLayout,
    deadline: i64,
    at: Cursor,
    mut f: impl FnMut(&mut Group, &Entry, u32, u32) -> bool,
) -> Result<u32, Cursor> {
    let Cursor { end, mut total } = at;
    let mut next = g.next_entry_after(el, end);
    while let Some(e) = next {
        let full = g.written_at(el, &e) > deadline && {
            let (count, m) = (g.count(el, &e), g.matches(el, &e));
            total += count;
            f(g, &e, count, m)
        };
        next = g.next_entry(el, Some(&e));
        if full && next.is_some() {
            let end = e.row.end;
            return Err(Cursor { end, total });
        }
    }
    Ok(total)
}

/// `+I`/`+U`: a new row (rows 1-4 of the table), or on a side with a primary key the replacement
/// of the stored row of its primary key (see the module docs).
fn accumulate(ctx: &mut Ctx<'_>, kind: RowKind, row: &[u8], out: &mut OutputWriter<'_>) -> Applied {
    let stored = ctx.find_stored(row);
    let start = Cursor::default();
    match stored {
        _ if ctx.me.layout == StateLayout::NoUniqueKey => {
            adding(ctx, kind, row, stored, false, start, out)
        }
        Some(stored) => replace(ctx, row, stored, out),
        None if ctx.fill => Applied::Unfillable,
        None => adding(ctx, kind, row, None, false, start, out),
    }
}

/// Replaces `stored` (the stored row of `row`'s primary key) by `row`, its unavailable columns
/// taken from `stored`: nothing but a write when the bytes are the same, otherwise a `-U` of the
/// stored row and a `+U` of the new one.
fn replace(ctx: &mut Ctx<'_>, row: &[u8], stored: Entry, out: &mut OutputWriter<'_>) -> Applied {
    let mut filled = std::mem::take(ctx.filled);
    let row = if ctx.fill {
        filled.clear();
        let layout = &ctx.me.row_layout;
        let stored_row = RowRef::new(layout, ctx.mine.row(&stored));
        reject::fill(ctx.me, &RowRef::new(layout, row), &stored_row, &mut filled);
        &filled[..]
    } else {
        row
    };
    let applied = if row == ctx.mine.row(&stored) {
        ctx.mine.touch(ctx.me.entry, &stored, ctx.now);
        Applied::Unchanged
    } else {
        let start = Cursor::default();
        retracting(ctx, RowKind::UpdateBefore, stored, Some(row), start, out)
    };
    *ctx.filled = filled;
    applied
}

/// Goes on with the fan-out `step` of a change stopped `at` a row, and what follows it.
fn go_on(ctx: &mut Ctx<'_>, step: Step, at: Cursor, out: &mut OutputWriter<'_>) -> Applied {
    match step {
        Step::Retract { kind, stored, then } => {
            retracting(ctx, kind, stored, then.as_deref(), at, out)
        }
        Step::Add {
            kind,
            row,
            stored,
            replaces,
        } => adding(ctx, kind, &row, stored, replaces, at, out),
    }
}

/// [`add`] from `at` on; [`Applied::Added`], or [`Applied::Replaced`] when it `replaces`, once
/// done; where it stopped otherwise.
fn adding(
    ctx: &mut Ctx<'_>,
    kind: RowKind,
    row: &[u8],
    stored: Option<Entry>,
    replaces: bool,
    at: Cursor,
    out: &mut OutputWriter<'_>,
) -> Applied {
    match add(ctx, kind, row, stored.as_ref(), at, out) {
        Ok(()) if replaces => Applied::Replaced,
        Ok(()) => Applied::Added,
        Err(at) => {
            *ctx.midway = Some(Midway::adding((kind, row), stored, replaces, at));
            Applied::Stopped
        }
    }
}

/// [`retract_stored`] from `at` on, then for a replacement the [`adding`] of the row `then`;
/// where it stopped, if it did.
fn retracting(
    ctx: &mut Ctx<'_>,
    kind: RowKind,
    stored: Entry,
    then: Option<&[u8]>,
    at: Cursor,
    out: &mut OutputWriter<'_>,
) -> Applied {
    match retract_stored(ctx, kind, &stored, at, out) {
        Err(at) => {
            *ctx.midway = Some(Midway::retracting(kind, stored, then, at));
            Applied::Stopped
        }
        Ok(()) => match then {
            None => Applied::Retracted,
            Some(row) => {
                let start = Cursor::default();
                adding(ctx, RowKind::UpdateAfter, row, None, true, start, out)
            }
        },
    }
}

/// Rows 1-4 of the table from `at` on: then adds `row`, a copy of `stored` on a side without a
/// primary key; where it stopped, if it did (before adding).
fn add(
    ctx: &mut Ctx<'_>,
    kind: RowKind,
    row: &[u8],
    stored: Option<&Entry>,
    at: Cursor,
    out: &mut OutputWriter<'_>,
) -> Result<(), Cursor> {
    let (input, me_outer, other_outer) = (ctx.input, ctx.me.outer, ctx.other.outer);
    let out_kind = if me_outer || other_outer {
        RowKind::Insert
    } else {
        kind
    };
    let (el, now, deadline) = (ctx.other.entry, ctx.now, ctx.their_deadline());
    let mut total = at.total;
    if let Some(g) = ctx.matches() {
        total = each_match(g, el, deadline, at, |g, e, count, m| {
            for _ in 0..count {
                if other_outer && m == 0 {
                    emit(out, input, RowKind::Delete, None, Some(g.row(e)));
                }
                emit(out, input, out_kind, Some(row), Some(g.row(e)));
            }
            if other_outer {
                g.set_matches(el, e, m + 1, now);
            }
            out.is_full()
        })?;
    }
    if me_outer && total == 0 {
        emit(out, input, RowKind::Insert, Some(row), None);
    }
    store(ctx, stored, row, total);
    Ok(())
}

/// Adds `row` to the input side's rows, counting up `stored` (a copy on a multiset side).
fn store(ctx: &mut Ctx<'_>, stored: Option<&Entry>, row: &[u8], matches: u32) {
    let (el, now, g) = (ctx.me.entry, ctx.now, &mut *ctx.mine);
    match stored {
        Some(e) => {
            let count = g.count(el, e) + 1;
            g.set_count(el, e, count);
            g.set_matches(el, e, matches, now);
        }
        None => g.push(el, &ctx.me.identity(), row, (1, matches), now),
    }
}

/// `-U`/`-D`: rows 5-8 of the table ([`Applied::Absent`] when the row is not in state: nothing
/// emitted).
fn retract(ctx: &mut Ctx<'_>, kind: RowKind, row: &[u8], out: &mut OutputWriter<'_>) -> Applied {
    let Some(stored) = ctx.find_stored(row) else {
        return Applied::Absent;
    };
    if ctx.me.exact_retractions && ctx.mine.row(&stored) != row {
        return Applied::Absent;
    }
    retracting(ctx, kind, stored, None, Cursor::default(), out)
}

/// Rows 5-8 of the table from `at` on for the stored row `stored`, retracted by a change of kind
/// `kind`: then removes one copy of it; where it stopped, if it did (before removing).
fn retract_stored(
    ctx: &mut Ctx<'_>,
    kind: RowKind,
    stored: &Entry,
    at: Cursor,
    out: &mut OutputWriter<'_>,
) -> Result<(), Cursor> {
    let mut stored_row = std::mem::take(ctx.row_buf);
    stored_row.clear();
    stored_row.extend_from_slice(ctx.mine.row(stored));
    let (input, me_outer, other_outer) = (ctx.input, ctx.me.outer, ctx.other.outer);
    let out_kind = if me_outer { RowKind::Delete } else { kind };
    let (el, now, deadline) = (ctx.other.entry, ctx.now, ctx.their_deadline());
    let mut total = Ok(at.total);
    if let Some(g) = ctx.matches() {
        total = each_match(g, el, deadline, at, |g, e, count, m| {
            for _ in 0..count {
                emit(out, input, out_kind, Some(&stored_row), Some(g.row(e)));
                if other_outer && m == 1 {
                    emit(out, input, RowKind::Insert, None, Some(g.row(e)));
                }
            }
            if other_outer {
                g.set_matches(el, e, m.saturating_sub(1), now);
            }
            out.is_full()
        });
    }
    if me_outer && matches!(total, Ok(0)) {
        emit(out, input, RowKind::Delete, Some(&stored_row), None);
    }
    *ctx.row_buf = stored_row;
    total.map(|_| unstore(ctx, stored))
}

/// Removes one copy of `stored` from the input side's rows. Counting a copy down is a write of
/// the remaining copies, as Flink's state update is: their write time is refreshed.
fn unstore(ctx: &mut Ctx<'_>, stored: &Entry) {
    (ctx.mine).remove_one(ctx.me.entry, &ctx.me.identity(), stored, ctx.now);
}
