//! The batch machine: rigid jobs from a workload trace on `procs` processors,
//! space-shared by a batch policy (FCFS, EASY or conservative backfilling,
//! from `parsched_core::policy::batch`) or gang-scheduled on Ousterhout's
//! matrix (`parsched_core::policy::gang::GangMatrix`) with a bounded
//! multiprogramming level and backfilling into free slot space.
//!
//! # Events and their order at equal times
//!
//! The machine has two kinds of events, `JobFinished` and `JobSubmitted`
//! (plus, under gang scheduling, the end of a slot's quantum). At one
//! timestamp `t` they are handled in this order:
//!
//! 1. every job finishing at `t` (ascending job index — the position in the
//!    submit-time-sorted job list) releases its processors;
//! 2. every job submitted at `t` joins the queue (in trace order);
//! 3. one scheduling pass: the policy sees the queue and the free processors
//!    and starts jobs.
//!
//! A job started at `t` with run time 0 finishes at `t`: steps 1 and 3 repeat
//! at `t` until nothing more happens. Scheduling passes run only at these
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
//! Each admitted job occupies `procs` cells of one slot of a [`GangMatrix`]
//! with at most `mpl` slots. The occupied slots run round robin, `quantum`
//! seconds each (a job progresses only while its slot runs; there is no
//! switch overhead). A slot that empties ends its quantum early; with a single
//! occupied slot there are no switches. Admission: queued jobs are examined
//! in arrival order, each placed by the matrix's rule (first fit by default)
//! in any slot with room or a new slot if fewer than `mpl` exist;
//! `gang_backfill = true` lets later jobs take free slot space when an
//! earlier job does not fit, `false` stops at the first job that does not
//! fit. A job's start time is the first time its slot runs.
//!
//! # Metrics
//!
//! Per job: wait = start − submit, response (turnaround) = end − submit,
//! slowdown = response / max(run, 1), bounded slowdown =
//! max(1, response / max(run, τ)) with `run` the executed time and τ =
//! `bsld_tau` (10 s). Aggregate: means, utilization = Σ procs·run /
//! (P·makespan), makespan = last end − first submit, the queue length as a
//! step series and its time average over the makespan.

use crate::pools::Value;
use crate::swf::{
    self, BatchJob, KeepDrop, LoadReport, MissingRequested, MissingRuntime, ProcsRule, SwfError,
    SwfHeader, SwfRecord, SwfRules, SwfWriter, Trace, Unsorted,
};
use parsched_core::policy::batch::{BatchKind, BatchPolicy, BatchView, QueuedJob, RunningJob};
use parsched_core::policy::gang::{GangId, GangMatrix, MatrixOptions, SlotAllocation, SlotId};
use parsched_core::{ConfigError, PolicyError};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, Write};
use std::path::Path;
use std::time::Instant;
use thiserror::Error;

/// Which scheduler runs the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum BatchPolicyKind {
    Fcfs,
    #[default]
    Easy,
    Conservative,
    /// Gang scheduling on the Ousterhout matrix.
    Gang,
}

impl BatchPolicyKind {
    pub fn name(self) -> &'static str {
        match self {
            BatchPolicyKind::Fcfs => "fcfs",
            BatchPolicyKind::Easy => "easy",
            BatchPolicyKind::Conservative => "conservative",
            BatchPolicyKind::Gang => "gang",
        }
    }
}

/// What to do with a job wider than the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TooWide {
    /// Drop it and count it in the load report.
    #[default]
    Drop,
    /// Give it the whole machine (counted as repaired).
    Clamp,
    /// Refuse the trace.
    Error,
}

/// The batch machine's configuration. Keys of [`BatchConfig::set`] are the
/// field names (rules of [`SwfRules`] by their own names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BatchConfig {
    pub policy: BatchPolicyKind,
    /// Processors; `None`: the trace header's MaxProcs (else MaxNodes).
    pub procs: Option<u32>,
    /// Kill a job when it reaches its requested time.
    pub kill_on_overrun: bool,
    /// τ of the bounded slowdown, seconds.
    pub bsld_tau: f64,
    pub rules: SwfRules,
    pub too_wide: TooWide,
    /// Gang: multiprogramming level (slots of the matrix).
    pub mpl: u32,
    /// Gang: slot quantum, seconds.
    pub quantum: u64,
    /// Gang: later jobs may take free slot space when an earlier one does
    /// not fit.
    pub gang_backfill: bool,
    /// Gang: the matrix's slot allocation rule.
    pub slot_allocation: SlotAllocation,
    /// Multiplies the offered load by compressing interarrival times
    /// (see [`scale_load`]); 1 leaves the trace unchanged.
    pub load_factor: f64,
    /// Record which processors each space-shared job gets (lowest free
    /// first), for `allocated_resources` in the jobs CSV.
    pub track_resources: bool,
}

impl Default for BatchConfig {
    fn default() -> Self {
        BatchConfig {
            policy: BatchPolicyKind::Easy,
            procs: None,
            kill_on_overrun: false,
            bsld_tau: 10.0,
            rules: SwfRules::default(),
            too_wide: TooWide::Drop,
            mpl: 4,
            quantum: 60,
            gang_backfill: true,
            slot_allocation: SlotAllocation::FirstFit,
            load_factor: 1.0,
            track_resources: true,
        }
    }
}

/// Every key [`BatchConfig::set`] accepts.
pub const KEYS: &[&str] = &[
    "policy",
    "procs",
    "kill_on_overrun",
    "bsld_tau",
    "procs_rule",
    "missing_requested_time",
    "requested_time_factor",
    "missing_runtime",
    "zero_runtime",
    "cancelled",
    "unsorted",
    "too_wide",
    "mpl",
    "quantum",
    "gang_backfill",
    "slot_allocation",
    "load_factor",
    "track_resources",
];

fn shown(v: &Value) -> String {
    // Not an exhaustive match, so that a new `Value` variant still compiles.
    if let Value::Str(s) = v {
        format!("{s:?}")
    } else if let Value::Int(i) = v {
        i.to_string()
    } else if let Value::Float(f) = v {
        f.to_string()
    } else if let Value::Bool(b) = v {
        b.to_string()
    } else {
        format!("{v:?}")
    }
}

fn bad(key: &str, v: &Value, allowed: &str) -> ConfigError {
    ConfigError::new(key, format!("{} is not accepted", shown(v)), allowed)
}

