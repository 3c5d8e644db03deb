//! The cost of a pools run, estimated from its configuration alone (an
//! upper bound; `validate` refuses a run above `max_events`).
//!
//! Two parts grow with the machine:
//!
//! * **Events.** Per job its arrival, a few for the master's phases and per
//!   thread one per time slice T of its *inflated* work: section 3.3's
//!   overheads multiply a parallel thread's demand by 1 + W·(p − p0) +
//!   S·(k − 1)·p, which for one pool of 10^6 processors is ×5000 (the
//!   defect of issue #27: the estimate used the work before inflation).
//! * **The placement's scans of the pools.** Every arrival and every fork
//!   hands the policy a view of all n pools, which it sorts (n log n), and a
//!   fork whose threads outnumber the idle processors is water-filled over
//!   its k candidate pools (at most d·k steps). With n = 10^6 pools of one
//!   processor a job costs ~60 ms of placement against ~20 µs of events.
//!   These are counted in *event-equivalents* (10^-7 s, one event's time at
//!   10^7 events/s): n·(1 + log2 n)/32 per scan, d·k/8 per fork — upper
//!   bounds of the times measured (0.14, 0.19, 0.30 ·n per scan at n = 10^4,
//!   10^5, 10^6 on the 2-CPU CI machine).
//!
//! For the generated workload the desired parallelism d is drawn from the
//! bounded geometric distribution: the estimate is N·E[g(d)] + 3·√N·σ[g(d)]
//! per replication (g the per-job bound, E and σ summed over the
//! distribution, bucketed above d = 4096 with g's bucket maximum, g being
//! nondecreasing in d). For an arrivals list it is the exact sum.

use super::{PoolsConfig, SpanningMode};
use crate::workloads::forkjoin::{BoundedGeometric, WorkloadKind};
use parsched_core::policy::pools::ZhouBrecht;

/// What a pools run is estimated to cost (all replications).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoolsEstimate {
    /// Engine events (an upper bound).
    pub events: f64,
    /// Pools handed to the placement policy (n per arrival and per fork).
    pub pool_visits: f64,
    /// The placement's work in event-equivalents (sorting the pools,
    /// water-filling).
    pub placement: f64,
}

impl PoolsEstimate {
    /// Events plus the placement's event-equivalents: what `max_events`
    /// bounds.
    pub fn cost(&self) -> f64 {
        self.events + self.placement
    }
}

/// The per-job bounds for one desired parallelism.
struct JobBound<'a> {
    cfg: &'a PoolsConfig,
    policy: ZhouBrecht,
    pools: u32,
}

impl JobBound<'_> {
    /// Pools a job of parallelism `d` may span (the built-in policy's
    /// candidates; a policy of one's own is estimated as the paper's).
    fn span(&self, d: u32) -> u32 {
        self.candidates(d).min(d.max(1)).min(self.pools)
    }

    /// The candidate pools the placement looks at for parallelism `d`.
    fn candidates(&self, d: u32) -> u32 {
        match self.cfg.spanning {
            SpanningMode::None => 1,
            _ => self
                .policy
                .candidate_count(d, self.cfg.pool_size, self.pools)
                .max(1),
        }
    }

    /// Events of one job of parallelism `d` and PARA work `para`.
    fn events(&self, d: u32, para: f64) -> f64 {
        let c = self.cfg;
        let ov = &c.overheads;
        let p = c.pool_size;
        let infl_par = ov.inflation(p, self.span(d), p as f64);
        let infl_master = if ov.inflate_master {
            ov.inflation(p, 1, p as f64)
        } else {
            1.0
        };
        let spread = (d as f64 * c.spread.max(0.0)).min(para);
        let work = (c.init + c.final_) * infl_master + (para + spread) * infl_par;
        8.0 + 2.0 * d as f64 + work / c.slice
    }

    /// The placement's event-equivalents for one job of parallelism `d`.
    fn placement(&self, d: u32) -> f64 {
        let cand = self.candidates(d);
        let n = self.pools as f64;
        2.0 * n * (1.0 + n.log2()) / 32.0 + d as f64 * cand as f64 / 8.0
    }
}

