//! Seed 001's configuration: keys, defaults and validation.

use super::*;

/// How a thread waits at a barrier, and where a released blocked thread
/// goes in its processor's queue: the core's policies (one definition for
/// every machine).
pub use parsched_core::policy::local::Wakeup;
pub use parsched_core::policy::wait::WaitStrategy;

/// The scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SyncSched {
    /// Uncoordinated per-processor round robin.
    Local,
    /// Gang scheduling with Ousterhout's matrix.
    #[default]
    Gang,
}

/// What the other `l − 1` threads per processor do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Competitors {
    /// Identical iterative gangs (same program and waiting strategy).
    #[default]
    Same,
    /// Independent compute-bound threads that never block.
    Compute,
}

/// Distribution of the per-iteration compute time of the gangs' threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ComputeDist {
    /// U(grain, grain + var): GRAIN and VAR of section 3.3.
    #[default]
    Uniform,
    /// grain + Exp(mean var): t_w = var·(H_n − 1) can exceed t_p, which the
    /// uniform cannot (t_w ≤ (n−1)/(n+1)·t_p), so Figure 9's blocking region
    /// can be simulated.
    Exponential,
    /// One of `samples` (ms), each equally likely: any distribution a user
    /// brings (measured compute times, or draws from any law); grain and var
    /// are not used.
    Empirical,
}

/// Seed 001's model. Keys follow the paper's symbols; times in ms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyncConfig {
    /// Gang size n.
    pub n: u32,
    /// Threads per processor ℓ (the measured gang plus ℓ − 1 competitors).
    pub l: u32,
    /// Processors P (default: n).
    #[serde(rename = "P")]
    pub procs: Option<u32>,
    /// Iterations k of the measured gang.
    pub k: u64,
    /// Minimal compute per iteration (ms), GRAIN in time units.
    pub grain: f64,
    /// Spread of the compute per iteration (ms): U(grain, grain + var) for
    /// `dist = uniform`, grain + Exp(mean var) for `dist = exponential`.
    pub var: f64,
    /// Distribution of the per-iteration compute time.
    #[serde(default)]
    pub dist: ComputeDist,
    /// `dist = empirical`: the compute times (ms) drawn from, each equally
    /// likely (empty otherwise).
    #[serde(default)]
    pub samples: Vec<f64>,
    /// Barrier cost added to every compute (ms).
    pub barrier_cost: f64,
    /// Quantum τq (ms).
    pub tq: f64,
    /// Context-switch cost τcs (ms).
    pub tcs: f64,
    /// Blocking costs α·τcs.
    pub alpha: f64,
    pub wait: WaitStrategy,
    /// Two-phase: spin this long (ms of processor time) before blocking.
    pub spin_limit: f64,
    pub wakeup: Wakeup,
    pub sched: SyncSched,
    pub competitors: Competitors,
    /// Start with skewing threads (section 3.3).
    pub skew: bool,
    /// Local scheduling: each processor's initial run-queue order of its ℓ
    /// threads is a random permutation (stream `Skew`, sub-stream p + 1).
    /// With a fixed common order, rigid round robin keeps the partners of a
    /// gang in the same position of every processor's round, offset only by
    /// the skew, and busy waiting degrades linearly, not as ℓ^n; equation
    /// (8) assumes the quanta are placed at random in the round.
    pub shuffle: bool,
    /// Batches for the batch-means confidence interval.
    pub batches: u32,
    pub seed: u64,
    /// A run whose estimated event count ([`SyncConfig::estimate`]) is
    /// above this is refused before it starts; 0: no limit.
    #[serde(default = "default_max_events")]
    pub max_events: u64,
}

fn default_max_events() -> u64 {
    DEFAULT_MAX_EVENTS
}

pub use crate::machines::common::DEFAULT_MAX_EVENTS;

/// Longest time a time key may hold (ms): 10^9 ms, 11.6 days. The clock
/// counts nanoseconds in 64 bits (584 years over a whole run), so a
/// quantum, compute or cost beyond this leaves no room for a run.
pub const MAX_TIME_MS: f64 = 1e9;

/// Longest simulated time of a run (ms): 10^12 ms, about 31.7 years, well
/// inside the clock's 1.8·10^13 ms.
pub const MAX_RUN_MS: f64 = 1e12;

/// What a configuration will cost, from the configuration alone: upper
/// estimates of the simulated time and of the events handled.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RunEstimate {
    /// Simulated time, ms.
    pub sim_time_ms: f64,
    /// Events (the result's `events` stays below this).
    pub events: f64,
}

