//! The keys of [`PoolsConfig`]: its declarative
//! schema ([`parsched_core::schema`]), from which `set`, the per-key checks of
//! `validate`, [`keys`], the Python `PoolsConfig` class, the command line's
//! key list and the `[pools]` key table of `docs/formats/config-toml.md` all
//! come. Symbols are Zhou & Brecht's (SIGMETRICS 1991, seed 000); defaults
//! are `PoolsConfig::default()`, the paper's Table 2.

use super::machine::{Combine, SwitchCost};
use super::{CiMethod, ParallelismMode, PoolsConfig, SpanningMode};
use crate::workloads::forkjoin::WorkloadKind;
use parsched_core::choices;
use parsched_core::field;
use parsched_core::policy::pools::{Rounding, TieBreak};
use parsched_core::schema::{Field, Kind, Schema, U32, U64};

choices!(SpanningMode {
    None => "none",
    Limited => "limited",
    Unlimited => "unlimited",
});
choices!(ParallelismMode {
    Restricted => "restricted",
    Unrestricted => "unrestricted",
});
choices!(CiMethod {
    Auto => "auto",
    Replications => "replications",
    BatchMeans => "batch_means",
});
choices!(Combine {
    Add => "add",
    Multiply => "multiply",
});
choices!(SwitchCost {
    EveryDispatch => "every_dispatch",
    PreemptionOnly => "preemption_only",
});
choices!(WorkloadKind {
    Correlated => "correlated",
    Uncorrelated => "uncorrelated",
});

type C = PoolsConfig;

