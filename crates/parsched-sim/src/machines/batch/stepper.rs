//! The batch machine one decision at a time: the core of the Gymnasium
//! environment (`parsched.gym`).
//!
//! The machine runs its events as in [`super::space`] and stops at a
//! *decision point*: an instant has closed, jobs are waiting, processors are
//! free, and no job holds the agent's reservation. The agent sees a window
//! of the waiting jobs (the first `window` in the queue's `order`) and picks
//! one of them, or waits:
//!
//! * a job that fits **starts now**, and the agent decides again at the
//!   same instant;
//! * a job that does not fit is **reserved**: it starts as soon as it fits,
//!   and until then (with `backfill`) the core backfills the other waiting
//!   jobs around it exactly as EASY does around its head — a job starts if
//!   it fits and ends, by its requested time, before the reservation's
//!   shadow time or uses only the processors the reserved job will not
//!   need. The agent decides again once the reserved job has started;
//! * **wait** (when `wait_action`) starts nothing and lets time run to the
//!   next event. It is allowed only while something is running or more jobs
//!   will arrive, so an episode always ends.
//!
//! A decision point with a single allowed action is taken by the core
//! without asking (a lone waiting job that must start). An agent that
//! always picks the first job of an arrival-ordered window therefore gives
//! exactly the built-in EASY schedule (tested on every shared trace).
//!
//! Rewards: a metric `M(t)` of the jobs so far whose value at the end of the
//! episode is the run's own metric — `−mean bounded slowdown`, `−mean wait`,
//! `−mean turnaround` (all over the episode's jobs) or the utilization.
//! `dense` pays `M(t_k) − M(t_{k−1})` at each step (the sum over an episode
//! is the final metric), `sparse` pays `M(end)` at the last step,
//! `relative` pays `(M(end) − M_base) / |M_base|` at the last step against
//! a baseline run's metric (its difference when the baseline is 0).

use super::state::{SpaceEvent, SpaceState};
use super::{check_jobs, BatchConfig, BatchError, BatchResult};
use crate::engine::{self, Engine, Flow, Model, RunEnd};
use crate::workloads::swf::BatchJob;
use parsched_core::policy::batch::{BatchPolicy, BatchView, Easy, OrderJob, QueueOrder, QueuedJob};
use parsched_core::{ConfigError, PolicyError};
use std::time::Instant;

/// Features per window job, in order (see [`Stepper::observe`]).
pub const JOB_FEATURES: [&str; 10] = [
    "present",
    "wait",
    "requested",
    "procs",
    "fits_now",
    "earliest_start",
    "user",
    "group",
    "queue",
    "partition",
];

/// Machine features, in order (see [`Stepper::observe`]).
pub const MACHINE_FEATURES: [&str; 6] =
    ["time", "free", "running", "queued", "reserved", "submitted"];

/// What the reward measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewardMetric {
    BoundedSlowdown,
    Wait,
    Turnaround,
    Utilization,
}

/// When the reward is paid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewardMode {
    Sparse,
    Dense,
    Relative,
}

/// The environment's options (the machine's own come from a
/// [`BatchConfig`]: `kill_on_overrun`, `bsld_tau`).
#[derive(Debug, Clone, Copy)]
pub struct StepConfig {
    /// Waiting jobs the agent sees (and may pick).
    pub window: usize,
    /// The window's order (and the backfill candidates').
    pub order: QueueOrder,
    /// EASY backfilling around a reserved job; without it a reserved job
    /// blocks every other.
    pub backfill: bool,
    /// Whether "wait for the next event" is an action.
    pub wait_action: bool,
    pub metric: RewardMetric,
    pub mode: RewardMode,
    /// The baseline's metric, in `M`'s sign (`relative`).
    pub baseline: Option<f64>,
    /// Seconds per observation time unit.
    pub time_scale_s: f64,
}

impl Default for StepConfig {
    fn default() -> StepConfig {
        StepConfig {
            window: 128,
            order: QueueOrder::FCFS,
            backfill: true,
            wait_action: true,
            metric: RewardMetric::BoundedSlowdown,
            mode: RewardMode::Dense,
            baseline: None,
            time_scale_s: 3600.0,
        }
    }
}

/// An agent's action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// The job in this window slot: start it, or reserve it if it does not
    /// fit.
    Pick(usize),
    /// Start nothing; run to the next event.
    Wait,
}

