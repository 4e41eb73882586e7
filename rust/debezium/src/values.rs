//! One column value: from its raw JSON text to its slot in the row.
//!
//! Each column arrives as the exact JSON text the envelope scan validated, and is read according
//! to its *declared* type and its resolved [`Encoding`] (see the crate docs for the table): a value
//! that does not fit the encoding is an error naming what the encoding expects, never reread
//! another way. Nothing here allocates: strings are used in place or unescaped into a reused scratch
//! buffer, base64 and hex are decoded onto the stack or into a reused buffer.

use crate::encoding::{temporal, Encoding, TimePrecision};
use crate::numbers::{
    check_precision, decimal_from_text, parse_float, parse_i64, rescale, unscaled_from_base64,
    NumError, BASE64,
};
use crate::temporal::{epoch_days, from_integer, from_text, Temporal, TextForm, Unit};
use crate::text::{string_body, unescape};
use base64::Engine as _;
use cdcjoin_model::{DataType, RowWriter};
use serde::Deserialize;
use std::borrow::Cow;

/// How to read one column: its declared type and how its values are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ColumnReader {
    pub(crate) data_type: DataType,
    pub(crate) encoding: Encoding,
}

/// Why a value does not fit its column.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ValueError {
    /// The JSON is not the declared encoding of the declared type (see [`ColumnReader::expected`]).
    Mistyped,
    /// A valid encoding of a value the type cannot hold.
    OutOfRange,
    /// An integer TIME/TIMESTAMP in an adaptive mode, whose unit is the undeclared source
    /// precision's.
    UnknownUnit(TimePrecision),
}

impl From<NumError> for ValueError {
    fn from(e: NumError) -> ValueError {
        match e {
            NumError::Syntax => ValueError::Mistyped,
            NumError::Range => ValueError::OutOfRange,
        }
    }
}

/// Reusable buffers for values that cannot be used in place.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    text: Vec<u8>,
    bytes: Vec<u8>,
}

impl Scratch {
    /// The buffer for unescaped strings.
    pub(crate) fn text(&mut self) -> &mut Vec<u8> {
        &mut self.text
    }
}

impl ColumnReader {
    /// What this column accepts, naming the encoding, for error messages.
    pub(crate) fn expected(&self) -> String {
        let t = self.data_type;
        let what = match (self.encoding, t) {
            (Encoding::Native, DataType::Boolean) => "true or false",
            (Encoding::Native, DataType::Float | DataType::Double) => {
                "a JSON number or \"NaN\", \"Infinity\", \"-Infinity\""
            }
            (Encoding::Native, DataType::String) => "a JSON string",
            (Encoding::Native, _) => "a JSON integer",
            (Encoding::DecimalFlink, _) => {
                "a JSON number or decimal text in a JSON string (decimal_handling=flink, as \
                 Flink's debezium-json reads it)"
            }
            (Encoding::DecimalPrecise { .. }, _) => {
                "base64 of the unscaled value or {\"scale\": .., \"value\": base64} \
                 (decimal.handling.mode=precise)"
            }
            (Encoding::DecimalString, _) => {
                "decimal text in a JSON string (decimal.handling.mode=string)"
            }
            (Encoding::DecimalDouble, _) => "a JSON number (decimal.handling.mode=double)",
            (Encoding::Base64, _) => "a base64 string (binary.handling.mode=bytes or base64)",
            (Encoding::Hex, _) => "a hex string (binary.handling.mode=hex)",
            (Encoding::EpochDays, _) => "a JSON integer of epoch days (io.debezium.time.Date)",
            (Encoding::Integer(unit), _) => return integer_expected(unit, t),
            (Encoding::UnknownUnit(mode), _) => {
                return format!(
                    "a JSON integer ({}) in a declared source precision",
                    mode.name()
                )
            }
            (Encoding::Text(form), _) => return text_expected(form, t),
            (Encoding::Unlisted, _) => {
                "null or nothing: the message's Connect schema does not list this column, so its \
                 encoding is unknown"
            }
        };
        what.to_string()
    }