fn choice<'a>(key: &str, v: &Value, allowed: &[&'a str]) -> Result<&'a str, ConfigError> {
    match v {
        Value::Str(s) => allowed
            .iter()
            .find(|a| **a == s.as_str())
            .copied()
            .ok_or_else(|| bad(key, v, &allowed.join("|"))),
        _ => Err(bad(key, v, &allowed.join("|"))),
    }
}

fn float(key: &str, v: &Value) -> Result<f64, ConfigError> {
    match v {
        Value::Int(i) => Ok(*i as f64),
        Value::Float(f) => Ok(*f),
        Value::Str(s) => s.trim().parse().map_err(|_| bad(key, v, "a number")),
        _ => Err(bad(key, v, "a number")),
    }
}

fn uint(key: &str, v: &Value) -> Result<u64, ConfigError> {
    match v {
        Value::Int(i) if *i >= 0 => Ok(*i as u64),
        Value::Float(f) if *f >= 0.0 && f.fract() == 0.0 && *f < 1e18 => Ok(*f as u64),
        Value::Str(s) => s
            .trim()
            .parse()
            .map_err(|_| bad(key, v, "a non-negative integer")),
        _ => Err(bad(key, v, "a non-negative integer")),
    }
}

fn boolean(key: &str, v: &Value) -> Result<bool, ConfigError> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Str(s) if s == "true" || s == "false" => Ok(s == "true"),
        _ => Err(bad(key, v, "true|false")),
    }
}

impl BatchConfig {
    /// Sets one key.
    pub fn set(&mut self, key: &str, v: &Value) -> Result<(), ConfigError> {
        let r = &mut self.rules;
        match key {
            "policy" => {
                self.policy = match choice(key, v, &["fcfs", "easy", "conservative", "gang"])? {
                    "fcfs" => BatchPolicyKind::Fcfs,
                    "conservative" => BatchPolicyKind::Conservative,
                    "gang" => BatchPolicyKind::Gang,
                    _ => BatchPolicyKind::Easy,
                }
            }
            "procs" => {
                self.procs = match v {
                    Value::Str(s) if s == "auto" || s == "header" => None,
                    _ => Some(
                        u32::try_from(uint(key, v)?)
                            .map_err(|_| bad(key, v, "an integer below 2^32, or auto"))?,
                    ),
                }
            }
            "kill_on_overrun" => self.kill_on_overrun = boolean(key, v)?,
            "bsld_tau" => self.bsld_tau = float(key, v)?,
            "procs_rule" => {
                r.procs = match choice(key, v, &["allocated", "requested"])? {
                    "requested" => ProcsRule::Requested,
                    _ => ProcsRule::Allocated,
                }
            }
            "missing_requested_time" => {
                r.missing_requested_time = match choice(key, v, &["runtime", "factor", "drop"])? {
                    "factor" => MissingRequested::Factor,
                    "drop" => MissingRequested::Drop,
                    _ => MissingRequested::Runtime,
                }
            }
            "requested_time_factor" => r.requested_time_factor = float(key, v)?,
            "missing_runtime" => {
                r.missing_runtime = match choice(key, v, &["drop", "requested"])? {
                    "requested" => MissingRuntime::Requested,
                    _ => MissingRuntime::Drop,
                }
            }
            "zero_runtime" | "cancelled" => {
                let kd = match choice(key, v, &["keep", "drop"])? {
                    "drop" => KeepDrop::Drop,
                    _ => KeepDrop::Keep,
                };
                if key == "zero_runtime" {
                    r.zero_runtime = kd;
                } else {
                    r.cancelled = kd;
                }
            }
            "unsorted" => {
                r.unsorted = match choice(key, v, &["sort", "reject"])? {
                    "reject" => Unsorted::Reject,
                    _ => Unsorted::Sort,
                }
            }
            "too_wide" => {
                self.too_wide = match choice(key, v, &["drop", "clamp", "error"])? {
                    "clamp" => TooWide::Clamp,
                    "error" => TooWide::Error,
                    _ => TooWide::Drop,
                }
            }
            "mpl" => {
                self.mpl =
                    u32::try_from(uint(key, v)?).map_err(|_| bad(key, v, "an integer >= 1"))?
            }
            "quantum" => self.quantum = uint(key, v)?,
            "gang_backfill" => self.gang_backfill = boolean(key, v)?,
            "slot_allocation" => {
                self.slot_allocation = match choice(key, v, &["first_fit", "best_fit"])? {
                    "best_fit" => SlotAllocation::BestFit,
                    _ => SlotAllocation::FirstFit,
                }
            }
            "load_factor" => self.load_factor = float(key, v)?,
            "track_resources" => self.track_resources = boolean(key, v)?,
            _ => return Err(ConfigError::new(key, "unknown key", KEYS.join(", "))),
        }
        Ok(())
    }

    /// Checks every value; the error names the key and what is allowed.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.procs == Some(0) {
            return Err(ConfigError::new(
                "procs",
                "0 processors",
                "an integer >= 1, or auto",
            ));
        }
        if !(self.bsld_tau > 0.0 && self.bsld_tau.is_finite()) {
            return Err(ConfigError::new(
                "bsld_tau",
                format!("{} is not positive", self.bsld_tau),
                "a finite number > 0 (seconds)",
            ));
        }
        let f = self.rules.requested_time_factor;
        if !(f > 0.0 && f.is_finite()) {
            return Err(ConfigError::new(
                "requested_time_factor",
                format!("{f} is not positive"),
                "a finite number > 0",
            ));
        }
        if self.mpl == 0 {
            return Err(ConfigError::new(
                "mpl",
                "a multiprogramming level of 0 admits no job",
                "an integer >= 1",
            ));
        }
        if self.quantum == 0 {
            return Err(ConfigError::new(
                "quantum",
                "0 seconds",
                "an integer >= 1 (seconds)",
            ));
        }
        if !(self.load_factor > 0.0 && self.load_factor.is_finite()) {
            return Err(ConfigError::new(
                "load_factor",
                format!("{} is not positive", self.load_factor),
                "a finite number > 0",
            ));
        }
        Ok(())
    }
}

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
                    "job {} needs {} processors; the machine has {procs} (rule too_wide=error)",
                    j.id, j.procs
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

/// What happened to one job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    pub start: u64,
    pub end: u64,
    /// Killed at its requested time (`kill_on_overrun`).
    pub killed: bool,
}

