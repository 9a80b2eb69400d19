//! Bodies captured from real Java (fastjson 1.2.83) in `tests/vectors/`.
//!
//! Each vector is `<name>.json` (or `<name>.bin` for the compressed
//! REGISTER_BROKER body) with a sibling `<name>.meta`:
//!
//! ```text
//! java 5.3.3
//! TopicRouteData standard
//! ```
//!
//! Every vector must decode as its type. A JSON vector is then re-emitted in
//! its dialect (and, for REGISTER_BROKER bodies and DataVersion, in the
//! [`BodyFlavor`] of its release): byte-for-byte equal when no map or set in it
//! has more than one entry or the dialect is the standard one (which sorts
//! maps; otherwise Java's hash order and our sorted order legitimately
//! differ), else equal after parsing again. A compressed
//! vector is re-encoded and must decode to the same value, and inflate to the
//! same bytes when it has at most one topic and one mapping.
//!
//! Two known differences are allowed for:
//!
//! * 4.x `BrokerData` has no `enableActingMaster`; Waymark always writes it
//!   (it emulates a 5.3.3 NameServer), so it is removed from our output before
//!   comparing 4.x route and cluster vectors.
//! * Releases after 5.3.x (the 5.5.1 vectors) serialize with fastjson2, whose
//!   escaping differs from fastjson 1.2.83 (lowercase `\u001f`, raw
//!   U+007F–U+009F and U+2028/2029; the standard dialect no longer escapes `/`
//!   or non-ASCII). Waymark writes fastjson 1.2.83's dialects, so
//!   those vectors are byte-compared only when their text has nothing either
//!   library escapes differently.

use std::fmt::Debug;
use std::io::Read;
use std::path::{Path, PathBuf};

use rmq_protocol::version::{parse_release, release_ordinal, V5_0_0};
use rmq_protocol::*;

/// Properties whose JSON objects are Java maps and arrays that are Java sets
/// (their order is hash order).
const MAPS: &[&str] = &[
    "brokerAddrs",
    "filterServerTable",
    "topicQueueMappingByBroker",
    "currIdMap",
    "topicConfigTable",
    "attributes",
    "topicQueueMappingInfoMap",
    "table",
    "configTable",
    "brokerAddrTable",
    "clusterAddrTable",
    "topicList",
];

/// True if every map/set has at most one entry, and nothing is in the
/// mapping-detail map (which Waymark always writes as `{}`).
fn byte_comparable(value: &serde_json::Value, parent: Option<&str>) -> bool {
    use serde_json::Value;
    let is_map = parent.is_some_and(|p| MAPS.contains(&p));
    match value {
        Value::Object(map) => {
            if parent == Some("topicQueueMappingDetailMap") && !map.is_empty() {
                return false;
            }
            if is_map && map.len() > 1 {
                return false;
            }
            map.iter().all(|(k, v)| {
                // Values of a map are beans or inner maps (configTable, clusterAddrTable).
                let next = if is_map && matches!(parent, Some("configTable" | "clusterAddrTable")) {
                    parent
                } else if is_map {
                    None
                } else {
                    Some(k.as_str())
                };
                byte_comparable(v, next)
            })
        }
        Value::Array(items) => {
            (!is_map || items.len() <= 1) && items.iter().all(|v| byte_comparable(v, None))
        }
        _ => true,
    }
}

struct Vector {
    name: String,
    version: i32,
    type_name: String,
    form: String,
    data: Vec<u8>,
}

