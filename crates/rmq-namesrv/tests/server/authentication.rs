//! Authenticated writes (`authenticationEnabled=true`): signatures as Java
//! computes them, admin and broker accounts, address allow-lists, broker
//! bindings, TLS client certificates, reload of the accounts file, replay,
//! and garbage credentials. The real binary over real sockets; requests are
//! signed by `rmq_auth::Credentials`, the signer checked against Java's
//! vectors in rmq-auth.

use std::sync::Arc;
use std::time::Duration;

use rmq_auth::Credentials;
use rmq_testkit::pki::{path, props, Pki};
use rmq_transport::tls::{TlsClient, TlsSettings};
use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};

use crate::common::*;

const BROKER_KEY: &str = "broker-key";
const BROKER_SECRET: &str = "broker-secret-1";
const ADMIN_KEY: &str = "admin-key";
const ADMIN_SECRET: &str = "admin-secret-1";

fn accounts_yml(extra: &str) -> String {
    format!(
        "accounts:\n  - accessKey: {BROKER_KEY}\n    secretKey: {BROKER_SECRET}\n    admin: false\n  - accessKey: {ADMIN_KEY}\n    secretKey: {ADMIN_SECRET}\n    admin: true\n{extra}"
    )
}

/// One connection for a whole test: a broker registered over a connection
/// is unregistered when that connection closes, as in Java.
struct Conn(RpcClient);

impl Conn {
    async fn open(server: &Server) -> Conn {
        Conn(server.client().await)
    }

    async fn call(&self, request: RemotingCommand) -> RemotingCommand {
        self.0.invoke(request, TIMEOUT).await.expect("an answer")
    }
}

/// A server with authentication on over `accounts` (written to acl.yml).
fn start(dir: &TempDir, accounts: &str, more: &[(&str, &str)]) -> Server {
    let file = dir.path("acl.yml");
    std::fs::write(&file, accounts).unwrap();
    let file = file.display().to_string();
    let mut sets = vec![
        ("authenticationEnabled", "true"),
        ("authenticationAccountsFile", file.as_str()),
    ];
    sets.extend_from_slice(more);
    Server::start(dir, &sets)
}

fn signed(mut request: RemotingCommand, key: &str, secret: &str) -> RemotingCommand {
    Credentials::new(key, secret).sign_request(&mut request);
    request
}

fn put_kv(key: &str, value: &str) -> RemotingCommand {
    request(
        RequestCode::PutKvConfig,
        &[
            ("namespace", "ORDER_TOPIC_CONFIG"),
            ("key", key),
            ("value", value),
        ],
    )
}

async fn broker_listed(conn: &Conn, name: &str) -> bool {
    let response = conn
        .call(request(RequestCode::GetBrokerClusterInfo, &[]))
        .await;
    body_text(&response).contains(name)
}

#[tokio::test]
async fn unsigned_writes_are_refused_and_signed_ones_served() {
    let dir = TempDir::new();
    let server = start(&dir, &accounts_yml(""), &[]);
    let conn = Conn::open(&server).await;
    let register = Register::new("broker-a", "127.0.0.1:10911", 0, &["TopicA", "TopicB"]);

    let refused = conn.call(register.request()).await;
    assert_code(&refused, ResponseCode::NoPermission);
    let remark = refused.remark.clone().unwrap_or_default();
    assert!(remark.contains("request code 103"), "{remark}");
    assert!(!broker_listed(&conn, "broker-a").await);

    let wrong = conn
        .call(signed(register.request(), BROKER_KEY, "not-the-secret"))
        .await;
    assert_code(&wrong, ResponseCode::NoPermission);
    let remark = wrong.remark.clone().unwrap_or_default();
    assert!(
        remark.contains("check signature failed") && remark.contains(BROKER_KEY),
        "{remark}"
    );

    let unknown = conn
        .call(signed(register.request(), "nobody-at-all", BROKER_SECRET))
        .await;
    assert_code(&unknown, ResponseCode::NoPermission);
    assert!(unknown.remark.unwrap_or_default().contains("not found"));

    let accepted = conn
        .call(signed(register.request(), BROKER_KEY, BROKER_SECRET))
        .await;
    assert_code(&accepted, ResponseCode::Success);
    // Route reads stay open: most clients never sign.
    let route = conn.call(route_request("TopicA")).await;
    assert_code(&route, ResponseCode::Success);
    assert!(body_text(&route).contains("broker-a"));
}

