//! The batch machine's configuration: [`BatchConfig`], its keys
//! ([`BatchConfig::set`], [`KEYS`]) and [`BatchConfig::validate`].

use crate::machines::pools::Value;
use crate::workloads::swf::{
    ExtraFields, KeepDrop, MissingRequested, MissingRuntime, ProcsRule, SwfRules, Unsorted,
};
use parsched_core::policy::gang::SlotAllocation;
use parsched_core::ConfigError;
use serde::{Deserialize, Serialize};

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

/// Where the jobs come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadKind {
    /// An SWF trace file (given beside the configuration).
    #[default]
    Trace,
    /// The Lublin–Feitelson model ([`crate::workloads::lublin`]), generated in memory
    /// from the `workload_*` keys for `procs` processors (128 when unset).
    Lublin,
}

/// Machine size of a generated workload when `procs` is unset: the
/// published Lublin–Feitelson model's 128 processors.
pub const LUBLIN_DEFAULT_PROCS: u32 = 128;

/// The largest generated workload (jobs): about 1.6 GB of jobs in memory.
pub const MAX_WORKLOAD_JOBS: u64 = 50_000_000;

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
    /// (see [`scale_load`](super::scale_load)); 1 leaves the trace unchanged.
    pub load_factor: f64,
    /// Record which processors each space-shared job gets (lowest free
    /// first), for `allocated_resources` in the jobs CSV.
    pub track_resources: bool,
    /// The jobs: a trace file or a generated workload.
    pub workload: WorkloadKind,
    /// Generated workload: number of jobs.
    pub workload_jobs: u64,
    /// Generated workload: offered load the arrivals are scaled to
    /// (`None`: the model's own arrival process).
    pub workload_load: Option<f64>,
    /// Generated workload: the model's random seed (its own streams, so
    /// every policy sees the same jobs).
    pub workload_seed: u64,
    /// Generated workload: batch and interactive job types (the published
    /// model) or the typeless variant.
    pub workload_types: bool,
    /// A gang run whose estimated event count ([`BatchConfig::estimate_events`])
    /// is above this is refused before it starts; 0: no limit.
    pub max_events: u64,
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
            workload: WorkloadKind::Trace,
            workload_jobs: 10_000,
            workload_load: None,
            workload_seed: 1,
            workload_types: true,
            max_events: crate::machines::common::DEFAULT_MAX_EVENTS,
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
    "extra_fields",
    "too_wide",
    "mpl",
    "quantum",
    "gang_backfill",
    "slot_allocation",
    "load_factor",
    "track_resources",
    "workload",
    "workload_jobs",
    "workload_load",
    "workload_seed",
    "workload_types",
    "max_events",
];

fn shown(v: &Value) -> String {
    // Not an exhaustive match, so that a new `Value` variant still compiles.
    if let Value::Str(s) = v {
        format!("{:?}", parsched_core::clip(s, parsched_core::ECHO_MAX))
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
            "extra_fields" => {
                r.extra_fields = match choice(key, v, &["ignore", "error"])? {
                    "error" => ExtraFields::Error,
                    _ => ExtraFields::Ignore,
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
            "workload" => {
                self.workload = match choice(key, v, &["trace", "lublin"])? {
                    "lublin" => WorkloadKind::Lublin,
                    _ => WorkloadKind::Trace,
                }
            }
            "workload_jobs" => self.workload_jobs = uint(key, v)?,
            "workload_load" => {
                self.workload_load = match v {
                    Value::Str(s) if s == "none" || s == "model" => None,
                    _ => Some(float(key, v)?),
                }
            }
            "workload_seed" => self.workload_seed = uint(key, v)?,
            "workload_types" => self.workload_types = boolean(key, v)?,
            "max_events" => self.max_events = uint(key, v)?,
            _ => return Err(ConfigError::new(key, "unknown key", KEYS.join(", "))),
        }
        Ok(())
    }

    /// An upper estimate of the events of a run of `jobs` (sorted by submit
    /// time): a few per job, and under gang scheduling one per quantum while
    /// any job runs (at most the sum of the run times, as every quantum
    /// serves at least one job).
    pub fn estimate_events(&self, jobs: &[crate::workloads::swf::BatchJob]) -> f64 {
        let n = jobs.len() as f64;
        let mut events = 64.0 + 4.0 * n;
        if self.policy == BatchPolicyKind::Gang {
            let run: f64 = jobs.iter().map(|j| j.runtime as f64).sum();
            events += 2.0 * run / self.quantum.max(1) as f64;
        }
        events
    }

    /// Refuses a run of `jobs` estimated above `max_events`.
    pub fn check_events(
        &self,
        jobs: &[crate::workloads::swf::BatchJob],
    ) -> Result<(), ConfigError> {
        let est = self.estimate_events(jobs);
        if self.max_events > 0 && est > self.max_events as f64 {
            return Err(ConfigError::new(
                "max_events",
                format!(
                    "the run would take about {est:.1e} events (~{} at 10^7 events/s; \
                     gang scheduling: one per quantum of {} s over the jobs' total run \
                     time), above max_events = {}",
                    crate::machines::common::human_ms(est / 1e7 * 1e3),
                    self.quantum,
                    self.max_events
                ),
                "a longer quantum, or max_events=0 (or a larger limit) to run it anyway",
            ));
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
        if !(1..=MAX_WORKLOAD_JOBS).contains(&self.workload_jobs) {
            return Err(ConfigError::new(
                "workload_jobs",
                format!("{} jobs", self.workload_jobs),
                format!("an integer in 1..={MAX_WORKLOAD_JOBS}"),
            ));
        }
        if let Some(l) = self.workload_load {
            if !(l > 0.0 && l <= 100.0) {
                return Err(ConfigError::new(
                    "workload_load",
                    format!("{l} is not an offered load"),
                    "a number in (0, 100], or none (the model's own arrivals)",
                ));
            }
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
