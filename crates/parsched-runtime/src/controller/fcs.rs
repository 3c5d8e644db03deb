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

use super::Controller;
use crate::cgroup::set_affinity;
use crate::error::Result;
use crate::procfs;
use crate::spec::{Policy, RunSpec};
use parsched_core::policy::classify::{CoschedClass, Observation};
use parsched_core::policy::fcs::{
    FRows, Fcs, FcsConfig, Fill, FillIn, FillPriority, Role, Slot, Usage,
};
use parsched_core::policy::gang_sched::Admission;
use parsched_core::PolicyError;
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

/// The environment variable that names a job's synchronization-statistics
/// file under FCS.
pub const SYNC_FILE_ENV: &str = "PARSCHED_FCS_SYNC_FILE";

/// The first 8 bytes of a synchronization-statistics file a job writes.
pub const SYNC_MAGIC: &[u8; 8] = b"PSYNC1\0\0";

/// Size of a synchronization-statistics file: the magic, then up to
/// [`SYNC_SLOTS`] slots of four native-endian u64 (synchronizations
/// completed, wall-clock nanoseconds waiting in them (informational), CPU
/// nanoseconds spent spinning in them, unused), one per thread or process
/// of the job, each written only by its owner.
pub const SYNC_FILE_BYTES: usize = 4096;

/// Slots of a synchronization-statistics file.
pub const SYNC_SLOTS: usize = (SYNC_FILE_BYTES - 8) / 32;

/// A job's synchronization statistics, summed over its slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct SyncCounts {
    pub(super) syncs: u64,
    pub(super) wait_ns: u64,
    pub(super) spin_ns: u64,
}

/// Reads a synchronization-statistics file: `None` unless it starts with
/// [`SYNC_MAGIC`] (the job does not publish).
pub(crate) fn read_sync_file(f: &std::fs::File) -> Option<SyncCounts> {
    use std::os::unix::fs::FileExt;
    let mut buf = [0u8; SYNC_FILE_BYTES];
    let n = f.read_at(&mut buf, 0).ok()?;
    if n < 8 || &buf[..8] != SYNC_MAGIC {
        return None;
    }
    let word = |k: usize| -> u64 {
        let o = 8 + 8 * k;
        if o + 8 > n {
            return 0;
        }
        u64::from_ne_bytes(buf[o..o + 8].try_into().expect("8 bytes"))
    };
    let mut c = SyncCounts::default();
    for slot in 0..SYNC_SLOTS {
        c.syncs = c.syncs.wrapping_add(word(4 * slot));
        c.wait_ns = c.wait_ns.wrapping_add(word(4 * slot + 1));
        c.spin_ns = c.spin_ns.wrapping_add(word(4 * slot + 2));
    }
    Some(c)
}

/// The environment variable that names a job's class file under FCS.
pub const CLASS_FILE_ENV: &str = "PARSCHED_FCS_CLASS_FILE";

/// Files that publish each job's current FCS class to the job itself, so a
/// cooperating program can wait by class as the FCS papers' communication
/// library does (coscheduled CS processes busy-wait, the others spin-block):
/// `bench/bsp --wait adaptive`. One file per job in a private directory
/// (under /dev/shm when it exists), named to the job by
/// [`CLASS_FILE_ENV`]; its content is always 4 bytes, `CS \n`, `F  \n`,
/// `DC \n` or `-  \n` (unclassified), rewritten in place (never truncated:
/// a reader may have it mapped), so the first byte says the class. Removed
/// with the controller.
#[derive(Debug)]
pub(crate) struct ClassFiles {
    dir: tempfile::TempDir,
    files: Vec<std::fs::File>,
    /// The jobs' synchronization-statistics files ([`SYNC_FILE_ENV`]),
    /// zeroed, writable by the job; none without `fcs_sync_stats`.
    sync: Vec<std::fs::File>,
}

