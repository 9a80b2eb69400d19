//! One NameServer down: the others still get the registration and the
//! failure is reported per address; a restarted NameServer gets the route
//! back from the next periodic registration.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{eventually, master, registrar, route, Namesrv};
use rmq_broker_client::{Event, Schedule};

#[tokio::test]
async fn a_stopped_name_server_does_not_block_the_other() {
    let [mut down, up] = Namesrv::start_many(&[]);
    let registrar = registrar(
        master("broker-f", 42911),
        "fail-t",
        2,
        &[&down.addr, &up.addr],
    );
    assert!(registrar.register_all(true, false, true).await.is_success());
    down.stop();

    let report = registrar.register_all(true, false, true).await;
    assert!(!report.is_success());
    assert_eq!(report.attempted(), 2);
    assert_eq!(report.succeeded(), [up.addr.as_str()]);
    let failures: Vec<_> = report.failures().collect();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].0, down.addr);
    assert!(
        report.applied.is_some(),
        "the live server's answer is applied"
    );
    assert!(route(&up.addr, "fail-t1").await.is_some());
}

#[tokio::test]
async fn a_restarted_name_server_gets_the_route_back() {
    let mut ns = Namesrv::start(&[]);
    let registrar = Arc::new(registrar(
        master("broker-r", 43911),
        "restart-t",
        2,
        &[&ns.addr],
    ));
    let schedule = Schedule {
        first_register_delay: Duration::from_millis(300),
        register_period: Duration::from_millis(300),
        ..Schedule::java(registrar.config(), None)
    };
    let (tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let running = rmq_broker_client::spawn(registrar.clone(), schedule, Some(tx));
    match events.recv().await.unwrap() {
        Event::Registered { report, .. } => assert!(report.is_success(), "{report:?}"),
        other => panic!("{other:?}"),
    }
    assert!(route(&ns.addr, "restart-t0").await.is_some());

    ns.restart();
    assert!(
        route(&ns.addr, "restart-t0").await.is_none(),
        "fresh route table"
    );
    let addr = ns.addr.clone();
    let back = eventually(Duration::from_secs(5), || {
        let addr = addr.clone();
        async move { route(&addr, "restart-t0").await.is_some() }
    })
    .await;
    assert!(back, "periodic registration restored the route");
    running.shutdown().await;
}
