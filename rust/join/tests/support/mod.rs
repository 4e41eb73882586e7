//! Test support: a tiny two-table world with rows `(id INT NOT NULL, k INT, v STRING)`, the engine
//! fed row by row, and the output materialised as a multiset of printed rows.

#![allow(dead_code)]

use cdcjoin_join::batch::{write_input, InputRecord};
use cdcjoin_join::{
    JoinEngine, JoinSpec, JoinType, KeyGroupRange, OutputEntries, OutputEntry, RetractionPolicy,
    Side, SideSpec,
};
use cdcjoin_model::value::format_row;
use cdcjoin_model::{DataType, Field, RowKind, RowLayout, RowRef, RowWriter, Schema, Value};
use proptest::prelude::*;
use std::collections::BTreeMap;

/// One row of the test tables.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Row {
    pub id: i32,
    pub k: Option<i32>,
    pub v: String,
}

pub fn schema() -> Schema {
    Schema::new(vec![
        Field::not_null("id", DataType::Int),
        Field::new("k", DataType::Int),
        Field::new("v", DataType::String),
    ])
}

/// How a side is keyed: its join key column and whether `id` is a primary key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keys {
    /// Join on `id`, primary key `id`: join key contains the unique key.
    JoinOnPk,
    /// Join on `k`, primary key `id`.
    Pk,
    /// Join on `k`, no primary key: a multiset.
    NoPk,
}

impl Keys {
    pub fn join_col(self) -> &'static str {
        if self == Keys::JoinOnPk {
            "id"
        } else {
            "k"
        }
    }

    pub fn join_value(self, r: &Row) -> Option<i32> {
        if self == Keys::JoinOnPk {
            Some(r.id)
        } else {
            r.k
        }
    }

    pub fn side_spec(self, ttl_ms: Option<u64>) -> SideSpec {
        SideSpec {
            schema: schema(),
            join_key: vec![self.join_col().into()],
            primary_key: (self != Keys::NoPk).then(|| vec!["id".into()]),
            ttl_ms,
            exact_retractions: false,
        }
    }
}

pub fn spec(join_type: JoinType, left: Keys, right: Keys, range: KeyGroupRange) -> JoinSpec {
    JoinSpec {
        left: left.side_spec(None),
        right: right.side_spec(None),
        join_type,
        absent_retraction: RetractionPolicy::Fail,
        key_groups: range,
    }
}

pub const MAX_KG: u16 = 128;

/// The key group of a join key value (any deterministic function of the key does).
pub fn key_group(k: Option<i32>) -> u16 {
    (k.unwrap_or(-1) as u32 % MAX_KG as u32) as u16
}

/// The encoded row `r`, the columns named in `unavailable` written as unavailable.
pub fn encode(r: &Row, unavailable: &[&str]) -> Vec<u8> {
    let layout = RowLayout::new(&schema());
    let mut buf = Vec::new();
    let mut w = RowWriter::new(&layout, &mut buf);
    let values = [
        Value::Int(r.id),
        r.k.map_or(Value::Null, Value::Int),
        Value::String(r.v.clone()),
    ];
    for (v, f) in values.iter().zip(&schema().fields) {
        match unavailable.contains(&f.name.as_str()) {
            true => w.unavailable(),
            false => v.write(&mut w),
        }
    }
    w.finish();
    buf
}

/// One changelog record of one side.
#[derive(Clone, Debug)]
pub struct Change {
    pub side: Side,
    pub kind: RowKind,
    pub row: Row,
    /// Columns sent as unavailable (their value in `row` is what the source holds).
    pub unavailable: &'static [&'static str],
}

impl Change {
    /// A change of `row`.
    pub fn new(side: Side, kind: RowKind, row: Row) -> Change {
        Change {
            side,
            kind,
            row,
            unavailable: &[],
        }
    }

    /// This change with the columns `cols` sent as unavailable.
    pub fn without(self, cols: &'static [&'static str]) -> Change {
        Change {
            unavailable: cols,
            ..self
        }
    }

    pub fn key_group(&self, keys: [Keys; 2]) -> u16 {
        key_group(keys[self.side as usize].join_value(&self.row))
    }

    pub fn batch(&self, keys: [Keys; 2], out: &mut Vec<u8>) {
        self.batch_at(keys, None, out)
    }

    /// Appends the change to a batch, its record stamped with `timestamp`.
    pub fn batch_at(&self, keys: [Keys; 2], timestamp: Option<i64>, out: &mut Vec<u8>) {
        let row = encode(&self.row, self.unavailable);
        let rec = InputRecord {
            side: self.side,
            kind: self.kind,
            key_group: self.key_group(keys),
            timestamp,
            row: &row,
        };
        write_input(out, &rec);
    }
}

/// How [`print_output`] prints a rejection: this prefix, then the message.
pub const REJECTED: &str = "REJECTED ";