/// Aggregate metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct BatchSummary {
    pub jobs: u64,
    pub procs: u32,
    pub avg_wait: f64,
    pub max_wait: u64,
    pub avg_response: f64,
    pub avg_slowdown: f64,
    pub avg_bounded_slowdown: f64,
    pub utilization: f64,
    pub makespan: u64,
    pub first_submit: u64,
    pub last_end: u64,
    pub killed: u64,
    pub max_queue: u32,
    /// Time-averaged queue length over the makespan.
    pub avg_queue: f64,
    /// Gang: slot switches.
    pub slot_switches: u64,
    pub wall_seconds: f64,
}

/// The schedule and its metrics.
#[derive(Debug, Clone)]
pub struct BatchResult {
    pub policy: &'static str,
    pub procs: u32,
    pub bsld_tau: f64,
    /// The jobs as run, sorted by submit time.
    pub jobs: Vec<BatchJob>,
    /// `outcomes[i]` is `jobs[i]`'s.
    pub outcomes: Vec<Outcome>,
    /// `(time, queue length)` at every change, starting at the first submit.
    pub queue_length: Vec<(u64, u32)>,
    pub summary: BatchSummary,
    /// Loading counts (empty for a job list given directly).
    pub report: LoadReport,
    /// The trace's header (default for a job list given directly).
    pub header: SwfHeader,
    /// Processor intervals per job: `resources[res_index[i]..res_index[i+1]]`
    /// (empty when not tracked).
    resources: Vec<(u32, u32)>,
    res_index: Vec<u32>,
}

/// Column names of the jobs CSV: Batsim's `_jobs.csv` (read by evalys).
pub const JOBS_CSV_COLUMNS: &[&str] = &[
    "job_id",
    "workload_name",
    "profile",
    "submission_time",
    "requested_number_of_resources",
    "requested_time",
    "success",
    "final_state",
    "starting_time",
    "execution_time",
    "finish_time",
    "waiting_time",
    "turnaround_time",
    "stretch",
    "allocated_resources",
    "consumed_energy",
    "metadata",
];

/// One row of the jobs CSV.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobRow {
    pub job_id: i64,
    pub submission_time: u64,
    pub requested_number_of_resources: u32,
    pub requested_time: u64,
    pub success: bool,
    /// `COMPLETED_SUCCESSFULLY` or `COMPLETED_WALLTIME_REACHED` (killed).
    pub final_state: &'static str,
    pub starting_time: u64,
    pub execution_time: u64,
    pub finish_time: u64,
    pub waiting_time: u64,
    pub turnaround_time: u64,
    /// turnaround / execution (Batsim's definition; infinite for an
    /// execution time of 0 with a positive turnaround, 1 if both are 0).
    pub stretch: f64,
    pub bounded_slowdown: f64,
    /// Batsim interval set, e.g. `0-3 8 10-11` (empty if not tracked).
    pub allocated_resources: String,
}

impl BatchResult {
    /// The processors given to job `i` as intervals (inclusive).
    pub fn resources(&self, i: usize) -> &[(u32, u32)] {
        if self.res_index.len() <= i + 1 {
            return &[];
        }
        &self.resources[self.res_index[i] as usize..self.res_index[i + 1] as usize]
    }

    /// Executed time of job `i` (its run time, or requested time if killed).
    pub fn run_time(&self, i: usize) -> u64 {
        let j = &self.jobs[i];
        if self.outcomes[i].killed {
            j.requested
        } else {
            j.runtime
        }
    }

    /// The jobs CSV rows, in job order.
    pub fn job_rows(&self) -> impl Iterator<Item = JobRow> + '_ {
        (0..self.jobs.len()).map(move |i| {
            let j = &self.jobs[i];
            let o = &self.outcomes[i];
            let exec = o.end - o.start;
            let turn = o.end - j.submit;
            let stretch = if exec > 0 {
                turn as f64 / exec as f64
            } else if turn > 0 {
                f64::INFINITY
            } else {
                1.0
            };
            let run = self.run_time(i);
            let bsld = (turn as f64 / (run as f64).max(self.bsld_tau)).max(1.0);
            let res = self
                .resources(i)
                .iter()
                .map(|&(a, b)| {
                    if a == b {
                        a.to_string()
                    } else {
                        format!("{a}-{b}")
                    }
                })
                .collect::<Vec<_>>()
                .join(" ");
            JobRow {
                job_id: j.id,
                submission_time: j.submit,
                requested_number_of_resources: j.procs,
                requested_time: j.requested,
                success: !o.killed,
                final_state: if o.killed {
                    "COMPLETED_WALLTIME_REACHED"
                } else {
                    "COMPLETED_SUCCESSFULLY"
                },
                starting_time: o.start,
                execution_time: exec,
                finish_time: o.end,
                waiting_time: o.start - j.submit,
                turnaround_time: turn,
                stretch,
                bounded_slowdown: bsld,
                allocated_resources: res,
            }
        })
    }

    /// Writes the jobs CSV (Batsim's columns, in its order).
    pub fn write_jobs_csv<W: Write>(&self, mut w: W) -> io::Result<()> {
        writeln!(w, "{}", JOBS_CSV_COLUMNS.join(","))?;
        for r in self.job_rows() {
            let stretch = if r.stretch.is_infinite() {
                "inf".to_string()
            } else {
                format!("{}", r.stretch)
            };
            writeln!(
                w,
                "{},w0,{},{},{},{},{},{},{},{},{},{},{},{},{},-1,",
                r.job_id,
                if r.success { "delay" } else { "delay_killed" },
                r.submission_time,
                r.requested_number_of_resources,
                r.requested_time,
                r.success as u8,
                r.final_state,
                r.starting_time,
                r.execution_time,
                r.finish_time,
                r.waiting_time,
                r.turnaround_time,
                stretch,
                r.allocated_resources
            )?;
        }
        w.flush()
    }

    /// The schedule as SWF records: wait time and run time as simulated,
    /// status 1 (completed) or 0 (killed at the requested time).
    pub fn records(&self) -> impl Iterator<Item = SwfRecord> + '_ {
        (0..self.jobs.len()).map(move |i| {
            let j = &self.jobs[i];
            let o = &self.outcomes[i];
            SwfRecord {
                wait_time: (o.start - j.submit) as i64,
                run_time: (o.end - o.start) as i64,
                status: if o.killed { 0 } else { 1 },
                ..j.to_record()
            }
        })
    }

    /// Writes the schedule as an SWF trace (the input's header plus a note).
    pub fn write_swf<W: Write>(&self, w: W) -> io::Result<()> {
        let mut h = self.header.clone();
        h.notes.push(format!(
            "schedule simulated by parsched: policy={} procs={}",
            self.policy, self.procs
        ));
        if h.max_procs.is_none() {
            h.fields.push(("MaxProcs".into(), self.procs.to_string()));
            h.max_procs = Some(self.procs as u64);
        }
        let mut sw = SwfWriter::new(w, &h)?;
        for r in self.records() {
            sw.write(&r)?;
        }
        sw.finish().map(|_| ())
    }

    /// Everything but the wall-clock time, for determinism checks.
    pub fn same_schedule(&self, other: &BatchResult) -> bool {
        let mut a = self.summary.clone();
        let mut b = other.summary.clone();
        a.wall_seconds = 0.0;
        b.wall_seconds = 0.0;
        a == b
            && self.outcomes == other.outcomes
            && self.queue_length == other.queue_length
            && self.resources == other.resources
    }
}

