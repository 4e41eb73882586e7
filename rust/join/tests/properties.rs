//! Property tests of the join algebra over random valid CDC traces of two tables, for all four join
//! types and all three state layouts:
//! - the emitted changelog, applied to an empty multiset, never retracts an absent row and ends as
//!   the join of the two final tables computed by a simple reference;
//! - after every row is deleted, no state is left;
//! - snapshot, restore split across two instances by key group, and continue gives exactly the
//!   output of an uninterrupted run.

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
}

fn side() -> impl Strategy<Value = Side> {
    prop_oneof![Just(Side::Left), Just(Side::Right)]
}

fn key() -> impl Strategy<Value = Option<i32>> {
    prop_oneof![1 => Just(None), 8 => (0..5).prop_map(Some)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (side(), 0..6i32, key(), 0..3u8).prop_map(|(side, id, k, v)| Op::Insert { side, id, k, v }),
        4 => (side(), any::<usize>(), 0..4u8, key(), 0..3u8).prop_map(|(side, idx, what, k, v)| Op::Update { side, idx, what, k, v }),
        2 => (side(), any::<usize>()).prop_map(|(side, idx)| Op::Delete { side, idx }),
    ]
}

fn keys() -> impl Strategy<Value = Keys> {
    prop_oneof![Just(Keys::JoinOnPk), Just(Keys::Pk), Just(Keys::NoPk)]
}

fn join_type() -> impl Strategy<Value = JoinType> {
    prop_oneof![
        Just(JoinType::Inner),
        Just(JoinType::Left),
        Just(JoinType::Right),
        Just(JoinType::Full)
    ]
}

/// Interprets ops against two tables, producing the CDC changelog (updates split into a retraction
/// of `before` then an insertion of `after`) and the final tables.
struct World {
    keys: [Keys; 2],
    tables: [Vec<Row>; 2],
    next_id: i32,
    changes: Vec<Change>,
}

impl World {
    fn new(keys: [Keys; 2]) -> World {
        World {
            keys,
            tables: [vec![], vec![]],
            next_id: 100,
            changes: vec![],
        }
    }

    fn fresh_id(&mut self, side: Side, suggested: i32) -> i32 {
        if self.keys[side as usize] == Keys::NoPk {
            return suggested; // duplicates allowed: a multiset
        }
        self.next_id += 1;
        self.next_id
    }

    fn emit(&mut self, side: Side, kind: RowKind, row: Row) {
        self.changes.push(Change::new(side, kind, row));
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
                let row = t.remove(idx % t.len());
                self.emit(side, RowKind::Delete, row);
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn changelog_materializes_to_the_join_of_final_tables(
        jt in join_type(), lk in keys(), rk in keys(), ops in prop::collection::vec(op(), 0..60)
    ) {
        let keys = [lk, rk];
        let mut world = World::new(keys);
        ops.iter().for_each(|o| world.apply(o));
        let mut engine = JoinEngine::new(&spec(jt, lk, rk, ALL)).unwrap();
        let out: Vec<String> = run(&mut engine, keys, &world.changes).into_iter().flatten().collect();
        let got = materialize(&out);
        let want = reference(jt, keys, &world.tables[0], &world.tables[1]);
        prop_assert_eq!(got, want);
        prop_assert_eq!(engine.stats().absent_retractions, 0);
        prop_assert_eq!(engine.stats().stored_rows, (world.tables[0].len() + world.tables[1].len()) as u64);

        // Deleting every row leaves an empty result and no state at all.
        let from = world.changes.len();
        world.delete_all();
        let rest: Vec<String> = run(&mut engine, keys, &world.changes[from..]).into_iter().flatten().collect();
        prop_assert!(materialize(out.iter().chain(&rest)).is_empty());
        prop_assert_eq!(engine.stats().stored_rows, 0);
        prop_assert!(engine.key_groups_with_state().is_empty());
        let size = engine.state_size();
        prop_assert_eq!((size.keys, size.group_bytes), (0, 0), "incremental counters drifted");
    }

    #[test]
    fn snapshot_restore_split_continues_identically(
        jt in join_type(), lk in keys(), rk in keys(),
        ops in prop::collection::vec(op(), 1..60), cut in any::<prop::sample::Index>(), split in 1..MAX_KG
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
