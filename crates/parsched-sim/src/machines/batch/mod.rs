//! The batch machine: rigid jobs from a workload trace on `procs` processors,
//! space-shared by a batch policy (FCFS, EASY or conservative backfilling,
//! from `parsched_core::policy::batch`) or gang-scheduled on Ousterhout's
//! matrix (`parsched_core::policy::gang::GangMatrix`, driven by
//! `parsched_core::policy::gang_sched::GangScheduler`) with a bounded
//! multiprogramming level and backfilling into free slot space.
//!
//! The parts: [`config`] (the configuration and its keys), [`result`] (the
//! schedule, its metrics and exports), [`space`] (the space-sharing model),
//! [`gang`] (the gang-scheduling model); this module loads and prepares
//! traces and runs them. Both machines are [`Model`]s
//! on the one [`Engine`].
//!
//! # Events and their order at equal times
//!
//! The machine has two kinds of events, `JobFinished` and `JobSubmitted`
//! (plus, under gang scheduling, `SlotEnded`, the end of a slot's quantum).
//! Submissions are lazy: one is pending at a time, and handling it schedules
//! the next. At one timestamp `t` the events only record what happened; when
//! the last event of the instant has been handled (the engine has no other
//! live event at `t`), the instant is closed in this order:
//!
//! 1. every job finishing at `t` (ascending job index — the position in the
//!    submit-time-sorted job list) releases its processors;
//! 2. every job submitted at `t` joins the queue (in trace order);
//! 3. one scheduling pass: the policy sees the queue and the free processors
//!    and starts jobs.
//!
//! A job started at `t` with run time 0 finishes at `t`: its `JobFinished`
//! is an event at `t` scheduled after the pass, so steps 1 and 3 repeat at
//! `t` until nothing more happens. Scheduling passes run only at these
//! events; in particular a running job passing its requested end time is
//! not an event (its expected end, `max(requested end, now + 1)`, is
//! re-evaluated at the next pass). So a job submitted at the very time
//! processors are released can use them, and a job that ends exactly at a
//! reservation's time never delays it. Under gang scheduling the order is:
//! progress of the running slot up to `t`, completions, submissions,
//! admission pass, then the slot switch if the quantum has expired or the
//! running slot is empty.
//!
//! # Time and jobs
//!
//! Time is integer seconds (SWF's resolution). A job runs for its real run
//! time, or — with `kill_on_overrun` — is killed when it reaches its
//! requested time. The policy sees only requested times.
//!
//! # Gang scheduling
//!
//! Each admitted job occupies `procs` cells of one slot of a `GangMatrix`
//! with at most `mpl` slots. The occupied slots run round robin, `quantum`
//! seconds each (a job progresses only while its slot runs; there is no
//! switch overhead). A slot that empties ends its quantum early; with a single
//! occupied slot there are no switches. Admission: queued jobs are examined
//! in arrival order, each placed by the matrix's rule (first fit by default)
//! in any slot with room or a new slot if fewer than `mpl` exist;
//! `gang_backfill = true` lets later jobs take free slot space when an
//! earlier job does not fit, `false` stops at the first job that does not
//! fit. A job's start time is the first time its slot runs. The slot rule may
//! be replaced by a [`SlotChooser`] ([`BatchHook::GangPlace`]: asked once per
//! admission attempt of a job that fits somewhere; its answer checked by the
//! core, a `None` treated as "does not fit").
//!
//! # Metrics
//!
//! Per job: wait = start − submit, response (turnaround) = end − submit,
//! slowdown = response / max(run, 1), bounded slowdown =
//! max(1, response / max(run, τ)) with `run` the executed time and τ =
//! `bsld_tau` (10 s). Aggregate: means, utilization = Σ procs·run /
//! (P·makespan), makespan = last end − first submit, the queue length as a
//! step series and its time average over the makespan.

pub mod config;
pub mod gang;
mod keys;
mod model;
pub use model::MODEL;
pub mod result;
pub mod select;
pub mod space;
mod state;
pub mod stepper;
pub use state::SpaceEvent;

pub use config::{BatchConfig, BatchPolicyKind, TooWide, WorkloadKind};

