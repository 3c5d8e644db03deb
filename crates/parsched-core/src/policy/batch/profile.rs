//! The availability profile conservative backfilling places reservations on:
//! free processors over time, as steps.

/// An availability profile: free processors as a step function of time.
/// Step `k` (time `t[k]`, `f[k]` free) means `f[k]` processors are free on
/// `[t[k], t[k+1])`; the last step extends forever. (Times and counts are
/// kept apart so that scans over counts read one dense array.)
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profile {
    pub(super) t: Vec<u64>,
    pub(super) f: Vec<u32>,
}

/// The first index `>= i` whose count is at least `procs` (`f.len()` if
/// none): blocks of counts are tested at once, then one at a time.
#[inline]
pub(super) fn skip_below(f: &[u32], mut i: usize, procs: u32) -> usize {
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

/// The first index `>= from` of `s` whose element is not `before` (`s`
/// is partitioned by `before`, and every element before `from` is): an
/// exponential search from `from`, cheaper than a binary search over the
/// whole slice when the answer is near `from`.
#[inline]
pub(super) fn partition_point_from<T>(s: &[T], from: usize, before: impl Fn(&T) -> bool) -> usize {
    let n = s.len();
    let (mut a, mut step) = (from, 1);
    // s[..a] are before; look at a + step - 1
    while a + step <= n {
        if !before(&s[a + step - 1]) {
            return a + s[a..a + step - 1].partition_point(&before);
        }
        a += step;
        step *= 2;
    }
    a + s[a..].partition_point(&before)
}

/// Whether the window from step `i` to time `end` has `procs` processors
/// free at every step after `i` (step `i` itself is the caller's):
/// `Ok(j)`, `j` the first step at or after `end`, or `Err(k)`, `k` the
/// first step lacking them. The first steps one at a time (a window that
/// fails mostly fails there); beyond them, the window's end by a binary
/// search and its counts tested in blocks (with thousands of steps a
/// window that holds spans a hundred steps or more).
#[inline]
pub(super) fn check_window(
    t: &[u64],
    f: &[u32],
    i: usize,
    end: u64,
    procs: u32,
) -> Result<usize, usize> {
    const ONE_BY_ONE: usize = 8;
    const W: usize = 16;
    let n = t.len();
    let mut j = i + 1;
    let stop = (j + ONE_BY_ONE).min(n);
    while j < stop {
        if t[j] >= end {
            return Ok(j);
        }
        if f[j] < procs {
            return Err(j);
        }
        j += 1;
    }
    let e = j + t[j..].partition_point(|&x| x < end);
    let mut k = j;
    while k + W <= e {
        let block: &[u32; W] = f[k..k + W].try_into().expect("a block of W");
        if block.iter().fold(false, |a, &x| a | (x < procs)) {
            break;
        }
        k += W;
    }
    match f[k..e].iter().position(|&x| x < procs) {
        Some(p) => Err(k + p),
        None => Ok(e),
    }
}

/// The first index `>= i` whose count is below `v` (`f.len()` if none):
/// blocks of counts are tested at once, then one at a time.
#[inline]
pub(super) fn first_below(f: &[u32], mut i: usize, v: u32) -> usize {
    const W: usize = 16;
    while i + W <= f.len() {
        let block: &[u32; W] = f[i..i + W].try_into().expect("a block of W");
        if block.iter().fold(false, |a, &x| a | (x < v)) {
            break;
        }
        i += W;
    }
    while i < f.len() && f[i] >= v {
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
    pub(super) fn index(&self, t: u64) -> usize {
        self.t.partition_point(|&x| x < t)
    }

    /// As [`Profile::index`], by an exponential search from step `hint`
    /// (either way): cheaper than a binary search when the step is near.
    pub(super) fn index_near(&self, hint: usize, t: u64) -> usize {
        let ts = &self.t;
        let h = hint.min(ts.len());
        if h < ts.len() && ts[h] < t {
            return self.index_after(h + 1, t);
        }
        // ts[h..] are at or after t: look back from h
        let (mut b, mut step) = (h, 1);
        while b >= step {
            if ts[b - step] < t {
                return b - step + 1 + ts[b - step + 1..b].partition_point(|&x| x < t);
            }
            b -= step;
            step *= 2;
        }
        ts[..b].partition_point(|&x| x < t)
    }

    /// As [`Profile::index`], knowing that the steps before `lo` are
    /// before `t`: an exponential search from `lo` (cheaper than a binary
    /// search over the whole profile when the step is near `lo`).
    pub(super) fn index_after(&self, lo: usize, t: u64) -> usize {
        partition_point_from(&self.t, lo, |&x| x < t)
    }

    /// The earliest time at which `procs` processors are free for `dur`
    /// ticks. `None` if never (more processors than the profile's maximum).
    pub fn earliest(&self, procs: u32, dur: u64) -> Option<u64> {
        self.find(procs, dur).map(|(i, _)| self.t[i])
    }

    /// `(i, j)`: the fit starts at step `i`; `j` is the first step at or
    /// after the fit's end.
    pub(super) fn find(&self, procs: u32, dur: u64) -> Option<(usize, usize)> {
        self.find_from(0, procs, dur).map(|(i, j, _)| (i, j))
    }

    /// As `find`, examining steps from `from` on (every earlier step must be
    /// known to have fewer than `procs` processors free); the third value is
    /// the first step examined with at least `procs` free.
    pub(super) fn find_from(
        &self,
        from: usize,
        procs: u32,
        dur: u64,
    ) -> Option<(usize, usize, usize)> {
        let (t, f) = (&self.t[..], &self.f[..]);
        let n = f.len();
        let mut i = skip_below(f, from, procs);
        let first = i;
        while i < n {
            match check_window(t, f, i, t[i].saturating_add(dur), procs) {
                Ok(j) => return Some((i, j, first)),
                Err(k) => i = skip_below(f, k + 1, procs),
            }
        }
        None
    }

    /// As `find_from`, but only fits starting before step `limit` (the
    /// index of a time); the second value is the first step examined with
    /// at least `procs` free (`usize::MAX` if none).
    pub(super) fn find_before(
        &self,
        from: usize,
        procs: u32,
        dur: u64,
        limit: usize,
    ) -> (Option<(usize, usize)>, usize) {
        let (t, f) = (&self.t[..], &self.f[..]);
        // the steps before limit
        let fl = &f[..limit];
        let mut i = skip_below(fl, from.min(fl.len()), procs);
        let first = if i < fl.len() { i } else { usize::MAX };
        while i < fl.len() {
            match check_window(t, f, i, t[i].saturating_add(dur), procs) {
                Ok(j) => return (Some((i, j)), first),
                Err(k) => i = skip_below(fl, (k + 1).min(fl.len()), procs),
            }
        }
        (None, first)
    }

    /// `place` skipping the steps before `lb` (the caller knows that none
    /// has `procs` processors free); returns the fit's time and the time of
    /// the first step with `procs` free.
    /// (Also returns the steps `[i, j)` reserved and the fewest free on
    /// them after.)
    pub(super) fn place_after(
        &mut self,
        lb: u64,
        procs: u32,
        dur: u64,
    ) -> Option<(u64, u64, (usize, usize), u32)> {
        let from = self.index(lb);
        let (i, j, first) = self.find_from(from, procs, dur)?;
        let (t, tf) = (self.t[i], self.t[first]);
        let least = self.reserve_at(i, j, t.saturating_add(dur), procs);
        Some((t, tf, (i, j), least))
    }

    /// Reserves `procs` processors on `[t[i], end)` where `j` is the first
    /// step at or after `end`; returns the fewest free then on those steps.
    pub(super) fn reserve_at(&mut self, i: usize, j: usize, end: u64, procs: u32) -> u32 {
        if j >= self.t.len() || self.t[j] != end {
            let free = self.f[j - 1];
            self.t.insert(j, end);
            self.f.insert(j, free);
        }
        let mut least = u32::MAX;
        for f in &mut self.f[i..j] {
            *f -= procs;
            least = least.min(*f);
        }
        least
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
    pub(super) fn split(&mut self, t: u64) -> usize {
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
    pub(super) fn advance(&mut self, now: u64) {
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

    /// The first time in `[t, t + dur)` at which fewer than `procs`
    /// processors are free, with the count then (`None`: they are free over
    /// the whole interval, which may then be [`Profile::reserve`]d). `t` at
    /// or after the profile's first time.
    pub fn shortfall(&self, t: u64, dur: u64, procs: u32) -> Option<(u64, u32)> {
        let end = t.saturating_add(dur.max(1));
        // the step holding t, then every step starting before the end
        let k = self.t.partition_point(|&x| x <= t).max(1) - 1;
        for i in k..self.t.len() {
            if i > k && self.t[i] >= end {
                break;
            }
            if self.f[i] < procs {
                return Some((self.t[i].max(t), self.f[i]));
            }
        }
        None
    }

    /// Free processors at the profile's first time.
    pub fn free_now(&self) -> u32 {
        self.f.first().copied().unwrap_or(0)
    }
}

/// The fewest processors free from a profile's first time `now` up to each
/// time, as the steps where that least count drops: entry `(t, m)` means
/// `m` is the least over `[now, T]` for every `T` from `t` to the next
/// entry's time (times increasing, counts decreasing). A job of `procs` ×
/// `dur` fits now iff the first entry below `procs` is at or after
/// `now + dur` (a binary search). Kept up to date as a pass reserves
/// windows ([`PrefixMin::reserved`]): a reservation on `[a, b)` can only
/// lower the least count at times in `[a, b)` (recomputed from the
/// reservation's own steps) and, after `b`, to the least count reached at
/// `b` (entries not below it are dropped). The steps end at the first
/// time with no processor free, if any.
#[derive(Debug, Clone, Default)]
pub(super) struct PrefixMin {
    s: Vec<(u64, u32)>,
    scratch: Vec<(u64, u32)>,
}

impl PrefixMin {
    /// Recomputes the steps from `p`.
    pub(super) fn build(&mut self, p: &Profile) {
        self.s.clear();
        let mut cur = u32::MAX;
        for (&t, &f) in p.t.iter().zip(&p.f) {
            if f < cur {
                cur = f;
                self.s.push((t, f));
                if f == 0 {
                    break;
                }
            }
        }
    }

    /// The fewest processors free over `[now, now + dur)` (`now` the
    /// profile's first time, `dur >= 1`).
    #[inline]
    pub(super) fn least(&self, now: u64, dur: u64) -> u32 {
        let end = now.saturating_add(dur);
        // (the stop test drops most candidates here: their windows reach
        // past the staircase's last drop, often to no processor free)
        let last = self.s[self.s.len() - 1];
        if last.0 < end {
            return last.1;
        }
        let k = self.s.partition_point(|e| e.0 < end);
        self.s[k - 1].1
    }

    /// A time by which every window that can still start now ends: the
    /// first with no processor free (`u64::MAX` if none).
    pub(super) fn limit(&self) -> u64 {
        let last = self.s[self.s.len() - 1];
        if last.1 == 0 {
            last.0
        } else {
            u64::MAX
        }
    }

    /// `k + 1` for the last position `k` in `[lo, hi)` of `q` whose job
    /// fits in `free0` processors and in the least count over its window
    /// from `now`; `lo` if none. (A backward scan: on a long queue most
    /// jobs fit in the processors free now but not for their whole
    /// requested time once the pass has reserved the holes.)
    pub(super) fn prev_alive(
        &self,
        q: &[super::QueuedJob],
        lo: usize,
        hi: usize,
        now: u64,
        free0: u32,
    ) -> usize {
        let mut k = hi;
        // (runs of identical jobs: one test each)
        let mut dead = super::QueuedJob {
            procs: u32::MAX,
            requested: 0,
        };
        while k > lo {
            let j = &q[k - 1];
            if *j == dead {
                k -= 1;
                continue;
            }
            dead = *j;
            if j.procs <= free0 && self.least(now, super::duration(j)) >= j.procs {
                return k;
            }
            k -= 1;
        }
        lo
    }

    /// After `p` lost processors on its steps `[i, j)` (a reservation:
    /// step `j` starts at its end).
    pub(super) fn reserved(&mut self, p: &Profile, i: usize, j: usize) {
        let (a, b) = (p.t[i], p.t[j]);
        // the entries before a, and the least count before a
        let k0 = self.s.partition_point(|e| e.0 < a);
        let mut cur = if k0 == 0 { u32::MAX } else { self.s[k0 - 1].1 };
        if cur == 0 {
            return;
        }
        self.scratch.clear();
        // the steps of [a, b), from the first below cur to the next
        let f = &p.f[..j];
        let mut k = first_below(f, i, cur);
        while k < j {
            cur = f[k];
            self.scratch.push((p.t[k], cur));
            if cur == 0 {
                break;
            }
            k = first_below(f, k + 1, cur);
        }
        // the old entries in [a, b), and those after b not below cur
        let k1 = k0 + self.s[k0..].partition_point(|e| e.0 < b);
        let k2 = k1 + self.s[k1..].partition_point(|e| e.1 >= cur);
        self.s.splice(k0..k2, self.scratch.drain(..));
    }
}
