//! Batch space-sharing of rigid jobs: first-come first-served, EASY
//! backfilling and conservative backfilling.
//!
//! * **FCFS**: queued jobs start in arrival order; the first job that does not
//!   fit blocks every job behind it.
//! * **EASY backfilling** — D. Lifka, "The ANL/IBM SP scheduling system",
//!   JSSPP 1995; as specified by A. Mu'alem and D. Feitelson, "Utilization,
//!   predictability, workloads, and user runtime estimates in scheduling the
//!   IBM SP2 with backfilling", IEEE TPDS 12(6), 2001, section 2: jobs start in
//!   order while they fit; the first job that does not fit (the *head*) gets a
//!   reservation at the *shadow time*, the earliest time at which enough
//!   processors are free for it assuming every running job ends at its
//!   *requested* end time; the processors free at the shadow time beyond the
//!   head's need are the *extra* processors. A later job (in queue order)
//!   backfills — starts now — if it fits in the free processors and either
//!   ends, by its requested time, no later than the shadow time, or uses no
//!   more than the extra processors (which it then consumes).
//! * **Conservative backfilling** (Mu'alem & Feitelson 2001, section 2): every
//!   queued job has a reservation. At each scheduling pass the reservations are
//!   recomputed in queue order on an availability profile built from the
//!   running jobs' requested end times: each job is placed at the earliest
//!   time its processors are free for its whole requested time, given the
//!   reservations of the jobs before it. A job whose reservation is *now*
//!   starts. A job therefore starts early only if it delays no earlier
//!   reservation. Recomputing at every pass is the "compression" that moves
//!   reservations earlier when jobs end before their requested time. (This
//!   is the full-recomputation variant; simulators that instead re-insert
//!   jobs one at a time into a schedule that still holds the later jobs'
//!   old reservations can give other schedules after early completions.)
//!
//! A policy observes a [`BatchView`] and returns the positions in the queue of
//! the jobs to start now; it never touches the machine. The queue is in
//! arrival order unless the machine sorts it first by a priority rule
//! ([`QueueOrder`], `order.rs`: SJF, WFP3, UNICEF, …); the policy then
//! starts, reserves and backfills in that order. Times are integer
//! ticks (the batch machine uses seconds, the resolution of SWF traces).
//!
//! Tie rules (all documented here and tested):
//! * The queue is in arrival order; jobs submitted at the same time are in
//!   trace order. Backfill candidates are examined in queue order.
//! * A running job is expected to end at `max(requested_end, now + 1)`: a job
//!   that has reached its requested time without ending (it is allowed to
//!   overrun) is expected to end one tick from now.
//! * A job's requested duration counts as at least 1 tick. Sums of times
//!   saturate at `u64::MAX`.
//! * EASY: a candidate ending exactly at the shadow time does not delay the
//!   head (the machine handles completions before starts at equal times). All
//!   running jobs expected to end exactly at the shadow time count toward the
//!   extra processors.
//! * Conservative: a job fits at time `t` if the free processors are enough
//!   over `[t, t + requested)`; an interval ending at `t'` does not conflict
//!   with one starting at `t'`.
//!
//! Killing jobs that exceed their requested time is a machine option, not a
//! policy decision.

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// A running job as the policy sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunningJob {
    pub procs: u32,
    /// Start time plus requested time (not the real end, which the policy
    /// does not know).
    pub requested_end: u64,
}

/// A waiting job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueuedJob {
    pub procs: u32,
    /// Requested (estimated) duration.
    pub requested: u64,
}

