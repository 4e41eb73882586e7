//! Chained joins (`cdcjoin_join::chain`): a star of three tables, orders `a(id, c, p)` joined with
//! customers `b(id, n)` on `a.c = b.id`, its output `(id, c, p, n)` re-keyed by `p` and joined with
//! products `c(id, t)` on `p = c.id`, the second join's left side keyed by the order's `id`.
//! - over random traces of the three tables (inserts, updates that move orders between customers
//!   and products, deletes), for the first join INNER or LEFT and the second any type, the second
//!   join's changelog never retracts an absent row and materializes to the join of the final
//!   tables;
//! - with the first join split over two instances whose outputs reach the second join in any
//!   interleaving (each instance's order kept), the same holds when orders keep their customer;
//! - when an order moves between customers held by two instances of the first join, its `-U` and
//!   `+U` reach the second join in either order, and the result is right either way (exact
//!   retractions on the chained side).

mod support;

use cdcjoin_join::batch::{write_input, InputRecord};
use cdcjoin_join::{
    ChainSpec, JoinEngine, JoinSpec, JoinType, KeyGroupRange, OutputEntries, OutputEntry, Rekeyer,
    RetractionPolicy, Side, SideSpec,
};
use cdcjoin_model::value::format_row;
use cdcjoin_model::{DataType, Field, RowKind, RowLayout, RowRef, RowWriter, Schema, Value};
use proptest::prelude::*;
use std::collections::BTreeMap;
use support::materialize;

/// The three tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Table {
    Orders,
    Customers,
    Products,
}

/// A row of any table: `id`, then `c` and `p` (orders) or a text (customers, products).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Row {
    Order {
        id: i32,
        c: Option<i32>,
        p: Option<i32>,
    },
    Named {
        id: i32,
        text: String,
    },
}

fn field(name: &str, t: DataType) -> Field {
    Field::new(name, t)
}

fn schema(t: Table) -> Schema {
    let id = Field::not_null("id", DataType::Int);
    Schema::new(match t {
        Table::Orders => vec![id, field("c", DataType::Int), field("p", DataType::Int)],
        _ => vec![id, field("text", DataType::String)],
    })
}

fn values(r: &Row) -> Vec<Value> {
    let int = |v: Option<i32>| v.map_or(Value::Null, Value::Int);
    match r {
        Row::Order { id, c, p } => vec![Value::Int(*id), int(*c), int(*p)],
        Row::Named { id, text } => vec![Value::Int(*id), Value::String(text.clone())],
    }
}

fn encode(t: Table, r: &Row) -> Vec<u8> {
    let layout = RowLayout::new(&schema(t));
    let mut buf = Vec::new();
    let mut w = RowWriter::new(&layout, &mut buf);
    values(r).iter().for_each(|v| v.write(&mut w));
    w.finish();
    buf
}

fn side(t: Table, key: &str, exact_retractions: bool) -> SideSpec {
    SideSpec {
        schema: schema(t),
        join_key: vec![key.into()],
        primary_key: Some(vec!["id".into()]),
        ttl_ms: None,
        exact_retractions,
    }
}

fn spec(left: SideSpec, right: SideSpec, join_type: JoinType, range: KeyGroupRange) -> JoinSpec {
    JoinSpec {
        left,
        right,
        join_type,
        absent_retraction: RetractionPolicy::Ignore,
        key_groups: range,
    }
}

const ALL: KeyGroupRange = KeyGroupRange { start: 0, end: 127 };

/// The first join's output columns: `a.id, a.c, a.p, b.text` (`b.id` left out).
const PROJECTION: [usize; 4] = [0, 1, 2, 4];

/// The first join's output as the second join's left side, keyed by `p`.
fn chained_side() -> SideSpec {
    SideSpec {
        schema: Schema::new(vec![
            Field::new("id", DataType::Int),
            field("c", DataType::Int),
            field("p", DataType::Int),
            field("n", DataType::String),
        ]),
        join_key: vec!["p".into()],
        primary_key: Some(vec!["id".into()]),
        ttl_ms: None,
        exact_retractions: true,
    }
}

/// The chain: first join(s) over `ranges`, their rekeyers, and the second join.
struct Star {
    first: Vec<(JoinEngine, Rekeyer)>,
    second: JoinEngine,
    /// The second join's output, printed.
    out: Vec<String>,
}

