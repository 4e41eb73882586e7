//! End-to-end tests of [`Decoder`]: messages in, Flink-formatted changes (or errors) out.

use super::*;
use cdcjoin_model::value::format_row;
use cdcjoin_model::{RowKind, RowRef, Value};

pub(super) fn users_schema() -> Schema {
    let t = |s: &str| s.parse::<DataType>().unwrap();
    Schema::new(vec![
        Field::not_null("id", t("BIGINT")),
        Field::new("name", t("STRING")),
        Field::new("balance", t("DECIMAL(10, 2)")),
        Field::new("active", t("BOOLEAN")),
        Field::new("score", t("DOUBLE")),
        Field::new("birthday", t("DATE")),
        Field::new("created", t("TIMESTAMP(3)")),
        Field::new("avatar", t("BYTES")),
        Field::new("n", t("INT")),
    ])
}

/// The users table as Debezium's Postgres connector sends it with its defaults
/// (`decimal.handling.mode=precise`, `time.precision.mode=adaptive`, `created` a `timestamp(3)`).
pub(super) fn debezium_config(schema: Schema) -> DecoderConfig {
    let mut config = DecoderConfig::new(schema);
    config.decimal_handling = Some(DecimalHandling::Precise);
    config.time_precision = Some(TimePrecision::Adaptive);
    config.source_precision.insert("created".into(), 3);
    config
}

fn decoder_with(mode: UpdateMode) -> Decoder {
    let mut config = debezium_config(users_schema());
    config.update_mode = mode;
    Decoder::new(config).unwrap()
}

fn decoder() -> Decoder {
    decoder_with(UpdateMode::Retract)
}

/// The sink's changes as Flink prints them.
fn rows(d: &Decoder, sink: &ChangeSink) -> Vec<String> {
    sink.iter()
        .map(|(kind, bytes)| {
            d.layout().validate(bytes).unwrap();
            format_row(kind, &Value::read_row(&RowRef::new(d.layout(), bytes)))
        })
        .collect()
}

/// Decodes one message; the changes, or the error's message. Checks the count and that a failed
/// message leaves the sink as it was.
fn run(d: &mut Decoder, json: &str) -> Result<Vec<String>, String> {
    let mut sink = ChangeSink::new();
    sink.push(RowKind::Insert, b"earlier");
    match d.decode(
        json.as_bytes(),
        &format_args!("users@offset {}", 42),
        &mut sink,
    ) {
        Ok(Decoded::Changes(n)) => {
            assert_eq!(n, sink.len() - 1);
            let mut out = ChangeSink::new();
            for (kind, bytes) in sink.iter().skip(1) {
                out.push(kind, bytes);
            }
            Ok(rows(d, &out))
        }
        Ok(Decoded::Tombstone) => {
            assert_eq!(sink.len(), 1);
            Ok(vec!["tombstone".into()])
        }
        Err(e) => {
            assert_eq!((sink.len(), sink.data()), (1, &b"earlier"[..]));
            let msg = e.to_string();
            assert!(msg.starts_with("users@offset 42: "), "{msg}");
            Err(msg["users@offset 42: ".len()..].to_string())
        }
    }
}

fn decode(json: &str) -> Result<Vec<String>, String> {
    run(&mut decoder(), json)
}

const ALICE: &str = r#"{"id":1,"name":"alice","balance":"BNI=","active":true,"score":2.5,
    "birthday":19753,"created":1706696130123,"avatar":"AQL/","n":7}"#;
const ALICE_ROW: &str =
    "[1, alice, 12.34, true, 2.5, 2024-01-31, 2024-01-31T10:15:30.123, [1, 2, -1], 7]";
const BOB: &str = r#"{"id":1,"name":"bob"}"#;
const BOB_ROW: &str = "[1, bob, null, null, null, null, null, null, null]";

const SOURCE: &str = r#"{"version":"2.5.0.Final","connector":"postgresql","name":"pg",
    "ts_ms":1706696130000,"snapshot":"false","db":"shop","sequence":"[\"1\",\"2\"]",
    "schema":"public","table":"users","txId":771,"lsn":33842216,"xmin":null}"#;

fn envelope(op: &str, before: &str, after: &str) -> String {
    format!(
        r#"{{"before":{before},"after":{after},"source":{SOURCE},"op":"{op}","ts_ms":1706696130456,"transaction":null}}"#
    )
}

