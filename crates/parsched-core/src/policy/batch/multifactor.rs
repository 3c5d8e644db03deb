//! Slurm's multifactor job priority with the *classic* fair-share factor, as
//! a queue order: a pure component the batch machine feeds with job starts
//! and ends ([`FairShare`]) and asks for scores at each scheduling pass
//! ([`multifactor_scores`], lowest first, like every [`QueueOrder`](super::QueueOrder)).
//!
//! Sources (SchedMD/slurm, commit `284c3b95f08a`, August 2026):
//! * "Multifactor Priority Plugin", <https://slurm.schedmd.com/priority_multifactor.html>
//!   (`doc/html/priority_multifactor.shtml`): the weighted sum, the factors,
//!   the normalisation of partition and QOS priorities, the configuration
//!   example whose weights are our defaults;
//! * "Classic Fairshare Algorithm", <https://slurm.schedmd.com/classic_fair_share.html>
//!   (`doc/html/classic_fair_share.shtml`, `PriorityFlags=NO_FAIR_TREE`):
//!   normalised shares, decayed usage, effective usage, `F = 2^(−UE/S)`;
//! * `src/plugins/priority/multifactor/priority_multifactor.c`:
//!   `set_priority_factors` (age and job-size factors), `set_assoc_usage_norm`,
//!   `_set_usage_efctv`, `_set_assoc_fs_factor`, `_init_decay_vars`,
//!   `_decay_thread`, `_apply_new_usage` (the decay);
//!   `src/common/assoc_mgr.c` (`_normalize_assoc_shares_traditional`,
//!   `_set_qos_norm_priority`), `src/slurmctld/read_config.c`
//!   (`_reset_part_prio`);
//! * `slurm.conf(5)` (`doc/man/man5/slurm.conf.5`): the defaults.
//!
//! # Priority
//!
//! `priority = w_age·age + w_fs·fs + w_size·size + w_part·part + w_qos·qos`,
//! every factor in `[0, 1]`; the score is `−priority` (highest priority
//! first; ties keep arrival order, as Slurm breaks them by submit time and
//! job id). Slurm truncates the sum to an integer in `[1, 2³²−1]`; here it
//! stays a real number (finer, never more ties). Slurm's association, nice,
//! site and TRES terms are absent (SWF traces have nothing for them).
//!
//! * **Age**: `age = min(now − submit, max_age) / max_age`, and `1` when
//!   `max_age = 0` (Slurm: `diff < max_age ? diff / max_age : 1.0`). Slurm
//!   counts from the job's eligible (accrue) time; an SWF job is eligible at
//!   its submission. A job submitted after `now` has age 0.
//! * **Job size** (`PriorityFavorSmall`; `set_priority_factors`, without
//!   `SMALL_RELATIVE_TO_TIME`): Slurm averages a node term and a CPU term,
//!   with `N` nodes, `C` CPUs in the cluster and a job of `m` nodes, `c` CPUs:
//!   favour large `(m/N + c/C)/2`; favour small
//!   `((N−m)/N [0 if m ≥ N] + (C−c)/C)/2`; clamped to `[0, 1]`. SWF
//!   machines have processors only, so each processor is a node
//!   (`N = C = total`, `m = c = n`, `n` clamped to `total`): favour large
//!   `n/total`, favour small `1 − n/total` (a one-processor job gets
//!   `1 − 1/total`, not quite 1, as in Slurm). `total = 0` gives 0.
//! * **Partition and QOS**: Slurm gives each partition an integer
//!   `PriorityJobFactor` and each QOS an integer `Priority`, normalised by the
//!   largest of them (`norm = p / max`, 0 if every one is 0). SWF traces have
//!   partition and queue *numbers* and no priorities, so
//!   [`MultifactorParams::partition_tiers`] and
//!   [`MultifactorParams::qos_tiers`] map a number to a priority, and the
//!   factor is `priority / max priority of the map`; the QOS is the SWF
//!   *queue* number. A number absent from its map, or an empty map (the
//!   default), gives factor 0, so the term adds nothing.
//! * **Fair share**: [`FairShare`], below.
//!
//! # Classic fair share (two levels)
//!
//! The tree is root → accounts (SWF *groups*) → users (SWF *users*): an
//! association is a (user, group) pair; a user in two groups is two
//! associations. Every account of the log has equal shares, every user equal
//! shares within its account; a −1 (unknown) user or group is a user or an
//! account like any other. With `A` accounts and `n` users in the job's
//! account, the normalised shares are `S = (1/n)·(1/A)`.
//!
//! Usage is processor-seconds. Slurm decays it every `PriorityCalcPeriod`
//! (default 5 min) by `D^Δ`, with a per-second `D` set so that usage halves
//! every `PriorityDecayHalfLife` `h` (Slurm uses `D = 1 − 0.693/h`, a first
//! order approximation of `2^(−1/h)`), and charges running jobs at each step.
//! This module takes the continuous limit, with the exact `2^(−Δ/h)`: usage
//! `U` obeys `dU/dt = rate − U·ln2/h`, where `rate` is the processors running,
//! so between two events (`d = 2^(−(t1−t0)/h)`)
//!
//! `U(t1) = U(t0)·d + rate·h/ln2·(1 − d)`,
//!
//! and without decay (`h = 0`) `U(t1) = U(t0) + rate·(t1 − t0)`. Running
//! jobs are charged as they run, as Slurm does at each period.
//!
//! With `U_tot` the whole machine's decayed usage (root's), the normalised
//! usage of an association or account is `UA = U / U_tot` (0 if `U_tot = 0`,
//! at most 1: `set_assoc_usage_norm`). The effective usage of an account
//! (the tier under root) is its own `UA`; a user's is (`_set_usage_efctv`,
//! the classic page's formula)
//!
//! `UE_user = UA_user + (UE_account − UA_user) · S_user / S_all_siblings`
//!
//! with raw shares, here `S_user / S_all_siblings = 1/n`. The factor is
//! `fs = 2^(−UE/S)` (`_set_assoc_fs_factor`, `FairShareDampeningFactor` 1).
//! Every usage is non-negative, so `UE ≥ 0` and `fs ∈ [0, 1]` (0 only when
//! `2^(−UE/S)` underflows, for a tiny share heavily used).

