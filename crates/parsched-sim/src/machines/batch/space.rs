//! The space-sharing machine: a [`BatchPolicy`] (FCFS, EASY, conservative
//! backfilling, or one written in Python) gives each job its processors for
//! its whole run. A [`Model`] on the [`Engine`]; see the
//! [module documentation](super) for the order of events at equal times.

use super::result::{finish, Outcome, Series};
use super::{check_jobs, effective_runtime, BatchConfig, BatchError, BatchResult};
use crate::engine::{Engine, Flow, Model};
use crate::workloads::swf::BatchJob;
use parsched_core::policy::batch::{
    sort_by_scores, BatchPolicy, BatchView, OrderJob, QueueOrder, QueueScorer, QueuedJob,
    RunningJob,
};
use parsched_core::{PolicyError, Time};
use std::time::Instant;

/// What happens on the space-sharing machine. The `u32` is the job's index
/// in the submit-time-sorted job list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpaceEvent {
    /// The job was submitted: it joins the queue. Handling it schedules the
    /// next submission (one is pending at a time).
    JobSubmitted(u32),
    /// The job ended (or was killed at its requested time): its processors
    /// are free.
    JobFinished(u32),
}

/// Lowest-free processor allocation on a bitset.
struct ProcSet {
    words: Vec<u64>,
}

impl ProcSet {
    fn new(procs: u32) -> ProcSet {
        let n = procs.div_ceil(64) as usize;
        let mut words = vec![u64::MAX; n];
        let extra = n as u32 * 64 - procs;
        if extra > 0 {
            words[n - 1] = u64::MAX >> extra;
        }
        ProcSet { words }
    }

    /// Takes the `w` lowest free processors; appends them as intervals.
    /// Works a run of free processors at a time.
    fn take(&mut self, mut w: u32, out: &mut Vec<(u32, u32)>) {
        let mut run: Option<(u32, u32)> = None;
        for (k, word) in self.words.iter_mut().enumerate() {
            while w > 0 && *word != 0 {
                let b = word.trailing_zeros();
                let len = (*word >> b).trailing_ones().min(w);
                *word &= !(ones(len) << b);
                let p = k as u32 * 64 + b;
                let last = p + (len - 1);
                match &mut run {
                    Some((_, e)) if *e + 1 == p => *e = last,
                    _ => {
                        if let Some(r) = run.take() {
                            out.push(r);
                        }
                        run = Some((p, last));
                    }
                }
                w -= len;
            }
            if w == 0 {
                break;
            }
        }
        debug_assert_eq!(w, 0, "not enough free processors");
        out.extend(run);
    }

    /// Frees the processors of `ranges` (inclusive intervals), a word at a
    /// time.
    fn give(&mut self, ranges: &[(u32, u32)]) {
        for &(a, b) in ranges {
            let (mut p, b) = (a as u64, b as u64);
            while p <= b {
                let k = p / 64;
                let hi = b.min(k * 64 + 63);
                self.words[k as usize] |= ones((hi - p + 1) as u32) << (p % 64);
                p = hi + 1;
            }
        }
    }
}

/// The lowest `n` bits set (`n` in 1..=64).
fn ones(n: u32) -> u64 {
    u64::MAX >> (64 - n)
}

