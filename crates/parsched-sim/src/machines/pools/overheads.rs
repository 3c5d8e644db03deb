//! Section 3.3's overheads of the pool machine (Table 2's defaults): the
//! in-pool and pool-spanning inflation of a thread's demand, run-queue
//! contention and cache loading per context switch.

use serde::{Deserialize, Serialize};

/// How the in-pool (w) and pool-spanning (s) inflation factors combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Combine {
    /// Demand × (1 + w + s): each overhead charges its own portion (the
    /// paper's "not double-charged" reading of section 3.3).
    #[default]
    Add,
    /// Demand × (1 + w)(1 + s).
    Multiply,
}

/// Which dispatches pay the context-switch costs (run-queue contention and
/// cache loading).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SwitchCost {
    /// Every time a processor starts a thread taken from the run queue or
    /// handed to it while idle (the thread's cache context must be loaded and
    /// the shared queue accessed). A thread continuing after its slice expires
    /// with an empty queue pays nothing.
    #[default]
    EveryDispatch,
    /// Only when a slice expiry preempts a thread in favour of another.
    PreemptionOnly,
}

/// Section 3.3's overheads. Defaults are Table 2's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Overheads {
    /// In-pool overhead factor W (inflation W·(p − p0) for p > p0).
    pub w: f64,
    /// Pool-spanning overhead factor S (inflation S·(k − 1)·p).
    pub s: f64,
    /// Pool size threshold p0 below which in-pool and contention overheads vanish.
    pub p0: u32,
    /// Run-queue contention factor r (time r·(p − p0) per context switch).
    pub r: f64,
    /// Cache loading cost c per context switch to a thread of another job.
    pub c: f64,
    /// Fraction t of c paid when switching between threads of the same job.
    pub t: f64,
    pub combine: Combine,
    pub switch_cost: SwitchCost,
    /// Also inflate the master's INIT and FINAL phases (the paper inflates
    /// the parallel threads only).
    pub inflate_master: bool,
}

impl Default for Overheads {
    fn default() -> Self {
        Overheads {
            w: 0.005,
            s: 0.01,
            p0: 10,
            r: 0.003,
            c: 0.005,
            t: 0.25,
            combine: Combine::Add,
            switch_cost: SwitchCost::EveryDispatch,
            inflate_master: false,
        }
    }
}

impl Overheads {
    /// No overheads at all (the hypothetical UMA machine of Figure 1).
    pub fn none() -> Overheads {
        Overheads {
            w: 0.0,
            s: 0.0,
            r: 0.0,
            c: 0.0,
            ..Overheads::default()
        }
    }

    /// In-pool inflation w for a pool of `p` processors.
    pub fn in_pool(&self, p: u32) -> f64 {
        if p > self.p0 {
            self.w * (p - self.p0) as f64
        } else {
            0.0
        }
    }

    /// Spanning inflation s for `k` pools of mean size `p`.
    pub fn spanning(&self, k: u32, p: f64) -> f64 {
        self.s * (k.saturating_sub(1)) as f64 * p
    }

    /// The demand multiplier for a thread in a pool of size `p` of a job
    /// spanning `k` pools of mean size `mean_p`.
    pub fn inflation(&self, p: u32, k: u32, mean_p: f64) -> f64 {
        let (w, s) = (self.in_pool(p), self.spanning(k, mean_p));
        match self.combine {
            Combine::Add => 1.0 + w + s,
            Combine::Multiply => (1.0 + w) * (1.0 + s),
        }
    }

    /// Run-queue contention cost, in units, of one switch in a pool of `p`.
    pub fn contention(&self, p: u32) -> f64 {
        if p > self.p0 {
            self.r * (p - self.p0) as f64
        } else {
            0.0
        }
    }
}
