//! The server's limits against peers that misbehave on purpose: frames
//! announced large and sent slowly, oversized headers, connections from one
//! address, answers never read.

use std::time::{Duration, Instant};

use crate::common::*;
use rmq_transport::ServerConfig;
use rmq_wire::{frame, ResponseCode};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

const WAIT: Duration = Duration::from_secs(2);

/// The encoded frame of an ECHO request numbered `n` with a body of `len` bytes.
fn echo_frame(n: i32, len: usize) -> Vec<u8> {
    let mut command = request(ECHO, n).with_body(vec![b'x'; len]);
    command.opaque = n;
    frame::encode_to_bytes(&command).to_vec()
}

#[tokio::test]
async fn a_large_frame_waits_for_budget_held_by_another() {
    let (service, _events) = TestService::new();
    let config = ServerConfig {
        frame_budget: 64 * 1024,
        ..ServerConfig::default()
    };
    let server = TestServer::start(service.clone(), config).await;
    let first = echo_frame(1, 60 * 1024);
    let second = echo_frame(2, 60 * 1024);

    // The first connection takes the whole budget and sends half its frame.
    // (Were the second to get the budget first, it would be answered at once
    // and the check below fail: the order cannot make this test pass.)
    let mut slow = TcpStream::connect(server.addr).await.unwrap();
    slow.write_all(&first[..first.len() / 2]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    // The second sends its whole frame, but it is not read: no budget. An
    // echo of a frame that was read comes back within milliseconds on
    // loopback; 300 ms without one means it was not read.
    let mut waiting = TcpStream::connect(server.addr).await.unwrap();
    waiting.write_all(&second).await.unwrap();
    assert!(
        read_frame(&mut waiting, Duration::from_millis(300))
            .await
            .is_none(),
        "answered without budget"
    );
    assert_eq!(service.calls(), 0);

    slow.write_all(&first[first.len() / 2..]).await.unwrap();
    let (_, answer) = read_frame(&mut slow, WAIT).await.expect("first answered");
    assert_eq!(answer.opaque, 1);
    let (_, answer) = read_frame(&mut waiting, WAIT)
        .await
        .expect("second answered once the budget was back");
    assert_eq!(answer.opaque, 2);
    assert_eq!(answer.body.map(|b| b.len()), Some(60 * 1024));
}

#[tokio::test]
async fn small_frames_need_no_budget() {
    let (service, _events) = TestService::new();
    let config = ServerConfig {
        frame_budget: 64 * 1024,
        ..ServerConfig::default()
    };
    let server = TestServer::start(service, config).await;
    let large = echo_frame(1, 60 * 1024);
    let mut hog = TcpStream::connect(server.addr).await.unwrap();
    hog.write_all(&large[..100]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    // The budget is held: another large frame is not read (an echo of one
    // that was read comes back within milliseconds; none in 300 ms).
    // Without this the small frame's answer would prove nothing.
    let mut probe = TcpStream::connect(server.addr).await.unwrap();
    probe.write_all(&echo_frame(2, 60 * 1024)).await.unwrap();
    assert!(
        read_frame(&mut probe, Duration::from_millis(300))
            .await
            .is_none(),
        "the hog did not take the budget"
    );

    let mut small = TcpStream::connect(server.addr).await.unwrap();
    small.write_all(&echo_frame(7, 100)).await.unwrap();
    let (_, answer) = read_frame(&mut small, WAIT).await.expect("answered");
    assert_eq!(answer.opaque, 7);
}

#[tokio::test]
async fn a_large_frame_that_does_not_arrive_in_time_closes_its_connection() {
    let (service, _events) = TestService::new();
    let config = ServerConfig {
        frame_budget: 64 * 1024,
        frame_timeout: Duration::from_millis(300),
        ..ServerConfig::default()
    };
    let server = TestServer::start(service, config).await;
    let large = echo_frame(1, 60 * 1024);
    let started = Instant::now();
    let mut trickle = TcpStream::connect(server.addr).await.unwrap();
    trickle.write_all(&large[..1000]).await.unwrap();
    // One waiting for the budget the trickling one holds times out as well.
    let mut waiting = TcpStream::connect(server.addr).await.unwrap();
    waiting.write_all(&large[..1000]).await.unwrap();
    assert!(closed_within(&mut trickle, WAIT).await, "slow sender kept");
    assert!(closed_within(&mut waiting, WAIT).await, "waiter kept");
    assert!(started.elapsed() >= Duration::from_millis(300));

    // The budget is back: a whole large frame is served.
    let mut prompt = TcpStream::connect(server.addr).await.unwrap();
    prompt.write_all(&large).await.unwrap();
    assert!(read_frame(&mut prompt, WAIT).await.is_some());
}

/// A header over the limit in a frame within the frame limit is answered
/// under its opaque, naming the limit and its longest field, in either
/// serialization, and the connection serves the next request; one whose
/// opaque cannot be read (a malformed header) still closes the connection.
#[tokio::test]
async fn an_oversized_header_is_answered_undecoded_and_the_connection_lives() {
    let (service, _events) = TestService::new();
    let config = ServerConfig {
        max_header_bytes: 1024,
        ..ServerConfig::default()
    };
    let server = TestServer::start(service.clone(), config).await;
    let mut raw = TcpStream::connect(server.addr).await.unwrap();
    for (serialize_type, opaque) in [
        (rmq_wire::SerializeType::Json, 11),
        (rmq_wire::SerializeType::RocketMq, 12),
    ] {
        let mut large = request(ECHO, 1)
            .with_ext("pad", "p".repeat(2000))
            .with_serialize_type(serialize_type);
        large.opaque = opaque;
        write_frame(&mut raw, &large).await;
        let (_, answer) = read_frame(&mut raw, WAIT).await.expect("answered");
        assert_eq!(answer.opaque, opaque);
        assert_eq!(answer.response_code(), ResponseCode::InvalidParameter);
        let remark = answer.remark.unwrap_or_default();
        assert!(
            remark.contains("maxHeaderBytes")
                && remark.contains("1024")
                && remark.contains("\"pad\""),
            "{remark}"
        );
    }
    assert_eq!(service.calls(), 0, "the service never saw them");
    let mut fine = request(ECHO, 2);
    fine.opaque = 13;
    write_frame(&mut raw, &fine).await;
    let (_, answer) = read_frame(&mut raw, WAIT).await.expect("answered");
    assert_eq!(
        (answer.opaque, answer.response_code()),
        (13, ResponseCode::Success)
    );

    // A JSON header that is not one: no opaque to answer under.
    let mut malformed = TcpStream::connect(server.addr).await.unwrap();
    let header = format!("{{\"code\":{}", "9".repeat(2000));
    let mut bytes = ((4 + header.len()) as u32).to_be_bytes().to_vec();
    bytes.extend_from_slice(&(header.len() as u32).to_be_bytes());
    bytes.extend_from_slice(header.as_bytes());
    malformed.write_all(&bytes).await.unwrap();
    assert!(closed_within(&mut malformed, WAIT).await);
    assert_eq!(service.calls(), 1);
}

#[tokio::test]
async fn an_oversized_header_field_is_refused_by_name_and_the_connection_lives() {
    let (service, _events) = TestService::new();
    let config = ServerConfig {
        max_header_field_bytes: 100,
        ..ServerConfig::default()
    };
    let server = TestServer::start(service.clone(), config).await;
    let mut raw = TcpStream::connect(server.addr).await.unwrap();
    let mut long = request(ECHO, 1).with_ext("brokerName", "b".repeat(101));
    long.opaque = 5;
    write_frame(&mut raw, &long).await;
    let (_, answer) = read_frame(&mut raw, WAIT).await.expect("answered");
    assert_eq!(answer.opaque, 5);
    assert_eq!(answer.response_code(), ResponseCode::InvalidParameter);
    let remark = answer.remark.unwrap_or_default();
    assert!(
        remark.contains("brokerName") && remark.contains("100"),
        "{remark}"
    );
    assert_eq!(service.calls(), 0, "the service never saw it");

    let mut fine = request(ECHO, 2).with_ext("brokerName", "b".repeat(100));
    fine.opaque = 6;
    write_frame(&mut raw, &fine).await;
    let (_, answer) = read_frame(&mut raw, WAIT).await.expect("answered");
    assert_eq!(answer.response_code(), ResponseCode::Success);
}

#[tokio::test]
async fn connections_from_one_address_are_limited() {
    let (service, mut events) = TestService::new();
    let config = ServerConfig {
        max_connections_per_ip: 2,
        ..ServerConfig::default()
    };
    let server = TestServer::start(service, config).await;
    let first = TcpStream::connect(server.addr).await.unwrap();
    let _second = TcpStream::connect(server.addr).await.unwrap();
    let first_id = connected(&mut events).await;
    let _ = connected(&mut events).await;
    let mut third = TcpStream::connect(server.addr).await.unwrap();
    assert!(closed_within(&mut third, WAIT).await);

    drop(first);
    let _ = disconnect_of(&mut events, first_id).await;
    let deadline = Instant::now() + WAIT;
    loop {
        let mut again = TcpStream::connect(server.addr).await.unwrap();
        write_frame(&mut again, &request(ECHO, 4)).await;
        if read_frame(&mut again, Duration::from_millis(200))
            .await
            .is_some()
        {
            break;
        }
        assert!(Instant::now() < deadline, "a freed slot was never reused");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_that_does_not_read_its_answers_is_not_read_either() {
    const REQUESTS: i32 = 600;
    const BODY: usize = 64 * 1024;
    let (service, _events) = TestService::new();
    let config = ServerConfig {
        response_budget_per_connection: 1 << 20,
        // Not the in-flight limit: the response budget is what must hold.
        max_in_flight: 100_000,
        ..ServerConfig::default()
    };
    let server = TestServer::start(service.clone(), config).await;
    let raw = TcpStream::connect(server.addr).await.unwrap();
    let (mut read_half, mut write_half) = raw.into_split();
    let writer = tokio::spawn(async move {
        for n in 0..REQUESTS {
            write_half.write_all(&echo_frame(n, BODY)).await.unwrap();
        }
        write_half
    });
    // Let the server take up what it will while nothing is read.
    let mut last = usize::MAX;
    while service.calls() != last {
        last = service.calls();
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    // Socket buffers hold some answers and requests; the server holds at
    // most its budget. 600 × 64 KiB answers (38 MiB) would all be queued
    // if it kept reading.
    assert!(
        last < REQUESTS as usize / 2,
        "{last} of {REQUESTS} requests taken up without the answers being read"
    );

    // Reading the answers lets every request through; none is lost.
    let reader = tokio::spawn(async move {
        let mut seen = 0;
        while seen < REQUESTS {
            let answer = read_from(&mut read_half).await;
            assert_eq!(answer, seen, "answers in order");
            seen += 1;
        }
    });
    tokio::time::timeout(Duration::from_secs(20), reader)
        .await
        .expect("every answer arrived")
        .unwrap();
    writer.await.unwrap();
    assert_eq!(service.calls(), REQUESTS as usize);
}

/// The opaque of the next frame on `stream`.
async fn read_from(stream: &mut tokio::net::tcp::OwnedReadHalf) -> i32 {
    use tokio::io::AsyncReadExt;
    let mut length = [0u8; 4];
    stream.read_exact(&mut length).await.unwrap();
    let mut rest = vec![0u8; u32::from_be_bytes(length) as usize];
    stream.read_exact(&mut rest).await.unwrap();
    let mut whole = length.to_vec();
    whole.extend_from_slice(&rest);
    frame::decode(whole.into()).unwrap().opaque
}
