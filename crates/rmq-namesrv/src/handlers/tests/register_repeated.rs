//! REGISTER_BROKER of a body that repeats the broker's last one but for its
//! DataVersion, applied without being decoded: for any sequence of
//! registrations and admin writes, the table, the route answers and every
//! response are those of a server that decodes every body in full.

use proptest::prelude::*;
use rmq_protocol::{BodyFlavor, TopicConfigSerializeWrapper};
use rmq_wire::RequestCode as C;

use super::*;
use crate::handlers::broker;
use crate::request::RegisterRequest;
use crate::route::{BrokerKey, LiveBroker, Millis};

/// Cluster, broker name, address, id: masters and a slave, two sharing an
/// address under two names, one under two clusters.
const BROKERS: [(&str, &str, &str, i64); 5] = [
    ("c", "a", "10.0.0.1:10911", 0),
    ("c", "a", "10.0.0.2:10911", 1),
    ("c", "b", "10.0.0.1:10911", 0),
    ("d", "a", "10.0.0.1:10911", 0),
    ("c", "b", "10.0.0.3:10911", 0),
];

const TOPICS: [&str; 6] = ["T0", "T1", "T2", "T3", "T4", "T5"];

/// A topic of a body: name, perm, queues.
type Sent = (usize, i32, i32);

/// What a broker last sent: its topics in order, filter servers.
#[derive(Debug, Clone, Default)]
struct Body {
    topics: Vec<Sent>,
    filters: bool,
}

fn topic_json(&(topic, perm, queues): &Sent) -> String {
    let name = TOPICS[topic];
    format!(
        r#""{name}":{{"attributes":{{}},"order":false,"perm":{perm},"readQueueNums":{queues},"topicFilterType":"SINGLE_TAG","topicName":"{name}","topicSysFlag":0,"writeQueueNums":{queues}}}"#
    )
}

