//! What a run of seed 001's machine reports.

use super::*;

/// What a run measured. Times in ms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyncResult {
    /// Mean time per iteration of the measured gang: (time of its k-th
    /// barrier − its start) / k.
    pub time_per_iter: f64,
    /// 90% confidence half-width (batch means over iterations).
    pub ci90_half_width: f64,
    pub batch_means: Vec<f64>,
    /// The distribution of the measured gang's iteration times (ms): exact
    /// extremes, quantiles to about 1% (a fixed-memory HDR histogram).
    pub iteration_min: f64,
    pub iteration_p10: f64,
    pub iteration_p50: f64,
    pub iteration_p90: f64,
    pub iteration_p99: f64,
    pub iteration_max: f64,
    /// The same as a histogram, ten log-spaced bins per decade (edges
    /// 10^(j/10) ms), non-empty bins only: (low ms, high ms, iterations).
    pub iteration_histogram: Vec<(f64, f64, u64)>,
    /// When the measured gang first ran, and when it passed its k-th barrier.
    pub start: f64,
    pub end: f64,
    pub iterations: u64,
    /// Useful compute (all threads but the skewing ones) / (P · end): the
    /// share of capacity doing the jobs' work (spinning and overheads are
    /// `busy_wait_time` and `overhead_time`; pools' `utilization` counts
    /// overheads as busy, so this one has its own name).
    pub useful_utilization: f64,
    pub useful_time: f64,
    /// Processor time spent spinning at barriers (all gangs).
    pub busy_wait_time: f64,
    /// Of which by the measured gang.
    pub measured_busy_wait_time: f64,
    /// Processor time spent in context switches and blocking.
    pub overhead_time: f64,
    /// Dispatches of a thread other than the processor's previous one.
    pub context_switches: u64,
    pub blocking_events: u64,
    /// Yields of waiting threads (`wait = yield`).
    pub yields: u64,
    /// Mean yields per wait at a barrier (`wait = yield`; None when no thread
    /// waited by yielding): the seed's measured α.
    pub alpha_measured: Option<f64>,
    /// Quantum expiries that moved a thread to the tail (local scheduling).
    pub preemptions: u64,
    /// Gang switches (gang scheduling).
    pub slot_switches: u64,
    /// Time-weighted fraction of idle cells in the scheduled slots.
    pub fragmentation: f64,
    /// Barriers passed by all gangs (measured and competitors).
    pub gang_iterations: u64,
    pub events: u64,
    /// Most events pending at once (bounded: no growth with k).
    pub max_pending: usize,
    /// t_p and t_w of this configuration (eqs. 1–4; the seed's equations
    /// built on them are computed in one place, Python's
    /// `parsched.models.feitelson_rudolph`).
    pub t_p: f64,
    pub t_w: f64,
    /// Wall-clock seconds (not deterministic; excluded from comparisons by
    /// [`SyncResult::same_simulation`]).
    pub wall_seconds: f64,
}

impl SyncResult {
    /// Equal in everything but the wall-clock time.
    pub fn same_simulation(&self, other: &SyncResult) -> bool {
        let mut a = self.clone();
        a.wall_seconds = other.wall_seconds;
        &a == other
    }
}

/// Ten log-spaced bins per decade of milliseconds, non-empty ones only.
pub(super) fn log_bins(h: &Histogram<u64>) -> Vec<(f64, f64, u64)> {
    let mut bins: Vec<(i64, u64)> = Vec::new();
    for v in h.iter_recorded() {
        let ms = ticks_to_units(h.median_equivalent(v.value_iterated_to())).max(1e-9);
        let j = (10.0 * ms.log10()).floor() as i64;
        match bins.last_mut() {
            Some((b, c)) if *b == j => *c += v.count_at_value(),
            _ => bins.push((j, v.count_at_value())),
        }
    }
    bins.into_iter()
        .map(|(j, c)| {
            (
                10f64.powf(j as f64 / 10.0),
                10f64.powf((j + 1) as f64 / 10.0),
                c,
            )
        })
        .collect()
}