impl Default for SyncConfig {
    fn default() -> Self {
        SyncConfig {
            n: 10,
            l: 3,
            procs: None,
            k: 50_000,
            grain: 1.0,
            var: 1.0,
            dist: ComputeDist::Uniform,
            samples: Vec::new(),
            barrier_cost: 0.137,
            tq: 50.0,
            tcs: 0.2,
            alpha: 1.5,
            wait: WaitStrategy::Busy,
            spin_limit: 0.1,
            wakeup: Wakeup::Tail,
            sched: SyncSched::Gang,
            competitors: Competitors::Same,
            skew: true,
            shuffle: true,
            batches: 20,
            seed: 1,
            max_events: DEFAULT_MAX_EVENTS,
        }
    }
}

/// Every key [`SyncConfig::set`] accepts.
pub const KEYS: &[&str] = &[
    "n",
    "l",
    "P",
    "k",
    "grain",
    "var",
    "dist",
    "samples",
    "barrier_cost",
    "tq",
    "tcs",
    "alpha",
    "wait",
    "spin_limit",
    "wakeup",
    "sched",
    "competitors",
    "skew",
    "shuffle",
    "batches",
    "seed",
    "max_events",
];

fn num(key: &str, v: &Value) -> Result<f64, ConfigError> {
    v.as_f64(key)
}

fn int(key: &str, v: &Value) -> Result<u64, ConfigError> {
    v.as_u64(key)
}

fn int32(key: &str, v: &Value) -> Result<u32, ConfigError> {
    v.as_u32(key)
}

fn boolean(key: &str, v: &Value) -> Result<bool, ConfigError> {
    v.as_bool(key)
}

fn choice<'a>(key: &str, v: &Value, allowed: &[&'a str]) -> Result<&'a str, ConfigError> {
    let s = v.as_str(key, allowed)?;
    Ok(allowed
        .iter()
        .find(|a| **a == s)
        .copied()
        .expect("as_str checked membership"))
}

impl SyncConfig {
    /// Sets one key.
    pub fn set(&mut self, key: &str, v: &Value) -> Result<(), ConfigError> {
        match key {
            "n" => self.n = int32(key, v)?,
            "l" => self.l = int32(key, v)?,
            "P" => self.procs = Some(int32(key, v)?),
            "k" => self.k = int(key, v)?,
            "grain" => self.grain = num(key, v)?,
            "var" => self.var = num(key, v)?,
            "dist" => {
                self.dist = match choice(key, v, &["uniform", "exponential", "empirical"])? {
                    "exponential" => ComputeDist::Exponential,
                    "empirical" => ComputeDist::Empirical,
                    _ => ComputeDist::Uniform,
                }
            }
            "samples" => self.samples = v.as_f64_list(key)?,
            "barrier_cost" => self.barrier_cost = num(key, v)?,
            "tq" => self.tq = num(key, v)?,
            "tcs" => self.tcs = num(key, v)?,
            "alpha" => self.alpha = num(key, v)?,
            "spin_limit" => self.spin_limit = num(key, v)?,
            "wait" => {
                self.wait = match choice(key, v, &["busy", "block", "twophase", "yield"])? {
                    "block" => WaitStrategy::Block,
                    "twophase" => WaitStrategy::TwoPhase,
                    "yield" => WaitStrategy::Yield,
                    _ => WaitStrategy::Busy,
                }
            }
            "wakeup" => {
                self.wakeup = match choice(key, v, &["tail", "priority"])? {
                    "priority" => Wakeup::Priority,
                    _ => Wakeup::Tail,
                }
            }
            "sched" => {
                self.sched = match choice(key, v, &["local", "gang"])? {
                    "local" => SyncSched::Local,
                    _ => SyncSched::Gang,
                }
            }
            "competitors" => {
                self.competitors = match choice(key, v, &["same", "compute"])? {
                    "compute" => Competitors::Compute,
                    _ => Competitors::Same,
                }
            }
            "skew" => self.skew = boolean(key, v)?,
            "shuffle" => self.shuffle = boolean(key, v)?,
            "batches" => self.batches = int32(key, v)?,
            "seed" => self.seed = int(key, v)?,
            "max_events" => self.max_events = int(key, v)?,
            _ => return Err(ConfigError::new(key, "unknown key", KEYS.join(", "))),
        }
        Ok(())
    }

    /// The number of processors P.
    pub fn procs(&self) -> u32 {
        self.procs.unwrap_or(self.n)
    }

