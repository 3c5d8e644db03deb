//! The event-by-event machine: dispatch, quanta, barriers, waiting, slot
//! switches.

use super::*;

impl SyncMachine {
    /// Builds the machine for a validated configuration, each processor
    /// scheduled by round robin with quantum τq (seed 001 §3.1).
    pub fn new(cfg: &SyncConfig, opts: SyncOptions) -> Result<SyncMachine, ConfigError> {
        let capacity = cfg.l as usize + 2;
        SyncMachine::with_local_schedulers(cfg, opts, |_| {
            RoundRobin::with_capacity(ticks(cfg.tq), cfg.wakeup, capacity)
        })
    }
}

impl<L: LocalScheduler> SyncMachine<L> {
    /// Builds the machine with `local(p)` as processor p's local scheduler
    /// (any [`LocalScheduler`]; the periodic fast path applies only to round
    /// robin). The configuration's `tq` and `wakeup` are the round robin's.
    pub fn with_local_schedulers(
        cfg: &SyncConfig,
        opts: SyncOptions,
        mut local: impl FnMut(ProcId) -> L,
    ) -> Result<SyncMachine<L>, ConfigError> {
        cfg.validate()?;
        let p = cfg.procs();
        let mut gang = GangScheduler::new(GangMatrix::new(p, None)?, GangSchedOptions::default());
        let iterate = |count: u64| {
            Program::new(vec![Step::Repeat {
                count,
                body: vec![
                    Step::Compute {
                        demand: cfg.compute_dist(),
                    },
                    Step::Barrier,
                ],
            }])
        };
        let mut specs: Vec<(Kind, u32, Program)> = Vec::new();
        if cfg.skew {
            specs.push((
                Kind::Skew,
                p,
                Program::new(vec![Step::Compute {
                    demand: Dist::Uniform {
                        lo: 0.0,
                        hi: cfg.tq,
                    },
                }]),
            ));
        }
        specs.push((Kind::Measured, cfg.n, iterate(cfg.k)));
        for _ in 1..cfg.l {
            match cfg.competitors {
                Competitors::Same => specs.push((Kind::Same, cfg.n, iterate(u64::MAX))),
                Competitors::Compute => specs.push((
                    Kind::Compute,
                    p,
                    Program::new(vec![Step::Compute {
                        demand: Dist::Const { value: 1e12 },
                    }]),
                )),
            }
        }
        // The machine builds its programs; it models no caches, so a
        // program that touches regions would be refused here (typed error).
        if specs.iter().any(|(_, _, prog)| prog.touches_regions()) {
            return Err(ConfigError::new(
                "program",
                "a program touches regions",
                "the barrier machine models no caches: use parsched simulate regions",
            ));
        }
        let mut m = SyncMachine {
            sched: cfg.sched,
            tq: ticks(cfg.tq),
            tcs: ticks(cfg.tcs),
            block_cost: ticks(cfg.alpha * cfg.tcs),
            spin_limit: ticks(cfg.spin_limit),
            k: cfg.k,
            audit: opts.audit,
            fast: opts.fast,
            periodic: opts.fast && !opts.audit && cfg.wait == WaitStrategy::Busy,
            procs: (0..p)
                .map(|q| Proc {
                    thread: NONE,
                    last: NONE,
                    free_switch: true,
                    seg_start: Time::ZERO,
                    busy_until: Time::ZERO,
                    seg_timer: Timer::UNSET,
                    slice_end: Time::ZERO,
                    timer: false,
                    timer_fresh: false,
                    spin_timer: None,
                    queue: local(ProcId(q)),
                })
                .collect(),
            threads: Vec::new(),
            gangs: Vec::new(),
            measured: 0,
            gang: GangScheduler::new(GangMatrix::new(p, None)?, GangSchedOptions::default()),
            slot_timer: Timer::UNSET,
            slot_start: Time::ZERO,
            slot_free: 0,
            slot_end: Time::ZERO,
            useful: 0,
            skew_work: 0,
            spin: 0,
            measured_spin: 0,
            overhead: 0,
            context_switches: 0,
            blocking_events: 0,
            yields: 0,
            yield_waits: 0,
            preemptions: 0,
            slot_switches: 0,
            frag_idle: 0,
            frag_total: 0,
            gang_iterations: 0,
            start: None,
            last_iter: Time::ZERO,
            batch_size: (cfg.k / cfg.batches as u64).max(1),
            batch_len: 0,
            batch_sum: 0.0,
            batches_max: cfg.batches as usize,
            batch_means: Vec::with_capacity(cfg.batches as usize),
            iter_hist: Histogram::new_with_bounds(1, ITER_HIST_MAX_TICKS, 2)
                .expect("valid histogram bounds"),
            iter_min: u64::MAX,
            iter_max: 0,
            done: None,
            max_pending: 0,
            watch: crate::cancel::Watch::new(),
        };
        for (gi, (kind, width, program)) in specs.into_iter().enumerate() {
            let g = gi as u32;
            let Admission::Placed(alloc) = gang
                .admit(GangId(g as u64), width)
                .map_err(|e| ConfigError::new("n", e.to_string(), "n <= P"))?
            else {
                unreachable!("an unbounded matrix always has room")
            };
            let rng = match kind {
                Kind::Skew => stream(cfg.seed, Stream::Skew, 0),
                _ => stream(cfg.seed, Stream::ThreadDemand, g as u64),
            };
            if kind == Kind::Measured {
                m.measured = g;
            }
            let (batchable, count) = match program.steps.as_slice() {
                [Step::Repeat { count, body }]
                    if matches!(body.as_slice(), [Step::Compute { .. }, Step::Barrier]) =>
                {
                    (true, *count)
                }
                _ => (false, 0),
            };
            let mut on_proc = vec![NONE; p as usize];
            let mut threads = Vec::with_capacity(width as usize);
            for &q in &alloc.procs {
                let th = m.threads.len() as u32;
                on_proc[q.idx()] = th;
                threads.push(th);
                m.threads.push(Thread {
                    gang: g,
                    proc: q.0,
                    cursor: Cursor::new(width),
                    remaining: 0,
                    deferred: None,
                    state: St::Ready,
                    waiting: false,
                    spin_left: 0,
                });
            }
            m.gangs.push(Gang {
                kind,
                program,
                rng,
                width,
                arrived: 0,
                waiters: Vec::with_capacity(width as usize),
                wait: cfg.wait,
                runnable: width,
                alive: width,
                on_proc,
                threads,
                first: m.threads.len() as u32 - width,
                batchable,
                count,
                batch: Batch::default(),
                iterations: 0,
                voluntary: 0,
            });
        }
        m.gang = gang;
        let mut initial: Vec<Vec<u32>> = vec![Vec::new(); p as usize];
        for th in 0..m.threads.len() as u32 {
            m.prepare(th);
            initial[m.threads[th as usize].proc as usize].push(th);
        }
        if m.sched == SyncSched::Local {
            let first = usize::from(cfg.skew);
            for (q, v) in initial.iter_mut().enumerate() {
                if cfg.shuffle && v.len() > first {
                    let mut rng = stream(cfg.seed, Stream::Skew, q as u64 + 1);
                    let rest = &mut v[first..];
                    for i in (1..rest.len()).rev() {
                        rest.swap(i, rng.random_range(0..=i));
                    }
                }
                for &th in v.iter() {
                    m.procs[q].queue.enqueue(ThreadId(th), EnqueueReason::New);
                }
            }
        }
        Ok(m)
    }

