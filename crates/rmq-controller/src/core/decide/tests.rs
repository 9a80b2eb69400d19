//! Decisions, checked by what they answer and what they change, in the
//! order a real broker set lives through them: the first replica joins and
//! is elected, the second joins as its slave and enters the SSS, the master
//! dies and the slave is elected, the old master comes back as a slave.

use rmq_protocol::headers::*;
use rmq_protocol::{ElectMasterResponseBody, JavaJson, SyncStateSet};
use rmq_wire::{ExtFields, FromExtFields, ResponseCode};

use super::*;
use crate::{Decision, Heartbeat, LiveKey, LiveTable, Millis, Replicas};

const CLUSTER: &str = "DefaultCluster";
const SET: &str = "broker-a";

/// A controller's state and clock, with decisions applied as the server
/// applies them after commit.
pub(crate) struct World {
    pub replicas: Replicas,
    pub live: LiveTable,
    pub now: Millis,
    pub unclean: bool,
}

impl World {
    pub fn new() -> World {
        World {
            replicas: Replicas::new(),
            live: LiveTable::new(),
            now: Millis(1_000),
            unclean: false,
        }
    }

    pub fn view(&self) -> View<'_> {
        View {
            replicas: &self.replicas,
            live: &self.live,
            now: self.now,
            elect_unclean: self.unclean,
        }
    }

    /// Applies the decision's events and returns it.
    pub fn commit(&mut self, decision: Decision) -> Decision {
        for event in &decision.events {
            self.replicas.apply(event);
        }
        decision
    }

    pub fn heartbeat(&mut self, id: i64, epoch: i32, max_offset: i64) {
        self.live.heartbeat(
            Heartbeat {
                key: LiveKey {
                    cluster: CLUSTER.into(),
                    broker_name: SET.into(),
                    broker_id: id,
                },
                broker_addr: addr(id),
                epoch: Some(epoch),
                max_offset: Some(max_offset),
                confirm_offset: Some(max_offset),
                timeout_ms: Some(4_000),
                election_priority: None,
            },
            Some(id as u64),
            self.now,
        );
    }

    pub fn advance(&mut self, ms: u64) {
        self.now = self.now.plus(ms);
    }

    /// GET_NEXT_BROKER_ID then APPLY_BROKER_ID with a fresh check code, as
    /// a broker's `register()` does; the id it got.
    pub fn join(&mut self) -> i64 {
        let next = next_broker_id(
            self.view(),
            &GetNextBrokerIdRequestHeader {
                cluster_name: CLUSTER.into(),
                broker_name: SET.into(),
            },
        );
        let id = header::<GetNextBrokerIdResponseHeader>(&next)
            .next_broker_id
            .unwrap();
        let applied = self.commit(apply_broker_id(self.view(), &apply_header(id, &code(id))));
        assert_eq!(applied.answer.code, ResponseCode::Success, "{applied:?}");
        id
    }

    pub fn register(&mut self, id: i64) -> Decision {
        self.commit(register_broker(
            self.view(),
            &RegisterBrokerToControllerRequestHeader {
                cluster_name: CLUSTER.into(),
                broker_name: SET.into(),
                broker_id: id,
                broker_address: addr(id),
                invoke_time: 0,
            },
        ))
    }

    pub fn elect(&mut self, broker_id: Option<i64>, designate: bool) -> Decision {
        self.commit(elect_master(
            self.view(),
            &ElectMasterRequestHeader {
                cluster_name: Some(CLUSTER.into()),
                broker_name: Some(SET.into()),
                broker_id,
                designate_elect: Some(designate),
                invoke_time: None,
            },
        ))
    }

    pub fn alter(
        &mut self,
        master: i64,
        master_epoch: i32,
        set: &[i64],
        sss_epoch: i32,
    ) -> Decision {
        self.commit(alter_sync_state_set(
            self.view(),
            &AlterSyncStateSetRequestHeader {
                broker_name: SET.into(),
                master_broker_id: master,
                master_epoch,
                invoke_time: 0,
            },
            &SyncStateSet {
                sync_state_set: set.iter().copied().collect(),
                sync_state_set_epoch: sss_epoch,
            },
        ))
    }

    pub fn clean(&mut self, ids: Option<&str>, living: bool) -> Decision {
        self.commit(clean_broker_data(
            self.view(),
            &CleanControllerBrokerDataRequestHeader {
                cluster_name: Some(CLUSTER.into()),
                broker_name: SET.into(),
                broker_controller_ids_to_clean: ids.map(str::to_owned),
                is_clean_living_broker: living,
                invoke_time: 0,
            },
        ))
    }

    pub fn set(&self) -> &crate::BrokerSet {
        self.replicas.get(SET).expect("the set exists")
    }
}

