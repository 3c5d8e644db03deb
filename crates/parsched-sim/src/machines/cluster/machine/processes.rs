//! Processes: the program steps (compute, send, receive), exit, blocking, spin-yield, wake-ups and boosts.

use super::*;

impl ClusterMachine {
    // ---- processes --------------------------------------------------------

    pub(super) fn begin_comm(p: &mut Proc, now: u64) {
        if p.comm_since.is_none() {
            p.comm_since = Some(now);
        }
    }

    pub(super) fn end_comm(p: &mut Proc, now: u64) {
        if let Some(s) = p.comm_since.take() {
            p.comm_ns += now - s;
        }
    }

    /// Polls the endpoint: pending messages are seen; the awaited one, if
    /// there, is taken (the receive overhead follows).
    pub(super) fn try_receive(&mut self, p: u32, now: u64) -> bool {
        let pr = &mut self.procs[p as usize];
        let Act::Spin { from } = pr.act else {
            return false;
        };
        pr.pending = 0;
        let Some(k) = pr.inbox.iter().position(|m| from == NONE || m.src == from) else {
            return false;
        };
        let m = pr.inbox.remove(k).expect("found");
        let expect = &mut pr.recv_seq[m.src as usize];
        if m.seq != *expect {
            self.counters.order_violations += 1;
        }
        *expect = m.seq + 1;
        self.counters.messages_received += 1;
        pr.recv_n += 1;
        pr.act = Act::RecvOv;
        pr.left = self.recv_ov;
        let _ = now;
        true
    }

    /// The message leaves `p` for rank `dest` of its job.
    pub(super) fn emit(&mut self, p: u32, dest: u32, bytes: u32, now: u64, eng: &mut Engine<Ev>) {
        let xfer = (bytes as f64 * self.per_byte).round() as u64;
        let pr = &mut self.procs[p as usize];
        let node = &mut self.nodes[pr.node as usize];
        let start = now.max(node.link_free);
        node.link_free = start + xfer;
        let d = dest as usize;
        let seq = pr.sent_seq[d];
        pr.sent_seq[d] += 1;
        let at = (start + self.wire + xfer).max(pr.last_arrival_to[d]);
        pr.last_arrival_to[d] = at;
        let dest_proc = self.jobs[pr.job as usize].base + dest;
        self.counters.messages_sent += 1;
        // one way: send posted to message taken by a polling receiver
        let latency = at - now.saturating_sub(self.send_ov) + self.recv_ov;
        self.counters.latency_ns_sum += latency;
        self.counters.latency_count += 1;
        if bytes <= SMALL_MESSAGE_BYTES {
            self.counters.small_latency_ns_sum += latency;
            self.counters.small_latency_count += 1;
        }
        eng.schedule_at(
            Time(at),
            Ev::MessageArrived {
                dest: dest_proc,
                src: pr.rank,
                seq,
            },
        );
    }

