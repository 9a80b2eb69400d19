//! Sections rendered from results, and placed in the page by their markers.

use serde_json::{json, Value};

use super::*;
use crate::sample::{self, ServerCpu};
use crate::scenario::{hostile::Hostile, params, register, route_qps, storm, Scenario};

fn latency(p99_us: f64) -> Value {
    json!({"count": 100, "mean_us": 0.0, "p50_us": p99_us / 4.0, "p99_us": p99_us,
           "p999_us": p99_us * 2.0, "max_us": p99_us * 3.0, "curve": []})
}

fn defaults<S: Scenario>() -> Value {
    serde_json::to_value(params::<S>(None, false).unwrap()).unwrap()
}

fn ok(peer: &str, result: Value) -> Value {
    json!({"peer": peer, "result": result, "error": null})
}

fn qps(cpu_ticks: u64, answered: u64) -> Value {
    let server_cpu = ServerCpu::of_ticks(cpu_ticks, 20.0, 2.0);
    json!({"params": defaults::<route_qps::RouteQps>(), "qps": answered as f64 / 20.0,
           "latency": latency(1_000.0), "errors": 0, "first_error": null, "mean_response_bytes": 2216.0,
           "rss_kib": 8192, "server_cpus": "1", "others_cpu_percent": 2.0,
           "cpu_us_per_query": server_cpu.us_per(answered), "server_cpu": server_cpu, "answered": answered})
}

fn storm(cpu_ticks: u64, registrations: u64, query_us: Option<f64>) -> Value {
    let server_cpu = ServerCpu::of_ticks(cpu_ticks, 20.0, 40.0);
    let per = sample::attribute(&server_cpu, 20_000, query_us, registrations);
    json!({"params": defaults::<storm::RouteUnderStorm>(), "queries": latency(2_000.0), "query_errors": 0,
           "query_first_error": null, "query_schedule_lag_max_ms": 1.0, "query_thread": "SCHED_FIFO 1 (chrt)",
           "registrations_per_s": registrations as f64 / 20.0, "entries_per_s": 0.0,
           "registration_latency": latency(200_000.0), "registration_errors": 0,
           "registration_first_error": null, "rss_kib": 65536, "server_cpus": "1", "others_cpu_percent": 40.0,
           "server_cpu": server_cpu, "queries_answered": 20_000, "registrations_answered": registrations,
           "cpu_us_per_registration": per, "cpu_us_per_query_subtracted": query_us})
}

fn register(steady_ticks: u64, steady: u64, rss_kib: u64) -> Value {
    let steady_cpu = ServerCpu::of_ticks(steady_ticks, 20.0, 1.0);
    // A first round of 0.1 s: 8 ticks, no figure per registration.
    let first_cpu = ServerCpu::of_ticks(8, 0.1, 1.0);
    json!({"params": defaults::<register::Register>(), "body_bytes": 1_800_000, "first_round_s": 0.1,
           "first_per_s": 1000.0, "first_latency": latency(50_000.0), "steady_per_s": steady as f64 / 10.0,
           "steady_entries_per_s": 0.0, "steady_latency": latency(900_000.0), "steady_errors": 0,
           "steady_first_error": null, "rss_idle_kib": 4096, "rss_first_kib": rss_kib, "rss_kib": rss_kib,
           "server_cpus": "1", "first_server_cpu": first_cpu, "first_cpu_us_per_registration": null,
           "steady_cpu_us_per_registration": steady_cpu.us_per(steady), "steady_server_cpu": steady_cpu,
           "steady_answered": steady})
}

fn runs(runs: Vec<Value>) -> Value {
    json!({ "runs": runs })
}

fn results(scenarios: Value) -> Results {
    let peer = |p: &str| json!({"peer": p, "version": "v", "command": "c"});
    serde_json::from_value(json!({
        "command": "scripts/bench.sh", "started_at": "2026-12-05 20:56:08 UTC", "duration_s": 1218.0,
        "quick": false,
        "machine": {"cpu_model": "AMD EPYC", "cpus": 2, "memory_mib": 24064, "kernel": "6.18",
                    "load_at_start": "2.06 2.22 1.99", "load_at_end": "7.55 4.83 4.33"},
        "git": {"commit": "0123456789abcdef", "describe": "0123456-dirty",
                "changes": [" M crates/rmq-namesrv/src/lib.rs"]},
        "pinning": {"client_cpus_requested": "0", "client_cpus_allowed": "0", "server_cpus": "1"},
        "peers": [peer("waymark"), peer("java"), peer("ceiling")],
        "scenarios": scenarios,
    }))
    .unwrap()
}

