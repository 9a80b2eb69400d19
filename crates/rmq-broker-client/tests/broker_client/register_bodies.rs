//! Body variants accepted by the real NameServer: permission masking,
//! compression, split registration, the 4.x flavour, one-way mode and the
//! order-topic KV table in the answer.

use std::time::Duration;

use crate::common::{eventually, master, put_kv, registrar, route, Namesrv};
use rmq_broker_client::{Flavor, PERM_READ, PERM_WRITE};

#[tokio::test]
async fn read_only_broker_registers_every_topic_without_write() {
    let ns = Namesrv::start(&[]);
    let mut config = master("broker-p", 36911);
    config.broker_permission = PERM_READ;
    let registrar = registrar(config, "perm-t", 5, &[&ns.addr]);
    assert!(registrar.register_all(true, false, true).await.is_success());
    for i in 0..5 {
        let route = route(&ns.addr, &format!("perm-t{i}")).await.unwrap();
        assert_eq!(route.queue_datas[0].perm, PERM_READ, "perm-t{i}");
    }

    // Back to read|write at runtime: the version bumps, the perm is restored.
    let before = registrar.data_version();
    assert!(registrar.set_permission(PERM_READ | PERM_WRITE));
    assert!(registrar.data_version().counter > before.counter);
    assert!(registrar
        .register_all(false, false, true)
        .await
        .is_success());
    let route = route(&ns.addr, "perm-t3").await.unwrap();
    assert_eq!(route.queue_datas[0].perm, PERM_READ | PERM_WRITE);
}

#[tokio::test]
async fn compressed_registration_is_accepted_in_both_flavours() {
    let ns = Namesrv::start(&[]);
    for (flavor, port) in [(Flavor::V5, 37911), (Flavor::V4, 37921)] {
        let mut config = master(&format!("broker-z{port}"), port);
        config.compressed_register = true;
        config.flavor = flavor;
        let prefix = format!("zip{port}-t");
        let registrar = registrar(config, &prefix, 300, &[&ns.addr]);
        let report = registrar.register_all(true, false, true).await;
        assert!(report.is_success(), "{flavor:?}: {report:?}");
        assert!(
            report.body_bytes() < 300 * 20,
            "compressed: {}",
            report.body_bytes()
        );
        let route = route(&ns.addr, &format!("{prefix}299")).await;
        assert!(route.is_some(), "{flavor:?}");
    }
}

#[tokio::test]
async fn v4_flavour_registers_as_an_old_version_broker() {
    let ns = Namesrv::start(&[]);
    let mut config = master("broker-old", 38911);
    config.flavor = Flavor::V4;
    let registrar = registrar(config, "old-t", 2, &[&ns.addr]);
    assert!(registrar.register_all(true, false, true).await.is_success());
    assert!(!registrar.need_register().await);
    let route = route(&ns.addr, "old-t1").await.unwrap();
    assert!(!route.broker_datas[0].enable_acting_master);
}

#[tokio::test]
async fn split_registration_of_2000_topics_arrives_whole() {
    let ns = Namesrv::start(&[]);
    let mut config = master("broker-s", 39911);
    config.enable_split_registration = true;
    let registrar = registrar(config, "split-t", 2_000, &[&ns.addr]);
    // Split ignores needRegister, even unforced.
    let report = registrar.register_all(true, false, false).await;
    assert!(report.is_success(), "{report:?}");
    let sizes: Vec<_> = report.batches.iter().map(|b| b.topics).collect();
    assert_eq!(sizes, [800, 800, 400]);
    for i in [0, 799, 800, 1_599, 1_600, 1_999] {
        assert!(
            route(&ns.addr, &format!("split-t{i}")).await.is_some(),
            "split-t{i}"
        );
    }
}

#[tokio::test]
async fn oneway_registration_reaches_the_name_server() {
    let ns = Namesrv::start(&[]);
    let registrar = registrar(master("broker-o", 40911), "oneway-t", 2, &[&ns.addr]);
    let report = registrar.register_all(true, true, true).await;
    assert!(report.is_success());
    assert!(report.applied.is_none());
    let addr = ns.addr.clone();
    assert!(
        eventually(Duration::from_secs(3), || {
            let addr = addr.clone();
            async move { route(&addr, "oneway-t0").await.is_some() }
        })
        .await
    );
}

#[tokio::test]
async fn order_topic_config_from_the_answer_is_adopted() {
    let ns = Namesrv::start(&[]);
    put_kv(&ns.addr, "ORDER_TOPIC_CONFIG", "order-t1", "broker-k:4").await;
    let registrar = registrar(master("broker-k", 41911), "order-t", 2, &[&ns.addr]);
    let before = registrar.data_version();
    let report = registrar.register_all(true, false, true).await;
    let kv = report.applied.unwrap().order_topic_config.unwrap();
    assert!(kv.table.contains_key("order-t1"));
    assert_eq!(registrar.data_version().counter, before.counter + 1);
    registrar.update_topics(|t| {
        assert!(t.topics()["order-t1"].order);
        assert!(!t.topics()["order-t0"].order);
    });
    // checkOrderConfig=false leaves the table alone.
    let version = registrar.data_version();
    registrar.register_all(false, false, true).await;
    assert_eq!(registrar.data_version(), version);
}

#[tokio::test]
async fn incremental_registration_carries_only_the_new_topic() {
    let ns = Namesrv::start(&[]);
    let registrar = registrar(master("broker-i", 42921), "incr-t", 3, &[&ns.addr]);
    assert!(registrar.register_all(true, false, true).await.is_success());
    let topic = rmq_protocol::TopicConfig::new("incr-new");
    assert!(registrar.update_topics(|t| t.upsert(topic, rmq_broker_client::wall_ms())));
    let report = registrar
        .register_increment(&["incr-new".to_string()])
        .await;
    assert!(report.is_success(), "{report:?}");
    assert_eq!(report.topics(), 1);
    assert_eq!(report.data_version, registrar.data_version());
    assert!(route(&ns.addr, "incr-new").await.is_some());
    assert!(!registrar.need_register().await);
    let none = registrar.register_increment(&["unknown".to_string()]).await;
    assert!(none.batches.is_empty());
}
