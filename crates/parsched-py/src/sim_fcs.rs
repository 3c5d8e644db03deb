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
    let ModelConfig::Fcs(cfg) = ModelConfig::build("fcs", config)? else {
        unreachable!("build(\"fcs\") makes an fcs config")
    };
    let out = run_cluster_model(py, workers, false, |opts| desktop::run(&cfg, opts))?;
    out.set_item("config", values_of(py, &*cfg, &desktop::FCS_SCHEMA.keys())?)?;
    Ok(out)
}

/// The keys `simulate_fcs` accepts, in documentation order.
#[pyfunction]
pub(crate) fn fcs_keys() -> Vec<&'static str> {
    desktop::FCS_SCHEMA.keys()
}

/// `jobs` given as a list of lists of multipliers: the core's text form.
pub(crate) fn fcs_jobs_text(v: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    if !(v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>()) {
        return Ok(None);
    }
    let jobs: Vec<Vec<f64>> = v.extract().map_err(|_| {
        config_err(parsched_core::ConfigError::new(
            "jobs",
            "not a list of lists of numbers",
            "per-job lists of per-process multipliers, e.g. [[1,1,2,2],[2,2,1,1],[1,1,1,1]]",
        ))
    })?;
    Ok(Some(
        jobs.iter()
            .map(|j| {
                j.iter()
                    .map(|m| format!("{m}"))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect::<Vec<_>>()
            .join(";"),
    ))
}

/// Runs seed 002's Figures 1-2 grid (`desktop_figs::run_figure`): every
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
    let ModelConfig::FcsFigure(cfg) = ModelConfig::build("fcs_figure", config)? else {
        unreachable!("build(\"fcs_figure\") makes a figure config")
    };
    let out = run_cluster_model(py, workers, false, |opts| {
        desktop_figs::run_figure(&cfg, opts)
    })?;
    out.set_item(
        "config",
        values_of(py, &*cfg, &desktop_figs::FIGURES_SCHEMA.keys())?,
    )?;
    Ok(out)
}

/// The keys `simulate_fcs_figure` accepts.
#[pyfunction]
pub(crate) fn fcs_figure_keys() -> Vec<&'static str> {
    desktop_figs::FIGURES_SCHEMA.keys()
}
