//! The cluster machine: N workstations of C processors, each with its own
//! local scheduler, joined by a network with user-level messaging (seed
//! 003). It applies the decisions of `parsched_core::policy::cosched` (and
//! of the gang scheduler for the references) and feeds them what happens.
//!
//! **Time** is in nanoseconds. **A processor** runs one process at a time;
//! the running process makes progress from `seg_start` on (context switches
//! and interrupts push `seg_start` later: the processor works for the kernel
//! meanwhile). One re-armable timer per processor fires at the earlier of the
//! end of the current activity and the end of the quantum.
//!
//! **A process** runs its program: compute; a send posts the message (the
//! send overhead on its processor) and the network deposits it in the
//! receiver's endpoint after the wire time (`latency − overheads + bytes ×
//! per_byte`), in order per sender–receiver pair, without the receiver's
//! host; a receive polls the endpoint — busy, or for the spin time and then
//! blocking or yielding — and takes the message (the receive overhead).
//! Messages that arrived since a process last polled are *pending* (what PB,
//! PBT and spin-yield look at).
//!
//! **The network interface** decides on every arrival whether to interrupt
//! (the policy's [`Scheme::on_arrival`]); an interrupt costs `interrupt_us`
//! on the node's first processor. It believes the process it last sampled
//! (`nic_sample_us`, 0: the current one) is running.

use super::apps::AppKind;
use super::config::{BoostQueue, ClusterConfig, LocalKind, PendingRule};
use crate::engine::{Engine, Flow, Model, Timer};
use crate::rng::{stream, Stream, StreamRng};
use parsched_core::policy::cosched::{
    choose_yield_target, ArrivalDecision, BoostDecision, CoschedScheme, EndpointView,
    PeriodicBooster, ProcState, Scheme, SpinExpiry,
};
use parsched_core::policy::gang::{GangId, GangMatrix};
use parsched_core::policy::gang_sched::{Admission, Cell, GangSchedOptions, GangScheduler};
use parsched_core::policy::local::{EnqueueReason, LocalScheduler, RoundRobin, Wakeup};
use parsched_core::policy::ts::TimeSharing;
use parsched_core::program::{Cursor, Op, Program};
use parsched_core::{ThreadId, Time};
use rand::Rng;
use std::collections::VecDeque;
use std::sync::Arc;

pub(crate) const NEVER: u64 = u64::MAX / 4;
const NONE: u32 = u32::MAX;

/// The machine's events.
#[derive(Debug, Clone, Copy)]
pub enum Ev {
    /// A processor's activity or quantum ended.
    CpuTimerFired { cpu: u32 },
    /// A message reached its receiver's endpoint.
    MessageArrived { dest: u32, src: u32, seq: u32 },
    /// A node's periodic boost function ran.
    BoostTimerFired { node: u32 },
    /// A late wake-up was delivered, or a blocked process timed out.
    WakeupDue { proc: u32 },
    /// A node's daemon woke up.
    DaemonWoke { proc: u32 },
    /// The network interface sampled the running process.
    NicSampled { node: u32 },
    /// A process was launched.
    ProcStarted { proc: u32 },
    /// One second passed on a node's clock (time-sharing's ageing; every
    /// node has its own phase).
    SecondElapsed { node: u32 },
    /// The CPU-share probe.
    ProbeTicked,
    /// Gang scheduling's slot ended.
    SlotEnded,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Act {
    /// Computing (`left` ns to go).
    Compute,
    /// Posting a send.
    SendOv {
        dest: u32,
        bytes: u32,
    },
    /// Taking a message.
    RecvOv,
    /// Polling for a message from `from` (`NONE`: any).
    Spin {
        from: u32,
    },
    /// The driver call that blocks.
    BlockCall {
        from: u32,
    },
    /// The driver call that yields.
    YieldCall {
        from: u32,
    },
    /// A daemon's activation.
    Daemon,
    Done,
}

#[derive(Debug, Clone, Copy)]
struct Msg {
    src: u32,
    seq: u32,
}

pub(crate) struct Proc {
    pub job: u32,
    pub rank: u32,
    pub node: u32,
    local: u32,
    pub state: ProcState,
    pub act: Act,
    left: u64,
    cursor: Cursor,
    rng: StreamRng,
    quantum_left: Option<u64>,
    spin_deadline: u64,
    inbox: VecDeque<Msg>,
    pending: u32,
    last_arrival: u64,
    sent_seq: Vec<u32>,
    last_arrival_to: Vec<u64>,
    recv_seq: Vec<u32>,
    comm_since: Option<u64>,
    pub comm_ns: u64,
    pub spin_ns: u64,
    pub cpu_ns: u64,
    waking: bool,
    believed: bool,
    timer: Timer,
    daemon: bool,
    /// The processor it runs on (when running).
    cpu: u32,
    /// Launched (before that it is `Blocked` and nothing wakes it).
    started: bool,
    /// Boosts since its node's last once-a-second ageing (`boost_cap`).
    boosts_this_s: u32,
}

enum NodeSched {
    Ts(TimeSharing),
    Rr(RoundRobin),
}

macro_rules! fwd {
    ($s:expr, $q:ident => $e:expr) => {
        match $s {
            NodeSched::Ts($q) => $e,
            NodeSched::Rr($q) => $e,
        }
    };
}

impl NodeSched {
    fn enqueue(&mut self, t: u32, r: EnqueueReason) {
        fwd!(self, q => q.enqueue(ThreadId(t), r))
    }
    fn pick_next(&mut self) -> Option<u32> {
        fwd!(self, q => q.pick_next()).map(|t| t.0)
    }
    fn peek_next(&self) -> Option<u32> {
        fwd!(self, q => q.peek_next()).map(|t| t.0)
    }
    fn quantum(&self, t: u32) -> u64 {
        fwd!(self, q => q.quantum(ThreadId(t)))
    }
    fn should_preempt(&self, t: u32) -> bool {
        fwd!(self, q => q.should_preempt(ThreadId(t)))
    }
    fn continue_running(&mut self, t: u32) {
        fwd!(self, q => q.continue_running(ThreadId(t)))
    }
    fn preempts(&self, a: u32, b: u32) -> bool {
        fwd!(self, q => q.preempts(ThreadId(a), ThreadId(b)))
    }
    fn on_second(&mut self) {
        fwd!(self, q => q.on_second())
    }
    fn on_second_running(&mut self, t: u32) {
        fwd!(self, q => q.on_second_running(ThreadId(t)))
    }
    fn boost(&mut self, t: u32) -> bool {
        fwd!(self, q => q.boost(ThreadId(t)))
    }
    fn lower(&mut self, t: u32) -> bool {
        fwd!(self, q => q.lower(ThreadId(t)))
    }
    pub(crate) fn level(&self, t: u32) -> u8 {
        match self {
            NodeSched::Ts(q) => q.level(ThreadId(t)),
            NodeSched::Rr(_) => 0,
        }
    }
}

struct Node {
    sched: NodeSched,
    procs: Vec<u32>,
    cpu0: u32,
    booster: Option<PeriodicBooster>,
    yield_next: usize,
    /// Phase of the node's clock ticks (ns, < tick).
    tick_phase: u64,
    /// The interface sends one message at a time: its link is busy until.
    link_free: u64,
}

struct Cpu {
    node: u32,
    running: Option<u32>,
    last: Option<u32>,
    seg_start: u64,
    quantum_end: u64,
    acct_since: u64,
    timer: Timer,
}

struct JobState {
    base: u32,
    width: u32,
    left: u32,
    finish: Option<u64>,
}

/// Counters of one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    pub context_switches: u64,
    pub interrupts: u64,
    pub interrupt_ns: u64,
    pub boosts: u64,
    /// Boosts refused by `boost_cap`.
    pub boosts_capped: u64,
    pub wakeups: u64,
    pub lost_wakeups: u64,
    pub block_timeouts: u64,
    pub blocks: u64,
    pub yields: u64,
    pub messages_sent: u64,
    pub messages_received: u64,
    pub order_violations: u64,
    pub latency_ns_sum: u64,
    pub latency_count: u64,
    pub small_latency_ns_sum: u64,
    pub small_latency_count: u64,
    pub timer_invocations: u64,
    pub slot_switches: u64,
    /// A processor ran two processes at once, a blocked process held a
    /// processor, or a priority left the table (audits; must stay 0).
    pub audit_failures: u64,
}

