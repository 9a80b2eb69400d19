//! Typed NameServer and controller headers and bodies of the RocketMQ
//! remoting protocol.
//!
//! Owns the *meaning* of the bytes `rmq-wire` frames: one typed header per
//! NameServer and controller request and response ([`headers`]), the JSON bodies with the exact
//! fastjson output Java peers expect ([`java_json`] plus one module per body),
//! the zlib-compressed REGISTER_BROKER body ([`register`]), the Java
//! `.properties` text of the config requests ([`properties`]) and the `version`
//! thresholds that switch formats ([`version`]).
//!
//! It does not own framing or the JSON/binary *header* codecs (`rmq-wire`),
//! sockets (`rmq-transport`) or any NameServer or controller state or
//! behaviour (`rmq-namesrv`, `rmq-controller`). Everything here is pure data and pure functions.
//!
//! Rust names in code, Java names on the wire: `broker_addrs` is written
//! `brokerAddrs`, and field declaration order is the alphabetical order of the
//! Java names, which is the order fastjson (`SortField`) writes them in.

pub mod cluster;
pub mod cluster_status;
pub mod controller;
pub mod data_version;
mod error;
pub mod headers;
pub mod java_json;
pub mod kv;
pub mod member_group;
pub mod options;
pub mod properties;
pub mod register;
pub mod route;
pub mod route_push;
pub mod topic_config;
pub mod topic_list;
pub mod version;

pub use cluster::ClusterInfo;
pub use controller::{
    BrokerNames, BrokerReplicasInfo, ElectMasterResponseBody, ReplicaIdentity, ReplicasInfo,
    SyncStateSet,
};
pub use data_version::DataVersion;
pub use error::BodyError;
pub use java_json::{Dialect, JavaJson};
pub use kv::{KvConfigSerializeWrapper, KvTable};
pub use member_group::{BrokerMemberGroup, GetBrokerMemberGroupResponseBody};
pub use register::{
    body_crc32, DecodedRegistration, RegisterBrokerBody, TopicConfigSerializeWrapper,
};
pub use route::{BrokerData, QueueData, TopicQueueMappingInfo, TopicRouteData};
pub use topic_config::{TopicConfig, TopicFilterType};
pub use topic_list::TopicList;
pub use version::BodyFlavor;
