//! Route lookups over TLS with a signing client: against the real
//! `rmq-namesrv` with TLS enforced and authentication on (a broker must sign
//! its registration; route reads stay open), and against an in-process
//! server that checks every signature, because no NameServer checks the
//! signature of a route read (route reads are open by design: most clients
//! never sign, docs/security.md)
//! and this is how the client's signing is seen at all.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::common::{self, names, register_over, Namesrv};
use rmq_auth::signature::{verify_received, ACCESS_KEY, SIGNATURE};
use rmq_auth::Credentials;
use rmq_protocol::{BrokerData, Dialect, JavaJson, QueueData, TopicRouteData};
use rmq_route_client::{RouteClient, RouteClientConfig, RouteError};
use rmq_testkit::pki::{path, props, Pki};
use rmq_transport::tls::{TlsClient, TlsSettings};
use rmq_transport::{ClientConfig, ClientError, ConnectionInfo, Reply, ServerConfig, Service};
use rmq_wire::{RemotingCommand, ResponseCode};

const NO_POLL: Duration = Duration::from_secs(3600);
const BROKER_KEY: &str = "broker-key-1";
const BROKER_SECRET: &str = "broker-secret-1";
const CLIENT_KEY: &str = "client-key-1";
const CLIENT_SECRET: &str = "client-secret-1";

/// A client that checks the server's chain against `ca`.
fn trusting(ca: &std::path::Path) -> TlsClient {
    let properties = props(&[("tls.client.trustCertPath", path(ca))]);
    let settings = TlsSettings::from_properties_with(&properties, None).unwrap();
    TlsClient::from_settings(&settings).unwrap().0
}

fn route_client(addr: &str, tls: Option<TlsClient>, signed: bool) -> RouteClient {
    let mut config = common::config(&[addr], NO_POLL);
    config.tls = tls;
    config.credentials = signed.then(|| Credentials::new(CLIENT_KEY, CLIENT_SECRET));
    RouteClient::new(config)
}

#[tokio::test]
async fn a_signed_registration_is_seen_over_tls() -> anyhow::Result<()> {
    let pki = Pki::new("route-client-tls");
    let cert = pki.issue("server", "waymark-ns", &[]);
    let accounts = pki.dir.join("accounts.yml");
    std::fs::write(
        &accounts,
        format!(
            "accounts:\n  - accessKey: {BROKER_KEY}\n    secretKey: {BROKER_SECRET}\n  - accessKey: {CLIENT_KEY}\n    secretKey: {CLIENT_SECRET}\n"
        ),
    )?;
    // Waymark's: the Java NameServer authenticates nothing.
    let ns = Namesrv::waymark(&[
        "authenticationEnabled=true",
        &format!("authenticationAccountsFile={}", accounts.display()),
        "tls.server.mode=enforcing",
        &format!("tls.server.certPath={}", cert.cert.display()),
        &format!("tls.server.keyPath={}", cert.key.display()),
    ]);
    let tls = trusting(&pki.ca_path());
    let topics = [("TopicA", 4, 4, 6)];

    let unsigned = ClientConfig {
        tls: Some(tls.clone()),
        ..ClientConfig::default()
    };
    let refused = register_over(&ns.addr, unsigned, "broker-x", "127.0.0.1:10921", &topics)
        .await
        .err()
        .expect("an unsigned registration is refused");
    assert!(refused.to_string().contains("code 16"), "{refused:#}");
    let signed = ClientConfig {
        tls: Some(tls.clone()),
        request_hook: Some(Arc::new(Credentials::new(BROKER_KEY, BROKER_SECRET))),
        ..ClientConfig::default()
    };
    let _broker = register_over(&ns.addr, signed, "broker-a", "127.0.0.1:10911", &topics).await?;

    let client = route_client(&ns.addr, Some(tls), true);
    assert!(client.update_route("TopicA").await?, "first route");
    let view = client.route("TopicA").expect("cached");
    assert_eq!(
        names(&view.publish.queues),
        ["broker-a:0", "broker-a:1", "broker-a:2", "broker-a:3"]
    );

    // Plain to an enforcing NameServer: the connection is closed unanswered.
    let plain = route_client(&ns.addr, None, true);
    let error = plain.fetch_route("TopicA").await.unwrap_err();
    assert!(error.is_transport(), "{error}");

    // TLS trusting another CA: the handshake fails, naming it.
    let stranger = Pki::new("route-client-other-ca");
    let mistrusting = route_client(&ns.addr, Some(trusting(&stranger.ca_path())), true);
    let error = mistrusting.fetch_route("TopicA").await.unwrap_err();
    assert!(
        matches!(&error, RouteError::Transport(ClientError::Connect { .. }))
            && error.to_string().contains("TLS handshake failed"),
        "{error}"
    );
    Ok(())
}

/// Answers a route to requests whose `Signature` verifies under
/// [`CLIENT_SECRET`], NO_PERMISSION to every other.
#[derive(Default)]
struct SignatureChecker {
    verified: AtomicUsize,
}

impl Service for SignatureChecker {
    fn call(&self, _conn: &ConnectionInfo, request: RemotingCommand) -> Reply {
        let ext = request.ext_fields.clone().unwrap_or_default();
        let verified = ext.get(ACCESS_KEY).map(String::as_str) == Some(CLIENT_KEY)
            && ext.get(SIGNATURE).is_some_and(|claimed| {
                verify_received(
                    CLIENT_SECRET,
                    &ext,
                    request.body.as_deref(),
                    request.version,
                    claimed,
                )
            });
        if !verified {
            return Reply::ready(
                RemotingCommand::response_to(&request, ResponseCode::NoPermission)
                    .with_remark("check signature failed."),
            );
        }
        self.verified.fetch_add(1, Ordering::SeqCst);
        let route = TopicRouteData {
            broker_datas: vec![BrokerData {
                broker_addrs: [(0, "127.0.0.1:10911".to_string())].into(),
                broker_name: "broker-a".into(),
                ..BrokerData::default()
            }],
            queue_datas: vec![QueueData {
                broker_name: "broker-a".into(),
                perm: 6,
                read_queue_nums: 1,
                write_queue_nums: 1,
                ..QueueData::default()
            }],
            ..TopicRouteData::default()
        };
        Reply::ready(
            RemotingCommand::response_to(&request, ResponseCode::Success)
                .with_body(route.to_json(Dialect::Standard)),
        )
    }
}

#[tokio::test]
async fn every_route_query_carries_a_signature_that_verifies() -> anyhow::Result<()> {
    let checker = Arc::new(SignatureChecker::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?.to_string();
    tokio::spawn(rmq_transport::run(
        listener,
        checker.clone(),
        ServerConfig::default(),
        std::future::pending(),
    ));

    let unsigned = route_client(&addr, None, false);
    let error = unsigned.fetch_route("TopicA").await.unwrap_err();
    assert_eq!(error.code(), Some(16), "{error}");
    assert!(error.to_string().contains("NO_PERMISSION"), "{error}");

    // The zone fields travel in the ext fields, so they are signed too.
    let config = RouteClientConfig {
        zone_name: Some("zone-a".into()),
        zone_mode: Some(true),
        credentials: Some(Credentials::new(CLIENT_KEY, CLIENT_SECRET)),
        ..common::config(&[&addr], NO_POLL)
    };
    let signed = RouteClient::new(config);
    for topic in ["TopicA", "TopicB", "TopicA"] {
        signed.fetch_route(topic).await?;
    }
    assert_eq!(checker.verified.load(Ordering::SeqCst), 3);
    Ok(())
}
