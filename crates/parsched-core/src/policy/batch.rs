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
//! the jobs to start now; it never touches the machine. Times are integer
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    /// Waiting jobs in arrival order.
    pub queue: &'a [QueuedJob],
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

/// EASY backfilling (aggressive backfilling with one reservation).
#[derive(Debug, Clone, Default)]
pub struct Easy {
    ends: Vec<(u64, u32)>,
}

/// The head's reservation computed by [`Easy::shadow`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shadow {
    /// When the head job is expected to be able to start.
    pub time: u64,
    /// Processors free at `time` beyond the head's need.
    pub extra: u32,
}

impl Easy {
    /// The shadow time and extra processors for a job of `procs` processors,
    /// given `free` processors now and running jobs expected to end at
    /// `ends` (sorted by time). `None` if the job can never fit.
    pub fn shadow(now: u64, free: u32, ends: &[(u64, u32)], procs: u32) -> Option<Shadow> {
        if procs <= free {
            return Some(Shadow {
                time: now,
                extra: free - procs,
            });
        }
        let mut avail = free;
        let mut i = 0;
        while i < ends.len() {
            let t = ends[i].0;
            while i < ends.len() && ends[i].0 == t {
                avail += ends[i].1;
                i += 1;
            }
            if avail >= procs {
                return Some(Shadow {
                    time: t,
                    extra: avail - procs,
                });
            }
        }
        None
    }
}

impl BatchPolicy for Easy {
    fn name(&self) -> &'static str {
        "easy"
    }
    fn schedule(&mut self, view: &BatchView<'_>, start: &mut Vec<usize>) {
        let now = view.now;
        let mut free = view.free;
        let q = view.queue;
        // In order while they fit.
        let mut head = 0;
        while head < q.len() && q[head].procs <= free {
            free -= q[head].procs;
            start.push(head);
            head += 1;
        }
        if head >= q.len() || free == 0 {
            return;
        }
        // Reservation for the head, from requested end times (including the
        // jobs started above).
        self.ends.clear();
        self.ends
            .extend(view.running.iter().map(|r| (expected_end(r, now), r.procs)));
        self.ends.extend(
            start
                .iter()
                .map(|&i| (now.saturating_add(duration(&q[i])), q[i].procs)),
        );
        self.ends.sort_unstable();
        let Some(shadow) = Easy::shadow(now, free, &self.ends, q[head].procs) else {
            return;
        };
        let mut extra = shadow.extra;
        for (i, c) in q.iter().enumerate().skip(head + 1) {
            if c.procs > free {
                continue;
            }
            if now.saturating_add(duration(c)) <= shadow.time {
                free -= c.procs;
                start.push(i);
            } else if c.procs <= extra {
                free -= c.procs;
                extra -= c.procs;
                start.push(i);
            } else {
                continue;
            }
            if free == 0 {
                break;
            }
        }
    }
}

/// An availability profile: free processors as a step function of time.
/// Step `k` (time `t[k]`, `f[k]` free) means `f[k]` processors are free on
/// `[t[k], t[k+1])`; the last step extends forever. (Times and counts are
/// kept apart so that scans over counts read one dense array.)
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profile {
    t: Vec<u64>,
    f: Vec<u32>,
}

/// The first index `>= i` whose count is at least `procs` (`f.len()` if
/// none): blocks of counts are tested at once, then one at a time.
#[inline]
fn skip_below(f: &[u32], mut i: usize, procs: u32) -> usize {
    const W: usize = 8;
    while i + W <= f.len() {
        let block: &[u32; W] = f[i..i + W].try_into().expect("a block of W");
        if block.iter().fold(false, |a, &x| a | (x >= procs)) {
            break;
        }
        i += W;
    }
    while i < f.len() && f[i] < procs {
        i += 1;
    }
    i
}

impl Profile {
    /// The profile from `now` given `free` processors now and running jobs
    /// releasing processors at `ends` (sorted by time, all after `now`).
    pub fn rebuild(&mut self, now: u64, free: u32, ends: &[(u64, u32)]) {
        self.t.clear();
        self.f.clear();
        self.t.push(now);
        self.f.push(free);
        let mut cur = free;
        for &(t, p) in ends {
            cur += p;
            if *self.t.last().expect("a first step") == t {
                *self.f.last_mut().expect("a first step") = cur;
            } else {
                self.t.push(t.max(now));
                self.f.push(cur);
            }
        }
    }

    /// The steps `(time, free)`.
    pub fn steps(&self) -> Vec<(u64, u32)> {
        self.t.iter().copied().zip(self.f.iter().copied()).collect()
    }

    /// The index of the first step at or after `t`.
    fn index(&self, t: u64) -> usize {
        self.t.partition_point(|&x| x < t)
    }

