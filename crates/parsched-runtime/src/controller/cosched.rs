//! The cosched policy: seed 003's communication-driven coscheduling (Nagar,
//! Banerjee, Sivasubramaniam and Das, SPAA 1999, §2 and Table 1) on this
//! machine, for MPI jobs whose ranks load `libparsched_mpi`
//! (crates/parsched-runtime/mpi, docs/runtime.md "MPI programs").
//!
//! * **Waiting** (Table 1's columns) is the library's: each job is started
//!   with its statistics file (`PARSCHED_FCS_SYNC_FILE`) and the scheme's
//!   waiting strategy (`PARSCHED_MPI_WAIT`: Local busy, SB spin-block, SY
//!   spin-yield) and spin time (`PARSCHED_MPI_SPIN_US`).
//! * **Layout** `workstations`: every `period` the policy reads which ranks
//!   have started (their pids, from the file) and pins each rank's MPI
//!   thread to CPU `rank mod CPUs` ([`Decision::PinThread`], which checks
//!   the thread is the job's): every CPU is a workstation whose local
//!   scheduler knows nothing of the others.
//! * **Periodic boost** (PB, PBT with busy waiting): every `period` (10 ms,
//!   the paper's), on each CPU, the boost of the last period ends and the
//!   core's [`PeriodicBooster`] (the simulator's, the same code) picks among
//!   the ranks pinned there the one to boost — PB the next with a message
//!   pending (round robin), PBT the one whose pending message is the most
//!   recent — from what the library publishes (sent − consumed, the last
//!   arrival); the boost is `SCHED_FIFO` priority 1 ([`Decision::Boost`]:
//!   Linux's EEVDF only lets a real-time class preempt at once,
//!   `tools/boost_latency.py`) until the rank has waited a spin time in
//!   vain (the library drops it, flagged in the rank's slot: its peer is
//!   not running) or the next period.
//! * **PB-SB, PB-SY**: the same timer over ranks that spin-block or
//!   spin-yield. PB-SB's timer "preferentially wakes up sleeping (blocked)
//!   processes which have pending messages": the library's senders already
//!   wake a blocked rank through its doorbell, so the timer's wake is a
//!   boost of the blocked rank (it runs at once when it wakes).
//! * **DCS, DCS-SB, DCS-SY** (dynamic coscheduling): the network
//!   interface interrupts for a message to a process other than the one
//!   it believes runs on the destination's CPU. Under these schemes
//!   (`PARSCHED_MPI_ARRIVALS=1`) a send to a rank that is not blocked, and
//!   was not seen running in the last 20 µs (`PARSCHED_MPI_RUNNING_US`: a
//!   rank that polled that recently runs, and the controller need not
//!   wake), flags the rank's slot (once, until the controller has looked) and writes a
//!   byte to the controller's bell (a FIFO, `PARSCHED_MPI_BELL`, watched by
//!   the controller's loop: [`RuntimePolicy::event_fd`]). The controller
//!   reads the flagged ranks and asks the core's [`Scheme::on_arrival`]
//!   (the simulator's network interface, the same code) what to do, the
//!   destination believed running if it is the rank on its CPU that was
//!   seen running last (`believed_running`); an interrupt-and-boost is a
//!   `SCHED_FIFO` boost, which the rank gives up once it has waited a spin
//!   time in vain, or the controller ends after one period. A blocked rank
//!   is woken by its doorbell (the kernel's wake-up, as Solaris' is for SB).
//! * **SY, DCS-SY, PB-SY**: when a rank's spin time runs out the library
//!   rings the bell once for the wait ("yield"); the controller boosts the
//!   core's [`choose_yield_target`] among the ranks on the yielder's CPU
//!   (all ranks, with free placement), which preempts the yielder; the
//!   yielder keeps polling with `sched_yield`.