static FIELDS: &[Field<C>] = &[
    field!(C, "P", procs: u32, Kind::int_min(1, U32), "processors", "P", "Table 2",
        "number of processors in the system (Table 2: 60)"),
    field!(C, "L", load: f64, Kind::float_range(0.0, false, 1.0, false), "", "L", "Table 2",
        "system load level: processor utilization without overheads (Table 2: 60%); sets the \
         Poisson arrival rate P·L / (init + para_unit·D + final)"),
    field!(C, "D", mean_parallelism: f64, Kind::FLOAT, "threads", "D", "sec. 2",
        "average desired parallelism; d is bounded-geometric with mean D and upper bound P, \
         1 <= D < (P+1)/2 (Table 2: 20)"),
    field!(C, "T", slice: f64, Kind::POSITIVE, "time units", "T", "sec. 3.1",
        "round-robin time slice (Table 2: 10)"),
    field!(C, "F", f: f64, Kind::NONNEG, "", "F", "sec. 3.2",
        "level control for the degree of pool spanning: f(d) = clamp(round(F·d/p), 1, P/p) \
         candidate pools (Table 2: 0.8)"),
    field!(C, "G", g: f64, Kind::float_range(0.0, true, 1.0, true), "", "G", "sec. 3.2",
        "level control for actual parallelism: a = min(d, max(p_idle, G·d, 1)) (Table 2: 0.5)"),
    field!(C, "p0", overheads.p0: u32, Kind::int(U32), "processors", "p_0", "sec. 3.3",
        "pool size threshold at or below which in-pool and run-queue overheads vanish \
         (Table 2: 10)"),
    field!(C, "t", overheads.t: f64, Kind::NONNEG, "", "t", "sec. 3.3",
        "fraction of the cache loading cost c charged when the next thread is from the same \
         job (Table 2: 0.25)"),
    field!(C, "W", overheads.w: f64, Kind::NONNEG, "", "W", "sec. 3.3",
        "in-pool overhead factor: threads in pools of p > p_0 processors need \
         (1 + W·(p - p_0)) times their CPU demand (Table 2: 0.5%)"),
    field!(C, "S", overheads.s: f64, Kind::NONNEG, "", "S", "sec. 3.3",
        "pool-spanning overhead factor: a job spanning k pools of p processors is inflated \
         by S·(k-1)·p (Table 2: 1.0%)"),
    field!(C, "r", overheads.r: f64, Kind::NONNEG, "time units", "r", "sec. 3.3",
        "run-queue contention overhead: r·(p - p_0) per context switch when p > p_0 \
         (Table 2: 0.003)"),
    field!(C, "c", overheads.c: f64, Kind::NONNEG, "time units", "c", "sec. 3.3",
        "cache loading overhead per context switch to another job's thread, t·c within a \
         job (Table 2: 0.005)"),
    field!(C, "pool_size", pool_size: u32, Kind::int_min(1, U32), "processors", "p", "sec. 3.1",
        "processors per pool; must divide P"),
    field!(C, "spanning", spanning: choice, Kind::choice::<SpanningMode>(), "", "", "sec. 3.2",
        "pool spanning algorithm: none, limited (uses F), unlimited"),
    field!(C, "parallelism", parallelism: choice, Kind::choice::<ParallelismMode>(), "",
        "", "sec. 3.2", "restricted (a uses G and p_idle) or unrestricted (a = d) parallelism"),
    field!(C, "jobs", jobs: u64, Kind::int(U64), "jobs", "", "",
        "jobs simulated per replication, warmup included (at least 1)"),
    field!(C, "warmup", warmup: u64, Kind::int(U64), "jobs", "", "",
        "jobs discarded at the start of each replication (fewer than jobs)"),
    field!(C, "reps", reps: u32, Kind::int_min(1, U32), "", "", "",
        "independent replications (90% CI across replication means)"),
    field!(C, "seed", seed: u64, Kind::int(U64), "", "", "",
        "base random seed; replication i uses a stream derived from it"),
    field!(C, "workload", workload: choice, Kind::choice::<WorkloadKind>(), "", "", "sec. 2, 4.6",
        "correlated: PARA demand grows with d (sec. 2); uncorrelated: demand independent of \
         d (sec. 4.6)"),
    field!(C, "init", init: f64, Kind::NONNEG, "time units", "", "sec. 2",
        "CPU demand of the INIT phase (sec. 2: 10)"),
    field!(C, "final", final_: f64, Kind::NONNEG, "time units", "", "sec. 2",
        "CPU demand of the FINAL phase (sec. 2: 10)"),
    field!(C, "para_unit", para_unit: f64, Kind::NONNEG, "time units", "", "sec. 2",
        "mean PARA demand per desired thread; thread demand ~ U(para_unit·d/a ± spread) \
         (sec. 2: 100)"),
    field!(C, "spread", spread: f64, Kind::NONNEG, "time units", "", "sec. 2",
        "half-width of the uniform thread demand (sec. 2: 10)"),
    field!(C, "combine", overheads.combine: choice, Kind::choice::<Combine>(), "", "", "sec. 3.3",
        "how the in-pool factor w and spanning factor s inflate demand: (1+w+s) or \
         (1+w)(1+s) (the paper does not say)"),
    field!(C, "switch_cost", overheads.switch_cost: choice, Kind::choice::<SwitchCost>(), "",
        "", "sec. 3.3",
        "when run-queue and cache overheads are charged: on every dispatch of a thread to a \
         processor, or only on preemptions at time-slice end"),
    field!(C, "f_rounding", f_rounding: choice, Kind::choice::<Rounding>(), "", "", "sec. 3.2",
        "rounding of F·d/p (the paper writes round)"),
    field!(C, "g_rounding", g_rounding: choice, Kind::choice::<Rounding>(), "", "", "sec. 3.2",
        "rounding of G·d (the paper does not say)"),
    field!(C, "tie_break", tie_break: choice, Kind::choice::<TieBreak>(), "", "", "",
        "order of equally loaded pools (the paper does not say)"),
    field!(C, "inflate_master", overheads.inflate_master: bool, Kind::Bool, "", "", "sec. 3.3",
        "also inflate the master thread's INIT and FINAL phases by the pool overheads (the \
         paper inflates the parallel threads only)"),
    field!(C, "ci", ci: choice, Kind::choice::<CiMethod>(), "", "", "",
        "confidence interval method: across replications, batch means within them, or auto \
         (replications when reps >= 2, batch means when reps == 1)"),
    field!(C, "max_events", max_events: u64, Kind::int(U64), "events", "", "",
        "a run whose estimated cost is above this is refused before it starts (an upper \
         estimate over all replications, in events: per job a few per thread and one per \
         time slice T of its work inflated by the overheads, plus the placement's scans of \
         the pools); 0: no limit"),
];

/// The schema of [`PoolsConfig`].
pub static SCHEMA: Schema<PoolsConfig> = Schema {
    model: "pools",
    fields: FIELDS,
};

/// Every key [`PoolsConfig::set`] accepts, in documentation order.
pub fn keys() -> Vec<&'static str> {
    SCHEMA.keys()
}