    /// The earliest time at which `procs` processors are free for `dur`
    /// ticks. `None` if never (more processors than the profile's maximum).
    pub fn earliest(&self, procs: u32, dur: u64) -> Option<u64> {
        self.find(procs, dur).map(|(i, _)| self.t[i])
    }

    /// `(i, j)`: the fit starts at step `i`; `j` is the first step at or
    /// after the fit's end.
    fn find(&self, procs: u32, dur: u64) -> Option<(usize, usize)> {
        self.find_from(0, procs, dur).map(|(i, j, _)| (i, j))
    }

    /// As `find`, examining steps from `from` on (every earlier step must be
    /// known to have fewer than `procs` processors free); the third value is
    /// the first step examined with at least `procs` free.
    fn find_from(&self, from: usize, procs: u32, dur: u64) -> Option<(usize, usize, usize)> {
        let (t, f) = (&self.t[..], &self.f[..]);
        let n = f.len();
        let mut i = skip_below(f, from, procs);
        let first = i;
        'outer: while i < n {
            let end = t[i].saturating_add(dur);
            let mut j = i + 1;
            while j < n && t[j] < end {
                if f[j] < procs {
                    i = skip_below(f, j + 1, procs);
                    continue 'outer;
                }
                j += 1;
            }
            return Some((i, j, first));
        }
        None
    }

    /// As `find_from`, but only fits starting before `limit`; the second
    /// value is the first step examined with at least `procs` free
    /// (`usize::MAX` if none).
    fn find_before(
        &self,
        from: usize,
        procs: u32,
        dur: u64,
        limit: u64,
    ) -> (Option<(usize, usize)>, usize) {
        let (t, f) = (&self.t[..], &self.f[..]);
        let n = f.len();
        // the steps before limit
        let fl = &f[..self.index(limit)];
        let mut i = skip_below(fl, from.min(fl.len()), procs);
        let first = if i < fl.len() { i } else { usize::MAX };
        'outer: while i < fl.len() {
            let end = t[i].saturating_add(dur);
            let mut j = i + 1;
            while j < n && t[j] < end {
                if f[j] < procs {
                    i = skip_below(fl, (j + 1).min(fl.len()), procs);
                    continue 'outer;
                }
                j += 1;
            }
            return (Some((i, j)), first);
        }
        (None, first)
    }

    /// `place` skipping the steps before `lb` (the caller knows that none
    /// has `procs` processors free); returns the fit's time and the time of
    /// the first step with `procs` free.
    fn place_after(&mut self, lb: u64, procs: u32, dur: u64) -> Option<(u64, u64)> {
        let from = self.index(lb);
        let (i, j, first) = self.find_from(from, procs, dur)?;
        let (t, tf) = (self.t[i], self.t[first]);
        self.reserve_at(i, j, t.saturating_add(dur), procs);
        Some((t, tf))
    }

    /// The fewest processors free over `[now, now + dur)` (`now`: the
    /// profile's first time).
    fn min_free(&self, dur: u64) -> u32 {
        let (Some(&t0), Some(&f0)) = (self.t.first(), self.f.first()) else {
            return 0;
        };
        let end = t0.saturating_add(dur);
        let mut m = f0;
        for (&t, &f) in self.t[1..].iter().zip(&self.f[1..]) {
            if t >= end || m == 0 {
                break;
            }
            m = m.min(f);
        }
        m
    }

    /// Reserves `procs` processors on `[t[i], end)` where `j` is the first
    /// step at or after `end`.
    fn reserve_at(&mut self, i: usize, j: usize, end: u64, procs: u32) {
        if j >= self.t.len() || self.t[j] != end {
            let free = self.f[j - 1];
            self.t.insert(j, end);
            self.f.insert(j, free);
        }
        for f in &mut self.f[i..j] {
            *f -= procs;
        }
    }

    /// Reserves `procs` processors on `[t, t + dur)`.
    pub fn reserve(&mut self, t: u64, dur: u64, procs: u32) {
        let a = self.split(t);
        let b = self.split(t.saturating_add(dur));
        for f in &mut self.f[a..b] {
            *f -= procs;
        }
    }

    /// Index of the step starting at `t`, splitting the step containing it.
    fn split(&mut self, t: u64) -> usize {
        match self.t.binary_search(&t) {
            Ok(k) => k,
            Err(k) => {
                // k >= 1: t is after the first step's time.
                let free = self.f[k - 1];
                self.t.insert(k, t);
                self.f.insert(k, free);
                k
            }
        }
    }

    /// Drops the steps before `now` (the profile's first time is at most
    /// `now`), the step holding `now` starting there.
    fn advance(&mut self, now: u64) {
        let k = self.t.partition_point(|&x| x <= now) - 1;
        self.t.drain(..k);
        self.f.drain(..k);
        self.t[0] = now;
    }

    /// Earliest fit for `procs` × `dur`, reserved at once; returns its time.
    pub fn place(&mut self, procs: u32, dur: u64) -> Option<u64> {
        let (i, j) = self.find(procs, dur)?;
        let t = self.t[i];
        self.reserve_at(i, j, t.saturating_add(dur), procs);
        Some(t)
    }

    /// Free processors at the profile's first time.
    pub fn free_now(&self) -> u32 {
        self.f.first().copied().unwrap_or(0)
    }
}

