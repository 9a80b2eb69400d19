//! `namesrv diff`: does every NameServer hold the same routes?
//!
//! NameServers never talk to each other; each learns the cluster only from
//! broker registrations, so a broker that fails to reach one of them leaves
//! the NameServers silently disagreeing (apache/rocketmq#4807). This module
//! takes a [`Snapshot`] of each NameServer (cluster info, the topic list, the
//! route of every topic), flattens it into facts `(object, field) → value`
//! and reports every fact on which they differ. Route `brokerDatas` are not
//! compared separately: the NameServer builds them from the broker table,
//! which is compared.
//!
//! Waymark NameServers can form one cluster that converges by itself; the
//! diff asks each NameServer for its view of that cluster too
//! (WAYMARK_GET_CLUSTER_STATUS) and names, for every difference, its cause
//! ([`cause`]). A broker relayed from another node yields the same facts
//! as one registered directly, so a converged cluster shows none.

pub mod cause;
pub mod role;

use std::collections::{BTreeMap, BTreeSet};

use futures::stream::{self, StreamExt};
use rmq_protocol::cluster_status::ClusterStatusBody;
use rmq_protocol::headers::GetRouteInfoRequestHeader;
use rmq_protocol::{ClusterInfo, TopicList, TopicRouteData};
use rmq_wire::{RequestCode, ResponseCode};
use serde::{Serialize, Serializer};
use serde_json::{json, Map, Value};

pub use cause::Cause;
pub use role::ClusterRole;

use crate::commands::Target;
use crate::error::{CallError, EXIT_FAILED, EXIT_OK, EXIT_PARTIAL};
use crate::namesrv::{fan_out, request, Answer, Session};
use crate::output::{answer_json, error_line, perm, Report, Server, Table};

/// Route queries in flight at once on one connection.
const ROUTE_CONCURRENCY: usize = 16;

/// `(object, field)`, e.g. `("broker broker-a", "addr 0")`.
type Key = (String, String);

/// What one NameServer knows, flattened.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Snapshot {
    /// Cluster names.
    pub clusters: usize,
    /// Broker groups.
    pub brokers: usize,
    /// Topics in its topic list.
    pub topics: usize,
    /// Every fact; compared, not printed.
    #[serde(skip)]
    pub facts: BTreeMap<Key, String>,
    /// What it says of its NameServer cluster.
    #[serde(serialize_with = "cluster_json")]
    pub cluster: ClusterRole,
}

fn cluster_json<S: Serializer>(role: &ClusterRole, serializer: S) -> Result<S::Ok, S::Error> {
    role.to_json().serialize(serializer)
}

/// One fact on which the NameServers differ; `values` follows the order of
/// the NameServers that answered, `None` where a NameServer lacks the fact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// `cluster <name>`, `broker <name>` or `topic <name>`.
    pub object: String,
    /// e.g. `member broker-a`, `addr 0`, `perm broker-a`.
    pub field: String,
    /// One value per answering NameServer.
    pub values: Vec<Option<String>>,
}

/// Runs the diff against every NameServer of `target`.
pub async fn run(target: Target<'_>) -> Report {
    let answers = fan_out(target.addrs, target.connect, snapshot).await;
    report(&answers)
}

