//! Region scheduling (seed 004), first increment: the closed-form gain map of
//! cache unification for memlat, from the footprint model of
//! [`parsched_core::cache`]. No engine yet: the simulated machine that slows
//! compute by the miss model comes in a later increment.
//!
//! memlat (§3.1) makes `a` ("access time") uniformly random accesses within
//! one region of S bytes, then `a` within the other, and so on.
//!
//! * Standard scheduler: the single thread stays on one cache (an
//!   assumption \[ext\]: Xen's credit scheduler may also migrate it, which
//!   only costs it more), so both regions share one last-level cache of C
//!   bytes; each visit starts with what the other region's visit left
//!   ([`memlat_shared_miss_ratio`]).
//! * Region scheduling (unification): each region is mapped to its own
//!   last-level cache and every visit begins with a micro-schedule (cost µ,
//!   the paper's §5.1 measurement); each region then keeps `min(C, S)` of its
//!   lines, missing `max(0, 1 − C/S)` ([`memlat_unified_miss_ratio`]).
//!   Unification is forced here (no fallback), as in the paper's Figure 9.
//!
//! Time of a pair of visits: `2a·hit + misses·miss` (+ `2µ` when unified),
//! where `hit` is the time of an access that hits the last-level cache
//! (latency plus the benchmark's loop) and `miss` the extra time of one that
//! goes to memory. Normalized performance = time under the standard
//! scheduler / time under region scheduling.

use parsched_core::cache::{memlat_shared_miss_ratio, memlat_unified_miss_ratio};
use parsched_core::topology::{Topology, MIB};
use serde::Serialize;

/// A machine's timing for the closed-form model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RegionTiming {
    pub machine: String,
    /// Capacity of one last-level cache (bytes) and its line size.
    pub cache_bytes: u64,
    pub line_bytes: u32,
    /// Time of an access that hits the last-level cache, ns.
    pub hit_ns: f64,
    /// Extra time of an access that misses it (memory), ns.
    pub miss_ns: f64,
    /// Cost of one micro-schedule, µs (paper §5.1).
    pub microschedule_us: f64,
}

impl RegionTiming {
    fn from_topology(machine: &str, t: &Topology, hit_ns: f64, miss_ns: f64, mu: f64) -> Self {
        let llc = t.cache(t.last_level_caches()[0]);
        RegionTiming {
            machine: machine.into(),
            cache_bytes: llc.size_bytes,
            line_bytes: llc.line_bytes,
            hit_ns,
            miss_ns,
            microschedule_us: mu,
        }
    }

    /// Clovertown (X5365, 3.00 GHz): 4 MB L2 per core pair; micro-schedule
    /// 15.86 µs (47,600 cycles, §5.1). Latencies \[ext\]: an L2 hit is about
    /// 14 cycles (4.7 ns) and memlat's loop (random index, load) about 10
    /// more, so 8 ns per hitting access; a miss adds about 100 ns (FSB and
    /// FB-DIMM memory of the 5000-series chipsets).
    pub fn clovertown() -> Self {
        RegionTiming::from_topology("clovertown", &Topology::clovertown(), 8.0, 100.0, 15.86)
    }

    /// Westmere (X5660, 2.80 GHz): 12 MB L3 per socket; micro-schedule
    /// 6.357 µs (17,800 cycles, §5.1). Latencies \[ext\]: an L3 hit is about
    /// 40–45 cycles (15 ns) plus the loop, 18 ns per hitting access; a miss
    /// to local DDR3 adds about 55 ns (≈ 70 ns load-to-use).
    pub fn westmere() -> Self {
        RegionTiming::from_topology("westmere", &Topology::westmere(), 18.0, 55.0, 6.357)
    }

    fn lines(&self, bytes: f64) -> f64 {
        bytes / self.line_bytes as f64
    }
}

/// One point of the gain map.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GainPoint {
    /// Total working set (both regions), bytes.
    pub wss_bytes: u64,
    /// Accesses per visit to a region.
    pub access_time: u64,
    /// Miss ratio per access, standard scheduler (both regions in one cache).
    pub miss_standard: f64,
    /// Miss ratio per access, unified (one region per cache).
    pub miss_unified: f64,
    /// Standard time / region-scheduling time.
    pub normalized_performance: f64,
    /// Micro-schedules per second of region scheduling.
    pub microschedules_per_s: f64,
}

