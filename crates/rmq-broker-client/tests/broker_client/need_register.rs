//! `needRegister` through QUERY_DATA_VERSION, and forced registration.

use crate::common::{self, master, registrar, Namesrv};
use rmq_broker_client::{wall_ms, Skip};
use rmq_protocol::TopicConfig;

#[tokio::test]
async fn unchanged_data_version_needs_no_registration() {
    let ns = Namesrv::start(&[]);
    let registrar = registrar(master("broker-n", 34911), "nr-t", 2, &[&ns.addr]);

    // Unknown broker: changed.
    assert!(registrar.need_register().await);
    let report = registrar.register_all(true, false, false).await;
    assert!(
        report.skipped.is_none() && report.is_success(),
        "{report:?}"
    );

    // Same DataVersion registered: nothing to do.
    assert!(!registrar.need_register().await);
    let report = registrar.register_all(true, false, false).await;
    assert_eq!(report.skipped, Some(Skip::NotNeeded));
    assert!(report.batches.is_empty());

    // Forced: sent anyway.
    let report = registrar.register_all(true, false, true).await;
    assert!(report.skipped.is_none() && report.is_success());

    // A topic change bumps the version: needed again.
    let before = registrar.data_version();
    assert!(registrar.update_topics(|t| t.upsert(TopicConfig::new("nr-new"), wall_ms())));
    assert_eq!(registrar.data_version().counter, before.counter + 1);
    assert!(registrar.need_register().await);
    let report = registrar.register_all(true, false, false).await;
    assert!(report.is_success());
    assert!(common::route(&ns.addr, "nr-new").await.is_some());
    assert!(!registrar.need_register().await);
}

#[tokio::test]
async fn an_unreachable_name_server_counts_as_changed() {
    let [mut dead, live] = Namesrv::start_many(&[]);
    let registrar = registrar(
        master("broker-u", 35911),
        "nu-t",
        2,
        &[&dead.addr, &live.addr],
    );
    assert!(registrar.register_all(true, false, true).await.is_success());
    assert!(!registrar.need_register().await);
    dead.stop();
    assert!(registrar.need_register().await);
}
