//! Building REGISTER_BROKER requests: the topic-config-and-mapping wrapper,
//! permission masking, split batches, the JSON or zlib body, and the header
//! exactly as a 5.x (or 4.x) Java broker sends it (`BrokerController.registerBrokerAll`,
//! `registerIncrementBrokerData`, `BrokerOuterAPI.registerBrokerAll`).
//!
//! Pure functions over a [`TopicTable`] snapshot: no I/O, no clock (the
//! caller passes `now_ms` for the fresh `mappingDataVersion`). A body is
//! encoded once and the same bytes go to every NameServer.

use std::collections::BTreeMap;

use bytes::Bytes;
use rmq_protocol::headers::{RegisterBrokerRequestHeader, ZONE_MODE_KEY};
use rmq_protocol::{
    body_crc32, DataVersion, RegisterBrokerBody, TopicConfig, TopicConfigSerializeWrapper,
    TopicFilterType,
};
use rmq_wire::{RemotingCommand, RequestCode};

use crate::config::{masks_topics, BrokerConfig, Flavor};
use crate::topics::TopicTable;

/// Who is registering, read at call time (the id changes with the role).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// `clusterName`.
    pub cluster_name: String,
    /// `brokerName`.
    pub broker_name: String,
    /// `brokerAddr`.
    pub broker_addr: String,
    /// `haServerAddr`.
    pub ha_server_addr: String,
    /// `brokerId` now.
    pub broker_id: i64,
}

/// How to encode the bodies of one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyOptions {
    /// Java generation.
    pub flavor: Flavor,
    /// zlib form instead of JSON.
    pub compressed: bool,
    /// `brokerPermission` now.
    pub broker_permission: i32,
    /// Java's field-losing copies when masking.
    pub lossy_perm_masking: bool,
    /// `Some(n)`: split into batches of `n` topics.
    pub split: Option<usize>,
}

impl BodyOptions {
    /// The options of `config` with the current permission.
    pub fn from_config(config: &BrokerConfig, broker_permission: i32) -> BodyOptions {
        BodyOptions {
            flavor: config.flavor,
            compressed: config.compressed_register,
            broker_permission,
            lossy_perm_masking: config.lossy_perm_masking,
            split: config
                .enable_split_registration
                .then_some(config.split_registration_size),
        }
    }
}

/// One encoded REGISTER_BROKER body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedBody {
    /// Topics in it.
    pub topics: usize,
    /// The version it carries.
    pub data_version: DataVersion,
    /// The bytes (zlib if `compressed`).
    pub bytes: Bytes,
    /// `bodyCrc32` of `bytes`.
    pub crc32: i32,
    /// Whether `bytes` is the zlib form.
    pub compressed: bool,
}

/// The copy of `config` that is registered under `broker_permission`.
fn registered_copy(config: &TopicConfig, options: &BodyOptions) -> TopicConfig {
    if !masks_topics(options.broker_permission) {
        return config.clone();
    }
    let perm = config.perm & options.broker_permission;
    if options.lossy_perm_masking {
        TopicConfig {
            read_queue_nums: config.read_queue_nums,
            write_queue_nums: config.write_queue_nums,
            perm,
            topic_filter_type: TopicFilterType::SingleTag,
            ..TopicConfig::new(config.topic_name.clone())
        }
    } else {
        TopicConfig {
            perm,
            ..config.clone()
        }
    }
}

/// Encodes one wrapper as a body.
fn encode(
    table: BTreeMap<String, TopicConfig>,
    mappings: BTreeMap<String, rmq_protocol::TopicQueueMappingInfo>,
    data_version: DataVersion,
    options: &BodyOptions,
    now_ms: i64,
) -> EncodedBody {
    let topics = table.len();
    let body = RegisterBrokerBody {
        filter_server_list: Some(Vec::new()),
        topic_config_serialize_wrapper: TopicConfigSerializeWrapper {
            data_version,
            mapping_data_version: DataVersion::new(0, 0, now_ms),
            topic_config_table: table,
            topic_queue_mapping_info_map: mappings,
            ..TopicConfigSerializeWrapper::default()
        },
    };
    let bytes = if options.compressed {
        body.to_compressed(options.flavor.body())
    } else {
        body.to_json_flavor(options.flavor.body())
    };
    EncodedBody {
        topics,
        data_version,
        crc32: body_crc32(&bytes),
        bytes: Bytes::from(bytes),
        compressed: options.compressed,
    }
}

