//! The `controller` commands: CONTROLLER_GET_METADATA_INFO (1005) of every
//! node given, and on the leader CONTROLLER_GET_SYNC_STATE_DATA (1006),
//! CONTROLLER_ELECT_MASTER (1002, an operator's designated election) and
//! CLEAN_BROKER_DATA (1011). `controller config` is `kv`'s config code with
//! the controller's request codes.
//!
//! What they show follows mqadmin getControllerMetaData, getSyncStateSet,
//! electMaster and cleanBrokerMetadata, as tables with the controller that
//! answered in the first column.

use std::collections::BTreeSet;
use std::time::{SystemTime, UNIX_EPOCH};

use rmq_protocol::headers::{
    CleanControllerBrokerDataRequestHeader, ElectMasterRequestHeader, ElectMasterResponseHeader,
};
use rmq_protocol::{
    BrokerMemberGroup, BrokerNames, BrokerReplicasInfo, ClusterInfo, Dialect,
    ElectMasterResponseBody, JavaJson, ReplicaIdentity,
};
use rmq_wire::{RequestCode, ResponseCode};
use serde::Serialize;
use serde_json::json;

use super::Target;
use crate::cli::Ids;
use crate::controller::{self, on_leader};
use crate::error::{code_name, CallError, EXIT_FAILED, EXIT_OK, EXIT_PARTIAL};
use crate::namesrv::{decode_body, fan_out, request, Answer};
use crate::output::{answer_json, error_line, tabulate_on, Report, Server};

/// `controller metadata`: what every node given says about the group.
pub async fn metadata(target: Target<'_>) -> Report {
    let answers = fan_out(target.addrs, target.connect, |session| async move {
        controller::metadata(&session).await
    })
    .await;
    tabulate_on(
        Server::Controller,
        "controller metadata",
        &answers,
        &[
            "#Group",
            "#Leader ID",
            "#Leader Addr",
            "#Is Leader",
            "#Peers",
        ],
        |m| {
            let or_dash = |value: &Option<String>| value.clone().unwrap_or_else(|| "-".into());
            let peers = if m.peers.is_empty() {
                "-".to_owned()
            } else {
                m.peers.join(";")
            };
            vec![vec![
                or_dash(&m.group),
                or_dash(&m.controller_leader_id),
                or_dash(&m.controller_leader_address),
                m.is_leader.to_string(),
                peers,
            ]]
        },
    )
}

/// `controller sync-state-set`: the named broker sets, or those of
/// `cluster` as the NameServers list them, from the leader.
pub async fn sync_state_set(
    target: Target<'_>,
    broker_names: &[String],
    cluster: Option<&str>,
) -> Report {
    const COMMAND: &str = "controller sync-state-set";
    let mut names: Vec<String> = Vec::new();
    let mut lookup = None;
    match cluster {
        None => {
            for name in broker_names.iter().map(|n| n.trim()) {
                if !name.is_empty() && !names.iter().any(|known| known == name) {
                    names.push(name.to_owned());
                }
            }
        }
        Some(cluster) => {
            let answers = cluster_members(target, cluster).await;
            let union: BTreeSet<&String> = answers
                .iter()
                .filter_map(|a| a.result.as_ref().ok())
                .flatten()
                .collect();
            names = union.into_iter().cloned().collect();
            if names.is_empty() {
                let missing = format!("cluster {cluster} is not in its cluster table");
                let answers: Vec<_> = answers
                    .into_iter()
                    .map(|a| Answer {
                        addr: a.addr,
                        result: a
                            .result
                            .and_then(|_| Err(CallError::NotFound(missing.clone()))),
                    })
                    .collect();
                let nothing = Report {
                    text: String::new(),
                    json: json!({ "command": COMMAND, "exitCode": EXIT_FAILED, "results": [] }),
                    errors: Vec::new(),
                    exit: EXIT_FAILED,
                };
                return with_lookup(nothing, &answers);
            }
            lookup = Some(answers);
        }
    }
    let body = BrokerNames(names.clone()).to_json(Dialect::Default);
    let command = request(RequestCode::ControllerGetSyncStateData, None).with_body(body);
    let answers = on_leader(target.addrs, target.connect, |session| {
        let command = command.clone();
        async move {
            let response = session.call(command).await?;
            decode_body::<BrokerReplicasInfo>(&response)
        }
    })
    .await;
    let report = tabulate_on(
        Server::Controller,
        COMMAND,
        &answers,
        &[
            "#Broker Name",
            "#Master BID",
            "#Master Addr",
            "#Master Epoch",
            "#SSS Epoch",
            "#BID",
            "#Addr",
            "#In Sync",
            "#Alive",
        ],
        |info| replica_rows(&names, info),
    );
    match lookup {
        Some(answers) => with_lookup(report, &answers),
        None => report,
    }
}

