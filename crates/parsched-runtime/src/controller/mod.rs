//! The controller: starts the jobs, then applies the policy until all exit.
//!
//! The controller is a mechanism and a policy, in the spirit of Linux's
//! `sched_ext_ops`. The mechanism (`mechanism/`) owns the jobs and acts on
//! them: the timer, the pidfds and signals, freezing, affinity, cpusets,
//! reaping, the supervisor (safety), the statistics. The policy
//! (`policy::RuntimePolicy`, one implementation per file below) observes
//! and decides through its callbacks (`start`, `next_deadline`, `on_timer`,
//! `on_exit`, `on_job_exit`, `annotate`, `on_stop`, `finish`) and hands its
//! decisions to the mechanism as data (`mechanism::Decision`: spawn,
//! freeze, thaw, spread, unpin, confine, SCHED_IDLE, width). The loop
//! ([`Controller::run`]) never looks at which policy runs: `policy::build`
//! constructs it from [`Policy`], once.
//!
//! **Gang** (`gang`): each job is a gang of `width` cells in the
//! core crate's [`GangMatrix`] (unchanged; the simulator drives the same
//! code). Slots rotate by [`GangMatrix::next_slot`]; at each switch the
//! current slot's gangs are frozen *before* the next slot's are thawed, so two
//! slots never run together, and the running gangs' threads are spread one
//! per CPU over their cells (`/proc/PID/task` of every process in the group,
//! `sched_setaffinity`), also re-applied at every slot boundary. The loop is
//! timer-driven: one `poll` on a `timerfd` armed with an absolute deadline,
//! one `pidfd` per job (exits wake it at once) and the signal self-pipe — it
//! does nothing between events. A job that exits frees its cells; if its slot
//! has no live gang left the switch happens at once (seed 001 §3.2's early
//! switch). Jobs that find no room (bounded `max_slots`) wait and are admitted
//! at a switch, while every gang is frozen.
//!
//! **Pools** (`pools`): pools from the topology
//! ([`PoolLayout`]), each job placed by the core crate's [`ZhouBrecht`]
//! (home pool = least loaded; threads over candidate pools) and confined to
//! its pools' CPUs by a cpuset group (or, without cpusets, by affinity).
//!
//! **FCS** (`fcs`, alias `flexible`): gang, plus the core crate's
//! FCS policy (`parsched_core::policy::fcs::Fcs`, the one the simulator
//! applies), fed from /proc each observation period; it decides and revises
//! the classes, the matrix membership and DC slots, and each job's role: CS
//! jobs hold dedicated slots, F jobs hold slots and fill the slots of other
//! F jobs, DC jobs leave the matrix and fill idle processors at SCHED_IDLE
//! with a guaranteed share (DC slots); a released job whose class changes
//! back is taken back. The controller measures and applies (`fcs.rs`).
//!
//! **Regions** (`regions`): jobs start unconstrained; their working
//! sets are measured from /proc each scan period into the core crate's
//! `WssEstimator`, then the core crate's cache balancer assigns them to the
//! caches of one level and each is confined to its cache's CPUs — or, where
//! the core crate's conditions say balancing cannot pay, left to Linux
//! (`regions.rs`).
//!
//! **Default**: start everything and let Linux schedule (the baseline).
//!
//! The controller runs at SCHED_FIFO (with `SCHED_RESET_ON_FORK`, so jobs do
//! not inherit it) where permitted; on cgroup v1 with `CONFIG_RT_GROUP_SCHED`
//! it first gives its cpu cgroup some `cpu.rt_runtime_us` if it has none.
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | [`Controller`]: construction, [`Controller::run`] and its event loop |
//! | `policy.rs` | the `RuntimePolicy` trait and `build`, the one factory from [`Policy`] |
//! | `mechanism/mod.rs` | the mechanism's state and `Decision`s, applied |
//! | `mechanism/wait.rs` | the `poll` on timerfd, pidfds and the signal pipe |
//! | `mechanism/jobs.rs` | spawn, freeze/thaw, reap and report, stop |
//! | `default.rs` | default policy: start everything |
//! | `gang.rs` | gang policy: slot switches, admission, refits, spreading; generic over an extension (`GangExt`) |
//! | `fcs.rs` | FCS: gang with the FCS extension: /proc observations → the core `Fcs` policy → roles (freeze/thaw, affinity, SCHED_IDLE) |
//! | `stats_files.rs` | the statistics files shared with the jobs (class files, synchronization statistics, MPI rank views, the bell), used by FCS and cosched |
//! | `pools.rs` | pools policy: Zhou–Brecht placement into cpusets |
//! | `regions.rs` | regions policy: /proc working sets → cache balancing → cpusets |
//! | `realtime.rs` | SCHED_FIFO for the controller |

