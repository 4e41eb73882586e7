//! The compact row encoding.
//!
//! ```text
//! row := null bitmap (ceil(n/8) bytes, bit i set = column i is null, bits from n on zero)
//!        fixed slots (one per column, width by type, little-endian, zero when null)
//!        variable tail (bytes of STRING/BYTES columns, in column order)
//! ```
//! A STRING/BYTES slot holds `(offset u32, length u32)` with the offset counted from the row's start.
//! Floats are stored with NaN canonicalised, so equal values have equal bytes. The encoding is
//! canonical: a row's bytes are a function of its values, which lets the join hash and compare keys
//! and rows as plain byte slices. A key is the same encoding over the key columns' sub-schema.
//!
//! A column may also be *unavailable*: its value exists at the source but the change does not carry
//! it (Debezium's placeholder for an unchanged TOASTed column, or a non-key column of a delete that
//! names its row by primary key only). It is encoded as a null bit with the first byte of its slot
//! set to [`UNAVAILABLE`] (a null slot is otherwise all zero). Unavailable columns only travel from
//! the decoder to the join, which fills them from its stored row or rejects the change: they are
//! never stored or emitted.

use crate::schema::{DataType, Schema};

/// First byte of the slot of an unavailable column (whose null bit is set).
pub const UNAVAILABLE: u8 = 1;

/// Where one column lives in rows of one layout: its null bit and its slot, resolved once so that
/// code comparing the same columns of many rows (keys, on every lookup and every retraction) does
/// not look up the column's type and offset, or divide its index, for each row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnSlot {
    null_byte: usize,
    null_bit: u8,
    offset: usize,
    /// The slot's width; 0 for STRING and BYTES, compared by their data.
    width: usize,
}

/// Precomputed byte layout of one schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowLayout {
    types: Vec<DataType>,
    offsets: Vec<usize>,
    /// The STRING/BYTES columns and their slots' offsets, in column order (what validation walks).
    variable: Vec<(usize, usize)>,
    bitmap_len: usize,
    fixed_len: usize,
}

impl RowLayout {
    /// The layout of rows of `schema`.
    pub fn new(schema: &Schema) -> RowLayout {
        let types: Vec<DataType> = schema.fields.iter().map(|f| f.data_type).collect();
        let bitmap_len = types.len().div_ceil(8);
        let mut offsets = Vec::with_capacity(types.len());
        let mut at = bitmap_len;
        for t in &types {
            offsets.push(at);
            at += t.slot_width();
        }
        let variable = (types.iter().zip(&offsets).enumerate())
            .filter(|(_, (t, _))| t.is_variable())
            .map(|(i, (_, &at))| (i, at))
            .collect();
        RowLayout {
            types,
            offsets,
            variable,
            bitmap_len,
            fixed_len: at,
        }
    }

    /// Where column `i` lives in rows of this layout (see [`ColumnSlot`]).
    pub fn column_slot(&self, i: usize) -> ColumnSlot {
        let t = self.types[i];
        ColumnSlot {
            null_byte: i / 8,
            null_bit: 1 << (i % 8),
            offset: self.offsets[i],
            width: if t.is_variable() { 0 } else { t.slot_width() },
        }
    }

    /// Number of columns.
    pub fn arity(&self) -> usize {
        self.types.len()
    }

    /// Type of column `i`.
    pub fn data_type(&self, i: usize) -> DataType {
        self.types[i]
    }

    /// Bytes before the variable tail: the smallest possible row.
    pub fn fixed_len(&self) -> usize {
        self.fixed_len
    }

    /// Checks that `bytes` is a structurally valid row of this layout (lengths, offsets, null
    /// slots), so that reading it can never go out of bounds. For rows from untrusted callers.
    /// Unavailable columns are accepted: they travel from the decoder to the join.
    pub fn validate(&self, bytes: &[u8]) -> Result<(), String> {
        self.check(bytes, true)
    }

    /// [`RowLayout::validate`] for a row of state, which never holds unavailable columns: a null
    /// slot must be all zero (rows read back from a snapshot).
    pub fn validate_stored(&self, bytes: &[u8]) -> Result<(), String> {
        self.check(bytes, false)
    }