/// What a batch policy observes.
#[derive(Debug, Clone, Copy)]
pub struct BatchView<'a> {
    pub now: u64,
    /// Processors of the machine.
    pub total: u32,
    /// Processors free now.
    pub free: u32,
    /// Running jobs, in any order.
    pub running: &'a [RunningJob],
    /// The same jobs as `(requested_end, procs)` sorted ascending, if the
    /// machine keeps them so (then policies need not sort `running` at every
    /// pass: with thousands of running jobs that sort is most of a pass).
    pub running_by_end: Option<&'a [(u64, u32)]>,
    /// Waiting jobs in arrival order (or the machine's priority order).
    pub queue: &'a [QueuedJob],
    /// EASY: the order in which backfilling examines the queue (positions
    /// in `queue`, a permutation), when it is not the queue's own
    /// ([`BackfillOrder`]); the head and its reservation still follow the
    /// queue's order.
    pub backfill: Option<&'a [usize]>,
}

/// A batch policy: decides which queued jobs start now.
pub trait BatchPolicy {
    /// The policy's name (`fcfs`, `easy`, `conservative`).
    fn name(&self) -> &'static str;
    /// Appends to `start` the positions in `view.queue` of the jobs to start
    /// now, ascending. Their processors must fit in `view.free`.
    fn schedule(&mut self, view: &BatchView<'_>, start: &mut Vec<usize>);
}

/// The built-in batch policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum BatchKind {
    Fcfs,
    #[default]
    Easy,
    Conservative,
}

impl BatchKind {
    pub fn name(self) -> &'static str {
        match self {
            BatchKind::Fcfs => "fcfs",
            BatchKind::Easy => "easy",
            BatchKind::Conservative => "conservative",
        }
    }

    /// A fresh policy object of this kind.
    pub fn policy(self) -> Box<dyn BatchPolicy + Send> {
        match self {
            BatchKind::Fcfs => Box::new(Fcfs),
            BatchKind::Easy => Box::new(Easy::default()),
            BatchKind::Conservative => Box::new(Conservative::default()),
        }
    }
}

#[inline]
fn expected_end(r: &RunningJob, now: u64) -> u64 {
    r.requested_end.max(now.saturating_add(1))
}

/// Fills `ends` with the running jobs' expected ends and processors,
/// sorted ascending (from `running_by_end` when the machine gives it: only
/// the overrunning jobs, all expected at `now + 1`, are sorted then).
fn expected_ends(ends: &mut Vec<(u64, u32)>, view: &BatchView<'_>) {
    let now = view.now;
    ends.clear();
    match view.running_by_end {
        Some(sorted) => {
            let next = now.saturating_add(1);
            ends.extend(sorted.iter().map(|&(e, p)| (e.max(next), p)));
            // (ends at or before now + 1 all map to now + 1: a prefix,
            // sorted by processors as a full sort would)
            let k = ends.partition_point(|e| e.0 <= next);
            ends[..k].sort_unstable();
        }
        None => {
            ends.extend(view.running.iter().map(|r| (expected_end(r, now), r.procs)));
            ends.sort_unstable();
        }
    }
}

#[inline]
fn duration(q: &QueuedJob) -> u64 {
    q.requested.max(1)
}

/// First-come first-served.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fcfs;

impl BatchPolicy for Fcfs {
    fn name(&self) -> &'static str {
        "fcfs"
    }
    fn schedule(&mut self, view: &BatchView<'_>, start: &mut Vec<usize>) {
        let mut free = view.free;
        for (i, q) in view.queue.iter().enumerate() {
            if q.procs > free {
                break;
            }
            free -= q.procs;
            start.push(i);
        }
    }
}

mod bounds;
mod conservative;
mod depth;
mod easy;
pub mod multifactor;
pub mod order;
mod profile;
pub mod reference;
pub mod select;
#[cfg(test)]
mod tests;

pub use conservative::Conservative;
pub use depth::Depth;
pub use easy::{Easy, Shadow};
pub use multifactor::{multifactor_scores, Factors, FairShare, MultifactorParams};
pub use order::{
    sort_by_scores, BackfillOrder, OrderJob, OrderRow, QueueOrder, QueueScorer, ScoreFn, ORDERS,
};
pub use profile::Profile;
