//! The server loop over real TCP: answering, pipelining, one-way requests,
//! malformed input, limits, idleness and graceful shutdown.

use std::time::{Duration, Instant};

use crate::common::*;
use rmq_transport::{ClientConfig, DisconnectReason, RpcClient, ServerConfig};
use rmq_wire::{RemotingCommand, ResponseCode, SerializeType, FLAG_RESPONSE};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

const WAIT: Duration = Duration::from_secs(2);

async fn client(addr: std::net::SocketAddr) -> RpcClient {
    RpcClient::connect(addr, ClientConfig::default())
        .await
        .unwrap()
}

#[tokio::test]
async fn echo_answers_both_header_forms_in_the_servers_type() {
    let (service, _events) = TestService::new();
    let server = TestServer::start(service, ServerConfig::default()).await;
    let client = client(server.addr).await;
    for request_type in [SerializeType::Json, SerializeType::RocketMq] {
        let request = request(ECHO, "hello")
            .with_body(&b"payload"[..])
            .with_serialize_type(request_type);
        let response = client.invoke(request, WAIT).await.unwrap();
        assert_eq!(
            response.serialize_type,
            SerializeType::Json,
            "request sent as {request_type:?}"
        );
        assert_eq!(response.remark.as_deref(), Some("hello"));
        assert_eq!(response.body.as_deref(), Some(&b"payload"[..]));
        assert!(response.is_response());
    }
}

