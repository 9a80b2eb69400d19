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
