//! The gang-scheduling state machine over Ousterhout's matrix — Feitelson &
//! Rudolph, "Gang scheduling performance benefits for fine-grain
//! synchronization", JPDC 1992 (seed 001), section 3.2; alternate selection
//! after Ousterhout, "Scheduling techniques for concurrent systems", ICDCS 1982.
//!
//! [`GangScheduler`] owns the [`GangMatrix`] and the decisions every gang
//! scheduler makes, whatever world applies them:
//!
//! * **admission**: a gang is placed in the matrix, or queued (FIFO) when a
//!   bounded multiprogramming level leaves no room; queued gangs are admitted
//!   later ([`GangScheduler::admit_waiting`]), in order or with backfilling;
//! * **rotation**: round robin over the slots, skipping empty slots and slots
//!   none of whose gangs has work ([`GangScheduler::rotate`]);
//! * **early switch**: the running slot should end at once when none of its
//!   gangs has work left ([`GangScheduler::should_switch_early`]);
//! * **release**: a gang that ends frees exactly its cells
//!   ([`GangScheduler::finish`]);
//! * **alternate selection** (an option, off by default): processors left
//!   idle by the running slot run a thread of a gang from another slot
//!   ([`GangScheduler::running`]).
//!
//! It makes no decision about time (when a slot ends is the machine's quantum)
//! and touches nothing: the barrier simulator, the batch gang policy and the
//! Linux runtime's controller drive it and apply what it decides (dispatch
//! threads, freeze and thaw cgroups). "Has work" is the machine's view of a
//! gang (a runnable thread, a live process), passed in as a predicate.

use crate::policy::gang::{Allocation, GangId, GangMatrix, MatrixError, SlotId};
use crate::ProcId;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Options of the gang scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct GangSchedOptions {
    /// Alternate selection: a processor idle in the running slot (no cell, or
    /// its gang without work) runs the thread of a gang from another slot
    /// that has one on that processor, nearest following slot first. Such a
    /// thread runs alone, not coscheduled. Off by default (seed 001's library
    /// leaves idle cells idle; they are its fragmentation).
    pub alternates: bool,
}

/// What [`GangScheduler::admit`] did with a gang.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// Placed in the matrix.
    Placed(Allocation),
    /// No room under the multiprogramming level: queued (FIFO).
    Queued,
}

/// A rotation decided by [`GangScheduler::rotate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotChange {
    /// The slot that was running.
    pub from: Option<SlotId>,
    /// The slot that runs now (`None`: no gang has work).
    pub to: Option<SlotId>,
}

impl SlotChange {
    /// The same slot goes on (it is the only one with work): no switch.
    pub fn is_same(&self) -> bool {
        self.from == self.to
    }

    /// A slot runs now that was not running before (the first slot, or a
    /// switch to another one).
    pub fn starts_slot(&self) -> bool {
        self.to.is_some() && self.from != self.to
    }

    /// A switch from one slot to another (not the first start, not idling).
    pub fn is_switch(&self) -> bool {
        self.from.is_some() && self.to.is_some() && self.from != self.to
    }
}

/// What runs on one processor now (see [`GangScheduler::running`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    /// The gang whose thread on this processor runs.
    pub gang: GangId,
    /// An alternate: the gang belongs to another slot and runs alone here.
    pub alternate: bool,
}

/// The gang-scheduling state machine (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct GangScheduler {
    matrix: GangMatrix,
    options: GangSchedOptions,
    current: Option<SlotId>,
    waiting: VecDeque<(GangId, u32)>,
}

impl GangScheduler {
    /// A scheduler over `matrix` (usually empty), no slot running yet.
    pub fn new(matrix: GangMatrix, options: GangSchedOptions) -> GangScheduler {
        GangScheduler {
            matrix,
            options,
            current: None,
            waiting: VecDeque::new(),
        }
    }

    /// The matrix decisions are taken on.
    pub fn matrix(&self) -> &GangMatrix {
        &self.matrix
    }

    pub fn options(&self) -> GangSchedOptions {
        self.options
    }

    /// The running slot.
    pub fn current(&self) -> Option<SlotId> {
        self.current
    }

