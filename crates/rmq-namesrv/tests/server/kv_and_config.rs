//! KV store and configuration over TCP: answers, the kvConfig.json file in
//! Java's format, reload after a restart, a value too large for the header
//! limit, the UPDATE_NAMESRV_CONFIG black list and persistence,
//! GET_NAMESRV_CONFIG.

use rmq_wire::{RequestCode as C, ResponseCode as R};

use crate::common::*;

fn put(namespace: &str, key: &str, value: &str) -> rmq_wire::RemotingCommand {
    request(
        C::PutKvConfig,
        &[("namespace", namespace), ("key", key), ("value", value)],
    )
}

fn get(namespace: &str, key: &str) -> rmq_wire::RemotingCommand {
    request(C::GetKvConfig, &[("namespace", namespace), ("key", key)])
}

#[tokio::test]
async fn kv_requests_persist_in_java_format_and_survive_a_restart() {
    let dir = TempDir::new();
    let file = dir.path("kvConfig.json");
    let server = Server::start(&dir, &[]);
    let response = server
        .call(put(
            "ORDER_TOPIC_CONFIG",
            "TopicOrder",
            "broker-a:4;broker-b:4",
        ))
        .await;
    assert_code(&response, R::Success);
    assert!(response.ext_fields.is_none() && response.remark.is_none());
    assert_code(&server.call(put("ns", "k", "v")).await, R::Success);
    let found = server.call(get("ns", "k")).await;
    assert_code(&found, R::Success);
    assert_eq!(
        found.ext_fields,
        Some([("value".to_string(), "v".to_string())].into())
    );
    // Killed (SIGKILL): the acknowledged writes are in the journal alone.
    server.stop();
    assert!(!file.exists());

    // The start folds the journal into kvConfig.json, in Java's format.
    let server = Server::start(&dir, &[]);
    assert_eq!(
        read(&file),
        r#"{"configTable":{"ORDER_TOPIC_CONFIG":{"TopicOrder":"broker-a:4;broker-b:4"},"ns":{"k":"v"}}}"#
    );
    let deleted = server
        .call(request(
            C::DeleteKvConfig,
            &[("namespace", "ns"), ("key", "k")],
        ))
        .await;
    assert_code(&deleted, R::Success);
    let list = server
        .call(request(C::GetKvlistByNamespace, &[("namespace", "ns")]))
        .await;
    assert_eq!(
        body_text(&list),
        r#"{"table":{}}"#,
        "an emptied namespace stays"
    );
    let missing = server
        .call(request(C::GetKvlistByNamespace, &[("namespace", "none")]))
        .await;
    assert_code(&missing, R::QueryNotFound);
    assert_eq!(
        missing.remark.as_deref(),
        Some("No config item, Namespace: none")
    );
    // A graceful stop leaves kvConfig.json complete (as a Java NameServer
    // started on it would read it), the previous content kept as .bak.
    assert!(server
        .terminate(std::time::Duration::from_secs(10))
        .success());
    assert_eq!(
        read(&file),
        r#"{"configTable":{"ORDER_TOPIC_CONFIG":{"TopicOrder":"broker-a:4;broker-b:4"},"ns":{}}}"#
    );
    assert_eq!(
        read(&dir.path("kvConfig.json.bak")),
        r#"{"configTable":{"ORDER_TOPIC_CONFIG":{"TopicOrder":"broker-a:4;broker-b:4"},"ns":{"k":"v"}}}"#,
        "the previous content is kept as .bak"
    );
    assert_eq!(read(&dir.path("kvConfig.json.journal")), "");

    let server = Server::start(&dir, &[]);
    let reloaded = server.call(get("ORDER_TOPIC_CONFIG", "TopicOrder")).await;
    assert_eq!(reloaded.ext("value"), Some("broker-a:4;broker-b:4"));
    assert_code(&server.call(get("ns", "k")).await, R::QueryNotFound);
    // The order config goes back to every registering broker.
    let reg = Register::new("broker-a", "127.0.0.1:10911", 0, &["a", "b"]);
    let response = server.call(reg.request()).await; // the broker leaves again: fine here
    assert_eq!(
        body_text(&response),
        r#"{"table":{"TopicOrder":"broker-a:4;broker-b:4"}}"#
    );
}

