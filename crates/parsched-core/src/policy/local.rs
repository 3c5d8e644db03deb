//! Local schedulers: the policy of one run queue (one processor, or one pool
//! of processors that share a queue), deciding which ready thread runs next
//! and for how long. The machine owns the mechanism (dispatch, switch costs,
//! quantum timers) and asks the scheduler at each decision point.
//!
//! [`RoundRobin`] is the per-processor round robin of seed 001 §3.1
//! (Feitelson & Rudolph 1992: "each processor schedules its threads in round
//! robin, with quantum τq"); seed 000's per-pool round robin is the same
//! policy on a queue shared by a pool (the pool machine keeps one
//! `RoundRobin` per pool; the barrier machine one per processor). Later
//! implementations — seed 003's
//! Solaris time-sharing dispatch table (priority levels, per-level quanta,
//! sleep-return and starvation promotion), seed 002's Linux-like schedulers —
//! implement the same trait; machines do not change.
//!
//! Enqueue reasons say why a thread becomes ready, since priority schedulers
//! treat them differently (a woken thread gets its sleep-return level, an
//! expired one drops a level). [`WaitStrategy`](crate::policy::wait) decides
//! what a thread does while it waits; the local scheduler only sees the
//! resulting enqueues (yielded, woken) and boosts.

use crate::ids::ThreadId;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Why a thread is put on a run queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnqueueReason {
    /// A thread that has not run yet.
    New,
    /// Preempted at the end of its quantum.
    QuantumExpired,
    /// Released from blocking (a barrier opened, a message arrived).
    Woken,
    /// Gave up the processor voluntarily (yield-blocking, spin-yield).
    Yielded,
    /// Raised by a boost (an arriving message, a periodic boost).
    Boosted,
    /// Preempted before its quantum ran out (a higher-priority thread woke
    /// or was boosted): back to the head of its level, keeping the rest of
    /// its quantum (Solaris `ts_preempt`'s `setfrontdq`).
    Preempted,
}

impl EnqueueReason {
    /// Every reason, in declaration order.
    pub const ALL: [EnqueueReason; 6] = [
        EnqueueReason::New,
        EnqueueReason::QuantumExpired,
        EnqueueReason::Woken,
        EnqueueReason::Yielded,
        EnqueueReason::Boosted,
        EnqueueReason::Preempted,
    ];
}

/// The policy of one run queue.
pub trait LocalScheduler {
    /// `thread` becomes ready for `reason`.
    fn enqueue(&mut self, thread: ThreadId, reason: EnqueueReason);

    /// The ready thread to run next, removed from the queue.
    fn pick_next(&mut self) -> Option<ThreadId>;

    /// The ready thread [`LocalScheduler::pick_next`] would take now.
    fn peek_next(&self) -> Option<ThreadId> {
        self.queued().first().copied()
    }

    /// The quantum `thread` gets when dispatched, in ticks.
    fn quantum(&self, thread: ThreadId) -> u64;

    /// Ready threads waiting.
    fn len(&self) -> usize;

    /// The waiting threads, in the order they would be picked now (for
    /// audits and reports; not on a fast path).
    fn queued(&self) -> Vec<ThreadId>;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `running` (its quantum expired) should give the processor to
    /// a waiting thread. Round robin: whenever anyone waits.
    fn should_preempt(&self, running: ThreadId) -> bool {
        let _ = running;
        !self.is_empty()
    }

    /// `running`'s quantum expired and it keeps the processor (no
    /// preemption): it starts a new quantum. Priority schedulers apply the
    /// expiry's level change here; round robin has nothing to do.
    fn continue_running(&mut self, running: ThreadId) {
        let _ = running;
    }

    /// Whether a thread just made ready (`woken`) preempts `running` at once.
    /// Round robin: never (the woken thread waits its turn).
    fn preempts(&self, woken: ThreadId, running: ThreadId) -> bool {
        let _ = (woken, running);
        false
    }

    /// Once per second of simulated time: ageing (starvation promotion).
    /// Round robin: nothing.
    fn on_second(&mut self) {}

    /// Once per second, for a thread that is running (not queued): the
    /// same ageing, where the scheduler ages running threads too (Solaris'
    /// `ts_update` walks every time-sharing thread). Round robin: nothing.
    fn on_second_running(&mut self, running: ThreadId) {
        let _ = running;
    }

    /// Raises `thread`'s priority (e.g. a message arrived for it). A queued
    /// thread moves ahead; returns whether the scheduler changed anything.
    fn boost(&mut self, thread: ThreadId) -> bool;

