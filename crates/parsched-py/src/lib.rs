//! Thin PyO3 bindings: convert Python values to the simulator's typed
//! configuration, run, and convert results back. No model logic lives here.

use parsched_core::policy::pools::{ForkRequest, Placement, PoolPolicy, PoolState};
use parsched_core::{JobId, PolicyError as CorePolicyError, PoolId};
use parsched_sim::batch::{self, BatchConfig, BatchError};
use parsched_sim::cluster::{self, ClusterConfig, ClusterError, ClusterOptions};
use parsched_sim::machine::MachineError;
use parsched_sim::pools::{self, PoolsConfig, RunError, RunOptions, Value};
use parsched_sim::sync::{self, SyncConfig, SyncOptions};
use parsched_sim::workload::{Arrival, BoundedGeometric};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

create_exception!(
    parsched._core,
    ConfigError,
    PyValueError,
    "A configuration value is out of range or unknown."
);
create_exception!(
    parsched._core,
    PolicyError,
    PyRuntimeError,
    "A policy returned a decision the machine cannot apply."
);
create_exception!(
    parsched._core,
    TraceError,
    PyValueError,
    "A workload trace (SWF) could not be read: the message names the line."
);
create_exception!(
    parsched._core,
    RuntimeUnavailable,
    PyRuntimeError,
    "The Linux runtime cannot work here (no cgroup freezer/cpuset, or no permission)."
);
create_exception!(
    parsched._core,
    RuntimeFailure,
    PyRuntimeError,
    "The Linux runtime failed while running jobs (spawn, I/O, timeout)."
);
create_exception!(
    parsched._core,
    SimulationError,
    PyRuntimeError,
    "The simulation failed (a program or invariant error)."
);

create_exception!(
    parsched._core,
    TimeLimitError,
    SimulationError,
    "The run passed its max_time_s of simulated time with jobs unfinished (a livelock or \
     deadlock of the configuration, or a run longer than the limit)."
);

fn to_py_err(e: RunError) -> PyErr {
    match e {
        RunError::Config(c) => config_err(c),
        RunError::Machine(MachineError::Policy(p)) => PolicyError::new_err(p.0),
        RunError::Machine(MachineError::Interrupted) => {
            pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted")
        }
        RunError::Machine(m) => SimulationError::new_err(m.to_string()),
    }
}

fn value_of(key: &str, v: &Bound<'_, PyAny>) -> PyResult<Value> {
    if v.is_instance_of::<PyBool>() {
        Ok(Value::Bool(v.extract()?))
    } else if v.is_instance_of::<PyInt>() {
        match v.extract::<i64>() {
            Ok(i) => Ok(Value::Int(i)),
            // Above i64::MAX (seeds up to 2^64 − 1): passed as text, parsed as u64.
            Err(_) => v
                .extract::<u64>()
                .map(|u| Value::Str(u.to_string()))
                .map_err(|_| {
                    ConfigError::new_err(format!(
                        "{key}: integer out of range; allowed: 0 <= value < 2^64"
                    ))
                }),
        }
    } else if v.is_instance_of::<PyFloat>() {
        Ok(Value::Float(v.extract()?))
    } else if v.is_instance_of::<PyString>() {
        Ok(Value::Str(v.extract()?))
    } else if v.is_instance_of::<PyList>()
        || v.is_instance_of::<PyTuple>()
        || v.hasattr("__array__")?
    {
        v.extract::<Vec<f64>>().map(Value::List).map_err(|_| {
            ConfigError::new_err(format!("{key}: not a list of numbers; allowed: numbers"))
        })
    } else {
        Err(ConfigError::new_err(format!(
            "{key}: value of type {} is not accepted; allowed: a bool, int, float, str or a \
             list of numbers",
            v.get_type().name()?
        )))
    }
}

/// Calls `f(key, value)` for every entry of a config dict whose value is not
/// `None` (a `None` keeps the default).
fn apply_config<'py>(
    config: &Bound<'py, PyDict>,
    mut f: impl FnMut(&str, &Bound<'py, PyAny>) -> PyResult<()>,
) -> PyResult<()> {
    for (k, v) in config.iter() {
        let key: String = k
            .extract()
            .map_err(|_| ConfigError::new_err("config keys must be strings"))?;
        if !v.is_none() {
            f(&key, &v)?;
        }
    }
    Ok(())
}

/// A core `ConfigError` as the Python `ConfigError`, with its parts as the
/// attributes `field`, `message` and `allowed` (the message is
/// `FIELD: problem; allowed: ...`).
fn config_err(e: parsched_core::ConfigError) -> PyErr {
    let err = ConfigError::new_err(e.to_string());
    Python::with_gil(|py| {
        let v = err.value(py);
        // Setting attributes on a fresh exception instance cannot fail.
        let _ = v.setattr("field", &e.field);
        let _ = v.setattr("message", &e.message);
        let _ = v.setattr("allowed", &e.allowed);
    });
    err
}

