//! Reads and an operator's clean-up: CONTROLLER_GET_REPLICA_INFO (1004),
//! CONTROLLER_GET_SYNC_STATE_DATA (1006) and CLEAN_BROKER_DATA (1011)
//! (Java's `ReplicasInfoManager.getReplicaInfo`, `getSyncStateData`,
//! `cleanBrokerData`).

use std::collections::BTreeSet;

use rmq_protocol::headers::{
    CleanControllerBrokerDataRequestHeader, GetReplicaInfoRequestHeader,
    GetReplicaInfoResponseHeader,
};
use rmq_protocol::{BrokerReplicasInfo, ReplicaIdentity, ReplicasInfo, SyncStateSet};
use rmq_wire::ResponseCode;

use super::View;
use crate::{Answer, Decision, Event};

/// CONTROLLER_GET_REPLICA_INFO: the master (if any), the master epoch and
/// the SSS. A read.
pub fn replica_info(view: View<'_>, header: &GetReplicaInfoRequestHeader) -> Decision {
    let Some(set) = view.replicas.get(&header.broker_name) else {
        return Decision::answer(
            Answer::error(
                ResponseCode::ControllerBrokerMetadataNotExist,
                "Broker metadata is not existed",
            )
            .with_header(&GetReplicaInfoResponseHeader::default()),
        );
    };
    let response = GetReplicaInfoResponseHeader {
        master_broker_id: set.master,
        master_address: set.master_addr().map(str::to_owned),
        master_epoch: Some(set.master_epoch),
    };
    Decision::answer(
        Answer::ok()
            .with_header(&response)
            .with_body(&SyncStateSet {
                sync_state_set: set.sync_state_set.clone(),
                sync_state_set_epoch: set.sync_state_set_epoch,
            }),
    )
}

/// CONTROLLER_GET_SYNC_STATE_DATA: for each named set the controller knows,
/// its replicas split by SSS membership, each with its liveness. A read.
///
/// An empty name list is answered SYSTEM_ERROR as in Java, but with a
/// remark that says why (Java's is "not set any response code").
pub fn sync_state_data(view: View<'_>, names: &[String]) -> Decision {
    if names.is_empty() {
        return Decision::answer(Answer::error(
            ResponseCode::SystemError,
            "no broker names in the request body (a JSON array of broker names)",
        ));
    }
    let mut body = BrokerReplicasInfo::default();
    for name in names {
        let Some(set) = view.replicas.get(name) else {
            continue;
        };
        let mut info = ReplicasInfo {
            master_address: set.master_addr().map(str::to_owned),
            master_broker_id: set.master,
            master_epoch: set.master_epoch,
            sync_state_set_epoch: set.sync_state_set_epoch,
            ..ReplicasInfo::default()
        };
        for (id, replica) in &set.replicas {
            let identity = ReplicaIdentity {
                alive: view.is_alive(name, *id),
                broker_address: replica.addr.clone(),
                broker_id: *id,
                broker_name: name.clone(),
            };
            if set.sync_state_set.contains(id) {
                info.in_sync_replicas.push(identity);
            } else {
                info.not_in_sync_replicas.push(identity);
            }
        }
        body.replicas_info_table.insert(name.clone(), info);
    }
    Decision::answer(Answer::ok().with_body(&body))
}

/// CLEAN_BROKER_DATA: an operator removes dead replicas (`1;2`), or a whole
/// set. Without `isCleanLivingBroker` nothing alive is removed, and a set
/// with a master is only cleaned replica by replica.
///
/// The replicas go from the id map and the SSS together (Java can leave a
/// set half removed). An unparsable id list is refused naming the part that
/// is not a number.
pub fn clean_broker_data(
    view: View<'_>,
    header: &CleanControllerBrokerDataRequestHeader,
) -> Decision {
    let name = &header.broker_name;
    let refuse = |remark: String| {
        Decision::answer(Answer::error(
            ResponseCode::ControllerInvalidCleanBrokerMetadata,
            remark,
        ))
    };
    let set = view.replicas.get(name);
    let ids_text = header
        .broker_controller_ids_to_clean
        .as_deref()
        .map(str::trim)
        .filter(|text| !text.is_empty());
    let mut ids = None;
    if !header.is_clean_living_broker {
        match ids_text {
            None if set.is_some_and(|set| set.master.is_some()) => {
                return refuse(format!("Broker {name} is still alive, clean up failure"));
            }
            None => {}
            Some(text) => {
                let mut parsed = BTreeSet::new();
                for part in text.split(';') {
                    match part.trim().parse::<i64>() {
                        Ok(id) => {
                            parsed.insert(id);
                        }
                        Err(_) => {
                            return refuse(format!(
                                "Please set the option <brokerControllerIdsToClean> according to the format, exception: {part:?} is not a broker id"
                            ));
                        }
                    }
                }
                if let Some(alive) = parsed.iter().find(|id| view.is_alive(name, **id)) {
                    return refuse(format!(
                        "Broker [{name},  {alive}] is still alive, clean up failure"
                    ));
                }
                ids = Some(parsed);
            }
        }
    }
    if set.is_none() {
        return refuse(format!(
            "Broker {name} is not existed,clean broker data failure."
        ));
    }
    Decision::with_event(
        Answer::ok(),
        Event::CleanBrokerData {
            broker_name: name.clone(),
            broker_ids: ids,
        },
    )
}
