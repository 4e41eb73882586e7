//! Writes seed inputs for the batch fuzz targets into their corpus folders
//! (`rust/fuzz/corpus/{join_batch,multiway_batch,decode_batch}`), so that the fuzzer starts from
//! valid batches rather than from bytes that seldom form a row: small traces of the users/domains
//! workload (a few users, so that keys hold several rows and the multi-way join's loops nest),
//! decoded into the join targets' batches, each prefixed by the targets' mode byte, for every pair
//! of join types and a few output bounds; and the same traces' Debezium messages framed as the
//! decode step's JSON batches, plain and partitioned. Run it once before fuzzing:
//! `cargo run --manifest-path rust/fuzz/Cargo.toml --example seeds`.

use cdcjoin_debezium::batch::write_message;
use cdcjoin_debezium::{ChangeSink, Decoded, Decoder, DecoderConfig};
use cdcjoin_join::batch::{write_input, InputRecord};
use cdcjoin_model::exchange::write_stamp;
use cdcjoin_model::key_group::key_group;
use cdcjoin_model::{KeyProjection, RowLayout, RowRef};
use cdcjoin_workload::{domains_schema, generate, users_schema, Event, Topic, WorkloadConfig};
use std::path::Path;

/// Records per join seed: the targets take inputs of up to 4 KiB.
const RECORDS: usize = 60;

/// Bytes of messages per decode seed, within the targets' 4 KiB.
const JSON_BYTES: usize = 4000;

/// A small trace of the workload: a few users, so that keys hold several rows.
fn small_trace(seed: u64) -> WorkloadConfig {
    WorkloadConfig {
        users: 3,
        domains: 12,
        events: 80,
        seed,
    }
}

/// The events of a trace as (table: 0 users, 1 domains; change kind; row; key group of 128).
fn changes(events: &[Event]) -> Vec<(usize, cdcjoin_model::RowKind, Vec<u8>, u16)> {
    let schemas = [users_schema(), domains_schema()];
    let mut decoders =
        (schemas.clone()).map(|s| Decoder::new(DecoderConfig::new(s)).expect("decoder"));
    let layouts = [0, 1].map(|t| RowLayout::new(&schemas[t]));
    let keys = [0, 1].map(|t| KeyProjection::new(&schemas[t], &[t]));
    let (mut out, mut sink, mut key) = (Vec::new(), ChangeSink::new(), Vec::new());
    for e in events {
        let t = usize::from(e.topic != Topic::Users);
        sink.clear();
        if decoders[t]
            .decode(&e.json, &e.offset, &mut sink)
            .expect("valid")
            == Decoded::Tombstone
        {
            continue;
        }
        for (kind, row) in sink.iter() {
            key.clear();
            keys[t].write(&RowRef::new(&layouts[t], row), &mut key);
            out.push((t, kind, row.to_vec(), key_group(&key, 128)));
        }
    }
    out
}

/// A batch of `changes`, each on the input `side` gives it.
fn batch(
    changes: &[(usize, cdcjoin_model::RowKind, Vec<u8>, u16)],
    side: impl Fn(usize, usize) -> u8,
) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, (t, kind, row, key_group)) in changes.iter().take(RECORDS).enumerate() {
        let rec = InputRecord {
            side: side(*t, i),
            kind: *kind,
            key_group: *key_group,
            timestamp: None,
            row,
        };
        write_input(&mut out, &rec);
    }
    out
}

/// The messages of `events` framed as the decode step's JSON batch (`(stamp? | len u32 |
/// message)*`, a stamp when `stamped`), up to [`JSON_BYTES`].
fn json_batch(events: &[Event], stamped: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for e in events {
        if out.len() + e.json.len() > JSON_BYTES {
            break;
        }
        if stamped {
            write_stamp(&mut out, Some(e.offset as i64));
        }
        write_message(&mut out, Some(&e.json[..]).filter(|j| !j.is_empty()));
    }
    out
}

fn write(target: &str, name: String, mode: u8, batch: &[u8]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    std::fs::create_dir_all(&dir).expect("corpus folder");
    let mut bytes = vec![mode];
    bytes.extend_from_slice(batch);
    std::fs::write(dir.join(name), bytes).expect("seed written");
}

fn main() {
    let mut seeds = 0;
    for trace in 0..4u64 {
        let events = generate(&small_trace(trace));
        let changes = changes(&events);
        // join_batch: users left (side 0), domains right (side 1); mode: the join type in its two
        // low bits, a bound in its top three.
        let two = batch(&changes, |t, _| t as u8);
        // multiway_batch: users (0), each domain change on input 1 or 2 in turn; mode: the two
        // join types in its four low bits, a bound in its top two.
        let three = batch(&changes, |t, i| if t == 0 { 0 } else { 1 + (i % 2) as u8 });
        for types in 0..16u8 {
            for bound in [0u8, 2, 3] {
                let name = format!("seed-{trace}-{types}-{bound}");
                if types < 4 {
                    write("join_batch", name.clone(), types | bound << 5, &two);
                }
                write("multiway_batch", name, types | bound << 6, &three);
                seeds += 1;
            }
        }
        // decode_batch: JSON batches (mode bits 0-1 clear), plain or partitioned (bit 2,
        // stamped), joined on user_id or id (bit 3).
        for mode in [0u8, 4, 8, 12] {
            let batch = json_batch(&events, mode & 4 != 0);
            write("decode_batch", format!("seed-{trace}-{mode}"), mode, &batch);
        }
    }
    println!(
        "{seeds} seeds for multiway_batch, a quarter of them for join_batch; 16 for decode_batch"
    );
}
