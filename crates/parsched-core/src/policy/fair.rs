//! A plain fair scheduler with wake-up preemption (in the manner of Linux's
//! CFS, 2.6.23 on): the option seed 002's issue asks for beside the O(1)
//! model of "Default".
//!
//! Every thread has a virtual run time (ns of processor use, all threads of
//! equal weight); the queued thread with the least runs next. The quantum is
//! `latency_ms` divided among the runnable threads, at least
//! `min_granularity_ms`. A thread that wakes gets its virtual time raised to
//! at least the queue's minimum less half the latency (sleeper credit: a
//! sleeper is favoured, but cannot bank more than that), and preempts the
//! running thread if its virtual time is lower by more than
//! `wakeup_granularity_ms`. At a quantum's end the running thread gives way
//! if a queued thread has a lower virtual time.
//!
//! Simplifications, documented: one queue per node (CFS has one per CPU);
//! no group scheduling, nice levels or load balancing. Like [`super::o1`] it
//! is told the clock, each run segment and each block by the machine.

use super::local::{EnqueueReason, LocalScheduler};
use crate::error::ConfigError;
use crate::ids::ThreadId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// The fair scheduler's constants (defaults: CFS's for a small machine).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FairConfig {
    /// Target latency: every runnable thread runs once within it (ms).
    pub latency_ms: f64,
    /// The shortest quantum (ms).
    pub min_granularity_ms: f64,
    /// A woken thread preempts when it is this far behind (ms of virtual time).
    pub wakeup_granularity_ms: f64,
}

impl Default for FairConfig {
    fn default() -> Self {
        FairConfig {
            latency_ms: 6.0,
            min_granularity_ms: 0.75,
            wakeup_granularity_ms: 1.0,
        }
    }
}

impl FairConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (k, v) in [
            ("latency_ms", self.latency_ms),
            ("min_granularity_ms", self.min_granularity_ms),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(ConfigError::new(k, format!("{v}"), "a finite number > 0"));
            }
        }
        if !(self.wakeup_granularity_ms.is_finite() && self.wakeup_granularity_ms >= 0.0) {
            return Err(ConfigError::new(
                "wakeup_granularity_ms",
                format!("{}", self.wakeup_granularity_ms),
                "a finite number >= 0",
            ));
        }
        Ok(())
    }
}

fn ns(ms: f64) -> u64 {
    (ms * 1e6).round() as u64
}

/// The fair scheduler of one run queue (see the module documentation).
#[derive(Debug, Clone)]
pub struct Fair {
    cfg: FairConfig,
    latency: u64,
    min_gran: u64,
    wake_gran: u64,
    vruntime: Vec<u64>,
    queue: BTreeSet<(u64, u32)>,
    /// The least virtual time seen (monotonic), CFS's `min_vruntime`.
    min_vruntime: u64,
}

impl Fair {
    pub fn new(cfg: FairConfig) -> Result<Fair, ConfigError> {
        cfg.validate()?;
        Ok(Fair {
            cfg,
            latency: ns(cfg.latency_ms),
            min_gran: ns(cfg.min_granularity_ms),
            wake_gran: ns(cfg.wakeup_granularity_ms),
            vruntime: Vec::new(),
            queue: BTreeSet::new(),
            min_vruntime: 0,
        })
    }

    pub fn config(&self) -> &FairConfig {
        &self.cfg
    }

    /// The thread's virtual run time (ns).
    pub fn vruntime(&self, t: ThreadId) -> u64 {
        self.vruntime.get(t.0 as usize).copied().unwrap_or(0)
    }

    fn slot(&mut self, t: ThreadId) -> &mut u64 {
        let i = t.0 as usize;
        if i >= self.vruntime.len() {
            self.vruntime.resize(i + 1, 0);
        }
        &mut self.vruntime[i]
    }

    fn update_min(&mut self) {
        if let Some(&(v, _)) = self.queue.first() {
            self.min_vruntime = self.min_vruntime.max(v);
        }
    }

    /// A level where higher is better (least virtual time = highest), for
    /// machines that pick the lowest-priority runner to preempt.
    pub fn level(&self, t: ThreadId) -> u8 {
        let behind = self.vruntime(t).saturating_sub(self.min_vruntime) / self.min_gran.max(1);
        255u64.saturating_sub(behind.min(255)) as u8
    }
}

