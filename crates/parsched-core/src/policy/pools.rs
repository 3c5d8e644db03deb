//! Processor pool-based placement — Zhou & Brecht, "Processor Pool-Based
//! Scheduling for Large-Scale NUMA Multiprocessors", SIGMETRICS 1991 (seed 000),
//! sections 3.1 and 3.2.
//!
//! * A job's master thread goes to the pool with the least load (load = running
//!   plus ready threads); that pool is the job's *home* pool.
//! * At the start of the PARA phase the policy decides the *candidate* pools —
//!   the home pool first, then the others by increasing load — limited to
//!   `f(d)` pools by the spanning rule (none, limited with `F`, unlimited), the
//!   actual parallelism `a` (unrestricted `a = d`, or restricted
//!   `a = min(d, max(p_idle, G·d, 1))`), and how many threads go to each pool:
//!   idle processors are filled in candidate order, and the threads that find no
//!   idle processor are spread to balance the candidate pools' resulting loads.
//!
//! This is the code both the simulator and the Linux runtime call.

use crate::error::{ConfigError, PolicyError};
use crate::ids::{JobId, PoolId};
use serde::{Deserialize, Serialize};

/// What a pool-placement policy observes about one pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolState {
    /// Processors in the pool.
    pub size: u32,
    /// Processors with no thread running.
    pub idle: u32,
    /// Active threads: running plus ready (a sleeping master is not counted).
    pub load: u32,
}

/// A job reaching its fork (start of the PARA phase).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForkRequest {
    pub job: JobId,
    pub home: PoolId,
    /// Desired parallelism d.
    pub desired: u32,
}

/// How many of the job's threads go to which pool, in placement order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Placement {
    pub threads: Vec<(PoolId, u32)>,
}

impl Placement {
    /// The actual parallelism a.
    pub fn total(&self) -> u32 {
        self.threads.iter().map(|&(_, n)| n).sum()
    }

    /// The number of pools that received at least one thread (k).
    pub fn pools_used(&self) -> u32 {
        self.threads.iter().filter(|&&(_, n)| n > 0).count() as u32
    }

    /// Checks a placement returned by any policy against the machine.
    pub fn check(&self, pools: &[PoolState], desired: u32) -> Result<(), PolicyError> {
        let a = self.total();
        if a == 0 || a > desired {
            return Err(PolicyError(format!(
                "placement creates {a} threads; allowed 1..={desired} (the desired parallelism)"
            )));
        }
        for &(p, _) in &self.threads {
            if p.idx() >= pools.len() {
                return Err(PolicyError(format!(
                    "placement names pool {}; allowed 0..{}",
                    p.0,
                    pools.len()
                )));
            }
        }
        Ok(())
    }
}

/// A pool-placement policy.
pub trait PoolPolicy {
    /// Chooses the home pool of a newly arrived job.
    fn home_pool(&mut self, job: JobId, pools: &[PoolState]) -> Result<PoolId, PolicyError>;
    /// Decides the actual parallelism and the pools of a job's parallel threads.
    fn place(&mut self, req: &ForkRequest, pools: &[PoolState]) -> Result<Placement, PolicyError>;
}

/// How many pools a job's parallel threads may use (section 3.2).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Spanning {
    /// All threads in the home pool.
    None,
    /// `f(d) = clamp(round(F·d/p), 1, P/p)` candidate pools.
    Limited { f: f64 },
    /// Any pool.
    Unlimited,
}

/// How the actual parallelism a is chosen (section 3.2).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Parallelism {
    /// a = d.
    Unrestricted,
    /// a = min(d, max(p_idle, G·d, 1)).
    Restricted { g: f64 },
}

/// How a fractional quantity (F·d/p, G·d) becomes an integer. The paper writes
/// `round` for F·d/p and leaves G·d open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Rounding {
    /// Nearest integer, halves away from zero (2.5 → 3).
    #[default]
    Nearest,
    Floor,
    Ceil,
}

