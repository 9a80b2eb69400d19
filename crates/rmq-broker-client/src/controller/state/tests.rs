//! Unit tests of the role rules: what each decision returns.

use super::*;

fn decision(master: Option<i64>, epoch: i32, set: &[i64], set_epoch: i32) -> RoleDecision {
    RoleDecision {
        master_id: master,
        master_addr: master.map(|m| format!("10.0.0.{m}:30911")),
        master_epoch: epoch,
        sync_state_set: SyncStateSet {
            sync_state_set: set.iter().copied().collect(),
            sync_state_set_epoch: set_epoch,
        },
    }
}

fn replica(id: i64) -> ReplicaState {
    let mut state = ReplicaState::new();
    state.set_controller_id(id);
    state
}

#[test]
fn nothing_is_accepted_before_the_controller_id_is_known() {
    let mut state = ReplicaState::new();
    assert_eq!(
        state.apply(&decision(Some(1), 1, &[1], 1), Source::Elect),
        None
    );
    assert_eq!(state.last_epoch(), -1);
}

#[test]
fn the_elected_replica_becomes_master_and_registers_as_id_0() {
    let mut state = replica(1);
    let change = state
        .apply(&decision(Some(1), 1, &[1], 1), Source::Elect)
        .unwrap();
    assert_eq!(
        (&change.from, &change.to),
        (&ReplicaRole::Unknown, &ReplicaRole::Master)
    );
    assert_eq!(state.sync_state_set().sync_state_set_epoch, 1);
    let role = change.registrar_role();
    assert_eq!((role.broker_id, role.state_version), (0, Some(1)));
    assert_eq!(role.master, MasterInfo::default());
}

#[test]
fn a_slave_registers_under_its_controller_id_with_its_master() {
    let mut state = replica(2);
    let change = state
        .apply(&decision(Some(1), 3, &[1], 4), Source::Register)
        .unwrap();
    let role = change.registrar_role();
    assert_eq!((role.broker_id, role.state_version), (2, Some(3)));
    assert_eq!(role.master.master_addr.as_deref(), Some("10.0.0.1:30911"));
    // A slave keeps no set of its own.
    assert_eq!(state.sync_state_set(), &SyncStateSet::default());
    assert_eq!(state.last_epoch(), 3);
}

#[test]
fn only_a_newer_epoch_changes_the_role() {
    let mut state = replica(2);
    state
        .apply(&decision(Some(1), 2, &[1], 2), Source::Register)
        .unwrap();
    assert_eq!(
        state.apply(&decision(Some(2), 2, &[2], 3), Source::Notify),
        None
    );
    assert_eq!(
        state.apply(&decision(Some(2), 1, &[2], 3), Source::Notify),
        None
    );
    let change = state
        .apply(&decision(Some(2), 3, &[2], 3), Source::Notify)
        .unwrap();
    assert_eq!(change.to, ReplicaRole::Master);
    assert_eq!(change.source, Source::Notify);
    // The same role with a newer epoch is still a change to register.
    let again = state
        .apply(&decision(Some(2), 4, &[2], 5), Source::Elect)
        .unwrap();
    assert_eq!(
        (again.from, again.to),
        (ReplicaRole::Master, ReplicaRole::Master)
    );
}

#[test]
fn a_decision_without_master_or_address_changes_nothing() {
    let mut state = replica(2);
    assert_eq!(
        state.apply(&decision(None, 1, &[], 0), Source::Register),
        None
    );
    let mut no_addr = decision(Some(1), 1, &[1], 1);
    no_addr.master_addr = Some(String::new());
    assert_eq!(state.apply(&no_addr, Source::Elect), None);
    assert_eq!(state.master_epoch(), 0);
}

#[test]
fn replica_info_elects_adopts_or_changes() {
    let mut state = replica(1);
    assert_eq!(
        state.on_replica_info(&decision(None, 1, &[], 0)),
        SyncStep::Elect
    );
    let SyncStep::Changed(change) = state.on_replica_info(&decision(Some(1), 1, &[1], 1)) else {
        panic!("a change");
    };
    assert_eq!(change.source, Source::Sync);
    assert_eq!(
        state.on_replica_info(&decision(Some(1), 1, &[1], 1)),
        SyncStep::Nothing
    );
    assert_eq!(
        state.on_replica_info(&decision(Some(1), 1, &[1, 2], 2)),
        SyncStep::AdoptedSyncStateSet
    );
    assert_eq!(
        state.sync_state_set().sync_state_set,
        BTreeSet::from([1, 2])
    );
    // Older news is ignored.
    assert_eq!(
        state.on_replica_info(&decision(Some(3), 0, &[3], 9)),
        SyncStep::Nothing
    );
}

#[test]
fn the_master_proposes_itself_and_the_caught_up() {
    let mut state = replica(1);
    assert_eq!(state.proposal([2, 3]), None, "not master yet");
    state
        .apply(&decision(Some(1), 1, &[1], 1), Source::Elect)
        .unwrap();
    assert_eq!(state.proposal([]), None, "unchanged");
    let grown = state.proposal([3, 2]).unwrap();
    assert_eq!(grown.sync_state_set, BTreeSet::from([1, 2, 3]));
    assert_eq!(grown.sync_state_set_epoch, 1);
    assert!(state.adopt_sync_state_set(&SyncStateSet {
        sync_state_set: grown.sync_state_set,
        sync_state_set_epoch: 2,
    }));
    let shrunk = state.proposal([2]).unwrap();
    assert_eq!(shrunk.sync_state_set, BTreeSet::from([1, 2]));
    assert_eq!(shrunk.sync_state_set_epoch, 2);
}
