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
//! **FCS** ([`Policy::Fcs`], alias `flexible`): gang, plus the core crate's
//! FCS policy (`parsched_core::policy::fcs::Fcs`, the one the simulator
//! applies), fed from /proc each observation period; it decides and revises
//! the classes, the matrix membership and DC slots, and each job's role: CS
//! jobs hold dedicated slots, F jobs hold slots and fill the slots of other
//! F jobs, DC jobs leave the matrix and fill idle processors at SCHED_IDLE
//! with a guaranteed share (DC slots); a released job whose class changes
//! back is taken back. The controller measures and applies (`fcs.rs`).
//!
//! **Regions** ([`Policy::Regions`]): jobs start unconstrained; their working
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
//! | `wait.rs` | the `poll` on timerfd, pidfds and the signal pipe |
//! | `jobs.rs` | spawn, freeze/thaw, reap and report, shutdown |
//! | `gang.rs` | gang policy: slot switches, admission, refits, spreading |
//! | `pools.rs` | pools policy: Zhou–Brecht placement into cpusets |
//! | `fcs.rs` | FCS: /proc observations → the core `Fcs` policy → roles applied (freeze/thaw, affinity, SCHED_IDLE) |
//! | `regions.rs` | regions policy: /proc working sets → cache balancing → cpusets |
//! | `realtime.rs` | SCHED_FIFO for the controller |

use crate::cgroup::{open_freezer, open_freezer_explained, BackendKind, Cpuset, Freezer};
use crate::error::Result;
use crate::safety::{owner_tag, recover_stale, SignalGuard, Supervisor};
use crate::spawn::{job_identity, JobIdentity};
use crate::spec::{JobReport, Policy, RunSpec};
use crate::topology::{machine_topology, read_topology, MachineTopology};
use parsched_core::policy::fcs::Fcs;
use parsched_core::policy::gang::{GangId, GangMatrix, SlotId};
use parsched_core::policy::gang_sched::{GangSchedOptions, GangScheduler};
use parsched_core::topology::PoolLayout;
use parsched_core::PoolId;
use serde::Serialize;
use std::os::unix::io::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod fcs;
mod gang;
mod jobs;
mod pools;
mod realtime;
mod regions;
mod wait;

use fcs::FcsJob;
pub use realtime::{enter_realtime, leave_realtime};
pub use regions::{RegionsCache, RegionsRecord, RegionsStats};
use wait::{arm, mono_ns, pidfd_open, thread_cpu_s, timerfd};

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
    /// FCS: DC slots given (a released job was owed its `dc_min_share`).
    pub dc_slots: u64,
    /// FCS: wall seconds spent in DC slots.
    pub dc_slot_s: f64,
    /// Regions: the caches, the scans and every placement decision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regions: Option<RegionsStats>,
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
    /// FCS: what was measured of it and applied to it.
    fcs: FcsJob,
    /// Times the gang was re-fitted to the job's thread count.
    refits: u32,
    /// Regions: the last working-set estimate, bytes.
    wss_bytes: Option<u64>,
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
    /// Gang and flexible: the core crate's gang scheduler (matrix,
    /// admission queue, running slot) decides; the controller applies.
    sched: GangScheduler,
    jobs: Vec<Job>,
    supervisor: Option<Supervisor>,
    signals: Option<SignalGuard>,
    timerfd: Option<OwnedFd>,
    trace: Vec<SwitchRecord>,
    stats: ControllerStats,
    warnings: Vec<String>,
    identity: Option<JobIdentity>,
    layout: Option<PoolLayout>,
    pool_load: Vec<u32>,
    /// FCS: the core policy, which decides (classes, membership, DC slots,
    /// roles).
    fcs: Fcs,
    /// FCS: when the running slot started.
    slot_since: Option<Instant>,
    /// FCS: a DC slot is running (since when).
    in_dc_slot: bool,
    dc_slot_since: Option<Instant>,
    /// FCS: the files publishing each job's class to it (see
    /// [`fcs::ClassFiles`]).
    class_files: Option<fcs::ClassFiles>,
    /// Regions: the policy's state.
    regions: Option<regions::RegionsState>,
    t0: Instant,
}

