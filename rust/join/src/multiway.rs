//! The multi-way join on one key: up to [`MAX_INPUTS`] inputs sharing a join key, joined by one
//! operator that stores each input's rows once and no intermediate result.
//!
//! # What it computes
//!
//! The declaration is a left-deep chain of binary joins: step `j` (for `j` in `1..n`) joins the
//! result `R(j-1)` of inputs `0..j` with input `j` by its [`JoinType`], INNER, LEFT, RIGHT or
//! FULL, on the common key:
//!
//! ```text
//! R(0) = input 0
//! R(j) = R(j-1) <steps[j-1]> JOIN input j USING (k)        output = R(n-1)
//! ```
//!
//! `USING (k)` is what makes every mix of join types well defined on one key: a row of `R(j-1)`,
//! whatever its null padding, carries the key of its present inputs (SQL's `COALESCE` of the
//! `USING` column), which they share since they matched on it. So a RIGHT or FULL step joins the
//! null-padded rows of input `j` with later inputs on input `j`'s key, as `a FULL JOIN b USING (k)
//! FULL JOIN c USING (k)` does, and every step stays within one key: the result for a key is a
//! function of the inputs' rows under that key. (With `ON a.k = c.k` instead, a row padded where
//! `a` is missing would never match `c`: a different query.)
//! A row whose key has a null column matches nothing (SQL equality) and is stored under the null
//! key, where rows of all inputs never match each other.
//!
//! The changelog is the one the chain of binary [`crate::JoinEngine`]s emits (intermediate sides
//! without a primary key), record by record: for a change of input `i` the same multiset of output
//! changes, kinds included (`+I`/`-D` where a step is outer, the input's kind through inner steps).
//! That includes the chain's transient rows: a change that empties a step's left input under the
//! key and fills it again within one record emits the right-outer padding `+I` and its `-D`, as
//! the chain does. The order follows the chain's step by step, except where the chain visits the
//! rows of a stored intermediate result: it stores them in the order they were joined, which
//! depends on the key's history, where this join enumerates them as the product of the inputs'
//! rows. `tests/multiway.rs` checks the multiset per change against the chain, and the
//! materialized output against the join of the final tables. A change is applied as [`crate::engine`] applies it to its side:
//! a `+I`/`+U` of a stored primary key replaces the stored row (`-U` old, `+U` new), a retraction
//! emits the stored row, a retraction of a row not in state is counted (or fails under
//! [`RetractionPolicy::Fail`]), and `exact_retractions` is honoured.
//!
//! A change carrying *unavailable* columns (such as Debezium's placeholder for an unchanged
//! TOASTed value) follows the two-table join's rules with the same code (`crate::reject`): on an
//! input with a primary key a `+I`/`+U` takes them from the stored row of its primary key and goes
//! on as a replacement, and a `-U`/`-D` retracts the stored row; otherwise (an unavailable join or
//! primary key column, an input without a primary key, nothing stored to fill from) the change is
//! *rejected*: state unchanged, nothing emitted, a rejection entry written to the output
//! ([`OutputWriter::reject_input`], the two-table join's entry with the input's index as its side
//! byte and a message naming `input i`) for the caller's bad-record policy, and the join goes on.
//!
//! # What it saves, what it costs
//!
//! The chain stores every intermediate result: step `j`'s engine holds all of `R(j-1)`, the rows
//! of inputs `0..j` joined and projected, beside input `j`. For a three-table mart that is the
//! orders-with-customers result stored a second time, and every change of a customer rewrites its
//! joined rows in the second join's state. Here state is one [`Group`] per input under each key,
//! nothing else: no intermediate rows, and no per-row match counter either, because under one key
//! every row of an input matches every row of the others, so the counters the binary engine keeps
//! per outer row are the sizes of the other inputs' groups.
//!
//! The price is that a change of input `i` enumerates the rows the chain would have stored: the
//! rows of `R(i-1)` under its key, recomputed as the product of the groups of inputs `0..i` (which
//! the chain reads from its state, already joined), and then, through each later step, that
//! step's input rows, as the chain does. A step that is RIGHT or FULL also needs the number of rows
//! of its left result under the key, the product of the inputs' row counts, which a group of many
//! rows keeps (O(1), so a hot key does not make such a change cost the rows of its key).
//!
//! Snapshots are the two-table join's sections ([`crate::snapshot`]) with one side per input,
//! taken as the two-table join takes them: [`MultiwayJoin::freeze`] shares each key group's table
//! with a [`crate::FrozenState`] written while the join goes on, and a key changed meanwhile is
//! written to a copy of its slot (all inputs' groups) taken at its first write
//! (`crate::overlay`), merged back once the frozen state is done with its key group.
//!
//! Batches ([`MultiwayJoin::process_batch`]) are the two-table join's input frames of
//! [`crate::batch`] with the input's index as the byte in front of each block. Emitted rows use
//! the output format of [`crate::batch`] with one row per input ([`OutputWriter::emit_wide`], read
//! by [`crate::batch::WideEntries`]).
//!
//! # TTL
//!
//! Each input may declare its own `ttl_ms`, as Flink's `StreamingMultiJoinOperator` takes one
//! state retention per input, with the two-table join's rules and code (`ttl`): a row
//! expires `ttl_ms` after its last write (insert, identical replacement, a copy counted up or
//! down on a multiset input), processing time, `OnCreateAndWrite` / `NeverReturnExpired`. An
//! expired row is invisible to every change at once, as if its input had no such row under the
//! key: it matches nothing, and an outer step null-pads where it was the only row. Its expiry
//! emits nothing, and a retraction of it is a retraction of a row not in state. Expired rows are
//! freed when their key is touched (groups of few rows; every group of the key when a later
//! step is RIGHT or FULL, whose emission reads the inputs' row counts: there a change with a TTL
//! declared scans the rows of its key), when a change finds them by primary key or value, and by
//! a sweep every half of the shortest TTL. Snapshots keep
//! each row's write time; a snapshot restores only where the same inputs declare a TTL (it is
//! part of the row entry the section's definition names).
//!
//! Under expiry the output is not the chain's: the chain's intermediate results expire on their
//! own clock, while here only the inputs' rows do (the joined rows of an input's live rows stay
//! visible as long as those rows do).

use crate::batch::{BatchReader, BatchStart, Left, OutputBound, OutputWriter};
use crate::engine::{Applied, JoinError, Midway, StateSize, Step};
use crate::group::{Entry, Group};
use crate::overlay::{sum_groups, KeyGroupState};
use crate::reject::{self, print_row, Refusal};
use crate::snapshot::{Compression, Definition, Frozen};
use crate::spec::{
    resolve_side, same_key_types, JoinType, KeyGroupRange, ResolvedSide, RetractionPolicy, Side,
    SideSpec, StateLayout,
};
use crate::state::{hash_key, Slot};
use crate::ttl::{self, Sweep};
use cdcjoin_model::{RowKind, RowRef};
use serde::{Deserialize, Serialize};
use std::sync::Weak;

/// Most inputs a multi-way join takes.
pub const MAX_INPUTS: usize = 8;

/// A multi-way join as the user declares it (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MultiwaySpec {
    /// The inputs, 2 to [`MAX_INPUTS`], each keyed on the common join key (same column types).
    pub inputs: Vec<SideSpec>,
    /// One join type per input after the first: `steps[j - 1]` joins the result of inputs `0..j`
    /// (left) with input `j` (right).
    pub steps: Vec<JoinType>,
    /// Policy for retractions of absent rows.
    #[serde(default)]
    pub absent_retraction: RetractionPolicy,
    /// Key groups this instance owns.
    pub key_groups: KeyGroupRange,
}

impl MultiwaySpec {
    /// Checks the declaration and resolves every input.
    pub fn resolve(&self) -> Result<Vec<ResolvedSide>, String> {
        let n = self.inputs.len();
        if !(2..=MAX_INPUTS).contains(&n) {
            return Err(format!(
                "a multi-way join takes 2 to {MAX_INPUTS} inputs, not {n}"
            ));
        }
        if self.steps.len() != n - 1 {
            return Err(format!(
                "{n} inputs take {} join types (one per input after the first), not {}",
                n - 1,
                self.steps.len()
            ));
        }
        if self.key_groups.is_empty() {
            return Err("empty key group range".into());
        }
        let sides = (self.inputs.iter().enumerate())
            .map(|(i, spec)| resolve_input(i, spec))
            .collect::<Result<Vec<_>, String>>()?;
        for i in 1..n {
            let name = format!("input {i}");
            same_key_types(
                [("input 0", &self.inputs[0]), (&name, &self.inputs[i])],
                [&sides[0], &sides[i]],
            )?;
        }
        Ok(sides)
    }
}

/// Resolves input `i`. No row keeps a match counter (see the module docs).
fn resolve_input(i: usize, spec: &SideSpec) -> Result<ResolvedSide, String> {
    resolve_side(spec, false).map_err(|e| format!("input {i}: {e}"))
}

