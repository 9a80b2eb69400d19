//! A peer's bad input is refused and changes nothing of this node's own
//! registrations.

use super::*;

fn update(changes: Vec<(&str, Option<&str>)>) -> MemberUpdate {
    MemberUpdate {
        id: id("evil"),
        liveness: Liveness::Live,
        gossip_addr: "127.0.0.1:1".into(),
        changes: changes
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.map(str::to_owned)))
            .collect(),
        full: false,
    }
}

#[test]
fn values_that_do_not_parse_are_refused_and_not_kept() {
    let mut net = Net::new(&["b"], false);
    let now = net.now;
    let effects = net.core("b").member_changed(
        update(vec![
            ("b/DefaultCluster/10.0.0.9:10911", Some("{garbage")),
            ("b/%zz/x", Some("{}")),
            ("manifest", Some("[]")),
            ("seen", Some("7")),
            ("remoting", Some("evil:9876")),
            ("something-newer", Some("ignored")),
        ]),
        now,
    );
    assert_eq!(
        refusals(&effects),
        vec![RefusalKind::BadValue; 4],
        "{effects:?}"
    );
    let member = net
        .core("b")
        .members()
        .find(|(member, _)| **member == id("evil"))
        .map(|(_, member)| member.clone())
        .expect("known");
    assert!(member.brokers.is_empty());
    assert_eq!(member.manifest, None);
    assert_eq!(member.remoting.as_deref(), Some("evil:9876"));
    assert!(pulls(&net.core("b").tick(now)).is_empty());
}

#[test]
fn a_removal_of_a_version_nobody_has_is_refused_and_keeps_the_direct_registration() {
    let mut net = Net::new(&["b"], false);
    let now = net.now;
    net.core("b")
        .direct_registered(broker("10.0.0.1:10911"), digest("broker-a", 3), now);
    let removal = Published {
        seq: 1,
        entry: Entry::Removed(Removal {
            name: "broker-a".into(),
            id: 0,
            version: digest("broker-a", 99).version,
            cause: RemovalCause::Unregister,
        }),
    }
    .encode();
    let effects = net.core("b").member_changed(
        update(vec![("b/DefaultCluster/10.0.0.1:10911", Some(&removal))]),
        now,
    );
    assert_eq!(refusals(&effects), vec![RefusalKind::RemovalAhead]);
    let effects = net.core("b").tick(now + 1);
    assert!(removed(&effects).is_empty());
    assert!(net.core("b").is_direct(&broker("10.0.0.1:10911")));
    assert_eq!(
        net.core("b")
            .removing_direct(&broker("10.0.0.1:10911"), now + 1),
        Removing::Remove,
        "a removal vouches for nothing"
    );
}

#[test]
fn a_member_publishing_a_broker_it_will_not_give_changes_nothing_here() {
    let mut net = Net::new(&["b"], false);
    let now = net.now;
    net.core("b")
        .direct_registered(broker("10.0.0.1:10911"), digest("broker-a", 1), now);
    let present = Published {
        seq: 1,
        entry: Entry::Present(digest("broker-a", 50)),
    }
    .encode();
    net.core("b").member_changed(
        update(vec![
            ("remoting", Some("evil:9876")),
            ("b/DefaultCluster/10.0.0.1:10911", Some(&present)),
            ("b/DefaultCluster/10.0.0.2:10911", Some(&present)),
        ]),
        now,
    );
    let effects = net.core("b").tick(now + 1);
    // Only the broker b does not hold directly is pulled.
    let requests = pulls(&effects);
    assert_eq!(requests.len(), 1, "{effects:?}");
    assert_eq!(requests[0].broker, broker("10.0.0.2:10911"));
    let done = net
        .core("b")
        .pull_done(requests[0].id, Err(PullFailure::NotHeld), now + 2);
    assert_eq!(refusals(&done), vec![RefusalKind::PullNotHeld]);
    assert!(net.core("b").is_direct(&broker("10.0.0.1:10911")));
}
