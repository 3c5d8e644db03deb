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

/// A cheap watcher for a loop: [`Watch::tick`] is true once the flag is set,
/// looked at every [`CHECK_EVERY`] ticks.
pub struct Watch {
    flag: Option<Arc<AtomicBool>>,
    progress: Option<Arc<AtomicU64>>,
    n: u32,
}

impl Watch {
    /// Watches this thread's flag (none: never stops).
    pub fn new() -> Watch {
        Watch {
            flag: current(),
            progress: current_progress(),
            n: 0,
        }
    }

    /// Counts one step; true if the run should stop.
    #[inline]
    pub fn tick(&mut self) -> bool {
        self.n = self.n.wrapping_add(1);
        if !self.n.is_multiple_of(CHECK_EVERY) {
            return false;
        }
        if let Some(p) = &self.progress {
            p.fetch_add(CHECK_EVERY as u64, Ordering::Relaxed);
        }
        self.flag
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
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
}
