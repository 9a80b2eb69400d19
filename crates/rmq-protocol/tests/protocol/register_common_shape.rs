//! The fast REGISTER_BROKER decoder (`register::common`) against the general
//! one: whenever the fast decoder answers, the general decoder gives the same
//! registration, or the same refusal. Bodies are written as text, field by
//! field, with the variations a sender could produce — fields missing,
//! repeated or reordered, whitespace, escapes, non-ASCII names, numbers as
//! strings, floats, leading zeros, out-of-range values, null, unknown
//! members, keys that differ from the topic name — so that both the answers
//! and the give-ups of the fast decoder are exercised; and every vector
//! captured from a Java broker must take the fast path.

use proptest::collection::vec;
use proptest::prelude::*;
use rmq_protocol::register::common;
use rmq_protocol::register::RegisterDecodeError;
use rmq_protocol::{DecodedRegistration, RegisterBrokerBody};

/// A version with the JSON body (3.0.11 and later).
const V5: i32 = 479;

/// The registration with its topics in name order (the fast decoder keeps the
/// body's order, the general one the map's).
fn sorted(mut decoded: DecodedRegistration) -> DecodedRegistration {
    decoded
        .topic_configs
        .sort_by(|a, b| a.topic_name.cmp(&b.topic_name));
    decoded
}

/// A JSON string literal of `text`: plain, or with every character escaped.
fn string_literal(text: &str, escaped: bool) -> String {
    if escaped {
        let mut out = String::from("\"");
        for unit in text.encode_utf16() {
            out.push_str(&format!("\\u{unit:04x}"));
        }
        out.push('"');
        out
    } else {
        format!("\"{text}\"")
    }
}

/// Names as brokers write them, and a few that are not.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => "[A-Za-z0-9_%-]{1,12}",
        1 => Just("$ref".to_owned()),
        1 => Just("Tópico-ü".to_owned()),
        1 => Just(String::new()),
    ]
}

/// The text of an integer field's value.
fn int_value() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => (-3i64..70_000).prop_map(|n| n.to_string()),
        1 => Just("2147483648".to_owned()),
        1 => Just("-2147483649".to_owned()),
        1 => Just("9223372036854775808".to_owned()),
        1 => Just("06".to_owned()),
        1 => Just("-0".to_owned()),
        1 => Just("6.0".to_owned()),
        1 => Just("6e0".to_owned()),
        1 => Just("\"6\"".to_owned()),
        1 => Just("null".to_owned()),
        1 => Just("true".to_owned()),
    ]
}

fn bool_value() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => Just("true".to_owned()),
        4 => Just("false".to_owned()),
        1 => Just("1".to_owned()),
        1 => Just("\"true\"".to_owned()),
        1 => Just("null".to_owned()),
    ]
}

fn filter_type_value() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => Just("\"SINGLE_TAG\"".to_owned()),
        2 => Just("\"MULTI_TAG\"".to_owned()),
        1 => Just("\"OTHER\"".to_owned()),
        1 => Just("1".to_owned()),
        1 => Just("null".to_owned()),
    ]
}

fn attributes_value() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => Just("{}".to_owned()),
        2 => (name(), name()).prop_map(|(k, v)| format!("{{\"{k}\":\"{v}\"}}")),
        1 => Just(r#"{"a":"1","a":"2"}"#.to_owned()),
        1 => Just(r#"{"a":1}"#.to_owned()),
        1 => Just("null".to_owned()),
        1 => Just("[]".to_owned()),
    ]
}

