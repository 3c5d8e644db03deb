//! What to run and what came out: [`RunSpec`], [`JobSpec`], [`JobReport`].
//! All serde, so a TOML job file maps onto a `RunSpec` directly:
//!
//! ```toml
//! policy = "gang"
//! slot = "50ms"
//!
//! [[jobs]]
//! argv = ["./bsp", "--threads", "2"]
//! width = 2
//!
//! [[jobs]]
//! name = "b"
//! argv = ["./b.out"]
//! env = { OMP_NUM_THREADS = "2" }
//! ```

use crate::cgroup::BackendKind;
use parsched_core::policy::classify::{ClassifierConfig, CoschedClass};
use parsched_core::policy::gang::MatrixOptions;
use parsched_core::policy::pools::PoolPlacementConfig;
use parsched_core::topology::Topology;
use parsched_core::ConfigError;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// How jobs share the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// Start every job and let Linux schedule them (the baseline).
    Default,
    /// Gang scheduling on the Ousterhout matrix: slots switched by freezing.
    #[default]
    Gang,
    /// Space sharing: pools as cpusets, jobs placed by Zhou–Brecht.
    Pools,
    /// Flexible coscheduling (FCS, seed 002): each job's class (CS / F /
    /// DC) is decided from /proc after a discovery period and revised as its
    /// behaviour changes (the core crate's `ClassTracker`). CS jobs hold
    /// dedicated gang slots; F jobs hold gang slots, and in the slots of
    /// other F jobs they fill in at SCHED_IDLE (they run when the slot's job
    /// stalls); DC jobs leave the matrix and fill idle processors at
    /// SCHED_IDLE, with a guaranteed share (`dc_min_share`); a DC job whose
    /// class changes back is taken back into the matrix. `"flexible"` (the
    /// first flexible mode's name) is accepted as an alias.
    #[serde(alias = "flexible")]
    Fcs,
    /// Seed 003's communication-driven coscheduling on this machine, for
    /// MPI jobs whose ranks load `libparsched_mpi`: each job's statistics
    /// file is named in its environment and its ranks wait as the scheme's
    /// waiting strategy says (`cosched_scheme`: Local busy-waits, SB
    /// spin-blocks, SY spin-yields); with `cosched_layout = "workstations"`
    /// each rank is pinned to one CPU (rank mod CPUs), so every CPU is a
    /// workstation whose local scheduler (Linux's) knows nothing of the
    /// others, as on the paper's network. PB, PBT, PB-SB and PB-SY boost,
    /// every 10 ms and on each CPU, a rank with a message pending
    /// (`SCHED_FIFO` until it has received); DCS, DCS-SB and DCS-SY boost a
    /// spinning rank that is not running when a message is sent to it (the
    /// library rings the controller's bell); spin-yield's ranks ask for a
    /// boost of another rank with a pending message when their spin ends.
    Cosched,
    /// Cache-aware placement of co-running jobs (region scheduling, seed
    /// 004, at the granularity of jobs): each job's working set is measured
    /// from /proc (`clear_refs` + `Referenced`) into the core crate's
    /// `WssEstimator`; the core crate's cache balancer assigns jobs to the
    /// caches of one level by working set and each job is confined to its
    /// cache's CPUs (a cpuset group, or affinity); where the core crate's
    /// conditions say balancing cannot pay, the jobs are left to Linux.
    Regions,
}

/// One job: a process tree started from `argv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    /// Display name; default `job<i>`.
    #[serde(default)]
    pub name: Option<String>,
    pub argv: Vec<String>,
    /// Gang width (cells of the matrix, threads to spread) and the desired
    /// parallelism for pool placement. Default: the number of processors.
    #[serde(default)]
    pub width: Option<u32>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// Redirect standard output / error to these files (created, truncated).
    /// Standard input is always `/dev/null` (jobs run in their own process
    /// groups, where reading a terminal would stop them).
    #[serde(default)]
    pub stdout: Option<PathBuf>,
    #[serde(default)]
    pub stderr: Option<PathBuf>,
    /// FCS policy: a fixed class for this job (`requires_coscheduling`,
    /// `prefers_coscheduling`, `does_not_care`); the classifier is skipped.
    /// Default: decided from observation.
    #[serde(default)]
    pub fcs_class: Option<CoschedClass>,
}