fn three() -> Results {
    let mut two_cpus = ok("waymark", register(3_000, 34_000, 100 * 1024));
    two_cpus["part"] = "two-cpus".into();
    results(json!({
        // Waymark 2,000 ticks (20 s) for 5,000,000 queries: 4 µs each; Java
        // 40 µs each; the ceiling's window too short for a figure.
        "route-qps": {"runs": [ok("waymark", qps(2_000, 5_000_000)), ok("java", qps(2_000, 500_000)),
                               ok("ceiling", qps(40, 5_000_000))],
                      "info": {"two-cpus": {"server_cpus": "", "shares_generator_cpus": false,
                                            "skipped": "the machine has 1 CPU"}}},
        // 20 s of CPU, 20,000 queries at 4 µs (0.08 s), 10,000
        // registrations: 1,992 µs each. Java's without route-qps: *.
        "route-under-storm": runs(vec![ok("waymark", storm(2_000, 10_000, Some(4.0))),
                                       ok("java", storm(2_000, 2_000, None)),
                                       json!({"peer": "ceiling", "result": null, "error": "boom | bang"})]),
        // Steady: Waymark 1,000 µs a registration, Java 4,000 µs.
        "register": {"runs": [ok("waymark", register(2_000, 20_000, 100 * 1024)),
                              ok("java", register(2_000, 5_000, 800 * 1024)),
                              ok("ceiling", register(2_000, 200_000, 50 * 1024)), two_cpus],
                     "info": {"two-cpus": {"server_cpus": "1,2", "shares_generator_cpus": false,
                                           "skipped": null}}},
    }))
}

fn section(results: &Results, id: &str) -> String {
    let entry = scenario::ALL.iter().find(|e| e.id() == id).unwrap();
    render(*entry, results, None)
}

/// Asserts that `text` holds each of `parts`.
fn has(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "no {part:?} in:\n{text}");
    }
}

#[test]
fn sections_carry_their_figures() {
    let r = three();

    let text = section(&r, "route-qps");
    // Provenance first, then the run.
    let dirty = text.find("**Measured from a dirty tree (git 0123456-dirty):**");
    let run = text.find("Run 2026-12-05 20:56:08 UTC (20.3 min in all)");
    assert!(dirty.unwrap() < run.unwrap(), "{text}");
    has(
        &text,
        &[
            "Commit measured: `0123456789abcdef`",
            "Parameters: `rmq-bench route-qps --brokers 10 --topics 100 --spread 10 \
             --connections 64 --depth 4 --warmup 2s --duration 20s`.",
            "| Waymark | v | `c` |",
            // CPU share and per query; n/a below the tick floor.
            "| Waymark | 250,000 | 0.25 ms | 1.00 ms | 2.00 ms | 3.00 ms | 0 | 100.0 % | \
             4.00 µs | 2,216 B | 8.0 MiB | 2 % |",
            "| 2.0 % | n/a | 2,216 B |",
            "| server CPU per query (peer ÷ Waymark) | 10× | n/a | n/a |",
            "| route-qps ≥ 3× Java | 10.00× | yes |",
            "| route-qps ≥ 70 % of ceiling | 100.00 % | yes |",
            "#### route-qps on two CPUs\n\nNot run: the machine has 1 CPU.",
            "| route queries/s, server on two CPUs, ≥ 1.7× one CPU | not run: the machine has 1 \
             CPU | n/a |",
        ],
    );

    let text = section(&r, "route-under-storm");
    has(
        &text,
        &[
            "**Measured on a disturbed machine:** other processes used more than 15 % of a CPU \
             during route-under-storm Waymark (40 %), route-under-storm Java (40 %).",
            // Attributed, and marked where nothing was taken off.
            "| 100.0 % | 1,992 µs |",
            "| 100.0 % | 10,000 µs * |",
            "| server CPU per registration (peer ÷ Waymark) | 5.02× | n/a | n/a |",
            "| registration CPU under storm ≤ 1/3 of Java's (Java ÷ Waymark ≥ 3) | 5.02× | yes |",
        ],
    );
    // A failed run is a row across every column, its pipes made harmless.
    let failed = text.lines().find(|l| l.starts_with("| ceiling | failed"));
    let columns = " |".repeat(13);
    assert_eq!(
        failed.unwrap(),
        format!("| ceiling | failed: boom / bang |{columns}")
    );
    assert!(
        !text.contains("route-qps Waymark ("),
        "only its own disturbances"
    );

    has(
        &section(&r, "register"),
        &[
            "| 1000.0 | n/a | 2000.0 |",
            "| 100.0 % | 1,000 µs |",
            "| server CPU per steady registration (peer ÷ Waymark) | 4.00× | n/a | 0.10× |",
            "| RSS after steady phase (peer ÷ Waymark) | 8.00× | n/a | — |",
            "| registration CPU (steady) ≤ 1/3 of Java's (Java ÷ Waymark ≥ 3) | 4.00× | yes |",
            "| RSS with 1,000,000 entries, after the steady phase, ≤ 1/10 of Java's (Java ÷ \
             Waymark ≥ 10) | 8.00× | **no** |",
            "1,000,000 topic-queue entries; 1.8 MB of JSON per broker.",
        ],
    );
}

