//! User runtime estimates (requested times) — the model of D. Tsafrir,
//! Y. Etsion and D. G. Feitelson, "Modeling User Runtime Estimates", JSSPP
//! 2005 (LNCS 3834), as its authors distribute it with the Parallel
//! Workloads Archive (`m_tsafrir05`). An independent implementation from
//! the model's description; `docs/policies/batch.md` ("Requested times")
//! lists the parameters and the choices made here.
//!
//! The model works on a whole workload: it builds a histogram of estimates
//! for `n` jobs, then hands the estimates out so that every job gets one at
//! least as long as its run time.
//!
//! * **Number of distinct estimates** `K`: piecewise linear in `n` through
//!   (0, 0), (20, 10), (200, 20), (1000, 35), (10⁴, 90), (7·10⁴, 340),
//!   (2.5·10⁵, 565), constant above (the default); or the power model
//!   `round(0.653566 · n^0.547761)`.
//! * **The 20 popular ("head") estimates**: the maximum `M`, the 15 values
//!   popular in all four traces the model was fitted to (5, 10, 15, 20, 30
//!   min, 1, 2, 3, 4, 5, 6, 8, 10, 12, 18 h) that are below `M`, completed
//!   to 20 with "round" values: multiples of 200, 100, 50, 10, 5, 2, 1 h,
//!   20, 10, 5 min counted down from `M`.
//! * **Their popularity** (percent of jobs by popularity rank `r`): ranks
//!   2..20 get `14.0491·e^(−0.177531·r) + 0.462513`, rank 1 the rest of 89 %
//!   (≈ 21.7 %). `M` is the most popular; the other head values get ranks by
//!   their time rank through the four traces' observed time-rank →
//!   popularity-rank table: at each time rank the ranks seen there join a
//!   pool; a rank whose last appearance is due is taken (smallest first),
//!   else the smaller of two uniform picks from the pool.
//!   `max_percent` fixes `M`'s share instead (the others are scaled so that
//!   the head still holds 89 %), at the popularity rank where it falls.
//! * **The other `K − 20` ("tail") estimates**: times `M·(a−1)x/(a−x)` at
//!   `x = i/(K−20)`, `a = 1 + 12.1039·K^−0.6026`, rounded to the minute and
//!   moved by +30, −30, +20, −20, +10, −10 s to avoid a value already taken
//!   (dropped if none is free, or not in (0, M)); shares `795.6·r^−2.267`
//!   for ranks 21.., scaled to 11 %, matched to the times at random.
//! * **Jobs per estimate**: `max(1, round(share·n))` (`M`'s share fixed by
//!   `max_percent` is not rounded up to 1 nor adjusted), then the other
//!   counts are adjusted to sum to `n` (in proportion, then ±1, then down to
//!   1, then to 0, biggest counts first).
//! * **Assignment**: run times above `M` are cut to `M` (a job is killed at
//!   its estimate); jobs sorted by run time (longest first) take, in turn, a
//!   uniformly random estimate among those left that are ≥ their run time.
//!   When the estimates cannot cover the run times (too many long jobs for
//!   the histogram) the model fails, as the authors' program does.
//!
//! Choices where the description leaves the order open (documented): ties
//! of run time keep job order; ties of count in the adjustment are taken
//! by ascending time; pool shuffles are omitted (a uniform pick from a
//! pool does not depend on its order).

use super::{LublinConfig, LublinGenerator};
use crate::rng::{stream, Stream, StreamRng};
use parsched_core::ConfigError;
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Popular ("head") estimates.
pub const TOP: usize = 20;
const MIN: u64 = 60;
const HOUR: u64 = 3600;