/// `inner` wrapped as JsonConverter sends it, with the users table's Connect schema as Debezium's
/// Postgres connector writes it under its defaults.
fn wrapped(inner: &str) -> String {
    let columns = r#"{"type":"int64","optional":false,"field":"id"},
        {"type":"string","optional":true,"field":"name"},
        {"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,
         "parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"balance"},
        {"type":"boolean","optional":true,"field":"active"},
        {"type":"double","optional":true,"field":"score"},
        {"type":"int32","optional":true,"name":"io.debezium.time.Date","version":1,"field":"birthday"},
        {"type":"int64","optional":true,"name":"io.debezium.time.Timestamp","version":1,"field":"created"},
        {"type":"bytes","optional":true,"field":"avatar"},
        {"type":"int32","optional":true,"field":"n"}"#;
    format!(
        r#"{{"schema":{{"type":"struct","fields":[{{"type":"struct","fields":[{columns}],"optional":true,"name":"pg.public.users.Value","field":"before"}},{{"type":"struct","fields":[{columns}],"optional":true,"name":"pg.public.users.Value","field":"after"}}],"optional":false,"name":"pg.public.users.Envelope"}},"payload":{inner}}}"#
    )
}

#[test]
fn create_and_read_insert_the_after_image() {
    let expect = Ok(vec![format!("+I{ALICE_ROW}")]);
    assert_eq!(decode(&envelope("c", "null", ALICE)), expect);
    assert_eq!(decode(&envelope("r", "null", ALICE)), expect);
}

#[test]
fn update_retracts_then_accumulates() {
    let expect = vec![format!("-U{BOB_ROW}"), format!("+U{ALICE_ROW}")];
    assert_eq!(decode(&envelope("u", BOB, ALICE)), Ok(expect));
}

#[test]
fn update_in_delete_insert_mode() {
    let mut d = decoder_with(UpdateMode::DeleteInsert);
    let expect = vec![format!("-D{BOB_ROW}"), format!("+I{ALICE_ROW}")];
    assert_eq!(run(&mut d, &envelope("u", BOB, ALICE)), Ok(expect));
    // Other ops are the same in both modes.
    assert_eq!(
        run(&mut d, &envelope("d", BOB, "null")),
        Ok(vec![format!("-D{BOB_ROW}")])
    );
}

#[test]
fn delete_retracts_the_before_image() {
    assert_eq!(
        decode(&envelope("d", BOB, "null")),
        Ok(vec![format!("-D{BOB_ROW}")])
    );
}

#[test]
fn wrapped_and_bare_messages_decode_alike() {
    for (op, before, after) in [("c", "null", ALICE), ("u", BOB, ALICE), ("d", BOB, "null")] {
        let bare = envelope(op, before, after);
        assert_eq!(decode(&wrapped(&bare)), decode(&bare), "{op}");
    }
}

#[test]
fn tombstones_are_not_errors() {
    for json in [
        String::new(),
        " \r\n\t".into(),
        "null".into(),
        " null\n".into(),
        wrapped("null"),
    ] {
        assert_eq!(decode(&json), Ok(vec!["tombstone".into()]), "{json:?}");
    }
}

#[test]
fn field_order_does_not_matter() {
    let reversed = r#"{"n":7,"avatar":"AQL/","created":1706696130123,"birthday":19753,
        "score":2.5,"active":true,"balance":"BNI=","name":"alice","id":1}"#;
    let op_first =
        format!(r#"{{"op":"u","ts_ms":1,"after":{reversed},"source":{SOURCE},"before":{BOB}}}"#);
    assert_eq!(decode(&op_first), decode(&envelope("u", BOB, ALICE)));
}

#[test]
fn extra_fields_and_columns_are_ignored() {
    let after = r#"{"zz":{"deep":[1,[2,{"x":null}]]},"id":1,"name":"bob","unknown":"\u00e9\"x"}"#;
    let json = format!(
        r#"{{"op":"c","after":{after},"transaction":{{"id":"t1","total_order":3,"data_collection_order":[1,2]}},"source":{SOURCE},"ts_us":1,"ts_ns":2,"extra":[true,false,{{}}]}}"#
    );
    assert_eq!(decode(&json), Ok(vec![format!("+I{BOB_ROW}")]));
}

#[test]
fn escaped_keys_and_values() {
    let json =
        r#"{"o\u0070":"\u0063","after":{"i\u0064":2,"name":"tab\there \"q\" \u00e9\ud83d\ude00"}}"#;
    assert_eq!(
        decode(json),
        Ok(vec![
            "+I[2, tab\there \"q\" é😀, null, null, null, null, null, null, null]".into()
        ])
    );
}

#[test]
fn absent_nullable_columns_are_null_but_not_null_columns_are_required() {
    assert_eq!(
        decode(r#"{"op":"c","after":{"id":3}}"#),
        Ok(vec![
            "+I[3, null, null, null, null, null, null, null, null]".into()
        ])
    );
    let missing = "column \"id\" of the \"after\" row is declared NOT NULL but is missing or null";
    assert_eq!(
        decode(r#"{"op":"c","after":{"name":"x"}}"#),
        Err(missing.into())
    );
    assert_eq!(
        decode(r#"{"op":"c","after":{"id":null}}"#),
        Err(missing.into())
    );
    assert_eq!(
        decode(r#"{"op":"d","before":{"name":"x"}}"#),
        Err(missing.replace("after", "before"))
    );
}

#[test]
fn only_the_images_the_op_needs_are_decoded() {
    // A broken `before` does not matter to a create, nor a broken `after` to a delete.
    let broken = r#"{"id":"not a number"}"#;
    assert_eq!(
        decode(&envelope("c", broken, BOB)),
        Ok(vec![format!("+I{BOB_ROW}")])
    );
    assert_eq!(
        decode(&envelope("d", BOB, broken)),
        Ok(vec![format!("-D{BOB_ROW}")])
    );
}

#[test]
fn missing_images_are_errors_in_flinks_words() {
    let replica = "if you are using Debezium Postgres Connector, please check the Postgres \
                   table has been set REPLICA IDENTITY to FULL level.";
    let before_null = |op: &str| format!("The \"before\" field of {op} message is null, {replica}");
    assert_eq!(
        decode(&envelope("u", "null", ALICE)),
        Err(before_null("UPDATE"))
    );
    assert_eq!(
        decode(r#"{"op":"u","after":{"id":1}}"#),
        Err(before_null("UPDATE"))
    );
    assert_eq!(
        decode(&envelope("d", "null", "null")),
        Err(before_null("DELETE"))
    );
    let after_null = |op: &str| format!("The \"after\" field of {op} message is null.");
    assert_eq!(
        decode(&envelope("c", "null", "null")),
        Err(after_null("INSERT"))
    );
    assert_eq!(decode(r#"{"op":"r"}"#), Err(after_null("READ")));
    assert_eq!(
        decode(&envelope("u", BOB, "null")),
        Err(after_null("UPDATE"))
    );
}

#[test]
fn unknown_and_missing_ops_are_errors() {
    let unknown = |v: &str| {
        Err(format!(
            "unknown \"op\" value {v} (expected \"c\", \"r\", \"u\" or \"d\")"
        ))
    };
    assert_eq!(decode(&envelope("t", "null", "null")), unknown("\"t\""));
    assert_eq!(decode(&envelope("m", "null", "null")), unknown("\"m\""));
    assert_eq!(
        decode(&envelope("create", "null", ALICE)),
        unknown("\"create\"")
    );
    assert_eq!(decode(&envelope("", "null", ALICE)), unknown("\"\""));
    assert_eq!(decode(r#"{"op":5,"after":{"id":1}}"#), unknown("5"));
    assert_eq!(decode(r#"{"op":["c"]}"#), unknown("[\"c\"]"));
    let missing = Err("missing \"op\" field".to_string());
    assert_eq!(decode(r#"{"after":{"id":1}}"#), missing);
    assert_eq!(decode(r#"{"op":null,"after":{"id":1}}"#), missing);
    assert_eq!(decode("{}"), missing);
}

#[test]
fn malformed_json_is_an_error_with_line_and_column() {
    let e = decode("{\"op\":\"c\",\n\"after\":{\"id\":1,}}").unwrap_err();
    assert!(
        e.starts_with("malformed JSON: ") && e.ends_with("at line 2 column 17"),
        "{e}"
    );
    let e = decode(r#"{"op":"c","after":{"id":1}"#).unwrap_err();
    assert!(e.starts_with("malformed JSON: EOF while parsing"), "{e}");
    let e = decode(r#"{"op":"c","after":{"id":1}} {}"#).unwrap_err();
    assert!(e.contains("trailing characters at line 1 column 29"), "{e}");
    let e = decode("[]").unwrap_err();
    assert!(e.contains("expected a Debezium change envelope"), "{e}");
    let e = decode(r#"{"op":"c","after":"x"}"#).unwrap_err();
    assert!(e.contains("expected a row image"), "{e}");
    let e = decode(r#"{"op":"c","after":{"id":1,"name":"a\qb"}}"#).unwrap_err();
    assert!(e.starts_with("malformed JSON: invalid escape"), "{e}");
    let mut bad_utf8 = br#"{"op":"c","after":{"id":1,"name":"#.to_vec();
    bad_utf8.extend_from_slice(b"\"\xff\xfe\"}}");
    let e = decoder()
        .decode(&bad_utf8, &"record #17", &mut ChangeSink::new())
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("record #17: malformed JSON: invalid unicode code point"),
        "{e}"
    );
}

#[test]
fn mistyped_columns_name_column_type_and_json() {
    assert_eq!(
        decode(r#"{"op":"c","after":{"id":1,"name":5}}"#),
        Err(
            "column \"name\" (STRING) of the \"after\" row: expected a JSON string, found 5".into()
        )
    );
    assert_eq!(
        decode(r#"{"op":"d","before":{"id":"1"}}"#),
        Err(
            "column \"id\" (BIGINT) of the \"before\" row: expected a JSON integer, found \"1\""
                .into()
        )
    );
    let e = decode(r#"{"op":"c","after":{"id":1,"balance":"12,5"}}"#).unwrap_err();
    assert!(
        e.starts_with(
            "column \"balance\" (DECIMAL(10, 2)) of the \"after\" row: expected base64 of the \
             unscaled value"
        ) && e.ends_with("found \"12,5\""),
        "{e}"
    );
    let e = decode(r#"{"op":"c","after":{"id":1,"avatar":"%%%"}}"#).unwrap_err();
    assert_eq!(
        e,
        "column \"avatar\" (BYTES) of the \"after\" row: expected a base64 string \
         (binary.handling.mode=bytes or base64), found \"%%%\""
    );
    let long = format!(
        r#"{{"op":"c","after":{{"id":1,"active":"{}"}}}}"#,
        "y".repeat(200)
    );
    let e = decode(&long).unwrap_err();
    assert!(e.contains("(BOOLEAN)") && e.ends_with("yyy…"), "{e}");
}

#[test]
fn out_of_range_values_name_column_type_and_value() {
    assert_eq!(
        decode(r#"{"op":"c","after":{"id":1,"n":2147483648}}"#),
        Err("column \"n\" (INT) of the \"after\" row: value 2147483648 is out of range".into())
    );
    assert_eq!(
        decode(r#"{"op":"c","after":{"id":99999999999999999999}}"#),
        Err("column \"id\" (BIGINT) of the \"after\" row: value 99999999999999999999 is out of range".into())
    );
    assert_eq!(
        decode(r#"{"op":"c","after":{"id":1,"balance":"OtxxEu4="}}"#),
        Err("column \"balance\" (DECIMAL(10, 2)) of the \"after\" row: value \"OtxxEu4=\" is out of range".into())
    );
    assert_eq!(
        decode(r#"{"op":"c","after":{"id":1,"created":9223372036854775807}}"#),
        Err("column \"created\" (TIMESTAMP(3)) of the \"after\" row: value 9223372036854775807 is out of range".into())
    );
}

#[test]
fn every_type_through_the_decoder() {
    let row = r#"{"id":-9223372036854775808,"name":"","balance":"/w==","active":false,
        "score":"NaN","birthday":-1,"created":-1,"avatar":"","n":-2147483648}"#;
    assert_eq!(
        decode(&format!(r#"{{"op":"r","after":{row}}}"#)),
        Ok(vec![
            "+I[-9223372036854775808, , -0.01, false, NaN, 1969-12-31, 1969-12-31T23:59:59.999, [], -2147483648]"
                .into()
        ])
    );
    let row = r#"{"id":0,"balance":{"scale":4,"value":"AeJA"},"score":-1e-3,"created":0}"#;
    assert_eq!(
        decode(&format!(r#"{{"op":"c","after":{row}}}"#)),
        Ok(vec![
            "+I[0, null, 12.35, null, -0.001, null, 1970-01-01T00:00, null, null]".into()
        ])
    );
}

fn t(s: &str) -> DataType {
    s.parse().unwrap()
}

/// Decodes the `after` row `row` of a create with `config`.
fn create(config: DecoderConfig, row: &str) -> Result<Vec<String>, String> {
    let mut d = Decoder::new(config).map_err(|e| format!("config: {e}"))?;
    run(&mut d, &format!(r#"{{"op":"c","after":{row}}}"#))
}

#[test]
fn defaults_read_what_flinks_debezium_json_reads() {
    let schema = Schema::new(vec![
        Field::new("d", t("DECIMAL(10, 2)")),
        Field::new("day", t("DATE")),
        Field::new("at", t("TIME(3)")),
        Field::new("ts", t("TIMESTAMP(3)")),
        Field::new("ltz", t("TIMESTAMP_LTZ(3)")),
        Field::new("tiny", t("TINYINT")),
        Field::new("small", t("SMALLINT")),
    ]);
    let config = || DecoderConfig::new(schema.clone());
    let row = r#"{"d":"1000","day":"2024-01-31","at":"10:15:30.123","ts":"2024-01-31 10:15:30.123456",
        "ltz":"2024-01-31T10:15:30.5Z","tiny":-8,"small":300}"#;
    assert_eq!(
        create(config(), row),
        Ok(vec![
            "+I[1000.00, 2024-01-31, 10:15:30, 2024-01-31T10:15:30.123, 2024-01-31T10:15:30.500Z, -8, 300]"
                .into()
        ])
    );
    // Debezium's integer encodings are not what Flink reads: named errors, not other values.
    let e = create(config(), r#"{"ts":1706696130123}"#).unwrap_err();
    assert!(
        e.contains("\"ts\" (TIMESTAMP(3))") && e.contains("time_precision=flink"),
        "{e}"
    );
    let e = create(config(), r#"{"d":"BNI="}"#).unwrap_err();
    assert!(e.contains("decimal_handling=flink"), "{e}");
}

#[test]
fn decimal_string_mode_reads_1000_as_1000() {
    let mut config = DecoderConfig::new(Schema::new(vec![Field::new("d", t("DECIMAL(10, 2)"))]));
    config.decimal_handling = Some(DecimalHandling::String);
    assert_eq!(
        create(config.clone(), r#"{"d":"1000"}"#),
        Ok(vec!["+I[1000.00]".into()])
    );
    let e = create(config, r#"{"d":1000}"#).unwrap_err();
    assert_eq!(
        e,
        "column \"d\" (DECIMAL(10, 2)) of the \"after\" row: expected decimal text in a JSON \
         string (decimal.handling.mode=string), found 1000"
    );
}

#[test]
fn adaptive_timestamps_need_the_source_precision() {
    let schema = Schema::new(vec![Field::new("ts", t("TIMESTAMP(3)"))]);
    let mut config = DecoderConfig::new(schema);
    config.time_precision = Some(TimePrecision::Adaptive);
    // A Postgres timestamp(6) (MicroTimestamp) declared TIMESTAMP(3): no guess from the 3.
    let micros = r#"{"ts":1706696130123456}"#;
    let e = create(config.clone(), micros).unwrap_err();
    assert!(
        e.starts_with("column \"ts\" (TIMESTAMP(3)) of the \"after\" row: the integer 1706696130123456 under time.precision.mode=adaptive"),
        "{e}"
    );
    assert!(e.contains("\"source_precision\": {\"ts\": 6}"), "{e}");
    assert_eq!(
        create(config.clone(), r#"{"ts":null}"#),
        Ok(vec!["+I[null]".into()])
    );
    config.source_precision.insert("ts".into(), 6);
    assert_eq!(
        create(config.clone(), micros),
        Ok(vec!["+I[2024-01-31T10:15:30.123]".into()])
    );
    config.time_precision = Some(TimePrecision::Connect);
    config.source_precision.clear();
    assert_eq!(
        create(config, r#"{"ts":1706696130123}"#),
        Ok(vec!["+I[2024-01-31T10:15:30.123]".into()])
    );
}

#[test]
fn every_time_precision_mode() {
    let schema = Schema::new(vec![
        Field::new("day", t("DATE")),
        Field::new("at", t("TIME(6)")),
        Field::new("ts", t("TIMESTAMP(6)")),
        Field::new("tz", t("TIMESTAMP_LTZ(6)")),
    ]);
    let with = |mode| {
        let mut c = DecoderConfig::new(schema.clone());
        c.time_precision = Some(mode);
        c.source_precision.insert("at".into(), 6);
        c.source_precision.insert("ts".into(), 6);
        c
    };
    let zoned = r#""2024-01-31T10:15:30.123456Z""#;
    let row = format!(r#"{{"day":19753,"at":36930123456,"ts":1706696130123456,"tz":{zoned}}}"#);
    let expect =
        "+I[2024-01-31, 10:15:30.123, 2024-01-31T10:15:30.123456, 2024-01-31T10:15:30.123456Z]";
    assert_eq!(
        create(with(TimePrecision::Adaptive), &row),
        Ok(vec![expect.into()])
    );
    assert_eq!(
        create(with(TimePrecision::AdaptiveTimeMicroseconds), &row),
        Ok(vec![expect.into()])
    );
    let mut connect = with(TimePrecision::Connect);
    connect.source_precision.clear();
    let row = format!(r#"{{"day":19753,"at":36930123,"ts":1706696130123,"tz":{zoned}}}"#);
    assert_eq!(
        create(connect, &row),
        Ok(vec![
            "+I[2024-01-31, 10:15:30.123, 2024-01-31T10:15:30.123, 2024-01-31T10:15:30.123456Z]"
                .into()
        ])
    );
    let mut iso = with(TimePrecision::Isostring);
    iso.source_precision.clear();
    let row = format!(
        r#"{{"day":"2024-01-31Z","at":"10:15:30.123456Z","ts":"2024-01-31T10:15:30.123456Z","tz":{zoned}}}"#
    );
    assert_eq!(create(iso, &row), Ok(vec![expect.into()]));
}

#[test]
fn wrapped_messages_take_encodings_from_their_schema() {
    let schema = Schema::new(vec![
        Field::not_null("id", t("INT")),
        Field::new("price", t("DECIMAL(10, 2)")),
        Field::new("ts", t("TIMESTAMP(3)")),
    ]);
    let connect_schema = r#"{"type":"struct","fields":[{"type":"struct","fields":[
        {"type":"int32","optional":false,"field":"id"},
        {"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,
         "parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"price"},
        {"type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp","version":1,"field":"ts"}],
        "optional":true,"name":"pg.public.t.Value","field":"before"},
        {"type":"struct","fields":[],"optional":true,"name":"pg.public.t.Value","field":"after"},
        {"type":"string","optional":false,"field":"op"}],"optional":false,"name":"pg.public.t.Envelope"}"#;
    let message = format!(
        r#"{{"schema":{connect_schema},"payload":{{"op":"c","after":{{"id":1,"price":"BNI=","ts":1706696130123456}}}}}}"#
    );
    let config = DecoderConfig::new(schema);
    let mut d = Decoder::new(config.clone()).unwrap();
    let expect = Ok(vec!["+I[1, 12.34, 2024-01-31T10:15:30.123]".to_string()]);
    assert_eq!(run(&mut d, &message), expect);
    assert_eq!(run(&mut d, &message), expect, "from the cached readers");
    // The same values bare are read by the declared (default) settings: named errors.
    let bare = r#"{"op":"c","after":{"id":1,"price":"BNI="}}"#;
    assert!(run(&mut d, bare)
        .unwrap_err()
        .contains("decimal_handling=flink"));
    // Settings at their defaults, as the Java layer always sends them, defer to the schema.
    let mut java = config.clone();
    java.decimal_handling = Some(DecimalHandling::Flink);
    java.time_precision = Some(TimePrecision::Flink);
    java.binary_handling = Some(BinaryHandling::Bytes);
    assert_eq!(run(&mut Decoder::new(java).unwrap(), &message), expect);
    // A declared setting the schema contradicts is an error.
    let mut string_mode = config;
    string_mode.decimal_handling = Some(DecimalHandling::String);
    let e = run(&mut Decoder::new(string_mode).unwrap(), &message).unwrap_err();
    assert!(
        e.starts_with("the message's Connect schema: column \"price\": the message's schema says org.apache.kafka.connect.data.Decimal"),
        "{e}"
    );
}

#[test]
fn invalid_configurations_are_rejected() {
    let err = |config: DecoderConfig| Decoder::new(config).unwrap_err();
    let of = |fields: Vec<Field>| DecoderConfig::new(Schema::new(fields));
    assert_eq!(err(of(vec![])), "the schema has no column");
    let dup = vec![Field::new("a", t("INT")), Field::new("a", t("STRING"))];
    assert_eq!(err(of(dup)), "column \"a\" is declared twice");
    let one = || of(vec![Field::new("a", t("INT")), Field::new("d", t("DATE"))]);
    let with_precision = |c: &str, p| {
        let mut config = one();
        config.source_precision.insert(c.into(), p);
        config
    };
    assert_eq!(
        err(with_precision("b", 3)),
        "source precision given for unknown column \"b\""
    );
    assert_eq!(
        err(with_precision("a", 3)),
        "source precision given for column \"a\" of type INT"
    );
    assert!(err(with_precision("d", 3)).contains("does not depend on it"));
    let mut upsert = one();
    upsert.upsert = true;
    assert!(err(upsert.clone()).starts_with("upsert mode needs a primary key"));
    upsert.primary_key = Some(vec!["x".into()]);
    assert!(err(upsert).contains("unknown column 'x'"));
    let mut empty = one();
    empty.unavailable_placeholder.clear();
    assert!(err(empty).contains("placeholder is empty"));
}

#[test]
fn config_reads_from_json() {
    let config: DecoderConfig = serde_json::from_str(
        r#"{"schema":{"fields":[{"name":"id","type":"BIGINT","nullable":false},
            {"name":"ts","type":"TIMESTAMP(6)"}]},
            "update_mode":"DeleteInsert","time_precision":"adaptive","source_precision":{"ts":3},
            "decimal_handling":"string","binary_handling":"hex",
            "primary_key":["id"],"upsert":true,"unavailable_placeholder":"??"}"#,
    )
    .unwrap();
    assert_eq!(config.update_mode, UpdateMode::DeleteInsert);
    assert_eq!(config.decimal_handling, Some(DecimalHandling::String));
    assert_eq!(config.binary_handling, Some(BinaryHandling::Hex));
    assert_eq!(config.unavailable_placeholder, "??");
    assert!(config.upsert);
    let mut d = Decoder::new(config.clone()).unwrap();
    assert_eq!(
        run(
            &mut d,
            r#"{"op":"u","before":{"id":1,"ts":null},"after":{"id":1,"ts":1000}}"#
        ),
        Ok(vec![
            "-D[1, null]".into(),
            "+I[1, 1970-01-01T00:00:01]".into()
        ])
    );
    let defaults: DecoderConfig =
        serde_json::from_str(r#"{"schema":{"fields":[{"name":"id","type":"INT"}]}}"#).unwrap();
    assert_eq!(defaults, DecoderConfig::new(defaults.schema.clone()));
    assert_eq!(defaults.unavailable_placeholder, DEFAULT_PLACEHOLDER);
    let json = serde_json::to_string(&config).unwrap();
    assert_eq!(
        serde_json::from_str::<DecoderConfig>(&json).unwrap(),
        config
    );
    let bad = r#"{"schema":{"fields":[{"name":"id","type":"INT"}]},"decimal_handling":"auto"}"#;
    assert!(serde_json::from_str::<DecoderConfig>(bad).is_err());
}

#[test]
fn split_rows_validates_rows_from_elsewhere() {
    let mut d = decoder();
    let mut sink = ChangeSink::new();
    assert_eq!(
        d.decode(envelope("c", "null", BOB).as_bytes(), &0, &mut sink),
        Ok(Decoded::Changes(1))
    );
    let bob = sink.get(0).unwrap().1.to_vec();
    sink.clear();
    assert_eq!(
        d.split_rows(b'u', Some(&bob), Some(&bob), &"row #1", &mut sink),
        Ok(2)
    );
    assert_eq!(
        rows(&d, &sink),
        vec![format!("-U{BOB_ROW}"), format!("+U{BOB_ROW}")]
    );
    let e = d
        .split_rows(b'd', Some(&bob[..3]), None, &"row #2", &mut sink)
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("row #2: the \"before\" row is not a valid encoded row: "),
        "{e}"
    );
    assert_eq!(sink.len(), 2);
}

#[test]
fn a_batch_reuses_the_sink_without_reallocating() {
    let mut d = decoder();
    let batch: Vec<String> = (0..100)
        .map(|i| match i % 3 {
            0 => envelope("c", "null", ALICE),
            1 => envelope("u", BOB, ALICE),
            _ => envelope("d", BOB, "null"),
        })
        .collect();
    let mut sink = ChangeSink::new();
    let mut decode_all = |sink: &mut ChangeSink| {
        sink.clear();
        for (i, json) in batch.iter().enumerate() {
            let decoded = d.decode(json.as_bytes(), &format_args!("record #{i}"), sink);
            assert!(matches!(decoded, Ok(Decoded::Changes(_))));
        }
    };
    decode_all(&mut sink);
    let (data, entries) = (sink.data().as_ptr(), sink.entries().as_ptr());
    let first = sink.clone();
    decode_all(&mut sink);
    assert_eq!(sink, first);
    assert_eq!(
        (sink.data().as_ptr(), sink.entries().as_ptr()),
        (data, entries)
    );
    assert_eq!(sink.len(), 34 + 2 * 33 + 33);
}

/// A decoder of `schema` with `config` adjusted by `set`.
fn decoder_of(schema: Schema, set: impl FnOnce(&mut DecoderConfig)) -> Decoder {
    let mut config = DecoderConfig::new(schema);
    set(&mut config);
    Decoder::new(config).unwrap()
}

/// Decodes `json` into raw changes.
fn changes(d: &mut Decoder, json: &str) -> Vec<(RowKind, Vec<u8>)> {
    let mut sink = ChangeSink::new();
    let decoded = d.decode(json.as_bytes(), &"t", &mut sink).unwrap();
    assert_eq!(decoded, Decoded::Changes(sink.len()));
    sink.iter().map(|(k, r)| (k, r.to_vec())).collect()
}

/// Decodes `json`; which columns of each change are unavailable.
fn unavailable_in(d: &mut Decoder, json: &str) -> Vec<Vec<usize>> {
    let c = changes(d, json);
    unavailable(d, &c)
}

/// Which columns of each change are unavailable.
fn unavailable(d: &Decoder, changes: &[(RowKind, Vec<u8>)]) -> Vec<Vec<usize>> {
    changes
        .iter()
        .map(|(_, row)| {
            let r = RowRef::new(d.layout(), row);
            (0..d.layout().arity())
                .filter(|&i| r.is_unavailable(i))
                .collect()
        })
        .collect()
}

fn toast_schema() -> Schema {
    Schema::new(vec![
        Field::not_null("id", t("INT")),
        Field::not_null("doc", t("STRING")),
        Field::new("blob", t("BYTES")),
        Field::new("n", t("INT")),
    ])
}

const PLACEHOLDER_B64: &str = "X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==";

#[test]
fn the_toast_placeholder_is_unavailable_never_a_value() {
    let mut d = decoder_of(toast_schema(), |_| {});
    // An update at REPLICA IDENTITY DEFAULT in upsert-less mode needs a before; use a create.
    let json = format!(
        r#"{{"op":"c","after":{{"id":1,"doc":"__debezium_unavailable_value","blob":"{PLACEHOLDER_B64}","n":3}}}}"#
    );
    let c = changes(&mut d, &json);
    assert_eq!(
        unavailable(&d, &c),
        vec![vec![1, 2]],
        "NOT NULL doc is fine"
    );
    // Escaped, it is still the placeholder.
    let json = r#"{"op":"c","after":{"id":1,"doc":"__debezium_unavailable_valu\u0065"}}"#;
    assert_eq!(unavailable_in(&mut d, json), vec![vec![1]]);
    // Other text is a value; so is the placeholder's base64 in a STRING column.
    let json = format!(r#"{{"op":"c","after":{{"id":1,"doc":"{PLACEHOLDER_B64}"}}}}"#);
    assert_eq!(unavailable_in(&mut d, &json), vec![Vec::<usize>::new()]);
}

#[test]
fn any_column_sent_as_the_placeholder_text_is_unavailable() {
    // Debezium falls back to the placeholder text for a TOASTed value of any type its converter
    // writes as a string (a huge numeric in decimal.handling.mode=string, a jsonb, a uuid...).
    let schema = Schema::new(vec![
        Field::not_null("id", t("INT")),
        Field::new("amount", t("DECIMAL(38, 2)")),
        Field::new("doc", t("STRING")),
    ]);
    let mut d = decoder_of(schema, |c| {
        c.decimal_handling = Some(DecimalHandling::String)
    });
    let json = r#"{"op":"c","after":{"id":1,"amount":"__debezium_unavailable_value",
        "doc":"__debezium_unavailable_value"}}"#;
    assert_eq!(unavailable_in(&mut d, json), vec![vec![1, 2]]);
}

#[test]
fn hex_binary_columns_carry_the_placeholder_text() {
    let mut d = decoder_of(toast_schema(), |c| {
        c.binary_handling = Some(BinaryHandling::Hex)
    });
    let json = r#"{"op":"c","after":{"id":1,"doc":"x","blob":"__debezium_unavailable_value"}}"#;
    assert_eq!(unavailable_in(&mut d, json), vec![vec![2]]);
    let json = format!(r#"{{"op":"c","after":{{"id":1,"doc":"x","blob":"{PLACEHOLDER_B64}"}}}}"#);
    assert!(run(&mut d, &json)
        .unwrap_err()
        .contains("binary.handling.mode=hex"));
}

/// An unchanged TOASTed `hstore` in Debezium's default `hstore.handling.mode=json` is a map from
/// the placeholder to itself, as JSON text (`UnchangedToastedPlaceholder`; Debezium's
/// `PostgresDefaultValueConverterIT` asserts this very string).
#[test]
fn a_toasted_hstore_is_unavailable_never_a_value() {
    let mut d = decoder_of(toast_schema(), |_| {});
    let json = r#"{"op":"u","before":{"id":1,"doc":"{\"k\":\"v\"}"},"after":{"id":1,
        "doc":"{\"__debezium_unavailable_value\":\"__debezium_unavailable_value\"}"}}"#;
    assert_eq!(
        run(&mut d, json),
        Ok(vec![
            r#"-U[1, {"k":"v"}, null, null]"#.into(),
            r#"+U[1, {"k":"v"}, null, null]"#.into()
        ])
    );
    let mut d = decoder_of(toast_schema(), |c| {
        c.unavailable_placeholder = "<\"toast\">".into()
    });
    let json = r#"{"op":"c","after":{"id":1,"doc":"{\"<\\\"toast\\\">\":\"<\\\"toast\\\">\"}"}}"#;
    assert_eq!(unavailable_in(&mut d, json), vec![vec![1]]);
    // A map of anything else is a value; so is the map in a BYTES column.
    let json = r#"{"op":"c","after":{"id":1,"doc":"{\"__debezium_unavailable_value\":\"x\"}"}}"#;
    assert_eq!(unavailable_in(&mut d, json), vec![Vec::<usize>::new()]);
}

/// Postgres' `infinity` and `-infinity` timestamps, as Debezium sends them in the adaptive and
/// nanoseconds modes, are bad records naming the column, never a date-time.
#[test]
fn postgres_infinite_timestamps_are_out_of_range() {
    let schema = Schema::new(vec![Field::new("c", t("TIMESTAMP(6)"))]);
    let mut decoders = [
        decoder_of(schema.clone(), |c| {
            c.time_precision = Some(TimePrecision::Adaptive);
            c.source_precision.insert("c".into(), 6);
        }),
        decoder_of(schema, |c| {
            c.time_precision = Some(TimePrecision::Nanoseconds)
        }),
    ];
    for (d, v) in [
        (0, "9223372036825200000"),
        (0, "-9223372036832400000"),
        (1, "9223372036854775807"),
        (1, "-9223372036854775808"),
    ] {
        let json = format!(r#"{{"op":"c","after":{{"c":{v}}}}}"#);
        let e = run(&mut decoders[d], &json).unwrap_err();
        assert!(e.contains(&format!("value {v} is out of range")), "{e}");
    }
}

#[test]
fn a_custom_placeholder_replaces_the_default() {
    let mut d = decoder_of(toast_schema(), |c| {
        c.unavailable_placeholder = "<toast>".into()
    });
    let json = r#"{"op":"c","after":{"id":1,"doc":"<toast>","blob":"PHRvYXN0Pg=="}}"#;
    assert_eq!(unavailable_in(&mut d, json), vec![vec![1, 2]]);
    let json = r#"{"op":"c","after":{"id":1,"doc":"__debezium_unavailable_value"}}"#;
    assert_eq!(
        run(&mut d, json),
        Ok(vec![
            "+I[1, __debezium_unavailable_value, null, null]".into()
        ])
    );
}

#[test]
fn a_full_before_image_supplies_the_unavailable_value() {
    let mut d = decoder_of(toast_schema(), |_| {});
    // REPLICA IDENTITY FULL: the before image carries the real value.
    let json = format!(
        r#"{{"op":"u","before":{{"id":1,"doc":"long text","blob":"AQI=","n":1}},
            "after":{{"id":1,"doc":"__debezium_unavailable_value","blob":"{PLACEHOLDER_B64}","n":2}}}}"#
    );
    assert_eq!(
        run(&mut d, &json),
        Ok(vec![
            "-U[1, long text, [1, 2], 1]".into(),
            "+U[1, long text, [1, 2], 2]".into()
        ])
    );
    // A before that does not carry the column (null or absent) leaves it unavailable.
    let json = r#"{"op":"u","before":{"id":1,"doc":"x","blob":null},
        "after":{"id":1,"doc":"x","blob":"__debezium_unavailable_value"}}"#;
    let mut hex = decoder_of(toast_schema(), |c| {
        c.binary_handling = Some(BinaryHandling::Hex)
    });
    let c = changes(&mut hex, json);
    assert_eq!(unavailable(&hex, &c), vec![vec![], vec![2]]);
}

fn upsert_decoder(mode: UpdateMode) -> Decoder {
    decoder_of(toast_schema(), |c| {
        c.primary_key = Some(vec!["id".into()]);
        c.upsert = true;
        c.update_mode = mode;
    })
}

#[test]
fn upsert_updates_without_before_emit_only_the_new_row() {
    let json = r#"{"op":"u","before":null,"after":{"id":1,"doc":"d","n":2}}"#;
    let mut d = upsert_decoder(UpdateMode::Retract);
    assert_eq!(run(&mut d, json), Ok(vec!["+U[1, d, null, 2]".into()]));
    let mut d = upsert_decoder(UpdateMode::DeleteInsert);
    assert_eq!(run(&mut d, json), Ok(vec!["+I[1, d, null, 2]".into()]));
    // With a full before, updates are as always.
    let json = r#"{"op":"u","before":{"id":1,"doc":"c","n":1},"after":{"id":1,"doc":"d","n":2}}"#;
    assert_eq!(
        run(&mut d, json),
        Ok(vec!["-D[1, c, null, 1]".into(), "+I[1, d, null, 2]".into()])
    );
    // Without upsert it stays an error.
    let json = r#"{"op":"u","before":null,"after":{"id":1,"doc":"d"}}"#;
    let e = run(&mut decoder_of(toast_schema(), |_| {}), json).unwrap_err();
    assert!(e.contains("REPLICA IDENTITY to FULL"), "{e}");
}

#[test]
fn upsert_deletes_by_key() {
    let mut d = upsert_decoder(UpdateMode::Retract);
    // REPLICA IDENTITY DEFAULT: the key, other columns null (or absent).
    for before in [r#"{"id":7,"doc":null,"blob":null,"n":null}"#, r#"{"id":7}"#] {
        let json = format!(r#"{{"op":"d","before":{before},"after":null}}"#);
        let c = changes(&mut d, &json);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].0, RowKind::Delete);
        assert_eq!(unavailable(&d, &c), vec![vec![1, 2, 3]], "{before}");
        assert_eq!(RowRef::new(d.layout(), &c[0].1).get_int(0), 7);
    }
    // A full before is read as it is, nulls included.
    let json = r#"{"op":"d","before":{"id":7,"doc":"x","n":null}}"#;
    assert_eq!(run(&mut d, json), Ok(vec!["-D[7, x, null, null]".into()]));
    let e = run(&mut d, r#"{"op":"d","before":{"doc":null}}"#).unwrap_err();
    assert_eq!(
        e,
        "the \"before\" row holds only key columns (upsert mode: a delete by key) but its \
         primary key column \"id\" is missing or null"
    );
    // Without upsert a key-only before of a NOT NULL column is an error.
    let e = run(
        &mut decoder_of(toast_schema(), |_| {}),
        r#"{"op":"d","before":{"id":7}}"#,
    )
    .unwrap_err();
    assert!(
        e.contains("\"doc\" of the \"before\" row is declared NOT NULL"),
        "{e}"
    );
}

#[test]
fn postgres_types_as_debezium_sends_them() {
    // uuid, jsonb, an enum, interval (MicroDuration and string mode), money (precise), smallint,
    // real, timestamptz, as Debezium's Postgres connector writes them with its defaults.
    let schema = Schema::new(vec![
        Field::not_null("id", t("STRING")),
        Field::new("doc", t("STRING")),
        Field::new("mood", t("STRING")),
        Field::new("took", t("BIGINT")),
        Field::new("took_text", t("STRING")),
        Field::new("price", t("DECIMAL(19, 2)")),
        Field::new("qty", t("SMALLINT")),
        Field::new("ratio", t("FLOAT")),
        Field::new("at", t("TIMESTAMP_LTZ(6)")),
    ]);
    let mut d = decoder_of(schema, |c| {
        c.decimal_handling = Some(DecimalHandling::Precise);
        c.time_precision = Some(TimePrecision::Adaptive);
    });
    let json = r#"{"op":"c","after":{"id":"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        "doc":"{\"tags\": [\"a\"]}","mood":"happy","took":93784000005,
        "took_text":"P1DT2H3M4.000005S","price":"AYag","qty":-3,"ratio":1.5,
        "at":"2024-01-31T10:15:30.123456Z"}}"#;
    assert_eq!(
        run(&mut d, json),
        Ok(vec![
            "+I[a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11, {\"tags\": [\"a\"]}, happy, 93784000005, \
             P1DT2H3M4.000005S, 1000.00, -3, 1.5, 2024-01-31T10:15:30.123456Z]"
                .into()
        ])
    );
}

#[test]
fn upsert_kafka_records() {
    let mut d = upsert_decoder(UpdateMode::Retract);
    let mut sink = ChangeSink::new();
    let mut upsert = |key: Option<&str>, value: Option<&str>, sink: &mut ChangeSink| {
        let r = d.decode_upsert(
            key.map(str::as_bytes),
            value.map(str::as_bytes),
            &"k@1",
            sink,
        );
        r.map_err(|e| e.to_string())
    };
    let value = r#"{"id":5,"doc":"d","n":1}"#;
    assert_eq!(upsert(Some(r#"{"id":5}"#), Some(value), &mut sink), Ok(1));
    assert_eq!(upsert(Some(r#"{"id":5}"#), None, &mut sink), Ok(1));
    assert_eq!(upsert(Some(r#"{"id":5}"#), Some("null"), &mut sink), Ok(1));
    let e = upsert(None, None, &mut sink).unwrap_err();
    assert!(
        e.starts_with("k@1: ") && e.contains("needs the record key"),
        "{e}"
    );
    let e = upsert(Some("[1]"), None, &mut sink).unwrap_err();
    assert!(e.starts_with("k@1: malformed JSON"), "{e}");
    let e = upsert(Some(r#"{"id":"x"}"#), None, &mut sink).unwrap_err();
    assert!(
        e.contains("column \"id\" (INT) of the \"before\" row"),
        "{e}"
    );
    assert_eq!(sink.len(), 3, "nothing appended on error");
    let kinds: Vec<RowKind> = sink.iter().map(|(k, _)| k).collect();
    assert_eq!(kinds, [RowKind::Insert, RowKind::Delete, RowKind::Delete]);
    let rows: Vec<_> = sink.iter().map(|(k, r)| (k, r.to_vec())).collect();
    assert_eq!(
        unavailable(&d, &rows),
        vec![vec![], vec![1, 2, 3], vec![1, 2, 3]]
    );
    assert_eq!(RowRef::new(d.layout(), &rows[1].1).get_int(0), 5);
    let mut plain = decoder_of(toast_schema(), |_| {});
    let e = plain
        .decode_upsert(None, Some(value.as_bytes()), &"k@2", &mut sink)
        .unwrap_err();
    assert!(e
        .to_string()
        .ends_with("need upsert mode (\"upsert\": true and a primary key)"));
}

/// A key the decoder reads, given twice, could be meant either way (Flink's Jackson keeps the
/// last): the message is refused, naming the key. Keys it does not read may repeat.
#[test]
fn a_key_read_twice_is_refused() {
    let refused = |json: &str| decode(json).unwrap_err();
    assert_eq!(
        refused(r#"{"op":"c","op":"d","after":{"id":1},"before":{"id":1}}"#),
        "malformed JSON: duplicate key \"op\" in the envelope at line 1 column 14"
    );
    assert_eq!(
        refused(r#"{"op":"c","after":{"id":1},"after":{"id":2}}"#),
        "malformed JSON: duplicate key \"after\" in the envelope at line 1 column 34"
    );
    assert_eq!(
        refused(r#"{"op":"d","before":null,"before":{"id":2}}"#),
        "malformed JSON: duplicate key \"before\" in the envelope at line 1 column 32"
    );
    assert_eq!(
        refused(r#"{"op":"c","after":{"id":1,"name":"a","name":"b"}}"#),
        "malformed JSON: duplicate column \"name\" in a row image at line 1 column 43"
    );
    let wrapped = wrapped(r#"{"op":"c","after":{"id":1},"op":"r"}"#);
    assert!(
        refused(&wrapped).contains("duplicate key \"op\" in the envelope"),
        "{}",
        refused(&wrapped)
    );
    assert_eq!(
        decode(r#"{"op":"c","after":{"id":1,"x":1,"x":2},"ts_ms":1,"ts_ms":2}"#),
        Ok(vec![
            "+I[1, null, null, null, null, null, null, null, null]".into()
        ])
    );
}

/// A MySQL-shaped schema-wrapped create: the Connect schema's row struct (for `before` and
/// `after`) has `columns`; the payload's `after` is `after`.
fn wrapped_create(columns: &str, after: &str) -> String {
    format!(
        r#"{{"schema":{{"type":"struct","fields":[{{"type":"struct","fields":[{columns}],"optional":true,"name":"my.shop.t.Value","field":"before"}},{{"type":"struct","fields":[{columns}],"optional":true,"name":"my.shop.t.Value","field":"after"}},{{"type":"struct","fields":[{{"type":"string","optional":false,"field":"connector"}}],"optional":false,"name":"io.debezium.connector.mysql.Source","field":"source"}},{{"type":"string","optional":false,"field":"op"}},{{"type":"int64","optional":true,"field":"ts_ms"}}],"optional":false,"name":"my.shop.t.Envelope","version":2}},"payload":{{"before":null,"after":{after},"source":{{"connector":"mysql"}},"op":"c","ts_ms":1706696130456}}}}"#
    )
}

const ID_INT32: &str = r#"{"type":"int32","optional":false,"field":"id"}"#;

/// Decodes a wrapped create of `id` and column `c` (declared `declared`, its Connect schema
/// `node`, its payload value `value`).
fn wrapped_column(
    declared: &str,
    node: &str,
    value: &str,
    set: impl FnOnce(&mut DecoderConfig),
) -> Result<Vec<String>, String> {
    let schema = Schema::new(vec![
        Field::not_null("id", t("INT")),
        Field::new("c", t(declared)),
    ]);
    let columns = format!(r#"{ID_INT32},{{{node},"optional":true,"field":"c"}}"#);
    let message = wrapped_create(&columns, &format!(r#"{{"id":1,"c":{value}}}"#));
    run(&mut decoder_of(schema, set), &message)
}

/// The Connect type must be a form of the declared one, whatever its name: a `Decimal`'s or
/// `Bits`' bytes are not text, a `string` is not a DOUBLE (JsonConverter writes a float64's
/// non-finite values as a `double`).
#[test]
fn a_connect_type_the_declared_type_cannot_hold_is_refused() {
    let decimal = r#""type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}"#;
    let bits = r#""type":"bytes","name":"io.debezium.data.Bits","parameters":{"length":"16"}"#;
    for (declared, node, value) in [
        ("STRING", decimal, r#""BNI=""#),
        ("STRING", bits, r#""AQI=""#),
        ("STRING", r#""type":"int32""#, "7"),
        ("DOUBLE", r#""type":"string""#, r#""Infinity""#),
        ("BIGINT", r#""type":"string""#, r#""7""#),
        ("BOOLEAN", r#""type":"int16""#, "1"),
        ("BYTES", decimal, r#""BNI=""#),
    ] {
        let e = wrapped_column(declared, node, value, |_| {}).unwrap_err();
        assert!(
            e.contains("is not an encoding of"),
            "{declared} from {node}: {e}"
        );
    }
    for (declared, node, value, row) in [
        (
            "STRING",
            r#""type":"string","name":"io.debezium.data.Json""#,
            r#""{}""#,
            "+I[1, {}]",
        ),
        (
            "INT",
            r#""type":"int32","name":"io.debezium.time.Year""#,
            "2024",
            "+I[1, 2024]",
        ),
        ("DOUBLE", r#""type":"int64""#, "7", "+I[1, 7.0]"),
        ("DOUBLE", r#""type":"double""#, r#""NaN""#, "+I[1, NaN]"),
        ("BOOLEAN", r#""type":"boolean""#, "true", "+I[1, true]"),
    ] {
        let got = wrapped_column(declared, node, value, |_| {});
        assert_eq!(got, Ok(vec![row.to_string()]), "{declared} from {node}");
    }
}

/// MySQL's `BIT(n > 1)` is Connect bytes named `io.debezium.data.Bits` in every
/// `binary.handling.mode`, which Debezium applies to binary columns only.
#[test]
fn bits_are_base64_whatever_the_binary_handling() {
    let bits = r#""type":"bytes","name":"io.debezium.data.Bits","parameters":{"length":"24"}"#;
    for mode in [
        BinaryHandling::Hex,
        BinaryHandling::Base64,
        BinaryHandling::Bytes,
    ] {
        let got = wrapped_column("BYTES", bits, r#""ABCD""#, |c| {
            c.binary_handling = Some(mode)
        });
        assert_eq!(
            got,
            Ok(vec!["+I[1, [0, 16, -125]]".to_string()]),
            "{mode:?}"
        );
    }
}

/// JsonConverter lists every payload field in the schema: a column it does not list has no known
/// encoding (`"1000"` is 1000.00 as text, 141100.04 as `precise` base64), so it may only be null
/// or absent.
#[test]
fn a_column_the_connect_schema_does_not_list_is_only_null_or_absent() {
    let schema = Schema::new(vec![
        Field::not_null("id", t("INT")),
        Field::new("price", t("DECIMAL(10, 2)")),
    ]);
    let mut d = decoder_of(schema, |_| {});
    let e = run(
        &mut d,
        &wrapped_create(ID_INT32, r#"{"id":1,"price":"1000"}"#),
    )
    .unwrap_err();
    assert!(e.contains("does not list this column"), "{e}");
    for after in [r#"{"id":1,"price":null}"#, r#"{"id":1}"#] {
        let got = run(&mut d, &wrapped_create(ID_INT32, after));
        assert_eq!(got, Ok(vec!["+I[1, null]".to_string()]), "{after}");
    }
}

/// An upsert value without its primary key has no identity; a value Kafka Connect wrapped as
/// `{"schema", "payload"}` (JsonConverter's default `schemas.enable=true`) read as a flat row
/// would be a row of nulls.
#[test]
fn an_upsert_value_without_its_primary_key_is_refused() {
    let schema = Schema::new(vec![
        Field::new("id", t("INT")),
        Field::new("name", t("STRING")),
    ]);
    let mut d = decoder_of(schema, |c| {
        c.primary_key = Some(vec!["id".into()]);
        c.upsert = true;
    });
    let wrapped = format!(
        r#"{{"schema":{{"type":"struct","fields":[{ID_INT32}],"name":"my.shop.t.Value"}},"payload":{{"id":5,"name":"x"}}}}"#
    );
    for value in [
        wrapped.as_str(),
        r#"{"id":null,"name":"x"}"#,
        r#"{"name":"x"}"#,
    ] {
        let mut sink = ChangeSink::new();
        let e = d
            .decode_upsert(
                Some(br#"{"id":5}"#),
                Some(value.as_bytes()),
                &"k@1",
                &mut sink,
            )
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("primary key column \"id\" is missing or null"),
            "{e}"
        );
        assert!(e.contains("k@1"), "{e}");
    }
    let mut sink = ChangeSink::new();
    let value = br#"{"id":5,"name":"x"}"#;
    assert!(d
        .decode_upsert(None, Some(value), &"k@2", &mut sink)
        .is_ok());
    // A delete (null value) without a record key has nothing to delete by.
    for key in [None, Some(&b"null"[..])] {
        let e = d.decode_upsert(key, None, &"k@3", &mut sink).unwrap_err();
        assert_eq!(
            e.to_string(),
            "k@3: an upsert-kafka delete (a null value) needs the record key, which holds the \
             primary key"
        );
    }
}
