//! FCS policy (flexible coscheduling, seed 002) on real processes. Every
//! decision is the core crate's [`Fcs`] policy (`parsched_core::policy::fcs`,
//! the same code the simulator's cluster machine applies): the classes (one
//! `ClassTracker` per job, or a class fixed by the job spec), which jobs are
//! in the gang matrix and which are released (DC), when a released job is
//! taken back (its class became CS or F), whether the next slot is a DC slot
//! (a released job got less than `dc_min_share` of the CPU time it wanted
//! since its release; never two in a row; bounded by the same share of the
//! time), and each job's role in a slot ([`Role`]). This controller measures
//! (/proc) and applies:
//!
//! * **Row** (the slot's own gangs): thawed at normal priority; pinned over
//!   its cells when the policy says so (discovery and CS: [`Fcs::pinned`]),
//!   else unpinned (F).
//! * **Fill** (an F job in the slot of another F job, with the runtime's
//!   `FillIn::FSlots`: never in a slot with a CS or unclassified job):
//!   thawed, unpinned, at normal priority (the default: the F jobs share the
//!   slot's processors as their threads spin-block) or, with
//!   `fcs_fill_idle`, at `SCHED_IDLE`; frozen again at the slot's end unless
//!   the next slot runs it too.
//! * **Released** (DC): out of the matrix (its cells freed), thawed for good,
//!   unpinned, at `SCHED_IDLE`: it fills idle processors. In a DC slot (every
//!   gang frozen) it is the row: normal priority.
//! * **Parked**: frozen.
//!
//! Membership is applied at each slot switch: a job the policy released
//! leaves the matrix; a released job the policy takes back is admitted
//! again, at normal priority, frozen until its slot comes (queued if the
//! multiprogramming level leaves no room, filling meanwhile: admission is the
//! core `GangScheduler`'s).
//!
//! Measurement. Observation periods follow [`Role::observed`]: a job in the
//! matrix is observed while it holds its own slot (from its thaw to the next
//! switch); a released job over every slot; fillers are not observed. A
//! period's observation sums over the job's threads
//! (`/proc/PID/task/TID/status` and `schedstat`): voluntary and involuntary
//! switches, CPU seconds (run time), thread-seconds observed (threads × wall
//! − run-queue wait: time a thread waited for a processor is not behaviour)
//! and blocked thread-seconds (observed − run). Frozen time is never in a
//! period. A released job's use over each slot ([`Usage`], for the DC share):
//! CPU-seconds got (schedstat run time) and wanted (the threads found
//! runnable at the switch × the slot's length, at most P: schedstat credits
//! run-queue wait only once a waiting thread runs, so a starving thread
//! shows none).

//!
//! The state is [`FcsExt`]'s: the core policy, what was measured of and
//! applied to each job, the DC slot and the class files (`stats_files.rs`).
//! The gang matrix is plain gang's (`gang.rs`): FCS is
//! [`GangPolicy`]`<`[`FcsExt`]`>`, the gang code with FCS's callbacks.

use super::gang::{leave_matrix, queued, GangExt, GangPolicy};
use super::mechanism::{Decision, Mechanism};
use super::policy::{Fragment, PolicyEntry, PolicyReport};
use super::stats_files::{ClassFiles, SyncCounts, CLASS_FILE_ENV, SYNC_FILE_ENV};
use crate::error::Result;
use crate::procfs;
use crate::spec::{JobReport, RunSpec};
use crate::topology::MachineTopology;
use parsched_core::policy::classify::ClassifierConfig;
use parsched_core::policy::classify::{CoschedClass, Observation};
use parsched_core::policy::fcs::{
    FRows, Fcs, FcsConfig, Fill, FillIn, FillPriority, Role, Slot, Step, Usage,
};
use parsched_core::policy::gang::GangId;
use parsched_core::policy::gang_sched::{Admission, GangScheduler};
use parsched_core::schema::{Kind, Schema, U32};
use parsched_core::{field, ConfigError, PolicyError};
use std::time::Instant;

