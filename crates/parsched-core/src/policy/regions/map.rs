//! The region map (seed 004 §2.1–2.2): each region is mapped to exactly one
//! cache (a *local* region), to every cache (*global*: code, stack, shared
//! pages, §3.4) or to none yet (*unmapped*: a seed or regular region not yet
//! allocated, §3.3). A cache's *load* is the sum of the working-set
//! estimates of the regions mapped to it (§4: "we define cache load as the
//! sum of the dynamic sizes of mapped regions").
//!
//! Open choice: global regions are *not* counted in any cache's load (they
//! are duplicated in every cache and not subject to balancing); their total
//! is [`RegionMap::global_bytes`].
//!
//! A [`Mapping`] is one value per region, so "mapped to at most one cache
//! unless global" holds by construction; the loads are kept incrementally and
//! checked against a recomputation by property tests.

use crate::error::PolicyError;
use crate::ids::{CacheId, RegionId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where a region is mapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "cache")]
pub enum Mapping {
    /// Not mapped to any cache: the first touch opens it where it happens.
    Unmapped,
    /// Mapped to this one cache; other caches' processors fault on a touch.
    Local(CacheId),
    /// Mapped to every cache; never causes a page touch.
    Global,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    mapping: Mapping,
    wss_bytes: u64,
}

/// Regions, their mappings and working-set estimates, and the cache loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionMap {
    caches: Vec<CacheId>,
    regions: BTreeMap<RegionId, Entry>,
    loads: Vec<u64>,
    global_bytes: u64,
}

impl RegionMap {
    /// An empty map over `caches` (usually `Topology::last_level_caches()`).
    pub fn new(caches: Vec<CacheId>) -> RegionMap {
        let n = caches.len();
        RegionMap {
            caches,
            regions: BTreeMap::new(),
            loads: vec![0; n],
            global_bytes: 0,
        }
    }

    /// The caches regions may be mapped to, in order.
    pub fn caches(&self) -> &[CacheId] {
        &self.caches
    }

    fn slot(&self, cache: CacheId) -> Result<usize, PolicyError> {
        self.caches
            .iter()
            .position(|&c| c == cache)
            .ok_or_else(|| PolicyError(format!("{cache} is not one of the region map's caches")))
    }

    fn entry(&self, region: RegionId) -> Result<Entry, PolicyError> {
        self.regions
            .get(&region)
            .copied()
            .ok_or_else(|| PolicyError(format!("{region} is not in the region map")))
    }

    fn charge(&mut self, e: Entry, sign: i8) {
        let add = |x: &mut u64| {
            if sign > 0 {
                *x += e.wss_bytes
            } else {
                *x -= e.wss_bytes
            }
        };
        match e.mapping {
            Mapping::Unmapped => {}
            Mapping::Global => add(&mut self.global_bytes),
            Mapping::Local(c) => {
                let i = self.slot(c).expect("mapped caches are checked on entry");
                add(&mut self.loads[i]);
            }
        }
    }

    /// Add an unmapped region (or reset the estimate of an existing one,
    /// keeping its mapping).
    pub fn insert(&mut self, region: RegionId, wss_bytes: u64) {
        if self.regions.contains_key(&region) {
            self.set_wss(region, wss_bytes).expect("present");
            return;
        }
        self.regions.insert(
            region,
            Entry {
                mapping: Mapping::Unmapped,
                wss_bytes,
            },
        );
    }

    /// Remove a region (a torn-down or freed region); returns its mapping.
    pub fn remove(&mut self, region: RegionId) -> Option<Mapping> {
        let e = self.regions.remove(&region)?;
        self.charge(e, -1);
        Some(e.mapping)
    }

    /// Change a region's mapping.
    pub fn set_mapping(&mut self, region: RegionId, mapping: Mapping) -> Result<(), PolicyError> {
        let old = self.entry(region)?;
        if let Mapping::Local(c) = mapping {
            self.slot(c)?;
        }
        self.charge(old, -1);
        let new = Entry { mapping, ..old };
        self.charge(new, 1);
        self.regions.insert(region, new);
        Ok(())
    }

    /// Map `region` to `cache` (and only there).
    pub fn map_to(&mut self, region: RegionId, cache: CacheId) -> Result<(), PolicyError> {
        self.set_mapping(region, Mapping::Local(cache))
    }

    /// Make `region` global (mapped everywhere).
    pub fn make_global(&mut self, region: RegionId) -> Result<(), PolicyError> {
        self.set_mapping(region, Mapping::Global)
    }

    /// Unmap `region`.
    pub fn unmap(&mut self, region: RegionId) -> Result<(), PolicyError> {
        self.set_mapping(region, Mapping::Unmapped)
    }

    /// Update a region's working-set estimate (its cache's load follows).
    pub fn set_wss(&mut self, region: RegionId, wss_bytes: u64) -> Result<(), PolicyError> {
        let old = self.entry(region)?;
        self.charge(old, -1);
        let new = Entry { wss_bytes, ..old };
        self.charge(new, 1);
        self.regions.insert(region, new);
        Ok(())
    }

    pub fn contains(&self, region: RegionId) -> bool {
        self.regions.contains_key(&region)
    }

    pub fn mapping(&self, region: RegionId) -> Option<Mapping> {
        self.regions.get(&region).map(|e| e.mapping)
    }

    pub fn wss(&self, region: RegionId) -> Option<u64> {
        self.regions.get(&region).map(|e| e.wss_bytes)
    }

    /// The load of `cache`: the sum of its local regions' estimates (0 for a
    /// cache not in the map).
    pub fn load(&self, cache: CacheId) -> u64 {
        self.slot(cache).map(|i| self.loads[i]).unwrap_or(0)
    }

    /// Every cache with its load, in the map's cache order.
    pub fn loads(&self) -> Vec<(CacheId, u64)> {
        self.caches
            .iter()
            .copied()
            .zip(self.loads.iter().copied())
            .collect()
    }

    /// The sum of the global regions' estimates.
    pub fn global_bytes(&self) -> u64 {
        self.global_bytes
    }

    /// The regions mapped to `cache`, in id order.
    pub fn regions_on(&self, cache: CacheId) -> Vec<RegionId> {
        self.regions
            .iter()
            .filter(|(_, e)| e.mapping == Mapping::Local(cache))
            .map(|(&r, _)| r)
            .collect()
    }

    /// Every region with its mapping and estimate, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (RegionId, Mapping, u64)> + '_ {
        self.regions
            .iter()
            .map(|(&r, e)| (r, e.mapping, e.wss_bytes))
    }

    pub fn len(&self) -> usize {
        self.regions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.regions.is_empty()
    }

    /// The cache with the lowest load (the "emptier" cache of §2.1; ties to
    /// the first in order). `None` if the map has no caches.
    pub fn emptiest(&self) -> Option<CacheId> {
        (0..self.caches.len())
            .min_by_key(|&i| (self.loads[i], i))
            .map(|i| self.caches[i])
    }

    /// Map an unmapped region to the emptiest cache (cache allocation of a
    /// regular region, §3.3 Table 2 step 4). Returns the cache.
    pub fn allocate(&mut self, region: RegionId) -> Result<CacheId, PolicyError> {
        let c = self
            .emptiest()
            .ok_or_else(|| PolicyError("the region map has no caches".into()))?;
        self.map_to(region, c)?;
        Ok(c)
    }
}
