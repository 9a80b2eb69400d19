use std::net::IpAddr;
use std::sync::Arc;

use bytes::Bytes;
use rmq_wire::{header, RequestCode, ResponseCode};

use super::*;
use crate::accounts::LoadOptions;
use crate::Credentials;

/// rocketmq2/12345678 is the public default; the live vectors use it.
const ACCOUNTS: &str = r#"
globalWhiteRemoteAddresses:
  - 10.10.103.*
accounts:
  - accessKey: rocketmq2
    secretKey: 12345678
    admin: true
  - accessKey: broker-key
    secretKey: broker-secret
    whiteRemoteAddress: 192.168.7.1-20
    tlsSubject: CN=broker-a
    brokers:
      - clusterName: DefaultCluster
        brokerName: broker-a
        brokerAddr: 192.168.0.*:10911
  - accessKey: plain-user
    secretKey: plain-secret
  - accessKey: second-by-address
    secretKey: plain-secret
    whiteRemoteAddress: 192.168.7.*
  - accessKey: retired-key
    secretKey: retired-secret
    userStatus: disable
    whiteRemoteAddress: 172.16.0.1
    tlsSubject: CN=retired
"#;

fn policy() -> Policy {
    let options = LoadOptions {
        allow_public_defaults: true,
    };
    let (accounts, _) = Accounts::parse(ACCOUNTS, "acl.yml", options).unwrap();
    Policy::namesrv(Arc::new(accounts))
}

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

const STRANGER: &str = "203.0.113.9";

fn wipe(broker: &str) -> RemotingCommand {
    RemotingCommand::request(RequestCode::WipeWritePermOfBroker, 1).with_ext("brokerName", broker)
}

fn register(cluster: &str, name: &str, addr: &str) -> RemotingCommand {
    RemotingCommand::request(RequestCode::RegisterBroker, 1)
        .with_ext("clusterName", cluster)
        .with_ext("brokerName", name)
        .with_ext("brokerAddr", addr)
        .with_ext("brokerId", "0")
        .with_body(Bytes::from_static(b"{}"))
}

fn signed(mut cmd: RemotingCommand, access_key: &str, secret_key: &str) -> RemotingCommand {
    Credentials::new(access_key, secret_key).sign_request(&mut cmd);
    cmd
}