    /// Lowers `thread`'s priority (e.g. spin-yield lowers the spinner).
    /// Returns whether the scheduler changed anything.
    fn lower(&mut self, thread: ThreadId) -> bool;

    /// The machine's clock, before it enqueues, picks or charges (ns).
    /// Schedulers that measure time (seed 002's Linux O(1) sleep average,
    /// the fair scheduler) read it; the others ignore it.
    fn clock(&mut self, now_ns: u64) {
        let _ = now_ns;
    }

    /// `thread` used the processor for `ran_ns` (charged whenever the
    /// machine accounts a run segment; the segments of one dispatch add up
    /// to its run time). Nothing for schedulers that do not measure time.
    fn charge(&mut self, thread: ThreadId, ran_ns: u64) {
        let _ = (thread, ran_ns);
    }

    /// Takes a queued `thread` off the queue (flexible coscheduling parks
    /// the processes whose slot ended); false if it was not queued.
    fn remove(&mut self, thread: ThreadId) -> bool;

    /// `thread` blocked (it sleeps until a `Woken` enqueue).
    fn blocked(&mut self, thread: ThreadId) {
        let _ = thread;
    }

    /// The queue as a plain round robin, where it is one: machines' exact
    /// fast paths that rely on rigid round-robin order use it.
    fn as_round_robin(&self) -> Option<&RoundRobin> {
        None
    }
}

/// Where a woken thread goes in a round-robin queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Wakeup {
    /// The tail (rigid round robin, the assumption of seed 001's eq. (13)).
    #[default]
    Tail,
    /// The head, without preempting the running thread.
    Priority,
}

/// Round robin with a fixed quantum. New, expired and yielding threads go to
/// the tail; woken ones to the tail or head ([`Wakeup`]); boosted ones to the
/// head. Priorities do not exist, so `lower` moves a queued thread to the
/// tail.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RoundRobin {
    queue: VecDeque<ThreadId>,
    quantum: u64,
    wakeup: Wakeup,
}

impl RoundRobin {
    /// A queue serving each thread for `quantum` ticks.
    pub fn new(quantum: u64, wakeup: Wakeup) -> RoundRobin {
        RoundRobin {
            queue: VecDeque::new(),
            quantum,
            wakeup,
        }
    }

    /// With room for `capacity` threads.
    pub fn with_capacity(quantum: u64, wakeup: Wakeup, capacity: usize) -> RoundRobin {
        RoundRobin {
            queue: VecDeque::with_capacity(capacity),
            quantum,
            wakeup,
        }
    }

    /// The waiting threads, head first.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = ThreadId> + '_ {
        self.queue.iter().copied()
    }

    fn position(&self, thread: ThreadId) -> Option<usize> {
        self.queue.iter().position(|&t| t == thread)
    }
}

impl LocalScheduler for RoundRobin {
    #[inline]
    fn enqueue(&mut self, thread: ThreadId, reason: EnqueueReason) {
        match reason {
            EnqueueReason::Woken if self.wakeup == Wakeup::Priority => {
                self.queue.push_front(thread)
            }
            EnqueueReason::Boosted | EnqueueReason::Preempted => self.queue.push_front(thread),
            _ => self.queue.push_back(thread),
        }
    }

    #[inline]
    fn pick_next(&mut self) -> Option<ThreadId> {
        self.queue.pop_front()
    }

    fn remove(&mut self, thread: ThreadId) -> bool {
        match self.position(thread) {
            Some(k) => {
                self.queue.remove(k);
                true
            }
            None => false,
        }
    }

    #[inline]
    fn peek_next(&self) -> Option<ThreadId> {
        self.queue.front().copied()
    }

    #[inline]
    fn quantum(&self, _thread: ThreadId) -> u64 {
        self.quantum
    }