/// The bodies of a full registration: one body, or with `split`
/// batches of exactly `n` topics in table order without mapping info, then
/// the remainder (possibly empty) with the mapping info. All carry the live
/// DataVersion.
pub fn full_bodies(table: &TopicTable, options: &BodyOptions, now_ms: i64) -> Vec<EncodedBody> {
    let version = table.data_version();
    let mut bodies = Vec::new();
    let mut batch = BTreeMap::new();
    for config in table.topics().values() {
        batch.insert(config.topic_name.clone(), registered_copy(config, options));
        if options.split.is_some_and(|n| batch.len() >= n) {
            let full = std::mem::take(&mut batch);
            bodies.push(encode(full, BTreeMap::new(), version, options, now_ms));
        }
    }
    bodies.push(encode(
        batch,
        table.mappings().clone(),
        version,
        options,
        now_ms,
    ));
    bodies
}

/// The body of an incremental registration (Java
/// `registerIncrementBrokerData`): only `topics` (unknown
/// names skipped) and their mappings; `None` if none of them exists.
pub fn increment_body(
    table: &TopicTable,
    topics: &[String],
    options: &BodyOptions,
    now_ms: i64,
) -> Option<EncodedBody> {
    let configs: BTreeMap<_, _> = topics
        .iter()
        .filter_map(|t| table.topics().get(t))
        .map(|c| (c.topic_name.clone(), registered_copy(c, options)))
        .collect();
    if configs.is_empty() {
        return None;
    }
    let mappings = topics
        .iter()
        .filter_map(|t| table.mappings().get(t).map(|m| (t.clone(), m.clone())))
        .collect();
    let version = table.data_version();
    Some(encode(configs, mappings, version, options, now_ms))
}

/// The header of a REGISTER_BROKER carrying `body`: identity, `brokerId`,
/// `enableActingMaster` (always, for a 5.x broker; its absence marks a 4.x
/// one), `heartbeatTimeoutMillis` for an acting master, `compressed` and the
/// body's 31-bit CRC-32.
pub fn register_header(
    identity: &Identity,
    config: &BrokerConfig,
    body: &EncodedBody,
) -> RegisterBrokerRequestHeader {
    let v5 = config.flavor == Flavor::V5;
    let acting = v5 && config.enable_slave_acting_master;
    RegisterBrokerRequestHeader {
        broker_name: identity.broker_name.clone(),
        broker_addr: identity.broker_addr.clone(),
        cluster_name: identity.cluster_name.clone(),
        ha_server_addr: identity.ha_server_addr.clone(),
        broker_id: identity.broker_id,
        heartbeat_timeout_millis: acting.then(|| {
            i64::try_from(config.broker_not_active_timeout.as_millis()).unwrap_or(i64::MAX)
        }),
        enable_acting_master: v5.then_some(config.enable_slave_acting_master),
        compressed: body.compressed,
        body_crc32: body.crc32,
        zone_name: config.zone_name.clone().filter(|z| !z.trim().is_empty()),
    }
}

/// A request of `code` in `config`'s flavour, with the zone keys Java's RPC
/// hook adds to every outbound request.
pub fn request(code: RequestCode, config: &BrokerConfig) -> RemotingCommand {
    let mut command = RemotingCommand::request(code, 0);
    command.version = config.flavor.version();
    if let Some(zone) = config.zone_name.as_deref().filter(|z| !z.trim().is_empty()) {
        command = command.with_ext(rmq_protocol::headers::ZONE_NAME_KEY, zone);
    }
    if let Some(mode) = config.zone_mode.as_deref().filter(|m| !m.trim().is_empty()) {
        command = command.with_ext(ZONE_MODE_KEY, mode);
    }
    command
}

/// The complete REGISTER_BROKER command for `body`.
pub fn register_request(
    identity: &Identity,
    config: &BrokerConfig,
    body: &EncodedBody,
) -> RemotingCommand {
    request(RequestCode::RegisterBroker, config)
        .with_header(&register_header(identity, config, body))
        .with_body(body.bytes.clone())
}

#[cfg(test)]
mod tests;