    /// Writes the non-null value `raw` (JSON text) as the writer's next column.
    pub(crate) fn write(
        &self,
        raw: &[u8],
        w: &mut RowWriter<'_>,
        scratch: &mut Scratch,
    ) -> Result<(), ValueError> {
        if self.encoding == Encoding::Unlisted {
            return Err(ValueError::Mistyped);
        }
        match self.data_type {
            DataType::Boolean => match raw {
                b"true" => w.boolean(true),
                b"false" => w.boolean(false),
                _ => return Err(ValueError::Mistyped),
            },
            DataType::TinyInt => w.tiny(narrow(parse_i64(raw)?)?),
            DataType::SmallInt => w.small(narrow(parse_i64(raw)?)?),
            DataType::Int => w.int(narrow(parse_i64(raw)?)?),
            DataType::BigInt => w.long(parse_i64(raw)?),
            DataType::Float => w.float(parse_float(raw)?),
            DataType::Double => w.double(parse_float(raw)?),
            DataType::Decimal { precision, scale } => {
                w.decimal(self.decimal(raw, precision, scale, scratch)?)
            }
            DataType::String => {
                w.bytes(json_string(raw, &mut scratch.text).ok_or(ValueError::Mistyped)?)
            }
            DataType::Bytes => w.bytes(self.binary(raw, scratch)?),
            DataType::Date | DataType::Time { .. } => w.int(narrow(self.temporal(raw, scratch)?)?),
            DataType::Timestamp { .. } | DataType::TimestampLtz { .. } => {
                w.long(self.temporal(raw, scratch)?)
            }
        }
        Ok(())
    }

    fn decimal(
        &self,
        raw: &[u8],
        precision: u8,
        scale: u8,
        scratch: &mut Scratch,
    ) -> Result<i128, ValueError> {
        let string = json_string(raw, &mut scratch.text);
        let v = match (self.encoding, string) {
            (Encoding::DecimalFlink | Encoding::DecimalString, Some(text)) => {
                decimal_from_text(text, precision, scale)?
            }
            (Encoding::DecimalFlink | Encoding::DecimalDouble, None) if is_number(raw) => {
                decimal_from_text(raw, precision, scale)?
            }
            (Encoding::DecimalPrecise { .. }, None) if raw.first() == Some(&b'{') => {
                variable_scale_decimal(raw, precision, scale)?
            }
            (Encoding::DecimalPrecise { scale: from }, Some(b64)) => {
                let unscaled = unscaled_from_base64(b64)?;
                check_precision(rescale(unscaled, from, scale)?, precision)?
            }
            _ => return Err(ValueError::Mistyped),
        };
        Ok(v)
    }

    fn binary<'s>(&self, raw: &[u8], scratch: &'s mut Scratch) -> Result<&'s [u8], ValueError> {
        let text = json_string(raw, &mut scratch.text).ok_or(ValueError::Mistyped)?;
        scratch.bytes.clear();
        let decoded = match self.encoding {
            Encoding::Hex => hex(text, &mut scratch.bytes),
            _ => BASE64.decode_vec(text, &mut scratch.bytes).is_ok(),
        };
        if !decoded {
            return Err(ValueError::Mistyped);
        }
        Ok(&scratch.bytes)
    }

    fn temporal(&self, raw: &[u8], scratch: &mut Scratch) -> Result<i64, ValueError> {
        let t = temporal(self.data_type).ok_or(ValueError::Mistyped)?;
        let v = match self.encoding {
            Encoding::EpochDays => epoch_days(raw)?,
            Encoding::Integer(unit) => from_integer(raw, unit, t)?,
            Encoding::UnknownUnit(mode) if is_number(raw) => {
                return Err(ValueError::UnknownUnit(mode))
            }
            Encoding::Text(form) => {
                let text = json_string(raw, &mut scratch.text).ok_or(ValueError::Mistyped)?;
                from_text(text, form, t)?
            }
            _ => return Err(ValueError::Mistyped),
        };
        Ok(v)
    }
}

/// An integer narrowed to a smaller type, or out of range.
fn narrow<T: TryFrom<i64>>(v: i64) -> Result<T, ValueError> {
    T::try_from(v).map_err(|_| ValueError::OutOfRange)
}

/// Whether `raw` is a JSON number (not a string, object, literal).
fn is_number(raw: &[u8]) -> bool {
    matches!(raw.first(), Some(b'-' | b'0'..=b'9'))
}

