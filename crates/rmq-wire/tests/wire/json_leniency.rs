//! What the JSON header decoder accepts beyond Java's own output, mirroring
//! fastjson's leniency in `RemotingCommand.decode` (keys in any order, unknown
//! keys ignored, any key missing or null, `language` by name in any case or by
//! ordinal, numbers and booleans in `extFields` read as their text): headers
//! from Go, C++ and older Java clients, and what it must still reject.

use rmq_wire::header::{json, HeaderDecodeError};
use rmq_wire::{ExtFields, LanguageCode, RemotingCommand, SerializeType};

fn decode(text: &str) -> RemotingCommand {
    json::decode(text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn ext(pairs: &[(&str, &str)]) -> ExtFields {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn a_go_client_header_without_serialize_type_decodes() {
    let command = decode(
        r#"{"code":105,"language":"GO","version":317,"opaque":5,"flag":0,"extFields":{"topic":"TopicTest"}}"#,
    );
    assert_eq!(command.code, 105);
    assert_eq!(command.language, LanguageCode::Go);
    assert_eq!((command.version, command.opaque, command.flag), (317, 5, 0));
    assert_eq!(command.ext("topic"), Some("TopicTest"));
    assert_eq!(command.serialize_type, SerializeType::Json);
}

#[test]
fn language_by_any_case_name_or_ordinal() {
    let language = |value: &str| decode(&format!(r#"{{"language":{value}}}"#)).language;
    assert_eq!(language(r#""go""#), LanguageCode::Go);
    assert_eq!(language(r#""Node_Js""#), LanguageCode::NodeJs);
    assert_eq!(language("9"), LanguageCode::Go);
    assert_eq!(language("12"), LanguageCode::Rust);
    assert_eq!(language(r#""COBOL""#), LanguageCode::Other);
    assert_eq!(language("200"), LanguageCode::Unknown(200));
    assert_eq!(language("256"), LanguageCode::Other);
    assert_eq!(language("-1"), LanguageCode::Other);
    assert_eq!(language("null"), LanguageCode::Java);
}

#[test]
fn ext_field_numbers_and_booleans_become_strings_and_null_is_absent() {
    let command = decode(
        r#"{"extFields":{"num":5,"neg":-3,"big":1700000000000,"ratio":0.618,"t":true,"f":false,"gone":null,"s":"x","o":{"a":[1,2]}}}"#,
    );
    let expected = ext(&[
        ("num", "5"),
        ("neg", "-3"),
        ("big", "1700000000000"),
        ("ratio", "0.618"),
        ("t", "true"),
        ("f", "false"),
        ("s", "x"),
        ("o", r#"{"a":[1,2]}"#),
    ]);
    assert_eq!(command.ext_fields, Some(expected));
}

#[test]
fn unknown_keys_are_skipped_whatever_their_value() {
    let command = decode(
        r#"{"version":479,"processTimer":{"running":true},"opaque":9,"x":[1,{"y":null},"z"],"code":105,"serializeTypeCurrentRPC":"ROCKETMQ","extFields":{"topic":"T"},"flag":0,"n":null,"language":"JAVA"}"#,
    );
    let expected = RemotingCommand::request(105, 9).with_ext("topic", "T");
    // serializeTypeCurrentRPC is ignored: the frame's type byte wins.
    assert_eq!(command, expected);
}

#[test]
fn missing_and_null_keys_take_the_defaults() {
    let defaults = RemotingCommand {
        version: 0,
        ..RemotingCommand::request(0, 0)
    };
    assert_eq!(decode("{}"), defaults);
    assert_eq!(
        decode(
            r#"{"code":null,"extFields":null,"flag":null,"language":null,"opaque":null,"remark":null,"version":null}"#
        ),
        defaults
    );
    assert_eq!(
        decode(r#"{"extFields":{}}"#).ext_fields,
        Some(ExtFields::new())
    );
    assert_eq!(decode(r#"{"remark":""}"#).remark.as_deref(), Some(""));
}

#[test]
fn integers_may_come_as_strings_and_whitespace_is_fine() {
    let command =
        decode("{ \"code\" : \"105\" ,\n\t\"opaque\": \"-7\", \"flag\": 1, \"version\": \"\" }\n");
    assert_eq!(
        (command.code, command.opaque, command.flag, command.version),
        (105, -7, 1, 0)
    );
    let command = decode(r#"{"code":2147483647,"opaque":-2147483648}"#);
    assert_eq!((command.code, command.opaque), (i32::MAX, i32::MIN));
}

/// fastjson 1.2.83 into RocketMQ 4.9.8's `RemotingCommand`: `castToInt` drops
/// commas and a trailing `.0…`, decimals truncate, booleans are 1/0, and only
/// `"null"`/`"NULL"` are null (`"Null"` fails with "parseInt error, field : code").
#[test]
fn integers_follow_java_cast_to_int() {
    let command = decode(r#"{"code":"1,05","opaque":"7.00","flag":1.9,"version":true}"#);
    assert_eq!(
        (command.code, command.opaque, command.flag, command.version),
        (105, 7, 1, 1)
    );
    assert_eq!(decode(r#"{"code":"null","flag":"NULL"}"#).code, 0);
    assert!(json::decode(br#"{"code":"Null"}"#).is_err());
}

/// The same Java run: a decimal remark keeps its `.0`, an object remark is its
/// JSON text, and in `extFields` (a `HashMap<String, String>`) `$ref` is an
/// ordinary key and a later null replaces an earlier value.
#[test]
fn string_fields_take_any_value_as_java_does() {
    let command = decode(r#"{"remark":1.0,"extFields":{"$ref":"$","k":"a","k":null,"n":1.0}}"#);
    assert_eq!(command.remark.as_deref(), Some("1.0"));
    assert_eq!(
        command.ext_fields,
        Some(ext(&[("$ref", "$"), ("n", "1.0")]))
    );
    assert_eq!(
        decode(r#"{"remark":{"b":1}}"#).remark.as_deref(),
        Some(r#"{"b":1}"#)
    );
}

#[test]
fn escapes_in_any_form_are_understood() {
    let command =
        decode(r#"{"remark":"a\/b\u00E9\u4e2d\"\\\n\uD83D\uDE00","extFields":{"k\u0001":"\t"}}"#);
    assert_eq!(command.remark.as_deref(), Some("a/bé中\"\\\n😀"));
    assert_eq!(command.ext("k\u{1}"), Some("\t"));
}

#[test]
fn duplicate_keys_keep_the_last_value_as_java_does() {
    let command = decode(r#"{"code":1,"code":2,"extFields":{"k":"a","k":"b","j":"x","j":null}}"#);
    assert_eq!(command.code, 2);
    assert_eq!(command.ext_fields, Some(ext(&[("k", "b")])));
}

#[test]
fn malformed_headers_are_errors() {
    for text in [
        "",
        "{",
        r#"{"code":}"#,
        r#"{"code":1,}"#,
        "[1]",
        r#""header""#,
        "null",
        r#"{"code":1} {"#,
        r#"{"code":2147483648}"#,
        r#"{"code":"abc"}"#,
        r#"{"language":true}"#,
        r#"{"extFields":"topic"}"#,
        r#"{"extFields":[]}"#,
        r#"{"remark":"\ud800"}"#,
    ] {
        match json::decode(text.as_bytes()) {
            Err(HeaderDecodeError::Json(message)) => assert!(!message.is_empty()),
            other => panic!("{text:?} gave {other:?}"),
        }
    }
    assert!(json::decode(b"{\"remark\":\"\xff\"}").is_err());
    let deep = "[".repeat(10_000);
    assert!(json::decode(format!(r#"{{"x":{deep}}}"#).as_bytes()).is_err());
}
