//! Property tests of the join algebra over random valid CDC traces of two tables, for all four join
//! types and all three state layouts. The traces hold what Debezium sends besides plain changes:
//! replacing `+I`/`+U` of stored primary keys (re-deliveries, upserts; identical or not), updates
//! and deletes by key with unavailable columns, and changes the join must reject (unavailable
//! columns it cannot fill, or in a key). Replacements keep the join key, as the decoder guarantees
//! (a `u` carries `-U(before)` unless in upsert mode, allowed only when the join key contains the
//! primary key).
//! - the emitted changelog, applied to an empty multiset, never retracts an absent row and ends as
//!   the join of the two final tables computed by a simple reference (the normalized input);
//! - exactly the changes that must be rejected are, with nothing else emitted for them, and no
//!   unavailable column is ever emitted or stored;
//! - after every row is deleted, no state is left;
//! - snapshot, restore split across two instances by key group, and continue gives exactly the
//!   output of an uninterrupted run.
//!
//! - a frozen state (`JoinEngine::freeze`) writes the state of the instant it was frozen, whatever
//!   the engine does meanwhile; the memory only it holds is the sections of the key groups the
//!   engine wrote to before they were written, each freed when written, all when it is dropped.
//!
//! The same properties hold on hot keys: traces over two join keys, so that a key's rows grow past
//! the size where its group is indexed and shrink back, and one key holding 100,000 rows.

mod support;

use cdcjoin_join::{JoinEngine, JoinType, KeyGroupRange, Side};
use cdcjoin_model::RowKind;
use proptest::prelude::*;
use support::*;

#[derive(Clone, Debug)]
enum Op {
    Insert {
        side: Side,
        id: i32,
        k: Option<i32>,
        v: u8,
    },
    /// Update row `idx`: 0 changes `v`, 1 changes `k`, 2 changes `id`, 3 changes all.
    Update {
        side: Side,
        idx: usize,
        what: u8,
        k: Option<i32>,
        v: u8,
    },
    Delete {
        side: Side,
        idx: usize,
    },
    /// A lone `+I` (or `+U`) of row `idx`'s primary key: `what` bit 0 changes `v`, bit 1 changes
    /// `k` where `k` is not the join key; neither is an identical re-delivery.
    Replace {
        side: Side,
        idx: usize,
        what: u8,
        k: Option<i32>,
        v: u8,
        insert: bool,
    },
    /// A lone `+U` of row `idx` with `v` unavailable (an unchanged TOASTed value), `k` changed where
    /// it is not the join key and `change_k`.
    Toast {
        side: Side,
        idx: usize,
        change_k: bool,
        k: Option<i32>,
    },
    /// A `-D` of row `idx` carrying its keys only: its other columns unavailable.
    DeleteByKey {
        side: Side,
        idx: usize,
    },
    /// A `+U` with `v` unavailable for a primary key never stored: rejected.
    Unfillable {
        side: Side,
        k: Option<i32>,
    },
    /// A change of row `idx` whose join key is unavailable: rejected.
    UnavailableJoinKey {
        side: Side,
        idx: usize,
        kind: RowKind,
    },
}

fn side() -> impl Strategy<Value = Side> {
    prop_oneof![Just(Side::Left), Just(Side::Right)]
}

/// A join key value among `0..keys`, or null.
fn key(keys: i32) -> impl Strategy<Value = Option<i32>> {
    prop_oneof![1 => Just(None), 8 => (0..keys).prop_map(Some)]
}

fn kind() -> impl Strategy<Value = RowKind> {
    prop_oneof![
        Just(RowKind::Insert),
        Just(RowKind::UpdateBefore),
        Just(RowKind::UpdateAfter),
        Just(RowKind::Delete)
    ]
}

