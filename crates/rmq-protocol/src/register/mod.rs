//! The REGISTER_BROKER body in its three forms.
//!
//! * JSON `RegisterBrokerBody` as 5.x brokers write it (with static-topic
//!   mapping fields, topic `attributes` and `stateVersion`) or as 4.x brokers
//!   do (without); [`BodyFlavor`] picks the output, parsing accepts both.
//! * The zlib-compressed binary layout ([`RegisterBrokerBody::from_compressed`],
//!   [`RegisterBrokerBody::to_compressed`]), bounded against decompression bombs.
//! * The pre-3.0.11 body, a bare [`TopicConfigSerializeWrapper`].
//!
//! [`RegisterBrokerBody::decode_request`] picks the right one from the request
//! header and version, as Java's `DefaultRequestProcessor.registerBroker`;
//! [`RegisterBrokerBody::decode_request_limited`] does the same within a bound
//! on the body's collections (`limited.rs`);
//! [`RegisterBrokerBody::decode_registration`] is what a NameServer calls:
//! the same result, taken by a fast decoder for the shape brokers send
//! (`common.rs`) where it can.

pub mod common;
mod compressed;
mod limited;

use std::collections::BTreeMap;

use rmq_wire::lenient::{self, Lenient};
use rmq_wire::lenient_bean;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::java_json::JavaJson;
use crate::version::V3_0_11;
use crate::{BodyError, BodyFlavor, DataVersion, Dialect, TopicConfig, TopicQueueMappingInfo};

pub use compressed::MAX_INFLATED_LEN;
pub use limited::RegisterDecodeError;

/// A broker's topic configuration as registered (Java
/// `TopicConfigSerializeWrapper` and its 5.x subclass
/// `TopicConfigAndMappingSerializeWrapper`, which adds the mapping fields).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopicConfigSerializeWrapper {
    /// The version of `topic_config_table`.
    #[serde(deserialize_with = "lenient::value")]
    pub data_version: DataVersion,
    /// The version of the mapping data (5.x; the NameServer ignores it).
    #[serde(deserialize_with = "lenient::value")]
    pub mapping_data_version: DataVersion,
    /// Topic name → config.
    #[serde(deserialize_with = "lenient::value")]
    pub topic_config_table: BTreeMap<String, TopicConfig>,
    /// Full mapping details (5.x). Not used by the NameServer: accepted in any
    /// shape on input and always written as `{}`.
    #[serde(deserialize_with = "lenient::value")]
    pub topic_queue_mapping_detail_map: IgnoredDetails,
    /// Topic → static-topic mapping of this broker (5.x).
    #[serde(deserialize_with = "lenient::value")]
    pub topic_queue_mapping_info_map: BTreeMap<String, TopicQueueMappingInfo>,
}

/// A REGISTER_BROKER body as a NameServer applies it
/// ([`RegisterBrokerBody::decode_registration`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedRegistration {
    /// The version of the broker's topics.
    pub data_version: DataVersion,
    /// The broker's topics, one per name (in no particular order).
    pub topic_configs: Vec<TopicConfig>,
    /// Topic → static-topic mapping of this broker.
    pub mappings: BTreeMap<String, TopicQueueMappingInfo>,
    /// Filter servers; `None` = not provided (keep what is stored).
    pub filter_server_list: Option<Vec<String>>,
}

impl Default for DecodedRegistration {
    fn default() -> Self {
        RegisterBrokerBody::default().into()
    }
}

impl From<RegisterBrokerBody> for DecodedRegistration {
    fn from(body: RegisterBrokerBody) -> Self {
        let wrapper = body.topic_config_serialize_wrapper;
        DecodedRegistration {
            data_version: wrapper.data_version,
            topic_configs: wrapper.topic_config_table.into_values().collect(),
            mappings: wrapper.topic_queue_mapping_info_map,
            filter_server_list: body.filter_server_list,
        }
    }
}

/// Placeholder for `topicQueueMappingDetailMap`, whose content the NameServer
/// never reads; serializes as `{}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct IgnoredDetails;

impl Serialize for IgnoredDetails {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(std::iter::empty::<((), ())>())
    }
}

impl Lenient for IgnoredDetails {
    fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| Some(IgnoredDetails))
    }
}

