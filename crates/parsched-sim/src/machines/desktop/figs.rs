//! Seed 002's Figures 1–2 (§4.1, Exp. A): k parallel programs plus s
//! sequential stressors on a small SMP, under the default (Linux) scheduler
//! and a rudimentary gang scheduler.
//!
//! Seed 002 (Frachtenberg, "Process Scheduling for the Parallel Desktop",
//! `seeds/002_f89b85c3eb86e2ff.txt`; digest `notes/seed-targets.md`, 002):
//! memory-less compute; stressors loop forever; every thread of a parallel
//! program runs a fixed number of compute loops and the program's threads
//! synchronize every few loops through a semaphore (BSP); everything starts
//! together; the run ends when every *parallel* program has finished. Two
//! machines: a 4-way HP ES40 (`es40`: 1 node × 4 processors) and a 4-way
//! hyperthreaded Xeon MP "Potomac" (`potomac`: 1 node × 8 processors, 4
//! cores × 2 hardware threads, the cluster machine's SMT contention model
//! with `smt_speed`), with 7 threads per program on the latter.
//!
//! [`FigureConfig`] lowers every grid point onto a [`ClusterConfig`]:
//!
//! * a program is a [`BspJob`] of `threads` processes, `loops /
//!   loops_per_sync` iterations of `loops_per_sync × loop_us` of compute and
//!   a barrier of all its threads (messages of a shared-memory latency);
//! * a stressor is a background [`BspJob`] of one process (no barrier) that
//!   outlives every program;
//! * `default`: the O(1) scheduler (`parsched_core::policy::o1`) on the
//!   node, a waiting thread blocks at once (`default_wait = block`: a
//!   semaphore wait sleeps in the kernel; spin-block and spin are options);
//! * `gang`: the cluster machine's gang scheduler: Ousterhout's matrix,
//!   `slot_ms` slots round robin, threads busy-wait. Each program has a row;
//!   each stressor is a job of width 1 and the stressors share rows among
//!   themselves (`stressor_rows = apart`: P stressors to a row of P
//!   processors; `packed`: first fit, so a stressor may take a free cell of a
//!   program's row). See `docs/policies/fcs.md`, "Figures 1–2", for why a row
//!   per stressor cannot give the paper's flat gang curve.

use super::keys::{desktop_cluster_fields, schema_of, LOCAL};
use super::{desktop_cluster_base, DefaultWait};
use crate::machines::cluster::config::BspJob;
use crate::machines::cluster::{ClusterConfig, ClusterError, ClusterOptions, LocalKind};
use crate::machines::node_costs::impl_node_costs;
use parsched_core::policy::cosched::{CoschedScheme, Scheme};
use parsched_core::schema::{Kind, Schema, Typed, U32, U64};
use parsched_core::Value;
use parsched_core::{choices, field, ConfigError};
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// The two machines of §4.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FigureMachine {
    /// Figure 1: 4-way HP ES40 (1 node × 4 processors).
    #[default]
    Es40,
    /// Figure 2: 4-way Xeon MP with hyperthreading (1 node × 8 logical
    /// processors, 4 cores × 2 hardware threads).
    Potomac,
}

impl FigureMachine {
    /// The machine's name (its [`Choice`](parsched_core::schema::Choice) name).
    pub fn name(self) -> &'static str {
        parsched_core::schema::Choice::name(self)
    }

    /// Logical processors.
    pub fn cpus(self) -> u32 {
        match self {
            FigureMachine::Es40 => 4,
            FigureMachine::Potomac => 8,
        }
    }

    /// Hardware threads per core.
    pub fn smt(self) -> u32 {
        match self {
            FigureMachine::Es40 => 1,
            FigureMachine::Potomac => 2,
        }
    }

    /// Threads per parallel program: 7 on Potomac (the paper); on the ES40
    /// the paper does not say: 4, one per processor \[ext\].
    pub fn default_threads(self) -> u32 {
        match self {
            FigureMachine::Es40 => 4,
            FigureMachine::Potomac => 7,
        }
    }

    /// One compute loop (µs) \[ext\]: 100 µs on the 833 MHz Alpha, a quarter
    /// of that on the 3.3 GHz Xeon (about the clock ratio; the paper only
    /// says Potomac's absolute times are "much shorter").
    pub fn default_loop_us(self) -> f64 {
        match self {
            FigureMachine::Es40 => 100.0,
            FigureMachine::Potomac => 25.0,
        }
    }
}

