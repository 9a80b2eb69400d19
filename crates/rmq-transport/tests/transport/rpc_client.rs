//! `RpcClient` over real TCP: timeouts, closed connections, one-way sends.

use std::time::Duration;

use crate::common::*;
use rmq_transport::{ClientConfig, ClientError, DisconnectReason, RpcClient, ServerConfig};
use rmq_wire::{RemotingCommand, ResponseCode, SerializeType};
use tokio::net::TcpListener;

const WAIT: Duration = Duration::from_secs(2);

#[tokio::test]
async fn a_timeout_names_the_address_and_leaves_the_connection_usable() {
    let (service, _events) = TestService::new();
    let server = TestServer::start(service, ServerConfig::default()).await;
    let client = RpcClient::connect(server.addr, ClientConfig::default())
        .await
        .unwrap();
    let timeout = Duration::from_millis(200);
    let error = client
        .invoke(request(SILENT, 0), timeout)
        .await
        .unwrap_err();
    match &error {
        ClientError::Timeout { addr, timeout: t } => {
            assert_eq!((*addr, *t), (server.addr, timeout))
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(
        error.to_string().contains(&server.addr.to_string()),
        "{error}"
    );
    assert!(client.invoke(request(ECHO, 1), WAIT).await.is_ok());
}

#[tokio::test]
async fn a_late_response_after_a_timeout_is_dropped() {
    let (service, _events) = TestService::new();
    let server = TestServer::start(service.clone(), ServerConfig::default()).await;
    let client = RpcClient::connect(server.addr, ClientConfig::default())
        .await
        .unwrap();
    let late = request(GATE, "late");
    assert!(client
        .invoke(late, Duration::from_millis(50))
        .await
        .unwrap_err()
        .is_timeout());
    // The late answer is made once its handler takes the permit. Server and
    // test share one thread, so by the time the permit is seen gone the
    // handler has returned its answer, which is queued on the connection
    // before the next request is even sent: the client reads it first.
    service.gate.add_permits(1);
    wait_until("the late request's handler answers", || {
        service.gate.available_permits() == 0
    })
    .await;
    let response = client.invoke(request(ECHO, "next"), WAIT).await.unwrap();
    assert_eq!(response.remark.as_deref(), Some("next"));
}

#[tokio::test]
async fn a_closed_connection_fails_pending_and_later_calls() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let peer = tokio::spawn(async move {
        // Take one request, then hang up without answering.
        let (mut stream, _) = listener.accept().await.unwrap();
        let first = read_frame(&mut stream, WAIT).await;
        drop(stream);
        first
    });
    let client = RpcClient::connect(addr, ClientConfig::default())
        .await
        .unwrap();
    let pending = client.invoke(request(ECHO, 0), WAIT).await.unwrap_err();
    assert!(pending.is_closed(), "{pending:?}");
    assert!(peer.await.unwrap().is_some());
    assert!(client.is_closed());
    assert!(client
        .invoke(request(ECHO, 1), WAIT)
        .await
        .unwrap_err()
        .is_closed());
    assert!(client
        .invoke_oneway(request(ECHO, 2))
        .unwrap_err()
        .is_closed());
}

#[tokio::test]
async fn connecting_to_a_closed_port_fails() {
    // Bound but not listening: connects are refused, and no other process can
    // start listening on the port while the test runs.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = socket.local_addr().unwrap();
    match RpcClient::connect(addr, ClientConfig::default()).await {
        Err(ClientError::Connect { addr: text, .. }) => assert_eq!(text, addr.to_string()),
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn oneway_sends_are_processed_and_binary_requests_work() {
    let (service, _events) = TestService::new();
    let server = TestServer::start(service.clone(), ServerConfig::default()).await;
    let client = RpcClient::connect(server.addr, ClientConfig::default())
        .await
        .unwrap();
    client.invoke_oneway(request(ECHO, "fire")).unwrap();
    let binary = request(ECHO, "bin").with_serialize_type(SerializeType::RocketMq);
    let response = client.invoke(binary, WAIT).await.unwrap();
    assert_eq!(response.remark.as_deref(), Some("bin"));
    assert_eq!(service.calls(), 2);
}

#[tokio::test]
async fn unknown_codes_get_an_answer_not_a_hangup() {
    let (service, _events) = TestService::new();
    let server = TestServer::start(service, ServerConfig::default()).await;
    let client = RpcClient::connect(server.addr, ClientConfig::default())
        .await
        .unwrap();
    let response = client
        .invoke(RemotingCommand::request(4242, 0), WAIT)
        .await
        .unwrap();
    assert_eq!(
        response.response_code(),
        ResponseCode::RequestCodeNotSupported
    );
}

#[tokio::test]
async fn closing_the_client_disconnects_and_fails_pending_calls() {
    let (service, mut events) = TestService::new();
    let server = TestServer::start(service.clone(), ServerConfig::default()).await;
    let client = RpcClient::connect(server.addr, ClientConfig::default())
        .await
        .unwrap();
    let id = connected(&mut events).await;
    let pending = tokio::spawn({
        let client = client.clone();
        async move { client.invoke(request(SILENT, 0), WAIT).await }
    });
    // Pending for sure: the server has it (and never answers it).
    wait_until("the server receives the request", || service.calls() == 1).await;
    client.close();
    assert!(pending.await.unwrap().unwrap_err().is_closed());
    assert_eq!(
        disconnect_of(&mut events, id).await,
        DisconnectReason::Closed
    );
}
