//! Flexible coscheduling (seed 002): a component of the cluster machine
//! ([`FcsRun`]) applying `parsched_core::policy::fcs` with the core
//! `GangScheduler`, as the runtime's controller does.
//!
//! The policy says, per job, whether it runs in the slot (`Role::Row`: its
//! ready processes are on their node's run queue), whether it may fill
//! processors the slot's owners leave idle (`Fill`: on the node's fill
//! queue, run only when the run queue is empty, displaced as soon as a row
//! process is ready; `Released` DC jobs likewise) or waits (`Parked`: ready
//! but on no queue). The slots are those of a core `GangScheduler` whose
//! gangs are the policy's rows (`Fcs::row_gangs`: one gang per row, kept in
//! step with the policy by `GangScheduler::sync` whenever a class changes or
//! a job ends); the slot's owners are the jobs of its rows (`Fcs::owners`)
//! and every job's role is `Fcs::role_in_slot` of them. At each slot's end
//! the machine gives the policy an observation of every job whose role it
//! observes (`Role::observed`: the owners, and released jobs: CPU, spin and
//! communication time, messages received); the policy says whether a DC
//! slot comes (`Fcs::advance`), else the gang scheduler rotates to its next
//! slot (`GangScheduler::rotate`). Every decision is the core's; the
//! runtime's controller applies the same code to real processes.

use super::*;

/// A job's counters at the start of the current FCS slot.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct JobSnap {
    cpu: u64,
    spin: u64,
    comm: u64,
    recv: u64,
}

/// Flexible coscheduling's state in the machine.
pub(crate) struct FcsRun {
    pub policy: Fcs,
    /// The policy's rows as gangs of the core gang scheduler
    /// ([`Fcs::row_gangs`]), whose slots rotate as the runtime's do.
    sched: GangScheduler,
    /// Each job's width in the matrix (the machine builds every row as
    /// wide as the machine: one row a slot).
    widths: Vec<u32>,
    /// The jobs owning the running slot ([`Fcs::owners`]).
    owners: Vec<u32>,
    /// F and DC jobs' spin time before blocking (ns).
    spin: Vec<u64>,
    snap: Vec<JobSnap>,
    slot_start: u64,
    /// Classes over simulated time: (s, job, class).
    pub changes: Vec<(f64, u32, parsched_core::policy::classify::CoschedClass)>,
}

impl FcsRun {
    /// FCS over jobs as wide as `widths` in a matrix of `ncpus`; `spin`:
    /// each job's spin before blocking (ns). Every job starts in discovery,
    /// a row of its own; the first row holds the first slot.
    pub fn new(
        cfg: FcsConfig,
        widths: Vec<u32>,
        ncpus: u32,
        spin: Vec<u64>,
    ) -> Result<FcsRun, ClusterError> {
        let jobs = widths.len();
        let mut f = FcsRun {
            policy: Fcs::new(jobs, cfg)?,
            sched: GangScheduler::new(GangMatrix::new(ncpus, None)?, GangSchedOptions::default()),
            widths,
            owners: Vec::new(),
            spin,
            snap: vec![JobSnap::default(); jobs],
            slot_start: 0,
            changes: Vec::new(),
        };
        f.follow_rows()?;
        Ok(f)
    }

    /// Job `j`'s role in the running slot (or the DC slot).
    pub fn role(&self, j: usize) -> Role {
        self.policy.role_in_slot(j, &self.owners)
    }

    /// The gang scheduler's gangs follow the policy's rows (a class changed,
    /// a job finished).
    fn sync_rows(&mut self) -> Result<(), ClusterError> {
        let want = self.policy.row_gangs(&self.widths);
        self.sched
            .sync(&want)
            .map_err(|e| ClusterError::Program(e.to_string()))
    }

    fn find_owners(&mut self) {
        self.owners = self.policy.owners(self.sched.gangs_in_current());
    }

    /// Within a slot: the gangs follow the policy's rows; the running slot
    /// goes on while it holds a row, else the next slot runs at once.
    fn follow_rows(&mut self) -> Result<(), ClusterError> {
        self.sync_rows()?;
        if self.sched.current().is_none() || self.sched.should_switch_early(|_| true) {
            self.sched.rotate(|_| true);
        }
        self.find_owners();
        Ok(())
    }

    /// The slot ended after `wall_s` (the gangs follow the rows first): the
    /// policy says whether a DC slot comes ([`Fcs::advance`]); otherwise the
    /// gang scheduler's next slot holds the machine
    /// ([`GangScheduler::rotate`]: the slot after the one that ended, even if
    /// that one's row is gone; after a DC slot, the one after the slot
    /// before it).
    fn next_slot(&mut self, wall_s: f64) -> Result<(), ClusterError> {
        self.sync_rows()?;
        if let Slot::Row(_) = self.policy.advance(wall_s, &[]) {
            self.sched.rotate(|_| true);
        }
        self.find_owners();
        Ok(())
    }
}