impl Rounding {
    pub fn apply(self, x: f64) -> u32 {
        let r = match self {
            Rounding::Nearest => x.round(),
            Rounding::Floor => x.floor(),
            Rounding::Ceil => x.ceil(),
        };
        r.max(0.0) as u32
    }
}

/// Which of several equally loaded pools comes first (the paper does not say).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TieBreak {
    /// The pool with the lowest index.
    #[default]
    LowestIndex,
    /// The pool with the most idle processors, then the lowest index.
    MostIdle,
}

/// Options of the Zhou–Brecht placement family. Defaults are Table 2's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PoolPlacementConfig {
    pub spanning: Spanning,
    pub parallelism: Parallelism,
    /// Rounding of F·d/p.
    pub f_rounding: Rounding,
    /// Rounding of G·d.
    pub g_rounding: Rounding,
    pub tie_break: TieBreak,
}

impl Default for PoolPlacementConfig {
    fn default() -> Self {
        PoolPlacementConfig {
            spanning: Spanning::Limited { f: 0.8 },
            parallelism: Parallelism::Restricted { g: 0.5 },
            f_rounding: Rounding::Nearest,
            g_rounding: Rounding::Nearest,
            tie_break: TieBreak::LowestIndex,
        }
    }
}

impl PoolPlacementConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Spanning::Limited { f } = self.spanning {
            if !(f >= 0.0 && f.is_finite()) {
                return Err(ConfigError::new("F", format!("{f} is negative"), "F >= 0"));
            }
        }
        if let Parallelism::Restricted { g } = self.parallelism {
            if !(0.0..=1.0).contains(&g) {
                return Err(ConfigError::new(
                    "G",
                    format!("{g} is outside [0, 1]"),
                    "0 <= G <= 1",
                ));
            }
        }
        Ok(())
    }
}

/// The pool-based scheduling family of seed 000 section 3.
#[derive(Debug, Clone, Default)]
pub struct ZhouBrecht {
    pub config: PoolPlacementConfig,
}

impl ZhouBrecht {
    pub fn new(config: PoolPlacementConfig) -> ZhouBrecht {
        ZhouBrecht { config }
    }

    /// Pools ordered by (load, tie-break), optionally with `first` forced to the front.
    fn order(&self, pools: &[PoolState], first: Option<PoolId>) -> Vec<PoolId> {
        let mut ids: Vec<PoolId> = (0..pools.len() as u32)
            .map(PoolId)
            .filter(|&p| Some(p) != first)
            .collect();
        match self.config.tie_break {
            TieBreak::LowestIndex => ids.sort_by_key(|p| (pools[p.idx()].load, p.0)),
            TieBreak::MostIdle => {
                ids.sort_by_key(|p| (pools[p.idx()].load, u32::MAX - pools[p.idx()].idle, p.0))
            }
        }
        if let Some(f) = first {
            ids.insert(0, f);
        }
        ids
    }

    /// The number of candidate pools f(d) for a job of desired parallelism `d`
    /// whose home pool has `p` processors, on a machine of `n` pools.
    pub fn candidate_count(&self, d: u32, p: u32, n: u32) -> u32 {
        match self.config.spanning {
            Spanning::None => 1,
            Spanning::Unlimited => n,
            Spanning::Limited { f } => {
                let x = self.config.f_rounding.apply(f * d as f64 / p as f64);
                x.clamp(1, n)
            }
        }
    }
}

impl PoolPolicy for ZhouBrecht {
    fn home_pool(&mut self, _job: JobId, pools: &[PoolState]) -> Result<PoolId, PolicyError> {
        self.order(pools, None)
            .first()
            .copied()
            .ok_or_else(|| PolicyError("machine has no pools".into()))
    }

