//! Processors: accounting, dispatch, quanta, preemption, interrupts.

use super::*;

impl ClusterMachine {
    // ---- processors -------------------------------------------------------

    /// Credits the running process with its progress up to `now`.
    pub(super) fn settle(&mut self, c: usize, now: u64) {
        let cpu = &mut self.cpus[c];
        let Some(p) = cpu.running else { return };
        if now <= cpu.seg_start {
            return;
        }
        let d = now - cpu.seg_start;
        cpu.seg_start = now;
        let rate = cpu.rate;
        let pr = &mut self.procs[p as usize];
        match pr.act {
            Act::Spin { .. } => pr.spin_ns += d,
            Act::Done => {}
            _ if rate == 1.0 => pr.left -= d.min(pr.left),
            _ => {
                let work = (d as f64 * rate).round() as u64;
                pr.left -= work.min(pr.left);
            }
        }
    }

    /// The wall time `left` ns of work take at `rate`.
    fn at_rate(left: u64, rate: f64) -> u64 {
        if rate == 1.0 {
            left
        } else {
            (left as f64 / rate).ceil() as u64
        }
    }

    /// SMT: processor `c` started or stopped running a process. Both
    /// siblings' rates follow; a running sibling whose rate changes is
    /// settled at its old rate and re-armed at the new one.
    pub(super) fn smt_changed(&mut self, c: usize, now: u64, eng: &mut Engine<Ev>) {
        let sib = c ^ 1;
        let both = self.cpus[c].running.is_some() && self.cpus[sib].running.is_some();
        let rate = if both { self.smt_speed } else { 1.0 };
        // `c` itself: just dispatched (no progress yet: `start` arms it
        // after this) or just released.
        self.cpus[c].rate = rate;
        if self.cpus[sib].rate != rate {
            if self.cpus[sib].running.is_some() {
                self.settle(sib, now);
                self.cpus[sib].rate = rate;
                self.arm(sib, now, eng);
            } else {
                self.cpus[sib].rate = rate;
            }
        }
    }

    pub(super) fn has_match(p: &Proc) -> bool {
        match p.act {
            Act::Spin { from } => p.inbox.iter().any(|m| from == NONE || m.src == from),
            _ => false,
        }
    }

    /// Sets the processor's timer for the running process's next decision.
    pub(super) fn arm(&mut self, c: usize, now: u64, eng: &mut Engine<Ev>) {
        let cpu = &self.cpus[c];
        let Some(p) = cpu.running else {
            eng.cancel(cpu.timer);
            return;
        };
        let pr = &self.procs[p as usize];
        let end = match pr.act {
            Act::Spin { .. } => {
                if Self::has_match(pr) {
                    cpu.seg_start.max(now)
                } else if self.spin_limited(pr) {
                    cpu.seg_start.max(pr.spin_deadline)
                } else {
                    NEVER
                }
            }
            Act::Done => NEVER,
            _ => cpu.seg_start + Self::at_rate(pr.left, cpu.rate),
        };
        let at = end.min(cpu.quantum_end).max(now);
        eng.set_timer(cpu.timer, Time(at), Ev::CpuTimerFired { cpu: c as u32 });
    }

    /// Accounts the running process's processor time up to `now` (the probe).
    pub(super) fn account(&mut self, c: usize, now: u64) {
        let cpu = &mut self.cpus[c];
        if let Some(p) = cpu.running {
            let d = now.saturating_sub(cpu.acct_since);
            let pr = &mut self.procs[p as usize];
            pr.cpu_ns += d;
            if cpu.node == self.probe_node && pr.job != NONE {
                self.probe_acc[pr.job as usize] += d;
            }
            if self.timed {
                self.nodes[cpu.node as usize].sched.charge(pr.local, d);
            }
        }
        cpu.acct_since = now;
    }

    /// The processor stops running its process (settled by the caller).
    pub(super) fn release(&mut self, c: usize, now: u64, eng: &mut Engine<Ev>) {
        self.account(c, now);
        let cpu = &mut self.cpus[c];
        cpu.last = cpu.running.take();
        if let Some(p) = cpu.last {
            if self.nic_sample == 0 {
                self.procs[p as usize].believed = false;
            }
        }
        if self.smt {
            self.smt_changed(c, now, eng);
        }
    }

