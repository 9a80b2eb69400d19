//! One controller request, decoded and decided without I/O: the typed
//! header and body at the edge, the broker-release check, and the
//! [`decide`](crate::decide) function for its code. The server adds what
//! needs a node: leadership, Raft, metadata and configuration.

use rmq_protocol::headers::{
    AlterSyncStateSetRequestHeader, ApplyBrokerIdRequestHeader, BrokerHeartbeatRequestHeader,
    CleanControllerBrokerDataRequestHeader, ElectMasterRequestHeader, GetNextBrokerIdRequestHeader,
    GetReplicaInfoRequestHeader, RegisterBrokerToControllerRequestHeader,
};
use rmq_protocol::{BrokerNames, JavaJson, SyncStateSet};
use rmq_wire::{FromExtFields, RemotingCommand, RequestCode, ResponseCode};

use crate::decide::{self, View};
use crate::{Answer, Decision, Heartbeat, LiveKey, LiveTable, Millis};

/// `MQVersion.Version.V5_1_1.ordinal()`: brokers before 5.1.1 speak the
/// earlier controller protocol (no GET_NEXT/APPLY_BROKER_ID, addresses as
/// identities), which this controller does not serve.
pub const FIRST_SUPPORTED_BROKER_VERSION: i32 = 435;

/// Where a request is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Serving {
    /// Only the leader decides; other nodes answer CONTROLLER_NOT_LEADER.
    Leader,
    /// Any node: BROKER_HEARTBEAT (its own liveness table),
    /// CONTROLLER_GET_METADATA_INFO and the configuration requests.
    AnyNode,
    /// Not a controller request: REQUEST_CODE_NOT_SUPPORTED.
    Unsupported,
}

/// How `code` is served (controller.md §1).
pub fn serving(code: RequestCode) -> Serving {
    use RequestCode as C;
    match code {
        C::ControllerAlterSyncStateSet
        | C::ControllerElectMaster
        | C::ControllerRegisterBroker
        | C::ControllerGetReplicaInfo
        | C::ControllerGetSyncStateData
        | C::CleanBrokerData
        | C::ControllerGetNextBrokerId
        | C::ControllerApplyBrokerId => Serving::Leader,
        C::BrokerHeartbeat
        | C::ControllerGetMetadataInfo
        | C::UpdateControllerConfig
        | C::GetControllerConfig => Serving::AnyNode,
        _ => Serving::Unsupported,
    }
}

/// Decides a [`Serving::Leader`] request. Malformed requests are answered
/// CONTROLLER_INVALID_REQUEST naming what is wrong; nothing changes.
pub fn decide(view: View<'_>, request: &RemotingCommand) -> Decision {
    match try_decide(view, request) {
        Ok(decision) => decision,
        Err(answer) => Decision::answer(answer),
    }
}

