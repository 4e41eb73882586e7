//! DATE and TIMESTAMP values from Debezium's encodings.
//!
//! Debezium's JSON carries temporal values as bare integers whose unit is only in the Connect
//! schema (`io.debezium.time.Date` = epoch days, `Timestamp` = epoch millis, `MicroTimestamp` =
//! micros, `NanoTimestamp` = nanos), or, with `time.precision.mode=connect`/string converters, as
//! ISO-8601 text. The unit of an integer cannot be read from the payload, so it is configured per
//! column ([`TimestampUnit`]). Values are converted to the row encoding's storage: micros for
//! `TIMESTAMP(p <= 6)`, nanos for `TIMESTAMP(p > 6)`. Converting nanos to micros drops the
//! sub-microsecond digits (toward negative infinity); nothing else loses precision.

use crate::numbers::{parse_i64, NumError};
use cdcjoin_model::value::days_from_civil;
use serde::{Deserialize, Serialize};

/// The unit of a TIMESTAMP column sent as an integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TimestampUnit {
    /// Epoch milliseconds (`io.debezium.time.Timestamp`, Connect's `Timestamp`).
    Millis,
    /// Epoch microseconds (`io.debezium.time.MicroTimestamp`).
    Micros,
    /// Epoch nanoseconds (`io.debezium.time.NanoTimestamp`).
    Nanos,
}

impl TimestampUnit {
    /// What Debezium uses for a column of this precision with the default
    /// `time.precision.mode=adaptive`: millis for p <= 3, micros for p <= 6, else nanos.
    pub fn default_for(precision: u8) -> TimestampUnit {
        match precision {
            0..=3 => TimestampUnit::Millis,
            4..=6 => TimestampUnit::Micros,
            _ => TimestampUnit::Nanos,
        }
    }

    fn per_second(self) -> i64 {
        match self {
            TimestampUnit::Millis => 1_000,
            TimestampUnit::Micros => 1_000_000,
            TimestampUnit::Nanos => 1_000_000_000,
        }
    }
}

/// The row encoding's storage unit for `TIMESTAMP(precision)`.
fn storage_unit(precision: u8) -> TimestampUnit {
    if precision > 6 {
        TimestampUnit::Nanos
    } else {
        TimestampUnit::Micros
    }
}

/// A DATE from epoch days (a JSON integer) or `"YYYY-MM-DD"`.
pub(crate) fn date(raw: &[u8]) -> Result<i32, NumError> {
    if let [b'"', body @ .., b'"'] = raw {
        let (days, rest) = parse_date(body).ok_or(NumError::Syntax)?;
        return if rest.is_empty() {
            i32::try_from(days).map_err(|_| NumError::Range)
        } else {
            Err(NumError::Syntax)
        };
    }
    i32::try_from(parse_i64(raw)?).map_err(|_| NumError::Range)
}

/// A TIMESTAMP(precision) in storage units, from an integer in `unit` or an ISO local date-time.
pub(crate) fn timestamp(raw: &[u8], precision: u8, unit: TimestampUnit) -> Result<i64, NumError> {
    let to = storage_unit(precision);
    if let [b'"', body @ .., b'"'] = raw {
        return iso_timestamp(body, to);
    }
    convert(parse_i64(raw)?, unit, to)
}

/// `v` in `from` units, in `to` units (floor when `to` is coarser).
fn convert(v: i64, from: TimestampUnit, to: TimestampUnit) -> Result<i64, NumError> {
    let (f, t) = (from.per_second(), to.per_second());
    if t >= f {
        v.checked_mul(t / f).ok_or(NumError::Range)
    } else {
        Ok(v.div_euclid(f / t))
    }
}

/// `YYYY-MM-DD[T| ]HH:MM[:SS[.fraction]][Z]`, as `LocalDateTime#toString` (and Debezium's
/// string forms) write it.
fn iso_timestamp(s: &[u8], to: TimestampUnit) -> Result<i64, NumError> {
    let (days, rest) = parse_date(s).ok_or(NumError::Syntax)?;
    let rest = match rest {
        [b'T' | b't' | b' ', time @ ..] => time,
        _ => return Err(NumError::Syntax),
    };
    let (second_of_day, nanos) = parse_time(rest).ok_or(NumError::Syntax)?;
    let per_second = to.per_second();
    let fraction = nanos / (1_000_000_000 / per_second);
    days.checked_mul(86_400)
        .and_then(|s| s.checked_add(second_of_day))
        .and_then(|s| s.checked_mul(per_second))
        .and_then(|v| v.checked_add(fraction))
        .ok_or(NumError::Range)
}

/// `YYYY-MM-DD` at the start of `s`: epoch days and the rest.
fn parse_date(s: &[u8]) -> Option<(i64, &[u8])> {
    let (y, s) = fixed_digits(s, 4)?;
    let (m, s) = fixed_digits(s.strip_prefix(b"-")?, 2)?;
    let (d, s) = fixed_digits(s.strip_prefix(b"-")?, 2)?;
    let (m, d) = (m as u32, d as u32);
    if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    Some((days_from_civil(y, m, d), s))
}

