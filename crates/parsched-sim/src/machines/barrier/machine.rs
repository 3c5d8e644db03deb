//! The event-by-event machine: dispatch, quanta, barriers, waiting, slot
//! switches.

use super::*;

impl<L: LocalScheduler> SyncMachine<L> {
    /// Runs until the measured gang passes its k-th barrier.
    pub fn run(&mut self, eng: &mut Engine<SyncEv>) -> Result<Time, MachineError> {
        for proc in &mut self.procs {
            proc.seg_timer = eng.timer();
        }
        self.slot.timer = eng.timer();
        match self.params.sched {
            SyncSched::Local => {
                for p in 0..self.procs.len() as u32 {
                    self.dispatch_local(p, eng);
                }
            }
            SyncSched::Gang => eng.set_timer(self.slot.timer, Time::ZERO, SyncEv::SlotEnded),
        }
        self.max_pending = eng.pending();
        // After the measured gang's k-th barrier (`horizon`), the other
        // events of that instant are still handled, then the run stops; a
        // stop hands the rest of the run to the periodic solver.
        if run_watched(self, eng, || MachineError::Interrupted)? == RunEnd::Stopped {
            return self.run_periodic(eng.now());
        }
        let Some(end) = self.measure.done else {
            return Err(MachineError::Invariant {
                time: eng.now().as_units(),
                msg: "no event left before the measured gang finished (deadlock)".into(),
            });
        };
        self.flush(end);
        Ok(end)
    }

    pub(super) fn advance(&mut self, th: u32) -> Next {
        let t = &mut self.threads[th as usize];
        let g = &mut self.gangs[t.gang as usize];
        match t.cursor.next(&g.program, &mut g.rng) {
            Op::Compute { units } => Next::Compute(ticks(units)),
            Op::Barrier => Next::Barrier,
            Op::Exit => Next::Exit,
            Op::ForkJoin { .. } | Op::Send { .. } | Op::Receive { .. } | Op::Touch { .. } => {
                unreachable!(
                    "the barrier machine builds its programs (checked in its constructor): \
                     no fork-join, no messages, no region touches"
                )
            }
        }
    }

    /// Moves the (non-waiting) thread to its next activity.
    pub(super) fn prepare(&mut self, th: u32) {
        let next = self.advance(th);
        let t = &mut self.threads[th as usize];
        match next {
            Next::Compute(c) => {
                t.remaining = c;
                t.deferred = None;
            }
            other => {
                t.remaining = 0;
                t.deferred = Some(other);
            }
        }
    }

    /// `th` runs on `p` from `start` (>= now): schedules the end of its
    /// activity if it falls within the current quantum or slot (otherwise the
    /// quantum or slot handler restarts the activity), so no stale event
    /// lingers for long and pending events stay bounded.
    pub(super) fn start_activity(
        &mut self,
        th: u32,
        p: u32,
        start: Time,
        eng: &mut Engine<SyncEv>,
    ) {
        let t = &self.threads[th as usize];
        let proc = &mut self.procs[p as usize];
        proc.seg_start = start;
        eng.cancel(proc.seg_timer);
        if t.gang == self.measured && self.measure.start.is_none() {
            self.measure.start = Some(start);
            self.measure.last_iter = start;
        }
        let end = if t.waiting {
            match self.gangs[t.gang as usize].wait {
                WaitStrategy::Busy => return,
                WaitStrategy::TwoPhase => {
                    // One lazily re-armed spin timer per processor (as for
                    // quanta), so released spinners leave no stale events.
                    let deadline = start + t.spin_left;
                    if !matches!(proc.spin_timer, Some(at) if at <= deadline) {
                        proc.spin_timer = Some(deadline);
                        eng.schedule_at(deadline, SyncEv::SpinExpired { p });
                    }
                    return;
                }
                WaitStrategy::Yield => {
                    // It yields again as soon as it runs.
                    eng.set_timer(proc.seg_timer, start, SyncEv::SegmentEnded { p });
                    return;
                }
                WaitStrategy::Block => unreachable!("blocked threads are not dispatched"),
            }
        } else {
            start + t.remaining
        };
        let limit = match self.params.sched {
            SyncSched::Local => proc.slice_end,
            SyncSched::Gang => self.slot.end,
        };
        if end <= limit {
            eng.set_timer(proc.seg_timer, end, SyncEv::SegmentEnded { p });
        }
    }

