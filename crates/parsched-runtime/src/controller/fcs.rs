//! FCS policy (flexible coscheduling, seed 002): the controller measures each
//! job from /proc over observation periods, one core-crate [`ClassTracker`]
//! per job decides and revises its class (CS / F / DC), and the controller
//! applies it:
//!
//! * **CS** (requires coscheduling): a gang in the matrix, thawed only in its
//!   slot (dedicated processors).
//! * **F** (prefers coscheduling): a gang in the matrix, thawed in its slot
//!   but not pinned; in the slot of another F job (a slot with no CS or
//!   unclassified job) it is thawed too, unpinned, as a filler — at normal
//!   priority (the default: the F jobs share the slot's processors as their
//!   threads spin-block) or, with `fcs_fill_idle`, at `SCHED_IDLE` (it runs
//!   only where the slot's owner stalls) — and is frozen again at the slot's
//!   end. In CS slots it is frozen.
//! * **DC** (does not care): released from the matrix (its cells freed),
//!   thawed for good, unpinned, at `SCHED_IDLE`: it fills idle processors.
//!   Its share is bounded below: when a released job got less than
//!   `dc_min_share` of the CPU time it wanted since its release (run time
//!   over run + run-queue wait, from schedstat), the next slot is a DC slot
//!   (every gang frozen, the DC jobs alone; never two in a row).
//! * A class that changes is applied at the next slot switch: a job that
//!   becomes DC is released; a released job whose class becomes CS or F is
//!   taken back into the matrix (admitted again, at normal priority, frozen
//!   until its slot comes; queued if the multiprogramming level leaves no
//!   room, filling meanwhile).
//!
//! Observation periods: a job in the matrix is observed while it holds its
//! own slot (from its thaw to the next switch); a released job over every
//! slot; fillers are not observed. A period's observation sums over the job's
//! threads (`/proc/PID/task/TID/status` and `schedstat`): voluntary and
//! involuntary switches, CPU seconds (run time), thread-seconds observed
//! (threads × wall − run-queue wait: time a thread waited for a processor is
//! not behaviour) and blocked thread-seconds (observed − run). Frozen time is
//! never in a period.

use super::Controller;
use crate::cgroup::set_affinity;
use crate::error::Result;
use crate::procfs;
use crate::spec::Policy;
use parsched_core::policy::classify::{ClassTracker, CoschedClass, Observation};
use parsched_core::policy::gang_sched::Admission;
use parsched_core::PolicyError;
use std::time::Instant;

/// A job's /proc counters at one moment, summed over its threads.
#[derive(Debug, Clone, Copy)]
pub(super) struct ProcSnapshot {
    pub(super) at: Instant,
    pub(super) voluntary: u64,
    pub(super) involuntary: u64,
    /// Time on a CPU, ns (schedstat).
    pub(super) run_ns: u64,
    /// Time waiting on a run queue, ns (schedstat).
    pub(super) wait_ns: u64,
    pub(super) threads: u32,
}

/// FCS state of one job.
#[derive(Debug, Clone)]
pub(super) struct FcsJob {
    pub(super) tracker: ClassTracker,
    /// A class fixed by the job spec (`fcs_class`): no classification.
    pub(super) fixed: Option<CoschedClass>,
    /// The open observation period.
    pub(super) period: Option<ProcSnapshot>,
    /// Everything observed (the report's `observed`).
    pub(super) observed: Observation,
    /// (seconds since the run started, class) at each change.
    pub(super) classes: Vec<(f64, CoschedClass)>,
    /// Out of the matrix (DC, or taken back but queued): thawed, idle.
    pub(super) released: bool,
    /// An F job thawed as a filler in another F job's slot.
    pub(super) filling: bool,
    /// Its threads were set to SCHED_IDLE.
    pub(super) idle: bool,
    /// (run, wait) ns and the moment at its release (DC share).
    pub(super) since_release: Option<(u64, u64, Instant)>,
    /// Seconds of DC slots since its release.
    pub(super) dc_slot_s: f64,
    /// Thread-seconds it wanted a processor since its release, sampled at
    /// each switch (threads runnable then × time since the last sample,
    /// at most P), and when it was last sampled.
    pub(super) wanted_s: f64,
    pub(super) sampled: Option<Instant>,
}