impl JobSpec {
    pub fn new<S: Into<String>>(argv: impl IntoIterator<Item = S>) -> JobSpec {
        JobSpec {
            argv: argv.into_iter().map(Into::into).collect(),
            ..Default::default()
        }
    }

    pub fn width(mut self, w: u32) -> JobSpec {
        self.width = Some(w);
        self
    }
}

/// How processors are grouped into pools (pools policy).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct PoolsSpec {
    /// Equal pools of this many processors; default one pool per
    /// cache/NUMA domain of the topology.
    pub pool_size: Option<u32>,
    /// Explicit pool sizes (taking processors in order); overrides `pool_size`.
    pub sizes: Option<Vec<u32>>,
    pub placement: PoolPlacementConfig,
}

/// The regions policy's knobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RegionsSpec {
    /// The cache level whose caches the jobs are balanced over; default the
    /// last level the topology has. On a machine whose last level is one
    /// cache shared by all CPUs, the private level below (e.g. 2) is the one
    /// with something to balance.
    pub cache_level: Option<u8>,
    /// Working-set scan period, of each job's own CPU time (the paper's
    /// 100 ms of virtual time; also `scan_ms`); the controller wakes at this
    /// period of wall time to check.
    #[serde(
        serialize_with = "ser_duration",
        deserialize_with = "de_duration",
        alias = "scan_ms"
    )]
    pub scan: Duration,
    /// Scans of every job before the first placement (§4's estimator counts
    /// a page only once referenced in 8 scans, fully from 26; 32 leaves a
    /// job a few scans to start).
    pub place_after: u32,
    /// Re-place every this many wake-ups after the first placement (0: only
    /// when a job exits).
    pub replace_every: u32,
    /// Confine jobs with cpuset groups where possible (else, and with
    /// `false`, with `sched_setaffinity` on their threads).
    pub cpusets: bool,
}

impl Default for RegionsSpec {
    fn default() -> Self {
        RegionsSpec {
            cache_level: None,
            scan: Duration::from_millis(100),
            place_after: 32,
            replace_every: 10,
            cpusets: true,
        }
    }
}

/// How the cosched policy places MPI ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CoschedLayout {
    /// Each rank pinned to one CPU (rank mod CPUs): a network of workstations.
    #[default]
    Workstations,
    /// Linux places the ranks.
    Free,
}