#[tokio::test]
async fn a_rocketmq_server_answers_json_requests_in_rocketmq() {
    let (service, _events) = TestService::new();
    let config = ServerConfig {
        serialize_type: SerializeType::RocketMq,
        ..ServerConfig::default()
    };
    let server = TestServer::start(service, config).await;
    let mut raw = TcpStream::connect(server.addr).await.unwrap();
    let mut json = request(ECHO, "x");
    json.opaque = 77;
    write_frame(&mut raw, &json).await;
    let (type_byte, response) = read_frame(&mut raw, WAIT).await.unwrap();
    assert_eq!(type_byte, 1);
    assert_eq!((response.opaque, response.flag), (77, FLAG_RESPONSE));
    assert_eq!(response.remark.as_deref(), Some("x"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_requests_are_matched_by_opaque() {
    let (service, _events) = TestService::new();
    let server = TestServer::start(service, ServerConfig::default()).await;
    let client = client(server.addr).await;
    let calls = (0..100).map(|n| {
        let client = client.clone();
        // Later requests finish first, with some scatter.
        let ms = (100 - n) / 2 + (n * 37) % 11;
        let request = request(DELAY, n).with_ext("ms", ms.to_string());
        tokio::spawn(async move { (n, client.invoke(request, WAIT).await) })
    });
    for call in futures::future::join_all(calls).await {
        let (n, response) = call.unwrap();
        assert_eq!(response.unwrap().remark, Some(n.to_string()));
    }
}

#[tokio::test]
async fn responses_are_written_in_completion_order() {
    let (service, _events) = TestService::new();
    let server = TestServer::start(service, ServerConfig::default()).await;
    let mut raw = TcpStream::connect(server.addr).await.unwrap();
    for opaque in 0..5 {
        let mut request = request(DELAY, opaque).with_ext("ms", (250 - 50 * opaque).to_string());
        request.opaque = opaque;
        write_frame(&mut raw, &request).await;
    }
    let mut order = Vec::new();
    for _ in 0..5 {
        order.push(read_frame(&mut raw, WAIT).await.unwrap().1.opaque);
    }
    assert_eq!(order, [4, 3, 2, 1, 0]);
}

#[tokio::test]
async fn oneway_requests_and_stray_responses_are_never_answered() {
    let (service, _events) = TestService::new();
    let server = TestServer::start(service.clone(), ServerConfig::default()).await;
    let mut raw = TcpStream::connect(server.addr).await.unwrap();
    let mut oneway = request(ECHO, "oneway").oneway();
    oneway.opaque = 1;
    write_frame(&mut raw, &oneway).await;
    let mut stray = RemotingCommand::response_to(&oneway, ResponseCode::Success);
    stray.opaque = 2;
    write_frame(&mut raw, &stray).await;
    let mut two_way = request(ECHO, "two-way");
    two_way.opaque = 3;
    write_frame(&mut raw, &two_way).await;

    let (_, first) = read_frame(&mut raw, WAIT).await.unwrap();
    assert_eq!(
        (first.opaque, first.remark.as_deref()),
        (3, Some("two-way"))
    );
    assert!(read_frame(&mut raw, Duration::from_millis(150))
        .await
        .is_none());
    assert_eq!(
        service.calls(),
        2,
        "the one-way request was processed, the response was not"
    );
}

#[tokio::test]
async fn a_panicking_handler_gets_system_error_and_the_connection_lives() {
    let (service, _events) = TestService::new();
    let server = TestServer::start(service, ServerConfig::default()).await;
    let client = client(server.addr).await;
    let response = client.invoke(request(PANIC, 0), WAIT).await.unwrap();
    assert_eq!(response.response_code(), ResponseCode::SystemError);
    assert!(response.remark.unwrap().contains("boom"));
    assert!(client.invoke(request(ECHO, 1), WAIT).await.is_ok());
}

#[tokio::test]
async fn malformed_frames_close_only_their_connection() {
    let (service, mut events) = TestService::new();
    let server = TestServer::start(service, ServerConfig::default()).await;
    let healthy = client(server.addr).await;
    let _ = connected(&mut events).await;
    let too_long = 16_777_213u32.to_be_bytes().to_vec();
    let bad_type = vec![0, 0, 0, 6, 2, 0, 0, 2, b'{', b'}'];
    let bad_json = [&[0u8, 0, 0, 13, 0, 0, 0, 9][..], b"{not json"].concat();
    let bad_header_len = vec![0, 0, 0, 6, 0, 0, 0, 9, b'{', b'}'];
    for garbage in [too_long, bad_type, bad_json, bad_header_len] {
        let mut raw = TcpStream::connect(server.addr).await.unwrap();
        let id = connected(&mut events).await;
        raw.write_all(&garbage).await.unwrap();
        assert!(
            closed_within(&mut raw, WAIT).await,
            "not closed after {garbage:?}"
        );
        match disconnect_of(&mut events, id).await {
            DisconnectReason::Error(_) => {}
            other => panic!("unexpected reason {other:?} for {garbage:?}"),
        }
        let response = healthy
            .invoke(request(ECHO, "still here"), WAIT)
            .await
            .unwrap();
        assert_eq!(response.remark.as_deref(), Some("still here"));
    }
}

#[tokio::test]
async fn connections_beyond_the_limit_are_closed_at_once() {
    let (service, mut events) = TestService::new();
    let config = ServerConfig {
        max_connections: 2,
        ..ServerConfig::default()
    };
    let server = TestServer::start(service, config).await;
    let first = client(server.addr).await;
    let second = client(server.addr).await;
    let first_id = connected(&mut events).await;
    let _ = connected(&mut events).await;

    let mut third = TcpStream::connect(server.addr).await.unwrap();
    assert!(closed_within(&mut third, WAIT).await);
    assert!(second.invoke(request(ECHO, 2), WAIT).await.is_ok());

    drop(first);
    assert_eq!(
        disconnect_of(&mut events, first_id).await,
        DisconnectReason::Closed
    );
    // The slot is released just after on_disconnect; allow it a moment.
    let deadline = Instant::now() + WAIT;
    loop {
        let fourth = client(server.addr).await;
        if fourth
            .invoke(request(ECHO, 4), Duration::from_millis(200))
            .await
            .is_ok()
        {
            break;
        }
        assert!(Instant::now() < deadline, "a freed slot was never reused");
    }
}

#[tokio::test]
async fn backpressure_stops_reading_at_max_in_flight() {
    let (service, _events) = TestService::new();
    let config = ServerConfig {
        max_in_flight: 2,
        ..ServerConfig::default()
    };
    let server = TestServer::start(service.clone(), config).await;
    let client = client(server.addr).await;
    let calls: Vec<_> = (0..5)
        .map(|n| {
            let client = client.clone();
            tokio::spawn(async move { client.invoke(request(GATE, n), WAIT).await })
        })
        .collect();
    let deadline = Instant::now() + WAIT;
    while service.calls() < 2 {
        assert!(Instant::now() < deadline, "requests were not taken up");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The other three were written behind the first two on the same
    // connection, and an echo server takes a readable request up in well
    // under a millisecond: in 100 ms one that was read would show.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        service.calls(),
        2,
        "only max_in_flight requests may be taken up"
    );
    service.gate.add_permits(5);
    for call in calls {
        assert!(call.await.unwrap().is_ok());
    }
    assert_eq!(service.calls(), 5);
}

#[tokio::test]
async fn idle_connections_are_closed() {
    let (service, mut events) = TestService::new();
    let config = ServerConfig {
        idle_timeout: Some(Duration::from_millis(300)),
        ..ServerConfig::default()
    };
    let server = TestServer::start(service, config).await;
    let busy = client(server.addr).await;
    let busy_id = connected(&mut events).await;
    let mut idle = TcpStream::connect(server.addr).await.unwrap();
    let idle_id = connected(&mut events).await;

    let started = Instant::now();
    let keep_busy = async {
        for n in 0..12 {
            busy.invoke(request(ECHO, n), WAIT).await.unwrap();
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let (_, idle_closed) = tokio::join!(keep_busy, closed_within(&mut idle, WAIT));
    assert!(idle_closed);
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(
        disconnect_of(&mut events, idle_id).await,
        DisconnectReason::Idle
    );
    assert!(!busy.is_closed(), "a connection in use stayed open");
    assert!(busy.invoke(request(ECHO, "last"), WAIT).await.is_ok());
    drop(busy);
    assert_eq!(
        disconnect_of(&mut events, busy_id).await,
        DisconnectReason::Closed
    );
}

#[tokio::test]
async fn shutdown_drains_in_flight_requests_and_refuses_new_connections() {
    let (service, mut events) = TestService::new();
    let mut server = TestServer::start(service.clone(), ServerConfig::default()).await;
    let client = client(server.addr).await;
    let id = connected(&mut events).await;
    let slow = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .invoke(request(DELAY, "slow").with_ext("ms", "400"), WAIT)
                .await
        }
    });
    wait_until("the slow request is in flight", || service.calls() == 1).await;
    server.shutdown();
    let deadline = Instant::now() + WAIT;
    while TcpStream::connect(server.addr).await.is_ok() {
        assert!(Instant::now() < deadline, "listener still open");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    let response = slow.await.unwrap().unwrap();
    assert_eq!(response.remark.as_deref(), Some("slow"));
    tokio::time::timeout(WAIT, &mut server.join)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        disconnect_of(&mut events, id).await,
        DisconnectReason::Shutdown
    );
    assert!(client
        .invoke(request(ECHO, 0), WAIT)
        .await
        .unwrap_err()
        .is_closed());
}

#[tokio::test]
async fn shutdown_gives_up_on_requests_after_the_drain_timeout() {
    let (service, _events) = TestService::new();
    let config = ServerConfig {
        drain_timeout: Duration::from_millis(200),
        ..ServerConfig::default()
    };
    let mut server = TestServer::start(service.clone(), config).await;
    let client = client(server.addr).await;
    let stuck = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .invoke(request(GATE, "never"), Duration::from_secs(5))
                .await
        }
    });
    wait_until("the stuck request is in flight", || service.calls() == 1).await;
    let started = Instant::now();
    server.shutdown();
    tokio::time::timeout(WAIT, &mut server.join)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(stuck.await.unwrap().unwrap_err().is_closed());
}