/// A job's /proc counters at one moment, summed over its threads.
#[derive(Debug, Clone, Copy)]
pub(super) struct ProcSnapshot {
    pub(super) at: Instant,
    pub(super) voluntary: u64,
    pub(super) involuntary: u64,
    /// Time on a CPU, ns (schedstat).
    pub(super) run_ns: u64,
    /// Time waiting on a run queue, ns (schedstat).
    pub(super) wait_ns: u64,
    pub(super) threads: u32,
    /// The job's own synchronization statistics, if it publishes them.
    pub(super) sync: Option<SyncCounts>,
}

/// What the controller measured of one job and applied to it under FCS
/// (the decisions are the core [`Fcs`]'s).
#[derive(Debug, Clone)]
pub(super) struct FcsJob {
    /// The open observation period.
    pub(super) period: Option<ProcSnapshot>,
    /// Everything observed (the report's `observed`).
    pub(super) observed: Observation,
    /// (seconds since the run started, class) at each change.
    pub(super) classes: Vec<(f64, CoschedClass)>,
    /// Applied: out of the matrix (DC, or taken back but queued): thawed,
    /// idle.
    pub(super) released: bool,
    /// Applied: an F job thawed as a filler in another F job's slot.
    pub(super) filling: bool,
    /// Its threads were set to SCHED_IDLE.
    pub(super) idle: bool,
    /// Released: its run time (ns) at the last switch.
    pub(super) run_at_switch: u64,
}

impl FcsJob {
    pub(super) fn new(fixed: Option<CoschedClass>) -> FcsJob {
        FcsJob {
            period: None,
            observed: Observation::default(),
            classes: fixed.map(|c| (0.0, c)).into_iter().collect(),
            released: false,
            filling: false,
            idle: false,
            run_at_switch: 0,
        }
    }
}

/// The core policy's configuration for a run: the spec's classifier
/// thresholds and DC share; one gang per job (`FRows::Own`: the matrix's
/// slots are the rows), F jobs fill only F slots (`FillIn::FSlots`), at the
/// priority `fcs_fill_idle` says; a released job must have wanted half a
/// slot of CPU time before it is owed a DC slot.
pub(crate) fn fcs_config(spec: &RunSpec) -> FcsConfig {
    FcsConfig {
        classifier: spec.fcs.classifier_config(),
        f_rows: FRows::Own,
        fill: Fill::FDc,
        fill_in: FillIn::FSlots,
        fill_priority: if spec.fcs.fill_idle {
            FillPriority::Idle
        } else {
            FillPriority::Normal
        },
        discovery_fill: spec.fcs.discovery_fill,
        dc_min_share: spec.fcs.dc_min_share,
        dc_min_wanted_s: spec.slot.as_secs_f64() / 2.0,
        // Jobs are told their class (class files) and may wait by it.
        adaptive_waiting: true,
    }
}

/// The core policy for a run, with the spec's fixed classes.
pub(super) fn fcs_policy(spec: &RunSpec) -> std::result::Result<Fcs, parsched_core::ConfigError> {
    let mut f = Fcs::new(spec.jobs.len(), fcs_config(spec))?;
    for (i, j) in spec.jobs.iter().enumerate() {
        if let Some(c) = j.fcs_class {
            f.fix_class(i, c);
        }
    }
    Ok(f)
}

/// The `[fcs]` table of a run spec: the FCS policy's keys
/// (`FCS_SCHEMA`; the flat spellings of `FRAGMENT` are accepted too).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FcsSpec {
    // each key as `FCS_SCHEMA` documents it
    pub blocking_rate: f64,
    pub observe_s: f64,
    pub window_s: f64,
    pub revise_after: u32,
    pub coarse_grain_s: f64,
    pub frustrated_wait_ratio: f64,
    pub dc_min_share: f64,
    pub fill_idle: bool,
    pub discovery_fill: bool,
    pub sync_stats: bool,
}

impl Default for FcsSpec {
    fn default() -> Self {
        FcsSpec {
            blocking_rate: 25.0,
            observe_s: 0.2,
            window_s: 1.0,
            revise_after: 2,
            coarse_grain_s: 0.01,
            frustrated_wait_ratio: 0.25,
            dc_min_share: 0.1,
            fill_idle: false,
            discovery_fill: false,
            sync_stats: true,
        }
    }
}