/// A run: jobs plus how to schedule them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunSpec {
    pub policy: Policy,
    /// Slot length (gang). Accepts `"50ms"`, `"0.05s"`, `"500us"` or a number
    /// of milliseconds.
    #[serde(
        serialize_with = "ser_duration",
        deserialize_with = "de_duration",
        alias = "slot_ms"
    )]
    pub slot: Duration,
    pub backend: BackendKind,
    /// Multiprogramming level (slots); jobs beyond it wait for room.
    pub max_slots: Option<u32>,
    pub matrix: MatrixOptions,
    /// Use only these OS CPUs (default: online ∩ allowed).
    pub cpus: Option<Vec<u32>>,
    /// An explicit topology (for tests and machines that misreport); its
    /// processors map to `cpus` (required then) in order.
    pub topology: Option<Topology>,
    pub pools: PoolsSpec,
    /// Regions policy.
    pub regions: RegionsSpec,
    /// Run the controller at SCHED_FIFO where permitted.
    pub realtime: bool,
    pub rt_priority: i32,
    /// Spread the running gang's threads one per CPU at each slot.
    pub spread: bool,
    /// Wait until the kernel confirms the ending slot frozen before thawing
    /// the next (strict). With `false` (the default) the next slot is thawed
    /// as soon as the freeze is requested — no task of the old slot runs user
    /// code after that — and the confirmation is awaited afterwards. On a
    /// loaded machine confirmation takes a scheduler slice (≈3.5 ms) per
    /// switch, during which neither slot runs.
    pub confirm_freeze: bool,
    /// FCS policy: voluntary context switches per thread per second of
    /// observed time at or above which a job counts as blocking (the
    /// classifier's `blocking_rate`; also `fcs_blocking_rate`).
    #[serde(alias = "fcs_blocking_rate")]
    pub flexible_blocking_rate: f64,
    /// FCS policy: observed time before the first classification, seconds
    /// (the classifier's `discovery_s`; also `fcs_observe_s`).
    #[serde(alias = "fcs_observe_s")]
    pub flexible_observe_s: f64,
    /// FCS policy: the revision window, observed seconds (the classifier's
    /// `window_s`).
    pub fcs_window_s: f64,
    /// FCS policy: consecutive periods a new class must be seen before a
    /// job's class changes (the classifier's `revise_after`).
    pub fcs_revise_after: u32,
    /// FCS policy: the classifier's `coarse_grain_s` (seconds of CPU per
    /// synchronization at or above which a blocking job is DC).
    pub fcs_coarse_grain_s: f64,
    /// FCS policy: the classifier's `frustrated_wait_ratio` (blocked time
    /// per synchronization over granularity above which a job is F).
    pub fcs_frustrated_wait_ratio: f64,
    /// FCS policy: the least share a DC job gets of the CPU time it wants
    /// (of wall time, for a job that always wants its processors). When a
    /// released job got less since its release, the next slot is a DC slot:
    /// every gang frozen, the DC jobs alone. 0 disables DC slots (DC jobs
    /// then only fill idle time). Default 0.1.
    pub dc_min_share: f64,
    /// FCS policy: F jobs filling another F job's slot run at SCHED_IDLE
    /// (`true`: only where the slot's owner leaves a processor idle) or at
    /// normal priority (`false`, the default: the slot's F jobs share its
    /// processors through the Linux scheduler, interleaving as their threads
    /// spin-block — seed 002's imbalanced jobs 1 and 2 complement each
    /// other; at SCHED_IDLE the filler's threads on the processor of the
    /// owner's busier thread would get nothing and hold its barrier back).
    pub fcs_fill_idle: bool,
    /// FCS policy: jobs in discovery fill other slots, and other jobs fill
    /// theirs, at SCHED_IDLE (the core policy's `discovery_fill`; `false`,
    /// the default: a job in discovery runs alone in its slot).
    pub fcs_discovery_fill: bool,
    /// FCS policy: classify a job from the synchronization statistics it
    /// publishes itself (the file named by `PARSCHED_FCS_SYNC_FILE`:
    /// synchronizations, wait and spin time, as the FCS papers' communication
    /// library measures them; `bench/bsp` writes it) when it does, and from
    /// /proc otherwise (`true`, the default); `false`: always from /proc.
    pub fcs_sync_stats: bool,
    /// Fork a supervisor that thaws everything if the controller dies.
    /// Cosched policy: seed 003's scheme (`Local`, `SB`, `SY`, `DCS`,
    /// `DCS-SB`, `DCS-SY`, `PB`, `PBT`, `PB-SB`, `PB-SY`).
    pub cosched_scheme: parsched_core::policy::cosched::CoschedScheme,
    /// Cosched policy: `workstations` (each MPI rank pinned to CPU rank mod
    /// CPUs) or `free` (Linux places the ranks).
    pub cosched_layout: CoschedLayout,
    /// Cosched policy: the ranks' spin time before blocking or yielding
    /// (µs; `parsched tune mpi-spin` chooses it as the paper did).
    pub cosched_spin_us: u32,
    pub supervisor: bool,
    /// Thaw stale groups of dead controllers before starting.
    pub recover: bool,
    pub jobs: Vec<JobSpec>,
}

impl Default for RunSpec {
    fn default() -> Self {
        RunSpec {
            policy: Policy::Gang,
            slot: Duration::from_millis(50),
            backend: BackendKind::Auto,
            max_slots: None,
            matrix: MatrixOptions::default(),
            cpus: None,
            topology: None,
            pools: PoolsSpec::default(),
            regions: RegionsSpec::default(),
            realtime: true,
            rt_priority: 10,
            spread: true,
            confirm_freeze: false,
            flexible_blocking_rate: 25.0,
            flexible_observe_s: 0.2,
            fcs_window_s: 1.0,
            fcs_revise_after: 2,
            fcs_coarse_grain_s: 0.01,
            fcs_frustrated_wait_ratio: 0.25,
            dc_min_share: 0.1,
            fcs_fill_idle: false,
            fcs_discovery_fill: false,
            fcs_sync_stats: true,
            cosched_scheme: parsched_core::policy::cosched::CoschedScheme::Dynamic(
                parsched_core::policy::cosched::Scheme::LOCAL,
            ),
            cosched_layout: CoschedLayout::Workstations,
            cosched_spin_us: 100,
            supervisor: true,
            recover: true,
            jobs: Vec::new(),
        }
    }
}

