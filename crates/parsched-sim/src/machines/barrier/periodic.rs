//! The periodic solver: once busy waiting is periodic (no thread leaves a
//! processor before its quantum or slot ends), the rest of the run is solved
//! without events, bit-identical to the event path.

use super::*;

/// A thread's quanta on a periodic schedule: `[phi + m·period, phi +
/// m·period + τq)` for m = 0, 1, … (period τq: it runs without a break).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Win {
    phi: u64,
    period: u64,
}

impl Win {
    /// The thread's place in its quanta at time `t`.
    pub(super) fn at(self, t: u64, tq: u64) -> Pos {
        let mut p = Pos {
            ws: self.phi,
            m: 0,
            r: 0,
            period: self.period,
        };
        p.advance_to(t, tq);
        p
    }
}

/// A thread's place in its periodic quanta: it has run `m·τq + r` ticks
/// (from the solver's start), `r < τq`, and its quantum `m` starts at `ws`.
#[derive(Debug, Clone, Copy)]
struct Pos {
    ws: u64,
    m: u64,
    r: u64,
    period: u64,
}

impl Pos {
    #[inline]
    pub(super) fn cpu(&self, tq: u64) -> u64 {
        self.m * tq + self.r
    }

    /// The time at this place (inside quantum `m`, or at its start).
    #[inline]
    pub(super) fn time(&self) -> u64 {
        self.ws + self.r
    }

    /// `c` ticks of processor time later. A compute that ends as its quantum
    /// does ends at the start of the next one (the quantum's end preempts
    /// first at equal times).
    #[inline]
    pub(super) fn add(&mut self, c: u64, tq: u64) {
        let r = self.r + c;
        if r < tq {
            self.r = r;
        } else {
            let j = if r < 2 * tq { 1 } else { r / tq };
            self.m += j;
            self.ws += j * self.period;
            self.r = r - j * tq;
        }
    }

    /// Where the thread is at time `t` (not before [`Pos::time`]).
    #[inline]
    pub(super) fn advance_to(&mut self, t: u64, tq: u64) {
        if t < self.ws {
            return;
        }
        let d = t - self.ws;
        if d < tq {
            self.r = d;
            return;
        }
        let mut j = if d < self.period {
            0
        } else if d < 2 * self.period {
            1
        } else {
            d / self.period
        };
        let mut r = d - j * self.period;
        if r >= tq {
            j += 1;
            r = 0;
        }
        self.m += j;
        self.ws += j * self.period;
        self.r = r;
    }
}

impl<L: LocalScheduler> SyncMachine<L> {
    /// Whether the state at this instant (every event of it handled) is
    /// periodic: no skewing thread left, no batch in flight, every processor
    /// with a thread either alone on it or in a quantum whose timer was set
    /// when the quantum began.
    pub(super) fn periodic_ready(&self) -> bool {
        if self.measure.done.is_some() {
            return false;
        }
        if self.params.sched == SyncSched::Gang && self.gang.current().is_none() {
            return false;
        }
        // The solver relies on rigid round-robin order.
        if self.params.sched == SyncSched::Local
            && self
                .procs
                .iter()
                .any(|p| p.queue.as_round_robin().is_none())
        {
            return false;
        }
        for g in &self.gangs {
            match g.kind {
                Kind::Skew if g.alive > 0 => return false,
                Kind::Measured | Kind::Same
                    if g.wait != WaitStrategy::Busy || g.batch.iterations > 0 =>
                {
                    return false
                }
                _ => {}
            }
        }
        for proc in &self.procs {
            if proc.thread == NONE {
                if !proc.queue.is_empty() {
                    return false;
                }
                continue;
            }
            if !(proc.queue.is_empty() || proc.timer && proc.timer_fresh) {
                return false;
            }
            if proc.spin_timer.is_some() {
                return false;
            }
        }
        true
    }

