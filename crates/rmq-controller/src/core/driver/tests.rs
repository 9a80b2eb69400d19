//! The driver, checked by the actions it returns for what it is fed.

use rmq_wire::{ExtFields, RemotingCommand, RequestCode, ResponseCode};

use super::*;
use crate::{Event, Heartbeat, LiveKey};

const SET: &str = "broker-a";

/// A node's driver with the state, liveness and clock it is stepped on.
struct Node {
    driver: Driver,
    replicas: Replicas,
    live: LiveTable,
    now: Millis,
    settings: Settings,
}

impl Node {
    /// A serving leader at 1 s, with Java's default settings.
    fn leader() -> Node {
        let mut node = Node {
            driver: Driver::new(Millis(0)),
            replicas: Replicas::new(),
            live: LiveTable::new(),
            now: Millis(1_000),
            settings: Settings {
                process_read_event: false,
                elect_unclean: false,
                elect_attempts: 3,
                notify_role_changed: true,
            },
        };
        assert!(node.step(Driver::start_serving).is_empty());
        node
    }

    fn step(
        &mut self,
        input: impl FnOnce(&mut Driver, &mut Env<'_>) -> Vec<Action>,
    ) -> Vec<Action> {
        let mut env = Env {
            replicas: &self.replicas,
            live: &mut self.live,
            now: self.now,
            settings: self.settings,
        };
        input(&mut self.driver, &mut env)
    }

    fn request(&mut self, command: RemotingCommand) -> (Ticket, Vec<Action>) {
        let mut env = Env {
            replicas: &self.replicas,
            live: &mut self.live,
            now: self.now,
            settings: self.settings,
        };
        self.driver.request(command, &mut env)
    }

    /// Applies a proposal's events, as the node's state machine does once
    /// the entry is committed, and reports it applied.
    fn commit(&mut self, ticket: Ticket, proposed: &[Event]) -> Vec<Action> {
        for event in proposed {
            self.replicas.apply(event);
        }
        self.step(|d, env| d.committed(ticket, Commit::Applied, env))
    }

    fn heartbeat(&mut self, id: i64) {
        self.live.heartbeat(
            Heartbeat {
                key: LiveKey {
                    cluster: "c".into(),
                    broker_name: SET.into(),
                    broker_id: id,
                },
                broker_addr: addr(id),
                epoch: Some(1),
                max_offset: Some(100),
                confirm_offset: Some(100),
                timeout_ms: Some(4_000),
                election_priority: None,
            },
            Some(id as u64),
            self.now,
        );
    }

    /// Replicas 1 and 2 registered and heartbeating (each on connection
    /// `id`), 1 master, both in the SSS.
    fn with_healthy_set(mut self) -> Node {
        for id in [1, 2] {
            self.replicas.apply(&Event::ApplyBrokerId {
                cluster: "c".into(),
                broker_name: SET.into(),
                broker_addr: addr(id),
                check_code: format!("{};1", addr(id)),
                broker_id: id,
            });
            self.heartbeat(id);
        }
        self.replicas.apply(&Event::ElectMaster {
            broker_name: SET.into(),
            new_master: Some(1),
        });
        self.replicas.apply(&Event::AlterSyncStateSet {
            broker_name: SET.into(),
            sync_state_set: [1, 2].into(),
        });
        self
    }
}

fn addr(id: i64) -> String {
    format!("10.0.0.{id}:30911")
}

/// CONTROLLER_APPLY_BROKER_ID of `id` by the broker at 10.1.0.1 (one
/// event when the id is free).
fn apply_id(set: &str, id: i64) -> RemotingCommand {
    apply_id_by(set, id, "10.1.0.1:30911")
}

fn apply_id_by(set: &str, id: i64, broker: &str) -> RemotingCommand {
    let mut command = RemotingCommand::request(RequestCode::ControllerApplyBrokerId, 1);
    command.version = 515;
    let ext: ExtFields = [
        ("clusterName", "c".to_owned()),
        ("brokerName", set.to_owned()),
        ("appliedBrokerId", id.to_string()),
        ("registerCheckCode", format!("{broker};1")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    command.ext_fields = Some(ext);
    command
}

fn answers(actions: &[Action]) -> Vec<(Ticket, ResponseCode, Option<&str>)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Answer { ticket, answer } => {
                Some((*ticket, answer.code, answer.remark.as_deref()))
            }
            _ => None,
        })
        .collect()
}

fn proposals(actions: &[Action]) -> Vec<(Ticket, Vec<Event>)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Propose { ticket, events } => Some((*ticket, events.clone())),
            _ => None,
        })
        .collect()
}

fn the_proposal(actions: &[Action]) -> (Ticket, Vec<Event>) {
    let mut all = proposals(actions);
    assert_eq!(all.len(), 1, "{actions:?}");
    all.remove(0)
}

#[test]
fn a_node_that_does_not_serve_refuses_at_once() {
    let mut node = Node::leader();
    node.step(|d, _| d.stop_serving());
    let (ticket, actions) = node.request(apply_id("b", 1));
    assert_eq!(
        answers(&actions),
        [(ticket, ResponseCode::ControllerNotLeader, Some(NOT_LEADER))]
    );
    assert!(proposals(&actions).is_empty());
}

