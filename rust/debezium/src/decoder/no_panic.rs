//! The decoder must not panic on any input: pseudo-random bytes, mutated valid envelopes and
//! pathological shapes (deep nesting, huge numbers, bad base64, bad UTF-8). A poor man's fuzzer:
//! deterministic, dependency-free and fast enough for every `cargo test`.

use super::tests::{debezium_config, users_schema};
use super::*;
use cdcjoin_model::RowKind;
use cdcjoin_workload::XorShift;

/// One of `items`, picked by `rng`.
fn pick<'a>(rng: &mut XorShift, items: &[&'a [u8]]) -> &'a [u8] {
    items[rng.index(items.len())]
}

/// Fragments that make random bytes look like (broken) JSON envelopes.
const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b",",
    b"\"",
    b"\\",
    b"\\u",
    b"\\ud83d",
    b"null",
    b"true",
    b"false",
    b"-",
    b"0",
    b"1e999",
    b"99999999999999999999999999999999999999999",
    b"-9223372036854775808",
    b"-9223372036854775807",
    b"9223372036854775807",
    b".5",
    b"\"op\"",
    b"\"c\"",
    b"\"u\"",
    b"\"d\"",
    b"\"r\"",
    b"\"t\"",
    b"\"before\"",
    b"\"after\"",
    b"\"schema\"",
    b"\"payload\"",
    b"\"source\"",
    b"\"id\"",
    b"\"name\"",
    b"\"balance\"",
    b"\"avatar\"",
    b"\"created\"",
    b"\"birthday\"",
    b"\"n\"",
    b"\"score\"",
    b"\"active\"",
    b"\"BNI=\"",
    b"\"AQL/\"",
    b"\"====\"",
    b"\"NaN\"",
    b"\"2024-02-30\"",
    b"\xff",
    b"\xc3",
    b" ",
    b"\n",
    b"{\"scale\":",
    b"\"value\":",
    b"\"__debezium_unavailable_value\"",
    b"\"X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==\"",
    b"\"io.debezium.time.MicroTimestamp\"",
    b"\"org.apache.kafka.connect.data.Decimal\"",
    b"\"2024-01-31 10:15:30.123\"",
];

const SEEDS: &[&str] = &[
    r#"{"before":null,"after":{"id":1,"name":"alice","balance":"BNI=","active":true,"score":2.5,"birthday":19753,"created":1706696130123,"avatar":"AQL/","n":7},"source":{"version":"2.5.0.Final","connector":"postgresql","ts_ms":1,"db":"shop","lsn":3},"op":"c","ts_ms":2}"#,
    r#"{"before":{"id":1,"name":"bob"},"after":{"id":1,"balance":{"scale":3,"value":"MDk="},"created":"2024-01-31T10:15:30.5","birthday":"2024-01-31"},"op":"u"}"#,
    r#"{"schema":{"type":"struct"},"payload":{"before":{"id":2,"score":"-Infinity"},"after":null,"op":"d"}}"#,
    r#"{"schema":{},"payload":null}"#,
    r#"{"schema":{"type":"struct","fields":[{"type":"struct","field":"after","fields":[{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"},"field":"balance"},{"type":"int64","name":"io.debezium.time.MicroTimestamp","field":"created"}]}]},"payload":{"op":"u","before":{"id":1,"name":"__debezium_unavailable_value"},"after":{"id":1,"balance":"BNI=","created":1706696130123456,"avatar":"X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ=="}}}"#,
    r#"{"op":"d","before":{"id":3,"name":null}}"#,
];

/// Decoders of the users table under different settings: defaults, Debezium's, upsert, hex.
fn decoders() -> Vec<Decoder> {
    let upsert = {
        let mut c = debezium_config(users_schema());
        c.primary_key = Some(vec!["id".into()]);
        c.upsert = true;
        c.binary_handling = Some(BinaryHandling::Hex);
        c
    };
    [
        DecoderConfig::new(users_schema()),
        debezium_config(users_schema()),
        upsert,
    ]
    .into_iter()
    .map(|c| Decoder::new(c).unwrap())
    .collect()
}

/// Decodes `input`, checking the contract on the way: no panic; on success only valid rows, as
/// many as reported; on error nothing appended.
fn check(d: &mut Decoder, sink: &mut ChangeSink, input: &[u8]) {
    sink.clear();
    sink.push(RowKind::Insert, b"sentinel");
    match d.decode(input, &"fuzz", sink) {
        Ok(Decoded::Changes(n)) => {
            assert!(n == 1 || n == 2);
            assert_eq!(sink.len(), 1 + n);
            for (_, row) in sink.iter().skip(1) {
                d.layout().validate(row).unwrap();
            }
        }
        Ok(Decoded::Tombstone) => assert_eq!(sink.len(), 1),
        Err(e) => {
            assert_eq!((sink.len(), sink.data()), (1, &b"sentinel"[..]));
            assert!(e.to_string().starts_with("fuzz: "));
        }
    }
}