impl RunSpec {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.jobs.is_empty() {
            return Err(ConfigError::new("jobs", "no job given", "at least one job"));
        }
        for (i, j) in self.jobs.iter().enumerate() {
            if j.argv.is_empty() || j.argv[0].is_empty() {
                return Err(ConfigError::new(
                    "argv",
                    format!("job {i} has no program"),
                    "a program and its arguments",
                ));
            }
            if j.width == Some(0) {
                return Err(ConfigError::new(
                    "width",
                    format!("job {i} has width 0"),
                    "width >= 1",
                ));
            }
        }
        if self.slot < Duration::from_millis(1) || self.slot > Duration::from_secs(3600) {
            return Err(ConfigError::new(
                "slot",
                format!("{:?}", self.slot),
                "1ms ..= 1h",
            ));
        }
        if !(1..=99).contains(&self.rt_priority) {
            return Err(ConfigError::new(
                "rt_priority",
                self.rt_priority.to_string(),
                "1..=99",
            ));
        }
        self.classifier_config().validate().map_err(|e| {
            let field = match e.field.as_str() {
                "discovery_s" => "flexible_observe_s",
                "blocking_rate" => "flexible_blocking_rate",
                "window_s" => "fcs_window_s",
                "revise_after" => "fcs_revise_after",
                "coarse_grain_s" => "fcs_coarse_grain_s",
                "frustrated_wait_ratio" => "fcs_frustrated_wait_ratio",
                f => f,
            };
            ConfigError::new(field, e.message, e.allowed)
        })?;
        {
            use parsched_core::policy::cosched::{ArrivalAction, CoschedScheme};
            match self.cosched_scheme {
                CoschedScheme::Dynamic(s)
                    if matches!(s.arrival, ArrivalAction::None | ArrivalAction::Dcs) => {}
                CoschedScheme::Dynamic(s)
                    if matches!(s.arrival, ArrivalAction::Pb | ArrivalAction::Pbt) =>
                {
                    if self.policy == Policy::Cosched
                        && self.cosched_layout != CoschedLayout::Workstations
                    {
                        return Err(ConfigError::new(
                            "cosched_layout",
                            format!("{} boosts per CPU: the ranks must be pinned", s.name()),
                            "workstations",
                        ));
                    }
                }
                other => {
                    return Err(ConfigError::new(
                        "cosched_scheme",
                        format!(
                            "{} is a reference schedule, not a scheme (its runtime policy is \
                             `gang` or `default`)",
                            other.name()
                        ),
                        "Local, SB, SY, DCS, DCS-SB, DCS-SY, PB, PBT, PB-SB, PB-SY",
                    ))
                }
            }
        }
        if !(self.dc_min_share.is_finite() && (0.0..=1.0).contains(&self.dc_min_share)) {
            return Err(ConfigError::new(
                "dc_min_share",
                self.dc_min_share.to_string(),
                "a number in 0..=1",
            ));
        }
        let r = &self.regions;
        if r.scan < Duration::from_millis(1) || r.scan > Duration::from_secs(60) {
            return Err(ConfigError::new(
                "regions.scan",
                format!("{:?}", r.scan),
                "1ms ..= 60s",
            ));
        }
        if r.place_after == 0 {
            return Err(ConfigError::new(
                "regions.place_after",
                "0",
                "a number of scans >= 1",
            ));
        }
        if r.cache_level == Some(0) {
            return Err(ConfigError::new(
                "regions.cache_level",
                "0",
                "a cache level >= 1",
            ));
        }
        self.pools.placement.validate()?;
        // Last, as when the gang matrix refused it for every policy (it is
        // built only for gang and FCS now).
        if self.max_slots == Some(0) {
            return Err(ConfigError::new(
                "max_slots",
                "a multiprogramming level of 0 admits no gang",
                "max_slots >= 1, or none for unbounded",
            ));
        }
        Ok(())
    }

    /// The FCS policy's classifier thresholds: `flexible_observe_s` is the
    /// discovery period, `flexible_blocking_rate` the /proc rule's
    /// threshold, the `fcs_*` keys the rest (the runtime sees no
    /// synchronization events, so the /proc rule applies, with CPU and
    /// blocked time).
    pub fn classifier_config(&self) -> ClassifierConfig {
        ClassifierConfig {
            discovery_s: self.flexible_observe_s,
            blocking_rate: self.flexible_blocking_rate,
            coarse_grain_s: self.fcs_coarse_grain_s,
            frustrated_wait_ratio: self.fcs_frustrated_wait_ratio,
            window_s: self.fcs_window_s,
            revise_after: self.fcs_revise_after,
        }
    }
}

