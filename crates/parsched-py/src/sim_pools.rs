//! Seed 000: the pools machine, with placement policies written in Python.

use super::*;

/// A pool-placement rule written in Python: an object with
/// `home_pool(pools) -> int` and `place(request, pools) -> [(pool, threads), ...]`.
pub(crate) struct PyPolicy {
    obj: Py<PyAny>,
}

pub(crate) fn pools_list<'py>(
    py: Python<'py>,
    pools: &[PoolState],
) -> PyResult<Bound<'py, PyList>> {
    let items = pools
        .iter()
        .map(|p| {
            let d = PyDict::new(py);
            d.set_item("size", p.size)?;
            d.set_item("idle", p.idle)?;
            d.set_item("load", p.load)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

pub(crate) fn perr(e: PyErr) -> CorePolicyError {
    CorePolicyError(format!("the Python policy raised {e}"))
}

impl PoolPolicy for PyPolicy {
    fn home_pool(&mut self, _job: JobId, pools: &[PoolState]) -> Result<PoolId, CorePolicyError> {
        Python::with_gil(|py| {
            let l = pools_list(py, pools).map_err(perr)?;
            let r = self.obj.call_method1(py, "home_pool", (l,)).map_err(perr)?;
            r.extract::<u32>(py).map(PoolId).map_err(|_| {
                CorePolicyError("home_pool must return a pool index (int >= 0)".into())
            })
        })
    }

    fn place(
        &mut self,
        req: &ForkRequest,
        pools: &[PoolState],
    ) -> Result<Placement, CorePolicyError> {
        Python::with_gil(|py| {
            let l = pools_list(py, pools).map_err(perr)?;
            let r = PyDict::new(py);
            r.set_item("job", req.job.0).map_err(perr)?;
            r.set_item("home", req.home.0).map_err(perr)?;
            r.set_item("desired", req.desired).map_err(perr)?;
            let out = self.obj.call_method1(py, "place", (r, l)).map_err(perr)?;
            let pairs: Vec<(u32, u32)> = out.extract(py).map_err(|_| {
                CorePolicyError("place must return a list of (pool, threads) pairs of ints".into())
            })?;
            Ok(Placement {
                threads: pairs.into_iter().map(|(p, n)| (PoolId(p), n)).collect(),
            })
        })
    }
}

/// Runs seed 000's processor-pool model. See `parsched._core.pyi`.
#[pyfunction]
#[pyo3(signature = (config, workers=1, audit=false, records=true, policy=None))]
pub(crate) fn simulate_pools<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyDict>,
    workers: usize,
    audit: bool,
    records: bool,
    policy: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let cfg = typed_config::<PoolsConfig>("pools", config)?;
    let opts = RunOptions {
        workers,
        audit,
        records,
    };
    let result = match policy {
        None => {
            let cancel = Arc::new(AtomicBool::new(false));
            run_interruptible(py, &cancel, || {
                parsched_sim::cancel::with_cancel(&cancel, || pools::run(&cfg, opts, None))
            })?
        }
        Some(obj) => {
            let make = move || -> Box<dyn PoolPolicy> {
                Box::new(PyPolicy {
                    obj: Python::with_gil(|py| obj.clone_ref(py)),
                })
            };
            pools::run(&cfg, RunOptions { workers: 1, ..opts }, Some(&make))
        }
    }
    .map_err(to_py_err)?;

    let s = &result.summary;
    let summary = PyDict::new(py);
    summary.set_item("mean_response_time", s.mean_response_time)?;
    summary.set_item("ci90_half_width", s.ci90_half_width)?;
    summary.set_item(
        "ci_method",
        match s.ci_method {
            pools::CiMethod::BatchMeans => "batch_means",
            _ => "replications",
        },
    )?;
    summary.set_item("actual_parallelism", s.actual_parallelism)?;
    summary.set_item("utilization", s.utilization)?;
    summary.set_item("jobs", s.jobs)?;
    summary.set_item("events", s.events)?;
    summary.set_item("wall_seconds", s.wall_seconds)?;
    summary.set_item("reps", s.reps)?;
    summary.set_item("rep_means", s.rep_means.clone())?;
    summary.set_item("context_switches", s.context_switches)?;
    summary.set_item("makespan", s.makespan)?;
    let busy_work: u64 = result.reps.iter().map(|r| r.stats.busy_work).sum();
    let busy_overhead: u64 = result.reps.iter().map(|r| r.stats.busy_overhead).sum();
    let demand: u64 = result.reps.iter().map(|r| r.stats.demand).sum();
    summary.set_item("busy_work", parsched_core::time::ticks_to_units(busy_work))?;
    summary.set_item(
        "busy_overhead",
        parsched_core::time::ticks_to_units(busy_overhead),
    )?;
    summary.set_item("demand", parsched_core::time::ticks_to_units(demand))?;

    let jobs = PyDict::new(py);
    let recs: Vec<(u32, &parsched_sim::machines::pools::machine::JobRecord)> = result
        .reps
        .iter()
        .flat_map(|r| r.records.iter().map(move |j| (r.rep, j)))
        .collect();
    macro_rules! col {
        ($name:literal, $f:expr) => {
            jobs.set_item($name, recs.iter().map($f).collect::<Vec<_>>())?;
        };
    }
    col!("rep", |(r, _)| *r);
    col!("job", |(_, j)| j.job);
    col!("arrival", |(_, j)| j.arrival);
    col!("init_start", |(_, j)| j.init_start);
    col!("para_start", |(_, j)| j.para_start);
    col!("para_end", |(_, j)| j.para_end);
    col!("final_start", |(_, j)| j.final_start);
    col!("finish", |(_, j)| j.finish);
    col!("response", |(_, j)| j.response());
    col!("d", |(_, j)| j.d);
    col!("a", |(_, j)| j.a);
    col!("pools_used", |(_, j)| j.pools_used);
    col!("home_pool", |(_, j)| j.home_pool);

    let out = PyDict::new(py);
    out.set_item("summary", summary)?;
    out.set_item("jobs", jobs)?;
    Ok(out)
}
