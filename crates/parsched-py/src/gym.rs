//! The Gymnasium environment's Rust side (`parsched.gym`): episodes of a
//! batch trace driven one decision at a time
//! (`parsched_sim::machines::batch::stepper`). One environment
//! ([`BatchEnvCore`]) or several stepped in one call with the GIL released
//! ([`BatchVecEnvCore`]). Episode starts are drawn in Python (the
//! environments' `np_random`); the observations are numpy arrays written
//! here.

use super::*;
use numpy::{PyArray1, PyArray2, PyArray3, PyArrayMethods};
use parsched_core::policy::batch::QueueOrder;
use parsched_core::schema::Choice;
use parsched_core::ConfigError;
use parsched_sim::machines::batch::stepper::{
    Action, RewardMetric, RewardMode, StepConfig, Stepper, JOB_FEATURES, MACHINE_FEATURES,
};
use parsched_sim::machines::batch::{self, BatchConfig, BatchError, WorkloadKind};
use parsched_sim::workloads::swf::BatchJob;
use std::collections::HashMap;
use std::sync::Arc;

/// One environment's observation: the window's jobs and the machine.
type Obs<'py> = (Bound<'py, PyArray2<f32>>, Bound<'py, PyArray1<f32>>);

const NF: usize = JOB_FEATURES.len();
const NM: usize = MACHINE_FEATURES.len();

fn bad(field: &str, got: &str, allowed: &str) -> PyErr {
    config_err(ConfigError::new(field, got, allowed))
}

fn parse_metric(s: &str) -> PyResult<RewardMetric> {
    Ok(match s {
        "bounded_slowdown" => RewardMetric::BoundedSlowdown,
        "wait" => RewardMetric::Wait,
        "turnaround" => RewardMetric::Turnaround,
        "utilization" => RewardMetric::Utilization,
        _ => {
            return Err(bad(
                "reward",
                s,
                "bounded_slowdown, wait, turnaround or utilization",
            ))
        }
    })
}

fn parse_invalid(s: &str) -> PyResult<bool> {
    match s {
        "first" => Ok(false),
        "error" => Ok(true),
        _ => Err(bad(
            "invalid_action",
            s,
            "first (a masked action starts or reserves window slot 0) or error",
        )),
    }
}

fn parse_mode(s: &str) -> PyResult<RewardMode> {
    Ok(match s {
        "dense" => RewardMode::Dense,
        "sparse" => RewardMode::Sparse,
        "relative" => RewardMode::Relative,
        _ => return Err(bad("reward_mode", s, "dense, sparse or relative")),
    })
}

/// The jobs episodes are drawn from and how an episode runs.
struct Source {
    cfg: BatchConfig,
    /// The trace's jobs (empty for a generated workload: made per episode).
    jobs: Arc<Vec<BatchJob>>,
    procs: u32,
    sc: StepConfig,
}

impl Source {
    /// The episode's jobs: `length` jobs of the trace from `start`, or a
    /// generated workload of `length` jobs with `seed`.
    fn episode(&self, start: usize, length: usize, seed: u64) -> Result<Vec<BatchJob>, BatchError> {
        if self.cfg.workload == WorkloadKind::Lublin {
            let mut c = self.cfg.clone();
            c.workload_jobs = length as u64;
            c.workload_seed = seed;
            return Ok(batch::load_jobs(&c, None)?.0);
        }
        let n = self.jobs.len();
        if start >= n || length == 0 {
            return Err(BatchError::Input(format!(
                "episode start {start} with {length} jobs; allowed: start 0..{n}, length >= 1"
            )));
        }
        Ok(self.jobs[start..(start + length).min(n)].to_vec())
    }

    /// The built-in policy's metric (in the reward's sign) on these jobs.
    fn baseline(&self, jobs: Vec<BatchJob>) -> Result<f64, BatchError> {
        let s = batch::simulate(jobs, self.procs, &self.cfg)?.summary;
        Ok(match self.sc.metric {
            RewardMetric::BoundedSlowdown => -s.avg_bounded_slowdown,
            RewardMetric::Wait => -s.avg_wait,
            RewardMetric::Turnaround => -s.avg_response,
            RewardMetric::Utilization => s.utilization,
        })
    }
}

