//! Flexible coscheduling (FCS): gang slots for the jobs that need them, the
//! others fill in. One policy, applied by both machines: the simulator's
//! cluster machine (`parsched-sim`, `machines/cluster/machine/fcs.rs`) and
//! the Linux controller (`parsched-runtime`, `controller/fcs.rs`). The
//! machines measure and apply; every decision below is taken here.
//!
//! Seed 002 (Frachtenberg, "Process Scheduling for the Parallel Desktop",
//! `seeds/002_f89b85c3eb86e2ff.txt` §4.2; digest in `notes/seed-targets.md`,
//! section 002) runs FCS on its load-imbalanced workload: "After a short
//! discovery period, it classifies job 3 as CS (requires coscheduling), and
//! jobs 1 and 2 as F (prefer, but do not require coscheduling)"; CS jobs
//! "always receive dedicated gang-scheduled time slots", F processes "can be
//! descheduled if they stall too long", and less synchronous jobs use
//! spin-block in their communication. The classes and the DC class ("does
//! not care": fills idle processors) are those of the FCS paper it cites
//! (Frachtenberg, Feitelson, Petrini, Fernandez, IPDPS 2003).
//!
//! What this policy decides:
//!
//! * **Classes.** One [`ClassTracker`] per job, fed by the machine once per
//!   observation period ([`Fcs::observe`]); or a class fixed from outside
//!   ([`Fcs::fix_class`], the runtime's `fcs_class`).
//! * **The matrix.** A job not yet classified, CS and F jobs are in the
//!   matrix ([`Fcs::in_matrix`]); a DC job is *released* (out of it). A job
//!   whose class becomes DC is released at once; a released job whose class
//!   becomes CS or F is *taken back*. Both machines apply the membership
//!   to a core [`GangScheduler`] matrix: the runtime admits the job to (or
//!   frees it from) it; the simulator keeps its gangs equal to the rows
//!   below ([`Fcs::row_gangs`], `GangScheduler::sync`).
//! * **Rows** ([`Fcs::rows`]). Every job in discovery and every CS job has
//!   a row of its own (it is discovered, and kept, coscheduled). F jobs
//!   share one row ([`FRows::Shared`], the default) or have one each
//!   ([`FRows::Own`]). A row is one gang of the machine's gang scheduler
//!   (named by its first job, as wide as the machine says: its widest job,
//!   or the whole machine in the simulator, whose processes are not pinned
//!   to cells), so rows take turns as the scheduler's slots rotate. The
//!   runtime's rows are one gang per job, as [`FRows::Own`]; F
//!   jobs of other slots fill an F slot, so together they time-share it as
//!   a shared row would.
//! * **Which slot comes next** ([`Fcs::advance`]): a *DC slot*
//!   ([`Slot::Dc`]) when a released job is owed its bounded share
//!   ([`FcsConfig::dc_min_share`]; never two DC slots in a row); otherwise
//!   the machine's gang scheduler rotates to its next slot
//!   (`GangScheduler::rotate`, in both machines). [`Slot::Row`] also names
//!   the row of [`Fcs::rows`] that would follow in the policy's own turn
//!   order ([`Fcs::current_row`], [`Fcs::role`]), which neither machine
//!   uses for rotation.
//! * **Roles** in a slot ([`Fcs::role_in_slot`] with the owners of the
//!   machine's running slot, [`Fcs::owners`]; [`Fcs::role_in`] in a slot
//!   held by given jobs; [`Fcs::role`] in the policy's own current row):
//!   the row's jobs run
//!   ([`Role::Row`]); fillers ([`Role::Fill`]: with [`Fill::FDc`] the F jobs
//!   of other rows, in any slot or only in F slots, [`FillIn`]; with
//!   [`FcsConfig::discovery_fill`] also jobs in discovery, and always at
//!   idle priority in or from a discovery slot) run on processors the row
//!   leaves idle, at normal or idle priority ([`FillPriority`]); released
//!   jobs fill too ([`Role::Released`], at idle
//!   priority), or run as the row in a DC slot or when no job is in the
//!   matrix; everyone else waits for its row ([`Role::Parked`]). A CS job
//!   therefore never shares its slot with anyone while it has a ready
//!   process.
//! * **Waiting and placement** ([`Fcs::busy_waits`], [`Fcs::pinned`]): a job
//!   in discovery or CS busy-waits (coscheduled, its partners answer within
//!   microseconds) and is pinned to its cells; F and DC jobs spin-block and
//!   float, so a stalled F process leaves its processor to others.
//!
//! Open choices of the paper (slot length, thresholds, discovery period,
//! spin time, how idle processors are filled, the DC share) are named
//! options here or in [`ClassifierConfig`]; the machine's slot is its own
//! key.
//!
//! [`GangScheduler`]: super::gang_sched::GangScheduler

use super::classify::{ClassTracker, Classifier, ClassifierConfig, CoschedClass, Observation};
use super::gang::GangId;
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};

/// How F jobs are laid out in the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FRows {
    /// All F jobs share one row; the local scheduler time-shares them
    /// (default).
    #[default]
    Shared,
    /// Every F job has a row of its own.
    Own,
}

/// Who may run on a processor the current row leaves idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Fill {
    /// DC jobs only.
    Dc,
    /// F jobs of other rows and DC jobs (default).
    #[default]
    FDc,
}

/// In which slots F jobs of other rows fill (with [`Fill::FDc`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FillIn {
    /// Every slot (default; the simulator): a filler runs only where the
    /// row leaves a processor idle and gives way the moment a row process
    /// is ready, so it never delays a CS job (whose processes busy-wait and
    /// leave nothing idle anyway).
    #[default]
    AnySlot,
    /// Only slots held by F jobs alone (the runtime): Linux cannot take a
    /// processor back from a thawed filler at once, so a filler in a CS
    /// slot would break the CS job's dedicated processors.
    FSlots,
}