impl FcsJob {
    pub(super) fn new(tracker: ClassTracker, fixed: Option<CoschedClass>) -> FcsJob {
        FcsJob {
            tracker,
            fixed,
            period: None,
            observed: Observation::default(),
            classes: fixed.map(|c| (0.0, c)).into_iter().collect(),
            released: false,
            filling: false,
            idle: false,
            since_release: None,
            dc_slot_s: 0.0,
            wanted_s: 0.0,
            sampled: None,
        }
    }

    pub(super) fn class(&self) -> Option<CoschedClass> {
        self.fixed.or(self.tracker.class())
    }
}

impl Controller {
    pub(super) fn is_fcs(&self) -> bool {
        self.spec.policy == Policy::Fcs
    }

    /// The job's /proc counters over all its threads, now.
    pub(super) fn job_proc(&self, i: usize) -> ProcSnapshot {
        let mut c = ProcSnapshot {
            at: Instant::now(),
            voluntary: 0,
            involuntary: 0,
            run_ns: 0,
            wait_ns: 0,
            threads: 0,
        };
        for pid in self.freezer.pids(&self.jobs[i].group).unwrap_or_default() {
            for tid in procfs::tasks(pid) {
                if let Some((v, n)) = procfs::task_ctxt_switches(pid, tid) {
                    c.voluntary += v;
                    c.involuntary += n;
                    c.threads += 1;
                    if let Some((run, wait)) = procfs::thread_schedstat(pid, tid) {
                        c.run_ns += run;
                        c.wait_ns += wait;
                    }
                }
            }
        }
        c
    }

    /// Opens an observation period (the job was just thawed in its own slot,
    /// or it is released).
    pub(super) fn start_observing(&mut self, i: usize) {
        if !self.is_fcs() || !self.jobs[i].live() || self.jobs[i].fcs.fixed.is_some() {
            return;
        }
        self.jobs[i].fcs.period = Some(self.job_proc(i));
    }

    /// Closes the job's observation period, feeds its tracker; the new class
    /// if it changed.
    fn close_period(&mut self, i: usize) -> Option<CoschedClass> {
        let before = self.jobs[i].fcs.period.take()?;
        let now = self.job_proc(i);
        let dt = before.at.elapsed().as_secs_f64();
        let threads = now.threads.max(1) as f64;
        // Counters of threads that exited meanwhile vanish: saturate.
        let run = now.run_ns.saturating_sub(before.run_ns) as f64 / 1e9;
        let rq = now.wait_ns.saturating_sub(before.wait_ns) as f64 / 1e9;
        let thread_s = (threads * dt - rq).max(0.0);
        let cpu_s = run.min(thread_s);
        let period = Observation {
            wall_s: thread_s / threads,
            thread_s,
            cpu_s,
            voluntary: now.voluntary.saturating_sub(before.voluntary),
            involuntary: now.involuntary.saturating_sub(before.involuntary),
            blocked_s: (thread_s - cpu_s).max(0.0),
            ..Default::default()
        };
        // A released job that barely ran (it starved at SCHED_IDLE, or
        // slept) shows nothing of its behaviour: schedstat credits a waiting
        // thread's run-queue wait only once it runs, so starving would look
        // like blocking without switches. Such periods are skipped.
        if self.jobs[i].fcs.released && cpu_s < 0.05 * threads * dt {
            return None;
        }
        let t = self.t0.elapsed().as_secs_f64();
        let f = &mut self.jobs[i].fcs;
        f.observed.add(&period);
        let change = f.tracker.observe(&period);
        if let Some(c) = change {
            f.classes.push((t, c));
        }
        change
    }

