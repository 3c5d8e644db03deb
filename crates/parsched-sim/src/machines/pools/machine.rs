//! The simulated shared-memory multiprocessor of seed 000: processors grouped in
//! pools, one run queue per pool served round robin with time slice `T`, and the
//! four overheads of section 3.3. The local scheduler (which thread runs this
//! instant) is this machine's mechanism; *where* threads go and *how many* a job
//! creates is asked of a [`PoolPolicy`].
//!
//! Round robin (section 3.1): when a slice expires the pool's run queue is
//! inspected; if it is empty the thread continues without a context switch,
//! otherwise it goes to the tail and the head runs. A thread that becomes ready
//! takes an idle processor of its pool if there is one, else joins the tail.
//! Each pool's run queue is the core's [`RoundRobin`] (quantum `T`, woken
//! threads to the tail), the same policy as the barrier machine's
//! per-processor queues; this machine keeps the mechanism (idle processors,
//! dispatch, switch costs, the slice timers).
//!
//! **Time.** One engine tick is 10^-6 of the paper's abstract time unit
//! ([`TICKS_PER_UNIT`] ticks per unit), so that overheads such as r = 0.003
//! units are exact; results are reported in units.

use crate::engine::{Engine, Flow, Model, Timer};
use crate::rng::{stream, Stream, StreamRng};
use crate::workloads::forkjoin::{JobSource, JobSpec};
use parsched_core::policy::local::{EnqueueReason, LocalScheduler, RoundRobin, Wakeup};
use parsched_core::policy::pools::{ForkRequest, PoolPolicy, PoolState};
use parsched_core::program::{Cursor, Op, Program};
use parsched_core::time::{ticks_to_units, TickUnit, TICKS_PER_UNIT};
use parsched_core::topology::PoolLayout;
use parsched_core::{JobId, PolicyError, PoolId, ThreadId, Time};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub use super::overheads::{Combine, Overheads, SwitchCost};

const NONE: u32 = u32::MAX;

/// What one tick of the pool machine is: 10^-6 of the paper's time unit
/// ([`TICKS_PER_UNIT`] ticks per unit).
pub const TICK: TickUnit = TickUnit::MicroUnit;

/// What a finished job did, times in model units.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    /// Index of the job in arrival order within its replication.
    pub job: u64,
    pub arrival: f64,
    pub init_start: f64,
    pub para_start: f64,
    pub para_end: f64,
    pub final_start: f64,
    pub finish: f64,
    /// Desired parallelism d.
    pub d: u32,
    /// Actual parallelism a.
    pub a: u32,
    /// Pools holding at least one parallel thread (k).
    pub pools_used: u32,
    pub home_pool: u32,
}

impl JobRecord {
    pub fn response(&self) -> f64 {
        self.finish - self.arrival
    }
}

pub use crate::machines::common::MachineError;

/// The pool machine's refusal of a program that touches regions.
fn no_caches(job: u64) -> MachineError {
    MachineError::Program {
        job,
        msg: "the pool machine models no caches: programs that touch regions (Touch steps) \
              need a machine with a cache model (parsched simulate regions)"
            .into(),
    }
}

/// Counters of one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineStats {
    /// Ticks processors spent running threads (inflated demand).
    pub busy_work: u64,
    /// Ticks processors spent in context-switch overhead.
    pub busy_overhead: u64,
    /// Inflated demand of every compute operation handed to the machine.
    pub demand: u64,
    pub context_switches: u64,
    /// Slices that expired with another thread waiting.
    pub preemptions: u64,
    pub jobs_finished: u64,
    pub threads_created: u64,
    /// Pools handed to the placement policy (all of them at every arrival
    /// and every fork): the placement's work grows with it.
    #[serde(default)]
    pub pool_visits: u64,
}

