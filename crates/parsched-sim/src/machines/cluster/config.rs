//! Seed 003's model as a typed configuration: the cluster, the network, the
//! costs, the scheme, the workload and the candidate mechanisms the paper
//! leaves open. Defaults are the paper's values where it states them and
//! documented choices where it does not (`docs/policies/cosched.md`).

use super::apps::AppKind;
use super::calibrate::{Calibration, Costs};
use parsched_core::policy::cosched::CoschedScheme;
use parsched_core::policy::cosched::Scheme;
use parsched_core::policy::ts::{BoostTo, DispatchTable, TsSemantics};
use parsched_core::ConfigError;
use parsched_core::Value;
use serde::{Deserialize, Serialize};

/// The local scheduler of every node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LocalKind {
    /// Priority time-sharing from a dispatch table (Solaris TS; the seed's).
    #[default]
    Ts,
    /// Round robin with `rr_quantum_ms`.
    Rr,
    /// The Linux 2.6 O(1) scheduler with its sleep-average interactivity
    /// bonus (seed 002's "Default"; `parsched_core::policy::o1`).
    #[serde(alias = "linux26")]
    O1,
    /// A plain fair scheduler with wake-up preemption (CFS-like;
    /// `parsched_core::policy::fair`).
    Fair,
}

/// Where a job's ranks go (see [`ClusterConfig::placement`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Rank r on node r mod N (seed 003: one process per workstation).
    #[default]
    Cyclic,
    /// Consecutive ranks fill a node (seed 002: ranks 1–2 on node A, 3–4 on
    /// node B).
    Block,
}

/// A bulk-synchronous job (seed 002): `iterations` × (compute `grain_us` ×
/// `mult[rank]`; a barrier of all its processes, from messages).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BspJob {
    /// Display name.
    pub name: String,
    /// Per-process compute multipliers; the job's width is their number.
    pub mult: Vec<f64>,
    /// Compute per iteration of a process with multiplier 1 (µs).
    pub grain_us: f64,
    /// Iterations (multiplied by `scale`).
    pub iterations: u64,
    /// A background job (e.g. a sequential stressor): the run ends when
    /// every foreground job has, whatever these still do.
    #[serde(default)]
    pub background: bool,
}

/// One job as the machine builds it: from an application of seed 003 or a
/// [`BspJob`].
#[derive(Debug, Clone)]
pub(crate) struct JobPlan {
    pub program: parsched_core::program::Program,
    pub width: u32,
    pub mult: Vec<f64>,
    pub spin_us: f64,
    pub background: bool,
    /// Random stream key prefix (common random numbers across workloads).
    pub stream_key: u64,
}

/// Where a boosted queued process goes in its new level's queue (see
/// [`ClusterConfig::boost_queue`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum BoostQueue {
    #[default]
    Head,
    Tail,
}

/// What counts as a pending message (see [`ClusterConfig::pending`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PendingRule {
    #[default]
    Unpolled,
    Unconsumed,
}

/// The nine workloads of the paper's Table 2 (four jobs each).
pub const WORKLOADS: [[AppKind; 4]; 9] = {
    use AppKind::*;
    [
        [Life3_5, Life3_5, Life3_5, Life3_5],
        [Life3_5, Life3_5, Life3_5, Life12],
        [Life3_5, Life3_5, Life12, Life12],
        [Life3_5, Life12, Life12, Life12],
        [Life12, Life12, Life12, Life12],
        [Ep, Ep, Ep, Ep],
        [Mg, Lu, Life12, Ep],
        [Mg, Mg, Ep, Ep],
        [Mg, Mg, Mg, Mg],
    ]
};

