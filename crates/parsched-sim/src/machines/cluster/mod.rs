//! Seed 003's network of workstations: message-passing jobs on nodes whose
//! local schedulers (Solaris time-sharing by default) run independently,
//! guided towards coscheduling by the ten schemes of the paper's Table 1
//! (`parsched_core::policy::cosched`), with explicit gang scheduling and
//! batch FCFS as references.
//!
//! * [`config`]: the typed model ([`ClusterConfig`]) and the nine workloads;
//!   `keys.rs` its schema (the node costs from [`super::node_costs`]).
//! * [`apps`]: the applications (LIFE(3.5), LIFE(12), MG, LU, EP) as
//!   programs of compute, send and receive steps.
//! * [`calibrate`]: their sizes, a [`calibrate::Calibration`] value computed
//!   once per run where its jobs are planned (`config` imports `calibrate`,
//!   which imports `apps`: no circle, no global cache).
//! * `machine`: the simulated cluster on the shared engine (seed 002's
//!   desktop, [`super::desktop`], lowers onto it; nothing here imports it).
//! * [`run`]: replications, the metrics of §3 and 90% confidence intervals.

use parsched_core::time::TickUnit;

/// One engine tick of the cluster machine (seeds 002 and 003): 1 ns;
/// results are reported in seconds.
pub const TICK: TickUnit = TickUnit::Nanosecond;

/// Ticks per second of the cluster machine.
pub(crate) const TICKS_PER_S: u64 = match TICK.per_second() {
    Some(n) => n,
    None => panic!("the cluster machine's tick is a physical unit"),
};

pub mod apps;
pub mod calibrate;
pub mod config;
mod keys;
mod model;
pub use model::MODEL;
pub(crate) use model::{model_error, model_options};
mod machine;
#[cfg(test)]
mod tests;

pub use apps::{AppKind, AppModel};
pub use config::{BoostQueue, ClusterConfig, LocalKind, PendingRule, WORKLOADS};
pub use keys::{keys, SCHEMA};
pub use machine::{ClusterError, Counters};

use crate::engine::{run_watched, Engine};
use crate::rng::rep_seed;
use crate::stats::mean_ci90;
use config::JobPlan;
use machine::{ClusterMachine, Hooked};
use parsched_core::policy::cosched::{BoostChooser, CoschedScheme};
use serde::Serialize;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// Per-job CPU shares over time at the probed node (the fairness timelines
/// of the paper's Figures 2–3).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timeline {
    /// End of each probe interval (s).
    pub time_s: Vec<f64>,
    /// `share[i][j]`: job j's share of the node's processors in interval i.
    pub share: Vec<Vec<f64>>,
}

/// One replication.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusterRun {
    pub seed: u64,
    /// Time 0 (the launch; processes start within `start_skew_ms` of it)
    /// to the last job's finish (s).
    pub completion_time: f64,
    /// Each job's finish time from time 0 (s), in the workload's order.
    pub job_completion_times: Vec<f64>,
    pub mean_job_time: f64,
    /// Sample standard deviation over mean of the job completion times.
    pub cv: f64,
    /// (completion_time − ideal) / ideal, ideal = jobs × alone_s × scale.
    pub slowdown: f64,
    /// Each job's share of its run spent in sends and receives.
    pub comm_share: Vec<f64>,
    /// Processor time spent spinning in receives, over all nodes (s).
    pub spin_time: f64,
    /// Mean one-way latency of the messages (µs): send posted to message
    /// taken by a polling receiver (includes the wire time of large
    /// messages and waiting for the sender's link).
    pub latency_us: f64,
    /// The same over small messages (<= 64 bytes): the paper's 32 µs.
    pub small_latency_us: f64,
    pub context_switches: u64,
    pub interrupts: u64,
    pub boosts: u64,
    /// Boosts refused by `boost_cap`.
    pub boosts_capped: u64,
    pub wakeups: u64,
    pub lost_wakeups: u64,
    pub blocks: u64,
    pub yields: u64,
    pub messages: u64,
    pub slot_switches: u64,
    pub events: u64,
    pub wall_seconds: f64,
    pub timeline: Timeline,
    /// Broken invariants seen by the audit: always 0 in a returned run
    /// (with `ClusterOptions::audit`, any failure is [`ClusterError::Audit`]).
    #[serde(skip)]
    pub audit_failures: u64,
    /// Messages taken out of their sending order (0 in a returned run).
    #[serde(skip)]
    pub order_violations: u64,
    #[serde(skip)]
    pub messages_received: u64,
    /// Flexible coscheduling's class changes: (s, job, class).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<(f64, u32, String)>,
    /// FCS with [`ClusterOptions::fcs_log`]: every input the machine gave
    /// the core policy and every decision it took
    /// (`parsched_core::policy::fcs::Fcs::log`).
    #[serde(skip)]
    pub fcs_log: Vec<parsched_core::policy::fcs::Step>,
}