/// Why a change was refused. Every message names the input.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MultiwayError {
    /// The declaration is inconsistent.
    #[error("invalid multi-way join declaration: {0}")]
    Config(String),
    /// A batch is malformed (the message names the change by its index in the batch).
    #[error("malformed multi-way join batch: {0}")]
    Batch(String),
    /// A batch came while changes of the previous one wait ([`MultiwayJoin::resume`]).
    #[error("{}", crate::batch::PENDING)]
    Pending,
    /// The change names an input the join does not have.
    #[error("input {input} does not exist: the join has {inputs} inputs")]
    UnknownInput {
        /// The input named.
        input: usize,
        /// How many there are.
        inputs: usize,
    },
    /// The row does not match its input's schema.
    #[error("input {input}: invalid row: {reason}")]
    InvalidRow {
        /// The input.
        input: usize,
        /// What is wrong.
        reason: String,
    },
    /// The change's key group is not owned by this instance.
    #[error("input {input}: key group {key_group} is outside this instance's range {}..={}", range.start, range.end)]
    KeyGroup {
        /// The input.
        input: usize,
        /// The change's key group.
        key_group: u16,
        /// The owned range.
        range: KeyGroupRange,
    },
    /// A retraction of a row that is not in state, under [`RetractionPolicy::Fail`].
    #[error("input {input}: retraction of a row that is not in state: {row}")]
    AbsentRetraction {
        /// The input.
        input: usize,
        /// The change, printed.
        row: String,
    },
    /// A snapshot section could not be written or restored: a [`JoinError::Snapshot`], as the
    /// two-table join reports it.
    #[error(transparent)]
    Snapshot(#[from] JoinError),
}

/// Counters of one multi-way join, cumulative since creation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MultiwayStats {
    /// Changes taken (not refused by a check), per input, absent retractions and rejections
    /// included.
    pub records_in: [u64; MAX_INPUTS],
    /// Rows emitted.
    pub rows_out: u64,
    /// Retractions of rows that were not in state (never inserted, already retracted, or
    /// expired).
    pub absent_retractions: u64,
    /// Rows (with multiplicity) freed because their TTL expired.
    pub expired_rows: u64,
    /// Changes rejected (not applied, see the module docs): unavailable columns that cannot be
    /// filled.
    pub rejected: u64,
    /// Rows stored (with multiplicity).
    pub stored_rows: u64,
    /// Join keys stored.
    pub stored_keys: u64,
    /// Bytes of the stored groups (rows and their headers).
    pub group_bytes: u64,
    /// Heap bytes beyond the groups' entries: each key's array of groups, and the indexes and
    /// spare room of groups of many rows.
    pub overhead_bytes: u64,
}

