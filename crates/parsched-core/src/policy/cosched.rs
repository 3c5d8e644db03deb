//! Communication-driven coscheduling on a network of workstations — Nagar,
//! Banerjee, Sivasubramaniam and Das, "A closer look at coscheduling
//! approaches for a network of workstations", SPAA 1999 (seed 003, §2 and
//! Table 1).
//!
//! Each scheme crosses **how a receiver waits** ([`WaitKind`]: busy wait,
//! spin-block, spin-yield) with **what happens when a message arrives**
//! ([`ArrivalAction`]: nothing, interrupt-and-boost (DCS), a periodic boost
//! (PB, PBT)). The ten evaluated combinations are [`Scheme::ALL`]; explicit
//! gang scheduling and batch FCFS are the references ([`CoschedScheme`]).
//!
//! The decisions are here, as functions of a view of one node's processes
//! ([`EndpointView`]); the machine (the cluster simulator, or the Linux
//! runtime later) applies them:
//!
//! * [`Scheme::on_arrival`]: does the network interface raise an interrupt
//!   for this message, and what does the interrupt handler do (wake, boost,
//!   nothing after re-verifying);
//! * [`Scheme::on_spin_expired`]: a receiver's spin time ran out (block, or
//!   yield: lower itself and boost another process with pending messages);
//! * [`PeriodicBooster::tick`]: the kernel timer function of PB, PBT and the
//!   PB combinations (which process to wake or boost, every 10 ms); its
//!   choice may come from a [`BoostChooser`] instead (a rule written in
//!   Python, `parsched.simulate_cosched(..., boost=f)`), checked by
//!   [`PeriodicBooster::tick_with`].
//!
//! **Pending messages.** A message counts as pending for PB, PBT and SY from
//! its arrival until its process next *polls* its endpoint (runs in a
//! receive), not until it is finally received: the literal reading lets PB
//! re-boost spinners whose messages are there but not yet asked for, which
//! starves the senders they wait for (docs/policies/cosched.md).

use crate::error::{ConfigError, PolicyError};
use crate::Time;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How a receiver waits for a message (Table 1's columns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitKind {
    /// Spin until the message arrives (poll the endpoint).
    Busy,
    /// Spin for the spin time, then block in the driver until the interface
    /// interrupts on the message's arrival (Solaris' wake-up raises it to the
    /// level's sleep-return priority).
    SpinBlock,
    /// Spin for the spin time, then lower its own priority, boost another
    /// process with pending messages, and keep spinning.
    SpinYield,
}

/// What happens when a message arrives (Table 1's rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalAction {
    /// Nothing: the interface deposits the message (an interrupt is raised
    /// only to wake a blocked receiver, for spin-block).
    None,
    /// Dynamic coscheduling: interrupt when the destination is not the
    /// process the interface believes is running; the handler boosts it.
    Dcs,
    /// Periodic boost: a kernel timer scans endpoints round robin and boosts
    /// the first process with a pending message.
    Pb,
    /// Periodic boost with timestamps: the timer boosts the process holding
    /// the most recently arrived pending message.
    Pbt,
}

/// One of the ten schemes of Table 1 (PBT counted separately).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Scheme {
    pub wait: WaitKind,
    pub arrival: ArrivalAction,
}

/// A scheme, or a reference schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CoschedScheme {
    /// A dynamic coscheduling scheme on independent local schedulers.
    Dynamic(Scheme),
    /// Explicit gang scheduling (Ousterhout's matrix, global slots).
    Gang,
    /// Batch: one job at a time on all nodes, first come first served.
    Fcfs,
}