use crate::cgroup::{open_freezer, open_freezer_explained, BackendKind, Cpuset, Freezer};
use crate::error::Result;
use crate::safety::{owner_tag, recover_stale, Supervisor};
use crate::spawn::job_identity;
#[cfg(doc)]
use crate::spec::Policy;
use crate::spec::{JobReport, RunSpec};
use crate::topology::{machine_topology, read_topology, MachineTopology};
use parsched_core::policy::fcs::FcsConfig;
use parsched_core::policy::gang::{GangId, GangMatrix, SlotId};
#[cfg(doc)]
use parsched_core::{policy::pools::ZhouBrecht, topology::PoolLayout};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod cosched;
mod default;
mod fcs;
mod stats_files;
pub use stats_files::{read_ranks, RankView, Waiting, RANK_SLOT_BYTES};
mod gang;
mod mechanism;
pub(crate) mod policy;
mod pools;
mod realtime;
mod regions;

pub use cosched::{CoschedLayout, CoschedSpec};
pub use fcs::FcsSpec;
use mechanism::{mono_ns, Mechanism, Parts};
use policy::RuntimePolicy;
pub use policy::{policies, PolicyInfo, PolicyReport};
pub use realtime::{enter_realtime, leave_realtime};
pub use regions::{RegionsCache, RegionsRecord, RegionsSpec, RegionsStats};

/// One slot switch, as decided.
#[derive(Debug, Clone)]
pub struct SwitchRecord {
    /// Since the start of the run.
    pub at: Duration,
    pub from: Option<SlotId>,
    pub to: Option<SlotId>,
    /// The matrix the decision was taken on.
    pub matrix: GangMatrix,
    /// Gangs with a live job at that moment.
    pub live: Vec<GangId>,
    /// Whether the switch was early (the slot emptied) rather than timed.
    pub early: bool,
    /// FCS: a DC slot starts (`to` is `None`: every gang frozen, the
    /// released DC jobs run alone).
    pub dc_slot: bool,
}

/// What the controller cost.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ControllerStats {
    pub switches: u64,
    /// Times the controller woke up (timer, job exit, signal).
    pub wakeups: u64,
    /// Total time inside freeze + thaw calls, seconds.
    pub switch_s: f64,
    /// Longest single switch (freeze of one slot + thaw of the next), seconds.
    pub max_switch_s: f64,
    /// Total time re-spreading threads, seconds.
    pub spread_s: f64,
    /// The controller thread's own CPU time during `run`, seconds.
    pub cpu_s: f64,
    pub wall_s: f64,
    /// Whether it ran at SCHED_FIFO.
    pub realtime: bool,
    pub backend: String,
    /// The policy's own statistics, from its report
    /// (`RuntimePolicy::report`), side by side with the controller's keys:
    /// FCS's `dc_slots` (DC slots given: a released job was owed its
    /// `dc_min_share`) and `dc_slot_s` (wall seconds in them), cosched's
    /// `boosts` (ranks raised to SCHED_FIFO), regions' `regions` (the
    /// caches, the scans and every placement decision: [`RegionsStats`]).
    #[serde(flatten)]
    pub policy: PolicyReport,
    /// The signal (SIGINT, SIGTERM, SIGHUP) that stopped the run, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
}

impl ControllerStats {
    /// Key `key` of the policy's report as a `T` (`None`: absent, or not a
    /// `T`): `stats.reported::<u64>("dc_slots")`.
    pub fn reported<T: serde::de::DeserializeOwned>(&self, key: &str) -> Option<T> {
        self.policy
            .get(key)
            .and_then(|v| serde_json::from_value(v.clone()).ok())
    }
}

/// The controller of one run: the mechanism and the policy.
pub struct Controller {
    m: Mechanism,
    policy: Box<dyn RuntimePolicy>,
}

