//! DATE, TIME, TIMESTAMP and TIMESTAMP_LTZ values from their JSON encodings.
//!
//! Temporal values arrive in one of three shapes, and which one is a declared setting, never a
//! guess:
//!
//! * **integers**: DATE as epoch days (`io.debezium.time.Date`), TIME and TIMESTAMP in a [`Unit`]
//!   only the Connect schema names (`Time`/`MicroTime`/`NanoTime` of the day,
//!   `Timestamp`/`MicroTimestamp`/`NanoTimestamp` since the epoch);
//! * **Flink's text**: what Flink's `json`/`debezium-json` format parses (`TimeFormats` in
//!   flink-format-common): DATE `yyyy-MM-dd`; TIME `HH:mm:ss[.f]`, of which Flink keeps whole
//!   seconds only (`localTime.toSecondOfDay() * 1000`); TIMESTAMP in its SQL form
//!   `yyyy-MM-dd HH:mm:ss[.f]` or ISO form `yyyy-MM-ddTHH:mm[:ss[.f]]`; TIMESTAMP_LTZ the same
//!   with a trailing `Z` (or, beyond Flink, an explicit offset);
//! * **Debezium's ISO text** with an offset (`time.precision.mode=isostring`: `IsoDate`
//!   `2024-01-31Z`, `IsoTime` `10:15:30.5Z`, `IsoTimestamp`; and `ZonedTimestamp`, which every mode
//!   uses for `timestamptz`).
//!
//! Values are stored as the row encoding holds them (TIME: milliseconds of the day; TIMESTAMP and
//! TIMESTAMP_LTZ: micros since the epoch for p <= 6, nanos above) and truncated (floor) to the
//! declared precision, as Flink's `TimestampData`/TIME conversions do: a TIMESTAMP(3) given
//! micros keeps 3 digits, a TIME keeps at most milliseconds.

use crate::numbers::{parse_i64, NumError};
use cdcjoin_model::value::days_from_civil;

/// The unit of a TIME or TIMESTAMP sent as a JSON integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Unit {
    /// Milliseconds.
    Millis,
    /// Microseconds.
    Micros,
    /// Nanoseconds.
    Nanos,
}

impl Unit {
    /// The unit Debezium's `adaptive` mode uses for a source column of this precision.
    pub(crate) fn adaptive(source_precision: u8) -> Unit {
        match source_precision {
            0..=3 => Unit::Millis,
            4..=6 => Unit::Micros,
            _ => Unit::Nanos,
        }
    }

    fn per_second(self) -> i64 {
        match self {
            Unit::Millis => 1_000,
            Unit::Micros => 1_000_000,
            Unit::Nanos => 1_000_000_000,
        }
    }
}

/// How a temporal text must look.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum TextForm {
    /// Flink's json format (see the module docs).
    Flink,
    /// Debezium's ISO strings, with an offset.
    Iso,
}

/// The declared temporal types, with what their storage needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Temporal {
    /// DATE: epoch days.
    Date,
    /// TIME(p): milliseconds of the day.
    Time(u8),
    /// TIMESTAMP(p): local date-time.
    Timestamp(u8),
    /// TIMESTAMP_LTZ(p): an instant.
    Instant(u8),
}

const NANOS_PER_SECOND: i64 = 1_000_000_000;
const MILLIS_PER_DAY: i64 = 86_400_000;
const SECONDS_PER_DAY: i64 = 86_400;
/// The epoch days of 0000-01-01 and 9999-12-31: Flink's DATE and TIMESTAMP range (SQL's), and
/// what a text's four-digit year gives. An integer beyond it is out of range, not a date: Debezium
/// sends Postgres' `infinity` and `-infinity` as such integers (pgjdbc's
/// `DATE_POSITIVE_INFINITY`, 9223372036825200000, in micros or millis).
const FIRST_DAY: i64 = -719_528;
const LAST_DAY: i64 = 2_932_896;

/// `days`, when within [`FIRST_DAY`] and [`LAST_DAY`].
fn in_years(days: i64) -> Result<i64, NumError> {
    match (FIRST_DAY..=LAST_DAY).contains(&days) {
        true => Ok(days),
        false => Err(NumError::Range),
    }
}

