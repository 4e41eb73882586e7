//! Snapshot write, restore and compression speed on a large users/domains state.
//!
//! The state is the users/domains LEFT join of `benches/join.rs` after a snapshot of the two
//! tables: users `(id, firstname, lastname)` with the workload's names, domains
//! `(id, user_id, "site<id>.<tld>")` spread uniformly over the users (a fifth of the rows are
//! users: four domains each on average).
//! The rows are generated directly (decoding millions of Debezium envelopes would only slow the
//! setup). `SNAPSHOT_BENCH_ROWS` sets the stored rows (default 5,000,000).
//!
//! Measured in MiB/s of snapshot bytes (all sections of the 128 key groups) per second of the
//! benchmark thread's CPU time (see [`measure`]):
//! - `write_live` / `write_frozen`: writing every section from the engine, and from a frozen state;
//! - `restore`: restoring every section into a fresh engine (what a recovery or rescale does);
//! - `write_frozen_format3_lz4` / `restore_format3_lz4`: the same with sections compressed (format
//!   3, [`Compression::Lz4`]), in MiB/s of the uncompressed sections;
//! - `lz4`, `zstd1`, `zstd3` compress and decompress: each section on its own (sections restore
//!   independently), in MiB/s of uncompressed bytes, and `<codec>_restore`, decompressing and
//!   restoring every section, one after the other as the task thread would; the ratio is printed
//!   before criterion runs.
//!
//! And, first, what one checkpoint taken while the join goes on costs, step by step, in CPU time
//! (group `checkpoint`, see [`checkpoint_under_updates`]), and the wall time of a freeze taken
//! while an earlier frozen state is still to be written (`checkpoint/freeze_during_a_write`).

mod common;

use cdcjoin_join::batch::{write_input, InputRecord};
use cdcjoin_join::{Compression, JoinEngine, Side};
use cdcjoin_model::{KeyProjection, RowKind, RowLayout, RowRef, RowWriter};
use cdcjoin_workload::cpu_time::thread_cpu_ns;
use cdcjoin_workload::{domains_schema, users_schema, XorShift};
use common::{key_group, measure, spec};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::time::{Duration, Instant};

#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

const BATCH: usize = 8192;
const FIRST: [&str; 8] = ["Ana", "Bo", "Chen", "Dara", "Eli", "Farah", "Goran", "Hiro"];
const LAST: [&str; 8] = [
    "Garcia", "Kim", "Novak", "Okafor", "Park", "Rossi", "Silva", "Weber",
];
const TLD: [&str; 4] = ["com", "org", "net", "io"];

/// Encodes generated users and domains as join input records.
struct Encoder {
    layouts: [RowLayout; 2],
    keys: [KeyProjection; 2],
    row: Vec<u8>,
    key: Vec<u8>,
}

impl Encoder {
    fn new() -> Encoder {
        Encoder {
            layouts: [users_schema(), domains_schema()].map(|s| RowLayout::new(&s)),
            keys: [
                KeyProjection::new(&users_schema(), &[0]),
                KeyProjection::new(&domains_schema(), &[1]),
            ],
            row: Vec::new(),
            key: Vec::new(),
        }
    }

    /// Appends the insert of user `id` with a generated name to `batch`.
    fn user(&mut self, id: i32, rng: &mut XorShift, batch: &mut Vec<u8>) {
        self.row.clear();
        let mut w = RowWriter::new(&self.layouts[0], &mut self.row);
        w.int(id);
        w.bytes(FIRST[rng.index(8)].as_bytes());
        w.bytes(LAST[rng.index(8)].as_bytes());
        w.finish();
        self.append(0, batch);
    }