/// Any change, over join key values `0..keys`.
fn op(keys: i32) -> impl Strategy<Value = Op> {
    let k = || key(keys);
    prop_oneof![
        4 => (side(), 0..6i32, k(), 0..3u8).prop_map(|(side, id, k, v)| Op::Insert { side, id, k, v }),
        4 => (side(), any::<usize>(), 0..4u8, k(), 0..3u8).prop_map(|(side, idx, what, k, v)| Op::Update { side, idx, what, k, v }),
        2 => (side(), any::<usize>()).prop_map(|(side, idx)| Op::Delete { side, idx }),
        2 => (side(), any::<usize>(), 0..4u8, k(), 0..3u8, any::<bool>()).prop_map(|(side, idx, what, k, v, insert)| Op::Replace { side, idx, what, k, v, insert }),
        2 => (side(), any::<usize>(), any::<bool>(), k()).prop_map(|(side, idx, change_k, k)| Op::Toast { side, idx, change_k, k }),
        1 => (side(), any::<usize>()).prop_map(|(side, idx)| Op::DeleteByKey { side, idx }),
        1 => (side(), k()).prop_map(|(side, k)| Op::Unfillable { side, k }),
        1 => (side(), any::<usize>(), kind()).prop_map(|(side, idx, kind)| Op::UnavailableJoinKey { side, idx, kind }),
    ]
}

/// Any change over two join keys, or an insert into the first: the key's rows grow past the size
/// where its group is indexed (and shrink back as the trace deletes them).
fn hot_op() -> impl Strategy<Value = Op> {
    let insert = (side(), 0..6i32, 0..3u8).prop_map(|(side, id, v)| Op::Insert {
        side,
        id,
        k: Some(0),
        v,
    });
    prop_oneof![1 => op(2), 1 => insert]
}

/// Interprets ops against two tables, producing the CDC changelog (updates split into a retraction
/// of `before` then an insertion of `after`) and the final tables.
struct World {
    keys: [Keys; 2],
    tables: [Vec<Row>; 2],
    next_id: i32,
    changes: Vec<Change>,
    /// Per change, whether the join must reject it.
    rejected: Vec<bool>,
}

impl World {
    fn new(keys: [Keys; 2]) -> World {
        World {
            keys,
            tables: [vec![], vec![]],
            next_id: 100,
            changes: vec![],
            rejected: vec![],
        }
    }

    /// Row `idx` (modulo the table's size) of `side`, if the table has rows.
    fn pick(&self, side: Side, idx: usize) -> Option<(usize, Row)> {
        let t = &self.tables[side as usize];
        (!t.is_empty()).then(|| (idx % t.len(), t[idx % t.len()].clone()))
    }

    /// Appends `change`, which the join must reject, leaving the tables as they are.
    fn reject(&mut self, change: Change) {
        self.changes.push(change);
        self.rejected.push(true);
    }

    fn fresh_id(&mut self, side: Side, suggested: i32) -> i32 {
        if self.keys[side as usize] == Keys::NoPk {
            return suggested; // duplicates allowed: a multiset
        }
        self.next_id += 1;
        self.next_id
    }

    fn emit(&mut self, side: Side, kind: RowKind, row: Row) {
        self.push(Change::new(side, kind, row));
    }