/// Member texts of one topic object named `topic`, in fastjson's order, any
/// of them left out, one possibly repeated, one possibly unknown.
fn topic_members(topic: String) -> impl Strategy<Value = Vec<String>> {
    (
        attributes_value(),
        bool_value(),
        int_value(),
        int_value(),
        filter_type_value(),
        prop_oneof![
            6 => Just(topic.clone()).prop_map(|t| string_literal(&t, false)),
            1 => Just(topic.clone()).prop_map(|t| string_literal(&t, true)),
            1 => name().prop_map(|t| string_literal(&t, false)),
            1 => Just("null".to_owned()),
        ],
        int_value(),
        int_value(),
        vec(any::<bool>(), 8),
        prop_oneof![6 => Just(None), 1 => (0usize..8).prop_map(Some)],
        prop_oneof![6 => Just(false), 1 => Just(true)],
    )
        .prop_map(
            |(attrs, order, perm, read, filter, topic_name, sys, write, keep, repeat, unknown)| {
                let members = [
                    ("attributes", attrs),
                    ("order", order),
                    ("perm", perm),
                    ("readQueueNums", read),
                    ("topicFilterType", filter),
                    ("topicName", topic_name),
                    ("topicSysFlag", sys),
                    ("writeQueueNums", write),
                ];
                let mut out: Vec<String> = members
                    .iter()
                    .zip(&keep)
                    .filter(|(_, keep)| **keep)
                    .map(|((n, v), _)| format!("\"{n}\":{v}"))
                    .collect();
                if let Some(i) = repeat {
                    let (n, v) = &members[i];
                    out.push(format!("\"{n}\":{v}"));
                }
                if unknown {
                    out.push("\"brandNew\":1".to_owned());
                }
                out
            },
        )
}

/// One `"key":{…}` entry of the topic table.
fn topic_entry() -> impl Strategy<Value = String> {
    name().prop_flat_map(|topic| {
        (
            prop_oneof![6 => Just(false), 1 => Just(true)],
            topic_members(topic.clone()),
            Just(topic),
        )
            .prop_map(|(escaped_key, members, topic)| {
                format!(
                    "{}:{{{}}}",
                    string_literal(&topic, escaped_key),
                    members.join(",")
                )
            })
    })
}

