//! The harness runs end to end: `rmq-bench --quick compare` against Waymark
//! and the ceiling server writes a results file and a report, the
//! controller scenario included (Waymark's controller only: the ceiling has
//! none), the hostile one (Waymark only: the ceiling keeps no state) and
//! the security one (Waymark's signing and TLS parts; not the ceiling); and
//! `--scenarios route-change-latency`, which is not in the default set,
//! writes its own section alone. Performance is never asserted here; only
//! that every scenario produced a result.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Waymark's `name` binary of package `package` next to this package's
/// binary, as `cargo test --workspace` builds it; built into a separate
/// target directory when only this package is tested (the outer cargo holds
/// the lock of its own).
fn workspace_bin(package: &str, name: &str) -> PathBuf {
    let bench = Path::new(env!("CARGO_BIN_EXE_rmq-bench"));
    let profile_dir = bench.parent().expect("binary has a directory");
    let beside = profile_dir.join(name);
    if beside.is_file() {
        return beside;
    }
    let target = profile_dir.join("smoke-servers");
    let status = Command::new(env!("CARGO"))
        .args(["build", "-q", "-p", package, "--target-dir"])
        .arg(&target)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cargo runs");
    assert!(status.success(), "cannot build {package}");
    target.join("debug").join(name)
}

