//! Fuzzes the fastjson parser of `rmq_protocol::java_json`: the bare-key
//! pre-pass, serde_json behind it, and the lenient coercions the body types
//! read their fields with.
//!
//! The whole input is parsed as an untyped value, and checked:
//!
//! * strict JSON passes the pre-pass untouched (valid JSON has no bare token
//!   before a `:`, so quoting one would change what peers meant);
//! * a value that parses is written in the default dialect and parses back to
//!   the same value (numbers compared by value: the emitter writes `1.0` as
//!   `1`, as fastjson does; floats within 2 ULP, see `close`).
//!
//! The input is then put in the place of one field of a body, so that each
//! coercion sees arbitrary values: a long (`DataVersion.counter`), an int
//! (`SyncStateSet.syncStateSetEpoch`), an int with a Java initializer
//! (`TopicConfig.perm`), a boolean (`TopicConfig.order`), a string
//! (`TopicConfig.topicName`), an enum (`TopicConfig.topicFilterType`), a map
//! with long keys (`BrokerMemberGroup.brokerAddrs`), a map with int keys
//! (`TopicQueueMappingInfo.currIdMap`), a set of longs (`SyncStateSet.syncStateSet`),
//! a list of strings (`TopicList.topicList`) and a nullable map
//! (`TopicRouteData.topicQueueMappingByBroker`). For the scalar fields the
//! result must be what fastjson's rules (documented in `rmq_wire::lenient`)
//! give for the value parsed on its own; for all of them nothing may panic.
//!
//! Run from `fuzz/`: `RUSTC_BOOTSTRAP=1 cargo fuzz run java_json_parse -- -max_total_time=60`.

#![no_main]

use std::borrow::Cow;

use libfuzzer_sys::fuzz_target;
use rmq_protocol::java_json::{self, quote_bare_keys, Dialect};
use rmq_protocol::{
    DataVersion, GetBrokerMemberGroupResponseBody, JavaJson, SyncStateSet, TopicConfig,
    TopicFilterType, TopicList, TopicQueueMappingInfo, TopicRouteData,
};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    if serde_json::from_slice::<Value>(data).is_ok() {
        assert!(
            matches!(quote_bare_keys(data), Cow::Borrowed(_)),
            "the pre-pass changed strict JSON"
        );
    }
    let parsed = java_json::from_slice::<Value>(data).ok();
    if let Some(value) = &parsed {
        let text = java_json::to_vec(value, Dialect::Default).expect("a Value serializes");
        let again: Value = java_json::from_slice(&text).unwrap_or_else(|error| {
            panic!(
                "own output does not parse ({error}): {}",
                String::from_utf8_lossy(&text)
            )
        });
        assert!(same(value, &again), "{value:?} came back as {again:?}");
    }
    fields(data, parsed.as_ref());
});

/// `a` and `b` are equal, numbers compared as numbers.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || close(x.as_f64(), y.as_f64()),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((kx, x), (ky, y))| kx == ky && same(x, y))
        }
        _ => a == b,
    }
}

/// Floats within 2 ULP. serde_json's default float parsing is not always
/// correctly rounded (`1e192` written as its 193 digits can come back one ULP
/// off); no body has a float field, and integers are compared exactly.
fn close(x: Option<f64>, y: Option<f64>) -> bool {
    match (x, y) {
        (Some(x), Some(y)) => (x - y).abs() <= 2.0 * f64::EPSILON * x.abs().max(y.abs()),
        _ => false,
    }
}

/// `{"<key>":<fragment>}`.
fn object(key: &str, fragment: &[u8]) -> Vec<u8> {
    let mut out = format!("{{\"{key}\":").into_bytes();
    out.extend_from_slice(fragment);
    out.push(b'}');
    out
}

fn fields(fragment: &[u8], value: Option<&Value>) {
    let counter = DataVersion::from_json(&object("counter", fragment)).map(|v| v.counter);
    expect(value, counter, |v| {
        int(v, i64::MIN.into(), i64::MAX.into()).map(|n| n.unwrap_or(0) as i64)
    });

    let epoch = SyncStateSet::from_json(&object("syncStateSetEpoch", fragment))
        .map(|s| s.sync_state_set_epoch);
    expect(value, epoch, |v| {
        int(v, i32::MIN.into(), i32::MAX.into()).map(|n| n.unwrap_or(0) as i32)
    });

    let perm = TopicConfig::from_json(&object("perm", fragment)).map(|c| c.perm);
    expect(value, perm, |v| {
        int(v, i32::MIN.into(), i32::MAX.into()).map(|n| n.unwrap_or(6) as i32)
    });

    let order = TopicConfig::from_json(&object("order", fragment)).map(|c| c.order);
    expect(value, order, |v| boolean(v).map(|b| b.unwrap_or(false)));

    let name = TopicConfig::from_json(&object("topicName", fragment)).map(|c| c.topic_name);
    expect(value, name, |v| string(v).map(Option::unwrap_or_default));

    let filter =
        TopicConfig::from_json(&object("topicFilterType", fragment)).map(|c| c.topic_filter_type);
    expect(value, filter, |v| Some(filter_type(v)));

    // Containers: no oracle, only no panic.
    let _ = GetBrokerMemberGroupResponseBody::from_json(&object(
        "brokerMemberGroup",
        &object("brokerAddrs", fragment),
    ));
    let _ = TopicQueueMappingInfo::from_json(&object("currIdMap", fragment));
    let _ = SyncStateSet::from_json(&object("syncStateSet", fragment));
    let _ = TopicList::from_json(&object("topicList", fragment));
    let _ = TopicRouteData::from_json(&object("topicQueueMappingByBroker", fragment));
}

