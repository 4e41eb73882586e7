//! One pass over an envelope's JSON: where are `op` and each column of `before` and `after`?
//!
//! This is the hot path, and it has two implementations that find the same thing:
//!
//! * **The walk** (the `walk` module, over the `structural` index): simdjson's stage 1 finds every
//!   token of the message 64 bytes at a time, and the walk reads the envelope through that index,
//!   validating the whole message with JSON's grammar. It takes every well-formed message but a
//!   few odd shapes, at about twice serde_json's speed (bench/README.md, "Decode").
//! * **serde_json**, with hand-written visitors instead of a `Value` tree: for every message the
//!   walk declines, which includes every malformed one, so that errors keep serde_json's wording,
//!   line and column. It is also the reference the walk is tested against (in tests, every scan
//!   the walk accepts is repeated with serde_json and must find the same spans).
//!
//! What both do:
//!
//! * envelope keys are matched as bytes (unescaped, not UTF-8 validated: see `KeyVisitor`);
//!   everything but `op`, `before`, `after` (and, at the top level, `schema` and `payload`) is
//!   skipped, its syntax validated (`source`, `ts_ms`, ...);
//! * inside `before`/`after`, each key is looked up among the declared columns (first at the
//!   position after the previous hit, since connectors write columns in table order), and its value
//!   is captured as the span a `RawValue` holds: validated JSON text (UTF-8 checked), nothing
//!   decoded yet. Extra columns are skipped.
//!
//! The result is a set of [`Span`]s (byte ranges into the input), kept in buffers the decoder
//! reuses, so scanning allocates nothing. Decoding the values happens later, in schema order, and
//! only for the images the op needs.
//!
//! The Kafka Connect wrapper `{"schema": ..., "payload": ...}` is recognised at the top level: an
//! object with a `schema` key and a `payload` that is an object (or null, a tombstone). Its schema
//! is captured as a span, for the decoder to resolve column encodings from (the `connect` module).
//! Whether the object is a wrapper is only known once both keys are seen: the walk reads a payload
//! that follows `schema` (Kafka Connect's order) as the envelope directly, and one that comes
//! first again from its tokens once `schema` has been seen; serde_json captures the payload as a
//! span and scans it again.

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::Deserializer as _;
use serde_json::value::RawValue;
use std::fmt;

mod walk;

pub(crate) use walk::WalkBuffers;

/// A byte range of the input holding one JSON value; empty when the value is absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    start: usize,
    end: usize,
}

impl Span {
    /// The span of `raw`, a value borrowed from the input that starts at address `base`.
    fn of(raw: &RawValue, base: usize) -> Span {
        let text = raw.get();
        let start = (text.as_ptr() as usize).wrapping_sub(base);
        Span {
            start,
            end: start.wrapping_add(text.len()),
        }
    }

    /// Whether a value was found: a found value ends past the input's first byte, the default
    /// (absent) span at 0. One comparison, for the walk's check that a column comes once.
    #[inline(always)]
    fn is_set(self) -> bool {
        self.end != 0
    }

    /// The JSON text in `input`; empty for an absent value.
    pub(crate) fn get(self, input: &[u8]) -> &[u8] {
        input.get(self.start..self.end).unwrap_or_default()
    }
}

/// What an envelope holds for `before` or `after`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Image {
    /// No such key.
    #[default]
    Missing,
    /// JSON `null`.
    Null,
    /// An object: its columns are in [`RowSpans::columns`].
    Object,
}

/// The `before` or `after` image of one envelope: the span of each declared column, by position.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RowSpans {
    pub(crate) image: Image,
    pub(crate) columns: Vec<Span>,
}

impl RowSpans {
    /// Empty spans for `arity` columns.
    pub(crate) fn new(arity: usize) -> RowSpans {
        RowSpans {
            image: Image::Missing,
            columns: vec![Span::default(); arity],
        }
    }