    /// Gangs queued for admission, in order, with their widths.
    pub fn waiting(&self) -> impl ExactSizeIterator<Item = (GangId, u32)> + '_ {
        self.waiting.iter().copied()
    }

    /// The gangs of the running slot, ordered by lowest processor.
    pub fn gangs_in_current(&self) -> &[GangId] {
        match self.current {
            Some(s) => self.matrix.gangs_of(s),
            None => &[],
        }
    }

    /// Whether `gang` is in the running slot.
    #[inline]
    pub fn is_running(&self, gang: GangId) -> bool {
        self.current.is_some() && self.matrix.slot_of(gang) == self.current
    }

    /// Places `gang` with `width` threads at once if there is room (even
    /// ahead of queued gangs), or queues it. Errors: a width outside 1..=P, a
    /// gang already placed or queued.
    pub fn admit(&mut self, gang: GangId, width: u32) -> Result<Admission, MatrixError> {
        if self.waiting.iter().any(|(g, _)| *g == gang) {
            return Err(MatrixError::AlreadyQueued { gang });
        }
        match self.matrix.allocate(gang, width)? {
            Some(a) => Ok(Admission::Placed(a)),
            None => {
                self.waiting.push_back((gang, width));
                Ok(Admission::Queued)
            }
        }
    }

    /// Places `gang` with `width` threads in `slot`, chosen by the caller
    /// (e.g. a [`SlotChooser`](crate::policy::gang_place::SlotChooser)'s
    /// answer, checked): [`GangMatrix::allocate_in`], never queued.
    /// `Ok(None)`: no room there. Errors as for [`GangScheduler::admit`].
    pub fn admit_in(
        &mut self,
        gang: GangId,
        width: u32,
        slot: SlotId,
    ) -> Result<Option<Allocation>, MatrixError> {
        if self.waiting.iter().any(|(g, _)| *g == gang) {
            return Err(MatrixError::AlreadyQueued { gang });
        }
        self.matrix.allocate_in(gang, width, slot)
    }

    /// Queues `gang` behind the gangs already waiting, without trying to
    /// place it: a batch scheduler's arrival, admitted by the next
    /// [`GangScheduler::admit_waiting`] in queue order. Errors as for
    /// [`GangScheduler::admit`].
    pub fn enqueue(&mut self, gang: GangId, width: u32) -> Result<(), MatrixError> {
        if width == 0 || width > self.matrix.procs() {
            return Err(MatrixError::Width {
                width,
                procs: self.matrix.procs(),
            });
        }
        if let Some(a) = self.matrix.allocation(gang) {
            return Err(MatrixError::AlreadyPlaced { gang, slot: a.slot });
        }
        if self.waiting.iter().any(|(g, _)| *g == gang) {
            return Err(MatrixError::AlreadyQueued { gang });
        }
        self.waiting.push_back((gang, width));
        Ok(())
    }

    /// The most cells one gang could get now: the largest number of free
    /// cells in a slot, or P if the multiprogramming level allows a new slot.
    pub fn room(&self) -> u32 {
        let m = &self.matrix;
        if m.max_slots().is_none_or(|max| m.num_slots() < max) {
            return m.procs();
        }
        (0..m.num_slots())
            .map(|s| m.free_cells(SlotId(s)))
            .max()
            .unwrap_or(0)
    }

    /// Admits queued gangs in order. Without `backfill` the first gang that
    /// does not fit stops the pass (FCFS); with it, gangs that do not fit are
    /// skipped and later ones may go first. Returns the gangs placed, in the
    /// order placed; the others stay queued, in order.
    pub fn admit_waiting(
        &mut self,
        backfill: bool,
    ) -> Result<Vec<(GangId, Allocation)>, MatrixError> {
        let mut placed = Vec::new();
        let mut room = self.room();
        let mut k = 0;
        while k < self.waiting.len() && room > 0 {
            let (gang, width) = self.waiting[k];
            let fits = width <= room;
            let alloc = if fits {
                self.matrix.allocate(gang, width)?
            } else {
                None
            };
            match alloc {
                Some(a) => {
                    self.waiting.remove(k);
                    placed.push((gang, a));
                    room = self.room();
                }
                None if backfill => k += 1,
                None => break,
            }
        }
        Ok(placed)
    }

    /// How many gangs are queued.
    pub(crate) fn waiting_len(&self) -> usize {
        self.waiting.len()
    }

    /// The `k`-th queued gang and its width.
    pub(crate) fn waiting_at(&self, k: usize) -> (GangId, u32) {
        self.waiting[k]
    }

    /// Places the `k`-th queued gang in `slot` (a choice already checked)
    /// and takes it off the queue.
    pub(crate) fn place_waiting(
        &mut self,
        k: usize,
        slot: SlotId,
    ) -> Result<Allocation, crate::PolicyError> {
        let (gang, width) = self.waiting[k];
        match self.matrix.allocate_in(gang, width, slot)? {
            Some(a) => {
                self.waiting.remove(k);
                Ok(a)
            }
            None => Err(crate::PolicyError(format!("{gang} does not fit in {slot}"))),
        }
    }

    /// `gang` ended: its cells are freed (or it leaves the queue). Returns its
    /// allocation (`None` if it was queued). The running slot stays current
    /// even if it emptied; ask [`GangScheduler::should_switch_early`].
    pub fn finish(&mut self, gang: GangId) -> Result<Option<Allocation>, MatrixError> {
        if let Some(k) = self.waiting.iter().position(|(g, _)| *g == gang) {
            self.waiting.remove(k);
            return Ok(None);
        }
        let a = self.matrix.release(gang)?;
        Ok(Some(a))
    }

    /// Re-fits a placed gang to `width` threads (it may move to another slot).
    /// If there is no room at the new width it keeps its old cells. Returns
    /// whether the width changed.
    pub fn resize(&mut self, gang: GangId, width: u32) -> Result<bool, MatrixError> {
        let old = self
            .matrix
            .allocation(gang)
            .ok_or(MatrixError::UnknownGang { gang })?
            .clone();
        if old.width() == width {
            return Ok(false);
        }
        if width == 0 || width > self.matrix.procs() {
            return Err(MatrixError::Width {
                width,
                procs: self.matrix.procs(),
            });
        }
        self.matrix.release(gang)?;
        if self.matrix.allocate(gang, width)?.is_some() {
            return Ok(true);
        }
        let back = self.matrix.allocate(gang, old.width())?;
        debug_assert!(back.is_some(), "the old cells are free again");
        Ok(false)
    }

    /// Makes the placed gangs exactly `want` (gang, width), in order: a
    /// gang placed or queued that is not wanted, or wanted at another
    /// width, is finished first; then every wanted gang not placed is
    /// admitted (placed, or queued when the multiprogramming level leaves no
    /// room). The running slot stays current even if it emptied (ask
    /// [`GangScheduler::should_switch_early`]). A machine whose policy
    /// decides the matrix membership (FCS: `Fcs::row_gangs`) follows it so.
    pub fn sync(&mut self, want: &[(GangId, u32)]) -> Result<(), MatrixError> {
        let placed: Vec<(GangId, u32)> = self
            .matrix
            .gangs()
            .map(|(g, a)| (g, a.width()))
            .chain(self.waiting.iter().copied())
            .collect();
        for &(g, w) in &placed {
            if !want.contains(&(g, w)) {
                self.finish(g)?;
            }
        }
        for &(g, w) in want {
            if !placed.contains(&(g, w)) {
                self.admit(g, w)?;
            }
        }
        Ok(())
    }

    /// Round robin: the next slot after the running one (wrapping round to it
    /// last) with a gang that has work becomes current. Empty slots and slots
    /// without work are skipped; `to` is `None` if no gang has work.
    pub fn rotate(&mut self, has_work: impl FnMut(GangId) -> bool) -> SlotChange {
        let from = self.current;
        let to = self.matrix.next_slot(from, has_work);
        self.current = to;
        SlotChange { from, to }
    }

    /// The slot [`GangScheduler::rotate`] would make current now, without
    /// rotating (a machine that keeps a lone slot running without stopping
    /// it asks first).
    pub fn peek(&self, has_work: impl FnMut(GangId) -> bool) -> Option<SlotId> {
        self.matrix.next_slot(self.current, has_work)
    }

    /// Seed 001 §3.2's early switch: the running slot has no gang with work
    /// (every thread of it blocked or finished). `false` when no slot runs.
    pub fn should_switch_early(&self, mut has_work: impl FnMut(GangId) -> bool) -> bool {
        self.current.is_some() && !self.gangs_in_current().iter().any(|&g| has_work(g))
    }

    /// What runs on each processor now, into `out` (one entry per processor):
    /// the running slot's gang where it has a cell and work; else, with
    /// alternates on, the nearest following slot's gang with work on that
    /// processor; else `None`. A gang's threads are one per processor, so no
    /// thread is ever on two processors.
    pub fn running(&self, mut has_work: impl FnMut(GangId) -> bool, out: &mut Vec<Option<Cell>>) {
        out.clear();
        let Some(s) = self.current else {
            out.resize(self.matrix.procs() as usize, None);
            return;
        };
        for p in 0..self.matrix.procs() {
            let own = self.matrix.cell(s, ProcId(p)).filter(|&g| has_work(g));
            let cell = match own {
                Some(gang) => Some(Cell {
                    gang,
                    alternate: false,
                }),
                None if self.options.alternates => self
                    .matrix
                    .alternate_for(s, ProcId(p), &mut has_work)
                    .map(|gang| Cell {
                        gang,
                        alternate: true,
                    }),
                None => None,
            };
            out.push(cell);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::gang::{MatrixOptions, ProcChoice, SlotAllocation};
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    fn g(i: u64) -> GangId {
        GangId(i)
    }

    #[test]
    fn sync_follows_the_wanted_gangs() {
        let mut s = sched(4, None, false);
        s.sync(&[(g(0), 4), (g(1), 4), (g(2), 2)]).unwrap();
        assert_eq!(s.matrix().num_gangs(), 3);
        assert_eq!(s.matrix().slot_of(g(1)), Some(SlotId(1)));
        s.rotate(|_| true);
        s.rotate(|_| true);
        assert_eq!(s.current(), Some(SlotId(1)));
        // gang 1 leaves, gang 2 widens (re-admitted), gang 3 arrives: the
        // freed slot is reused first fit; the emptied running slot stays
        // current until asked
        s.sync(&[(g(0), 4), (g(2), 3), (g(3), 1)]).unwrap();
        let mut gangs: Vec<(GangId, u32)> =
            s.matrix().gangs().map(|(k, a)| (k, a.width())).collect();
        gangs.sort();
        assert_eq!(gangs, vec![(g(0), 4), (g(2), 3), (g(3), 1)]);
        assert_eq!(s.matrix().slot_of(g(2)), Some(SlotId(1)));
        assert_eq!(s.matrix().slot_of(g(3)), Some(SlotId(1)));
        assert_eq!(s.current(), Some(SlotId(1)));
        // the same set again changes nothing
        let before = s.clone();
        s.sync(&[(g(3), 1), (g(0), 4), (g(2), 3)]).unwrap();
        assert_eq!(s, before);
        s.sync(&[]).unwrap();
        assert_eq!(s.matrix().num_gangs(), 0);
        assert!(s.should_switch_early(|_| true));
    }

    fn sched(procs: u32, max_slots: Option<u32>, alternates: bool) -> GangScheduler {
        GangScheduler::new(
            GangMatrix::new(procs, max_slots).unwrap(),
            GangSchedOptions { alternates },
        )
    }

    #[test]
    fn admission_queues_when_full_and_admits_in_order_or_backfills() {
        let mut s = sched(4, Some(1), false);
        assert!(matches!(s.admit(g(0), 3), Ok(Admission::Placed(_))));
        assert_eq!(s.admit(g(1), 2), Ok(Admission::Queued));
        // admit places at once where there is room; enqueue waits its turn.
        s.enqueue(g(2), 1).unwrap();
        assert_eq!(
            s.admit(g(2), 1),
            Err(MatrixError::AlreadyQueued { gang: g(2) })
        );
        assert_eq!(
            s.enqueue(g(0), 1),
            Err(MatrixError::AlreadyPlaced {
                gang: g(0),
                slot: SlotId(0)
            })
        );
        assert!(s.enqueue(g(5), 5).is_err());
        assert_eq!(s.room(), 1);
        // FCFS: gang 1 (2 wide) blocks gang 2.
        assert!(s.admit_waiting(false).unwrap().is_empty());
        // Backfilling: gang 2 goes first.
        let placed = s.admit_waiting(true).unwrap();
        assert_eq!(placed.iter().map(|p| p.0).collect::<Vec<_>>(), vec![g(2)]);
        assert_eq!(s.waiting().collect::<Vec<_>>(), vec![(g(1), 2)]);
        s.finish(g(0)).unwrap();
        let placed = s.admit_waiting(false).unwrap();
        assert_eq!(placed.iter().map(|p| p.0).collect::<Vec<_>>(), vec![g(1)]);
        assert_eq!(s.waiting().len(), 0);
        // A queued gang that ends just leaves the queue.
        assert_eq!(s.admit(g(3), 4), Ok(Admission::Queued));
        assert_eq!(s.finish(g(3)), Ok(None));
        assert_eq!(s.waiting().len(), 0);
    }

    #[test]
    fn rotation_skips_slots_without_work_and_switches_early() {
        let mut s = sched(2, None, false);
        for i in 0..3 {
            s.admit(g(i), 2).unwrap();
        }
        let all = |_: GangId| true;
        let c = s.rotate(all);
        assert_eq!((c.from, c.to), (None, Some(SlotId(0))));
        assert!(c.starts_slot() && !c.is_switch());
        // Gang 1 has no work: slot 1 is skipped.
        let c = s.rotate(|x| x != g(1));
        assert_eq!(c.to, Some(SlotId(2)));
        assert!(c.is_switch());
        assert!(s.should_switch_early(|x| x != g(2)));
        assert!(!s.should_switch_early(all));
        // Only slot 2 has work: it goes on (peek tells so without rotating).
        assert_eq!(s.peek(|x| x == g(2)), Some(SlotId(2)));
        assert_eq!(s.peek(|_| true), Some(SlotId(0)));
        assert_eq!(s.current(), Some(SlotId(2)));
        let c = s.rotate(|x| x == g(2));
        assert!(c.is_same() && !c.starts_slot());
        let c = s.rotate(|_| false);
        assert_eq!(c.to, None);
        assert!(!s.should_switch_early(all));
    }

    #[test]
    fn resize_moves_or_keeps() {
        let mut s = sched(4, Some(1), false);
        s.admit(g(0), 4).unwrap();
        assert_eq!(s.resize(g(0), 2), Ok(true));
        assert_eq!(s.matrix().allocation(g(0)).unwrap().width(), 2);
        s.admit(g(1), 2).unwrap();
        // No room for 3 in the single slot: keeps its 2 cells.
        assert_eq!(s.resize(g(0), 3), Ok(false));
        assert_eq!(s.matrix().allocation(g(0)).unwrap().width(), 2);
        assert!(s.resize(g(0), 5).is_err());
        assert!(s.resize(g(9), 1).is_err());
    }

    #[test]
    fn alternates_fill_idle_processors_only_when_enabled() {
        let mut s = sched(4, None, true);
        s.admit(g(0), 2).unwrap(); // slot 0, procs 0-1
        s.admit(g(1), 4).unwrap(); // slot 1, procs 0-3
        s.rotate(|_| true);
        let mut out = Vec::new();
        s.running(|_| true, &mut out);
        let want = |gang, alternate| Some(Cell { gang, alternate });
        assert_eq!(
            out,
            vec![
                want(g(0), false),
                want(g(0), false),
                want(g(1), true),
                want(g(1), true)
            ]
        );
        // Gang 0 without work: its processors go to the alternate too.
        s.running(|x| x != g(0), &mut out);
        assert!(out.iter().all(|c| *c == want(g(1), true)));
        let mut plain = sched(4, None, false);
        plain.admit(g(0), 2).unwrap();
        plain.admit(g(1), 4).unwrap();
        plain.rotate(|_| true);
        plain.running(|_| true, &mut out);
        assert_eq!(out, vec![want(g(0), false), want(g(0), false), None, None]);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Admit(u32),
        Enqueue(u32),
        Finish(usize),
        Rotate,
        Admit2(bool),
        Toggle(usize),
    }

    fn op(p: u32) -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (1..=p).prop_map(Op::Admit),
            1 => (1..=p).prop_map(Op::Enqueue),
            2 => (0usize..64).prop_map(Op::Finish),
            3 => Just(Op::Rotate),
            1 => any::<bool>().prop_map(Op::Admit2),
            2 => (0usize..64).prop_map(Op::Toggle),
        ]
    }

    fn case() -> impl Strategy<Value = (u32, Option<u32>, MatrixOptions, bool, Vec<Op>)> {
        (1u32..=6).prop_flat_map(|p| {
            (
                Just(p),
                prop_oneof![Just(None), (1u32..=3).prop_map(Some)],
                (any::<bool>(), any::<bool>()).prop_map(|(a, b)| MatrixOptions {
                    slot_allocation: if a {
                        SlotAllocation::BestFit
                    } else {
                        SlotAllocation::FirstFit
                    },
                    proc_choice: if b {
                        ProcChoice::Contiguous
                    } else {
                        ProcChoice::Lowest
                    },
                }),
                any::<bool>(),
                proptest::collection::vec(op(p), 1..80),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The invariants of gang scheduling under random admissions, ends,
        /// work changes and rotations: a gang's threads run together or not
        /// at all, nothing runs outside its slot except flagged alternates
        /// (and only when enabled), no processor is double-booked, no thread
        /// is on two processors, an ended gang's cells are free, rotation
        /// never picks a slot without work while one with work exists.
        #[test]
        fn gang_state_machine_invariants((p, max, mopts, alternates, ops) in case()) {
            let mut s = GangScheduler::new(
                GangMatrix::with_options(p, max, mopts).unwrap(),
                GangSchedOptions { alternates },
            );
            let mut next = 0u64;
            let mut live: BTreeMap<GangId, u32> = BTreeMap::new();
            let mut idle: BTreeSet<GangId> = BTreeSet::new();
            let mut ended: Vec<GangId> = Vec::new();
            let mut out = Vec::new();
            for o in ops {
                match o {
                    Op::Admit(w) => {
                        let gang = GangId(next);
                        next += 1;
                        s.admit(gang, w).unwrap();
                        live.insert(gang, w);
                    }
                    Op::Enqueue(w) => {
                        let gang = GangId(next);
                        next += 1;
                        s.enqueue(gang, w).unwrap();
                        live.insert(gang, w);
                    }
                    Op::Finish(k) => {
                        if let Some(&gang) = live.keys().nth(k % live.len().max(1)) {
                            s.finish(gang).unwrap();
                            live.remove(&gang);
                            ended.push(gang);
                        }
                    }
                    Op::Rotate => {
                        let has_work = |x: GangId| !idle.contains(&x);
                        let c = s.rotate(has_work);
                        match c.to {
                            Some(slot) => prop_assert!(s
                                .matrix()
                                .gangs_of(slot)
                                .iter()
                                .any(|&x| has_work(x))),
                            None => prop_assert!(s
                                .matrix()
                                .gangs()
                                .all(|(x, _)| !has_work(x))),
                        }
                    }
                    Op::Admit2(backfill) => {
                        for (gang, a) in s.admit_waiting(backfill).unwrap() {
                            prop_assert_eq!(a.width(), live[&gang]);
                        }
                    }
                    Op::Toggle(k) => {
                        if let Some(&gang) = live.keys().nth(k % live.len().max(1)) {
                            if !idle.remove(&gang) {
                                idle.insert(gang);
                            }
                        }
                    }
                }
                // Ended gangs hold no cell and are not queued.
                for &e in &ended {
                    prop_assert!(s.matrix().allocation(e).is_none());
                    prop_assert!(s.waiting().all(|(x, _)| x != e));
                }
                // Every live gang is placed or queued, never both.
                for (&gang, &w) in &live {
                    let placed = s.matrix().allocation(gang).is_some();
                    let queued = s.waiting().any(|(x, ww)| x == gang && ww == w);
                    prop_assert!(placed != queued);
                }
                let has_work = |x: GangId| !idle.contains(&x);
                s.running(has_work, &mut out);
                prop_assert_eq!(out.len(), p as usize);
                let cur = s.current();
                let mut threads: BTreeSet<(GangId, u32)> = BTreeSet::new();
                for (q, c) in out.iter().enumerate() {
                    let Some(c) = c else { continue };
                    let a = s.matrix().allocation(c.gang).expect("runs only placed gangs");
                    // The gang's thread on this processor: it has one here.
                    prop_assert!(a.procs.contains(&ProcId(q as u32)));
                    prop_assert!(has_work(c.gang));
                    // One thread, one processor (a gang has one thread per
                    // processor, so (gang, processor) names the thread).
                    prop_assert!(threads.insert((c.gang, q as u32)));
                    if c.alternate {
                        prop_assert!(alternates);
                        prop_assert!(Some(a.slot) != cur);
                    } else {
                        prop_assert_eq!(Some(a.slot), cur);
                    }
                }
                // Coscheduling: every gang of the running slot with work runs
                // on all its processors at once.
                for &gang in s.gangs_in_current() {
                    if !has_work(gang) {
                        continue;
                    }
                    for q in &s.matrix().allocation(gang).unwrap().procs {
                        prop_assert_eq!(out[q.idx()], Some(Cell { gang, alternate: false }));
                    }
                }
            }
        }
    }
}
