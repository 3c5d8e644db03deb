//! Flexible policy: the controller measures each job from /proc while it
//! holds its slot (an [`Observation`]), asks the core crate's
//! [`Classifier`] for its class and applies it: CS and F stay in the matrix,
//! DC leaves it and runs thawed at SCHED_IDLE on every CPU.

use super::Controller;
use crate::cgroup::set_affinity;
use crate::procfs;
use crate::spec::Policy;
use parsched_core::policy::classify::Observation;
use std::time::Instant;

/// A job's context switch counters at one moment (flexible policy).
#[derive(Debug, Clone, Copy)]
pub(super) struct CtxtSnapshot {
    pub(super) at: Instant,
    /// Voluntary context switches, summed over the job's threads.
    pub(super) voluntary: u64,
    /// Involuntary context switches, summed over the job's threads.
    pub(super) involuntary: u64,
    pub(super) threads: u32,
}

impl Controller {
    /// The job's context switch counters over all its threads, now.
    pub(super) fn job_ctxt(&self, i: usize) -> CtxtSnapshot {
        let mut c = CtxtSnapshot {
            at: Instant::now(),
            voluntary: 0,
            involuntary: 0,
            threads: 0,
        };
        for pid in self.freezer.pids(&self.jobs[i].group).unwrap_or_default() {
            for tid in procfs::tasks(pid) {
                if let Some((v, n)) = procfs::task_ctxt_switches(pid, tid) {
                    c.voluntary += v;
                    c.involuntary += n;
                    c.threads += 1;
                }
            }
        }
        c
    }

    pub(super) fn start_observing(&mut self, i: usize) {
        if self.spec.policy != Policy::Flexible || self.jobs[i].class.is_some() {
            return;
        }
        self.jobs[i].thawed_at = Some(self.job_ctxt(i));
    }

    /// Flexible: accounts the slot the job just held (call before freezing)
    /// and classifies it once enough was seen. Returns true if the job was
    /// released from gang scheduling (then it must not be frozen).
    pub(super) fn observe_and_classify(&mut self, i: usize) -> bool {
        if self.spec.policy != Policy::Flexible || !self.jobs[i].live() {
            return false;
        }
        let Some(before) = self.jobs[i].thawed_at.take() else {
            return false;
        };
        let now = self.job_ctxt(i);
        let dt = before.at.elapsed().as_secs_f64();
        // Counters of threads that exited meanwhile vanish: saturate.
        let period = Observation {
            wall_s: dt,
            thread_s: dt * now.threads.max(1) as f64,
            voluntary: now.voluntary.saturating_sub(before.voluntary),
            involuntary: now.involuntary.saturating_sub(before.involuntary),
            ..Default::default()
        };
        self.jobs[i].observed.add(&period);
        let Some(class) = self.classifier.classify(&self.jobs[i].observed) else {
            return false;
        };
        self.jobs[i].class = Some(class);
        if class.is_coscheduled() {
            return false;
        }
        // Does not care: release it to fill idle time.
        let gang = self.jobs[i].gang;
        let _ = self.sched.finish(gang);
        let all = self.topo.cpus.clone();
        let p = libc::sched_param { sched_priority: 0 };
        for pid in self.freezer.pids(&self.jobs[i].group).unwrap_or_default() {
            for tid in procfs::tasks(pid) {
                let _ = set_affinity(tid, &all);
                // SAFETY: valid sched_param; threads may be gone meanwhile.
                unsafe { libc::sched_setscheduler(tid, libc::SCHED_IDLE, &p) };
            }
        }
        self.jobs[i].pinned.clear();
        self.jobs[i].cpus = all;
        true
    }
}
