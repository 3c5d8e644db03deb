//! Seed 002: the parallel desktop's Table 1 (default, fcfs, gang, sb, fcs).

use super::*;

/// Runs seed 002's Table 1 model (`desktop::run`): `workers` threads for the
/// replications (results do not depend on it). Returns the `DesktopResult`
/// fields as a dict (`job_times`, `makespan`, `optimum`, `classes`, ...),
/// plus `config` (every key's value). Releases the GIL; Ctrl-C stops the
/// run within ~50 ms (KeyboardInterrupt).
#[pyfunction]
#[pyo3(signature = (config, workers=1))]
pub(crate) fn simulate_fcs<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyDict>,
    workers: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = typed_config::<DesktopConfig>("fcs", config)?;
    let out = run_cluster_model(py, workers, false, |opts| desktop::run(&cfg, opts))?;
    out.set_item("config", erased_values(py, &*cfg)?)?;
    Ok(out)
}

/// Runs seed 002's Figures 1-2 grid (`desktop::figs::run_figure`): every
/// scheduler, k = 1..=programs parallel programs, s = 0..=stressors. Returns
/// `rows` ({machine, scheduler, k, s, runtime_s}), `work_s`, `events`,
/// `wall_seconds` and `config`. Releases the GIL; Ctrl-C stops it.
#[pyfunction]
#[pyo3(signature = (config, workers=1))]
pub(crate) fn simulate_fcs_figure<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyDict>,
    workers: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = typed_config::<desktop::figs::FigureConfig>("fcs_figure", config)?;
    let out = run_cluster_model(py, workers, false, |opts| {
        desktop::figs::run_figure(&cfg, opts)
    })?;
    out.set_item("config", erased_values(py, &*cfg)?)?;
    Ok(out)
}