use super::mechanism::{mono_ns, Decision, Mechanism};
use super::policy::{Fragment, Needs, PolicyEntry, PolicyReport, RuntimePolicy};
use super::stats_files::{read_ranks, Bell, ClassFiles, RankView, Waiting, SYNC_FILE_ENV};
use crate::error::{Result, RuntimeError};
use crate::spec::{JobReport, RunSpec};
use crate::topology::MachineTopology;
use parsched_core::policy::cosched::{
    choose_yield_target, ArrivalAction, ArrivalDecision, BoostDecision, CoschedScheme,
    EndpointView, PeriodicBooster, ProcState, Scheme, WaitKind, TABLE1_NAMES,
};
use parsched_core::schema::{KeyInfo, Kind, Schema, Typed, U32};
use parsched_core::{choices, field, ConfigError, Time, Value};
use std::collections::BTreeMap;

/// How often the policy looks for newly started ranks.
const PERIOD_NS: u64 = 10_000_000;

/// DCS: how often the controller scans the ranks' arrival flags (the
/// library does not wake it for an arrival: a wake-up from the sender
/// preempts the sender just as it starts to wait for the reply).
pub(crate) const SCAN_NS: u64 = 200_000;

/// A spinning rank that polled this recently is believed running (it polls
/// every microsecond or so while it runs).
pub(crate) const RUNNING_NS: u64 = 50_000;

/// The core's view of a rank's endpoint at `now`: blocked as the library
/// says; otherwise running if it was seen running (polling, sending, starting
/// or ending a wait: the library's `poll_ns`) in the last [`RUNNING_NS`], as a
/// network interface's sampled idea of the running process would say, else
/// ready (Linux does not show whether another process's thread is on its CPU
/// now).
fn endpoint(r: &RankView, now: u64) -> EndpointView {
    EndpointView {
        state: match r.waiting {
            Waiting::Blocked => ProcState::Blocked,
            _ if now.saturating_sub(r.poll_ns) <= RUNNING_NS => ProcState::Running,
            _ => ProcState::Ready,
        },
        pending: r.pending.min(u32::MAX as u64) as u32,
        last_arrival: Time(r.last_arrival_ns),
        in_driver: r.waiting == Waiting::Blocked,
    }
}

/// How the cosched policy places MPI ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CoschedLayout {
    /// Each rank pinned to one CPU (rank mod CPUs): a network of workstations.
    #[default]
    Workstations,
    /// Linux places the ranks.
    Free,
}

choices!(CoschedLayout {
    Workstations => "workstations",
    Free => "free",
});

/// The `[cosched]` table of a run spec (`COSCHED_SCHEMA`; the flat
/// spellings `cosched_scheme`, `cosched_layout`, `cosched_spin_us` are
/// accepted too).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CoschedSpec {
    /// Seed 003's scheme (one of [`Scheme::ALL`]; a reference schedule is
    /// refused).
    pub scheme: CoschedScheme,
    /// `workstations` (each rank pinned to CPU rank mod CPUs) or `free`.
    pub layout: CoschedLayout,
    /// The ranks' spin time before blocking or yielding, µs.
    pub spin_us: u32,
}

impl Default for CoschedSpec {
    fn default() -> Self {
        CoschedSpec {
            scheme: CoschedScheme::Dynamic(Scheme::LOCAL),
            layout: CoschedLayout::Workstations,
            spin_us: 100,
        }
    }
}

/// The error of a reference schedule given as a scheme.
fn not_a_scheme(key: &str, s: CoschedScheme) -> ConfigError {
    ConfigError::new(
        key,
        format!(
            "{} is a reference schedule, not a scheme (its runtime policy is `gang` or \
             `default`)",
            s.name()
        ),
        TABLE1_NAMES.join(", "),
    )
}