impl Scheme {
    pub const LOCAL: Scheme = Scheme::new(WaitKind::Busy, ArrivalAction::None);
    pub const SB: Scheme = Scheme::new(WaitKind::SpinBlock, ArrivalAction::None);
    pub const SY: Scheme = Scheme::new(WaitKind::SpinYield, ArrivalAction::None);
    pub const DCS: Scheme = Scheme::new(WaitKind::Busy, ArrivalAction::Dcs);
    pub const DCS_SB: Scheme = Scheme::new(WaitKind::SpinBlock, ArrivalAction::Dcs);
    pub const DCS_SY: Scheme = Scheme::new(WaitKind::SpinYield, ArrivalAction::Dcs);
    pub const PB: Scheme = Scheme::new(WaitKind::Busy, ArrivalAction::Pb);
    pub const PBT: Scheme = Scheme::new(WaitKind::Busy, ArrivalAction::Pbt);
    pub const PB_SB: Scheme = Scheme::new(WaitKind::SpinBlock, ArrivalAction::Pb);
    pub const PB_SY: Scheme = Scheme::new(WaitKind::SpinYield, ArrivalAction::Pb);

    /// The ten schemes in the order of the paper's Table 3.
    pub const ALL: [Scheme; 10] = [
        Scheme::LOCAL,
        Scheme::SB,
        Scheme::DCS,
        Scheme::DCS_SB,
        Scheme::PB,
        Scheme::PBT,
        Scheme::PB_SB,
        Scheme::SY,
        Scheme::DCS_SY,
        Scheme::PB_SY,
    ];

    pub const fn new(wait: WaitKind, arrival: ArrivalAction) -> Scheme {
        Scheme { wait, arrival }
    }

