//! Gang policy: the mechanism around the core crate's [`GangScheduler`]
//! (admission queue, rotation, early switch, resize), which decides: the
//! first start, the slot switch (freeze the ending slot, spawn the gangs it
//! admits, thaw the next), width refits and the spreading of a running gang's
//! threads one per CPU.
//!
//! [`GangScheduler`]: parsched_core::policy::gang_sched::GangScheduler

use super::{Controller, SwitchRecord};
use crate::cgroup::{set_affinity, BackendKind};
use crate::error::Result;
use crate::procfs;
use parsched_core::policy::gang::{GangId, SlotId};
use parsched_core::policy::gang_sched::Admission;
use parsched_core::PolicyError;
use std::time::Instant;

impl Controller {
    pub(super) fn start_gang(&mut self) -> Result<()> {
        self.open_class_files();
        let mut placed = Vec::new();
        let mut released = Vec::new();
        for i in 0..self.jobs.len() {
            let (g, w) = (self.jobs[i].gang, self.jobs[i].width);
            // FCS: a job the policy holds out of the matrix (fixed DC)
            // never enters it.
            if self.is_fcs() && !self.fcs.in_matrix(i) {
                released.push(i);
                continue;
            }
            match self.sched.admit(g, w).map_err(PolicyError::from)? {
                Admission::Placed(_) => placed.push(i),
                Admission::Queued => {}
            }
        }
        let first = self.sched.rotate(|_| true).to;
        self.slot_since = Some(Instant::now());
        self.record(None, first, false);
        // Jobs of other slots first, each frozen right after its exec, so at
        // no time do two slots run together.
        for &i in &placed {
            if !self.sched.is_running(self.jobs[i].gang) {
                self.spawn(i)?;
                self.freeze_job(i)?;
            }
        }
        for &i in &placed {
            if self.sched.is_running(self.jobs[i].gang) {
                self.spawn(i)?;
                self.jobs[i].slots_run += 1;
                self.start_observing(i);
            }
        }
        for i in released {
            self.spawn(i)?;
            self.start_released(i)?;
        }
        self.fcs_start_slot()?;
        self.spread_current();
        Ok(())
    }

    pub(super) fn record(&mut self, from: Option<SlotId>, to: Option<SlotId>, early: bool) {
        if self.trace.len() >= 1_000_000 {
            return;
        }
        let live = self
            .jobs
            .iter()
            .filter(|j| {
                j.live() || (j.pid.is_none() && self.sched.matrix().allocation(j.gang).is_some())
            })
            .map(|j| j.gang)
            .collect();
        self.trace.push(SwitchRecord {
            at: self.t0.elapsed(),
            from,
            to,
            matrix: self.sched.matrix().clone(),
            live,
            early,
            dc_slot: false,
        });
    }

    /// Ends the current slot and starts the next one.
    pub(super) fn switch(&mut self, early: bool) -> Result<()> {
        self.check_unconfirmed();
        let t = Instant::now();
        if let Some(s) = self.dc_slot_since.take() {
            let secs = s.elapsed().as_secs_f64();
            self.stats.dc_slot_s += secs;
        }
        // FCS: close the observation periods and apply class changes (jobs
        // that became DC leave the matrix and stay thawed; released jobs
        // whose class changed back are admitted again).
        self.fcs_end_period()?;
        let from = self.sched.current();
        // FCS: a released job is owed its share: the next slot is a DC slot.
        let dc_next = self.fcs_dc_owed();
        // The same slot again (it is the only one with work) and nobody
        // waiting: keep it running; only re-spread (new threads). A look
        // ahead at the rotation, which itself happens after admission.
        if !dc_next && !self.in_dc_slot && from.is_some() && self.sched.waiting().len() == 0 {
            let live: Vec<bool> = self.jobs.iter().map(|j| j.live()).collect();
            // (FCS: unless a job taken back into it waits frozen.)
            let all_thawed = self.sched.gangs_in_current().iter().all(|g| {
                let j = &self.jobs[g.0 as usize];
                !j.live() || j.frozen_since.is_none()
            });
            if all_thawed && self.sched.peek(|g| live[g.0 as usize]) == from {
                self.record(from, from, early);
                self.fcs_restart_current();
                self.spread_current();
                return Ok(());
            }
        }
        // 1. Freeze the current slot's gangs (and FCS fillers): request all,
        //    then (strict mode) wait for the kernel to confirm all.
        let mut ending: Vec<usize> = self
            .sched
            .gangs_in_current()
            .iter()
            .map(|g| g.0 as usize)
            .collect();
        for i in self.fillers() {
            self.jobs[i].fcs.filling = false;
            if !ending.contains(&i) {
                ending.push(i);
            }
        }
        // FCS: F jobs the next (F) slot runs again stay thawed.
        if !dc_next {
            let keep = self.fcs_kept_thawed();
            ending.retain(|i| !keep.contains(i));
        }
        for &i in &ending {
            self.request_freeze_job(i)?;
        }
        let confirm = self.spec.confirm_freeze || self.freezer.kind() == BackendKind::Signal;
        if confirm {
            for &i in &ending {
                self.confirm_frozen_job(i)?;
            }
        }
        let t_frozen = t.elapsed();
        // Jobs without a configured width: fit the gang to the threads seen.
        for &i in &ending {
            self.refit_width(i)?;
        }
        // 2. Admit waiting jobs while everything is frozen: every queued job
        //    that fits, in queue order (later ones may pass one that does not).
        let admitted = self.sched.admit_waiting(true).map_err(PolicyError::from)?;
        for (g, _) in admitted {
            let i = g.0 as usize;
            if self.jobs[i].pid.is_some() {
                // FCS: a job taken back that was queued, running meanwhile.
                self.admitted_again(i)?;
            } else {
                self.spawn(i)?;
                self.freeze_job(i)?;
            }
        }
        if dc_next {
            // FCS: a DC slot; the rotation resumes after it.
            self.in_dc_slot = true;
            self.dc_slot_since = Some(Instant::now());
            self.fcs_start_dc_slot();
            self.stats.dc_slots += 1;
            self.record(from, None, early);
            if let Some(r) = self.trace.last_mut() {
                r.dc_slot = true;
            }
            if !confirm {
                for &i in &ending {
                    self.jobs[i].unconfirmed = true;
                }
            }
            self.stats.switches += 1;
            self.stats.switch_s += t_frozen.as_secs_f64();
            return Ok(());
        }
        self.in_dc_slot = false;
        // 3. Choose and thaw the next slot.
        let live: Vec<bool> = self.jobs.iter().map(|j| j.live()).collect();
        let next = self.sched.rotate(|g| live[g.0 as usize]).to;
        self.record(from, next, early);
        let t1 = Instant::now();
        let running: Vec<GangId> = self.sched.gangs_in_current().to_vec();
        for g in running {
            self.thaw_job(g.0 as usize)?;
        }
        self.fcs_start_slot()?;
        let dt = t_frozen + t1.elapsed();
        if !confirm {
            // Confirmed lazily: checked once at the next switch (one read).
            for &i in &ending {
                self.jobs[i].unconfirmed = true;
            }
        }
        self.stats.switches += 1;
        self.stats.switch_s += dt.as_secs_f64();
        self.stats.max_switch_s = self.stats.max_switch_s.max(dt.as_secs_f64());
        self.spread_current();
        Ok(())
    }

