//! PNG charts of a run, drawn with plotters' bitmap backend: latency
//! percentile curves, memory and throughput per peer, and p99 latency
//! against the offered rate of the route-sweep.
//!
//! Text needs a TrueType font, loaded at run time (plotters' `ab_glyph`
//! feature, no system font library): `$RMQ_BENCH_FONT`, or DejaVu Sans
//! where Debian's `fonts-dejavu-core` puts it. Without one the charts are
//! skipped and the report says why. Drawing never fails a run.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::peer::PeerKind;
use crate::results::{of_peer, PeerOutcome, Results};
use crate::stats::Latency;

/// What was drawn.
#[derive(Debug, Clone, Default)]
pub struct Drawn {
    /// `(file name, alt text)` of each chart, relative to the report.
    pub files: Vec<(String, String)>,
    /// Why nothing (or not everything) was drawn.
    pub note: Option<String>,
}

type Fallible = Result<(), Box<dyn std::error::Error>>;

const FONT_PATHS: [&str; 4] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSansCondensed.ttf",
];

/// Registers a TrueType font as "sans-serif" once; the error says why not.
fn font() -> Result<(), String> {
    static LOADED: OnceLock<Result<(), String>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            let mut candidates: Vec<PathBuf> = std::env::var_os("RMQ_BENCH_FONT")
                .map(PathBuf::from)
                .into_iter()
                .collect();
            candidates.extend(FONT_PATHS.iter().map(PathBuf::from));
            let path = candidates.iter().find(|p| p.is_file()).ok_or_else(|| {
                "no TrueType font found (apt-get install fonts-dejavu-core, or set RMQ_BENCH_FONT)".to_owned()
            })?;
            let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
            // plotters keeps fonts for the life of the process.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
                .map_err(|_| format!("{} is not a usable font", path.display()))
        })
        .clone()
}

fn color(peer: PeerKind) -> RGBColor {
    match peer {
        PeerKind::Waymark => RGBColor(31, 119, 180),
        PeerKind::Java => RGBColor(255, 127, 14),
        PeerKind::RustPort => RGBColor(44, 160, 44),
        PeerKind::Ceiling => RGBColor(127, 127, 127),
    }
}

/// Draws every chart the results have data for into `dir`.
pub fn draw_all(results: &Results, dir: &Path) -> Drawn {
    let mut drawn = Drawn::default();
    if let Err(why) = font() {
        drawn.note = Some(why);
        return drawn;
    }
    let mut attempt = |file: &str, alt: &str, draw: &dyn Fn(&Path) -> Fallible| {
        let path = dir.join(file);
        match draw(&path) {
            Ok(()) => drawn.files.push((file.to_owned(), alt.to_owned())),
            Err(error) => {
                tracing::warn!(%error, file, "chart not drawn");
                drawn.note = Some(format!("{file}: {error}"));
            }
        }
    };
    if !results.route_qps.is_empty() || !results.route_under_storm.is_empty() {
        attempt(
            "bench-latency.png",
            "Route query latency percentiles per peer: route-qps and route-under-storm",
            &|p| latency_chart(results, p),
        );
    }
    if !results.startup.is_empty() || !results.register.is_empty() {
        attempt(
            "bench-rss.png",
            "Server RSS per peer: idle, and holding every register entry",
            &|p| rss_chart(results, p),
        );
    }
    if results.route_sweep.iter().any(|o| o.result.is_some()) {
        attempt(
            "bench-sweep.png",
            "route-sweep: p99 route query latency against the offered rate, per peer",
            &|p| sweep_chart(results, p),
        );
    }
    if !results.route_qps.is_empty() || !results.register.is_empty() {
        attempt(
            "bench-throughput.png",
            "Throughput per peer: route queries/s, registrations/s under storm, steady registrations/s",
            &|p| throughput_chart(results, p),
        );
    }
    drawn
}

/// Percentile → "nines" (50 → 0.3, 99 → 2, 99.9 → 3); 100 (max) → 5.
fn nines(percentile: f64) -> f64 {
    if percentile >= 100.0 {
        5.0
    } else {
        -(1.0 - percentile / 100.0).log10()
    }
}

fn nines_label(x: &f64) -> String {
    let labels = [
        (std::f64::consts::LOG10_2, "p50"),
        (1.0, "p90"),
        (2.0, "p99"),
        (3.0, "p99.9"),
        (4.0, "p99.99"),
        (5.0, "max"),
    ];
    labels
        .iter()
        .find(|(v, _)| (v - x).abs() < 0.05)
        .map_or_else(String::new, |(_, l)| (*l).to_owned())
}

