//! Flexible coscheduling (FCS): gang slots for the jobs that need them, the
//! others fill in.
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
//! This policy owns the classes (one [`ClassTracker`] per job, fed by the
//! machine once per slot the job held) and the rows of the matrix; the
//! machine applies them:
//!
//! * **Rows.** A job not yet classified, and every CS job, has a row of its
//!   own (it is discovered, and kept, coscheduled). F jobs share one row
//!   ([`FRows::Shared`], the default) or have one each ([`FRows::Own`]). DC
//!   jobs have no row. Rows take turns, one slot each, in order.
//! * **Roles** ([`Fcs::role`]) in the current slot: the row's jobs run
//!   ([`Role::Row`]: the local scheduler shares the processors among them);
//!   fillers ([`Role::Fill`]: DC jobs, and with [`Fill::FDc`] the F jobs of
//!   other rows) run only on processors the row leaves idle and give way as
//!   soon as a row process is ready; the others wait for their row
//!   ([`Role::Parked`]). A CS job therefore never shares its slot with
//!   anyone while it has a ready process.
//! * **Waiting** ([`Fcs::busy_waits`]): a job in discovery or CS busy-waits
//!   (coscheduled, its partners answer within microseconds); F and DC jobs
//!   spin-block, so a stalled F process leaves its processor to others.
//!
//! Open choices of the paper (slot length, thresholds, discovery period,
//! spin time, how idle processors are filled) are named options here or in
//! [`ClassifierConfig`]; the machine's slot is its own key.

use super::classify::{ClassTracker, Classifier, ClassifierConfig, CoschedClass, Observation};
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

/// FCS's options.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct FcsConfig {
    /// The classifier's thresholds, discovery period and revision window.
    pub classifier: ClassifierConfig,
    pub f_rows: FRows,
    pub fill: Fill,
}

impl FcsConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.classifier.validate()
    }
}

/// What a job does in the current slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Its row holds the slot: it runs.
    Row,
    /// It may run on processors the row leaves idle.
    Fill,
    /// It waits for its row.
    Parked,
}

/// FCS over `n` jobs (see the module documentation).
#[derive(Debug, Clone)]
pub struct Fcs {
    cfg: FcsConfig,
    trackers: Vec<ClassTracker>,
    live: Vec<bool>,
    rows: Vec<Vec<u32>>,
    /// The row holding the slot (an index into `rows`).
    current: usize,
    /// `row_of[j]`: the row job j belongs to, if any.
    row_of: Vec<Option<usize>>,
}

impl Fcs {
    pub fn new(jobs: usize, cfg: FcsConfig) -> Result<Fcs, ConfigError> {
        cfg.validate()?;
        let classifier = Classifier::new(cfg.classifier)?;
        let mut f = Fcs {
            cfg,
            trackers: vec![ClassTracker::new(classifier); jobs],
            live: vec![true; jobs],
            rows: Vec::new(),
            current: 0,
            row_of: vec![None; jobs],
        };
        f.rebuild();
        Ok(f)
    }

    pub fn config(&self) -> &FcsConfig {
        &self.cfg
    }

    /// Job `j`'s class (`None` during discovery).
    pub fn class(&self, j: usize) -> Option<CoschedClass> {
        self.trackers[j].class()
    }

    /// Job `j`'s classes over its observed time.
    pub fn history(&self, j: usize) -> &[(f64, CoschedClass)] {
        self.trackers[j].history()
    }

    /// The rows of the matrix (job indices), in turn order.
    pub fn rows(&self) -> &[Vec<u32>] {
        &self.rows
    }

    /// The row holding the slot.
    pub fn current_row(&self) -> Option<&[u32]> {
        self.rows.get(self.current).map(|r| r.as_slice())
    }

