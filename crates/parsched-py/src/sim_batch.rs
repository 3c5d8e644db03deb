//! Batch scheduling on traces and generated workloads; results as raw columns.

use super::*;

/// A column as raw native-endian bytes in a `bytearray` (`numpy.frombuffer`
/// makes a writable array of it without a copy).
pub(crate) fn col_bytes<'py, T, const N: usize>(
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
pub(crate) fn batch_columns<'py>(
    py: Python<'py>,
    r: &batch::BatchResult,
) -> PyResult<Bound<'py, PyDict>> {
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
pub(crate) fn generate_lublin<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyDict>,
    path: Option<std::path::PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    use parsched_sim::workloads::lublin;
    let mut lc = lublin::LublinConfig::generator_default();
    // procs first: it retargets the model (the other keys are kept anyway).
    let mut items: Vec<(String, Bound<'py, PyAny>)> = Vec::new();
    for (k, v) in config.iter() {
        items.push((k.extract()?, v));
    }
    items.sort_by_key(|(k, _)| k != "procs");
    let dict = PyDict::new(py);
    for (k, v) in items {
        dict.set_item(k, v)?;
    }
    apply_config(&dict, |key, v| set_value(key, v, |k, val| lc.set(k, val)))?;
    lc.validate().map_err(config_err)?;
    let load = lc.load;
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
    type Field = fn(&parsched_sim::workloads::swf::SwfRecord) -> i64;
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

/// A queue order written in Python: `priority(queue) -> scores`, called once
/// per scheduling pass with the whole queue as numpy columns (a dict: `now`,
/// `free`, and per job `submit`, `wait`, `requested`, `procs`, `user`,
/// `group`, `queue`, `partition` as int64, `fits_now` as bool), returning one
/// number per job, lowest first (docs/policies/batch-orders.md).
pub(crate) struct PyScorer {
    f: Py<PyAny>,
    /// `on_submit(ids)` / `on_complete(ids)`, if the policy has them.
    on_submit: Option<Py<PyAny>>,
    on_complete: Option<Py<PyAny>>,
    /// What the function raised, kept to re-raise a KeyboardInterrupt.
    raised: Option<PyErr>,
}

impl PyScorer {
    fn new(py: Python<'_>, f: Py<PyAny>) -> PyResult<PyScorer> {
        if !f.bind(py).is_callable() {
            return Err(ConfigError::new_err(
                "priority: not callable; allowed: a function of the queue's columns returning \
                 one score per job",
            ));
        }
        Ok(PyScorer {
            f,
            on_submit: None,
            on_complete: None,
            raised: None,
        })
    }

    fn call(
        &mut self,
        py: Python<'_>,
        now: u64,
        free: u32,
        jobs: &[parsched_core::policy::batch::OrderJob],
        out: &mut Vec<f64>,
    ) -> PyResult<Result<(), String>> {
        let d = crate::policy_py::Columns::queue(now, free, jobs);
        let r = self.f.call1(py, (d,))?;
        // numpy arrays of floats or integers without a Python object per
        // element; anything else through the sequence protocol
        use numpy::PyArrayMethods;
        let r = r.bind(py);
        if let Ok(a) = r.downcast::<numpy::PyArray1<f64>>() {
            out.extend(a.readonly().as_array().iter().copied());
            return Ok(Ok(()));
        }
        if let Ok(a) = r.downcast::<numpy::PyArray1<i64>>() {
            out.extend(a.readonly().as_array().iter().map(|&x| x as f64));
            return Ok(Ok(()));
        }
        match r.extract::<Vec<f64>>() {
            Ok(v) => {
                out.extend(v);
                Ok(Ok(()))
            }
            Err(_) => Ok(Err(format!(
                "priority returned {}; allowed: one number per queued job (a list or array), \
                 lowest first",
                r.get_type().name()?
            ))),
        }
    }
}

impl parsched_core::policy::batch::QueueScorer for PyScorer {
    fn observes(&self) -> bool {
        self.on_submit.is_some() || self.on_complete.is_some()
    }

    fn observe(&mut self, _now: u64, submitted: &[i64], completed: &[i64]) -> Result<(), String> {
        Python::with_gil(|py| {
            for (k, ids) in [(0, submitted), (1, completed)] {
                let f = if k == 0 {
                    &self.on_submit
                } else {
                    &self.on_complete
                };
                if let (Some(f), false) = (f, ids.is_empty()) {
                    if let Err(e) = f.call1(py, (numpy::PyArray1::from_slice(py, ids),)) {
                        let m = format!("raised {}", crate::policy_py::one_line(py, &e));
                        self.raised = Some(e);
                        return Err(m);
                    }
                }
            }
            Ok(())
        })
    }

    fn scores(
        &mut self,
        now: u64,
        free: u32,
        jobs: &[parsched_core::policy::batch::OrderJob],
        out: &mut Vec<f64>,
    ) -> Result<(), String> {
        Python::with_gil(|py| match self.call(py, now, free, jobs, out) {
            Ok(r) => r,
            Err(e) => {
                let msg = format!("priority raised {e}");
                self.raised = Some(e);
                Err(msg)
            }
        })
    }
}

/// Gang admission's slot rule written in Python: `place(view) -> slot | None`
/// (an object's `place` method, or a function), called once per admission
/// attempt with a dict: `now`, the job's `id`, `procs`, `requested`,
/// `submit`, per existing slot `slot_free` and `slot_jobs` (int64 numpy
/// arrays), `mpl` and `slots` (docs/policies/gang-scheduler.md).
pub(crate) struct PySlotChooser {
    f: Py<PyAny>,
    /// What the function raised, kept to re-raise a KeyboardInterrupt.
    pub(crate) raised: Option<PyErr>,
    /// Whether `None` (not now) is an answer: not for the barrier machine,
    /// which places every gang at build time.
    none_ok: bool,
}

impl PySlotChooser {
    pub(crate) fn new(py: Python<'_>, obj: Py<PyAny>) -> PyResult<PySlotChooser> {
        let o = obj.bind(py);
        let f = match o.getattr("place") {
            Ok(m) if m.is_callable() => m.unbind(),
            _ if o.is_callable() => obj,
            _ => {
                return Err(ConfigError::new_err(
                    "gang_place: not callable; allowed: a function of the admission view (or \
                     an object with a place method) returning a slot index or None",
                ))
            }
        };
        Ok(PySlotChooser {
            f,
            raised: None,
            none_ok: true,
        })
    }

    /// For a machine that must place every gang: `None` is not an answer
    /// (the caller says so; errors list only slot indices as allowed).
    pub(crate) fn every_gang(self) -> PySlotChooser {
        PySlotChooser {
            none_ok: false,
            ..self
        }
    }

    fn call(
        &mut self,
        py: Python<'_>,
        v: &parsched_core::policy::gang_place::SlotView,
    ) -> PyResult<Result<Option<usize>, String>> {
        use numpy::PyArray1;
        let d = PyDict::new(py);
        d.set_item("now", v.now)?;
        d.set_item("id", v.job.id)?;
        d.set_item("procs", v.procs)?;
        d.set_item("requested", v.job.requested)?;
        d.set_item("submit", v.job.submit)?;
        let col = |x: &[u32]| PyArray1::from_iter(py, x.iter().map(|&c| c as i64));
        d.set_item("slot_free", col(v.slot_free))?;
        d.set_item("slot_jobs", col(v.slot_jobs))?;
        d.set_item("mpl", v.mpl)?;
        d.set_item("slots", v.slots())?;
        let r = self.f.call1(py, (d,))?;
        let r = r.bind(py);
        if r.is_none() {
            return Ok(Ok(None));
        }
        let n = v.slots();
        let bad = || -> PyResult<String> {
            Ok(format!(
                "returned {} ({}); allowed: a slot index (int) in 0..={n}{}",
                parsched_core::clip(&r.repr()?.to_string(), parsched_core::ECHO_MAX),
                r.get_type().name()?,
                if self.none_ok { " or None" } else { "" }
            ))
        };
        if r.is_instance_of::<pyo3::types::PyBool>() {
            return Ok(Err(bad()?));
        }
        match r.extract::<i64>() {
            Ok(s) if s >= 0 => Ok(Ok(Some(usize::try_from(s).unwrap_or(usize::MAX)))),
            Ok(s) => Ok(Err(format!(
                "slot {s} is out of range; allowed: 0..{n} (an existing slot) or {n} (a new slot)"
            ))),
            Err(_) => Ok(Err(bad()?)),
        }
    }
}

impl parsched_core::policy::gang_place::SlotChooser for PySlotChooser {
    fn choose(
        &mut self,
        view: &parsched_core::policy::gang_place::SlotView,
    ) -> Result<Option<usize>, String> {
        Python::with_gil(|py| match self.call(py, view) {
            Ok(r) => r,
            Err(e) => {
                let msg = format!("place raised {e}");
                self.raised = Some(e);
                Err(msg)
            }
        })
    }
}

/// Runs a batch policy (FCFS, EASY, conservative backfilling, gang) on an SWF
/// trace. Returns `summary`, `report` (what loading dropped or repaired),
/// `header`, `jobs` (Batsim-style columns) and `queue` (time, length) steps;
/// writes the jobs CSV and/or SWF schedule to the given paths if asked.
#[pyfunction]
#[pyo3(signature = (trace, config, jobs_csv=None, swf_out=None, priority=None, select=None,
                    on_submit=None, on_complete=None, on_violation="strict", fallback=None,
                    gang_place=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn simulate_batch<'py>(
    py: Python<'py>,
    trace: Option<std::path::PathBuf>,
    config: &Bound<'py, PyDict>,
    jobs_csv: Option<std::path::PathBuf>,
    swf_out: Option<std::path::PathBuf>,
    priority: Option<Py<PyAny>>,
    select: Option<Py<PyAny>>,
    on_submit: Option<Py<PyAny>>,
    on_complete: Option<Py<PyAny>>,
    on_violation: &str,
    fallback: Option<&str>,
    gang_place: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let cfg = typed_config::<BatchConfig>("batch", config)?;
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
    if (priority.is_some() || select.is_some()) && gang_place.is_some() {
        return Err(config_err(parsched_core::ConfigError::new(
            "gang_place",
            "given with priority or select: gang admits in arrival order, priority and select \
             decide for fcfs, easy and conservative",
            "one of priority or select (fcfs|easy|conservative) and gang_place (gang)",
        )));
    }
    let opts = crate::policy_py::select_options(on_violation, fallback)?;
    let r = match (priority, select, gang_place) {
        (_, Some(f), _) => {
            let mut p = crate::policy_py::PySelect {
                select: f,
                on_submit,
                on_complete,
                raised: None,
            };
            let r = batch::run_select(&cfg, trace.as_deref(), &mut p, opts);
            if let Some(e) = p.raised.take() {
                return Err(e);
            }
            r
        }
        (None, None, None) => run_interruptible(py, &cancel, || {
            batch::with_cancel(&cancel, || match &trace {
                Some(t) => batch::run_trace(t, &cfg),
                None => batch::run_generated(&cfg),
            })
        })?,
        // A Python priority or slot rule runs on this thread, with the GIL:
        // one call per scheduling pass or admission attempt.
        (Some(f), None, _) => {
            let mut scorer = PyScorer::new(py, f)?;
            scorer.on_submit = on_submit;
            scorer.on_complete = on_complete;
            let r = run_hooked(&trace, &cfg, batch::BatchHook::Priority(&mut scorer));
            reraise_interrupt(py, scorer.raised.take())?;
            r
        }
        (None, None, Some(f)) => {
            let mut chooser = PySlotChooser::new(py, f)?;
            let r = run_hooked(&trace, &cfg, batch::BatchHook::GangPlace(&mut chooser));
            reraise_interrupt(py, chooser.raised.take())?;
            r
        }
    }
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
    result_dict(py, &r)
}