/// Converts a Python value and hands it to a typed config's `set`.
fn set_value(
    key: &str,
    v: &Bound<'_, PyAny>,
    set: impl FnOnce(&str, &Value) -> Result<(), parsched_core::ConfigError>,
) -> PyResult<()> {
    let val = value_of(key, v)?;
    set(key, &val).map_err(config_err)
}

fn arrivals_of(v: &Bound<'_, PyAny>) -> PyResult<Vec<Arrival>> {
    let d: &Bound<'_, PyDict> = v
        .downcast()
        .map_err(|_| ConfigError::new_err("arrivals: not a dict of columns; allowed: {'arrival': [...], 'd': [...], 'para_work': [...]}"))?;
    let col = |name: &str| -> PyResult<Option<Vec<f64>>> {
        match d.get_item(name)? {
            None => Ok(None),
            Some(c) => c.extract::<Vec<f64>>().map(Some).map_err(|_| {
                ConfigError::new_err(format!(
                    "arrivals: column {name} is not a list of numbers; allowed: numbers"
                ))
            }),
        }
    };
    let arrival = col("arrival")?.ok_or_else(|| {
        ConfigError::new_err(
            "arrivals: column arrival is missing; allowed: columns arrival, d, para_work",
        )
    })?;
    let dd = col("d")?.ok_or_else(|| {
        ConfigError::new_err(
            "arrivals: column d is missing; allowed: columns arrival, d, para_work",
        )
    })?;
    let work = col("para_work")?;
    if dd.len() != arrival.len() || work.as_ref().is_some_and(|w| w.len() != arrival.len()) {
        return Err(ConfigError::new_err(
            "arrivals: columns have different lengths; allowed: equal-length columns",
        ));
    }
    let mut out = Vec::with_capacity(arrival.len());
    for (i, (&t, &dv)) in arrival.iter().zip(&dd).enumerate() {
        if dv.fract() != 0.0 || !(1.0..4e9).contains(&dv) {
            return Err(config_err(parsched_core::ConfigError::new(
                format!("arrivals row {}: d", i + 1),
                format!("{dv} is not a positive integer"),
                "1 <= d <= P",
            )));
        }
        out.push(Arrival {
            arrival: t,
            d: dv as u32,
            // NaN: the default demand (an empty cell of an arrivals file)
            para_work: work.as_ref().map(|w| w[i]).filter(|w| !w.is_nan()),
        });
    }
    Ok(out)
}

/// A pool-placement rule written in Python: an object with
/// `home_pool(pools) -> int` and `place(request, pools) -> [(pool, threads), ...]`.
struct PyPolicy {
    obj: Py<PyAny>,
}

fn pools_list<'py>(py: Python<'py>, pools: &[PoolState]) -> PyResult<Bound<'py, PyList>> {
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

fn perr(e: PyErr) -> CorePolicyError {
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
fn simulate_pools<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyDict>,
    workers: usize,
    audit: bool,
    records: bool,
    policy: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let ModelConfig::Pools(cfg) = ModelConfig::build("pools", config)? else {
        unreachable!("build(\"pools\") makes a pools config")
    };
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
    let recs: Vec<(u32, &parsched_sim::machine::JobRecord)> = result
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

/// Runs seed 001's iterative-barrier model (times in ms). Returns the
/// `SyncResult` fields as a dict, plus `config` (the full configuration).
#[pyfunction]
#[pyo3(signature = (config, audit=false))]
fn simulate_barrier<'py>(
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
        parsched_sim::cancel::with_cancel(&cancel, || sync::run(&cfg, opts))
    })?
    .map_err(to_py_err)?;
    let out =
        pythonize::pythonize(py, &result).map_err(|e| SimulationError::new_err(e.to_string()))?;
    let c = pythonize::pythonize(py, &cfg).map_err(|e| SimulationError::new_err(e.to_string()))?;
    out.set_item("config", c)?;
    Ok(out)
}

fn cluster_err(e: ClusterError) -> PyErr {
    match e {
        ClusterError::Config(c) => config_err(c),
        e @ ClusterError::TimeLimit(..) => TimeLimitError::new_err(e.to_string()),
        ClusterError::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted"),
        e => SimulationError::new_err(e.to_string()),
    }
}

/// `cancel_runs()` calls so far: a run that sees it change stops as on
/// Ctrl-C (runs on threads other than the main one never see the signal).
static CANCEL_CALLS: AtomicU64 = AtomicU64::new(0);

