//! Seed 001's machine (Feitelson & Rudolph 1992, sections 2 and 3): P
//! processors, each with its own run queue, running threads pinned to them
//! when spawned; gangs of threads that iterate "compute, then barrier"; three
//! waiting strategies (busy waiting, blocking, two-phase); and two schedulers:
//! uncoordinated per-processor round robin, or gang scheduling with
//! Ousterhout's matrix ([`GangMatrix`]).
//!
//! Times are in ms; one model unit (ms) is 10^6 ticks, so a tick is 1 ns.
//!
//! # Model
//!
//! * The *measured gang* has `n` threads, thread i on processor i (more
//!   generally, on the processors its matrix allocation names), each running
//!   `Repeat { k, [Compute U(grain + bc, grain + var + bc), Barrier] }` where
//!   `bc = barrier_cost` (section 2.1 folds the barrier's cost into t_p).
//! * Competitors (`l − 1` per processor): `same` — identical gangs of `n`
//!   threads that never finish; `compute` — independent compute-bound threads
//!   that never block, grouped in gangs of `P` threads (one per processor) so
//!   that under gang scheduling each group has its own slot.
//! * Skewing threads (section 3.3, `skew = true`): one per processor,
//!   computing U(0, τq) and exiting, queued first so that processors do not
//!   start in lockstep. Under gang scheduling they form one more gang (slot 0).
//! * Every gang is allocated in a [`GangMatrix`] (first fit, lowest
//!   processors) in the order skew, measured, competitors; the allocation
//!   fixes each thread's processor under both schedulers.
//!
//! # Local scheduling (`sched = local`)
//!
//! Each processor serves its queue round robin with quantum τq. At expiry the
//! thread continues (new quantum, no cost) if the queue is empty, else goes to
//! the tail. Dispatching a thread other than the processor's previous one
//! costs τcs; the quantum starts after that cost.
//!
//! # Gang scheduling (`sched = gang`)
//!
//! A global slot timer: all processors switch together to the next occupied
//! slot holding a gang with runnable threads (round robin, empty slots
//! skipped, [`GangMatrix::next_slot`]). A switch costs τcs on every processor
//! and is followed by a full quantum τq, so a slot lasts τcs + τq — the
//! accounting of equation (5). If the next slot is the current one (a single
//! gang) there is no switch and no cost. The slot ends early when no processor
//! has a running thread in it (all its threads finished or blocked). A
//! processor whose cell is empty, or whose thread is blocked, idles (no
//! alternates); those idle cells are the reported fragmentation.
//!
//! # Waiting
//!
//! The last thread to arrive at a barrier releases the others and continues
//! at once. The others wait by strategy:
//! * `busy`: spin on the processor (CPU time counted as busy-wait time); a
//!   spinning thread is preempted at quantum expiry or slot switch like any
//!   other, and when dispatched again after the release it just continues.
//! * `block`: give up the processor. Blocking costs α·τcs of processor time,
//!   which also covers the switch to whichever thread that processor runs
//!   next. A released thread becomes ready: `wakeup = tail` appends it to its
//!   processor's queue (rigid round robin); `wakeup = priority` puts it at the
//!   head, without preempting the running thread. An idle processor runs it at
//!   once.
//! * `twophase`: spin for up to `spin_limit` of processor time (accumulated
//!   across preemptions within one wait), then block.
//!
//! Blocked threads are never on a processor or a run queue, so they consume
//! no CPU (checked in audit mode).
//!
//! # Measurement
//!
//! The run ends at the measured gang's k-th barrier (the other events of that
//! instant are still handled). Time per iteration = (that instant − the
//! measured gang's first dispatch) / k; its 90% interval comes from `batches`
//! batch means of consecutive iteration times, accumulated on line (no memory
//! per iteration). Utilization = useful compute of all threads but the skewing
//! ones / (P · end); busy-wait time, switch/blocking overhead, context switches
//! (dispatches of a thread other than the processor's previous one), blocking
//! events and fragmentation (idle cells of the scheduled slot, time-weighted)
//! are totals up to the end, in-progress work included.
//!
//! # Speed
//!
//! Pending events stay bounded (at most about 3P + 4): compute ends beyond
//! the current quantum or slot are not scheduled, and quantum and two-phase
//! spin timers are one per processor, re-armed lazily. A busy-waiting gang
//! whose threads all hold their processors at a release runs its next
//! iterations in one step up to the earliest quantum or slot end (at most
//! [`MAX_BATCH`] at a time) and commits them with one event; the draws, times
//! and totals are exactly those of the event-by-event path
//! ([`SyncOptions::fast`] = false), which tests check.
//!
//! Busy waiting goes further: nothing ever leaves a processor before its
//! quantum or slot ends, so once the skewing threads are gone every processor
//! (local round robin) or the slot rotation (gang scheduling) repeats for ever
//! and a thread's progress is a function of time (its own quanta). From then
//! on (`run_periodic`) each gang is solved on its own, an iteration per step,
//! with no events: the release is the latest arrival, each found by placing
//! the thread's compute in its quanta (under gang scheduling, where a gang's
//! threads share their quanta, simply the longest compute); quantum expiries,
//! slot switches, fragmentation and the measured gang's exits are counted
//! apart. A property test checks it against the event-by-event path
//! (bit-identical results) over random configurations.
//!
//! # Local round robin and equation (8)
//!
//! With `shuffle` (default) each processor's initial queue order is random, so
//! the quanta of a gang's threads fall at random places in the round, as
//! equation (8) assumes. Under rigid round robin the pattern a run falls into
//! then persists (seed 001 §3.3 saw the same); estimates of uncoordinated busy
//! waiting should pool seeds (harmonic mean of time per iteration).

use crate::engine::Engine;
use crate::machine::MachineError;
use crate::pools::Value;
use crate::rng::{stream, Stream, StreamRng};
use crate::stats::mean_ci90;
use hdrhistogram::Histogram;
use parsched_core::policy::gang::{GangId, GangMatrix, SlotId};
use parsched_core::program::{Cursor, Dist, Op, Program, Step};
use parsched_core::time::{ticks_to_units, units_to_ticks, TICKS_PER_UNIT};
use parsched_core::{ConfigError, ProcId, Time};
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::time::Instant;

const NONE: u32 = u32::MAX;

/// The iteration-time histogram's range: 1 tick to 10^13 ticks (10^7 ms);
/// longer iterations count in its top bucket (the exact maximum is kept).
const ITER_HIST_MAX_TICKS: u64 = 10_000_000_000_000;

/// Draws one compute (ticks) as `Cursor::next` does, with the uniform of
/// §3.3 inlined (the same arithmetic, so the same values): the fast paths'
/// draws, made in thread order.
#[inline(always)]
fn draw(demand: &Dist, width: u32, rng: &mut StreamRng) -> u64 {
    match *demand {
        Dist::Uniform { lo, hi } => ticks(lo + (hi - lo) * rng.random::<f64>()),
        _ => ticks(demand.sample(width, rng)),
    }
}

/// Ten log-spaced bins per decade of milliseconds, non-empty ones only.
fn log_bins(h: &Histogram<u64>) -> Vec<(f64, f64, u64)> {
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

/// Most iterations in one fast-path batch (bounds the memory of a batch
/// whatever the grain; any cut gives the same results).
pub const MAX_BATCH: u64 = 1024;

/// How a thread waits at a barrier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum WaitStrategy {
    #[default]
    Busy,
    Block,
    #[serde(rename = "twophase")]
    TwoPhase,
    /// Makbilan's blocking (seed 001 §3.3): the waiting thread yields the
    /// processor and goes to the tail of the run queue, which serves as the
    /// blocked queue; each yield costs a switch τcs (also when no other
    /// thread is ready and the yielder runs again), and it yields again each
    /// time it runs before the barrier opens. The mean number of yields per
    /// wait is the α the seed measured (`alpha_measured`).
    Yield,
}

/// Where a released blocked thread goes in its processor's queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Wakeup {
    /// The tail (rigid round robin, the assumption of equation (13)).
    #[default]
    Tail,
    /// The head, without preempting the running thread.
    Priority,
}

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
];

// Value parsing is shared with the pools model (`pools::Value`).
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
        Ok(())
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
    /// E[max of n] − mean; var·(n − 1)/(2(n + 1)) for uniforms, var·(H_n − 1)
    /// for exponentials (H_n the n-th harmonic number).
    pub fn t_w(&self) -> f64 {
        let n = self.n as f64;
        match self.dist {
            ComputeDist::Uniform => self.var * (n - 1.0) / (2.0 * (n + 1.0)),
            ComputeDist::Exponential => {
                let h: f64 = (1..=self.n).map(|i| 1.0 / i as f64).sum();
                self.var * (h - 1.0)
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

    /// Equation (6): busy waiting with gang scheduling.
    pub fn eq6(&self) -> f64 {
        (1.0 + self.tcs / self.tq) * (self.t_p() + self.t_w()) * self.l as f64
    }

    /// Equation (8), capped at (τq + τcs)ℓ as the paper says: busy waiting,
    /// uncoordinated, fine grain.
    pub fn eq8(&self) -> f64 {
        let n = self.n as i32;
        let l = self.l as f64;
        let t = (1.0 + self.tcs / self.tq).powi(n) * (self.t_p() + self.t_w()) * l.powi(n);
        t.min((self.tq + self.tcs) * l)
    }

    /// Equation (12): blocking, same competitors, fine grain.
    pub fn eq12(&self) -> f64 {
        let n = self.n as f64;
        let tp = self.t_p();
        (1.0 + (n - 1.0) * self.alpha * self.tcs / (n * tp)) * tp * self.l as f64
    }

    /// Equation (13): blocking, compute-bound competitors, fine grain.
    pub fn eq13(&self) -> f64 {
        let l = self.l as f64;
        self.t_p() + (l - 1.0) * self.tq + (l + self.alpha - 1.0) * self.tcs
    }
}

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
    /// Useful compute (all threads but the skewing ones) / (P · end).
    pub utilization: f64,
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
    /// Model predictions for this configuration.
    pub t_p: f64,
    pub t_w: f64,
    pub eq6: f64,
    pub eq8: f64,
    pub eq12: f64,
    pub eq13: f64,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Skew,
    Measured,
    Same,
    Compute,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    Ready,
    Running,
    Blocked,
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    Compute(u64),
    Barrier,
    Exit,
}

struct Thread {
    gang: u32,
    proc: u32,
    cursor: Cursor,
    /// Compute ticks left of the current step.
    remaining: u64,
    /// A barrier or exit reached with no compute before it, to be applied
    /// when the thread next runs.
    deferred: Option<Next>,
    state: St,
    /// At a barrier, not yet released.
    waiting: bool,
    /// Two-phase: spin budget left in this wait.
    spin_left: u64,
}

struct Gang {
    kind: Kind,
    program: Program,
    rng: StreamRng,
    width: u32,
    arrived: u32,
    waiters: Vec<u32>,
    wait: WaitStrategy,
    /// Threads Ready or Running.
    runnable: u32,
    /// Threads not Done.
    alive: u32,
    /// Thread indices in gang order (`first..first + width`).
    threads: Vec<u32>,
    first: u32,
    /// The program is `Repeat { count, [Compute, Barrier] }`: the fast path
    /// applies.
    batchable: bool,
    count: u64,
    /// The fast path's iterations in flight.
    batch: Batch,
    /// The gang's thread on each processor (NONE where it has none).
    on_proc: Vec<u32>,
    iterations: u64,
}

/// A thread's quanta on a periodic schedule: `[phi + m·period, phi +
/// m·period + τq)` for m = 0, 1, … (period τq: it runs without a break).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Win {
    phi: u64,
    period: u64,
}

