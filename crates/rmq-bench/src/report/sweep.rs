//! The route-sweep part of the NameServer section: what each server held,
//! then a table per server with one row per offered rate.

use std::fmt::Write as _;

use super::{cpu_share, error_row, ms, noise, num, us, MIN_TICKS};
use crate::peer::PeerKind;
use crate::results::{of_peer, Results};
use crate::scenario::route_sweep::{
    RouteSweep, Step, Stop, MAX_LAG_P99_US, MAX_P99_US, MIN_ACHIEVED,
};

/// `### route-sweep`: the method, a summary row per server and each
/// server's steps.
pub(super) fn sweep_section(out: &mut String, r: &Results, peers: &[PeerKind]) {
    let Some(params) = r
        .route_sweep
        .iter()
        .find_map(|o| o.result.as_ref())
        .map(|x| &x.params)
    else {
        return;
    };
    let l = &params.layout;
    let rates: Vec<String> = params.rates.iter().map(|&v| num(v)).collect();
    let _ = writeln!(
        out,
        "\n### route-sweep\n\n{} brokers × {} topics (each topic on {} brokers); GET_ROUTEINFO_BY_TOPIC round-robin \
         over all topics on {} connections, open loop: each query is sent when it is due, whatever the answers do, \
         at {}/s in turn, each rate {:.1} s of warmup and then {:.0} s measured, on one server process. \
         \"answered/s\": answers that arrived inside the window, per second. Latency: every query due inside the \
         window, from the moment it was handed to its connection to its answer. \"lag\": how late the generator \
         sent behind the schedule; a p99 above {:.0} ms marks the generator, not the server, as behind, and the \
         rate as not really offered. The rate stops rising for a server after the first rate at which it answered \
         fewer than {:.0} % of the offered queries inside the window or its p99 passed {:.0} ms (\"saturated\"), or \
         at which the generator was behind. \"server CPU\" is the server's utime + stime over the window in % of \
         one CPU; \"CPU per query\" that time ÷ the answers in the window, n/a below {MIN_TICKS} clock ticks of \
         10 ms (the lower rates, for a server that needs a few µs a query). A window during which other processes \
         used more than 15 % of a CPU is measured again (up to 3 windows).\n",
        l.brokers,
        l.topics_per_broker,
        l.spread,
        params.connections,
        rates.join(", "),
        params.warmup_s,
        params.duration_s,
        MAX_LAG_P99_US / 1_000.0,
        MIN_ACHIEVED * 100.0,
        MAX_P99_US / 1_000.0,
    );
    out.push_str("| peer | highest rate held | p99 there | CPU per query there | stopped after | because |\n");
    out.push_str("|---|---|---|---|---|---|\n");
    for &peer in peers {
        if error_row(out, &r.route_sweep, peer, 6) {
            continue;
        }
        if let Some(x) = of_peer(&r.route_sweep, peer) {
            let _ = writeln!(out, "{}", summary_row(peer, x));
        }
    }
    for &peer in peers {
        let Some(x) = of_peer(&r.route_sweep, peer) else {
            continue;
        };
        let _ = writeln!(out, "\n{}:\n", peer.title());
        out.push_str("| offered/s | answered/s | p50 | p99 | p99.9 | errors | lag p99 | lag max | server CPU | CPU per query | others' CPU | |\n");
        out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for step in &x.steps {
            let _ = writeln!(out, "{}", step_row(step));
        }
    }
}

fn summary_row(peer: PeerKind, x: &RouteSweep) -> String {
    let held = x.highest_held();
    let at = held.and_then(|(rate, _)| x.steps.iter().find(|s| s.rate == rate));
    let last = x.steps.last();
    let (stopped, because) = match last.and_then(|s| s.stop.map(|why| (s.rate, why))) {
        Some((rate, why)) => (format!("{}/s", num(rate)), stop_text(why)),
        None => ("—".to_owned(), "every rate held".to_owned()),
    };
    format!(
        "| {} | {} | {} | {} | {stopped} | {because} |",
        peer.title(),
        held.map_or("none".into(), |(rate, bound)| format!(
            "{}{}/s",
            if bound { "≥ " } else { "" },
            num(rate)
        )),
        at.map_or("n/a".into(), |s| ms(s.latency.p99_us)),
        us(at.and_then(|s| s.cpu_us_per_query)),
    )
}

fn stop_text(stop: Stop) -> String {
    match stop {
        Stop::Saturated => "saturated".into(),
        Stop::GeneratorBehind => "**generator behind** (rate not really offered)".into(),
    }
}

fn step_row(s: &Step) -> String {
    let latency = |v: f64| {
        if s.latency.count == 0 {
            "n/a".to_owned()
        } else {
            ms(v)
        }
    };
    format!(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
        num(s.rate),
        num(s.achieved_per_s),
        latency(s.latency.p50_us),
        latency(s.latency.p99_us),
        latency(s.latency.p999_us),
        s.errors,
        ms(s.schedule_lag.p99_us),
        ms(s.schedule_lag.max_us),
        cpu_share(s.server_cpu.as_ref()),
        us(s.cpu_us_per_query),
        noise(s.others_cpu_percent),
        s.stop.map_or(String::new(), stop_text),
    )
}