use crate::error::ConfigError;
use crate::policy::batch::OrderJob;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Seven days, Slurm's default `PriorityMaxAge` and `PriorityDecayHalfLife`.
pub const SEVEN_DAYS_S: u64 = 7 * 24 * 3600;

/// The multifactor priority's weights and parameters. Defaults: the weights
/// of the configuration example of Slurm's multifactor page (age 1000, fair
/// share 10000, job size 1000, partition 1000, QOS 0 — Slurm's own default
/// for every weight is 0); `max_age_s` and `half_life_s` Slurm's defaults
/// (7 days each, `slurm.conf(5)`); `favor_small` Slurm's default (`NO`);
/// no partition or QOS tiers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MultifactorParams {
    /// `PriorityWeightAge`.
    pub weight_age: f64,
    /// `PriorityWeightFairshare`.
    pub weight_fairshare: f64,
    /// `PriorityWeightJobSize`.
    pub weight_size: f64,
    /// `PriorityWeightPartition`.
    pub weight_partition: f64,
    /// `PriorityWeightQOS`.
    pub weight_qos: f64,
    /// `PriorityMaxAge`, seconds: the wait at which the age factor reaches
    /// 1 (0: every job has age factor 1).
    pub max_age_s: u64,
    /// `PriorityDecayHalfLife`, seconds (0: no decay). Read by the
    /// [`FairShare`] built with [`MultifactorParams::fair_share`].
    pub half_life_s: u64,
    /// `PriorityFavorSmall`: the job-size factor favours small jobs.
    pub favor_small: bool,
    /// SWF partition number → priority (Slurm's partition
    /// `PriorityJobFactor`); empty: partition factor 0 for every job.
    pub partition_tiers: Vec<(i32, f64)>,
    /// SWF queue number → priority (Slurm's QOS `Priority`); empty: QOS
    /// factor 0 for every job.
    pub qos_tiers: Vec<(i32, f64)>,
}

impl Default for MultifactorParams {
    fn default() -> Self {
        MultifactorParams {
            weight_age: 1000.0,
            weight_fairshare: 10_000.0,
            weight_size: 1000.0,
            weight_partition: 1000.0,
            weight_qos: 0.0,
            max_age_s: SEVEN_DAYS_S,
            half_life_s: SEVEN_DAYS_S,
            favor_small: false,
            partition_tiers: Vec::new(),
            qos_tiers: Vec::new(),
        }
    }
}