/// Parses `50ms`, `0.05s`, `500us`, `2m`, or a bare number of milliseconds.
pub fn parse_duration(s: &str) -> Result<Duration, ConfigError> {
    let t = s.trim();
    let bad = || {
        ConfigError::new(
            "slot",
            format!("cannot parse {s:?}"),
            "e.g. 50ms, 0.05s, 500us",
        )
    };
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let x: f64 = num.parse().map_err(|_| bad())?;
    let secs = match unit.trim() {
        "" | "ms" => x / 1e3,
        "s" => x,
        "us" | "µs" => x / 1e6,
        "ns" => x / 1e9,
        "m" | "min" => x * 60.0,
        _ => return Err(bad()),
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(secs))
}

fn ser_duration<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{}us", d.as_micros()))
}

fn de_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Num(f64),
        Str(String),
    }
    match Raw::deserialize(d)? {
        Raw::Num(ms) if ms >= 0.0 && ms.is_finite() => Ok(Duration::from_secs_f64(ms / 1e3)),
        Raw::Num(ms) => Err(serde::de::Error::custom(format!("bad slot {ms}"))),
        Raw::Str(s) => parse_duration(&s).map_err(serde::de::Error::custom),
    }
}

/// How a job ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitStatus {
    /// Exit code if it exited.
    pub code: Option<i32>,
    /// Signal number if it was killed by a signal.
    pub signal: Option<i32>,
}

impl ExitStatus {
    pub fn from_wait(status: i32) -> ExitStatus {
        if libc::WIFEXITED(status) {
            ExitStatus {
                code: Some(libc::WEXITSTATUS(status)),
                signal: None,
            }
        } else if libc::WIFSIGNALED(status) {
            ExitStatus {
                code: None,
                signal: Some(libc::WTERMSIG(status)),
            }
        } else {
            ExitStatus {
                code: None,
                signal: None,
            }
        }
    }

    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// What happened to one job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobReport {
    pub name: String,
    pub argv: Vec<String>,
    pub pid: i32,
    pub status: ExitStatus,
    pub success: bool,
    /// From start to exit, seconds.
    pub wall_s: f64,
    /// User and system CPU time of the job's process tree, seconds: the
    /// `wait4` rusage of the leader (which includes its reaped descendants),
    /// or the cgroup v2 group's `cpu.stat` when that saw more (descendants
    /// never reaped by the leader).
    pub user_s: f64,
    pub sys_s: f64,
    /// Time spent frozen, seconds.
    pub suspended_s: f64,
    /// Gang width used (cells).
    pub width: u32,
    /// Slots this job held (gang) and the times it was thawed.
    pub slots_run: u64,
    /// OS CPUs the job was allowed (pools) or last spread over (gang).
    pub cpus: Vec<u32>,
    /// Home pool (pools policy).
    pub pool: Option<u32>,
    /// Regions policy: the job's last working-set estimate, bytes (the core
    /// crate's `WssEstimator` over /proc scans).
    #[serde(default)]
    pub wss_bytes: Option<u64>,
    /// Regions policy: why `wss_bytes` is unreliable, when it is — another
    /// user of the page accessed bits (a kernel DAMON monitor, named) cleared
    /// them during the job's scans, so the estimate can be low
    /// (`crate::damon`). `None`: every scan was clean (or no estimate).
    #[serde(default)]
    pub wss_unreliable: Option<String>,
    /// FCS policy: whether the job's last class keeps it gang scheduled
    /// (`true`: CS or F) or released to fill idle time (`false`: DC); `None`
    /// otherwise or if it ended before it was classified.
    #[serde(default)]
    pub coscheduled: Option<bool>,
    /// FCS policy: the job's classes over time, `(t_s, class)` with `t_s`
    /// seconds since the run started and `class` FCS's short name (`CS`,
    /// `F`, `DC`); the first entry is the decision after discovery. Empty
    /// otherwise.
    #[serde(default)]
    pub classes: Vec<(f64, String)>,
    /// FCS policy: what the classifier was given, summed over all observed
    /// periods — voluntary and involuntary context switches, CPU seconds,
    /// blocked thread-seconds, observed seconds and thread-seconds.
    #[serde(default)]
    pub observed: Option<parsched_core::policy::classify::Observation>,
    /// Cosched policy: `(MPI rank, CPU)` for each rank the controller pinned
    /// (layout `workstations`), in rank order. Empty otherwise.
    #[serde(default)]
    pub ranks: Vec<(u32, u32)>,
}