/// Conservative backfilling: a reservation for every queued job.
///
/// A pass places the queue in order, as the module documentation says, but
/// does less work than placing every job: (1) the search for a job of `p`
/// processors starts after the last time known to have fewer than `p`
/// free (the profile only loses processors during a pass), and (2) the
/// pass stops once no later job can start now: only jobs that fit in the
/// processors free now can, and a job stops being able to once its window
/// `[now, now + requested)` lacks its processors. (3) A pass whose
/// profile is the last one's (no job ended early or overran) keeps the
/// last placements outright; (4) otherwise it checks them instead of
/// searching afresh: it tracks `diff`, this pass's profile minus the one
/// each job was last placed on (at first the change in the running jobs'
/// expected ends; then, for each job that moves, `+` its old window and
/// `-` its new one). A job's old time `told` was its earliest fit there, so
/// any fit before `told` now is new and its window meets a time where
/// `diff > 0`: only starts whose windows reach the span of those times are
/// searched, then the window at `told` (which holds unless `diff < 0`
/// there) and on. Jobs the last pass did not reach (it stopped early) keep
/// older placements with the `diff` of the pass that stopped before them
/// (a carry, added when a later pass reaches them). Its decisions are
/// those of the straightforward pass ([`reference::Conservative`]), which
/// tests check on random workloads.
#[derive(Debug, Clone, Default)]
pub struct Conservative {
    ends: Vec<(u64, u32)>,
    profile: Profile,
    /// Reservations of the last pass (start times), by queue position.
    reservations: Vec<u64>,
    /// Queue positions of the jobs that may start now.
    cands: Vec<u32>,
    lb: LowerBounds,
    /// The last pass, for the next one: its time, the placed jobs that did
    /// not start with their reservations, and the expected ends of the
    /// jobs running after it (sorted).
    saved: Option<u64>,
    saved_jobs: Vec<(QueuedJob, u64)>,
    saved_ends: Vec<(u64, u32)>,
    /// Older placements of the jobs after the last pass's (which stopped
    /// before them), and the differences to add to `diff` before them:
    /// `(id, steps)`, where `tail[k]` has id `tail_base + k` (ids survive
    /// pushes and pops at the front).
    tail: VecDeque<(QueuedJob, u64)>,
    tail_carries: VecDeque<(u64, Vec<(u64, i64)>)>,
    tail_base: u64,
    /// The last pass's placements, which this pass checks (see
    /// [`Conservative::replace`]), by queue position; the tail follows.
    old: Vec<(QueuedJob, u64)>,
    /// A span `[lo, hi)` holding every time where `diff > 0` (`lo >= hi`:
    /// none).
    pos_span: (u64, u64),
    /// Scratch for merging step functions.
    merged: Vec<(u64, i64)>,
    /// The free processors this pass's profile has more than the last
    /// pass's had at the same point of the queue, as steps `(from, value)`
    /// (the last step extends forever).
    diff: Vec<(u64, i64)>,
}

/// The span `[lo, hi)` of the times where the step function `d` is
/// positive (`lo >= hi`: nowhere).
fn positive_span(d: &[(u64, i64)]) -> (u64, u64) {
    let mut lo = u64::MAX;
    let mut hi = 0;
    for (k, &(t, v)) in d.iter().enumerate() {
        if v > 0 {
            lo = lo.min(t);
            hi = d.get(k + 1).map_or(u64::MAX, |s| s.0);
        }
    }
    (lo, hi)
}

/// Passes check earlier placements (rather than search afresh) only when
/// at least this many jobs have them.
const MIN_CHECKED: usize = 64;

/// The id of the tail's first job when it is empty (ids count down as
/// jobs are pushed in front).
const TAIL_BASE: u64 = 1 << 62;

/// Per processor count `p`, a time before which no step of the profile has
/// `p` processors free; a query for `p` takes the maximum over counts
/// `<= p` (a Fenwick tree of maxima). Entries of earlier passes are stale
/// (epoch).
#[derive(Debug, Clone, Default)]
struct LowerBounds {
    epoch: u32,
    tree: Vec<(u32, u64)>,
}

impl LowerBounds {
    fn reset(&mut self, total: u32) {
        let n = total as usize + 1;
        if self.tree.len() != n || self.epoch == u32::MAX {
            self.tree.clear();
            self.tree.resize(n, (0, 0));
            self.epoch = 0;
        }
        self.epoch += 1;
    }