/// The engine's model between decision points: it stops at an instant
/// that needs a decision or the reserved job's pass.
struct Run<'a> {
    st: &'a mut SpaceState,
    jobs: &'a [BatchJob],
}

impl Model for Run<'_> {
    type Event = SpaceEvent;
    type Error = BatchError;

    #[inline]
    fn handle(
        &mut self,
        ev: SpaceEvent,
        engine: &mut Engine<SpaceEvent>,
    ) -> Result<Flow, BatchError> {
        if self.st.record(self.jobs, ev, engine) {
            if !self.st.queue().is_empty() && self.st.free > 0 {
                return Ok(Flow::Stop);
            }
            self.st.record_queue(engine.now().0);
        }
        Ok(Flow::Continue)
    }
}

/// Running sums from which the reward metrics are computed in O(1).
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    /// Σ wait of the started jobs; Σ submit of the started jobs.
    started_wait: i128,
    started_submit: i128,
    started: u64,
    /// Σ (end − submit), Σ bounded slowdown and Σ procs·run of the
    /// finished jobs.
    finished_turn: i128,
    finished_submit: i128,
    finished_bsld: f64,
    finished_work: i128,
    finished: u64,
    /// Σ procs·start of the running jobs.
    running_pstart: i128,
}

/// A batch run driven one decision at a time (module documentation).
pub struct Stepper {
    jobs: Vec<BatchJob>,
    cfg: BatchConfig,
    sc: StepConfig,
    st: SpaceState,
    engine: Engine<SpaceEvent>,
    easy: Easy,
    /// The agent's reserved job (index in `jobs`).
    reserved: Option<u32>,
    /// At a decision point (the current instant's pass is not over).
    pending: bool,
    done: bool,
    /// Queue positions (arrival order) of the jobs in order, and the first
    /// `window` of them.
    order_jobs: Vec<OrderJob>,
    perm: Vec<usize>,
    scores: Vec<f64>,
    window: Vec<usize>,
    bf_queue: Vec<QueuedJob>,
    bf_pos: Vec<usize>,
    decisions: Vec<usize>,
    ends: Vec<(u64, u32)>,
    prefix_submit: Vec<i128>,
    sums: Sums,
    metric: f64,
    steps: u64,
    wall: Instant,
    /// This thread's cancel flag when the stepper was made, watched on the
    /// engine's cadence across steps (`BatchError::Interrupted`).
    watch: crate::cancel::Watch,
}

impl Stepper {
    /// A run of `jobs` (sorted by submit time, each 1..=`procs` wide) on
    /// `procs` processors, advanced to its first decision point.
    pub fn new(
        jobs: Vec<BatchJob>,
        procs: u32,
        cfg: &BatchConfig,
        sc: StepConfig,
    ) -> Result<Stepper, BatchError> {
        cfg.validate()?;
        check_jobs(&jobs, procs)?;
        if sc.window == 0 {
            return Err(ConfigError::new("window", "0", "an integer >= 1").into());
        }
        if !(sc.time_scale_s > 0.0 && sc.time_scale_s.is_finite()) {
            return Err(ConfigError::new(
                "time_scale_s",
                sc.time_scale_s.to_string(),
                "a number > 0 (seconds per observation time unit)",
            )
            .into());
        }
        let mut st = SpaceState::new(jobs.len(), procs, cfg);
        st.log_released = true;
        let mut engine = Engine::with_front_slot();
        SpaceState::first_event(&jobs, &mut engine);
        let mut prefix_submit = Vec::with_capacity(jobs.len() + 1);
        prefix_submit.push(0i128);
        let mut acc = 0i128;
        for j in &jobs {
            acc += j.submit as i128;
            prefix_submit.push(acc);
        }
        let mut s = Stepper {
            jobs,
            cfg: cfg.clone(),
            sc,
            st,
            engine,
            easy: Easy::default(),
            reserved: None,
            pending: false,
            done: false,
            order_jobs: Vec::new(),
            perm: Vec::new(),
            scores: Vec::new(),
            window: Vec::new(),
            bf_queue: Vec::new(),
            bf_pos: Vec::new(),
            decisions: Vec::new(),
            ends: Vec::new(),
            prefix_submit,
            sums: Sums::default(),
            metric: 0.0,
            steps: 0,
            wall: Instant::now(),
            watch: crate::cancel::Watch::new(),
        };
        // (M before anything happened is 0 for every metric: the first
        // step's reward includes what happened before the first decision)
        s.advance()?;
        Ok(s)
    }

