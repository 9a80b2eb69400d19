//! The JSON header's fast path: a byte scanner for the plain shape that Java,
//! Go and Waymark peers write, which is nearly every header that arrives.
//!
//! The general decoder ([`super::json`]) goes through serde_json and
//! fastjson's coercions, and a profile of a controller node under broker
//! heartbeats put 60 % of the node's instructions there: a UTF-8 check per
//! string, a visitor call per value, a sorted-map insert per ext field. A
//! header as peers write it needs none of that machinery, so this scanner reads
//! it directly and answers `None` for anything outside the plain shape, which
//! then goes to the general decoder. It never decides an error and never reads
//! a header differently: where it answers, the general decoder gives the same
//! command (the tests below check that on generated headers, plain and not).
//!
//! The plain shape: one object; keys and string values without escapes or
//! control characters; `code`, `flag`, `opaque` and `version` as JSON integers
//! that fit an `i32`; `language` as a name; `remark` as a string; `extFields`
//! as an object of string values; other keys with a string, integer or boolean
//! value; no key of the header twice; JSON whitespace anywhere between tokens.

use std::ops::{Deref, DerefMut};

use super::cursor::Cursor;
use crate::code::LanguageCode;
use crate::command::RemotingCommand;
use crate::ext_fields::ExtFields;

/// Decodes `bytes` if it is a plain header; `None` sends it to the general decoder.
pub(super) fn decode(bytes: &[u8]) -> Option<RemotingCommand> {
    // One UTF-8 check of the whole header costs less than one per string;
    // every string then is a slice of it between two ASCII quotes.
    let text = std::str::from_utf8(bytes).ok()?;
    let mut scan = Scanner {
        text,
        cursor: Cursor::new(bytes),
    };
    let mut command = super::json::missing_keys_command();
    // One bit per header key seen: a repeated key is left to the general decoder.
    let mut seen = 0u8;
    scan.skip_whitespace();
    scan.expect(b'{')?;
    scan.skip_whitespace();
    if !scan.eat(b'}') {
        loop {
            let key = scan.string()?;
            scan.skip_whitespace();
            scan.expect(b':')?;
            scan.skip_whitespace();
            let bit = match key {
                "code" => {
                    command.code = scan.integer()?;
                    1
                }
                "flag" => {
                    command.flag = scan.integer()?;
                    2
                }
                "opaque" => {
                    command.opaque = scan.integer()?;
                    4
                }
                "version" => {
                    command.version = scan.integer()?;
                    8
                }
                "language" => {
                    let name = scan.string()?;
                    command.language = LanguageCode::from_name(name).unwrap_or(LanguageCode::Other);
                    16
                }
                "remark" => {
                    command.remark = Some(scan.string()?.to_owned());
                    32
                }
                "extFields" => {
                    command.ext_fields = Some(scan.ext_fields()?);
                    64
                }
                _ => {
                    scan.scalar()?;
                    0
                }
            };
            if seen & bit != 0 {
                return None;
            }
            seen |= bit;
            scan.skip_whitespace();
            if scan.eat(b'}') {
                break;
            }
            scan.expect(b',')?;
            scan.skip_whitespace();
        }
    }
    scan.skip_whitespace();
    (scan.pos == bytes.len()).then_some(command)
}

/// A cursor over the header's bytes; every method answers `None` where the
/// text leaves the plain shape.
struct Scanner<'a> {
    /// The same bytes as the cursor's, checked as UTF-8 once.
    text: &'a str,
    cursor: Cursor<'a>,
}

impl<'a> Deref for Scanner<'a> {
    type Target = Cursor<'a>;
    fn deref(&self) -> &Cursor<'a> {
        &self.cursor
    }
}

impl DerefMut for Scanner<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.cursor
    }
}