    fn raise(&mut self, p: u32, t: u64) {
        let mut i = p as usize;
        while i < self.tree.len() {
            let e = &mut self.tree[i];
            if e.0 != self.epoch {
                *e = (self.epoch, t);
            } else if e.1 < t {
                e.1 = t;
            }
            i += i & i.wrapping_neg();
        }
    }

    fn get(&self, p: u32) -> u64 {
        let mut i = (p as usize).min(self.tree.len().saturating_sub(1));
        let mut m = 0;
        while i > 0 {
            let e = self.tree[i];
            if e.0 == self.epoch {
                m = m.max(e.1);
            }
            i &= i - 1;
        }
        m
    }
}

impl Conservative {
    /// The reservations computed by the last pass, by queue position; jobs
    /// after the point where the pass stopped (no later job could start
    /// now) are omitted.
    pub fn reservations(&self) -> &[u64] {
        &self.reservations
    }

    /// Computes every job's reservation (all of them, unlike `schedule`,
    /// which stops once no later job can start now). For inspection and
    /// tests.
    pub fn plan(&mut self, view: &BatchView<'_>) -> Vec<u64> {
        self.saved = None;
        self.clear_tail();
        self.rebuild(view);
        for q in view.queue {
            let t = if q.procs > view.total {
                u64::MAX
            } else {
                self.profile
                    .place(q.procs, duration(q))
                    .expect("a job no wider than the machine fits once all reservations end")
            };
            self.reservations.push(t);
        }
        self.reservations.clone()
    }

    fn rebuild(&mut self, view: &BatchView<'_>) {
        let now = view.now;
        self.ends.clear();
        self.ends
            .extend(view.running.iter().map(|r| (expected_end(r, now), r.procs)));
        self.ends.sort_unstable();
        self.profile.rebuild(now, view.free, &self.ends);
        self.reservations.clear();
    }

    /// Whether the last pass's placements hold at this one: the same
    /// expected ends from now on (every job that ended did so at its
    /// expected end, none is overrunning), the placed jobs that did not
    /// start still first in the queue, none reserved before now. Then a
    /// pass from scratch would place them exactly where they are (a job
    /// started at the last pass runs in its reservation, and reservations
    /// of jobs behind it in the queue fit beside it).
    fn reusable(&self, view: &BatchView<'_>) -> bool {
        let Some(then) = self.saved else {
            return false;
        };
        let now = view.now;
        let m = self.saved_jobs.len();
        if now < then || view.queue.len() < m {
            return false;
        }
        let busy: u64 = self.ends.iter().map(|e| e.1 as u64).sum();
        if busy + view.free as u64 != view.total as u64 {
            return false;
        }
        let live = self.saved_ends.partition_point(|e| e.0 <= now);
        self.saved_ends[live..] == self.ends[..]
            && self
                .saved_jobs
                .iter()
                .zip(&view.queue[..m])
                .all(|((j, t), q)| j == q && *t >= now)
    }

    /// Whether the last pass's placements can be checked at this one
    /// ([`Conservative::replace`]): the placed jobs that did not start still
    /// first in the queue. If so, `diff` is set
    /// to this pass's initial profile minus the last pass's from now on.
    fn comparable(&mut self, view: &BatchView<'_>) -> bool {
        let Some(then) = self.saved else {
            return false;
        };
        let now = view.now;
        let m = self.saved_jobs.len();
        if now < then || view.queue.len() < m {
            return false;
        }
        let busy: u64 = self.ends.iter().map(|e| e.1 as u64).sum();
        if busy + view.free as u64 != view.total as u64 {
            return false;
        }
        if !self
            .saved_jobs
            .iter()
            .zip(&view.queue[..m])
            .all(|((j, _), q)| j == q)
        {
            return false;
        }
        self.take_old();
        // The last profile from now on: the processors of the ends after
        // now are busy at now.
        let live = self.saved_ends.partition_point(|e| e.0 <= now);
        let old = &self.saved_ends[live..];
        let old_busy: u64 = old.iter().map(|e| e.1 as u64).sum();
        let old_free = view.total as u64 - old_busy.min(view.total as u64);
        self.diff.clear();
        self.diff.push((now, view.free as i64 - old_free as i64));
        // Merge the two sorted lists of ends, equal ones cancelling.
        let new = &self.ends;
        let (mut a, mut b) = (0, 0);
        let mut cur = self.diff[0].1;
        loop {
            let (t, d) = match (new.get(a), old.get(b)) {
                (Some(x), Some(y)) if x == y => {
                    a += 1;
                    b += 1;
                    continue;
                }
                (Some(x), Some(y)) if x < y => {
                    a += 1;
                    (x.0, x.1 as i64)
                }
                (Some(x), None) => {
                    a += 1;
                    (x.0, x.1 as i64)
                }
                (_, Some(y)) => {
                    b += 1;
                    (y.0, -(y.1 as i64))
                }
                (None, None) => break,
            };
            cur += d;
            match self.diff.last_mut() {
                Some(last) if last.0 == t => last.1 = cur,
                _ => self.diff.push((t, cur)),
            }
        }
        self.pos_span = positive_span(&self.diff);
        true
    }

