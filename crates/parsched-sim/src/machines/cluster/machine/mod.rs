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
//! **SMT** (`smt_threads_per_core = 2`): processors `2i` and `2i + 1` are the
//! hardware threads of one core. While both run a process (whatever it does,
//! spinning included) each progresses at `smt_speed` of full speed; alone, at
//! full speed. A processor's `rate` holds since its `seg_start`: whenever a
//! sibling starts or stops running a process, the other is settled at its old
//! rate and its timer re-armed at the new one. Spinning and quanta are wall
//! time; only work (`left`) progresses at the rate.
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

mod events;
mod fcs;
mod gang;
mod processes;
mod processors;

use super::config::{BoostQueue, ClusterConfig, LocalKind, PendingRule, Placement};
use crate::engine::{Engine, Flow, Model, Timer};
use crate::rng::{stream, Stream, StreamRng};
use parsched_core::policy::classify::Observation;
use parsched_core::policy::cosched::{
    choose_yield_target, ArrivalDecision, BoostDecision, CoschedScheme, EndpointView,
    PeriodicBooster, ProcState, Scheme, SpinExpiry,
};
use parsched_core::policy::fair::{Fair, FairConfig};
use parsched_core::policy::fcs::{Fcs, Role};
use parsched_core::policy::gang::{GangId, GangMatrix, SlotId};
use parsched_core::policy::gang_sched::{Admission, Cell, GangSchedOptions, GangScheduler};
use parsched_core::policy::local::{EnqueueReason, LocalScheduler, RoundRobin, Wakeup};
use parsched_core::policy::o1::{O1Config, O1};
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
    /// Compute multiplier (seed 002's load imbalance).
    mult: f64,
    /// FCS: ready, but its row does not hold the slot (on no queue).
    parked: bool,
    /// Messages received.
    pub recv_n: u64,
}

enum NodeSched {
    Ts(TimeSharing),
    Rr(RoundRobin),
    O1(Box<O1>),
    Fair(Box<Fair>),
}

