use std::net::IpAddr;

use super::*;

fn parse(text: &str) -> Result<(Accounts, Vec<String>), AccountsError> {
    Accounts::parse(text, "acl.yml", LoadOptions::default())
}

fn error(text: &str) -> String {
    parse(text).expect_err("should be refused").to_string()
}

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

/// Shaped like 4.9.x `distribution/conf/plain_acl.yml`, with other keys.
const PLAIN_ACL: &str = r#"globalWhiteRemoteAddresses:
  - 10.10.103.*
  - 192.168.0.*

accounts:
  - accessKey: RocketMQ-app
    secretKey: 12345678
    whiteRemoteAddress:
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - topicA=DENY
    groupPerms:
      - groupA=DENY

  - accessKey: rocketmq-admin
    secretKey: "87654321"
    whiteRemoteAddress: 192.168.1.*
    # if it is admin, it could access all resources
    admin: true
    tlsSubject: CN=ops
    brokers:
      - clusterName: DefaultCluster
        brokerAddr: 192.168.1.*:10911
dataVersion:
  - counter: 1
    timestamp: 1700000000000
"#;

#[test]
fn reads_plain_acl_yml() {
    let (accounts, warnings) = parse(PLAIN_ACL).unwrap();
    assert_eq!(accounts.len(), 2);
    assert_eq!(accounts.origin(), "acl.yml");

    let app = accounts.get("RocketMQ-app").unwrap();
    assert_eq!(
        app.secret_key(),
        "12345678",
        "a YAML number is read as its text"
    );
    assert!(!app.is_admin() && app.is_enabled());
    assert!(app.white_remote_address().is_none());

    let admin = accounts.get("rocketmq-admin").unwrap();
    assert!(admin.is_admin());
    assert_eq!(admin.tls_subject(), Some("CN=ops"));
    assert_eq!(admin.brokers().len(), 1);
    assert!(admin
        .white_remote_address()
        .unwrap()
        .matches(&ip("192.168.1.7")));

    assert!(accounts.globally_allowed(&ip("10.10.103.9")));
    assert!(!accounts.globally_allowed(&ip("10.10.104.9")));
    assert_eq!(accounts.global_allow_list().len(), 2);
    assert_eq!(
        accounts
            .by_address(&ip("192.168.1.7"))
            .unwrap()
            .access_key(),
        "rocketmq-admin"
    );
    assert_eq!(
        accounts.by_tls_subject("CN=ops").unwrap().access_key(),
        "rocketmq-admin"
    );
    assert!(accounts.by_tls_subject("CN=other").is_none());
    assert_eq!(
        accounts.iter().map(Account::access_key).collect::<Vec<_>>(),
        ["RocketMQ-app", "rocketmq-admin"]
    );

    assert_eq!(
        warnings,
        [
            "acl.yml:10: accounts[0].defaultTopicPerm is ignored: Waymark checks no topic permissions",
            "acl.yml:11: accounts[0].defaultGroupPerm is ignored: Waymark checks no group permissions",
            "acl.yml:13: accounts[0].topicPerms is ignored: Waymark checks no topic permissions",
            "acl.yml:15: accounts[0].groupPerms is ignored: Waymark checks no group permissions",
            "acl.yml:27: dataVersion is ignored: Waymark keeps no ACL data version",
        ]
    );
    assert!(
        !format!("{accounts:?}").contains("87654321"),
        "Debug hides secrets"
    );
}

#[test]
fn reads_5x_users_and_session_credentials_as_json() {
    let text = r#"[
  {"username": "ops-admin", "password": "ops-password", "userType": "Super", "userStatus": "enable"},
  {"username": "retired-user", "password": "whatever-1", "userType": "Normal", "userStatus": "disable"},
  {"username": "coded-user", "password": "whatever-2", "userType": 1, "userStatus": 1},
  {"accessKey": "broker-a-key", "secretKey": "broker-a-secret",
   "brokers": [{"clusterName": "C", "brokerName": "broker-a"}]},
  {"accessKey": "broker-b-key", "secretKey": "broker-b-secret", "admin": true, "securityToken": "t"}
]"#;
    let (accounts, warnings) = Accounts::parse(text, "users.json", LoadOptions::default()).unwrap();
    assert!(accounts.get("ops-admin").unwrap().is_admin());
    let retired = accounts.get("retired-user").unwrap();
    assert!(!retired.is_enabled() && !retired.is_admin());
    assert!(accounts.get("coded-user").unwrap().is_admin());
    let broker = accounts.get("broker-a-key").unwrap();
    assert!(
        !broker.is_admin(),
        "SessionCredentials give broker rights only"
    );
    assert_eq!(broker.brokers()[0].broker_name.as_deref(), Some("broker-a"));
    assert!(accounts.get("broker-b-key").unwrap().is_admin());
    assert_eq!(
        warnings,
        ["users.json:7: [4].securityToken is ignored: no server checks security tokens"]
    );
}