/// Every vector of `dir`. A missing or unreadable directory fails the test:
/// a test that checks nothing must not pass.
fn load(dir: &Path) -> Vec<Vector> {
    let entries = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("vector directory {}: {error}", dir.display()));
    let mut metas: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "meta"))
        .collect();
    metas.sort();
    metas
        .into_iter()
        .map(|meta| {
            let name = meta.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&meta).unwrap();
            let mut lines = text.lines();
            let java = lines.next().unwrap_or_default();
            let release = java
                .strip_prefix("java ")
                .unwrap_or_else(|| panic!("{name}: first line {java:?}"));
            let version = parse_release(release)
                .unwrap_or_else(|| panic!("{name}: unknown release {release:?}"));
            let kind = lines
                .next()
                .unwrap_or_else(|| panic!("{name}: no type line"));
            let (type_name, form) = kind
                .trim()
                .split_once(' ')
                .unwrap_or((kind.trim(), "default"));
            let data_path = ["json", "bin"]
                .iter()
                .map(|ext| meta.with_extension(ext))
                .find(|p| p.exists())
                .unwrap_or_else(|| panic!("{name}: no .json or .bin next to the .meta"));
            Vector {
                name,
                version,
                type_name: type_name.to_owned(),
                form: form.trim().to_owned(),
                data: std::fs::read(data_path).unwrap(),
            }
        })
        .collect()
}

fn dialect(v: &Vector) -> Dialect {
    match v.form.as_str() {
        "default" | "json" => Dialect::Default,
        "standard" => Dialect::Standard,
        other => panic!("{}: unknown dialect {other:?}", v.name),
    }
}

/// Decodes, re-emits with `emit` and compares as described in the module doc.
/// Returns whether the bytes were compared.
fn check_json<T: JavaJson + PartialEq + Debug>(v: &Vector, emit: impl Fn(&T) -> Vec<u8>) -> bool {
    let value = T::from_json(&v.data).unwrap_or_else(|e| panic!("{}: {e}", v.name));
    let ours = emit(&value);
    let again = T::from_json(&ours)
        .unwrap_or_else(|e| panic!("{}: our output does not parse: {e}", v.name));
    assert_eq!(again, value, "{}: value changed on re-emit", v.name);
    let ours = without_5x_only_properties(v, ours);
    let tree: serde_json::Value = serde_json::from_slice(&json_text(&v.data)).unwrap();
    // The standard dialect sorts every map (MapSortField), so only its sets
    // could differ, and TopicRouteData (its only user) has none.
    let ordered = dialect(v) == Dialect::Standard || byte_comparable(&tree, None);
    let comparable = ordered && (fastjson1(v) || escape_neutral(&v.data));
    if comparable {
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&v.data),
            "{}: bytes differ",
            v.name
        );
    }
    comparable
}

/// Releases up to 5.3.x use fastjson 1.2.83 (assumed up to 5.4.0, the first
/// release after 5.3.3, the newest release vectored here that ships 1.2.83).
fn fastjson1(v: &Vector) -> bool {
    v.version < release_ordinal(5, 4, 0).unwrap()
}

/// Printable ASCII without `/` and without escapes: written identically by
/// fastjson 1.2.83 and fastjson2 in both dialects.
fn escape_neutral(data: &[u8]) -> bool {
    data.iter()
        .all(|&b| (0x20..0x7f).contains(&b) && b != b'/' && b != b'\\')
}

