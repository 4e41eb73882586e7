//! The workload the decode benches share: realistic Debezium envelopes and a consumer decoding them.
//!
//! A batch of 10,000 messages from two tables, `users` (70%) and `domains` (30%), mixing creates
//! (50%), updates (35%) and deletes (15%), each with a full `source` block as Debezium's Postgres or
//! MySQL connector writes it, bare or wrapped in Kafka Connect's `{"schema", "payload"}` envelope.
//! The consumer decodes it with one decoder per table into one reused sink, as a consumer task
//! would. Kept in one place so that every bench measures the same bytes.

use cdcjoin_debezium::batch::{write_message, BatchDecoder, BatchDecoderConfig};
use cdcjoin_debezium::{
    ChangeSink, DecimalHandling, Decoded, Decoder, DecoderConfig, TimePrecision,
};
use cdcjoin_model::exchange::write_stamp;
use cdcjoin_model::{DataType, Field, Schema};
use cdcjoin_workload::XorShift;

/// Messages in a batch.
pub const BATCH: usize = 10_000;

fn t(s: &str) -> DataType {
    s.parse().unwrap()
}

fn users_schema() -> Schema {
    Schema::new(vec![
        Field::not_null("id", t("BIGINT")),
        Field::not_null("email", t("STRING")),
        Field::new("full_name", t("STRING")),
        Field::not_null("domain_id", t("BIGINT")),
        Field::new("balance", t("DECIMAL(12, 2)")),
        Field::new("active", t("BOOLEAN")),
        Field::new("created_at", t("TIMESTAMP(6)")),
        Field::new("updated_at", t("TIMESTAMP(6)")),
    ])
}

fn domains_schema() -> Schema {
    Schema::new(vec![
        Field::not_null("id", t("BIGINT")),
        Field::not_null("name", t("STRING")),
        Field::new("owner", t("STRING")),
        Field::new("plan", t("STRING")),
        Field::new("seats", t("INT")),
        Field::new("created_at", t("TIMESTAMP(6)")),
    ])
}

const NAMES: &[&str] = &[
    "alice", "bob", "carol", "dave", "eve", "mallory", "trent", "peggy", "victor", "walter",
];

/// Base64 of a positive unscaled value, as Debezium's `precise` decimal mode writes it.
fn base64_decimal(unscaled: u64) -> String {
    use base64::Engine as _;
    let bytes = (unscaled as i128).to_be_bytes();
    let first = bytes.iter().position(|&b| b != 0).unwrap_or(15).min(15);
    // Keep a leading zero byte when the top bit is set, as BigInteger#toByteArray does.
    let first = if bytes[first] & 0x80 != 0 {
        first - 1
    } else {
        first
    };
    base64::engine::general_purpose::STANDARD.encode(&bytes[first..])
}

fn user_row(rng: &mut XorShift, id: u64) -> String {
    let name = NAMES[rng.index(NAMES.len())];
    let created = 1_700_000_000_000_000 + rng.below(30_000_000_000_000);
    format!(
        r#"{{"id":{id},"email":"{name}.{id}@example-{d}.com","full_name":"{cap} {id} O\u0027Neil","domain_id":{d},"balance":"{bal}","active":{act},"created_at":{created},"updated_at":{upd}}}"#,
        d = rng.below(1000),
        cap = name.to_uppercase(),
        bal = base64_decimal(rng.below(100_000_000)),
        act = rng.below(2) == 0,
        upd = created + rng.below(1_000_000_000),
    )
}

fn domain_row(rng: &mut XorShift, id: u64) -> String {
    let owner = NAMES[rng.index(NAMES.len())];
    format!(
        r#"{{"id":{id},"name":"domain-{id}.example.org","owner":"{owner}","plan":"{plan}","seats":{seats},"created_at":{created}}}"#,
        plan = ["free", "team", "enterprise"][rng.below(3) as usize],
        seats = rng.below(5000),
        created = 1_700_000_000_000_000 + rng.below(30_000_000_000_000),
    )
}

/// The connector whose `source` block the envelopes carry.
#[derive(Clone, Copy, Debug)]
pub enum Connector {
    /// Debezium's Postgres connector (`lsn`, `txId`, `sequence`, ...).
    Postgres,
    /// Debezium's MySQL connector (binlog `file`/`pos`, `gtid`, `server_id`, ...).
    MySql,
}

