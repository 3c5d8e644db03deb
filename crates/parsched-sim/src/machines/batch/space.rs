//! The space-sharing machine: a [`BatchPolicy`] (FCFS, EASY, conservative
//! backfilling, or one written in Python) gives each job its processors for
//! its whole run. A [`Model`] on the [`Engine`]; see the
//! [module documentation](super) for the order of events at equal times.
//! The machine itself (queue, running jobs, processors) is
//! `SpaceState` (`state.rs`).

use super::state::{SpaceEvent, SpaceState};
use super::{check_jobs, BatchConfig, BatchError, BatchResult};
use crate::engine::{Engine, Flow, Model};
use crate::workloads::swf::BatchJob;
use parsched_core::policy::batch::{
    multifactor_scores, sort_by_scores, BatchPolicy, BatchView, FairShare, MultifactorParams,
    OrderJob, QueueOrder, QueueScorer, QueuedJob,
};
use parsched_core::PolicyError;
use std::time::Instant;

/// A queue order: a built-in rule, a backfill rule of its own, or scores
/// computed outside the core; and its scratch.
pub(crate) struct Sorter<'a> {
    pub(crate) order: QueueOrder,
    /// A queue order computed outside the core (a Python `priority`), used
    /// instead of `order` when given.
    pub(crate) scorer: Option<&'a mut dyn QueueScorer>,
    /// EASY's backfill order, when not the queue's own, and its positions
    /// in the sorted queue.
    pub(crate) backfill: Option<QueueOrder>,
    pub(crate) bf_perm: Vec<usize>,
    bf_scores: Vec<f64>,
    order_jobs: Vec<OrderJob>,
    /// `perm[k]`: the queue position of the k-th job in order.
    pub(crate) perm: Vec<usize>,
    scores: Vec<f64>,
    /// The queue in order.
    pub(crate) sorted: Vec<QueuedJob>,
    /// `order = multifactor`: its parameters and the fair-share usage.
    fair: Option<(MultifactorParams, FairShare)>,
}

impl<'a> Sorter<'a> {
    pub(crate) fn new(
        order: QueueOrder,
        backfill: Option<QueueOrder>,
        scorer: Option<&'a mut dyn QueueScorer>,
    ) -> Sorter<'a> {
        Sorter {
            order,
            scorer,
            backfill,
            bf_perm: Vec::new(),
            bf_scores: Vec::new(),
            order_jobs: Vec::new(),
            perm: Vec::new(),
            scores: Vec::new(),
            sorted: Vec::new(),
            fair: None,
        }
    }

    /// `order = multifactor`: the fair-share tracker over the jobs' users
    /// and groups.
    pub(crate) fn with_multifactor(
        mut self,
        params: &MultifactorParams,
        jobs: &[BatchJob],
    ) -> Self {
        if self.order == QueueOrder::named("multifactor") {
            let fs = params.fair_share(jobs.iter().map(|j| (j.user, j.group)));
            self.fair = Some((params.clone(), fs));
        }
        self
    }

    /// Whether the sorter keeps usage (started and ended jobs are to be
    /// reported to it).
    pub(crate) fn keeps_usage(&self) -> bool {
        self.fair.is_some()
    }

    /// A job started at `t` (fair-share usage).
    pub(crate) fn started(&mut self, t: u64, j: &BatchJob) {
        if let Some((_, fs)) = self.fair.as_mut() {
            fs.job_started(t, j.user, j.group, j.procs);
        }
    }

    /// A job ended at `t`.
    pub(crate) fn ended(&mut self, t: u64, j: &BatchJob) {
        if let Some((_, fs)) = self.fair.as_mut() {
            fs.job_ended(t, j.user, j.group, j.procs);
        }
    }

    /// Whether the queue needs sorting at all (else it is in arrival order).
    pub(crate) fn sorts(&self) -> bool {
        self.order != QueueOrder::FCFS || self.scorer.is_some() || self.backfill.is_some()
    }

    /// Sorts the queue of `st` by the priority rule at `t` (or the scorer's
    /// scores, checked) into `sorted` and `perm`.
    pub(crate) fn sort(
        &mut self,
        st: &SpaceState,
        jobs: &[BatchJob],
        t: u64,
    ) -> Result<(), BatchError> {
        st.order_jobs(jobs, &mut self.order_jobs);
        let origin = jobs.first().map_or(0, |j| j.submit);
        match self.scorer.as_mut() {
            // (one waiting job: its order is itself, the scorer is not asked)
            Some(_) if self.order_jobs.len() == 1 => {
                self.perm.clear();
                self.perm.push(0);
            }
            None => match self.fair.as_mut() {
                Some((params, fs)) => {
                    self.scores.clear();
                    multifactor_scores(params, fs, &self.order_jobs, t, st.procs, &mut self.scores);
                    // (finite factors and weights: no NaN)
                    let _ = sort_by_scores(&self.scores, &mut self.perm);
                }
                None => self.order.sort(
                    &self.order_jobs,
                    t,
                    origin,
                    &mut self.perm,
                    &mut self.scores,
                ),
            },
            Some(scorer) => {
                self.scores.clear();
                scorer
                    .scores(t, st.free, &self.order_jobs, &mut self.scores)
                    .map_err(PolicyError)?;
                let n = self.order_jobs.len();
                if self.scores.len() != n {
                    return Err(PolicyError(format!(
                        "priority returned {} scores for a queue of {n} jobs (one per queued \
                         job, in queue order)",
                        self.scores.len()
                    ))
                    .into());
                }
                sort_by_scores(&self.scores, &mut self.perm).map_err(|k| {
                    let id = jobs[st.queue_idx()[k] as usize].id;
                    PolicyError(format!(
                        "priority returned NaN for job {id} (queue position {k}); allowed: \
                         a number per job (lowest first)"
                    ))
                })?;
            }
        }
        self.sorted.clear();
        let queue = st.queue();
        self.sorted.extend(self.perm.iter().map(|&k| queue[k]));
        if let Some(rule) = self.backfill {
            // the backfill rule's scores over the queue (arrival positions),
            // then the sorted queue's positions in that order (ties: arrival)
            self.bf_scores.clear();
            self.bf_scores.extend(
                self.order_jobs
                    .iter()
                    .enumerate()
                    .map(|(i, j)| rule.score(j, t, i, origin)),
            );
            let (perm, scores) = (&self.perm, &self.bf_scores);
            self.bf_perm.clear();
            self.bf_perm.extend(0..perm.len());
            self.bf_perm.sort_by(|&a, &b| {
                scores[perm[a]]
                    .total_cmp(&scores[perm[b]])
                    .then(perm[a].cmp(&perm[b]))
            });
        }
        Ok(())
    }
}