/// The topology the spec names (explicit, or read from the machine).
fn spec_topology(spec: &RunSpec) -> Result<MachineTopology> {
    match (&spec.topology, &spec.cpus) {
        (Some(t), Some(c)) => MachineTopology::explicit(t.clone(), c.clone()),
        (Some(t), None) => {
            let n = t.num_procs();
            MachineTopology::explicit(t.clone(), (0..n).collect())
        }
        (None, Some(c)) => read_topology(Path::new("/"), Some(c)),
        (None, None) => machine_topology(),
    }
}

impl Controller {
    /// Validates the spec, reads the topology, constructs the policy,
    /// recovers stale groups, opens the freezer (if the policy freezes) and
    /// cpusets (if it confines) and starts the supervisor.
    pub fn new(spec: RunSpec) -> Result<Controller> {
        spec.validate()?;
        let topo = spec_topology(&spec)?;
        let policy = policy::build(&spec, &topo)?;
        let owner = owner_tag();
        let (freezer, why): (Box<dyn Freezer>, Vec<String>) = if policy.needs().freezer {
            open_freezer_explained(spec.backend, &owner)?
        } else {
            // Policies that never freeze: signals need no cgroup.
            (Box::new(crate::cgroup::Signal::new()), Vec::new())
        };
        let mut c = Controller::build(spec, topo, policy, freezer, &owner)?;
        if c.m.freezer_kind() == BackendKind::Signal && !why.is_empty() {
            c.m.warn(format!(
                "no usable cgroup freezer ({}); falling back to SIGSTOP/SIGCONT, which a job \
                 can escape by leaving its process group",
                why.join("; ")
            ));
        }
        Ok(c)
    }

    /// As [`Controller::new`] with a given freezer (for example a
    /// [`crate::cgroup::Mock`]).
    pub fn with_freezer(spec: RunSpec, freezer: Box<dyn Freezer>) -> Result<Controller> {
        spec.validate()?;
        let topo = spec_topology(&spec)?;
        let policy = policy::build(&spec, &topo)?;
        Controller::build(spec, topo, policy, freezer, &owner_tag())
    }

    /// As [`Controller::with_freezer`] with a given policy (tests).
    #[cfg(test)]
    fn with_policy(
        spec: RunSpec,
        freezer: Box<dyn Freezer>,
        policy: Box<dyn RuntimePolicy>,
    ) -> Result<Controller> {
        spec.validate()?;
        let topo = spec_topology(&spec)?;
        Controller::build(spec, topo, policy, freezer, &owner_tag())
    }

    fn build(
        spec: RunSpec,
        topo: MachineTopology,
        policy: Box<dyn RuntimePolicy>,
        freezer: Box<dyn Freezer>,
        owner: &str,
    ) -> Result<Controller> {
        let mut warnings = Vec::new();
        if spec.recover {
            for d in recover_stale() {
                warnings.push(format!("recovered stale group {}", d.display()));
            }
        }
        let cpuset = match policy.needs().cpusets {
            Some(what) => match Cpuset::detect(owner) {
                Ok(c) => Some(c),
                Err(e) => {
                    warnings.push(format!(
                        "{e}; {what} are enforced with sched_setaffinity only"
                    ));
                    None
                }
            },
            None => None,
        };
        let mut roots: Vec<PathBuf> = freezer.roots();
        if let Some(c) = &cpuset {
            roots.push(c.root().to_path_buf());
        }
        let supervisor = if spec.supervisor {
            Some(Supervisor::start(&roots)?)
        } else {
            None
        };
        let m = Mechanism::new(Parts {
            spec,
            freezer,
            cpuset,
            topo,
            supervisor,
            identity: job_identity(),
            warnings,
        });
        Ok(Controller { m, policy })
    }

    pub fn warnings(&self) -> &[String] {
        self.m.warnings()
    }

    /// The slot switches, in order.
    pub fn trace(&self) -> &[SwitchRecord] {
        self.m.trace()
    }

    pub fn stats(&self) -> &ControllerStats {
        self.m.stats()
    }

    pub fn topology(&self) -> &MachineTopology {
        self.m.topology()
    }

