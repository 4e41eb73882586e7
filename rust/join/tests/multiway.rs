//! The multi-way join on one key (`cdcjoin_join::multiway`) against two references, over random
//! traces of three and four inputs `(id INT NOT NULL, k INT, v STRING)`, each keyed on `id` (the
//! join key contains the primary key), on `k` with primary key `id`, or on `k` without a primary
//! key (a multiset, duplicates included), for every mix of step join types (INNER, LEFT, RIGHT,
//! FULL), with inserts, updates that move rows between keys (`-U`/`+U`), upserts (`+U` alone,
//! replacing the stored row of its primary key), deletes and null keys:
//! - the materialized output (never retracting a row it does not hold) equals the join of the
//!   final tables, computed by nested loops with each step's null padding on the `USING` key;
//! - after every input change, the multiset of output changes (kinds included) equals the one the
//!   chain of binary `JoinEngine`s emits for it, the chain's intermediate results re-keyed by the
//!   `USING` key and stored without a primary key. The multiset, not the sequence: the chain visits
//!   the rows of its stored intermediate result in the order they were stored, which depends on
//!   the history of the key, while the multi-way join visits them as the product of the inputs'
//!   rows. The same on five to eight inputs, with fewer cases;
//! - the same per-change equality when changes carry unavailable columns (Debezium's placeholder for
//!   an unchanged TOASTed value, a delete by key): the same filled rows, and the same rejections,
//!   with the same messages but for the input's name (`input 2` here, `right` in the chain).
//! - under TTL (4 to 20 ms per input, or none, the clock moving 0 to 8 ms per step), against a
//!   model of the inputs' rows with their write times ([`Oracle`]): per change, the output changes
//!   summed up are the change of the join of the visible rows at the change's time (also on keys
//!   of many rows); a sweep frees the rows of the inputs with TTL; a snapshot keeps the write
//!   times (the trace goes on alike after a restore) and restores only where the same inputs
//!   declare a TTL.

mod support;

use cdcjoin_join::batch::{write_input, InputRecord, WideEntries, WideEntry};
use cdcjoin_join::group::Group;
use cdcjoin_join::Compression;
use cdcjoin_join::{
    JoinEngine, JoinSpec, JoinType, KeyGroupRange, MultiwayJoin, MultiwaySpec, MultiwayStats,
    OutputEntries, OutputEntry, OutputWriter, RetractionPolicy, Side, SideSpec,
};
use cdcjoin_model::value::format_row;
use cdcjoin_model::{DataType, Field, RowKind, RowLayout, RowRef, RowWriter, Schema, Value};
use proptest::prelude::*;
use std::collections::BTreeMap;
use support::{canonical, encode, join_type, key_group, keys, materialize, schema, Keys, Row};

const ALL: KeyGroupRange = KeyGroupRange { start: 0, end: 127 };

/// The inputs' keys and the steps' join types, and the policy for absent retractions.
#[derive(Clone, Debug)]
struct Shape {
    keys: Vec<Keys>,
    steps: Vec<JoinType>,
    policy: RetractionPolicy,
    /// Each input's TTL (none in the traces without a clock).
    ttls: Vec<Option<u64>>,
}

impl Shape {
    fn n(&self) -> usize {
        self.keys.len()
    }

    fn outer(&self, j: usize) -> (bool, bool) {
        let t = self.steps[j - 1];
        (t.is_outer(Side::Left), t.is_outer(Side::Right))
    }

    fn multiway(&self) -> MultiwayJoin {
        self.multiway_in(ALL)
    }

    /// A multi-way join owning the key groups `range`.
    fn multiway_in(&self, range: KeyGroupRange) -> MultiwayJoin {
        MultiwayJoin::new(&MultiwaySpec {
            inputs: (self.keys.iter().enumerate())
                .map(|(i, k)| k.side_spec(self.ttls.get(i).copied().flatten()))
                .collect(),
            steps: self.steps.clone(),
            absent_retraction: self.policy,
            key_groups: range,
        })
        .unwrap()
    }

    /// The key of a joined tuple: that of its first present row (they share it).
    fn using_key(&self, tuple: &[Option<&Row>]) -> Option<i32> {
        (tuple.iter().zip(&self.keys)).find_map(|(r, k)| r.map(|r| k.join_value(r)))?
    }
}

/// The values of a row, or its input's nulls.
fn values(r: Option<&Row>) -> Vec<Value> {
    match r {
        Some(r) => vec![
            Value::Int(r.id),
            r.k.map_or(Value::Null, Value::Int),
            Value::String(r.v.clone()),
        ],
        None => vec![Value::Null; 3],
    }
}

/// A rejection's message printed without the input's name, which the multi-way join and the chain
/// word differently (`input 2 row ...`, `right row ...`).
fn rejection(message: &str) -> String {
    let (_, rest) = message.split_once(" row ").expect("names the row");
    format!("REJECTED row {rest}")
}

/// Applies one change to the multi-way join; returns its output, printed.
fn run_multiway(j: &mut MultiwayJoin, shape: &Shape, c: &Input) -> Vec<String> {
    let mut out = Vec::new();
    let kg = key_group(shape.keys[c.input].join_value(&c.row));
    j.apply(
        c.input,
        c.kind,
        kg,
        &encode(&c.row, c.unavailable),
        0,
        &mut OutputWriter::new(&mut out),
    )
    .unwrap_or_else(|e| panic!("{c:?}: {e}"));
    printed(&out, shape, c)
}