/// Names of the values [`MultiwayJoin::counters`] returns, in its order: the changes taken per
/// input (all [`MAX_INPUTS`], the inputs the join does not have at 0), then the two-table join's
/// names for the same counters and state sizes ([`crate::COUNTER_NAMES`]).
pub const MULTIWAY_COUNTER_NAMES: [&str; MAX_INPUTS + 9] = [
    "records_in_0",
    "records_in_1",
    "records_in_2",
    "records_in_3",
    "records_in_4",
    "records_in_5",
    "records_in_6",
    "records_in_7",
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

/// The rows of one join key: one group per input.
#[derive(Clone, Default, Debug)]
pub struct MultiSlot {
    groups: Box<[Group]>,
}

impl Slot for MultiSlot {
    fn with_inputs(n: usize) -> MultiSlot {
        MultiSlot {
            groups: vec![Group::default(); n].into_boxed_slice(),
        }
    }

    fn groups(&self) -> &[Group] {
        &self.groups
    }

    fn groups_mut(&mut self) -> &mut [Group] {
        &mut self.groups
    }

    /// The array of groups.
    fn heap_bytes(&self) -> u64 {
        std::mem::size_of_val::<[Group]>(&self.groups) as u64
    }
}

/// A multi-way join instance owning a range of key groups (see the module docs).
pub struct MultiwayJoin {
    pub(crate) inputs: Vec<ResolvedSide>,
    steps: Vec<JoinType>,
    pub(crate) range: KeyGroupRange,
    /// One table per key group of the range, with the keys changed while a frozen state holds it.
    pub(crate) tables: Vec<KeyGroupState<MultiSlot>>,
    /// The frozen states taken ([`Self::freeze`]), to hand a table over before it is changed as a
    /// whole (a restore).
    pub(crate) freezes: Vec<Weak<Frozen<MultiSlot>>>,
    /// What the state depends on, written into and checked against every snapshot section.
    pub(crate) definition: Definition,
    /// How snapshot sections are written.
    pub(crate) compression: Compression,
    /// Heap bytes of a key's slot (its array of groups).
    slot_heap: i64,
    policy: RetractionPolicy,
    /// When expired rows are swept from the whole state.
    sweep: Sweep,
    pub(crate) stats: MultiwayStats,
    /// The join key of the change being applied (kept for its capacity).
    key: Vec<u8>,
    /// How much output a call may write, and what a stopped call left: within a change, where
    /// its rows go on ([`Resume`]).
    bound: OutputBound<Midway<Box<Resume>>>,
    /// The loops of the change being applied ([`Level`]), kept from change to change: each is
    /// written as its loop begins, so none is cleared per change.
    levels: [Level; MAX_INPUTS],
}

impl MultiwayJoin {
    /// An empty join for `spec`.
    pub fn new(spec: &MultiwaySpec) -> Result<MultiwayJoin, MultiwayError> {
        let inputs = spec.resolve().map_err(MultiwayError::Config)?;
        Ok(MultiwayJoin {
            definition: Definition::of_multiway(spec, &inputs),
            compression: Compression::None,
            slot_heap: MultiSlot::with_inputs(inputs.len()).heap_bytes() as i64,
            sweep: Sweep::new(&inputs),
            inputs,
            steps: spec.steps.clone(),
            range: spec.key_groups,
            tables: (0..spec.key_groups.len())
                .map(|_| KeyGroupState::default())
                .collect(),
            freezes: Vec::new(),
            policy: spec.absent_retraction,
            stats: MultiwayStats::default(),
            key: Vec::new(),
            bound: OutputBound::unbounded(),
            levels: [NO_LEVEL; MAX_INPUTS],
        })
    }

    /// Bounds the output of each call, as [`crate::JoinEngine::set_output_bound`] does.
    pub fn set_output_bound(&mut self, bytes: usize) {
        self.bound = OutputBound::new(bytes);
    }

    /// Whether the last call stopped at its output bound with changes left.
    pub fn has_pending(&self) -> bool {
        self.bound.is_pending()
    }

    /// Applies what the last call left (nothing: nothing), at its batch's time, stopping again at
    /// the bound.
    pub fn resume(&mut self, out: &mut Vec<u8>) -> Result<usize, MultiwayError> {
        match self.bound.take() {
            Some(Left {
                changes,
                now,
                midway,
            }) => self.process_from(&changes.bytes, changes.start, now, midway, out),
            None => Ok(0),
        }
    }

    /// Counters.
    pub fn stats(&self) -> MultiwayStats {
        self.stats
    }

    /// Every counter and state size, named by [`MULTIWAY_COUNTER_NAMES`] at the same position.
    pub fn counters(&self) -> [u64; MULTIWAY_COUNTER_NAMES.len()] {
        let (s, z) = (self.stats, self.state_size());
        let mut values = [0; MULTIWAY_COUNTER_NAMES.len()];
        values[..MAX_INPUTS].copy_from_slice(&s.records_in);
        values[MAX_INPUTS..].copy_from_slice(&[
            s.rows_out,
            s.absent_retractions,
            s.expired_rows,
            s.rejected,
            z.rows,
            z.keys,
            z.group_bytes,
            z.heap_bytes,
            z.frozen_bytes,
        ]);
        values
    }

    /// Size of the state, kept up to date per change (cheap to read).
    pub fn state_size(&self) -> StateSize {
        let tables: usize = self.tables.iter().map(KeyGroupState::table_bytes).sum();
        let (s, frozen) = (self.stats, self.frozen_bytes());
        StateSize {
            rows: s.stored_rows,
            keys: s.stored_keys,
            group_bytes: s.group_bytes,
            heap_bytes: s.group_bytes + s.overhead_bytes + tables as u64 + frozen,
            frozen_bytes: frozen,
        }
    }

    /// Applies one change of input `input` whose join key lies in `key_group` at processing time
    /// `now` (milliseconds, for TTL), appending the joined rows it causes to `out`
    /// ([`OutputWriter::emit_wide`], one row per input), or its rejection
    /// ([`OutputWriter::reject_input`], see the module docs), all of them whatever the writer's
    /// bound. On error nothing was applied nor emitted (expired rows of the key may have been
    /// freed).
    pub fn apply(
        &mut self,
        input: usize,
        kind: RowKind,
        key_group: u16,
        row: &[u8],
        now: i64,
        out: &mut OutputWriter<'_>,
    ) -> Result<(), MultiwayError> {
        let change = (input, kind, key_group, row);
        self.apply_change(change, now, Bounded::No, out).map(drop)
    }

    /// [`MultiwayJoin::apply`], or what is left of the change after `bounded`'s midway; when
    /// bounded, it stops after the row at which the writer is full, returning where.
    fn apply_change(
        &mut self,
        (input, kind, key_group, row): (usize, RowKind, u16, &[u8]),
        now: i64,
        bounded: Bounded,
        out: &mut OutputWriter<'_>,
    ) -> Result<Option<Midway<Box<Resume>>>, MultiwayError> {
        self.check(input, key_group, row)?;
        let (bounded, midway) = match bounded {
            Bounded::No => (false, None),
            Bounded::From(m) => (true, m),
        };
        if midway.is_none() {
            self.stats.records_in[input] += 1;
        }
        let me = &self.inputs[input];
        let r = RowRef::new(&me.row_layout, row);
        let unavailable = r.unavailable_columns();
        if let Some(why) = reject::refusal(me, &unavailable) {
            self.reject(input, kind, row, &unavailable, why, out);
            return Ok(None);
        }
        self.key.clear();
        me.join_key.write(&r, &mut self.key);
        let mut ctx = Change {
            inputs: &self.inputs,
            steps: &self.steps,
            input,
            kind,
            visible: !me.join_key.has_null(&r),
            fill: !unavailable.is_empty(),
            now,
            deadlines: std::array::from_fn(|j| {
                (self.inputs.get(j)).map_or(i64::MIN, |side| ttl::deadline(side, now))
            }),
            expired: 0,
            bounded,
            stopped: None,
            levels: &mut self.levels,
        };
        let table = &mut self.tables[self.range.offset(key_group)];
        let before = out.rows();
        let d = ctx.apply_in(table, &self.key, self.slot_heap, (row, midway), out);
        let s = &mut self.stats;
        s.stored_keys = s.stored_keys.saturating_add_signed(d.keys);
        s.group_bytes = s.group_bytes.saturating_add_signed(d.bytes);
        s.overhead_bytes = s.overhead_bytes.saturating_add_signed(d.overhead);
        s.rows_out += (out.rows() - before) as u64;
        s.expired_rows += d.expired;
        s.stored_rows -= d.expired;
        match d.applied {
            Applied::Added => s.stored_rows += 1,
            Applied::Retracted => s.stored_rows -= 1,
            Applied::Replaced | Applied::Unchanged => {}
            Applied::Unfillable => {
                let why = Refusal::NothingStored;
                self.reject(input, kind, row, &unavailable, why, out);
            }
            Applied::Absent => return self.absent(input, kind, row).map(|()| None),
            Applied::Stopped => return Ok(ctx.stopped),
        }
        Ok(None)
    }

    /// Applies the changes of `batch` in order (input frames of [`crate::batch`], each block
    /// behind its input's index) at processing time `now` (milliseconds, for TTL; a sweep of
    /// expired rows runs first when one is due), appending their output entries, each stamped
    /// with its change's timestamp, to `out`; the rows emitted. On error the changes before the
    /// failing one stay applied and their entries written: the caller fails (the job restarts
    /// from a snapshot). With an output bound it stops after the change at which the output
    /// reaches the bound, or within a change after the row at which it does, and keeps the rest
    /// for [`MultiwayJoin::resume`] (a new batch before it is applied is refused).
    pub fn process_batch(
        &mut self,
        batch: &[u8],
        now: i64,
        out: &mut Vec<u8>,
    ) -> Result<usize, MultiwayError> {
        if self.bound.is_pending() {
            return Err(MultiwayError::Pending);
        }
        self.process_from(batch, BatchStart::default(), now, None, out)
    }

    /// [`MultiwayJoin::process_batch`] of a batch, or of the rest of one that begins at `start` in
    /// it, whose first change, when `midway` says so, was applied in part.
    fn process_from(
        &mut self,
        batch: &[u8],
        start: BatchStart,
        now: i64,
        mut midway: Option<Midway<Box<Resume>>>,
        out: &mut Vec<u8>,
    ) -> Result<usize, MultiwayError> {
        if midway.is_none() {
            // Not between two parts of a change: a sweep moves the entries a midway points at.
            self.maybe_sweep(now);
        }
        let mut w = self.bound.writer(out);
        let mut reader = BatchReader::<u8>::from_start(batch, start);
        let (mut failed, mut stopped) = (None, None);
        loop {
            let at_change = reader.clone();
            let Some(rec) = reader.next() else { break };
            let applied = rec.map_err(MultiwayError::Batch).and_then(|(_, rec)| {
                w.set_input(&rec);
                let change = (rec.side as usize, rec.kind, rec.key_group, rec.row);
                // Tested before it is taken: taking copies the whole (empty) midway.
                let from = midway.is_some().then(|| midway.take()).flatten();
                self.apply_change(change, now, Bounded::From(from), &mut w)
            });
            match applied {
                Err(e) => failed = Some(e),
                Ok(Some(m)) => stopped = Some((at_change.remainder(), Some(m))),
                Ok(None) if w.is_full() => stopped = Some((reader.remainder(), None)),
                Ok(None) => continue,
            }
            break;
        }
        self.settle();
        if let Some(e) = failed {
            return Err(e);
        }
        if let Some((changes, midway)) = stopped.filter(|(c, _)| !c.bytes.is_empty()) {
            self.bound.keep(Left {
                changes,
                now,
                midway,
            });
        }
        Ok(w.rows())
    }

    /// Drops expired rows everywhere when a sweep is due ([`Sweep`]), so that rows of keys never
    /// touched again are freed too, and recounts the state.
    fn maybe_sweep(&mut self, now: i64) {
        let tables = &mut self.tables;
        let Some(expired) = self.sweep.run(&self.inputs, tables, &mut self.freezes, now) else {
            return;
        };
        let s = &mut self.stats;
        s.expired_rows += expired;
        s.stored_rows -= expired;
        s.stored_keys = self.tables.iter().map(KeyGroupState::len).sum();
        s.group_bytes = sum_groups(&self.tables, &self.inputs, |_, g| g.stored_bytes() as u64);
        let groups = sum_groups(&self.tables, &self.inputs, |_, g| g.overhead_bytes() as u64);
        s.overhead_bytes = groups + s.stored_keys * self.slot_heap as u64;
    }

    /// Merges the keys changed while frozen states held their key groups back into the tables
    /// the frozen states are done with, so that the next freeze finds nothing to merge (see
    /// [`crate::JoinEngine::settle`]: each batch ends with it; an idle caller calls it once a
    /// frozen state is released).
    pub fn settle(&mut self) {
        for kg in &mut self.tables {
            kg.settle(&self.inputs);
        }
    }

    /// Refuses a change this join cannot apply: an unknown input, an invalid row, a key group not
    /// owned.
    fn check(&self, input: usize, key_group: u16, row: &[u8]) -> Result<(), MultiwayError> {
        let inputs = self.inputs.len();
        let me = (self.inputs.get(input)).ok_or(MultiwayError::UnknownInput { input, inputs })?;
        (me.row_layout.validate(row))
            .map_err(|reason| MultiwayError::InvalidRow { input, reason })?;
        if !self.range.contains(key_group) {
            return Err(MultiwayError::KeyGroup {
                input,
                key_group,
                range: self.range,
            });
        }
        Ok(())
    }

    /// Writes the rejection of a change of `input` whose unavailable columns are `unavailable`,
    /// refused for `why`, as the two-table join words it, and counts it.
    fn reject(
        &mut self,
        input: usize,
        kind: RowKind,
        row: &[u8],
        unavailable: &[usize],
        why: Refusal,
        out: &mut OutputWriter<'_>,
    ) {
        let me = &self.inputs[input];
        let r = RowRef::new(&me.row_layout, row);
        let name = format!("input {input}");
        out.reject_input(
            input,
            &reject::message(&name, me, kind, &r, unavailable, why),
        );
        self.stats.rejected += 1;
    }

    /// Counts a retraction of a row that is not in state, and fails under
    /// [`RetractionPolicy::Fail`].
    fn absent(&mut self, input: usize, kind: RowKind, row: &[u8]) -> Result<(), MultiwayError> {
        self.stats.absent_retractions += 1;
        if self.policy == RetractionPolicy::Ignore {
            return Ok(());
        }
        let row = print_row(kind, &RowRef::new(&self.inputs[input].row_layout, row));
        Err(MultiwayError::AbsentRetraction { input, row })
    }
}

/// One change of one input, about to be applied to the rows of its key.
struct Change<'a> {
    inputs: &'a [ResolvedSide],
    steps: &'a [JoinType],
    input: usize,
    kind: RowKind,
    /// False for a null join key: the other rows under it match nothing, they are not visible.
    visible: bool,
    /// Whether the row has unavailable columns to take from the stored row of its primary key.
    fill: bool,
    /// The processing time of the change (the write time of the rows it writes).
    now: i64,
    /// Per input, the write time at or before which its rows have expired (`i64::MIN` without a
    /// TTL): those rows are invisible.
    deadlines: [i64; MAX_INPUTS],
    /// Rows (with multiplicity) freed by TTL while the change was applied.
    expired: u64,
    /// Whether the change stops after the row at which the output is full.
    bounded: bool,
    /// Where it stopped, if it did.
    stopped: Option<Midway<Box<Resume>>>,
    /// The loops of its emission ([`Chain::levels`]).
    levels: &'a mut [Level; MAX_INPUTS],
}

/// Whether a change may stop within its rows, and where it goes on from.
enum Bounded {
    /// It may not: its rows are written whole.
    No,
    /// It may, going on from where it stopped before, if it did.
    From(Option<Midway<Box<Resume>>>),
}

/// What a change did to the state, for the counters.
struct Delta {
    applied: Applied,
    /// Rows (with multiplicity) freed by TTL.
    expired: u64,
    /// Join keys added (1) or removed (-1).
    keys: i64,
    /// Change in the groups' stored bytes.
    bytes: i64,
    /// Change in the heap bytes beyond them (groups' indexes, slots' arrays of groups).
    overhead: i64,
}