impl Star {
    fn new(first: JoinType, second: JoinType, ranges: &[KeyGroupRange]) -> Star {
        let orders_customers = |range| {
            spec(
                side(Table::Orders, "c", false),
                side(Table::Customers, "id", false),
                first,
                range,
            )
        };
        let chain = ChainSpec {
            projection: PROJECTION.to_vec(),
            key: vec![2],
            max_parallelism: 128,
        };
        Star {
            first: ranges
                .iter()
                .map(|&r| {
                    let s = orders_customers(r);
                    (
                        JoinEngine::new(&s).unwrap(),
                        Rekeyer::new(&s, &chain).unwrap(),
                    )
                })
                .collect(),
            second: JoinEngine::new(&spec(
                chained_side(),
                side(Table::Products, "id", false),
                second,
                ALL,
            ))
            .unwrap(),
            out: Vec::new(),
        }
    }

    /// Runs changes of orders or customers through first join `i`; returns its chained output.
    fn first(&mut self, i: usize, changes: &[(Table, RowKind, Row)]) -> Vec<u8> {
        let mut batch = Vec::new();
        for (t, kind, row) in changes {
            let s = if *t == Table::Orders {
                Side::Left
            } else {
                Side::Right
            };
            input(
                &mut batch,
                s,
                *kind,
                &encode(*t, row),
                key_group(join_value(*t, row)),
            );
        }
        let (engine, rekeyer) = &mut self.first[i];
        let mut joined = Vec::new();
        engine.process_batch(&batch, 0, &mut joined).unwrap();
        let mut chained = Vec::new();
        rekeyer.rekey(&joined, &mut chained);
        chained
    }

    /// Feeds a chained output's blocks to the second join's left side.
    fn second_left(&mut self, chained: &[u8]) {
        assert_eq!(&chained[..4], &[0, 0, 0, 0], "no rejection");
        let mut batch = Vec::new();
        let mut rest = &chained[4..];
        while !rest.is_empty() {
            let len = 10 + u32::from_le_bytes(rest[6..10].try_into().unwrap()) as usize;
            batch.push(Side::Left as u8);
            batch.extend_from_slice(&rest[..len]);
            rest = &rest[len..];
        }
        self.second(&batch);
    }

    /// Feeds a product's change to the second join's right side, in the key group of its id as
    /// Flink computes it (that of the chained rows with the same key).
    fn product(&mut self, kind: RowKind, row: &Row) {
        let mut batch = Vec::new();
        let bytes = encode(Table::Products, row);
        let key = join_value(Table::Products, row).map_or(Value::Null, Value::Int);
        let layout = RowLayout::new(&Schema::new(vec![field("id", DataType::Int)]));
        let mut key_bytes = Vec::new();
        let mut w = RowWriter::new(&layout, &mut key_bytes);
        key.write(&mut w);
        w.finish();
        let kg = cdcjoin_model::key_group::key_group(&key_bytes, 128);
        input(&mut batch, Side::Right, kind, &bytes, kg);
        self.second(&batch);
    }

    fn second(&mut self, batch: &[u8]) {
        let mut out = Vec::new();
        self.second.process_batch(batch, 0, &mut out).unwrap();
        let left = RowLayout::new(&chained_side().schema);
        let right = RowLayout::new(&schema(Table::Products));
        let read = |layout, bytes: Option<&[u8]>, n| {
            bytes.map_or(vec![Value::Null; n], |b| {
                Value::read_row(&RowRef::new(layout, b))
            })
        };
        for entry in OutputEntries::new(&out) {
            let OutputEntry::Row(r) = entry else {
                panic!("rejection {entry:?}")
            };
            let mut vals = read(&left, r.left, 4);
            vals.extend(read(&right, r.right, 2));
            self.out.push(format_row(r.kind, &vals));
        }
    }
}

fn input(batch: &mut Vec<u8>, side: Side, kind: RowKind, row: &[u8], key_group: u16) {
    let rec = InputRecord {
        side,
        kind,
        key_group,
        timestamp: None,
        row,
    };
    write_input(batch, &rec);
}

/// The join key of a row of `t` in the first join (orders: `c`) or the second (products: `id`).
fn join_value(t: Table, r: &Row) -> Option<i32> {
    match r {
        Row::Order { c, .. } if t == Table::Orders => *c,
        Row::Order { id, .. } | Row::Named { id, .. } => Some(*id),
    }
}

