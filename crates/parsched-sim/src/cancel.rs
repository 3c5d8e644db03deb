//! Stopping a run from outside: a cancel flag watched by every long loop.
//!
//! [`with_cancel`] installs an `Arc<AtomicBool>` for the calling thread while
//! a closure runs; every machine (every model of [`crate::models::MODELS`])
//! and every loop that may run long without events (the barrier machine's
//! periodic solver, its slot-switch accounting) reads it every
//! [`CHECK_EVERY`] events or steps — never per event, and only reads, so a
//! run that is not stopped gives exactly the results it gives without a
//! flag. A stopped run returns its machine's `Interrupted` error
//! (`BatchError::Interrupted`, `MachineError::Interrupted`,
//! `ClusterError::Interrupted`, `RegionMachineError::Interrupted`). The
//! event-driven machines watch it through
//! [`run_watched`](crate::engine::run_watched).
//!
//! The flag belongs to the thread: a runner that spawns threads (the pools
//! replications) passes it on with [`current`] and [`with_cancel`].
//!
//! Progress goes the same way: [`with_progress`] installs a counter to which
//! every [`Watch`] adds its steps at each look (every [`CHECK_EVERY`]), so a
//! caller on another thread can show how far a long run has come (the
//! bindings do, on stderr, for the command line).

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Events (or loop steps) between two looks at the flag.
pub const CHECK_EVERY: u32 = 4096;

thread_local! {
    static CANCEL: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
    static PROGRESS: RefCell<Option<Arc<AtomicU64>>> = const { RefCell::new(None) };
}

/// Runs `f` with `counter` counting the events (or steps) of this thread's
/// runs, in steps of [`CHECK_EVERY`]. Nested calls restore the outer one.
pub fn with_progress<T>(counter: &Arc<AtomicU64>, f: impl FnOnce() -> T) -> T {
    scoped(&PROGRESS, counter.clone(), f)
}

/// Runs `f` with `slot` holding `value`, and its former value restored on
/// return (also when `f` unwinds).
fn scoped<V: 'static, T>(
    slot: &'static std::thread::LocalKey<RefCell<Option<V>>>,
    value: V,
    f: impl FnOnce() -> T,
) -> T {
    struct Restore<V: 'static>(
        &'static std::thread::LocalKey<RefCell<Option<V>>>,
        Option<V>,
    );
    impl<V: 'static> Drop for Restore<V> {
        fn drop(&mut self) {
            let old = self.1.take();
            self.0.with(|c| *c.borrow_mut() = old);
        }
    }
    let _restore = Restore(slot, slot.with(|c| c.replace(Some(value))));
    f()
}

/// This thread's progress counter, if a [`with_progress`] is in force.
pub fn current_progress() -> Option<Arc<AtomicU64>> {
    PROGRESS.with(|c| c.borrow().clone())
}

/// Runs `f` under this thread's cancel flag and progress counter, taken
/// with [`current`] and [`current_progress`] on the spawning thread.
pub fn inherit<T>(
    flag: &Option<Arc<AtomicBool>>,
    progress: &Option<Arc<AtomicU64>>,
    f: impl FnOnce() -> T,
) -> T {
    let g = || match progress {
        Some(p) => with_progress(p, f),
        None => f(),
    };
    match flag {
        Some(c) => with_cancel(c, g),
        None => g(),
    }
}

/// Runs `f` so that setting `flag` stops any run of this thread within a few
/// thousand events with its `Interrupted` error. Nested calls restore the
/// outer flag on return.
pub fn with_cancel<T>(flag: &Arc<AtomicBool>, f: impl FnOnce() -> T) -> T {
    scoped(&CANCEL, flag.clone(), f)
}

/// This thread's flag, if a [`with_cancel`] is in force.
pub fn current() -> Option<Arc<AtomicBool>> {
    CANCEL.with(|c| c.borrow().clone())
}

/// The one cadence of every look at a flag: [`Cadence::due`] is true once
/// every [`CHECK_EVERY`] steps.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cadence {
    n: u32,
}

impl Cadence {
    /// No step counted yet.
    pub const fn new() -> Cadence {
        Cadence { n: 0 }
    }

    /// Counts one step; true on every [`CHECK_EVERY`]-th.
    #[inline]
    pub fn due(&mut self) -> bool {
        self.n = self.n.wrapping_add(1);
        self.n.is_multiple_of(CHECK_EVERY)
    }

    /// Counts `steps` steps at once; true if a multiple of
    /// [`CHECK_EVERY`] was reached among them.
    #[inline]
    pub fn due_after(&mut self, steps: u32) -> bool {
        let before = self.n / CHECK_EVERY;
        self.n = self.n.wrapping_add(steps);
        steps >= CHECK_EVERY || self.n / CHECK_EVERY != before
    }
}

/// An iterator that ends early once `stop` says yes, asked on the
/// [`Cadence`] (the Lublin generator's loops); [`Until::stopped`] tells
/// the early end from the real one.
pub struct Until<'a, I> {
    iter: I,
    stop: &'a dyn Fn() -> bool,
    cadence: Cadence,
    stopped: bool,
}

impl<'a, I: Iterator> Until<'a, I> {
    /// `iter`, watched by `stop`.
    pub fn new(iter: I, stop: &'a dyn Fn() -> bool) -> Until<'a, I> {
        Until {
            iter,
            stop,
            cadence: Cadence::new(),
            stopped: false,
        }
    }

    /// Whether `stop` ended the iteration.
    pub fn stopped(&self) -> bool {
        self.stopped
    }
}

impl<I: Iterator> Iterator for Until<'_, I> {
    type Item = I::Item;

