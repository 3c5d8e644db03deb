//! Seed 000's model as a typed configuration, and its runner.
//!
//! [`PoolsConfig`]'s defaults are Table 2 of Zhou & Brecht (SIGMETRICS 1991);
//! keys are the paper's symbols. Choices the paper leaves open are named
//! options (see `docs/policies/pools.md`). [`run`] performs independent
//! replications — in parallel threads if asked, with identical results — and
//! reports the mean response time with a 90% confidence interval.

pub mod estimate;
#[cfg(test)]
mod estimate_tests;
pub mod machine;
pub mod overheads;

use crate::engine::Engine;
use crate::machines::pools::machine::{
    JobRecord, MachineConfig, MachineStats, Overheads, PoolMachine,
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

pub use parsched_core::schema::Value;

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
    /// A run whose estimated cost ([`PoolsConfig::estimate`], in events)
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

mod keys;
mod model;
pub use keys::{keys, SCHEMA};
pub use model::MODEL;

fn default_max_events() -> u64 {
    crate::machines::common::DEFAULT_MAX_EVENTS
}

impl PoolsConfig {
    /// Sets one key (a paper symbol or an option name; see [`SCHEMA`]).
    pub fn set(&mut self, key: &str, v: &Value) -> Result<(), ConfigError> {
        SCHEMA.set(self, key, v)
    }

    /// Checks every value; the error names the key and what is allowed.
    pub fn validate(&self) -> Result<(), ConfigError> {
        SCHEMA.check(self)?;
        if units_to_ticks(self.slice) == 0 {
            return Err(ConfigError::new(
                "T",
                format!("{} is not positive", self.slice),
                "T > 0",
            ));
        }
        // Before the topology is built: its memory grows with P.
        let est = self.estimate();
        if self.max_events > 0 && est.cost() > self.max_events as f64 {
            return Err(ConfigError::new(
                "max_events",
                format!(
                    "the run would take about {:.1e} events (~{} at 10^7 events/s; \
                     estimated from reps, jobs, their parallelism and work inflated by the \
                     overheads of P = {} in pools of {}, the time slice T and the placement's \
                     scans of the pools), above max_events = {}",
                    est.cost(),
                    crate::machines::common::human_ms(est.cost() / 1e7 * 1e3),
                    self.procs,
                    self.pool_size,
                    self.max_events
                ),
                "fewer jobs or reps, a longer T, or max_events=0 (or a larger limit) to run \
                 it anyway",
            ));
        }
        PoolLayout::equal(&Topology::flat(self.procs)?, self.pool_size)?;
        self.placement().validate()?;
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
        Ok(())
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
#[derive(Debug, Clone, Serialize)]
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
                    let progress = crate::cancel::current_progress();
                    s.spawn(move || {
                        let reps = || c.into_iter().map(|r| (r, one(r))).collect::<Vec<_>>();
                        crate::cancel::inherit(&flag, &progress, reps)
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