/// Where gang scheduling puts the stressors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StressorRows {
    /// Rows of their own, shared only among stressors: a program's slot runs
    /// that program alone ("suspends and resumes entire jobs").
    #[default]
    Apart,
    /// First fit: a stressor takes a free cell of a program's row if there is
    /// one (Ousterhout's packing).
    Packed,
}

/// The two schedulers of §4.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FigureScheduler {
    /// The unmodified OS scheduler (Linux 2.6's O(1) model).
    Default,
    /// The rudimentary user-level gang scheduler.
    Gang,
}

impl FigureScheduler {
    pub fn name(self) -> &'static str {
        match self {
            FigureScheduler::Default => "default",
            FigureScheduler::Gang => "gang",
        }
    }
}

/// Seed 002's Exp. A (\[ext\]: every value the paper leaves open).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FigureConfig {
    pub machine: FigureMachine,
    /// The schedulers to run, in order (default: both).
    pub schedulers: Vec<FigureScheduler>,
    /// Parallel programs: the grid runs k = 1..=programs [ext: 4].
    pub programs: u32,
    /// Sequential stressors: the grid runs s = 0..=stressors [ext: 4].
    pub stressors: u32,
    /// Threads per program (default: the machine's, 4 on es40, 7 on
    /// potomac).
    pub threads: Option<u32>,
    /// Compute loops per thread [ext: 20,000].
    pub loops: u64,
    /// The threads synchronize every this many loops [ext: 10].
    pub loops_per_sync: u64,
    /// One compute loop (µs; default: the machine's, 100 on es40, 25 on
    /// potomac).
    pub loop_us: Option<f64>,
    /// Stressors compute in chunks of this (ms; no effect on the schedule,
    /// fewer events).
    pub stressor_chunk_ms: f64,
    /// Gang scheduling's slot (ms) [ext: NS; 100].
    pub slot_ms: f64,
    /// Gang scheduling: stressors fill rows of their own (`apart`, default)
    /// or the matrix's first fit packs them into any free cell, a
    /// program's row included (`packed`).
    pub stressor_rows: StressorRows,
    /// How a waiting thread waits under `default` [ext: block, a semaphore
    /// wait sleeps in the kernel].
    pub default_wait: DefaultWait,
    /// Spin before blocking with `default_wait = spin_block` (µs).
    pub spin_us: f64,
    /// SMT (potomac): each busy sibling's fraction of full speed [ext: 0.6].
    pub smt_speed: f64,
    /// The node's scheduler: `o1` (default) or `rr`.
    pub local: LocalKind,
    pub o1_sleep_bonus: bool,
    pub rr_quantum_ms: f64,
    pub tick_ms: f64,
    /// One-way latency of the semaphore's wake-up message (µs) [ext: 2,
    /// shared memory].
    pub latency_us: f64,
    pub context_switch_us: f64,
    /// Waking a blocked thread (µs) \[ext\].
    pub interrupt_us: f64,
    /// The system call that blocks (µs) \[ext\].
    pub syscall_us: f64,
    /// Threads start within this of time 0 (ms).
    pub start_skew_ms: f64,
    /// Multiplies the loops (quick runs).
    pub scale: f64,
    pub seed: u64,
    /// Replications per grid point (the paper: at least 5, trimmed mean;
    /// here the plain mean).
    pub reps: u32,
    /// A run stops with an error past this simulated time (s).
    pub max_time_s: f64,
    /// A run stops with an error (naming `max_events`) past this many
    /// engine events; 0: no limit.
    #[serde(default = "crate::machines::common::default_max_events")]
    pub max_events: u64,
}