    #[inline]
    fn len(&self) -> usize {
        self.queue.len()
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    fn queued(&self) -> Vec<ThreadId> {
        self.iter().collect()
    }

    fn boost(&mut self, thread: ThreadId) -> bool {
        match self.position(thread) {
            Some(0) => false,
            Some(i) => {
                self.queue.remove(i);
                self.queue.push_front(thread);
                true
            }
            None => false,
        }
    }

    fn lower(&mut self, thread: ThreadId) -> bool {
        match self.position(thread) {
            Some(i) if i + 1 < self.queue.len() => {
                self.queue.remove(i);
                self.queue.push_back(thread);
                true
            }
            _ => false,
        }
    }

    fn as_round_robin(&self) -> Option<&RoundRobin> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn t(i: u32) -> ThreadId {
        ThreadId(i)
    }

    #[test]
    fn round_robin_order_and_reasons() {
        let mut q = RoundRobin::new(10, Wakeup::Tail);
        q.enqueue(t(1), EnqueueReason::New);
        q.enqueue(t(2), EnqueueReason::New);
        q.enqueue(t(3), EnqueueReason::Woken);
        q.enqueue(t(4), EnqueueReason::Boosted);
        assert_eq!(q.iter().collect::<Vec<_>>(), vec![t(4), t(1), t(2), t(3)]);
        assert_eq!(q.quantum(t(1)), 10);
        assert!(q.should_preempt(t(9)));
        assert_eq!(q.pick_next(), Some(t(4)));
        let mut p = RoundRobin::new(10, Wakeup::Priority);
        p.enqueue(t(1), EnqueueReason::QuantumExpired);
        p.enqueue(t(2), EnqueueReason::Woken);
        p.enqueue(t(3), EnqueueReason::Yielded);
        assert_eq!(p.iter().collect::<Vec<_>>(), vec![t(2), t(1), t(3)]);
        assert!(p.as_round_robin().is_some());
    }

    #[test]
    fn boost_and_lower_move_queued_threads() {
        let mut q = RoundRobin::new(1, Wakeup::Tail);
        for i in 0..3 {
            q.enqueue(t(i), EnqueueReason::New);
        }
        assert!(q.boost(t(2)));
        assert!(!q.boost(t(2)), "already at the head");
        assert!(!q.boost(t(7)), "not queued");
        assert_eq!(q.iter().collect::<Vec<_>>(), vec![t(2), t(0), t(1)]);
        assert!(q.lower(t(2)));
        assert!(!q.lower(t(2)), "already at the tail");
        assert_eq!(q.iter().collect::<Vec<_>>(), vec![t(0), t(1), t(2)]);
        let empty = RoundRobin::new(1, Wakeup::Tail);
        assert!(!empty.should_preempt(t(0)));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Enqueue(u32, u8),
        Pick,
        Boost(u32),
        Lower(u32),
    }

    fn reason(k: u8) -> EnqueueReason {
        EnqueueReason::ALL[k as usize % EnqueueReason::ALL.len()]
    }

    proptest! {
        /// Whatever happens, the queue holds exactly the threads enqueued
        /// and not yet picked, each once; tail enqueues are served FIFO.
        #[test]
        fn round_robin_conserves_threads(
            priority in any::<bool>(),
            ops in proptest::collection::vec(
                prop_oneof![
                    (0u32..16, any::<u8>()).prop_map(|(a, b)| Op::Enqueue(a, b)),
                    Just(Op::Pick),
                    (0u32..16).prop_map(Op::Boost),
                    (0u32..16).prop_map(Op::Lower),
                ],
                0..100,
            )
        ) {
            let wakeup = if priority { Wakeup::Priority } else { Wakeup::Tail };
            let mut q = RoundRobin::new(5, wakeup);
            let mut model: Vec<ThreadId> = Vec::new();
            for op in ops {
                match op {
                    Op::Enqueue(i, r) => {
                        if model.contains(&t(i)) {
                            continue; // a thread is queued at most once
                        }
                        let r = reason(r);
                        q.enqueue(t(i), r);
                        let front = r == EnqueueReason::Boosted
                            || r == EnqueueReason::Preempted
                            || (r == EnqueueReason::Woken && priority);
                        if front { model.insert(0, t(i)) } else { model.push(t(i)) }
                    }
                    Op::Pick => {
                        let want = if model.is_empty() { None } else { Some(model.remove(0)) };
                        prop_assert_eq!(q.pick_next(), want);
                    }
                    Op::Boost(i) => {
                        if let Some(k) = model.iter().position(|&x| x == t(i)) {
                            let x = model.remove(k);
                            model.insert(0, x);
                        }
                        q.boost(t(i));
                    }
                    Op::Lower(i) => {
                        if let Some(k) = model.iter().position(|&x| x == t(i)) {
                            let x = model.remove(k);
                            model.push(x);
                        }
                        q.lower(t(i));
                    }
                }
                prop_assert_eq!(q.queued(), model.clone());
                prop_assert_eq!(q.len(), model.len());
            }
        }
    }
}