#[tokio::test]
async fn a_handle_sends_server_initiated_requests() {
    let (service, mut events) = TestService::new();
    let config = ServerConfig {
        serialize_type: SerializeType::RocketMq,
        ..ServerConfig::default()
    };
    let server = TestServer::start(service.clone(), config).await;
    let client = client(server.addr).await;
    let mut inbound = client.take_inbound().unwrap();
    let id = connected(&mut events).await;
    let handle = service.handles.lock().unwrap()[0].clone();
    assert_eq!(handle.id(), id);

    let notify = RemotingCommand::request(905, 9)
        .with_ext("minBrokerId", "0")
        .oneway();
    handle.send(notify).unwrap();
    let got = tokio::time::timeout(WAIT, inbound.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((got.code, got.opaque, got.is_oneway()), (905, 9, true));
    assert_eq!(got.serialize_type, SerializeType::RocketMq);
    assert_eq!(got.ext("minBrokerId"), Some("0"));

    drop(client);
    assert_eq!(
        disconnect_of(&mut events, id).await,
        DisconnectReason::Closed
    );
    assert!(handle.is_closed());
    assert!(handle.send(RemotingCommand::request(905, 10)).is_err());
}

#[tokio::test]
async fn a_handle_closes_its_connection() {
    let (service, mut events) = TestService::new();
    let server = TestServer::start(service.clone(), ServerConfig::default()).await;
    let client = client(server.addr).await;
    let id = connected(&mut events).await;
    let handle = service.handles.lock().unwrap()[0].clone();

    handle.close();
    assert_eq!(
        disconnect_of(&mut events, id).await,
        DisconnectReason::ClosedByService
    );
    let deadline = Instant::now() + WAIT;
    while !client.is_closed() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(client.is_closed(), "the peer sees the connection close");
}