impl FcsSpec {
    /// The classifier's thresholds: `observe_s` is the discovery period,
    /// `blocking_rate` the /proc rule's threshold.
    pub fn classifier_config(&self) -> ClassifierConfig {
        ClassifierConfig {
            discovery_s: self.observe_s,
            blocking_rate: self.blocking_rate,
            coarse_grain_s: self.coarse_grain_s,
            frustrated_wait_ratio: self.frustrated_wait_ratio,
            window_s: self.window_s,
            revise_after: self.revise_after,
        }
    }
}

type S = FcsSpec;

/// The keys of `[fcs]`.
pub(crate) static FCS_SCHEMA: Schema<FcsSpec> = Schema {
    model: "fcs",
    fields: &[
        field!(S, "blocking_rate", blocking_rate: f64, Kind::NONNEG, "switches/thread/s", "", "",
            "voluntary context switches per thread per second of observed time at or above \
             which a job counts as blocking (the classifier's blocking_rate)"),
        field!(S, "observe_s", observe_s: f64, Kind::NONNEG, "s", "", "",
            "observed time before the first classification (the classifier's discovery_s)"),
        field!(S, "window_s", window_s: f64, Kind::NONNEG, "s", "", "",
            "the revision window, observed seconds (the classifier's window_s)"),
        field!(S, "revise_after", revise_after: u32, Kind::int_min(1, U32), "periods", "", "",
            "consecutive periods a new class must be seen before a job's class changes"),
        field!(S, "coarse_grain_s", coarse_grain_s: f64, Kind::POSITIVE, "s", "", "",
            "seconds of CPU per synchronization at or above which a blocking job is DC"),
        field!(S, "frustrated_wait_ratio", frustrated_wait_ratio: f64, Kind::NONNEG, "", "", "",
            "blocked time per synchronization over granularity above which a job is F"),
        field!(S, "dc_min_share", dc_min_share: f64, Kind::float_range(0.0, true, 1.0, true),
            "", "", "", "the least share a DC job gets of the CPU time it wants: a released \
             job that got less is owed a DC slot (every gang frozen, the DC jobs alone); 0: \
             no DC slots"),
        field!(S, "fill_idle", fill_idle: bool, Kind::Bool, "", "", "",
            "F jobs filling another F job's slot run at SCHED_IDLE (only where its owner \
             leaves a processor idle); false: at normal priority"),
        field!(S, "discovery_fill", discovery_fill: bool, Kind::Bool, "", "", "",
            "jobs in discovery fill other slots, and other jobs fill theirs, at SCHED_IDLE"),
        field!(S, "sync_stats", sync_stats: bool, Kind::Bool, "", "", "",
            "classify a job from the synchronization statistics it publishes (the file named \
             by PARSCHED_FCS_SYNC_FILE) when it does, else from /proc; false: always /proc"),
    ],
};

/// `[fcs]` in the run spec, with the flat spellings of before.
pub(crate) static FRAGMENT: Fragment = Fragment {
    table: "fcs",
    flat: &[
        ("flexible_blocking_rate", "blocking_rate"),
        ("fcs_blocking_rate", "blocking_rate"),
        ("flexible_observe_s", "observe_s"),
        ("fcs_observe_s", "observe_s"),
        ("fcs_window_s", "window_s"),
        ("fcs_revise_after", "revise_after"),
        ("fcs_coarse_grain_s", "coarse_grain_s"),
        ("fcs_frustrated_wait_ratio", "frustrated_wait_ratio"),
        ("dc_min_share", "dc_min_share"),
        ("fcs_fill_idle", "fill_idle"),
        ("fcs_discovery_fill", "discovery_fill"),
        ("fcs_sync_stats", "sync_stats"),
    ],
    describe: || FCS_SCHEMA.describe(&FcsSpec::default()),
    set: |spec, key, v| FCS_SCHEMA.set(&mut spec.fcs, key, v),
    check: |spec| {
        FCS_SCHEMA.check(&spec.fcs)?;
        spec.fcs.classifier_config().validate().map_err(|e| {
            let key = match e.field.as_str() {
                "discovery_s" => "observe_s",
                f => FCS_SCHEMA.field(f).map_or(f, |f| f.key),
            };
            ConfigError::new(key, e.message, e.allowed)
        })
    },
    values: |spec| super::policy::schema_values(&FCS_SCHEMA, &spec.fcs),
};