/// Why a run could not finish.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClusterError {
    #[error(transparent)]
    Config(#[from] parsched_core::ConfigError),
    #[error("the run passed max_time_s = {0} s of simulated time with {1} of its jobs unfinished (livelock or deadlock); raise max_time_s if the run is merely long")]
    TimeLimit(f64, u32),
    #[error("{0}")]
    Program(String),
    #[error("interrupted")]
    Interrupted,
    /// The audit (`ClusterOptions::audit`) found broken invariants: a bug.
    #[error("the audit found {failures} broken invariant(s) and {order_violations} out-of-order message(s): a bug in the cluster machine, please report it with the configuration")]
    Audit {
        failures: u64,
        order_violations: u64,
    },
}

/// Messages up to this size count as small for `small_latency_us` (the
/// paper's 32 µs is a small-message figure).
pub const SMALL_MESSAGE_BYTES: u32 = 64;

pub(crate) struct ClusterMachine {
    pub scheme: CoschedScheme,
    dynamic: Option<Scheme>,
    programs: Vec<Arc<Program>>,
    pub procs: Vec<Proc>,
    nodes: Vec<Node>,
    cpus: Vec<Cpu>,
    jobs: Vec<JobState>,
    job_spin: Vec<u64>,
    gang: Option<GangScheduler>,
    /// Gang mode: `cell[cpu * jobs + job]` = the job's process pinned there.
    cell: Vec<u32>,
    cells_out: Vec<Option<Cell>>,
    slot_timer: Timer,
    // costs (ns)
    send_ov: u64,
    recv_ov: u64,
    wire: u64,
    per_byte: f64,
    ctx: u64,
    intr: u64,
    sys: u64,
    timer_cost: u64,
    boost_period: u64,
    nic_sample: u64,
    wake_delay: u64,
    wake_loss: f64,
    block_timeout: u64,
    daemon_period: u64,
    daemon_run: u64,
    slot: u64,
    tick: u64,
    probe: u64,
    probe_node: u32,
    max_time: u64,
    audit: bool,
    pb_sb_wake_interrupts: bool,
    literal_pending: bool,
    age_running: bool,
    boost_refreshes_quantum: bool,
    boost_cap: u32,
    policy_rng: StreamRng,
    view: Vec<EndpointView>,
    pub counters: Counters,
    pub job_finish: Vec<Option<u64>>,
    /// CPU-share rows of the probed node: (time ns, ns used per job).
    pub probe_rows: Vec<(u64, Vec<u64>)>,
    probe_acc: Vec<u64>,
    jobs_left: u32,
    pub end: u64,
    pub error: Option<ClusterError>,
    pub cancel: Option<Arc<std::sync::atomic::AtomicBool>>,
}

fn us(x: f64) -> u64 {
    (x * 1e3).round() as u64
}

fn ms(x: f64) -> u64 {
    (x * 1e6).round() as u64
}

