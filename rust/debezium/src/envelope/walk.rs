//! Stage 2 of the envelope scan: the envelope read through the structural index.
//!
//! The walk visits every token of the message, in order, with the grammar of JSON: it is a full
//! validation, not a search, so a malformed `source` or `schema` block is refused as serde_json
//! refuses it, never skipped over. Skipped values (`source`, `ts_ms`, extra columns, ...) are
//! followed with an explicit stack of open brackets, so any depth is walked without recursion;
//! numbers are checked against JSON's grammar and `true`/`false`/`null` spelled out, but nothing is
//! parsed. The envelope itself (`op`, `before`, `after`, and at the top level `schema` and
//! `payload`) fills the same [`Spans`](super::Spans) as the serde_json scan, and a value's span is
//! what serde_json's `RawValue` would hold: the value's text without surrounding whitespace. Where
//! serde_json checks UTF-8 (the `RawValue`s: `op`, the declared columns, the wrapper's `schema` and
//! `payload`) the walk checks it too, unless stage 1 saw only ASCII.
//!
//! A Kafka Connect wrapper whose `schema` comes first (Kafka Connect's order) has its `payload`
//! walked as the envelope directly, in the same pass; when `payload` comes first, its tokens are
//! walked again once `schema` has been seen, through the same index.
//!
//! The walk answers `None` ("not mine") for anything it does not accept, and the caller then
//! scans the message with serde_json, which either accepts it (the walk declines a few valid but
//! odd shapes: a raw control character or an unpaired surrogate escape in an envelope or column
//! key, both of which serde_json tolerates there; a top-level `op`, `before` or `after` after a
//! wrapper's payload; a second `payload`) or names the error in its words. So every error is
//! serde_json's, and the walk only has to be exact about what it accepts.
//!
//! The functions called once per key, value or token (`key_text`, `value`, `scalar`) are forced
//! inline: left to itself the compiler kept them out of line, and their calls were 6% of the
//! decoder's instructions (`cargo bench -p cdcjoin-debezium --bench decode` under callgrind).

use super::{ColumnIndex, Fields, Image, RowSpans, Scanned, Span};
use crate::numbers::non_digits;
use crate::structural::Index;
use crate::text::unescape;

/// The buffers the walk reuses from message to message.
#[derive(Debug, Default)]
pub(crate) struct WalkBuffers {
    index: Index,
    /// The open brackets of the value being skipped.
    stack: Vec<u8>,
    /// An unescaped key.
    key: Vec<u8>,
}

/// Scans `input` through its structural index; `None` when the walk declines (see the module).
pub(super) fn scan(
    input: &[u8],
    columns: &ColumnIndex,
    images: [&mut RowSpans; 2],
    buffers: &mut WalkBuffers,
) -> Option<Scanned> {
    if !buffers.index.build(input) {
        return None;
    }
    let WalkBuffers { index, stack, key } = buffers;
    let mut walk = Walk {
        input,
        at: index.positions(),
        escapes: index.escapes(),
        next: 0,
        ascii: index.ascii(),
        stack,
        key,
        columns,
        images,
    };
    let scanned = walk.message()?;
    // Nothing but whitespace after the message.
    walk.at.get(walk.next).is_none().then_some(scanned)
}

/// Where a walk is.
struct Walk<'a> {
    input: &'a [u8],
    /// The token offsets.
    at: &'a [u32],
    /// The offsets of escaped bytes, those before the string being read skipped.
    escapes: &'a [u32],
    /// The next token, as a position in `at`.
    next: usize,
    /// Whether the message is all ASCII (then spans need no UTF-8 check).
    ascii: bool,
    /// See [`WalkBuffers`].
    stack: &'a mut Vec<u8>,
    key: &'a mut Vec<u8>,
    columns: &'a ColumnIndex,
    /// `before`, `after`.
    images: [&'a mut RowSpans; 2],
}

/// What the top level of a message held, beyond [`Fields`].
#[derive(Default)]
struct Top {
    fields: Fields,
    /// Whether a `schema` key was seen.
    schema_seen: bool,
    /// The token position of a `payload` object that came before `schema`, to walk at the end.
    payload_token: Option<usize>,
    /// The `op` of a payload walked as the envelope as it came (it followed `schema`).
    direct: Option<Span>,
}

