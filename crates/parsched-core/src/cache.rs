//! Cache miss models for region scheduling (seed 004). Pure functions and
//! data: no I/O, no clock.
//!
//! Two models, one exact and one fast:
//!
//! * [`LruCache`] — an **exact** LRU set-associative cache simulator (lines,
//!   sets, ways; sets indexed by line number modulo the number of sets, so
//!   Westmere's 12288 sets work). It takes a stream of byte addresses and
//!   counts hits and misses. Cost: O(ways) per access. Use it where
//!   exactness matters: to check the fast model, for short streams, for
//!   co-running programs whose access patterns are not uniform.
//! * The **footprint model** — closed forms for uniformly random accesses
//!   over regions, in expected resident lines:
//!   - [`steady_miss_ratio`]: a region of S bytes alone in C bytes of cache,
//!     past warm-up, misses `max(0, 1 − C/S)` (exact in expectation for a
//!     fully associative LRU cache under independent uniform references; a
//!     set-associative one differs only by how evenly the region's lines
//!     spread over the sets).
//!   - [`cold_misses`]: the warm-up, `N(1 − (1 − 1/N)^n)` distinct lines
//!     after n accesses (every first touch misses).
//!   - [`visit`]: one *visit* of n accesses to a region starting from a given
//!     cache content (own resident lines, other lines, empty lines), the
//!     building block of memlat's alternation (see its phases there).
//!   - [`memlat_shared_miss_ratio`] / [`memlat_unified_miss_ratio`]: memlat's
//!     steady miss ratio with both regions in one cache (the standard
//!     scheduler keeps the thread on one cache) and with each region alone
//!     in its own cache (unification).
//!   - [`che_miss_ratios`]: several regions accessed concurrently at given
//!     rates share one cache (Che's characteristic-time approximation; exact
//!     for one region) — for co-running programs (balancing).
//!
//!   Cost: O(1) per visit (O(log) for Che). Use it in the simulated machine
//!   to slow compute and in closed-form gain maps, where simulating every
//!   access would cost ~10^8 accesses per run.
//!
//! The tests drive the exact simulator with seeded random streams and check
//! the footprint model within ±0.03 absolute miss ratio (see
//! `docs/policies/regions.md`).

use crate::error::ConfigError;
use crate::topology::CacheDomain;

const EMPTY: u64 = u64::MAX;

/// An exact LRU set-associative cache.
#[derive(Debug, Clone)]
pub struct LruCache {
    sets: u64,
    ways: usize,
    line_shift: u32,
    /// `sets × ways` line numbers; each set's slice is ordered most recently
    /// used first; `EMPTY` marks a free way.
    tags: Vec<u64>,
    hits: u64,
    misses: u64,
}

impl LruCache {
    /// A cache of `size_bytes` with `ways`-way sets of `line_bytes` lines.
    pub fn new(size_bytes: u64, ways: u32, line_bytes: u32) -> Result<LruCache, ConfigError> {
        let c = CacheDomain {
            level: 1,
            size_bytes,
            ways,
            line_bytes,
            procs: vec![crate::ids::ProcId(0)],
        };
        LruCache::of(&c)
    }

    /// A simulator with the geometry of a topology's cache.
    pub fn of(c: &CacheDomain) -> Result<LruCache, ConfigError> {
        let set_bytes = c.line_bytes as u64 * c.ways as u64;
        if c.line_bytes == 0 || !c.line_bytes.is_power_of_two() {
            return Err(ConfigError::new(
                "line_bytes",
                format!("{}", c.line_bytes),
                "a power of two",
            ));
        }
        if c.ways == 0 || c.size_bytes == 0 || !c.size_bytes.is_multiple_of(set_bytes) {
            return Err(ConfigError::new(
                "size_bytes",
                format!(
                    "{} with {} ways of {}-byte lines",
                    c.size_bytes, c.ways, c.line_bytes
                ),
                "a positive multiple of ways × line bytes",
            ));
        }
        let sets = c.size_bytes / set_bytes;
        Ok(LruCache {
            sets,
            ways: c.ways as usize,
            line_shift: c.line_bytes.trailing_zeros(),
            tags: vec![EMPTY; (sets * c.ways as u64) as usize],
            hits: 0,
            misses: 0,
        })
    }

