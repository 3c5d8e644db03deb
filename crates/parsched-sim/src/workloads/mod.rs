//! Workloads and trace formats.
//!
//! * [`forkjoin`]: seed 000's fork-join job generator and explicit arrival
//!   lists.
//! * [`swf`]: the Standard Workload Format reader/writer (with explicit quirk
//!   rules) and the batch job records it yields.
//! * [`lublin`]: the Lublin-Feitelson workload model.

pub mod forkjoin;
pub mod lublin;
pub mod swf;
