//! TLS on the server's port, over real sockets: plain and TLS side by side
//! (permissive), TLS only (enforcing), plain only (disabled), mutual TLS and
//! the identity a service sees, certificate reload, TLS 1.2 and 1.3, and a
//! malformed handshake. Certificates are made in the test (`rmq_testkit::pki`).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use rmq_testkit::pki::{path, props, Issued, Pki};
use rmq_transport::tls::{ServerTls, TlsClient, TlsIdentity, TlsSettings};
use rmq_transport::{ClientConfig, ConnectionInfo, Reply, RpcClient, ServerConfig, Service};
use rmq_wire::{RemotingCommand, ResponseCode};
use rustls::pki_types::ServerName;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

const WAIT: Duration = Duration::from_secs(5);
/// Answered with remark `tls=<bool> names=<the identity's names>`.
const WHO: i32 = 7101;

/// Echoes (body and all) and tells what it knows of the connection.
#[derive(Default)]
struct WhoService {
    connects: AtomicUsize,
    calls: AtomicUsize,
}

impl Service for WhoService {
    fn on_connect(&self, _conn: &ConnectionInfo) {
        self.connects.fetch_add(1, Ordering::SeqCst);
    }

    fn call(&self, conn: &ConnectionInfo, request: RemotingCommand) -> Reply {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let names: Vec<&str> = conn
            .tls_identity()
            .map(|identity| identity.names().collect())
            .unwrap_or_default();
        let mut response = RemotingCommand::response_to(&request, ResponseCode::Success)
            .with_remark(format!("tls={} names={}", conn.is_tls(), names.join(",")));
        response.body = request.body.clone();
        Reply::ready(response)
    }
}

struct Running {
    addr: SocketAddr,
    service: Arc<WhoService>,
    _stop: oneshot::Sender<()>,
}

async fn serve(tls: ServerTls, config: ServerConfig) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let service = Arc::new(WhoService::default());
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(rmq_transport::run(
        listener,
        service.clone(),
        ServerConfig { tls, ..config },
        async {
            let _ = stopped.await;
        },
    ));
    Running {
        addr,
        service,
        _stop: stop,
    }
}

/// The server side of `pairs` (no default tls.config.file).
fn server_tls(pairs: &[(&str, &str)]) -> ServerTls {
    let settings = TlsSettings::from_properties_with(&props(pairs), None).unwrap();
    ServerTls::from_settings(&settings).unwrap().0
}

fn server_pairs<'a>(mode: &'a str, server: &'a Issued) -> Vec<(&'a str, &'a str)> {
    vec![
        ("tls.server.mode", mode),
        ("tls.server.certPath", path(&server.cert)),
        ("tls.server.keyPath", path(&server.key)),
    ]
}

/// A client trusting `pki`'s CA, with `extra` keys.
fn tls_client(pki: &Pki, extra: &[(&str, &str)]) -> TlsClient {
    let ca = pki.ca_path();
    let mut pairs = vec![("tls.client.trustCertPath", path(&ca))];
    pairs.extend_from_slice(extra);
    let settings = TlsSettings::from_properties_with(&props(&pairs), None).unwrap();
    let (client, warnings) = TlsClient::from_settings(&settings).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    client
}

async fn connect(addr: SocketAddr, tls: Option<&TlsClient>) -> Result<RpcClient, String> {
    let config = ClientConfig {
        tls: tls.cloned(),
        ..ClientConfig::default()
    };
    RpcClient::connect(addr, config)
        .await
        .map_err(|error| error.to_string())
}

async fn who(client: &RpcClient) -> Result<String, String> {
    let response = client
        .invoke(RemotingCommand::request(WHO, 0), WAIT)
        .await
        .map_err(|error| error.to_string())?;
    Ok(response.remark.unwrap_or_default())
}

/// A raw TLS connection, to see what the server negotiated and showed.
async fn handshake(
    addr: SocketAddr,
    client: &TlsClient,
) -> std::io::Result<tokio_rustls::client::TlsStream<TcpStream>> {
    let stream = TcpStream::connect(addr).await?;
    let name = ServerName::IpAddress(addr.ip().into());
    tokio_rustls::TlsConnector::from(client.config())
        .connect(name, stream)
        .await
}

/// The common name of the certificate a new connection to `addr` is shown.
async fn served_common_name(addr: SocketAddr, client: &TlsClient) -> String {
    let stream = handshake(addr, client).await.unwrap();
    let cert = stream.get_ref().1.peer_certificates().unwrap()[0].clone();
    TlsIdentity::from_der(&cert).unwrap().common_name.unwrap()
}

