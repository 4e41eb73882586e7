//! JSON string literals, read straight from the raw bytes of a value.
//!
//! The decoder keeps each column as the raw JSON text the envelope scan validated (what a
//! `RawValue` holds), so a string column is a slice of the input between quotes. Almost all
//! strings have no escape and are used in place; the rest are unescaped into a reusable scratch
//! buffer. Either way no `String` is allocated per value.

/// The bytes between the quotes of a JSON string literal; `None` if `raw` is not a string.
pub(crate) fn string_body(raw: &[u8]) -> Option<&[u8]> {
    match raw {
        [b'"', body @ .., b'"'] => Some(body),
        _ => None,
    }
}

/// Why a string literal could not be unescaped.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct BadEscape;

/// The content of a string literal body: `body` itself when it has no escape, else the unescaped
/// text written to `scratch`. The result is UTF-8 when `body` is.
pub(crate) fn unescape<'a>(
    body: &'a [u8],
    scratch: &'a mut Vec<u8>,
) -> Result<&'a [u8], BadEscape> {
    if !has_backslash(body) {
        return Ok(body);
    }
    scratch.clear();
    let mut rest = body;
    while let Some(at) = rest.iter().position(|&b| b == b'\\') {
        scratch.extend_from_slice(&rest[..at]);
        rest = unescape_one(&rest[at + 1..], scratch)?;
    }
    scratch.extend_from_slice(rest);
    Ok(scratch)
}

/// Whether `body` holds a backslash, tested as words of eight bytes (the last overlapping the one
/// before; a body under eight bytes as two overlapping halves), not through core's `memchr`, whose
/// call and byte-by-byte head and tail cost more than the test on strings this short (every string
/// value of every message is tested).
#[inline]
fn has_backslash(body: &[u8]) -> bool {
    /// Whether a byte of `word` is a backslash (exact: a borrow only runs past a zero byte).
    fn any(word: u64) -> bool {
        let x = word ^ u64::from_ne_bytes([b'\\'; 8]);
        x.wrapping_sub(0x0101_0101_0101_0101) & !x & 0x8080_8080_8080_8080 != 0
    }
    fn half(s: &[u8], at: usize) -> u64 {
        u32::from_ne_bytes(s[at..at + 4].try_into().expect("4 bytes")).into()
    }
    let n = body.len();
    match body.last_chunk::<8>() {
        Some(last) => {
            let (words, _) = body.as_chunks::<8>();
            words.iter().any(|w| any(u64::from_ne_bytes(*w))) || any(u64::from_ne_bytes(*last))
        }
        None if n >= 4 => any(half(body, 0) | half(body, n - 4) << 32),
        None => n > 0 && (body[0] == b'\\' || body[n / 2] == b'\\' || body[n - 1] == b'\\'),
    }
}

/// Decodes the escape at the start of `rest` (just after its backslash); returns what follows.
fn unescape_one<'a>(rest: &'a [u8], out: &mut Vec<u8>) -> Result<&'a [u8], BadEscape> {
    let (&c, after) = rest.split_first().ok_or(BadEscape)?;
    let simple = match c {
        b'"' | b'\\' | b'/' => c,
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'u' => return unescape_unicode(after, out),
        _ => return Err(BadEscape),
    };
    out.push(simple);
    Ok(after)
}

/// Decodes `XXXX` (after `\u`), joining a surrogate pair written as two escapes.
fn unescape_unicode<'a>(rest: &'a [u8], out: &mut Vec<u8>) -> Result<&'a [u8], BadEscape> {
    let (first, mut rest) = hex4(rest)?;
    let code = match first {
        0xd800..=0xdbff => {
            let low_rest = rest.strip_prefix(b"\\u").ok_or(BadEscape)?;
            let (low, after) = hex4(low_rest)?;
            if !(0xdc00..=0xdfff).contains(&low) {
                return Err(BadEscape);
            }
            rest = after;
            0x10000 + ((first - 0xd800) << 10) + (low - 0xdc00)
        }
        0xdc00..=0xdfff => return Err(BadEscape),
        bmp => bmp,
    };
    let ch = char::from_u32(code).ok_or(BadEscape)?;
    out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
    Ok(rest)
}

/// Four hex digits at the start of `s`, and what follows them.
fn hex4(s: &[u8]) -> Result<(u32, &[u8]), BadEscape> {
    let digits = s.get(..4).ok_or(BadEscape)?;
    let mut v = 0u32;
    for &d in digits {
        v = v * 16 + (d as char).to_digit(16).ok_or(BadEscape)?;
    }
    Ok((v, &s[4..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn un(raw: &str) -> Result<String, BadEscape> {
        let mut scratch = Vec::new();
        let body = string_body(raw.as_bytes()).expect("a string literal");
        let bytes = unescape(body, &mut scratch)?;
        Ok(String::from_utf8(bytes.to_vec()).expect("utf-8"))
    }

    #[test]
    fn plain_strings_are_borrowed() {
        let mut scratch = Vec::new();
        let raw = b"\"h\xc3\xa9llo\"";
        let body = string_body(raw).unwrap();
        let got = unescape(body, &mut scratch).unwrap();
        assert_eq!(got.as_ptr(), body.as_ptr());
        assert_eq!(string_body(b"12"), None);
        assert_eq!(string_body(b"\""), None);
        assert_eq!(un("\"\"").unwrap(), "");
    }

    #[test]
    fn has_backslash_finds_every_backslash() {
        // Every length up to past the word paths, a backslash at each place in turn, among bytes
        // one away from it (a borrow past a byte that is not one must not count).
        for n in 0..=40usize {
            let plain: Vec<u8> = (0..n).map(|i| [b'[', b']', 0xdc, b'a'][i % 4]).collect();
            assert!(!has_backslash(&plain), "{n}");
            for at in 0..n {
                let mut s = plain.clone();
                s[at] = b'\\';
                assert!(has_backslash(&s), "{n} {at}");
            }
        }
    }

    #[test]
    fn escapes_match_serde_json() {
        for raw in [
            r#""a\"b\\c\/d""#,
            r#""\b\f\n\r\t""#,
            r#""caf\u00e9 \u20ac""#,
            r#""\ud83d\ude00!""#,
            r#""x\u0000y""#,
        ] {
            let expect: String = serde_json::from_str(raw).unwrap();
            assert_eq!(un(raw).unwrap(), expect, "{raw}");
        }
    }

    #[test]
    fn bad_escapes_are_errors() {
        for raw in [
            r#""\ud83d""#,
            r#""\ud83dx""#,
            r#""\ud83d\u0041""#,
            r#""\ude00""#,
            r#""\u12""#,
            r#""\uzzzz""#,
            r#""\q""#,
            "\"\\\"",
        ] {
            assert_eq!(un(raw), Err(BadEscape), "{raw}");
        }
    }
}