/// Lowest-free processor allocation on a bitset.
struct ProcSet {
    words: Vec<u64>,
}

impl ProcSet {
    fn new(procs: u32) -> ProcSet {
        let n = procs.div_ceil(64) as usize;
        let mut words = vec![u64::MAX; n];
        let extra = n as u32 * 64 - procs;
        if extra > 0 {
            words[n - 1] = u64::MAX >> extra;
        }
        ProcSet { words }
    }

    /// Takes the `w` lowest free processors; appends them as intervals.
    fn take(&mut self, mut w: u32, out: &mut Vec<(u32, u32)>) {
        let mut run: Option<(u32, u32)> = None;
        for (k, word) in self.words.iter_mut().enumerate() {
            while w > 0 && *word != 0 {
                let b = word.trailing_zeros();
                *word &= !(1u64 << b);
                let p = k as u32 * 64 + b;
                match &mut run {
                    Some((_, e)) if *e + 1 == p => *e = p,
                    _ => {
                        if let Some(r) = run.take() {
                            out.push(r);
                        }
                        run = Some((p, p));
                    }
                }
                w -= 1;
            }
            if w == 0 {
                break;
            }
        }
        debug_assert_eq!(w, 0, "not enough free processors");
        out.extend(run);
    }

    fn give(&mut self, ranges: &[(u32, u32)]) {
        for &(a, b) in ranges {
            for p in a..=b {
                self.words[(p / 64) as usize] |= 1u64 << (p % 64);
            }
        }
    }
}

/// Times must stay below this (2^40 s), so that no sum of times overflows
/// and every time is exact as a float.
pub const MAX_TIME: u64 = 1 << 40;

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
                "job {} needs {} processors; allowed 1..={procs} (set too_wide=drop or clamp when loading)",
                j.id, j.procs
            )));
        }
        if j.submit >= MAX_TIME || j.runtime >= MAX_TIME || j.requested >= MAX_TIME {
            return Err(BatchError::Input(format!(
                "job {}: submit, run or requested time of 2^40 s or more (about 35,000 years)",
                j.id
            )));
        }
        if i > 0 && jobs[i - 1].submit > j.submit {
            return Err(BatchError::Input(format!(
                "job {} is submitted at {}, before the previous job ({}); sort the jobs by submit time",
                j.id,
                j.submit,
                jobs[i - 1].submit
            )));
        }
    }
    Ok(())
}

struct Series {
    points: Vec<(u64, u32)>,
}

impl Series {
    fn record(&mut self, t: u64, len: u32) {
        match self.points.last_mut() {
            Some(last) if last.1 == len => {}
            Some(last) if last.0 == t => {
                last.1 = len;
                // Merge with the previous point if equal again.
                let n = self.points.len();
                if n >= 2 && self.points[n - 2].1 == len {
                    self.points.pop();
                }
            }
            _ => self.points.push((t, len)),
        }
    }
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
    cfg.validate()?;
    let kind = match cfg.policy {
        BatchPolicyKind::Fcfs => BatchKind::Fcfs,
        BatchPolicyKind::Easy => BatchKind::Easy,
        BatchPolicyKind::Conservative => BatchKind::Conservative,
        BatchPolicyKind::Gang => return simulate_gang(jobs, procs, cfg),
    };
    let mut policy = kind.policy();
    simulate_with(jobs, procs, policy.as_mut(), cfg)
}