    /// A fully associative LRU cache of `lines` lines.
    pub fn fully_associative(lines: u32, line_bytes: u32) -> Result<LruCache, ConfigError> {
        LruCache::new(lines as u64 * line_bytes as u64, lines, line_bytes)
    }

    /// Accesses the byte at `addr`; true on a hit.
    #[inline]
    pub fn access(&mut self, addr: u64) -> bool {
        let line = addr >> self.line_shift;
        let set = (line % self.sets) as usize;
        let s = &mut self.tags[set * self.ways..(set + 1) * self.ways];
        match s.iter().position(|&t| t == line) {
            Some(pos) => {
                s[..=pos].rotate_right(1);
                self.hits += 1;
                true
            }
            None => {
                s.rotate_right(1);
                s[0] = line;
                self.misses += 1;
                false
            }
        }
    }

    pub fn hits(&self) -> u64 {
        self.hits
    }

    pub fn misses(&self) -> u64 {
        self.misses
    }

    /// Zeroes the hit and miss counts (the content stays).
    pub fn reset_counts(&mut self) {
        self.hits = 0;
        self.misses = 0;
    }

    /// Empties the cache (counts stay).
    pub fn flush(&mut self) {
        self.tags.fill(EMPTY);
    }

    /// Lines currently resident whose byte addresses fall in `[lo, hi)`.
    pub fn resident_in(&self, lo: u64, hi: u64) -> u64 {
        let (lo, hi) = (lo >> self.line_shift, hi.div_ceil(1 << self.line_shift));
        self.tags
            .iter()
            .filter(|&&t| t != EMPTY && t >= lo && t < hi)
            .count() as u64
    }

    pub fn lines(&self) -> u64 {
        self.sets * self.ways as u64
    }
}

/// Steady miss ratio of uniformly random accesses over `region_bytes` alone
/// in `cache_bytes` of (LRU or random-replacement) cache, past warm-up:
/// `max(0, 1 − C/S)`. `cache_bytes` is the effective share: what the region
/// may occupy (the whole cache when alone, less when other footprints hold
/// part of it).
pub fn steady_miss_ratio(region_bytes: f64, cache_bytes: f64) -> f64 {
    if region_bytes <= 0.0 {
        return 0.0;
    }
    (1.0 - cache_bytes / region_bytes).clamp(0.0, 1.0)
}

/// Expected distinct lines touched (= cold misses, in a cache large enough)
/// by `n` uniformly random accesses over `region_lines` lines:
/// `N(1 − (1 − 1/N)^n)`.
pub fn cold_misses(n: f64, region_lines: f64) -> f64 {
    if region_lines <= 0.0 {
        return 0.0;
    }
    region_lines * (1.0 - q_pow(region_lines, n))
}

/// `(1 − 1/N)^n`, stable for large N.
fn q_pow(n_lines: f64, n: f64) -> f64 {
    if n_lines <= 1.0 {
        return if n > 0.0 { 0.0 } else { 1.0 };
    }
    (n * (-1.0 / n_lines).ln_1p()).exp()
}

/// Accesses needed for `(1 − 1/N)^n` to fall from 1 to `ratio` (in (0, 1]).
fn q_log(n_lines: f64, ratio: f64) -> f64 {
    if n_lines <= 1.0 {
        return if ratio >= 1.0 { 0.0 } else { 1.0 };
    }
    ratio.ln() / (-1.0 / n_lines).ln_1p()
}

/// A cache's content as the footprint model sees it, in (expected) lines,
/// at the start of a visit to a region: the region's own resident lines
/// (all older than every other line — they were last touched before the
/// others), the other lines, and empty lines; `own + others + empty` is the
/// cache's line count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Content {
    pub own: f64,
    pub others: f64,
    pub empty: f64,
}

/// The outcome of a [`visit`]: expected misses and the content at its end
/// (own lines are then the most recent).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VisitEnd {
    pub misses: f64,
    pub content: Content,
}