    /// Moves the last pass's placements to `old` (the tail's jobs are
    /// checked against the queue as the pass reaches them).
    fn take_old(&mut self) {
        self.old.clear();
        std::mem::swap(&mut self.old, &mut self.saved_jobs);
    }

    /// Forgets the tail.
    fn clear_tail(&mut self) {
        self.tail.clear();
        self.tail_carries.clear();
        self.tail_base = TAIL_BASE;
    }

    /// Places `job` at queue position `i` as a pass from scratch would:
    /// by checking its earlier placement if it has one, else by a search.
    fn place_job(&mut self, now: u64, i: usize, job: &QueuedJob) -> u64 {
        let m = self.old.len();
        if i < m {
            let told = self.old[i].1;
            return self.replace(now, job, told);
        }
        let k = i - m;
        if k < self.tail.len() {
            if self.tail[k].0 == *job {
                let id = self.tail_base + k as u64;
                while self.tail_carries.front().is_some_and(|c| c.0 <= id) {
                    let (_, c) = self.tail_carries.pop_front().expect("a carry");
                    self.diff_merge(&c);
                }
                let told = self.tail[k].1;
                return self.replace(now, job, told);
            }
            // (the queue changed otherwise than by starts and arrivals)
            self.tail.truncate(k);
            let end = self.tail_base + k as u64;
            self.tail_carries.retain(|c| c.0 < end);
        }
        let (t, first) = self
            .profile
            .place_after(self.lb.get(job.procs), job.procs, duration(job))
            .expect("a job no wider than the machine fits once all reservations end");
        self.lb.raise(job.procs, first);
        t
    }

    /// Adds the step function `c` to `diff` (from `diff`'s first time on).
    fn diff_merge(&mut self, c: &[(u64, i64)]) {
        let d = &self.diff;
        let now = d[0].0;
        let m = &mut self.merged;
        m.clear();
        let (mut a, mut b) = (0, 0);
        let (mut va, mut vb) = (0i64, 0i64);
        // c's value at now
        while b < c.len() && c[b].0 <= now {
            vb = c[b].1;
            b += 1;
        }
        loop {
            let t = match (d.get(a), c.get(b)) {
                (None, None) => break,
                (Some(x), Some(y)) => x.0.min(y.0),
                (Some(x), None) => x.0,
                (None, Some(y)) => y.0,
            };
            if a < d.len() && d[a].0 == t {
                va = d[a].1;
                a += 1;
            }
            if b < c.len() && c[b].0 == t {
                vb = c[b].1;
                b += 1;
            }
            let v = va + vb;
            match m.last() {
                Some(l) if l.1 == v => {}
                _ => m.push((t.max(now), v)),
            }
        }
        std::mem::swap(&mut self.diff, &mut self.merged);
        self.pos_span = positive_span(&self.diff);
    }

    /// Adds `v` to `diff` on `[a, b)` (`a >= diff[0].0`).
    fn diff_add(&mut self, a: u64, b: u64, v: i64) {
        let split = |d: &mut Vec<(u64, i64)>, t: u64| -> usize {
            let k = d.partition_point(|s| s.0 < t);
            if k == d.len() || d[k].0 != t {
                let val = d[k - 1].1;
                d.insert(k, (t, val));
            }
            k
        };
        let i = split(&mut self.diff, a);
        let j = split(&mut self.diff, b);
        for s in &mut self.diff[i..j] {
            s.1 += v;
        }
        if v > 0 {
            let (lo, hi) = &mut self.pos_span;
            if *lo >= *hi {
                (*lo, *hi) = (a, b);
            } else {
                *lo = (*lo).min(a);
                *hi = (*hi).max(b);
            }
        }
    }

