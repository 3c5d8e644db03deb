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

/// `text` for an error message: at most `max` characters, cut with an
/// ellipsis (`…`) when longer, so that a 5,000-character bad value does not
/// fill the message.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((i, _)) => format!("{}…", &text[..i]),
    }
}

/// Longest value echoed in an error message (characters; longer ones are
/// cut by [`clip`]).
pub const ECHO_MAX: usize = 60;

/// A policy returned a decision the machine cannot apply (for instance a
/// user-written placement rule that names a pool that does not exist).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("policy error: {0}")]
pub struct PolicyError(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_cuts_long_values_with_an_ellipsis() {
        assert_eq!(clip("short", 60), "short");
        assert_eq!(clip(&"x".repeat(60), 60), "x".repeat(60));
        let long = "é".repeat(5000);
        let c = clip(&long, 60);
        assert_eq!(c.chars().count(), 61);
        assert!(c.ends_with('…'));
    }
}
