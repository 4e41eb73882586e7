//! Decode and join in one place, the way the Flink operator chains them, for the demo CLI and the
//! shared test vectors: Debezium messages in, Flink-formatted changelog rows out.
//!
//! [`Pipeline`] owns one decoder per side and the join engine over all key groups; each message is
//! decoded, split into its changes, given its key group and joined in one batch.

use cdcjoin_debezium::batch::{
    output_entries, write_message, BatchDecoder, BatchDecoderConfig, OutputEntry as Decoded,
};
use cdcjoin_debezium::DecoderConfig;
use cdcjoin_join::batch::{write_input, InputRecord};
use cdcjoin_join::{
    JoinEngine, JoinSpec, JoinStats, JoinType, KeyGroupRange, OutputEntries, OutputEntry,
    RetractionPolicy, Side, SideSpec,
};
use cdcjoin_model::value::format_row;
use cdcjoin_model::{RowLayout, RowRef, Schema, Value};
use serde::Deserialize;
use std::fmt;

/// Key groups of the single instance the pipeline runs (Flink's default max parallelism).
pub const MAX_PARALLELISM: u16 = 128;

/// One input as a test vector declares it: its name, join key, and the decoder configuration
/// (schema, primary key, the connector's encodings, upsert mode...), in one JSON object.
#[derive(Clone, Debug, Deserialize)]
pub struct Table {
    /// Table name, used in record positions.
    pub name: String,
    /// Join key columns.
    pub join_key: Vec<String>,
    /// Columns, primary key and decoding settings.
    #[serde(flatten)]
    pub decoder: DecoderConfig,
}

impl Table {
    /// A table of `schema` with primary key `primary_key` (none when empty), decoded with the
    /// default settings.
    pub fn new(name: &str, schema: Schema, join_key: &[&str], primary_key: &[&str]) -> Table {
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut decoder = DecoderConfig::new(schema);
        decoder.primary_key = Some(strings(primary_key)).filter(|k| !k.is_empty());
        Table {
            name: name.into(),
            join_key: strings(join_key),
            decoder,
        }
    }

    /// The columns.
    pub fn schema(&self) -> &Schema {
        &self.decoder.schema
    }

    fn side_spec(&self) -> SideSpec {
        SideSpec {
            schema: self.schema().clone(),
            join_key: self.join_key.clone(),
            primary_key: self.decoder.primary_key.clone(),
            ttl_ms: None,
            exact_retractions: false,
        }
    }
}

/// Counters of a run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Summary {
    /// Messages read.
    pub messages: u64,
    /// Tombstones skipped.
    pub tombstones: u64,
    /// Changes (after splitting updates) fed to the join.
    pub changes: u64,
    /// Join statistics.
    pub join: JoinStats,
}

/// Decoder per side plus the join.
pub struct Pipeline {
    tables: [Table; 2],
    decoders: [BatchDecoder; 2],
    layouts: [RowLayout; 2],
    engine: JoinEngine,
    /// One message framed as the decode step's JSON batch.
    message: Vec<u8>,
    batch: Vec<u8>,
    out: Vec<u8>,
    summary: Summary,
}

