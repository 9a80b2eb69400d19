//! One controller request, decoded and decided without I/O: the typed
//! header and body at the edge, the broker-release check, and the
//! [`decide`](mod@crate::core::decide) function for its code. What needs a
//! running node (leadership, Raft, metadata, configuration) is added by
//! the driver and `crate::node`.

use rmq_protocol::headers::{
    AlterSyncStateSetRequestHeader, ApplyBrokerIdRequestHeader, BrokerHeartbeatRequestHeader,
    CleanControllerBrokerDataRequestHeader, ElectMasterRequestHeader, GetNextBrokerIdRequestHeader,
    GetReplicaInfoRequestHeader, RegisterBrokerToControllerRequestHeader,
};
use rmq_protocol::{BrokerNames, JavaJson, SyncStateSet};
use rmq_wire::{ExtFields, FromExtFields, HeaderError, RemotingCommand, RequestCode, ResponseCode};

use crate::core::decide::{self, View};
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

/// How `code` is served: as in Java's controller, only the leader serves
/// what reads or changes the replicated state.
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
/// `conn`, at `now`), or refuses a malformed heartbeat. Brokers send it
/// one-way; [`heartbeat_answer`] is the answer when one asked two-way.
///
/// Takes the request's ext fields: their strings move into the table
/// rather than being copied (see `heartbeat_header`).
///
/// # Errors
/// The refusal (CONTROLLER_INVALID_REQUEST naming what is missing); nothing
/// is recorded then.
pub fn heartbeat(
    live: &mut LiveTable,
    request: &mut RemotingCommand,
    conn: Option<u64>,
    now: Millis,
) -> Result<(), Answer> {
    let header = heartbeat_header(request.ext_fields.take()).map_err(|e| invalid(e.to_string()))?;
    let Some(broker_id) = header.broker_id else {
        return Err(invalid("Heart beat with empty brokerId"));
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
    Ok(())
}

/// The answer to a two-way BROKER_HEARTBEAT, as [`heartbeat`] returned.
pub fn heartbeat_answer(recorded: Result<(), Answer>) -> Answer {
    recorded.err().unwrap_or_else(|| Answer {
        remark: Some("Heart beat success".into()),
        ..Answer::ok()
    })
}

/// The BROKER_HEARTBEAT header out of ext fields given up for it: the same
/// header, defaults and errors as
/// [`BrokerHeartbeatRequestHeader::from_ext_fields`] (optional numbers that
/// do not parse are absent; the first missing string in field order is
/// named), read in one pass over the map with the strings moved out.
///
/// Thousands of heartbeats arrive per second, and reading the nine fields
/// by name costs more than the rest of recording a heartbeat: every lookup
/// compares the name with the map's keys one after another. Copying the
/// three strings out would leave the map to free its own.
fn heartbeat_header(ext: Option<ExtFields>) -> Result<BrokerHeartbeatRequestHeader, HeaderError> {
    let (mut cluster_name, mut broker_addr, mut broker_name) = (None, None, None);
    let (mut broker_id, mut epoch, mut max_offset, mut confirm_offset) = (None, None, None, None);
    let (mut heartbeat_timeout_mills, mut election_priority) = (None, None);
    for (key, value) in ext.into_iter().flatten() {
        match key.as_str() {
            "clusterName" => cluster_name = Some(value),
            "brokerAddr" => broker_addr = Some(value),
            "brokerName" => broker_name = Some(value),
            "brokerId" => broker_id = value.parse().ok(),
            "epoch" => epoch = value.parse().ok(),
            "maxOffset" => max_offset = value.parse().ok(),
            "confirmOffset" => confirm_offset = value.parse().ok(),
            "heartbeatTimeoutMills" => heartbeat_timeout_mills = value.parse().ok(),
            "electionPriority" => election_priority = value.parse().ok(),
            _ => {}
        }
    }
    // Every field named, no `..`: a field added to the header does not go
    // unread here.
    Ok(BrokerHeartbeatRequestHeader {
        cluster_name: cluster_name.ok_or(HeaderError::Missing("clusterName"))?,
        broker_addr: broker_addr.ok_or(HeaderError::Missing("brokerAddr"))?,
        broker_name: broker_name.ok_or(HeaderError::Missing("brokerName"))?,
        broker_id,
        epoch,
        max_offset,
        confirm_offset,
        heartbeat_timeout_mills,
        election_priority,
    })
}

fn header<H: FromExtFields>(request: &RemotingCommand) -> Result<H, Answer> {
    request.header().map_err(|e| invalid(e.to_string()))
}

fn invalid(remark: impl Into<String>) -> Answer {
    Answer::error(ResponseCode::ControllerInvalidRequest, remark)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

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
        let answer = heartbeat_answer(heartbeat(
            &mut live,
            &mut request(RequestCode::BrokerHeartbeat, 515, &base),
            None,
            Millis(0),
        ));
        assert_eq!(
            (answer.code, answer.remark.as_deref()),
            (
                ResponseCode::ControllerInvalidRequest,
                Some("Heart beat with empty brokerId")
            )
        );
        let mut with_id = base.to_vec();
        with_id.push(("brokerId", "2"));
        let answer = heartbeat_answer(heartbeat(
            &mut live,
            &mut request(RequestCode::BrokerHeartbeat, 515, &with_id),
            Some(1),
            Millis(5),
        ));
        assert_eq!(answer.remark.as_deref(), Some("Heart beat success"));
        assert!(live.is_alive("c", "b", 2, Millis(5)));
    }

    #[test]
    fn a_heartbeat_without_its_strings_names_the_first_missing() {
        let mut live = LiveTable::new();
        let mut bare = RemotingCommand::request(RequestCode::BrokerHeartbeat, 1);
        let answer = heartbeat(&mut live, &mut bare, None, Millis(0)).unwrap_err();
        assert_eq!(
            (answer.code, answer.remark.as_deref()),
            (
                ResponseCode::ControllerInvalidRequest,
                Some("the custom field clusterName is null")
            )
        );
        let answer = heartbeat(
            &mut live,
            &mut request(
                RequestCode::BrokerHeartbeat,
                515,
                &[("clusterName", "c"), ("brokerName", "b"), ("brokerId", "1")],
            ),
            None,
            Millis(0),
        )
        .unwrap_err();
        assert_eq!(
            answer.remark.as_deref(),
            Some("the custom field brokerAddr is null")
        );
        assert!(live.is_empty());
    }

    /// Values a broker, a fuzzer or a typo could send for a heartbeat field.
    fn field_value() -> impl Strategy<Value = String> {
        prop_oneof![
            "-?[0-9]{1,20}",
            "[+ ]?-?[0-9]{1,4} ?",
            Just(String::new()),
            Just("2147483648".to_owned()),
            Just("-9223372036854775809".to_owned()),
            "[a-zA-Z0-9:._-]{0,12}",
        ]
    }

    fn heartbeat_ext() -> impl Strategy<Value = ExtFields> {
        let key = prop::sample::select(vec![
            "clusterName",
            "brokerAddr",
            "brokerName",
            "brokerId",
            "epoch",
            "maxOffset",
            "confirmOffset",
            "heartbeatTimeoutMills",
            "electionPriority",
            "heartbeatTimeoutMillis",
            "brokerid",
            "AccessKey",
        ]);
        prop::collection::btree_map(key.prop_map(str::to_owned), field_value(), 0..12)
    }

    proptest! {
        /// The heartbeat header read in one pass is the header
        /// `from_ext_fields` reads, errors included.
        #[test]
        fn the_heartbeat_header_is_read_as_from_ext_fields_reads_it(ext in heartbeat_ext()) {
            let expected = BrokerHeartbeatRequestHeader::from_ext_fields(&ext);
            prop_assert_eq!(heartbeat_header(Some(ext)), expected);
        }
    }

    #[test]
    fn no_ext_fields_read_as_an_empty_map() {
        assert_eq!(
            heartbeat_header(None),
            BrokerHeartbeatRequestHeader::from_ext_fields(&ExtFields::new())
        );
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
