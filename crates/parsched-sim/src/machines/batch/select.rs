//! The space-sharing machine under a policy with full control
//! ([`SelectPolicy`], `parsched_core::policy::batch::select`): at each pass
//! the policy returns which jobs start, which are reserved and when to wake
//! it; the machine checks each part, applies it, keeps the reservations and
//! backfills around them.
//!
//! A pass at an instant `t` (after completions, then submissions):
//! 1. the policy observes the jobs submitted and completed since the last
//!    pass (`on_submit` / `on_complete`), if any;
//! 2. jobs whose reservations are due (`t` reached) start if they fit (else
//!    as soon as they fit: running jobs overran their requested times). A
//!    reservation's time is an event of its own; if nothing else happens
//!    then and its job cannot start, there is no pass (as EASY has none
//!    when a running job overruns);
//! 3. if jobs wait, the policy's decision is checked and applied:
//!    reservations first (each must be in the future and fit on the profile
//!    of the running jobs' requested ends and the other reservations), then
//!    starts (each must be waiting, fit now and delay no reservation), then
//!    `wake_at` (after `t`);
//! 4. with backfilling (`policy` = easy or conservative) the machine starts
//!    every other waiting job, in `order`, that fits now and delays no
//!    reservation;
//! 5. a stall — jobs wait, nothing runs, and nothing will happen (no
//!    arrival, no reservation or `wake_at` due), or `stall_passes` passes in
//!    a row with nothing running and nothing started — is a violation.
//!
//! A violation stops the run ([`OnViolation::Strict`]: the error names the
//! job and what was wrong) or is dropped and recorded
//! ([`OnViolation::Repair`]: [`BatchResult::violations`]). A policy that
//! raises is a violation too; with a `fallback` built-in policy the pass is
//! then the built-in's (the policy's reservations are dropped), as is a
//! stalled pass in repair mode (FCFS without a fallback).

use super::state::{SpaceEvent, SpaceState};
use super::{check_jobs, BatchConfig, BatchError, BatchPolicyKind, BatchResult};
use crate::engine::{Engine, Flow, Model, Timer};
use crate::workloads::swf::BatchJob;
use parsched_core::policy::batch::select::{
    Decision, OnViolation, SelectPolicy, SelectView, StartedJob, Violation, ViolationKind,
    WaitingJob,
};
use parsched_core::policy::batch::{BatchKind, BatchPolicy, BatchView, OrderJob, Profile};
use parsched_core::{PolicyError, Time};
use std::collections::HashMap;
use std::time::Instant;

/// How a full-control run treats bad decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectOptions {
    pub on_violation: OnViolation,
    /// The built-in policy a pass falls back to when the policy raises (or,
    /// in repair mode, stalls).
    pub fallback: Option<BatchKind>,
    /// Passes in a row with nothing running and nothing started before the
    /// run counts as stalled.
    pub stall_passes: u32,
}

impl Default for SelectOptions {
    fn default() -> SelectOptions {
        SelectOptions {
            on_violation: OnViolation::Strict,
            fallback: None,
            stall_passes: 10_000,
        }
    }
}

struct SelectModel<'a> {
    jobs: &'a [BatchJob],
    policy: &'a mut dyn SelectPolicy,
    opts: SelectOptions,
    st: SpaceState,
    core_backfill: bool,
    order: parsched_core::policy::batch::QueueOrder,
    ids: HashMap<i64, u32>,
    /// Held reservations: (time, job index), sorted.
    reserved: Vec<(u64, u32)>,
    wake: Timer,
    wake_at: Option<u64>,
    violations: Vec<Violation>,
    decision: Decision,
    waiting: Vec<WaitingJob>,
    running: Vec<StartedJob>,
    profile: Profile,
    ends: Vec<(u64, u32)>,
    fallback: Option<Box<dyn BatchPolicy + Send>>,
    /// An event other than a wake-up at the current instant.
    happened: bool,
    idle_passes: u32,
    submitted_seen: u32,
    scratch: Vec<usize>,
    order_jobs: Vec<OrderJob>,
    perm: Vec<usize>,
    scores: Vec<f64>,
}