fn set_scheme(c: &mut CoschedSpec, v: &Value) -> std::result::Result<(), ConfigError> {
    let bad = || ConfigError::new("scheme", "not a name", TABLE1_NAMES.join(", "));
    let Value::Str(text) = v else {
        return Err(bad());
    };
    let s: CoschedScheme = text
        .parse()
        .map_err(|e: ConfigError| ConfigError::new("scheme", e.message, TABLE1_NAMES.join(", ")))?;
    if !matches!(s, CoschedScheme::Dynamic(_)) {
        return Err(not_a_scheme("scheme", s));
    }
    c.scheme = s;
    Ok(())
}

type C = CoschedSpec;

/// The keys of `[cosched]`.
pub(crate) static COSCHED_SCHEMA: Schema<CoschedSpec> = Schema {
    model: "cosched",
    fields: &[
        field!(
            C,
            "scheme",
            custom(|c: &C| Typed::Choice(c.scheme.name()), optional = false),
            Kind::Choice {
                choices: &TABLE1_NAMES
            },
            "",
            "",
            "Table 1",
            "seed 003's scheme: how ranks wait (Local busy-waits, SB spin-blocks, SY \
             spin-yields) and whether a rank with a message pending is boosted on arrival \
             (DCS) or every 10 ms on each CPU (PB, PBT); case-insensitive"
        )
        .parsed(set_scheme)
        .folded(),
        field!(C, "layout", layout: choice, Kind::choice::<CoschedLayout>(), "", "", "",
            "workstations: each MPI rank pinned to CPU rank mod CPUs (every CPU a workstation \
             whose local scheduler knows nothing of the others); free: Linux places the ranks"),
        field!(C, "spin_us", spin_us: u32, Kind::int(U32), "us", "", "",
            "the ranks' spin time before blocking or yielding (`parsched tune mpi-spin` \
             chooses it)"),
    ],
};

/// `[cosched]`'s keys described, the scheme as a choice of the ten names.
fn describe() -> Vec<KeyInfo> {
    COSCHED_SCHEMA.describe(&CoschedSpec::default())
}

/// `[cosched]` in the run spec, with the flat spellings of before.
pub(crate) static FRAGMENT: Fragment = Fragment {
    table: "cosched",
    flat: &[
        ("cosched_scheme", "scheme"),
        ("cosched_layout", "layout"),
        ("cosched_spin_us", "spin_us"),
    ],
    describe,
    set: |spec, key, v| COSCHED_SCHEMA.set(&mut spec.cosched, key, v),
    check: |spec| {
        COSCHED_SCHEMA.check(&spec.cosched)?;
        match spec.cosched.scheme {
            CoschedScheme::Dynamic(s) if s.has_periodic_boost() => {
                // a periodic boost acts per CPU: only with the ranks pinned
                if spec.policy.name() == ENTRY.name
                    && spec.cosched.layout != CoschedLayout::Workstations
                {
                    return Err(ConfigError::new(
                        "layout",
                        format!("{} boosts per CPU: the ranks must be pinned", s.name()),
                        "workstations",
                    ));
                }
                Ok(())
            }
            CoschedScheme::Dynamic(_) => Ok(()),
            other => Err(not_a_scheme("scheme", other)),
        }
    },
    values: |spec| super::policy::schema_values(&COSCHED_SCHEMA, &spec.cosched),
};

/// `cosched`, as [`super::policy::POLICIES`] lists it.
pub(crate) const ENTRY: PolicyEntry = PolicyEntry {
    name: "cosched",
    aliases: &[],
    doc: "seed 003's communication-driven coscheduling for MPI jobs whose ranks load \
          libparsched_mpi: the scheme sets how ranks wait and whether a rank with a message \
          pending is boosted on arrival (DCS) or every 10 ms (PB); layout workstations pins \
          rank k to CPU k mod CPUs",
    fragment: Some(&FRAGMENT),
    build: |spec, topo| Ok(Box::new(CoschedPolicy::new(spec, topo)?)),
};