/// The REGISTER_BROKER request body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RegisterBrokerBody {
    /// Filter-server addresses. `None` = "not provided" (JSON `null`, or an
    /// old-format body), which leaves the NameServer's list unchanged; a
    /// missing key reads as an empty list.
    #[serde(
        deserialize_with = "lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub filter_server_list: Option<Vec<String>>,
    /// The broker's topics.
    #[serde(deserialize_with = "lenient::value")]
    pub topic_config_serialize_wrapper: TopicConfigSerializeWrapper,
}

impl Default for RegisterBrokerBody {
    fn default() -> Self {
        RegisterBrokerBody {
            filter_server_list: Some(Vec::new()),
            topic_config_serialize_wrapper: TopicConfigSerializeWrapper::default(),
        }
    }
}

/// The `bodyCrc32` header value of a body: CRC-32 (IEEE, as zlib and
/// `java.util.zip.CRC32`) masked with `0x7FFFFFFF`. An absent body is 0.
pub fn body_crc32(body: &[u8]) -> i32 {
    // The mask makes the value fit an i32.
    (crc32fast::hash(body) & 0x7FFF_FFFF) as i32
}

impl RegisterBrokerBody {
    /// Decodes the body of a REGISTER_BROKER request the way Java's NameServer
    /// does, by request `version` and the header's `compressed` flag:
    ///
    /// * `version < 37` (before 3.0.11): the body is a bare
    ///   [`TopicConfigSerializeWrapper`]; `filter_server_list` is `None`.
    ///   `compressed` is ignored.
    /// * otherwise compressed → [`Self::from_compressed`], else JSON.
    /// * an absent body gives an empty topic table with DataVersion
    ///   {0, 0, 0} and an empty (new format) or absent (old) filter list.
    ///
    /// # Errors
    /// Whatever the selected decoder reports.
    pub fn decode_request(
        body: Option<&[u8]>,
        compressed: bool,
        version: i32,
    ) -> Result<RegisterBrokerBody, BodyError> {
        let old_format = version < V3_0_11;
        match body {
            None if old_format => Ok(RegisterBrokerBody {
                filter_server_list: None,
                ..Default::default()
            }),
            None => Ok(RegisterBrokerBody::default()),
            Some(bytes) if old_format => Ok(RegisterBrokerBody {
                filter_server_list: None,
                topic_config_serialize_wrapper: TopicConfigSerializeWrapper::from_json(bytes)?,
            }),
            Some(bytes) if compressed => RegisterBrokerBody::from_compressed(bytes, version),
            Some(bytes) => RegisterBrokerBody::from_json(bytes),
        }
    }

    /// [`Self::decode_request`] refusing a body with more than `max_entries`
    /// topics, static-topic mappings or filter servers, before it is built:
    /// compressed bodies by their declared counts, JSON bodies by a scan that
    /// allocates nothing and stops at the first entry past the bound. Memory
    /// never grows with the entries beyond `max_entries`.
    ///
    /// # Errors
    /// [`RegisterDecodeError::TooMany`] naming the collection and the bound,
    /// or [`RegisterDecodeError::Body`] with what [`Self::decode_request`]
    /// reports.
    pub fn decode_request_limited(
        body: Option<&[u8]>,
        compressed: bool,
        version: i32,
        max_entries: usize,
    ) -> Result<RegisterBrokerBody, RegisterDecodeError> {
        let old_format = version < V3_0_11;
        match body {
            Some(bytes) if old_format => {
                limited::check_json(bytes, limited::Layout::Wrapper, max_entries)?;
            }
            Some(bytes) if compressed => {
                return RegisterBrokerBody::from_compressed_limited(bytes, version, max_entries);
            }
            Some(bytes) => limited::check_json(bytes, limited::Layout::Body, max_entries)?,
            None => {}
        }
        Ok(RegisterBrokerBody::decode_request(
            body, compressed, version,
        )?)
    }

    /// What a NameServer needs of a REGISTER_BROKER body: the result of
    /// [`Self::decode_request_limited`] with the topics as a list. A JSON
    /// body as brokers write it is read by the fast decoder of
    /// [`common`], anything else by the general one.
    ///
    /// # Errors
    /// As [`Self::decode_request_limited`].
    pub fn decode_registration(
        body: Option<&[u8]>,
        compressed: bool,
        version: i32,
        max_entries: usize,
    ) -> Result<DecodedRegistration, RegisterDecodeError> {
        Self::decode_registration_shaped(body, compressed, version, max_entries)
            .map(|(decoded, _)| decoded)
    }

