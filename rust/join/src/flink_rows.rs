//! A join's output with each joined row in Flink's `BinaryRowData` layout.
//!
//! A join whose operator emits Flink's internal rows (`CdcJoin.Result#rowData()`) hands its output
//! entries to [`FlinkRows`], which writes each joined row `kind[row per input]` as the Flink row
//! of the declared projection ([`cdcjoin_model::flink_row`]): the Java side then only points a
//! `BinaryRowData` at it, with no Java object per column. Rejections pass as they are. This is the
//! chained output's pattern ([`crate::chain`]): the engine writes its entries, a pass in native
//! code reshapes them.
//!
//! # Grammar
//!
//! ```text
//! declaration (JSON, FlinkRowsSpec) := { "projection": [u32] }
//!   projection: the output columns, as indexes into the join's inputs' columns in input order
//!               (a two-table join's left then right columns), as a chain's projection
//! flink output := entry*                                                   (little-endian)
//!   entry := stamp | kind u8 | body                         (crate::batch's output entry)
//!   kind 0..=3 (a RowKind byte): body := len u32 | Flink row (len bytes, its byte 0 the kind)
//!   kind REJECTED: body as crate::batch writes it
//! ```
//! A Flink output entry is thus the output entry of a join with one input, whose row is the Flink
//! row: the Java mirror (`JoinBatches.Entries` over one input, read by `JoinedRows`) reads it so.
//! `tests/wire/flink_rows.bin` pins its bytes for the tests of both sides.

use crate::batch::{output_columns, write_rejection, WideEntries, WideEntry};
use crate::multiway::{MultiwaySpec, MAX_INPUTS};
use crate::spec::JoinSpec;
use cdcjoin_model::exchange::write_stamp;
use cdcjoin_model::flink_row::{FlinkColumn, FlinkRowLayout};
use cdcjoin_model::{RowLayout, RowRef, Schema};
use serde::{Deserialize, Serialize};

/// Which columns a join's Flink rows hold (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlinkRowsSpec {
    /// Output columns, as indexes into the join's inputs' columns in input order.
    pub projection: Vec<usize>,
}

/// Writes a join's output entries with their joined rows as Flink rows (see the module docs).
pub struct FlinkRows {
    /// Per input: the layout of its rows.
    inputs: Vec<RowLayout>,
    layout: FlinkRowLayout,
}

impl FlinkRows {
    /// The Flink rows of a two-table `join`'s output as `spec` declares them, or why the
    /// declaration is invalid.
    pub fn new(join: &JoinSpec, spec: &FlinkRowsSpec) -> Result<FlinkRows, String> {
        FlinkRows::over(&[&join.left.schema, &join.right.schema], spec)
    }

    /// The Flink rows of a multi-way join's output (one row per input) as `spec` declares them.
    pub fn multiway(join: &MultiwaySpec, spec: &FlinkRowsSpec) -> Result<FlinkRows, String> {
        let schemas: Vec<&Schema> = join.inputs.iter().map(|s| &s.schema).collect();
        FlinkRows::over(&schemas, spec)
    }

    fn over(inputs: &[&Schema], spec: &FlinkRowsSpec) -> Result<FlinkRows, String> {
        let columns = output_columns(inputs, &spec.projection)?;
        if columns.is_empty() {
            return Err("Flink rows need at least one output column".into());
        }
        let columns = columns.into_iter().map(|(input, column)| FlinkColumn {
            input,
            column,
            data_type: inputs[input].fields[column].data_type,
        });
        Ok(FlinkRows {
            inputs: inputs.iter().map(|s| RowLayout::new(s)).collect(),
            layout: FlinkRowLayout::new(columns.collect()),
        })
    }