    /// Appends `change`, which the join applies.
    fn push(&mut self, change: Change) {
        self.changes.push(change);
        self.rejected.push(false);
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Insert { side, id, k, v } => {
                let row = Row {
                    id: self.fresh_id(side, id),
                    k,
                    v: format!("v{v}"),
                };
                self.tables[side as usize].push(row.clone());
                self.emit(side, RowKind::Insert, row);
            }
            Op::Update {
                side,
                idx,
                what,
                k,
                v,
            } => {
                let t = &self.tables[side as usize];
                if t.is_empty() {
                    return;
                }
                let i = idx % t.len();
                let before = t[i].clone();
                let mut after = before.clone();
                if what == 0 || what == 3 {
                    after.v = format!("v{v}");
                }
                if what == 1 || what == 3 {
                    after.k = k;
                }
                if what == 2 || what == 3 {
                    after.id = self.fresh_id(side, before.id + 1);
                }
                self.tables[side as usize][i] = after.clone();
                self.emit(side, RowKind::UpdateBefore, before);
                self.emit(side, RowKind::UpdateAfter, after);
            }
            Op::Delete { side, idx } => {
                let t = &mut self.tables[side as usize];
                if t.is_empty() {
                    return;
                }
                let row = t.swap_remove(idx % t.len());
                self.emit(side, RowKind::Delete, row);
            }
            Op::Replace {
                side,
                idx,
                what,
                k,
                v,
                insert,
            } => self.replace(side, idx, what, k, v, insert),
            Op::Toast {
                side,
                idx,
                change_k,
                k,
            } => self.toast(side, idx, change_k, k),
            Op::DeleteByKey { side, idx } => self.delete_by_key(side, idx),
            Op::Unfillable { side, k } => {
                let row = Row {
                    id: self.fresh_id(side, 0),
                    k,
                    v: "unknown".into(),
                };
                self.reject(Change::new(side, RowKind::UpdateAfter, row).without(&["v"]));
            }
            Op::UnavailableJoinKey { side, idx, kind } => {
                if let Some((_, row)) = self.pick(side, idx) {
                    let jk: &'static [&'static str] = match self.keys[side as usize] {
                        Keys::JoinOnPk => &["id"],
                        _ => &["k"],
                    };
                    self.reject(Change::new(side, kind, row).without(jk));
                }
            }
        }
    }

    /// [`Op::Replace`]: on a side without a primary key there is nothing to replace.
    fn replace(&mut self, side: Side, idx: usize, what: u8, k: Option<i32>, v: u8, insert: bool) {
        let keys = self.keys[side as usize];
        let Some((i, mut row)) = self.pick(side, idx).filter(|_| keys != Keys::NoPk) else {
            return;
        };
        if what & 1 != 0 {
            row.v = format!("v{v}");
        }
        if what & 2 != 0 && keys == Keys::JoinOnPk {
            row.k = k;
        }
        self.tables[side as usize][i] = row.clone();
        let kind = if insert {
            RowKind::Insert
        } else {
            RowKind::UpdateAfter
        };
        self.emit(side, kind, row);
    }

    /// [`Op::Toast`]: filled on a side with a primary key, rejected on one without.
    fn toast(&mut self, side: Side, idx: usize, change_k: bool, k: Option<i32>) {
        let keys = self.keys[side as usize];
        let Some((i, mut row)) = self.pick(side, idx) else {
            return;
        };
        if change_k && keys == Keys::JoinOnPk {
            row.k = k;
        }
        let change = Change::new(side, RowKind::UpdateAfter, row.clone()).without(&["v"]);
        if keys == Keys::NoPk {
            return self.reject(change);
        }
        self.tables[side as usize][i] = row;
        self.push(change);
    }

    /// [`Op::DeleteByKey`]: every column but the keys unavailable; rejected without a primary key.
    fn delete_by_key(&mut self, side: Side, idx: usize) {
        let keys = self.keys[side as usize];
        let Some((i, row)) = self.pick(side, idx) else {
            return;
        };
        let change = Change::new(side, RowKind::Delete, row);
        match keys {
            Keys::NoPk => self.reject(change.without(&["v"])),
            Keys::Pk => {
                self.tables[side as usize].swap_remove(i);
                self.push(change.without(&["v"]));
            }
            Keys::JoinOnPk => {
                self.tables[side as usize].swap_remove(i);
                self.push(change.without(&["k", "v"]));
            }
        }
    }

    fn delete_all(&mut self) {
        for side in [Side::Left, Side::Right] {
            for row in std::mem::take(&mut self.tables[side as usize]) {
                self.emit(side, RowKind::Delete, row);
            }
        }
    }
}

const ALL: KeyGroupRange = KeyGroupRange {
    start: 0,
    end: MAX_KG - 1,
};