impl Change<'_> {
    /// Applies the change to the rows of its join key `key` in `table` (through its overlay while
    /// a frozen state holds it), a key's slot taking `slot_heap` heap bytes.
    fn apply_in(
        &mut self,
        table: &mut KeyGroupState<MultiSlot>,
        key: &[u8],
        slot_heap: i64,
        (row, midway): (&[u8], Option<Midway<Box<Resume>>>),
        out: &mut OutputWriter<'_>,
    ) -> Delta {
        let create = self.kind.is_accumulate() && !self.fill;
        let (kind, inputs) = (self.kind, self.inputs);
        let run = |slot: &mut MultiSlot| self.apply(slot, row, midway, out);
        match table.change(inputs, hash_key(key), key, create, run) {
            Some((mut d, keys)) => {
                (d.keys, d.overhead) = (keys, d.overhead + keys * slot_heap);
                d
            }
            None => Delta {
                applied: match kind.is_accumulate() {
                    true => Applied::Unfillable,
                    false => Applied::Absent,
                },
                expired: 0,
                keys: 0,
                bytes: 0,
                overhead: 0,
            },
        }
    }

    /// Applies the change to `slot`: frees expired rows (see [`Self::expire`]), emits, then adds
    /// or removes the input's row as [`crate::engine`] does for its side; or goes on after
    /// `midway`.
    fn apply(
        &mut self,
        slot: &mut MultiSlot,
        row: &[u8],
        midway: Option<Midway<Box<Resume>>>,
        out: &mut OutputWriter<'_>,
    ) -> Delta {
        let sizes = |slot: &MultiSlot| {
            (slot.groups.iter()).fold((0, 0), |(b, o), g| {
                (b + g.stored_bytes() as i64, o + g.overhead_bytes() as i64)
            })
        };
        let (b, o) = sizes(slot);
        let applied = match midway {
            Some(Midway { step, at }) => self.go_on(slot, step, at, out),
            None => {
                self.expire(slot);
                match self.kind.is_accumulate() {
                    true => self.accumulate(slot, row, out),
                    false => self.retract(slot, row, out),
                }
            }
        };
        let (b2, o2) = sizes(slot);
        Delta {
            applied,
            expired: self.expired,
            keys: 0,
            bytes: b2 - b,
            overhead: o2 - o,
        }
    }

    /// Frees the expired rows of the key's groups of few rows, and of its groups of many rows
    /// too when a later step is RIGHT or FULL: its emission needs the number of visible rows of
    /// each input, which a group keeps only of all its rows. Otherwise a group of many rows keeps
    /// its expired rows, invisible ([`View::rows`]), until the sweep or until a change finds them
    /// by primary key or value (as in the two-table join, so that a hot key's change does not
    /// cost a scan of its rows).
    fn expire(&mut self, slot: &mut MultiSlot) {
        let all = self.needs_counts();
        for (side, g) in self.inputs.iter().zip(slot.groups.iter_mut()) {
            self.expired += match all {
                true => ttl::purge_all(side, g, self.now),
                false => ttl::purge_few(side, g, self.now),
            };
        }
    }

    /// Whether the emission reads the row counts of the key's inputs ([`View::counts`]): when a
    /// step after the changed input is right-outer (only steps after it see the change come
    /// from the left).
    fn needs_counts(&self) -> bool {
        (self.input + 1..self.inputs.len()).any(|j| self.steps[j - 1].is_outer(Side::Right))
    }

    /// The stored entry of the input that `row` would replace or retract. An expired one is
    /// freed and not returned.
    fn find_stored(&mut self, groups: &mut [Group], row: &[u8]) -> Option<Entry> {
        let (me, g) = (&self.inputs[self.input], &mut groups[self.input]);
        let found = match me.layout {
            StateLayout::JoinKeyContainsUniqueKey => g.first(me.entry),
            _ => g.find(me.entry, &me.identity(), row),
        }?;
        ttl::unexpired(me, g, found, self.now, &mut self.expired)
    }

    /// `+I`/`+U`: a new row, a copy of a stored one on a multiset input, or the replacement of the
    /// stored row of its primary key (which a row with unavailable columns needs).
    fn accumulate(
        &mut self,
        slot: &mut MultiSlot,
        row: &[u8],
        out: &mut OutputWriter<'_>,
    ) -> Applied {
        let me = &self.inputs[self.input];
        match self.find_stored(&mut slot.groups, row) {
            Some(e) if me.layout != StateLayout::NoUniqueKey => self.replace(slot, row, e, out),
            None if self.fill => Applied::Unfillable,
            stored => self.adding(slot, self.kind, row, (stored, false), None, out),
        }
    }

    /// Replaces `stored`, the stored row of `row`'s primary key, by `row`, its unavailable
    /// columns taken from `stored`: nothing when the bytes are the same, otherwise a `-U` of the
    /// stored row and a `+U` of the new one.
    fn replace(
        &mut self,
        slot: &mut MultiSlot,
        row: &[u8],
        stored: Entry,
        out: &mut OutputWriter<'_>,
    ) -> Applied {
        let (me, i) = (&self.inputs[self.input], self.input);
        let old = slot.groups[i].row(&stored);
        let mut filled = Vec::new();
        let row = if self.fill {
            let (new, from) = (
                RowRef::new(&me.row_layout, row),
                RowRef::new(&me.row_layout, old),
            );
            reject::fill(me, &new, &from, &mut filled);
            &filled[..]
        } else {
            row
        };
        if old == row {
            slot.groups[i].touch(me.entry, &stored, self.now);
            return Applied::Unchanged;
        }
        let kind = RowKind::UpdateBefore;
        self.retracting(slot, (kind, stored), Some(row), None, out)
    }

    /// `-U`/`-D`: retracts the stored row (emitting it, not the change's row).
    fn retract(&mut self, slot: &mut MultiSlot, row: &[u8], out: &mut OutputWriter<'_>) -> Applied {
        let (me, i) = (&self.inputs[self.input], self.input);
        let Some(e) = self.find_stored(&mut slot.groups, row) else {
            return Applied::Absent;
        };
        if me.exact_retractions && slot.groups[i].row(&e) != row {
            return Applied::Absent;
        }
        self.retracting(slot, (self.kind, e), None, None, out)
    }

    /// Goes on with the fan-out `step` of the change from `at`.
    fn go_on(
        &mut self,
        slot: &mut MultiSlot,
        step: Step,
        at: Box<Resume>,
        out: &mut OutputWriter<'_>,
    ) -> Applied {
        match step {
            Step::Retract { kind, stored, then } => {
                self.retracting(slot, (kind, stored), then.as_deref(), Some(at), out)
            }
            Step::Add {
                kind,
                row,
                stored,
                replaces,
            } => self.adding(slot, kind, &row, (stored, replaces), Some(at), out),
        }
    }

    /// Emits the rows of `row` added with kind `kind` (from `at`), then stores it, as a
    /// copy of `stored` on a multiset input: [`Applied::Added`], or [`Applied::Replaced`] when it
    /// `replaces`; [`Applied::Stopped`] when the output is full before.
    #[inline(always)]
    fn adding(
        &mut self,
        slot: &mut MultiSlot,
        kind: RowKind,
        row: &[u8],
        (stored, replaces): (Option<Entry>, bool),
        at: Option<Box<Resume>>,
        out: &mut OutputWriter<'_>,
    ) -> Applied {
        if let Err(at) = self.emit(&slot.groups, kind, row, at, out) {
            self.stopped = Some(Midway::adding((kind, row), stored, replaces, at));
            return Applied::Stopped;
        }
        let (me, g) = (&self.inputs[self.input], &mut slot.groups[self.input]);
        match stored {
            Some(e) => {
                g.set_count(me.entry, &e, g.count(me.entry, &e) + 1);
                g.touch(me.entry, &e, self.now);
            }
            None => g.push(me.entry, &me.identity(), row, (1, 0), self.now),
        }
        match replaces {
            true => Applied::Replaced,
            false => Applied::Added,
        }
    }

    /// Emits the rows of the stored row `stored` retracted by kind `kind` (from `at`),
    /// then removes it, and for a replacement adds the row `then` ([`Self::adding`]):
    /// [`Applied::Retracted`] or what adding returns; [`Applied::Stopped`] when the output is full
    /// before.
    #[inline(always)]
    fn retracting(
        &mut self,
        slot: &mut MultiSlot,
        (kind, stored): (RowKind, Entry),
        then: Option<&[u8]>,
        at: Option<Box<Resume>>,
        out: &mut OutputWriter<'_>,
    ) -> Applied {
        let (me, i) = (&self.inputs[self.input], self.input);
        let old = slot.groups[i].row(&stored);
        if let Err(at) = self.emit(&slot.groups, kind, old, at, out) {
            self.stopped = Some(Midway::retracting(kind, stored, then, at));
            return Applied::Stopped;
        }
        let Some(row) = then else {
            slot.groups[i].remove_one(me.entry, &me.identity(), &stored, self.now);
            return Applied::Retracted;
        };
        slot.groups[i].remove(&me.identity(), &stored);
        self.adding(slot, RowKind::UpdateAfter, row, (None, true), None, out)
    }

    /// Emits what the chain emits for a change of kind `kind` of `row` (of the input), given the
    /// rows of the key before it, going on from `at` if a call stopped; when bounded and the
    /// output is full after a row, stops there and returns where to go on.
    fn emit(
        &mut self,
        groups: &[Group],
        kind: RowKind,
        row: &[u8],
        at: Option<Box<Resume>>,
        out: &mut OutputWriter<'_>,
    ) -> Result<(), Box<Resume>> {
        let view = View {
            inputs: self.inputs,
            steps: self.steps,
            groups,
            visible: self.visible,
            deadlines: &self.deadlines,
        };
        let i = self.input;
        let counted = self.needs_counts();
        let counts = match counted {
            true => view.counts(),
            false => [0; MAX_INPUTS],
        };
        let mut chain = Chain {
            view: &view,
            counts,
            counted,
            out,
            bounded: self.bounded,
            skip: at.as_ref().map_or(0, |r| r.skip),
            replay: at.filter(|r| r.depth > 0),
            levels: self.levels,
            depth: 0,
            begun: [0; MAX_INPUTS],
            marked: 0,
            marked_rows: 0,
            rows: 0,
            full: false,
        };
        match i {
            0 => chain.down(1, kind, with(&NOTHING, 0, Some(row))),
            _ => chain.right_change(i, kind, row),
        }
        match chain.full {
            true => Err(Box::new(chain.stopped_at())),
            false => Ok(()),
        }
    }
}