/// Prints a joined output row as Flink would: `+I[1, 2, a, null, null, null]`, and a rejection as
/// [`REJECTED`] and its message. Panics on an output row with an unavailable column.
pub fn print_output(buf: &[u8]) -> Vec<String> {
    let layout = RowLayout::new(&schema());
    let side = |r: Option<&[u8]>| match r {
        Some(b) => {
            let row = RowRef::new(&layout, b);
            assert!(!row.has_unavailable(), "unavailable column emitted");
            Value::read_row(&row)
        }
        None => vec![Value::Null; 3],
    };
    OutputEntries::new(buf)
        .map(|entry| match entry {
            OutputEntry::Row(r) => {
                let mut vals = side(r.left);
                vals.extend(side(r.right));
                format_row(r.kind, &vals)
            }
            OutputEntry::Rejected { message, .. } => format!("{REJECTED}{message}"),
        })
        .collect()
}

/// Runs `change` as one batch at time `now_ms` through `engine`; returns the printed output.
pub fn run_at(
    engine: &mut JoinEngine,
    keys: [Keys; 2],
    now_ms: i64,
    change: &Change,
) -> Vec<String> {
    let mut batch = Vec::new();
    change.batch(keys, &mut batch);
    let mut out = Vec::new();
    engine
        .process_batch(&batch, now_ms, &mut out)
        .unwrap_or_else(|e| panic!("{change:?}: {e}"));
    print_output(&out)
}

/// Runs `changes` one batch each at time 0 through `engine`; returns the printed output per change.
pub fn run(engine: &mut JoinEngine, keys: [Keys; 2], changes: &[Change]) -> Vec<Vec<String>> {
    changes.iter().map(|c| run_at(engine, keys, 0, c)).collect()
}

/// Applies printed changelog rows to a multiset; panics on a retraction of an absent row and on a
/// rejection.
pub fn materialize<'a>(rows: impl IntoIterator<Item = &'a String>) -> BTreeMap<String, i64> {
    let mut m = BTreeMap::new();
    for r in rows {
        assert!(!r.starts_with(REJECTED), "unexpected rejection: {r}");
        let (kind, body) = r.split_at(2);
        let n = m.entry(body.to_string()).or_insert(0i64);
        match kind {
            "+I" | "+U" => *n += 1,
            _ => {
                assert!(*n > 0, "retraction of a row that is not in the result: {r}");
                *n -= 1;
            }
        }
    }
    m.retain(|_, n| *n != 0);
    m
}

/// The join of two final tables, as a multiset of printed rows (without kind).
pub fn reference(
    join_type: JoinType,
    keys: [Keys; 2],
    left: &[Row],
    right: &[Row],
) -> BTreeMap<String, i64> {
    let fmt = |l: Option<&Row>, r: Option<&Row>| {
        let vals = |x: Option<&Row>| match x {
            Some(x) => vec![
                Value::Int(x.id),
                x.k.map_or(Value::Null, Value::Int),
                Value::String(x.v.clone()),
            ],
            None => vec![Value::Null; 3],
        };
        let mut v = vals(l);
        v.extend(vals(r));
        format_row(RowKind::Insert, &v)[2..].to_string()
    };
    let matches = |l: &Row, r: &Row| {
        let (a, b) = (keys[0].join_value(l), keys[1].join_value(r));
        a.is_some() && a == b
    };
    let mut m = BTreeMap::new();
    let mut add = |s: String| *m.entry(s).or_insert(0i64) += 1;
    for l in left {
        let ms: Vec<&Row> = right.iter().filter(|r| matches(l, r)).collect();
        ms.iter().for_each(|r| add(fmt(Some(l), Some(r))));
        if ms.is_empty() && join_type.is_outer(Side::Left) {
            add(fmt(Some(l), None));
        }
    }
    for r in right {
        if join_type.is_outer(Side::Right) && !left.iter().any(|l| matches(l, r)) {
            add(fmt(None, Some(r)));
        }
    }
    m
}

/// Any join type.
pub fn join_type() -> impl Strategy<Value = JoinType> {
    prop_oneof![
        Just(JoinType::Inner),
        Just(JoinType::Left),
        Just(JoinType::Right),
        Just(JoinType::Full)
    ]
}

/// Any way of keying a side.
pub fn keys() -> impl Strategy<Value = Keys> {
    prop_oneof![Just(Keys::JoinOnPk), Just(Keys::Pk), Just(Keys::NoPk)]
}

/// The groups of format-2 `sections` (`len u32 | version u32 | crc u32 | body`, the body in
/// bincode's fixed-width encoding: `kg u16 | fingerprint u64 | definition (u64 len | bytes) |
/// (entry layout u8 | groups (u64 len | (group_len u32 | group)*))` per side, `sides` of them),
/// as (side, group) pairs sorted, whatever order the tables held them in.
pub fn canonical(sides: usize, sections: &[Vec<u8>]) -> Vec<(usize, Vec<u8>)> {
    let u64_at =
        |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize;
    let mut groups = Vec::new();
    for section in sections {
        let body = &section[12..];
        let mut at = 2 + 8;
        at += 8 + u64_at(body, at);
        for side in 0..sides {
            let len = u64_at(body, at + 1);
            let mut bytes = &body[at + 9..at + 9 + len];
            while !bytes.is_empty() {
                let n = u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize;
                groups.push((side, bytes[4..4 + n].to_vec()));
                bytes = &bytes[4 + n..];
            }
            at += 9 + len;
        }
        assert_eq!(at, body.len(), "a section's body read to its end");
    }
    groups.sort();
    groups
}