    /// Sets every thread of the job to SCHED_IDLE (`on`) or SCHED_OTHER.
    fn set_idle(&mut self, i: usize, on: bool) {
        let policy = if on {
            libc::SCHED_IDLE
        } else {
            libc::SCHED_OTHER
        };
        let p = libc::sched_param { sched_priority: 0 };
        for pid in self.freezer.pids(&self.jobs[i].group).unwrap_or_default() {
            for tid in procfs::tasks(pid) {
                // SAFETY: valid sched_param; threads may be gone meanwhile.
                unsafe { libc::sched_setscheduler(tid, policy, &p) };
            }
        }
        self.jobs[i].fcs.idle = on;
    }

    /// Allows every thread of the job on every CPU.
    fn unpin(&mut self, i: usize) {
        let all = self.topo.cpus.clone();
        for pid in self.freezer.pids(&self.jobs[i].group).unwrap_or_default() {
            for tid in procfs::tasks(pid) {
                let _ = set_affinity(tid, &all);
            }
        }
        self.jobs[i].pinned.clear();
        self.jobs[i].cpus = all;
    }

    /// Thaws a job outside its own slot (released, or filling), accounting
    /// the time it was frozen.
    fn thaw_outside_slot(&mut self, i: usize) -> Result<()> {
        if let Some(s) = self.jobs[i].frozen_since.take() {
            let g = self.jobs[i].group.clone();
            self.freezer.thaw(&g)?;
            self.jobs[i].suspended += s.elapsed();
        }
        Ok(())
    }

    /// Frees the gang's cells, or takes it off the admission queue.
    pub(super) fn leave_matrix(&mut self, i: usize) -> Result<()> {
        let gang = self.jobs[i].gang;
        let queued = self.sched.waiting().any(|(g, _)| g == gang);
        if queued || self.sched.matrix().allocation(gang).is_some() {
            self.sched.finish(gang).map_err(PolicyError::from)?;
        }
        Ok(())
    }

    /// DC: out of the matrix, thawed, unpinned, at SCHED_IDLE.
    pub(super) fn release(&mut self, i: usize) -> Result<()> {
        self.leave_matrix(i)?;
        self.thaw_outside_slot(i)?;
        self.set_idle(i, true);
        self.unpin(i);
        let now = self.job_proc(i);
        let f = &mut self.jobs[i].fcs;
        f.released = true;
        f.filling = false;
        f.since_release = Some((now.run_ns, now.wait_ns, Instant::now()));
        f.dc_slot_s = 0.0;
        f.wanted_s = 0.0;
        f.sampled = Some(Instant::now());
        Ok(())
    }

    /// A released job whose class became CS or F goes back into the matrix:
    /// normal priority, frozen until its slot comes (or queued, still
    /// filling, if there is no room).
    fn take_back(&mut self, i: usize) -> Result<()> {
        let (gang, width) = (self.jobs[i].gang, self.jobs[i].width);
        match self.sched.admit(gang, width).map_err(PolicyError::from)? {
            Admission::Placed(_) => self.admitted_again(i),
            Admission::Queued => Ok(()),
        }
    }

    /// A running job (taken back) got cells: it stops filling and waits,
    /// frozen, for its slot.
    pub(super) fn admitted_again(&mut self, i: usize) -> Result<()> {
        self.set_idle(i, false);
        let f = &mut self.jobs[i].fcs;
        f.released = false;
        f.since_release = None;
        f.period = None;
        self.request_freeze_job(i)?;
        self.jobs[i].unconfirmed = true;
        Ok(())
    }

    /// A job whose class is fixed DC starts released (spawned thawed).
    pub(super) fn start_released(&mut self, i: usize) -> Result<()> {
        self.release(i)
    }

    /// FCS, at the start of a switch: closes the observation periods, applies
    /// the class changes, restarts the released jobs' periods.
    pub(super) fn fcs_end_period(&mut self) -> Result<()> {
        if !self.is_fcs() {
            return Ok(());
        }
        let mut changes = Vec::new();
        for i in 0..self.jobs.len() {
            if self.jobs[i].live() && self.jobs[i].fcs.period.is_some() {
                if let Some(c) = self.close_period(i) {
                    changes.push((i, c));
                }
            }
        }
        for (i, c) in changes {
            let released = self.jobs[i].fcs.released;
            let queued = self.sched.waiting().any(|(g, _)| g == self.jobs[i].gang);
            if c == CoschedClass::DoesNotCare && (!released || queued) {
                self.release(i)?;
            } else if c.is_coscheduled() && released && !queued {
                self.take_back(i)?;
            }
        }
        for i in 0..self.jobs.len() {
            if self.jobs[i].live() && self.jobs[i].fcs.released {
                // New threads inherit SCHED_IDLE; re-applied for safety.
                self.set_idle(i, true);
                self.start_observing(i);
            }
        }
        Ok(())
    }

