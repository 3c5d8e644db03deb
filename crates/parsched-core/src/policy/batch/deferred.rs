//! Reservations a conservative pass decided without reading the profile,
//! applied to it later in one merge (see `Conservative::defer` and
//! docs/policies/batch.md, "Conservative backfilling at scale").

use super::profile::Profile;

/// Below this many windows, [`Deferred::apply`] reserves them one by one.
const ONE_BY_ONE: usize = 8;

/// Windows `(start, end, procs)` to reserve on a profile, each starting at
/// one of its steps or at another window's end (as the reservations of a
/// pass do): applied together they give the profile (steps and counts)
/// that reserving them one after the other would.
#[derive(Debug, Clone, Default)]
pub(super) struct Deferred {
    windows: Vec<(u64, u64, u32)>,
    /// Scratch: the windows' changes `(time, delta)`, and the new steps.
    events: Vec<(u64, i64)>,
    t: Vec<u64>,
    f: Vec<u32>,
}

impl Deferred {
    pub(super) fn push(&mut self, start: u64, end: u64, procs: u32) {
        self.windows.push((start, end, procs));
    }

    pub(super) fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }

    /// Reserves the windows on `p` and forgets them.
    pub(super) fn apply(&mut self, p: &mut Profile) {
        if self.windows.len() < ONE_BY_ONE {
            for &(a, b, procs) in &self.windows {
                p.reserve(a, b - a, procs);
            }
            self.windows.clear();
            return;
        }
        self.events.clear();
        for &(a, b, procs) in &self.windows {
            self.events.push((a, -(procs as i64)));
            self.events.push((b, procs as i64));
        }
        self.windows.clear();
        self.events.sort_unstable_by_key(|e| e.0);
        let (t, f, ev) = (&p.t, &p.f, &self.events);
        self.t.clear();
        self.f.clear();
        let (mut i, mut k) = (0, 0);
        let (mut base, mut acc) = (0u32, 0i64);
        while i < t.len() || k < ev.len() {
            let time = match (t.get(i), ev.get(k)) {
                (Some(&x), Some(&(y, _))) => x.min(y),
                (Some(&x), None) => x,
                (None, Some(&(y, _))) => y,
                (None, None) => unreachable!(),
            };
            if i < t.len() && t[i] == time {
                base = f[i];
                i += 1;
            }
            while k < ev.len() && ev[k].0 == time {
                acc += ev[k].1;
                k += 1;
            }
            let free = base as i64 + acc;
            debug_assert!(free >= 0, "a deferred window lacks processors");
            self.t.push(time);
            self.f.push(free as u32);
        }
        std::mem::swap(&mut p.t, &mut self.t);
        std::mem::swap(&mut p.f, &mut self.f);
    }
}