/// Ends the boost of thread `tid` of process `pid` of job `job`.
fn unboost(m: &mut Mechanism, job: usize, pid: i32, tid: i32) -> Result<()> {
    m.apply(Decision::Boost {
        job,
        pid,
        tid,
        on: false,
    })
}

/// The library's name for a waiting strategy.
pub(crate) fn wait_env(w: WaitKind) -> &'static str {
    match w {
        WaitKind::Busy => "busy",
        WaitKind::SpinBlock => "spin-block",
        WaitKind::SpinYield => "spin-yield",
    }
}

pub(crate) struct CoschedPolicy {
    scheme: Scheme,
    layout: CoschedLayout,
    spin_us: u32,
    cpus: Vec<u32>,
    files: Option<ClassFiles>,
    /// Per job: rank → (tid, CPU) pinned.
    pinned: Vec<BTreeMap<u32, (u32, u32)>>,
    next: Option<u64>,
    /// PB, PBT: one timer function per CPU (workstation), and who holds
    /// its boost now (job, pid, tid).
    boosters: Vec<PeriodicBooster>,
    boosted: Vec<Option<(usize, i32, i32)>>,
    /// DCS and spin-yield: the controller's bell, and the boosts it gave
    /// (job, pid, tid, when).
    bell: Option<(std::path::PathBuf, std::os::fd::OwnedFd)>,
    quick: Vec<(usize, i32, i32, u64)>,
    /// DCS: when the arrival flags are scanned next.
    scan: Option<u64>,
    /// Spin-yield's round-robin position, per CPU (one for free placement).
    yield_next: Vec<usize>,
}

impl CoschedPolicy {
    pub(crate) fn new(spec: &RunSpec, topo: &MachineTopology) -> Result<CoschedPolicy> {
        let scheme = match spec.cosched.scheme {
            CoschedScheme::Dynamic(s) => s,
            other => {
                return Err(RuntimeError::Unsupported(format!(
                    "cosched.scheme {} under the cosched policy",
                    other.name()
                )))
            }
        };
        let boosters: Vec<PeriodicBooster> = match PeriodicBooster::new(scheme) {
            Some(b) => vec![b; topo.cpus.len()],
            None => Vec::new(),
        };
        Ok(CoschedPolicy {
            scheme,
            layout: spec.cosched.layout,
            spin_us: spec.cosched.spin_us,
            cpus: topo.cpus.clone(),
            files: None,
            pinned: vec![BTreeMap::new(); spec.jobs.len()],
            next: None,
            boosted: vec![None; boosters.len()],
            boosters,
            bell: None,
            quick: Vec::new(),
            scan: None,
            yield_next: vec![0; topo.cpus.len()],
        })
    }

    fn env(&self, i: usize) -> Vec<(String, String)> {
        let mut env = vec![
            (
                "PARSCHED_MPI_WAIT".to_string(),
                wait_env(self.scheme.wait).to_string(),
            ),
            ("PARSCHED_MPI_SPIN_US".to_string(), self.spin_us.to_string()),
        ];
        if let Some(p) = self.files.as_ref().and_then(|f| f.sync_path(i)) {
            env.push((SYNC_FILE_ENV.to_string(), p.to_string_lossy().into_owned()));
        }
        if let Some((p, _)) = &self.bell {
            env.push((
                "PARSCHED_MPI_BELL".to_string(),
                p.to_string_lossy().into_owned(),
            ));
            if self.scheme.arrival == ArrivalAction::Dcs {
                env.push(("PARSCHED_MPI_ARRIVALS".to_string(), "1".to_string()));
            }
        }
        env
    }

    /// Every job's started ranks, as its statistics file says now (read once
    /// per timer run; nothing for jobs no longer live).
    fn read_all_ranks(&self, m: &Mechanism) -> Vec<Vec<RankView>> {
        (0..m.jobs().len())
            .map(|i| match self.files.as_ref().and_then(|f| f.sync_file(i)) {
                Some(f) if m.job(i).live() => read_ranks(f),
                _ => Vec::new(),
            })
            .collect()
    }

