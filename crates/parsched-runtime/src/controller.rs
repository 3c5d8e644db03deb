//! The controller: starts the jobs, then applies the policy until all exit.
//!
//! **Gang** ([`Policy::Gang`]): each job is a gang of `width` cells in the
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
//! **Pools** ([`Policy::Pools`]): pools from the topology
//! ([`PoolLayout`]), each job placed by the core crate's [`ZhouBrecht`]
//! (home pool = least loaded; threads over candidate pools) and confined to
//! its pools' CPUs by a cpuset group (or, without cpusets, by affinity).
//!
//! **Flexible** ([`Policy::Flexible`]): gang, plus a classifier of each job's
//! voluntary context switches while it holds its slot; jobs that block are
//! released from the matrix to run thawed at SCHED_IDLE (fill idle time).
//!
//! **Default**: start everything and let Linux schedule (the baseline).
//!
//! The controller runs at SCHED_FIFO (with `SCHED_RESET_ON_FORK`, so jobs do
//! not inherit it) where permitted; on cgroup v1 with `CONFIG_RT_GROUP_SCHED`
//! it first gives its cpu cgroup some `cpu.rt_runtime_us` if it has none.

use crate::cgroup::{
    open_freezer, open_freezer_explained, set_affinity, v1_mount, BackendKind, Cpuset, Freezer,
};
use crate::error::{Result, RuntimeError};
use crate::procfs;
use crate::safety::{owner_tag, recover_stale, SignalGuard, Supervisor};
use crate::spawn::{job_identity, Prepared};
use crate::spec::{ExitStatus, JobReport, Policy, RunSpec};
use crate::topology::{machine_topology, read_topology, MachineTopology};
use parsched_core::policy::classify::{Classifier, CoschedClass, Observation};
use parsched_core::policy::gang::{GangId, GangMatrix, SlotId};
use parsched_core::policy::pools::{ForkRequest, PoolPolicy, PoolState, ZhouBrecht};
use parsched_core::topology::PoolLayout;
use parsched_core::{JobId, PoolId};
use serde::Serialize;
use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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
}

struct Job {
    name: String,
    group: String,
    spec: crate::spec::JobSpec,
    gang: GangId,
    width: u32,
    pid: Option<i32>,
    pidfd: Option<OwnedFd>,
    started: Option<Instant>,
    frozen_since: Option<Instant>,
    suspended: Duration,
    slots_run: u64,
    cpus: Vec<u32>,
    pool: Option<u32>,
    placement: Vec<(PoolId, u32)>,
    report: Option<JobReport>,
    cpuset: bool,
    /// The CPU each thread was last pinned to by the spreader.
    pinned: std::collections::BTreeMap<i32, u32>,
    /// Freeze requested at the last switch, confirmation pending.
    unconfirmed: bool,
    /// Flexible: context switches and time when last thawed.
    thawed_at: Option<CtxtSnapshot>,
    /// Flexible: what was observed while the job held its slot.
    observed: Observation,
    /// Flexible: the class, once decided (final).
    class: Option<CoschedClass>,
    /// Times the gang was re-fitted to the job's thread count.
    refits: u32,
}

/// A job's context switch counters at one moment (flexible policy).
#[derive(Debug, Clone, Copy)]
struct CtxtSnapshot {
    at: Instant,
    /// Voluntary context switches, summed over the job's threads.
    voluntary: u64,
    /// Involuntary context switches, summed over the job's threads.
    involuntary: u64,
    threads: u32,
}

impl Job {
    fn live(&self) -> bool {
        self.pid.is_some() && self.report.is_none()
    }
}

/// The controller of one run.
pub struct Controller {
    spec: RunSpec,
    freezer: Box<dyn Freezer>,
    cpuset: Option<Cpuset>,
    topo: MachineTopology,
    matrix: GangMatrix,
    jobs: Vec<Job>,
    waiting: Vec<usize>,
    cur: Option<SlotId>,
    supervisor: Option<Supervisor>,
    signals: Option<SignalGuard>,
    timerfd: Option<OwnedFd>,
    trace: Vec<SwitchRecord>,
    stats: ControllerStats,
    warnings: Vec<String>,
    identity: Option<(u32, u32)>,
    layout: Option<PoolLayout>,
    pool_load: Vec<u32>,
    /// Flexible: decides which jobs stay gang scheduled.
    classifier: Classifier,
    t0: Instant,
}

fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    // SAFETY: plain syscall; a non-negative result is a new descriptor.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as i32;
    // SAFETY: fd is ours.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