impl Win {
    /// The thread's place in its quanta at time `t`.
    fn at(self, t: u64, tq: u64) -> Pos {
        let mut p = Pos {
            ws: self.phi,
            m: 0,
            r: 0,
            period: self.period,
        };
        p.advance_to(t, tq);
        p
    }
}

/// A thread's place in its periodic quanta: it has run `m·τq + r` ticks
/// (from the solver's start), `r < τq`, and its quantum `m` starts at `ws`.
#[derive(Debug, Clone, Copy)]
struct Pos {
    ws: u64,
    m: u64,
    r: u64,
    period: u64,
}

impl Pos {
    #[inline]
    fn cpu(&self, tq: u64) -> u64 {
        self.m * tq + self.r
    }

    /// The time at this place (inside quantum `m`, or at its start).
    #[inline]
    fn time(&self) -> u64 {
        self.ws + self.r
    }

    /// `c` ticks of processor time later. A compute that ends as its quantum
    /// does ends at the start of the next one (the quantum's end preempts
    /// first at equal times).
    #[inline]
    fn add(&mut self, c: u64, tq: u64) {
        let r = self.r + c;
        if r < tq {
            self.r = r;
        } else {
            let j = if r < 2 * tq { 1 } else { r / tq };
            self.m += j;
            self.ws += j * self.period;
            self.r = r - j * tq;
        }
    }

    /// Where the thread is at time `t` (not before [`Pos::time`]).
    #[inline]
    fn advance_to(&mut self, t: u64, tq: u64) {
        if t < self.ws {
            return;
        }
        let d = t - self.ws;
        if d < tq {
            self.r = d;
            return;
        }
        let mut j = if d < self.period {
            0
        } else if d < 2 * self.period {
            1
        } else {
            d / self.period
        };
        let mut r = d - j * self.period;
        if r >= tq {
            j += 1;
            r = 0;
        }
        self.m += j;
        self.ws += j * self.period;
        self.r = r;
    }
}

/// Iterations computed ahead by the fast path, committed at `end`.
#[derive(Default)]
struct Batch {
    start: Time,
    left0: u64,
    rng0: Option<StreamRng>,
    cursors0: Vec<Cursor>,
    remaining0: Vec<u64>,
    end: Time,
    iterations: u64,
    useful: u64,
    spin: u64,
    /// Barrier times (measured gang only; at most `MAX_BATCH`).
    times: Vec<Time>,
}

struct Proc {
    thread: u32,
    last: u32,
    /// The next dispatch is free (a block already paid for the switch).
    free_switch: bool,
    /// Start of the current accounting segment of the running thread.
    seg_start: Time,
    /// The processor is in switch/blocking overhead until then.
    busy_until: Time,
    gen: u32,
    /// End of the current quantum (local scheduling).
    slice_end: Time,
    /// A `Quantum` event is pending (at most one per processor; it re-arms
    /// itself lazily if the quantum was restarted meanwhile).
    timer: bool,
    /// The pending quantum timer was scheduled when the current quantum
    /// began, so it precedes every compute end scheduled in that quantum
    /// (the order the periodic solver assumes at equal times).
    timer_fresh: bool,
    /// The time of the pending two-phase spin timer, if any.
    spin_timer: Option<Time>,
    queue: VecDeque<u32>,
}

/// Events of the sync machine.
#[derive(Debug, Clone, Copy)]
pub enum SyncEv {
    /// The running thread's current activity (compute, two-phase spin) ends.
    Seg { p: u32, gen: u32 },
    /// Quantum expiry on one processor (local scheduling).
    Quantum { p: u32 },
    /// Global slot switch (gang scheduling).
    Slot { gen: u32 },
    /// The end of a gang's fast-path batch of iterations.
    Batch { g: u32 },
    /// A two-phase spinner on `p` may have used up its spin budget.
    Spin { p: u32 },
}

/// The machine of seed 001.
pub struct SyncMachine {
    sched: SyncSched,
    wakeup: Wakeup,
    tq: u64,
    tcs: u64,
    block_cost: u64,
    spin_limit: u64,
    k: u64,
    audit: bool,
    fast: bool,
    /// Busy waiting (nothing ever blocks): once the skewing threads are gone
    /// the schedule is periodic and the rest of the run is solved without
    /// events (see `run_periodic`).
    periodic: bool,
    procs: Vec<Proc>,
    threads: Vec<Thread>,
    gangs: Vec<Gang>,
    measured: u32,
    matrix: GangMatrix,
    slot: Option<SlotId>,
    sgen: u32,
    slot_start: Time,
    slot_free: u32,
    slot_end: Time,
    // Statistics (ticks).
    useful: u64,
    skew_work: u64,
    spin: u64,
    measured_spin: u64,
    overhead: u64,
    context_switches: u64,
    blocking_events: u64,
    yields: u64,
    yield_waits: u64,
    preemptions: u64,
    slot_switches: u64,
    frag_idle: u128,
    frag_total: u128,
    gang_iterations: u64,
    // Measured gang.
    start: Option<Time>,
    last_iter: Time,
    batch_size: u64,
    batch_len: u64,
    batch_sum: f64,
    batches_max: usize,
    batch_means: Vec<f64>,
    iter_hist: Histogram<u64>,
    iter_min: u64,
    iter_max: u64,
    done: Option<Time>,
    max_pending: usize,
}

/// Units → ticks, rounded to nearest: `units_to_ticks` without the libm
/// `round` call (identical for the non-negative values used here, below 2^52
/// ticks; this conversion runs once per compute step).
#[inline]
fn ticks(u: f64) -> u64 {
    debug_assert!(u >= 0.0 && u.is_finite());
    let x = u * TICKS_PER_UNIT as f64;
    if x < 4.5e15 {
        let t = x as u64;
        if x - t as f64 >= 0.5 {
            t + 1
        } else {
            t
        }
    } else {
        units_to_ticks(u)
    }
}

impl SyncMachine {
    /// Builds the machine for a validated configuration.
    pub fn new(cfg: &SyncConfig, opts: SyncOptions) -> Result<SyncMachine, ConfigError> {
        cfg.validate()?;
        let p = cfg.procs();
        let mut matrix = GangMatrix::new(p, None)?;
        let iterate = |count: u64| {
            Program::new(vec![Step::Repeat {
                count,
                body: vec![
                    Step::Compute {
                        demand: cfg.compute_dist(),
                    },
                    Step::Barrier,
                ],
            }])
        };
        let mut specs: Vec<(Kind, u32, Program)> = Vec::new();
        if cfg.skew {
            specs.push((
                Kind::Skew,
                p,
                Program::new(vec![Step::Compute {
                    demand: Dist::Uniform {
                        lo: 0.0,
                        hi: cfg.tq,
                    },
                }]),
            ));
        }
        specs.push((Kind::Measured, cfg.n, iterate(cfg.k)));
        for _ in 1..cfg.l {
            match cfg.competitors {
                Competitors::Same => specs.push((Kind::Same, cfg.n, iterate(u64::MAX))),
                Competitors::Compute => specs.push((
                    Kind::Compute,
                    p,
                    Program::new(vec![Step::Compute {
                        demand: Dist::Const { value: 1e12 },
                    }]),
                )),
            }
        }
        let mut m = SyncMachine {
            sched: cfg.sched,
            wakeup: cfg.wakeup,
            tq: ticks(cfg.tq),
            tcs: ticks(cfg.tcs),
            block_cost: ticks(cfg.alpha * cfg.tcs),
            spin_limit: ticks(cfg.spin_limit),
            k: cfg.k,
            audit: opts.audit,
            fast: opts.fast,
            periodic: opts.fast && !opts.audit && cfg.wait == WaitStrategy::Busy,
            procs: (0..p)
                .map(|_| Proc {
                    thread: NONE,
                    last: NONE,
                    free_switch: true,
                    seg_start: Time::ZERO,
                    busy_until: Time::ZERO,
                    gen: 0,
                    slice_end: Time::ZERO,
                    timer: false,
                    timer_fresh: false,
                    spin_timer: None,
                    queue: VecDeque::with_capacity(cfg.l as usize + 2),
                })
                .collect(),
            threads: Vec::new(),
            gangs: Vec::new(),
            measured: 0,
            matrix: GangMatrix::new(p, None)?,
            slot: None,
            sgen: 0,
            slot_start: Time::ZERO,
            slot_free: 0,
            slot_end: Time::ZERO,
            useful: 0,
            skew_work: 0,
            spin: 0,
            measured_spin: 0,
            overhead: 0,
            context_switches: 0,
            blocking_events: 0,
            yields: 0,
            yield_waits: 0,
            preemptions: 0,
            slot_switches: 0,
            frag_idle: 0,
            frag_total: 0,
            gang_iterations: 0,
            start: None,
            last_iter: Time::ZERO,
            batch_size: (cfg.k / cfg.batches as u64).max(1),
            batch_len: 0,
            batch_sum: 0.0,
            batches_max: cfg.batches as usize,
            batch_means: Vec::with_capacity(cfg.batches as usize),
            iter_hist: Histogram::new_with_bounds(1, ITER_HIST_MAX_TICKS, 2)
                .expect("valid histogram bounds"),
            iter_min: u64::MAX,
            iter_max: 0,
            done: None,
            max_pending: 0,
        };
        for (gi, (kind, width, program)) in specs.into_iter().enumerate() {
            let g = gi as u32;
            let alloc = matrix
                .allocate(GangId(g as u64), width)
                .map_err(|e| ConfigError::new("n", e.to_string(), "n <= P"))?
                .expect("an unbounded matrix always has room");
            let rng = match kind {
                Kind::Skew => stream(cfg.seed, Stream::Skew, 0),
                _ => stream(cfg.seed, Stream::ThreadDemand, g as u64),
            };
            if kind == Kind::Measured {
                m.measured = g;
            }
            let (batchable, count) = match program.steps.as_slice() {
                [Step::Repeat { count, body }]
                    if matches!(body.as_slice(), [Step::Compute { .. }, Step::Barrier]) =>
                {
                    (true, *count)
                }
                _ => (false, 0),
            };
            let mut on_proc = vec![NONE; p as usize];
            let mut threads = Vec::with_capacity(width as usize);
            for &q in &alloc.procs {
                let th = m.threads.len() as u32;
                on_proc[q.idx()] = th;
                threads.push(th);
                m.threads.push(Thread {
                    gang: g,
                    proc: q.0,
                    cursor: Cursor::new(width),
                    remaining: 0,
                    deferred: None,
                    state: St::Ready,
                    waiting: false,
                    spin_left: 0,
                });
            }
            m.gangs.push(Gang {
                kind,
                program,
                rng,
                width,
                arrived: 0,
                waiters: Vec::with_capacity(width as usize),
                wait: cfg.wait,
                runnable: width,
                alive: width,
                on_proc,
                threads,
                first: m.threads.len() as u32 - width,
                batchable,
                count,
                batch: Batch::default(),
                iterations: 0,
            });
        }
        m.matrix = matrix;
        for th in 0..m.threads.len() as u32 {
            m.prepare(th);
            if m.sched == SyncSched::Local {
                let q = m.threads[th as usize].proc as usize;
                m.procs[q].queue.push_back(th);
            }
        }
        if cfg.shuffle && m.sched == SyncSched::Local {
            let first = usize::from(cfg.skew);
            for (q, proc) in m.procs.iter_mut().enumerate() {
                let mut rng = stream(cfg.seed, Stream::Skew, q as u64 + 1);
                let v = proc.queue.make_contiguous();
                if v.len() > first {
                    let rest = &mut v[first..];
                    for i in (1..rest.len()).rev() {
                        rest.swap(i, rng.random_range(0..=i));
                    }
                }
            }
        }
        Ok(m)
    }

