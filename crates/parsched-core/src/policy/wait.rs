//! Waiting strategies: what a thread does while it waits for a
//! synchronization (a barrier to open; later, a message to arrive) — seed
//! 001 §2–3 (Feitelson & Rudolph 1992): busy waiting, blocking, two-phase
//! (spin up to a limit, then block; Ousterhout 1982, Karlin et al. 1991) and
//! Makbilan's yield-blocking (§3.3). Seed 003's spin-block is two-phase
//! waiting with the application's spin time; spin-yield will be a further
//! variant here.
//!
//! A strategy is a decision, not a mechanism: the machine asks
//! [`WaitStrategy::on_wait`] when a thread starts waiting and
//! [`WaitStrategy::on_spin_expired`] when its spin budget runs out, and
//! applies the [`WaitAction`] (charging spin time, blocking with its cost,
//! yielding to its local scheduler).

use serde::{Deserialize, Serialize};

/// How a thread waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum WaitStrategy {
    /// Spin on the processor until released.
    #[default]
    Busy,
    /// Give up the processor at once (costing α·τcs) until released.
    Block,
    /// Spin for the spin limit, then block.
    #[serde(rename = "twophase")]
    TwoPhase,
    /// Makbilan's blocking (seed 001 §3.3): the waiting thread yields the
    /// processor and goes to the tail of the run queue, which serves as the
    /// blocked queue; each yield costs a switch τcs (also when no other
    /// thread is ready and the yielder runs again), and it yields again each
    /// time it runs before the barrier opens. The mean number of yields per
    /// wait is the α the seed measured.
    Yield,
}

/// What the machine does with a waiting thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitAction {
    /// Spin (hold the processor, using it) without a limit.
    Spin,
    /// Spin for at most this many ticks, then ask again.
    SpinFor(u64),
    /// Block: leave the processor until woken.
    Block,
    /// Yield the processor to the local scheduler (and wait again when next
    /// dispatched).
    Yield,
}

impl WaitStrategy {
    /// The first action of a thread that starts waiting; `spin_limit` is the
    /// two-phase spin budget in ticks.
    #[inline]
    pub fn on_wait(self, spin_limit: u64) -> WaitAction {
        match self {
            WaitStrategy::Busy => WaitAction::Spin,
            WaitStrategy::Block => WaitAction::Block,
            WaitStrategy::TwoPhase if spin_limit == 0 => WaitAction::Block,
            WaitStrategy::TwoPhase => WaitAction::SpinFor(spin_limit),
            WaitStrategy::Yield => WaitAction::Yield,
        }
    }

    /// A thread's spin budget ran out while it still waits.
    #[inline]
    pub fn on_spin_expired(self) -> WaitAction {
        match self {
            WaitStrategy::Busy => WaitAction::Spin,
            WaitStrategy::TwoPhase | WaitStrategy::Block => WaitAction::Block,
            WaitStrategy::Yield => WaitAction::Yield,
        }
    }

    /// Whether a waiting thread of this strategy ever leaves its processor
    /// before its quantum ends (machines' periodic fast paths need not).
    pub fn may_leave_processor(self) -> bool {
        self != WaitStrategy::Busy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions() {
        assert_eq!(WaitStrategy::Busy.on_wait(5), WaitAction::Spin);
        assert_eq!(WaitStrategy::Block.on_wait(5), WaitAction::Block);
        assert_eq!(WaitStrategy::TwoPhase.on_wait(5), WaitAction::SpinFor(5));
        assert_eq!(WaitStrategy::TwoPhase.on_wait(0), WaitAction::Block);
        assert_eq!(WaitStrategy::Yield.on_wait(5), WaitAction::Yield);
        assert_eq!(WaitStrategy::TwoPhase.on_spin_expired(), WaitAction::Block);
        assert_eq!(WaitStrategy::Busy.on_spin_expired(), WaitAction::Spin);
        assert!(!WaitStrategy::Busy.may_leave_processor());
        assert!(WaitStrategy::Yield.may_leave_processor());
    }
}