    /// Whether the episode is over (every job has run).
    pub fn done(&self) -> bool {
        self.done
    }

    /// The current time (seconds).
    pub fn now(&self) -> u64 {
        self.engine.now().0
    }

    /// Decisions taken so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The window: queue positions of the jobs the agent may pick, in slot
    /// order.
    pub fn window(&self) -> &[usize] {
        &self.window
    }

    /// The job list's index of the job in window slot `slot`.
    pub fn window_job(&self, slot: usize) -> Option<usize> {
        self.window
            .get(slot)
            .map(|&k| self.st.queue_idx()[k] as usize)
    }

    /// The jobs (submit-time order).
    pub fn jobs(&self) -> &[BatchJob] {
        &self.jobs
    }

    /// Whether waiting is allowed now: the option is on and something will
    /// happen (a job running, or one still to come).
    pub fn may_wait(&self) -> bool {
        self.sc.wait_action
            && (!self.st.running.is_empty() || (self.st.submitted as usize) < self.jobs.len())
    }

    /// Applies the agent's action at a decision point, then runs to the
    /// next one (or the end). Returns the reward.
    pub fn step(&mut self, a: Action) -> Result<f64, BatchError> {
        if self.done {
            return Err(PolicyError("step after the episode ended (call reset)".into()).into());
        }
        self.act(a)?;
        self.steps += 1;
        self.advance()?;
        Ok(self.reward())
    }

    fn act(&mut self, a: Action) -> Result<(), BatchError> {
        let t = self.now();
        match a {
            Action::Wait => {
                if !self.may_wait() {
                    return Err(PolicyError(format!(
                        "wait is not allowed now (t={t}: {}); allowed: a window slot 0..{}",
                        if self.sc.wait_action {
                            "nothing is running and no job is still to come"
                        } else {
                            "wait_action is off"
                        },
                        self.window.len()
                    ))
                    .into());
                }
                self.pending = false;
                self.st.record_queue(t);
            }
            Action::Pick(slot) => {
                let Some(&k) = self.window.get(slot) else {
                    return Err(PolicyError(format!(
                        "action {slot} names an empty window slot; allowed: 0..{}{}",
                        self.window.len(),
                        if self.may_wait() {
                            format!(" or {} (wait)", self.sc.window)
                        } else {
                            String::new()
                        }
                    ))
                    .into());
                };
                if self.st.queue()[k].procs <= self.st.free {
                    self.start(k, t);
                    self.st.remove(&[k]);
                } else {
                    self.reserved = Some(self.st.queue_idx()[k]);
                }
            }
        }
        Ok(())
    }

    /// Starts the job at queue position `k` (it stays queued until
    /// removed), keeping the reward sums.
    fn start(&mut self, k: usize, t: u64) {
        let i = self.st.queue_idx()[k] as usize;
        let j = &self.jobs[i];
        self.sums.started_wait += (t - j.submit) as i128;
        self.sums.started_submit += j.submit as i128;
        self.sums.started += 1;
        self.sums.running_pstart += j.procs as i128 * t as i128;
        self.st.start(&self.jobs, k, t, &mut self.engine);
    }

    /// Runs until a decision point or the end.
    fn advance(&mut self) -> Result<(), BatchError> {
        loop {
            if self.pending {
                if self.pass()? {
                    return Ok(());
                }
                continue;
            }
            let end = engine::run_watching(
                &mut Run {
                    st: &mut self.st,
                    jobs: &self.jobs,
                },
                &mut self.engine,
                &mut self.watch,
                || BatchError::Interrupted,
            )?;
            self.account_released();
            if end == RunEnd::Stopped {
                self.pending = true;
            } else {
                self.done = true;
                if let Some(i) = self.st.outcomes.iter().position(|o| o.end == u64::MAX) {
                    // (cannot happen: waiting needs something to come)
                    return Err(PolicyError(format!(
                        "the run ended with job {} never run",
                        self.jobs[i].id
                    ))
                    .into());
                }
                return Ok(());
            }
        }
    }

