//! A section's chart (plotters' bitmap backend, font from `$RMQ_BENCH_FONT`
//! or DejaVu Sans); without a font the section says why.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::ranged1d::SegmentValue;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::peer::PeerKind;
use crate::stats::Latency;

/// A point of a line: x, y, and whether it is drawn as a cross (the sweep
/// stopped after it).
pub type Point = (f64, f64, bool);

/// One panel of a chart.
pub enum Panel<T> {
    /// A line of points per peer, y on a log scale, flagged points as crosses; with
    /// `percentiles`, x in "nines" ([`curve`]).
    Lines {
        title: String,
        x: &'static str,
        y: &'static str,
        percentiles: bool,
        points: fn(&T) -> Vec<Point>,
    },
    /// A bar per peer, labelled with its value and `unit`.
    Bars {
        title: String,
        log: bool,
        unit: &'static str,
        value: fn(&T) -> Option<f64>,
    },
}

impl<T> Panel<T> {
    /// Latency percentile curves, a line per peer.
    pub fn curves(title: &str, points: fn(&T) -> Vec<Point>) -> Panel<T> {
        let (x, y, title) = ("percentile", "latency (ms, log)", title.to_owned());
        Panel::Lines {
            title,
            x,
            y,
            percentiles: true,
            points,
        }
    }

    /// A bar per peer, on a linear scale.
    pub fn bars(title: &str, value: fn(&T) -> Option<f64>) -> Panel<T> {
        Panel::Bars {
            title: title.to_owned(),
            log: false,
            unit: "",
            value,
        }
    }
}

/// A latency distribution as points of a percentile curve: (nines, ms).
pub fn curve(latency: &Latency) -> Vec<Point> {
    latency
        .curve
        .iter()
        .map(|(p, us)| (nines(*p), us / 1_000.0, false))
        .collect()
}

type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;
type Fallible = Result<(), Box<dyn std::error::Error>>;

/// Draws `panels` of `rows` into `path`; the chart's alt text, or why not.
pub fn draw<T>(
    path: &Path,
    panels: &[Panel<T>],
    rows: &[(PeerKind, &T)],
) -> Result<String, String> {
    font()?;
    let width = 700 * panels.len().max(1) as u32;
    let drawn = (|| -> Fallible {
        let root = BitMapBackend::new(path, (width, 540)).into_drawing_area();
        root.fill(&WHITE)?;
        for (area, panel) in root
            .split_evenly((1, panels.len().max(1)))
            .iter()
            .zip(panels)
        {
            match panel {
                Panel::Lines {
                    title,
                    x,
                    y,
                    percentiles,
                    points,
                } => {
                    let lines: Vec<_> = rows
                        .iter()
                        .map(|(peer, r)| (*peer, points(r)))
                        .filter(|(_, p)| !p.is_empty())
                        .collect();
                    lines_panel(area, title, (x, y), *percentiles, &lines)?;
                }
                Panel::Bars {
                    title,
                    log,
                    unit,
                    value,
                } => {
                    let bars: Vec<_> = rows
                        .iter()
                        .filter_map(|(p, r)| Some((*p, value(r)?)))
                        .collect();
                    bars_panel(area, title, &bars, *log, unit)?;
                }
            }
        }
        root.present()?;
        Ok(())
    })();
    drawn.map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(panels
        .iter()
        .map(|p| match p {
            Panel::Lines { title, .. } | Panel::Bars { title, .. } => title.as_str(),
        })
        .collect::<Vec<_>>()
        .join("; "))
}

