//! The Linux runtime (real processes); only in builds with the `runtime`
//! feature on Linux.

use super::*;

/// Runs real jobs under a policy on this Linux machine (`parsched run`). The
/// `spec` dict maps onto the runtime's `RunSpec` (see docs/runtime.md); returns
/// `{"jobs": [JobReport...], "controller": ControllerStats}`. Blocks until all
/// jobs end, with the GIL released; the controller handles SIGINT/SIGTERM
/// itself (it thaws and stops the jobs). Only in builds with the `runtime`
/// feature on Linux; elsewhere the module has no `run_jobs`.
#[pyfunction]
pub(crate) fn run_jobs<'py>(
    py: Python<'py>,
    spec: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    use parsched_runtime::{Controller, RuntimeError};
    let spec: parsched_runtime::RunSpec =
        pythonize::depythonize(spec).map_err(|e| ConfigError::new_err(format!("run spec: {e}")))?;
    let rt_err = |e: RuntimeError| -> PyErr {
        match e {
            RuntimeError::Config(c) => config_err(c),
            RuntimeError::Policy(p) => PolicyError::new_err(p.0),
            e @ (RuntimeError::Unsupported(_) | RuntimeError::Permission { .. }) => {
                RuntimeUnavailable::new_err(e.to_string())
            }
            e => RuntimeFailure::new_err(e.to_string()),
        }
    };
    let (reports, stats) = py
        .allow_threads(|| -> Result<_, RuntimeError> {
            let mut c = Controller::new(spec)?;
            let r = c.run()?;
            Ok((r, c.stats().clone()))
        })
        .map_err(rt_err)?;
    let out = PyDict::new(py);
    out.set_item("jobs", erased::Ser::to_py(&reports, py)?)?;
    out.set_item("controller", erased::Ser::to_py(&stats, py)?)?;
    Ok(out)
}

/// The runtime's policies (`parsched run --policy`), in the order the
/// runtime lists them: each a dict with `name`, `aliases`, `doc`, `table`
/// (its table in the run spec, e.g. `fcs` for `[fcs]`, or `None`), `keys`
/// (the table's keys, in the shape of `schema(model)`) and `flat` (the flat
/// spellings still accepted at the top level, `[flat, key]`).
#[pyfunction]
pub(crate) fn runtime_policies(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    pythonize::pythonize(py, &parsched_runtime::policies())
        .map_err(|e| RuntimeFailure::new_err(e.to_string()))
}

/// The common keys of a run spec (`policy`, `slot`, `backend`, `max_slots`,
/// ...), in the shape of `schema(model)`: `policy` a choice of every
/// policy's name and alias, `backend` of the backends a user may name.
#[pyfunction]
pub(crate) fn runtime_schema(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    pythonize::pythonize(py, &parsched_runtime::spec::run_keys())
        .map_err(|e| RuntimeFailure::new_err(e.to_string()))
}
