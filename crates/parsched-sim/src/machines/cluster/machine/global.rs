//! The global scheme the cluster machine is built from: one component with
//! its own state, called by the machine at fixed points and nowhere else.
//!
//! * [`Global::Local`]: the nodes' local schedulers alone (steered by the
//!   implicit-coscheduling scheme: spin-block, DCS, periodic boost, ...).
//! * [`Global::Gang`]: the gang and FCFS references ([`GangRef`], `gang.rs`).
//! * [`Global::Fcs`]: flexible coscheduling over the local schedulers
//!   ([`FcsRun`], `fcs.rs`).
//!
//! The points (hooks): where a ready process goes ([`ClusterMachine::enqueue_proc`]),
//! what an idle processor runs ([`ClusterMachine::dispatch`]), whether a
//! process that became ready takes a processor ([`ClusterMachine::check_preempt`]),
//! the slot's end ([`ClusterMachine::on_slot_ended`]), a job's end
//! ([`ClusterMachine::job_finished`]), the start and the audit.

use super::*;

/// The global scheme's component.
pub(crate) enum Global {
    /// Independent local schedulers.
    Local,
    /// The gang or FCFS reference.
    Gang(GangRef),
    /// Flexible coscheduling.
    Fcs(Box<FcsRun>),
}

impl Global {
    /// FCS's state, when the scheme is FCS.
    pub fn fcs(&self) -> Option<&FcsRun> {
        match self {
            Global::Fcs(f) => Some(f),
            _ => None,
        }
    }

    pub fn fcs_mut(&mut self) -> Option<&mut FcsRun> {
        match self {
            Global::Fcs(f) => Some(f),
            _ => None,
        }
    }

    /// Processes are pinned to gang cells: no run queues, no quanta.
    pub fn pins(&self) -> bool {
        matches!(self, Global::Gang(_))
    }
}

impl ClusterMachine {
    /// Puts ready `p` where the scheme says (the node's run queue, or FCS's
    /// fill queue, or nowhere while its FCS row waits).
    pub(super) fn enqueue_proc(&mut self, p: u32, reason: EnqueueReason) {
        if matches!(self.global, Global::Fcs(_)) && self.fcs_enqueue(p) {
            return;
        }
        let pr = &self.procs[p as usize];
        self.nodes[pr.node as usize].sched.enqueue(pr.local, reason);
    }

    /// Picks the next process for processor `c` (or leaves it idle).
    pub(super) fn dispatch(&mut self, c: usize, now: u64, eng: &mut Engine<Ev>) {
        debug_assert!(self.cpus[c].running.is_none());
        if self.global.pins() {
            self.gang_fill(c, now, eng);
            return;
        }
        let node = self.cpus[c].node as usize;
        match self.nodes[node].sched.pick_next() {
            Some(t) => {
                let p = self.nodes[node].procs[t as usize];
                self.start(c, p, now, eng);
            }
            None => match self.nodes[node].fill.pop_front() {
                Some(p) => self.start(c, p, now, eng),
                None => eng.cancel(self.cpus[c].timer),
            },
        }
    }

    /// A process of node `node` became ready or was raised: under FCS a
    /// ready row process first displaces fillers; then an idle processor
    /// takes it, or it preempts the lowest-priority runner it outranks.
    pub(super) fn check_preempt(&mut self, node: usize, now: u64, eng: &mut Engine<Ev>) {
        if matches!(self.global, Global::Fcs(_)) && self.fcs_check(node, now, eng) {
            return;
        }
        self.local_preempt(node, now, eng);
    }

    /// The slot timer fired: the next slot (gang) or the next FCS slot.
    pub(super) fn on_slot_ended(&mut self, now: u64, eng: &mut Engine<Ev>) {
        if self.jobs_left == 0 {
            return;
        }
        match self.global {
            Global::Fcs(_) => self.fcs_rotate(now, true, None, eng),
            Global::Gang(_) => self.gang_rotate(now, eng),
            Global::Local => return,
        }
        eng.set_timer(self.slot_timer, Time(now + self.slot), Ev::SlotEnded);
    }

    /// Job `j` ended (foreground jobs are left): the scheme applies it.
    /// Returns true when it refilled the processors itself.
    pub(super) fn job_finished(&mut self, j: usize, now: u64, eng: &mut Engine<Ev>) -> bool {
        match &mut self.global {
            Global::Local => false,
            Global::Fcs(_) => {
                let before = self.fcs_roles();
                self.global.fcs_mut().expect("fcs mode").policy.finished(j);
                if self.jobs_left > 0 {
                    self.fcs_rotate(now, false, Some(before), eng);
                    return true;
                }
                false
            }
            Global::Gang(g) => {
                g.finished(j);
                let rotates = g.rotates;
                if self.jobs_left > 0 {
                    // The slot's gang is gone: switch at once.
                    self.gang_rotate(now, eng);
                    if rotates {
                        eng.set_timer(self.slot_timer, Time(now + self.slot), Ev::SlotEnded);
                    }
                    return true;
                }
                false
            }
        }
    }

    /// Before the first process is queued: FCS sets each job's waiting.
    pub(super) fn prepare_global(&mut self) {
        if matches!(self.global, Global::Fcs(_)) {
            for j in 0..self.jobs.len() {
                self.fcs_set_spin(j);
            }
        }
    }

    /// After the processes are launched: the slot clock starts (the gang
    /// references' first slot runs).
    pub(super) fn start_global(&mut self, eng: &mut Engine<Ev>) {
        match &self.global {
            Global::Local => {}
            Global::Fcs(_) => eng.set_timer(self.slot_timer, Time(self.slot), Ev::SlotEnded),
            Global::Gang(g) => {
                let rotates = g.rotates;
                self.gang_rotate(0, eng);
                if rotates {
                    eng.set_timer(self.slot_timer, Time(self.slot), Ev::SlotEnded);
                }
            }
        }
    }

    /// The scheme's invariants (the audit).
    pub(super) fn audit_global(&mut self) {
        if matches!(self.global, Global::Fcs(_)) {
            self.audit_fcs();
        }
    }
}