/// When the fragment parsed on its own, the field decoded to what `model`
/// says (`None`: the decode must fail).
fn expect<T: PartialEq + std::fmt::Debug, E: std::fmt::Debug>(
    value: Option<&Value>,
    decoded: Result<T, E>,
    model: impl Fn(&Value) -> Option<T>,
) {
    let Some(value) = value else {
        return;
    };
    match (model(value), decoded) {
        (Some(want), Ok(got)) => assert_eq!(got, want, "for {value:?}"),
        (None, Err(_)) => {}
        (want, got) => panic!("for {value:?}: the rules say {want:?}, the decoder {got:?}"),
    }
}

/// An integer field: `Some(None)` is null (the Java default), `None` an error.
fn int(value: &Value, min: i128, max: i128) -> Option<Option<i128>> {
    let n: i128 = match value {
        Value::Null => return Some(None),
        Value::Bool(b) => i128::from(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i128::from(i)
            } else if let Some(u) = n.as_u64() {
                i128::from(u)
            } else {
                // fastjson narrows a decimal by truncation.
                let t = n.as_f64()?.trunc();
                if !(t.is_finite() && t.abs() < 9.2e18) {
                    return None;
                }
                t as i128
            }
        }
        Value::String(s) if s.is_empty() || s == "null" || s == "NULL" => return Some(None),
        // castToInt/castToLong drop commas; castToInt also a trailing `.0…`.
        Value::String(s) => {
            let s = s.replace(',', "");
            let s = match s.rfind('.') {
                Some(dot)
                    if max <= i128::from(i32::MAX) && s[dot + 1..].bytes().all(|b| b == b'0') =>
                {
                    &s[..dot]
                }
                _ => &s[..],
            };
            s.parse::<i128>().ok()?
        }
        _ => return None,
    };
    (min..=max).contains(&n).then_some(Some(n))
}

/// A boolean field (`TypeUtils.castToBoolean`).
fn boolean(value: &Value) -> Option<Option<bool>> {
    match value {
        Value::Null => Some(None),
        Value::Bool(b) => Some(Some(*b)),
        // A decimal is true iff it truncates to 1; an int literal must fit an int.
        Value::Number(n) if n.is_f64() => {
            let t = n.as_f64()?.trunc();
            (t >= f64::from(i32::MIN) && t <= f64::from(i32::MAX)).then_some(Some(t == 1.0))
        }
        Value::Number(n) => {
            let v = n.as_i64().map(i128::from).or(n.as_u64().map(i128::from))?;
            i32::try_from(v).ok().map(|v| Some(v == 1))
        }
        Value::String(s) => match s.as_str() {
            "" | "null" | "NULL" => Some(None),
            "1" | "T" => Some(Some(true)),
            "0" | "N" => Some(Some(false)),
            _ if s.eq_ignore_ascii_case("true") || s.eq_ignore_ascii_case("y") => Some(Some(true)),
            _ if s.eq_ignore_ascii_case("false") || s.eq_ignore_ascii_case("f") => {
                Some(Some(false))
            }
            _ => None,
        },
        _ => None,
    }
}

/// A string field: scalars as their text (a decimal keeps its `.0`, as Java's
/// BigDecimal text), objects and arrays as their compact JSON text, null as absent.
fn string(value: &Value) -> Option<Option<String>> {
    match value {
        Value::Null => Some(None),
        Value::String(s) => Some(Some(s.clone())),
        Value::Bool(b) => Some(Some(b.to_string())),
        Value::Number(n) => Some(Some(match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (_, Some(u), _) => u.to_string(),
            (_, _, f) => format!("{:?}", f?),
        })),
        Value::Array(_) | Value::Object(_) => Some(Some(value.to_string())),
    }
}

/// The enum: by name or ordinal; anything else is the default.
fn filter_type(value: &Value) -> TopicFilterType {
    match value {
        Value::String(s) if s == "MULTI_TAG" => TopicFilterType::MultiTag,
        Value::Number(n) if n.as_i64() == Some(1) => TopicFilterType::MultiTag,
        _ => TopicFilterType::SingleTag,
    }
}
