//! Which JSON parser should the decoder scan envelopes with? serde_json (today) against SIMD
//! parsers, in one criterion run on the same bytes (issue 13).
//!
//! For each input (envelopes with a full Postgres or MySQL `source` block, bare or wrapped in
//! Kafka Connect's `{"schema", "payload"}`), the group `parsers/<input>` measures:
//!
//! * `decoder`: the crate's [`Decoder`](cdcjoin_debezium::Decoder) end to end (scan, decode every
//!   column into rows), the figure an alternative parser would have to beat;
//! * the raw parse cost of each candidate doing the part of the decoder's work that a parser does:
//!   find `op`, `before`, `after` (under `payload` when wrapped), visit each column of the images
//!   and hold its value, skipping everything else (`source`, `ts_ms`, the Connect schema).
//!   - `serde_json_derive`: serde derive with borrowed `&RawValue` column values (what the
//!     decoder's hand-written visitors do); `serde_json_value`: a `serde_json::Value` tree;
//!   - `simd_json_tape`: the message copied into a reused padded buffer (simd-json parses in
//!     place), then a reused tape walked; `simd_json_borrowed`: a `BorrowedValue` tree;
//!     `simd_json_derive`: the same serde derive over simd-json (no raw values there, so column
//!     values are only skipped);
//!   - `sonic_rs_lazy`: sonic-rs's checked lazy object iterator, column values as raw
//!     `LazyValue`s; `sonic_rs_derive`: the serde derive with `LazyValue` column values.
//!
//! Each candidate returns what it found (the `op` byte and the number of columns seen), checked
//! against the others before measuring, so that none is faster for doing less. Before each group,
//! a table of every candidate's best times on interleaved slices ([`interleaved`]) gives the
//! ratios to quote on a loaded machine; `-- none` prints the tables alone. Findings and decision:
//! bench/README.md, "Decode: a SIMD structural index, against serde_json and SIMD JSON parsers".

mod common;

use common::{bytes, workload, Connector, Consumer, Message};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use simd_json::prelude::*;
use std::borrow::Cow;
use std::fmt;
use std::hint::black_box;
use std::marker::PhantomData;
use std::time::{Duration, Instant};

/// What a parser found in a batch: the sum of the `op` bytes and the number of image columns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Digest {
    op: u64,
    columns: usize,
}

impl Digest {
    fn op(&mut self, op: Option<&str>) {
        self.op += op.and_then(|s| s.bytes().next()).map_or(0, u64::from);
    }

    fn add(self, other: Digest) -> Digest {
        Digest {
            op: self.op + other.op,
            columns: self.columns + other.columns,
        }
    }
}

/// An envelope as serde derive sees it: only the fields the decoder needs; `R` holds a column
/// value (a raw value where the parser has one).
#[derive(Deserialize)]
#[serde(bound(deserialize = "R: Deserialize<'de>"))]
struct Envelope<'a, R> {
    #[serde(borrow)]
    op: Option<Cow<'a, str>>,
    before: Option<Row<R>>,
    after: Option<Row<R>>,
    #[serde(borrow)]
    payload: Option<Box<Envelope<'a, R>>>,
}

impl<R> Envelope<'_, R> {
    fn digest(&self) -> Digest {
        if let Some(inner) = &self.payload {
            return inner.digest();
        }
        let mut d = Digest::default();
        d.op(self.op.as_deref());
        d.columns = [&self.before, &self.after]
            .iter()
            .map(|row| row.as_ref().map_or(0, |r| r.columns))
            .sum();
        d
    }
}

/// A row image: its columns visited, each value deserialized as an `R`.
struct Row<R> {
    columns: usize,
    value: PhantomData<R>,
}

impl<'de, R: Deserialize<'de>> Deserialize<'de> for Row<R> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(RowVisitor(PhantomData))
    }
}

struct RowVisitor<R>(PhantomData<R>);

impl<'de, R: Deserialize<'de>> Visitor<'de> for RowVisitor<R> {
    type Value = Row<R>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a row image")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Row<R>, A::Error> {
        let mut columns = 0;
        while let Some((_name, value)) = map.next_entry::<&'de str, R>()? {
            black_box(&value);
            columns += 1;
        }
        Ok(Row {
            columns,
            value: PhantomData,
        })
    }
}

fn serde_json_derive(json: &[u8]) -> Digest {
    serde_json::from_slice::<Envelope<&serde_json::value::RawValue>>(json)
        .unwrap()
        .digest()
}