/// A space-sharing run under a [`BatchPolicy`].
struct SpaceModel<'a> {
    jobs: &'a [BatchJob],
    policy: &'a mut dyn BatchPolicy,
    st: SpaceState,
    sorter: Sorter<'a>,
    decisions: Vec<usize>,
    /// The decisions, sorted (to check them).
    taken: Vec<usize>,
    /// Jobs submitted before the last observation.
    seen: u32,
}

impl Model for SpaceModel<'_> {
    type Event = SpaceEvent;
    type Error = BatchError;

    fn handle(
        &mut self,
        event: SpaceEvent,
        engine: &mut Engine<SpaceEvent>,
    ) -> Result<Flow, BatchError> {
        if self.st.record(self.jobs, event, engine) {
            let t = engine.now().0;
            if self.st.log_released {
                self.released(t)?;
            }
            if !self.st.queue().is_empty() && self.st.free > 0 {
                self.schedule(t, engine)?;
            }
            self.st.record_queue(t);
        }
        Ok(Flow::Continue)
    }
}

impl SpaceModel<'_> {
    /// The jobs released at this instant: their usage ends, and an
    /// observing scorer hears what was submitted and completed since the
    /// last instant.
    fn released(&mut self, t: u64) -> Result<(), BatchError> {
        let jobs = self.jobs;
        let mut done = std::mem::take(&mut self.st.released);
        for &i in &done {
            self.sorter.ended(t, &jobs[i as usize]);
        }
        let ids: Vec<i64> = done.iter().map(|&i| jobs[i as usize].id).collect();
        done.clear();
        self.st.released = done;
        let sub: Vec<i64> = (self.seen..self.st.submitted)
            .map(|i| jobs[i as usize].id)
            .collect();
        self.seen = self.st.submitted;
        match self.sorter.scorer.as_mut() {
            Some(scorer) if scorer.observes() && !(sub.is_empty() && ids.is_empty()) => scorer
                .observe(t, &sub, &ids)
                .map_err(|m| PolicyError(format!("t={t}: on_submit/on_complete {m}")).into()),
            _ => Ok(()),
        }
    }

    /// One scheduling pass: the policy's decisions, checked and applied.
    fn schedule(&mut self, t: u64, engine: &mut Engine<SpaceEvent>) -> Result<(), BatchError> {
        let len = self.st.queue().len();
        self.decisions.clear();
        let sorted = self.sorter.sorts();
        let queue: &[QueuedJob] = if sorted {
            self.sorter.sort(&self.st, self.jobs, t)?;
            &self.sorter.sorted
        } else {
            self.st.queue()
        };
        self.policy.schedule(
            &BatchView {
                now: t,
                total: self.st.procs,
                free: self.st.free,
                running: &self.st.running,
                running_by_end: Some(&self.st.by_end),
                queue,
                backfill: self.sorter.backfill.map(|_| self.sorter.bf_perm.as_slice()),
            },
            &mut self.decisions,
        );
        if self.decisions.is_empty() {
            return Ok(());
        }
        if sorted {
            // positions in the sorted queue -> positions in the queue (an
            // out-of-range one is left as is, for the check below)
            for d in self.decisions.iter_mut() {
                *d = self.sorter.perm.get(*d).copied().unwrap_or(*d);
            }
        }
        let taken = &mut self.taken;
        taken.clear();
        taken.extend_from_slice(&self.decisions);
        taken.sort_unstable();
        if let Some(&k) = taken
            .windows(2)
            .find(|w| w[0] == w[1])
            .map(|w| &w[0])
            .or_else(|| taken.last().filter(|&&k| k >= len))
        {
            return Err(PolicyError(format!(
                "{} started queue position {k} twice or out of range 0..{len}",
                self.policy.name(),
            ))
            .into());
        }
        for &k in &self.decisions {
            let q = self.st.queue()[k];
            if q.procs > self.st.free {
                return Err(PolicyError(format!(
                    "{} started a job of {} processors with {} free",
                    self.policy.name(),
                    q.procs,
                    self.st.free
                ))
                .into());
            }
            self.st.start(self.jobs, k, t, engine);
            if self.sorter.keeps_usage() {
                let i = self.st.queue_idx()[k] as usize;
                self.sorter.started(t, &self.jobs[i]);
            }
        }
        self.st.remove(&self.decisions);
        Ok(())
    }
}