/// `fcs`, as [`super::policy::POLICIES`] lists it.
pub(crate) const ENTRY: PolicyEntry = PolicyEntry {
    name: "fcs",
    aliases: &["flexible"],
    doc: "flexible coscheduling (seed 002): each job's class (CS, F, DC) decided from /proc \
          after a discovery period and revised as it changes; CS jobs hold dedicated gang \
          slots, F jobs hold slots and fill the slots of other F jobs, DC jobs leave the matrix \
          and fill idle processors with a guaranteed share (DC slots); a job's fcs_class fixes \
          its class",
    fragment: Some(&FRAGMENT),
    build: |spec, topo| Ok(Box::new(FcsPolicy::new(spec, topo)?)),
};

/// FCS: plain gang's matrix code with [`FcsExt`]'s callbacks.
pub(crate) type FcsPolicy = GangPolicy<FcsExt>;

impl GangPolicy<FcsExt> {
    /// FCS of `spec`'s jobs on `topo`.
    pub(crate) fn new(spec: &RunSpec, topo: &MachineTopology) -> Result<FcsPolicy> {
        let ext = FcsExt {
            fcs: fcs_policy(spec)?,
            jobs: spec.jobs.iter().map(|j| FcsJob::new(j.fcs_class)).collect(),
            exit_class: vec![None; spec.jobs.len()],
            sync_stats: spec.fcs.sync_stats,
            slot_since: None,
            in_dc_slot: false,
            dc_slot_since: None,
            class_files: None,
            dc_slots: 0,
            dc_slot_s: 0.0,
        };
        GangPolicy::with_ext(spec, topo, ext)
    }
}

/// FCS's state beside the gang matrix.
pub(crate) struct FcsExt {
    /// The core policy, which decides (classes, membership, DC slots,
    /// roles).
    fcs: Fcs,
    /// What was measured of each job and applied to it.
    jobs: Vec<FcsJob>,
    /// Each job's class when it exited.
    exit_class: Vec<Option<CoschedClass>>,
    sync_stats: bool,
    /// When the running slot started.
    slot_since: Option<Instant>,
    /// A DC slot is running (since when).
    in_dc_slot: bool,
    dc_slot_since: Option<Instant>,
    /// The files publishing each job's class to it.
    class_files: Option<ClassFiles>,
    /// DC slots given (a released job was owed its `dc_min_share`), and
    /// the wall seconds spent in them: the policy's report.
    dc_slots: u64,
    dc_slot_s: f64,
}

impl FcsExt {
    /// The job's /proc counters over all its threads, now.
    fn job_proc(&self, m: &Mechanism, i: usize) -> ProcSnapshot {
        let mut c = ProcSnapshot {
            at: Instant::now(),
            voluntary: 0,
            involuntary: 0,
            run_ns: 0,
            wait_ns: 0,
            threads: 0,
            sync: None,
        };
        for pid in m.pids(i) {
            for tid in procfs::tasks(pid) {
                if let Some((v, n)) = procfs::task_ctxt_switches(pid, tid) {
                    c.voluntary += v;
                    c.involuntary += n;
                    c.threads += 1;
                    if let Some((run, wait)) = procfs::thread_schedstat(pid, tid) {
                        c.run_ns += run;
                        c.wait_ns += wait;
                    }
                }
            }
        }
        c.sync = self.class_files.as_ref().and_then(|f| f.sync_counts(i));
        c
    }

    /// Opens an observation period (the job was just thawed in its own slot,
    /// or it is released).
    fn start_observing(&mut self, m: &Mechanism, i: usize) {
        if !m.job(i).live() || m.job(i).spec().fcs_class.is_some() {
            return;
        }
        self.jobs[i].period = Some(self.job_proc(m, i));
    }

