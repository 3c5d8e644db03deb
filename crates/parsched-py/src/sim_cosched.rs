//! Seed 003: the cluster machine and its coscheduling schemes.

use super::*;

/// Runs seed 003's network of workstations (`cluster::run`): `workers`
/// threads for the replications (results do not depend on it). Returns the
/// `ClusterResult` fields as a dict, plus `config` (the full configuration).
/// Releases the GIL; Ctrl-C stops the run within ~50 ms (KeyboardInterrupt).
#[pyfunction]
#[pyo3(signature = (config, workers=1, audit=false))]
pub(crate) fn simulate_cosched<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyDict>,
    workers: usize,
    audit: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let ModelConfig::Cosched(cfg) = ModelConfig::build("cosched", config)? else {
        unreachable!("build(\"cosched\") makes a cosched config")
    };
    let out = run_cluster_model(py, workers, audit, |opts| cluster::run(&cfg, opts))?;
    out.set_item("config", cosched_values(py, &cfg)?)?;
    Ok(out)
}

/// How seed 003's applications were sized (`cluster::calibrate::report`):
/// the assumed constants, the solved jitter and NPB rate, and per
/// application its size, iterations, compute per iteration and share of
/// time communicating alone beside Table 2's. With a `config` (cosched
/// keys), for that configuration's message costs (as `resize_apps` sizes
/// them).
#[pyfunction]
#[pyo3(signature = (config=None))]
pub(crate) fn cosched_applications<'py>(
    py: Python<'py>,
    config: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let costs = match config {
        Some(c) => {
            let ModelConfig::Cosched(cfg) = ModelConfig::build("cosched", c)? else {
                unreachable!("build(\"cosched\") makes a cosched config")
            };
            cluster::calibrate::Costs::of(&cfg)
        }
        None => cluster::calibrate::Costs::paper(),
    };
    pythonize::pythonize(py, &cluster::calibrate::report(costs))
        .map_err(|e| SimulationError::new_err(e.to_string()))
}

/// Runs one model of the cluster machine (`run`, given its options) with
/// `workers` threads for the replications, off the main thread with the GIL
/// released (Ctrl-C or `cancel_runs` stop it within ~50 ms), and returns
/// its result as a dict.
pub(crate) fn run_cluster_model<'py, R: serde::Serialize + Send>(
    py: Python<'py>,
    workers: usize,
    audit: bool,
    run: impl FnOnce(&ClusterOptions) -> Result<R, ClusterError> + Send,
) -> PyResult<Bound<'py, PyAny>> {
    let cancel = Arc::new(AtomicBool::new(false));
    let opts = ClusterOptions {
        workers: workers.max(1),
        audit,
        cancel: Some(cancel.clone()),
        ..Default::default()
    };
    let result = run_interruptible(py, &cancel, || run(&opts))?.map_err(cluster_err)?;
    pythonize::pythonize(py, &result).map_err(|e| SimulationError::new_err(e.to_string()))
}

/// `dispatch_table` as `dispadmin -c TS -g` prints it (RES=1000), the text
/// `ClusterConfig::set` reads back to the same table.
pub(crate) fn dispadmin_text(t: &parsched_core::policy::ts::DispatchTable) -> String {
    let mut s = String::from(
        "RES=1000\n# ts_quantum  ts_tqexp  ts_slpret  ts_maxwait ts_lwait  PRIORITY LEVEL\n",
    );
    for (i, l) in t.level.iter().enumerate() {
        s.push_str(&format!(
            "{} {} {} {} {} # {i}\n",
            l.quantum_ms, l.tqexp, l.slpret, l.maxwait_s, l.lwait
        ));
    }
    s
}

/// Every key of a cluster configuration (`dispatch_table`: None when unset,
/// else its dispadmin text).
pub(crate) fn cosched_values<'py>(
    py: Python<'py>,
    cfg: &ClusterConfig,
) -> PyResult<Bound<'py, PyDict>> {
    let d = schema_values(py, &cluster::SCHEMA, cfg)?;
    d.set_item(
        "dispatch_table",
        cfg.dispatch_table.as_ref().map(dispadmin_text),
    )?;
    Ok(d)
}
