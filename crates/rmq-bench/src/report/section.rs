//! The renderer every scenario declares its report section for: tables of columns, error rows,
//! ratio rows, targets, the two-CPU pass and charts.

use std::fmt::Write as _;
use std::path::Path;

use serde::de::DeserializeOwned;

use super::charts::{self, Panel};
use super::format::{self, cpu_share, div, met, or_na, us};
use crate::peer::PeerKind;
use crate::results::{PeerInfo, Results, Run, ScenarioRuns};
use crate::sample::ServerCpu;
use crate::scenario::{TwoCpus, TWO_CPUS};

/// A column: its heading and how a row's value is written.
pub type Col<T> = (&'static str, fn(&T) -> String);

/// A row of a ratio table: Waymark ÷ peer for a rate, peer ÷ Waymark for a cost; `—` for `not_for`.
pub struct Ratio<T> {
    pub label: &'static str,
    pub value: fn(&T) -> Option<f64>,
    pub waymark_over_peer: bool,
    pub not_for: &'static [PeerKind],
}

impl<T> Ratio<T> {
    /// Waymark ÷ peer: more is better.
    pub const fn rate(label: &'static str, value: fn(&T) -> Option<f64>) -> Ratio<T> {
        Ratio::new(label, value, true)
    }

    /// Peer ÷ Waymark: less is better.
    pub const fn cost(label: &'static str, value: fn(&T) -> Option<f64>) -> Ratio<T> {
        Ratio::new(label, value, false)
    }

    const fn new(label: &'static str, value: fn(&T) -> Option<f64>, up: bool) -> Ratio<T> {
        Ratio {
            label,
            value,
            waymark_over_peer: up,
            not_for: &[],
        }
    }
}

/// The peers a NameServer ratio table compares Waymark with.
pub const OTHERS: [PeerKind; 3] = [PeerKind::Java, PeerKind::RustPort, PeerKind::Ceiling];

/// One row: its label (the peer's title, unless the scenario says otherwise) and the value, or
/// the text of its error row.
pub struct Row<T> {
    pub peer: PeerKind,
    pub label: String,
    pub result: Result<T, String>,
}

impl<T> Row<T> {
    pub fn new(peer: PeerKind, label: impl Into<String>, result: Result<T, String>) -> Row<T> {
        Row {
            peer,
            label: label.into(),
            result,
        }
    }

    pub fn ok(&self) -> Option<&T> {
        self.result.as_ref().ok()
    }

    /// The row with its value written out by `cells`.
    fn written(&self, cells: impl FnOnce(&T) -> Vec<String>) -> Row<Vec<String>> {
        let result = self.result.as_ref().map(cells).map_err(Clone::clone);
        Row::new(self.peer, self.label.clone(), result)
    }
}

/// `peer`'s value among `rows`.
pub fn of<T>(rows: &[Row<T>], peer: PeerKind) -> Option<&T> {
    rows.iter().find(|r| r.peer == peer).and_then(Row::ok)
}

/// `peer`'s `f` ÷ `other`'s among `rows`.
pub fn over<T>(
    rows: &[Row<T>],
    f: fn(&T) -> Option<f64>,
    peer: PeerKind,
    other: PeerKind,
) -> Option<f64> {
    div(of(rows, peer).and_then(f), of(rows, other).and_then(f))
}

/// The error row's text of a failed run: `failed: …`, at most 160 characters of why.
pub fn failed(why: &str) -> String {
    format!("failed: {}", why.chars().take(160).collect::<String>())
}

/// What a scenario's two-CPU pass is measured by: its rate (heading and value), the server's CPU
/// over the window, and the CPU per request.
pub struct TwoCpuMeasure<T> {
    pub rate: &'static str,
    pub per_request: &'static str,
    pub rate_of: fn(&T) -> f64,
    pub cpu_of: fn(&T) -> Option<&ServerCpu>,
    pub per_request_of: fn(&T) -> Option<f64>,
}

/// One scenario's section being declared; `chart_dir` `None`: charts are not drawn.
pub struct Section<'a> {
    pub results: &'a Results,
    pub runs: &'a ScenarioRuns,
    pub id: &'static str,
    pub chart_dir: Option<&'a Path>,
    /// The peer table: the NameServer peers that ran, unless replaced.
    pub peers: Vec<PeerInfo>,
    targets: Vec<String>,
    body: String,
}

