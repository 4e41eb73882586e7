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

use super::{ColumnIndex, Fields, Image, RowSpans, Scanned, Span};
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
    /// The next token, as a position in `at`.
    next: usize,
    ascii: bool,
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
    /// The token position of a `payload` object walked later, or walked already (`direct`).
    payload_token: Option<usize>,
    /// The payload was walked as the envelope as it came (it followed `schema`).
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

    /// The offset of the quote closing the string just opened (always the next token).
    fn close_quote(&mut self) -> Option<usize> {
        let at = *self.at.get(self.next)? as usize;
        self.next += 1;
        Some(at)
    }

    /// The span of a value whose text, from `start` to `end`, a `RawValue` would check as UTF-8.
    fn checked_span(&self, start: usize, end: usize) -> Option<Span> {
        let utf8 = self.ascii || std::str::from_utf8(&self.input[start..end]).is_ok();
        utf8.then_some(Span { start, end })
    }

    /// The whole message: an envelope, a wrapper or `null`.
    fn message(&mut self) -> Option<Scanned> {
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
                self.next = token + 1;
                let inner = self.object(false)?;
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
        let text = self.key_text(at, byte)?;
        let key = match text {
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
    fn key_text(&mut self, at: usize, byte: u8) -> Option<&[u8]> {
        if byte != b'"' {
            return None;
        }
        let close = self.close_quote()?;
        unescape(&self.input[at + 1..close], self.key).ok()
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
    fn value(&mut self, at: usize, first: u8) -> Option<usize> {
        match first {
            b'"' => Some(self.close_quote()? + 1),
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
                self.close_quote()?;
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
                b'"' => {
                    self.close_quote()?;
                }
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
        let ends = end == next || input.get(end).is_some_and(|b| b" \t\n\r".contains(b));
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

/// The end of `word` spelled at `at`.
fn literal(input: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    let end = at + word.len();
    (input.get(at..end)? == word).then_some(end)
}

/// The end of the JSON number at `at`: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn number(input: &[u8], at: usize) -> Option<usize> {
    let digits = |from: usize| {
        let n = input.get(from..)?.iter().take_while(|b| b.is_ascii_digit()).count();
        (n > 0).then_some(from + n)
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