/// Fetches one NameServer's view of its cluster, its cluster info, topic
/// list and every route.
///
/// # Errors
/// Any failure except TOPIC_NOT_EXIST for a listed topic (a topic removed
/// meanwhile), named by the step it happened in: a partial snapshot would
/// show false differences. An error answer to the cluster status is no
/// failure: it is what the status says ([`ClusterRole`]).
pub async fn snapshot(session: Session) -> Result<Snapshot, CallError> {
    let info: ClusterInfo = session
        .call_json(RequestCode::GetBrokerClusterInfo, None)
        .await
        .map_err(|e| e.in_step("cluster info"))?;
    // Asked once the NameServer has answered: a silence then is its way of
    // not knowing the code, not a dead connection.
    let cluster = cluster_role(&session).await?;
    let list: TopicList = session
        .call_json(RequestCode::GetAllTopicListFromNameserver, None)
        .await
        .map_err(|e| e.in_step("topic list"))?;
    let topics: BTreeSet<String> = list.topic_list.into_iter().collect();
    let session = &session;
    let routes: Vec<_> = stream::iter(&topics)
        .map(|topic| async move { (topic, route(session, topic).await) })
        .buffered(ROUTE_CONCURRENCY)
        .collect()
        .await;
    let mut facts = cluster_facts(&info);
    for (topic, route) in routes {
        let route = route.map_err(|e| e.in_step(format!("route of topic {topic}")))?;
        topic_facts(&mut facts, topic, route.as_ref());
    }
    Ok(Snapshot {
        clusters: info.cluster_addr_table.len(),
        brokers: info.broker_addr_table.len(),
        topics: topics.len(),
        facts,
        cluster,
    })
}

/// WAYMARK_GET_CLUSTER_STATUS: a cluster node's view; a NameServer that
/// does not know the code (Java's, or Waymark's with its cluster off) is no
/// cluster node, whether it says so (REQUEST_CODE_NOT_SUPPORTED: Java 5.x,
/// Waymark) or answers nothing (Java 4.x's NameServer leaves a request code
/// it does not know unanswered, so the call times out).
///
/// # Errors
/// Transport failures other than that time-out.
async fn cluster_role(session: &Session) -> Result<ClusterRole, CallError> {
    let response = match session
        .invoke(request(RequestCode::WaymarkGetClusterStatus, None))
        .await
    {
        Ok(response) => response,
        Err(CallError::Timeout(_)) => return Ok(ClusterRole::NotClusterNode),
        Err(error) => return Err(error.in_step("cluster status")),
    };
    Ok(match response.response_code() {
        ResponseCode::Success => {
            let body = response.body.as_deref().unwrap_or_default();
            match ClusterStatusBody::from_json(body) {
                Ok(body) if body.enabled && body.node.is_some() => {
                    ClusterRole::Node(Box::new(body))
                }
                Ok(_) => ClusterRole::NotClusterNode,
                Err(error) => ClusterRole::Unknown(format!("unreadable answer: {error}")),
            }
        }
        ResponseCode::RequestCodeNotSupported => ClusterRole::NotClusterNode,
        _ => ClusterRole::Unknown(
            CallError::Response {
                code: response.code,
                remark: response.remark,
            }
            .to_string(),
        ),
    })
}

async fn route(session: &Session, topic: &str) -> Result<Option<TopicRouteData>, CallError> {
    let header = GetRouteInfoRequestHeader {
        topic: topic.to_owned(),
        ..Default::default()
    };
    match session
        .call_json(RequestCode::GetRouteInfoByTopic, Some(&header))
        .await
    {
        Ok(route) => Ok(Some(route)),
        Err(e) if e.response_code() == Some(ResponseCode::TopicNotExist.into()) => Ok(None),
        Err(e) => Err(e),
    }
}

fn put(facts: &mut BTreeMap<Key, String>, object: &str, field: &str, value: impl Into<String>) {
    facts.insert((object.to_owned(), field.to_owned()), value.into());
}

/// Facts of the cluster and broker tables.
pub fn cluster_facts(info: &ClusterInfo) -> BTreeMap<Key, String> {
    let mut facts = BTreeMap::new();
    for (cluster, names) in &info.cluster_addr_table {
        for name in names {
            put(
                &mut facts,
                &format!("cluster {cluster}"),
                &format!("member {name}"),
                "yes",
            );
        }
    }
    for (name, group) in &info.broker_addr_table {
        let object = format!("broker {name}");
        put(&mut facts, &object, "cluster", group.cluster.as_str());
        for (id, addr) in &group.broker_addrs {
            put(&mut facts, &object, &format!("addr {id}"), addr.as_str());
        }
        if let Some(zone) = &group.zone_name {
            put(&mut facts, &object, "zone", zone.as_str());
        }
        put(
            &mut facts,
            &object,
            "actingMaster",
            group.enable_acting_master.to_string(),
        );
    }
    facts
}