#[test]
fn errors_name_file_line_and_field() {
    let cases = [
        (
            "accounts:\n  - accessKey: abcdef\n    secretKey: 1234567\n",
            "acl.yml:2: accounts[0].accessKey \"abcdef\" is 6 characters; Java requires more than 6",
        ),
        (
            "accounts:\n  - accessKey: abcdefg\n    secretKey: 123456\n",
            "acl.yml:3: accounts[0].secretKey the secret of \"abcdefg\" is 6 characters; Java requires more than 6",
        ),
        (
            "accounts:\n  - accessKey: abcdefg\n",
            "acl.yml:2: accounts[0] account \"abcdefg\" has no secretKey (or password)",
        ),
        (
            "accounts:\n  - secretKey: abcdefg\n",
            "acl.yml:2: accounts[0] has no accessKey (or username)",
        ),
        (
            "accounts:\n  - accessKey: abcdefg\n    secretKey: abcdefg\n  - accessKey: abcdefg\n    secretKey: other-secret\n",
            "acl.yml:4: accounts[1] repeats access key \"abcdefg\" of accounts[0]",
        ),
        (
            "accounts:\n  - accessKey: abcdefg\n    secretKey: abcdefg\n    whiteRemoteAddress: 10.0.0.256\n",
            "acl.yml:4: accounts[0].whiteRemoteAddress invalid address pattern \"10.0.0.256\": not an IP address",
        ),
        (
            "globalWhiteRemoteAddresses:\n  - 10.0.0.*\n  - 10.0.*\n",
            "acl.yml:3: globalWhiteRemoteAddresses[1] invalid address pattern \"10.0.*\": an IPv4 pattern has four octets",
        ),
        (
            "accounts:\n  - accessKey: abcdefg\n    secretKey: abcdefg\n    admin: maybe\n",
            "acl.yml:4: accounts[0].admin \"maybe\" is not true or false",
        ),
        (
            "accounts:\n  - accessKey: abcdefg\n    secretKey: abcdefg\n    username: abcdefgh\n",
            "acl.yml:2: accounts[0] has both accessKey and username; use one",
        ),
        (
            "accounts:\n  - accessKey: abcdefg\n    secretKey: 1.5e10\n",
            "acl.yml:3: accounts[0].secretKey is a decimal number; quote it to make it text",
        ),
        (
            "accounts:\n  - accessKey: abcdefg\n    secretKey: abcdefg\n    brokers:\n      - brokername: a\n",
            "acl.yml:5: accounts[0].brokers[0].brokername is not a binding field (clusterName, brokerName, brokerAddr)",
        ),
        ("accounts: none\n", "acl.yml:1: accounts must be a list"),
        ("- a\n- b\n", "acl.yml:1: expected a mapping with accounts and globalWhiteRemoteAddresses"),
        ("accounts:\n  - accessKey: [x\n", "acl.yml:3: "),
    ];
    for (text, expected) in cases {
        let got = error(text);
        assert!(got.starts_with(expected), "\n got: {got}\nwant: {expected}");
    }
}

#[test]
fn json_errors_name_the_line_too() {
    let text = "[\n  {\"username\": \"abcdefg\", \"password\": \"abcdefg\"},\n  {\"username\": \"abcdefh\",\n   \"password\": \"abcdefg\", \"userStatus\": \"disabled\"}\n]";
    let err = Accounts::parse(text, "users.json", LoadOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "users.json:4: [1].userStatus \"disabled\" is not enable or disable"
    );
    let err = Accounts::parse(
        "[\n  {\"username\": \"abcdefg\",,}\n]",
        "users.json",
        LoadOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().starts_with("users.json:2: "), "{err}");
    let err = Accounts::parse("[\n 1\n]", "users.json", LoadOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "users.json:2: [0] an account must be a mapping"
    );
}

