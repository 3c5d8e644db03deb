//! Seed 004: region scheduling's simulated machine (memlat, balancing).

use super::*;
use parsched_sim::machines::regions::{self, RegionMachineError};

fn regions_err(e: RegionMachineError) -> PyErr {
    match e {
        RegionMachineError::Config(c) => config_err(c),
        RegionMachineError::Policy(p) => PolicyError::new_err(p),
        e @ RegionMachineError::Program(_) => SimulationError::new_err(e.to_string()),
        RegionMachineError::Interrupted => {
            pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted")
        }
    }
}

/// Runs seed 004's region machine (`regions::run`): the same work
/// under the standard scheduler and under region scheduling. Returns the
/// `RegionsResult` fields as a dict (`normalized_performance`, `speedup`,
/// `microschedules_per_s`, `cache_loads`, `standard`, `region`, ...), plus
/// `config` (every key's value). Runs off the main thread with the GIL
/// released; Ctrl-C or `cancel_runs()` stops it with `KeyboardInterrupt`.
#[pyfunction]
#[pyo3(signature = (config))]
pub(crate) fn simulate_regions<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = typed_config::<RegionsConfig>("regions", config)?;
    let cancel = Arc::new(AtomicBool::new(false));
    let result = run_interruptible(py, &cancel, || {
        parsched_sim::cancel::with_cancel(&cancel, || regions::run(&cfg))
    })?
    .map_err(regions_err)?;
    let out =
        pythonize::pythonize(py, &result).map_err(|e| SimulationError::new_err(e.to_string()))?;
    out.set_item("config", erased_values(py, &*cfg)?)?;
    Ok(out)
}
