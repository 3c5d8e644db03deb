//! parsched-sim: the discrete-event simulator.
//!
//! * [`engine`]: clock and `(time, sequence)`-ordered event queue.
//! * [`machine`]: the pooled shared-memory multiprocessor of seed 000 with its
//!   round-robin local scheduler and overheads.
//! * [`workload`]: job generators (seed 000's fork-join workload, arrival lists).
//! * [`pools`]: the typed configuration of seed 000's model and its runner
//!   (replications, warm-up deletion, confidence intervals).
//! * [`sync`]: seed 001's machine: pinned threads with barriers, waiting
//!   strategies, per-processor round robin or gang scheduling.
//! * [`stats`]: summary statistics.
//! * [`cancel`]: the cancel flag every long loop watches (Ctrl-C).

pub mod batch;
pub mod cancel;
pub mod cluster;
pub mod desktop;
pub mod desktop_figs;
pub mod engine;
pub mod lublin;
pub mod machine;
pub mod pools;
pub mod pools_keys;
pub mod region_machine;
pub mod regions;
pub mod rng;
pub mod stats;
pub mod swf;
pub mod sync;
pub mod workload;