/// Key group of a first-join key: the two instances of [`disorder`] own `0..=63` and `64..=127`.
fn key_group(k: Option<i32>) -> u16 {
    (k.unwrap_or(-1).rem_euclid(128)) as u16
}

/// The star join of the final tables, rows printed without kind.
fn reference(
    first: JoinType,
    second: JoinType,
    tables: &[BTreeMap<i32, Row>; 3],
) -> BTreeMap<String, i64> {
    let [orders, customers, products] = tables;
    let text = |r: Option<&Row>| match r {
        Some(Row::Named { text, .. }) => Value::String(text.clone()),
        _ => Value::Null,
    };
    let mut mid = Vec::new();
    for o in orders.values() {
        let Row::Order { c, p, .. } = o else {
            unreachable!()
        };
        let customer = c.and_then(|c| customers.get(&c));
        if customer.is_some() || first == JoinType::Left {
            let mut v = values(o);
            v.push(text(customer));
            mid.push((*p, v));
        }
    }
    let mut m = BTreeMap::new();
    let mut add = |v: Vec<Value>| {
        *m.entry(format_row(RowKind::Insert, &v)[2..].to_string())
            .or_insert(0) += 1
    };
    for (p, v) in &mid {
        let product = p.and_then(|p| products.get(&p));
        if product.is_some() || second.is_outer(Side::Left) {
            let mut v = v.clone();
            v.extend(product.map_or(vec![Value::Null; 2], values));
            add(v);
        }
    }
    if second.is_outer(Side::Right) {
        for pr in products.values() {
            let id = join_value(Table::Products, pr);
            if !mid.iter().any(|(p, _)| *p == id) {
                let mut v = vec![Value::Null; 4];
                v.extend(values(pr));
                add(v);
            }
        }
    }
    m
}

/// One step of a trace: a table, an id, and what to write there (`None` deletes).
#[derive(Clone, Debug)]
struct Step {
    table: Table,
    id: i32,
    write: Option<(Option<i32>, Option<i32>, u8)>,
}

fn step() -> impl Strategy<Value = Step> {
    let table = prop_oneof![
        2 => Just(Table::Orders),
        1 => Just(Table::Customers),
        1 => Just(Table::Products)
    ];
    let key = prop_oneof![1 => Just(None), 6 => (0..5i32).prop_map(Some)];
    let write = prop_oneof![1 => Just(None), 3 => (key.clone(), key, 0..3u8).prop_map(Some)];
    (table, 0..6i32, write).prop_map(|(table, id, write)| Step { table, id, write })
}

/// The changes of `step` against the tables (Debezium's: `+I`, `-U`/`+U`, `-D`), applied to them.
fn changes(step: &Step, tables: &mut [BTreeMap<i32, Row>; 3]) -> Vec<(RowKind, Row)> {
    let t = step.table as usize;
    let new = step.write.map(|(c, p, v)| match step.table {
        Table::Orders => Row::Order { id: step.id, c, p },
        _ => Row::Named {
            id: step.id,
            text: format!("t{v}"),
        },
    });
    let old = tables[t].remove(&step.id);
    if let Some(n) = &new {
        tables[t].insert(step.id, n.clone());
    }
    match (old, new) {
        (None, None) => vec![],
        (None, Some(n)) => vec![(RowKind::Insert, n)],
        (Some(o), None) => vec![(RowKind::Delete, o)],
        (Some(o), Some(n)) if o == n => vec![],
        (Some(o), Some(n)) => vec![(RowKind::UpdateBefore, o), (RowKind::UpdateAfter, n)],
    }
}

fn join_types() -> impl Strategy<Value = (JoinType, JoinType)> {
    let first = prop_oneof![Just(JoinType::Inner), Just(JoinType::Left)];
    let second = prop_oneof![
        Just(JoinType::Inner),
        Just(JoinType::Left),
        Just(JoinType::Right),
        Just(JoinType::Full)
    ];
    (first, second)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn a_chain_materializes_to_the_star_join_of_final_tables(
        (first, second) in join_types(),
        steps in prop::collection::vec((step(), 1..4usize), 1..80),
    ) {
        let mut star = Star::new(first, second, &[ALL]);
        let mut tables: [BTreeMap<i32, Row>; 3] = Default::default();
        let mut pending = Vec::new();
        for (s, batch) in &steps {
            for (kind, row) in changes(s, &mut tables) {
                if s.table == Table::Products {
                    star.product(kind, &row);
                } else {
                    pending.push((s.table, kind, row));
                }
            }
            if pending.len() >= *batch {
                let chained = star.first(0, &std::mem::take(&mut pending));
                star.second_left(&chained);
            }
        }
        let chained = star.first(0, &pending);
        star.second_left(&chained);
        prop_assert_eq!(materialize(&star.out), reference(first, second, &tables));
    }
}

