//! Identifiers as newtypes, so a pool index is never passed where a processor
//! index is expected.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $inner:ty, $prefix:literal) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
        )]
        #[serde(transparent)]
        pub struct $name(pub $inner);

        impl $name {
            /// The index as `usize`, for indexing vectors.
            #[inline]
            pub fn idx(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

id_type!(
    /// A hardware thread / logical CPU (the unit a thread runs on).
    ProcId, u32, "cpu");
id_type!(
    /// A physical core (may hold several `ProcId`s with SMT).
    CoreId, u32, "core");
id_type!(
    /// A cache / NUMA domain (last-level cache or memory node).
    DomainId, u32, "dom");
id_type!(
    /// A machine (cluster node).
    NodeId, u32, "node");
id_type!(
    /// A processor pool: the scheduler's partition of the processors.
    PoolId, u32, "pool");
id_type!(
    /// A job (a set of threads submitted together).
    JobId, u64, "job");
id_type!(
    /// A thread of a job.
    ThreadId, u32, "thr");
id_type!(
    /// A cache domain of a [`crate::topology::Topology`] (its index in
    /// `Topology::caches()`).
    CacheId, u32, "cache");
id_type!(
    /// A memory region of region scheduling (seed 004): a set of pages that
    /// is mapped to caches as a whole.
    RegionId, u64, "region");
