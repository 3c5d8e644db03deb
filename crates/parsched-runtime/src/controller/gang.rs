//! Gang policy: each job is a gang of `width` cells in the core crate's
//! [`GangScheduler`] (matrix, admission queue, rotation, early switch,
//! resize), which decides; this policy turns its decisions into the
//! mechanism's: the first start, the slot switch (freeze the ending slot,
//! spawn the gangs it admits, thaw the next), width refits and the spreading
//! of a running gang's threads one per CPU.
//!
//! [`GangPolicy`] is generic over a [`GangExt`]: plain gang has none
//! ([`Plain`]); FCS (`fcs.rs`) is the same gang-matrix code with the FCS
//! extension's callbacks (classes, fillers, released jobs, DC slots), so the
//! two share every line of the matrix handling.
//!
//! [`GangScheduler`]: parsched_core::policy::gang_sched::GangScheduler

use super::mechanism::{mono_ns, Decision, Mechanism};
use super::policy::{Needs, PolicyEntry, PolicyReport, RuntimePolicy};
use super::SwitchRecord;
use crate::error::Result;
use crate::procfs;
use crate::spec::{JobReport, RunSpec};
use crate::topology::MachineTopology;
use parsched_core::policy::fcs::Step;
use parsched_core::policy::gang::{GangId, GangMatrix, SlotId};
use parsched_core::policy::gang_sched::{Admission, GangSchedOptions, GangScheduler};
use parsched_core::PolicyError;
use std::time::{Duration, Instant};

/// What a policy adds to the gang matrix (FCS: `fcs.rs`). Every callback
/// defaults to plain gang's behaviour (nothing).
pub(crate) trait GangExt: Send + 'static {
    /// The policy's name.
    fn name(&self) -> &'static str;
    /// Environment added to job `i` at its start.
    fn env(&self, _i: usize) -> Vec<(String, String)> {
        Vec::new()
    }
    /// Before any job starts.
    fn start(&mut self, _m: &mut Mechanism) {}
    /// Whether job `i` enters the matrix at the start (else it starts
    /// released: [`GangExt::start_released`]).
    fn starts_in_matrix(&self, _i: usize) -> bool {
        true
    }
    /// The first slot was chosen.
    fn first_slot(&mut self) {}
    /// Job `i` runs in its own slot from now (just started or thawed).
    fn observe_from_now(&mut self, _m: &Mechanism, _i: usize) {}
    /// Job `i` starts out of the matrix (running).
    fn start_released(
        &mut self,
        _m: &mut Mechanism,
        _s: &mut GangScheduler,
        _i: usize,
    ) -> Result<()> {
        Ok(())
    }
    /// The next slot was thawed: jobs of other slots may run in it.
    fn start_slot(&mut self, _m: &mut Mechanism, _s: &GangScheduler) -> Result<()> {
        Ok(())
    }
    /// A switch begins: the ending slot's observations are closed and the
    /// matrix membership revised.
    fn end_period(&mut self, _m: &mut Mechanism, _s: &mut GangScheduler) -> Result<()> {
        Ok(())
    }
    /// Whether the next slot is a DC slot (every gang frozen).
    fn dc_owed(&mut self, _m: &Mechanism) -> bool {
        false
    }
    /// Whether a DC slot runs now.
    fn in_dc_slot(&self) -> bool {
        false
    }
    /// In a DC slot: whether it has no live job left.
    fn dc_slot_empty(&self, _m: &Mechanism) -> bool {
        true
    }
    /// The running slot goes on for another period.
    fn restart_current(&mut self, _m: &Mechanism, _s: &GangScheduler) {}
    /// The jobs running outside their slots now (frozen at the switch).
    fn take_fillers(&mut self) -> Vec<usize> {
        Vec::new()
    }
    /// Jobs of the ending slot the next one runs too (not frozen).
    fn kept_thawed(&self, _m: &Mechanism, _s: &GangScheduler) -> Vec<usize> {
        Vec::new()
    }
    /// Job `i`, running, got cells: it waits frozen for its slot.
    fn admitted_again(&mut self, m: &mut Mechanism, i: usize) -> Result<()> {
        m.apply(Decision::RequestFreeze(i))?;
        m.apply(Decision::ExpectFrozen(i))
    }
    /// A DC slot starts.
    fn start_dc_slot(&mut self, _m: &mut Mechanism) {}
    /// A slot of the rotation starts (no DC slot).
    fn leave_dc_slot(&mut self) {}
    /// Job `i` was thawed in its own slot.
    fn own_slot(&mut self, _m: &mut Mechanism, _i: usize) {}
    /// Whether job `i`, running in its slot, is left unpinned.
    fn unpinned(&mut self, _m: &mut Mechanism, _i: usize) -> bool {
        false
    }
    /// Job `i` exited (it left the matrix).
    fn job_exit(&mut self, _i: usize) {}
    /// See [`RuntimePolicy::annotate`].
    fn annotate(&self, _i: usize, _r: &mut JobReport) {}
    /// See [`RuntimePolicy::on_stop`] (the jobs were thawed).
    fn stop(&mut self, _m: &mut Mechanism) {}
    /// See [`RuntimePolicy::finish`].
    fn finish(&mut self) {}
    /// See [`RuntimePolicy::report`] (plain gang: nothing of its own).
    fn report(&self) -> PolicyReport {
        PolicyReport::new()
    }
    /// See [`RuntimePolicy::record_decisions`].
    fn record_decisions(&mut self) {}
    /// See [`RuntimePolicy::decisions`].
    fn decisions(&self) -> &[Step] {
        &[]
    }
}