    /// Runs `p`'s program from its current point until it has something to
    /// do on the processor (or exits).
    pub(super) fn advance(&mut self, c: usize, p: u32, now: u64, eng: &mut Engine<Ev>) {
        loop {
            let job = self.procs[p as usize].job as usize;
            let width = self.jobs[job].width;
            let spin = self.job_spin[job];
            let pr = &mut self.procs[p as usize];
            let op = match pr.cursor.next(&self.programs[job], &mut pr.rng) {
                Op::Compute { units } => Op::Compute { units },
                Op::Send { to, bytes } => Op::Send { to, bytes },
                Op::Receive { from } => Op::Receive { from },
                Op::Exit => Op::Exit,
                Op::Barrier | Op::ForkJoin { .. } => Op::Barrier,
                Op::Touch {
                    region,
                    accesses,
                    pattern,
                } => Op::Touch {
                    region,
                    accesses,
                    pattern,
                },
            };
            match op {
                Op::Compute { units } => {
                    Self::end_comm(pr, now);
                    pr.act = Act::Compute;
                    pr.left = (units * 1e3 * pr.mult).round().max(0.0) as u64;
                    if pr.left > 0 {
                        return;
                    }
                }
                Op::Send { to, .. } | Op::Receive { from: to } if to.absent(pr.rank, width) => {
                    continue;
                }
                Op::Send { to, bytes } => {
                    Self::begin_comm(pr, now);
                    let dest = to.resolve(pr.rank, width).unwrap_or(pr.rank);
                    if self.send_ov == 0 {
                        self.emit(p, dest, bytes, now, eng);
                        continue;
                    }
                    pr.act = Act::SendOv { dest, bytes };
                    pr.left = self.send_ov;
                    return;
                }
                Op::Receive { from } => {
                    Self::begin_comm(pr, now);
                    let from = from.resolve(pr.rank, width).unwrap_or(NONE);
                    pr.act = Act::Spin { from };
                    pr.spin_deadline = now + spin;
                    if self.try_receive(p, now) {
                        if self.procs[p as usize].left > 0 {
                            return;
                        }
                        continue;
                    }
                    return;
                }
                Op::Exit => {
                    Self::end_comm(pr, now);
                    self.exit(c, p, now, eng);
                    return;
                }
                Op::Touch { .. } => {
                    // Refused when the machine is built; never a panic.
                    self.error = Some(ClusterError::Program(NO_CACHES.into()));
                    return;
                }
                Op::Barrier | Op::ForkJoin { .. } => {
                    self.error = Some(ClusterError::Program(
                        "the cluster machine runs message-passing programs: use message barriers, not Barrier or ForkJoin steps".into(),
                    ));
                    return;
                }
            }
        }
    }

    pub(super) fn exit(&mut self, c: usize, p: u32, now: u64, eng: &mut Engine<Ev>) {
        self.settle(c, now);
        self.release(c, now, eng);
        let pr = &mut self.procs[p as usize];
        pr.state = ProcState::Done;
        pr.act = Act::Done;
        let j = pr.job as usize;
        self.jobs[j].left -= 1;
        if self.jobs[j].left == 0 {
            self.jobs[j].finish = Some(now);
            self.job_finish[j] = Some(now);
            if !self.jobs[j].background {
                self.jobs_left -= 1;
                self.end = now;
            }
            if self.job_finished(j, now, eng) {
                return;
            }
        }
        if self.jobs_left > 0 {
            self.dispatch(c, now, eng);
        }
    }

    /// `p`'s current activity on processor `c` is complete.
    pub(super) fn finish_act(&mut self, c: usize, p: u32, now: u64, eng: &mut Engine<Ev>) {
        match self.procs[p as usize].act {
            Act::Compute | Act::RecvOv => self.advance(c, p, now, eng),
            Act::SendOv { dest, bytes } => {
                self.emit(p, dest, bytes, now, eng);
                self.advance(c, p, now, eng);
            }
            Act::BlockCall { from } => {
                let pr = &mut self.procs[p as usize];
                pr.act = Act::Spin { from };
                if self.try_receive(p, now) {
                    return;
                }
                self.block(c, p, now, eng);
            }
            Act::YieldCall { from } => {
                self.procs[p as usize].act = Act::Spin { from };
                self.spin_yield(c, p, now, eng);
            }
            Act::Daemon => {
                // The daemon sleeps until its next period.
                self.release(c, now, eng);
                let pr = &mut self.procs[p as usize];
                pr.state = ProcState::Blocked;
                let period = self.implicit.as_ref().map_or(0, |i| i.daemon_period());
                eng.schedule_at(Time(now + period), Ev::DaemonWoke { proc: p });
                self.dispatch(c, now, eng);
            }
            Act::Spin { .. } | Act::Done => {}
        }
    }

    pub(super) fn block(&mut self, c: usize, p: u32, now: u64, eng: &mut Engine<Ev>) {
        self.counters.blocks += 1;
        self.release(c, now, eng);
        let pr = &mut self.procs[p as usize];
        self.nodes[pr.node as usize].sched.blocked(pr.local);
        pr.state = ProcState::Blocked;
        pr.waking = false;
        pr.in_driver = true;
        if self.block_timeout > 0 {
            eng.set_timer(
                pr.timer,
                Time(now + self.block_timeout),
                Ev::WakeupTimerFired { proc: p },
            );
        }
        self.dispatch(c, now, eng);
    }

