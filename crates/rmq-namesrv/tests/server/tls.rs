//! TLS on the NameServer's port, configured with Java's `tls.*` keys: the
//! real binary, real handshakes, certificates made by the test.

use std::time::Duration;

use rmq_testkit::pki::{path, props, Pki};
use rmq_transport::tls::{TlsClient, TlsSettings};
use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::ResponseCode;

use crate::common::*;

/// A client that trusts `ca` (and checks the chain, never the name).
fn trusting(ca: &std::path::Path) -> ClientConfig {
    let settings =
        TlsSettings::from_properties_with(&props(&[("tls.client.trustCertPath", path(ca))]), None)
            .unwrap();
    let (tls, _) = TlsClient::from_settings(&settings).unwrap();
    ClientConfig {
        tls: Some(tls),
        ..ClientConfig::default()
    }
}

async fn route_query_over(server: &Server, config: ClientConfig) -> Result<ResponseCode, String> {
    let client = RpcClient::connect(server.addr, config)
        .await
        .map_err(|e| e.to_string())?;
    let response = client
        .invoke(route_request("TopicA"), TIMEOUT)
        .await
        .map_err(|e| e.to_string())?;
    Ok(response.response_code())
}

#[tokio::test]
async fn enforcing_serves_tls_clients_and_closes_plain_ones() {
    let dir = TempDir::new();
    let pki = Pki::new("ns-enforcing");
    let cert = pki.issue("server", "waymark-ns", &["localhost"]);
    let server = Server::start(
        &dir,
        &[
            ("tls.server.mode", "enforcing"),
            ("tls.server.certPath", path(&cert.cert)),
            ("tls.server.keyPath", path(&cert.key)),
        ],
    );
    assert_eq!(
        route_query_over(&server, trusting(&pki.ca_path())).await,
        Ok(ResponseCode::TopicNotExist)
    );
    let mut plain = Raw::connect(server.addr).await;
    plain.send_command(&route_request("TopicA")).await;
    assert!(
        plain.closed_by_peer(Duration::from_secs(5)).await,
        "a plain connection must be closed in enforcing mode"
    );
    let log = read(&dir.path("server.log"));
    assert!(log.contains("TLS enforcing"), "{log}");
}

#[tokio::test]
async fn permissive_serves_tls_and_plain_on_one_port() {
    let dir = TempDir::new();
    let pki = Pki::new("ns-permissive");
    let cert = pki.issue("server", "waymark-ns", &[]);
    let server = Server::start(
        &dir,
        &[
            ("tls.server.mode", "permissive"),
            ("tls.server.certPath", path(&cert.cert)),
            ("tls.server.keyPath", path(&cert.key)),
        ],
    );
    assert_eq!(
        route_query_over(&server, trusting(&pki.ca_path())).await,
        Ok(ResponseCode::TopicNotExist)
    );
    assert_eq!(
        server.call(route_request("TopicA")).await.response_code(),
        ResponseCode::TopicNotExist
    );
}

#[tokio::test]
async fn a_replaced_certificate_is_served_without_a_restart() {
    let dir = TempDir::new();
    let (old_ca, new_ca) = (Pki::new("ns-old-ca"), Pki::new("ns-new-ca"));
    let cert = old_ca.issue("server", "waymark-ns", &[]);
    let server = Server::start(
        &dir,
        &[
            ("tls.server.mode", "enforcing"),
            ("tls.server.certPath", path(&cert.cert)),
            ("tls.server.keyPath", path(&cert.key)),
        ],
    );
    assert!(route_query_over(&server, trusting(&new_ca.ca_path()))
        .await
        .is_err());
    new_ca.reissue(&cert, "waymark-ns");
    let reloaded = eventually(Duration::from_secs(10), || async {
        route_query_over(&server, trusting(&new_ca.ca_path()))
            .await
            .is_ok()
    })
    .await;
    assert!(reloaded, "the new certificate was never served");
    assert!(read(&dir.path("server.log")).contains("TLS certificate reloaded"));
}

#[test]
fn a_tls_setting_that_cannot_work_stops_the_start_naming_the_key() {
    let dir = TempDir::new();
    let stderr = Server::refused_start(&dir, &[("tls.server.mode", "enforcing")]);
    assert!(stderr.contains("tls.server"), "{stderr}");
}

#[tokio::test]
async fn update_namesrv_config_may_not_touch_security_keys() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    for (key, value) in [
        ("tls.server.mode", "disabled"),
        ("authenticationEnabled", "false"),
        ("authenticationAccountsFile", "/tmp/mine.yml"),
        ("tls.someFutureKey", "x"),
    ] {
        let mut request =
            rmq_wire::RemotingCommand::request(rmq_wire::RequestCode::UpdateNamesrvConfig, 0);
        request.body = Some(format!("{key}={value}\n").into_bytes().into());
        let response = server.call(request).await;
        assert_ne!(response.response_code(), ResponseCode::Success, "{key}");
    }
    let saved = std::fs::read_to_string(dir.path("namesrv.properties")).unwrap_or_default();
    assert!(
        !saved.contains("tls.") && !saved.contains("authentication"),
        "{saved}"
    );
}