/// Stops every simulation in progress (pools, barrier, batch, cosched), in
/// any thread: each ends within ~50 ms with `KeyboardInterrupt` (for thread
/// pools: Ctrl-C reaches only the main thread).
#[pyfunction]
fn cancel_runs() {
    CANCEL_CALLS.fetch_add(1, Ordering::SeqCst);
}

/// The same as `cancel_runs()` (its first name, when only cosched runs
/// watched it).
#[pyfunction]
fn cancel_cosched() {
    cancel_runs();
}

/// Runs `f` on a thread of its own with the GIL released, checking for
/// Python signals every 50 ms meanwhile: on one (Ctrl-C: the
/// `KeyboardInterrupt` its handler raises) sets `cancel`, waits for `f` to
/// return (it watches `cancel`) and raises the signal's exception; likewise
/// after a `cancel_cosched()` call (as `KeyboardInterrupt`).
fn run_interruptible<T: Send>(
    py: Python<'_>,
    cancel: &AtomicBool,
    f: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    let generation = CANCEL_CALLS.load(Ordering::SeqCst);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        // Named, so that one can see from outside that a run is under way
        // (/proc/PID/task/*/comm; the tests use it).
        std::thread::Builder::new()
            .name("parsched-run".into())
            .spawn_scoped(scope, move || {
                // The receiver outlives this thread (it waits for the value).
                let _ = tx.send(f());
            })
            .map_err(|e| SimulationError::new_err(format!("cannot start a thread: {e}")))?;
        let mut rx = rx;
        loop {
            // (the receiver moves in and out: it is Send but not Sync)
            let (got, back) = py.allow_threads(move || {
                let got = rx.recv_timeout(Duration::from_millis(50));
                (got, rx)
            });
            rx = back;
            match got {
                Ok(v) => return Ok(v),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    let signalled = py.check_signals().err().or_else(|| {
                        (CANCEL_CALLS.load(Ordering::SeqCst) != generation)
                            .then(|| pyo3::exceptions::PyKeyboardInterrupt::new_err("cancelled"))
                    });
                    if let Some(e) = signalled {
                        cancel.store(true, Ordering::Relaxed);
                        let _ = py.allow_threads(move || rx.recv());
                        return Err(e);
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(SimulationError::new_err("the simulation thread panicked"))
                }
            }
        }
    })
}

/// Runs seed 003's network of workstations (`cluster::run`): `workers`
/// threads for the replications (results do not depend on it). Returns the
/// `ClusterResult` fields as a dict, plus `config` (the full configuration).
/// Releases the GIL; Ctrl-C stops the run within ~50 ms (KeyboardInterrupt).
#[pyfunction]
#[pyo3(signature = (config, workers=1, audit=false))]
fn simulate_cosched<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyDict>,
    workers: usize,
    audit: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let ModelConfig::Cosched(cfg) = ModelConfig::build("cosched", config)? else {
        unreachable!("build(\"cosched\") makes a cosched config")
    };
    let cancel = Arc::new(AtomicBool::new(false));
    let opts = ClusterOptions {
        workers: workers.max(1),
        audit,
        cancel: Some(cancel.clone()),
    };
    let result =
        run_interruptible(py, &cancel, || cluster::run(&cfg, &opts))?.map_err(cluster_err)?;
    let out =
        pythonize::pythonize(py, &result).map_err(|e| SimulationError::new_err(e.to_string()))?;
    out.set_item("config", cosched_values(py, &cfg)?)?;
    Ok(out)
}

/// `dispatch_table` as `dispadmin -c TS -g` prints it (RES=1000), the text
/// `ClusterConfig::set` reads back to the same table.
fn dispadmin_text(t: &parsched_core::policy::ts::DispatchTable) -> String {
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
fn cosched_values<'py>(py: Python<'py>, cfg: &ClusterConfig) -> PyResult<Bound<'py, PyDict>> {
    let d = values_of(py, cfg, cluster::KEYS)?;
    d.set_item(
        "dispatch_table",
        cfg.dispatch_table.as_ref().map(dispadmin_text),
    )?;
    Ok(d)
}

fn batch_err(e: BatchError) -> PyErr {
    match e {
        BatchError::Config(c) => config_err(c),
        BatchError::Swf(s) => TraceError::new_err(s.to_string()),
        BatchError::Policy(p) => PolicyError::new_err(p.0),
        BatchError::Input(m) => ConfigError::new_err(m),
        BatchError::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted"),
    }
}

/// A column as raw native-endian bytes in a `bytearray` (`numpy.frombuffer`
/// makes a writable array of it without a copy).
fn col_bytes<'py, T, const N: usize>(
    py: Python<'py>,
    n: usize,
    f: impl Fn(usize) -> T,
    to: impl Fn(T) -> [u8; N],
) -> Bound<'py, pyo3::types::PyByteArray> {
    let mut v = Vec::with_capacity(n * N);
    for i in 0..n {
        v.extend_from_slice(&to(f(i)));
    }
    pyo3::types::PyByteArray::new(py, &v)
}

