//! `enableControllerInNamesrv=true`: the NameServer process also runs the
//! controller, configured by the controller keys of the same properties, on
//! the controller's own port, as Java's `NamesrvStartup` runs it
//! (docs/controller.md).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::{RemotingCommand, RequestCode as C};

use crate::common::*;

/// A NameServer with an embedded controller; killed when dropped.
struct Embedded {
    child: Child,
    namesrv: String,
    controller: String,
    http: std::net::SocketAddr,
}

impl Drop for Embedded {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts it with the controller on a port below the ephemeral range,
/// trying fresh ports if one turns out to be taken.
fn start(dir: &TempDir, file: Option<&str>) -> Embedded {
    for _ in 0..5 {
        let port = rmq_testkit::ports::choose().expect("a free port");
        let mut command = Command::new(env!("CARGO_BIN_EXE_rmq-namesrv"));
        command.args(["--listen", "127.0.0.1:0"]);
        let settings = [
            format!("kvConfigPath={}", dir.path("kv.json").display()),
            format!(
                "configStorePath={}",
                dir.path("namesrv.properties").display()
            ),
            "enableControllerInNamesrv=true".to_owned(),
            "controllerDLegerGroup=group1".to_owned(),
            format!("controllerDLegerPeers=n0-127.0.0.1:{port}"),
            "controllerDLegerSelfId=n0".to_owned(),
            format!(
                "controllerStorePath={}",
                dir.path("controller-store").display()
            ),
            "bindAddress=127.0.0.1".to_owned(),
            "httpListenAddr=127.0.0.1:0".to_owned(),
        ];
        if let Some(file) = file {
            command.args(["-c", file]);
        }
        for setting in settings {
            command.args(["--set", &setting]);
        }
        let log = std::fs::File::create(dir.path("server.log")).unwrap();
        let mut child = command
            .env("HOME", &dir.0)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("spawn rmq-namesrv");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut namesrv = None;
        let mut controller = None;
        let mut http = None;
        while namesrv.is_none() || controller.is_none() || http.is_none() {
            match rx.recv_timeout(Duration::from_secs(15)) {
                Ok(line) if line.contains("The Name Server boot success") => {
                    namesrv = line.rsplit("address ").next().map(str::to_owned);
                }
                Ok(line) if line.contains("The Controller Server boot success") => {
                    controller = line.rsplit("address ").next().map(str::to_owned);
                }
                Ok(line) if line.starts_with("Waymark HTTP listening on http://") => {
                    http = line.rsplit('/').next().and_then(|addr| addr.parse().ok());
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        if let (Some(namesrv), Some(controller), Some(http)) = (namesrv, controller, http) {
            return Embedded {
                child,
                namesrv,
                controller,
                http,
            };
        }
        let _ = child.kill();
        let _ = child.wait();
        let log = std::fs::read_to_string(dir.path("server.log")).unwrap_or_default();
        assert!(
            rmq_testkit::ports::is_bind_failure(&log),
            "the embedded controller did not start:\n{log}"
        );
    }
    panic!("no free controller port in 5 attempts");
}

#[tokio::test]
async fn the_controller_serves_on_its_own_port_beside_the_name_server() {
    let dir = TempDir::new();
    let server = start(&dir, None);
    assert_ne!(server.namesrv, server.controller);
    let namesrv = RpcClient::connect(server.namesrv.as_str(), ClientConfig::default())
        .await
        .unwrap();
    let config = body_text(
        &namesrv
            .invoke(request(C::GetNamesrvConfig, &[]), TIMEOUT)
            .await
            .unwrap(),
    );
    assert!(
        config.contains("enableControllerInNamesrv=true\n"),
        "{config}"
    );
    // Java's NameServer echoes every key of its properties, the controller's
    // included.
    assert!(
        config.contains("controllerDLegerGroup=group1\n"),
        "{config}"
    );

    let controller = RpcClient::connect(server.controller.as_str(), ClientConfig::default())
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let metadata = controller
            .invoke(
                RemotingCommand::request(C::ControllerGetMetadataInfo, 0),
                TIMEOUT,
            )
            .await
            .unwrap();
        if metadata.ext("isLeader") == Some("true") {
            assert_eq!(metadata.ext("group"), Some("group1"));
            assert_eq!(metadata.ext("controllerLeaderId"), Some("n0"));
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{metadata:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut next = request(
        C::ControllerGetNextBrokerId,
        &[
            ("clusterName", "DefaultCluster"),
            ("brokerName", "broker-a"),
        ],
    );
    next.version = 515;
    let answer = controller.invoke(next, TIMEOUT).await.unwrap();
    assert_eq!(answer.ext("nextBrokerId"), Some("1"), "{answer:?}");
    // The NameServer port does not serve controller requests.
    let mut misplaced = request(
        C::ControllerGetNextBrokerId,
        &[("clusterName", "c"), ("brokerName", "b")],
    );
    misplaced.version = 515;
    let refused = namesrv.invoke(misplaced, TIMEOUT).await.unwrap();
    assert_eq!(refused.code, 3, "REQUEST_CODE_NOT_SUPPORTED: {refused:?}");

    // The NameServer's HTTP port shows the embedded controller too.
    let (status, view) = crate::http_port::get(server.http, "/api/v1/controller").await;
    assert_eq!(status, 200, "{view}");
    assert!(view.contains(r#""isLeader":true"#), "{view}");
    assert!(view.contains(r#""group":"group1""#), "{view}");
    let (_, overview) = crate::http_port::get(server.http, "/api/v1/overview").await;
    assert!(overview.contains(r#""controller":true"#), "{overview}");
    let (_, metrics) = crate::http_port::get(server.http, "/metrics").await;
    assert!(
        metrics.contains("\nwaymark_controller_is_leader 1\n"),
        "{metrics}"
    );
    assert!(metrics.contains("\nwaymark_brokers 0\n"), "{metrics}");
}

#[test]
fn missing_controller_keys_are_named() {
    let dir = TempDir::new();
    let output = Command::new(env!("CARGO_BIN_EXE_rmq-namesrv"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--set",
            "enableControllerInNamesrv=true",
        ])
        .args([
            "--set",
            &format!("kvConfigPath={}", dir.path("kv.json").display()),
        ])
        .env("HOME", &dir.0)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("controllerDLegerGroup is required"),
        "{stderr}"
    );
}

#[test]
fn print_config_shows_both_option_sets() {
    let dir = TempDir::new();
    let output = Command::new(env!("CARGO_BIN_EXE_rmq-namesrv"))
        .args([
            "-p",
            "--set",
            "enableControllerInNamesrv=true",
            "--set",
            "electMasterMaxRetryCount=5",
        ])
        .env("HOME", &dir.0)
        .stderr(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("enableControllerInNamesrv=true\n"), "{text}");
    assert!(text.contains("electMasterMaxRetryCount=5\n"), "{text}");
    assert!(text.contains("listenPort=9876\n"), "{text}");
}
