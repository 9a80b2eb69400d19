//! Log output: `--log-dir` writes `namesrv.log` (Java's name) without
//! colour codes, `--log-format json` one JSON object per line, and the
//! start-up line names the version, revision, ports, configuration file and
//! the keys set to other than their defaults.

use std::time::Duration;

use serde_json::Value;

use crate::common::*;

fn start_logging(dir: &TempDir, format: &str, extra: &[(&str, &str)]) -> Server {
    let log_dir = dir.path("logs");
    let mut args: Vec<String> = vec![
        "--listen".into(),
        "127.0.0.1:0".into(),
        "--log-dir".into(),
        log_dir.display().to_string(),
        "--log-format".into(),
        format.into(),
    ];
    let kv = format!("kvConfigPath={}", dir.path("kv.json").display());
    let store = format!("configStorePath={}", dir.path("ns.properties").display());
    let sets = [kv, store, "httpListenAddr=127.0.0.1:0".to_owned()]
        .into_iter()
        .chain(extra.iter().map(|(k, v)| format!("{k}={v}")));
    for set in sets {
        args.extend(["--set".to_owned(), set]);
    }
    Server::spawn(dir, &args, &[])
}

/// The log file once it holds the start-up line.
async fn log_with_start_line(dir: &TempDir) -> String {
    let path = dir.path("logs").join("namesrv.log");
    let mut text = String::new();
    let found = eventually(Duration::from_secs(10), || {
        text = read(&path);
        let found = text.contains("rmq-namesrv starting");
        async move { found }
    })
    .await;
    assert!(found, "no start-up line in {}:\n{text}", path.display());
    text
}

#[tokio::test]
async fn json_lines_in_namesrv_log_with_a_start_up_line() {
    let dir = TempDir::new();
    let server = start_logging(&dir, "json", &[("orderMessageEnable", "true")]);
    let text = log_with_start_line(&dir).await;
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:?}")))
        .collect();
    let start = lines
        .iter()
        .find(|line| line["fields"]["message"] == "rmq-namesrv starting")
        .expect("the start-up line");
    let fields = &start["fields"];
    assert_eq!(fields["version"], env!("CARGO_PKG_VERSION"));
    assert!(fields["git"].as_str().is_some_and(|git| !git.is_empty()));
    assert_eq!(fields["remoting"], server.addr.to_string());
    assert_eq!(fields["http"], server.http.expect("HTTP port").to_string());
    let changed = fields["non_default"].as_str().expect("non-default keys");
    assert!(changed.contains("orderMessageEnable=true"), "{changed}");
    assert!(
        !changed.contains("listenPort"),
        "defaults are left out: {changed}"
    );
    assert_eq!(start["level"], "INFO");
    server.stop();
}

#[tokio::test]
async fn text_log_file_has_no_colour_codes() {
    let dir = TempDir::new();
    let server = start_logging(&dir, "text", &[]);
    let text = log_with_start_line(&dir).await;
    assert!(
        !text.contains('\u{1b}'),
        "ANSI escape in the log file:\n{text}"
    );
    assert!(text.contains("AUTHENTICATION IS OFF"), "{text}");
    server.stop();
}