impl Default for FigureConfig {
    fn default() -> Self {
        FigureConfig {
            machine: FigureMachine::Es40,
            schedulers: vec![FigureScheduler::Default, FigureScheduler::Gang],
            programs: 4,
            stressors: 4,
            threads: None,
            loops: 20_000,
            loops_per_sync: 10,
            loop_us: None,
            stressor_chunk_ms: 100.0,
            slot_ms: 100.0,
            stressor_rows: StressorRows::Apart,
            default_wait: DefaultWait::Block,
            spin_us: 10.0,
            smt_speed: 0.6,
            local: LocalKind::O1,
            o1_sleep_bonus: true,
            rr_quantum_ms: 100.0,
            tick_ms: 1.0,
            latency_us: 2.0,
            context_switch_us: 5.0,
            interrupt_us: 1.0,
            syscall_us: 1.0,
            start_skew_ms: 1.0,
            scale: 1.0,
            seed: 1,
            reps: 1,
            max_time_s: 100_000.0,
            max_events: crate::machines::common::DEFAULT_MAX_EVENTS,
        }
    }
}

impl FigureConfig {
    /// The configuration of one machine (its defaults).
    pub fn for_machine(machine: FigureMachine) -> FigureConfig {
        FigureConfig {
            machine,
            ..FigureConfig::default()
        }
    }

    /// Sets one key from a value given by name (CLI `--set`, Python
    /// keywords); see [`FIGURES_SCHEMA`]. `threads` and `loop_us` accept
    /// `none` (the machine's default); `schedulers` takes `default`, `gang`,
    /// `both` or a list (`default,gang`).
    pub fn set(&mut self, key: &str, v: &Value) -> Result<(), ConfigError> {
        FIGURES_SCHEMA.set(self, key, v)
    }

    /// Threads per program.
    pub fn threads(&self) -> u32 {
        self.threads.unwrap_or(self.machine.default_threads())
    }

    /// One compute loop (µs).
    pub fn loop_us(&self) -> f64 {
        self.loop_us.unwrap_or(self.machine.default_loop_us())
    }

    /// Synchronizations per thread (loops / loops_per_sync, scaled).
    pub fn iterations(&self) -> u64 {
        ((self.loops / self.loops_per_sync.max(1)) as f64 * self.scale)
            .round()
            .max(1.0) as u64
    }

    /// One program's compute per thread (s), at full speed.
    pub fn program_work_s(&self) -> f64 {
        self.iterations() as f64 * self.loops_per_sync as f64 * self.loop_us() * 1e-6
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        FIGURES_SCHEMA.check(self)?;
        let cpus = self.machine.cpus();
        if self.threads() == 0 || self.threads() > cpus {
            return Err(ConfigError::new(
                "threads",
                self.threads().to_string(),
                format!("1..={cpus} (the machine's logical processors)"),
            ));
        }
        if self.loops_per_sync == 0 || self.loops < self.loops_per_sync || self.loops > 1 << 40 {
            return Err(ConfigError::new(
                "loops",
                format!(
                    "loops = {}, loops_per_sync = {}",
                    self.loops, self.loops_per_sync
                ),
                "1 <= loops_per_sync <= loops <= 2^40",
            ));
        }
        if self.schedulers.is_empty() {
            return Err(ConfigError::new(
                "schedulers",
                "no scheduler",
                "default, gang or both",
            ));
        }
        self.cluster(FigureScheduler::Default, 1, 1).validate()?;
        self.cluster(FigureScheduler::Gang, 1, 1).validate()
    }

