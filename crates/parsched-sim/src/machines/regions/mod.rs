//! The simulated machine of region scheduling (seed 004, Lee & Schwan,
//! ASPLOS 2012): threads run programs whose [`Step::Touch`] steps access
//! regions, the last-level caches hold what they touched, and each touch is
//! timed by a miss model given what else occupies the cache. The same work
//! runs under the standard scheduler and under region scheduling (the
//! policies of [`parsched_core::policy::regions`]); `normalized_performance`
//! is the standard time over the region time.
//!
//! **Threads and processors.** One thread per program (memlat and the
//! balancing programs are single-threaded, as in the paper), at most one
//! thread per processor (no time sharing: the workloads here never have more
//! threads than processors; a configuration that would is refused).
//! `Compute { units }` takes `units` µs; fork, barrier and messages are
//! refused (a program error).
//!
//! **Standard scheduler.** Each thread stays on its initial processor (the
//! "region-unaware mapping" of §5.2; for memlat, processor 0), so all its
//! regions share that processor's last-level cache.
//!
//! **Region scheduling.** Regions are entered in a [`RegionMap`] with their
//! declared sizes as working-set estimates (uniformly random touches keep
//! every page referenced, so the §4 estimator converges to the size), or,
//! with [`Online`] (`regioning=online`), learnt during the run: the
//! estimator fed with simulated access bits every scan and the regions
//! re-balanced after each. A program whose working set fits one
//! cache is one balancing item; otherwise each region is one (unification).
//! [`balance`](mod@balance) packs the items over the last-level caches; each thread starts
//! on a processor of its first region's cache. At every touch,
//! [`on_touch`] decides: proceed, open the region here (unmapped), or
//! micro-schedule to a free processor of the region's cache at the paper's
//! cost (§5.1: 15.86 µs Clovertown, 6.357 µs Westmere); if every processor of
//! that cache is taken, the region is opened here instead (idle prevention,
//! §2.2.2). With `fallback` on, [`Conditions`] (conditions 1–3) decide per
//! program before the run: a program that fails them has its regions made
//! global and runs as under the standard scheduler (one that merely fits one
//! cache is still balanced as a whole). Figure 9 forces unification
//! (`fallback` off, the default for memlat).
//!
//! **Cache models** ([`CacheModel`]): `footprint` (fast, the default) is a
//! fluid model of random replacement — per chunk of accesses to a region of
//! N lines holding x of them, misses are `n (1 − x/N)`; misses fill empty
//! lines first, then evict resident lines in proportion to their share
//! (every region's, its own included). Alone, a region converges to
//! `min(N, C)` lines (miss 1 − C/S); interleaved regions share by rate (Che's
//! regime). `lru` (exact) draws each access's line from the thread's own
//! random stream and runs [`LruCache`] at the machine's geometry. Under LRU,
//! memlat's standard schedule misses slightly more near a ≈ N (the remnant
//! eviction of `parsched_core::cache::visit`); the tests check one model
//! against the other. Touches run in chunks of `chunk` accesses so that
//! co-running threads interleave in time order (engine events by
//! `(time, seq)`); a chunk takes `n·hit + misses·miss` ns. There is no
//! bandwidth contention between co-runners (only cache sharing).
//!
//! **Time.** One engine tick is one picosecond (`PS` = 1000 ticks per ns);
//! results are reported in ns. The run is a [`Model`](crate::engine::Model)
//! run by [`run_watched`](crate::engine::run_watched): setting the cancel
//! flag ([`crate::cancel`]) ends it with [`RegionMachineError::Interrupted`].
//!
//! | file | what it holds |
//! |---|---|
//! | `mod.rs` | the machine's description ([`MachineSpec`], [`Placed`]), its options and results ([`MachineRun`], [`CacheStats`]), errors |
//! | `cache_state.rs` | one cache's content: the footprint model or exact LRU |
//! | `placement.rs` | before the run: validation, the caches, the initial placement by the core policies |
//! | `machine.rs` | the run as a `Model` on the engine: events, threads, micro-schedules, touch chunks |
//! | `scan.rs` | online regioning's scan: access bits into the estimator, re-balancing |
//! | `config.rs` | `parsched simulate regions`: [`RegionsConfig`] and its keys, the memlat and balance workloads, [`RegionsResult`], [`run`] |
//! | `tests.rs` | fast against exact, balancing, fallback, the pipeline at full scale |