#[test]
fn two_cpus_are_judged_only_where_the_server_had_them_to_itself() {
    let mut r = three();
    // One CPU: 20,000 steady registrations over 2,000 ticks; two: 34,000.
    let text = section(&r, "register");
    has(
        &text,
        &[
            "#### register on two CPUs",
            "| Waymark | 2000.0 | 3400.0 | 1.70× | 150.0 % | 1,000 µs | 882 µs |",
            "| steady registrations/s, server on two CPUs, ≥ 1.7× one CPU | 1.70× | yes |",
        ],
    );
    assert!(!text.contains("also the generator's"));

    let mut pass = |value: Value| {
        let info = &mut r.scenarios.get_mut("register").unwrap().info;
        info.insert("two-cpus".into(), value);
        section(&r, "register")
    };
    has(
        &pass(json!({"server_cpus": "0,1", "shares_generator_cpus": true, "skipped": null})),
        &[
            "one of the server's two is also the generator's",
            "| steady registrations/s, server on two CPUs, ≥ 1.7× one CPU | 1.70×, not judged: \
             the generator ran on one of the two CPUs (the machine has 2), see \"register on two \
             CPUs\" | n/a |",
        ],
    );
    let skipped = "the machine has 1 CPU";
    has(
        &pass(json!({"server_cpus": "", "shares_generator_cpus": false, "skipped": skipped})),
        &["#### register on two CPUs\n\nNot run: the machine has 1 CPU."],
    );
}

#[test]
fn a_section_goes_after_the_one_before_it_and_is_replaced_in_place() {
    let (begin, end) = markers("route-sweep");
    assert!(begin.starts_with("<!-- rmq-bench:route-sweep:begin"));
    assert_eq!(end, "<!-- rmq-bench:route-sweep:end -->");
    let fresh = merge("", "hostile", "H\n");
    assert!(fresh.starts_with("# Benchmarks\n\n<!-- rmq-bench:hostile:begin"));
    let page = merge("# Benchmarks\n\n## Codec\n\nby hand\n", "route-qps", "Q\n");
    let head = "# Benchmarks\n\n## Codec\n\nby hand\n\n<!-- rmq-bench:route-qps:begin";
    assert!(page.starts_with(head));
    // route-sweep comes after route-qps, before what follows it; startup,
    // whose predecessors are absent but route-sweep, after route-sweep.
    let page = format!("{page}\n## Analysis\n\nby hand\n");
    let page = merge(&page, "route-sweep", "S\n");
    let page = merge(&page, "startup", "U\n");
    let at = |s: &str| page.find(s).unwrap_or_else(|| panic!("no {s} in {page}"));
    let order = [at("Q\n"), at("S\n"), at("U\n"), at("## Analysis")];
    assert!(order.is_sorted(), "{page}");
    has(&page, &["<!-- rmq-bench:startup:end -->\n\n## Analysis"]);
    // Rewritten in place, the rest kept.
    let again = merge(&page, "route-sweep", "S2\n");
    has(&again, &["S2\n", "Q\n", "by hand"]);
    assert!(!again.contains("S\n"));
    assert_eq!(again.matches("rmq-bench:route-sweep:begin").count(), 1);
}

#[test]
fn hostile_section_renders_a_table_per_attack() {
    let run = |attack: &str, alive: bool| {
        json!({
        "attack": attack, "error": null, "rss_before_kib": 8192, "rss_peak_kib": 12288, "rss_after_kib": 9216,
        "queries": {"count": 60, "mean_us": 0.0, "p50_us": 310.0, "p99_us": 1100.0, "p999_us": 0.0,
                    "max_us": 3700.0, "curve": []},
        "queries_sent": 60, "query_failures": u64::from(!alive),
        "query_first_error": if alive { Value::Null } else { "timed out after 2s".into() },
        "alive_after": alive, "after": if alive { "answered SUCCESS" } else { "exited (signal: 9)" },
        "out_of_memory": !alive, "refusal": {"attempts": 4, "closed": 4, "accepted": 0, "error_responses": 0,
        "first_error_response": null, "kept": 0, "connect_failed": 0, "first_connect_error": null},
        "attacker_sent_bytes": 0, "attacker_planned_bytes": 0, "note": "the server took 0.3 of 768.0 MiB"})
    };
    let outcome = |alive| {
        json!({"params": serde_json::to_value(params::<Hostile>(None, false).unwrap()).unwrap(),
        "flood_body_bytes": null, "duration_s": 42.0,
        "attacks": [run("big-header", true), run("connection-flood", alive)]})
    };
    let failed = json!({"peer": "rust-port", "result": null, "error": "not installed"});
    let hostile = runs(vec![
        ok("waymark", outcome(true)),
        ok("java", outcome(false)),
        failed,
    ]);
    let text = render(&Hostile, &results(json!({ "hostile": hostile })), None);
    has(
        &text,
        &[
            "#### big-header",
            "#### connection-flood",
            "took Waymark 42 s, Java 42 s",
            "| Waymark | 8.0 MiB → 12.0 MiB | 9.0 MiB | 0.31 ms | 1.10 ms | 3.70 ms | 0/60 | yes | \
             closed 4/4 |",
            "| 1/60 | **no**: exited (signal: 9), OutOfMemoryError in its log |",
            "- Java: first failed route query: timed out after 2s.",
            "Rust port: failed: not installed",
        ],
    );
    assert!(!text.contains("#### slow-frames"));
    assert_eq!(text.matches("| peer | RSS before → peak").count(), 2);
}
