//! The exact fast path for a co-scheduled busy-waiting gang: whole
//! iterations computed at once up to the next quantum or slot end, committed
//! by one event (same draws, times and accounting as the event path).

use super::*;

/// Draws one compute (ticks) as `Cursor::next` does, with the uniform of
/// §3.3 inlined (the same arithmetic, so the same values): the fast paths'
/// draws, made in thread order.
#[inline(always)]
pub(super) fn draw(demand: &Dist, width: u32, rng: &mut StreamRng) -> u64 {
    match *demand {
        Dist::Uniform { lo, hi } => ticks(lo + (hi - lo) * rng.random::<f64>()),
        _ => ticks(demand.sample(width, rng)),
    }
}

impl<L: LocalScheduler> SyncMachine<L> {
    /// Fast path for a co-scheduled busy-waiting gang: while every thread of
    /// the gang holds its processor and whole iterations fit before the
    /// earliest quantum or slot end, nothing can interrupt them, so they are
    /// computed at once (same draws, same times, same accounting as the
    /// event-by-event path) and committed by one `Batch` event at the end.
    /// Returns false (nothing done) if not even one iteration fits.
    pub(super) fn try_batch(&mut self, gi: usize, now: Time, eng: &mut Engine<SyncEv>) -> bool {
        let g = &self.gangs[gi];
        if !g.batchable || g.wait != WaitStrategy::Busy || self.measure.done.is_some() {
            return false;
        }
        for t in g.first..g.first + g.width {
            if self.threads[t as usize].deferred.is_some() {
                return false;
            }
        }
        let mut limit = match self.params.sched {
            SyncSched::Local => Time::MAX,
            SyncSched::Gang => self.slot.end,
        };
        for &t in &g.threads {
            let th = &self.threads[t as usize];
            let proc = &self.procs[th.proc as usize];
            if th.state != St::Running || proc.seg_start > now || proc.busy_until > now {
                return false;
            }
            if self.params.sched == SyncSched::Local {
                limit = limit.min(proc.slice_end);
            }
        }
        let measured = gi as u32 == self.measured;
        // Iterations the gang may still run (its program is exactly
        // `Repeat { count, [Compute, Barrier] }`, so after each compute comes
        // a barrier, and the releases before this one are counted).
        let mut left = g.count - g.iterations;
        if measured {
            left = left.min(self.params.k - g.iterations);
        }
        let (first, last) = (g.first, g.first + g.width);
        let mut b = std::mem::take(&mut self.gangs[gi].batch);
        // Saved so that a batch still in flight when the run ends can be
        // replayed up to the end (see `flush`).
        b.start = now;
        b.left0 = left;
        b.rng0 = Some(self.gangs[gi].rng.clone());
        b.cursors0.clear();
        b.remaining0.clear();
        for t in first..last {
            let th = &self.threads[t as usize];
            b.cursors0.push(th.cursor);
            b.remaining0.push(th.remaining);
        }
        b.times.clear();
        let (t_end, _) = self.iterate(gi, &mut b, now, limit, left, measured);
        let ok = b.iterations > 0;
        if ok {
            for &t in &self.gangs[gi].threads {
                let q = self.threads[t as usize].proc as usize;
                eng.cancel(self.procs[q].seg_timer);
                self.procs[q].seg_start = t_end;
            }
            b.end = t_end;
            eng.schedule_at(t_end, SyncEv::BatchCommitted { g: gi as u32 });
        }
        self.gangs[gi].batch = b;
        ok
    }

    /// The compute demand of a batchable gang, whose program is
    /// `Repeat { count, [Compute, Barrier] }` (every measured or alike gang).
    pub(super) fn loop_demand(&self, gi: usize) -> Dist {
        match &self.gangs[gi].program.steps[..] {
            [Step::Repeat { body, .. }] => match &body[..] {
                [Step::Compute { demand }, Step::Barrier] => demand.clone(),
                _ => unreachable!("batchable gangs compute then meet"),
            },
            _ => unreachable!("batchable gangs iterate"),
        }
    }

    /// The measured gang passed a barrier at `release`: counted and recorded;
    /// true once it has passed its k-th.
    pub(super) fn measured_release(&mut self, release: u64) -> bool {
        self.gangs[self.measured as usize].iterations += 1;
        self.record_iteration(Time(release));
        self.measure.done.is_some()
    }