    /// Puts `p` on processor `c`.
    pub(super) fn start(&mut self, c: usize, p: u32, now: u64, eng: &mut Engine<Ev>) {
        if self.audit && self.procs[p as usize].state != ProcState::Ready {
            self.counters.audit_failures += 1;
        }
        let switch = self.cpus[c].last != Some(p);
        let cost = if switch { self.ctx } else { 0 };
        if switch && self.cpus[c].last.is_some() {
            self.counters.context_switches += 1;
        }
        let node = self.cpus[c].node as usize;
        let pr = &mut self.procs[p as usize];
        pr.state = ProcState::Running;
        pr.in_driver = false;
        pr.cpu = c as u32;
        if self.nic_sample == 0 {
            pr.believed = true;
        }
        let quantum = match pr.quantum_left.take() {
            Some(q) => q,
            None if self.global.pins() => NEVER,
            None => self.nodes[node].sched.quantum(pr.local),
        };
        let quantum_end = self.quantum_end(node, now, quantum);
        let cpu = &mut self.cpus[c];
        cpu.running = Some(p);
        cpu.seg_start = now + cost;
        cpu.quantum_end = quantum_end;
        cpu.acct_since = now;
        if self.smt {
            self.smt_changed(c, now, eng);
        }
        if self.audit {
            if let NodeSched::Ts(ts) = &self.nodes[node].sched {
                if ts.level(ThreadId(self.procs[p as usize].local)) > ts.table().top() {
                    self.counters.audit_failures += 1;
                }
            }
        }
        self.arm(c, now, eng);
    }

    /// When a quantum of `q` ns given at `now` ends: on the node's clock
    /// tick at which the quantum's ticks are used up (the partial tick of
    /// the dispatch counts whole, as the kernel's clock charges it).
    pub(super) fn quantum_end(&self, node: usize, now: u64, q: u64) -> u64 {
        if q >= NEVER {
            return NEVER;
        }
        if self.tick == 0 {
            return now + q;
        }
        let phase = self.nodes[node].tick_phase;
        let ticks = q.div_ceil(self.tick).max(1);
        // The first tick strictly after `now`.
        let k = (now + self.tick - phase) / self.tick;
        phase + (k + ticks - 1) * self.tick
    }

    /// Takes `p` off processor `c` back to the run queue for `reason`.
    pub(super) fn preempt(
        &mut self,
        c: usize,
        now: u64,
        reason: EnqueueReason,
        eng: &mut Engine<Ev>,
    ) {
        self.settle(c, now);
        let p = self.cpus[c].running.expect("preempting an idle processor");
        let quantum_end = self.cpus[c].quantum_end;
        self.release(c, now, eng);
        let pr = &mut self.procs[p as usize];
        pr.state = ProcState::Ready;
        pr.quantum_left =
            (reason == EnqueueReason::Preempted).then(|| quantum_end.saturating_sub(now).max(1));
        if !self.global.pins() {
            self.enqueue_proc(p, reason);
        }
    }

    /// A process of node `node` became ready or was raised: an idle
    /// processor takes it, or it preempts the lowest-priority runner it
    /// outranks.
    pub(super) fn local_preempt(&mut self, node: usize, now: u64, eng: &mut Engine<Ev>) {
        let Some(q) = self.nodes[node].sched.peek_next() else {
            return;
        };
        let cpus = self.nodes[node].cpu0 as usize
            ..self.nodes[node].cpu0 as usize + self.cpus.len() / self.nodes.len();
        let mut victim: Option<(usize, u8)> = None;
        for c in cpus {
            match self.cpus[c].running {
                None => {
                    self.dispatch(c, now, eng);
                    return;
                }
                Some(r) => {
                    let rl = self.procs[r as usize].local;
                    let sched = &self.nodes[node].sched;
                    if sched.preempts(q, rl) {
                        let lv = sched.level(rl);
                        if victim.is_none_or(|(_, l)| lv < l) {
                            victim = Some((c, lv));
                        }
                    }
                }
            }
        }
        if let Some((c, _)) = victim {
            self.preempt(c, now, EnqueueReason::Preempted, eng);
            self.dispatch(c, now, eng);
        }
    }

    /// The node's first processor takes an interrupt of `cost`.
    pub(super) fn interrupt(&mut self, node: usize, now: u64, cost: u64, eng: &mut Engine<Ev>) {
        let c = self.nodes[node].cpu0 as usize;
        if self.cpus[c].running.is_some() {
            self.settle(c, now);
            let cpu = &mut self.cpus[c];
            cpu.seg_start = cpu.seg_start.max(now) + cost;
            self.arm(c, now, eng);
        }
    }
}
