//! A broker registering with a NameServer that has authentication on
//! (`authenticationEnabled=true`) and, in the last test, TLS enforced: the
//! 5.3+ broker's `innerClientAuthenticationCredentials` sign every request,
//! `useTLS` encrypts every connection. The real `rmq-namesrv` binary:
//! Waymark's only, since the Java NameServer authenticates nothing (its only
//! server hook, `ZoneRouteRPCHook`, ignores `AccessKey` and `Signature`).

use std::path::Path;
use std::time::Duration;

use crate::common::{cluster_info, eventually, master, registrar, route};
use rmq_broker_client::security::{credentials_from_json, tls_from_properties};
use rmq_broker_client::{BrokerConfig, NsError};
use rmq_protocol::headers::GetRouteInfoRequestHeader;
use rmq_testkit::pki::{path, props, Pki};
use rmq_testkit::Namesrv;
use rmq_transport::{ClientConfig, ClientError, RpcClient};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};

const BROKER_KEY: &str = "broker-key-1";
const BROKER_SECRET: &str = "broker-secret-1";

/// A Waymark NameServer with authentication on and one broker account,
/// plus `options`; the accounts file lives in `pki`'s directory.
fn secured_namesrv(pki: &Pki, options: &[String]) -> Namesrv {
    let accounts = pki.dir.join("accounts.yml");
    std::fs::write(
        &accounts,
        format!(
            "accounts:\n  - accessKey: {BROKER_KEY}\n    secretKey: {BROKER_SECRET}\n    admin: false\n"
        ),
    )
    .unwrap();
    let mut all = vec![
        "authenticationEnabled=true".to_owned(),
        format!("authenticationAccountsFile={}", accounts.display()),
    ];
    all.extend_from_slice(options);
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    Namesrv::waymark(&all)
}

/// The broker's credentials, from the JSON a 5.3+ broker.conf holds.
fn signing(mut config: BrokerConfig) -> BrokerConfig {
    config.inner_client_authentication_credentials = credentials_from_json(&format!(
        r#"{{"accessKey":"{BROKER_KEY}","secretKey":"{BROKER_SECRET}"}}"#
    ))
    .unwrap();
    config
}

/// TLS as a broker.conf with `useTLS=true` and a trust file sets it.
fn over_tls(mut config: BrokerConfig, ca: &Path) -> BrokerConfig {
    let properties = props(&[("useTLS", "true"), ("tls.client.trustCertPath", path(ca))]);
    let (tls, warnings) = tls_from_properties(&properties).unwrap().unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    config.tls = Some(tls);
    config
}

#[tokio::test]
async fn registration_is_refused_unsigned_and_accepted_signed() {
    let pki = Pki::new("broker-auth");
    let ns = secured_namesrv(&pki, &[]);

    let unsigned = registrar(master("broker-u", 45911), "auth-t", 2, &[&ns.addr]);
    let report = unsigned.register_all(true, false, true).await;
    assert!(!report.is_success(), "{report:?}");
    let (addr, error) = report.failures().next().expect("one failure");
    assert_eq!(addr, ns.addr);
    assert_eq!(error.code(), Some(16), "{error}");
    let shown = error.to_string();
    assert!(
        shown.contains("NO_PERMISSION") && shown.contains("request code 103"),
        "{shown}"
    );
    assert!(route(&ns.addr, "auth-t0").await.is_none());

    let signed = registrar(signing(master("broker-s", 46911)), "auth-t", 2, &[&ns.addr]);
    let report = signed.register_all(true, false, true).await;
    assert!(report.is_success(), "{report:?}");
    assert!(route(&ns.addr, "auth-t0").await.is_some());

    // Unregistration is signed the same way, and refused without it.
    let refused = unsigned.unregister_all().await;
    assert!(
        matches!(refused[0].outcome, Err(NsError::Rejected { code: 16, .. })),
        "{refused:?}"
    );
    let results = signed.unregister_all().await;
    assert!(results.iter().all(|r| r.outcome.is_ok()), "{results:?}");
    let addr = ns.addr.clone();
    let gone = eventually(Duration::from_secs(5), || {
        let addr = addr.clone();
        async move {
            !cluster_info(&addr)
                .await
                .broker_addr_table
                .contains_key("broker-s")
        }
    })
    .await;
    assert!(gone, "the signed unregistration took effect");
}

#[tokio::test]
async fn a_wrong_secret_is_refused_naming_the_reason() {
    let pki = Pki::new("broker-auth-wrong");
    let ns = secured_namesrv(&pki, &[]);
    let mut config = master("broker-w", 47911);
    config.inner_client_authentication_credentials = credentials_from_json(&format!(
        r#"{{"accessKey":"{BROKER_KEY}","secretKey":"not-the-secret"}}"#
    ))
    .unwrap();
    let report = registrar(config, "wrong-t", 2, &[&ns.addr])
        .register_all(true, false, true)
        .await;
    let (_, error) = report.failures().next().expect("refused");
    let shown = error.to_string();
    assert!(
        shown.contains("NO_PERMISSION") && shown.contains("check signature failed"),
        "{shown}"
    );
    assert!(!shown.contains("not-the-secret"), "{shown}");
}

#[tokio::test]
async fn registration_over_tls_with_an_enforcing_name_server() {
    let pki = Pki::new("broker-tls");
    let cert = pki.issue("server", "waymark-ns", &[]);
    let ns = secured_namesrv(
        &pki,
        &[
            "tls.server.mode=enforcing".to_owned(),
            format!("tls.server.certPath={}", cert.cert.display()),
            format!("tls.server.keyPath={}", cert.key.display()),
        ],
    );

    let plain = registrar(signing(master("broker-p", 48911)), "tls-t", 2, &[&ns.addr]);
    let report = plain.register_all(true, false, true).await;
    let (_, error) = report.failures().next().expect("a plain connection fails");
    assert!(
        matches!(error, NsError::Transport(ClientError::Closed { .. })),
        "enforcing closes plain connections: {error}"
    );

    let encrypted = registrar(
        over_tls(signing(master("broker-e", 49911)), &pki.ca_path()),
        "tls-t",
        2,
        &[&ns.addr],
    );
    let report = encrypted.register_all(true, false, true).await;
    assert!(report.is_success(), "{report:?}");

    // Encrypted but unsigned: the connection is fine, the registration not.
    let anonymous = registrar(
        over_tls(master("broker-a", 50911), &pki.ca_path()),
        "tls-t",
        2,
        &[&ns.addr],
    );
    let report = anonymous.register_all(true, false, true).await;
    let (_, error) = report.failures().next().expect("refused");
    assert_eq!(error.code(), Some(16), "{error}");

    // The route, read over TLS, names the encrypted broker only.
    let tls = encrypted.config().tls.clone();
    let client = RpcClient::connect(
        ns.addr.as_str(),
        ClientConfig {
            tls,
            ..ClientConfig::default()
        },
    )
    .await
    .unwrap();
    let request = RemotingCommand::request(RequestCode::GetRouteInfoByTopic, 0).with_header(
        &GetRouteInfoRequestHeader {
            topic: "tls-t0".into(),
            ..Default::default()
        },
    );
    let response = client
        .invoke(request, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(response.response_code(), ResponseCode::Success);
    let body = String::from_utf8_lossy(response.body.as_deref().unwrap_or_default()).into_owned();
    assert!(
        body.contains("broker-e") && !body.contains("broker-a"),
        "{body}"
    );
}
