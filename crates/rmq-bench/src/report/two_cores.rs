//! The passes with the server on two CPUs: a section per scenario (rate on
//! one CPU and on two, the server's CPU share and CPU per request) and the
//! targets, judged only where the server had both CPUs to itself.

use std::fmt::Write as _;

use super::{cpu_share, error_row, us, Target};
use crate::cpu::ServerCpu;
use crate::peer::PeerKind;
use crate::results::{of_peer, PeerOutcome, Results, TwoCores};
use crate::scenario::register::Register;
use crate::scenario::route_qps::RouteQps;

/// What a scenario's two-CPU pass is measured by.
struct Measure<T> {
    /// The scenario, as its section is headed.
    scenario: &'static str,
    /// The rate's column heading.
    rate: &'static str,
    /// The CPU-per-request column heading.
    per_request: &'static str,
    rate_of: fn(&T) -> f64,
    cpu_of: fn(&T) -> Option<&ServerCpu>,
    per_request_of: fn(&T) -> Option<f64>,
}

const REGISTER: Measure<Register> = Measure {
    scenario: "register",
    rate: "steady registrations/s",
    per_request: "CPU per steady registration",
    rate_of: |x| x.steady_per_s,
    cpu_of: |x| x.steady_server_cpu.as_ref(),
    per_request_of: |x| x.steady_cpu_us_per_registration,
};

const ROUTE_QPS: Measure<RouteQps> = Measure {
    scenario: "route-qps",
    rate: "route queries/s",
    per_request: "CPU per query",
    rate_of: |x| x.qps,
    cpu_of: |x| x.server_cpu.as_ref(),
    per_request_of: |x| x.cpu_us_per_query,
};

/// The two targets: steady registrations/s and route queries/s on two
/// CPUs, each ≥ 1.7× one CPU.
pub(super) fn targets(r: &Results) -> [Target; 2] {
    [
        target(
            "steady registrations/s, server on two CPUs, ≥ 1.7× one CPU",
            &REGISTER,
            r.register_two_cores.as_ref(),
            &r.register,
            r.machine.cpus,
        ),
        target(
            "route queries/s, server on two CPUs, ≥ 1.7× one CPU",
            &ROUTE_QPS,
            r.route_qps_two_cores.as_ref(),
            &r.route_qps,
            r.machine.cpus,
        ),
    ]
}

fn target<T>(
    what: &'static str,
    measure: &Measure<T>,
    two: Option<&TwoCores<T>>,
    one: &[PeerOutcome<T>],
    cpus: usize,
) -> Target {
    let w = PeerKind::Waymark;
    let unjudged = |measured: String| Target {
        what,
        measured,
        met: None,
    };
    let Some(two) = two else {
        return unjudged("n/a".into());
    };
    if let Some(why) = &two.skipped {
        return unjudged(format!("not run: {why}"));
    }
    let gain = of_peer(&two.runs, w)
        .zip(of_peer(one, w))
        .map(|(two, one)| ((measure.rate_of)(two), (measure.rate_of)(one)))
        .filter(|(_, one)| *one > 0.0)
        .map(|(two, one)| two / one);
    match gain {
        None => unjudged("n/a".into()),
        Some(gain) if two.shares_generator_cpus => unjudged(format!(
            "{gain:.2}×, not judged: the generator ran on one of the two CPUs (the machine has \
             {cpus}), see \"{} on two CPUs\"",
            measure.scenario
        )),
        Some(gain) => Target {
            what,
            measured: format!("{gain:.2}×"),
            met: Some(gain >= 1.7),
        },
    }
}

/// `### register on two CPUs` and `### route-qps on two CPUs`, for the
/// passes that ran or were skipped.
pub(super) fn sections(out: &mut String, r: &Results) {
    if let Some(two) = &r.route_qps_two_cores {
        section(out, &ROUTE_QPS, two, &r.route_qps, r.machine.cpus);
    }
    if let Some(two) = &r.register_two_cores {
        section(out, &REGISTER, two, &r.register, r.machine.cpus);
    }
}

fn section<T>(
    out: &mut String,
    measure: &Measure<T>,
    two: &TwoCores<T>,
    one: &[PeerOutcome<T>],
    cpus: usize,
) {
    let _ = writeln!(out, "\n### {} on two CPUs\n", measure.scenario);
    if let Some(why) = &two.skipped {
        let _ = writeln!(out, "Not run: {why}.");
        return;
    }
    let _ = writeln!(
        out,
        "`{0}` again on Waymark and Java, each server on CPUs {1} (`taskset -c {1}`), the generator \
         as above: whether the server answers faster with a second core. \"server CPU\" is the \
         measured window's in % of one CPU.",
        measure.scenario, two.server_cpus
    );
    if two.shares_generator_cpus {
        let _ = writeln!(
            out,
            "\nThis machine has {cpus} CPUs, so one of the server's two is also the generator's: the server \
             gets what the generator (and the loopback traffic it causes) leaves of that CPU, and the rate \
             below shows how much of the second CPU the server put to use, not how it scales. Where the \
             machine has two CPUs besides the generator's, the server gets them to itself and the target \
             is judged."
        );
    }
    let _ = writeln!(
        out,
        "\n| peer | {0}, one CPU | two CPUs | two ÷ one | server CPU, two CPUs | {1}, one CPU | two CPUs |",
        measure.rate, measure.per_request
    );
    out.push_str("|---|---|---|---|---|---|---|\n");
    for outcome in &two.runs {
        let peer = outcome.peer;
        if error_row(out, &two.runs, peer, 7) {
            continue;
        }
        let (Some(x), one) = (outcome.result.as_ref(), of_peer(one, peer)) else {
            continue;
        };
        let rate = (measure.rate_of)(x);
        let one_rate = one.map(measure.rate_of);
        let _ = writeln!(
            out,
            "| {} | {} | {rate:.1} | {} | {} | {} | {} |",
            peer.title(),
            one_rate.map_or("n/a".into(), |v| format!("{v:.1}")),
            one_rate
                .filter(|v| *v > 0.0)
                .map_or("n/a".into(), |v| format!("{:.2}×", rate / v)),
            cpu_share((measure.cpu_of)(x)),
            us(one.and_then(measure.per_request_of)),
            us((measure.per_request_of)(x)),
        );
    }
}
