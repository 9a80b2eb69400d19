//! Unregistration at shutdown removes the broker from every NameServer.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{cluster_info, eventually, master, registrar, route, Namesrv};
use rmq_broker_client::{Schedule, Skip};

#[tokio::test]
async fn unregister_all_removes_the_broker_from_every_name_server() {
    let [a, b] = Namesrv::start_many(&[]);
    let registrar = registrar(master("broker-x", 44911), "unreg-t", 2, &[&a.addr, &b.addr]);
    assert!(registrar.register_all(true, false, true).await.is_success());
    for ns in [&a, &b] {
        assert!(cluster_info(&ns.addr)
            .await
            .broker_addr_table
            .contains_key("broker-x"));
    }
    // The connections stay open: removal is the unregistration's doing.
    let results = registrar.unregister_all().await;
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r.outcome.is_ok()), "{results:?}");
    for ns in [&a, &b] {
        let addr = ns.addr.clone();
        let gone = eventually(Duration::from_secs(3), || {
            let addr = addr.clone();
            async move { route(&addr, "unreg-t0").await.is_none() }
        })
        .await;
        assert!(gone, "route gone from {addr}");
        assert!(!cluster_info(&ns.addr)
            .await
            .broker_addr_table
            .contains_key("broker-x"));
    }
}

#[tokio::test]
async fn shutdown_unregisters_and_refuses_later_registrations() {
    let ns = Namesrv::start(&[]);
    let registrar = Arc::new(registrar(
        master("broker-y", 45911),
        "shut-t",
        2,
        &[&ns.addr],
    ));
    let (tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let running = rmq_broker_client::spawn(
        registrar.clone(),
        Schedule::java(registrar.config(), None),
        Some(tx),
    );
    events.recv().await.unwrap();
    assert!(route(&ns.addr, "shut-t0").await.is_some());

    let results = running.shutdown().await;
    assert!(results.iter().all(|r| r.outcome.is_ok()), "{results:?}");
    let addr = ns.addr.clone();
    assert!(
        eventually(Duration::from_secs(3), || {
            let addr = addr.clone();
            async move { route(&addr, "shut-t0").await.is_none() }
        })
        .await
    );
    let report = registrar.register_all(true, false, true).await;
    assert_eq!(report.skipped, Some(Skip::Shutdown));
}
