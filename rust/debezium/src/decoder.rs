//! The decoder: configuration, the per-record entry point and the JSON row source.

use crate::connect::SchemaCache;
use crate::encoding::{temporal, BinaryHandling, DecimalHandling, Settings, TimePrecision};
use crate::envelope::{
    scan, scan_row, ColumnIndex, Image, RowSpans, Scanned, Span, Spans, WalkBuffers,
};
use crate::error::{excerpt, DecodeError, ErrorKind, Side};
use crate::numbers::BASE64;
use crate::ops::{apply_op, split_with, RowSource, Rules, UpdateMode};
use crate::sink::ChangeSink;
use crate::temporal::Temporal;
use crate::text::{string_body, unescape};
use crate::values::{json_string, ColumnReader, Scratch, ValueError};
use base64::Engine as _;
use cdcjoin_model::{DataType, Field, RowLayout, RowWriter, Schema};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::fmt;

#[cfg(test)]
mod no_panic;
#[cfg(test)]
mod tests;

/// Debezium's default `unavailable.value.placeholder`.
pub const DEFAULT_PLACEHOLDER: &str = "__debezium_unavailable_value";

/// What to decode and how: one side's schema and the encodings its connector uses.
///
/// This is a contract with the Java layer, which sends it as JSON:
///
/// ```json
/// { "schema": {"fields": [{"name": "id", "type": "BIGINT", "nullable": false}, ...]},
///   "update_mode": "Retract" | "DeleteInsert",                                  default "Retract"
///   "decimal_handling": "flink" | "precise" | "string" | "double",             default "flink"
///   "time_precision": "flink" | "adaptive" | "adaptive_time_microseconds" | "connect"
///                     | "isostring" | "microseconds" | "nanoseconds",           default "flink"
///   "binary_handling": "bytes" | "base64" | "hex",                              default "bytes"
///   "source_precision": {"<column>": p, ...},                                   default {}
///   "unavailable_placeholder": "<text>",        default "__debezium_unavailable_value"
///   "primary_key": ["id", ...] | null,                                          default null
///   "upsert": false }                                                           default false
/// ```
///
/// * The three `*_handling`/`*_precision` settings mirror the connector's `decimal.handling.mode`,
///   `time.precision.mode` and `binary.handling.mode`; `flink` reads what Flink's `debezium-json`
///   reads (the crate docs have the table). Nothing is guessed from a value: a value that does
///   not fit its column's encoding is a bad record naming the encoding expected.
/// * `source_precision`: in the adaptive modes an integer TIME/TIMESTAMP is in millis, micros or
///   nanos as the *source* column's precision is <= 3, <= 6 or more; the payload does not say
///   which, so it is declared here, per column (TIME and TIMESTAMP columns only). Without it such
///   an integer is a bad record saying to declare it.
/// * Schema-wrapped messages (`{"schema", "payload"}`) name each column's encoding in their
///   Connect schema, which then decides; a setting declared other than its default that the schema
///   contradicts is an error (one absent or at its default defers to the schema).
/// * `unavailable_placeholder`: the connector's `unavailable.value.placeholder`. A column holding it
///   is *unavailable* (see [`cdcjoin_model::row`]), never its value: taken from the `before`
///   image of the same message when that carries the column (REPLICA IDENTITY FULL), else left to
///   the join to fill from its stored row.
/// * `upsert` (requires `primary_key`): a `u` without `before` emits only the accumulation of
///   `after`; a `before` whose non-key columns are all absent or null (a delete by key, as Postgres
///   sends at REPLICA IDENTITY DEFAULT) has every non-key column unavailable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecoderConfig {
    /// The declared columns, looked up by name in `before`/`after`; rows are written in this order.
    pub schema: Schema,
    /// How updates are emitted.
    #[serde(default)]
    pub update_mode: UpdateMode,
    /// How DECIMAL columns are encoded; `None` (not declared) reads as [`DecimalHandling::Flink`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decimal_handling: Option<DecimalHandling>,
    /// How temporal columns are encoded; `None` (not declared) reads as [`TimePrecision::Flink`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_precision: Option<TimePrecision>,
    /// How BYTES columns are encoded; `None` (not declared) reads as [`BinaryHandling::Bytes`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary_handling: Option<BinaryHandling>,
    /// The source column's precision of TIME/TIMESTAMP columns, by name (adaptive modes).
    #[serde(default)]
    pub source_precision: BTreeMap<String, u8>,
    /// The text Debezium puts in place of a value it does not have (unchanged TOASTed columns).
    #[serde(default = "default_placeholder")]
    pub unavailable_placeholder: String,
    /// The primary key columns, if the side has one.
    #[serde(default)]
    pub primary_key: Option<Vec<String>>,
    /// Upsert mode (see above).
    #[serde(default)]
    pub upsert: bool,
}