#[test]
fn public_defaults_are_refused_unless_allowed() {
    for (ak, sk) in [("rocketmq2", "12345678"), ("RocketMQ", "12345678")] {
        let text = format!("accounts:\n  - accessKey: {ak}\n    secretKey: {sk}\n");
        let err = error(&text);
        assert!(err.contains("published default credentials"), "{err}");
        assert!(!err.contains(sk), "the secret is not echoed: {err}");

        let allowed = LoadOptions {
            allow_public_defaults: true,
        };
        let (accounts, warnings) = Accounts::parse(&text, "acl.yml", allowed).unwrap();
        assert!(accounts.get(ak).is_some());
        assert!(
            warnings[0].contains("anyone can sign as it"),
            "{warnings:?}"
        );
    }
    // Same key, another secret: fine.
    parse("accounts:\n  - accessKey: rocketmq2\n    secretKey: not-the-default\n").unwrap();
}

#[test]
fn duplicate_tls_subjects_are_refused() {
    let text = "[{\"accessKey\":\"abcdefg\",\"secretKey\":\"abcdefg\",\"tlsSubject\":\"CN=a\"},\n {\"accessKey\":\"abcdefh\",\"secretKey\":\"abcdefg\",\"tlsSubject\":\"CN=a\"}]";
    let err = Accounts::parse(text, "u.json", LoadOptions::default()).unwrap_err();
    assert!(
        err.to_string()
            .contains("[1].tlsSubject repeats the tlsSubject of [0]"),
        "{err}"
    );
}

#[test]
fn key_length_counts_utf16_units_as_java_does() {
    // Six characters, one of them above the BMP: seven UTF-16 units, so Java accepts it.
    let (accounts, _) =
        parse("accounts:\n  - accessKey: \"abcde\u{1F600}\"\n    secretKey: abcdefg\n").unwrap();
    assert_eq!(accounts.len(), 1);
}

#[test]
fn empty_documents_load_with_a_warning() {
    for text in ["", "# nothing\n", "accounts:\n", "\u{feff}accounts: []\n"] {
        let (accounts, warnings) = parse(text).unwrap();
        assert!(accounts.is_empty());
        assert!(
            warnings[0].contains("every protected request will be refused"),
            "{warnings:?}"
        );
    }
    let (accounts, _) = Accounts::parse("[]", "u.json", LoadOptions::default()).unwrap();
    assert!(accounts.is_empty());
}

#[test]
fn disabled_accounts_are_kept_but_never_found_by_address() {
    let text = r#"[{"username":"abcdefg","password":"abcdefg","userStatus":"disable","whiteRemoteAddress":"10.0.0.*"},
 {"username":"abcdefh","password":"abcdefg","whiteRemoteAddress":"10.0.0.1-9"}]"#;
    let (accounts, _) = Accounts::parse(text, "u.json", LoadOptions::default()).unwrap();
    assert!(!accounts.get("abcdefg").unwrap().is_enabled());
    assert_eq!(
        accounts.by_address(&ip("10.0.0.5")).unwrap().access_key(),
        "abcdefh"
    );
    assert!(accounts.by_address(&ip("10.0.0.50")).is_none());
}

#[test]
fn unknown_fields_are_warned_about() {
    let (_, warnings) = parse("colour: blue\naccounts:\n  - accessKey: abcdefg\n    secretKey: abcdefg\n    acessKey: typo\n").unwrap();
    assert_eq!(
        warnings,
        [
            "acl.yml:1: colour is not a plain_acl.yml field; ignored",
            "acl.yml:5: accounts[0].acessKey is not an account field; ignored",
        ]
    );
}

#[test]
fn patterns_that_match_everyone_are_warned_about() {
    let (accounts, warnings) = parse(
        "globalWhiteRemoteAddresses:\n  - '*'\naccounts:\n  - accessKey: abcdefg\n    secretKey: abcdefg\n    whiteRemoteAddress: '*.*.*.*'\n",
    )
    .unwrap();
    assert!(accounts.globally_allowed(&ip("8.8.8.8")));
    assert_eq!(
        warnings,
        [
            "acl.yml:2: globalWhiteRemoteAddresses[0] matches every address: any peer gets broker rights without credentials",
            "acl.yml:6: accounts[0].whiteRemoteAddress matches every address: any peer acts as this account without a signature",
        ]
    );
}
