//! What the simulated machines share: the errors of a run and the limit on
//! its estimated length.

use parsched_core::{ConfigError, PolicyError};
use thiserror::Error;

/// The default of every model's `max_events`: 10^10 estimated events (the
/// estimate is an upper bound; at ~10^7 events per second, up to a quarter
/// of an hour).
pub const DEFAULT_MAX_EVENTS: u64 = 10_000_000_000;

/// [`DEFAULT_MAX_EVENTS`] (for `#[serde(default = ...)]`).
pub fn default_max_events() -> u64 {
    DEFAULT_MAX_EVENTS
}

/// Errors while running a machine of threads (the pool and barrier machines).
#[derive(Debug, Error)]
pub enum MachineError {
    #[error(transparent)]
    Policy(#[from] PolicyError),
    #[error("program error in job {job}: {msg}")]
    Program { job: u64, msg: String },
    #[error("invariant violated at t={time}: {msg}")]
    Invariant { time: f64, msg: String },
    /// The run was stopped through its cancel flag ([`crate::cancel`]).
    #[error("interrupted")]
    Interrupted,
}

/// Errors of a run: its configuration or its machine.
#[derive(Debug, Error)]
pub enum RunError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Machine(#[from] MachineError),
}

/// A duration in ms in words (for messages).
pub fn human_ms(ms: f64) -> String {
    let s = ms / 1e3;
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 2.0 * 86400.0 {
        format!("{:.0} h", s / 3600.0)
    } else if s < 2.0 * 365.25 * 86400.0 {
        format!("{:.0} days", s / 86400.0)
    } else {
        format!("{:.1e} years", s / (365.25 * 86400.0))
    }
}
