//! Reservations a conservative pass decided without reading the profile,
//! applied to it later in one merge (see `Conservative::defer` and
//! docs/policies/batch.md, "Conservative backfilling at scale").

use super::*;

/// Below this many windows, [`Deferred::apply`] reserves them one by one.
const ONE_BY_ONE: usize = 8;

/// Windows `(start, end, procs)` to reserve on a profile, each starting at
/// one of its steps or at another window's end (as the reservations of a
/// pass do): applied together they give the profile (steps and counts)
/// that reserving them one after the other would.
#[derive(Debug, Clone, Default)]
pub(super) struct Deferred {
    windows: Vec<(u64, u64, u32)>,
    /// Whether every window packs into [`Deferred::key`]s.
    wide: bool,
    /// Scratch: the windows' changes as sort keys, and the new steps.
    keys: Vec<u64>,
    t: Vec<u64>,
    f: Vec<u32>,
}

/// Adds the window `(start, end, procs)` to `windows`, to the last one if
/// it has the same times (and the sum fits); returns the processors of
/// the window it went to.
fn push_window(windows: &mut Vec<(u64, u64, u32)>, start: u64, end: u64, procs: u32) -> u32 {
    match windows.last_mut() {
        Some(w) if (w.0, w.1) == (start, end) && w.2.checked_add(procs).is_some() => {
            w.2 += procs;
            w.2
        }
        _ => {
            windows.push((start, end, procs));
            procs
        }
    }
}

/// Bits of a change's processors in its key; one more for its sign.
const PROC_BITS: u32 = 24;

impl Deferred {
    /// Adds a window (to the last one if it has the same times).
    pub(super) fn push(&mut self, start: u64, end: u64, procs: u32) {
        let procs = push_window(&mut self.windows, start, end, procs);
        self.wide |= end >> (63 - PROC_BITS) != 0 || procs >> PROC_BITS != 0;
    }

    pub(super) fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }

    /// A change of `procs` at `time` as one integer whose order is the
    /// time's (a start takes them, an end gives them back).
    #[inline]
    fn key(time: u64, start: bool, procs: u32) -> u64 {
        (time << (PROC_BITS + 1)) | ((start as u64) << PROC_BITS) | procs as u64
    }

    /// `(time, change in free processors)` of a key.
    #[inline]
    fn change(key: u64) -> (u64, i64) {
        let procs = (key & ((1 << PROC_BITS) - 1)) as i64;
        let start = (key >> PROC_BITS) & 1 == 1;
        (key >> (PROC_BITS + 1), if start { -procs } else { procs })
    }

    /// Reserves the windows on `p` and forgets them.
    pub(super) fn apply(&mut self, p: &mut Profile) {
        if self.windows.len() < ONE_BY_ONE || self.wide {
            for &(a, b, procs) in &self.windows {
                p.reserve(a, b - a, procs);
            }
            self.windows.clear();
            self.wide = false;
            return;
        }
        // (one sort of plain integers, then one merge with the steps from
        // the first change on: the steps before it are kept as they are)
        self.keys.clear();
        for &(a, b, procs) in &self.windows {
            self.keys.push(Self::key(a, true, procs));
            self.keys.push(Self::key(b, false, procs));
        }
        self.windows.clear();
        self.keys.sort_unstable();
        let first = Self::change(self.keys[0]).0;
        let from = p.index(first);
        let (t, f, keys) = (&p.t[from..], &p.f[from..], &self.keys);
        self.t.clear();
        self.f.clear();
        let (mut i, mut k) = (0, 0);
        let (mut base, mut acc) = (if from > 0 { p.f[from - 1] } else { 0 }, 0i64);
        while i < t.len() || k < keys.len() {
            let next = keys.get(k).map(|&e| Self::change(e));
            let time = match (t.get(i), next) {
                (Some(&x), Some((y, _))) => x.min(y),
                (Some(&x), None) => x,
                (None, Some((y, _))) => y,
                (None, None) => unreachable!(),
            };
            if i < t.len() && t[i] == time {
                base = f[i];
                i += 1;
            }
            while k < keys.len() {
                let (y, d) = Self::change(keys[k]);
                if y != time {
                    break;
                }
                acc += d;
                k += 1;
            }
            let free = base as i64 + acc;
            debug_assert!(free >= 0, "a deferred window lacks processors");
            self.t.push(time);
            self.f.push(free as u32);
        }
        p.t.truncate(from);
        p.f.truncate(from);
        p.t.extend_from_slice(&self.t);
        p.f.extend_from_slice(&self.f);
    }
}

/// What [`Conservative::defer`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Deferral {
    /// The reservation at the old time is deferred.
    Deferred,
    /// The job fits at its old time, but a fit before it may be new.
    Holds,
    /// Nothing known: the job is placed by a check.
    Unknown,
}

impl Conservative {
    /// Brings `pmin` up to date with the deferred windows it lacks.
    pub(super) fn settle_pmin(&mut self) {
        self.apply_deferred();
        if self.owed.len() > 8 {
            self.pmin.build(&self.profile);
        } else {
            for &(a, b, _) in &self.owed {
                let (i, j) = (self.profile.index(a), self.profile.index(b));
                self.pmin.reserved(&self.profile, i, j);
            }
        }
        self.owed.clear();
        self.owed_procs = 0;
        self.owed_total = 0;
    }

    /// Reserves the deferred placements on the profile.
    pub(super) fn apply_deferred(&mut self) {
        if !self.deferred.is_empty() {
            self.deferred.apply(&mut self.profile);
        }
    }

