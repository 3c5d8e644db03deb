//! Conservative backfilling (Mu'alem & Feitelson 2001, section 2), with the
//! checking pass that re-places only jobs an early completion can move: see
//! the module documentation of [`super`] and docs/policies/batch.md.

pub(super) use super::bounds::{FitBounds, LowerBounds};
#[path = "deferred.rs"]
mod deferred;
#[path = "diff.rs"]
mod diff;
#[path = "runs.rs"]
mod runs;
use super::profile::{partition_point_from, PrefixMin};
use super::*;
use deferred::{Deferral, Deferred};
use diff::sign_spans;

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
/// (a carry, added when a later pass reaches them). (5) The stop test of
/// (2) finds the last job that can still start now by a scan back from
/// the queue's end (not a list of the candidates built over the whole
/// queue at every pass), and reads a staircase of the profile's least
/// free processors from now (`profile::PrefixMin`), updated from each
/// reservation's own steps, rather than scanning the candidate's window
/// after every reservation meeting it (with thousands of running jobs
/// that scan was most of a pass: docs/policies/batch.md, "Conservative
/// backfilling at scale"). (6) A job whose old placement provably holds
/// without reading the profile (`diff >= 0` over its window, no new fit
/// possible before it) is not checked: its reservation is deferred and
/// applied with the others in one merge before the profile is next read
/// (`Conservative::defer`); the stop test allows for the deferred
/// windows `pmin` lacks. (7) Runs of identical jobs (array jobs: most of
/// a real log's long queue) are deferred or placed together: a job the
/// same as the one before cannot fit before that one's time, so where
/// that one went the next ones go too, as many as still fit
/// (`runs.rs`). Its decisions are those of the straightforward pass
/// ([`reference::Conservative`]), which tests check on random workloads,
/// also made of such runs.
#[derive(Debug, Clone, Default)]
pub struct Conservative {
    ends: Vec<(u64, u32)>,
    profile: Profile,
    /// Reservations of the last pass (start times), by queue position.
    reservations: Vec<u64>,
    /// The profile's least free processors from now, for the candidates.
    pmin: PrefixMin,
    /// The steps `[i, j)` of the last reservation made, and the fewest
    /// processors free on them after it.
    window: (usize, usize),
    window_least: u32,
    lb: LowerBounds,
    fits: FitBounds,
    /// Whether this pass keeps `fits` (only for queues long enough that
    /// the bound saves more than its upkeep costs).
    fits_on: bool,
    /// The last pass, for the next one: its time, the placed jobs that did
    /// not start with their reservations, and the expected ends of the
    /// jobs running after it (sorted).
    saved: Option<u64>,
    saved_jobs: Vec<(QueuedJob, u64)>,
    saved_ends: Vec<(u64, u32)>,
    /// Scratch: the ends of the jobs a pass starts.
    started_ends: Vec<(u64, u32)>,
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
    /// The length above which `diff_add` drops `diff`'s redundant steps.
    diff_compact: usize,
    /// A span holding every time where `diff < 0`, as `pos_span`.
    neg_span: (u64, u64),
    /// Counts the changes of `diff`; `diff_known` holds, for the version
    /// `.0`, a span where `diff >= 0` (`.1`) and one meeting `diff < 0`
    /// (`.2`), as the deferral tests found them.
    diff_version: u64,
    diff_known: (u64, (u64, u64), (u64, u64)),
    /// Reservations kept without reading the profile, not yet on it
    /// ([`Conservative::defer`]).
    deferred: Deferred,
    /// Whether the last job placed was deferred; if so, the job, its time
    /// and the version of `diff` then.
    was_deferred: bool,
    deferred_job: QueuedJob,
    deferred_at: (u64, u64),
    /// At least the most processors free at any time in `pos_span`
    /// (the span it was computed for first; the profile only loses
    /// processors during a pass).
    span_most: ((u64, u64), u32),
    /// The deferred windows `pmin` does not have yet (those starting
    /// before `PrefixMin::limit`) and their processors in all:
    /// `pmin` is at most that much above the profile's least counts.
    owed: Vec<(u64, u64, u32)>,
    owed_procs: u64,
    /// The processors of all the windows owed.
    owed_total: u64,
    /// The time before which `owed_procs` counts the windows owed.
    owed_until: u64,
}

/// `out` = the sorted lists `a` and `b` merged.
pub(super) fn merge_sorted(a: &[(u64, u32)], b: &[(u64, u32)], out: &mut Vec<(u64, u32)>) {
    out.clear();
    out.reserve(a.len() + b.len());
    let mut i = 0;
    for &x in b {
        let k = i + a[i..].partition_point(|y| *y <= x);
        out.extend_from_slice(&a[i..k]);
        out.push(x);
        i = k;
    }
    out.extend_from_slice(&a[i..]);
}