fn timerfd() -> Option<OwnedFd> {
    // SAFETY: plain syscall.
    let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
    // SAFETY: fd is ours.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Arms `fd` for the absolute CLOCK_MONOTONIC time `ns`.
fn arm(fd: &OwnedFd, ns: u64) {
    let spec = libc::itimerspec {
        it_interval: libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        },
    };
    // SAFETY: valid itimerspec.
    unsafe {
        libc::timerfd_settime(
            fd.as_raw_fd(),
            libc::TFD_TIMER_ABSTIME,
            &spec,
            std::ptr::null_mut(),
        )
    };
}

/// SCHED_FIFO for the calling thread (reset on fork). On EPERM, gives the
/// thread's v1 cpu cgroup some RT runtime if it has none, then retries.
/// Returns a warning on failure.
pub fn enter_realtime(prio: i32) -> std::result::Result<(), String> {
    let try_set = || {
        let p = libc::sched_param {
            sched_priority: prio,
        };
        // SAFETY: valid sched_param; 0 = calling thread.
        unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK, &p) }
    };
    if try_set() == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EPERM) && give_rt_runtime().is_ok() && try_set() == 0 {
        return Ok(());
    }
    Err(format!(
        "could not run the controller at SCHED_FIFO ({e}); running at normal priority, \
         so slot switches may be delayed by the jobs (needs root and, on cgroup v1 with \
         RT group scheduling, cpu.rt_runtime_us > 0 in the controller's cpu cgroup)"
    ))
}

/// Back to SCHED_OTHER.
pub fn leave_realtime() {
    let p = libc::sched_param { sched_priority: 0 };
    // SAFETY: valid sched_param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &p) };
}

/// Writes `cpu.rt_runtime_us = 10000` on every ancestor (top-down) of this
/// thread's v1 cpu cgroup that has 0.
fn give_rt_runtime() -> Result<()> {
    let mount = v1_mount("cpu").ok_or_else(|| RuntimeError::Unsupported("no v1 cpu".into()))?;
    let cg = std::fs::read_to_string("/proc/thread-self/cgroup")
        .map_err(|e| RuntimeError::io("read /proc/thread-self/cgroup", e))?;
    let path = cg
        .lines()
        .find_map(|l| {
            let mut it = l.splitn(3, ':');
            let (_, ctl, p) = (it.next()?, it.next()?, it.next()?);
            ctl.split(',').any(|c| c == "cpu").then(|| p.to_string())
        })
        .ok_or_else(|| RuntimeError::Unsupported("no cpu cgroup line".into()))?;
    let mut dir = mount.clone();
    for comp in Path::new(&path).components().skip(1) {
        dir.push(comp);
        let f = dir.join("cpu.rt_runtime_us");
        let cur: i64 = std::fs::read_to_string(&f)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(-1);
        if cur == 0 {
            crate::cgroup::write_file(&f, "10000")?;
        }
    }
    Ok(())
}

