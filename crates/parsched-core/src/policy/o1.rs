//! Seed 002's "Default" scheduler: a model of the Linux 2.6 O(1) scheduler
//! with its sleep-average interactivity bonus.
//!
//! Seed 002 (Frachtenberg, "Process Scheduling for the Parallel Desktop",
//! `seeds/002_f89b85c3eb86e2ff.txt` §4.2, Table 1) measures "Default
//! (unmodified Linux)" on 2004-era Linux, i.e. the 2.6 O(1) scheduler (the
//! kernel version is not stated: NS). What makes it starve the balanced job
//! of Table 1 is not fairness but its interactivity heuristics, so the model
//! keeps them (`kernel/sched.c` of 2.6.8–2.6.22; names in capitals are the
//! kernel's):
//!
//! * **Priorities.** 40 levels for normal tasks (100–139; index 0–39 here,
//!   lower is better). Every thread has nice 0: static priority 120 (index
//!   20). Its dynamic priority is `static − bonus + MAX_BONUS/2`, clamped,
//!   where `bonus = sleep_avg × MAX_BONUS / MAX_SLEEP_AVG` (0–10).
//! * **Sleep average** (`recalc_task_prio`). Waking after sleeping `s`
//!   (capped at MAX_SLEEP_AVG = 1 s): a sleep longer than INTERACTIVE_SLEEP
//!   (799 ms) sets `sleep_avg` to at least MAX_SLEEP_AVG − DEF_TIMESLICE;
//!   otherwise it grows by `s × (MAX_BONUS − bonus)` (the lower the bonus,
//!   the faster it rises), capped at MAX_SLEEP_AVG. Running `r` lowers it by
//!   `r / bonus` (`schedule()`: `run_time /= CURRENT_BONUS(prev) ?: 1`). A
//!   thread that sleeps about as long as it runs therefore reaches the top
//!   bonus within a few hundred milliseconds, and a thread that never sleeps
//!   sinks to 0.
//! * **Interactive** (`TASK_INTERACTIVE`): dynamic priority ≤ static − DELTA
//!   (DELTA = INTERACTIVE_DELTA = 2 at nice 0), i.e. bonus ≥ 7.
//! * **Two arrays.** Runnable threads sit in the *active* or the *expired*
//!   priority array; the best level of the active array runs, FIFO within a
//!   level. A thread whose timeslice (DEF_TIMESLICE = 100 ms at nice 0) runs
//!   out gets a new one and goes to the tail of the active array if it is
//!   interactive and the expired array is not starving, else to the expired
//!   array. When the active array empties the arrays swap. Expired threads
//!   starve (`EXPIRED_STARVING`) once the first of them has waited
//!   STARVATION_LIMIT (1 s) × runnable threads: then no thread is put back
//!   in the active array until the swap.
//! * **Wake-up preemption** (`TASK_PREEMPTS_CURR`): a woken thread preempts
//!   a running one of worse (numerically higher) priority. A woken thread
//!   goes to the active array's tail at its new priority; a preempted one
//!   stays at the head of its level (it never left the array in Linux) with
//!   the rest of its timeslice (the machine keeps it). `sched_yield` puts a
//!   thread in the expired array (2.6 semantics).
//!
//! Simplifications, documented: one run queue per node (Linux has one per
//! CPU and balances them; on a 2-CPU node every runnable thread is then
//! eligible for either CPU, as after perfect balancing); the runnable count
//! in the starvation test is the queued threads plus one; interactive
//! threads are not requeued every TIMESLICE_GRANULARITY within their
//! timeslice; uninterruptible sleep (`activated == -1`) does not occur.
//! With [`O1Config::sleep_bonus`] off every thread keeps bonus 5 and is never
//! interactive: a plain O(1) round robin with 100 ms timeslices.
//!
//! Pure: the machine gives it the clock ([`LocalScheduler::clock`]), the run
//! time of each segment ([`LocalScheduler::charge`]) and blocks
//! ([`LocalScheduler::blocked`]).

use super::local::{EnqueueReason, LocalScheduler};
use crate::error::ConfigError;
use crate::ids::ThreadId;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

const LEVELS: usize = 40;
/// Nice 0's static priority (120) as an index.
const STATIC: i64 = 20;

