//! The page-touch decision (seed 004 §2.2.1–2.2.2, Figures 3 and 5): a
//! thread running on processor `p` touches a page of region `r`.
//!
//! * `r` is global, or local to `p`'s cache: no fault ([`TouchDecision::Proceed`]).
//! * `r` is unmapped (a seed or regular region not yet allocated): open it
//!   here ([`TouchDecision::OpenLocally`] with `p`'s cache).
//! * `r` is local to another cache: either *micro-schedule* the thread to a
//!   processor of `r`'s cache ([`TouchDecision::MicroSchedule`]; the default,
//!   [`TouchRule::MicroSchedule`]) or *open* `r` here, moving the region
//!   ([`TouchRule::Open`]). "It is the standard scheduler that determines
//!   which PCPUs are allocated": the target is the processor of `r`'s cache
//!   with the fewest runnable threads reported by the caller, ties to the
//!   lowest id [open choice].
//!
//! The decision is pure: the machine applies it (moves the thread at the
//! micro-schedule cost, or remaps the region in its [`RegionMap`]).

use super::map::{Mapping, RegionMap};
use crate::error::PolicyError;
use crate::ids::{CacheId, ProcId, RegionId};
use crate::topology::Topology;
use serde::{Deserialize, Serialize};

/// What to do when a region local to another cache is touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TouchRule {
    /// Move the thread to the region's cache (the paper's micro-schedule).
    #[default]
    MicroSchedule,
    /// Remap the region to the toucher's cache.
    Open,
}

/// The outcome of a page touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum TouchDecision {
    /// No fault: the region is global or already open on this cache.
    Proceed,
    /// Move the thread to `to`, a processor of `cache` (the region's cache).
    MicroSchedule { to: ProcId, cache: CacheId },
    /// Map the region to `cache` (the toucher's) and go on here.
    OpenLocally { cache: CacheId },
}

/// The cache of the map that serves `proc`, if any.
pub fn cache_of(map: &RegionMap, topology: &Topology, proc: ProcId) -> Option<CacheId> {
    map.caches()
        .iter()
        .copied()
        .find(|&c| c.idx() < topology.caches().len() && topology.cache(c).serves(proc))
}

/// Decide a page touch of `region` by a thread on `proc`. `runnable(p)` is
/// the number of threads the standard scheduler has on processor `p` (the
/// micro-schedule goes to the least loaded processor of the target cache).
pub fn on_touch(
    map: &RegionMap,
    topology: &Topology,
    proc: ProcId,
    region: RegionId,
    rule: TouchRule,
    runnable: impl Fn(ProcId) -> u32,
) -> Result<TouchDecision, PolicyError> {
    let here = cache_of(map, topology, proc).ok_or_else(|| {
        PolicyError(format!(
            "{proc} is served by none of the region map's caches"
        ))
    })?;
    let mapping = map
        .mapping(region)
        .ok_or_else(|| PolicyError(format!("{region} is not in the region map")))?;
    Ok(match mapping {
        Mapping::Global => TouchDecision::Proceed,
        Mapping::Local(c) if c == here => TouchDecision::Proceed,
        Mapping::Unmapped => TouchDecision::OpenLocally { cache: here },
        Mapping::Local(c) => match rule {
            TouchRule::Open => TouchDecision::OpenLocally { cache: here },
            TouchRule::MicroSchedule => {
                let to = topology
                    .cache(c)
                    .procs
                    .iter()
                    .copied()
                    .min_by_key(|&p| (runnable(p), p))
                    .ok_or_else(|| PolicyError(format!("{c} serves no processor")))?;
                TouchDecision::MicroSchedule { to, cache: c }
            }
        },
    })
}