    /// Checks every value; the error names the key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let p = self.procs();
        if self.n == 0 {
            return Err(ConfigError::new("n", "a gang of 0 threads", "n >= 1"));
        }
        if p == 0 {
            return Err(ConfigError::new("P", "0 processors", "P >= 1"));
        }
        if self.n > p {
            return Err(ConfigError::new(
                "n",
                format!(
                    "a gang of {} threads is larger than the machine (P = {p})",
                    self.n
                ),
                "n <= P",
            ));
        }
        if self.l == 0 {
            return Err(ConfigError::new("l", "0 threads per processor", "l >= 1"));
        }
        if self.k == 0 {
            return Err(ConfigError::new("k", "0 iterations", "k >= 1"));
        }
        if self.wait == WaitStrategy::Yield && ticks(self.tcs.max(0.0)) == 0 {
            // Yields that cost nothing would repeat for ever at one instant.
            return Err(ConfigError::new(
                "tcs",
                format!("{} with wait = yield: each yield costs τcs", self.tcs),
                "tcs > 0 with wait = yield",
            ));
        }
        for (f, v) in [
            ("grain", self.grain),
            ("var", self.var),
            ("barrier_cost", self.barrier_cost),
            ("tcs", self.tcs),
            ("alpha", self.alpha),
            ("spin_limit", self.spin_limit),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(ConfigError::new(
                    f,
                    format!("{v} is negative or not finite"),
                    "a finite number >= 0",
                ));
            }
        }
        for (f, v) in [
            ("grain", self.grain),
            ("var", self.var),
            ("barrier_cost", self.barrier_cost),
            ("tq", self.tq),
            ("tcs", self.tcs),
            ("spin_limit", self.spin_limit),
            ("samples", self.samples.iter().copied().fold(0.0, f64::max)),
        ] {
            if v > MAX_TIME_MS {
                return Err(ConfigError::new(
                    f,
                    format!(
                        "{v} ms is beyond 10^9 ms (11.6 days): the clock counts ns in 64 bits, \
                         584 years for a whole run"
                    ),
                    "0..=1e9 (ms)",
                ));
            }
        }
        if self.alpha > 1e6 {
            return Err(ConfigError::new(
                "alpha",
                format!("{} is beyond 10^6: a block would cost α·τcs", self.alpha),
                "0..=1e6",
            ));
        }
        if self.dist == ComputeDist::Empirical {
            if self.samples.is_empty() {
                return Err(ConfigError::new(
                    "samples",
                    "no samples for dist = empirical",
                    "at least one compute time (ms)",
                ));
            }
            if let Some(x) = self.samples.iter().find(|x| !(**x >= 0.0 && x.is_finite())) {
                return Err(ConfigError::new(
                    "samples",
                    format!("{x} is negative or not finite"),
                    "finite numbers >= 0",
                ));
            }
            if self.t_p() < 1e-6 {
                return Err(ConfigError::new(
                    "samples",
                    "mean sample + barrier_cost is below one tick (1e-6 ms)",
                    "mean + barrier_cost >= 1e-6",
                ));
            }
        } else if !self.samples.is_empty() {
            return Err(ConfigError::new(
                "samples",
                "given but dist is not empirical",
                "samples only with dist = empirical",
            ));
        } else if self.grain + self.barrier_cost < 1e-6 {
            // Iterations of zero duration would never let time advance.
            return Err(ConfigError::new(
                "grain",
                "grain + barrier_cost is below one tick (1e-6 ms)",
                "grain + barrier_cost >= 1e-6",
            ));
        }
        if !(self.tq > 0.0 && self.tq.is_finite()) {
            return Err(ConfigError::new(
                "tq",
                format!("{} is not a positive quantum", self.tq),
                "a finite number > 0",
            ));
        }
        if self.tcs >= self.tq {
            return Err(ConfigError::new(
                "tcs",
                format!(
                    "a context switch of {} is not shorter than the quantum {}",
                    self.tcs, self.tq
                ),
                "tcs < tq",
            ));
        }
        if self.batches == 0 {
            return Err(ConfigError::new("batches", "0 batches", "batches >= 1"));
        }
        let est = self.estimate();
        if est.sim_time_ms > MAX_RUN_MS {
            return Err(ConfigError::new(
                "k",
                format!(
                    "the run would simulate about {:.1e} ms ({}), beyond the simulator's \
                     clock (10^12 ms, 31.7 years, at most)",
                    est.sim_time_ms,
                    human_ms(est.sim_time_ms)
                ),
                "fewer iterations k, or a shorter compute (grain, var, barrier_cost) or quantum",
            ));
        }
        if self.max_events > 0 && est.events > self.max_events as f64 {
            return Err(ConfigError::new(
                "max_events",
                format!(
                    "the run would take about {:.1e} events (~{} at 10^7 events/s; estimated \
                     from k, n, l, the compute times and the quantum), above max_events = {}",
                    est.events,
                    human_ms(est.events / 1e7 * 1e3),
                    self.max_events
                ),
                "set max_events=0 (or a larger limit) to run it anyway",
            ));
        }
        Ok(())
    }

    /// Upper estimates of a run's simulated time and events, from the
    /// configuration alone (no simulation): under local scheduling each
    /// iteration takes at most ⌈c/τq⌉ + 1 rounds of ℓ quanta (a thread gets
    /// a quantum in each round of its processor, needs ⌈c/τq⌉ of them for a
    /// compute c, and one more to see the release); under gang scheduling
    /// ⌊τq/c⌋ iterations fit in a slot (⌈c/τq⌉ + 1 slots per iteration if
    /// c > τq); c is the longest likely compute (grain + var +
    /// barrier_cost for uniforms; grain + barrier_cost + var·(H_n + 8) for
    /// exponentials; the largest sample); the events are a few per thread
    /// and iteration plus one per processor and quantum (per yield, τcs, for
    /// `wait = yield`). `validate` refuses a run above `max_events` or
    /// beyond the clock; a test checks the estimate against real runs.
    pub fn estimate(&self) -> RunEstimate {
        let p = self.procs().max(1) as f64;
        let l = self.l.max(1) as f64;
        let k = self.k as f64;
        let bc = self.barrier_cost.max(0.0);
        let c = match self.dist {
            ComputeDist::Uniform => self.grain + self.var + bc,
            ComputeDist::Exponential => {
                self.grain + bc + self.var * (harmonic_number(self.n.max(1)) + 8.0)
            }
            ComputeDist::Empirical => bc + self.samples.iter().copied().fold(0.0, f64::max),
        }
        .max(1e-6);
        let tq = self.tq.max(1e-6);
        let tcs = self.tcs.max(0.0);
        let switch = tcs * (1.0 + self.alpha.max(0.0));
        let rounds = l * (tq + switch);
        let sim_iterations = match self.sched {
            // A gang's threads run together in their slot: an iteration of
            // at most c fits in one if c <= τq (⌊τq/c⌋ of them per slot),
            // else takes ⌈c/τq⌉ slots; a round of slots lasts ℓ(τq + τcs).
            SyncSched::Gang => {
                let c = c + switch;
                let slots = if c <= tq {
                    (k / (tq / c).floor()).ceil()
                } else {
                    k * ((c / tq).ceil() + 1.0)
                };
                slots * rounds
            }
            // Uncoordinated: a thread gets one quantum per round of its
            // processor, needs ⌈c/τq⌉ of them and one more to see the
            // release.
            SyncSched::Local if self.l == 1 => k * (c + 2.0 * (switch + self.spin_limit.max(0.0))),
            SyncSched::Local => k * rounds * ((c / tq).ceil() + 1.0),
        };
        // The skewing threads and the first round.
        let sim = sim_iterations + 2.0 * (rounds + tq) + c;
        let per_thread = match self.wait {
            WaitStrategy::Busy => 2.0,
            WaitStrategy::Block => 4.0,
            WaitStrategy::TwoPhase => 6.0,
            WaitStrategy::Yield => 4.0,
        };
        let mut events = 64.0 + per_thread * (k + 1.0) * p * l + 2.0 * p * sim / tq;
        if self.wait == WaitStrategy::Yield {
            events += p * sim / tcs.max(1e-6);
        }
        RunEstimate {
            sim_time_ms: sim,
            events,
        }
    }

    /// t_p: mean processing time per iteration, barrier cost included (eq. 1).
    pub fn t_p(&self) -> f64 {
        match self.dist {
            ComputeDist::Uniform => self.barrier_cost + self.grain + 0.5 * self.var,
            ComputeDist::Exponential => self.barrier_cost + self.grain + self.var,
            ComputeDist::Empirical => {
                self.barrier_cost + self.samples.iter().sum::<f64>() / self.samples.len() as f64
            }
        }
    }

    /// t_w: mean waiting time per iteration on dedicated processors (eq. 4):
    /// E[max of n] − mean; `var · tw_per_unit_var(n, dist)` for uniforms and
    /// exponentials; for an empirical sample v_(1) <= ... <= v_(m),
    /// Σ v_(i)·((i/m)^n − ((i−1)/m)^n) minus the mean. The one computation:
    /// Python's `BarrierConfig.t_w` calls it.
    pub fn t_w(&self) -> f64 {
        let n = self.n as f64;
        match self.dist {
            ComputeDist::Uniform | ComputeDist::Exponential => {
                self.var * tw_per_unit_var(self.n, self.dist)
            }
            ComputeDist::Empirical => {
                // E[max of n draws] from the sorted sample v_(1) <= ... <= v_(m):
                // sum of v_(i)·((i/m)^n − ((i−1)/m)^n).
                let mut v = self.samples.clone();
                v.sort_by(f64::total_cmp);
                let m = v.len() as f64;
                let emax: f64 = v
                    .iter()
                    .enumerate()
                    .map(|(i, x)| x * (((i + 1) as f64 / m).powf(n) - (i as f64 / m).powf(n)))
                    .sum();
                emax - v.iter().sum::<f64>() / m
            }
        }
    }

    /// The per-iteration compute demand, barrier cost included.
    pub fn compute_dist(&self) -> Dist {
        let bc = self.barrier_cost;
        match self.dist {
            ComputeDist::Uniform => Dist::Uniform {
                lo: self.grain + bc,
                hi: self.grain + self.var + bc,
            },
            ComputeDist::Exponential => Dist::ShiftedExponential {
                shift: self.grain + bc,
                mean: self.var,
            },
            ComputeDist::Empirical => Dist::Empirical {
                values: self.samples.iter().map(|x| x + bc).collect(),
            },
        }
    }
}

