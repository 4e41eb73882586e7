//! Arbitrary bytes as a batch for the product's decode step ([`BatchDecoder`]), as the Java layer
//! frames it: JSON envelopes, row envelopes or upsert-kafka records, plain or partitioned by key
//! group. The first byte picks the kind, the partitioning and the join key. The decoder must
//! accept the batch or refuse its framing, never panic or abort; and what it accepts must be what
//! the join reads without refusing it: the output's counts are its entries', every row is a valid
//! row of the table, every change sits in the key group of its join key (or carries that key),
//! and the same batch decoded again, by this decoder or a fresh one, gives the same bytes.
#![no_main]

use cdcjoin_debezium::batch::{
    output_counts, output_entries, partitioned_output, BatchDecoder, BatchDecoderConfig,
    OutputEntry,
};
use cdcjoin_debezium::DecoderConfig;
use cdcjoin_model::exchange::{BlockHeader, Changes, BLOCK_HEADER_LEN};
use cdcjoin_model::key_group::key_group;
use cdcjoin_model::{DataType, Field, KeyProjection, RowLayout, RowRef, Schema};
use libfuzzer_sys::fuzz_target;

/// Max parallelism of a partitioned batch (few key groups, so blocks hold several changes).
const MAX_PARALLELISM: u32 = 8;

fn schema() -> Schema {
    Schema::new(vec![
        Field::not_null("id", DataType::BigInt),
        Field::new("user_id", DataType::Int),
        Field::new("name", DataType::String),
        Field::new("data", DataType::Bytes),
        Field::new(
            "amount",
            DataType::Decimal {
                precision: 10,
                scale: 2,
            },
        ),
    ])
}

/// The batch's kind, picked by two bits of the first byte.
#[derive(Clone, Copy)]
enum Kind {
    Json,
    Rows,
    Upsert,
}

fn config(kind: Kind, partitioned: bool, join_key: &str) -> BatchDecoderConfig {
    let mut decoder = DecoderConfig::new(schema());
    decoder.primary_key = Some(vec!["id".into()]);
    decoder.upsert = matches!(kind, Kind::Upsert);
    BatchDecoderConfig {
        decoder,
        join_key: vec![join_key.into()],
        source: "fuzz".into(),
        max_parallelism: partitioned.then_some(MAX_PARALLELISM),
    }
}

/// The batch decoded by `d`: its output, or `None` when the framing was refused. The output's
/// header must give the summary's counts.
fn decode(d: &mut BatchDecoder, kind: Kind, batch: &[u8]) -> Option<Vec<u8>> {
    let summary = match kind {
        Kind::Json => d.decode_json(batch, 7),
        Kind::Rows => d.decode_rows(batch, 7),
        Kind::Upsert => d.decode_upsert(batch, 7),
    };
    let summary = summary.ok()?;
    let out = d.output().to_vec();
    let (changes, errors, tombstones) = output_counts(&out);
    assert_eq!(
        (changes as usize, errors as usize, tombstones as usize),
        (summary.changes, summary.errors, summary.tombstones),
        "the output's header counts"
    );
    assert!(summary.changes / 2 + summary.errors + summary.tombstones <= summary.messages);
    Some(out)
}

/// Checks the row of a change and that `in_key` holds for its join key.
fn check_change(layout: &RowLayout, key: &KeyProjection, row: &[u8], in_key: impl Fn(&[u8])) {
    layout.validate(row).expect("the decoder writes valid rows");
    let mut projected = Vec::new();
    key.write(&RowRef::new(layout, row), &mut projected);
    in_key(&projected);
}

/// Checks the entries of a plain output ([`output_entries`]); the counts of changes and errors.
fn plain_entries(out: &[u8], layout: &RowLayout, key: &KeyProjection) -> (u32, u32) {
    let (mut changes, mut errors) = (0, 0);
    for entry in output_entries(out) {
        match entry {
            OutputEntry::Change {
                key: written, row, ..
            } => {
                check_change(layout, key, row, |k| {
                    assert_eq!(written, k, "a change carries its row's join key")
                });
                changes += 1;
            }
            OutputEntry::Error { .. } => errors += 1,
        }
    }
    (changes, errors)
}

/// Checks the error entries and then the key group blocks of a partitioned output
/// ([`partitioned_output`]); the counts of changes and errors.
fn partitioned_entries(out: &[u8], layout: &RowLayout, key: &KeyProjection) -> (u32, u32) {
    let (errors, blocks) =
        partitioned_output(out).expect("the error entries the header counts, before the blocks");
    let (mut at, mut changes, mut last) = (0, 0, None);
    while at < blocks.len() {
        let header = BlockHeader::read(&blocks[at..]).expect("a block header");
        let body = &blocks[at + BLOCK_HEADER_LEN..][..header.len as usize];
        at += BLOCK_HEADER_LEN + body.len();
        assert!(u32::from(header.key_group) < MAX_PARALLELISM);
        assert!(
            last < Some(header.key_group),
            "blocks in key group order, one per group"
        );
        last = Some(header.key_group);
        let mut count = 0;
        for change in Changes::new(body) {
            let row = change.expect("a well-formed change").row;
            check_change(layout, key, row, |k| {
                assert_eq!(key_group(k, MAX_PARALLELISM), header.key_group)
            });
            count += 1;
        }
        assert_eq!(count, header.count, "a block's change count");
        changes += count;
    }
    (changes, errors.len() as u32)
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, batch)) = data.split_first() else {
        return;
    };
    let kind = [Kind::Json, Kind::Rows, Kind::Upsert, Kind::Json][(pick & 3) as usize];
    let partitioned = pick & 4 != 0;
    // Upsert mode needs the join key within the primary key.
    let join_key = if pick & 8 != 0 || matches!(kind, Kind::Upsert) {
        "id"
    } else {
        "user_id"
    };
    let config = config(kind, partitioned, join_key);
    let mut decoder = BatchDecoder::new(config.clone()).expect("a valid configuration");
    let Some(out) = decode(&mut decoder, kind, batch) else {
        return;
    };
    let layout = RowLayout::new(&config.decoder.schema);
    let columns = config.decoder.schema.indices_of(&config.join_key).unwrap();
    let key = KeyProjection::new(&config.decoder.schema, &columns);
    let counted = if partitioned {
        partitioned_entries(&out, &layout, &key)
    } else {
        plain_entries(&out, &layout, &key)
    };
    let (changes, errors, _) = output_counts(&out);
    assert_eq!(counted, (changes, errors), "the header counts the entries");
    let again = decode(&mut decoder, kind, batch).expect("accepted before");
    assert!(
        again == out,
        "the same batch decoded again by the same decoder"
    );
    let mut fresh = BatchDecoder::new(config).expect("a valid configuration");
    let fresh = decode(&mut fresh, kind, batch).expect("accepted before");
    assert!(fresh == out, "the same batch decoded by a fresh decoder");
});
