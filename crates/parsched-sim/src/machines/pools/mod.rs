//! Seed 000's model as a typed configuration, and its runner.
//!
//! [`PoolsConfig`]'s defaults are Table 2 of Zhou & Brecht (SIGMETRICS 1991);
//! keys are the paper's symbols. Choices the paper leaves open are named
//! options (see `docs/policies/pools.md`). [`run`] performs independent
//! replications — in parallel threads if asked, with identical results — and
//! reports the mean response time with a 90% confidence interval.

pub mod machine;
pub mod overheads;

use crate::engine::Engine;
use crate::machines::pools::machine::{
    Combine, JobRecord, MachineConfig, MachineStats, Overheads, PoolMachine, SwitchCost,
};
use crate::rng::rep_seed;
use crate::stats::{batch_means, mean_ci90};
use crate::workloads::forkjoin::{
    check_arrivals, Arrival, ArrivalList, ForkJoinWorkload, JobSource, WorkloadKind,
};
use parsched_core::policy::pools::{
    Parallelism, PoolPlacementConfig, PoolPolicy, Rounding, Spanning, TieBreak, ZhouBrecht,
};
use parsched_core::time::units_to_ticks;
use parsched_core::topology::{PoolLayout, Topology};
use parsched_core::ConfigError;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// A configuration value as given by a user (TOML, `--set`, a Python dict).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// A list of numbers (e.g. `samples`).
    List(Vec<f64>),
}

impl Value {
    /// A number.
    pub fn as_f64(&self, key: &str) -> Result<f64, ConfigError> {
        match self {
            Value::Int(i) => Ok(*i as f64),
            Value::Float(f) => Ok(*f),
            Value::Str(s) => s
                .trim()
                .parse()
                .map_err(|_| type_err(key, self, "a number")),
            Value::Bool(_) | Value::List(_) => Err(type_err(key, self, "a number")),
        }
    }

    /// A list of numbers: a list, one number, or text of numbers separated by
    /// commas or white space.
    pub fn as_f64_list(&self, key: &str) -> Result<Vec<f64>, ConfigError> {
        match self {
            Value::List(v) => Ok(v.clone()),
            Value::Int(_) | Value::Float(_) => Ok(vec![self.as_f64(key)?]),
            Value::Str(s) => s
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|t| !t.is_empty())
                .map(|t| {
                    t.parse::<f64>().map_err(|_| {
                        ConfigError::new(
                            key,
                            format!(
                                "{:?} is not a number",
                                parsched_core::clip(t, parsched_core::ECHO_MAX)
                            ),
                            "numbers separated by commas",
                        )
                    })
                })
                .collect(),
            Value::Bool(_) => Err(type_err(key, self, "a list of numbers")),
        }
    }
    /// A non-negative integer.
    pub fn as_u64(&self, key: &str) -> Result<u64, ConfigError> {
        match self {
            Value::Int(i) if *i >= 0 => Ok(*i as u64),
            Value::Float(f) if *f >= 0.0 && f.fract() == 0.0 && *f < 1e18 => Ok(*f as u64),
            Value::Str(s) => s
                .trim()
                .parse()
                .map_err(|_| type_err(key, self, "a non-negative integer")),
            _ => Err(type_err(key, self, "a non-negative integer")),
        }
    }
    /// A non-negative integer below 2^32.
    pub fn as_u32(&self, key: &str) -> Result<u32, ConfigError> {
        let v = self.as_u64(key)?;
        u32::try_from(v).map_err(|_| type_err(key, self, "an integer below 2^32"))
    }
    /// One of `allowed`.
    pub fn as_str(&self, key: &str, allowed: &[&str]) -> Result<String, ConfigError> {
        match self {
            Value::Str(s) if allowed.contains(&s.as_str()) => Ok(s.clone()),
            _ => Err(type_err(key, self, &allowed.join("|"))),
        }
    }
    /// A boolean (or the strings `true` / `false`).
    pub fn as_bool(&self, key: &str) -> Result<bool, ConfigError> {
        match self {
            Value::Bool(b) => Ok(*b),
            Value::Str(s) if s == "true" || s == "false" => Ok(s == "true"),
            _ => Err(type_err(key, self, "true|false")),
        }
    }
}

fn type_err(key: &str, v: &Value, allowed: &str) -> ConfigError {
    let shown = match v {
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Str(s) => format!("{:?}", parsched_core::clip(s, parsched_core::ECHO_MAX)),
        Value::List(v) => format!("a list of {} numbers", v.len()),
    };
    ConfigError::new(key, format!("{shown} is not accepted"), allowed)
}