fn refusal(decision: Decision) -> (RefusalReason, String) {
    match decision {
        Decision::Refused(refusal) => (refusal.reason.clone(), refusal.remark()),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn allowed(decision: Decision) -> Principal {
    match decision {
        Decision::Allowed { who } => who,
        other => panic!("expected Allowed, got {other:?}"),
    }
}

#[test]
fn open_codes_disabled_policies_and_exempt_codes_need_nothing() {
    let mut policy = policy();
    let route = RemotingCommand::request(RequestCode::GetRouteInfoByTopic, 1)
        .with_ext("AccessKey", "nobody-at-all")
        .with_ext("Signature", "garbage");
    assert_eq!(policy.decide(&route, ip(STRANGER), None), Decision::Open);
    assert_eq!(
        policy.decide(&wipe("b"), ip(STRANGER), None).clone(),
        refused_no_credentials(205)
    );

    policy.exempt_codes = vec![205];
    assert_eq!(
        policy.decide(&wipe("b"), ip(STRANGER), None),
        Decision::Open
    );
    policy.exempt_codes.clear();
    policy.enabled = false;
    assert_eq!(
        policy.decide(&wipe("b"), ip(STRANGER), None),
        Decision::Open
    );
}

fn refused_no_credentials(code: i32) -> Decision {
    Decision::Refused(Refusal {
        code,
        reason: RefusalReason::NoCredentials {
            peer: ip(STRANGER),
            certificate: None,
        },
    })
}

#[test]
fn protected_reads_follow_the_switch() {
    let mut policy = policy();
    for code in [
        RequestCode::GetNamesrvConfig,
        RequestCode::GetKvConfig,
        RequestCode::GetKvlistByNamespace,
    ] {
        let read = RemotingCommand::request(code, 1);
        assert_eq!(policy.decide(&read, ip(STRANGER), None), Decision::Open);
        policy.protect_reads = true;
        let (_, remark) = refusal(policy.decide(&read, ip(STRANGER), None));
        assert!(remark.starts_with("username cannot be null."), "{remark}");
        let who = allowed(policy.decide(
            &signed(read, "plain-user", "plain-secret"),
            ip(STRANGER),
            None,
        ));
        assert_eq!(who.account.as_deref(), Some("plain-user"));
        policy.protect_reads = false;
    }
}

#[test]
fn wipe_and_add_write_perm_carry_the_same_live_signature() {
    let policy = policy();
    for code in [
        RequestCode::WipeWritePermOfBroker,
        RequestCode::AddWritePermOfBroker,
    ] {
        let request = RemotingCommand::request(code, 9)
            .with_ext("brokerName", "broker-sec5")
            .with_ext("AccessKey", "rocketmq2")
            .with_ext("Signature", "Ie7xI5+UAHug/ZjDrrHoI0MfeAY=");
        let who = allowed(policy.decide(&request, ip(STRANGER), None));
        assert_eq!(
            who,
            Principal {
                account: Some("rocketmq2".into()),
                admin: true,
                method: AuthMethod::Signature,
            }
        );
        assert_eq!(who.to_string(), "AccessKey=rocketmq2 (signature)");
    }
}

#[test]
fn vector_v1_register_broker_is_accepted() {
    let policy = policy();
    let body = r#"{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":1,"stateVersion":0,"timestamp":1700000000000},"topicConfigTable":{}}}"#;
    let mut request = RemotingCommand::request(RequestCode::RegisterBroker, 1)
        .with_body(Bytes::from_static(body.as_bytes()));
    for (k, v) in [
        ("AccessKey", "rocketmq2"),
        ("bodyCrc32", "385843084"),
        ("brokerAddr", "192.168.0.10:10911"),
        ("brokerId", "0"),
        ("brokerName", "broker-a"),
        ("clusterName", "DefaultCluster"),
        ("compressed", "false"),
        ("enableActingMaster", "false"),
        ("haServerAddr", "192.168.0.10:10912"),
        ("heartbeatTimeoutMillis", "30000"),
        ("Signature", "wsjBuVRePgcs9irKVQRw1S2rAT0="),
    ] {
        request = request.with_ext(k, v);
    }
    allowed(policy.decide(&request, ip(STRANGER), None));
    request.body = Some(Bytes::from_static(b"{}"));
    let (reason, _) = refusal(policy.decide(&request, ip(STRANGER), None));
    assert!(matches!(reason, RefusalReason::BadSignature { .. }));
}

/// The header of a signed REGISTER_BROKER that a real 5.5.1 broker sent
/// (AccessKey `rocketmq`), captured by a recording proxy in front of a Java
/// NameServer. Its 2,911-byte body was not kept, so only the signed text is
/// checked.
const LIVE_REGISTER_HEADER: &str = r#"{"code":103,"extFields":{"brokerName":"broker-sec5","clusterName":"SecCluster","brokerAddr":"127.0.0.1:47911","AccessKey":"rocketmq","haServerAddr":"127.0.0.1:47912","compressed":"false","bodyCrc32":"1950238419","brokerId":"0","Signature":"B3L1psRVGl+RPIh+NqgT4UeCD1w=","enableActingMaster":"false"},"flag":0,"language":"JAVA","opaque":0,"serializeTypeCurrentRPC":"JSON","version":515}"#;

#[test]
fn live_frame_header_gives_the_signed_text_in_java_order() {
    assert_eq!(LIVE_REGISTER_HEADER.len(), 385);
    let request = header::json::decode(LIVE_REGISTER_HEADER.as_bytes()).unwrap();
    assert_eq!(request.version, 515);
    let ext = request.ext_fields.as_ref().unwrap();
    let content = signature::content(ext, None, request.version);
    assert_eq!(
        String::from_utf8(content).unwrap(),
        "rocketmq1950238419127.0.0.1:479110broker-sec5SecClusterfalsefalse127.0.0.1:47912"
    );
}

#[test]
fn access_key_refusals_name_reason_key_and_code() {
    let policy = policy();
    let cases = [
        (
            wipe("b").with_ext("AccessKey", "ghost-user").with_ext("Signature", "x"),
            "User:ghost-user is not found. (request code 205)",
        ),
        (
            wipe("b").with_ext("AccessKey", ""),
            "username cannot be null. (empty AccessKey; request code 205)",
        ),
        (
            signed(wipe("b"), "retired-key", "retired-secret"),
            "User:retired-key is disabled. (request code 205)",
        ),
        (
            wipe("b").with_ext("AccessKey", "retired-key"),
            "User:retired-key is disabled. (request code 205)",
        ),
        (
            wipe("b").with_ext("AccessKey", "rocketmq2"),
            "check signature failed. (AccessKey=rocketmq2, no Signature ext field; request code 205)",
        ),
        (
            signed(wipe("b"), "rocketmq2", "wrong-secret"),
            "check signature failed. (AccessKey=rocketmq2, request code 205)",
        ),
        (
            signed(wipe("b"), "plain-user", "plain-secret"),
            "admin permission needed. (AccessKey=plain-user is not an admin; request code 205)",
        ),
        (
            wipe("b").with_ext("AccessKey", "line\nbreak-and-a-very-long-key-that-goes-on-and-on-and-on-and-on-forever"),
            "User:line\\nbreak-and-a-very-long-key-that-goes-on-and-on-and-on-and-on… is not found. (request code 205)",
        ),
    ];
    for (request, expected) in cases {
        let decision = policy.decide(&request, ip(STRANGER), None);
        let Decision::Refused(refusal) = decision else {
            panic!("{expected}: {decision:?}");
        };
        assert_eq!(refusal.remark(), expected);
        let response = refusal.response(&request);
        assert_eq!(response.response_code(), ResponseCode::NoPermission);
        assert_eq!(response.remark.as_deref(), Some(expected));
        assert!(response.is_response());
    }
}

#[test]
fn an_address_in_the_accounts_allow_list_needs_no_signature() {
    let policy = policy();
    let request = register("DefaultCluster", "broker-a", "192.168.0.3:10911")
        .with_ext("AccessKey", "broker-key");
    let who = allowed(policy.decide(&request, ip("192.168.7.5"), None));
    assert_eq!(
        who.method,
        AuthMethod::AccountAllowList {
            peer: ip("192.168.7.5")
        }
    );
    // Outside it, the missing signature counts.
    let (reason, _) = refusal(policy.decide(&request, ip("192.168.7.50"), None));
    assert!(matches!(reason, RefusalReason::MissingSignature { .. }));
}

#[test]
fn signed_broker_writes_need_no_admin_but_must_fit_the_bindings() {
    let policy = policy();
    let good = signed(
        register("DefaultCluster", "broker-a", "192.168.0.3:10911"),
        "broker-key",
        "broker-secret",
    );
    let who = allowed(policy.decide(&good, ip(STRANGER), None));
    assert!(!who.admin);

    let other = signed(
        register("DefaultCluster", "broker-b", "192.168.0.3:10911"),
        "broker-key",
        "broker-secret",
    );
    let (_, remark) = refusal(policy.decide(&other, ip(STRANGER), None));
    assert_eq!(
        remark,
        "broker identity not allowed. (AccessKey=broker-key may not claim clusterName=DefaultCluster, \
         brokerName=broker-b, brokerAddr=192.168.0.3:10911; request code 103)"
    );
    for code in [
        RequestCode::UnregisterBroker,
        RequestCode::BrokerHeartbeat,
        RequestCode::QueryDataVersion,
    ] {
        let mut moved = register("DefaultCluster", "broker-a", "10.9.9.9:10911");
        moved.code = code.into();
        let moved = signed(moved, "broker-key", "broker-secret");
        let (reason, _) = refusal(policy.decide(&moved, ip(STRANGER), None));
        assert!(
            matches!(reason, RefusalReason::BrokerNotBound { .. }),
            "{code:?}"
        );
    }
    // Accounts without bindings may claim anything; admins too.
    allowed(policy.decide(
        &signed(register("X", "y", "z"), "plain-user", "plain-secret"),
        ip(STRANGER),
        None,
    ));
    allowed(policy.decide(
        &signed(register("X", "y", "z"), "rocketmq2", "12345678"),
        ip(STRANGER),
        None,
    ));
}

#[test]
fn tls_identities_name_accounts() {
    let policy = policy();
    let request = register("DefaultCluster", "broker-a", "192.168.0.3:10911");
    let who = allowed(policy.decide(&request, ip(STRANGER), Some("CN=broker-a")));
    assert_eq!(who.account.as_deref(), Some("broker-key"));
    assert_eq!(
        who.to_string(),
        "AccessKey=broker-key (TLS identity CN=broker-a)"
    );
    // The account's bindings still apply.
    let elsewhere = register("DefaultCluster", "broker-z", "192.168.0.3:10911");
    let (reason, _) = refusal(policy.decide(&elsewhere, ip(STRANGER), Some("CN=broker-a")));
    assert!(matches!(reason, RefusalReason::BrokerNotBound { .. }));

    let (_, remark) = refusal(policy.decide(&request, ip(STRANGER), Some("CN=retired")));
    assert_eq!(remark, "User:retired-key is disabled. (request code 103)");
    // An identity naming no account falls through to the address checks.
    let (reason, remark) = refusal(policy.decide(&request, ip(STRANGER), Some("CN=unknown")));
    assert!(matches!(reason, RefusalReason::NoCredentials { .. }));
    assert_eq!(
        remark,
        "username cannot be null. (no AccessKey; the client certificate CN=unknown is no \
         account's tlsSubject, and 203.0.113.9 is not allow-listed; request code 103)"
    );
    allowed(policy.decide(&request, ip("10.10.103.4"), Some("CN=unknown")));
}

#[test]
fn unsigned_requests_fall_back_to_addresses() {
    let policy = policy();
    let request = register("DefaultCluster", "broker-a", "192.168.0.3:10911");

    // The first matching enabled account in file order wins.
    let who = allowed(policy.decide(&request, ip("192.168.7.5"), None));
    assert_eq!(who.account.as_deref(), Some("broker-key"));
    let who = allowed(policy.decide(&request, ip("192.168.7.50"), None));
    assert_eq!(who.account.as_deref(), Some("second-by-address"));
    // A disabled account's address grants nothing.
    let (reason, _) = refusal(policy.decide(&request, ip("172.16.0.1"), None));
    assert!(matches!(reason, RefusalReason::NoCredentials { .. }));

    // The global allow-list: broker rights, never admin.
    let who = allowed(policy.decide(&request, ip("10.10.103.4"), None));
    assert_eq!(
        who.to_string(),
        "allow-listed address 10.10.103.4 (globalWhiteRemoteAddresses)"
    );
    assert!(!who.admin);
    let (_, remark) = refusal(policy.decide(&wipe("b"), ip("10.10.103.4"), None));
    assert_eq!(
        remark,
        "admin permission needed. (10.10.103.4 is allow-listed for broker requests only; request code 205)"
    );
    // IPv4-mapped peers are their IPv4 address.
    let who = allowed(policy.decide(&request, ip("::ffff:10.10.103.4"), None));
    assert_eq!(
        who.method,
        AuthMethod::GlobalAllowList {
            peer: ip("10.10.103.4")
        }
    );

    let (_, remark) = refusal(policy.decide(&request, ip(STRANGER), None));
    assert_eq!(
        remark,
        "username cannot be null. (no AccessKey, and 203.0.113.9 is not allow-listed; request code 103)"
    );
}

#[test]
fn unique_key_query_added_after_signing_counts_only_for_old_versions() {
    let policy = policy();
    for (version, accepted) in [(399, true), (400, false)] {
        let mut request = signed(wipe("broker-a"), "rocketmq2", "12345678");
        request.version = version;
        // What 4.9.3-and-older clients do: add the field after the ACL hook.
        request = request.with_ext("_UNIQUE_KEY_QUERY", "false");
        let decision = policy.decide(&request, ip(STRANGER), None);
        assert_eq!(
            matches!(decision, Decision::Allowed { .. }),
            accepted,
            "version {version}: {decision:?}"
        );
    }
}

#[test]
fn ten_thousand_garbage_credentials_never_panic() {
    let policy = policy();
    let mut rng = fastrand::Rng::with_seed(0x5eed_2026);
    let keys = ["rocketmq2", "broker-key", "retired-key", "plain-user", ""];
    let codes = [
        100,
        101,
        103,
        104,
        105,
        205,
        319,
        322,
        327,
        904,
        -1,
        i32::MAX,
    ];
    let mut outcomes = [0usize; 3];
    for _ in 0..10_000 {
        let mut request = RemotingCommand::request(codes[rng.usize(..codes.len())], rng.i32(..));
        request.version = rng.i32(..);
        let access_key = if rng.bool() {
            keys[rng.usize(..keys.len())].to_owned()
        } else {
            garbage(&mut rng)
        };
        if rng.u8(..10) > 0 {
            request = request.with_ext("AccessKey", access_key);
        }
        if rng.bool() {
            request = request.with_ext("Signature", garbage(&mut rng));
        }
        for _ in 0..rng.usize(..4) {
            request = request.with_ext(garbage(&mut rng), garbage(&mut rng));
        }
        if rng.bool() {
            request.body = Some(Bytes::from(
                (0..rng.usize(..64))
                    .map(|_| rng.u8(..))
                    .collect::<Vec<u8>>(),
            ));
        }
        if rng.u8(..10) == 0 {
            Credentials::new("plain-user", "plain-secret").sign_request(&mut request);
        }
        let peer = if rng.bool() {
            IpAddr::from(rng.u32(..).to_be_bytes())
        } else {
            IpAddr::from(rng.u128(..).to_be_bytes())
        };
        let identity = garbage(&mut rng);
        let tls = rng.bool().then_some(identity.as_str());
        let decision = policy.decide(&request, peer, tls);
        let slot = match &decision {
            Decision::Open => 0,
            Decision::Allowed { .. } => 1,
            Decision::Refused(refusal) => {
                let remark = refusal.remark();
                assert!(
                    remark.contains(&format!("request code {}", request.code)),
                    "{remark}"
                );
                assert!(!remark.contains('\n'), "{remark:?}");
                2
            }
        };
        outcomes[slot] += 1;
    }
    assert!(outcomes.iter().all(|&n| n > 0), "{outcomes:?}");
}

/// Random text: mostly printable, some control characters and astral planes.
fn garbage(rng: &mut fastrand::Rng) -> String {
    let len = rng.usize(..40);
    (0..len)
        .map(|_| match rng.u8(..10) {
            0 => char::from_u32(rng.u32(0..0x20)).unwrap_or('?'),
            1 => char::from_u32(rng.u32(0x1_0000..0x11_0000)).unwrap_or('?'),
            2 => '=',
            _ => rng.alphanumeric(),
        })
        .collect()
}
