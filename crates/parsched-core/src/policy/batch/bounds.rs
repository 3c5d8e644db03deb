//! Lower bounds on where a conservative pass's searches can find a fit:
//! per processor count ([`LowerBounds`]) and from the pass's latest
//! earliest fits ([`FitBounds`]).

/// Per processor count `p`, a time before which no step of the profile has
/// `p` processors free; a query for `p` takes the maximum over counts
/// `<= p` (a Fenwick tree of maxima). Entries of earlier passes are stale
/// (epoch).
#[derive(Debug, Clone, Default)]
pub(super) struct LowerBounds {
    epoch: u32,
    tree: Vec<(u32, u64)>,
}

impl LowerBounds {
    pub(super) fn reset(&mut self, total: u32) {
        let n = total as usize + 1;
        if self.tree.len() != n || self.epoch == u32::MAX {
            self.tree.clear();
            self.tree.resize(n, (0, 0));
            self.epoch = 0;
        }
        self.epoch += 1;
    }

    pub(super) fn raise(&mut self, p: u32, t: u64) {
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

    pub(super) fn get(&self, p: u32) -> u64 {
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

/// How many of a pass's latest earliest fits [`FitBounds`] keeps.
pub(super) const FITS_KEPT: usize = 16;

/// The latest earliest fits found in the current pass, as lower bounds on
/// the searches of the jobs after them. The profile only loses processors
/// during a pass, so once a job of `p` processors for `d` ticks had its
/// earliest fit at `t`, no job of at least `p` processors for at least `d`
/// ticks has a fit starting before `t` for the rest of the pass: its
/// window over such a start would contain that job's window there, with
/// no more processors free than when that job found none. (The queue's
/// order makes the latest fits the latest in time too, so a short ring of
/// them, scanned whole, gives most of the bound.) Entries are 32-bit, for
/// a scan in vector registers: times are kept as offsets from the pass's
/// time, rounded down to `u32::MAX` (a lower bound stays one), and fits of
/// `u32::MAX` ticks or more are not kept.
#[derive(Debug, Clone)]
pub(super) struct FitBounds {
    base: u64,
    procs: [u32; FITS_KEPT],
    dur: [u32; FITS_KEPT],
    time: [u32; FITS_KEPT],
    next: usize,
    /// The latest fit recorded, `(procs, dur, time)`, exact.
    last: (u32, u64, u64),
}

impl Default for FitBounds {
    fn default() -> Self {
        FitBounds {
            base: 0,
            procs: [u32::MAX; FITS_KEPT],
            dur: [u32::MAX; FITS_KEPT],
            time: [0; FITS_KEPT],
            next: 0,
            last: (u32::MAX, u64::MAX, 0),
        }
    }
}

impl FitBounds {
    /// Forgets every fit (a new pass at `now`, a new profile).
    pub(super) fn reset(&mut self, now: u64) {
        *self = FitBounds {
            base: now,
            ..FitBounds::default()
        };
    }

    /// Records that a job of `procs` × `dur` had its earliest fit at `t`
    /// (at or after the pass's time).
    pub(super) fn record(&mut self, procs: u32, dur: u64, t: u64) {
        // (runs of identical jobs at one time would fill the ring with
        // copies of one fit)
        if self.last == (procs, dur, t) {
            return;
        }
        self.last = (procs, dur, t);
        if dur >= u32::MAX as u64 {
            return;
        }
        let k = self.next;
        self.procs[k] = procs;
        self.dur[k] = dur as u32;
        self.time[k] = t.saturating_sub(self.base).min(u32::MAX as u64) as u32;
        self.next = (k + 1) % FITS_KEPT;
    }

    /// Whether the latest fit recorded shows that no fit of `procs` ×
    /// `dur` starts before `limit` (a job no wider and no longer, its
    /// earliest fit at or after `limit`): an O(1) test that, on long
    /// queues, decides most of the questions [`FitBounds::bound`] would
    /// (consecutive jobs of a queue are often alike and placed in turn).
    #[inline]
    pub(super) fn last_reaches(&self, procs: u32, dur: u64, limit: u64) -> bool {
        let (p, d, t) = self.last;
        p <= procs && d <= dur && t >= limit
    }

    /// A time before which no fit of `procs` × `dur` starts: the latest
    /// fit's if it shows none starts before `limit`
    /// ([`FitBounds::last_reaches`]), else [`FitBounds::bound`].
    #[inline]
    pub(super) fn bound_before(&self, procs: u32, dur: u64, limit: u64) -> u64 {
        if self.last_reaches(procs, dur, limit) {
            self.last.2
        } else {
            self.bound(procs, dur)
        }
    }

    /// A time before which no fit of `procs` × `dur` starts (0 if none is
    /// known): the latest kept fit of a job no wider and no longer.
    pub(super) fn bound(&self, procs: u32, dur: u64) -> u64 {
        let d = dur.min(u32::MAX as u64) as u32;
        // (masks rather than branches, and four independent maxima rather
        // than one chain of sixteen dependent ones)
        let mut acc = [0u32; 4];
        for k in 0..FITS_KEPT {
            let dominated = ((self.procs[k] <= procs) & (self.dur[k] <= d)) as u32;
            let a = &mut acc[k % 4];
            *a = (*a).max(self.time[k] & 0u32.wrapping_sub(dominated));
        }
        let m = acc[0].max(acc[1]).max(acc[2].max(acc[3]));
        if m == 0 {
            0
        } else {
            self.base + m as u64
        }
    }
}
