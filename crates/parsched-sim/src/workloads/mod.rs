//! Workloads and trace formats.
//!
//! * [`forkjoin`]: seed 000's fork-join job generator and explicit arrival
//!   lists.
//! * [`swf`]: the Standard Workload Format reader/writer (with explicit quirk
//!   rules) and the batch job records it yields.
//! * [`lublin`]: the Lublin-Feitelson workload model.
//! * [`tsafrir05`]: the Tsafrir–Etsion–Feitelson model of user runtime
//!   estimates (the Lublin generator's requested times, as an option).

pub mod forkjoin;
pub mod lublin;
pub mod swf;
pub use lublin::tsafrir05;