    /// The cluster machine's configuration of grid point (`k` programs, `s`
    /// stressors) under `sched`.
    pub fn cluster(&self, sched: FigureScheduler, k: u32, s: u32) -> ClusterConfig {
        let threads = self.threads();
        let grain = self.loops_per_sync as f64 * self.loop_us();
        // Stressors outlive every program: chunks for far longer than the
        // time limit (an unscaled count: `scale` multiplies every job's).
        let chunk_us = self.stressor_chunk_ms * 1e3;
        let stressor_iters = ((self.max_time_s * 1e6 / chunk_us).ceil() as u64 + 1)
            .saturating_mul((1.0 / self.scale).ceil().max(1.0) as u64);
        let mut bsp_jobs: Vec<BspJob> = (0..k)
            .map(|i| BspJob {
                name: format!("program{}", i + 1),
                mult: vec![1.0; threads as usize],
                grain_us: grain,
                iterations: self.loops / self.loops_per_sync,
                background: false,
            })
            .collect();
        bsp_jobs.extend((0..s).map(|i| BspJob {
            name: format!("stressor{}", i + 1),
            mult: vec![1.0],
            grain_us: chunk_us,
            iterations: stressor_iters,
            background: true,
        }));
        let (scheme, spin) = match sched {
            FigureScheduler::Gang => (CoschedScheme::Gang, 0.0),
            FigureScheduler::Default => match self.default_wait {
                DefaultWait::Block => (CoschedScheme::Dynamic(Scheme::SB), 0.0),
                DefaultWait::SpinBlock => (CoschedScheme::Dynamic(Scheme::SB), self.spin_us),
                DefaultWait::Spin => (CoschedScheme::Dynamic(Scheme::LOCAL), 0.0),
            },
        };
        ClusterConfig {
            scheme,
            nodes: 1,
            cpus_per_node: self.machine.cpus(),
            smt_threads_per_core: self.machine.smt(),
            smt_speed: self.smt_speed,
            per_byte_ns: 0.0,
            spin_time_us: Some(spin),
            gang_background_apart: self.stressor_rows == StressorRows::Apart,
            bsp_jobs,
            ..desktop_cluster_base!(self)
        }
    }
}

/// One grid point's run time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureRow {
    pub machine: String,
    pub scheduler: String,
    /// Parallel programs.
    pub k: u32,
    /// Stressors.
    pub s: u32,
    /// When the last parallel program finished (s; mean over replications).
    pub runtime_s: f64,
}

/// The grid of a [`FigureConfig`]: every scheduler, k = 1..=programs, s =
/// 0..=stressors (rows in that order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureResult {
    pub rows: Vec<FigureRow>,
    /// One program's compute per thread at full speed (s): its run time alone
    /// with a processor per thread and no contention.
    pub work_s: f64,
    pub events: u64,
    pub wall_seconds: f64,
}

impl FigureResult {
    /// The run time at (scheduler, k, s), if in the grid.
    pub fn runtime(&self, scheduler: FigureScheduler, k: u32, s: u32) -> Option<f64> {
        self.rows
            .iter()
            .find(|r| r.scheduler == scheduler.name() && r.k == k && r.s == s)
            .map(|r| r.runtime_s)
    }
}

/// Runs the grid.
pub fn run_figure(cfg: &FigureConfig, opts: &ClusterOptions) -> Result<FigureResult, ClusterError> {
    cfg.validate()?;
    let mut rows = Vec::new();
    let mut events = 0;
    let mut wall = 0.0;
    for &sched in &cfg.schedulers {
        for k in 1..=cfg.programs {
            for s in 0..=cfg.stressors {
                let r = crate::machines::cluster::run(&cfg.cluster(sched, k, s), opts)?;
                events += r.runs.iter().map(|x| x.events).sum::<u64>();
                wall += r.runs.iter().map(|x| x.wall_seconds).sum::<f64>();
                rows.push(FigureRow {
                    machine: cfg.machine.name().to_string(),
                    scheduler: sched.name().to_string(),
                    k,
                    s,
                    runtime_s: r.completion_time,
                });
            }
        }
    }
    Ok(FigureResult {
        rows,
        work_s: cfg.program_work_s(),
        events,
        wall_seconds: wall,
    })
}

/// The grid as text: one table per scheduler, k down, s across.
pub fn format_grid(cfg: &FigureConfig, res: &FigureResult) -> String {
    let mut out = String::new();
    for &sched in &cfg.schedulers {
        out.push_str(&format!(
            "{} {} (threads {}, work {:.2} s per thread)\n   k\\s",
            cfg.machine.name(),
            sched.name(),
            cfg.threads(),
            res.work_s
        ));
        for s in 0..=cfg.stressors {
            out.push_str(&format!(" {s:>7}"));
        }
        out.push('\n');
        for k in 1..=cfg.programs {
            out.push_str(&format!("  {k:>3} "));
            for s in 0..=cfg.stressors {
                match res.runtime(sched, k, s) {
                    Some(t) => out.push_str(&format!(" {t:>7.2}")),
                    None => out.push_str("       -"),
                }
            }
            out.push('\n');
        }
    }
    out
}