    /// Places `job`, which the last pass placed at `told` (its position
    /// and the jobs before it in the queue unchanged, `diff` this pass's
    /// profile minus the last one's at that point), as a search from the
    /// profile's start would, but searching less: a fit starting before
    /// `told` is new, so its window meets a time where `diff > 0`; windows
    /// starting before `told` that do not are skipped.
    fn replace(&mut self, now: u64, job: &QueuedJob, told: u64) -> u64 {
        let procs = job.procs;
        let dur = duration(job);
        if told < now {
            // (reserved at a time now past: placed afresh)
            let (t, first) = self
                .profile
                .place_after(self.lb.get(procs), procs, dur)
                .expect("a job no wider than the machine fits once all reservations end");
            self.lb.raise(procs, first);
            let old_end = told.saturating_add(dur);
            if old_end > now {
                self.diff_add(now, old_end, procs as i64);
            }
            self.diff_add(t, t.saturating_add(dur), -(procs as i64));
            return t;
        }
        // The span of the times where this profile has more free.
        let (lo, hi) = self.pos_span;
        let lb = self.lb.get(procs);
        // Fits starting in [from_t, limit) may be new; none starts before
        // from_t (before lb, or windows not reaching lo) or in [limit, told)
        // (windows after hi).
        let limit = hi.min(told);
        let from_t = lb.max((lo + 1).saturating_sub(dur));
        let (fit, first) = if lo < hi && from_t < limit {
            let from = self.profile.index(from_t);
            self.profile.find_before(from, procs, dur, limit)
        } else {
            (None, usize::MAX)
        };
        // Whether the steps examined follow on from lb (then lb can rise).
        let from_lb = lo < hi && from_t == lb && from_t < limit;
        let (i, j) = match fit {
            Some(f) => {
                if from_lb {
                    self.lb.raise(procs, self.profile.t[first]);
                }
                f
            }
            None => {
                let from = self.profile.index(told.max(lb));
                let (i, j, f) = self
                    .profile
                    .find_from(from, procs, dur)
                    .expect("a job no wider than the machine fits once all reservations end");
                if from_lb {
                    let t = if first != usize::MAX {
                        self.profile.t[first]
                    } else if limit == told {
                        self.profile.t[f]
                    } else {
                        limit
                    };
                    self.lb.raise(procs, t);
                }
                (i, j)
            }
        };
        let t = self.profile.t[i];
        self.profile.reserve_at(i, j, t.saturating_add(dur), procs);
        if t != told {
            self.diff_add(told, told.saturating_add(dur), procs as i64);
            self.diff_add(t, t.saturating_add(dur), -(procs as i64));
        }
        t
    }

    fn pass(&mut self, view: &BatchView<'_>, start: &mut Vec<usize>) {
        let now = view.now;
        let q = view.queue;
        self.ends.clear();
        self.ends
            .extend(view.running.iter().map(|r| (expected_end(r, now), r.procs)));
        self.ends.sort_unstable();
        self.reservations.clear();
        self.old.clear();
        let from = if self.reusable(view) {
            // The profile from now on, with the placed jobs' reservations.
            self.profile.advance(now);
            for (i, &(_, t)) in self.saved_jobs.iter().enumerate() {
                self.reservations.push(t);
                if t == now {
                    start.push(i);
                }
            }
            let m = self.saved_jobs.len();
            // The tail's placements are checked against this profile, which
            // is the last pass's at its end.
            self.take_old();
            if self.tail.len() < MIN_CHECKED {
                self.clear_tail();
            }
            self.diff.clear();
            self.diff.push((now, 0));
            self.pos_span = (u64::MAX, 0);
            m
        } else {
            self.profile.rebuild(now, view.free, &self.ends);
            self.lb.reset(view.total);
            // (for a few jobs, searches cost less than tracking diff)
            if self.saved_jobs.len() + self.tail.len() < MIN_CHECKED || !self.comparable(view) {
                self.saved_jobs.clear();
                self.clear_tail();
            }
            0
        };
        // A job can start now only if it fits in the processors free now
        // (the profile never gains processors during a pass).
        let free0 = self.profile.free_now();
        self.cands.clear();
        self.cands.extend(
            q.iter()
                .enumerate()
                .skip(from)
                .filter(|(_, j)| j.procs <= free0)
                .map(|(i, _)| i as u32),
        );
        // cands[..last]: the candidates still possible; the last one is
        // known to fit now unless `dirty`.
        let mut last = self.cands.len();
        let mut dirty = from > 0;
        'pass: for (i, job) in q.iter().enumerate().skip(from) {
            loop {
                if last == 0 || (self.cands[last - 1] as usize) < i {
                    break 'pass;
                }
                if !dirty {
                    break;
                }
                let c = &q[self.cands[last - 1] as usize];
                if self.profile.min_free(duration(c)) >= c.procs {
                    dirty = false;
                    break;
                }
                last -= 1;
            }
            if job.procs > view.total {
                self.reservations.push(u64::MAX);
                continue;
            }
            let t = self.place_job(now, i, job);
            self.reservations.push(t);
            if t == now {
                start.push(i);
            }
            if last > 0 {
                let c = &q[self.cands[last - 1] as usize];
                if t < now.saturating_add(duration(c)) {
                    dirty = true;
                }
            }
        }
        // For the next pass: the placements not made by this pass, with the
        // difference between this profile and theirs.
        let done = self.reservations.len();
        let m = self.old.len();
        if done >= m {
            let used = (done - m).min(self.tail.len());
            self.tail.drain(..used);
            self.tail_base += used as u64;
        } else {
            if self.tail.is_empty() {
                self.clear_tail();
            }
            for &e in self.old[done..].iter().rev() {
                self.tail.push_front(e);
            }
            self.tail_base -= (m - done) as u64;
        }
        if self.tail.is_empty() {
            self.clear_tail();
        } else {
            self.tail_carries
                .push_front((self.tail_base, self.diff.clone()));
        }
        self.saved = Some(now);
        self.saved_jobs.clear();
        self.saved_ends.clear();
        self.saved_ends.extend_from_slice(&self.ends);
        for (j, &t) in q.iter().zip(&self.reservations) {
            if t == u64::MAX {
                // (a job wider than the machine: never reused)
                self.saved = None;
                self.clear_tail();
                break;
            }
            if t == now {
                self.saved_ends
                    .push((now.saturating_add(duration(j)), j.procs));
            } else {
                self.saved_jobs.push((*j, t));
            }
        }
        self.saved_ends.sort_unstable();
    }
}