    /// Runs until the measured gang passes its k-th barrier.
    pub fn run(&mut self, eng: &mut Engine<SyncEv>) -> Result<Time, MachineError> {
        match self.sched {
            SyncSched::Local => {
                for p in 0..self.procs.len() as u32 {
                    self.dispatch_local(p, eng);
                }
            }
            SyncSched::Gang => eng.schedule_at(Time::ZERO, SyncEv::Slot { gen: 0 }),
        }
        let mut max_pending = eng.pending();
        loop {
            let Some(ev) = eng.pop() else {
                if self.done.is_some() {
                    break;
                }
                return Err(MachineError::Invariant {
                    time: eng.now().as_units(),
                    msg: "no event left before the measured gang finished (deadlock)".into(),
                });
            };
            // After the measured gang's k-th barrier, the other events of
            // that instant are still handled, then the run stops.
            if matches!(self.done, Some(end) if eng.now() > end) {
                break;
            }
            match ev {
                SyncEv::Seg { p, gen } => self.on_seg(p, gen, eng),
                SyncEv::Quantum { p } => self.on_quantum(p, eng),
                SyncEv::Batch { g } => self.on_batch(g, eng),
                SyncEv::Spin { p } => self.on_spin(p, eng),
                SyncEv::Slot { gen } => {
                    if gen == self.sgen {
                        self.switch_slot(eng)
                    }
                }
            }
            max_pending = max_pending.max(eng.pending());
            if self.audit {
                self.check(eng.now())?;
            }
            if self.periodic
                && matches!(ev, SyncEv::Quantum { .. } | SyncEv::Slot { .. })
                && eng.next_time().is_none_or(|t| t > eng.now())
                && self.periodic_ready()
            {
                self.max_pending = max_pending;
                return Ok(self.run_periodic(eng.now()));
            }
        }
        self.max_pending = max_pending;
        let end = self
            .done
            .expect("the loop ends when the measured gang is done");
        self.flush(end);
        Ok(end)
    }

    fn advance(&mut self, th: u32) -> Next {
        let t = &mut self.threads[th as usize];
        let g = &mut self.gangs[t.gang as usize];
        match t.cursor.next(&g.program, &mut g.rng) {
            Op::Compute { units } => Next::Compute(ticks(units)),
            Op::Barrier => Next::Barrier,
            Op::Exit => Next::Exit,
            Op::ForkJoin { .. } => unreachable!("sync programs have no fork-join"),
        }
    }

    /// Moves the (non-waiting) thread to its next activity.
    fn prepare(&mut self, th: u32) {
        let next = self.advance(th);
        let t = &mut self.threads[th as usize];
        match next {
            Next::Compute(c) => {
                t.remaining = c;
                t.deferred = None;
            }
            other => {
                t.remaining = 0;
                t.deferred = Some(other);
            }
        }
    }

    /// `th` runs on `p` from `start` (>= now): schedules the end of its
    /// activity if it falls within the current quantum or slot (otherwise the
    /// quantum or slot handler restarts the activity), so no stale event
    /// lingers for long and pending events stay bounded.
    fn start_activity(&mut self, th: u32, p: u32, start: Time, eng: &mut Engine<SyncEv>) {
        let t = &self.threads[th as usize];
        let proc = &mut self.procs[p as usize];
        proc.seg_start = start;
        proc.gen = proc.gen.wrapping_add(1);
        if t.gang == self.measured && self.start.is_none() {
            self.start = Some(start);
            self.last_iter = start;
        }
        let end = if t.waiting {
            match self.gangs[t.gang as usize].wait {
                WaitStrategy::Busy => return,
                WaitStrategy::TwoPhase => {
                    // One lazily re-armed spin timer per processor (as for
                    // quanta), so released spinners leave no stale events.
                    let deadline = start + t.spin_left;
                    if !matches!(proc.spin_timer, Some(at) if at <= deadline) {
                        proc.spin_timer = Some(deadline);
                        eng.schedule_at(deadline, SyncEv::Spin { p });
                    }
                    return;
                }
                WaitStrategy::Yield => {
                    // It yields again as soon as it runs.
                    eng.schedule_at(start, SyncEv::Seg { p, gen: proc.gen });
                    return;
                }
                WaitStrategy::Block => unreachable!("blocked threads are not dispatched"),
            }
        } else {
            start + t.remaining
        };
        let limit = match self.sched {
            SyncSched::Local => proc.slice_end,
            SyncSched::Gang => self.slot_end,
        };
        if end <= limit {
            eng.schedule_at(end, SyncEv::Seg { p, gen: proc.gen });
        }
    }

    /// Charges `elapsed` ticks of processor time to the running thread `th`.
    #[inline]
    fn account(&mut self, th: u32, elapsed: u64) {
        let t = &mut self.threads[th as usize];
        if t.waiting {
            self.spin += elapsed;
            if t.gang == self.measured {
                self.measured_spin += elapsed;
            }
            t.spin_left = t.spin_left.saturating_sub(elapsed);
        } else {
            t.remaining -= elapsed.min(t.remaining);
            if self.gangs[t.gang as usize].kind == Kind::Skew {
                self.skew_work += elapsed;
            } else {
                self.useful += elapsed;
            }
        }
    }

    fn on_seg(&mut self, p: u32, gen: u32, eng: &mut Engine<SyncEv>) {
        let proc = &self.procs[p as usize];
        if proc.gen != gen || proc.thread == NONE {
            return;
        }
        let now = eng.now();
        let th = proc.thread;
        let elapsed = now.saturating_sub(proc.seg_start);
        self.account(th, elapsed);
        if self.threads[th as usize].waiting {
            debug_assert_eq!(
                self.gangs[self.threads[th as usize].gang as usize].wait,
                WaitStrategy::Yield,
                "spins end by Spin events"
            );
            self.yield_now(th, p, eng);
            return;
        }
        let next = match self.threads[th as usize].deferred.take() {
            Some(n) => n,
            None => self.advance(th),
        };
        match next {
            Next::Compute(c) => {
                self.threads[th as usize].remaining = c;
                self.start_activity(th, p, now, eng);
            }
            Next::Barrier => self.arrive(th, p, eng),
            Next::Exit => self.exit(th, p, eng),
        }
    }

    fn arrive(&mut self, th: u32, p: u32, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        let gi = self.threads[th as usize].gang as usize;
        let g = &mut self.gangs[gi];
        g.arrived += 1;
        if g.arrived == g.width {
            self.release(gi, th, p, eng);
            return;
        }
        g.waiters.push(th);
        let wait = g.wait;
        let t = &mut self.threads[th as usize];
        t.waiting = true;
        match wait {
            WaitStrategy::Busy => self.start_activity(th, p, now, eng),
            WaitStrategy::TwoPhase => {
                t.spin_left = self.spin_limit;
                if self.spin_limit == 0 {
                    self.block(th, p, eng);
                } else {
                    self.start_activity(th, p, now, eng);
                }
            }
            WaitStrategy::Block => self.block(th, p, eng),
            WaitStrategy::Yield => {
                self.yield_waits += 1;
                self.yield_now(th, p, eng);
            }
        }
    }

    fn record_iteration(&mut self, now: Time) {
        let d = now - self.last_iter;
        self.iter_hist.saturating_record(d);
        self.iter_min = self.iter_min.min(d);
        self.iter_max = self.iter_max.max(d);
        let it = ticks_to_units(d);
        self.last_iter = now;
        if self.batch_means.len() < self.batches_max {
            self.batch_sum += it;
            self.batch_len += 1;
            if self.batch_len == self.batch_size {
                self.batch_means
                    .push(self.batch_sum / self.batch_size as f64);
                self.batch_sum = 0.0;
                self.batch_len = 0;
            }
        }
        if self.gangs[self.measured as usize].iterations >= self.k {
            self.done = Some(now);
        }
    }

    /// The last thread `th` (running on `p`) arrived: every waiter is
    /// released. The next operations of all the gang's threads are drawn in
    /// thread order (so the fast path draws the same numbers).
    fn release(&mut self, gi: usize, th: u32, p: u32, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        let g = &mut self.gangs[gi];
        g.arrived = 0;
        g.iterations += 1;
        self.gang_iterations += 1;
        let mut waiters = std::mem::take(&mut g.waiters);
        for &w in &waiters {
            let t = &mut self.threads[w as usize];
            t.waiting = false;
            if t.state == St::Running {
                // The spin since the segment start, charged now that it ends.
                let spun = now.saturating_sub(self.procs[t.proc as usize].seg_start);
                self.spin += spun;
                if gi as u32 == self.measured {
                    self.measured_spin += spun;
                }
            }
        }
        for i in 0..self.gangs[gi].threads.len() {
            let t = self.gangs[gi].threads[i];
            self.prepare(t);
        }
        if gi as u32 == self.measured {
            self.record_iteration(now);
        }
        if !(self.fast && self.try_batch(gi, now, eng)) {
            for &w in &waiters {
                self.wake(w, eng);
            }
            self.start_activity(th, p, now, eng);
        }
        waiters.clear();
        self.gangs[gi].waiters = waiters;
    }

    /// Fast path for a co-scheduled busy-waiting gang: while every thread of
    /// the gang holds its processor and whole iterations fit before the
    /// earliest quantum or slot end, nothing can interrupt them, so they are
    /// computed at once (same draws, same times, same accounting as the
    /// event-by-event path) and committed by one `Batch` event at the end.
    /// Returns false (nothing done) if not even one iteration fits.
    fn try_batch(&mut self, gi: usize, now: Time, eng: &mut Engine<SyncEv>) -> bool {
        let g = &self.gangs[gi];
        if !g.batchable || g.wait != WaitStrategy::Busy || self.done.is_some() {
            return false;
        }
        for t in g.first..g.first + g.width {
            if self.threads[t as usize].deferred.is_some() {
                return false;
            }
        }
        let mut limit = match self.sched {
            SyncSched::Local => Time::MAX,
            SyncSched::Gang => self.slot_end,
        };
        for &t in &g.threads {
            let th = &self.threads[t as usize];
            let proc = &self.procs[th.proc as usize];
            if th.state != St::Running || proc.seg_start > now || proc.busy_until > now {
                return false;
            }
            if self.sched == SyncSched::Local {
                limit = limit.min(proc.slice_end);
            }
        }
        let measured = gi as u32 == self.measured;
        // Iterations the gang may still run (its program is exactly
        // `Repeat { count, [Compute, Barrier] }`, so after each compute comes
        // a barrier, and the releases before this one are counted).
        let mut left = g.count - g.iterations;
        if measured {
            left = left.min(self.k - g.iterations);
        }
        let (first, last) = (g.first, g.first + g.width);
        let mut b = std::mem::take(&mut self.gangs[gi].batch);
        // Saved so that a batch still in flight when the run ends can be
        // replayed up to the end (see `flush`).
        b.start = now;
        b.left0 = left;
        b.rng0 = Some(self.gangs[gi].rng.clone());
        b.cursors0.clear();
        b.remaining0.clear();
        for t in first..last {
            let th = &self.threads[t as usize];
            b.cursors0.push(th.cursor);
            b.remaining0.push(th.remaining);
        }
        b.times.clear();
        let (t_end, _) = self.iterate(gi, &mut b, now, limit, left, measured);
        let ok = b.iterations > 0;
        if ok {
            for &t in &self.gangs[gi].threads {
                let q = self.threads[t as usize].proc as usize;
                self.procs[q].gen = self.procs[q].gen.wrapping_add(1);
                self.procs[q].seg_start = t_end;
            }
            b.end = t_end;
            eng.schedule_at(t_end, SyncEv::Batch { g: gi as u32 });
        }
        self.gangs[gi].batch = b;
        ok
    }

