//! Chained joins: a join's output turned, in native code, into the input changes of a next join.
//!
//! A join J whose output feeds another join N (a three-table mart: orders ⋈ customers, then ⋈
//! products) hands its output to a [`Rekeyer`] instead of to the caller: each joined row
//! `kind[left, right]` becomes one change of N's input, `kind(row)`, where `row` is J's output
//! projection in the compact encoding of J's output schema (a null-padded side's columns null),
//! grouped by the key group of N's join key over that row into exchange blocks. J may also be a
//! multi-way join ([`crate::multiway`], [`Rekeyer::multiway`]): its rows `kind[row per input]`
//! are projected the same way, over its inputs' columns in input order. The blocks are
//! [`cdcjoin_model::exchange`]'s, exactly as the decoder partitions a table's changes. The kind is
//! kept: N's engine accumulates `+I`/`+U` and retracts `-U`/`-D`, and forwards the kind where an
//! inner join does, as Flink's join does with a joined input. No Java object is built per row.
//!
//! # Grammar
//!
//! ```text
//! declaration (JSON, ChainSpec) := { "projection": [u32], "key": [u32], "max_parallelism": u32 }
//!   projection: J's output columns, as indexes into J's inputs' columns in input order
//!               (left then right)
//!   key:        N's join key columns, as indexes into the projected columns
//! chained output := rejections u32 | rejection{rejections} | block*          (little-endian)
//!   rejection := a rejection entry of J's output, as crate::batch writes it
//!   block     := a cdcjoin_model::exchange block of N's input, one per key group, in key group
//!                order; in a block, changes keep J's output order and their stamps
//! ```
//! The Java mirror of the declaration is `NativeConfig.chain`; of the output, `JoinBatches` (read by
//! `KeyGroupJoinOperator.emitChained`).

use crate::batch::{output_columns, write_rejection, WideEntries, WideEntry, WideRow};
use crate::multiway::MultiwaySpec;
use crate::spec::JoinSpec;
use cdcjoin_model::exchange::Partitioner;
use cdcjoin_model::{KeyProjection, RowLayout, RowRef, RowWriter, Schema};
use serde::{Deserialize, Serialize};

/// How a join's output feeds the next join (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainSpec {
    /// Output columns, as indexes into the join's inputs' columns in input order (a two-table
    /// join's left then right columns).
    pub projection: Vec<usize>,
    /// The next join's key columns, as indexes into the output columns.
    pub key: Vec<usize>,
    /// The next join's max parallelism (its number of key groups).
    pub max_parallelism: u32,
}

/// Turns a join's output entries into the next join's input blocks (see the module docs).
pub struct Rekeyer {
    /// Per input (left and right, or a multi-way join's inputs): the layout of its rows.
    inputs: Vec<RowLayout>,
    /// Per output column: its input and its index there.
    columns: Vec<(usize, usize)>,
    /// The layout of output rows.
    layout: RowLayout,
    /// The next join's key over output rows.
    key: KeyProjection,
    partitioner: Partitioner,
    row: Vec<u8>,
    key_buf: Vec<u8>,
}

impl Rekeyer {
    /// A rekeyer of a two-table `join`'s output as `chain` declares it, or why the declaration is
    /// invalid.
    pub fn new(join: &JoinSpec, chain: &ChainSpec) -> Result<Rekeyer, String> {
        Rekeyer::over(&[&join.left.schema, &join.right.schema], chain)
    }

    /// A rekeyer of a multi-way join's output (one row per input, [`crate::multiway`]) as
    /// `chain` declares it, or why the declaration is invalid.
    pub fn multiway(join: &MultiwaySpec, chain: &ChainSpec) -> Result<Rekeyer, String> {
        let schemas: Vec<&Schema> = join.inputs.iter().map(|s| &s.schema).collect();
        Rekeyer::over(&schemas, chain)
    }