    /// Solves the rest of a run whose schedule became periodic at `t0` (see
    /// [`SyncMachine::periodic_ready`]): busy-waiting threads never leave a
    /// processor before their quantum ends, so each processor repeats its
    /// round (ℓ quanta of τq, each after a switch of τcs; one thread runs on
    /// alone) for ever, and a thread's progress is a function of time. Each
    /// gang then runs on its own: an iteration ends when its last thread has
    /// received its compute time, in the thread's quanta. The draws, times
    /// and totals are those of the event-by-event path, including its order
    /// at equal times (a quantum that ends as a compute does preempts first:
    /// the thread arrives at its next quantum); tests check this. Returns the
    /// end of the run.
    pub(super) fn run_periodic(&mut self, t0: Time) -> Result<Time, MachineError> {
        // In-progress segments are charged up to t0.
        for p in 0..self.procs.len() {
            let th = self.procs[p].thread;
            if th != NONE && self.procs[p].seg_start < t0 {
                let elapsed = t0 - self.procs[p].seg_start;
                self.account(th, elapsed);
                self.procs[p].seg_start = t0;
            }
        }
        let mut wins = vec![
            Win {
                phi: 0,
                period: self.params.tq
            };
            self.threads.len()
        ];
        let rotation = match self.params.sched {
            SyncSched::Local => {
                self.local_windows(&mut wins);
                Vec::new()
            }
            SyncSched::Gang => self.gang_windows(&mut wins),
        };
        let mg = self.measured as usize;
        if self.measure.start.is_none() {
            // The measured gang's first dispatch is still ahead.
            let first = self.gangs[mg]
                .threads
                .iter()
                .map(|&t| wins[t as usize].phi)
                .min()
                .expect("a gang has threads");
            self.measure.start = Some(Time(first));
            self.measure.last_iter = Time(first);
        }
        let end = self.periodic_gang(mg, &wins, t0.0, None)?;
        for gi in 0..self.gangs.len() {
            match self.gangs[gi].kind {
                Kind::Same => {
                    self.periodic_gang(gi, &wins, t0.0, Some(end))?;
                }
                Kind::Compute => {
                    for i in 0..self.gangs[gi].threads.len() {
                        let w = wins[self.gangs[gi].threads[i] as usize];
                        self.stats.useful += w.at(end, self.params.tq).cpu(self.params.tq)
                            - w.at(t0.0, self.params.tq).cpu(self.params.tq);
                    }
                }
                Kind::Measured | Kind::Skew => {}
            }
        }
        match self.params.sched {
            SyncSched::Local => self.local_switches(&wins, end),
            SyncSched::Gang => self.gang_switches(&rotation, end)?,
        }
        self.measure.done = Some(Time(end));
        Ok(Time(end))
    }

    /// Local round robin: each thread's quanta. The running one's began at
    /// slice_end − τq, the queued ones follow in queue order.
    fn local_windows(&self, wins: &mut [Win]) {
        let step = self.params.tq + self.params.tcs;
        for proc in &self.procs {
            if proc.thread == NONE {
                continue;
            }
            let l = 1 + proc.queue.len() as u64;
            let period = if l == 1 { self.params.tq } else { l * step };
            let w0 = proc.slice_end.0 - self.params.tq;
            wins[proc.thread as usize] = Win { phi: w0, period };
            let queued = proc
                .queue
                .as_round_robin()
                .expect("periodic needs round robin");
            for (j, ThreadId(th)) in queued.iter().enumerate() {
                wins[th as usize] = Win {
                    phi: w0 + (j as u64 + 1) * step,
                    period,
                };
            }
        }
    }

    /// Local round robin, (t0, end]: quantum expiries and the measured
    /// gang's exits at the end.
    fn local_switches(&mut self, wins: &[Win], end: u64) {
        let step = self.params.tq + self.params.tcs;
        let mg = self.measured as usize;
        // Quantum expiries in (t0, end]: each preempts and switches.
        for proc in &self.procs {
            if proc.thread == NONE || proc.queue.is_empty() {
                continue;
            }
            let e0 = proc.slice_end.0;
            if end >= e0 {
                let n = (end - e0) / step + 1;
                self.stats.preemptions += n;
                self.stats.context_switches += n;
                self.stats.overhead += n * self.params.tcs;
            }
        }
        // The measured threads inside a quantum at the end exit then and
        // their processors switch to the next thread.
        for &t in &self.gangs[mg].threads {
            let p = self.threads[t as usize].proc as usize;
            if self.procs[p].queue.is_empty() {
                continue;
            }
            let w = wins[t as usize];
            if end >= w.phi && (end - w.phi) % w.period < self.params.tq {
                self.stats.context_switches += 1;
                self.stats.overhead += self.params.tcs;
            }
        }
    }