    /// The paper's name (`Local`, `SB`, …, `PB-SY`).
    pub const fn name(self) -> &'static str {
        use ArrivalAction as A;
        use WaitKind as W;
        match (self.arrival, self.wait) {
            (A::None, W::Busy) => "Local",
            (A::None, W::SpinBlock) => "SB",
            (A::None, W::SpinYield) => "SY",
            (A::Dcs, W::Busy) => "DCS",
            (A::Dcs, W::SpinBlock) => "DCS-SB",
            (A::Dcs, W::SpinYield) => "DCS-SY",
            (A::Pb, W::Busy) => "PB",
            (A::Pbt, W::Busy) => "PBT",
            (A::Pb, W::SpinBlock) => "PB-SB",
            (A::Pb, W::SpinYield) => "PB-SY",
            (A::Pbt, W::SpinBlock) => "PBT-SB",
            (A::Pbt, W::SpinYield) => "PBT-SY",
        }
    }

    /// Whether receivers ever stop busy waiting after a spin time.
    pub fn spins_then_acts(self) -> bool {
        self.wait != WaitKind::Busy
    }

    /// Whether a periodic boost timer runs on every node.
    pub fn has_periodic_boost(self) -> bool {
        matches!(self.arrival, ArrivalAction::Pb | ArrivalAction::Pbt)
    }

    /// The network interface's decision for a message arriving for `dest`
    /// (see [`ArrivalDecision`]). `believed_running` is the interface's
    /// sampled idea of whether `dest` runs on its host.
    pub fn on_arrival(self, dest: &EndpointView, believed_running: bool) -> ArrivalDecision {
        let blocked = dest.state == ProcState::Blocked;
        match self.arrival {
            // Spin-block's library registers a wake-up with the interface
            // when it blocks; DCS-SB's interface also interrupts for it.
            _ if blocked && self.wait == WaitKind::SpinBlock => ArrivalDecision::InterruptWake,
            ArrivalAction::Dcs if !believed_running => {
                if dest.state == ProcState::Running {
                    // The handler re-verifies and finds it running.
                    ArrivalDecision::InterruptOnly
                } else {
                    ArrivalDecision::InterruptBoost
                }
            }
            _ => ArrivalDecision::Deposit,
        }
    }

    /// A receiver's spin time ran out without a message.
    pub fn on_spin_expired(self) -> SpinExpiry {
        match self.wait {
            WaitKind::Busy => SpinExpiry::KeepSpinning,
            WaitKind::SpinBlock => SpinExpiry::Block,
            WaitKind::SpinYield => SpinExpiry::Yield,
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Table 1's schemes' names ([`Scheme::ALL`], in its order).
pub const TABLE1_NAMES: [&str; Scheme::ALL.len()] = {
    let mut out = [""; Scheme::ALL.len()];
    let mut i = 0;
    while i < Scheme::ALL.len() {
        out[i] = Scheme::ALL[i].name();
        i += 1;
    }
    out
};

/// Every scheme name a configuration accepts: Table 1's schemes
/// ([`TABLE1_NAMES`]), then the references `gang` and `fcfs`.
pub const SCHEME_NAMES: [&str; Scheme::ALL.len() + 2] = {
    let mut out = [""; Scheme::ALL.len() + 2];
    let mut i = 0;
    while i < TABLE1_NAMES.len() {
        out[i] = TABLE1_NAMES[i];
        i += 1;
    }
    out[i] = "gang";
    out[i + 1] = "fcfs";
    out
};

impl CoschedScheme {
    /// Every accepted name, for error messages ([`SCHEME_NAMES`]).
    pub fn names() -> String {
        SCHEME_NAMES.join(", ")
    }

    pub fn name(self) -> &'static str {
        match self {
            CoschedScheme::Dynamic(s) => s.name(),
            CoschedScheme::Gang => "gang",
            CoschedScheme::Fcfs => "fcfs",
        }
    }
}

impl fmt::Display for CoschedScheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for CoschedScheme {
    type Err = ConfigError;
    /// Case-insensitive; `_` and `-` are the same.
    fn from_str(s: &str) -> Result<CoschedScheme, ConfigError> {
        let key = s.trim().to_ascii_uppercase().replace('_', "-");
        match key.as_str() {
            "GANG" => return Ok(CoschedScheme::Gang),
            "FCFS" | "BATCH" => return Ok(CoschedScheme::Fcfs),
            _ => {}
        }
        Scheme::ALL
            .iter()
            .chain(&[
                Scheme::new(WaitKind::SpinBlock, ArrivalAction::Pbt),
                Scheme::new(WaitKind::SpinYield, ArrivalAction::Pbt),
            ])
            .find(|x| x.name().eq_ignore_ascii_case(&key))
            .map(|&x| CoschedScheme::Dynamic(x))
            .ok_or_else(|| {
                ConfigError::new(
                    "scheme",
                    format!("unknown scheme {:?}", crate::clip(s, crate::ECHO_MAX)),
                    CoschedScheme::names(),
                )
            })
    }
}

impl Serialize for CoschedScheme {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for CoschedScheme {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Where a process is, as its node sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProcState {
    /// On a processor.
    Running,
    /// On the run queue.
    #[default]
    Ready,
    /// Asleep in the driver (spin-block), waiting for a wake-up.
    Blocked,
    /// Finished.
    Done,
}

/// What the coscheduling policy sees of one process's endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EndpointView {
    pub state: ProcState,
    /// Messages arrived since the process last polled its endpoint.
    pub pending: u32,
    /// When the most recent of them arrived (meaningful if `pending > 0`).
    pub last_arrival: Time,
    /// The driver's own "blocked" flag: set when the process goes to sleep
    /// in the driver's ioctl, cleared only when it runs again (so it stays
    /// set between a wake-up and the process's next dispatch).
    pub in_driver: bool,
}

/// The network interface's decision on an arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrivalDecision {
    /// Deposit the message in the endpoint; no interrupt.
    Deposit,
    /// Interrupt; the handler wakes the blocked destination.
    InterruptWake,
    /// Interrupt; the handler boosts the destination.
    InterruptBoost,
    /// Interrupt; the handler finds the destination running and does
    /// nothing (the interface's idea was stale).
    InterruptOnly,
}

impl ArrivalDecision {
    pub fn interrupts(self) -> bool {
        self != ArrivalDecision::Deposit
    }
}

/// What a receiver does when its spin time runs out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpinExpiry {
    KeepSpinning,
    /// Block in the driver until a message wakes it.
    Block,
    /// Lower its own priority, boost [`choose_yield_target`]'s choice, spin on.
    Yield,
}

/// The periodic boost's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoostDecision {
    /// Wake the blocked process (PB-SB's timer does this first).
    Wake(usize),
    /// Raise the process to the top priority.
    Boost(usize),
}