/// The priority of an F job filling another row's slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FillPriority {
    /// Normal priority (default): the slot's F jobs share its processors as
    /// their threads spin-block (as one shared row would).
    #[default]
    Normal,
    /// Idle priority: it runs only where the slot's owners stall (the
    /// runtime's `fcs_fill_idle`: `SCHED_IDLE`). The simulator's fill queue
    /// is always below the row, so there both mean the same.
    Idle,
}

/// FCS's options.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FcsConfig {
    /// The classifier's thresholds, discovery period and revision window.
    pub classifier: ClassifierConfig,
    pub f_rows: FRows,
    pub fill: Fill,
    pub fill_in: FillIn,
    pub fill_priority: FillPriority,
    /// The bounded share of a released (DC) job: when, since its release,
    /// it got less than this share of the CPU time it wanted (as the
    /// machine measures it, [`Fcs::advance`]), the next slot is a DC slot
    /// (the released jobs alone, at normal priority), unless DC slots
    /// already took this share of the time since its release. 0 turns DC
    /// slots off. Default 0 \[ext\]: the simulator's fill queue already gives
    /// a released job every processor the rows leave idle and it does not
    /// measure "wanted"; the runtime's key `dc_min_share` defaults to 0.1.
    pub dc_min_share: f64,
    /// Discovery filling: jobs in discovery fill the slots of other rows, and
    /// F jobs (with [`Fill::FDc`]) and jobs in discovery fill the slots of
    /// jobs in discovery, always at idle priority (the job observed in its
    /// own slot keeps its processors whenever it wants them, so what is
    /// observed stays its own behaviour). With [`FillIn::FSlots`], a slot
    /// held by F and discovering jobs alone counts as an F slot. Default
    /// false \[ext\]: a job in discovery runs alone in its slot, and the
    /// processors it leaves idle stay idle (the runtime's
    /// `fcs_discovery_fill`).
    pub discovery_fill: bool,
    /// A released job is owed a DC slot only once it wanted at least this
    /// many CPU-seconds since its release (so a short sample does not
    /// decide). Default 0.025 s: half of a 50 ms slot (the runtime passes
    /// half its slot).
    pub dc_min_wanted_s: f64,
    /// The jobs wait by the class FCS gives them (the runtime publishes it,
    /// `PARSCHED_FCS_CLASS_FILE`; `bsp --wait adaptive` spins when CS and
    /// blocks otherwise), so a class change changes what they show: when a
    /// job's class changes, its tracker forgets the periods before the
    /// change ([`ClassTracker::forget_window`]) and the next revision rests
    /// on the new behaviour alone. Without it, a window mixing the blocking
    /// periods before a CS decision with the spinning ones after it shows few
    /// switches for much CPU — coarse grain, DC — and the CS job flaps.
    /// Default false (the simulator's classifier sees synchronizations
    /// whatever the waiting); the runtime turns it on.
    pub adaptive_waiting: bool,
}

impl Default for FcsConfig {
    fn default() -> Self {
        FcsConfig {
            classifier: ClassifierConfig::default(),
            f_rows: FRows::default(),
            fill: Fill::default(),
            fill_in: FillIn::default(),
            fill_priority: FillPriority::default(),
            discovery_fill: false,
            dc_min_share: 0.0,
            dc_min_wanted_s: 0.025,
            adaptive_waiting: false,
        }
    }
}

impl FcsConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.classifier.validate()?;
        if !(self.dc_min_share.is_finite() && (0.0..=1.0).contains(&self.dc_min_share)) {
            return Err(ConfigError::new(
                "dc_min_share",
                self.dc_min_share.to_string(),
                "a number in [0, 1]",
            ));
        }
        if !(self.dc_min_wanted_s.is_finite() && self.dc_min_wanted_s >= 0.0) {
            return Err(ConfigError::new(
                "dc_min_wanted_s",
                self.dc_min_wanted_s.to_string(),
                "a finite number >= 0",
            ));
        }
        Ok(())
    }
}

/// What a job does in a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Its row holds the slot (or it is released and the slot is a DC
    /// slot): it runs, at normal priority.
    Row,
    /// An F job of another row: it may run on processors the row leaves
    /// idle (`idle`: at idle priority).
    Fill { idle: bool },
    /// Released (DC, out of the matrix): it fills idle processors at idle
    /// priority.
    Released,
    /// It waits for its row (frozen, or ready on no queue).
    Parked,
}

impl Role {
    /// Whether the job may run at all in the slot.
    pub fn runs(self) -> bool {
        self != Role::Parked
    }

    /// Whether it runs only where the row leaves processors idle.
    pub fn fills(self) -> bool {
        matches!(self, Role::Fill { .. } | Role::Released)
    }
}

/// The slot [`Fcs::advance`] starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// The next row takes the slot (the simulator: row index into
    /// [`Fcs::rows`]; the runtime rotates its gang matrix).
    Row(usize),
    /// A DC slot: every row parked, the released jobs run alone.
    Dc,
}

/// A released job's accounts since its release (for the DC share).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct ReleasedAcct {
    /// Released during the running slot: its accounts start with the next
    /// slot (the slot that ends was not spent released).
    fresh: bool,
    /// Wall seconds since its release (sum of the slots that ended since).
    since_s: f64,
    /// Wall seconds of DC slots since its release.
    dc_slot_s: f64,
    /// CPU-seconds it got and wanted since its release, as measured.
    got_s: f64,
    wanted_s: f64,
}

/// A released job's use of the machine over one slot, as the machine
/// measured it: CPU-seconds it got, and CPU-seconds it wanted (got plus
/// time its threads were ready but not running).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    pub got_s: f64,
    pub wanted_s: f64,
}