#[derive(Debug, Clone, Copy)]
pub enum Ev {
    /// The next job of the source arrived.
    JobArrived,
    /// The running thread's segment (up to its slice end or its step's end)
    /// on `proc` ended. Its processor's timer: re-dispatching cancels it.
    SegmentEnded { proc: u32 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ThreadState {
    Ready,
    Running,
    Sleeping,
    Free,
}

struct Proc {
    pool: u32,
    thread: u32,
    last_job: u64,
    seg_start: Time,
    slice_end: Time,
    /// Fires the running thread's `SegmentEnded`.
    timer: Timer,
}

struct Pool {
    size: u32,
    /// The pool's run queue (thread indices as [`ThreadId`]s).
    queue: RoundRobin,
    idle: Vec<u32>,
    /// Run-queue contention per switch, ticks.
    contention: u64,
}

struct Thread {
    job: u32,
    pool: u32,
    remaining: u64,
    inflation: f64,
    cursor: Cursor,
    program: Arc<Program>,
    state: ThreadState,
    on_proc: u32,
}

struct Job {
    id: u64,
    master: u32,
    home: u32,
    outstanding: u32,
    d: u32,
    a: u32,
    pools_used: u32,
    arrival: Time,
    init_start: Option<Time>,
    para_start: Time,
    para_end: Option<Time>,
    final_start: Option<Time>,
    rng: StreamRng,
}

enum Next {
    Compute,
    Fork(u32, Arc<Program>),
    Exit,
}

/// Machine options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MachineConfig {
    /// Time slice T, in ticks.
    pub slice: u64,
    pub overheads: Overheads,
    /// Check invariants after every event (slow; for tests).
    pub audit: bool,
    /// Keep a record per job.
    pub records: bool,
}

/// The pooled multiprocessor, running jobs from a [`JobSource`] under a [`PoolPolicy`].
pub struct PoolMachine<'a> {
    cfg: MachineConfig,
    seed: u64,
    procs: Vec<Proc>,
    pools: Vec<Pool>,
    threads: Vec<Thread>,
    free_threads: Vec<u32>,
    jobs: Vec<Job>,
    free_jobs: Vec<u32>,
    source: &'a mut dyn JobSource,
    pending: Option<JobSpec>,
    policy: &'a mut dyn PoolPolicy,
    view: Vec<PoolState>,
    next_job_id: u64,
    c_other: u64,
    c_same: u64,
    pub stats: MachineStats,
    pub records: Vec<JobRecord>,
    last_seg_end: Vec<Time>,
    /// The run's cancel flag, also looked at on the cadence of the pools
    /// scanned (one scan of 10^6 pools takes ~30 ms).
    cancel: crate::cancel::Watch,
}