/// How the confidence interval is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CiMethod {
    /// Replication means when `reps >= 2`, batch means when `reps == 1`.
    #[default]
    Auto,
    /// Across independent replications (warm-up deleted from each).
    Replications,
    /// 10 batches of consecutive jobs per replication, all batches pooled.
    BatchMeans,
}

/// Seed 000 section 3.2's spanning choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SpanningMode {
    None,
    #[default]
    Limited,
    Unlimited,
}

/// Seed 000 section 3.2's parallelism choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ParallelismMode {
    #[default]
    Restricted,
    Unrestricted,
}

/// Seed 000's model. Field names follow the paper's symbols (Table 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolsConfig {
    /// P: number of processors.
    #[serde(rename = "P")]
    pub procs: u32,
    /// L: load level, the processors' utilisation without overheads.
    #[serde(rename = "L")]
    pub load: f64,
    /// D: mean desired parallelism.
    #[serde(rename = "D")]
    pub mean_parallelism: f64,
    /// T: time slice.
    #[serde(rename = "T")]
    pub slice: f64,
    /// p: processors per pool (equal pools).
    pub pool_size: u32,
    /// F: level control for the degree of pool spanning (used when `spanning` is limited).
    #[serde(rename = "F")]
    pub f: f64,
    /// G: level control for actual parallelism (used when `parallelism` is restricted).
    #[serde(rename = "G")]
    pub g: f64,
    pub spanning: SpanningMode,
    pub parallelism: ParallelismMode,
    pub f_rounding: Rounding,
    pub g_rounding: Rounding,
    pub tie_break: TieBreak,
    pub overheads: Overheads,
    pub workload: WorkloadKind,
    pub init: f64,
    #[serde(rename = "final")]
    pub final_: f64,
    pub para_unit: f64,
    pub spread: f64,
    /// Jobs per replication (including warm-up).
    pub jobs: u64,
    /// Jobs discarded at the start of each replication.
    pub warmup: u64,
    pub reps: u32,
    pub seed: u64,
    pub ci: CiMethod,
    /// A run whose estimated event count ([`PoolsConfig::estimate_events`])
    /// is above this is refused before it starts; 0: no limit.
    #[serde(default = "default_max_events")]
    pub max_events: u64,
    /// Jobs to run instead of the synthetic workload.
    #[serde(skip)]
    pub arrivals: Option<Vec<Arrival>>,
}

impl Default for PoolsConfig {
    fn default() -> Self {
        PoolsConfig {
            procs: 60,
            load: 0.6,
            mean_parallelism: 20.0,
            slice: 10.0,
            pool_size: 30,
            f: 0.8,
            g: 0.5,
            spanning: SpanningMode::Limited,
            parallelism: ParallelismMode::Restricted,
            f_rounding: Rounding::Nearest,
            g_rounding: Rounding::Nearest,
            tie_break: TieBreak::LowestIndex,
            overheads: Overheads::default(),
            workload: WorkloadKind::Correlated,
            init: 10.0,
            final_: 10.0,
            para_unit: 100.0,
            spread: 10.0,
            jobs: 10_000,
            warmup: 1_000,
            reps: 5,
            seed: 1,
            ci: CiMethod::Auto,
            max_events: crate::machines::common::DEFAULT_MAX_EVENTS,
            arrivals: None,
        }
    }
}

/// Every key [`PoolsConfig::set`] accepts.
pub const KEYS: &[&str] = &[
    "P",
    "L",
    "D",
    "T",
    "F",
    "G",
    "p0",
    "t",
    "W",
    "S",
    "r",
    "c",
    "pool_size",
    "spanning",
    "parallelism",
    "jobs",
    "warmup",
    "reps",
    "seed",
    "workload",
    "init",
    "final",
    "para_unit",
    "spread",
    "combine",
    "switch_cost",
    "f_rounding",
    "g_rounding",
    "tie_break",
    "inflate_master",
    "ci",
    "max_events",
];

fn default_max_events() -> u64 {
    crate::machines::common::DEFAULT_MAX_EVENTS
}

fn rounding(s: &str) -> Rounding {
    match s {
        "floor" => Rounding::Floor,
        "ceil" => Rounding::Ceil,
        _ => Rounding::Nearest,
    }
}

