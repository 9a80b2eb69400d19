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
//! Forwards: every replica looks silent at once. The driver's scans run on
//! the node's clock, so the next scan comes the jump's length later than
//! planned; past 2 s it takes that for a stall (as after a paused VM),
//! restarts every timeout, and nothing expires: a healthy master keeps its
//! place. A shorter jump shortens every replica's remaining timeout by its
//! length. Only if the scans did not notice would the jump expire every
//! replica and make the leader record the loss of a healthy master
//! (`ElectMaster { new_master: None }`, master epoch + 1) until the
//! brokers' next heartbeats elect one again. (`ControllerNode::now` reads
//! a monotonic clock, so in production only a paused VM or a suspended
//! host makes it jump forwards, never backwards.)

use rmq_controller::core::decide::{self, View};
use rmq_controller::core::driver::{Action, Driver, Env, Settings};
use rmq_controller::{Event, Heartbeat, LiveKey, LiveTable, Millis, Replicas};

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
fn a_forward_jump_is_taken_for_a_stall_and_the_master_keeps_its_place() {
    let replicas = healthy_set();
    let mut live = LiveTable::new();
    let mut driver = Driver::new(Millis(0));
    let settings = Settings {
        process_read_event: false,
        elect_unclean: false,
        elect_attempts: 3,
        notify_role_changed: true,
    };
    let mut step =
        |live: &mut LiveTable,
         now: u64,
         input: &mut dyn FnMut(&mut Driver, &mut Env<'_>) -> Vec<Action>| {
            let mut env = Env {
                replicas: &replicas,
                live,
                now: Millis(now),
                settings,
            };
            input(&mut driver, &mut env)
        };
    assert!(step(&mut live, 1_000, &mut |d, env| d.start_serving(env)).is_empty());
    // Heartbeats every second, both scans every second, until 10 s.
    let mut scans = |live: &mut LiveTable, now: u64| {
        let mut actions = step(live, now, &mut |d, env| d.expiry_scan(1_000, env));
        actions.extend(step(live, now, &mut |d, env| d.master_scan(1_000, env)));
        actions
    };
    for now in (1_000..=10_000).step_by(1_000) {
        heartbeat(&mut live, 1, now);
        heartbeat(&mut live, 2, now);
        let scanned = scans(&mut live, now);
        assert!(scanned.is_empty(), "at {now}: {scanned:?}");
    }
    // +30 s: the scans planned for 11 s run at 41 s on the node's clock.
    // Expiring would take both replicas for dead and elect nobody; the
    // stall rule restarts their timeouts instead.
    let late = scans(&mut live, 41_000);
    assert!(late.is_empty(), "{late:?}");
    assert!(live.is_alive("c", SET, 1, Millis(44_000)));
    // On time again, with the brokers' heartbeats (their clocks did not
    // jump) arriving as before.
    for now in (42_000..=50_000).step_by(1_000) {
        let scanned = scans(&mut live, now);
        assert!(scanned.is_empty(), "at {now}: {scanned:?}");
        heartbeat(&mut live, 1, now);
        heartbeat(&mut live, 2, now);
    }
}