    /// Appends the insert of domain `id` of user `owner`, named `site<id>.<tld>` with the TLD
    /// picked by `id + version` (an insert of a stored domain replaces it: an update).
    fn domain(&mut self, id: i32, owner: i32, version: usize, batch: &mut Vec<u8>) {
        self.row.clear();
        let mut w = RowWriter::new(&self.layouts[1], &mut self.row);
        w.int(id);
        w.int(owner);
        w.bytes(format!("site{id}.{}", TLD[(id as usize + version) % 4]).as_bytes());
        w.finish();
        self.append(1, batch);
    }

    fn append(&mut self, side: usize, batch: &mut Vec<u8>) {
        self.key.clear();
        self.keys[side].write(&RowRef::new(&self.layouts[side], &self.row), &mut self.key);
        let rec = InputRecord {
            side: [Side::Left, Side::Right][side],
            kind: RowKind::Insert,
            key_group: key_group(&self.key),
            timestamp: None,
            row: &self.row,
        };
        write_input(batch, &rec);
    }
}

/// Inserts of `rows` rows: a fifth users, then the domains, as join input batches; and the owner
/// of each domain (`owners[id - 1]`).
fn batches(rows: usize) -> (Vec<Vec<u8>>, Vec<i32>) {
    let users = (rows / 5).max(1) as i32;
    let mut rng = XorShift(0x5eed);
    let (mut enc, mut out, mut cur, mut owners) =
        (Encoder::new(), Vec::new(), Vec::new(), Vec::new());
    for n in 0..rows {
        if n < users as usize {
            enc.user(n as i32 + 1, &mut rng, &mut cur);
        } else {
            let owner = rng.below(users as u64) as i32 + 1;
            owners.push(owner);
            enc.domain(owners.len() as i32, owner, 0, &mut cur);
        }
        if (n + 1) % BATCH == 0 {
            out.push(std::mem::take(&mut cur));
        }
    }
    out.push(cur);
    (out, owners)
}

/// A batch of [`BATCH`] updates of random domains (new TLDs by `version`, the state's size about
/// the same): with 128 key groups, every key group is written to.
fn updates(owners: &[i32], version: usize) -> Vec<u8> {
    let (mut enc, mut rng, mut batch) = (
        Encoder::new(),
        XorShift(0x0dd5 + version as u64),
        Vec::new(),
    );
    for _ in 0..BATCH {
        let id = rng.index(owners.len());
        enc.domain(id as i32 + 1, owners[id], version, &mut batch);
    }
    batch
}

/// The engine holding the state of [`batches`], and the domains' owners.
fn filled(rows: usize) -> (JoinEngine, Vec<i32>) {
    let mut engine = JoinEngine::new(&spec()).unwrap();
    let mut out = Vec::new();
    let (batches, owners) = batches(rows);
    for b in batches {
        out.clear();
        engine.process_batch(&b, 0, &mut out).unwrap();
    }
    (engine, owners)
}

/// Every section of `engine`, each on its own.
fn sections_of(engine: &JoinEngine) -> Vec<Vec<u8>> {
    engine
        .key_groups_with_state()
        .into_iter()
        .map(|kg| {
            let mut out = Vec::new();
            engine.snapshot_key_group(kg, &mut out).unwrap();
            out
        })
        .collect()
}

/// A fresh engine holding `sections`.
fn restored(sections: &[Vec<u8>]) -> JoinEngine {
    let mut engine = JoinEngine::new(&spec()).unwrap();
    for s in sections {
        engine.restore_key_group(s).unwrap();
    }
    engine
}

/// A compression codec measured on the sections.
struct Codec {
    name: &'static str,
    compress: fn(&[u8]) -> Vec<u8>,
    decompress: fn(&[u8], usize) -> Vec<u8>,
}

const CODECS: [Codec; 3] = [
    Codec {
        name: "lz4",
        compress: lz4_flex::block::compress,
        decompress: |c, len| lz4_flex::block::decompress(c, len).unwrap(),
    },
    Codec {
        name: "zstd1",
        compress: |s| zstd::bulk::compress(s, 1).unwrap(),
        decompress: |c, len| zstd::bulk::decompress(c, len).unwrap(),
    },
    Codec {
        name: "zstd3",
        compress: |s| zstd::bulk::compress(s, 3).unwrap(),
        decompress: |c, len| zstd::bulk::decompress(c, len).unwrap(),
    },
];

