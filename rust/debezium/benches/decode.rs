//! Decoding throughput on realistic Debezium Postgres envelopes (the workload is in `common`).
//!
//! Reported as MB/s of JSON and as events (messages) per second; the bytes group also decodes the
//! same batch wrapped in Kafka Connect's `{"schema", "payload"}` envelope, and the batch with
//! MySQL `source` blocks instead, and the batch read by a job that declares two of each table's
//! columns. A last group decodes the bare batch as the product's decode step does
//! ([`cdcjoin_debezium::batch::BatchDecoder`]: framed, and partitioned by key group). Timed by
//! the benchmark thread's CPU time (`cdcjoin_workload::cpu_time`).

mod common;

use cdcjoin_workload::cpu_time::measure;
use common::{bytes, workload, BatchConsumer, Connector, Consumer, BATCH};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let bare = workload(Connector::Postgres, false);
    let wrapped = workload(Connector::Postgres, true);
    let mysql = workload(Connector::MySql, false);
    let mut consumer = Consumer::new();
    let changes = consumer.decode(&bare);
    eprintln!(
        "batch: {BATCH} messages, {changes} changes, {} bytes ({} bytes/message)",
        bytes(&bare),
        bytes(&bare) / BATCH as u64
    );

    let mut group = c.benchmark_group("debezium_decode_bytes");
    group.throughput(Throughput::Bytes(bytes(&bare)));
    measure(&mut group, "users_domains_10k", || {
        consumer.decode(black_box(&bare))
    });
    group.throughput(Throughput::Bytes(bytes(&wrapped)));
    measure(&mut group, "users_domains_10k_wrapped", || {
        consumer.decode(black_box(&wrapped))
    });
    group.throughput(Throughput::Bytes(bytes(&mysql)));
    measure(&mut group, "users_domains_10k_mysql", || {
        consumer.decode(black_box(&mysql))
    });
    let mut few = Consumer::few_columns();
    group.throughput(Throughput::Bytes(bytes(&bare)));
    measure(&mut group, "users_domains_10k_few_columns", || {
        few.decode(black_box(&bare))
    });
    group.finish();

    let mut group = c.benchmark_group("debezium_decode_events");
    group.throughput(Throughput::Elements(BATCH as u64));
    measure(&mut group, "users_domains_10k", || {
        consumer.decode(black_box(&bare))
    });
    group.finish();

    let mut batches = BatchConsumer::new(&bare);
    assert_eq!(batches.decode(), changes);
    let mut group = c.benchmark_group("debezium_batch_decoder");
    group.throughput(Throughput::Bytes(bytes(&bare)));
    measure(&mut group, "users_domains_10k_partitioned", || {
        black_box(&mut batches).decode()
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