/// `gang`, as [`super::policy::POLICIES`] lists it.
pub(crate) const ENTRY: PolicyEntry = PolicyEntry {
    name: "gang",
    aliases: &[],
    doc: "gang scheduling on the Ousterhout matrix: slots switched by freezing each job's \
          cgroup (slot, max_slots, matrix, spread, confirm_freeze)",
    fragment: None,
    build: |spec, topo| Ok(Box::new(GangPolicy::plain(spec, topo)?)),
};

/// Plain gang scheduling: no extension.
pub(crate) struct Plain;

impl GangExt for Plain {
    fn name(&self) -> &'static str {
        "gang"
    }
}

/// The gang policy's state: the core scheduler, the refits, the timer.
pub(crate) struct GangPolicy<X: GangExt> {
    sched: GangScheduler,
    /// Times each job's gang was re-fitted to its thread count.
    refits: Vec<u32>,
    slot: Duration,
    deadline: Option<u64>,
    pub(super) ext: X,
}

impl GangPolicy<Plain> {
    /// Plain gang scheduling of `spec`'s jobs on `topo`.
    pub(crate) fn plain(spec: &RunSpec, topo: &MachineTopology) -> Result<GangPolicy<Plain>> {
        GangPolicy::with_ext(spec, topo, Plain)
    }
}

/// Whether job `i`'s gang waits for admission.
pub(super) fn queued(s: &GangScheduler, i: usize) -> bool {
    let gang = GangId(i as u64);
    s.waiting().any(|(g, _)| g == gang)
}

/// Frees job `i`'s cells, or takes it off the admission queue.
pub(super) fn leave_matrix(s: &mut GangScheduler, i: usize) -> Result<()> {
    let gang = GangId(i as u64);
    if queued(s, i) || s.matrix().allocation(gang).is_some() {
        s.finish(gang).map_err(PolicyError::from)?;
    }
    Ok(())
}

fn live(m: &Mechanism) -> Vec<bool> {
    m.jobs().iter().map(|j| j.live()).collect()
}

