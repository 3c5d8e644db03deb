//! Errors of the runtime. Missing kernel support and missing permissions are
//! their own variants with a message that says what to do; nothing panics.

use parsched_core::{ConfigError, PolicyError};
use std::io;
use std::path::Path;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum RuntimeError {
    /// The kernel or the mounts lack what was asked for (no freezer, no
    /// cpuset controller, no `cgroup.freeze`).
    #[error("unsupported on this machine: {0}")]
    Unsupported(String),
    /// The controller may not do something (not root, no delegated cgroup).
    #[error("permission denied: {what} ({hint})")]
    Permission { what: String, hint: String },
    /// Any other system call or file access failed.
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: io::Error,
    },
    /// A job could not be started (program not found, exec failed).
    #[error("job {job}: cannot start {program}: {message}")]
    Spawn {
        job: String,
        program: String,
        message: String,
    },
    /// The kernel did not confirm a freeze or thaw in time.
    #[error("{0}")]
    Timeout(String),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Policy(#[from] PolicyError),
}

pub type Result<T, E = RuntimeError> = std::result::Result<T, E>;

impl RuntimeError {
    /// Wraps an I/O error with what was being done; `EACCES`/`EPERM`/`EROFS`
    /// become [`RuntimeError::Permission`].
    pub fn io(what: impl Into<String>, source: io::Error) -> RuntimeError {
        let what = what.into();
        match source.raw_os_error() {
            Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS) => {
                RuntimeError::Permission {
                    what: format!("{what}: {source}"),
                    hint: "run parsched as root (e.g. with sudo; jobs still run as the invoking user) \
                           or from a cgroup delegated to your user"
                        .into(),
                }
            }
            _ => RuntimeError::Io { what, source },
        }
    }

    pub fn path(op: &str, path: &Path, source: io::Error) -> RuntimeError {
        RuntimeError::io(format!("{op} {}", path.display()), source)
    }

    pub fn last_os(what: impl Into<String>) -> RuntimeError {
        RuntimeError::io(what, io::Error::last_os_error())
    }
}