impl MultifactorParams {
    /// Weights and tier priorities must be finite and ≥ 0 (Slurm's are
    /// unsigned integers); a tier map names each number once.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (k, v) in [
            ("weight_age", self.weight_age),
            ("weight_fairshare", self.weight_fairshare),
            ("weight_size", self.weight_size),
            ("weight_partition", self.weight_partition),
            ("weight_qos", self.weight_qos),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(ConfigError::new(k, format!("{v}"), "a finite number >= 0"));
            }
        }
        for (k, tiers) in [
            ("partition_tiers", &self.partition_tiers),
            ("qos_tiers", &self.qos_tiers),
        ] {
            for (i, &(num, p)) in tiers.iter().enumerate() {
                if !(p.is_finite() && p >= 0.0) {
                    return Err(ConfigError::new(
                        k,
                        format!("{num} -> {p}"),
                        "priorities finite and >= 0",
                    ));
                }
                if tiers[..i].iter().any(|&(m, _)| m == num) {
                    return Err(ConfigError::new(
                        k,
                        format!("{num} twice"),
                        "each number once",
                    ));
                }
            }
        }
        Ok(())
    }

    /// A fair-share tracker with this half-life over the trace's
    /// (user, group) pairs.
    pub fn fair_share(&self, pairs: impl IntoIterator<Item = (i32, i32)>) -> FairShare {
        FairShare::new(self.half_life_s, pairs)
    }
}

/// The age factor: `min(now − submit, max_age) / max_age`; 1 if
/// `max_age_s = 0`, 0 if `submit ≥ now` (and `max_age_s > 0`).
pub fn age_factor(submit: u64, now: u64, max_age_s: u64) -> f64 {
    let wait = now.saturating_sub(submit);
    if wait < max_age_s {
        wait as f64 / max_age_s as f64
    } else {
        1.0
    }
}

/// The job-size factor with one processor per node: `n/total` (favour
/// large) or `1 − n/total` (favour small), `n` clamped to `total`; 0 if
/// `total = 0`.
pub fn size_factor(procs: u32, total_procs: u32, favor_small: bool) -> f64 {
    if total_procs == 0 {
        return 0.0;
    }
    let share = procs.min(total_procs) as f64 / total_procs as f64;
    if favor_small {
        1.0 - share
    } else {
        share
    }
}

/// The largest priority of a tier map (0 if empty).
fn tier_max(tiers: &[(i32, f64)]) -> f64 {
    tiers
        .iter()
        .fold(0.0, |m, &(_, p)| if p > m { p } else { m })
}

fn tier_lookup(tiers: &[(i32, f64)], max: f64, number: i32) -> f64 {
    if max <= 0.0 {
        return 0.0;
    }
    match tiers.iter().find(|&&(n, _)| n == number) {
        Some(&(_, p)) => (p / max).clamp(0.0, 1.0),
        None => 0.0,
    }
}

/// A partition or QOS factor: `number`'s priority in `tiers` divided by the
/// largest priority of `tiers`; 0 if `number` is absent, the map empty or
/// every priority 0 (Slurm's `norm_priority`).
pub fn tier_factor(tiers: &[(i32, f64)], number: i32) -> f64 {
    tier_lookup(tiers, tier_max(tiers), number)
}

/// A job's five factors, each in `[0, 1]` (what Slurm's `sprio` shows,
/// before the weights).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Factors {
    pub age: f64,
    pub fairshare: f64,
    pub size: f64,
    pub partition: f64,
    pub qos: f64,
}

impl Factors {
    /// The weighted sum (the job's priority, higher first).
    pub fn priority(&self, p: &MultifactorParams) -> f64 {
        p.weight_age * self.age
            + p.weight_fairshare * self.fairshare
            + p.weight_size * self.size
            + p.weight_partition * self.partition
            + p.weight_qos * self.qos
    }
}

/// A job's factors at `now` on a machine of `total_procs` processors. The
/// fair-share factor is computed only if its weight is not 0 (else 0).
pub fn job_factors(
    params: &MultifactorParams,
    fs: &mut FairShare,
    job: &OrderJob,
    now: u64,
    total_procs: u32,
) -> Factors {
    let maxes = (
        tier_max(&params.partition_tiers),
        tier_max(&params.qos_tiers),
    );
    factors_with(params, fs, job, now, total_procs, maxes)
}

/// [`job_factors`] with the tier maps' maxima computed once per pass.
fn factors_with(
    params: &MultifactorParams,
    fs: &mut FairShare,
    job: &OrderJob,
    now: u64,
    total_procs: u32,
    (part_max, qos_max): (f64, f64),
) -> Factors {
    Factors {
        age: age_factor(job.submit, now, params.max_age_s),
        fairshare: if params.weight_fairshare != 0.0 {
            fs.factor(now, job.user, job.group)
        } else {
            0.0
        },
        size: size_factor(job.procs, total_procs, params.favor_small),
        partition: tier_lookup(&params.partition_tiers, part_max, job.partition),
        qos: tier_lookup(&params.qos_tiers, qos_max, job.queue),
    }
}

