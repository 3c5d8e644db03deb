//! Seed 001's machine (Feitelson & Rudolph 1992, sections 2 and 3): P
//! processors, each with its own run queue, running threads pinned to them
//! when spawned; gangs of threads that iterate "compute, then barrier"; three
//! waiting strategies (busy waiting, blocking, two-phase); and two schedulers:
//! uncoordinated per-processor round robin, or gang scheduling with
//! Ousterhout's matrix ([`GangMatrix`]).
//!
//! **Time.** Times are in ms; one model unit (ms) is 10^6 ticks, so one
//! engine tick is 1 ns.
//!
//! **Shape.** The machine is a [`Model`] on the one [`Engine`], run by
//! [`run_watched`] (the cancel flag of [`crate::cancel`], every
//! [`CHECK_EVERY`](crate::cancel::CHECK_EVERY) events, and by the periodic
//! solver every as many steps), its events named in the past tense
//! ([`SyncEv`]), its state in named parts: the parameters, processors,
//! threads and gangs, the gang scheduler and its current slot, the totals
//! and the measured gang's iteration times. `build.rs` builds it from a
//! configuration, `machine.rs` handles the events, `fast.rs` and
//! `periodic.rs` are its exact fast paths, `audit.rs` its invariants.
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
//!   processors, or the slot a [`SlotChooser`] answers: [`run_with`]) in
//!   the order skew, measured, competitors; the allocation fixes each
//!   thread's processor under both schedulers.
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

use crate::engine::{run_watched, Engine, Flow, Model, RunEnd, Timer};
use crate::machines::common::{MachineError, RunError};
use crate::rng::{stream, Stream, StreamRng};
use crate::stats::mean_ci90;
use hdrhistogram::Histogram;
use parsched_core::policy::classify::Observation;
use parsched_core::policy::gang::{Allocation, GangId, GangMatrix, SlotId};
use parsched_core::policy::gang_place::{check_slot_for, SlotChooser, SlotJob, SlotView};
use parsched_core::policy::gang_sched::{Admission, GangSchedOptions, GangScheduler};
use parsched_core::policy::local::{EnqueueReason, LocalScheduler, RoundRobin};
use parsched_core::policy::wait::WaitAction;
use parsched_core::program::{Cursor, Dist, Op, Program, Step};
use parsched_core::time::{ticks_to_units, units_to_ticks, TickUnit, TICKS_PER_UNIT};
use parsched_core::ThreadId;
use parsched_core::Value;
use parsched_core::{ConfigError, PolicyError, ProcId, Time};
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::time::Instant;

mod audit;
mod build;
mod config;
mod fast;
mod keys;
mod model;
pub use model::MODEL;
mod machine;
mod periodic;
mod result;
#[cfg(test)]
mod tests;

pub use config::{
    harmonic_number, human_ms, tw_per_unit_var, Competitors, ComputeDist, RunEstimate, SyncConfig,
    SyncSched, WaitStrategy, Wakeup, DEFAULT_MAX_EVENTS, MAX_RUN_MS, MAX_TIME_MS,
};
use fast::draw;
pub use keys::{keys, SCHEMA};
use result::log_bins;
pub use result::SyncResult;

const NONE: u32 = u32::MAX;

/// What one tick of the barrier machine is: 1 ns (times are in ms,
/// [`TICKS_PER_UNIT`] ticks each).
pub const TICK: TickUnit = TickUnit::Nanosecond;

/// The iteration-time histogram's range: 1 tick to 10^13 ticks (10^7 ms);
/// longer iterations count in its top bucket (the exact maximum is kept).
const ITER_HIST_MAX_TICKS: u64 = 10_000_000_000_000;

/// Most iterations in one fast-path batch (bounds the memory of a batch
/// whatever the grain; any cut gives the same results).
pub const MAX_BATCH: u64 = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Skew,
    Measured,
    Same,
    Compute,
}

impl Kind {
    /// As errors name it.
    fn name(self) -> &'static str {
        match self {
            Kind::Skew => "skew",
            Kind::Measured => "measured",
            Kind::Same | Kind::Compute => "competitor",
        }
    }
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
    /// Voluntary switches of the gang's threads (blocks and yields), for
    /// the coscheduling classifier (counted per gang, not only globally).
    voluntary: u64,
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

struct Proc<L> {
    thread: u32,
    last: u32,
    /// The next dispatch is free (a block already paid for the switch).
    free_switch: bool,
    /// Start of the current accounting segment of the running thread.
    seg_start: Time,
    /// The processor is in switch/blocking overhead until then.
    busy_until: Time,
    /// Fires `SegmentEnded` for the running thread's activity; restarting
    /// or ending the activity cancels it.
    seg_timer: Timer,
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
    /// The processor's local scheduler (round robin with quantum τq).
    queue: L,
}

/// Events of the sync machine.
#[derive(Debug, Clone, Copy)]
pub enum SyncEv {
    /// The running thread's current activity (compute, two-phase spin) ends.
    SegmentEnded { p: u32 },
    /// Quantum expiry on one processor (local scheduling).
    QuantumExpired { p: u32 },
    /// Global slot switch (gang scheduling).
    SlotEnded,
    /// The end of a gang's fast-path batch of iterations.
    BatchCommitted { g: u32 },
    /// A two-phase spinner on `p` may have used up its spin budget.
    SpinExpired { p: u32 },
}