/// The O(1) scheduler's constants (defaults: Linux 2.6 at HZ = 1000).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct O1Config {
    /// DEF_TIMESLICE at nice 0 (ms).
    pub timeslice_ms: f64,
    /// MAX_SLEEP_AVG (ms).
    pub max_sleep_avg_ms: f64,
    /// MAX_BONUS: bonus levels (the dynamic priority moves ±MAX_BONUS/2).
    pub max_bonus: u32,
    /// INTERACTIVE_DELTA at nice 0.
    pub interactive_delta: u32,
    /// STARVATION_LIMIT (ms) per runnable thread.
    pub starvation_limit_ms: f64,
    /// The sleep-average interactivity bonus (off: every thread at its
    /// static priority, never interactive).
    pub sleep_bonus: bool,
}

impl Default for O1Config {
    fn default() -> Self {
        O1Config {
            timeslice_ms: 100.0,
            max_sleep_avg_ms: 1000.0,
            max_bonus: 10,
            interactive_delta: 2,
            starvation_limit_ms: 1000.0,
            sleep_bonus: true,
        }
    }
}

impl O1Config {
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (k, v) in [
            ("timeslice_ms", self.timeslice_ms),
            ("max_sleep_avg_ms", self.max_sleep_avg_ms),
            ("starvation_limit_ms", self.starvation_limit_ms),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(ConfigError::new(k, format!("{v}"), "a finite number > 0"));
            }
        }
        if !(2..=38).contains(&self.max_bonus) || !self.max_bonus.is_multiple_of(2) {
            return Err(ConfigError::new(
                "max_bonus",
                self.max_bonus.to_string(),
                "an even integer in 2..=38",
            ));
        }
        if self.interactive_delta > self.max_bonus / 2 {
            return Err(ConfigError::new(
                "interactive_delta",
                self.interactive_delta.to_string(),
                "an integer in 0..=max_bonus/2",
            ));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Th {
    sleep_avg: u64,
    /// Dynamic priority index (0 best).
    prio: u8,
    /// The array epoch it belongs to: ≤ the current epoch = active, the
    /// next epoch = expired.
    array: u64,
    blocked_at: Option<u64>,
}

/// The O(1) scheduler of one run queue (see the module documentation).
#[derive(Debug, Clone)]
pub struct O1 {
    cfg: O1Config,
    timeslice: u64,
    max_sleep: u64,
    interactive_sleep: u64,
    starvation: u64,
    threads: Vec<Th>,
    /// `arrays[epoch & 1]` is the active array.
    arrays: [Vec<VecDeque<u32>>; 2],
    counts: [usize; 2],
    epoch: u64,
    expired_since: Option<u64>,
    now: u64,
}

fn ms(x: f64) -> u64 {
    (x * 1e6).round() as u64
}

impl O1 {
    pub fn new(cfg: O1Config) -> Result<O1, ConfigError> {
        cfg.validate()?;
        let max_sleep = ms(cfg.max_sleep_avg_ms);
        let mb = cfg.max_bonus as u64;
        Ok(O1 {
            cfg,
            timeslice: ms(cfg.timeslice_ms),
            max_sleep,
            // MAX_SLEEP_AVG × (MAX_BONUS/2 + DELTA + 1) / MAX_BONUS − 1 jiffy
            interactive_sleep: (max_sleep * (mb / 2 + cfg.interactive_delta as u64 + 1) / mb)
                .saturating_sub(1_000_000),
            starvation: ms(cfg.starvation_limit_ms),
            threads: Vec::new(),
            arrays: [vec![VecDeque::new(); LEVELS], vec![VecDeque::new(); LEVELS]],
            counts: [0, 0],
            epoch: 0,
            expired_since: None,
            now: 0,
        })
    }

    pub fn config(&self) -> &O1Config {
        &self.cfg
    }

    fn th(&mut self, t: ThreadId) -> &mut Th {
        let i = t.0 as usize;
        if i >= self.threads.len() {
            self.threads.resize(
                i + 1,
                Th {
                    prio: STATIC as u8,
                    ..Th::default()
                },
            );
        }
        &mut self.threads[i]
    }

    /// The thread's bonus (0..=MAX_BONUS), CURRENT_BONUS.
    pub fn bonus(&self, t: ThreadId) -> u32 {
        if !self.cfg.sleep_bonus {
            return self.cfg.max_bonus / 2;
        }
        let s = self.threads.get(t.0 as usize).map_or(0, |h| h.sleep_avg);
        (s * self.cfg.max_bonus as u64 / self.max_sleep) as u32
    }

    /// The thread's sleep average (ns).
    pub fn sleep_avg(&self, t: ThreadId) -> u64 {
        self.threads.get(t.0 as usize).map_or(0, |h| h.sleep_avg)
    }

    /// The dynamic priority as an index (0 best, 39 worst): `effective_prio`.
    fn effective(&self, t: ThreadId) -> u8 {
        let b = self.bonus(t) as i64;
        (STATIC - b + self.cfg.max_bonus as i64 / 2).clamp(0, LEVELS as i64 - 1) as u8
    }

    /// The priority it was last given (Linux's 100–139 minus 100).
    pub fn prio(&self, t: ThreadId) -> u8 {
        self.threads
            .get(t.0 as usize)
            .map_or(STATIC as u8, |h| h.prio)
    }

    /// TASK_INTERACTIVE.
    pub fn interactive(&self, t: ThreadId) -> bool {
        self.cfg.sleep_bonus
            && (self.effective(t) as i64) <= STATIC - self.cfg.interactive_delta as i64
    }

    fn starving(&self) -> bool {
        match self.expired_since {
            Some(since) => {
                let runnable = self.counts[0] + self.counts[1] + 1;
                self.now.saturating_sub(since) >= self.starvation * runnable as u64
            }
            None => false,
        }
    }

    fn active(&self) -> usize {
        (self.epoch & 1) as usize
    }

    fn push(&mut self, t: ThreadId, expired: bool, front: bool) {
        let a = if expired {
            1 - self.active()
        } else {
            self.active()
        };
        let epoch = self.epoch + expired as u64;
        let th = self.th(t);
        th.array = epoch;
        let prio = th.prio as usize;
        if expired && self.expired_since.is_none() {
            self.expired_since = Some(self.now);
        }
        let q = &mut self.arrays[a][prio];
        if front {
            q.push_front(t.0);
        } else {
            q.push_back(t.0);
        }
        self.counts[a] += 1;
    }

    fn best(&self, a: usize) -> Option<(usize, u32)> {
        if self.counts[a] == 0 {
            return None;
        }
        self.arrays[a]
            .iter()
            .enumerate()
            .find_map(|(l, q)| q.front().map(|&t| (l, t)))
    }

    fn swap(&mut self) {
        self.epoch += 1;
        self.expired_since = None;
    }

    /// Whether a thread whose timeslice ran out goes to the expired array.
    fn expires(&self, t: ThreadId) -> bool {
        !self.interactive(t) || self.starving()
    }
}

impl LocalScheduler for O1 {
    fn enqueue(&mut self, thread: ThreadId, reason: EnqueueReason) {
        let now = self.now;
        match reason {
            EnqueueReason::Woken => {
                let (ma, is, mb) = (self.max_sleep, self.interactive_sleep, self.cfg.max_bonus);
                let bonus = self.bonus(thread);
                let ceiling = self.max_sleep.saturating_sub(self.timeslice);
                let bonus_on = self.cfg.sleep_bonus;
                let th = self.th(thread);
                if let (Some(at), true) = (th.blocked_at.take(), bonus_on) {
                    let slept = now.saturating_sub(at).min(ma);
                    if slept > is {
                        th.sleep_avg = th.sleep_avg.max(ceiling);
                    } else if slept > 0 {
                        let k = (mb.saturating_sub(bonus)).max(1) as u64;
                        th.sleep_avg = (th.sleep_avg + slept * k).min(ma);
                    }
                }
                let p = self.effective(thread);
                self.th(thread).prio = p;
                self.push(thread, false, false);
            }
            EnqueueReason::New => {
                let p = self.effective(thread);
                self.th(thread).prio = p;
                self.push(thread, false, false);
            }
            EnqueueReason::QuantumExpired => {
                let p = self.effective(thread);
                self.th(thread).prio = p;
                let expired = self.expires(thread);
                self.push(thread, expired, false);
            }
            EnqueueReason::Yielded => self.push(thread, true, false),
            EnqueueReason::Preempted | EnqueueReason::Boosted => {
                let expired = self.th(thread).array > self.epoch;
                self.push(thread, expired, true);
            }
        }
    }

    fn pick_next(&mut self) -> Option<ThreadId> {
        if self.counts[self.active()] == 0 {
            if self.counts[1 - self.active()] == 0 {
                return None;
            }
            self.swap();
        }
        let a = self.active();
        let (l, _) = self.best(a)?;
        let t = self.arrays[a][l].pop_front()?;
        self.counts[a] -= 1;
        Some(ThreadId(t))
    }

    fn remove(&mut self, thread: ThreadId) -> bool {
        for a in 0..2 {
            for q in self.arrays[a].iter_mut() {
                if let Some(k) = q.iter().position(|&t| t == thread.0) {
                    q.remove(k);
                    self.counts[a] -= 1;
                    return true;
                }
            }
        }
        false
    }

    fn peek_next(&self) -> Option<ThreadId> {
        let a = self.active();
        self.best(a)
            .or_else(|| self.best(1 - a))
            .map(|(_, t)| ThreadId(t))
    }

    fn quantum(&self, _thread: ThreadId) -> u64 {
        self.timeslice
    }

    fn len(&self) -> usize {
        self.counts[0] + self.counts[1]
    }

    fn queued(&self) -> Vec<ThreadId> {
        let a = self.active();
        self.arrays[a]
            .iter()
            .chain(self.arrays[1 - a].iter())
            .flat_map(|q| q.iter().map(|&t| ThreadId(t)))
            .collect()
    }

    fn should_preempt(&self, running: ThreadId) -> bool {
        let p = self.effective(running) as usize;
        let a = self.active();
        if self.expires(running) {
            // To the expired array: anyone active runs first; if none,
            // after the swap it queues behind expired ones as good or better.
            self.counts[a] > 0 || self.best(1 - a).is_some_and(|(l, _)| l <= p)
        } else {
            self.best(a).is_some_and(|(l, _)| l <= p)
        }
    }

    fn continue_running(&mut self, running: ThreadId) {
        let p = self.effective(running);
        let expired = self.expires(running);
        self.th(running).prio = p;
        if expired {
            // Linux put it in the expired array and, the active one being
            // empty, swapped them: it is in the (new) active array.
            if self.counts[self.active()] == 0 {
                self.swap();
                self.th(running).array = self.epoch;
            } else {
                self.th(running).array = self.epoch + 1;
                if self.expired_since.is_none() {
                    self.expired_since = Some(self.now);
                }
            }
        } else {
            self.th(running).array = self.epoch;
        }
    }

    fn preempts(&self, woken: ThreadId, running: ThreadId) -> bool {
        self.prio(woken) < self.prio(running)
    }

    fn boost(&mut self, _thread: ThreadId) -> bool {
        false
    }

    fn lower(&mut self, _thread: ThreadId) -> bool {
        false
    }

    fn clock(&mut self, now_ns: u64) {
        self.now = now_ns;
    }

    fn charge(&mut self, thread: ThreadId, ran_ns: u64) {
        if !self.cfg.sleep_bonus {
            return;
        }
        let b = self.bonus(thread).max(1) as u64;
        let th = self.th(thread);
        th.sleep_avg = th.sleep_avg.saturating_sub(ran_ns / b);
    }

    fn blocked(&mut self, thread: ThreadId) {
        let now = self.now;
        self.th(thread).blocked_at = Some(now);
    }
}

impl O1 {
    /// A priority as a level where higher is better (for machines that
    /// choose the lowest-priority runner to preempt).
    pub fn level(&self, t: ThreadId) -> u8 {
        (LEVELS as u8 - 1) - self.prio(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn sched() -> O1 {
        O1::new(O1Config::default()).unwrap()
    }

    #[test]
    fn a_thread_that_never_sleeps_sinks_and_one_that_sleeps_rises() {
        let mut s = sched();
        let (hog, sleeper) = (ThreadId(0), ThreadId(1));
        let mut now = 0;
        for _ in 0..500 {
            // the sleeper runs 1 ms and sleeps 1 ms; the hog runs 2 ms
            now += MS;
            s.clock(now);
            s.charge(sleeper, MS);
            s.blocked(sleeper);
            s.charge(hog, 2 * MS);
            now += MS;
            s.clock(now);
            s.enqueue(sleeper, EnqueueReason::Woken);
            assert_eq!(s.pick_next(), Some(sleeper));
        }
        assert_eq!(s.bonus(hog), 0);
        assert_eq!(s.bonus(sleeper), 10, "sleep_avg {}", s.sleep_avg(sleeper));
        assert!(s.interactive(sleeper));
        assert!(!s.interactive(hog));
    }

    #[test]
    fn a_woken_interactive_thread_preempts_a_hog() {
        let mut s = sched();
        let (hog, io) = (ThreadId(0), ThreadId(1));
        s.enqueue(hog, EnqueueReason::New);
        assert_eq!(s.pick_next(), Some(hog));
        s.charge(hog, 500 * MS);
        s.continue_running(hog);
        s.enqueue(io, EnqueueReason::New);
        assert_eq!(s.pick_next(), Some(io));
        s.clock(0);
        s.blocked(io);
        s.clock(300 * MS);
        s.enqueue(io, EnqueueReason::Woken);
        assert!(s.prio(io) < s.prio(hog));
        assert!(s.preempts(io, hog));
        assert!(!s.preempts(hog, io));
    }

    #[test]
    fn expired_threads_wait_for_the_active_array_to_empty() {
        let mut s = sched();
        let (hog, io) = (ThreadId(0), ThreadId(1));
        // io is interactive: it slept long enough for the top bonus
        s.clock(0);
        s.blocked(io);
        s.clock(900 * MS);
        s.enqueue(io, EnqueueReason::Woken);
        s.enqueue(hog, EnqueueReason::New);
        assert!(s.interactive(io));
        assert_eq!(s.pick_next(), Some(io));
        assert_eq!(s.pick_next(), Some(hog));
        s.charge(hog, 100 * MS);
        s.enqueue(hog, EnqueueReason::QuantumExpired); // not interactive: expired
        s.enqueue(io, EnqueueReason::QuantumExpired); // interactive: active
        assert_eq!(s.pick_next(), Some(io));
        // io runs on past its timeslice: nobody active waits, so it keeps going
        assert!(!s.should_preempt(io));
        s.continue_running(io);
        assert_eq!(s.pick_next(), Some(hog), "the swap brings the hog back");
        assert!(s.is_empty());
    }

    #[test]
    fn starvation_limit_sends_interactive_threads_to_the_expired_array() {
        let mut s = sched();
        let (hog, io) = (ThreadId(0), ThreadId(1));
        s.clock(0);
        s.blocked(io);
        s.clock(900 * MS);
        s.enqueue(io, EnqueueReason::Woken);
        assert_eq!(s.pick_next(), Some(io));
        s.enqueue(hog, EnqueueReason::QuantumExpired); // expired at 900 ms
        assert!(!s.should_preempt(io), "interactive: stays active");
        s.clock(900 * MS + 2_000 * MS + 1);
        assert!(s.starving());
        assert!(
            s.expires(io),
            "starving: even an interactive thread expires"
        );
        // ... but with nobody active, the swap gives it the processor again
        // ahead of the worse hog (Linux does the same).
        assert!(!s.should_preempt(io));
    }

    #[test]
    fn without_the_bonus_it_is_round_robin() {
        let mut s = O1::new(O1Config {
            sleep_bonus: false,
            ..O1Config::default()
        })
        .unwrap();
        for t in 0..3 {
            s.enqueue(ThreadId(t), EnqueueReason::New);
        }
        let mut order = Vec::new();
        for _ in 0..6 {
            let t = s.pick_next().unwrap();
            order.push(t.0);
            s.charge(t, 100 * MS);
            s.enqueue(t, EnqueueReason::QuantumExpired);
        }
        assert_eq!(order, vec![0, 1, 2, 0, 1, 2]);
    }

    #[test]
    fn config_is_validated() {
        let bad = O1Config {
            max_bonus: 7,
            ..O1Config::default()
        };
        assert_eq!(O1::new(bad).unwrap_err().field, "max_bonus");
        let bad = O1Config {
            timeslice_ms: 0.0,
            ..O1Config::default()
        };
        assert_eq!(O1::new(bad).unwrap_err().field, "timeslice_ms");
    }
}
