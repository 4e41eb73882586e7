//! How each column's JSON is encoded: the declared connector settings, and what they mean for
//! one column.
//!
//! Debezium's JSON does not say how a value is encoded: `"1000"` is a decimal in
//! `decimal.handling.mode=string` and base64 of `0xd74d34` in `precise`; `1706696130123456` is a
//! TIMESTAMP in micros or millis depending on the source column's precision. So the encoding is
//! declared, per side, with the connector's own settings ([`DecimalHandling`], [`TimePrecision`],
//! [`BinaryHandling`], plus the source precision of columns whose unit depends on it), and
//! resolved once per column into an [`Encoding`] the value reader follows. Nothing is inferred
//! from a value. (Schema-wrapped messages carry the encoding in their Connect schema: see the
//! `connect` module.)

use crate::temporal::{Temporal, TextForm, Unit};
use cdcjoin_model::DataType;
use serde::{Deserialize, Serialize};

/// How DECIMAL columns are encoded (the connector's `decimal.handling.mode`, or Flink's reading).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecimalHandling {
    /// What Flink's `debezium-json` reads: a JSON number, or decimal text in a JSON string.
    #[default]
    Flink,
    /// `precise`: base64 of the big-endian two's-complement unscaled value at the declared scale,
    /// or `{"scale": s, "value": base64}` (`VariableScaleDecimal`).
    Precise,
    /// `string`: decimal text in a JSON string only.
    String,
    /// `double`: a JSON number only.
    Double,
}

/// How temporal columns are encoded (the connector's `time.precision.mode`, or Flink's reading).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimePrecision {
    /// Strings as Flink's `debezium-json` reads them (see the `temporal` module).
    #[default]
    Flink,
    /// `adaptive`: DATE as epoch days; TIME and TIMESTAMP as integers in millis, micros or nanos
    /// as the *source* column's precision is <= 3, <= 6 or more (declare it in
    /// `source_precision`); TIMESTAMP_LTZ as `ZonedTimestamp` text.
    Adaptive,
    /// `adaptive_time_microseconds`: as `adaptive`, but TIME always in micros.
    AdaptiveTimeMicroseconds,
    /// `connect`: DATE as epoch days, TIME and TIMESTAMP in millis (Kafka Connect's types);
    /// TIMESTAMP_LTZ as `ZonedTimestamp` text.
    Connect,
    /// `isostring`: ISO-8601 strings with an offset (`IsoDate`, `IsoTime`, `IsoTimestamp`,
    /// `ZonedTimestamp`).
    Isostring,
    /// `microseconds`: DATE as epoch days, TIME and TIMESTAMP in micros (`MicroTime`,
    /// `MicroTimestamp`); TIMESTAMP_LTZ as `ZonedTimestamp` text.
    Microseconds,
    /// `nanoseconds`: as `microseconds`, in nanos (`NanoTime`, `NanoTimestamp`).
    Nanoseconds,
}

/// How BYTES columns are encoded (the connector's `binary.handling.mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BinaryHandling {
    /// `bytes`: Connect BYTES, which Kafka Connect's JsonConverter writes as base64.
    #[default]
    Bytes,
    /// `base64`: a base64 string.
    Base64,
    /// `hex`: a hex string.
    Hex,
}

impl TimePrecision {
    /// The setting's name in messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            TimePrecision::Flink => "time_precision=flink",
            TimePrecision::Adaptive => "time.precision.mode=adaptive",
            TimePrecision::AdaptiveTimeMicroseconds => {
                "time.precision.mode=adaptive_time_microseconds"
            }
            TimePrecision::Connect => "time.precision.mode=connect",
            TimePrecision::Isostring => "time.precision.mode=isostring",
            TimePrecision::Microseconds => "time.precision.mode=microseconds",
            TimePrecision::Nanoseconds => "time.precision.mode=nanoseconds",
        }
    }
}