#[test]
fn a_decision_is_answered_once_its_entry_is_applied() {
    let mut node = Node::leader();
    let (ticket, actions) = node.request(apply_id("b", 1));
    assert!(answers(&actions).is_empty(), "{actions:?}");
    let (proposed, events) = the_proposal(&actions);
    assert_eq!(proposed, ticket);
    assert!(actions.contains(&Action::StartTimer {
        timer: Timer::Commit(ticket),
        after_ms: COMMIT_TIMEOUT_MS
    }));
    let actions = node.commit(ticket, &events);
    assert_eq!(answers(&actions), [(ticket, ResponseCode::Success, None)]);
    assert!(node.replicas.get("b").is_some());
}

#[test]
fn a_read_changes_nothing_and_is_answered_at_once() {
    let mut node = Node::leader().with_healthy_set();
    let mut read = RemotingCommand::request(RequestCode::ControllerGetReplicaInfo, 1);
    read.ext_fields = Some(
        [("brokerName".to_owned(), SET.to_owned())]
            .into_iter()
            .collect(),
    );
    let (ticket, actions) = node.request(read);
    assert_eq!(answers(&actions), [(ticket, ResponseCode::Success, None)]);
    assert!(proposals(&actions).is_empty());
}

#[test]
fn the_next_decision_waits_for_the_previous_entry_even_past_the_commit_timeout() {
    let mut node = Node::leader();
    let (first, actions) = node.request(apply_id("b", 1));
    let (_, events) = the_proposal(&actions);
    // The same id for another broker: decided on a state without the first
    // entry, it would be granted twice.
    let (second, actions) = node.request(apply_id_by("b", 1, "10.1.0.2:30911"));
    assert_eq!(
        actions,
        [Action::StartTimer {
            timer: Timer::Turn(second),
            after_ms: COMMIT_TIMEOUT_MS
        }]
    );
    let actions = node.step(|d, env| d.timer_expired(Timer::Commit(first), env));
    assert_eq!(
        answers(&actions),
        [(
            first,
            ResponseCode::SystemError,
            Some("the decision was not committed within 5 s")
        )]
    );
    assert!(proposals(&actions).is_empty(), "the turn is still held");
    // The entry commits after all: nobody is told again, and the second
    // request is decided on the state that has it.
    let actions = node.commit(first, &events);
    let told: Vec<_> = answers(&actions)
        .iter()
        .map(|(t, code, _)| (*t, *code))
        .collect();
    assert_eq!(told, [(second, ResponseCode::ControllerBrokerIdInvalid)]);
}

#[test]
fn a_request_that_waits_too_long_for_its_turn_is_refused_undecided() {
    let mut node = Node::leader();
    let (first, actions) = node.request(apply_id("b", 1));
    let (_, events) = the_proposal(&actions);
    let (second, _) = node.request(apply_id("c", 1));
    let actions = node.step(|d, env| d.timer_expired(Timer::Turn(second), env));
    assert_eq!(
        answers(&actions),
        [(
            second,
            ResponseCode::SystemError,
            Some("an earlier decision is still being committed; try again")
        )]
    );
    let actions = node.commit(first, &events);
    assert_eq!(answers(&actions), [(first, ResponseCode::Success, None)]);
    assert!(
        proposals(&actions).is_empty(),
        "the refused request is gone"
    );
    assert!(node.replicas.get("c").is_none());
}

#[test]
fn a_failed_commit_is_an_error_and_frees_the_turn() {
    let mut node = Node::leader();
    let (first, _) = node.request(apply_id("b", 1));
    let (second, _) = node.request(apply_id("c", 1));
    let actions = node.step(|d, env| d.committed(first, Commit::Failed("disk full".into()), env));
    assert_eq!(
        answers(&actions),
        [(
            first,
            ResponseCode::SystemError,
            Some("the decision could not be committed: disk full")
        )]
    );
    assert_eq!(the_proposal(&actions).0, second);
    let actions = node.step(|d, env| d.committed(second, Commit::NotLeader, env));
    assert_eq!(
        answers(&actions),
        [(second, ResponseCode::ControllerNotLeader, Some(NOT_LEADER))]
    );
}

#[test]
fn losing_leadership_refuses_the_waiting_and_keeps_the_entry_being_committed() {
    let mut node = Node::leader();
    let (first, actions) = node.request(apply_id("b", 1));
    let (_, events) = the_proposal(&actions);
    let (second, _) = node.request(apply_id("c", 1));
    let actions = node.step(|d, _| d.stop_serving());
    assert_eq!(
        answers(&actions),
        [(second, ResponseCode::ControllerNotLeader, Some(NOT_LEADER))]
    );
    // Its entry committed under the next leader: the answer is true.
    let actions = node.commit(first, &events);
    assert_eq!(answers(&actions), [(first, ResponseCode::Success, None)]);
    assert_eq!(node.driver.serving_since(), None);
}