/// One engine tick of the batch machine: 1 s, the resolution of SWF traces.
pub const TICK: parsched_core::time::TickUnit = parsched_core::time::TickUnit::Second;
pub use gang::{simulate_gang, simulate_gang_placed};
pub use keys::{keys, SCHEMA};
pub use result::{BatchResult, BatchSummary, JobRow, Outcome, JOBS_CSV_COLUMNS};
pub use select::{simulate_select, SelectOptions};
pub use space::{simulate_scored, simulate_with};

use crate::engine::{self, Engine, Model};
use crate::workloads::swf::{self, BatchJob, LoadReport, SwfError, Trace};
use parsched_core::policy::batch::{BatchKind, QueueOrder, QueueScorer};
use parsched_core::policy::gang_place::SlotChooser;
use parsched_core::{ConfigError, PolicyError};
use std::path::Path;
use std::sync::atomic::Ordering;
use thiserror::Error;

/// A batch run failed.
#[derive(Debug, Error)]
pub enum BatchError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Swf(#[from] SwfError),
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// A job list the machine cannot run (unsorted, too wide, no processors).
    #[error("{0}")]
    Input(String),
    /// The run was stopped through the flag given to [`with_cancel`].
    #[error("interrupted")]
    Interrupted,
}

pub use crate::cancel::with_cancel;

