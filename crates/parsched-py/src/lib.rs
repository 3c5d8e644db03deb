//! Thin PyO3 bindings: convert Python values to the simulator's typed
//! configuration, run, and convert results back. No model logic lives here.

use parsched_core::policy::pools::{ForkRequest, Placement, PoolPolicy, PoolState};
use parsched_core::schema::{Configuration, Kind};
use parsched_core::{JobId, PolicyError as CorePolicyError, PoolId};
use parsched_sim::machines::barrier::{self, SyncConfig, SyncOptions};
use parsched_sim::machines::batch::{self, BatchConfig, BatchError};
use parsched_sim::machines::cluster::{self, ClusterConfig, ClusterError, ClusterOptions};
use parsched_sim::machines::desktop::{self, DesktopConfig};
use parsched_sim::machines::pools::machine::MachineError;
use parsched_sim::machines::pools::{self, PoolsConfig, RunError, RunOptions, Value};
use parsched_sim::machines::regions::RegionsConfig;
use parsched_sim::models::{self, ModelDef};
use parsched_sim::workloads::forkjoin::{Arrival, BoundedGeometric};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

mod config;
mod errors;
mod gym;
mod interrupt;
mod numbers;
mod orders;
mod policy_py;
#[cfg(all(feature = "runtime", target_os = "linux"))]
mod runtime;
mod sim_barrier;
mod sim_batch;
mod sim_cosched;
mod sim_fcs;
mod sim_pools;
mod sim_regions;
use config::*;
use errors::*;
use interrupt::*;
use numbers::*;
#[cfg(all(feature = "runtime", target_os = "linux"))]
use runtime::*;
use sim_barrier::*;
use sim_batch::*;
use sim_cosched::*;
use sim_fcs::*;
use sim_pools::*;
use sim_regions::*;

mod erased {
    use pyo3::prelude::*;
    /// A serialisable value converted to Python through pythonize.
    pub trait Ser {
        fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>>;
    }
    impl<T: serde::Serialize> Ser for T {
        fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            pythonize::pythonize(py, self)
                .map_err(|e| super::SimulationError::new_err(e.to_string()))
        }
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate_pools, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(keys, m)?)?;
    m.add_function(wrap_pyfunction!(models_table, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(orders::queue_orders, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_barrier, m)?)?;
    m.add_function(wrap_pyfunction!(barrier_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_batch, m)?)?;
    m.add_class::<gym::BatchEnvCore>()?;
    m.add_class::<policy_py::Columns>()?;
    m.add_class::<gym::BatchVecEnvCore>()?;
    m.add_function(wrap_pyfunction!(generate_lublin, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_cosched, m)?)?;
    m.add_function(wrap_pyfunction!(cancel_cosched, m)?)?;
    m.add_function(wrap_pyfunction!(cosched_applications, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_fcs, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_fcs_figure, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_regions, m)?)?;
    m.add_function(wrap_pyfunction!(cancel_runs, m)?)?;
    m.add_function(wrap_pyfunction!(show_progress, m)?)?;
    #[cfg(all(feature = "runtime", target_os = "linux"))]
    m.add_function(wrap_pyfunction!(run_jobs, m)?)?;
    #[cfg(all(feature = "runtime", target_os = "linux"))]
    m.add_function(wrap_pyfunction!(runtime::runtime_policies, m)?)?;
    #[cfg(all(feature = "runtime", target_os = "linux"))]
    m.add_function(wrap_pyfunction!(runtime::runtime_schema, m)?)?;
    m.add_function(wrap_pyfunction!(validate_config, m)?)?;
    m.add_function(wrap_pyfunction!(config_values, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_run, m)?)?;
    m.add_function(wrap_pyfunction!(bounded_geometric_q, m)?)?;
    m.add_function(wrap_pyfunction!(barrier_moments, m)?)?;
    m.add_function(wrap_pyfunction!(tw_per_unit_var, m)?)?;
    m.add_function(wrap_pyfunction!(harmonic_number, m)?)?;
    m.add_function(wrap_pyfunction!(mean_ci90, m)?)?;
    m.add_function(wrap_pyfunction!(check_arrivals, m)?)?;
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    m.add("PolicyError", m.py().get_type::<PolicyError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add("TimeLimitError", m.py().get_type::<TimeLimitError>())?;
    m.add("TraceError", m.py().get_type::<TraceError>())?;
    m.add(
        "RuntimeUnavailable",
        m.py().get_type::<RuntimeUnavailable>(),
    )?;
    m.add("RuntimeFailure", m.py().get_type::<RuntimeFailure>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