    /// The pass at a closed instant. Returns whether the agent must decide
    /// (else the pass is over or the core took the only action).
    fn pass(&mut self) -> Result<bool, BatchError> {
        let t = self.now();
        if let Some(r) = self.reserved {
            let k = self
                .st
                .queue_idx()
                .iter()
                .position(|&i| i == r)
                .expect("the reserved job waits");
            if self.st.queue()[k].procs <= self.st.free {
                self.reserved = None;
                self.start(k, t);
                self.st.remove(&[k]);
                return Ok(false);
            }
            if self.sc.backfill && self.st.free > 0 {
                self.backfill(k, t);
            }
            self.pending = false;
            self.st.record_queue(t);
            return Ok(false);
        }
        if self.st.queue().is_empty() || self.st.free == 0 {
            self.pending = false;
            self.st.record_queue(t);
            return Ok(false);
        }
        self.sort_window(t);
        if self.window.len() == 1 && !self.may_wait() {
            self.act(Action::Pick(0))?;
            return Ok(false);
        }
        Ok(true)
    }

    /// The first `window` waiting jobs in `order`.
    fn sort_window(&mut self, t: u64) {
        self.st.order_jobs(&self.jobs, &mut self.order_jobs);
        let origin = self.jobs.first().map_or(0, |j| j.submit);
        self.sc.order.sort(
            &self.order_jobs,
            t,
            origin,
            &mut self.perm,
            &mut self.scores,
        );
        self.window.clear();
        let w = self.sc.window.min(self.perm.len());
        self.window.extend_from_slice(&self.perm[..w]);
    }

    /// EASY around the reserved job (queue position `k`): it is the head,
    /// the others are candidates in `order`.
    fn backfill(&mut self, k: usize, t: u64) {
        self.st.order_jobs(&self.jobs, &mut self.order_jobs);
        let origin = self.jobs.first().map_or(0, |j| j.submit);
        self.sc.order.sort(
            &self.order_jobs,
            t,
            origin,
            &mut self.perm,
            &mut self.scores,
        );
        let queue = self.st.queue();
        self.bf_queue.clear();
        self.bf_pos.clear();
        self.bf_queue.push(queue[k]);
        self.bf_pos.push(k);
        for &p in &self.perm {
            if p != k {
                self.bf_queue.push(queue[p]);
                self.bf_pos.push(p);
            }
        }
        self.decisions.clear();
        self.easy.schedule(
            &BatchView {
                now: t,
                total: self.st.procs,
                free: self.st.free,
                running: &self.st.running,
                running_by_end: Some(&self.st.by_end),
                queue: &self.bf_queue,
                backfill: None,
            },
            &mut self.decisions,
        );
        for d in 0..self.decisions.len() {
            let p = self.bf_pos[self.decisions[d]];
            self.decisions[d] = p;
            self.start(p, t);
        }
        let started = std::mem::take(&mut self.decisions);
        self.st.remove(&started);
        self.decisions = started;
    }

    /// Folds the jobs released since the last call into the reward sums.
    fn account_released(&mut self) {
        let tau = self.cfg.bsld_tau;
        for &i in &self.st.released {
            let (j, o) = (&self.jobs[i as usize], &self.st.outcomes[i as usize]);
            let run = if o.killed { j.requested } else { j.runtime };
            let turn = o.end - j.submit;
            self.sums.finished_turn += turn as i128;
            self.sums.finished_submit += j.submit as i128;
            self.sums.finished_bsld += (turn as f64 / (run as f64).max(tau)).max(1.0);
            self.sums.finished_work += j.procs as i128 * (o.end - o.start) as i128;
            self.sums.running_pstart -= j.procs as i128 * o.start as i128;
            self.sums.finished += 1;
        }
        self.st.released.clear();
    }

    /// The reward metric so far, `M(now)` (module documentation).
    fn metric_now(&self) -> f64 {
        let n = self.jobs.len().max(1) as f64;
        let t = self.now() as i128;
        let s = &self.sums;
        let submitted = self.st.submitted as usize;
        let sub_sum = self.prefix_submit[submitted];
        match self.sc.metric {
            RewardMetric::BoundedSlowdown => -s.finished_bsld / n,
            RewardMetric::Wait => {
                let queued = submitted as i128 - s.started as i128;
                let q_submit = sub_sum - s.started_submit;
                -((s.started_wait + queued * t - q_submit) as f64) / n
            }
            RewardMetric::Turnaround => {
                // Σ_finished (end − submit) + Σ_open (t − submit)
                let open = submitted as i128 - s.finished as i128;
                let open_submit = sub_sum - s.finished_submit;
                -((s.finished_turn + open * t - open_submit) as f64) / n
            }
            RewardMetric::Utilization => {
                let t0 = self.jobs.first().map_or(0, |j| j.submit) as i128;
                if t <= t0 {
                    return 0.0;
                }
                let busy = (self.st.procs - self.st.free) as i128;
                let work = s.finished_work + busy * t - s.running_pstart;
                work as f64 / (self.st.procs as f64 * (t - t0) as f64)
            }
        }
    }