#[test]
fn with_process_read_event_a_read_barrier_comes_before_every_decision() {
    let mut node = Node::leader();
    node.settings.process_read_event = true;
    let (first, actions) = node.request(apply_id("b", 1));
    assert_eq!(actions, [Action::ReadBarrier { ticket: first }]);
    let actions = node.step(|d, env| d.barrier_passed(first, true, env));
    let (_, events) = the_proposal(&actions);
    let (second, actions) = node.request(apply_id("c", 1));
    assert!(!actions.contains(&Action::ReadBarrier { ticket: second }));
    let actions = node.commit(first, &events);
    assert_eq!(answers(&actions), [(first, ResponseCode::Success, None)]);
    assert!(actions.contains(&Action::ReadBarrier { ticket: second }));
    let actions = node.step(|d, env| d.barrier_passed(second, false, env));
    assert_eq!(
        answers(&actions),
        [(second, ResponseCode::ControllerNotLeader, Some(NOT_LEADER))]
    );
}

#[test]
fn a_master_whose_connection_closes_is_replaced_and_the_alive_members_told() {
    let mut node = Node::leader().with_healthy_set();
    let actions = node.step(|d, env| d.connection_closed(1, env));
    let (ticket, events) = the_proposal(&actions);
    assert_eq!(
        events,
        [Event::ElectMaster {
            broker_name: SET.into(),
            new_master: Some(2)
        }]
    );
    let actions = node.commit(ticket, &events);
    let [Action::Notify { brokers, notice }] = actions.as_slice() else {
        panic!("{actions:?}");
    };
    assert_eq!(brokers, &[addr(2)], "replica 1 is dead");
    assert_eq!(notice.request_code(), RequestCode::NotifyBrokerRoleChanged);
    assert_eq!(notice.ext("masterBrokerId"), Some("2"));
}

#[test]
fn no_notice_when_notify_broker_role_changed_is_off() {
    let mut node = Node::leader().with_healthy_set();
    node.settings.notify_role_changed = false;
    let actions = node.step(|d, env| d.connection_closed(1, env));
    let (ticket, events) = the_proposal(&actions);
    assert!(node.commit(ticket, &events).is_empty());
}

#[test]
fn a_follower_expires_replicas_but_elects_nobody() {
    let mut node = Node::leader().with_healthy_set();
    node.step(|d, _| d.stop_serving());
    assert!(node.step(|d, env| d.connection_closed(1, env)).is_empty());
    assert!(!node.live.is_alive("c", SET, 1, node.now));
}

#[test]
fn the_controllers_election_is_tried_electmastermaxretrycount_times() {
    let mut node = Node::leader().with_healthy_set();
    node.settings.elect_attempts = 2;
    let actions = node.step(|d, env| d.connection_closed(1, env));
    let (first, _) = the_proposal(&actions);
    let failed = || Commit::Failed("no quorum".into());
    let actions = node.step(|d, env| d.committed(first, failed(), env));
    let (second, _) = the_proposal(&actions);
    let actions = node.step(|d, env| d.committed(second, failed(), env));
    assert!(actions.is_empty(), "{actions:?}");
}

#[test]
fn an_election_already_waiting_for_its_set_is_not_queued_twice() {
    let mut node = Node::leader().with_healthy_set();
    let (busy, actions) = node.request(apply_id("b", 1));
    let (_, events) = the_proposal(&actions);
    // Replica 1's connection closes, and a scan then finds it dead too.
    let queued = node.step(|d, env| d.connection_closed(1, env));
    assert_eq!(queued.len(), 1, "a turn timer: {queued:?}");
    node.now = node.now.plus(5_000);
    node.heartbeat(2);
    assert!(node.step(|d, env| d.master_scan(5_000, env)).is_empty());
    let actions = node.commit(busy, &events);
    assert_eq!(answers(&actions), [(busy, ResponseCode::Success, None)]);
    assert_eq!(the_proposal(&actions).1.len(), 1, "one election");
}

#[test]
fn a_scan_that_runs_late_restarts_every_timeout_instead_of_expiring() {
    let mut node = Node::leader().with_healthy_set();
    // Both heartbeated at 1 s with a 4 s timeout. The scan planned for 2 s
    // runs at 9 s: the process was stopped, so their silence proves nothing.
    node.now = Millis(9_000);
    assert!(node.step(|d, env| d.expiry_scan(1_000, env)).is_empty());
    assert!(node.live.is_alive("c", SET, 1, Millis(12_000)));
    // On time from then on: silent for a whole timeout, they expire, and
    // the master is replaced by nobody (nobody is alive).
    for at in [10_000, 11_000, 12_000, 13_000] {
        node.now = Millis(at);
        assert!(
            node.step(|d, env| d.expiry_scan(1_000, env)).is_empty(),
            "at {at}"
        );
    }
    node.now = Millis(14_000);
    let actions = node.step(|d, env| d.expiry_scan(1_000, env));
    let (_, events) = the_proposal(&actions);
    assert_eq!(
        events,
        [Event::ElectMaster {
            broker_name: SET.into(),
            new_master: None
        }]
    );
}