    /// The fast path's loop: whole iterations of gang `gi` from `start` while
    /// they end before `limit`, at most `left`, accumulated in `b`. Returns
    /// the end of the last one and the iterations still allowed.
    pub(super) fn iterate(
        &mut self,
        gi: usize,
        b: &mut Batch,
        start: Time,
        limit: Time,
        mut left: u64,
        record: bool,
    ) -> (Time, u64) {
        let g = &self.gangs[gi];
        let (first, last) = (g.first, g.first + g.width);
        let mut mx = 0;
        for t in first..last {
            mx = mx.max(self.threads[t as usize].remaining);
        }
        let demand = self.loop_demand(gi);
        // Passes the cursors have not walked (their draws made here directly).
        let mut skipped = 0u64;
        let mut t_end = start;
        while left > 0 && b.iterations < MAX_BATCH && t_end + mx < limit {
            // Every thread computes, arrives at the barrier and (as the slow
            // path does at the release) draws its next compute, in thread
            // order.
            let mut next_mx = 0;
            if left > 1 {
                let g = &mut self.gangs[gi];
                for th in &mut self.threads[first as usize..last as usize] {
                    b.useful += th.remaining;
                    b.spin += mx - th.remaining;
                    th.remaining = draw(&demand, g.width, &mut g.rng);
                    next_mx = next_mx.max(th.remaining);
                }
                skipped += 1;
            } else {
                // The gang's last iteration: no next compute.
                for t in first..last {
                    self.threads[t as usize].cursor.skip_passes(skipped);
                    let op = self.advance(t);
                    debug_assert_eq!(op, Next::Barrier);
                    let th = &mut self.threads[t as usize];
                    b.useful += th.remaining;
                    b.spin += mx - th.remaining;
                    th.remaining = 0;
                }
                skipped = 0;
            }
            t_end += mx;
            mx = next_mx;
            b.iterations += 1;
            left -= 1;
            if record {
                b.times.push(t_end);
            }
        }
        if skipped > 0 {
            for th in &mut self.threads[first as usize..last as usize] {
                th.cursor.skip_passes(skipped);
            }
        }
        (t_end, left)
    }

    /// The run ends at `end`: charges what every processor did up to `end`
    /// (in-progress computes and spins, and batches still in flight, replayed
    /// from their saved start up to `end`), so that the fast path and the
    /// event-by-event path report the same totals.
    pub(super) fn flush(&mut self, end: Time) {
        for gi in 0..self.gangs.len() {
            if self.gangs[gi].batch.iterations == 0 {
                continue;
            }
            let mut b = std::mem::take(&mut self.gangs[gi].batch);
            let g = &mut self.gangs[gi];
            g.rng = b.rng0.take().expect("a batch in flight saved its start");
            let (first, last) = (g.first, g.first + g.width);
            for (i, t) in (first..last).enumerate() {
                let th = &mut self.threads[t as usize];
                th.cursor = b.cursors0[i];
                th.remaining = b.remaining0[i];
                th.deferred = None;
            }
            b.useful = 0;
            b.spin = 0;
            b.iterations = 0;
            let (start, left0) = (b.start, b.left0);
            let (t_end, left) = self.iterate(gi, &mut b, start, end + 1, left0, false);
            if left > 0 {
                // The iteration in progress at `end`.
                let d = end - t_end;
                for t in first..last {
                    let c = self.threads[t as usize].remaining.min(d);
                    b.useful += c;
                    b.spin += d - c;
                }
            }
            self.stats.useful += b.useful;
            self.stats.spin += b.spin;
            if gi as u32 == self.measured {
                self.stats.measured_spin += b.spin;
            }
            self.gangs[gi].iterations += b.iterations;
            self.stats.gang_iterations += b.iterations;
            b.iterations = 0;
            self.gangs[gi].batch = b;
        }
        for p in 0..self.procs.len() {
            let th = self.procs[p].thread;
            if th != NONE {
                let elapsed = end.saturating_sub(self.procs[p].seg_start);
                self.account(th, elapsed);
                self.procs[p].seg_start = self.procs[p].seg_start.max(end);
            }
        }
    }

    /// Commits gang `gi`'s batch of iterations (now is its end).
    pub(super) fn on_batch(&mut self, gi: u32, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        let gi = gi as usize;
        let mut b = std::mem::take(&mut self.gangs[gi].batch);
        debug_assert_eq!(b.end, now);
        self.stats.useful += b.useful;
        self.stats.spin += b.spin;
        self.gangs[gi].iterations += b.iterations;
        self.stats.gang_iterations += b.iterations;
        if gi as u32 == self.measured {
            self.stats.measured_spin += b.spin;
            for i in 0..b.times.len() {
                self.record_iteration(b.times[i]);
            }
        }
        b.useful = 0;
        b.spin = 0;
        b.iterations = 0;
        self.gangs[gi].batch = b;
        // As after a release on the event-by-event path (even after the
        // measured gang's last one: its threads then exit at this instant).
        for i in 0..self.gangs[gi].threads.len() {
            let t = self.gangs[gi].threads[i];
            let p = self.threads[t as usize].proc;
            self.start_activity(t, p, now, eng);
        }
    }
}