/// Percent of jobs using a head estimate.
pub const HEAD_PERCENT: f64 = 89.0;
/// Head share of popularity rank `r` (2..=20): `a·e^(b·r) + c` percent.
pub const HEAD_SHARE: (f64, f64, f64) = (14.0491, -0.177531, 0.462513);
/// Tail share of popularity rank `r` (21..): `a·r^b` before scaling.
pub const TAIL_SHARE: (f64, f64) = (795.6, -2.267);
/// `a = 1 + p·K^q` of the tail times.
pub const TAIL_TIME: (f64, f64) = (12.1039, -0.6026);
/// The power model of the number of estimates: `a·n^b`.
pub const BINS_POWER: (f64, f64) = (0.653566, 0.547761);
/// The linear model's points (jobs, estimates).
const BINS_LINEAR: [(u64, u64); 7] = [
    (0, 0),
    (20, 10),
    (200, 20),
    (1000, 35),
    (10_000, 90),
    (70_000, 340),
    (250_000, 565),
];
/// The estimates popular in all four traces (besides the maximum).
const JOINT: [u64; 15] = [
    5 * MIN,
    15 * MIN,
    10 * MIN,
    20 * MIN,
    30 * MIN,
    HOUR,
    2 * HOUR,
    3 * HOUR,
    4 * HOUR,
    5 * HOUR,
    6 * HOUR,
    8 * HOUR,
    10 * HOUR,
    12 * HOUR,
    18 * HOUR,
];
/// Round values completing the head, in order.
const ROUND: [u64; 10] = [
    200 * HOUR,
    100 * HOUR,
    50 * HOUR,
    10 * HOUR,
    5 * HOUR,
    2 * HOUR,
    HOUR,
    20 * MIN,
    10 * MIN,
    5 * MIN,
];
/// Popularity rank of the head estimate of each time rank (0: the
/// maximum, then ascending) in SDSC-SP2, CTC-SP2, KTH-SP2, SDSC-Blue.
const TIME_TO_POP: [[usize; 4]; TOP] = [
    [3, 1, 1, 1],
    [1, 3, 4, 6],
    [4, 4, 10, 5],
    [17, 2, 14, 3],
    [13, 12, 20, 7],
    [7, 9, 2, 2],
    [8, 8, 3, 18],
    [18, 18, 7, 19],
    [2, 6, 12, 4],
    [6, 7, 6, 11],
    [16, 11, 19, 20],
    [10, 20, 5, 9],
    [5, 16, 18, 10],
    [15, 5, 16, 14],
    [14, 14, 9, 13],
    [19, 13, 17, 16],
    [11, 10, 15, 15],
    [12, 15, 13, 17],
    [9, 17, 8, 8],
    [20, 19, 11, 12],
];
/// The smallest maximum estimate accepted (the 20 head values need ≥ 96 min).
pub const MIN_MAX_ESTIMATE: u64 = 2 * HOUR;

/// Where a generated job's requested time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RequestedTimes {
    /// Unknown (-1; the loader's `missing_requested_time` rule applies).
    #[default]
    None,
    /// The run time itself (exact estimates).
    Exact,
    /// Drawn from the Tsafrir–Etsion–Feitelson model.
    Tsafrir05,
}

parsched_core::choices!(RequestedTimes {
    None => "none",
    Exact => "exact",
    Tsafrir05 => "tsafrir05",
});

/// How the number of distinct estimates follows the number of jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum BinCount {
    /// The model's piecewise linear fit (its default).
    #[default]
    Linear,
    /// The model's power fit `0.653566·n^0.547761`.
    Power,
}

parsched_core::choices!(BinCount {
    Linear => "linear",
    Power => "power",
});

/// The model's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EstimateModel {
    /// The maximal estimate `M` (seconds).
    pub max: u64,
    /// Percent of jobs whose estimate is `M` (`None`: the model's ≈ 21.7 %).
    pub max_percent: Option<f64>,
    pub bins: BinCount,
}

/// The 20 (or fewer for a small `max`) head estimates: `max` first, then
/// ascending.
pub fn head_times(max: u64) -> Vec<u64> {
    let mut v = vec![max];
    v.extend(JOINT.iter().copied().filter(|&e| e < max));
    for mul in ROUND {
        let start = max / mul * mul;
        let mut e = start;
        while e > 0 && v.len() < TOP {
            if !v.contains(&e) {
                v.push(e);
            }
            e -= mul;
        }
    }
    v[1..].sort_unstable();
    v
}

