//! The decoder: configuration, the per-record entry point and the JSON row source.

use crate::envelope::{scan, ColumnIndex, Image, RowSpans, Scanned, Span, Spans};
use crate::error::{excerpt, DecodeError, ErrorKind, Side};
use crate::ops::{apply_op, split_envelope, RowSource, UpdateMode};
use crate::sink::ChangeSink;
use crate::temporal::TimestampUnit;
use crate::text::{string_body, unescape};
use crate::values::{ColumnReader, DecimalStrings, Scratch, ValueError};
use cdcjoin_model::{DataType, Field, RowLayout, RowWriter, Schema};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::fmt;

#[cfg(test)]
mod no_panic;
#[cfg(test)]
mod tests;

/// What to decode and how.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecoderConfig {
    /// The declared columns, looked up by name in `before`/`after`; rows are written in this order.
    pub schema: Schema,
    /// How updates are emitted.
    #[serde(default)]
    pub update_mode: UpdateMode,
    /// The unit of integer values of TIMESTAMP columns, by column name; columns not listed use
    /// [`TimestampUnit::default_for`] their precision.
    #[serde(default)]
    pub timestamp_units: HashMap<String, TimestampUnit>,
    /// How DECIMAL values sent as JSON strings are read.
    #[serde(default)]
    pub decimal_strings: DecimalStrings,
}

impl DecoderConfig {
    /// A configuration with every option at its default.
    pub fn new(schema: Schema) -> DecoderConfig {
        DecoderConfig {
            schema,
            update_mode: UpdateMode::default(),
            timestamp_units: HashMap::new(),
            decimal_strings: DecimalStrings::default(),
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
    columns: ColumnIndex,
    before: RowSpans,
    after: RowSpans,
    scratch: Scratch,
}

impl Decoder {
    /// A decoder for `config`, or why the configuration is unusable (no column, duplicate column
    /// names, a timestamp unit for a column that is not a TIMESTAMP).
    pub fn new(config: DecoderConfig) -> Result<Decoder, String> {
        validate(&config)?;
        let schema = &config.schema;
        let readers = schema.fields.iter().map(|f| reader(&config, f)).collect();
        let names = schema.fields.iter().map(|f| f.name.clone()).collect();
        Ok(Decoder {
            layout: RowLayout::new(schema),
            readers,
            columns: ColumnIndex::new(names),
            before: RowSpans::new(schema.len()),
            after: RowSpans::new(schema.len()),
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
        let op = match scan(json, spans).map_err(ErrorKind::Malformed)? {
            Scanned::Tombstone => return Ok(Decoded::Tombstone),
            Scanned::Envelope(op) => op_byte(op.get(json), &mut self.scratch)?,
        };
        let mut rows = JsonRows {
            input: json,
            layout: &self.layout,
            fields: &self.config.schema.fields,
            readers: &self.readers,
            before: &self.before,
            after: &self.after,
            scratch: &mut self.scratch,
        };
        apply_op(op, self.config.update_mode, &mut rows, out).map(Decoded::Changes)
    }

    /// [`split_envelope`] for rows encoded elsewhere (e.g. by Java), after checking that each
    /// given row is a valid row of this decoder's schema, with this decoder's update mode.
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
        split_envelope(op, before, after, self.config.update_mode, position, out)
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
    for name in config.timestamp_units.keys() {
        match config.schema.index_of(name).map(|i| fields[i].data_type) {
            Some(DataType::Timestamp { .. }) => {}
            Some(t) => {
                return Err(format!(
                    "timestamp unit given for column \"{name}\" of type {t}"
                ))
            }
            None => {
                return Err(format!(
                    "timestamp unit given for unknown column \"{name}\""
                ))
            }
        }
    }
    Ok(())
}

fn reader(config: &DecoderConfig, field: &Field) -> ColumnReader {
    let timestamp_unit = match field.data_type {
        DataType::Timestamp { precision } => config
            .timestamp_units
            .get(&field.name)
            .copied()
            .unwrap_or(TimestampUnit::default_for(precision)),
        _ => TimestampUnit::Millis,
    };
    ColumnReader {
        data_type: field.data_type,
        timestamp_unit,
        decimal_strings: config.decimal_strings,
    }
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
    scratch: &'a mut Scratch,
}

impl<'a> JsonRows<'a> {
    fn spans(&self, side: Side) -> &'a RowSpans {
        match side {
            Side::Before => self.before,
            Side::After => self.after,
        }
    }
}

impl RowSource for JsonRows<'_> {
    fn has(&self, side: Side) -> bool {
        self.spans(side).image == Image::Object
    }

    fn write(&mut self, side: Side, buf: &mut Vec<u8>) -> Result<(), ErrorKind> {
        let spans: &[Span] = &self.spans(side).columns;
        let mut w = RowWriter::new(self.layout, buf);
        for ((field, reader), span) in self.fields.iter().zip(self.readers).zip(spans) {
            let raw = span.get(self.input);
            if raw.is_empty() || raw == b"null" {
                if !field.nullable {
                    return Err(ErrorKind::MissingColumn {
                        side,
                        column: field.name.clone(),
                    });
                }
                w.null();
                continue;
            }
            reader
                .write(raw, &mut w, self.scratch)
                .map_err(|e| column_error(e, side, field, raw))?;
        }
        w.finish();
        Ok(())
    }
}

fn column_error(e: ValueError, side: Side, field: &Field, raw: &[u8]) -> ErrorKind {
    let (column, data_type, found) = (field.name.clone(), field.data_type, excerpt(raw));
    match e {
        ValueError::Mistyped(expected) => ErrorKind::MistypedColumn {
            side,
            column,
            data_type,
            expected,
            found,
        },
        ValueError::OutOfRange => ErrorKind::OutOfRange {
            side,
            column,
            data_type,
            found,
        },
    }
}
