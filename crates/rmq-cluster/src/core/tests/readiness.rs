//! Bootstrap: a node with seeds serves once it holds its peers' routes, or
//! once the bootstrap timeout ran out.

use super::*;

fn ready(effects: &[Effect]) -> Option<bool> {
    effects.iter().find_map(|effect| match effect {
        Effect::Ready { synced } => Some(*synced),
        _ => None,
    })
}

#[test]
fn a_node_without_seeds_is_ready_at_its_first_tick() {
    let mut net = Net::new(&["a"], false);
    let effects = net.step(&["a"], 1);
    assert_eq!(ready(&effects["a"]), Some(true));
    assert!(net.core("a").is_ready());
}

#[test]
fn a_node_with_seeds_is_ready_once_it_holds_every_brokers_route() {
    let mut net = Net::new(&["a"], false);
    let d = digest("broker-a", 1);
    net.register("a", "10.0.0.1:10911", d.clone());
    net.step(&["a"], 1);
    net.start("b", true);
    let mut request = None;
    for _ in 0..3 {
        let effects = net.step(&["a", "b"], 100);
        assert_eq!(
            ready(&effects["b"]),
            None,
            "not before the broker is pulled"
        );
        if let Some(pull) = pulls(&effects["b"]).pop() {
            request = Some(pull);
            break;
        }
    }
    assert!(!net.core("b").is_ready());
    let request = request.expect("b pulls the broker once it hears a live");
    let now = net.now;
    net.core("b").pull_done(request.id, Ok(d), now);
    let effects = net.step(&["a", "b"], 100);
    assert_eq!(ready(&effects["b"]), Some(true));
    // And tells the others with its next publications.
    net.step(&["a", "b"], 100);
    assert!(net.cores["a"]
        .members()
        .any(|(member, state)| *member == id("b") && state.ready));
}

#[test]
fn a_node_whose_seeds_never_answer_is_ready_at_the_bootstrap_timeout() {
    let mut net = Net::new(&["b"], true);
    let timeout = CoreConfig::default().bootstrap_timeout_ms;
    let start = net.now;
    let mut ready_at = None;
    while net.now < start + 2 * timeout {
        let effects = net.step(&["b"], 250);
        if let Some(synced) = ready(&effects["b"]) {
            assert!(!synced);
            ready_at = Some(net.now);
            break;
        }
    }
    let ready_at = ready_at.expect("ready eventually");
    assert!(ready_at >= start + timeout && ready_at < start + timeout + 250);
}

#[test]
fn nodes_starting_together_serve_once_the_cluster_has_been_forming_for_a_while() {
    let mut net = Net::new(&["a", "b"], true);
    let start = net.now;
    let mut ready_at = None;
    while net.now < start + 5_000 {
        let effects = net.step(&["a", "b"], 100);
        if let Some(synced) = ready(&effects["a"]) {
            assert!(synced, "held everything there was: synced, not timed out");
            ready_at = Some(net.now);
            break;
        }
    }
    let ready_at = ready_at.expect("ready");
    assert!(
        ready_at >= start + super::super::tick::FORMING_MS,
        "not before the cluster formed: ready at +{} ms",
        ready_at - start
    );
    assert!(ready_at < start + CoreConfig::default().bootstrap_timeout_ms);
}

#[test]
fn a_restarted_node_waits_for_the_latest_word_on_its_past_life_before_serving() {
    let (mut net, b, d) = held_by_a_relayed_by_p1_and_p2();

    // p1 is cut off from the others, long enough to lose a and to let the
    // broker go; the broker keeps registering with a, which p2 hears.
    let mut p1_dropped = false;
    for _ in 0..(DEAD_AFTER + d.timeout_ms + 1_000) / 100 {
        let now = net.now;
        net.core("a").direct_seen(&b, now);
        let effects = step_apart(&mut net, &[&["a", "p2"], &["p1"]], 100);
        p1_dropped |= removed(&effects["p1"])
            .iter()
            .any(|(gone, why)| *gone == b && *why == RelayedGone::Silent);
    }
    assert!(p1_dropped, "p1 lost a and let the broker go");
    assert!(net.cores["p2"].relayed_from(&b).is_some());

    // a crashes and starts again on an empty disk. Its first exchanges
    // are with p2, which holds its past life's last heartbeat (so that
    // life is never seen live again) but has not found it dead yet; then
    // the link from p1 comes back, and p1's word on when it lost that life
    // comes first.
    net.model.leave(&id("a"));
    step_apart(&mut net, &[&["p2"], &["p1"]], 100);
    net.restart("a", 2);
    let started = net.now;
    // Whether a reported ready with these effects; it must hold the broker
    // then.
    let check = |net: &mut Net, effects: &BTreeMap<String, Vec<Effect>>| {
        answer_pulls(net, "a", &effects["a"], &b, &d);
        let synced = ready(&effects["a"])?;
        assert!(synced, "a holds its peers' routes: synced");
        assert!(
            net.cores["p2"].relayed_from(&b).is_some(),
            "p2 still routes the broker"
        );
        assert_eq!(
            net.cores["a"].relayed_from(&b),
            Some(&MemberId::new("a", 1)),
            "a reported ready at +{} ms without the broker p2 still routes",
            net.now - started
        );
        Some(net.now)
    };
    let effects = round(&mut net, &["a", "p1", "p2"], &[("a", "p2")], 100);
    let mut ready_at = check(&mut net, &effects);
    let effects = round(
        &mut net,
        &["a", "p1", "p2"],
        &[("a", "p2"), ("a", "p1")],
        100,
    );
    ready_at = ready_at.or(check(&mut net, &effects));
    while ready_at.is_none() && net.now < started + CoreConfig::default().bootstrap_timeout_ms {
        let effects = net.step(&["a", "p1", "p2"], 100);
        ready_at = check(&mut net, &effects);
    }
    assert!(ready_at.is_some(), "a serves before its bootstrap timeout");
}

/// One round: `ms` pass, every one of `up` beats, only `pairs` exchange,
/// and every one of `up` feeds.
fn round(
    net: &mut Net,
    up: &[&str],
    pairs: &[(&str, &str)],
    ms: u64,
) -> BTreeMap<String, Vec<Effect>> {
    net.now += ms;
    for name in up {
        net.flush(name);
        let member = net.member(name);
        net.model.beat(&member, net.now);
    }
    for (a, b) in pairs {
        let (a, b) = (net.member(a), net.member(b));
        net.model.exchange(&a, &b, net.now);
    }
    up.iter()
        .map(|name| (name.to_string(), net.feed(name)))
        .collect()
}