/// The kernel timer function of PB and PBT (one per node). Endpoints are
/// indexed by the node's process order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeriodicBooster {
    kind: ArrivalAction,
    wake_blocked_first: bool,
    /// The running process is never the target (the paper's timer "boosts
    /// the first with an unconsumed message", which only makes sense for a
    /// process that is not on the processor). Default off: it may be.
    skip_running: bool,
    /// PB-SB's "sleeping (blocked)" is the driver's flag
    /// ([`EndpointView::in_driver`]): a process already woken but not yet
    /// back on a processor still counts, and waking it again uses the
    /// timer's turn without effect.
    wake_by_driver_flag: bool,
    /// Round robin: the scan starts after the last endpoint boosted.
    next: usize,
}

impl PeriodicBooster {
    /// The timer of `scheme` (`None` unless it has a periodic boost).
    pub fn new(scheme: Scheme) -> Option<PeriodicBooster> {
        scheme.has_periodic_boost().then_some(PeriodicBooster {
            kind: scheme.arrival,
            wake_blocked_first: scheme.wait == WaitKind::SpinBlock,
            skip_running: false,
            wake_by_driver_flag: false,
            next: 0,
        })
    }

    /// With `skip`, the running process is never chosen (the cosched
    /// model's `pb_skip_running`); default: any live process with a
    /// pending message may be, the running one included.
    pub fn with_skip_running(mut self, skip: bool) -> PeriodicBooster {
        self.skip_running = skip;
        self
    }

    /// With `flag`, PB-SB's timer takes "sleeping (blocked)" to be the
    /// driver's flag ([`EndpointView::in_driver`]) rather than the
    /// dispatcher's state (the cosched model's `pb_sb_driver_flag`).
    pub fn with_wake_by_driver_flag(mut self, flag: bool) -> PeriodicBooster {
        self.wake_by_driver_flag = flag;
        self
    }

    /// One invocation. PB: scanning round robin from after the last boosted
    /// endpoint, the first process with a pending message. PBT: the process
    /// whose pending message arrived last (ties: the lowest index). With
    /// spin-block, a blocked process with pending messages is woken first
    /// (chosen the same way among the blocked). Finished processes and
    /// processes without pending messages are never chosen, nor the running
    /// one with [`PeriodicBooster::with_skip_running`].
    pub fn tick(&mut self, view: &[EndpointView]) -> Option<BoostDecision> {
        let n = view.len();
        if n == 0 {
            return None;
        }
        let skip_running = self.skip_running;
        let eligible = |v: &EndpointView| {
            v.pending > 0
                && v.state != ProcState::Done
                && !(skip_running && v.state == ProcState::Running)
        };
        let by_flag = self.wake_by_driver_flag;
        let asleep = |v: &EndpointView| {
            if by_flag {
                v.in_driver
            } else {
                v.state == ProcState::Blocked
            }
        };
        let pick = |only_blocked: bool, next: usize| -> Option<usize> {
            let ok = |v: &EndpointView| eligible(v) && (!only_blocked || asleep(v));
            match self.kind {
                ArrivalAction::Pbt => {
                    let mut best: Option<usize> = None;
                    for (i, v) in view.iter().enumerate() {
                        if ok(v) && best.is_none_or(|b| v.last_arrival > view[b].last_arrival) {
                            best = Some(i);
                        }
                    }
                    best
                }
                _ => (0..n).map(|k| (next + k) % n).find(|&i| ok(&view[i])),
            }
        };
        if self.wake_blocked_first {
            if let Some(i) = pick(true, self.next) {
                self.next = (i + 1) % n;
                return Some(BoostDecision::Wake(i));
            }
        }
        let i = pick(false, self.next)?;
        self.next = (i + 1) % n;
        Some(BoostDecision::Boost(i))
    }
}

/// What a [`BoostChooser`] sees on one invocation of a node's boost timer:
/// exactly what [`PeriodicBooster::tick`] looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoostView<'a> {
    pub node: usize,
    pub now: Time,
    /// The node's processes' endpoints, in the node's process order (a
    /// process not launched yet shows as [`ProcState::Done`]).
    pub endpoints: &'a [EndpointView],
    /// PB's round robin: the scan starts here, one past the endpoint the
    /// timer last chose (0 before the first choice).
    pub next: usize,
    /// The built-in timer never chooses the running process (the
    /// configuration's `pb_skip_running`): for a rule that follows it.
    pub skip_running: bool,
}