/// FCS over `n` jobs (see the module documentation).
#[derive(Debug, Clone)]
pub struct Fcs {
    cfg: FcsConfig,
    trackers: Vec<ClassTracker>,
    fixed: Vec<Option<CoschedClass>>,
    live: Vec<bool>,
    rows: Vec<Vec<u32>>,
    /// The row holding the slot (an index into `rows`).
    current: usize,
    /// A DC slot holds the machine.
    dc_slot: bool,
    /// `row_of[j]`: the row job j belongs to, if any.
    row_of: Vec<Option<usize>>,
    /// Released jobs' accounts (`Some` exactly while released and live).
    released: Vec<Option<ReleasedAcct>>,
    dc_slots: u64,
    log: Option<Vec<Step>>,
}

/// One input to the policy and what it decided ([`Fcs::record`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    FixClass {
        job: usize,
        class: CoschedClass,
    },
    /// An observation and the class change it caused.
    Observe {
        job: usize,
        period: Observation,
        change: Option<CoschedClass>,
    },
    Finished {
        job: usize,
    },
    /// A slot ended; the slot decided next.
    Advance {
        elapsed_s: f64,
        usage: Vec<Option<Usage>>,
        slot: Slot,
    },
}

impl Role {
    /// Whether a period spent in this role is observed (fed to the job's
    /// classifier): the slot is the job's own (row), or the job is released
    /// (observed over every slot, so that a job that starts to synchronize
    /// is seen and taken back). Filling and parked time say nothing of a
    /// job's own behaviour.
    pub fn observed(self) -> bool {
        matches!(self, Role::Row | Role::Released)
    }
}

impl Fcs {
    pub fn new(jobs: usize, cfg: FcsConfig) -> Result<Fcs, ConfigError> {
        cfg.validate()?;
        let classifier = Classifier::new(cfg.classifier)?;
        let mut f = Fcs {
            cfg,
            trackers: vec![ClassTracker::new(classifier); jobs],
            fixed: vec![None; jobs],
            live: vec![true; jobs],
            rows: Vec::new(),
            current: 0,
            dc_slot: false,
            row_of: vec![None; jobs],
            released: vec![None; jobs],
            dc_slots: 0,
            log: None,
        };
        f.rebuild();
        Ok(f)
    }

    pub fn config(&self) -> &FcsConfig {
        &self.cfg
    }

    /// Fixes job `j`'s class (no classification from then on).
    pub fn fix_class(&mut self, j: usize, class: CoschedClass) {
        self.fixed[j] = Some(class);
        self.rebuild();
        self.push(Step::FixClass { job: j, class });
    }

    /// Records every input and decision from now on ([`Fcs::log`]); the
    /// classes fixed so far open the log. Call it before the first
    /// observation, so that [`Fcs::replay`] starts from the same state.
    pub fn record(&mut self) {
        if self.log.is_none() {
            let fixed = self.fixed.iter().enumerate();
            let log = fixed
                .filter_map(|(job, c)| c.map(|class| Step::FixClass { job, class }))
                .collect();
            self.log = Some(log);
        }
    }

    /// The inputs and decisions recorded since [`Fcs::record`] (empty when
    /// not recording).
    pub fn log(&self) -> &[Step] {
        self.log.as_deref().unwrap_or(&[])
    }

    fn push(&mut self, s: Step) {
        if let Some(l) = &mut self.log {
            l.push(s);
        }
    }

    /// Runs the inputs of `log` through a new policy of `jobs` jobs and
    /// `cfg`; returns the log it records (equal to `log` when `log` was
    /// recorded by this code with that configuration: a machine's decisions
    /// are then exactly this policy's).
    pub fn replay(jobs: usize, cfg: FcsConfig, log: &[Step]) -> Result<Vec<Step>, ConfigError> {
        let mut f = Fcs::new(jobs, cfg)?;
        f.record();
        for s in log {
            match s {
                Step::FixClass { job, class } => f.fix_class(*job, *class),
                Step::Observe { job, period, .. } => {
                    f.observe(*job, period);
                }
                Step::Finished { job } => f.finished(*job),
                Step::Advance {
                    elapsed_s, usage, ..
                } => {
                    f.advance(*elapsed_s, usage);
                }
            }
        }
        Ok(f.log.unwrap_or_default())
    }

    /// Job `j`'s class (`None` during discovery).
    pub fn class(&self, j: usize) -> Option<CoschedClass> {
        self.fixed[j].or(self.trackers[j].class())
    }

    /// Job `j`'s classes over its observed time.
    pub fn history(&self, j: usize) -> &[(f64, CoschedClass)] {
        self.trackers[j].history()
    }

    /// Whether job `j` is live and in the matrix (in discovery, CS or F).
    pub fn in_matrix(&self, j: usize) -> bool {
        self.live[j] && self.class(j) != Some(CoschedClass::DoesNotCare)
    }

    /// Whether job `j` is live and released (DC: out of the matrix).
    pub fn released(&self, j: usize) -> bool {
        self.released[j].is_some()
    }

    /// Whether job `j`'s threads are pinned to its cells when its row runs
    /// (discovery and CS: coscheduled); F and DC jobs float.
    pub fn pinned(&self, j: usize) -> bool {
        self.in_matrix(j) && self.class(j) != Some(CoschedClass::PrefersCoscheduling)
    }

    /// The rows of the matrix (job indices), in turn order.
    pub fn rows(&self) -> &[Vec<u32>] {
        &self.rows
    }

