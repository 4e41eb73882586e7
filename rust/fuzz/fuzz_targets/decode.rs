//! Arbitrary bytes into the Debezium decoder, for a schema of every type under every encoding
//! setting (picked by the first byte): it must return a change, a tombstone or an error, never
//! panic or abort.
#![no_main]

use cdcjoin_debezium::{
    BinaryHandling, ChangeSink, DecimalHandling, Decoder, DecoderConfig, TimePrecision,
};
use cdcjoin_model::{DataType, Field, Schema};
use libfuzzer_sys::fuzz_target;

fn schema() -> Schema {
    Schema::new(vec![
        Field::not_null("id", DataType::BigInt),
        Field::new("b", DataType::Boolean),
        Field::new("t", DataType::TinyInt),
        Field::new("sm", DataType::SmallInt),
        Field::new("i", DataType::Int),
        Field::new("f", DataType::Float),
        Field::new("d", DataType::Double),
        Field::new("small", DataType::Decimal { precision: 10, scale: 2 }),
        Field::new("big", DataType::Decimal { precision: 38, scale: 10 }),
        Field::not_null("s", DataType::String),
        Field::new("bytes", DataType::Bytes),
        Field::new("day", DataType::Date),
        Field::new("at", DataType::Time { precision: 3 }),
        Field::new("ts", DataType::Timestamp { precision: 3 }),
        Field::new("tsn", DataType::Timestamp { precision: 9 }),
        Field::new("ltz", DataType::TimestampLtz { precision: 6 }),
    ])
}

/// A configuration picked by `pick`: every decimal, time and binary mode, with and without
/// upsert and source precisions.
fn config(pick: u8) -> DecoderConfig {
    let mut c = DecoderConfig::new(schema());
    let decimal = [
        DecimalHandling::Flink,
        DecimalHandling::Precise,
        DecimalHandling::String,
        DecimalHandling::Double,
    ];
    let time = [
        TimePrecision::Flink,
        TimePrecision::Adaptive,
        TimePrecision::AdaptiveTimeMicroseconds,
        TimePrecision::Connect,
        TimePrecision::Isostring,
        TimePrecision::Microseconds,
        TimePrecision::Nanoseconds,
    ];
    let binary = [BinaryHandling::Bytes, BinaryHandling::Base64, BinaryHandling::Hex];
    c.decimal_handling = Some(decimal[pick as usize % 4]);
    c.time_precision = Some(time[pick as usize / 4 % 7]);
    c.binary_handling = Some(binary[pick as usize / 28 % 3]);
    if pick & 0x40 != 0 {
        c.source_precision.insert("ts".into(), 6);
        c.source_precision.insert("at".into(), 3);
    }
    if pick & 0x80 != 0 {
        c.primary_key = Some(vec!["id".into()]);
        c.upsert = true;
    }
    c
}

fuzz_target!(|data: &[u8]| {
    let (&pick, data) = data.split_first().unwrap_or((&0, &[]));
    let mut decoder = Decoder::new(config(pick)).expect("valid config");
    let mut sink = ChangeSink::new();
    let _ = decoder.decode(data, &"fuzz", &mut sink);
    let (op, rest) = data.split_first().unwrap_or((&b'u', &[]));
    let (before, after) = rest.split_at(rest.len() / 2);
    let _ = decoder.split_rows(*op, Some(before), Some(after), &"fuzz", &mut sink);
});
