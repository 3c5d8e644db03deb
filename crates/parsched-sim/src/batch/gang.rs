//! Gang scheduling of rigid jobs: the admission queue, the matrix and the
//! slot rotation are `parsched_core`'s [`GangScheduler`]; this [`Model`]
//! adds time (each job's remaining run time, the slot quantum as a
//! cancellable timer). See the [module documentation](super) for the rules
//! and the order of events at equal times.

use super::result::{finish, Outcome, Series};
use super::{check_jobs, effective_runtime, BatchConfig, BatchError, BatchResult};
use crate::engine::{self, Engine, Flow, Model, Timer};
use crate::swf::BatchJob;
use parsched_core::policy::gang::{GangId, GangMatrix, MatrixOptions, SlotId};
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
struct GangModel<'a> {
    jobs: &'a [BatchJob],
    cfg: &'a BatchConfig,
    sched: GangScheduler,
    outcomes: Vec<Outcome>,
    /// Run time left per admitted job, accounted up to `last` for the
    /// running slot's jobs.
    remaining: Vec<u64>,
    last: u64,
    /// When the running slot's quantum ends (`u64::MAX`: it runs alone).
    slot_end: u64,
    timer: Timer,
    /// What `timer` is armed with (time `u64::MAX`: not armed).
    armed: (u64, GangEvent),
    /// A job ended or was submitted at the current instant.
    changed: bool,
    /// A job of the running slot ended at the current instant.
    ended: bool,
    /// The running slot's earliest end of a job (`u64::MAX`: none).
    done: u64,
    switches: u64,
    series: Series,
    resources: Vec<Vec<(u32, u32)>>,
    finished: Vec<u32>,
    /// Slots that received a job in the current admission pass.
    admitted: Vec<SlotId>,
}

fn idx(g: GangId) -> usize {
    g.0 as usize
}

impl Model for GangModel<'_> {
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

