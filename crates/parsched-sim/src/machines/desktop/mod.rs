//! Seed 002's "parallel desktop" experiments, lowered onto seed 003's
//! cluster machine (`machines::cluster`, which imports nothing from here).
//!
//! * this module: Table 1's model ([`DesktopConfig`], [`run`]);
//! * [`figs`]: Figures 1–2 ([`figs::FigureConfig`], [`figs::run_figure`]);
//! * `keys.rs`: both models' schemas; `model.rs`: their rows of the model
//!   table (`crate::models`).
//!
//! Seed 002 (Frachtenberg, "Process Scheduling for the Parallel Desktop",
//! `seeds/002_f89b85c3eb86e2ff.txt`; digest `notes/seed-targets.md`, 002)
//! §4.2, Table 1: two dual-processor nodes, three MPI jobs of four processes
//! iterating 1 ms of compute and a synchronization of all four; job 1's
//! processes 3–4 and job 2's processes 1–2 compute twice as long; alone,
//! jobs 1 and 2 take 120 s and job 3 60 s. Five schedulers: the unmodified
//! Linux scheduler ("Default"), FCFS, gang scheduling (GS), spin-block (SB)
//! and flexible coscheduling (FCS).
//!
//! [`DesktopConfig`] is that model with the paper's values as defaults and
//! its open choices as named keys (`docs/policies/fcs.md`); it lowers onto
//! [`ClusterConfig`]: bulk-synchronous jobs with per-process multipliers,
//! block placement (processes 1–2 on node A, 3–4 on node B), the O(1)
//! scheduler of `parsched_core::policy::o1` on every node, and:
//!
//! | scheme | cluster machine |
//! |---|---|
//! | `default` | independent O(1) schedulers; a waiting process blocks (`default_wait`) |
//! | `fcfs` | one job at a time on all processors |
//! | `gang` | Ousterhout matrix, `slot_ms` slots, busy-waiting |
//! | `sb` | independent O(1) schedulers; spin `spin_us`, then block |
//! | `fcs` | `parsched_core::policy::fcs` rows over the same local schedulers |

pub mod figs;
mod keys;
mod model;
pub use keys::FCS_SCHEMA;
pub use model::{FCS_MODEL, FIGURE_MODEL};

use crate::machines::cluster::config::BspJob;
use crate::machines::cluster::{ClusterConfig, ClusterError, ClusterOptions, LocalKind};
use parsched_core::policy::classify::ClassifierConfig;
use parsched_core::policy::cosched::{CoschedScheme, Scheme};
use parsched_core::policy::fcs::{FRows, FcsConfig, Fill};
use parsched_core::ConfigError;
use parsched_core::Value;
use serde::{Deserialize, Serialize};

/// Seed 002's five schedulers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum DesktopScheme {
    /// Unmodified Linux.
    Default,
    /// Batch, first come first served.
    Fcfs,
    /// Gang scheduling.
    Gang,
    /// Spin-block (implicit coscheduling).
    Sb,
    /// Flexible coscheduling.
    #[default]
    Fcs,
}

impl DesktopScheme {
    pub const ALL: [DesktopScheme; 5] = [
        DesktopScheme::Default,
        DesktopScheme::Fcfs,
        DesktopScheme::Gang,
        DesktopScheme::Sb,
        DesktopScheme::Fcs,
    ];

    /// The scheme's name (its [`Choice`](parsched_core::schema::Choice) name).
    pub fn name(self) -> &'static str {
        parsched_core::schema::Choice::name(self)
    }
}

/// How a waiting process waits under `default`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum DefaultWait {
    /// Blocks at once (a blocking MPI receive).
    #[default]
    Block,
    /// Spins `spin_us`, then blocks.
    SpinBlock,
    /// Busy-waits (a polling MPI receive).
    Spin,
}

/// The run queues of a node's processors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RunQueues {
    /// One queue per node shared by its processors (a process runs on
    /// whichever processor frees first).
    #[default]
    PerNode,
    /// One queue per processor, as Linux 2.6 has; a process stays on the
    /// processor it started on (2.6 balances queues by length, and with
    /// equal counts per processor nothing migrates). Modelled by giving
    /// every processor its own node (messages cost the same either way).
    PerCpu,
}

