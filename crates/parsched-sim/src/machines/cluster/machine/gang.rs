//! The gang and FCFS references: slot rotation and filling.

use super::*;

impl ClusterMachine {
    // ---- gang scheduling --------------------------------------------------

    pub(super) fn gang_rotate(&mut self, now: u64, eng: &mut Engine<Ev>) {
        let done: Vec<bool> = self.jobs.iter().map(|j| j.left == 0).collect();
        let g = self.gang.as_mut().expect("gang mode");
        let change = g.rotate(|gid| !done[gid.0 as usize]);
        if change.is_same() {
            return;
        }
        if change.is_switch() {
            self.counters.slot_switches += 1;
        }
        for c in 0..self.cpus.len() {
            if self.cpus[c].running.is_some() {
                self.preempt(c, now, EnqueueReason::QuantumExpired, eng);
            }
        }
        for c in 0..self.cpus.len() {
            self.gang_fill(c, now, eng);
        }
    }

    pub(super) fn gang_fill(&mut self, c: usize, now: u64, eng: &mut Engine<Ev>) {
        let done: Vec<bool> = self.jobs.iter().map(|j| j.left == 0).collect();
        let g = self.gang.as_ref().expect("gang mode");
        let mut out = std::mem::take(&mut self.cells_out);
        g.running(|gid| !done[gid.0 as usize], &mut out);
        let njobs = self.jobs.len();
        let pick = out.get(c).copied().flatten().and_then(|cell| {
            let p = self.cell[c * njobs + cell.gang.0 as usize];
            (p != NONE && self.procs[p as usize].state == ProcState::Ready).then_some(p)
        });
        self.cells_out = out;
        match pick {
            Some(p) if self.cpus[c].running.is_none() => self.start(c, p, now, eng),
            _ => {}
        }
    }
}