    fn reset(&mut self) {
        self.image = Image::Missing;
    }

    fn clear_columns(&mut self) {
        self.columns.fill(Span::default());
    }
}

/// Finds declared columns by name. Names are compared as the key's bytes (see [`KeyVisitor`]).
///
/// A message's columns mostly come in the declared order, so the column after the last one found
/// is tried first; the rest, and every column the schema does not declare (a table's columns the
/// job does not read, asked for in every message), go to a map hashed with foldhash rather than
/// the standard library's SipHash, which cost a tenth of the decoder's instructions where a schema
/// declares a few of a table's columns. The map only holds the declared names, so no input can
/// make its lookups slower.
#[derive(Clone, Debug)]
pub(crate) struct ColumnIndex {
    names: Vec<Box<[u8]>>,
    by_name: foldhash::HashMap<Box<[u8]>, usize>,
}

impl ColumnIndex {
    /// An index of `names` (which must be distinct).
    pub(crate) fn new(names: Vec<String>) -> ColumnIndex {
        let names: Vec<Box<[u8]>> = names.into_iter().map(|n| n.into_bytes().into()).collect();
        let by_name = names.iter().cloned().zip(0..).collect();
        ColumnIndex { names, by_name }
    }

    /// The name of column `i`, for messages.
    fn name(&self, i: usize) -> String {
        String::from_utf8_lossy(&self.names[i]).into_owned()
    }

    /// Position of `name`, trying `hint` first.
    #[inline]
    fn find(&self, name: &[u8], hint: usize) -> Option<usize> {
        match self.names.get(hint) {
            Some(n) if short_eq(n, name) => Some(hint),
            _ => self.lookup(name),
        }
    }

    /// Position of `name` by its hash: out of line, so that [`ColumnIndex::find`]'s usual case
    /// (the hinted column) inlines into the walk.
    #[inline(never)]
    fn lookup(&self, name: &[u8]) -> Option<usize> {
        self.by_name.get(name).copied()
    }
}

/// `a == b`, for column names: up to 16 bytes compared as two overlapping words each side, not
/// through a library `memcmp`, whose call cost more than the comparison (every column of every
/// message is compared with its expected name).
#[inline]
fn short_eq(a: &[u8], b: &[u8]) -> bool {
    fn word<const N: usize>(s: &[u8], at: usize) -> [u8; N] {
        s[at..at + N].try_into().expect("N bytes")
    }
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=8 => word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, n - 4) == word::<4>(b, n - 4),
        9..=16 => word::<8>(a, 0) == word::<8>(b, 0) && word::<8>(a, n - 8) == word::<8>(b, n - 8),
        _ => a == b,
    }
}

/// The outcome of scanning one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scanned {
    /// JSON `null`, or a wrapper whose payload is null.
    Tombstone,
    /// An envelope; its images are in the row spans.
    Envelope {
        /// The `op` value (empty when absent).
        op: Span,
        /// The wrapper's `schema` value (empty for a bare envelope).
        schema: Span,
    },
}

/// The buffers a scan fills, reused from record to record.
pub(crate) struct Spans<'a> {
    pub(crate) columns: &'a ColumnIndex,
    pub(crate) before: &'a mut RowSpans,
    pub(crate) after: &'a mut RowSpans,
}

/// Scans `input` (a non-blank message), filling `spans`: through its structural index (the `walk`
/// module), or with serde_json where the walk declines, which includes every malformed message.
/// Errors are serde_json's, with line and column; an error inside a wrapper's payload says so.
pub(crate) fn scan(
    input: &[u8],
    spans: Spans<'_>,
    buffers: &mut WalkBuffers,
) -> Result<Scanned, String> {
    let Spans {
        columns,
        before,
        after,
    } = spans;
    #[cfg(test)]
    let earlier = (before.clone(), after.clone());
    match walk::scan(input, columns, [&mut *before, &mut *after], buffers) {
        Some(scanned) => {
            #[cfg(test)]
            tests::same_as_serde(input, columns, earlier, (&*before, &*after), scanned);
            Ok(scanned)
        }
        None => scan_serde(
            input,
            Spans {
                columns,
                before,
                after,
            },
        ),
    }
}