impl Body {
    /// The JSON body as a Java broker writes it, topics in the given order.
    fn json(&self, version: DataVersion) -> Vec<u8> {
        let filters = if self.filters { r#""10.0.0.9:1""# } else { "" };
        let table: Vec<String> = self.topics.iter().map(topic_json).collect();
        format!(
            r#"{{"filterServerList":[{filters}],"topicConfigSerializeWrapper":{{"dataVersion":{{"counter":{},"stateVersion":{},"timestamp":{}}},"topicConfigTable":{{{}}},"topicQueueMappingDetailMap":{{}},"topicQueueMappingInfoMap":{{}}}}}}"#,
            version.counter,
            version.state_version,
            version.timestamp,
            table.join(",")
        )
        .into_bytes()
    }

    fn compressed(&self, version: DataVersion) -> Vec<u8> {
        RegisterBrokerBody {
            filter_server_list: Some(if self.filters {
                vec!["10.0.0.9:1".to_owned()]
            } else {
                Vec::new()
            }),
            topic_config_serialize_wrapper: TopicConfigSerializeWrapper {
                data_version: version,
                topic_config_table: self
                    .topics
                    .iter()
                    .map(|&(topic, perm, queues)| {
                        let mut config = TopicConfig::new(TOPICS[topic]);
                        config.perm = perm;
                        config.read_queue_nums = queues;
                        config.write_queue_nums = queues;
                        (config.topic_name.clone(), config)
                    })
                    .collect(),
                ..TopicConfigSerializeWrapper::default()
            },
        }
        .to_compressed(BodyFlavor::V5)
    }
}

#[derive(Debug, Clone)]
enum Op {
    /// A broker registers a body of its own.
    Register {
        broker: usize,
        body: Body,
        compressed: bool,
        other_ha: bool,
    },
    /// A broker sends the body `from` last sent (itself or another),
    /// reversed or not, with a new DataVersion or the same.
    Repeat {
        broker: usize,
        from: usize,
        reversed: bool,
        new_version: bool,
        other_ha: bool,
    },
    Wipe(usize),
    AddPerm(usize),
    Delete(usize),
}

fn sent() -> impl Strategy<Value = Sent> {
    (
        0..TOPICS.len(),
        prop::sample::select(vec![6, 4, 2]),
        1..3i32,
    )
}

fn op() -> impl Strategy<Value = Op> {
    let broker = 0..BROKERS.len();
    prop_oneof![
        3 => (
            broker.clone(),
            prop::collection::vec(sent(), 0..5),
            any::<bool>(),
            prop::bool::weighted(0.2),
            prop::bool::weighted(0.2),
        )
            .prop_map(|(broker, topics, filters, compressed, other_ha)| Op::Register {
                broker,
                body: Body { topics, filters },
                compressed,
                other_ha,
            }),
        6 => (
            broker.clone(),
            broker,
            prop::bool::weighted(0.2),
            prop::bool::weighted(0.8),
            prop::bool::weighted(0.1),
        )
            .prop_map(|(broker, from, reversed, new_version, other_ha)| {
                // Mostly a broker repeating itself.
                let from = if from % 2 == 0 { broker } else { from };
                Op::Repeat {
                    broker,
                    from,
                    reversed,
                    new_version,
                    other_ha,
                }
            }),
        1 => (0..2usize).prop_map(Op::Wipe),
        1 => (0..2usize).prop_map(Op::AddPerm),
        1 => (0..TOPICS.len()).prop_map(Op::Delete),
    ]
}

fn register_request(
    broker: usize,
    body: Vec<u8>,
    compressed: bool,
    other_ha: bool,
) -> RemotingCommand {
    let (cluster, name, addr, id) = BROKERS[broker];
    let id = id.to_string();
    let crc = body_crc32(&body).to_string();
    let ha = if other_ha { "10.0.0.8:1" } else { "10.0.0.7:1" };
    let compressed = compressed.to_string();
    let mut request = request(
        C::RegisterBroker,
        &[
            ("brokerName", name),
            ("brokerAddr", addr),
            ("clusterName", cluster),
            ("haServerAddr", ha),
            ("brokerId", id.as_str()),
            ("enableActingMaster", "false"),
            ("compressed", compressed.as_str()),
            ("bodyCrc32", crc.as_str()),
        ],
    )
    .with_body(body);
    request.version = 500;
    request
}

/// REGISTER_BROKER at `now` on `conn`, with the shortcut, or `in_full`
/// always decoding the body (the oracle).
fn register(
    f: &Fixture,
    conn: &ConnectionInfo,
    request: &RemotingCommand,
    now: Millis,
    in_full: bool,
) -> RemotingCommand {
    let s = &f.state;
    let answered = RegisterRequest::read(request, conn, &s.limits).and_then(|read| {
        let cluster = s.cluster.as_deref();
        if in_full {
            broker::register_in_full(
                &s.routes,
                &s.kv,
                &s.config,
                &s.notifier,
                cluster,
                &read,
                now,
            )
        } else {
            broker::register(
                &s.routes,
                &s.kv,
                &s.config,
                &s.notifier,
                cluster,
                &read,
                now,
            )
        }
    });
    match answered {
        Ok(answer) => answer.into_response(request),
        Err(error) => error.into_response(request),
    }
}

/// Everything of the table but the fingerprints, which are seeded per
/// table, and the route answers.
fn state_of(f: &Fixture) -> String {
    let routes = &f.state.routes;
    let mut out = {
        let table = routes.read();
        let mut live: Vec<(BrokerKey, LiveBroker)> = table
            .live_brokers()
            .map(|(key, live)| {
                let mut live = live.clone();
                live.held_topics = None;
                (key.clone(), live)
            })
            .collect();
        live.sort_by(|a, b| a.0.cmp(&b.0));
        format!(
            "snapshot {:?}\nlive {live:?}\ngeneration {} edits {} changes {}\ncluster info {:?}\n",
            String::from_utf8_lossy(&table.snapshot()),
            table.generation(),
            table.topic_edits(),
            routes.changes(),
            table.cluster_info(),
        )
    };
    for topic in TOPICS {
        let route = f.call(&request(C::GetRouteInfoByTopic, &[("topic", topic)]));
        out.push_str(&format!("{topic}: {route:?}\n"));
    }
    out
}

fn run(ops: &[Op], delete_missing: bool) -> Result<usize, TestCaseError> {
    let configure = |config: &mut crate::config::NamesrvConfig| {
        config.delete_topic_with_broker_registration = delete_missing;
    };
    let (shortcut, oracle) = (Fixture::with(configure), Fixture::with(configure));
    let mut last: Vec<Body> = vec![Body::default(); BROKERS.len()];
    let mut counter = 0;
    let mut repeated = 0;
    for (step, op) in ops.iter().enumerate() {
        let now = 1_000 * (step as Millis + 1);
        let request = match op {
            Op::Register {
                broker,
                body,
                compressed,
                other_ha,
            } => {
                counter += 1;
                let version = DataVersion::new(counter, 0, 7);
                last[*broker] = body.clone();
                let bytes = if *compressed {
                    body.compressed(version)
                } else {
                    body.json(version)
                };
                Some(register_request(*broker, bytes, *compressed, *other_ha))
            }
            Op::Repeat {
                broker,
                from,
                reversed,
                new_version,
                other_ha,
            } => {
                counter += i64::from(*new_version);
                let mut body = last[*from].clone();
                if *reversed {
                    body.topics.reverse();
                }
                last[*broker] = body.clone();
                let bytes = body.json(DataVersion::new(counter, 0, 7));
                Some(register_request(*broker, bytes, false, *other_ha))
            }
            Op::Wipe(name) | Op::AddPerm(name) => {
                let code = match op {
                    Op::Wipe(_) => C::WipeWritePermOfBroker,
                    _ => C::AddWritePermOfBroker,
                };
                let name = ["a", "b"][*name];
                let admin = request(code, &[("brokerName", name)]);
                prop_assert_eq!(shortcut.call(&admin), oracle.call(&admin));
                None
            }
            Op::Delete(topic) => {
                let admin = request(C::DeleteTopicInNamesrv, &[("topic", TOPICS[*topic])]);
                prop_assert_eq!(shortcut.call(&admin), oracle.call(&admin));
                None
            }
        };
        if let Some(request) = request {
            if is_repeat(&shortcut, &request) {
                repeated += 1;
            }
            // One connection for both: the table records it.
            let conn = &shortcut.conn;
            let answered = register(&shortcut, conn, &request, now, false);
            let expected = register(&oracle, conn, &request, now, true);
            prop_assert_eq!(answered, expected, "step {}: {:?}", step, op);
        }
        prop_assert_eq!(
            state_of(&shortcut),
            state_of(&oracle),
            "step {}: {:?}",
            step,
            op
        );
    }
    Ok(repeated)
}

/// Whether `request` would be applied by the shortcut.
fn is_repeat(f: &Fixture, request: &RemotingCommand) -> bool {
    let Ok(read) = RegisterRequest::read(request, &f.conn, &f.state.limits) else {
        return false;
    };
    let (cluster, name, addr, id) = (
        request.ext("clusterName").unwrap_or_default(),
        request.ext("brokerName").unwrap_or_default(),
        request.ext("brokerAddr").unwrap_or_default(),
        request.ext("brokerId").unwrap_or_default(),
    );
    id == "0"
        && !f.state.config.read().delete_topic_with_broker_registration
        && read.repeated_body().is_some_and(|body| {
            f.state
                .routes
                .read()
                .held_body(&BrokerKey::new(cluster, addr), name, body.fingerprint)
                .is_some()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn a_repeated_body_is_applied_as_decoding_it_would(
        ops in prop::collection::vec(op(), 1..40),
        delete_missing in prop::bool::weighted(0.2),
    ) {
        run(&ops, delete_missing)?;
    }
}

#[test]
fn a_master_repeating_its_body_takes_the_shortcut_until_the_topics_are_written() {
    let body = Body {
        topics: vec![(0, 6, 4), (1, 6, 4)],
        filters: false,
    };
    let repeat = |broker: usize| Op::Repeat {
        broker,
        from: broker,
        reversed: false,
        new_version: true,
        other_ha: false,
    };
    let ops = [
        Op::Register {
            broker: 0,
            body: body.clone(),
            compressed: false,
            other_ha: false,
        },
        repeat(0),
        repeat(0),
        Op::Wipe(0),
        // Wiped: its topics are not written as sent, so in full.
        repeat(0),
        Op::AddPerm(0),
        // Written since: in full, then repeated again.
        repeat(0),
        repeat(0),
        // The same bytes from a master of another name at the same address.
        Op::Repeat {
            broker: 2,
            from: 0,
            reversed: false,
            new_version: true,
            other_ha: false,
        },
        Op::Register {
            broker: 4,
            body,
            compressed: true,
            other_ha: false,
        },
        repeat(4),
    ];
    assert_eq!(run(&ops, false).unwrap(), 3);
    assert_eq!(
        run(&ops, true).unwrap(),
        0,
        "deleteTopicWithBrokerRegistration needs the list"
    );
}