/// Prints the state's size and each codec's ratio.
fn report(engine: &JoinEngine, sections: &[Vec<u8>], bytes: usize) {
    let rows = engine.stats().stored_rows;
    eprintln!(
        "state: {rows} rows under {} keys; {} sections, {bytes} snapshot bytes ({:.1} B/row)",
        engine.stats().stored_keys,
        sections.len(),
        bytes as f64 / rows as f64
    );
    for c in &CODECS {
        let packed: usize = sections.iter().map(|s| (c.compress)(s).len()).sum();
        eprintln!(
            "  {:<6} {packed:>11} bytes, ratio {:.2}",
            c.name,
            bytes as f64 / packed as f64
        );
    }
}

fn bench(c: &mut Criterion) {
    let rows = std::env::var("SNAPSHOT_BENCH_ROWS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5_000_000);
    let t = Instant::now();
    let (mut engine, owners) = filled(rows);
    eprintln!("built the state in {:.1} s", t.elapsed().as_secs_f64());
    let sections = sections_of(&engine);
    let bytes: usize = sections.iter().map(Vec::len).sum();
    report(&engine, &sections, bytes);
    let mut out = Vec::with_capacity(bytes);
    let kgs = engine.key_groups_with_state();
    checkpoint_under_updates(c, &mut engine, &owners, &kgs, &mut out);

    let mut g = c.benchmark_group("snapshot");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes as u64));
    measure(&mut g, "write_live", || {
        out.clear();
        for &kg in &kgs {
            engine.snapshot_key_group(kg, &mut out).unwrap();
        }
    });
    measure(&mut g, "write_frozen", || {
        let frozen = engine.freeze();
        out.clear();
        for &kg in &kgs {
            frozen.snapshot_key_group(kg, &mut out).unwrap();
        }
    });
    measure(&mut g, "restore", || restored(&sections));
    engine.set_snapshot_compression(Compression::Lz4);
    measure(&mut g, "write_frozen_format3_lz4", || {
        let frozen = engine.freeze();
        out.clear();
        for &kg in &kgs {
            frozen.snapshot_key_group(kg, &mut out).unwrap();
        }
    });
    let format3 = sections_of(&engine);
    eprintln!(
        "format 3 (LZ4): {} bytes",
        format3.iter().map(Vec::len).sum::<usize>()
    );
    measure(&mut g, "restore_format3_lz4", || restored(&format3));
    for codec in &CODECS {
        let packed: Vec<Vec<u8>> = sections.iter().map(|s| (codec.compress)(s)).collect();
        measure(&mut g, &format!("{}_compress", codec.name), || {
            sections
                .iter()
                .map(|s| (codec.compress)(s))
                .collect::<Vec<_>>()
        });
        measure(&mut g, &format!("{}_decompress", codec.name), || {
            packed
                .iter()
                .zip(&sections)
                .map(|(p, s)| (codec.decompress)(p, s.len()))
                .collect::<Vec<_>>()
        });
        measure(&mut g, &format!("{}_restore", codec.name), || {
            let mut engine = JoinEngine::new(&spec()).unwrap();
            for (p, s) in packed.iter().zip(&sections) {
                engine
                    .restore_key_group(&(codec.decompress)(p, s.len()))
                    .unwrap();
            }
            engine
        });
    }
    g.finish();
}

/// The steps of one checkpoint taken while the join goes on, in order.
const STEPS: [&str; 5] = [
    "freeze",
    "updates_while_frozen",
    "write_after_updates",
    "drop",
    "merge",
];