/// [`scan`] with serde_json alone: the reference the walk is tested against, and the scan of
/// every message the walk declines.
fn scan_serde(input: &[u8], spans: Spans<'_>) -> Result<Scanned, String> {
    let base = input.as_ptr() as usize;
    let Spans {
        columns,
        before,
        after,
    } = spans;
    let mut scanner = Scanner {
        base,
        columns,
        before,
        after,
        outer: true,
    };
    let Some(top) = scanner.scan_object(input).map_err(|e| e.to_string())? else {
        return Ok(Scanned::Tombstone);
    };
    let payload = top.payload.get(input);
    if top.schema.get(input).is_empty() || !matches!(payload.first(), Some(b'{' | b'n')) {
        return Ok(Scanned::Envelope {
            op: top.op,
            schema: Span::default(),
        });
    }
    scanner.outer = false;
    match scanner.scan_object(payload) {
        Ok(Some(inner)) => Ok(Scanned::Envelope {
            op: inner.op,
            schema: top.schema,
        }),
        Ok(None) => Ok(Scanned::Tombstone),
        Err(e) => Err(format!("in \"payload\": {e}")),
    }
}

/// Scans `input`, one flat row object (an upsert-kafka record's key or value), into `row`, the
/// other image reset to missing. Errors are serde_json's.
pub(crate) fn scan_row(input: &[u8], spans: Spans<'_>, into_after: bool) -> Result<(), String> {
    let Spans {
        columns,
        before,
        after,
    } = spans;
    before.reset();
    after.reset();
    let row = if into_after { after } else { before };
    let mut de = serde_json::Deserializer::from_slice(input);
    let seed = RowSeed {
        base: input.as_ptr() as usize,
        columns,
        spans: row,
    };
    seed.deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(|e| e.to_string())?;
    if row.image != Image::Object {
        return Err("expected a row (a JSON object), found null".into());
    }
    Ok(())
}

/// What one envelope object says at its own level.
#[derive(Default)]
struct Fields {
    op: Span,
    payload: Span,
    schema: Span,
}

struct Scanner<'a> {
    base: usize,
    columns: &'a ColumnIndex,
    before: &'a mut RowSpans,
    after: &'a mut RowSpans,
    /// At the top level, where `schema`/`payload` may make this a wrapper.
    outer: bool,
}

impl Scanner<'_> {
    /// Scans one JSON value that should be an envelope object; `None` for `null`.
    fn scan_object(&mut self, bytes: &[u8]) -> Result<Option<Fields>, serde_json::Error> {
        self.before.reset();
        self.after.reset();
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let fields = de.deserialize_any(EnvelopeVisitor(self))?;
        de.end()?;
        Ok(fields)
    }
}

/// The keys an envelope may have that matter.
#[derive(Clone, Copy)]
enum Key {
    Op,
    Before,
    After,
    Schema,
    Payload,
    Other,
}

impl Key {
    /// How many keys are read (all but [`Key::Other`]).
    const READ: usize = Key::Other as usize;

    /// The key's name if the scan reads its value (`schema` and `payload` only at the top level,
    /// `outer`): a key read twice could be meant either way, so it is refused.
    fn read(self, outer: bool) -> Option<&'static str> {
        match self {
            Key::Op => Some("op"),
            Key::Before => Some("before"),
            Key::After => Some("after"),
            Key::Schema if outer => Some("schema"),
            Key::Payload if outer => Some("payload"),
            _ => None,
        }
    }
}

impl<'de> de::Deserialize<'de> for Key {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        d.deserialize_bytes(KeyVisitor)
    }
}

