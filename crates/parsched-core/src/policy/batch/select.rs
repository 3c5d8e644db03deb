//! A batch policy with full control: at each scheduling pass it returns a
//! [`Decision`] — which waiting jobs start now, which get a reservation (a
//! start time the machine then keeps), and when to be called again — and the
//! machine checks every part of it (`machines::batch::select` in the
//! simulator) before applying it.
//!
//! This is the protocol of pybatsim's `BatsimScheduler` (`execute_jobs`,
//! `wake_me_up_at`) and of Slurm's backfill plugin (a start now or a
//! reservation per job), with the checks neither performs: a start of a job
//! that is not waiting, does not fit, or delays a reservation the policy
//! holds is a [`Violation`] — an error, or (in repair mode) dropped and
//! recorded.
//!
//! Reservations are promises: a job reserved at `t` is started by the
//! machine at `t` (or, if running jobs overrun their requested times, as
//! soon as it fits), and no later start — the policy's or the machine's
//! backfilling — may delay it, computed from requested times. A reservation
//! stands until its job starts or the policy reserves the job again at
//! another time (or cancels it: `reserve` at `None`).

use serde::{Deserialize, Serialize};

/// What a policy decides at one pass. Jobs are named by their trace ids.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decision {
    /// Jobs to start now, in order.
    pub start: Vec<i64>,
    /// Reservations to make (`Some(t)`) or cancel (`None`).
    pub reserve: Vec<(i64, Option<u64>)>,
    /// Call the policy again at this time even if nothing happens.
    pub wake_at: Option<u64>,
}

impl Decision {
    pub fn clear(&mut self) {
        self.start.clear();
        self.reserve.clear();
        self.wake_at = None;
    }
}

/// What was wrong with a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    /// No job of the run has this id.
    UnknownJob,
    /// The job is running or has ended.
    NotWaiting,
    /// The job was not submitted yet.
    NotSubmitted,
    /// Started twice in one decision.
    Repeated,
    /// More processors than are free now.
    DoesNotFit,
    /// Starting it now would delay a reservation the policy holds.
    BreaksReservation,
    /// A reservation its job cannot have: in the past, or the processors
    /// are not free then for its requested time.
    BadReservation,
    /// `wake_at` not after now.
    WakeInPast,
    /// The policy raised, or returned something that is not a decision.
    Raised,
    /// The machine is idle enough for a waiting job, nothing will happen,
    /// and the policy does not start it: the run would never end.
    Stalled,
}

impl ViolationKind {
    /// The name in the violations table and in error messages.
    pub fn name(self) -> &'static str {
        match self {
            ViolationKind::UnknownJob => "unknown_job",
            ViolationKind::NotWaiting => "not_waiting",
            ViolationKind::NotSubmitted => "not_submitted",
            ViolationKind::Repeated => "repeated",
            ViolationKind::DoesNotFit => "does_not_fit",
            ViolationKind::BreaksReservation => "breaks_reservation",
            ViolationKind::BadReservation => "bad_reservation",
            ViolationKind::WakeInPast => "wake_in_past",
            ViolationKind::Raised => "raised",
            ViolationKind::Stalled => "stalled",
        }
    }
}

/// One bad part of a decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Violation {
    /// The pass's time.
    pub time: u64,
    /// The job concerned (its trace id), if any.
    pub job: Option<i64>,
    pub kind: ViolationKind,
    /// One line: what was asked and why it is not allowed.
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "t={}: {} ({})",
            self.time,
            self.message,
            self.kind.name()
        )
    }
}

/// What to do with a bad decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnViolation {
    /// Stop the run with the violation as the error.
    #[default]
    Strict,
    /// Drop the bad part, record it, go on.
    Repair,
}

/// A waiting job as a full-control policy sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitingJob {
    pub id: i64,
    pub submit: u64,
    pub requested: u64,
    pub procs: u32,
    pub user: i32,
    pub group: i32,
    pub queue: i32,
    pub partition: i32,
    /// Its reservation, if the policy holds one.
    pub reserved_at: Option<u64>,
}

/// A running job as a full-control policy sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartedJob {
    pub id: i64,
    pub procs: u32,
    pub start: u64,
    /// Start plus requested time.
    pub requested_end: u64,
}

/// What a full-control policy observes at a pass.
#[derive(Debug, Clone, Copy)]
pub struct SelectView<'a> {
    pub now: u64,
    pub total: u32,
    pub free: u32,
    /// In arrival order.
    pub queue: &'a [WaitingJob],
    pub running: &'a [StartedJob],
}

/// A policy with full control (written in Python: `select`, with the
/// optional `on_submit` / `on_complete` hooks).
pub trait SelectPolicy {
    /// The jobs submitted and the jobs completed since the last call (trace
    /// ids, batched per timestamp), before [`SelectPolicy::select`] at the
    /// same time. An error is the policy's message.
    fn observe(&mut self, _now: u64, _submitted: &[i64], _completed: &[i64]) -> Result<(), String> {
        Ok(())
    }
    /// Fills `out` (cleared) with the decision at this pass. An error is
    /// what went wrong: `raised E: message`, or `returned …; allowed: …`.
    fn select(&mut self, view: &SelectView<'_>, out: &mut Decision) -> Result<(), String>;
}
