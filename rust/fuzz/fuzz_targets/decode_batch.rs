//! Arbitrary bytes as a batch for the product's decode step ([`BatchDecoder`]), as the Java layer
//! frames it: JSON envelopes, row envelopes or upsert-kafka records, plain or partitioned by key
//! group. The first byte picks the kind, the partitioning and the join key. The decoder must
//! accept the batch or refuse its framing, never panic or abort; and what it accepts must be what
//! the join reads without refusing it: the output's counts are its entries', every row is a valid
//! row of the table, every change sits in the key group of its join key (or carries that key),
//! and the same batch decoded again, by this decoder or a fresh one, gives the same bytes.
#![no_main]

use cdcjoin_debezium::batch::{
    BatchDecoder, BatchDecoderConfig, HEADER_LEN, TAG_CHANGE, TAG_ERROR,
};
use cdcjoin_debezium::DecoderConfig;
use cdcjoin_model::exchange::{BlockHeader, Changes, BLOCK_HEADER_LEN};
use cdcjoin_model::key_group::key_group;
use cdcjoin_model::{DataType, Field, KeyProjection, RowKind, RowLayout, RowRef, Schema};
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

fn decode(d: &mut BatchDecoder, kind: Kind, batch: &[u8]) -> Option<Vec<u8>> {
    let summary = match kind {
        Kind::Json => d.decode_json(batch, 7),
        Kind::Rows => d.decode_rows(batch, 7),
        Kind::Upsert => d.decode_upsert(batch, 7),
    };
    let summary = summary.ok()?;
    let out = d.output().to_vec();
    assert_eq!(
        (header(&out, 0), header(&out, 1), header(&out, 2)),
        (summary.changes, summary.errors, summary.tombstones),
        "the output's header counts"
    );
    assert!(summary.changes / 2 + summary.errors + summary.tombstones <= summary.messages);
    Some(out)
}

/// The `i`th count of an output's header (changes, errors, tombstones).
fn header(out: &[u8], i: usize) -> usize {
    u32::from_le_bytes(out[i * 4..i * 4 + 4].try_into().unwrap()) as usize
}

/// Reads `n` bytes at `at`, advancing it.
fn take<'a>(out: &'a [u8], at: &mut usize, n: usize) -> &'a [u8] {
    let bytes = &out[*at..*at + n];
    *at += n;
    bytes
}

fn u32_at(out: &[u8], at: &mut usize) -> usize {
    u32::from_le_bytes(take(out, at, 4).try_into().unwrap()) as usize
}

/// Checks the entries of a plain output; the counts of changes and errors.
fn plain_entries(out: &[u8], layout: &RowLayout, key: &KeyProjection) -> (usize, usize) {
    let (mut at, mut changes, mut errors) = (HEADER_LEN, 0, 0);
    while at < out.len() {
        let tag = take(out, &mut at, 1)[0];
        let _index = u32_at(out, &mut at);
        if tag == TAG_ERROR {
            let len = u32_at(out, &mut at);
            std::str::from_utf8(take(out, &mut at, len)).expect("an error message is UTF-8");
            errors += 1;
            continue;
        }
        assert_eq!(tag, TAG_CHANGE);
        RowKind::from_byte(take(out, &mut at, 1)[0]).expect("a row kind");
        let key_len = u32_at(out, &mut at);
        let written = take(out, &mut at, key_len);
        let row_len = u32_at(out, &mut at);
        let row = take(out, &mut at, row_len);
        layout.validate(row).expect("the decoder writes valid rows");
        let mut projected = Vec::new();
        key.write(&RowRef::new(layout, row), &mut projected);
        assert_eq!(
            written,
            projected.as_slice(),
            "a change carries its row's join key"
        );
        changes += 1;
    }
    (changes, errors)
}

/// Checks the errors and blocks of a partitioned output; the counts of changes and errors.
fn partitioned_entries(
    out: &[u8],
    layout: &RowLayout,
    key: &KeyProjection,
    errors: usize,
) -> (usize, usize) {
    let mut at = HEADER_LEN;
    for _ in 0..errors {
        assert_eq!(take(out, &mut at, 1)[0], TAG_ERROR);
        let _index = u32_at(out, &mut at);
        let len = u32_at(out, &mut at);
        std::str::from_utf8(take(out, &mut at, len)).expect("an error message is UTF-8");
    }
    let (mut changes, mut last) = (0, None);
    while at < out.len() {
        let header = BlockHeader::read(&out[at..]).expect("a block header");
        at += BLOCK_HEADER_LEN;
        assert!(u32::from(header.key_group) < MAX_PARALLELISM);
        assert!(
            last < Some(header.key_group),
            "blocks in key group order, one per group"
        );
        last = Some(header.key_group);
        let mut count = 0;
        for change in Changes::new(take(out, &mut at, header.len as usize)) {
            let change = change.expect("a well-formed change");
            layout
                .validate(change.row)
                .expect("the decoder writes valid rows");
            let mut projected = Vec::new();
            key.write(&RowRef::new(layout, change.row), &mut projected);
            assert_eq!(key_group(&projected, MAX_PARALLELISM), header.key_group);
            count += 1;
        }
        assert_eq!(count, header.count as usize, "a block's change count");
        changes += count;
    }
    (changes, errors)
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
        partitioned_entries(&out, &layout, &key, header(&out, 1))
    } else {
        plain_entries(&out, &layout, &key)
    };
    assert_eq!(
        counted,
        (header(&out, 0), header(&out, 1)),
        "the header counts the entries"
    );
    let again = decode(&mut decoder, kind, batch).expect("accepted before");
    assert!(
        again == out,
        "the same batch decoded again by the same decoder"
    );
    let mut fresh = BatchDecoder::new(config).expect("a valid configuration");
    let fresh = decode(&mut fresh, kind, batch).expect("accepted before");
    assert!(fresh == out, "the same batch decoded by a fresh decoder");
});