/// Reads object keys as bytes: serde_json then unescapes them but skips the UTF-8 validation a
/// `str` key costs, a measurable share of the scan since every key of an envelope and of its
/// images is read. A key that is not valid UTF-8 simply matches nothing (the values, which are
/// decoded, are still validated).
struct KeyVisitor;

impl Visitor<'_> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Key, E> {
        Ok(match v {
            b"op" => Key::Op,
            b"before" => Key::Before,
            b"after" => Key::After,
            b"schema" => Key::Schema,
            b"payload" => Key::Payload,
            _ => Key::Other,
        })
    }
}

struct EnvelopeVisitor<'s, 'a>(&'s mut Scanner<'a>);

impl<'de> Visitor<'de> for EnvelopeVisitor<'_, '_> {
    type Value = Option<Fields>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Debezium change envelope (a JSON object)")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let s = self.0;
        let mut fields = Fields::default();
        let mut seen = [false; Key::READ];
        while let Some(key) = map.next_key::<Key>()? {
            if let Some(name) = key.read(s.outer) {
                if std::mem::replace(&mut seen[key as usize], true) {
                    return Err(de::Error::custom(format_args!(
                        "duplicate key \"{name}\" in the envelope"
                    )));
                }
            }
            match key {
                Key::Op => fields.op = Span::of(map.next_value()?, s.base),
                Key::Before => map.next_value_seed(s.row(true))?,
                Key::After => map.next_value_seed(s.row(false))?,
                Key::Payload if s.outer => fields.payload = Span::of(map.next_value()?, s.base),
                Key::Schema if s.outer => fields.schema = Span::of(map.next_value()?, s.base),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Some(fields))
    }
}

impl Scanner<'_> {
    fn row(&mut self, before: bool) -> RowSeed<'_> {
        RowSeed {
            base: self.base,
            columns: self.columns,
            spans: if before {
                &mut *self.before
            } else {
                &mut *self.after
            },
        }
    }
}

/// Captures the column spans of one `before`/`after` value.
struct RowSeed<'s> {
    base: usize,
    columns: &'s ColumnIndex,
    spans: &'s mut RowSpans,
}

impl<'de> DeserializeSeed<'de> for RowSeed<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for RowSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a row image (a JSON object) or null")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.spans.image = Image::Null;
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.spans.clear_columns();
        let mut hint = 0;
        let seed = |hint| ColumnKey {
            columns: self.columns,
            hint,
        };
        while let Some(column) = map.next_key_seed(seed(hint))? {
            match column {
                Some(i) => {
                    if self.spans.columns[i].is_set() {
                        return Err(de::Error::custom(format_args!(
                            "duplicate column \"{}\" in a row image",
                            self.columns.name(i)
                        )));
                    }
                    let raw: &'de RawValue = map.next_value()?;
                    self.spans.columns[i] = Span::of(raw, self.base);
                    hint = i + 1;
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        self.spans.image = Image::Object;
        Ok(())
    }
}

/// A key of a row image, resolved to a declared column's position (`None` for extra columns).
struct ColumnKey<'s> {
    columns: &'s ColumnIndex,
    hint: usize,
}

impl<'de> DeserializeSeed<'de> for ColumnKey<'_> {
    type Value = Option<usize>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Option<usize>, D::Error> {
        d.deserialize_bytes(self)
    }
}

