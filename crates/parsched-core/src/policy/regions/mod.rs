//! Region scheduling: pages grouped into regions, regions mapped to caches,
//! threads kept on the processors of the caches that hold the regions they
//! touch.
//!
//! Seed 004 (Lee & Schwan, "Region Scheduling: Efficiently Using the Cache
//! Architectures via Page-level Affinity", ASPLOS 2012,
//! `seeds/004_d2e0e80c6ffc49db.txt`; digest in `notes/seed-targets.md`,
//! section 004). The pieces, each in its own file:
//!
//! | piece | paper | file |
//! |---|---|---|
//! | the region map: region → one cache, global or unmapped; cache loads | §2.1, §2.2, §4 ("cache load is the sum of the mapped regions' sizes") | [`map`] |
//! | the page-touch decision: micro-schedule to the region's cache or open it here | §2.2.1–2.2.2 | [`touch`] |
//! | the working-set estimator over access-bit histories (§4's weights) | §4, Figure 15 | [`wss`] |
//! | cache balancing (greedy bin packing by load), unification, partitioning | §1, §2.1 (Figure 2), §4, §5.2, §5.5 | [`balance`](mod@balance) |
//! | regioning by idle-time merging (threshold q, p = 1 %, teardown) | §3.2–3.3, Table 2, Figures 11–12 | [`regioning`] |
//! | the fallback to the standard scheduler (conditions 1–3, idle prevention) | §3.1, Figure 10; §2.2.2 | [`fallback`] |
//! | placing whole jobs by cpusets: the CPU-share repair and the 10% hysteresis around `balance` | (runtime constraints, not the paper's) | [`shares`] |
//!
//! Everything here is pure: the simulated machine (`parsched-sim`) and the
//! Linux runtime observe, call these functions, and apply what they return.
//! Open choices of the paper are named options with the documented default
//! (see `docs/policies/regions.md`).

pub mod balance;
pub mod fallback;
pub mod map;
pub mod regioning;
pub mod shares;
pub mod touch;
pub mod wss;

pub use balance::{balance, partition, unify, Assignment, Bin, Item, PartitionDemand};
pub use fallback::{Condition, Conditions, Observation, RegionDecision};
pub use map::{Mapping, RegionMap};
pub use regioning::{PhaseReport, Regioner, RegioningConfig, RegioningSchedule};
pub use shares::{cpu_share_repair, keep_current, max_fill, within_shares, HYSTERESIS};
pub use touch::{on_touch, TouchDecision, TouchRule};
pub use wss::{ones_histogram, weighted_pages, HistogramReading, WssEstimator};

#[cfg(test)]
mod tests;