/// One visit of `n` uniformly random accesses to a region of `region_lines`
/// lines, in an LRU cache holding `start` (the footprint model, in expected
/// lines). The phases, each in closed form:
///
/// 0. While empty lines remain, misses fill them; the region's resident
///    count x grows, `x(n) = N − (N − x0)(1 − 1/N)^n`.
/// 1. Then the LRU victims are the region's own *remnant* lines (resident
///    from its previous visit and not yet touched in this one: they are the
///    oldest). Each miss replaces a remnant by a fresh line, so x stays
///    constant and the miss ratio is `1 − x/N` until the remnants are gone.
/// 2. Then misses evict the other lines: x grows again as in phase 0.
/// 3. Once the region holds the whole cache (`x = K < N`), the miss ratio
///    is `1 − K/N` (the steady state of [`steady_miss_ratio`]).
///
/// With `x = N` (the region fits and is all resident) there are no more
/// misses. The model replaces each set's random fill by its mean; the tests
/// bound the error against [`LruCache`].
pub fn visit(n: f64, region_lines: f64, start: Content) -> VisitEnd {
    let big_n = region_lines;
    let (mut x, mut others, mut empty) = (start.own, start.others, start.empty);
    let mut remnant = x; // own lines not yet touched in this visit
    let mut left = n;
    let mut misses = 0.0;
    // Phase 0: fill empty lines (remnants are converted by hits only).
    if empty > 0.0 && left > 0.0 && x < big_n {
        let need = empty.min(big_n - x);
        // steps until x has grown by `need`
        let ratio = (big_n - x - need) / (big_n - x);
        let steps = if ratio <= 0.0 {
            f64::INFINITY
        } else {
            q_log(big_n, ratio)
        };
        let s = steps.min(left);
        let q = q_pow(big_n, s);
        let grown = (big_n - x) * (1.0 - q);
        misses += grown;
        remnant *= q;
        x += grown;
        empty -= grown;
        left -= s;
        if steps > s {
            return VisitEnd {
                misses,
                content: Content {
                    own: x,
                    others,
                    empty: empty.max(0.0),
                },
            };
        }
        empty = empty.max(0.0);
    }
    if x >= big_n - 1e-9 || left <= 0.0 {
        return VisitEnd {
            misses,
            content: Content {
                own: x,
                others,
                empty,
            },
        };
    }
    // Phase 1: misses evict remnants; x constant, miss ratio m = 1 − x/N.
    if remnant > 0.0 {
        let gap = big_n - x; // (r + gap) shrinks by (1 − 1/N) per access
        let steps = q_log(big_n, gap / (remnant + gap));
        let s = steps.min(left);
        misses += s * gap / big_n;
        left -= s;
        if left <= 0.0 {
            return VisitEnd {
                misses,
                content: Content {
                    own: x,
                    others,
                    empty,
                },
            };
        }
    }
    // Phase 2: misses evict the other lines; x grows.
    if others > 0.0 {
        let ratio = (big_n - x - others) / (big_n - x);
        let steps = if ratio <= 0.0 {
            f64::INFINITY
        } else {
            q_log(big_n, ratio)
        };
        let s = steps.min(left);
        let grown = (big_n - x) * (1.0 - q_pow(big_n, s));
        misses += grown;
        x += grown;
        others = (others - grown).max(0.0);
        left -= s;
        if left <= 0.0 || steps > s {
            return VisitEnd {
                misses,
                content: Content {
                    own: x,
                    others,
                    empty,
                },
            };
        }
    }
    // Phase 3: the region holds the whole cache.
    misses += left * (1.0 - x / big_n).max(0.0);
    VisitEnd {
        misses,
        content: Content {
            own: x,
            others,
            empty,
        },
    }
}

/// memlat with both regions (`region_lines` each) in one cache of
/// `cache_lines` (the standard scheduler keeps the thread on one cache):
/// the steady miss ratio per access when each visit makes `accesses`
/// accesses, from a fixed point of alternating [`visit`]s (at the end of
/// one region's visit the other region's lines are the "others").
pub fn memlat_shared_miss_ratio(region_lines: f64, cache_lines: f64, accesses: f64) -> f64 {
    let mut c = Content {
        own: 0.0,
        others: 0.0,
        empty: cache_lines,
    };
    // iterate pairs of visits (A then B) until the pair's misses settle
    let mut last = f64::NAN;
    let mut ratio = 0.0;
    for _ in 0..200_000 {
        let mut pair = 0.0;
        for _ in 0..2 {
            let end = visit(accesses, region_lines, c);
            // the next visit is to the other region: swap roles
            c = Content {
                own: end.content.others,
                others: end.content.own,
                empty: end.content.empty,
            };
            pair += end.misses;
        }
        ratio = pair / (2.0 * accesses.max(1.0));
        if (ratio - last).abs() < 1e-12 {
            break;
        }
        last = ratio;
    }
    ratio.clamp(0.0, 1.0)
}