impl PoolsConfig {
    /// Sets one key (a paper symbol or an option name).
    pub fn set(&mut self, key: &str, v: &Value) -> Result<(), ConfigError> {
        let ov = &mut self.overheads;
        match key {
            "P" => self.procs = v.as_u32(key)?,
            "L" => self.load = v.as_f64(key)?,
            "D" => self.mean_parallelism = v.as_f64(key)?,
            "T" => self.slice = v.as_f64(key)?,
            "F" => self.f = v.as_f64(key)?,
            "G" => self.g = v.as_f64(key)?,
            "p0" => ov.p0 = v.as_u32(key)?,
            "t" => ov.t = v.as_f64(key)?,
            "W" => ov.w = v.as_f64(key)?,
            "S" => ov.s = v.as_f64(key)?,
            "r" => ov.r = v.as_f64(key)?,
            "c" => ov.c = v.as_f64(key)?,
            "pool_size" => self.pool_size = v.as_u32(key)?,
            "spanning" => {
                self.spanning = match v.as_str(key, &["none", "limited", "unlimited"])?.as_str() {
                    "none" => SpanningMode::None,
                    "unlimited" => SpanningMode::Unlimited,
                    _ => SpanningMode::Limited,
                }
            }
            "parallelism" => {
                self.parallelism = match v.as_str(key, &["restricted", "unrestricted"])?.as_str() {
                    "unrestricted" => ParallelismMode::Unrestricted,
                    _ => ParallelismMode::Restricted,
                }
            }
            "jobs" => self.jobs = v.as_u64(key)?,
            "warmup" => self.warmup = v.as_u64(key)?,
            "reps" => self.reps = v.as_u32(key)?,
            "seed" => self.seed = v.as_u64(key)?,
            "workload" => {
                self.workload = match v.as_str(key, &["correlated", "uncorrelated"])?.as_str() {
                    "uncorrelated" => WorkloadKind::Uncorrelated,
                    _ => WorkloadKind::Correlated,
                }
            }
            "init" => self.init = v.as_f64(key)?,
            "final" => self.final_ = v.as_f64(key)?,
            "para_unit" => self.para_unit = v.as_f64(key)?,
            "spread" => self.spread = v.as_f64(key)?,
            "combine" => {
                ov.combine = match v.as_str(key, &["add", "multiply"])?.as_str() {
                    "multiply" => Combine::Multiply,
                    _ => Combine::Add,
                }
            }
            "switch_cost" => {
                ov.switch_cost = match v
                    .as_str(key, &["every_dispatch", "preemption_only"])?
                    .as_str()
                {
                    "preemption_only" => SwitchCost::PreemptionOnly,
                    _ => SwitchCost::EveryDispatch,
                }
            }
            "f_rounding" => {
                self.f_rounding = rounding(&v.as_str(key, &["nearest", "floor", "ceil"])?)
            }
            "g_rounding" => {
                self.g_rounding = rounding(&v.as_str(key, &["nearest", "floor", "ceil"])?)
            }
            "tie_break" => {
                self.tie_break = match v.as_str(key, &["lowest_index", "most_idle"])?.as_str() {
                    "most_idle" => TieBreak::MostIdle,
                    _ => TieBreak::LowestIndex,
                }
            }
            "inflate_master" => ov.inflate_master = v.as_bool(key)?,
            "ci" => {
                self.ci = match v
                    .as_str(key, &["auto", "replications", "batch_means"])?
                    .as_str()
                {
                    "replications" => CiMethod::Replications,
                    "batch_means" => CiMethod::BatchMeans,
                    _ => CiMethod::Auto,
                }
            }
            "max_events" => self.max_events = v.as_u64(key)?,
            _ => return Err(ConfigError::new(key, "unknown key", KEYS.join(", "))),
        }
        Ok(())
    }

