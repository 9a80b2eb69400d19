//! A decoder for the REGISTER_BROKER JSON body exactly as Java brokers write
//! it, several times faster than the general one.
//!
//! A registration is the largest request a NameServer reads (about 180 bytes
//! per topic, a broker may carry tens of thousands of topics) and every
//! broker sends one every 30 s, so its decode dominates the server's CPU.
//! The general decoder (a bare-key pre-pass, the bound scan, then serde over
//! fastjson's leniency rules into a sorted map) handles everything fastjson
//! accepts; this one reads only the shape brokers actually send — standard
//! JSON, known member names each at most once, strings without escapes,
//! integers as integers, `SINGLE_TAG`/`MULTI_TAG`, each topic keyed by its
//! own name, no static-topic mappings — in one pass that borrows every string
//! it can, and builds the topic list directly, in the body's order.
//!
//! Anything else makes it give up ([`None`]) without side effects, and the
//! caller decodes the same bytes with the general decoder. So the rule that
//! keeps the two in step is one-sided and checked by a property test and the
//! `register_body_decode` fuzz target: whenever this decoder answers, the
//! general one gives the same registration (or the same refusal).

use std::collections::{BTreeMap, HashSet};
use std::ops::Range;

use foldhash::fast::RandomState;

use super::limited::{RegisterDecodeError, FILTERS, TOPICS};
use super::DecodedRegistration;
use crate::{DataVersion, TopicConfig, TopicFilterType};

/// Decodes a (3.0.11 and later, uncompressed) REGISTER_BROKER JSON body of
/// the common shape, refusing more than `limit` topics or filter servers as
/// the general decoder does. `None`: not the common shape; decode it with
/// [`RegisterBrokerBody::decode_request_limited`](super::RegisterBrokerBody::decode_request_limited).
pub fn decode(
    bytes: &[u8],
    limit: usize,
) -> Option<Result<DecodedRegistration, RegisterDecodeError>> {
    let mut reader = Reader { bytes, at: 0 };
    let decoded = reader.body(limit)?;
    reader.skip_space();
    // A refusal stops the reading where the bound was passed, as the
    // general decoder's scan does.
    if decoded.is_ok() && reader.at != bytes.len() {
        return None;
    }
    Some(decoded)
}

/// The start of a body of the common shape, through its DataVersion
/// ([`head`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// `filterServerList`.
    pub filter_server_list: Vec<String>,
    /// `topicConfigSerializeWrapper.dataVersion`.
    pub data_version: DataVersion,
    /// Where the DataVersion's object lies in the body.
    pub data_version_at: Range<usize>,
}

/// Reads the start of a body as Java brokers write it (fastjson orders
/// members by name): `{"filterServerList":[…],"topicConfigSerializeWrapper":
/// {"dataVersion":{…}`, exactly as [`decode`] reads it, and nothing past the
/// DataVersion. `None` for any other start, or more than `limit` filter
/// servers.
///
/// Lets a NameServer recognise a broker re-sending its last body with a new
/// DataVersion without decoding it: [`decode`] is a reader that goes left to
/// right, so two bodies that both start as this reads them, and are equal
/// but for the bytes of the DataVersion's object, are read alike but for
/// that object, which is read as here. Where [`decode`] answered for one of
/// them, it answers the same for the other, with this DataVersion.
pub fn head(bytes: &[u8], limit: usize) -> Option<Head> {
    let mut reader = Reader { bytes, at: 0 };
    reader.expect(b'{')?;
    reader.member_name(b"filterServerList")?;
    let mut refusal = None;
    let filter_server_list = reader.filter_servers(limit, &mut refusal)?;
    reader.expect(b',')?;
    reader.member_name(b"topicConfigSerializeWrapper")?;
    reader.expect(b'{')?;
    reader.member_name(b"dataVersion")?;
    reader.skip_space();
    let start = reader.at;
    let data_version = reader.data_version()?;
    Some(Head {
        filter_server_list,
        data_version,
        data_version_at: start..reader.at,
    })
}