/// One joined row of inputs `0..j`: a row per input, `None` where null-padded (entries from `j`
/// on are unused).
type Tuple<'a> = [Option<&'a [u8]>; MAX_INPUTS];

/// The tuple of no row.
const NOTHING: Tuple<'static> = [None; MAX_INPUTS];

/// `x` with input `j`'s row set to `row`.
fn with<'a>(x: &Tuple<'a>, j: usize, row: Option<&'a [u8]>) -> Tuple<'a> {
    let mut t = *x;
    t[j] = row;
    t
}

/// The rows of one key, as the chain's steps see them before a change.
struct View<'a> {
    inputs: &'a [ResolvedSide],
    steps: &'a [JoinType],
    groups: &'a [Group],
    visible: bool,
    /// Per input, the write time at or before which its rows have expired: invisible.
    deadlines: &'a [i64; MAX_INPUTS],
}

impl<'a> View<'a> {
    /// Whether step `j`'s left and right inputs are outer.
    fn outer(&self, j: usize) -> (bool, bool) {
        let t = self.steps[j - 1];
        (t.is_outer(Side::Left), t.is_outer(Side::Right))
    }

    /// The distinct visible rows of input `j` (not expired) with their multiplicities.
    fn rows(&self, j: usize) -> impl Iterator<Item = (&'a [u8], u64)> + 'a {
        let (el, g, deadline) = (self.inputs[j].entry, &self.groups[j], self.deadlines[j]);
        let rows = (g.entries(el))
            .filter(move |e| g.written_at(el, e) > deadline)
            .map(move |e| (g.row(&e), g.count(el, &e) as u64));
        self.visible.then_some(rows).into_iter().flatten()
    }

    /// Whether input `j` has a visible row.
    fn has_rows(&self, j: usize) -> bool {
        self.rows(j).next().is_some()
    }

    /// Whether input `j` holds exactly one visible row (with multiplicity).
    fn single_row(&self, j: usize) -> bool {
        let mut rows = self.rows(j);
        matches!((rows.next(), rows.next()), (Some((_, 1)), None))
    }

    /// Whether `R(j)`, the result of inputs `0..=j`, has a row.
    fn nonempty(&self, j: usize) -> bool {
        if j == 0 {
            return self.has_rows(0);
        }
        let (lo, ro) = self.outer(j);
        match self.nonempty(j - 1) {
            true => self.has_rows(j) || lo,
            false => self.has_rows(j) && ro,
        }
    }

    /// The number of rows of each `R(j)` (with multiplicity): the match count of each row of a
    /// right-outer step's input. O(1) per input holding many rows (an indexed group keeps its
    /// count), a scan of the few rows of the others. Only for groups holding no expired row
    /// ([`Change::expire`] frees them when a later step is right-outer).
    fn counts(&self) -> [u64; MAX_INPUTS] {
        let mut c = [0; MAX_INPUTS];
        for j in 0..self.inputs.len() {
            let g = match self.visible {
                true => self.groups[j].rows(self.inputs[j].entry),
                false => 0,
            };
            c[j] = match j {
                0 => g,
                _ => {
                    let ((lo, ro), p) = (self.outer(j), c[j - 1]);
                    match (p > 0, g > 0) {
                        (true, true) => p * g,
                        (true, false) if lo => p,
                        (false, true) if ro => g,
                        _ => 0,
                    }
                }
            };
        }
        c
    }

    /// The next visible row of input `j` from the restart point `at` on (0: its first entry;
    /// else the end of an entry, after which the next one is looked for), with the restart point
    /// that finds it and its multiplicity; `at` moves past it.
    #[inline(always)]
    fn next_row(&self, j: usize, at: &mut usize) -> Option<(usize, &'a [u8], u64)> {
        if !self.visible {
            return None;
        }
        let (el, g, deadline) = (self.inputs[j].entry, &self.groups[j], self.deadlines[j]);
        loop {
            let from = *at;
            let e = g.next_entry_after(el, from)?;
            *at = e.row.end;
            if g.written_at(el, &e) > deadline {
                return Some((from, g.row(&e), g.count(el, &e) as u64));
            }
        }
    }
}

/// A loop over input rows at one depth of the emission, as far as it got: which loop it is of
/// those begun at its depth within the iteration enclosing it, its iteration's restart point
/// ([`View::next_row`]; `usize::MAX` once it ended), and the row counts ([`Chain::counts`]) when
/// it began. The counts are read only where a step's loop begins (`before` in [`Chain::down`]), so
/// each loop on the path restored to them sees what it saw, the iterations skipped before it
/// notwithstanding.
#[derive(Clone, Copy, Debug)]
struct Level {
    seq: u32,
    from: usize,
    counts: [u64; MAX_INPUTS],
}

/// A level of no loop yet.
const NO_LEVEL: Level = Level {
    seq: 0,
    from: 0,
    counts: [0; MAX_INPUTS],
};

/// Where a change's rows go on after a call stopped within them: the path of loops, outermost
/// first, to the last iteration begun or loop ended before the row at which the output was full
/// ([`Level`]s), and the rows written since. The next call goes through the change again, but
/// starts each loop on the path at its iteration, with the counts of its start, and runs none of
/// the loops begun before it at its depth: it goes through those few rows again, not the change's
/// rows so far, whatever loop, however deep, the rows come from. (Loops nest at most one per
/// input but the changed one: fewer than [`MAX_INPUTS`] deep.)
#[derive(Clone, Copy, Debug)]
pub(crate) struct Resume {
    path: [Level; MAX_INPUTS],
    depth: usize,
    skip: u64,
}

/// A loop over the visible rows of input `j` at depth `d` ([`Chain::start_loop`]).
struct RowLoop {
    j: usize,
    d: usize,
    at: usize,
}

/// The chain's steps applied to one change: each step's emission rules
/// ([`crate::engine`]'s table), its output passed down to the next step as a change of its left
/// input, the last step's output emitted.
struct Chain<'v, 'a, 'o> {
    view: &'v View<'a>,
    /// `counts[j]`: the rows of `R(j)` as step `j + 1` has seen them so far in this change
    /// (maintained only when some step needs them, see [`View::counts`]).
    counts: [u64; MAX_INPUTS],
    /// Whether some step needs them (else they are not kept with the loops either).
    counted: bool,
    out: &'v mut OutputWriter<'o>,
    /// Whether the output stops when full.
    bounded: bool,
    /// Rows written since the last iteration begun or loop ended, to go through again without
    /// writing them.
    skip: u64,
    /// Where an earlier call stopped, while the change is gone through again up to there: no row
    /// is written meanwhile.
    replay: Option<Box<Resume>>,
    /// The loops of the emission, outermost first: `depth` running, and the last one ended.
    levels: &'v mut [Level; MAX_INPUTS],
    depth: usize,
    /// Per depth, the loops begun at it within the iteration enclosing it.
    begun: [u32; MAX_INPUTS],
    /// The depth of the path to the last iteration begun or loop ended ([`Resume`]).
    marked: usize,
    /// The rows gone through then.
    marked_rows: u64,
    /// The rows gone through so far.
    rows: u64,
    /// Whether the output is full: the rest of the change is left.
    full: bool,
}

impl<'a> Chain<'_, 'a, '_> {
    /// Begins a loop over the visible rows of input `j`. Going through a change again up to where
    /// a call stopped, the loop on the path starts at its iteration with the counts of when it
    /// began, and loops before it at its depth do not run.
    #[inline(always)]
    fn start_loop(&mut self, j: usize) -> RowLoop {
        let d = self.depth;
        self.depth = d + 1;
        let mut at = 0;
        if self.bounded {
            let seq = self.begun[d];
            self.begun[d] = seq + 1;
            if let Some(r) = &self.replay {
                let on = &r.path[d];
                debug_assert!(d < r.depth && seq <= on.seq, "loop {d} is past the path");
                at = usize::MAX;
                if seq == on.seq {
                    (at, self.counts) = (on.from, on.counts);
                }
            }
            let level = &mut self.levels[d];
            level.seq = seq;
            if self.counted {
                level.counts = self.counts;
            }
        }
        RowLoop { j, d, at }
    }

    /// The loop's next row and its multiplicity; none once the output is full.
    #[inline(always)]
    fn next_row(&mut self, l: &mut RowLoop) -> Option<(&'a [u8], u64)> {
        if self.full {
            return None;
        }
        let (from, row, copies) = self.view.next_row(l.j, &mut l.at)?;
        if self.bounded {
            if self.replay.is_some() {
                self.reached(l.d);
            }
            self.mark(l.d, from);
        }
        Some((row, copies))
    }

    /// Ends a loop.
    #[inline(always)]
    fn end_loop(&mut self, l: RowLoop) {
        self.depth = l.d;
        if self.bounded && !self.full {
            if self.replay.is_some() {
                self.reached(l.d);
            }
            self.mark(l.d, usize::MAX);
        }
    }