fn serde_json_value(json: &[u8]) -> Digest {
    let value: serde_json::Value = serde_json::from_slice(json).unwrap();
    let mut env = &value;
    if value.get("schema").is_some() && value["payload"].is_object() {
        env = &value["payload"];
    }
    let mut d = Digest::default();
    d.op(env["op"].as_str());
    d.columns = ["before", "after"]
        .iter()
        .map(|k| env[k].as_object().map_or(0, |o| o.len()))
        .sum();
    d
}

/// simd-json's reused state: the padded copy of the message it parses in place, its buffers and
/// the tape.
struct SimdJson {
    input: Vec<u8>,
    buffers: simd_json::Buffers,
    tape: Option<simd_json::Tape<'static>>,
}

impl SimdJson {
    fn new() -> SimdJson {
        SimdJson {
            input: Vec::new(),
            buffers: simd_json::Buffers::new(4096),
            tape: None,
        }
    }

    /// Copies `json` into the reused input buffer, followed by the padding simd-json reads.
    fn copy(&mut self, json: &[u8]) {
        self.input.clear();
        self.input.extend_from_slice(json);
        self.input
            .resize(json.len() + simd_json::INPUT_PADDING, b' ');
    }

    fn tape(&mut self, json: &[u8]) -> Digest {
        self.copy(json);
        let mut tape = self
            .tape
            .take()
            .unwrap_or_else(simd_json::Tape::null)
            .reset();
        simd_json::fill_tape_padded(&mut self.input, json.len(), &mut self.buffers, &mut tape)
            .unwrap();
        let digest = tape_digest(tape.as_value());
        self.tape = Some(tape.reset());
        digest
    }

    fn borrowed(&mut self, json: &[u8]) -> Digest {
        self.copy(json);
        let input = &mut self.input[..json.len()];
        let value = simd_json::to_borrowed_value_with_buffers(input, &mut self.buffers).unwrap();
        let mut env = &value;
        if value.get("schema").is_some() && value.get("payload").is_some_and(|p| p.is_object()) {
            env = &value["payload"];
        }
        let mut d = Digest::default();
        d.op(env.get_str("op"));
        d.columns = ["before", "after"]
            .iter()
            .map(|k| env.get_object(*k).map_or(0, |o| o.len()))
            .sum();
        d
    }

    fn derive(&mut self, json: &[u8]) -> Digest {
        self.copy(json);
        let input = &mut self.input[..json.len()];
        simd_json::serde::from_slice_with_buffers::<Envelope<IgnoredAny>>(input, &mut self.buffers)
            .unwrap()
            .digest()
    }
}

/// One pass over the top-level object of a tape, as the decoder's scan does.
fn tape_digest(value: simd_json::value::tape::Value<'_, '_>) -> Digest {
    let object = value.as_object().expect("an object");
    let (mut d, mut schema, mut payload) = (Digest::default(), false, None);
    for (key, v) in object.iter() {
        match key {
            "op" => d.op(v.as_str()),
            "before" | "after" => d.columns += v.as_object().map_or(0, |o| o.len()),
            "schema" => schema = true,
            "payload" => payload = Some(v),
            _ => {}
        }
    }
    match payload {
        Some(p) if schema && p.is_object() => tape_digest(p),
        _ => d,
    }
}

/// sonic-rs's checked lazy iterators: skipped values are validated, kept ones are raw text.
fn sonic_rs_lazy(json: &[u8]) -> Digest {
    use sonic_rs::JsonValueTrait as _;
    let (mut d, mut schema, mut payload) = (Digest::default(), false, None);
    for entry in sonic_rs::to_object_iter(json) {
        let (key, v) = entry.unwrap();
        match &*key {
            "op" => d.op(v.as_str()),
            "before" | "after" if v.is_object() => {
                for column in sonic_rs::to_object_iter(v.as_raw_str()) {
                    black_box(column.unwrap());
                    d.columns += 1;
                }
            }
            "schema" => schema = true,
            "payload" => payload = Some(v),
            _ => {}
        }
    }
    match payload {
        Some(p) if schema && p.is_object() => sonic_rs_lazy(p.as_raw_str().as_bytes()),
        _ => d,
    }
}

fn sonic_rs_derive(json: &[u8]) -> Digest {
    sonic_rs::from_slice::<Envelope<sonic_rs::LazyValue>>(json)
        .unwrap()
        .digest()
}