/// A decision of the batch machine written outside the core (in Python):
/// one per run, each for the policies it has a meaning for.
pub enum BatchHook<'a> {
    /// The queue order of fcfs, easy and conservative (`priority`).
    Priority(&'a mut dyn QueueScorer),
    /// The slot of each job gang admission places (`gang_place`).
    GangPlace(&'a mut dyn SlotChooser),
}

/// Runs `model` on `engine`, watching this thread's cancel flag
/// ([`with_cancel`]).
pub(crate) fn run_model<M: Model<Error = BatchError>>(
    model: &mut M,
    engine: &mut Engine<M::Event>,
) -> Result<(), BatchError> {
    engine::run_watched(model, engine, || BatchError::Interrupted)?;
    Ok(())
}

/// Compresses (`factor > 1`) or stretches (`factor < 1`) the interarrival
/// times of `jobs` (sorted by submit time) so that the offered load is
/// multiplied by `factor`: submit_i ← s_0 + round((s_i − s_0) / factor).
/// Rounding to whole seconds keeps the order.
pub fn scale_load(jobs: &mut [BatchJob], factor: f64) {
    let Some(s0) = jobs.first().map(|j| j.submit) else {
        return;
    };
    for j in jobs.iter_mut() {
        j.submit = s0 + ((j.submit - s0) as f64 / factor).round() as u64;
    }
}

/// The offered load of `jobs` on `procs` processors: Σ procs·runtime /
/// (procs · (last submit − first submit)). 0 for fewer than two distinct
/// submit times.
pub fn offered_load(jobs: &[BatchJob], procs: u32) -> f64 {
    let (Some(a), Some(b)) = (jobs.first(), jobs.last()) else {
        return 0.0;
    };
    let span = b.submit.saturating_sub(a.submit);
    if span == 0 {
        return 0.0;
    }
    let work: f64 = jobs.iter().map(|j| j.procs as f64 * j.runtime as f64).sum();
    work / (procs as f64 * span as f64)
}

/// Applies the machine-size rules to a loaded trace: the machine size
/// (`procs`, else the header), `too_wide`, `load_factor`. Returns the jobs,
/// the machine size and the updated report.
pub fn prepare(
    trace: Trace,
    cfg: &BatchConfig,
) -> Result<(Vec<BatchJob>, u32, LoadReport), BatchError> {
    cfg.validate()?;
    let procs = match cfg.procs {
        Some(p) => p,
        None => {
            let p = trace.header.machine_procs().ok_or_else(|| {
                ConfigError::new(
                    "procs",
                    "the trace header has no MaxProcs or MaxNodes",
                    "set procs=N",
                )
            })?;
            u32::try_from(p).map_err(|_| {
                ConfigError::new(
                    "procs",
                    format!("header MaxProcs {p} is too large"),
                    "< 2^32",
                )
            })?
        }
    };
    let mut report = trace.report;
    let mut jobs = trace.jobs;
    match cfg.too_wide {
        TooWide::Error => {
            if let Some(j) = jobs.iter().find(|j| j.procs > procs) {
                return Err(BatchError::Input(format!(
                    "{}job {} needs {} processors; the machine has {procs} (rule too_wide=error)",
                    at_line(j),
                    j.id,
                    j.procs
                )));
            }
        }
        TooWide::Drop => {
            let before = jobs.len();
            jobs.retain(|j| j.procs <= procs);
            let n = (before - jobs.len()) as u64;
            report.dropped_too_wide += n;
            report.kept -= n;
        }
        TooWide::Clamp => {
            for j in jobs.iter_mut().filter(|j| j.procs > procs) {
                j.procs = procs;
                report.repaired_too_wide += 1;
            }
        }
    }
    if cfg.load_factor != 1.0 {
        scale_load(&mut jobs, cfg.load_factor);
    }
    Ok((jobs, procs, report))
}

pub use crate::workloads::swf::MAX_TIME;

/// `line N: ` for a job read from a trace line, else nothing.
fn at_line(j: &BatchJob) -> String {
    if j.line > 0 {
        format!("line {}: ", j.line)
    } else {
        String::new()
    }
}

fn check_jobs(jobs: &[BatchJob], procs: u32) -> Result<(), BatchError> {
    if procs == 0 {
        return Err(ConfigError::new("procs", "0 processors", "an integer >= 1").into());
    }
    if jobs.len() >= u32::MAX as usize {
        return Err(BatchError::Input("more than 2^32 - 1 jobs".into()));
    }
    for (i, j) in jobs.iter().enumerate() {
        if j.procs == 0 || j.procs > procs {
            return Err(BatchError::Input(format!(
                "{}job {} needs {} processors; allowed 1..={procs} (set too_wide=drop or clamp when loading)",
                at_line(j),
                j.id,
                j.procs
            )));
        }
        if j.submit >= MAX_TIME || j.runtime >= MAX_TIME || j.requested >= MAX_TIME {
            return Err(BatchError::Input(format!(
                "{}job {}: submit, run or requested time of 2^40 s or more (about 35,000 years)",
                at_line(j),
                j.id
            )));
        }
        if i > 0 && jobs[i - 1].submit > j.submit {
            return Err(BatchError::Input(format!(
                "{}job {} is submitted at {}, before the previous job ({}); sort the jobs by submit time",
                at_line(j),
                j.id,
                j.submit,
                jobs[i - 1].submit
            )));
        }
    }
    Ok(())
}

fn effective_runtime(j: &BatchJob, kill: bool) -> (u64, bool) {
    if kill && j.runtime > j.requested {
        (j.requested, true)
    } else {
        (j.runtime, false)
    }
}

/// Runs `jobs` (sorted by submit time, each 1..=`procs` wide) under a
/// built-in policy of `cfg` (gang included).
pub fn simulate(
    jobs: Vec<BatchJob>,
    procs: u32,
    cfg: &BatchConfig,
) -> Result<BatchResult, BatchError> {
    simulate_ordered(jobs, procs, cfg, None)
}

/// [`simulate`] with a decision written outside the core: the queue sorted
/// by a priority's scores ([`BatchHook::Priority`]; it replaces `order`,
/// which must then be `fcfs`, and has no meaning for gang scheduling), or
/// gang admission's slot chosen by a [`SlotChooser`]
/// ([`BatchHook::GangPlace`]; gang scheduling only).
pub fn simulate_ordered(
    jobs: Vec<BatchJob>,
    procs: u32,
    cfg: &BatchConfig,
    hook: Option<BatchHook<'_>>,
) -> Result<BatchResult, BatchError> {
    cfg.validate()?;
    let (scorer, chooser) = match hook {
        Some(BatchHook::Priority(s)) => (Some(s), None),
        Some(BatchHook::GangPlace(c)) => (None, Some(c)),
        None => (None, None),
    };
    if chooser.is_some() && cfg.policy != BatchPolicyKind::Gang {
        return Err(ConfigError::new(
            "gang_place",
            format!(
                "a slot rule is given with policy {}, which has no slots",
                parsched_core::schema::Choice::name(cfg.policy)
            ),
            "policy=gang with gang_place",
        )
        .into());
    }
    if scorer.is_some() {
        if cfg.policy == BatchPolicyKind::Gang {
            return Err(ConfigError::new(
                "policy",
                "gang admits in arrival order: a priority function orders the queue of fcfs, \
                 easy and conservative",
                "fcfs|easy|conservative",
            )
            .into());
        }
        if cfg.order != QueueOrder::FCFS {
            return Err(ConfigError::new(
                "order",
                format!(
                    "{} is given with a priority function, which orders the queue itself",
                    parsched_core::schema::Choice::name(cfg.order)
                ),
                "fcfs (the default) with a priority function",
            )
            .into());
        }
    }
    let kind = match cfg.policy {
        BatchPolicyKind::Fcfs => BatchKind::Fcfs,
        BatchPolicyKind::Easy => BatchKind::Easy,
        BatchPolicyKind::Conservative => BatchKind::Conservative,
        BatchPolicyKind::Gang => return simulate_gang_placed(jobs, procs, cfg, chooser),
    };
    let mut policy = match cfg.reservation_depth {
        Some(k) => Box::new(parsched_core::policy::batch::Depth::new(k as usize)),
        None => kind.policy(),
    };
    simulate_scored(jobs, procs, policy.as_mut(), cfg, scorer)
}

/// Loads a trace file and runs it under `cfg`. A header without a machine
/// size (and no `procs` key) is an error naming the file.
pub fn run_trace(path: impl AsRef<Path>, cfg: &BatchConfig) -> Result<BatchResult, BatchError> {
    run_trace_ordered(path, cfg, None)
}

/// [`run_trace`] with a decision written outside the core ([`simulate_ordered`]).
pub fn run_trace_ordered(
    path: impl AsRef<Path>,
    cfg: &BatchConfig,
    hook: Option<BatchHook<'_>>,
) -> Result<BatchResult, BatchError> {
    cfg.validate()?;
    let path = path.as_ref();
    let trace = swf::load_file(path, &cfg.rules)?;
    run_loaded_ordered(trace, cfg, hook).map_err(|e| match e {
        BatchError::Config(mut c) if c.field == "procs" && cfg.procs.is_none() => {
            c.message = format!("{} (trace {})", c.message, path.display());
            BatchError::Config(c)
        }
        e => e,
    })
}

/// The Lublin–Feitelson configuration a `workload = "lublin"` batch config
/// describes (`procs`, else 128 processors; `workload_jobs`, `_seed`,
/// `_types`, `_requested`, `_estimate_*`).
pub fn lublin_config(cfg: &BatchConfig) -> crate::workloads::lublin::LublinConfig {
    let mut lc = crate::workloads::lublin::LublinConfig::for_machine(
        cfg.procs.unwrap_or(config::LUBLIN_DEFAULT_PROCS),
    );
    lc.jobs = cfg.workload_jobs;
    lc.seed = cfg.workload_seed;
    lc.include_types = cfg.workload_types;
    lc.requested = cfg.workload_requested;
    lc.estimate_max = cfg.workload_estimate_max;
    lc.estimate_max_percent = cfg.workload_estimate_max_percent;
    lc.estimate_bins = cfg.workload_estimate_bins;
    lc
}

/// Generates the workload `cfg` describes (`workload = "lublin"`) in memory
/// and runs it: the same jobs as writing it with `parsched generate lublin`
/// and running that file.
pub fn run_generated(cfg: &BatchConfig) -> Result<BatchResult, BatchError> {
    run_generated_ordered(cfg, None)
}

/// [`run_generated`] with a decision written outside the core ([`simulate_ordered`]).
pub fn run_generated_ordered(
    cfg: &BatchConfig,
    hook: Option<BatchHook<'_>>,
) -> Result<BatchResult, BatchError> {
    cfg.validate()?;
    let flag = crate::cancel::current();
    let stop = || flag.as_ref().is_some_and(|f| f.load(Ordering::Relaxed));
    let lc = lublin_config(cfg);
    let (trace, _) =
        crate::workloads::lublin::generate_at_load(&lc, cfg.workload_load, &cfg.rules, &stop)?
            .ok_or(BatchError::Interrupted)?;
    run_loaded_ordered(trace, cfg, hook)
}

/// The trace `cfg` describes: the file `path` (the Python layer resolves
/// `config.trace`), or its Lublin workload generated in memory
/// (`workload = "lublin"`).
pub fn load_trace(cfg: &BatchConfig, path: Option<&Path>) -> Result<Trace, BatchError> {
    cfg.validate()?;
    if cfg.workload == WorkloadKind::Lublin {
        let flag = crate::cancel::current();
        let stop = || flag.as_ref().is_some_and(|f| f.load(Ordering::Relaxed));
        let lc = lublin_config(cfg);
        return Ok(crate::workloads::lublin::generate_at_load(
            &lc,
            cfg.workload_load,
            &cfg.rules,
            &stop,
        )?
        .ok_or(BatchError::Interrupted)?
        .0);
    }
    let Some(path) = path else {
        return Err(ConfigError::new(
            "trace",
            "no trace file given",
            "an SWF file (.swf or .swf.gz), or workload=lublin to generate one",
        )
        .into());
    };
    Ok(swf::load_file(path, &cfg.rules)?)
}

/// The jobs and machine size `cfg` describes, ready to run ([`load_trace`],
/// then [`prepare`]); what the Gymnasium environment draws its episodes
/// from.
pub fn load_jobs(
    cfg: &BatchConfig,
    path: Option<&Path>,
) -> Result<(Vec<BatchJob>, u32), BatchError> {
    let trace = load_trace(cfg, path)?;
    if trace.jobs.is_empty() {
        return Err(nothing_to_simulate(&trace.report));
    }
    let (jobs, procs, report) = prepare(trace, cfg)?;
    if jobs.is_empty() {
        return Err(nothing_to_simulate(&report));
    }
    Ok((jobs, procs))
}

/// Loads what `cfg` describes ([`load_trace`]) and runs it under a
/// full-control policy ([`simulate_select`]).
pub fn run_select(
    cfg: &BatchConfig,
    path: Option<&Path>,
    policy: &mut dyn parsched_core::policy::batch::select::SelectPolicy,
    opts: SelectOptions,
) -> Result<BatchResult, BatchError> {
    let trace = load_trace(cfg, path)?;
    let header = trace.header.clone();
    if trace.jobs.is_empty() {
        return Err(nothing_to_simulate(&trace.report));
    }
    let (jobs, procs, report) = prepare(trace, cfg)?;
    if jobs.is_empty() {
        return Err(nothing_to_simulate(&report));
    }
    let mut r = simulate_select(jobs, procs, policy, cfg, opts)?;
    r.report = report;
    r.header = header;
    Ok(r)
}

/// The error for a trace with no job to run, with the reasons.
fn nothing_to_simulate(report: &LoadReport) -> BatchError {
    let why = if report.records == 0 {
        "the trace has no job line".to_string()
    } else {
        let reasons: Vec<String> = report
            .reasons()
            .iter()
            .filter(|(r, _)| r.starts_with("dropped"))
            .map(|(r, n)| format!("{n} {r}"))
            .collect();
        format!(
            "all {} records were dropped ({})",
            report.records,
            reasons.join("; ")
        )
    };
    BatchError::Input(format!("nothing to simulate: {why}"))
}

/// Runs an already loaded trace under `cfg`. A trace with no job to run
/// (no job line, or every record dropped by the rules) is an error
/// ([`BatchError::Input`]): nothing would be simulated.
pub fn run_loaded(trace: Trace, cfg: &BatchConfig) -> Result<BatchResult, BatchError> {
    run_loaded_ordered(trace, cfg, None)
}

/// [`run_loaded`] with a decision written outside the core ([`simulate_ordered`]).
pub fn run_loaded_ordered(
    trace: Trace,
    cfg: &BatchConfig,
    hook: Option<BatchHook<'_>>,
) -> Result<BatchResult, BatchError> {
    let header = trace.header.clone();
    // Before the machine size: an empty trace is that, whatever its header.
    if trace.jobs.is_empty() {
        return Err(nothing_to_simulate(&trace.report));
    }
    let (jobs, procs, report) = prepare(trace, cfg)?;
    if jobs.is_empty() {
        return Err(nothing_to_simulate(&report));
    }
    let mut r = simulate_ordered(jobs, procs, cfg, hook)?;
    r.report = report;
    r.header = header;
    Ok(r)
}

#[cfg(test)]
mod tests;