/// Runs `jobs` under any space-sharing [`BatchPolicy`] (for instance one
/// written in Python). The policy's decisions are checked: a position out of
/// range, repeated, or more processors than free is a [`PolicyError`].
pub fn simulate_with(
    jobs: Vec<BatchJob>,
    procs: u32,
    policy: &mut dyn BatchPolicy,
    cfg: &BatchConfig,
) -> Result<BatchResult, BatchError> {
    simulate_scored(jobs, procs, policy, cfg, None)
}

/// [`simulate_with`], the queue sorted before each pass by `scorer`'s
/// scores (a queue order written outside the core) when given: its scores
/// are checked (one per queued job, no NaN), else a [`PolicyError`].
pub fn simulate_scored(
    jobs: Vec<BatchJob>,
    procs: u32,
    policy: &mut dyn BatchPolicy,
    cfg: &BatchConfig,
    scorer: Option<&mut dyn QueueScorer>,
) -> Result<BatchResult, BatchError> {
    let wall = Instant::now();
    cfg.validate()?;
    check_jobs(&jobs, procs)?;
    let mut st = SpaceState::new(jobs.len(), procs, cfg);
    let sorter = Sorter::new(
        cfg.order,
        cfg.backfill_order.rule(),
        // (a coercion: the trait object's lifetime shortens to the run's)
        match scorer {
            Some(s) => Some(s as &mut dyn QueueScorer),
            None => None,
        },
    )
    .with_multifactor(&cfg.multifactor, &jobs);
    st.log_released = sorter.keeps_usage() || sorter.scorer.as_ref().is_some_and(|s| s.observes());
    let mut model = SpaceModel {
        jobs: &jobs,
        policy,
        st,
        sorter,
        decisions: Vec::new(),
        taken: Vec::new(),
        seen: 0,
    };
    let mut engine = Engine::with_front_slot();
    SpaceState::first_event(&jobs, &mut engine);
    super::run_model(&mut model, &mut engine)?;
    let name = model.policy.name();
    let st = model.st;
    Ok(st.finish(name, cfg, jobs, wall))
}
