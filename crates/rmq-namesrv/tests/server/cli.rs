//! The command line, as Java's `mqnamesrv` takes it: `-p` prints every option
//! and exits 0, `-c` loads a properties file (which then becomes the config
//! store).

use std::process::{Command, Stdio};

use rmq_wire::{RequestCode as C, ResponseCode as R};

use crate::common::*;

#[test]
fn print_config_item_exits_zero() {
    let dir = TempDir::new();
    let output = Command::new(env!("CARGO_BIN_EXE_rmq-namesrv"))
        .arg("-p")
        .args(["--set", "orderMessageEnable=true"])
        .env("HOME", &dir.0)
        .stderr(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("listenPort=9876\n"), "{text}");
    assert!(text.contains("orderMessageEnable=true\n"));
    assert!(text.contains(&format!(
        "kvConfigPath={}/namesrv/kvConfig.json\n",
        dir.0.display()
    )));
    assert!(text.lines().all(|l| l.contains('=') || l.starts_with('#')));
    assert!(!dir.path("namesrv").exists(), "-p touches no file");
}

#[test]
fn unknown_option_fails() {
    let status = Command::new(env!("CARGO_BIN_EXE_rmq-namesrv"))
        .arg("--no-such-option")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success());
}

#[tokio::test]
async fn config_file_is_loaded_and_becomes_the_store() {
    let dir = TempDir::new();
    let file = dir.path("namesrv.conf");
    std::fs::write(
        &file,
        format!(
            "kvConfigPath={}\nenableAllTopicList=false\ncustomKey=kept\n",
            dir.path("kv.json").display()
        ),
    )
    .unwrap();
    let args = [
        "-c".to_string(),
        file.display().to_string(),
        "--listen".into(),
        "127.0.0.1:0".into(),
    ];
    let server = Server::spawn(&dir, &args, &[]);
    let client = server.client().await;
    let all = client
        .invoke(request(C::GetAllTopicListFromNameserver, &[]), TIMEOUT)
        .await
        .unwrap();
    assert_code(&all, R::SystemError);
    let config = body_text(
        &client
            .invoke(request(C::GetNamesrvConfig, &[]), TIMEOUT)
            .await
            .unwrap(),
    );
    assert!(
        config.contains("customKey=kept\n"),
        "unknown file keys are echoed"
    );
    assert!(config.contains(&format!("configStorePath={}\n", file.display())));
    let update = request(C::UpdateNamesrvConfig, &[]).with_body("enableTopicList=false");
    assert_code(&client.invoke(update, TIMEOUT).await.unwrap(), R::Success);
    let rewritten = read(&file);
    assert!(
        rewritten.contains("enableTopicList=false\n") && rewritten.contains("customKey=kept\n"),
        "{rewritten}"
    );
}

/// A log going to a file (stderr not a terminal) is plain text: no colour codes.
#[test]
fn a_redirected_log_has_no_colour_codes() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    server.stop();
    let log = read(&dir.path("server.log"));
    assert!(log.contains("INFO"), "nothing logged at info:\n{log}");
    assert!(!log.contains('\u{1b}'), "colour codes in the log:\n{log}");
}