/// The per-job columns of a batch result as raw arrays (no per-job Python
/// object): `{name: bytes}` with int64 times and counts, float64 `stretch`
/// and `bounded_slowdown`, uint8 `killed`, and `allocated_resources` as
/// UTF-8 text `resources_data` with int64 `resources_offsets` (n + 1, Arrow's
/// layout).
fn batch_columns<'py>(py: Python<'py>, r: &batch::BatchResult) -> PyResult<Bound<'py, PyDict>> {
    let n = r.jobs.len();
    let (jobs, out) = (&r.jobs, &r.outcomes);
    let d = PyDict::new(py);
    let i64s = |f: &dyn Fn(usize) -> i64| col_bytes(py, n, f, i64::to_ne_bytes);
    d.set_item("job_id", i64s(&|i| jobs[i].id))?;
    d.set_item("submission_time", i64s(&|i| jobs[i].submit as i64))?;
    d.set_item(
        "requested_number_of_resources",
        i64s(&|i| jobs[i].procs as i64),
    )?;
    d.set_item("requested_time", i64s(&|i| jobs[i].requested as i64))?;
    d.set_item("starting_time", i64s(&|i| out[i].start as i64))?;
    d.set_item(
        "execution_time",
        i64s(&|i| (out[i].end - out[i].start) as i64),
    )?;
    d.set_item("finish_time", i64s(&|i| out[i].end as i64))?;
    d.set_item(
        "waiting_time",
        i64s(&|i| (out[i].start - jobs[i].submit) as i64),
    )?;
    d.set_item(
        "turnaround_time",
        i64s(&|i| (out[i].end - jobs[i].submit) as i64),
    )?;
    d.set_item(
        "killed",
        col_bytes(py, n, |i| out[i].killed as u8, u8::to_ne_bytes),
    )?;
    d.set_item("slot", i64s(&|i| out[i].slot as i64))?;
    let stretch = |i: usize| {
        let (exec, turn) = (out[i].end - out[i].start, out[i].end - jobs[i].submit);
        if exec > 0 {
            turn as f64 / exec as f64
        } else if turn > 0 {
            f64::INFINITY
        } else {
            1.0
        }
    };
    d.set_item("stretch", col_bytes(py, n, stretch, f64::to_ne_bytes))?;
    let bsld = |i: usize| {
        let turn = out[i].end - jobs[i].submit;
        (turn as f64 / (r.run_time(i) as f64).max(r.bsld_tau)).max(1.0)
    };
    d.set_item("bounded_slowdown", col_bytes(py, n, bsld, f64::to_ne_bytes))?;
    let mut text = String::new();
    let mut offsets: Vec<u8> = Vec::with_capacity((n + 1) * 8);
    offsets.extend_from_slice(&0i64.to_ne_bytes());
    for i in 0..n {
        for (k, &(a, b)) in r.resources(i).iter().enumerate() {
            use std::fmt::Write;
            let sep = if k > 0 { " " } else { "" };
            let _ = if a == b {
                write!(text, "{sep}{a}")
            } else {
                write!(text, "{sep}{a}-{b}")
            };
        }
        offsets.extend_from_slice(&(text.len() as i64).to_ne_bytes());
    }
    d.set_item(
        "resources_data",
        pyo3::types::PyBytes::new(py, text.as_bytes()),
    )?;
    d.set_item("resources_offsets", pyo3::types::PyBytes::new(py, &offsets))?;
    Ok(d)
}