/// Seed 002's Table 1 model (defaults: the paper's values; \[ext\] marks
/// parsched's choices where the paper is silent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DesktopConfig {
    pub scheme: DesktopScheme,
    /// Nodes (seed: 2).
    pub nodes: u32,
    /// Processors per node (seed: 2).
    pub cpus_per_node: u32,
    /// Per-process compute multipliers, one list per job (seed: job 1
    /// `1,1,2,2`, job 2 `2,2,1,1`, job 3 `1,1,1,1`).
    pub jobs: Vec<Vec<f64>>,
    /// Compute per iteration at multiplier 1 (µs; seed: 1 ms).
    pub grain_us: f64,
    /// Iterations per job (60,000: 60 s of 1 ms, 120 s for the doubled
    /// processes).
    pub iterations: u64,
    /// Gang and FCS slot (ms) [ext: NS, 50–100 ms suggested].
    pub slot_ms: f64,
    /// SB's, and FCS's F and DC jobs', spin before blocking (µs) [ext: about two
    /// context switches, the competitive spin of two-phase waiting].
    pub spin_us: f64,
    /// How `default` waits [ext: block, a blocking MPI receive].
    pub default_wait: DefaultWait,
    /// The nodes' scheduler: `o1` (Linux 2.6, default), `fair` (a plain
    /// fair scheduler with wake-up preemption, CFS-like) or `rr` (round
    /// robin, `rr_quantum_ms`).
    pub local: LocalKind,
    /// The O(1) scheduler's sleep-average interactivity bonus.
    pub o1_sleep_bonus: bool,
    /// `per_node` (one shared queue per node, default) or `per_cpu`.
    pub runqueues: RunQueues,
    pub rr_quantum_ms: f64,
    /// The kernel's tick (ms; HZ = 1000).
    pub tick_ms: f64,
    /// One-way MPI latency of a small message (µs; QsNet \[ext\]).
    pub latency_us: f64,
    /// Context switch (µs) \[ext\].
    pub context_switch_us: f64,
    /// The interrupt that wakes a blocked receiver (µs) \[ext\].
    pub interrupt_us: f64,
    /// The call that blocks (µs) \[ext\].
    pub syscall_us: f64,
    /// Processes start within this of time 0 (ms).
    pub start_skew_ms: f64,
    /// FCS: the classifier (discovery, thresholds, revision window).
    pub classifier: ClassifierConfig,
    /// FCS: F jobs share one row (`shared`) or have their own (`own`).
    pub f_rows: FRows,
    /// FCS: who fills processors the row leaves idle (`f_dc`, `dc`).
    pub fill: Fill,
    /// Multiplies the iterations (quick runs).
    pub scale: f64,
    pub seed: u64,
    pub reps: u32,
    /// The run stops with an error past this simulated time (s).
    pub max_time_s: f64,
    /// A run stops with an error (naming `max_events`) past this many
    /// engine events; 0: no limit.
    #[serde(default = "crate::machines::common::default_max_events")]
    pub max_events: u64,
}

impl Default for DesktopConfig {
    fn default() -> Self {
        DesktopConfig {
            scheme: DesktopScheme::Fcs,
            nodes: 2,
            cpus_per_node: 2,
            jobs: vec![
                vec![1.0, 1.0, 2.0, 2.0],
                vec![2.0, 2.0, 1.0, 1.0],
                vec![1.0, 1.0, 1.0, 1.0],
            ],
            grain_us: 1000.0,
            iterations: 60_000,
            slot_ms: 50.0,
            spin_us: 10.0,
            default_wait: DefaultWait::Block,
            local: LocalKind::O1,
            o1_sleep_bonus: true,
            runqueues: RunQueues::PerNode,
            rr_quantum_ms: 100.0,
            tick_ms: 1.0,
            latency_us: 5.0,
            context_switch_us: 5.0,
            interrupt_us: 5.0,
            syscall_us: 2.0,
            start_skew_ms: 1.0,
            classifier: ClassifierConfig::default(),
            f_rows: FRows::Shared,
            fill: Fill::FDc,
            scale: 1.0,
            seed: 1,
            reps: 1,
            max_time_s: 100_000.0,
            max_events: crate::machines::common::DEFAULT_MAX_EVENTS,
        }
    }
}

impl DesktopConfig {
    /// Sets one key from a value given by name (CLI `--set`, Python
    /// keywords); see [`FCS_SCHEMA`].
    pub fn set(&mut self, key: &str, v: &Value) -> Result<(), ConfigError> {
        FCS_SCHEMA.set(self, key, v)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        FCS_SCHEMA.check(self)?;
        if self.jobs.is_empty() || self.jobs.len() > 1024 {
            return Err(ConfigError::new(
                "jobs",
                format!("{} jobs", self.jobs.len()),
                "1..=1024 jobs",
            ));
        }
        let cpus = self.nodes as u64 * self.cpus_per_node as u64;
        for (i, j) in self.jobs.iter().enumerate() {
            if j.is_empty() || j.len() as u64 > cpus {
                return Err(ConfigError::new(
                    "jobs",
                    format!("job {} has {} processes", i + 1, j.len()),
                    format!("1..={cpus} processes (nodes * cpus_per_node) per job"),
                ));
            }
            if let Some(m) = j.iter().find(|m| !(m.is_finite() && **m > 0.0)) {
                return Err(ConfigError::new(
                    "jobs",
                    format!("job {}: multiplier {m}", i + 1),
                    "finite multipliers > 0",
                ));
            }
        }
        self.classifier.validate()?;
        self.cluster().validate()
    }