/// memlat unified: each region alone in its own cache of `cache_lines`
/// (region scheduling maps one region per cache and micro-schedules): past
/// warm-up the region keeps `min(K, N)` lines between visits, so the miss
/// ratio is [`steady_miss_ratio`] whatever the access time.
pub fn memlat_unified_miss_ratio(region_lines: f64, cache_lines: f64) -> f64 {
    steady_miss_ratio(region_lines, cache_lines)
}

/// Che's approximation: regions of `lines[i]` lines accessed uniformly at
/// random, interleaved at relative rates `rates[i]`, sharing an LRU cache of
/// `cache_lines`. Returns each region's miss ratio `exp(−λ_i T / N_i)`, where
/// the characteristic time T solves `Σ N_i (1 − exp(−λ_i T / N_i)) = K`
/// (bisection). For one region this is `max(0, 1 − K/N)` exactly.
pub fn che_miss_ratios(cache_lines: f64, lines: &[f64], rates: &[f64]) -> Vec<f64> {
    assert_eq!(lines.len(), rates.len(), "one rate per region");
    let total: f64 = lines.iter().sum();
    if total <= cache_lines {
        return vec![0.0; lines.len()];
    }
    let occupied = |t: f64| -> f64 {
        lines
            .iter()
            .zip(rates)
            .map(|(&n, &r)| {
                if n > 0.0 {
                    n * (1.0 - (-r * t / n).exp())
                } else {
                    0.0
                }
            })
            .sum()
    };
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while occupied(hi) < cache_lines {
        hi *= 2.0;
        if hi > 1e300 {
            break;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if occupied(mid) < cache_lines {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let t = 0.5 * (lo + hi);
    lines
        .iter()
        .zip(rates)
        .map(|(&n, &r)| if n > 0.0 { (-r * t / n).exp() } else { 0.0 })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    const LINE: u64 = 64;
    /// Tolerance of the footprint model against the exact simulator, in
    /// absolute miss ratio.
    const TOL: f64 = 0.03;

    fn rng(seed: u64) -> Xoshiro256PlusPlus {
        Xoshiro256PlusPlus::seed_from_u64(seed)
    }

    /// Uniform accesses over `[base, base + lines·64)`; returns misses.
    fn drive(c: &mut LruCache, r: &mut Xoshiro256PlusPlus, base: u64, lines: u64, n: u64) -> u64 {
        let m0 = c.misses();
        for _ in 0..n {
            c.access(base + r.random_range(0..lines) * LINE);
        }
        c.misses() - m0
    }

    #[test]
    fn lru_basics() {
        // 2 sets × 2 ways of 64-byte lines
        let mut c = LruCache::new(256, 2, 64).unwrap();
        assert_eq!(c.lines(), 4);
        // lines 0, 2, 4 all map to set 0: the third evicts the first
        assert!(!c.access(0));
        assert!(!c.access(128));
        assert!(c.access(10)); // line 0 again, now MRU
        assert!(!c.access(256)); // evicts line 2 (LRU)
        assert!(c.access(0));
        assert!(!c.access(128));
        assert_eq!((c.hits(), c.misses()), (2, 4));
        assert_eq!(c.resident_in(0, 1024), 2);
        c.flush();
        assert_eq!(c.resident_in(0, u64::MAX), 0);
        assert!(LruCache::new(1000, 2, 64).is_err());
        assert!(LruCache::new(1024, 2, 48).is_err());
    }

    #[test]
    fn westmere_l3_geometry_simulates() {
        let t = crate::topology::Topology::westmere();
        let l3 = t.cache(t.last_level_caches()[0]);
        let mut c = LruCache::of(l3).unwrap();
        assert_eq!(c.lines(), 12 * 16384);
        let mut r = rng(4);
        // 6 MB region fits: past warm-up no misses
        let lines = 6 * 16384;
        drive(&mut c, &mut r, 0, lines, 2_000_000);
        assert_eq!(drive(&mut c, &mut r, 0, lines, 200_000), 0);
    }

    /// One region alone, past warm-up: exact LRU vs `max(0, 1 − C/S)`.
    #[test]
    fn steady_miss_ratio_matches_exact_lru() {
        // cache 256 KB, 16-way (4096 lines, 256 sets)
        let cache_bytes = 256 * 1024;
        for (i, &region_kb) in [128u64, 256, 320, 384, 512, 1024, 2048].iter().enumerate() {
            let mut c = LruCache::new(cache_bytes, 16, 64).unwrap();
            let mut r = rng(100 + i as u64);
            let lines = region_kb * 1024 / LINE;
            drive(&mut c, &mut r, 0, lines, 20 * lines.max(4096));
            let n = 400_000;
            let exact = drive(&mut c, &mut r, 0, lines, n) as f64 / n as f64;
            let model = steady_miss_ratio((region_kb * 1024) as f64, cache_bytes as f64);
            eprintln!("steady {region_kb} KB in 256 KB: exact {exact:.4} model {model:.4}");
            assert!(
                (exact - model).abs() <= TOL,
                "{region_kb} KB: exact {exact:.4} model {model:.4}"
            );
        }
    }

    /// Warm-up from an empty cache: cumulative misses after n accesses.
    #[test]
    fn warm_up_matches_exact_lru() {
        let cache_lines = 4096.0;
        for (i, &lines) in [2048u64, 4096, 8192].iter().enumerate() {
            let mut c = LruCache::new(4096 * 64, 16, 64).unwrap();
            let mut r = rng(200 + i as u64);
            let mut done = 0u64;
            let mut exact = 0u64;
            for n in [1000u64, 4000, 16_000, 64_000] {
                exact += drive(&mut c, &mut r, 0, lines, n - done);
                done = n;
                let model = visit(
                    n as f64,
                    lines as f64,
                    Content {
                        own: 0.0,
                        others: 0.0,
                        empty: cache_lines,
                    },
                )
                .misses;
                if lines as f64 <= cache_lines {
                    assert!((model - cold_misses(n as f64, lines as f64)).abs() < 1e-6);
                }
                let err = (exact as f64 - model).abs() / n as f64;
                eprintln!("warm-up {lines} lines n={n}: |exact − model|/n = {err:.4}");
                assert!(
                    err <= TOL,
                    "{lines} lines, n={n}: exact {exact} model {model:.0}"
                );
            }
        }
    }

    /// memlat on one cache (the standard scheduler) and unified over two:
    /// the exact simulator against the footprint model, per access time.
    #[test]
    fn memlat_models_match_exact_lru() {
        // a 512 KB 16-way cache (8192 lines); regions of 384 KB..1.5 MB
        let (cache_bytes, cache_lines) = (512 * 1024u64, 8192.0);
        let mut worst: f64 = 0.0;
        for (i, &region_kb) in [192u64, 256, 384, 512, 768, 1536].iter().enumerate() {
            let lines = region_kb * 1024 / LINE;
            for (j, &a) in [256u64, 2048, 16_384, 131_072].iter().enumerate() {
                let mut r = rng(1000 + 10 * i as u64 + j as u64);
                let mut shared = LruCache::new(cache_bytes, 16, 64).unwrap();
                let mut c0 = LruCache::new(cache_bytes, 16, 64).unwrap();
                let mut c1 = LruCache::new(cache_bytes, 16, 64).unwrap();
                let base_b = lines * LINE;
                // past warm-up: the first quarter of the visits makes at
                // least 10 N accesses to each region
                let visits = (80 * lines / a).max(400);
                let warm = visits / 4;
                let (mut ms, mut mu, mut n) = (0u64, 0u64, 0u64);
                for v in 0..visits {
                    let base = if v % 2 == 0 { 0 } else { base_b };
                    let u = if v % 2 == 0 { &mut c0 } else { &mut c1 };
                    let m_s0 = shared.misses();
                    let m_u0 = u.misses();
                    for _ in 0..a {
                        let addr = base + r.random_range(0..lines) * LINE;
                        shared.access(addr);
                        u.access(addr);
                    }
                    if v >= warm {
                        ms += shared.misses() - m_s0;
                        mu += u.misses() - m_u0;
                        n += a;
                    }
                }
                let (es, eu) = (ms as f64 / n as f64, mu as f64 / n as f64);
                let fs = memlat_shared_miss_ratio(lines as f64, cache_lines, a as f64);
                let fu = memlat_unified_miss_ratio(lines as f64, cache_lines);
                worst = worst.max((es - fs).abs()).max((eu - fu).abs());
                assert!(
                    (es - fs).abs() <= TOL,
                    "shared {region_kb} KB a={a}: exact {es:.4} model {fs:.4}"
                );
                assert!(
                    (eu - fu).abs() <= TOL,
                    "unified {region_kb} KB a={a}: exact {eu:.4} model {fu:.4}"
                );
            }
        }
        eprintln!("memlat: worst |exact − footprint| = {worst:.4}");
    }

    /// Two regions interleaved at random in one cache: Che vs exact.
    #[test]
    fn che_matches_exact_lru_for_interleaved_regions() {
        let cache_lines = 4096.0;
        for (i, &(n0, n1, share0)) in [
            (4096u64, 256u64, 0.5f64),
            (4096, 4096, 0.5),
            (8192, 1024, 0.8),
            (2048, 6144, 0.3),
        ]
        .iter()
        .enumerate()
        {
            let mut c = LruCache::new(4096 * 64, 16, 64).unwrap();
            let mut r = rng(300 + i as u64);
            let (mut m, mut k) = ([0u64; 2], [0u64; 2]);
            for step in 0..1_200_000u64 {
                let which = usize::from(r.random::<f64>() >= share0);
                let (base, lines) = if which == 0 { (0, n0) } else { (n0 * LINE, n1) };
                let hit = c.access(base + r.random_range(0..lines) * LINE);
                if step >= 200_000 {
                    k[which] += 1;
                    m[which] += u64::from(!hit);
                }
            }
            let model = che_miss_ratios(
                cache_lines,
                &[n0 as f64, n1 as f64],
                &[share0, 1.0 - share0],
            );
            for w in 0..2 {
                let exact = m[w] as f64 / k[w] as f64;
                eprintln!(
                    "che case {i} region {w}: exact {exact:.4} che {:.4}",
                    model[w]
                );
                assert!(
                    (exact - model[w]).abs() <= TOL,
                    "case {i} region {w}: exact {exact:.4} che {:.4}",
                    model[w]
                );
            }
        }
        // one region: Che is 1 − K/N
        let one = che_miss_ratios(1000.0, &[4000.0], &[1.0])[0];
        assert!((one - 0.75).abs() < 1e-9);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// Miss ratios stay in [0, 1] and never rise with the cache size.
        #[test]
        fn footprint_ratios_bounded_and_monotone(
            region in 1.0f64..1e5, k1 in 1.0f64..1e5, dk in 0.0f64..1e5, a in 1.0f64..1e6,
        ) {
            let k2 = k1 + dk;
            for (m1, m2) in [
                (steady_miss_ratio(region, k1), steady_miss_ratio(region, k2)),
                (memlat_shared_miss_ratio(region, k1, a), memlat_shared_miss_ratio(region, k2, a)),
                (che_miss_ratios(k1, &[region, 100.0], &[0.7, 0.3])[0],
                 che_miss_ratios(k2, &[region, 100.0], &[0.7, 0.3])[0]),
            ] {
                proptest::prop_assert!((0.0..=1.0).contains(&m1) && (0.0..=1.0).contains(&m2));
                proptest::prop_assert!(m2 <= m1 + 1e-9, "{} then {}", m1, m2);
            }
            // sharing never beats having the cache to oneself
            proptest::prop_assert!(
                memlat_shared_miss_ratio(region, k1, a) + 1e-9 >= memlat_unified_miss_ratio(region, k1)
            );
        }

        /// LRU inclusion: on the same stream a larger fully associative LRU
        /// cache hits wherever a smaller one does (so never misses more).
        #[test]
        fn lru_inclusion(
            stream in proptest::collection::vec(0u64..64, 1..400),
            k1 in 1u32..24, dk in 0u32..24,
        ) {
            let mut small = LruCache::fully_associative(k1, 64).unwrap();
            let mut large = LruCache::fully_associative(k1 + dk, 64).unwrap();
            for &l in &stream {
                let (hs, hl) = (small.access(l * 64), large.access(l * 64));
                proptest::prop_assert!(!hs || hl);
            }
            proptest::prop_assert!(large.misses() <= small.misses());
        }

        /// The exact simulator's counts add up and its miss ratio is in [0, 1].
        #[test]
        fn exact_miss_ratio_bounded(seed in 0u64..1000, lines in 1u64..3000) {
            let mut r = rng(seed);
            let mut c = LruCache::new(64 * 64, 4, 64).unwrap();
            let m = drive(&mut c, &mut r, 0, lines, 2000);
            proptest::prop_assert!(m <= 2000 && c.hits() + c.misses() == 2000);
        }
    }
}
