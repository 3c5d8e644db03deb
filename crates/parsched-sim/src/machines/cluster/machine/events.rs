//! Event handlers: processor timers, message arrivals, the boost timer, probes, the per-second tick, the audit.

use super::*;

impl ClusterMachine {
    // ---- events -----------------------------------------------------------

    pub(super) fn on_cpu_timer(&mut self, c: usize, now: u64, eng: &mut Engine<Ev>) {
        let Some(p) = self.cpus[c].running else {
            return;
        };
        self.settle(c, now);
        if now >= self.cpus[c].seg_start {
            let act = self.procs[p as usize].act;
            match act {
                Act::Spin { .. } => {
                    if self.try_receive(p, now) {
                        // The receive overhead runs next.
                    } else if self.spin_limited(&self.procs[p as usize])
                        && now >= self.procs[p as usize].spin_deadline
                    {
                        let scheme = self
                            .implicit
                            .as_ref()
                            .expect("spin limits are implicit")
                            .scheme;
                        let pr = &mut self.procs[p as usize];
                        let Act::Spin { from } = pr.act else {
                            unreachable!()
                        };
                        match scheme.on_spin_expired() {
                            SpinExpiry::Block => pr.act = Act::BlockCall { from },
                            SpinExpiry::Yield => pr.act = Act::YieldCall { from },
                            SpinExpiry::KeepSpinning => {}
                        }
                        pr.left = self.sys;
                        if self.sys == 0 {
                            self.finish_act(c, p, now, eng);
                        }
                    }
                }
                Act::Done => {}
                _ => {
                    if self.procs[p as usize].left == 0 {
                        self.finish_act(c, p, now, eng);
                    }
                }
            }
        }
        if self.cpus[c].running == Some(p) && now >= self.cpus[c].quantum_end {
            let node = self.cpus[c].node as usize;
            let local = self.procs[p as usize].local;
            if self.nodes[node].sched.should_preempt(local) {
                self.preempt(c, now, EnqueueReason::QuantumExpired, eng);
                self.dispatch(c, now, eng);
                return;
            }
            self.nodes[node].sched.continue_running(local);
            let q = self.nodes[node].sched.quantum(local);
            self.cpus[c].quantum_end = self.quantum_end(node, now, q);
        }
        if self.cpus[c].running.is_some() {
            self.arm(c, now, eng);
        }
    }

    pub(super) fn on_arrival(
        &mut self,
        dest: u32,
        src: u32,
        seq: u32,
        now: u64,
        eng: &mut Engine<Ev>,
    ) {
        let pr = &mut self.procs[dest as usize];
        pr.inbox.push_back(Msg { src, seq });
        pr.pending += 1;
        pr.last_arrival = now;
        let node = pr.node as usize;
        if pr.started && self.implicit.is_some() {
            self.implicit_arrival(dest, node, now, eng);
        }
        let pr = &self.procs[dest as usize];
        if pr.state == ProcState::Running && matches!(pr.act, Act::Spin { .. }) {
            // The spinning receiver sees it at its next poll.
            let c = self.running_cpu(dest);
            self.arm(c, now, eng);
        }
    }

    pub(super) fn running_cpu(&self, p: u32) -> usize {
        let c = self.procs[p as usize].cpu as usize;
        debug_assert_eq!(self.cpus[c].running, Some(p));
        c
    }

    pub(super) fn on_probe(&mut self, now: u64, eng: &mut Engine<Ev>) {
        self.close_probe_interval(now);
        eng.schedule_at(Time(now + self.probe), Ev::ProbeTicked);
    }

    /// Ends the probe's interval at `now`: the probed node's CPUs accounted
    /// up to `now`, the interval's per-job row recorded, a new row begun.
    pub(super) fn close_probe_interval(&mut self, now: u64) {
        let node = self.probe_node as usize;
        let cpus = self.nodes[node].cpu0 as usize
            ..self.nodes[node].cpu0 as usize + self.cpus.len() / self.nodes.len();
        for c in cpus {
            self.account(c, now);
        }
        let row = std::mem::replace(&mut self.probe_acc, vec![0; self.jobs.len()]);
        self.probe_rows.push((now, row));
    }

    pub(super) fn on_second(&mut self, n: usize, now: u64, eng: &mut Engine<Ev>) {
        self.nodes[n].sched.on_second();
        if self.boost_cap > 0 {
            for &p in &self.nodes[n].procs {
                self.procs[p as usize].boosts_this_s = 0;
            }
        }
        if self.age_running {
            let cpus = self.nodes[n].cpu0 as usize
                ..self.nodes[n].cpu0 as usize + self.cpus.len() / self.nodes.len();
            for c in cpus {
                if let Some(p) = self.cpus[c].running {
                    let local = self.procs[p as usize].local;
                    self.nodes[n].sched.on_second_running(local);
                }
            }
        }
        self.check_preempt(n, now, eng);
        eng.schedule_at(
            Time(now + TICKS_PER_S),
            Ev::SecondElapsed { node: n as u32 },
        );
    }

    /// Audits the invariants of the machine's state (tests).
    pub(super) fn audit_state(&mut self) {
        let mut seen = vec![false; self.procs.len()];
        for c in &self.cpus {
            if let Some(p) = c.running {
                let pr = &self.procs[p as usize];
                if seen[p as usize] || pr.state != ProcState::Running {
                    self.counters.audit_failures += 1;
                }
                seen[p as usize] = true;
            }
        }
        for (i, pr) in self.procs.iter().enumerate() {
            if pr.state == ProcState::Running && !seen[i] {
                self.counters.audit_failures += 1;
            }
            if let NodeSched::Ts(ts) = &self.nodes[pr.node as usize].sched {
                if ts.level(ThreadId(pr.local)) > ts.table().top() {
                    self.counters.audit_failures += 1;
                }
            }
        }
        self.audit_global();
    }
}