/// A configuration's replications and their summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusterResult {
    pub scheme: String,
    pub jobs: Vec<String>,
    /// Means over replications.
    pub completion_time: f64,
    pub completion_time_ci90: f64,
    pub job_completion_times: Vec<f64>,
    pub mean_job_time: f64,
    pub cv: f64,
    pub slowdown: f64,
    pub ideal: f64,
    pub runs: Vec<ClusterRun>,
}

/// Options that do not change results.
#[derive(Debug, Clone, Default)]
pub struct ClusterOptions {
    /// Threads for replications.
    pub workers: usize,
    /// Check the machine's invariants after every event (slow).
    pub audit: bool,
    /// Set to stop the run ([`ClusterError::Interrupted`]): watched as every
    /// machine watches its flag ([`crate::cancel`], every
    /// [`crate::cancel::CHECK_EVERY`] events). `None`: the flag of
    /// [`crate::cancel::with_cancel`], if one is in force.
    pub cancel: Option<Arc<AtomicBool>>,
    /// FCS: record the core policy's inputs and decisions
    /// ([`ClusterRun::fcs_log`]).
    pub fcs_log: bool,
}

fn sample_cv(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt() / mean)
}

/// Runs one replication with `seed`.
pub fn run_once(
    cfg: &ClusterConfig,
    seed: u64,
    opts: &ClusterOptions,
) -> Result<ClusterRun, ClusterError> {
    run_once_with(cfg, seed, opts, None)
}

/// [`run_once`] with the periodic boost's target chosen by `boost` when
/// given (see [`run_with_boost`]).
pub fn run_once_with(
    cfg: &ClusterConfig,
    seed: u64,
    opts: &ClusterOptions,
    boost: Option<&mut dyn BoostChooser>,
) -> Result<ClusterRun, ClusterError> {
    cfg.validate()?;
    run_planned(cfg, &cfg.plans(), seed, opts, boost)
}

/// One replication of `cfg` running `plans` ([`ClusterConfig::plans`], planned
/// once per run), under `opts.cancel` if given.
fn run_planned(
    cfg: &ClusterConfig,
    plans: &[JobPlan],
    seed: u64,
    opts: &ClusterOptions,
    boost: Option<&mut dyn BoostChooser>,
) -> Result<ClusterRun, ClusterError> {
    match &opts.cancel {
        Some(flag) => crate::cancel::with_cancel(flag, || run_one(cfg, plans, seed, opts, boost)),
        None => run_one(cfg, plans, seed, opts, boost),
    }
}

