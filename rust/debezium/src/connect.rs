//! Column encodings from the Connect schema of a schema-wrapped message.
//!
//! Kafka Connect's JsonConverter with `schemas.enable=true` sends `{"schema": ..., "payload":
//! envelope}`, and the schema names each column's encoding: `org.apache.kafka.connect.data.Decimal`
//! with its `scale` parameter, `io.debezium.data.VariableScaleDecimal`, `io.debezium.time.Date`,
//! `MicroTimestamp`, `ZonedTimestamp`, ..., or just a Connect type (`string`, `double`, `bytes`).
//! For such messages the schema decides how each column is read; a declared setting it
//! contradicts (a `decimal_handling` of `string` where the schema says `Decimal`, a
//! `source_precision` of 3 where it says `MicroTimestamp`) is an error, as is a schema whose
//! encoding the declared type cannot hold (a `Decimal`'s or `Bits`' bytes in a STRING column, a
//! Connect `string` in a DOUBLE). A column the row image's schema does not list has no known
//! encoding: it may only be null or absent (JsonConverter lists every field of the payload in its
//! schema). A schema that describes no row image (no `before` or `after` field) says nothing of
//! the columns: the declared settings decide, as for a bare message.
//!
//! The schema block is the same for every message of a table version, so the resolved readers
//! are cached by its bytes ([`SchemaCache`]): parsing happens only when the block changes.

use crate::encoding::{agrees, temporal, BinaryHandling, Encoding, Settings};
use crate::temporal::{Temporal, TextForm, Unit};
use crate::values::ColumnReader;
use cdcjoin_model::{DataType, Field};
use serde::Deserialize;
use std::collections::HashMap;

/// One node of a Connect schema (only what decides encodings).
#[derive(Debug, Deserialize)]
struct Node {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    field: Option<String>,
    #[serde(default)]
    parameters: HashMap<String, serde_json::Value>,
    #[serde(default)]
    fields: Vec<Node>,
}

/// The readers of the last schema block seen, and the block's bytes.
#[derive(Debug, Default)]
pub(crate) struct SchemaCache {
    block: Option<Vec<u8>>,
    readers: Vec<ColumnReader>,
    /// Why the last block cannot be used (then `readers` are not its readers).
    failure: Option<String>,
}