/// What an integer temporal value of `unit` is, named by its Debezium / Connect schema.
fn integer_expected(unit: Unit, t: DataType) -> String {
    let (what, schema) = match (unit, temporal(t)) {
        (Unit::Millis, Some(Temporal::Time(_))) => {
            ("milliseconds of the day", "io.debezium.time.Time")
        }
        (Unit::Micros, Some(Temporal::Time(_))) => {
            ("microseconds of the day", "io.debezium.time.MicroTime")
        }
        (Unit::Nanos, Some(Temporal::Time(_))) => {
            ("nanoseconds of the day", "io.debezium.time.NanoTime")
        }
        (Unit::Millis, _) => ("epoch milliseconds", "io.debezium.time.Timestamp"),
        (Unit::Micros, _) => ("epoch microseconds", "io.debezium.time.MicroTimestamp"),
        (Unit::Nanos, _) => ("epoch nanoseconds", "io.debezium.time.NanoTimestamp"),
    };
    format!("a JSON integer of {what} ({schema})")
}

/// What a temporal text of `form` looks like for `t`.
fn text_expected(form: TextForm, t: DataType) -> String {
    let shape = match (form, temporal(t)) {
        (TextForm::Flink, Some(Temporal::Date)) => "\"yyyy-MM-dd\"",
        (TextForm::Flink, Some(Temporal::Time(_))) => "\"HH:mm:ss[.fraction]\"",
        (TextForm::Flink, Some(Temporal::Instant(_))) => {
            "\"yyyy-MM-dd HH:mm:ss[.fraction]Z\" or \"yyyy-MM-ddTHH:mm[:ss[.fraction]]Z\" \
             (or an offset for Z)"
        }
        (TextForm::Flink, _) => {
            "\"yyyy-MM-dd HH:mm:ss[.fraction]\" or \"yyyy-MM-ddTHH:mm[:ss[.fraction]]\""
        }
        (TextForm::Iso, Some(Temporal::Date)) => "an ISO date with offset (\"2024-01-31Z\")",
        (TextForm::Iso, Some(Temporal::Time(_))) => {
            "an ISO time with offset (\"10:15:30.123456Z\")"
        }
        (TextForm::Iso, _) => {
            "an ISO date-time with offset (\"2024-01-31T10:15:30.123456Z\", \
             io.debezium.time.ZonedTimestamp or IsoTimestamp)"
        }
    };
    let setting = match form {
        TextForm::Flink => "time_precision=flink, as Flink's debezium-json reads it",
        TextForm::Iso => "Debezium's ISO text",
    };
    format!("a JSON string {shape} ({setting})")
}

/// The content of a JSON string, unescaped if needed; `None` if `raw` is not a valid string.
pub(crate) fn json_string<'a>(raw: &'a [u8], scratch: &'a mut Vec<u8>) -> Option<&'a [u8]> {
    unescape(string_body(raw)?, scratch).ok()
}

/// Decodes hex digits (either case) into `out`; false if `text` is not hex.
fn hex(text: &[u8], out: &mut Vec<u8>) -> bool {
    if !text.len().is_multiple_of(2) {
        return false;
    }
    let digit = |b: u8| (b as char).to_digit(16);
    for pair in text.chunks_exact(2) {
        match (digit(pair[0]), digit(pair[1])) {
            (Some(h), Some(l)) => out.push((h * 16 + l) as u8),
            _ => return false,
        }
    }
    true
}

/// Debezium's `VariableScaleDecimal` (`decimal.handling.mode=precise` for columns without a fixed
/// scale): `{"scale": 2, "value": "<base64 unscaled>"}`, rescaled to the declared scale.
#[derive(Deserialize)]
struct VariableScale<'a> {
    scale: i64,
    #[serde(borrow)]
    value: Cow<'a, str>,
}