    /// Checks every value; the error names the key and what is allowed.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let nonneg = |field: &str, v: f64| -> Result<(), ConfigError> {
            if v >= 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err(ConfigError::new(
                    field,
                    format!("{v} is negative or not finite"),
                    "a finite number >= 0",
                ))
            }
        };
        if self.procs == 0 {
            return Err(ConfigError::new("P", "0 processors", "an integer >= 1"));
        }
        if !(self.load > 0.0 && self.load < 1.0) {
            return Err(ConfigError::new(
                "L",
                format!("{} is outside (0, 1)", self.load),
                "0 < L < 1",
            ));
        }
        if !(self.slice > 0.0 && self.slice.is_finite()) || units_to_ticks(self.slice) == 0 {
            return Err(ConfigError::new(
                "T",
                format!("{} is not positive", self.slice),
                "T > 0",
            ));
        }
        PoolLayout::equal(&Topology::flat(self.procs)?, self.pool_size)?;
        if !(self.f >= 0.0 && self.f.is_finite()) {
            return Err(ConfigError::new(
                "F",
                format!("{} is negative or not finite", self.f),
                "F >= 0",
            ));
        }
        if !(0.0..=1.0).contains(&self.g) {
            return Err(ConfigError::new(
                "G",
                format!("{} is outside [0, 1]", self.g),
                "0 <= G <= 1",
            ));
        }
        self.placement().validate()?;
        let ov = &self.overheads;
        for (k, v) in [
            ("t", ov.t),
            ("W", ov.w),
            ("S", ov.s),
            ("r", ov.r),
            ("c", ov.c),
        ] {
            nonneg(k, v)?;
        }
        for (k, v) in [
            ("init", self.init),
            ("final", self.final_),
            ("para_unit", self.para_unit),
            ("spread", self.spread),
        ] {
            nonneg(k, v)?;
        }
        if self.reps == 0 {
            return Err(ConfigError::new(
                "reps",
                "0 replications",
                "an integer >= 1",
            ));
        }
        match &self.arrivals {
            Some(list) => {
                check_arrivals(list, self.procs)?;
                if list.is_empty() {
                    return Err(ConfigError::new("arrivals", "no jobs", "at least one job"));
                }
                if self.warmup >= list.len() as u64 {
                    return Err(ConfigError::new(
                        "warmup",
                        format!(
                            "{} >= {} jobs in the arrivals list",
                            self.warmup,
                            list.len()
                        ),
                        "fewer than the number of jobs",
                    ));
                }
            }
            None => {
                if self.jobs == 0 {
                    return Err(ConfigError::new("jobs", "0 jobs", "an integer >= 1"));
                }
                if self.warmup >= self.jobs {
                    return Err(ConfigError::new(
                        "warmup",
                        format!("{} >= jobs = {}", self.warmup, self.jobs),
                        "0 <= warmup < jobs",
                    ));
                }
                self.workload_model().generator(0)?;
                if self.mean_demand() <= 0.0 {
                    return Err(ConfigError::new(
                        "para_unit",
                        "jobs have no work",
                        "init + para_unit·D + final > 0",
                    ));
                }
            }
        }
        let est = self.estimate_events();
        if self.max_events > 0 && est > self.max_events as f64 {
            return Err(ConfigError::new(
                "max_events",
                format!(
                    "the run would take about {est:.1e} events (~{} at 10^7 events/s; \
                     estimated from reps, jobs, their parallelism and work, and the time \
                     slice T), above max_events = {}",
                    crate::machines::common::human_ms(est / 1e7 * 1e3),
                    self.max_events
                ),
                "fewer jobs or reps, a longer T, or max_events=0 (or a larger limit) to run \
                 it anyway",
            ));
        }
        Ok(())
    }

    /// An upper estimate of a run's events (all replications), from the
    /// configuration alone: per job its arrival, the master's phases and
    /// a few events per thread (d threads, d the desired parallelism), and
    /// per processor one event per time slice T of work (twice the work,
    /// for the overheads and slices cut short). `validate` refuses a run
    /// above `max_events`; a test checks the estimate against real runs.
    pub fn estimate_events(&self) -> f64 {
        let (jobs, threads, work) = match &self.arrivals {
            Some(list) => {
                let threads: f64 = list.iter().map(|a| a.d as f64).sum();
                let work: f64 = list
                    .iter()
                    .map(|a| {
                        self.init + a.para_work.unwrap_or(self.para_unit * a.d as f64) + self.final_
                    })
                    .sum();
                (list.len() as f64, threads, work)
            }
            None => {
                let n = self.jobs as f64;
                (n, n * self.mean_parallelism, n * self.mean_demand())
            }
        };
        let slices = if self.slice > 0.0 {
            2.0 * work / self.slice
        } else {
            0.0
        };
        self.reps as f64 * (64.0 + 8.0 * jobs + 4.0 * threads + slices)
    }

    /// The placement policy's options.
    pub fn placement(&self) -> PoolPlacementConfig {
        PoolPlacementConfig {
            spanning: match self.spanning {
                SpanningMode::None => Spanning::None,
                SpanningMode::Limited => Spanning::Limited { f: self.f },
                SpanningMode::Unlimited => Spanning::Unlimited,
            },
            parallelism: match self.parallelism {
                ParallelismMode::Restricted => Parallelism::Restricted { g: self.g },
                ParallelismMode::Unrestricted => Parallelism::Unrestricted,
            },
            f_rounding: self.f_rounding,
            g_rounding: self.g_rounding,
            tie_break: self.tie_break,
        }
    }

    fn mean_demand(&self) -> f64 {
        self.workload_model().mean_demand()
    }

    fn workload_model(&self) -> ForkJoinWorkload {
        ForkJoinWorkload {
            procs: self.procs,
            load: self.load,
            mean_parallelism: self.mean_parallelism,
            init: self.init,
            final_: self.final_,
            para_unit: self.para_unit,
            spread: self.spread,
            kind: self.workload,
            jobs: self.jobs,
        }
    }
}

