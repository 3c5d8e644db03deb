//! parsched-runtime: parsched on real processes — a user-level gang
//! scheduler and processor pools for Linux.
//!
//! * [`topology`] reads the machine's topology from sysfs into the core
//!   crate's `Topology`.
//! * [`cgroup`] stops and resumes jobs ([`Freezer`]: cgroup v2, cgroup v1,
//!   signals, a mock) and confines them ([`cgroup::Cpuset`]).
//! * [`controller`] applies the core crate's policies — the Ousterhout
//!   `GangMatrix` and Zhou–Brecht pool placement — to processes.
//! * [`safety`] makes sure no job is ever left frozen.
//! * [`damon`] says whether a kernel DAMON monitor clears the page accessed
//!   bits the working-set estimates read.
//! * [`run_jobs`] is the entry point the CLI calls.
//!
//! See `docs/runtime.md` for the design and the measurements.
//!
//! Linux only (cgroups, `/proc`, pidfds, timerfds, `SCHED_IDLE`): on other
//! systems the crate does not compile. The Python extension depends on it
//! through its `runtime` feature, only on Linux.

#[cfg(not(target_os = "linux"))]
compile_error!(
    "parsched-runtime drives Linux cgroups and /proc: it builds on Linux only \
     (build the Python extension without it: cargo build -p parsched-py --no-default-features)"
);

pub mod cgroup;
pub mod controller;
pub mod damon;
pub mod error;
pub mod procfs;
pub mod safety;
pub mod spawn;
pub mod spec;
pub mod topology;

pub use cgroup::{BackendKind, Freezer};
pub use controller::{
    policies, Controller, ControllerStats, PolicyInfo, RegionsRecord, RegionsStats, SwitchRecord,
};
pub use error::{Result, RuntimeError};
pub use spec::{
    CoschedLayout, CoschedSpec, ExitStatus, FcsSpec, JobReport, JobSpec, Policy, PoolsSpec,
    RegionsSpec, RunSpec,
};

/// Runs the jobs of `spec` under its policy until all have exited and
/// reports on each, in job order.
pub fn run_jobs(spec: RunSpec) -> Result<Vec<JobReport>> {
    Controller::new(spec)?.run()
}