/// The model's head shares (percent) by popularity rank 1..=`n`, and the
/// rank (0-based) of the maximum's share.
fn head_shares(n: usize, max_percent: Option<f64>) -> (Vec<f64>, usize) {
    let (a, b, c) = HEAD_SHARE;
    let rest: Vec<f64> = (2..=n).map(|r| a * (b * r as f64).exp() + c).collect();
    let sum: f64 = rest.iter().sum();
    let (first, f) = match max_percent {
        None => (HEAD_PERCENT - sum, 1.0),
        Some(p) => (p, (HEAD_PERCENT - p).max(0.0) / sum),
    };
    let mut v: Vec<f64> = std::iter::once(first)
        .chain(rest.iter().map(|x| x * f))
        .collect();
    v.sort_by(|x, y| y.total_cmp(x));
    let at = if max_percent.is_some() {
        v.iter().position(|&x| x == first).unwrap_or(0)
    } else {
        0
    };
    (v, at)
}

/// Popularity rank (1-based) of each head time rank: the maximum gets
/// `max_rank`, the others follow the traces' table (see the module header).
fn popularity_ranks(max_rank: usize, rng: &mut StreamRng) -> [usize; TOP] {
    let mut last = [0usize; TOP + 1];
    for (t, row) in TIME_TO_POP.iter().enumerate() {
        for &p in row {
            last[p] = last[p].max(t);
        }
    }
    let mut chosen = [false; TOP + 1];
    let mut out = [0usize; TOP];
    let mut pool: Vec<usize> = Vec::with_capacity(TOP * 4);
    for (t, row) in TIME_TO_POP.iter().enumerate() {
        let free = |p: usize, chosen: &[bool; TOP + 1]| !chosen[p] && p != max_rank;
        pool.extend(row.iter().copied().filter(|&p| free(p, &chosen)));
        let p = if t == 0 {
            max_rank
        } else if let Some(due) = (1..=TOP).find(|&p| last[p] <= t && free(p, &chosen)) {
            due
        } else if pool.is_empty() {
            (1..=TOP).find(|&p| free(p, &chosen)).unwrap_or(max_rank)
        } else {
            let a = pool[rng.random_range(0..pool.len())];
            let b = pool[rng.random_range(0..pool.len())];
            a.min(b)
        };
        out[t] = p;
        chosen[p] = true;
        pool.retain(|&x| x != p);
    }
    out
}

/// The number of distinct estimates for `n` jobs.
pub fn bin_count(n: u64, model: BinCount) -> usize {
    match model {
        BinCount::Power => (BINS_POWER.0 * (n as f64).powf(BINS_POWER.1)).round() as usize,
        BinCount::Linear => {
            let Some(k) = BINS_LINEAR.iter().position(|&(x, _)| n <= x) else {
                return BINS_LINEAR[BINS_LINEAR.len() - 1].1 as usize;
            };
            if k == 0 {
                return 0;
            }
            let ((x0, y0), (x1, y1)) = (BINS_LINEAR[k - 1], BINS_LINEAR[k]);
            let slope = (y1 - y0) as f64 / (x1 - x0) as f64;
            y0 as usize + ((n - x0) as f64 * slope).round() as usize
        }
    }
}