/// The outcome of one replication.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepResult {
    pub rep: u32,
    pub seed: u64,
    pub stats: MachineStats,
    pub events: u64,
    pub makespan: f64,
    /// Mean response time of the measured (post-warm-up) jobs.
    pub mean_response: f64,
    pub mean_parallelism: f64,
    pub utilization: f64,
    pub measured: u64,
    /// Response times of measured jobs in arrival order.
    #[serde(skip)]
    pub responses: Vec<f64>,
    /// Every job's record (when records were asked for).
    pub records: Vec<JobRecord>,
}

/// Summary over all replications.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub mean_response_time: f64,
    pub ci90_half_width: f64,
    pub ci_method: CiMethod,
    /// Mean actual parallelism A of measured jobs.
    pub actual_parallelism: f64,
    /// Mean processor utilisation U (work plus overheads).
    pub utilization: f64,
    pub jobs: u64,
    pub events: u64,
    pub wall_seconds: f64,
    pub reps: u32,
    pub rep_means: Vec<f64>,
    pub context_switches: u64,
    pub makespan: f64,
}

/// Replications plus their summary.
#[derive(Debug, Clone)]
pub struct PoolsResult {
    pub summary: Summary,
    pub reps: Vec<RepResult>,
}

pub use crate::machines::common::RunError;

/// Options of a run that do not change its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOptions {
    /// Threads for replications (results do not depend on it).
    pub workers: usize,
    pub audit: bool,
    pub records: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            workers: 1,
            audit: false,
            records: true,
        }
    }
}

/// Runs one replication with the given policy.
pub fn run_rep(
    cfg: &PoolsConfig,
    rep: u32,
    opts: RunOptions,
    policy: &mut dyn PoolPolicy,
) -> Result<RepResult, RunError> {
    let seed = rep_seed(cfg.seed, rep as u64);
    let topo = Topology::flat(cfg.procs)?;
    let layout = PoolLayout::equal(&topo, cfg.pool_size)?;
    let mcfg = MachineConfig {
        slice: units_to_ticks(cfg.slice),
        overheads: cfg.overheads,
        audit: opts.audit,
        records: true,
    };
    let mut gen;
    let mut list;
    let source: &mut dyn JobSource = match &cfg.arrivals {
        Some(a) => {
            list = ArrivalList {
                list: a,
                init: cfg.init,
                final_: cfg.final_,
                para_unit: cfg.para_unit,
                spread: cfg.spread,
                next: 0,
            };
            &mut list
        }
        None => {
            gen = cfg.workload_model().generator(seed)?;
            &mut gen
        }
    };
    let mut machine = PoolMachine::new(mcfg, &layout, seed, source, policy);
    let mut engine = Engine::new();
    let end = machine.run(&mut engine)?;
    let stats = machine.stats;
    let mut records = std::mem::take(&mut machine.records);
    records.sort_by_key(|r| r.job);
    let measured: Vec<&JobRecord> = records.iter().filter(|r| r.job >= cfg.warmup).collect();
    let responses: Vec<f64> = measured.iter().map(|r| r.response()).collect();
    let n = responses.len().max(1) as f64;
    let mean_response = responses.iter().sum::<f64>() / n;
    let mean_parallelism = measured.iter().map(|r| r.a as f64).sum::<f64>() / n;
    let makespan = end.as_units();
    let utilization = if end.0 > 0 {
        (stats.busy_work + stats.busy_overhead) as f64 / (cfg.procs as f64 * end.0 as f64)
    } else {
        0.0
    };
    Ok(RepResult {
        rep,
        seed,
        stats,
        events: engine.processed(),
        makespan,
        mean_response,
        mean_parallelism,
        utilization,
        measured: responses.len() as u64,
        responses,
        records: if opts.records { records } else { Vec::new() },
    })
}