impl BatchPolicy for Conservative {
    fn name(&self) -> &'static str {
        "conservative"
    }
    fn schedule(&mut self, view: &BatchView<'_>, start: &mut Vec<usize>) {
        if view.free == 0 {
            // (the queue may change before the next pass; the saved
            // placements are checked against it then)
            return;
        }
        self.pass(view, start);
    }
}

/// The straightforward implementations the faster ones must agree with
/// (tests compare the schedules): EASY scanning the whole queue, and
/// conservative backfilling placing every job up to the narrowest one that
/// could still start, each search from the profile's start.
pub mod reference {
    use super::{duration, expected_end, BatchPolicy, BatchView, Profile};

    pub use super::Easy;

    /// Conservative backfilling, every pass from scratch.
    #[derive(Debug, Clone, Default)]
    pub struct Conservative {
        ends: Vec<(u64, u32)>,
        profile: Profile,
        /// Reservations of the last pass (start times), by queue position.
        reservations: Vec<u64>,
        suffix_min: Vec<u32>,
    }

    impl Conservative {
        /// The reservations computed by the last pass, by queue position; jobs
        /// after the point where the pass stopped (no later job narrow enough to
        /// start now) are omitted.
        pub fn reservations(&self) -> &[u64] {
            &self.reservations
        }

        /// Computes every job's reservation (all of them, unlike `schedule`,
        /// which stops once no processor is free now). For inspection and tests.
        pub fn plan(&mut self, view: &BatchView<'_>) -> Vec<u64> {
            self.pass(view, None, true);
            self.reservations.clone()
        }

        fn pass(&mut self, view: &BatchView<'_>, mut start: Option<&mut Vec<usize>>, all: bool) {
            let now = view.now;
            self.ends.clear();
            self.ends
                .extend(view.running.iter().map(|r| (expected_end(r, now), r.procs)));
            self.ends.sort_unstable();
            self.profile.rebuild(now, view.free, &self.ends);
            self.reservations.clear();
            if !all {
                // suffix_min[i]: the narrowest job at or after position i. Once
                // fewer processors are free now, no later job can start now and
                // the pass stops (later reservations cannot affect earlier
                // ones).
                self.suffix_min.clear();
                self.suffix_min.resize(view.queue.len() + 1, u32::MAX);
                for i in (0..view.queue.len()).rev() {
                    self.suffix_min[i] = self.suffix_min[i + 1].min(view.queue[i].procs);
                }
            }
            for (i, q) in view.queue.iter().enumerate() {
                if !all && self.profile.free_now() < self.suffix_min[i] {
                    break;
                }
                if q.procs > view.total {
                    self.reservations.push(u64::MAX);
                    continue;
                }
                let t = self
                    .profile
                    .place(q.procs, duration(q))
                    .expect("a job no wider than the machine fits once all reservations end");
                self.reservations.push(t);
                if t == now {
                    if let Some(s) = start.as_deref_mut() {
                        s.push(i);
                    }
                }
            }
        }
    }

