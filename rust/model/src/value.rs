//! Owned column values, for the edges only: building rows in tests and the demo, and printing rows
//! exactly as Flink's `Row#toString` does (`+I[1, alice, null]`), so Rust and Java tests can compare
//! changelogs as text.

use crate::kind::RowKind;
use crate::row::{RowRef, RowWriter};
use crate::schema::DataType;
use std::fmt::{self, Write as _};

/// One column value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// BOOLEAN.
    Bool(bool),
    /// TINYINT.
    TinyInt(i8),
    /// SMALLINT.
    SmallInt(i16),
    /// INT.
    Int(i32),
    /// BIGINT.
    BigInt(i64),
    /// FLOAT.
    Float(f32),
    /// DOUBLE.
    Double(f64),
    /// DECIMAL: unscaled value and scale.
    Decimal(i128, u8),
    /// STRING.
    String(String),
    /// BYTES.
    Bytes(Vec<u8>),
    /// DATE: days since the epoch.
    Date(i32),
    /// TIME: milliseconds of the day.
    Time(i32),
    /// TIMESTAMP: micros (precision <= 6) or nanos (precision > 6) since the epoch, and precision.
    Timestamp(i64, u8),
    /// TIMESTAMP_LTZ: an instant, stored like [`Value::Timestamp`] (UTC), and precision.
    TimestampLtz(i64, u8),
}

impl Value {
    /// Writes this value as the writer's next column. The caller guarantees the type matches.
    pub fn write(&self, w: &mut RowWriter<'_>) {
        match self {
            Value::Null => w.null(),
            Value::Bool(b) => w.boolean(*b),
            Value::TinyInt(v) => w.tiny(*v),
            Value::SmallInt(v) => w.small(*v),
            Value::Int(v) | Value::Date(v) | Value::Time(v) => w.int(*v),
            Value::BigInt(v) | Value::Timestamp(v, _) | Value::TimestampLtz(v, _) => w.long(*v),
            Value::Float(v) => w.float(*v),
            Value::Double(v) => w.double(*v),
            Value::Decimal(v, _) => w.decimal(*v),
            Value::String(s) => w.bytes(s.as_bytes()),
            Value::Bytes(b) => w.bytes(b),
        }
    }

    /// Reads column `i` of `row`.
    pub fn read(row: &RowRef<'_>, i: usize) -> Value {
        if row.is_null(i) {
            return Value::Null;
        }
        match row.layout().data_type(i) {
            DataType::Boolean => Value::Bool(row.get_bool(i)),
            DataType::TinyInt => Value::TinyInt(row.get_tiny(i)),
            DataType::SmallInt => Value::SmallInt(row.get_small(i)),
            DataType::Int => Value::Int(row.get_int(i)),
            DataType::BigInt => Value::BigInt(row.get_long(i)),
            DataType::Float => Value::Float(row.get_float(i)),
            DataType::Double => Value::Double(row.get_double(i)),
            DataType::Decimal { scale, .. } => Value::Decimal(row.get_decimal(i), scale),
            DataType::String => {
                Value::String(String::from_utf8_lossy(row.get_bytes(i)).into_owned())
            }
            DataType::Bytes => Value::Bytes(row.get_bytes(i).to_vec()),
            DataType::Date => Value::Date(row.get_int(i)),
            DataType::Time { .. } => Value::Time(row.get_int(i)),
            DataType::Timestamp { precision } => Value::Timestamp(row.get_long(i), precision),
            DataType::TimestampLtz { precision } => Value::TimestampLtz(row.get_long(i), precision),
        }
    }

    /// All columns of `row`.
    pub fn read_row(row: &RowRef<'_>) -> Vec<Value> {
        (0..row.layout().arity())
            .map(|i| Value::read(row, i))
            .collect()
    }
}