impl ClusterMachine {
    fn fcs(&self) -> &FcsRun {
        self.global.fcs().expect("fcs mode")
    }

    /// Puts ready `p` where its job's role says: true when it went to the
    /// fill queue or waits parked; false when the run queue takes it (its
    /// row holds the slot, or it is a daemon).
    pub(super) fn fcs_enqueue(&mut self, p: u32) -> bool {
        let role = self.fcs().role(self.procs[p as usize].job as usize);
        let pr = &mut self.procs[p as usize];
        if pr.daemon {
            return false;
        }
        let node = pr.node as usize;
        match role {
            Role::Row => {
                pr.parked = false;
                false
            }
            Role::Fill { .. } | Role::Released => {
                pr.parked = false;
                self.nodes[node].fill.push_back(p);
                true
            }
            Role::Parked => {
                pr.parked = true;
                true
            }
        }
    }

    /// Job `j`'s waiting under FCS: busy in discovery and CS, spin-block
    /// (the configured spin) in F and DC.
    pub(super) fn fcs_set_spin(&mut self, j: usize) {
        let f = self.fcs();
        self.job_spin[j] = if f.policy.busy_waits(j) {
            NEVER
        } else {
            f.spin[j]
        };
    }

    fn role_of(&self, p: u32) -> Role {
        let pr = &self.procs[p as usize];
        match self.global.fcs() {
            Some(f) if !pr.daemon => f.role(pr.job as usize),
            _ => Role::Row,
        }
    }

    /// A process of `node` became ready: idle processors take work, and a
    /// ready row process displaces a filler. Returns true when no row
    /// process is left waiting (nothing for the priority check to do).
    pub(super) fn fcs_check(&mut self, node: usize, now: u64, eng: &mut Engine<Ev>) -> bool {
        let cpus = self.nodes[node].cpu0 as usize
            ..self.nodes[node].cpu0 as usize + self.cpus.len() / self.nodes.len();
        for c in cpus.clone() {
            if self.cpus[c].running.is_none()
                && (!self.nodes[node].sched.is_empty() || !self.nodes[node].fill.is_empty())
            {
                self.dispatch(c, now, eng);
            }
        }
        while !self.nodes[node].sched.is_empty() {
            let victim = cpus.clone().find(|&c| {
                self.cpus[c]
                    .running
                    .is_some_and(|r| self.role_of(r).fills())
            });
            let Some(c) = victim else { break };
            self.preempt(c, now, EnqueueReason::Preempted, eng);
            self.dispatch(c, now, eng);
        }
        self.nodes[node].sched.is_empty()
    }

    fn job_counters(&self, j: usize) -> JobSnap {
        let job = &self.jobs[j];
        let mut s = JobSnap::default();
        for p in job.base..job.base + job.width {
            let pr = &self.procs[p as usize];
            s.cpu += pr.cpu_ns;
            s.spin += pr.spin_ns;
            s.comm += pr.comm_ns;
            s.recv += pr.recv_n;
        }
        s
    }

    /// The slot ends (`advance`: the next row takes it; otherwise the rows
    /// changed, e.g. a job finished): observe the row, then apply the new
    /// roles.
    /// Every job's role now.
    pub(super) fn fcs_roles(&self) -> Vec<Role> {
        let f = self.fcs();
        (0..self.jobs.len()).map(|j| f.role(j)).collect()
    }

    /// `before`: the roles before a change made outside (a job finished);
    /// `None`: now.
    pub(super) fn fcs_rotate(
        &mut self,
        now: u64,
        advance: bool,
        before: Option<Vec<Role>>,
        eng: &mut Engine<Ev>,
    ) {
        for c in 0..self.cpus.len() {
            if self.cpus[c].running.is_some() {
                self.settle(c, now);
                self.account(c, now);
            }
        }
        let njobs = self.jobs.len();
        let before = before.unwrap_or_else(|| self.fcs_roles());
        // Waiting counts only while the job held the slot: open
        // communication intervals are cut here, and the part spent parked
        // or filling is dropped.
        for p in 0..self.procs.len() {
            let pr = &mut self.procs[p];
            if pr.daemon {
                continue;
            }
            if let Some(s) = pr.comm_since {
                if before[pr.job as usize].observed() {
                    pr.comm_ns += now.saturating_sub(s);
                }
                pr.comm_since = Some(now);
            }
        }
        let counters: Vec<JobSnap> = (0..njobs).map(|j| self.job_counters(j)).collect();
        let mut changed_spin = Vec::new();
        {
            let Global::Fcs(f) = &mut self.global else {
                unreachable!("fcs mode")
            };
            let wall = now.saturating_sub(f.slot_start);
            let followed = if advance && wall > 0 {
                // The jobs whose role the policy observes: the row that held
                // the slot, and released jobs.
                for j in 0..njobs {
                    if !before[j].observed() || self.jobs[j].left == 0 {
                        continue;
                    }
                    let (a, b) = (f.snap[j], counters[j]);
                    let s = |ns: u64| ns as f64 * 1e-9;
                    let wall_s = s(wall);
                    let obs = Observation {
                        wall_s,
                        thread_s: wall_s * self.jobs[j].width as f64,
                        cpu_s: s(b.cpu - a.cpu),
                        sync_events: Some(b.recv - a.recv),
                        wait_s: s(b.comm - a.comm),
                        spin_s: s(b.spin - a.spin),
                        ..Default::default()
                    };
                    if let Some(class) = f.policy.observe(j, &obs) {
                        f.changes.push((s(now), j as u32, class));
                        changed_spin.push(j);
                    }
                }
                // The simulator does not measure a released job's wanted
                // time: no usage, so no DC slots (`dc_min_share` is off by
                // default anyway).
                f.next_slot(wall as f64 * 1e-9)
            } else {
                f.follow_rows()
            };
            if let Err(e) = followed {
                self.error = Some(e);
            }
            f.snap = counters;
            f.slot_start = now;
        }
        for j in changed_spin {
            self.fcs_set_spin(j);
        }
        self.fcs_apply_roles(&before, now, eng);
    }