/// How one column's non-null JSON value is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Encoding {
    /// The type's only JSON form (BOOLEAN, integers, floats, STRING).
    Native,
    /// DECIMAL as Flink reads it: a JSON number or decimal text in a string.
    DecimalFlink,
    /// DECIMAL as base64 of the unscaled value at this scale, or a `VariableScaleDecimal` object.
    DecimalPrecise {
        /// The scale of the unscaled value (the source column's).
        scale: i64,
    },
    /// DECIMAL as decimal text in a JSON string.
    DecimalString,
    /// DECIMAL as a JSON number.
    DecimalDouble,
    /// A DATE as an integer of epoch days.
    EpochDays,
    /// A TIME or TIMESTAMP as an integer count of this unit.
    Integer(Unit),
    /// An integer TIME or TIMESTAMP in `adaptive` mode whose source precision was not declared:
    /// its unit is unknown, so any integer is an error (nulls and absent values are fine).
    UnknownUnit(TimePrecision),
    /// A temporal value as text of this form.
    Text(TextForm),
    /// BYTES as a base64 string.
    Base64,
    /// BYTES as a hex string.
    Hex,
    /// A column the message's Connect schema does not list: its encoding is unknown, so any value
    /// is an error (nulls and absent values are fine).
    Unlisted,
}

/// The declared settings of one side, as far as they decide column encodings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Settings {
    pub(crate) decimal: Option<DecimalHandling>,
    pub(crate) time: Option<TimePrecision>,
    pub(crate) binary: Option<BinaryHandling>,
}

impl Settings {
    /// The encoding of a column of type `t` (source precision `source`, if declared) under these
    /// settings, undeclared ones at their defaults.
    pub(crate) fn encoding(&self, t: DataType, source: Option<u8>) -> Encoding {
        let decimal = self.decimal.unwrap_or_default();
        let time = self.time.unwrap_or_default();
        let binary = self.binary.unwrap_or_default();
        match t {
            DataType::Decimal { scale, .. } => decimal_encoding(decimal, scale),
            DataType::Bytes => binary_encoding(binary),
            _ => match temporal(t) {
                Some(tt) => temporal_encoding(time, tt, source),
                None => Encoding::Native,
            },
        }
    }

    /// The encoding the *declared* setting for type `t` gives (used to check a Connect schema
    /// against it); `None` when that setting is not declared.
    pub(crate) fn declared_encoding(&self, t: DataType, source: Option<u8>) -> Option<Encoding> {
        let declared = match t {
            DataType::Decimal { .. } => self.decimal.is_some(),
            DataType::Bytes => self.binary.is_some(),
            _ => temporal(t).is_none() || self.time.is_some(),
        };
        declared.then(|| self.encoding(t, source))
    }
}

fn decimal_encoding(mode: DecimalHandling, scale: u8) -> Encoding {
    match mode {
        DecimalHandling::Flink => Encoding::DecimalFlink,
        DecimalHandling::Precise => Encoding::DecimalPrecise {
            scale: scale as i64,
        },
        DecimalHandling::String => Encoding::DecimalString,
        DecimalHandling::Double => Encoding::DecimalDouble,
    }
}

fn binary_encoding(mode: BinaryHandling) -> Encoding {
    match mode {
        BinaryHandling::Bytes | BinaryHandling::Base64 => Encoding::Base64,
        BinaryHandling::Hex => Encoding::Hex,
    }
}

/// The temporal view of a declared type, if it is one.
pub(crate) fn temporal(t: DataType) -> Option<Temporal> {
    match t {
        DataType::Date => Some(Temporal::Date),
        DataType::Time { precision } => Some(Temporal::Time(precision)),
        DataType::Timestamp { precision } => Some(Temporal::Timestamp(precision)),
        DataType::TimestampLtz { precision } => Some(Temporal::Instant(precision)),
        _ => None,
    }
}

fn temporal_encoding(mode: TimePrecision, t: Temporal, source: Option<u8>) -> Encoding {
    let adaptive = |source: Option<u8>| match source {
        Some(p) => Encoding::Integer(Unit::adaptive(p)),
        None => Encoding::UnknownUnit(mode),
    };
    match (mode, t) {
        (TimePrecision::Flink, _) => Encoding::Text(TextForm::Flink),
        (TimePrecision::Isostring, _) | (_, Temporal::Instant(_)) => Encoding::Text(TextForm::Iso),
        (_, Temporal::Date) => Encoding::EpochDays,
        (TimePrecision::Connect, _) => Encoding::Integer(Unit::Millis),
        (TimePrecision::Microseconds, _) => Encoding::Integer(Unit::Micros),
        (TimePrecision::Nanoseconds, _) => Encoding::Integer(Unit::Nanos),
        (TimePrecision::AdaptiveTimeMicroseconds, Temporal::Time(_)) => {
            Encoding::Integer(Unit::Micros)
        }
        (TimePrecision::Adaptive | TimePrecision::AdaptiveTimeMicroseconds, _) => adaptive(source),
    }
}

