//! Error kinds shared by the crates. Each kind maps to its own Python exception
//! in the bindings.

use thiserror::Error;

/// A configuration value is out of range or inconsistent. `field` names the
/// user-facing key (a paper symbol such as `L` or `pool_size`), `allowed` says
/// what is accepted.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{field}: {message}; allowed: {allowed}")]
pub struct ConfigError {
    pub field: String,
    pub message: String,
    pub allowed: String,
}

impl ConfigError {
    pub fn new(
        field: impl Into<String>,
        message: impl Into<String>,
        allowed: impl Into<String>,
    ) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
            allowed: allowed.into(),
        }
    }
}

/// A policy returned a decision the machine cannot apply (for instance a
/// user-written placement rule that names a pool that does not exist).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("policy error: {0}")]
pub struct PolicyError(pub String);
