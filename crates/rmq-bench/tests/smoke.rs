//! `rmq-bench --quick compare` against Waymark and the ceiling writes a result and a report
//! section for every scenario; performance is never asserted.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// Waymark's `name` binary of `package`: beside this one, or built into a target directory of
/// its own.
fn workspace_bin(package: &str, name: &str) -> PathBuf {
    let bench = Path::new(env!("CARGO_BIN_EXE_rmq-bench"));
    let beside = bench.with_file_name(name);
    if beside.is_file() {
        return beside;
    }
    let target = bench.with_file_name("smoke-servers");
    let status = Command::new(env!("CARGO"))
        .args(["build", "-q", "-p", package, "--target-dir"])
        .arg(&target)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cargo runs");
    assert!(status.success(), "cannot build {package}");
    target.join("debug").join(name)
}

/// What one quick compare wrote: its results, its report, its stderr.
struct Run {
    json: Value,
    text: String,
    stderr: String,
}

/// `rmq-bench --quick --no-pin --peers waymark,ceiling … compare <compare>` into a fresh directory.
fn quick_compare(test: &str, compare: &[&str]) -> Run {
    let dir = std::env::temp_dir().join(format!("rmq-bench-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (report, results) = (dir.join("benchmarks.md"), dir.join("results.json"));
    std::fs::write(&report, "# Benchmarks\n\n## Codec\n\nkept as it is\n").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_rmq-bench"))
        .args(["--quick", "--no-pin", "--peers", "waymark,ceiling"])
        .arg("--waymark-bin")
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
    Run { json, text, stderr }
}

impl Run {
    /// The results of `part` of scenario `id`, by peer, each asserted to be a result and not
    /// an error.
    fn results(&self, id: &str, part: &str) -> Vec<(&str, &Value)> {
        let runs = self.json["scenarios"][id]["runs"].as_array();
        let runs = runs.unwrap_or_else(|| panic!("no {id}")).iter();
        let mut found = Vec::new();
        for run in runs.filter(|r| r["part"].as_str().unwrap_or("") == part) {
            let (error, stderr) = (&run["error"], &self.stderr);
            assert!(error.is_null(), "{id} {part} failed: {run}\n{stderr}");
            found.push((run["peer"].as_str().unwrap(), &run["result"]));
        }
        found
    }

    /// Asserts that exactly `peers` ran `part` of scenario `id`, each to a result.
    fn ran_on(&self, id: &str, part: &str, peers: &[&str]) {
        let ran: Vec<&str> = self.results(id, part).into_iter().map(|(p, _)| p).collect();
        assert_eq!(ran, peers, "the peers that ran {id} {part:?}");
    }

    /// Asserts that the report holds each of `parts`.
    fn has(&self, parts: &[&str]) {
        for part in parts {
            assert!(self.text.contains(part), "no {part:?} in:\n{}", self.text);
        }
    }
}

#[test]
fn quick_compare_runs_every_scenario_against_waymark_and_the_ceiling() {
    let run = quick_compare("smoke", &[]);
    let (json, text, stderr) = (&run.json, &run.text, &run.stderr);
    let both = ["waymark", "ceiling"];
    for id in [
        "route-qps",
        "route-sweep",
        "route-under-storm",
        "register",
        "startup",
    ] {
        run.ran_on(id, "", &both);
        run.has(&[&format!("<!-- rmq-bench:{id}:begin")]);
    }
    // The ceiling is not run.
    run.ran_on("failover", "", &["waymark"]);
    run.ran_on("hostile", "", &["waymark"]);
    let qps = run.results("route-qps", "")[0].1;
    assert!(qps["qps"].as_f64().unwrap() > 0.0);
    assert!(qps["server_cpu"]["ticks"].is_u64(), "no server CPU: {qps}");
    let steps = &run.results("route-sweep", "")[0].1["steps"];
    let achieved = steps[0]["achieved_per_s"].as_f64();
    assert!(achieved.is_some_and(|a| a > 0.0), "{steps:?}");
    assert!(json["git"]["commit"].is_string(), "no commit recorded");

    // Only Waymark has a controller.
    run.ran_on("controller", "heartbeats", &["waymark"]);
    let beats = run.results("controller", "heartbeats")[0].1;
    let per_beat = beats["cpu_us_per_heartbeat"].is_number();
    assert!(beats["heartbeats"].as_u64().unwrap() > 0 && per_beat);
    let failover = &run.results("controller", "failover")[0].1["samples_ms"];
    let samples = failover.as_array().filter(|s| !s.is_empty());
    let done = samples.is_some_and(|s| s.iter().all(Value::is_number));
    assert!(
        done,
        "a failover sample did not complete: {failover}\n{stderr}"
    );

    // Unpinned servers cannot be given two CPUs: the passes say why they did not run.
    for id in ["register", "route-qps"] {
        let pass = &json["scenarios"][id]["info"]["two-cpus"];
        let why = pass["skipped"].as_str();
        assert!(
            why.is_some_and(|w| w.contains("not pinned")),
            "{id}: {pass}"
        );
    }
    run.has(&["#### register on two CPUs\n\nNot run: the servers are not pinned"]);

    run.ran_on("kv-writes", "", &["waymark"]);
    let kv = run.results("kv-writes", "")[0].1;
    let stored = kv["stored"].as_u64().is_some_and(|n| n > 0) && kv["stored"] == kv["checked"];
    assert!(kv["failed"] == 0 && stored, "{kv}\n{stderr}");

    let attacks = run.results("hostile", "")[0].1["attacks"].as_array();
    let attacks = attacks.unwrap();
    assert_eq!(attacks.len(), 5, "every attack ran");
    for attack in attacks {
        let measured = attack["error"].is_null() && attack["rss_peak_kib"].is_u64();
        assert!(measured, "{attack}\n{stderr}");
    }
    let signing = run.results("security", "signing");
    for part in ["unsigned", "signed"] {
        let window = &signing[0].1[part];
        let answered = window["answered"].as_u64().unwrap() > 0;
        let measured = answered && window["cpu_us_per_request"].is_number();
        let ok = measured && window["errors"] == 0;
        assert!(ok, "{part} registrations: {window}\n{stderr}");
    }
    // The ceiling has no TLS part.
    run.ran_on("security", "tls", &["waymark"]);
    let tls = &run.results("security", "tls")[0].1["tls"];
    assert!(tls["answered"].as_u64().unwrap() > 0 && tls["errors"] == 0);

    run.has(&[
        "### security",
        "#### Signed registrations (Waymark)",
        "#### TLS route queries",
        // The report kept what was there.
        "kept as it is",
        "Commit measured: `",
        "#### topic-flood",
        "| Waymark | route push |",
    ]);
    let at = |marker: &str| text.find(marker).unwrap_or_else(|| panic!("no {marker}"));
    let in_order = at("<!-- rmq-bench:route-qps:end") < at("<!-- rmq-bench:route-sweep:begin")
        && at("<!-- rmq-bench:startup:end") < at("<!-- rmq-bench:controller:begin");
    assert!(in_order, "sections in registry order:\n{text}");
    for (part, followed_by) in [("", "push"), ("push-off", "polling-push-off")] {
        run.ran_on("route-change-latency", part, &["waymark"]);
        let result = run.results("route-change-latency", part)[0].1;
        assert_eq!(result["followed_by"], followed_by, "{result}\n{stderr}");
        let samples = result["samples"].as_array().expect("samples");
        let seen = !samples.is_empty() && samples.iter().all(|s| s["seen_ms"].is_number());
        assert!(seen, "a change was not seen: {result}\n{stderr}");
    }
}

#[test]
fn only_the_sections_of_the_scenarios_named_are_written() {
    let run = quick_compare("named", &["--scenarios", "startup"]);
    run.ran_on("startup", "", &["waymark", "ceiling"]);
    let scenarios = run.json["scenarios"].as_object().map(|s| s.len());
    assert_eq!(scenarios, Some(1), "{}", run.json);
    // The existing content kept.
    run.has(&["<!-- rmq-bench:startup:begin", "kept as it is"]);
    let text = &run.text;
    let only_startup = !text.contains("rmq-bench:route-qps");
    assert!(only_startup, "only the section that ran:\n{text}");
}