/// Seed 003's model. Times carry their unit in the key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClusterConfig {
    /// Workload 1–9 of Table 2 (ignored when `jobs` is given).
    pub workload: u32,
    /// A custom mix of applications (overrides `workload`).
    pub jobs: Vec<AppKind>,
    /// One of the ten schemes, or `gang` / `fcfs`.
    pub scheme: CoschedScheme,
    /// Workstations.
    pub nodes: u32,
    /// Processors per workstation (one shared run queue per node).
    pub cpus_per_node: u32,
    /// Processes per job (default: one per node).
    pub job_width: Option<u32>,
    /// The local scheduler.
    pub local: LocalKind,
    /// Round robin's quantum (ms).
    pub rr_quantum_ms: f64,
    /// The time-sharing table (default: the stock Solaris TS table).
    pub dispatch_table: Option<DispatchTable>,
    /// The level new processes start at.
    pub initial_level: u8,
    /// Boosting a running process gives it a fresh quantum of its new level
    /// (Solaris `ts_change_priority` resets `ts_timeleft` for a thread on a
    /// processor); off (default): it keeps the rest of its quantum. On, PBT
    /// livelocks on W4 (every node keeps re-boosting its own choice) and PB
    /// slows by a third on W5, against the paper.
    pub boost_refreshes_quantum: bool,
    /// Where a boost (DCS, PB, PBT, SY) puts its target: `top` (TS 59, the
    /// default), `sleep_return` (the level a wake-up gives, `ts_slpret`:
    /// 50-59 in the stock table), `sleep_return+K` (K levels above that, at
    /// most the top) or a fixed level (`57`; never lower than the target's
    /// own). The paper does not say.
    pub boost_to: BoostTo,
    /// The most boosts one process gets per second (between two of its
    /// node's once-a-second ageings; further boosts leave it as it is); 0:
    /// no cap. A fair-share limit the paper names as future work ("limiting
    /// the number of priority boosts for a particular process", §4).
    pub boost_cap: u32,
    /// A boosted process that is queued goes to the head of its new level's
    /// queue (`head`, the default) or to its tail (`tail`: Solaris'
    /// `thread_change_pri` for a priority set from outside the dispatcher).
    pub boost_queue: BoostQueue,
    /// A boost lasts until the process's quantum ends or it blocks: the
    /// table then moves it from its level before the boost. Off (default):
    /// from the boosted level (with the stock table, TS 59 ends at 49,
    /// whose `lwait` is 59 again).
    pub boost_transient: bool,
    /// Once-a-second ageing also ages the running processes (Solaris'
    /// `ts_update` walks every time-sharing thread; with the stock table
    /// every thread below level 59 then moves to its `lwait`); off: only
    /// queued ones.
    pub age_running: bool,
    /// Which time-sharing rules the nodes follow: `solaris` (the default:
    /// Solaris' `ts.c` as of 2.6, the public release nearest the paper's
    /// 2.5.1: a conditional wake-up boost, the rest of the quantum kept,
    /// running threads aged through `ts_trapret`;
    /// `docs/policies/time-sharing.md`) or `parsched` (parsched's earlier
    /// rules: every wake-up gets `ts_slpret` and a full quantum, running
    /// threads age to `ts_lwait`). With `solaris` the
    /// once-a-second update always walks the running processes
    /// (`age_running` is then implied).
    pub ts_semantics: TsSemantics,
    /// The periodic-boost timer (PB, PBT, PB-SB, PB-SY) never chooses the
    /// running process (the paper's timer boosts "the first with an
    /// unconsumed message", which only makes sense for one not on the
    /// processor; the default). Off: any live process with a pending
    /// message, the runner included.
    pub pb_skip_running: bool,
    /// The clock tick (ms): quanta are counted in ticks, so a quantum ends
    /// on one of the node's ticks; every node's ticks have their own phase
    /// (0: quanta end exactly).
    pub tick_ms: f64,
    /// Job j's processes start at j × `launch_gap_ms` plus a random time
    /// in [0, start_skew_ms) each (the jobs are launched one after the
    /// other; the launcher reaches the nodes one by one).
    pub launch_gap_ms: f64,
    pub start_skew_ms: f64,
    /// One-way user-to-user latency of a small message (µs; seed: 32),
    /// including the send and receive overheads.
    pub latency_us: f64,
    /// Host time to post a send (µs).
    pub send_overhead_us: f64,
    /// Host time to take a message from the endpoint (µs).
    pub recv_overhead_us: f64,
    /// Wire time per byte (ns).
    pub per_byte_ns: f64,
    /// Context switch (µs).
    pub context_switch_us: f64,
    /// Interrupt and its service routine (µs).
    pub interrupt_us: f64,
    /// The driver call (ioctl) to block or to yield (µs).
    pub syscall_us: f64,
    /// One invocation of the periodic boost function (µs).
    pub timer_us: f64,
    /// One spin time before blocking or yielding for every application
    /// (µs); default: `app_spin_us`, else each application's own.
    pub spin_time_us: Option<f64>,
    /// Each application's spin time (µs), in the order LIFE3.5, LIFE12, MG,
    /// LU, EP (`parsched tune cosched` chooses them); empty: each
    /// application's own. `spin_time_us`, when set, overrides both.
    #[serde(default)]
    pub app_spin_us: Vec<f64>,
    /// Period of the boost function (ms; seed: 10).
    pub boost_period_ms: f64,
    /// With a periodic boost, spin at most one boost period before
    /// blocking or yielding (one reading of PB-SB's "the time wasted in
    /// spinning is limited to the period of the kernel function").
    pub spin_cap_at_boost_period: bool,
    /// What counts as a pending message for PB, PBT and spin-yield:
    /// `unpolled` (arrived since the process last polled its endpoint; the
    /// issue's definition) or `unconsumed` (the literal reading: arrived and
    /// not yet received).
    pub pending: PendingRule,
    /// With a periodic boost and spin-block (PB-SB), the interface also
    /// interrupts to wake a blocked receiver (the paper: "the LCP and the
    /// ISR are identical to those used for Spin Block"); off: only the
    /// periodic function wakes blocked processes.
    pub pb_sb_wake_interrupts: bool,
    /// PB-SB: the timer's "sleeping (blocked) processes which have pending
    /// messages" (§2) are those with the driver's own blocked flag set (set
    /// when the ioctl puts the process to sleep, cleared when it runs
    /// again), so a process the interrupt already woke but that has not yet
    /// run takes the timer's turn and nobody is boosted (the default); off:
    /// only processes the dispatcher has asleep.
    pub pb_sb_driver_flag: bool,
    /// Size the applications for this machine's message costs by the
    /// procedure of `cluster::calibrate` (each then communicates its Table 2
    /// share here); off: the sizes found for the default costs.
    pub resize_apps: bool,
    /// How often the interface samples which process runs (µs; 0: always
    /// current).
    pub nic_sample_us: f64,
    /// A woken process becomes ready this much after its interrupt (µs).
    pub wake_delay_us: f64,
    /// Probability that a wake-up interrupt is lost (the process stays
    /// blocked until another message, the PB-SB timer or `block_timeout_ms`).
    pub wake_loss: f64,
    /// A blocked process wakes by itself after this (ms; 0: never).
    pub block_timeout_ms: f64,
    /// Background daemon on every node: period (ms; 0: none).
    pub daemon_period_ms: f64,
    /// Background daemon: CPU per activation (µs).
    pub daemon_run_us: f64,
    /// Gang scheduling's slot (ms).
    pub gang_slot_ms: f64,
    /// Bulk-synchronous jobs (seed 002); when given they replace `workload`
    /// and `jobs`.
    pub bsp_jobs: Vec<BspJob>,
    /// Where a job's ranks go: `cyclic` (rank r on node r mod N) or `block`.
    pub placement: Placement,
    /// The O(1) scheduler's sleep-average bonus (`local = o1`).
    pub o1_sleep_bonus: bool,
    /// Flexible coscheduling (seed 002) on top of the scheme's waiting
    /// (`parsched_core::policy::fcs`); `None`: off.
    pub flexible: Option<parsched_core::policy::fcs::FcsConfig>,
    /// Gang scheduling: background jobs (stressors) get rows of their own,
    /// shared only with other background jobs (off: the matrix's first fit
    /// packs them into any row with free cells, foreground rows included).
    /// Not in [`super::SCHEMA`] (see `smt_threads_per_core`).
    pub gang_background_apart: bool,
    /// Hardware threads per core (1: no SMT, the default; 2: consecutive
    /// processors `2i`, `2i + 1` of a node are the two hardware threads of
    /// one core, seed 002's hyperthreaded "Potomac"). Not in [`super::SCHEMA`] (the
    /// Python mirror of those keys is kept elsewhere); set it in TOML or
    /// through `desktop::figs::FigureConfig`.
    pub smt_threads_per_core: u32,
    /// With `smt_threads_per_core = 2`: the fraction of full speed each of
    /// two sibling hardware threads progresses at while both run a process
    /// (any activity: computing, spinning, a system call); a thread whose
    /// sibling is idle runs at full speed. \[ext\] 0.6: two busy siblings
    /// together do 1.2x the work of one thread alone, a modest gain, since
    /// homogeneous compute threads "collide requesting the same CPU
    /// functional units" (seed 002 §4.1, citing Bulpin & Pratt's
    /// measurements of the Pentium 4 with hyper-threading); the value is
    /// parsched's choice, not a number from either paper.
    pub smt_speed: f64,
    /// Period of the CPU-share probe (ms).
    pub probe_ms: f64,
    /// The node whose CPU shares are probed.
    pub probe_node: u32,
    /// Multiplies every application's iteration count (1: the calibrated
    /// 25 s; smaller for quick runs).
    pub scale: f64,
    /// Alone time of one job for the slowdown's ideal (s; seed: 25).
    pub alone_s: f64,
    /// The run stops with an error past this simulated time (s).
    pub max_time_s: f64,
    /// The run stops with an error (naming `max_events`) past this many
    /// engine events; 0: no limit.
    #[serde(default = "crate::machines::common::default_max_events")]
    pub max_events: u64,
    pub seed: u64,
    /// Replications (different seeds).
    pub reps: u32,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            workload: 5,
            jobs: Vec::new(),
            scheme: CoschedScheme::Dynamic(Scheme::PB),
            nodes: 8,
            cpus_per_node: 1,
            job_width: None,
            local: LocalKind::Ts,
            rr_quantum_ms: 100.0,
            dispatch_table: None,
            initial_level: 29,
            age_running: true,
            ts_semantics: TsSemantics::Solaris,
            pb_skip_running: true,
            boost_refreshes_quantum: false,
            boost_to: BoostTo::Top,
            boost_cap: 0,
            boost_queue: BoostQueue::Head,
            boost_transient: false,
            tick_ms: 10.0,
            launch_gap_ms: 0.0,
            start_skew_ms: 50.0,
            latency_us: 32.0,
            send_overhead_us: 5.0,
            recv_overhead_us: 5.0,
            per_byte_ns: 30.0,
            context_switch_us: 15.0,
            interrupt_us: 15.0,
            syscall_us: 10.0,
            timer_us: 2.0,
            spin_time_us: None,
            app_spin_us: Vec::new(),
            boost_period_ms: 10.0,
            spin_cap_at_boost_period: false,
            pb_sb_wake_interrupts: true,
            pb_sb_driver_flag: true,
            resize_apps: false,
            pending: PendingRule::Unpolled,
            nic_sample_us: 0.0,
            wake_delay_us: 0.0,
            wake_loss: 0.0,
            block_timeout_ms: 0.0,
            daemon_period_ms: 0.0,
            daemon_run_us: 0.0,
            gang_slot_ms: 100.0,
            bsp_jobs: Vec::new(),
            placement: Placement::Cyclic,
            o1_sleep_bonus: true,
            flexible: None,
            gang_background_apart: false,
            smt_threads_per_core: 1,
            smt_speed: 0.6,
            probe_ms: 1000.0,
            probe_node: 0,
            scale: 1.0,
            alone_s: 25.0,
            max_time_s: 20_000.0,
            max_events: crate::machines::common::DEFAULT_MAX_EVENTS,
            seed: 1,
            reps: 1,
        }
    }
}

