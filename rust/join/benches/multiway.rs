//! A three-table mart on one key, natively: the chain of two binary joins against the multi-way
//! join (`cdcjoin_join::multiway`).
//!
//! `orders(id, customer_id, amount, note) LEFT JOIN customers(id, name, city) USING (customer)
//! LEFT JOIN addresses(id, customer_id, street) USING (customer)`: 20k customers, 100k orders
//! (5 a customer on average), 30k addresses, inserted in a random interleaving, then 100k updates
//! (`-U`/`+U`): order amounts (40%), orders moving to another customer (20%), customer renames
//! (20%), address changes (20%). The records go in batches of 8192; within a batch the records of
//! orders and customers are applied first, then those of addresses, in both runs, so that both
//! see the same sequence:
//! - `chain`: `JoinEngine` orders ⋈ customers, its output re-keyed by a `Rekeyer` (orders' id as
//!   the chained side's primary key, exact retractions, as `tests/chain.rs`) into a second
//!   `JoinEngine` with addresses, as the chained join of the Java builder runs it;
//! - `multiway`: one `MultiwayJoin` of the three inputs, fed the same batches through
//!   `process_batch` with the output bound the JNI layer sets (`DEFAULT_OUTPUT_BOUND`), as the
//!   operator runs it.
//!
//! Before criterion runs, the state each holds after the trace is printed (the engines' own
//! accounting, `StateSize`), and the rows each emitted.
//!
//! `hot_key_in_pieces`: one key of a million rows changed, its rows written in calls of the JNI
//! layer's output bound, each call going on where the last stopped ([`hot_key`]).

use cdcjoin_join::batch::{write_input, InputRecord, InputTag, DEFAULT_OUTPUT_BOUND};
use cdcjoin_join::{
    ChainSpec, JoinEngine, JoinSpec, JoinType, KeyGroupRange, MultiwayJoin, MultiwaySpec, Rekeyer,
    RetractionPolicy, Side, SideSpec, StateSize,
};
use cdcjoin_model::key_group::key_group;
use cdcjoin_model::{DataType, Field, KeyProjection, RowKind, RowLayout, RowRef, RowWriter};
use cdcjoin_model::{Schema, Value};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};

const MAX_KG: u16 = 128;
const ALL: KeyGroupRange = KeyGroupRange {
    start: 0,
    end: MAX_KG - 1,
};
const BATCH: usize = 8192;
const CUSTOMERS: i64 = 20_000;
const ORDERS: i64 = 100_000;
const ADDRESSES: i64 = 30_000;
const UPDATES: usize = 100_000;

/// The inputs, in the multi-way join's order.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Table {
    Orders = 0,
    Customers = 1,
    Addresses = 2,
}

fn schema(t: Table) -> Schema {
    let id = Field::not_null("id", DataType::BigInt);
    let (big, text) = (
        |n: &str| Field::new(n, DataType::BigInt),
        |n: &str| Field::new(n, DataType::String),
    );
    Schema::new(match t {
        Table::Orders => vec![id, big("customer_id"), big("amount"), text("note")],
        Table::Customers => vec![id, text("name"), text("city")],
        Table::Addresses => vec![id, big("customer_id"), text("street")],
    })
}

fn input(t: Table) -> SideSpec {
    SideSpec {
        schema: schema(t),
        join_key: vec![if t == Table::Customers {
            "id"
        } else {
            "customer_id"
        }
        .into()],
        primary_key: Some(vec!["id".into()]),
        ttl_ms: None,
        exact_retractions: false,
    }
}

fn join(left: SideSpec, right: SideSpec) -> JoinSpec {
    JoinSpec {
        left,
        right,
        join_type: JoinType::Left,
        absent_retraction: RetractionPolicy::Fail,
        key_groups: ALL,
    }
}