fn default_placeholder() -> String {
    DEFAULT_PLACEHOLDER.to_string()
}

impl DecoderConfig {
    /// A configuration with every option at its default.
    pub fn new(schema: Schema) -> DecoderConfig {
        DecoderConfig {
            schema,
            update_mode: UpdateMode::default(),
            decimal_handling: None,
            time_precision: None,
            binary_handling: None,
            source_precision: BTreeMap::new(),
            unavailable_placeholder: default_placeholder(),
            primary_key: None,
            upsert: false,
        }
    }

    /// The encoding settings, those at their defaults as undeclared: the defaults read what Flink
    /// reads, and in a schema-wrapped message they defer to the schema (the Java layer always
    /// sends every setting, so a default cannot be told from one the user left alone).
    fn settings(&self) -> Settings {
        fn declared<T: Default + PartialEq>(setting: Option<T>) -> Option<T> {
            setting.filter(|s| *s != T::default())
        }
        Settings {
            decimal: declared(self.decimal_handling),
            time: declared(self.time_precision),
            binary: declared(self.binary_handling),
        }
    }

    fn rules(&self) -> Rules {
        Rules {
            mode: self.update_mode,
            upsert: self.upsert,
        }
    }
}

/// What one message decoded to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum Decoded {
    /// This many changes (1 or 2) were appended to the sink.
    Changes(usize),
    /// A tombstone (empty message, JSON `null`, or a wrapper with a null payload): nothing was
    /// appended. Kafka sends one after each delete for log compaction; callers count and skip it.
    Tombstone,
}

/// Decodes Debezium JSON messages of one table into changelog rows.
///
/// Holds the schema's layout and the buffers reused from message to message; one per table and
/// thread (it is `Send`, not shared).
#[derive(Debug)]
pub struct Decoder {
    config: DecoderConfig,
    layout: RowLayout,
    readers: Vec<ColumnReader>,
    source: Vec<Option<u8>>,
    wrapped: SchemaCache,
    placeholder: Placeholder,
    /// Whether each column is a primary key column.
    key: Vec<bool>,
    columns: ColumnIndex,
    before: RowSpans,
    after: RowSpans,
    /// The structural index and stacks of the envelope scan.
    walk: WalkBuffers,
    scratch: Scratch,
}

