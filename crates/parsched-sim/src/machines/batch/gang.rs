//! Gang scheduling of rigid jobs: the admission queue, the matrix and the
//! slot rotation are `parsched_core`'s [`GangScheduler`]; this [`Model`]
//! adds time (each job's run time left, the slot quantum as a
//! cancellable timer). See the [module documentation](super) for the rules
//! and the order of events at equal times. The slot each admitted job goes
//! to is the matrix's rule, or a [`SlotChooser`] given to
//! [`simulate_gang_placed`] (a rule written in Python), checked by the core.

use super::result::{finish, Outcome, Series};
use super::{check_jobs, effective_runtime, BatchConfig, BatchError, BatchResult};
use crate::engine::{Engine, Flow, Model, Timer};
use crate::workloads::swf::BatchJob;
use parsched_core::policy::gang::{GangId, GangMatrix, MatrixOptions, SlotId};
use parsched_core::policy::gang_place::{SlotChooser, SlotJob};
use parsched_core::policy::gang_sched::{GangSchedOptions, GangScheduler};
use parsched_core::{PolicyError, Time};
use std::time::Instant;

/// What happens on the gang-scheduled machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GangEvent {
    /// The job (its index in the submit-time-sorted list) was submitted: it
    /// joins the admission queue. Handling it schedules the next submission
    /// (one is pending at a time).
    JobSubmitted(u32),
    /// A job of the running slot has run its time: every job of the slot
    /// with no time left ends.
    JobFinished,
    /// The running slot's quantum is over.
    SlotEnded,
}

/// The state of a gang-scheduled run. The running slot has one timer: it
/// fires `JobFinished` or `SlotEnded`, whichever comes first (`JobFinished`
/// at equal times; the quantum's end is seen at the instant's close anyway),
/// and is re-armed whenever the running slot, its jobs or its quantum change.
///
/// Time per slot: a job progresses only while its slot runs, so each slot
/// counts the time it has run (`served`) and each job the count at which it
/// is done (`target`, the count at admission plus its run time): its run
/// time left is `target − served`, and the running slot's progress is one
/// addition, not a pass over its jobs.
struct GangModel<'a, 'h> {
    jobs: &'a [BatchJob],
    cfg: &'a BatchConfig,
    sched: GangScheduler,
    outcomes: Vec<Outcome>,
    /// Per job: its slot's `served` count at which it is done.
    target: Vec<u64>,
    /// Per slot index: the time the slot has run, accounted up to `last`
    /// for the running slot.
    served: Vec<u64>,
    /// Per slot index: the least `target` of its jobs (`u64::MAX`: none),
    /// valid unless `stale`.
    least: Vec<u64>,
    /// Per slot index: its jobs changed since `least` was computed.
    stale: Vec<bool>,
    /// Per slot index: it holds jobs that have not started.
    unstarted: Vec<bool>,
    last: u64,
    /// When the running slot's quantum ends (`u64::MAX`: it runs alone).
    slot_end: u64,
    timer: Timer,
    /// What `timer` is armed with (time `u64::MAX`: not armed).
    armed: (u64, GangEvent),
    /// A job ended or was submitted at the current instant.
    changed: bool,
    switches: u64,
    series: Series,
    resources: Vec<Vec<(u32, u32)>>,
    finished: Vec<u32>,
    /// Slots that received a job in the current admission pass.
    admitted: Vec<SlotId>,
    /// The slot choice written outside the core (`None`: the matrix's rule).
    chooser: Option<&'h mut dyn SlotChooser>,
}

fn idx(g: GangId) -> usize {
    g.0 as usize
}

impl Model for GangModel<'_, '_> {
    type Event = GangEvent;
    type Error = BatchError;

    fn handle(
        &mut self,
        event: GangEvent,
        engine: &mut Engine<GangEvent>,
    ) -> Result<Flow, BatchError> {
        let now = engine.now();
        match event {
            GangEvent::JobSubmitted(i) => {
                let j = &self.jobs[i as usize];
                self.sched
                    .enqueue(GangId(i as u64), j.procs)
                    .map_err(PolicyError::from)?;
                self.changed = true;
                if let Some(next) = self.jobs.get(i as usize + 1) {
                    engine.schedule_at(Time(next.submit), GangEvent::JobSubmitted(i + 1));
                }
            }
            GangEvent::JobFinished => {
                self.armed.0 = u64::MAX;
                self.complete(now.0)?;
            }
            // The instant's close switches slots (the quantum is over).
            GangEvent::SlotEnded => self.armed.0 = u64::MAX,
        }
        if engine.next_live_time() != Some(now) {
            self.close_instant(now.0, engine)?;
        }
        Ok(Flow::Continue)
    }
}