/// One environment's episode.
#[derive(Default)]
struct Episode {
    stepper: Option<Stepper>,
    /// Baselines already run: (start, length, seed) → metric.
    baselines: HashMap<(usize, usize, u64), f64>,
}

impl Episode {
    fn reset(
        &mut self,
        src: &Source,
        start: usize,
        length: usize,
        seed: u64,
    ) -> Result<(), BatchError> {
        let jobs = src.episode(start, length, seed)?;
        let mut sc = src.sc;
        if sc.mode == RewardMode::Relative {
            let key = (start, length, seed);
            let b = match self.baselines.get(&key) {
                Some(&b) => b,
                None => {
                    let b = src.baseline(jobs.clone())?;
                    self.baselines.insert(key, b);
                    b
                }
            };
            sc.baseline = Some(b);
        }
        self.stepper = Some(Stepper::new(jobs, src.procs, &src.cfg, sc)?);
        Ok(())
    }

    fn stepper(&mut self) -> Result<&mut Stepper, BatchError> {
        self.stepper
            .as_mut()
            .ok_or_else(|| BatchError::Input("step before reset".into()))
    }

    /// Applies action `a` (a window slot, or `window` for wait). A masked
    /// action is an error when `strict`, else slot 0 (always allowed at a
    /// decision point) and reported as such.
    fn step(
        &mut self,
        a: i64,
        window: usize,
        strict: bool,
    ) -> Result<(f64, bool, bool), BatchError> {
        let s = self.stepper()?;
        let allowed = match a {
            a if a >= 0 && (a as usize) < window => (a as usize) < s.window().len(),
            a if a == window as i64 => s.may_wait(),
            _ => false,
        };
        let action = match a {
            _ if !allowed && !strict && !s.done() => Action::Pick(0),
            a if a >= 0 && (a as usize) < window => Action::Pick(a as usize),
            a if a == window as i64 => Action::Wait,
            _ => {
                return Err(parsched_core::PolicyError(format!(
                    "action {a} is out of range; allowed: 0..{window} (a window slot) or \
                     {window} (wait)"
                ))
                .into())
            }
        };
        let r = s.step(action)?;
        Ok((r, s.done(), !allowed))
    }
}

fn new_source(
    config: &Bound<'_, PyDict>,
    trace: Option<std::path::PathBuf>,
    sc: StepConfig,
) -> PyResult<Source> {
    let cfg = typed_config::<BatchConfig>("batch", config)?;
    let (jobs, procs) = if cfg.workload == WorkloadKind::Lublin {
        (Vec::new(), cfg.procs.unwrap_or(128))
    } else {
        batch::load_jobs(&cfg, trace.as_deref()).map_err(batch_err)?
    };
    Ok(Source {
        cfg: *cfg,
        jobs: Arc::new(jobs),
        procs,
        sc,
    })
}