    /// The policy's name (an entry of `policy::POLICIES`).
    pub fn policy_name(&self) -> &'static str {
        self.policy.name()
    }

    /// The pid of the supervisor, if one runs.
    pub fn supervisor_pid(&self) -> Option<u32> {
        self.m.supervisor_pid()
    }

    /// Records the policy's inputs and decisions from now on (for tests:
    /// [`Controller::fcs_log`], `Fcs::replay`). Only FCS records anything.
    pub fn record_fcs(&mut self) {
        self.policy.record_decisions();
    }

    /// What the policy recorded: FCS's core policy's inputs and decisions
    /// (empty for other policies).
    pub fn fcs_log(&self) -> &[parsched_core::policy::fcs::Step] {
        self.policy.decisions()
    }

    /// The core FCS policy's configuration for this run's spec.
    pub fn fcs_config(&self) -> FcsConfig {
        fcs::fcs_config(self.m.spec())
    }

    /// Runs every job to completion and reports on each (in job order).
    pub fn run(&mut self) -> Result<Vec<JobReport>> {
        let cpu0 = self.m.begin_run()?;
        let r = self.run_inner();
        if r.is_err() {
            self.abort_jobs();
        }
        self.finish_cleanup();
        self.m.stats_mut().policy = self.policy.report(&self.m);
        self.m.end_run(cpu0);
        r?;
        Ok(self.m.reports())
    }

    /// The loop: the policy starts the jobs; then each wake-up (a job's
    /// exit, a signal, the policy's deadline) reaps, and calls the policy's
    /// timer or exit callback.
    fn run_inner(&mut self) -> Result<()> {
        self.policy.start(&mut self.m)?;
        loop {
            if self.m.all_reported() {
                return Ok(());
            }
            let deadline = self.policy.next_deadline();
            let (signal, event) = self.m.wait(deadline, self.policy.event_fd())?;
            if let Some(sig) = signal {
                self.shutdown(sig)?;
                return Ok(());
            }
            let exited = self.reap()?;
            let now = mono_ns();
            if event {
                self.policy.on_event(&mut self.m, now)?;
            }
            if deadline.is_some_and(|d| now >= d) {
                self.policy.on_timer(&mut self.m, now)?;
            } else if exited {
                self.policy.on_exit(&mut self.m)?;
            }
        }
    }

    /// Reaps the jobs that exited; the policy forgets each and adds to its
    /// report. Whether any exited.
    fn reap(&mut self) -> Result<bool> {
        let exited = self.m.reap()?;
        for &i in &exited {
            self.policy.on_job_exit(&mut self.m, i)?;
            if let Some(r) = self.m.report_mut(i) {
                self.policy.annotate(i, r);
            }
        }
        Ok(!exited.is_empty())
    }

    /// SIGINT/SIGTERM/SIGHUP: forward to the jobs, thaw them, give them 2 s,
    /// then kill what is left.
    fn shutdown(&mut self, sig: i32) -> Result<()> {
        self.m
            .warn(format!("received signal {sig}: stopping the jobs"));
        self.m.stopped_by(sig);
        self.m.signal_and_thaw(sig);
        for i in self.policy.on_stop(&mut self.m) {
            self.m.never_started(i, "interrupted before it could start");
        }
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(2) && self.m.any_live() {
            self.reap()?;
            std::thread::sleep(Duration::from_millis(5));
        }
        self.abort_jobs();
        Ok(())
    }

    /// Thaws and SIGKILLs every live job and reaps it.
    fn abort_jobs(&mut self) {
        self.m.kill_and_thaw();
        for i in self.policy.on_stop(&mut self.m) {
            self.m.never_started(i, "not started");
        }
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(2) && self.m.any_live() {
            let _ = self.reap();
            std::thread::sleep(Duration::from_millis(2));
        }
        for i in 0..self.m.jobs().len() {
            self.m.never_started(i, "not started");
        }
    }

    fn finish_cleanup(&mut self) {
        // The policy's own resources (FCS's class files) go with the run
        // (the jobs have exited).
        self.policy.finish();
        self.m.cleanup();
    }
}

#[cfg(test)]
mod tests;

impl Drop for Controller {
    fn drop(&mut self) {
        self.finish_cleanup();
    }
}

/// The backend `Auto` resolves to on this machine (for reports).
pub fn detect_backend() -> BackendKind {
    let tag = owner_tag();
    open_freezer(BackendKind::Auto, &tag)
        .map(|f| f.kind())
        .unwrap_or(BackendKind::Signal)
}