/// The tail: time (seconds) → share (percent), for `k` tail estimates.
fn tail(
    max: u64,
    taken: &BTreeSet<u64>,
    k: usize,
    big_k: usize,
    rng: &mut StreamRng,
) -> Vec<(u64, f64)> {
    let a = 1.0 + TAIL_TIME.0 * (big_k as f64).powf(TAIL_TIME.1);
    let mut times = BTreeSet::new();
    for i in 1..=k {
        let x = i as f64 / k as f64;
        let y = (a - 1.0) * x / (a - x);
        let sec = ((y * max as f64 / 60.0).round() * 60.0) as i64;
        let free = [0i64, 30, -30, 20, -20, 10, -10]
            .iter()
            .map(|o| sec + o)
            .find(|&s| {
                s > 0
                    && (s as u64) < max
                    && !taken.contains(&(s as u64))
                    && !times.contains(&(s as u64))
            });
        if let Some(s) = free {
            times.insert(s as u64);
        }
    }
    let (ta, tb) = TAIL_SHARE;
    let mut shares: Vec<f64> = (0..times.len())
        .map(|i| ta * ((TOP + 1 + i) as f64).powf(tb))
        .collect();
    let sum: f64 = shares.iter().sum();
    for s in &mut shares {
        *s *= (100.0 - HEAD_PERCENT) / sum;
    }
    // Random matching of times to shares (Fisher–Yates on the shares).
    for i in (1..shares.len()).rev() {
        shares.swap(i, rng.random_range(0..=i));
    }
    times.into_iter().zip(shares).collect()
}

/// The estimate histogram for `n` jobs: (estimate seconds, jobs), ascending
/// by estimate, the jobs summing to `n`.
pub fn histogram(m: &EstimateModel, n: u64, rng: &mut StreamRng) -> Vec<(u64, u64)> {
    let head = head_times(m.max);
    let (shares, max_at) = head_shares(head.len(), m.max_percent);
    let ranks = popularity_ranks(max_at + 1, rng);
    let mut percent: BTreeMap<u64, f64> = BTreeMap::new();
    for (t, &time) in head.iter().enumerate() {
        // A head of fewer than 20 values keeps the ranks that exist.
        let r = ranks[t].min(shares.len());
        percent.insert(time, shares[r - 1]);
    }
    let big_k = bin_count(n, m.bins);
    let taken: BTreeSet<u64> = percent.keys().copied().collect();
    let k = big_k.saturating_sub(head.len());
    percent.extend(tail(m.max, &taken, k, big_k, rng));
    let fixed = m
        .max_percent
        .map(|p| (m.max, (p * n as f64 / 100.0).round() as u64));
    let mut jobs: BTreeMap<u64, u64> = percent
        .iter()
        .map(|(&t, &p)| match fixed {
            Some((ft, fj)) if ft == t => (t, fj.min(n)),
            _ => (t, ((p * n as f64 / 100.0).round() as u64).max(1)),
        })
        .collect();
    adjust(&mut jobs, fixed.map(|f| f.0), n);
    jobs.into_iter().filter(|&(_, j)| j > 0).collect()
}

/// Makes the counts sum to `n`, changing the counts of the estimates other
/// than `fixed`, biggest first: in proportion, then by 1, then down to 1,
/// then to 0.
fn adjust(jobs: &mut BTreeMap<u64, u64>, fixed: Option<u64>, n: u64) {
    let total: u64 = jobs.values().sum();
    let free_sum: u64 = jobs
        .iter()
        .filter(|(t, _)| Some(**t) != fixed)
        .map(|(_, j)| j)
        .sum();
    let add = n > total;
    let mut diff = n.abs_diff(total);
    let f = if free_sum > 0 {
        diff as f64 / free_sum as f64
    } else {
        0.0
    };
    for attempt in 0..4 {
        let mut order: Vec<(u64, u64)> = jobs
            .iter()
            .filter(|&(t, &j)| Some(*t) != fixed && j > 0)
            .map(|(&t, &j)| (t, j))
            .collect();
        order.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        for (t, j) in order {
            if diff == 0 {
                return;
            }
            let mut change = match attempt {
                0 => (f * j as f64).ceil() as u64,
                1 => 1,
                2 => j - 1,
                _ => j,
            };
            if !add {
                change = change.min(j);
                if change == j && attempt < 3 {
                    change -= 1;
                }
            }
            change = change.min(diff);
            let e = jobs.get_mut(&t).expect("a listed estimate");
            if add {
                *e += change;
            } else {
                *e -= change;
            }
            diff -= change;
        }
    }
    // Adding completes in proportion; taking down to 0 always suffices
    // (the fixed count is at most `n`).
    debug_assert_eq!(diff, 0);
}