    /// Charges `elapsed` ticks of processor time to the running thread `th`.
    #[inline]
    pub(super) fn account(&mut self, th: u32, elapsed: u64) {
        let t = &mut self.threads[th as usize];
        if t.waiting {
            self.stats.spin += elapsed;
            if t.gang == self.measured {
                self.stats.measured_spin += elapsed;
            }
            t.spin_left = t.spin_left.saturating_sub(elapsed);
        } else {
            t.remaining -= elapsed.min(t.remaining);
            if self.gangs[t.gang as usize].kind == Kind::Skew {
                self.stats.skew_work += elapsed;
            } else {
                self.stats.useful += elapsed;
            }
        }
    }

    pub(super) fn on_seg(&mut self, p: u32, eng: &mut Engine<SyncEv>) {
        let proc = &self.procs[p as usize];
        if proc.thread == NONE {
            return;
        }
        let now = eng.now();
        let th = proc.thread;
        let elapsed = now.saturating_sub(proc.seg_start);
        self.account(th, elapsed);
        if self.threads[th as usize].waiting {
            debug_assert_eq!(
                self.gangs[self.threads[th as usize].gang as usize].wait,
                WaitStrategy::Yield,
                "spins end by Spin events"
            );
            self.yield_now(th, p, eng);
            return;
        }
        let next = match self.threads[th as usize].deferred.take() {
            Some(n) => n,
            None => self.advance(th),
        };
        match next {
            Next::Compute(c) => {
                self.threads[th as usize].remaining = c;
                self.start_activity(th, p, now, eng);
            }
            Next::Barrier => self.arrive(th, p, eng),
            Next::Exit => self.exit(th, p, eng),
        }
    }

    pub(super) fn arrive(&mut self, th: u32, p: u32, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        let gi = self.threads[th as usize].gang as usize;
        let g = &mut self.gangs[gi];
        g.arrived += 1;
        if g.arrived == g.width {
            self.release(gi, th, p, eng);
            return;
        }
        g.waiters.push(th);
        let wait = g.wait;
        let t = &mut self.threads[th as usize];
        t.waiting = true;
        match wait.on_wait(self.params.spin_limit) {
            WaitAction::Spin => self.start_activity(th, p, now, eng),
            WaitAction::SpinFor(budget) => {
                t.spin_left = budget;
                self.start_activity(th, p, now, eng);
            }
            WaitAction::Block => self.block(th, p, eng),
            WaitAction::Yield => {
                self.stats.yield_waits += 1;
                self.yield_now(th, p, eng);
            }
        }
    }

    pub(super) fn record_iteration(&mut self, now: Time) {
        let d = now - self.measure.last_iter;
        self.measure.iter_hist.saturating_record(d);
        self.measure.iter_min = self.measure.iter_min.min(d);
        self.measure.iter_max = self.measure.iter_max.max(d);
        let it = ticks_to_units(d);
        self.measure.last_iter = now;
        if self.measure.batch_means.len() < self.measure.batches_max {
            self.measure.batch_sum += it;
            self.measure.batch_len += 1;
            if self.measure.batch_len == self.measure.batch_size {
                self.measure
                    .batch_means
                    .push(self.measure.batch_sum / self.measure.batch_size as f64);
                self.measure.batch_sum = 0.0;
                self.measure.batch_len = 0;
            }
        }
        if self.gangs[self.measured as usize].iterations >= self.params.k {
            self.measure.done = Some(now);
        }
    }

    /// The last thread `th` (running on `p`) arrived: every waiter is
    /// released. The next operations of all the gang's threads are drawn in
    /// thread order (so the fast path draws the same numbers).
    pub(super) fn release(&mut self, gi: usize, th: u32, p: u32, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        let g = &mut self.gangs[gi];
        g.arrived = 0;
        g.iterations += 1;
        self.stats.gang_iterations += 1;
        let mut waiters = std::mem::take(&mut g.waiters);
        for &w in &waiters {
            let t = &mut self.threads[w as usize];
            t.waiting = false;
            if t.state == St::Running {
                // The spin since the segment start, charged now that it ends.
                let spun = now.saturating_sub(self.procs[t.proc as usize].seg_start);
                self.stats.spin += spun;
                if gi as u32 == self.measured {
                    self.stats.measured_spin += spun;
                }
            }
        }
        for i in 0..self.gangs[gi].threads.len() {
            let t = self.gangs[gi].threads[i];
            self.prepare(t);
        }
        if gi as u32 == self.measured {
            self.record_iteration(now);
        }
        if !(self.params.fast && self.try_batch(gi, now, eng)) {
            for &w in &waiters {
                self.wake(w, eng);
            }
            self.start_activity(th, p, now, eng);
        }
        waiters.clear();
        self.gangs[gi].waiters = waiters;
    }

