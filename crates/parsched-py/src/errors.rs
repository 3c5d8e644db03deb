//! The Python exceptions and the conversions of the core's errors to them.

use super::*;

create_exception!(
    parsched._core,
    ConfigError,
    PyValueError,
    "A configuration value is out of range or unknown."
);
create_exception!(
    parsched._core,
    PolicyError,
    PyRuntimeError,
    "A policy returned a decision the machine cannot apply."
);
create_exception!(
    parsched._core,
    TraceError,
    PyValueError,
    "A workload trace (SWF) could not be read: the message names the line."
);
create_exception!(
    parsched._core,
    RuntimeUnavailable,
    PyRuntimeError,
    "The Linux runtime cannot work here (no cgroup freezer/cpuset, or no permission)."
);
create_exception!(
    parsched._core,
    RuntimeFailure,
    PyRuntimeError,
    "The Linux runtime failed while running jobs (spawn, I/O, timeout)."
);
create_exception!(
    parsched._core,
    SimulationError,
    PyRuntimeError,
    "The simulation failed (a program or invariant error)."
);

create_exception!(
    parsched._core,
    TimeLimitError,
    SimulationError,
    "The run passed its max_time_s of simulated time with jobs unfinished (a livelock or \
     deadlock of the configuration, or a run longer than the limit)."
);

pub(crate) fn to_py_err(e: RunError) -> PyErr {
    match e {
        RunError::Config(c) => config_err(c),
        RunError::Machine(MachineError::Policy(p)) => PolicyError::new_err(p.0),
        RunError::Machine(MachineError::Interrupted) => {
            pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted")
        }
        RunError::Machine(m) => SimulationError::new_err(m.to_string()),
    }
}

/// A core `ConfigError` as the Python `ConfigError`, with its parts as the
/// attributes `field`, `message` and `allowed` (the message is
/// `FIELD: problem; allowed: ...`).
pub(crate) fn config_err(e: parsched_core::ConfigError) -> PyErr {
    let err = ConfigError::new_err(e.to_string());
    Python::with_gil(|py| {
        let v = err.value(py);
        // Setting attributes on a fresh exception instance cannot fail.
        let _ = v.setattr("field", &e.field);
        let _ = v.setattr("message", &e.message);
        let _ = v.setattr("allowed", &e.allowed);
    });
    err
}

pub(crate) fn cluster_err(e: ClusterError) -> PyErr {
    match e {
        ClusterError::Config(c) => config_err(c),
        e @ ClusterError::TimeLimit(..) => TimeLimitError::new_err(e.to_string()),
        ClusterError::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted"),
        ClusterError::Policy(p) => PolicyError::new_err(p.0),
        e => SimulationError::new_err(e.to_string()),
    }
}

pub(crate) fn batch_err(e: BatchError) -> PyErr {
    match e {
        BatchError::Config(c) => config_err(c),
        BatchError::Swf(s) => TraceError::new_err(s.to_string()),
        BatchError::Policy(p) => PolicyError::new_err(p.0),
        BatchError::Input(m) => ConfigError::new_err(m),
        BatchError::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted"),
    }
}
