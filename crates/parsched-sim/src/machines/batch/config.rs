//! The batch machine's configuration: [`BatchConfig`], set and checked
//! through its schema ([`super::SCHEMA`], `keys.rs`).

use crate::workloads::swf::SwfRules;
use parsched_core::policy::gang::SlotAllocation;
use parsched_core::ConfigError;
use parsched_core::Value;
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
    /// The policy's name (its [`Choice`](parsched_core::schema::Choice) name).
    pub fn name(self) -> &'static str {
        parsched_core::schema::Choice::name(self)
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

pub use crate::workloads::lublin::MAX_WORKLOAD_JOBS;

/// The batch machine's configuration. Keys of [`BatchConfig::set`] are the
/// field names (rules of [`SwfRules`] by their own names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BatchConfig {
    pub policy: BatchPolicyKind,
    /// The priority rule the queue is sorted by before fcfs, easy or
    /// conservative sees it (arrival order by default).
    pub order: parsched_core::policy::batch::QueueOrder,
    /// EASY: the order backfilling examines the queue in (the queue's own
    /// by default).
    pub backfill_order: parsched_core::policy::batch::BackfillOrder,
    /// Easy or conservative: backfill with at most this many reservations
    /// instead (`None`: the policy's own, 1 or all).
    pub reservation_depth: Option<u32>,
    /// `order = multifactor`: Slurm's weights, ages, decay and tiers.
    pub multifactor: parsched_core::policy::batch::MultifactorParams,
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
    /// Generated workload: where requested times come from.
    pub workload_requested: crate::workloads::tsafrir05::RequestedTimes,
    /// Generated workload, `requested = tsafrir05`: the maximal estimate (s).
    pub workload_estimate_max: u64,
    /// Generated workload, `requested = tsafrir05`: percent of jobs at the
    /// maximal estimate (`None`: the model's own).
    pub workload_estimate_max_percent: Option<f64>,
    /// Generated workload, `requested = tsafrir05`: the model of the number
    /// of distinct estimates.
    pub workload_estimate_bins: crate::workloads::tsafrir05::BinCount,
    /// A gang run whose estimated event count ([`BatchConfig::estimate_events`])
    /// is above this is refused before it starts; 0: no limit.
    pub max_events: u64,
}

impl Default for BatchConfig {
    fn default() -> Self {
        BatchConfig {
            policy: BatchPolicyKind::Easy,
            order: parsched_core::policy::batch::QueueOrder::FCFS,
            backfill_order: parsched_core::policy::batch::BackfillOrder::PRIORITY,
            reservation_depth: None,
            multifactor: Default::default(),
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
            workload_requested: Default::default(),
            workload_estimate_max: crate::workloads::lublin::DEFAULT_ESTIMATE_MAX,
            workload_estimate_max_percent: None,
            workload_estimate_bins: Default::default(),
            max_events: crate::machines::common::DEFAULT_MAX_EVENTS,
        }
    }
}

impl BatchConfig {
    /// Sets one key (see [`super::SCHEMA`]).
    pub fn set(&mut self, key: &str, v: &Value) -> Result<(), ConfigError> {
        super::SCHEMA.set(self, key, v)
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

    /// Checks every value; the error names the key and what is allowed
    /// (every check is a key's own range, [`super::SCHEMA`]).
    pub fn validate(&self) -> Result<(), ConfigError> {
        super::SCHEMA.check(self)?;
        if self.policy == BatchPolicyKind::Gang
            && self.order != parsched_core::policy::batch::QueueOrder::FCFS
        {
            return Err(ConfigError::new(
                "order",
                format!(
                    "{} orders the queue of fcfs, easy and conservative; gang admits in arrival \
                     order",
                    parsched_core::schema::Choice::name(self.order)
                ),
                "fcfs (with policy = gang)",
            ));
        }
        if self.reservation_depth.is_some()
            && !matches!(
                self.policy,
                BatchPolicyKind::Easy | BatchPolicyKind::Conservative
            )
        {
            return Err(ConfigError::new(
                "reservation_depth",
                format!(
                    "set with policy = {}, which makes no reservations",
                    self.policy.name()
                ),
                "unset, or policy = easy or conservative",
            ));
        }
        if self.policy != BatchPolicyKind::Easy
            && self.backfill_order != parsched_core::policy::batch::BackfillOrder::PRIORITY
        {
            return Err(ConfigError::new(
                "backfill_order",
                format!(
                    "{} orders EASY's backfill candidates; {} has none of its own",
                    parsched_core::schema::Choice::name(self.backfill_order),
                    self.policy.name()
                ),
                "priority (with a policy other than easy)",
            ));
        }
        Ok(())
    }
}
