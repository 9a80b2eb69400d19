//! The zlib-compressed REGISTER_BROKER body (Java `RegisterBrokerBody.encode(true)`,
//! sent by brokers with `compressedRegister=true`).
//!
//! Inflated layout, all integers i32 big-endian:
//! `[L][DataVersion JSON]`, `[N]` × `[L][TopicConfig text]`,
//! `[L][filter-server list JSON]`, and from 5.0.0 (request version ≥ 413)
//! `[M]` × `[L][TopicQueueMappingInfo JSON]`.
//!
//! Decoding inflates lazily, only as far as the declared sections reach, and
//! never beyond [`MAX_INFLATED_LEN`]: the body of a 16 MiB frame could inflate
//! to gigabytes, so a bomb is an error, not an allocation.

use std::collections::BTreeMap;
use std::io::{Read, Write};

use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use flate2::Compression;
use rmq_wire::lenient;
use serde::Deserialize;

use super::limited::{self, Layout, RegisterDecodeError, MAPPINGS, TOPICS};
use super::{RegisterBrokerBody, TopicConfigSerializeWrapper};
use crate::java_json::{self, Dialect, JavaJson};
use crate::version::V5_0_0;
use crate::{BodyError, BodyFlavor, DataVersion, TopicConfig, TopicQueueMappingInfo};

/// Upper bound on the inflated size of a compressed body (64 MiB). Real
/// bodies are a few hundred bytes per topic; 64 MiB is far above any broker.
pub const MAX_INFLATED_LEN: usize = 64 << 20;