impl Model for SelectModel<'_> {
    type Event = SpaceEvent;
    type Error = BatchError;

    fn handle(
        &mut self,
        ev: SpaceEvent,
        engine: &mut Engine<SpaceEvent>,
    ) -> Result<Flow, BatchError> {
        self.happened |= ev != SpaceEvent::WakeUp;
        if self.st.record(self.jobs, ev, engine) {
            let t = engine.now().0;
            let asked = self.wake_at.is_some_and(|w| w <= t);
            if self.happened || asked {
                self.pass(t, engine)?;
            } else {
                // only a reservation's time: its job starts if it fits; if
                // none did (running jobs overran), nothing changed and the
                // policy is not called (no pass, as under EASY)
                let before = self.st.running.len();
                self.start_due(t, engine);
                if self.st.running.len() > before {
                    self.pass(t, engine)?;
                } else {
                    self.set_wake(t, engine);
                }
            }
            self.happened = false;
            self.st.record_queue(t);
        }
        Ok(Flow::Continue)
    }
}

impl SelectModel<'_> {
    fn pass(&mut self, t: u64, engine: &mut Engine<SpaceEvent>) -> Result<(), BatchError> {
        let progressed = self.observe(t)?;
        self.start_due(t, engine);
        if self.st.queue().is_empty() {
            self.set_wake(t, engine);
            return Ok(());
        }
        let started_before = self.st.running.len();
        self.view(t);
        self.decision.clear();
        let view = SelectView {
            now: t,
            total: self.st.procs,
            free: self.st.free,
            queue: &self.waiting,
            running: &self.running,
        };
        match self.policy.select(&view, &mut self.decision) {
            Ok(()) => self.apply(t, engine)?,
            Err(msg) => {
                self.violate(t, None, ViolationKind::Raised, format!("select {msg}"))?;
                if self.fallback.is_some() {
                    self.fall_back(t, engine);
                }
            }
        }
        if self.core_backfill {
            self.backfill(t, engine);
        }
        let started = self.st.running.len() > started_before;
        self.idle_passes = if started || progressed || !self.st.running.is_empty() {
            0
        } else {
            self.idle_passes + 1
        };
        self.set_wake(t, engine);
        if !self.st.queue().is_empty()
            && self.st.running.is_empty()
            && (engine.next_live_time().is_none() || self.idle_passes >= self.opts.stall_passes)
        {
            let k = self.st.queue_idx()[0] as usize;
            let j = &self.jobs[k];
            self.violate(
                t,
                Some(j.id),
                ViolationKind::Stalled,
                format!(
                    "stalled: {} jobs wait (job {} needs {} of {} free processors), nothing \
                     runs and {}",
                    self.st.queue().len(),
                    j.id,
                    j.procs,
                    self.st.free,
                    if engine.next_live_time().is_none() {
                        "nothing will happen (no arrival, reservation or wake_at due)".to_string()
                    } else {
                        format!("{} passes in a row started nothing", self.idle_passes)
                    }
                ),
            )?;
            self.fall_back(t, engine);
            self.idle_passes = 0;
        }
        Ok(())
    }

    /// Tells the policy what was submitted and completed since the last
    /// pass; returns whether anything was.
    fn observe(&mut self, t: u64) -> Result<bool, BatchError> {
        let sub: Vec<i64> = (self.submitted_seen..self.st.submitted)
            .map(|i| self.jobs[i as usize].id)
            .collect();
        self.submitted_seen = self.st.submitted;
        let done: Vec<i64> = self
            .st
            .released
            .drain(..)
            .map(|i| self.jobs[i as usize].id)
            .collect();
        if sub.is_empty() && done.is_empty() {
            return Ok(false);
        }
        if let Err(msg) = self.policy.observe(t, &sub, &done) {
            self.violate(
                t,
                None,
                ViolationKind::Raised,
                format!("on_submit/on_complete {msg}"),
            )?;
        }
        Ok(true)
    }

    /// Records a violation, or (strict) returns it as the error.
    fn violate(
        &mut self,
        t: u64,
        job: Option<i64>,
        kind: ViolationKind,
        message: String,
    ) -> Result<(), BatchError> {
        let v = Violation {
            time: t,
            job,
            kind,
            message,
        };
        if self.opts.on_violation == OnViolation::Strict
            && !(kind == ViolationKind::Raised && self.fallback.is_some())
        {
            return Err(PolicyError(v.to_string()).into());
        }
        self.violations.push(v);
        Ok(())
    }

    fn view(&mut self, t: u64) {
        let _ = t;
        self.waiting.clear();
        for &i in self.st.queue_idx() {
            let j = &self.jobs[i as usize];
            self.waiting.push(WaitingJob {
                id: j.id,
                submit: j.submit,
                requested: j.requested,
                procs: j.procs,
                user: j.user,
                group: j.group,
                queue: j.queue,
                partition: j.partition,
                reserved_at: self.reserved.iter().find(|r| r.1 == i).map(|r| r.0),
            });
        }
        self.running.clear();
        for (r, &i) in self.st.running.iter().zip(&self.st.running_idx) {
            self.running.push(StartedJob {
                id: self.jobs[i as usize].id,
                procs: r.procs,
                start: self.st.outcomes[i as usize].start,
                requested_end: r.requested_end,
            });
        }
    }

    /// The profile of the running jobs' expected ends and the held
    /// reservations except job `skip`'s.
    fn build_profile(&mut self, t: u64, skip: Option<u32>) {
        self.ends.clear();
        self.ends
            .extend(self.st.by_end.iter().map(|&(e, p)| (e.max(t + 1), p)));
        self.ends.sort_unstable();
        self.profile.rebuild(t, self.st.free, &self.ends);
        for &(rt, i) in &self.reserved {
            if Some(i) != skip {
                let j = &self.jobs[i as usize];
                if self
                    .profile
                    .shortfall(rt.max(t), j.requested, j.procs)
                    .is_none()
                {
                    self.profile.reserve(rt.max(t), j.requested.max(1), j.procs);
                }
            }
        }
    }

    /// The queue position of waiting job `i`.
    fn position(&self, i: u32) -> Option<usize> {
        self.st.queue_idx().iter().position(|&q| q == i)
    }

    /// The job index of id `id` if it is waiting, else the violation.
    fn waiting_job(&self, id: i64) -> Result<u32, (ViolationKind, String)> {
        let Some(&i) = self.ids.get(&id) else {
            return Err((
                ViolationKind::UnknownJob,
                format!("job {id} is not a job of this run"),
            ));
        };
        if i >= self.st.submitted {
            return Err((
                ViolationKind::NotSubmitted,
                format!("job {id} is not submitted yet"),
            ));
        }
        let o = &self.st.outcomes[i as usize];
        if o.start != u64::MAX {
            let what = if o.end == u64::MAX {
                "running"
            } else {
                "ended"
            };
            return Err((
                ViolationKind::NotWaiting,
                format!("job {id} is {what}, not waiting"),
            ));
        }
        Ok(i)
    }

    /// Applies a decision: the reservations it moves or cancels and those of
    /// the jobs it starts are dropped; then the starts (each checked against
    /// the reservations still held); then the new reservations (each checked
    /// on the profile with those starts); then `wake_at`.
    fn apply(&mut self, t: u64, engine: &mut Engine<SpaceEvent>) -> Result<(), BatchError> {
        let d = std::mem::take(&mut self.decision);
        for id in d.reserve.iter().map(|r| r.0).chain(d.start.iter().copied()) {
            if let Some(&i) = self.ids.get(&id) {
                self.reserved.retain(|r| r.1 != i);
            }
        }
        self.scratch.clear();
        for &id in &d.start {
            self.apply_start(t, id, engine)?;
        }
        let started = std::mem::take(&mut self.scratch);
        self.st.remove(&started);
        self.scratch = started;
        for &(id, at) in &d.reserve {
            let i = match self.waiting_job(id) {
                Ok(i) => i,
                Err((k, m)) => {
                    self.violate(t, Some(id), k, format!("reserve: {m}"))?;
                    continue;
                }
            };
            let Some(rt) = at else { continue };
            let j = &self.jobs[i as usize];
            if rt < t {
                self.violate(
                    t,
                    Some(id),
                    ViolationKind::BadReservation,
                    format!("reserve: job {id} at {rt}, before now ({t})"),
                )?;
                continue;
            }
            self.build_profile(t, Some(i));
            if let Some((when, free)) = self.profile.shortfall(rt, j.requested, j.procs) {
                self.violate(
                    t,
                    Some(id),
                    ViolationKind::BadReservation,
                    format!(
                        "reserve: job {id} at {rt} needs {} processors until {}, only {free} \
                         free at {when} (running jobs by their requested ends, and the other \
                         reservations)",
                        j.procs,
                        rt.saturating_add(j.requested.max(1))
                    ),
                )?;
                continue;
            }
            let k = self.reserved.partition_point(|r| *r < (rt, i));
            self.reserved.insert(k, (rt, i));
        }
        if let Some(w) = d.wake_at {
            if w <= t {
                self.violate(
                    t,
                    None,
                    ViolationKind::WakeInPast,
                    format!("wake_at {w} is not after now ({t})"),
                )?;
            } else {
                self.wake_at = Some(self.wake_at.map_or(w, |x| x.min(w)));
            }
        }
        self.decision = d;
        Ok(())
    }

    /// One start of a decision, checked; started jobs' queue positions go to
    /// `scratch` (removed from the queue by the caller).
    fn apply_start(
        &mut self,
        t: u64,
        id: i64,
        engine: &mut Engine<SpaceEvent>,
    ) -> Result<(), BatchError> {
        let i = match self.waiting_job(id) {
            Ok(i) => i,
            Err((k, m)) => return self.violate(t, Some(id), k, format!("start: {m}")),
        };
        let p = self.position(i).expect("a waiting job is queued");
        if self.scratch.contains(&p) {
            return self.violate(
                t,
                Some(id),
                ViolationKind::Repeated,
                format!("start: job {id} twice"),
            );
        }
        let j = &self.jobs[i as usize];
        if j.procs > self.st.free {
            let m = format!(
                "start: job {id} needs {} processors, {} free",
                j.procs, self.st.free
            );
            return self.violate(t, Some(id), ViolationKind::DoesNotFit, m);
        }
        self.build_profile(t, Some(i));
        if let Some((when, free)) = self.profile.shortfall(t, j.requested, j.procs) {
            let by = self
                .reserved
                .iter()
                .rfind(|r| r.1 != i && r.0 <= when)
                .map_or(-1, |r| self.jobs[r.1 as usize].id);
            let m = format!(
                "start: job {id} ({} processors until {}) would delay job {by}'s reservation: \
                 only {free} processors left at {when}",
                j.procs,
                t.saturating_add(j.requested.max(1))
            );
            return self.violate(t, Some(id), ViolationKind::BreaksReservation, m);
        }
        self.st.start(self.jobs, p, t, engine);
        self.scratch.push(p);
        Ok(())
    }

    /// Starts the jobs whose reservations are due and fit.
    fn start_due(&mut self, t: u64, engine: &mut Engine<SpaceEvent>) {
        let mut k = 0;
        self.scratch.clear();
        while k < self.reserved.len() && self.reserved[k].0 <= t {
            let i = self.reserved[k].1;
            if self.jobs[i as usize].procs <= self.st.free {
                let p = self.position(i).expect("a reserved job waits");
                self.st.start(self.jobs, p, t, engine);
                self.scratch.push(p);
                self.reserved.remove(k);
            } else {
                k += 1;
            }
        }
        let started = std::mem::take(&mut self.scratch);
        self.st.remove(&started);
        self.scratch = started;
    }

    /// The machine's backfilling: every unreserved waiting job, in `order`,
    /// that fits now and delays no reservation.
    fn backfill(&mut self, t: u64, engine: &mut Engine<SpaceEvent>) {
        if self.st.free == 0 || self.st.queue().is_empty() {
            return;
        }
        self.build_profile(t, None);
        self.st.order_jobs(self.jobs, &mut self.order_jobs);
        let origin = self.jobs.first().map_or(0, |j| j.submit);
        self.order.sort(
            &self.order_jobs,
            t,
            origin,
            &mut self.perm,
            &mut self.scores,
        );
        self.scratch.clear();
        for k in 0..self.perm.len() {
            let p = self.perm[k];
            let i = self.st.queue_idx()[p];
            let j = &self.jobs[i as usize];
            if j.procs > self.st.free || self.reserved.iter().any(|r| r.1 == i) {
                continue;
            }
            if self.profile.shortfall(t, j.requested, j.procs).is_none() {
                self.profile.reserve(t, j.requested.max(1), j.procs);
                self.st.start(self.jobs, p, t, engine);
                self.scratch.push(p);
            }
        }
        let started = std::mem::take(&mut self.scratch);
        self.st.remove(&started);
        self.scratch = started;
    }

    /// The pass is the built-in fallback's (FCFS without one); the policy's
    /// reservations are dropped.
    fn fall_back(&mut self, t: u64, engine: &mut Engine<SpaceEvent>) {
        self.reserved.clear();
        let mut starts = Vec::new();
        let view = BatchView {
            now: t,
            total: self.st.procs,
            free: self.st.free,
            running: &self.st.running,
            running_by_end: Some(&self.st.by_end),
            queue: self.st.queue(),
            backfill: None,
        };
        match self.fallback.as_mut() {
            Some(f) => f.schedule(&view, &mut starts),
            None => parsched_core::policy::batch::Fcfs.schedule(&view, &mut starts),
        }
        for &p in &starts {
            self.st.start(self.jobs, p, t, engine);
        }
        self.st.remove(&starts);
    }

    /// The wake-up timer: the earliest of `wake_at` and the reservations
    /// still to come.
    fn set_wake(&mut self, t: u64, engine: &mut Engine<SpaceEvent>) {
        if self.wake_at.is_some_and(|w| w <= t) {
            self.wake_at = None;
        }
        let due = self.reserved.iter().map(|r| r.0).find(|&rt| rt > t);
        match (self.wake_at, due) {
            (None, None) => engine.cancel(self.wake),
            (a, b) => {
                let at = a.unwrap_or(u64::MAX).min(b.unwrap_or(u64::MAX));
                engine.set_timer(self.wake, Time(at), SpaceEvent::WakeUp);
            }
        }
    }
}

