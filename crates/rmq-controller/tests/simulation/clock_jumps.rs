//! What the core does when a node's clock jumps. The simulation gives each
//! node its own clock and jumps it either way; these tests pin down, on the
//! core alone, what such a jump does to liveness, expiry and re-election,
//! so that the runs' behaviour under jumps is explained rather than merely
//! survived.
//!
//! Backwards: nothing underflows (`Millis::since` saturates). A replica's
//! last heartbeat lies in the future of the new clock, so it stays alive
//! for the jump's length longer, and a leader's grace period
//! (`sets_to_reelect`) is measured from a serving time in the future: a
//! dead master is replaced that much later. Safety is untouched.
//!
//! Forwards: every replica looks silent at once. The next expiry scan
//! removes them all, and a leader that loses the master this way elects at
//! once — and since nobody is alive, it records the loss of a healthy
//! master (`ElectMaster { new_master: None }`, master epoch + 1). The
//! brokers' next heartbeats and replica-info syncs elect a master again: an
//! availability gap of a few seconds and two epochs, no safety problem.
//! (`ControllerNode::now` reads a monotonic clock, so in production only a
//! paused VM or a suspended host makes it jump forwards, never backwards.)

use rmq_controller::decide::{self, View};
use rmq_controller::{Event, Heartbeat, LiveKey, LiveTable, Millis, Replicas};
use rmq_protocol::headers::ElectMasterRequestHeader;
use rmq_wire::ResponseCode;

const SET: &str = "broker-a";

fn heartbeat(live: &mut LiveTable, id: i64, now: u64) {
    live.heartbeat(
        Heartbeat {
            key: LiveKey {
                cluster: "c".into(),
                broker_name: SET.into(),
                broker_id: id,
            },
            broker_addr: format!("10.0.0.{id}:30911"),
            epoch: Some(1),
            max_offset: Some(100),
            confirm_offset: Some(100),
            timeout_ms: Some(4_000),
            election_priority: None,
        },
        None,
        Millis(now),
    );
}

/// Replicas 1 and 2, 1 master, both in the SSS.
fn healthy_set() -> Replicas {
    let mut replicas = Replicas::new();
    for id in [1, 2] {
        replicas.apply(&Event::ApplyBrokerId {
            cluster: "c".into(),
            broker_name: SET.into(),
            broker_addr: format!("10.0.0.{id}:30911"),
            check_code: format!("10.0.0.{id}:30911;1"),
            broker_id: id,
        });
    }
    replicas.apply(&Event::ElectMaster {
        broker_name: SET.into(),
        new_master: Some(1),
    });
    replicas.apply(&Event::AlterSyncStateSet {
        broker_name: SET.into(),
        sync_state_set: [1, 2].into(),
    });
    replicas
}

fn view<'a>(replicas: &'a Replicas, live: &'a LiveTable, now: u64) -> View<'a> {
    View {
        replicas,
        live,
        now: Millis(now),
        elect_unclean: false,
    }
}

#[test]
fn a_backward_jump_keeps_a_dead_master_alive_for_the_jump_longer() {
    let replicas = healthy_set();
    let mut live = LiveTable::new();
    heartbeat(&mut live, 1, 20_000);
    heartbeat(&mut live, 2, 20_000);
    // The master dies; the clock jumps back 10 s. On the new clock its
    // timeout ends at 24 000, 14 s of real time away instead of 4.
    let mut now = 12_000;
    assert!(live.expire(Millis(now)).is_empty());
    while now < 24_000 {
        now += 1_000;
        heartbeat(&mut live, 2, now);
        assert!(live.is_alive("c", SET, 1, Millis(now)), "at {now}");
    }
    now += 1_000;
    heartbeat(&mut live, 2, now);
    assert_eq!(live.expire(Millis(now)).len(), 1);
    // A leader that began serving at 30 000 on the old clock counts its
    // grace from a time that is now in the future: nothing is due yet…
    let since = Millis(30_000);
    let waiting = view(&replicas, &live, now);
    assert!(decide::sets_to_reelect(waiting, since).is_empty());
    // …until the new clock has passed it by a heartbeat timeout.
    heartbeat(&mut live, 2, 34_000);
    let due = view(&replicas, &live, 34_000);
    assert_eq!(decide::sets_to_reelect(due, since), vec![SET.to_owned()]);
}

#[test]
fn a_forward_jump_takes_a_healthy_master_for_lost_until_it_heartbeats() {
    let mut replicas = healthy_set();
    let mut live = LiveTable::new();
    heartbeat(&mut live, 1, 10_000);
    heartbeat(&mut live, 2, 10_000);
    // +30 s: the next scan expires both replicas at once…
    let now = 40_000;
    assert_eq!(live.expire(Millis(now)).len(), 2);
    // …and the leader's election for the "dead" master finds nobody.
    let controller = ElectMasterRequestHeader {
        cluster_name: Some(String::new()),
        broker_name: Some(SET.into()),
        broker_id: None,
        designate_elect: Some(false),
        invoke_time: None,
    };
    let lost = decide::elect_master(view(&replicas, &live, now), &controller);
    assert_eq!(lost.answer.code, ResponseCode::ControllerMasterNotAvailable);
    for event in &lost.events {
        replicas.apply(event);
    }
    let set = replicas.get(SET).unwrap();
    assert_eq!((set.master, set.master_epoch), (None, 2));
    // The brokers' next heartbeats (within a second) make them eligible,
    // and the first one to ask is elected again from the SSS.
    heartbeat(&mut live, 1, now + 500);
    heartbeat(&mut live, 2, now + 600);
    let broker = ElectMasterRequestHeader {
        broker_id: Some(1),
        cluster_name: Some("c".into()),
        ..controller
    };
    let back = decide::elect_master(view(&replicas, &live, now + 700), &broker);
    assert!(back.answer.is_success(), "{back:?}");
    for event in &back.events {
        replicas.apply(event);
    }
    let set = replicas.get(SET).unwrap();
    assert_eq!((set.master, set.master_epoch), (Some(1), 3));
}