impl Decoder {
    /// A decoder for `config`, or why the configuration is unusable (no column, duplicate column
    /// names, a source precision for an unknown or non-temporal column, upsert without a primary
    /// key, ...).
    pub fn new(config: DecoderConfig) -> Result<Decoder, String> {
        validate(&config)?;
        let schema = &config.schema;
        let source: Vec<Option<u8>> = schema
            .fields
            .iter()
            .map(|f| config.source_precision.get(&f.name).copied())
            .collect();
        let settings = config.settings();
        let readers = schema
            .fields
            .iter()
            .zip(&source)
            .map(|(f, p)| ColumnReader {
                data_type: f.data_type,
                encoding: settings.encoding(f.data_type, *p),
            })
            .collect();
        let keys = config.primary_key.clone().unwrap_or_default();
        let key = schema
            .fields
            .iter()
            .map(|f| keys.contains(&f.name))
            .collect();
        let names = schema.fields.iter().map(|f| f.name.clone()).collect();
        Ok(Decoder {
            layout: RowLayout::new(schema),
            readers,
            source,
            wrapped: SchemaCache::default(),
            placeholder: Placeholder::new(&config.unavailable_placeholder),
            key,
            columns: ColumnIndex::new(names),
            before: RowSpans::new(schema.len()),
            after: RowSpans::new(schema.len()),
            walk: WalkBuffers::default(),
            scratch: Scratch::default(),
            config,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &DecoderConfig {
        &self.config
    }

    /// The layout of the rows this decoder writes.
    pub fn layout(&self) -> &RowLayout {
        &self.layout
    }

    /// Decodes one message (with or without the `{"schema", "payload"}` wrapper), appending its
    /// changes to `out`.
    ///
    /// `position` names the message in errors (`users@offset 42`); it is formatted only on error.
    /// On error nothing is appended.
    pub fn decode(
        &mut self,
        json: &[u8],
        position: &dyn fmt::Display,
        out: &mut ChangeSink,
    ) -> Result<Decoded, DecodeError> {
        self.decode_message(json, out).map_err(|e| e.at(position))
    }

    fn decode_message(&mut self, json: &[u8], out: &mut ChangeSink) -> Result<Decoded, ErrorKind> {
        if json.iter().all(u8::is_ascii_whitespace) {
            return Ok(Decoded::Tombstone);
        }
        let spans = Spans {
            columns: &self.columns,
            before: &mut self.before,
            after: &mut self.after,
        };
        let scanned = scan(json, spans, &mut self.walk).map_err(ErrorKind::Malformed)?;
        let (op, schema) = match scanned {
            Scanned::Tombstone => return Ok(Decoded::Tombstone),
            Scanned::Envelope { op, schema } => (op_byte(op.get(json), &mut self.scratch)?, schema),
        };
        let wrapped = match schema.get(json) {
            b"" | b"null" => false,
            block => {
                let (fields, settings) = (&self.config.schema.fields, self.config.settings());
                self.wrapped
                    .resolve(block, fields, &self.readers, &settings, &self.source)
                    .map_err(ErrorKind::Schema)?;
                true
            }
        };
        let (rules, upsert) = (self.config.rules(), self.config.upsert);
        let mut rows = self.rows(json, wrapped, upsert);
        apply_op(op, rules, &mut rows, out).map(Decoded::Changes)
    }

    /// The images just scanned from `input`, read by the declared readers or (`wrapped`) those of
    /// the message's Connect schema; `by_key` when key-only `before` images delete by key.
    fn rows<'s>(&'s mut self, input: &'s [u8], wrapped: bool, by_key: bool) -> JsonRows<'s> {
        JsonRows {
            input,
            layout: &self.layout,
            fields: &self.config.schema.fields,
            readers: if wrapped {
                self.wrapped.readers()
            } else {
                &self.readers
            },
            before: &self.before,
            after: &self.after,
            placeholder: &self.placeholder,
            key: by_key.then_some(&self.key[..]),
            scratch: &mut self.scratch,
        }
    }

    /// Decodes one upsert-kafka record (Flink's `upsert-kafka` connector's shape): `key` is the
    /// record key, a JSON object holding the primary key columns; `value` the record value, a
    /// flat JSON row, or `None` (or JSON `null`) for a delete.
    ///
    /// A value is `+I(value)` (as Flink's upsert-kafka source emits it: the join replaces the row
    /// stored under the same primary key); a delete is `-D` of a row whose primary key columns are
    /// read from `key` and every other column is unavailable. Needs upsert mode (see
    /// [`DecoderConfig`]). On error nothing is appended.
    pub fn decode_upsert(
        &mut self,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        position: &dyn fmt::Display,
        out: &mut ChangeSink,
    ) -> Result<usize, DecodeError> {
        self.upsert_message(key, value, out)
            .map_err(|e| e.at(position))
    }

    fn upsert_message(
        &mut self,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        out: &mut ChangeSink,
    ) -> Result<usize, ErrorKind> {
        if !self.config.upsert {
            return Err(ErrorKind::NotUpsert);
        }
        let value = value.filter(|v| !is_null(v));
        let (row, op) = match (value, key) {
            (Some(v), _) => (v, b'c'),
            (None, Some(k)) if !is_null(k) => (k, b'd'),
            _ => return Err(ErrorKind::DeleteWithoutKey),
        };
        let spans = Spans {
            columns: &self.columns,
            before: &mut self.before,
            after: &mut self.after,
        };
        scan_row(row, spans, op == b'c').map_err(ErrorKind::Malformed)?;
        if op == b'c' {
            self.check_value_key(row)?;
        }
        let rules = self.config.rules();
        apply_op(op, rules, &mut self.rows(row, false, true), out)
    }

    /// That an upsert record's value (scanned into `after`) holds its primary key: a row without
    /// one has no identity, and a value wrapped by Kafka Connect (`{"schema", "payload"}`) would
    /// otherwise read as a row of nulls.
    fn check_value_key(&self, value: &[u8]) -> Result<(), ErrorKind> {
        let spans = self.after.columns.iter();
        match self
            .key
            .iter()
            .zip(spans)
            .position(|(&k, span)| k && matches!(span.get(value), b"" | b"null"))
        {
            Some(i) => Err(ErrorKind::ValueWithoutKey(
                self.config.schema.fields[i].name.clone(),
            )),
            None => Ok(()),
        }
    }

    /// [`crate::split_envelope`] for rows encoded elsewhere (e.g. by Java), after checking that
    /// each given row is a valid row of this decoder's schema, with this decoder's update and
    /// upsert modes.
    pub fn split_rows(
        &self,
        op: u8,
        before: Option<&[u8]>,
        after: Option<&[u8]>,
        position: &dyn fmt::Display,
        out: &mut ChangeSink,
    ) -> Result<usize, DecodeError> {
        for (side, row) in [(Side::Before, before), (Side::After, after)] {
            if let Some(row) = row {
                self.layout
                    .validate(row)
                    .map_err(|reason| ErrorKind::InvalidRow { side, reason }.at(position))?;
            }
        }
        split_with(op, before, after, self.config.rules(), out).map_err(|e| e.at(position))
    }
}

fn validate(config: &DecoderConfig) -> Result<(), String> {
    let fields = &config.schema.fields;
    if fields.is_empty() {
        return Err("the schema has no column".into());
    }
    let mut seen = HashSet::new();
    if let Some(f) = fields.iter().find(|f| !seen.insert(f.name.as_str())) {
        return Err(format!("column \"{}\" is declared twice", f.name));
    }
    for (name, &p) in &config.source_precision {
        validate_source_precision(config, name, p)?;
    }
    if config.unavailable_placeholder.is_empty() {
        return Err("the unavailable value placeholder is empty".into());
    }
    match &config.primary_key {
        Some(key) if key.is_empty() => return Err("the primary key has no column".into()),
        Some(key) => {
            config.schema.indices_of(key)?;
        }
        None if config.upsert => {
            return Err("upsert mode needs a primary key (deletes and updates are by key)".into())
        }
        None => {}
    }
    Ok(())
}

fn validate_source_precision(config: &DecoderConfig, name: &str, p: u8) -> Result<(), String> {
    let t = config
        .schema
        .index_of(name)
        .map(|i| config.schema.fields[i].data_type);
    match t.and_then(temporal) {
        None => Err(match t {
            Some(t) => format!("source precision given for column \"{name}\" of type {t}"),
            None => format!("source precision given for unknown column \"{name}\""),
        }),
        Some(Temporal::Date | Temporal::Instant(_)) => Err(format!(
            "source precision given for column \"{name}\" of type {}, whose encoding does not \
             depend on it",
            t.expect("a type")
        )),
        Some(_) if p > 9 => Err(format!(
            "source precision {p} of column \"{name}\" is not in 0..=9"
        )),
        Some(_) => Ok(()),
    }
}

/// Whether a record key or value is empty or JSON `null` (a Kafka null).
fn is_null(json: &[u8]) -> bool {
    json.trim_ascii() == b"null" || json.iter().all(u8::is_ascii_whitespace)
}

/// The op as one byte, from the JSON text of the `op` value (empty when absent).
fn op_byte(raw: &[u8], scratch: &mut Scratch) -> Result<u8, ErrorKind> {
    if raw.is_empty() || raw == b"null" {
        return Err(ErrorKind::MissingOp);
    }
    let text = string_body(raw).and_then(|body| unescape(body, scratch.text()).ok());
    match text {
        Some(&[op]) => Ok(op),
        _ => Err(ErrorKind::UnknownOp(excerpt(raw))),
    }
}

/// The `before`/`after` images of a scanned JSON envelope, decoded on demand.
struct JsonRows<'a> {
    input: &'a [u8],
    layout: &'a RowLayout,
    fields: &'a [Field],
    readers: &'a [ColumnReader],
    before: &'a RowSpans,
    after: &'a RowSpans,
    placeholder: &'a Placeholder,
    /// In upsert mode, which columns are primary key columns.
    key: Option<&'a [bool]>,
    scratch: &'a mut Scratch,
}

impl<'a> JsonRows<'a> {
    fn spans(&self, side: Side) -> &'a RowSpans {
        match side {
            Side::Before => self.before,
            Side::After => self.after,
        }
    }

    /// In upsert mode, whether the `before` image holds only the primary key (every other column
    /// absent or null): a delete by key.
    fn key_only(&self, side: Side) -> Option<&'a [bool]> {
        let key = self.key.filter(|_| side == Side::Before)?;
        let spans = &self.before.columns;
        let other_values = spans
            .iter()
            .zip(key)
            .any(|(span, &k)| !k && !matches!(span.get(self.input), b"" | b"null"));
        (!other_values).then_some(key)
    }