#[tokio::test]
async fn admin_writes_need_an_admin_account_and_are_audited() {
    let dir = TempDir::new();
    let server = start(&dir, &accounts_yml(""), &[]);
    let conn = Conn::open(&server).await;
    let by_broker = conn
        .call(signed(
            put_kv("TopicA", "broker-a:4"),
            BROKER_KEY,
            BROKER_SECRET,
        ))
        .await;
    assert_code(&by_broker, ResponseCode::NoPermission);
    assert!(by_broker.remark.unwrap_or_default().contains("admin"));
    let unsigned = conn.call(put_kv("TopicA", "broker-a:4")).await;
    assert_code(&unsigned, ResponseCode::NoPermission);

    let by_admin = conn
        .call(signed(
            put_kv("TopicA", "broker-a:4"),
            ADMIN_KEY,
            ADMIN_SECRET,
        ))
        .await;
    assert_code(&by_admin, ResponseCode::Success);
    let log = read(&dir.path("server.log"));
    let audit = log
        .lines()
        .find(|line| line.contains("admin write accepted"))
        .unwrap_or_else(|| panic!("no audit line in {log}"));
    assert!(
        audit.contains(ADMIN_KEY) && audit.contains("127.0.0.1") && audit.contains("key=TopicA"),
        "{audit}"
    );
    assert!(!audit.contains(ADMIN_SECRET));
    assert!(log.contains("request refused"), "refusals are logged");
}

#[tokio::test]
async fn a_refused_one_way_heartbeat_is_dropped_and_logged() {
    let dir = TempDir::new();
    let server = start(&dir, &accounts_yml(""), &[]);
    let client = server.client().await;
    let heartbeat = request(
        RequestCode::BrokerHeartbeat,
        &[
            ("clusterName", "DefaultCluster"),
            ("brokerName", "broker-a"),
            ("brokerAddr", "127.0.0.1:10911"),
            ("brokerId", "0"),
        ],
    );
    client.invoke_oneway(heartbeat).unwrap();
    let logged = eventually(Duration::from_secs(5), || async {
        read(&dir.path("server.log")).contains("one-way: dropped")
    })
    .await;
    assert!(logged, "{}", read(&dir.path("server.log")));
    // The connection stays usable.
    let route = client
        .invoke(route_request("TopicA"), TIMEOUT)
        .await
        .unwrap();
    assert_code(&route, ResponseCode::TopicNotExist);
}

#[tokio::test]
async fn address_allow_lists_admit_brokers_that_cannot_sign() {
    let dir = TempDir::new();
    // A 4.9 broker never signs: its address stands for it.
    let server = start(&dir, "globalWhiteRemoteAddresses:\n  - 127.0.0.*\naccounts:\n  - accessKey: admin-key\n    secretKey: admin-secret-1\n    admin: true\n", &[]);
    let conn = Conn::open(&server).await;
    let register = Register::new("broker-a", "127.0.0.1:10911", 0, &["TopicA", "TopicB"]);
    assert_code(&conn.call(register.request()).await, ResponseCode::Success);
    // ... but the global allow-list never grants admin writes.
    let kv = conn.call(put_kv("TopicA", "broker-a:4")).await;
    assert_code(&kv, ResponseCode::NoPermission);

    let dir = TempDir::new();
    let server = start(
        &dir,
        "accounts:\n  - accessKey: ops-admin\n    secretKey: ops-secret-1\n    admin: true\n    whiteRemoteAddress: 127.0.0.1\n",
        &[],
    );
    let conn = Conn::open(&server).await;
    assert_code(
        &conn.call(put_kv("TopicA", "broker-a:4")).await,
        ResponseCode::Success,
    );

    let dir = TempDir::new();
    let server = start(
        &dir,
        "globalWhiteRemoteAddresses:\n  - 10.1.2.*\naccounts: []\n",
        &[],
    );
    let conn = Conn::open(&server).await;
    assert_code(
        &conn.call(register.request()).await,
        ResponseCode::NoPermission,
    );
}