    /// The reward of the step just taken.
    fn reward(&mut self) -> f64 {
        match self.sc.mode {
            RewardMode::Dense => {
                let m = self.metric_now();
                let r = m - self.metric;
                self.metric = m;
                r
            }
            RewardMode::Sparse if self.done => self.metric_now(),
            RewardMode::Relative if self.done => {
                let m = self.metric_now();
                match self.sc.baseline {
                    Some(b) if b != 0.0 => (m - b) / b.abs(),
                    Some(b) => m - b,
                    None => m,
                }
            }
            _ => 0.0,
        }
    }

    /// Writes the observation: `jobs` (`window` × [`JOB_FEATURES`], row
    /// per slot, zeros past the queue), `machine` ([`MACHINE_FEATURES`])
    /// and `mask` (`window + 1`: the slots holding a job, then wait).
    ///
    /// Job features: present (1), wait and requested time (in
    /// `time_scale_s` units), processors (fraction of the machine),
    /// fits now (1/0), earliest start from now assuming the running jobs
    /// end at their requested times (time units; the agent's reservation
    /// not counted), and the trace's user, group, queue and partition
    /// numbers (identifiers, −1 unknown). Machine: time since the first
    /// submission (time units), free processors (fraction), running and
    /// waiting jobs (counts), whether a job is reserved (1/0), and the
    /// fraction of the episode's jobs submitted.
    pub fn observe(&mut self, jobs: &mut [f32], machine: &mut [f32], mask: &mut [bool]) {
        let w = self.sc.window;
        let nf = JOB_FEATURES.len();
        debug_assert_eq!(jobs.len(), w * nf);
        jobs.fill(0.0);
        mask.fill(false);
        let t = self.now();
        let scale = self.sc.time_scale_s;
        let total = self.st.procs as f64;
        let free = self.st.free;
        // earliest times enough processors are free: cumulative releases
        // at the running jobs' expected ends
        self.ends.clear();
        let next = t + 1;
        self.ends
            .extend(self.st.by_end.iter().map(|&(e, p)| (e.max(next), p)));
        let mut cum = free;
        for e in self.ends.iter_mut() {
            cum += e.1;
            e.1 = cum;
        }
        if !self.done {
            for (slot, &k) in self.window.iter().enumerate() {
                let i = self.st.queue_idx()[k] as usize;
                let j = &self.jobs[i];
                let earliest = if j.procs <= free {
                    0
                } else {
                    let x = self.ends.partition_point(|e| e.1 < j.procs);
                    self.ends.get(x).map_or(0, |e| e.0 - t)
                };
                let row = &mut jobs[slot * nf..(slot + 1) * nf];
                row[0] = 1.0;
                row[1] = ((t - j.submit) as f64 / scale) as f32;
                row[2] = (j.requested as f64 / scale) as f32;
                row[3] = (j.procs as f64 / total) as f32;
                row[4] = (j.procs <= free) as u8 as f32;
                row[5] = (earliest as f64 / scale) as f32;
                row[6] = j.user as f32;
                row[7] = j.group as f32;
                row[8] = j.queue as f32;
                row[9] = j.partition as f32;
                mask[slot] = true;
            }
            mask[w] = self.may_wait();
        }
        let t0 = self.jobs.first().map_or(0, |j| j.submit);
        machine[0] = ((t - t0) as f64 / scale) as f32;
        machine[1] = (free as f64 / total) as f32;
        machine[2] = self.st.running.len() as f32;
        machine[3] = self.st.queue().len() as f32;
        machine[4] = self.reserved.is_some() as u8 as f32;
        machine[5] = (self.st.submitted as f64 / self.jobs.len().max(1) as f64) as f32;
    }

    /// The schedule as a result (complete once [`Stepper::done`]; jobs not
    /// yet run have start and end `u64::MAX`).
    pub fn into_result(self) -> BatchResult {
        self.st.finish("gym", &self.cfg, self.jobs, self.wall)
    }
}