    pub(super) fn spin_yield(&mut self, c: usize, p: u32, now: u64, eng: &mut Engine<Ev>) {
        self.counters.yields += 1;
        let node = self.procs[p as usize].node as usize;
        let local = self.procs[p as usize].local;
        self.nodes[node].sched.lower(local);
        self.fill_view(node);
        let mut next = self.nodes[node].yield_next;
        let target = choose_yield_target(&self.view, local as usize, &mut next);
        self.nodes[node].yield_next = next;
        let spin = self.job_spin[self.procs[p as usize].job as usize];
        self.procs[p as usize].spin_deadline = now + spin;
        if let Some(t) = target {
            let q = self.nodes[node].procs[t];
            self.boost(q, now, eng);
        }
        // A lowered spinner gives way to anyone queued above it.
        if self.cpus[c].running == Some(p) {
            if let Some(q) = self.nodes[node].sched.peek_next() {
                if self.nodes[node].sched.preempts(q, local) {
                    self.preempt(c, now, EnqueueReason::Yielded, eng);
                    self.dispatch(c, now, eng);
                }
            }
        }
    }

    pub(super) fn fill_view(&mut self, node: usize) {
        self.view.clear();
        for &p in &self.nodes[node].procs {
            let pr = &self.procs[p as usize];
            self.view.push(EndpointView {
                state: if pr.started {
                    pr.state
                } else {
                    ProcState::Done
                },
                pending: if self.literal_pending {
                    pr.inbox.len() as u32
                } else {
                    pr.pending
                },
                last_arrival: Time(pr.last_arrival),
                in_driver: pr.in_driver,
            });
        }
    }

    /// Wakes blocked `p` (now, or after the wake delay).
    pub(super) fn wake(&mut self, p: u32, now: u64, eng: &mut Engine<Ev>) {
        let pr = &mut self.procs[p as usize];
        if pr.state != ProcState::Blocked || pr.waking || !pr.started {
            return;
        }
        if self.wake_delay > 0 {
            pr.waking = true;
            eng.set_timer(
                pr.timer,
                Time(now + self.wake_delay),
                Ev::WakeupTimerFired { proc: p },
            );
            return;
        }
        self.make_ready(p, now, eng);
    }

    pub(super) fn make_ready(&mut self, p: u32, now: u64, eng: &mut Engine<Ev>) {
        self.counters.wakeups += 1;
        let spin = if self.procs[p as usize].daemon {
            0
        } else {
            self.job_spin[self.procs[p as usize].job as usize]
        };
        let pr = &mut self.procs[p as usize];
        eng.cancel(pr.timer);
        pr.state = ProcState::Ready;
        pr.waking = false;
        pr.spin_deadline = now + spin;
        let node = pr.node as usize;
        self.enqueue_proc(p, EnqueueReason::Woken);
        self.check_preempt(node, now, eng);
    }

    /// Raises `p`'s priority (`boost_to`; a blocked process is woken
    /// instead). With `boost_cap`, a process already boosted that many times
    /// since its node's last once-a-second ageing is left as it is.
    pub(super) fn boost(&mut self, p: u32, now: u64, eng: &mut Engine<Ev>) {
        let node = self.procs[p as usize].node as usize;
        let local = self.procs[p as usize].local;
        let state = self.procs[p as usize].state;
        if matches!(state, ProcState::Ready | ProcState::Running) && self.boost_cap > 0 {
            let pr = &mut self.procs[p as usize];
            if pr.boosts_this_s >= self.boost_cap {
                self.counters.boosts_capped += 1;
                return;
            }
            pr.boosts_this_s += 1;
        }
        match state {
            ProcState::Ready => {
                self.counters.boosts += 1;
                self.nodes[node].sched.boost(local);
                self.check_preempt(node, now, eng);
            }
            ProcState::Running => {
                self.counters.boosts += 1;
                self.nodes[node].sched.boost(local);
                if self.boost_refreshes_quantum {
                    let c = self.running_cpu(p);
                    let q = self.nodes[node].sched.quantum(local);
                    self.cpus[c].quantum_end = self.quantum_end(node, now, q);
                    self.arm(c, now, eng);
                }
            }
            ProcState::Blocked => self.wake(p, now, eng),
            ProcState::Done => {}
        }
    }
}
