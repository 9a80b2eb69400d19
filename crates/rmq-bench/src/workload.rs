//! Workloads: which made-up brokers register which topics, the bytes they send (built with
//! `rmq-broker-client`, each body encoded once, [`Registration`]), and the route queries clients
//! make.

use anyhow::{bail, Context};
use rmq_broker_client::body::{self, BodyOptions, EncodedBody, Identity};
use rmq_broker_client::{BrokerConfig, TopicTable};
use rmq_protocol::headers::GetRouteInfoRequestHeader;
use rmq_protocol::{
    body_crc32, BrokerData, DataVersion, JavaJson, QueueData, TopicConfig, TopicRouteData,
};
use rmq_wire::{RemotingCommand, RequestCode};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// The cluster every benchmark broker registers in.
pub const CLUSTER: &str = "BenchCluster";
/// Permission of every benchmark topic (read | write).
const TOPIC_PERM: i32 = 6;

/// How topics are spread: topic sets of `spread` consecutive brokers, each broker of a set
/// registering the same `topics_per_broker` topics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// Brokers, each a master with its own name.
    pub brokers: usize,
    /// ≥ 2: a first registration with exactly one topic is refused by Java and Waymark alike.
    pub topics_per_broker: usize,
    /// Brokers per topic set (≥ 1).
    pub spread: usize,
    /// Read and write queues of every topic.
    pub queues: i32,
}

impl Layout {
    /// `brokers` brokers of `topics_per_broker` topics, each topic on `spread` brokers, 8 queues each.
    pub const fn new(brokers: usize, topics_per_broker: usize, spread: usize) -> Layout {
        let queues = 8;
        Layout {
            brokers,
            topics_per_broker,
            spread,
            queues,
        }
    }

    pub fn validate(&self) -> anyhow::Result<()> {
        if self.brokers == 0 || self.spread == 0 {
            bail!("a layout needs at least one broker and a spread of at least 1");
        }
        if self.topics_per_broker < 2 {
            bail!("brokers need at least 2 topics (a single-topic first registration is refused)");
        }
        Ok(())
    }
    pub fn topic_sets(&self) -> usize {
        self.brokers.div_ceil(self.spread)
    }
    /// Topic-queue entries (broker, topic) the server holds once all registered.
    pub fn entries(&self) -> usize {
        self.brokers * self.topics_per_broker
    }
    pub fn brokers_of_set(&self, set: usize) -> Range<usize> {
        let start = set * self.spread;
        start..(start + self.spread).min(self.brokers)
    }
    /// Every distinct topic, set by set.
    pub fn all_topics(&self) -> Vec<String> {
        let topics = |set| (0..self.topics_per_broker).map(move |i| topic_name(set, i));
        (0..self.topic_sets()).flat_map(topics).collect()
    }
    /// The topic configs broker `broker` registers.
    pub fn topic_configs(&self, broker: usize) -> Vec<TopicConfig> {
        let set = broker / self.spread;
        let config = |i| TopicConfig {
            read_queue_nums: self.queues,
            write_queue_nums: self.queues,
            perm: TOPIC_PERM,
            ..TopicConfig::new(topic_name(set, i))
        };
        (0..self.topics_per_broker).map(config).collect()
    }
    /// The route of any topic of `set` as a correct NameServer returns it, for servers that fake
    /// answers (the ceiling).
    pub fn route_of_set(&self, set: usize) -> TopicRouteData {
        let brokers = self.brokers_of_set(set);
        let broker_data = |b| BrokerData {
            broker_addrs: [(0, broker_addr(b))].into_iter().collect(),
            broker_name: broker_name(b),
            cluster: CLUSTER.to_owned(),
            enable_acting_master: false,
            zone_name: None,
        };
        let queue_data = |b| QueueData {
            broker_name: broker_name(b),
            perm: TOPIC_PERM,
            read_queue_nums: self.queues,
            topic_sys_flag: 0,
            write_queue_nums: self.queues,
        };
        TopicRouteData {
            broker_datas: brokers.clone().map(broker_data).collect(),
            queue_datas: brokers.map(queue_data).collect(),
            ..TopicRouteData::default()
        }
    }
}

pub fn broker_name(broker: usize) -> String {
    format!("bench-broker-{broker}")
}

/// Made-up address of benchmark broker `broker` (nobody listens there).
pub fn broker_addr(broker: usize) -> String {
    let (a, b, c) = (broker / 62_500 % 250, broker / 250 % 250, broker % 250 + 1);
    format!("10.{a}.{b}.{c}:10911")
}

/// Name of topic `index` of topic set `set`.
pub fn topic_name(set: usize, index: usize) -> String {
    format!("BenchTopic-{set}-{index}")
}

/// A GET_ROUTEINFO_BY_TOPIC request as a 5.3.3 Java client sends it (language JAVA, version
/// 479, JSON header).
pub fn route_request(topic: &str) -> RemotingCommand {
    let header = GetRouteInfoRequestHeader {
        topic: topic.to_owned(),
        ..GetRouteInfoRequestHeader::default()
    };
    RemotingCommand::request(RequestCode::GetRouteInfoByTopic, 0).with_header(&header)
}