fn days_in_month(year: i64, month: u32) -> u32 {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `HH:MM[:SS[.fraction]][Z]`: second of day and nanoseconds (extra fraction digits beyond 9 are
/// rejected).
fn parse_time(s: &[u8]) -> Option<(i64, i64)> {
    let (h, s) = fixed_digits(s, 2)?;
    let (mi, mut s) = fixed_digits(s.strip_prefix(b":")?, 2)?;
    let (mut sec, mut nanos) = (0, 0);
    if let Some(after) = s.strip_prefix(b":") {
        let (v, after) = fixed_digits(after, 2)?;
        sec = v;
        s = after;
        if let Some(frac) = s.strip_prefix(b".") {
            let n = frac.iter().take_while(|b| b.is_ascii_digit()).count();
            if n == 0 || n > 9 {
                return None;
            }
            let (digits, after) = fixed_digits(frac, n)?;
            nanos = digits * 10i64.pow(9 - n as u32);
            s = after;
        }
    }
    let s = s.strip_prefix(b"Z").unwrap_or(s);
    if !s.is_empty() || h > 23 || mi > 59 || sec > 59 {
        return None;
    }
    Some((h * 3600 + mi * 60 + sec, nanos))
}

/// Exactly `n` ASCII digits at the start of `s` (n <= 9), and the rest.
fn fixed_digits(s: &[u8], n: usize) -> Option<(i64, &[u8])> {
    let digits = s.get(..n)?;
    let mut v = 0i64;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (d - b'0') as i64;
    }
    Some((v, &s[n..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_units_follow_adaptive_mode() {
        assert_eq!(TimestampUnit::default_for(0), TimestampUnit::Millis);
        assert_eq!(TimestampUnit::default_for(3), TimestampUnit::Millis);
        assert_eq!(TimestampUnit::default_for(4), TimestampUnit::Micros);
        assert_eq!(TimestampUnit::default_for(6), TimestampUnit::Micros);
        assert_eq!(TimestampUnit::default_for(7), TimestampUnit::Nanos);
        assert_eq!(TimestampUnit::default_for(9), TimestampUnit::Nanos);
    }

    #[test]
    fn dates() {
        assert_eq!(date(b"19753"), Ok(19_753));
        assert_eq!(date(b"-1"), Ok(-1));
        assert_eq!(date(b"\"2024-01-31\""), Ok(19_753));
        assert_eq!(date(b"\"1969-12-31\""), Ok(-1));
        assert_eq!(date(b"\"2024-02-29\""), Ok(19_782));
        assert_eq!(date(b"3000000000"), Err(NumError::Range));
        for bad in [
            &b"\"2023-02-29\""[..],
            b"\"2024-13-01\"",
            b"\"2024-01-00\"",
            b"\"2024-1-31\"",
            b"\"2024-01-31T00:00\"",
            b"1.5",
            b"true",
        ] {
            assert_eq!(date(bad), Err(NumError::Syntax), "{bad:?}");
        }
    }

    #[test]
    fn timestamps_from_integers_in_every_unit() {
        let ms = TimestampUnit::Millis;
        let us = TimestampUnit::Micros;
        let ns = TimestampUnit::Nanos;
        assert_eq!(
            timestamp(b"1706696130123", 3, ms),
            Ok(1_706_696_130_123_000)
        );
        assert_eq!(
            timestamp(b"1706696130123456", 6, us),
            Ok(1_706_696_130_123_456)
        );
        assert_eq!(
            timestamp(b"1706696130123456789", 6, ns),
            Ok(1_706_696_130_123_456)
        );
        assert_eq!(timestamp(b"-1", 6, ns), Ok(-1));
        assert_eq!(
            timestamp(b"1706696130123456789", 9, ns),
            Ok(1_706_696_130_123_456_789)
        );
        assert_eq!(
            timestamp(b"1706696130123", 9, ms),
            Ok(1_706_696_130_123_000_000)
        );
        assert_eq!(
            timestamp(b"1706696130123456", 9, us),
            Ok(1_706_696_130_123_456_000)
        );
        assert_eq!(
            timestamp(b"9223372036854775807", 9, ms),
            Err(NumError::Range)
        );
        assert_eq!(timestamp(b"1.5", 3, ms), Err(NumError::Syntax));
    }

    #[test]
    fn timestamps_from_iso_text() {
        let ms = TimestampUnit::Millis;
        let t = |s: &str, p| timestamp(format!("\"{s}\"").as_bytes(), p, ms);
        assert_eq!(
            t("2024-01-31T10:15:30.123456", 6),
            Ok(1_706_696_130_123_456)
        );
        assert_eq!(
            t("2024-01-31 10:15:30.123456", 3),
            Ok(1_706_696_130_123_456)
        );
        assert_eq!(
            t("2024-01-31T10:15:30.123456789", 6),
            Ok(1_706_696_130_123_456)
        );
        assert_eq!(
            t("2024-01-31T10:15:30.123456789", 9),
            Ok(1_706_696_130_123_456_789)
        );
        assert_eq!(
            t("2024-01-31T10:15:30.1Z", 9),
            Ok(1_706_696_130_100_000_000)
        );
        assert_eq!(t("2024-01-31T10:15", 6), Ok(1_706_696_100_000_000));
        assert_eq!(t("1969-12-31T23:59:59.999999", 6), Ok(-1));
        assert_eq!(t("2300-01-01T00:00:00", 9), Err(NumError::Range));
        assert_eq!(t("9999-12-31T23:59:59", 6), Ok(253_402_300_799_000_000));
        for bad in [
            "2024-01-31",
            "2024-01-31T24:00",
            "2024-01-31T10:60",
            "2024-01-31T10:15:60",
            "2024-01-31T10:15:30.",
            "2024-01-31T10:15:30.1234567890",
            "2024-01-31T10:15:30+02:00",
            "2024-01-31X10:15",
        ] {
            assert_eq!(t(bad, 6), Err(NumError::Syntax), "{bad}");
        }
    }
}