/// Why a pipeline could not be built or a message not processed.
#[derive(Debug)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl Pipeline {
    /// A pipeline joining `left` and `right` with `join_type`.
    pub fn new(left: Table, right: Table, join_type: JoinType) -> Result<Pipeline, Error> {
        let spec = JoinSpec {
            left: left.side_spec(),
            right: right.side_spec(),
            join_type,
            absent_retraction: RetractionPolicy::Fail,
            key_groups: KeyGroupRange {
                start: 0,
                end: MAX_PARALLELISM - 1,
            },
        };
        let engine = JoinEngine::new(&spec).map_err(|e| Error(e.to_string()))?;
        let decoder = |t: &Table| {
            BatchDecoder::new(BatchDecoderConfig {
                decoder: t.decoder.clone(),
                join_key: t.join_key.clone(),
                source: t.name.clone(),
                max_parallelism: None,
            })
            .map_err(Error)
        };
        let decoders = [decoder(&left)?, decoder(&right)?];
        Ok(Pipeline {
            layouts: [
                RowLayout::new(left.schema()),
                RowLayout::new(right.schema()),
            ],
            tables: [left, right],
            decoders,
            engine,
            message: Vec::new(),
            batch: Vec::new(),
            out: Vec::new(),
            summary: Summary::default(),
        })
    }

    /// Decodes (as the product's decode step does, [`BatchDecoder`]) and joins one message of
    /// `side`; returns the emitted rows, printed as Flink prints them. `offset` names the message
    /// in errors (`<table> record #<offset>`).
    pub fn process(&mut self, side: Side, offset: u64, json: &[u8]) -> Result<Vec<String>, Error> {
        let i = side as usize;
        self.summary.messages += 1;
        self.message.clear();
        write_message(&mut self.message, Some(json).filter(|j| !j.is_empty()));
        let decoder = &mut self.decoders[i];
        let summary = decoder.decode_json(&self.message, offset).map_err(Error)?;
        self.summary.tombstones += summary.tombstones as u64;
        self.summary.changes += summary.changes as u64;
        self.batch.clear();
        for entry in output_entries(decoder.output()) {
            match entry {
                Decoded::Change { kind, key, row, .. } => write_input(
                    &mut self.batch,
                    &InputRecord {
                        side,
                        kind,
                        key_group: key_group(key),
                        timestamp: None,
                        row,
                    },
                ),
                Decoded::Error { message, .. } => return Err(Error(message.to_string())),
            }
        }
        let position = format!("{} record #{offset}", self.tables[i].name);
        self.out.clear();
        self.engine
            .process_batch(&self.batch, 0, &mut self.out)
            .map_err(|e| Error(format!("{position}: {e}")))?;
        self.print_output()
            .map_err(|e| Error(format!("{position}: rejected by the join: {e}")))
    }

    /// The output printed; a rejected record (the pipeline has no side output) is an error.
    fn print_output(&self) -> Result<Vec<String>, String> {
        let side = |i: usize, r: Option<&[u8]>| match r {
            Some(b) => Value::read_row(&RowRef::new(&self.layouts[i], b)),
            None => vec![Value::Null; self.layouts[i].arity()],
        };
        OutputEntries::new(&self.out)
            .map(|entry| match entry {
                OutputEntry::Row(r) => {
                    let mut vals = side(0, r.left);
                    vals.extend(side(1, r.right));
                    Ok(format_row(r.kind, &vals))
                }
                OutputEntry::Rejected { message, .. } => Err(message.to_string()),
            })
            .collect()
    }

    /// Counters so far, with the engine's state size.
    pub fn summary(&self) -> Summary {
        Summary {
            join: self.engine.stats(),
            ..self.summary
        }
    }

    /// The engine (for state size).
    pub fn engine(&self) -> &JoinEngine {
        &self.engine
    }
}

/// The key group Flink assigns a join key (see `cdcjoin_model::key_group`).
fn key_group(key: &[u8]) -> u16 {
    cdcjoin_model::key_group::key_group(key, MAX_PARALLELISM as u32)
}

/// One event of a test vector.
#[derive(Clone, Debug, Deserialize)]
pub struct VectorEvent {
    /// `"left"` or `"right"`.
    pub side: String,
    /// The Debezium envelope, or null for a tombstone.
    pub value: serde_json::Value,
}

/// A shared test vector (`tests/vectors/*.json`).
#[derive(Clone, Debug, Deserialize)]
pub struct Vector {
    /// What it shows.
    pub description: String,
    /// Left input.
    pub left: Table,
    /// Right input.
    pub right: Table,
    /// The messages, in order.
    pub events: Vec<VectorEvent>,
    /// Expected changelog per join type name.
    pub expected: std::collections::BTreeMap<String, Vec<String>>,
}

impl Vector {
    /// Runs the vector's events with `join_type`; returns every emitted row.
    pub fn run(&self, join_type: JoinType) -> Result<Vec<String>, Error> {
        let mut p = Pipeline::new(self.left.clone(), self.right.clone(), join_type)?;
        let mut out = Vec::new();
        for (offset, e) in self.events.iter().enumerate() {
            let side = if e.side == "left" {
                Side::Left
            } else {
                Side::Right
            };
            let json = if e.value.is_null() {
                Vec::new()
            } else {
                serde_json::to_vec(&e.value).expect("JSON")
            };
            out.extend(p.process(side, offset as u64, &json)?);
        }
        Ok(out)
    }
}

/// Parses a join type name (`INNER`, `LEFT`, `RIGHT`, `FULL`).
pub fn parse_join_type(s: &str) -> Result<JoinType, Error> {
    serde_json::from_value(serde_json::Value::String(s.to_ascii_uppercase())).map_err(|_| {
        Error(format!(
            "unknown join type '{s}' (INNER, LEFT, RIGHT or FULL)"
        ))
    })
}