/// Writes acknowledged on several connections at once, across journal
/// compactions (a small bound), then SIGKILL: every one of them, deletions
/// included, is there after the restart.
#[tokio::test]
async fn acknowledged_kv_writes_survive_sigkill_and_compactions() {
    let dir = TempDir::new();
    let bound = [("kvJournalCompactionMinBytes", "4096")];
    let server = Server::start(&dir, &bound);
    let value = "v".repeat(500);
    let mut writers = Vec::new();
    for connection in 0..4 {
        let client = server.client().await;
        let value = value.clone();
        writers.push(tokio::spawn(async move {
            // All of a connection's requests in flight at once.
            let send = |request: rmq_wire::RemotingCommand| {
                let client = client.clone();
                tokio::spawn(async move { client.invoke(request, TIMEOUT).await })
            };
            let puts: Vec<_> = (0..25)
                .map(|n| send(put("ns", &format!("{connection}-{n}"), &value)))
                .collect();
            for answer in puts {
                assert_code(&answer.await.unwrap().expect("answer"), R::Success);
            }
            // Every other key deleted again.
            let deletes: Vec<_> = (0..25)
                .step_by(2)
                .map(|n| {
                    let key = format!("{connection}-{n}");
                    send(request(
                        C::DeleteKvConfig,
                        &[("namespace", "ns"), ("key", &key)],
                    ))
                })
                .collect();
            for answer in deletes {
                assert_code(&answer.await.unwrap().expect("answer"), R::Success);
            }
        }));
    }
    for writer in writers {
        writer.await.unwrap();
    }
    let compacted = read(&dir.path("kvConfig.json"));
    assert!(
        compacted.starts_with(r#"{"configTable":{"ns":{"#),
        "{compacted}"
    );
    server.stop();

    let server = Server::start(&dir, &bound);
    for connection in 0..4 {
        for n in 0..25 {
            let found = server.call(get("ns", &format!("{connection}-{n}"))).await;
            if n % 2 == 0 {
                assert_code(&found, R::QueryNotFound);
            } else {
                assert_eq!(found.ext("value"), Some(value.as_str()), "{connection}-{n}");
            }
        }
    }
    // The file alone, as Java reads it, holds exactly the surviving keys.
    let file: serde_json::Value = serde_json::from_str(&read(&dir.path("kvConfig.json"))).unwrap();
    let keys = file["configTable"]["ns"].as_object().unwrap();
    assert_eq!(keys.len(), 4 * 12);
    assert!(keys
        .keys()
        .all(|key| key
            .split('-')
            .nth(1)
            .is_some_and(|n| n.parse::<u32>().unwrap() % 2 == 1)));
}

/// A 10 MiB value puts PUT_KV_CONFIG's header over `maxHeaderBytes` (64
/// KiB) while its frame is within the 16 MiB frame limit: the request is
/// answered under its opaque, naming the limit and the field, nothing is
/// stored, and the same connection serves the next request. A frame over
/// the frame limit still closes the connection.
#[tokio::test]
async fn a_kv_value_over_the_header_limit_is_answered_and_the_connection_kept() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let mut raw = Raw::connect(server.addr).await;
    let mut large = put("ns", "big", &"v".repeat(10 << 20));
    large.opaque = 4242;
    raw.send_command(&large).await;
    let answer = raw
        .read_command(TIMEOUT)
        .await
        .expect("answered, not closed");
    assert_eq!(answer.opaque, 4242);
    assert!(answer.is_response());
    assert_code(&answer, R::InvalidParameter);
    let remark = answer.remark.clone().unwrap_or_default();
    assert!(
        remark.contains("maxHeaderBytes")
            && remark.contains("65536")
            && remark.contains("\"value\""),
        "{remark}"
    );

    let mut normal = put("ns", "small", "v");
    normal.opaque = 4243;
    raw.send_command(&normal).await;
    let answer = raw
        .read_command(TIMEOUT)
        .await
        .expect("the connection serves on");
    assert_eq!(answer.opaque, 4243);
    assert_code(&answer, R::Success);
    assert_code(&server.call(get("ns", "big")).await, R::QueryNotFound);

    raw.send(&16_777_213u32.to_be_bytes()).await;
    assert!(
        raw.closed_by_peer(TIMEOUT).await,
        "over the frame limit: closed"
    );
}