impl<'a> Section<'a> {
    pub fn new(
        id: &'static str,
        results: &'a Results,
        runs: &'a ScenarioRuns,
        chart_dir: Option<&'a Path>,
    ) -> Section<'a> {
        let ran = |p: &&PeerInfo| runs.runs.iter().any(|r| r.peer == p.peer);
        let peers = results.peers.iter().filter(ran).cloned().collect();
        Section {
            results,
            runs,
            id,
            chart_dir,
            peers,
            targets: Vec::new(),
            body: String::new(),
        }
    }

    /// The runs of `part`, in the order they ran.
    pub fn rows<T: DeserializeOwned>(&self, part: &str) -> Vec<Row<T>> {
        let runs = self.runs.runs.iter().filter(|r| r.part == part);
        let row = |r: &Run| Row::new(r.peer, r.peer.title(), r.outcome().map_err(|e| failed(&e)));
        runs.map(row).collect()
    }

    /// The parameters the runs recorded (the first that did).
    pub fn params<P: DeserializeOwned>(&self) -> Option<P> {
        let runs = self.runs.runs.iter();
        let mut all = runs.filter_map(|r| r.result.as_ref()?.get("params"));
        all.find_map(|p| P::deserialize(p).ok())
    }

    pub fn text(&mut self, text: impl AsRef<str>) {
        let _ = writeln!(self.body, "\n{}", text.as_ref());
    }

    pub fn heading(&mut self, title: impl AsRef<str>) {
        let _ = writeln!(self.body, "\n#### {}", title.as_ref());
    }

    /// A list item (consecutive ones make one list).
    pub fn item(&mut self, text: impl AsRef<str>) {
        let last = self.body.lines().last();
        if !last.is_some_and(|l| l.starts_with("- ")) {
            self.body.push('\n');
        }
        let _ = writeln!(self.body, "- {}", text.as_ref());
    }

    /// A table with a `peer` column first, a row per row.
    pub fn table<T>(&mut self, rows: &[Row<T>], cols: &[Col<T>]) {
        self.table_headed(Some("peer"), rows, cols);
    }

    /// A table whose first column is headed `first` (`None`: no label column).
    pub fn table_headed<T>(&mut self, first: Option<&str>, rows: &[Row<T>], cols: &[Col<T>]) {
        let heads: Vec<&str> = cols.iter().map(|(head, _)| *head).collect();
        let cells = |x: &T| cols.iter().map(|(_, cell)| cell(x)).collect();
        let rows: Vec<_> = rows.iter().map(|row| row.written(cells)).collect();
        self.cells(first, &heads, &rows);
    }

    /// A table of rows already written as cells, under `heads` (and `first`, the label
    /// column's, if the rows have one); an error row's text fills one cell, the rest empty.
    pub fn cells(&mut self, first: Option<&str>, heads: &[&str], rows: &[Row<Vec<String>>]) {
        let all: Vec<&str> = first.into_iter().chain(heads.iter().copied()).collect();
        // An empty heading is one space wide, as Markdown writers put it.
        let pad = |h: &&str| if h.is_empty() { "" } else { " " };
        let head: String = all.iter().map(|h| format!("{}{h} |", pad(h))).collect();
        let _ = writeln!(self.body, "\n|{head}\n|{}", "---|".repeat(all.len()));
        let error = |why: String| vec![why.replace('|', "/")];
        for row in rows {
            let label = first.map(|_| row.label.clone());
            let values = row.result.clone().unwrap_or_else(error);
            let cells: Vec<String> = label.into_iter().chain(values).collect();
            let missing = all.len().saturating_sub(cells.len());
            let empty = " |".repeat(if row.result.is_ok() { 0 } else { missing });
            let _ = writeln!(self.body, "| {} |{empty}", cells.join(" | "));
        }
    }

    /// Waymark's figures against those of each of `against`.
    pub fn ratios<T>(&mut self, rows: &[Row<T>], against: &[PeerKind], ratios: &[Ratio<T>]) {
        let vs = |p: &PeerKind| format!("vs {}", p.title());
        let heads: Vec<String> = against.iter().map(vs).collect();
        let (heads, rule) = (heads.join(" | "), "---|".repeat(against.len() + 1));
        let _ = writeln!(self.body, "\n| Waymark | {heads} |\n|{rule}");
        for ratio in ratios {
            let waymark = of(rows, PeerKind::Waymark).and_then(ratio.value);
            let cell = |&peer: &PeerKind| {
                let other = of(rows, peer).and_then(ratio.value);
                match (ratio.not_for.contains(&peer), ratio.waymark_over_peer) {
                    (true, _) => "—".into(),
                    (false, true) => format::ratio(waymark, other),
                    (false, false) => format::ratio(other, waymark),
                }
            };
            let cells: Vec<String> = against.iter().map(cell).collect();
            let _ = writeln!(self.body, "| {} | {} |", ratio.label, cells.join(" | "));
        }
    }

    /// A target: what it asks, what was measured (`None`: n/a), whether it was met (`None`: not
    /// judged).
    pub fn target(
        &mut self,
        what: impl AsRef<str>,
        measured: Option<String>,
        was_met: Option<bool>,
    ) {
        let (what, met) = (what.as_ref(), met(was_met));
        let measured = measured.unwrap_or_else(|| "n/a".into());
        self.targets
            .push(format!("| {what} | {measured} | {met} |"));
    }

    /// A target that a ratio of at least `min` meets, shown as `{v:.2}×`.
    pub fn at_least(&mut self, what: &str, value: Option<f64>, min: f64) {
        let measured = value.map(|v| format!("{v:.2}×"));
        self.target(what, measured, value.map(|v| v >= min));
    }

    /// The two-CPU pass: its table against `one` and its target (≥ 1.7×), judged only on two
    /// CPUs of its own.
    pub fn two_cpus<T: DeserializeOwned>(&mut self, one: &[Row<T>], m: &TwoCpuMeasure<T>) {
        let what = format!("{}, server on two CPUs, ≥ 1.7× one CPU", m.rate);
        let Some(pass) = self.runs.info::<TwoCpus>(TWO_CPUS) else {
            return self.target(what, None, None);
        };
        let id = self.id;
        self.heading(format!("{id} on two CPUs"));
        if let Some(why) = &pass.skipped {
            self.text(format!("Not run: {why}."));
            return self.target(what, Some(format!("not run: {why}")), None);
        }
        let (cpus, shared) = (self.results.machine.cpus, pass.shares_generator_cpus);
        let (caveat, unjudged) = match shared {
            true => (
                format!(
                    " This machine has {cpus} CPUs, so one of the server's two is also the \
                     generator's: the rate shows how much of the second CPU the server put to \
                     use, not how it scales, and the target is not judged."
                ),
                format!(
                    ", not judged: the generator ran on one of the two CPUs (the machine has \
                     {cpus}), see \"{id} on two CPUs\""
                ),
            ),
            false => Default::default(),
        };
        let server = &pass.server_cpus;
        self.text(format!(
            "`{id}` again on Waymark and Java, each server on CPUs {server} (`taskset -c {server}`).{caveat}"
        ));
        let two = self.rows::<T>(TWO_CPUS);
        let rate = |x: Option<&T>| x.map(m.rate_of);
        let cells = |peer, x: &T| {
            let (one, two_rate) = (of(one, peer), (m.rate_of)(x));
            let gain = rate(one).filter(|v| *v > 0.0);
            vec![
                or_na(rate(one), |v| format!("{v:.1}")),
                format!("{two_rate:.1}"),
                or_na(gain, |v| format!("{:.2}×", two_rate / v)),
                cpu_share((m.cpu_of)(x)),
                us(one.and_then(m.per_request_of)),
                us((m.per_request_of)(x)),
            ]
        };
        let rows = two.iter().map(|r| r.written(|x| cells(r.peer, x)));
        let heads = format!(
            "{}, one CPU|two CPUs|two ÷ one|server CPU, two CPUs|{}, one CPU|two CPUs",
            m.rate, m.per_request
        );
        let heads: Vec<&str> = heads.split('|').collect();
        self.cells(Some("peer"), &heads, &rows.collect::<Vec<_>>());
        let waymark = |rows| rate(of(rows, PeerKind::Waymark));
        let gain = div(waymark(&two), waymark(one));
        let measured = gain.map(|g| format!("{g:.2}×{unjudged}"));
        self.target(what, measured, gain.filter(|_| !shared).map(|g| g >= 1.7));
    }

    /// A chart of `panels` side by side, drawn from `rows` into `bench-<id>.png` beside the report.
    pub fn chart<T>(&mut self, rows: &[Row<T>], panels: &[Panel<T>]) {
        let Some(dir) = self.chart_dir else {
            return;
        };
        let file = format!("bench-{}.png", self.id);
        let ok = rows.iter().filter_map(|r| Some((r.peer, r.ok()?)));
        match charts::draw(&dir.join(&file), panels, &ok.collect::<Vec<_>>()) {
            Ok(alt) => self.text(format!("![{alt}]({file})")),
            Err(why) => self.text(format!("No chart: {why}")),
        }
    }

    /// The targets table (if any) and the body.
    pub fn finish(self) -> (String, String) {
        if self.targets.is_empty() {
            return (String::new(), self.body);
        }
        let targets = self.targets.join("\n");
        let head = "\n#### Targets\n\n| target | measured | met |\n|---|---|---|";
        (format!("{head}\n{targets}\n"), self.body)
    }
}