/// Drops what only 5.x Java writes from our output for a 4.x vector.
fn without_5x_only_properties(v: &Vector, ours: Vec<u8>) -> Vec<u8> {
    if v.version >= V5_0_0 {
        return ours;
    }
    String::from_utf8(ours)
        .unwrap()
        .replace(r#","enableActingMaster":false"#, "")
        .into_bytes()
}

fn json_text(data: &[u8]) -> Vec<u8> {
    java_json::quote_bare_keys(data).into_owned()
}

fn inflate(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(data)
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn check_compressed(v: &Vector) -> bool {
    let body = RegisterBrokerBody::from_compressed(&v.data, v.version)
        .unwrap_or_else(|e| panic!("{}: {e}", v.name));
    let ours = body.to_compressed(BodyFlavor::for_version(v.version));
    assert_eq!(
        RegisterBrokerBody::from_compressed(&ours, v.version).unwrap(),
        body,
        "{}",
        v.name
    );
    let wrapper = &body.topic_config_serialize_wrapper;
    let comparable =
        wrapper.topic_config_table.len() <= 1 && wrapper.topic_queue_mapping_info_map.len() <= 1;
    if comparable {
        assert_eq!(
            inflate(&ours),
            inflate(&v.data),
            "{}: inflated bytes differ",
            v.name
        );
    }
    comparable
}

/// Returns whether the bytes were compared.
fn check(v: &Vector) -> bool {
    let d = dialect_or_default(v);
    let flavor = BodyFlavor::for_version(v.version);
    match (v.type_name.as_str(), v.form.as_str()) {
        ("RegisterBrokerBody", "compressed") => check_compressed(v),
        ("RegisterBrokerBody", _) => {
            check_json::<RegisterBrokerBody>(v, |b| b.to_json_flavor(flavor))
        }
        ("TopicConfigSerializeWrapper" | "TopicConfigAndMappingSerializeWrapper", _) => {
            check_json::<TopicConfigSerializeWrapper>(v, |w| w.to_json_flavor(flavor))
        }
        ("TopicRouteData", _) => check_json::<TopicRouteData>(v, |x| x.to_json(d)),
        ("TopicQueueMappingInfo", _) => check_json::<TopicQueueMappingInfo>(v, |x| x.to_json(d)),
        ("TopicConfig", _) => check_json::<TopicConfig>(v, |x| x.to_json(d)),
        ("DataVersion", _) => check_json::<DataVersion>(v, |x| x.to_json_flavor(flavor)),
        ("ClusterInfo", _) => check_json::<ClusterInfo>(v, |x| x.to_json(d)),
        ("TopicList", _) => check_json::<TopicList>(v, |x| x.to_json(d)),
        ("KVTable", _) => check_json::<KvTable>(v, |x| x.to_json(d)),
        ("KVConfigSerializeWrapper", _) => {
            check_json::<KvConfigSerializeWrapper>(v, |x| x.to_json(d))
        }
        ("GetBrokerMemberGroupResponseBody", _) => {
            check_json::<GetBrokerMemberGroupResponseBody>(v, |x| x.to_json(d))
        }
        (other, _) => panic!("{}: no decoder for body type {other:?}", v.name),
    }
}

fn dialect_or_default(v: &Vector) -> Dialect {
    if v.form == "compressed" {
        Dialect::Default
    } else {
        dialect(v)
    }
}

#[test]
fn java_vectors_decode_and_re_emit() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    let vectors = load(&dir);
    eprintln!("java body vectors in {}: {}", dir.display(), vectors.len());
    assert!(
        vectors.len() >= 50,
        "only {} body vectors in {}",
        vectors.len(),
        dir.display()
    );
    let mut exact = 0;
    let mut failures = Vec::new();
    for v in &vectors {
        match std::panic::catch_unwind(|| check(v)) {
            Ok(compared) => exact += usize::from(compared),
            Err(e) => failures.push(
                e.downcast_ref::<String>()
                    .cloned()
                    .unwrap_or_else(|| v.name.clone()),
            ),
        }
    }
    eprintln!(
        "byte-for-byte: {exact}, value-only: {}",
        vectors.len() - exact - failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} vectors failed:\n{}",
        failures.len(),
        vectors.len(),
        failures.join("\n")
    );
}

#[test]
fn byte_comparability_rule() {
    let single: serde_json::Value =
        serde_json::from_str(r#"{"brokerDatas":[{"brokerAddrs":{"0":"a"}},{"brokerAddrs":{"1":"b"}}],"topicList":["x"]}"#)
            .unwrap();
    assert!(byte_comparable(&single, None));
    let multi: serde_json::Value =
        serde_json::from_str(r#"{"brokerDatas":[{"brokerAddrs":{"0":"a","1":"b"}}]}"#).unwrap();
    assert!(!byte_comparable(&multi, None));
    let set: serde_json::Value =
        serde_json::from_str(r#"{"clusterAddrTable":{"c":["a","b"]}}"#).unwrap();
    assert!(!byte_comparable(&set, None));
    let kv: serde_json::Value =
        serde_json::from_str(r#"{"configTable":{"ns":{"a":"1","b":"2"}}}"#).unwrap();
    assert!(!byte_comparable(&kv, None));
}
