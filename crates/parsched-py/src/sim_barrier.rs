//! Seed 001: the barrier machine.

use super::*;

/// Runs seed 001's iterative-barrier model (times in ms). Returns the
/// `SyncResult` fields as a dict, plus `config` (the full configuration).
#[pyfunction]
#[pyo3(signature = (config, audit=false))]
pub(crate) fn simulate_barrier<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyDict>,
    audit: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let ModelConfig::Barrier(cfg) = ModelConfig::build("barrier", config)? else {
        unreachable!("build(\"barrier\") makes a barrier config")
    };
    let opts = SyncOptions {
        audit,
        ..Default::default()
    };
    let cancel = Arc::new(AtomicBool::new(false));
    let result = run_interruptible(py, &cancel, || {
        parsched_sim::cancel::with_cancel(&cancel, || barrier::run(&cfg, opts))
    })?
    .map_err(to_py_err)?;
    let out =
        pythonize::pythonize(py, &result).map_err(|e| SimulationError::new_err(e.to_string()))?;
    let c = pythonize::pythonize(py, &cfg).map_err(|e| SimulationError::new_err(e.to_string()))?;
    out.set_item("config", c)?;
    Ok(out)
}