impl<'a> PoolMachine<'a> {
    pub fn new(
        cfg: MachineConfig,
        layout: &PoolLayout,
        seed: u64,
        source: &'a mut dyn JobSource,
        policy: &'a mut dyn PoolPolicy,
    ) -> PoolMachine<'a> {
        let ov = cfg.overheads;
        let mut procs = Vec::new();
        let mut pools = Vec::new();
        for (i, size) in layout.sizes().into_iter().enumerate() {
            let members = layout.pool(PoolId(i as u32));
            for &p in members {
                debug_assert_eq!(p.idx(), procs.len(), "pools list processors in order");
                let _ = p;
                procs.push(Proc {
                    pool: i as u32,
                    thread: NONE,
                    last_job: u64::MAX,
                    seg_start: Time::ZERO,
                    slice_end: Time::ZERO,
                    timer: Timer::UNSET,
                });
            }
            pools.push(Pool {
                size,
                queue: RoundRobin::new(cfg.slice, Wakeup::Tail),
                // Idle processors are taken from the end: lowest index first.
                idle: members.iter().rev().map(|p| p.0).collect(),
                contention: units(ov.contention(size)),
            });
        }
        let n = procs.len();
        PoolMachine {
            cfg,
            seed,
            procs,
            pools,
            threads: Vec::new(),
            free_threads: Vec::new(),
            jobs: Vec::new(),
            free_jobs: Vec::new(),
            source,
            pending: None,
            policy,
            view: Vec::new(),
            next_job_id: 0,
            c_other: units(ov.c),
            c_same: units(ov.c * ov.t),
            stats: MachineStats::default(),
            records: Vec::new(),
            last_seg_end: vec![Time::ZERO; n],
            cancel: crate::cancel::Watch::new(),
        }
    }

    /// Runs every job of the source to completion; returns the final time.
    pub fn run(&mut self, engine: &mut Engine<Ev>) -> Result<Time, MachineError> {
        for proc in &mut self.procs {
            proc.timer = engine.timer();
        }
        self.pending = self.source.next_job();
        if let Some(j) = &self.pending {
            engine.schedule_at(j.arrival, Ev::JobArrived);
        }
        crate::engine::run_watched(self, engine, || MachineError::Interrupted)?;
        Ok(engine.now())
    }

    fn refresh_view(&mut self) -> Result<(), MachineError> {
        if self.cancel.advance(self.pools.len() as u32) {
            return Err(MachineError::Interrupted);
        }
        self.stats.pool_visits += self.pools.len() as u64;
        self.view.clear();
        self.view.extend(self.pools.iter().map(|p| {
            let idle = p.idle.len() as u32;
            PoolState {
                size: p.size,
                idle,
                load: p.size - idle + p.queue.len() as u32,
            }
        }));
        Ok(())
    }

    fn new_thread(
        &mut self,
        job: u32,
        pool: u32,
        width: u32,
        program: Arc<Program>,
        inflation: f64,
    ) -> u32 {
        self.stats.threads_created += 1;
        let t = Thread {
            job,
            pool,
            remaining: 0,
            inflation,
            cursor: Cursor::new(width),
            program,
            state: ThreadState::Sleeping,
            on_proc: NONE,
        };
        match self.free_threads.pop() {
            Some(i) => {
                self.threads[i as usize] = t;
                i
            }
            None => {
                self.threads.push(t);
                (self.threads.len() - 1) as u32
            }
        }
    }

    /// Interprets the thread's program up to its next blocking point.
    fn advance(&mut self, th: u32) -> Result<Next, MachineError> {
        let t = &mut self.threads[th as usize];
        let job = &mut self.jobs[t.job as usize];
        loop {
            match t.cursor.next(&t.program, &mut job.rng) {
                Op::Compute { units: u } => {
                    let ticks = (u * t.inflation * TICKS_PER_UNIT as f64).round() as u64;
                    if ticks == 0 {
                        continue;
                    }
                    self.stats.demand += ticks;
                    t.remaining = ticks;
                    return Ok(Next::Compute);
                }
                Op::ForkJoin { desired, child } => return Ok(Next::Fork(desired, child.clone())),
                Op::Exit => return Ok(Next::Exit),
                Op::Barrier => {
                    return Err(MachineError::Program {
                        job: job.id,
                        msg: "the pool machine has no barriers (use fork-join programs)".into(),
                    })
                }
                Op::Send { .. } | Op::Receive { .. } => {
                    return Err(MachineError::Program {
                        job: job.id,
                        msg: "the pool machine has no message passing (use fork-join programs)"
                            .into(),
                    })
                }
                Op::Touch { .. } => return Err(no_caches(job.id)),
            }
        }
    }

    /// `th` became ready (`New`, or `Woken` after its children joined): an
    /// idle processor of its pool runs it, else it is queued.
    fn make_ready(&mut self, th: u32, reason: EnqueueReason, eng: &mut Engine<Ev>) {
        let pool = self.threads[th as usize].pool as usize;
        match self.pools[pool].idle.pop() {
            Some(p) => self.dispatch(p, th, true, eng),
            None => {
                self.threads[th as usize].state = ThreadState::Ready;
                self.pools[pool].queue.enqueue(ThreadId(th), reason);
            }
        }
    }

    /// Starts `th` on processor `p`, paying the switch costs if `switch`.
    fn dispatch(&mut self, p: u32, th: u32, switch: bool, eng: &mut Engine<Ev>) {
        let now = eng.now();
        let t = &mut self.threads[th as usize];
        let job = &mut self.jobs[t.job as usize];
        let proc = &mut self.procs[p as usize];
        let cost = if switch {
            self.stats.context_switches += 1;
            let cache = if proc.last_job == job.id {
                self.c_same
            } else {
                self.c_other
            };
            self.pools[proc.pool as usize].contention + cache
        } else {
            0
        };
        self.stats.busy_overhead += cost;
        t.state = ThreadState::Running;
        t.on_proc = p;
        if job.master == th {
            if job.init_start.is_none() {
                job.init_start = Some(now);
            } else if job.para_end.is_some() && job.final_start.is_none() {
                job.final_start = Some(now);
            }
        }
        proc.thread = th;
        proc.last_job = job.id;
        proc.seg_start = now + cost;
        let slice = self.pools[proc.pool as usize].queue.quantum(ThreadId(th));
        proc.slice_end = proc.seg_start + slice;
        let run = t.remaining.min(slice);
        eng.set_timer(
            proc.timer,
            proc.seg_start + run,
            Ev::SegmentEnded { proc: p },
        );
    }

    /// Continues the running thread of `p` for a new segment without a switch.
    fn continue_on(&mut self, p: u32, new_slice: bool, eng: &mut Engine<Ev>) {
        let now = eng.now();
        let proc = &mut self.procs[p as usize];
        if new_slice {
            let queue = &self.pools[proc.pool as usize].queue;
            proc.slice_end = now + queue.quantum(ThreadId(proc.thread));
        }
        proc.seg_start = now;
        let run = self.threads[proc.thread as usize]
            .remaining
            .min(proc.slice_end - now);
        eng.set_timer(proc.timer, now + run, Ev::SegmentEnded { proc: p });
    }

    /// Processor `p` gives up its thread: it takes the next ready thread or idles.
    fn release(&mut self, p: u32, eng: &mut Engine<Ev>) {
        let pool = self.procs[p as usize].pool as usize;
        self.procs[p as usize].thread = NONE;
        match self.pools[pool].queue.pick_next() {
            Some(next) => {
                let switch = self.cfg.overheads.switch_cost == SwitchCost::EveryDispatch;
                self.dispatch(p, next.0, switch, eng)
            }
            None => self.pools[pool].idle.push(p),
        }
    }

    fn arrive(&mut self, eng: &mut Engine<Ev>) -> Result<(), MachineError> {
        let spec = self.pending.take().expect("an arrival has a pending job");
        self.pending = self.source.next_job();
        if let Some(j) = &self.pending {
            eng.schedule_at(j.arrival.max(eng.now()), Ev::JobArrived);
        }
        let id = self.next_job_id;
        self.next_job_id += 1;
        if spec.program.touches_regions() {
            return Err(no_caches(id));
        }
        self.refresh_view()?;
        let home = self.policy.home_pool(JobId(id), &self.view)?;
        if home.idx() >= self.pools.len() {
            return Err(PolicyError(format!(
                "home_pool returned pool {}; allowed 0..{}",
                home.0,
                self.pools.len()
            ))
            .into());
        }
        let job = Job {
            id,
            master: NONE,
            home: home.0,
            outstanding: 0,
            d: spec.desired,
            a: 0,
            pools_used: 0,
            arrival: eng.now(),
            init_start: None,
            para_start: Time::ZERO,
            para_end: None,
            final_start: None,
            rng: stream(self.seed, Stream::ThreadDemand, id),
        };
        let slot = match self.free_jobs.pop() {
            Some(s) => {
                self.jobs[s as usize] = job;
                s
            }
            None => {
                self.jobs.push(job);
                (self.jobs.len() - 1) as u32
            }
        };
        let inflation = if self.cfg.overheads.inflate_master {
            let size = self.pools[home.idx()].size;
            self.cfg.overheads.inflation(size, 1, size as f64)
        } else {
            1.0
        };
        let master = self.new_thread(slot, home.0, 1, Arc::new(spec.program), inflation);
        self.jobs[slot as usize].master = master;
        tracing::trace!(
            t = eng.now().as_units(),
            job = id,
            home = home.0,
            d = spec.desired,
            "JobArrived"
        );
        self.step_new(master, EnqueueReason::New, eng)
    }

    /// Runs a thread's program from where it stands while it is off-processor.
    fn step_new(
        &mut self,
        th: u32,
        reason: EnqueueReason,
        eng: &mut Engine<Ev>,
    ) -> Result<(), MachineError> {
        match self.advance(th)? {
            Next::Compute => {
                self.make_ready(th, reason, eng);
                Ok(())
            }
            Next::Fork(d, child) => self.fork(th, d, child, eng),
            Next::Exit => self.exit(th, eng),
        }
    }

    fn fork(
        &mut self,
        master: u32,
        desired: u32,
        child: Arc<Program>,
        eng: &mut Engine<Ev>,
    ) -> Result<(), MachineError> {
        let slot = self.threads[master as usize].job;
        self.threads[master as usize].state = ThreadState::Sleeping;
        self.refresh_view()?;
        let (id, home) = {
            let j = &self.jobs[slot as usize];
            (j.id, j.home)
        };
        let req = ForkRequest {
            job: JobId(id),
            home: PoolId(home),
            desired,
        };
        let placement = self.policy.place(&req, &self.view)?;
        placement.check(&self.view, desired)?;
        let a = placement.total();
        let k = placement.pools_used();
        let mean_p = placement
            .threads
            .iter()
            .filter(|&&(_, n)| n > 0)
            .map(|&(p, _)| self.pools[p.idx()].size as f64)
            .sum::<f64>()
            / k as f64;
        {
            let j = &mut self.jobs[slot as usize];
            j.a = a;
            j.pools_used = k;
            j.outstanding = a;
            j.para_start = eng.now();
        }
        tracing::trace!(t = eng.now().as_units(), job = id, a, k, "ForkPlaced");
        for &(pool, n) in &placement.threads {
            let infl = self
                .cfg
                .overheads
                .inflation(self.pools[pool.idx()].size, k, mean_p);
            for _ in 0..n {
                let th = self.new_thread(slot, pool.0, a, child.clone(), infl);
                self.step_new(th, EnqueueReason::New, eng)?;
            }
        }
        Ok(())
    }

    /// A thread's program ended (it is off-processor).
    fn exit(&mut self, th: u32, eng: &mut Engine<Ev>) -> Result<(), MachineError> {
        let slot = self.threads[th as usize].job;
        self.threads[th as usize].state = ThreadState::Free;
        self.threads[th as usize].on_proc = NONE;
        self.free_threads.push(th);
        let job = &mut self.jobs[slot as usize];
        if job.master != th {
            job.outstanding -= 1;
            if job.outstanding == 0 {
                job.para_end = Some(eng.now());
                let m = job.master;
                let home = job.home;
                self.threads[m as usize].pool = home;
                return self.step_new(m, EnqueueReason::Woken, eng);
            }
            return Ok(());
        }
        // The master ended: the job is done.
        let now = eng.now();
        self.stats.jobs_finished += 1;
        if self.cfg.records {
            let u = |t: Option<Time>| t.map_or(f64::NAN, |t| t.as_units());
            let para_end = u(job.para_end);
            self.records.push(JobRecord {
                job: job.id,
                arrival: job.arrival.as_units(),
                init_start: u(job.init_start),
                para_start: job.para_start.as_units(),
                para_end,
                final_start: job.final_start.map_or(para_end, |t| t.as_units()),
                finish: now.as_units(),
                d: job.d,
                a: job.a,
                pools_used: job.pools_used,
                home_pool: job.home,
            });
        }
        tracing::trace!(t = now.as_units(), job = job.id, "JobFinished");
        self.free_jobs.push(slot);
        Ok(())
    }

    fn segment_end(&mut self, p: u32, eng: &mut Engine<Ev>) -> Result<(), MachineError> {
        let proc = &self.procs[p as usize];
        if proc.thread == NONE {
            return Ok(());
        }
        let now = eng.now();
        let th = proc.thread;
        let ran = now - proc.seg_start;
        if self.cfg.audit {
            if proc.seg_start < self.last_seg_end[p as usize] {
                return Err(MachineError::Invariant {
                    time: now.as_units(),
                    msg: format!("processor {p} ran two segments at once"),
                });
            }
            self.last_seg_end[p as usize] = now;
        }
        self.stats.busy_work += ran;
        let t = &mut self.threads[th as usize];
        t.remaining -= ran;
        if t.remaining > 0 {
            self.slice_expired(p, th, eng);
            return Ok(());
        }
        match self.advance(th)? {
            Next::Compute => {
                if self.procs[p as usize].slice_end > now {
                    self.continue_on(p, false, eng);
                } else {
                    // The slice was used up exactly as the operation ended.
                    self.slice_expired(p, th, eng);
                }
            }
            Next::Fork(d, child) => {
                let t = &mut self.threads[th as usize];
                t.state = ThreadState::Sleeping;
                t.on_proc = NONE;
                self.release(p, eng);
                self.fork(th, d, child, eng)?;
            }
            Next::Exit => {
                self.threads[th as usize].on_proc = NONE;
                self.release(p, eng);
                self.exit(th, eng)?;
            }
        }
        Ok(())
    }

    /// Round robin at slice expiry (section 3.1): continue without a switch if
    /// the pool's queue is empty, else requeue `th` at the tail and run the head.
    fn slice_expired(&mut self, p: u32, th: u32, eng: &mut Engine<Ev>) {
        let queue = &mut self.pools[self.procs[p as usize].pool as usize].queue;
        if !queue.should_preempt(ThreadId(th)) {
            queue.continue_running(ThreadId(th));
            self.continue_on(p, true, eng);
            return;
        }
        let next = queue.pick_next().expect("a thread waits");
        queue.enqueue(ThreadId(th), EnqueueReason::QuantumExpired);
        self.stats.preemptions += 1;
        let t = &mut self.threads[th as usize];
        t.state = ThreadState::Ready;
        t.on_proc = NONE;
        self.dispatch(p, next.0, true, eng);
    }

    fn audit(&self, now: Time) -> Result<(), MachineError> {
        let err = |msg: String| MachineError::Invariant {
            time: now.as_units(),
            msg,
        };
        let mut seen = vec![0u8; self.threads.len()];
        for (i, p) in self.procs.iter().enumerate() {
            if p.thread != NONE {
                let t = &self.threads[p.thread as usize];
                if t.state != ThreadState::Running || t.on_proc != i as u32 {
                    return Err(err(format!(
                        "processor {i} holds thread {} in state {:?}",
                        p.thread, t.state
                    )));
                }
                if t.pool != p.pool {
                    return Err(err(format!("thread {} runs outside its pool", p.thread)));
                }
                seen[p.thread as usize] += 1;
            }
        }
        for (pi, pool) in self.pools.iter().enumerate() {
            for &q in &pool.idle {
                if self.procs[q as usize].thread != NONE || self.procs[q as usize].pool != pi as u32
                {
                    return Err(err(format!(
                        "idle processor {q} is busy or in another pool"
                    )));
                }
            }
            if !pool.queue.is_empty() && !pool.idle.is_empty() {
                return Err(err(format!(
                    "pool {pi} has ready threads and idle processors"
                )));
            }
            for t in pool.queue.iter().map(|t| t.0) {
                if self.threads[t as usize].state != ThreadState::Ready {
                    return Err(err(format!("queued thread {t} is not ready")));
                }
                seen[t as usize] += 1;
            }
        }
        if let Some(t) = seen.iter().position(|&n| n > 1) {
            return Err(err(format!("thread {t} is in two places at once")));
        }
        Ok(())
    }

    /// Ticks of each pool's contention cost (for tests).
    pub fn pool_sizes(&self) -> Vec<u32> {
        self.pools.iter().map(|p| p.size).collect()
    }
}