    /// Closes the job's observation period, feeds the policy; the new class
    /// if it changed.
    fn close_period(&mut self, m: &mut Mechanism, i: usize) -> Option<CoschedClass> {
        let before = self.jobs[i].period.take()?;
        let now = self.job_proc(m, i);
        let dt = before.at.elapsed().as_secs_f64();
        let threads = now.threads.max(1) as f64;
        // Counters of threads that exited meanwhile vanish: saturate.
        let run = now.run_ns.saturating_sub(before.run_ns) as f64 / 1e9;
        let rq = now.wait_ns.saturating_sub(before.wait_ns) as f64 / 1e9;
        let thread_s = (threads * dt - rq).max(0.0);
        let cpu_s = run.min(thread_s);
        let mut period = Observation {
            wall_s: thread_s / threads,
            thread_s,
            cpu_s,
            voluntary: now.voluntary.saturating_sub(before.voluntary),
            involuntary: now.involuntary.saturating_sub(before.involuntary),
            blocked_s: (thread_s - cpu_s).max(0.0),
            ..Default::default()
        };
        // The job's own synchronization statistics, where it publishes
        // them: the classifier's rule 1 (granularity and wait per
        // synchronization), which spinning does not hide. The job gives the
        // count and its CPU time spent spinning; the wait is that spinning
        // plus the blocked time measured here (the job's own wall-clock
        // waits would include the time it was frozen between its slots).
        // (A job that began publishing during the period counts from zero.)
        // The MPI library also reports its ranks' blocked time: the wait is
        // then the ranks' own (not the idle time of the launcher's and the
        // MPI runtime's helper threads, which schedstat counts as blocked),
        // capped at what schedstat measured (a wait that spanned a freeze).
        if let Some(b) = now.sync {
            let a = before.sync.unwrap_or_default();
            period.sync_events = Some(b.syncs.saturating_sub(a.syncs));
            period.spin_s = (b.spin_ns.saturating_sub(a.spin_ns) as f64 / 1e9).min(cpu_s);
            let blocked = match b.blocked_ns {
                Some(nb) => (nb.saturating_sub(a.blocked_ns.unwrap_or(0)) as f64 / 1e9)
                    .min(period.blocked_s),
                None => period.blocked_s,
            };
            period.wait_s = blocked + period.spin_s;
        }
        // A released job that barely ran (it starved at SCHED_IDLE, or
        // slept) shows nothing of its behaviour: schedstat credits a waiting
        // thread's run-queue wait only once it runs, so starving would look
        // like blocking without switches. Such periods are not measurements.
        if self.jobs[i].released && cpu_s < 0.05 * threads * dt {
            return None;
        }
        let t = m.elapsed().as_secs_f64();
        self.jobs[i].observed.add(&period);
        let change = self.fcs.observe(i, &period);
        if let Some(c) = change {
            self.jobs[i].classes.push((t, c));
            self.publish_class(m, i, c);
        }
        change
    }

    fn publish_class(&mut self, m: &mut Mechanism, i: usize, c: CoschedClass) {
        if let Some(files) = &self.class_files {
            if let Err(e) = files.publish(i, Some(c)) {
                m.warn(format!("job {i}: FCS class file not written: {e}"));
            }
        }
    }

    /// Sets every thread of the job to SCHED_IDLE (`on`) or SCHED_OTHER.
    fn set_idle(&mut self, m: &mut Mechanism, i: usize, on: bool) {
        let _ = m.apply(Decision::SetIdle(i, on));
        self.jobs[i].idle = on;
    }

    /// Applies a release: out of the matrix, thawed, unpinned, at
    /// SCHED_IDLE.
    fn release(&mut self, m: &mut Mechanism, s: &mut GangScheduler, i: usize) -> Result<()> {
        leave_matrix(s, i)?;
        m.apply(Decision::ThawOutsideSlot(i))?;
        self.set_idle(m, i, true);
        m.apply(Decision::Unpin(i))?;
        let now = self.job_proc(m, i);
        let f = &mut self.jobs[i];
        f.released = true;
        f.filling = false;
        f.run_at_switch = now.run_ns;
        Ok(())
    }