    impl BatchPolicy for Conservative {
        fn name(&self) -> &'static str {
            "conservative"
        }
        fn schedule(&mut self, view: &BatchView<'_>, start: &mut Vec<usize>) {
            if view.free == 0 {
                return;
            }
            self.pass(view, Some(start), false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(
        p: &mut dyn BatchPolicy,
        now: u64,
        total: u32,
        running: &[(u32, u64)],
        queue: &[(u32, u64)],
    ) -> Vec<usize> {
        let running: Vec<RunningJob> = running
            .iter()
            .map(|&(procs, requested_end)| RunningJob {
                procs,
                requested_end,
            })
            .collect();
        let busy: u32 = running.iter().map(|r| r.procs).sum();
        let queue: Vec<QueuedJob> = queue
            .iter()
            .map(|&(procs, requested)| QueuedJob { procs, requested })
            .collect();
        let view = BatchView {
            now,
            total,
            free: total - busy,
            running: &running,
            queue: &queue,
        };
        let mut out = Vec::new();
        p.schedule(&view, &mut out);
        out
    }

    #[test]
    fn fcfs_stops_at_first_misfit() {
        let s = run(&mut Fcfs, 0, 10, &[(4, 100)], &[(3, 5), (4, 5), (1, 5)]);
        assert_eq!(s, vec![0]);
    }

    #[test]
    fn easy_shadow_and_extra() {
        // 10 procs; running 6 until 100 and 2 until 50; free 2. Head wants 5:
        // at 50 avail 4, at 100 avail 10 → shadow 100, extra 5.
        let ends = [(50, 2), (100, 6)];
        assert_eq!(
            Easy::shadow(0, 2, &ends, 5),
            Some(Shadow {
                time: 100,
                extra: 5
            })
        );
        assert_eq!(Easy::shadow(0, 2, &ends, 11), None);
        // Candidates: (2, 200) does not end before 100 and 2 <= extra 5 → yes.
        let s = run(
            &mut Easy::default(),
            0,
            10,
            &[(6, 100), (2, 50)],
            &[(5, 10), (2, 200)],
        );
        assert_eq!(s, vec![1]);
        // Head 10 → shadow 100, extra 0: a candidate ending exactly at the
        // shadow time backfills; one ending a tick later does not.
        let s = run(
            &mut Easy::default(),
            0,
            10,
            &[(6, 100), (2, 50)],
            &[(10, 10), (2, 100), (1, 1)],
        );
        assert_eq!(s, vec![1]);
        let s = run(
            &mut Easy::default(),
            0,
            10,
            &[(6, 100), (2, 50)],
            &[(10, 10), (2, 101)],
        );
        assert!(s.is_empty());
    }

    #[test]
    fn overrunning_job_is_expected_to_end_next_tick() {
        let s = run(
            &mut Easy::default(),
            500,
            10,
            &[(8, 100)],
            &[(10, 10), (2, 1), (2, 2)],
        );
        // Shadow 501: (2,1) ends at 501 → backfills; (2,2) does not fit (free 0).
        assert_eq!(s, vec![1]);
    }

    #[test]
    fn profile_earliest_and_reserve() {
        let mut p = Profile::default();
        p.rebuild(0, 2, &[(10, 3), (20, 5)]);
        assert_eq!(p.steps(), [(0, 2), (10, 5), (20, 10)]);
        assert_eq!(p.earliest(2, 100), Some(0));
        assert_eq!(p.earliest(3, 5), Some(10));
        assert_eq!(p.earliest(6, 1), Some(20));
        assert_eq!(p.earliest(11, 1), None);
        p.reserve(5, 10, 2);
        assert_eq!(p.steps(), [(0, 2), (5, 0), (10, 3), (15, 5), (20, 10)]);
        assert_eq!(p.earliest(1, 1), Some(0));
        assert_eq!(p.earliest(1, 6), Some(10));
        assert_eq!(p.earliest(4, 1), Some(15));
    }

    #[test]
    fn place_equals_earliest_then_reserve() {
        let mut a = Profile::default();
        a.rebuild(3, 1, &[(7, 2), (9, 1), (20, 4)]);
        let mut b = a.clone();
        for (p, d) in [(2, 3), (1, 1), (4, 5), (8, 2), (3, 10), (1, 30), (2, 2)] {
            let t = a.earliest(p, d).unwrap();
            a.reserve(t, d, p);
            assert_eq!(b.place(p, d), Some(t));
            assert_eq!(a, b);
        }
        assert_eq!(b.place(9, 1), None);
    }

    #[test]
    fn conservative_protects_every_reservation() {
        // 10 procs, running 8 until 100 (free 2). Queue: A(10,50) reserved at
        // 100; B(2,200): now..200 would overlap A's [100,150) needing 10 → no,
        // reserved at 150; C(2,100): [0,100) free 2 → starts now.
        let mut c = Conservative::default();
        let running = [RunningJob {
            procs: 8,
            requested_end: 100,
        }];
        let queue = [
            QueuedJob {
                procs: 10,
                requested: 50,
            },
            QueuedJob {
                procs: 2,
                requested: 200,
            },
            QueuedJob {
                procs: 2,
                requested: 100,
            },
        ];
        let view = BatchView {
            now: 0,
            total: 10,
            free: 2,
            running: &running,
            queue: &queue,
        };
        assert_eq!(c.plan(&view), vec![100, 150, 0]);
        let mut s = Vec::new();
        c.schedule(&view, &mut s);
        assert_eq!(s, vec![2]);
        // EASY agrees here: shadow 100 with extra 0, so B (ends at 200)
        // waits and C (ends at 100) backfills.
        let mut e = Easy::default();
        let mut s = Vec::new();
        e.schedule(&view, &mut s);
        assert_eq!(s, vec![2]);
    }
}