impl Controller {
    /// Validates the spec, recovers stale groups, reads the topology, opens
    /// the freezer (and cpusets for pools) and starts the supervisor.
    pub fn new(spec: RunSpec) -> Result<Controller> {
        spec.validate()?;
        let owner = owner_tag();
        let (freezer, why): (Box<dyn Freezer>, Vec<String>) = match spec.policy {
            Policy::Gang | Policy::Fcs => open_freezer_explained(spec.backend, &owner)?,
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
        let sched = GangScheduler::new(matrix, GangSchedOptions::default());
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
        } else if spec.policy == Policy::Regions && spec.regions.cpusets {
            let cs = match Cpuset::detect(owner) {
                Ok(c) => Some(c),
                Err(e) => {
                    warnings.push(format!(
                        "{e}; regions are enforced with sched_setaffinity only"
                    ));
                    None
                }
            };
            (cs, None)
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
        let fcs = fcs::fcs_policy(&spec)?;
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
                    fcs: FcsJob::new(j.fcs_class),
                    refits: 0,
                    wss_bytes: None,
                }
            })
            .collect();
        for w in &warnings {
            eprintln!("parsched: warning: {w}");
        }
        let backend = format!("{:?}", freezer.kind()).to_lowercase();
        Ok(Controller {
            spec,
            freezer,
            cpuset,
            topo,
            sched,
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
            layout,
            pool_load,
            fcs,
            slot_since: None,
            in_dc_slot: false,
            dc_slot_since: None,
            class_files: None,
            regions: None,
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
            Policy::Gang | Policy::Fcs => self.start_gang()?,
            Policy::Pools => self.start_pools()?,
            Policy::Regions => self.start_regions()?,
            Policy::Default => {
                for i in 0..self.jobs.len() {
                    self.spawn(i)?;
                }
            }
        }
        let regions = self.spec.policy == Policy::Regions;
        let slot_ns = if regions {
            self.spec.regions.scan.as_nanos() as u64
        } else {
            self.spec.slot.as_nanos() as u64
        };
        let mut deadline = mono_ns() + slot_ns;
        loop {
            if self.jobs.iter().all(|j| j.report.is_some()) {
                return Ok(());
            }
            let gang = matches!(self.spec.policy, Policy::Gang | Policy::Fcs);
            if gang || regions {
                if let Some(t) = &self.timerfd {
                    arm(t, deadline);
                }
            }
            let fired = self.wait_events((gang || regions).then_some(deadline))?;
            self.stats.wakeups += 1;
            if let Some(sig) = fired.signal {
                self.shutdown(sig)?;
                return Ok(());
            }
            let exited = self.reap()?;
            if regions {
                let now = mono_ns();
                if now >= deadline {
                    self.regions_tick()?;
                    deadline = now + slot_ns;
                } else if exited {
                    self.regions_on_exit()?;
                }
                continue;
            }
            if !gang {
                continue;
            }
            let now = mono_ns();
            // Seed 001 §3.2's early switch: no live job left in the slot (or
            // no slot running).
            let jobs = &self.jobs;
            let slot_empty = if self.in_dc_slot {
                !self.any_released_live()
            } else {
                self.sched.current().is_none()
                    || self
                        .sched
                        .should_switch_early(|g| jobs[g.0 as usize].live())
            };
            let timed = now >= deadline;
            if timed || (exited && slot_empty) {
                self.switch(!timed)?;
                deadline = mono_ns() + slot_ns;
            }
        }
    }

    fn finish_cleanup(&mut self) {
        // The FCS class files go with the run (the jobs have exited).
        self.class_files = None;
        let _ = self.freezer.cleanup();
        if let Some(c) = self.cpuset.as_mut() {
            c.cleanup();
        }
        if let Some(s) = self.supervisor.take() {
            s.finish();
        }
    }
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