    /// Pins the ranks of job `i` that started since the last look.
    fn pin_new_ranks(&mut self, m: &mut Mechanism, i: usize, ranks: &[RankView]) -> Result<()> {
        for r in ranks {
            let rank = r.rank as u32;
            if self.pinned[i]
                .get(&rank)
                .is_some_and(|&(tid, _)| tid == r.tid)
            {
                continue;
            }
            let cpu = self.cpus[r.rank % self.cpus.len()];
            m.apply(Decision::PinThread {
                job: i,
                pid: r.pid as i32,
                tid: r.tid as i32,
                cpu,
            })?;
            self.pinned[i].insert(rank, (r.tid, cpu));
        }
        Ok(())
    }

    /// One run of every CPU's timer function: the last boost ends, the next
    /// is chosen from the ranks pinned to that CPU.
    fn periodic_boost(&mut self, m: &mut Mechanism, ranks: &[Vec<RankView>]) -> Result<()> {
        for (c, &cpu) in self.cpus.iter().enumerate() {
            if let Some((job, pid, tid)) = self.boosted[c].take() {
                unboost(m, job, pid, tid)?;
            }
            let here: Vec<(usize, RankView)> = ranks
                .iter()
                .enumerate()
                .flat_map(|(i, rs)| rs.iter().map(move |r| (i, *r)))
                .filter(|(i, r)| {
                    self.pinned[*i]
                        .get(&(r.rank as u32))
                        .is_some_and(|&(tid, on)| on == cpu && tid == r.tid)
                })
                .collect();
            let view: Vec<EndpointView> = here
                .iter()
                .map(|(_, r)| EndpointView {
                    state: if r.waiting == Waiting::Blocked {
                        ProcState::Blocked
                    } else {
                        ProcState::Ready
                    },
                    pending: r.pending.min(u32::MAX as u64) as u32,
                    last_arrival: Time(r.last_arrival_ns),
                    in_driver: r.waiting == Waiting::Blocked,
                })
                .collect();
            if let Some(BoostDecision::Boost(k) | BoostDecision::Wake(k)) =
                self.boosters[c].tick(&view)
            {
                let (job, r) = here[k];
                let (pid, tid) = (r.pid as i32, r.tid as i32);
                // The rank drops the boost itself once it has waited a
                // spin time in vain (it ran on with its peers until one was
                // not there); the controller ends it at the next period in
                // any case.
                if let Some(f) = &self.files {
                    let _ = f.flag_boost(job, r.rank);
                }
                m.apply(Decision::Boost {
                    job,
                    pid,
                    tid,
                    on: true,
                })?;
                self.boosted[c] = Some((job, pid, tid));
            }
        }
        Ok(())
    }
}

impl CoschedPolicy {
    /// The CPU rank `r` of job `i` is pinned to, if it is.
    fn cpu_of(&self, i: usize, r: &RankView) -> Option<u32> {
        self.pinned[i]
            .get(&(r.rank as u32))
            .and_then(|&(tid, cpu)| (tid == r.tid).then_some(cpu))
    }

    /// The network interface's idea of whether rank `r` of job `i` runs, as
    /// the paper's LANai "periodically gets the id of the thread currently
    /// executing on the host CPU": a rank that spins polls all the time it
    /// runs, so it runs if it polled in the last [`RUNNING_NS`]; one that
    /// computes runs if it is, of the ranks pinned to its CPU, the one seen
    /// running last (the library's `poll_ns`: a poll, a send, a wait's start
    /// or end) — with free placement, if it was seen in the last
    /// [`RUNNING_NS`].
    fn believed_running(&self, ranks: &[Vec<RankView>], i: usize, r: &RankView, now: u64) -> bool {
        let fresh = now.saturating_sub(r.poll_ns) <= RUNNING_NS;
        let cpu = match (r.waiting, self.cpu_of(i, r)) {
            (Waiting::Running, Some(cpu)) => cpu,
            _ => return fresh,
        };
        !ranks.iter().enumerate().any(|(j, rs)| {
            rs.iter().any(|o| {
                (j, o.rank) != (i, r.rank)
                    && self.cpu_of(j, o) == Some(cpu)
                    && o.poll_ns > r.poll_ns
            })
        })
    }