/// Like [`KeyVisitor`], reads the column name as bytes.
impl Visitor<'_> for ColumnKey<'_> {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a column name")
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Option<usize>, E> {
        Ok(self.columns.find(v, self.hint))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asserts that serde_json's scan, from the same buffers as the walk started with, finds
    /// what the walk found: run on every message the crate's tests scan.
    pub(super) fn same_as_serde(
        input: &[u8],
        columns: &ColumnIndex,
        (mut before, mut after): (RowSpans, RowSpans),
        walked: (&RowSpans, &RowSpans),
        scanned: Scanned,
    ) {
        let spans = Spans {
            columns,
            before: &mut before,
            after: &mut after,
        };
        let message = String::from_utf8_lossy(input);
        assert_eq!(scan_serde(input, spans), Ok(scanned), "{message}");
        assert_eq!((&before, &after), walked, "{message}");
    }

    #[test]
    fn short_eq_is_slice_equality() {
        // Every length up to past the word paths, each byte in turn made to differ.
        for n in 0..=20usize {
            let a: Vec<u8> = (0..n as u8).map(|i| b'a' + i).collect();
            assert!(short_eq(&a, &a.clone()), "{n}");
            if n > 0 {
                assert!(!short_eq(&a, &a[..n - 1]), "{n}");
            }
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!short_eq(&a, &b), "{n} bytes, byte {at}");
            }
        }
    }

    struct Fixture {
        columns: ColumnIndex,
        before: RowSpans,
        after: RowSpans,
        buffers: WalkBuffers,
    }

    impl Fixture {
        fn new() -> Fixture {
            Fixture {
                columns: ColumnIndex::new(vec!["id".into(), "name".into()]),
                before: RowSpans::new(2),
                after: RowSpans::new(2),
                buffers: WalkBuffers::default(),
            }
        }

        fn scan(&mut self, json: &str) -> Result<Scanned, String> {
            self.scan_bytes(json.as_bytes())
        }

        fn scan_bytes(&mut self, json: &[u8]) -> Result<Scanned, String> {
            scan(
                json,
                Spans {
                    columns: &self.columns,
                    before: &mut self.before,
                    after: &mut self.after,
                },
                &mut self.buffers,
            )
        }

        fn text(json: &str, span: Span) -> &str {
            std::str::from_utf8(span.get(json.as_bytes())).unwrap()
        }
    }

    #[test]
    fn captures_op_and_columns_in_any_order() {
        let mut f = Fixture::new();
        let json = r#"{"source":{"db":"x","n":[1,{"a":2}]},"after":{"name":"a\"b","extra":[1],"id":7},
            "op":"c","before":null,"ts_ms":1}"#;
        let Scanned::Envelope { op, .. } = f.scan(json).unwrap() else {
            panic!("not an envelope")
        };
        assert_eq!(Fixture::text(json, op), "\"c\"");
        assert_eq!(f.before.image, Image::Null);
        assert_eq!(f.after.image, Image::Object);
        assert_eq!(Fixture::text(json, f.after.columns[0]), "7");
        assert_eq!(Fixture::text(json, f.after.columns[1]), r#""a\"b""#);
    }

    #[test]
    fn absent_columns_and_images() {
        let mut f = Fixture::new();
        let json = r#"{"op":"u","after":{"name":"x"}}"#;
        assert!(matches!(f.scan(json), Ok(Scanned::Envelope { .. })));
        assert_eq!(f.before.image, Image::Missing);
        assert_eq!(f.after.columns[0].get(json.as_bytes()), b"");
        // A second record does not see the first one's columns.
        let json2 = r#"{"op":"u","after":{"id":1}}"#;
        f.scan(json2).unwrap();
        assert_eq!(f.after.columns[1].get(json2.as_bytes()), b"");
    }

    #[test]
    fn wrapper_detection() {
        let mut f = Fixture::new();
        let wrapped =
            r#"{"schema":{"type":"struct","fields":[]},"payload":{"op":"d","before":{"id":3}}}"#;
        let Scanned::Envelope { op, schema } = f.scan(wrapped).unwrap() else {
            panic!()
        };
        assert_eq!(Fixture::text(wrapped, op), "\"d\"");
        assert_eq!(
            Fixture::text(wrapped, schema),
            r#"{"type":"struct","fields":[]}"#
        );
        assert_eq!(Fixture::text(wrapped, f.before.columns[0]), "3");
        let payload_first = r#"{"payload":{"op":"r","after":{"id":4}},"schema":null}"#;
        assert!(matches!(
            f.scan(payload_first),
            Ok(Scanned::Envelope { .. })
        ));
        assert_eq!(Fixture::text(payload_first, f.after.columns[0]), "4");
        assert_eq!(
            f.scan(r#"{"schema":{},"payload":null}"#),
            Ok(Scanned::Tombstone)
        );
        // Without "schema", "payload" is just another ignored field.
        let plain = r#"{"payload":{"op":"x"},"op":"c","after":{"id":5}}"#;
        let Scanned::Envelope { op, schema } = f.scan(plain).unwrap() else {
            panic!()
        };
        assert_eq!(Fixture::text(plain, op), "\"c\"");
        assert_eq!(schema, Span::default());
        // A payload that is not an object does not make a wrapper.
        let scalar = r#"{"schema":1,"payload":"p","op":"c"}"#;
        let Scanned::Envelope { op, .. } = f.scan(scalar).unwrap() else {
            panic!()
        };
        assert_eq!(Fixture::text(scalar, op), "\"c\"");
    }

    #[test]
    fn flat_rows() {
        let mut f = Fixture::new();
        fn spans(f: &mut Fixture) -> Spans<'_> {
            Spans {
                columns: &f.columns,
                before: &mut f.before,
                after: &mut f.after,
            }
        }
        let json = r#"{"name":"x","id":3,"other":[1]}"#;
        scan_row(json.as_bytes(), spans(&mut f), true).unwrap();
        assert_eq!(
            (f.before.image, f.after.image),
            (Image::Missing, Image::Object)
        );
        assert_eq!(Fixture::text(json, f.after.columns[0]), "3");
        scan_row(br#"{"id":4}"#, spans(&mut f), false).unwrap();
        assert_eq!(
            (f.before.image, f.after.image),
            (Image::Object, Image::Missing)
        );
        assert!(scan_row(b"null", spans(&mut f), false).is_err());
        assert!(scan_row(b"[1]", spans(&mut f), false).is_err());
        assert!(scan_row(br#"{"id":1} x"#, spans(&mut f), false).is_err());
    }

    #[test]
    fn keys_are_matched_after_unescaping_and_need_not_be_utf8() {
        let mut f = Fixture::new();
        let escaped = r#"{"\u006fp":"c","aft\u0065r":{"\u0069d":8}}"#;
        let Scanned::Envelope { op, .. } = f.scan(escaped).unwrap() else {
            panic!("not an envelope")
        };
        assert_eq!(Fixture::text(escaped, op), "\"c\"");
        assert_eq!(Fixture::text(escaped, f.after.columns[0]), "8");
        // A key that is not UTF-8 matches nothing; its value is still checked JSON.
        let mut bytes = br#"{"op":"c","x?":1,"after":{"id":9,"y?":[]}}"#.to_vec();
        for b in bytes.iter_mut().filter(|b| **b == b'?') {
            *b = 0xff;
        }
        assert!(matches!(f.scan_bytes(&bytes), Ok(Scanned::Envelope { .. })));
        assert_eq!(f.after.columns[0].get(&bytes), b"9");
    }

    #[test]
    fn null_is_a_tombstone_and_other_values_are_errors() {
        let mut f = Fixture::new();
        assert_eq!(f.scan(" null "), Ok(Scanned::Tombstone));
        let e = f.scan("[1]").unwrap_err();
        assert!(e.contains("expected a Debezium change envelope"), "{e}");
        let e = f.scan(r#"{"op":"c"} x"#).unwrap_err();
        assert!(e.contains("trailing characters at line 1 column 12"), "{e}");
        let e = f.scan(r#"{"op":"c","after":5}"#).unwrap_err();
        assert!(e.contains("expected a row image"), "{e}");
        let e = f
            .scan(r#"{"schema":{},"payload":{"after":[]}}"#)
            .unwrap_err();
        assert!(
            e.starts_with("in \"payload\": invalid type: sequence"),
            "{e}"
        );
    }
}