/// A dispatch table from TOML (`[[level]]` entries) or `dispadmin -c TS -g`
/// text; errors name `dispatch_table` and the problem's line.
pub fn parse_table(text: &str) -> Result<DispatchTable, ConfigError> {
    const FIELD: &str = "dispatch_table";
    let table = if text.contains("[[level]]") {
        toml::from_str::<DispatchTable>(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].lines().count().max(1));
            let msg = e
                .message()
                .lines()
                .next()
                .unwrap_or("invalid TOML")
                .to_string();
            ConfigError::new(
                FIELD,
                match line {
                    Some(l) => format!("line {l}: {msg}"),
                    None => msg,
                },
                "[[level]] entries with quantum_ms, tqexp, slpret, maxwait_s, lwait",
            )
        })?
    } else {
        DispatchTable::parse_dispadmin(text)
            .map_err(|e| ConfigError::new(FIELD, e.message, e.allowed))?
    };
    table
        .validate()
        .map_err(|e| ConfigError::new(FIELD, e.message, e.allowed))?;
    Ok(table)
}

impl ClusterConfig {
    /// Sets one key from a user's value (TOML, `--set`, a Python dict); see
    /// [`super::SCHEMA`]. `jobs` takes application names separated by commas
    /// (`""`: use `workload`); `scheme` a Table-1 name, `gang` or `fcfs`;
    /// `dispatch_table` a table's text, TOML (`[[level]]` entries with
    /// `quantum_ms`, `tqexp`, `slpret`, `maxwait_s`, `lwait`) or the output
    /// of `dispadmin -c TS -g` (`""` or `solaris`: the stock table);
    /// `job_width` and `spin_time_us` accept `none`.
    pub fn set(&mut self, key: &str, v: &Value) -> Result<(), ConfigError> {
        super::SCHEMA.set(self, key, v)
    }

