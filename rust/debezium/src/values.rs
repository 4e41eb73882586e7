//! One column value: from its raw JSON text to its slot in the row.
//!
//! Each column arrives as the exact JSON text serde_json validated, and is read according to the
//! *declared* type, accepting every encoding Debezium's JSON converter produces for it (see the
//! crate docs for the table). Nothing here allocates: strings are used in place or unescaped into
//! a reused scratch buffer, base64 is decoded onto the stack or into a reused buffer.

use crate::numbers::{
    check_precision, decimal_from_text, looks_like_base64, parse_float, parse_i64, rescale,
    unscaled_from_base64, NumError, BASE64,
};
use crate::temporal::{date, timestamp, TimestampUnit};
use crate::text::{string_body, unescape};
use base64::Engine as _;
use cdcjoin_model::{DataType, RowWriter};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// How a DECIMAL sent as a JSON *string* is read. (Numbers and `{"scale", "value"}` objects are
/// unambiguous.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DecimalStrings {
    /// Base64 (Debezium's default `decimal.handling.mode=precise`) when the string looks like
    /// base64 (a multiple of 4 long, only base64 characters), decimal text otherwise. `"12.34"` and
    /// `"-5"` read as text, `"BNI="` as base64; note that an all-digit string whose length is a
    /// multiple of 4 (`"1000"`) reads as base64: set [`DecimalStrings::Text`] for connectors in
    /// `string` mode.
    #[default]
    Auto,
    /// Always base64 of the unscaled value (`decimal.handling.mode=precise`).
    Base64,
    /// Always decimal text (`decimal.handling.mode=string`).
    Text,
}

/// How to read one column: its declared type plus the options that apply to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ColumnReader {
    pub(crate) data_type: DataType,
    pub(crate) timestamp_unit: TimestampUnit,
    pub(crate) decimal_strings: DecimalStrings,
}

