//! Which slot of Ousterhout's matrix a gang is admitted into — the slot
//! choice of J. K. Ousterhout, "Scheduling techniques for concurrent
//! systems", ICDCS 1982, as used by Feitelson & Rudolph, "Gang scheduling
//! performance benefits for fine-grain synchronization", JPDC 1992 (seed 001,
//! section 3.2: "tasks belonging to a single gang are mapped to entries in the
//! same slot").
//!
//! [`SlotChooser`] is that one decision as a policy: it sees a [`SlotView`]
//! (the job at the head of the admission scan and, per existing slot, its
//! free cells and its jobs) and answers a slot index — an existing slot with
//! room, or `slots` to open a new one while fewer than the multiprogramming
//! level exist — or `None` (do not admit it now). The core checks every
//! answer ([`check_slot`]) before [`GangScheduler::admit_waiting_with`]
//! applies it: a chooser never touches the matrix. [`FirstFit`] is the
//! matrix's own default rule as a chooser; a rule written in Python
//! (`parsched.simulate_batch(..., gang_place=f)`) is just another one.

use crate::error::PolicyError;
use crate::policy::gang::{Allocation, GangId, SlotId};
use crate::policy::gang_sched::GangScheduler;

/// What the admission pass knows of a job beyond its gang: for the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SlotJob {
    /// The job's id (as the workload names it: errors name it).
    pub id: i64,
    /// Its requested time.
    pub requested: u64,
    /// Its submit time.
    pub submit: u64,
}

/// One admission attempt as a [`SlotChooser`] sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotView<'a> {
    pub now: u64,
    pub job: SlotJob,
    /// The job's width (cells it needs in one slot).
    pub procs: u32,
    /// Per existing slot: its free cells.
    pub slot_free: &'a [u32],
    /// Per existing slot: the jobs (gangs) in it.
    pub slot_jobs: &'a [u32],
    /// The multiprogramming level: at most this many slots (`u32::MAX`:
    /// unbounded).
    pub mpl: u32,
}

impl SlotView<'_> {
    /// The number of existing slots (`slots` itself is "a new slot").
    pub fn slots(&self) -> usize {
        self.slot_free.len()
    }
}

/// The slot choice of gang admission, once per admission attempt. `Ok(None)`:
/// do not admit the job now. An `Err` is the policy's own failure (it
/// raised, or answered something that is not a slot index), reported with
/// the job's id.
pub trait SlotChooser {
    fn choose(&mut self, view: &SlotView) -> Result<Option<usize>, String>;
}

/// The matrix's default rule: the lowest-numbered slot with room, else a new
/// slot if the multiprogramming level allows (equal to the matrix's
/// [`SlotAllocation::FirstFit`](crate::policy::gang::SlotAllocation) with
/// [`ProcChoice::Lowest`](crate::policy::gang::ProcChoice)).
#[derive(Debug, Clone, Copy, Default)]
pub struct FirstFit;

impl SlotChooser for FirstFit {
    fn choose(&mut self, v: &SlotView) -> Result<Option<usize>, String> {
        if let Some(s) = v.slot_free.iter().position(|&f| f >= v.procs) {
            return Ok(Some(s));
        }
        Ok(((v.slots() as u64) < v.mpl as u64).then_some(v.slots()))
    }
}

/// The core's check of a chooser's answer `slot` for `view`'s job: an
/// existing slot with room (`fits`: the matrix's own test, which may be
/// stricter than free cells, e.g. contiguous processors), or a new slot
/// (`slot == slots`) below the multiprogramming level. The error is one line
/// naming the job.
pub fn check_slot(
    view: &SlotView,
    slot: usize,
    fits: impl Fn(usize) -> bool,
) -> Result<SlotId, PolicyError> {
    check_slot_for(view, slot, fits, "job", &view.job.id.to_string())
}

