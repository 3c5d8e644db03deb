//! The controller's mechanism: what every policy shares and none decides.
//!
//! [`Mechanism`] holds the jobs and what acts on them — the freezer, the
//! cpusets, the topology, the supervisor, the signal guard, the timer, the
//! trace, the statistics and the warnings. A policy
//! ([`super::policy::RuntimePolicy`]) reads it (the jobs, their processes'
//! pids, the topology, the spec) and hands it its decisions as data,
//! [`Decision`]s, which [`Mechanism::apply`] carries out at once, in order:
//! start a job, freeze or thaw it, spread its threads, confine it to CPUs,
//! set its threads' scheduling class. The life cycle (spawn, reap, report,
//! shutdown) is in `jobs.rs`; the wait on timerfd, pidfds and signals in
//! `wait.rs`.

use crate::cgroup::{set_affinity, BackendKind, Cpuset, Freezer};
use crate::error::Result;
use crate::procfs;
use crate::safety::{SignalGuard, Supervisor};
use crate::spawn::JobIdentity;
use crate::spec::{JobReport, JobSpec, RunSpec};
use crate::topology::MachineTopology;
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::io::OwnedFd;
use std::time::{Duration, Instant};

use super::{ControllerStats, SwitchRecord};

mod jobs;
mod wait;

pub(crate) use wait::mono_ns;

/// Most switch records kept (a longer trace is cut).
const TRACE_CAP: usize = 1_000_000;

/// A policy's decision, carried out by [`Mechanism::apply`]. Job indices are
/// in spec order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Create the job's group and start it, thawed, with `env` added to its
    /// environment (variables the job's own spec sets win).
    Spawn {
        job: usize,
        env: Vec<(String, String)>,
    },
    /// Request a freeze and wait for the kernel to confirm it.
    Freeze(usize),
    /// Request a freeze only (confirm with [`Decision::ConfirmFrozen`], or
    /// later with [`Decision::ExpectFrozen`]).
    RequestFreeze(usize),
    /// Wait until a requested freeze is confirmed.
    ConfirmFrozen(usize),
    /// The job's requested freeze is checked at the next
    /// [`Decision::VerifyFrozen`] (lazy confirmation: one read later).
    ExpectFrozen(usize),
    /// Warn about every job expected frozen that does not read frozen.
    VerifyFrozen,
    /// Thaw the job for a slot of its own (a slot is counted; a job that is
    /// not frozen only counts it).
    Thaw(usize),
    /// Thaw the job outside a slot of its own (nothing counted).
    ThawOutsideSlot(usize),
    /// Pin the job's threads one per CPU over `cpus`, the busiest first.
    Spread { job: usize, cpus: Vec<u32> },
    /// Allow the job's threads every CPU in use.
    Unpin(usize),
    /// Confine the job to `cpus`. Before it starts: its own cpuset group
    /// where cpusets are available. Once started: its group rewritten, or
    /// without one the affinity of its leader's threads.
    Confine { job: usize, cpus: Vec<u32> },
    /// Put the job's threads at `SCHED_IDLE` (`true`) or back at
    /// `SCHED_OTHER`.
    SetIdle(usize, bool),
    /// The job's gang width (reported).
    SetWidth(usize, u32),
    /// Pin thread `tid` of process `pid` to `cpu`, if that process belongs
    /// to the job (a thread named by the job's own statistics file is
    /// checked, never trusted).
    PinThread {
        job: usize,
        pid: i32,
        tid: i32,
        cpu: u32,
    },
    /// Raise thread `tid` of process `pid` (checked to be the job's) to
    /// `SCHED_FIFO` priority 1 (`on`), or put it back at `SCHED_OTHER`: a
    /// bounded boost (the policy lowers it again). Every boosted thread is
    /// put back when the run ends, and by the supervisor if the controller
    /// dies.
    Boost {
        job: usize,
        pid: i32,
        tid: i32,
        on: bool,
    },
}