impl<X: GangExt> GangPolicy<X> {
    /// A matrix of the topology's processors and the spec's bounds, with
    /// extension `ext`.
    pub(crate) fn with_ext(spec: &RunSpec, topo: &MachineTopology, ext: X) -> Result<Self> {
        let p = topo.topology.num_procs();
        let matrix = GangMatrix::with_options(p, spec.max_slots, spec.matrix)?;
        Ok(GangPolicy {
            sched: GangScheduler::new(matrix, GangSchedOptions::default()),
            refits: vec![0; spec.jobs.len()],
            slot: spec.slot,
            deadline: None,
            ext,
        })
    }

    fn spawn(&self, m: &mut Mechanism, i: usize) -> Result<()> {
        m.apply(Decision::Spawn {
            job: i,
            env: self.ext.env(i),
        })
    }

    fn running(&self) -> Vec<usize> {
        self.sched
            .gangs_in_current()
            .iter()
            .map(|g| g.0 as usize)
            .collect()
    }

    fn record(&self, m: &mut Mechanism, from: Option<SlotId>, to: Option<SlotId>, early: bool) {
        self.record_slot(m, from, to, early, false);
    }

    fn record_slot(
        &self,
        m: &mut Mechanism,
        from: Option<SlotId>,
        to: Option<SlotId>,
        early: bool,
        dc_slot: bool,
    ) {
        if !m.tracing() {
            return;
        }
        let matrix = self.sched.matrix();
        let live = m
            .jobs()
            .iter()
            .enumerate()
            .filter(|(i, j)| {
                j.live() || (j.pid().is_none() && matrix.allocation(GangId(*i as u64)).is_some())
            })
            .map(|(i, _)| GangId(i as u64))
            .collect();
        let r = SwitchRecord {
            at: m.elapsed(),
            from,
            to,
            matrix: matrix.clone(),
            live,
            early,
            dc_slot,
        };
        m.record(r);
    }

    /// Ends the current slot and starts the next one.
    fn switch(&mut self, m: &mut Mechanism, early: bool) -> Result<()> {
        m.apply(Decision::VerifyFrozen)?;
        let t = Instant::now();
        // FCS: close the observation periods and apply class changes (jobs
        // that became DC leave the matrix and stay thawed; released jobs
        // whose class changed back are admitted again).
        self.ext.end_period(m, &mut self.sched)?;
        let from = self.sched.current();
        // FCS: a released job is owed its share: the next slot is a DC slot.
        let dc_next = self.ext.dc_owed(m);
        // The same slot again (it is the only one with work) and nobody
        // waiting: keep it running; only re-spread (new threads). A look
        // ahead at the rotation, which itself happens after admission.
        if !dc_next && !self.ext.in_dc_slot() && from.is_some() && self.sched.waiting().len() == 0 {
            let live = live(m);
            // (FCS: unless a job taken back into it waits frozen.)
            let all_thawed = self.sched.gangs_in_current().iter().all(|g| {
                let j = m.job(g.0 as usize);
                !j.live() || !j.frozen()
            });
            if all_thawed && self.sched.peek(|g| live[g.0 as usize]) == from {
                self.record(m, from, from, early);
                self.ext.restart_current(m, &self.sched);
                self.spread_current(m)?;
                return Ok(());
            }
        }
        // 1. Freeze the current slot's gangs (and FCS fillers): request all,
        //    then (strict mode) wait for the kernel to confirm all.
        let mut ending = self.running();
        for i in self.ext.take_fillers() {
            if !ending.contains(&i) {
                ending.push(i);
            }
        }
        // FCS: F jobs the next (F) slot runs again stay thawed.
        if !dc_next {
            let keep = self.ext.kept_thawed(m, &self.sched);
            ending.retain(|i| !keep.contains(i));
        }
        for &i in &ending {
            m.apply(Decision::RequestFreeze(i))?;
        }
        let confirm = m.confirms_at_once();
        if confirm {
            for &i in &ending {
                m.apply(Decision::ConfirmFrozen(i))?;
            }
        }
        let t_frozen = t.elapsed();
        // Jobs without a configured width: fit the gang to the threads seen.
        for &i in &ending {
            self.refit_width(m, i)?;
        }
        // 2. Admit waiting jobs while everything is frozen: every queued job
        //    that fits, in queue order (later ones may pass one that does not).
        let admitted = self.sched.admit_waiting(true).map_err(PolicyError::from)?;
        for (g, _) in admitted {
            let i = g.0 as usize;
            if m.job(i).pid().is_some() {
                // FCS: a job taken back that was queued, running meanwhile.
                self.ext.admitted_again(m, i)?;
            } else {
                self.spawn(m, i)?;
                m.apply(Decision::Freeze(i))?;
            }
        }
        if !confirm {
            // Confirmed lazily: checked once at the next switch (one read).
            for &i in &ending {
                m.apply(Decision::ExpectFrozen(i))?;
            }
        }
        if dc_next {
            // FCS: a DC slot; the rotation resumes after it.
            self.ext.start_dc_slot(m);
            self.record_slot(m, from, None, early, true);
            let st = m.stats_mut();
            st.switches += 1;
            st.switch_s += t_frozen.as_secs_f64();
            return Ok(());
        }
        self.ext.leave_dc_slot();
        self.thaw_next(m, from, early, t_frozen)
    }

