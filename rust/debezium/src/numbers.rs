//! Numbers from their JSON text: integers, floats and exact decimals.
//!
//! Decimals never go through `f64`. Debezium writes a DECIMAL in one of three ways
//! (`decimal.handling.mode`): `precise` as the base64 of the big-endian two's-complement unscaled
//! value, `double` as a JSON number, `string` as its decimal text. Both textual forms are parsed
//! digit by digit and rounded to the declared scale with Java's `HALF_UP` (what Flink's
//! `DecimalData.fromBigDecimal` does), so `0.1` is exactly `0.1`.

use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine as _;

/// Standard base64 (what Kafka Connect's JsonConverter writes), padded or not.
pub(crate) const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Why a number could not be read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NumError {
    /// Not a number of the expected form.
    Syntax,
    /// A number, but too large (or too precise) for the target.
    Range,
}

/// A JSON integer (no fraction, no exponent) as an `i64`.
pub(crate) fn parse_i64(text: &[u8]) -> Result<i64, NumError> {
    let (negative, digits) = match text {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, text),
    };
    if digits.is_empty() {
        return Err(NumError::Syntax);
    }
    if digits.len() <= 18 {
        // Below 10^18: no overflow, so no checked step (every integer column and timestamp).
        let (chunks, rest) = digits.as_chunks::<8>();
        let mut v: i64 = 0;
        for chunk in chunks {
            v = v * 100_000_000 + eight_digits(chunk).ok_or(NumError::Syntax)?;
        }
        for &d in rest {
            let d = d.wrapping_sub(b'0');
            if d > 9 {
                return Err(NumError::Syntax);
            }
            v = v * 10 + i64::from(d);
        }
        return Ok(if negative { -v } else { v });
    }
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return Err(NumError::Syntax);
        }
        let d = (d - b'0') as i64;
        // Accumulate negatively: i64::MIN has no positive counterpart.
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_sub(d))
            .ok_or(NumError::Range)?;
    }
    if negative {
        Ok(v)
    } else {
        v.checked_neg().ok_or(NumError::Range)
    }
}

/// Eight bytes read little-endian: nonzero high nibbles on (at least) the first byte that is not
/// an ASCII digit. A byte is a digit when its high nibble is 3, also after adding 6 (which carries
/// out of a low nibble above 9); a carry out of a non-digit byte only reaches later bytes, so the
/// first non-digit is found exactly, and zero means eight digits.
#[inline]
pub(crate) fn non_digits(x: u64) -> u64 {
    const HIGH: u64 = 0xf0f0_f0f0_f0f0_f0f0;
    const THREES: u64 = 0x3030_3030_3030_3030;
    ((x & HIGH) ^ THREES) | ((x.wrapping_add(0x0606_0606_0606_0606) & HIGH) ^ THREES)
}

/// The value of eight ASCII digits, or `None` if a byte is not one: checked and combined as one
/// word (pairs, then fours, then the eight), as a timestamp's sixteen digits are most of its cost.
fn eight_digits(chunk: &[u8; 8]) -> Option<i64> {
    let x = u64::from_le_bytes(*chunk);
    if non_digits(x) != 0 {
        return None;
    }
    let x = x - 0x3030_3030_3030_3030; // each byte its digit, the first in the low byte
    let x = (x * 10 + (x >> 8)) & 0x00ff_00ff_00ff_00ff;
    let x = (x * 100 + (x >> 16)) & 0x0000_ffff_0000_ffff;
    let x = (x * 10_000 + (x >> 32)) & 0xffff_ffff;
    Some(x as i64)
}