#[tokio::test]
async fn a_bound_account_registers_only_its_own_broker() {
    let dir = TempDir::new();
    let server = start(
        &dir,
        "accounts:\n  - accessKey: broker-a-key\n    secretKey: broker-a-secret\n    brokers:\n      - clusterName: DefaultCluster\n        brokerName: broker-a\n",
        &[],
    );
    let conn = Conn::open(&server).await;
    let own = Register::new("broker-a", "127.0.0.1:10911", 0, &["TopicA", "TopicB"]);
    let other = Register::new("broker-b", "127.0.0.1:10921", 0, &["TopicA", "TopicB"]);
    assert_code(
        &conn
            .call(signed(own.request(), "broker-a-key", "broker-a-secret"))
            .await,
        ResponseCode::Success,
    );
    let refused = conn
        .call(signed(other.request(), "broker-a-key", "broker-a-secret"))
        .await;
    assert_code(&refused, ResponseCode::NoPermission);
    assert!(refused.remark.unwrap_or_default().contains("broker-b"));
    let unregister = request(
        RequestCode::UnregisterBroker,
        &[
            ("clusterName", "DefaultCluster"),
            ("brokerName", "broker-b"),
            ("brokerAddr", "127.0.0.1:10921"),
            ("brokerId", "0"),
        ],
    );
    assert_code(
        &conn
            .call(signed(unregister, "broker-a-key", "broker-a-secret"))
            .await,
        ResponseCode::NoPermission,
    );
}

#[tokio::test]
async fn the_accounts_file_is_reloaded_and_a_broken_one_keeps_the_last() {
    let dir = TempDir::new();
    let server = start(&dir, &accounts_yml(""), &[]);
    let conn = Conn::open(&server).await;
    let kv = || {
        signed(
            put_kv("TopicA", "broker-a:4"),
            "late-admin",
            "late-secret-1",
        )
    };
    assert_code(&conn.call(kv()).await, ResponseCode::NoPermission);
    let added =
        accounts_yml("  - accessKey: late-admin\n    secretKey: late-secret-1\n    admin: true\n");
    std::fs::write(dir.path("acl.yml"), added).unwrap();
    let reloaded = eventually(Duration::from_secs(10), || async {
        conn.call(kv()).await.response_code() == ResponseCode::Success
    })
    .await;
    assert!(reloaded, "{}", read(&dir.path("server.log")));

    std::fs::write(dir.path("acl.yml"), "accounts:\n  - accessKey: [broken\n").unwrap();
    let rejected = eventually(Duration::from_secs(10), || async {
        read(&dir.path("server.log")).contains("accounts file not reloaded")
    })
    .await;
    assert!(rejected, "{}", read(&dir.path("server.log")));
    assert_code(&conn.call(kv()).await, ResponseCode::Success);
}

/// An unchanged signed re-registration is answered from the memo of
/// verified requests; a new secret in the accounts file must still refuse
/// it, and a memo of 0 bytes must give the same answers.
#[tokio::test]
async fn a_remembered_signature_stops_counting_when_the_secret_changes() {
    for memo in ["67108864", "0"] {
        let dir = TempDir::new();
        let server = start(
            &dir,
            &accounts_yml(""),
            &[("authenticationSignatureMemoBytes", memo)],
        );
        let conn = Conn::open(&server).await;
        let register = Register::new("broker-a", "127.0.0.1:10911", 0, &["TopicA", "TopicB"]);
        let periodic = signed(register.request(), BROKER_KEY, BROKER_SECRET);
        for _ in 0..3 {
            assert_code(&conn.call(periodic.clone()).await, ResponseCode::Success);
        }
        let rotated = accounts_yml("").replace(BROKER_SECRET, "broker-secret-2");
        std::fs::write(dir.path("acl.yml"), rotated).unwrap();
        let refused = eventually(Duration::from_secs(10), || async {
            conn.call(periodic.clone()).await.response_code() == ResponseCode::NoPermission
        })
        .await;
        assert!(refused, "memo {memo}: {}", read(&dir.path("server.log")));
        let resigned = signed(register.request(), BROKER_KEY, "broker-secret-2");
        assert_code(&conn.call(resigned).await, ResponseCode::Success);
    }
}

