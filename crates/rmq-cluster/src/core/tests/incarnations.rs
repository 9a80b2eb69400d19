//! A node restarted on its address is a later incarnation of it: the
//! earlier one has ended, whatever gossip still says of its heartbeat.

use super::*;

#[test]
fn a_past_lifes_heartbeat_received_after_a_cut_is_no_sign_of_life() {
    let (mut net, b, d) = held_by_a_relayed_by_p1_and_p2();

    // p2 is cut off from the others; the broker keeps registering with a
    // a little longer, so p1 holds a later heartbeat of a than p2 does.
    for _ in 0..10 {
        let now = net.now;
        net.core("a").direct_seen(&b, now);
        step_apart(&mut net, &[&["a", "p1"], &["p2"]], 100);
    }
    // a crashes, the broker with it, and a starts again at once.
    net.restart("a", 2);
    let crashed = net.now;
    // The cut lasts long enough for p2 to find a's past life dead.
    while net.now < crashed + 2 * DEAD_AFTER {
        let effects = step_apart(&mut net, &[&["a", "p1"], &["p2"]], 100);
        answer_pulls(&mut net, "a", &effects["a"], &b, &d);
    }
    assert!(
        net.cores["p2"].relayed_from(&b).is_some(),
        "p2's word on a's past life still vouches for the broker"
    );

    // The cut ends: p1 hands p2 the past life's last heartbeat, newer
    // than p2's. That life ended when a started again, and p1 says so with
    // the new life itself; the broker, silent since the crash, is let go
    // everywhere on the words of when that life was last up.
    let bound = crashed + d.timeout_ms + DEAD_AFTER + 1_000;
    while net.now < bound {
        let effects = net.step(&["a", "p1", "p2"], 100);
        answer_pulls(&mut net, "a", &effects["a"], &b, &d);
    }
    for name in ["a", "p1", "p2"] {
        assert_eq!(
            net.cores[name].relayed_from(&b),
            None,
            "{name} still routes the broker {} ms after a crashed with it",
            net.now - crashed
        );
    }
}