/// The first join's output, all columns, as the second join's left input keyed by
/// `orders.customer_id` (column 1), primary key `orders.id`.
fn chained_side() -> SideSpec {
    let first = join(input(Table::Orders), input(Table::Customers));
    let mut fields = first.left.schema.fields.clone();
    fields.extend(first.right.schema.fields.iter().map(|f| {
        let mut f = f.clone();
        f.name = format!("c_{}", f.name);
        f
    }));
    SideSpec {
        schema: Schema::new(fields),
        join_key: vec!["customer_id".into()],
        primary_key: Some(vec!["id".into()]),
        ttl_ms: None,
        exact_retractions: true,
    }
}

/// One input record: its table, kind, key group and encoded row.
struct Record {
    table: Table,
    kind: RowKind,
    key_group: u16,
    row: Vec<u8>,
}

/// A small deterministic generator (xorshift64).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: i64) -> i64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as i64
    }
}

/// The trace: every row of the three tables inserted in a random interleaving, then the updates.
fn trace() -> Vec<Record> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut rows: [Vec<Vec<Value>>; 3] = Default::default();
    let s = |x: String| Value::String(x);
    for id in 0..ORDERS {
        let c = rng.below(CUSTOMERS);
        let v = vec![
            Value::BigInt(id),
            Value::BigInt(c),
            Value::BigInt(id % 997),
            s(format!("note {id:08}")),
        ];
        rows[0].push(v);
    }
    for id in 0..CUSTOMERS {
        rows[1].push(vec![
            Value::BigInt(id),
            s(format!("customer {id}")),
            s(format!("city {}", id % 50)),
        ]);
    }
    for id in 0..ADDRESSES {
        let c = rng.below(CUSTOMERS);
        rows[2].push(vec![
            Value::BigInt(id),
            Value::BigInt(c),
            s(format!("{id} main street")),
        ]);
    }
    let tables = [Table::Orders, Table::Customers, Table::Addresses];
    let mut next = [0usize; 3];
    let mut out = Vec::new();
    while next.iter().zip(&rows).any(|(n, r)| *n < r.len()) {
        let t = rng.below(3) as usize;
        if next[t] < rows[t].len() {
            out.push(record(tables[t], RowKind::Insert, &rows[t][next[t]]));
            next[t] += 1;
        }
    }
    for u in 0..UPDATES {
        let (t, at) = match rng.below(10) {
            0..=5 => (0, rng.below(ORDERS) as usize),
            6 | 7 => (1, rng.below(CUSTOMERS) as usize),
            _ => (2, rng.below(ADDRESSES) as usize),
        };
        let old = rows[t][at].clone();
        let new = &mut rows[t][at];
        match (t, rng.below(3)) {
            (0, 0) => new[1] = Value::BigInt(rng.below(CUSTOMERS)),
            (0, _) => new[2] = Value::BigInt(u as i64),
            (1, _) => new[1] = s(format!("customer {u} renamed")),
            _ => new[2] = s(format!("{u} new street")),
        }
        out.push(record(tables[t], RowKind::UpdateBefore, &old));
        out.push(record(tables[t], RowKind::UpdateAfter, &rows[t][at]));
    }
    out
}

fn record(table: Table, kind: RowKind, values: &[Value]) -> Record {
    let schema = schema(table);
    let layout = RowLayout::new(&schema);
    let mut row = Vec::new();
    let mut w = RowWriter::new(&layout, &mut row);
    values.iter().for_each(|v| v.write(&mut w));
    w.finish();
    let column = if table == Table::Customers { 0 } else { 1 };
    let mut key = Vec::new();
    KeyProjection::new(&schema, &[column]).write(&RowRef::new(&layout, &row), &mut key);
    Record {
        table,
        kind,
        key_group: key_group(&key, MAX_KG as u32),
        row,
    }
}

fn write<S: InputTag>(batch: &mut Vec<u8>, side: S, r: &Record) {
    let rec = InputRecord {
        side,
        kind: r.kind,
        key_group: r.key_group,
        timestamp: None,
        row: &r.row,
    };
    write_input(batch, &rec);
}