    /// The jobs' names, in order.
    pub fn job_names(&self) -> Vec<String> {
        if !self.bsp_jobs.is_empty() {
            return self.bsp_jobs.iter().map(|j| j.name.clone()).collect();
        }
        self.apps().iter().map(|a| a.name().to_string()).collect()
    }

    /// The message costs of this machine (for sizing the applications).
    pub fn costs(&self) -> Costs {
        Costs::new(
            self.latency_us,
            self.send_overhead_us,
            self.recv_overhead_us,
            self.per_byte_ns,
        )
    }

    /// The calibration the run's applications are sized by: for this
    /// machine's message costs with `resize_apps`, else for the paper's.
    /// Computed once per run, where its jobs are planned, and passed to
    /// what sizes the applications.
    pub fn calibration(&self) -> Calibration {
        Calibration::of(if self.resize_apps {
            self.costs()
        } else {
            Costs::paper()
        })
    }

    /// Every job as the machine builds it, computed once per run: the
    /// bulk-synchronous jobs, or the paper's applications sized by
    /// [`ClusterConfig::calibration`] (computed here only for them).
    pub(crate) fn plans(&self) -> Vec<JobPlan> {
        use parsched_core::program::{Dist, Program, Step};
        if self.bsp_jobs.is_empty() {
            return self.app_plans(&self.calibration());
        }
        self.bsp_jobs
            .iter()
            .enumerate()
            .map(|(j, b)| {
                let width = b.mult.len() as u32;
                let iters = ((b.iterations as f64 * self.scale).round() as u64).max(1);
                let mut body = vec![Step::Compute {
                    demand: Dist::Const { value: b.grain_us },
                }];
                body.extend(Program::message_barrier(width, 8));
                JobPlan {
                    program: Program::new(vec![Step::Repeat { count: iters, body }]),
                    width,
                    mult: b.mult.clone(),
                    spin_us: self.spin_time_us.unwrap_or(0.0),
                    background: b.background,
                    stream_key: (0x80 | j as u64) << 56,
                }
            })
            .collect()
    }

