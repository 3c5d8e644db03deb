//! Gang policy: the first placement, the slot switch (freeze the ending
//! slot, admit waiting jobs, thaw the next), width refits and the spreading
//! of a running gang's threads one per CPU.

use super::{Controller, SwitchRecord};
use crate::cgroup::{set_affinity, BackendKind};
use crate::error::Result;
use crate::procfs;
use parsched_core::policy::gang::SlotId;
use std::time::Instant;

impl Controller {
    pub(super) fn start_gang(&mut self) -> Result<()> {
        for i in 0..self.jobs.len() {
            let (g, w) = (self.jobs[i].gang, self.jobs[i].width);
            if self
                .matrix
                .allocate(g, w)
                .map_err(parsched_core::PolicyError::from)?
                .is_none()
            {
                self.waiting.push(i);
            }
        }
        let first = self.matrix.next_slot(None, |_| true);
        self.record(None, first, false);
        // Jobs of other slots first, each frozen right after its exec, so at
        // no time do two slots run together.
        let placed: Vec<usize> = (0..self.jobs.len())
            .filter(|i| !self.waiting.contains(i))
            .collect();
        for &i in &placed {
            if self.matrix.slot_of(self.jobs[i].gang) != first {
                self.spawn(i)?;
                self.freeze_job(i)?;
            }
        }
        for &i in &placed {
            if self.matrix.slot_of(self.jobs[i].gang) == first {
                self.spawn(i)?;
                self.jobs[i].slots_run += 1;
                self.start_observing(i);
            }
        }
        self.cur = first;
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
            .filter(|j| j.live() || (j.pid.is_none() && self.matrix.allocation(j.gang).is_some()))
            .map(|j| j.gang)
            .collect();
        self.trace.push(SwitchRecord {
            at: self.t0.elapsed(),
            from,
            to,
            matrix: self.matrix.clone(),
            live,
            early,
        });
    }

    /// Ends the current slot and starts the next one.
    pub(super) fn switch(&mut self, early: bool) -> Result<()> {
        self.check_unconfirmed();
        let t = Instant::now();
        let from = self.cur;
        // The same slot again (it is the only one with work) and nobody
        // waiting: keep it running; only re-spread (new threads).
        if from.is_some() && self.waiting.is_empty() {
            let live: Vec<bool> = self.jobs.iter().map(|j| j.live()).collect();
            if self.matrix.next_slot(from, |g| live[g.0 as usize]) == from {
                self.record(from, from, early);
                self.spread_current();
                return Ok(());
            }
        }
        // 1. Freeze the current slot's gangs: request all, then (strict
        //    mode) wait for the kernel to confirm all.
        let mut ending: Vec<usize> = from.map_or_else(Vec::new, |s| {
            self.matrix
                .gangs_in(s)
                .iter()
                .map(|g| g.0 as usize)
                .collect()
        });
        // Flexible: jobs classified as blocking leave the matrix now and
        // stay thawed.
        ending.retain(|&i| !self.observe_and_classify(i));
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
        // 2. Admit waiting jobs while everything is frozen.
        if !self.waiting.is_empty() {
            let waiting = std::mem::take(&mut self.waiting);
            for i in waiting {
                let (g, w) = (self.jobs[i].gang, self.jobs[i].width);
                match self
                    .matrix
                    .allocate(g, w)
                    .map_err(parsched_core::PolicyError::from)?
                {
                    Some(_) => {
                        self.spawn(i)?;
                        self.freeze_job(i)?;
                    }
                    None => self.waiting.push(i),
                }
            }
        }
        // 3. Choose and thaw the next slot.
        let live: Vec<bool> = self.jobs.iter().map(|j| j.live()).collect();
        let next = self.matrix.next_slot(from, |g| live[g.0 as usize]);
        self.record(from, next, early);
        let t1 = Instant::now();
        if let Some(s) = next {
            for g in self.matrix.gangs_in(s) {
                self.thaw_job(g.0 as usize)?;
            }
        }
        let dt = t_frozen + t1.elapsed();
        if !confirm {
            // Confirmed lazily: checked once at the next switch (one read).
            for &i in &ending {
                self.jobs[i].unconfirmed = true;
            }
        }
        self.cur = next;
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
        if self.matrix.allocation(gang).is_none() {
            return Ok(());
        }
        let threads: usize = self
            .freezer
            .pids(&j.group)
            .unwrap_or_default()
            .into_iter()
            .map(|pid| procfs::tasks(pid).len())
            .sum();
        let want = (threads as u32).clamp(1, self.matrix.procs());
        if want == j.width {
            return Ok(());
        }
        let old = self
            .matrix
            .release(gang)
            .map_err(parsched_core::PolicyError::from)?;
        match self
            .matrix
            .allocate(gang, want)
            .map_err(parsched_core::PolicyError::from)?
        {
            Some(_) => {
                self.jobs[i].width = want;
            }
            None => {
                // No room at the new width (bounded slots): keep the old cells.
                let back = self
                    .matrix
                    .allocate(gang, old.width())
                    .map_err(parsched_core::PolicyError::from)?;
                debug_assert!(back.is_some());
            }
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
        let Some(s) = self.cur else { return };
        let t = Instant::now();
        for g in self.matrix.gangs_in(s) {
            let i = g.0 as usize;
            if !self.jobs[i].live() {
                continue;
            }
            let Some(a) = self.matrix.allocation(g) else {
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