/// The output entries `out` of the change `c`, printed (a rejection without its input's name).
fn printed(out: &[u8], shape: &Shape, c: &Input) -> Vec<String> {
    let layout = RowLayout::new(&schema());
    WideEntries::new(out, shape.n())
        .map(|e| match e {
            WideEntry::Row(r) => {
                let vals: Vec<Value> = (r.rows().iter())
                    .flat_map(|row| match row {
                        Some(b) => Value::read_row(&RowRef::new(&layout, b)),
                        None => vec![Value::Null; 3],
                    })
                    .collect();
                format_row(r.kind, &vals)
            }
            WideEntry::Rejected { input, message, .. } => {
                assert_eq!(input, c.input, "{message}");
                rejection(message)
            }
        })
        .collect()
}

/// The schema of `R(j-1)`, the result of inputs `0..j`, as step `j`'s left input in the chain: the
/// `USING` key, then each input's columns.
fn intermediate(j: usize) -> Schema {
    let mut fields = vec![Field::new("key", DataType::Int)];
    for m in 0..j {
        fields.push(Field::new(&format!("id{m}"), DataType::Int));
        fields.push(Field::new(&format!("k{m}"), DataType::Int));
        fields.push(Field::new(&format!("v{m}"), DataType::String));
    }
    Schema::new(fields)
}

/// The chain of binary joins: `engines[j - 1]` is step `j`.
struct Chain {
    shape: Shape,
    engines: Vec<JoinEngine>,
}

impl Chain {
    fn new(shape: &Shape) -> Chain {
        let engines = (1..shape.n())
            .map(|j| {
                let left = match j {
                    1 => shape.keys[0].side_spec(None),
                    _ => SideSpec {
                        schema: intermediate(j),
                        join_key: vec!["key".into()],
                        primary_key: None,
                        ttl_ms: None,
                        exact_retractions: false,
                    },
                };
                JoinEngine::new(&JoinSpec {
                    left,
                    right: shape.keys[j].side_spec(None),
                    join_type: shape.steps[j - 1],
                    absent_retraction: shape.policy,
                    key_groups: ALL,
                })
                .unwrap()
            })
            .collect();
        Chain {
            shape: shape.clone(),
            engines,
        }
    }

    /// Runs one batch through step `j`; returns its output as (kind, values of inputs `0..=j`),
    /// its rejections printed (see [`rejection`]) appended to `rejected`.
    fn step(
        &mut self,
        j: usize,
        batch: &[u8],
        rejected: &mut Vec<String>,
    ) -> Vec<(RowKind, Vec<Value>)> {
        let mut out = Vec::new();
        (self.engines[j - 1].process_batch(batch, 0, &mut out)).unwrap_or_else(|e| panic!("{e}"));
        let base = RowLayout::new(&schema());
        let left = RowLayout::new(&intermediate(j));
        OutputEntries::new(&out)
            .filter_map(|e| {
                let r = match e {
                    OutputEntry::Row(r) => r,
                    OutputEntry::Rejected { message, .. } => {
                        rejected.push(rejection(message));
                        return None;
                    }
                };
                let mut vals = match (r.left, j) {
                    (None, _) => vec![Value::Null; 3 * j],
                    (Some(b), 1) => Value::read_row(&RowRef::new(&base, b)),
                    (Some(b), _) => Value::read_row(&RowRef::new(&left, b))[1..].to_vec(),
                };
                vals.extend(match r.right {
                    None => vec![Value::Null; 3],
                    Some(b) => Value::read_row(&RowRef::new(&base, b)),
                });
                Some((r.kind, vals))
            })
            .collect()
    }

    /// The batch feeding `changes` of `R(j)` to step `j + 1` as changes of its left input.
    fn feed(&self, j: usize, changes: &[(RowKind, Vec<Value>)]) -> Vec<u8> {
        let layout = RowLayout::new(&intermediate(j + 1));
        let mut batch = Vec::new();
        for (kind, vals) in changes {
            let key = (0..=j).find_map(|m| {
                let col = 3 * m + (self.shape.keys[m] != Keys::JoinOnPk) as usize;
                match vals[col] {
                    Value::Int(k) if vals[3 * m] != Value::Null => Some(k),
                    _ => None,
                }
            });
            let mut row = Vec::new();
            let mut w = RowWriter::new(&layout, &mut row);
            key.map_or(Value::Null, Value::Int).write(&mut w);
            vals.iter().for_each(|v| v.write(&mut w));
            w.finish();
            let rec = InputRecord {
                side: Side::Left,
                kind: *kind,
                key_group: key_group(key),
                timestamp: None,
                row: &row,
            };
            write_input(&mut batch, &rec);
        }
        batch
    }

    /// Applies one input change; returns the last step's output and the rejections, printed.
    fn run(&mut self, c: &Input) -> Vec<String> {
        let row = encode(&c.row, c.unavailable);
        let rec = InputRecord {
            side: if c.input == 0 {
                Side::Left
            } else {
                Side::Right
            },
            kind: c.kind,
            key_group: key_group(self.shape.keys[c.input].join_value(&c.row)),
            timestamp: None,
            row: &row,
        };
        let mut batch = Vec::new();
        write_input(&mut batch, &rec);
        let first = c.input.max(1);
        let mut rejected = Vec::new();
        let mut changes = self.step(first, &batch, &mut rejected);
        for j in first + 1..self.shape.n() {
            let batch = self.feed(j - 1, &changes);
            changes = self.step(j, &batch, &mut rejected);
        }
        let rows = changes.iter().map(|(k, v)| format_row(*k, v));
        rows.chain(rejected).collect()
    }
}

