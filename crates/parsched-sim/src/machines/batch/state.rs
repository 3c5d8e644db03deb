//! The space-sharing machine's state, shared by the three ways of driving
//! it: the built-in and Python-ordered policies ([`super::space`]), a
//! policy's full decisions ([`super::select`]) and the step-by-step agent
//! of the Gymnasium environment ([`super::stepper`]). It records events
//! (submissions join the queue, completions release processors when their
//! instant closes) and starts jobs; who decides which jobs start is not its
//! business.

use super::effective_runtime;
use super::result::{finish, Outcome, Series};
use super::{BatchConfig, BatchResult};
use crate::engine::Engine;
use crate::workloads::swf::BatchJob;
use parsched_core::policy::batch::{OrderJob, QueuedJob, RunningJob};
use parsched_core::Time;
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
    /// A policy asked to be called at this time (`wake_at`), whatever else
    /// happens.
    WakeUp,
}

/// The machine: processors, running jobs, the queue, the outcomes.
pub(crate) struct SpaceState {
    pub(crate) procs: u32,
    kill: bool,
    track: bool,
    pub(crate) outcomes: Vec<Outcome>,
    /// Running jobs: the policy's view and, in parallel, job indices.
    pub(crate) running: Vec<RunningJob>,
    pub(crate) running_idx: Vec<u32>,
    /// The running jobs' `(requested_end, procs)`, sorted (the policy's
    /// `running_by_end`).
    pub(crate) by_end: Vec<(u64, u32)>,
    /// Each running job's position in `running`.
    run_pos: Vec<u32>,
    /// The queue: the policy's view and, in parallel, job indices; the
    /// jobs before `head` have started (removed lazily: FCFS starts a
    /// prefix of a queue that may hold 100,000 jobs).
    queue: Vec<QueuedJob>,
    head: usize,
    queue_idx: Vec<u32>,
    pub(crate) free: u32,
    /// Jobs that finished at the current instant, released when it closes.
    finishing: Vec<u32>,
    /// When `log_released` is set, the jobs released, for a caller that
    /// drains it (the stepper's rewards).
    pub(crate) log_released: bool,
    pub(crate) released: Vec<u32>,
    /// Jobs submitted so far (the next one's index).
    pub(crate) submitted: u32,
    series: Series,
    set: ProcSet,
    /// Resource intervals: per job (offset, len) into `arena`, assigned at
    /// start; compacted into job order at the end.
    arena: Vec<(u32, u32)>,
    res_at: Vec<(u32, u32)>,
    /// Scratch for [`SpaceState::remove`].
    taken: Vec<usize>,
}

impl SpaceState {
    pub(crate) fn new(n: usize, procs: u32, cfg: &BatchConfig) -> SpaceState {
        let track = cfg.track_resources;
        let unset = Outcome {
            start: u64::MAX,
            end: u64::MAX,
            killed: false,
            slot: 0,
        };
        let running_cap = procs.min(1 << 16) as usize;
        SpaceState {
            procs,
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
            log_released: false,
            released: Vec::new(),
            submitted: 0,
            series: Series { points: Vec::new() },
            set: ProcSet::new(if track { procs } else { 1 }),
            arena: Vec::new(),
            res_at: if track { vec![(0, 0); n] } else { Vec::new() },
            taken: Vec::new(),
        }
    }

    /// The first submission, to start a run.
    pub(crate) fn first_event(jobs: &[BatchJob], engine: &mut Engine<SpaceEvent>) {
        if let Some(j) = jobs.first() {
            engine.schedule_at(Time(j.submit), SpaceEvent::JobSubmitted(0));
        }
    }

    /// Records `event`. Returns whether it closed its instant (the engine
    /// has no other live event now): the jobs finished at this instant have
    /// then released their processors (ascending index), and the machine
    /// is ready for a scheduling pass.
    #[inline]
    pub(crate) fn record(
        &mut self,
        jobs: &[BatchJob],
        event: SpaceEvent,
        engine: &mut Engine<SpaceEvent>,
    ) -> bool {
        match event {
            SpaceEvent::JobFinished(i) => self.finishing.push(i),
            SpaceEvent::JobSubmitted(i) => {
                let j = &jobs[i as usize];
                self.queue.push(QueuedJob {
                    procs: j.procs,
                    requested: j.requested,
                });
                self.queue_idx.push(i);
                self.submitted = i + 1;
                if let Some(next) = jobs.get(i as usize + 1) {
                    engine.schedule_at(Time(next.submit), SpaceEvent::JobSubmitted(i + 1));
                }
            }
            SpaceEvent::WakeUp => {}
        }
        let now = engine.now();
        if engine.next_live_time() == Some(now) {
            return false;
        }
        self.release(now.0);
        true
    }