/// [`run_planned`] under the thread's cancel flag.
fn run_one(
    cfg: &ClusterConfig,
    plans: &[JobPlan],
    seed: u64,
    opts: &ClusterOptions,
    boost: Option<&mut dyn BoostChooser>,
) -> Result<ClusterRun, ClusterError> {
    let wall = Instant::now();
    let mut eng = Engine::new();
    let mut m = ClusterMachine::new(cfg, plans, seed, opts.audit, &mut eng)?;
    if let (true, Some(f)) = (opts.fcs_log, m.global.fcs_mut()) {
        f.policy.record();
    }
    let stop = || ClusterError::Interrupted;
    match boost {
        None => run_watched(&mut m, &mut eng, stop)?,
        Some(boost) => run_watched(&mut Hooked { m: &mut m, boost }, &mut eng, stop)?,
    };
    if m.counters.audit_failures > 0 || m.counters.order_violations > 0 {
        return Err(ClusterError::Audit {
            failures: m.counters.audit_failures,
            order_violations: m.counters.order_violations,
        });
    }
    let s = |ns: u64| ns as f64 * 1e-9;
    let jobs: Vec<f64> = m.job_finish.iter().map(|f| s(f.unwrap_or(m.end))).collect();
    let (mean, cv) = sample_cv(&jobs);
    let completion = s(m.end);
    let ideal = cfg.ideal_s();
    let mut comm = vec![0u64; jobs.len()];
    let mut width = vec![0u64; jobs.len()];
    let mut spin = 0;
    for p in &m.procs {
        spin += p.spin_ns;
        if (p.job as usize) < jobs.len() {
            comm[p.job as usize] += p.comm_ns;
            width[p.job as usize] += 1;
        }
    }
    let comm_share = (0..jobs.len())
        .map(|j| s(comm[j]) / (width[j].max(1) as f64 * jobs[j]))
        .collect();
    let cpus = cfg.cpus_per_node as f64;
    let mut prev = 0u64;
    let mut timeline = Timeline {
        time_s: Vec::new(),
        share: Vec::new(),
    };
    for (t, row) in &m.probe_rows {
        let span = (t - prev).max(1) as f64 * cpus;
        prev = *t;
        timeline.time_s.push(s(*t));
        timeline
            .share
            .push(row.iter().map(|&x| x as f64 / span).collect());
    }
    let c = &m.counters;
    Ok(ClusterRun {
        seed,
        completion_time: completion,
        job_completion_times: jobs,
        mean_job_time: mean,
        cv,
        slowdown: (completion - ideal) / ideal,
        comm_share,
        spin_time: s(spin),
        latency_us: if c.latency_count == 0 {
            f64::NAN
        } else {
            c.latency_ns_sum as f64 / c.latency_count as f64 * 1e-3
        },
        small_latency_us: if c.small_latency_count == 0 {
            f64::NAN
        } else {
            c.small_latency_ns_sum as f64 / c.small_latency_count as f64 * 1e-3
        },
        context_switches: c.context_switches,
        interrupts: c.interrupts,
        boosts: c.boosts,
        boosts_capped: c.boosts_capped,
        wakeups: c.wakeups,
        lost_wakeups: c.lost_wakeups,
        blocks: c.blocks,
        yields: c.yields,
        messages: c.messages_sent,
        slot_switches: c.slot_switches,
        events: eng.processed(),
        wall_seconds: wall.elapsed().as_secs_f64(),
        timeline,
        audit_failures: c.audit_failures,
        order_violations: c.order_violations,
        messages_received: c.messages_received,
        classes: m
            .global
            .fcs()
            .map(|f| {
                f.changes
                    .iter()
                    .map(|&(t, j, c)| (t, j, c.short_name().to_string()))
                    .collect()
            })
            .unwrap_or_default(),
        fcs_log: m
            .global
            .fcs()
            .map(|f| f.policy.log().to_vec())
            .unwrap_or_default(),
    })
}

