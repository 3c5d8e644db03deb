//! The simulated machines, one folder each; every one is a
//! [`Model`](crate::engine::Model) on the one [`Engine`](crate::engine::Engine).
//!
//! * [`pools`]: seed 000's pooled shared-memory multiprocessor (fork-join
//!   jobs, processor pools, round-robin local scheduling, overheads) and its
//!   runner (replications, warm-up deletion, confidence intervals).
//! * [`barrier`]: seed 001's machine: pinned threads with barriers, waiting
//!   strategies, per-processor round robin or gang scheduling.
//! * [`batch`]: space-sharing batch scheduling of job traces (FCFS, EASY,
//!   conservative backfilling, gang with backfilling).
//! * [`cluster`]: workstations with local time-sharing schedulers exchanging
//!   messages (seed 003's network of workstations and its coscheduling
//!   schemes).
//! * [`desktop`]: seed 002's parallel desktop (FCS; Table 1, Figures 1-2),
//!   lowered onto the cluster machine.
//! * [`regions`]: seed 004's cache-region machine and its closed-form gain
//!   map ([`regions::analytic`]).
//! * [`node_costs`]: the node-costs fragment: the five cost keys (tick,
//!   message latency, context switch, interrupt, system call) declared once
//!   for the schemas of [`cluster`] and [`desktop`].
//! * [`common`]: what the machines share (run errors, event limits).

pub mod barrier;
pub mod batch;
pub mod cluster;
pub mod common;
pub mod desktop;
pub mod node_costs;
pub mod pools;
pub mod regions;