    /// Releases waiter `w` (its next operation already drawn).
    pub(super) fn wake(&mut self, w: u32, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        let t = &self.threads[w as usize];
        let (p, gi, state) = (t.proc, t.gang as usize, t.state);
        match state {
            St::Running => {
                let seg_start = self.procs[p as usize].seg_start;
                self.start_activity(w, p, now.max(seg_start), eng);
            }
            St::Ready => {}
            St::Blocked => {
                self.threads[w as usize].state = St::Ready;
                self.gangs[gi].runnable += 1;
                match self.params.sched {
                    SyncSched::Local => {
                        let proc = &mut self.procs[p as usize];
                        proc.queue.enqueue(ThreadId(w), EnqueueReason::Woken);
                        if proc.thread == NONE {
                            self.dispatch_local(p, eng);
                        }
                    }
                    SyncSched::Gang => {
                        if self.gang.current().is_none() {
                            eng.set_timer(self.slot.timer, now, SyncEv::SlotEnded);
                        } else if self.gang.is_running(GangId(gi as u64))
                            && self.procs[p as usize].thread == NONE
                        {
                            let proc = &self.procs[p as usize];
                            let cost = if proc.free_switch || proc.last == w {
                                0
                            } else {
                                self.params.tcs
                            };
                            self.run_on(p, w, cost, eng);
                        }
                    }
                }
            }
            St::Done => unreachable!("a finished thread does not wait"),
        }
    }

    /// Waiting thread `th` (`wait = yield`) yields `p`: it goes to the tail
    /// of the run queue and the next ready thread runs after a switch; with
    /// nothing else ready (or under gang scheduling, where no other thread
    /// holds a cell of the slot on `p`) it runs again after a switch's cost.
    pub(super) fn yield_now(&mut self, th: u32, p: u32, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        self.stats.yields += 1;
        let gi = self.threads[th as usize].gang as usize;
        self.gangs[gi].voluntary += 1;
        let proc = &mut self.procs[p as usize];
        if self.params.sched == SyncSched::Local && !proc.queue.is_empty() {
            proc.thread = NONE;
            eng.cancel(proc.seg_timer);
            proc.queue.enqueue(ThreadId(th), EnqueueReason::Yielded);
            self.threads[th as usize].state = St::Ready;
            // run_on charges the switch to the next thread.
            self.dispatch_local(p, eng);
            return;
        }
        let start = proc.busy_until.max(now) + self.params.tcs;
        self.stats.overhead += self.params.tcs;
        proc.busy_until = start;
        self.start_activity(th, p, start, eng);
    }

    pub(super) fn block(&mut self, th: u32, p: u32, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        let gi = self.threads[th as usize].gang as usize;
        self.threads[th as usize].state = St::Blocked;
        self.gangs[gi].runnable -= 1;
        self.gangs[gi].voluntary += 1;
        self.stats.blocking_events += 1;
        self.stats.overhead += self.params.block_cost;
        let proc = &mut self.procs[p as usize];
        proc.thread = NONE;
        eng.cancel(proc.seg_timer);
        proc.busy_until = proc.busy_until.max(now) + self.params.block_cost;
        proc.free_switch = true;
        self.after_leave(p, eng);
    }

    pub(super) fn exit(&mut self, th: u32, p: u32, eng: &mut Engine<SyncEv>) {
        let gi = self.threads[th as usize].gang as usize;
        self.threads[th as usize].state = St::Done;
        let g = &mut self.gangs[gi];
        g.runnable -= 1;
        g.alive -= 1;
        if g.alive == 0 {
            let _ = self.gang.finish(GangId(gi as u64));
        }
        let proc = &mut self.procs[p as usize];
        proc.thread = NONE;
        eng.cancel(proc.seg_timer);
        self.after_leave(p, eng);
    }

    /// Processor `p` has no thread any more.
    pub(super) fn after_leave(&mut self, p: u32, eng: &mut Engine<SyncEv>) {
        match self.params.sched {
            SyncSched::Local => self.dispatch_local(p, eng),
            SyncSched::Gang => {
                let gangs = &self.gangs;
                if self
                    .gang
                    .should_switch_early(|g| gangs[g.0 as usize].runnable > 0)
                {
                    // Nothing runs in this slot any more: switch early.
                    debug_assert!(self.procs.iter().all(|q| q.thread == NONE));
                    eng.set_timer(self.slot.timer, eng.now(), SyncEv::SlotEnded);
                }
            }
        }
    }