    /// Step 3 of a switch: choose and thaw the next slot.
    fn thaw_next(
        &mut self,
        m: &mut Mechanism,
        from: Option<SlotId>,
        early: bool,
        t_frozen: Duration,
    ) -> Result<()> {
        let live = live(m);
        let next = self.sched.rotate(|g| live[g.0 as usize]).to;
        self.record(m, from, next, early);
        let t1 = Instant::now();
        for i in self.running() {
            if m.job(i).live() {
                m.apply(Decision::Thaw(i))?;
                self.ext.own_slot(m, i);
            }
        }
        self.ext.start_slot(m, &self.sched)?;
        let dt = (t_frozen + t1.elapsed()).as_secs_f64();
        let st = m.stats_mut();
        st.switches += 1;
        st.switch_s += dt;
        st.max_switch_s = st.max_switch_s.max(dt);
        self.spread_current(m)
    }

    /// A job with no configured width starts with all processors; each time
    /// it leaves its slot (frozen, at most 4 times) its gang is re-fitted to
    /// its current number of threads (capped at P), which may move it to
    /// another slot.
    fn refit_width(&mut self, m: &mut Mechanism, i: usize) -> Result<()> {
        let j = m.job(i);
        if j.spec().width.is_some() || self.refits[i] >= 4 || !j.live() {
            return Ok(());
        }
        let gang = GangId(i as u64);
        if self.sched.matrix().allocation(gang).is_none() {
            return Ok(());
        }
        let threads: usize = m
            .pids(i)
            .into_iter()
            .map(|pid| procfs::tasks(pid).len())
            .sum();
        let want = (threads as u32).clamp(1, self.sched.matrix().procs());
        if want == m.job(i).width() {
            return Ok(());
        }
        // No room at the new width (bounded slots): it keeps the old cells.
        if self.sched.resize(gang, want).map_err(PolicyError::from)? {
            m.apply(Decision::SetWidth(i, want))?;
        }
        self.refits[i] += 1;
        Ok(())
    }

    /// Pins the running gangs' threads one per CPU over their cells.
    fn spread_current(&mut self, m: &mut Mechanism) -> Result<()> {
        if !m.spec().spread {
            return Ok(());
        }
        let t = Instant::now();
        for i in self.running() {
            if !m.job(i).live() {
                continue;
            }
            // FCS: F jobs (spin-block) are not pinned: they share their
            // slot with the other F jobs, and the kernel balances threads
            // that block; a pinned thread cannot leave a processor taken by
            // another job's thread or by foreign load.
            if self.ext.unpinned(m, i) {
                continue;
            }
            let Some(a) = self.sched.matrix().allocation(GangId(i as u64)) else {
                continue;
            };
            let cpus: Vec<u32> = a.procs.iter().map(|&p| m.topology().cpu(p)).collect();
            m.apply(Decision::Spread { job: i, cpus })?;
        }
        m.stats_mut().spread_s += t.elapsed().as_secs_f64();
        Ok(())
    }

