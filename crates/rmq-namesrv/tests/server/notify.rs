//! NOTIFY_MIN_BROKER_ID_CHANGE reaches a listening fake broker (nameserver.md
//! §2.22, §5.4, §7.4) when `notifyMinBrokerIdChanged=true`, and nothing is
//! sent when it is off.

use std::time::Duration;

use bytes::Bytes;
use rmq_wire::{frame, RemotingCommand, RequestCode as C, ResponseCode as R};
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;

use crate::common::*;

/// Accepts one connection and reads one frame from it.
async fn receive(listener: &TcpListener, wait: Duration) -> Option<RemotingCommand> {
    let read = async {
        let (mut stream, _) = listener.accept().await.ok()?;
        let mut len = [0u8; 4];
        stream.read_exact(&mut len).await.ok()?;
        let mut rest = vec![0u8; u32::from_be_bytes(len) as usize];
        stream.read_exact(&mut rest).await.ok()?;
        let mut bytes = len.to_vec();
        bytes.extend_from_slice(&rest);
        frame::decode(Bytes::from(bytes)).ok()
    };
    tokio::time::timeout(wait, read).await.ok().flatten()
}

fn acting(reg: Register) -> Register {
    reg.ext("enableActingMaster", "true")
}

#[tokio::test]
async fn registration_and_unregistration_notify_the_slave() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[("notifyMinBrokerIdChanged", "true")]);
    let fake = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let slave_addr = fake.local_addr().unwrap().to_string();
    let conn = server.client().await;

    let slave = acting(Register::new(
        "broker-a",
        &slave_addr,
        1,
        &["TopicTest", "Other"],
    ));
    assert_code(
        &conn.invoke(slave.request(), TIMEOUT).await.unwrap(),
        R::Success,
    );
    let mut master = acting(Register::new(
        "broker-a",
        "127.0.0.1:10911",
        0,
        &["TopicTest", "Other"],
    ));
    master.ha = "127.0.0.1:10912".into();
    assert_code(
        &conn.invoke(master.request(), TIMEOUT).await.unwrap(),
        R::Success,
    );

    let notify = receive(&fake, TIMEOUT)
        .await
        .expect("notification on registration");
    assert_eq!(notify.request_code(), C::NotifyMinBrokerIdChange);
    assert!(notify.is_oneway() && !notify.is_response());
    assert_eq!(
        notify.ext_fields,
        Some(
            [
                ("minBrokerId", "0"),
                ("minBrokerAddr", "127.0.0.1:10911"),
                ("haBrokerAddr", "127.0.0.1:10912")
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
        )
    );

    let unregister = request(
        C::UnregisterBroker,
        &[
            ("brokerName", "broker-a"),
            ("brokerAddr", "127.0.0.1:10911"),
            ("clusterName", "DefaultCluster"),
            ("brokerId", "0"),
        ],
    );
    assert_code(&conn.invoke(unregister, TIMEOUT).await.unwrap(), R::Success);
    let notify = receive(&fake, TIMEOUT)
        .await
        .expect("notification on unregistration");
    assert_eq!(notify.request_code(), C::NotifyMinBrokerIdChange);
    assert_eq!(
        notify.ext_fields,
        Some(
            [
                ("minBrokerId", "1"),
                ("minBrokerAddr", slave_addr.as_str()),
                ("offlineBrokerAddr", "127.0.0.1:10911")
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
        )
    );
}

#[tokio::test]
async fn nothing_is_sent_when_disabled() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let fake = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let slave_addr = fake.local_addr().unwrap().to_string();
    let conn = server.client().await;
    let slave = acting(Register::new(
        "broker-a",
        &slave_addr,
        1,
        &["TopicTest", "Other"],
    ));
    conn.invoke(slave.request(), TIMEOUT).await.unwrap();
    let master = acting(Register::new(
        "broker-a",
        "127.0.0.1:10911",
        0,
        &["TopicTest", "Other"],
    ));
    conn.invoke(master.request(), TIMEOUT).await.unwrap();
    assert!(receive(&fake, Duration::from_millis(500)).await.is_none());
}

#[tokio::test]
async fn notifications_use_the_servers_serialize_type() {
    let dir = TempDir::new();
    let server = Server::start_with_env(
        &dir,
        &[("notifyMinBrokerIdChanged", "true")],
        &[("ROCKETMQ_SERIALIZE_TYPE", "ROCKETMQ")],
    );
    let fake = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let slave_addr = fake.local_addr().unwrap().to_string();
    let conn = server.client().await;
    let slave = Register::new("broker-a", &slave_addr, 1, &["TopicTest", "Other"]);
    conn.invoke(slave.request(), TIMEOUT).await.unwrap();
    let master = Register::new("broker-a", "127.0.0.1:10911", 0, &["TopicTest", "Other"]);
    conn.invoke(master.request(), TIMEOUT).await.unwrap();
    let notify = receive(&fake, TIMEOUT).await.expect("notification");
    assert_eq!(notify.serialize_type, rmq_wire::SerializeType::RocketMq);
    assert_eq!(notify.ext("minBrokerAddr"), Some("127.0.0.1:10911"));
}