/// A JSON number (or `"NaN"`, `"Infinity"`, `"-Infinity"` as strings) as a float. A finite number
/// too large for the type is out of range rather than infinite.
pub(crate) fn parse_float<F: std::str::FromStr + FloatLike>(text: &[u8]) -> Result<F, NumError> {
    if let Some(special) = special_float(text) {
        return Ok(special);
    }
    if !matches!(text.first(), Some(b'-' | b'0'..=b'9')) {
        return Err(NumError::Syntax);
    }
    let s = std::str::from_utf8(text).map_err(|_| NumError::Syntax)?;
    let v: F = s.parse().map_err(|_| NumError::Syntax)?;
    if v.is_infinite() {
        return Err(NumError::Range);
    }
    Ok(v)
}

/// The float operations [`parse_float`] needs from `f32` and `f64`.
pub(crate) trait FloatLike: Sized {
    /// NaN.
    const NAN: Self;
    /// Positive infinity.
    const INFINITY: Self;
    /// Negative infinity.
    const NEG_INFINITY: Self;
    /// Whether the value is infinite.
    fn is_infinite(&self) -> bool;
}

macro_rules! float_like {
    ($t:ty) => {
        impl FloatLike for $t {
            const NAN: Self = <$t>::NAN;
            const INFINITY: Self = <$t>::INFINITY;
            const NEG_INFINITY: Self = <$t>::NEG_INFINITY;
            fn is_infinite(&self) -> bool {
                <$t>::is_infinite(*self)
            }
        }
    };
}
float_like!(f32);
float_like!(f64);

/// Debezium (Jackson) writes non-finite doubles as these strings.
fn special_float<F: FloatLike>(text: &[u8]) -> Option<F> {
    match text {
        b"\"NaN\"" => Some(F::NAN),
        b"\"Infinity\"" => Some(F::INFINITY),
        b"\"-Infinity\"" => Some(F::NEG_INFINITY),
        _ => None,
    }
}

/// A decimal literal `[+-]digits[.digits][e[+-]digits]`, split up but not yet evaluated.
struct DecimalText<'a> {
    negative: bool,
    int: &'a [u8],
    frac: &'a [u8],
    /// The exponent, clamped far beyond any representable decimal.
    exp: i64,
}

/// Exponents are clamped to this magnitude, which already over- or underflows every DECIMAL.
const EXP_CLAMP: i64 = 1_000_000;

fn split_decimal(text: &[u8]) -> Option<DecimalText<'_>> {
    let (negative, rest) = match text {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, text),
    };
    let (int, rest) = take_digits(rest);
    let (frac, rest) = match rest {
        [b'.', after @ ..] => take_digits(after),
        _ => (&rest[..0], rest),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let exp = match rest {
        [] => 0,
        [b'e' | b'E', e @ ..] => parse_exponent(e)?,
        _ => return None,
    };
    Some(DecimalText {
        negative,
        int,
        frac,
        exp,
    })
}

fn take_digits(s: &[u8]) -> (&[u8], &[u8]) {
    let n = s.iter().take_while(|b| b.is_ascii_digit()).count();
    s.split_at(n)
}

fn parse_exponent(e: &[u8]) -> Option<i64> {
    let (negative, digits) = match e {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, e),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let magnitude = digits
        .iter()
        .fold(0i64, |v, d| (v * 10 + (d - b'0') as i64).min(EXP_CLAMP));
    Some(if negative { -magnitude } else { magnitude })
}

/// `10^n` for `n <= 38`.
fn pow10(n: u32) -> i128 {
    10i128.pow(n)
}

/// The decimal text `text` as an unscaled value at `scale`, rounded `HALF_UP`, if it has at most
/// `precision` digits.
pub(crate) fn decimal_from_text(text: &[u8], precision: u8, scale: u8) -> Result<i128, NumError> {
    let d = split_decimal(text).ok_or(NumError::Syntax)?;
    let digits = d.int.iter().chain(d.frac.iter()).map(|b| b - b'0');
    let n = (d.int.len() + d.frac.len()) as i64;
    // value = digits * 10^(exp - frac_len); unscaled = value * 10^scale.
    let shift = d.exp - d.frac.len() as i64 + scale as i64;
    let magnitude = if shift >= 0 {
        let v = accumulate(digits)?;
        scale_up(v, shift)?
    } else {
        let keep = n + shift; // digits left of the rounding point
        if keep < 0 {
            0
        } else {
            let mut digits = digits;
            let v = accumulate(digits.by_ref().take(keep as usize))?;
            let round_up = digits
                .next()
                .is_some_and(|first_dropped| first_dropped >= 5);
            v.checked_add(round_up as i128).ok_or(NumError::Range)?
        }
    };
    let v = if d.negative { -magnitude } else { magnitude };
    check_precision(v, precision)
}