/// The broker names of `cluster` according to each NameServer (empty when
/// it does not list the cluster).
async fn cluster_members(target: Target<'_>, cluster: &str) -> Vec<Answer<Vec<String>>> {
    fan_out(target.namesrvs, target.connect, |session| async move {
        let info: ClusterInfo = session
            .call_json(RequestCode::GetBrokerClusterInfo, None)
            .await
            .map_err(|e| e.in_step("cluster info"))?;
        let names = info.cluster_addr_table.get(cluster).cloned();
        Ok(names.unwrap_or_default().into_iter().collect())
    })
    .await
}

/// Adds the NameServer look-up of `--cluster` to a report: an error line per
/// NameServer that failed (exit code 1 if the rest succeeded) and
/// `"nameServers"` in the JSON document.
fn with_lookup(mut report: Report, lookup: &[Answer<Vec<String>>]) -> Report {
    let failed: Vec<String> = lookup
        .iter()
        .filter_map(|a| {
            let error = a.result.as_ref().err()?;
            Some(error_line(Server::NameServer, &a.addr, error))
        })
        .collect();
    if !failed.is_empty() && report.exit == EXIT_OK {
        report.exit = EXIT_PARTIAL;
    }
    report.errors.splice(0..0, failed);
    report.json["exitCode"] = json!(report.exit);
    report.json["nameServers"] = lookup
        .iter()
        .map(|a| answer_json(Server::NameServer, a))
        .collect();
    report
}

/// One row per replica of each asked set, by broker id, the set's master
/// and epochs repeated; `(unknown)` for a set the controller does not have.
fn replica_rows(names: &[String], info: &BrokerReplicasInfo) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for name in names {
        let Some(set) = info.replicas_info_table.get(name) else {
            rows.push(vec![name.clone(), "(unknown)".to_owned()]);
            continue;
        };
        let set_cells = [
            name.clone(),
            dash(set.master_broker_id),
            dash(set.master_address.clone()),
            set.master_epoch.to_string(),
            set.sync_state_set_epoch.to_string(),
        ];
        let mut replicas: Vec<(&ReplicaIdentity, bool)> = set
            .in_sync_replicas
            .iter()
            .map(|r| (r, true))
            .chain(set.not_in_sync_replicas.iter().map(|r| (r, false)))
            .collect();
        replicas.sort_by_key(|(replica, _)| replica.broker_id);
        if replicas.is_empty() {
            rows.push(
                set_cells
                    .iter()
                    .cloned()
                    .chain(["-".into(), "-".into()])
                    .collect(),
            );
        }
        for (replica, in_sync) in replicas {
            let replica_cells = [
                replica.broker_id.to_string(),
                replica.broker_address.clone(),
                in_sync.to_string(),
                replica.alive.to_string(),
            ];
            rows.push(set_cells.iter().cloned().chain(replica_cells).collect());
        }
    }
    rows
}

/// What the leader answered an operator's election: a new master
/// (SUCCESS), or the designated broker already is the master
/// (CONTROLLER_MASTER_STILL_EXIST, not a failure).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Election {
    code: i32,
    code_name: &'static str,
    remark: Option<String>,
    cluster_name: String,
    broker_name: String,
    master_broker_id: Option<i64>,
    master_address: Option<String>,
    master_epoch: Option<i32>,
    sync_state_set_epoch: Option<i32>,
    sync_state_set: BTreeSet<i64>,
    /// Every replica of the set; only with a new master.
    #[serde(skip_serializing_if = "Option::is_none")]
    broker_member_group: Option<BrokerMemberGroup>,
}