pub mod analytic;
mod cache_state;
mod config;
mod keys;
mod model;
pub use model::MODEL;
mod machine;
mod placement;
mod scan;
#[cfg(test)]
mod tests;

use cache_state::CacheState;
pub use config::*;
pub use keys::{keys, SCHEMA};
use machine::{first_touch, key_of};

use crate::engine::Engine;
use crate::machines::regions::analytic::RegionTiming;
use crate::rng::{mix64, stream, Stream, StreamRng};
use parsched_core::cache::LruCache;
use parsched_core::policy::regions::{
    balance, on_touch, Bin, Conditions, HistogramReading, Item, Mapping, Observation,
    RegionDecision, RegionMap, TouchDecision, TouchRule, WssEstimator,
};
use parsched_core::program::{Cursor, Op, Pattern, Program, Step};
use parsched_core::time::TickUnit;
use parsched_core::topology::{Topology, MIB};
use parsched_core::Value;
use parsched_core::{CacheId, ConfigError, ProcId, RegionId, Time};
use rand::Rng;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// What one tick of the region machine is.
pub const TICK: TickUnit = TickUnit::Picosecond;

/// Engine ticks per ns: one tick of the region machine is one picosecond.
const PS: f64 = 1000.0;

/// Which miss model times the touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheModel {
    #[default]
    Footprint,
    Lru,
}

/// Which scheduler runs the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheduler {
    Standard,
    Region,
}

/// One program and its processor under the standard scheduler.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    pub program: Program,
    pub proc: ProcId,
}

/// Online regioning (`regioning=online`): the machine starts with every
/// region unmapped and unknown (a touch opens it where the thread runs, as
/// the standard scheduler would), scans the regions' simulated access bits
/// every `scan_ns` of simulated time into §4's estimator
/// ([`WssEstimator`]), and after every scan re-balances the regions with
/// their estimates ([`balance`](mod@balance)); threads follow their regions by
/// micro-schedules at their next touch. Scans cost no time (the paper
/// measures `do_clock()` under 1%).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Online {
    /// Simulated time between two scans, ns.
    pub scan_ns: f64,
    /// Page size of the access bits, bytes.
    pub page_bytes: u64,
}

/// A run of the machine.
#[derive(Debug, Clone)]
pub struct MachineSpec {
    pub topology: Topology,
    pub timing: RegionTiming,
    pub cache_model: CacheModel,
    pub programs: Vec<Placed>,
    /// Accesses per chunk (interleaving granularity).
    pub chunk: u64,
    /// Conditions 1–3 per program before the run (`None`: forced regioning).
    pub fallback: Option<Conditions>,
    /// Region scheduling from the declared regions (`None`) or online
    /// estimates ([`Online`]).
    pub online: Option<Online>,
    pub seed: u64,
}

/// Errors of the machine.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum RegionMachineError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("program error: {0}")]
    Program(String),
    #[error("policy error: {0}")]
    Policy(String),
    /// The run was stopped through its cancel flag ([`crate::cancel`]).
    #[error("interrupted")]
    Interrupted,
}

/// Per-cache measures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CacheStats {
    pub cache: u32,
    pub accesses: u64,
    pub misses: f64,
    pub miss_ratio: f64,
    /// Working set mapped to this cache (region map for region scheduling;
    /// the regions of the threads placed here for the standard scheduler).
    pub load_bytes: u64,
}

/// The outcome of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MachineRun {
    pub scheduler: Scheduler,
    /// Finish time of each program, ns.
    pub finish_ns: Vec<f64>,
    pub makespan_ns: f64,
    pub microschedules: u64,
    pub opens: u64,
    pub microschedules_per_s: f64,
    pub caches: Vec<CacheStats>,
    /// Per program: `regioning` or the fallback's reason.
    pub decisions: Vec<String>,
    /// Per program, per region: the cache it is mapped to at the end
    /// (`None`: unmapped or global; the standard run maps nothing).
    pub placement: Vec<Vec<Option<u32>>>,
    /// Per program, per region: its working-set estimate at the end, bytes
    /// (the declared size unless online).
    pub estimates: Vec<Vec<u64>>,
    /// Online: scans that changed the placement.
    pub rebalances: u64,
    /// Online: when the last of them ran, ns (0 without one).
    pub last_rebalance_ns: f64,
}
