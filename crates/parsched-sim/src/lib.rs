//! parsched-sim: the discrete-event simulator.
//!
//! * [`engine`]: clock, `(time, sequence)`-ordered event queue, the `Model`
//!   trait every machine implements and the run loops.
//! * [`machines`]: the simulated machines, one folder each (`pools`,
//!   `barrier`, `batch`, `cluster`, `regions`) and what they share.
//! * [`workloads`]: job generators and trace formats (fork-join, SWF,
//!   Lublin-Feitelson).
//! * [`rng`]: the seeded random streams, one per purpose.
//! * [`stats`]: summary statistics.
//! * [`cancel`]: the cancel flag every long loop watches (Ctrl-C).

pub mod cancel;
pub mod engine;
pub mod machines;
pub mod models;
pub mod rng;
pub mod stats;
pub mod workloads;
