//! Relayed brokers follow their holders: pulled when published, dropped
//! when removed or when every holder is down past the broker's timeout,
//! replaced by a direct registration, never brought back by a late answer.

use super::*;

#[test]
fn a_broker_held_by_one_member_is_pulled_and_leaves_when_it_removes_it() {
    let mut net = Net::joined(&["a", "b"]);
    let d = digest("broker-a", 1);
    net.register("a", "10.0.0.1:10911", d.clone());
    relay(&mut net, "a", "b", "10.0.0.1:10911", &d);

    // Once held, nothing more is pulled.
    let effects = net.step(&["a", "b"], 100);
    assert!(pulls(&effects["b"]).is_empty(), "{effects:?}");

    net.core("a")
        .direct_removed(&broker("10.0.0.1:10911"), RemovalCause::Close, None);
    let effects = net.step(&["a", "b"], 100);
    assert_eq!(
        removed(&effects["b"]),
        vec![(
            broker("10.0.0.1:10911"),
            RelayedGone::Removed {
                by: id("a"),
                cause: RemovalCause::Close
            }
        )]
    );
    assert_eq!(net.core("b").relayed_from(&broker("10.0.0.1:10911")), None);
}

#[test]
fn a_pull_answered_after_the_removal_is_not_applied() {
    let mut net = Net::joined(&["a", "b"]);
    let d = digest("broker-a", 1);
    net.register("a", "10.0.0.1:10911", d.clone());
    let effects = net.step(&["a", "b"], 100);
    let request = pulls(&effects["b"]).remove(0);

    // The removal reaches b before the answer does.
    net.core("a")
        .direct_removed(&broker("10.0.0.1:10911"), RemovalCause::Unregister, None);
    let effects = net.step(&["a", "b"], 100);
    assert!(
        removed(&effects["b"]).is_empty(),
        "never held: nothing to remove"
    );
    let now = net.now;
    let done = net.core("b").pull_done(request.id, Ok(d), now);
    assert!(applied(&done).is_empty(), "{done:?}");
    assert!(matches!(done[0], Effect::DiscardPulled { .. }));
    let effects = net.step(&["a", "b"], 100);
    assert!(pulls(&effects["b"]).is_empty() && applied(&effects["b"]).is_empty());
}

#[test]
fn a_direct_registration_wins_over_a_relayed_copy_and_a_pull_under_way() {
    let mut net = Net::joined(&["a", "b"]);
    let d1 = digest("broker-a", 1);
    net.register("a", "10.0.0.1:10911", d1.clone());
    let effects = net.step(&["a", "b"], 100);
    let request = pulls(&effects["b"]).remove(0);

    // The broker registers with b itself before the answer arrives.
    let now = net.now;
    net.core("b")
        .direct_registered(broker("10.0.0.1:10911"), d1.clone(), now);
    let done = net.core("b").pull_done(request.id, Ok(d1.clone()), now);
    assert!(applied(&done).is_empty(), "{done:?}");
    assert!(net.core("b").is_direct(&broker("10.0.0.1:10911")));

    // a moving on to a newer registration does not make b pull either.
    let d2 = digest("broker-a", 2);
    net.register("a", "10.0.0.1:10911", d2);
    let effects = net.step(&["a", "b"], 100);
    assert!(pulls(&effects["b"]).is_empty(), "{effects:?}");
}

#[test]
fn the_newest_registration_among_holders_is_pulled() {
    let mut net = Net::joined(&["a", "b", "c"]);
    net.register("a", "10.0.0.1:10911", digest("broker-a", 1));
    net.register("b", "10.0.0.1:10911", digest("broker-a", 2));
    let effects = net.step(&["a", "b", "c"], 100);
    let requests = pulls(&effects["c"]);
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].from, id("b"));
    assert_eq!(requests[0].digest.version.counter, 2);
}