    /// Applies a take-back: admitted again at normal priority, frozen until
    /// its slot comes (or queued, still filling, if there is no room).
    fn take_back(&mut self, m: &mut Mechanism, s: &mut GangScheduler, i: usize) -> Result<()> {
        let (gang, width) = (GangId(i as u64), m.job(i).width());
        match s.admit(gang, width).map_err(PolicyError::from)? {
            Admission::Placed(_) => self.admitted_again(m, i),
            Admission::Queued => Ok(()),
        }
    }

    /// The live jobs owning the current slot (or the next one: `next`).
    fn owners(m: &Mechanism, s: &GangScheduler, next: bool) -> Option<Vec<u32>> {
        let slot = if next {
            let live: Vec<bool> = m.jobs().iter().map(|j| j.live()).collect();
            s.peek(|g| live[g.0 as usize])?
        } else {
            s.current()?
        };
        Some(
            s.matrix()
                .gangs_of(slot)
                .iter()
                .map(|g| g.0 as u32)
                .filter(|&i| m.job(i as usize).live())
                .collect(),
        )
    }

    /// Whether job `i` is in the matrix with cells (not queued, not
    /// released): it can fill.
    fn placed(&self, m: &Mechanism, s: &GangScheduler, i: usize) -> bool {
        m.job(i).live()
            && !self.jobs[i].released
            && s.matrix().allocation(GangId(i as u64)).is_some()
    }
}