choices!(FigureMachine {
    Es40 => "es40",
    Potomac => "potomac",
});
choices!(StressorRows {
    Apart => "apart",
    Packed => "packed",
});

fn set_schedulers(c: &mut FigureConfig, v: &Value) -> Result<(), ConfigError> {
    let allowed = "default, gang, both, or a list (default,gang)";
    let Value::Str(s) = v else {
        return Err(ConfigError::new("schedulers", "not a name", allowed));
    };
    let mut out = Vec::new();
    for t in s
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
    {
        match t {
            "default" => out.push(FigureScheduler::Default),
            "gang" => out.push(FigureScheduler::Gang),
            "both" => out.extend([FigureScheduler::Default, FigureScheduler::Gang]),
            _ => {
                return Err(ConfigError::new(
                    "schedulers",
                    format!(
                        "{:?} is not a scheduler",
                        parsched_core::clip(t, parsched_core::ECHO_MAX)
                    ),
                    allowed,
                ))
            }
        }
    }
    if out.is_empty() {
        return Err(ConfigError::new("schedulers", "no scheduler", allowed));
    }
    c.schedulers = out;
    Ok(())
}

fn get_schedulers(c: &FigureConfig) -> Typed {
    Typed::Names(c.schedulers.iter().map(|s| s.name()).collect())
}

type F = FigureConfig;
impl_node_costs!(FigureConfig);

/// The schema of [`FigureConfig`] (the desktop figures).
#[rustfmt::skip]
pub static FIGURES_SCHEMA: LazyLock<Schema<FigureConfig>> = LazyLock::new(|| {
    let head = [
        field!(F, "machine", machine: choice, Kind::choice::<FigureMachine>(), "", "", "§4.1",
            "es40 (4 Alpha processors, Figure 1) or potomac (8 hyperthreads, Figure 2)"),
        field!(F, "schedulers", custom(get_schedulers, optional = false),
            Kind::Names { choices: &["default", "gang"] }, "", "", "§4.1",
            "the schedulers to run, in order: default, gang, both, or a list (default,gang)")
        .parsed(set_schedulers),
        field!(F, "programs", programs: u32, Kind::int_min(1, 64), "", "k", "",
            "parallel programs: the grid runs k = 1..=programs [ext: 4]")
        .worded("{}", "1..=64"),
        field!(F, "stressors", stressors: u32, Kind::int(256), "", "s", "",
            "sequential stressors: the grid runs s = 0..=stressors [ext: 4]")
        .worded("{}", "0..=256"),
        field!(F, "threads", threads: opt_u32, Kind::int(U32), "", "", "",
            "threads per program; unset (none): the machine's, 4 on es40, 7 on potomac"),
        field!(F, "loops", loops: u64, Kind::int(U64), "", "", "",
            "compute loops per thread [ext: 20,000]"),
        field!(F, "loops_per_sync", loops_per_sync: u64, Kind::int(U64), "", "", "",
            "the threads synchronize every this many loops [ext: 10]"),
        field!(F, "loop_us", loop_us: opt_f64, Kind::POSITIVE, "µs", "", "",
            "one compute loop; unset (none): the machine's, 100 on es40, 25 on potomac")
        .worded("{}", "a finite number > 0"),
        field!(F, "stressor_chunk_ms", stressor_chunk_ms: f64, Kind::POSITIVE, "ms", "", "",
            "stressors compute in chunks of this (fewer events, the same schedule)")
        .worded("{}", "a finite number > 0"),
        field!(F, "stressor_rows", stressor_rows: choice, Kind::choice::<StressorRows>(), "", "",
            "", "gang: stressors fill rows of their own (apart) or the matrix's first fit packs \
             them into any free cell (packed)"),
        field!(F, "smt_speed", smt_speed: f64, Kind::float_range(0.0, false, 1.0, true), "", "",
            "§4.1", "SMT (potomac): each busy sibling's fraction of full speed [ext: 0.6]"),
    ];
    schema_of("fcs_figure", &head, &desktop_cluster_fields!(F), &[])
});

#[cfg(test)]
mod tests {
    use super::*;

