//! Keys and certificates as OpenSSL makes them for Java's RocketMQ (files in
//! `fixtures/openssl`, made as its README says): encrypted PKCS#8 keys
//! (`tls.server.keyPassword`) and an X.509 v1 server certificate.

use std::path::PathBuf;
use std::time::Duration;

use rmq_testkit::pki::{path, props};
use rmq_transport::tls::{ServerTls, TlsClient, TlsSettings};
use rmq_transport::{ClientConfig, Reply, RpcClient, ServerConfig, Service};
use rmq_wire::{RemotingCommand, ResponseCode};
use tokio::net::TcpListener;

const PASSWORD: &str = "waymark-test";

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/openssl")
        .join(name)
}

fn server_settings(key: &str, password: Option<&str>) -> TlsSettings {
    let cert = fixture("server-v1.pem");
    let key = fixture(key);
    let mut pairs = vec![
        ("tls.server.mode", "enforcing"),
        ("tls.server.certPath", path(&cert)),
        ("tls.server.keyPath", path(&key)),
    ];
    if let Some(password) = password {
        pairs.push(("tls.server.keyPassword", password));
    }
    TlsSettings::from_properties_with(&props(&pairs), None).unwrap()
}

struct Echo;

impl Service for Echo {
    fn call(&self, _conn: &rmq_transport::ConnectionInfo, request: RemotingCommand) -> Reply {
        Reply::ready(RemotingCommand::response_to(
            &request,
            ResponseCode::Success,
        ))
    }
}

#[test]
fn encrypted_pkcs8_keys_from_openssl_are_decrypted() {
    for key in [
        "server-v1.key-aes256.pem",
        "server-v1.key-3des-sha1.pem",
        "server-v1.key-scrypt.pem",
    ] {
        let settings = server_settings(key, Some(PASSWORD));
        if let Err(error) = ServerTls::from_settings(&settings) {
            panic!("{key}: {error}");
        }
        let error = ServerTls::from_settings(&server_settings(key, None))
            .unwrap_err()
            .to_string();
        assert!(error.contains("set tls.server.keyPassword"), "{error}");
    }
    // (scrypt is slow in a debug build: one wrong password is enough.)
    let wrong = server_settings("server-v1.key-aes256.pem", Some("wrong"));
    let error = ServerTls::from_settings(&wrong).unwrap_err().to_string();
    assert!(
        error.starts_with("tls.server.keyPassword: does not decrypt"),
        "{error}"
    );
}

#[test]
fn a_pkcs12_pbe_key_is_refused_with_the_way_out() {
    let settings = server_settings("server-v1.key-pbes1.pem", Some(PASSWORD));
    let error = ServerTls::from_settings(&settings).unwrap_err().to_string();
    assert!(error.starts_with("tls.server.keyPath: "), "{error}");
    assert!(error.contains("-v2 aes-256-cbc"), "{error}");
}

#[tokio::test]
async fn a_v1_server_certificate_is_served_but_not_verified_by_waymark() {
    let settings = server_settings("server-v1.key-aes256.pem", Some(PASSWORD));
    let (tls, _) = ServerTls::from_settings(&settings).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = ServerConfig {
        tls,
        ..ServerConfig::default()
    };
    tokio::spawn(rmq_transport::run(
        listener,
        Echo,
        config,
        std::future::pending(),
    ));

    let client = |pairs: &[(&str, &str)]| {
        let settings = TlsSettings::from_properties_with(&props(pairs), None).unwrap();
        let config = ClientConfig {
            tls: Some(TlsClient::from_settings(&settings).unwrap().0),
            ..ClientConfig::default()
        };
        RpcClient::connect(addr, config)
    };
    // As a Java client does by default: any certificate (its handshake
    // signature still checked, with an RSA key, in both versions).
    for protocol in ["TLSv1.2", "TLSv1.3"] {
        let trusting = client(&[
            ("tls.client.authServer", "false"),
            ("tls.protocols", protocol),
        ])
        .await
        .unwrap();
        let response = trusting
            .invoke(RemotingCommand::request(1, 0), Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(response.code, 0, "{protocol}");
    }
    // Verified: webpki takes v3 certificates only, and the error says so.
    let own = fixture("server-v1.pem");
    let error = client(&[("tls.client.trustCertPath", path(&own))])
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("X.509 v1 certificate"), "{error}");
}