/// Appends to `out` one score per job of `jobs` (the queue, arrival order):
/// `−priority` at `now`, lowest first. `fs` must have been told every start
/// and end up to `now`; it is `&mut` because a (user, group) pair it has not
/// seen is registered (see [`FairShare::register`]).
pub fn multifactor_scores(
    params: &MultifactorParams,
    fs: &mut FairShare,
    jobs: &[OrderJob],
    now: u64,
    total_procs: u32,
    out: &mut Vec<f64>,
) {
    let maxes = (
        tier_max(&params.partition_tiers),
        tier_max(&params.qos_tiers),
    );
    out.reserve(jobs.len());
    for j in jobs {
        let f = factors_with(params, fs, j, now, total_procs, maxes);
        // (`0.0 - x` rather than `-x`: a zero priority scores +0, not −0)
        out.push(0.0 - f.priority(params));
    }
}

/// Decayed usage of one node of the tree: its value at `t`, the processors
/// running under it since `t`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Usage {
    at_t: f64,
    t: u64,
    running: u64,
}

impl Usage {
    /// The usage at `t` (a time before the last update counts as it).
    fn at(&self, t: u64, half_life_s: u64) -> f64 {
        let dt = t.saturating_sub(self.t) as f64;
        if dt == 0.0 {
            return self.at_t;
        }
        let rate = self.running as f64;
        if half_life_s == 0 {
            return self.at_t + rate * dt;
        }
        let k = std::f64::consts::LN_2 / half_life_s as f64;
        let x = -dt * k;
        // d = e^x = 2^(−dt/h); 1 − d = −expm1(x), exact for small dt/h
        self.at_t * x.exp() + rate * (-x.exp_m1()) / k
    }

    fn advance(&mut self, t: u64, half_life_s: u64) {
        self.at_t = self.at(t, half_life_s);
        self.t = self.t.max(t);
    }
}

#[derive(Debug, Clone)]
struct Assoc {
    account: usize,
    usage: Usage,
}

#[derive(Debug, Clone)]
struct Account {
    users: u32,
    usage: Usage,
}

/// Classic two-level fair share with continuously decayed usage (see the
/// module documentation): accounts are SWF groups, users SWF users.
///
/// Times are seconds and must not decrease from call to call (a time before
/// the last update counts as the last update's). Start and end cost O(1)
/// (one hash look-up: the maps are only looked up, never iterated, so
/// nothing depends on their order), as does a factor.
#[derive(Debug, Clone)]
pub struct FairShare {
    half_life_s: u64,
    assoc_of: HashMap<(i32, i32), usize>,
    account_of: HashMap<i32, usize>,
    assocs: Vec<Assoc>,
    accounts: Vec<Account>,
    total: Usage,
}

impl FairShare {
    /// A tracker with half-life `half_life_s` (0: no decay) over every
    /// `(user, group)` pair of the trace (repeats are ignored): each group is
    /// an account of equal shares, each user one of equal shares in it.
    pub fn new(half_life_s: u64, pairs: impl IntoIterator<Item = (i32, i32)>) -> FairShare {
        let mut fs = FairShare {
            half_life_s,
            assoc_of: HashMap::new(),
            account_of: HashMap::new(),
            assocs: Vec::new(),
            accounts: Vec::new(),
            total: Usage::default(),
        };
        for (user, group) in pairs {
            fs.register(user, group);
        }
        fs
    }

    /// The half-life, seconds (0: no decay).
    pub fn half_life_s(&self) -> u64 {
        self.half_life_s
    }

    /// Adds the association `(user, group)` (and the account `group`) if
    /// new, with equal shares like the others (which then have smaller
    /// normalised shares); returns its index. A pair missing from the list
    /// given to [`FairShare::new`] is registered so on first use.
    pub fn register(&mut self, user: i32, group: i32) -> usize {
        if let Some(&i) = self.assoc_of.get(&(user, group)) {
            return i;
        }
        let account = match self.account_of.get(&group) {
            Some(&a) => a,
            None => {
                self.accounts.push(Account {
                    users: 0,
                    usage: Usage::default(),
                });
                self.account_of.insert(group, self.accounts.len() - 1);
                self.accounts.len() - 1
            }
        };
        self.accounts[account].users += 1;
        self.assocs.push(Assoc {
            account,
            usage: Usage::default(),
        });
        let i = self.assocs.len() - 1;
        self.assoc_of.insert((user, group), i);
        i
    }

    /// Number of accounts (groups) and of associations (user, group pairs).
    pub fn counts(&self) -> (usize, usize) {
        (self.accounts.len(), self.assocs.len())
    }