    fn rebuild(&mut self) {
        let keep = self.current_row().map(|r| r.to_vec());
        self.rows.clear();
        let mut shared_f: Vec<u32> = Vec::new();
        for j in 0..self.trackers.len() {
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

    /// Job `j`'s role in the current slot.
    pub fn role(&self, j: usize) -> Role {
        if !self.live[j] {
            return Role::Parked;
        }
        match self.row_of[j] {
            Some(r) if r == self.current => Role::Row,
            Some(_) => match (self.class(j), self.cfg.fill) {
                (Some(CoschedClass::PrefersCoscheduling), Fill::FDc) => Role::Fill,
                _ => Role::Parked,
            },
            // DC (no row): fills, or runs as the row when there is none.
            None if self.rows.is_empty() => Role::Row,
            None => Role::Fill,
        }
    }

    /// Whether job `j` busy-waits (discovery and CS) rather than
    /// spin-blocking (F and DC).
    pub fn busy_waits(&self, j: usize) -> bool {
        matches!(
            self.class(j),
            None | Some(CoschedClass::RequiresCoscheduling)
        )
    }

    /// Feeds job `j`'s observation over a slot it held; returns its new
    /// class when it changed (the rows are rebuilt then).
    pub fn observe(&mut self, j: usize, period: &Observation) -> Option<CoschedClass> {
        let changed = self.trackers[j].observe(period);
        if changed.is_some() {
            self.rebuild();
        }
        changed
    }

    /// Job `j` finished.
    pub fn finished(&mut self, j: usize) {
        if self.live[j] {
            self.live[j] = false;
            self.rebuild();
        }
    }

    /// The slot ends: the next row takes it. Returns the new row's index.
    pub fn next_slot(&mut self) -> usize {
        if !self.rows.is_empty() {
            self.current = (self.current + 1) % self.rows.len();
        }
        self.current
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

    #[test]
    fn seed_002_classes_and_rows() {
        let f = table1(FRows::Shared);
        assert_eq!(f.class(0), Some(CoschedClass::PrefersCoscheduling));
        assert_eq!(f.class(1), Some(CoschedClass::PrefersCoscheduling));
        assert_eq!(f.class(2), Some(CoschedClass::RequiresCoscheduling));
        assert_eq!(f.rows(), &[vec![2], vec![0, 1]]);
        assert!(f.busy_waits(2) && !f.busy_waits(0));
        let g = table1(FRows::Own);
        assert_eq!(g.rows(), &[vec![0], vec![1], vec![2]]);
    }

    #[test]
    fn roles_follow_the_slot() {
        let mut f = table1(FRows::Shared);
        let cur = f.current_row().unwrap().to_vec();
        for j in 0..3 {
            let expect = if cur.contains(&(j as u32)) {
                Role::Row
            } else if f.class(j) == Some(CoschedClass::PrefersCoscheduling) {
                Role::Fill
            } else {
                Role::Parked
            };
            assert_eq!(f.role(j), expect, "job {j}");
        }
        f.next_slot();
        assert_ne!(f.current_row().unwrap(), cur.as_slice());
        // the CS job never fills
        if f.role(2) != Role::Row {
            assert_eq!(f.role(2), Role::Parked);
        }
    }

    #[test]
    fn a_dc_job_fills_and_a_finished_job_leaves() {
        let mut f = Fcs::new(2, FcsConfig::default()).unwrap();
        for _ in 0..10 {
            f.observe(0, &obs(0.05, 2, 0.02, 0.0)); // coarse: DC
            f.observe(1, &obs(0.05, 200, 0.0005, 0.00001)); // CS
        }
        assert_eq!(f.class(0), Some(CoschedClass::DoesNotCare));
        assert_eq!(f.rows(), &[vec![1]]);
        assert_eq!(f.role(0), Role::Fill);
        assert_eq!(f.role(1), Role::Row);
        f.finished(1);
        assert_eq!(f.role(0), Role::Row, "alone, the DC job runs as the row");
        assert_eq!(f.role(1), Role::Parked);
    }

    #[test]
    fn a_job_that_starts_to_synchronize_is_coscheduled_again() {
        let mut f = Fcs::new(2, FcsConfig::default()).unwrap();
        for _ in 0..10 {
            f.observe(0, &obs(0.05, 2, 0.02, 0.0));
            f.observe(1, &obs(0.05, 200, 0.0005, 0.00001));
        }
        assert_eq!(f.class(0), Some(CoschedClass::DoesNotCare));
        for _ in 0..40 {
            f.observe(0, &obs(0.05, 200, 0.0005, 0.00001));
        }
        assert_eq!(f.class(0), Some(CoschedClass::RequiresCoscheduling));
        assert_eq!(f.rows().len(), 2);
    }
}
