//! NOTIFY_BROKER_ROLE_CHANGED (1008), the one-way notice a controller sends
//! to the alive members of a set after a successful election, as Java's
//! `ControllerManager.notifyBrokerRoleChanged` does: built from the
//! election's answer, without I/O.

use std::collections::BTreeSet;

use rmq_protocol::headers::{ElectMasterResponseHeader, NotifyBrokerRoleChangedRequestHeader};
use rmq_protocol::{BrokerMemberGroup, Dialect, ElectMasterResponseBody, JavaJson, SyncStateSet};
use rmq_wire::{FromExtFields, RemotingCommand, RequestCode};

use crate::Answer;

/// The members to tell and the notice, for a successful election's answer
/// (`None` for any other answer). The notice is one-way, carries the new
/// master in its header and `{[master], sss epoch}` as its body, and — as
/// every frame of Java's controller — version 0. Which members are told
/// (the alive ones) is the caller's business.
pub fn role_change_notice(answer: &Answer) -> Option<(BrokerMemberGroup, RemotingCommand)> {
    if !answer.is_success() {
        return None;
    }
    let header = ElectMasterResponseHeader::from_ext_fields(answer.ext.as_ref()?).ok()?;
    let body = ElectMasterResponseBody::from_json(answer.body.as_deref()?).ok()?;
    let group = body.broker_member_group?;
    let notice = RemotingCommand::request(RequestCode::NotifyBrokerRoleChanged, 0)
        .with_header(&NotifyBrokerRoleChangedRequestHeader {
            master_address: header.master_address.clone(),
            master_epoch: header.master_epoch,
            sync_state_set_epoch: header.sync_state_set_epoch,
            master_broker_id: header.master_broker_id,
        })
        .with_body(
            SyncStateSet {
                sync_state_set: header
                    .master_broker_id
                    .into_iter()
                    .collect::<BTreeSet<i64>>(),
                sync_state_set_epoch: header.sync_state_set_epoch.unwrap_or_default(),
            }
            .to_json(Dialect::Default),
        )
        .oneway();
    let mut notice = notice;
    notice.version = 0;
    Some((group, notice))
}
