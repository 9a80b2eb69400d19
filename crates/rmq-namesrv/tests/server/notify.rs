//! NOTIFY_MIN_BROKER_ID_CHANGE reaches a listening fake broker when
//! `notifyMinBrokerIdChanged=true` (a registration that lowers its group's
//! smallest id, an acting-master group losing it), and nothing is sent when
//! it is off.

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
    // Waited 500 ms: with notifyMinBrokerIdChanged=true the same two
    // registrations' notice is on its way as the answer is sent (its
    // connection gives up after 300 ms), so one would have arrived by then.
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

/// A fake broker that serves TLS only (enforcing) and passes on every
/// request it receives.
async fn tls_only_broker(
    pki: &rmq_testkit::pki::Pki,
) -> (
    String,
    tokio::sync::mpsc::UnboundedReceiver<RemotingCommand>,
) {
    use rmq_testkit::pki::{path, props};
    use rmq_transport::tls::{ServerTls, TlsSettings};
    use rmq_transport::{ConnectionInfo, Reply, ServerConfig, Service};

    struct Inbox(tokio::sync::mpsc::UnboundedSender<RemotingCommand>);
    impl Service for Inbox {
        fn call(&self, _conn: &ConnectionInfo, request: RemotingCommand) -> Reply {
            let _ = self.0.send(request);
            Reply::none()
        }
    }

    let cert = pki.issue("broker", "fake-broker", &[]);
    let settings = TlsSettings::from_properties_with(
        &props(&[
            ("tls.server.mode", "enforcing"),
            ("tls.server.certPath", path(&cert.cert)),
            ("tls.server.keyPath", path(&cert.key)),
        ]),
        None,
    )
    .unwrap();
    let (tls, _) = ServerTls::from_settings(&settings).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let config = ServerConfig {
        tls,
        ..ServerConfig::default()
    };
    tokio::spawn(rmq_transport::run(
        listener,
        Inbox(tx),
        config,
        std::future::pending(),
    ));
    (addr, rx)
}

/// In enforcing mode the NameServer's own connections use TLS too (Java's
/// `NettyClientConfig`): a broker that takes only TLS still hears of its
/// new master. Without a way to trust the broker's certificate the start-up
/// log says the notices stay plain, and the broker hears nothing.
#[tokio::test]
async fn an_enforcing_nameserver_notifies_over_tls() {
    use rmq_testkit::pki::{path, Pki};
    use rmq_transport::tls::{TlsClient, TlsSettings};
    use rmq_transport::{ClientConfig, RpcClient};

    let pki = Pki::new("ns-notify");
    let ns_cert = pki.issue("server", "waymark-ns", &[]);
    let ca = pki.ca_path();
    for trusted in [true, false] {
        let (broker_addr, mut inbox) = tls_only_broker(&pki).await;
        let dir = TempDir::new();
        let mut sets = vec![
            ("notifyMinBrokerIdChanged", "true"),
            ("tls.server.mode", "enforcing"),
            ("tls.server.certPath", path(&ns_cert.cert)),
            ("tls.server.keyPath", path(&ns_cert.key)),
        ];
        if trusted {
            sets.push(("tls.client.trustCertPath", path(&ca)));
        }
        let server = Server::start(&dir, &sets);
        let settings = TlsSettings::from_properties_with(
            &rmq_testkit::pki::props(&[("tls.client.trustCertPath", path(&ca))]),
            None,
        )
        .unwrap();
        let (tls, _) = TlsClient::from_settings(&settings).unwrap();
        let conn = RpcClient::connect(
            server.addr,
            ClientConfig {
                tls: Some(tls),
                ..ClientConfig::default()
            },
        )
        .await
        .unwrap();
        let slave = acting(Register::new(
            "broker-a",
            &broker_addr,
            1,
            &["TopicTest", "Other"],
        ));
        assert_code(
            &conn.invoke(slave.request(), TIMEOUT).await.unwrap(),
            R::Success,
        );
        let master = acting(Register::new(
            "broker-a",
            "127.0.0.1:10911",
            0,
            &["TopicTest", "Other"],
        ));
        assert_code(
            &conn.invoke(master.request(), TIMEOUT).await.unwrap(),
            R::Success,
        );

        let wait = if trusted {
            TIMEOUT
        } else {
            Duration::from_secs(2)
        };
        let notice = tokio::time::timeout(wait, inbox.recv())
            .await
            .ok()
            .flatten();
        let log = read(&dir.path("server.log"));
        if trusted {
            let notice = notice.expect("a notice over TLS");
            assert_eq!(notice.request_code(), C::NotifyMinBrokerIdChange);
            assert_eq!(notice.ext("minBrokerAddr"), Some("127.0.0.1:10911"));
            assert!(log.contains("use TLS"), "{log}");
        } else {
            assert!(
                notice.is_none(),
                "a plain notice cannot reach a TLS-only broker"
            );
            assert!(log.contains("stay plain"), "{log}");
        }
    }
}