    /// The compute demand of a batchable gang, whose program is
    /// `Repeat { count, [Compute, Barrier] }` (every measured or alike gang).
    fn loop_demand(&self, gi: usize) -> Dist {
        match &self.gangs[gi].program.steps[..] {
            [Step::Repeat { body, .. }] => match &body[..] {
                [Step::Compute { demand }, Step::Barrier] => demand.clone(),
                _ => unreachable!("batchable gangs compute then meet"),
            },
            _ => unreachable!("batchable gangs iterate"),
        }
    }

    /// The measured gang passed a barrier at `release`: counted and recorded;
    /// true once it has passed its k-th.
    fn measured_release(&mut self, release: u64) -> bool {
        self.gangs[self.measured as usize].iterations += 1;
        self.record_iteration(Time(release));
        self.done.is_some()
    }

    /// The fast path's loop: whole iterations of gang `gi` from `start` while
    /// they end before `limit`, at most `left`, accumulated in `b`. Returns
    /// the end of the last one and the iterations still allowed.
    fn iterate(
        &mut self,
        gi: usize,
        b: &mut Batch,
        start: Time,
        limit: Time,
        mut left: u64,
        record: bool,
    ) -> (Time, u64) {
        let g = &self.gangs[gi];
        let (first, last) = (g.first, g.first + g.width);
        let mut mx = 0;
        for t in first..last {
            mx = mx.max(self.threads[t as usize].remaining);
        }
        let demand = self.loop_demand(gi);
        // Passes the cursors have not walked (their draws made here directly).
        let mut skipped = 0u64;
        let mut t_end = start;
        while left > 0 && b.iterations < MAX_BATCH && t_end + mx < limit {
            // Every thread computes, arrives at the barrier and (as the slow
            // path does at the release) draws its next compute, in thread
            // order.
            let mut next_mx = 0;
            if left > 1 {
                let g = &mut self.gangs[gi];
                for th in &mut self.threads[first as usize..last as usize] {
                    b.useful += th.remaining;
                    b.spin += mx - th.remaining;
                    th.remaining = draw(&demand, g.width, &mut g.rng);
                    next_mx = next_mx.max(th.remaining);
                }
                skipped += 1;
            } else {
                // The gang's last iteration: no next compute.
                for t in first..last {
                    self.threads[t as usize].cursor.skip_passes(skipped);
                    let op = self.advance(t);
                    debug_assert_eq!(op, Next::Barrier);
                    let th = &mut self.threads[t as usize];
                    b.useful += th.remaining;
                    b.spin += mx - th.remaining;
                    th.remaining = 0;
                }
                skipped = 0;
            }
            t_end += mx;
            mx = next_mx;
            b.iterations += 1;
            left -= 1;
            if record {
                b.times.push(t_end);
            }
        }
        if skipped > 0 {
            for th in &mut self.threads[first as usize..last as usize] {
                th.cursor.skip_passes(skipped);
            }
        }
        (t_end, left)
    }

    /// The run ends at `end`: charges what every processor did up to `end`
    /// (in-progress computes and spins, and batches still in flight, replayed
    /// from their saved start up to `end`), so that the fast path and the
    /// event-by-event path report the same totals.
    fn flush(&mut self, end: Time) {
        for gi in 0..self.gangs.len() {
            if self.gangs[gi].batch.iterations == 0 {
                continue;
            }
            let mut b = std::mem::take(&mut self.gangs[gi].batch);
            let g = &mut self.gangs[gi];
            g.rng = b.rng0.take().expect("a batch in flight saved its start");
            let (first, last) = (g.first, g.first + g.width);
            for (i, t) in (first..last).enumerate() {
                let th = &mut self.threads[t as usize];
                th.cursor = b.cursors0[i];
                th.remaining = b.remaining0[i];
                th.deferred = None;
            }
            b.useful = 0;
            b.spin = 0;
            b.iterations = 0;
            let (start, left0) = (b.start, b.left0);
            let (t_end, left) = self.iterate(gi, &mut b, start, end + 1, left0, false);
            if left > 0 {
                // The iteration in progress at `end`.
                let d = end - t_end;
                for t in first..last {
                    let c = self.threads[t as usize].remaining.min(d);
                    b.useful += c;
                    b.spin += d - c;
                }
            }
            self.useful += b.useful;
            self.spin += b.spin;
            if gi as u32 == self.measured {
                self.measured_spin += b.spin;
            }
            self.gangs[gi].iterations += b.iterations;
            self.gang_iterations += b.iterations;
            b.iterations = 0;
            self.gangs[gi].batch = b;
        }
        for p in 0..self.procs.len() {
            let th = self.procs[p].thread;
            if th != NONE {
                let elapsed = end.saturating_sub(self.procs[p].seg_start);
                self.account(th, elapsed);
                self.procs[p].seg_start = self.procs[p].seg_start.max(end);
            }
        }
    }

    /// Commits gang `gi`'s batch of iterations (now is its end).
    fn on_batch(&mut self, gi: u32, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        let gi = gi as usize;
        let mut b = std::mem::take(&mut self.gangs[gi].batch);
        debug_assert_eq!(b.end, now);
        self.useful += b.useful;
        self.spin += b.spin;
        self.gangs[gi].iterations += b.iterations;
        self.gang_iterations += b.iterations;
        if gi as u32 == self.measured {
            self.measured_spin += b.spin;
            for i in 0..b.times.len() {
                self.record_iteration(b.times[i]);
            }
        }
        b.useful = 0;
        b.spin = 0;
        b.iterations = 0;
        self.gangs[gi].batch = b;
        // As after a release on the event-by-event path (even after the
        // measured gang's last one: its threads then exit at this instant).
        for i in 0..self.gangs[gi].threads.len() {
            let t = self.gangs[gi].threads[i];
            let p = self.threads[t as usize].proc;
            self.start_activity(t, p, now, eng);
        }
    }

    /// Releases waiter `w` (its next operation already drawn).
    fn wake(&mut self, w: u32, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        let t = &self.threads[w as usize];
        let (p, gi, state) = (t.proc, t.gang as usize, t.state);
        match state {
            St::Running => {
                let seg_start = self.procs[p as usize].seg_start;
                self.start_activity(w, p, now.max(seg_start), eng);
            }
            St::Ready => {}
            St::Blocked => {
                self.threads[w as usize].state = St::Ready;
                self.gangs[gi].runnable += 1;
                match self.sched {
                    SyncSched::Local => {
                        let proc = &mut self.procs[p as usize];
                        match self.wakeup {
                            Wakeup::Tail => proc.queue.push_back(w),
                            Wakeup::Priority => proc.queue.push_front(w),
                        }
                        if proc.thread == NONE {
                            self.dispatch_local(p, eng);
                        }
                    }
                    SyncSched::Gang => {
                        let here = self.matrix.slot_of(GangId(gi as u64));
                        if self.slot.is_none() {
                            self.sgen = self.sgen.wrapping_add(1);
                            eng.schedule_at(now, SyncEv::Slot { gen: self.sgen });
                        } else if here == self.slot && self.procs[p as usize].thread == NONE {
                            let proc = &self.procs[p as usize];
                            let cost = if proc.free_switch || proc.last == w {
                                0
                            } else {
                                self.tcs
                            };
                            self.run_on(p, w, cost, eng);
                        }
                    }
                }
            }
            St::Done => unreachable!("a finished thread does not wait"),
        }
    }

    /// Waiting thread `th` (`wait = yield`) yields `p`: it goes to the tail
    /// of the run queue and the next ready thread runs after a switch; with
    /// nothing else ready (or under gang scheduling, where no other thread
    /// holds a cell of the slot on `p`) it runs again after a switch's cost.
    fn yield_now(&mut self, th: u32, p: u32, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        self.yields += 1;
        let proc = &mut self.procs[p as usize];
        if self.sched == SyncSched::Local && !proc.queue.is_empty() {
            proc.thread = NONE;
            proc.gen = proc.gen.wrapping_add(1);
            proc.queue.push_back(th);
            self.threads[th as usize].state = St::Ready;
            // run_on charges the switch to the next thread.
            self.dispatch_local(p, eng);
            return;
        }
        let start = proc.busy_until.max(now) + self.tcs;
        self.overhead += self.tcs;
        proc.busy_until = start;
        self.start_activity(th, p, start, eng);
    }

    fn block(&mut self, th: u32, p: u32, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        let gi = self.threads[th as usize].gang as usize;
        self.threads[th as usize].state = St::Blocked;
        self.gangs[gi].runnable -= 1;
        self.blocking_events += 1;
        self.overhead += self.block_cost;
        let proc = &mut self.procs[p as usize];
        proc.thread = NONE;
        proc.gen = proc.gen.wrapping_add(1);
        proc.busy_until = proc.busy_until.max(now) + self.block_cost;
        proc.free_switch = true;
        self.after_leave(p, eng);
    }

    fn exit(&mut self, th: u32, p: u32, eng: &mut Engine<SyncEv>) {
        let gi = self.threads[th as usize].gang as usize;
        self.threads[th as usize].state = St::Done;
        let g = &mut self.gangs[gi];
        g.runnable -= 1;
        g.alive -= 1;
        if g.alive == 0 {
            let _ = self.matrix.release(GangId(gi as u64));
        }
        let proc = &mut self.procs[p as usize];
        proc.thread = NONE;
        proc.gen = proc.gen.wrapping_add(1);
        self.after_leave(p, eng);
    }

    /// Processor `p` has no thread any more.
    fn after_leave(&mut self, p: u32, eng: &mut Engine<SyncEv>) {
        match self.sched {
            SyncSched::Local => self.dispatch_local(p, eng),
            SyncSched::Gang => {
                if self.slot.is_some() && self.procs.iter().all(|q| q.thread == NONE) {
                    // Nothing runs in this slot any more: switch early.
                    self.sgen = self.sgen.wrapping_add(1);
                    eng.schedule_at(eng.now(), SyncEv::Slot { gen: self.sgen });
                }
            }
        }
    }

    /// Starts `th` on `p` after `cost` ticks of switch overhead.
    fn run_on(&mut self, p: u32, th: u32, cost: u64, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        let proc = &mut self.procs[p as usize];
        if proc.last != th {
            self.context_switches += 1;
        }
        let start = proc.busy_until.max(now) + cost;
        self.overhead += cost;
        proc.busy_until = start;
        proc.thread = th;
        proc.last = th;
        proc.free_switch = false;
        if self.sched == SyncSched::Local {
            proc.slice_end = start + self.tq;
            proc.timer_fresh = !proc.timer;
            if !proc.timer {
                proc.timer = true;
                eng.schedule_at(proc.slice_end, SyncEv::Quantum { p });
            }
        }
        self.threads[th as usize].state = St::Running;
        self.start_activity(th, p, start, eng);
    }

    /// Local scheduling: `p` (idle) takes the head of its queue, if any.
    fn dispatch_local(&mut self, p: u32, eng: &mut Engine<SyncEv>) {
        let proc = &mut self.procs[p as usize];
        let Some(th) = proc.queue.pop_front() else {
            return;
        };
        let cost = if proc.free_switch || proc.last == th {
            0
        } else {
            self.tcs
        };
        self.run_on(p, th, cost, eng);
    }