    /// Starts `th` on `p` after `cost` ticks of switch overhead.
    pub(super) fn run_on(&mut self, p: u32, th: u32, cost: u64, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        let proc = &mut self.procs[p as usize];
        if proc.last != th {
            self.stats.context_switches += 1;
        }
        let start = proc.busy_until.max(now) + cost;
        self.stats.overhead += cost;
        proc.busy_until = start;
        proc.thread = th;
        proc.last = th;
        proc.free_switch = false;
        if self.params.sched == SyncSched::Local {
            proc.slice_end = start + proc.queue.quantum(ThreadId(th));
            proc.timer_fresh = !proc.timer;
            if !proc.timer {
                proc.timer = true;
                eng.schedule_at(proc.slice_end, SyncEv::QuantumExpired { p });
            }
        }
        self.threads[th as usize].state = St::Running;
        self.start_activity(th, p, start, eng);
    }

    /// Local scheduling: `p` (idle) takes the head of its queue, if any.
    pub(super) fn dispatch_local(&mut self, p: u32, eng: &mut Engine<SyncEv>) {
        let proc = &mut self.procs[p as usize];
        let Some(ThreadId(th)) = proc.queue.pick_next() else {
            return;
        };
        let cost = if proc.free_switch || proc.last == th {
            0
        } else {
            self.params.tcs
        };
        self.run_on(p, th, cost, eng);
    }

    pub(super) fn on_spin(&mut self, p: u32, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        let proc = &mut self.procs[p as usize];
        if proc.spin_timer != Some(now) {
            return; // superseded by an earlier timer
        }
        proc.spin_timer = None;
        let th = proc.thread;
        if th == NONE {
            return;
        }
        let t = &self.threads[th as usize];
        let wait = self.gangs[t.gang as usize].wait;
        if !t.waiting || wait != WaitStrategy::TwoPhase {
            return;
        }
        let deadline = proc.seg_start + t.spin_left;
        if deadline > now {
            // The spin restarted after a preemption: wait for its new end.
            proc.spin_timer = Some(deadline);
            eng.schedule_at(deadline, SyncEv::SpinExpired { p });
            return;
        }
        let elapsed = now.saturating_sub(proc.seg_start);
        self.account(th, elapsed);
        match wait.on_spin_expired() {
            WaitAction::Block => self.block(th, p, eng),
            other => unreachable!("two-phase waiting blocks after its spin, not {other:?}"),
        }
    }

    pub(super) fn on_quantum(&mut self, p: u32, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        let proc = &mut self.procs[p as usize];
        proc.timer = false;
        if proc.thread == NONE {
            return;
        }
        if now < proc.slice_end {
            // The quantum was restarted since this timer was set.
            proc.timer = true;
            proc.timer_fresh = false;
            eng.schedule_at(proc.slice_end, SyncEv::QuantumExpired { p });
            return;
        }
        let th = proc.thread;
        let start = proc.seg_start.max(now);
        let elapsed = now.saturating_sub(proc.seg_start);
        self.account(th, elapsed);
        let proc = &mut self.procs[p as usize];
        if !proc.queue.should_preempt(ThreadId(th)) {
            // Continue with a new quantum, no switch.
            proc.slice_end = now + proc.queue.quantum(ThreadId(th));
            proc.timer = true;
            proc.timer_fresh = true;
            eng.schedule_at(proc.slice_end, SyncEv::QuantumExpired { p });
            self.start_activity(th, p, start, eng);
            return;
        }
        self.stats.preemptions += 1;
        proc.thread = NONE;
        eng.cancel(proc.seg_timer);
        proc.queue
            .enqueue(ThreadId(th), EnqueueReason::QuantumExpired);
        self.threads[th as usize].state = St::Ready;
        self.dispatch_local(p, eng);
    }

