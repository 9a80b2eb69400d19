//! CONTROLLER_ELECT_MASTER (1002), from a broker, an operator or the
//! controller itself (Java's `ReplicasInfoManager.electMaster`), and the
//! leader's scan for sets whose master died while another replica still
//! heartbeats (`DLedgerController`'s inactive-master scan).

use std::collections::BTreeSet;

use rmq_protocol::headers::{ElectMasterRequestHeader, ElectMasterResponseHeader};
use rmq_protocol::{BrokerMemberGroup, ElectMasterResponseBody};
use rmq_wire::ResponseCode;

use super::View;
use crate::core::elect::Ballot;
use crate::core::liveness::DEFAULT_HEARTBEAT_TIMEOUT_MS;
use crate::{Answer, Decision, Event, Millis};

/// CONTROLLER_ELECT_MASTER.
///
/// `brokerId` −1 (or absent) is the controller's own trigger after the
/// master died; a broker's trigger names itself; an operator's sets
/// `designateElect` to make exactly that replica master.
///
/// Differences from Java, each fixing a way Java can go wrong:
/// * the first election of a set goes to the requester only if it is
///   registered and alive (Java elects whoever asks first, even a replica
///   that never heartbeated);
/// * a controller-triggered election that finds nobody records the loss of
///   the master once (master epoch + 1, which fences the old master);
///   Java adds an epoch per retry.
pub fn elect_master(view: View<'_>, header: &ElectMasterRequestHeader) -> Decision {
    let name = header.broker_name.as_deref().unwrap_or_default();
    let requester = header.broker_id.unwrap_or(-1);
    let designated = header.designate_elect == Some(true);
    let Some(set) = view.replicas.get(name) else {
        return Decision::answer(
            Answer::error(
                ResponseCode::ControllerBrokerNeedToBeRegistered,
                "Broker hasn't been registered",
            )
            .with_header(&ElectMasterResponseHeader::default()),
        );
    };
    let ballot = Ballot {
        set,
        live: view.live,
        now: view.now,
    };
    let first_election = set.master_epoch == 0;
    let new_master = if first_election && requester != -1 && ballot.is_eligible(requester) {
        Some(requester)
    } else {
        ballot.elect(view.elect_unclean, designated.then_some(requester))
    };

    match new_master {
        Some(master) if set.master == Some(master) => {
            let header = ElectMasterResponseHeader {
                master_broker_id: Some(master),
                master_address: set.addr(master).map(str::to_owned),
                master_epoch: Some(set.master_epoch),
                sync_state_set_epoch: Some(set.sync_state_set_epoch),
            };
            Decision::answer(
                Answer::error(
                    ResponseCode::ControllerMasterStillExist,
                    format!(
                        "The old master {master} is still alive, not need to elect new master for broker {name}"
                    ),
                )
                .with_header(&header)
                .with_body(&ElectMasterResponseBody {
                    broker_member_group: None,
                    sync_state_set: set.sync_state_set.clone(),
                }),
            )
        }
        Some(master) => {
            let header = ElectMasterResponseHeader {
                master_broker_id: Some(master),
                master_address: set.addr(master).map(str::to_owned),
                master_epoch: Some(set.master_epoch + 1),
                sync_state_set_epoch: Some(set.sync_state_set_epoch + 1),
            };
            let body = ElectMasterResponseBody {
                broker_member_group: Some(BrokerMemberGroup {
                    broker_addrs: set.addrs(),
                    broker_name: set.name.clone(),
                    cluster: set.cluster.clone(),
                }),
                sync_state_set: BTreeSet::from([master]),
            };
            Decision::with_event(
                Answer::ok().with_header(&header).with_body(&body),
                Event::ElectMaster {
                    broker_name: name.to_owned(),
                    new_master: Some(master),
                },
            )
        }
        None if requester == -1 => {
            let answer = Answer::error(
                ResponseCode::ControllerMasterNotAvailable,
                "Old master has down and failed to elect a new broker master",
            )
            .with_header(&ElectMasterResponseHeader::default());
            if set.master.is_some() {
                Decision::with_event(
                    answer,
                    Event::ElectMaster {
                        broker_name: name.to_owned(),
                        new_master: None,
                    },
                )
            } else {
                Decision::answer(answer)
            }
        }
        None => Decision::answer(
            Answer::error(
                ResponseCode::ControllerElectMasterFailed,
                "Failed to elect a new master",
            )
            .with_header(&ElectMasterResponseHeader::default()),
        ),
    }
}

/// The sets whose master has stopped heartbeating while another registered
/// replica still does: the leader elects for these (Java's
/// `scanNeedReelectBrokerSets`).
///
/// A node that became leader at `leader_since` first waits one heartbeat
/// timeout (the longest its replicas announced, else 10 s), so that a
/// master it has not heard from *yet* — after a controller restart or a
/// leader change — is not taken for dead. Java only waits one scan period.
pub fn sets_to_reelect(view: View<'_>, leader_since: Millis) -> Vec<String> {
    let mut due = Vec::new();
    for set in view.replicas.sets() {
        let Some(master) = set.master else { continue };
        if view.is_alive(&set.name, master) {
            continue;
        }
        let mut any_alive = false;
        let mut grace = None::<u64>;
        for id in set.replicas.keys() {
            if let Some(info) = view.live.get(&set.cluster, &set.name, *id) {
                grace = Some(grace.map_or(info.timeout_ms, |g| g.max(info.timeout_ms)));
                any_alive |= info.is_alive(view.now);
            }
        }
        let grace = grace.unwrap_or(DEFAULT_HEARTBEAT_TIMEOUT_MS);
        if any_alive && view.now.since(leader_since) >= grace {
            due.push(set.name.clone());
        }
    }
    due
}