impl fmt::Display for Value {
    /// Formats like Java's `toString` of the Flink external type (`Byte`, `Short`, `Integer`,
    /// `BigDecimal`, `LocalDate`, `LocalTime`, `LocalDateTime`, `Instant`, `byte[]` via
    /// `Arrays.toString`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::TinyInt(v) => write!(f, "{v}"),
            Value::SmallInt(v) => write!(f, "{v}"),
            Value::Int(v) => write!(f, "{v}"),
            Value::BigInt(v) => write!(f, "{v}"),
            Value::Float(v) => f.write_str(&java_float(*v as f64, v.to_string())),
            Value::Double(v) => f.write_str(&java_float(*v, v.to_string())),
            Value::Decimal(v, scale) => f.write_str(&format_decimal(*v, *scale)),
            Value::String(s) => f.write_str(s),
            Value::Bytes(b) => {
                let parts: Vec<String> = b.iter().map(|x| (*x as i8).to_string()).collect();
                write!(f, "[{}]", parts.join(", "))
            }
            Value::Date(d) => {
                let (y, m, dd) = civil_from_days(*d as i64);
                write!(f, "{y:04}-{m:02}-{dd:02}")
            }
            Value::Time(ms) => {
                let ms = *ms as i64;
                f.write_str(&local_time(ms / 1000, ms % 1000 * 1_000_000, false))
            }
            Value::Timestamp(t, p) => f.write_str(&format_timestamp(*t, *p, false)),
            Value::TimestampLtz(t, p) => f.write_str(&format_timestamp(*t, *p, true)),
        }
    }
}

/// Java prints whole doubles with a `.0` and uses its own rules for NaN/Infinity.
fn java_float(v: f64, rust: String) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else if rust.contains('.') || rust.contains('e') {
        rust
    } else {
        format!("{rust}.0")
    }
}

/// `BigDecimal#toString` for the magnitudes a DECIMAL(38) holds (plain notation).
pub fn format_decimal(unscaled: i128, scale: u8) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let sign = if unscaled < 0 { "-" } else { "" };
    let scale = scale as usize;
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + (m <= 2) as i64, m, d)
}

/// (year, month, day) to days since 1970-01-01, proleptic Gregorian.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 } as i64;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `LocalDateTime#toString` (or, with `instant`, `Instant#toString`: seconds always, then `Z`).
fn format_timestamp(t: i64, precision: u8, instant: bool) -> String {
    let per_sec: i64 = if precision > 6 {
        1_000_000_000
    } else {
        1_000_000
    };
    let secs = t.div_euclid(per_sec);
    let frac = t.rem_euclid(per_sec);
    let nanos = if precision > 6 { frac } else { frac * 1000 };
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let time = local_time(secs.rem_euclid(86_400), nanos, instant);
    let zone = if instant { "Z" } else { "" };
    format!("{y:04}-{mo:02}-{d:02}T{time}{zone}")
}

/// `LocalTime#toString` of a second of the day and nanos: `HH:mm`, then `:ss` when seconds or
/// nanos are not zero (or `always_seconds`), then the fraction in groups of 3 digits.
fn local_time(second_of_day: i64, nanos: i64, always_seconds: bool) -> String {
    let sod = second_of_day;
    let mut s = format!("{:02}:{:02}", sod / 3600, sod / 60 % 60);
    if always_seconds || sod % 60 != 0 || nanos != 0 {
        let _ = write!(s, ":{:02}", sod % 60);
    }
    if nanos != 0 {
        if nanos % 1_000_000 == 0 {
            let _ = write!(s, ".{:03}", nanos / 1_000_000);
        } else if nanos % 1000 == 0 {
            let _ = write!(s, ".{:06}", nanos / 1000);
        } else {
            let _ = write!(s, ".{nanos:09}");
        }
    }
    s
}