/// memlat's normalized performance under forced unification.
pub fn memlat_gain(t: &RegionTiming, wss_bytes: u64, access_time: u64) -> GainPoint {
    let region = t.lines(wss_bytes as f64 / 2.0);
    let cache = t.lines(t.cache_bytes as f64);
    let a = access_time.max(1) as f64;
    let ms = memlat_shared_miss_ratio(region, cache, a);
    let mu = memlat_unified_miss_ratio(region, cache);
    retime(
        &GainPoint {
            wss_bytes,
            access_time,
            miss_standard: ms,
            miss_unified: mu,
            normalized_performance: f64::NAN,
            microschedules_per_s: f64::NAN,
        },
        t,
    )
}

/// The point's gain and micro-schedule rate under another timing (the miss
/// ratios depend only on the cache geometry, which `t` must share).
pub fn retime(p: &GainPoint, t: &RegionTiming) -> GainPoint {
    let a = p.access_time.max(1) as f64;
    // per visit, ns
    let std = a * (t.hit_ns + p.miss_standard * t.miss_ns);
    let reg = a * (t.hit_ns + p.miss_unified * t.miss_ns) + t.microschedule_us * 1e3;
    GainPoint {
        normalized_performance: std / reg,
        microschedules_per_s: 1e9 / reg,
        ..p.clone()
    }
}

/// Which of the paper's memlat statements (§3.1, §5.1, Figure 9) a timing
/// meets on a grid, from miss ratios computed once.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Statements {
    /// Largest gain on the grid.
    pub peak: f64,
    /// Largest gain at access time 2^12 (Condition 1: no benefit, <= 1).
    pub max_at_2_12: f64,
    /// Largest gain at access times >= 2^16 ("marginal" on Clovertown).
    pub max_from_2_16: f64,
    /// Micro-schedule rates (per s) over the points that gain.
    pub rates: (f64, f64),
}

pub fn statements(points: &[GainPoint], t: &RegionTiming) -> Statements {
    let g: Vec<GainPoint> = points.iter().map(|p| retime(p, t)).collect();
    let max = |f: &dyn Fn(&GainPoint) -> bool| {
        g.iter()
            .filter(|p| f(p))
            .map(|p| p.normalized_performance)
            .fold(0.0, f64::max)
    };
    let rates = g.iter().filter(|p| p.normalized_performance > 1.0).fold(
        (f64::INFINITY, 0.0f64),
        |(lo, hi), p| {
            (
                lo.min(p.microschedules_per_s),
                hi.max(p.microschedules_per_s),
            )
        },
    );
    Statements {
        peak: max(&|_| true),
        max_at_2_12: max(&|p| p.access_time == 1 << 12),
        max_from_2_16: max(&|p| p.access_time >= 1 << 16),
        rates,
    }
}

/// The gain map over working-set sizes × access times (row-major by size).
pub fn gain_grid(t: &RegionTiming, wss: &[u64], access: &[u64]) -> Vec<GainPoint> {
    wss.iter()
        .flat_map(|&w| access.iter().map(move |&a| memlat_gain(t, w, a)))
        .collect()
}

/// Figure 9's axes as used here (the paper gives no grid values): working
/// sets in MB and access times 2^8 … 2^20.
pub fn default_axes(machine: &str) -> (Vec<u64>, Vec<u64>) {
    let mb: &[u64] = if machine == "westmere" {
        &[4, 8, 12, 16, 20, 24, 32, 48]
    } else {
        &[2, 4, 5, 6, 8, 10, 12, 16, 24]
    };
    (
        mb.iter().map(|m| m * MIB).collect(),
        (4..=10).map(|k| 1u64 << (2 * k)).collect(),
    )
}