/// Runs the changes of `ops` through a join of type `jt` and checks every property of the module
/// docs but the split restore: the changelog materializes to the join of the final tables, exactly
/// the changes that must be rejected are, a snapshot restores into an instance that goes on
/// exactly as the original, and deleting every row leaves no state.
fn check_changelog(jt: JoinType, keys: [Keys; 2], ops: &[Op]) -> Result<(), TestCaseError> {
    let [lk, rk] = keys;
    let mut world = World::new(keys);
    ops.iter().for_each(|o| world.apply(o));
    let mut engine = JoinEngine::new(&spec(jt, lk, rk, ALL)).unwrap();
    let outs = run(&mut engine, keys, &world.changes);
    for ((out, change), rejected) in outs.iter().zip(&world.changes).zip(&world.rejected) {
        let rejections = out.iter().filter(|r| r.starts_with(REJECTED)).count();
        prop_assert_eq!(
            (rejections, out.len()),
            if *rejected { (1, 1) } else { (0, out.len()) },
            "{:?}: {:?}",
            change,
            out
        );
    }
    let out: Vec<String> = outs
        .into_iter()
        .flatten()
        .filter(|r| !r.starts_with(REJECTED))
        .collect();
    let got = materialize(&out);
    let want = reference(jt, keys, &world.tables[0], &world.tables[1]);
    prop_assert_eq!(got, want);
    prop_assert_eq!(engine.stats().absent_retractions, 0);
    prop_assert_eq!(
        engine.stats().rejected,
        world.rejected.iter().filter(|r| **r).count() as u64
    );
    prop_assert_eq!(
        engine.stats().stored_rows,
        (world.tables[0].len() + world.tables[1].len()) as u64
    );
    // A restored copy holds the same state (and no unavailable column: restoring refuses one).
    let mut copy = JoinEngine::new(&spec(jt, lk, rk, ALL)).unwrap();
    for kg in engine.key_groups_with_state() {
        let mut snapshot = Vec::new();
        engine.snapshot_key_group(kg, &mut snapshot).unwrap();
        copy.restore_key_group(&snapshot).unwrap();
    }
    prop_assert_eq!(
        copy.state_size().group_bytes,
        engine.state_size().group_bytes
    );

    // Deleting every row leaves an empty result and no state at all, in the copy as well.
    let from = world.changes.len();
    world.delete_all();
    let rest: Vec<String> = run(&mut engine, keys, &world.changes[from..])
        .into_iter()
        .flatten()
        .collect();
    let rest_of_copy: Vec<String> = run(&mut copy, keys, &world.changes[from..])
        .into_iter()
        .flatten()
        .collect();
    prop_assert!(
        rest == rest_of_copy,
        "the restored copy went on differently"
    );
    prop_assert!(materialize(out.iter().chain(&rest)).is_empty());
    for e in [&engine, &copy] {
        prop_assert_eq!(e.stats().stored_rows, 0);
        prop_assert!(e.key_groups_with_state().is_empty());
        let size = e.state_size();
        prop_assert_eq!(
            (size.keys, size.group_bytes),
            (0, 0),
            "incremental counters drifted"
        );
        prop_assert_eq!(e.stats().index_bytes, 0, "an empty state holds no index");
    }
    Ok(())
}