    fn restart_timer(&mut self) {
        self.deadline = Some(mono_ns() + self.slot.as_nanos() as u64);
    }
}

impl<X: GangExt> RuntimePolicy for GangPolicy<X> {
    fn name(&self) -> &'static str {
        self.ext.name()
    }

    fn needs(&self) -> Needs {
        Needs {
            freezer: true,
            cpusets: None,
        }
    }

    fn start(&mut self, m: &mut Mechanism) -> Result<()> {
        self.ext.start(m);
        let mut placed = Vec::new();
        let mut released = Vec::new();
        for i in 0..m.jobs().len() {
            // FCS: a job the policy holds out of the matrix (fixed DC)
            // never enters it.
            if !self.ext.starts_in_matrix(i) {
                released.push(i);
                continue;
            }
            let (g, w) = (GangId(i as u64), m.job(i).width());
            match self.sched.admit(g, w).map_err(PolicyError::from)? {
                Admission::Placed(_) => placed.push(i),
                Admission::Queued => {}
            }
        }
        let first = self.sched.rotate(|_| true).to;
        self.ext.first_slot();
        self.record(m, None, first, false);
        // Jobs of other slots first, each frozen right after its exec, so at
        // no time do two slots run together.
        let running = |s: &GangScheduler, i: usize| s.is_running(GangId(i as u64));
        for &i in &placed {
            if !running(&self.sched, i) {
                self.spawn(m, i)?;
                m.apply(Decision::Freeze(i))?;
            }
        }
        for &i in &placed {
            if running(&self.sched, i) {
                self.spawn(m, i)?;
                // (not frozen: only its slot is counted)
                m.apply(Decision::Thaw(i))?;
                self.ext.observe_from_now(m, i);
            }
        }
        for i in released {
            self.spawn(m, i)?;
            self.ext.start_released(m, &mut self.sched, i)?;
        }
        self.ext.start_slot(m, &self.sched)?;
        self.spread_current(m)?;
        self.restart_timer();
        Ok(())
    }

    fn next_deadline(&self) -> Option<u64> {
        self.deadline
    }

    fn on_timer(&mut self, m: &mut Mechanism, _now: u64) -> Result<()> {
        self.switch(m, false)?;
        self.restart_timer();
        Ok(())
    }

    /// Seed 001 §3.2's early switch: no live job left in the slot (or no
    /// slot running).
    fn on_exit(&mut self, m: &mut Mechanism) -> Result<()> {
        let slot_empty = if self.ext.in_dc_slot() {
            self.ext.dc_slot_empty(m)
        } else {
            let jobs = m.jobs();
            self.sched.current().is_none()
                || self
                    .sched
                    .should_switch_early(|g| jobs[g.0 as usize].live())
        };
        if slot_empty {
            self.switch(m, true)?;
            self.restart_timer();
        }
        Ok(())
    }

    fn on_job_exit(&mut self, _m: &mut Mechanism, i: usize) -> Result<()> {
        leave_matrix(&mut self.sched, i)?;
        self.ext.job_exit(i);
        Ok(())
    }

    fn annotate(&self, i: usize, r: &mut JobReport) {
        self.ext.annotate(i, r);
    }

    fn on_stop(&mut self, m: &mut Mechanism) -> Vec<usize> {
        self.ext.stop(m);
        let waiting: Vec<GangId> = self.sched.waiting().map(|(g, _)| g).collect();
        for &g in &waiting {
            let _ = self.sched.finish(g);
        }
        waiting.into_iter().map(|g| g.0 as usize).collect()
    }

    fn finish(&mut self) {
        self.ext.finish();
    }

    fn report(&self, _m: &Mechanism) -> PolicyReport {
        self.ext.report()
    }

    fn record_decisions(&mut self) {
        self.ext.record_decisions();
    }

    fn decisions(&self) -> &[Step] {
        self.ext.decisions()
    }
}
