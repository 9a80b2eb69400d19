//! Route lifecycles seen from both ends: brokers registering through
//! `rmq-broker-client` on a fast schedule, a started `rmq-route-client`
//! following the routes, and the NameServer under test (`rmq-testkit`;
//! every test here runs against Waymark and against the Java NameServer).
//!
//! * a NameServer restart: the broker's registrations fail while it is down
//!   and its next one restores the route; the client keeps its last route
//!   meanwhile (TOPIC_NOT_EXIST and errors keep the cache, as in Java);
//! * one NameServer of two stopped: the broker keeps registering with the
//!   other, the client fails over to it;
//! * WIPE_WRITE_PERM_OF_BROKER: the publish view drops the broker, the
//!   subscribe view keeps it, periodic registrations with an unchanged
//!   DataVersion do not undo it, ADD_WRITE_PERM_OF_BROKER brings the broker
//!   back; a new DataVersion does too in Java, not in Waymark (whose wipe
//!   lasts until write permission is added);
//! * a broker leaving (UNREGISTER_BROKER at shutdown): the watch sees the
//!   route without it.

use crate::common::*;
use rmq_broker_client::Skip;
use rmq_route_client::RouteClient;
use rmq_testkit::{admin, Kind, Namesrv};

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn name_server_restart_routes_return_with_the_next_registration() -> anyhow::Result<()> {
    let mut ns = Namesrv::start(&[]);
    let registrar = broker("broker-r", 51911, "Restart", &[&ns.addr]);
    let (running, mut events) = run(&registrar);
    registration_where(&mut events, "at start-up", |r| r.is_success()).await;

    let client = RouteClient::start(client_config(&[&ns.addr]));
    let mut watch = client.watch("Restart").await;
    let before = watch
        .borrow_and_update()
        .clone()
        .expect("route fetched on watch");
    assert_eq!(names(&before.publish.queues), queues_of(&["broker-r"]));

    // Down: the broker's registrations fail for it, the client's fetches
    // fail, and the cached route stays.
    ns.stop();
    let report = registration_where(&mut events, "failing", |r| !r.is_success()).await;
    let failures: Vec<_> = report.failures().map(|(addr, _)| addr).collect();
    assert_eq!(failures, [ns.addr.as_str()]);
    let error = client.update_route("Restart").await.unwrap_err();
    assert!(error.is_transport(), "{error:?}");
    assert_eq!(client.route("Restart").unwrap().route, before.route);

    // Up again with an empty route table. The broker is held back
    // (isolated) so the time before its next registration can be looked at.
    registrar.set_isolated(true);
    skipped_slot(&mut events).await;
    ns.start_again();
    assert!(
        admin::route(&ns.addr, "Restart").await?.is_none(),
        "fresh table"
    );
    assert!(
        !client.update_route("Restart").await?,
        "TOPIC_NOT_EXIST keeps the cached route"
    );
    let kept = client.route("Restart").expect("still cached");
    assert_eq!(names(&kept.publish.queues), queues_of(&["broker-r"]));

    // The broker's next periodic registration restores the route; for the
    // client nothing ever changed.
    registrar.set_isolated(false);
    let report = registration_where(&mut events, "after the restart", |r| r.is_success()).await;
    assert_eq!(report.succeeded(), [ns.addr.as_str()]);
    let route = admin::route(&ns.addr, "Restart")
        .await?
        .expect("route back");
    assert_eq!(route.broker_datas[0].broker_addrs[&0], "127.0.0.1:51911");
    assert!(
        !client.update_route("Restart").await?,
        "same route as before"
    );
    assert!(!watch.has_changed()?, "no change was ever signalled");
    running.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_name_server_of_two_stopped_broker_and_client_carry_on() -> anyhow::Result<()> {
    let [mut first, mut second] = Namesrv::start_many(&[]);
    let registrar = broker("broker-f", 52911, "Failover", &[&first.addr, &second.addr]);
    let (running, mut events) = run(&registrar);
    let report = registration_where(&mut events, "at start-up", |r| r.is_success()).await;
    assert_eq!(report.attempted(), 2);

    let client = RouteClient::start(client_config(&[&first.addr, &second.addr]));
    let mut watch = client.watch("Failover").await;
    let before = watch
        .borrow_and_update()
        .clone()
        .expect("route fetched on watch");
    let chosen = client.chosen_name_server().expect("a NameServer chosen");
    let (stopped, other) = if chosen == first.addr {
        first.stop();
        (first.addr.clone(), second.addr.clone())
    } else {
        second.stop();
        (second.addr.clone(), first.addr.clone())
    };

    // Broker side: the failure is reported for the stopped one only, the
    // other's answer is applied and it keeps the route.
    let report = registration_where(&mut events, "with one failure", |r| !r.is_success()).await;
    assert_eq!(report.attempted(), 2);
    assert_eq!(report.succeeded(), [other.as_str()]);
    let failures: Vec<_> = report.failures().map(|(addr, _)| addr).collect();
    assert_eq!(failures, [stopped.as_str()]);
    assert!(report.applied.is_some());
    assert!(admin::route(&other, "Failover").await?.is_some());

    // Client side: at most one failed call (the broken channel is noticed
    // on use), then the other NameServer answers with the same route.
    let mut served = false;
    for _ in 0..3 {
        match client.update_route("Failover").await {
            Ok(changed) => {
                assert!(!changed, "same route from the other NameServer");
                served = true;
                break;
            }
            Err(error) => assert!(error.is_transport(), "{error:?}"),
        }
    }
    assert!(served, "failover from {stopped} to {other}");
    assert_eq!(client.chosen_name_server().as_deref(), Some(other.as_str()));
    assert_eq!(client.route("Failover").unwrap().route, before.route);
    assert!(!watch.has_changed()?);
    running.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wiped_write_perm_leaves_the_publish_view_until_restored() -> anyhow::Result<()> {
    let ns = Namesrv::start(&[]);
    let a = broker("broker-a", 53911, "Perm", &[&ns.addr]);
    let b = broker("broker-b", 53921, "Perm", &[&ns.addr]);
    let (running_a, mut events) = run(&a);
    let (running_b, mut events_b) = run(&b);
    registration_where(&mut events, "of a", |r| r.is_success()).await;
    registration_where(&mut events_b, "of b", |r| r.is_success()).await;

    let client = RouteClient::start(client_config(&[&ns.addr]));
    let mut watch = client.watch("Perm").await;
    let view = watch.borrow_and_update().clone().expect("route");
    assert_eq!(
        names(&view.publish.queues),
        queues_of(&["broker-a", "broker-b"])
    );

    // Wiped: read only. Subscribers still read broker-a, producers skip it.
    assert_eq!(admin::wipe_write_perm(&ns.addr, "broker-a").await?, 2);
    let wiped = next_change(&mut watch).await;
    assert_eq!(perm_of(&wiped, "broker-a"), 4);
    assert_eq!(names(&wiped.publish.queues), queues_of(&["broker-b"]));
    assert_eq!(
        sorted(names(&wiped.subscribe)),
        queues_of(&["broker-a", "broker-b"])
    );
    for _ in 0..8 {
        let queue = client.select_queue(&wiped, None, false).unwrap();
        assert_eq!(queue.broker_name, "broker-b");
    }

    // Broker side: its periodic registrations go on and succeed, but with
    // an unchanged DataVersion they leave the wiped permission alone.
    drain(&mut events);
    for _ in 0..2 {
        registration_where(&mut events, "after the wipe", |r| r.is_success()).await;
    }
    assert!(!client.update_route("Perm").await?, "still wiped");
    assert_eq!(perm_of(&client.route("Perm").unwrap(), "broker-a"), 4);

    // ADD_WRITE_PERM_OF_BROKER: back in the publish view.
    assert_eq!(admin::add_write_perm(&ns.addr, "broker-a").await?, 2);
    let restored = next_change(&mut watch).await;
    assert_eq!(perm_of(&restored, "broker-a"), 6);
    assert_eq!(
        names(&restored.publish.queues),
        queues_of(&["broker-a", "broker-b"])
    );

    // Wiped again, then the broker's own change (a new topic bumps the
    // DataVersion). Java's NameServer writes the permissions of a new
    // DataVersion as sent, undoing the wipe; Waymark keeps it (it applies
    // every registration, and holds the wipe apart from it) until write
    // permission is added.
    admin::wipe_write_perm(&ns.addr, "broker-a").await?;
    let wiped = next_change(&mut watch).await;
    assert_eq!(perm_of(&wiped, "broker-a"), 4);
    let version = a.data_version();
    let topic = rmq_protocol::TopicConfig::new("Perm-new");
    assert!(a.update_topics(|t| t.upsert(topic, rmq_broker_client::wall_ms())));
    registration_where(&mut events, "with the new version", |r| {
        r.is_success() && r.data_version.counter > version.counter
    })
    .await;
    if ns.kind() == Kind::Java {
        let rewritten = next_change(&mut watch).await;
        assert_eq!(perm_of(&rewritten, "broker-a"), 6);
    } else {
        assert!(!client.update_route("Perm").await?, "still wiped");
        assert_eq!(perm_of(&client.route("Perm").unwrap(), "broker-a"), 4);
        let created = client.update_route("Perm-new").await;
        assert!(created.is_ok(), "{created:?}");
        let new_topic = client.route("Perm-new").expect("the new topic's route");
        assert_eq!(perm_of(&new_topic, "broker-a"), 4, "created since the wipe");
        assert_eq!(admin::add_write_perm(&ns.addr, "broker-a").await?, 3);
        let restored = next_change(&mut watch).await;
        assert_eq!(perm_of(&restored, "broker-a"), 6);
    }
    let restored = client.route("Perm").unwrap();
    assert_eq!(
        names(&restored.publish.queues),
        queues_of(&["broker-a", "broker-b"])
    );
    running_a.shutdown().await;
    running_b.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_leaving_is_seen_through_watch() -> anyhow::Result<()> {
    let namesrvs: [Namesrv; 2] = Namesrv::start_many(&[]);
    let addrs: Vec<&str> = namesrvs.iter().map(|n| n.addr.as_str()).collect();
    let a = broker("broker-a", 54911, "Leave", &addrs);
    let b = broker("broker-b", 54921, "Leave", &addrs);
    let (running_a, mut events) = run(&a);
    let (running_b, mut events_b) = run(&b);
    registration_where(&mut events, "of a", |r| r.is_success()).await;
    registration_where(&mut events_b, "of b", |r| r.is_success()).await;

    let client = RouteClient::start(client_config(&addrs));
    let mut watch = client.watch("Leave").await;
    let view = watch.borrow_and_update().clone().expect("route");
    assert_eq!(brokers(&view), ["broker-a", "broker-b"]);

    // broker-a shuts down: its schedule stops and UNREGISTER_BROKER goes to
    // both NameServers (its connections stay open: removal is the
    // unregistration's doing, not a closed channel's).
    let results = running_a.shutdown().await;
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r.outcome.is_ok()), "{results:?}");
    let left = next_change(&mut watch).await;
    assert_eq!(brokers(&left), ["broker-b"]);
    assert_eq!(names(&left.publish.queues), queues_of(&["broker-b"]));
    assert_eq!(sorted(names(&left.subscribe)), queues_of(&["broker-b"]));
    for addr in &addrs {
        let clusters = admin::cluster_info(addr).await?;
        assert!(
            !clusters.broker_addr_table.contains_key("broker-a"),
            "{addr}"
        );
    }
    let report = a.register_all(true, false, true).await;
    assert_eq!(
        report.skipped,
        Some(Skip::Shutdown),
        "no later registration"
    );

    // broker-b carries on; further refreshes are no change.
    registration_where(&mut events_b, "of b after a left", |r| r.is_success()).await;
    assert!(!client.update_route("Leave").await?);
    assert!(!watch.has_changed()?);
    running_b.shutdown().await;
    Ok(())
}