/// The environment's options from a dict (`window`, `order`, `backfill`,
/// `wait_action`, `reward`, `reward_mode`, `time_scale_s`,
/// `invalid_action`; absent: the defaults), and whether a masked action is
/// an error.
fn env_options(o: Option<&Bound<'_, PyDict>>) -> PyResult<(StepConfig, bool)> {
    fn get<'py, T: pyo3::FromPyObject<'py>>(
        o: Option<&Bound<'py, PyDict>>,
        key: &str,
        default: T,
    ) -> PyResult<T> {
        match o.map(|d| d.get_item(key)).transpose()?.flatten() {
            Some(v) if !v.is_none() => v.extract().map_err(|_| {
                bad(
                    key,
                    &v.to_string(),
                    "a value of the option's type (docs/policies/batch-gym.md)",
                )
            }),
            _ => Ok(default),
        }
    }
    let window: usize = get(o, "window", 128)?;
    let order: String = get(o, "order", "fcfs".to_string())?;
    let time_scale_s: f64 = get(o, "time_scale_s", 3600.0)?;
    let order = QueueOrder::parse(&order)
        .filter(|o| !o.stateful())
        .ok_or_else(|| {
            let names: Vec<&str> = QueueOrder::all()
                .filter(|o| !o.stateful())
                .map(|o| o.name())
                .collect();
            bad("order", &order, &names.join(", "))
        })?;
    if window == 0 {
        return Err(bad("window", "0", "an integer >= 1"));
    }
    if !(time_scale_s > 0.0 && time_scale_s.is_finite()) {
        return Err(bad(
            "time_scale_s",
            &time_scale_s.to_string(),
            "a number > 0 (seconds per observation time unit)",
        ));
    }
    let sc = StepConfig {
        window,
        order,
        backfill: get(o, "backfill", true)?,
        wait_action: get(o, "wait_action", true)?,
        metric: parse_metric(&get::<String>(o, "reward", "bounded_slowdown".into())?)?,
        mode: parse_mode(&get::<String>(o, "reward_mode", "dense".into())?)?,
        baseline: None,
        time_scale_s,
    };
    let strict = parse_invalid(&get::<String>(o, "invalid_action", "first".into())?)?;
    Ok((sc, strict))
}

/// One environment (`parsched.gym.BatchEnv` wraps it).
#[pyclass(module = "parsched._core")]
pub(crate) struct BatchEnvCore {
    src: Source,
    /// A masked action is an error (else slot 0).
    strict: bool,
    ep: Episode,
    jobs_buf: Vec<f32>,
    machine_buf: [f32; NM],
    mask: Vec<bool>,
}

impl BatchEnvCore {
    fn observe<'py>(&mut self, py: Python<'py>) -> PyResult<Obs<'py>> {
        let w = self.src.sc.window;
        let s = self.ep.stepper().map_err(batch_err)?;
        s.observe(&mut self.jobs_buf, &mut self.machine_buf, &mut self.mask);
        let jobs = PyArray1::from_slice(py, &self.jobs_buf).reshape([w, NF])?;
        Ok((jobs, PyArray1::from_slice(py, &self.machine_buf)))
    }
}

#[pymethods]
impl BatchEnvCore {
    #[new]
    #[pyo3(signature = (config, trace=None, options=None))]
    fn new(
        config: &Bound<'_, PyDict>,
        trace: Option<std::path::PathBuf>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<BatchEnvCore> {
        let (sc, strict) = env_options(options)?;
        let window = sc.window;
        let src = new_source(config, trace, sc)?;
        Ok(BatchEnvCore {
            src,
            strict,
            ep: Episode::default(),
            jobs_buf: vec![0.0; window * NF],
            machine_buf: [0.0; NM],
            mask: vec![false; window + 1],
        })
    }

    /// Jobs in the trace (0 for a generated workload).
    #[getter]
    fn n_jobs(&self) -> usize {
        self.src.jobs.len()
    }

    #[getter]
    fn procs(&self) -> u32 {
        self.src.procs
    }

    /// Starts an episode (`length` trace jobs from `start`, or `length`
    /// generated jobs with `seed`); returns its first observation and
    /// whether it is already over (no decision in it).
    fn reset<'py>(
        &mut self,
        py: Python<'py>,
        start: usize,
        length: usize,
        seed: u64,
    ) -> PyResult<(Obs<'py>, bool)> {
        self.ep
            .reset(&self.src, start, length, seed)
            .map_err(batch_err)?;
        let obs = self.observe(py)?;
        let done = self.ep.stepper().map_err(batch_err)?.done();
        Ok((obs, done))
    }