impl ClusterMachine {
    pub fn new(
        cfg: &ClusterConfig,
        seed: u64,
        audit: bool,
        eng: &mut Engine<Ev>,
    ) -> Result<ClusterMachine, ClusterError> {
        cfg.validate()?;
        let apps: Vec<AppKind> = cfg.apps();
        let width = cfg.width();
        let njobs = apps.len() as u32;
        let ncpus = cfg.nodes * cfg.cpus_per_node;
        let dynamic = match cfg.scheme {
            CoschedScheme::Dynamic(s) => Some(s),
            _ => None,
        };
        let programs: Vec<Arc<Program>> = apps
            .iter()
            .map(|a| Arc::new(a.model().program(*a, width, cfg.scale)))
            .collect();
        for p in &programs {
            p.validate().map_err(ClusterError::Program)?;
        }
        let boost_period = ms(cfg.boost_period_ms);
        let job_spin: Vec<u64> = apps
            .iter()
            .map(|a| {
                let s = us(cfg.spin_time_us.unwrap_or(a.model().spin_time_us));
                // PB-SB: "the spin is limited to the period of the kernel
                // function".
                match dynamic {
                    Some(d) if d.has_periodic_boost() && cfg.spin_cap_at_boost_period => {
                        s.min(boost_period)
                    }
                    _ => s,
                }
            })
            .collect();
        let table = cfg.table();
        let mut nodes = Vec::with_capacity(cfg.nodes as usize);
        for n in 0..cfg.nodes {
            let sched = match cfg.local {
                LocalKind::Ts => NodeSched::Ts(
                    TimeSharing::new(table.clone(), 1_000_000, cfg.initial_level)?
                        .with_boost_to(cfg.boost_to)
                        .with_boost_at_tail(cfg.boost_queue == BoostQueue::Tail)
                        .with_boost_transient(cfg.boost_transient),
                ),
                LocalKind::Rr => {
                    NodeSched::Rr(RoundRobin::new(ms(cfg.rr_quantum_ms), Wakeup::Tail))
                }
            };
            nodes.push(Node {
                sched,
                procs: Vec::new(),
                cpu0: n * cfg.cpus_per_node,
                booster: dynamic.and_then(PeriodicBooster::new),
                yield_next: 0,
                tick_phase: 0,
                link_free: 0,
            });
        }
        let mut cpus = Vec::with_capacity(ncpus as usize);
        for c in 0..ncpus {
            cpus.push(Cpu {
                node: c / cfg.cpus_per_node,
                running: None,
                last: None,
                seg_start: 0,
                quantum_end: NEVER,
                acct_since: 0,
                timer: eng.timer(),
            });
        }
        // Gang placement comes from the matrix; otherwise rank r is on node
        // r mod N.
        let mut gang = None;
        let mut placement: Vec<Vec<u32>> = Vec::new();
        if dynamic.is_none() {
            let mut g =
                GangScheduler::new(GangMatrix::new(ncpus, None)?, GangSchedOptions::default());
            for j in 0..njobs {
                match g.admit(GangId(j as u64), width) {
                    Ok(Admission::Placed(a)) => {
                        placement.push(a.procs.iter().map(|p| p.0).collect())
                    }
                    _ => {
                        return Err(ClusterError::Program(format!(
                            "job {j} of width {width} does not fit the gang matrix"
                        )))
                    }
                }
            }
            gang = Some(g);
        }
        let mut procs = Vec::new();
        let mut jobs = Vec::new();
        // A job's compute draws depend on its application, its occurrence
        // among the workload's jobs of that application and the rank, not
        // on its position: the first LIFE12 of any workload draws what
        // LIFE12 alone draws (common random numbers across workloads).
        let mut seen: Vec<AppKind> = Vec::new();
        let mut cell = vec![
            NONE;
            if gang.is_some() {
                (ncpus * njobs) as usize
            } else {
                0
            }
        ];
        for j in 0..njobs {
            let base = procs.len() as u32;
            jobs.push(JobState {
                base,
                width,
                left: width,
                finish: None,
            });
            let app = apps[j as usize];
            let occurrence = seen.iter().filter(|&&a| a == app).count() as u64;
            seen.push(app);
            let app_index = AppKind::ALL.iter().position(|&a| a == app).unwrap_or(0) as u64;
            for r in 0..width {
                let node = match &gang {
                    Some(_) => {
                        let cpu = placement[j as usize][r as usize];
                        cell[(cpu * njobs + j) as usize] = base + r;
                        cpu / cfg.cpus_per_node
                    }
                    None => r % cfg.nodes,
                };
                let local = nodes[node as usize].procs.len() as u32;
                nodes[node as usize].procs.push(base + r);
                procs.push(Proc {
                    job: j,
                    rank: r,
                    node,
                    local,
                    state: ProcState::Ready,
                    act: Act::Compute,
                    left: 0,
                    cursor: Cursor::new(width),
                    rng: stream(
                        seed,
                        Stream::ThreadDemand,
                        (app_index << 56) | (occurrence << 32) | r as u64,
                    ),
                    quantum_left: None,
                    spin_deadline: NEVER,
                    inbox: VecDeque::new(),
                    pending: 0,
                    last_arrival: 0,
                    sent_seq: vec![0; width as usize],
                    last_arrival_to: vec![0; width as usize],
                    recv_seq: vec![0; width as usize],
                    comm_since: None,
                    comm_ns: 0,
                    spin_ns: 0,
                    cpu_ns: 0,
                    waking: false,
                    believed: false,
                    timer: eng.timer(),
                    daemon: false,
                    cpu: NONE,
                    started: true,
                    boosts_this_s: 0,
                });
            }
        }
        let mut phase_rng = stream(seed, Stream::Phase, 0);
        let daemon_period = ms(cfg.daemon_period_ms);
        if daemon_period > 0 && dynamic.is_some() {
            for n in 0..cfg.nodes {
                let id = procs.len() as u32;
                let local = nodes[n as usize].procs.len() as u32;
                nodes[n as usize].procs.push(id);
                procs.push(Proc {
                    job: NONE,
                    rank: 0,
                    node: n,
                    local,
                    state: ProcState::Blocked,
                    act: Act::Daemon,
                    left: 0,
                    cursor: Cursor::new(1),
                    rng: stream(seed, Stream::Policy, 1 + n as u64),
                    quantum_left: None,
                    spin_deadline: NEVER,
                    inbox: VecDeque::new(),
                    pending: 0,
                    last_arrival: 0,
                    sent_seq: Vec::new(),
                    last_arrival_to: Vec::new(),
                    recv_seq: Vec::new(),
                    comm_since: None,
                    comm_ns: 0,
                    spin_ns: 0,
                    cpu_ns: 0,
                    waking: false,
                    believed: false,
                    timer: eng.timer(),
                    daemon: true,
                    cpu: NONE,
                    started: true,
                    boosts_this_s: 0,
                });
                let at = phase_rng.random_range(0..daemon_period);
                eng.schedule_at(Time(at), Ev::DaemonWoke { proc: id });
            }
        }
        let mut m = ClusterMachine {
            scheme: cfg.scheme,
            dynamic,
            programs,
            procs,
            nodes,
            cpus,
            jobs,
            job_spin,
            gang,
            cell,
            cells_out: Vec::new(),
            slot_timer: eng.timer(),
            send_ov: us(cfg.send_overhead_us),
            recv_ov: us(cfg.recv_overhead_us),
            wire: us(cfg.latency_us - cfg.send_overhead_us - cfg.recv_overhead_us),
            per_byte: cfg.per_byte_ns,
            ctx: us(cfg.context_switch_us),
            intr: us(cfg.interrupt_us),
            sys: us(cfg.syscall_us),
            timer_cost: us(cfg.timer_us),
            boost_period,
            nic_sample: us(cfg.nic_sample_us),
            wake_delay: us(cfg.wake_delay_us),
            wake_loss: cfg.wake_loss,
            block_timeout: ms(cfg.block_timeout_ms),
            daemon_period,
            daemon_run: us(cfg.daemon_run_us),
            slot: ms(cfg.gang_slot_ms),
            tick: ms(cfg.tick_ms),
            probe: ms(cfg.probe_ms),
            probe_node: cfg.probe_node,
            max_time: (cfg.max_time_s * 1e9) as u64,
            audit,
            pb_sb_wake_interrupts: cfg.pb_sb_wake_interrupts,
            literal_pending: cfg.pending == PendingRule::Unconsumed,
            age_running: cfg.age_running,
            boost_refreshes_quantum: cfg.boost_refreshes_quantum,
            boost_cap: cfg.boost_cap,
            policy_rng: stream(seed, Stream::Policy, 0),
            view: Vec::new(),
            counters: Counters::default(),
            job_finish: vec![None; njobs as usize],
            probe_rows: Vec::new(),
            probe_acc: vec![0; njobs as usize],
            jobs_left: njobs,
            end: 0,
            error: None,
            cancel: None,
        };
        // Start: every process is ready (new) at time 0.
        eng.schedule_at(Time(m.probe), Ev::ProbeTicked);
        if let Some(d) = dynamic {
            if m.tick > 0 {
                for node in &mut m.nodes {
                    node.tick_phase = phase_rng.random_range(0..m.tick);
                }
            }
            let skew = ms(cfg.start_skew_ms);
            let gap = ms(cfg.launch_gap_ms);
            for n in 0..m.nodes.len() {
                for k in 0..m.nodes[n].procs.len() {
                    let p = m.nodes[n].procs[k];
                    if m.procs[p as usize].daemon {
                        continue;
                    }
                    let at = m.procs[p as usize].job as u64 * gap
                        + if skew > 0 {
                            phase_rng.random_range(0..skew)
                        } else {
                            0
                        };
                    if at == 0 {
                        m.nodes[n]
                            .sched
                            .enqueue(m.procs[p as usize].local, EnqueueReason::New);
                    } else {
                        m.procs[p as usize].state = ProcState::Blocked;
                        m.procs[p as usize].started = false;
                        eng.schedule_at(Time(at), Ev::ProcStarted { proc: p });
                    }
                }
            }
            for n in 0..m.nodes.len() as u32 {
                let at = phase_rng.random_range(1..=1_000_000_000u64);
                eng.schedule_at(Time(at), Ev::SecondElapsed { node: n });
            }
            if d.has_periodic_boost() {
                for n in 0..m.nodes.len() as u32 {
                    let at = phase_rng.random_range(0..m.boost_period.max(1));
                    eng.schedule_at(Time(at), Ev::BoostTimerFired { node: n });
                }
            }
            if m.nic_sample > 0 && d.arrival == parsched_core::policy::cosched::ArrivalAction::Dcs {
                for n in 0..m.nodes.len() as u32 {
                    let at = phase_rng.random_range(0..m.nic_sample);
                    eng.schedule_at(Time(at), Ev::NicSampled { node: n });
                }
            }
            for c in 0..m.cpus.len() {
                m.dispatch(c, 0, eng);
            }
        } else {
            m.gang_rotate(0, eng);
            if m.scheme == CoschedScheme::Gang {
                eng.set_timer(m.slot_timer, Time(m.slot), Ev::SlotEnded);
            }
        }
        Ok(m)
    }

