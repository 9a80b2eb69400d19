//! The lightweight heartbeat of acting-master brokers keeps a broker with a
//! short `heartbeatTimeoutMillis` alive between full registrations, in both
//! variants (one-way QUERY_DATA_VERSION and one-way BROKER_HEARTBEAT).

use std::sync::Arc;
use std::time::Duration;

use crate::common::{self, master, registrar, route, Namesrv};
use rmq_broker_client::{Registrar, Running, Schedule};

fn start(registrar: Registrar, heartbeat: bool) -> Running {
    let registrar = Arc::new(registrar);
    let schedule = Schedule {
        first_register_delay: Duration::from_secs(3600),
        heartbeat_interval: heartbeat.then_some(Duration::from_millis(200)),
        ..Schedule::java(registrar.config(), None)
    };
    rmq_broker_client::spawn(registrar, schedule, None)
}

#[tokio::test]
async fn heartbeats_keep_a_short_lived_registration_alive() {
    let ns = Namesrv::start(&["scanNotActiveBrokerInterval=200"]);
    let mut runs = Vec::new();
    for (name, port, compatible, heartbeat) in [
        ("broker-q", 47911, true, true),
        ("broker-hb", 47921, false, true),
        ("broker-silent", 47931, true, false),
    ] {
        let mut config = master(name, port);
        config.enable_slave_acting_master = true;
        config.compatible_with_old_name_srv = compatible;
        config.broker_not_active_timeout = Duration::from_millis(1_200);
        runs.push(start(registrar(config, name, 2, &[&ns.addr]), heartbeat));
    }
    // Each registers once at start-up (the periodic registration is an hour
    // away): wait for all three.
    for name in ["broker-q", "broker-hb", "broker-silent"] {
        let topic = format!("{name}0");
        let addr = ns.addr.clone();
        let registered = common::eventually(Duration::from_secs(10), || {
            let (addr, topic) = (addr.clone(), topic.clone());
            async move { route(&addr, &topic).await.is_some() }
        })
        .await;
        assert!(registered, "{name} registered within 10 s");
        let route = route(&ns.addr, &topic).await.expect("still registered");
        assert!(route.broker_datas[0].enable_acting_master);
    }
    // The NameServer's first expiry scan runs 5 s after its start (Java's
    // fixed delay); by then every broker is past its 1.2 s timeout, so the
    // silent one going proves a scan ran and the others staying proves their
    // heartbeats.
    let addr = ns.addr.clone();
    let silent_gone = common::eventually(Duration::from_secs(10), || {
        let addr = addr.clone();
        async move { route(&addr, "broker-silent0").await.is_none() }
    })
    .await;
    assert!(silent_gone, "expired without heartbeat");
    assert!(
        route(&ns.addr, "broker-q0").await.is_some(),
        "QUERY_DATA_VERSION heartbeat"
    );
    assert!(
        route(&ns.addr, "broker-hb0").await.is_some(),
        "BROKER_HEARTBEAT"
    );
    // And they stay through further scans: in 1.5 s, more than their 1.2 s
    // timeout plus one 200 ms scan, a broker whose heartbeats had stopped
    // would be expired (and a heartbeat does not bring it back).
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    for name in ["broker-q0", "broker-hb0"] {
        assert!(route(&ns.addr, name).await.is_some(), "{name} kept alive");
    }
    drop(runs);
}