/// A DATE from an integer of epoch days (`io.debezium.time.Date`).
pub(crate) fn epoch_days(raw: &[u8]) -> Result<i64, NumError> {
    in_years(parse_i64(raw)?)
}

/// The value of an integer `raw` in `unit`, stored as `t` (a TIME or TIMESTAMP) needs.
///
/// `i64::MAX` and `i64::MIN` are refused in every unit: in `time.precision.mode=nanoseconds`
/// they are what Debezium sends for Postgres' `infinity` and `-infinity`
/// (`PostgresValueConverter.convertTimestampToEpochNanos`), within the range otherwise.
pub(crate) fn from_integer(raw: &[u8], unit: Unit, t: Temporal) -> Result<i64, NumError> {
    let v = parse_i64(raw)?;
    if v == i64::MAX || v == i64::MIN {
        return Err(NumError::Range);
    }
    match t {
        Temporal::Date => Err(NumError::Syntax),
        Temporal::Time(p) => {
            let ms = convert(v, unit, Unit::Millis)?;
            if !(0..MILLIS_PER_DAY).contains(&ms) {
                return Err(NumError::Range);
            }
            truncate(ms, 3, p.min(3))
        }
        Temporal::Timestamp(p) | Temporal::Instant(p) => {
            let (storage, digits) = storage(p);
            let v = truncate(convert(v, unit, storage)?, digits, p)?;
            in_years(v.div_euclid(storage.per_second() * SECONDS_PER_DAY)).map(|_| v)
        }
    }
}

/// The value of the JSON string body `s` in `form`, stored as `t` needs.
pub(crate) fn from_text(s: &[u8], form: TextForm, t: Temporal) -> Result<i64, NumError> {
    let text = parse(s).ok_or(NumError::Syntax)?;
    if !text.fits(form, t) {
        return Err(NumError::Syntax);
    }
    match t {
        Temporal::Date => i32::try_from(text.days)
            .map(i64::from)
            .map_err(|_| NumError::Range),
        Temporal::Time(p) => {
            let ms = text.second_of_day * 1000 + text.nanos / 1_000_000;
            Ok(match form {
                // Flink's json format keeps whole seconds of a TIME.
                TextForm::Flink => text.second_of_day * 1000,
                TextForm::Iso => truncate(ms, 3, p.min(3))?,
            })
        }
        Temporal::Timestamp(p) => text.epoch(0, p),
        Temporal::Instant(p) => text.epoch(text.offset.unwrap_or(0), p),
    }
}

/// The storage unit of a TIMESTAMP(p) and its number of fraction digits.
fn storage(p: u8) -> (Unit, u8) {
    if p > 6 {
        (Unit::Nanos, 9)
    } else {
        (Unit::Micros, 6)
    }
}

/// `v`, a count of units with `digits` fraction digits, floored to `p` fraction digits; out of
/// range when the floor is below `i64::MIN`.
fn truncate(v: i64, digits: u8, p: u8) -> Result<i64, NumError> {
    if p >= digits {
        return Ok(v);
    }
    let step = 10i64.pow((digits - p) as u32);
    v.checked_sub(v.rem_euclid(step)).ok_or(NumError::Range)
}

/// `v` in `from` units, in `to` units (floor when `to` is coarser).
fn convert(v: i64, from: Unit, to: Unit) -> Result<i64, NumError> {
    let (f, t) = (from.per_second(), to.per_second());
    if t >= f {
        v.checked_mul(t / f).ok_or(NumError::Range)
    } else {
        Ok(v.div_euclid(f / t))
    }
}

/// A date and/or time text, split into its parts.
#[derive(Debug, Default, PartialEq, Eq)]
struct Text {
    has_date: bool,
    /// `T` or ` ` between date and time; 0 without both.
    separator: u8,
    has_time: bool,
    has_seconds: bool,
    days: i64,
    second_of_day: i64,
    nanos: i64,
    /// Seconds east of UTC, when an offset (`Z`, `+01:00`) ends the text.
    offset: Option<i64>,
}