    /// Writes column `i` of `side` from its JSON text `raw`.
    fn column(
        &mut self,
        side: Side,
        i: usize,
        raw: &[u8],
        w: &mut RowWriter<'_>,
    ) -> Result<(), ErrorKind> {
        let (field, reader) = (&self.fields[i], &self.readers[i]);
        if raw.is_empty() || raw == b"null" {
            if !field.nullable {
                return Err(ErrorKind::MissingColumn {
                    side,
                    column: field.name.clone(),
                });
            }
            w.null();
            return Ok(());
        }
        if self.placeholder.matches(raw, reader, self.scratch) {
            return match self.before_value(side, i) {
                Some(before) => self.column(Side::Before, i, before, w),
                None => {
                    w.unavailable();
                    Ok(())
                }
            };
        }
        reader
            .write(raw, w, self.scratch)
            .map_err(|e| column_error(e, side, field, reader, raw))
    }

    /// For an unavailable column of `after`, the same column of `before` when that carries a
    /// value (REPLICA IDENTITY FULL); a null or absent `before` value says nothing, since an
    /// unavailable column has a value.
    fn before_value(&self, side: Side, i: usize) -> Option<&'a [u8]> {
        if side != Side::After || self.before.image != Image::Object {
            return None;
        }
        let raw = self.before.columns[i].get(self.input);
        let usable = !matches!(raw, b"" | b"null");
        usable.then_some(raw)
    }
}