fn mutate(rng: &mut XorShift, seed: &[u8]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..1 + rng.index(4) {
        let at = rng.index(v.len() + 1);
        match rng.index(5) {
            0 if at < v.len() => v[at] = rng.next_u64() as u8,
            1 if at < v.len() => {
                v.remove(at);
            }
            2 => {
                let token = pick(rng, TOKENS);
                v.splice(at..at, token.iter().copied());
            }
            3 => v.truncate(at),
            _ => {
                let end = (at + rng.index(16)).min(v.len());
                let copy = v[at..end].to_vec();
                v.splice(at..at, copy);
            }
        }
    }
    v
}

fn random_bytes(rng: &mut XorShift) -> Vec<u8> {
    let mut v = Vec::new();
    for _ in 0..rng.index(40) {
        if rng.index(3) == 0 {
            v.push(rng.next_u64() as u8);
        } else {
            v.extend_from_slice(pick(rng, TOKENS));
        }
    }
    v
}

#[test]
fn random_and_mutated_inputs_never_panic() {
    for mut d in decoders() {
        random_and_mutated(&mut d);
    }
}

fn random_and_mutated(d: &mut Decoder) {
    let mut sink = ChangeSink::new();
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for seed in SEEDS {
        check(d, &mut sink, seed.as_bytes());
    }
    for i in 0..4000 {
        let input = if i % 2 == 0 {
            random_bytes(&mut rng)
        } else {
            let seed = SEEDS[rng.index(SEEDS.len())];
            mutate(&mut rng, seed.as_bytes())
        };
        check(d, &mut sink, &input);
    }
}

#[test]
fn pathological_inputs_are_errors_not_panics() {
    for mut d in decoders() {
        pathological(&mut d);
    }
}

fn pathological(d: &mut Decoder) {
    let mut sink = ChangeSink::new();
    let deep = |open: &str, close: &str, n| format!("{}{}", open.repeat(n), close.repeat(n));
    let nested = deep("[", "]", 100_000);
    let objects = deep("{\"a\":", "}", 100_000).replace("}}", "1}}");
    let inputs = [
        nested.clone(),
        objects.clone(),
        format!(r#"{{"op":"c","source":{nested},"after":{{"id":1}}}}"#),
        format!(r#"{{"op":"c","after":{{"id":1,"name":{nested}}}}}"#),
        format!(
            r#"{{"op":"c","after":{{"id":1,"balance":{{"scale":1,"value":"AQ==","x":{nested}}}}}}}"#
        ),
        format!(r#"{{"op":"c","after":{{"id":1,"balance":{{"scale":{nested},"value":"AQ=="}}}}}}"#),
        format!(
            r#"{{"op":"c","after":{{"id":1,"balance":1{}}}}}"#,
            "0".repeat(100_000)
        ),
        format!(
            r#"{{"op":"c","after":{{"id":1,"balance":"1e{}"}}}}"#,
            "9".repeat(1000)
        ),
        format!(
            r#"{{"op":"c","after":{{"id":1,"balance":"{}"}}}}"#,
            "A".repeat(100_000)
        ),
        format!(
            r#"{{"op":"c","after":{{"id":1,"avatar":"{}="}}}}"#,
            "A".repeat(99_999)
        ),
        format!(
            r#"{{"op":"c","after":{{"id":1,"score":1e{}}}}}"#,
            "9".repeat(1000)
        ),
        r#"{"op":"c","after":{"id":1,"balance":{"scale":-9223372036854775808,"value":"AQ=="}}}"#
            .into(),
        r#"{"op":"c","after":{"id":1,"balance":{"scale":9223372036854775807,"value":"AQ=="}}}"#
            .into(),
        r#"{"op":"c","after":{"id":1,"created":"+999999999-01-01T00:00"}}"#.into(),
        r#"{"op":"c","after":{"id":1,"birthday":-9223372036854775808}}"#.into(),
        "\u{feff}{}".into(),
    ];
    for input in &inputs {
        check(d, &mut sink, input.as_bytes());
    }
    check(
        d,
        &mut sink,
        b"{\"op\":\"c\",\"after\":{\"id\":1,\"name\":\"\xed\xa0\x80\"}}",
    );
}
