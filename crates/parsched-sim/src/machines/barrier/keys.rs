//! The keys of [`SyncConfig`] (the `barrier` model): its declarative schema
//! ([`parsched_core::schema`]), from which `set`, the per-key checks of
//! `validate`, [`keys`], the Python `BarrierConfig` class, the command line's
//! key list and the `[barrier]` key table of `docs/formats/config-toml.md`
//! come. Symbols are Feitelson & Rudolph's (1992, seed 001); times in ms.

use super::config::{Competitors, ComputeDist, SyncConfig, SyncSched, MAX_TIME_MS};
use parsched_core::policy::local::Wakeup;
use parsched_core::policy::wait::WaitStrategy;
use parsched_core::schema::{End, Field, Kind, Schema, U32, U64};
use parsched_core::{choices, field};

choices!(SyncSched {
    Local => "local",
    Gang => "gang",
});
choices!(Competitors {
    Same => "same",
    Compute => "compute",
});
choices!(ComputeDist {
    Uniform => "uniform",
    Exponential => "exponential",
    Empirical => "empirical",
});

type C = SyncConfig;
/// A time: 0 ..= 10^9 ms (the clock counts ns in 64 bits).
const TIME: Kind = Kind::float_range(0.0, true, MAX_TIME_MS, true);

static FIELDS: &[Field<C>] = &[
    field!(C, "n", n: u32, Kind::int_min(1, U32), "threads", "n", "",
        "gang size: threads of the measured gang, one per processor")
    .worded("a gang of {} threads", "n >= 1"),
    field!(C, "l", l: u32, Kind::int_min(1, U32), "threads", "ℓ", "LOAD in §3.3",
        "threads per processor: the measured gang plus ℓ−1 competitors")
    .worded("{} threads per processor", "l >= 1"),
    field!(C, "P", procs: opt_u32, Kind::int_min(1, U32), "processors", "P", "",
        "processors; unset means P = n (n <= P required)")
    .worded("{} processors", "P >= 1"),
    field!(C, "k", k: u64, Kind::int_min(1, U64), "iterations", "k", "",
        "iterations of the measured gang")
    .worded("{} iterations", "k >= 1"),
    field!(C, "grain", grain: f64, TIME, "ms", "GRAIN", "eq. 14",
        "minimal compute per iteration (eq. 14: 0.00141·GRAIN)"),
    field!(C, "var", var: f64, TIME, "ms", "VAR", "eq. 14",
        "spread of the compute per iteration: U(grain, grain+var) or grain + Exp(mean var) \
         (eq. 14: 0.00141·VAR)"),
    field!(C, "dist", dist: choice, Kind::choice::<ComputeDist>(), "", "", "§3.3",
        "per-iteration compute beyond grain + barrier_cost: uniform U(0, var) (§3.3's \
         GRAIN/VAR; t_w <= (n−1)/(n+1)·t_p), exponential Exp(mean var) (t_w = var·(H_n − 1) \
         can exceed t_p: Figure 9's blocking region), or empirical: barrier_cost + one of \
         `samples`, each equally likely (grain and var unused)"),
    field!(C, "samples", samples: list, Kind::List {
            min: Some(End { value: 0.0, closed: true }),
            max: Some(End { value: MAX_TIME_MS, closed: true }),
        }, "ms", "", "",
        "dist = empirical: compute times drawn with equal probability (a list in TOML, \
         `--set samples=0.1,0.3,2` or `--set samples=@FILE` on the command line)"),
    field!(C, "barrier_cost", barrier_cost: f64, TIME, "ms", "", "§2.1, §3.3",
        "barrier cost added to every compute (§3.3: 0.137 ms on 10 processors)"),
    field!(C, "tq", tq: f64, Kind::float_range(0.0, false, MAX_TIME_MS, true), "ms", "τq", "§3.3",
        "scheduling time quantum (§3.3: 50)")
    .worded("{} is not a positive quantum", "a finite number > 0"),
    field!(C, "tcs", tcs: f64, TIME, "ms", "τcs", "Table 1",
        "context-switch cost; must be < τq (gang library 0.2, default library 0.07 + 0.14/ℓ)"),
    field!(C, "alpha", alpha: f64, Kind::float_range(0.0, true, 1e6, true), "", "α", "§4",
        "blocking costs α·τcs of processor time (§4: 1.5)"),
    field!(C, "wait", wait: choice, Kind::choice::<WaitStrategy>(), "", "", "§3.3",
        "waiting at the barrier: busy (spin), block (give up the processor, α·τcs), twophase \
         (spin up to spin_limit, then block) or yield (Makbilan's: to the tail of the run \
         queue, τcs per yield, again each time it runs while the barrier is closed)"),
    field!(C, "spin_limit", spin_limit: f64, TIME, "ms", "", "",
        "two-phase: processor time spent spinning before blocking"),
    field!(C, "wakeup", wakeup: choice, Kind::choice::<Wakeup>(), "", "", "eq. 13, §2.2",
        "where a released blocked thread is queued: tail (rigid round robin, eq. 13) or \
         priority (head of its processor's queue, no preemption: §2.2's smart scheduler)"),
    field!(C, "sched", sched: choice, Kind::choice::<SyncSched>(), "", "", "§3.2",
        "gang (Ousterhout matrix) or local (uncoordinated per-processor round robin)"),
    field!(C, "competitors", competitors: choice, Kind::choice::<Competitors>(), "", "", "§2.1",
        "the other ℓ−1 threads per processor: same (identical iterative gangs) or compute \
         (independent compute-bound threads, grouped in gangs of P)"),
    field!(C, "skew", skew: bool, Kind::Bool, "", "", "§3.3",
        "start with skewing threads, U(0, τq) each, so processors start asynchronously"),
    field!(C, "shuffle", shuffle: bool, Kind::Bool, "", "", "eq. 8",
        "local scheduling: random initial run-queue order per processor (eq. 8 assumes quanta \
         at random places in the round)"),
    field!(C, "batches", batches: u32, Kind::int_min(1, U32), "", "", "",
        "batches for the batch-means 90% confidence interval")
    .worded("{} batches", "batches >= 1"),
    field!(C, "seed", seed: u64, Kind::int(U64), "", "", "", "random seed"),
    field!(C, "max_events", max_events: u64, Kind::int(U64), "events", "", "",
        "a run whose estimated event count is above this is refused before it starts (an \
         upper bound from k, n, l, P, the compute times and the quantum); 0: no limit. The \
         whole run is bounded too: <= 1e12 ms"),
];

/// The schema of [`SyncConfig`].
pub static SCHEMA: Schema<SyncConfig> = Schema {
    model: "barrier",
    fields: FIELDS,
};

/// Every key [`SyncConfig::set`] accepts, in documentation order.
pub fn keys() -> Vec<&'static str> {
    SCHEMA.keys()
}
