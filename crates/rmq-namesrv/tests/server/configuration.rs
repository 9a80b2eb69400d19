//! Honest configuration (docs/configuration.md): a value Java would silently
//! replace by its default stops the start naming the key, and
//! UPDATE_NAMESRV_CONFIG refuses it the same way; keys Waymark ignores are
//! named in one start-up warning when set, and marked by `-p`.

use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use rmq_wire::{RequestCode as C, ResponseCode as R};

use crate::common::*;

/// Runs the binary with `args` (HOME = `dir`, ROCKETMQ_HOME set) to its exit, killing it and
/// failing if it is still running after 10 s (it would be serving: the
/// configuration was accepted). Returns the status, stdout and stderr.
fn run_to_exit(dir: &TempDir, args: &[String]) -> (ExitStatus, String, String) {
    let (out, err) = (dir.path("stdout.txt"), dir.path("stderr.txt"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_rmq-namesrv"))
        .args(args)
        .env("HOME", &dir.0)
        .env("ROCKETMQ_HOME", "/opt/rocketmq")
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "rmq-namesrv {args:?} kept running; stderr:\n{}",
                std::fs::read_to_string(&err).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |path| std::fs::read_to_string(path).unwrap();
    (status, read(&out), read(&err))
}

#[test]
fn bad_values_stop_start_up_naming_origin_key_value_and_expectation() {
    let dir = TempDir::new();
    let file = dir.path("namesrv.properties");
    std::fs::write(&file, "listenPort=abc\nserverSocketBacklog=-5\n").unwrap();
    let args: Vec<String> = [
        "-c",
        &file.display().to_string(),
        "--listen",
        "127.0.0.1:0",
        "--set",
        "enableTopicList=yes",
    ]
    .map(str::to_owned)
    .to_vec();
    let (status, stdout, stderr) = run_to_exit(&dir, &args);
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(!stdout.contains("boot success"), "{stdout}");
    let file = file.display();
    for expected in [
        format!(
            "{file}: invalid value for listenPort: a port must be from 0 to 65535 (got \"abc\")"
        ),
        format!("{file}: invalid value for serverSocketBacklog: must be at least 0 (got \"-5\")"),
        "--set: invalid value for enableTopicList: must be true or false (got \"yes\")".to_owned(),
    ] {
        assert!(stderr.contains(&expected), "{expected} in\n{stderr}");
    }

    // -p prints only a configuration the server would start with.
    let args = ["-p", "--set", "defaultThreadPoolNums=0"].map(str::to_owned);
    let (status, stdout, stderr) = run_to_exit(&dir, &args);
    assert_eq!(status.code(), Some(1), "{stdout}");
    assert!(
        stderr.contains("invalid value for defaultThreadPoolNums: must be at least 1"),
        "{stderr}"
    );
}

#[tokio::test]
async fn ignored_keys_set_by_the_operator_are_named_in_one_warning() {
    let dir = TempDir::new();
    let server = Server::start(
        &dir,
        &[
            ("serverWorkerThreads", "16"),
            ("clusterTest", "true"),
            // Honoured, and a default value: neither is in the warning.
            ("serverSocketBacklog", "64"),
            ("serverSelectorThreads", "3"),
        ],
    );
    // The warning is logged before the listener is bound, so it is in the
    // log by the time the boot line is out.
    let log = std::fs::read_to_string(dir.path("server.log")).unwrap();
    let warnings: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("accepted but ignored"))
        .collect();
    assert_eq!(warnings.len(), 1, "{log}");
    let warning = warnings[0];
    assert!(warning.contains("WARN"), "{warning}");
    assert!(
        warning.contains("serverWorkerThreads=16 (Netty thread tuning"),
        "{warning}"
    );
    assert!(
        warning.contains("clusterTest=true (cluster-test mode"),
        "{warning}"
    );
    assert!(!warning.contains("serverSocketBacklog"), "{warning}");
    assert!(!warning.contains("serverSelectorThreads"), "{warning}");

    // Accepted all the same: GET_NAMESRV_CONFIG shows them, as Java's text.
    let text = body_text(&server.call(request(C::GetNamesrvConfig, &[])).await);
    assert!(text.contains("\nserverWorkerThreads=16\n"), "{text}");
    assert!(!text.contains('#'), "{text}");
}

#[test]
fn print_marks_ignored_keys_and_still_reads_as_properties() {
    let dir = TempDir::new();
    let args = ["-p", "--set", "customKey=kept"].map(str::to_owned);
    let (status, stdout, stderr) = run_to_exit(&dir, &args);
    assert!(status.success(), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    let before = |line: &str| {
        let at = lines.iter().position(|l| *l == line);
        lines[at.unwrap_or_else(|| panic!("{line} in\n{stdout}")) - 1]
    };
    assert!(before("serverWorkerThreads=8").starts_with("# ignored: "));
    assert!(before("useEpollNativeSelector=false").starts_with("# ignored: "));
    assert!(before("customKey=kept").starts_with("# unknown key: "));
    assert!(!before("serverSocketBacklog=1024").starts_with('#'));
    let properties = rmq_protocol::properties::parse(&stdout).unwrap();
    let limits = rmq_transport::ServerLimits::KEYS.len();
    assert_eq!(
        properties.len(),
        41 + limits
            + rmq_namesrv::limits::LimitKeys::KEYS.len()
            + rmq_namesrv::config::SnapshotKeys::KEYS.len()
            + rmq_namesrv::config::OpsKeys::KEYS.len()
            + rmq_namesrv::cluster::ClusterKeys::KEYS.len()
            + rmq_namesrv::security::AuthKeys::KEYS.len(),
        "40 options, customKey, the limits, the route snapshot keys, the HTTP port, the cluster keys and the authentication keys"
    );
    assert_eq!(properties["httpListenAddr"], "127.0.0.1:9877");
    assert_eq!(properties["authenticationEnabled"], "false");
    assert_eq!(properties["serverWorkerThreads"], "8");
    assert_eq!(properties["maxConnectionsPerIp"], "4096");
    let snapshot = dir.path("namesrv").join("routes.snapshot");
    assert_eq!(
        properties["routeSnapshotPath"],
        snapshot.display().to_string(),
        "on by default, beside the KV store's default"
    );
    assert_eq!(properties["routeSnapshotMaxBytes"], "268435456");
}

/// UPDATE_NAMESRV_CONFIG refuses what start-up refuses, naming the key and
/// the rule, and one of Waymark's own keys naming the restart it needs;
/// after a refusal neither GET_NAMESRV_CONFIG nor the saved file has moved,
/// not even for the good entries of the same update.
#[tokio::test]
async fn runtime_updates_are_checked_as_start_up_and_refused_whole() {
    let dir = TempDir::new();
    let store = dir.path("namesrv.properties");
    let server = Server::start(&dir, &[("maxKvValueBytes", "8")]);
    let update = |text: &str| request(C::UpdateNamesrvConfig, &[]).with_body(text.to_owned());
    let shown = || async { body_text(&server.call(request(C::GetNamesrvConfig, &[])).await) };
    assert_code(
        &server.call(update("orderMessageEnable=true")).await,
        R::Success,
    );
    let (saved, before) = (read(&store), shown().await);
    assert!(saved.contains("orderMessageEnable=true\n"), "{saved}");

    for (text, key, rule) in [
        (
            "scanNotActiveBrokerInterval=-5",
            "scanNotActiveBrokerInterval",
            "must be at least 1",
        ),
        (
            "scanNotActiveBrokerInterval=0",
            "scanNotActiveBrokerInterval",
            "must be at least 1",
        ),
        (
            "defaultThreadPoolNums=-5",
            "defaultThreadPoolNums",
            "must be at least 1",
        ),
        (
            "serverSocketBacklog=-5",
            "serverSocketBacklog",
            "must be at least 0",
        ),
        (
            "unRegisterBrokerQueueCapacity=0",
            "unRegisterBrokerQueueCapacity",
            "must be at least 1",
        ),
        (
            "enableTopicList=false\norderMessageEnable=false\nscanNotActiveBrokerInterval=-5",
            "scanNotActiveBrokerInterval",
            "must be at least 1",
        ),
        ("maxHeaderBytes=0", "maxHeaderBytes", "must be at least 1"),
        ("tcpKeepaliveProbes=500", "tcpKeepaliveProbes", "127"),
    ] {
        let response = server.call(update(text)).await;
        assert_code(&response, R::InvalidParameter);
        let remark = response.remark.unwrap_or_default();
        assert!(
            remark.contains(key) && remark.contains(rule),
            "{text}: {remark}"
        );
    }
    for text in [
        "maxKvValueBytes=65536",
        "maxHeaderBytes=1048576",
        "tcpKeepaliveIdleSeconds=0",
        "maxRouteSubscribers=5",
        "enableTopicList=false\nresponseBudgetBytes=1048576",
    ] {
        let response = server.call(update(text)).await;
        assert_code(&response, R::InvalidParameter);
        let remark = response.remark.unwrap_or_default();
        let key = text.rsplit('\n').next().unwrap().split('=').next().unwrap();
        assert!(
            remark.contains(key) && remark.contains("restart"),
            "{text}: {remark}"
        );
    }
    assert_eq!(read(&store), saved, "the saved file is unchanged");
    assert_eq!(
        shown().await,
        before,
        "the running configuration is unchanged"
    );
    assert!(before.contains("\nmaxKvValueBytes=8\n"), "{before}");
    // And so is behaviour: the KV value limit is still 8 bytes.
    let put = |value: &str| {
        request(
            C::PutKvConfig,
            &[("namespace", "ns"), ("key", "k"), ("value", value)],
        )
    };
    assert_code(&server.call(put("12345678")).await, R::Success);
    let response = server.call(put("123456789")).await;
    assert_ne!(response.response_code(), R::Success, "{response:?}");
    let response = server
        .call(request(C::GetTopicsByCluster, &[("cluster", "c")]))
        .await;
    assert_ne!(
        response.remark.as_deref(),
        Some("disable"),
        "enableTopicList unchanged"
    );
}