    fn on_spin(&mut self, p: u32, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        let proc = &mut self.procs[p as usize];
        if proc.spin_timer != Some(now) {
            return; // superseded by an earlier timer
        }
        proc.spin_timer = None;
        let th = proc.thread;
        if th == NONE {
            return;
        }
        let t = &self.threads[th as usize];
        if !t.waiting || self.gangs[t.gang as usize].wait != WaitStrategy::TwoPhase {
            return;
        }
        let deadline = proc.seg_start + t.spin_left;
        if deadline > now {
            // The spin restarted after a preemption: wait for its new end.
            proc.spin_timer = Some(deadline);
            eng.schedule_at(deadline, SyncEv::Spin { p });
            return;
        }
        let elapsed = now.saturating_sub(proc.seg_start);
        self.account(th, elapsed);
        self.block(th, p, eng);
    }

    fn on_quantum(&mut self, p: u32, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        let proc = &mut self.procs[p as usize];
        proc.timer = false;
        if proc.thread == NONE {
            return;
        }
        if now < proc.slice_end {
            // The quantum was restarted since this timer was set.
            proc.timer = true;
            proc.timer_fresh = false;
            eng.schedule_at(proc.slice_end, SyncEv::Quantum { p });
            return;
        }
        let th = proc.thread;
        let start = proc.seg_start.max(now);
        let elapsed = now.saturating_sub(proc.seg_start);
        self.account(th, elapsed);
        let proc = &mut self.procs[p as usize];
        if proc.queue.is_empty() {
            // Continue with a new quantum, no switch.
            proc.slice_end = now + self.tq;
            proc.timer = true;
            proc.timer_fresh = true;
            eng.schedule_at(proc.slice_end, SyncEv::Quantum { p });
            self.start_activity(th, p, start, eng);
            return;
        }
        self.preemptions += 1;
        proc.thread = NONE;
        proc.gen = proc.gen.wrapping_add(1);
        proc.queue.push_back(th);
        self.threads[th as usize].state = St::Ready;
        self.dispatch_local(p, eng);
    }

    /// Gang scheduling: all processors move to the next slot with work.
    fn switch_slot(&mut self, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        if self.slot.is_some() {
            let d = (now - self.slot_start) as u128;
            self.frag_idle += self.slot_free as u128 * d;
            self.frag_total += self.procs.len() as u128 * d;
        }
        let gangs = &self.gangs;
        let next = self
            .matrix
            .next_slot(self.slot, |g| gangs[g.0 as usize].runnable > 0);
        self.slot_start = now;
        if next.is_some() && next == self.slot {
            // The only slot with work: no switch, a new quantum.
            self.slot_end = now + self.tq;
            self.sgen = self.sgen.wrapping_add(1);
            eng.schedule_at(self.slot_end, SyncEv::Slot { gen: self.sgen });
            for p in 0..self.procs.len() as u32 {
                let th = self.procs[p as usize].thread;
                if th != NONE {
                    let seg_start = self.procs[p as usize].seg_start;
                    self.account(th, now.saturating_sub(seg_start));
                    self.start_activity(th, p, seg_start.max(now), eng);
                }
            }
            return;
        }
        for p in 0..self.procs.len() as u32 {
            let th = self.procs[p as usize].thread;
            if th != NONE {
                let elapsed = now.saturating_sub(self.procs[p as usize].seg_start);
                self.account(th, elapsed);
                self.threads[th as usize].state = St::Ready;
                let proc = &mut self.procs[p as usize];
                proc.thread = NONE;
                proc.gen = proc.gen.wrapping_add(1);
            }
        }
        self.slot = next;
        let Some(s) = next else {
            return;
        };
        self.slot_switches += 1;
        self.slot_free = self.matrix.free_cells(s);
        self.slot_end = now + self.tcs + self.tq;
        // Scheduled before the slot's compute ends, so that a compute ending
        // as the slot does is preempted first (as a quantum's end is).
        self.sgen = self.sgen.wrapping_add(1);
        eng.schedule_at(self.slot_end, SyncEv::Slot { gen: self.sgen });
        for p in 0..self.procs.len() as u32 {
            let proc = &mut self.procs[p as usize];
            proc.busy_until = proc.busy_until.max(now) + self.tcs;
            proc.free_switch = false;
            self.overhead += self.tcs;
            if let Some(g) = self.matrix.cell(s, ProcId(p)) {
                let th = self.gangs[g.0 as usize].on_proc[p as usize];
                if self.threads[th as usize].state == St::Ready {
                    self.run_on(p, th, 0, eng);
                }
            }
        }
    }

    /// Whether the state at this instant (every event of it handled) is
    /// periodic: no skewing thread left, no batch in flight, every processor
    /// with a thread either alone on it or in a quantum whose timer was set
    /// when the quantum began.
    fn periodic_ready(&self) -> bool {
        if self.done.is_some() {
            return false;
        }
        if self.sched == SyncSched::Gang && self.slot.is_none() {
            return false;
        }
        for g in &self.gangs {
            match g.kind {
                Kind::Skew if g.alive > 0 => return false,
                Kind::Measured | Kind::Same
                    if g.wait != WaitStrategy::Busy || g.batch.iterations > 0 =>
                {
                    return false
                }
                _ => {}
            }
        }
        for proc in &self.procs {
            if proc.thread == NONE {
                if !proc.queue.is_empty() {
                    return false;
                }
                continue;
            }
            if !(proc.queue.is_empty() || proc.timer && proc.timer_fresh) {
                return false;
            }
            if proc.spin_timer.is_some() {
                return false;
            }
        }
        true
    }

    /// Solves the rest of a run whose schedule became periodic at `t0` (see
    /// [`SyncMachine::periodic_ready`]): busy-waiting threads never leave a
    /// processor before their quantum ends, so each processor repeats its
    /// round (ℓ quanta of τq, each after a switch of τcs; one thread runs on
    /// alone) for ever, and a thread's progress is a function of time. Each
    /// gang then runs on its own: an iteration ends when its last thread has
    /// received its compute time, in the thread's quanta. The draws, times
    /// and totals are those of the event-by-event path, including its order
    /// at equal times (a quantum that ends as a compute does preempts first:
    /// the thread arrives at its next quantum); tests check this. Returns the
    /// end of the run.
    fn run_periodic(&mut self, t0: Time) -> Time {
        // In-progress segments are charged up to t0.
        for p in 0..self.procs.len() {
            let th = self.procs[p].thread;
            if th != NONE && self.procs[p].seg_start < t0 {
                let elapsed = t0 - self.procs[p].seg_start;
                self.account(th, elapsed);
                self.procs[p].seg_start = t0;
            }
        }
        let mut wins = vec![
            Win {
                phi: 0,
                period: self.tq
            };
            self.threads.len()
        ];
        let rotation = match self.sched {
            SyncSched::Local => {
                self.local_windows(&mut wins);
                Vec::new()
            }
            SyncSched::Gang => self.gang_windows(&mut wins),
        };
        let mg = self.measured as usize;
        if self.start.is_none() {
            // The measured gang's first dispatch is still ahead.
            let first = self.gangs[mg]
                .threads
                .iter()
                .map(|&t| wins[t as usize].phi)
                .min()
                .expect("a gang has threads");
            self.start = Some(Time(first));
            self.last_iter = Time(first);
        }
        let end = self.periodic_gang(mg, &wins, t0.0, None);
        for gi in 0..self.gangs.len() {
            match self.gangs[gi].kind {
                Kind::Same => {
                    self.periodic_gang(gi, &wins, t0.0, Some(end));
                }
                Kind::Compute => {
                    for i in 0..self.gangs[gi].threads.len() {
                        let w = wins[self.gangs[gi].threads[i] as usize];
                        self.useful +=
                            w.at(end, self.tq).cpu(self.tq) - w.at(t0.0, self.tq).cpu(self.tq);
                    }
                }
                Kind::Measured | Kind::Skew => {}
            }
        }
        match self.sched {
            SyncSched::Local => self.local_switches(&wins, end),
            SyncSched::Gang => self.gang_switches(&rotation, end),
        }
        self.done = Some(Time(end));
        Time(end)
    }

    /// Local round robin: each thread's quanta. The running one's began at
    /// slice_end − τq, the queued ones follow in queue order.
    fn local_windows(&self, wins: &mut [Win]) {
        let step = self.tq + self.tcs;
        for proc in &self.procs {
            if proc.thread == NONE {
                continue;
            }
            let l = 1 + proc.queue.len() as u64;
            let period = if l == 1 { self.tq } else { l * step };
            let w0 = proc.slice_end.0 - self.tq;
            wins[proc.thread as usize] = Win { phi: w0, period };
            for (j, &th) in proc.queue.iter().enumerate() {
                wins[th as usize] = Win {
                    phi: w0 + (j as u64 + 1) * step,
                    period,
                };
            }
        }
    }

    /// Local round robin, (t0, end]: quantum expiries and the measured
    /// gang's exits at the end.
    fn local_switches(&mut self, wins: &[Win], end: u64) {
        let step = self.tq + self.tcs;
        let mg = self.measured as usize;
        // Quantum expiries in (t0, end]: each preempts and switches.
        for proc in &self.procs {
            if proc.thread == NONE || proc.queue.is_empty() {
                continue;
            }
            let e0 = proc.slice_end.0;
            if end >= e0 {
                let n = (end - e0) / step + 1;
                self.preemptions += n;
                self.context_switches += n;
                self.overhead += n * self.tcs;
            }
        }
        // The measured threads inside a quantum at the end exit then and
        // their processors switch to the next thread.
        for &t in &self.gangs[mg].threads {
            let p = self.threads[t as usize].proc as usize;
            if self.procs[p].queue.is_empty() {
                continue;
            }
            let w = wins[t as usize];
            if end >= w.phi && (end - w.phi) % w.period < self.tq {
                self.context_switches += 1;
                self.overhead += self.tcs;
            }
        }
    }

    /// Gang scheduling: the slots in the order they run from the current one,
    /// and each thread's quanta (its gang's slot: τcs after the switch, τq
    /// long, every rotation; a lone slot runs on without switches).
    fn gang_windows(&self, wins: &mut [Win]) -> Vec<SlotId> {
        let cur = self.slot.expect("a slot runs");
        let gangs = &self.gangs;
        let mut rot = vec![cur];
        loop {
            let next = self
                .matrix
                .next_slot(rot.last().copied(), |g| gangs[g.0 as usize].runnable > 0)
                .expect("the current slot has work");
            if next == cur {
                break;
            }
            rot.push(next);
        }
        let step = self.tq + self.tcs;
        let s = rot.len() as u64;
        let period = if s == 1 { self.tq } else { s * step };
        for (j, &slot) in rot.iter().enumerate() {
            let phi = if j == 0 {
                self.slot_end.0 - self.tq
            } else {
                self.slot_end.0 + (j as u64 - 1) * step + self.tcs
            };
            for g in self.matrix.gangs_in(slot) {
                for &th in &self.gangs[g.0 as usize].threads {
                    wins[th as usize] = Win { phi, period };
                }
            }
        }
        rot
    }