/// Who the broker of `config` says it is in a registration.
pub fn identity(config: &BrokerConfig) -> Identity {
    Identity {
        cluster_name: config.cluster_name.clone(),
        broker_name: config.broker_name.clone(),
        broker_addr: config.broker_addr.clone(),
        ha_server_addr: config.ha_server_addr.clone(),
        broker_id: config.effective_broker_id(),
    }
}

/// One broker's full registration, encoded once; each [`next_request`](Registration::next_request)
/// carries a new DataVersion.
#[derive(Debug, Clone)]
pub struct Registration {
    config: BrokerConfig,
    identity: Identity,
    template: Vec<u8>,
    /// Where the wrapper's `dataVersion` object sits in `template`.
    version_span: Range<usize>,
    counter: i64,
    topics: usize,
}

impl Registration {
    /// Broker `broker` of `layout`, as a 5.x master with Java defaults.
    pub fn of_layout(layout: &Layout, broker: usize, now_ms: i64) -> anyhow::Result<Registration> {
        let config = BrokerConfig::new(CLUSTER, broker_name(broker), broker_addr(broker));
        Registration::new(config, layout.topic_configs(broker), now_ms)
    }
    pub fn new(
        config: BrokerConfig,
        topics: Vec<TopicConfig>,
        now_ms: i64,
    ) -> anyhow::Result<Registration> {
        config.validate()?;
        let table = TopicTable::with_topics(topics, now_ms);
        let options = BodyOptions::from_config(&config, config.broker_permission);
        let mut bodies = body::full_bodies(&table, &options, now_ms);
        if bodies.len() != 1 || options.compressed {
            bail!("benchmark brokers send one uncompressed body");
        }
        let encoded = bodies.remove(0);
        let template = encoded.bytes.to_vec();
        Ok(Registration {
            version_span: find_data_version(&template)?,
            counter: encoded.data_version.counter,
            topics: encoded.topics,
            identity: identity(&config),
            config,
            template,
        })
    }
    pub fn body_len(&self) -> usize {
        self.template.len()
    }
    pub fn broker_name(&self) -> &str {
        &self.identity.broker_name
    }
    /// The body of the next registration: DataVersion counter + 1, timestamp `now_ms`,
    /// everything else as encoded at construction.
    pub fn next_body(&mut self, now_ms: i64) -> EncodedBody {
        self.counter += 1;
        let version = DataVersion::new(self.counter, 0, now_ms);
        let json = version.to_json_flavor(self.config.flavor.body());
        let span = &self.version_span;
        let (before, after) = (&self.template[..span.start], &self.template[span.end..]);
        let bytes = [before, &json, after].concat();
        EncodedBody {
            topics: self.topics,
            data_version: version,
            crc32: body_crc32(&bytes),
            bytes: bytes.into(),
            compressed: false,
        }
    }
    /// The next REGISTER_BROKER request (see [`Self::next_body`]).
    pub fn next_request(&mut self, now_ms: i64) -> RemotingCommand {
        let body = self.next_body(now_ms);
        body::register_request(&self.identity, &self.config, &body)
    }
}

/// The byte range of the first `"dataVersion":{…}` object value.
fn find_data_version(body: &[u8]) -> anyhow::Result<Range<usize>> {
    const KEY: &[u8] = b"\"dataVersion\":";
    let key = body.windows(KEY.len()).position(|w| w == KEY);
    let start = key.context("register body has no dataVersion")? + KEY.len();
    let len = body[start..].iter().position(|&b| b == b'}');
    let span = start..start + len.context("unterminated dataVersion")? + 1;
    DataVersion::from_json(&body[span.clone()]).context("dataVersion does not parse")?;
    Ok(span)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAYOUT: Layout = Layout::new(4, 3, 2);
    #[test]
    fn layout_counts_entries_and_routes() {
        LAYOUT.validate().unwrap();
        let topics = LAYOUT.all_topics().len();
        assert_eq!((LAYOUT.topic_sets(), LAYOUT.entries(), topics), (2, 12, 6));
        assert_eq!(LAYOUT.brokers_of_set(1), 2..4);
        let route = LAYOUT.route_of_set(1);
        assert_eq!(route.broker_datas.len(), 2);
        assert_eq!(route.queue_datas[0].broker_name, "bench-broker-2");
        assert_ne!(broker_addr(0), broker_addr(250));
    }
    #[test]
    fn spliced_body_equals_a_full_re_encode() {
        let now = 1_700_000_000_000;
        let mut registration = Registration::of_layout(&LAYOUT, 1, now).unwrap();
        let spliced = registration.next_body(now + 5);
        let config = BrokerConfig::new(CLUSTER, broker_name(1), broker_addr(1));
        let mut table = TopicTable::with_topics(LAYOUT.topic_configs(1), now);
        table.bump(now + 5);
        let options = BodyOptions::from_config(&config, config.broker_permission);
        assert_eq!(spliced, body::full_bodies(&table, &options, now).remove(0));
        let second = registration.next_body(now + 9);
        assert_eq!(second.data_version, DataVersion::new(2, 0, now + 9));
        assert_eq!(second.crc32, body_crc32(&second.bytes));
    }
}