    // ---- processors -------------------------------------------------------

    /// Credits the running process with its progress up to `now`.
    fn settle(&mut self, c: usize, now: u64) {
        let cpu = &mut self.cpus[c];
        let Some(p) = cpu.running else { return };
        if now <= cpu.seg_start {
            return;
        }
        let d = now - cpu.seg_start;
        cpu.seg_start = now;
        let pr = &mut self.procs[p as usize];
        match pr.act {
            Act::Spin { .. } => pr.spin_ns += d,
            Act::Done => {}
            _ => pr.left -= d.min(pr.left),
        }
    }

    fn spin_limited(&self, p: &Proc) -> bool {
        !p.daemon && self.dynamic.is_some_and(|s| s.spins_then_acts())
    }

    fn has_match(p: &Proc) -> bool {
        match p.act {
            Act::Spin { from } => p.inbox.iter().any(|m| from == NONE || m.src == from),
            _ => false,
        }
    }

    /// Sets the processor's timer for the running process's next decision.
    fn arm(&mut self, c: usize, now: u64, eng: &mut Engine<Ev>) {
        let cpu = &self.cpus[c];
        let Some(p) = cpu.running else {
            eng.cancel(cpu.timer);
            return;
        };
        let pr = &self.procs[p as usize];
        let end = match pr.act {
            Act::Spin { .. } => {
                if Self::has_match(pr) {
                    cpu.seg_start.max(now)
                } else if self.spin_limited(pr) {
                    cpu.seg_start.max(pr.spin_deadline)
                } else {
                    NEVER
                }
            }
            Act::Done => NEVER,
            _ => cpu.seg_start + pr.left,
        };
        let at = end.min(cpu.quantum_end).max(now);
        eng.set_timer(cpu.timer, Time(at), Ev::CpuTimerFired { cpu: c as u32 });
    }

    /// Accounts the running process's processor time up to `now` (the probe).
    fn account(&mut self, c: usize, now: u64) {
        let cpu = &mut self.cpus[c];
        if let Some(p) = cpu.running {
            let d = now.saturating_sub(cpu.acct_since);
            let pr = &mut self.procs[p as usize];
            pr.cpu_ns += d;
            if cpu.node == self.probe_node && pr.job != NONE {
                self.probe_acc[pr.job as usize] += d;
            }
        }
        cpu.acct_since = now;
    }

    /// The processor stops running its process.
    fn release(&mut self, c: usize, now: u64) {
        self.account(c, now);
        let cpu = &mut self.cpus[c];
        cpu.last = cpu.running.take();
        if let Some(p) = cpu.last {
            if self.nic_sample == 0 {
                self.procs[p as usize].believed = false;
            }
        }
    }

    /// Puts `p` on processor `c`.
    fn start(&mut self, c: usize, p: u32, now: u64, eng: &mut Engine<Ev>) {
        if self.audit && self.procs[p as usize].state != ProcState::Ready {
            self.counters.audit_failures += 1;
        }
        let switch = self.cpus[c].last != Some(p);
        let cost = if switch { self.ctx } else { 0 };
        if switch && self.cpus[c].last.is_some() {
            self.counters.context_switches += 1;
        }
        let node = self.cpus[c].node as usize;
        let pr = &mut self.procs[p as usize];
        pr.state = ProcState::Running;
        pr.cpu = c as u32;
        if self.nic_sample == 0 {
            pr.believed = true;
        }
        let quantum = match pr.quantum_left.take() {
            Some(q) => q,
            None if self.gang.is_some() => NEVER,
            None => self.nodes[node].sched.quantum(pr.local),
        };
        let quantum_end = self.quantum_end(node, now, quantum);
        let cpu = &mut self.cpus[c];
        cpu.running = Some(p);
        cpu.seg_start = now + cost;
        cpu.quantum_end = quantum_end;
        cpu.acct_since = now;
        if self.audit {
            if let NodeSched::Ts(ts) = &self.nodes[node].sched {
                if ts.level(ThreadId(self.procs[p as usize].local)) > ts.table().top() {
                    self.counters.audit_failures += 1;
                }
            }
        }
        self.arm(c, now, eng);
    }