impl<'a> Scanner<'a> {
    /// A string without escapes or control characters, borrowed.
    fn string(&mut self) -> Option<&'a str> {
        self.expect(b'"')?;
        let start = self.pos;
        let end = start + plain_run(&self.bytes[start..]);
        // The run ends at the closing quote, or at a control character (which
        // serde_json refuses) or an escape (which it unescapes): not plain.
        if self.peek_at(end)? != b'"' {
            return None;
        }
        self.pos = end + 1;
        self.text.get(start..end)
    }

    /// A JSON integer (`-?(0|[1-9][0-9]*)`, not followed by a fraction or an
    /// exponent) that fits an `i32`.
    fn integer(&mut self) -> Option<i32> {
        let negative = self.eat(b'-');
        let start = self.pos;
        let mut value: i64 = 0;
        while let Some(digit @ b'0'..=b'9') = self.peek() {
            // Eleven digits already overflow an i32; stop before i64 could.
            if self.pos - start == 11 {
                return None;
            }
            value = value * 10 + i64::from(digit - b'0');
            self.pos += 1;
        }
        let digits = self.pos - start;
        if digits == 0 || (digits > 1 && self.bytes[start] == b'0') {
            return None;
        }
        if let Some(b'.' | b'e' | b'E') = self.peek() {
            return None;
        }
        i32::try_from(if negative { -value } else { value }).ok()
    }

    /// The value of a key the header does not use: a plain string, an
    /// integer, `true` or `false`.
    fn scalar(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            _ => self.integer().map(drop),
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let found = self.bytes[self.pos..].starts_with(word);
        if found {
            self.pos += word.len();
        }
        found.then_some(())
    }

    /// `extFields`: an object of string values, duplicate keys last-wins as in
    /// the general decoder.
    fn ext_fields(&mut self) -> Option<ExtFields> {
        self.expect(b'{')?;
        self.skip_whitespace();
        let mut entries = Vec::with_capacity(16);
        if !self.eat(b'}') {
            loop {
                let key = self.string()?;
                self.skip_whitespace();
                self.expect(b':')?;
                self.skip_whitespace();
                let value = self.string()?;
                entries.push((key.to_owned(), value.to_owned()));
                self.skip_whitespace();
                if self.eat(b'}') {
                    break;
                }
                self.expect(b',')?;
                self.skip_whitespace();
            }
        }
        // Building from a vector sorts once and keeps the last of equal keys,
        // cheaper than an ordered insert per entry.
        Some(entries.into_iter().collect())
    }
}

/// The length of the longest prefix of `bytes` without `"`, `\\` or a
/// control character (below 0x20).
///
/// Eight bytes at a time: in each lane, `(x - 0x01…) & !x` has its high bit
/// set where `x` is zero (and `x - 0x20…` where it is below 0x20), after
/// XOR with the quote and the backslash for those two. A borrow can mark a
/// lane above a match, never one below it, so the lowest marked lane is the
/// first match. Headers are a few hundred bytes of short strings, and a byte
/// at a time this loop was a quarter of a heartbeat's instructions.
fn plain_run(bytes: &[u8]) -> usize {
    const LANES: u64 = 0x0101_0101_0101_0101;
    const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
    let zero_lanes = |x: u64| x.wrapping_sub(LANES) & !x;
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in chunks.by_ref() {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let marked = (zero_lanes(x ^ (LANES * u64::from(b'"')))
            | zero_lanes(x ^ (LANES * u64::from(b'\\')))
            | (x.wrapping_sub(LANES * 0x20) & !x))
            & HIGH_BITS;
        if marked != 0 {
            return offset + (marked.trailing_zeros() / 8) as usize;
        }
        offset += 8;
    }
    offset
        + chunks
            .remainder()
            .iter()
            .take_while(|&&byte| !matches!(byte, b'"' | b'\\' | 0x00..=0x1F))
            .count()
}

#[cfg(test)]
mod tests {
    use bytes::BytesMut;

    use super::*;
    use crate::header::json;

    /// splitmix64: a seeded generator, so that a failing case is reproducible.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }

        /// Mostly one of the first `plain` items, now and then any.
        fn pick_mostly<'a>(&mut self, items: &[&'a str], plain: usize) -> &'a str {
            if self.below(30) == 0 {
                self.pick(items)
            } else {
                self.pick(&items[..plain])
            }
        }
    }

    const SPACES: &[&str] = &["", "", "", " ", "\n\t ", "\r\n"];
    /// The first [`PLAIN_STRINGS`] are plain; so for the lists below.
    const STRINGS: &[&str] = &[
        r#""""#,
        r#""broker-a""#,
        r#""127.0.0.1:10911""#,
        r#""DefaultCluster""#,
        r#""é中""#,
        r#""a\"b""#,
        r#""\u0041""#,
        "\"tab\there\"",
        r#""null""#,
        r#""12""#,
        r#""unterminated"#,
        "\"\u{7f}\u{2028}\"",
    ];
    const PLAIN_STRINGS: usize = 5;
    const INTEGERS: &[&str] = &[
        "0",
        "-0",
        "7",
        "-1",
        "479",
        "2147483647",
        "-2147483648",
        "2147483648",
        "-2147483649",
        "99999999999",
        "01",
        "1.0",
        "1e3",
        "-",
        r#""12""#,
        "null",
        "true",
    ];
    const PLAIN_INTEGERS: usize = 7;
    const LANGUAGES: &[&str] = &[
        r#""JAVA""#,
        r#""GO""#,
        r#""rust""#,
        r#""NOPE""#,
        "3",
        "null",
        r#""J\u0041VA""#,
    ];
    const PLAIN_LANGUAGES: usize = 4;
    const EXT_KEYS: &[&str] = &[
        r#""brokerName""#,
        r#""brokerAddr""#,
        r#""brokerId""#,
        r#""clusterName""#,
        r#""$ref""#,
        r#""k\"ey""#,
        r#""""#,
    ];
    const PLAIN_EXT_KEYS: usize = 4;
    const OTHER_VALUES: &[&str] = &[
        r#""JSON""#,
        "12",
        "true",
        "false",
        "null",
        "[1,2]",
        r#"{"a":1}"#,
        "1.5",
    ];

    const PLAIN_OTHER_VALUES: usize = 4;

    fn space(rng: &mut Rng, out: &mut String) {
        out.push_str(rng.pick(SPACES));
    }

    fn ext_fields(rng: &mut Rng, out: &mut String) {
        match rng.below(60) {
            0 => out.push_str("null"),
            1 => out.push_str("[]"),
            _ => {
                out.push('{');
                let entries = rng.below(10);
                for index in 0..entries {
                    if index > 0 {
                        out.push(',');
                    }
                    space(rng, out);
                    out.push_str(rng.pick_mostly(EXT_KEYS, PLAIN_EXT_KEYS));
                    space(rng, out);
                    out.push(':');
                    space(rng, out);
                    match rng.below(40) {
                        0 => out.push_str(rng.pick(OTHER_VALUES)),
                        _ => out.push_str(rng.pick_mostly(STRINGS, PLAIN_STRINGS)),
                    }
                    space(rng, out);
                }
                out.push('}');
            }
        }
    }

    /// A header-like text: the usual keys in any order, sometimes repeated,
    /// with values plain and not, and now and then a cut or a stray byte.
    fn header(rng: &mut Rng) -> Vec<u8> {
        let mut keys = vec![
            "code",
            "extFields",
            "flag",
            "language",
            "opaque",
            "remark",
            "serializeTypeCurrentRPC",
            "version",
            "other",
        ];
        keys.retain(|_| rng.below(5) != 0);
        if rng.below(20) == 0 {
            let again = keys.get(rng.below(keys.len().max(1))).copied();
            keys.extend(again);
        }
        for index in (1..keys.len()).rev() {
            keys.swap(index, rng.below(index + 1));
        }
        let mut out = String::new();
        space(rng, &mut out);
        out.push('{');
        for (index, key) in keys.iter().enumerate() {
            if index > 0 {
                out.push(',');
            }
            space(rng, &mut out);
            out.push('"');
            out.push_str(key);
            out.push('"');
            space(rng, &mut out);
            out.push(':');
            space(rng, &mut out);
            match *key {
                "code" | "flag" | "opaque" | "version" => {
                    out.push_str(rng.pick_mostly(INTEGERS, PLAIN_INTEGERS));
                }
                "language" => out.push_str(rng.pick_mostly(LANGUAGES, PLAIN_LANGUAGES)),
                "remark" => match rng.below(30) {
                    0 => out.push_str(rng.pick(OTHER_VALUES)),
                    _ => out.push_str(rng.pick_mostly(STRINGS, PLAIN_STRINGS)),
                },
                "extFields" => ext_fields(rng, &mut out),
                _ => match rng.below(2) {
                    0 => out.push_str(rng.pick_mostly(OTHER_VALUES, PLAIN_OTHER_VALUES)),
                    _ => out.push_str(rng.pick_mostly(STRINGS, PLAIN_STRINGS)),
                },
            }
            space(rng, &mut out);
        }
        out.push('}');
        space(rng, &mut out);
        // Cuts may split a multi-byte character: the result is bytes, not text.
        let mut bytes = out.into_bytes();
        match rng.below(20) {
            0 => bytes.truncate(rng.below(bytes.len() + 1)),
            1 => bytes.insert(rng.below(bytes.len() + 1), b','),
            2 => bytes.push(b'x'),
            _ => {}
        }
        bytes
    }

    #[test]
    fn where_the_scanner_answers_the_general_decoder_gives_the_same_command() {
        let mut rng = Rng(0x5eed_0001);
        let (mut plain, mut general) = (0, 0);
        for case in 0..40_000 {
            let bytes = &header(&mut rng)[..];
            let text = String::from_utf8_lossy(bytes);
            match decode(bytes) {
                Some(fast) => {
                    plain += 1;
                    assert_eq!(
                        json::decode_general(bytes),
                        Ok(fast),
                        "case {case}: {text:?}"
                    );
                }
                None => general += 1,
            }
        }
        // Both ways must be exercised for the comparison to mean anything.
        assert!(plain > 4_000, "only {plain} plain headers");
        assert!(
            general > 4_000,
            "only {general} headers left to the general decoder"
        );
    }

    fn encoded(command: &RemotingCommand) -> Vec<u8> {
        let mut dst = BytesMut::new();
        json::encode(command, &mut dst);
        dst.to_vec()
    }

    #[test]
    fn what_peers_write_takes_the_plain_path() {
        let mut heartbeat = RemotingCommand::request(904, 77);
        let ext = [
            ("brokerAddr", "127.0.0.1:30911"),
            ("brokerId", "2"),
            ("brokerName", "broker-a"),
            ("clusterName", "DefaultCluster"),
            ("confirmOffset", "0"),
            ("electionPriority", "0"),
            ("epoch", "1"),
            ("heartbeatTimeoutMills", "10000"),
            ("maxOffset", "-1"),
        ];
        heartbeat.ext_fields = Some(
            ext.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        );
        let mut answer = RemotingCommand::response_to(&heartbeat, 1);
        answer.remark = Some("the broker 中 is not registered".to_owned());
        answer.language = LanguageCode::Go;
        answer.ext_fields = Some(ExtFields::new());
        for command in [heartbeat, answer] {
            assert_eq!(decode(&encoded(&command)), Some(command));
        }
        // Java's HashMap order and a Go client's spacing.
        let java = br#"{"code":105,"extFields":{"topic":"T","acceptStandardJsonOnly":"false"},"flag":0,"language":"JAVA","opaque":3,"serializeTypeCurrentRPC":"JSON","version":479}"#;
        let spaced = b" { \"code\" : 105 ,\n\"language\":\"GO\", \"extFields\" : { } } ";
        for text in [&java[..], &spaced[..]] {
            let fast = decode(text).expect("plain");
            assert_eq!(json::decode_general(text), Ok(fast));
        }
    }

    #[test]
    fn the_plain_run_stops_at_the_first_quote_escape_or_control() {
        let mut rng = Rng(0x5eed_0002);
        let alphabet = [
            b'a', b'"', b'\\', 0x00, 0x1F, 0x20, 0x21, 0x7F, 0x80, 0xE4, 0xFF,
        ];
        for _ in 0..20_000 {
            let len = rng.below(40);
            let bytes: Vec<u8> = (0..len)
                .map(|_| match rng.below(4) {
                    0 => alphabet[rng.below(alphabet.len())],
                    _ => b'a' + rng.below(26) as u8,
                })
                .collect();
            let expected = bytes
                .iter()
                .position(|&byte| matches!(byte, b'"' | b'\\' | 0x00..=0x1F))
                .unwrap_or(bytes.len());
            assert_eq!(plain_run(&bytes), expected, "{bytes:?}");
        }
    }

    #[test]
    fn anything_else_is_left_to_the_general_decoder() {
        for text in [
            &br#"{"code":"105"}"#[..],
            br#"{"code":105,"code":106}"#,
            br#"{"remark":"a\nb"}"#,
            br#"{"remark":null}"#,
            br#"{"extFields":{"a":1}}"#,
            br#"{"language":3}"#,
            br#"{"code":1.0}"#,
            br#"{"other":{"a":1}}"#,
            br#"{"code":105}x"#,
            b"{\"remark\":\"\xff\"}",
            br#"{"code":105"#,
        ] {
            assert_eq!(decode(text), None, "{}", String::from_utf8_lossy(text));
        }
    }
}