/// Why a value does not fit its column.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ValueError {
    /// The JSON is not an encoding of the declared type; holds what would have been accepted.
    Mistyped(&'static str),
    /// A valid encoding of a value the type cannot hold.
    OutOfRange,
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
    /// What this column accepts, for error messages.
    pub(crate) fn expected(&self) -> &'static str {
        match self.data_type {
            DataType::Boolean => "true or false",
            DataType::Int | DataType::BigInt => "a JSON integer",
            DataType::Float | DataType::Double => {
                "a JSON number or \"NaN\", \"Infinity\", \"-Infinity\""
            }
            DataType::Decimal { .. } => {
                "a JSON number, a decimal string, base64 of the unscaled value or \
                 {\"scale\": .., \"value\": base64}"
            }
            DataType::String => "a JSON string",
            DataType::Bytes => "a base64 string",
            DataType::Date => "an integer of epoch days or a \"YYYY-MM-DD\" string",
            DataType::Timestamp { .. } => {
                "an integer epoch timestamp or a \"YYYY-MM-DDTHH:MM:SS[.fraction]\" string"
            }
        }
    }

    /// Writes the non-null value `raw` (JSON text) as the writer's next column.
    pub(crate) fn write(
        &self,
        raw: &[u8],
        w: &mut RowWriter<'_>,
        scratch: &mut Scratch,
    ) -> Result<(), ValueError> {
        let mistyped = ValueError::Mistyped(self.expected());
        let num = |e: NumError| match e {
            NumError::Syntax => ValueError::Mistyped(self.expected()),
            NumError::Range => ValueError::OutOfRange,
        };
        match self.data_type {
            DataType::Boolean => match raw {
                b"true" => w.boolean(true),
                b"false" => w.boolean(false),
                _ => return Err(mistyped),
            },
            DataType::Int => {
                let v = parse_i64(raw).map_err(num)?;
                w.int(i32::try_from(v).map_err(|_| ValueError::OutOfRange)?);
            }
            DataType::BigInt => w.long(parse_i64(raw).map_err(num)?),
            DataType::Float => w.float(parse_float(raw).map_err(num)?),
            DataType::Double => w.double(parse_float(raw).map_err(num)?),
            DataType::Decimal { precision, scale } => {
                w.decimal(self.decimal(raw, precision, scale, scratch).map_err(num)?)
            }
            DataType::String => w.bytes(json_string(raw, &mut scratch.text).ok_or(mistyped)?),
            DataType::Bytes => {
                let b64 = json_string(raw, &mut scratch.text).ok_or(mistyped)?;
                scratch.bytes.clear();
                BASE64
                    .decode_vec(b64, &mut scratch.bytes)
                    .map_err(|_| ValueError::Mistyped(self.expected()))?;
                w.bytes(&scratch.bytes);
            }
            DataType::Date => w.int(date(raw).map_err(num)?),
            DataType::Timestamp { precision } => {
                w.long(timestamp(raw, precision, self.timestamp_unit).map_err(num)?)
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
    ) -> Result<i128, NumError> {
        match raw.first() {
            Some(b'"') => {
                let s = json_string(raw, &mut scratch.text).ok_or(NumError::Syntax)?;
                let base64 = match self.decimal_strings {
                    DecimalStrings::Auto => looks_like_base64(s),
                    DecimalStrings::Base64 => true,
                    DecimalStrings::Text => false,
                };
                if base64 {
                    check_precision(unscaled_from_base64(s)?, precision)
                } else {
                    decimal_from_text(s, precision, scale)
                }
            }
            Some(b'{') => variable_scale_decimal(raw, precision, scale),
            _ => decimal_from_text(raw, precision, scale),
        }
    }
}

/// The content of a JSON string, unescaped if needed; `None` if `raw` is not a valid string.
fn json_string<'a>(raw: &'a [u8], scratch: &'a mut Vec<u8>) -> Option<&'a [u8]> {
    unescape(string_body(raw)?, scratch).ok()
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
    use cdcjoin_model::{Field, RowLayout, RowRef, Schema, Value};

    fn reader(t: &str) -> ColumnReader {
        let data_type: DataType = t.parse().unwrap();
        let timestamp_unit = match data_type {
            DataType::Timestamp { precision } => TimestampUnit::default_for(precision),
            _ => TimestampUnit::Millis,
        };
        ColumnReader {
            data_type,
            timestamp_unit,
            decimal_strings: DecimalStrings::Auto,
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

    fn mistyped(t: &str) -> Result<Value, ValueError> {
        Err(ValueError::Mistyped(reader(t).expected()))
    }

    #[test]
    fn booleans_and_integers() {
        assert_eq!(read("BOOLEAN", "true"), Ok(Value::Bool(true)));
        assert_eq!(read("BOOLEAN", "false"), Ok(Value::Bool(false)));
        assert_eq!(read("BOOLEAN", "1"), mistyped("BOOLEAN"));
        assert_eq!(read("INT", "-2147483648"), Ok(Value::Int(i32::MIN)));
        assert_eq!(read("INT", "2147483648"), Err(ValueError::OutOfRange));
        assert_eq!(read("INT", "1.5"), mistyped("INT"));
        assert_eq!(read("INT", "\"1\""), mistyped("INT"));
        assert_eq!(
            read("BIGINT", "-9007199254740993"),
            Ok(Value::BigInt(-9007199254740993))
        );
        assert_eq!(
            read("BIGINT", "18446744073709551616"),
            Err(ValueError::OutOfRange)
        );
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
        assert_eq!(
            read("DOUBLE", "\"Infinity\""),
            Ok(Value::Double(f64::INFINITY))
        );
        assert_eq!(read("FLOAT", "1e40"), Err(ValueError::OutOfRange));
        assert_eq!(read("DOUBLE", "\"1.5\""), mistyped("DOUBLE"));
    }

    #[test]
    fn decimals_in_every_debezium_mode() {
        let dec = |v| Ok(Value::Decimal(v, 2));
        let t = "DECIMAL(10, 2)";
        // precise: base64 of the unscaled value (1234 = 0x04d2, -1234 = 0xfb2e)
        assert_eq!(read(t, "\"BNI=\""), dec(1234));
        assert_eq!(read(t, "\"+y4=\""), dec(-1234));
        assert_eq!(read(t, "\"BN\\u0049=\""), dec(1234), "escaped");
        // double: a JSON number, rounded from its text
        assert_eq!(read(t, "12.34"), dec(1234));
        assert_eq!(read(t, "12.345"), dec(1235));
        assert_eq!(read(t, "-0.1"), dec(-10));
        assert_eq!(read(t, "3"), dec(300));
        // string
        assert_eq!(read(t, "\"12.34\""), dec(1234));
        assert_eq!(read(t, "\"-5\""), dec(-500));
        // VariableScaleDecimal: 12345 at scale 3 -> 12.35 (0x3039)
        assert_eq!(read(t, r#"{"scale":3,"value":"MDk="}"#), dec(1235));
        assert_eq!(
            read(t, r#"{"value":"MDk=","scale":1,"extra":0}"#),
            dec(123450)
        );
        // precision
        assert_eq!(read(t, "123456789.01"), Err(ValueError::OutOfRange));
        assert_eq!(
            read("DECIMAL(3, 0)", "\"A+g=\""),
            Err(ValueError::OutOfRange)
        ); // 1000
        assert_eq!(
            read(t, r#"{"scale":0,"value":"AQAAAAAAAAAAAAAAAAAAAAAA"}"#),
            Err(ValueError::OutOfRange)
        );
        // not decimals
        for bad in [
            "\"12,5\"",
            "true",
            "\"\"",
            r#"{"scale":"x","value":"AQ=="}"#,
            r#"{"scale":1}"#,
            "[1]",
        ] {
            assert_eq!(read(t, bad), mistyped(t), "{bad}");
        }
        let big = "DECIMAL(38, 4)";
        assert_eq!(
            read(big, "\"1234567890123456789012345678901234.5678\""),
            Ok(Value::Decimal(12345678901234567890123456789012345678, 4))
        );
    }

    #[test]
    fn decimal_string_modes() {
        let mut r = reader("DECIMAL(10, 0)");
        // Auto: an all-digit string of length 4k is base64 (0xd74d34, negative).
        assert_eq!(read_with(r, "\"1000\""), Ok(Value::Decimal(-2_667_212, 0)));
        r.decimal_strings = DecimalStrings::Text;
        assert_eq!(read_with(r, "\"1000\""), Ok(Value::Decimal(1000, 0)));
        assert_eq!(
            read_with(r, "\"BNI=\""),
            Err(ValueError::Mistyped(r.expected()))
        );
        r.decimal_strings = DecimalStrings::Base64;
        assert_eq!(read_with(r, "\"BNI=\""), Ok(Value::Decimal(1234, 0)));
        assert_eq!(
            read_with(r, "\"12.5\""),
            Err(ValueError::Mistyped(r.expected()))
        );
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
        assert_eq!(read("STRING", "\"\""), Ok(Value::String(String::new())));
        assert_eq!(read("STRING", "42"), mistyped("STRING"));
        assert_eq!(read("STRING", r#""\ud800""#), mistyped("STRING"));
        assert_eq!(read("BYTES", "\"AQL/\""), Ok(Value::Bytes(vec![1, 2, 255])));
        assert_eq!(
            read("BYTES", "\"AQL\\/\""),
            Ok(Value::Bytes(vec![1, 2, 255]))
        );
        assert_eq!(read("BYTES", "\"\""), Ok(Value::Bytes(vec![])));
        assert_eq!(read("BYTES", "\"!!\""), mistyped("BYTES"));
        assert_eq!(read("BYTES", "[1]"), mistyped("BYTES"));
    }

    #[test]
    fn dates_and_timestamps() {
        assert_eq!(read("DATE", "19753"), Ok(Value::Date(19_753)));
        assert_eq!(read("DATE", "\"2024-01-31\""), Ok(Value::Date(19_753)));
        assert_eq!(read("DATE", "\"31/01/2024\""), mistyped("DATE"));
        assert_eq!(read("DATE", "99999999999"), Err(ValueError::OutOfRange));
        let ts = |v, p| Ok(Value::Timestamp(v, p));
        assert_eq!(
            read("TIMESTAMP(3)", "1706696130123"),
            ts(1_706_696_130_123_000, 3)
        );
        assert_eq!(
            read("TIMESTAMP(6)", "1706696130123456"),
            ts(1_706_696_130_123_456, 6)
        );
        assert_eq!(
            read("TIMESTAMP(9)", "1706696130123456789"),
            ts(1_706_696_130_123_456_789, 9)
        );
        assert_eq!(
            read("TIMESTAMP(6)", "\"2024-01-31T10:15:30.123456\""),
            ts(1_706_696_130_123_456, 6)
        );
        let mut micros3 = reader("TIMESTAMP(3)");
        micros3.timestamp_unit = TimestampUnit::Micros;
        assert_eq!(
            read_with(micros3, "1706696130123456"),
            ts(1_706_696_130_123_456, 3)
        );
        assert_eq!(read("TIMESTAMP(9)", "9223372036854775807"), ts(i64::MAX, 9));
        assert_eq!(
            read("TIMESTAMP(3)", "9223372036854775807"),
            Err(ValueError::OutOfRange)
        );
        assert_eq!(read("TIMESTAMP(3)", "true"), mistyped("TIMESTAMP(3)"));
    }
}