impl Walk<'_> {
    /// The next token: its offset and first byte.
    fn token(&mut self) -> Option<(usize, u8)> {
        let at = *self.at.get(self.next)? as usize;
        self.next += 1;
        Some((at, self.input[at]))
    }

    /// The next token, which must be `byte`.
    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.token()?.1 == byte).then_some(())
    }

    /// The offset just past the string just opened: its closing quote is the last byte before
    /// the next token that is not whitespace (stage 1 checked that every string closes, and
    /// anything but whitespace after it would be a token).
    fn string_end(&self) -> usize {
        let next = self
            .at
            .get(self.next)
            .map_or(self.input.len(), |&n| n as usize);
        let blank = self.input[..next]
            .iter()
            .rev()
            .take_while(|b| is_space(**b))
            .count();
        next - blank
    }

    /// The span of a value whose text, from `start` to `end`, a `RawValue` would check as UTF-8.
    fn checked_span(&self, start: usize, end: usize) -> Option<Span> {
        let utf8 = self.ascii || std::str::from_utf8(&self.input[start..end]).is_ok();
        utf8.then_some(Span { start, end })
    }

    /// The whole message: an envelope, a wrapper or `null`.
    fn message(&mut self) -> Option<Scanned> {
        let escapes = self.escapes;
        let (at, first) = self.token()?;
        if first == b'n' {
            self.scalar(at)?;
            return Some(Scanned::Tombstone);
        }
        if first != b'{' {
            return None;
        }
        let top = self.object(true)?;
        let payload = top.fields.payload.get(self.input);
        if !top.schema_seen || !matches!(payload.first(), Some(b'{' | b'n')) {
            return Some(Scanned::Envelope {
                op: top.fields.op,
                schema: Span::default(),
            });
        }
        let op = match (top.payload_token, top.direct) {
            (_, Some(op)) => op,
            (Some(token), None) => {
                // Back to the payload's tokens (and escapes).
                self.escapes = escapes;
                let end = std::mem::replace(&mut self.next, token + 1);
                let inner = self.object(false)?;
                self.next = end;
                inner.fields.op
            }
            (None, None) => return Some(Scanned::Tombstone),
        };
        Some(Scanned::Envelope {
            op,
            schema: top.fields.schema,
        })
    }

    /// An envelope object whose `{` was just read, filling the images; `outer` at the top level,
    /// where `schema` and `payload` may make it a wrapper.
    fn object(&mut self, outer: bool) -> Option<Top> {
        for image in &mut self.images {
            image.reset();
        }
        let mut top = Top::default();
        let (mut at, mut byte) = self.token()?;
        if byte == b'}' {
            return Some(top);
        }
        loop {
            let key = self.key(at, byte)?;
            let (value_at, value) = self.token()?;
            match (key, outer) {
                (EnvelopeKey::Op | EnvelopeKey::Before | EnvelopeKey::After, _)
                    if top.direct.is_some() =>
                {
                    return None
                }
                // A key read twice: serde_json's scan refuses it, naming the key.
                (EnvelopeKey::Op, _) if top.fields.op.is_set() => return None,
                (EnvelopeKey::Before, _) if self.images[0].image != Image::Missing => return None,
                (EnvelopeKey::After, _) if self.images[1].image != Image::Missing => return None,
                (EnvelopeKey::Schema, true) if top.schema_seen => return None,
                (EnvelopeKey::Op, _) => {
                    let end = self.value(value_at, value)?;
                    top.fields.op = self.checked_span(value_at, end)?;
                }
                (EnvelopeKey::Before, _) => self.row(value_at, value, 0)?,
                (EnvelopeKey::After, _) => self.row(value_at, value, 1)?,
                (EnvelopeKey::Schema, true) => {
                    let end = self.value(value_at, value)?;
                    top.fields.schema = self.checked_span(value_at, end)?;
                    top.schema_seen = true;
                }
                (EnvelopeKey::Payload, true) => self.payload(value_at, value, &mut top)?,
                _ => {
                    self.value(value_at, value)?;
                }
            }
            match self.token()?.1 {
                b',' => (at, byte) = self.token()?,
                b'}' => return Some(top),
                _ => return None,
            }
        }
    }

    /// A top-level `payload` value starting at `at`: walked as the envelope when `schema` came
    /// before it and it is an object, else skipped and remembered.
    fn payload(&mut self, at: usize, first: u8, top: &mut Top) -> Option<()> {
        if !top.fields.payload.get(self.input).is_empty() {
            return None;
        }
        let token = self.next - 1;
        if top.schema_seen && first == b'{' {
            let inner = self.object(false)?;
            let end = self.at[self.next - 1] as usize + 1;
            top.fields.payload = self.checked_span(at, end)?;
            top.direct = Some(inner.fields.op);
            return Some(());
        }
        let end = self.value(at, first)?;
        top.fields.payload = self.checked_span(at, end)?;
        top.payload_token = (first == b'{').then_some(token);
        Some(())
    }

    /// The key at `at` (first byte `byte`) of an envelope object, and its colon.
    fn key(&mut self, at: usize, byte: u8) -> Option<EnvelopeKey> {
        let key = match self.key_text(at, byte)? {
            b"op" => EnvelopeKey::Op,
            b"before" => EnvelopeKey::Before,
            b"after" => EnvelopeKey::After,
            b"schema" => EnvelopeKey::Schema,
            b"payload" => EnvelopeKey::Payload,
            _ => EnvelopeKey::Other,
        };
        self.expect(b':')?;
        Some(key)
    }

    /// The unescaped text of the key string at `at` (first byte `byte`).
    #[inline(always)]
    fn key_text(&mut self, at: usize, byte: u8) -> Option<&[u8]> {
        if byte != b'"' {
            return None;
        }
        let close = self.string_end() - 1;
        let body = &self.input[at + 1..close];
        let passed = self
            .escapes
            .iter()
            .take_while(|&&e| (e as usize) < at)
            .count();
        self.escapes = &self.escapes[passed..];
        match self.escapes.first() {
            Some(&e) if (e as usize) < close => unescape(body, self.key).ok(),
            _ => Some(body),
        }
    }

    /// A `before` (`side` 0) or `after` (1) value starting at `at`: null, or an object whose
    /// declared columns' spans are kept.
    fn row(&mut self, at: usize, first: u8, side: usize) -> Option<()> {
        if first == b'n' {
            self.scalar(at)?;
            self.images[side].image = Image::Null;
            return Some(());
        }
        if first != b'{' {
            return None;
        }
        self.images[side].clear_columns();
        let (mut at, mut byte) = self.token()?;
        let (mut hint, columns) = (0, self.columns);
        if byte != b'}' {
            loop {
                let column = columns.find(self.key_text(at, byte)?, hint);
                self.expect(b':')?;
                let (value_at, value) = self.token()?;
                let end = self.value(value_at, value)?;
                if let Some(i) = column {
                    if self.images[side].columns[i].is_set() {
                        return None; // a column twice: refused by serde_json's scan
                    }
                    self.images[side].columns[i] = self.checked_span(value_at, end)?;
                    hint = i + 1;
                }
                match self.token()?.1 {
                    b',' => (at, byte) = self.token()?,
                    b'}' => break,
                    _ => return None,
                }
            }
        }
        self.images[side].image = Image::Object;
        Some(())
    }

    /// Skips the value whose first token is at `at` (first byte `first`); its end offset.
    #[inline(always)]
    fn value(&mut self, at: usize, first: u8) -> Option<usize> {
        match first {
            b'"' => Some(self.string_end()),
            b'{' | b'[' => self.container(first),
            _ => self.scalar(at),
        }
    }

    /// Skips the rest of an object or array whose opening bracket `open` was just read; its end
    /// offset. Brackets still open are kept on the stack, so depth costs no recursion.
    fn container(&mut self, open: u8) -> Option<usize> {
        self.stack.clear();
        let mut top = open;
        // `{` + 2 is `}`, `[` + 2 is `]`.
        let (mut at, mut byte) = self.token()?;
        if byte == top + 2 {
            return Some(at + 1);
        }
        loop {
            if top == b'{' {
                if byte != b'"' {
                    return None;
                }
                self.expect(b':')?;
                (at, byte) = self.token()?;
            }
            match byte {
                b'{' | b'[' => {
                    let (inner_at, inner) = self.token()?;
                    if inner != byte + 2 {
                        self.stack.push(top);
                        top = byte;
                        (at, byte) = (inner_at, inner);
                        continue;
                    }
                }
                b'"' => {}
                _ => {
                    self.scalar(at)?;
                }
            }
            // After a value: a comma, or the closing bracket of one or more containers.
            loop {
                let (close_at, close) = self.token()?;
                if close == b',' {
                    (at, byte) = self.token()?;
                    break;
                }
                if close != top + 2 {
                    return None;
                }
                match self.stack.pop() {
                    Some(outer) => top = outer,
                    None => return Some(close_at + 1),
                }
            }
        }
    }

    /// Checks the number or literal at `at`; its end offset.
    #[inline(always)]
    fn scalar(&self, at: usize) -> Option<usize> {
        let input = self.input;
        let end = match input[at] {
            b't' => literal(input, at, b"true"),
            b'f' => literal(input, at, b"false"),
            b'n' => literal(input, at, b"null"),
            _ => number(input, at),
        }?;
        // The token ends there: at the next token or at whitespace.
        let next = self.at.get(self.next).map_or(input.len(), |&n| n as usize);
        let ends = end == next || input.get(end).copied().is_some_and(is_space);
        ends.then_some(end)
    }
}