/// Runs all replications of `cfg` with the paper's policy (or one made by
/// `make_policy` for each replication).
pub fn run(
    cfg: &PoolsConfig,
    opts: RunOptions,
    make_policy: Option<&(dyn Fn() -> Box<dyn PoolPolicy> + Sync)>,
) -> Result<PoolsResult, RunError> {
    cfg.validate()?;
    let start = Instant::now();
    let one = |rep: u32| -> Result<RepResult, RunError> {
        let mut policy: Box<dyn PoolPolicy> = match make_policy {
            Some(f) => f(),
            None => Box::new(ZhouBrecht::new(cfg.placement())),
        };
        run_rep(cfg, rep, opts, policy.as_mut())
    };
    let workers = opts.workers.max(1).min(cfg.reps as usize);
    let mut reps: Vec<Result<RepResult, RunError>> = Vec::with_capacity(cfg.reps as usize);
    if workers <= 1 {
        for r in 0..cfg.reps {
            reps.push(one(r));
            if matches!(reps.last(), Some(Err(_))) {
                break;
            }
        }
    } else {
        let mut slots: Vec<Option<Result<RepResult, RunError>>> =
            (0..cfg.reps).map(|_| None).collect();
        std::thread::scope(|s| {
            let chunks: Vec<Vec<u32>> = (0..workers)
                .map(|w| {
                    (0..cfg.reps)
                        .filter(|r| *r as usize % workers == w)
                        .collect()
                })
                .collect();
            let handles: Vec<_> = chunks
                .into_iter()
                .map(|c| {
                    let flag = crate::cancel::current();
                    s.spawn(move || {
                        let reps = || c.into_iter().map(|r| (r, one(r))).collect::<Vec<_>>();
                        match &flag {
                            Some(f) => crate::cancel::with_cancel(f, reps),
                            None => reps(),
                        }
                    })
                })
                .collect();
            for h in handles {
                for (r, res) in h.join().expect("replication thread panicked") {
                    slots[r as usize] = Some(res);
                }
            }
        });
        reps = slots
            .into_iter()
            .map(|s| s.expect("every replication ran"))
            .collect();
    }
    let reps: Vec<RepResult> = reps.into_iter().collect::<Result<_, _>>()?;
    let summary = summarize(cfg, &reps, start.elapsed().as_secs_f64());
    Ok(PoolsResult { summary, reps })
}