/// Runs `jobs` under any space-sharing [`BatchPolicy`] (for instance one
/// written in Python). The policy's decisions are checked: a position out of
/// range, repeated, or more processors than free is a [`PolicyError`].
pub fn simulate_with(
    jobs: Vec<BatchJob>,
    procs: u32,
    policy: &mut dyn BatchPolicy,
    cfg: &BatchConfig,
) -> Result<BatchResult, BatchError> {
    let wall = Instant::now();
    cfg.validate()?;
    check_jobs(&jobs, procs)?;
    let n = jobs.len();
    let kill = cfg.kill_on_overrun;
    let track = cfg.track_resources;
    let mut outcomes = vec![
        Outcome {
            start: u64::MAX,
            end: u64::MAX,
            killed: false
        };
        n
    ];
    // Running jobs: the policy's view and, in parallel, job indices.
    let mut running: Vec<RunningJob> = Vec::with_capacity(procs.min(1 << 16) as usize);
    let mut running_idx: Vec<u32> = Vec::with_capacity(running.capacity());
    let mut run_pos: Vec<u32> = vec![u32::MAX; n];
    let mut queue: Vec<QueuedJob> = Vec::new();
    let mut queue_idx: Vec<u32> = Vec::new();
    let mut done: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    let mut free = procs;
    let mut next = 0usize;
    let mut decisions: Vec<usize> = Vec::new();
    let mut taken: Vec<bool> = Vec::new();
    let mut series = Series { points: Vec::new() };
    let mut set = ProcSet::new(if track { procs } else { 1 });
    // Resource intervals: per job (offset, len) into `arena`, assigned at
    // start; compacted into job order at the end.
    let mut arena: Vec<(u32, u32)> = Vec::new();
    let mut res_at: Vec<(u32, u32)> = if track { vec![(0, 0); n] } else { Vec::new() };
    loop {
        let t_done = done.peek().map(|r| r.0 .0);
        let t_arr = jobs.get(next).map(|j| j.submit);
        let t = match (t_done, t_arr) {
            (None, None) => break,
            (Some(a), None) | (None, Some(a)) => a,
            (Some(a), Some(b)) => a.min(b),
        };
        // 1. completions.
        while let Some(&Reverse((te, i))) = done.peek() {
            if te != t {
                break;
            }
            done.pop();
            let i = i as usize;
            let p = run_pos[i] as usize;
            free += running[p].procs;
            running.swap_remove(p);
            running_idx.swap_remove(p);
            if p < running_idx.len() {
                run_pos[running_idx[p] as usize] = p as u32;
            }
            outcomes[i].end = t;
            if track {
                let (off, len) = res_at[i];
                set.give(&arena[off as usize..(off + len) as usize]);
            }
        }
        // 2. submissions.
        while next < n && jobs[next].submit == t {
            let j = &jobs[next];
            queue.push(QueuedJob {
                procs: j.procs,
                requested: j.requested,
            });
            queue_idx.push(next as u32);
            next += 1;
        }
        // 3. one scheduling pass.
        if !queue.is_empty() && free > 0 {
            decisions.clear();
            policy.schedule(
                &BatchView {
                    now: t,
                    total: procs,
                    free,
                    running: &running,
                    queue: &queue,
                },
                &mut decisions,
            );
            if !decisions.is_empty() {
                taken.clear();
                taken.resize(queue.len(), false);
                for &k in &decisions {
                    if k >= queue.len() || taken[k] {
                        return Err(PolicyError(format!(
                            "{} started queue position {k} twice or out of range 0..{}",
                            policy.name(),
                            queue.len()
                        ))
                        .into());
                    }
                    taken[k] = true;
                    let q = queue[k];
                    if q.procs > free {
                        return Err(PolicyError(format!(
                            "{} started a job of {} processors with {free} free",
                            policy.name(),
                            q.procs
                        ))
                        .into());
                    }
                    free -= q.procs;
                    let i = queue_idx[k] as usize;
                    let (run, killed) = effective_runtime(&jobs[i], kill);
                    outcomes[i].start = t;
                    outcomes[i].killed = killed;
                    run_pos[i] = running.len() as u32;
                    running.push(RunningJob {
                        procs: q.procs,
                        requested_end: t + jobs[i].requested,
                    });
                    running_idx.push(i as u32);
                    done.push(Reverse((t + run, i as u32)));
                    if track {
                        let off = arena.len() as u32;
                        set.take(q.procs, &mut arena);
                        res_at[i] = (off, arena.len() as u32 - off);
                    }
                }
                let prefix = decisions.len();
                if taken[..prefix].iter().all(|&x| x) {
                    // The usual case (FCFS, heads of the queue): a prefix.
                    queue.drain(..prefix);
                    queue_idx.drain(..prefix);
                } else {
                    let mut k = 0;
                    queue.retain(|_| {
                        k += 1;
                        !taken[k - 1]
                    });
                    let mut k = 0;
                    queue_idx.retain(|_| {
                        k += 1;
                        !taken[k - 1]
                    });
                }
            }
        }
        series.record(t, queue.len() as u32);
    }
    let (resources, res_index) = if track {
        let mut res = Vec::with_capacity(arena.len());
        let mut idx = Vec::with_capacity(n + 1);
        for &(off, len) in &res_at {
            idx.push(res.len() as u32);
            res.extend_from_slice(&arena[off as usize..(off + len) as usize]);
        }
        idx.push(res.len() as u32);
        (res, idx)
    } else {
        (Vec::new(), Vec::new())
    };
    Ok(finish(
        policy.name(),
        procs,
        cfg,
        jobs,
        outcomes,
        series.points,
        0,
        resources,
        res_index,
        wall,
    ))
}

#[allow(clippy::too_many_arguments)]
fn finish(
    policy: &'static str,
    procs: u32,
    cfg: &BatchConfig,
    jobs: Vec<BatchJob>,
    outcomes: Vec<Outcome>,
    queue_length: Vec<(u64, u32)>,
    slot_switches: u64,
    resources: Vec<(u32, u32)>,
    res_index: Vec<u32>,
    wall: Instant,
) -> BatchResult {
    let n = jobs.len();
    let tau = cfg.bsld_tau;
    let mut s = BatchSummary {
        jobs: n as u64,
        procs,
        slot_switches,
        ..BatchSummary::default()
    };
    let (mut wait, mut resp, mut sld, mut bsld, mut work) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let first = jobs.first().map_or(0, |j| j.submit);
    let mut last = first;
    for (j, o) in jobs.iter().zip(&outcomes) {
        let run = if o.killed { j.requested } else { j.runtime } as f64;
        let w = o.start - j.submit;
        let r = (o.end - j.submit) as f64;
        wait += w as f64;
        s.max_wait = s.max_wait.max(w);
        resp += r;
        sld += r / run.max(1.0);
        bsld += (r / run.max(tau)).max(1.0);
        work += j.procs as f64 * run;
        last = last.max(o.end);
        s.killed += o.killed as u64;
    }
    if n > 0 {
        let nf = n as f64;
        s.avg_wait = wait / nf;
        s.avg_response = resp / nf;
        s.avg_slowdown = sld / nf;
        s.avg_bounded_slowdown = bsld / nf;
    }
    s.first_submit = first;
    s.last_end = last;
    s.makespan = last - first;
    if s.makespan > 0 {
        s.utilization = work / (procs as f64 * s.makespan as f64);
        let mut area = 0.0;
        for w in queue_length.windows(2) {
            area += w[0].1 as f64 * (w[1].0 - w[0].0) as f64;
        }
        if let Some(&(t, q)) = queue_length.last() {
            area += q as f64 * last.saturating_sub(t) as f64;
        }
        s.avg_queue = area / s.makespan as f64;
    }
    s.max_queue = queue_length.iter().map(|p| p.1).max().unwrap_or(0);
    s.wall_seconds = wall.elapsed().as_secs_f64();
    BatchResult {
        policy,
        procs,
        bsld_tau: tau,
        jobs,
        outcomes,
        queue_length,
        summary: s,
        report: LoadReport::default(),
        header: SwfHeader::default(),
        resources,
        res_index,
    }
}