impl ClassFiles {
    /// The class files of `jobs` jobs and, with `sync_stats`, their
    /// synchronization-statistics files.
    pub(crate) fn create(jobs: usize, sync_stats: bool) -> std::io::Result<ClassFiles> {
        use std::os::unix::fs::PermissionsExt;
        let shm = std::path::Path::new("/dev/shm");
        let mut b = tempfile::Builder::new();
        b.prefix("parsched-fcs-");
        let dir = if shm.is_dir() {
            b.tempdir_in(shm)
        } else {
            b.tempdir()
        }?;
        // Jobs may run as the invoking user (sudo): readable by all.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))?;
        let mut files = Vec::with_capacity(jobs);
        let mut sync = Vec::with_capacity(jobs);
        for i in 0..jobs {
            let path = dir.path().join(format!("job{i}.class"));
            let f = std::fs::File::create(&path)?;
            f.set_permissions(std::fs::Permissions::from_mode(0o644))?;
            files.push(f);
            if !sync_stats {
                continue;
            }
            let path = dir.path().join(format!("job{i}.sync"));
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path)?;
            f.set_len(SYNC_FILE_BYTES as u64)?;
            // (the job may run as the invoking user: it writes the file)
            f.set_permissions(std::fs::Permissions::from_mode(0o666))?;
            sync.push(f);
        }
        let c = ClassFiles { dir, files, sync };
        for i in 0..jobs {
            c.publish(i, None)?;
        }
        Ok(c)
    }

    pub(crate) fn path(&self, i: usize) -> std::path::PathBuf {
        self.dir.path().join(format!("job{i}.class"))
    }

    /// Job `i`'s synchronization-statistics file, if there are any.
    pub(crate) fn sync_path(&self, i: usize) -> Option<std::path::PathBuf> {
        (i < self.sync.len()).then(|| self.dir.path().join(format!("job{i}.sync")))
    }

    /// Job `i`'s synchronization statistics, if it publishes them.
    pub(super) fn sync_counts(&self, i: usize) -> Option<SyncCounts> {
        read_sync_file(self.sync.get(i)?)
    }

    /// Writes job `i`'s class (`None`: unclassified).
    pub(crate) fn publish(&self, i: usize, class: Option<CoschedClass>) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        let text: &[u8; 4] = match class {
            Some(CoschedClass::RequiresCoscheduling) => b"CS \n",
            Some(CoschedClass::PrefersCoscheduling) => b"F  \n",
            Some(CoschedClass::DoesNotCare) => b"DC \n",
            None => b"-  \n",
        };
        self.files[i].write_all_at(text, 0)
    }
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
pub(super) fn fcs_config(spec: &RunSpec) -> FcsConfig {
    FcsConfig {
        classifier: spec.classifier_config(),
        f_rows: FRows::Own,
        fill: Fill::FDc,
        fill_in: FillIn::FSlots,
        fill_priority: if spec.fcs_fill_idle {
            FillPriority::Idle
        } else {
            FillPriority::Normal
        },
        discovery_fill: spec.fcs_discovery_fill,
        dc_min_share: spec.dc_min_share,
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

impl Controller {
    pub(super) fn is_fcs(&self) -> bool {
        self.spec.policy == Policy::Fcs
    }

    /// Records the core policy's inputs and decisions from now on (for
    /// tests: [`Controller::fcs_log`], `Fcs::replay`).
    pub fn record_fcs(&mut self) {
        self.fcs.record();
    }

    /// The core policy's recorded inputs and decisions.
    pub fn fcs_log(&self) -> &[parsched_core::policy::fcs::Step] {
        self.fcs.log()
    }

    /// The core policy's configuration for this run.
    pub fn fcs_config(&self) -> FcsConfig {
        *self.fcs.config()
    }

    /// The job's /proc counters over all its threads, now.
    pub(super) fn job_proc(&self, i: usize) -> ProcSnapshot {
        let mut c = ProcSnapshot {
            at: Instant::now(),
            voluntary: 0,
            involuntary: 0,
            run_ns: 0,
            wait_ns: 0,
            threads: 0,
            sync: None,
        };
        for pid in self.freezer.pids(&self.jobs[i].group).unwrap_or_default() {
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
    pub(super) fn start_observing(&mut self, i: usize) {
        if !self.is_fcs() || !self.jobs[i].live() || self.jobs[i].spec.fcs_class.is_some() {
            return;
        }
        self.jobs[i].fcs.period = Some(self.job_proc(i));
    }

    /// Closes the job's observation period, feeds the policy; the new class
    /// if it changed.
    fn close_period(&mut self, i: usize) -> Option<CoschedClass> {
        let before = self.jobs[i].fcs.period.take()?;
        let now = self.job_proc(i);
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
        if let Some(b) = now.sync {
            let a = before.sync.unwrap_or_default();
            period.sync_events = Some(b.syncs.saturating_sub(a.syncs));
            period.spin_s = (b.spin_ns.saturating_sub(a.spin_ns) as f64 / 1e9).min(cpu_s);
            period.wait_s = period.blocked_s + period.spin_s;
        }
        // A released job that barely ran (it starved at SCHED_IDLE, or
        // slept) shows nothing of its behaviour: schedstat credits a waiting
        // thread's run-queue wait only once it runs, so starving would look
        // like blocking without switches. Such periods are not measurements.
        if self.jobs[i].fcs.released && cpu_s < 0.05 * threads * dt {
            return None;
        }
        let t = self.t0.elapsed().as_secs_f64();
        self.jobs[i].fcs.observed.add(&period);
        let change = self.fcs.observe(i, &period);
        if let Some(c) = change {
            self.jobs[i].fcs.classes.push((t, c));
            self.publish_class(i, c);
        }
        change
    }

    /// Job `i`'s class file, under FCS.
    pub(super) fn class_file(&self, i: usize) -> Option<std::path::PathBuf> {
        self.class_files.as_ref().map(|c| c.path(i))
    }

    /// Job `i`'s synchronization-statistics file, under FCS with
    /// `fcs_sync_stats`.
    pub(super) fn sync_file(&self, i: usize) -> Option<std::path::PathBuf> {
        self.class_files.as_ref().and_then(|c| c.sync_path(i))
    }

    /// Opens the class files (FCS), each with the job's fixed class or
    /// unclassified; without them (no writable temporary directory) the
    /// run goes on and says so.
    pub(super) fn open_class_files(&mut self) {
        if !self.is_fcs() || self.class_files.is_some() {
            return;
        }
        match ClassFiles::create(self.jobs.len(), self.spec.fcs_sync_stats) {
            Ok(c) => {
                for (i, j) in self.jobs.iter().enumerate() {
                    if let Some(fixed) = j.spec.fcs_class {
                        let _ = c.publish(i, Some(fixed));
                    }
                }
                self.class_files = Some(c);
            }
            Err(e) => self.warn(format!(
                "FCS class files not created ({e}): jobs are not told their class"
            )),
        }
    }

    fn publish_class(&mut self, i: usize, c: CoschedClass) {
        if let Some(files) = &self.class_files {
            if let Err(e) = files.publish(i, Some(c)) {
                self.warn(format!("job {i}: FCS class file not written: {e}"));
            }
        }
    }

    /// Sets every thread of the job to SCHED_IDLE (`on`) or SCHED_OTHER.
    fn set_idle(&mut self, i: usize, on: bool) {
        let policy = if on {
            libc::SCHED_IDLE
        } else {
            libc::SCHED_OTHER
        };
        let p = libc::sched_param { sched_priority: 0 };
        for pid in self.freezer.pids(&self.jobs[i].group).unwrap_or_default() {
            for tid in procfs::tasks(pid) {
                // SAFETY: valid sched_param; threads may be gone meanwhile.
                unsafe { libc::sched_setscheduler(tid, policy, &p) };
            }
        }
        self.jobs[i].fcs.idle = on;
    }

    /// Allows every thread of the job on every CPU.
    fn unpin(&mut self, i: usize) {
        let all = self.topo.cpus.clone();
        for pid in self.freezer.pids(&self.jobs[i].group).unwrap_or_default() {
            for tid in procfs::tasks(pid) {
                let _ = set_affinity(tid, &all);
            }
        }
        self.jobs[i].pinned.clear();
        self.jobs[i].cpus = all;
    }

    /// Thaws a job outside its own slot (released, or filling), accounting
    /// the time it was frozen.
    fn thaw_outside_slot(&mut self, i: usize) -> Result<()> {
        if let Some(s) = self.jobs[i].frozen_since.take() {
            let g = self.jobs[i].group.clone();
            self.freezer.thaw(&g)?;
            self.jobs[i].suspended += s.elapsed();
        }
        Ok(())
    }

    fn queued(&self, i: usize) -> bool {
        let gang = self.jobs[i].gang;
        self.sched.waiting().any(|(g, _)| g == gang)
    }

    /// Frees the gang's cells, or takes it off the admission queue.
    pub(super) fn leave_matrix(&mut self, i: usize) -> Result<()> {
        let gang = self.jobs[i].gang;
        if self.queued(i) || self.sched.matrix().allocation(gang).is_some() {
            self.sched.finish(gang).map_err(PolicyError::from)?;
        }
        Ok(())
    }

    /// Applies a release: out of the matrix, thawed, unpinned, at
    /// SCHED_IDLE.
    pub(super) fn release(&mut self, i: usize) -> Result<()> {
        self.leave_matrix(i)?;
        self.thaw_outside_slot(i)?;
        self.set_idle(i, true);
        self.unpin(i);
        let now = self.job_proc(i);
        let f = &mut self.jobs[i].fcs;
        f.released = true;
        f.filling = false;
        f.run_at_switch = now.run_ns;
        Ok(())
    }

    /// Applies a take-back: admitted again at normal priority, frozen until
    /// its slot comes (or queued, still filling, if there is no room).
    fn take_back(&mut self, i: usize) -> Result<()> {
        let (gang, width) = (self.jobs[i].gang, self.jobs[i].width);
        match self.sched.admit(gang, width).map_err(PolicyError::from)? {
            Admission::Placed(_) => self.admitted_again(i),
            Admission::Queued => Ok(()),
        }
    }

    /// A running job (taken back) got cells: it stops filling and waits,
    /// frozen, for its slot.
    pub(super) fn admitted_again(&mut self, i: usize) -> Result<()> {
        self.set_idle(i, false);
        let f = &mut self.jobs[i].fcs;
        f.released = false;
        f.period = None;
        self.request_freeze_job(i)?;
        self.jobs[i].unconfirmed = true;
        Ok(())
    }

    /// A job the policy starts released (its class is fixed DC): spawned
    /// thawed, released.
    pub(super) fn start_released(&mut self, i: usize) -> Result<()> {
        self.release(i)
    }

    /// FCS, at the start of a switch: closes the observation periods (the
    /// policy may change classes), applies the policy's matrix membership
    /// (release, take-back), restarts the released jobs' periods.
    pub(super) fn fcs_end_period(&mut self) -> Result<()> {
        if !self.is_fcs() {
            return Ok(());
        }
        for i in 0..self.jobs.len() {
            if self.jobs[i].live() && self.jobs[i].fcs.period.is_some() {
                self.close_period(i);
            }
        }
        for i in 0..self.jobs.len() {
            if !self.jobs[i].live() {
                continue;
            }
            let (in_matrix, released, queued) = (
                self.fcs.in_matrix(i),
                self.jobs[i].fcs.released,
                self.queued(i),
            );
            if !in_matrix && (!released || queued) {
                self.release(i)?;
            } else if in_matrix && released && !queued {
                self.take_back(i)?;
            }
        }
        for i in 0..self.jobs.len() {
            if self.jobs[i].live() && self.jobs[i].fcs.released {
                // New threads inherit SCHED_IDLE; re-applied for safety.
                self.set_idle(i, true);
                self.start_observing(i);
            }
        }
        Ok(())
    }

    /// FCS, when the same slot goes on: its jobs start a new period.
    pub(super) fn fcs_restart_current(&mut self) {
        if !self.is_fcs() {
            return;
        }
        let cur: Vec<usize> = self
            .sched
            .gangs_in_current()
            .iter()
            .map(|g| g.0 as usize)
            .collect();
        for i in cur {
            if self.jobs[i].frozen_since.is_none() {
                self.start_observing(i);
            }
        }
    }

    /// The jobs thawed as fillers now.
    pub(super) fn fillers(&self) -> Vec<usize> {
        (0..self.jobs.len())
            .filter(|&i| self.jobs[i].fcs.filling)
            .collect()
    }

    /// The live jobs owning the current slot (or the next one: `next`).
    fn owners(&self, next: bool) -> Option<Vec<u32>> {
        let slot = if next {
            let live: Vec<bool> = self.jobs.iter().map(|j| j.live()).collect();
            self.sched.peek(|g| live[g.0 as usize])?
        } else {
            self.sched.current()?
        };
        Some(
            self.sched
                .matrix()
                .gangs_of(slot)
                .iter()
                .map(|g| g.0 as u32)
                .filter(|&i| self.jobs[i as usize].live())
                .collect(),
        )
    }

    /// Whether job `i` is in the matrix with cells (not queued, not
    /// released): it can fill.
    fn placed(&self, i: usize) -> bool {
        let j = &self.jobs[i];
        j.live() && !j.fcs.released && self.sched.matrix().allocation(j.gang).is_some()
    }

    /// FCS, after the next slot was thawed: the jobs the policy makes
    /// fillers in it are thawed, unpinned, at the priority it says.
    pub(super) fn fcs_start_slot(&mut self) -> Result<()> {
        if !self.is_fcs() {
            return Ok(());
        }
        let Some(owners) = self.owners(false) else {
            return Ok(());
        };
        for i in 0..self.jobs.len() {
            if !self.placed(i) || self.sched.is_running(self.jobs[i].gang) {
                continue;
            }
            if let Role::Fill { idle } = self.fcs.role_in(i, &owners) {
                if self.jobs[i].fcs.idle != idle {
                    self.set_idle(i, idle);
                }
                if !self.jobs[i].pinned.is_empty() || self.jobs[i].cpus != self.topo.cpus {
                    self.unpin(i);
                }
                self.thaw_outside_slot(i)?;
                self.jobs[i].fcs.filling = true;
            }
        }
        Ok(())
    }

    /// FCS: the jobs of the ending slot (and fillers) that the next slot
    /// runs again anyway (the policy gives them a running role in it: its
    /// own gangs, or fillers of it). They are not frozen at the switch: a
    /// freeze and thaw would cost them the scheduler's time to get all their
    /// threads running again (≈10 ms for 8 busy threads, see the notes).
    /// Empty when jobs wait for admission (the rotation may then differ from
    /// the look-ahead).
    pub(super) fn fcs_kept_thawed(&self) -> Vec<usize> {
        if !self.is_fcs() || self.sched.waiting().len() > 0 {
            return Vec::new();
        }
        let Some(next) = self.owners(true) else {
            return Vec::new();
        };
        if next.is_empty() {
            return Vec::new();
        }
        (0..self.jobs.len())
            .filter(|&i| self.placed(i) && self.fcs.role_in(i, &next).runs())
            .collect()
    }

    /// FCS: the slot ends; the policy decides whether the next one is a DC
    /// slot ([`Fcs::advance`], fed each released job's use over the slot:
    /// CPU got from schedstat, wanted = the threads found runnable (state
    /// `R`) now × the slot's length, at most P, and at least what it got).
    pub(super) fn fcs_dc_owed(&mut self) -> bool {
        if !self.is_fcs() {
            return false;
        }
        let elapsed = self
            .slot_since
            .replace(Instant::now())
            .map_or(0.0, |t| t.elapsed().as_secs_f64());
        let p = self.topo.cpus.len().max(1);
        let mut usage = vec![None; self.jobs.len()];
        for (i, u) in usage.iter_mut().enumerate() {
            if !(self.jobs[i].live() && self.jobs[i].fcs.released) {
                continue;
            }
            let mut runnable = 0usize;
            for pid in self.freezer.pids(&self.jobs[i].group).unwrap_or_default() {
                for tid in procfs::tasks(pid) {
                    if crate::cgroup::task_state(pid, tid) == Some('R') {
                        runnable += 1;
                    }
                }
            }
            let run = self.job_proc(i).run_ns;
            let f = &mut self.jobs[i].fcs;
            let got_s = run.saturating_sub(f.run_at_switch) as f64 / 1e9;
            f.run_at_switch = run;
            *u = Some(Usage {
                got_s,
                wanted_s: elapsed * runnable.min(p) as f64,
            });
        }
        self.fcs.advance(elapsed, &usage) == Slot::Dc
    }

    /// FCS, at a job's own thaw: back at normal priority.
    pub(super) fn fcs_own_slot(&mut self, i: usize) {
        if self.is_fcs() && self.jobs[i].fcs.idle && !self.jobs[i].fcs.released {
            self.set_idle(i, false);
        }
        self.jobs[i].fcs.filling = false;
    }

    /// FCS: a job the policy does not pin (F) is not spread over its cells
    /// (unpinned instead, once).
    pub(super) fn fcs_unpinned(&mut self, i: usize) -> bool {
        if !self.is_fcs() || self.fcs.pinned(i) {
            return false;
        }
        if !self.jobs[i].pinned.is_empty() {
            self.unpin(i);
        }
        true
    }

    /// FCS: a DC slot starts: the jobs the policy runs as its row (the
    /// released ones) run at normal priority in it (at SCHED_IDLE, foreign
    /// load would still take their processors).
    pub(super) fn fcs_start_dc_slot(&mut self) {
        for i in 0..self.jobs.len() {
            if self.jobs[i].live() && self.jobs[i].fcs.released && self.fcs.role(i) == Role::Row {
                self.set_idle(i, false);
            }
        }
    }

    /// Whether any released (DC) job is alive.
    pub(super) fn any_released_live(&self) -> bool {
        self.jobs.iter().any(|j| j.live() && j.fcs.released)
    }
}