    /// [`Self::decode_registration`], and whether the body was read by the
    /// fast decoder ([`common::decode`]): then a body that starts as
    /// [`common::head`] reads it, and repeats this one but for the
    /// DataVersion's object, decodes to the same but for the DataVersion.
    ///
    /// # Errors
    /// As [`Self::decode_request_limited`].
    pub fn decode_registration_shaped(
        body: Option<&[u8]>,
        compressed: bool,
        version: i32,
        max_entries: usize,
    ) -> Result<(DecodedRegistration, bool), RegisterDecodeError> {
        if let Some(bytes) = body {
            if !compressed && version >= V3_0_11 {
                if let Some(decoded) = common::decode(bytes, max_entries) {
                    return decoded.map(|decoded| (decoded, true));
                }
            }
        }
        Self::decode_request_limited(body, compressed, version, max_entries)
            .map(|body| (DecodedRegistration::from(body), false))
    }

    /// The JSON body as a broker of `flavor` writes it (default dialect).
    pub fn to_json_flavor(&self, flavor: BodyFlavor) -> Vec<u8> {
        match flavor {
            BodyFlavor::V5 => self.to_json(Dialect::Default),
            BodyFlavor::V4 => V4Body(self).to_json_bytes(),
        }
    }
}

impl TopicConfigSerializeWrapper {
    /// The wrapper as a broker of `flavor` writes it; [`BodyFlavor::V4`] is
    /// also the pre-3.0.11 REGISTER_BROKER body.
    pub fn to_json_flavor(&self, flavor: BodyFlavor) -> Vec<u8> {
        match flavor {
            BodyFlavor::V5 => self.to_json(Dialect::Default),
            BodyFlavor::V4 => V4Wrapper(self).to_json_bytes(),
        }
    }
}

impl JavaJson for RegisterBrokerBody {}
impl JavaJson for TopicConfigSerializeWrapper {}
lenient_bean!(RegisterBrokerBody, TopicConfigSerializeWrapper);

/// 4.x view of a body: no mapping fields, no attributes.
struct V4Body<'a>(&'a RegisterBrokerBody);
struct V4Wrapper<'a>(&'a TopicConfigSerializeWrapper);
struct V4TopicConfig<'a>(&'a TopicConfig);

trait ToJsonBytes: Serialize {
    fn to_json_bytes(&self) -> Vec<u8> {
        crate::java_json::to_vec(self, Dialect::Default).expect("4.x views always serialize")
    }
}
impl ToJsonBytes for V4Body<'_> {}
impl ToJsonBytes for V4Wrapper<'_> {}

impl Serialize for V4Body<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("RegisterBrokerBody", 2)?;
        if let Some(list) = &self.0.filter_server_list {
            st.serialize_field("filterServerList", list)?;
        }
        st.serialize_field(
            "topicConfigSerializeWrapper",
            &V4Wrapper(&self.0.topic_config_serialize_wrapper),
        )?;
        st.end()
    }
}

impl Serialize for V4Wrapper<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Table<'a>(&'a BTreeMap<String, TopicConfig>);
        impl Serialize for Table<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_map(self.0.iter().map(|(k, v)| (k, V4TopicConfig(v))))
            }
        }
        let mut st = s.serialize_struct("TopicConfigSerializeWrapper", 2)?;
        st.serialize_field("dataVersion", &self.0.data_version.v4())?;
        st.serialize_field("topicConfigTable", &Table(&self.0.topic_config_table))?;
        st.end()
    }
}

impl Serialize for V4TopicConfig<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let c = self.0;
        let mut st = s.serialize_struct("TopicConfig", 7)?;
        st.serialize_field("order", &c.order)?;
        st.serialize_field("perm", &c.perm)?;
        st.serialize_field("readQueueNums", &c.read_queue_nums)?;
        st.serialize_field("topicFilterType", &c.topic_filter_type)?;
        st.serialize_field("topicName", &c.topic_name)?;
        st.serialize_field("topicSysFlag", &c.topic_sys_flag)?;
        st.serialize_field("writeQueueNums", &c.write_queue_nums)?;
        st.end()
    }
}

#[cfg(test)]
mod tests;
