//! Each coercion against what fastjson 1.2.83 does. The Java column was
//! observed with `JSON.parseObject(text, Bean.class)` on fastjson-1.2.83.jar,
//! the value standing alone in the object and between two other properties
//! (same outcome both ways): `Some(x)` is the field's value, `None` the Java
//! default (null), `Err` a `JSONException`.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use super::*;

/// Reads `json` as one `T`, as a field would.
fn read<T: Lenient>(json: &str) -> Result<Option<T>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(json);
    let value = T::lenient(&mut de)?;
    de.end()?;
    Ok(value)
}

/// Checks rows of `(json, Ok(Some(value)) | Ok(None) | Err(()))`.
fn check<T: Lenient + PartialEq + fmt::Debug>(rows: &[(&str, Result<Option<T>, ()>)]) {
    for (json, want) in rows {
        let got = read::<T>(json).map_err(|_| ());
        assert_eq!(&got, want, "{json}");
    }
}

#[test]
fn int_as_cast_to_int() {
    check::<i32>(&[
        ("12", Ok(Some(12))),
        ("-2147483648", Ok(Some(i32::MIN))),
        ("2147483648", Err(())),
        (r#""12""#, Ok(Some(12))),
        (r#""+5""#, Ok(Some(5))),
        (r#""-7""#, Ok(Some(-7))),
        (r#""2147483648""#, Err(())),
        (r#"" 5""#, Err(())),
        (r#""0x10""#, Err(())),
        (r#""12.5""#, Err(())),
        (r#""abc""#, Err(())),
        // Commas are removed, a trailing `.0…` is stripped.
        (r#""1,000""#, Ok(Some(1000))),
        (r#""12.0""#, Ok(Some(12))),
        (r#""12.""#, Ok(Some(12))),
        (r#""1.0.0""#, Err(())),
        (r#"".""#, Err(())),
        // The null strings are exact: "Null" is an error in Java.
        (r#""""#, Ok(None)),
        (r#""null""#, Ok(None)),
        (r#""NULL""#, Ok(None)),
        (r#""Null""#, Err(())),
        (r#""nUll""#, Err(())),
        ("null", Ok(None)),
        ("true", Ok(Some(1))),
        ("false", Ok(Some(0))),
        // Decimals truncate toward zero.
        ("12.9", Ok(Some(12))),
        ("-12.9", Ok(Some(-12))),
        ("1e3", Ok(Some(1000))),
        ("-0", Ok(Some(0))),
        (r#"{"a":1}"#, Err(())),
        ("[1]", Err(())),
    ]);
}

#[test]
fn long_as_cast_to_long() {
    check::<i64>(&[
        ("2147483648", Ok(Some(2_147_483_648))),
        ("9223372036854775807", Ok(Some(i64::MAX))),
        ("9223372036854775808", Err(())),
        (r#""2147483648""#, Ok(Some(2_147_483_648))),
        (r#""1,000""#, Ok(Some(1000))),
        // castToLong does not strip a trailing `.0`, unlike castToInt.
        (r#""12.0""#, Err(())),
        (r#""12.""#, Err(())),
        (r#""""#, Ok(None)),
        (r#""NULL""#, Ok(None)),
        (r#""Null""#, Err(())),
        ("true", Ok(Some(1))),
        ("4294967296.5", Ok(Some(4_294_967_296))),
        ("-12.9", Ok(Some(-12))),
        ("[1]", Err(())),
    ]);
}

/// Java keeps the low bits of a decimal whose integer part overflows the
/// field (`BigDecimal.intValue()`); such a value is refused here instead.
#[test]
fn overflowing_decimals_are_refused_where_java_wraps() {
    // Java: 0 and -1981284352.
    check::<i32>(&[("4294967296.5", Err(())), ("1e19", Err(()))]);
    // Java: -8446744073709551616.
    check::<i64>(&[("1e19", Err(()))]);
}

#[test]
fn boolean_as_cast_to_boolean() {
    check::<bool>(&[
        ("true", Ok(Some(true))),
        ("false", Ok(Some(false))),
        (r#""true""#, Ok(Some(true))),
        (r#""TRUE""#, Ok(Some(true))),
        (r#""FaLsE""#, Ok(Some(false))),
        (r#""1""#, Ok(Some(true))),
        (r#""0""#, Ok(Some(false))),
        (r#""2""#, Err(())),
        (r#""Y""#, Ok(Some(true))),
        (r#""y""#, Ok(Some(true))),
        (r#""T""#, Ok(Some(true))),
        (r#""t""#, Err(())),
        (r#""F""#, Ok(Some(false))),
        (r#""f""#, Ok(Some(false))),
        (r#""N""#, Ok(Some(false))),
        (r#""n""#, Err(())),
        (r#""yes""#, Err(())),
        (r#""""#, Ok(None)),
        (r#""null""#, Ok(None)),
        (r#""Null""#, Err(())),
        ("null", Ok(None)),
        // An integer is true iff it is 1; it is read as an int first.
        ("1", Ok(Some(true))),
        ("0", Ok(Some(false))),
        ("2", Ok(Some(false))),
        ("-1", Ok(Some(false))),
        ("4294967297", Err(())),
        // A decimal is true iff it truncates to 1.
        ("1.0", Ok(Some(true))),
        ("1.5", Ok(Some(true))),
        ("0.9", Ok(Some(false))),
        ("{}", Err(())),
    ]);
}

#[test]
fn string_from_any_value() {
    check::<String>(&[
        (r#""x""#, Ok(Some("x".into()))),
        (r#""a\/b\u00E9""#, Ok(Some("a/bé".into()))),
        ("5", Ok(Some("5".into()))),
        ("-3", Ok(Some("-3".into()))),
        (
            "18446744073709551615",
            Ok(Some("18446744073709551615".into())),
        ),
        ("0.618", Ok(Some("0.618".into()))),
        // Java's BigDecimal text keeps the `.0`.
        ("1.0", Ok(Some("1.0".into()))),
        ("true", Ok(Some("true".into()))),
        ("false", Ok(Some("false".into()))),
        // Objects and arrays as their compact JSON text.
        (r#"{"b":1,"a":2}"#, Ok(Some(r#"{"a":2,"b":1}"#.into()))),
        (r#"[1,"x"]"#, Ok(Some(r#"[1,"x"]"#.into()))),
        (r#"{"a":[1,2]}"#, Ok(Some(r#"{"a":[1,2]}"#.into()))),
        ("null", Ok(None)),
    ]);
}

/// Java writes a decimal as the `BigDecimal` of its literal; only the `f64`
/// reaches this module, so the literal's scale and exponent form are lost.
#[test]
fn decimal_text_is_the_f64s_where_java_keeps_the_literal() {
    check::<String>(&[
        // Java: "1.50", "1E+20", "1.5E-7".
        ("1.50", Ok(Some("1.5".into()))),
        ("1e20", Ok(Some("1e20".into()))),
        ("1.5e-7", Ok(Some("1.5e-7".into()))),
    ]);
}

#[test]
fn maps_drop_nulls_and_keep_the_last_value() {
    // Java: {k=null}, which reads like an absent key.
    check::<BTreeMap<String, String>>(&[
        (r#"{"k":"a","k":null}"#, Ok(Some(BTreeMap::new()))),
        (
            r#"{"k":"a","k":"b","j":null}"#,
            Ok(Some([("k".into(), "b".into())].into())),
        ),
        ("null", Ok(None)),
        ("[]", Err(())),
        (r#""x""#, Err(())),
    ]);
    check::<BTreeMap<i64, String>>(&[
        (
            r#"{"0":"a","1":null,"-1":2}"#,
            Ok(Some([(0, "a".into()), (-1, "2".into())].into())),
        ),
        (r#"{"x":"a"}"#, Err(())),
    ]);
}

#[test]
fn map_values_are_coerced_like_fields() {
    let map = read::<BTreeMap<String, String>>(r#"{"a":1,"b":true,"c":1.0,"d":{"x":1}}"#)
        .unwrap()
        .unwrap();
    let want: BTreeMap<String, String> =
        [("a", "1"), ("b", "true"), ("c", "1.0"), ("d", r#"{"x":1}"#)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
    assert_eq!(map, want);
    let ints = read::<BTreeMap<i32, i64>>(r#"{"1":"7","2":true,"3":""}"#)
        .unwrap()
        .unwrap();
    assert_eq!(ints, [(1, 7), (2, 1)].into());
}

/// `$ref` in a body's map is the reference marker; in Java's
/// `Map<String, String>` (the header's `extFields`) it is a key like any other.
#[test]
fn ref_is_a_marker_in_body_maps_and_a_key_in_string_maps() {
    check::<BTreeMap<i64, String>>(&[
        (r#"{"$ref":"$.a.b"}"#, Ok(Some(BTreeMap::new()))),
        (
            r#"{"0":"a","$ref":"$"}"#,
            Ok(Some([(0, "a".into())].into())),
        ),
    ]);
    check::<BTreeMap<String, String>>(&[(r#"{"$ref":"$"}"#, Ok(Some(BTreeMap::new())))]);
    let read_string_map = |json: &str| {
        let mut de = serde_json::Deserializer::from_str(json);
        string_map(&mut de)
    };
    assert_eq!(
        read_string_map(r#"{"a":"1","$ref":"x"}"#).unwrap(),
        Some([("a".into(), "1".into()), ("$ref".into(), "x".into())].into())
    );
    assert_eq!(read_string_map("null").unwrap(), None);
    assert!(read_string_map("[]").is_err());
}

#[test]
fn lists_and_sets_coerce_elements_and_drop_nulls() {
    // Java keeps the nulls: [a, null, 1, 1.0, true, {"x":1}] and [null, 1, 2, 3].
    check::<Vec<String>>(&[
        (
            r#"["a",null,1,1.0,true,{"x":1}]"#,
            Ok(Some(
                ["a", "1", "1.0", "true", r#"{"x":1}"#]
                    .map(String::from)
                    .to_vec(),
            )),
        ),
        (r#"{"$ref":"$"}"#, Ok(Some(vec![]))),
        ("null", Ok(None)),
    ]);
    check::<BTreeSet<i64>>(&[(r#"[1,"2",null,3.5]"#, Ok(Some([1, 2, 3].into())))]);
}

/// Missing properties come from the container's `Default` (the Java
/// initializers), nulls from the field helper.
#[derive(Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Bean {
    #[serde(deserialize_with = "value")]
    flag: bool,
    #[serde(deserialize_with = "int_or::<16, _>")]
    nums: i32,
    #[serde(deserialize_with = "opt")]
    name: Option<String>,
    #[serde(deserialize_with = "value")]
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

crate::lenient_bean!(Bean);

#[test]
fn field_helpers_and_beans() {
    let bean: Bean = serde_json::from_str(
        r#"{"flag":"true","nums":"4","name":5,"list":["1",2,null],"extra":{"a":[]}}"#,
    )
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
    let bean: Bean = serde_json::from_str(r#"{"nums":null,"name":null}"#).unwrap();
    assert_eq!((bean.nums, bean.name), (16, None));
    check::<Vec<Bean>>(&[(
        r#"[{"nums":1},null,{"$ref":"$[0]"}]"#,
        Ok(Some(vec![
            Bean {
                nums: 1,
                ..Bean::default()
            },
            Bean::default(),
        ])),
    )]);
}