fn latency_chart(results: &Results, path: &Path) -> Fallible {
    let root = BitMapBackend::new(path, (1400, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(700);
    let route: Vec<(PeerKind, &Latency)> = curves(&results.route_qps, |x| &x.latency);
    let storm: Vec<(PeerKind, &Latency)> = curves(&results.route_under_storm, |x| &x.queries);
    curve_panel(
        &left,
        "route-qps: query latency (closed loop, full speed)",
        &route,
    )?;
    curve_panel(
        &right,
        "route-under-storm: query latency (fixed rate)",
        &storm,
    )?;
    root.present()?;
    Ok(())
}

fn curves<T>(
    outcomes: &[PeerOutcome<T>],
    get: impl Fn(&T) -> &Latency,
) -> Vec<(PeerKind, &Latency)> {
    PeerKind::ALL
        .iter()
        .filter_map(|&p| of_peer(outcomes, p).map(|x| (p, get(x))))
        .filter(|(_, l)| !l.curve.is_empty())
        .collect()
}

fn curve_panel(
    area: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    title: &str,
    data: &[(PeerKind, &Latency)],
) -> Fallible {
    let values = data
        .iter()
        .flat_map(|(_, l)| l.curve.iter().map(|(_, us)| us / 1_000.0));
    let (lo, hi) = values.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (lo, hi) = if lo <= hi {
        ((lo / 2.0).max(0.001), hi * 2.0)
    } else {
        (0.01, 10.0)
    };
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.2f64..5.2f64, (lo..hi).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("percentile")
        .y_desc("latency (ms, log)")
        .x_labels(60)
        .x_label_formatter(&nines_label)
        .y_label_formatter(&|v| format!("{v}"))
        .label_style(("sans-serif", 14))
        .draw()?;
    for (peer, latency) in data {
        let c = color(*peer);
        let points: Vec<(f64, f64)> = latency
            .curve
            .iter()
            .map(|(p, us)| (nines(*p), us / 1_000.0))
            .collect();
        chart
            .draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))?
            .label(peer.title())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3)));
        chart.draw_series(points.iter().map(|p| Circle::new(*p, 3, c.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// One route-sweep step on the chart: offered thousands/s, p99 ms, and
/// whether the sweep stopped after it.
type SweepPoint = (f64, f64, bool);

/// p99 (ms, log) against the offered rate (thousands/s), a line per peer;
/// a step after which the sweep stopped (saturated, or the generator
/// behind) is a cross instead of a dot.
fn sweep_chart(results: &Results, path: &Path) -> Fallible {
    let root = BitMapBackend::new(path, (1000, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let lines: Vec<(PeerKind, Vec<SweepPoint>)> = PeerKind::ALL
        .iter()
        .filter_map(|&p| {
            let sweep = of_peer(&results.route_sweep, p)?;
            let points: Vec<SweepPoint> = sweep
                .steps
                .iter()
                .filter(|s| s.latency.count > 0)
                .map(|s| {
                    (
                        s.rate / 1_000.0,
                        s.latency.p99_us / 1_000.0,
                        s.stop.is_some(),
                    )
                })
                .collect();
            (!points.is_empty()).then_some((p, points))
        })
        .collect();
    let all = lines.iter().flat_map(|(_, pts)| pts.iter());
    let (x_max, lo, hi) = all.fold((0.0f64, f64::MAX, f64::MIN), |(x, lo, hi), &(r, v, _)| {
        (x.max(r), lo.min(v), hi.max(v))
    });
    let (lo, hi) = if lo <= hi {
        ((lo / 2.0).max(0.001), hi * 2.0)
    } else {
        (0.01, 10.0)
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "route-sweep: p99 query latency against the offered rate (open loop)",
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..(x_max * 1.08).max(1.0), (lo..hi).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("offered queries/s (thousands)")
        .y_desc("p99 (ms, log)")
        .y_label_formatter(&|v| format!("{v}"))
        .label_style(("sans-serif", 14))
        .draw()?;
    for (peer, points) in &lines {
        let c = color(*peer);
        let line: Vec<(f64, f64)> = points.iter().map(|&(x, y, _)| (x, y)).collect();
        chart
            .draw_series(LineSeries::new(line, c.stroke_width(2)))?
            .label(peer.title())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3)));
        chart.draw_series(
            points
                .iter()
                .filter(|p| !p.2)
                .map(|&(x, y, _)| Circle::new((x, y), 4, c.filled())),
        )?;
        chart.draw_series(
            points
                .iter()
                .filter(|p| p.2)
                .map(|&(x, y, _)| Cross::new((x, y), 7, c.stroke_width(3))),
        )?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

fn rss_chart(results: &Results, path: &Path) -> Fallible {
    let root = BitMapBackend::new(path, (1400, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(700);
    let mib = |kib: f64| kib / 1024.0;
    let idle: Vec<(PeerKind, f64)> = PeerKind::ALL
        .iter()
        .filter_map(|&p| {
            of_peer(&results.startup, p)
                .and_then(|x| x.median_rss_kib)
                .map(|k| (p, mib(k)))
        })
        .collect();
    let entries = results
        .register
        .iter()
        .find_map(|o| o.result.as_ref())
        .map_or(0, |x| x.params.layout.entries());
    let full: Vec<(PeerKind, f64)> = PeerKind::ALL
        .iter()
        .filter_map(|&p| {
            of_peer(&results.register, p)
                .and_then(|x| x.rss_kib)
                .map(|k| (p, mib(k as f64)))
        })
        .collect();
    bar_panel(&left, "idle RSS after start (MiB, log)", &idle, true, "MiB")?;
    let title = format!("RSS holding {entries} topic-queue entries (MiB, log)");
    bar_panel(&right, &title, &full, true, "MiB")?;
    root.present()?;
    Ok(())
}

fn throughput_chart(results: &Results, path: &Path) -> Fallible {
    let root = BitMapBackend::new(path, (1400, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((1, 3));
    let qps: Vec<(PeerKind, f64)> = PeerKind::ALL
        .iter()
        .filter_map(|&p| of_peer(&results.route_qps, p).map(|x| (p, x.qps)))
        .collect();
    let storm: Vec<(PeerKind, f64)> = PeerKind::ALL
        .iter()
        .filter_map(|&p| of_peer(&results.route_under_storm, p).map(|x| (p, x.registrations_per_s)))
        .collect();
    let steady: Vec<(PeerKind, f64)> = PeerKind::ALL
        .iter()
        .filter_map(|&p| of_peer(&results.register, p).map(|x| (p, x.steady_per_s)))
        .collect();
    bar_panel(&panels[0], "route-qps: queries/s", &qps, false, "")?;
    bar_panel(&panels[1], "storm: registrations/s", &storm, false, "")?;
    bar_panel(
        &panels[2],
        "register: steady registrations/s",
        &steady,
        false,
        "",
    )?;
    root.present()?;
    Ok(())
}

/// Value labels: centred above their bar.
fn value_style() -> TextStyle<'static> {
    TextStyle::from(("sans-serif", 15).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom))
}

fn bar_panel(
    area: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    title: &str,
    data: &[(PeerKind, f64)],
    log: bool,
    unit: &str,
) -> Fallible {
    if data.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = data.iter().map(|(p, _)| p.title()).collect();
    let max = data.iter().map(|(_, v)| *v).fold(0.0, f64::max).max(1e-9);
    let label = |v: f64| {
        if v >= 100.0 {
            format!("{v:.0} {unit}")
        } else {
            format!("{v:.1} {unit}")
        }
    };
    let x_labels = |v: &SegmentValue<usize>| match v {
        SegmentValue::CenterOf(i) => names.get(*i).map_or_else(String::new, |n| (*n).to_owned()),
        _ => String::new(),
    };
    // A discrete range covers both its ends: 0..n-1 gives n segments.
    let n = data.len();
    let last = n - 1;
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(title, ("sans-serif", 19))
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(70);
    if log {
        let min = data
            .iter()
            .map(|(_, v)| *v)
            .fold(f64::MAX, f64::min)
            .max(0.1);
        let lo = min / 3.0;
        let mut chart =
            builder.build_cartesian_2d((0..last).into_segmented(), (lo..max * 4.0).log_scale())?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_label_formatter(&x_labels)
            .y_label_formatter(&|v| format!("{v}"))
            .label_style(("sans-serif", 14))
            .draw()?;
        for (i, (peer, v)) in data.iter().enumerate() {
            let bar = [
                (SegmentValue::Exact(i), lo),
                (SegmentValue::Exact(i + 1), *v),
            ];
            let mut rect = Rectangle::new(bar, color(*peer).filled());
            rect.set_margin(0, 0, 14, 14);
            chart.draw_series(std::iter::once(rect))?;
            let at = (SegmentValue::CenterOf(i), *v * 1.08);
            chart.draw_series(std::iter::once(Text::new(label(*v), at, value_style())))?;
        }
    } else {
        let mut chart = builder.build_cartesian_2d((0..last).into_segmented(), 0f64..max * 1.2)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_label_formatter(&x_labels)
            .y_label_formatter(&|v| format!("{v:.0}"))
            .label_style(("sans-serif", 14))
            .draw()?;
        for (i, (peer, v)) in data.iter().enumerate() {
            let bar = [
                (SegmentValue::Exact(i), 0.0),
                (SegmentValue::Exact(i + 1), *v),
            ];
            let mut rect = Rectangle::new(bar, color(*peer).filled());
            rect.set_margin(0, 0, 14, 14);
            chart.draw_series(std::iter::once(rect))?;
            let at = (SegmentValue::CenterOf(i), *v + max * 0.01);
            chart.draw_series(std::iter::once(Text::new(label(*v), at, value_style())))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nines_scale() {
        assert!((nines(99.0) - 2.0).abs() < 1e-9);
        assert!((nines(99.9) - 3.0).abs() < 1e-9);
        assert_eq!(nines(100.0), 5.0);
        assert_eq!(nines_label(&2.0), "p99");
        assert_eq!(nines_label(&2.5), "");
    }
}