    /// When a quantum of `q` ns given at `now` ends: on the node's clock
    /// tick at which the quantum's ticks are used up (the partial tick of
    /// the dispatch counts whole, as the kernel's clock charges it).
    fn quantum_end(&self, node: usize, now: u64, q: u64) -> u64 {
        if q >= NEVER {
            return NEVER;
        }
        if self.tick == 0 {
            return now + q;
        }
        let phase = self.nodes[node].tick_phase;
        let ticks = q.div_ceil(self.tick).max(1);
        // The first tick strictly after `now`.
        let k = (now + self.tick - phase) / self.tick;
        phase + (k + ticks - 1) * self.tick
    }

    /// Picks the next process for processor `c` (or leaves it idle).
    fn dispatch(&mut self, c: usize, now: u64, eng: &mut Engine<Ev>) {
        debug_assert!(self.cpus[c].running.is_none());
        if self.gang.is_some() {
            self.gang_fill(c, now, eng);
            return;
        }
        let node = self.cpus[c].node as usize;
        match self.nodes[node].sched.pick_next() {
            Some(t) => {
                let p = self.nodes[node].procs[t as usize];
                self.start(c, p, now, eng);
            }
            None => eng.cancel(self.cpus[c].timer),
        }
    }

    /// Takes `p` off processor `c` back to the run queue for `reason`.
    fn preempt(&mut self, c: usize, now: u64, reason: EnqueueReason) {
        self.settle(c, now);
        let p = self.cpus[c].running.expect("preempting an idle processor");
        let quantum_end = self.cpus[c].quantum_end;
        self.release(c, now);
        let pr = &mut self.procs[p as usize];
        pr.state = ProcState::Ready;
        pr.quantum_left =
            (reason == EnqueueReason::Preempted).then(|| quantum_end.saturating_sub(now).max(1));
        if self.gang.is_none() {
            let node = pr.node as usize;
            self.nodes[node].sched.enqueue(pr.local, reason);
        }
    }

    /// A process of node `node` became ready or was raised: an idle
    /// processor takes it, or it preempts the lowest-priority runner it
    /// outranks.
    fn check_preempt(&mut self, node: usize, now: u64, eng: &mut Engine<Ev>) {
        let Some(q) = self.nodes[node].sched.peek_next() else {
            return;
        };
        let cpus = self.nodes[node].cpu0 as usize
            ..self.nodes[node].cpu0 as usize + self.cpus.len() / self.nodes.len();
        let mut victim: Option<(usize, u8)> = None;
        for c in cpus {
            match self.cpus[c].running {
                None => {
                    self.dispatch(c, now, eng);
                    return;
                }
                Some(r) => {
                    let rl = self.procs[r as usize].local;
                    let sched = &self.nodes[node].sched;
                    if sched.preempts(q, rl) {
                        let lv = sched.level(rl);
                        if victim.is_none_or(|(_, l)| lv < l) {
                            victim = Some((c, lv));
                        }
                    }
                }
            }
        }
        if let Some((c, _)) = victim {
            self.preempt(c, now, EnqueueReason::Preempted);
            self.dispatch(c, now, eng);
        }
    }

    /// The node's first processor takes an interrupt of `cost`.
    fn interrupt(&mut self, node: usize, now: u64, cost: u64, eng: &mut Engine<Ev>) {
        let c = self.nodes[node].cpu0 as usize;
        if self.cpus[c].running.is_some() {
            self.settle(c, now);
            let cpu = &mut self.cpus[c];
            cpu.seg_start = cpu.seg_start.max(now) + cost;
            self.arm(c, now, eng);
        }
    }

    // ---- processes --------------------------------------------------------

    fn begin_comm(p: &mut Proc, now: u64) {
        if p.comm_since.is_none() {
            p.comm_since = Some(now);
        }
    }

    fn end_comm(p: &mut Proc, now: u64) {
        if let Some(s) = p.comm_since.take() {
            p.comm_ns += now - s;
        }
    }

    /// Polls the endpoint: pending messages are seen; the awaited one, if
    /// there, is taken (the receive overhead follows).
    fn try_receive(&mut self, p: u32, now: u64) -> bool {
        let pr = &mut self.procs[p as usize];
        let Act::Spin { from } = pr.act else {
            return false;
        };
        pr.pending = 0;
        let Some(k) = pr.inbox.iter().position(|m| from == NONE || m.src == from) else {
            return false;
        };
        let m = pr.inbox.remove(k).expect("found");
        let expect = &mut pr.recv_seq[m.src as usize];
        if m.seq != *expect {
            self.counters.order_violations += 1;
        }
        *expect = m.seq + 1;
        self.counters.messages_received += 1;
        pr.act = Act::RecvOv;
        pr.left = self.recv_ov;
        let _ = now;
        true
    }

    /// The message leaves `p` for rank `dest` of its job.
    fn emit(&mut self, p: u32, dest: u32, bytes: u32, now: u64, eng: &mut Engine<Ev>) {
        let xfer = (bytes as f64 * self.per_byte).round() as u64;
        let pr = &mut self.procs[p as usize];
        let node = &mut self.nodes[pr.node as usize];
        let start = now.max(node.link_free);
        node.link_free = start + xfer;
        let d = dest as usize;
        let seq = pr.sent_seq[d];
        pr.sent_seq[d] += 1;
        let at = (start + self.wire + xfer).max(pr.last_arrival_to[d]);
        pr.last_arrival_to[d] = at;
        let dest_proc = self.jobs[pr.job as usize].base + dest;
        self.counters.messages_sent += 1;
        // one way: send posted to message taken by a polling receiver
        let latency = at - now.saturating_sub(self.send_ov) + self.recv_ov;
        self.counters.latency_ns_sum += latency;
        self.counters.latency_count += 1;
        if bytes <= SMALL_MESSAGE_BYTES {
            self.counters.small_latency_ns_sum += latency;
            self.counters.small_latency_count += 1;
        }
        eng.schedule_at(
            Time(at),
            Ev::MessageArrived {
                dest: dest_proc,
                src: pr.rank,
                seq,
            },
        );
    }