impl Connector {
    /// The `source` block of the `i`-th change, to `table`.
    fn source(self, table: &str, i: u64) -> String {
        let lsn = 33_842_216 + i * 64;
        let ts = 1_706_696_130_000 + i;
        match self {
            Connector::Postgres => format!(
                r#"{{"version":"2.5.0.Final","connector":"postgresql","name":"pgserver1","ts_ms":{ts},"snapshot":"false","db":"inventory","sequence":"[\"{prev}\",\"{lsn}\"]","schema":"public","table":"{table}","txId":{tx},"lsn":{lsn},"xmin":null}}"#,
                prev = lsn - 64,
                tx = 770 + i / 4,
            ),
            Connector::MySql => format!(
                r#"{{"version":"2.5.0.Final","connector":"mysql","name":"mysql-server-1","ts_ms":{ts},"snapshot":"false","db":"inventory","sequence":null,"table":"{table}","server_id":223344,"gtid":"5c9e2a1b-8f3d-11ee-b9d1-0242ac120002:{gtid}","file":"mysql-bin.000003","pos":{lsn},"row":0,"thread":7,"query":null}}"#,
                gtid = 1000 + i / 4,
            ),
        }
    }
}

/// One message: which table (0 = users, 1 = domains) and its JSON.
pub struct Message {
    /// The table: 0 = users, 1 = domains.
    pub table: usize,
    /// The message as it comes from Kafka.
    pub json: Vec<u8>,
}

/// The batch of `connector`'s envelopes, bare or (`wrapped`) in Kafka Connect's schema wrapper.
pub fn workload(connector: Connector, wrapped: bool) -> Vec<Message> {
    let mut rng = XorShift(0x5eed_cafe_f00d_d00d);
    (0..BATCH as u64)
        .map(|i| {
            let table = usize::from(rng.below(10) >= 7);
            let row = |rng: &mut XorShift| match table {
                0 => user_row(rng, i % 5000),
                _ => domain_row(rng, i % 1000),
            };
            let (op, before, after) = match rng.below(20) {
                0..=9 => ("c", "null".to_string(), row(&mut rng)),
                10..=16 => ("u", row(&mut rng), row(&mut rng)),
                _ => ("d", row(&mut rng), "null".to_string()),
            };
            let src = connector.source(["users", "domains"][table], i);
            let envelope = format!(
                r#"{{"before":{before},"after":{after},"source":{src},"op":"{op}","ts_ms":{ts},"transaction":null}}"#,
                ts = 1_706_696_130_500 + i
            );
            let json = if wrapped { wrap(&envelope, table) } else { envelope };
            Message {
                table,
                json: json.into_bytes(),
            }
        })
        .collect()
}

/// Kafka Connect's JsonConverter with `schemas.enable=true`: the table's columns as Debezium's
/// Postgres connector names them under its defaults, in `before` and `after` (the `source` block's
/// schema left out).
fn wrap(envelope: &str, table: usize) -> String {
    let micros =
        r#""type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp","version":1"#;
    let columns = match table {
        0 => format!(
            r#"{{"type":"int64","optional":false,"field":"id"}},{{"type":"string","optional":false,"field":"email"}},{{"type":"string","optional":true,"field":"full_name"}},{{"type":"int64","optional":false,"field":"domain_id"}},{{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{{"scale":"2","connect.decimal.precision":"12"}},"field":"balance"}},{{"type":"boolean","optional":true,"field":"active"}},{{{micros},"field":"created_at"}},{{{micros},"field":"updated_at"}}"#
        ),
        _ => format!(
            r#"{{"type":"int64","optional":false,"field":"id"}},{{"type":"string","optional":false,"field":"name"}},{{"type":"string","optional":true,"field":"owner"}},{{"type":"string","optional":true,"field":"plan"}},{{"type":"int32","optional":true,"field":"seats"}},{{{micros},"field":"created_at"}}"#
        ),
    };
    let image = |side: &str| {
        format!(
            r#"{{"type":"struct","fields":[{columns}],"optional":true,"name":"pgserver1.public.t.Value","field":"{side}"}}"#
        )
    };
    format!(
        r#"{{"schema":{{"type":"struct","fields":[{},{},{{"type":"string","optional":false,"field":"op"}}],"optional":false,"name":"pgserver1.public.t.Envelope","version":1}},"payload":{envelope}}}"#,
        image("before"),
        image("after")
    )
}

/// How Debezium's Postgres connector encodes these tables with its defaults: precise decimals,
/// adaptive times, `timestamp(6)` columns as micros.
fn postgres_config(schema: Schema) -> DecoderConfig {
    let mut config = DecoderConfig::new(schema);
    config.decimal_handling = Some(DecimalHandling::Precise);
    config.time_precision = Some(TimePrecision::Adaptive);
    for column in ["created_at", "updated_at"] {
        if config.schema.index_of(column).is_some() {
            config.source_precision.insert(column.into(), 6);
        }
    }
    config
}

