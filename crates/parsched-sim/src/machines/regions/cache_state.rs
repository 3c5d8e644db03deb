//! What a last-level cache holds: the footprint model or exact LRU.

use super::*;

pub(super) enum CacheState {
    /// Resident lines per region instance key, and the capacity in lines.
    Footprint {
        content: Vec<(u64, f64)>,
        lines: f64,
    },
    Lru(Box<LruCache>),
}

impl CacheState {
    /// `n` accesses to instance `key` of `region_lines` lines; returns misses.
    pub(super) fn touch(
        &mut self,
        key: u64,
        region_lines: u64,
        n: u64,
        base: u64,
        line: u64,
        rng: &mut StreamRng,
    ) -> f64 {
        match self {
            CacheState::Lru(c) => {
                let mut m = 0u64;
                for _ in 0..n {
                    let l = rng.random_range(0..region_lines);
                    if !c.access(base + l * line) {
                        m += 1;
                    }
                }
                m as f64
            }
            CacheState::Footprint { content, lines } => {
                let cap = *lines;
                // (see `sweep` for sequential touches: exact LRU only)
                let big_n = region_lines as f64;
                let i = match content.iter().position(|e| e.0 == key) {
                    Some(i) => i,
                    None => {
                        content.push((key, 0.0));
                        content.len() - 1
                    }
                };
                // Euler steps no longer than 1/8 of the smaller of N and C.
                let h_max = (big_n.min(cap) / 8.0).max(1.0);
                let steps = ((n as f64 / h_max).ceil() as u64).clamp(1, 1 << 16);
                let h = n as f64 / steps as f64;
                let mut misses = 0.0;
                for _ in 0..steps {
                    let x = content[i].1;
                    let m = h * (1.0 - x / big_n).max(0.0);
                    misses += m;
                    let total: f64 = content.iter().map(|e| e.1).sum();
                    let fill = m.min((cap - total).max(0.0));
                    let evict = m - fill;
                    if evict > 0.0 && total > 0.0 {
                        let f = (evict / total).min(1.0);
                        for e in content.iter_mut() {
                            e.1 -= e.1 * f;
                        }
                    }
                    content[i].1 = (content[i].1 + m).min(big_n).min(cap);
                }
                misses
            }
        }
    }
}

impl CacheState {
    /// `n` sequential accesses from line `from` of a region of
    /// `region_lines` lines (cyclic); exact LRU only (checked before).
    pub(super) fn sweep(
        &mut self,
        from: u64,
        region_lines: u64,
        n: u64,
        base: u64,
        line: u64,
    ) -> f64 {
        match self {
            CacheState::Lru(c) => {
                let mut m = 0u64;
                for k in 0..n {
                    if !c.access(base + ((from + k) % region_lines) * line) {
                        m += 1;
                    }
                }
                m as f64
            }
            CacheState::Footprint { .. } => unreachable!("sequential touches need the LRU model"),
        }
    }
}