pub use crate::machines::common::human_ms;

/// H_n = 1 + 1/2 + ... + 1/n, correctly rounded (the exact sum of the
/// rounded terms, rounded once: Shewchuk's partials as in Python's
/// `math.fsum`).
pub fn harmonic_number(n: u32) -> f64 {
    exact_sum((1..=n).map(|i| 1.0 / i as f64))
}

/// t_w per unit of `var`, a pure number: (n−1)/(2(n+1)) for U(grain, grain +
/// var), H_n − 1 for grain + Exp(mean var); 0 for an empirical sample (whose
/// t_w does not scale with var).
pub fn tw_per_unit_var(n: u32, dist: ComputeDist) -> f64 {
    match dist {
        ComputeDist::Uniform => (n as f64 - 1.0) / (2.0 * (n as f64 + 1.0)),
        ComputeDist::Exponential => harmonic_number(n) - 1.0,
        ComputeDist::Empirical => 0.0,
    }
}

/// The correctly rounded sum of finite values (Shewchuk's algorithm with
/// Python's `math.fsum` final rounding).
fn exact_sum(values: impl Iterator<Item = f64>) -> f64 {
    let mut partials: Vec<f64> = Vec::new();
    for mut x in values {
        let mut i = 0;
        for j in 0..partials.len() {
            let mut y = partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                partials[i] = lo;
                i += 1;
            }
            x = hi;
        }
        partials.truncate(i);
        partials.push(x);
    }
    let Some(mut hi) = partials.pop() else {
        return 0.0;
    };
    let mut lo = 0.0;
    while let Some(y) = partials.pop() {
        let x = hi;
        hi = x + y;
        let yr = hi - x;
        lo = y - yr;
        if lo != 0.0 {
            break;
        }
    }
    // Round half-even correctly when the rest would tip the last bit.
    if let Some(&next) = partials.last() {
        if (lo < 0.0 && next < 0.0) || (lo > 0.0 && next > 0.0) {
            let y = lo * 2.0;
            let x = hi + y;
            if y == x - hi {
                hi = x;
            }
        }
    }
    hi
}

