//! Flink's `BinaryRowData` layout, written from rows of the compact encoding ([`crate::row`]).
//!
//! A join whose caller wants Flink's internal rows (`CdcJoin.Result#rowData()`) gets each output
//! row already in the layout Flink's table runtime passes between its operators, so the Java side
//! only points a `BinaryRowData` at the bytes: no Java object per column and no column loop in
//! Java. The layout is Flink's (`BinaryRowData`, as its `BinaryRowWriter` writes it, on a
//! little-endian machine); Flink's classes are the contract, and the Java tests read every row
//! this module writes back with Flink's own converters (`tests/wire/flink_rows.bin`).
//!
//! ```text
//! row      := header and null bits ((arity + 63 + 8) / 64 * 8 bytes: byte 0 the RowKind byte,
//!                                   bit 8 + i set = column i null)
//!             fixed part (8 bytes per column, little-endian, zero where unused)
//!             variable part (8-byte aligned chunks, zero padded, in column order)
//! slot     := BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE: the value
//!             DATE: epoch days (int); TIME: milliseconds of the day (int)
//!             DECIMAL(p <= 18): unscaled long; TIMESTAMP(_LTZ)(p <= 3): epoch millis
//!             STRING/BYTES of at most 7 bytes: the bytes, 0x80 | length in the top byte
//!             otherwise: offset u32 (from the row's start) << 32 | length; the bytes in the
//!               variable part (STRING as its UTF-8 bytes, BYTES as they are)
//!             DECIMAL(p > 18): offset << 32 | n; n bytes of the unscaled value, big-endian two's
//!               complement, minimal (Java's BigInteger#toByteArray), in a 16-byte chunk
//!             TIMESTAMP(_LTZ)(p > 3): offset << 32 | nano of millisecond; epoch millis in an
//!               8-byte chunk
//!             a null column: all zero
//! ```
//!
//! Every column type of the compact encoding has an exact Flink internal form: its TIME is
//! already milliseconds, its TIMESTAMP micros or nanos split exactly into millis and nano of
//! millisecond.

use crate::row::RowRef;
use crate::schema::DataType;
use crate::RowKind;

/// A string or bytes value this long or shorter lives in its slot.
const MAX_INLINE: usize = 7;

/// Bytes of a wide DECIMAL's chunk in the variable part.
const WIDE_DECIMAL_BYTES: usize = 16;

/// Bits of the header (the RowKind byte) before the null bits.
const HEADER_BITS: usize = 8;

/// One column of a Flink row: which input row it is read from, and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlinkColumn {
    /// The input (a join's side or a multi-way join's input) whose row holds the value.
    pub input: usize,
    /// The column's index in that input's row.
    pub column: usize,
    /// Its type there (and in the Flink row).
    pub data_type: DataType,
}

/// The layout of Flink rows made of columns of one or more input rows (a join's output
/// projection), and their writer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlinkRowLayout {
    columns: Vec<FlinkColumn>,
    null_bytes: usize,
}

impl FlinkRowLayout {
    /// The layout of rows whose column `i` is `columns[i]`.
    pub fn new(columns: Vec<FlinkColumn>) -> FlinkRowLayout {
        // Flink's BinaryRowData.calculateBitSetWidthInBytes.
        let null_bytes = (columns.len() + 63 + HEADER_BITS) / 64 * 8;
        FlinkRowLayout {
            columns,
            null_bytes,
        }
    }

    /// Bytes before the variable part.
    fn fixed_len(&self) -> usize {
        self.null_bytes + 8 * self.columns.len()
    }