impl Text {
    /// Whether this text has the shape `form` gives type `t`.
    fn fits(&self, form: TextForm, t: Temporal) -> bool {
        let date_time = self.has_date && self.has_time;
        let shape = match t {
            Temporal::Date => self.has_date && !self.has_time,
            Temporal::Time(_) => self.has_time && !self.has_date,
            Temporal::Timestamp(_) | Temporal::Instant(_) => date_time,
        };
        // Debezium's ISO texts of a DATE, TIME or TIMESTAMP are at UTC (`IsoTimestamp` and the
        // others format at `ZoneOffset.UTC`): another offset is a zoned value, which a type
        // without a zone could read as its local part or as its instant.
        let zoned = match (form, t) {
            (TextForm::Iso, Temporal::Instant(_)) | (TextForm::Flink, Temporal::Instant(_)) => {
                self.offset.is_some()
            }
            (TextForm::Iso, _) => self.offset == Some(0),
            (TextForm::Flink, _) => self.offset.is_none(),
        };
        // Flink's SQL forms need seconds (`HH:mm:ss`); its ISO date-time form does not.
        let seconds = match (form, t) {
            (TextForm::Flink, Temporal::Time(_)) => self.has_seconds,
            (TextForm::Flink, _) if date_time => self.has_seconds || self.separator == b'T',
            (TextForm::Iso, _) if date_time => self.separator == b'T',
            _ => true,
        };
        shape && zoned && seconds
    }

    /// The epoch value in TIMESTAMP(p) storage, `offset` seconds east of UTC removed.
    fn epoch(&self, offset: i64, p: u8) -> Result<i64, NumError> {
        let (unit, digits) = storage(p);
        let per_second = unit.per_second();
        let fraction = self.nanos / (NANOS_PER_SECOND / per_second);
        let v = self
            .days
            .checked_mul(86_400)
            .and_then(|s| s.checked_add(self.second_of_day - offset))
            .and_then(|s| s.checked_mul(per_second))
            .and_then(|v| v.checked_add(fraction))
            .ok_or(NumError::Range)?;
        truncate(v, digits, p)
    }
}

/// `[yyyy-MM-dd][(T| )][HH:mm[:ss[.fraction]]][offset]`: at least a date or a time.
fn parse(s: &[u8]) -> Option<Text> {
    let mut text = Text::default();
    let mut rest = s;
    if let Some((days, after)) = parse_date(s) {
        text.has_date = true;
        text.days = days;
        rest = after;
        if let [sep @ (b'T' | b' '), time @ ..] = rest {
            text.separator = *sep;
            rest = time;
            if time.is_empty() {
                return None;
            }
        }
    }
    if text.separator != 0 || !text.has_date {
        let (sod, nanos, seconds, after) = parse_time(rest)?;
        text.has_time = true;
        text.has_seconds = seconds;
        text.second_of_day = sod;
        text.nanos = nanos;
        rest = after;
    }
    text.offset = parse_offset(rest)?;
    Some(text)
}

/// `yyyy-MM-dd` at the start of `s`: epoch days and the rest.
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