/// The estimates the histogram `hist` hands to jobs of run times `runtimes`
/// (each ≤ the largest estimate): longest job first, a uniform pick among
/// the estimates left that are ≥ its run time. `Err(rank)` when the
/// estimates cannot cover the run times (the `rank`-th longest job).
pub fn assign(
    runtimes: &[u64],
    hist: &[(u64, u64)],
    rng: &mut StreamRng,
) -> Result<Vec<u64>, usize> {
    let n = runtimes.len();
    let mut est: Vec<u64> = Vec::with_capacity(n);
    for &(t, j) in hist.iter().rev() {
        est.extend(std::iter::repeat_n(t, j as usize));
    }
    assert_eq!(est.len(), n, "the histogram holds one estimate per job");
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by(|&a, &b| {
        runtimes[b as usize]
            .cmp(&runtimes[a as usize])
            .then(a.cmp(&b))
    });
    if let Some(k) = (0..n).find(|&k| runtimes[order[k] as usize] > est[k]) {
        return Err(k + 1);
    }
    let mut out = vec![0u64; n];
    let mut hi = 0usize;
    for j in 0..n {
        let rt = runtimes[order[j] as usize];
        hi = hi.max(j);
        while hi + 1 < n && rt <= est[hi + 1] {
            hi += 1;
        }
        let k = rng.random_range(j..=hi);
        debug_assert!(est[k] >= rt);
        out[order[j] as usize] = est[k];
        est.swap(j, k);
    }
    Ok(out)
}

/// Estimates for jobs of run times `runtimes` (cut to `m.max` first, as
/// the model does): the histogram for `runtimes.len()` jobs, assigned.
pub fn estimates(
    m: &EstimateModel,
    runtimes: &mut [u64],
    rng: &mut StreamRng,
) -> Result<Vec<u64>, String> {
    for r in runtimes.iter_mut() {
        *r = (*r).min(m.max);
    }
    let hist = histogram(m, runtimes.len() as u64, rng);
    assign(runtimes, &hist, rng).map_err(|k| {
        format!(
            "the estimate histogram cannot cover the run times (the {k}-th longest job has no \
             estimate left >= its run time)"
        )
    })
}

/// The estimates of the jobs of the Lublin–Feitelson workload `cfg`, by
/// job, with their run times cut to the maximal estimate: a first pass over
/// the jobs (the model needs every run time), then the model on the
/// estimates' own stream of the workload's seed.
pub(crate) fn lublin_estimates(cfg: &LublinConfig) -> Result<Vec<(u32, u32)>, ConfigError> {
    let plain = LublinConfig {
        requested: RequestedTimes::None,
        ..cfg.clone()
    };
    let mut runtimes: Vec<u64> = LublinGenerator::new(&plain)?
        .map(|r| r.run_time as u64)
        .collect();
    let mut rng = stream(cfg.seed, Stream::Estimates, 0);
    let est = estimates(&cfg.estimate_model(), &mut runtimes, &mut rng).map_err(|e| {
        ConfigError::new(
            "estimate_max",
            e,
            "a larger estimate_max or estimate_max_percent",
        )
    })?;
    Ok(est
        .iter()
        .zip(&runtimes)
        .map(|(&e, &r)| (e as u32, r as u32))
        .collect())
}