fn accumulate(mut digits: impl Iterator<Item = u8>) -> Result<i128, NumError> {
    digits.try_fold(0i128, |acc, d| {
        acc.checked_mul(10)
            .and_then(|v| v.checked_add(d as i128))
            .ok_or(NumError::Range)
    })
}

fn scale_up(v: i128, shift: i64) -> Result<i128, NumError> {
    if v == 0 {
        return Ok(0);
    }
    if shift > 38 {
        return Err(NumError::Range);
    }
    v.checked_mul(pow10(shift as u32)).ok_or(NumError::Range)
}

/// `v` if it has at most `precision` digits.
pub(crate) fn check_precision(v: i128, precision: u8) -> Result<i128, NumError> {
    if v.unsigned_abs() < pow10(precision as u32) as u128 {
        Ok(v)
    } else {
        Err(NumError::Range)
    }
}

/// Longest base64 text accepted for a decimal; its 63 bytes cover any sign-extended i128.
const MAX_BASE64_DECIMAL: usize = 84;

/// The unscaled value in `b64`, the base64 of a big-endian two's-complement integer (Java's
/// `BigInteger#toByteArray`, as Debezium's `precise` mode writes it).
pub(crate) fn unscaled_from_base64(b64: &[u8]) -> Result<i128, NumError> {
    if b64.len() > MAX_BASE64_DECIMAL {
        return Err(NumError::Range);
    }
    let mut buf = [0u8; 64];
    let n = BASE64
        .decode_slice(b64, &mut buf)
        .map_err(|_| NumError::Syntax)?;
    from_twos_complement(&buf[..n])
}

fn from_twos_complement(mut bytes: &[u8]) -> Result<i128, NumError> {
    let negative = match bytes.first() {
        Some(b) => b & 0x80 != 0,
        None => return Err(NumError::Syntax),
    };
    // Drop sign-extension bytes beyond what an i128 holds.
    let pad = if negative { 0xff } else { 0x00 };
    while bytes.len() > 16 && bytes[0] == pad && (bytes[1] & 0x80 != 0) == negative {
        bytes = &bytes[1..];
    }
    if bytes.len() > 16 {
        return Err(NumError::Range);
    }
    let init = if negative { u128::MAX } else { 0 };
    let v = bytes.iter().fold(init, |v, &b| (v << 8) | b as u128);
    Ok(v as i128)
}