    /// Applies `action`; returns the observation, the reward, whether the
    /// episode is over and whether the action was a masked one (taken as
    /// slot 0).
    #[allow(clippy::type_complexity)]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        action: i64,
    ) -> PyResult<(
        Bound<'py, PyArray2<f32>>,
        Bound<'py, PyArray1<f32>>,
        f64,
        bool,
        bool,
    )> {
        let (r, done, invalid) = self
            .ep
            .step(action, self.src.sc.window, self.strict)
            .map_err(batch_err)?;
        let (j, m) = self.observe(py)?;
        Ok((j, m, r, done, invalid))
    }

    /// The allowed actions now: the window slots holding a job, then wait.
    fn action_masks<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        PyArray1::from_slice(py, &self.mask)
    }

    /// The trace's job id of the job in window slot `slot`, if any.
    fn window_job_id(&self, slot: usize) -> Option<i64> {
        let s = self.ep.stepper.as_ref()?;
        s.window_job(slot).map(|i| s.jobs()[i].id)
    }

    /// Decisions taken in this episode.
    #[getter]
    fn steps(&self) -> u64 {
        self.ep.stepper.as_ref().map_or(0, |s| s.steps())
    }

    /// The current simulated time (seconds).
    #[getter]
    fn now(&self) -> u64 {
        self.ep.stepper.as_ref().map_or(0, |s| s.now())
    }

    /// The episode's schedule, as `simulate_batch` returns it (ends the
    /// episode).
    fn result<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self
            .ep
            .stepper
            .take()
            .ok_or_else(|| batch_err(BatchError::Input("result before reset".into())))?;
        crate::sim_batch::result_dict(py, &s.into_result())
    }
}

/// Several environments stepped in one call with the GIL released
/// (`parsched.gym.BatchVectorEnv`), with next-step autoreset: an
/// environment whose episode ended is reset by the next call, from the start
/// Python drew for it.
#[pyclass(module = "parsched._core")]
pub(crate) struct BatchVecEnvCore {
    src: Source,
    strict: bool,
    invalid: Vec<bool>,
    eps: Vec<Episode>,
    jobs_buf: Vec<f32>,
    machine_buf: Vec<f32>,
    masks: Vec<bool>,
    rewards: Vec<f64>,
    dones: Vec<bool>,
}

impl BatchVecEnvCore {
    /// Writes every environment's observation into the buffers.
    fn observe_all(&mut self) -> Result<(), BatchError> {
        let w = self.src.sc.window;
        for (i, ep) in self.eps.iter_mut().enumerate() {
            ep.stepper()?.observe(
                &mut self.jobs_buf[i * w * NF..(i + 1) * w * NF],
                &mut self.machine_buf[i * NM..(i + 1) * NM],
                &mut self.masks[i * (w + 1)..(i + 1) * (w + 1)],
            );
        }
        Ok(())
    }

    #[allow(clippy::type_complexity)]
    fn arrays<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyArray3<f32>>, Bound<'py, PyArray2<f32>>)> {
        let (n, w) = (self.eps.len(), self.src.sc.window);
        Ok((
            PyArray1::from_slice(py, &self.jobs_buf).reshape([n, w, NF])?,
            PyArray1::from_slice(py, &self.machine_buf).reshape([n, NM])?,
        ))
    }
}