/// The state of a space-sharing run.
struct SpaceModel<'a> {
    jobs: &'a [BatchJob],
    procs: u32,
    policy: &'a mut dyn BatchPolicy,
    /// A queue order computed outside the core (a Python `priority`), used
    /// instead of `order` when given.
    scorer: Option<&'a mut dyn QueueScorer>,
    kill: bool,
    track: bool,
    outcomes: Vec<Outcome>,
    /// Running jobs: the policy's view and, in parallel, job indices.
    running: Vec<RunningJob>,
    running_idx: Vec<u32>,
    /// The running jobs' `(requested_end, procs)`, sorted (the policy's
    /// `running_by_end`).
    by_end: Vec<(u64, u32)>,
    /// Each running job's position in `running`.
    run_pos: Vec<u32>,
    /// The queue: the policy's view and, in parallel, job indices; the
    /// jobs before `head` have started (removed lazily: FCFS starts a
    /// prefix of a queue that may hold 100,000 jobs).
    queue: Vec<QueuedJob>,
    head: usize,
    queue_idx: Vec<u32>,
    free: u32,
    /// Jobs that finished at the current instant, released when it closes.
    finishing: Vec<u32>,
    decisions: Vec<usize>,
    /// The priority rule the queue is sorted by before the policy sees it,
    /// and its scratch: the jobs as the rule sees them, the order
    /// (`perm[k]`: the queue position of the k-th job), the scores and the
    /// sorted queue.
    order: QueueOrder,
    /// EASY's backfill order, when not the queue's own, and its positions
    /// in the sorted queue.
    backfill: Option<QueueOrder>,
    bf_perm: Vec<usize>,
    bf_scores: Vec<f64>,
    order_jobs: Vec<OrderJob>,
    perm: Vec<usize>,
    scores: Vec<f64>,
    sorted: Vec<QueuedJob>,
    /// The decisions, sorted (to check them and remove the started jobs).
    taken: Vec<usize>,
    series: Series,
    set: ProcSet,
    /// Resource intervals: per job (offset, len) into `arena`, assigned at
    /// start; compacted into job order at the end.
    arena: Vec<(u32, u32)>,
    res_at: Vec<(u32, u32)>,
}

impl Model for SpaceModel<'_> {
    type Event = SpaceEvent;
    type Error = BatchError;

    fn handle(
        &mut self,
        event: SpaceEvent,
        engine: &mut Engine<SpaceEvent>,
    ) -> Result<Flow, BatchError> {
        match event {
            SpaceEvent::JobFinished(i) => self.finishing.push(i),
            SpaceEvent::JobSubmitted(i) => {
                let j = &self.jobs[i as usize];
                self.queue.push(QueuedJob {
                    procs: j.procs,
                    requested: j.requested,
                });
                self.queue_idx.push(i);
                if let Some(next) = self.jobs.get(i as usize + 1) {
                    engine.schedule_at(Time(next.submit), SpaceEvent::JobSubmitted(i + 1));
                }
            }
        }
        let now = engine.now();
        if engine.next_live_time() != Some(now) {
            self.close_instant(now.0, engine)?;
        }
        Ok(Flow::Continue)
    }
}