#[cfg(test)]
mod sum_tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn exact_sums_and_the_harmonic_numbers_python_gives() {
        assert_eq!(exact_sum([1e16, 1.0, -1e16].into_iter()), 1.0);
        assert_eq!(exact_sum(std::iter::empty()), 0.0);
        // math.fsum(1/i for i in 1..=n) in Python.
        assert_eq!(harmonic_number(10), 2.9289682539682538);
        assert_eq!(harmonic_number(1000), 7.485470860550345);
        assert_eq!(tw_per_unit_var(10, ComputeDist::Uniform), 9.0 / 22.0);
    }

    proptest! {
        /// Values k·2^-20 with |k| < 2^40 and a huge cancelling pair: the
        /// exact sum is an integer count of 2^-20, so exactly known.
        #[test]
        fn exact_sum_is_exact(ks in proptest::collection::vec(-(1i64 << 40)..(1i64 << 40), 0..40)) {
            let unit = 2f64.powi(-20);
            let mut v: Vec<f64> = ks.iter().map(|&k| k as f64 * unit).collect();
            v.insert(v.len() / 2, 1e30);
            v.push(-1e30);
            let exact: i128 = ks.iter().map(|&k| k as i128).sum();
            prop_assert_eq!(exact_sum(v.into_iter()), exact as f64 * unit);
        }
    }
}