/// `controller elect-master`: a designated election on the leader.
pub async fn elect_master(
    target: Target<'_>,
    cluster: &str,
    broker_name: &str,
    broker_id: i64,
) -> Report {
    let header = ElectMasterRequestHeader {
        cluster_name: Some(cluster.to_owned()),
        broker_name: Some(broker_name.to_owned()),
        broker_id: Some(broker_id),
        designate_elect: Some(true),
        invoke_time: Some(now_ms()),
    };
    let command = request(RequestCode::ControllerElectMaster, Some(&header));
    let answers = on_leader(target.addrs, target.connect, |session| {
        let command = command.clone();
        async move {
            let response = session.invoke(command).await?;
            let code = response.response_code();
            if !matches!(
                code,
                ResponseCode::Success | ResponseCode::ControllerMasterStillExist
            ) {
                return Err(CallError::Response {
                    code: response.code,
                    remark: response.remark,
                });
            }
            let header: ElectMasterResponseHeader = response
                .header()
                .map_err(|e| CallError::Decode(e.to_string()))?;
            let body: ElectMasterResponseBody = match response.body {
                Some(_) => decode_body(&response)?,
                None => ElectMasterResponseBody::default(),
            };
            Ok(Election {
                code: response.code,
                code_name: code_name(response.code),
                remark: response.remark,
                cluster_name: cluster.to_owned(),
                broker_name: broker_name.to_owned(),
                master_broker_id: header.master_broker_id,
                master_address: header.master_address,
                master_epoch: header.master_epoch,
                sync_state_set_epoch: header.sync_state_set_epoch,
                sync_state_set: body.sync_state_set,
                broker_member_group: body.broker_member_group,
            })
        }
    })
    .await;
    let mut report = tabulate_on(
        Server::Controller,
        "controller elect-master",
        &answers,
        &[
            "#Cluster Name",
            "#Broker Name",
            "#Result",
            "#Master BID",
            "#Master Addr",
            "#Master Epoch",
            "#SSS Epoch",
            "#SyncStateSet",
        ],
        |e| {
            let members: Vec<String> = e.sync_state_set.iter().map(i64::to_string).collect();
            vec![vec![
                e.cluster_name.clone(),
                e.broker_name.clone(),
                e.code_name.to_owned(),
                dash(e.master_broker_id),
                dash(e.master_address.clone()),
                dash(e.master_epoch),
                dash(e.sync_state_set_epoch),
                if members.is_empty() {
                    "-".to_owned()
                } else {
                    members.join(",")
                },
            ]]
        },
    );
    for election in answers.iter().filter_map(|a| a.result.as_ref().ok()) {
        if election.code != i32::from(ResponseCode::Success) {
            let note = CallError::Response {
                code: election.code,
                remark: election.remark.clone(),
            };
            report.text.push_str(&format!("\n{note}\n"));
        }
    }
    report
}

/// What `controller clean-broker-metadata` asked the leader to remove.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Cleaned {
    cluster_name: String,
    broker_name: String,
    /// `None`: the whole set.
    broker_ids: Option<Vec<i64>>,
    clean_living_broker: bool,
}