impl SchemaCache {
    /// Makes [`SchemaCache::readers`] those of messages carrying the schema block `block`,
    /// resolving them only when it differs from the previous one; or says why it cannot be read.
    pub(crate) fn resolve(
        &mut self,
        block: &[u8],
        fields: &[Field],
        declared: &[ColumnReader],
        settings: &Settings,
        source: &[Option<u8>],
    ) -> Result<(), String> {
        if self.block.as_deref() != Some(block) {
            self.block = Some(block.to_vec());
            match resolve(block, fields, declared, settings, source) {
                Ok(readers) => (self.readers, self.failure) = (readers, None),
                Err(e) => self.failure = Some(e),
            }
        }
        match &self.failure {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// The readers of the block last resolved successfully.
    pub(crate) fn readers(&self) -> &[ColumnReader] {
        &self.readers
    }
}

/// Every column's reader under the schema block `block`.
fn resolve(
    block: &[u8],
    fields: &[Field],
    declared: &[ColumnReader],
    settings: &Settings,
    source: &[Option<u8>],
) -> Result<Vec<ColumnReader>, String> {
    let envelope: Node =
        serde_json::from_slice(block).map_err(|e| format!("unreadable Connect schema: {e}"))?;
    // The row struct of `after` and `before` (the same Connect type).
    let images: Vec<&Node> = envelope
        .fields
        .iter()
        .filter(|f| matches!(f.field.as_deref(), Some("after" | "before")))
        .collect();
    let mut readers = declared.to_vec();
    if images.is_empty() {
        // A schema that describes no row image says nothing of the columns: the declared
        // settings decide, as for a bare message.
        return Ok(readers);
    }
    let columns: Vec<&Node> = images.iter().flat_map(|image| &image.fields).collect();
    for ((reader, field), source) in readers.iter_mut().zip(fields).zip(source) {
        let Some(node) = columns
            .iter()
            .find(|n| n.field.as_deref() == Some(&field.name))
        else {
            reader.encoding = Encoding::Unlisted;
            continue;
        };
        reader.encoding = column_encoding(node, field, settings, *source)
            .map_err(|e| format!("column \"{}\": {e}", field.name))?;
    }
    Ok(readers)
}

/// The encoding `node` gives column `field`, checked against the declared settings.
fn column_encoding(
    node: &Node,
    field: &Field,
    settings: &Settings,
    source: Option<u8>,
) -> Result<Encoding, String> {
    let t = field.data_type;
    let said = node.name.as_deref().unwrap_or(&node.kind);
    if t == DataType::Bytes && node.name.is_none() && node.kind == "string" {
        return text_binary(settings);
    }
    // MySQL's BIT(n > 1): Connect bytes in every binary.handling.mode, which Debezium applies to
    // binary columns only (JdbcValueConverters).
    if t == DataType::Bytes && node.name.as_deref() == Some(BITS) && node.kind == "bytes" {
        return Ok(Encoding::Base64);
    }
    let actual = encoding_of(node, t).ok_or_else(|| {
        format!("the message's schema says {said}, which is not an encoding of {t}")
    })?;
    match settings.declared_encoding(t, source) {
        Some(declared) if !agrees(declared, actual) => {
            let expected = ColumnReader {
                data_type: t,
                encoding: declared,
            }
            .expected();
            Err(format!(
                "the message's schema says {said}, which contradicts the declared setting \
                 (expecting {expected})"
            ))
        }
        _ => Ok(actual),
    }
}

/// A BYTES column the schema sends as a string: base64 or hex, which only the declared
/// `binary_handling` says.
fn text_binary(settings: &Settings) -> Result<Encoding, String> {
    match settings.binary {
        Some(BinaryHandling::Base64) => Ok(Encoding::Base64),
        Some(BinaryHandling::Hex) => Ok(Encoding::Hex),
        Some(BinaryHandling::Bytes) => Err(
            "the message's schema says string, which contradicts the declared setting \
             (expecting Connect bytes, binary.handling.mode=bytes)"
                .into(),
        ),
        None => Err(
            "the message's schema says string, which is base64 or hex as the connector's \
             binary.handling.mode says: declare binary_handling"
                .into(),
        ),
    }
}

/// The Connect name of MySQL's `BIT(n > 1)` columns.
const BITS: &str = "io.debezium.data.Bits";

/// What a Connect schema node says about a column of type `t`; `None` when it cannot be one.
fn encoding_of(node: &Node, t: DataType) -> Option<Encoding> {
    use Encoding as E;
    let name = node.name.as_deref().unwrap_or("");
    let tt = temporal(t);
    let time = matches!(tt, Some(Temporal::Time(_)));
    let stamp = matches!(tt, Some(Temporal::Timestamp(_)));
    Some(match (name, t) {
        ("org.apache.kafka.connect.data.Decimal", DataType::Decimal { .. }) => E::DecimalPrecise {
            scale: scale_parameter(node)?,
        },
        ("io.debezium.data.VariableScaleDecimal", DataType::Decimal { scale, .. }) => {
            E::DecimalPrecise {
                scale: scale as i64,
            }
        }
        ("", DataType::Decimal { .. }) => match node.kind.as_str() {
            "string" => E::DecimalString,
            "double" | "float" => E::DecimalDouble,
            _ => return None,
        },
        (_, DataType::Decimal { .. }) => return None,
        ("io.debezium.time.Date" | "org.apache.kafka.connect.data.Date", DataType::Date) => {
            E::EpochDays
        }
        ("io.debezium.time.Time" | "org.apache.kafka.connect.data.Time", _) if time => {
            E::Integer(Unit::Millis)
        }
        ("io.debezium.time.MicroTime", _) if time => E::Integer(Unit::Micros),
        ("io.debezium.time.NanoTime", _) if time => E::Integer(Unit::Nanos),
        ("io.debezium.time.Timestamp" | "org.apache.kafka.connect.data.Timestamp", _) if stamp => {
            E::Integer(Unit::Millis)
        }
        ("io.debezium.time.MicroTimestamp", _) if stamp => E::Integer(Unit::Micros),
        ("io.debezium.time.NanoTimestamp", _) if stamp => E::Integer(Unit::Nanos),
        ("io.debezium.time.ZonedTimestamp", DataType::TimestampLtz { .. })
        | ("io.debezium.time.IsoTimestamp", DataType::Timestamp { .. })
        | ("io.debezium.time.IsoDate", DataType::Date)
        | ("io.debezium.time.IsoTime" | "io.debezium.time.ZonedTime", DataType::Time { .. }) => {
            E::Text(TextForm::Iso)
        }
        ("", _) if tt.is_some() && node.kind == "string" => E::Text(TextForm::Flink),
        (_, _) if tt.is_some() => return None,
        ("", DataType::Bytes) if node.kind == "bytes" => E::Base64,
        (_, DataType::Bytes) => return None,
        _ => return native(&node.kind, t),
    })
}

/// The one encoding of a BOOLEAN, integer, floating point or STRING column, when the Connect type
/// is one of its forms, whatever its name (`Json`, `Uuid`, `Enum` are strings, `Year` an int32,
/// `MicroDuration` an int64); `None` for another type, whose value would be read as what it is not
/// (the base64 of a `Decimal`'s or `Bits`' bytes as text, a `string` as a DOUBLE).
fn native(kind: &str, t: DataType) -> Option<Encoding> {
    let integer = matches!(kind, "int8" | "int16" | "int32" | "int64");
    let fits = match t {
        DataType::Boolean => kind == "boolean",
        DataType::TinyInt | DataType::SmallInt | DataType::Int | DataType::BigInt => integer,
        DataType::Float | DataType::Double => integer || matches!(kind, "float" | "double"),
        DataType::String => kind == "string",
        _ => false,
    };
    fits.then_some(Encoding::Native)
}

/// The `scale` parameter of a Connect `Decimal` (a string in JsonConverter's output).
fn scale_parameter(node: &Node) -> Option<i64> {
    match node.parameters.get("scale")? {
        serde_json::Value::String(s) => s.parse().ok(),
        serde_json::Value::Number(n) => n.as_i64(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{DecimalHandling, TimePrecision};

    fn schema(columns: &str) -> Vec<u8> {
        format!(
            r#"{{"type":"struct","fields":[{{"type":"struct","fields":[{columns}],"optional":true,
            "name":"s.public.t.Value","field":"before"}},{{"type":"string","field":"op"}}],
            "name":"s.public.t.Envelope"}}"#
        )
        .into_bytes()
    }

    fn field(name: &str, t: &str) -> Field {
        Field::new(name, t.parse().unwrap())
    }

    fn resolve_one(column: &str, t: &str, settings: Settings) -> Result<Encoding, String> {
        let f = [field("c", t)];
        let declared = [ColumnReader {
            data_type: f[0].data_type,
            encoding: settings.encoding(f[0].data_type, None),
        }];
        resolve(&schema(column), &f, &declared, &settings, &[None]).map(|r| r[0].encoding)
    }

    #[test]
    fn names_decide_encodings() {
        let s = Settings::default();
        let dec = r#"{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"3","connect.decimal.precision":"12"},"field":"c"}"#;
        assert_eq!(
            resolve_one(dec, "DECIMAL(12, 2)", s),
            Ok(Encoding::DecimalPrecise { scale: 3 })
        );
        let micros = r#"{"type":"int64","name":"io.debezium.time.MicroTimestamp","field":"c"}"#;
        assert_eq!(
            resolve_one(micros, "TIMESTAMP(3)", s),
            Ok(Encoding::Integer(Unit::Micros))
        );
        let zoned = r#"{"type":"string","name":"io.debezium.time.ZonedTimestamp","field":"c"}"#;
        assert_eq!(
            resolve_one(zoned, "TIMESTAMP_LTZ(6)", s),
            Ok(Encoding::Text(TextForm::Iso))
        );
        let text = r#"{"type":"string","field":"c"}"#;
        assert_eq!(
            resolve_one(text, "DECIMAL(5, 1)", s),
            Ok(Encoding::DecimalString)
        );
        assert_eq!(resolve_one(text, "STRING", s), Ok(Encoding::Native));
        let bytes = r#"{"type":"bytes","field":"c"}"#;
        assert_eq!(resolve_one(bytes, "BYTES", s), Ok(Encoding::Base64));
        // A column the schema does not list has no known encoding; a schema of no row image
        // says nothing of any column.
        assert_eq!(
            resolve_one(r#"{"type":"int32","field":"other"}"#, "DECIMAL(5, 1)", s),
            Ok(Encoding::Unlisted)
        );
        let f = [field("c", "DECIMAL(5, 1)")];
        let declared = [ColumnReader {
            data_type: f[0].data_type,
            encoding: Encoding::DecimalFlink,
        }];
        let no_image = br#"{"type":"struct","fields":[{"type":"string","field":"op"}]}"#;
        assert_eq!(
            resolve(no_image, &f, &declared, &s, &[None]).map(|r| r[0].encoding),
            Ok(Encoding::DecimalFlink)
        );
    }

    #[test]
    fn conflicts_are_errors() {
        let string_mode = Settings {
            decimal: Some(DecimalHandling::String),
            ..Settings::default()
        };
        let dec = r#"{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"},"field":"c"}"#;
        let e = resolve_one(dec, "DECIMAL(12, 2)", string_mode).unwrap_err();
        assert!(
            e.contains("column \"c\"") && e.contains("contradicts"),
            "{e}"
        );
        let micros = r#"{"type":"int64","name":"io.debezium.time.MicroTimestamp","field":"c"}"#;
        let e = resolve_one(micros, "DATE", Settings::default()).unwrap_err();
        assert!(e.contains("not an encoding of DATE"), "{e}");
        let hex = Settings {
            binary: Some(BinaryHandling::Hex),
            ..Settings::default()
        };
        let e = resolve_one(r#"{"type":"bytes","field":"c"}"#, "BYTES", hex).unwrap_err();
        assert!(e.contains("contradicts"), "{e}");
        let text = r#"{"type":"string","field":"c"}"#;
        assert_eq!(resolve_one(text, "BYTES", hex), Ok(Encoding::Hex));
        let e = resolve_one(text, "BYTES", Settings::default()).unwrap_err();
        assert!(e.ends_with("declare binary_handling"), "{e}");
        let adaptive = Settings {
            time: Some(TimePrecision::Adaptive),
            ..Settings::default()
        };
        let f = [field("c", "TIMESTAMP(3)")];
        let declared = [ColumnReader {
            data_type: f[0].data_type,
            encoding: adaptive.encoding(f[0].data_type, Some(3)),
        }];
        let e = resolve(&schema(micros), &f, &declared, &adaptive, &[Some(3)]).unwrap_err();
        assert!(e.contains("MicroTimestamp"), "{e}");
        assert!(resolve(b"[1]", &f, &declared, &adaptive, &[None]).is_err());
    }

    #[test]
    fn the_cache_resolves_once_per_block() {
        let f = [field("c", "TIMESTAMP(6)")];
        let s = Settings::default();
        let declared = [ColumnReader {
            data_type: f[0].data_type,
            encoding: Encoding::Text(TextForm::Flink),
        }];
        let mut cache = SchemaCache::default();
        let a = schema(r#"{"type":"int64","name":"io.debezium.time.MicroTimestamp","field":"c"}"#);
        let b = schema(r#"{"type":"int64","name":"io.debezium.time.NanoTimestamp","field":"c"}"#);
        let mut get = |block: &[u8]| {
            cache.resolve(block, &f, &declared, &s, &[None])?;
            Ok::<_, String>(cache.readers()[0].encoding)
        };
        assert_eq!(get(&a), Ok(Encoding::Integer(Unit::Micros)));
        assert_eq!(get(&a), Ok(Encoding::Integer(Unit::Micros)));
        assert_eq!(get(&b), Ok(Encoding::Integer(Unit::Nanos)));
        assert!(get(b"{").is_err());
        assert!(get(b"{").is_err(), "a failure is cached too");
        assert_eq!(get(&b), Ok(Encoding::Integer(Unit::Nanos)));
    }
}
