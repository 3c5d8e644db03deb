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

mod build;
mod events;
mod fcs;
mod gang;
mod global;
mod implicit;
mod processes;
mod processors;

use super::config::{BoostQueue, ClusterConfig, JobPlan, LocalKind, PendingRule, Placement};
use super::TICKS_PER_S;
use crate::engine::{Engine, Flow, Model, Timer};
use crate::rng::{stream, Stream, StreamRng};
use fcs::FcsRun;
use gang::GangRef;
use global::Global;
use implicit::Implicit;
use parsched_core::policy::classify::Observation;
use parsched_core::policy::cosched::{
    choose_yield_target, ArrivalAction, ArrivalDecision, BoostChooser, BoostDecision,
    CoschedScheme, EndpointView, PeriodicBooster, ProcState, Scheme, SpinExpiry,
};
use parsched_core::policy::fair::{Fair, FairConfig};
use parsched_core::policy::fcs::{Fcs, FcsConfig, Role, Slot};
use parsched_core::policy::gang::{GangId, GangMatrix, SlotId};
use parsched_core::policy::gang_sched::{Admission, Cell, GangSchedOptions, GangScheduler};
use parsched_core::policy::local::{EnqueueReason, LocalScheduler, RoundRobin, Wakeup};
use parsched_core::policy::o1::{O1Config, O1};
use parsched_core::policy::ts::{DispatchTable, TimeSharing};
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
    /// A blocked process's timer fired: a late wake-up was delivered, or
    /// it timed out.
    WakeupTimerFired { proc: u32 },
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
    /// The driver's blocked flag: set on blocking, cleared on dispatch.
    in_driver: bool,
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
    /// A policy written outside the core gave an answer the machine
    /// refuses (the message names the node).
    #[error("{}", .0 .0)]
    Policy(parsched_core::PolicyError),
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

/// The cluster machine: nodes, processors, processes, and the global scheme
/// it is built from ([`Global`]).
pub(crate) struct ClusterMachine {
    /// The implicit-coscheduling scheme (`None`: the gang references).
    implicit: Option<Implicit>,
    pub(crate) programs: Vec<Arc<Program>>,
    pub procs: Vec<Proc>,
    nodes: Vec<Node>,
    cpus: Vec<Cpu>,
    jobs: Vec<JobState>,
    job_spin: Vec<u64>,
    /// The global scheme: none, the gang or FCFS reference, or FCS.
    pub(crate) global: Global,
    /// The gang and FCS slot's timer.
    slot_timer: Timer,
    // costs (ns)
    send_ov: u64,
    recv_ov: u64,
    wire: u64,
    per_byte: f64,
    ctx: u64,
    intr: u64,
    sys: u64,
    nic_sample: u64,
    wake_delay: u64,
    block_timeout: u64,
    slot: u64,
    tick: u64,
    probe: u64,
    probe_node: u32,
    max_time: u64,
    /// `max_events` (0 there: `u64::MAX`).
    max_events: u64,
    audit: bool,
    literal_pending: bool,
    age_running: bool,
    boost_refreshes_quantum: bool,
    boost_cap: u32,
    view: Vec<EndpointView>,
    pub counters: Counters,
    pub job_finish: Vec<Option<u64>>,
    /// CPU-share rows of the probed node: (time ns, ns used per job).
    pub probe_rows: Vec<(u64, Vec<u64>)>,
    probe_acc: Vec<u64>,
    jobs_left: u32,
    pub end: u64,
    pub error: Option<ClusterError>,
    /// The local schedulers measure time (the O(1) scheduler).
    timed: bool,
    /// SMT: processors `2i` and `2i + 1` are one core's hardware threads.
    smt: bool,
    /// SMT: each busy sibling's speed while the other is busy too.
    smt_speed: f64,
}

/// Microseconds in ticks ([`super::TICK`]: 1 ns).
fn us(x: f64) -> u64 {
    (x * 1e3).round() as u64
}

/// Milliseconds in ticks ([`super::TICK`]: 1 ns).
fn ms(x: f64) -> u64 {
    (x * 1e6).round() as u64
}

/// The cluster machine's refusal of a program that touches regions.
pub(super) const NO_CACHES: &str = "the cluster machine models no caches: programs that touch \
     regions (touch steps) need a machine with a cache model (parsched simulate regions)";

impl Model for ClusterMachine {
    type Event = Ev;
    type Error = ClusterError;

    fn handle(&mut self, ev: Ev, eng: &mut Engine<Ev>) -> Result<Flow, ClusterError> {
        self.step(ev, eng, None)
    }
}

/// The machine with the periodic boost's target chosen outside the core
/// (`BoostChooser`, e.g. a rule written in Python).
pub(crate) struct Hooked<'m, 'h> {
    pub m: &'m mut ClusterMachine,
    pub boost: &'h mut dyn BoostChooser,
}

impl Model for Hooked<'_, '_> {
    type Event = Ev;
    type Error = ClusterError;

    fn handle(&mut self, ev: Ev, eng: &mut Engine<Ev>) -> Result<Flow, ClusterError> {
        self.m.step(ev, eng, Some(&mut *self.boost))
    }
}

impl ClusterMachine {
    /// One event (`boost`: the periodic boost's chooser, if not the
    /// core's rule).
    fn step(
        &mut self,
        ev: Ev,
        eng: &mut Engine<Ev>,
        boost: Option<&mut dyn BoostChooser>,
    ) -> Result<Flow, ClusterError> {
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
        if eng.processed() > self.max_events {
            return Err(parsched_core::ConfigError::new(
                "max_events",
                format!(
                    "the run passed {} events at {:.3} s of simulated time with {} of its \
                     jobs unfinished",
                    self.max_events,
                    now as f64 * 1e-9,
                    self.jobs_left
                ),
                "fewer or shorter jobs (scale), or max_events=0 (or a larger limit) to run it \
                 anyway",
            )
            .into());
        }
        match ev {
            Ev::CpuTimerFired { cpu } => self.on_cpu_timer(cpu as usize, now, eng),
            Ev::MessageArrived { dest, src, seq } => self.on_arrival(dest, src, seq, now, eng),
            Ev::BoostTimerFired { node } => self.on_boost_timer(node as usize, now, eng, boost),
            Ev::WakeupTimerFired { proc } => {
                let pr = &self.procs[proc as usize];
                if pr.state == ProcState::Blocked {
                    if !pr.waking {
                        self.counters.block_timeouts += 1;
                    }
                    self.make_ready(proc, now, eng);
                }
            }
            Ev::DaemonWoke { proc } => self.on_daemon_woke(proc, now, eng),
            Ev::NicSampled { node } => self.on_nic_sampled(node, now, eng),
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
            Ev::SlotEnded => self.on_slot_ended(now, eng),
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if self.audit {
            self.audit_state();
        }
        if self.jobs_left == 0 {
            // The last probe interval, cut at the end.
            self.close_probe_interval(now);
            return Ok(Flow::Stop);
        }
        Ok(Flow::Continue)
    }
}