    /// The checks of [`RowLayout::validate`], unavailable columns accepted or not. One pass over
    /// the set null bits and one over the variable columns: it runs for every input change and
    /// every restored row.
    fn check(&self, bytes: &[u8], unavailable: bool) -> Result<(), String> {
        if bytes.len() < self.fixed_len {
            return Err(format!(
                "row of {} bytes is shorter than its fixed part ({} bytes)",
                bytes.len(),
                self.fixed_len
            ));
        }
        let bitmap = &bytes[..self.bitmap_len];
        for (b, &byte) in bitmap.iter().enumerate() {
            let mut bits = byte;
            while bits != 0 {
                let i = b * 8 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if i >= self.types.len() {
                    // The same values would have other bytes: not the canonical encoding.
                    return Err(format!(
                        "null bit {i} is set in a row of {} columns",
                        self.types.len()
                    ));
                }
                self.check_null_slot(bytes, i, unavailable)?;
            }
        }
        let mut tail = self.fixed_len;
        for &(i, at) in &self.variable {
            if bitmap[i / 8] & (1 << (i % 8)) != 0 {
                continue;
            }
            let slot: [u8; 8] = bytes[at..at + 8].try_into().expect("8 bytes");
            let off = u32::from_le_bytes(slot[..4].try_into().expect("4 bytes")) as usize;
            let len = u32::from_le_bytes(slot[4..].try_into().expect("4 bytes")) as usize;
            if off != tail || off + len > bytes.len() {
                return Err(format!(
                    "column {i}: variable data at {off}+{len} is not where the encoding puts it"
                ));
            }
            tail = off + len;
        }
        if tail != bytes.len() {
            return Err(format!("row has {} trailing bytes", bytes.len() - tail));
        }
        Ok(())
    }

    /// Checks the slot of null column `i`: all zero, or marked unavailable where accepted.
    fn check_null_slot(&self, bytes: &[u8], i: usize, unavailable: bool) -> Result<(), String> {
        let at = self.offsets[i];
        let slot = &bytes[at..at + self.types[i].slot_width()];
        if slot[1..].iter().all(|&b| b == 0) {
            match slot[0] {
                0 => return Ok(()),
                UNAVAILABLE if unavailable => return Ok(()),
                UNAVAILABLE => {
                    return Err(format!(
                        "column {i} is unavailable, which a row of state never is"
                    ))
                }
                _ => {}
            }
        }
        Err(format!("column {i}: null slot is not zero"))
    }
}

/// Writes one row, column by column in schema order, at the end of a byte buffer.
///
/// Writing in order is what makes the encoding canonical. Every column must be written exactly once
/// before [`RowWriter::finish`].
pub struct RowWriter<'a> {
    layout: &'a RowLayout,
    buf: &'a mut Vec<u8>,
    start: usize,
    next: usize,
}

