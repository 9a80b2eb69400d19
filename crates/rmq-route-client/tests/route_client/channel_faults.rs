//! Channel behaviour that a healthy `rmq-namesrv` never shows, against an
//! in-process server speaking real frames: GO_AWAY (reconnect to the same
//! NameServer and retry once) and a response timeout (the channel is
//! closed, so the next request rotates).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmq_protocol::{BrokerData, Dialect, JavaJson, QueueData, TopicRouteData};
use rmq_route_client::{RouteClient, RouteClientConfig, RouteError};
use rmq_transport::{ConnectionInfo, Reply, ServerConfig, Service};
use rmq_wire::{RemotingCommand, ResponseCode};

/// Answers the first `go_away` requests with GO_AWAY, then with a route;
/// `silent` never answers at all.
#[derive(Default)]
struct Fake {
    go_away: usize,
    silent: bool,
    calls: AtomicUsize,
    connections: AtomicUsize,
}

impl Service for Fake {
    fn on_connect(&self, _conn: &ConnectionInfo) {
        self.connections.fetch_add(1, Ordering::SeqCst);
    }

    fn call(&self, _conn: &ConnectionInfo, request: RemotingCommand) -> Reply {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        if self.silent {
            return Reply::none();
        }
        if n < self.go_away {
            return Reply::ready(RemotingCommand::response_to(&request, ResponseCode::GoAway));
        }
        let route = TopicRouteData {
            broker_datas: vec![BrokerData {
                broker_addrs: [(0, "127.0.0.1:10911".to_string())].into(),
                broker_name: "broker-a".into(),
                ..BrokerData::default()
            }],
            queue_datas: vec![QueueData {
                broker_name: "broker-a".into(),
                perm: 6,
                read_queue_nums: 1,
                write_queue_nums: 1,
                ..QueueData::default()
            }],
            ..TopicRouteData::default()
        };
        Reply::ready(
            RemotingCommand::response_to(&request, ResponseCode::Success)
                .with_body(route.to_json(Dialect::Standard)),
        )
    }
}

async fn serve(fake: Arc<Fake>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(rmq_transport::run(
        listener,
        fake,
        ServerConfig::default(),
        std::future::pending(),
    ));
    addr
}

fn client(addrs: &[&str], timeout: Duration) -> RouteClient {
    RouteClient::new(RouteClientConfig {
        namesrv_addrs: addrs.iter().map(|a| a.to_string()).collect(),
        mq_client_api_timeout: timeout,
        ..RouteClientConfig::default()
    })
}

#[tokio::test]
async fn one_go_away_is_retried_on_a_new_connection_to_the_same_server() {
    let fake = Arc::new(Fake {
        go_away: 1,
        ..Fake::default()
    });
    let addr = serve(fake.clone()).await;
    let client = client(&[&addr], Duration::from_secs(2));
    let route = client.fetch_route("T").await.unwrap();
    assert_eq!(route.broker_datas[0].broker_name, "broker-a");
    assert_eq!(fake.calls.load(Ordering::SeqCst), 2);
    assert_eq!(fake.connections.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_second_go_away_fails_the_request() {
    let fake = Arc::new(Fake {
        go_away: 2,
        ..Fake::default()
    });
    let addr = serve(fake.clone()).await;
    let client = client(&[&addr], Duration::from_secs(2));
    let error = client.update_route("T").await.unwrap_err();
    assert!(
        matches!(error, RouteError::GoAway { .. }) && error.is_transport(),
        "{error:?}"
    );
    // The next request is served.
    assert!(client.update_route("T").await.unwrap());
}

#[tokio::test]
async fn a_timeout_closes_the_channel_and_the_next_request_rotates() {
    let silent = Arc::new(Fake {
        silent: true,
        ..Fake::default()
    });
    let healthy = Arc::new(Fake::default());
    let silent_addr = serve(silent.clone()).await;
    let healthy_addr = serve(healthy.clone()).await;
    let client = client(&[&silent_addr, &healthy_addr], Duration::from_millis(300));
    // Start wherever the shuffle says; at most one timeout before the
    // healthy server answers, and from then on it stays chosen.
    let mut timeouts = 0;
    for _ in 0..2 {
        match client.fetch_route("T").await {
            Ok(_) => break,
            Err(RouteError::Transport(e)) if e.is_timeout() => timeouts += 1,
            Err(other) => panic!("{other:?}"),
        }
    }
    assert!(timeouts <= 1);
    assert_eq!(
        client.chosen_name_server().as_deref(),
        Some(healthy_addr.as_str())
    );
    for _ in 0..3 {
        client.fetch_route("T").await.unwrap();
    }
    assert_eq!(healthy.connections.load(Ordering::SeqCst), 1, "sticky");
}

#[tokio::test]
async fn a_timeout_closes_the_socket_unless_configured_not_to() {
    for close in [true, false] {
        let silent = Arc::new(Fake {
            silent: true,
            ..Fake::default()
        });
        let addr = serve(silent.clone()).await;
        let mut config = RouteClientConfig {
            namesrv_addrs: vec![addr],
            mq_client_api_timeout: Duration::from_millis(150),
            ..RouteClientConfig::default()
        };
        config.channel.close_socket_if_timeout = close;
        let client = RouteClient::new(config);
        for _ in 0..2 {
            let error = client.fetch_route("T").await.unwrap_err();
            assert!(
                matches!(&error, RouteError::Transport(e) if e.is_timeout()),
                "{error:?}"
            );
        }
        let want = if close { 2 } else { 1 };
        assert_eq!(
            silent.connections.load(Ordering::SeqCst),
            want,
            "close_socket_if_timeout={close}"
        );
    }
}