/// The join of the final tables by nested loops, printed without kind.
fn reference(shape: &Shape, tables: &[Vec<Row>]) -> BTreeMap<String, i64> {
    let mut result: Vec<Vec<Option<&Row>>> = tables[0].iter().map(|r| vec![Some(r)]).collect();
    for (j, table) in tables.iter().enumerate().skip(1) {
        let (lo, ro) = shape.outer(j);
        let key = |m: &Row| shape.keys[j].join_value(m);
        let matches = |x: &Vec<Option<&Row>>, m: &Row| {
            let k = shape.using_key(x);
            k.is_some() && k == key(m)
        };
        let mut next = Vec::new();
        for x in &result {
            let ms: Vec<&Row> = table.iter().filter(|m| matches(x, m)).collect();
            for m in &ms {
                next.push([&x[..], &[Some(*m)]].concat());
            }
            if ms.is_empty() && lo {
                next.push([&x[..], &[None]].concat());
            }
        }
        if ro {
            for m in tables[j]
                .iter()
                .filter(|m| !result.iter().any(|x| matches(x, m)))
            {
                let mut t = vec![None; j];
                t.push(Some(m));
                next.push(t);
            }
        }
        result = next;
    }
    let mut m = BTreeMap::new();
    for t in result {
        let vals: Vec<Value> = t.iter().flat_map(|r| values(*r)).collect();
        *m.entry(format_row(RowKind::Insert, &vals)[2..].to_string())
            .or_insert(0) += 1;
    }
    m
}

/// One change of one input.
#[derive(Clone, Debug)]
struct Input {
    input: usize,
    kind: RowKind,
    row: Row,
    /// Columns sent as unavailable.
    unavailable: &'static [&'static str],
}

/// What a trace step does to the rows of `id` in one input's table.
#[derive(Clone, Debug)]
enum Write {
    /// Delete one copy.
    Delete,
    /// Insert the row if `id` has none, else update one copy (`-U`/`+U`, or, with `upsert` on an
    /// input with a primary key when the key stays, `+U` alone); `dup` on a multiset input inserts
    /// one more copy of a stored row instead.
    Put {
        k: Option<i32>,
        v: u8,
        upsert: bool,
        dup: bool,
    },
}

#[derive(Clone, Debug)]
struct Step {
    input: usize,
    id: i32,
    write: Write,
}

/// A step on one of `n` inputs, on one of `ids` ids, writing one of `keys` keys (or null).
fn step(n: usize, ids: i32, keys: i32) -> impl Strategy<Value = Step> {
    let k = prop_oneof![1 => Just(None), 6 => (0..keys).prop_map(Some)];
    let put = (k, 0..3u8, any::<bool>(), prop::bool::weighted(0.2))
        .prop_map(|(k, v, upsert, dup)| Write::Put { k, v, upsert, dup });
    let write = prop_oneof![1 => Just(Write::Delete), 3 => put];
    (0..n, 0..ids, write).prop_map(|(input, id, write)| Step { input, id, write })
}

/// The changes of `step` against `tables`, applied to them.
fn changes(shape: &Shape, step: &Step, tables: &mut [Vec<Row>]) -> Vec<Input> {
    let (i, keys) = (step.input, shape.keys[step.input]);
    let table = &mut tables[i];
    let at = table.iter().position(|r| r.id == step.id);
    let change = |kind, row: &Row| Input {
        input: i,
        kind,
        row: row.clone(),
        unavailable: &[],
    };
    match (&step.write, at) {
        (Write::Delete, None) => vec![],
        (Write::Delete, Some(at)) => vec![change(RowKind::Delete, &table.remove(at))],
        (&Write::Put { k, v, upsert, dup }, at) => {
            let new = Row {
                id: step.id,
                k,
                v: format!("v{v}"),
            };
            let Some(at) = at else {
                table.push(new.clone());
                return vec![change(RowKind::Insert, &new)];
            };
            let old = table[at].clone();
            if dup && keys == Keys::NoPk {
                table.push(old.clone());
                return vec![change(RowKind::Insert, &old)];
            }
            table[at] = new.clone();
            match (old == new, upsert && keys != Keys::NoPk) {
                (true, true) => vec![change(RowKind::UpdateAfter, &new)],
                (true, false) => vec![],
                (false, true) if keys.join_value(&old) == keys.join_value(&new) => {
                    vec![change(RowKind::UpdateAfter, &new)]
                }
                _ => vec![
                    change(RowKind::UpdateBefore, &old),
                    change(RowKind::UpdateAfter, &new),
                ],
            }
        }
    }
}

/// A shape of `inputs` inputs and a trace of its steps over few ids and keys.
fn shape_and_trace(
    inputs: std::ops::RangeInclusive<usize>,
) -> impl Strategy<Value = (Shape, Vec<Step>)> {
    shape_and_steps(inputs, (5, 4), 1..60)
}