    /// Gang scheduling, up to `end`: the slot switches (fragmentation,
    /// switch costs, context switches) and, when the measured gang had its
    /// slot to itself, the early switch its exit at the end triggers.
    fn gang_switches(&mut self, rot: &[SlotId], end: u64) {
        let p = self.procs.len() as u64;
        let s = rot.len();
        let inc = if s == 1 { self.tq } else { self.tq + self.tcs };
        let mut last: Vec<u32> = self.procs.iter().map(|q| q.last).collect();
        let (mut k, mut slot_start, mut e) = (0usize, self.slot_start.0, self.slot_end.0);
        let switch_to = |m: &mut SyncMachine, k: usize, last: &mut [u32]| {
            m.slot_switches += 1;
            m.overhead += p * m.tcs;
            let ns = rot[k];
            for (q, l) in last.iter_mut().enumerate() {
                if let Some(g) = m.matrix.cell(ns, ProcId(q as u32)) {
                    let th = m.gangs[g.0 as usize].on_proc[q];
                    if *l != th {
                        m.context_switches += 1;
                    }
                    *l = th;
                }
            }
        };
        while e <= end {
            let d = (e - slot_start) as u128;
            self.frag_idle += self.matrix.free_cells(rot[k]) as u128 * d;
            self.frag_total += p as u128 * d;
            slot_start = e;
            if s >= 2 {
                k = (k + 1) % s;
                switch_to(self, k, &mut last);
            }
            e += inc;
        }
        let mslot = self.matrix.slot_of(GangId(self.measured as u64));
        if mslot == Some(rot[k]) && self.matrix.gangs_in(rot[k]) == [GangId(self.measured as u64)] {
            // Its threads exit at the end and leave every processor idle.
            let d = (end - slot_start) as u128;
            self.frag_idle += self.matrix.free_cells(rot[k]) as u128 * d;
            self.frag_total += p as u128 * d;
            if s >= 2 {
                switch_to(self, (k + 1) % s, &mut last);
            }
        }
    }

    /// Runs gang `gi` on the periodic schedule `wins` from `t0`: the measured
    /// gang (`limit` None) up to its k-th release, whose time is returned;
    /// another up to `limit`, its iteration in progress charged up to then.
    /// The gang's program is `Repeat { count, [Compute, Barrier] }`, so the
    /// draws are made directly (the same calls, in thread order, that the
    /// cursors make at a release).
    fn periodic_gang(&mut self, gi: usize, wins: &[Win], t0: u64, limit: Option<u64>) -> u64 {
        let measured = gi == self.measured as usize;
        let tq = self.tq;
        let (first, width) = (self.gangs[gi].first as usize, self.gangs[gi].width as usize);
        let demand = self.loop_demand(gi);
        // Per thread: where it is in its own quanta (at the start of its
        // current compute or, once arrived, at its arrival), and what it has
        // still to compute.
        let mut at: Vec<Pos> = Vec::with_capacity(width);
        let mut rem: Vec<u64> = Vec::with_capacity(width);
        let mut arrived: Vec<bool> = Vec::with_capacity(width);
        for th in &self.threads[first..first + width] {
            at.push(wins[first + at.len()].at(t0, tq));
            rem.push(th.remaining);
            arrived.push(th.waiting);
        }
        let (mut useful, mut spin) = (0u64, 0u64);
        let mut iterations = 0u64;
        // Threads sharing their quanta (gang scheduling) are all at the same
        // place after a release, and an iteration is then the longest
        // compute placed in those quanta (each thread spins the difference).
        let shared = (1..width).all(|i| wins[first + i] == wins[first]);
        let mut aligned = false;
        let end;
        'outer: loop {
            if aligned {
                let mut p = at[0];
                loop {
                    let (mut mx, mut sum) = (0u64, 0u64);
                    for &r in &rem {
                        mx = mx.max(r);
                        sum += r;
                    }
                    let mut q = p;
                    q.add(mx, tq);
                    let release = q.time();
                    if matches!(limit, Some(lim) if release > lim) {
                        // The general step below charges the partial iteration.
                        at.iter_mut().for_each(|a| *a = p);
                        aligned = false;
                        continue 'outer;
                    }
                    useful += sum;
                    spin += width as u64 * mx - sum;
                    p = q;
                    iterations += 1;
                    if measured && self.measured_release(release) {
                        end = release;
                        break 'outer;
                    }
                    let g = &mut self.gangs[gi];
                    rem.iter_mut()
                        .for_each(|r| *r = draw(&demand, g.width, &mut g.rng));
                }
            }
            // This iteration's arrivals (positions after the compute) and its
            // release.
            let mut release = 0;
            for i in 0..width {
                if !arrived[i] {
                    let mut p = at[i];
                    p.add(rem[i], tq);
                    release = release.max(p.time());
                }
            }
            if let Some(lim) = limit {
                if release > lim {
                    // The iteration in progress at the limit.
                    for i in 0..width {
                        let mut p = at[i];
                        let before = p.cpu(tq);
                        p.advance_to(lim, tq);
                        let ran = p.cpu(tq) - before;
                        if arrived[i] {
                            spin += ran;
                        } else {
                            useful += rem[i].min(ran);
                            spin += ran.saturating_sub(rem[i]);
                        }
                    }
                    end = lim;
                    break;
                }
            }
            for i in 0..width {
                let p = &mut at[i];
                if !arrived[i] {
                    useful += rem[i];
                    p.add(rem[i], tq);
                }
                let before = p.cpu(tq);
                p.advance_to(release, tq);
                spin += p.cpu(tq) - before;
                arrived[i] = false;
            }
            iterations += 1;
            if measured && self.measured_release(release) {
                end = release;
                break;
            }
            let g = &mut self.gangs[gi];
            rem.iter_mut()
                .for_each(|r| *r = draw(&demand, g.width, &mut g.rng));
            aligned = shared;
        }
        let g = &mut self.gangs[gi];
        if !measured {
            g.iterations += iterations;
        }
        g.arrived = 0;
        g.waiters.clear();
        self.gang_iterations += iterations;
        self.useful += useful;
        self.spin += spin;
        if measured {
            self.measured_spin += spin;
        }
        end
    }

    /// Invariants (audit mode).
    fn check(&self, now: Time) -> Result<(), MachineError> {
        let err = |msg: String| MachineError::Invariant {
            time: now.as_units(),
            msg,
        };
        let mut seen = vec![0u8; self.threads.len()];
        for (i, proc) in self.procs.iter().enumerate() {
            if proc.thread != NONE {
                let th = proc.thread as usize;
                let t = &self.threads[th];
                if t.state != St::Running || t.proc != i as u32 {
                    return Err(err(format!(
                        "processor {i} holds thread {th} in state {:?} pinned to {}",
                        t.state, t.proc
                    )));
                }
                if self.sched == SyncSched::Gang {
                    let slot = self.matrix.slot_of(GangId(t.gang as u64));
                    if slot.is_none() || slot != self.slot {
                        return Err(err(format!(
                            "thread {th} of gang {} runs outside its slot ({slot:?}, current {:?})",
                            t.gang, self.slot
                        )));
                    }
                }
                seen[th] += 1;
            }
            for &q in &proc.queue {
                let t = &self.threads[q as usize];
                if t.state != St::Ready || t.proc != i as u32 {
                    return Err(err(format!(
                        "thread {q} queued on {i} is {:?}, pinned to {}",
                        t.state, t.proc
                    )));
                }
                seen[q as usize] += 1;
            }
            if self.sched == SyncSched::Gang && !proc.queue.is_empty() {
                return Err(err("gang scheduling uses no run queues".into()));
            }
        }
        if let Some(t) = seen.iter().position(|&c| c > 1) {
            return Err(err(format!("thread {t} is in two places at once")));
        }
        if let (SyncSched::Gang, Some(s)) = (self.sched, self.slot) {
            // Coscheduling: every thread of the current slot's gangs that can
            // run holds its processor (all of a gang's threads run together).
            for (th, t) in self.threads.iter().enumerate() {
                if t.state == St::Ready && self.matrix.slot_of(GangId(t.gang as u64)) == Some(s) {
                    return Err(err(format!(
                        "thread {th} of gang {} is ready but not running in its gang's slot",
                        t.gang
                    )));
                }
            }
        }
        for (gi, g) in self.gangs.iter().enumerate() {
            let mut runnable = 0;
            let mut waiting = 0;
            for (th, t) in self.threads.iter().enumerate() {
                if t.gang as usize != gi {
                    continue;
                }
                if matches!(t.state, St::Ready | St::Running) {
                    runnable += 1;
                }
                if t.waiting {
                    waiting += 1;
                }
                if t.state == St::Blocked && (!t.waiting || seen[th] != 0) {
                    return Err(err(format!(
                        "blocked thread {th} is not waiting or holds a processor/queue place"
                    )));
                }
                if self.sched == SyncSched::Local && t.state == St::Ready && seen[th] != 1 {
                    return Err(err(format!("ready thread {th} is in no run queue")));
                }
            }
            if runnable != g.runnable {
                return Err(err(format!("gang {gi} runnable count is off")));
            }
            if waiting != g.waiters.len() || waiting as u32 != g.arrived {
                return Err(err(format!("gang {gi} barrier count is off")));
            }
        }
        Ok(())
    }
}

/// Options of a run that do not change its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncOptions {
    /// Check invariants after every event (slow; for tests).
    pub audit: bool,
    /// Compute the iterations of a co-scheduled busy-waiting gang in batches
    /// (identical results, far fewer events; off only to test that).
    pub fast: bool,
}

impl Default for SyncOptions {
    fn default() -> Self {
        SyncOptions {
            audit: false,
            fast: true,
        }
    }
}

