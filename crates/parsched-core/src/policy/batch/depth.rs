//! Backfilling with a reservation depth: the first `k` waiting jobs that
//! cannot start now get reservations, the others start only if they delay
//! none of them. Depth 1 is EASY, an unbounded depth conservative
//! backfilling — the family between them that schedulers expose as a
//! setting (Maui and Moab's `RESERVATIONDEPTH`; Slurm's backfill plugin
//! plans `bf_max_job_test` jobs), studied by D. Feitelson and A. Weil,
//! "Utilization and predictability in scheduling the IBM SP2 with
//! backfilling", IPPS 1998, and by S.-H. Chiang, A. Arpaci-Dusseau and
//! M. Vernon, "The impact of more accurate requested runtimes on
//! production job scheduling performance", JSSPP 2002 (section 4: the
//! number of reservations).
//!
//! At each pass, on the availability profile of the running jobs' expected
//! ends (`max(requested end, now + 1)`, as EASY and conservative), the queue
//! is walked in its order: a job is placed at the earliest time its
//! processors are free for its whole requested time; placed *now* it
//! starts; placed later it keeps that reservation while fewer than `k`
//! jobs hold one. Once `k` jobs hold reservations the walk goes on over the
//! rest of the queue — in `backfill` order when the machine gives one (EASY
//! with its own backfill order) — starting each job that fits now without
//! delaying any reservation. With `k = 1` this is EASY's rule (a candidate
//! ends before the shadow time or uses only the extra processors: both mean
//! its processors are free on the profile for its requested time), and with
//! `k` at least the queue's length it is conservative backfilling; both are
//! property-tested against the dedicated policies.
//!
//! Cost: a pass is O(q · s) for a queue of q jobs over a profile of s
//! steps — the straightforward algorithm, not the dedicated policies'
//! indexed ones.

use super::{duration, expected_ends, BatchPolicy, BatchView, Profile};

/// Backfilling with at most `k` reservations (`k >= 1`).
#[derive(Debug, Clone, Default)]
pub struct Depth {
    pub k: usize,
    ends: Vec<(u64, u32)>,
    profile: Profile,
    rest: Vec<usize>,
}

impl Depth {
    pub fn new(k: usize) -> Depth {
        Depth {
            k: k.max(1),
            ..Depth::default()
        }
    }
}

impl BatchPolicy for Depth {
    fn name(&self) -> &'static str {
        "depth"
    }

    fn schedule(&mut self, view: &BatchView<'_>, start: &mut Vec<usize>) {
        let now = view.now;
        expected_ends(&mut self.ends, view);
        self.profile.rebuild(now, view.free, &self.ends);
        let mut reserved = 0;
        let mut last = view.queue.len();
        for (i, q) in view.queue.iter().enumerate() {
            let d = duration(q);
            let t = self
                .profile
                .earliest(q.procs, d)
                .expect("a job no wider than the machine fits once the running jobs end");
            self.profile.reserve(t, d, q.procs);
            if t == now {
                start.push(i);
            } else {
                reserved += 1;
                if reserved == self.k {
                    last = i;
                    break;
                }
            }
        }
        // the rest: backfill candidates, starting only now
        self.rest.clear();
        match view.backfill {
            Some(order) => self
                .rest
                .extend(order.iter().copied().filter(|&p| p > last)),
            None => self.rest.extend(last + 1..view.queue.len()),
        }
        let free_now = |p: &Profile| p.free_now();
        for k in 0..self.rest.len() {
            let p = self.rest[k];
            let q = &view.queue[p];
            if q.procs > free_now(&self.profile) {
                continue;
            }
            let d = duration(q);
            if self.profile.shortfall(now, d, q.procs).is_none() {
                self.profile.reserve(now, d, q.procs);
                start.push(p);
            }
        }
        start.sort_unstable();
    }
}