/// A deterministic trace around one join key that comes to hold 100,000 rows of the hot side: the
/// rows inserted, then changes of every kind on the hot side (value updates, join-key moves to a
/// second key and back, primary-key changes, replacements, TOASTed updates, deletes by key), and a
/// few changes on the other side, each of which matches every row of the key.
fn hot_key_trace(hot: Side, rows: i32, changes: usize) -> Vec<Op> {
    let other = hot.other();
    let mut ops: Vec<Op> = (0..rows)
        .map(|i| Op::Insert {
            side: hot,
            id: i % 1000,
            k: Some(0),
            v: (i % 3) as u8,
        })
        .collect();
    for k in [0, 0, 1] {
        ops.push(Op::Insert {
            side: other,
            id: k,
            k: Some(k),
            v: 0,
        });
    }
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for i in 0..changes {
        let (r, idx) = (next(), next() as usize);
        let (k, v, what) = (Some((r % 2) as i32), (r % 3) as u8, ((r >> 8) % 4) as u8);
        ops.push(match (r >> 16) % 8 {
            _ if i == changes / 2 => Op::Update {
                side: other,
                idx,
                what: 0,
                k,
                v,
            },
            0 | 1 => Op::Update {
                side: hot,
                idx,
                what: 0,
                k,
                v,
            },
            2 => Op::Update {
                side: hot,
                idx,
                what,
                k,
                v,
            },
            3 => Op::Delete { side: hot, idx },
            4 => Op::Replace {
                side: hot,
                idx,
                what,
                k,
                v,
                insert: r & 1 == 0,
            },
            5 => Op::Toast {
                side: hot,
                idx,
                change_k: false,
                k,
            },
            6 => Op::DeleteByKey { side: hot, idx },
            _ => Op::Insert {
                side: hot,
                id: (r % 1000) as i32,
                k,
                v,
            },
        });
    }
    ops
}

/// One key of 100,000 rows joined by `jt`, with the hot side keyed by primary key or a multiset,
/// on either input.
fn a_key_of_100k_rows(jt: JoinType) {
    for (hot, layout) in [
        (Side::Right, Keys::Pk),
        (Side::Right, Keys::NoPk),
        (Side::Left, Keys::Pk),
        (Side::Left, Keys::NoPk),
    ] {
        let keys = if hot == Side::Right {
            [Keys::Pk, layout]
        } else {
            [layout, Keys::Pk]
        };
        check_changelog(jt, keys, &hot_key_trace(hot, 100_000, 20_000))
            .unwrap_or_else(|e| panic!("{jt:?}, hot {hot:?} side {layout:?}: {e}"));
    }
}

#[test]
fn inner_join_of_a_key_of_100k_rows() {
    a_key_of_100k_rows(JoinType::Inner);
}

#[test]
fn left_join_of_a_key_of_100k_rows() {
    a_key_of_100k_rows(JoinType::Left);
}

#[test]
fn right_join_of_a_key_of_100k_rows() {
    a_key_of_100k_rows(JoinType::Right);
}