    /// Whether `job`'s placement at `told` (from the last pass, `diff` up
    /// to date) is known to hold without reading the profile; if so, its
    /// reservation is deferred. It holds if (1) its window at `told` meets
    /// no time where `diff < 0` (the window held on the last profile, and
    /// this one has at least as many processors free there) and (2) no
    /// window starting before `told` can be new: none meets `diff > 0`
    /// after the job's lower bound (as in [`Conservative::replace`]).
    /// The reservation is owed to `pmin` (the stop test allows for it)
    /// if it starts before `horizon`, a time by which every window that
    /// can still start now ends; later ones cannot change the test.
    /// Not deferred, the job is known to fit at `told` if (1) holds.
    pub(super) fn defer(&mut self, job: &QueuedJob, told: u64, horizon: u64) -> Deferral {
        let dur = duration(job);
        let end = told.saturating_add(dur);
        let (nlo, nhi) = self.neg_span;
        if nlo < nhi && told < nhi && end > nlo {
            // (only the part of the window in the span can meet `diff < 0`)
            let (mut a, b) = (told.max(nlo), end.min(nhi));
            if self.diff_known.0 != self.diff_version {
                self.diff_known = (self.diff_version, (0, 0), (0, 0));
            }
            let (_, clean, neg) = self.diff_known;
            // (a step with `diff < 0` inside the window, found before)
            if neg.0 < neg.1 && neg.0 < b && a < neg.1 {
                return Deferral::Unknown;
            }
            // (a part known to have none)
            if clean.0 <= a && a < clean.1 {
                a = clean.1;
            }
            if a < b {
                let d = &self.diff;
                let mut k = d.partition_point(|s| s.0 <= a) - 1;
                while k < d.len() && d[k].0 < b {
                    if d[k].1 < 0 {
                        let next = d.get(k + 1).map_or(u64::MAX, |s| s.0);
                        self.diff_known.2 = (d[k].0, next);
                        return Deferral::Unknown;
                    }
                    k += 1;
                }
                // (no step with `diff < 0` meets [a, b))
                self.diff_known.1 = if clean.0 <= a && a <= clean.1 {
                    (clean.0, b.max(clean.1))
                } else {
                    (a, b)
                };
            }
        }
        let (lo, hi) = self.pos_span;
        if lo < hi && job.procs <= self.most_free_in_span() {
            let limit = hi.min(told);
            let from_t = self
                .lb
                .get(job.procs)
                .max(lo.wrapping_add(1).saturating_sub(dur));
            if from_t < limit
                && !self.fits.last_reaches(job.procs, dur, limit)
                && self.fits.bound(job.procs, dur) < limit
            {
                return Deferral::Holds;
            }
        }
        self.keep_deferred(job, told, horizon);
        Deferral::Deferred
    }

    /// Defers `job`'s reservation at `told`, owed to `pmin` if it starts
    /// before `horizon` (see [`Conservative::defer`]).
    pub(super) fn keep_deferred(&mut self, job: &QueuedJob, told: u64, horizon: u64) {
        let end = told.saturating_add(duration(job));
        self.deferred.push(told, end, job.procs);
        if told < horizon {
            push_window(&mut self.owed, told, end, job.procs);
            self.owed_total += job.procs as u64;
            if told < self.owed_until {
                self.owed_procs += job.procs as u64;
            }
        }
    }

    /// At least the most processors free at any time in `pos_span`: a job
    /// wider cannot have a new fit.
    pub(super) fn most_free_in_span(&mut self) -> u32 {
        let (lo, hi) = self.pos_span;
        if self.span_most.0 != (lo, hi) {
            let (t, f) = (&self.profile.t, &self.profile.f);
            let a = t.partition_point(|&x| x <= lo).max(1) - 1;
            let b = t.partition_point(|&x| x < hi).max(a + 1);
            let most = f[a..b].iter().copied().max().unwrap_or(u32::MAX);
            self.span_most = ((lo, hi), most);
        }
        self.span_most.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Windows applied together (in any order, through the merge from
        /// 8 on, equal ones pushed as one, times too large for the packed
        /// keys reserved one by one) give the steps and counts of
        /// reserving them one after the other as a pass does.
        #[test]
        fn deferred_windows_applied_at_once_equal_reserving_them_in_turn(
            now in 0u64..1000,
            far in any::<bool>(),
            free in 0u32..=16,
            ends in proptest::collection::vec((1u64..200, 1u32..=8), 0..8),
            jobs in proptest::collection::vec((1u32..=16, 1u64..120, 1usize..=3), 1..40),
            rotate in 0usize..40,
        ) {
            // (runs of identical jobs, as queues have)
            let jobs: Vec<(u32, u64)> = jobs
                .into_iter()
                .flat_map(|(p, d, n)| std::iter::repeat_n((p, d), n))
                .collect();
            let now = if far { now + (1 << 45) } else { now };
            let mut ends: Vec<(u64, u32)> =
                ends.into_iter().map(|(d, p)| (now + d, p)).collect();
            ends.sort_unstable();
            let total = free + ends.iter().map(|e| e.1).sum::<u32>();
            let mut start = Profile::default();
            start.rebuild(now, free, &ends);
            let mut one_by_one = start.clone();
            let mut windows = Vec::new();
            for (procs, dur) in jobs {
                if procs > total {
                    continue;
                }
                let t = one_by_one.place(procs, dur).expect("a fit");
                windows.push((t, t + dur, procs));
            }
            let k = rotate % windows.len().max(1);
            windows.rotate_left(k);
            let mut d = Deferred::default();
            for &(a, b, p) in &windows {
                d.push(a, b, p);
            }
            let mut at_once = start.clone();
            d.apply(&mut at_once);
            prop_assert!(d.is_empty());
            prop_assert_eq!(at_once.steps(), one_by_one.steps());
        }
    }
}