    fn change(&mut self, t: u64, user: i32, group: i32, procs: u32, start: bool) {
        let h = self.half_life_s;
        let i = self.register(user, group);
        let a = self.assocs[i].account;
        let p = u64::from(procs);
        for u in [
            &mut self.assocs[i].usage,
            &mut self.accounts[a].usage,
            &mut self.total,
        ] {
            u.advance(t, h);
            if start {
                u.running += p;
            } else {
                debug_assert!(u.running >= p, "a job ended that was not started");
                u.running = u.running.saturating_sub(p);
            }
        }
    }

    /// A job of `procs` processors of `(user, group)` starts at `t`.
    pub fn job_started(&mut self, t: u64, user: i32, group: i32, procs: u32) {
        self.change(t, user, group, procs, true);
    }

    /// A job of `procs` processors of `(user, group)`, started earlier,
    /// ends at `t`.
    pub fn job_ended(&mut self, t: u64, user: i32, group: i32, procs: u32) {
        self.change(t, user, group, procs, false);
    }

    /// The decayed usage (processor-seconds) of `(user, group)` at `t`
    /// (`None`: never seen).
    pub fn usage(&self, t: u64, user: i32, group: i32) -> Option<f64> {
        let i = *self.assoc_of.get(&(user, group))?;
        Some(self.assocs[i].usage.at(t, self.half_life_s))
    }

    /// The decayed usage of the account `group` at `t` (`None`: never seen).
    pub fn account_usage(&self, t: u64, group: i32) -> Option<f64> {
        let a = *self.account_of.get(&group)?;
        Some(self.accounts[a].usage.at(t, self.half_life_s))
    }

    /// The machine's decayed usage at `t` (the root's).
    pub fn total_usage(&self, t: u64) -> f64 {
        self.total.at(t, self.half_life_s)
    }

    /// The normalised shares `S` of `(user, group)` (`None`: never seen).
    pub fn shares(&self, user: i32, group: i32) -> Option<f64> {
        Some(self.shares_of(*self.assoc_of.get(&(user, group))?))
    }

    /// The effective usage `UE` of `(user, group)` at `t` (`None`: never
    /// seen).
    pub fn effective_usage(&self, t: u64, user: i32, group: i32) -> Option<f64> {
        Some(self.effective_of(*self.assoc_of.get(&(user, group))?, t))
    }

    /// The fair-share factor `2^(−UE/S)` of `(user, group)` at `t`, in
    /// `[0, 1]`; an unseen pair is registered first.
    pub fn factor(&mut self, t: u64, user: i32, group: i32) -> f64 {
        let i = self.register(user, group);
        (-self.effective_of(i, t) / self.shares_of(i))
            .exp2()
            .clamp(0.0, 1.0)
    }

    fn shares_of(&self, i: usize) -> f64 {
        let n = self.accounts[self.assocs[i].account].users as f64;
        1.0 / (n * self.accounts.len() as f64)
    }

