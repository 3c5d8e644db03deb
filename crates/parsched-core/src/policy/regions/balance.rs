//! Cache balancing, unification and partitioning (seed 004 §1, §2.1 with
//! Figure 2, §4, §5.2, §5.5).
//!
//! * **Balancing** ([`balance`]): "a simple greedy algorithm periodically
//!   balances cache usage" (§4); "the cache with a lower load being
//!   considered 'emptier' when regions are bin-packed into caches" (§2.1).
//!   Items (regions, or whole programs' working sets) are taken largest
//!   first (ties: lower id) and each goes to the emptiest cache — lowest
//!   load relative to capacity, so unequal caches are compared fairly (equal
//!   caches: lowest load); ties to the first cache. Two 4 MB and two 16 KB
//!   programs on two caches end up paired large-with-small (§5.2).
//! * **Unification** ([`unify`]): one program's regions spread over the
//!   caches by the same packing, so that a working set larger than one cache
//!   fits in their union (§3.1). Whether it pays is the fallback's question
//!   ([`super::fallback`]).
//! * **Partitioning** ([`partition`]): programs marked exclusive (the
//!   "preferred VM" of §5.5, or an isolated code, §5.6) get caches of their
//!   own — as many as their working set needs, at least one, largest
//!   program first, while a cache remains for the non-exclusive ones; an
//!   exclusive program left without a cache shares — and the others are
//!   balanced over the remaining caches (over all, if none remain).

use crate::error::PolicyError;
use crate::ids::CacheId;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// Something to place: a region or a program, with its working set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    pub id: u64,
    pub wss_bytes: u64,
}

/// A cache to place into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bin {
    pub cache: CacheId,
    pub capacity_bytes: u64,
}

/// The result of a packing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assignment {
    /// Each item's cache, in the order the items were given.
    pub placed: Vec<(u64, CacheId)>,
    /// Each bin's load (sum of its items' working sets), in bin order.
    pub loads: Vec<(CacheId, u64)>,
}

impl Assignment {
    /// The cache of item `id`.
    pub fn cache_of(&self, id: u64) -> Option<CacheId> {
        self.placed.iter().find(|(i, _)| *i == id).map(|&(_, c)| c)
    }

    /// The load of `cache`.
    pub fn load(&self, cache: CacheId) -> u64 {
        self.loads
            .iter()
            .find(|(c, _)| *c == cache)
            .map(|&(_, l)| l)
            .unwrap_or(0)
    }
}

fn check_bins(bins: &[Bin]) -> Result<(), PolicyError> {
    if bins.is_empty() {
        return Err(PolicyError(
            "cache balancing needs at least one cache".into(),
        ));
    }
    if let Some(b) = bins.iter().find(|b| b.capacity_bytes == 0) {
        return Err(PolicyError(format!("{} has capacity 0", b.cache)));
    }
    Ok(())
}

/// `a/ca` against `b/cb` without rounding.
fn cmp_fill(a: u64, ca: u64, b: u64, cb: u64) -> Ordering {
    (a as u128 * cb as u128).cmp(&(b as u128 * ca as u128))
}

/// Greedy bin packing of `items` into `bins` by load (see the module doc).
pub fn balance(items: &[Item], bins: &[Bin]) -> Result<Assignment, PolicyError> {
    check_bins(bins)?;
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&a, &b| {
        items[b]
            .wss_bytes
            .cmp(&items[a].wss_bytes)
            .then(items[a].id.cmp(&items[b].id))
    });
    let mut loads = vec![0u64; bins.len()];
    let mut placed = vec![CacheId(0); items.len()];
    for i in order {
        let mut best = 0;
        for j in 1..bins.len() {
            if cmp_fill(
                loads[j],
                bins[j].capacity_bytes,
                loads[best],
                bins[best].capacity_bytes,
            ) == Ordering::Less
            {
                best = j;
            }
        }
        loads[best] += items[i].wss_bytes;
        placed[i] = bins[best].cache;
    }
    Ok(Assignment {
        placed: items.iter().zip(placed).map(|(it, c)| (it.id, c)).collect(),
        loads: bins.iter().zip(loads).map(|(b, l)| (b.cache, l)).collect(),
    })
}

/// Unification: one program's regions spread over `bins` (the same greedy
/// packing). Also returns whether the working set fits the union of the
/// caches (Condition 3).
pub fn unify(regions: &[Item], bins: &[Bin]) -> Result<(Assignment, bool), PolicyError> {
    let a = balance(regions, bins)?;
    let total: u64 = regions.iter().map(|r| r.wss_bytes).sum();
    let cap: u64 = bins.iter().map(|b| b.capacity_bytes).sum();
    Ok((a, total <= cap))
}

/// A program to partition the caches for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionDemand {
    pub id: u64,
    pub wss_bytes: u64,
    /// Give this program caches of its own (isolation, or the preferred
    /// program of an unfair allocation).
    pub exclusive: bool,
}

/// Partition the caches among programs: each program's caches, in the
/// order the demands were given (see the module doc).
pub fn partition(
    demands: &[PartitionDemand],
    bins: &[Bin],
) -> Result<Vec<(u64, Vec<CacheId>)>, PolicyError> {
    check_bins(bins)?;
    let mut free: Vec<Bin> = bins.to_vec();
    let mut out: Vec<(u64, Vec<CacheId>)> = demands.iter().map(|d| (d.id, Vec::new())).collect();
    let mut excl: Vec<usize> = (0..demands.len())
        .filter(|&i| demands[i].exclusive)
        .collect();
    excl.sort_by(|&a, &b| {
        demands[b]
            .wss_bytes
            .cmp(&demands[a].wss_bytes)
            .then(demands[a].id.cmp(&demands[b].id))
    });
    let mut shared: Vec<usize> = (0..demands.len())
        .filter(|&i| !demands[i].exclusive)
        .collect();
    for &i in &excl {
        // Keep one cache for the shared programs, if any; larger exclusive
        // programs come first, and one left without a cache shares.
        let reserve = usize::from(!shared.is_empty());
        let avail = free.len().saturating_sub(reserve);
        if avail == 0 {
            shared.push(i);
            continue;
        }
        let mut need = 0;
        let mut got = 0u64;
        while need < avail && (need == 0 || got < demands[i].wss_bytes) {
            got += free[need].capacity_bytes;
            need += 1;
        }
        out[i].1 = free.drain(..need).map(|b| b.cache).collect();
    }
    if !shared.is_empty() {
        let pool = if free.is_empty() { bins.to_vec() } else { free };
        let items: Vec<Item> = shared
            .iter()
            .map(|&i| Item {
                id: i as u64,
                wss_bytes: demands[i].wss_bytes,
            })
            .collect();
        let a = balance(&items, &pool)?;
        for (k, c) in a.placed {
            out[k as usize].1 = vec![c];
        }
    }
    Ok(out)
}