    /// The matrix the policy wants, as gangs of a [`GangScheduler`]: one
    /// gang per row of [`Fcs::rows`], named by the row's first job and as
    /// wide as its widest job (`widths[j]`: job j's width in the matrix). With
    /// [`FRows::Own`] (the runtime's) that is one gang per job in the
    /// matrix. A machine keeps its scheduler's gangs equal to these
    /// (`GangScheduler::sync`), rotates the scheduler's slots, and applies
    /// [`Fcs::role_in_slot`] with the slot's [`Fcs::owners`].
    ///
    /// [`GangScheduler`]: super::gang_sched::GangScheduler
    pub fn row_gangs(&self, widths: &[u32]) -> Vec<(GangId, u32)> {
        self.rows
            .iter()
            .map(|r| {
                let w = r.iter().map(|&j| widths[j as usize]).max().unwrap_or(1);
                (GangId(r[0] as u64), w)
            })
            .collect()
    }

    /// The jobs owning a slot that holds `gangs` (gangs of
    /// [`Fcs::row_gangs`]): every job of their rows, in row order.
    pub fn owners(&self, gangs: &[GangId]) -> Vec<u32> {
        self.rows
            .iter()
            .filter(|r| gangs.contains(&GangId(r[0] as u64)))
            .flatten()
            .copied()
            .collect()
    }

    /// Job `j`'s role in the slot held by `owners` ([`Fcs::role_in`]), or
    /// in the DC slot when one holds the machine ([`Fcs::role`]).
    pub fn role_in_slot(&self, j: usize, owners: &[u32]) -> Role {
        if self.dc_slot {
            self.role(j)
        } else {
            self.role_in(j, owners)
        }
    }

    /// The row holding the slot (`None` in a DC slot or without rows).
    pub fn current_row(&self) -> Option<&[u32]> {
        if self.dc_slot {
            return None;
        }
        self.rows.get(self.current).map(|r| r.as_slice())
    }

    /// Whether a DC slot holds the machine.
    pub fn in_dc_slot(&self) -> bool {
        self.dc_slot
    }

    /// DC slots started so far.
    pub fn dc_slots(&self) -> u64 {
        self.dc_slots
    }

    fn rebuild(&mut self) {
        let keep = self.rows.get(self.current).cloned();
        self.rows.clear();
        let mut shared_f: Vec<u32> = Vec::new();
        for j in 0..self.trackers.len() {
            let dc = self.class(j) == Some(CoschedClass::DoesNotCare);
            if !(self.live[j] && dc) {
                self.released[j] = None;
            } else if self.released[j].is_none() {
                self.released[j] = Some(ReleasedAcct {
                    fresh: true,
                    ..ReleasedAcct::default()
                });
            }
            if !self.live[j] {
                continue;
            }
            match self.class(j) {
                None | Some(CoschedClass::RequiresCoscheduling) => self.rows.push(vec![j as u32]),
                Some(CoschedClass::PrefersCoscheduling) => match self.cfg.f_rows {
                    FRows::Shared => shared_f.push(j as u32),
                    FRows::Own => self.rows.push(vec![j as u32]),
                },
                Some(CoschedClass::DoesNotCare) => {}
            }
        }
        if !shared_f.is_empty() {
            self.rows.push(shared_f);
        }
        self.row_of = vec![None; self.trackers.len()];
        for (r, row) in self.rows.iter().enumerate() {
            for &j in row {
                self.row_of[j as usize] = Some(r);
            }
        }
        // Stay on the row that holds the slot if it still exists (with any
        // of its jobs), else the first.
        self.current = keep
            .and_then(|k| k.iter().find_map(|&j| self.row_of[j as usize]))
            .unwrap_or(0)
            .min(self.rows.len().saturating_sub(1));
    }

    /// Job `j`'s role in the current slot (a row of [`Fcs::rows`], or a DC
    /// slot).
    pub fn role(&self, j: usize) -> Role {
        if self.dc_slot {
            return if self.released(j) {
                Role::Row
            } else {
                Role::Parked
            };
        }
        let row = self
            .rows
            .get(self.current)
            .map_or(&[][..], |r| r.as_slice());
        self.role_in(j, row)
    }

    /// Job `j`'s role in a (non-DC) slot held by the jobs `owners` (a row of
    /// [`Fcs::rows`], or a slot of the machine's own matrix).
    pub fn role_in(&self, j: usize, owners: &[u32]) -> Role {
        if !self.live[j] {
            return Role::Parked;
        }
        if owners.contains(&(j as u32)) {
            return Role::Row;
        }
        if self.released(j) {
            // Alone (no job in the matrix), a released job runs as the row.
            return if self.rows.is_empty() {
                Role::Row
            } else {
                Role::Released
            };
        }
        let f = |k: usize| self.class(k) == Some(CoschedClass::PrefersCoscheduling);
        let discovering = |k: usize| self.cfg.discovery_fill && self.class(k).is_none();
        let may_fill = (f(j) && self.cfg.fill == Fill::FDc) || discovering(j);
        if !may_fill {
            return Role::Parked;
        }
        let mut live = owners
            .iter()
            .map(|&k| k as usize)
            .filter(|&k| self.live[k])
            .peekable();
        let slot_ok = match self.cfg.fill_in {
            FillIn::AnySlot => true,
            FillIn::FSlots => live.peek().is_some() && live.clone().all(|k| f(k) || discovering(k)),
        };
        if !slot_ok {
            return Role::Parked;
        }
        // In a slot of a job in discovery, or filling while in discovery:
        // idle priority, so the observed owner's behaviour stays its own.
        let idle = self.cfg.fill_priority == FillPriority::Idle
            || self.class(j).is_none()
            || live.any(|k| self.class(k).is_none());
        Role::Fill { idle }
    }

    /// Whether job `j` busy-waits (discovery and CS) rather than
    /// spin-blocking (F and DC).
    pub fn busy_waits(&self, j: usize) -> bool {
        matches!(
            self.class(j),
            None | Some(CoschedClass::RequiresCoscheduling)
        )
    }