/// The total size of a batch's messages.
pub fn bytes(batch: &[Message]) -> u64 {
    batch.iter().map(|m| m.json.len() as u64).sum()
}

/// The consumer side: a decoder per table and one reused sink.
pub struct Consumer {
    decoders: [Decoder; 2],
    sink: ChangeSink,
}

impl Consumer {
    /// Decoders for both tables as Debezium encodes them by default, and an empty sink.
    pub fn new() -> Consumer {
        Consumer::of(users_schema(), domains_schema())
    }

    /// [`Consumer::new`] for a job that reads a few of each table's columns (`users.id`,
    /// `users.domain_id`, `domains.id`, `domains.plan`): every other column is looked up and
    /// skipped in every message.
    #[allow(dead_code)] // only the decode bench uses it; the parser comparison shares this module
    pub fn few_columns() -> Consumer {
        let few = |s: Schema, names: [&str; 2]| {
            let keep = names.map(|n| s.index_of(n).unwrap());
            Schema::new(keep.iter().map(|&i| s.fields[i].clone()).collect())
        };
        Consumer::of(
            few(users_schema(), ["id", "domain_id"]),
            few(domains_schema(), ["id", "plan"]),
        )
    }

    fn of(users: Schema, domains: Schema) -> Consumer {
        let decoder = |s| Decoder::new(postgres_config(s)).unwrap();
        Consumer {
            decoders: [decoder(users), decoder(domains)],
            sink: ChangeSink::with_capacity(2 * BATCH, 256 * BATCH),
        }
    }

    /// Decodes the whole batch; returns the number of changes.
    pub fn decode(&mut self, batch: &[Message]) -> usize {
        self.sink.clear();
        for (i, m) in batch.iter().enumerate() {
            let decoded = self.decoders[m.table].decode(&m.json, &i, &mut self.sink);
            assert!(matches!(decoded, Ok(Decoded::Changes(_))), "{decoded:?}");
        }
        self.sink.len()
    }
}

/// Messages per batch of the product's decode step: the decode operator's default batch size
/// (`JoinBuilder.batchSize` on the Java side).
pub const PRODUCT_BATCH: usize = 1024;

/// The product's decode step: each table's messages framed as the decode operator hands them to
/// [`BatchDecoder`] (a stamp and a length before each, [`PRODUCT_BATCH`] messages a batch),
/// decoded batch by batch and sorted into the key groups (max parallelism 128) of the join key
/// (`users.domain_id`, `domains.id`), which is the join's input.
#[allow(dead_code)] // only the decode bench uses it; the parser comparison shares this module
pub struct BatchConsumer {
    decoders: [BatchDecoder; 2],
    /// Per table, its batches.
    frames: [Vec<Vec<u8>>; 2],
}

#[allow(dead_code)]
impl BatchConsumer {
    /// Batch decoders for both tables, and `batch` framed per table.
    pub fn new(batch: &[Message]) -> BatchConsumer {
        let decoder = |schema, key: &str| {
            BatchDecoder::new(BatchDecoderConfig {
                decoder: postgres_config(schema),
                join_key: vec![key.into()],
                source: String::new(),
                max_parallelism: Some(128),
            })
            .unwrap()
        };
        let mut frames: [Vec<Vec<u8>>; 2] = [Vec::new(), Vec::new()];
        let mut counts = [0; 2];
        for (i, m) in batch.iter().enumerate() {
            if counts[m.table] % PRODUCT_BATCH == 0 {
                frames[m.table].push(Vec::new());
            }
            counts[m.table] += 1;
            let frame = frames[m.table].last_mut().expect("a batch was opened");
            write_stamp(frame, Some(i as i64));
            write_message(frame, Some(&m.json));
        }
        BatchConsumer {
            decoders: [
                decoder(users_schema(), "domain_id"),
                decoder(domains_schema(), "id"),
            ],
            frames,
        }
    }

    /// Decodes both tables' batches; returns the number of changes.
    pub fn decode(&mut self) -> usize {
        let mut changes = 0;
        for (d, frames) in self.decoders.iter_mut().zip(&self.frames) {
            for frame in frames {
                let summary = d.decode_json(frame, 0).unwrap();
                assert_eq!(summary.errors, 0);
                changes += summary.changes;
            }
        }
        changes
    }
}