/// [`check_slot`] for a caller whose views are of other things than jobs:
/// the error names `{noun} {name}` (e.g. the barrier machine's "gang 1
/// (measured)") instead of "job {id}".
pub fn check_slot_for(
    view: &SlotView,
    slot: usize,
    fits: impl Fn(usize) -> bool,
    noun: &str,
    name: &str,
) -> Result<SlotId, PolicyError> {
    let (n, w) = (view.slots(), view.procs);
    let fail = |what: String| Err(PolicyError(format!("gang_place for {noun} {name}: {what}")));
    if slot > n {
        return fail(format!(
            "slot {slot} is out of range; allowed: 0..{n} (an existing slot) or {n} (a new slot)"
        ));
    }
    if slot == n {
        if n as u64 >= view.mpl as u64 {
            return fail(format!(
                "a new slot ({slot}) is beyond mpl = {}; allowed: an existing slot with room",
                view.mpl
            ));
        }
        return Ok(SlotId(slot as u32));
    }
    if view.slot_free[slot] < w || !fits(slot) {
        return fail(format!(
            "slot {slot} has no room ({} free cells, the {noun} needs {w})",
            view.slot_free[slot]
        ));
    }
    Ok(SlotId(slot as u32))
}

impl GangScheduler {
    /// [`GangScheduler::admit_waiting`] with the slot of each admitted gang
    /// chosen by `chooser` (checked by [`check_slot`]) instead of the
    /// matrix's rule. The scan is the same: queued gangs in order while some
    /// slot has room; a gang wider than any room is not asked about (as if
    /// the chooser said `None`); `None` stops the pass, or with `backfill`
    /// skips the gang. `job(g)` tells the view about gang `g`. Returns the
    /// gangs placed, in the order placed.
    pub fn admit_waiting_with(
        &mut self,
        backfill: bool,
        now: u64,
        job: impl Fn(GangId) -> SlotJob,
        chooser: &mut dyn SlotChooser,
    ) -> Result<Vec<(GangId, Allocation)>, PolicyError> {
        let mut placed = Vec::new();
        let (mut free, mut jobs) = (Vec::new(), Vec::new());
        let mut room = self.room();
        let mut k = 0;
        while k < self.waiting_len() && room > 0 {
            let (gang, width) = self.waiting_at(k);
            let mut slot = None;
            if width <= room {
                let m = self.matrix();
                free.clear();
                jobs.clear();
                for s in 0..m.num_slots() {
                    free.push(m.free_cells(SlotId(s)));
                    jobs.push(m.gangs_of(SlotId(s)).len() as u32);
                }
                let view = SlotView {
                    now,
                    job: job(gang),
                    procs: width,
                    slot_free: &free,
                    slot_jobs: &jobs,
                    mpl: m.max_slots().unwrap_or(u32::MAX),
                };
                let id = view.job.id;
                let answer = chooser
                    .choose(&view)
                    .map_err(|e| PolicyError(format!("gang_place for job {id}: {e}")))?;
                if let Some(s) = answer {
                    let s = check_slot(&view, s, |s| m.fits_in(SlotId(s as u32), width))?;
                    slot = Some(s);
                }
            }
            match slot {
                Some(s) => {
                    let a = self.place_waiting(k, s)?;
                    placed.push((gang, a));
                    room = self.room();
                }
                None if backfill => k += 1,
                None => break,
            }
        }
        Ok(placed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::gang::GangMatrix;
    use crate::policy::gang_sched::GangSchedOptions;
    use proptest::prelude::*;

    fn sched(procs: u32, mpl: u32) -> GangScheduler {
        GangScheduler::new(
            GangMatrix::new(procs, Some(mpl)).unwrap(),
            GangSchedOptions::default(),
        )
    }

    fn job(g: GangId) -> SlotJob {
        SlotJob {
            id: 100 + g.0 as i64,
            ..SlotJob::default()
        }
    }

    /// The last slot with room, else a new one.
    struct LastFit;
    impl SlotChooser for LastFit {
        fn choose(&mut self, v: &SlotView) -> Result<Option<usize>, String> {
            if let Some(s) = v.slot_free.iter().rposition(|&f| f >= v.procs) {
                return Ok(Some(s));
            }
            Ok(((v.slots() as u64) < v.mpl as u64).then_some(v.slots()))
        }
    }

    struct Fixed(Option<usize>);
    impl SlotChooser for Fixed {
        fn choose(&mut self, _: &SlotView) -> Result<Option<usize>, String> {
            Ok(self.0)
        }
    }

    #[test]
    fn last_fit_differs_from_first_fit() {
        // P = 4, mpl 3: gangs of 3, 3, then 1: first fit puts the 1 in
        // slot 0, last fit in slot 1.
        for (rule, want) in [
            (&mut FirstFit as &mut dyn SlotChooser, 0),
            (&mut LastFit, 1),
        ] {
            let mut s = sched(4, 3);
            for (g, w) in [(0, 3), (1, 3), (2, 1)] {
                s.enqueue(GangId(g), w).unwrap();
            }
            let placed = s.admit_waiting_with(false, 0, job, rule).unwrap();
            assert_eq!(placed.len(), 3);
            assert_eq!(s.matrix().slot_of(GangId(2)), Some(SlotId(want)));
        }
    }

    #[test]
    fn bad_answers_are_errors_naming_the_job() {
        let mut s = sched(4, 2);
        s.enqueue(GangId(0), 3).unwrap();
        s.admit_waiting_with(false, 0, job, &mut FirstFit).unwrap();
        s.enqueue(GangId(1), 2).unwrap();
        let err = |s: &mut GangScheduler, a| {
            s.clone()
                .admit_waiting_with(false, 0, job, &mut Fixed(Some(a)))
                .unwrap_err()
                .0
        };
        let e = err(&mut s, 5);
        assert!(
            e.starts_with("gang_place for job 101: slot 5 is out of range"),
            "{e}"
        );
        let e = err(&mut s, 0);
        assert!(
            e.contains("slot 0 has no room (1 free cells, the job needs 2)"),
            "{e}"
        );
        let mut full = sched(4, 1);
        full.enqueue(GangId(0), 1).unwrap();
        full.admit_waiting_with(false, 0, job, &mut FirstFit)
            .unwrap();
        full.enqueue(GangId(1), 2).unwrap();
        let e = err(&mut full, 1);
        assert!(e.contains("a new slot (1) is beyond mpl = 1"), "{e}");
        // None: not admitted; the queue is unchanged.
        let placed = s
            .admit_waiting_with(true, 0, job, &mut Fixed(None))
            .unwrap();
        assert!(placed.is_empty());
        assert_eq!(s.waiting().len(), 1);
        struct Raises;
        impl SlotChooser for Raises {
            fn choose(&mut self, _: &SlotView) -> Result<Option<usize>, String> {
                Err("returned 'x' (str); allowed: an int or None".into())
            }
        }
        let e = s
            .admit_waiting_with(false, 0, job, &mut Raises)
            .unwrap_err()
            .0;
        assert_eq!(
            e,
            "gang_place for job 101: returned 'x' (str); allowed: an int or None"
        );
    }

    proptest! {
        /// The first-fit chooser is the matrix's default rule: the same
        /// gangs in the same slots on the same processors, with and without
        /// backfilling, under random arrivals and ends.
        #[test]
        fn first_fit_chooser_is_the_matrix_rule(
            p in 1u32..=6,
            mpl in 1u32..=3,
            ops in proptest::collection::vec((0u32..=6, any::<bool>()), 1..60),
            backfill in any::<bool>(),
        ) {
            let (mut a, mut b) = (sched(p, mpl), sched(p, mpl));
            let mut next = 0u64;
            for (w, finish) in ops {
                if finish {
                    let first = a.matrix().gangs().next().map(|(g, _)| g);
                    if let Some(g) = first {
                        a.finish(g).unwrap();
                        b.finish(g).unwrap();
                    }
                } else {
                    let w = w.clamp(1, p);
                    a.enqueue(GangId(next), w).unwrap();
                    b.enqueue(GangId(next), w).unwrap();
                    next += 1;
                }
                let pa = a.admit_waiting(backfill).unwrap();
                let pb = b.admit_waiting_with(backfill, 0, job, &mut FirstFit).unwrap();
                prop_assert_eq!(pa, pb);
                prop_assert_eq!(a.matrix(), b.matrix());
            }
        }
    }
}