impl Controller {
    /// Validates the spec, recovers stale groups, reads the topology, opens
    /// the freezer (and cpusets for pools) and starts the supervisor.
    pub fn new(spec: RunSpec) -> Result<Controller> {
        spec.validate()?;
        let owner = owner_tag();
        let (freezer, why): (Box<dyn Freezer>, Vec<String>) = match spec.policy {
            Policy::Gang | Policy::Flexible => open_freezer_explained(spec.backend, &owner)?,
            // Default and pools never freeze; signals need no cgroup.
            _ => (Box::new(crate::cgroup::Signal::new()), Vec::new()),
        };
        let mut c = Controller::build(spec, freezer, &owner)?;
        if c.freezer.kind() == BackendKind::Signal && !why.is_empty() {
            c.warn(format!(
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
        let owner = owner_tag();
        Controller::build(spec, freezer, &owner)
    }

    fn build(spec: RunSpec, freezer: Box<dyn Freezer>, owner: &str) -> Result<Controller> {
        let mut warnings = Vec::new();
        if spec.recover {
            for d in recover_stale() {
                warnings.push(format!("recovered stale group {}", d.display()));
            }
        }
        let topo = match (&spec.topology, &spec.cpus) {
            (Some(t), Some(c)) => MachineTopology::explicit(t.clone(), c.clone())?,
            (Some(t), None) => {
                let n = t.num_procs();
                MachineTopology::explicit(t.clone(), (0..n).collect())?
            }
            (None, Some(c)) => read_topology(Path::new("/"), Some(c))?,
            (None, None) => machine_topology()?,
        };
        let p = topo.topology.num_procs();
        let matrix = GangMatrix::with_options(p, spec.max_slots, spec.matrix)?;
        let (cpuset, layout) = if spec.policy == Policy::Pools {
            let layout = if let Some(s) = &spec.pools.sizes {
                PoolLayout::from_sizes(&topo.topology, s)?
            } else if let Some(k) = spec.pools.pool_size {
                PoolLayout::equal(&topo.topology, k)?
            } else {
                PoolLayout::per_domain(&topo.topology)
            };
            let cs = match Cpuset::detect(owner) {
                Ok(c) => Some(c),
                Err(e) => {
                    warnings.push(format!(
                        "{e}; pools are enforced with sched_setaffinity only"
                    ));
                    None
                }
            };
            (cs, Some(layout))
        } else {
            (None, None)
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
        let identity = job_identity();
        let pool_load = vec![0; layout.as_ref().map_or(0, |l| l.num_pools())];
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
                    gang: GangId(i as u64),
                    width,
                    pid: None,
                    pidfd: None,
                    started: None,
                    frozen_since: None,
                    suspended: Duration::ZERO,
                    slots_run: 0,
                    cpus: Vec::new(),
                    pool: None,
                    placement: Vec::new(),
                    report: None,
                    cpuset: false,
                    pinned: Default::default(),
                    unconfirmed: false,
                    thawed_at: None,
                    observed: Observation::default(),
                    class: None,
                    refits: 0,
                }
            })
            .collect();
        for w in &warnings {
            eprintln!("parsched: warning: {w}");
        }
        let backend = format!("{:?}", freezer.kind()).to_lowercase();
        let classifier = Classifier::new(spec.classifier_config())?;
        Ok(Controller {
            classifier,
            spec,
            freezer,
            cpuset,
            topo,
            matrix,
            jobs,
            waiting: Vec::new(),
            cur: None,
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
            layout,
            pool_load,
            t0: Instant::now(),
        })
    }

    fn warn(&mut self, w: String) {
        eprintln!("parsched: warning: {w}");
        self.warnings.push(w);
    }

    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The slot switches, in order.
    pub fn trace(&self) -> &[SwitchRecord] {
        &self.trace
    }

    pub fn stats(&self) -> &ControllerStats {
        &self.stats
    }

    pub fn topology(&self) -> &MachineTopology {
        &self.topo
    }

    /// The pid of the supervisor, if one runs.
    pub fn supervisor_pid(&self) -> Option<u32> {
        self.supervisor.as_ref().map(|s| s.pid())
    }

    /// Runs every job to completion and reports on each (in job order).
    pub fn run(&mut self) -> Result<Vec<JobReport>> {
        self.t0 = Instant::now();
        let cpu0 = thread_cpu_s();
        self.signals = Some(SignalGuard::install()?);
        self.timerfd = timerfd();
        if self.spec.realtime {
            match enter_realtime(self.spec.rt_priority) {
                Ok(()) => self.stats.realtime = true,
                Err(w) => self.warn(w),
            }
        }
        let r = self.run_inner();
        if r.is_err() {
            self.abort_jobs();
        }
        self.finish_cleanup();
        if self.stats.realtime {
            leave_realtime();
        }
        self.signals = None;
        self.stats.cpu_s = thread_cpu_s() - cpu0;
        self.stats.wall_s = self.t0.elapsed().as_secs_f64();
        r?;
        Ok(self
            .jobs
            .iter()
            .map(|j| j.report.clone().expect("every job reported"))
            .collect())
    }

    fn run_inner(&mut self) -> Result<()> {
        match self.spec.policy {
            Policy::Gang | Policy::Flexible => self.start_gang()?,
            Policy::Pools => self.start_pools()?,
            Policy::Default => {
                for i in 0..self.jobs.len() {
                    self.spawn(i)?;
                }
            }
        }
        let slot_ns = self.spec.slot.as_nanos() as u64;
        let mut deadline = mono_ns() + slot_ns;
        loop {
            if self.jobs.iter().all(|j| j.report.is_some()) {
                return Ok(());
            }
            let gang = matches!(self.spec.policy, Policy::Gang | Policy::Flexible);
            if gang {
                if let Some(t) = &self.timerfd {
                    arm(t, deadline);
                }
            }
            let fired = self.wait_events(gang.then_some(deadline))?;
            self.stats.wakeups += 1;
            if let Some(sig) = fired.signal {
                self.shutdown(sig)?;
                return Ok(());
            }
            let exited = self.reap()?;
            if !gang {
                continue;
            }
            let now = mono_ns();
            let slot_empty = match self.cur {
                Some(s) => !self
                    .matrix
                    .gangs_in(s)
                    .iter()
                    .any(|g| self.jobs[g.0 as usize].live()),
                None => true,
            };
            let timed = now >= deadline;
            if timed || (exited && slot_empty) {
                self.switch(!timed)?;
                deadline = mono_ns() + slot_ns;
            }
        }
    }

    fn wait_events(&mut self, deadline: Option<u64>) -> Result<Fired> {
        let mut fds = Vec::new();
        let sig_fd = self.signals.as_ref().expect("installed").fd();
        fds.push(libc::pollfd {
            fd: sig_fd,
            events: libc::POLLIN,
            revents: 0,
        });
        let mut timer_idx = None;
        if let (Some(_), Some(t)) = (deadline, &self.timerfd) {
            timer_idx = Some(fds.len());
            fds.push(libc::pollfd {
                fd: t.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
        }
        let mut all_pidfds = true;
        for j in self.jobs.iter().filter(|j| j.live()) {
            match &j.pidfd {
                Some(f) => fds.push(libc::pollfd {
                    fd: f.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                }),
                None => all_pidfds = false,
            }
        }
        // Without a timerfd or pidfds, fall back to a bounded timeout.
        let timeout: i32 = match (deadline, timer_idx, all_pidfds) {
            (Some(d), None, _) => (d.saturating_sub(mono_ns()) / 1_000_000).max(1) as i32,
            (_, _, false) => 10,
            _ => -1,
        };
        // SAFETY: fds is a valid array.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(RuntimeError::io("poll", e));
            }
        }
        if let Some(i) = timer_idx {
            if fds[i].revents & libc::POLLIN != 0 {
                let mut b = [0u8; 8];
                // SAFETY: reading the expiration count.
                unsafe { libc::read(fds[i].fd, b.as_mut_ptr().cast(), 8) };
            }
        }
        let signal = self
            .signals
            .as_ref()
            .expect("installed")
            .take()
            .into_iter()
            .next();
        Ok(Fired { signal })
    }

    /// Reaps exited jobs; returns whether any exited.
    fn reap(&mut self) -> Result<bool> {
        let mut any = false;
        for i in 0..self.jobs.len() {
            if !self.jobs[i].live() {
                continue;
            }
            let pid = self.jobs[i].pid.expect("live");
            let mut st = 0;
            // SAFETY: rusage is plain data.
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: our child.
            let r = unsafe { libc::wait4(pid, &mut st, libc::WNOHANG, &mut ru) };
            if r == pid {
                any = true;
                self.finish_job(i, ExitStatus::from_wait(st), &ru)?;
            } else if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::ECHILD) {
                    // Reaped elsewhere (should not happen): report unknown.
                    any = true;
                    // SAFETY: zeroed rusage.
                    let ru: libc::rusage = unsafe { std::mem::zeroed() };
                    self.finish_job(
                        i,
                        ExitStatus {
                            code: None,
                            signal: None,
                        },
                        &ru,
                    )?;
                }
            }
        }
        Ok(any)
    }

    fn finish_job(&mut self, i: usize, status: ExitStatus, ru: &libc::rusage) -> Result<()> {
        let now = Instant::now();
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        {
            let j = &mut self.jobs[i];
            if let Some(s) = j.frozen_since.take() {
                j.suspended += now - s;
            }
        }
        // The group's own CPU accounting also covers descendants the leader
        // never reaped; prefer it when it saw more.
        let group_cpu = self.freezer.cpu_usage(&self.jobs[i].group);
        // Stragglers of the tree go with the leader. Only a cgroup can name
        // them safely: the leader's pid (and process group id) may already
        // be reused now that it has been reaped.
        let group = self.jobs[i].group.clone();
        if matches!(
            self.freezer.kind(),
            BackendKind::Cgroup2 | BackendKind::Cgroup1
        ) {
            let _ = self.freezer.kill(&group);
        }
        if let Err(e) = self.freezer.remove(&group) {
            self.warn(format!("{group}: {e}"));
        }
        if self.jobs[i].cpuset {
            if let Some(c) = self.cpuset.as_mut() {
                let _ = c.remove(&group);
            }
        }
        for &(p, n) in &self.jobs[i].placement {
            self.pool_load[p.idx()] = self.pool_load[p.idx()].saturating_sub(n);
        }
        let gang = self.jobs[i].gang;
        if self.matrix.allocation(gang).is_some() {
            self.matrix
                .release(gang)
                .map_err(parsched_core::PolicyError::from)?;
        }
        let j = &mut self.jobs[i];
        j.pidfd = None;
        j.report = Some(JobReport {
            name: j.name.clone(),
            argv: j.spec.argv.clone(),
            pid: j.pid.unwrap_or(0),
            status,
            success: status.success(),
            wall_s: j.started.map_or(0.0, |s| (now - s).as_secs_f64()),
            user_s: match group_cpu {
                Some((u, s)) if u + s > tv(ru.ru_utime) + tv(ru.ru_stime) => u,
                _ => tv(ru.ru_utime),
            },
            sys_s: match group_cpu {
                Some((u, s)) if u + s > tv(ru.ru_utime) + tv(ru.ru_stime) => s,
                _ => tv(ru.ru_stime),
            },
            suspended_s: j.suspended.as_secs_f64(),
            width: j.width,
            slots_run: j.slots_run,
            cpus: j.cpus.clone(),
            pool: j.pool,
            coscheduled: j.class.map(CoschedClass::is_coscheduled),
            observed: (self.spec.policy == Policy::Flexible).then_some((
                j.observed.voluntary,
                j.observed.involuntary,
                j.observed.wall_s,
            )),
        });
        Ok(())
    }

    /// Creates the group and starts job `i` (thawed).
    fn spawn(&mut self, i: usize) -> Result<()> {
        let group = self.jobs[i].group.clone();
        self.freezer.create(&group)?;
        let mut join = self.freezer.join_files(&group);
        if self.jobs[i].cpuset {
            if let Some(c) = &self.cpuset {
                join.extend(c.join_files(&group));
            }
        }
        let prep = Prepared::new(&self.jobs[i].name, &self.jobs[i].spec, &join, self.identity)?;
        let pid = prep.spawn()?;
        let j = &mut self.jobs[i];
        j.pid = Some(pid);
        j.started = Some(Instant::now());
        j.pidfd = pidfd_open(pid);
        self.freezer.add_pid(&group, pid)?;
        if let Some(s) = self.supervisor.as_mut() {
            s.watch_pgid(pid);
        }
        Ok(())
    }

    fn freeze_job(&mut self, i: usize) -> Result<()> {
        self.request_freeze_job(i)?;
        self.confirm_frozen_job(i)
    }

    fn request_freeze_job(&mut self, i: usize) -> Result<()> {
        if !self.jobs[i].live() || self.jobs[i].frozen_since.is_some() {
            return Ok(());
        }
        let g = self.jobs[i].group.clone();
        self.freezer.request_freeze(&g)?;
        self.jobs[i].frozen_since = Some(Instant::now());
        Ok(())
    }

    fn confirm_frozen_job(&mut self, i: usize) -> Result<()> {
        if !self.jobs[i].live() || self.jobs[i].frozen_since.is_none() {
            return Ok(());
        }
        let g = self.jobs[i].group.clone();
        self.freezer.confirm_frozen(&g)
    }

    fn thaw_job(&mut self, i: usize) -> Result<()> {
        if !self.jobs[i].live() {
            return Ok(());
        }
        let g = self.jobs[i].group.clone();
        if let Some(s) = self.jobs[i].frozen_since.take() {
            self.freezer.thaw(&g)?;
            self.jobs[i].suspended += s.elapsed();
        }
        self.jobs[i].slots_run += 1;
        self.start_observing(i);
        Ok(())
    }

    /// The job's context switch counters over all its threads, now.
    fn job_ctxt(&self, i: usize) -> CtxtSnapshot {
        let mut c = CtxtSnapshot {
            at: Instant::now(),
            voluntary: 0,
            involuntary: 0,
            threads: 0,
        };
        for pid in self.freezer.pids(&self.jobs[i].group).unwrap_or_default() {
            for tid in procfs::tasks(pid) {
                if let Some((v, n)) = procfs::task_ctxt_switches(pid, tid) {
                    c.voluntary += v;
                    c.involuntary += n;
                    c.threads += 1;
                }
            }
        }
        c
    }

    fn start_observing(&mut self, i: usize) {
        if self.spec.policy != Policy::Flexible || self.jobs[i].class.is_some() {
            return;
        }
        self.jobs[i].thawed_at = Some(self.job_ctxt(i));
    }

    /// Flexible: accounts the slot the job just held (call before freezing)
    /// and classifies it once enough was seen. Returns true if the job was
    /// released from gang scheduling (then it must not be frozen).
    fn observe_and_classify(&mut self, i: usize) -> bool {
        if self.spec.policy != Policy::Flexible || !self.jobs[i].live() {
            return false;
        }
        let Some(before) = self.jobs[i].thawed_at.take() else {
            return false;
        };
        let now = self.job_ctxt(i);
        let dt = before.at.elapsed().as_secs_f64();
        // Counters of threads that exited meanwhile vanish: saturate.
        let period = Observation {
            wall_s: dt,
            thread_s: dt * now.threads.max(1) as f64,
            voluntary: now.voluntary.saturating_sub(before.voluntary),
            involuntary: now.involuntary.saturating_sub(before.involuntary),
            ..Default::default()
        };
        self.jobs[i].observed.add(&period);
        let Some(class) = self.classifier.classify(&self.jobs[i].observed) else {
            return false;
        };
        self.jobs[i].class = Some(class);
        if class.is_coscheduled() {
            return false;
        }
        // Does not care: release it to fill idle time.
        let gang = self.jobs[i].gang;
        let _ = self.matrix.release(gang);
        let all = self.topo.cpus.clone();
        let p = libc::sched_param { sched_priority: 0 };
        for pid in self.freezer.pids(&self.jobs[i].group).unwrap_or_default() {
            for tid in procfs::tasks(pid) {
                let _ = set_affinity(tid, &all);
                // SAFETY: valid sched_param; threads may be gone meanwhile.
                unsafe { libc::sched_setscheduler(tid, libc::SCHED_IDLE, &p) };
            }
        }
        self.jobs[i].pinned.clear();
        self.jobs[i].cpus = all;
        true
    }

    fn start_gang(&mut self) -> Result<()> {
        for i in 0..self.jobs.len() {
            let (g, w) = (self.jobs[i].gang, self.jobs[i].width);
            if self
                .matrix
                .allocate(g, w)
                .map_err(parsched_core::PolicyError::from)?
                .is_none()
            {
                self.waiting.push(i);
            }
        }
        let first = self.matrix.next_slot(None, |_| true);
        self.record(None, first, false);
        // Jobs of other slots first, each frozen right after its exec, so at
        // no time do two slots run together.
        let placed: Vec<usize> = (0..self.jobs.len())
            .filter(|i| !self.waiting.contains(i))
            .collect();
        for &i in &placed {
            if self.matrix.slot_of(self.jobs[i].gang) != first {
                self.spawn(i)?;
                self.freeze_job(i)?;
            }
        }
        for &i in &placed {
            if self.matrix.slot_of(self.jobs[i].gang) == first {
                self.spawn(i)?;
                self.jobs[i].slots_run += 1;
                self.start_observing(i);
            }
        }
        self.cur = first;
        self.spread_current();
        Ok(())
    }

    fn record(&mut self, from: Option<SlotId>, to: Option<SlotId>, early: bool) {
        if self.trace.len() >= 1_000_000 {
            return;
        }
        let live = self
            .jobs
            .iter()
            .filter(|j| j.live() || (j.pid.is_none() && self.matrix.allocation(j.gang).is_some()))
            .map(|j| j.gang)
            .collect();
        self.trace.push(SwitchRecord {
            at: self.t0.elapsed(),
            from,
            to,
            matrix: self.matrix.clone(),
            live,
            early,
        });
    }

    /// Ends the current slot and starts the next one.
    fn switch(&mut self, early: bool) -> Result<()> {
        self.check_unconfirmed();
        let t = Instant::now();
        let from = self.cur;
        // The same slot again (it is the only one with work) and nobody
        // waiting: keep it running; only re-spread (new threads).
        if from.is_some() && self.waiting.is_empty() {
            let live: Vec<bool> = self.jobs.iter().map(|j| j.live()).collect();
            if self.matrix.next_slot(from, |g| live[g.0 as usize]) == from {
                self.record(from, from, early);
                self.spread_current();
                return Ok(());
            }
        }
        // 1. Freeze the current slot's gangs: request all, then (strict
        //    mode) wait for the kernel to confirm all.
        let mut ending: Vec<usize> = from.map_or_else(Vec::new, |s| {
            self.matrix
                .gangs_in(s)
                .iter()
                .map(|g| g.0 as usize)
                .collect()
        });
        // Flexible: jobs classified as blocking leave the matrix now and
        // stay thawed.
        ending.retain(|&i| !self.observe_and_classify(i));
        for &i in &ending {
            self.request_freeze_job(i)?;
        }
        let confirm = self.spec.confirm_freeze || self.freezer.kind() == BackendKind::Signal;
        if confirm {
            for &i in &ending {
                self.confirm_frozen_job(i)?;
            }
        }
        let t_frozen = t.elapsed();
        // Jobs without a configured width: fit the gang to the threads seen.
        for &i in &ending {
            self.refit_width(i)?;
        }
        // 2. Admit waiting jobs while everything is frozen.
        if !self.waiting.is_empty() {
            let waiting = std::mem::take(&mut self.waiting);
            for i in waiting {
                let (g, w) = (self.jobs[i].gang, self.jobs[i].width);
                match self
                    .matrix
                    .allocate(g, w)
                    .map_err(parsched_core::PolicyError::from)?
                {
                    Some(_) => {
                        self.spawn(i)?;
                        self.freeze_job(i)?;
                    }
                    None => self.waiting.push(i),
                }
            }
        }
        // 3. Choose and thaw the next slot.
        let live: Vec<bool> = self.jobs.iter().map(|j| j.live()).collect();
        let next = self.matrix.next_slot(from, |g| live[g.0 as usize]);
        self.record(from, next, early);
        let t1 = Instant::now();
        if let Some(s) = next {
            for g in self.matrix.gangs_in(s) {
                self.thaw_job(g.0 as usize)?;
            }
        }
        let dt = t_frozen + t1.elapsed();
        if !confirm {
            // Confirmed lazily: checked once at the next switch (one read).
            for &i in &ending {
                self.jobs[i].unconfirmed = true;
            }
        }
        self.cur = next;
        self.stats.switches += 1;
        self.stats.switch_s += dt.as_secs_f64();
        self.stats.max_switch_s = self.stats.max_switch_s.max(dt.as_secs_f64());
        self.spread_current();
        Ok(())
    }

    /// A job with no configured width starts with all processors; each time
    /// it leaves its slot (frozen, at most 4 times) its gang is re-fitted to
    /// its current number of threads (capped at P), which may move it to
    /// another slot.
    fn refit_width(&mut self, i: usize) -> Result<()> {
        let j = &self.jobs[i];
        if j.spec.width.is_some() || j.refits >= 4 || !j.live() {
            return Ok(());
        }
        let gang = j.gang;
        if self.matrix.allocation(gang).is_none() {
            return Ok(());
        }
        let threads: usize = self
            .freezer
            .pids(&j.group)
            .unwrap_or_default()
            .into_iter()
            .map(|pid| procfs::tasks(pid).len())
            .sum();
        let want = (threads as u32).clamp(1, self.matrix.procs());
        if want == j.width {
            return Ok(());
        }
        let old = self
            .matrix
            .release(gang)
            .map_err(parsched_core::PolicyError::from)?;
        match self
            .matrix
            .allocate(gang, want)
            .map_err(parsched_core::PolicyError::from)?
        {
            Some(_) => {
                self.jobs[i].width = want;
            }
            None => {
                // No room at the new width (bounded slots): keep the old cells.
                let back = self
                    .matrix
                    .allocate(gang, old.width())
                    .map_err(parsched_core::PolicyError::from)?;
                debug_assert!(back.is_some());
            }
        }
        self.jobs[i].refits += 1;
        Ok(())
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

    /// Pins the running gangs' threads one per CPU over their cells.
    fn spread_current(&mut self) {
        if !self.spec.spread {
            return;
        }
        let Some(s) = self.cur else { return };
        let t = Instant::now();
        for g in self.matrix.gangs_in(s) {
            let i = g.0 as usize;
            if !self.jobs[i].live() {
                continue;
            }
            let Some(a) = self.matrix.allocation(g) else {
                continue;
            };
            let cpus: Vec<u32> = a.procs.iter().map(|&p| self.topo.cpu(p)).collect();
            // The busiest tasks first (cumulative CPU time from schedstat):
            // the w busiest each get a CPU of their own, sleepers (a shell,
            // a waiting main thread) fill in after them.
            let pids = self.freezer.pids(&self.jobs[i].group).unwrap_or_default();
            let mut tasks: Vec<(u64, i32)> = Vec::new();
            for pid in pids {
                for tid in procfs::tasks(pid) {
                    let cpu = procfs::thread_cpu_ns(pid, tid).unwrap_or(0);
                    tasks.push((cpu, tid));
                }
            }
            tasks.sort_by_key(|&(cpu, tid)| (std::cmp::Reverse(cpu), tid));
            let mut pinned = std::mem::take(&mut self.jobs[i].pinned);
            let mut now_pinned = std::collections::BTreeMap::new();
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
        self.stats.spread_s += t.elapsed().as_secs_f64();
    }

    fn start_pools(&mut self) -> Result<()> {
        let layout = self.layout.clone().expect("pools layout");
        let mut zb = ZhouBrecht::new(self.spec.pools.placement);
        for i in 0..self.jobs.len() {
            let states: Vec<PoolState> = (0..layout.num_pools())
                .map(|k| {
                    let size = layout.pool(PoolId(k as u32)).len() as u32;
                    let load = self.pool_load[k];
                    PoolState {
                        size,
                        idle: size.saturating_sub(load),
                        load,
                    }
                })
                .collect();
            let job = JobId(i as u64);
            let home = zb.home_pool(job, &states)?;
            let req = ForkRequest {
                job,
                home,
                desired: self.jobs[i].width,
            };
            let placement = zb.place(&req, &states)?;
            placement.check(&states, self.jobs[i].width)?;
            let mut cpus: Vec<u32> = placement
                .threads
                .iter()
                .flat_map(|&(p, _)| layout.pool(p).iter().map(|&q| self.topo.cpu(q)))
                .collect();
            cpus.sort_unstable();
            for &(p, n) in &placement.threads {
                self.pool_load[p.idx()] += n;
            }
            let group = self.jobs[i].group.clone();
            if let Some(c) = self.cpuset.as_mut() {
                c.create(&group, &cpus)?;
                self.jobs[i].cpuset = true;
            }
            {
                let j = &mut self.jobs[i];
                j.pool = Some(home.0);
                j.placement = placement.threads.clone();
                j.cpus = cpus.clone();
            }
            self.spawn(i)?;
            if self.cpuset.is_none() {
                let pid = self.jobs[i].pid.expect("spawned");
                for tid in procfs::tasks(pid) {
                    let _ = set_affinity(tid, &cpus);
                }
            }
        }
        Ok(())
    }

    /// SIGINT/SIGTERM/SIGHUP: forward to the jobs, thaw them, give them 2 s,
    /// then kill what is left.
    fn shutdown(&mut self, sig: i32) -> Result<()> {
        self.warn(format!("received signal {sig}: stopping the jobs"));
        for i in 0..self.jobs.len() {
            if let Some(pid) = self.jobs[i].pid.filter(|_| self.jobs[i].live()) {
                // SAFETY: the job's process group.
                unsafe { libc::killpg(pid, sig) };
            }
            let _ = self.thaw_job(i);
        }
        for i in std::mem::take(&mut self.waiting) {
            self.never_started(i, "interrupted before it could start");
        }
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(2) && self.jobs.iter().any(|j| j.live()) {
            self.reap()?;
            std::thread::sleep(Duration::from_millis(5));
        }
        self.abort_jobs();
        Ok(())
    }

    fn never_started(&mut self, i: usize, why: &str) {
        let j = &mut self.jobs[i];
        if j.report.is_none() && j.pid.is_none() {
            j.report = Some(JobReport {
                name: j.name.clone(),
                argv: j.spec.argv.clone(),
                pid: 0,
                status: ExitStatus {
                    code: None,
                    signal: None,
                },
                success: false,
                wall_s: 0.0,
                user_s: 0.0,
                sys_s: 0.0,
                suspended_s: 0.0,
                width: j.width,
                slots_run: 0,
                cpus: Vec::new(),
                pool: None,
                coscheduled: None,
                observed: None,
            });
            let _ = why;
        }
    }

    /// Thaws and SIGKILLs every live job and reaps it.
    fn abort_jobs(&mut self) {
        for i in 0..self.jobs.len() {
            if self.jobs[i].live() {
                let g = self.jobs[i].group.clone();
                let _ = self.freezer.kill(&g);
                let _ = self.thaw_job(i);
                if let Some(pid) = self.jobs[i].pid {
                    // SAFETY: the job's process group.
                    unsafe { libc::killpg(pid, libc::SIGKILL) };
                }
            }
        }
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(2) && self.jobs.iter().any(|j| j.live()) {
            let _ = self.reap();
            std::thread::sleep(Duration::from_millis(2));
        }
        for i in 0..self.jobs.len() {
            self.never_started(i, "not started");
        }
    }

    fn finish_cleanup(&mut self) {
        let _ = self.freezer.cleanup();
        if let Some(c) = self.cpuset.as_mut() {
            c.cleanup();
        }
        if let Some(s) = self.supervisor.take() {
            s.finish();
        }
    }
}

struct Fired {
    signal: Option<i32>,
}

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