    /// A rekeyer of joined rows of one row per input of `inputs`.
    fn over(inputs: &[&Schema], chain: &ChainSpec) -> Result<Rekeyer, String> {
        let columns = output_columns(inputs, &chain.projection)?;
        if columns.is_empty() || chain.key.is_empty() {
            return Err("a chained join needs output columns and a key".into());
        }
        if let Some(k) = chain.key.iter().find(|&&k| k >= columns.len()) {
            return Err(format!("key column {k} is not an output column"));
        }
        let schema = Schema::new(
            columns
                .iter()
                .map(|&(input, c)| inputs[input].fields[c].clone())
                .collect(),
        );
        Ok(Rekeyer {
            inputs: inputs.iter().map(|s| RowLayout::new(s)).collect(),
            layout: RowLayout::new(&schema),
            key: KeyProjection::new(&schema, &chain.key),
            partitioner: Partitioner::new(chain.max_parallelism)?,
            columns,
            row: Vec::new(),
            key_buf: Vec::new(),
        })
    }

    /// Appends the chained output of the join output `entries` (written by
    /// [`crate::batch::OutputWriter`], one row per input) to `out`.
    pub fn rekey(&mut self, entries: &[u8], out: &mut Vec<u8>) {
        let count_at = out.len();
        out.extend_from_slice(&0u32.to_le_bytes());
        let mut rejections = 0u32;
        for entry in WideEntries::new(entries, self.inputs.len()) {
            match entry {
                WideEntry::Row(row) => self.add(&row),
                WideEntry::Rejected {
                    timestamp,
                    input,
                    message,
                } => {
                    write_rejection(out, timestamp, input as u8, message);
                    rejections += 1;
                }
            }
        }
        out[count_at..count_at + 4].copy_from_slice(&rejections.to_le_bytes());
        self.partitioner.write_blocks(out);
    }