impl<'a> RowWriter<'a> {
    /// Starts a row at the end of `buf`.
    pub fn new(layout: &'a RowLayout, buf: &'a mut Vec<u8>) -> RowWriter<'a> {
        let start = buf.len();
        buf.resize(start + layout.fixed_len, 0);
        RowWriter {
            layout,
            buf,
            start,
            next: 0,
        }
    }

    /// Index of the next column to write.
    pub fn column(&self) -> usize {
        self.next
    }

    fn slot(&mut self, width: usize) -> &mut [u8] {
        let at = self.start + self.layout.offsets[self.next];
        self.next += 1;
        &mut self.buf[at..at + width]
    }

    /// Writes a null.
    pub fn null(&mut self) {
        let i = self.next;
        self.buf[self.start + i / 8] |= 1 << (i % 8);
        self.next += 1;
    }

    /// Writes an unavailable column (see the module docs): a null whose slot is marked.
    pub fn unavailable(&mut self) {
        let i = self.next;
        self.buf[self.start + i / 8] |= 1 << (i % 8);
        self.slot(1)[0] = UNAVAILABLE;
    }

    /// Writes a BOOLEAN.
    pub fn boolean(&mut self, v: bool) {
        self.slot(1)[0] = v as u8;
    }

    /// Writes a TINYINT.
    pub fn tiny(&mut self, v: i8) {
        self.slot(1)[0] = v as u8;
    }

    /// Writes a SMALLINT.
    pub fn small(&mut self, v: i16) {
        self.slot(2).copy_from_slice(&v.to_le_bytes());
    }

    /// Writes an INT, a DATE (epoch days) or a TIME (milliseconds of the day).
    pub fn int(&mut self, v: i32) {
        self.slot(4).copy_from_slice(&v.to_le_bytes());
    }

    /// Writes a BIGINT, a TIMESTAMP, a TIMESTAMP_LTZ, or a DECIMAL of precision <= 18 (unscaled).
    pub fn long(&mut self, v: i64) {
        self.slot(8).copy_from_slice(&v.to_le_bytes());
    }

    /// Writes a FLOAT.
    pub fn float(&mut self, v: f32) {
        let v = if v.is_nan() { f32::NAN } else { v };
        self.slot(4).copy_from_slice(&v.to_le_bytes());
    }

    /// Writes a DOUBLE.
    pub fn double(&mut self, v: f64) {
        let v = if v.is_nan() { f64::NAN } else { v };
        self.slot(8).copy_from_slice(&v.to_le_bytes());
    }

    /// Writes a DECIMAL's unscaled value, in the slot width its precision implies.
    pub fn decimal(&mut self, unscaled: i128) {
        match self.layout.types[self.next].slot_width() {
            8 => self.long(unscaled as i64),
            _ => self.slot(16).copy_from_slice(&unscaled.to_le_bytes()),
        }
    }

    /// Writes a STRING or BYTES value.
    pub fn bytes(&mut self, v: &[u8]) {
        let off = (self.buf.len() - self.start) as u32;
        let slot = self.slot(8);
        slot[..4].copy_from_slice(&off.to_le_bytes());
        slot[4..].copy_from_slice(&(v.len() as u32).to_le_bytes());
        self.buf.extend_from_slice(v);
    }

    /// Copies column `i` of `src` (same type) as the next column: used to project keys and rows.
    pub fn copy_from(&mut self, src: &RowRef<'_>, i: usize) {
        self.copy_slot(src, src.layout.column_slot(i));
    }

    /// [`RowWriter::copy_from`] of the column at `slot` of `src`, resolved beforehand.
    pub fn copy_slot(&mut self, src: &RowRef<'_>, slot: ColumnSlot) {
        let at = slot.offset;
        if src.is_null_at(slot) {
            return match src.bytes[at] {
                UNAVAILABLE => self.unavailable(),
                _ => self.null(),
            };
        }
        match slot.width {
            0 => self.bytes(src.slot_bytes(at)),
            1 => self.slot(1).copy_from_slice(&src.word::<1>(at)),
            2 => self.slot(2).copy_from_slice(&src.word::<2>(at)),
            4 => self.slot(4).copy_from_slice(&src.word::<4>(at)),
            8 => self.slot(8).copy_from_slice(&src.word::<8>(at)),
            _ => self.slot(16).copy_from_slice(&src.word::<16>(at)),
        }
    }

    /// Ends the row; returns its length in bytes.
    pub fn finish(self) -> usize {
        debug_assert_eq!(
            self.next,
            self.layout.arity(),
            "every column must be written"
        );
        self.buf.len() - self.start
    }
}

/// A read-only view of one encoded row.
#[derive(Clone, Copy, Debug)]
pub struct RowRef<'a> {
    layout: &'a RowLayout,
    bytes: &'a [u8],
}

