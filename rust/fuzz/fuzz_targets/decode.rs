//! Arbitrary bytes into the Debezium decoder, for a schema of every type: it must return a
//! change, a tombstone or an error, never panic or abort.
#![no_main]

use cdcjoin_debezium::{ChangeSink, Decoder, DecoderConfig};
use cdcjoin_model::{DataType, Field, Schema};
use libfuzzer_sys::fuzz_target;

fn schema() -> Schema {
    Schema::new(vec![
        Field::not_null("id", DataType::BigInt),
        Field::new("b", DataType::Boolean),
        Field::new("i", DataType::Int),
        Field::new("f", DataType::Float),
        Field::new("d", DataType::Double),
        Field::new("small", DataType::Decimal { precision: 10, scale: 2 }),
        Field::new("big", DataType::Decimal { precision: 38, scale: 10 }),
        Field::new("s", DataType::String),
        Field::new("bytes", DataType::Bytes),
        Field::new("day", DataType::Date),
        Field::new("ts", DataType::Timestamp { precision: 3 }),
        Field::new("tsn", DataType::Timestamp { precision: 9 }),
    ])
}

fuzz_target!(|data: &[u8]| {
    let mut decoder = Decoder::new(DecoderConfig::new(schema())).expect("valid config");
    let mut sink = ChangeSink::new();
    let _ = decoder.decode(data, &"fuzz", &mut sink);
    let (op, rest) = data.split_first().unwrap_or((&b'u', &[]));
    let (before, after) = rest.split_at(rest.len() / 2);
    let _ = decoder.split_rows(*op, Some(before), Some(after), &"fuzz", &mut sink);
});