impl SpaceModel<'_> {
    /// Every event at `t` has been handled: the finished jobs release their
    /// processors (ascending index), then one scheduling pass.
    fn close_instant(&mut self, t: u64, engine: &mut Engine<SpaceEvent>) -> Result<(), BatchError> {
        self.finishing.sort_unstable();
        for k in 0..self.finishing.len() {
            let i = self.finishing[k] as usize;
            let p = self.run_pos[i] as usize;
            let r = self.running[p];
            self.free += r.procs;
            let key = (r.requested_end, r.procs);
            let k = self.by_end.partition_point(|e| *e < key);
            debug_assert_eq!(self.by_end.get(k), Some(&key));
            self.by_end.remove(k);
            self.running.swap_remove(p);
            self.running_idx.swap_remove(p);
            if p < self.running_idx.len() {
                self.run_pos[self.running_idx[p] as usize] = p as u32;
            }
            self.outcomes[i].end = t;
            if self.track {
                let (off, len) = self.res_at[i];
                self.set
                    .give(&self.arena[off as usize..(off + len) as usize]);
            }
        }
        self.finishing.clear();
        if self.queue.len() > self.head && self.free > 0 {
            self.schedule(t, engine)?;
        }
        self.series.record(t, (self.queue.len() - self.head) as u32);
        Ok(())
    }

    /// Sorts the queue from `head` by the priority rule at `t` (or the
    /// scorer's scores, checked) into `sorted` (`perm[k]`: the queue
    /// position, from `head`, of its k-th job).
    fn sort_queue(&mut self, t: u64, head: usize) -> Result<(), BatchError> {
        let jobs = self.jobs;
        self.order_jobs.clear();
        self.order_jobs
            .extend(self.queue_idx[head..].iter().map(|&i| {
                let j = &jobs[i as usize];
                OrderJob {
                    submit: j.submit,
                    requested: j.requested,
                    procs: j.procs,
                    user: j.user,
                    group: j.group,
                    queue: j.queue,
                    partition: j.partition,
                }
            }));
        match self.scorer.as_mut() {
            None => {
                let origin = jobs.first().map_or(0, |j| j.submit);
                self.order.sort(
                    &self.order_jobs,
                    t,
                    origin,
                    &mut self.perm,
                    &mut self.scores,
                )
            }
            Some(scorer) => {
                self.scores.clear();
                scorer
                    .scores(t, self.free, &self.order_jobs, &mut self.scores)
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
                    let id = jobs[self.queue_idx[head + k] as usize].id;
                    PolicyError(format!(
                        "priority returned NaN for job {id} (queue position {k}); allowed: \
                         a number per job (lowest first)"
                    ))
                })?;
            }
        }
        self.sorted.clear();
        let queue = &self.queue[head..];
        self.sorted.extend(self.perm.iter().map(|&k| queue[k]));
        if let Some(rule) = self.backfill {
            // the backfill rule's scores over the queue (arrival positions),
            // then the sorted queue's positions in that order (ties: arrival)
            let origin = jobs.first().map_or(0, |j| j.submit);
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

    /// One scheduling pass: the policy's decisions, checked and applied.
    fn schedule(&mut self, t: u64, engine: &mut Engine<SpaceEvent>) -> Result<(), BatchError> {
        let free = self.free;
        let head = self.head;
        let len = self.queue.len() - head;
        self.decisions.clear();
        let sorted =
            self.order != QueueOrder::Fcfs || self.scorer.is_some() || self.backfill.is_some();
        let queue: &[QueuedJob] = if sorted {
            self.sort_queue(t, head)?;
            &self.sorted
        } else {
            &self.queue[head..]
        };
        self.policy.schedule(
            &BatchView {
                now: t,
                total: self.procs,
                free,
                running: &self.running,
                running_by_end: Some(&self.by_end),
                queue,
                backfill: self.backfill.map(|_| self.bf_perm.as_slice()),
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
                *d = self.perm.get(*d).copied().unwrap_or(*d);
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
            let q = self.queue[head + k];
            if q.procs > self.free {
                return Err(PolicyError(format!(
                    "{} started a job of {} processors with {} free",
                    self.policy.name(),
                    q.procs,
                    self.free
                ))
                .into());
            }
            self.free -= q.procs;
            let i = self.queue_idx[head + k] as usize;
            let (run, killed) = effective_runtime(&self.jobs[i], self.kill);
            self.outcomes[i].start = t;
            self.outcomes[i].killed = killed;
            self.run_pos[i] = self.running.len() as u32;
            let r = RunningJob {
                procs: q.procs,
                requested_end: t + self.jobs[i].requested,
            };
            self.running.push(r);
            let key = (r.requested_end, r.procs);
            let k = self.by_end.partition_point(|e| *e <= key);
            self.by_end.insert(k, key);
            self.running_idx.push(i as u32);
            engine.schedule_at(Time(t + run), SpaceEvent::JobFinished(i as u32));
            if self.track {
                let off = self.arena.len() as u32;
                self.set.take(q.procs, &mut self.arena);
                self.res_at[i] = (off, self.arena.len() as u32 - off);
            }
        }
        let n = taken.len();
        if taken[n - 1] == n - 1 {
            // The usual case (FCFS, heads of the queue): a prefix.
            self.head += n;
            if self.head == self.queue.len() || self.head * 2 > self.queue.len() {
                self.queue.drain(..self.head);
                self.queue_idx.drain(..self.head);
                self.head = 0;
            }
        } else {
            // Keep the jobs not started, in order (a merge with the sorted
            // decisions).
            let mut w = head;
            let mut d = 0;
            for r in head..self.queue.len() {
                if d < n && taken[d] == r - head {
                    d += 1;
                    continue;
                }
                self.queue[w] = self.queue[r];
                self.queue_idx[w] = self.queue_idx[r];
                w += 1;
            }
            self.queue.truncate(w);
            self.queue_idx.truncate(w);
        }
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
    let n = jobs.len();
    let track = cfg.track_resources;
    let unset = Outcome {
        start: u64::MAX,
        end: u64::MAX,
        killed: false,
        slot: 0,
    };
    let running_cap = procs.min(1 << 16) as usize;
    let mut model = SpaceModel {
        jobs: &jobs,
        procs,
        policy,
        // (a coercion: the trait object's lifetime shortens to the run's)
        scorer: match scorer {
            Some(s) => Some(s as &mut dyn QueueScorer),
            None => None,
        },
        kill: cfg.kill_on_overrun,
        track,
        outcomes: vec![unset; n],
        running: Vec::with_capacity(running_cap),
        running_idx: Vec::with_capacity(running_cap),
        by_end: Vec::with_capacity(running_cap),
        run_pos: vec![u32::MAX; n],
        queue: Vec::new(),
        head: 0,
        queue_idx: Vec::new(),
        free: procs,
        finishing: Vec::new(),
        decisions: Vec::new(),
        order: cfg.order,
        backfill: cfg.backfill_order.rule(),
        bf_perm: Vec::new(),
        bf_scores: Vec::new(),
        order_jobs: Vec::new(),
        perm: Vec::new(),
        scores: Vec::new(),
        sorted: Vec::new(),
        taken: Vec::new(),
        series: Series { points: Vec::new() },
        set: ProcSet::new(if track { procs } else { 1 }),
        arena: Vec::new(),
        res_at: if track { vec![(0, 0); n] } else { Vec::new() },
    };
    let mut engine = Engine::with_front_slot();
    if let Some(j) = jobs.first() {
        engine.schedule_at(Time(j.submit), SpaceEvent::JobSubmitted(0));
    }
    super::run_model(&mut model, &mut engine)?;
    let (resources, res_index) = if track {
        let mut res = Vec::with_capacity(model.arena.len());
        let mut idx = Vec::with_capacity(n + 1);
        for &(off, len) in &model.res_at {
            idx.push(res.len() as u32);
            res.extend_from_slice(&model.arena[off as usize..(off + len) as usize]);
        }
        idx.push(res.len() as u32);
        (res, idx)
    } else {
        (Vec::new(), Vec::new())
    };
    let name = model.policy.name();
    let (outcomes, points) = (model.outcomes, model.series.points);
    Ok(finish(
        name, procs, cfg, jobs, outcomes, points, 0, resources, res_index, wall,
    ))
}

#[cfg(test)]
mod tests {
    use super::ProcSet;

    /// Runs of free processors are taken and given back exactly as one
    /// processor at a time would: the lowest free first.
    #[test]
    fn proc_set_takes_the_lowest_free_processors() {
        for procs in [1u32, 63, 64, 65, 130, 200] {
            let mut set = ProcSet::new(procs);
            let mut free: Vec<bool> = vec![true; procs as usize];
            let mut held: Vec<Vec<(u32, u32)>> = Vec::new();
            let mut x = 0x2545_f491_4f6c_dd1du64 ^ procs as u64;
            for step in 0..2_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let nfree = free.iter().filter(|&&f| f).count() as u32;
                if !x.is_multiple_of(3) && nfree > 0 {
                    let w = 1 + (x >> 8) as u32 % nfree;
                    let mut got = Vec::new();
                    set.take(w, &mut got);
                    // The reference: the w lowest free, as maximal intervals.
                    let mut want: Vec<(u32, u32)> = Vec::new();
                    let lowest: Vec<u32> = (0..procs)
                        .filter(|&p| free[p as usize])
                        .take(w as usize)
                        .collect();
                    for p in lowest {
                        free[p as usize] = false;
                        match want.last_mut() {
                            Some((_, e)) if *e + 1 == p => *e = p,
                            _ => want.push((p, p)),
                        }
                    }
                    assert_eq!(got, want, "procs {procs} step {step}");
                    held.push(got);
                } else if !held.is_empty() {
                    let r = held.swap_remove((x >> 8) as usize % held.len());
                    set.give(&r);
                    for &(a, b) in &r {
                        for p in a..=b {
                            free[p as usize] = true;
                        }
                    }
                }
            }
            // What is still held is exactly what is not free.
            let busy: usize = held
                .iter()
                .flatten()
                .map(|&(a, b)| (b - a + 1) as usize)
                .sum();
            assert_eq!(busy, free.iter().filter(|&&f| !f).count());
        }
    }
}