    /// The cluster machine's configuration for this model.
    pub fn cluster(&self) -> ClusterConfig {
        let spin = match self.scheme {
            DesktopScheme::Default => match self.default_wait {
                DefaultWait::Block => Some(0.0),
                DefaultWait::SpinBlock => Some(self.spin_us),
                DefaultWait::Spin => None,
            },
            _ => Some(self.spin_us),
        };
        let scheme = match self.scheme {
            DesktopScheme::Default if self.default_wait == DefaultWait::Spin => {
                CoschedScheme::Dynamic(Scheme::LOCAL)
            }
            DesktopScheme::Default | DesktopScheme::Sb | DesktopScheme::Fcs => {
                CoschedScheme::Dynamic(Scheme::SB)
            }
            DesktopScheme::Fcfs => CoschedScheme::Fcfs,
            DesktopScheme::Gang => CoschedScheme::Gang,
        };
        let bsp_jobs = self
            .jobs
            .iter()
            .enumerate()
            .map(|(i, m)| BspJob {
                name: format!("job{}", i + 1),
                mult: m.clone(),
                grain_us: self.grain_us,
                iterations: self.iterations,
                background: false,
            })
            .collect();
        let (nodes, cpus_per_node) = match self.runqueues {
            RunQueues::PerNode => (self.nodes, self.cpus_per_node),
            RunQueues::PerCpu => (self.nodes * self.cpus_per_node, 1),
        };
        ClusterConfig {
            scheme,
            nodes,
            cpus_per_node,
            per_byte_ns: 1.0,
            spin_time_us: spin.or(Some(0.0)),
            bsp_jobs,
            flexible: (self.scheme == DesktopScheme::Fcs).then_some(FcsConfig {
                classifier: self.classifier,
                f_rows: self.f_rows,
                fill: self.fill,
                // The rest as the core policy's defaults: F jobs fill in any
                // slot (the fill queue gives way at once), no DC slots (the
                // machine does not measure a released job's wanted time).
                ..FcsConfig::default()
            }),
            ..desktop_cluster_base!(self)
        }
    }

    /// Total demand over processors (s): the makespan no schedule beats.
    pub fn optimum_s(&self) -> f64 {
        let iters = ((self.iterations as f64 * self.scale).round()).max(1.0);
        let demand: f64 = self.jobs.iter().flatten().sum::<f64>() * self.grain_us * iters;
        demand * 1e-6 / (self.nodes * self.cpus_per_node) as f64
    }
}

/// The cluster configuration both desktop models ([`DesktopConfig`] and
/// [`FigureConfig`](figs::FigureConfig)) lower their
/// same-named keys to alike: the nodes' scheduler and its costs, the message
/// latency (with its send and receive overheads), the gang slot, block
/// placement and the run's scale, seed, replications and time limit; the
/// rest as [`ClusterConfig::default`]. Each model completes it with its own
/// jobs, scheme and shape (`ClusterConfig { .., ..desktop_cluster_base!(c) }`).
macro_rules! desktop_cluster_base {
    ($c:expr) => {
        $crate::machines::cluster::ClusterConfig {
            local: $c.local,
            rr_quantum_ms: $c.rr_quantum_ms,
            o1_sleep_bonus: $c.o1_sleep_bonus,
            tick_ms: $c.tick_ms,
            start_skew_ms: $c.start_skew_ms,
            latency_us: $c.latency_us,
            send_overhead_us: ($c.latency_us / 4.0).min(1.0),
            recv_overhead_us: ($c.latency_us / 4.0).min(1.0),
            context_switch_us: $c.context_switch_us,
            interrupt_us: $c.interrupt_us,
            syscall_us: $c.syscall_us,
            gang_slot_ms: $c.slot_ms,
            placement: $crate::machines::cluster::config::Placement::Block,
            scale: $c.scale,
            seed: $c.seed,
            reps: $c.reps,
            max_time_s: $c.max_time_s,
            max_events: $c.max_events,
            ..$crate::machines::cluster::ClusterConfig::default()
        }
    };
}
pub(crate) use desktop_cluster_base;

/// A class change of FCS: at `time_s`, job `job` (0-based) became `class`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassChange {
    pub time_s: f64,
    pub job: u32,
    pub class: String,
}