impl<'a> RowRef<'a> {
    /// Views `bytes` as a row of `layout`. The bytes must be valid ([`RowLayout::validate`]) or
    /// written by [`RowWriter`]; otherwise accessors may panic.
    pub fn new(layout: &'a RowLayout, bytes: &'a [u8]) -> RowRef<'a> {
        RowRef { layout, bytes }
    }

    /// The encoded bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The layout.
    pub fn layout(&self) -> &'a RowLayout {
        self.layout
    }

    /// Whether column `i` is null.
    pub fn is_null(&self, i: usize) -> bool {
        self.bytes[i / 8] & (1 << (i % 8)) != 0
    }

    /// Whether column `i` is unavailable (see the module docs). Unavailable columns are also null.
    pub fn is_unavailable(&self, i: usize) -> bool {
        self.is_null(i) && self.bytes[self.layout.offsets[i]] == UNAVAILABLE
    }

    /// The unavailable columns, in order. Unavailable columns are nulls, so a row without a null
    /// (the common case) is answered from its null bitmap alone, without allocating.
    #[inline]
    pub fn unavailable_columns(&self) -> Vec<usize> {
        if self.no_nulls() {
            return Vec::new();
        }
        self.unavailable_among_nulls()
    }

    /// Whether no column is null: the null bitmap is all zeros.
    #[inline]
    fn no_nulls(&self) -> bool {
        self.bytes[..self.layout.bitmap_len].iter().all(|&b| b == 0)
    }

    /// [`RowRef::unavailable_columns`] of a row with nulls: out of line, so that the check of
    /// the bitmap inlines into the join's loop over its input.
    #[inline(never)]
    fn unavailable_among_nulls(&self) -> Vec<usize> {
        (0..self.layout.arity())
            .filter(|&i| self.is_unavailable(i))
            .collect()
    }

    /// Whether any column is unavailable, without allocating (a row without a null is answered
    /// from its null bitmap).
    pub fn has_unavailable(&self) -> bool {
        !self.no_nulls() && (0..self.layout.arity()).any(|i| self.is_unavailable(i))
    }

    fn fixed<const N: usize>(&self, i: usize) -> [u8; N] {
        self.word(self.layout.offsets[i])
    }

    /// BOOLEAN at `i`.
    pub fn get_bool(&self, i: usize) -> bool {
        self.fixed::<1>(i)[0] != 0
    }

    /// TINYINT at `i`.
    pub fn get_tiny(&self, i: usize) -> i8 {
        self.fixed::<1>(i)[0] as i8
    }

    /// SMALLINT at `i`.
    pub fn get_small(&self, i: usize) -> i16 {
        i16::from_le_bytes(self.fixed(i))
    }

    /// INT, DATE or TIME at `i`.
    pub fn get_int(&self, i: usize) -> i32 {
        i32::from_le_bytes(self.fixed(i))
    }

    /// BIGINT, TIMESTAMP, TIMESTAMP_LTZ or short DECIMAL at `i`.
    pub fn get_long(&self, i: usize) -> i64 {
        i64::from_le_bytes(self.fixed(i))
    }

    /// FLOAT at `i`.
    pub fn get_float(&self, i: usize) -> f32 {
        f32::from_le_bytes(self.fixed(i))
    }

    /// DOUBLE at `i`.
    pub fn get_double(&self, i: usize) -> f64 {
        f64::from_le_bytes(self.fixed(i))
    }

    /// DECIMAL's unscaled value at `i`, whatever its width.
    pub fn get_decimal(&self, i: usize) -> i128 {
        match self.layout.types[i].slot_width() {
            8 => self.get_long(i) as i128,
            _ => i128::from_le_bytes(self.fixed(i)),
        }
    }

    /// The `(offset, length)` of the STRING or BYTES slot at byte `at`.
    fn var_slot_at(&self, at: usize) -> (usize, usize) {
        let s: [u8; 8] = self.word(at);
        let off = u32::from_le_bytes(s[..4].try_into().expect("4 bytes")) as usize;
        let len = u32::from_le_bytes(s[4..].try_into().expect("4 bytes")) as usize;
        (off, len)
    }

    /// The bytes that encode column `i`: `None` when null, else its slot or, for STRING and BYTES,
    /// its data. Two columns of one type hold the same value exactly when these are equal.
    pub fn column_bytes(&self, i: usize) -> Option<&'a [u8]> {
        if self.is_null(i) {
            return None;
        }
        let t = self.layout.types[i];
        if t.is_variable() {
            return Some(self.get_bytes(i));
        }
        let at = self.layout.offsets[i];
        Some(&self.bytes[at..at + t.slot_width()])
    }

    /// Whether the column at `slot` holds the same value as the column at `other_slot` of
    /// `other`, a column of the same type: [`RowRef::column_bytes`] compared, without building the
    /// slices where the type is fixed-width. Keys are compared on every state lookup and every
    /// retraction, and a library call to compare four bytes cost more than the rest of the
    /// comparison.
    #[inline]
    pub fn slot_eq(&self, slot: ColumnSlot, other: &RowRef<'_>, other_slot: ColumnSlot) -> bool {
        let (null, other_null) = (self.is_null_at(slot), other.is_null_at(other_slot));
        if null || other_null {
            return null && other_null;
        }
        let (a, b) = (slot.offset, other_slot.offset);
        match slot.width {
            0 => self.slot_bytes(a) == other.slot_bytes(b),
            1 => self.bytes[a] == other.bytes[b],
            2 => self.word::<2>(a) == other.word::<2>(b),
            4 => self.word::<4>(a) == other.word::<4>(b),
            8 => self.word::<8>(a) == other.word::<8>(b),
            _ => self.word::<16>(a) == other.word::<16>(b),
        }
    }

    /// Whether the column at `slot` is null.
    fn is_null_at(&self, slot: ColumnSlot) -> bool {
        self.bytes[slot.null_byte] & slot.null_bit != 0
    }

    /// The `N` bytes at byte `at`.
    fn word<const N: usize>(&self, at: usize) -> [u8; N] {
        self.bytes[at..at + N].try_into().expect("slot width")
    }

    /// The data of the STRING or BYTES slot at byte `at`.
    fn slot_bytes(&self, at: usize) -> &'a [u8] {
        let (off, len) = self.var_slot_at(at);
        &self.bytes[off..off + len]
    }

    /// STRING or BYTES at `i`.
    pub fn get_bytes(&self, i: usize) -> &'a [u8] {
        self.slot_bytes(self.layout.offsets[i])
    }
}

