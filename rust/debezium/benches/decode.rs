//! Decoding throughput on realistic Debezium Postgres envelopes.
//!
//! A batch of 10,000 messages from two tables, `users` (70%) and `domains` (30%), mixing creates
//! (50%), updates (35%) and deletes (15%), each with a full Postgres `source` block, decoded by one
//! decoder per table into one reused sink, as a consumer task would. Reported as MB/s of JSON and
//! as events (messages) per second; a third bench decodes the same batch wrapped in Kafka
//! Connect's `{"schema", "payload"}` envelope.

use cdcjoin_debezium::{
    ChangeSink, DecimalHandling, Decoded, Decoder, DecoderConfig, TimePrecision,
};
use cdcjoin_model::{DataType, Field, Schema};
use cdcjoin_workload::XorShift;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;

const BATCH: usize = 10_000;

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

fn source(table: &str, lsn: u64, tx: u64) -> String {
    format!(
        r#"{{"version":"2.5.0.Final","connector":"postgresql","name":"pgserver1","ts_ms":{ts},"snapshot":"false","db":"inventory","sequence":"[\"{prev}\",\"{lsn}\"]","schema":"public","table":"{table}","txId":{tx},"lsn":{lsn},"xmin":null}}"#,
        ts = 1_706_696_130_000 + lsn / 1000,
        prev = lsn - 64,
    )
}

/// One message: which table (0 = users, 1 = domains) and its JSON.
struct Message {
    table: usize,
    json: Vec<u8>,
}

fn workload(wrapped: bool) -> Vec<Message> {
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
            let src = source(["users", "domains"][table], 33_842_216 + i * 64, 770 + i / 4);
            let envelope = format!(
                r#"{{"before":{before},"after":{after},"source":{src},"op":"{op}","ts_ms":{ts},"transaction":null}}"#,
                ts = 1_706_696_130_500 + i
            );
            let json = if wrapped { wrap(&envelope) } else { envelope };
            Message {
                table,
                json: json.into_bytes(),
            }
        })
        .collect()
}

/// Kafka Connect's JsonConverter with `schemas.enable=true` (a shortened but nested schema).
fn wrap(envelope: &str) -> String {
    format!(
        r#"{{"schema":{{"type":"struct","fields":[{{"type":"struct","fields":[{{"type":"int64","optional":false,"field":"id"}},{{"type":"string","optional":true,"field":"name"}}],"optional":true,"name":"pgserver1.public.t.Value","field":"before"}},{{"type":"string","optional":false,"field":"op"}}],"optional":false,"name":"pgserver1.public.t.Envelope","version":1}},"payload":{envelope}}}"#
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

/// The consumer side: a decoder per table and one reused sink.
struct Consumer {
    decoders: [Decoder; 2],
    sink: ChangeSink,
}

impl Consumer {
    fn new() -> Consumer {
        let decoder = |s| Decoder::new(postgres_config(s)).unwrap();
        Consumer {
            decoders: [decoder(users_schema()), decoder(domains_schema())],
            sink: ChangeSink::with_capacity(2 * BATCH, 256 * BATCH),
        }
    }

    /// Decodes the whole batch; returns the number of changes.
    fn decode(&mut self, batch: &[Message]) -> usize {
        self.sink.clear();
        for (i, m) in batch.iter().enumerate() {
            let decoded = self.decoders[m.table].decode(&m.json, &i, &mut self.sink);
            assert!(matches!(decoded, Ok(Decoded::Changes(_))), "{decoded:?}");
        }
        self.sink.len()
    }
}

fn bench(c: &mut Criterion) {
    let bare = workload(false);
    let wrapped = workload(true);
    let bytes = |batch: &[Message]| batch.iter().map(|m| m.json.len() as u64).sum::<u64>();
    let mut consumer = Consumer::new();
    let changes = consumer.decode(&bare);
    eprintln!(
        "batch: {BATCH} messages, {changes} changes, {} bytes ({} bytes/message)",
        bytes(&bare),
        bytes(&bare) / BATCH as u64
    );

    let mut group = c.benchmark_group("debezium_decode_bytes");
    group.throughput(Throughput::Bytes(bytes(&bare)));
    group.bench_function("users_domains_10k", |b| {
        b.iter(|| black_box(consumer.decode(black_box(&bare))))
    });
    group.throughput(Throughput::Bytes(bytes(&wrapped)));
    group.bench_function("users_domains_10k_wrapped", |b| {
        b.iter(|| black_box(consumer.decode(black_box(&wrapped))))
    });
    group.finish();

    let mut group = c.benchmark_group("debezium_decode_events");
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function("users_domains_10k", |b| {
        b.iter(|| black_box(consumer.decode(black_box(&bare))))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