/// Gang scheduling of rigid jobs on a [`GangMatrix`] with `cfg.mpl` slots.
pub fn simulate_gang(
    jobs: Vec<BatchJob>,
    procs: u32,
    cfg: &BatchConfig,
) -> Result<BatchResult, BatchError> {
    let wall = Instant::now();
    cfg.validate()?;
    check_jobs(&jobs, procs)?;
    let n = jobs.len();
    let kill = cfg.kill_on_overrun;
    let mut m = GangMatrix::with_options(
        procs,
        Some(cfg.mpl),
        MatrixOptions {
            slot_allocation: cfg.slot_allocation,
            ..MatrixOptions::default()
        },
    )?;
    let mut outcomes = vec![
        Outcome {
            start: u64::MAX,
            end: u64::MAX,
            killed: false
        };
        n
    ];
    let mut remaining: Vec<u64> = vec![0; n];
    let mut slot_jobs: Vec<Vec<u32>> = vec![Vec::new(); cfg.mpl as usize];
    let mut occupied = 0u32;
    let mut queue: Vec<u32> = Vec::new();
    let mut cur: Option<SlotId> = None;
    let mut slot_end = u64::MAX;
    let mut last = 0u64; // progress of the running slot is accounted up to here
    let mut next = 0usize;
    let mut switches = 0u64;
    let mut series = Series { points: Vec::new() };
    let mut resources: Vec<Vec<(u32, u32)>> =
        vec![Vec::new(); if cfg.track_resources { n } else { 0 }];
    let mut finished: Vec<u32> = Vec::new();
    // Slots that received a job in this event's admission pass.
    let mut admitted: Vec<SlotId> = Vec::new();
    loop {
        let t_arr = jobs.get(next).map_or(u64::MAX, |j| j.submit);
        let t_done = match cur {
            Some(s) => slot_jobs[s.idx()]
                .iter()
                .map(|&i| last + remaining[i as usize])
                .min()
                .unwrap_or(u64::MAX),
            None => u64::MAX,
        };
        let t = t_arr.min(t_done).min(slot_end);
        if t == u64::MAX {
            break;
        }
        // Progress of the running slot, then completions.
        let mut changed = false;
        if let Some(s) = cur {
            let dt = t - last;
            finished.clear();
            for &i in &slot_jobs[s.idx()] {
                let r = &mut remaining[i as usize];
                *r -= dt;
                if *r == 0 {
                    finished.push(i);
                }
            }
            finished.sort_unstable();
            for &i in &finished {
                m.release(GangId(i as u64)).map_err(PolicyError::from)?;
                let v = &mut slot_jobs[s.idx()];
                let p = v.iter().position(|&x| x == i).expect("job in its slot");
                v.remove(p);
                if v.is_empty() {
                    occupied -= 1;
                }
                outcomes[i as usize].end = t;
                changed = true;
            }
        }
        last = t;
        // Submissions.
        while next < n && jobs[next].submit == t {
            queue.push(next as u32);
            next += 1;
            changed = true;
        }
        // Admission pass.
        if changed && !queue.is_empty() {
            let mut max_free = max_free_cells(&m, cfg.mpl);
            let mut k = 0;
            while k < queue.len() && max_free > 0 {
                let i = queue[k] as usize;
                let w = jobs[i].procs;
                if w > max_free {
                    if !cfg.gang_backfill {
                        break;
                    }
                    k += 1;
                    continue;
                }
                let a = m
                    .allocate(GangId(i as u64), w)
                    .map_err(PolicyError::from)?
                    .expect("a slot with enough free cells fits (lowest-free choice)");
                admitted.push(a.slot);
                let sv = &mut slot_jobs[a.slot.idx()];
                if sv.is_empty() {
                    occupied += 1;
                }
                sv.push(i as u32);
                let (run, killed) = effective_runtime(&jobs[i], kill);
                remaining[i] = run;
                outcomes[i].killed = killed;
                if cfg.track_resources {
                    let mut v: Vec<(u32, u32)> = Vec::new();
                    for p in &a.procs {
                        match v.last_mut() {
                            Some((_, e)) if *e + 1 == p.0 => *e = p.0,
                            _ => v.push((p.0, p.0)),
                        }
                    }
                    resources[i] = v;
                }
                queue.remove(k);
                max_free = max_free_cells(&m, cfg.mpl);
            }
        }
        // Zero-length jobs admitted into the running slot finish now.
        if let Some(s) = cur {
            if slot_jobs[s.idx()]
                .iter()
                .any(|&i| remaining[i as usize] == 0)
            {
                mark_started(&slot_jobs[s.idx()], &mut outcomes, t);
                admitted.clear();
                series.record(t, queue.len() as u32);
                continue;
            }
        }
        // Slot switch.
        let empty = cur.is_none_or(|s| slot_jobs[s.idx()].is_empty());
        let switching = empty || t >= slot_end;
        if switching {
            let nxt = next_occupied(&slot_jobs, cur);
            debug_assert_eq!(nxt, m.next_slot(cur, |_| true));
            if nxt != cur && cur.is_some() && nxt.is_some() {
                switches += 1;
            }
            cur = nxt;
            slot_end = if occupied > 1 {
                t + cfg.quantum
            } else {
                u64::MAX
            };
        } else if occupied > 1 && slot_end == u64::MAX {
            // A second slot was just opened: the running one gets a quantum.
            slot_end = t + cfg.quantum;
        }
        // Jobs of the slot that runs from now on have started (a job
        // admitted into a slot whose quantum ends now starts only when the
        // slot comes round again).
        if let Some(s) = cur {
            if switching || admitted.contains(&s) {
                mark_started(&slot_jobs[s.idx()], &mut outcomes, t);
            }
        }
        admitted.clear();
        series.record(t, queue.len() as u32);
    }
    let (res, idx) = if cfg.track_resources {
        let mut res = Vec::new();
        let mut idx = Vec::with_capacity(n + 1);
        for v in &resources {
            idx.push(res.len() as u32);
            res.extend_from_slice(v);
        }
        idx.push(res.len() as u32);
        (res, idx)
    } else {
        (Vec::new(), Vec::new())
    };
    Ok(finish(
        "gang",
        procs,
        cfg,
        jobs,
        outcomes,
        series.points,
        switches,
        res,
        idx,
        wall,
    ))
}

fn mark_started(jobs: &[u32], outcomes: &mut [Outcome], t: u64) {
    for &i in jobs {
        let o = &mut outcomes[i as usize];
        if o.start == u64::MAX {
            o.start = t;
        }
    }
}

/// The matrix's round robin ([`GangMatrix::next_slot`] with every gang
/// ready), computed from the machine's per-slot job lists: the first
/// occupied slot after `cur`, wrapping around to `cur` itself last.
fn next_occupied(slot_jobs: &[Vec<u32>], cur: Option<SlotId>) -> Option<SlotId> {
    let n = slot_jobs.len();
    let start = cur.map_or(0, |s| s.idx() + 1);
    (0..n)
        .map(|k| (start + k) % n)
        .find(|&i| !slot_jobs[i].is_empty())
        .map(|i| SlotId(i as u32))
}