/// Formats a changelog row as Flink's `Row#toString`: `+I[1, alice, null]`.
pub fn format_row(kind: RowKind, values: &[Value]) -> String {
    let parts: Vec<String> = values.iter().map(Value::to_string).collect();
    format!("{}[{}]", kind.short_string(), parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::RowLayout;
    use crate::schema::{Field, Schema};

    #[test]
    fn formats_like_java() {
        assert_eq!(format_decimal(1234, 2), "12.34");
        assert_eq!(format_decimal(-5, 3), "-0.005");
        assert_eq!(format_decimal(42, 0), "42");
        assert_eq!(Value::Double(3.0).to_string(), "3.0");
        assert_eq!(Value::Float(1.5).to_string(), "1.5");
        assert_eq!(Value::Date(19_723).to_string(), "2024-01-01");
        assert_eq!(Value::Date(-1).to_string(), "1969-12-31");
        assert_eq!(
            Value::Timestamp(1_704_067_200_000_000, 6).to_string(),
            "2024-01-01T00:00"
        );
        assert_eq!(
            Value::Timestamp(1_704_067_201_500_000, 3).to_string(),
            "2024-01-01T00:00:01.500"
        );
        assert_eq!(
            Value::Timestamp(1_704_067_200_000_000_001, 9).to_string(),
            "2024-01-01T00:00:00.000000001"
        );
        assert_eq!(Value::Bytes(vec![1, 255]).to_string(), "[1, -1]");
        assert_eq!(Value::TinyInt(-128).to_string(), "-128");
        assert_eq!(Value::SmallInt(32_767).to_string(), "32767");
        assert_eq!(Value::Time(0).to_string(), "00:00");
        assert_eq!(Value::Time(36_900_000).to_string(), "10:15");
        assert_eq!(Value::Time(36_930_000).to_string(), "10:15:30");
        assert_eq!(Value::Time(36_900_120).to_string(), "10:15:00.120");
        assert_eq!(Value::Time(86_399_999).to_string(), "23:59:59.999");
        assert_eq!(
            Value::TimestampLtz(1_704_067_200_000_000, 6).to_string(),
            "2024-01-01T00:00:00Z"
        );
        assert_eq!(
            Value::TimestampLtz(1_704_067_201_500_000, 3).to_string(),
            "2024-01-01T00:00:01.500Z"
        );
        assert_eq!(
            Value::TimestampLtz(-1, 9).to_string(),
            "1969-12-31T23:59:59.999999999Z"
        );
        assert_eq!(
            format_row(RowKind::Insert, &[Value::Int(1), Value::Null]),
            "+I[1, null]"
        );
    }

    #[test]
    fn civil_round_trip() {
        for d in [-800_000i64, -1, 0, 59, 60, 365, 19_723, 2_932_896] {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
    }

    #[test]
    fn values_round_trip_through_rows() {
        let schema = Schema::new(vec![
            Field::new("b", DataType::Boolean),
            Field::new("s", DataType::String),
            Field::new(
                "dec",
                DataType::Decimal {
                    precision: 10,
                    scale: 2,
                },
            ),
            Field::new("ts", DataType::Timestamp { precision: 3 }),
            Field::new("n", DataType::BigInt),
            Field::new("tiny", DataType::TinyInt),
            Field::new("small", DataType::SmallInt),
            Field::new("time", DataType::Time { precision: 3 }),
            Field::new("ltz", DataType::TimestampLtz { precision: 9 }),
        ]);
        let layout = RowLayout::new(&schema);
        let vals = vec![
            Value::Bool(true),
            Value::String("x".into()),
            Value::Decimal(-1234, 2),
            Value::Timestamp(5_000, 3),
            Value::Null,
            Value::TinyInt(-7),
            Value::SmallInt(-300),
            Value::Time(45_296_789),
            Value::TimestampLtz(-5, 9),
        ];
        let mut buf = Vec::new();
        let mut w = RowWriter::new(&layout, &mut buf);
        vals.iter().for_each(|v| v.write(&mut w));
        w.finish();
        assert_eq!(Value::read_row(&RowRef::new(&layout, &buf)), vals);
    }
}