/// The chain, fed batch by batch: (first join, its rekeyer, second join).
struct Chain(JoinEngine, Rekeyer, JoinEngine);

impl Chain {
    fn new() -> Chain {
        let first = join(input(Table::Orders), input(Table::Customers));
        let chain = ChainSpec {
            projection: (0..7).collect(),
            key: vec![1],
            max_parallelism: MAX_KG as u32,
        };
        Chain(
            JoinEngine::new(&first).unwrap(),
            Rekeyer::new(&first, &chain).unwrap(),
            JoinEngine::new(&join(chained_side(), input(Table::Addresses))).unwrap(),
        )
    }

    /// Runs one batch of records; returns the rows the second join emitted.
    fn run(&mut self, records: &[Record], bufs: &mut [Vec<u8>; 3]) -> usize {
        let [first, chained, second] = bufs;
        first.clear();
        for r in records.iter().filter(|r| r.table != Table::Addresses) {
            let side = if r.table == Table::Orders {
                Side::Left
            } else {
                Side::Right
            };
            write(first, side, r);
        }
        let mut out = Vec::new();
        self.0.process_batch(first, 0, &mut out).unwrap();
        chained.clear();
        self.1.rekey(&out, chained);
        second.clear();
        let mut rest = &chained[4..];
        while !rest.is_empty() {
            let len = 10 + u32::from_le_bytes(rest[6..10].try_into().unwrap()) as usize;
            second.push(Side::Left as u8);
            second.extend_from_slice(&rest[..len]);
            rest = &rest[len..];
        }
        for r in records.iter().filter(|r| r.table == Table::Addresses) {
            write(second, Side::Right, r);
        }
        out.clear();
        self.2.process_batch(second, 0, &mut out).unwrap()
    }

    fn state_size(&self) -> [StateSize; 2] {
        [self.0.state_size(), self.2.state_size()]
    }
}

/// The multi-way join of `tables` in that order, both steps of type `step`.
fn multiway(tables: [Table; 3], step: JoinType) -> MultiwayJoin {
    let spec = MultiwaySpec {
        inputs: tables.map(input).to_vec(),
        steps: vec![step, step],
        absent_retraction: RetractionPolicy::Fail,
        key_groups: ALL,
    };
    MultiwayJoin::new(&spec).unwrap()
}

/// Runs one batch of records, those of orders and customers first; returns the rows emitted.
fn run_multiway(j: &mut MultiwayJoin, records: &[Record], bufs: &mut [Vec<u8>; 2]) -> usize {
    let [batch, out] = bufs;
    batch.clear();
    let first = records.iter().filter(|r| r.table != Table::Addresses);
    for r in first.chain(records.iter().filter(|r| r.table == Table::Addresses)) {
        write(batch, r.table as u8, r);
    }
    out.clear();
    j.process_batch(batch, 0, out).unwrap()
}

fn report(name: &str, sizes: &[StateSize], rows_out: usize) {
    let sum = |f: fn(&StateSize) -> u64| sizes.iter().map(f).sum::<u64>();
    eprintln!(
        "{name:>9}: {rows_out} rows emitted; state {} rows under {} keys, {} group bytes, {} heap bytes",
        sum(|s| s.rows),
        sum(|s| s.keys),
        sum(|s| s.group_bytes),
        sum(|s| s.heap_bytes)
    );
}

