//! Dead-peer detection on accepted connections (`ServerConfig::keepalive`):
//! the socket options as the kernel reports them, that the server sets them
//! on what it accepts, and, with a peer in a network namespace whose
//! replies are dropped, that the server closes the connection of a peer
//! gone without FIN or RST within the configured bound and does not
//! without the options. Those two need a network namespace: without one
//! they are skipped, and under `CI=true` they fail
//! ([`rmq_testkit::netns::PeerNamespace::create_or_skip`]).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use rmq_testkit::netns::PeerNamespace;
use rmq_transport::{ConnId, DisconnectReason, Keepalive, ServerConfig};
use rmq_wire::RemotingCommand;
use socket2::SockRef;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// A connected pair: the accepted side and the client.
async fn accepted_pair() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let client = TcpStream::connect(listener.local_addr().unwrap())
        .await
        .unwrap();
    let (accepted, _) = listener.accept().await.unwrap();
    (accepted, client)
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn an_accepted_socket_gets_the_configured_options() {
    let (accepted, _client) = accepted_pair().await;
    let socket = SockRef::from(&accepted);
    assert!(!socket.keepalive().unwrap(), "off until set");
    let keepalive = Keepalive {
        idle: Some(Duration::from_secs(7)),
        interval: Duration::from_secs(3),
        probes: 4,
        user_timeout: Some(Duration::from_millis(12_345)),
    };
    keepalive.apply(&accepted);
    assert!(socket.keepalive().unwrap());
    assert_eq!(socket.tcp_keepalive_time().unwrap(), Duration::from_secs(7));
    assert_eq!(
        socket.tcp_keepalive_interval().unwrap(),
        Duration::from_secs(3)
    );
    assert_eq!(socket.tcp_keepalive_retries().unwrap(), 4);
    assert_eq!(
        socket.tcp_user_timeout().unwrap(),
        Some(Duration::from_millis(12_345))
    );
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn zero_leaves_keepalive_and_the_user_timeout_off() {
    let (accepted, _client) = accepted_pair().await;
    let socket = SockRef::from(&accepted);
    let off = Keepalive::from_settings(0, 2, 5, 0);
    assert_eq!(off.idle, None);
    assert_eq!(off.user_timeout, None);
    off.apply(&accepted);
    assert!(!socket.keepalive().unwrap());
    assert_eq!(socket.tcp_user_timeout().unwrap(), None);
    // Each part alone: a user timeout without keepalive, and keepalive
    // without a user timeout.
    let (accepted, _client) = accepted_pair().await;
    let socket = SockRef::from(&accepted);
    Keepalive::from_settings(0, 2, 5, 4_000).apply(&accepted);
    assert!(!socket.keepalive().unwrap());
    assert_eq!(
        socket.tcp_user_timeout().unwrap(),
        Some(Duration::from_secs(4))
    );
    let (accepted, _client) = accepted_pair().await;
    let socket = SockRef::from(&accepted);
    Keepalive::from_settings(9, 2, 5, 0).apply(&accepted);
    assert!(socket.keepalive().unwrap());
    assert_eq!(socket.tcp_keepalive_time().unwrap(), Duration::from_secs(9));
    assert_eq!(socket.tcp_user_timeout().unwrap(), None);
}

/// The keepalive timer of the server's side of the connection from local
/// port `client_port` to `server`, as /proc/net/tcp shows it: `Some` (time
/// left) when the timer is the keepalive timer, `None` when no timer runs.
/// The server's socket belongs to this process but is out of the test's
/// reach; the kernel's table shows it.
#[cfg(target_os = "linux")]
fn keepalive_timer(server: SocketAddr, client_port: u16) -> Option<Duration> {
    let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
    let port_of = |address: &str| {
        let port = address.rsplit(':').next().unwrap_or("");
        u16::from_str_radix(port, 16).ok()
    };
    let row = table
        .lines()
        .skip(1)
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .find(|fields| {
            port_of(fields[1]) == Some(server.port()) && port_of(fields[2]) == Some(client_port)
        })
        .unwrap_or_else(|| panic!("no socket {server} <- :{client_port} in\n{table}"));
    // "tr:tm->when": timer kind (2 = keepalive, 0 = none) and its expiry
    // in clock ticks of 1/100 s.
    let (kind, when) = row[5].split_once(':').expect("tr:tm->when");
    match kind {
        "00" => None,
        "02" => Some(Duration::from_millis(
            u64::from_str_radix(when, 16).unwrap() * 10,
        )),
        other => panic!("timer {other} on an idle connection: {row:?}"),
    }
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_server_sets_the_options_on_every_connection_it_accepts() {
    for (keepalive, expected) in [
        (
            Keepalive {
                idle: Some(Duration::from_secs(60)),
                ..Keepalive::default()
            },
            true,
        ),
        (Keepalive::DISABLED, false),
    ] {
        let (service, mut events) = TestService::new();
        let config = ServerConfig {
            keepalive,
            ..ServerConfig::default()
        };
        let mut server = TestServer::start(service, config).await;
        let client = TcpStream::connect(server.addr).await.unwrap();
        // Connected: the server has accepted it and set its options.
        assert!(matches!(next_event(&mut events).await, Event::Connected(_)));
        let client_port = client.local_addr().unwrap().port();
        let timer = keepalive_timer(server.addr, client_port);
        if expected {
            // Without the idle time set, the system's default (2 hours) would show.
            let left = timer.expect("a keepalive timer");
            assert!(left <= Duration::from_secs(60), "{left:?}");
        } else {
            assert_eq!(timer, None, "no keepalive when disabled");
        }
        server.shutdown();
    }
}

/// A server on `address` (port 0) that reports its connection events, and
/// the means to stop it.
async fn server_on(
    address: std::net::Ipv4Addr,
    config: ServerConfig,
) -> (
    SocketAddr,
    Arc<TestService>,
    mpsc::UnboundedReceiver<Event>,
    oneshot::Sender<()>,
) {
    let listener = TcpListener::bind((address, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (service, events) = TestService::new();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(rmq_transport::run(
        listener,
        service.clone(),
        config,
        async {
            let _ = stopped.await;
        },
    ));
    (addr, service, events, stop)
}

async fn connected(events: &mut mpsc::UnboundedReceiver<Event>) -> ConnId {
    match next_event(events).await {
        Event::Connected(id) => id,
        other => panic!("expected a connection, got {other:?}"),
    }
}

/// How long until the server reports the end of a connection, up to `wait`.
async fn closed_after(
    events: &mut mpsc::UnboundedReceiver<Event>,
    wait: Duration,
) -> Option<(Duration, DisconnectReason)> {
    let started = Instant::now();
    match tokio::time::timeout(wait, events.recv()).await {
        Ok(Some(Event::Disconnected(_, reason))) => Some((started.elapsed(), reason)),
        Ok(other) => panic!("expected a disconnect, got {other:?}"),
        Err(_) => None,
    }
}

/// Short settings: an idle connection is given up 3 s after the peer was
/// last heard from.
fn fast_keepalive() -> Keepalive {
    Keepalive {
        idle: Some(Duration::from_secs(1)),
        interval: Duration::from_secs(1),
        probes: 2,
        user_timeout: Some(Duration::from_secs(3)),
    }
}

/// No idle close, so that only the socket options can end a connection.
fn without_idle_close(keepalive: Keepalive) -> ServerConfig {
    ServerConfig {
        keepalive,
        idle_timeout: None,
        ..ServerConfig::default()
    }
}

#[tokio::test]
async fn an_idle_connection_to_a_vanished_peer_is_closed_within_the_bound() {
    let test = "an_idle_connection_to_a_vanished_peer_is_closed_within_the_bound";
    let Some(peer) = PeerNamespace::create_or_skip(test) else {
        return;
    };
    let host = peer.host_addr();
    let (watched, _, mut watched_events, _stop_watched) =
        server_on(host, without_idle_close(fast_keepalive())).await;
    let (unwatched, _, mut unwatched_events, _stop_unwatched) =
        server_on(host, without_idle_close(Keepalive::DISABLED)).await;
    peer.connect(watched, b"");
    peer.connect(unwatched, b"");
    connected(&mut watched_events).await;
    connected(&mut unwatched_events).await;
    // Answered probes keep a live peer's connection. 4 s is past the 3 s in
    // which these settings give up on a silent peer, so a connection closed
    // in spite of the answers would be closed by then.
    assert!(
        closed_after(&mut watched_events, Duration::from_secs(4))
            .await
            .is_none(),
        "a peer that answers probes stays connected"
    );

    peer.blackhole();
    let (took, reason) = closed_after(&mut watched_events, Duration::from_secs(10))
        .await
        .expect("the vanished peer's connection is closed");
    assert!(
        matches!(reason, DisconnectReason::Error(_)),
        "closed by the kernel's timeout: {reason:?}"
    );
    // 3 s of silence at most (the last probe answer came shortly before
    // the blackhole), rounded up to the next probe.
    eprintln!("{test}: closed {took:?} after the peer vanished ({reason:?})");
    assert!(took <= Duration::from_secs(5), "took {took:?}");
    // By the end of this second the unwatched connection has been silent a
    // second longer than the watched one was when it closed: with the same
    // options it would be closed too.
    assert!(
        closed_after(&mut unwatched_events, Duration::from_secs(1))
            .await
            .is_none(),
        "without keepalive the same peer's connection stays open"
    );
}

#[tokio::test]
async fn data_unacknowledged_by_a_vanished_peer_closes_after_the_user_timeout() {
    let test = "data_unacknowledged_by_a_vanished_peer_closes_after_the_user_timeout";
    let Some(peer) = PeerNamespace::create_or_skip(test) else {
        return;
    };
    let host = peer.host_addr();
    // No keepalive: it probes idle connections only, and these are not idle.
    let user_timeout_only = Keepalive {
        idle: None,
        ..fast_keepalive()
    };
    let (watched, watched_service, mut watched_events, _stop_watched) =
        server_on(host, without_idle_close(user_timeout_only)).await;
    let (unwatched, unwatched_service, mut unwatched_events, _stop_unwatched) =
        server_on(host, without_idle_close(Keepalive::DISABLED)).await;
    peer.connect(watched, b"");
    peer.connect(unwatched, b"");
    connected(&mut watched_events).await;
    connected(&mut unwatched_events).await;

    peer.blackhole();
    for service in [&watched_service, &unwatched_service] {
        let handle = service.handles.lock().unwrap()[0].clone();
        handle
            .send(RemotingCommand::request(ECHO, 1))
            .expect("the connection is open");
    }
    let (took, reason) = closed_after(&mut watched_events, Duration::from_secs(10))
        .await
        .expect("the connection with unacknowledged data is closed");
    assert!(
        matches!(reason, DisconnectReason::Error(_)),
        "closed by the kernel's timeout: {reason:?}"
    );
    eprintln!("{test}: closed {took:?} after the peer vanished ({reason:?})");
    assert!(took <= Duration::from_secs(5), "took {took:?}");
    // By the end of this second the unwatched connection's data has waited a
    // second longer than the watched one's did when it closed: with a user
    // timeout it would be closed too.
    assert!(
        closed_after(&mut unwatched_events, Duration::from_secs(1))
            .await
            .is_none(),
        "without a user timeout it retransmits for many minutes"
    );
}