    /// Appends the row of `kind` whose columns come from `inputs` (one row per input, `None`
    /// for a null-padded input, whose columns are null); returns its length.
    ///
    /// # Panics
    /// If a column names an input `inputs` lacks, or a row is not of its column's layout.
    pub fn write(&self, kind: RowKind, inputs: &[Option<RowRef<'_>>], out: &mut Vec<u8>) -> usize {
        let start = out.len();
        out.resize(start + self.fixed_len(), 0);
        out[start] = kind as u8;
        for (i, c) in self.columns.iter().enumerate() {
            match inputs[c.input] {
                Some(row) if !row.is_null(c.column) => self.value(i, c, &row, start, out),
                _ => {
                    let bit = HEADER_BITS + i;
                    out[start + bit / 8] |= 1 << (bit % 8);
                }
            }
        }
        out.len() - start
    }

    /// Writes the non-null column `i` of the row at `start`, read as `c` from `row`.
    fn value(&self, i: usize, c: &FlinkColumn, row: &RowRef<'_>, start: usize, out: &mut Vec<u8>) {
        let slot = start + self.null_bytes + 8 * i;
        let bytes = row.column_bytes(c.column).expect("not null");
        let word = match c.data_type {
            DataType::String | DataType::Bytes if bytes.len() <= MAX_INLINE => {
                out[slot..slot + bytes.len()].copy_from_slice(bytes);
                out[slot + 7] = 0x80 | bytes.len() as u8;
                return;
            }
            DataType::String | DataType::Bytes => {
                let at = variable(out, start, bytes, bytes.len().next_multiple_of(8));
                at << 32 | bytes.len() as u64
            }
            DataType::Decimal { precision, .. } if precision > 18 => {
                let unscaled = row.get_decimal(c.column).to_be_bytes();
                let minimal = &unscaled[sign_bytes(&unscaled)..];
                let at = variable(out, start, minimal, WIDE_DECIMAL_BYTES);
                at << 32 | minimal.len() as u64
            }
            DataType::Timestamp { precision } | DataType::TimestampLtz { precision } => {
                let per_milli: i64 = if precision <= 6 { 1_000 } else { 1_000_000 };
                let value = row.get_long(c.column);
                let millis = value.div_euclid(per_milli);
                if precision <= 3 {
                    millis as u64
                } else {
                    let nano_of_milli = value.rem_euclid(per_milli) * (1_000_000 / per_milli);
                    let at = variable(out, start, &millis.to_le_bytes(), 8);
                    at << 32 | nano_of_milli as u64
                }
            }
            // The value as the compact encoding holds it: little-endian, as wide as its slot.
            _ => {
                out[slot..slot + bytes.len()].copy_from_slice(bytes);
                return;
            }
        };
        out[slot..slot + 8].copy_from_slice(&word.to_le_bytes());
    }
}

/// Appends `bytes` to the variable part of the row at `start` in a zero-padded chunk of `chunk`
/// bytes; the chunk's offset from the row's start.
fn variable(out: &mut Vec<u8>, start: usize, bytes: &[u8], chunk: usize) -> u64 {
    let at = out.len() - start;
    out.extend_from_slice(bytes);
    out.resize(start + at + chunk, 0);
    at as u64
}

/// How many leading bytes of the big-endian two's complement `be` only repeat the sign of the
/// byte after them: what Java's `BigInteger#toByteArray` leaves out (it keeps at least one byte).
fn sign_bytes(be: &[u8]) -> usize {
    be.windows(2)
        .take_while(|w| (w[0] == 0 && w[1] < 0x80) || (w[0] == 0xFF && w[1] >= 0x80))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::{RowLayout, RowWriter};
    use crate::schema::{Field, Schema};

    fn column(input: usize, column: usize, data_type: DataType) -> FlinkColumn {
        FlinkColumn {
            input,
            column,
            data_type,
        }
    }

    /// One row of `schema` written by `write`.
    fn row(schema: &Schema, write: impl FnOnce(&mut RowWriter<'_>)) -> (RowLayout, Vec<u8>) {
        let layout = RowLayout::new(schema);
        let mut bytes = Vec::new();
        let mut w = RowWriter::new(&layout, &mut bytes);
        write(&mut w);
        w.finish();
        (layout, bytes)
    }

    #[test]
    fn header_null_bits_and_fixed_slots() {
        let schema = Schema::new(vec![
            Field::new("i", DataType::Int),
            Field::new("l", DataType::BigInt),
            Field::new("b", DataType::Boolean),
        ]);
        let (layout, bytes) = row(&schema, |w| {
            w.int(-2);
            w.null();
            w.boolean(true);
        });
        let flink = FlinkRowLayout::new(vec![
            column(0, 2, DataType::Boolean),
            column(0, 0, DataType::Int),
            column(0, 1, DataType::BigInt),
            column(1, 0, DataType::Int),
        ]);
        let mut out = vec![0xEE];
        let rows = [Some(RowRef::new(&layout, &bytes)), None];
        assert_eq!(
            flink.write(RowKind::UpdateAfter, &rows, &mut out),
            8 + 4 * 8
        );
        let mut expected = vec![0xEE, 2, 0b0000_1100, 0, 0, 0, 0, 0, 0];
        expected.extend_from_slice(&1u64.to_le_bytes());
        expected.extend_from_slice(&(-2i32 as u32 as u64).to_le_bytes());
        expected.extend_from_slice(&[0; 16]);
        assert_eq!(out, expected);
    }

    #[test]
    fn null_bits_take_whole_words_after_the_header_byte() {
        // Flink's BinaryRowData.calculateBitSetWidthInBytes: 8 bytes up to 56 columns, then 16
        // up to 120, 24 from 121.
        let width = |arity| {
            let columns = vec![column(0, 0, DataType::Int); arity];
            FlinkRowLayout::new(columns).null_bytes
        };
        for (arity, bytes) in [(0, 8), (1, 8), (56, 8), (57, 16), (120, 16), (121, 24)] {
            assert_eq!(width(arity), bytes, "{arity} columns");
        }
        let schema = Schema::new(vec![Field::new("i", DataType::Int)]);
        let (layout, bytes) = row(&schema, |w| w.null());
        let flink = FlinkRowLayout::new(vec![column(0, 0, DataType::Int); 57]);
        let mut out = Vec::new();
        let len = flink.write(
            RowKind::Delete,
            &[Some(RowRef::new(&layout, &bytes))],
            &mut out,
        );
        assert_eq!(len, 16 + 57 * 8);
        // Bits 8..=64 set: column 56's bit is the first of the second word.
        assert_eq!(
            &out[..9],
            &[3, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]
        );
        assert!(out[9..].iter().all(|&b| b == 0));
    }

    #[test]
    fn strings_inline_up_to_seven_bytes_then_in_the_variable_part() {
        let schema = Schema::new(vec![
            Field::new("a", DataType::String),
            Field::new("b", DataType::Bytes),
        ]);
        let (layout, bytes) = row(&schema, |w| {
            w.bytes(b"seven b");
            w.bytes(b"eight by");
        });
        let flink = FlinkRowLayout::new(vec![
            column(0, 0, DataType::String),
            column(0, 1, DataType::Bytes),
        ]);
        let mut out = Vec::new();
        flink.write(
            RowKind::Insert,
            &[Some(RowRef::new(&layout, &bytes))],
            &mut out,
        );
        let fixed = 8 + 2 * 8;
        assert_eq!(&out[8..16], b"seven b\x87");
        assert_eq!(&out[16..20], &8u32.to_le_bytes());
        assert_eq!(&out[20..24], &(fixed as u32).to_le_bytes());
        assert_eq!(&out[fixed..], b"eight by");
    }

    #[test]
    fn wide_decimals_are_minimal_big_endian() {
        for (v, be) in [
            (0i128, vec![0u8]),
            (-1, vec![0xFF]),
            (127, vec![0x7F]),
            (128, vec![0x00, 0x80]),
            (-128, vec![0x80]),
            (-129, vec![0xFF, 0x7F]),
            (i128::MIN, i128::MIN.to_be_bytes().to_vec()),
        ] {
            let full = v.to_be_bytes();
            assert_eq!(&full[sign_bytes(&full)..], &be[..], "{v}");
        }
    }

    #[test]
    fn precise_timestamps_split_into_millis_and_nanos() {
        let ts = DataType::Timestamp { precision: 6 };
        let schema = Schema::new(vec![Field::new("t", ts)]);
        // 1969-12-31T23:59:59.999999: -1 micro.
        let (layout, bytes) = row(&schema, |w| w.long(-1));
        let flink = FlinkRowLayout::new(vec![column(0, 0, ts)]);
        let mut out = Vec::new();
        flink.write(
            RowKind::Insert,
            &[Some(RowRef::new(&layout, &bytes))],
            &mut out,
        );
        assert_eq!(&out[8..12], &999_000u32.to_le_bytes());
        assert_eq!(&out[12..16], &16u32.to_le_bytes());
        assert_eq!(&out[16..24], &(-1i64).to_le_bytes());
    }
}
