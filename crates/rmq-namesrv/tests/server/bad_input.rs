//! Bad input over TCP: a malformed frame closes only its own connection, a
//! malformed header or body is answered with SYSTEM_ERROR naming the problem,
//! one-way requests and stray responses are never answered, and the server
//! keeps serving everyone else throughout.

use std::time::Duration;

use rmq_wire::{RemotingCommand, RequestCode as C, ResponseCode as R};

use crate::common::*;

#[tokio::test]
async fn malformed_frames_close_only_their_connection() {
    let dir = TempDir::new();
    let mut server = Server::start(&dir, &[]);
    let bystander = server.client().await;

    let header = br#"{"code":106,"flag":0,"opaque":1}"#;
    let mut unknown_type = json_frame(std::str::from_utf8(header).unwrap(), b"");
    unknown_type[4] = 7;
    let mut header_too_long = json_frame(std::str::from_utf8(header).unwrap(), b"");
    header_too_long[7] = 0xff;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("serialize type 7", unknown_type),
        ("header longer than the frame", header_too_long),
        ("length above 16 MiB", 16_777_213u32.to_be_bytes().to_vec()),
        ("length too short for a header", vec![0, 0, 0, 2, 0, 0]),
        ("malformed JSON header", json_frame(r#"{"code":"#, b"")),
        (
            "bad binary header",
            vec![0, 0, 0, 8, 1, 0, 0, 4, 0, 0, 0, 0],
        ),
    ];
    for (what, bytes) in cases {
        let mut raw = Raw::connect(server.addr).await;
        raw.send(&bytes).await;
        assert!(
            raw.closed_by_peer(TIMEOUT).await,
            "{what}: connection closed"
        );
        let response = bystander
            .invoke(request(C::GetBrokerClusterInfo, &[]), TIMEOUT)
            .await
            .unwrap_or_else(|e| panic!("{what}: bystander broken: {e}"));
        assert_code(&response, R::Success);
    }
    assert!(server.is_running());
}

#[tokio::test]
async fn malformed_headers_and_bodies_are_system_errors() {
    let dir = TempDir::new();
    let mut server = Server::start(&dir, &[]);
    let client = server.client().await;

    let mut reg = Register::new("broker-a", "127.0.0.1:10911", 0, &["a", "b"]).request();
    reg.ext_fields
        .as_mut()
        .unwrap()
        .insert("brokerId".into(), "abc".into());
    let response = client.invoke(reg, TIMEOUT).await.unwrap();
    assert_code(&response, R::SystemError);
    let remark = response.remark.unwrap();
    assert!(
        remark.contains("brokerId") && remark.contains("abc"),
        "{remark}"
    );

    for missing in ["brokerName", "clusterName"] {
        let mut reg = Register::new("broker-a", "127.0.0.1:10911", 0, &["a", "b"]).request();
        reg.ext_fields.as_mut().unwrap().remove(missing);
        let response = client.invoke(reg, TIMEOUT).await.unwrap();
        assert_code(&response, R::SystemError);
        assert!(response.remark.unwrap().contains(missing));
    }

    let garbage: Vec<u8> = (0..1_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let reg = Register::new("broker-a", "127.0.0.1:10911", 0, &[]);
    let response = client
        .invoke(reg.request_with(garbage.clone()), TIMEOUT)
        .await
        .unwrap();
    assert_code(&response, R::SystemError);
    assert!(response
        .remark
        .unwrap()
        .starts_with("Failed to decode RegisterBrokerBody"));
    let mut compressed = reg.request_with(garbage.clone());
    compressed
        .ext_fields
        .as_mut()
        .unwrap()
        .insert("compressed".into(), "true".into());
    assert_code(
        &client.invoke(compressed, TIMEOUT).await.unwrap(),
        R::SystemError,
    );

    let topic = request(C::RegisterTopicInNamesrv, &[("topic", "T")]).with_body(garbage);
    assert_code(
        &client.invoke(topic, TIMEOUT).await.unwrap(),
        R::SystemError,
    );
    let query = request(
        C::QueryDataVersion,
        &[
            ("brokerName", "b"),
            ("brokerAddr", "a"),
            ("clusterName", "c"),
            ("brokerId", "0"),
        ],
    )
    .with_body("][");
    assert_code(
        &client.invoke(query, TIMEOUT).await.unwrap(),
        R::SystemError,
    );
    let bad_kv = request(C::UpdateNamesrvConfig, &[]).with_body(vec![0xff, 0xfe, b'=', 0x00]);
    let response = client.invoke(bad_kv, TIMEOUT).await.unwrap();
    // Not UTF-8 (read as U+FFFD) and a NUL value: refused, naming the problem.
    assert_code(&response, R::InvalidParameter);
    assert!(response
        .remark
        .unwrap()
        .contains("control character U+0000"));

    assert_code(
        &client
            .invoke(request(C::GetBrokerClusterInfo, &[]), TIMEOUT)
            .await
            .unwrap(),
        R::Success,
    );
    assert!(server.is_running());
}

#[tokio::test]
async fn one_way_requests_and_stray_responses_get_no_answer() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let mut raw = Raw::connect(server.addr).await;
    let mut bad_crc = Register::new("broker-a", "127.0.0.1:10911", 0, &["a", "b"]).request();
    bad_crc
        .ext_fields
        .as_mut()
        .unwrap()
        .insert("bodyCrc32".into(), "1".into());
    let one_way: Vec<RemotingCommand> = vec![
        request(C::Unknown(99_999), &[]),
        request(C::GetRouteInfoByTopic, &[("topic", "missing")]),
        request(C::GetBrokerClusterInfo, &[]),
        bad_crc,
        request(
            C::BrokerHeartbeat,
            &[
                ("clusterName", "DefaultCluster"),
                ("brokerAddr", "127.0.0.1:10911"),
                ("brokerName", "broker-a"),
            ],
        ),
    ];
    for (i, command) in one_way.into_iter().enumerate() {
        let mut command = command.oneway();
        command.opaque = 100 + i as i32;
        raw.send_command(&command).await;
    }
    let mut stray =
        RemotingCommand::response_to(&request(C::GetBrokerClusterInfo, &[]), R::Success);
    stray.opaque = 200;
    raw.send_command(&stray).await;
    let mut two_way = request(C::GetBrokerClusterInfo, &[]);
    two_way.opaque = 77;
    raw.send_command(&two_way).await;

    let answer = raw.read_command(TIMEOUT).await.expect("the two-way answer");
    assert_eq!((answer.opaque, answer.is_response()), (77, true));
    assert_code(&answer, R::Success);
    // Waited 300 ms past the two-way answer: the one-way requests came
    // before it, and even the registration among them (on the registration
    // pool, idle here) is done within milliseconds, so an answer to any of
    // them would have been sent by then.
    assert!(
        raw.read_frame(Duration::from_millis(300)).await.is_none(),
        "nothing else"
    );
}
