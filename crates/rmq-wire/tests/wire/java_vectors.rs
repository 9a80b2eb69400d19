//! Frames captured from the real Java implementation, in `tests/vectors/*.hex`
//! (format in `tests/vectors/README.md`; the interop harness writes them).
//!
//! Every valid vector must decode and re-encode in its own serialize type:
//! byte-identical when it has at most one ext field, equal after a second
//! decode otherwise (Java writes ext fields in `HashMap` order). A vector whose
//! name contains `invalid` must be rejected, without panicking.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common;
use bytes::Bytes;
use rmq_wire::frame::{self, FrameStatus};

/// One `.hex` file: where it came from and its bytes.
struct Vector {
    name: String,
    provenance: String,
    bytes: Bytes,
}

// ---------------------------------------------------------------------------
// Helper for Java-captured vectors: finds and parses `tests/vectors/*.hex`.
// Keep in step with tests/vectors/README.md.
// ---------------------------------------------------------------------------

fn vector_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("vectors")
}

/// All vectors, sorted by name. A missing or unreadable directory fails the
/// test: a test that checks nothing must not pass.
fn load_vectors(dir: &Path) -> Vec<Vector> {
    let entries = fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("vector directory {}: {error}", dir.display()));
    let mut paths: Vec<PathBuf> = entries
        .map(|entry| entry.expect("readable vector directory").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "hex"))
        .collect();
    paths.sort();
    paths.iter().map(|path| parse_vector(path)).collect()
}

/// Parses one file: a `# java <version> <description>` line, more `#`
/// comment lines anywhere, and whitespace-separated hex.
fn parse_vector(path: &Path) -> Vector {
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{name}: {e}"));
    let provenance = text.lines().next().unwrap_or_default().trim().to_owned();
    assert!(
        provenance.starts_with("# java "),
        "{name}: the first line must be `# java <version> <description>`, not {provenance:?}"
    );
    let hex: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join(" ");
    Vector {
        name,
        provenance,
        bytes: common::hex(&hex),
    }
}

// ---------------------------------------------------------------------------

fn check_valid(vector: &Vector) {
    let Vector {
        name,
        provenance,
        bytes,
    } = vector;
    assert_eq!(
        frame::check(bytes),
        Ok(FrameStatus::Complete { len: bytes.len() }),
        "{name} ({provenance}): the file must hold exactly one whole frame"
    );
    let decoded = frame::decode(bytes.clone())
        .unwrap_or_else(|e| panic!("{name} ({provenance}) does not decode: {e}"));
    let encoded = frame::encode_to_bytes(&decoded);
    let keys = decoded.ext_fields.as_ref().map_or(0, |ext| ext.len());
    if keys <= 1 && escapes_as_fastjson1(provenance, bytes) {
        assert_eq!(
            encoded.as_ref(),
            bytes.as_ref(),
            "{name} ({provenance}): re-encoding differs\n java: {:?}\n ours: {:?}",
            String::from_utf8_lossy(bytes),
            String::from_utf8_lossy(&encoded),
        );
    }
    let again = frame::decode(encoded).unwrap_or_else(|e| panic!("{name}: re-decode: {e}"));
    assert_eq!(
        again, decoded,
        "{name} ({provenance}): round trip changed the command"
    );
}

/// Waymark writes JSON headers as fastjson 1.2.83 does (RocketMQ up to 5.3).
/// RocketMQ 5.4 and later use fastjson2, which escapes control characters
/// with lowercase hex and leaves U+007F–U+009F and U+2028/2029 raw; both read
/// the other's text. Such vectors are compared after decoding only.
fn escapes_as_fastjson1(provenance: &str, frame: &[u8]) -> bool {
    let release = provenance.split_whitespace().nth(2).unwrap_or_default();
    let mut parts = release.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    let fastjson2 = (major, minor) >= (5, 4);
    if !fastjson2 || frame.get(4) != Some(&0) {
        return true;
    }
    let text = String::from_utf8_lossy(frame);
    !text.contains("\\u")
        && !text
            .chars()
            .any(|c| matches!(c, '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}'))
}

fn check_invalid(vector: &Vector) {
    let outcome = frame::decode(vector.bytes.clone());
    assert!(
        outcome.is_err(),
        "{} ({}) decoded: {outcome:?}",
        vector.name,
        vector.provenance
    );
}

#[test]
fn java_captured_vectors_decode_and_reencode() {
    let vectors = load_vectors(&vector_dir());
    // Every request and response code the catalogue covers, in three
    // releases and two header forms: hundreds, never a handful.
    assert!(
        vectors.len() >= 100,
        "only {} vectors in {}",
        vectors.len(),
        vector_dir().display()
    );
    for vector in &vectors {
        if vector.name.contains("invalid") {
            check_invalid(vector);
        } else {
            check_valid(vector);
        }
    }
    let invalid = vectors
        .iter()
        .filter(|v| v.name.contains("invalid"))
        .count();
    eprintln!(
        "java_vectors: checked {} vectors ({} valid, {invalid} invalid) in {}",
        vectors.len(),
        vectors.len() - invalid,
        vector_dir().display()
    );
}

#[test]
fn the_vector_parser_reads_the_documented_format() {
    let dir = std::env::temp_dir().join(format!("rmq-wire-vectors-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join("105_get_routeinfo_rocketmq_001.hex");
    let text = "# java 5.3.3 GET_ROUTEINFO_BY_TOPIC request\n# comment\n00 00 00 2d 01 00 00 29 00 69 00 01 df 00 00 00\n\
                01000000 00000000 0000000014 00 05 74\n  6f 70 69 63 00 00 00 09 54 6f 70 69 63 54 65 73\n74\n";
    fs::write(&file, text).unwrap();
    fs::write(dir.join("ignored.json"), "{}").unwrap();
    let vectors = load_vectors(&dir);
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(vectors.len(), 1);
    assert_eq!(
        vectors[0].provenance,
        "# java 5.3.3 GET_ROUTEINFO_BY_TOPIC request"
    );
    assert_eq!(
        vectors[0].bytes,
        common::hex(common::ROUTE_REQUEST_ROCKETMQ)
    );
    check_valid(&vectors[0]);
    let missing = std::panic::catch_unwind(|| load_vectors(&dir));
    assert!(missing.is_err(), "a missing directory fails the test");
}