/// The filter-server list, read as `JSON.parseArray(text, String.class)`.
#[derive(Deserialize)]
struct FilterList(#[serde(deserialize_with = "lenient::opt")] Option<Vec<String>>);

/// Reads length-prefixed sections from the inflating stream.
struct Sections<R> {
    inflater: R,
    inflated: usize,
}

impl<R: Read> Sections<R> {
    fn bytes(&mut self, len: usize, what: &'static str) -> Result<Vec<u8>, BodyError> {
        if len > MAX_INFLATED_LEN - self.inflated {
            return Err(BodyError::TooLarge {
                limit: MAX_INFLATED_LEN,
            });
        }
        // Grows with what actually inflates, not with what the prefix claims.
        let mut buf = Vec::with_capacity(len.min(64 * 1024));
        (&mut self.inflater)
            .take(len as u64)
            .read_to_end(&mut buf)
            .map_err(BodyError::Inflate)?;
        if buf.len() < len {
            return Err(BodyError::Truncated { what });
        }
        self.inflated += len;
        Ok(buf)
    }

    fn int(&mut self, what: &'static str) -> Result<i32, BodyError> {
        let b = self.bytes(4, what)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A length prefix followed by that many bytes.
    fn block(&mut self, what: &'static str) -> Result<Vec<u8>, BodyError> {
        let len = self.int(what)?;
        let len = usize::try_from(len).map_err(|_| BodyError::NegativeLength { what, len })?;
        self.bytes(len, what)
    }
}

impl RegisterBrokerBody {
    /// Decodes the compressed form. `version` is the request's version: the
    /// mapping section is read only from 5.0.0 (413) on; anything after the
    /// last section read is ignored, as in Java.
    ///
    /// Java quirks kept: a negative topic or mapping count means none;
    /// `topicSysFlag`/`order` are not transmitted (0/false); an unparsable
    /// filter-server list becomes empty (`null` → not provided); mapping
    /// infos are keyed by their `topic`.
    ///
    /// # Errors
    /// A corrupt zlib stream, data ending early, a negative length, more than
    /// [`MAX_INFLATED_LEN`] inflated bytes, a malformed DataVersion or mapping
    /// JSON, or a malformed topic entry ([`TopicConfig::decode_text`]).
    pub fn from_compressed(body: &[u8], version: i32) -> Result<RegisterBrokerBody, BodyError> {
        match RegisterBrokerBody::from_compressed_limited(body, version, usize::MAX) {
            Ok(decoded) => Ok(decoded),
            Err(RegisterDecodeError::Body(error)) => Err(error),
            // Counts are i32s, and a list holds fewer entries than its bytes:
            // nothing reaches usize::MAX.
            Err(RegisterDecodeError::TooMany { .. }) => {
                unreachable!("no collection exceeds usize::MAX entries")
            }
        }
    }

    /// [`Self::from_compressed`], refusing a body with more than `max_entries`
    /// topics, static-topic mappings or filter servers as soon as the count
    /// is read, before any entry is built.
    ///
    /// # Errors
    /// [`RegisterDecodeError::TooMany`] for a count over `max_entries`, else
    /// those of [`Self::from_compressed`].
    pub fn from_compressed_limited(
        body: &[u8],
        version: i32,
        max_entries: usize,
    ) -> Result<RegisterBrokerBody, RegisterDecodeError> {
        let mut input = Sections {
            inflater: ZlibDecoder::new(body),
            inflated: 0,
        };

        let data_version: DataVersion = java_json::from_slice(&input.block("data version")?)?;

        let topics = input.int("topic count")?;
        limited::check_count(topics, TOPICS, max_entries)?;
        let mut topic_config_table = BTreeMap::new();
        for _ in 0..topics.max(0) {
            let text = input.block("topic config")?;
            let config = TopicConfig::decode_text(&String::from_utf8_lossy(&text))?;
            topic_config_table.insert(config.topic_name.clone(), config);
        }

        let filters = input.block("filter server list")?;
        limited::check_json(&filters, Layout::List, max_entries)?;
        let filter_server_list = match java_json::from_slice::<FilterList>(&filters) {
            Ok(FilterList(list)) => list,
            Err(_) => Some(Vec::new()),
        };

        let mut topic_queue_mapping_info_map = BTreeMap::new();
        if version >= V5_0_0 {
            let mappings = input.int("mapping count")?;
            limited::check_count(mappings, MAPPINGS, max_entries)?;
            for _ in 0..mappings.max(0) {
                let info = TopicQueueMappingInfo::from_json(&input.block("mapping info")?)?;
                topic_queue_mapping_info_map.insert(info.topic.clone(), info);
            }
        }

        Ok(RegisterBrokerBody {
            filter_server_list,
            topic_config_serialize_wrapper: TopicConfigSerializeWrapper {
                data_version,
                topic_config_table,
                topic_queue_mapping_info_map,
                ..TopicConfigSerializeWrapper::default()
            },
        })
    }

    /// Encodes the compressed form as a broker of `flavor` does (zlib, best
    /// compression). [`BodyFlavor::V4`] writes the DataVersion without
    /// `stateVersion`, topic entries without attributes and no mapping
    /// section. The compressed bytes may differ
    /// from Java's zlib; the inflated bytes are the same.
    pub fn to_compressed(&self, flavor: BodyFlavor) -> Vec<u8> {
        fn block(out: &mut Vec<u8>, bytes: &[u8]) {
            // Sections never approach 2 GiB: a frame is at most 16 MiB.
            out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
            out.extend_from_slice(bytes);
        }
        let wrapper = &self.topic_config_serialize_wrapper;
        let mut raw = Vec::with_capacity(256);
        block(&mut raw, &wrapper.data_version.to_json_flavor(flavor));
        raw.extend_from_slice(&(wrapper.topic_config_table.len() as i32).to_be_bytes());
        for config in wrapper.topic_config_table.values() {
            block(
                &mut raw,
                config.encode_text(flavor == BodyFlavor::V5).as_bytes(),
            );
        }
        let filters =
            java_json::to_vec(&self.filter_server_list, Dialect::Default).unwrap_or_default();
        block(&mut raw, &filters);
        if flavor == BodyFlavor::V5 {
            let infos = &wrapper.topic_queue_mapping_info_map;
            raw.extend_from_slice(&(infos.len() as i32).to_be_bytes());
            for info in infos.values() {
                block(&mut raw, &info.to_json(Dialect::Default));
            }
        }
        let mut encoder =
            ZlibEncoder::new(Vec::with_capacity(raw.len() / 2 + 16), Compression::best());
        encoder
            .write_all(&raw)
            .expect("writing into a Vec cannot fail");
        encoder.finish().expect("writing into a Vec cannot fail")
    }
}
