//! A section's chart (plotters' bitmap backend, font from `$RMQ_BENCH_FONT`
//! or DejaVu Sans); without a font the section says why.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::ranged1d::SegmentValue::{self, CenterOf, Exact};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::peer::PeerKind;
use crate::stats::Latency;

/// A point of a line: x, y, and whether it is drawn as a cross (the sweep stopped after it).
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
        Panel::Lines {
            title: title.to_owned(),
            x: "percentile",
            y: "latency (ms, log)",
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

    fn title(&self) -> &str {
        match self {
            Panel::Lines { title, .. } | Panel::Bars { title, .. } => title,
        }
    }

    fn draw(&self, area: &Area<'_>, rows: &[(PeerKind, &T)]) -> Fallible {
        match self {
            Panel::Lines {
                title,
                x,
                y,
                percentiles,
                points,
            } => {
                let lines = rows.iter().map(|(peer, r)| (*peer, points(r)));
                let lines: Vec<_> = lines.filter(|(_, p)| !p.is_empty()).collect();
                lines_panel(area, title, (x, y), *percentiles, &lines)
            }
            Panel::Bars {
                title,
                log,
                unit,
                value,
            } => {
                let data = rows.iter().filter_map(|(p, r)| Some((*p, value(r)?)));
                let data: &[_] = &data.collect::<Vec<_>>();
                if data.is_empty() {
                    return Ok(());
                }
                let max = data.iter().map(|(_, v)| *v).fold(0.0, f64::max).max(1e-9);
                let mut builder = ChartBuilder::on(area);
                builder
                    .caption(title, ("sans-serif", 19))
                    .margin(15)
                    .x_label_area_size(35)
                    .y_label_area_size(70);
                if *log {
                    let lo = data.iter().map(|(_, v)| *v).fold(f64::MAX, f64::min);
                    let lo = lo.max(0.1) / 3.0;
                    let y = (lo..max * 4.0).log_scale();
                    draw_bars(builder, (data, unit), y, lo, |v| v * 1.08, &|v| {
                        format!("{v}")
                    })
                } else {
                    let (y, label_at) = (0f64..max * 1.2, |v| v + max * 0.01);
                    draw_bars(builder, (data, unit), y, 0.0, label_at, &|v| {
                        format!("{v:.0}")
                    })
                }
            }
        }
    }
}

/// A latency distribution as points of a percentile curve: (nines, ms).
pub fn curve(latency: &Latency) -> Vec<Point> {
    let point = |&(p, us): &(f64, f64)| (nines(p), us / 1_000.0, false);
    latency.curve.iter().map(point).collect()
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
    let columns = panels.len().max(1);
    let drawn = (|| -> Fallible {
        let root = BitMapBackend::new(path, (700 * columns as u32, 540)).into_drawing_area();
        root.fill(&WHITE)?;
        for (area, panel) in root.split_evenly((1, columns)).iter().zip(panels) {
            panel.draw(area, rows)?;
        }
        root.present()?;
        Ok(())
    })();
    drawn.map_err(|e| format!("{}: {e}", path.display()))?;
    let titles: Vec<&str> = panels.iter().map(Panel::title).collect();
    Ok(titles.join("; "))
}

/// Where DejaVu Sans is found when `$RMQ_BENCH_FONT` names no font.
const FONTS: [&str; 3] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
];

/// Registers a TrueType font as "sans-serif" once; the error says why not.
fn font() -> Result<(), String> {
    static LOADED: OnceLock<Result<(), String>> = OnceLock::new();
    LOADED.get_or_init(load_font).clone()
}

fn load_font() -> Result<(), String> {
    let given = std::env::var_os("RMQ_BENCH_FONT").map(PathBuf::from);
    let mut candidates = given.into_iter().chain(FONTS.map(PathBuf::from));
    let why = "no TrueType font found (apt-get install fonts-dejavu-core, or set RMQ_BENCH_FONT)";
    let path = candidates.find(|p| p.is_file()).ok_or(why)?;
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    // plotters keeps fonts for the life of the process.
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
        .map_err(|_| format!("{} is not a usable font", path.display()))
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
    match percentile {
        100.0.. => 5.0,
        p => -(1.0 - p / 100.0).log10(),
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
    let label = labels.iter().find(|(v, _)| (v - x).abs() < 0.05);
    label.map_or_else(String::new, |(_, l)| (*l).to_owned())
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
    let (lo, hi) = match lo <= hi {
        true => ((lo / 2.0).max(0.001), hi * 2.0),
        false => (0.01, 10.0),
    };
    let x_range = match percentiles {
        true => 0.2..5.2,
        false => 0.0..(x_max * 1.08).max(1.0),
    };
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x_range, (lo..hi).log_scale())?;
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_desc).y_desc(y_desc);
    mesh.y_label_formatter(&|v| format!("{v}"));
    if percentiles {
        mesh.x_labels(60).x_label_formatter(&nines_label);
    }
    mesh.label_style(("sans-serif", 14)).draw()?;
    for (peer, points) in lines {
        let c = color(*peer);
        let line = LineSeries::new(points.iter().map(|&(x, y, _)| (x, y)), c.stroke_width(2));
        let legend = move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3));
        chart.draw_series(line)?.label(peer.title()).legend(legend);
        let dots = points.iter().filter(|p| !p.2);
        chart.draw_series(dots.map(|&(x, y, _)| Circle::new((x, y), 4, c.filled())))?;
        let crosses = points.iter().filter(|p| p.2);
        chart.draw_series(crosses.map(|&(x, y, _)| Cross::new((x, y), 7, c.stroke_width(3))))?;
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

/// Bars of `data` labelled with their value and `unit`, from `from` on the y axis `y`, each
/// label at `label_at(value)`.
fn draw_bars<Y: AsRangedCoord<Value = f64>>(
    mut builder: ChartBuilder<'_, '_, BitMapBackend<'_>>,
    (data, unit): (&[(PeerKind, f64)], &str),
    y: Y,
    from: f64,
    label_at: impl Fn(f64) -> f64,
    y_labels: &dyn Fn(&f64) -> String,
) -> Fallible
where
    Y::CoordDescType: ValueFormatter<f64>,
{
    let label = |v: f64| format!("{:.*} {unit}", if v >= 100.0 { 0 } else { 1 }, v);
    let x_labels = |v: &SegmentValue<usize>| match v {
        CenterOf(i) => data.get(*i).map_or("", |(p, _)| p.title()).to_owned(),
        _ => String::new(),
    };
    let style = TextStyle::from(("sans-serif", 15).into_font());
    let style = style.pos(Pos::new(HPos::Center, VPos::Bottom));
    // A discrete range covers both its ends: 0..n-1 gives n segments.
    let segments = (0..data.len() - 1).into_segmented();
    let mut chart = builder.build_cartesian_2d(segments, y)?;
    let mut mesh = chart.configure_mesh();
    mesh.disable_x_mesh().x_label_formatter(&x_labels);
    mesh.y_label_formatter(y_labels);
    mesh.label_style(("sans-serif", 14)).draw()?;
    for (i, &(peer, v)) in data.iter().enumerate() {
        let mut bar = Rectangle::new([(Exact(i), from), (Exact(i + 1), v)], color(peer).filled());
        bar.set_margin(0, 0, 14, 14);
        chart.draw_series([bar])?;
        let at = (CenterOf(i), label_at(v));
        chart.draw_series([Text::new(label(v), at, style.clone())])?;
    }
    Ok(())
}
