//! Batch policies written in Python, as the core's traits: the views they
//! get ([`Columns`], a read-only mapping of numpy columns built when asked
//! for) and the full-control adapter ([`PySelect`]: `select`, `on_submit`,
//! `on_complete`). The core checks what they return
//! (`parsched_sim::machines::batch::select`).

use super::*;
use numpy::PyArray1;
use parsched_core::policy::batch::select::{Decision, SelectPolicy, SelectView};
use parsched_core::policy::batch::OrderJob;

/// One column of a view.
pub(crate) enum Col {
    Int(i64),
    I64(Vec<i64>),
    Bool(Vec<bool>),
}

/// A policy's view: a read-only mapping of ints (`now`, `free`, …) and
/// per-job numpy columns, each made into an array when first asked for
/// (a rule reading two columns pays for two).
#[pyclass(mapping, module = "parsched._core", name = "Columns", frozen)]
pub(crate) struct Columns {
    what: &'static str,
    cols: Vec<(&'static str, Col)>,
}

impl Columns {
    /// What `priority(queue)` gets: `now`, `free`, and per waiting job (in
    /// arrival order) `submit`, `wait`, `requested`, `procs`, `user`,
    /// `group`, `queue`, `partition` (int64) and `fits_now` (bool).
    pub(crate) fn queue(now: u64, free: u32, jobs: &[OrderJob]) -> Columns {
        let col = |f: &dyn Fn(&OrderJob) -> i64| Col::I64(jobs.iter().map(f).collect());
        Columns {
            what: "queue",
            cols: vec![
                ("now", Col::Int(now as i64)),
                ("free", Col::Int(free as i64)),
                ("submit", col(&|j| j.submit as i64)),
                ("wait", col(&|j| now.saturating_sub(j.submit) as i64)),
                ("requested", col(&|j| j.requested as i64)),
                ("procs", col(&|j| j.procs as i64)),
                ("user", col(&|j| j.user as i64)),
                ("group", col(&|j| j.group as i64)),
                ("queue", col(&|j| j.queue as i64)),
                ("partition", col(&|j| j.partition as i64)),
                (
                    "fits_now",
                    Col::Bool(jobs.iter().map(|j| j.procs <= free).collect()),
                ),
            ],
        }
    }

    /// What `select(view)` gets: the queue's columns plus `total`, `id`,
    /// `reserved_at` (−1: none) and the running jobs' `running_id`,
    /// `running_procs`, `running_start`, `running_requested_end`.
    pub(crate) fn select(v: &SelectView<'_>) -> Columns {
        let (q, r, now, free) = (v.queue, v.running, v.now, v.free);
        let qc = |f: &dyn Fn(&parsched_core::policy::batch::select::WaitingJob) -> i64| {
            Col::I64(q.iter().map(f).collect())
        };
        let rc = |f: &dyn Fn(&parsched_core::policy::batch::select::StartedJob) -> i64| {
            Col::I64(r.iter().map(f).collect())
        };
        Columns {
            what: "view",
            cols: vec![
                ("now", Col::Int(now as i64)),
                ("free", Col::Int(free as i64)),
                ("total", Col::Int(v.total as i64)),
                ("id", qc(&|j| j.id)),
                ("submit", qc(&|j| j.submit as i64)),
                ("wait", qc(&|j| now.saturating_sub(j.submit) as i64)),
                ("requested", qc(&|j| j.requested as i64)),
                ("procs", qc(&|j| j.procs as i64)),
                ("user", qc(&|j| j.user as i64)),
                ("group", qc(&|j| j.group as i64)),
                ("queue", qc(&|j| j.queue as i64)),
                ("partition", qc(&|j| j.partition as i64)),
                (
                    "fits_now",
                    Col::Bool(q.iter().map(|j| j.procs <= free).collect()),
                ),
                (
                    "reserved_at",
                    qc(&|j| j.reserved_at.map_or(-1, |t| t as i64)),
                ),
                ("running_id", rc(&|j| j.id)),
                ("running_procs", rc(&|j| j.procs as i64)),
                ("running_start", rc(&|j| j.start as i64)),
                ("running_requested_end", rc(&|j| j.requested_end as i64)),
            ],
        }
    }