#[test]
fn an_answer_older_than_the_published_digest_is_refused() {
    let mut net = Net::joined(&["a", "b"]);
    net.register("a", "10.0.0.1:10911", digest("broker-a", 2));
    let effects = net.step(&["a", "b"], 100);
    let request = pulls(&effects["b"]).remove(0);
    let now = net.now;
    let done = net
        .core("b")
        .pull_done(request.id, Ok(digest("broker-a", 1)), now);
    assert_eq!(refusals(&done), vec![RefusalKind::PullMismatch]);
    assert!(applied(&done).is_empty());
    let done = {
        let effects = net.step(&["a", "b"], 100);
        effects["b"].clone()
    };
    assert!(pulls(&done).is_empty(), "backed off for pull_retry_ms");
    let effects = net.step(&["a", "b"], CoreConfig::default().pull_retry_ms);
    assert_eq!(
        pulls(&effects["b"]).len(),
        1,
        "pulled again after the back-off"
    );
}

#[test]
fn a_member_answering_that_it_holds_nothing_is_refused_and_nothing_changes() {
    let mut net = Net::joined(&["a", "b"]);
    net.register("a", "10.0.0.1:10911", digest("broker-a", 1));
    let effects = net.step(&["a", "b"], 100);
    let request = pulls(&effects["b"]).remove(0);
    let now = net.now;
    let done = net
        .core("b")
        .pull_done(request.id, Err(PullFailure::NotHeld), now);
    assert_eq!(refusals(&done), vec![RefusalKind::PullNotHeld]);
    assert_eq!(net.core("b").relayed_from(&broker("10.0.0.1:10911")), None);
    assert!(!net.core("b").is_direct(&broker("10.0.0.1:10911")));
}

#[test]
fn an_unanswered_pull_times_out_and_is_tried_again() {
    let mut net = Net::joined(&["a", "b"]);
    net.register("a", "10.0.0.1:10911", digest("broker-a", 1));
    let effects = net.step(&["a", "b"], 100);
    let request = pulls(&effects["b"]).remove(0);
    let config = CoreConfig::default();
    let effects = net.step(&["a", "b"], config.pull_timeout_ms);
    assert!(effects["b"]
        .iter()
        .any(|e| matches!(e, Effect::PullFailed { .. })));
    let now = net.now;
    let late = net
        .core("b")
        .pull_done(request.id, Ok(digest("broker-a", 1)), now);
    assert!(
        matches!(late[..], [Effect::DiscardPulled { .. }]),
        "{late:?}"
    );
    let effects = net.step(&["a", "b"], config.pull_retry_ms);
    assert_eq!(pulls(&effects["b"]).len(), 1);
}

#[test]
fn a_dead_holders_broker_stays_until_its_timeout_from_when_it_was_last_up() {
    let mut net = Net::joined(&["a", "b"]);
    let d = digest("broker-a", 1);
    net.register("a", "10.0.0.1:10911", d.clone());
    relay(&mut net, "a", "b", "10.0.0.1:10911", &d);
    // a stops: b hears nothing more from it.
    net.model.leave(&id("a"));
    let mut left_at = None;
    let start = net.now;
    while net.now < start + TIMEOUT + 2 * DEAD_AFTER {
        let effects = net.step(&["b"], 500);
        if !removed(&effects["b"]).is_empty() {
            assert_eq!(removed(&effects["b"])[0].1, RelayedGone::Silent);
            left_at = Some(net.now);
            break;
        }
    }
    let left_at = left_at.expect("the broker left");
    // Up until a was judged dead (DEAD_AFTER), then the broker's timeout.
    assert!(left_at > start + TIMEOUT, "left at +{} ms", left_at - start);
    assert!(
        left_at <= start + DEAD_AFTER + TIMEOUT + 1_000,
        "left at +{} ms",
        left_at - start
    );
}