#[tokio::test]
async fn a_malformed_kv_file_without_a_backup_stops_start_up() {
    let dir = TempDir::new();
    for content in ["{not json", ""] {
        std::fs::write(dir.path("kvConfig.json"), content).unwrap();
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_rmq-namesrv"))
            .args(["--listen", "127.0.0.1:0", "--set"])
            .arg(format!(
                "kvConfigPath={}",
                dir.path("kvConfig.json").display()
            ))
            .output()
            .unwrap();
        assert!(!output.status.success());
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(
            said.contains(&dir.path("kvConfig.json").display().to_string())
                && said.contains("refusing to start"),
            "{said}"
        );
    }
}

/// An emptied kvConfig.json (a full disk, a careless edit) is not taken for
/// an empty store: the server restores the backup every rewrite keeps.
#[tokio::test]
async fn a_damaged_kv_file_is_restored_from_its_backup_at_start_up() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    assert_code(&server.call(put("ns", "kept", "1")).await, R::Success);
    server.stop();
    // This start writes kvConfig.json with "kept"; the graceful stop
    // rewrites it with "last" too, keeping the previous one as the backup.
    let server = Server::start(&dir, &[]);
    assert_code(&server.call(put("ns", "last", "2")).await, R::Success);
    assert!(server
        .terminate(std::time::Duration::from_secs(10))
        .success());
    std::fs::write(dir.path("kvConfig.json"), "").unwrap();

    let server = Server::start(&dir, &[]);
    let kept = server.call(get("ns", "kept")).await;
    assert_code(&kept, R::Success);
    assert_eq!(kept.ext("value"), Some("1"));
    // The backup predates the last rewrite; that one is lost, and the log says so.
    assert_code(&server.call(get("ns", "last")).await, R::QueryNotFound);
    assert!(dir.path("kvConfig.json.corrupt").exists());
    let log = read(&dir.path("server.log"));
    assert!(log.contains("restored from its backup"), "{log}");
}

#[tokio::test]
async fn update_config_black_list_and_persistence() {
    let dir = TempDir::new();
    let store = dir.path("namesrv.properties");
    let server = Server::start(&dir, &[]);
    let update = |text: &str| request(C::UpdateNamesrvConfig, &[]).with_body(text.to_owned());

    for text in [
        "configStorePath=/tmp/evil",
        "kvConfigPath=/tmp/evil",
        "configBlackList=",
        "rocketmqHome=/tmp",
        "enableTopicList=false\nconfigStorePath=/tmp/evil",
    ] {
        let response = server.call(update(text)).await;
        assert_code(&response, R::NoPermission);
        assert_eq!(
            response.remark.as_deref(),
            Some("Can not update config in black list."),
            "{text}"
        );
    }
    assert!(!store.exists(), "nothing applied, nothing written");
    let config = body_text(&server.call(request(C::GetNamesrvConfig, &[])).await);
    assert!(config.contains("enableTopicList=true\n"));

    let response = server
        .call(update(
            "enableTopicList=false\norderMessageEnable = true\nsomethingUnknown=1\n",
        ))
        .await;
    assert_code(&response, R::Success);
    let persisted = read(&store);
    assert!(persisted.contains("enableTopicList=false\n"), "{persisted}");
    assert!(persisted.contains("orderMessageEnable=true\n"));
    assert!(!persisted.contains("somethingUnknown"));
    let config = server.call(request(C::GetNamesrvConfig, &[])).await;
    assert_code(&config, R::Success);
    assert_eq!(
        body_text(&config),
        persisted,
        "GET_NAMESRV_CONFIG = the persisted text"
    );
    // And it took effect.
    let response = server
        .call(request(C::GetTopicsByCluster, &[("cluster", "c")]))
        .await;
    assert_eq!(response.remark.as_deref(), Some("disable"));
}