    /// Gang scheduling: the slots in the order they run from the current one,
    /// and each thread's quanta (its gang's slot: τcs after the switch, τq
    /// long, every rotation; a lone slot runs on without switches).
    fn gang_windows(&self, wins: &mut [Win]) -> Vec<SlotId> {
        let cur = self.gang.current().expect("a slot runs");
        let gangs = &self.gangs;
        let mut rot = vec![cur];
        loop {
            let next = self
                .gang
                .matrix()
                .next_slot(rot.last().copied(), |g| gangs[g.0 as usize].runnable > 0)
                .expect("the current slot has work");
            if next == cur {
                break;
            }
            rot.push(next);
        }
        let step = self.params.tq + self.params.tcs;
        let s = rot.len() as u64;
        let period = if s == 1 { self.params.tq } else { s * step };
        for (j, &slot) in rot.iter().enumerate() {
            let phi = if j == 0 {
                self.slot.end.0 - self.params.tq
            } else {
                self.slot.end.0 + (j as u64 - 1) * step + self.params.tcs
            };
            for g in self.gang.matrix().gangs_in(slot) {
                for &th in &self.gangs[g.0 as usize].threads {
                    wins[th as usize] = Win { phi, period };
                }
            }
        }
        rot
    }

    /// Gang scheduling, up to `end`: the slot switches (fragmentation,
    /// switch costs, context switches) and, when the measured gang had its
    /// slot to itself, the early switch its exit at the end triggers.
    fn gang_switches(&mut self, rot: &[SlotId], end: u64) -> Result<(), MachineError> {
        let p = self.procs.len() as u64;
        let s = rot.len();
        let inc = if s == 1 {
            self.params.tq
        } else {
            self.params.tq + self.params.tcs
        };
        let mut last: Vec<u32> = self.procs.iter().map(|q| q.last).collect();
        let (mut k, mut slot_start, mut e) = (0usize, self.slot.start.0, self.slot.end.0);
        let switch_to = |m: &mut SyncMachine<L>, k: usize, last: &mut [u32]| {
            m.stats.slot_switches += 1;
            m.stats.overhead += p * m.params.tcs;
            let ns = rot[k];
            for (q, l) in last.iter_mut().enumerate() {
                if let Some(g) = m.gang.matrix().cell(ns, ProcId(q as u32)) {
                    let th = m.gangs[g.0 as usize].on_proc[q];
                    if *l != th {
                        m.stats.context_switches += 1;
                    }
                    *l = th;
                }
            }
        };
        while e <= end {
            if self.watch.tick() {
                return Err(MachineError::Interrupted);
            }
            let d = (e - slot_start) as u128;
            self.stats.frag_idle += self.gang.matrix().free_cells(rot[k]) as u128 * d;
            self.stats.frag_total += p as u128 * d;
            slot_start = e;
            if s >= 2 {
                k = (k + 1) % s;
                switch_to(self, k, &mut last);
            }
            e += inc;
        }
        let mslot = self.gang.matrix().slot_of(GangId(self.measured as u64));
        if mslot == Some(rot[k])
            && self.gang.matrix().gangs_in(rot[k]) == [GangId(self.measured as u64)]
        {
            // Its threads exit at the end and leave every processor idle.
            let d = (end - slot_start) as u128;
            self.stats.frag_idle += self.gang.matrix().free_cells(rot[k]) as u128 * d;
            self.stats.frag_total += p as u128 * d;
            if s >= 2 {
                switch_to(self, (k + 1) % s, &mut last);
            }
        }
        Ok(())
    }