impl Decision {
    /// Start job `i` with no added environment.
    pub fn spawn(i: usize) -> Decision {
        Decision::Spawn {
            job: i,
            env: Vec::new(),
        }
    }
}

/// One job, as the mechanism sees it.
pub(crate) struct Job {
    name: String,
    group: String,
    spec: JobSpec,
    width: u32,
    pid: Option<i32>,
    pidfd: Option<OwnedFd>,
    started: Option<Instant>,
    frozen_since: Option<Instant>,
    suspended: Duration,
    slots_run: u64,
    cpus: Vec<u32>,
    report: Option<JobReport>,
    cpuset: bool,
    /// The CPU each thread was last pinned to by the spreader.
    pinned: BTreeMap<i32, u32>,
    /// Freeze requested, confirmation pending.
    unconfirmed: bool,
}

impl Job {
    /// Started and not yet reported.
    pub(crate) fn live(&self) -> bool {
        self.pid.is_some() && self.report.is_none()
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn spec(&self) -> &JobSpec {
        &self.spec
    }

    pub(crate) fn width(&self) -> u32 {
        self.width
    }

    pub(crate) fn pid(&self) -> Option<i32> {
        self.pid
    }

    /// Whether a freeze is in force (requested and not thawed).
    pub(crate) fn frozen(&self) -> bool {
        self.frozen_since.is_some()
    }

    /// Whether the spreader pinned any of its threads.
    pub(crate) fn pinned(&self) -> bool {
        !self.pinned.is_empty()
    }

    /// The CPUs it is confined or spread to.
    pub(crate) fn cpus(&self) -> &[u32] {
        &self.cpus
    }
}

/// The mechanism of one run (see the module documentation).
pub(crate) struct Mechanism {
    spec: RunSpec,
    freezer: Box<dyn Freezer>,
    cpuset: Option<Cpuset>,
    topo: MachineTopology,
    jobs: Vec<Job>,
    supervisor: Option<Supervisor>,
    signals: Option<SignalGuard>,
    timerfd: Option<OwnedFd>,
    trace: Vec<SwitchRecord>,
    stats: ControllerStats,
    warnings: Vec<String>,
    identity: Option<JobIdentity>,
    t0: Instant,
    /// Threads now at `SCHED_FIFO` by [`Decision::Boost`].
    boosted: BTreeSet<i32>,
    /// Every thread ever boosted (each told to the supervisor once).
    boosted_ever: BTreeSet<i32>,
    /// Boosts applied (a thread raised to SCHED_FIFO).
    boosts: u64,
}

/// What [`Mechanism::new`] is built from.
pub(crate) struct Parts {
    pub(crate) spec: RunSpec,
    pub(crate) freezer: Box<dyn Freezer>,
    pub(crate) cpuset: Option<Cpuset>,
    pub(crate) topo: MachineTopology,
    pub(crate) supervisor: Option<Supervisor>,
    pub(crate) identity: Option<JobIdentity>,
    pub(crate) warnings: Vec<String>,
}

impl Mechanism {
    /// The jobs of `parts.spec`, not started; a width over the processors is
    /// cut to them (with a warning).
    pub(crate) fn new(parts: Parts) -> Mechanism {
        let Parts {
            spec,
            freezer,
            cpuset,
            topo,
            supervisor,
            identity,
            mut warnings,
        } = parts;
        let p = topo.topology.num_procs();
        let jobs = spec
            .jobs
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let mut width = j.width.unwrap_or(p);
                if width > p {
                    warnings.push(format!(
                        "job {i}: width {width} > {p} processors; using {p}"
                    ));
                    width = p;
                }
                Job {
                    name: j.name.clone().unwrap_or_else(|| format!("job{i}")),
                    group: format!("job{i}"),
                    spec: j.clone(),
                    width,
                    pid: None,
                    pidfd: None,
                    started: None,
                    frozen_since: None,
                    suspended: Duration::ZERO,
                    slots_run: 0,
                    cpus: Vec::new(),
                    report: None,
                    cpuset: false,
                    pinned: BTreeMap::new(),
                    unconfirmed: false,
                }
            })
            .collect();
        for w in &warnings {
            eprintln!("parsched: warning: {w}");
        }
        let backend = format!("{:?}", freezer.kind()).to_lowercase();
        Mechanism {
            spec,
            freezer,
            cpuset,
            topo,
            jobs,
            supervisor,
            signals: None,
            timerfd: None,
            trace: Vec::new(),
            stats: ControllerStats {
                backend,
                ..Default::default()
            },
            warnings,
            identity,
            t0: Instant::now(),
            boosted: BTreeSet::new(),
            boosted_ever: BTreeSet::new(),
            boosts: 0,
        }
    }

    /// How many [`Decision::Boost`]s raised a thread to SCHED_FIFO.
    pub(crate) fn boosts_applied(&self) -> u64 {
        self.boosts
    }

    pub(crate) fn spec(&self) -> &RunSpec {
        &self.spec
    }

    pub(crate) fn topology(&self) -> &MachineTopology {
        &self.topo
    }

    pub(crate) fn jobs(&self) -> &[Job] {
        &self.jobs
    }

    pub(crate) fn job(&self, i: usize) -> &Job {
        &self.jobs[i]
    }

    /// The processes in job `i`'s group (none if it cannot be read).
    pub(crate) fn pids(&self, i: usize) -> Vec<i32> {
        self.freezer.pids(&self.jobs[i].group).unwrap_or_default()
    }

    /// The freezer's backend.
    pub(crate) fn freezer_kind(&self) -> BackendKind {
        self.freezer.kind()
    }

    /// Whether jobs can be confined by cpuset groups.
    pub(crate) fn has_cpusets(&self) -> bool {
        self.cpuset.is_some()
    }

    /// Whether a freeze must be confirmed when requested (strict mode, or a
    /// backend that cannot be checked later), rather than lazily.
    pub(crate) fn confirms_at_once(&self) -> bool {
        self.spec.confirm_freeze || self.freezer.kind() == BackendKind::Signal
    }

    /// Time since the run started.
    pub(crate) fn elapsed(&self) -> Duration {
        self.t0.elapsed()
    }

    /// Records the signal that stopped the run.
    pub(crate) fn stopped_by(&mut self, sig: i32) {
        self.stats.signal = Some(sig);
    }

    pub(crate) fn warn(&mut self, w: String) {
        eprintln!("parsched: warning: {w}");
        self.warnings.push(w);
    }

    pub(crate) fn warnings(&self) -> &[String] {
        &self.warnings
    }

    pub(crate) fn stats(&self) -> &ControllerStats {
        &self.stats
    }

    /// The run's counters (the policies add theirs).
    pub(crate) fn stats_mut(&mut self) -> &mut ControllerStats {
        &mut self.stats
    }

    pub(crate) fn trace(&self) -> &[SwitchRecord] {
        &self.trace
    }

    /// Whether another switch record is kept.
    pub(crate) fn tracing(&self) -> bool {
        self.trace.len() < TRACE_CAP
    }

    /// Appends a switch record (unless the trace is full).
    pub(crate) fn record(&mut self, r: SwitchRecord) {
        if self.tracing() {
            self.trace.push(r);
        }
    }

    pub(crate) fn supervisor_pid(&self) -> Option<u32> {
        self.supervisor.as_ref().map(|s| s.pid())
    }

    /// Whether every job has been reported.
    pub(crate) fn all_reported(&self) -> bool {
        self.jobs.iter().all(|j| j.report.is_some())
    }

    /// Job `i`'s report, once it has one.
    pub(crate) fn report_mut(&mut self, i: usize) -> Option<&mut JobReport> {
        self.jobs[i].report.as_mut()
    }

    /// Every job's report, in job order (after a run).
    pub(crate) fn reports(&self) -> Vec<JobReport> {
        self.jobs
            .iter()
            .map(|j| j.report.clone().expect("every job reported"))
            .collect()
    }

    /// Carries out one decision.
    pub(crate) fn apply(&mut self, d: Decision) -> Result<()> {
        match d {
            Decision::Spawn { job, env } => self.spawn(job, env)?,
            Decision::Freeze(i) => {
                self.request_freeze_job(i)?;
                self.confirm_frozen_job(i)?;
            }
            Decision::RequestFreeze(i) => self.request_freeze_job(i)?,
            Decision::ConfirmFrozen(i) => self.confirm_frozen_job(i)?,
            Decision::ExpectFrozen(i) => self.jobs[i].unconfirmed = true,
            Decision::VerifyFrozen => self.check_unconfirmed(),
            Decision::Thaw(i) => self.thaw_job(i)?,
            Decision::ThawOutsideSlot(i) => {
                if let Some(s) = self.jobs[i].frozen_since.take() {
                    self.freezer.thaw(&self.jobs[i].group)?;
                    self.jobs[i].suspended += s.elapsed();
                }
            }
            Decision::Spread { job, cpus } => self.spread(job, cpus),
            Decision::Unpin(i) => {
                let all = self.topo.cpus.clone();
                self.each_task(i, |tid| {
                    let _ = set_affinity(tid, &all);
                });
                self.jobs[i].pinned.clear();
                self.jobs[i].cpus = all;
            }
            Decision::Confine { job, cpus } => self.confine(job, cpus)?,
            Decision::SetIdle(i, on) => {
                let policy = if on {
                    libc::SCHED_IDLE
                } else {
                    libc::SCHED_OTHER
                };
                let p = libc::sched_param { sched_priority: 0 };
                self.each_task(i, |tid| {
                    // SAFETY: valid sched_param; threads may be gone meanwhile.
                    unsafe { libc::sched_setscheduler(tid, policy, &p) };
                });
            }
            Decision::SetWidth(i, w) => self.jobs[i].width = w,
            Decision::Boost { job, pid, tid, on } => self.boost(job, pid, tid, on),
            Decision::PinThread { job, pid, tid, cpu } => {
                let ours = self.pids(job).contains(&pid)
                    && procfs::tasks(pid).contains(&tid)
                    && self.topo.cpus.contains(&cpu);
                if !ours {
                    self.warn(format!(
                        "job {job}: not pinning thread {tid} of process {pid} to CPU {cpu}: \
                         not the job's, gone, or the CPU is not in use"
                    ));
                } else if let Err(e) = set_affinity(tid, &[cpu]) {
                    self.warn(format!(
                        "job {job}: thread {tid} not pinned to CPU {cpu}: {e}"
                    ));
                } else if let Some(s) = self.supervisor.as_mut() {
                    s.watch_pinned_tid(tid);
                }
            }
        }
        Ok(())
    }

    /// [`Decision::Boost`].
    fn boost(&mut self, job: usize, pid: i32, tid: i32, on: bool) {
        if !procfs::tasks(pid).contains(&tid) {
            self.boosted.remove(&tid);
            return; // ended meanwhile
        }
        // (only a boost is checked against the job's group: ending one, every
        // period, needs no read of it)
        if on && !self.pids(job).contains(&pid) {
            self.warn(format!(
                "job {job}: not boosting thread {tid} of process {pid}: not the job's"
            ));
            return;
        }
        let (policy, prio) = if on {
            (libc::SCHED_FIFO, 1)
        } else {
            (libc::SCHED_OTHER, 0)
        };
        if on && self.boosted_ever.insert(tid) {
            if let Some(s) = self.supervisor.as_mut() {
                s.watch_rt_tid(tid);
            }
        }
        let p = libc::sched_param {
            sched_priority: prio,
        };
        // SAFETY: valid sched_param; the thread may have exited meanwhile.
        let ok = unsafe { libc::sched_setscheduler(tid, policy, &p) } == 0;
        if ok {
            if on {
                self.boosted.insert(tid);
                self.boosts += 1;
            } else {
                self.boosted.remove(&tid);
            }
        }
    }

    /// Puts every boosted thread back at `SCHED_OTHER`.
    pub(crate) fn unboost_all(&mut self) {
        let p = libc::sched_param { sched_priority: 0 };
        for tid in std::mem::take(&mut self.boosted) {
            // SAFETY: valid sched_param; the thread may be gone.
            unsafe { libc::sched_setscheduler(tid, libc::SCHED_OTHER, &p) };
        }
    }

    /// Calls `f` on every thread of every process in job `i`'s group.
    fn each_task(&self, i: usize, mut f: impl FnMut(i32)) {
        for pid in self.pids(i) {
            for tid in procfs::tasks(pid) {
                f(tid);
            }
        }
    }

    /// Groups whose freeze was requested a slot ago must read frozen now.
    fn check_unconfirmed(&mut self) {
        for i in 0..self.jobs.len() {
            if !std::mem::take(&mut self.jobs[i].unconfirmed) {
                continue;
            }
            if !self.jobs[i].live() || self.jobs[i].frozen_since.is_none() {
                continue;
            }
            let g = self.jobs[i].group.clone();
            if let Ok(false) = self.freezer.is_frozen(&g) {
                self.warn(format!(
                    "{g}: still not reported frozen one slot after the freeze request"
                ));
            }
        }
    }

    /// Pins job `i`'s threads one per CPU of `cpus`: the busiest tasks first
    /// (cumulative CPU time from schedstat), so the `w` busiest each get a
    /// CPU of their own and sleepers (a shell, a waiting main thread) fill in
    /// after them.
    fn spread(&mut self, i: usize, cpus: Vec<u32>) {
        if cpus.is_empty() {
            return;
        }
        let mut tasks: Vec<(u64, i32)> = Vec::new();
        for pid in self.pids(i) {
            for tid in procfs::tasks(pid) {
                let cpu = procfs::thread_cpu_ns(pid, tid).unwrap_or(0);
                tasks.push((cpu, tid));
            }
        }
        tasks.sort_by_key(|&(cpu, tid)| (std::cmp::Reverse(cpu), tid));
        let mut pinned = std::mem::take(&mut self.jobs[i].pinned);
        let mut now_pinned = BTreeMap::new();
        for (k, &(_, tid)) in tasks.iter().enumerate() {
            let c = cpus[k % cpus.len()];
            // Only changes cost a system call; threads may exit meanwhile.
            if pinned.remove(&tid) != Some(c) && set_affinity(tid, &[c]).is_err() {
                continue;
            }
            now_pinned.insert(tid, c);
        }
        self.jobs[i].pinned = now_pinned;
        self.jobs[i].cpus = cpus;
    }

    /// See [`Decision::Confine`].
    fn confine(&mut self, i: usize, cpus: Vec<u32>) -> Result<()> {
        let group = self.jobs[i].group.clone();
        let Some(pid) = self.jobs[i].pid else {
            if let Some(c) = self.cpuset.as_mut() {
                c.create(&group, &cpus)?;
                self.jobs[i].cpuset = true;
            }
            self.jobs[i].cpus = cpus;
            return Ok(());
        };
        if self.jobs[i].cpuset {
            if let Some(c) = self.cpuset.as_ref() {
                let r = c.set_cpus(&group, &cpus);
                self.jobs[i].cpus = cpus;
                if let Err(e) = r {
                    self.warn(format!("{group}: {e}"));
                }
                return Ok(());
            }
        }
        for tid in procfs::tasks(pid) {
            let _ = set_affinity(tid, &cpus);
        }
        self.jobs[i].cpus = cpus;
        Ok(())
    }

    /// Releases what the run holds: groups, cpusets, the supervisor.
    pub(crate) fn cleanup(&mut self) {
        self.unboost_all();
        let _ = self.freezer.cleanup();
        if let Some(c) = self.cpuset.as_mut() {
            c.cleanup();
        }
        if let Some(s) = self.supervisor.take() {
            s.finish();
        }
    }
}