    fn effective_of(&self, i: usize, t: u64) -> f64 {
        let h = self.half_life_s;
        let acct = &self.accounts[self.assocs[i].account];
        let total = self.total.at(t, h);
        let (ua_user, ua_acct) = if total > 0.0 {
            (
                (self.assocs[i].usage.at(t, h) / total).clamp(0.0, 1.0),
                (acct.usage.at(t, h) / total).clamp(0.0, 1.0),
            )
        } else {
            (0.0, 0.0)
        };
        // the account is under root: UE_account = UA_account; the user's
        // siblings share equally: S_user / S_all_siblings = 1/n
        ua_user + (ua_acct - ua_user) / acct.users as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::LN_2;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    macro_rules! assert_close {
        ($a:expr, $b:expr) => {{
            let (a, b) = ($a, $b);
            assert!(close(a, b), "{} = {a}, expected {b}", stringify!($a));
        }};
    }

    /// Age factor with max_age 100 s: wait 50 → 0.5, 100 → 1 (capped),
    /// 1000 → 1; a job submitted after now → 0; max_age 0 → 1 always.
    #[test]
    fn age_factor_is_capped_at_max_age() {
        assert_eq!(age_factor(0, 50, 100), 0.5);
        assert_eq!(age_factor(10, 35, 100), 0.25);
        assert_eq!(age_factor(0, 99, 100), 0.99);
        assert_eq!(age_factor(0, 100, 100), 1.0);
        assert_eq!(age_factor(0, 1000, 100), 1.0);
        assert_eq!(age_factor(200, 100, 100), 0.0);
        assert_eq!(age_factor(5, 5, 100), 0.0);
        assert_eq!(age_factor(5, 5, 0), 1.0);
        assert_eq!(age_factor(0, 1000, 0), 1.0);
        // default: 7 days
        assert_eq!(age_factor(0, 302_400, SEVEN_DAYS_S), 0.5);
    }

    /// Size factor on 16 processors: 4 → 4/16 = 0.25 (large) or 0.75
    /// (small); 1 → 1/16 or 15/16; 16 → 1 or 0; 20 is clamped to 16.
    #[test]
    fn size_factor_both_polarities() {
        assert_eq!(size_factor(4, 16, false), 0.25);
        assert_eq!(size_factor(4, 16, true), 0.75);
        assert_eq!(size_factor(1, 16, false), 0.0625);
        assert_eq!(size_factor(1, 16, true), 0.9375);
        assert_eq!(size_factor(16, 16, false), 1.0);
        assert_eq!(size_factor(16, 16, true), 0.0);
        assert_eq!(size_factor(20, 16, false), 1.0);
        assert_eq!(size_factor(20, 16, true), 0.0);
        assert_eq!(size_factor(0, 16, true), 1.0);
        assert_eq!(size_factor(4, 0, false), 0.0);
        assert_eq!(size_factor(4, 0, true), 0.0);
    }

    /// Partition 1 → 20, 2 → 10, 3 → 0: factors 1, 0.5, 0; absent → 0;
    /// empty map → 0; all-zero map → 0.
    #[test]
    fn tier_factors_are_normalised_by_the_largest() {
        let tiers = [(1, 20.0), (2, 10.0), (3, 0.0)];
        assert_eq!(tier_factor(&tiers, 1), 1.0);
        assert_eq!(tier_factor(&tiers, 2), 0.5);
        assert_eq!(tier_factor(&tiers, 3), 0.0);
        assert_eq!(tier_factor(&tiers, 7), 0.0);
        assert_eq!(tier_factor(&tiers, -1), 0.0);
        assert_eq!(tier_factor(&[], 1), 0.0);
        assert_eq!(tier_factor(&[(1, 0.0)], 1), 0.0);
    }

    /// Accounts A (group 10: users 1, 2) and B (group 20: user 3); shares
    /// A = B = 1/2, so S1 = S2 = 1/4, S3 = 1/2. Half-life h = 100 s.
    ///
    /// User 1 runs 4 processors from t = 0 to 100. At t = 100:
    ///   U1 = 4·100/ln2·(1 − 2^−1) = 200/ln2 =: K, U_A = U_tot = K, U_B = 0
    ///   UA1 = 1, UA2 = 0, UA3 = 0; UE_A = 1, UE_B = 0
    ///   UE1 = 1 + (1 − 1)/2 = 1     → F1 = 2^(−1/(1/4))   = 1/16
    ///   UE2 = 0 + (1 − 0)/2 = 1/2   → F2 = 2^(−0.5/(1/4)) = 1/4
    ///   UE3 = 0 + (0 − 0)/1 = 0     → F3 = 1
    /// User 3 then runs 2 processors from t = 100 to 200. At t = 200:
    ///   U1 = K/2, U3 = 2·100/ln2·(1/2) = K/2, U_tot = K
    ///   UA1 = UA_A = 1/2, UA3 = UA_B = 1/2
    ///   UE1 = 1/2 + 0 = 1/2          → F1 = 2^(−2) = 1/4
    ///   UE2 = 0 + (1/2)/2 = 1/4      → F2 = 2^(−1) = 1/2
    ///   UE3 = 1/2 + 0 = 1/2          → F3 = 2^(−(1/2)/(1/2)) = 1/2
    #[test]
    fn classic_fair_share_by_hand() {
        let mut fs = FairShare::new(100, [(1, 10), (2, 10), (3, 20), (1, 10)]);
        assert_eq!(fs.counts(), (2, 3));
        assert_eq!(fs.shares(1, 10), Some(0.25));
        assert_eq!(fs.shares(3, 20), Some(0.5));
        // nothing used yet: every factor 1
        assert_eq!(fs.factor(0, 1, 10), 1.0);
        fs.job_started(0, 1, 10, 4);
        fs.job_ended(100, 1, 10, 4);
        let k = 200.0 / LN_2;
        assert_close!(fs.usage(100, 1, 10).unwrap(), k);
        assert_close!(4.0 * 100.0 / LN_2 * (1.0 - 0.5), k);
        assert_close!(fs.total_usage(100), k);
        assert_close!(fs.account_usage(100, 10).unwrap(), k);
        assert_eq!(fs.account_usage(100, 20), Some(0.0));
        assert_close!(fs.effective_usage(100, 1, 10).unwrap(), 1.0);
        assert_close!(fs.effective_usage(100, 2, 10).unwrap(), 0.5);
        assert_close!(fs.factor(100, 1, 10), 1.0 / 16.0);
        assert_close!(fs.factor(100, 2, 10), 0.25);
        assert_close!(fs.factor(100, 3, 20), 1.0);

        fs.job_started(100, 3, 20, 2);
        fs.job_ended(200, 3, 20, 2);
        assert_close!(fs.usage(200, 1, 10).unwrap(), k / 2.0);
        assert_close!(fs.usage(200, 3, 20).unwrap(), k / 2.0);
        assert_close!(fs.total_usage(200), k);
        assert_close!(fs.factor(200, 1, 10), 0.25);
        assert_close!(fs.factor(200, 2, 10), 0.5);
        assert_close!(fs.factor(200, 3, 20), 0.5);
    }

    /// Without running jobs usage halves every half-life; advancing in steps
    /// gives what one step gives; without decay usage is processor-seconds.
    #[test]
    fn usage_decays_by_half_each_half_life() {
        let mut fs = FairShare::new(100, [(1, 1), (2, 1)]);
        fs.job_started(0, 1, 1, 4);
        fs.job_ended(100, 1, 1, 4);
        let k = 200.0 / LN_2;
        assert_close!(fs.usage(200, 1, 1).unwrap(), k / 2.0);
        assert_close!(fs.usage(300, 1, 1).unwrap(), k / 4.0);
        assert_close!(fs.usage(1100, 1, 1).unwrap(), k / 1024.0);
        // an event of another user (updating the total) changes nothing
        fs.job_started(150, 2, 1, 1);
        fs.job_ended(150, 2, 1, 1);
        assert_close!(fs.total_usage(300), k / 4.0);
        // a running job, charged in three steps or in one
        let mut a = FairShare::new(100, [(1, 1)]);
        let mut b = a.clone();
        a.job_started(0, 1, 1, 3);
        b.job_started(0, 1, 1, 3);
        for t in [37, 120, 250] {
            a.job_started(t, 1, 1, 0); // (an update at t)
        }
        assert_close!(a.usage(250, 1, 1).unwrap(), b.usage(250, 1, 1).unwrap());
        // 3·100/ln2·(1 − 2^−2.5)
        let want = 300.0 / LN_2 * (1.0 - 2f64.powf(-2.5));
        assert_close!(b.usage(250, 1, 1).unwrap(), want);
        // no decay
        let mut n = FairShare::new(0, [(1, 1)]);
        n.job_started(10, 1, 1, 4);
        n.job_ended(110, 1, 1, 4);
        assert_eq!(n.usage(10_000, 1, 1), Some(400.0));
        assert_eq!(n.half_life_s(), 0);
    }

    /// The state of `classic_fair_share_by_hand` at t = 100 (F1 = 1/16,
    /// F3 = 1): jobs of users 1 and 3, both submitted at 50 with 4 of 16
    /// processors. Age 50/604800, size 1/4, default weights:
    ///   P1 = 1000·50/604800 + 10000/16 + 1000/4 = 875.0826719…
    ///   P3 = 1000·50/604800 + 10000    + 1000/4 = 10250.0826719…
    /// so user 3's job, second in arrival order, goes first.
    #[test]
    fn fair_share_reorders_jobs_of_the_same_age() {
        let mut fs = FairShare::new(100, [(1, 10), (2, 10), (3, 20)]);
        fs.job_started(0, 1, 10, 4);
        fs.job_ended(100, 1, 10, 4);
        let job = |user, group| OrderJob {
            user,
            group,
            ..OrderJob::new(50, 1000, 4)
        };
        let jobs = [job(1, 10), job(3, 20)];
        let p = MultifactorParams::default();
        let mut scores = Vec::new();
        multifactor_scores(&p, &mut fs, &jobs, 100, 16, &mut scores);
        let age = 1000.0 * 50.0 / 604_800.0;
        assert_close!(scores[0], -(age + 10_000.0 / 16.0 + 250.0));
        assert_close!(scores[1], -(age + 10_000.0 + 250.0));
        let mut perm = Vec::new();
        crate::policy::batch::sort_by_scores(&scores, &mut perm).unwrap();
        assert_eq!(perm, vec![1, 0]);
        // the same jobs by job_factors
        let f = job_factors(&p, &mut fs, &jobs[0], 100, 16);
        assert_close!(f.fairshare, 1.0 / 16.0);
        assert_eq!((f.size, f.partition, f.qos), (0.25, 0.0, 0.0));
        assert_close!(f.priority(&p), -scores[0]);
        // with the fair-share weight 0 arrival order stands (equal scores)
        let p0 = MultifactorParams {
            weight_fairshare: 0.0,
            ..p
        };
        scores.clear();
        multifactor_scores(&p0, &mut fs, &jobs, 100, 16, &mut scores);
        assert_eq!(scores[0], scores[1]);
    }

    /// Partition and QOS tiers enter with their weights; the QOS is the
    /// queue number. Weights: partition 1000, QOS 500, others 0.
    #[test]
    fn partition_and_qos_tiers_enter_the_priority() {
        let p = MultifactorParams {
            weight_age: 0.0,
            weight_fairshare: 0.0,
            weight_size: 0.0,
            weight_partition: 1000.0,
            weight_qos: 500.0,
            partition_tiers: vec![(1, 20.0), (2, 10.0)],
            qos_tiers: vec![(0, 1.0), (5, 4.0)],
            ..MultifactorParams::default()
        };
        p.validate().unwrap();
        let job = |partition, queue| OrderJob {
            partition,
            queue,
            ..OrderJob::new(0, 10, 1)
        };
        // 1000·1 + 500·1/4, 1000·0.5 + 500·1, 0 + 0 (unknown numbers)
        let jobs = [job(1, 0), job(2, 5), job(-1, -1)];
        let mut fs = FairShare::new(0, []);
        let mut s = Vec::new();
        multifactor_scores(&p, &mut fs, &jobs, 10, 8, &mut s);
        assert_eq!(s, vec![-1125.0, -1000.0, 0.0]);
        assert!(s[2].is_sign_positive());
    }

    #[test]
    fn params_validate_and_read_from_toml() {
        assert!(MultifactorParams::default().validate().is_ok());
        let bad = MultifactorParams {
            weight_age: -1.0,
            ..MultifactorParams::default()
        };
        assert_eq!(bad.validate().unwrap_err().field, "weight_age");
        let dup = MultifactorParams {
            qos_tiers: vec![(1, 1.0), (1, 2.0)],
            ..MultifactorParams::default()
        };
        assert_eq!(dup.validate().unwrap_err().field, "qos_tiers");
        let p: MultifactorParams =
            toml::from_str("weight_qos = 2000.0\nfavor_small = true\nqos_tiers = [[1, 10.0]]")
                .unwrap();
        assert_eq!(p.weight_qos, 2000.0);
        assert!(p.favor_small);
        assert_eq!(p.qos_tiers, vec![(1, 10.0)]);
        assert_eq!(p.half_life_s, SEVEN_DAYS_S);
        assert!(toml::from_str::<MultifactorParams>("weight_nice = 1.0").is_err());
    }

    /// An unseen pair is registered on use; −1 is an id like any other.
    #[test]
    fn unknown_ids_are_their_own_user_and_account() {
        let mut fs = FairShare::new(100, [(1, 10), (-1, -1)]);
        assert_eq!(fs.counts(), (2, 2));
        assert_eq!(fs.shares(-1, -1), Some(0.5));
        fs.job_started(0, -1, 10, 2);
        assert_eq!(fs.counts(), (2, 3));
        assert_eq!(fs.shares(1, 10), Some(0.25));
        assert_eq!(fs.factor(0, 7, 70), 1.0);
        assert_eq!(fs.counts(), (3, 4));
    }

    /// Random starts and ends (xorshift64): usages never negative, the
    /// total the sum of the parts, every factor in (0, 1] (no underflow here).
    #[test]
    fn random_sequences_keep_factors_in_range() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let pairs: Vec<(i32, i32)> = vec![(1, 1), (2, 1), (3, 2), (4, 3), (-1, -1), (5, 3)];
        for h in [0, 50, 3600] {
            let mut fs = FairShare::new(h, pairs.iter().copied());
            let mut running: Vec<(i32, i32, u32)> = Vec::new();
            let mut t = 0;
            for _ in 0..2000 {
                t += next() % 200;
                if running.is_empty() || next() % 2 == 0 {
                    let (u, g) = pairs[(next() % pairs.len() as u64) as usize];
                    let p = (next() % 64) as u32 + 1;
                    fs.job_started(t, u, g, p);
                    running.push((u, g, p));
                } else {
                    let k = (next() % running.len() as u64) as usize;
                    let (u, g, p) = running.swap_remove(k);
                    fs.job_ended(t, u, g, p);
                }
                let mut sum = 0.0;
                for &(u, g) in &pairs {
                    let used = fs.usage(t, u, g).unwrap();
                    assert!(used >= 0.0);
                    sum += used;
                    let f = fs.factor(t, u, g);
                    assert!(f > 0.0 && f <= 1.0, "factor {f}");
                    let ue = fs.effective_usage(t, u, g).unwrap();
                    assert!((0.0..=1.0 + 1e-12).contains(&ue));
                }
                let total = fs.total_usage(t);
                assert!((sum - total).abs() <= 1e-9 * total.max(1.0));
            }
        }
    }
}