fn try_decide(view: View<'_>, request: &RemotingCommand) -> Result<Decision, Answer> {
    use RequestCode as C;
    let code = request.request_code();
    if matches!(
        code,
        C::ControllerRegisterBroker
            | C::ControllerGetNextBrokerId
            | C::ControllerApplyBrokerId
            | C::ControllerAlterSyncStateSet
    ) && request.version < FIRST_SUPPORTED_BROKER_VERSION
    {
        return Err(invalid(format!(
            "brokers older than 5.1.1 are not supported by this controller (request version {}, needs {FIRST_SUPPORTED_BROKER_VERSION} or later); upgrade the broker",
            request.version
        )));
    }
    Ok(match code {
        C::ControllerAlterSyncStateSet => {
            let header: AlterSyncStateSetRequestHeader = header(request)?;
            let body = request
                .body
                .as_deref()
                .ok_or_else(|| invalid("the request has no SyncStateSet body"))?;
            let proposed = SyncStateSet::from_json(body)
                .map_err(|e| invalid(format!("cannot decode the SyncStateSet body: {e}")))?;
            decide::alter_sync_state_set(view, &header, &proposed)
        }
        C::ControllerElectMaster => {
            decide::elect_master(view, &header::<ElectMasterRequestHeader>(request)?)
        }
        C::ControllerRegisterBroker => decide::register_broker(
            view,
            &header::<RegisterBrokerToControllerRequestHeader>(request)?,
        ),
        C::ControllerGetReplicaInfo => {
            decide::replica_info(view, &header::<GetReplicaInfoRequestHeader>(request)?)
        }
        C::ControllerGetSyncStateData => {
            let names = match request.body.as_deref() {
                None | Some([]) => Vec::new(),
                Some(body) => {
                    BrokerNames::from_json(body)
                        .map_err(|e| invalid(format!("cannot decode the broker-name list: {e}")))?
                        .0
                }
            };
            decide::sync_state_data(view, &names)
        }
        C::CleanBrokerData => decide::clean_broker_data(
            view,
            &header::<CleanControllerBrokerDataRequestHeader>(request)?,
        ),
        C::ControllerGetNextBrokerId => {
            decide::next_broker_id(view, &header::<GetNextBrokerIdRequestHeader>(request)?)
        }
        C::ControllerApplyBrokerId => {
            decide::apply_broker_id(view, &header::<ApplyBrokerIdRequestHeader>(request)?)
        }
        other => {
            return Err(Answer::error(
                ResponseCode::RequestCodeNotSupported,
                format!(" request type {} not supported", i32::from(other)),
            ))
        }
    })
}

/// BROKER_HEARTBEAT to this node: records the replica's liveness (on
/// `conn`, at `now`). Answered only when the broker asked two-way.
pub fn heartbeat(
    live: &mut LiveTable,
    request: &RemotingCommand,
    conn: Option<u64>,
    now: Millis,
) -> Answer {
    let header: BrokerHeartbeatRequestHeader = match header(request) {
        Ok(header) => header,
        Err(answer) => return answer,
    };
    let Some(broker_id) = header.broker_id else {
        return Answer::error(
            ResponseCode::ControllerInvalidRequest,
            "Heart beat with empty brokerId",
        );
    };
    live.heartbeat(
        Heartbeat {
            key: LiveKey {
                cluster: header.cluster_name,
                broker_name: header.broker_name,
                broker_id,
            },
            broker_addr: header.broker_addr,
            epoch: header.epoch,
            max_offset: header.max_offset,
            confirm_offset: header.confirm_offset,
            timeout_ms: header.heartbeat_timeout_mills,
            election_priority: header.election_priority,
        },
        conn,
        now,
    );
    Answer {
        remark: Some("Heart beat success".into()),
        ..Answer::ok()
    }
}

fn header<H: FromExtFields>(request: &RemotingCommand) -> Result<H, Answer> {
    request.header().map_err(|e| invalid(e.to_string()))
}

fn invalid(remark: impl Into<String>) -> Answer {
    Answer::error(ResponseCode::ControllerInvalidRequest, remark)
}

#[cfg(test)]
mod tests {
    use rmq_wire::ExtFields;

    use super::*;
    use crate::Replicas;

    fn request(code: RequestCode, version: i32, ext: &[(&str, &str)]) -> RemotingCommand {
        let mut command = RemotingCommand::request(code, 1);
        command.version = version;
        command.ext_fields = Some(
            ext.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<ExtFields>(),
        );
        command
    }

    fn view<'a>(replicas: &'a Replicas, live: &'a LiveTable) -> View<'a> {
        View {
            replicas,
            live,
            now: Millis(0),
            elect_unclean: false,
        }
    }

    #[test]
    fn a_missing_field_is_named_and_changes_nothing() {
        let (replicas, live) = (Replicas::new(), LiveTable::new());
        let apply = request(
            RequestCode::ControllerApplyBrokerId,
            515,
            &[
                ("clusterName", "c"),
                ("brokerName", "b"),
                ("appliedBrokerId", "1"),
            ],
        );
        let decision = decide(view(&replicas, &live), &apply);
        assert_eq!(decision.answer.code, ResponseCode::ControllerInvalidRequest);
        assert!(decision
            .answer
            .remark
            .unwrap()
            .contains("registerCheckCode"));
        assert!(decision.events.is_empty());
    }