/// Extracts a key (a sub-row of some columns) from rows of one layout, in the row encoding of the
/// key columns' sub-schema.
#[derive(Clone, Debug)]
pub struct KeyProjection {
    columns: Vec<usize>,
    key_layout: RowLayout,
    /// The key columns' slots in rows of the schema, and in keys (for comparing without writing).
    row_slots: Vec<ColumnSlot>,
    key_slots: Vec<ColumnSlot>,
}

impl KeyProjection {
    /// A projection of `columns` of rows of `schema`.
    pub fn new(schema: &Schema, columns: &[usize]) -> KeyProjection {
        let (rows, key_layout) = (
            RowLayout::new(schema),
            RowLayout::new(&schema.project(columns)),
        );
        KeyProjection {
            columns: columns.to_vec(),
            row_slots: columns.iter().map(|&c| rows.column_slot(c)).collect(),
            key_slots: (0..columns.len())
                .map(|j| key_layout.column_slot(j))
                .collect(),
            key_layout,
        }
    }

    /// The projected columns.
    pub fn columns(&self) -> &[usize] {
        &self.columns
    }

    /// The layout of the keys it writes.
    pub fn key_layout(&self) -> &RowLayout {
        &self.key_layout
    }

    /// Appends the key of `row` to `out` and returns its length.
    pub fn write(&self, row: &RowRef<'_>, out: &mut Vec<u8>) -> usize {
        let mut w = RowWriter::new(&self.key_layout, out);
        for &slot in &self.row_slots {
            w.copy_slot(row, slot);
        }
        w.finish()
    }

    /// Whether rows `a` and `b` (both of the projected layout) have the same key, compared column
    /// by column without writing the keys out.
    pub fn same_key(&self, a: &RowRef<'_>, b: &RowRef<'_>) -> bool {
        self.row_slots.iter().all(|&s| a.slot_eq(s, b, s))
    }

    /// Whether `row` has the key `key` (encoded in [`KeyProjection::key_layout`]), compared column by
    /// column without writing the row's key out.
    pub fn has_key(&self, row: &RowRef<'_>, key: &RowRef<'_>) -> bool {
        (self.row_slots.iter().zip(&self.key_slots)).all(|(&r, &k)| row.slot_eq(r, key, k))
    }