/// Runs `cfg.reps` replications (seeds derived from `cfg.seed`), on
/// `opts.workers` threads; results do not depend on the number of workers.
pub fn run(cfg: &ClusterConfig, opts: &ClusterOptions) -> Result<ClusterResult, ClusterError> {
    cfg.validate()?;
    let plans = &cfg.plans();
    let reps = cfg.reps as usize;
    let workers = opts.workers.clamp(1, reps);
    let seeds: Vec<u64> = (0..reps as u64).map(|r| rep_seed(cfg.seed, r)).collect();
    let mut slots: Vec<Option<Result<ClusterRun, ClusterError>>> = vec![None; reps];
    // The replications' threads watch the caller's flag.
    let flag = opts.cancel.clone().or_else(crate::cancel::current);
    let opts = &ClusterOptions {
        cancel: flag,
        ..opts.clone()
    };
    let progress = crate::cancel::current_progress();
    let progress = &progress;
    std::thread::scope(|scope| {
        let chunks: Vec<_> = slots.chunks_mut(reps.div_ceil(workers)).collect();
        let mut start = 0;
        for chunk in chunks {
            let n = chunk.len();
            let seeds = &seeds[start..start + n];
            start += n;
            scope.spawn(move || {
                crate::cancel::inherit(&None, progress, || {
                    for (slot, &seed) in chunk.iter_mut().zip(seeds) {
                        *slot = Some(run_planned(cfg, plans, seed, opts, None));
                    }
                })
            });
        }
    });
    let runs: Vec<ClusterRun> = slots
        .into_iter()
        .map(|r| r.expect("every replication ran"))
        .collect::<Result<_, _>>()?;
    Ok(summarize(cfg, runs))
}

/// [`run`] with each node's periodic boost target chosen by `boost` (a rule
/// written outside the core, every answer checked by the core): the
/// replications run one after another on this thread (`opts.workers` is not
/// used). Only for a scheme with a periodic boost (PB, PBT and their
/// combinations); any other is a [`ConfigError`](parsched_core::ConfigError)
/// naming `boost`.
pub fn run_with_boost(
    cfg: &ClusterConfig,
    opts: &ClusterOptions,
    boost: &mut dyn BoostChooser,
) -> Result<ClusterResult, ClusterError> {
    cfg.validate()?;
    if !matches!(cfg.scheme, CoschedScheme::Dynamic(s) if s.has_periodic_boost()) {
        return Err(parsched_core::ConfigError::new(
            "boost",
            format!("scheme {} has no periodic boost to choose for", cfg.scheme),
            "a scheme with a periodic boost: PB, PBT, PB-SB, PB-SY, PBT-SB, PBT-SY",
        )
        .into());
    }
    let opts = &ClusterOptions {
        cancel: opts.cancel.clone().or_else(crate::cancel::current),
        ..opts.clone()
    };
    let plans = &cfg.plans();
    let runs = (0..cfg.reps as u64)
        .map(|r| run_planned(cfg, plans, rep_seed(cfg.seed, r), opts, Some(&mut *boost)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(summarize(cfg, runs))
}

/// The summary of a configuration's replications.
fn summarize(cfg: &ClusterConfig, runs: Vec<ClusterRun>) -> ClusterResult {
    let reps = runs.len();
    let completions: Vec<f64> = runs.iter().map(|r| r.completion_time).collect();
    let (completion, half) = mean_ci90(&completions);
    let njobs = runs[0].job_completion_times.len();
    let job_means: Vec<f64> = (0..njobs)
        .map(|j| runs.iter().map(|r| r.job_completion_times[j]).sum::<f64>() / reps as f64)
        .collect();
    let avg = |f: fn(&ClusterRun) -> f64| runs.iter().map(f).sum::<f64>() / reps as f64;
    let ideal = cfg.ideal_s();
    ClusterResult {
        scheme: cfg.scheme.name().to_string(),
        jobs: cfg.job_names(),
        completion_time: completion,
        completion_time_ci90: if reps > 1 { half } else { f64::NAN },
        job_completion_times: job_means,
        mean_job_time: avg(|r| r.mean_job_time),
        cv: avg(|r| r.cv),
        slowdown: (completion - ideal) / ideal,
        ideal,
        runs,
    }
}