impl Model for PoolMachine<'_> {
    type Event = Ev;
    type Error = MachineError;

    #[inline]
    fn handle(&mut self, event: Ev, eng: &mut Engine<Ev>) -> Result<Flow, MachineError> {
        match event {
            Ev::JobArrived => self.arrive(eng)?,
            Ev::SegmentEnded { proc } => self.segment_end(proc, eng)?,
        }
        if self.cfg.audit {
            self.audit(eng.now())?;
        }
        Ok(Flow::Continue)
    }
}

/// Units → ticks.
fn units(u: f64) -> u64 {
    (u * TICKS_PER_UNIT as f64).round() as u64
}

/// Ticks → units (re-exported for callers).
pub fn as_units(t: u64) -> f64 {
    ticks_to_units(t)
}

/// The event type of the pool machine (public so callers can own the engine).
pub type PoolEvent = Ev;

#[cfg(test)]
mod tests {
    use super::*;
    use parsched_core::policy::pools::ZhouBrecht;
    use parsched_core::topology::Topology;

    struct One(Option<JobSpec>);
    impl JobSource for One {
        fn next_job(&mut self) -> Option<JobSpec> {
            self.0.take()
        }
    }

    /// A program that touches regions is refused with one clear error, not
    /// a panic (the pool machine models no caches).
    #[test]
    fn pool_machine_rejects_region_touches() {
        let layout = PoolLayout::equal(&Topology::flat(4).unwrap(), 2).unwrap();
        let mut source = One(Some(JobSpec {
            arrival: Time::ZERO,
            desired: 1,
            program: Program::memlat(1 << 20, 4096, 10),
        }));
        let mut policy = ZhouBrecht::default();
        let cfg = MachineConfig {
            slice: units(1.0),
            overheads: Overheads::none(),
            audit: false,
            records: false,
        };
        let mut m = PoolMachine::new(cfg, &layout, 1, &mut source, &mut policy);
        let err = m.run(&mut Engine::new()).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("models no caches"), "{msg}");
    }

    /// The view refresh looks at the flag on the one cadence, counting
    /// pools scanned: a set flag stops it once CHECK_EVERY pools were seen.
    #[test]
    fn a_set_flag_stops_the_view_refresh_within_one_cadence() {
        use crate::cancel::{with_cancel, CHECK_EVERY};
        use std::sync::{atomic::AtomicBool, Arc};
        let layout = PoolLayout::equal(&Topology::flat(64).unwrap(), 2).unwrap();
        let mut source = One(None);
        let mut policy = ZhouBrecht::default();
        let cfg = MachineConfig {
            slice: units(1.0),
            overheads: Overheads::none(),
            audit: false,
            records: false,
        };
        let flag = Arc::new(AtomicBool::new(true));
        with_cancel(&flag, || {
            let mut m = PoolMachine::new(cfg, &layout, 1, &mut source, &mut policy);
            let n = m.pools.len() as u32;
            assert!(n > 1 && n < CHECK_EVERY);
            let calls = (1..=CHECK_EVERY).find(|_| m.refresh_view().is_err());
            assert_eq!(calls, Some(CHECK_EVERY.div_ceil(n)));
        });
        // without a flag it never stops
        let mut m = PoolMachine::new(cfg, &layout, 1, &mut source, &mut policy);
        assert!((0..2 * CHECK_EVERY).all(|_| m.refresh_view().is_ok()));
    }
}
