//! `cluster list` and the `broker` commands: GET_BROKER_CLUSTER_INFO (106),
//! WIPE_WRITE_PERM_OF_BROKER (205), ADD_WRITE_PERM_OF_BROKER (327) and
//! GET_BROKER_MEMBER_GROUP (901).

use rmq_protocol::headers::{
    AddWritePermOfBrokerRequestHeader, AddWritePermOfBrokerResponseHeader,
    GetBrokerMemberGroupRequestHeader, WipeWritePermOfBrokerRequestHeader,
    WipeWritePermOfBrokerResponseHeader,
};
use rmq_protocol::{ClusterInfo, GetBrokerMemberGroupResponseBody};
use rmq_wire::{RemotingCommand, RequestCode};
use serde::Serialize;

use super::{member_cells, Target};
use crate::error::CallError;
use crate::namesrv::{fan_out, request};
use crate::output::{tabulate, Report};

/// `cluster list`: one row per broker address, grouped by cluster
/// (mqadmin clusterList's first columns).
pub async fn list(target: Target<'_>) -> Report {
    let answers = fan_out(target.addrs, target.connect, |session| async move {
        session
            .call_json::<ClusterInfo>(RequestCode::GetBrokerClusterInfo, None)
            .await
    })
    .await;
    tabulate(
        "cluster list",
        &answers,
        &["#Cluster Name", "#Broker Name", "#BID", "#Addr"],
        cluster_rows,
    )
}

fn cluster_rows(info: &ClusterInfo) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for (cluster, broker_names) in &info.cluster_addr_table {
        for broker_name in broker_names {
            let members = info
                .broker_addr_table
                .get(broker_name)
                .map(|group| member_cells(&group.broker_addrs))
                .unwrap_or_else(|| member_cells(&Default::default()));
            for [id, addr] in members {
                rows.push(vec![cluster.clone(), broker_name.clone(), id, addr]);
            }
        }
    }
    rows
}

/// Which write-permission request to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermChange {
    /// WIPE_WRITE_PERM_OF_BROKER.
    Wipe,
    /// ADD_WRITE_PERM_OF_BROKER.
    Add,
}

/// How many topics a NameServer changed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct PermResult {
    broker_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    wipe_topic_count: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    add_topic_count: Option<i32>,
}

/// `broker wipe-write-perm` / `broker add-write-perm`.
///
/// A NameServer answers both with a count of 0 for a broker name it has
/// never heard of, the same as for a known broker without topics, so a typo
/// would look like success. Each NameServer is asked for its cluster view
/// first, and one that does not list the broker is a failure naming it,
/// with nothing sent to change.
pub async fn write_perm(target: Target<'_>, broker_name: &str, change: PermChange) -> Report {
    let command = request_for(change, broker_name);
    let answers = fan_out(target.addrs, target.connect, |session| {
        let command = command.clone();
        async move {
            let info = session
                .call_json::<ClusterInfo>(RequestCode::GetBrokerClusterInfo, None)
                .await?;
            if !info.broker_addr_table.contains_key(broker_name) {
                return Err(CallError::NotFound(format!(
                    "no broker named {broker_name:?} is registered with this NameServer; \
                     `cluster list` shows the broker names"
                )));
            }
            let response = session.call(command).await?;
            let unreadable = |e: rmq_wire::HeaderError| CallError::Decode(e.to_string());
            let mut result = PermResult {
                broker_name: broker_name.to_owned(),
                wipe_topic_count: None,
                add_topic_count: None,
            };
            match change {
                PermChange::Wipe => {
                    let header: WipeWritePermOfBrokerResponseHeader =
                        response.header().map_err(unreadable)?;
                    result.wipe_topic_count = Some(header.wipe_topic_count);
                }
                PermChange::Add => {
                    let header: AddWritePermOfBrokerResponseHeader =
                        response.header().map_err(unreadable)?;
                    result.add_topic_count = Some(header.add_topic_count);
                }
            }
            Ok(result)
        }
    })
    .await;
    let (name, column) = match change {
        PermChange::Wipe => ("broker wipe-write-perm", "#Wiped Topics"),
        PermChange::Add => ("broker add-write-perm", "#Added Topics"),
    };
    tabulate(name, &answers, &["#Broker Name", column], |result| {
        let count = result.wipe_topic_count.or(result.add_topic_count);
        vec![vec![
            result.broker_name.clone(),
            count.map_or_else(|| "-".to_owned(), |n| n.to_string()),
        ]]
    })
}

fn request_for(change: PermChange, broker_name: &str) -> RemotingCommand {
    let broker_name = broker_name.to_owned();
    match change {
        PermChange::Wipe => request(
            RequestCode::WipeWritePermOfBroker,
            Some(&WipeWritePermOfBrokerRequestHeader { broker_name }),
        ),
        PermChange::Add => request(
            RequestCode::AddWritePermOfBroker,
            Some(&AddWritePermOfBrokerRequestHeader { broker_name }),
        ),
    }
}

/// `broker member-group`: the group's members by broker id.
pub async fn member_group(target: Target<'_>, cluster_name: &str, broker_name: &str) -> Report {
    let header = GetBrokerMemberGroupRequestHeader {
        cluster_name: cluster_name.to_owned(),
        broker_name: broker_name.to_owned(),
    };
    let header = &header;
    let answers = fan_out(target.addrs, target.connect, |session| async move {
        session
            .call_json::<GetBrokerMemberGroupResponseBody>(
                RequestCode::GetBrokerMemberGroup,
                Some(header),
            )
            .await
    })
    .await;
    tabulate(
        "broker member-group",
        &answers,
        &["#Cluster Name", "#Broker Name", "#BID", "#Addr"],
        |body| {
            let group = &body.broker_member_group;
            if group.broker_addrs.is_empty() {
                return Vec::new();
            }
            member_cells(&group.broker_addrs)
                .into_iter()
                .map(|[id, addr]| vec![group.cluster.clone(), group.broker_name.clone(), id, addr])
                .collect()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmq_protocol::JavaJson;

    #[test]
    fn cluster_rows_follow_the_cluster_table() {
        let info = ClusterInfo::from_json(
            br#"{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"127.0.0.1:10911",1:"127.0.0.1:10921"},"brokerName":"broker-a","cluster":"C","enableActingMaster":false}},"clusterAddrTable":{"C":["broker-a","ghost"]}}"#,
        )
        .unwrap();
        let rows = cluster_rows(&info);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[1], ["C", "broker-a", "1", "127.0.0.1:10921"]);
        assert_eq!(rows[2], ["C", "ghost", "-", "-"]);
    }

    #[test]
    fn perm_requests_name_the_broker() {
        let wipe = request_for(PermChange::Wipe, "broker-a");
        assert_eq!(wipe.code, 205);
        assert_eq!(wipe.ext("brokerName"), Some("broker-a"));
        assert_eq!(request_for(PermChange::Add, "b").code, 327);
    }
}
