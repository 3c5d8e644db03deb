//! Seed 003: the cluster machine and its coscheduling schemes.

use super::*;

use parsched_core::policy::cosched::{BoostChooser, BoostView, ProcState};

/// The periodic boost's target written in Python: `boost(view) -> endpoint
/// | None` (an object's `boost` method, or a function), called on every
/// invocation of a node's boost timer with a dict: `node`, `now` (ns),
/// `next` (PB's round-robin start), `skip_running`, and per endpoint of the
/// node (its processes, in order) numpy columns `pending`, `last_arrival`
/// (ns; int64), `running`, `ready`, `blocked`, `done`, `in_driver` (bool)
/// (docs/policies/cosched.md).
pub(crate) struct PyBooster {
    f: Py<PyAny>,
    /// What the function raised, kept to re-raise a KeyboardInterrupt.
    raised: Option<PyErr>,
}

impl PyBooster {
    fn new(py: Python<'_>, obj: Py<PyAny>) -> PyResult<PyBooster> {
        let o = obj.bind(py);
        let f = match o.getattr("boost") {
            Ok(m) if m.is_callable() => m.unbind(),
            _ if o.is_callable() => obj,
            _ => {
                return Err(ConfigError::new_err(
                    "boost: not callable; allowed: a function of a node's endpoints (or an \
                     object with a boost method) returning an endpoint index or None",
                ))
            }
        };
        Ok(PyBooster { f, raised: None })
    }

    fn call(&mut self, py: Python<'_>, v: &BoostView) -> PyResult<Result<Option<usize>, String>> {
        use numpy::PyArray1;
        let e = v.endpoints;
        let d = PyDict::new(py);
        d.set_item("node", v.node)?;
        d.set_item("now", v.now.0)?;
        d.set_item("next", v.next)?;
        d.set_item("skip_running", v.skip_running)?;
        let ints = |f: &dyn Fn(usize) -> i64| PyArray1::from_iter(py, (0..e.len()).map(f));
        d.set_item("pending", ints(&|i| e[i].pending as i64))?;
        d.set_item("last_arrival", ints(&|i| e[i].last_arrival.0 as i64))?;
        let is = |st: ProcState| PyArray1::from_iter(py, e.iter().map(move |x| x.state == st));
        d.set_item("running", is(ProcState::Running))?;
        d.set_item("ready", is(ProcState::Ready))?;
        d.set_item("blocked", is(ProcState::Blocked))?;
        d.set_item("done", is(ProcState::Done))?;
        d.set_item(
            "in_driver",
            PyArray1::from_iter(py, e.iter().map(|x| x.in_driver)),
        )?;
        let r = self.f.call1(py, (d,))?;
        let r = r.bind(py);
        if r.is_none() {
            return Ok(Ok(None));
        }
        let n = e.len();
        let bad = || -> PyResult<String> {
            Ok(format!(
                "returned {} ({}); allowed: an endpoint index (int) in 0..{n} or None",
                parsched_core::clip(&r.repr()?.to_string(), parsched_core::ECHO_MAX),
                r.get_type().name()?
            ))
        };
        if r.is_instance_of::<pyo3::types::PyBool>() {
            return Ok(Err(bad()?));
        }
        match r.extract::<i64>() {
            Ok(i) if i >= 0 => Ok(Ok(Some(usize::try_from(i).unwrap_or(usize::MAX)))),
            Ok(i) => Ok(Err(format!(
                "endpoint {i} is out of range; allowed: 0..{n} (the node's processes) or None"
            ))),
            Err(_) => Ok(Err(bad()?)),
        }
    }
}

impl BoostChooser for PyBooster {
    fn choose(&mut self, view: &BoostView) -> Result<Option<usize>, String> {
        Python::with_gil(|py| match self.call(py, view) {
            Ok(r) => r,
            Err(e) => {
                let msg = format!("boost raised {e}");
                self.raised = Some(e);
                Err(msg)
            }
        })
    }
}

/// Runs seed 003's network of workstations (`cluster::run`): `workers`
/// threads for the replications (results do not depend on it). Returns the
/// `ClusterResult` fields as a dict, plus `config` (the full configuration).
/// Releases the GIL; Ctrl-C stops the run within ~50 ms (KeyboardInterrupt).
/// With `boost` (a Python rule for the periodic boost's target), the
/// replications run one after another on this thread, with the GIL.
#[pyfunction]
#[pyo3(signature = (config, workers=1, audit=false, boost=None))]
pub(crate) fn simulate_cosched<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyDict>,
    workers: usize,
    audit: bool,
    boost: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = typed_config::<ClusterConfig>("cosched", config)?;
    let out = match boost {
        None => run_cluster_model(py, workers, audit, |opts| cluster::run(&cfg, opts))?,
        Some(f) => {
            let mut booster = PyBooster::new(py, f)?;
            let opts = ClusterOptions {
                audit,
                ..Default::default()
            };
            let r = cluster::run_with_boost(&cfg, &opts, &mut booster);
            super::sim_batch::reraise_interrupt(py, booster.raised.take())?;
            let r = r.map_err(cluster_err)?;
            pythonize::pythonize(py, &r).map_err(|e| SimulationError::new_err(e.to_string()))?
        }
    };
    out.set_item("config", erased_values(py, &*cfg)?)?;
    Ok(out)
}

/// How seed 003's applications were sized (`calibrate::report`):
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
    use cluster::calibrate::{report, Calibration, Costs};
    let costs = match config {
        Some(c) => typed_config::<ClusterConfig>("cosched", c)?.costs(),
        None => Costs::paper(),
    };
    pythonize::pythonize(py, &report(&Calibration::of(costs)))
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