/// Generates a Lublin–Feitelson workload. `config`: the generator's keys
/// (`procs`, `jobs`, `seed`, `include_types`) and `load`, the offered load
/// its arrivals are scaled to (None: the model's own). With `path`, writes
/// it as SWF (gzip-compressed when the name ends in `.gz`) and returns
/// `{"factor", "jobs"}`; without, returns `{"factor", "jobs", "columns"}`,
/// the SWF fields as raw native-endian int64 columns (`bytearray`s).
#[pyfunction]
#[pyo3(signature = (config, path=None))]
fn generate_lublin<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyDict>,
    path: Option<std::path::PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    use parsched_sim::lublin;
    let mut lc = lublin::LublinConfig::for_machine(batch::config::LUBLIN_DEFAULT_PROCS);
    lc.jobs = 10_000;
    let mut load = None;
    // procs first: it retargets the model (the other keys are kept anyway).
    let mut items: Vec<(String, Bound<'py, PyAny>)> = Vec::new();
    for (k, v) in config.iter() {
        items.push((k.extract()?, v));
    }
    items.sort_by_key(|(k, _)| k != "procs");
    for (key, v) in &items {
        if v.is_none() {
            continue;
        }
        if key == "load" {
            let l: f64 = v.extract().map_err(|_| {
                config_err(parsched_core::ConfigError::new(
                    "load",
                    "not a number",
                    "a number in (0, 100], or None (the model's own arrivals)",
                ))
            })?;
            if !(l > 0.0 && l <= 100.0) {
                return Err(config_err(parsched_core::ConfigError::new(
                    "load",
                    format!("{l} is not an offered load"),
                    "a number in (0, 100], or None (the model's own arrivals)",
                )));
            }
            load = Some(l);
            continue;
        }
        set_value(key, v, |k, val| match k {
            "procs" | "jobs" | "seed" | "include_types" => lc.set(k, val),
            _ => Err(parsched_core::ConfigError::new(
                k,
                "unknown key",
                "procs, jobs, seed, include_types, load",
            )),
        })?;
    }
    if !(1..=batch::config::MAX_WORKLOAD_JOBS).contains(&lc.jobs) {
        return Err(config_err(parsched_core::ConfigError::new(
            "jobs",
            format!("{} jobs", lc.jobs),
            format!("an integer in 1..={}", batch::config::MAX_WORKLOAD_JOBS),
        )));
    }
    lc.validate().map_err(config_err)?;
    let out = PyDict::new(py);
    let cancel = Arc::new(AtomicBool::new(false));
    let stop = || cancel.load(Ordering::Relaxed);
    if let Some(path) = path {
        let gz = path.extension().is_some_and(|e| e == "gz");
        let res = run_interruptible(py, &cancel, || -> std::io::Result<Option<f64>> {
            let file = std::fs::File::create(&path)?;
            if gz {
                // buffered before the encoder: it is slow on small writes
                let e = flate2::write::GzEncoder::new(file, flate2::Compression::default());
                let mut w = std::io::BufWriter::with_capacity(1 << 16, e);
                let r = lublin::write_swf_stoppable(&lc, load, &mut w, &stop)?;
                w.into_inner().map_err(|e| e.into_error())?.finish()?;
                Ok(r)
            } else {
                let w = std::io::BufWriter::with_capacity(1 << 16, file);
                lublin::write_swf_stoppable(&lc, load, w, &stop)
            }
        })?
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display())))?;
        let factor =
            res.ok_or_else(|| pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted"))?;
        out.set_item("factor", factor)?;
        out.set_item("jobs", lc.jobs)?;
        return Ok(out);
    }
    let recs = run_interruptible(py, &cancel, || lublin::records_at_load(&lc, load, &stop))?
        .map_err(config_err)?
        .ok_or_else(|| pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted"))?;
    let (recs, factor) = recs;
    let n = recs.len();
    let cols = PyDict::new(py);
    type Field = fn(&parsched_sim::swf::SwfRecord) -> i64;
    let int_cols: [(&str, Field); 11] = [
        ("job_number", |r| r.job_number),
        ("submit_time", |r| r.submit_time),
        ("wait_time", |r| r.wait_time),
        ("run_time", |r| r.run_time),
        ("allocated_procs", |r| r.allocated_procs),
        ("requested_procs", |r| r.requested_procs),
        ("requested_time", |r| r.requested_time),
        ("status", |r| r.status),
        ("user_id", |r| r.user_id),
        ("group_id", |r| r.group_id),
        ("queue", |r| r.queue),
    ];
    for (name, f) in int_cols {
        cols.set_item(name, col_bytes(py, n, |i| f(&recs[i]), i64::to_ne_bytes))?;
    }
    out.set_item("factor", factor)?;
    out.set_item("jobs", n)?;
    out.set_item("columns", cols)?;
    Ok(out)
}