#[test]
fn a_broker_its_holder_reported_silent_leaves_when_the_holder_would_have_dropped_it() {
    let mut net = Net::joined(&["a", "b"]);
    let d = digest("broker-a", 1);
    let registered_at = net.now;
    net.register("a", "10.0.0.1:10911", d.clone());
    relay(&mut net, "a", "b", "10.0.0.1:10911", &d);
    // The broker stops registering; a reports it silent at half its
    // timeout, then a stops too.
    while net.now < registered_at + TIMEOUT / 2 + 1_000 {
        net.step(&["a", "b"], 500);
    }
    net.model.leave(&id("a"));
    let mut left_at = None;
    while net.now < registered_at + 2 * TIMEOUT {
        let effects = net.step(&["b"], 500);
        if !removed(&effects["b"]).is_empty() {
            left_at = Some(net.now);
            break;
        }
    }
    let left_at = left_at.expect("the broker left");
    // Within a second or two of the broker's own deadline, not a whole
    // timeout after a went away.
    assert!(
        left_at >= registered_at + TIMEOUT && left_at <= registered_at + TIMEOUT + 2_000,
        "left {} ms after its last registration",
        left_at - registered_at
    );
}

#[test]
fn a_direct_broker_whose_connection_closed_stays_relayed_while_another_member_holds_it() {
    let mut net = Net::joined(&["a", "b"]);
    let d = digest("broker-a", 1);
    net.register("a", "10.0.0.1:10911", d.clone());
    net.register("b", "10.0.0.1:10911", d.clone());
    let effects = net.step(&["a", "b"], 100);
    assert!(pulls(&effects["b"]).is_empty());

    let now = net.now;
    let advice = net
        .core("b")
        .removing_direct(&broker("10.0.0.1:10911"), now);
    assert_eq!(advice, Removing::Demote(id("a")));
    net.core("b").direct_removed(
        &broker("10.0.0.1:10911"),
        RemovalCause::Close,
        Some(id("a")),
    );
    assert_eq!(
        net.core("b").relayed_from(&broker("10.0.0.1:10911")),
        Some(&id("a"))
    );
    let effects = net.step(&["a", "b"], 100);
    assert!(
        pulls(&effects["b"]).is_empty(),
        "same registration: nothing to pull"
    );
    assert!(removed(&effects["b"]).is_empty());
    // a still counts on b's removal: it was b's own word only.
    assert!(net.core("a").is_direct(&broker("10.0.0.1:10911")));

    // Once a drops it too, it leaves b.
    net.core("a")
        .direct_removed(&broker("10.0.0.1:10911"), RemovalCause::Close, None);
    let effects = net.step(&["a", "b"], 100);
    assert_eq!(removed(&effects["b"]).len(), 1);
    let now = net.now;
    let advice = net
        .core("a")
        .removing_direct(&broker("10.0.0.1:10911"), now);
    assert_eq!(advice, Removing::Remove);
}

#[test]
fn a_node_started_after_the_only_holder_died_gets_a_relayed_copy_and_waits_for_it() {
    let mut net = Net::joined(&["a", "b", "c"]);
    let d = digest("broker-a", 1);
    net.register("a", "10.0.0.1:10911", d.clone());
    relay(&mut net, "a", "b", "10.0.0.1:10911", &d);
    // c pulls too (its request went out with b's).
    let effects = net.step(&["a", "b", "c"], 100);
    if let Some(request) = pulls(&effects["c"]).pop() {
        let now = net.now;
        net.core("c").pull_done(request.id, Ok(d.clone()), now);
    }
    // a dies; b and c find out and say when they last knew it up.
    net.model.leave(&id("a"));
    for _ in 0..(DEAD_AFTER / 100 + 5) {
        net.step(&["b", "c"], 100);
    }
    let died_at = net.now;
    // d starts now, never having seen a up.
    net.start("d", true);
    let mut relayed_request = None;
    for _ in 0..10 {
        let effects = net.step(&["b", "c", "d"], 100);
        assert!(
            !effects["d"]
                .iter()
                .any(|e| matches!(e, Effect::Ready { synced: true })),
            "not ready before it holds the broker"
        );
        if let Some(request) = pulls(&effects["d"]).pop() {
            relayed_request = Some(request);
            break;
        }
    }
    let request = relayed_request.expect("d pulls the broker from an up member");
    assert!(request.relayed, "a relayed copy is asked for: {request:?}");
    assert_ne!(request.from, id("a"));
    let now = net.now;
    let done = net.core("d").pull_done(request.id, Ok(d.clone()), now);
    assert_eq!(applied(&done), vec![broker("10.0.0.1:10911")]);
    assert_eq!(
        net.core("d").relayed_from(&broker("10.0.0.1:10911")),
        Some(&id("a"))
    );
    let effects = net.step(&["b", "c", "d"], 100);
    assert!(effects["d"]
        .iter()
        .any(|e| matches!(e, Effect::Ready { synced: true })));
    // And d lets it go with the others, a timeout after a was last up.
    let mut left_at = None;
    while net.now < died_at + 2 * TIMEOUT {
        let effects = net.step(&["b", "c", "d"], 500);
        if !removed(&effects["d"]).is_empty() {
            left_at = Some(net.now);
            break;
        }
    }
    let left_at = left_at.expect("d drops it");
    assert!(
        left_at <= died_at + TIMEOUT + 2_000,
        "dropped {} ms after a was found dead",
        left_at - died_at
    );
}

