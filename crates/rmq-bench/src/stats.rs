//! Latency histograms (ns, HdrHistogram) and their summaries (µs); few samples summarised
//! exactly ([`Summary`]).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// The percentiles kept for the latency charts.
pub const CURVE: [f64; 10] = [
    50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 100.0,
];

/// An empty latency histogram (nanoseconds).
pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 600_000_000_000, 3).expect("static histogram bounds are valid")
}

/// Records `nanos`, saturating at the histogram's bound.
pub fn record(histogram: &mut Histogram<u64>, nanos: u128) {
    histogram.saturating_record(u64::try_from(nanos).unwrap_or(u64::MAX).max(1));
}

/// A latency distribution in microseconds, with `(percentile, µs)` at each of [`CURVE`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
    pub curve: Vec<(f64, f64)>,
}

impl Latency {
    /// The summary of `histogram` (all zero when it is empty).
    pub fn of(histogram: &Histogram<u64>) -> Latency {
        if histogram.is_empty() {
            return Latency::default();
        }
        let at = |q: f64| histogram.value_at_quantile(q / 100.0) as f64 / 1_000.0;
        Latency {
            count: histogram.len(),
            mean_us: histogram.mean() / 1_000.0,
            p50_us: at(50.0),
            p99_us: at(99.0),
            p999_us: at(99.9),
            max_us: histogram.max() as f64 / 1_000.0,
            curve: CURVE.iter().map(|&q| (q, at(q))).collect(),
        }
    }
}

/// Median of `values` (`None` when empty).
pub fn median(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut sorted: Vec<f64> = values.into_iter().collect();
    sorted.sort_by(f64::total_cmp);
    // The middle value twice for an odd count, the two middle ones for an even count.
    let n = sorted.len();
    Some((sorted.get(n.saturating_sub(1) / 2)? + sorted[n / 2]) / 2.0)
}

/// The nearest-rank `q`-th percentile of `values` (`None` when empty).
pub fn percentile(values: &[f64], q: f64) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = (q / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len().max(1)) - 1).copied()
}

/// Arithmetic mean of `values` (`None` when empty).
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// A few samples summarised exactly, in their own unit (percentiles by nearest rank: below 100
/// samples p99 is the largest).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub count: usize,
    pub min: f64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    pub mean: f64,
}

impl Summary {
    /// The summary of `values` (`None` when empty).
    pub fn of(values: &[f64]) -> Option<Summary> {
        let at = |q| percentile(values, q);
        Some(Summary {
            count: values.len(),
            min: at(0.0)?,
            p50: at(50.0)?,
            p99: at(99.0)?,
            max: at(100.0)?,
            mean: mean(values)?,
        })
    }
}