    #[inline]
    fn next(&mut self) -> Option<I::Item> {
        if self.stopped || (self.cadence.due() && (self.stop)()) {
            self.stopped = true;
            return None;
        }
        self.iter.next()
    }
}

/// A cheap watcher for a loop: [`Watch::tick`] is true once the flag is set,
/// looked at on the [`Cadence`].
pub struct Watch {
    flag: Option<Arc<AtomicBool>>,
    progress: Option<Arc<AtomicU64>>,
    cadence: Cadence,
}

impl Watch {
    /// Watches this thread's flag (none: never stops).
    pub fn new() -> Watch {
        Watch {
            flag: current(),
            progress: current_progress(),
            cadence: Cadence::new(),
        }
    }

    /// Counts one step; true if the run should stop.
    #[inline]
    pub fn tick(&mut self) -> bool {
        if !self.cadence.due() {
            return false;
        }
        if let Some(p) = &self.progress {
            p.fetch_add(CHECK_EVERY as u64, Ordering::Relaxed);
        }
        self.stopped()
    }

    /// Counts `steps` steps of work that are not events (the pools
    /// machine's pool visits: not counted as progress); true if the run
    /// should stop.
    #[inline]
    pub fn advance(&mut self, steps: u32) -> bool {
        self.cadence.due_after(steps) && self.stopped()
    }

    /// Whether a flag or a progress counter is watched at all.
    pub fn is_armed(&self) -> bool {
        self.flag.is_some() || self.progress.is_some()
    }

    /// Whether the flag is set now.
    pub fn stopped(&self) -> bool {
        self.flag
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
    }
}

impl Default for Watch {
    fn default() -> Self {
        Watch::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_is_per_thread_and_restored() {
        assert!(current().is_none());
        let a = Arc::new(AtomicBool::new(false));
        let b = Arc::new(AtomicBool::new(true));
        with_cancel(&a, || {
            assert!(!Watch::new().stopped());
            with_cancel(&b, || assert!(Watch::new().stopped()));
            assert!(Arc::ptr_eq(&current().unwrap(), &a));
            std::thread::scope(|s| {
                s.spawn(|| assert!(current().is_none()));
            });
        });
        assert!(current().is_none());
    }

    #[test]
    fn progress_counts_the_steps_of_every_thread_it_is_passed_to() {
        let n = Arc::new(AtomicU64::new(0));
        with_progress(&n, || {
            let mut w = Watch::new();
            assert!(w.is_armed());
            (0..3 * CHECK_EVERY + 5).for_each(|_| assert!(!w.tick()));
            let (flag, prog) = (current(), current_progress());
            std::thread::scope(|s| {
                s.spawn(|| {
                    inherit(&flag, &prog, || {
                        let mut w = Watch::new();
                        (0..CHECK_EVERY).for_each(|_| assert!(!w.tick()));
                    })
                });
            });
        });
        assert_eq!(n.load(Ordering::Relaxed), 4 * CHECK_EVERY as u64);
        assert!(current_progress().is_none() && !Watch::new().is_armed());
    }

    #[test]
    fn a_watch_looks_every_check_every_ticks() {
        let f = Arc::new(AtomicBool::new(true));
        with_cancel(&f, || {
            let mut w = Watch::new();
            let first = (1..=2 * CHECK_EVERY).find(|_| w.tick());
            assert_eq!(first, Some(CHECK_EVERY));
        });
        let mut w = Watch::new();
        assert!((0..3 * CHECK_EVERY).all(|_| !w.tick()));
    }

    #[test]
    fn the_cadence_counts_single_and_bulk_steps() {
        let mut c = Cadence::new();
        assert_eq!((1..=3 * CHECK_EVERY).filter(|_| c.due()).count(), 3);
        let mut c = Cadence::new();
        assert!(!c.due_after(CHECK_EVERY - 1));
        assert!(c.due_after(1));
        assert!(!c.due_after(CHECK_EVERY - 1));
        assert!(c.due_after(5));
        assert!(Cadence::new().due_after(CHECK_EVERY));
        // across the counter's wrap
        let mut c = Cadence { n: u32::MAX - 1 };
        assert!(c.due_after(3));
        // a bulk watch stops within one cadence of the flag
        let f = Arc::new(AtomicBool::new(true));
        with_cancel(&f, || {
            let mut w = Watch::new();
            let calls = (1..=CHECK_EVERY).find(|_| w.advance(700)).unwrap();
            assert_eq!(calls, CHECK_EVERY.div_ceil(700));
        });
    }

    #[test]
    fn until_stops_within_one_cadence_of_its_flag() {
        let seen = std::cell::Cell::new(0u32);
        let n = 3 * CHECK_EVERY + 17;
        let stop = || seen.get() >= n;
        let mut it = Until::new(0..u32::MAX, &stop);
        for _ in it.by_ref() {
            seen.set(seen.get() + 1);
        }
        assert!(it.stopped());
        assert!(
            seen.get() >= n && seen.get() < n + CHECK_EVERY,
            "{}",
            seen.get()
        );
        assert_eq!(it.next(), None);
        // never stopped: every item, and not stopped
        let mut it = Until::new(0..10_000u32, &|| false);
        assert_eq!(it.by_ref().count(), 10_000);
        assert!(!it.stopped());
    }
}