fn summarize(cfg: &PoolsConfig, reps: &[RepResult], wall: f64) -> Summary {
    let rep_means: Vec<f64> = reps.iter().map(|r| r.mean_response).collect();
    let method = match cfg.ci {
        CiMethod::Auto if reps.len() >= 2 => CiMethod::Replications,
        CiMethod::Auto => CiMethod::BatchMeans,
        m => m,
    };
    let total: u64 = reps.iter().map(|r| r.measured).sum();
    let weighted = |f: &dyn Fn(&RepResult) -> f64| {
        reps.iter().map(|r| f(r) * r.measured as f64).sum::<f64>() / total.max(1) as f64
    };
    let (mean, half) = match method {
        CiMethod::BatchMeans => {
            let b: Vec<f64> = reps
                .iter()
                .flat_map(|r| batch_means(&r.responses, 10))
                .collect();
            (weighted(&|r| r.mean_response), mean_ci90(&b).1)
        }
        _ => mean_ci90(&rep_means),
    };
    Summary {
        mean_response_time: mean,
        ci90_half_width: half,
        ci_method: method,
        actual_parallelism: weighted(&|r| r.mean_parallelism),
        utilization: reps.iter().map(|r| r.utilization).sum::<f64>() / reps.len() as f64,
        jobs: total,
        events: reps.iter().map(|r| r.events).sum(),
        wall_seconds: wall,
        reps: reps.len() as u32,
        rep_means,
        context_switches: reps.iter().map(|r| r.stats.context_switches).sum(),
        makespan: reps.iter().map(|r| r.makespan).sum::<f64>() / reps.len() as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_and_validate_name_fields() {
        let mut c = PoolsConfig::default();
        assert_eq!(c.set("nope", &Value::Int(1)).unwrap_err().field, "nope");
        c.set("L", &Value::Float(1.0)).unwrap();
        assert_eq!(c.validate().unwrap_err().field, "L");
        let mut c = PoolsConfig::default();
        c.set("pool_size", &Value::Int(7)).unwrap();
        assert_eq!(c.validate().unwrap_err().field, "pool_size");
        let mut c = PoolsConfig::default();
        c.set("G", &Value::Float(1.5)).unwrap();
        assert_eq!(c.validate().unwrap_err().field, "G");
        let mut c = PoolsConfig::default();
        c.set("W", &Value::Float(-0.1)).unwrap();
        assert_eq!(c.validate().unwrap_err().field, "W");
        let mut c = PoolsConfig::default();
        assert!(c.set("spanning", &Value::Str("sideways".into())).is_err());
        assert!(c.set("P", &Value::Float(2.5)).is_err());
        c.set("spanning", &Value::Str("none".into())).unwrap();
        c.set("F", &Value::Float(1.5)).unwrap();
        assert_eq!(
            c.placement().spanning,
            Spanning::None,
            "F must not re-enable spanning"
        );
        c.set("spanning", &Value::Str("limited".into())).unwrap();
        assert_eq!(c.placement().spanning, Spanning::Limited { f: 1.5 });
        let mut c = PoolsConfig::default();
        c.set("G", &Value::Float(1.5)).unwrap();
        c.set("parallelism", &Value::Str("unrestricted".into()))
            .unwrap();
        assert_eq!(
            c.validate().unwrap_err().field,
            "G",
            "G is checked even when unused"
        );
    }

    #[test]
    fn small_run_is_deterministic_and_parallel_invariant() {
        let mut c = PoolsConfig {
            jobs: 300,
            warmup: 30,
            reps: 3,
            ..Default::default()
        };
        c.seed = 11;
        let a = run(
            &c,
            RunOptions {
                workers: 1,
                ..Default::default()
            },
            None,
        )
        .unwrap();
        let b = run(
            &c,
            RunOptions {
                workers: 3,
                ..Default::default()
            },
            None,
        )
        .unwrap();
        assert_eq!(a.summary.rep_means, b.summary.rep_means);
        assert_eq!(a.reps[1].records, b.reps[1].records);
        assert!(a.summary.mean_response_time > 120.0);
    }

    /// The event estimate bounds real runs (and not by orders of magnitude).
    #[test]
    fn event_estimate_bounds_real_runs() {
        for (set, val) in [
            ("T", Value::Float(10.0)),
            ("T", Value::Float(0.5)),
            ("D", Value::Float(2.0)),
            ("L", Value::Float(0.9)),
            ("parallelism", Value::Str("unrestricted".into())),
            ("spanning", Value::Str("unlimited".into())),
        ] {
            let mut c = PoolsConfig {
                jobs: 400,
                warmup: 40,
                reps: 2,
                ..Default::default()
            };
            c.set(set, &val).unwrap();
            c.validate().unwrap();
            let r = run(&c, RunOptions::default(), None).unwrap();
            let real: u64 = r.reps.iter().map(|r| r.events).sum();
            let est = c.estimate_events();
            assert!(est >= real as f64, "{set}: estimate {est} < {real} events");
            assert!(
                est < 50.0 * real as f64,
                "{set}: estimate {est} >> {real} events"
            );
        }
    }

    /// A run estimated above `max_events` is refused with one line naming
    /// the key; `max_events = 0` lifts the limit.
    #[test]
    fn runs_estimated_above_max_events_are_refused() {
        let mut c = PoolsConfig {
            jobs: 300,
            warmup: 30,
            reps: 1,
            ..Default::default()
        };
        c.set("max_events", &Value::Int(100)).unwrap();
        let e = c.validate().unwrap_err();
        assert_eq!(e.field, "max_events", "{e}");
        let line = e.to_string();
        assert!(!line.contains('\n'), "{line}");
        assert!(
            line.starts_with("max_events: the run would take about"),
            "{line}"
        );
        assert!(line.contains("max_events=0"), "{line}");
        assert!(run(&c, RunOptions::default(), None).is_err());
        c.set("max_events", &Value::Int(0)).unwrap();
        c.validate().unwrap();
        assert!(c.set("max_events", &Value::Int(-1)).is_err());
    }
}