/// Runs `jobs` under a full-control policy (module documentation). The
/// configuration's `policy` sets the machine's backfilling around the
/// policy's reservations (fcfs: none; easy or conservative: every job that
/// fits now and delays no reservation, in `order`).
pub fn simulate_select(
    jobs: Vec<BatchJob>,
    procs: u32,
    policy: &mut dyn SelectPolicy,
    cfg: &BatchConfig,
    opts: SelectOptions,
) -> Result<BatchResult, BatchError> {
    let wall = Instant::now();
    cfg.validate()?;
    check_jobs(&jobs, procs)?;
    if cfg.order.stateful() {
        return Err(parsched_core::ConfigError::new(
            "order",
            "multifactor with a select policy",
            "a stateless rule (fcfs, sjf, ...) for the machine's backfilling; a select policy \
             computes its own priorities",
        )
        .into());
    }
    if cfg.policy == BatchPolicyKind::Gang {
        return Err(parsched_core::ConfigError::new(
            "policy",
            "gang with a select policy",
            "fcfs (no backfilling around the policy's decisions), easy or conservative",
        )
        .into());
    }
    let mut ids = HashMap::with_capacity(jobs.len());
    for (i, j) in jobs.iter().enumerate() {
        if ids.insert(j.id, i as u32).is_some() {
            return Err(BatchError::Input(format!(
                "job id {} appears twice; a select policy names jobs by id, so ids must be unique",
                j.id
            )));
        }
    }
    let mut engine = Engine::with_front_slot();
    let wake = engine.timer();
    let mut st = SpaceState::new(jobs.len(), procs, cfg);
    st.log_released = true;
    let mut model = SelectModel {
        jobs: &jobs,
        policy,
        opts,
        st,
        core_backfill: cfg.policy != BatchPolicyKind::Fcfs,
        order: cfg.order,
        ids,
        reserved: Vec::new(),
        wake,
        wake_at: None,
        violations: Vec::new(),
        decision: Decision::default(),
        waiting: Vec::new(),
        running: Vec::new(),
        profile: Profile::default(),
        ends: Vec::new(),
        fallback: opts.fallback.map(|k| k.policy()),
        happened: false,
        idle_passes: 0,
        submitted_seen: 0,
        scratch: Vec::new(),
        order_jobs: Vec::new(),
        perm: Vec::new(),
        scores: Vec::new(),
    };
    SpaceState::first_event(&jobs, &mut engine);
    super::run_model(&mut model, &mut engine)?;
    let violations = std::mem::take(&mut model.violations);
    let st = model.st;
    let mut r = st.finish("select", cfg, jobs, wall);
    r.violations = violations;
    Ok(r)
}