    fn place(&mut self, req: &ForkRequest, pools: &[PoolState]) -> Result<Placement, PolicyError> {
        let d = req.desired.max(1);
        let n = pools.len() as u32;
        let k = self.candidate_count(d, pools[req.home.idx()].size, n);
        let candidates: Vec<PoolId> = self
            .order(pools, Some(req.home))
            .into_iter()
            .take(k as usize)
            .collect();
        let idle: Vec<u32> = candidates.iter().map(|p| pools[p.idx()].idle).collect();
        let p_idle: u32 = idle.iter().sum();
        let a = match self.config.parallelism {
            Parallelism::Unrestricted => d,
            Parallelism::Restricted { g } => {
                let gd = self.config.g_rounding.apply(g * d as f64);
                d.min(p_idle.max(gd).max(1))
            }
        };
        Ok(Placement {
            threads: distribute(a, &candidates, &idle, |p| pools[p.idx()].load),
        })
    }
}

/// Assigns `a` threads to `candidates` (in order): idle processors first, in
/// candidate order; the threads left over go one at a time to the candidate
/// whose resulting load is lowest (earliest candidate on ties). Pools that
/// receive no thread are omitted.
pub fn distribute(
    a: u32,
    candidates: &[PoolId],
    idle: &[u32],
    load: impl Fn(PoolId) -> u32,
) -> Vec<(PoolId, u32)> {
    let mut given = vec![0u32; candidates.len()];
    let mut left = a;
    for (i, &free) in idle.iter().enumerate() {
        let take = free.min(left);
        given[i] = take;
        left -= take;
    }
    if left > 0 {
        // Water-filling on resulting load = current load + threads given here.
        let mut res: Vec<u64> = candidates
            .iter()
            .zip(&given)
            .map(|(&p, &g)| load(p) as u64 + g as u64)
            .collect();
        while left > 0 {
            let (i, _) = res
                .iter()
                .enumerate()
                .min_by_key(|&(i, &r)| (r, i))
                .expect("at least one candidate");
            // Give this pool enough to reach the next-lowest level in one step.
            let next = res
                .iter()
                .enumerate()
                .filter(|&(j, &r)| j != i && r > res[i])
                .map(|(_, &r)| r)
                .min();
            let ties = res.iter().filter(|&&r| r == res[i]).count() as u64;
            let step = match next {
                Some(nx) if ties == 1 => ((nx - res[i]) as u32).min(left),
                _ => 1,
            };
            res[i] += step as u64;
            given[i] += step;
            left -= step;
        }
    }
    candidates
        .iter()
        .zip(given)
        .filter(|&(_, g)| g > 0)
        .map(|(&p, g)| (p, g))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(size: u32, idle: u32, load: u32) -> PoolState {
        PoolState { size, idle, load }
    }

    fn req(home: u32, d: u32) -> ForkRequest {
        ForkRequest {
            job: JobId(0),
            home: PoolId(home),
            desired: d,
        }
    }

    /// Section 3.2's worked example: d = 20, p = 10, F = 0.8 (two candidate
    /// pools), G = 0.5 (10 threads), 2 and 6 idle processors → 3 and 7 threads,
    /// leaving both pools with 11 threads.
    #[test]
    fn worked_example_gives_three_and_seven() {
        let mut zb = ZhouBrecht::default();
        let pools = [
            st(10, 2, 8),
            st(10, 6, 4),
            st(10, 0, 12),
            st(10, 0, 15),
            st(10, 0, 10),
            st(10, 0, 10),
        ];
        let pl = zb.place(&req(0, 20), &pools).unwrap();
        assert_eq!(pl.threads, vec![(PoolId(0), 3), (PoolId(1), 7)]);
        assert_eq!(pl.total(), 10);
        assert_eq!(pl.pools_used(), 2);
    }

    #[test]
    fn candidate_count_follows_f_of_d() {
        let zb = ZhouBrecht::default();
        assert_eq!(zb.candidate_count(20, 10, 6), 2); // round(1.6)
        assert_eq!(zb.candidate_count(5, 10, 6), 1); // x < 1
        assert_eq!(zb.candidate_count(60, 5, 12), 10); // round(9.6)
        assert_eq!(zb.candidate_count(60, 2, 30), 24);
        let none = ZhouBrecht::new(PoolPlacementConfig {
            spanning: Spanning::None,
            ..Default::default()
        });
        assert_eq!(none.candidate_count(60, 5, 12), 1);
        let all = ZhouBrecht::new(PoolPlacementConfig {
            spanning: Spanning::Unlimited,
            ..Default::default()
        });
        assert_eq!(all.candidate_count(1, 5, 12), 12);
    }

    #[test]
    fn home_is_least_loaded_with_lowest_index_on_ties() {
        let mut zb = ZhouBrecht::default();
        let pools = [st(10, 0, 12), st(10, 3, 7), st(10, 3, 7)];
        assert_eq!(zb.home_pool(JobId(1), &pools).unwrap(), PoolId(1));
        let mut mi = ZhouBrecht::new(PoolPlacementConfig {
            tie_break: TieBreak::MostIdle,
            ..Default::default()
        });
        let pools = [st(10, 0, 7), st(10, 3, 7)];
        assert_eq!(mi.home_pool(JobId(1), &pools).unwrap(), PoolId(1));
    }

    #[test]
    fn home_first_even_when_others_are_lighter() {
        let mut zb = ZhouBrecht::new(PoolPlacementConfig {
            spanning: Spanning::Unlimited,
            parallelism: Parallelism::Unrestricted,
            ..Default::default()
        });
        let pools = [st(10, 0, 15), st(10, 10, 0), st(10, 5, 5)];
        let pl = zb.place(&req(0, 12), &pools).unwrap();
        // home has no idle processor; 10 idle in pool 1 then 2 in pool 2.
        assert_eq!(pl.threads, vec![(PoolId(1), 10), (PoolId(2), 2)]);
    }

    #[test]
    fn restricted_parallelism_bounds() {
        let mut zb = ZhouBrecht::default();
        // no idle: a = max(G·d, 1) = round(0.5·3) = 2
        let pools = [st(10, 0, 30)];
        assert_eq!(zb.place(&req(0, 3), &pools).unwrap().total(), 2);
        // lots idle: a = d
        let pools = [st(10, 10, 0)];
        assert_eq!(zb.place(&req(0, 7), &pools).unwrap().total(), 7);
        // G = 0: a = max(p_idle, 1)
        let mut g0 = ZhouBrecht::new(PoolPlacementConfig {
            parallelism: Parallelism::Restricted { g: 0.0 },
            ..Default::default()
        });
        assert_eq!(g0.place(&req(0, 7), &[st(10, 0, 30)]).unwrap().total(), 1);
        assert_eq!(g0.place(&req(0, 7), &[st(10, 4, 6)]).unwrap().total(), 4);
    }

    #[test]
    fn distribute_balances_leftovers() {
        let c = [PoolId(0), PoolId(1), PoolId(2)];
        let loads = [5u32, 9, 9];
        let out = distribute(10, &c, &[0, 0, 0], |p| loads[p.idx()]);
        // 5 → 9 takes 4, then 6 more split 2/2/2
        assert_eq!(out, vec![(PoolId(0), 6), (PoolId(1), 2), (PoolId(2), 2)]);
    }

    #[test]
    fn placement_check_rejects_bad_decisions() {
        let pools = [st(10, 0, 0)];
        let bad = Placement {
            threads: vec![(PoolId(3), 1)],
        };
        assert!(bad.check(&pools, 4).is_err());
        let too_many = Placement {
            threads: vec![(PoolId(0), 5)],
        };
        assert!(too_many.check(&pools, 4).is_err());
        assert!(Placement {
            threads: vec![(PoolId(0), 4)]
        }
        .check(&pools, 4)
        .is_ok());
    }

    #[test]
    fn config_validation_names_fields() {
        let bad = PoolPlacementConfig {
            parallelism: Parallelism::Restricted { g: 1.5 },
            ..Default::default()
        };
        assert_eq!(bad.validate().unwrap_err().field, "G");
        let bad = PoolPlacementConfig {
            spanning: Spanning::Limited { f: -1.0 },
            ..Default::default()
        };
        assert_eq!(bad.validate().unwrap_err().field, "F");
    }
}