    /// A job with no configured width starts with all processors; each time
    /// it leaves its slot (frozen, at most 4 times) its gang is re-fitted to
    /// its current number of threads (capped at P), which may move it to
    /// another slot.
    pub(super) fn refit_width(&mut self, i: usize) -> Result<()> {
        let j = &self.jobs[i];
        if j.spec.width.is_some() || j.refits >= 4 || !j.live() {
            return Ok(());
        }
        let gang = j.gang;
        if self.sched.matrix().allocation(gang).is_none() {
            return Ok(());
        }
        let threads: usize = self
            .freezer
            .pids(&j.group)
            .unwrap_or_default()
            .into_iter()
            .map(|pid| procfs::tasks(pid).len())
            .sum();
        let want = (threads as u32).clamp(1, self.sched.matrix().procs());
        if want == j.width {
            return Ok(());
        }
        // No room at the new width (bounded slots): it keeps the old cells.
        if self.sched.resize(gang, want).map_err(PolicyError::from)? {
            self.jobs[i].width = want;
        }
        self.jobs[i].refits += 1;
        Ok(())
    }

    /// Groups whose freeze was requested a slot ago must read frozen now.
    pub(super) fn check_unconfirmed(&mut self) {
        for i in 0..self.jobs.len() {
            if !std::mem::take(&mut self.jobs[i].unconfirmed) {
                continue;
            }
            if !self.jobs[i].live() || self.jobs[i].frozen_since.is_none() {
                continue;
            }
            let g = self.jobs[i].group.clone();
            if let Ok(false) = self.freezer.is_frozen(&g) {
                self.warn(format!(
                    "{g}: still not reported frozen one slot after the freeze request"
                ));
            }
        }
    }

    /// Pins the running gangs' threads one per CPU over their cells.
    pub(super) fn spread_current(&mut self) {
        if !self.spec.spread {
            return;
        }
        let t = Instant::now();
        let running: Vec<GangId> = self.sched.gangs_in_current().to_vec();
        for g in running {
            let i = g.0 as usize;
            if !self.jobs[i].live() {
                continue;
            }
            // FCS: F jobs (spin-block) are not pinned: they share their
            // slot with the other F jobs, and the kernel balances threads
            // that block; a pinned thread cannot leave a processor taken by
            // another job's thread or by foreign load.
            if self.fcs_unpinned(i) {
                continue;
            }
            let Some(a) = self.sched.matrix().allocation(g) else {
                continue;
            };
            let cpus: Vec<u32> = a.procs.iter().map(|&p| self.topo.cpu(p)).collect();
            // The busiest tasks first (cumulative CPU time from schedstat):
            // the w busiest each get a CPU of their own, sleepers (a shell,
            // a waiting main thread) fill in after them.
            let pids = self.freezer.pids(&self.jobs[i].group).unwrap_or_default();
            let mut tasks: Vec<(u64, i32)> = Vec::new();
            for pid in pids {
                for tid in procfs::tasks(pid) {
                    let cpu = procfs::thread_cpu_ns(pid, tid).unwrap_or(0);
                    tasks.push((cpu, tid));
                }
            }
            tasks.sort_by_key(|&(cpu, tid)| (std::cmp::Reverse(cpu), tid));
            let mut pinned = std::mem::take(&mut self.jobs[i].pinned);
            let mut now_pinned = std::collections::BTreeMap::new();
            for (k, &(_, tid)) in tasks.iter().enumerate() {
                let c = cpus[k % cpus.len()];
                // Only changes cost a system call; threads may exit meanwhile.
                if pinned.remove(&tid) != Some(c) && set_affinity(tid, &[c]).is_err() {
                    continue;
                }
                now_pinned.insert(tid, c);
            }
            self.jobs[i].pinned = now_pinned;
            self.jobs[i].cpus = cpus;
        }
        self.stats.spread_s += t.elapsed().as_secs_f64();
    }
}