    /// FCS, when the same slot goes on: its jobs start a new period.
    pub(super) fn fcs_restart_current(&mut self) {
        if !self.is_fcs() {
            return;
        }
        let cur: Vec<usize> = self
            .sched
            .gangs_in_current()
            .iter()
            .map(|g| g.0 as usize)
            .collect();
        for i in cur {
            if self.jobs[i].frozen_since.is_none() {
                self.start_observing(i);
            }
        }
    }

    /// The jobs thawed as fillers now.
    pub(super) fn fillers(&self) -> Vec<usize> {
        (0..self.jobs.len())
            .filter(|&i| self.jobs[i].fcs.filling)
            .collect()
    }

    /// FCS, after the next slot was thawed: if it holds only F jobs, the F
    /// jobs of other slots fill in at SCHED_IDLE, unpinned.
    pub(super) fn fcs_start_slot(&mut self) -> Result<()> {
        if !self.is_fcs() {
            return Ok(());
        }
        let cur: Vec<usize> = self
            .sched
            .gangs_in_current()
            .iter()
            .map(|g| g.0 as usize)
            .filter(|&i| self.jobs[i].live())
            .collect();
        let f_slot = !cur.is_empty()
            && cur
                .iter()
                .all(|&i| self.jobs[i].fcs.class() == Some(CoschedClass::PrefersCoscheduling));
        if !f_slot {
            return Ok(());
        }
        for i in 0..self.jobs.len() {
            let j = &self.jobs[i];
            let other_f = j.live()
                && !j.fcs.released
                && j.fcs.class() == Some(CoschedClass::PrefersCoscheduling)
                && !self.sched.is_running(j.gang)
                && self.sched.matrix().allocation(j.gang).is_some();
            if other_f {
                if self.spec.fcs_fill_idle {
                    self.set_idle(i, true);
                }
                self.unpin(i);
                self.thaw_outside_slot(i)?;
                self.jobs[i].fcs.filling = true;
            }
        }
        Ok(())
    }

    /// FCS: the jobs of the ending slot (and fillers) that the next slot
    /// thaws again anyway — the next slot is an F slot, so its F jobs and
    /// every other F job run in it. They are not frozen at the switch: a
    /// freeze and thaw would cost them the scheduler's time to get all their
    /// threads running again (≈10 ms for 8 busy threads, see the notes).
    /// Empty when jobs wait for admission (the rotation may then differ from
    /// the look-ahead).
    pub(super) fn fcs_kept_thawed(&self) -> Vec<usize> {
        if !self.is_fcs() || self.sched.waiting().len() > 0 {
            return Vec::new();
        }
        let live: Vec<bool> = self.jobs.iter().map(|j| j.live()).collect();
        let Some(next) = self.sched.peek(|g| live[g.0 as usize]) else {
            return Vec::new();
        };
        let f = |i: usize| self.jobs[i].fcs.class() == Some(CoschedClass::PrefersCoscheduling);
        let owners: Vec<usize> = self
            .sched
            .matrix()
            .gangs_of(next)
            .iter()
            .map(|g| g.0 as usize)
            .filter(|&i| live[i])
            .collect();
        if owners.is_empty() || !owners.iter().all(|&i| f(i)) {
            return Vec::new();
        }
        (0..self.jobs.len())
            .filter(|&i| {
                live[i]
                    && f(i)
                    && !self.jobs[i].fcs.released
                    && self.sched.matrix().allocation(self.jobs[i].gang).is_some()
            })
            .collect()
    }