impl RowSource for JsonRows<'_> {
    fn has(&self, side: Side) -> bool {
        self.spans(side).image == Image::Object
    }

    fn write(&mut self, side: Side, buf: &mut Vec<u8>) -> Result<(), ErrorKind> {
        let spans: &[Span] = &self.spans(side).columns;
        let key_only = self.key_only(side);
        let mut w = RowWriter::new(self.layout, buf);
        for (i, span) in spans.iter().enumerate() {
            let raw = span.get(self.input);
            match key_only {
                Some(key) if !key[i] => w.unavailable(),
                Some(_) if matches!(raw, b"" | b"null") => {
                    return Err(ErrorKind::MissingKey(self.fields[i].name.clone()))
                }
                _ => self.column(side, i, raw, &mut w)?,
            }
        }
        w.finish();
        Ok(())
    }
}

/// Recognises Debezium's placeholder for a value it does not have (an unchanged TOASTed column).
///
/// Debezium's Postgres connector writes, in place of the value: for text-like columns (text,
/// varchar, json, jsonb, uuid, enum, ...) the placeholder text; for `bytea` in
/// `binary.handling.mode=bytes` the placeholder's UTF-8 bytes, which JSON carries as their base64;
/// in `hex` mode the placeholder text itself (`PostgresValueConverter`); for `hstore` in the default
/// `hstore.handling.mode=json` a map from the placeholder to itself, as JSON text
/// (`{"<p>":"<p>"}`: `UnchangedToastedPlaceholder`, `PostgresValueConverter.handleUnknownData`).
/// (In `base64` mode it writes null: indistinguishable from a null, nothing to recognise.) Columns
/// of other types never carry it in a form their encoding could read, so any column whose JSON is
/// a string equal to the placeholder (or, for BYTES read as base64, to its base64; for STRING, to
/// the hstore map) is unavailable.
#[derive(Debug)]
struct Placeholder {
    text: Vec<u8>,
    base64: Vec<u8>,
    hstore: Vec<u8>,
}