    fn names(&self) -> Vec<&'static str> {
        self.cols.iter().map(|c| c.0).collect()
    }
}

#[pymethods]
impl Columns {
    fn __getitem__(&self, py: Python<'_>, key: &str) -> PyResult<PyObject> {
        let Some((_, c)) = self.cols.iter().find(|c| c.0 == key) else {
            return Err(pyo3::exceptions::PyKeyError::new_err(format!(
                "{key:?}; allowed: {}",
                self.names().join(", ")
            )));
        };
        Ok(match c {
            Col::Int(x) => x.into_pyobject(py)?.into_any().unbind(),
            Col::I64(v) => PyArray1::from_slice(py, v).into_any().unbind(),
            Col::Bool(v) => PyArray1::from_slice(py, v).into_any().unbind(),
        })
    }

    fn __len__(&self) -> usize {
        self.cols.len()
    }

    fn __contains__(&self, key: &str) -> bool {
        self.cols.iter().any(|c| c.0 == key)
    }

    fn keys(&self) -> Vec<&'static str> {
        self.names()
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<PyObject> {
        Ok(pyo3::types::PyList::new(py, self.names())?
            .call_method0("__iter__")?
            .unbind())
    }

    #[pyo3(signature = (key, default=None))]
    fn get(&self, py: Python<'_>, key: &str, default: Option<PyObject>) -> PyResult<PyObject> {
        if self.__contains__(key) {
            self.__getitem__(py, key)
        } else {
            Ok(default.unwrap_or_else(|| py.None()))
        }
    }

    fn items(&self, py: Python<'_>) -> PyResult<Vec<(&'static str, PyObject)>> {
        self.cols
            .iter()
            .map(|c| Ok((c.0, self.__getitem__(py, c.0)?)))
            .collect()
    }

    fn values(&self, py: Python<'_>) -> PyResult<Vec<PyObject>> {
        self.cols
            .iter()
            .map(|c| self.__getitem__(py, c.0))
            .collect()
    }

    fn __repr__(&self) -> String {
        let n = self
            .cols
            .iter()
            .find_map(|c| match &c.1 {
                Col::I64(v) => Some(v.len()),
                _ => None,
            })
            .unwrap_or(0);
        format!(
            "<{} of {n} waiting jobs: {}>",
            self.what,
            self.names().join(", ")
        )
    }
}

/// A full-control policy written in Python: `select(view) -> Decision`,
/// with optional `on_submit(ids)` / `on_complete(ids)`.
pub(crate) struct PySelect {
    pub(crate) select: Py<PyAny>,
    pub(crate) on_submit: Option<Py<PyAny>>,
    pub(crate) on_complete: Option<Py<PyAny>>,
    /// What a hook raised, kept to re-raise a KeyboardInterrupt.
    pub(crate) raised: Option<PyErr>,
}

/// The options of a full-control run, from the Python arguments.
pub(crate) fn select_options(
    on_violation: &str,
    fallback: Option<&str>,
) -> PyResult<parsched_sim::machines::batch::SelectOptions> {
    use parsched_core::policy::batch::select::OnViolation;
    use parsched_core::policy::batch::BatchKind;
    let on_violation = match on_violation {
        "strict" => OnViolation::Strict,
        "repair" => OnViolation::Repair,
        other => {
            return Err(config_err(parsched_core::ConfigError::new(
                "on_violation",
                other,
                "strict (a bad decision is an error) or repair (dropped and recorded)",
            )))
        }
    };
    let fallback = match fallback {
        None => None,
        Some("fcfs") => Some(BatchKind::Fcfs),
        Some("easy") => Some(BatchKind::Easy),
        Some("conservative") => Some(BatchKind::Conservative),
        Some(other) => {
            return Err(config_err(parsched_core::ConfigError::new(
                "fallback",
                other,
                "fcfs, easy, conservative or None",
            )))
        }
    };
    Ok(parsched_sim::machines::batch::SelectOptions {
        on_violation,
        fallback,
        ..Default::default()
    })
}