/// `controller clean-broker-metadata`: CLEAN_BROKER_DATA on the leader.
pub async fn clean_broker_metadata(
    target: Target<'_>,
    cluster: &str,
    broker_name: &str,
    broker_ids: Option<&Ids>,
    clean_living_broker: bool,
) -> Report {
    let header = CleanControllerBrokerDataRequestHeader {
        cluster_name: Some(cluster.to_owned()),
        broker_name: broker_name.to_owned(),
        broker_controller_ids_to_clean: broker_ids.map(Ids::to_wire),
        is_clean_living_broker: clean_living_broker,
        invoke_time: now_ms(),
    };
    let command = request(RequestCode::CleanBrokerData, Some(&header));
    let cleaned = Cleaned {
        cluster_name: cluster.to_owned(),
        broker_name: broker_name.to_owned(),
        broker_ids: broker_ids.map(|ids| ids.0.clone()),
        clean_living_broker,
    };
    let cleaned = &cleaned;
    let answers = on_leader(target.addrs, target.connect, |session| {
        let command = command.clone();
        async move {
            session.call(command).await?;
            Ok(cleaned.clone())
        }
    })
    .await;
    tabulate_on(
        Server::Controller,
        "controller clean-broker-metadata",
        &answers,
        &["#Cluster Name", "#Broker Name", "#Broker IDs", "#Result"],
        |c| {
            let ids = c.broker_ids.as_ref().map_or_else(
                || "(all)".to_owned(),
                |ids| ids.iter().map(i64::to_string).collect::<Vec<_>>().join(";"),
            );
            vec![vec![
                c.cluster_name.clone(),
                c.broker_name.clone(),
                ids,
                "OK".to_owned(),
            ]]
        },
    )
}

/// A value, or `-` when absent.
fn dash<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

/// The wall clock in ms, for `invokeTime` (Java's controller in JRaft mode
/// judges liveness at that time).
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replica_rows_sort_by_id_and_mark_unknown_sets() {
        let info = BrokerReplicasInfo::from_json(
            br#"{"replicasInfoTable":{"broker-a":{"inSyncReplicas":[{"alive":true,"brokerAddress":"10.0.0.2:30911","brokerId":2,"brokerName":"broker-a"}],"masterAddress":"10.0.0.2:30911","masterBrokerId":2,"masterEpoch":2,"notInSyncReplicas":[{"alive":false,"brokerAddress":"10.0.0.1:30911","brokerId":1,"brokerName":"broker-a"}],"syncStateSetEpoch":3}}}"#,
        )
        .unwrap();
        let rows = replica_rows(&["broker-a".into(), "ghost".into()], &info);
        assert_eq!(
            rows[0],
            [
                "broker-a",
                "2",
                "10.0.0.2:30911",
                "2",
                "3",
                "1",
                "10.0.0.1:30911",
                "false",
                "false"
            ]
        );
        assert_eq!(
            rows[1],
            [
                "broker-a",
                "2",
                "10.0.0.2:30911",
                "2",
                "3",
                "2",
                "10.0.0.2:30911",
                "true",
                "true"
            ]
        );
        assert_eq!(rows[2], ["ghost", "(unknown)"]);
    }

    #[test]
    fn a_set_without_master_or_replicas_shows_dashes() {
        let info = BrokerReplicasInfo::from_json(
            br#"{"replicasInfoTable":{"b":{"inSyncReplicas":[],"masterEpoch":0,"notInSyncReplicas":[],"syncStateSetEpoch":0}}}"#,
        )
        .unwrap();
        assert_eq!(
            replica_rows(&["b".into()], &info),
            [["b", "-", "-", "0", "0", "-", "-"]]
        );
    }

    #[test]
    fn the_lookup_adds_name_server_errors_and_partial_exit() {
        let report = Report {
            text: String::new(),
            json: json!({ "command": "c", "exitCode": 0, "results": [] }),
            errors: Vec::new(),
            exit: EXIT_OK,
        };
        let lookup = [
            Answer {
                addr: "a:1".to_owned(),
                result: Ok(vec!["broker-a".to_owned()]),
            },
            Answer {
                addr: "b:2".to_owned(),
                result: Err(CallError::Closed),
            },
        ];
        let report = with_lookup(report, &lookup);
        assert_eq!(report.exit, EXIT_PARTIAL);
        assert_eq!(report.json["exitCode"], 1);
        assert_eq!(
            report.errors,
            ["error: NameServer b:2: connection closed before the response arrived"]
        );
        assert_eq!(report.json["nameServers"][0]["result"][0], "broker-a");
    }
}