    /// The roles changed from `before` (a new slot, a class change, a job's
    /// end): queued processes move to their new place, running ones that
    /// lost the slot give way, idle processors take work.
    fn fcs_apply_roles(&mut self, before: &[Role], now: u64, eng: &mut Engine<Ev>) {
        let after = self.fcs_roles();
        if before == after {
            return;
        }
        self.counters.slot_switches += 1;
        // Queued processes whose role changed move to their new place.
        for n in 0..self.nodes.len() {
            for k in 0..self.nodes[n].procs.len() {
                let p = self.nodes[n].procs[k];
                let pr = &self.procs[p as usize];
                if pr.daemon || pr.state != ProcState::Ready {
                    continue;
                }
                let j = pr.job as usize;
                if before[j] == after[j] {
                    continue;
                }
                match before[j] {
                    Role::Row => {
                        self.nodes[n].sched.remove(pr.local);
                    }
                    Role::Fill { .. } | Role::Released => self.nodes[n].fill.retain(|&q| q != p),
                    Role::Parked => {}
                }
                self.enqueue_proc(p, EnqueueReason::Preempted);
            }
        }
        // Running processes that lost the slot give way.
        for c in 0..self.cpus.len() {
            let node = self.cpus[c].node as usize;
            match self.cpus[c].running {
                Some(p) => {
                    let role = self.role_of(p);
                    let displaced = role == Role::Parked
                        || (role.fills() && !self.nodes[node].sched.is_empty());
                    if displaced {
                        self.preempt(c, now, EnqueueReason::Preempted, eng);
                        self.dispatch(c, now, eng);
                    }
                }
                None => self.dispatch(c, now, eng),
            }
        }
    }

    /// FCS's invariants: a CS job runs only in its own slot, and while one of
    /// its processes is ready no processor of its node runs another job's
    /// process (so its processes run together and nobody fills its cells).
    pub(super) fn audit_fcs(&mut self) {
        use parsched_core::policy::classify::CoschedClass;
        let f = self.fcs();
        let per_node = self.cpus.len() / self.nodes.len();
        let mut bad = 0;
        for pr in &self.procs {
            if pr.daemon
                || f.policy.class(pr.job as usize) != Some(CoschedClass::RequiresCoscheduling)
            {
                continue;
            }
            let role = f.role(pr.job as usize);
            match pr.state {
                ProcState::Running if role != Role::Row => bad += 1,
                ProcState::Ready if role == Role::Row => {
                    let c0 = pr.node as usize * per_node;
                    if self.cpus[c0..c0 + per_node].iter().any(|c| {
                        c.running
                            .is_some_and(|r| self.procs[r as usize].job != pr.job)
                    }) {
                        bad += 1;
                    }
                }
                _ => {}
            }
        }
        self.counters.audit_failures += bad;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slots are the gang scheduler's: a slot whose row is gone in the
    /// middle of it gives way to the next slot (the policy's own turn order
    /// went back to its first row), and the turns go on from there.
    #[test]
    fn the_slots_rotate_through_the_gang_scheduler() {
        let mut f = FcsRun::new(FcsConfig::default(), vec![4; 3], 4, vec![0; 3]).unwrap();
        assert_eq!(f.owners, vec![0]);
        assert_eq!((f.role(0), f.role(1)), (Role::Row, Role::Parked));
        f.next_slot(0.05).unwrap();
        assert_eq!(f.owners, vec![1]);
        f.policy.finished(1);
        f.follow_rows().unwrap();
        assert_eq!(f.owners, vec![2]);
        assert_eq!(f.policy.current_row(), Some(&[0u32][..]));
        assert_eq!((f.role(2), f.role(0)), (Role::Row, Role::Parked));
        f.next_slot(0.05).unwrap();
        assert_eq!(f.owners, vec![0]);
        f.next_slot(0.05).unwrap();
        assert_eq!(f.owners, vec![2]);
        assert_eq!(f.sched.matrix().num_gangs(), 2);
    }
}