    /// Boosts rank `r` of job `i` until it has waited a spin time in vain
    /// (the library drops it) or one period has passed.
    fn quick_boost(&mut self, m: &mut Mechanism, i: usize, r: &RankView, now: u64) -> Result<()> {
        let (pid, tid) = (r.pid as i32, r.tid as i32);
        if r.boosted {
            return Ok(());
        }
        // (a boost it has given up is ended again at the period: harmless)
        self.quick.retain(|q| !(q.0 == i && q.2 == tid));
        if let Some(f) = &self.files {
            let _ = f.flag_boost(i, r.rank);
        }
        m.apply(Decision::Boost {
            job: i,
            pid,
            tid,
            on: true,
        })?;
        self.quick.push((i, pid, tid, now));
        Ok(())
    }

    /// Ends the arrival and yield boosts older than one period.
    fn end_quick_boosts(&mut self, m: &mut Mechanism, now: u64) -> Result<()> {
        let (old, keep): (Vec<_>, Vec<_>) = self
            .quick
            .drain(..)
            .partition(|q| now.saturating_sub(q.3) >= PERIOD_NS);
        self.quick = keep;
        for (job, pid, tid, _) in old {
            if m.job(job).live() {
                unboost(m, job, pid, tid)?;
            }
        }
        Ok(())
    }