/// The most free cells any slot offers, counting a new slot (all `procs`)
/// if fewer than `mpl` slots exist.
fn max_free_cells(m: &GangMatrix, mpl: u32) -> u32 {
    if m.num_slots() < mpl {
        return m.procs();
    }
    (0..m.num_slots())
        .map(|s| m.free_cells(SlotId(s)))
        .max()
        .unwrap_or(0)
}

/// Loads a trace file and runs it under `cfg`.
pub fn run_trace(path: impl AsRef<Path>, cfg: &BatchConfig) -> Result<BatchResult, BatchError> {
    cfg.validate()?;
    let trace = swf::load_file(path, &cfg.rules)?;
    run_loaded(trace, cfg)
}

/// Runs an already loaded trace under `cfg`.
pub fn run_loaded(trace: Trace, cfg: &BatchConfig) -> Result<BatchResult, BatchError> {
    let header = trace.header.clone();
    let (jobs, procs, report) = prepare(trace, cfg)?;
    let mut r = simulate(jobs, procs, cfg)?;
    r.report = report;
    r.header = header;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(id: i64, submit: u64, runtime: u64, procs: u32, requested: u64) -> BatchJob {
        BatchJob::new(id, submit, runtime, procs, requested)
    }

    fn starts(jobs: &[BatchJob], procs: u32, policy: &str) -> Vec<u64> {
        let mut c = BatchConfig::default();
        c.set("policy", &Value::Str(policy.into())).unwrap();
        let r = simulate(jobs.to_vec(), procs, &c).unwrap();
        r.outcomes.iter().map(|o| o.start).collect()
    }

    #[test]
    fn completions_before_arrivals_at_equal_times() {
        // Job 0 holds the whole machine until 10; job 1 arrives at exactly
        // 10 and starts at 10 under every policy.
        let jobs = [j(1, 0, 10, 4, 10), j(2, 10, 5, 4, 5)];
        for p in ["fcfs", "easy", "conservative", "gang"] {
            assert_eq!(starts(&jobs, 4, p), vec![0, 10], "{p}");
        }
    }

    #[test]
    fn zero_runtime_jobs_finish_at_their_start() {
        let jobs = [j(1, 0, 0, 4, 1), j(2, 0, 0, 4, 1), j(3, 0, 3, 4, 3)];
        for p in ["fcfs", "easy", "conservative", "gang"] {
            let mut c = BatchConfig::default();
            c.set("policy", &Value::Str(p.into())).unwrap();
            let r = simulate(jobs.to_vec(), 4, &c).unwrap();
            let se: Vec<(u64, u64)> = r.outcomes.iter().map(|o| (o.start, o.end)).collect();
            assert_eq!(se, vec![(0, 0), (0, 0), (0, 3)], "{p}");
        }
    }

    #[test]
    fn kill_on_overrun() {
        let jobs = [j(1, 0, 100, 2, 50), j(2, 0, 10, 2, 10)];
        let mut c = BatchConfig {
            kill_on_overrun: true,
            ..BatchConfig::default()
        };
        let r = simulate(jobs.to_vec(), 2, &c).unwrap();
        assert_eq!(r.outcomes[0].end, 50);
        assert!(r.outcomes[0].killed);
        assert_eq!(r.outcomes[1].start, 50);
        assert_eq!(r.summary.killed, 1);
        c.kill_on_overrun = false;
        let r = simulate(jobs.to_vec(), 2, &c).unwrap();
        assert_eq!(r.outcomes[1].start, 100);
    }

    #[test]
    fn metrics_and_exports() {
        // 2 procs: A(2 procs, 0..10), B submitted 0 waits until 10, runs 5.
        let jobs = [j(7, 0, 10, 2, 20), j(8, 0, 5, 1, 5)];
        let r = simulate(jobs.to_vec(), 2, &BatchConfig::default()).unwrap();
        let s = &r.summary;
        assert_eq!(s.makespan, 15);
        assert_eq!(s.avg_wait, 5.0);
        assert_eq!(s.avg_response, 12.5);
        // bsld: A 10/10 = 1; B 15/max(5,10) = 1.5.
        assert_eq!(s.avg_bounded_slowdown, 1.25);
        assert_eq!(s.avg_slowdown, (1.0 + 3.0) / 2.0);
        assert!((s.utilization - 25.0 / 30.0).abs() < 1e-12);
        assert_eq!(r.queue_length, vec![(0, 1), (10, 0)]);
        assert!((s.avg_queue - 10.0 / 15.0).abs() < 1e-12);
        assert_eq!(r.resources(0), &[(0, 1)]);
        assert_eq!(r.resources(1), &[(0, 0)]);
        let mut csv = Vec::new();
        r.write_jobs_csv(&mut csv).unwrap();
        let csv = String::from_utf8(csv).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], JOBS_CSV_COLUMNS.join(","));
        assert_eq!(
            lines[2],
            "8,w0,delay,0,1,5,1,COMPLETED_SUCCESSFULLY,10,5,15,10,15,3,0,-1,"
        );
        let mut swf_out = Vec::new();
        r.write_swf(&mut swf_out).unwrap();
        let (h, recs) = swf::read_all(&swf_out[..]).unwrap();
        assert_eq!(h.max_procs, Some(2));
        assert_eq!(recs[1].wait_time, 10);
        assert_eq!(recs[1].run_time, 5);
        assert_eq!(recs[1].status, 1);
    }

    #[test]
    fn config_keys_and_errors() {
        let mut c = BatchConfig::default();
        for (k, v) in [
            ("policy", Value::Str("gang".into())),
            ("procs", Value::Int(64)),
            ("kill_on_overrun", Value::Bool(true)),
            ("bsld_tau", Value::Float(60.0)),
            ("procs_rule", Value::Str("requested".into())),
            ("missing_requested_time", Value::Str("factor".into())),
            ("requested_time_factor", Value::Float(2.0)),
            ("missing_runtime", Value::Str("requested".into())),
            ("zero_runtime", Value::Str("drop".into())),
            ("cancelled", Value::Str("keep".into())),
            ("unsorted", Value::Str("reject".into())),
            ("too_wide", Value::Str("clamp".into())),
            ("mpl", Value::Int(3)),
            ("quantum", Value::Int(30)),
            ("gang_backfill", Value::Str("false".into())),
            ("slot_allocation", Value::Str("best_fit".into())),
            ("load_factor", Value::Float(1.2)),
            ("track_resources", Value::Bool(false)),
        ] {
            c.set(k, &v).unwrap();
        }
        assert_eq!(KEYS.len(), 18);
        c.validate().unwrap();
        assert_eq!(c.policy, BatchPolicyKind::Gang);
        assert_eq!(c.procs, Some(64));
        assert_eq!(c.rules.requested_time_factor, 2.0);
        let e = c.set("policy", &Value::Str("sjf".into())).unwrap_err();
        assert_eq!(e.field, "policy");
        assert_eq!(e.allowed, "fcfs|easy|conservative|gang");
        let e = c.set("nope", &Value::Int(1)).unwrap_err();
        assert_eq!(e.message, "unknown key");
        c.mpl = 0;
        assert_eq!(c.validate().unwrap_err().field, "mpl");
        c.mpl = 2;
        c.bsld_tau = 0.0;
        assert_eq!(c.validate().unwrap_err().field, "bsld_tau");
    }

    #[test]
    fn bad_job_lists_are_errors() {
        let c = BatchConfig::default();
        let e = simulate(vec![j(1, 0, 1, 5, 1)], 4, &c).unwrap_err();
        assert!(e.to_string().contains("needs 5 processors"), "{e}");
        let e = simulate(vec![j(1, 5, 1, 1, 1), j(2, 4, 1, 1, 1)], 4, &c).unwrap_err();
        assert!(e.to_string().contains("sort the jobs"), "{e}");
    }

    #[test]
    fn too_wide_rules() {
        let trace = || Trace {
            jobs: vec![j(1, 0, 5, 8, 5), j(2, 1, 5, 2, 5)],
            report: LoadReport {
                records: 2,
                kept: 2,
                ..LoadReport::default()
            },
            ..Trace::default()
        };
        let mut c = BatchConfig {
            procs: Some(4),
            ..BatchConfig::default()
        };
        let (jobs, p, rep) = prepare(trace(), &c).unwrap();
        assert_eq!(
            (jobs.len(), p, rep.dropped_too_wide, rep.kept),
            (1, 4, 1, 1)
        );
        c.too_wide = TooWide::Clamp;
        let (jobs, _, rep) = prepare(trace(), &c).unwrap();
        assert_eq!((jobs[0].procs, rep.repaired_too_wide), (4, 1));
        c.too_wide = TooWide::Error;
        assert!(prepare(trace(), &c).is_err());
        c.procs = None;
        let e = prepare(trace(), &c).unwrap_err();
        assert!(e.to_string().starts_with("procs:"), "{e}");
    }

    #[test]
    fn gang_time_slices_two_slots() {
        // 4 procs, mpl 2, quantum 10. A(4 wide, 30 s) at 0 in slot 0; B(4
        // wide, 15 s) at 0 in slot 1. Slot 0 runs 0..10 (A:20 left), slot 1
        // 10..20 (B:5 left), slot 0 20..30 (A:10 left), slot 1 30..35 (B
        // ends), slot 0 35..45 (A ends, alone, no more switches).
        let jobs = [j(1, 0, 30, 4, 30), j(2, 0, 15, 4, 15)];
        let c = BatchConfig {
            policy: BatchPolicyKind::Gang,
            mpl: 2,
            quantum: 10,
            ..BatchConfig::default()
        };
        let r = simulate(jobs.to_vec(), 4, &c).unwrap();
        let se: Vec<(u64, u64)> = r.outcomes.iter().map(|o| (o.start, o.end)).collect();
        assert_eq!(se, vec![(0, 45), (10, 35)]);
        assert_eq!(r.summary.slot_switches, 4);
        // A third job (2 wide) submitted at 1 finds both slots full (mpl 2)
        // and waits. B ends at 35 inside slot 1's quantum (30..40); the
        // emptied slot is reused for C, which runs at once: 35..40. A then
        // runs alone 40..50.
        let jobs = [j(1, 0, 30, 4, 30), j(2, 0, 15, 4, 15), j(3, 1, 5, 2, 5)];
        let r = simulate(jobs.to_vec(), 4, &c).unwrap();
        let se: Vec<(u64, u64)> = r.outcomes.iter().map(|o| (o.start, o.end)).collect();
        assert_eq!(se, vec![(0, 50), (10, 35), (35, 40)]);
    }

    #[test]
    fn load_scaling_compresses_interarrivals() {
        let mut jobs = vec![
            j(1, 100, 10, 2, 10),
            j(2, 110, 10, 2, 10),
            j(3, 130, 10, 2, 10),
        ];
        let before = offered_load(&jobs, 4);
        scale_load(&mut jobs, 2.0);
        let s: Vec<u64> = jobs.iter().map(|x| x.submit).collect();
        assert_eq!(s, vec![100, 105, 115]);
        assert!((offered_load(&jobs, 4) - 2.0 * before).abs() < 1e-12);
        scale_load(&mut jobs, 0.5);
        let s: Vec<u64> = jobs.iter().map(|x| x.submit).collect();
        assert_eq!(s, vec![100, 110, 130]);
    }

    #[test]
    fn lublin_workload_runs_under_every_policy() {
        let mut lc = crate::lublin::LublinConfig::for_machine(64);
        lc.jobs = 2000;
        let trace = crate::lublin::generate(&lc, &SwfRules::default()).unwrap();
        assert_eq!(trace.header.machine_procs(), Some(64));
        for p in ["fcfs", "easy", "conservative", "gang"] {
            let mut c = BatchConfig::default();
            c.set("policy", &Value::Str(p.into())).unwrap();
            c.set("load_factor", &Value::Float(1.5)).unwrap();
            let r = run_loaded(trace.clone(), &c).unwrap();
            assert_eq!(r.summary.jobs, 2000, "{p}");
            assert_eq!(r.procs, 64);
        }
    }

    #[test]
    fn absurd_times_are_errors() {
        let c = BatchConfig::default();
        let e = simulate(vec![j(1, 0, MAX_TIME, 1, 1)], 4, &c).unwrap_err();
        assert!(e.to_string().contains("2^40"), "{e}");
        let e = simulate(vec![j(1, 0, 1, 1, u64::MAX)], 4, &c).unwrap_err();
        assert!(e.to_string().contains("2^40"), "{e}");
    }
}