impl JobReport {
    pub fn cpu_s(&self) -> f64 {
        self.user_s + self.sys_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosched_takes_the_ten_schemes_by_name_and_refuses_the_references() {
        let spec: RunSpec = toml::from_str(
            "policy = \"cosched\"\ncosched_scheme = \"SB\"\ncosched_layout = \"free\"\n\
             cosched_spin_us = 30\n[[jobs]]\nargv = [\"true\"]\n",
        )
        .unwrap();
        assert_eq!(spec.policy, Policy::Cosched);
        assert_eq!(spec.cosched_layout, CoschedLayout::Free);
        assert_eq!(spec.cosched_spin_us, 30);
        spec.validate().unwrap();
        for name in ["DCS", "DCS-SB", "DCS-SY", "SY", "Local"] {
            RunSpec {
                cosched_scheme: name.parse().unwrap(),
                ..spec.clone()
            }
            .validate()
            .unwrap();
        }
        for name in ["gang", "FCFS"] {
            let s = RunSpec {
                cosched_scheme: name.parse().unwrap(),
                ..spec.clone()
            };
            let e = s.validate().unwrap_err();
            assert_eq!(e.field, "cosched_scheme", "{name}");
            assert!(e.to_string().contains("DCS, DCS-SB, DCS-SY, PB"), "{e}");
        }
        // a periodic boost acts per CPU: only with the ranks pinned
        let pb = RunSpec {
            cosched_scheme: "PB".parse().unwrap(),
            ..spec.clone()
        };
        assert_eq!(pb.validate().unwrap_err().field, "cosched_layout");
        RunSpec {
            cosched_layout: CoschedLayout::Workstations,
            ..pb
        }
        .validate()
        .unwrap();
    }

    #[test]
    fn max_slots_zero_is_refused_under_every_policy() {
        for policy in [
            Policy::Default,
            Policy::Gang,
            Policy::Fcs,
            Policy::Pools,
            Policy::Regions,
            Policy::Cosched,
        ] {
            let mut s = RunSpec {
                policy,
                max_slots: Some(0),
                jobs: vec![JobSpec::new(["true"])],
                ..Default::default()
            };
            assert_eq!(s.validate().unwrap_err().field, "max_slots", "{policy:?}");
            s.max_slots = Some(1);
            assert!(s.validate().is_ok(), "{policy:?}");
        }
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("50ms").unwrap(), Duration::from_millis(50));
        assert_eq!(parse_duration("0.05s").unwrap(), Duration::from_millis(50));
        assert_eq!(parse_duration("500us").unwrap(), Duration::from_micros(500));
        assert_eq!(parse_duration("20").unwrap(), Duration::from_millis(20));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("5 parsecs").is_err());
    }

    #[test]
    fn toml_job_file_maps_onto_run_spec() {
        let text = r#"
            policy = "gang"
            slot = "20ms"
            backend = "cgroup1"
            max_slots = 3

            [matrix]
            slot_allocation = "best_fit"

            [[jobs]]
            argv = ["./bsp", "--threads", "2"]
            width = 2

            [[jobs]]
            name = "b"
            argv = ["./b.out", "x"]
            env = { OMP_NUM_THREADS = "2" }
            stdout = "b.log"
        "#;
        let s: RunSpec = toml::from_str(text).unwrap();
        assert_eq!(s.policy, Policy::Gang);
        assert_eq!(s.slot, Duration::from_millis(20));
        assert_eq!(s.backend, BackendKind::Cgroup1);
        assert_eq!(s.max_slots, Some(3));
        assert_eq!(
            s.matrix.slot_allocation,
            parsched_core::policy::gang::SlotAllocation::BestFit
        );
        assert_eq!(s.jobs.len(), 2);
        assert_eq!(s.jobs[0].width, Some(2));
        assert_eq!(s.jobs[1].env["OMP_NUM_THREADS"], "2");
        assert_eq!(s.jobs[1].stdout, Some(PathBuf::from("b.log")));
        assert!(s.realtime && s.supervisor);
        s.validate().unwrap();
        // Round trip through JSON (what the bindings use).
        let j = serde_json::to_string(&s).unwrap();
        let back: RunSpec = serde_json::from_str(&j).unwrap();
        assert_eq!(back, s);
        // Pools options.
        let p: RunSpec = toml::from_str(
            "policy = \"pools\"\nslot_ms = 10\n[pools]\npool_size = 1\n[pools.placement]\nspanning = { kind = \"none\" }\nparallelism = { kind = \"unrestricted\" }\nf_rounding = \"nearest\"\ng_rounding = \"nearest\"\ntie_break = \"lowest_index\"\n[[jobs]]\nargv = [\"true\"]\n",
        )
        .unwrap();
        assert_eq!(p.slot, Duration::from_millis(10));
        assert_eq!(p.pools.pool_size, Some(1));
    }

    #[test]
    fn validation_names_the_field() {
        let mut s = RunSpec::default();
        assert_eq!(s.validate().unwrap_err().field, "jobs");
        s.jobs.push(JobSpec::new(["x"]).width(0));
        assert_eq!(s.validate().unwrap_err().field, "width");
        s.jobs[0].width = Some(1);
        s.slot = Duration::from_micros(10);
        assert_eq!(s.validate().unwrap_err().field, "slot");
        assert!(toml::from_str::<RunSpec>("polcy = \"gang\"").is_err());
        s.slot = Duration::from_millis(50);
        s.validate().unwrap();
        s.flexible_blocking_rate = -1.0;
        assert_eq!(s.validate().unwrap_err().field, "flexible_blocking_rate");
        s.flexible_blocking_rate = 25.0;
        s.flexible_observe_s = f64::NAN;
        assert_eq!(s.validate().unwrap_err().field, "flexible_observe_s");
        s.flexible_observe_s = 0.2;
        s.fcs_revise_after = 0;
        assert_eq!(s.validate().unwrap_err().field, "fcs_revise_after");
        s.fcs_revise_after = 2;
        s.fcs_window_s = -1.0;
        assert_eq!(s.validate().unwrap_err().field, "fcs_window_s");
        s.fcs_window_s = 1.0;
        s.dc_min_share = 1.5;
        assert_eq!(s.validate().unwrap_err().field, "dc_min_share");
        s.dc_min_share = 0.1;
        s.validate().unwrap();
    }

    #[test]
    fn flexible_is_an_alias_of_fcs() {
        let s: RunSpec = toml::from_str(
            "policy = \"flexible\"\nfcs_window_s = 2.0\nfcs_revise_after = 3\ndc_min_share = 0.25\n[[jobs]]\nargv = [\"true\"]\nfcs_class = \"does_not_care\"\n",
        )
        .unwrap();
        assert_eq!(s.policy, Policy::Fcs);
        let c = s.classifier_config();
        assert_eq!((c.window_s, c.revise_after), (2.0, 3));
        assert_eq!(s.dc_min_share, 0.25);
        assert_eq!(s.jobs[0].fcs_class, Some(CoschedClass::DoesNotCare));
        let f: RunSpec =
            serde_json::from_str(r#"{"policy": "fcs", "fcs_blocking_rate": 7}"#).unwrap();
        assert_eq!(f.policy, Policy::Fcs);
        assert_eq!(f.classifier_config().blocking_rate, 7.0);
        assert_eq!(serde_json::to_string(&Policy::Fcs).unwrap(), "\"fcs\"");
    }

    #[test]
    fn flexible_keys_map_onto_the_classifier() {
        // The defaults are the classifier's and the keys keep their names.
        let d = RunSpec::default();
        assert_eq!(d.flexible_blocking_rate, 25.0);
        assert_eq!(d.flexible_observe_s, 0.2);
        let c = d.classifier_config();
        assert_eq!(c.blocking_rate, ClassifierConfig::default().blocking_rate);
        assert_eq!(c.discovery_s, ClassifierConfig::default().discovery_s);
        let s: RunSpec = toml::from_str(
            "policy = \"fcs\"\nflexible_blocking_rate = 40.0\nflexible_observe_s = 0.5\n[[jobs]]\nargv = [\"true\"]\n",
        )
        .unwrap();
        assert_eq!(s.classifier_config().blocking_rate, 40.0);
        assert_eq!(s.classifier_config().discovery_s, 0.5);
        let j: RunSpec =
            serde_json::from_str(r#"{"policy": "flexible", "flexible_blocking_rate": 10}"#)
                .unwrap();
        assert_eq!(j.classifier_config().blocking_rate, 10.0);
    }
}