fn data_version_value() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (any::<i64>(), any::<i64>(), any::<i64>()).prop_map(|(c, s, t)| {
            format!(r#"{{"counter":{c},"stateVersion":{s},"timestamp":{t}}}"#)
        }),
        2 => (any::<i64>(), any::<i64>()).prop_map(|(c, t)| {
            format!(r#"{{"counter":{c},"timestamp":{t}}}"#)
        }),
        1 => int_value().prop_map(|v| format!(r#"{{"counter":{v},"timestamp":1}}"#)),
        1 => Just(r#"{"counter":1,"counter":2}"#.to_owned()),
        1 => Just("null".to_owned()),
    ]
}

/// A whole body: the wrapper's members in order, any of them left out or
/// odd, then whitespace inserted at random places between tokens.
fn body() -> impl Strategy<Value = String> {
    (
        prop_oneof![
            4 => vec(name(), 0..3).prop_map(|l| format!(
                "[{}]",
                l.iter().map(|a| format!("\"{a}\"")).collect::<Vec<_>>().join(",")
            )),
            1 => Just("null".to_owned()),
            1 => Just("[1]".to_owned()),
        ],
        data_version_value(),
        data_version_value(),
        vec(topic_entry(), 0..5),
        prop_oneof![6 => Just("{}".to_owned()), 1 => Just(r#"{"x":[1,{"y":null}]}"#.to_owned())],
        prop_oneof![6 => Just("{}".to_owned()), 1 => Just("null".to_owned())],
        vec(any::<bool>(), 7),
        any::<u64>(),
    )
        .prop_map(
            |(filters, version, mapping_version, topics, details, infos, keep, spaces)| {
                let wrapper = [
                    format!("\"dataVersion\":{version}"),
                    format!("\"mappingDataVersion\":{mapping_version}"),
                    format!("\"topicConfigTable\":{{{}}}", topics.join(",")),
                    format!("\"topicQueueMappingDetailMap\":{details}"),
                    format!("\"topicQueueMappingInfoMap\":{infos}"),
                ];
                let wrapper: Vec<&String> = wrapper
                    .iter()
                    .zip(&keep)
                    .filter(|(_, k)| **k)
                    .map(|(m, _)| m)
                    .collect();
                let mut members = Vec::new();
                if keep[5] {
                    members.push(format!("\"filterServerList\":{filters}"));
                }
                if keep[6] {
                    members.push(format!(
                        "\"topicConfigSerializeWrapper\":{{{}}}",
                        wrapper
                            .iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join(",")
                    ));
                }
                let text = format!("{{{}}}", members.join(","));
                // Whitespace after some of the structural characters.
                let mut spaced = String::with_capacity(text.len() * 2);
                let mut bits = spaces;
                let mut in_string = false;
                let mut previous = '\0';
                for c in text.chars() {
                    spaced.push(c);
                    if c == '"' && previous != '\\' {
                        in_string = !in_string;
                    }
                    if !in_string && matches!(c, '{' | '}' | ',' | ':' | '[') {
                        if bits & 1 == 1 {
                            spaced.push_str(if bits & 2 == 2 { " " } else { "\n\t" });
                        }
                        bits = bits.rotate_right(2);
                    }
                    previous = c;
                }
                spaced
            },
        )
}

/// The one-sided agreement of the two decoders on `bytes` with `limit`.
fn agree(bytes: &[u8], limit: usize) -> Result<bool, TestCaseError> {
    let Some(fast) = common::decode(bytes, limit) else {
        return Ok(false);
    };
    let general = RegisterBrokerBody::decode_request_limited(Some(bytes), false, V5, limit);
    let text = String::from_utf8_lossy(bytes);
    match (fast, general) {
        (Ok(fast), Ok(general)) => {
            prop_assert_eq!(sorted(fast), sorted(general.into()), "{}", text);
        }
        (
            Err(RegisterDecodeError::TooMany { what, limit: l }),
            Err(RegisterDecodeError::TooMany {
                what: general_what,
                limit: general_limit,
            }),
        ) => {
            prop_assert_eq!((what, l), (general_what, general_limit), "{}", text);
        }
        (fast, general) => {
            return Err(TestCaseError::fail(format!(
                "fast {fast:?}, general {general:?}: {text}"
            )))
        }
    }
    Ok(true)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000))]

    #[test]
    fn whenever_the_fast_decoder_answers_the_general_one_agrees(
        text in body(),
        limit in prop_oneof![4 => Just(1_000usize), 1 => 0usize..4],
    ) {
        agree(text.as_bytes(), limit)?;
    }

    #[test]
    fn the_fast_decoder_agrees_on_damaged_bodies(
        text in body(),
        cut in any::<prop::sample::Index>(),
        insert in prop::sample::select(vec![b'"', b'\\', b'{', b'}', b',', b':', b'0', b'-', b' ', 0x01, 0xc3]),
    ) {
        let mut bytes = text.into_bytes();
        if !bytes.is_empty() {
            let at = cut.index(bytes.len());
            bytes[at] = insert;
        }
        agree(&bytes, 1_000)?;
    }
}

/// The generator reaches both outcomes: plenty of bodies take the fast path,
/// plenty are left to the general decoder.
#[test]
fn bodies_exercise_both_paths() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut fast, mut general) = (0, 0);
    for _ in 0..2_000 {
        let text = body().new_tree(&mut runner).unwrap().current();
        if agree(text.as_bytes(), 1_000).unwrap() {
            fast += 1;
        } else {
            general += 1;
        }
    }
    assert!(
        fast > 200 && general > 200,
        "fast {fast}, general {general}"
    );
}

/// Every JSON REGISTER_BROKER body captured from a Java broker (4.9.8,
/// 5.3.3, 5.5.1) takes the fast path, and decodes as the general decoder
/// decodes it; static-topic bodies and the "strange" ones (escapes in every
/// string) are the general decoder's.
#[test]
fn java_bodies_take_the_fast_path() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !(name.starts_with("103_register_broker_body") && name.ends_with(".json")) {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let fast = common::decode(&bytes, 1_000);
        if name.contains("static_topic") || name.contains("strange") {
            assert!(fast.is_none(), "{name}");
            continue;
        }
        let fast = fast
            .unwrap_or_else(|| panic!("{name} left to the general decoder"))
            .unwrap();
        let general =
            RegisterBrokerBody::decode_request_limited(Some(&bytes), false, V5, 1_000).unwrap();
        assert_eq!(sorted(fast), sorted(general.into()), "{name}");
        checked += 1;
    }
    assert!(checked >= 6, "{checked} vectors");
}