    /// Runs `p`'s program from its current point until it has something to
    /// do on the processor (or exits).
    fn advance(&mut self, c: usize, p: u32, now: u64, eng: &mut Engine<Ev>) {
        loop {
            let job = self.procs[p as usize].job as usize;
            let width = self.jobs[job].width;
            let spin = self.job_spin[job];
            let pr = &mut self.procs[p as usize];
            let op = match pr.cursor.next(&self.programs[job], &mut pr.rng) {
                Op::Compute { units } => Op::Compute { units },
                Op::Send { to, bytes } => Op::Send { to, bytes },
                Op::Receive { from } => Op::Receive { from },
                Op::Exit => Op::Exit,
                Op::Barrier | Op::ForkJoin { .. } => Op::Barrier,
            };
            match op {
                Op::Compute { units } => {
                    Self::end_comm(pr, now);
                    pr.act = Act::Compute;
                    pr.left = (units * 1e3).round().max(0.0) as u64;
                    if pr.left > 0 {
                        return;
                    }
                }
                Op::Send { to, bytes } => {
                    Self::begin_comm(pr, now);
                    let dest = to.resolve(pr.rank, width).unwrap_or(pr.rank);
                    if self.send_ov == 0 {
                        self.emit(p, dest, bytes, now, eng);
                        continue;
                    }
                    pr.act = Act::SendOv { dest, bytes };
                    pr.left = self.send_ov;
                    return;
                }
                Op::Receive { from } => {
                    Self::begin_comm(pr, now);
                    let from = from.resolve(pr.rank, width).unwrap_or(NONE);
                    pr.act = Act::Spin { from };
                    pr.spin_deadline = now + spin;
                    if self.try_receive(p, now) {
                        if self.procs[p as usize].left > 0 {
                            return;
                        }
                        continue;
                    }
                    return;
                }
                Op::Exit => {
                    Self::end_comm(pr, now);
                    self.exit(c, p, now, eng);
                    return;
                }
                Op::Barrier | Op::ForkJoin { .. } => {
                    self.error = Some(ClusterError::Program(
                        "the cluster machine runs message-passing programs: use message barriers, not Barrier or ForkJoin steps".into(),
                    ));
                    return;
                }
            }
        }
    }

    fn exit(&mut self, c: usize, p: u32, now: u64, eng: &mut Engine<Ev>) {
        self.settle(c, now);
        self.release(c, now);
        let pr = &mut self.procs[p as usize];
        pr.state = ProcState::Done;
        pr.act = Act::Done;
        let j = pr.job as usize;
        self.jobs[j].left -= 1;
        if self.jobs[j].left == 0 {
            self.jobs[j].finish = Some(now);
            self.job_finish[j] = Some(now);
            self.jobs_left -= 1;
            self.end = now;
            if let Some(g) = self.gang.as_mut() {
                let _ = g.finish(GangId(j as u64));
                if self.jobs_left > 0 {
                    // The slot's gang is gone: switch at once.
                    self.gang_rotate(now, eng);
                    if self.scheme == CoschedScheme::Gang {
                        eng.set_timer(self.slot_timer, Time(now + self.slot), Ev::SlotEnded);
                    }
                    return;
                }
            }
        }
        if self.jobs_left > 0 {
            self.dispatch(c, now, eng);
        }
    }

    /// `p`'s current activity on processor `c` is complete.
    fn finish_act(&mut self, c: usize, p: u32, now: u64, eng: &mut Engine<Ev>) {
        match self.procs[p as usize].act {
            Act::Compute | Act::RecvOv => self.advance(c, p, now, eng),
            Act::SendOv { dest, bytes } => {
                self.emit(p, dest, bytes, now, eng);
                self.advance(c, p, now, eng);
            }
            Act::BlockCall { from } => {
                let pr = &mut self.procs[p as usize];
                pr.act = Act::Spin { from };
                if self.try_receive(p, now) {
                    return;
                }
                self.block(c, p, now, eng);
            }
            Act::YieldCall { from } => {
                self.procs[p as usize].act = Act::Spin { from };
                self.spin_yield(c, p, now, eng);
            }
            Act::Daemon => {
                // The daemon sleeps until its next period.
                self.release(c, now);
                let pr = &mut self.procs[p as usize];
                pr.state = ProcState::Blocked;
                eng.schedule_at(Time(now + self.daemon_period), Ev::DaemonWoke { proc: p });
                self.dispatch(c, now, eng);
            }
            Act::Spin { .. } | Act::Done => {}
        }
    }

    fn block(&mut self, c: usize, p: u32, now: u64, eng: &mut Engine<Ev>) {
        self.counters.blocks += 1;
        self.release(c, now);
        let pr = &mut self.procs[p as usize];
        pr.state = ProcState::Blocked;
        pr.waking = false;
        if self.block_timeout > 0 {
            eng.set_timer(
                pr.timer,
                Time(now + self.block_timeout),
                Ev::WakeupDue { proc: p },
            );
        }
        self.dispatch(c, now, eng);
    }

    fn spin_yield(&mut self, c: usize, p: u32, now: u64, eng: &mut Engine<Ev>) {
        self.counters.yields += 1;
        let node = self.procs[p as usize].node as usize;
        let local = self.procs[p as usize].local;
        self.nodes[node].sched.lower(local);
        self.fill_view(node);
        let mut next = self.nodes[node].yield_next;
        let target = choose_yield_target(&self.view, local as usize, &mut next);
        self.nodes[node].yield_next = next;
        let spin = self.job_spin[self.procs[p as usize].job as usize];
        self.procs[p as usize].spin_deadline = now + spin;
        if let Some(t) = target {
            let q = self.nodes[node].procs[t];
            self.boost(q, now, eng);
        }
        // A lowered spinner gives way to anyone queued above it.
        if self.cpus[c].running == Some(p) {
            if let Some(q) = self.nodes[node].sched.peek_next() {
                if self.nodes[node].sched.preempts(q, local) {
                    self.preempt(c, now, EnqueueReason::Yielded);
                    self.dispatch(c, now, eng);
                }
            }
        }
    }

    fn fill_view(&mut self, node: usize) {
        self.view.clear();
        for &p in &self.nodes[node].procs {
            let pr = &self.procs[p as usize];
            self.view.push(EndpointView {
                state: if pr.started {
                    pr.state
                } else {
                    ProcState::Done
                },
                pending: if self.literal_pending {
                    pr.inbox.len() as u32
                } else {
                    pr.pending
                },
                last_arrival: Time(pr.last_arrival),
            });
        }
    }

    /// Wakes blocked `p` (now, or after the wake delay).
    fn wake(&mut self, p: u32, now: u64, eng: &mut Engine<Ev>) {
        let pr = &mut self.procs[p as usize];
        if pr.state != ProcState::Blocked || pr.waking || !pr.started {
            return;
        }
        if self.wake_delay > 0 {
            pr.waking = true;
            eng.set_timer(
                pr.timer,
                Time(now + self.wake_delay),
                Ev::WakeupDue { proc: p },
            );
            return;
        }
        self.make_ready(p, now, eng);
    }

    fn make_ready(&mut self, p: u32, now: u64, eng: &mut Engine<Ev>) {
        self.counters.wakeups += 1;
        let spin = if self.procs[p as usize].daemon {
            0
        } else {
            self.job_spin[self.procs[p as usize].job as usize]
        };
        let pr = &mut self.procs[p as usize];
        eng.cancel(pr.timer);
        pr.state = ProcState::Ready;
        pr.waking = false;
        pr.spin_deadline = now + spin;
        let node = pr.node as usize;
        self.nodes[node]
            .sched
            .enqueue(pr.local, EnqueueReason::Woken);
        self.check_preempt(node, now, eng);
    }