    /// Gang scheduling: all processors move to the next slot with work.
    pub(super) fn switch_slot(&mut self, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        if self.gang.current().is_some() {
            let d = (now - self.slot.start) as u128;
            self.stats.frag_idle += self.slot.free as u128 * d;
            self.stats.frag_total += self.procs.len() as u128 * d;
        }
        let gangs = &self.gangs;
        let change = self.gang.rotate(|g| gangs[g.0 as usize].runnable > 0);
        let next = change.to;
        self.slot.start = now;
        if next.is_some() && change.is_same() {
            // The only slot with work: no switch, a new quantum.
            self.slot.end = now + self.params.tq;
            eng.set_timer(self.slot.timer, self.slot.end, SyncEv::SlotEnded);
            for p in 0..self.procs.len() as u32 {
                let th = self.procs[p as usize].thread;
                if th != NONE {
                    let seg_start = self.procs[p as usize].seg_start;
                    self.account(th, now.saturating_sub(seg_start));
                    self.start_activity(th, p, seg_start.max(now), eng);
                }
            }
            return;
        }
        for p in 0..self.procs.len() as u32 {
            let th = self.procs[p as usize].thread;
            if th != NONE {
                let elapsed = now.saturating_sub(self.procs[p as usize].seg_start);
                self.account(th, elapsed);
                self.threads[th as usize].state = St::Ready;
                let proc = &mut self.procs[p as usize];
                proc.thread = NONE;
                eng.cancel(proc.seg_timer);
            }
        }
        let Some(s) = next else {
            return;
        };
        self.stats.slot_switches += 1;
        self.slot.free = self.gang.matrix().free_cells(s);
        self.slot.end = now + self.params.tcs + self.params.tq;
        // Scheduled before the slot's compute ends, so that a compute ending
        // as the slot does is preempted first (as a quantum's end is).
        eng.set_timer(self.slot.timer, self.slot.end, SyncEv::SlotEnded);
        for p in 0..self.procs.len() as u32 {
            let proc = &mut self.procs[p as usize];
            proc.busy_until = proc.busy_until.max(now) + self.params.tcs;
            proc.free_switch = false;
            self.stats.overhead += self.params.tcs;
            if let Some(g) = self.gang.matrix().cell(s, ProcId(p)) {
                let th = self.gangs[g.0 as usize].on_proc[p as usize];
                if self.threads[th as usize].state == St::Ready {
                    self.run_on(p, th, 0, eng);
                }
            }
        }
    }
}

impl<L: LocalScheduler> SyncMachine<L> {
    /// The measured gang's index (for [`SyncMachine::observation`]).
    pub fn measured_gang(&self) -> u32 {
        self.measured
    }

    /// What the coscheduling classifier
    /// ([`parsched_core::policy::classify`]) observes of gang `g` from the
    /// start to `now`: its threads' voluntary switches (blocks and yields,
    /// counted per gang) over its thread-seconds — the same observation the
    /// Linux runtime's flexible mode reads from /proc. Synchronization data
    /// (`sync_events`, waits) are left out, as /proc cannot give them.
    pub fn observation(&self, g: u32, now: Time) -> Observation {
        let gang = &self.gangs[g as usize];
        let wall_s = now.as_units() / 1000.0; // model units are ms
        Observation {
            wall_s,
            thread_s: wall_s * gang.width as f64,
            voluntary: gang.voluntary,
            ..Observation::default()
        }
    }
}

/// One event of the machine. `Flow::Stop` hands the rest of the run to the
/// periodic solver (the schedule became periodic at this instant).
impl<L: LocalScheduler> Model for SyncMachine<L> {
    type Event = SyncEv;
    type Error = MachineError;

    /// The measured gang's last barrier, once it passed it.
    #[inline(always)]
    fn horizon(&self) -> Option<Time> {
        self.measure.done
    }

    #[inline(always)]
    fn handle(&mut self, ev: SyncEv, eng: &mut Engine<SyncEv>) -> Result<Flow, MachineError> {
        match ev {
            SyncEv::SegmentEnded { p } => self.on_seg(p, eng),
            SyncEv::QuantumExpired { p } => self.on_quantum(p, eng),
            SyncEv::BatchCommitted { g } => self.on_batch(g, eng),
            SyncEv::SpinExpired { p } => self.on_spin(p, eng),
            SyncEv::SlotEnded => self.switch_slot(eng),
        }
        self.max_pending = self.max_pending.max(eng.pending());
        if self.params.audit {
            self.check(eng.now())?;
        }
        let periodic = self.params.periodic
            && matches!(ev, SyncEv::QuantumExpired { .. } | SyncEv::SlotEnded)
            && eng.next_time().is_none_or(|t| t > eng.now())
            && self.periodic_ready();
        Ok(if periodic { Flow::Stop } else { Flow::Continue })
    }
}
