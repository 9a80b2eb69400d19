//! The `topic` commands: GET_ROUTEINFO_BY_TOPIC (105),
//! GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206), GET_TOPICS_BY_CLUSTER (224) and
//! DELETE_TOPIC_IN_NAMESRV (216).

use rmq_protocol::headers::{
    DeleteTopicFromNamesrvRequestHeader, GetRouteInfoRequestHeader, GetTopicsByClusterRequestHeader,
};
use rmq_protocol::{TopicList, TopicRouteData};
use rmq_wire::RequestCode;

use super::{member_cells, ok_row, Done, Target};
use crate::namesrv::{fan_out, request};
use crate::output::{perm, tabulate, Report, Table};

/// `topic route`: one row per broker address of every broker group serving
/// the topic, with that group's queue counts and perm. `--json` gives the
/// route as sent.
pub async fn route(target: Target<'_>, topic: &str) -> Report {
    let header = GetRouteInfoRequestHeader {
        topic: topic.to_owned(),
        ..Default::default()
    };
    let header = &header;
    let answers = fan_out(target.addrs, target.connect, |session| async move {
        session
            .call_json::<TopicRouteData>(RequestCode::GetRouteInfoByTopic, Some(header))
            .await
    })
    .await;
    let mut report = tabulate(
        "topic route",
        &answers,
        &[
            "#Cluster Name",
            "#Broker Name",
            "#BID",
            "#Addr",
            "#Read",
            "#Write",
            "#Perm",
        ],
        route_rows,
    );
    // An order topic's configuration (ORDER_TOPIC_CONFIG in the KV store,
    // sent with the route when orderMessageEnable=true) in a second table,
    // only when a NameServer sent one: the route table keeps mqadmin's
    // columns.
    let mut order = Table::new(["#NameServer", "#Order Conf"]);
    let mut any = false;
    for answer in &answers {
        if let Ok(TopicRouteData {
            order_topic_conf: Some(conf),
            ..
        }) = &answer.result
        {
            order.push(vec![answer.addr.clone(), conf.clone()]);
            any = true;
        }
    }
    if any {
        report.text.push('\n');
        report.text.push_str(&order.render());
    }
    report
}

/// Rows by queue data (sorted by broker name), joined with the broker data
/// of the same name; a queue without broker data shows `-` addresses.
pub fn route_rows(route: &TopicRouteData) -> Vec<Vec<String>> {
    let mut queues: Vec<_> = route.queue_datas.iter().collect();
    queues.sort_by(|a, b| a.broker_name.cmp(&b.broker_name));
    let mut rows = Vec::new();
    for queue in queues {
        let group = route
            .broker_datas
            .iter()
            .find(|group| group.broker_name == queue.broker_name);
        let cluster = group.map_or_else(|| "-".to_owned(), |group| group.cluster.clone());
        let members = member_cells(&group.map(|g| g.broker_addrs.clone()).unwrap_or_default());
        for [id, addr] in members {
            rows.push(vec![
                cluster.clone(),
                queue.broker_name.clone(),
                id,
                addr,
                queue.read_queue_nums.to_string(),
                queue.write_queue_nums.to_string(),
                perm(queue.perm),
            ]);
        }
    }
    rows
}

/// `topic list [--cluster]`: topic names, sorted.
pub async fn list(target: Target<'_>, cluster: Option<&str>) -> Report {
    let header = cluster.map(|cluster| GetTopicsByClusterRequestHeader {
        cluster: cluster.to_owned(),
    });
    let header = header.as_ref();
    let answers = fan_out(target.addrs, target.connect, |session| async move {
        let mut list: TopicList = match header {
            Some(header) => {
                session
                    .call_json(RequestCode::GetTopicsByCluster, Some(header))
                    .await?
            }
            None => {
                session
                    .call_json(RequestCode::GetAllTopicListFromNameserver, None)
                    .await?
            }
        };
        list.topic_list.sort();
        list.topic_list.dedup();
        Ok(list)
    })
    .await;
    tabulate("topic list", &answers, &["#Topic"], |list| {
        list.topic_list.iter().map(|t| vec![t.clone()]).collect()
    })
}

/// `topic delete [--cluster]`.
pub async fn delete(target: Target<'_>, topic: &str, cluster: Option<&str>) -> Report {
    let command = request(
        RequestCode::DeleteTopicInNamesrv,
        Some(&DeleteTopicFromNamesrvRequestHeader {
            topic: topic.to_owned(),
            cluster_name: cluster.map(str::to_owned),
        }),
    );
    let answers = fan_out(target.addrs, target.connect, |session| {
        let command = command.clone();
        async move { session.call(command).await.map(|_| Done {}) }
    })
    .await;
    tabulate("topic delete", &answers, &["#Result"], ok_row)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmq_protocol::JavaJson;

    #[test]
    fn route_rows_join_queues_and_brokers() {
        let route = TopicRouteData::from_json(
            br#"{"brokerDatas":[{"brokerAddrs":{"0":"127.0.0.1:10911","1":"127.0.0.1:10921"},"brokerName":"broker-b","cluster":"C","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-b","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4},{"brokerName":"broker-a","perm":4,"readQueueNums":8,"topicSysFlag":0,"writeQueueNums":2}]}"#,
        )
        .unwrap();
        let rows = route_rows(&route);
        assert_eq!(rows[0], ["-", "broker-a", "-", "-", "8", "2", "4(R--)"]);
        assert_eq!(
            rows[2],
            ["C", "broker-b", "1", "127.0.0.1:10921", "4", "4", "6(RW-)"]
        );
        assert_eq!(rows.len(), 3);
    }
}