pub(crate) fn addr(id: i64) -> String {
    format!("10.0.0.{id}:30911")
}

fn code(id: i64) -> String {
    format!("{};1700000000000", addr(id))
}

fn apply_header(id: i64, check_code: &str) -> ApplyBrokerIdRequestHeader {
    ApplyBrokerIdRequestHeader {
        cluster_name: CLUSTER.into(),
        broker_name: SET.into(),
        applied_broker_id: id,
        register_check_code: check_code.into(),
    }
}

fn header<H: FromExtFields>(decision: &Decision) -> H {
    H::from_ext_fields(decision.answer.ext.as_ref().expect("a header")).unwrap()
}

fn ext_of(decision: &Decision) -> Vec<(String, String)> {
    let ext: ExtFields = decision.answer.ext.clone().unwrap_or_default();
    let mut pairs: Vec<(String, String)> = ext.into_iter().collect();
    pairs.sort();
    pairs
}

fn body_text(decision: &Decision) -> String {
    String::from_utf8(decision.answer.body.clone().expect("a body")).unwrap()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A set with replicas 1..=n, 1 elected master, all alive, SSS = all.
pub(crate) fn healthy_set(n: i64) -> World {
    let mut world = World::new();
    for _ in 0..n {
        let id = world.join();
        world.register(id);
        world.heartbeat(id, 0, 0);
    }
    world.elect(Some(1), false);
    if n > 1 {
        let all: Vec<i64> = (1..=n).collect();
        let sss_epoch = world.set().sync_state_set_epoch;
        let altered = world.alter(1, 1, &all, sss_epoch);
        assert!(altered.answer.is_success(), "{altered:?}");
    }
    world
}

#[test]
fn a_set_from_its_first_join_to_a_failover_and_the_old_master_back() {
    let mut world = World::new();
    // A joins: next id 1, applied.
    assert_eq!(world.join(), 1);
    // A registers: no master yet.
    let registered = world.register(1);
    assert_eq!(registered.answer.code, ResponseCode::Success);
    assert_eq!(
        ext_of(&registered),
        pairs(&[("brokerName", SET), ("clusterName", CLUSTER)])
    );
    assert_eq!(
        body_text(&registered),
        r#"{"syncStateSet":[],"syncStateSetEpoch":0}"#
    );
    world.heartbeat(1, -1, 0);
    let elected = world.elect(Some(1), false);
    assert_eq!(elected.answer.code, ResponseCode::Success);
    assert_eq!(
        ext_of(&elected),
        pairs(&[
            ("masterAddress", "10.0.0.1:30911"),
            ("masterBrokerId", "1"),
            ("masterEpoch", "1"),
            ("syncStateSetEpoch", "1"),
        ])
    );
    assert_eq!(
        body_text(&elected),
        r#"{"brokerMemberGroup":{"brokerAddrs":{1:"10.0.0.1:30911"},"brokerName":"broker-a","cluster":"DefaultCluster"},"syncStateSet":[1]}"#
    );
    // B joins and learns the alive master.
    assert_eq!(world.join(), 2);
    let b = world.register(2);
    assert_eq!(
        ext_of(&b),
        pairs(&[
            ("brokerName", SET),
            ("clusterName", CLUSTER),
            ("masterAddress", "10.0.0.1:30911"),
            ("masterBrokerId", "1"),
            ("masterEpoch", "1"),
            ("syncStateSetEpoch", "1"),
        ])
    );
    world.heartbeat(2, -1, 0);
    // A adds B to the SSS.
    let altered = world.alter(1, 1, &[1, 2], 1);
    assert_eq!(ext_of(&altered), pairs(&[("newSyncStateSetEpoch", "2")]));
    assert_eq!(
        body_text(&altered),
        r#"{"syncStateSet":[1,2],"syncStateSetEpoch":2}"#
    );
    // A dies; the controller elects B.
    world.advance(4_500);
    world.heartbeat(2, 1, 100);
    assert_eq!(
        sets_to_reelect(world.view(), Millis(0)),
        vec![SET.to_string()]
    );
    let failover = world.elect(None, false);
    assert_eq!(failover.answer.code, ResponseCode::Success);
    assert_eq!(
        ext_of(&failover),
        pairs(&[
            ("masterAddress", "10.0.0.2:30911"),
            ("masterBrokerId", "2"),
            ("masterEpoch", "2"),
            ("syncStateSetEpoch", "3"),
        ])
    );
    let body = ElectMasterResponseBody::from_json(&failover.answer.body.clone().unwrap()).unwrap();
    assert_eq!(body.sync_state_set, [2].into());
    assert_eq!(body.broker_member_group.unwrap().broker_addrs.len(), 2);
    // A comes back as a slave of B.
    world.heartbeat(1, 1, 100);
    let back = world.register(1);
    assert_eq!(
        header::<RegisterBrokerToControllerResponseHeader>(&back).master_broker_id,
        Some(2)
    );
    let grown = world.alter(2, 2, &[1, 2], 3);
    assert!(grown.answer.is_success());
    assert_eq!(world.set().sync_state_set_epoch, 4);
}

#[test]
fn apply_broker_id_refusals_and_repeats() {
    let mut world = World::new();
    // Unknown set, id other than 1.
    let refused = world.commit(apply_broker_id(world.view(), &apply_header(2, &code(2))));
    assert_eq!(refused.answer.code, ResponseCode::ControllerBrokerIdInvalid);
    assert_eq!(
        refused.answer.remark.as_deref(),
        Some("Broker-set: broker-a hasn't been registered in controller, but broker try to apply brokerId: 2")
    );
    assert_eq!(
        ext_of(&refused),
        pairs(&[("brokerName", SET), ("clusterName", CLUSTER)])
    );
    assert_eq!(world.join(), 1);
    // The same id again, same check code: success, nothing changes.
    let again = world.commit(apply_broker_id(world.view(), &apply_header(1, &code(1))));
    assert!(again.answer.is_success() && again.events.is_empty());
    assert_eq!(world.set().next_id, 2);
    // The same id with another check code.
    let taken = world.commit(apply_broker_id(
        world.view(),
        &apply_header(1, "10.9.9.9:1;5"),
    ));
    assert_eq!(taken.answer.code, ResponseCode::ControllerBrokerIdInvalid);
    assert_eq!(
        taken.answer.remark.as_deref(),
        Some("Fail to apply brokerId: 1 in broker-set: broker-a")
    );
    // Ids start at 1.
    let zero = world.commit(apply_broker_id(world.view(), &apply_header(0, &code(0))));
    assert_eq!(zero.answer.code, ResponseCode::ControllerBrokerIdInvalid);
}

#[test]
fn regression_ids_are_never_reused_after_a_gap_or_a_clean() {
    let mut world = World::new();
    assert_eq!(world.join(), 1);
    // An out-of-order apply (a stale temp file): 5 while 2 is next.
    let five = world.commit(apply_broker_id(world.view(), &apply_header(5, &code(5))));
    assert!(five.answer.is_success());
    assert_eq!(world.join(), 6, "Java would offer 3, then 4, 5 (taken) …");
    // 6 is dead and cleaned; its id is not handed out again.
    let cleaned = world.clean(Some("6"), false);
    assert!(cleaned.answer.is_success(), "{cleaned:?}");
    let reuse = world.commit(apply_broker_id(
        world.view(),
        &apply_header(6, "10.0.0.66:1;9"),
    ));
    assert_eq!(reuse.answer.code, ResponseCode::ControllerBrokerIdInvalid);
    assert_eq!(world.join(), 7);
}

#[test]
fn register_refusals_and_a_moved_replica() {
    let mut world = World::new();
    let unknown = world.register(1);
    assert_eq!(
        unknown.answer.code,
        ResponseCode::ControllerBrokerNeedToBeRegistered
    );
    assert_eq!(
        unknown.answer.remark.as_deref(),
        Some("Broker-set: broker-a hasn't been registered in controller")
    );
    world.join();
    let stranger = world.register(9);
    assert_eq!(
        stranger.answer.remark.as_deref(),
        Some("BrokerId: 9 hasn't been registered in broker-set: broker-a")
    );
    let moved = register_broker(
        world.view(),
        &RegisterBrokerToControllerRequestHeader {
            cluster_name: CLUSTER.into(),
            broker_name: SET.into(),
            broker_id: 1,
            broker_address: "10.1.1.1:30911".into(),
            invoke_time: 0,
        },
    );
    assert_eq!(moved.events.len(), 1);
    world.commit(moved);
    assert_eq!(world.set().addr(1), Some("10.1.1.1:30911"));
}

#[test]
fn register_names_the_master_only_while_it_is_alive() {
    let mut world = healthy_set(2);
    assert_eq!(
        header::<RegisterBrokerToControllerResponseHeader>(&world.register(2)).master_broker_id,
        Some(1)
    );
    world.advance(4_001);
    world.heartbeat(2, 1, 0);
    let without = world.register(2);
    assert_eq!(
        ext_of(&without),
        pairs(&[("brokerName", SET), ("clusterName", CLUSTER)])
    );
}

#[test]
fn regression_a_phantom_cannot_win_the_first_election() {
    let mut world = World::new();
    world.join();
    // Registered, never heartbeated: Java makes it master.
    let phantom = world.elect(Some(1), false);
    assert_eq!(
        phantom.answer.code,
        ResponseCode::ControllerElectMasterFailed
    );
    assert!(phantom.events.is_empty());
    // Not registered at all.
    let stranger = world.elect(Some(9), false);
    assert_eq!(
        stranger.answer.code,
        ResponseCode::ControllerElectMasterFailed
    );
    assert_eq!(world.set().master_epoch, 0);
    world.heartbeat(1, -1, 0);
    assert!(world.elect(Some(1), false).answer.is_success());
}

#[test]
fn elect_answers_of_the_live_java_controller() {
    let mut world = World::new();
    let unknown = world.elect(Some(1), false);
    assert_eq!(
        unknown.answer.code,
        ResponseCode::ControllerBrokerNeedToBeRegistered
    );
    assert_eq!(
        unknown.answer.remark.as_deref(),
        Some("Broker hasn't been registered")
    );
    assert_eq!(ext_of(&unknown), vec![]);
    assert!(
        unknown.answer.ext.is_some(),
        "extFields {{}} as Java writes it"
    );

    let mut world = healthy_set(3);
    // The master is alive: MASTER_STILL_EXIST with all four fields, SSS body only.
    let still = world.elect(Some(2), false);
    assert_eq!(still.answer.code, ResponseCode::ControllerMasterStillExist);
    assert_eq!(
        still.answer.remark.as_deref(),
        Some("The old master 1 is still alive, not need to elect new master for broker broker-a")
    );
    assert_eq!(ext_of(&still).len(), 4);
    assert_eq!(body_text(&still), r#"{"syncStateSet":[1,2,3]}"#);
    // An operator designates the current master: the same answer.
    assert_eq!(
        world.elect(Some(1), true).answer.code,
        ResponseCode::ControllerMasterStillExist
    );
    // An operator designates another alive SSS member.
    let moved = world.elect(Some(3), true);
    assert_eq!(moved.answer.code, ResponseCode::Success);
    assert_eq!((world.set().master, world.set().master_epoch), (Some(3), 2));
    assert_eq!(world.set().sync_state_set, [3].into());
    // An operator designates a replica outside the SSS: refused, with {}.
    let outside = world.elect(Some(1), true);
    assert_eq!(
        outside.answer.code,
        ResponseCode::ControllerElectMasterFailed
    );
    assert_eq!(ext_of(&outside), vec![]);
    assert_eq!(world.set().master, Some(3));
}

#[test]
fn regression_failed_controller_elections_do_not_inflate_the_epoch() {
    let mut world = healthy_set(2);
    assert_eq!(world.set().master_epoch, 1);
    // Everyone stops heartbeating.
    world.advance(10_000);
    for _ in 0..3 {
        let failed = world.elect(None, false);
        assert_eq!(
            failed.answer.code,
            ResponseCode::ControllerMasterNotAvailable
        );
        assert_eq!(
            failed.answer.remark.as_deref(),
            Some("Old master has down and failed to elect a new broker master")
        );
    }
    // One epoch for losing the master (it fences the old one); Java: 1 → 4.
    assert_eq!((world.set().master, world.set().master_epoch), (None, 2));
    assert_eq!(world.set().sync_state_set, [1, 2].into(), "the SSS is kept");
    // A broker's own attempt while nobody in the SSS is alive fails without a change.
    assert_eq!(
        world.elect(Some(2), false).answer.code,
        ResponseCode::ControllerElectMasterFailed
    );
    // 2 comes back and asks: elected from the SSS.
    world.heartbeat(2, 1, 10);
    let back = world.elect(Some(2), false);
    assert!(back.answer.is_success());
    assert_eq!((world.set().master, world.set().master_epoch), (Some(2), 3));
}

#[test]
fn no_unclean_election_unless_enabled() {
    let mut world = healthy_set(1);
    // 2 joins but never enters the SSS.
    let id = world.join();
    world.register(id);
    world.advance(4_001);
    world.heartbeat(id, 0, 0);
    let refused = world.elect(None, false);
    assert_eq!(
        refused.answer.code,
        ResponseCode::ControllerMasterNotAvailable
    );
    assert_eq!(world.set().master, None);
    world.unclean = true;
    assert!(world.elect(Some(id), false).answer.is_success());
    assert_eq!(world.set().master, Some(id));
}

#[test]
fn alter_sync_state_set_checks_in_javas_order() {
    let mut world = healthy_set(3);
    let (epoch, sss_epoch) = (world.set().master_epoch, world.set().sync_state_set_epoch);
    /// master, master epoch, proposed set, its SSS epoch, expected code and remark.
    type Case<'a> = (i64, i32, &'a [i64], i32, ResponseCode, &'a str);
    let cases: [Case<'_>; 6] = [
        (1, epoch, &[1, 2, 3], sss_epoch, ResponseCode::ControllerAlterSyncStateSetFailed,
            "The newSyncStateSet is equal with oldSyncStateSet, no needed to update syncStateSet"),
        (2, epoch, &[1, 2], sss_epoch, ResponseCode::ControllerInvalidMaster,
            "Rejecting alter syncStateSet request because the current leader is:{1}, not {2}"),
        (1, epoch + 5, &[1, 2], sss_epoch, ResponseCode::ControllerFencedMasterEpoch,
            "Rejecting alter syncStateSet request because the current master epoch is:{1}, not {6}"),
        (1, epoch, &[1, 2], sss_epoch - 1, ResponseCode::ControllerFencedSyncStateSetEpoch,
            "Rejecting alter syncStateSet request because the current syncStateSet epoch is:{2}, not {1}"),
        (1, epoch, &[1, 7], sss_epoch, ResponseCode::ControllerInvalidReplicas,
            "Rejecting alter syncStateSet request because the replicas {7} don't exist"),
        (1, epoch, &[2, 3], sss_epoch, ResponseCode::ControllerAlterSyncStateSetFailed,
            "Rejecting alter syncStateSet request because the newSyncStateSet don't contains origin leader {1}"),
    ];
    for (master, master_epoch, set, set_epoch, code, remark) in cases {
        let refused = world.alter(master, master_epoch, set, set_epoch);
        assert_eq!(
            (refused.answer.code, refused.answer.remark.as_deref()),
            (code, Some(remark))
        );
        assert_eq!(ext_of(&refused), pairs(&[("newSyncStateSetEpoch", "0")]));
        assert!(refused.events.is_empty());
    }
    // A replica past its heartbeat timeout.
    world.advance(4_001);
    world.heartbeat(1, 1, 0);
    world.heartbeat(2, 1, 0);
    let dead = world.alter(1, epoch, &[1, 3], sss_epoch);
    assert_eq!(dead.answer.code, ResponseCode::ControllerBrokerNotAlive);
    assert_eq!(
        dead.answer.remark.as_deref(),
        Some("Rejecting alter syncStateSet request because the replicas {3} don't alive")
    );
    let shrunk = world.alter(1, epoch, &[1, 2], sss_epoch);
    assert!(shrunk.answer.is_success());
    assert_eq!(world.set().sync_state_set_epoch, sss_epoch + 1);
}

#[test]
fn replica_info_and_sync_state_data() {
    let world = World::new();
    let unknown = replica_info(
        world.view(),
        &GetReplicaInfoRequestHeader {
            broker_name: SET.into(),
        },
    );
    assert_eq!(
        unknown.answer.code,
        ResponseCode::ControllerBrokerMetadataNotExist
    );
    assert_eq!(
        unknown.answer.remark.as_deref(),
        Some("Broker metadata is not existed")
    );
    assert_eq!(ext_of(&unknown), vec![]);

    let mut world = World::new();
    world.join();
    let no_master = replica_info(
        world.view(),
        &GetReplicaInfoRequestHeader {
            broker_name: SET.into(),
        },
    );
    assert_eq!(ext_of(&no_master), pairs(&[("masterEpoch", "0")]));
    assert_eq!(
        body_text(&no_master),
        r#"{"syncStateSet":[],"syncStateSetEpoch":0}"#
    );

    let mut world = healthy_set(2);
    world.advance(4_001);
    world.heartbeat(1, 1, 0);
    let data = sync_state_data(world.view(), &[SET.into(), "broker-x".into()]);
    assert_eq!(
        body_text(&data),
        r#"{"replicasInfoTable":{"broker-a":{"inSyncReplicas":[{"alive":true,"brokerAddress":"10.0.0.1:30911","brokerId":1,"brokerName":"broker-a"},{"alive":false,"brokerAddress":"10.0.0.2:30911","brokerId":2,"brokerName":"broker-a"}],"masterAddress":"10.0.0.1:30911","masterBrokerId":1,"masterEpoch":1,"notInSyncReplicas":[],"syncStateSetEpoch":2}}}"#
    );
    assert_eq!(data.answer.ext, None);
    let empty = sync_state_data(world.view(), &[]);
    assert_eq!(empty.answer.code, ResponseCode::SystemError);
}

#[test]
fn clean_refusals_of_the_live_java_controller() {
    let mut world = World::new();
    let unknown = world.clean(Some("1"), false);
    assert_eq!(
        unknown.answer.code,
        ResponseCode::ControllerInvalidCleanBrokerMetadata
    );
    assert_eq!(
        unknown.answer.remark.as_deref(),
        Some("Broker broker-a is not existed,clean broker data failure.")
    );
    assert_eq!(unknown.answer.ext, None);

    let mut world = healthy_set(2);
    let blank = world.clean(None, false);
    assert_eq!(
        blank.answer.remark.as_deref(),
        Some("Broker broker-a is still alive, clean up failure")
    );
    let alive = world.clean(Some("2"), false);
    assert_eq!(
        alive.answer.remark.as_deref(),
        Some("Broker [broker-a,  2] is still alive, clean up failure")
    );
    let garbage = world.clean(Some("1;x"), false);
    assert_eq!(
        garbage.answer.code,
        ResponseCode::ControllerInvalidCleanBrokerMetadata
    );
    assert!(garbage
        .answer
        .remark
        .unwrap()
        .contains("\"x\" is not a broker id"));
    assert!(world.set().replicas.len() == 2);
}

#[test]
fn regression_a_clean_removes_from_ids_and_sss_or_neither() {
    let mut world = healthy_set(3);
    world.advance(4_001);
    world.heartbeat(1, 1, 0);
    world.heartbeat(2, 1, 0);
    let cleaned = world.clean(Some("3"), false);
    assert!(cleaned.answer.is_success());
    assert_eq!(
        (cleaned.answer.ext.clone(), cleaned.answer.body.clone()),
        (None, None)
    );
    let set = world.set();
    assert!(!set.replicas.contains_key(&3) && !set.sync_state_set.contains(&3));
    // A clean that empties the SSS (Java then drops the SSS half of the set
    // and keeps the ids) leaves one consistent set: no master, empty SSS.
    let mut world = healthy_set(1);
    let outside = world.join();
    world.register(outside);
    world.advance(4_001);
    world.heartbeat(outside, 0, 0);
    assert!(world.clean(Some("1"), false).answer.is_success());
    let set = world.set();
    assert_eq!(
        (set.master, set.sync_state_set.len(), set.replicas.len()),
        (None, 0, 1)
    );
    let next = next_broker_id(
        world.view(),
        &GetNextBrokerIdRequestHeader {
            cluster_name: CLUSTER.into(),
            broker_name: SET.into(),
        },
    );
    assert_eq!(
        header::<GetNextBrokerIdResponseHeader>(&next).next_broker_id,
        Some(3)
    );
    // A whole-set clean of living brokers: the set starts again at 1.
    assert!(world.clean(None, true).answer.is_success());
    assert!(world.replicas.get(SET).is_none());
    assert_eq!(world.join(), 1);
}

#[test]
fn regression_a_new_leader_waits_a_heartbeat_timeout_before_taking_masters_for_dead() {
    let mut world = healthy_set(2);
    // A new leader that has heard only from replica 2 so far.
    let leader_since = world.now;
    world.live = LiveTable::new();
    world.heartbeat(2, 1, 0);
    world.advance(3_999);
    world.heartbeat(2, 1, 0);
    assert!(sets_to_reelect(world.view(), leader_since).is_empty());
    // The master heartbeats within the timeout: nothing to do.
    world.heartbeat(1, 1, 0);
    world.advance(1);
    assert!(sets_to_reelect(world.view(), leader_since).is_empty());
    // It then goes quiet for longer than its timeout: elect.
    world.advance(4_001);
    world.heartbeat(2, 1, 0);
    assert_eq!(
        sets_to_reelect(world.view(), leader_since),
        vec![SET.to_string()]
    );
    // Nobody alive at all: nothing to elect from.
    world.advance(4_001);
    assert!(sets_to_reelect(world.view(), leader_since).is_empty());
}