    /// The ranks that rang the bell: arrivals (DCS) and yields (SY).
    fn answer_bells(&mut self, m: &mut Mechanism, ranks: &[Vec<RankView>], now: u64) -> Result<()> {
        for (i, rs) in ranks.iter().enumerate() {
            for r in rs.iter().filter(|r| r.bell != Bell::None) {
                if let Some(f) = &self.files {
                    let _ = f.clear_bell(i, r.rank);
                }
                match r.bell {
                    Bell::Arrival if self.scheme.arrival == ArrivalAction::Dcs => {
                        let mut view = endpoint(r, now);
                        let running = self.believed_running(ranks, i, r, now);
                        if view.state != ProcState::Blocked {
                            view.state = if running {
                                ProcState::Running
                            } else {
                                ProcState::Ready
                            };
                        }
                        if self.scheme.on_arrival(&view, running) == ArrivalDecision::InterruptBoost
                        {
                            self.quick_boost(m, i, r, now)?;
                        }
                    }
                    Bell::Yield if self.scheme.wait == WaitKind::SpinYield => {
                        self.answer_yield(m, ranks, i, r, now)?;
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Rank `y` of job `yi` gave up spinning: boost another process with a
    /// pending message on its CPU (the core's round robin).
    fn answer_yield(
        &mut self,
        m: &mut Mechanism,
        ranks: &[Vec<RankView>],
        yi: usize,
        y: &RankView,
        now: u64,
    ) -> Result<()> {
        let cpu = self.cpu_of(yi, y);
        let here: Vec<(usize, RankView)> = ranks
            .iter()
            .enumerate()
            .flat_map(|(i, rs)| rs.iter().map(move |r| (i, *r)))
            .filter(|(i, r)| cpu.is_none() || self.cpu_of(*i, r) == cpu)
            .collect();
        let Some(me) = here.iter().position(|(i, r)| *i == yi && r.rank == y.rank) else {
            return Ok(());
        };
        let view: Vec<EndpointView> = here.iter().map(|(_, r)| endpoint(r, now)).collect();
        let c = cpu
            .and_then(|c| self.cpus.iter().position(|&x| x == c))
            .unwrap_or(0);
        if let Some(k) = choose_yield_target(&view, me, &mut self.yield_next[c]) {
            let (i, r) = here[k];
            self.quick_boost(m, i, &r, now)?;
        }
        Ok(())
    }
}

impl RuntimePolicy for CoschedPolicy {
    fn name(&self) -> &'static str {
        "cosched"
    }

    /// Jobs run in cgroups (never frozen) so that every rank, however deep
    /// in mpirun's process tree, is known to be the job's.
    fn needs(&self) -> Needs {
        Needs {
            freezer: true,
            cpusets: None,
        }
    }

    fn start(&mut self, m: &mut Mechanism) -> Result<()> {
        match ClassFiles::create(m.jobs().len(), true) {
            Ok(f) => self.files = Some(f),
            Err(e) => m.warn(format!(
                "no statistics files ({e}): the ranks are not pinned"
            )),
        }
        let rings =
            self.scheme.arrival == ArrivalAction::Dcs || self.scheme.wait == WaitKind::SpinYield;
        if let (true, Some(f)) = (rings, &self.files) {
            match f.make_bell() {
                Ok(b) => self.bell = Some(b),
                Err(e) => m.warn(format!(
                    "no bell for the MPI library ({e}): no arrival or yield boosts"
                )),
            }
        }
        for i in 0..m.jobs().len() {
            let env = self.env(i);
            m.apply(Decision::Spawn { job: i, env })?;
        }
        if (self.layout == CoschedLayout::Workstations || self.bell.is_some())
            && self.files.is_some()
        {
            self.next = Some(mono_ns() + PERIOD_NS);
        }
        if self.scheme.arrival == ArrivalAction::Dcs && self.bell.is_some() {
            self.scan = Some(mono_ns() + SCAN_NS);
        }
        Ok(())
    }

    fn next_deadline(&self) -> Option<u64> {
        match (self.next, self.scan) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn on_timer(&mut self, m: &mut Mechanism, now: u64) -> Result<()> {
        if self.scan.is_some_and(|t| now >= t) {
            let ranks = self.read_all_ranks(m);
            self.answer_bells(m, &ranks, now)?;
            self.scan = Some(now + SCAN_NS);
        }
        match self.next {
            Some(n) if now >= n => {}
            _ => return Ok(()),
        }
        let ranks = self.read_all_ranks(m);
        if self.layout == CoschedLayout::Workstations {
            for (i, rs) in ranks.iter().enumerate() {
                self.pin_new_ranks(m, i, rs)?;
            }
        }
        if !self.boosters.is_empty() {
            self.periodic_boost(m, &ranks)?;
        }
        self.end_quick_boosts(m, now)?;
        self.next = Some(now + PERIOD_NS);
        Ok(())
    }

    fn event_fd(&self) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        self.bell.as_ref().map(|(_, fd)| fd.as_raw_fd())
    }

    fn on_event(&mut self, m: &mut Mechanism, now: u64) -> Result<()> {
        use std::os::fd::AsRawFd;
        if let Some((_, fd)) = &self.bell {
            let mut buf = [0u8; 256];
            // SAFETY: reading into our buffer from our non-blocking FIFO.
            while unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
        }
        let ranks = self.read_all_ranks(m);
        self.answer_bells(m, &ranks, now)
    }

    fn annotate(&self, i: usize, r: &mut JobReport) {
        r.ranks = self.pinned[i]
            .iter()
            .map(|(&rank, &(_, cpu))| (rank, cpu))
            .collect();
    }

    /// `boosts`: ranks raised to SCHED_FIFO (the mechanism applied them).
    fn report(&self, m: &Mechanism) -> PolicyReport {
        let mut r = PolicyReport::new();
        r.insert("boosts".into(), m.boosts_applied().into());
        r
    }
}