/// Passes check earlier placements (rather than search afresh) only when
/// at least this many jobs have them.
pub(super) const MIN_CHECKED: usize = 64;

/// The id of the tail's first job when it is empty (ids count down as
/// jobs are pushed in front).
pub(super) const TAIL_BASE: u64 = 1 << 62;

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

    pub(super) fn rebuild(&mut self, view: &BatchView<'_>) {
        let now = view.now;
        expected_ends(&mut self.ends, view);
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
    pub(super) fn reusable(&self, view: &BatchView<'_>) -> bool {
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
    pub(super) fn comparable(&mut self, view: &BatchView<'_>) -> bool {
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
        (self.pos_span, self.neg_span) = sign_spans(&self.diff);
        self.diff_version += 1;
        true
    }

    /// Moves the last pass's placements to `old` (the tail's jobs are
    /// checked against the queue as the pass reaches them).
    pub(super) fn take_old(&mut self) {
        self.old.clear();
        std::mem::swap(&mut self.old, &mut self.saved_jobs);
    }

    /// Forgets the tail.
    pub(super) fn clear_tail(&mut self) {
        self.tail.clear();
        self.tail_carries.clear();
        self.tail_base = TAIL_BASE;
    }

    /// Places `job` at queue position `i` as a pass from scratch would:
    /// by checking its earlier placement if it has one, else by a search.
    /// `horizon`: a time by which every window that can still start now
    /// ends (`PrefixMin::limit`).
    pub(super) fn place_job(&mut self, now: u64, i: usize, job: &QueuedJob, horizon: u64) -> u64 {
        let told = self.old_placement(i, job);
        if let Some(told) = told {
            // (the same job as the one before, deferred at the same time:
            // its window there holds as that one's did (`diff` unchanged),
            // and nothing earlier fits, that job's earliest fit being
            // there; long queues are mostly runs of identical jobs)
            if self.was_deferred
                && self.deferred_at == (told, self.diff_version)
                && self.deferred_job == *job
            {
                self.keep_deferred(job, told, horizon);
                return told;
            }
        }
        self.was_deferred = false;
        let mut holds = false;
        if let Some(told) = told.filter(|&t| t >= now) {
            match self.defer(job, told, horizon) {
                Deferral::Deferred => {
                    self.was_deferred = true;
                    self.deferred_at = (told, self.diff_version);
                    self.deferred_job = *job;
                    return told;
                }
                Deferral::Holds => holds = true,
                Deferral::Unknown => {}
            }
        }
        self.apply_deferred();
        match told {
            Some(told) => self.replace(now, job, told, holds),
            None => self.place_fresh(job.procs, duration(job)),
        }
    }

    /// The placement of the job at queue position `i` in the last pass (or
    /// an earlier one, for the tail), if it has one (`diff` is brought up
    /// to it).
    pub(super) fn old_placement(&mut self, i: usize, job: &QueuedJob) -> Option<u64> {
        let m = self.old.len();
        if i < m {
            return Some(self.old[i].1);
        }
        let k = i - m;
        if k < self.tail.len() {
            if self.tail[k].0 == *job {
                let id = self.tail_base + k as u64;
                while self.tail_carries.front().is_some_and(|c| c.0 <= id) {
                    let (_, c) = self.tail_carries.pop_front().expect("a carry");
                    self.diff_merge(&c);
                }
                return Some(self.tail[k].1);
            }
            // (the queue changed otherwise than by starts and arrivals)
            self.tail.truncate(k);
            let end = self.tail_base + k as u64;
            self.tail_carries.retain(|c| c.0 < end);
        }
        None
    }

    /// Places `procs` × `dur` at its earliest fit by a search from the
    /// lower bounds (`lb`, which it raises if the search started there,
    /// and `fits`).
    pub(super) fn place_fresh(&mut self, procs: u32, dur: u64) -> u64 {
        let lb = self.lb.get(procs);
        let bound = if self.fits_on {
            self.fits.bound(procs, dur)
        } else {
            0
        };
        let (t, first, window, least) = self
            .profile
            .place_after(lb.max(bound), procs, dur)
            .expect("a job no wider than the machine fits once all reservations end");
        self.window = window;
        self.window_least = least;
        if bound <= lb {
            self.lb.raise(procs, first);
        }
        t
    }

    /// Places `job`, which the last pass placed at `told` (its position
    /// and the jobs before it in the queue unchanged, `diff` this pass's
    /// profile minus the last one's at that point), as a search from the
    /// profile's start would, but searching less: a fit starting before
    /// `told` is new, so its window meets a time where `diff > 0`; windows
    /// starting before `told` that do not are skipped. `holds`: the job is
    /// known to fit at `told` ([`Deferral::Holds`]).
    pub(super) fn replace(&mut self, now: u64, job: &QueuedJob, told: u64, holds: bool) -> u64 {
        let procs = job.procs;
        let dur = duration(job);
        if told < now {
            // (reserved at a time now past: placed afresh)
            let t = self.place_fresh(procs, dur);
            self.record_move(now, told, t, dur, procs);
            return t;
        }
        // The span of the times where this profile has more free.
        let (lo, hi) = self.pos_span;
        let lb = self.lb.get(procs);
        // Fits starting in [from_t, limit) may be new; none starts before
        // from_t (before lb or the fits' bound, or windows not reaching lo)
        // or in [limit, told) (windows after hi).
        let limit = hi.min(told);
        // (an empty span is (u64::MAX, 0): lo + 1 wraps to 0, from_t = lb)
        let mut from_t = lb.max(lo.wrapping_add(1).saturating_sub(dur));
        // (the fits' bound, only worth its cost before a search)
        let bound = if lo < hi && from_t < limit {
            self.fits.bound_before(procs, dur, limit)
        } else {
            0
        };
        from_t = from_t.max(bound);
        // (the index of limit, computed once: it is often told's)
        let mut limit_index = None;
        let (fit, first) = if lo < hi && from_t < limit {
            let from = self.profile.index_after(0, from_t);
            let l = self.profile.index_after(from, limit);
            limit_index = Some(l);
            self.profile.find_before(from, procs, dur, l)
        } else {
            (None, usize::MAX)
        };
        // Whether the steps examined follow on from lb (then lb can rise;
        // the bound is then at most lb).
        let from_lb = lo < hi && from_t == lb && from_t < limit;
        let (i, j) = match fit {
            Some(f) => {
                if from_lb {
                    self.lb.raise(procs, self.profile.t[first]);
                }
                f
            }
            None => {
                let start = told.max(lb).max(bound);
                let from = match limit_index {
                    Some(l) if start == limit => l,
                    Some(l) => self.profile.index_after(l, start),
                    None => self.profile.index_near(self.window.0, start),
                };
                if holds && start == told {
                    // (its window at told holds, and nothing before it
                    // does: only its end step is needed)
                    let j = self.profile.index_after(from + 1, told.saturating_add(dur));
                    (from, j)
                } else {
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
            }
        };
        let t = self.profile.t[i];
        self.window_least = self.profile.reserve_at(i, j, t.saturating_add(dur), procs);
        self.window = (i, j);
        self.record_move(now, told, t, dur, procs);
        t
    }

    /// One pass: the reservations of the queue's jobs in order (up to the
    /// point where no later job can start now), the jobs that start now
    /// pushed to `start`, and what the next pass needs saved.
    pub(super) fn pass(&mut self, view: &BatchView<'_>, start: &mut Vec<usize>) {
        expected_ends(&mut self.ends, view);
        self.reservations.clear();
        self.old.clear();
        let from = self.begin_pass(view, start);
        self.place_queue(view, from, start);
        self.keep_tail();
        self.save_pass(view);
    }

    /// Sets up the profile for a pass: the last pass's placements kept
    /// outright if they hold ([`Conservative::reusable`]; then returns how
    /// many jobs they place, already in `reservations`), else a rebuilt
    /// profile whose earlier placements are checked if they can be
    /// ([`Conservative::comparable`]; returns 0).
    #[inline]
    fn begin_pass(&mut self, view: &BatchView<'_>, start: &mut Vec<usize>) -> usize {
        let now = view.now;
        if self.reusable(view) {
            // The profile from now on, with the placed jobs' reservations.
            self.profile.advance(now);
            for (i, &(_, t)) in self.saved_jobs.iter().enumerate() {
                self.reservations.push(t);
                if t == now {
                    start.push(i);
                }
            }
            let m = self.saved_jobs.len();
            self.fits.reset(now);
            // The tail's placements are checked against this profile, which
            // is the last pass's at its end.
            self.take_old();
            if self.tail.len() < MIN_CHECKED {
                self.clear_tail();
            }
            self.diff.clear();
            self.diff.push((now, 0));
            self.pos_span = (u64::MAX, 0);
            self.neg_span = (u64::MAX, 0);
            self.diff_version += 1;
            m
        } else {
            self.profile.rebuild(now, view.free, &self.ends);
            self.lb.reset(view.total);
            self.fits.reset(now);
            // (for a few jobs, searches cost less than tracking diff)
            if self.saved_jobs.len() + self.tail.len() < MIN_CHECKED || !self.comparable(view) {
                self.saved_jobs.clear();
                self.clear_tail();
            }
            0
        }
    }

    /// Places the queue's jobs from position `from` on, in order, until no
    /// later job can start now; pushes those that start now to `start`.
    #[inline]
    fn place_queue(&mut self, view: &BatchView<'_>, from: usize, start: &mut Vec<usize>) {
        let now = view.now;
        let q = view.queue;
        // A job can start now only if it fits in the processors free now
        // (the profile never gains processors during a pass).
        let free0 = self.profile.free_now();
        self.fits_on = q.len() >= MIN_CHECKED;
        // (exact over the whole profile: the candidates' windows end by
        // then)
        self.pmin.build(&self.profile);
        self.owed.clear();
        self.owed_procs = 0;
        self.owed_total = 0;
        self.owed_until = 0;
        // (a new profile)
        self.span_most = ((u64::MAX, u64::MAX), u32::MAX);
        // The last candidate still possible is at `last - 1` (none if
        // `last <= i`), checked against `pmin` (the profile's least free
        // processors from now, kept up to date as jobs are reserved)
        // before each job; those after it cannot start now.
        let mut last = self.pmin.prev_alive(q, from, q.len(), now, free0);
        // (`pmin`'s least count for the candidate `last - 1` (`cached.0`),
        // until `pmin` changes before the candidate's end `cached.2`)
        let mut cached = (usize::MAX, 0u64, 0u64);
        let mut i = from;
        while i < q.len() {
            let job = &q[i];
            while last > i {
                let c = &q[last - 1];
                let until = now.saturating_add(duration(c));
                if cached.0 != last {
                    cached = (last, self.pmin.least(now, duration(c)) as u64, until);
                }
                // (`pmin` is at least the profile's least count: below the
                // candidate's processors, it cannot start now, whatever is
                // owed; most candidates are dropped here, many at once)
                if cached.1 < c.procs as u64 {
                    last = self.pmin.prev_alive(q, i, last - 1, now, free0);
                    continue;
                }
                // (with windows owed, `pmin` may be too high by the sum of
                // those starting before the candidate's end)
                // (all the windows owed: a bound that needs no sum)
                if cached.1 >= c.procs as u64 + self.owed_total {
                    break;
                }
                if until != self.owed_until {
                    self.owed_until = until;
                    self.owed_procs = self
                        .owed
                        .iter()
                        .filter(|w| w.0 < until)
                        .map(|w| w.2 as u64)
                        .sum();
                }
                if cached.1 >= c.procs as u64 + self.owed_procs {
                    break;
                }
                if self.owed_procs > 0 {
                    self.settle_pmin();
                    cached.0 = usize::MAX;
                    continue;
                }
                last = self.pmin.prev_alive(q, i, last - 1, now, free0);
            }
            if last <= i {
                break;
            }
            if job.procs > view.total {
                self.reservations.push(u64::MAX);
                i += 1;
                continue;
            }
            let horizon = self.pmin.limit();
            let t = self.place_job(now, i, job, horizon);
            if self.fits_on {
                self.fits.record(job.procs, duration(job), t);
            }
            self.reservations.push(t);
            if t == now {
                start.push(i);
            }
            i += 1;
            if self.was_deferred && t >= horizon {
                // (the identical jobs after it, deferred at the same time,
                // as `place_job` would; not owed to `pmin`, they leave the
                // stop test as it is)
                i = self.defer_run(i, last.min(q.len()), q, t);
            }
            if !self.was_deferred {
                self.pmin
                    .reserved(&self.profile, self.window.0, self.window.1);
                // (`pmin` changes only from the reservation's start on)
                if t < cached.2 {
                    cached.0 = usize::MAX;
                } else if cached.0 == last {
                    // (the identical jobs after it, placed at the same
                    // time, leave the stop test as it is)
                    i = self.place_run(i, last.min(q.len()), q, now, t);
                }
            }
        }
        self.apply_deferred();
    }

    /// For the next pass, after this one placed `reservations`: the
    /// placements this pass did not reach (it stopped early) join the
    /// tail, with the difference between this profile and theirs; the
    /// tail's jobs this pass placed leave it.
    #[inline]
    fn keep_tail(&mut self) {
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
    }

    /// Saves this pass for the next one: its time, the placed jobs that did
    /// not start now, and the expected ends with those of the jobs started.
    #[inline]
    fn save_pass(&mut self, view: &BatchView<'_>) {
        let now = view.now;
        self.saved = Some(now);
        self.saved_jobs.clear();
        // (the started jobs' ends, sorted, merged into the sorted `ends`:
        // with thousands of running jobs a full sort would cost more than
        // the pass)
        self.started_ends.clear();
        for (j, &t) in view.queue.iter().zip(&self.reservations) {
            if t == u64::MAX {
                // (a job wider than the machine: never reused)
                self.saved = None;
                self.clear_tail();
                break;
            }
            if t == now {
                self.started_ends
                    .push((now.saturating_add(duration(j)), j.procs));
            } else {
                self.saved_jobs.push((*j, t));
            }
        }
        self.started_ends.sort_unstable();
        merge_sorted(&self.ends, &self.started_ends, &mut self.saved_ends);
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