#[test]
fn a_copy_let_go_is_not_brought_back_by_a_down_holders_word_on_the_same_version() {
    // a and b hold the same registration of a broker directly; each hashes
    // its topics its own way.
    let mut net = Net::joined(&["a", "b", "x"]);
    let b_ref = broker("10.0.0.1:10911");
    let at_a = digest("broker-a", 1);
    let at_b = BrokerDigest {
        topics: 9,
        ..at_a.clone()
    };
    net.register("a", "10.0.0.1:10911", at_a.clone());
    net.register("b", "10.0.0.1:10911", at_b.clone());
    net.step(&["a", "b", "x"], 100);
    // b crashes; x restarts on an empty disk before a finds b dead, so x
    // never sees b up and nobody has said yet when it was last up.
    net.model.leave(&id("b"));
    net.step(&["a", "x"], 100);
    net.restart("x", 2);
    let mut pulled = false;
    for _ in 0..5 {
        let effects = net.step(&["a", "x"], 100);
        for request in pulls(&effects["x"]) {
            let now = net.now;
            pulled |=
                !applied(&net.core("x").pull_done(request.id, Ok(at_a.clone()), now)).is_empty();
        }
    }
    assert!(pulled, "x holds a's copy");
    // The broker's connection to a closes: x lets its copy go.
    net.core("a")
        .direct_removed(&b_ref, RemovalCause::Close, None);
    let effects = net.step(&["a", "x"], 100);
    assert_eq!(removed(&effects["x"]).len(), 1, "{effects:?}");
    // a finds b dead and says when it lost it: b's word on the very
    // registration x let go does not bring the broker back.
    for _ in 0..(DEAD_AFTER / 100 + 20) {
        let effects = net.step(&["a", "x"], 100);
        for request in pulls(&effects["x"]) {
            let now = net.now;
            let done = net.core("x").pull_done(request.id, Ok(at_b.clone()), now);
            assert!(
                applied(&done).is_empty(),
                "x took the broker back on b's word"
            );
        }
    }
    assert!(
        net.cores["x"].last_up_of(&id("b")).is_some(),
        "b's last life is known"
    );
    assert_eq!(net.cores["x"].relayed_from(&b_ref), None);
}

#[test]
fn a_restarted_node_does_not_keep_on_its_past_lifes_word_a_broker_it_removed_itself() {
    let mut net = Net::joined(&["a", "b"]);
    let d = digest("broker-a", 1);
    net.register("a", "10.0.0.1:10911", d.clone());
    relay(&mut net, "a", "b", "10.0.0.1:10911", &d);
    // a restarts on an empty disk; b finds its past life dead and says
    // when it lost it, so that life's word still vouches for the broker.
    net.restart("a", 2);
    for _ in 0..(DEAD_AFTER / 100 + 10) {
        let effects = net.step(&["a", "b"], 100);
        for request in pulls(&effects["a"]) {
            let now = net.now;
            net.core("a").pull_done(request.id, Ok(d.clone()), now);
        }
    }
    let past = MemberId::new("a", 1);
    assert!(net.cores["a"].last_up_of(&past).is_some());
    // The broker registers with the new life, then its connection closes.
    net.register("a", "10.0.0.1:10911", d.clone());
    net.step(&["a", "b"], 100);
    let now = net.now;
    let advice = net
        .core("a")
        .removing_direct(&broker("10.0.0.1:10911"), now);
    assert_eq!(
        advice,
        Removing::Remove,
        "the new life's word voids the past life's, here as at every other member"
    );
}