#[test]
fn bad_accounts_files_stop_the_start_naming_file_and_line() {
    let cases = [
        (
            "accounts:\n  - accessKey: short\n    secretKey: long-enough-1\n",
            "accessKey",
        ),
        (
            "accounts:\n  - accessKey: rocketmq2\n    secretKey: 12345678\n    admin: true\n",
            "rocketmq2",
        ),
        ("accounts:\n  - accessKey: [broken\n", "acl.yml"),
    ];
    for (text, expected) in cases {
        let dir = TempDir::new();
        let file = dir.path("acl.yml");
        std::fs::write(&file, text).unwrap();
        let file = file.display().to_string();
        let stderr = Server::refused_start(
            &dir,
            &[
                ("authenticationEnabled", "true"),
                ("authenticationAccountsFile", &file),
            ],
        );
        assert!(
            stderr.contains(expected) && stderr.contains("acl.yml"),
            "{text}: {stderr}"
        );
    }
    let dir = TempDir::new();
    let stderr = Server::refused_start(&dir, &[("authenticationEnabled", "true")]);
    assert!(stderr.contains("authenticationAccountsFile"), "{stderr}");
}

/// Signatures carry no nonce, timestamp or request code: a captured signed
/// request is accepted again (docs/security.md says so; only TLS prevents
/// capture).
#[tokio::test]
async fn a_replayed_signed_request_is_accepted_as_documented() {
    let dir = TempDir::new();
    let server = start(&dir, &accounts_yml(""), &[]);
    let conn = Conn::open(&server).await;
    let register = Register::new("broker-a", "127.0.0.1:10911", 0, &["TopicA", "TopicB"]);
    let captured = signed(register.request(), BROKER_KEY, BROKER_SECRET);
    assert_code(&conn.call(captured.clone()).await, ResponseCode::Success);
    let unregister = signed(
        request(
            RequestCode::UnregisterBroker,
            &[
                ("clusterName", "DefaultCluster"),
                ("brokerName", "broker-a"),
                ("brokerAddr", "127.0.0.1:10911"),
                ("brokerId", "0"),
            ],
        ),
        BROKER_KEY,
        BROKER_SECRET,
    );
    assert_code(&conn.call(unregister.clone()).await, ResponseCode::Success);
    assert_code(&conn.call(captured).await, ResponseCode::Success);
    assert_code(&conn.call(unregister).await, ResponseCode::Success);
    let gone = eventually(Duration::from_secs(5), || async {
        !broker_listed(&conn, "broker-a").await
    })
    .await;
    assert!(gone, "the replayed unregistration took effect");
}

#[tokio::test]
async fn garbage_credentials_are_refused_without_harm() {
    let dir = TempDir::new();
    let server = start(&dir, &accounts_yml(""), &[]);
    let conn = Conn::open(&server).await;
    let client = server.client().await;
    let mut rng = fastrand::Rng::with_seed(7);
    let mut text = |len: usize| -> String {
        (0..len)
            .map(|_| char::from_u32(rng.u32(1..0x2FFF)).unwrap_or('x'))
            .collect()
    };
    let mut pending = Vec::new();
    for i in 0..10_000 {
        let request = put_kv("TopicA", "x")
            .with_ext("AccessKey", text(i % 40))
            .with_ext("Signature", text(i % 64));
        let client = client.clone();
        pending.push(tokio::spawn(async move {
            client.invoke(request, Duration::from_secs(30)).await
        }));
        if pending.len() == 200 {
            for answer in pending.drain(..) {
                let answer = answer.await.unwrap().expect("an answer");
                assert_code(&answer, ResponseCode::NoPermission);
            }
        }
    }
    for answer in pending {
        assert_code(&answer.await.unwrap().unwrap(), ResponseCode::NoPermission);
    }
    let fine = conn
        .call(signed(put_kv("TopicA", "ok"), ADMIN_KEY, ADMIN_SECRET))
        .await;
    assert_code(&fine, ResponseCode::Success);
    let log = read(&dir.path("server.log"));
    let refusal_lines = log
        .lines()
        .filter(|l| l.contains("request refused"))
        .count();
    assert!(
        refusal_lines < 200,
        "refusals are rate-limited in the log: {refusal_lines} lines"
    );
}

#[tokio::test]
async fn protected_reads_need_an_account_when_asked() {
    let dir = TempDir::new();
    let server = start(
        &dir,
        &accounts_yml(""),
        &[("authenticationProtectConfigReads", "true")],
    );
    let conn = Conn::open(&server).await;
    let get = || request(RequestCode::GetNamesrvConfig, &[]);
    assert_code(&conn.call(get()).await, ResponseCode::NoPermission);
    assert_code(
        &conn.call(signed(get(), BROKER_KEY, BROKER_SECRET)).await,
        ResponseCode::Success,
    );
    let dir = TempDir::new();
    let open = start(&dir, &accounts_yml(""), &[]);
    let open_conn = Conn::open(&open).await;
    assert_code(&open_conn.call(get()).await, ResponseCode::Success);
}

