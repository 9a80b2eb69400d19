//! A node's removals stay published until every member has acknowledged
//! them, and only then are deleted.

use super::*;

fn deletes(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|effect| match effect {
            Effect::Delete { key } => Some(key.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_removal_is_deleted_once_every_member_acknowledged_it() {
    let mut net = Net::new(&["a", "b", "c"], false);
    let d = digest("broker-a", 1);
    net.register("a", "10.0.0.1:10911", d);
    net.step(&["a", "b", "c"], 100);
    net.core("a")
        .direct_removed(&broker("10.0.0.1:10911"), RemovalCause::Expiry, None);
    // c is cut off: a keeps the removal.
    for _ in 0..10 {
        net.step(&["a", "b"], 500);
        let publications = net.core("a").take_publications();
        assert!(deletes(&publications).is_empty(), "c has not acknowledged");
        net.model.publish(&id("a"), &publications);
    }
    // c back: it acknowledges, and a deletes the removal.
    let mut deleted = Vec::new();
    for _ in 0..10 {
        net.now += 500;
        net.gossip(&["a", "b", "c"]);
        for name in ["b", "c"] {
            net.feed(name);
        }
        let now = net.now;
        let updates = net.model.changes(&id("a"), now);
        for update in updates {
            net.core("a").member_changed(update, now);
        }
        net.core("a").tick(now);
        let publications = net.core("a").take_publications();
        deleted.extend(deletes(&publications));
        net.model.publish(&id("a"), &publications);
        if !deleted.is_empty() {
            break;
        }
    }
    assert_eq!(deleted, vec![broker("10.0.0.1:10911").key()]);
}