impl GangModel<'_, '_> {
    /// Accounts the running slot's progress up to `t`.
    fn advance(&mut self, t: u64) {
        if let Some(c) = self.sched.current() {
            self.served[c.idx()] += t - self.last;
        }
        self.last = t;
    }

    /// The least `target` of slot `s`'s jobs.
    fn least(&mut self, s: SlotId) -> u64 {
        let k = s.idx();
        if self.stale[k] {
            self.stale[k] = false;
            self.least[k] = self
                .sched
                .matrix()
                .gangs_of(s)
                .iter()
                .map(|&g| self.target[idx(g)])
                .min()
                .unwrap_or(u64::MAX);
        }
        self.least[k]
    }

    /// Progress up to `t`; the running slot's jobs with no time left end
    /// (ascending index).
    fn complete(&mut self, t: u64) -> Result<(), BatchError> {
        self.advance(t);
        let Some(c) = self.sched.current() else {
            return Ok(());
        };
        let served = self.served[c.idx()];
        self.finished.clear();
        for &g in self.sched.gangs_in_current() {
            if self.target[idx(g)] == served {
                self.finished.push(g.0 as u32);
            }
        }
        self.finished.sort_unstable();
        for k in 0..self.finished.len() {
            let i = self.finished[k];
            self.sched
                .finish(GangId(i as u64))
                .map_err(PolicyError::from)?;
            self.outcomes[i as usize].end = t;
            self.changed = true;
            self.stale[c.idx()] = true;
        }
        Ok(())
    }

    /// Every event at `t` has been handled: admission pass, slot switch,
    /// and the running slot's timer re-armed.
    fn close_instant(&mut self, t: u64, engine: &mut Engine<GangEvent>) -> Result<(), BatchError> {
        self.advance(t);
        if std::mem::take(&mut self.changed) && self.sched.waiting().len() > 0 {
            self.admit(t)?;
        }
        let cur = self.sched.current();
        let into_current = cur.is_some_and(|s| self.admitted.contains(&s));
        // Zero-length jobs admitted into the running slot finish now (a
        // `JobFinished` at `t`; the switch waits for it). Other jobs of the
        // running slot have time left: those without ended at `t` already.
        if let Some(c) = cur.filter(|_| into_current) {
            if self.least(c) == self.served[c.idx()] {
                self.mark_started(c, t);
                self.admitted.clear();
                self.series.record(t, self.sched.waiting().len() as u32);
                self.arm(engine, t, GangEvent::JobFinished);
                return Ok(());
            }
        }
        // Slot switch.
        let empty = self.sched.gangs_in_current().is_empty();
        let switching = empty || t >= self.slot_end;
        if switching {
            let occupied = self.sched.matrix().num_occupied_slots();
            let change = self.sched.rotate(|_| true);
            if change.is_switch() {
                self.switches += 1;
            }
            self.slot_end = if occupied > 1 {
                t + self.cfg.quantum
            } else {
                u64::MAX
            };
        } else if self.slot_end == u64::MAX && self.sched.matrix().num_occupied_slots() > 1 {
            // A second slot was just opened: the running one gets a quantum.
            self.slot_end = t + self.cfg.quantum;
        }
        // Jobs of the slot that runs from now on have started (a job
        // admitted into a slot whose quantum ends now starts only when the
        // slot comes round again).
        let done = match self.sched.current() {
            Some(c) => {
                if switching || into_current {
                    self.mark_started(c, t);
                }
                match self.least(c) {
                    u64::MAX => u64::MAX,
                    l => t + (l - self.served[c.idx()]),
                }
            }
            None => u64::MAX,
        };
        self.admitted.clear();
        self.series.record(t, self.sched.waiting().len() as u32);
        // The running slot's timer: its next end of a job, or its quantum.
        if done <= self.slot_end {
            self.arm(engine, done, GangEvent::JobFinished);
        } else {
            self.arm(engine, self.slot_end, GangEvent::SlotEnded);
        }
        Ok(())
    }

    /// Slot `s`'s jobs not started yet start at `t`.
    fn mark_started(&mut self, s: SlotId, t: u64) {
        if !std::mem::take(&mut self.unstarted[s.idx()]) {
            return;
        }
        for &g in self.sched.matrix().gangs_of(s) {
            let o = &mut self.outcomes[idx(g)];
            if o.start == u64::MAX {
                o.start = t;
            }
        }
    }

    /// Arms the running slot's timer to fire `event` at `at` (`u64::MAX`:
    /// never), unless it is armed so already.
    fn arm(&mut self, engine: &mut Engine<GangEvent>, at: u64, event: GangEvent) {
        if self.armed == (at, event) {
            return;
        }
        if at == u64::MAX {
            if self.armed.0 != u64::MAX {
                engine.cancel(self.timer);
            }
        } else {
            engine.set_timer(self.timer, Time(at), event);
        }
        self.armed = (at, event);
    }

