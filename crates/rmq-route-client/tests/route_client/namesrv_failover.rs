//! NameServer choice against real `rmq-namesrv` processes: the choice is
//! sticky, a stopped NameServer makes the next request go to the other one,
//! and a dead address in the list is skipped.

use std::time::Duration;

use crate::common::{self, register, Namesrv};
use rmq_route_client::RouteClient;

const NO_POLL: Duration = Duration::from_secs(3600);

/// An address that refuses connections (held for the test process, so no
/// other process can start listening there).
fn dead_addr() -> String {
    rmq_testkit::ports::refused_addr().to_string()
}

#[tokio::test]
async fn sticky_until_the_name_server_stops_then_the_other_one() -> anyhow::Result<()> {
    let [mut first, mut second] = Namesrv::start_many(&[]);
    // Brokers register with every NameServer.
    let _a1 = register(
        &first.addr,
        "broker-a",
        "127.0.0.1:10911",
        &[("T", 2, 2, 6)],
    )
    .await?;
    let _a2 = register(
        &second.addr,
        "broker-a",
        "127.0.0.1:10911",
        &[("T", 2, 2, 6)],
    )
    .await?;

    let client = RouteClient::new(common::config(&[&first.addr, &second.addr], NO_POLL));
    assert!(client.update_route("T").await?);
    let chosen = client.chosen_name_server().expect("a choice");
    for _ in 0..5 {
        client.fetch_route("T").await?;
        assert_eq!(
            client.chosen_name_server().as_deref(),
            Some(chosen.as_str()),
            "sticky"
        );
    }

    let (stopped, other) = if chosen == first.addr {
        first.stop();
        (first.addr.clone(), second.addr.clone())
    } else {
        second.stop();
        (second.addr.clone(), first.addr.clone())
    };
    // The channel's close is noticed asynchronously; the request after it
    // (or the one after a failed send) goes to the other NameServer.
    let mut served = false;
    for _ in 0..3 {
        match client.fetch_route("T").await {
            Ok(route) => {
                assert_eq!(route.broker_datas[0].broker_name, "broker-a");
                served = true;
                break;
            }
            Err(error) => assert!(error.is_transport(), "{error:?}"),
        }
    }
    assert!(served, "failover to {other} after {stopped} stopped");
    assert_eq!(client.chosen_name_server().as_deref(), Some(other.as_str()));
    assert!(
        !client.update_route("T").await?,
        "same route from the other NameServer"
    );
    Ok(())
}

#[tokio::test]
async fn a_dead_address_is_skipped_within_the_call() -> anyhow::Result<()> {
    let ns = Namesrv::start(&[]);
    let _a = register(&ns.addr, "broker-a", "127.0.0.1:10911", &[("T", 1, 1, 6)]).await?;
    let dead = dead_addr();
    // Whatever the random start, every call succeeds (retry on the next
    // address after a connect error).
    for _ in 0..4 {
        let client = RouteClient::new(common::config(&[&dead, &ns.addr], NO_POLL));
        assert!(client.update_route("T").await?);
        assert_eq!(
            client.chosen_name_server().as_deref(),
            Some(ns.addr.as_str())
        );
    }

    // Without the retry, Java's behaviour: a failed call, then the next one
    // rotates to the next address.
    let mut config = common::config(&[&dead, &ns.addr], NO_POLL);
    config.channel.retry_next_on_connect_error = false;
    let client = RouteClient::new(config);
    let mut failures = 0;
    for _ in 0..2 {
        match client.update_route("T").await {
            Ok(_) => break,
            Err(error) => {
                assert!(error.is_transport(), "{error:?}");
                failures += 1;
            }
        }
    }
    assert!(failures <= 1, "rotation reaches the live address");
    assert!(client.route("T").is_some());
    Ok(())
}

#[tokio::test]
async fn a_new_list_without_the_chosen_address_moves_on() -> anyhow::Result<()> {
    let [first, second] = Namesrv::start_many(&[]);
    let _a1 = register(
        &first.addr,
        "broker-a",
        "127.0.0.1:10911",
        &[("T", 1, 1, 6)],
    )
    .await?;
    let _a2 = register(
        &second.addr,
        "broker-b",
        "127.0.0.1:10921",
        &[("T", 1, 1, 6)],
    )
    .await?;
    let client = RouteClient::new(common::config(&[&first.addr], NO_POLL));
    client.update_route("T").await?;
    assert_eq!(
        client.route("T").unwrap().route.broker_datas[0].broker_name,
        "broker-a"
    );

    let update = client.update_name_server_list(vec![second.addr.clone()]);
    assert!(update.changed);
    assert_eq!(update.dropped.as_deref(), Some(first.addr.as_str()));
    assert!(
        client.update_route("T").await?,
        "route from the new NameServer differs"
    );
    assert_eq!(
        client.route("T").unwrap().route.broker_datas[0].broker_name,
        "broker-b"
    );
    assert_eq!(
        client.chosen_name_server().as_deref(),
        Some(second.addr.as_str())
    );
    Ok(())
}