/// `d` after the broker's clock was set back an hour: an earlier timestamp,
/// another topic list.
fn set_back(d: &BrokerDigest, counter: i64) -> BrokerDigest {
    let mut back = d.clone();
    back.version.counter = counter;
    back.version.timestamp = d.version.timestamp - 3_600_000;
    back.topics = d.topics + 1;
    back
}

#[test]
fn a_registration_whose_timestamp_went_back_replaces_the_relayed_copy() {
    let mut net = Net::joined(&["a", "b"]);
    let d = digest("broker-a", 2);
    net.register("a", "10.0.0.1:10911", d.clone());
    relay(&mut net, "a", "b", "10.0.0.1:10911", &d);

    // The next change (the next counter) and, later, a store rebuilt to the
    // same counter: both with earlier timestamps, both taken.
    for back in [set_back(&d, 3), set_back(&set_back(&d, 3), 3)] {
        net.register("a", "10.0.0.1:10911", back.clone());
        let effects = net.step(&["a", "b"], 100);
        let request = pulls(&effects["b"]).remove(0);
        assert_eq!(request.digest, back);
        let now = net.now;
        let done = net.core("b").pull_done(request.id, Ok(back.clone()), now);
        assert!(refusals(&done).is_empty(), "{done:?}");
        assert_eq!(applied(&done), vec![broker("10.0.0.1:10911")]);
    }
}

#[test]
fn an_answer_with_an_earlier_timestamp_than_the_digest_asked_for_is_taken() {
    let mut net = Net::joined(&["a", "b"]);
    let d = digest("broker-a", 2);
    net.register("a", "10.0.0.1:10911", d.clone());
    let effects = net.step(&["a", "b"], 100);
    let request = pulls(&effects["b"]).remove(0);

    // The broker registered again with a, its clock set back, before a
    // answered: a answers with that registration and publishes it.
    let back = set_back(&d, 2);
    net.register("a", "10.0.0.1:10911", back.clone());
    net.flush("a");
    net.gossip(&["a", "b"]);
    net.feed("b");
    let now = net.now;
    let done = net.core("b").pull_done(request.id, Ok(back), now);
    assert!(refusals(&done).is_empty(), "not a mismatch: {done:?}");
    assert_eq!(applied(&done), vec![broker("10.0.0.1:10911")]);
}

#[test]
fn between_holders_the_later_registration_wins_whatever_its_timestamp() {
    let mut net = Net::joined(&["a", "b", "c"]);
    let d = digest("broker-a", 2);
    net.register("a", "10.0.0.1:10911", d.clone());
    let effects = net.step(&["a", "b", "c"], 100);
    answer_pulls(&mut net, "c", &effects["c"], &broker("10.0.0.1:10911"), &d);
    assert_eq!(
        net.core("c").relayed_from(&broker("10.0.0.1:10911")),
        Some(&id("a"))
    );
    // The broker moves to b with the same counter and a timestamp an hour
    // earlier (its store rebuilt on the stepped-back host); a's copy is
    // not silent yet. b's changed later: c pulls b's.
    let mut back = set_back(&d, 2);
    back.changed_at = d.changed_at + 1_000;
    net.register("b", "10.0.0.1:10911", back.clone());
    let effects = net.step(&["a", "b", "c"], 100);
    let requests = pulls(&effects["c"]);
    assert_eq!(
        requests.last().map(|r| (&r.from, &r.digest)),
        Some((&id("b"), &back))
    );
}