/// Facts of one listed topic; `route` is `None` when the NameServer lists
/// the topic but has no route for it.
pub fn topic_facts(facts: &mut BTreeMap<Key, String>, topic: &str, route: Option<&TopicRouteData>) {
    let object = format!("topic {topic}");
    put(facts, &object, "listed", "yes");
    let Some(route) = route else {
        put(facts, &object, "route", "none");
        return;
    };
    for queue in &route.queue_datas {
        let name = &queue.broker_name;
        let queues = format!(
            "read={} write={} sysFlag={}",
            queue.read_queue_nums, queue.write_queue_nums, queue.topic_sys_flag
        );
        put(facts, &object, &format!("queues {name}"), queues);
        put(facts, &object, &format!("perm {name}"), perm(queue.perm));
    }
    if let Some(conf) = &route.order_topic_conf {
        put(facts, &object, "orderConf", conf.as_str());
    }
}

/// Every fact whose value is not the same on all `snapshots`.
pub fn differences(snapshots: &[&Snapshot]) -> Vec<Difference> {
    let keys: BTreeSet<&Key> = snapshots.iter().flat_map(|s| s.facts.keys()).collect();
    keys.into_iter()
        .filter_map(|key| {
            let values: Vec<Option<String>> = snapshots
                .iter()
                .map(|s| s.facts.get(key).cloned())
                .collect();
            let agree = values.windows(2).all(|pair| pair[0] == pair[1]);
            (!agree).then(|| Difference {
                object: key.0.clone(),
                field: key.1.clone(),
                values,
            })
        })
        .collect()
}