impl GangExt for FcsExt {
    fn name(&self) -> &'static str {
        "fcs"
    }

    /// The job's class file and (with `fcs_sync_stats`) its
    /// synchronization-statistics file: a cooperating program (e.g. `bsp
    /// --wait adaptive`) waits by class and publishes its statistics.
    fn env(&self, i: usize) -> Vec<(String, String)> {
        let Some(c) = &self.class_files else {
            return Vec::new();
        };
        let files = [
            (CLASS_FILE_ENV, Some(c.path(i))),
            (SYNC_FILE_ENV, c.sync_path(i)),
        ];
        files
            .into_iter()
            .filter_map(|(k, p)| Some((k.to_string(), p?.to_string_lossy().into_owned())))
            .collect()
    }

    /// Opens the class files, each with the job's fixed class or
    /// unclassified; without them (no writable temporary directory) the
    /// run goes on and says so.
    fn start(&mut self, m: &mut Mechanism) {
        if self.class_files.is_some() {
            return;
        }
        match ClassFiles::create(m.jobs().len(), self.sync_stats) {
            Ok(c) => {
                for (i, j) in m.jobs().iter().enumerate() {
                    if let Some(fixed) = j.spec().fcs_class {
                        let _ = c.publish(i, Some(fixed));
                    }
                }
                self.class_files = Some(c);
            }
            Err(e) => m.warn(format!(
                "FCS class files not created ({e}): jobs are not told their class"
            )),
        }
    }

    fn starts_in_matrix(&self, i: usize) -> bool {
        self.fcs.in_matrix(i)
    }

    fn first_slot(&mut self) {
        self.slot_since = Some(Instant::now());
    }

    fn observe_from_now(&mut self, m: &Mechanism, i: usize) {
        self.start_observing(m, i);
    }

    /// A job the policy starts released (its class is fixed DC): spawned
    /// thawed, released.
    fn start_released(&mut self, m: &mut Mechanism, s: &mut GangScheduler, i: usize) -> Result<()> {
        self.release(m, s, i)
    }

    /// After the next slot was thawed: the jobs the policy makes fillers in
    /// it are thawed, unpinned, at the priority it says.
    fn start_slot(&mut self, m: &mut Mechanism, s: &GangScheduler) -> Result<()> {
        let Some(owners) = FcsExt::owners(m, s, false) else {
            return Ok(());
        };
        for i in 0..m.jobs().len() {
            if !self.placed(m, s, i) || s.is_running(GangId(i as u64)) {
                continue;
            }
            if let Role::Fill { idle } = self.fcs.role_in(i, &owners) {
                if self.jobs[i].idle != idle {
                    self.set_idle(m, i, idle);
                }
                if m.job(i).pinned() || m.job(i).cpus() != m.topology().cpus.as_slice() {
                    m.apply(Decision::Unpin(i))?;
                }
                m.apply(Decision::ThawOutsideSlot(i))?;
                self.jobs[i].filling = true;
            }
        }
        Ok(())
    }

    /// At the start of a switch: ends a DC slot's accounting, closes the
    /// observation periods (the policy may change classes), applies the
    /// policy's matrix membership (release, take-back), restarts the
    /// released jobs' periods.
    fn end_period(&mut self, m: &mut Mechanism, s: &mut GangScheduler) -> Result<()> {
        if let Some(t) = self.dc_slot_since.take() {
            self.dc_slot_s += t.elapsed().as_secs_f64();
        }
        for i in 0..m.jobs().len() {
            if m.job(i).live() && self.jobs[i].period.is_some() {
                self.close_period(m, i);
            }
        }
        for i in 0..m.jobs().len() {
            if !m.job(i).live() {
                continue;
            }
            let (in_matrix, released, waits) =
                (self.fcs.in_matrix(i), self.jobs[i].released, queued(s, i));
            if !in_matrix && (!released || waits) {
                self.release(m, s, i)?;
            } else if in_matrix && released && !waits {
                self.take_back(m, s, i)?;
            }
        }
        for i in 0..m.jobs().len() {
            if m.job(i).live() && self.jobs[i].released {
                // New threads inherit SCHED_IDLE; re-applied for safety.
                self.set_idle(m, i, true);
                self.start_observing(m, i);
            }
        }
        Ok(())
    }

    /// The slot ends; the policy decides whether the next one is a DC slot
    /// ([`Fcs::advance`], fed each released job's use over the slot: CPU
    /// got from schedstat, wanted = the threads found runnable (state `R`)
    /// now × the slot's length, at most P, and at least what it got).
    fn dc_owed(&mut self, m: &Mechanism) -> bool {
        let elapsed = self
            .slot_since
            .replace(Instant::now())
            .map_or(0.0, |t| t.elapsed().as_secs_f64());
        let p = m.topology().cpus.len().max(1);
        let mut usage = vec![None; m.jobs().len()];
        for (i, u) in usage.iter_mut().enumerate() {
            if !(m.job(i).live() && self.jobs[i].released) {
                continue;
            }
            let mut runnable = 0usize;
            for pid in m.pids(i) {
                for tid in procfs::tasks(pid) {
                    if crate::cgroup::task_state(pid, tid) == Some('R') {
                        runnable += 1;
                    }
                }
            }
            let run = self.job_proc(m, i).run_ns;
            let f = &mut self.jobs[i];
            let got_s = run.saturating_sub(f.run_at_switch) as f64 / 1e9;
            f.run_at_switch = run;
            *u = Some(Usage {
                got_s,
                wanted_s: elapsed * runnable.min(p) as f64,
            });
        }
        self.fcs.advance(elapsed, &usage) == Slot::Dc
    }

    fn in_dc_slot(&self) -> bool {
        self.in_dc_slot
    }

    /// Whether no released (DC) job is alive.
    fn dc_slot_empty(&self, m: &Mechanism) -> bool {
        !(0..m.jobs().len()).any(|i| m.job(i).live() && self.jobs[i].released)
    }

    /// The same slot goes on: its jobs start a new period.
    fn restart_current(&mut self, m: &Mechanism, s: &GangScheduler) {
        for g in s.gangs_in_current() {
            let i = g.0 as usize;
            if !m.job(i).frozen() {
                self.start_observing(m, i);
            }
        }
    }

    fn take_fillers(&mut self) -> Vec<usize> {
        let mut fillers = Vec::new();
        for (i, j) in self.jobs.iter_mut().enumerate() {
            if std::mem::take(&mut j.filling) {
                fillers.push(i);
            }
        }
        fillers
    }

    /// The jobs of the ending slot (and fillers) that the next slot runs
    /// again anyway (the policy gives them a running role in it: its own
    /// gangs, or fillers of it). They are not frozen at the switch: a freeze
    /// and thaw would cost them the scheduler's time to get all their
    /// threads running again (≈10 ms for 8 busy threads, see the notes).
    /// Empty when jobs wait for admission (the rotation may then differ from
    /// the look-ahead).
    fn kept_thawed(&self, m: &Mechanism, s: &GangScheduler) -> Vec<usize> {
        if s.waiting().len() > 0 {
            return Vec::new();
        }
        let Some(next) = FcsExt::owners(m, s, true) else {
            return Vec::new();
        };
        if next.is_empty() {
            return Vec::new();
        }
        (0..m.jobs().len())
            .filter(|&i| self.placed(m, s, i) && self.fcs.role_in(i, &next).runs())
            .collect()
    }

    /// A running job (taken back) got cells: it stops filling and waits,
    /// frozen, for its slot.
    fn admitted_again(&mut self, m: &mut Mechanism, i: usize) -> Result<()> {
        self.set_idle(m, i, false);
        let f = &mut self.jobs[i];
        f.released = false;
        f.period = None;
        m.apply(Decision::RequestFreeze(i))?;
        m.apply(Decision::ExpectFrozen(i))
    }

    /// A DC slot starts: the jobs the policy runs as its row (the released
    /// ones) run at normal priority in it (at SCHED_IDLE, foreign load would
    /// still take their processors).
    fn start_dc_slot(&mut self, m: &mut Mechanism) {
        self.in_dc_slot = true;
        self.dc_slot_since = Some(Instant::now());
        for i in 0..m.jobs().len() {
            if m.job(i).live() && self.jobs[i].released && self.fcs.role(i) == Role::Row {
                self.set_idle(m, i, false);
            }
        }
        self.dc_slots += 1;
    }

    fn leave_dc_slot(&mut self) {
        self.in_dc_slot = false;
    }

    /// At a job's own thaw: back at normal priority; observed.
    fn own_slot(&mut self, m: &mut Mechanism, i: usize) {
        if self.jobs[i].idle && !self.jobs[i].released {
            self.set_idle(m, i, false);
        }
        self.jobs[i].filling = false;
        self.start_observing(m, i);
    }

    /// A job the policy does not pin (F) is not spread over its cells
    /// (unpinned instead, once).
    fn unpinned(&mut self, m: &mut Mechanism, i: usize) -> bool {
        if self.fcs.pinned(i) {
            return false;
        }
        if m.job(i).pinned() {
            let _ = m.apply(Decision::Unpin(i));
        }
        true
    }

    fn job_exit(&mut self, i: usize) {
        self.exit_class[i] = self.fcs.class(i);
        self.fcs.finished(i);
        self.jobs[i].filling = false;
    }

    fn annotate(&self, i: usize, r: &mut JobReport) {
        let j = &self.jobs[i];
        r.coscheduled = self.exit_class[i].map(CoschedClass::is_coscheduled);
        r.classes = j
            .classes
            .iter()
            .map(|&(t, c)| (t, c.short_name().to_string()))
            .collect();
        r.observed = Some(j.observed);
    }

    /// The thawed jobs run at normal priority again (so they can exit).
    fn stop(&mut self, m: &mut Mechanism) {
        for i in 0..m.jobs().len() {
            if m.job(i).live() && self.jobs[i].idle && !self.jobs[i].released {
                self.set_idle(m, i, false);
            }
            self.jobs[i].filling = false;
        }
    }

    /// The class files go with the run (the jobs have exited).
    fn finish(&mut self) {
        self.class_files = None;
    }

    fn report(&self) -> PolicyReport {
        let mut r = PolicyReport::new();
        r.insert("dc_slots".into(), self.dc_slots.into());
        r.insert("dc_slot_s".into(), self.dc_slot_s.into());
        r
    }

    fn record_decisions(&mut self) {
        self.fcs.record();
    }

    fn decisions(&self) -> &[Step] {
        self.fcs.log()
    }
}
