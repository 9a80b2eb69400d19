//! `rmq-bench --quick compare` against Waymark and the ceiling writes a
//! result and a report section for every scenario; performance is never
//! asserted.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// Waymark's `name` binary of `package`: beside this one, or built into a target directory of
/// its own.
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

/// `rmq-bench --quick --no-pin --peers waymark,ceiling … compare <compare>` into a fresh
/// directory: results, report, stderr.
fn quick_compare(test: &str, compare: &[&str]) -> (Value, String, String) {
    let dir = std::env::temp_dir().join(format!("rmq-bench-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (report, results) = (dir.join("benchmarks.md"), dir.join("results.json"));
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
        .args(["compare", "--allow-dirty", "--allow-disturbed"])
        .args(compare)
        .arg("--report")
        .arg(&report)
        .arg("--results")
        .arg(&results)
        .output()
        .expect("rmq-bench runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "rmq-bench failed:\n{stderr}");
    let json = serde_json::from_slice(&std::fs::read(&results).unwrap()).unwrap();
    let text = std::fs::read_to_string(&report).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (json, text, stderr)
}

/// The results of `part` of scenario `id`, by peer, each asserted to be a
/// result and not an error.
fn results<'a>(json: &'a Value, id: &str, part: &str, stderr: &str) -> Vec<(&'a str, &'a Value)> {
    let runs = json["scenarios"][id]["runs"]
        .as_array()
        .unwrap_or_else(|| panic!("no {id}"));
    let of_part = runs
        .iter()
        .filter(|r| r["part"].as_str().unwrap_or("") == part);
    of_part
        .map(|run| {
            assert!(
                run["error"].is_null(),
                "{id} {part} failed: {run}\n{stderr}"
            );
            (run["peer"].as_str().unwrap(), &run["result"])
        })
        .collect()
}

fn peers(runs: &[(&str, &Value)]) -> Vec<String> {
    runs.iter().map(|(peer, _)| (*peer).to_owned()).collect()
}

#[test]
fn quick_compare_runs_every_scenario_against_waymark_and_the_ceiling() {
    let (json, text, stderr) = quick_compare("smoke", &[]);
    let both = ["waymark", "ceiling"];
    for id in [
        "route-qps",
        "route-sweep",
        "route-under-storm",
        "register",
        "startup",
    ] {
        assert_eq!(peers(&results(&json, id, "", &stderr)), both, "{id}");
        assert!(
            text.contains(&format!("<!-- rmq-bench:{id}:begin")),
            "no {id} section:\n{text}"
        );
    }
    for id in ["failover", "hostile"] {
        assert_eq!(
            peers(&results(&json, id, "", &stderr)),
            ["waymark"],
            "the ceiling is not run: {id}"
        );
    }
    let qps = results(&json, "route-qps", "", &stderr);
    assert!(qps[0].1["qps"].as_f64().unwrap() > 0.0);
    assert!(
        qps[0].1["server_cpu"]["ticks"].is_u64(),
        "no server CPU: {}",
        qps[0].1
    );
    let steps = qps_steps(&json, &stderr);
    assert!(
        !steps.is_empty() && steps[0]["achieved_per_s"].as_f64().unwrap() > 0.0,
        "{steps:?}"
    );
    assert!(json["git"]["commit"].is_string(), "no commit recorded");

    let beats = results(&json, "controller", "heartbeats", &stderr);
    assert_eq!(peers(&beats), ["waymark"], "only Waymark has a controller");
    assert!(
        beats[0].1["heartbeats"].as_u64().unwrap() > 0
            && beats[0].1["cpu_us_per_heartbeat"].is_number()
    );
    let failover = &results(&json, "controller", "failover", &stderr)[0].1["samples_ms"];
    let done = failover
        .as_array()
        .is_some_and(|s| !s.is_empty() && s.iter().all(Value::is_number));
    assert!(
        done,
        "a failover sample did not complete: {failover}\n{stderr}"
    );

    // Unpinned servers cannot be given two CPUs: the passes say why they did not run.
    for id in ["register", "route-qps"] {
        let pass = &json["scenarios"][id]["info"]["two-cpus"];
        assert!(
            pass["skipped"]
                .as_str()
                .is_some_and(|why| why.contains("not pinned")),
            "{id}: {pass}"
        );
    }
    assert!(
        text.contains("#### register on two CPUs\n\nNot run: the servers are not pinned"),
        "{text}"
    );

    let attacks = results(&json, "hostile", "", &stderr)[0].1["attacks"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(attacks.len(), 5, "every attack ran");
    for attack in attacks {
        assert!(
            attack["error"].is_null() && attack["rss_peak_kib"].is_u64(),
            "{attack}\n{stderr}"
        );
    }
    let signing = results(&json, "security", "signing", &stderr);
    for part in ["unsigned", "signed"] {
        let window = &signing[0].1[part];
        let measured =
            window["answered"].as_u64().unwrap() > 0 && window["cpu_us_per_request"].is_number();
        assert!(
            measured && window["errors"] == 0,
            "{part} registrations: {window}\n{stderr}"
        );
    }
    let tls = results(&json, "security", "tls", &stderr);
    assert_eq!(peers(&tls), ["waymark"], "the ceiling has no TLS part");
    assert!(tls[0].1["tls"]["answered"].as_u64().unwrap() > 0 && tls[0].1["tls"]["errors"] == 0);

    for heading in [
        "### security",
        "#### Signed registrations (Waymark)",
        "#### TLS route queries",
    ] {
        assert!(text.contains(heading), "no {heading}:\n{text}");
    }
    assert!(
        text.contains("kept as it is"),
        "the report dropped existing content"
    );
    assert!(
        text.contains("Commit measured: `") && text.contains("#### topic-flood"),
        "{text}"
    );
    let at = |marker: &str| text.find(marker).unwrap_or_else(|| panic!("no {marker}"));
    assert!(
        at("<!-- rmq-bench:route-qps:end") < at("<!-- rmq-bench:route-sweep:begin")
            && at("<!-- rmq-bench:startup:end") < at("<!-- rmq-bench:controller:begin"),
        "sections in registry order:\n{text}"
    );
    for (part, followed_by) in [("", "push"), ("push-off", "polling-push-off")] {
        let runs = results(&json, "route-change-latency", part, &stderr);
        assert_eq!(peers(&runs), ["waymark"], "Waymark only: {part}");
        let result = runs[0].1;
        assert_eq!(result["followed_by"], followed_by, "{result}\n{stderr}");
        let samples = result["samples"].as_array().expect("samples");
        let seen = !samples.is_empty() && samples.iter().all(|s| s["seen_ms"].is_number());
        assert!(seen, "a change was not seen: {result}\n{stderr}");
    }
    assert!(
        text.contains("| Waymark | route push |"),
        "no route-change rows:\n{text}"
    );
}

fn qps_steps(json: &Value, stderr: &str) -> Vec<Value> {
    let sweep = results(json, "route-sweep", "", stderr);
    sweep[0].1["steps"].as_array().expect("sweep steps").clone()
}

#[test]
fn only_the_sections_of_the_scenarios_named_are_written() {
    let (json, text, stderr) = quick_compare("named", &["--scenarios", "startup"]);
    assert_eq!(
        peers(&results(&json, "startup", "", &stderr)),
        ["waymark", "ceiling"]
    );
    assert_eq!(
        json["scenarios"].as_object().map(|s| s.len()),
        Some(1),
        "{json}"
    );
    let kept = text.contains("<!-- rmq-bench:startup:begin") && text.contains("kept as it is");
    assert!(
        kept,
        "no startup section, or existing content dropped:\n{text}"
    );
    assert!(
        !text.contains("rmq-bench:route-qps"),
        "only the section of the scenario that ran:\n{text}"
    );
}