    /// The finished jobs release their processors (ascending index).
    fn release(&mut self, t: u64) {
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
        if self.log_released {
            self.released.extend_from_slice(&self.finishing);
        }
        self.finishing.clear();
    }

    /// The waiting jobs, in arrival order.
    #[inline]
    pub(crate) fn queue(&self) -> &[QueuedJob] {
        &self.queue[self.head..]
    }

    /// The waiting jobs' indices in the job list, in arrival order.
    #[inline]
    pub(crate) fn queue_idx(&self) -> &[u32] {
        &self.queue_idx[self.head..]
    }

    /// The queue length, recorded in the series at `t`.
    pub(crate) fn record_queue(&mut self, t: u64) {
        self.series.record(t, (self.queue.len() - self.head) as u32);
    }

    /// The waiting jobs as queue orders see them, into `out`.
    pub(crate) fn order_jobs(&self, jobs: &[BatchJob], out: &mut Vec<OrderJob>) {
        out.clear();
        out.extend(self.queue_idx().iter().map(|&i| {
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
    }

    /// Starts the waiting job at queue position `k` (arrival order) at `t`;
    /// it stays in the queue until [`SpaceState::remove`]. The caller has
    /// checked that it fits.
    pub(crate) fn start(
        &mut self,
        jobs: &[BatchJob],
        k: usize,
        t: u64,
        engine: &mut Engine<SpaceEvent>,
    ) {
        let q = self.queue[self.head + k];
        debug_assert!(q.procs <= self.free);
        self.free -= q.procs;
        let i = self.queue_idx[self.head + k] as usize;
        let (run, killed) = effective_runtime(&jobs[i], self.kill);
        self.outcomes[i].start = t;
        self.outcomes[i].killed = killed;
        self.run_pos[i] = self.running.len() as u32;
        let r = RunningJob {
            procs: q.procs,
            requested_end: t + jobs[i].requested,
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

    /// Removes the started jobs at queue positions `started` (distinct,
    /// any order) from the queue, keeping the others in order.
    pub(crate) fn remove(&mut self, started: &[usize]) {
        let n = started.len();
        if n == 0 {
            return;
        }
        let mut taken = std::mem::take(&mut self.taken);
        taken.clear();
        taken.extend_from_slice(started);
        taken.sort_unstable();
        let head = self.head;
        if taken[n - 1] == n - 1 {
            // The usual case (FCFS, heads of the queue): a prefix.
            self.head += n;
            if self.head == self.queue.len() || self.head * 2 > self.queue.len() {
                self.queue.drain(..self.head);
                self.queue_idx.drain(..self.head);
                self.head = 0;
            }
        } else if taken[n - 1] < self.queue.len() - head - taken[0] {
            // Keep the jobs not started, in order: those before the last
            // position taken move up by the ones taken below them, and the
            // head follows (cheaper than moving the rest of a long queue
            // down when the jobs started are near its front, as
            // backfilled ones mostly are).
            let mut w = head + taken[n - 1];
            let mut d = n - 1;
            for r in (head..head + taken[n - 1]).rev() {
                if d > 0 && taken[d - 1] == r - head {
                    d -= 1;
                    continue;
                }
                self.queue[w] = self.queue[r];
                self.queue_idx[w] = self.queue_idx[r];
                w -= 1;
            }
            self.head = w + 1;
            debug_assert_eq!(self.head, head + n);
            if self.head * 2 > self.queue.len() {
                self.queue.drain(..self.head);
                self.queue_idx.drain(..self.head);
                self.head = 0;
            }
        } else {
            // Keep the jobs not started, in order: those after the first
            // position taken move down.
            let mut w = head + taken[0];
            let mut d = 0;
            for r in head + taken[0]..self.queue.len() {
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
        self.taken = taken;
    }

    /// The result: outcomes, the queue series and the resources, in job
    /// order.
    pub(crate) fn finish(
        self,
        name: &'static str,
        cfg: &BatchConfig,
        jobs: Vec<BatchJob>,
        wall: Instant,
    ) -> BatchResult {
        let n = jobs.len();
        let (resources, res_index) = if self.track {
            let mut res = Vec::with_capacity(self.arena.len());
            let mut idx = Vec::with_capacity(n + 1);
            for &(off, len) in &self.res_at {
                idx.push(res.len() as u32);
                res.extend_from_slice(&self.arena[off as usize..(off + len) as usize]);
            }
            idx.push(res.len() as u32);
            (res, idx)
        } else {
            (Vec::new(), Vec::new())
        };
        finish(
            name,
            self.procs,
            cfg,
            jobs,
            self.outcomes,
            self.series.points,
            0,
            resources,
            res_index,
            wall,
        )
    }
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