#[pymethods]
impl BatchVecEnvCore {
    #[new]
    #[pyo3(signature = (num_envs, config, trace=None, options=None))]
    fn new(
        num_envs: usize,
        config: &Bound<'_, PyDict>,
        trace: Option<std::path::PathBuf>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<BatchVecEnvCore> {
        if num_envs == 0 {
            return Err(bad("num_envs", "0", "an integer >= 1"));
        }
        let (sc, strict) = env_options(options)?;
        let window = sc.window;
        let src = new_source(config, trace, sc)?;
        Ok(BatchVecEnvCore {
            src,
            strict,
            invalid: vec![false; num_envs],
            eps: (0..num_envs).map(|_| Episode::default()).collect(),
            jobs_buf: vec![0.0; num_envs * window * NF],
            machine_buf: vec![0.0; num_envs * NM],
            masks: vec![false; num_envs * (window + 1)],
            rewards: vec![0.0; num_envs],
            dones: vec![false; num_envs],
        })
    }

    #[getter]
    fn n_jobs(&self) -> usize {
        self.src.jobs.len()
    }

    #[getter]
    fn procs(&self) -> u32 {
        self.src.procs
    }

    /// Resets every environment (`starts[i]`, `length`, `seeds[i]`).
    #[allow(clippy::type_complexity)]
    fn reset<'py>(
        &mut self,
        py: Python<'py>,
        starts: Vec<usize>,
        length: usize,
        seeds: Vec<u64>,
    ) -> PyResult<(
        Bound<'py, PyArray3<f32>>,
        Bound<'py, PyArray2<f32>>,
        Bound<'py, PyArray1<bool>>,
    )> {
        let n = self.eps.len();
        if starts.len() != n || seeds.len() != n {
            return Err(bad(
                "starts",
                &format!("{} starts, {} seeds", starts.len(), seeds.len()),
                &format!("one per environment ({n})"),
            ));
        }
        let src = &self.src;
        let eps = &mut self.eps;
        py.allow_threads(|| -> Result<(), BatchError> {
            for (i, ep) in eps.iter_mut().enumerate() {
                ep.reset(src, starts[i], length, seeds[i])?;
            }
            Ok(())
        })
        .map_err(batch_err)?;
        self.observe_all().map_err(batch_err)?;
        for (i, ep) in self.eps.iter_mut().enumerate() {
            self.dones[i] = ep.stepper().map_err(batch_err)?.done();
        }
        let (j, m) = self.arrays(py)?;
        Ok((j, m, PyArray1::from_slice(py, &self.dones)))
    }

    /// Steps every environment: `actions[i]`, or — where `starts[i] >= 0`,
    /// an environment whose episode ended at the last call — a reset from
    /// `starts[i]` with `seeds[i]` (reward 0). Returns the observations,
    /// rewards and which episodes ended.
    #[allow(clippy::type_complexity)]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        actions: Vec<i64>,
        starts: Vec<i64>,
        length: usize,
        seeds: Vec<u64>,
    ) -> PyResult<(
        Bound<'py, PyArray3<f32>>,
        Bound<'py, PyArray2<f32>>,
        Bound<'py, PyArray1<f64>>,
        Bound<'py, PyArray1<bool>>,
    )> {
        let n = self.eps.len();
        if actions.len() != n || starts.len() != n || seeds.len() != n {
            return Err(bad(
                "actions",
                &format!("{} actions", actions.len()),
                &format!("one per environment ({n})"),
            ));
        }
        let w = self.src.sc.window;
        let (src, eps, rewards, dones, invalid, strict) = (
            &self.src,
            &mut self.eps,
            &mut self.rewards,
            &mut self.dones,
            &mut self.invalid,
            self.strict,
        );
        py.allow_threads(|| -> Result<(), BatchError> {
            for (i, ep) in eps.iter_mut().enumerate() {
                if starts[i] >= 0 {
                    ep.reset(src, starts[i] as usize, length, seeds[i])?;
                    rewards[i] = 0.0;
                    dones[i] = ep.stepper()?.done();
                    invalid[i] = false;
                } else {
                    let (r, d, bad) = ep.step(actions[i], w, strict)?;
                    rewards[i] = r;
                    dones[i] = d;
                    invalid[i] = bad;
                }
            }
            Ok(())
        })
        .map_err(batch_err)?;
        self.observe_all().map_err(batch_err)?;
        let (j, m) = self.arrays(py)?;
        Ok((
            j,
            m,
            PyArray1::from_slice(py, &self.rewards),
            PyArray1::from_slice(py, &self.dones),
        ))
    }

    /// Which environments' last actions were masked ones (taken as slot 0).
    fn invalid_actions<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        PyArray1::from_slice(py, &self.invalid)
    }

    /// The allowed actions of every environment (`num_envs × (window + 1)`).
    fn action_masks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<bool>>> {
        let (n, w) = (self.eps.len(), self.src.sc.window);
        PyArray1::from_slice(py, &self.masks).reshape([n, w + 1])
    }
}