    /// Projects one joined row and adds it to its key group's block.
    fn add(&mut self, joined: &WideRow<'_>) {
        self.row.clear();
        let rows = joined.rows();
        let mut w = RowWriter::new(&self.layout, &mut self.row);
        for &(input, c) in &self.columns {
            match rows[input] {
                Some(b) => w.copy_from(&RowRef::new(&self.inputs[input], b), c),
                None => w.null(),
            }
        }
        w.finish();
        self.key_buf.clear();
        self.key
            .write(&RowRef::new(&self.layout, &self.row), &mut self.key_buf);
        self.partitioner
            .add(&self.key_buf, joined.kind, joined.timestamp, &self.row);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::OutputWriter;
    use crate::spec::{JoinType, KeyGroupRange, RetractionPolicy, Side, SideSpec};
    use cdcjoin_model::exchange::{read_stamp, BlockHeader, Changes, BLOCK_HEADER_LEN, STAMP_LEN};
    use cdcjoin_model::key_group::key_group;
    use cdcjoin_model::{DataType, Field, RowKind, Value};

    /// orders(id, customer_id, product_id) ⋈ customers(id, name), LEFT.
    fn join() -> JoinSpec {
        let side = |fields, key: &str| SideSpec {
            schema: Schema::new(fields),
            join_key: vec![key.into()],
            primary_key: Some(vec!["id".into()]),
            ttl_ms: None,
            exact_retractions: false,
        };
        JoinSpec {
            left: side(
                vec![
                    Field::not_null("id", DataType::BigInt),
                    Field::new("customer_id", DataType::BigInt),
                    Field::new("product_id", DataType::BigInt),
                ],
                "customer_id",
            ),
            right: side(
                vec![
                    Field::not_null("id", DataType::BigInt),
                    Field::new("name", DataType::String),
                ],
                "id",
            ),
            join_type: JoinType::Left,
            absent_retraction: RetractionPolicy::Ignore,
            key_groups: KeyGroupRange { start: 0, end: 127 },
        }
    }

    /// Output (order id, customer name, product id), keyed by product id (output column 2).
    fn chain() -> ChainSpec {
        ChainSpec {
            projection: vec![0, 4, 2],
            key: vec![2],
            max_parallelism: 128,
        }
    }

    fn encode(types: &[DataType], values: &[Value]) -> Vec<u8> {
        let fields = types.iter().map(|&t| Field::new("c", t)).collect();
        let layout = RowLayout::new(&Schema::new(fields));
        let mut out = Vec::new();
        let mut w = RowWriter::new(&layout, &mut out);
        values.iter().for_each(|v| v.write(&mut w));
        w.finish();
        out
    }

    fn order(id: i64, product: i64) -> Vec<u8> {
        use DataType::BigInt;
        let v = [Value::BigInt(id), Value::BigInt(7), Value::BigInt(product)];
        encode(&[BigInt, BigInt, BigInt], &v)
    }

    fn out_row(id: i64, name: Option<&str>, product: i64) -> Vec<u8> {
        let name = name.map_or(Value::Null, |n| Value::String(n.into()));
        let v = [Value::BigInt(id), name, Value::BigInt(product)];
        encode(&[DataType::BigInt, DataType::String, DataType::BigInt], &v)
    }

    fn product_key_group(product: i64) -> u16 {
        key_group(&encode(&[DataType::BigInt], &[Value::BigInt(product)]), 128)
    }

    /// The blocks of a chained output, after its rejections: (key group, kind, stamp, row).
    fn blocks(mut buf: &[u8]) -> Vec<(u16, RowKind, Option<i64>, Vec<u8>)> {
        let mut all = Vec::new();
        while !buf.is_empty() {
            let h = BlockHeader::read(buf).unwrap();
            let body = &buf[BLOCK_HEADER_LEN..BLOCK_HEADER_LEN + h.len as usize];
            for c in Changes::new(body).map(Result::unwrap) {
                all.push((h.key_group, c.kind, c.timestamp, c.row.to_vec()));
            }
            buf = &buf[BLOCK_HEADER_LEN + h.len as usize..];
        }
        all
    }

    #[test]
    fn joined_rows_become_projected_changes_in_the_next_key_group() {
        let customer = encode(
            &[DataType::BigInt, DataType::String],
            &[Value::BigInt(7), Value::String("ann".into())],
        );
        let mut entries = Vec::new();
        let mut w = OutputWriter::new(&mut entries);
        w.emit(RowKind::Insert, Some(&order(1, 300)), None);
        w.emit(RowKind::Delete, Some(&order(1, 300)), None);
        w.emit(RowKind::Insert, Some(&order(1, 300)), Some(&customer));
        w.emit(RowKind::UpdateBefore, Some(&order(2, 5)), Some(&customer));
        let mut r = Rekeyer::new(&join(), &chain()).unwrap();
        let mut out = vec![9];
        r.rekey(&entries, &mut out);
        assert_eq!(out[0], 9, "appended");
        assert_eq!(&out[1..5], &[0, 0, 0, 0], "no rejection");
        let mut expected = vec![
            (300, RowKind::Insert, out_row(1, None, 300)),
            (300, RowKind::Delete, out_row(1, None, 300)),
            (300, RowKind::Insert, out_row(1, Some("ann"), 300)),
            (5, RowKind::UpdateBefore, out_row(2, Some("ann"), 5)),
        ]
        .into_iter()
        .map(|(p, k, row)| (product_key_group(p), k, None, row))
        .collect::<Vec<_>>();
        expected.sort_by_key(|e| e.0);
        assert_eq!(
            blocks(&out[5..]),
            expected,
            "key group order, then J's order"
        );
        let mut again = Vec::new();
        r.rekey(&[], &mut again);
        assert_eq!(again, [0, 0, 0, 0], "blocks are emptied after each output");
    }

    #[test]
    fn rejections_come_first_with_their_stamps() {
        let mut entries = Vec::new();
        let mut w = OutputWriter::new(&mut entries);
        w.emit(RowKind::Insert, Some(&order(1, 3)), None);
        let ts = crate::batch::InputRecord {
            side: Side::Right,
            kind: RowKind::Insert,
            key_group: 0,
            timestamp: Some(42),
            row: &[],
        };
        w.set_input(&ts);
        w.reject("why");
        let mut out = Vec::new();
        Rekeyer::new(&join(), &chain())
            .unwrap()
            .rekey(&entries, &mut out);
        assert_eq!(&out[..4], &[1, 0, 0, 0]);
        assert_eq!(read_stamp(&out[4..]).unwrap(), Some(42));
        let rejection_len = STAMP_LEN + 1 + 1 + 4 + 3;
        assert_eq!(
            &out[4 + STAMP_LEN..4 + rejection_len],
            b"\xFF\x01\x03\0\0\0why"
        );
        let rows = blocks(&out[4 + rejection_len..]);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].3, out_row(1, None, 3));
    }

    /// users(id, name) ⋈ profiles(user_id, bio) ⋈ settings(user_id, theme) on the user id.
    fn multiway() -> MultiwaySpec {
        let input = |key: &str, other: &str| SideSpec {
            schema: Schema::new(vec![
                Field::not_null(key, DataType::BigInt),
                Field::new(other, DataType::String),
            ]),
            join_key: vec![key.into()],
            primary_key: Some(vec![key.into()]),
            ttl_ms: None,
            exact_retractions: false,
        };
        MultiwaySpec {
            inputs: vec![
                input("id", "name"),
                input("user_id", "bio"),
                input("user_id", "theme"),
            ],
            steps: vec![JoinType::Left, JoinType::Left],
            absent_retraction: RetractionPolicy::Ignore,
            key_groups: KeyGroupRange { start: 0, end: 127 },
        }
    }

    fn user_row(id: i64, text: &str) -> Vec<u8> {
        let v = [Value::BigInt(id), Value::String(text.into())];
        encode(&[DataType::BigInt, DataType::String], &v)
    }

    #[test]
    fn multiway_rows_are_projected_over_all_inputs_columns() {
        let (user, setting) = (user_row(1, "ann"), user_row(1, "dark"));
        let mut entries = Vec::new();
        let mut w = OutputWriter::new(&mut entries);
        w.emit_wide(RowKind::Insert, &[Some(&user), None, Some(&setting)]);
        w.reject_input(2, "why");
        // Output (id, bio, theme), keyed by theme (output column 2).
        let chain = ChainSpec {
            projection: vec![0, 3, 5],
            key: vec![2],
            max_parallelism: 128,
        };
        let mut out = Vec::new();
        Rekeyer::multiway(&multiway(), &chain)
            .unwrap()
            .rekey(&entries, &mut out);
        assert_eq!(&out[..4], &[1, 0, 0, 0], "one rejection");
        let rejection_len = STAMP_LEN + 1 + 1 + 4 + 3;
        assert_eq!(out[STAMP_LEN + 5], 2, "of input 2");
        let string = [DataType::String];
        let theme_key_group = key_group(&encode(&string, &[Value::String("dark".into())]), 128);
        let row = encode(
            &[DataType::BigInt, DataType::String, DataType::String],
            &[Value::BigInt(1), Value::Null, Value::String("dark".into())],
        );
        assert_eq!(
            blocks(&out[4 + rejection_len..]),
            vec![(theme_key_group, RowKind::Insert, None, row)]
        );
        let bad = ChainSpec {
            projection: vec![6],
            ..chain
        };
        let err = Rekeyer::multiway(&multiway(), &bad).err().unwrap();
        assert!(err.contains("output column 6"), "{err}");
    }

    #[test]
    fn invalid_declarations_are_refused() {
        let bad = |projection: Vec<usize>, key: Vec<usize>, max_parallelism| {
            let c = ChainSpec {
                projection,
                key,
                max_parallelism,
            };
            Rekeyer::new(&join(), &c).err().unwrap()
        };
        assert!(bad(vec![5], vec![0], 128).contains("output column 5"));
        assert!(bad(vec![0], vec![1], 128).contains("key column 1"));
        assert!(bad(vec![], vec![0], 128).contains("needs output columns"));
        assert!(bad(vec![0], vec![], 128).contains("needs output columns"));
        assert!(bad(vec![0], vec![0], 0).contains("max parallelism"));
    }
}