/// The result of a [`DesktopConfig`] run (means over replications).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DesktopResult {
    pub scheme: String,
    /// Each job's finish time (s), in job order.
    pub job_times: Vec<f64>,
    pub makespan: f64,
    pub makespan_ci90: f64,
    /// Total demand over processors (s).
    pub optimum: f64,
    /// (makespan − optimum) / optimum.
    pub over_optimum: f64,
    /// FCS's class changes in the first replication (empty otherwise).
    pub classes: Vec<ClassChange>,
    /// Counters: totals over the replications (as in every model).
    pub context_switches: u64,
    pub blocks: u64,
    pub slot_switches: u64,
    pub events: u64,
    pub wall_seconds: f64,
}

/// Runs the model.
pub fn run(cfg: &DesktopConfig, opts: &ClusterOptions) -> Result<DesktopResult, ClusterError> {
    cfg.validate()?;
    let cl = cfg.cluster();
    let res = crate::machines::cluster::run(&cl, opts)?;
    let optimum = cfg.optimum_s();
    let first = &res.runs[0];
    Ok(DesktopResult {
        scheme: cfg.scheme.name().to_string(),
        job_times: res.job_completion_times.clone(),
        makespan: res.completion_time,
        makespan_ci90: res.completion_time_ci90,
        optimum,
        over_optimum: (res.completion_time - optimum) / optimum,
        classes: first
            .classes
            .iter()
            .map(|(t, j, c)| ClassChange {
                time_s: *t,
                job: *j,
                class: c.clone(),
            })
            .collect(),
        context_switches: res.runs.iter().map(|r| r.context_switches).sum(),
        blocks: res.runs.iter().map(|r| r.blocks).sum(),
        slot_switches: res.runs.iter().map(|r| r.slot_switches).sum(),
        events: res.runs.iter().map(|r| r.events).sum(),
        wall_seconds: res.runs.iter().map(|r| r.wall_seconds).sum(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machines::cluster::run_once;

    #[test]
    fn defaults_are_table_1() {
        let c = DesktopConfig::default();
        assert_eq!(c.optimum_s(), 240.0);
        c.validate().unwrap();
        assert_eq!(
            Value::Str("1,1,2,2; 2 2 1 1;1,1,1,1".into())
                .as_rows("jobs")
                .unwrap(),
            c.jobs,
            "text form"
        );
    }

    #[test]
    fn bad_keys_name_the_field() {
        let mut c = DesktopConfig::default();
        assert_eq!(
            c.set("scheme", &Value::Str("rr".into())).unwrap_err().field,
            "scheme"
        );
        assert_eq!(
            c.set("jobs", &Value::Str("1,x".into())).unwrap_err().field,
            "jobs"
        );
        assert_eq!(c.set("nope", &Value::Int(1)).unwrap_err().field, "nope");
        c.set("jobs", &Value::Str("1,1,1,1,1".into())).unwrap();
        assert_eq!(c.validate().unwrap_err().field, "jobs");
    }

    /// With two processors per node as two cores' worth of single threads
    /// (`smt_speed = 1`), SMT changes nothing: the same events, the same times.
    #[test]
    fn smt_at_full_speed_changes_nothing() {
        let opts = ClusterOptions::default();
        for scheme in [
            DesktopScheme::Default,
            DesktopScheme::Gang,
            DesktopScheme::Fcs,
        ] {
            let d = DesktopConfig {
                scheme,
                scale: 0.01,
                ..Default::default()
            };
            let off = d.cluster();
            let on = ClusterConfig {
                smt_threads_per_core: 2,
                smt_speed: 1.0,
                ..off.clone()
            };
            let a = run_once(&off, 3, &opts).unwrap();
            let b = run_once(&on, 3, &opts).unwrap();
            assert_eq!(a.job_completion_times, b.job_completion_times, "{scheme:?}");
            assert_eq!(a.events, b.events, "{scheme:?}");
            assert_eq!(a.context_switches, b.context_switches, "{scheme:?}");
        }
    }

    /// Issue #27: the parallel desktop and its figures take `max_events` as
    /// the cluster does (`cluster::tests`).
    #[test]
    fn the_desktop_models_stop_past_max_events() {
        let mut d = DesktopConfig {
            scale: 0.01,
            ..Default::default()
        };
        d.set("max_events", &Value::Int(100)).unwrap();
        match run(&d, &ClusterOptions::default()) {
            Err(ClusterError::Config(e)) => assert_eq!(e.field, "max_events", "{e}"),
            other => panic!("{:?}", other.map(|r| r.makespan)),
        }
        let mut f = figs::FigureConfig::default();
        f.set("max_events", &Value::Int(0)).unwrap();
        assert_eq!(f.max_events, 0);
    }
}