    /// Raises `p`'s priority (`boost_to`; a blocked process is woken
    /// instead). With `boost_cap`, a process already boosted that many times
    /// since its node's last once-a-second ageing is left as it is.
    fn boost(&mut self, p: u32, now: u64, eng: &mut Engine<Ev>) {
        let node = self.procs[p as usize].node as usize;
        let local = self.procs[p as usize].local;
        let state = self.procs[p as usize].state;
        if matches!(state, ProcState::Ready | ProcState::Running) && self.boost_cap > 0 {
            let pr = &mut self.procs[p as usize];
            if pr.boosts_this_s >= self.boost_cap {
                self.counters.boosts_capped += 1;
                return;
            }
            pr.boosts_this_s += 1;
        }
        match state {
            ProcState::Ready => {
                self.counters.boosts += 1;
                self.nodes[node].sched.boost(local);
                self.check_preempt(node, now, eng);
            }
            ProcState::Running => {
                self.counters.boosts += 1;
                self.nodes[node].sched.boost(local);
                if self.boost_refreshes_quantum {
                    let c = self.running_cpu(p);
                    let q = self.nodes[node].sched.quantum(local);
                    self.cpus[c].quantum_end = self.quantum_end(node, now, q);
                    self.arm(c, now, eng);
                }
            }
            ProcState::Blocked => self.wake(p, now, eng),
            ProcState::Done => {}
        }
    }

    // ---- gang scheduling --------------------------------------------------

    fn gang_rotate(&mut self, now: u64, eng: &mut Engine<Ev>) {
        let done: Vec<bool> = self.jobs.iter().map(|j| j.left == 0).collect();
        let g = self.gang.as_mut().expect("gang mode");
        let change = g.rotate(|gid| !done[gid.0 as usize]);
        if change.is_same() {
            return;
        }
        if change.is_switch() {
            self.counters.slot_switches += 1;
        }
        for c in 0..self.cpus.len() {
            if self.cpus[c].running.is_some() {
                self.preempt(c, now, EnqueueReason::QuantumExpired);
            }
        }
        for c in 0..self.cpus.len() {
            self.gang_fill(c, now, eng);
        }
    }

    fn gang_fill(&mut self, c: usize, now: u64, eng: &mut Engine<Ev>) {
        let done: Vec<bool> = self.jobs.iter().map(|j| j.left == 0).collect();
        let g = self.gang.as_ref().expect("gang mode");
        let mut out = std::mem::take(&mut self.cells_out);
        g.running(|gid| !done[gid.0 as usize], &mut out);
        let njobs = self.jobs.len();
        let pick = out.get(c).copied().flatten().and_then(|cell| {
            let p = self.cell[c * njobs + cell.gang.0 as usize];
            (p != NONE && self.procs[p as usize].state == ProcState::Ready).then_some(p)
        });
        self.cells_out = out;
        match pick {
            Some(p) if self.cpus[c].running.is_none() => self.start(c, p, now, eng),
            _ => {}
        }
    }

    // ---- events -----------------------------------------------------------

    fn on_cpu_timer(&mut self, c: usize, now: u64, eng: &mut Engine<Ev>) {
        let Some(p) = self.cpus[c].running else {
            return;
        };
        self.settle(c, now);
        if now >= self.cpus[c].seg_start {
            let act = self.procs[p as usize].act;
            match act {
                Act::Spin { .. } => {
                    if self.try_receive(p, now) {
                        // The receive overhead runs next.
                    } else if self.spin_limited(&self.procs[p as usize])
                        && now >= self.procs[p as usize].spin_deadline
                    {
                        let scheme = self.dynamic.expect("spin limits are dynamic");
                        let pr = &mut self.procs[p as usize];
                        let Act::Spin { from } = pr.act else {
                            unreachable!()
                        };
                        match scheme.on_spin_expired() {
                            SpinExpiry::Block => pr.act = Act::BlockCall { from },
                            SpinExpiry::Yield => pr.act = Act::YieldCall { from },
                            SpinExpiry::KeepSpinning => {}
                        }
                        pr.left = self.sys;
                        if self.sys == 0 {
                            self.finish_act(c, p, now, eng);
                        }
                    }
                }
                Act::Done => {}
                _ => {
                    if self.procs[p as usize].left == 0 {
                        self.finish_act(c, p, now, eng);
                    }
                }
            }
        }
        if self.cpus[c].running == Some(p) && now >= self.cpus[c].quantum_end {
            let node = self.cpus[c].node as usize;
            let local = self.procs[p as usize].local;
            if self.nodes[node].sched.should_preempt(local) {
                self.preempt(c, now, EnqueueReason::QuantumExpired);
                self.dispatch(c, now, eng);
                return;
            }
            self.nodes[node].sched.continue_running(local);
            let q = self.nodes[node].sched.quantum(local);
            self.cpus[c].quantum_end = self.quantum_end(node, now, q);
        }
        if self.cpus[c].running.is_some() {
            self.arm(c, now, eng);
        }
    }

    fn on_arrival(&mut self, dest: u32, src: u32, seq: u32, now: u64, eng: &mut Engine<Ev>) {
        let pr = &mut self.procs[dest as usize];
        pr.inbox.push_back(Msg { src, seq });
        pr.pending += 1;
        pr.last_arrival = now;
        let node = pr.node as usize;
        if let (Some(scheme), true) = (self.dynamic, pr.started) {
            let view = EndpointView {
                state: pr.state,
                pending: pr.pending,
                last_arrival: Time(now),
            };
            let believed = pr.believed;
            let mut decision = scheme.on_arrival(&view, believed);
            if decision == ArrivalDecision::InterruptWake
                && scheme.has_periodic_boost()
                && !self.pb_sb_wake_interrupts
            {
                decision = ArrivalDecision::Deposit;
            }
            if decision.interrupts() {
                self.counters.interrupts += 1;
                self.counters.interrupt_ns += self.intr;
                self.interrupt(node, now, self.intr, eng);
            }
            match decision {
                ArrivalDecision::InterruptWake => {
                    if self.wake_loss > 0.0 && self.policy_rng.random::<f64>() < self.wake_loss {
                        self.counters.lost_wakeups += 1;
                    } else {
                        self.wake(dest, now, eng);
                    }
                }
                ArrivalDecision::InterruptBoost => self.boost(dest, now, eng),
                ArrivalDecision::InterruptOnly | ArrivalDecision::Deposit => {}
            }
        }
        let pr = &self.procs[dest as usize];
        if pr.state == ProcState::Running && matches!(pr.act, Act::Spin { .. }) {
            // The spinning receiver sees it at its next poll.
            let c = self.running_cpu(dest);
            self.arm(c, now, eng);
        }
    }

