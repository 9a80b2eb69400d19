//! Single master and static master/slave registration against the real
//! `rmq-namesrv`: the route appears, the slave learns the master's addresses.

use crate::common::{self, master, registrar, route, Namesrv};
use rmq_broker_client::{MasterInfo, Skip};

#[tokio::test]
async fn master_registers_and_the_route_appears() {
    let ns = Namesrv::start(&[]);
    let registrar = registrar(master("broker-a", 30911), "route-t", 3, &[&ns.addr]);
    assert!(route(&ns.addr, "route-t0").await.is_none());

    let report = registrar.register_all(true, false, true).await;
    assert!(report.is_success(), "{report:?}");
    assert_eq!(report.succeeded(), [ns.addr.as_str()]);
    assert_eq!(report.topics(), 3);
    assert_eq!(report.applied.as_ref().unwrap().master_addr, None);

    let route = route(&ns.addr, "route-t2").await.expect("route registered");
    assert_eq!(route.broker_datas.len(), 1);
    let group = &route.broker_datas[0];
    assert_eq!(group.broker_name, "broker-a");
    assert_eq!(group.cluster, "TestCluster");
    assert_eq!(group.broker_addrs[&0], "127.0.0.1:30911");
    assert!(!group.enable_acting_master);
    let queue = &route.queue_datas[0];
    assert_eq!(
        (queue.read_queue_nums, queue.write_queue_nums, queue.perm),
        (4, 4, 6)
    );
}

#[tokio::test]
async fn slave_learns_master_and_ha_addresses() {
    let ns = Namesrv::start(&[]);
    let master = registrar(master("broker-b", 31911), "ms-t", 2, &[&ns.addr]);
    let slave_config = common::master("broker-b", 31921).slave(1);
    let slave = registrar(slave_config, "ms-t", 2, &[&ns.addr]);
    assert_eq!(slave.broker_id(), 1);

    // Alone, the slave gets no master.
    let report = slave.register_all(true, false, true).await;
    assert!(report.is_success(), "{report:?}");
    assert_eq!(slave.master(), MasterInfo::default());

    assert!(master.register_all(true, false, true).await.is_success());
    let mut watch = slave.watch_master();
    let report = slave.register_all(true, false, true).await;
    let applied = report.applied.expect("an answer was applied");
    assert_eq!(applied.master_addr.as_deref(), Some("127.0.0.1:31911"));
    assert_eq!(applied.ha_server_addr.as_deref(), Some("127.0.0.1:31912"));
    assert!(watch.has_changed().unwrap());
    assert_eq!(
        *watch.borrow_and_update(),
        MasterInfo {
            master_addr: Some("127.0.0.1:31911".into()),
            ha_server_addr: Some("127.0.0.1:31912".into()),
        }
    );

    let route = route(&ns.addr, "ms-t0").await.unwrap();
    let addrs = &route.broker_datas[0].broker_addrs;
    assert_eq!(addrs.len(), 2);
    assert_eq!(addrs[&1], "127.0.0.1:31921");
}

#[tokio::test]
async fn static_ha_master_is_never_repointed() {
    let ns = Namesrv::start(&[]);
    let master = registrar(master("broker-c", 32911), "ha-t", 2, &[&ns.addr]);
    let mut slave_config = common::master("broker-c", 32921).slave(2);
    slave_config.ha_master_address = Some("10.9.9.9:10912".into());
    let slave = registrar(slave_config, "ha-t", 2, &[&ns.addr]);
    assert!(master.register_all(true, false, true).await.is_success());
    let report = slave.register_all(true, false, true).await;
    assert!(report.is_success());
    let info = slave.master();
    assert_eq!(info.ha_server_addr.as_deref(), Some("10.9.9.9:10912"));
    assert_eq!(info.master_addr.as_deref(), Some("127.0.0.1:32911"));
}

#[tokio::test]
async fn no_name_server_means_nothing_is_sent() {
    let config = master("broker-d", 33911);
    let registrar = rmq_broker_client::Registrar::new(
        config,
        rmq_broker_client::TopicTable::new(0),
        rmq_broker_client::NameServerList::empty(),
    )
    .unwrap();
    let report = registrar.register_all(true, false, true).await;
    assert_eq!(report.skipped, Some(Skip::NoNameServer));
    assert!(!report.is_success());
}

#[tokio::test]
async fn a_role_set_from_outside_changes_the_registered_id() {
    let ns = Namesrv::start(&[]);
    let registrar = registrar(master("broker-e", 33921), "role-t", 2, &[&ns.addr]);
    assert!(registrar.register_all(true, false, true).await.is_success());
    let before = registrar.data_version();

    registrar.set_role(rmq_broker_client::Role {
        broker_id: 2,
        master: MasterInfo {
            master_addr: Some("127.0.0.1:1".into()),
            ha_server_addr: Some("127.0.0.1:2".into()),
        },
        state_version: Some(5),
    });
    assert_eq!(registrar.broker_id(), 2);
    let after = registrar.data_version();
    assert_eq!(
        (after.counter, after.state_version),
        (before.counter + 1, 5)
    );
    assert_eq!(
        registrar.master().ha_server_addr.as_deref(),
        Some("127.0.0.1:2")
    );

    let report = registrar.register_all(true, false, true).await;
    assert!(report.is_success());
    assert_eq!(report.broker_id, 2);
    // The same address re-registered under id 2 replaces its id-0 entry; no
    // master is alive now, so the answer clears the master address.
    let route = route(&ns.addr, "role-t0").await.unwrap();
    let addrs = &route.broker_datas[0].broker_addrs;
    assert_eq!(addrs.len(), 1);
    assert_eq!(addrs[&2], "127.0.0.1:33921");
    assert_eq!(registrar.master().master_addr, None);
}