#[test]
fn full_join_of_a_key_of_100k_rows() {
    a_key_of_100k_rows(JoinType::Full);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn changelog_materializes_to_the_join_of_final_tables(
        jt in join_type(), lk in keys(), rk in keys(), ops in prop::collection::vec(op(5), 0..60)
    ) {
        check_changelog(jt, [lk, rk], &ops)?;
    }

    #[test]
    fn snapshot_restore_split_continues_identically(
        jt in join_type(), lk in keys(), rk in keys(),
        ops in prop::collection::vec(op(5), 1..60), cut in any::<prop::sample::Index>(), split in 1..MAX_KG
    ) {
        let keys = [lk, rk];
        let mut world = World::new(keys);
        ops.iter().for_each(|o| world.apply(o));
        world.delete_all();
        let cut = cut.index(world.changes.len() + 1);
        let (head, tail) = world.changes.split_at(cut);

        let mut whole = JoinEngine::new(&spec(jt, lk, rk, ALL)).unwrap();
        run(&mut whole, keys, head);
        let mut snapshot = Vec::new();
        for kg in whole.key_groups_with_state() {
            whole.snapshot_key_group(kg, &mut snapshot).unwrap();
        }
        let ranges = [KeyGroupRange { start: 0, end: split - 1 }, KeyGroupRange { start: split, end: MAX_KG - 1 }];
        let mut parts = ranges.map(|r| JoinEngine::new(&spec(jt, lk, rk, r)).unwrap());
        let mut at = 0;
        let mut kgs = whole.key_groups_with_state().into_iter();
        while at < snapshot.len() {
            let kg = kgs.next().unwrap();
            let part = if kg < split { &mut parts[0] } else { &mut parts[1] };
            at += part.restore_key_group(&snapshot[at..]).unwrap();
        }
        prop_assert_eq!(parts[0].stats().stored_rows + parts[1].stats().stored_rows, whole.stats().stored_rows);
        // The restored instances recount their state; the whole one kept it up to date per record.
        let sizes = [whole.state_size(), parts[0].state_size(), parts[1].state_size()];
        prop_assert_eq!(sizes[0].keys, sizes[1].keys + sizes[2].keys);
        prop_assert_eq!(sizes[0].group_bytes, sizes[1].group_bytes + sizes[2].group_bytes);

        let expected = run(&mut whole, keys, tail);
        for (c, want) in tail.iter().zip(expected) {
            let part = if c.key_group(keys) < split { &mut parts[0] } else { &mut parts[1] };
            let got = run(part, keys, std::slice::from_ref(c)).remove(0);
            prop_assert_eq!(got, want, "at {:?}", c);
        }
        prop_assert!(parts.iter().all(|p| p.key_groups_with_state().is_empty()));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// A join whose output per call is bounded stops after the change, or within a change after
    /// the matched row, at which its output reaches the bound and goes on when resumed: the
    /// calls' outputs, one after the other, are the unbounded join's output byte for byte, the
    /// state is the same, each call but the last writes at least the bound and less than the
    /// bound and one change's output, and a new batch is refused while changes are pending.
    #[test]
    fn a_bounded_output_is_the_whole_output_in_pieces(
        jt in join_type(), lk in keys(), rk in keys(), ops in prop::collection::vec(op(3), 1..60),
        bound in 1usize..400
    ) {
        let keys = [lk, rk];
        let mut world = World::new(keys);
        ops.iter().for_each(|o| world.apply(o));
        let mut batch = Vec::new();
        for (i, c) in world.changes.iter().enumerate() {
            c.batch_at(keys, Some(i as i64), &mut batch);
        }
        let mut whole = JoinEngine::new(&spec(jt, lk, rk, ALL)).unwrap();
        let mut want = Vec::new();
        let rows = whole.process_batch(&batch, 0, &mut want).unwrap();

        // Each change's output alone: a call stops after the change, or within a change after the
        // matched row, at which its output reaches the bound, so it writes less than the bound
        // and the most one change writes.
        let mut single = JoinEngine::new(&spec(jt, lk, rk, ALL)).unwrap();
        let mut most = 0;
        for (i, c) in world.changes.iter().enumerate() {
            let mut one = Vec::new();
            c.batch_at(keys, Some(i as i64), &mut one);
            let mut out = Vec::new();
            single.process_batch(&one, 0, &mut out).unwrap();
            most = most.max(out.len());
        }

        let mut bounded = JoinEngine::new(&spec(jt, lk, rk, ALL)).unwrap();
        bounded.set_output_bound(bound);
        let mut got = Vec::new();
        let mut got_rows = bounded.process_batch(&batch, 0, &mut got).unwrap();
        let mut calls = vec![got.len()];
        while bounded.has_pending() {
            let refused = bounded.process_batch(&batch, 0, &mut Vec::new()).unwrap_err();
            prop_assert!(refused.to_string().contains("resume"), "{}", refused);
            let before = got.len();
            got_rows += bounded.resume(&mut got).unwrap();
            calls.push(got.len() - before);
            // Each call but the last writes a row at least: no more calls than bytes.
            prop_assert!(calls.len() <= want.len() + 1, "no progress: calls {:?}", &calls[..20]);
        }
        prop_assert_eq!(bounded.resume(&mut got).unwrap(), 0);
        let (last, stopped) = calls.split_last().unwrap();
        for &call in stopped {
            prop_assert!(call >= bound && call < bound + most, "calls {:?}, bound {}, most {}", calls, bound, most);
        }
        prop_assert!(*last < bound + most, "calls {:?}", calls);
        prop_assert_eq!(print_output(&got), print_output(&want));
        prop_assert_eq!(got, want);
        prop_assert_eq!(got_rows, rows);
        prop_assert_eq!(bounded.stats(), whole.stats());
        let state = |e: &JoinEngine| sections(&e.key_groups_with_state(), &|kg, out| e.snapshot_key_group(kg, out).unwrap());
        prop_assert_eq!(state(&bounded), state(&whole));
    }
}

/// The changes of `ops`, every row deleted at the end, and two cuts: `cut` of them, then `mid` of
/// the rest (as absolute positions): what runs before a freeze, until the next step, and after.
fn cut_twice(
    keys: [Keys; 2],
    ops: &[Op],
    cut: prop::sample::Index,
    mid: prop::sample::Index,
) -> (Vec<Change>, usize, usize) {
    let mut world = World::new(keys);
    ops.iter().for_each(|o| world.apply(o));
    world.delete_all();
    let cut = cut.index(world.changes.len() + 1);
    let mid = cut + mid.index(world.changes.len() - cut + 1);
    (world.changes, cut, mid)
}

/// An engine joining as `jt` on `keys`, and a twin of it, both after `head`.
fn engine_and_twin(jt: JoinType, keys: [Keys; 2], head: &[Change]) -> (JoinEngine, JoinEngine) {
    let [mut engine, mut twin] =
        [(); 2].map(|()| JoinEngine::new(&spec(jt, keys[0], keys[1], ALL)).unwrap());
    run(&mut engine, keys, head);
    run(&mut twin, keys, head);
    (engine, twin)
}

/// The sections of `kgs`, each written by `write`.
fn sections(kgs: &[u16], write: &dyn Fn(u16, &mut Vec<u8>)) -> Vec<Vec<u8>> {
    kgs.iter()
        .map(|&kg| {
            let mut out = Vec::new();
            write(kg, &mut out);
            out
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

    #[test]
    fn hot_keys_materialize_to_the_join_of_final_tables(
        jt in join_type(), lk in keys(), rk in keys(), ops in prop::collection::vec(hot_op(), 200..600)
    ) {
        check_changelog(jt, [lk, rk], &ops)?;
    }

    #[test]
    fn a_frozen_state_is_the_state_of_its_instant(
        jt in join_type(), lk in keys(), rk in keys(),
        ops in prop::collection::vec(hot_op(), 1..400), cut in any::<prop::sample::Index>(),
        mid in any::<prop::sample::Index>(), abort_after in 0..4usize
    ) {
        let keys = [lk, rk];
        let (changes, cut, mid) = cut_twice(keys, &ops, cut, mid);
        let (head, early, late) = (&changes[..cut], &changes[cut..mid], &changes[mid..]);
        let (mut engine, mut twin) = engine_and_twin(jt, keys, head);
        // The live state as each side's groups, sorted: a table's bucket order depends on the
        // order its keys came and went in, which copies merged back into it change.
        let live = |e: &JoinEngine| canonical(2, &sections(&e.key_groups_with_state(), &|kg, out| e.snapshot_key_group(kg, out).unwrap()));
        let want = sections(&engine.key_groups_with_state(), &|kg, out| engine.snapshot_key_group(kg, out).unwrap());
        let at_freeze = engine.state_size().heap_bytes;
        let frozen = engine.freeze();
        let aborted = engine.freeze();
        prop_assert_eq!(engine.frozen_bytes(), 0, "freezing copies nothing");
        // While frozen states hold its key groups the engine writes to copies of the keys it
        // changes, and joins as it would without them.
        prop_assert_eq!(run(&mut engine, keys, early), run(&mut twin, keys, early));
        prop_assert_eq!(engine.key_groups_with_state(), twin.key_groups_with_state());
        prop_assert!(live(&engine) == live(&twin), "the live state differs from the twin's");
        prop_assert!(engine.frozen_bytes() <= at_freeze, "{} frozen bytes", engine.frozen_bytes());
        prop_assert_eq!(engine.state_size().frozen_bytes, engine.frozen_bytes());
        // An aborted write (a few sections, then dropped); then half the sections of the other.
        let kgs = frozen.key_groups_with_state();
        let abort_after = abort_after.min(kgs.len());
        let partial = sections(&kgs[..abort_after], &|kg, out| aborted.snapshot_key_group(kg, out).unwrap());
        prop_assert!(partial[..] == want[..abort_after], "the aborted state differs");
        drop(aborted);
        let half = kgs.len() / 2;
        let mut got = sections(&kgs[..half], &|kg, out| frozen.snapshot_key_group(kg, out).unwrap());
        prop_assert_eq!(run(&mut engine, keys, late), run(&mut twin, keys, late));
        got.extend(sections(&kgs[half..], &|kg, out| frozen.snapshot_key_group(kg, out).unwrap()));
        prop_assert!(got == want, "the frozen state differs from the state at its instant");
        if let Some(&kg) = kgs.first() {
            prop_assert!(frozen.snapshot_key_group(kg, &mut Vec::new()).is_err(), "handed out once");
        }
        // Once every section is handed out, settling (what every batch ends with, and what an
        // idle operator calls once a snapshot is released) puts the copies back into the tables.
        engine.settle();
        prop_assert_eq!(engine.frozen_bytes(), 0);
        prop_assert!(live(&engine) == live(&twin), "the live state differs from the twin's");
        drop(frozen);
        prop_assert!(engine.key_groups_with_state().is_empty());
    }

    /// A freeze while an earlier frozen state is still being written (a savepoint during a
    /// checkpoint) writes and merges nothing on the engine's thread, and each frozen state writes
    /// the state of its own instant.
    #[test]
    fn a_freeze_during_another_snapshot_is_the_state_of_its_instant(
        jt in join_type(), lk in keys(), rk in keys(),
        ops in prop::collection::vec(hot_op(), 1..400), cut in any::<prop::sample::Index>(),
        mid in any::<prop::sample::Index>(), written_first in any::<prop::sample::Index>()
    ) {
        let keys = [lk, rk];
        let (changes, cut, mid) = cut_twice(keys, &ops, cut, mid);
        let (head, early, late) = (&changes[..cut], &changes[cut..mid], &changes[mid..]);
        let (mut engine, mut twin) = engine_and_twin(jt, keys, head);
        let state = |e: &JoinEngine| sections(&e.key_groups_with_state(), &|kg, out| e.snapshot_key_group(kg, out).unwrap());
        let live = |e: &JoinEngine| canonical(2, &state(e));
        let want_first = state(&engine);
        let first = engine.freeze();
        let kgs = first.key_groups_with_state();
        let n = written_first.index(kgs.len() + 1);
        let mut got_first = sections(&kgs[..n], &|kg, out| first.snapshot_key_group(kg, out).unwrap());
        prop_assert_eq!(run(&mut engine, keys, early), run(&mut twin, keys, early));
        let want_second = state(&engine);
        let frozen_before = engine.frozen_bytes();
        let second = engine.freeze();
        prop_assert_eq!(engine.frozen_bytes(), frozen_before, "the second freeze wrote or merged");
        prop_assert_eq!(run(&mut engine, keys, late), run(&mut twin, keys, late));
        prop_assert!(live(&engine) == live(&twin), "the live state differs from the twin's");
        got_first.extend(sections(&kgs[n..], &|kg, out| first.snapshot_key_group(kg, out).unwrap()));
        prop_assert!(got_first == want_first, "the first frozen state differs from its instant");
        // The first is done, the second still holds the tables and layers: nothing merges yet.
        engine.process_batch(&[], 0, &mut Vec::new()).unwrap();
        let got_second = sections(&second.key_groups_with_state(), &|kg, out| second.snapshot_key_group(kg, out).unwrap());
        prop_assert!(got_second == want_second, "the second frozen state differs from its instant");
        // Once both are written, the next batch merges every layer and copy into the tables.
        engine.process_batch(&[], 0, &mut Vec::new()).unwrap();
        prop_assert_eq!(engine.frozen_bytes(), 0);
        prop_assert!(live(&engine) == live(&twin), "the live state differs from the twin's");
    }
}