    /// Appends the Flink output of the join output `entries` (written by
    /// [`crate::batch::OutputWriter`], one row per input) to `out`.
    pub fn write(&self, entries: &[u8], out: &mut Vec<u8>) {
        for entry in WideEntries::new(entries, self.inputs.len()) {
            match entry {
                WideEntry::Row(joined) => {
                    write_stamp(out, joined.timestamp);
                    out.push(joined.kind as u8);
                    let len_at = out.len();
                    out.extend_from_slice(&[0; 4]);
                    let mut rows = [None; MAX_INPUTS];
                    for ((row, bytes), layout) in
                        rows.iter_mut().zip(joined.rows()).zip(&self.inputs)
                    {
                        *row = bytes.map(|b| RowRef::new(layout, b));
                    }
                    let rows = &rows[..self.inputs.len()];
                    let len = self.layout.write(joined.kind, rows, out) as u32;
                    out[len_at..len_at + 4].copy_from_slice(&len.to_le_bytes());
                }
                WideEntry::Rejected {
                    timestamp,
                    input,
                    message,
                } => write_rejection(out, timestamp, input as u8, message),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::OutputWriter;
    use cdcjoin_model::{golden, DataType, Field, RowKind, RowWriter, Value};

    /// The schema of `tests/wire/flink_rows.bin`'s inputs: every column type, each case of the
    /// layout (the Java test
    /// `RowDataOutputTest.goldenFlinkRowsReadBackWithFlinksConverter` declares the same).
    fn every_type() -> Schema {
        let t = |precision| DataType::Timestamp { precision };
        Schema::new(vec![
            Field::new("b", DataType::Boolean),
            Field::new("t", DataType::TinyInt),
            Field::new("s", DataType::SmallInt),
            Field::new("i", DataType::Int),
            Field::new("l", DataType::BigInt),
            Field::new("f", DataType::Float),
            Field::new("d", DataType::Double),
            Field::new(
                "dec",
                DataType::Decimal {
                    precision: 10,
                    scale: 2,
                },
            ),
            Field::new(
                "wide",
                DataType::Decimal {
                    precision: 38,
                    scale: 4,
                },
            ),
            Field::new("str", DataType::String),
            Field::new("bin", DataType::Bytes),
            Field::new("day", DataType::Date),
            Field::new("tm", DataType::Time { precision: 3 }),
            Field::new("ts3", t(3)),
            Field::new("ts6", t(6)),
            Field::new("ts9", t(9)),
            Field::new("ltz", DataType::TimestampLtz { precision: 6 }),
            Field::not_null("id", DataType::BigInt),
        ])
    }

    /// The three rows of the golden file, as the Java test spells them.
    fn rows() -> [Vec<Value>; 3] {
        [
            vec![
                Value::Bool(true),
                Value::TinyInt(-7),
                Value::SmallInt(300),
                Value::Int(-5),
                Value::BigInt(i64::MIN),
                Value::Float(1.5),
                Value::Double(-0.25),
                Value::Decimal(-1_234_567_891, 2), // -12345678.91
                Value::Decimal(-12_345_678_901_234_567_890_123_456, 4), // -1234567890123456789012.3456
                Value::String("seven b".into()),
                Value::Bytes(vec![]),
                Value::Date(-1),                                // 1969-12-31
                Value::Time(86_399_999),                        // 23:59:59.999
                Value::Timestamp(-315_619_199_999_000, 3),      // 1960-01-01T00:00:00.001
                Value::Timestamp(-1, 6),                        // 1969-12-31T23:59:59.999999
                Value::Timestamp(1_709_208_000_123_456_789, 9), // 2024-02-29T12:00:00.123456789
                Value::TimestampLtz(-999_999, 6),               // 1969-12-31T23:59:59.000001Z
                Value::BigInt(1),
            ],
            vec![
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Decimal(-1, 4), // -0.0001
                Value::String("eight by, ünïcødé ✓".into()),
                Value::Bytes(vec![0xFF, 0, 1, 2, 3, 4, 5, 6, 7]),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::BigInt(2),
            ],
            vec![
                Value::Bool(false),
                Value::TinyInt(i8::MAX),
                Value::SmallInt(i16::MIN),
                Value::Int(i32::MAX),
                Value::BigInt(42),
                Value::Float(-0.0),
                Value::Double(f64::NAN),
                Value::Decimal(9_999_999_999, 2),      // 99999999.99
                Value::Decimal(10i128.pow(38) - 1, 4), // the largest DECIMAL(38, 4)
                Value::String(String::new()),
                Value::Bytes(b"1234567".to_vec()),
                Value::Date(2_932_896),                        // 9999-12-31
                Value::Time(0),                                // 00:00
                Value::Timestamp(1_704_067_200_000_000, 3),    // 2024-01-01T00:00
                Value::Timestamp(1, 6),                        // 1970-01-01T00:00:00.000001
                Value::Timestamp(-1, 9),                       // 1969-12-31T23:59:59.999999999
                Value::TimestampLtz(1_700_000_000_999_999, 6), // 2023-11-14T22:13:20.999999Z
                Value::BigInt(3),
            ],
        ]
    }

    fn encode(layout: &RowLayout, values: &[Value]) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut w = RowWriter::new(layout, &mut bytes);
        for v in values {
            v.write(&mut w);
        }
        w.finish();
        bytes
    }

    /// The golden file's output, each joined row projected to the right row's columns reversed
    /// then the left row's: `+I[a, b]` stamped 7; `-U[b, null]` (a null-padded right side), no
    /// timestamp; `+U[c, a]`; a rejection of a right change.
    #[test]
    fn flink_rows_layout() {
        let schema = every_type();
        let layout = RowLayout::new(&schema);
        let [a, b, c] = rows().map(|r| encode(&layout, &r));
        let n = schema.len();
        let projection: Vec<usize> = (0..n).rev().map(|c| n + c).chain(0..n).collect();
        let flink = FlinkRows::over(&[&schema, &schema], &FlinkRowsSpec { projection }).unwrap();
        let mut entries = Vec::new();
        let mut w = OutputWriter::new(&mut entries);
        let first = crate::batch::InputRecord {
            side: crate::Side::Left,
            kind: RowKind::Insert,
            key_group: 0,
            timestamp: Some(7),
            row: &a,
        };
        w.set_input(&first);
        w.emit(RowKind::Insert, Some(&a), Some(&b));
        let second = crate::batch::InputRecord {
            side: crate::Side::Right,
            timestamp: None,
            ..first
        };
        w.set_input(&second);
        w.emit(RowKind::UpdateBefore, Some(&b), None);
        w.emit(RowKind::UpdateAfter, Some(&c), Some(&a));
        w.reject("no");
        let mut out = Vec::new();
        flink.write(&entries, &mut out);
        golden::check("flink_rows.bin", &out);
    }

    #[test]
    fn projections_are_checked() {
        let schema = every_type();
        let spec = |projection| FlinkRowsSpec { projection };
        assert!(FlinkRows::over(&[&schema, &schema], &spec(vec![])).is_err());
        let err = FlinkRows::over(&[&schema, &schema], &spec(vec![2 * schema.len()]));
        assert!(err.is_err());
    }
}
