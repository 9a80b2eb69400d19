//! Joining a set: CONTROLLER_GET_NEXT_BROKER_ID (1012),
//! CONTROLLER_APPLY_BROKER_ID (1013) and CONTROLLER_REGISTER_BROKER (1003),
//! the three requests of a broker's `ReplicasManager.register` (Java's
//! `ReplicasInfoManager.getNextBrokerId`, `applyBrokerId`,
//! `registerBroker`).

use rmq_protocol::headers::{
    ApplyBrokerIdRequestHeader, ApplyBrokerIdResponseHeader, GetNextBrokerIdRequestHeader,
    GetNextBrokerIdResponseHeader, RegisterBrokerToControllerRequestHeader,
    RegisterBrokerToControllerResponseHeader,
};
use rmq_protocol::SyncStateSet;
use rmq_wire::ResponseCode;

use super::View;
use crate::{Answer, Decision, Event, FIRST_BROKER_ID};

/// CONTROLLER_GET_NEXT_BROKER_ID: the id a new broker should apply for; 1
/// for a set the controller does not know. A read.
pub fn next_broker_id(view: View<'_>, header: &GetNextBrokerIdRequestHeader) -> Decision {
    let next = view
        .replicas
        .get(&header.broker_name)
        .map_or(FIRST_BROKER_ID, |set| set.next_id);
    Decision::answer(Answer::ok().with_header(&GetNextBrokerIdResponseHeader {
        cluster_name: Some(header.cluster_name.clone()),
        broker_name: Some(header.broker_name.clone()),
        next_broker_id: Some(next),
    }))
}

/// CONTROLLER_APPLY_BROKER_ID: claims an id for the broker named in the
/// check code (`<addr>;<wall ms>`). Applying again with the same check code
/// succeeds (a broker that crashed between applying and writing its
/// identity file); an id held with another check code is refused.
///
/// Unlike Java, an id below 1, or an id the set assigned before and lost to
/// a clean, is refused too: no id is ever handed out twice.
pub fn apply_broker_id(view: View<'_>, header: &ApplyBrokerIdRequestHeader) -> Decision {
    let (name, id) = (&header.broker_name, header.applied_broker_id);
    let answer = |code: ResponseCode, remark: Option<String>| Answer {
        code,
        remark,
        ..Answer::ok().with_header(&ApplyBrokerIdResponseHeader {
            cluster_name: Some(header.cluster_name.clone()),
            broker_name: Some(name.clone()),
        })
    };
    let refuse = |remark: String| {
        Decision::answer(answer(
            ResponseCode::ControllerBrokerIdInvalid,
            Some(remark),
        ))
    };
    let event = Event::ApplyBrokerId {
        cluster: header.cluster_name.clone(),
        broker_name: name.clone(),
        broker_addr: broker_addr_of(&header.register_check_code).to_owned(),
        check_code: header.register_check_code.clone(),
        broker_id: id,
    };
    if id < FIRST_BROKER_ID {
        return refuse(format!(
            "Fail to apply brokerId: {id} in broker-set: {name}, controller broker ids start at {FIRST_BROKER_ID}"
        ));
    }
    let Some(set) = view.replicas.get(name) else {
        if id == FIRST_BROKER_ID {
            return Decision::with_event(answer(ResponseCode::Success, None), event);
        }
        return refuse(format!(
            "Broker-set: {name} hasn't been registered in controller, but broker try to apply brokerId: {id}"
        ));
    };
    match set.replicas.get(&id) {
        Some(replica) if replica.check_code == header.register_check_code => {
            Decision::answer(answer(ResponseCode::Success, None))
        }
        None if id >= set.next_id => {
            Decision::with_event(answer(ResponseCode::Success, None), event)
        }
        _ => refuse(format!(
            "Fail to apply brokerId: {id} in broker-set: {name}"
        )),
    }
}

/// The broker address in a check code: the text before the first `;`.
fn broker_addr_of(check_code: &str) -> &str {
    check_code.split(';').next().unwrap_or_default()
}

/// CONTROLLER_REGISTER_BROKER: a replica with an id announces itself (and
/// its address, which may have changed) and learns the master, if the set
/// has an alive one, and the SSS.
pub fn register_broker(
    view: View<'_>,
    header: &RegisterBrokerToControllerRequestHeader,
) -> Decision {
    let (name, id) = (&header.broker_name, header.broker_id);
    let mut response = RegisterBrokerToControllerResponseHeader {
        cluster_name: Some(header.cluster_name.clone()),
        broker_name: Some(name.clone()),
        ..Default::default()
    };
    let refuse = |response: &RegisterBrokerToControllerResponseHeader, remark: String| {
        Decision::answer(
            Answer::error(ResponseCode::ControllerBrokerNeedToBeRegistered, remark)
                .with_header(response),
        )
    };
    let Some(set) = view.replicas.get(name) else {
        return refuse(
            &response,
            format!("Broker-set: {name} hasn't been registered in controller"),
        );
    };
    let Some(replica) = set.replicas.get(&id) else {
        return refuse(
            &response,
            format!("BrokerId: {id} hasn't been registered in broker-set: {name}"),
        );
    };
    if let Some(master) = set.master.filter(|m| view.is_alive(name, *m)) {
        response.master_broker_id = Some(master);
        response.master_address = set.addr(master).map(str::to_owned);
        response.master_epoch = Some(set.master_epoch);
        response.sync_state_set_epoch = Some(set.sync_state_set_epoch);
    }
    let answer = Answer::ok()
        .with_header(&response)
        .with_body(&SyncStateSet {
            sync_state_set: set.sync_state_set.clone(),
            sync_state_set_epoch: set.sync_state_set_epoch,
        });
    if replica.addr == header.broker_address {
        Decision::answer(answer)
    } else {
        Decision::with_event(
            answer,
            Event::UpdateBrokerAddress {
                broker_name: name.clone(),
                broker_id: id,
                broker_addr: header.broker_address.clone(),
            },
        )
    }
}