/// Two instances of the first join (customers 0 and 1 in one, the others and null in the other),
/// their chained outputs delivered to the second join in a random interleaving that keeps each
/// instance's order: orders keep their customer (the README's condition), and the result is the
/// star join of the final tables.
fn interleaved(first: JoinType, second: JoinType, steps: &[(Step, usize)], picks: &[bool]) {
    let ranges = [
        KeyGroupRange { start: 0, end: 1 },
        KeyGroupRange { start: 2, end: 127 },
    ];
    let mut star = Star::new(first, second, &ranges);
    let mut tables: [BTreeMap<i32, Row>; 3] = Default::default();
    let mut queues: [std::collections::VecDeque<Vec<u8>>; 2] = Default::default();
    let mut picks = picks.iter().cycle();
    for (s, _) in steps {
        let mut s = s.clone();
        if let (Table::Orders, Some((c, _, _))) = (s.table, &mut s.write) {
            *c = (s.id != 5).then_some(s.id % 5);
        }
        for (kind, row) in changes(&s, &mut tables) {
            if s.table == Table::Products {
                star.product(kind, &row);
                continue;
            }
            let instance = (key_group(join_value(s.table, &row)) >= 2) as usize;
            let chained = star.first(instance, &[(s.table, kind, row)]);
            queues[instance].push_back(chained);
        }
        let i = *picks.next().unwrap() as usize;
        if let Some(chained) = queues[i].pop_front() {
            star.second_left(&chained);
        }
    }
    while !queues.iter().all(|q| q.is_empty()) {
        let pick = *picks.next().unwrap() as usize;
        let i = if queues[pick].is_empty() {
            1 - pick
        } else {
            pick
        };
        let chained = queues[i].pop_front().expect("not empty");
        star.second_left(&chained);
    }
    assert_eq!(materialize(&star.out), reference(first, second, &tables));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn first_join_instances_interleaved_when_orders_keep_their_customer(
        (first, second) in join_types(),
        steps in prop::collection::vec((step(), 1..2usize), 1..80),
        picks in prop::collection::vec(any::<bool>(), 1..40),
    ) {
        interleaved(first, second, &steps, &picks);
    }
}

/// An order moves from customer 1 (first join instance 0) to customer 100 (instance 1); the
/// second join receives the new row's `+U` before the old row's `-U`, and the result holds the
/// moved order only. Without exact retractions the late `-U` would retract the new row.
#[test]
fn a_move_between_first_join_instances_arriving_out_of_order() {
    for first in [JoinType::Inner, JoinType::Left] {
        let halves = [
            KeyGroupRange { start: 0, end: 63 },
            KeyGroupRange {
                start: 64,
                end: 127,
            },
        ];
        let mut star = Star::new(first, JoinType::Left, &halves);
        let named = |id, text: &str| Row::Named {
            id,
            text: text.into(),
        };
        let order = |c| Row::Order {
            id: 7,
            c: Some(c),
            p: Some(3),
        };
        star.product(RowKind::Insert, &named(3, "pen"));
        for (i, c) in [(0, 1), (1, 100)] {
            let chained = star.first(i, &[(Table::Customers, RowKind::Insert, named(c, "x"))]);
            star.second_left(&chained);
        }
        let chained = star.first(0, &[(Table::Orders, RowKind::Insert, order(1))]);
        star.second_left(&chained);
        let old = star.first(0, &[(Table::Orders, RowKind::UpdateBefore, order(1))]);
        let new = star.first(1, &[(Table::Orders, RowKind::UpdateAfter, order(100))]);
        star.second_left(&new);
        star.second_left(&old);
        let expected: BTreeMap<String, i64> = [("[7, 100, 3, x, 3, pen]".to_string(), 1)].into();
        assert_eq!(
            materialize(&star.out),
            expected,
            "{first:?}: {:?}",
            star.out
        );
    }
}
