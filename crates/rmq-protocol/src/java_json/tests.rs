use std::collections::BTreeMap;

use rmq_wire::lenient;
use serde::{Deserialize, Serialize};

use super::*;

fn text<T: Serialize + ?Sized>(value: &T, dialect: Dialect) -> String {
    String::from_utf8(to_vec(value, dialect).unwrap()).unwrap()
}

#[test]
fn escaping_example_in_both_dialects() {
    let s = "a/bé中\"\\\n\u{1}\u{7f}\u{2028}";
    assert_eq!(
        text(s, Dialect::Default),
        r#""a/bé中\"\\\n\u0001\u007F\u2028""#
    );
    assert_eq!(
        text(s, Dialect::Standard),
        r#""a\/b\u00E9\u4E2D\"\\\n\u0001\u007F\u2028""#
    );
}

#[test]
fn every_escaping_class_in_both_dialects() {
    let s = "\u{8}\t\n\u{c}\r\u{1b}\u{9f}\u{a0}\u{2029}\u{1F600}";
    assert_eq!(
        text(s, Dialect::Default),
        "\"\\b\\t\\n\\f\\r\\u001B\\u009F\u{a0}\\u2029\u{1F600}\""
    );
    assert_eq!(
        text(s, Dialect::Standard),
        r#""\b\t\n\f\r\u001B\u009F\u00A0\u2029\uD83D\uDE00""#
    );
    for dialect in [Dialect::Default, Dialect::Standard] {
        assert_eq!(
            from_slice::<String>(text(s, dialect).as_bytes()).unwrap(),
            s
        );
    }
}

#[test]
fn integer_keys_unquoted_only_in_default_dialect() {
    let map: BTreeMap<i64, BTreeMap<String, i32>> = [
        (-1, [("".to_string(), 1), ("k/é".to_string(), 2)].into()),
        (7, BTreeMap::new()),
    ]
    .into();
    assert_eq!(text(&map, Dialect::Default), r#"{-1:{"":1,"k/é":2},7:{}}"#);
    assert_eq!(
        text(&map, Dialect::Standard),
        r#"{"-1":{"":1,"k\/\u00E9":2},"7":{}}"#
    );
    for dialect in [Dialect::Default, Dialect::Standard] {
        let back: BTreeMap<i64, BTreeMap<String, i32>> =
            from_slice(text(&map, dialect).as_bytes()).unwrap();
        assert_eq!(back, map);
    }
}

#[test]
fn big_longs_as_strings_only_in_standard_values() {
    let map: BTreeMap<i64, i64> = [(i64::MAX, i64::MIN), (1, 9_007_199_254_740_991)].into();
    assert_eq!(
        text(&map, Dialect::Standard),
        r#"{"1":9007199254740991,"9223372036854775807":"-9223372036854775808"}"#
    );
    assert_eq!(
        text(&map, Dialect::Default),
        r#"{1:9007199254740991,9223372036854775807:-9223372036854775808}"#
    );
    assert_eq!(
        text(&u64::MAX, Dialect::Standard),
        r#""18446744073709551615""#
    );
}

/// Missing properties come from the container's `Default` (the Java
/// initializers), nulls from the field helper.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Bean {
    #[serde(deserialize_with = "lenient::value")]
    flag: bool,
    #[serde(deserialize_with = "lenient::int_or::<16, _>")]
    nums: i32,
    #[serde(
        deserialize_with = "lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    name: Option<String>,
    #[serde(deserialize_with = "lenient::value")]
    list: Vec<i64>,
}

impl Default for Bean {
    fn default() -> Self {
        Bean {
            flag: false,
            nums: 16,
            name: None,
            list: vec![],
        }
    }
}

#[test]
fn fastjson_coercions() {
    let bean: Bean =
        from_slice(br#"{"flag":"true","nums":"4","name":5,"list":["1",2,null],"extra":{"a":[]}}"#)
            .unwrap();
    assert_eq!(
        bean,
        Bean {
            flag: true,
            nums: 4,
            name: Some("5".into()),
            list: vec![1, 2]
        }
    );
    let bean: Bean =
        from_slice(br#"{"flag":1,"nums":null,"name":null,"list":{"$ref":"$"}}"#).unwrap();
    assert_eq!(
        bean,
        Bean {
            flag: true,
            nums: 16,
            name: None,
            list: vec![]
        }
    );
    let bean: Bean = from_slice(br#"{"nums":4.9,"flag":"N"}"#).unwrap();
    assert_eq!((bean.nums, bean.flag), (4, false));
    assert_eq!(from_slice::<Bean>(b"{}").unwrap().nums, 16);
    for bad in [
        &br#"{"nums":"x"}"#[..],
        br#"{"nums":4294967296}"#,
        br#"{"flag":"maybe"}"#,
        b"{",
        b"",
        b"\xff",
    ] {
        assert!(
            from_slice::<Bean>(bad).is_err(),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
}

#[test]
fn ref_objects_read_as_empty_maps() {
    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    struct Holder {
        #[serde(deserialize_with = "lenient::value")]
        m: BTreeMap<i64, String>,
    }
    let h: Holder = from_slice(br#"{"m":{"$ref":"$.a.b"}}"#).unwrap();
    assert!(h.m.is_empty());
    let h: Holder = from_slice(br#"{"m":{0:"a",1:null}}"#).unwrap();
    assert_eq!(h.m, [(0, "a".to_string())].into());
}