    /// FCS: whether the next slot is a DC slot: a released job got less than
    /// `dc_min_share` of the CPU time it wanted since its release, and DC
    /// slots took less than `dc_min_share` of the wall time since then (so
    /// DC slots cost the gangs at most about that share, even when foreign
    /// load keeps the DC job short in its own slots). "Wanted" is sampled:
    /// schedstat's run-queue wait is credited only once a waiting thread
    /// runs, so a starving thread shows none; instead, at each switch, the
    /// threads found runnable (state `R`) count as wanting a processor since
    /// the last switch (at most P of them).
    pub(super) fn fcs_dc_owed(&mut self) -> bool {
        if !self.is_fcs() || self.spec.dc_min_share <= 0.0 {
            return false;
        }
        let p = self.topo.cpus.len().max(1);
        for i in 0..self.jobs.len() {
            if !(self.jobs[i].live() && self.jobs[i].fcs.released) {
                continue;
            }
            let mut runnable = 0usize;
            for pid in self.freezer.pids(&self.jobs[i].group).unwrap_or_default() {
                for tid in procfs::tasks(pid) {
                    if crate::cgroup::task_state(pid, tid) == Some('R') {
                        runnable += 1;
                    }
                }
            }
            let f = &mut self.jobs[i].fcs;
            if let Some(t) = f.sampled.replace(Instant::now()) {
                f.wanted_s += t.elapsed().as_secs_f64() * runnable.min(p) as f64;
            }
        }
        if self.in_dc_slot {
            return false;
        }
        // Only when gangs compete with the released jobs.
        let gangs = self
            .jobs
            .iter()
            .any(|j| j.live() && !j.fcs.released && j.pid.is_some());
        if !gangs {
            return false;
        }
        let min_wanted = self.spec.slot.as_secs_f64() / 2.0;
        let share = self.spec.dc_min_share;
        (0..self.jobs.len()).any(|i| {
            let j = &self.jobs[i];
            let Some((r0, _, at)) = j.fcs.since_release.filter(|_| j.live()) else {
                return false;
            };
            if j.fcs.dc_slot_s >= share * at.elapsed().as_secs_f64() {
                return false;
            }
            let got = self.job_proc(i).run_ns.saturating_sub(r0) as f64 / 1e9;
            let wanted = j.fcs.wanted_s.max(got);
            wanted >= min_wanted && got < share * wanted
        })
    }

    /// FCS, at a job's own thaw: back at normal priority.
    pub(super) fn fcs_own_slot(&mut self, i: usize) {
        if self.is_fcs() && self.jobs[i].fcs.idle && !self.jobs[i].fcs.released {
            self.set_idle(i, false);
        }
        self.jobs[i].fcs.filling = false;
    }

    /// FCS: an F job is not spread over its cells (unpinned instead, once).
    pub(super) fn fcs_unpinned(&mut self, i: usize) -> bool {
        if !self.is_fcs() || self.jobs[i].fcs.class() != Some(CoschedClass::PrefersCoscheduling) {
            return false;
        }
        if !self.jobs[i].pinned.is_empty() {
            self.unpin(i);
        }
        true
    }

    /// FCS: a DC slot starts: the released jobs run at normal priority in it
    /// (at SCHED_IDLE, foreign load would still take their processors).
    pub(super) fn fcs_start_dc_slot(&mut self) {
        for i in 0..self.jobs.len() {
            if self.jobs[i].live() && self.jobs[i].fcs.released {
                self.set_idle(i, false);
            }
        }
    }

    /// FCS: a DC slot of `secs` ended: accounted to the released jobs (they
    /// go back to SCHED_IDLE in `fcs_end_period`).
    pub(super) fn fcs_end_dc_slot(&mut self, secs: f64) {
        for j in &mut self.jobs {
            if j.fcs.released {
                j.fcs.dc_slot_s += secs;
            }
        }
    }

    /// Whether any released (DC) job is alive.
    pub(super) fn any_released_live(&self) -> bool {
        self.jobs.iter().any(|j| j.live() && j.fcs.released)
    }
}