/// Runs a batch policy (FCFS, EASY, conservative backfilling, gang) on an SWF
/// trace. Returns `summary`, `report` (what loading dropped or repaired),
/// `header`, `jobs` (Batsim-style columns) and `queue` (time, length) steps;
/// writes the jobs CSV and/or SWF schedule to the given paths if asked.
#[pyfunction]
#[pyo3(signature = (trace, config, jobs_csv=None, swf_out=None))]
fn simulate_batch<'py>(
    py: Python<'py>,
    trace: Option<std::path::PathBuf>,
    config: &Bound<'py, PyDict>,
    jobs_csv: Option<std::path::PathBuf>,
    swf_out: Option<std::path::PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let ModelConfig::Batch(cfg) = ModelConfig::build("batch", config)? else {
        unreachable!("build(\"batch\") makes a batch config")
    };
    let cancel = Arc::new(AtomicBool::new(false));
    let generated = cfg.workload == batch::WorkloadKind::Lublin;
    match (&trace, generated) {
        (Some(_), true) => {
            return Err(config_err(parsched_core::ConfigError::new(
                "trace",
                "a trace file is given with workload=lublin",
                "a trace with workload=trace, or no trace with workload=lublin",
            )))
        }
        (None, false) => {
            return Err(config_err(parsched_core::ConfigError::new(
                "trace",
                "no trace file given",
                "an SWF file (.swf or .swf.gz), or workload=lublin to generate one",
            )))
        }
        _ => {}
    }
    let r = run_interruptible(py, &cancel, || {
        batch::with_cancel(&cancel, || match &trace {
            Some(t) => batch::run_trace(t, &cfg),
            None => batch::run_generated(&cfg),
        })
    })?
    .map_err(batch_err)?;
    let write = |path: &std::path::Path,
                 f: &dyn Fn(std::fs::File) -> std::io::Result<()>|
     -> PyResult<()> {
        let file = std::fs::File::create(path).map_err(|e| {
            pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display()))
        })?;
        f(file)
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display())))
    };
    if let Some(p) = &jobs_csv {
        write(p, &|f| r.write_jobs_csv(std::io::BufWriter::new(f)))?;
    }
    if let Some(p) = &swf_out {
        write(p, &|f| r.write_swf(std::io::BufWriter::new(f)))?;
    }
    let pyz = |v: &dyn erased::Ser| v.to_py(py);
    let out = PyDict::new(py);
    out.set_item("policy", r.policy)?;
    out.set_item("summary", pyz(&r.summary)?)?;
    out.set_item("header", pyz(&r.header)?)?;
    let report = PyDict::new(py);
    for (reason, n) in r.report.reasons() {
        report.set_item(reason, n)?;
    }
    out.set_item("report", report)?;
    out.set_item("columns", batch_columns(py, &r)?)?;
    let queue = PyDict::new(py);
    let nq = r.queue_length.len();
    let ql = &r.queue_length;
    queue.set_item(
        "time",
        col_bytes(py, nq, |i| ql[i].0 as i64, i64::to_ne_bytes),
    )?;
    queue.set_item(
        "length",
        col_bytes(py, nq, |i| ql[i].1 as i64, i64::to_ne_bytes),
    )?;
    out.set_item("queue", queue)?;
    Ok(out)
}

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

/// Runs real jobs under a policy on this Linux machine (`parsched run`). The
/// `spec` dict maps onto the runtime's `RunSpec` (see docs/runtime.md); returns
/// `{"jobs": [JobReport...], "controller": ControllerStats}`. Blocks until all
/// jobs end, with the GIL released; the controller handles SIGINT/SIGTERM
/// itself (it thaws and stops the jobs). Only in builds with the `runtime`
/// feature on Linux; elsewhere the module has no `run_jobs`.
#[cfg(all(feature = "runtime", target_os = "linux"))]
#[pyfunction]
fn run_jobs<'py>(py: Python<'py>, spec: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
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

/// One model's typed configuration, built from a Python dict by the model's
/// own `set` (so keys, types and ranges are the core's).
enum ModelConfig {
    Pools(PoolsConfig),
    Barrier(SyncConfig),
    Batch(BatchConfig),
    Cosched(Box<ClusterConfig>),
}

const MODELS: &str = "pools, barrier, batch, cosched";

fn unknown_model(model: &str) -> PyErr {
    config_err(parsched_core::ConfigError::new(
        "model",
        format!(
            "{:?} is not a model",
            parsched_core::clip(model, parsched_core::ECHO_MAX)
        ),
        MODELS,
    ))
}

impl ModelConfig {
    fn build(model: &str, config: &Bound<'_, PyDict>) -> PyResult<ModelConfig> {
        Ok(match model {
            "pools" => {
                let mut cfg = PoolsConfig::default();
                let mut arrivals = None;
                apply_config(config, |key, v| {
                    if key == "arrivals" {
                        arrivals = Some(arrivals_of(v)?);
                        return Ok(());
                    }
                    set_value(key, v, |k, val| cfg.set(k, val))
                })?;
                cfg.arrivals = arrivals;
                ModelConfig::Pools(cfg)
            }
            "barrier" => {
                let mut cfg = SyncConfig::default();
                apply_config(config, |key, v| set_value(key, v, |k, val| cfg.set(k, val)))?;
                ModelConfig::Barrier(cfg)
            }
            "batch" => {
                let mut cfg = BatchConfig::default();
                apply_config(config, |key, v| set_value(key, v, |k, val| cfg.set(k, val)))?;
                ModelConfig::Batch(cfg)
            }
            "cosched" => {
                let mut cfg = ClusterConfig::default();
                apply_config(config, |key, v| {
                    if key == "jobs"
                        && (v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>())
                    {
                        // a list of application names: the core's comma-separated text
                        let names: Vec<String> = v.extract().map_err(|_| {
                            config_err(parsched_core::ConfigError::new(
                                "jobs",
                                "not a list of names",
                                "application names (LIFE3.5, LIFE12, MG, LU, EP)",
                            ))
                        })?;
                        return cfg
                            .set(key, &Value::Str(names.join(",")))
                            .map_err(config_err);
                    }
                    set_value(key, v, |k, val| cfg.set(k, val))
                })?;
                ModelConfig::Cosched(Box::new(cfg))
            }
            _ => return Err(unknown_model(model)),
        })
    }

