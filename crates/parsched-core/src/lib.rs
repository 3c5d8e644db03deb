//! parsched-core: the vocabulary of parsched and its scheduling policies.
//!
//! This crate holds what both worlds — the simulator (`parsched-sim`) and the Linux
//! runtime — share: identifiers, integer time, the machine topology, the program
//! representation that threads execute, and the *policies*. A policy decides from
//! what it observes (a view of the machine) and returns a decision; it never
//! touches the world. There is no I/O and no Python here.

pub mod cache;
pub mod error;
pub mod ids;
pub mod policy;
pub mod program;
pub mod schema;
pub mod time;
pub mod topology;

pub use error::{clip, ConfigError, PolicyError, ECHO_MAX};
pub use ids::{CacheId, CoreId, DomainId, JobId, NodeId, PoolId, ProcId, RegionId, ThreadId};
pub use schema::Value;
pub use time::Time;