    /// Going through the change again, at an iteration or the end of the loop at depth `d`: when
    /// the path ends there (at that loop, not one skipped before it), rows are written again from
    /// here on, past those the stopped call wrote since.
    fn reached(&mut self, d: usize) {
        let seq = self.levels[d].seq;
        if let Some(r) = (self.replay).take_if(|r| r.depth == d + 1 && r.path[d].seq == seq) {
            (self.rows, self.skip) = (0, r.skip);
        }
    }

    /// Marks the loop at depth `d` at the iteration found from `from` (`usize::MAX`: ended).
    #[inline(always)]
    fn mark(&mut self, d: usize, from: usize) {
        self.levels[d].from = from;
        if d + 1 < MAX_INPUTS {
            self.begun[d + 1] = 0;
        }
        (self.marked, self.marked_rows) = (d + 1, self.rows);
    }

    /// Where to go on after the output was full.
    fn stopped_at(&self) -> Resume {
        Resume {
            path: *self.levels,
            depth: self.marked,
            skip: self.rows - self.marked_rows,
        }
    }

    /// Calls `f` with each row of `R(j)` and its multiplicity.
    fn each_row(&mut self, j: usize, f: &mut dyn FnMut(&mut Self, Tuple<'a>, u64)) {
        let view = self.view;
        if j == 0 {
            let mut l = self.start_loop(0);
            while let Some((m, c)) = self.next_row(&mut l) {
                f(self, with(&NOTHING, 0, Some(m)), c);
            }
            return self.end_loop(l);
        }
        let (lo, ro) = view.outer(j);
        if !view.nonempty(j - 1) {
            if ro {
                let mut l = self.start_loop(j);
                while let Some((m, c)) = self.next_row(&mut l) {
                    f(self, with(&NOTHING, j, Some(m)), c);
                }
                self.end_loop(l);
            }
            return;
        }
        let has = view.has_rows(j);
        if has || lo {
            self.each_row(j - 1, &mut |chain, x, copies| match has {
                true => {
                    let mut l = chain.start_loop(j);
                    while let Some((m, c)) = chain.next_row(&mut l) {
                        f(chain, with(&x, j, Some(m)), copies * c);
                    }
                    chain.end_loop(l);
                }
                false => f(chain, with(&x, j, None), copies),
            });
        }
    }
    /// Step `j`'s emission for a change of its left input `R(j-1)` to `x`, passed down; the
    /// output itself when `j` is past the last step.
    fn down(&mut self, j: usize, kind: RowKind, x: Tuple<'a>) {
        let view = self.view;
        let n = view.inputs.len();
        if self.full {
            return;
        }
        if j == n {
            if self.replay.is_some() {
                return;
            }
            self.rows += 1;
            if self.rows > self.skip {
                self.out.emit_wide(kind, &x[..n]);
                self.full = self.bounded && self.out.is_full();
            }
            return;
        }
        let (lo, ro) = view.outer(j);
        let matched = view.has_rows(j);
        let mut l = self.start_loop(j);
        let before = self.counts[j - 1];
        if kind.is_accumulate() {
            let joined = if lo || ro { RowKind::Insert } else { kind };
            while let Some((m, copies)) = self.next_row(&mut l) {
                for _ in 0..copies {
                    if ro && before == 0 {
                        self.down(j + 1, RowKind::Delete, with(&NOTHING, j, Some(m)));
                    }
                    self.down(j + 1, joined, with(&x, j, Some(m)));
                }
            }
            self.end_loop(l);
            if lo && !matched {
                self.down(j + 1, RowKind::Insert, with(&x, j, None));
            }
            self.counts[j - 1] += 1;
        } else {
            let joined = if lo { RowKind::Delete } else { kind };
            while let Some((m, copies)) = self.next_row(&mut l) {
                for _ in 0..copies {
                    self.down(j + 1, joined, with(&x, j, Some(m)));
                    if ro && before == 1 {
                        self.down(j + 1, RowKind::Insert, with(&NOTHING, j, Some(m)));
                    }
                }
            }
            self.end_loop(l);
            if lo && !matched {
                self.down(j + 1, RowKind::Delete, with(&x, j, None));
            }
            self.counts[j - 1] = before.saturating_sub(1);
        }
    }

    /// Step `i`'s emission for a change of its right input, input `i`, to `r` (the rows of
    /// `R(i-1)` enumerated from the groups), passed down.
    fn right_change(&mut self, i: usize, kind: RowKind, r: &'a [u8]) {
        let view = self.view;
        let (lo, ro) = view.outer(i);
        let alone = !view.nonempty(i - 1);
        if kind.is_accumulate() {
            let joined = if lo || ro { RowKind::Insert } else { kind };
            let first = !view.has_rows(i);
            self.each_row(i - 1, &mut |chain, x, copies| {
                for _ in 0..copies {
                    if lo && first {
                        chain.down(i + 1, RowKind::Delete, with(&x, i, None));
                    }
                    chain.down(i + 1, joined, with(&x, i, Some(r)));
                }
            });
            if ro && alone {
                self.down(i + 1, RowKind::Insert, with(&NOTHING, i, Some(r)));
            }
        } else {
            let joined = if ro { RowKind::Delete } else { kind };
            let last = view.single_row(i);
            self.each_row(i - 1, &mut |chain, x, copies| {
                for _ in 0..copies {
                    chain.down(i + 1, joined, with(&x, i, Some(r)));
                    if lo && last {
                        chain.down(i + 1, RowKind::Insert, with(&x, i, None));
                    }
                }
            });
            if ro && alone {
                self.down(i + 1, RowKind::Delete, with(&NOTHING, i, Some(r)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{WideEntries, WideEntry};
    use cdcjoin_model::value::format_row;
    use cdcjoin_model::{DataType, Field, RowLayout, RowWriter, Schema, Value};

    fn schema() -> Schema {
        Schema::new(vec![
            Field::not_null("id", DataType::Int),
            Field::new("k", DataType::Int),
        ])
    }

    /// An input `(id, k)` joined on `k` with primary key `id`.
    fn input() -> SideSpec {
        SideSpec {
            schema: schema(),
            join_key: vec!["k".into()],
            primary_key: Some(vec!["id".into()]),
            ttl_ms: None,
            exact_retractions: false,
        }
    }

    fn spec(steps: &[JoinType]) -> MultiwaySpec {
        MultiwaySpec {
            inputs: vec![input(); steps.len() + 1],
            steps: steps.to_vec(),
            absent_retraction: RetractionPolicy::Fail,
            key_groups: KeyGroupRange { start: 0, end: 0 },
        }
    }

    fn row(id: i32, k: Option<i32>) -> Vec<u8> {
        let layout = RowLayout::new(&schema());
        let mut out = Vec::new();
        let mut w = RowWriter::new(&layout, &mut out);
        Value::Int(id).write(&mut w);
        k.map_or(Value::Null, Value::Int).write(&mut w);
        w.finish();
        out
    }

    /// A row whose columns given as `None` are unavailable.
    fn partial(id: Option<i32>, k: Option<i32>) -> Vec<u8> {
        let layout = RowLayout::new(&schema());
        let mut out = Vec::new();
        let mut w = RowWriter::new(&layout, &mut out);
        for v in [id, k] {
            match v {
                Some(v) => Value::Int(v).write(&mut w),
                None => w.unavailable(),
            }
        }
        w.finish();
        out
    }

    /// Applies a change; returns the output entries printed (a rejection as `REJECTED input:
    /// message`).
    fn run(j: &mut MultiwayJoin, input: usize, kind: RowKind, r: Vec<u8>) -> Vec<String> {
        run_at(j, input, kind, r, 0)
    }

    /// [`run`] at processing time `now`.
    fn run_at(
        j: &mut MultiwayJoin,
        input: usize,
        kind: RowKind,
        r: Vec<u8>,
        now: i64,
    ) -> Vec<String> {
        let mut out = Vec::new();
        j.apply(input, kind, 0, &r, now, &mut OutputWriter::new(&mut out))
            .unwrap();
        print(&out, j.inputs.len())
    }

    /// The output entries of `arity` inputs in `out`, printed as [`run`] returns them.
    fn print(out: &[u8], arity: usize) -> Vec<String> {
        let layout = RowLayout::new(&schema());
        WideEntries::new(out, arity)
            .map(|e| match e {
                WideEntry::Row(w) => {
                    let vals: Vec<Value> = (w.rows().iter())
                        .flat_map(|r| match r {
                            Some(b) => Value::read_row(&RowRef::new(&layout, b)),
                            None => vec![Value::Null; 2],
                        })
                        .collect();
                    format_row(w.kind, &vals)
                }
                WideEntry::Rejected { input, message, .. } => {
                    format!("REJECTED {input}: {message}")
                }
            })
            .collect()
    }

    #[test]
    fn refuses_bad_declarations() {
        let err = |s: MultiwaySpec| MultiwayJoin::new(&s).err().unwrap().to_string();
        assert!(err(spec(&[JoinType::Inner; 8])).contains("2 to 8 inputs, not 9"));
        assert!(err(spec(&[])).contains("not 1"));
        let mut s = spec(&[JoinType::Left, JoinType::Left]);
        s.steps.pop();
        assert!(err(s).contains("3 inputs take 2 join types"));
        let mut s = spec(&[JoinType::Left, JoinType::Left]);
        s.inputs[2].join_key = vec!["id".into(), "k".into()];
        assert!(err(s).contains("join keys differ in length: input 0 has 1, input 2 has 2"));
        let mut s = spec(&[JoinType::Left]);
        s.inputs[1].schema.fields[1] = Field::new("k", DataType::String);
        assert!(err(s).contains("join key column 0 differs in type: input 0 k (INT)"));
        let mut s = spec(&[JoinType::Left]);
        s.inputs[1].ttl_ms = Some(0);
        assert!(err(s).contains("input 1: ttl_ms must be positive"));
        let mut s = spec(&[JoinType::Left]);
        s.inputs[1].join_key = vec!["nope".into()];
        assert!(err(s).contains("input 1: unknown column 'nope'"));
    }

    #[test]
    fn refuses_bad_changes_without_applying_them() {
        let mut j = MultiwayJoin::new(&spec(&[JoinType::Left])).unwrap();
        let mut out = Vec::new();
        let mut w = OutputWriter::new(&mut out);
        let e = j.apply(2, RowKind::Insert, 0, &row(1, Some(1)), 0, &mut w);
        assert_eq!(
            e,
            Err(MultiwayError::UnknownInput {
                input: 2,
                inputs: 2
            })
        );
        let e = j.apply(0, RowKind::Insert, 1, &row(1, Some(1)), 0, &mut w);
        assert!(matches!(
            e,
            Err(MultiwayError::KeyGroup { key_group: 1, .. })
        ));
        let e = j.apply(0, RowKind::Insert, 0, &[1, 2], 0, &mut w);
        assert!(matches!(e, Err(MultiwayError::InvalidRow { input: 0, .. })));
        let e = j.apply(1, RowKind::Delete, 0, &row(1, Some(1)), 0, &mut w);
        assert_eq!(
            e.unwrap_err().to_string(),
            "input 1: retraction of a row that is not in state: -D[1, 1]"
        );
        assert!(out.is_empty());
        let s = j.state_size();
        assert_eq!((s.rows, s.keys, s.group_bytes), (0, 0, 0));
        assert_eq!(s.heap_bytes, j.tables[0].table_bytes() as u64);
        assert_eq!(j.stats().absent_retractions, 1);
    }

    /// A batch is applied change by change in order, each block's changes as changes of the input
    /// its byte names, every entry stamped with its change's timestamp; a malformed batch or an
    /// input the join does not have fails it.
    #[test]
    fn batches_name_inputs_by_index() {
        use crate::batch::{write_input, InputRecord};
        let rec = |input: u8, timestamp, row: &[u8]| {
            let mut buf = Vec::new();
            let rec = InputRecord {
                side: input,
                kind: RowKind::Insert,
                key_group: 0,
                timestamp: Some(timestamp),
                row,
            };
            write_input(&mut buf, &rec);
            buf
        };
        let mut j = MultiwayJoin::new(&spec(&[JoinType::Left, JoinType::Full])).unwrap();
        let (c, a) = (row(30, Some(1)), row(10, Some(1)));
        let batch = [rec(2, 5, &c), rec(0, 6, &a)].concat();
        let mut out = Vec::new();
        assert_eq!(j.process_batch(&batch, 0, &mut out), Ok(3));
        assert_eq!(
            print(&out, 3),
            [
                "+I[null, null, null, null, 30, 1]",
                "-D[null, null, null, null, 30, 1]",
                "+I[10, 1, null, null, 30, 1]"
            ]
        );
        let stamps: Vec<_> = (WideEntries::new(&out, 3))
            .map(|e| match e {
                WideEntry::Row(r) => r.timestamp,
                WideEntry::Rejected { timestamp, .. } => timestamp,
            })
            .collect();
        assert_eq!(stamps, [Some(5), Some(6), Some(6)]);
        let counters = j.counters();
        let named = |name| {
            counters[MULTIWAY_COUNTER_NAMES
                .iter()
                .position(|&n| n == name)
                .unwrap()]
        };
        assert_eq!(
            [
                "records_in_0",
                "records_in_1",
                "records_in_2",
                "rows_out",
                "state_rows"
            ]
            .map(named),
            [1, 0, 1, 3, 2]
        );
        let mut bad = rec(1, 7, &a);
        bad[0] = MAX_INPUTS as u8;
        let e = j.process_batch(&bad, 0, &mut out).unwrap_err().to_string();
        assert!(e.contains("batch record #0: bad side byte 8"), "{e}");
        let mut two = MultiwayJoin::new(&spec(&[JoinType::Left])).unwrap();
        let e = two.process_batch(&rec(2, 7, &a), 0, &mut out);
        assert_eq!(
            e,
            Err(MultiwayError::UnknownInput {
                input: 2,
                inputs: 2
            })
        );
    }

    /// `a LEFT JOIN b USING (k) FULL JOIN c USING (k)`, by hand: padding emitted and retracted as
    /// the chain does, a RIGHT/FULL step's padded row keyed by its own input, null keys alone.
    /// A change stopped within its rows goes on at the iteration of its first loop that was in
    /// progress, not from its first row: with a bound of one byte every call writes a row, and
    /// goes through again at most the rows of one iteration (two: a padding and a joined row) of
    /// a key of 300 rows, for every join type, an insertion and a deletion; the rows are those
    /// of an unbounded join.
    #[test]
    fn a_stopped_change_goes_on_where_it_stopped() {
        use crate::batch::{write_input, InputRecord};
        use JoinType::*;
        for step in [Inner, Left, Right, Full] {
            // (steps, rows per input, the changed input): the rows come from the first loop, from
            // a loop within the one iteration of another, from a loop after one that ended, and
            // from the second of two loops in one iteration (retracting padded rows, then adding)
            for (steps, rows, changed) in [
                (vec![step], [300, 0, 0], 1),
                (vec![Inner, step], [1, 300, 0], 2),
                (vec![Left, step], [0, 0, 300], 0),
                (vec![Full, step], [0, 1, 300], 0),
            ] {
                let [mut bounded, mut whole] =
                    [(); 2].map(|()| MultiwayJoin::new(&spec(&steps)).unwrap());
                for j in [&mut bounded, &mut whole] {
                    for (input, &n) in rows.iter().enumerate() {
                        (0..n)
                            .for_each(|id| drop(run(j, input, RowKind::Insert, row(id, Some(1)))));
                    }
                }
                let mut batch = Vec::new();
                for kind in [RowKind::Insert, RowKind::Delete] {
                    let rec = InputRecord {
                        side: changed as u8,
                        kind,
                        key_group: 0,
                        timestamp: None,
                        row: &row(1000, Some(1)),
                    };
                    write_input(&mut batch, &rec);
                }
                let mut want = Vec::new();
                whole.process_batch(&batch, 0, &mut want).unwrap();
                bounded.set_output_bound(1);
                let (mut got, mut calls) = (Vec::new(), 1);
                bounded.process_batch(&batch, 0, &mut got).unwrap();
                while let Some(left) = bounded.bound.take() {
                    let again = left.midway.as_ref().map_or(0, |m| m.at.skip);
                    assert!(again <= 2, "{steps:?}: {again} rows gone through again");
                    bounded.bound.keep(left);
                    bounded.resume(&mut got).unwrap();
                    calls += 1;
                }
                assert!(
                    calls > 600,
                    "{steps:?}: a row or two per call, {calls} calls"
                );
                assert_eq!(got, want, "{steps:?}");
            }
        }
    }

    #[test]
    fn left_then_full() {
        use RowKind::*;
        let mut j = MultiwayJoin::new(&spec(&[JoinType::Left, JoinType::Full])).unwrap();
        assert_eq!(
            run(&mut j, 2, Insert, row(30, Some(1))),
            ["+I[null, null, null, null, 30, 1]"]
        );
        assert_eq!(
            run(&mut j, 0, Insert, row(10, Some(1))),
            [
                "-D[null, null, null, null, 30, 1]",
                "+I[10, 1, null, null, 30, 1]"
            ]
        );
        assert_eq!(
            run(&mut j, 1, Insert, row(20, Some(1))),
            [
                "-D[10, 1, null, null, 30, 1]",
                "+I[null, null, null, null, 30, 1]",
                "-D[null, null, null, null, 30, 1]",
                "+I[10, 1, 20, 1, 30, 1]"
            ],
            "the chain's transient padding: step 1 retracts [10, null] before it adds [10, 20]"
        );
        assert_eq!(
            run(&mut j, 1, UpdateAfter, row(20, Some(1))),
            Vec::<String>::new(),
            "an identical replacement emits nothing"
        );
        assert_eq!(
            run(&mut j, 0, Delete, row(10, Some(1))),
            [
                "-D[10, 1, 20, 1, 30, 1]",
                "+I[null, null, null, null, 30, 1]"
            ]
        );
        assert_eq!(
            run(&mut j, 1, Insert, row(21, None)),
            Vec::<String>::new(),
            "b's row of a null key has no a to join"
        );
        assert_eq!(
            run(&mut j, 0, Insert, row(11, None)),
            ["+I[11, null, null, null, null, null]"],
            "a null key matches nothing"
        );
        let s = j.state_size();
        assert_eq!((s.rows, s.keys), (4, 2));
        assert!(s.heap_bytes > s.group_bytes);
        for (input, r) in [(2, row(30, Some(1))), (1, row(20, Some(1)))] {
            run(&mut j, input, Delete, r);
        }
        for (input, r) in [(1, row(21, None)), (0, row(11, None))] {
            run(&mut j, input, Delete, r);
        }
        let s = j.state_size();
        assert_eq!((s.rows, s.keys, s.group_bytes), (0, 0, 0));
        assert_eq!(s.heap_bytes, j.tables[0].table_bytes() as u64);
    }

    /// A join of three inputs by `steps` on `id` (so `k` is not a key) holding `(1, 5)`, `(1, 7)`
    /// and `(1, 9)`, inserted in input order, and the output of the last insert.
    fn three_rows_on_id(steps: &[JoinType]) -> (MultiwayJoin, Vec<String>) {
        let mut s = spec(steps);
        s.inputs
            .iter_mut()
            .for_each(|i| i.join_key = vec!["id".into()]);
        let mut j = MultiwayJoin::new(&s).unwrap();
        run(&mut j, 0, RowKind::Insert, row(1, Some(5)));
        run(&mut j, 1, RowKind::Insert, row(1, Some(7)));
        let out = run(&mut j, 2, RowKind::Insert, row(1, Some(9)));
        (j, out)
    }

    /// A replacement of the stored row of a primary key retracts and re-adds through every step,
    /// with the update kinds through inner steps.
    #[test]
    fn replacement_through_inner_steps() {
        use RowKind::*;
        let (mut j, out) = three_rows_on_id(&[JoinType::Inner, JoinType::Inner]);
        assert_eq!(out, ["+I[1, 5, 1, 7, 1, 9]"]);
        assert_eq!(
            run(&mut j, 1, UpdateAfter, row(1, Some(8))),
            ["-U[1, 5, 1, 7, 1, 9]", "+U[1, 5, 1, 8, 1, 9]"]
        );
        assert_eq!(j.stats().stored_rows, 3);
    }

    /// Unavailable columns: filled from the stored row of the primary key, or the change rejected
    /// with the two-table join's message naming the input, the state unchanged.
    #[test]
    fn unavailable_columns_are_filled_or_rejected() {
        use RowKind::*;
        let (mut j, _) = three_rows_on_id(&[JoinType::Inner, JoinType::Left]);
        let size = j.state_size();
        assert_eq!(
            run(&mut j, 1, UpdateAfter, partial(Some(1), None)),
            Vec::<String>::new(),
            "k filled from the stored row: the same row again"
        );
        assert_eq!(
            run(&mut j, 2, UpdateAfter, partial(Some(2), None)),
            ["REJECTED 2: input 2 row +U[2, <unavailable>]: column 'k' is unavailable (the change \
              does not carry the value, e.g. Debezium's placeholder for an unchanged TOASTed \
              value, or a delete by key), and no row with primary key [2] is stored to take it \
              from (first sight of the key, or expired by TTL)"]
        );
        assert_eq!(
            j.state_size(),
            size,
            "a rejection leaves the state as it was"
        );
        assert_eq!(
            run(&mut j, 0, Delete, partial(Some(1), None)),
            ["-D[1, 5, 1, 7, 1, 9]"],
            "a delete by key retracts the stored row"
        );
        let s = j.stats();
        assert_eq!((s.stored_rows, s.rejected, s.records_in[2]), (2, 1, 2));

        let mut s = spec(&[JoinType::Full]);
        s.inputs[1].primary_key = None;
        let mut j = MultiwayJoin::new(&s).unwrap();
        assert_eq!(
            run(&mut j, 0, Insert, partial(Some(3), None)),
            [
                "REJECTED 0: input 0 row +I[3, <unavailable>]: column 'k' of the join key is \
              unavailable: the row's join key, and so its state, is unknown"
            ]
        );
        let msg = run(&mut j, 1, Insert, partial(None, Some(1)));
        assert!(
            msg[0].starts_with("REJECTED 1: input 1 row +I[<unavailable>, 1]: column 'id' is")
                && msg[0].ends_with("no stored row is known to be the same row"),
            "{msg:?}"
        );
        assert_eq!(
            run(&mut j, 1, Insert, row(4, Some(1))),
            ["+I[null, null, 4, 1]"]
        );
        assert_eq!((j.stats().rejected, j.stats().stored_rows), (2, 1));
    }
    /// `a RIGHT JOIN b` with a TTL of 10 ms on `a`: once `a`'s 40 rows under the key (a group of
    /// many rows, indexed) have expired, they are invisible to `b` and to the step's count of
    /// its left rows before any sweep (a change of `a` sees none and retracts `b`'s padding),
    /// the key's rows are freed only when the RIGHT step needs their count, and a sweep frees
    /// the rows of untouched keys.
    #[test]
    fn expired_rows_of_a_hot_key_are_invisible_before_the_sweep() {
        use RowKind::*;
        let mut s = spec(&[JoinType::Right]);
        s.inputs[0].ttl_ms = Some(10);
        s.absent_retraction = RetractionPolicy::Ignore;
        let mut j = MultiwayJoin::new(&s).unwrap();
        for id in 0..40 {
            run_at(&mut j, 0, Insert, row(id, Some(1)), 0);
        }
        run_at(&mut j, 0, Insert, row(99, Some(2)), 0);
        assert_eq!(run_at(&mut j, 1, Insert, row(7, Some(1)), 5).len(), 40);
        assert_eq!(
            run_at(&mut j, 1, UpdateAfter, row(7, Some(1)), 10),
            Vec::<String>::new(),
            "an identical row of b: a write, nothing emitted"
        );
        assert_eq!(
            run_at(&mut j, 1, Insert, row(8, Some(1)), 10),
            ["+I[null, null, 8, 1]"],
            "a's rows expired at 10 (written at 0, ttl 10): b's new row is padded"
        );
        assert_eq!((j.stats().stored_rows, j.stats().expired_rows), (43, 0));
        assert_eq!(
            run_at(&mut j, 0, Insert, row(50, Some(1)), 11),
            [
                "-D[null, null, 7, 1]",
                "+I[50, 1, 7, 1]",
                "-D[null, null, 8, 1]",
                "+I[50, 1, 8, 1]"
            ],
            "the step counts no left row before the change: b's paddings are retracted"
        );
        assert_eq!((j.stats().stored_rows, j.stats().expired_rows), (4, 40));
        assert_eq!(
            run_at(&mut j, 0, Delete, row(3, Some(1)), 11),
            Vec::<String>::new(),
            "a retraction of an expired row is absent"
        );
        assert_eq!(j.stats().absent_retractions, 1);
        let before = j.state_size();
        j.process_batch(&[], 30, &mut Vec::new()).unwrap();
        let (s, after) = (j.stats(), j.state_size());
        assert_eq!((s.stored_rows, s.stored_keys, s.expired_rows), (2, 1, 42));
        assert!(after.group_bytes < before.group_bytes && after.heap_bytes < before.heap_bytes);
    }

    /// A snapshot restores only where the same inputs declare a TTL (their rows' entries carry a
    /// write time), whatever the durations.
    #[test]
    fn a_snapshot_restores_only_under_the_same_ttl_inputs() {
        let mut s = spec(&[JoinType::Left]);
        s.inputs[1].ttl_ms = Some(10);
        let mut j = MultiwayJoin::new(&s).unwrap();
        run_at(&mut j, 1, RowKind::Insert, row(1, Some(1)), 3);
        let mut section = Vec::new();
        j.snapshot_key_group(0, &mut section).unwrap();
        let restore = |s: &MultiwaySpec| MultiwayJoin::new(s).unwrap().restore_key_group(&section);
        s.inputs[1].ttl_ms = Some(99);
        assert!(restore(&s).is_ok());
        s.inputs[1].ttl_ms = None;
        let err = restore(&s).unwrap_err().to_string();
        assert!(
            err.contains(
                "the snapshot was taken for input 1 row entry row_len, written_at, this job \
                 declares row_len"
            ),
            "{err}"
        );
    }

    /// A section restores only under the same declaration, in range, and intact; the errors say
    /// which.
    #[test]
    fn snapshot_sections_are_checked() {
        use RowKind::*;
        let mut j = MultiwayJoin::new(&spec(&[JoinType::Left, JoinType::Left])).unwrap();
        run(&mut j, 0, Insert, row(10, Some(1)));
        run(&mut j, 2, Insert, row(30, Some(1)));
        let mut section = Vec::new();
        j.snapshot_key_group(0, &mut section).unwrap();
        let restore = |s: &MultiwaySpec, bytes: &[u8]| {
            let mut j = MultiwayJoin::new(s).unwrap();
            j.restore_key_group(bytes).map(|_| j)
        };
        let back = restore(&spec(&[JoinType::Left, JoinType::Left]), &section).unwrap();
        assert_eq!(back.stats().stored_rows, 2);
        let other = restore(&spec(&[JoinType::Left, JoinType::Full]), &section);
        let err = other.err().unwrap().to_string();
        assert!(
            err.contains(
                "the snapshot was taken for join types LEFT, LEFT, this job declares LEFT, FULL"
            ),
            "{err}"
        );
        let mut elsewhere = spec(&[JoinType::Left, JoinType::Left]);
        elsewhere.key_groups = KeyGroupRange { start: 1, end: 1 };
        let err = restore(&elsewhere, &section).err().unwrap().to_string();
        assert!(err.contains("not in this instance's range 1..=1"), "{err}");
        let mut flipped = section.clone();
        *flipped.last_mut().unwrap() ^= 1;
        let err = restore(&spec(&[JoinType::Left, JoinType::Left]), &flipped);
        assert!(err.err().unwrap().to_string().contains("checksum mismatch"));
        let mut version = section.clone();
        version[4] = 9;
        let err = restore(&spec(&[JoinType::Left, JoinType::Left]), &version);
        assert!(err
            .err()
            .unwrap()
            .to_string()
            .contains("format version Some(9)"));
        let mut out = Vec::new();
        let err = j.snapshot_key_group(1, &mut out).unwrap_err();
        assert!(matches!(
            err,
            MultiwayError::Snapshot(JoinError::Snapshot { key_group: 1, .. })
        ));
    }
}