macro_rules! fwd {
    ($s:expr, $q:ident => $e:expr) => {
        match $s {
            NodeSched::Ts($q) => $e,
            NodeSched::Rr($q) => $e,
            NodeSched::O1($q) => $e,
            NodeSched::Fair($q) => $e,
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
    fn remove(&mut self, t: u32) -> bool {
        fwd!(self, q => q.remove(ThreadId(t)))
    }
    fn is_empty(&self) -> bool {
        fwd!(self, q => q.is_empty())
    }

    fn clock(&mut self, now: u64) {
        fwd!(self, q => q.clock(now))
    }
    fn charge(&mut self, t: u32, ns: u64) {
        fwd!(self, q => q.charge(ThreadId(t), ns))
    }
    fn blocked(&mut self, t: u32) {
        fwd!(self, q => q.blocked(ThreadId(t)))
    }
    pub(crate) fn level(&self, t: u32) -> u8 {
        match self {
            NodeSched::Ts(q) => q.level(ThreadId(t)),
            NodeSched::Rr(_) => 0,
            NodeSched::O1(q) => q.level(ThreadId(t)),
            NodeSched::Fair(q) => q.level(ThreadId(t)),
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
    /// FCS: ready fillers (processes), first come first served.
    fill: VecDeque<u32>,
}

struct Cpu {
    node: u32,
    running: Option<u32>,
    last: Option<u32>,
    seg_start: u64,
    quantum_end: u64,
    acct_since: u64,
    timer: Timer,
    /// SMT: the running process progresses at this fraction of full speed
    /// since `seg_start` (1 without SMT, or with an idle sibling).
    rate: f64,
}

struct JobState {
    base: u32,
    width: u32,
    left: u32,
    finish: Option<u64>,
    /// The run does not wait for it (a stressor).
    background: bool,
}

/// A job's counters at the start of the current FCS slot.
#[derive(Debug, Clone, Copy, Default)]
struct JobSnap {
    cpu: u64,
    spin: u64,
    comm: u64,
    recv: u64,
}

/// Flexible coscheduling's state in the machine.
pub(crate) struct FcsRun {
    pub policy: Fcs,
    /// F and DC jobs' spin time before blocking (ns).
    spin: Vec<u64>,
    snap: Vec<JobSnap>,
    slot_start: u64,
    /// Classes over simulated time: (s, job, class).
    pub changes: Vec<(f64, u32, parsched_core::policy::classify::CoschedClass)>,
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
    pub(crate) programs: Vec<Arc<Program>>,
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
    /// Flexible coscheduling (seed 002), when on.
    pub fcs: Option<FcsRun>,
    /// The local schedulers measure time (the O(1) scheduler).
    timed: bool,
    /// SMT: processors `2i` and `2i + 1` are one core's hardware threads.
    smt: bool,
    /// SMT: each busy sibling's speed while the other is busy too.
    smt_speed: f64,
}

/// The cluster machine's refusal of a program that touches regions.
pub(super) const NO_CACHES: &str = "the cluster machine models no caches: programs that touch \
     regions (touch steps) need a machine with a cache model (parsched simulate regions)";

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
        let plans = cfg.plans();
        let njobs = plans.len() as u32;
        let ncpus = cfg.nodes * cfg.cpus_per_node;
        let dynamic = match cfg.scheme {
            CoschedScheme::Dynamic(s) => Some(s),
            _ => None,
        };
        let programs: Vec<Arc<Program>> =
            plans.iter().map(|p| Arc::new(p.program.clone())).collect();
        for p in &programs {
            p.validate().map_err(ClusterError::Program)?;
            if p.touches_regions() {
                return Err(ClusterError::Program(NO_CACHES.into()));
            }
        }
        let boost_period = ms(cfg.boost_period_ms);
        let job_spin: Vec<u64> = plans
            .iter()
            .map(|a| {
                let s = us(a.spin_us);
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
                LocalKind::O1 => NodeSched::O1(Box::new(O1::new(O1Config {
                    sleep_bonus: cfg.o1_sleep_bonus,
                    ..O1Config::default()
                })?)),
                LocalKind::Fair => NodeSched::Fair(Box::new(Fair::new(FairConfig::default())?)),
            };
            nodes.push(Node {
                sched,
                procs: Vec::new(),
                cpu0: n * cfg.cpus_per_node,
                booster: dynamic.and_then(PeriodicBooster::new),
                yield_next: 0,
                tick_phase: 0,
                link_free: 0,
                fill: VecDeque::new(),
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
                rate: 1.0,
            });
        }
        // Gang placement comes from the matrix; otherwise rank r is on node
        // r mod N.
        let mut gang = None;
        let mut placement: Vec<Vec<u32>> = Vec::new();
        if dynamic.is_none() {
            let mut g =
                GangScheduler::new(GangMatrix::new(ncpus, None)?, GangSchedOptions::default());
            placement = vec![Vec::new(); njobs as usize];
            let admit = |g: &mut GangScheduler, j: u32, placement: &mut Vec<Vec<u32>>| {
                let width = plans[j as usize].width;
                match g.admit(GangId(j as u64), width) {
                    Ok(Admission::Placed(a)) => {
                        placement[j as usize] = a.procs.iter().map(|p| p.0).collect();
                        Ok(())
                    }
                    _ => Err(ClusterError::Program(format!(
                        "job {j} of width {width} does not fit the gang matrix"
                    ))),
                }
            };
            if cfg.gang_background_apart {
                // Foreground jobs first (first fit among themselves); their
                // rows' free cells are held by placeholders while the
                // background jobs are placed (rows of their own), then freed.
                for j in (0..njobs).filter(|&j| !plans[j as usize].background) {
                    admit(&mut g, j, &mut placement)?;
                }
                let mut holders = Vec::new();
                for s in 0..g.matrix().num_slots() {
                    let free = g.matrix().free_cells(SlotId(s));
                    if free > 0 {
                        let h = GangId(u64::MAX - s as u64);
                        let _ = g
                            .admit(h, free)
                            .map_err(|e| ClusterError::Program(e.to_string()))?;
                        holders.push(h);
                    }
                }
                for j in (0..njobs).filter(|&j| plans[j as usize].background) {
                    admit(&mut g, j, &mut placement)?;
                }
                for h in holders {
                    let _ = g
                        .finish(h)
                        .map_err(|e| ClusterError::Program(e.to_string()))?;
                }
            } else {
                for j in 0..njobs {
                    admit(&mut g, j, &mut placement)?;
                }
            }
            gang = Some(g);
        }
        let mut procs = Vec::new();
        let mut jobs = Vec::new();
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
            let plan = &plans[j as usize];
            let width = plan.width;
            jobs.push(JobState {
                base,
                width,
                left: width,
                finish: None,
                background: plan.background,
            });
            for r in 0..width {
                let node = match &gang {
                    Some(_) => {
                        let cpu = placement[j as usize][r as usize];
                        cell[(cpu * njobs + j) as usize] = base + r;
                        cpu / cfg.cpus_per_node
                    }
                    None => match cfg.placement {
                        Placement::Cyclic => r % cfg.nodes,
                        Placement::Block => {
                            (r as u64 * cfg.nodes as u64 / width as u64) as u32 % cfg.nodes
                        }
                    },
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
                    rng: stream(seed, Stream::ThreadDemand, plan.stream_key | r as u64),
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
                    mult: plan.mult[r as usize],
                    parked: false,
                    recv_n: 0,
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
                    mult: 1.0,
                    parked: false,
                    recv_n: 0,
                });
                let at = phase_rng.random_range(0..daemon_period);
                eng.schedule_at(Time(at), Ev::DaemonWoke { proc: id });
            }
        }
        let foreground = jobs.iter().filter(|j| !j.background).count() as u32;
        let fcs = match (&cfg.flexible, dynamic) {
            (Some(f), Some(_)) => Some(FcsRun {
                policy: Fcs::new(njobs as usize, *f)?,
                spin: job_spin.clone(),
                snap: vec![JobSnap::default(); njobs as usize],
                slot_start: 0,
                changes: Vec::new(),
            }),
            _ => None,
        };
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
            jobs_left: foreground,
            end: 0,
            error: None,
            cancel: None,
            fcs,
            timed: matches!(cfg.local, LocalKind::O1 | LocalKind::Fair),
            smt: cfg.smt_threads_per_core == 2,
            smt_speed: cfg.smt_speed,
        };
        if m.fcs.is_some() {
            for j in 0..m.jobs.len() {
                m.fcs_set_spin(j);
            }
        }
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
                        m.enqueue_proc(p, EnqueueReason::New);
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
            if m.fcs.is_some() {
                eng.set_timer(m.slot_timer, Time(m.slot), Ev::SlotEnded);
            }
        } else {
            m.gang_rotate(0, eng);
            if m.scheme == CoschedScheme::Gang {
                eng.set_timer(m.slot_timer, Time(m.slot), Ev::SlotEnded);
            }
        }
        Ok(m)
    }
}

impl Model for ClusterMachine {
    type Event = Ev;
    type Error = ClusterError;

    fn handle(&mut self, ev: Ev, eng: &mut Engine<Ev>) -> Result<Flow, ClusterError> {
        let now = eng.now().0;
        if self.timed {
            for n in &mut self.nodes {
                n.sched.clock(now);
            }
        }
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
                self.enqueue_proc(proc, EnqueueReason::New);
                self.check_preempt(node, now, eng);
            }
            Ev::SecondElapsed { node } => self.on_second(node as usize, now, eng),
            Ev::ProbeTicked => self.on_probe(now, eng),
            Ev::SlotEnded => {
                if self.jobs_left > 0 {
                    if self.fcs.is_some() {
                        self.fcs_rotate(now, true, None, eng);
                    } else {
                        self.gang_rotate(now, eng);
                    }
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