    /// Feeds job `j`'s observation over a period it held a role that is
    /// [`Role::observed`]; returns its new class when it changed (the rows
    /// and the matrix membership change with it: a job that became DC is
    /// released, a released job that became CS or F is taken back). A job
    /// whose class is fixed is not classified.
    pub fn observe(&mut self, j: usize, period: &Observation) -> Option<CoschedClass> {
        if self.fixed[j].is_some() || !self.live[j] {
            return None;
        }
        let changed = self.trackers[j].observe(period);
        if changed.is_some() {
            if self.cfg.adaptive_waiting {
                self.trackers[j].forget_window();
            }
            self.rebuild();
        }
        self.push(Step::Observe {
            job: j,
            period: *period,
            change: changed,
        });
        changed
    }

    /// Job `j` finished.
    pub fn finished(&mut self, j: usize) {
        if self.live[j] {
            self.live[j] = false;
            self.rebuild();
            self.push(Step::Finished { job: j });
        }
    }

    /// The slot ends after `elapsed_s` wall seconds; `usage[j]` is released
    /// job `j`'s measured use over it (missing or `None`: not measured; a job
    /// released during the slot is accounted from the next one).
    /// Decides the next slot: a DC slot if a released job is owed its share
    /// ([`FcsConfig::dc_min_share`]: since its release it got less than that
    /// share of the CPU time it wanted, it wanted at least
    /// [`FcsConfig::dc_min_wanted_s`], DC slots took less than that share of
    /// the time since its release, some job is in the matrix, and the slot
    /// that ends is not itself a DC slot); else the next row (after a DC
    /// slot, the row after the one before it).
    pub fn advance(&mut self, elapsed_s: f64, usage: &[Option<Usage>]) -> Slot {
        let slot = self.decide_next(elapsed_s, usage);
        if self.log.is_some() {
            self.push(Step::Advance {
                elapsed_s,
                usage: usage.to_vec(),
                slot,
            });
        }
        slot
    }

    fn decide_next(&mut self, elapsed_s: f64, usage: &[Option<Usage>]) -> Slot {
        let was_dc = self.dc_slot;
        for (j, acct) in self.released.iter_mut().enumerate() {
            let Some(a) = acct else { continue };
            if std::mem::take(&mut a.fresh) {
                continue;
            }
            a.since_s += elapsed_s;
            if was_dc {
                a.dc_slot_s += elapsed_s;
            }
            if let Some(Some(u)) = usage.get(j) {
                a.got_s += u.got_s;
                a.wanted_s += u.wanted_s;
            }
        }
        self.dc_slot = false;
        if !was_dc && self.dc_owed() {
            self.dc_slot = true;
            self.dc_slots += 1;
            return Slot::Dc;
        }
        if !self.rows.is_empty() {
            self.current = (self.current + 1) % self.rows.len();
        }
        Slot::Row(self.current)
    }