    fn validate(&self) -> Result<(), parsched_core::ConfigError> {
        match self {
            ModelConfig::Pools(c) => c.validate(),
            ModelConfig::Barrier(c) => c.validate(),
            ModelConfig::Batch(c) => c.validate(),
            ModelConfig::Cosched(c) => c.validate(),
        }
    }
}

/// Builds `model`'s configuration from `config` (keys as in `*_keys()`; `None`
/// values keep the default) and checks it with the core's `validate`. Raises
/// `ConfigError` (attributes `field`, `message`, `allowed`) on the first
/// problem. `model` is `pools`, `barrier`, `batch` or `cosched`.
#[pyfunction]
fn validate_config(model: &str, config: &Bound<'_, PyDict>) -> PyResult<()> {
    ModelConfig::build(model, config)?
        .validate()
        .map_err(config_err)
}

/// Where a key's value sits in the serialised configuration when it is not
/// a field of that name (top level, or in a nested struct such as
/// `overheads` or `rules`).
const SERIALISED_AS: &[(&str, &str, &str)] = &[
    ("W", "overheads", "w"),
    ("S", "overheads", "s"),
    ("procs_rule", "rules", "procs"),
];

/// `keys` with their values in the serialised `cfg`.
fn values_of<'py, T: serde::Serialize>(
    py: Python<'py>,
    cfg: &T,
    keys: &[&str],
) -> PyResult<Bound<'py, PyDict>> {
    let tree =
        pythonize::pythonize(py, cfg).map_err(|e| SimulationError::new_err(e.to_string()))?;
    let tree: Bound<'py, PyDict> = tree
        .downcast_into()
        .map_err(|_| SimulationError::new_err("a configuration did not serialise to a dict"))?;
    let out = PyDict::new(py);
    for &key in keys {
        let renamed = SERIALISED_AS.iter().find(|(k, _, _)| *k == key);
        let mut found = match renamed {
            Some((_, table, name)) => match tree.get_item(table)? {
                Some(t) => t.downcast_into::<PyDict>()?.get_item(name)?,
                None => None,
            },
            None => tree.get_item(key)?,
        };
        if found.is_none() && renamed.is_none() {
            // a field of a nested struct (e.g. `overheads.p0`, `rules.cancelled`)
            for (_, sub) in tree.iter() {
                if let Ok(sub) = sub.downcast::<PyDict>() {
                    if let Some(v) = sub.get_item(key)? {
                        found = Some(v);
                        break;
                    }
                }
            }
        }
        let v = found.ok_or_else(|| {
            SimulationError::new_err(format!("key {key} is missing from the serialised config"))
        })?;
        out.set_item(key, v)?;
    }
    Ok(out)
}

/// The value of every key of `model`'s configuration (`pools_keys()`,
/// `barrier_keys()`, `batch_keys()`, `cosched_keys()`), as `validate_config` / `simulate_*`
/// read them back: the core's defaults when `config` is empty.
#[pyfunction]
#[pyo3(signature = (model, config=None))]
fn config_values<'py>(
    py: Python<'py>,
    model: &str,
    config: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let empty = PyDict::new(py);
    match ModelConfig::build(model, config.unwrap_or(&empty))? {
        ModelConfig::Pools(c) => values_of(py, &c, pools::KEYS),
        ModelConfig::Barrier(c) => values_of(py, &c, sync::KEYS),
        ModelConfig::Batch(c) => values_of(py, &c, batch::KEYS),
        ModelConfig::Cosched(c) => cosched_values(py, &c),
    }
}

/// What a run of `model`'s configuration `config` will cost, estimated from
/// the configuration alone (an upper bound): `{"sim_time": ..., "events":
/// ...}` (simulated time in the model's unit: ms for barrier). `validate`
/// refuses a run estimated above its `max_events`. Models: barrier.
#[pyfunction]
fn estimate_run<'py>(
    py: Python<'py>,
    model: &str,
    config: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    match ModelConfig::build(model, config)? {
        ModelConfig::Barrier(c) => {
            let e = c.estimate();
            out.set_item("sim_time", e.sim_time_ms)?;
            out.set_item("events", e.events)?;
        }
        _ => {
            return Err(config_err(parsched_core::ConfigError::new(
                "model",
                format!("no estimate for {model}"),
                "barrier",
            )))
        }
    }
    Ok(out)
}