/// The trace (or the generated workload) run with a hook.
fn run_hooked(
    trace: &Option<std::path::PathBuf>,
    cfg: &batch::BatchConfig,
    hook: batch::BatchHook<'_>,
) -> Result<batch::BatchResult, batch::BatchError> {
    match trace {
        Some(t) => batch::run_trace_ordered(t, cfg, Some(hook)),
        None => batch::run_generated_ordered(cfg, Some(hook)),
    }
}

/// A KeyboardInterrupt a Python hook raised, raised again (not as a
/// PolicyError).
pub(crate) fn reraise_interrupt(py: Python<'_>, raised: Option<PyErr>) -> PyResult<()> {
    match raised {
        Some(e) if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) => Err(e),
        _ => Ok(()),
    }
}

/// A batch result as `simulate_batch` returns it: `policy`, `summary`,
/// `header`, `report`, `columns` and `queue`.
pub(crate) fn result_dict<'py>(
    py: Python<'py>,
    r: &batch::BatchResult,
) -> PyResult<Bound<'py, PyDict>> {
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
    out.set_item("columns", batch_columns(py, r)?)?;
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
    let violations = pyo3::types::PyList::empty(py);
    for v in &r.violations {
        let d = PyDict::new(py);
        d.set_item("time", v.time)?;
        d.set_item("job_id", v.job)?;
        d.set_item("kind", v.kind.name())?;
        d.set_item("message", &v.message)?;
        violations.append(d)?;
    }
    out.set_item("violations", violations)?;
    Ok(out)
}