    /// The paper's applications as jobs, sized by `cal`.
    fn app_plans(&self, cal: &Calibration) -> Vec<JobPlan> {
        let width = self.width();
        let apps = self.apps();
        let mut seen: Vec<AppKind> = Vec::new();
        apps.iter()
            .map(|&a| {
                // A job's compute draws depend on its application, its
                // occurrence among the workload's jobs of that application
                // and the rank, not on its position: the first LIFE12 of any
                // workload draws what LIFE12 alone draws (common random
                // numbers across workloads).
                let occurrence = seen.iter().filter(|&&x| x == a).count() as u64;
                seen.push(a);
                let app_index = a.index() as u64;
                let model = cal.model(a);
                JobPlan {
                    program: model.program(a, width, self.scale),
                    width,
                    mult: vec![1.0; width as usize],
                    spin_us: self.spin_time_us.unwrap_or_else(|| {
                        self.app_spin_us
                            .get(app_index as usize)
                            .copied()
                            .unwrap_or(model.spin_time_us)
                    }),
                    background: false,
                    stream_key: (app_index << 56) | (occurrence << 32),
                }
            })
            .collect()
    }

    /// The applications of the run, in the workload's order.
    pub fn apps(&self) -> Vec<AppKind> {
        if !self.jobs.is_empty() {
            self.jobs.clone()
        } else {
            WORKLOADS
                .get(self.workload.wrapping_sub(1) as usize)
                .map(|w| w.to_vec())
                .unwrap_or_default()
        }
    }

    /// Processes per job.
    pub fn width(&self) -> u32 {
        self.job_width.unwrap_or(self.nodes)
    }

    /// The table the nodes use.
    pub fn table(&self) -> DispatchTable {
        self.dispatch_table
            .clone()
            .unwrap_or_else(DispatchTable::solaris)
    }