/// Registers a TrueType font as "sans-serif" once; the error says why not.
fn font() -> Result<(), String> {
    static LOADED: OnceLock<Result<(), String>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            let mut candidates: Vec<PathBuf> = std::env::var_os("RMQ_BENCH_FONT")
                .map(PathBuf::from)
                .into_iter()
                .collect();
            candidates.extend(
                [
                    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                    "/usr/share/fonts/TTF/DejaVuSans.ttf",
                    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
                ]
                .map(PathBuf::from),
            );
            let path = candidates.iter().find(|p| p.is_file()).ok_or_else(|| {
                "no TrueType font found (apt-get install fonts-dejavu-core, or set RMQ_BENCH_FONT)"
                    .to_owned()
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

fn lines_panel(
    area: &Area<'_>,
    title: &str,
    (x_desc, y_desc): (&str, &str),
    percentiles: bool,
    lines: &[(PeerKind, Vec<Point>)],
) -> Fallible {
    let all = lines.iter().flat_map(|(_, points)| points.iter());
    let (x_max, lo, hi) = all.fold((0.0f64, f64::MAX, f64::MIN), |(x, lo, hi), &(r, v, _)| {
        (x.max(r), lo.min(v), hi.max(v))
    });
    let (lo, hi) = if lo <= hi {
        ((lo / 2.0).max(0.001), hi * 2.0)
    } else {
        (0.01, 10.0)
    };
    let x_range = if percentiles {
        0.2..5.2
    } else {
        0.0..(x_max * 1.08).max(1.0)
    };
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x_range, (lo..hi).log_scale())?;
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_desc)
        .y_desc(y_desc)
        .y_label_formatter(&|v| format!("{v}"));
    if percentiles {
        mesh.x_labels(60).x_label_formatter(&nines_label);
    }
    mesh.label_style(("sans-serif", 14)).draw()?;
    for (peer, points) in lines {
        let c = color(*peer);
        let line: Vec<(f64, f64)> = points.iter().map(|&(x, y, _)| (x, y)).collect();
        chart
            .draw_series(LineSeries::new(line, c.stroke_width(2)))?
            .label(peer.title())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3)));
        let dots = points
            .iter()
            .filter(|p| !p.2)
            .map(|&(x, y, _)| Circle::new((x, y), 4, c.filled()));
        chart.draw_series(dots)?;
        let crosses = points
            .iter()
            .filter(|p| p.2)
            .map(|&(x, y, _)| Cross::new((x, y), 7, c.stroke_width(3)));
        chart.draw_series(crosses)?;
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

fn bars_panel(
    area: &Area<'_>,
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
    let label = |v: f64| match v >= 100.0 {
        true => format!("{v:.0} {unit}"),
        false => format!("{v:.1} {unit}"),
    };
    let x_labels = |v: &SegmentValue<usize>| match v {
        SegmentValue::CenterOf(i) => names.get(*i).map_or_else(String::new, |n| (*n).to_owned()),
        _ => String::new(),
    };
    let style =
        TextStyle::from(("sans-serif", 15).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
    // A discrete range covers both its ends: 0..n-1 gives n segments.
    let segments = (0..data.len() - 1).into_segmented();
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(title, ("sans-serif", 19))
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(70);
    let bar = |i: usize, from: f64, v: f64, peer: PeerKind| {
        let mut rect = Rectangle::new(
            [
                (SegmentValue::Exact(i), from),
                (SegmentValue::Exact(i + 1), v),
            ],
            color(peer).filled(),
        );
        rect.set_margin(0, 0, 14, 14);
        rect
    };
    if log {
        let lo = data
            .iter()
            .map(|(_, v)| *v)
            .fold(f64::MAX, f64::min)
            .max(0.1)
            / 3.0;
        let mut chart = builder.build_cartesian_2d(segments, (lo..max * 4.0).log_scale())?;
        let mut mesh = chart.configure_mesh();
        mesh.disable_x_mesh()
            .x_label_formatter(&x_labels)
            .y_label_formatter(&|v| format!("{v}"));
        mesh.label_style(("sans-serif", 14)).draw()?;
        for (i, (peer, v)) in data.iter().enumerate() {
            chart.draw_series([bar(i, lo, *v, *peer)])?;
            let text = Text::new(
                label(*v),
                (SegmentValue::CenterOf(i), *v * 1.08),
                style.clone(),
            );
            chart.draw_series([text])?;
        }
    } else {
        let mut chart = builder.build_cartesian_2d(segments, 0f64..max * 1.2)?;
        let mut mesh = chart.configure_mesh();
        mesh.disable_x_mesh()
            .x_label_formatter(&x_labels)
            .y_label_formatter(&|v| format!("{v:.0}"));
        mesh.label_style(("sans-serif", 14)).draw()?;
        for (i, (peer, v)) in data.iter().enumerate() {
            chart.draw_series([bar(i, 0.0, *v, *peer)])?;
            let text = Text::new(
                label(*v),
                (SegmentValue::CenterOf(i), *v + max * 0.01),
                style.clone(),
            );
            chart.draw_series([text])?;
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