#[tokio::test]
async fn plain_and_tls_clients_share_a_permissive_port() {
    let pki = Pki::new("permissive");
    let server_cert = pki.issue("server", "waymark-ns", &[]);
    let server = serve(
        server_tls(&server_pairs("Permissive", &server_cert)),
        ServerConfig::default(),
    )
    .await;
    let client = tls_client(&pki, &[]);

    let plain = connect(server.addr, None).await.unwrap();
    let tls = connect(server.addr, Some(&client)).await.unwrap();
    assert_eq!(who(&plain).await.unwrap(), "tls=false names=");
    assert_eq!(who(&tls).await.unwrap(), "tls=true names=");
    // Interleaved, on both at once.
    for _ in 0..3 {
        assert_eq!(who(&tls).await.unwrap(), "tls=true names=");
        assert_eq!(who(&plain).await.unwrap(), "tls=false names=");
    }
    assert_eq!(server.service.connects.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn large_bodies_cross_tls_whole_both_ways() {
    let pki = Pki::new("large");
    let server_cert = pki.issue("server", "waymark-ns", &[]);
    let server = serve(
        server_tls(&server_pairs("permissive", &server_cert)),
        ServerConfig::default(),
    )
    .await;
    let tls = connect(server.addr, Some(&tls_client(&pki, &[])))
        .await
        .unwrap();
    // Larger than a TLS record and than rustls' buffers, and over the 4 KiB
    // that frames get without the frame budget.
    let body: Vec<u8> = (0..3_000_000u32).map(|n| (n % 251) as u8).collect();
    let calls = (0..4).map(|_| {
        let request = RemotingCommand::request(WHO, 0).with_body(body.clone());
        tls.invoke(request, WAIT)
    });
    for response in futures::future::join_all(calls).await {
        assert_eq!(response.unwrap().body.as_deref(), Some(body.as_slice()));
    }
}

#[tokio::test]
async fn enforcing_closes_plain_connections_and_serves_tls() {
    let pki = Pki::new("enforcing");
    let server_cert = pki.issue("server", "waymark-ns", &[]);
    let server = serve(
        server_tls(&server_pairs("enforcing", &server_cert)),
        ServerConfig::default(),
    )
    .await;

    let mut raw = TcpStream::connect(server.addr).await.unwrap();
    write_frame(&mut raw, &request(ECHO, "plain")).await;
    assert!(
        closed_within(&mut raw, WAIT).await,
        "plain connection left open"
    );
    let plain = connect(server.addr, None).await.unwrap();
    assert!(who(&plain).await.is_err());

    let tls = connect(server.addr, Some(&tls_client(&pki, &[])))
        .await
        .unwrap();
    assert_eq!(who(&tls).await.unwrap(), "tls=true names=");
    assert_eq!(
        server.service.connects.load(Ordering::SeqCst),
        1,
        "plain ones never reached it"
    );
}

#[tokio::test]
async fn disabled_and_certificateless_permissive_close_tls_handshakes() {
    let pki = Pki::new("disabled");
    let server_cert = pki.issue("server", "waymark-ns", &[]);
    let settings =
        TlsSettings::from_properties_with(&props(&server_pairs("disabled", &server_cert)), None)
            .unwrap();
    let (disabled, warnings) = ServerTls::from_settings(&settings).unwrap();
    assert!(matches!(disabled, ServerTls::Disabled));
    assert_eq!(warnings.len(), 1, "the unused certificate: {warnings:?}");
    let settings =
        TlsSettings::from_properties_with(&props(&[("tls.server.mode", "permissive")]), None)
            .unwrap();
    let (no_certificate, warnings) = ServerTls::from_settings(&settings).unwrap();
    assert!(matches!(no_certificate, ServerTls::Disabled));
    assert!(
        warnings[0].message.contains("plain connections only"),
        "{warnings:?}"
    );

    let client = tls_client(&pki, &[]);
    for tls in [disabled, no_certificate] {
        let server = serve(tls, ServerConfig::default()).await;
        assert!(connect(server.addr, Some(&client)).await.is_err());
        let plain = connect(server.addr, None).await.unwrap();
        assert_eq!(who(&plain).await.unwrap(), "tls=false names=");
    }
}

#[tokio::test]
async fn mutual_tls_required_refuses_clients_without_a_certificate() {
    let pki = Pki::new("mtls-refuse");
    let server_cert = pki.issue("server", "waymark-ns", &[]);
    let ca = pki.ca_path();
    let mut pairs = server_pairs("enforcing", &server_cert);
    pairs.extend([
        ("tls.server.need.client.auth", "require"),
        ("tls.server.authClient", "true"),
        ("tls.server.trustCertPath", path(&ca)),
    ]);
    let server = serve(server_tls(&pairs), ServerConfig::default()).await;

    for protocol in ["TLSv1.2", "TLSv1.3"] {
        let client = tls_client(&pki, &[("tls.protocols", protocol)]);
        // TLS 1.2 fails in the handshake; in 1.3 the client finishes first
        // and learns of the refusal on its first read.
        match connect(server.addr, Some(&client)).await {
            Err(_) => {}
            Ok(client) => assert!(who(&client).await.is_err(), "{protocol}"),
        }
    }
    // A certificate from another CA fails as well.
    let other = Pki::new("mtls-other-ca");
    let stranger = other.issue("client", "stranger", &[]);
    let client = tls_client(
        &pki,
        &[
            ("tls.client.certPath", path(&stranger.cert)),
            ("tls.client.keyPath", path(&stranger.key)),
        ],
    );
    match connect(server.addr, Some(&client)).await {
        Err(_) => {}
        Ok(client) => assert!(who(&client).await.is_err()),
    }
    assert_eq!(server.service.connects.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn mutual_tls_gives_the_service_the_certificate_names() {
    let pki = Pki::new("mtls-names");
    let server_cert = pki.issue("server", "waymark-ns", &[]);
    let broker = pki.issue(
        "broker",
        "broker-a",
        &[
            "broker-a.example",
            "uri:spiffe://waymark/broker-a",
            "email:ops@example.org",
        ],
    );
    let ca = pki.ca_path();
    let mut pairs = server_pairs("permissive", &server_cert);
    pairs.extend([
        ("tls.server.need.client.auth", "require"),
        ("tls.server.authClient", "true"),
        ("tls.server.trustCertPath", path(&ca)),
    ]);
    let server = serve(server_tls(&pairs), ServerConfig::default()).await;
    let client = tls_client(
        &pki,
        &[
            ("tls.client.certPath", path(&broker.cert)),
            ("tls.client.keyPath", path(&broker.key)),
        ],
    );
    let tls = connect(server.addr, Some(&client)).await.unwrap();
    assert_eq!(
        who(&tls).await.unwrap(),
        "tls=true names=broker-a,broker-a.example,spiffe://waymark/broker-a,ops@example.org"
    );
    // Plain clients still get in on a permissive port, with no identity.
    let plain = connect(server.addr, None).await.unwrap();
    assert_eq!(who(&plain).await.unwrap(), "tls=false names=");
}

#[tokio::test]
async fn optional_mutual_tls_serves_clients_with_and_without_a_certificate() {
    let pki = Pki::new("mtls-optional");
    let server_cert = pki.issue("server", "waymark-ns", &[]);
    let broker = pki.issue("broker", "broker-b", &[]);
    let ca = pki.ca_path();
    let mut pairs = server_pairs("enforcing", &server_cert);
    pairs.extend([
        ("tls.server.need.client.auth", "OPTIONAL"),
        ("tls.server.trustCertPath", path(&ca)),
    ]);
    let settings = TlsSettings::from_properties_with(&props(&pairs), None).unwrap();
    let (tls, warnings) = ServerTls::from_settings(&settings).unwrap();
    assert_eq!(warnings.len(), 1, "authClient not set: {warnings:?}");
    assert_eq!(warnings[0].key, "tls.server.authClient");
    let server = serve(tls, ServerConfig::default()).await;

    let anonymous = connect(server.addr, Some(&tls_client(&pki, &[])))
        .await
        .unwrap();
    assert_eq!(who(&anonymous).await.unwrap(), "tls=true names=");
    let with_certificate = tls_client(
        &pki,
        &[
            ("tls.client.certPath", path(&broker.cert)),
            ("tls.client.keyPath", path(&broker.key)),
        ],
    );
    let known = connect(server.addr, Some(&with_certificate)).await.unwrap();
    assert_eq!(who(&known).await.unwrap(), "tls=true names=broker-b");
}

#[tokio::test]
async fn a_changed_certificate_is_served_to_new_connections_and_a_broken_one_is_not() {
    let pki = Pki::new("reload");
    let server_cert = pki.issue("server", "waymark-ns-first", &[]);
    let tls = server_tls(&server_pairs("permissive", &server_cert));
    let holder = tls.server().unwrap().clone();
    let server = serve(tls, ServerConfig::default()).await;
    let client = tls_client(&pki, &[]);

    let old = connect(server.addr, Some(&client)).await.unwrap();
    assert_eq!(who(&old).await.unwrap(), "tls=true names=");
    assert_eq!(
        served_common_name(server.addr, &client).await,
        "waymark-ns-first"
    );
    assert!(!holder.reload_if_changed().unwrap(), "nothing changed yet");

    pki.reissue(&server_cert, "waymark-ns-second-and-longer");
    assert!(holder.reload_if_changed().unwrap());
    assert!(
        !holder.reload_if_changed().unwrap(),
        "reloaded once per change"
    );
    assert_eq!(
        served_common_name(server.addr, &client).await,
        "waymark-ns-second-and-longer"
    );
    assert_eq!(
        who(&old).await.unwrap(),
        "tls=true names=",
        "old connection lives on"
    );

    // A broken certificate file: the error names key and file, the
    // certificate in use stays, and the same files are not tried again.
    std::fs::write(
        &server_cert.cert,
        "-----BEGIN CERTIFICATE-----\nnot base64!\n",
    )
    .unwrap();
    let error = holder.reload_if_changed().unwrap_err().to_string();
    assert!(error.starts_with("tls.server.certPath: "), "{error}");
    assert!(error.contains(path(&server_cert.cert)), "{error}");
    assert!(!holder.reload_if_changed().unwrap());
    assert_eq!(
        served_common_name(server.addr, &client).await,
        "waymark-ns-second-and-longer"
    );

    // A certificate whose key was not replaced with it.
    std::fs::write(
        &server_cert.cert,
        pki.stray_certificate_pem("waymark-ns-stray"),
    )
    .unwrap();
    let error = holder.reload_if_changed().unwrap_err().to_string();
    assert!(error.starts_with("tls.server.keyPath: "), "{error}");
    assert!(error.contains("does not match"), "{error}");
    assert_eq!(
        served_common_name(server.addr, &client).await,
        "waymark-ns-second-and-longer"
    );
    assert_eq!(who(&old).await.unwrap(), "tls=true names=");
}

#[tokio::test]
async fn tls12_only_and_tls13_only_clients_both_work() {
    let pki = Pki::new("versions");
    let server_cert = pki.issue("server", "waymark-ns", &[]);
    let server = serve(
        server_tls(&server_pairs("enforcing", &server_cert)),
        ServerConfig::default(),
    )
    .await;
    for (protocol, version) in [
        ("TLSv1.2", rustls::ProtocolVersion::TLSv1_2),
        ("TLSv1.3", rustls::ProtocolVersion::TLSv1_3),
    ] {
        let client = tls_client(&pki, &[("tls.protocols", protocol)]);
        let stream = handshake(server.addr, &client).await.unwrap();
        assert_eq!(stream.get_ref().1.protocol_version(), Some(version));
        let rpc = connect(server.addr, Some(&client)).await.unwrap();
        assert_eq!(who(&rpc).await.unwrap(), "tls=true names=", "{protocol}");
    }
    // The suites a Java 17 client offers for TLS 1.2 with an ECDSA
    // certificate, one at a time.
    for suite in [
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    ] {
        let client = tls_client(
            &pki,
            &[("tls.protocols", "TLSv1.2"), ("tls.ciphers", suite)],
        );
        let rpc = connect(server.addr, Some(&client)).await.unwrap();
        assert_eq!(who(&rpc).await.unwrap(), "tls=true names=", "{suite}");
    }
}

#[tokio::test]
async fn a_garbage_client_hello_closes_only_its_own_connection() {
    let pki = Pki::new("garbage");
    let server_cert = pki.issue("server", "waymark-ns", &[]);
    let server = serve(
        server_tls(&server_pairs("permissive", &server_cert)),
        ServerConfig::default(),
    )
    .await;
    let plain = connect(server.addr, None).await.unwrap();
    assert_eq!(who(&plain).await.unwrap(), "tls=false names=");

    let mut garbage = TcpStream::connect(server.addr).await.unwrap();
    garbage
        .write_all(&[0x16, 0x03, 0x01, 0x00, 0x05, 0xde, 0xad, 0xbe, 0xef, 0x00])
        .await
        .unwrap();
    assert!(
        closed_within(&mut garbage, WAIT).await,
        "garbage handshake left open"
    );

    assert_eq!(who(&plain).await.unwrap(), "tls=false names=");
    let tls = connect(server.addr, Some(&tls_client(&pki, &[])))
        .await
        .unwrap();
    assert_eq!(who(&tls).await.unwrap(), "tls=true names=");
    assert_eq!(server.service.connects.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_silent_peer_is_closed_after_the_frame_timeout_without_reaching_the_service() {
    let pki = Pki::new("silent");
    let server_cert = pki.issue("server", "waymark-ns", &[]);
    let config = ServerConfig {
        frame_timeout: Duration::from_millis(300),
        ..ServerConfig::default()
    };
    let server = serve(
        server_tls(&server_pairs("permissive", &server_cert)),
        config,
    )
    .await;
    let mut silent = TcpStream::connect(server.addr).await.unwrap();
    assert!(closed_within(&mut silent, WAIT).await);
    // Half a handshake is cut off the same way.
    let mut stalled = TcpStream::connect(server.addr).await.unwrap();
    stalled.write_all(&[0x16, 0x03, 0x01]).await.unwrap();
    assert!(closed_within(&mut stalled, WAIT).await);
    assert_eq!(server.service.connects.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_client_checks_the_chain_and_never_the_name() {
    let pki = Pki::new("chain");
    // Reached as 127.0.0.1, which the certificate does not name: accepted,
    // as Java accepts it.
    let server_cert = pki.issue("server", "waymark-ns", &["waymark-ns.example"]);
    let server = serve(
        server_tls(&server_pairs("enforcing", &server_cert)),
        ServerConfig::default(),
    )
    .await;
    let trusting = connect(server.addr, Some(&tls_client(&pki, &[])))
        .await
        .unwrap();
    assert_eq!(who(&trusting).await.unwrap(), "tls=true names=");

    // Another CA's trust file: refused.
    let other = Pki::new("chain-other");
    let wrong = tls_client(&other, &[]);
    let error = connect(server.addr, Some(&wrong)).await.unwrap_err();
    assert!(error.contains("TLS handshake failed"), "{error}");

    // No trust file: only with tls.client.authServer=false, and said so.
    let settings =
        TlsSettings::from_properties_with(&props(&[("tls.enable", "true")]), None).unwrap();
    let error = TlsClient::from_settings(&settings).unwrap_err().to_string();
    assert!(error.starts_with("tls.client.trustCertPath: "), "{error}");
    let settings = TlsSettings::from_properties_with(
        &props(&[("tls.enable", "true"), ("tls.client.authServer", "false")]),
        None,
    )
    .unwrap();
    let (trust_all, warnings) = TlsClient::from_settings(&settings).unwrap();
    assert!(!trust_all.verifies_server());
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].message.contains("not verified"), "{warnings:?}");
    let unverified = connect(server.addr, Some(&trust_all)).await.unwrap();
    assert_eq!(who(&unverified).await.unwrap(), "tls=true names=");
}

#[tokio::test]
async fn server_settings_that_cannot_work_are_refused_naming_the_key() {
    let pki = Pki::new("refusals");
    let server_cert = pki.issue("server", "waymark-ns", &[]);
    let refusal = |pairs: &[(&str, &str)]| {
        let settings = TlsSettings::from_properties_with(&props(pairs), None).unwrap();
        ServerTls::from_settings(&settings).unwrap_err().to_string()
    };
    let error = refusal(&[("tls.server.mode", "enforcing")]);
    assert!(
        error.starts_with("tls.server.mode: enforcing needs"),
        "{error}"
    );
    let error = refusal(&[("tls.server.certPath", path(&server_cert.cert))]);
    assert!(error.starts_with("tls.server.keyPath: not set"), "{error}");
    let mut mtls = server_pairs("permissive", &server_cert);
    mtls.push(("tls.server.need.client.auth", "require"));
    let error = refusal(&mtls);
    assert!(
        error.starts_with("tls.server.need.client.auth: "),
        "{error}"
    );
    assert!(error.contains("tls.server.trustCertPath"), "{error}");
    let missing = pki.dir.join("missing.pem");
    let error = refusal(&[
        ("tls.server.certPath", path(&missing)),
        ("tls.server.keyPath", path(&server_cert.key)),
    ]);
    assert!(
        error.starts_with("tls.server.certPath: cannot read "),
        "{error}"
    );
    assert!(error.contains("missing.pem"), "{error}");
}

#[test]
fn a_detached_connection_can_stand_for_a_tls_one() {
    let addr: SocketAddr = "127.0.0.1:1".parse().unwrap();
    let (plain, _) = ConnectionInfo::detached(addr, addr, rmq_wire::SerializeType::Json);
    assert!(!plain.is_tls());
    assert_eq!(plain.tls_identity(), None);
    let identity = TlsIdentity {
        common_name: Some("broker-a".into()),
        subject_alt_names: vec!["broker-a.example".into()],
    };
    let tls = plain.clone().with_tls_identity(Some(identity.clone()));
    assert!(tls.is_tls());
    assert_eq!(tls.tls_identity(), Some(&identity));
    let anonymous = plain.with_tls_identity(None);
    assert!(anonymous.is_tls());
    assert_eq!(anonymous.tls_identity(), None);
}