/// Whether a value encoded as `actual` (a Connect schema's word) is what the declared `declared`
/// encoding reads.
pub(crate) fn agrees(declared: Encoding, actual: Encoding) -> bool {
    match (declared, actual) {
        (Encoding::DecimalFlink, Encoding::DecimalString | Encoding::DecimalDouble) => true,
        (Encoding::DecimalPrecise { .. }, Encoding::DecimalPrecise { .. }) => true,
        (Encoding::UnknownUnit(_), Encoding::Integer(_)) => true,
        _ => declared == actual,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DataType {
        s.parse().unwrap()
    }

    fn enc(s: Settings, t: &str, source: Option<u8>) -> Encoding {
        s.encoding(t.parse().unwrap(), source)
    }

    #[test]
    fn defaults_read_what_flink_reads() {
        let s = Settings::default();
        assert_eq!(enc(s, "DECIMAL(10, 2)", None), Encoding::DecimalFlink);
        assert_eq!(
            enc(s, "TIMESTAMP(3)", None),
            Encoding::Text(TextForm::Flink)
        );
        assert_eq!(enc(s, "BYTES", None), Encoding::Base64);
        assert_eq!(enc(s, "INT", None), Encoding::Native);
        assert_eq!(s.declared_encoding(DataType::Date, None), None);
        assert_eq!(
            s.declared_encoding(DataType::Int, None),
            Some(Encoding::Native)
        );
        let hex = Settings {
            binary: Some(BinaryHandling::Hex),
            ..s
        };
        assert_eq!(
            hex.declared_encoding(DataType::Bytes, None),
            Some(Encoding::Hex)
        );
        assert_eq!(hex.declared_encoding(t("DECIMAL(5, 1)"), None), None);
    }

    #[test]
    fn temporal_modes() {
        let mode = |m| Settings {
            time: Some(m),
            ..Settings::default()
        };
        let a = mode(TimePrecision::Adaptive);
        assert_eq!(enc(a, "DATE", None), Encoding::EpochDays);
        assert_eq!(
            enc(a, "TIMESTAMP(3)", None),
            Encoding::UnknownUnit(TimePrecision::Adaptive)
        );
        assert_eq!(
            enc(a, "TIMESTAMP(3)", Some(6)),
            Encoding::Integer(Unit::Micros)
        );
        assert_eq!(enc(a, "TIME(3)", Some(3)), Encoding::Integer(Unit::Millis));
        assert_eq!(
            enc(a, "TIMESTAMP_LTZ(6)", None),
            Encoding::Text(TextForm::Iso)
        );
        let m = mode(TimePrecision::AdaptiveTimeMicroseconds);
        assert_eq!(enc(m, "TIME", None), Encoding::Integer(Unit::Micros));
        assert_eq!(
            enc(m, "TIMESTAMP(9)", Some(9)),
            Encoding::Integer(Unit::Nanos)
        );
        let c = mode(TimePrecision::Connect);
        assert_eq!(
            enc(c, "TIMESTAMP(6)", None),
            Encoding::Integer(Unit::Millis)
        );
        assert_eq!(enc(c, "TIME(0)", None), Encoding::Integer(Unit::Millis));
        let i = mode(TimePrecision::Isostring);
        assert_eq!(enc(i, "DATE", None), Encoding::Text(TextForm::Iso));
        let us = mode(TimePrecision::Microseconds);
        assert_eq!(enc(us, "TIME(0)", Some(0)), Encoding::Integer(Unit::Micros));
        assert_eq!(enc(us, "DATE", None), Encoding::EpochDays);
        let ns = mode(TimePrecision::Nanoseconds);
        assert_eq!(
            enc(ns, "TIMESTAMP(3)", None),
            Encoding::Integer(Unit::Nanos)
        );
        assert_eq!(
            enc(ns, "TIMESTAMP_LTZ(3)", None),
            Encoding::Text(TextForm::Iso)
        );
    }

    #[test]
    fn agreement() {
        let micros = Encoding::Integer(Unit::Micros);
        assert!(agrees(
            Encoding::UnknownUnit(TimePrecision::Adaptive),
            micros
        ));
        assert!(agrees(micros, micros));
        assert!(!agrees(Encoding::Integer(Unit::Millis), micros));
        assert!(agrees(Encoding::DecimalFlink, Encoding::DecimalDouble));
        assert!(!agrees(
            Encoding::DecimalString,
            Encoding::DecimalPrecise { scale: 2 }
        ));
        assert!(agrees(
            Encoding::DecimalPrecise { scale: 2 },
            Encoding::DecimalPrecise { scale: 3 }
        ));
    }
}