/// Runs one configuration.
pub fn run(cfg: &SyncConfig, opts: SyncOptions) -> Result<SyncResult, crate::pools::RunError> {
    let wall = Instant::now();
    let mut m = SyncMachine::new(cfg, opts)?;
    let mut eng = Engine::new();
    let end = m.run(&mut eng)?;
    let start = m.start.unwrap_or(Time::ZERO);
    let iterations = m.gangs[m.measured as usize].iterations;
    let total = ticks_to_units(end - start);
    let (_, half) = mean_ci90(&m.batch_means);
    let p = m.procs.len() as f64;
    let end_u = end.as_units();
    // Histogram quantiles, kept within the exact extremes.
    let quantile = |q: f64| {
        ticks_to_units(
            m.iter_hist
                .value_at_quantile(q)
                .clamp(m.iter_min.min(m.iter_max), m.iter_max),
        )
    };
    Ok(SyncResult {
        time_per_iter: total / iterations as f64,
        ci90_half_width: half,
        batch_means: m.batch_means.clone(),
        iteration_min: ticks_to_units(m.iter_min),
        iteration_p10: quantile(0.10),
        iteration_p50: quantile(0.50),
        iteration_p90: quantile(0.90),
        iteration_p99: quantile(0.99),
        iteration_max: ticks_to_units(m.iter_max),
        iteration_histogram: log_bins(&m.iter_hist),
        start: start.as_units(),
        end: end_u,
        iterations,
        utilization: ticks_to_units(m.useful) / (p * end_u),
        useful_time: ticks_to_units(m.useful),
        busy_wait_time: ticks_to_units(m.spin),
        measured_busy_wait_time: ticks_to_units(m.measured_spin),
        overhead_time: ticks_to_units(m.overhead),
        context_switches: m.context_switches,
        blocking_events: m.blocking_events,
        yields: m.yields,
        alpha_measured: (m.yield_waits > 0).then(|| m.yields as f64 / m.yield_waits as f64),
        preemptions: m.preemptions,
        slot_switches: m.slot_switches,
        fragmentation: if m.frag_total == 0 {
            0.0
        } else {
            m.frag_idle as f64 / m.frag_total as f64
        },
        gang_iterations: m.gang_iterations,
        events: eng.processed(),
        max_pending: m.max_pending,
        t_p: cfg.t_p(),
        t_w: cfg.t_w(),
        eq6: cfg.eq6(),
        eq8: cfg.eq8(),
        eq12: cfg.eq12(),
        eq13: cfg.eq13(),
        wall_seconds: wall.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(pairs: &[(&str, Value)]) -> SyncConfig {
        let mut c = SyncConfig::default();
        for (k, v) in pairs {
            c.set(k, v).unwrap();
        }
        c
    }

    const AUDIT: SyncOptions = SyncOptions {
        audit: true,
        fast: true,
    };

    fn s(v: &str) -> Value {
        Value::Str(v.into())
    }

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b
    }

    #[test]
    fn dedicated_busy_wait_is_tp_plus_tw() {
        for sched in ["gang", "local"] {
            let c = cfg(&[
                ("l", Value::Int(1)),
                ("k", Value::Int(20_000)),
                ("sched", s(sched)),
            ]);
            let r = run(&c, SyncOptions::default()).unwrap();
            let want = c.t_p() + c.t_w();
            assert!(
                rel(r.time_per_iter, want) < 0.01,
                "{sched}: {} vs t_p + t_w = {want}",
                r.time_per_iter
            );
            assert_eq!(r.blocking_events, 0);
            assert!(r.busy_wait_time > 0.0);
        }
    }

    /// Exponential compute times: t_w = var·(H_n − 1) exceeds t_p, and the
    /// dedicated-machine time per iteration is still t_p + t_w.
    #[test]
    fn exponential_compute_gives_large_waits() {
        let c = cfg(&[
            ("l", Value::Int(1)),
            ("k", Value::Int(40_000)),
            ("grain", Value::Float(0.0)),
            ("var", Value::Float(2.0)),
            ("dist", s("exponential")),
        ]);
        assert!(c.t_w() > c.t_p(), "t_w {} <= t_p {}", c.t_w(), c.t_p());
        let r = run(&c, SyncOptions::default()).unwrap();
        let want = c.t_p() + c.t_w();
        assert!(
            rel(r.time_per_iter, want) < 0.02,
            "{} vs {want}",
            r.time_per_iter
        );
        let mut bad = SyncConfig::default();
        assert!(bad.set("dist", &s("normal")).is_err());
    }

    #[test]
    fn gang_busy_wait_matches_eq6() {
        for grain in [0.1, 1.0] {
            let c = cfg(&[("grain", Value::Float(grain)), ("var", Value::Float(grain))]);
            let c = SyncConfig { k: 30_000, ..c };
            let r = run(&c, SyncOptions::default()).unwrap();
            assert!(
                rel(r.time_per_iter, c.eq6()) < 0.05,
                "grain {grain}: {} vs eq6 {}",
                r.time_per_iter,
                c.eq6()
            );
            assert!(r.fragmentation == 0.0);
            assert!(r.slot_switches > 0);
        }
    }

    #[test]
    fn local_blocking_same_competitors_matches_eq12() {
        let c = cfg(&[
            ("sched", s("local")),
            ("wait", s("block")),
            ("k", Value::Int(20_000)),
        ]);
        let r = run(&c, SyncOptions::default()).unwrap();
        assert!(
            rel(r.time_per_iter, c.eq12()) < 0.10,
            "{} vs eq12 {}",
            r.time_per_iter,
            c.eq12()
        );
        assert_eq!(r.busy_wait_time, 0.0);
        assert!(r.blocking_events > 0);
    }

    #[test]
    fn local_blocking_compute_competitors_matches_eq13() {
        let c = cfg(&[
            ("sched", s("local")),
            ("wait", s("block")),
            ("competitors", s("compute")),
            ("k", Value::Int(3_000)),
        ]);
        let r = run(&c, SyncOptions::default()).unwrap();
        assert!(
            rel(r.time_per_iter, c.eq13()) < 0.10,
            "{} vs eq13 {}",
            r.time_per_iter,
            c.eq13()
        );
    }

    #[test]
    fn uncoordinated_busy_wait_is_slow_and_quadratic_in_load() {
        // Experiment 4: pairs of threads, GRAIN = VAR = 100 instructions. The
        // pattern a run falls into depends on its seed (which quanta line up),
        // so pool seeds as equation (8) does: rounds / expected iterations
        // per round, i.e. the harmonic mean of the per-seed times.
        let t = |sched: &str, l: i64| {
            let seeds = 12;
            let inv: f64 = (1..=seeds)
                .map(|seed| {
                    let c = cfg(&[
                        ("n", Value::Int(2)),
                        ("l", Value::Int(l)),
                        ("grain", Value::Float(0.141)),
                        ("var", Value::Float(0.141)),
                        ("k", Value::Int(4_000)),
                        ("sched", s(sched)),
                        ("seed", Value::Int(seed)),
                    ]);
                    1.0 / run(&c, SyncOptions::default()).unwrap().time_per_iter
                })
                .sum();
            seeds as f64 / inv
        };
        let gang: Vec<f64> = (2..=4).map(|l| t("gang", l)).collect();
        let local: Vec<f64> = (2..=4).map(|l| t("local", l)).collect();
        // Gang: linear in l.
        assert!(rel(gang[2] / gang[0], 2.0) < 0.05, "{gang:?}");
        // Uncoordinated: much slower, growing about as l^2 (eq. 8).
        assert!(local[1] > 2.0 * gang[1], "{local:?} vs {gang:?}");
        let growth = local[2] / local[0];
        assert!(growth > 3.0, "local {local:?}: l=4/l=2 ratio {growth}");
    }

    #[test]
    fn audit_every_combination() {
        for sched in ["gang", "local"] {
            for wait in ["busy", "block", "twophase", "yield"] {
                for comp in ["same", "compute"] {
                    for wakeup in ["tail", "priority"] {
                        let c = cfg(&[
                            ("n", Value::Int(4)),
                            ("P", Value::Int(6)),
                            ("l", Value::Int(3)),
                            ("k", Value::Int(300)),
                            ("tq", Value::Float(5.0)),
                            ("sched", s(sched)),
                            ("wait", s(wait)),
                            ("competitors", s(comp)),
                            ("wakeup", s(wakeup)),
                        ]);
                        let r = run(&c, AUDIT)
                            .unwrap_or_else(|e| panic!("{sched}/{wait}/{comp}/{wakeup}: {e}"));
                        assert_eq!(r.iterations, 300);
                        if wait == "block" {
                            assert_eq!(r.busy_wait_time, 0.0, "blocked threads spun");
                        }
                        let cap = c.procs() as f64 * r.end;
                        assert!(r.useful_time + r.busy_wait_time <= cap + 1e-6);
                        if sched == "gang" && comp == "same" {
                            // Gangs of 4 on 6 processors: one gang per slot
                            // (4 + 4 > 6), so 2 of 6 cells idle.
                            assert!(rel(r.fragmentation, 2.0 / 6.0) < 0.2, "{}", r.fragmentation);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn gang_threads_stay_in_their_slot_and_blocked_threads_use_no_cpu() {
        // The audit (run with `true`) fails the run if a thread runs outside
        // its gang's slot or a blocked thread holds a processor or queue place.
        let c = cfg(&[("k", Value::Int(2_000)), ("wait", s("twophase"))]);
        let r = run(&c, AUDIT).unwrap();
        assert!(r.blocking_events > 0 || r.busy_wait_time > 0.0);
        let c = cfg(&[
            ("k", Value::Int(2_000)),
            ("wait", s("block")),
            ("sched", s("local")),
        ]);
        let r = run(&c, AUDIT).unwrap();
        assert_eq!(r.busy_wait_time, 0.0);
        assert!(r.blocking_events > 0);
    }

    #[test]
    fn deterministic() {
        for sched in ["gang", "local"] {
            let c = cfg(&[
                ("k", Value::Int(3_000)),
                ("sched", s(sched)),
                ("wait", s("twophase")),
            ]);
            let a = run(&c, SyncOptions::default()).unwrap();
            let b = run(&c, SyncOptions::default()).unwrap();
            assert!(a.same_simulation(&b));
            let d = run(&SyncConfig { seed: 2, ..c }, SyncOptions::default()).unwrap();
            assert_ne!(a.time_per_iter, d.time_per_iter);
        }
    }

    fn strip(mut r: SyncResult) -> SyncResult {
        r.events = 0;
        r.max_pending = 0;
        r.wall_seconds = 0.0;
        r
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// The fast paths for busy waiting — the periodic solver (local round
        /// robin) and batches of co-scheduled iterations (gang scheduling) —
        /// give exactly the event-by-event results: draws, times, batch means
        /// and totals.
        #[test]
        fn periodic_solver_matches_the_event_path(
            n in 1i64..6, extra in 0i64..3, l in 1i64..5, k in 1i64..2500,
            compute in proptest::bool::ANY, skew in proptest::bool::ANY,
            shuffle in proptest::bool::ANY, expo in proptest::bool::ANY,
            tq in 1u32..40, tcs10 in 0u32..5, grain10 in 0u32..60, var10 in 0u32..60,
            seed in 0i64..1000, batches in 1i64..12, gang in proptest::bool::ANY,
        ) {
            let tcs = f64::from(tcs10) / 10.0;
            let tq = f64::from(tq).max(tcs + 0.5);
            let c = cfg(&[
                ("n", Value::Int(n)),
                ("P", Value::Int(n + extra)),
                ("l", Value::Int(l)),
                ("k", Value::Int(k)),
                ("tq", Value::Float(tq)),
                ("tcs", Value::Float(tcs)),
                ("grain", Value::Float(f64::from(grain10) / 10.0)),
                ("var", Value::Float(f64::from(var10) / 10.0)),
                ("dist", s(if expo { "exponential" } else { "uniform" })),
                ("competitors", s(if compute { "compute" } else { "same" })),
                ("skew", Value::Bool(skew)),
                ("shuffle", Value::Bool(shuffle)),
                ("seed", Value::Int(seed)),
                ("batches", Value::Int(batches)),
                ("sched", s(if gang { "gang" } else { "local" })),
                ("wait", s("busy")),
            ]);
            let fast = run(&c, SyncOptions::default()).unwrap();
            let slow = run(&c, SyncOptions { audit: false, fast: false }).unwrap();
            // Debug strings: exact floats, and NaN (one batch) equals NaN.
            if k >= 300 && !skew && l >= 2 {
                // Periodic from the first quantum or slot: a handful of events.
                proptest::prop_assert!(fast.events < 4 * (n + extra) as u64 * l as u64 + 8,
                    "{} events", fast.events);
            }
            proptest::prop_assert_eq!(format!("{:?}", strip(fast)), format!("{:?}", strip(slow)));
        }
    }

    #[test]
    fn iteration_time_distribution() {
        // Dedicated processors, constant compute: every iteration is alike.
        let r = run(
            &cfg(&[
                ("l", Value::Int(1)),
                ("k", Value::Int(3_000)),
                ("var", Value::Float(0.0)),
            ]),
            AUDIT,
        )
        .unwrap();
        assert_eq!(r.iteration_min, r.iteration_max);
        assert!(rel(r.iteration_p50, r.iteration_min) < 0.01);
        let total: u64 = r.iteration_histogram.iter().map(|b| b.2).sum();
        assert_eq!(total, 3_000);
        assert_eq!(r.iteration_histogram.len(), 1);
        // Uncoordinated busy waiting: most iterations are fast (inside the
        // overlap), a few span a whole round — a long tail.
        let r = run(
            &cfg(&[
                ("n", Value::Int(2)),
                ("l", Value::Int(3)),
                ("k", Value::Int(20_000)),
                ("grain", Value::Float(0.05)),
                ("var", Value::Float(0.05)),
                ("sched", s("local")),
                ("seed", Value::Int(3)),
            ]),
            SyncOptions::default(),
        )
        .unwrap();
        assert!(r.iteration_min <= r.iteration_p10 && r.iteration_p10 <= r.iteration_p50);
        assert!(r.iteration_p50 <= r.iteration_p90 && r.iteration_p99 <= r.iteration_max);
        assert!(r.iteration_max > 20.0 * r.iteration_p50, "{r:?}");
        let total: u64 = r.iteration_histogram.iter().map(|b| b.2).sum();
        assert_eq!(total, 20_000);
        for w in r.iteration_histogram.windows(2) {
            assert!(w[0].1 <= w[1].0 + 1e-12, "bins ordered and disjoint");
        }
        // The mean of the distribution is the time per iteration.
        let mean: f64 = r
            .iteration_histogram
            .iter()
            .map(|&(lo, hi, c)| (lo * hi).sqrt() * c as f64)
            .sum::<f64>()
            / 20_000.0;
        assert!(
            rel(mean, r.time_per_iter) < 0.15,
            "{mean} vs {}",
            r.time_per_iter
        );
    }

    #[test]
    fn empirical_compute_times() {
        // Any distribution a user brings, as a sample. n = 2 threads drawing
        // from {1, 3}: E[max] = 1·1/4 + 3·3/4 = 2.5, mean 2, so t_w = 0.5.
        let c = cfg(&[
            ("n", Value::Int(2)),
            ("l", Value::Int(1)),
            ("k", Value::Int(20_000)),
            ("dist", s("empirical")),
            ("samples", Value::Str("1, 3".into())),
            ("barrier_cost", Value::Float(0.0)),
        ]);
        assert!(rel(c.t_p(), 2.0) < 1e-12 && rel(c.t_w(), 0.5) < 1e-12);
        let r = run(&c, AUDIT).unwrap();
        // Dedicated processors: an iteration takes the slower thread's time.
        assert!(rel(r.time_per_iter, 2.5) < 0.01, "{}", r.time_per_iter);
        assert_eq!(r.iteration_min, 1.0);
        assert_eq!(r.iteration_max, 3.0);
        // The same as a list value; errors name the field.
        let mut c2 = c.clone();
        c2.set("samples", &Value::List(vec![1.0, 3.0])).unwrap();
        assert_eq!(c2.samples, c.samples);
        for (key, v) in [
            ("samples", Value::List(vec![])),
            ("samples", Value::List(vec![1.0, -2.0])),
        ] {
            let mut bad = c.clone();
            bad.set(key, &v).unwrap();
            assert_eq!(bad.validate().unwrap_err().field, "samples");
        }
        let mut bad = c.clone();
        assert_eq!(
            bad.set("samples", &Value::Str("1, x".into()))
                .unwrap_err()
                .field,
            "samples"
        );
        bad.set("dist", &s("uniform")).unwrap();
        assert_eq!(bad.validate().unwrap_err().field, "samples");
    }

    #[test]
    fn yield_needs_a_switch_cost() {
        let mut c = cfg(&[("wait", s("yield")), ("tcs", Value::Float(0.0))]);
        let e = c.validate().unwrap_err();
        assert_eq!(e.field, "tcs");
        c.set("tcs", &Value::Float(0.01)).unwrap();
        c.validate().unwrap();
    }

    #[test]
    fn yield_blocking_measures_alpha() {
        // Seed 001 §3.3, experiment 3 (GRAIN = VAR = 1000, Table 1's τcs): the
        // yields per wait are "about 4 for a load of one down to about 1.2
        // for a load of four" — here with compute-bound competitors.
        let alpha = |l: i64, comp: &str| {
            let r = run(
                &cfg(&[
                    ("l", Value::Int(l)),
                    ("k", Value::Int(1_500)),
                    ("grain", Value::Float(1.41)),
                    ("var", Value::Float(1.41)),
                    ("tcs", Value::Float(0.07 + 0.14 / l as f64)),
                    ("sched", s("local")),
                    ("wait", s("yield")),
                    ("competitors", s(comp)),
                ]),
                AUDIT,
            )
            .unwrap();
            assert_eq!(r.busy_wait_time, 0.0, "yielders do not spin");
            assert_eq!(r.blocking_events, 0);
            assert!(r.yields > 0);
            r.alpha_measured.expect("threads waited")
        };
        let (a1, a4) = (alpha(1, "compute"), alpha(4, "compute"));
        assert!((3.0..5.0).contains(&a1), "load 1: {a1}");
        assert!((1.0..1.5).contains(&a4), "load 4: {a4}");
        let a4_alike = alpha(4, "same");
        assert!(
            a4_alike > a4,
            "alike competitors yield back sooner: {a4_alike}"
        );
        // Not measured without yields.
        let r = run(&cfg(&[("k", Value::Int(100))]), AUDIT).unwrap();
        assert!(r.alpha_measured.is_none() && r.yields == 0);
    }

    #[test]
    fn busy_waiting_competitors_do_not_matter_to_the_measured_gang() {
        // Seed 001 §2.1: with busy waiting the other threads' character does
        // not matter (every thread uses whole quanta), so alike and
        // compute-bound competitors give the measured gang the same times
        // (with P = n, so that both kinds fill the same processors).
        for (seed, n, p, l, grain) in [(1, 4, 4, 3, 0.03), (2, 2, 2, 2, 1.0), (3, 3, 3, 4, 7.0)] {
            let run_with = |comp: &str| {
                run(
                    &cfg(&[
                        ("n", Value::Int(n)),
                        ("P", Value::Int(p)),
                        ("l", Value::Int(l)),
                        ("k", Value::Int(2_000)),
                        ("grain", Value::Float(grain)),
                        ("var", Value::Float(grain)),
                        ("tq", Value::Float(10.0)),
                        ("sched", s("local")),
                        ("competitors", s(comp)),
                        ("seed", Value::Int(seed)),
                    ]),
                    SyncOptions::default(),
                )
                .unwrap()
            };
            let (a, b) = (run_with("same"), run_with("compute"));
            assert_eq!(a.time_per_iter, b.time_per_iter, "seed {seed}");
            assert_eq!(a.batch_means, b.batch_means, "seed {seed}");
            assert_eq!(a.measured_busy_wait_time, b.measured_busy_wait_time);
            assert_ne!(a.busy_wait_time, b.busy_wait_time, "competitors differ");
        }
    }

    #[test]
    fn fast_path_changes_nothing_but_the_event_count() {
        let slow = SyncOptions {
            audit: true,
            fast: false,
        };
        for sched in ["gang", "local"] {
            for l in [1, 3] {
                for comp in ["same", "compute"] {
                    let c = cfg(&[
                        ("n", Value::Int(4)),
                        ("l", Value::Int(l)),
                        ("k", Value::Int(3_000)),
                        ("tq", Value::Float(10.0)),
                        ("sched", s(sched)),
                        ("competitors", s(comp)),
                    ]);
                    let mut a = run(&c, AUDIT).unwrap();
                    let mut b = run(&c, slow).unwrap();
                    assert!(a.events < b.events || l > 1, "{sched} l={l}");
                    for r in [&mut a, &mut b] {
                        r.events = 0;
                        r.max_pending = 0;
                        r.wall_seconds = 0.0;
                    }
                    assert_eq!(a, b, "{sched} l={l} {comp}");
                }
            }
        }
    }

    #[test]
    fn batches_cut_at_max_batch_change_nothing() {
        // ~5,000 iterations per slot: batches are cut at MAX_BATCH.
        for sched in ["gang", "local"] {
            let c = cfg(&[
                ("n", Value::Int(3)),
                ("l", Value::Int(2)),
                ("grain", Value::Float(0.001)),
                ("var", Value::Float(0.001)),
                ("barrier_cost", Value::Float(0.0)),
                ("tq", Value::Float(10.0)),
                ("k", Value::Int(20_000)),
                ("sched", s(sched)),
                // Processors in lockstep: the gangs are co-scheduled.
                ("skew", Value::Bool(false)),
                ("shuffle", Value::Bool(false)),
            ]);
            let fast = run(&c, SyncOptions::default()).unwrap();
            let slow = run(
                &c,
                SyncOptions {
                    audit: false,
                    fast: false,
                },
            )
            .unwrap();
            assert!(fast.events * 10 < slow.events, "{sched}");
            let strip = |mut r: SyncResult| {
                r.events = 0;
                r.max_pending = 0;
                r.wall_seconds = 0.0;
                r
            };
            assert_eq!(strip(fast), strip(slow), "{sched}");
        }
    }

    #[test]
    fn long_runs_do_not_grow_memory() {
        for sched in ["gang", "local"] {
            for wait in ["busy", "block"] {
                let c = cfg(&[("sched", s(sched)), ("wait", s(wait))]);
                assert_eq!(c.k, 50_000);
                let short = run(
                    &SyncConfig {
                        k: 1_000,
                        ..c.clone()
                    },
                    SyncOptions::default(),
                )
                .unwrap();
                let long = run(&c, SyncOptions::default()).unwrap();
                assert_eq!(long.iterations, 50_000);
                assert!(
                    long.max_pending <= 2 * c.procs() as usize + 4,
                    "{}",
                    long.max_pending
                );
                assert!(long.max_pending <= short.max_pending + 2);
                assert_eq!(long.batch_means.len(), 20);
                assert!(long.ci90_half_width < 0.05 * long.time_per_iter);
            }
        }
    }

    #[test]
    fn config_keys_and_errors() {
        let mut c = SyncConfig::default();
        assert_eq!(c.procs(), 10);
        c.validate().unwrap();
        c.set("P", &Value::Int(8)).unwrap();
        assert_eq!(c.validate().unwrap_err().field, "n");
        let mut c = SyncConfig::default();
        c.set("tcs", &Value::Float(50.0)).unwrap();
        assert_eq!(c.validate().unwrap_err().field, "tcs");
        let mut c = SyncConfig::default();
        c.set("grain", &Value::Float(-1.0)).unwrap();
        assert_eq!(c.validate().unwrap_err().field, "grain");
        let e = c.set("quantum", &Value::Int(1)).unwrap_err();
        assert_eq!(e.field, "quantum");
        assert!(e.allowed.contains("tq"));
        assert_eq!(c.set("wait", &s("spin")).unwrap_err().field, "wait");
        assert_eq!(c.set("k", &Value::Float(1.5)).unwrap_err().field, "k");
        let c = cfg(&[
            ("wait", s("twophase")),
            ("sched", s("local")),
            ("competitors", s("compute")),
            ("wakeup", s("priority")),
            ("skew", Value::Bool(false)),
            ("P", Value::Int(12)),
        ]);
        assert_eq!(c.wait, WaitStrategy::TwoPhase);
        assert_eq!(c.sched, SyncSched::Local);
        assert_eq!(c.competitors, Competitors::Compute);
        assert_eq!(c.wakeup, Wakeup::Priority);
        assert!(!c.skew);
        assert_eq!(c.procs(), 12);
        assert!(matches!(
            run(&SyncConfig { n: 0, ..c }, SyncOptions::default()),
            Err(crate::pools::RunError::Config(e)) if e.field == "n"
        ));
    }

    #[test]
    fn model_inputs() {
        let c = SyncConfig::default();
        assert!((c.t_p() - 1.637).abs() < 1e-12);
        // E[max of 10 U(0,1)] = 10/11; minus the mean 1/2.
        assert!((c.t_w() - (10.0 / 11.0 - 0.5)).abs() < 1e-12);
    }
}