/// The periodic boost's choice of target written outside the core: an
/// endpoint index of the view, or `None` (nobody this time). The core turns
/// it into a wake-up (a sleeping target under spin-block) or a boost. An
/// `Err` is the policy's own failure (it raised, or answered something that
/// is not an index).
pub trait BoostChooser {
    fn choose(&mut self, view: &BoostView) -> Result<Option<usize>, String>;
}

impl PeriodicBooster {
    /// [`PeriodicBooster::tick`] with the target chosen by `chooser`. The
    /// core checks the answer (an index of the node's endpoints whose
    /// process is live) and decides how it applies: with spin-block a
    /// sleeping target is woken (as PB-SB's timer wakes first), any other
    /// is boosted. The round robin moves past the target either way. An
    /// error is one line naming the node.
    pub fn tick_with(
        &mut self,
        chooser: &mut dyn BoostChooser,
        node: usize,
        now: Time,
        view: &[EndpointView],
    ) -> Result<Option<BoostDecision>, PolicyError> {
        let v = BoostView {
            node,
            now,
            endpoints: view,
            next: self.next,
            skip_running: self.skip_running,
        };
        let fail = |what: String| PolicyError(format!("boost on node {node}: {what}"));
        let Some(i) = chooser.choose(&v).map_err(fail)? else {
            return Ok(None);
        };
        let n = view.len();
        if i >= n {
            return Err(fail(format!(
                "endpoint {i} is out of range; allowed: 0..{n} (the node's processes) or None"
            )));
        }
        if view[i].state == ProcState::Done {
            return Err(fail(format!(
                "endpoint {i} has no live process (finished or not launched); allowed: a \
                 live process's endpoint or None"
            )));
        }
        self.next = (i + 1) % n;
        let asleep = if self.wake_by_driver_flag {
            view[i].in_driver
        } else {
            view[i].state == ProcState::Blocked
        };
        Ok(Some(if self.wake_blocked_first && asleep {
            BoostDecision::Wake(i)
        } else {
            BoostDecision::Boost(i)
        }))
    }
}

