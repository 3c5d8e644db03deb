//! Seed 001: the barrier machine.

use super::*;

/// Runs seed 001's iterative-barrier model (times in ms). Returns the
/// `SyncResult` fields as a dict, plus `config` (the full configuration).
/// `gang_place`: each gang's slot in the matrix, chosen in Python (the
/// batch machine's `PySlotChooser`), asked once per gang as the machine is
/// built (docs/policies/gang-scheduler.md).
#[pyfunction]
#[pyo3(signature = (config, audit=false, gang_place=None))]
pub(crate) fn simulate_barrier<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyDict>,
    audit: bool,
    gang_place: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = typed_config::<SyncConfig>("barrier", config)?;
    let opts = SyncOptions {
        audit,
        ..Default::default()
    };
    let mut chooser = gang_place
        .map(|f| crate::sim_batch::PySlotChooser::new(py, f).map(|c| c.every_gang()))
        .transpose()?;
    let cancel = Arc::new(AtomicBool::new(false));
    // The chooser is called (with the GIL) from the run's thread while the
    // machine is built, before the simulation proper.
    let result = run_interruptible(py, &cancel, || {
        parsched_sim::cancel::with_cancel(&cancel, || {
            let c = chooser
                .as_mut()
                .map(|c| c as &mut dyn parsched_core::policy::gang_place::SlotChooser);
            barrier::run_with(&cfg, opts, c)
        })
    })?;
    if let Some(c) = chooser.as_mut() {
        crate::sim_batch::reraise_interrupt(py, c.raised.take())?;
    }
    let result = result.map_err(to_py_err)?;
    let out =
        pythonize::pythonize(py, &result).map_err(|e| SimulationError::new_err(e.to_string()))?;
    let c = pythonize::pythonize(py, &cfg).map_err(|e| SimulationError::new_err(e.to_string()))?;
    out.set_item("config", c)?;
    Ok(out)
}