impl LocalScheduler for Fair {
    fn enqueue(&mut self, thread: ThreadId, reason: EnqueueReason) {
        let floor = self.min_vruntime;
        let credit = self.latency / 2;
        let v = self.slot(thread);
        match reason {
            EnqueueReason::New => *v = (*v).max(floor),
            EnqueueReason::Woken => *v = (*v).max(floor.saturating_sub(credit)),
            _ => {}
        }
        let v = *v;
        self.queue.insert((v, thread.0));
    }

    fn pick_next(&mut self) -> Option<ThreadId> {
        let (_, t) = self.queue.pop_first()?;
        self.update_min();
        Some(ThreadId(t))
    }

    fn peek_next(&self) -> Option<ThreadId> {
        self.queue.first().map(|&(_, t)| ThreadId(t))
    }

    fn remove(&mut self, thread: ThreadId) -> bool {
        let v = self.vruntime(thread);
        self.queue.remove(&(v, thread.0))
    }

    fn quantum(&self, _thread: ThreadId) -> u64 {
        let n = self.queue.len() as u64 + 1;
        (self.latency / n).max(self.min_gran)
    }

    fn len(&self) -> usize {
        self.queue.len()
    }

    fn queued(&self) -> Vec<ThreadId> {
        self.queue.iter().map(|&(_, t)| ThreadId(t)).collect()
    }

    fn should_preempt(&self, running: ThreadId) -> bool {
        self.queue
            .first()
            .is_some_and(|&(v, _)| v < self.vruntime(running))
    }

    fn preempts(&self, woken: ThreadId, running: ThreadId) -> bool {
        self.vruntime(woken) + self.wake_gran < self.vruntime(running)
    }

    fn boost(&mut self, _thread: ThreadId) -> bool {
        false
    }

    fn lower(&mut self, _thread: ThreadId) -> bool {
        false
    }

    fn charge(&mut self, thread: ThreadId, ran_ns: u64) {
        // A queued thread is never charged (only running ones run), so the
        // queue's keys stay valid.
        *self.slot(thread) += ran_ns;
        let v = self.vruntime(thread);
        if self.queue.is_empty() {
            self.min_vruntime = self.min_vruntime.max(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn the_least_virtual_time_runs_next() {
        let mut s = Fair::new(FairConfig::default()).unwrap();
        for t in 0..3 {
            s.enqueue(ThreadId(t), EnqueueReason::New);
        }
        let mut order = Vec::new();
        for _ in 0..6 {
            let t = s.pick_next().unwrap();
            order.push(t.0);
            s.charge(t, 2 * MS);
            s.enqueue(t, EnqueueReason::QuantumExpired);
        }
        assert_eq!(order, vec![0, 1, 2, 0, 1, 2]);
        let t = s.pick_next().unwrap();
        assert_eq!(s.quantum(t), 2 * MS, "6 ms among 3 (2 queued, 1 running)");
    }

    #[test]
    fn a_sleeper_preempts_but_banks_at_most_half_the_latency() {
        let mut s = Fair::new(FairConfig::default()).unwrap();
        let (hog, io) = (ThreadId(0), ThreadId(1));
        s.enqueue(hog, EnqueueReason::New);
        s.enqueue(io, EnqueueReason::New);
        assert_eq!(s.pick_next(), Some(hog));
        assert_eq!(s.pick_next(), Some(io));
        s.charge(io, MS);
        s.blocked(io);
        // the hog runs alone for a second
        s.charge(hog, 1000 * MS);
        s.enqueue(io, EnqueueReason::Woken);
        assert!(s.preempts(io, hog));
        assert_eq!(s.vruntime(io), 1000 * MS - 3 * MS);
        assert!(!s.preempts(hog, io));
        assert!(s.remove(io) && !s.remove(io) && s.is_empty());
    }

    #[test]
    fn config_is_validated() {
        let bad = FairConfig {
            latency_ms: 0.0,
            ..FairConfig::default()
        };
        assert_eq!(Fair::new(bad).unwrap_err().field, "latency_ms");
    }
}