#[test]
fn quick_compare_runs_every_scenario_against_waymark_and_the_ceiling() {
    let dir = std::env::temp_dir().join(format!("rmq-bench-smoke-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let report = dir.join("benchmarks.md");
    let results = dir.join("results.json");
    std::fs::write(&report, "# Benchmarks\n\n## Codec\n\nkept as it is\n").unwrap();

    let output = Command::new(env!("CARGO_BIN_EXE_rmq-bench"))
        .args([
            "--quick",
            "--no-pin",
            "--peers",
            "waymark,ceiling",
            "--waymark-bin",
        ])
        .arg(workspace_bin("rmq-namesrv", "rmq-namesrv"))
        .arg("--waymark-controller-bin")
        .arg(workspace_bin("rmq-controller", "rmq-controller"))
        // The work tree under test may be dirty, the machine busy.
        .args(["compare", "--allow-dirty", "--allow-disturbed", "--report"])
        .arg(&report)
        .arg("--results")
        .arg(&results)
        .output()
        .expect("rmq-bench runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "rmq-bench failed:\n{stderr}");

    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&results).unwrap()).unwrap();
    for scenario in [
        "route_qps",
        "route_sweep",
        "route_under_storm",
        "register",
        "failover",
        "startup",
        "controller_heartbeats",
        "controller_failover",
        "hostile",
        "security_signing",
        "security_tls",
    ] {
        let outcomes = json[scenario]
            .as_array()
            .unwrap_or_else(|| panic!("no {scenario}"));
        assert!(!outcomes.is_empty(), "{scenario} has no outcome");
        for outcome in outcomes {
            assert!(
                outcome["error"].is_null() && outcome["result"].is_object(),
                "{scenario} failed: {outcome}\n{stderr}"
            );
        }
    }
    let peers = |scenario: &str| json[scenario].as_array().map_or(0, Vec::len);
    assert_eq!(peers("route_qps"), 2);
    assert_eq!(peers("failover"), 1, "the ceiling is not a failover peer");
    assert!(json["route_qps"][0]["result"]["qps"].as_f64().unwrap() > 0.0);
    assert!(
        json["route_qps"][0]["result"]["server_cpu"]["ticks"].is_u64(),
        "no server CPU: {}",
        json["route_qps"][0]
    );
    assert_eq!(peers("route_sweep"), 2);
    let steps = json["route_sweep"][0]["result"]["steps"]
        .as_array()
        .expect("sweep steps");
    assert!(
        !steps.is_empty() && steps[0]["achieved_per_s"].as_f64().unwrap() > 0.0,
        "{steps:?}"
    );
    assert!(json["git"]["commit"].is_string(), "no commit recorded");
    assert_eq!(
        peers("controller_heartbeats"),
        1,
        "only Waymark has a controller"
    );
    let heartbeats = &json["controller_heartbeats"][0]["result"];
    assert!(
        heartbeats["heartbeats"].as_u64().unwrap() > 0,
        "{heartbeats}"
    );
    assert!(
        heartbeats["cpu_us_per_heartbeat"].is_number(),
        "{heartbeats}"
    );
    let failover = &json["controller_failover"][0]["result"];
    assert!(
        failover["samples_ms"]
            .as_array()
            .is_some_and(|s| !s.is_empty() && s.iter().all(serde_json::Value::is_number)),
        "a failover sample did not complete: {failover}\n{stderr}"
    );

    // Unpinned servers cannot be given two CPUs: the passes say why they did not run.
    for pass in ["register_two_cores", "route_qps_two_cores"] {
        assert!(
            json[pass]["skipped"]
                .as_str()
                .is_some_and(|why| why.contains("not pinned")),
            "{pass}: {}",
            json[pass]
        );
    }

    assert_eq!(peers("hostile"), 1, "the ceiling is not attacked");
    let attacks = json["hostile"][0]["result"]["attacks"]
        .as_array()
        .expect("hostile attacks");
    assert_eq!(attacks.len(), 5, "every attack ran");
    for attack in attacks {
        assert!(
            attack["error"].is_null() && attack["rss_peak_kib"].is_u64(),
            "an attack was not run: {attack}\n{stderr}"
        );
    }

    assert_eq!(peers("security_tls"), 1, "the ceiling has no TLS part");
    let signing = &json["security_signing"][0]["result"];
    for part in ["unsigned", "signed"] {
        assert!(
            signing[part]["answered"].as_u64().unwrap() > 0
                && signing[part]["errors"].as_u64() == Some(0)
                && signing[part]["cpu_us_per_request"].is_number(),
            "{part} registrations: {signing}\n{stderr}"
        );
    }
    let tls = &json["security_tls"][0]["result"];
    assert!(
        tls["tls"]["answered"].as_u64().unwrap() > 0 && tls["tls"]["errors"].as_u64() == Some(0),
        "TLS route queries: {tls}\n{stderr}"
    );

    let text = std::fs::read_to_string(&report).unwrap();
    assert!(
        text.contains("<!-- rmq-bench:security:begin")
            && text.contains("### Signed registrations (Waymark)")
            && text.contains("### TLS route queries"),
        "no security section:\n{text}"
    );
    assert!(
        text.contains("kept as it is"),
        "the report dropped existing content"
    );
    assert!(text.contains("<!-- rmq-bench:begin") && text.contains("### route-qps"));
    assert!(
        text.contains("### register on two CPUs\n\nNot run: the servers are not pinned"),
        "no two-core section:\n{text}"
    );
    assert!(
        text.contains("### route-sweep") && text.contains("Commit measured: `"),
        "no route-sweep section or commit:\n{text}"
    );
    assert!(
        text.contains("<!-- rmq-bench:controller:begin") && text.contains("### Heartbeats"),
        "no controller section:\n{text}"
    );
    assert!(
        text.find("<!-- rmq-bench:end -->") < text.find("<!-- rmq-bench:controller:begin"),
        "the controller section comes after the NameServer section"
    );
    assert!(
        text.contains("<!-- rmq-bench:hostile:begin") && text.contains("### topic-flood"),
        "no hostile section:\n{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn quick_route_change_latency_follows_waymark_by_push_and_by_polling() {
    let dir = std::env::temp_dir().join(format!(
        "rmq-bench-smoke-route-change-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let report = dir.join("benchmarks.md");
    let results = dir.join("results.json");
    std::fs::write(&report, "# Benchmarks\n\n## Codec\n\nkept as it is\n").unwrap();

    let output = Command::new(env!("CARGO_BIN_EXE_rmq-bench"))
        .args([
            "--quick",
            "--no-pin",
            "--peers",
            "waymark,ceiling",
            "--waymark-bin",
        ])
        .arg(workspace_bin("rmq-namesrv", "rmq-namesrv"))
        .args([
            "compare",
            "--allow-dirty",
            "--allow-disturbed",
            "--scenarios",
            "route-change-latency",
            "--report",
        ])
        .arg(&report)
        .arg("--results")
        .arg(&results)
        .output()
        .expect("rmq-bench runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "rmq-bench failed:\n{stderr}");

    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&results).unwrap()).unwrap();
    for (field, followed_by) in [
        ("route_change_latency", "push"),
        ("route_change_latency_push_off", "polling-push-off"),
    ] {
        let outcomes = json[field].as_array().expect(field);
        assert_eq!(outcomes.len(), 1, "Waymark only, not the ceiling: {field}");
        let result = &outcomes[0]["result"];
        assert_eq!(result["followed_by"], followed_by, "{result}\n{stderr}");
        let samples = result["samples"].as_array().expect("samples");
        assert!(
            !samples.is_empty() && samples.iter().all(|s| s["seen_ms"].is_number()),
            "a change was not seen: {result}\n{stderr}"
        );
    }

    let text = std::fs::read_to_string(&report).unwrap();
    assert!(
        text.contains("<!-- rmq-bench:route-change:begin")
            && text.contains("| Waymark | route push |")
            && text.contains("kept as it is"),
        "no route-change section, or existing content dropped:\n{text}"
    );
    assert!(
        !text.contains("<!-- rmq-bench:begin"),
        "only the section of the scenario that ran is written:\n{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
