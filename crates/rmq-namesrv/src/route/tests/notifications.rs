//! NOTIFY_MIN_BROKER_ID_CHANGE decisions, as Java's
//! `RouteInfoManager.registerBroker` (a registration lowering its group's
//! smallest id) and `unRegisterBroker` (an acting-master group losing it) make
//! them: when, with which header values, to which targets.

use super::*;
use crate::route::MinIdNotification;

const C: &str = "DefaultCluster";
const N: &str = "broker-a";
const M: &str = "127.0.0.1:10911";
const S1: &str = "127.0.0.1:10921";
const S2: &str = "127.0.0.1:10931";

fn notifying(routes: &SharedRoutes, reg: BrokerRegistration) -> Vec<MinIdNotification> {
    routes
        .register_broker(reg, T0, true, false)
        .unwrap()
        .notifications
}

fn slaves(acting: bool) -> SharedRoutes {
    let routes = SharedRoutes::new();
    for (addr, id) in [(S1, 1), (S2, 2)] {
        register(&routes, broker(C, N, addr, id).acting(Some(acting)));
    }
    routes
}

#[test]
fn a_master_joining_its_slaves_notifies_the_slaves() {
    let routes = slaves(false);
    let sent = notifying(&routes, broker(C, N, M, 0).ha("127.0.0.1:10912"));
    assert_eq!(
        sent,
        [MinIdNotification {
            min_broker_id: 0,
            min_broker_addr: M.into(),
            offline_broker_addr: None,
            ha_broker_addr: Some("127.0.0.1:10912".into()),
            targets: vec![S1.into(), S2.into()],
        }]
    );
}

#[test]
fn a_smaller_slave_notifies_the_others() {
    let routes = SharedRoutes::new();
    register(&routes, broker(C, N, S2, 2));
    let sent = notifying(&routes, broker(C, N, S1, 1));
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].min_broker_id, sent[0].min_broker_addr.as_str()),
        (1, S1)
    );
    assert_eq!(sent[0].targets, [S2]);
}

#[test]
fn a_lone_member_is_notified_itself() {
    let routes = SharedRoutes::new();
    register(&routes, broker(C, N, S1, 1));
    // Promoted in place: its id 1 goes, id 0 is the only member.
    let sent = notifying(&routes, broker(C, N, S1, 0));
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].targets, [S1]);
    assert_eq!(sent[0].min_broker_id, 0);
}

#[test]
fn no_notification_without_a_smaller_id_or_when_disabled() {
    let routes = SharedRoutes::new();
    assert!(
        notifying(&routes, broker(C, N, M, 0)).is_empty(),
        "first member"
    );
    assert!(
        notifying(&routes, broker(C, N, S1, 1)).is_empty(),
        "a larger id"
    );
    let routes = slaves(true);
    let outcome = routes
        .register_broker(broker(C, N, M, 0), T0, false, false)
        .unwrap();
    assert!(
        outcome.notifications.is_empty(),
        "notifyMinBrokerIdChanged=false"
    );
}

#[test]
fn master_unregistration_notifies_the_remaining_members() {
    let routes = slaves(true);
    register(&routes, broker(C, N, M, 0).acting(Some(true)));
    let request = unregistration(&routes.read(), C, M, N, 0);
    let outcome = routes.write().unregister_batch(&[request], true);
    assert_eq!(
        outcome.notifications,
        [MinIdNotification {
            min_broker_id: 1,
            min_broker_addr: S1.into(),
            offline_broker_addr: Some(M.into()),
            ha_broker_addr: None,
            targets: vec![S1.into(), S2.into()],
        }]
    );
}

#[test]
fn unregistration_notifies_only_acting_master_groups_losing_their_min() {
    // enableActingMaster=false: nothing.
    let routes = slaves(false);
    register(&routes, broker(C, N, M, 0));
    let request = unregistration(&routes.read(), C, M, N, 0);
    assert!(routes
        .write()
        .unregister_batch(&[request], true)
        .notifications
        .is_empty());

    // Not the smallest id: nothing.
    let routes = slaves(true);
    let request = unregistration(&routes.read(), C, S2, N, 2);
    assert!(routes
        .write()
        .unregister_batch(&[request], true)
        .notifications
        .is_empty());

    // Disabled: nothing.
    let routes = slaves(true);
    let request = unregistration(&routes.read(), C, S1, N, 1);
    assert!(routes
        .write()
        .unregister_batch(&[request], false)
        .notifications
        .is_empty());
}

#[test]
fn one_notification_per_group_and_batch() {
    let routes = slaves(true);
    register(&routes, broker(C, N, M, 0).acting(Some(true)));
    let batch = [
        unregistration(&routes.read(), C, M, N, 0),
        unregistration(&routes.read(), C, S1, N, 1),
    ];
    let outcome = routes.write().unregister_batch(&batch, true);
    assert_eq!(
        outcome.notifications,
        [MinIdNotification {
            min_broker_id: 2,
            min_broker_addr: S2.into(),
            offline_broker_addr: Some(S1.into()),
            ha_broker_addr: None,
            targets: vec![S2.into()],
        }]
    );
}