/// A line break in an updated value (`\n` is a line break to Java's
/// `Properties.load`) once became an extra line of the saved file, so a
/// black-listed key took effect at the next restart. Now the update is
/// refused, naming the key, and a value with a backslash survives a
/// restart unchanged.
#[tokio::test]
async fn update_config_refuses_line_breaks_and_bad_values() {
    let dir = TempDir::new();
    let store = dir.path("namesrv.properties");
    let server = Server::start(&dir, &[]);
    let update = |text: &str| request(C::UpdateNamesrvConfig, &[]).with_body(text.to_owned());

    for (text, names) in [
        (
            r"enableTopicList=false\nkvConfigPath=/tmp/evil",
            "enableTopicList",
        ),
        (r"productEnvName=x\r\nconfigBlackList=", "productEnvName"),
        (r"evil\u000AkvConfigPath=/tmp/evil", "evil"),
        ("listenPort=70000", "listenPort"),
        ("serverWorkerThreads=many", "serverWorkerThreads"),
        ("enableTopicList=perhaps", "enableTopicList"),
    ] {
        let response = server.call(update(text)).await;
        assert_code(&response, R::InvalidParameter);
        let remark = response.remark.clone().unwrap_or_default();
        assert!(remark.contains(names), "{text}: {remark}");
    }
    assert!(!store.exists(), "nothing applied, nothing written");
    let config = body_text(&server.call(request(C::GetNamesrvConfig, &[])).await);
    assert!(config.contains("enableTopicList=true\n"), "{config}");
    assert!(!config.contains("listenPort=70000"), "{config}");

    // A backslash (an escape in a properties file) is kept as written.
    let response = server.call(update(r"productEnvName=east\\zone")).await;
    assert_code(&response, R::Success);
    let persisted = read(&store);
    assert!(
        persisted.contains("productEnvName=east\\\\zone\n"),
        "{persisted}"
    );
    server.stop();

    let args = [
        "--listen",
        "127.0.0.1:0",
        "-c",
        store.to_str().unwrap(),
        "--set",
        &format!("kvConfigPath={}", dir.path("kvConfig.json").display()),
    ]
    .map(str::to_owned);
    let again = Server::spawn(&dir, &args, &[]);
    let config = body_text(&again.call(request(C::GetNamesrvConfig, &[])).await);
    assert!(config.contains("productEnvName=east\\zone\n"), "{config}");
    assert!(
        config.contains(&format!(
            "kvConfigPath={}\n",
            dir.path("kvConfig.json").display()
        )),
        "{config}"
    );
}

#[tokio::test]
async fn get_namesrv_config_lists_every_option_sorted() {
    let dir = TempDir::new();
    let server = Server::start_with_env(
        &dir,
        &[("supportActingMaster", "true")],
        &[("ROCKETMQ_HOME", "/opt/rocketmq")],
    );
    let text = body_text(&server.call(request(C::GetNamesrvConfig, &[])).await);
    let lines: Vec<&str> = text.lines().collect();
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted);
    // 40 options and the harness's httpListenAddr, echoed as Java echoes
    // every key it was started with.
    assert_eq!(lines.len(), 41, "{text}");
    assert!(text.contains("\nhttpListenAddr=127.0.0.1:0\n"), "{text}");
    assert!(text.ends_with('\n'));
    for expected in [
        "supportActingMaster=true".to_string(),
        format!("kvConfigPath={}", dir.path("kvConfig.json").display()),
        format!("listenPort={}", server.addr.port()),
        "bindAddress=127.0.0.1".to_string(),
        "configBlackList=configBlackList;configStorePath;kvConfigPath".to_string(),
        "scanNotActiveBrokerInterval=5000".to_string(),
        "rocketmqHome=/opt/rocketmq".to_string(),
    ] {
        assert!(lines.contains(&expected.as_str()), "{expected} in\n{text}");
    }
}