fn variable_scale_decimal(raw: &[u8], precision: u8, scale: u8) -> Result<i128, NumError> {
    let vs: VariableScale<'_> = serde_json::from_slice(raw).map_err(|_| NumError::Syntax)?;
    let unscaled = unscaled_from_base64(vs.value.as_bytes())?;
    check_precision(rescale(unscaled, vs.scale, scale)?, precision)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::Settings;
    use crate::encoding::{BinaryHandling, DecimalHandling};
    use cdcjoin_model::{Field, RowLayout, RowRef, Schema, Value};

    fn reader_with(t: &str, encoding: Encoding) -> ColumnReader {
        ColumnReader {
            data_type: t.parse().unwrap(),
            encoding,
        }
    }

    /// The reader under the default settings.
    fn reader(t: &str) -> ColumnReader {
        let data_type: DataType = t.parse().unwrap();
        let encoding = Settings::default().encoding(data_type, None);
        ColumnReader {
            data_type,
            encoding,
        }
    }

    fn read_with(r: ColumnReader, raw: &str) -> Result<Value, ValueError> {
        let layout = RowLayout::new(&Schema::new(vec![Field::new("c", r.data_type)]));
        let mut buf = Vec::new();
        let mut w = RowWriter::new(&layout, &mut buf);
        r.write(raw.as_bytes(), &mut w, &mut Scratch::default())?;
        w.finish();
        Ok(Value::read(&RowRef::new(&layout, &buf), 0))
    }

    fn read(t: &str, raw: &str) -> Result<Value, ValueError> {
        read_with(reader(t), raw)
    }

    const MISTYPED: Result<Value, ValueError> = Err(ValueError::Mistyped);
    const RANGE: Result<Value, ValueError> = Err(ValueError::OutOfRange);

    #[test]
    fn booleans_and_integers() {
        assert_eq!(read("BOOLEAN", "true"), Ok(Value::Bool(true)));
        assert_eq!(read("BOOLEAN", "false"), Ok(Value::Bool(false)));
        assert_eq!(read("BOOLEAN", "1"), MISTYPED);
        assert_eq!(read("TINYINT", "-128"), Ok(Value::TinyInt(-128)));
        assert_eq!(read("TINYINT", "128"), RANGE);
        assert_eq!(read("SMALLINT", "32767"), Ok(Value::SmallInt(32_767)));
        assert_eq!(read("SMALLINT", "-32769"), RANGE);
        assert_eq!(read("SMALLINT", "\"1\""), MISTYPED);
        assert_eq!(read("INT", "-2147483648"), Ok(Value::Int(i32::MIN)));
        assert_eq!(read("INT", "2147483648"), RANGE);
        assert_eq!(read("INT", "1.5"), MISTYPED);
        assert_eq!(read("INT", "\"1\""), MISTYPED);
        assert_eq!(
            read("BIGINT", "-9007199254740993"),
            Ok(Value::BigInt(-9007199254740993))
        );
        // Postgres interval as io.debezium.time.MicroDuration.
        assert_eq!(
            read("BIGINT", "93784000005"),
            Ok(Value::BigInt(93_784_000_005))
        );
        assert_eq!(read("BIGINT", "18446744073709551616"), RANGE);
    }

    #[test]
    fn floats() {
        assert_eq!(read("DOUBLE", "2.5e-3"), Ok(Value::Double(0.0025)));
        assert_eq!(read("FLOAT", "0.1"), Ok(Value::Float(0.1)));
        assert_eq!(read("DOUBLE", "7"), Ok(Value::Double(7.0)));
        assert!(matches!(read("DOUBLE", "\"NaN\""), Ok(Value::Double(v)) if v.is_nan()));
        assert_eq!(
            read("FLOAT", "\"-Infinity\""),
            Ok(Value::Float(f32::NEG_INFINITY))
        );
        assert_eq!(read("FLOAT", "1e40"), RANGE);
        assert_eq!(read("DOUBLE", "\"1.5\""), MISTYPED);
    }

    fn decimal_mode(t: &str, mode: DecimalHandling) -> ColumnReader {
        let data_type: DataType = t.parse().unwrap();
        let settings = Settings {
            decimal: Some(mode),
            ..Settings::default()
        };
        ColumnReader {
            data_type,
            encoding: settings.encoding(data_type, None),
        }
    }

    #[test]
    fn decimals_in_every_mode() {
        let dec = |v| Ok(Value::Decimal(v, 2));
        let t = "DECIMAL(10, 2)";
        let [flink, precise, string, double] = [
            DecimalHandling::Flink,
            DecimalHandling::Precise,
            DecimalHandling::String,
            DecimalHandling::Double,
        ]
        .map(|m| decimal_mode(t, m));
        // flink (the default): numbers and decimal strings, never base64.
        assert_eq!(read_with(flink, "12.345"), dec(1235));
        assert_eq!(read_with(flink, "\"12.34\""), dec(1234));
        assert_eq!(
            read_with(flink, "\"1000\""),
            dec(100_000),
            "issue 11: not base64"
        );
        assert_eq!(read_with(flink, "\"BNI=\""), MISTYPED);
        // precise: base64 of the unscaled value (1234 = 0x04d2, -1234 = 0xfb2e), or an object.
        assert_eq!(read_with(precise, "\"BNI=\""), dec(1234));
        assert_eq!(read_with(precise, "\"+y4=\""), dec(-1234));
        assert_eq!(read_with(precise, "\"BN\\u0049=\""), dec(1234), "escaped");
        assert_eq!(
            read_with(precise, r#"{"scale":3,"value":"MDk="}"#),
            dec(1235)
        );
        assert_eq!(read_with(precise, "12.34"), MISTYPED);
        assert_eq!(read_with(precise, "\"12.5\""), MISTYPED);
        let scale3 = reader_with(t, Encoding::DecimalPrecise { scale: 3 });
        assert_eq!(read_with(scale3, "\"MDk=\""), dec(1235), "source scale 3");
        // string: decimal text in a string only; "1000" is 1000.
        assert_eq!(read_with(string, "\"1000\""), dec(100_000));
        assert_eq!(read_with(string, "\"-5\""), dec(-500));
        assert_eq!(read_with(string, "12.34"), MISTYPED);
        // double: a number only, rounded HALF_UP from its text.
        assert_eq!(read_with(double, "12.345"), dec(1235));
        assert_eq!(read_with(double, "-0.1"), dec(-10));
        assert_eq!(read_with(double, "1.0E2"), dec(10_000));
        assert_eq!(read_with(double, "\"12.34\""), MISTYPED);
        // precision
        assert_eq!(read_with(flink, "123456789.01"), RANGE);
        assert_eq!(
            read_with(
                decimal_mode("DECIMAL(3, 0)", DecimalHandling::Precise),
                "\"A+g=\""
            ),
            RANGE
        ); // 1000
        for bad in ["\"12,5\"", "true", "\"\"", r#"{"scale":1}"#, "[1]"] {
            assert_eq!(read_with(flink, bad), MISTYPED, "{bad}");
            assert_eq!(read_with(precise, bad), MISTYPED, "{bad}");
        }
        let big = "DECIMAL(38, 4)";
        assert_eq!(
            read(big, "\"1234567890123456789012345678901234.5678\""),
            Ok(Value::Decimal(12345678901234567890123456789012345678, 4))
        );
        // Postgres money in precise mode: Decimal with scale 2.
        assert_eq!(read_with(precise, "\"AMg=\""), dec(200));
    }

    #[test]
    fn expected_names_the_mode() {
        let t = "DECIMAL(10, 2)";
        let e = decimal_mode(t, DecimalHandling::String).expected();
        assert!(e.contains("decimal.handling.mode=string"), "{e}");
        let e = reader_with("TIMESTAMP(3)", Encoding::Integer(Unit::Micros)).expected();
        assert!(e.contains("io.debezium.time.MicroTimestamp"), "{e}");
        let e = reader("TIMESTAMP(3)").expected();
        assert!(e.contains("time_precision=flink"), "{e}");
        let e = reader_with("BYTES", Encoding::Hex).expected();
        assert!(e.contains("binary.handling.mode=hex"), "{e}");
    }

    #[test]
    fn strings_and_bytes() {
        assert_eq!(
            read("STRING", "\"héllo\""),
            Ok(Value::String("héllo".into()))
        );
        assert_eq!(
            read("STRING", r#""a\"b\n\u00e9""#),
            Ok(Value::String("a\"b\né".into()))
        );
        // Postgres uuid, jsonb and enum values are strings.
        for v in [
            "\"0e1f2d3c-4b5a-6978-8796-a5b4c3d2e1f0\"",
            r#""{\"a\": [1, 2]}""#,
            "\"happy\"",
        ] {
            assert!(matches!(read("STRING", v), Ok(Value::String(_))), "{v}");
        }
        assert_eq!(read("STRING", "42"), MISTYPED);
        assert_eq!(read("STRING", r#""\ud800""#), MISTYPED);
        let bin = |m| {
            let settings = Settings {
                binary: Some(m),
                ..Settings::default()
            };
            ColumnReader {
                data_type: DataType::Bytes,
                encoding: settings.encoding(DataType::Bytes, None),
            }
        };
        let bytes = |v: &[u8]| Ok(Value::Bytes(v.to_vec()));
        for mode in [BinaryHandling::Bytes, BinaryHandling::Base64] {
            assert_eq!(read_with(bin(mode), "\"AQL/\""), bytes(&[1, 2, 255]));
            assert_eq!(read_with(bin(mode), "\"AQL\\/\""), bytes(&[1, 2, 255]));
            assert_eq!(read_with(bin(mode), "\"\""), bytes(&[]));
            assert_eq!(
                read_with(bin(mode), "\"0102ff\""),
                MISTYPED,
                "hex in base64"
            );
            assert_eq!(read_with(bin(mode), "[1]"), MISTYPED);
        }
        let hex = bin(BinaryHandling::Hex);
        assert_eq!(read_with(hex, "\"0102fF\""), bytes(&[1, 2, 255]));
        assert_eq!(read_with(hex, "\"AQL/\""), MISTYPED, "base64 in hex");
        assert_eq!(read_with(hex, "\"012\""), MISTYPED);
    }

    #[test]
    fn temporal_values_follow_their_encoding() {
        let flink = |t: &str| reader(t);
        let int = |t: &str, u| reader_with(t, Encoding::Integer(u));
        let iso = |t: &str| reader_with(t, Encoding::Text(TextForm::Iso));
        let days = reader_with("DATE", Encoding::EpochDays);
        let ts = |v, p| Ok(Value::Timestamp(v, p));
        assert_eq!(
            read_with(flink("DATE"), "\"2024-01-31\""),
            Ok(Value::Date(19_753))
        );
        assert_eq!(read_with(flink("DATE"), "19753"), MISTYPED);
        assert_eq!(read_with(days, "19753"), Ok(Value::Date(19_753)));
        assert_eq!(read_with(days, "\"2024-01-31\""), MISTYPED);
        assert_eq!(
            read_with(iso("DATE"), "\"2024-01-31Z\""),
            Ok(Value::Date(19_753))
        );
        assert_eq!(
            read_with(flink("TIME(3)"), "\"10:15:30.123\""),
            Ok(Value::Time(36_930_000))
        );
        assert_eq!(
            read_with(int("TIME(3)", Unit::Micros), "36930123456"),
            Ok(Value::Time(36_930_123))
        );
        // Issue 11: a TIMESTAMP(3) with 6 digits keeps 3.
        assert_eq!(
            read_with(flink("TIMESTAMP(3)"), "\"2024-01-31 10:15:30.123456\""),
            ts(1_706_696_130_123_000, 3)
        );
        assert_eq!(read_with(flink("TIMESTAMP(3)"), "1706696130123"), MISTYPED);
        assert_eq!(
            read_with(int("TIMESTAMP(3)", Unit::Micros), "1706696130123456"),
            ts(1_706_696_130_123_000, 3)
        );
        assert_eq!(
            read_with(int("TIMESTAMP(9)", Unit::Nanos), "9223372036854775806"),
            ts(i64::MAX - 1, 9)
        );
        // Postgres' `infinity` in nanoseconds mode.
        assert_eq!(
            read_with(int("TIMESTAMP(9)", Unit::Nanos), "9223372036854775807"),
            Err(ValueError::OutOfRange)
        );
        assert_eq!(
            read_with(int("TIMESTAMP(3)", Unit::Nanos), "true"),
            MISTYPED
        );
        assert_eq!(
            read_with(iso("TIMESTAMP_LTZ(6)"), "\"2024-01-31T11:15:30.5+01:00\""),
            Ok(Value::TimestampLtz(1_706_696_130_500_000, 6))
        );
        assert_eq!(
            read_with(iso("TIMESTAMP_LTZ(6)"), "1706696130500"),
            MISTYPED
        );
        let unknown = reader_with(
            "TIMESTAMP(3)",
            Encoding::UnknownUnit(TimePrecision::Adaptive),
        );
        assert_eq!(
            read_with(unknown, "1706696130123456"),
            Err(ValueError::UnknownUnit(TimePrecision::Adaptive))
        );
        assert_eq!(read_with(unknown, "\"x\""), MISTYPED);
    }
}