#[tokio::test]
async fn open_reads_are_served_whatever_credentials_they_carry() {
    let dir = TempDir::new();
    let server = start(&dir, &accounts_yml(""), &[]);
    let conn = Conn::open(&server).await;
    let cluster_info = || request(RequestCode::GetBrokerClusterInfo, &[]);
    // Clients sign every request with the keys they hold for the brokers;
    // an open read must not depend on this NameServer knowing them.
    for answer in [
        conn.call(signed(cluster_info(), "no-such-key", "any"))
            .await,
        conn.call(signed(cluster_info(), BROKER_KEY, "wrong-secret"))
            .await,
        conn.call(
            cluster_info()
                .with_ext("AccessKey", BROKER_KEY)
                .with_ext("Signature", "garbage"),
        )
        .await,
    ] {
        assert_code(&answer, ResponseCode::Success);
    }
    // The same wrong signature on a restricted request is refused.
    let refused = conn
        .call(signed(put_kv("TopicA", "x"), BROKER_KEY, "wrong-secret"))
        .await;
    assert_code(&refused, ResponseCode::NoPermission);
}

#[tokio::test]
async fn a_client_certificate_can_name_the_account() {
    let dir = TempDir::new();
    let pki = Pki::new("ns-mtls");
    let server_cert = pki.issue("server", "waymark-ns", &[]);
    let broker_cert = pki.issue("broker", "broker-a.example", &[]);
    let stranger_cert = pki.issue("stranger", "stranger.example", &[]);
    let ca = pki.ca_path();
    let server = start(
        &dir,
        "accounts:\n  - accessKey: broker-a-cert\n    secretKey: unused-secret\n    tlsSubject: broker-a.example\n",
        &[
            ("tls.server.mode", "enforcing"),
            ("tls.server.certPath", path(&server_cert.cert)),
            ("tls.server.keyPath", path(&server_cert.key)),
            ("tls.server.trustCertPath", path(&ca)),
            ("tls.server.need.client.auth", "optional"),
        ],
    );
    let connect = |cert: Option<&rmq_testkit::pki::Issued>| {
        let mut pairs = vec![("tls.client.trustCertPath", path(&ca))];
        if let Some(cert) = cert {
            pairs.push(("tls.client.certPath", path(&cert.cert)));
            pairs.push(("tls.client.keyPath", path(&cert.key)));
        }
        let settings = TlsSettings::from_properties_with(&props(&pairs), None).unwrap();
        let (tls, _) = TlsClient::from_settings(&settings).unwrap();
        RpcClient::connect(
            server.addr,
            ClientConfig {
                tls: Some(tls),
                ..ClientConfig::default()
            },
        )
    };
    let register = Register::new("broker-a", "127.0.0.1:10911", 0, &["TopicA", "TopicB"]);
    let anonymous = connect(None).await.unwrap();
    let refused = anonymous.invoke(register.request(), TIMEOUT).await.unwrap();
    assert_code(&refused, ResponseCode::NoPermission);
    // A verified certificate that names no account: the refusal says which.
    let stranger = connect(Some(&stranger_cert)).await.unwrap();
    let refused = stranger.invoke(register.request(), TIMEOUT).await.unwrap();
    assert_code(&refused, ResponseCode::NoPermission);
    let remark = refused.remark.unwrap_or_default();
    assert!(
        remark.contains("client certificate stranger.example is no account's tlsSubject"),
        "{remark}"
    );
    let identified = connect(Some(&broker_cert)).await.unwrap();
    let accepted = identified
        .invoke(register.request(), TIMEOUT)
        .await
        .unwrap();
    assert_code(&accepted, ResponseCode::Success);
}

#[tokio::test]
async fn a_signing_client_hook_is_accepted() {
    let dir = TempDir::new();
    let server = start(&dir, &accounts_yml(""), &[]);
    let config = ClientConfig {
        request_hook: Some(Arc::new(Credentials::new(ADMIN_KEY, ADMIN_SECRET))),
        ..ClientConfig::default()
    };
    let client = RpcClient::connect(server.addr, config).await.unwrap();
    let answer = client
        .invoke(put_kv("TopicA", "broker-a:8"), TIMEOUT)
        .await
        .unwrap();
    assert_code(&answer, ResponseCode::Success);
}