impl GangModel<'_> {
    /// Accounts the running slot's progress up to `t`.
    fn advance(&mut self, t: u64) {
        let dt = t - self.last;
        if dt > 0 {
            for &g in self.sched.gangs_in_current() {
                self.remaining[idx(g)] -= dt;
            }
        }
        self.last = t;
    }

    /// Progress up to `t`; the running slot's jobs with no time left end
    /// (ascending index).
    fn complete(&mut self, t: u64) -> Result<(), BatchError> {
        self.advance(t);
        self.finished.clear();
        for &g in self.sched.gangs_in_current() {
            if self.remaining[idx(g)] == 0 {
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
            self.ended = true;
        }
        Ok(())
    }

    /// Every event at `t` has been handled: admission pass, slot switch,
    /// and the running slot's timer re-armed.
    fn close_instant(&mut self, t: u64, engine: &mut Engine<GangEvent>) -> Result<(), BatchError> {
        self.advance(t);
        if std::mem::take(&mut self.changed) && self.sched.waiting().len() > 0 {
            self.admit()?;
        }
        let into_current = self
            .sched
            .current()
            .is_some_and(|s| self.admitted.contains(&s));
        // Zero-length jobs admitted into the running slot finish now (a
        // `JobFinished` at `t`; the switch waits for it). Other jobs of the
        // running slot have time left: those without ended at `t` already.
        if into_current
            && self
                .sched
                .gangs_in_current()
                .iter()
                .any(|&g| self.remaining[idx(g)] == 0)
        {
            self.scan_current(t, true);
            self.admitted.clear();
            self.series.record(t, self.sched.waiting().len() as u32);
            self.arm(engine, t, GangEvent::JobFinished);
            return Ok(());
        }
        // Slot switch.
        let empty = self.sched.gangs_in_current().is_empty();
        let switching = empty || t >= self.slot_end;
        if switching {
            let occupied = occupied_slots(self.sched.matrix());
            let change = self.sched.rotate(|_| true);
            if change.is_switch() {
                self.switches += 1;
            }
            self.slot_end = if occupied > 1 {
                t + self.cfg.quantum
            } else {
                u64::MAX
            };
        } else if self.slot_end == u64::MAX && occupied_slots(self.sched.matrix()) > 1 {
            // A second slot was just opened: the running one gets a quantum.
            self.slot_end = t + self.cfg.quantum;
        }
        // Jobs of the slot that runs from now on have started (a job
        // admitted into a slot whose quantum ends now starts only when the
        // slot comes round again). The running slot's next end of a job
        // changes only with its jobs.
        if switching || into_current {
            self.scan_current(t, true);
        } else if std::mem::take(&mut self.ended) {
            self.scan_current(t, false);
        }
        self.ended = false;
        self.admitted.clear();
        self.series.record(t, self.sched.waiting().len() as u32);
        // The running slot's timer: its next end of a job, or its quantum.
        if self.done <= self.slot_end {
            self.arm(engine, self.done, GangEvent::JobFinished);
        } else {
            self.arm(engine, self.slot_end, GangEvent::SlotEnded);
        }
        Ok(())
    }

    /// Over the running slot's jobs (progress accounted up to `t`): their
    /// earliest end into `done`; with `start`, those not started yet start
    /// at `t`.
    fn scan_current(&mut self, t: u64, start: bool) {
        let mut done = u64::MAX;
        for &g in self.sched.gangs_in_current() {
            let i = idx(g);
            done = done.min(t + self.remaining[i]);
            let o = &mut self.outcomes[i];
            if start && o.start == u64::MAX {
                o.start = t;
            }
        }
        self.done = done;
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
    fn admit(&mut self) -> Result<(), BatchError> {
        let placed = self
            .sched
            .admit_waiting(self.cfg.gang_backfill)
            .map_err(PolicyError::from)?;
        for (g, a) in placed {
            let i = idx(g);
            self.admitted.push(a.slot);
            let (run, killed) = effective_runtime(&self.jobs[i], self.cfg.kill_on_overrun);
            self.remaining[i] = run;
            self.outcomes[i].killed = killed;
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

/// Slots holding at least one gang.
fn occupied_slots(m: &GangMatrix) -> u32 {
    (0..m.num_slots())
        .filter(|&s| !m.gangs_of(SlotId(s)).is_empty())
        .count() as u32
}

/// Gang scheduling of rigid jobs on a [`GangMatrix`] with `cfg.mpl` slots.
pub fn simulate_gang(
    jobs: Vec<BatchJob>,
    procs: u32,
    cfg: &BatchConfig,
) -> Result<BatchResult, BatchError> {
    let wall = Instant::now();
    cfg.validate()?;
    check_jobs(&jobs, procs)?;
    let n = jobs.len();
    let matrix = GangMatrix::with_options(
        procs,
        Some(cfg.mpl),
        MatrixOptions {
            slot_allocation: cfg.slot_allocation,
            ..MatrixOptions::default()
        },
    )?;
    let mut engine = Engine::new();
    let unset = Outcome {
        start: u64::MAX,
        end: u64::MAX,
        killed: false,
    };
    let mut model = GangModel {
        jobs: &jobs,
        cfg,
        sched: GangScheduler::new(matrix, GangSchedOptions::default()),
        outcomes: vec![unset; n],
        remaining: vec![0; n],
        last: 0,
        slot_end: u64::MAX,
        timer: engine.timer(),
        armed: (u64::MAX, GangEvent::SlotEnded),
        changed: false,
        ended: false,
        done: u64::MAX,
        switches: 0,
        series: Series { points: Vec::new() },
        resources: vec![Vec::new(); if cfg.track_resources { n } else { 0 }],
        finished: Vec::new(),
        admitted: Vec::new(),
    };
    if let Some(j) = jobs.first() {
        engine.schedule_at(Time(j.submit), GangEvent::JobSubmitted(0));
    }
    engine::run(&mut model, &mut engine)?;
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
    Ok(finish(
        "gang", procs, cfg, jobs, outcomes, points, switches, res, res_index, wall,
    ))
}
