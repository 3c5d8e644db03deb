//! The gang and FCFS references: a component of the cluster machine
//! ([`GangRef`]) holding the core [`GangScheduler`] over every processor.
//! Each process is pinned to its cell; a processor runs the process of the
//! running slot's gang in its cell (no local run queues, no quanta). Gang
//! scheduling rotates the slots every `gang_slot_ms`; FCFS (one job per
//! slot, the whole machine) runs each slot until its job ends.

use super::*;

/// The gang and FCFS references' state.
pub(crate) struct GangRef {
    sched: GangScheduler,
    /// `cell[cpu * jobs + job]`: the job's process pinned there (`NONE`).
    cell: Vec<u32>,
    jobs: usize,
    /// Scratch for [`GangScheduler::running`].
    cells_out: Vec<Option<Cell>>,
    /// Gang scheduling (slots end on the slot timer); FCFS otherwise.
    pub rotates: bool,
}

impl GangRef {
    /// The matrix with every job admitted (foreground first when
    /// `gang_background_apart`); `placement[job][rank]`: the processor of
    /// the job's rank.
    pub fn new(
        cfg: &ClusterConfig,
        plans: &[JobPlan],
    ) -> Result<(GangRef, Vec<Vec<u32>>), ClusterError> {
        let ncpus = cfg.nodes * cfg.cpus_per_node;
        let njobs = plans.len();
        let mut g = GangScheduler::new(GangMatrix::new(ncpus, None)?, GangSchedOptions::default());
        let mut placement = vec![Vec::new(); njobs];
        let mut admit = |g: &mut GangScheduler, j: usize| {
            let width = plans[j].width;
            match g.admit(GangId(j as u64), width) {
                Ok(Admission::Placed(a)) => {
                    placement[j] = a.procs.iter().map(|p| p.0).collect();
                    Ok(())
                }
                _ => Err(ClusterError::Program(format!(
                    "job {j} of width {width} does not fit the gang matrix"
                ))),
            }
        };
        if cfg.gang_background_apart {
            // Foreground jobs first (first fit among themselves); their
            // rows' free cells are held by placeholders while the
            // background jobs are placed (rows of their own), then freed.
            for j in (0..njobs).filter(|&j| !plans[j].background) {
                admit(&mut g, j)?;
            }
            let mut holders = Vec::new();
            for s in 0..g.matrix().num_slots() {
                let free = g.matrix().free_cells(SlotId(s));
                if free > 0 {
                    let h = GangId(u64::MAX - s as u64);
                    let _ = g
                        .admit(h, free)
                        .map_err(|e| ClusterError::Program(e.to_string()))?;
                    holders.push(h);
                }
            }
            for j in (0..njobs).filter(|&j| plans[j].background) {
                admit(&mut g, j)?;
            }
            for h in holders {
                let _ = g
                    .finish(h)
                    .map_err(|e| ClusterError::Program(e.to_string()))?;
            }
        } else {
            for j in 0..njobs {
                admit(&mut g, j)?;
            }
        }
        let gang = GangRef {
            sched: g,
            cell: vec![NONE; ncpus as usize * njobs],
            jobs: njobs,
            cells_out: Vec::new(),
            rotates: cfg.scheme == CoschedScheme::Gang,
        };
        Ok((gang, placement))
    }

    /// Process `p` of job `job` is pinned to processor `cpu`.
    pub fn pin(&mut self, cpu: u32, job: u32, p: u32) {
        self.cell[cpu as usize * self.jobs + job as usize] = p;
    }

    /// Job `j` ended: its cells are freed.
    pub fn finished(&mut self, j: usize) {
        let _ = self.sched.finish(GangId(j as u64));
    }
}

impl ClusterMachine {
    fn gang(&mut self) -> &mut GangRef {
        match &mut self.global {
            Global::Gang(g) => g,
            _ => unreachable!("gang mode"),
        }
    }

    /// The slot ends (or its gang is gone): the next slot with work runs;
    /// every processor is emptied and refilled from it.
    pub(super) fn gang_rotate(&mut self, now: u64, eng: &mut Engine<Ev>) {
        let done: Vec<bool> = self.jobs.iter().map(|j| j.left == 0).collect();
        let change = self.gang().sched.rotate(|gid| !done[gid.0 as usize]);
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

    /// Processor `c` runs its cell's process in the running slot, if ready.
    pub(super) fn gang_fill(&mut self, c: usize, now: u64, eng: &mut Engine<Ev>) {
        let done: Vec<bool> = self.jobs.iter().map(|j| j.left == 0).collect();
        let Global::Gang(g) = &mut self.global else {
            unreachable!("gang mode")
        };
        let mut out = std::mem::take(&mut g.cells_out);
        g.sched.running(|gid| !done[gid.0 as usize], &mut out);
        let pick = out.get(c).copied().flatten().and_then(|cell| {
            let p = g.cell[c * g.jobs + cell.gang.0 as usize];
            (p != NONE && self.procs[p as usize].state == ProcState::Ready).then_some(p)
        });
        g.cells_out = out;
        match pick {
            Some(p) if self.cpus[c].running.is_none() => self.start(c, p, now, eng),
            _ => {}
        }
    }
}