/// The keys that matter in an envelope.
#[derive(Clone, Copy, PartialEq, Eq)]
enum EnvelopeKey {
    Op,
    Before,
    After,
    Schema,
    Payload,
    Other,
}

/// Whether `b` is JSON whitespace.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The end of `word` spelled at `at`.
fn literal(input: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    let end = at + word.len();
    (input.get(at..end)? == word).then_some(end)
}

/// The end of the run of ASCII digits at `from`, eight bytes at a time ([`non_digits`]).
fn digits_end(input: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(&word) = input.get(i..).and_then(|rest| rest.first_chunk::<8>()) {
        let other = non_digits(u64::from_le_bytes(word));
        if other != 0 {
            return i + (other.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while input.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

/// The end of the JSON number at `at`: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn number(input: &[u8], at: usize) -> Option<usize> {
    let digits = |from: usize| {
        let end = digits_end(input, from);
        (end > from).then_some(end)
    };
    let mut i = at + usize::from(input[at] == b'-');
    i = match input.get(i)? {
        b'0' => i + 1,
        b'1'..=b'9' => digits(i)?,
        _ => return None,
    };
    if input.get(i) == Some(&b'.') {
        i = digits(i + 1)?;
    }
    if matches!(input.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(input.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(i)?;
    }
    Some(i)
}

#[cfg(test)]
mod tests {
    //! The walk against serde_json. Every message scanned in this crate's tests goes through
    //! `envelope::scan`, which (in tests) asserts that serde_json finds the same spans whenever the
    //! walk accepts a message; here the walk meets generated envelopes, malformed and mutated
    //! ones, and the shared test vectors.

    use super::*;
    use crate::envelope::{scan, Spans};
    use proptest::prelude::*;

    /// The buffers of a scan, for the columns `id` and `name`.
    struct Scanner {
        columns: ColumnIndex,
        before: RowSpans,
        after: RowSpans,
        buffers: WalkBuffers,
    }

    impl Scanner {
        fn new(names: &[&str]) -> Scanner {
            let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            Scanner {
                before: RowSpans::new(names.len()),
                after: RowSpans::new(names.len()),
                columns: ColumnIndex::new(names),
                buffers: WalkBuffers::default(),
            }
        }

        /// The crate's scan (cross-checked against serde_json when the walk accepts).
        fn scan(&mut self, input: &[u8]) -> Result<Scanned, String> {
            let spans = Spans {
                columns: &self.columns,
                before: &mut self.before,
                after: &mut self.after,
            };
            scan(input, spans, &mut self.buffers)
        }

        /// Whether the walk alone accepts `input`.
        fn walks(&mut self, input: &[u8]) -> bool {
            let images = [&mut self.before, &mut self.after];
            super::scan(input, &self.columns, images, &mut self.buffers).is_some()
        }
    }

    fn string() -> impl Strategy<Value = String> {
        let part = prop_oneof![
            "[a-z0-9 ,:{}\\[\\]]{0,6}",
            Just("é€".to_string()),
            Just("\\\"".to_string()),
            Just("\\\\".to_string()),
            Just("\\n\\t\\/".to_string()),
            "\\\\u00[0-7][0-9a-fA-F]",
        ];
        prop::collection::vec(part, 0..4).prop_map(|p| format!("\"{}\"", p.concat()))
    }

    fn number() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<i64>().prop_map(|n| n.to_string()),
            "-?(0|[1-9][0-9]{0,20})(\\.[0-9]{1,4})?([eE][+-]?[0-9]{1,3})?",
            Just("1e999".to_string()),
        ]
    }

    fn scalar() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            Just("false".to_string()),
            number(),
            string(),
        ]
    }

    /// A key: one the envelope or its images look for, or any other.
    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "\"id\"",
                "\"name\"",
                "\"n\\u0061me\"",
                "\"op\"",
                "\"db\""
            ])
            .prop_map(String::from),
            string(),
        ]
    }

    /// Whitespace between tokens.
    fn space() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec!["", "", " ", "\n\t ", "\r\n"])
    }

    fn object(entries: Vec<(String, String)>, ws: &str) -> String {
        let members: Vec<String> = entries
            .iter()
            .map(|(k, v)| format!("{ws}{k}{ws}:{ws}{v}{ws}"))
            .collect();
        format!("{{{}}}", members.join(","))
    }

    fn value() -> impl Strategy<Value = String> {
        scalar().prop_recursive(5, 40, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5)
                    .prop_map(|v| format!("[{}]", v.join(", "))),
                (prop::collection::vec((key(), inner), 0..5), space())
                    .prop_map(|(e, ws)| object(e, ws)),
            ]
        })
    }

    /// A row image: null or an object of declared and other columns.
    fn image() -> impl Strategy<Value = String> {
        prop_oneof![
            1 => Just("null".to_string()),
            4 => (prop::collection::vec((key(), value()), 0..5), space())
                .prop_map(|(e, ws)| object(e, ws)),
        ]
    }

    /// An envelope: `op`, images and other fields (`source`, `ts_ms`, ...) in any order.
    fn envelope() -> impl Strategy<Value = String> {
        let entry = prop_oneof![
            prop::sample::select(vec!["\"c\"", "\"u\"", "\"d\"", "\"\\u0072\"", "null", "1"])
                .prop_map(|op| ("\"op\"".to_string(), op.to_string())),
            image().prop_map(|i| ("\"before\"".to_string(), i)),
            image().prop_map(|i| ("\"after\"".to_string(), i)),
            value().prop_map(|v| ("\"source\"".to_string(), v)),
            (key(), value()),
        ];
        (prop::collection::vec(entry, 0..6), space()).prop_map(|(e, ws)| object(e, ws))
    }

    /// A bare envelope, or one wrapped in `{"schema", "payload"}` with the keys in either order.
    fn message() -> impl Strategy<Value = String> {
        prop_oneof![
            envelope(),
            (value(), envelope(), any::<bool>(), space()).prop_map(
                |(schema, payload, first, ws)| {
                    let (schema, payload) = (
                        ("\"schema\"".to_string(), schema),
                        ("\"payload\"".to_string(), payload),
                    );
                    let entries = if first {
                        vec![schema, payload]
                    } else {
                        vec![payload, schema]
                    };
                    object(entries, ws)
                }
            ),
        ]
    }

    /// One to three byte edits: removed, replaced or inserted bytes JSON cares about.
    fn mutated() -> impl Strategy<Value = Vec<u8>> {
        let edit = (
            any::<prop::sample::Index>(),
            0..3u8,
            prop::sample::select(EDITS.to_vec()),
        );
        (message(), prop::collection::vec(edit, 1..4)).prop_map(|(m, edits)| {
            let mut bytes = m.into_bytes();
            for (at, kind, byte) in edits {
                let at = at.index(bytes.len() + 1);
                match kind {
                    0 if at < bytes.len() => {
                        bytes.remove(at);
                    }
                    1 if at < bytes.len() => bytes[at] = byte,
                    _ => bytes.insert(at, byte),
                }
            }
            bytes
        })
    }

    const EDITS: &[u8] = b"\"\\{}[]:, \t0-.eEnul\x00\x1f\xff\xc3";

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn the_walk_accepts_what_serde_json_accepts(m in message()) {
            let mut s = Scanner::new(&["id", "name"]);
            let serde_accepts = s.scan(m.as_bytes()).is_ok();
            // The generated keys have no control character or lone surrogate, and no top-level
            // image follows a wrapper's payload: the walk must take every valid message.
            prop_assert_eq!(s.walks(m.as_bytes()), serde_accepts, "{}", m);
        }

        #[test]
        fn mutated_messages_scan_as_serde_json_scans_them(m in mutated()) {
            // `scan` asserts the agreement whenever the walk accepts.
            let _ = Scanner::new(&["id", "name"]).scan(&m);
        }
    }

    #[test]
    fn the_test_vectors_scan_alike() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/vectors");
        let mut scanned = 0;
        for file in std::fs::read_dir(dir).expect("the vectors") {
            let path = file.expect("a file").path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("readable");
            let vector: serde_json::Value = serde_json::from_str(&text).expect("JSON");
            let names = |side: &str| -> Vec<String> {
                vector[side]["schema"]["fields"]
                    .as_array()
                    .expect("fields")
                    .iter()
                    .map(|f| f["name"].as_str().expect("a name").to_string())
                    .collect()
            };
            let (left, right) = (names("left"), names("right"));
            for event in vector["events"].as_array().expect("events") {
                let names = if event["side"] == "left" {
                    &left
                } else {
                    &right
                };
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                let mut s = Scanner::new(&names);
                for json in [
                    serde_json::to_string(&event["value"]).expect("JSON"),
                    serde_json::to_string_pretty(&event["value"]).expect("JSON"),
                ] {
                    assert!(s.walks(json.as_bytes()), "{json}");
                    s.scan(json.as_bytes()).expect("a valid envelope");
                    scanned += 1;
                }
            }
        }
        assert!(scanned >= 50, "{scanned} messages");
    }

    #[test]
    fn deep_skipped_blocks_are_walked_without_recursion() {
        let mut s = Scanner::new(&["id"]);
        let deep = "[".repeat(200_000) + &"]".repeat(200_000);
        let json = format!(r#"{{"source":{deep},"op":"c","after":{{"id":{deep}}}}}"#);
        assert!(s.walks(json.as_bytes()));
        let unbalanced = format!(r#"{{"source":{}}},"op":"c"}}"#, "[".repeat(100_000));
        assert!(s.scan(unbalanced.as_bytes()).is_err());
        let crossed = r#"{"source":[{"a":1]},"op":"c"}"#;
        assert!(!s.walks(crossed.as_bytes()));
        assert!(s.scan(crossed.as_bytes()).is_err());
    }

    #[test]
    fn declined_but_valid_shapes_go_to_serde_json() {
        let mut s = Scanner::new(&["id"]);
        for json in [
            // A raw control character in a column key, which serde_json reads as bytes.
            &b"{\"op\":\"c\",\"after\":{\"i\x01d\":1,\"id\":2}}"[..],
            // An unpaired surrogate escape in a key.
            br#"{"op":"c","after":{"\ud800":1,"id":2}}"#,
            // A top-level image after a wrapper's payload: the payload's images count.
            br#"{"schema":{},"payload":{"op":"c","after":{"id":3}},"after":{"id":4}}"#,
        ] {
            assert!(!s.walks(json), "{}", String::from_utf8_lossy(json));
            assert!(s.scan(json).is_ok(), "{}", String::from_utf8_lossy(json));
        }
    }

    #[test]
    fn digit_runs_end_at_the_first_other_byte() {
        for text in [
            "",
            "1",
            "12345678",
            "123456789",
            "1234567a9",
            "0123456789012345/",
            "99999999:",
        ] {
            let expected = text.bytes().take_while(u8::is_ascii_digit).count();
            assert_eq!(digits_end(text.as_bytes(), 0), expected, "{text}");
        }
        for other in (0..=255u8).filter(|b| !b.is_ascii_digit()) {
            let mut bytes = *b"0123456789012345";
            bytes[5] = other;
            bytes[4] = b'9';
            assert_eq!(digits_end(&bytes, 0), 5, "{other:#x}");
        }
    }

    #[test]
    fn numbers_and_literals_follow_the_grammar() {
        let mut s = Scanner::new(&["id"]);
        for n in [
            "0",
            "-0",
            "12",
            "-1.5e+3",
            "1E9",
            "0.25",
            "1e999",
            "123456789012345678901234",
        ] {
            let json = format!(r#"{{"op":"c","after":{{"id":{n}}},"x":[{n}]}}"#);
            assert!(s.walks(json.as_bytes()), "{json}");
        }
        for bad in [
            "01", "-", "1.", ".5", "1e", "1e+", "+1", "1x", "tru", "nul", "truex", "NaN",
        ] {
            let json = format!(r#"{{"op":"c","x":[{bad}]}}"#);
            assert!(!s.walks(json.as_bytes()), "{json}");
            assert!(s.scan(json.as_bytes()).is_err(), "{json}");
        }
    }
}