/// `unscaled * 10^(to - from)`, rounded `HALF_UP` when the scale shrinks.
pub(crate) fn rescale(unscaled: i128, from: i64, to: u8) -> Result<i128, NumError> {
    let diff = (to as i64).saturating_sub(from);
    if diff >= 0 {
        return scale_up(unscaled, diff);
    }
    let down = -diff;
    if down > 38 {
        return Ok(0);
    }
    let div = pow10(down as u32);
    let (q, r) = (unscaled / div, unscaled % div);
    // |r| >= div / 2, i.e. the dropped part is at least one half: round away from zero.
    let round = (r.unsigned_abs() >= (div / 2) as u128) as i128;
    Ok(if unscaled < 0 { q - round } else { q + round })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn integers() {
        assert_eq!(parse_i64(b"0"), Ok(0));
        assert_eq!(parse_i64(b"-42"), Ok(-42));
        assert_eq!(parse_i64(b"9223372036854775807"), Ok(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775808"), Err(NumError::Range));
        assert_eq!(parse_i64(b"-9223372036854775809"), Err(NumError::Range));
        assert_eq!(parse_i64(&[b'9'; 500]), Err(NumError::Range));
        for bad in [&b""[..], b"-", b"1.0", b"1e3", b"\"1\"", b"true"] {
            assert_eq!(parse_i64(bad), Err(NumError::Syntax), "{bad:?}");
        }
        // Either side of the 18 digits parsed without overflow checks.
        assert_eq!(
            parse_i64(b"999999999999999999"),
            Ok(999_999_999_999_999_999)
        );
        assert_eq!(
            parse_i64(b"-999999999999999999"),
            Ok(-999_999_999_999_999_999)
        );
        assert_eq!(
            parse_i64(b"1000000000000000000"),
            Ok(1_000_000_000_000_000_000)
        );
        assert_eq!(parse_i64(b"12345678901234567/"), Err(NumError::Syntax));
        assert_eq!(parse_i64(b"12345678901234567:"), Err(NumError::Syntax));
    }

    /// Digits mostly, the bytes either side of them, the last byte of their high nibble and the
    /// byte that carries when six is added (the word-wise check).
    fn digit_or_next() -> impl Strategy<Value = u8> {
        prop_oneof![
            8 => b'0'..=b'9',
            1 => Just(b'/'),
            1 => Just(b':'),
            1 => Just(b'?'),
            1 => Just(0xfa)
        ]
    }

    proptest! {
        /// Any sign and up to 21 bytes, digits or bytes close to them: what `str::parse` says, with
        /// a number it cannot hold out of range and bytes that are not UTF-8 a syntax error.
        #[test]
        fn integers_parse_as_std_does(
            negative: bool,
            body in prop::collection::vec(digit_or_next(), 0..=21),
        ) {
            let text = [if negative { &b"-"[..] } else { b"" }, &body].concat();
            let std = std::str::from_utf8(&text).ok().map(str::parse::<i64>);
            let expected = match std {
                Some(Ok(v)) => Ok(v),
                Some(Err(_)) if !body.is_empty() && body.iter().all(u8::is_ascii_digit) => {
                    Err(NumError::Range)
                }
                _ => Err(NumError::Syntax),
            };
            prop_assert_eq!(parse_i64(&text), expected);
        }
    }

    #[test]
    fn floats() {
        assert_eq!(parse_float::<f64>(b"-1.5e3"), Ok(-1500.0));
        assert_eq!(parse_float::<f32>(b"0.1"), Ok(0.1f32));
        assert!(parse_float::<f64>(b"\"NaN\"").unwrap().is_nan());
        assert_eq!(parse_float::<f64>(b"\"Infinity\""), Ok(f64::INFINITY));
        assert_eq!(parse_float::<f32>(b"\"-Infinity\""), Ok(f32::NEG_INFINITY));
        assert_eq!(parse_float::<f64>(b"1e400"), Err(NumError::Range));
        assert_eq!(parse_float::<f32>(b"1e39"), Err(NumError::Range));
        assert_eq!(parse_float::<f64>(b"\"1.5\""), Err(NumError::Syntax));
        assert_eq!(parse_float::<f64>(b"true"), Err(NumError::Syntax));
        assert_eq!(parse_float::<f64>(b"1e-400"), Ok(0.0));
    }

    #[test]
    fn decimal_text_rounds_half_up_exactly() {
        let d = |t: &str, p, s| decimal_from_text(t.as_bytes(), p, s);
        assert_eq!(d("12.34", 10, 2), Ok(1234));
        assert_eq!(d("12.345", 10, 2), Ok(1235));
        assert_eq!(d("-12.345", 10, 2), Ok(-1235));
        assert_eq!(d("12.3449", 10, 2), Ok(1234));
        assert_eq!(d("0.1", 10, 2), Ok(10));
        assert_eq!(d("12", 10, 2), Ok(1200));
        assert_eq!(d("1.5e2", 10, 0), Ok(150));
        assert_eq!(d("1.5E-1", 10, 1), Ok(2));
        assert_eq!(d("+7.", 5, 1), Ok(70));
        assert_eq!(d(".5", 5, 0), Ok(1));
        assert_eq!(d("0.004", 5, 2), Ok(0));
        assert_eq!(d("0.005", 5, 2), Ok(1));
        assert_eq!(d("-0.001", 5, 2), Ok(0));
        assert_eq!(d("5e-1000000000000", 5, 2), Ok(0));
        assert_eq!(
            d("00000000000000000000000000000000000000000001.5", 5, 0),
            Ok(2)
        );
        let max38 = "9".repeat(38);
        assert_eq!(d(&max38, 38, 0), Ok(pow10(38) - 1));
        assert_eq!(d("99999999.995", 10, 2), Err(NumError::Range));
        assert_eq!(d("99999999.994", 10, 2), Ok(9_999_999_999));
        assert_eq!(d("1e1000000000000", 38, 0), Err(NumError::Range));
        assert_eq!(d("1e38", 38, 0), Err(NumError::Range));
        assert_eq!(d(&"9".repeat(60), 38, 0), Err(NumError::Range));
        assert_eq!(d("0e99999", 5, 2), Ok(0));
        for bad in [
            "", "-", ".", "1.2.3", "1e", "1e+", "abc", "1 ", "NaN", "0x10",
        ] {
            assert_eq!(d(bad, 10, 2), Err(NumError::Syntax), "{bad}");
        }
    }

    #[test]
    fn base64_twos_complement() {
        let b = |bytes: &[u8]| unscaled_from_base64(BASE64.encode(bytes).as_bytes());
        assert_eq!(b(&[0x04, 0xd2]), Ok(1234));
        assert_eq!(b(&[0xfb, 0x2e]), Ok(-1234));
        assert_eq!(b(&[0x00]), Ok(0));
        assert_eq!(b(&[0xff]), Ok(-1));
        assert_eq!(b(&i128::MAX.to_be_bytes()), Ok(i128::MAX));
        assert_eq!(b(&i128::MIN.to_be_bytes()), Ok(i128::MIN));
        let mut padded = vec![0xff; 20];
        padded.extend_from_slice(&(-5i128).to_be_bytes());
        assert_eq!(b(&padded), Ok(-5));
        let mut big = vec![0x01];
        big.extend_from_slice(&[0; 16]);
        assert_eq!(b(&big), Err(NumError::Range));
        assert_eq!(b(&[]), Err(NumError::Syntax));
        assert_eq!(unscaled_from_base64(b"BNI"), Ok(1234), "unpadded");
        assert_eq!(unscaled_from_base64(b"!!!!"), Err(NumError::Syntax));
        assert_eq!(unscaled_from_base64(&[b'A'; 200]), Err(NumError::Range));
    }

    #[test]
    fn rescale_half_up() {
        assert_eq!(rescale(12345, 3, 2), Ok(1235));
        assert_eq!(rescale(-12345, 3, 2), Ok(-1235));
        assert_eq!(rescale(12344, 3, 2), Ok(1234));
        assert_eq!(rescale(12, 0, 2), Ok(1200));
        assert_eq!(rescale(5, 1, 0), Ok(1));
        assert_eq!(rescale(1, 100, 2), Ok(0));
        assert_eq!(rescale(1, -100, 2), Err(NumError::Range));
        assert_eq!(rescale(i128::MAX, 0, 1), Err(NumError::Range));
        assert_eq!(rescale(i128::MIN, 0, 0), Ok(i128::MIN));
        assert_eq!(rescale(1, i64::MIN, 2), Err(NumError::Range));
        assert_eq!(rescale(0, i64::MIN, 2), Ok(0));
        assert_eq!(rescale(1, i64::MAX, 2), Ok(0));
    }
}