    #[test]
    fn brokers_before_5_1_1_are_told_so() {
        let (replicas, live) = (Replicas::new(), LiveTable::new());
        let old = request(
            RequestCode::ControllerRegisterBroker,
            433,
            &[
                ("clusterName", "c"),
                ("brokerName", "b"),
                ("brokerId", "1"),
                ("brokerAddress", "a:1"),
            ],
        );
        let answer = decide(view(&replicas, &live), &old).answer;
        assert_eq!(answer.code, ResponseCode::ControllerInvalidRequest);
        assert!(answer.remark.unwrap().contains("older than 5.1.1"));
        // Reads and admin requests do not depend on the release.
        let read = request(
            RequestCode::ControllerGetReplicaInfo,
            0,
            &[("brokerName", "b")],
        );
        assert_eq!(
            decide(view(&replicas, &live), &read).answer.code,
            ResponseCode::ControllerBrokerMetadataNotExist
        );
    }

    #[test]
    fn malformed_bodies_are_refused() {
        let (replicas, live) = (Replicas::new(), LiveTable::new());
        let mut alter = request(
            RequestCode::ControllerAlterSyncStateSet,
            515,
            &[
                ("brokerName", "b"),
                ("masterBrokerId", "1"),
                ("masterEpoch", "1"),
            ],
        );
        assert_eq!(
            decide(view(&replicas, &live), &alter).answer.code,
            ResponseCode::ControllerInvalidRequest
        );
        alter.body = Some(b"{not json".to_vec().into());
        let answer = decide(view(&replicas, &live), &alter).answer;
        assert_eq!(answer.code, ResponseCode::ControllerInvalidRequest);
        let mut data = request(RequestCode::ControllerGetSyncStateData, 515, &[]);
        data.body = Some(b"[1,".to_vec().into());
        assert_eq!(
            decide(view(&replicas, &live), &data).answer.code,
            ResponseCode::ControllerInvalidRequest
        );
        data.body = None;
        assert_eq!(
            decide(view(&replicas, &live), &data).answer.code,
            ResponseCode::SystemError
        );
    }

    #[test]
    fn heartbeats_need_a_broker_id() {
        let mut live = LiveTable::new();
        let base = [
            ("clusterName", "c"),
            ("brokerAddr", "a:1"),
            ("brokerName", "b"),
        ];
        let answer = heartbeat(
            &mut live,
            &request(RequestCode::BrokerHeartbeat, 515, &base),
            None,
            Millis(0),
        );
        assert_eq!(
            (answer.code, answer.remark.as_deref()),
            (
                ResponseCode::ControllerInvalidRequest,
                Some("Heart beat with empty brokerId")
            )
        );
        let mut with_id = base.to_vec();
        with_id.push(("brokerId", "2"));
        let answer = heartbeat(
            &mut live,
            &request(RequestCode::BrokerHeartbeat, 515, &with_id),
            Some(1),
            Millis(5),
        );
        assert_eq!(answer.remark.as_deref(), Some("Heart beat success"));
        assert!(live.is_alive("c", "b", 2, Millis(5)));
    }

    #[test]
    fn serving_of_each_code() {
        assert_eq!(serving(RequestCode::ControllerElectMaster), Serving::Leader);
        assert_eq!(
            serving(RequestCode::ControllerGetMetadataInfo),
            Serving::AnyNode
        );
        assert_eq!(serving(RequestCode::BrokerHeartbeat), Serving::AnyNode);
        assert_eq!(
            serving(RequestCode::GetRouteInfoByTopic),
            Serving::Unsupported
        );
        assert_eq!(serving(RequestCode::Unknown(50_000)), Serving::Unsupported);
    }
}