/// The digest of `parse` over a whole batch.
fn batch(messages: &[Message], mut parse: impl FnMut(&[u8]) -> Digest) -> Digest {
    messages
        .iter()
        .fold(Digest::default(), |d, m| d.add(parse(&m.json)))
}

/// Something that processes a whole batch, named.
type Candidate<'a> = (&'static str, Box<dyn FnMut(&[Message]) -> Digest + 'a>);

/// The decoder end to end, then each parser (checked to find what `serde_json_value` finds).
fn candidates<'a>(consumer: &'a mut Consumer, messages: &[Message]) -> Vec<Candidate<'a>> {
    fn parser<'a>(
        name: &'static str,
        mut parse: impl FnMut(&[u8]) -> Digest + 'a,
    ) -> Candidate<'a> {
        (name, Box::new(move |m: &[Message]| batch(m, &mut parse)))
    }
    let (mut tape, mut borrowed, mut derive) = (SimdJson::new(), SimdJson::new(), SimdJson::new());
    let mut all: Vec<Candidate<'a>> = vec![
        parser("serde_json_value", serde_json_value),
        parser("serde_json_derive", serde_json_derive),
        parser("simd_json_tape", move |j| tape.tape(j)),
        parser("simd_json_borrowed", move |j| borrowed.borrowed(j)),
        parser("simd_json_derive", move |j| derive.derive(j)),
        parser("sonic_rs_lazy", sonic_rs_lazy),
        parser("sonic_rs_derive", sonic_rs_derive),
    ];
    let expected = (all[0].1)(messages);
    for (name, run) in &mut all {
        assert_eq!(run(messages), expected, "{name}");
    }
    let decoder = move |m: &[Message]| Digest {
        op: 0,
        columns: consumer.decode(m),
    };
    all.insert(0, ("decoder", Box::new(decoder)));
    all
}

/// Messages per timed slice in [`interleaved`].
const SLICE: usize = 500;

/// Every candidate's best time for the batch, taken slice by slice: each round runs every
/// candidate in turn on each slice of [`SLICE`] messages, and a slice's best time over the rounds
/// counts. On a loaded machine short slices timed at the same instants give fairer ratios than
/// criterion's runs one after the other. Printed as a table, relative to serde_json's derive.
fn interleaved(name: &str, messages: &[Message], all: &mut [Candidate<'_>], rounds: usize) {
    let slices: Vec<&[Message]> = messages.chunks(SLICE).collect();
    let mut best = vec![vec![Duration::MAX; slices.len()]; all.len()];
    for _ in 0..rounds {
        for (slice, part) in slices.iter().enumerate() {
            for ((_, run), best) in all.iter_mut().zip(&mut best) {
                let start = Instant::now();
                black_box(run(black_box(part)));
                best[slice] = best[slice].min(start.elapsed());
            }
        }
    }
    let total: Vec<f64> = best
        .iter()
        .map(|b| b.iter().map(Duration::as_secs_f64).sum())
        .collect();
    let mib = bytes(messages) as f64 / (1024.0 * 1024.0);
    let reference = all.iter().position(|(n, _)| *n == "serde_json_derive");
    let reference = total[reference.unwrap_or(0)];
    eprintln!("{name}: sum of best slice times over {rounds} interleaved rounds");
    for ((candidate, _), seconds) in all.iter().zip(&total) {
        eprintln!(
            "  {candidate:<20} {:>8.2} ms {:>8.1} MiB/s {:>6.2}x serde_json_derive",
            seconds * 1e3,
            mib / seconds,
            reference / seconds,
        );
    }
}

fn bench(c: &mut Criterion) {
    let inputs = [
        ("postgres", Connector::Postgres, false),
        ("postgres_wrapped", Connector::Postgres, true),
        ("mysql", Connector::MySql, false),
        ("mysql_wrapped", Connector::MySql, true),
    ];
    let mut consumer = Consumer::new();
    for (name, connector, wrapped) in inputs {
        let messages = workload(connector, wrapped);
        let mut all = candidates(&mut consumer, &messages);
        eprintln!(
            "{name}: {} bytes/message",
            bytes(&messages) / messages.len() as u64
        );
        interleaved(name, &messages, &mut all, 30);

        let mut group = c.benchmark_group(format!("parsers/{name}"));
        group
            .throughput(Throughput::Bytes(bytes(&messages)))
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3))
            .sample_size(30);
        for (candidate, run) in &mut all {
            group.bench_function(*candidate, |b| b.iter(|| run(black_box(&messages))));
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