/// The text of a Python exception, one line.
pub(crate) fn one_line(py: Python<'_>, e: &PyErr) -> String {
    let name = e
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    let msg = e.value(py).to_string().replace('\n', " ");
    format!("{name}: {msg}")
}

impl PySelect {
    /// `raised E: message`, keeping a KeyboardInterrupt to re-raise.
    fn keep(&mut self, py: Python<'_>, e: PyErr) -> String {
        let m = format!("raised {}", one_line(py, &e));
        if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
            self.raised = Some(e);
        }
        m
    }
}

/// A decision from what `select` returned: None, a `parsched.Decision`
/// (attributes) or a dict with `start`, `reserve`, `wake_at`.
fn decision(r: &Bound<'_, PyAny>, out: &mut Decision) -> Result<(), String> {
    if r.is_none() {
        return Ok(());
    }
    let field = |name: &str| -> Option<Bound<'_, PyAny>> {
        match r.downcast::<PyDict>() {
            Ok(d) => d.get_item(name).ok().flatten(),
            Err(_) => r.getattr(name).ok(),
        }
    };
    let allowed = "allowed: None, parsched.Decision(start=[ids], reserve={id: time or None}, \
                   wake_at=time or None) or a dict of those";
    if r.downcast::<PyDict>().is_err() && !r.hasattr("start").unwrap_or(false) {
        let t = r
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default();
        return Err(format!("returned {t}; {allowed}"));
    }
    if let Some(s) = field("start").filter(|s| !s.is_none()) {
        let it = s
            .try_iter()
            .map_err(|_| format!("returned a start that is not a list of job ids; {allowed}"))?;
        for x in it {
            let x = x.map_err(|e| e.to_string())?;
            out.start.push(
                x.extract::<i64>()
                    .map_err(|_| format!("returned {x} in start, not a job id; {allowed}"))?,
            );
        }
    }
    if let Some(m) = field("reserve").filter(|m| !m.is_none()) {
        let items = match m.downcast::<PyDict>() {
            Ok(d) => d.items().into_any(),
            Err(_) => m.clone(),
        };
        let it = items.try_iter().map_err(|_| {
            format!("returned a reserve that is not a mapping of job id to time; {allowed}")
        })?;
        for kv in it {
            let kv = kv.map_err(|e| e.to_string())?;
            let (id, t): (i64, Option<i64>) = kv.extract().map_err(|_| {
                format!("reserve holds {kv}, not (job id, time or None); {allowed}")
            })?;
            if t.is_some_and(|t| t < 0) {
                return Err(format!(
                    "returned a reservation of job {id} at a negative time; {allowed}"
                ));
            }
            out.reserve.push((id, t.map(|t| t as u64)));
        }
    }
    if let Some(w) = field("wake_at").filter(|w| !w.is_none()) {
        let w: i64 = w
            .extract()
            .map_err(|_| format!("returned wake_at {w}, not a time; {allowed}"))?;
        out.wake_at = Some(w.max(0) as u64);
    }
    Ok(())
}

impl SelectPolicy for PySelect {
    fn observe(&mut self, _now: u64, submitted: &[i64], completed: &[i64]) -> Result<(), String> {
        Python::with_gil(|py| {
            for (hook, ids) in [(0, submitted), (1, completed)] {
                let f = if hook == 0 {
                    &self.on_submit
                } else {
                    &self.on_complete
                };
                if let (Some(f), false) = (f, ids.is_empty()) {
                    let arr = PyArray1::from_slice(py, ids);
                    if let Err(e) = f.call1(py, (arr,)) {
                        return Err(self.keep(py, e));
                    }
                }
            }
            Ok(())
        })
    }

    fn select(&mut self, view: &SelectView<'_>, out: &mut Decision) -> Result<(), String> {
        Python::with_gil(|py| {
            let cols = Columns::select(view);
            match self.select.call1(py, (cols,)) {
                Ok(r) => decision(r.bind(py), out),
                Err(e) => Err(self.keep(py, e)),
            }
        })
    }
}