/// The SWF header note of a generated workload's requested times (none
/// for `requested = "none"`, so that the default output is unchanged).
pub(crate) fn header_note(cfg: &LublinConfig) -> Option<String> {
    match cfg.requested {
        RequestedTimes::None => None,
        RequestedTimes::Exact => Some("requested times: the run times".into()),
        RequestedTimes::Tsafrir05 => Some(format!(
            "requested times: Tsafrir-Etsion-Feitelson 2005 model, max estimate {} s, {}",
            cfg.estimate_max,
            cfg.estimate_max_percent
                .map_or("model share at max".into(), |p| format!("{p}% at max"))
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: u64 = 36_000;

    fn model(max: u64, max_percent: Option<f64>) -> EstimateModel {
        EstimateModel {
            max,
            max_percent,
            bins: BinCount::Linear,
        }
    }

    /// The published head-share fit, written out here: rank r in 2..=20.
    fn published_head(r: usize) -> f64 {
        14.0491 * (-0.177531 * r as f64).exp() + 0.462513
    }

    #[test]
    fn head_values_follow_the_published_rule() {
        for max in [MIN_MAX_ESTIMATE, 18_000, M, 64_800, 162_755] {
            let h = head_times(max);
            assert_eq!(h.len(), TOP, "{max}");
            assert_eq!(h[0], max);
            assert!(h[1..].windows(2).all(|w| w[0] < w[1]), "{h:?}");
            assert!(h[1..].iter().all(|&e| e < max));
            // every value popular in all four traces and below the maximum
            for e in [
                300, 600, 900, 1200, 1800, 3600, 7200, 10_800, 14_400, 18_000, 21_600, 28_800,
                36_000, 43_200, 64_800,
            ] {
                assert_eq!(h.contains(&e), e <= max, "{max}: {e}");
            }
            // the others are "round": multiples of 5 minutes
            assert!(h.iter().skip(1).all(|e| e % 300 == 0), "{h:?}");
        }
        // 18 h (CTC-SP2's maximum), by hand: the 14 joint values below it,
        // then 15 h (5 h step), 16 h, 14 h (2 h steps), 17 h, 13 h (1 h steps)
        let h = 3600;
        let mut want = vec![300, 600, 900, 1200, 1800];
        want.extend([1, 2, 3, 4, 5, 6, 8, 10, 12, 13, 14, 15, 16, 17].map(|x| x * h));
        assert_eq!(head_times(18 * h)[1..], want[..]);
        // below 96 minutes the rule yields fewer than 20 values
        assert!(head_times(3600).len() < TOP);
    }

    #[test]
    fn bin_count_follows_the_published_fits() {
        // linear through (10^4, 90), (7·10^4, 340), (2.5·10^5, 565)
        assert_eq!(bin_count(10_000, BinCount::Linear), 90);
        assert_eq!(bin_count(40_000, BinCount::Linear), 90 + 125);
        assert_eq!(bin_count(1_000_000, BinCount::Linear), 565);
        assert_eq!(bin_count(10, BinCount::Linear), 5);
        let p = (0.653566 * 100_000f64.powf(0.547761)).round() as usize;
        assert_eq!(bin_count(100_000, BinCount::Power), p);
    }

    /// Shares of the maximum, the other head values and the tail against
    /// the published fits (rank 1: the rest of 89 %).
    #[test]
    fn histogram_shares_follow_the_published_fits() {
        let n = 100_000u64;
        let mut rng = stream(3, Stream::Estimates, 0);
        let hist = histogram(&model(M, None), n, &mut rng);
        assert_eq!(hist.iter().map(|x| x.1).sum::<u64>(), n);
        // linear fit: 340 + 30000 * 225 / 180000 = 377.5 -> 378 values
        assert_eq!(hist.len(), 378);
        let head = head_times(M);
        let pct =
            |t: u64| 100.0 * hist.iter().find(|x| x.0 == t).map_or(0, |x| x.1) as f64 / n as f64;
        let rest: f64 = (2..=TOP).map(published_head).sum();
        assert!(
            (pct(M) - (89.0 - rest)).abs() < 0.05,
            "{} {}",
            pct(M),
            89.0 - rest
        );
        let mut others: Vec<f64> = head[1..].iter().map(|&t| pct(t)).collect();
        others.sort_by(|a, b| b.total_cmp(a));
        for (i, &got) in others.iter().enumerate() {
            let want = published_head(i + 2);
            assert!((got - want).abs() < 0.05, "rank {}: {got} {want}", i + 2);
        }
        let head_total: f64 = head.iter().map(|&t| pct(t)).sum();
        assert!((head_total - 89.0).abs() < 0.1, "{head_total}");
        // tail: shares proportional to rank^-2.267 (ranks 21..), 11 % in all
        let mut tail: Vec<u64> = hist
            .iter()
            .filter(|x| !head.contains(&x.0))
            .map(|x| x.1)
            .collect();
        tail.sort_by(|a, b| b.cmp(a));
        let norm: f64 = (0..tail.len())
            .map(|i| ((21 + i) as f64).powf(-2.267))
            .sum();
        for (i, &j) in tail.iter().take(10).enumerate() {
            let want = 11.0 * ((21 + i) as f64).powf(-2.267) / norm;
            let got = 100.0 * j as f64 / n as f64;
            assert!(
                (got - want).abs() < 0.02,
                "tail rank {}: {got} {want}",
                21 + i
            );
        }
        // tail times are whole minutes (± the collision offsets) below M
        assert!(hist.iter().all(|x| x.0 <= M && x.0 % 10 == 0));
    }

    #[test]
    fn max_percent_fixes_the_share_of_the_maximum() {
        let n = 50_000u64;
        for p in [5.0, 40.0] {
            let mut rng = stream(4, Stream::Estimates, 0);
            let hist = histogram(&model(M, Some(p)), n, &mut rng);
            assert_eq!(hist.iter().map(|x| x.1).sum::<u64>(), n);
            let at_max = hist.iter().find(|x| x.0 == M).unwrap().1;
            assert_eq!(at_max, (p * n as f64 / 100.0).round() as u64);
            let head = head_times(M);
            let head_jobs: u64 = hist
                .iter()
                .filter(|x| head.contains(&x.0))
                .map(|x| x.1)
                .sum();
            assert!((100.0 * head_jobs as f64 / n as f64 - 89.0).abs() < 0.1);
        }
    }

    /// With run times that admit every estimate, the assignment is a
    /// uniform shuffle: a given job's estimate is distributed as the
    /// histogram, so its accuracy 1/estimate is 1/M with the share of M.
    #[test]
    fn assignment_is_uniform_among_admissible_estimates() {
        let n = 200;
        let trials = 4000;
        let mut hits = 0;
        let mut share = 0.0;
        for seed in 0..trials {
            let mut rng = stream(seed, Stream::Estimates, 0);
            let hist = histogram(&model(M, None), n, &mut rng);
            share += hist.iter().find(|x| x.0 == M).unwrap().1 as f64 / n as f64;
            let est = assign(&vec![1; n as usize], &hist, &mut rng).unwrap();
            hits += (est[17] == M) as u32;
        }
        let p = share / trials as f64;
        let f = hits as f64 / trials as f64;
        let sigma = (p * (1.0 - p) / trials as f64).sqrt();
        assert!((f - p).abs() < 4.0 * sigma, "{f} {p} {sigma}");
        // a job as long as M can only take M
        let mut rng = stream(1, Stream::Estimates, 0);
        let hist = histogram(&model(M, None), n, &mut rng);
        let mut rt = vec![1u64; n as usize];
        rt[5] = M;
        assert_eq!(assign(&rt, &hist, &mut rng).unwrap()[5], M);
        // more jobs of length M than estimates M: the model fails
        let at_max = hist.iter().find(|x| x.0 == M).unwrap().1 as usize;
        let rt: Vec<u64> = (0..n as usize)
            .map(|i| if i <= at_max { M } else { 1 })
            .collect();
        assert_eq!(assign(&rt, &hist, &mut rng), Err(at_max + 1));
    }

    fn lublin(
        jobs: u64,
        requested: RequestedTimes,
        max: u64,
    ) -> Vec<crate::workloads::swf::SwfRecord> {
        let mut c = LublinConfig::for_machine(128);
        c.jobs = jobs;
        c.seed = 11;
        c.requested = requested;
        c.estimate_max = max;
        LublinGenerator::new(&c).unwrap().collect()
    }

    #[test]
    fn lublin_estimates_cover_run_times_and_take_only_the_model_values() {
        let n = 20_000;
        let plain = lublin(n, RequestedTimes::None, M);
        let exact = lublin(n, RequestedTimes::Exact, M);
        for max in [M, crate::workloads::lublin::DEFAULT_ESTIMATE_MAX] {
            let est = lublin(n, RequestedTimes::Tsafrir05, max);
            assert_eq!(est.len(), plain.len());
            let mut hist: BTreeMap<i64, u64> = BTreeMap::new();
            for ((e, p), x) in est.iter().zip(&plain).zip(&exact) {
                // same arrivals, sizes, types; run times cut at the maximum
                assert_eq!(
                    (e.submit_time, e.allocated_procs, e.queue),
                    (p.submit_time, p.allocated_procs, p.queue)
                );
                assert_eq!(e.run_time, p.run_time.min(max as i64));
                assert_eq!((p.requested_time, x.requested_time), (-1, p.run_time));
                assert!(e.requested_time >= e.run_time && e.requested_time <= max as i64);
                *hist.entry(e.requested_time).or_default() += 1;
            }
            // only the model's values: the head values and at most K - 20 more
            let head = head_times(max);
            let k = bin_count(n, BinCount::Linear);
            assert!(hist.len() <= k, "{} {k}", hist.len());
            assert!(head.iter().all(|t| hist.contains_key(&(*t as i64))));
            // the maximum is the most popular estimate, with the model's share
            let top = hist.iter().max_by_key(|x| x.1).unwrap();
            assert_eq!(*top.0, max as i64);
            let rest: f64 = (2..=TOP).map(published_head).sum();
            let share = 100.0 * *top.1 as f64 / n as f64;
            assert!((share - (89.0 - rest)).abs() < 0.05, "{share}");
            let head_jobs: u64 = head.iter().map(|t| hist[&(*t as i64)]).sum();
            assert!((100.0 * head_jobs as f64 / n as f64 - 89.0).abs() < 0.1);
        }
        // no run time reaches the default maximum: nothing is cut
        assert!(plain
            .iter()
            .all(|r| r.run_time <= crate::workloads::lublin::DEFAULT_ESTIMATE_MAX as i64));
    }

    #[test]
    fn estimates_have_their_own_stream_and_are_deterministic() {
        let a = lublin(3000, RequestedTimes::Tsafrir05, M);
        assert_eq!(a, lublin(3000, RequestedTimes::Tsafrir05, M));
        let mut c = LublinConfig::for_machine(128);
        c.jobs = 3000;
        c.seed = 12;
        c.requested = RequestedTimes::Tsafrir05;
        c.estimate_max = M;
        let b: Vec<_> = LublinGenerator::new(&c).unwrap().collect();
        assert_ne!(
            a.iter().map(|r| r.requested_time).collect::<Vec<_>>(),
            b.iter().map(|r| r.requested_time).collect::<Vec<_>>()
        );
    }

    #[test]
    fn keys_and_errors() {
        let mut c = LublinConfig::default();
        for (k, v) in [
            ("requested", "tsafrir05"),
            ("estimate_max", "36000"),
            ("estimate_max_percent", "30"),
            ("estimate_bins", "power"),
            ("procs", "256"),
        ] {
            let v = match v.parse::<i64>() {
                Ok(i) => parsched_core::Value::Int(i),
                Err(_) => parsched_core::Value::Str(v.into()),
            };
            c.set(k, &v).unwrap();
        }
        // procs keeps the other keys
        assert_eq!(c.requested, RequestedTimes::Tsafrir05);
        assert_eq!(
            (c.estimate_max, c.estimate_max_percent, c.estimate_bins),
            (M, Some(30.0), BinCount::Power)
        );
        c.validate().unwrap();
        c.set("estimate_max", &parsched_core::Value::Int(3600))
            .unwrap();
        assert_eq!(c.validate().unwrap_err().field, "estimate_max");
        c.estimate_max = M;
        c.set("estimate_max_percent", &parsched_core::Value::Float(95.0))
            .unwrap();
        assert_eq!(c.validate().unwrap_err().field, "estimate_max_percent");
        assert!(c
            .set("requested", &parsched_core::Value::Str("guess".into()))
            .is_err());
    }
}