/// The largest miss time (ns) for which unification gains nowhere on the
/// grid's working sets at `access_time` (Condition 1 read as "no benefit at
/// this access time"): for each size, break-even is
/// `µ / (a (m_std − m_uni))`; the bound is their minimum over sizes that
/// exceed one cache.
pub fn condition1_miss_bound_ns(t: &RegionTiming, wss: &[u64], access_time: u64) -> f64 {
    wss.iter()
        .map(|&w| {
            let p = memlat_gain(t, w, access_time);
            let d = p.miss_standard - p.miss_unified;
            if d > 0.0 {
                t.microschedule_us * 1e3 / (access_time as f64 * d)
            } else {
                f64::INFINITY
            }
        })
        .fold(f64::INFINITY, f64::min)
}

/// The miss time (ns) at which the grid's largest normalized performance is
/// `target` (bisection; the largest gain rises with the miss time).
pub fn miss_ns_for_peak(t: &RegionTiming, wss: &[u64], access: &[u64], target: f64) -> f64 {
    let peak = |miss: f64| {
        let tt = RegionTiming {
            miss_ns: miss,
            ..t.clone()
        };
        gain_grid(&tt, wss, access)
            .iter()
            .map(|p| p.normalized_performance)
            .fold(0.0, f64::max)
    };
    let (mut lo, mut hi) = (0.0, 1e5);
    if peak(hi) < target {
        return f64::INFINITY;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if peak(mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timings_follow_the_topologies() {
        let c = RegionTiming::clovertown();
        assert_eq!((c.cache_bytes, c.microschedule_us), (4 * MIB, 15.86));
        let w = RegionTiming::westmere();
        assert_eq!((w.cache_bytes, w.microschedule_us), (12 * MIB, 6.357));
    }

    /// Figure 9's qualitative shape that the footprint model gives with the
    /// default timings: no gain when the working set fits one cache or at
    /// the shortest access time; a gain in the middle; Westmere's winning
    /// band wider (in MB) than Clovertown's.
    #[test]
    fn gain_map_shape() {
        for t in [RegionTiming::clovertown(), RegionTiming::westmere()] {
            let c = t.cache_bytes;
            for a in [1 << 8, 1 << 12, 1 << 16, 1 << 20] {
                // fits one cache: only the micro-schedule cost
                let p = memlat_gain(&t, c - MIB, a);
                assert!(p.normalized_performance < 1.0, "{p:?}");
                assert!(p.miss_standard < 1e-9 && p.miss_unified == 0.0);
            }
            // short visits: the micro-schedule dominates (up to 1.75 caches;
            // at exactly two Westmere caches 2^8 already gains 6%)
            for k in 1..=3 {
                let p = memlat_gain(&t, c + k * c / 4, 1 << 8);
                assert!(p.normalized_performance < 1.0, "{p:?}");
            }
            // between one and two caches, long enough visits gain
            let p = memlat_gain(&t, c * 3 / 2, 1 << 14);
            assert!(p.normalized_performance > 1.2, "{p:?}");
            // unification never misses more
            for p in gain_grid(&t, &default_axes(&t.machine).0, &default_axes(&t.machine).1) {
                assert!(p.miss_unified <= p.miss_standard + 1e-9, "{p:?}");
                assert!(p.microschedules_per_s > 0.0);
            }
        }
        // the winning band (gain > 1.05: past 2^20 the gain tends to 1 from
        // above as the standard scheduler's refill is amortized) in access
        // times 2^6 … 2^26 at 1.5 caches:
        // Westmere's cheaper micro-schedule lowers its lower edge and its
        // larger cache raises the upper one
        // Westmere's winning band spans more megabytes (its caches are
        // three times larger); in access times the default timings give
        // both machines the same band (see docs/policies/regions.md)
        let band_mb = |t: &RegionTiming| {
            (1..=128u64)
                .filter(|mb| memlat_gain(t, mb * MIB, 1 << 14).normalized_performance > 1.05)
                .count()
        };
        let (bc, bw) = (
            band_mb(&RegionTiming::clovertown()),
            band_mb(&RegionTiming::westmere()),
        );
        assert!(bw > bc, "westmere {bw} MB clovertown {bc} MB");
        // read in access times (at 1.5 caches, gain > 1.05) the two bands
        // coincide with the default timings: "Westmere's band is wider" is
        // not met that way (recorded here so that a change shows)
        assert_eq!(band_log2(&RegionTiming::clovertown()), (9, 23));
        assert_eq!(band_log2(&RegionTiming::westmere()), (9, 23));
    }

    fn band_log2(t: &RegionTiming) -> (u32, u32) {
        let k: Vec<u32> = (6..=26)
            .filter(|k| memlat_gain(t, t.cache_bytes * 3 / 2, 1 << k).normalized_performance > 1.05)
            .collect();
        (k[0], *k.last().unwrap())
    }

    /// The independent closed-form model finds a gain of 1.2–1.8 at
    /// 12 MB on the Clovertown-like machine.
    #[test]
    fn clovertown_12mb_agrees_with_the_independent_model() {
        let t = RegionTiming::clovertown();
        for k in [10, 12, 14] {
            let g = memlat_gain(&t, 12 * MIB, 1 << k).normalized_performance;
            assert!((1.2..=1.8).contains(&g), "2^{k}: {g}");
        }
    }

    /// The footprint model's miss ratios against the exact LRU simulator at
    /// the machines' real geometries (seeded; ±0.03 past warm-up).
    #[test]
    fn full_scale_points_match_the_exact_simulator() {
        use parsched_core::cache::LruCache;
        use rand::{Rng, SeedableRng};
        for (topo, wss, a, seed) in [
            (Topology::clovertown(), 12 * MIB, 1u64 << 12, 1u64),
            (Topology::clovertown(), 6 * MIB, 1 << 16, 2),
            (Topology::westmere(), 24 * MIB, 1 << 14, 3),
        ] {
            let llc = topo.cache(topo.last_level_caches()[0]).clone();
            let t = RegionTiming::from_topology("x", &topo, 1.0, 1.0, 1.0);
            let p = memlat_gain(&t, wss, a);
            let lines = wss / 2 / 64;
            let mut r = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut shared = LruCache::of(&llc).unwrap();
            let mut own = [LruCache::of(&llc).unwrap(), LruCache::of(&llc).unwrap()];
            let visits = (40 * lines / a).max(200);
            let (mut ms, mut mu, mut n) = (0u64, 0u64, 0u64);
            for v in 0..visits {
                let which = (v % 2) as usize;
                let (s0, u0) = (shared.misses(), own[which].misses());
                for _ in 0..a {
                    let addr = (which as u64 * lines + r.random_range(0..lines)) * 64;
                    shared.access(addr);
                    own[which].access(addr);
                }
                if v >= visits / 4 {
                    ms += shared.misses() - s0;
                    mu += own[which].misses() - u0;
                    n += a;
                }
            }
            let (es, eu) = (ms as f64 / n as f64, mu as f64 / n as f64);
            assert!(
                (es - p.miss_standard).abs() <= 0.03 && (eu - p.miss_unified).abs() <= 0.03,
                "{} MB 2^{}: exact {es:.4}/{eu:.4} model {:.4}/{:.4}",
                wss / MIB,
                a.trailing_zeros(),
                p.miss_standard,
                p.miss_unified
            );
            eprintln!(
                "{} MB 2^{}: exact {es:.4}/{eu:.4} footprint {:.4}/{:.4}",
                wss / MIB,
                a.trailing_zeros(),
                p.miss_standard,
                p.miss_unified
            );
        }
    }

    #[test]
    fn calibration_helpers_are_consistent() {
        let t = RegionTiming::clovertown();
        let (wss, acc) = default_axes("clovertown");
        let bound = condition1_miss_bound_ns(&t, &wss, 1 << 12);
        assert!(bound > 0.0 && bound.is_finite());
        // at the bound, nothing on the grid gains at 2^12
        let tb = RegionTiming {
            miss_ns: bound * 0.999,
            ..t.clone()
        };
        for &w in &wss {
            assert!(memlat_gain(&tb, w, 1 << 12).normalized_performance <= 1.0);
        }
        let m = miss_ns_for_peak(&t, &wss, &acc, 1.45);
        let tm = RegionTiming {
            miss_ns: m,
            ..t.clone()
        };
        let peak = gain_grid(&tm, &wss, &acc)
            .iter()
            .map(|p| p.normalized_performance)
            .fold(0.0, f64::max);
        assert!((peak - 1.45).abs() < 1e-6, "{peak}");
    }
}