fn bench(c: &mut Criterion) {
    let records = trace();
    let batches: Vec<&[Record]> = records.chunks(BATCH).collect();
    eprintln!(
        "{} input records in {} batches",
        records.len(),
        batches.len()
    );
    let mut bufs: [Vec<u8>; 3] = Default::default();
    let run_chain = |bufs: &mut [Vec<u8>; 3]| {
        let mut chain = Chain::new();
        let rows: usize = batches.iter().map(|b| chain.run(b, bufs)).sum();
        (chain, rows)
    };
    let run_multi = |out: &mut [Vec<u8>; 2]| {
        let mut j = multiway(
            [Table::Orders, Table::Customers, Table::Addresses],
            JoinType::Left,
        );
        j.set_output_bound(DEFAULT_OUTPUT_BOUND);
        let rows: usize = batches.iter().map(|b| run_multiway(&mut j, b, out)).sum();
        (j, rows)
    };
    let (chain, chain_rows) = run_chain(&mut bufs);
    report("chain", &chain.state_size(), chain_rows);
    let mut out: [Vec<u8>; 2] = Default::default();
    let (multi, multi_rows) = run_multi(&mut out);
    report("multi-way", &[multi.state_size()], multi_rows);
    assert_eq!(chain_rows, multi_rows, "both emit the same changelog");
    let mut g = c.benchmark_group("mart_three_tables");
    g.sample_size(10);
    g.throughput(Throughput::Elements(records.len() as u64));
    g.bench_function("chain", |b| {
        b.iter_batched(|| (), |_| run_chain(&mut bufs), BatchSize::PerIteration)
    });
    g.bench_function("multiway", |b| {
        b.iter_batched(|| (), |_| run_multi(&mut out), BatchSize::PerIteration)
    });
    g.finish();
}

/// Orders of the one customer of [`hot_key`].
const HOT_ORDERS: i64 = 1_000_000;

/// `customers JOIN addresses JOIN orders` (inputs in that order) on one customer with one address
/// and [`HOT_ORDERS`] orders, and a batch deleting the customer and inserting it again: each
/// change's rows come from the orders' loop nested in the address's one iteration, in calls of
/// the JNI layer's bound (about 8 per change).
fn hot_key() -> (MultiwayJoin, Vec<u8>) {
    let tables = [Table::Customers, Table::Addresses, Table::Orders];
    let mut j = multiway(tables, JoinType::Inner);
    let s = |x: &str| Value::String(x.into());
    let customer = [Value::BigInt(7), s("customer 7"), s("city 7")];
    let address = [Value::BigInt(1), Value::BigInt(7), s("1 main street")];
    let mut batch = Vec::new();
    write(
        &mut batch,
        0u8,
        &record(Table::Customers, RowKind::Insert, &customer),
    );
    write(
        &mut batch,
        1u8,
        &record(Table::Addresses, RowKind::Insert, &address),
    );
    for id in 0..HOT_ORDERS {
        let order = [
            Value::BigInt(id),
            Value::BigInt(7),
            Value::BigInt(id % 997),
            s("note"),
        ];
        write(
            &mut batch,
            2u8,
            &record(Table::Orders, RowKind::Insert, &order),
        );
    }
    let mut out = Vec::new();
    j.process_batch(&batch, 0, &mut out).unwrap();
    batch.clear();
    for kind in [RowKind::Delete, RowKind::Insert] {
        write(&mut batch, 0u8, &record(Table::Customers, kind, &customer));
    }
    j.set_output_bound(DEFAULT_OUTPUT_BOUND);
    (j, batch)
}

/// One change of a key of [`HOT_ORDERS`] rows, in calls of 32 MiB.
fn bench_hot_key(c: &mut Criterion) {
    // Set up on the first run, so that a filter leaving this group out does not load it.
    let mut state = None;
    let mut out = Vec::new();
    let mut g = c.benchmark_group("hot_key_in_pieces");
    g.sample_size(10);
    g.throughput(Throughput::Elements(2 * HOT_ORDERS as u64));
    g.bench_function("delete_and_insert", |b| {
        let (j, batch) = state.get_or_insert_with(hot_key);
        b.iter(|| {
            let (mut rows, mut calls) = (j.process_batch(batch, 0, &mut out).unwrap(), 1);
            while j.has_pending() {
                out.clear();
                rows += j.resume(&mut out).unwrap();
                calls += 1;
            }
            out.clear();
            assert_eq!(rows, 2 * HOT_ORDERS as usize, "in {calls} calls");
        })
    });
    g.finish();
}

criterion_group!(benches, bench, bench_hot_key);
criterion_main!(benches);