/// Sums `f(d)` and `f(d)²` over the bounded geometric distribution, from
/// above (bucketed above d = 4096, each bucket at its largest d, `f` being
/// nondecreasing) and `f(d)` from below; returns (E_up, E_low, E2_up).
fn moments(dist: &BoundedGeometric, f: impl Fn(u32) -> f64) -> (f64, f64, f64) {
    let (mut up, mut low, mut sq) = (0.0, 0.0, 0.0);
    let mut a = 1u32;
    let mut prev = 0.0;
    while a <= dist.max {
        let b = if a <= 4096 {
            a
        } else {
            ((a as f64 * 1.01) as u32).min(dist.max)
        };
        let cdf = dist.cdf(b);
        let mass = (cdf - prev).max(0.0);
        prev = cdf;
        let (hi, lo) = (f(b), f(a));
        up += mass * hi;
        low += mass * lo;
        sq += mass * hi * hi;
        if 1.0 - cdf < 1e-16 {
            break;
        }
        a = b + 1;
    }
    (up, low, sq)
}

impl PoolsConfig {
    /// An upper estimate of the run's cost (module [`estimate`](self)).
    pub fn estimate(&self) -> PoolsEstimate {
        let pools = (self.procs / self.pool_size.max(1)).max(1);
        let b = JobBound {
            cfg: self,
            policy: ZhouBrecht::new(self.placement()),
            pools,
        };
        let reps = self.reps as f64;
        let (jobs, events, placement) = match &self.arrivals {
            Some(list) => {
                let ev: f64 = list
                    .iter()
                    .map(|a| b.events(a.d, a.para_work.unwrap_or(self.para_unit * a.d as f64)))
                    .sum();
                let pl: f64 = list.iter().map(|a| b.placement(a.d)).sum();
                (list.len() as f64, ev, pl)
            }
            None => {
                let n = self.jobs as f64;
                // (At most 2^31 - 1: the distribution's powers take an i32.)
                let max = self.procs.min(i32::MAX as u32);
                let Ok(dist) = BoundedGeometric::with_mean(self.mean_parallelism, max) else {
                    // D is refused later; every job of parallelism ⌈D⌉ until then.
                    let d = (self.mean_parallelism.ceil().max(1.0) as u32).min(max);
                    let para = self.para_unit * d as f64;
                    return PoolsEstimate {
                        events: reps * (64.0 + n * b.events(d, para)),
                        pool_visits: reps * 2.0 * n * pools as f64,
                        placement: reps * n * b.placement(d),
                    };
                };
                let g = |d: u32| match self.workload {
                    WorkloadKind::Correlated => b.events(d, self.para_unit * d as f64),
                    // PARA work from an independent draw of the same law:
                    // bounded by its mean plus the deviation term below.
                    WorkloadKind::Uncorrelated => {
                        b.events(d, self.para_unit * self.mean_parallelism)
                    }
                };
                let (up, low, sq) = moments(&dist, g);
                let mut sd = (sq - low * low).max(0.0).sqrt();
                if self.workload == WorkloadKind::Uncorrelated {
                    // The work's own spread: para_unit·d′ with d′ up to P.
                    let (_, wlow, wsq) = moments(&dist, |d| self.para_unit * d as f64);
                    let infl = self.overheads.inflation(
                        self.pool_size,
                        pools.min(self.procs),
                        self.pool_size as f64,
                    );
                    sd += (wsq - wlow * wlow).max(0.0).sqrt() * infl / self.slice;
                }
                let ev = n * up + 3.0 * n.sqrt() * sd;
                let (pl, _, _) = moments(&dist, |d| b.placement(d));
                (n, ev, n * pl)
            }
        };
        PoolsEstimate {
            events: reps * (64.0 + events),
            pool_visits: reps * 2.0 * jobs * pools as f64,
            placement: reps * placement,
        }
    }
}