/// Spin-yield's choice of whom to boost when `yielder` gives up: the next
/// process after `*next` (round robin) with a pending message that is not
/// the yielder, running or finished; `*next` moves past it.
pub fn choose_yield_target(
    view: &[EndpointView],
    yielder: usize,
    next: &mut usize,
) -> Option<usize> {
    let n = view.len();
    let found = (0..n).map(|k| (*next + k) % n).find(|&i| {
        i != yielder
            && view[i].pending > 0
            && matches!(view[i].state, ProcState::Ready | ProcState::Blocked)
    })?;
    *next = (found + 1) % n;
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// PB's (and PB-SB's) rule from the view alone, as a user would write
    /// it: round robin from `next`, the first live process with a pending
    /// message (a sleeping one first under spin-block).
    struct PbRule {
        wake_first: bool,
    }

    impl BoostChooser for PbRule {
        fn choose(&mut self, v: &BoostView) -> Result<Option<usize>, String> {
            let n = v.endpoints.len();
            let ok = |i: usize, asleep: bool| {
                let e = &v.endpoints[i];
                e.pending > 0
                    && e.state != ProcState::Done
                    && (!asleep || e.state == ProcState::Blocked)
            };
            let scan = |asleep: bool| (0..n).map(|k| (v.next + k) % n).find(|&i| ok(i, asleep));
            Ok(self
                .wake_first
                .then(|| scan(true))
                .flatten()
                .or_else(|| scan(false)))
        }
    }

    proptest! {
        /// A chooser written from the view reproduces PB's and PB-SB's
        /// timer decision for decision, round robin included.
        #[test]
        fn a_chooser_from_the_view_is_the_built_in_timer(
            ticks in proptest::collection::vec(
                proptest::collection::vec((state(), 0u32..3), 5), 1..30),
            sb in any::<bool>(),
        ) {
            let scheme = if sb { Scheme::PB_SB } else { Scheme::PB };
            let mut built_in = PeriodicBooster::new(scheme).unwrap();
            let mut hooked = PeriodicBooster::new(scheme).unwrap();
            let mut rule = PbRule { wake_first: sb };
            for t in ticks {
                let v5: Vec<EndpointView> = t.iter().map(|&(s, p)| v(s, p, 0)).collect();
                let want = built_in.tick(&v5);
                let got = hooked.tick_with(&mut rule, 0, Time(0), &v5).unwrap();
                prop_assert_eq!(want, got);
            }
        }
    }

    #[test]
    fn bad_boost_answers_are_errors_naming_the_node() {
        struct Fixed(Option<usize>);
        impl BoostChooser for Fixed {
            fn choose(&mut self, _: &BoostView) -> Result<Option<usize>, String> {
                Ok(self.0)
            }
        }
        let view = [v(ProcState::Ready, 1, 5), v(ProcState::Done, 0, 0)];
        let mut b = PeriodicBooster::new(Scheme::PB).unwrap();
        let e = b
            .tick_with(&mut Fixed(Some(2)), 3, Time(0), &view)
            .unwrap_err()
            .0;
        assert_eq!(
            e,
            "boost on node 3: endpoint 2 is out of range; allowed: 0..2 (the node's \
             processes) or None"
        );
        let e = b
            .tick_with(&mut Fixed(Some(1)), 3, Time(0), &view)
            .unwrap_err()
            .0;
        assert!(
            e.starts_with("boost on node 3: endpoint 1 has no live process"),
            "{e}"
        );
        assert_eq!(b.tick_with(&mut Fixed(None), 3, Time(0), &view), Ok(None));
        // any live process may be the target, even without a pending message
        let view = [v(ProcState::Ready, 0, 5), v(ProcState::Blocked, 0, 0)];
        assert_eq!(
            b.tick_with(&mut Fixed(Some(1)), 3, Time(0), &view),
            Ok(Some(BoostDecision::Boost(1)))
        );
        let mut sb = PeriodicBooster::new(Scheme::PB_SB).unwrap();
        assert_eq!(
            sb.tick_with(&mut Fixed(Some(1)), 3, Time(0), &view),
            Ok(Some(BoostDecision::Wake(1)))
        );
    }

    fn v(state: ProcState, pending: u32, last: u64) -> EndpointView {
        EndpointView {
            state,
            pending,
            last_arrival: Time(last),
            in_driver: state == ProcState::Blocked,
        }
    }

    /// PB-SB with the driver's flag: a process woken but not yet run still
    /// counts as sleeping, so the timer's turn goes to it (a wake without
    /// effect) and nobody is boosted; by the dispatcher's state it is
    /// passed over and the timer boosts.
    #[test]
    fn pb_sb_timer_by_the_drivers_flag_spends_its_turn_on_a_woken_process() {
        let woken = EndpointView {
            in_driver: true,
            ..v(ProcState::Ready, 1, 40)
        };
        let view = [v(ProcState::Ready, 2, 90), woken];
        let mut by_state = PeriodicBooster::new(Scheme::PB_SB).unwrap();
        assert_eq!(by_state.tick(&view), Some(BoostDecision::Boost(0)));
        let mut by_flag = PeriodicBooster::new(Scheme::PB_SB)
            .unwrap()
            .with_wake_by_driver_flag(true);
        assert_eq!(by_flag.tick(&view), Some(BoostDecision::Wake(1)));
        // Without pending messages the flag alone does not make a target.
        let quiet = [
            v(ProcState::Ready, 2, 90),
            EndpointView {
                pending: 0,
                ..woken
            },
        ];
        assert_eq!(by_flag.tick(&quiet), Some(BoostDecision::Boost(0)));
        // PB (no spin-block) never wakes, flag or not.
        let mut pb = PeriodicBooster::new(Scheme::PB)
            .unwrap()
            .with_wake_by_driver_flag(true);
        assert!(matches!(pb.tick(&view), Some(BoostDecision::Boost(_))));
    }

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for s in Scheme::ALL {
            let parsed: CoschedScheme = s.name().parse().unwrap();
            assert_eq!(parsed, CoschedScheme::Dynamic(s));
            let lower: CoschedScheme = s.name().to_lowercase().replace('-', "_").parse().unwrap();
            assert_eq!(lower, CoschedScheme::Dynamic(s));
        }
        assert_eq!(
            "gang".parse::<CoschedScheme>().unwrap(),
            CoschedScheme::Gang
        );
        assert_eq!(
            "FCFS".parse::<CoschedScheme>().unwrap(),
            CoschedScheme::Fcfs
        );
        let e = "PBX".parse::<CoschedScheme>().unwrap_err();
        assert_eq!(e.field, "scheme");
        assert!(e.allowed.contains("PB-SY"));
        let names: std::collections::HashSet<_> = Scheme::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(names.len(), 10);
    }

    #[test]
    fn arrival_decisions_follow_table_1() {
        let ready = v(ProcState::Ready, 0, 0);
        let running = v(ProcState::Running, 0, 0);
        let blocked = v(ProcState::Blocked, 0, 0);
        use ArrivalDecision as D;
        assert_eq!(Scheme::LOCAL.on_arrival(&ready, false), D::Deposit);
        assert_eq!(Scheme::PB.on_arrival(&ready, false), D::Deposit);
        assert_eq!(Scheme::SB.on_arrival(&blocked, false), D::InterruptWake);
        assert_eq!(Scheme::SB.on_arrival(&ready, false), D::Deposit);
        assert_eq!(Scheme::PB_SB.on_arrival(&blocked, false), D::InterruptWake);
        assert_eq!(Scheme::DCS.on_arrival(&ready, false), D::InterruptBoost);
        assert_eq!(Scheme::DCS.on_arrival(&ready, true), D::Deposit);
        assert_eq!(Scheme::DCS.on_arrival(&running, false), D::InterruptOnly);
        assert_eq!(Scheme::DCS_SB.on_arrival(&blocked, true), D::InterruptWake);
        assert_eq!(Scheme::DCS_SY.on_arrival(&ready, false), D::InterruptBoost);
        assert_eq!(Scheme::SY.on_spin_expired(), SpinExpiry::Yield);
        assert_eq!(Scheme::DCS_SB.on_spin_expired(), SpinExpiry::Block);
        assert_eq!(Scheme::PBT.on_spin_expired(), SpinExpiry::KeepSpinning);
    }

    #[test]
    fn pb_scans_round_robin_and_pbt_takes_the_latest() {
        let view = [
            v(ProcState::Ready, 1, 50),
            v(ProcState::Ready, 0, 0),
            v(ProcState::Ready, 2, 90),
            v(ProcState::Running, 1, 10),
        ];
        let mut pb = PeriodicBooster::new(Scheme::PB).unwrap();
        assert_eq!(pb.tick(&view), Some(BoostDecision::Boost(0)));
        assert_eq!(pb.tick(&view), Some(BoostDecision::Boost(2)));
        assert_eq!(pb.tick(&view), Some(BoostDecision::Boost(3)));
        assert_eq!(pb.tick(&view), Some(BoostDecision::Boost(0)));
        let mut pbt = PeriodicBooster::new(Scheme::PBT).unwrap();
        assert_eq!(pbt.tick(&view), Some(BoostDecision::Boost(2)));
        assert_eq!(pbt.tick(&view), Some(BoostDecision::Boost(2)));
        assert!(PeriodicBooster::new(Scheme::DCS).is_none());
        let none = [v(ProcState::Ready, 0, 0), v(ProcState::Done, 3, 9)];
        assert_eq!(pb.tick(&none), None);
    }

    /// The paper's timer "examines the endpoints … and boosts the first with
    /// an unconsumed message": with `skip_running` the process on the
    /// processor is passed over (PB and PBT), by default it is not.
    #[test]
    fn the_timer_can_skip_the_running_process() {
        let view = [
            v(ProcState::Running, 2, 90),
            v(ProcState::Ready, 1, 50),
            v(ProcState::Blocked, 0, 0),
        ];
        let mut pb = PeriodicBooster::new(Scheme::PB).unwrap();
        assert_eq!(pb.tick(&view), Some(BoostDecision::Boost(0)));
        let mut pb = pb.with_skip_running(true);
        assert_eq!(pb.tick(&view), Some(BoostDecision::Boost(1)));
        assert_eq!(pb.tick(&view), Some(BoostDecision::Boost(1)));
        let mut pbt = PeriodicBooster::new(Scheme::PBT).unwrap();
        assert_eq!(pbt.tick(&view), Some(BoostDecision::Boost(0)));
        let mut pbt = pbt.with_skip_running(true);
        assert_eq!(pbt.tick(&view), Some(BoostDecision::Boost(1)));
        let alone = [v(ProcState::Running, 3, 10), v(ProcState::Ready, 0, 0)];
        assert_eq!(pbt.tick(&alone), None);
    }

    #[test]
    fn pb_sb_wakes_blocked_processes_first() {
        let view = [v(ProcState::Ready, 1, 50), v(ProcState::Blocked, 1, 10)];
        let mut pbsb = PeriodicBooster::new(Scheme::PB_SB).unwrap();
        assert_eq!(pbsb.tick(&view), Some(BoostDecision::Wake(1)));
        let mut pb = PeriodicBooster::new(Scheme::PB).unwrap();
        assert_eq!(pb.tick(&view), Some(BoostDecision::Boost(0)));
    }

    #[test]
    fn spin_yield_boosts_another_waiting_process() {
        let view = [
            v(ProcState::Running, 1, 0),
            v(ProcState::Ready, 0, 0),
            v(ProcState::Ready, 1, 0),
        ];
        let mut next = 0;
        assert_eq!(choose_yield_target(&view, 0, &mut next), Some(2));
        assert_eq!(next, 0);
        assert_eq!(choose_yield_target(&view, 2, &mut next), None);
    }

    fn state() -> impl Strategy<Value = ProcState> {
        prop_oneof![
            Just(ProcState::Running),
            Just(ProcState::Ready),
            Just(ProcState::Blocked),
            Just(ProcState::Done)
        ]
    }

    proptest! {
        /// The timer only ever picks a live process with a pending message;
        /// it picks someone whenever one exists; PB visits every eligible
        /// endpoint within n ticks; PBT's pick holds the latest arrival.
        #[test]
        fn the_periodic_boost_is_fair_and_never_boosts_without_a_message(
            raw in prop::collection::vec((state(), 0u32..3, 0u64..100), 1..9),
            scheme in prop::sample::select(vec![Scheme::PB, Scheme::PBT, Scheme::PB_SB, Scheme::PB_SY]),
            skip in any::<bool>(),
        ) {
            let view: Vec<EndpointView> = raw.iter().map(|&(s, p, t)| v(s, p, t)).collect();
            let eligible: Vec<usize> = (0..view.len())
                .filter(|&i| view[i].pending > 0 && view[i].state != ProcState::Done)
                .filter(|&i| !(skip && view[i].state == ProcState::Running))
                .collect();
            let mut b = PeriodicBooster::new(scheme).unwrap().with_skip_running(skip);
            let mut seen = std::collections::HashSet::new();
            for _ in 0..view.len() {
                let d = b.tick(&view);
                prop_assert_eq!(d.is_some(), !eligible.is_empty());
                if let Some(d) = d {
                    let i = match d { BoostDecision::Wake(i) | BoostDecision::Boost(i) => i };
                    prop_assert!(eligible.contains(&i));
                    if let BoostDecision::Wake(_) = d {
                        prop_assert_eq!(view[i].state, ProcState::Blocked);
                        prop_assert_eq!(scheme.wait, WaitKind::SpinBlock);
                    }
                    if scheme.arrival == ArrivalAction::Pbt {
                        let latest = eligible.iter().map(|&j| view[j].last_arrival).max().unwrap();
                        if matches!(d, BoostDecision::Boost(_)) {
                            prop_assert_eq!(view[i].last_arrival, latest);
                        }
                    }
                    seen.insert(i);
                }
            }
            if scheme == Scheme::PB {
                prop_assert_eq!(seen.len(), eligible.len());
            }
        }
    }
}