    fn quick(machine: FigureMachine, programs: u32, stressors: u32) -> FigureConfig {
        FigureConfig {
            programs,
            stressors,
            scale: 0.25,
            ..FigureConfig::for_machine(machine)
        }
    }

    #[test]
    fn desktop_figure_keys_are_settable_and_name_themselves() {
        for key in FIGURES_SCHEMA.keys() {
            let mut c = FigureConfig::default();
            let e = c
                .set(key, &Value::Str("not-a-value".into()))
                .expect_err(key);
            assert_eq!(e.field, key);
            assert_ne!(e.message, "unknown key", "{key} is listed but not handled");
        }
        let mut c = FigureConfig::default();
        c.set("machine", &Value::Str("potomac".into())).unwrap();
        assert_eq!((c.threads(), c.machine.cpus()), (7, 8));
        c.set("threads", &Value::Int(9)).unwrap();
        assert_eq!(c.validate().unwrap_err().field, "threads");
        c.set("threads", &Value::Str("none".into())).unwrap();
        c.set("schedulers", &Value::Str("gang".into())).unwrap();
        assert_eq!(c.schedulers, vec![FigureScheduler::Gang]);
        c.set("schedulers", &Value::Str("both".into())).unwrap();
        assert_eq!(c.schedulers.len(), 2);
        c.validate().unwrap();
        assert_eq!(c.set("nope", &Value::Int(1)).unwrap_err().field, "nope");
    }

    /// Figure 1 (ES40): once the stressors have their row, gang scheduling's
    /// run time does not move as more are added; the default scheduler's
    /// grows, and passes gang's for small k.
    #[test]
    fn desktop_figure_1_gang_flat_default_grows() {
        let cfg = quick(FigureMachine::Es40, 2, 4);
        let r = run_figure(&cfg, &ClusterOptions::default()).unwrap();
        assert_eq!(r.rows.len(), 2 * 2 * 5);
        let w = r.work_s;
        for k in 1..=2 {
            let g = |s| r.runtime(FigureScheduler::Gang, k, s).unwrap();
            let d = |s| r.runtime(FigureScheduler::Default, k, s).unwrap();
            // Gang: k program rows, then one stressor row: (k + 1) × work.
            assert!(
                (g(0) / (k as f64 * w) - 1.0).abs() < 0.02,
                "k={k}: {}",
                g(0)
            );
            for s in 1..=4 {
                assert!(
                    (g(s) / ((k + 1) as f64 * w) - 1.0).abs() < 0.02,
                    "gang k={k} s={s}: {}",
                    g(s)
                );
            }
            // Default: alone as fast as gang; then growing with stressors.
            assert!(
                (d(0) / g(0) - 1.0).abs() < 0.03,
                "k={k}: {} vs {}",
                d(0),
                g(0)
            );
            assert!(d(4) > 1.1 * d(1), "default k={k}: {} -> {}", d(1), d(4));
            assert!(d(4) > 1.1 * g(4), "k={k}: default {} gang {}", d(4), g(4));
        }
    }

    /// Figure 2 (Potomac, 7-thread programs): the default scheduler beats gang
    /// scheduling wherever there is more than one job to schedule.
    #[test]
    fn desktop_figure_2_default_beats_gang_with_seven_threads() {
        let cfg = quick(FigureMachine::Potomac, 3, 2);
        let r = run_figure(&cfg, &ClusterOptions::default()).unwrap();
        let (mut sd, mut sg) = (0.0, 0.0);
        for k in 1..=3 {
            for s in 0..=2 {
                let d = r.runtime(FigureScheduler::Default, k, s).unwrap();
                let g = r.runtime(FigureScheduler::Gang, k, s).unwrap();
                sd += d;
                sg += g;
                if k + s >= 2 {
                    assert!(d < g, "k={k} s={s}: default {d} gang {g}");
                }
            }
        }
        assert!(sd < 0.85 * sg, "grid totals: default {sd} gang {sg}");
        // Gang alone: 7 threads on 4 cores, 3 of them shared: every
        // iteration waits for the shared ones, at smt_speed.
        let g1 = r.runtime(FigureScheduler::Gang, 1, 0).unwrap();
        assert!((g1 * cfg.smt_speed / r.work_s - 1.0).abs() < 0.03, "{g1}");
    }
}