    fn running_cpu(&self, p: u32) -> usize {
        let c = self.procs[p as usize].cpu as usize;
        debug_assert_eq!(self.cpus[c].running, Some(p));
        c
    }

    fn on_boost_timer(&mut self, node: usize, now: u64, eng: &mut Engine<Ev>) {
        self.counters.timer_invocations += 1;
        if self.timer_cost > 0 {
            self.interrupt(node, now, self.timer_cost, eng);
        }
        self.fill_view(node);
        let view = std::mem::take(&mut self.view);
        let decision = self.nodes[node]
            .booster
            .as_mut()
            .and_then(|b| b.tick(&view));
        self.view = view;
        match decision {
            Some(BoostDecision::Wake(i)) => {
                let p = self.nodes[node].procs[i];
                self.wake(p, now, eng);
            }
            Some(BoostDecision::Boost(i)) => {
                let p = self.nodes[node].procs[i];
                self.boost(p, now, eng);
            }
            None => {}
        }
        eng.schedule_at(
            Time(now + self.boost_period),
            Ev::BoostTimerFired { node: node as u32 },
        );
    }

    fn on_probe(&mut self, now: u64, eng: &mut Engine<Ev>) {
        let node = self.probe_node as usize;
        let cpus = self.nodes[node].cpu0 as usize
            ..self.nodes[node].cpu0 as usize + self.cpus.len() / self.nodes.len();
        for c in cpus {
            self.account(c, now);
        }
        let row = std::mem::replace(&mut self.probe_acc, vec![0; self.jobs.len()]);
        self.probe_rows.push((now, row));
        eng.schedule_at(Time(now + self.probe), Ev::ProbeTicked);
    }

    fn on_second(&mut self, n: usize, now: u64, eng: &mut Engine<Ev>) {
        self.nodes[n].sched.on_second();
        if self.boost_cap > 0 {
            for &p in &self.nodes[n].procs {
                self.procs[p as usize].boosts_this_s = 0;
            }
        }
        if self.age_running {
            let cpus = self.nodes[n].cpu0 as usize
                ..self.nodes[n].cpu0 as usize + self.cpus.len() / self.nodes.len();
            for c in cpus {
                if let Some(p) = self.cpus[c].running {
                    let local = self.procs[p as usize].local;
                    self.nodes[n].sched.on_second_running(local);
                }
            }
        }
        self.check_preempt(n, now, eng);
        eng.schedule_at(
            Time(now + 1_000_000_000),
            Ev::SecondElapsed { node: n as u32 },
        );
    }

    /// Audits the invariants of the machine's state (tests).
    fn audit_state(&mut self) {
        let mut seen = vec![false; self.procs.len()];
        for c in &self.cpus {
            if let Some(p) = c.running {
                let pr = &self.procs[p as usize];
                if seen[p as usize] || pr.state != ProcState::Running {
                    self.counters.audit_failures += 1;
                }
                seen[p as usize] = true;
            }
        }
        for (i, pr) in self.procs.iter().enumerate() {
            if pr.state == ProcState::Running && !seen[i] {
                self.counters.audit_failures += 1;
            }
            if let NodeSched::Ts(ts) = &self.nodes[pr.node as usize].sched {
                if ts.level(ThreadId(pr.local)) > ts.table().top() {
                    self.counters.audit_failures += 1;
                }
            }
        }
    }
}

impl Model for ClusterMachine {
    type Event = Ev;
    type Error = ClusterError;

    fn handle(&mut self, ev: Ev, eng: &mut Engine<Ev>) -> Result<Flow, ClusterError> {
        let now = eng.now().0;
        if now > self.max_time {
            return Err(ClusterError::TimeLimit(
                self.max_time as f64 * 1e-9,
                self.jobs_left,
            ));
        }
        if eng.processed() & 0xFFFF == 0 {
            if let Some(c) = &self.cancel {
                if c.load(std::sync::atomic::Ordering::Relaxed) {
                    return Err(ClusterError::Interrupted);
                }
            }
        }
        match ev {
            Ev::CpuTimerFired { cpu } => self.on_cpu_timer(cpu as usize, now, eng),
            Ev::MessageArrived { dest, src, seq } => self.on_arrival(dest, src, seq, now, eng),
            Ev::BoostTimerFired { node } => self.on_boost_timer(node as usize, now, eng),
            Ev::WakeupDue { proc } => {
                let pr = &self.procs[proc as usize];
                if pr.state == ProcState::Blocked {
                    if !pr.waking {
                        self.counters.block_timeouts += 1;
                    }
                    self.make_ready(proc, now, eng);
                }
            }
            Ev::DaemonWoke { proc } => {
                if self.jobs_left > 0 {
                    let pr = &mut self.procs[proc as usize];
                    pr.act = Act::Daemon;
                    pr.left = self.daemon_run;
                    self.make_ready(proc, now, eng);
                }
            }
            Ev::NicSampled { node } => {
                for &p in &self.nodes[node as usize].procs {
                    let pr = &mut self.procs[p as usize];
                    pr.believed = pr.state == ProcState::Running;
                }
                eng.schedule_at(Time(now + self.nic_sample), Ev::NicSampled { node });
            }
            Ev::ProcStarted { proc } => {
                let pr = &mut self.procs[proc as usize];
                pr.state = ProcState::Ready;
                pr.started = true;
                let node = pr.node as usize;
                self.nodes[node].sched.enqueue(pr.local, EnqueueReason::New);
                self.check_preempt(node, now, eng);
            }
            Ev::SecondElapsed { node } => self.on_second(node as usize, now, eng),
            Ev::ProbeTicked => self.on_probe(now, eng),
            Ev::SlotEnded => {
                if self.jobs_left > 0 {
                    self.gang_rotate(now, eng);
                    eng.set_timer(self.slot_timer, Time(now + self.slot), Ev::SlotEnded);
                }
            }
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if self.audit {
            self.audit_state();
        }
        if self.jobs_left == 0 {
            // The last probe interval, cut at the end.
            let node = self.probe_node as usize;
            let cpus = self.nodes[node].cpu0 as usize
                ..self.nodes[node].cpu0 as usize + self.cpus.len() / self.nodes.len();
            for c in cpus {
                self.account(c, now);
            }
            let row = std::mem::replace(&mut self.probe_acc, vec![0; self.jobs.len()]);
            self.probe_rows.push((now, row));
            return Ok(Flow::Stop);
        }
        Ok(Flow::Continue)
    }
}