    /// Runs gang `gi` on the periodic schedule `wins` from `t0`: the measured
    /// gang (`limit` None) up to its k-th release, whose time is returned;
    /// another up to `limit`, its iteration in progress charged up to then.
    /// The gang's program is `Repeat { count, [Compute, Barrier] }`, so the
    /// draws are made directly (the same calls, in thread order, that the
    /// cursors make at a release).
    fn periodic_gang(
        &mut self,
        gi: usize,
        wins: &[Win],
        t0: u64,
        limit: Option<u64>,
    ) -> Result<u64, MachineError> {
        let measured = gi == self.measured as usize;
        let tq = self.params.tq;
        let (first, width) = (self.gangs[gi].first as usize, self.gangs[gi].width as usize);
        let demand = self.loop_demand(gi);
        // Per thread: where it is in its own quanta (at the start of its
        // current compute or, once arrived, at its arrival), and what it has
        // still to compute.
        let mut at: Vec<Pos> = Vec::with_capacity(width);
        let mut rem: Vec<u64> = Vec::with_capacity(width);
        let mut arrived: Vec<bool> = Vec::with_capacity(width);
        for th in &self.threads[first..first + width] {
            at.push(wins[first + at.len()].at(t0, tq));
            rem.push(th.remaining);
            arrived.push(th.waiting);
        }
        let (mut useful, mut spin, mut iterations) = (0u64, 0u64, 0u64);
        // Threads sharing their quanta (gang scheduling) are all at the same
        // place after a release, and an iteration is then the longest
        // compute placed in those quanta (each thread spins the difference).
        let shared = (1..width).all(|i| wins[first + i] == wins[first]);
        let mut aligned = false;
        let end;
        'outer: loop {
            if aligned {
                let mut p = at[0];
                loop {
                    if self.watch.tick() {
                        return Err(MachineError::Interrupted);
                    }
                    let (mut mx, mut sum) = (0u64, 0u64);
                    for &r in &rem {
                        mx = mx.max(r);
                        sum += r;
                    }
                    let mut q = p;
                    q.add(mx, tq);
                    let release = q.time();
                    if matches!(limit, Some(lim) if release > lim) {
                        // The general step below charges the partial iteration.
                        at.iter_mut().for_each(|a| *a = p);
                        aligned = false;
                        continue 'outer;
                    }
                    useful += sum;
                    spin += width as u64 * mx - sum;
                    p = q;
                    iterations += 1;
                    if measured && self.measured_release(release) {
                        end = release;
                        break 'outer;
                    }
                    let g = &mut self.gangs[gi];
                    rem.iter_mut()
                        .for_each(|r| *r = draw(&demand, g.width, &mut g.rng));
                }
            }
            if self.watch.tick() {
                return Err(MachineError::Interrupted);
            }
            // This iteration's arrivals (positions after the compute) and its
            // release.
            let mut release = 0;
            for i in 0..width {
                if !arrived[i] {
                    let mut p = at[i];
                    p.add(rem[i], tq);
                    release = release.max(p.time());
                }
            }
            if let Some(lim) = limit {
                if release > lim {
                    let (u, s) = partial_iteration(&at, &rem, &arrived, lim, tq);
                    useful += u;
                    spin += s;
                    end = lim;
                    break;
                }
            }
            for i in 0..width {
                let p = &mut at[i];
                if !arrived[i] {
                    useful += rem[i];
                    p.add(rem[i], tq);
                }
                let before = p.cpu(tq);
                p.advance_to(release, tq);
                spin += p.cpu(tq) - before;
                arrived[i] = false;
            }
            iterations += 1;
            if measured && self.measured_release(release) {
                end = release;
                break;
            }
            let g = &mut self.gangs[gi];
            rem.iter_mut()
                .for_each(|r| *r = draw(&demand, g.width, &mut g.rng));
            aligned = shared;
        }
        let g = &mut self.gangs[gi];
        if !measured {
            g.iterations += iterations;
        }
        g.arrived = 0;
        g.waiters.clear();
        self.stats.gang_iterations += iterations;
        self.stats.useful += useful;
        self.stats.spin += spin;
        if measured {
            self.stats.measured_spin += spin;
        }
        Ok(end)
    }
}

/// The iteration in progress at `lim` of threads at `at` with `rem` still
/// to compute (`arrived`: spinning at the barrier): the useful and spin
/// time each has run up to `lim`, summed.
fn partial_iteration(at: &[Pos], rem: &[u64], arrived: &[bool], lim: u64, tq: u64) -> (u64, u64) {
    let (mut useful, mut spin) = (0, 0);
    for i in 0..at.len() {
        let mut p = at[i];
        let before = p.cpu(tq);
        p.advance_to(lim, tq);
        let ran = p.cpu(tq) - before;
        if arrived[i] {
            spin += ran;
        } else {
            useful += rem[i].min(ran);
            spin += ran.saturating_sub(rem[i]);
        }
    }
    (useful, spin)
}