/// Measures, by CPU time, each step of a checkpoint taken while the join goes on (the steps of
/// [`STEPS`]: freeze, in wall time, as it takes microseconds, below the kernel's accounting of
/// CPU time; a batch of [`updates`], whose first write to each key a frozen state still holds
/// pays the copy on write; every section written from the frozen state; the frozen state
/// dropped; the next batch (an empty one), which merges the copies back into the tables), all of
/// them together (`checkpoint_whole`), and, to compare, the same updates
/// with no frozen state (`updates`); `snapshot/write_frozen` is the write from a state nobody
/// writes to. All on this thread, so the sum is what a checkpoint costs the two threads that do
/// it in a job (the task thread's updates, the asynchronous phase's write).
fn checkpoint_under_updates(
    c: &mut Criterion,
    engine: &mut JoinEngine,
    owners: &[i32],
    kgs: &[u16],
    out: &mut Vec<u8>,
) {
    let updates = [1, 2].map(|v| updates(owners, v));
    let mut g = c.benchmark_group("checkpoint");
    g.sample_size(10);
    let mut version = 0;
    let mut emitted = Vec::new();
    let mut steps = |engine: &mut JoinEngine, frozen: bool| {
        version += 1;
        let batch = &updates[version % 2];
        let start = Instant::now();
        let state = frozen.then(|| engine.freeze());
        let freeze = start.elapsed().as_nanos() as u64;
        let updated = thread_cpu_ns();
        emitted.clear();
        engine.process_batch(batch, 0, &mut emitted).unwrap();
        let written = thread_cpu_ns();
        out.clear();
        for &kg in kgs.iter().filter(|_| frozen) {
            state.as_ref().unwrap().snapshot_key_group(kg, out).unwrap();
        }
        let dropped = thread_cpu_ns();
        drop(state);
        let released = thread_cpu_ns();
        engine.process_batch(&[], 0, &mut emitted).unwrap();
        let end = thread_cpu_ns();
        [
            freeze,
            written - updated,
            dropped - written,
            released - dropped,
            end - released,
        ]
    };
    for (i, name) in STEPS.iter().enumerate() {
        g.bench_function(*name, |b| {
            b.iter_custom(|iters| {
                Duration::from_nanos((0..iters).map(|_| steps(engine, true)[i]).sum())
            })
        });
    }
    g.bench_function("checkpoint_whole", |b| {
        b.iter_custom(|iters| {
            Duration::from_nanos(
                (0..iters)
                    .map(|_| steps(engine, true).iter().sum::<u64>())
                    .sum(),
            )
        })
    });
    g.bench_function("updates", |b| {
        b.iter_custom(|iters| {
            Duration::from_nanos((0..iters).map(|_| steps(engine, false)[1]).sum())
        })
    });
    g.bench_function("freeze_during_a_write", |b| {
        b.iter_custom(|iters| {
            let ns = (0..iters).map(|_| freeze_during_a_write(engine, &updates, kgs, out));
            Duration::from_nanos(ns.sum())
        })
    });
    g.finish();
}

/// The wall time of a freeze taken while an earlier frozen state has written none of its key
/// groups and a batch of `updates` has written to all of them since (a savepoint triggered
/// while a checkpoint is written); both states are then written out and the copies merged back.
fn freeze_during_a_write(
    engine: &mut JoinEngine,
    updates: &[Vec<u8>; 2],
    kgs: &[u16],
    out: &mut Vec<u8>,
) -> u64 {
    let mut emitted = Vec::new();
    let first = engine.freeze();
    engine.process_batch(&updates[0], 0, &mut emitted).unwrap();
    let start = Instant::now();
    let second = engine.freeze();
    let freeze = start.elapsed().as_nanos() as u64;
    engine.process_batch(&updates[1], 0, &mut emitted).unwrap();
    for state in [&first, &second] {
        out.clear();
        for &kg in kgs {
            state.snapshot_key_group(kg, out).unwrap();
        }
    }
    drop((first, second));
    engine.process_batch(&[], 0, &mut emitted).unwrap();
    freeze
}

criterion_group!(benches, bench);
criterion_main!(benches);