    fn dc_owed(&self) -> bool {
        let share = self.cfg.dc_min_share;
        if share <= 0.0 || self.rows.is_empty() {
            return false;
        }
        self.released.iter().flatten().any(|a| {
            let wanted = a.wanted_s.max(a.got_s);
            a.dc_slot_s < share * a.since_s
                && wanted >= self.cfg.dc_min_wanted_s
                && a.got_s < share * wanted
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slot's observation: `n` syncs of `grain` s computing and `wait` s
    /// waiting, over `wall` s.
    fn obs(wall: f64, n: u64, grain: f64, wait: f64) -> Observation {
        Observation {
            wall_s: wall,
            thread_s: wall * 4.0,
            cpu_s: n as f64 * grain,
            sync_events: Some(n),
            wait_s: n as f64 * wait,
            ..Default::default()
        }
    }

    fn coarse() -> Observation {
        obs(0.05, 2, 0.02, 0.0)
    }

    fn fine_cs() -> Observation {
        obs(0.05, 200, 0.0005, 0.00001)
    }

    /// A /proc period of 50 ms of two threads: blocking at `voluntary`
    /// barriers (CPU 95%), or spinning (no switches, CPU 100%).
    fn proc_period(voluntary: u64) -> Observation {
        let cpu = if voluntary == 0 { 0.1 } else { 0.095 };
        Observation {
            wall_s: 0.05,
            thread_s: 0.1,
            cpu_s: cpu,
            voluntary,
            blocked_s: 0.1 - cpu,
            ..Default::default()
        }
    }

    /// A job classified CS while blocking that then spins (it waits by its
    /// class): with `adaptive_waiting` its window restarts at the change and
    /// it stays CS; without, the window mixing both shows few switches for
    /// much CPU and it becomes DC.
    #[test]
    fn adaptive_waiting_forgets_the_periods_before_a_class_change() {
        for adaptive in [false, true] {
            let cfg = FcsConfig {
                adaptive_waiting: adaptive,
                ..FcsConfig::default()
            };
            let mut f = Fcs::new(1, cfg).unwrap();
            let mut classes = Vec::new();
            for k in 0..40 {
                // 20 barriers per 50 ms while blocking: CS; then it spins.
                let p = proc_period(if k < 4 { 20 } else { 0 });
                if let Some(c) = f.observe(0, &p) {
                    classes.push(c);
                }
            }
            assert_eq!(classes[0], CoschedClass::RequiresCoscheduling);
            let flapped = classes.contains(&CoschedClass::DoesNotCare);
            assert_eq!(flapped, !adaptive, "adaptive {adaptive}: {classes:?}");
            assert_eq!(f.class(0), Some(CoschedClass::RequiresCoscheduling));
        }
    }

    fn table1(f_rows: FRows) -> Fcs {
        let mut f = Fcs::new(
            3,
            FcsConfig {
                f_rows,
                ..FcsConfig::default()
            },
        )
        .unwrap();
        // discovery: every job its own row, coscheduled
        assert_eq!(f.rows().len(), 3);
        for _ in 0..10 {
            f.observe(0, &obs(0.05, 200, 0.00075, 0.00025));
            f.observe(1, &obs(0.05, 200, 0.00075, 0.00025));
            f.observe(2, &obs(0.05, 200, 0.0005, 0.00001));
        }
        f
    }

    /// Job 0 DC (released), job 1 CS, with the DC share on.
    fn dc_and_cs(share: f64) -> Fcs {
        let mut f = Fcs::new(
            2,
            FcsConfig {
                dc_min_share: share,
                dc_min_wanted_s: 0.01,
                ..FcsConfig::default()
            },
        )
        .unwrap();
        for _ in 0..10 {
            f.observe(0, &coarse());
            f.observe(1, &fine_cs());
        }
        assert_eq!(f.class(0), Some(CoschedClass::DoesNotCare));
        assert_eq!(f.class(1), Some(CoschedClass::RequiresCoscheduling));
        f
    }

    #[test]
    fn seed_002_classes_and_rows() {
        let f = table1(FRows::Shared);
        assert_eq!(f.class(0), Some(CoschedClass::PrefersCoscheduling));
        assert_eq!(f.class(1), Some(CoschedClass::PrefersCoscheduling));
        assert_eq!(f.class(2), Some(CoschedClass::RequiresCoscheduling));
        assert_eq!(f.rows(), &[vec![2], vec![0, 1]]);
        assert!(f.busy_waits(2) && !f.busy_waits(0));
        assert!(f.pinned(2) && !f.pinned(0) && !f.pinned(1));
        assert!((0..3).all(|j| f.in_matrix(j) && !f.released(j)));
        let g = table1(FRows::Own);
        assert_eq!(g.rows(), &[vec![0], vec![1], vec![2]]);
    }

    #[test]
    fn rows_as_gangs_and_their_owners() {
        let f = table1(FRows::Shared);
        assert_eq!(
            f.row_gangs(&[4, 2, 3]),
            vec![(GangId(2), 3), (GangId(0), 4)]
        );
        assert_eq!(f.owners(&[GangId(0)]), vec![0, 1]);
        assert_eq!(f.owners(&[GangId(2), GangId(0)]), vec![2, 0, 1]);
        assert_eq!(f.owners(&[GangId(1)]), Vec::<u32>::new());
        assert_eq!(f.role_in_slot(1, &[0, 1]), Role::Row);
        assert_eq!(f.role_in_slot(2, &[0, 1]), Role::Parked);
        assert_eq!(f.role_in_slot(0, &[2]), Role::Fill { idle: false });
        let g = table1(FRows::Own);
        let own: Vec<GangId> = g.row_gangs(&[4, 4, 4]).iter().map(|x| x.0).collect();
        assert_eq!(own, vec![GangId(0), GangId(1), GangId(2)]);
        // in a DC slot the slot's owners do not matter
        let mut d = dc_and_cs(0.25);
        let starving = [Some(Usage {
            got_s: 0.0,
            wanted_s: 0.05,
        })];
        d.advance(0.05, &starving);
        assert_eq!(d.advance(0.05, &starving), Slot::Dc);
        assert_eq!(d.role_in_slot(1, &[1]), Role::Parked);
        assert_eq!(d.role_in_slot(0, &[1]), Role::Row);
    }

    #[test]
    fn roles_follow_the_slot() {
        let mut f = table1(FRows::Shared);
        let cur = f.current_row().unwrap().to_vec();
        for j in 0..3 {
            let expect = if cur.contains(&(j as u32)) {
                Role::Row
            } else if f.class(j) == Some(CoschedClass::PrefersCoscheduling) {
                Role::Fill { idle: false }
            } else {
                Role::Parked
            };
            assert_eq!(f.role(j), expect, "job {j}");
        }
        assert!(matches!(f.advance(0.05, &[]), Slot::Row(_)));
        assert_ne!(f.current_row().unwrap(), cur.as_slice());
        // the CS job never fills
        if f.role(2) != Role::Row {
            assert_eq!(f.role(2), Role::Parked);
        }
    }

    #[test]
    fn fill_in_f_slots_only_and_at_idle_priority() {
        let mut f = table1(FRows::Own);
        f.cfg.fill_in = FillIn::FSlots;
        f.cfg.fill_priority = FillPriority::Idle;
        // In the CS job's slot the F jobs wait; in an F job's slot the other
        // F job fills at idle priority, and the CS job waits.
        assert_eq!(f.role_in(0, &[2]), Role::Parked);
        assert_eq!(f.role_in(1, &[2]), Role::Parked);
        assert_eq!(f.role_in(1, &[0]), Role::Fill { idle: true });
        assert_eq!(f.role_in(0, &[0]), Role::Row);
        assert_eq!(f.role_in(2, &[0]), Role::Parked);
        // a slot shared by an F and a CS job is no F slot
        assert_eq!(f.role_in(1, &[0, 2]), Role::Parked);
        f.cfg.fill = Fill::Dc;
        assert_eq!(f.role_in(1, &[0]), Role::Parked);
        f.cfg.fill = Fill::FDc;
        f.cfg.fill_in = FillIn::AnySlot;
        assert_eq!(f.role_in(1, &[2]), Role::Fill { idle: true });
    }

    #[test]
    fn discovery_fill_at_idle_priority() {
        let mut f = Fcs::new(
            3,
            FcsConfig {
                f_rows: FRows::Own,
                fill_in: FillIn::FSlots,
                ..FcsConfig::default()
            },
        )
        .unwrap();
        // off (default): a job in discovery runs alone in its slot
        assert_eq!(f.rows(), &[vec![0], vec![1], vec![2]]);
        assert_eq!(f.role_in(1, &[0]), Role::Parked);
        f.cfg.discovery_fill = true;
        assert_eq!(f.role_in(1, &[0]), Role::Fill { idle: true });
        assert_eq!(f.role_in(0, &[0]), Role::Row);
        // job 0 F, job 2 CS: F fills a discovery slot at idle priority, the
        // discovering job fills the F slot at idle priority, nobody fills
        // the CS slot, and the CS job never fills
        for _ in 0..10 {
            f.observe(0, &obs(0.05, 200, 0.00075, 0.00025));
            f.observe(2, &fine_cs());
        }
        assert_eq!(f.class(0), Some(CoschedClass::PrefersCoscheduling));
        assert_eq!(f.role_in(0, &[1]), Role::Fill { idle: true });
        assert_eq!(f.role_in(1, &[0]), Role::Fill { idle: true });
        assert_eq!(f.role_in(1, &[2]), Role::Parked);
        assert_eq!(f.role_in(0, &[2]), Role::Parked);
        assert_eq!(f.role_in(2, &[0]), Role::Parked);
        assert_eq!(f.role_in(2, &[1]), Role::Parked);
    }

    #[test]
    fn a_dc_job_is_released_and_fills_and_a_finished_job_leaves() {
        let mut f = dc_and_cs(0.0);
        assert_eq!(f.rows(), &[vec![1]]);
        assert!(!f.in_matrix(0) && f.released(0));
        assert!(f.in_matrix(1) && !f.released(1));
        assert!(!f.pinned(0));
        assert_eq!(f.role(0), Role::Released);
        assert_eq!(f.role(1), Role::Row);
        assert!(f.role(0).observed() && f.role(0).fills());
        f.finished(1);
        assert_eq!(f.role(0), Role::Row, "alone, the DC job runs as the row");
        assert_eq!(f.role(1), Role::Parked);
        f.finished(0);
        assert!(!f.released(0) && !f.in_matrix(0));
    }

    #[test]
    fn a_released_job_that_starts_to_synchronize_is_taken_back() {
        let mut f = dc_and_cs(0.0);
        let mut changes = Vec::new();
        for _ in 0..40 {
            changes.extend(f.observe(0, &fine_cs()));
        }
        assert_eq!(changes, vec![CoschedClass::RequiresCoscheduling]);
        assert_eq!(f.class(0), Some(CoschedClass::RequiresCoscheduling));
        assert!(f.in_matrix(0) && !f.released(0));
        assert_eq!(f.rows(), &[vec![0], vec![1]]);
        assert_ne!(f.role(0), Role::Released);
    }

    #[test]
    fn a_fixed_class_is_not_revised() {
        let mut f = Fcs::new(2, FcsConfig::default()).unwrap();
        f.fix_class(0, CoschedClass::DoesNotCare);
        assert!(f.released(0));
        for _ in 0..40 {
            assert_eq!(f.observe(0, &fine_cs()), None);
        }
        assert_eq!(f.class(0), Some(CoschedClass::DoesNotCare));
        assert_eq!(f.rows(), &[vec![1]]);
    }

    #[test]
    fn a_starving_released_job_gets_a_dc_slot() {
        let mut f = dc_and_cs(0.25);
        let starving = [
            Some(Usage {
                got_s: 0.0,
                wanted_s: 0.05,
            }),
            None,
        ];
        // the slot it was released in is not accounted to it
        assert_eq!(f.advance(0.05, &starving), Slot::Row(0));
        assert_eq!(f.advance(0.05, &starving), Slot::Dc);
        assert!(f.in_dc_slot() && f.current_row().is_none());
        assert_eq!(f.role(0), Role::Row, "the released job runs alone");
        assert_eq!(f.role(1), Role::Parked, "every row waits");
        // never two DC slots in a row
        assert_eq!(f.advance(0.05, &starving), Slot::Row(0));
        assert_eq!(f.role(1), Role::Row);
        assert_eq!(f.role(0), Role::Released);
        assert_eq!(f.dc_slots(), 1);
    }

    #[test]
    fn a_released_job_that_gets_its_share_gets_no_dc_slot() {
        let mut f = dc_and_cs(0.25);
        let fed = [
            Some(Usage {
                got_s: 0.02,
                wanted_s: 0.05,
            }),
            None,
        ];
        for _ in 0..50 {
            assert_eq!(f.advance(0.05, &fed), Slot::Row(0));
        }
        // below the minimum wanted nothing is owed either
        let mut g = dc_and_cs(0.25);
        let little = [Some(Usage {
            got_s: 0.0,
            wanted_s: 0.001,
        })];
        assert_eq!(g.advance(0.05, &little), Slot::Row(0));
        // off: never
        let mut h = dc_and_cs(0.0);
        let starving = [Some(Usage {
            got_s: 0.0,
            wanted_s: 1.0,
        })];
        assert_eq!(h.advance(0.05, &starving), Slot::Row(0));
    }

    #[test]
    fn dc_slots_take_at_most_their_share_and_never_two_in_a_row() {
        for share in [0.05, 0.1, 0.25, 0.5, 1.0] {
            let mut f = dc_and_cs(share);
            let starving = [Some(Usage {
                got_s: 0.0,
                wanted_s: 0.05,
            })];
            let mut slots = Vec::new();
            for _ in 0..400 {
                slots.push(f.advance(0.05, &starving));
            }
            assert!(
                slots
                    .windows(2)
                    .all(|w| !(w[0] == Slot::Dc && w[1] == Slot::Dc)),
                "share {share}"
            );
            let dc = slots.iter().filter(|s| **s == Slot::Dc).count() as f64;
            let frac = dc / slots.len() as f64;
            // at most the share (plus one slot), and about it while owed
            assert!(frac <= share + 1.0 / 400.0, "share {share}: {frac}");
            assert!(frac >= share.min(0.5) - 0.02, "share {share}: {frac}");
            assert_eq!(f.dc_slots(), dc as u64);
        }
    }

    #[test]
    fn replay_reproduces_the_decisions() {
        let cfg = FcsConfig {
            dc_min_share: 0.25,
            dc_min_wanted_s: 0.01,
            ..FcsConfig::default()
        };
        let mut f = Fcs::new(3, cfg).unwrap();
        f.record();
        f.fix_class(2, CoschedClass::RequiresCoscheduling);
        for k in 0..60 {
            let o = if k < 30 { coarse() } else { fine_cs() };
            f.observe(0, &o);
            f.observe(1, &obs(0.05, 200, 0.00075, 0.00025));
            f.advance(
                0.05,
                &[Some(Usage {
                    got_s: 0.0,
                    wanted_s: 0.05,
                })],
            );
        }
        f.finished(1);
        let log = f.log().to_vec();
        assert!(log
            .iter()
            .any(|s| matches!(s, Step::Advance { slot: Slot::Dc, .. })));
        assert!(log.iter().any(|s| matches!(
            s,
            Step::Observe {
                change: Some(CoschedClass::RequiresCoscheduling),
                job: 0,
                ..
            }
        )));
        assert_eq!(Fcs::replay(3, cfg, &log).unwrap(), log);
        // a different configuration decides differently
        let other = FcsConfig {
            dc_min_share: 0.0,
            ..cfg
        };
        assert_ne!(Fcs::replay(3, other, &log).unwrap(), log);
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        /// One input: an observation of a job (coarse: DC, fine and
        /// balanced: CS, fine and imbalanced: F), a slot's end (with a
        /// released job starving or fed), or a job finishing.
        #[derive(Debug, Clone)]
        enum Input {
            Observe(usize, u8),
            Advance(bool),
            Finish(usize),
        }

        fn input(jobs: usize) -> impl Strategy<Value = Input> {
            prop_oneof![
                6 => (0..jobs, 0u8..3).prop_map(|(j, k)| Input::Observe(j, k)),
                3 => any::<bool>().prop_map(Input::Advance),
                1 => (0..jobs).prop_map(Input::Finish),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

            /// Whatever the machine feeds it: never two DC slots in a row;
            /// a job is in the matrix exactly when live and not released,
            /// and then in exactly one row; a CS or unclassified job runs
            /// only as its own row (never fills); released jobs never hold
            /// a row; in a DC slot only released jobs run; the log replays.
            #[test]
            fn decisions_stay_consistent(
                jobs in 1usize..5,
                inputs in prop::collection::vec(input(4), 1..300),
                own in any::<bool>(),
                f_slots in any::<bool>(),
                share in prop::sample::select(vec![0.0, 0.1, 0.5]),
                discovery_fill in any::<bool>(),
            ) {
                let cfg = FcsConfig {
                    f_rows: if own { FRows::Own } else { FRows::Shared },
                    fill_in: if f_slots { FillIn::FSlots } else { FillIn::AnySlot },
                    dc_min_share: share,
                    dc_min_wanted_s: 0.01,
                    discovery_fill,
                    ..FcsConfig::default()
                };
                let mut f = Fcs::new(jobs, cfg).unwrap();
                f.record();
                let mut last = None;
                for inp in inputs {
                    match inp {
                        Input::Observe(j, k) => {
                            let j = j % jobs;
                            let o = match k {
                                0 => coarse(),
                                1 => fine_cs(),
                                _ => obs(0.05, 200, 0.00075, 0.00025),
                            };
                            f.observe(j, &o);
                        }
                        Input::Advance(starving) => {
                            let u = Usage {
                                got_s: if starving { 0.0 } else { 0.05 },
                                wanted_s: 0.05,
                            };
                            let s = f.advance(0.05, &vec![Some(u); jobs]);
                            prop_assert!(!(last == Some(Slot::Dc) && s == Slot::Dc));
                            last = Some(s);
                        }
                        Input::Finish(j) => f.finished(j % jobs),
                    }
                    for j in 0..jobs {
                        let rows = f.rows().iter().filter(|r| r.contains(&(j as u32))).count();
                        prop_assert_eq!(f.in_matrix(j), rows == 1);
                        prop_assert!(rows <= 1);
                        prop_assert!(!(f.in_matrix(j) && f.released(j)));
                        let role = f.role(j);
                        if f.in_dc_slot() {
                            prop_assert_eq!(role == Role::Row, f.released(j));
                        }
                        let cs = f.class(j) == Some(CoschedClass::RequiresCoscheduling);
                        let discovering = f.class(j).is_none() && f.in_matrix(j);
                        if cs || (discovering && !discovery_fill) {
                            prop_assert!(!role.fills(), "job {} {:?}", j, role);
                        }
                        if discovering && role.fills() {
                            prop_assert_eq!(role, Role::Fill { idle: true });
                        }
                        if f.released(j) {
                            prop_assert!(matches!(role, Role::Released | Role::Row));
                        }
                    }
                }
                prop_assert_eq!(Fcs::replay(jobs, cfg, f.log()).unwrap(), f.log().to_vec());
            }
        }
    }

    #[test]
    fn config_is_checked() {
        let mut c = FcsConfig {
            dc_min_share: 1.5,
            ..FcsConfig::default()
        };
        assert_eq!(c.validate().unwrap_err().field, "dc_min_share");
        c.dc_min_share = 0.1;
        c.dc_min_wanted_s = f64::NAN;
        assert_eq!(c.validate().unwrap_err().field, "dc_min_wanted_s");
    }
}