/// The index of the first `"`, `\\` or control character of `bytes`.
///
/// Eight bytes at a time (the bytes of a word that equal one of the two, or
/// are below 0x20, are flagged in its top bits), then one at a time: the
/// strings of a body are short (member names, topic names), too short for a
/// vectorized search to pay for its set-up, and a byte loop was a third of
/// the decode.
fn string_end(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    /// Flags the zero bytes of `word` (exactly up to the first one).
    fn zero_bytes(word: u64) -> u64 {
        word.wrapping_sub(ONES) & !word & HIGH
    }
    let mut at = 0;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(chunk.try_into().ok()?);
        let flagged = zero_bytes(word ^ (ONES * u64::from(b'"')))
            | zero_bytes(word ^ (ONES * u64::from(b'\\')))
            | (word.wrapping_sub(ONES * 0x20) & !word & HIGH);
        if flagged != 0 {
            return Some(at + flagged.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    bytes[at..]
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|found| at + found)
}

/// Gives up on the common shape.
type Common<T> = Option<T>;

/// A position in the body.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

/// Which member of an object has been read, to refuse duplicates (which the
/// general decoder reports as an error or resolves by position).
#[derive(Default)]
struct Seen(u32);

impl Seen {
    /// Marks member `bit`; `None` if it was already there.
    fn first(&mut self, bit: u32) -> Common<()> {
        let mask = 1 << bit;
        if self.0 & mask != 0 {
            return None;
        }
        self.0 |= mask;
        Some(())
    }
}

impl<'a> Reader<'a> {
    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// The next byte after whitespace, not consumed.
    fn peek(&mut self) -> Common<u8> {
        self.skip_space();
        self.bytes.get(self.at).copied()
    }

    /// Consumes `byte` (after whitespace).
    fn expect(&mut self, byte: u8) -> Common<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// Consumes `literal` exactly.
    fn literal(&mut self, literal: &[u8]) -> Common<()> {
        self.skip_space();
        let end = self.at.checked_add(literal.len())?;
        (self.bytes.get(self.at..end)? == literal).then(|| self.at = end)
    }

    /// The raw bytes of a string without escapes or control characters.
    fn raw_string(&mut self) -> Common<&'a [u8]> {
        self.expect(b'"')?;
        let rest = &self.bytes[self.at..];
        let len = string_end(rest)?;
        if rest[len] != b'"' {
            return None;
        }
        self.at += len + 1;
        Some(&rest[..len])
    }

    /// A member's name, which must be `name`, and its colon.
    fn member_name(&mut self, name: &[u8]) -> Common<()> {
        (self.raw_string()? == name).then_some(())?;
        self.expect(b':')
    }

    /// A string without escapes or control characters, as valid UTF-8.
    fn string(&mut self) -> Common<&'a str> {
        std::str::from_utf8(self.raw_string()?).ok()
    }

    /// An integer as JSON writes one (no fraction, exponent or leading
    /// zero; `-0` is left to the general decoder, which reads it as a float).
    fn integer(&mut self) -> Common<i64> {
        self.skip_space();
        let negative = self.bytes.get(self.at) == Some(&b'-');
        let start = self.at + usize::from(negative);
        let digits = self.bytes[start.min(self.bytes.len())..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let end = start + digits;
        if digits == 0 || (self.bytes[start] == b'0' && (digits > 1 || negative)) {
            return None;
        }
        if let Some(b'.' | b'e' | b'E') = self.bytes.get(end) {
            return None;
        }
        let mut value: i64 = 0;
        for &digit in &self.bytes[start..end] {
            let digit = i64::from(digit - b'0');
            value = value.checked_mul(10)?;
            value = if negative {
                value.checked_sub(digit)?
            } else {
                value.checked_add(digit)?
            };
        }
        self.at = end;
        Some(value)
    }

    fn int32(&mut self) -> Common<i32> {
        i32::try_from(self.integer()?).ok()
    }

    fn boolean(&mut self) -> Common<bool> {
        match self.peek()? {
            b't' => self.literal(b"true").map(|()| true),
            b'f' => self.literal(b"false").map(|()| false),
            _ => None,
        }
    }

    /// Reads an object's members, calling `member` with each name; the
    /// callback reads the value.
    fn object(&mut self, mut member: impl FnMut(&mut Self, &'a [u8]) -> Common<()>) -> Common<()> {
        self.expect(b'{')?;
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            let name = self.raw_string()?;
            self.expect(b':')?;
            member(self, name)?;
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// `{}` and nothing else.
    fn empty_object(&mut self) -> Common<()> {
        self.object(|_, _| None)
    }

    /// The whole body; `Some(Err)` once a collection passes `limit`.
    fn body(&mut self, limit: usize) -> Common<Result<DecodedRegistration, RegisterDecodeError>> {
        let mut decoded = DecodedRegistration {
            filter_server_list: Some(Vec::new()),
            ..DecodedRegistration::default()
        };
        let mut refusal = None;
        let mut seen = Seen::default();
        self.object(|reader, name| {
            if refusal.is_some() {
                return None;
            }
            match name {
                b"filterServerList" => {
                    seen.first(0)?;
                    let list = reader.filter_servers(limit, &mut refusal)?;
                    decoded.filter_server_list = Some(list);
                }
                b"topicConfigSerializeWrapper" => {
                    seen.first(1)?;
                    reader.wrapper(limit, &mut decoded, &mut refusal)?;
                }
                _ => return None,
            }
            Some(())
        })
        .or_else(|| refusal.is_some().then_some(()))?;
        Some(match refusal {
            Some(what) => Err(RegisterDecodeError::TooMany { what, limit }),
            None => Ok(decoded),
        })
    }

    /// `filterServerList`: plain strings. A refusal is recorded in `refusal`
    /// and ends the reading.
    fn filter_servers(
        &mut self,
        limit: usize,
        refusal: &mut Option<&'static str>,
    ) -> Common<Vec<String>> {
        self.expect(b'[')?;
        let mut list = Vec::new();
        if self.peek()? == b']' {
            self.at += 1;
            return Some(list);
        }
        loop {
            let addr = self.string()?;
            if list.len() == limit {
                *refusal = Some(FILTERS);
                return None;
            }
            list.push(addr.to_owned());
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(list);
                }
                _ => return None,
            }
        }
    }

    /// `topicConfigSerializeWrapper`.
    fn wrapper(
        &mut self,
        limit: usize,
        decoded: &mut DecodedRegistration,
        refusal: &mut Option<&'static str>,
    ) -> Common<()> {
        let mut seen = Seen::default();
        self.object(|reader, name| {
            match name {
                b"dataVersion" => {
                    seen.first(0)?;
                    decoded.data_version = reader.data_version()?;
                }
                b"mappingDataVersion" => {
                    seen.first(1)?;
                    reader.data_version()?;
                }
                b"topicConfigTable" => {
                    seen.first(2)?;
                    decoded.topic_configs = reader.topic_table(limit, refusal)?;
                }
                // Static topics are rare: their mappings are left to the
                // general decoder.
                b"topicQueueMappingDetailMap" => {
                    seen.first(3)?;
                    reader.empty_object()?;
                }
                b"topicQueueMappingInfoMap" => {
                    seen.first(4)?;
                    reader.empty_object()?;
                }
                _ => return None,
            }
            Some(())
        })
    }

    fn data_version(&mut self) -> Common<DataVersion> {
        let mut version = DataVersion::default();
        let mut seen = Seen::default();
        self.object(|reader, name| {
            match name {
                b"counter" => {
                    seen.first(0)?;
                    version.counter = reader.integer()?;
                }
                b"stateVersion" => {
                    seen.first(1)?;
                    version.state_version = reader.integer()?;
                }
                b"timestamp" => {
                    seen.first(2)?;
                    version.timestamp = reader.integer()?;
                }
                _ => return None,
            }
            Some(())
        })?;
        Some(version)
    }

    /// `topicConfigTable`: every topic under its own name, each name once.
    fn topic_table(
        &mut self,
        limit: usize,
        refusal: &mut Option<&'static str>,
    ) -> Common<Vec<TopicConfig>> {
        // Brokers write well over 100 bytes per topic.
        let expected = (self.bytes.len() / 128).min(limit);
        let mut topics = Vec::with_capacity(expected);
        // The general decoder keeps the last of two equal keys; this one
        // gives up on them instead (they never come from a broker). foldhash,
        // seeded per process, hashes a name in a fraction of SipHash's time;
        // the set is bounded by `limit`.
        let mut names: HashSet<&'a [u8], RandomState> =
            HashSet::with_capacity_and_hasher(expected, RandomState::default());
        self.object(|reader, key| {
            // fastjson's reference marker, skipped by the general decoder.
            if key == b"$ref" || !names.insert(key) {
                return None;
            }
            let topic = reader.topic_config()?;
            if topic.topic_name.as_bytes() != key {
                return None;
            }
            // Counted once read, as the general decoder's scan counts: an
            // entry it cannot read is an error, not one too many.
            if topics.len() == limit {
                *refusal = Some(TOPICS);
                return None;
            }
            topics.push(topic);
            Some(())
        })?;
        Some(topics)
    }

    fn topic_config(&mut self) -> Common<TopicConfig> {
        let mut topic = TopicConfig::default();
        let mut seen = Seen::default();
        self.object(|reader, name| {
            match name {
                b"attributes" => {
                    seen.first(0)?;
                    topic.attributes = reader.attributes()?;
                }
                b"order" => {
                    seen.first(1)?;
                    topic.order = reader.boolean()?;
                }
                b"perm" => {
                    seen.first(2)?;
                    topic.perm = reader.int32()?;
                }
                b"readQueueNums" => {
                    seen.first(3)?;
                    topic.read_queue_nums = reader.int32()?;
                }
                b"topicFilterType" => {
                    seen.first(4)?;
                    topic.topic_filter_type = match reader.raw_string()? {
                        b"SINGLE_TAG" => TopicFilterType::SingleTag,
                        b"MULTI_TAG" => TopicFilterType::MultiTag,
                        _ => return None,
                    };
                }
                b"topicName" => {
                    seen.first(5)?;
                    topic.topic_name = reader.string()?.to_owned();
                }
                b"topicSysFlag" => {
                    seen.first(6)?;
                    topic.topic_sys_flag = reader.int32()?;
                }
                b"writeQueueNums" => {
                    seen.first(7)?;
                    topic.write_queue_nums = reader.int32()?;
                }
                _ => return None,
            }
            Some(())
        })?;
        Some(topic)
    }

    /// A topic's `attributes`: plain strings; a repeated key keeps its last
    /// value, as the general decoder.
    fn attributes(&mut self) -> Common<BTreeMap<String, String>> {
        let mut attributes = BTreeMap::new();
        self.object(|reader, key| {
            if key == b"$ref" {
                return None;
            }
            let key = std::str::from_utf8(key).ok()?;
            let value = reader.string()?;
            attributes.insert(key.to_owned(), value.to_owned());
            Some(())
        })?;
        Some(attributes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn common(text: &str) -> Option<DecodedRegistration> {
        decode(text.as_bytes(), 1_000).map(|r| r.expect("within the bound"))
    }

    const TOPIC: &str = r#"{"attributes":{},"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"T","topicSysFlag":0,"writeQueueNums":4}"#;

    fn body_with_topic(topic: &str) -> String {
        format!(
            r#"{{"filterServerList":[],"topicConfigSerializeWrapper":{{"dataVersion":{{"counter":3,"stateVersion":0,"timestamp":1700000000000}},"topicConfigTable":{{"T":{topic}}},"topicQueueMappingDetailMap":{{}},"topicQueueMappingInfoMap":{{}}}}}}"#
        )
    }

    #[test]
    fn string_ends_at_the_first_quote_backslash_or_control_character() {
        for (text, end) in [
            ("", None),
            ("abc", None),
            ("ab\"", Some(2)),
            ("abcdefghij\"x\"", Some(10)),
            ("abcdefgh\\\"", Some(8)),
            ("abcdefg\u{1f}\"", Some(7)),
            ("äöüßabcd\"", Some(12)),
            ("\u{7f}\u{80}\u{ff} \"", Some(6)),
        ] {
            assert_eq!(string_end(text.as_bytes()), end, "{text:?}");
        }
        // Every position of every special byte, in and past a word.
        for len in 0..20 {
            for special in [b'"', b'\\', 0x00, 0x1f] {
                let mut bytes = vec![b'a'; len];
                bytes.push(special);
                bytes.extend_from_slice(b"\"rest");
                assert_eq!(string_end(&bytes), Some(len));
            }
        }
    }

    #[test]
    fn reads_what_brokers_send() {
        let decoded = common(&body_with_topic(TOPIC)).expect("the common shape");
        assert_eq!(
            decoded.data_version,
            DataVersion::new(3, 0, 1_700_000_000_000)
        );
        assert_eq!(decoded.topic_configs.len(), 1);
        let topic = &decoded.topic_configs[0];
        assert_eq!(
            (topic.topic_name.as_str(), topic.perm, topic.read_queue_nums),
            ("T", 6, 4)
        );
        assert_eq!(decoded.filter_server_list, Some(Vec::new()));
    }

    #[test]
    fn gives_up_on_anything_unusual() {
        for topic in [
            TOPIC.replace(r#""perm":6"#, r#""perm":"6""#),
            TOPIC.replace(r#""perm":6"#, r#""perm":6.0"#),
            TOPIC.replace(r#""perm":6"#, r#""perm":06"#),
            TOPIC.replace(r#""perm":6"#, r#""perm":-0"#),
            TOPIC.replace(r#""perm":6"#, r#""perm":4294967296"#),
            TOPIC.replace(r#""perm":6"#, r#""perm":null"#),
            TOPIC.replace(r#""perm":6"#, r#""perm":6,"perm":7"#),
            TOPIC.replace(r#""perm":6"#, r#""unknown":6"#),
            TOPIC.replace(r#""topicName":"T""#, r#""topicName":"U""#),
            TOPIC.replace(r#""topicName":"T""#, r#""topicName":"\u0054""#),
            TOPIC.replace("SINGLE_TAG", "1"),
            TOPIC.replace("SINGLE_TAG", "OTHER"),
            TOPIC.replace(r#""attributes":{}"#, r#""attributes":{"a":1}"#),
            TOPIC.replace(r#""order":false"#, r#""order":0"#),
        ] {
            assert!(common(&body_with_topic(&topic)).is_none(), "{topic}");
        }
        assert!(common(&body_with_topic(TOPIC).replace('{', "{ ")).is_some());
        assert!(common(&format!("{} x", body_with_topic(TOPIC))).is_none());
        assert!(common(
            &body_with_topic(TOPIC)
                .replace(r#""filterServerList":[]"#, r#""filterServerList":null"#)
        )
        .is_none());
    }

    #[test]
    fn refuses_past_the_bound_as_the_general_decoder() {
        let table: Vec<String> = (0..3)
            .map(|i| {
                format!(
                    r#""T{i}":{}"#,
                    TOPIC.replace(r#""T""#, &format!(r#""T{i}""#))
                )
            })
            .collect();
        let body = format!(
            r#"{{"topicConfigSerializeWrapper":{{"topicConfigTable":{{{}}}}}}}"#,
            table.join(",")
        );
        assert!(matches!(decode(body.as_bytes(), 3), Some(Ok(d)) if d.topic_configs.len() == 3));
        assert!(matches!(
            decode(body.as_bytes(), 2),
            Some(Err(RegisterDecodeError::TooMany {
                what: TOPICS,
                limit: 2
            }))
        ));
        let filters = r#"{"filterServerList":["a","b"]}"#;
        assert!(matches!(
            decode(filters.as_bytes(), 1),
            Some(Err(RegisterDecodeError::TooMany {
                what: FILTERS,
                limit: 1
            }))
        ));
    }

    /// `body` with the DataVersion's object `head` found replaced by `object`.
    fn with_data_version(body: &[u8], object: &str) -> Option<Vec<u8>> {
        let at = head(body, 1_000)?.data_version_at;
        Some([&body[..at.start], object.as_bytes(), &body[at.end..]].concat())
    }

    #[test]
    fn head_reads_the_start_as_decode_does() {
        let body = body_with_topic(TOPIC);
        let read = head(body.as_bytes(), 1_000).expect("the common start");
        assert_eq!(
            &body[read.data_version_at.clone()],
            r#"{"counter":3,"stateVersion":0,"timestamp":1700000000000}"#
        );
        assert_eq!(read.data_version, DataVersion::new(3, 0, 1_700_000_000_000));
        assert_eq!(read.filter_server_list, Vec::<String>::new());
        for other in [
            body.replacen(r#"{"filterServerList":[],"#, "{", 1),
            body.replace(r#""dataVersion""#, r#""mappingDataVersion""#),
            body.replace(r#""counter":3"#, r#""counter":3.5"#),
            body.replace(
                r#""filterServerList":[]"#,
                r#""filterServerList":["a","b"]"#,
            ),
        ] {
            assert_eq!(head(other.as_bytes(), 1), None, "{other}");
        }
    }

    use proptest::prelude::*;

    proptest! {
        /// Whatever replaces the DataVersion's object, a body that still
        /// starts as `head` reads, and is the original before and after
        /// what `head` took for the object, decodes as the original but for
        /// the DataVersion `head` read.
        #[test]
        fn a_body_differing_in_its_data_version_decodes_alike(
            object in prop_oneof![
                "[{}\"a-z:,0-9 .-]{0,40}".prop_map(String::from),
                (proptest::num::i64::ANY, proptest::num::i64::ANY, 0..3usize).prop_map(
                    |(counter, timestamp, shape)| match shape {
                        0 => format!(r#"{{"counter":{counter},"timestamp":{timestamp}}}"#),
                        1 => format!(r#"{{ "timestamp" : {timestamp} , "counter":{counter} }}"#),
                        _ => format!(r#"{{"counter":{counter},"counter":{timestamp}}}"#),
                    }
                ),
            ],
        ) {
            let body = body_with_topic(TOPIC);
            let original = common(&body).expect("the common shape");
            let changed = with_data_version(body.as_bytes(), &object).unwrap();
            let at = head(body.as_bytes(), 1_000).unwrap().data_version_at;
            let read = head(&changed, 1_000).filter(|read| {
                let now = &read.data_version_at;
                changed[..now.start] == body.as_bytes()[..at.start]
                    && changed[now.end..] == body.as_bytes()[at.end..]
            });
            if let Some(read) = read {
                let decoded = decode(&changed, 1_000).map(|r| r.expect("within the bound"));
                let expected = DecodedRegistration {
                    data_version: read.data_version,
                    ..original
                };
                prop_assert_eq!(decoded, Some(expected));
            }
        }
    }
}
