//! Runs of identical jobs (the same processors and requested time, as
//! array jobs are submitted), which make most of a long queue: placed or
//! deferred together by a conservative pass (see
//! docs/policies/batch.md, "Conservative backfilling at scale").

use super::*;

impl Conservative {
    /// Defers the jobs from queue position `i` up to `end` that are the
    /// same as the one before, were placed at `t` by the last pass (not
    /// the tail's) and `t` is not owed to `pmin`: each as
    /// [`Conservative::place_job`] would by its first test, the windows
    /// as one. Returns the position of the first job not deferred.
    pub(super) fn defer_run(&mut self, mut i: usize, end: usize, q: &[QueuedJob], t: u64) -> usize {
        if self.deferred_at != (t, self.diff_version) {
            return i;
        }
        let job = self.deferred_job;
        let end = end.min(self.old.len());
        let first = i;
        while i < end && q[i] == job && self.old[i].1 == t {
            i += 1;
        }
        let n = (i - first) as u64;
        if n > 0 {
            // (processors summed in pieces that fit in a u32)
            let per = (u32::MAX / job.procs.max(1)) as u64;
            let mut left = n;
            while left > 0 {
                let k = left.min(per);
                self.deferred
                    .push(t, t.saturating_add(duration(&job)), k as u32 * job.procs);
                left -= k;
            }
            self.reservations
                .resize(self.reservations.len() + n as usize, t);
        }
        i
    }

    /// Places the jobs from queue position `i` up to `end` that are the
    /// same as the one before, which was just reserved at `t` on the steps
    /// `window` (not deferred): as many as still fit there, their earliest
    /// fit (the same job's was there, and a pass only takes processors
    /// away), in one reservation. Returns the position of the first job
    /// not placed. (Long queues are mostly runs of identical jobs.)
    pub(super) fn place_run(
        &mut self,
        mut i: usize,
        end: usize,
        q: &[QueuedJob],
        now: u64,
        t: u64,
    ) -> usize {
        let job = q[i - 1];
        let (a, b) = self.window;
        if job.procs == 0 || i >= end || q[i] != job {
            return i;
        }
        debug_assert_eq!(self.profile.f[a..b].iter().min(), Some(&self.window_least));
        let fit = (self.window_least / job.procs) as usize;
        let first = i;
        let dur = duration(&job);
        // (the moves of jobs from one old time recorded together)
        let mut moved = (0u64, 0u32);
        while i < end && i - first < fit && q[i] == job {
            if let Some(told) = self.old_placement(i, &job) {
                if moved.1 > 0 && moved.0 != told {
                    self.record_move(now, moved.0, t, dur, moved.1);
                    moved.1 = 0;
                }
                moved = (told, moved.1 + job.procs);
            }
            self.reservations.push(t);
            i += 1;
        }
        if moved.1 > 0 {
            self.record_move(now, moved.0, t, dur, moved.1);
        }
        let taken = (i - first) as u32 * job.procs;
        if taken > 0 {
            for f in &mut self.profile.f[a..b] {
                *f -= taken;
            }
            self.window_least -= taken;
            self.pmin.reserved(&self.profile, a, b);
        }
        i
    }
}