/// A shape of `inputs` inputs and a trace of `len` steps over `ids` ids and `values` keys.
fn shape_and_steps(
    inputs: std::ops::RangeInclusive<usize>,
    (ids, values): (i32, i32),
    len: std::ops::Range<usize>,
) -> impl Strategy<Value = (Shape, Vec<Step>)> {
    inputs.prop_flat_map(move |n| {
        let shape = (
            prop::collection::vec(keys(), n),
            prop::collection::vec(join_type(), n - 1),
        )
            .prop_map(|(keys, steps)| Shape {
                keys,
                steps,
                policy: RetractionPolicy::Fail,
                ttls: Vec::new(),
            });
        (
            shape,
            prop::collection::vec(step(n, ids, values), len.clone()),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn materializes_to_the_join_of_the_final_tables((shape, steps) in shape_and_trace(3..=4)) {
        let mut j = shape.multiway();
        let mut tables = vec![Vec::new(); shape.n()];
        let mut out = Vec::new();
        for s in &steps {
            for c in changes(&shape, s, &mut tables) {
                out.extend(run_multiway(&mut j, &shape, &c));
            }
        }
        prop_assert_eq!(materialize(&out), reference(&shape, &tables));
        let stored: usize = tables.iter().map(Vec::len).sum();
        prop_assert_eq!(j.stats().stored_rows, stored as u64);
    }

    #[test]
    fn emits_what_the_chain_of_binary_joins_emits_per_change(
        (shape, steps) in shape_and_trace(3..=4),
    ) {
        same_as_the_chain(&shape, &steps);
    }
}

/// Which columns a change sends as unavailable: mostly none or `v` (filled, or rejected for
/// nothing stored to fill from), sometimes a key (rejected).
const HIDE: [&[&str]; 8] = [&[], &[], &[], &["v"], &["v"], &["k"], &["id"], &["k", "v"]];

/// Appends `c` to `batch` as a block of one, stamped `timestamp`.
fn batch_input(shape: &Shape, c: &Input, timestamp: Option<i64>, batch: &mut Vec<u8>) {
    let row = encode(&c.row, c.unavailable);
    let rec = InputRecord {
        side: c.input as u8,
        kind: c.kind,
        key_group: key_group(shape.keys[c.input].join_value(&c.row)),
        timestamp,
        row: &row,
    };
    write_input(batch, &rec);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// A bounded output comes in pieces that make up the whole, as for the two-table join
    /// (`properties.rs`): each call but the last stops after the row, or the change's rejection,
    /// at which its output reaches the bound (within a change too: the join goes through the rows
    /// written before again, not writing them).
    #[test]
    fn a_bounded_output_is_the_whole_output_in_pieces(
        (shape, steps) in shape_and_trace(2..=4), bound in 1usize..600
    ) {
        let mut tables = vec![Vec::new(); shape.n()];
        let trace: Vec<Input> = steps.iter().flat_map(|s| changes(&shape, s, &mut tables)).collect();
        let mut batch = Vec::new();
        for (i, c) in trace.iter().enumerate() {
            batch_input(&shape, c, Some(i as i64), &mut batch);
        }
        let (mut whole, mut want) = (shape.multiway(), Vec::new());
        let rows = whole.process_batch(&batch, 0, &mut want).unwrap();

        let (mut bounded, mut got) = (shape.multiway(), Vec::new());
        bounded.set_output_bound(bound);
        let mut got_rows = bounded.process_batch(&batch, 0, &mut got).unwrap();
        let mut calls = vec![(0, got.len())];
        while bounded.has_pending() {
            let refused = bounded.process_batch(&batch, 0, &mut Vec::new()).unwrap_err();
            prop_assert!(refused.to_string().contains("resume"), "{}", refused);
            let before = got.len();
            got_rows += bounded.resume(&mut got).unwrap();
            calls.push((before, got.len()));
            // Each call but the last writes a row at least, or completes a change.
            prop_assert!(calls.len() <= batch.len() + want.len() + 1, "no progress: {:?}", &calls[..20]);
        }
        prop_assert_eq!(bounded.resume(&mut got).unwrap(), 0);
        let mut entries = WideEntries::new(&want, shape.n());
        let ends: Vec<usize> = std::iter::from_fn(|| entries.next().map(|_| want.len() - entries.unread())).collect();
        for &(start, end) in &calls[..calls.len() - 1] {
            let last_before = ends.iter().rev().find(|&&e| e < end).map_or(0, |&e| e);
            prop_assert!(
                ends.contains(&end) && end - start >= bound && last_before.saturating_sub(start) < bound,
                "calls {:?}, bound {}, entries end at {:?}", calls, bound, ends
            );
        }
        prop_assert_eq!(got, want);
        prop_assert_eq!(got_rows, rows);
        prop_assert_eq!(bounded.stats(), whole.stats());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Changes with unavailable columns: the same output and the same rejections as the chain,
    /// change by change. A rejected change leaves the tables of the trace behind the joins'
    /// state, so absent retractions are ignored (by both).
    #[test]
    fn unavailable_columns_give_what_the_chain_gives(
        (shape, steps) in shape_and_trace(3..=4),
        hide in prop::collection::vec(prop::sample::select(HIDE.to_vec()), 60),
    ) {
        let shape = Shape { policy: RetractionPolicy::Ignore, ..shape };
        same_as_the_chain_hiding(&shape, &steps, &hide);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

    /// Up to the most inputs a multi-way join takes.
    #[test]
    fn five_to_eight_inputs_emit_what_the_chain_emits((shape, steps) in shape_and_trace(5..=8)) {
        same_as_the_chain(&shape, &steps);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Keys of many rows: 40 rows of the first and the last input under key 0 first (their
    /// groups pass the binary join's indexing threshold, `INDEX_AT`, 32 rows, and stay past it),
    /// then the random steps.
    #[test]
    fn hot_keys_emit_what_the_chain_emits(
        (shape, steps) in shape_and_steps(3..=3, (60, 2), 100..200),
    ) {
        // Joined on `k`: on `id`, every key holds one row.
        let on_k = |k| if k == Keys::JoinOnPk { Keys::Pk } else { k };
        let shape = Shape { keys: shape.keys.into_iter().map(on_k).collect(), ..shape };
        let hot = |input, id| Step {
            input,
            id,
            write: Write::Put { k: Some(0), v: 0, upsert: false, dup: false },
        };
        let prefix = (1000..1040).flat_map(|id| [hot(0, id), hot(2, id)]);
        let steps: Vec<Step> = prefix.chain(steps).collect();
        let (_, _, stats) = same_as_the_chain(&shape, &steps);
        let slots = stats.stored_keys * (3 * std::mem::size_of::<Group>()) as u64;
        prop_assert!(stats.overhead_bytes > slots, "a group is indexed: {:?}", stats);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

    /// A snapshot of every key group restored into one instance, and into two instances owning
    /// half the key groups each (a rescale), then the trace goes on in all three: each change
    /// gives the same output, and the state is the same.
    #[test]
    fn snapshots_restore_and_rescale(
        (shape, steps) in shape_and_trace(3..=4),
        split in 0.0..1.0f64,
        lz4 in any::<bool>(),
    ) {
        let at = (steps.len() as f64 * split) as usize;
        let mut whole = shape.multiway();
        let mut tables = vec![Vec::new(); shape.n()];
        for s in &steps[..at] {
            for c in changes(&shape, s, &mut tables) {
                run_multiway(&mut whole, &shape, &c);
            }
        }
        if lz4 {
            whole.set_snapshot_compression(Compression::Lz4);
        }
        let halves = [KeyGroupRange { start: 0, end: 63 }, KeyGroupRange { start: 64, end: 127 }];
        let mut restored = shape.multiway();
        let mut parts = halves.map(|r| shape.multiway_in(r));
        for kg in whole.key_groups_with_state() {
            let mut section = Vec::new();
            whole.snapshot_key_group(kg, &mut section).unwrap();
            prop_assert_eq!(restored.restore_key_group(&section).unwrap(), section.len());
            parts[(kg >= 64) as usize].restore_key_group(&section).unwrap();
        }
        // The same rows and groups (the tables' buckets depend on their history).
        let size = |j: &MultiwayJoin| {
            let s = j.state_size();
            (s.rows, s.keys, s.group_bytes)
        };
        prop_assert_eq!(size(&restored), size(&whole));
        for s in &steps[at..] {
            for c in changes(&shape, s, &mut tables) {
                let kg = key_group(shape.keys[c.input].join_value(&c.row));
                let mut expected = run_multiway(&mut whole, &shape, &c);
                let mut again = run_multiway(&mut restored, &shape, &c);
                let mut part = run_multiway(&mut parts[(kg >= 64) as usize], &shape, &c);
                for out in [&mut expected, &mut again, &mut part] {
                    out.sort();
                }
                prop_assert_eq!(&again, &expected, "{:?}", c);
                prop_assert_eq!(&part, &expected, "{:?}", c);
            }
        }
        let rows = parts.iter().map(|p| p.stats().stored_rows).sum::<u64>();
        prop_assert_eq!(rows, whole.stats().stored_rows);
        prop_assert_eq!(restored.stats().stored_rows, whole.stats().stored_rows);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// The two-table join's property (`tests/properties.rs`) on three and four inputs: a frozen
    /// state writes the sections of the state at its freeze while the join goes on (a second one
    /// aborted after a few sections), the join meanwhile emitting and holding what a twin without
    /// freezes does; once the sections are handed out the copies go back into the tables.
    #[test]
    fn a_frozen_state_is_the_state_of_its_instant(
        (shape, steps) in shape_and_trace(3..=4),
        cut in any::<prop::sample::Index>(),
        mid in any::<prop::sample::Index>(),
        abort_after in 0..4usize,
    ) {
        let mut tables = vec![Vec::new(); shape.n()];
        let mut trace: Vec<Input> = steps.iter().flat_map(|s| changes(&shape, s, &mut tables)).collect();
        // Everything deleted at the end, so that the state ends empty.
        for (i, table) in tables.iter().enumerate() {
            trace.extend(table.iter().map(|r| Input { input: i, kind: RowKind::Delete, row: r.clone(), unavailable: &[] }));
        }
        let cut = cut.index(trace.len() + 1);
        let (head, tail) = trace.split_at(cut);
        let (early, late) = tail.split_at(mid.index(tail.len() + 1));
        let run = |j: &mut MultiwayJoin, cs: &[Input]| cs.iter().map(|c| run_multiway(j, &shape, c)).collect::<Vec<_>>();
        let (mut join, mut twin) = (shape.multiway(), shape.multiway());
        run(&mut join, head);
        run(&mut twin, head);
        let sections = |kgs: &[u16], write: &dyn Fn(u16, &mut Vec<u8>)| {
            kgs.iter().map(|&kg| { let mut out = Vec::new(); write(kg, &mut out); out }).collect::<Vec<_>>()
        };
        let live = |j: &MultiwayJoin| canonical(shape.n(), &sections(&j.key_groups_with_state(), &|kg, out| j.snapshot_key_group(kg, out).unwrap()));
        let want = sections(&join.key_groups_with_state(), &|kg, out| join.snapshot_key_group(kg, out).unwrap());
        let at_freeze = join.state_size().heap_bytes;
        let frozen = join.freeze();
        let aborted = join.freeze();
        prop_assert_eq!(join.frozen_bytes(), 0, "freezing copies nothing");
        prop_assert_eq!(run(&mut join, early), run(&mut twin, early));
        prop_assert_eq!(join.key_groups_with_state(), twin.key_groups_with_state());
        prop_assert!(live(&join) == live(&twin), "the live state differs from the twin's");
        prop_assert!(join.frozen_bytes() <= at_freeze, "{} frozen bytes", join.frozen_bytes());
        prop_assert_eq!(join.state_size().frozen_bytes, join.frozen_bytes());
        let kgs = frozen.key_groups_with_state();
        let abort_after = abort_after.min(kgs.len());
        let partial = sections(&kgs[..abort_after], &|kg, out| aborted.snapshot_key_group(kg, out).unwrap());
        prop_assert!(partial[..] == want[..abort_after], "the aborted state differs");
        drop(aborted);
        let half = kgs.len() / 2;
        let mut got = sections(&kgs[..half], &|kg, out| frozen.snapshot_key_group(kg, out).unwrap());
        prop_assert_eq!(run(&mut join, late), run(&mut twin, late));
        got.extend(sections(&kgs[half..], &|kg, out| frozen.snapshot_key_group(kg, out).unwrap()));
        prop_assert!(got == want, "the frozen state differs from the state at its instant");
        if let Some(&kg) = kgs.first() {
            prop_assert!(frozen.snapshot_key_group(kg, &mut Vec::new()).is_err(), "handed out once");
        }
        // Once every section is handed out, settling (what every batch ends with, and what an
        // idle operator calls once a snapshot is released) puts the copies back into the tables.
        join.settle();
        prop_assert_eq!(join.frozen_bytes(), 0);
        prop_assert!(live(&join) == live(&twin), "the live state differs from the twin's");
        drop(frozen);
        prop_assert!(join.key_groups_with_state().is_empty());
        prop_assert_eq!(join.state_size(), twin.state_size());
    }
}

/// Runs `steps` through the multi-way join and the chain, checking that they emit the same
/// multiset of output changes per input change; returns the multi-way join's output and the final
/// tables, and its counters.
fn same_as_the_chain(shape: &Shape, steps: &[Step]) -> (Vec<String>, Vec<Vec<Row>>, MultiwayStats) {
    same_as_the_chain_hiding(shape, steps, &[])
}

/// [`same_as_the_chain`], the changes of `steps[n]` sending the columns `hide[n]` as unavailable
/// (none past the end of `hide`), their rejections compared too.
fn same_as_the_chain_hiding(
    shape: &Shape,
    steps: &[Step],
    hide: &[&'static [&'static str]],
) -> (Vec<String>, Vec<Vec<Row>>, MultiwayStats) {
    let (mut j, mut chain) = (shape.multiway(), Chain::new(shape));
    let mut tables = vec![Vec::new(); shape.n()];
    let mut out = Vec::new();
    for (n, s) in steps.iter().enumerate() {
        for mut c in changes(shape, s, &mut tables) {
            c.unavailable = hide.get(n).copied().unwrap_or_default();
            let mut multi = run_multiway(&mut j, shape, &c);
            let mut chained = chain.run(&c);
            out.extend(multi.iter().cloned());
            multi.sort();
            chained.sort();
            assert_eq!(multi, chained, "{shape:?} {c:?}");
        }
    }
    (out, tables, j.stats())
}

/// Every mix of step join types on two (the binary join itself), three and four inputs, over one
/// trace that fills, moves and empties keys: the same per-change multisets as the chain, and the
/// join of the final tables.
#[test]
fn every_mix_of_join_types() {
    use JoinType::*;
    let types = [Inner, Left, Right, Full];
    let put = |input, id, k: Option<i32>, v| Step {
        input,
        id,
        write: Write::Put {
            k,
            v,
            upsert: false,
            dup: false,
        },
    };
    let del = |input, id| Step {
        input,
        id,
        write: Write::Delete,
    };
    for n in 2..=4usize {
        let trace: Vec<Step> = (0..n)
            .flat_map(|i| [put(i, 1, Some(1), 0), put(i, 2, Some(1), 0)])
            .chain((0..n).flat_map(|i| [put(i, 1, Some(2), 1), del(i, 2), put(i, 3, None, 0)]))
            .chain(
                (0..n)
                    .rev()
                    .flat_map(|i| [put(i, 2, Some(2), 2), del(i, 1)]),
            )
            .collect();
        for mix in 0..types.len().pow(n as u32 - 1) {
            let steps = (0..n - 1).map(|s| types[mix / 4usize.pow(s as u32) % 4]);
            let shape = Shape {
                keys: (0..n).map(|i| [Keys::Pk, Keys::NoPk][i % 2]).collect(),
                steps: steps.collect(),
                policy: RetractionPolicy::Fail,
                ttls: Vec::new(),
            };
            let (out, tables, _) = same_as_the_chain(&shape, &trace);
            assert_eq!(materialize(&out), reference(&shape, &tables), "{shape:?}");
        }
    }
}

/// One distinct row an input holds in [`Oracle`]: its copies (more than one on a multiset input)
/// and its last write time.
#[derive(Clone, Debug)]
struct Held {
    row: Row,
    copies: u32,
    written_at: i64,
}

/// The join under TTL as a model: per input the rows held with their write times, a row of an
/// input with TTL `t` visible at `now` while `written_at > now - t`. A change finding an expired
/// row drops it (the join frees it) and goes on as if the row were not there.
struct Oracle {
    held: Vec<Vec<Held>>,
    /// Rows added minus rows retracted, with multiplicity: what the join stores or freed as
    /// expired.
    net: u64,
}

impl Oracle {
    fn new(shape: &Shape) -> Oracle {
        Oracle {
            held: vec![Vec::new(); shape.n()],
            net: 0,
        }
    }

    /// Each input's rows visible at `now`, copies repeated.
    fn visible(&self, shape: &Shape, now: i64) -> Vec<Vec<Row>> {
        let live = |i: usize, h: &Held| shape.ttls[i].is_none_or(|t| h.written_at > now - t as i64);
        (self.held.iter().enumerate())
            .map(|(i, held)| {
                (held.iter().filter(|h| live(i, h)))
                    .flat_map(|h| std::iter::repeat_n(h.row.clone(), h.copies as usize))
                    .collect()
            })
            .collect()
    }

    /// Applies `c` at `now`: a retraction removes one copy of the row of its primary key (of its
    /// value on a multiset input), an accumulation replaces it or adds a copy; any write sets the
    /// write time of the row's copies.
    fn apply(&mut self, shape: &Shape, c: &Input, now: i64) {
        let (keys, ttl, held) = (
            shape.keys[c.input],
            shape.ttls[c.input],
            &mut self.held[c.input],
        );
        let same = |h: &Held| match keys {
            Keys::NoPk => h.row == c.row,
            _ => h.row.id == c.row.id,
        };
        let mut at = held.iter().position(same);
        if let Some(a) = at {
            if ttl.is_some_and(|t| held[a].written_at <= now - t as i64) {
                held.remove(a);
                at = None;
            }
        }
        match (c.kind.is_accumulate(), at) {
            (true, Some(a)) => {
                if keys == Keys::NoPk {
                    held[a].copies += 1;
                    self.net += 1;
                } else {
                    held[a].row = c.row.clone();
                }
                held[a].written_at = now;
            }
            (true, None) => {
                held.push(Held {
                    row: c.row.clone(),
                    copies: 1,
                    written_at: now,
                });
                self.net += 1;
            }
            (false, Some(a)) => {
                self.net -= 1;
                held[a].copies -= 1;
                held[a].written_at = now;
                if held[a].copies == 0 {
                    held.remove(a);
                }
            }
            (false, None) => {}
        }
    }
}

/// Applies `c` to `j` in a batch of its own at processing time `now` (a sweep runs first when
/// one is due); its output, printed.
fn run_at(j: &mut MultiwayJoin, shape: &Shape, c: &Input, now: i64) -> Vec<String> {
    let mut batch = Vec::new();
    batch_input(shape, c, None, &mut batch);
    let mut out = Vec::new();
    (j.process_batch(&batch, now, &mut out)).unwrap_or_else(|e| panic!("{c:?}: {e}"));
    printed(&out, shape, c)
}

/// The signed multiset of output changes `out` (`+I`/`+U` count one, `-U`/`-D` minus one), rows
/// printed without kind, zeros left out.
fn net(out: &[String]) -> BTreeMap<String, i64> {
    let mut m = BTreeMap::new();
    for r in out {
        let (kind, body) = r.split_at(2);
        *m.entry(body.to_string()).or_insert(0) += if kind.starts_with('+') { 1 } else { -1 };
    }
    m.retain(|_, n| *n != 0);
    m
}

/// `after - before`, zeros left out.
fn difference(
    after: BTreeMap<String, i64>,
    before: BTreeMap<String, i64>,
) -> BTreeMap<String, i64> {
    let mut m = after;
    for (row, n) in before {
        *m.entry(row).or_insert(0) -= n;
    }
    m.retain(|_, n| *n != 0);
    m
}

/// `shapes` with a TTL of 4 to 20 ms or none on each input, absent retractions ignored (a
/// retraction of an expired row is one), each step after a clock move of 0 to 8 ms.
fn with_ttls(
    shapes: impl Strategy<Value = (Shape, Vec<Step>)>,
) -> impl Strategy<Value = (Shape, Vec<(Step, i64)>)> {
    shapes.prop_flat_map(|(shape, steps)| {
        let n = shape.n();
        let ttls = prop::collection::vec(prop::option::weighted(0.75, 4..=20u64), n);
        let moves = prop::collection::vec(0..=8i64, steps.len());
        (Just(shape), Just(steps), ttls, moves).prop_map(|(shape, steps, ttls, moves)| {
            let shape = Shape {
                ttls,
                policy: RetractionPolicy::Ignore,
                ..shape
            };
            (shape, steps.into_iter().zip(moves).collect())
        })
    })
}

/// Three or four inputs under TTL, a trace over few ids and keys.
fn ttl_shape_and_trace() -> impl Strategy<Value = (Shape, Vec<(Step, i64)>)> {
    with_ttls(shape_and_trace(3..=4))
}

/// Three inputs joined on `k` under TTL, the first and the last holding 40 rows under key 0
/// first (indexed groups, see `hot_keys_emit_what_the_chain_emits`), written over 8 ms, then
/// the random steps.
fn ttl_hot_shape_and_trace() -> impl Strategy<Value = (Shape, Vec<(Step, i64)>)> {
    let on_k = |k| if k == Keys::JoinOnPk { Keys::Pk } else { k };
    let shapes = shape_and_steps(3..=3, (60, 2), 40..80).prop_map(move |(shape, steps)| {
        let keys = shape.keys.into_iter().map(on_k).collect();
        (Shape { keys, ..shape }, steps)
    });
    with_ttls(shapes).prop_map(|(shape, trace)| {
        let hot = |input, id| Step {
            input,
            id,
            write: Write::Put {
                k: Some(0),
                v: 0,
                upsert: false,
                dup: false,
            },
        };
        let prefix =
            (1000..1040).flat_map(|id| [(hot(0, id), (id % 5 == 0) as i64), (hot(2, id), 0)]);
        (shape, prefix.chain(trace).collect())
    })
}

/// The changes of `trace` against `tables`, each with its processing time (the clock starting at
/// 1000).
fn timed_changes(
    shape: &Shape,
    trace: &[(Step, i64)],
    tables: &mut [Vec<Row>],
) -> Vec<(Input, i64)> {
    let mut now = 1000;
    let mut timed = Vec::new();
    for (step, clock_move) in trace {
        now += clock_move;
        timed.extend(changes(shape, step, tables).into_iter().map(|c| (c, now)));
    }
    timed
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Under TTL, the change of the join of the visible rows per change
    /// ([`same_as_the_visible_rows`]).
    #[test]
    fn under_ttl_each_change_emits_the_change_of_the_join_of_the_visible_rows(
        (shape, trace) in ttl_shape_and_trace(),
    ) {
        same_as_the_visible_rows(&shape, &trace)?;
    }

    /// A snapshot taken under TTL keeps the rows' write times: restored into a new instance,
    /// the trace goes on with the same clock and each change gives the same output as in the
    /// original (rows expire at the same instants). A join declaring TTL on other inputs refuses
    /// the sections, naming the row entry that differs.
    #[test]
    fn under_ttl_snapshots_keep_write_times(
        (shape, trace) in ttl_shape_and_trace(),
        split in 0.0..1.0f64,
    ) {
        let mut tables = vec![Vec::new(); shape.n()];
        let timed = timed_changes(&shape, &trace, &mut tables);
        let (head, tail) = timed.split_at((timed.len() as f64 * split) as usize);
        let mut whole = shape.multiway();
        for (c, now) in head {
            run_at(&mut whole, &shape, c, *now);
        }
        let mut restored = shape.multiway();
        let flipped = Shape {
            ttls: shape.ttls.iter().map(|t| if t.is_some() { None } else { Some(7) }).collect(),
            ..shape.clone()
        };
        for kg in whole.key_groups_with_state() {
            let mut section = Vec::new();
            whole.snapshot_key_group(kg, &mut section).unwrap();
            restored.restore_key_group(&section).unwrap();
            let err = flipped.multiway().restore_key_group(&section).unwrap_err().to_string();
            prop_assert!(err.contains("row entry"), "{}", err);
        }
        for (c, now) in tail {
            let mut expected = run_at(&mut whole, &shape, c, *now);
            let mut again = run_at(&mut restored, &shape, c, *now);
            expected.sort();
            again.sort();
            prop_assert_eq!(&again, &expected, "{:?} at {}", c, now);
        }
        // Expired rows are freed on each instance's own schedule; past every TTL both hold the
        // same.
        let end = tail.last().or(head.last()).map_or(1000, |(_, now)| now + 21);
        for j in [&mut whole, &mut restored] {
            j.process_batch(&[], end, &mut Vec::new()).unwrap();
        }
        prop_assert_eq!(restored.stats().stored_rows, whole.stats().stored_rows);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// [`same_as_the_visible_rows`] on keys of many rows (indexed groups), some of whose rows
    /// expire while the key is changed.
    #[test]
    fn under_ttl_hot_keys_emit_the_change_of_the_join_of_the_visible_rows(
        (shape, trace) in ttl_hot_shape_and_trace(),
    ) {
        same_as_the_visible_rows(&shape, &trace)?;
    }
}

/// Runs `trace` under TTL through the multi-way join and [`Oracle`]. Per change: the output
/// changes, summed up, are the join of the rows visible after the change less the join of those
/// visible before it, both at the change's time (expired rows invisible at once, expiry emitting
/// nothing, a retraction of an expired row emitting nothing); every row added is stored,
/// retracted or counted expired. Then, the clock past every TTL, a sweep frees the rows of every
/// input with a TTL, and the counters are what a restore of the swept state counts (rows, keys,
/// groups' bytes; the heap bytes beyond them depend on the groups' history).
fn same_as_the_visible_rows(shape: &Shape, trace: &[(Step, i64)]) -> Result<(), TestCaseError> {
    let mut j = shape.multiway();
    let mut oracle = Oracle::new(shape);
    let mut tables = vec![Vec::new(); shape.n()];
    let mut now = 1000;
    for (c, at) in timed_changes(shape, trace, &mut tables) {
        now = at;
        let before = reference(shape, &oracle.visible(shape, now));
        let out = run_at(&mut j, shape, &c, now);
        oracle.apply(shape, &c, now);
        let after = reference(shape, &oracle.visible(shape, now));
        prop_assert_eq!(net(&out), difference(after, before), "{:?} at {}", c, now);
        let s = j.stats();
        prop_assert_eq!(s.stored_rows + s.expired_rows, oracle.net, "{:?}", s);
    }
    let before = j.state_size();
    let (expired_before, held_rows) = (j.stats().expired_rows, j.stats().stored_rows);
    j.process_batch(&[], now + 21, &mut Vec::new()).unwrap();
    let forever: u64 = (oracle.held.iter().zip(&shape.ttls))
        .filter(|(_, ttl)| ttl.is_none())
        .flat_map(|(held, _)| held.iter().map(|h| h.copies as u64))
        .sum();
    let s = j.stats();
    prop_assert_eq!(
        s.stored_rows,
        forever,
        "only the rows of inputs without TTL stay"
    );
    prop_assert_eq!(s.expired_rows - expired_before, held_rows - forever);
    let after = j.state_size();
    if held_rows > forever {
        prop_assert!(
            after.group_bytes < before.group_bytes,
            "{:?} {:?}",
            before,
            after
        );
        prop_assert!(
            after.heap_bytes < before.heap_bytes,
            "{:?} {:?}",
            before,
            after
        );
    }
    let mut restored = shape.multiway();
    for kg in j.key_groups_with_state() {
        let mut section = Vec::new();
        j.snapshot_key_group(kg, &mut section).unwrap();
        restored.restore_key_group(&section).unwrap();
    }
    let size = |j: &MultiwayJoin| {
        let s = j.stats();
        (s.stored_rows, s.stored_keys, s.group_bytes)
    };
    prop_assert_eq!(size(&restored), size(&j));
    Ok(())
}