/// Seed 000's bounded-geometric desired parallelism on 1..=`max` with mean
/// `mean`: the parameter q of the geometric law P(d = k) ∝ (1 − q)^(k−1)·q
/// that, truncated at `max`, has that mean (the workload generator's own
/// solve). Raises `ConfigError` (field `D`) when the mean cannot be reached.
#[pyfunction]
fn bounded_geometric_q(mean: f64, max: u32) -> PyResult<f64> {
    BoundedGeometric::with_mean(mean, max)
        .map(|g| g.q)
        .map_err(config_err)
}

/// Seed 001's t_p and t_w (eqs. 1–4) of a barrier configuration (keys as
/// for `simulate_barrier`; unset keys take their defaults): the one
/// computation, behind `BarrierConfig.t_p` / `t_w`.
#[pyfunction]
fn barrier_moments(config: &Bound<'_, PyDict>) -> PyResult<(f64, f64)> {
    match ModelConfig::build("barrier", config)? {
        ModelConfig::Barrier(c) => Ok((c.t_p(), c.t_w())),
        _ => Err(unknown_model("barrier")),
    }
}

/// t_w per unit of var for a gang of `n` (`dist`: "uniform" or
/// "exponential"; 0 for "empirical").
#[pyfunction]
fn tw_per_unit_var(n: u32, dist: &str) -> PyResult<f64> {
    let d = match dist {
        "uniform" => sync::ComputeDist::Uniform,
        "exponential" => sync::ComputeDist::Exponential,
        "empirical" => sync::ComputeDist::Empirical,
        other => {
            return Err(config_err(parsched_core::ConfigError::new(
                "dist",
                format!(
                    "unknown distribution {:?}",
                    parsched_core::clip(other, parsched_core::ECHO_MAX)
                ),
                "uniform, exponential, empirical",
            )))
        }
    };
    Ok(sync::tw_per_unit_var(n, d))
}

/// H_n = 1 + 1/2 + … + 1/n, correctly rounded.
#[pyfunction]
fn harmonic_number(n: u32) -> f64 {
    sync::harmonic_number(n)
}

/// Mean and half-width of the two-sided 90% Student-t confidence interval of
/// independent observations (`stats::mean_ci90`; the half-width is NaN for
/// one value): the core's intervals, for `parsched sweep`'s replication targets.
#[pyfunction]
fn mean_ci90(values: Vec<f64>) -> (f64, f64) {
    parsched_sim::stats::mean_ci90(&values)
}

/// Checks an arrivals list (columns `arrival`, `d`, optional `para_work`)
/// with the core's rules; `procs` (if given) bounds d. Raises `ConfigError`
/// naming the row (`arrivals row N: COLUMN`).
#[pyfunction]
#[pyo3(signature = (columns, procs=None))]
fn check_arrivals(columns: &Bound<'_, PyAny>, procs: Option<u32>) -> PyResult<()> {
    let list = arrivals_of(columns)?;
    parsched_sim::workload::check_arrivals(&list, procs.unwrap_or(u32::MAX)).map_err(config_err)
}

/// The keys `simulate_cosched` accepts, in documentation order.
#[pyfunction]
fn cosched_keys() -> Vec<&'static str> {
    cluster::KEYS.to_vec()
}

/// The keys `simulate_batch` accepts.
#[pyfunction]
fn batch_keys() -> Vec<&'static str> {
    batch::KEYS.to_vec()
}

/// The keys `simulate_barrier` accepts.
#[pyfunction]
fn barrier_keys() -> Vec<&'static str> {
    sync::KEYS.to_vec()
}

/// Default values of `simulate_barrier`'s keys.
#[pyfunction]
fn barrier_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    pythonize::pythonize(py, &SyncConfig::default())
        .map_err(|e| SimulationError::new_err(e.to_string()))
}

/// The keys `simulate_pools` accepts, in documentation order.
#[pyfunction]
fn pools_keys() -> Vec<&'static str> {
    pools::KEYS.to_vec()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate_pools, m)?)?;
    m.add_function(wrap_pyfunction!(pools_keys, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_barrier, m)?)?;
    m.add_function(wrap_pyfunction!(barrier_keys, m)?)?;
    m.add_function(wrap_pyfunction!(barrier_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_batch, m)?)?;
    m.add_function(wrap_pyfunction!(batch_keys, m)?)?;
    m.add_function(wrap_pyfunction!(generate_lublin, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_cosched, m)?)?;
    m.add_function(wrap_pyfunction!(cosched_keys, m)?)?;
    m.add_function(wrap_pyfunction!(cancel_cosched, m)?)?;
    m.add_function(wrap_pyfunction!(cancel_runs, m)?)?;
    #[cfg(all(feature = "runtime", target_os = "linux"))]
    m.add_function(wrap_pyfunction!(run_jobs, m)?)?;
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
