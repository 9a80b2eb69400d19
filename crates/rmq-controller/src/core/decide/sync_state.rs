//! CONTROLLER_ALTER_SYNC_STATE_SET (1001): the master grows or shrinks its
//! SSS as its replicas catch up or fall behind (Java's
//! `ReplicasInfoManager.alterSyncStateSet`).

use rmq_protocol::headers::{AlterSyncStateSetRequestHeader, AlterSyncStateSetResponseHeader};
use rmq_protocol::SyncStateSet;
use rmq_wire::ResponseCode;

use super::View;
use crate::{Answer, Decision, Event};

/// CONTROLLER_ALTER_SYNC_STATE_SET: accepted only from the current master
/// at the current master epoch, against the current SSS epoch (optimistic
/// concurrency), for registered, alive replicas including the master. Every
/// refusal still carries `newSyncStateSetEpoch` 0, as Java's does.
pub fn alter_sync_state_set(
    view: View<'_>,
    header: &AlterSyncStateSetRequestHeader,
    proposed: &SyncStateSet,
) -> Decision {
    let name = &header.broker_name;
    let refuse = |code: ResponseCode, remark: String| {
        Decision::answer(
            Answer::error(code, remark).with_header(&AlterSyncStateSetResponseHeader::default()),
        )
    };
    let failed = ResponseCode::ControllerAlterSyncStateSetFailed;
    let Some(set) = view.replicas.get(name) else {
        return refuse(failed, "Broker metadata is not existed".into());
    };
    let new_set = &proposed.sync_state_set;
    if *new_set == set.sync_state_set {
        return refuse(
            failed,
            "The newSyncStateSet is equal with oldSyncStateSet, no needed to update syncStateSet"
                .into(),
        );
    }
    if set.master != Some(header.master_broker_id) {
        return refuse(
            ResponseCode::ControllerInvalidMaster,
            format!(
                "Rejecting alter syncStateSet request because the current leader is:{{{}}}, not {{{}}}",
                java_nullable(set.master),
                header.master_broker_id
            ),
        );
    }
    if header.master_epoch != set.master_epoch {
        return refuse(
            ResponseCode::ControllerFencedMasterEpoch,
            format!(
                "Rejecting alter syncStateSet request because the current master epoch is:{{{}}}, not {{{}}}",
                set.master_epoch, header.master_epoch
            ),
        );
    }
    if proposed.sync_state_set_epoch != set.sync_state_set_epoch {
        return refuse(
            ResponseCode::ControllerFencedSyncStateSetEpoch,
            format!(
                "Rejecting alter syncStateSet request because the current syncStateSet epoch is:{{{}}}, not {{{}}}",
                set.sync_state_set_epoch, proposed.sync_state_set_epoch
            ),
        );
    }
    for id in new_set {
        if !set.replicas.contains_key(id) {
            return refuse(
                ResponseCode::ControllerInvalidReplicas,
                format!("Rejecting alter syncStateSet request because the replicas {{{id}}} don't exist"),
            );
        }
        if !view.is_alive(name, *id) {
            return refuse(
                ResponseCode::ControllerBrokerNotAlive,
                format!("Rejecting alter syncStateSet request because the replicas {{{id}}} don't alive"),
            );
        }
    }
    if !new_set.contains(&header.master_broker_id) {
        return refuse(
            failed,
            format!(
                "Rejecting alter syncStateSet request because the newSyncStateSet don't contains origin leader {{{}}}",
                header.master_broker_id
            ),
        );
    }
    let epoch = set.sync_state_set_epoch + 1;
    Decision::with_event(
        Answer::ok()
            .with_header(&AlterSyncStateSetResponseHeader {
                new_sync_state_set_epoch: epoch,
            })
            .with_body(&SyncStateSet {
                sync_state_set: new_set.clone(),
                sync_state_set_epoch: epoch,
            }),
        Event::AlterSyncStateSet {
            broker_name: name.clone(),
            sync_state_set: new_set.clone(),
        },
    )
}

/// A Java `Long` in a format string: `null` when absent.
fn java_nullable(id: Option<i64>) -> String {
    id.map_or_else(|| "null".to_owned(), |id| id.to_string())
}