/// `HH:mm[:ss[.fraction]]`: second of day, nanoseconds, whether seconds were given, the rest.
/// A fraction has 1 to 9 digits.
fn parse_time(s: &[u8]) -> Option<(i64, i64, bool, &[u8])> {
    let (h, s) = fixed_digits(s, 2)?;
    let (mi, mut s) = fixed_digits(s.strip_prefix(b":")?, 2)?;
    let (mut sec, mut nanos, mut seconds) = (0, 0, false);
    if let Some(after) = s.strip_prefix(b":") {
        let (v, after) = fixed_digits(after, 2)?;
        (sec, seconds, s) = (v, true, after);
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
    if h > 23 || mi > 59 || sec > 59 {
        return None;
    }
    Some((h * 3600 + mi * 60 + sec, nanos, seconds, s))
}

/// Nothing (`Some(None)`), `Z`, or `+HH:MM[:SS]` / `-HH:MM[:SS]` as seconds east of UTC; `None`
/// for anything else.
fn parse_offset(s: &[u8]) -> Option<Option<i64>> {
    let (sign, body) = match s {
        [] => return Some(None),
        b"Z" => return Some(Some(0)),
        [b'+', body @ ..] => (1, body),
        [b'-', body @ ..] => (-1, body),
        _ => return None,
    };
    let (h, body) = fixed_digits(body, 2)?;
    let (m, body) = fixed_digits(body.strip_prefix(b":")?, 2)?;
    let sec = match body {
        [] => 0,
        [b':', s @ ..] if s.len() == 2 => fixed_digits(s, 2)?.0,
        _ => return None,
    };
    if h > 18 || m > 59 || sec > 59 {
        return None;
    }
    Some(Some(sign * (h * 3600 + m * 60 + sec)))
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

    const DATE: Temporal = Temporal::Date;
    const TS3: Temporal = Temporal::Timestamp(3);
    const TS6: Temporal = Temporal::Timestamp(6);
    const TS9: Temporal = Temporal::Timestamp(9);

    fn flink(s: &str, t: Temporal) -> Result<i64, NumError> {
        from_text(s.as_bytes(), TextForm::Flink, t)
    }

    fn iso(s: &str, t: Temporal) -> Result<i64, NumError> {
        from_text(s.as_bytes(), TextForm::Iso, t)
    }

    fn int(s: &str, unit: Unit, t: Temporal) -> Result<i64, NumError> {
        from_integer(s.as_bytes(), unit, t)
    }

    #[test]
    fn adaptive_units_follow_source_precision() {
        assert_eq!(Unit::adaptive(0), Unit::Millis);
        assert_eq!(Unit::adaptive(3), Unit::Millis);
        assert_eq!(Unit::adaptive(4), Unit::Micros);
        assert_eq!(Unit::adaptive(6), Unit::Micros);
        assert_eq!(Unit::adaptive(7), Unit::Nanos);
    }

    #[test]
    fn dates() {
        assert_eq!(epoch_days(b"19753"), Ok(19_753));
        assert_eq!(epoch_days(b"-1"), Ok(-1));
        assert_eq!(epoch_days(b"3000000000"), Err(NumError::Range));
        assert_eq!(epoch_days(b"\"2024-01-31\""), Err(NumError::Syntax));
        assert_eq!(int("19753", Unit::Millis, DATE), Err(NumError::Syntax));
        assert_eq!(flink("2024-01-31", DATE), Ok(19_753));
        assert_eq!(flink("2024-02-29", DATE), Ok(19_782));
        assert_eq!(iso("2024-01-31Z", DATE), Ok(19_753));
        assert_eq!(iso("2024-01-31", DATE), Err(NumError::Syntax));
        for bad in [
            "2023-02-29",
            "2024-13-01",
            "2024-01-00",
            "2024-1-31",
            "2024-01-31T00:00",
            "2024-01-31Z",
            "1.5",
        ] {
            assert_eq!(flink(bad, DATE), Err(NumError::Syntax), "{bad}");
        }
    }

    #[test]
    fn times_keep_at_most_millis() {
        let t = |p| Temporal::Time(p);
        // Flink's json format keeps whole seconds.
        assert_eq!(flink("10:15:30.123456", t(3)), Ok(36_930_000));
        assert_eq!(flink("10:15:30", t(0)), Ok(36_930_000));
        assert_eq!(flink("10:15", t(0)), Err(NumError::Syntax));
        assert_eq!(flink("10:15:30Z", t(0)), Err(NumError::Syntax));
        assert_eq!(iso("10:15:30.123456Z", t(6)), Ok(36_930_123));
        assert_eq!(iso("10:15:30.129Z", t(2)), Ok(36_930_120));
        assert_eq!(iso("10:15Z", t(0)), Ok(36_900_000));
        assert_eq!(iso("10:15:30", t(0)), Err(NumError::Syntax));
        assert_eq!(int("36930123", Unit::Millis, t(3)), Ok(36_930_123));
        assert_eq!(int("36930123456", Unit::Micros, t(3)), Ok(36_930_123));
        assert_eq!(int("36930123456", Unit::Micros, t(1)), Ok(36_930_100));
        assert_eq!(int("36930123456789", Unit::Nanos, t(9)), Ok(36_930_123));
        assert_eq!(int("86400000000", Unit::Micros, t(6)), Err(NumError::Range));
        assert_eq!(int("-1", Unit::Millis, t(3)), Err(NumError::Range));
    }

    #[test]
    fn timestamps_from_integers_truncate_to_the_declared_precision() {
        assert_eq!(
            int("1706696130123", Unit::Millis, TS3),
            Ok(1_706_696_130_123_000)
        );
        assert_eq!(
            int("1706696130123456", Unit::Micros, TS6),
            Ok(1_706_696_130_123_456)
        );
        assert_eq!(
            int("1706696130123456", Unit::Micros, TS3),
            Ok(1_706_696_130_123_000)
        );
        assert_eq!(
            int("1706696130123456789", Unit::Nanos, TS6),
            Ok(1_706_696_130_123_456)
        );
        assert_eq!(int("-1", Unit::Nanos, TS6), Ok(-1));
        assert_eq!(int("-1", Unit::Micros, TS3), Ok(-1000));
        assert_eq!(
            int("1706696130123", Unit::Millis, TS9),
            Ok(1_706_696_130_123_000_000)
        );
        assert_eq!(
            int("1706696130123456789", Unit::Nanos, Temporal::Timestamp(7)),
            Ok(1_706_696_130_123_456_700)
        );
        assert_eq!(
            int("9223372036854775807", Unit::Millis, TS9),
            Err(NumError::Range)
        );
        assert_eq!(int("1.5", Unit::Millis, TS3), Err(NumError::Syntax));
    }

    #[test]
    fn timestamps_from_flink_text() {
        assert_eq!(
            flink("2024-01-31 10:15:30.123456", TS6),
            Ok(1_706_696_130_123_456)
        );
        assert_eq!(
            flink("2024-01-31 10:15:30.123456", TS3),
            Ok(1_706_696_130_123_000)
        );
        assert_eq!(
            flink("2024-01-31T10:15:30.123456789", TS9),
            Ok(1_706_696_130_123_456_789)
        );
        assert_eq!(flink("2024-01-31T10:15", TS6), Ok(1_706_696_100_000_000));
        assert_eq!(
            flink("1969-12-31 23:59:59.999999", TS6),
            Ok(-1),
            "before the epoch"
        );
        assert_eq!(flink("2300-01-01 00:00:00", TS9), Err(NumError::Range));
        for bad in [
            "2024-01-31",
            "2024-01-31 10:15",
            "2024-01-31T24:00",
            "2024-01-31T10:15:60",
            "2024-01-31T10:15:30.",
            "2024-01-31T10:15:30.1234567890",
            "2024-01-31T10:15:30Z",
            "2024-01-31T10:15:30+02:00",
            "2024-01-31X10:15",
            "2024-01-31T",
        ] {
            assert_eq!(flink(bad, TS6), Err(NumError::Syntax), "{bad}");
        }
    }

    #[test]
    fn instants_remove_their_offset() {
        let ltz = Temporal::Instant(6);
        assert_eq!(
            flink("2024-01-31 10:15:30.5Z", ltz),
            Ok(1_706_696_130_500_000)
        );
        assert_eq!(
            flink("2024-01-31T10:15:30Z", ltz),
            Ok(1_706_696_130_000_000)
        );
        assert_eq!(
            flink("2024-01-31T12:15:30+02:00", ltz),
            Ok(1_706_696_130_000_000)
        );
        assert_eq!(flink("2024-01-31 10:15:30", ltz), Err(NumError::Syntax));
        assert_eq!(
            iso("2024-01-31T05:15:30.123456789-05:00", Temporal::Instant(3)),
            Ok(1_706_696_130_123_000)
        );
        assert_eq!(iso("2024-01-31 10:15:30Z", ltz), Err(NumError::Syntax));
        assert_eq!(iso("2024-01-31T10:15:30+25:00", ltz), Err(NumError::Syntax));
        // isostring sends local timestamps at UTC; the local part is the value.
        assert_eq!(iso("2024-01-31T10:15:30Z", TS6), Ok(1_706_696_130_000_000));
        assert_eq!(
            iso("2024-01-31T10:15:30+00:00", TS6),
            Ok(1_706_696_130_000_000)
        );
    }

    /// A zoned text (Oracle's `TIMESTAMP WITH TIME ZONE`, SQL Server's `datetimeoffset`: Debezium's
    /// `ZonedTimestamp` keeps their offset) read into a type without a zone has two readings, its
    /// local part or its instant: refused, as every other mode refuses it.
    #[test]
    fn iso_texts_of_unzoned_types_are_at_utc() {
        for t in [TS6, Temporal::Time(3), DATE] {
            for text in [
                "2018-03-27T01:34:56.007891-11:00",
                "01:34:56.007891+01:00",
                "2018-03-27+01:00",
            ] {
                assert_eq!(iso(text, t), Err(NumError::Syntax), "{text} as {t:?}");
            }
        }
        assert_eq!(
            iso("2018-03-27T01:34:56.007891-11:00", Temporal::Instant(6)),
            Ok(1_522_154_096_007_891)
        );
    }

    /// Flink's DATE and TIMESTAMP hold the years 0000 to 9999; Debezium sends Postgres'
    /// `infinity`/`-infinity` as integers beyond them (pgjdbc's `DATE_POSITIVE_INFINITY` and
    /// `DATE_NEGATIVE_INFINITY`, in micros or millis) or, in nanoseconds mode, as `i64::MAX` and
    /// `i64::MIN`: out of range, never a date-time.
    #[test]
    fn integers_beyond_years_0000_to_9999_and_the_infinities_are_out_of_range() {
        assert_eq!(FIRST_DAY, days_from_civil(0, 1, 1));
        assert_eq!(LAST_DAY, days_from_civil(9999, 12, 31));
        assert_eq!(epoch_days(FIRST_DAY.to_string().as_bytes()), Ok(FIRST_DAY));
        assert_eq!(epoch_days(LAST_DAY.to_string().as_bytes()), Ok(LAST_DAY));
        for days in [
            FIRST_DAY - 1,
            LAST_DAY + 1,
            i32::MIN as i64,
            i32::MAX as i64,
        ] {
            assert_eq!(
                epoch_days(days.to_string().as_bytes()),
                Err(NumError::Range)
            );
        }
        let first = FIRST_DAY * SECONDS_PER_DAY;
        let end = (LAST_DAY + 1) * SECONDS_PER_DAY;
        assert_eq!(
            int(&format!("{}", first * 1000), Unit::Millis, TS3),
            Ok(first * 1_000_000)
        );
        assert_eq!(
            int(&format!("{}", end * 1000 - 1), Unit::Millis, TS3),
            Ok(end * 1_000_000 - 1000)
        );
        assert_eq!(
            int(&format!("{}", first * 1000 - 1), Unit::Millis, TS3),
            Err(NumError::Range)
        );
        assert_eq!(
            int(&format!("{}", end * 1000), Unit::Millis, TS3),
            Err(NumError::Range)
        );
        let (infinity, minus_infinity) = ("9223372036825200000", "-9223372036832400000");
        for t in [TS6, Temporal::Instant(6), TS9] {
            assert_eq!(
                int(infinity, Unit::Micros, t),
                Err(NumError::Range),
                "{t:?}"
            );
            assert_eq!(
                int(minus_infinity, Unit::Micros, t),
                Err(NumError::Range),
                "{t:?}"
            );
            assert_eq!(
                int("9223372036825200", Unit::Millis, t),
                Err(NumError::Range)
            );
        }
        for p in 0..=9 {
            for t in [
                Temporal::Timestamp(p),
                Temporal::Instant(p),
                Temporal::Time(p),
            ] {
                for v in ["9223372036854775807", "-9223372036854775808"] {
                    assert_eq!(int(v, Unit::Nanos, t), Err(NumError::Range), "{v} as {t:?}");
                }
            }
        }
    }

    /// Flooring to the declared precision below `i64::MIN` is out of range, not a wrap to the
    /// far future (nor, with overflow checks, a panic).
    #[test]
    fn flooring_near_the_smallest_integer_is_out_of_range() {
        for p in [7, 8] {
            let t = Temporal::Timestamp(p);
            assert_eq!(
                int("-9223372036854775807", Unit::Nanos, t),
                Err(NumError::Range)
            );
            assert_eq!(
                int("-9223372036854775700", Unit::Nanos, t),
                Ok(-9_223_372_036_854_775_700)
            );
        }
    }
}