    /// Whether any key column of `row` is null (SQL equality never matches a null key).
    pub fn has_null(&self, row: &RowRef<'_>) -> bool {
        self.columns.iter().any(|&c| row.is_null(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Field;

    fn schema() -> Schema {
        Schema::new(vec![
            Field::not_null("id", DataType::Int),
            Field::new("name", DataType::String),
            Field::new(
                "big",
                DataType::Decimal {
                    precision: 30,
                    scale: 2,
                },
            ),
            Field::new("d", DataType::Double),
            Field::new("blob", DataType::Bytes),
        ])
    }

    fn write(layout: &RowLayout, id: i32, name: Option<&str>, nan: f64) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut w = RowWriter::new(layout, &mut buf);
        w.int(id);
        match name {
            Some(n) => w.bytes(n.as_bytes()),
            None => w.null(),
        }
        w.decimal(-12345678901234567890123i128);
        w.double(nan);
        w.bytes(&[1, 2, 3]);
        assert_eq!(w.finish(), buf.len());
        buf
    }

    #[test]
    fn round_trips_and_validates() {
        let layout = RowLayout::new(&schema());
        let bytes = write(&layout, 7, Some("héllo"), 1.5);
        layout.validate(&bytes).unwrap();
        let r = RowRef::new(&layout, &bytes);
        assert_eq!(r.get_int(0), 7);
        assert_eq!(r.get_bytes(1), "héllo".as_bytes());
        assert_eq!(r.get_decimal(2), -12345678901234567890123i128);
        assert_eq!(r.get_double(3), 1.5);
        assert_eq!(r.get_bytes(4), &[1, 2, 3]);
        let n = write(&layout, 7, None, 1.5);
        layout.validate(&n).unwrap();
        assert!(RowRef::new(&layout, &n).is_null(1));
    }

    #[test]
    fn unavailable_columns_are_marked_nulls() {
        let layout = RowLayout::new(&schema());
        let mut buf = Vec::new();
        let mut w = RowWriter::new(&layout, &mut buf);
        w.int(3);
        w.unavailable();
        w.null();
        w.unavailable();
        w.bytes(b"x");
        w.finish();
        layout.validate(&buf).unwrap();
        let r = RowRef::new(&layout, &buf);
        assert!(r.is_null(1) && r.is_unavailable(1) && r.is_unavailable(3));
        assert!(r.is_null(2) && !r.is_unavailable(2) && !r.is_unavailable(0));
        assert!(r.has_unavailable());
        assert_eq!(r.unavailable_columns(), vec![1, 3]);
        assert!(!RowRef::new(&layout, &write(&layout, 1, None, 0.0)).has_unavailable());
        let mut copy = Vec::new();
        let mut w = RowWriter::new(&layout, &mut copy);
        (0..5).for_each(|i| w.copy_from(&r, i));
        w.finish();
        assert_eq!(copy, buf);
        let mut dirty = buf.clone();
        dirty[layout.offsets[2]] = 7;
        assert!(layout.validate(&dirty).unwrap_err().contains("null slot"));
    }

    #[test]
    fn narrow_and_temporal_slots() {
        let schema = Schema::new(vec![
            Field::new("t", DataType::TinyInt),
            Field::new("s", DataType::SmallInt),
            Field::new("time", DataType::Time { precision: 3 }),
            Field::new("ltz", DataType::TimestampLtz { precision: 6 }),
        ]);
        let layout = RowLayout::new(&schema);
        assert_eq!(layout.fixed_len(), 1 + 1 + 2 + 4 + 8);
        let mut buf = Vec::new();
        let mut w = RowWriter::new(&layout, &mut buf);
        w.tiny(-128);
        w.small(-2);
        w.int(86_399_999);
        w.long(-1);
        w.finish();
        layout.validate(&buf).unwrap();
        let r = RowRef::new(&layout, &buf);
        assert_eq!((r.get_tiny(0), r.get_small(1)), (-128, -2));
        assert_eq!((r.get_int(2), r.get_long(3)), (86_399_999, -1));
        assert_eq!(r.column_bytes(1), Some(&[0xfe, 0xff][..]));
        let mut null_tiny = Vec::new();
        let mut w = RowWriter::new(&layout, &mut null_tiny);
        w.unavailable();
        w.null();
        w.int(0);
        w.long(0);
        w.finish();
        layout.validate(&null_tiny).unwrap();
        assert!(RowRef::new(&layout, &null_tiny).is_unavailable(0));
    }

    #[test]
    fn canonical_nan_and_equal_bytes() {
        let layout = RowLayout::new(&schema());
        let a = write(&layout, 1, Some("x"), f64::NAN);
        let b = write(&layout, 1, Some("x"), -f64::NAN);
        assert_eq!(a, b);
    }

    #[test]
    fn validate_rejects_corruption() {
        let layout = RowLayout::new(&schema());
        let good = write(&layout, 1, Some("abc"), 0.0);
        assert!(layout.validate(&good[..good.len() - 1]).is_err());
        assert!(layout.validate(&good[..3]).is_err());
        let mut extra = good.clone();
        extra.push(0);
        assert!(layout.validate(&extra).is_err());
        let mut bad_off = good.clone();
        let slot = layout.offsets[1];
        bad_off[slot] = 0xff;
        assert!(layout.validate(&bad_off).is_err());
        // Five columns: bits 5 to 7 of the bitmap are past the last one.
        for bit in 5..8 {
            let mut padded = good.clone();
            padded[0] |= 1 << bit;
            let err = layout.validate(&padded).unwrap_err();
            assert!(err.contains(&format!("null bit {bit} is set")), "{err}");
            assert!(layout.validate_stored(&padded).is_err());
        }
    }

    #[test]
    fn key_projection_equals_key_encoding() {
        let s = schema();
        let layout = RowLayout::new(&s);
        let p = KeyProjection::new(&s, &[1, 0]);
        let row = write(&layout, 9, Some("k"), 0.0);
        let mut key = Vec::new();
        p.write(&RowRef::new(&layout, &row), &mut key);
        let mut expect = Vec::new();
        let mut w = RowWriter::new(p.key_layout(), &mut expect);
        w.bytes(b"k");
        w.int(9);
        w.finish();
        assert_eq!(key, expect);
        assert!(!p.has_null(&RowRef::new(&layout, &row)));
        let other = write(&layout, 9, Some("k"), 5.0);
        let third = write(&layout, 9, Some("j"), 0.0);
        let (r, o, t) = (
            RowRef::new(&layout, &row),
            RowRef::new(&layout, &other),
            RowRef::new(&layout, &third),
        );
        assert!(p.same_key(&r, &o) && !p.same_key(&r, &t));
        let k = RowRef::new(p.key_layout(), &key);
        assert!(p.has_key(&r, &k) && p.has_key(&o, &k) && !p.has_key(&t, &k));
    }

    /// The checks of [`RowLayout::validate`] written column by column, in schema order, as the
    /// format above states them: what the one-pass check must agree with.
    fn validate_by_column(layout: &RowLayout, bytes: &[u8], unavailable: bool) -> bool {
        if bytes.len() < layout.fixed_len {
            return false;
        }
        let row = RowRef { layout, bytes };
        let arity = layout.types.len();
        if (arity..layout.bitmap_len * 8).any(|i| bytes[i / 8] & (1 << (i % 8)) != 0) {
            return false;
        }
        let mut tail = layout.fixed_len;
        for (i, t) in layout.types.iter().enumerate() {
            let slot = &bytes[layout.offsets[i]..layout.offsets[i] + t.slot_width()];
            if row.is_null(i) {
                let first_ok = slot[0] == 0 || (unavailable && slot[0] == UNAVAILABLE);
                if !first_ok || slot[1..].iter().any(|&b| b != 0) {
                    return false;
                }
            } else if t.is_variable() {
                let (off, len) = row.var_slot_at(layout.offsets[i]);
                if off != tail || off + len > bytes.len() {
                    return false;
                }
                tail = off + len;
            }
        }
        tail == bytes.len()
    }

    /// One column of each slot width and a variable one, written in `order`, column `c` from
    /// `v[c]`: `None` is null; on columns 1, 3 and 5 a value of 2 modulo 3 is unavailable; else
    /// the value modulo 3 (in a number's top byte), so that equal values are common and a
    /// comparison of part of a slot would miss the difference.
    fn every_width(order: &[usize], v: &[Option<u8>]) -> (RowLayout, Vec<u8>) {
        let fields = [
            Field::new("t", DataType::TinyInt),
            Field::new("s", DataType::SmallInt),
            Field::new("i", DataType::Int),
            Field::new("l", DataType::BigInt),
            Field::new(
                "d",
                DataType::Decimal {
                    precision: 30,
                    scale: 0,
                },
            ),
            Field::new("v", DataType::String),
        ];
        let layout = RowLayout::new(&Schema::new(
            order.iter().map(|&c| fields[c].clone()).collect(),
        ));
        let mut buf = Vec::new();
        let mut w = RowWriter::new(&layout, &mut buf);
        for &c in order {
            let Some(x) = v[c] else {
                w.null();
                continue;
            };
            match (c, x % 3) {
                (_, 2) if c % 2 == 1 => w.unavailable(),
                (0, _) => w.tiny(x as i8 % 3),
                (1, _) => w.small(i16::from(x % 3) << 8),
                (2, _) => w.int(i32::from(x % 3) << 24),
                (3, _) => w.long(i64::from(x % 3) << 56),
                (4, _) => w.decimal(i128::from(x % 3) << 120),
                _ => w.bytes(&b"ab"[..usize::from(x % 3).min(2)]),
            }
        }
        w.finish();
        (layout, buf)
    }

    proptest::proptest! {
        /// `slot_eq` answers what comparing `column_bytes` answers, for every slot width,
        /// nulls and unavailable columns, between rows of two layouts (a row and a key).
        #[test]
        fn slot_eq_is_column_bytes_compared(
            a in proptest::collection::vec(proptest::option::of(0u8..6), 6),
            b in proptest::collection::vec(proptest::option::of(0u8..6), 6),
        ) {
            let (la, ra) = every_width(&[0, 1, 2, 3, 4, 5], &a);
            let (lb, rb) = every_width(&[5, 4, 3, 2, 1, 0], &b);
            let (ra, rb) = (RowRef::new(&la, &ra), RowRef::new(&lb, &rb));
            for i in 0..6 {
                let j = 5 - i;
                proptest::prop_assert_eq!(
                    ra.slot_eq(la.column_slot(i), &rb, lb.column_slot(j)),
                    ra.column_bytes(i) == rb.column_bytes(j),
                    "column {}", i
                );
            }
        }

        /// Copying every column of a row, in order, writes the row again: every slot width,
        /// nulls, unavailable columns and strings; and a key projection of some columns writes
        /// what copying those columns one by one writes.
        #[test]
        fn copied_columns_write_the_row_again(
            v in proptest::collection::vec(proptest::option::of(0u8..6), 6),
        ) {
            let (layout, row) = every_width(&[0, 1, 2, 3, 4, 5], &v);
            let r = RowRef::new(&layout, &row);
            let mut copy = Vec::new();
            let mut w = RowWriter::new(&layout, &mut copy);
            (0..6).for_each(|i| w.copy_from(&r, i));
            w.finish();
            proptest::prop_assert_eq!(&copy, &row);
            let schema = Schema::new((0..6).map(|i| Field::new(
                &format!("c{i}"), layout.data_type(i))).collect());
            let (mut key, mut by_hand) = (Vec::new(), Vec::new());
            KeyProjection::new(&schema, &[5, 2, 3]).write(&r, &mut key);
            let sub = RowLayout::new(&schema.project(&[5, 2, 3]));
            let mut w = RowWriter::new(&sub, &mut by_hand);
            [5, 2, 3].iter().for_each(|&i| w.copy_from(&r, i));
            w.finish();
            proptest::prop_assert_eq!(key, by_hand);
        }

        /// Valid rows with up to four bytes overwritten, cut or extended: both checks accept
        /// exactly what the column-by-column reading accepts.
        #[test]
        fn the_one_pass_check_agrees_with_the_format(
            id in proptest::prelude::any::<i32>(),
            name in proptest::option::of("[a-z]{0,6}"),
            marks in proptest::collection::vec(
                (
                    proptest::prelude::any::<usize>(),
                    // Small values, and bits past the last column's null bit.
                    proptest::sample::select(vec![0u8, 1, 2, 3, 0x20, 0x80]),
                ),
                0..4,
            ),
            cut in 0usize..3,
            extend in 0usize..2,
        ) {
            let layout = RowLayout::new(&schema());
            let mut bytes = write(&layout, id, name.as_deref(), 0.0);
            // Half of the marks land where a check looks: the null bitmap, a slot's first byte,
            // a variable slot's length.
            let slots: Vec<usize> = (layout.offsets.iter())
                .flat_map(|&o| [0, o, o + 4])
                .collect();
            for (at, value) in marks {
                let at = match at % 2 {
                    0 => slots[at / 2 % slots.len()],
                    _ => at / 2 % bytes.len(),
                };
                bytes[at] = value;
            }
            bytes.truncate(bytes.len() - cut.min(bytes.len()));
            bytes.extend(std::iter::repeat_n(0, extend));
            proptest::prop_assert_eq!(
                layout.validate(&bytes).is_ok(),
                validate_by_column(&layout, &bytes, true)
            );
            proptest::prop_assert_eq!(
                layout.validate_stored(&bytes).is_ok(),
                validate_by_column(&layout, &bytes, false)
            );
        }
    }
}