/// Builds the report: a summary row per NameServer, the verdict, the table of
/// differences (one column per NameServer that answered, then the numbers
/// of their causes), the causes, and the exit code.
pub fn report(answers: &[Answer<Snapshot>]) -> Report {
    let answered: Vec<(&str, &Snapshot)> = answers
        .iter()
        .filter_map(|a| a.result.as_ref().ok().map(|s| (a.addr.as_str(), s)))
        .collect();
    let errors: Vec<String> = answers
        .iter()
        .filter_map(|a| {
            a.result
                .as_ref()
                .err()
                .map(|e| error_line(Server::NameServer, &a.addr, e))
        })
        .collect();
    let snapshots: Vec<&Snapshot> = answered.iter().map(|(_, s)| *s).collect();
    let diffs = differences(&snapshots);
    let views: Vec<cause::View<'_>> = answered
        .iter()
        .map(|(label, snapshot)| cause::View { label, snapshot })
        .collect();
    let diff_causes: Vec<Vec<Cause>> = diffs.iter().map(|d| cause::causes(&views, d)).collect();
    // Each cause once, numbered in order of first appearance.
    let mut legend: Vec<&Cause> = Vec::new();
    for cause in diff_causes.iter().flatten() {
        if !legend.contains(&cause) {
            legend.push(cause);
        }
    }
    let (total, ok) = (answers.len(), answered.len());
    let exit = match ok {
        0 => EXIT_FAILED,
        _ if !diffs.is_empty() || ok < total => EXIT_PARTIAL,
        _ => EXIT_OK,
    };

    let mut text = String::new();
    if ok > 0 {
        let mut summary = Table::new([
            "#NameServer",
            "#Clusters",
            "#Brokers",
            "#Topics",
            "#Waymark Cluster",
        ]);
        for (addr, s) in &answered {
            let counts = [s.clusters, s.brokers, s.topics].map(|n| n.to_string());
            summary.push(
                std::iter::once(addr.to_string())
                    .chain(counts)
                    .chain(std::iter::once(s.cluster.cell()))
                    .collect(),
            );
        }
        text.push_str(&summary.render());
        text.push('\n');
    }
    let failed = total - ok;
    let verdict = if ok < 2 {
        format!("Cannot compare: only {ok} of {total} NameServers answered.\n")
    } else if diffs.is_empty() && failed == 0 {
        format!("The {ok} NameServers agree.\n")
    } else if diffs.is_empty() {
        format!("The {ok} NameServers that answered agree; {failed} failed.\n")
    } else {
        format!("The NameServers disagree: {} differences.\n", diffs.len())
    };
    text.push_str(&verdict);
    if !diffs.is_empty() {
        let header = ["#Object".to_owned(), "#Field".to_owned()]
            .into_iter()
            .chain(answered.iter().map(|(addr, _)| format!("#{addr}")))
            .chain(std::iter::once("#Cause".to_owned()));
        let mut table = Table::new(header);
        for (d, causes) in diffs.iter().zip(&diff_causes) {
            let values = d
                .values
                .iter()
                .map(|v| v.clone().unwrap_or_else(|| "-".into()));
            let numbers: Vec<String> = causes
                .iter()
                .filter_map(|c| legend.iter().position(|l| *l == c))
                .map(|n| (n + 1).to_string())
                .collect();
            table.push(
                [d.object.clone(), d.field.clone()]
                    .into_iter()
                    .chain(values)
                    .chain(std::iter::once(numbers.join(",")))
                    .collect(),
            );
        }
        text.push_str(&table.render());
        text.push_str("\nCauses:\n");
        for (n, cause) in legend.iter().enumerate() {
            text.push_str(&format!("{}: {}\n", n + 1, cause.text()));
        }
    }

    let differences: Vec<Value> = diffs
        .iter()
        .zip(&diff_causes)
        .map(|(d, causes)| {
            let values: Map<String, Value> = answered
                .iter()
                .zip(&d.values)
                .map(|((addr, _), value)| (addr.to_string(), json!(value)))
                .collect();
            let causes: Vec<Value> = causes.iter().map(Cause::to_json).collect();
            json!({ "object": d.object, "field": d.field, "values": values, "causes": causes })
        })
        .collect();
    let json = json!({
        "command": "namesrv diff",
        "exitCode": exit,
        "agree": (ok >= 2).then_some(diffs.is_empty()),
        "results": answers
            .iter()
            .map(|a| answer_json(Server::NameServer, a))
            .collect::<Vec<_>>(),
        "differences": differences,
    });
    Report {
        text,
        json,
        errors,
        exit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmq_protocol::JavaJson;

    const INFO: &[u8] = br#"{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"10.0.0.1:10911"},"brokerName":"broker-a","cluster":"C","enableActingMaster":false,"zoneName":"z1"}},"clusterAddrTable":{"C":["broker-a"]}}"#;
    const ROUTE: &[u8] = br#"{"brokerDatas":[],"filterServerTable":{},"orderTopicConf":"broker-a:4","queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}"#;

    fn snapshot(info: &[u8], topics: &[(&str, Option<&[u8]>)]) -> Snapshot {
        let info = ClusterInfo::from_json(info).unwrap();
        let mut facts = cluster_facts(&info);
        for (topic, route) in topics {
            let route = route.map(|r| TopicRouteData::from_json(r).unwrap());
            topic_facts(&mut facts, topic, route.as_ref());
        }
        Snapshot {
            clusters: 1,
            brokers: 1,
            topics: topics.len(),
            facts,
            cluster: ClusterRole::NotClusterNode,
        }
    }

    fn answer(addr: &str, result: Result<Snapshot, CallError>) -> Answer<Snapshot> {
        Answer {
            addr: addr.to_owned(),
            result,
        }
    }

    #[test]
    fn facts_cover_membership_addresses_zone_queues_perm_and_order_conf() {
        let s = snapshot(INFO, &[("T", Some(ROUTE)), ("Gone", None)]);
        let fact = |o: &str, f: &str| s.facts.get(&(o.to_owned(), f.to_owned())).cloned();
        assert_eq!(fact("cluster C", "member broker-a").as_deref(), Some("yes"));
        assert_eq!(
            fact("broker broker-a", "addr 0").as_deref(),
            Some("10.0.0.1:10911")
        );
        assert_eq!(fact("broker broker-a", "zone").as_deref(), Some("z1"));
        assert_eq!(
            fact("topic T", "queues broker-a").as_deref(),
            Some("read=4 write=4 sysFlag=0")
        );
        assert_eq!(fact("topic T", "perm broker-a").as_deref(), Some("6(RW-)"));
        assert_eq!(fact("topic T", "orderConf").as_deref(), Some("broker-a:4"));
        assert_eq!(fact("topic Gone", "route").as_deref(), Some("none"));
    }

    #[test]
    fn differences_are_per_fact_with_absent_values() {
        let full = snapshot(INFO, &[("T", Some(ROUTE))]);
        let bare = snapshot(INFO, &[]);
        assert!(differences(&[&full, &full]).is_empty());
        let diffs = differences(&[&full, &bare]);
        assert_eq!(diffs.len(), 4, "{diffs:?}");
        assert_eq!(diffs[0].object, "topic T");
        assert!(diffs
            .iter()
            .all(|d| d.values[0].is_some() && d.values[1].is_none()));
    }

    #[test]
    fn exit_codes_of_the_verdicts() {
        let s = || Ok(snapshot(INFO, &[("T", Some(ROUTE))]));
        let agree = report(&[answer("a:1", s()), answer("b:2", s())]);
        assert_eq!(
            (agree.exit, agree.json["agree"].as_bool()),
            (EXIT_OK, Some(true))
        );
        assert!(
            agree.text.ends_with("The 2 NameServers agree.\n"),
            "{}",
            agree.text
        );

        let partial = report(&[
            answer("a:1", s()),
            answer("b:2", s()),
            answer("c:3", Err(CallError::Closed)),
        ]);
        assert_eq!(partial.exit, EXIT_PARTIAL);
        assert!(partial
            .text
            .contains("The 2 NameServers that answered agree; 1 failed."));
        assert_eq!(partial.errors.len(), 1);

        let alone = report(&[
            answer("a:1", s()),
            answer("b:2", Err(CallError::Timeout(5))),
        ]);
        assert_eq!(
            (alone.exit, alone.json["agree"].as_bool()),
            (EXIT_PARTIAL, None)
        );

        let none = report(&[
            answer("a:1", Err(CallError::Closed)),
            answer("b:2", Err(CallError::Closed)),
        ]);
        assert_eq!(none.exit, EXIT_FAILED);
    }

    #[test]
    fn each_difference_names_its_causes_by_number_and_in_json() {
        let full = snapshot(INFO, &[("T", Some(ROUTE))]);
        let bare = snapshot(INFO, &[]);
        let report = report(&[answer("a:1", Ok(full)), answer("b:2", Ok(bare))]);
        let lines: Vec<&str> = report.text.lines().collect();
        assert!(
            lines[0].ends_with("#Waymark Cluster") && lines[1].ends_with("  -"),
            "{}",
            report.text
        );
        assert!(lines
            .iter()
            .any(|l| l.starts_with("#Object") && l.ends_with("#Cause")));
        // Causes are numbered as they first appear: neither is a cluster
        // node (1), and the order configuration is KV (2).
        let row = |cells: &[&str]| {
            lines
                .iter()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == cells)
        };
        assert!(
            row(&["topic", "T", "orderConf", "broker-a:4", "-", "2"]),
            "{}",
            report.text
        );
        assert!(
            row(&["topic", "T", "listed", "yes", "-", "1"]),
            "{}",
            report.text
        );
        assert!(report.text.ends_with(
            "Causes:\n1: no NameServer compared is a Waymark cluster node: each knows only the brokers registered with it\n2: an order configuration is a KV entry, kept per NameServer\n"
        ), "{}", report.text);
        let differences = report.json["differences"].as_array().unwrap();
        let order = differences
            .iter()
            .find(|d| d["field"] == "orderConf")
            .unwrap();
        assert_eq!(order["causes"][0]["kind"], "kvPerNameServer");
        assert_eq!(
            report.json["results"][1]["result"]["cluster"]["state"],
            "none"
        );
    }
}