/// The machine's parameters, in ticks (fixed for a run).
struct Params {
    sched: SyncSched,
    /// Quantum τq.
    tq: u64,
    /// Context switch τcs.
    tcs: u64,
    /// Blocking's cost α·τcs.
    block_cost: u64,
    /// Two-phase spin limit.
    spin_limit: u64,
    /// The measured gang's iterations.
    k: u64,
    audit: bool,
    fast: bool,
    /// Busy waiting (nothing ever blocks): once the skewing threads are gone
    /// the schedule is periodic and the rest of the run is solved without
    /// events (see `run_periodic`).
    periodic: bool,
}

/// Gang scheduling's current slot.
struct SlotState {
    /// Fires `SlotEnded`; an early switch re-arms it for now.
    timer: Timer,
    start: Time,
    /// Empty cells of the current slot (counted as fragmentation).
    free: u32,
    end: Time,
}

/// Totals of a run (ticks, or counts).
#[derive(Default)]
struct SyncStats {
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
}

/// The measured gang's iteration times.
struct Measurement {
    /// Its first dispatch.
    start: Option<Time>,
    last_iter: Time,
    /// Iterations per batch mean, and the batch in progress.
    batch_size: u64,
    batch_len: u64,
    batch_sum: f64,
    batches_max: usize,
    batch_means: Vec<f64>,
    iter_hist: Histogram<u64>,
    iter_min: u64,
    iter_max: u64,
    /// The instant of its k-th barrier: the run ends with that instant.
    done: Option<Time>,
}

impl Measurement {
    fn new(cfg: &SyncConfig) -> Measurement {
        Measurement {
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
        }
    }
}

/// The machine of seed 001: its parameters, processors, threads and gangs,
/// the gang scheduler and its slot, the totals and the measured gang's
/// iteration times.
pub struct SyncMachine<L: LocalScheduler = RoundRobin> {
    params: Params,
    procs: Vec<Proc<L>>,
    threads: Vec<Thread>,
    gangs: Vec<Gang>,
    measured: u32,
    /// Gang scheduling's state machine over Ousterhout's matrix (under local
    /// scheduling it only records where each gang's threads are pinned).
    gang: GangScheduler,
    slot: SlotState,
    stats: SyncStats,
    measure: Measurement,
    max_pending: usize,
    /// The cancel flag, looked at every few thousand solver steps (the
    /// event loop watches it through `run_watched`).
    watch: crate::cancel::Watch,
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
pub fn run(cfg: &SyncConfig, opts: SyncOptions) -> Result<SyncResult, RunError> {
    run_with(cfg, opts, None)
}

/// Runs one configuration, each gang's slot chosen by `gang_place` if given
/// (else the matrix's first fit: [`run`]). The chooser is asked once per
/// gang, at build time, in the order skew, measured, competitors; a bad
/// answer or `None` is a [`PolicyError`] naming the gang.
pub fn run_with(
    cfg: &SyncConfig,
    opts: SyncOptions,
    gang_place: Option<&mut dyn SlotChooser>,
) -> Result<SyncResult, RunError> {
    let wall = Instant::now();
    let capacity = cfg.l as usize + 2;
    let rr = |_| RoundRobin::with_capacity(ticks(cfg.tq), cfg.wakeup, capacity);
    let mut m = match gang_place {
        None => SyncMachine::new(cfg, opts)?,
        Some(c) => SyncMachine::with_slot_chooser(cfg, opts, rr, c)?,
    };
    let mut eng = Engine::new();
    let end = m.run(&mut eng)?;
    let start = m.measure.start.unwrap_or(Time::ZERO);
    let iterations = m.gangs[m.measured as usize].iterations;
    let total = ticks_to_units(end - start);
    let (_, half) = mean_ci90(&m.measure.batch_means);
    let p = m.procs.len() as f64;
    let end_u = end.as_units();
    // Histogram quantiles, kept within the exact extremes.
    let quantile = |q: f64| {
        ticks_to_units(m.measure.iter_hist.value_at_quantile(q).clamp(
            m.measure.iter_min.min(m.measure.iter_max),
            m.measure.iter_max,
        ))
    };
    Ok(SyncResult {
        time_per_iter: total / iterations as f64,
        ci90_half_width: half,
        batch_means: m.measure.batch_means.clone(),
        iteration_min: ticks_to_units(m.measure.iter_min),
        iteration_p10: quantile(0.10),
        iteration_p50: quantile(0.50),
        iteration_p90: quantile(0.90),
        iteration_p99: quantile(0.99),
        iteration_max: ticks_to_units(m.measure.iter_max),
        iteration_histogram: log_bins(&m.measure.iter_hist),
        start: start.as_units(),
        end: end_u,
        iterations,
        useful_utilization: ticks_to_units(m.stats.useful) / (p * end_u),
        useful_time: ticks_to_units(m.stats.useful),
        busy_wait_time: ticks_to_units(m.stats.spin),
        measured_busy_wait_time: ticks_to_units(m.stats.measured_spin),
        overhead_time: ticks_to_units(m.stats.overhead),
        context_switches: m.stats.context_switches,
        blocking_events: m.stats.blocking_events,
        yields: m.stats.yields,
        alpha_measured: (m.stats.yield_waits > 0)
            .then(|| m.stats.yields as f64 / m.stats.yield_waits as f64),
        preemptions: m.stats.preemptions,
        slot_switches: m.stats.slot_switches,
        fragmentation: if m.stats.frag_total == 0 {
            0.0
        } else {
            m.stats.frag_idle as f64 / m.stats.frag_total as f64
        },
        gang_iterations: m.stats.gang_iterations,
        events: eng.processed(),
        max_pending: m.max_pending,
        t_p: cfg.t_p(),
        t_w: cfg.t_w(),
        wall_seconds: wall.elapsed().as_secs_f64(),
    })
}
