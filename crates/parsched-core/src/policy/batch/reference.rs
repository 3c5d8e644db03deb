//! The straightforward implementations the faster ones must agree with
//! (tests compare the schedules): EASY scanning the whole queue, and
//! conservative backfilling placing every job up to the narrowest one that
//! could still start, each search from the profile's start.

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