impl Placeholder {
    fn new(text: &str) -> Placeholder {
        let quoted = serde_json::to_string(text).expect("a string serializes");
        Placeholder {
            text: text.as_bytes().to_vec(),
            base64: BASE64.encode(text).into_bytes(),
            hstore: format!("{{{quoted}:{quoted}}}").into_bytes(),
        }
    }

    /// Whether the JSON value `raw` of a column read by `reader` is the placeholder.
    fn matches(&self, raw: &[u8], reader: &ColumnReader, scratch: &mut Scratch) -> bool {
        let Some(body) = string_body(raw) else {
            return false;
        };
        let base64 = reader.data_type == DataType::Bytes
            && reader.encoding == crate::encoding::Encoding::Base64;
        let hstore = reader.data_type == DataType::String && body.first() == Some(&b'{');
        let candidate = |p: &[u8]| body.len() >= p.len() && body.len() <= 6 * p.len();
        if !(candidate(&self.text)
            || base64 && candidate(&self.base64)
            || hstore && candidate(&self.hstore))
        {
            return false;
        }
        let Some(value) = json_string(raw, scratch.text()) else {
            return false;
        };
        value == self.text.as_slice()
            || base64 && value == self.base64.as_slice()
            || hstore && value == self.hstore.as_slice()
    }
}

fn column_error(
    e: ValueError,
    side: Side,
    field: &Field,
    reader: &ColumnReader,
    raw: &[u8],
) -> ErrorKind {
    let (column, data_type, found) = (field.name.clone(), field.data_type, excerpt(raw));
    match e {
        ValueError::Mistyped => ErrorKind::MistypedColumn {
            side,
            column,
            data_type,
            expected: reader.expected(),
            found,
        },
        ValueError::OutOfRange => ErrorKind::OutOfRange {
            side,
            column,
            data_type,
            found,
        },
        ValueError::UnknownUnit(mode) => ErrorKind::UnknownUnit {
            side,
            column,
            data_type,
            mode: mode.name(),
            found,
        },
    }
}