    /// Ideal (gang, no overhead) completion time (s): jobs × `alone_s` ×
    /// `scale` (a scaled job runs `scale` × its iterations).
    pub fn ideal_s(&self) -> f64 {
        self.apps().len() as f64 * self.alone_s * self.scale
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        super::SCHEMA.check(self)?;
        if self.jobs.is_empty() && !(1..=9).contains(&self.workload) {
            return Err(ConfigError::new(
                "workload",
                format!("{} is not a workload", self.workload),
                "1..=9 (Table 2), or jobs=A,B,... for a custom mix",
            ));
        }
        if !self.app_spin_us.is_empty() && self.app_spin_us.len() != AppKind::ALL.len() {
            return Err(ConfigError::new(
                "app_spin_us",
                format!("{} values", self.app_spin_us.len()),
                "five spin times (µs) in the order LIFE3.5, LIFE12, MG, LU, EP, or none",
            ));
        }
        if let Some(w) = self.job_width {
            if w > self.nodes * self.cpus_per_node {
                return Err(ConfigError::new(
                    "job_width",
                    format!("{w}"),
                    "1..=nodes*cpus_per_node",
                ));
            }
        }
        if matches!(self.scheme, CoschedScheme::Gang | CoschedScheme::Fcfs)
            && self.width() > self.nodes * self.cpus_per_node
        {
            return Err(ConfigError::new(
                "job_width",
                "wider than the machine",
                "at most nodes*cpus_per_node for gang and fcfs",
            ));
        }
        let table = self.table();
        table.validate()?;
        self.boost_to.validate(&table)?;
        if self.initial_level as usize >= table.level.len() {
            return Err(ConfigError::new(
                "initial_level",
                format!("{} is not a level", self.initial_level),
                format!("0..={}", table.top()),
            ));
        }
        if self.send_overhead_us + self.recv_overhead_us > self.latency_us {
            return Err(ConfigError::new(
                "latency_us",
                format!(
                    "{} is less than send_overhead_us + recv_overhead_us = {}",
                    self.latency_us,
                    self.send_overhead_us + self.recv_overhead_us
                ),
                "latency_us >= send_overhead_us + recv_overhead_us",
            ));
        }
        if !matches!(self.smt_threads_per_core, 1 | 2)
            || !self.cpus_per_node.is_multiple_of(self.smt_threads_per_core)
        {
            return Err(ConfigError::new(
                "smt_threads_per_core",
                format!(
                    "{} with cpus_per_node = {}",
                    self.smt_threads_per_core, self.cpus_per_node
                ),
                "1 (no SMT) or 2 (with an even cpus_per_node)",
            ));
        }
        if !(self.smt_speed.is_finite() && self.smt_speed > 0.0 && self.smt_speed <= 1.0) {
            return Err(ConfigError::new(
                "smt_speed",
                format!("{}", self.smt_speed),
                "a fraction in (0, 1]",
            ));
        }
        if self.wake_loss > 0.0 && self.block_timeout_ms == 0.0 {
            return Err(ConfigError::new(
                "block_timeout_ms",
                "0 (never) with lost wake-ups would leave processes asleep forever",
                "> 0 when wake_loss > 0",
            ));
        }
        if self.daemon_period_ms > 0.0 && self.daemon_run_us * 1e-3 >= self.daemon_period_ms {
            return Err(ConfigError::new(
                "daemon_run_us",
                "the daemon would never sleep",
                "daemon_run_us < daemon_period_ms * 1000",
            ));
        }
        if self.probe_node >= self.nodes {
            return Err(ConfigError::new(
                "probe_node",
                format!("{}", self.probe_node),
                format!("0..{}", self.nodes),
            ));
        }
        if self.apps().len() > 4096 {
            return Err(ConfigError::new("jobs", "too many jobs", "at most 4096"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_costs_are_the_papers_the_calibration_starts_from() {
        let c = ClusterConfig::default();
        assert_eq!(c.costs(), Costs::paper());
        let resized = ClusterConfig {
            latency_us: 40.0,
            ..c.clone()
        };
        assert_ne!(resized.costs(), Costs::paper());
        assert_eq!(
            resized.calibration().costs,
            Costs::paper(),
            "resize_apps off"
        );
        let on = ClusterConfig {
            resize_apps: true,
            ..resized
        };
        assert_eq!(on.calibration().costs, on.costs());
    }
}