    /// The admission pass: queued jobs placed in the matrix in order (with
    /// backfilling if configured).
    fn admit(&mut self, t: u64) -> Result<(), BatchError> {
        let backfill = self.cfg.gang_backfill;
        let placed = match self.chooser.as_deref_mut() {
            None => self
                .sched
                .admit_waiting(backfill)
                .map_err(PolicyError::from)?,
            Some(c) => {
                let jobs = self.jobs;
                let job = |g: GangId| {
                    let j = &jobs[idx(g)];
                    SlotJob {
                        id: j.id,
                        requested: j.requested,
                        submit: j.submit,
                    }
                };
                self.sched.admit_waiting_with(backfill, t, job, c)?
            }
        };
        for (g, a) in placed {
            let i = idx(g);
            self.admitted.push(a.slot);
            let (run, killed) = effective_runtime(&self.jobs[i], self.cfg.kill_on_overrun);
            let k = a.slot.idx();
            self.target[i] = self.served[k] + run;
            self.stale[k] = true;
            self.unstarted[k] = true;
            self.outcomes[i].killed = killed;
            self.outcomes[i].slot = k as u32;
            if self.cfg.track_resources {
                let v = &mut self.resources[i];
                for p in &a.procs {
                    match v.last_mut() {
                        Some((_, e)) if *e + 1 == p.0 => *e = p.0,
                        _ => v.push((p.0, p.0)),
                    }
                }
            }
        }
        Ok(())
    }
}

/// Gang scheduling of rigid jobs on a [`GangMatrix`] with `cfg.mpl` slots.
pub fn simulate_gang(
    jobs: Vec<BatchJob>,
    procs: u32,
    cfg: &BatchConfig,
) -> Result<BatchResult, BatchError> {
    simulate_gang_placed(jobs, procs, cfg, None)
}

/// [`simulate_gang`] with each admitted job's slot chosen by `chooser` (once
/// per admission attempt, every answer checked: a bad one is a
/// [`PolicyError`] naming the job) instead of the matrix's rule.
pub fn simulate_gang_placed(
    jobs: Vec<BatchJob>,
    procs: u32,
    cfg: &BatchConfig,
    chooser: Option<&mut dyn SlotChooser>,
) -> Result<BatchResult, BatchError> {
    let wall = Instant::now();
    cfg.validate()?;
    check_jobs(&jobs, procs)?;
    cfg.check_events(&jobs)?;
    let n = jobs.len();
    let matrix = GangMatrix::with_options(
        procs,
        Some(cfg.mpl),
        MatrixOptions {
            slot_allocation: cfg.slot_allocation,
            ..MatrixOptions::default()
        },
    )?;
    let mut engine = Engine::with_front_slot();
    let unset = Outcome {
        start: u64::MAX,
        end: u64::MAX,
        killed: false,
        slot: 0,
    };
    let mut model = GangModel {
        jobs: &jobs,
        cfg,
        sched: GangScheduler::new(matrix, GangSchedOptions::default()),
        outcomes: vec![unset; n],
        target: vec![0; n],
        served: vec![0; cfg.mpl as usize],
        least: vec![u64::MAX; cfg.mpl as usize],
        stale: vec![false; cfg.mpl as usize],
        unstarted: vec![false; cfg.mpl as usize],
        last: 0,
        slot_end: u64::MAX,
        timer: engine.timer(),
        armed: (u64::MAX, GangEvent::SlotEnded),
        changed: false,
        switches: 0,
        series: Series { points: Vec::new() },
        resources: vec![Vec::new(); if cfg.track_resources { n } else { 0 }],
        finished: Vec::new(),
        admitted: Vec::new(),
        chooser,
    };
    if let Some(j) = jobs.first() {
        engine.schedule_at(Time(j.submit), GangEvent::JobSubmitted(0));
    }
    super::run_model(&mut model, &mut engine)?;
    let (res, res_index) = if cfg.track_resources {
        let mut res = Vec::new();
        let mut idx = Vec::with_capacity(n + 1);
        for v in &model.resources {
            idx.push(res.len() as u32);
            res.extend_from_slice(v);
        }
        idx.push(res.len() as u32);
        (res, idx)
    } else {
        (Vec::new(), Vec::new())
    };
    let (outcomes, points, switches) = (model.outcomes, model.series.points, model.switches);
    let mut r = finish(
        "gang", procs, cfg, jobs, outcomes, points, switches, res, res_index, wall,
    );
    r.summary.events = engine.processed();
    Ok(r)
}