    /// Runs until the measured gang passes its k-th barrier.
    pub fn run(&mut self, eng: &mut Engine<SyncEv>) -> Result<Time, MachineError> {
        for proc in &mut self.procs {
            proc.seg_timer = eng.timer();
        }
        self.slot_timer = eng.timer();
        match self.sched {
            SyncSched::Local => {
                for p in 0..self.procs.len() as u32 {
                    self.dispatch_local(p, eng);
                }
            }
            SyncSched::Gang => eng.set_timer(self.slot_timer, Time::ZERO, SyncEv::SlotEnded),
        }
        self.max_pending = eng.pending();
        loop {
            // After the measured gang's k-th barrier, the other events of
            // that instant are still handled, then the run stops.
            let next = match self.done {
                Some(end) => eng.pop_through(end),
                None => eng.pop(),
            };
            if self.watch.tick() {
                return Err(MachineError::Interrupted);
            }
            let Some(ev) = next else {
                if self.done.is_some() {
                    break;
                }
                return Err(MachineError::Invariant {
                    time: eng.now().as_units(),
                    msg: "no event left before the measured gang finished (deadlock)".into(),
                });
            };
            if self.handle(ev, eng)? == Flow::Stop {
                return self.run_periodic(eng.now());
            }
        }
        let end = self
            .done
            .expect("the loop ends when the measured gang is done");
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
        if t.gang == self.measured && self.start.is_none() {
            self.start = Some(start);
            self.last_iter = start;
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
        let limit = match self.sched {
            SyncSched::Local => proc.slice_end,
            SyncSched::Gang => self.slot_end,
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
            self.spin += elapsed;
            if t.gang == self.measured {
                self.measured_spin += elapsed;
            }
            t.spin_left = t.spin_left.saturating_sub(elapsed);
        } else {
            t.remaining -= elapsed.min(t.remaining);
            if self.gangs[t.gang as usize].kind == Kind::Skew {
                self.skew_work += elapsed;
            } else {
                self.useful += elapsed;
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
        match wait.on_wait(self.spin_limit) {
            WaitAction::Spin => self.start_activity(th, p, now, eng),
            WaitAction::SpinFor(budget) => {
                t.spin_left = budget;
                self.start_activity(th, p, now, eng);
            }
            WaitAction::Block => self.block(th, p, eng),
            WaitAction::Yield => {
                self.yield_waits += 1;
                self.yield_now(th, p, eng);
            }
        }
    }

    pub(super) fn record_iteration(&mut self, now: Time) {
        let d = now - self.last_iter;
        self.iter_hist.saturating_record(d);
        self.iter_min = self.iter_min.min(d);
        self.iter_max = self.iter_max.max(d);
        let it = ticks_to_units(d);
        self.last_iter = now;
        if self.batch_means.len() < self.batches_max {
            self.batch_sum += it;
            self.batch_len += 1;
            if self.batch_len == self.batch_size {
                self.batch_means
                    .push(self.batch_sum / self.batch_size as f64);
                self.batch_sum = 0.0;
                self.batch_len = 0;
            }
        }
        if self.gangs[self.measured as usize].iterations >= self.k {
            self.done = Some(now);
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
        self.gang_iterations += 1;
        let mut waiters = std::mem::take(&mut g.waiters);
        for &w in &waiters {
            let t = &mut self.threads[w as usize];
            t.waiting = false;
            if t.state == St::Running {
                // The spin since the segment start, charged now that it ends.
                let spun = now.saturating_sub(self.procs[t.proc as usize].seg_start);
                self.spin += spun;
                if gi as u32 == self.measured {
                    self.measured_spin += spun;
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
        if !(self.fast && self.try_batch(gi, now, eng)) {
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
                match self.sched {
                    SyncSched::Local => {
                        let proc = &mut self.procs[p as usize];
                        proc.queue.enqueue(ThreadId(w), EnqueueReason::Woken);
                        if proc.thread == NONE {
                            self.dispatch_local(p, eng);
                        }
                    }
                    SyncSched::Gang => {
                        if self.gang.current().is_none() {
                            eng.set_timer(self.slot_timer, now, SyncEv::SlotEnded);
                        } else if self.gang.is_running(GangId(gi as u64))
                            && self.procs[p as usize].thread == NONE
                        {
                            let proc = &self.procs[p as usize];
                            let cost = if proc.free_switch || proc.last == w {
                                0
                            } else {
                                self.tcs
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
        self.yields += 1;
        let gi = self.threads[th as usize].gang as usize;
        self.gangs[gi].voluntary += 1;
        let proc = &mut self.procs[p as usize];
        if self.sched == SyncSched::Local && !proc.queue.is_empty() {
            proc.thread = NONE;
            eng.cancel(proc.seg_timer);
            proc.queue.enqueue(ThreadId(th), EnqueueReason::Yielded);
            self.threads[th as usize].state = St::Ready;
            // run_on charges the switch to the next thread.
            self.dispatch_local(p, eng);
            return;
        }
        let start = proc.busy_until.max(now) + self.tcs;
        self.overhead += self.tcs;
        proc.busy_until = start;
        self.start_activity(th, p, start, eng);
    }

    pub(super) fn block(&mut self, th: u32, p: u32, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        let gi = self.threads[th as usize].gang as usize;
        self.threads[th as usize].state = St::Blocked;
        self.gangs[gi].runnable -= 1;
        self.gangs[gi].voluntary += 1;
        self.blocking_events += 1;
        self.overhead += self.block_cost;
        let proc = &mut self.procs[p as usize];
        proc.thread = NONE;
        eng.cancel(proc.seg_timer);
        proc.busy_until = proc.busy_until.max(now) + self.block_cost;
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
        match self.sched {
            SyncSched::Local => self.dispatch_local(p, eng),
            SyncSched::Gang => {
                let gangs = &self.gangs;
                if self
                    .gang
                    .should_switch_early(|g| gangs[g.0 as usize].runnable > 0)
                {
                    // Nothing runs in this slot any more: switch early.
                    debug_assert!(self.procs.iter().all(|q| q.thread == NONE));
                    eng.set_timer(self.slot_timer, eng.now(), SyncEv::SlotEnded);
                }
            }
        }
    }

    /// Starts `th` on `p` after `cost` ticks of switch overhead.
    pub(super) fn run_on(&mut self, p: u32, th: u32, cost: u64, eng: &mut Engine<SyncEv>) {
        let now = eng.now();
        let proc = &mut self.procs[p as usize];
        if proc.last != th {
            self.context_switches += 1;
        }
        let start = proc.busy_until.max(now) + cost;
        self.overhead += cost;
        proc.busy_until = start;
        proc.thread = th;
        proc.last = th;
        proc.free_switch = false;
        if self.sched == SyncSched::Local {
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
            self.tcs
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
        self.preemptions += 1;
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
            let d = (now - self.slot_start) as u128;
            self.frag_idle += self.slot_free as u128 * d;
            self.frag_total += self.procs.len() as u128 * d;
        }
        let gangs = &self.gangs;
        let change = self.gang.rotate(|g| gangs[g.0 as usize].runnable > 0);
        let next = change.to;
        self.slot_start = now;
        if next.is_some() && change.is_same() {
            // The only slot with work: no switch, a new quantum.
            self.slot_end = now + self.tq;
            eng.set_timer(self.slot_timer, self.slot_end, SyncEv::SlotEnded);
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
        self.slot_switches += 1;
        self.slot_free = self.gang.matrix().free_cells(s);
        self.slot_end = now + self.tcs + self.tq;
        // Scheduled before the slot's compute ends, so that a compute ending
        // as the slot does is preempted first (as a quantum's end is).
        eng.set_timer(self.slot_timer, self.slot_end, SyncEv::SlotEnded);
        for p in 0..self.procs.len() as u32 {
            let proc = &mut self.procs[p as usize];
            proc.busy_until = proc.busy_until.max(now) + self.tcs;
            proc.free_switch = false;
            self.overhead += self.tcs;
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

    #[inline]
    fn handle(&mut self, ev: SyncEv, eng: &mut Engine<SyncEv>) -> Result<Flow, MachineError> {
        match ev {
            SyncEv::SegmentEnded { p } => self.on_seg(p, eng),
            SyncEv::QuantumExpired { p } => self.on_quantum(p, eng),
            SyncEv::BatchCommitted { g } => self.on_batch(g, eng),
            SyncEv::SpinExpired { p } => self.on_spin(p, eng),
            SyncEv::SlotEnded => self.switch_slot(eng),
        }
        self.max_pending = self.max_pending.max(eng.pending());
        if self.audit {
            self.check(eng.now())?;
        }
        let periodic = self.periodic
            && matches!(ev, SyncEv::QuantumExpired { .. } | SyncEv::SlotEnded)
            && eng.next_time().is_none_or(|t| t > eng.now())
            && self.periodic_ready();
        Ok(if periodic { Flow::Stop } else { Flow::Continue })
    }
}
