//! `diff`, a conservative pass's profile minus the last pass's at the
//! same point of the queue: how a pass keeps it (see
//! `Conservative::replace` and docs/policies/batch.md, "Conservative
//! backfilling at scale").

use super::*;

/// The spans `[lo, hi)` of the times where the step function `d` is
/// positive, and negative (`lo >= hi`: nowhere).
pub(super) fn sign_spans(d: &[(u64, i64)]) -> ((u64, u64), (u64, u64)) {
    let mut pos = (u64::MAX, 0);
    let mut neg = (u64::MAX, 0);
    for (k, &(t, v)) in d.iter().enumerate() {
        if v != 0 {
            let s = if v > 0 { &mut pos } else { &mut neg };
            s.0 = s.0.min(t);
            s.1 = d.get(k + 1).map_or(u64::MAX, |s| s.0);
        }
    }
    (pos, neg)
}

impl Conservative {
    /// Adds the step function `c` to `diff` (from `diff`'s first time on).
    pub(super) fn diff_merge(&mut self, c: &[(u64, i64)]) {
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
        (self.pos_span, self.neg_span) = sign_spans(&self.diff);
        self.diff_version += 1;
    }

    /// Records in `diff` that a job of `procs` × `dur` moved from `told`
    /// to `t`: `+procs` on its old window, `-procs` on its new one, only
    /// where they differ (a job moved a little changes `diff` on two short
    /// spans rather than on two whole windows).
    pub(super) fn diff_move(&mut self, told: u64, t: u64, dur: u64, procs: u32) {
        let p = procs as i64;
        let (old_end, new_end) = (told.saturating_add(dur), t.saturating_add(dur));
        if t < told && told < new_end {
            self.diff_add(t, told, -p);
            if new_end < old_end {
                self.diff_add(new_end, old_end, p);
            }
        } else if told < t && t < old_end {
            self.diff_add(told, t, p);
            if old_end < new_end {
                self.diff_add(old_end, new_end, -p);
            }
        } else {
            self.diff_add(told, old_end, p);
            self.diff_add(t, new_end, -p);
        }
    }

    /// Adds `v` to `diff` on `[a, b)` (`a >= diff[0].0`).
    pub(super) fn diff_add(&mut self, a: u64, b: u64, v: i64) {
        // (the step at t, split off if need be, searched for from `from`
        // on: the steps before it are before t)
        let split = |d: &mut Vec<(u64, i64)>, from: usize, t: u64| -> usize {
            let k = partition_point_from(d, from, |s| s.0 < t);
            if k == d.len() || d[k].0 != t {
                let val = d[k - 1].1;
                d.insert(k, (t, val));
            }
            k
        };
        self.diff_version += 1;
        let i = split(&mut self.diff, 0, a);
        let j = split(&mut self.diff, i + 1, b);
        for s in &mut self.diff[i..j] {
            s.1 += v;
        }
        // (windows added and taken away leave steps equal to the one
        // before them: about half of them on long queues; dropped when
        // `diff` has doubled since it was last compact)
        if self.diff.len() > self.diff_compact {
            self.diff.dedup_by(|b, a| a.1 == b.1);
            self.diff_compact = (2 * self.diff.len()).max(64);
        }
        if v != 0 {
            let (lo, hi) = if v > 0 {
                &mut self.pos_span
            } else {
                &mut self.neg_span
            };
            if *lo >= *hi {
                (*lo, *hi) = (a, b);
            } else {
                *lo = (*lo).min(a);
                *hi = (*hi).max(b);
            }
        }
    }

    /// Records in `diff` that a job placed at `told` by the last pass is
    /// placed at `t` by this one.
    pub(super) fn record_move(&mut self, now: u64, told: u64, t: u64, dur: u64, procs: u32) {
        if told < now {
            // (only its old window's part from now on is in `diff`)
            let old_end = told.saturating_add(dur);
            if old_end > now {
                self.diff_add(now, old_end, procs as i64);
            }
            self.diff_add(t, t.saturating_add(dur), -(procs as i64));
        } else if t != told {
            self.diff_move(told, t, dur, procs);
        }
    }
}
