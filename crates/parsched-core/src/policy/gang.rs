//! Ousterhout's scheduling matrix for gang scheduling — J. K. Ousterhout,
//! "Scheduling techniques for concurrent systems", ICDCS 1982, as used by
//! Feitelson & Rudolph, "Gang scheduling performance benefits for fine-grain
//! synchronization", JPDC 1992 (seed 001), section 3.2.
//!
//! "Scheduling space is seen as a matrix, where each row corresponds to a
//! scheduling slot and each column to a processor. Tasks belonging to a single
//! gang are mapped to entries in the same slot." The machine circles through the
//! used slots round robin, one quantum each, and switches early when no gang in
//! the current slot can run (seed 001 §3.2: a processor "not participating in
//! gang scheduling in the current slot" sets its bit; all bits set triggers the
//! switch).
//!
//! [`GangMatrix`] is that matrix, stored explicitly:
//!
//! * A gang ([`GangId`]) of width `w` (1..=P threads) occupies `w` cells of
//!   exactly one slot, at most one cell per processor.
//! * [`GangMatrix::allocate`] chooses the slot by [`SlotAllocation`] (first fit
//!   or best fit) and the processors within it by [`ProcChoice`] (lowest free
//!   or one contiguous block). With a bounded multiprogramming level
//!   (`max_slots`) a full matrix answers "no room" (`Ok(None)`), not an error,
//!   so a batch scheduler can queue the job.
//! * [`GangMatrix::release`] frees exactly the gang's cells. Trailing empty
//!   slots are dropped; a live gang's slot index and processors never change
//!   except through an explicit [`GangMatrix::compact`].
//! * [`GangMatrix::next_slot`] is the round-robin rotation skipping slots with
//!   no gang or no gang with work; [`GangMatrix::alternates`] implements
//!   Ousterhout-style alternate selection (fill an idle cell with a thread of a
//!   gang from another slot).
//! * [`GangMatrix::fragmentation`] is the fraction of cells left idle in the
//!   occupied slots (seed 001 §1 cites losses of up to 25%).
//!
//! The matrix makes no decisions about time: the simulator (gang scheduling of
//! barrier programs), a batch gang scheduler (rigid jobs, bounded
//! multiprogramming level, backfilling into free cells) and the Linux runtime
//! (one cgroup set per slot, frozen and thawed in turn) all drive the same
//! structure. Everything is deterministic: no hash-map order is observable.

use crate::error::{ConfigError, PolicyError};
use crate::ids::{JobId, ProcId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use thiserror::Error;

/// A gang: a set of threads scheduled together, one per processor, in one slot.
/// Usually a job (`GangId::from(job)`), but a job may also contribute several
/// gangs (one per parallel construct, as in seed 001 §3.1).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct GangId(pub u64);

impl From<JobId> for GangId {
    fn from(job: JobId) -> GangId {
        GangId(job.0)
    }
}

impl fmt::Display for GangId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "gang{}", self.0)
    }
}

/// A row of the matrix: a time slot.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct SlotId(pub u32);

impl SlotId {
    /// The index as `usize`, for indexing vectors.
    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for SlotId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "slot{}", self.0)
    }
}

/// Which slot a new gang goes to. Both rules consider only slots where the
/// gang fits (under the [`ProcChoice`] rule); a new slot is opened only when no
/// existing slot fits, and only if the multiprogramming level allows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SlotAllocation {
    /// The lowest-numbered slot where the gang fits.
    #[default]
    FirstFit,
    /// The slot leaving the fewest free cells after placement (lowest index on
    /// ties). With [`ProcChoice::Contiguous`] the block inside the slot is also
    /// best fit: the shortest free run that is long enough.
    BestFit,
}

/// Which processors a gang gets inside its slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ProcChoice {
    /// The `w` lowest-numbered free processors (possibly scattered).
    #[default]
    Lowest,
    /// `w` consecutive processors (the first `w` of a free run; which run is
    /// chosen follows [`SlotAllocation`]). A slot with enough free cells but no
    /// long enough run does not fit.
    Contiguous,
}

/// How [`GangMatrix::compact`] may move a gang to a lower slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Repack {
    /// Only onto the same processors (no thread migrates; only the slot
    /// changes).
    #[default]
    SameProcs,
    /// Onto any processors chosen by the [`ProcChoice`] rule (threads may
    /// migrate).
    AnyProcs,
}

/// Options of the matrix. Defaults: first fit, lowest free processors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct MatrixOptions {
    pub slot_allocation: SlotAllocation,
    pub proc_choice: ProcChoice,
}

/// Where a gang is: its slot and its processors (ascending, distinct).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allocation {
    pub slot: SlotId,
    pub procs: Vec<ProcId>,
}

impl Allocation {
    /// The number of threads (cells).
    pub fn width(&self) -> u32 {
        self.procs.len() as u32
    }
}

/// One gang moved by [`GangMatrix::compact`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Move {
    pub gang: GangId,
    pub from: Allocation,
    pub to: Allocation,
}

/// A request the matrix refuses. Converts into [`PolicyError`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MatrixError {
    #[error("gang width {width} is outside 1..={procs} (the number of processors)")]
    Width { width: u32, procs: u32 },
    #[error("{gang} is already placed in {slot}")]
    AlreadyPlaced { gang: GangId, slot: SlotId },
    #[error("{gang} is not in the matrix")]
    UnknownGang { gang: GangId },
    #[error("{gang} is already waiting for admission")]
    AlreadyQueued { gang: GangId },
}

impl From<MatrixError> for PolicyError {
    fn from(e: MatrixError) -> PolicyError {
        PolicyError(e.to_string())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    cells: Vec<Option<GangId>>,
    free: u32,
    /// The row's gangs, ordered by their lowest processor.
    gangs: Vec<GangId>,
    /// Each listed gang's lowest processor (same order; unique in a row).
    firsts: Vec<u32>,
}

/// Ousterhout's matrix: rows are time slots, columns processors.
///
/// Slot indices are stable: a live gang keeps its slot and processors until it
/// is released or moved by [`GangMatrix::compact`]. Releasing a gang may leave
/// an empty slot in the middle (kept, reused by later allocations, skipped by
/// [`GangMatrix::next_slot`]); empty slots at the end are dropped, so
/// `num_slots()` is one past the highest occupied slot.
#[derive(Debug, Clone, PartialEq)]
pub struct GangMatrix {
    procs: u32,
    max_slots: Option<u32>,
    options: MatrixOptions,
    rows: Vec<Row>,
    gangs: BTreeMap<GangId, Allocation>,
}

impl GangMatrix {
    /// A matrix of `procs` processors with default options. `max_slots` is the
    /// multiprogramming level: `None` grows rows on demand, `Some(m)` allows at
    /// most `m` slots.
    pub fn new(procs: u32, max_slots: Option<u32>) -> Result<GangMatrix, ConfigError> {
        GangMatrix::with_options(procs, max_slots, MatrixOptions::default())
    }

    pub fn with_options(
        procs: u32,
        max_slots: Option<u32>,
        options: MatrixOptions,
    ) -> Result<GangMatrix, ConfigError> {
        if procs == 0 {
            return Err(ConfigError::new("procs", "0 processors", "procs >= 1"));
        }
        if max_slots == Some(0) {
            return Err(ConfigError::new(
                "max_slots",
                "a multiprogramming level of 0 admits no gang",
                "max_slots >= 1, or none for unbounded",
            ));
        }
        Ok(GangMatrix {
            procs,
            max_slots,
            options,
            rows: Vec::new(),
            gangs: BTreeMap::new(),
        })
    }

    /// The number of processors (columns), P.
    pub fn procs(&self) -> u32 {
        self.procs
    }

    /// The multiprogramming level, if bounded.
    pub fn max_slots(&self) -> Option<u32> {
        self.max_slots
    }

    pub fn options(&self) -> MatrixOptions {
        self.options
    }

    /// Rows currently stored: one past the highest occupied slot (0 when
    /// empty). Interior slots may be empty.
    pub fn num_slots(&self) -> u32 {
        self.rows.len() as u32
    }

    /// Live gangs.
    pub fn num_gangs(&self) -> usize {
        self.gangs.len()
    }

    /// Live gangs and their allocations, by increasing `GangId`.
    pub fn gangs(&self) -> impl Iterator<Item = (GangId, &Allocation)> + '_ {
        self.gangs.iter().map(|(&g, a)| (g, a))
    }

    pub fn allocation(&self, gang: GangId) -> Option<&Allocation> {
        self.gangs.get(&gang)
    }

    pub fn slot_of(&self, gang: GangId) -> Option<SlotId> {
        self.gangs.get(&gang).map(|a| a.slot)
    }

    /// The gang in a cell; `None` for an idle cell or a slot/processor outside
    /// the matrix.
    pub fn cell(&self, slot: SlotId, proc: ProcId) -> Option<GangId> {
        self.rows
            .get(slot.idx())
            .and_then(|r| r.cells.get(proc.idx()).copied().flatten())
    }

    /// The gangs of a slot, ordered by their lowest processor.
    pub fn gangs_in(&self, slot: SlotId) -> Vec<GangId> {
        self.gangs_of(slot).to_vec()
    }

    /// [`GangMatrix::gangs_in`] without a copy (empty beyond `num_slots()`).
    pub fn gangs_of(&self, slot: SlotId) -> &[GangId] {
        self.rows
            .get(slot.idx())
            .map_or(&[], |r| r.gangs.as_slice())
    }

    /// Idle cells of a slot. A slot at or beyond `num_slots()` has no cells (0).
    pub fn free_cells(&self, slot: SlotId) -> u32 {
        self.rows.get(slot.idx()).map_or(0, |r| r.free)
    }

    /// How many slots hold at least one gang.
    pub fn num_occupied_slots(&self) -> u32 {
        self.rows.iter().filter(|r| r.free < self.procs).count() as u32
    }

    /// Slots holding at least one gang, ascending.
    pub fn occupied_slots(&self) -> Vec<SlotId> {
        (0..self.rows.len())
            .filter(|&i| self.rows[i].free < self.procs)
            .map(|i| SlotId(i as u32))
            .collect()
    }

    /// Where [`GangMatrix::allocate`] would put a gang of `width` threads right
    /// now, without placing it (`Ok(None)`: no room). For batch schedulers that
    /// look ahead (backfilling).
    pub fn probe(&self, width: u32) -> Result<Option<Allocation>, MatrixError> {
        self.check_width(width)?;
        Ok(self.choose(width))
    }

    /// Places `gang` with `width` threads. `Ok(None)` means no room: every slot
    /// is too full and the multiprogramming level forbids a new one.
    pub fn allocate(
        &mut self,
        gang: GangId,
        width: u32,
    ) -> Result<Option<Allocation>, MatrixError> {
        self.check_width(width)?;
        if let Some(a) = self.gangs.get(&gang) {
            return Err(MatrixError::AlreadyPlaced { gang, slot: a.slot });
        }
        let Some(alloc) = self.choose(width) else {
            return Ok(None);
        };
        self.occupy(gang, &alloc);
        self.gangs.insert(gang, alloc.clone());
        Ok(Some(alloc))
    }

    /// Whether a gang of `width` threads fits in `slot` now by the
    /// [`ProcChoice`] rule (a slot at or beyond `num_slots()` is empty: it
    /// fits any width up to P; the multiprogramming level is not looked at).
    pub fn fits_in(&self, slot: SlotId, width: u32) -> bool {
        match self.rows.get(slot.idx()) {
            Some(r) => r.free >= width && fit(&self.options, &r.cells, width).is_some(),
            None => width >= 1 && width <= self.procs,
        }
    }

    /// Places `gang` with `width` threads in `slot`, chosen by the caller:
    /// an existing slot, or `num_slots()` (a new slot) if the
    /// multiprogramming level allows; its processors by the [`ProcChoice`]
    /// rule. `Ok(None)`: no room there.
    pub fn allocate_in(
        &mut self,
        gang: GangId,
        width: u32,
        slot: SlotId,
    ) -> Result<Option<Allocation>, MatrixError> {
        self.check_width(width)?;
        if let Some(a) = self.gangs.get(&gang) {
            return Err(MatrixError::AlreadyPlaced { gang, slot: a.slot });
        }
        let n = self.rows.len();
        let below_mpl = match self.max_slots {
            Some(m) => (n as u32) < m,
            None => true,
        };
        let procs = match self.rows.get(slot.idx()) {
            Some(r) if r.free >= width => fit(&self.options, &r.cells, width),
            Some(_) => None,
            None if slot.idx() == n && below_mpl => Some((0..width).map(ProcId).collect()),
            None => None,
        };
        let Some(procs) = procs else {
            return Ok(None);
        };
        let alloc = Allocation { slot, procs };
        self.occupy(gang, &alloc);
        self.gangs.insert(gang, alloc.clone());
        Ok(Some(alloc))
    }

    /// Frees the gang's cells and returns where it was. Trailing empty slots
    /// are dropped; other slot indices do not change.
    pub fn release(&mut self, gang: GangId) -> Result<Allocation, MatrixError> {
        let alloc = self
            .gangs
            .remove(&gang)
            .ok_or(MatrixError::UnknownGang { gang })?;
        self.vacate(&alloc);
        self.trim();
        Ok(alloc)
    }

    /// The next slot to run after `after` (`None`: start at slot 0) in round
    /// robin order: the first slot, after `after` and wrapping around to
    /// `after` itself last, that holds a gang for which `has_work` is true.
    /// Empty slots and slots whose gangs all lack work are skipped (seed 001
    /// §3.2's early switch). `None` if no gang has work. `has_work` is called
    /// at most once per gang.
    pub fn next_slot(
        &self,
        after: Option<SlotId>,
        mut has_work: impl FnMut(GangId) -> bool,
    ) -> Option<SlotId> {
        let n = self.rows.len();
        let start = match after {
            Some(s) if s.idx() + 1 < n => s.idx() + 1,
            _ => 0,
        };
        (0..n)
            .map(|k| (start + k) % n)
            .find(|&i| {
                self.rows[i].free < self.procs && self.rows[i].gangs.iter().any(|&g| has_work(g))
            })
            .map(|i| SlotId(i as u32))
    }

    /// Alternate selection: for each processor idle in `slot`, a gang from
    /// another slot with a thread on that processor — the one in the nearest
    /// following slot in round robin order. That thread runs alone (not
    /// coscheduled) in the hole, so alternates suit gangs that tolerate it.
    /// Processors with no candidate are omitted. Ascending by processor.
    pub fn alternates(&self, slot: SlotId) -> Vec<(ProcId, GangId)> {
        self.alternates_where(slot, |_| true)
    }

    /// [`GangMatrix::alternates`] considering only gangs with `has_work`.
    pub fn alternates_where(
        &self,
        slot: SlotId,
        mut has_work: impl FnMut(GangId) -> bool,
    ) -> Vec<(ProcId, GangId)> {
        (0..self.procs)
            .map(ProcId)
            .filter(|&p| self.cell(slot, p).is_none())
            .filter_map(|p| self.alternate_for(slot, p, &mut has_work).map(|g| (p, g)))
            .collect()
    }

    /// The alternate for one processor of `slot`: the gang with a thread on
    /// `proc` in the nearest slot after `slot` (round robin, `slot` itself
    /// excluded) for which `has_work` is true. Also usable when the cell is
    /// occupied but its thread is blocked.
    pub fn alternate_for(
        &self,
        slot: SlotId,
        proc: ProcId,
        mut has_work: impl FnMut(GangId) -> bool,
    ) -> Option<GangId> {
        if proc.0 >= self.procs {
            return None;
        }
        let n = self.rows.len();
        let s = slot.idx();
        let (first, then) = if s < n {
            (s + 1..n, 0..s)
        } else {
            (0..n, 0..0)
        };
        first
            .chain(then)
            .filter_map(|i| self.rows[i].cells[proc.idx()])
            .find(|&g| has_work(g))
    }

    /// Cells of occupied slots (P per slot).
    fn occupied_cells(&self) -> u64 {
        self.rows.iter().filter(|r| r.free < self.procs).count() as u64 * self.procs as u64
    }

    /// Idle cells in occupied slots / all cells of occupied slots: the share
    /// of processor time lost when the occupied slots are run round robin with
    /// equal quanta and no alternates. 0 for an empty matrix. In [0, 1).
    pub fn fragmentation(&self) -> f64 {
        let total = self.occupied_cells();
        if total == 0 {
            return 0.0;
        }
        let idle: u64 = self
            .rows
            .iter()
            .filter(|r| r.free < self.procs)
            .map(|r| r.free as u64)
            .sum();
        idle as f64 / total as f64
    }

    /// Busy cells / all cells of occupied slots (1 − fragmentation); 0 for an
    /// empty matrix.
    pub fn utilization(&self) -> f64 {
        let total = self.occupied_cells();
        if total == 0 {
            return 0.0;
        }
        let busy: u64 = self.gangs.values().map(|a| a.width() as u64).sum();
        busy as f64 / total as f64
    }

    /// Repacking: moves gangs to the lowest lower slot where they fit, highest
    /// slots first (within a slot, by lowest processor), until no gang can
    /// move; then drops trailing empty slots. Returns the moves in the order
    /// made. Each move lowers a slot index, so this terminates; it does not
    /// promise the minimum number of slots. With [`Repack::AnyProcs`] no empty
    /// slot is left below an occupied one.
    ///
    /// This changes live gangs' slots (and, with `AnyProcs`, processors): a
    /// machine must apply the moves between slots, never while a slot is
    /// running (the runtime moves the gangs' cgroups between slot sets while
    /// all are frozen). Seed 001's library never repacks ("slots that are left
    /// with a small number of tasks ... are not united").
    pub fn compact(&mut self, mode: Repack) -> Vec<Move> {
        let mut moves = Vec::new();
        loop {
            let mut moved = false;
            for s in (1..self.rows.len()).rev() {
                for g in self.gangs_in(SlotId(s as u32)) {
                    let from = self.gangs[&g].clone();
                    let w = from.width();
                    let target = (0..s).find_map(|t| {
                        let row = &self.rows[t];
                        let procs = match mode {
                            Repack::SameProcs => from
                                .procs
                                .iter()
                                .all(|p| row.cells[p.idx()].is_none())
                                .then(|| from.procs.clone()),
                            Repack::AnyProcs => {
                                if row.free < w {
                                    None
                                } else {
                                    fit(&self.options, &row.cells, w)
                                }
                            }
                        }?;
                        Some(Allocation {
                            slot: SlotId(t as u32),
                            procs,
                        })
                    });
                    if let Some(to) = target {
                        self.vacate(&from);
                        self.occupy(g, &to);
                        self.gangs.insert(g, to.clone());
                        moves.push(Move { gang: g, from, to });
                        moved = true;
                    }
                }
            }
            if !moved {
                break;
            }
        }
        self.trim();
        moves
    }

    fn check_width(&self, width: u32) -> Result<(), MatrixError> {
        if width == 0 || width > self.procs {
            return Err(MatrixError::Width {
                width,
                procs: self.procs,
            });
        }
        Ok(())
    }

    /// The allocation rule: an existing slot by `slot_allocation`, else a new
    /// slot if the multiprogramming level allows.
    fn choose(&self, width: u32) -> Option<Allocation> {
        let mut best: Option<(u32, usize, Vec<ProcId>)> = None;
        for (i, row) in self.rows.iter().enumerate() {
            if row.free < width {
                continue;
            }
            let Some(procs) = fit(&self.options, &row.cells, width) else {
                continue;
            };
            let left = row.free - width;
            match self.options.slot_allocation {
                SlotAllocation::FirstFit => {
                    return Some(Allocation {
                        slot: SlotId(i as u32),
                        procs,
                    })
                }
                SlotAllocation::BestFit => {
                    if !matches!(&best, Some(b) if b.0 <= left) {
                        best = Some((left, i, procs));
                    }
                }
            }
        }
        if let Some((_, i, procs)) = best {
            return Some(Allocation {
                slot: SlotId(i as u32),
                procs,
            });
        }
        let n = self.rows.len() as u32;
        if self.max_slots.is_some_and(|m| n >= m) {
            return None;
        }
        Some(Allocation {
            slot: SlotId(n),
            procs: (0..width).map(ProcId).collect(),
        })
    }

    fn occupy(&mut self, gang: GangId, alloc: &Allocation) {
        while self.rows.len() <= alloc.slot.idx() {
            self.rows.push(Row {
                cells: vec![None; self.procs as usize],
                free: self.procs,
                gangs: Vec::new(),
                firsts: Vec::new(),
            });
        }
        let row = &mut self.rows[alloc.slot.idx()];
        for p in &alloc.procs {
            debug_assert!(row.cells[p.idx()].is_none(), "cell already taken");
            row.cells[p.idx()] = Some(gang);
        }
        row.free -= alloc.width();
        let first = alloc.procs[0].0;
        let at = row.firsts.partition_point(|&f| f < first);
        row.gangs.insert(at, gang);
        row.firsts.insert(at, first);
    }

    fn vacate(&mut self, alloc: &Allocation) {
        let row = &mut self.rows[alloc.slot.idx()];
        let gang = row.cells[alloc.procs[0].idx()];
        for p in &alloc.procs {
            row.cells[p.idx()] = None;
        }
        row.free += alloc.width();
        if let Ok(at) = row.firsts.binary_search(&alloc.procs[0].0) {
            debug_assert_eq!(Some(row.gangs[at]), gang);
            row.gangs.remove(at);
            row.firsts.remove(at);
        }
    }

    fn trim(&mut self) {
        while self.rows.last().is_some_and(|r| r.free == self.procs) {
            self.rows.pop();
        }
    }
}

/// The processors a gang of `width` gets in a row, by the `ProcChoice` rule;
/// `None` if it does not fit.
fn fit(options: &MatrixOptions, cells: &[Option<GangId>], width: u32) -> Option<Vec<ProcId>> {
    let w = width as usize;
    match options.proc_choice {
        ProcChoice::Lowest => {
            let v: Vec<ProcId> = cells
                .iter()
                .enumerate()
                .filter(|(_, c)| c.is_none())
                .take(w)
                .map(|(i, _)| ProcId(i as u32))
                .collect();
            (v.len() == w).then_some(v)
        }
        ProcChoice::Contiguous => {
            // (run length, run start) of the chosen free run.
            let mut chosen: Option<(usize, usize)> = None;
            let mut i = 0;
            while i < cells.len() {
                if cells[i].is_some() {
                    i += 1;
                    continue;
                }
                let start = i;
                while i < cells.len() && cells[i].is_none() {
                    i += 1;
                }
                let len = i - start;
                if len < w {
                    continue;
                }
                match options.slot_allocation {
                    SlotAllocation::FirstFit => {
                        chosen = Some((len, start));
                        break;
                    }
                    SlotAllocation::BestFit => {
                        if !matches!(chosen, Some((l, _)) if l <= len) {
                            chosen = Some((len, start));
                        }
                    }
                }
            }
            chosen.map(|(_, s)| (s..s + w).map(|p| ProcId(p as u32)).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    fn g(i: u64) -> GangId {
        GangId(i)
    }

    fn procs(v: &[u32]) -> Vec<ProcId> {
        v.iter().map(|&p| ProcId(p)).collect()
    }

    fn opts(slot_allocation: SlotAllocation, proc_choice: ProcChoice) -> MatrixOptions {
        MatrixOptions {
            slot_allocation,
            proc_choice,
        }
    }

    fn alloc(m: &mut GangMatrix, gang: u64, width: u32) -> Allocation {
        m.allocate(g(gang), width).unwrap().expect("room")
    }

    #[test]
    fn new_validates() {
        assert_eq!(GangMatrix::new(0, None).unwrap_err().field, "procs");
        assert_eq!(GangMatrix::new(4, Some(0)).unwrap_err().field, "max_slots");
        let m = GangMatrix::new(4, Some(3)).unwrap();
        assert_eq!((m.procs(), m.max_slots(), m.num_slots()), (4, Some(3), 0));
        assert_eq!(
            m.options(),
            opts(SlotAllocation::FirstFit, ProcChoice::Lowest)
        );
    }

    #[test]
    fn first_fit_takes_first_slot_with_room_and_lowest_procs() {
        let mut m = GangMatrix::new(4, None).unwrap();
        let a = alloc(&mut m, 1, 3);
        assert_eq!((a.slot, a.procs), (SlotId(0), procs(&[0, 1, 2])));
        let a = alloc(&mut m, 2, 2);
        assert_eq!((a.slot, a.procs), (SlotId(1), procs(&[0, 1])));
        let a = alloc(&mut m, 3, 1);
        assert_eq!((a.slot, a.procs), (SlotId(0), procs(&[3])));
        let a = alloc(&mut m, 4, 2);
        assert_eq!((a.slot, a.procs), (SlotId(1), procs(&[2, 3])));
        assert_eq!(m.num_slots(), 2);
        assert_eq!(m.gangs_in(SlotId(0)), vec![g(1), g(3)]);
        assert_eq!(m.gangs_in(SlotId(1)), vec![g(2), g(4)]);
        assert_eq!(m.cell(SlotId(1), ProcId(3)), Some(g(4)));
        assert_eq!(m.cell(SlotId(2), ProcId(0)), None);
        assert_eq!(m.cell(SlotId(0), ProcId(9)), None);
        assert_eq!(m.fragmentation(), 0.0);
        assert_eq!(m.utilization(), 1.0);
    }

    #[test]
    fn best_fit_takes_fullest_slot() {
        // slot 0: 4 free of 8; slot 1: 2 free.
        for (rule, want) in [(SlotAllocation::FirstFit, 0), (SlotAllocation::BestFit, 1)] {
            let mut m = GangMatrix::with_options(8, None, opts(rule, ProcChoice::Lowest)).unwrap();
            alloc(&mut m, 1, 4);
            alloc(&mut m, 2, 6);
            let a = alloc(&mut m, 3, 2);
            assert_eq!(a.slot, SlotId(want), "{rule:?}");
        }
    }

    #[test]
    fn lowest_scatters_contiguous_needs_a_run() {
        for (choice, want) in [
            (ProcChoice::Lowest, (0, vec![0, 1, 4])),
            (ProcChoice::Contiguous, (1, vec![0, 1, 2])),
        ] {
            let mut m =
                GangMatrix::with_options(6, None, opts(SlotAllocation::FirstFit, choice)).unwrap();
            alloc(&mut m, 1, 2);
            alloc(&mut m, 2, 2);
            m.release(g(1)).unwrap();
            // slot 0 free: 0, 1, 4, 5
            let a = alloc(&mut m, 3, 3);
            assert_eq!((a.slot.0, a.procs), (want.0, procs(&want.1)), "{choice:?}");
        }
    }

    #[test]
    fn contiguous_hole_follows_slot_rule() {
        // Row of 8: holes [0, 3) and [6, 8).
        for (rule, want) in [
            (SlotAllocation::FirstFit, [0, 1]),
            (SlotAllocation::BestFit, [6, 7]),
        ] {
            let mut m =
                GangMatrix::with_options(8, None, opts(rule, ProcChoice::Contiguous)).unwrap();
            alloc(&mut m, 1, 3);
            alloc(&mut m, 2, 3);
            alloc(&mut m, 3, 2);
            m.release(g(1)).unwrap();
            m.release(g(3)).unwrap();
            let a = alloc(&mut m, 4, 2);
            assert_eq!((a.slot, a.procs), (SlotId(0), procs(&want)), "{rule:?}");
        }
    }

    #[test]
    fn errors_for_bad_width_duplicate_and_unknown() {
        let mut m = GangMatrix::new(4, None).unwrap();
        assert_eq!(
            m.allocate(g(1), 0),
            Err(MatrixError::Width { width: 0, procs: 4 })
        );
        assert_eq!(
            m.allocate(g(1), 5),
            Err(MatrixError::Width { width: 5, procs: 4 })
        );
        alloc(&mut m, 1, 4);
        assert_eq!(
            m.allocate(g(1), 1),
            Err(MatrixError::AlreadyPlaced {
                gang: g(1),
                slot: SlotId(0)
            })
        );
        assert_eq!(
            m.release(g(7)),
            Err(MatrixError::UnknownGang { gang: g(7) })
        );
        let pe: PolicyError = MatrixError::UnknownGang { gang: g(7) }.into();
        assert_eq!(pe.0, "gang7 is not in the matrix");
        assert!(m.probe(9).is_err());
    }

    #[test]
    fn bounded_matrix_reports_no_room_not_error() {
        let mut m = GangMatrix::new(4, Some(2)).unwrap();
        alloc(&mut m, 1, 4);
        alloc(&mut m, 2, 3);
        assert_eq!(m.probe(1).unwrap().unwrap().slot, SlotId(1));
        alloc(&mut m, 3, 1);
        assert_eq!(m.allocate(g(4), 1), Ok(None));
        assert_eq!(m.probe(1), Ok(None));
        assert_eq!(m.num_slots(), 2);
        assert_eq!(m.slot_of(g(4)), None);
        m.release(g(2)).unwrap();
        let a = alloc(&mut m, 4, 2);
        assert_eq!((a.slot, a.procs), (SlotId(1), procs(&[0, 1])));
        // Unbounded keeps growing.
        let mut u = GangMatrix::new(2, None).unwrap();
        for i in 0..50 {
            assert_eq!(alloc(&mut u, i, 2).slot, SlotId(i as u32));
        }
        assert_eq!(u.num_slots(), 50);
    }

    #[test]
    fn release_keeps_indices_and_drops_trailing_empty_slots() {
        let mut m = GangMatrix::new(4, None).unwrap();
        for i in 0..3 {
            alloc(&mut m, i, 4);
        }
        let freed = m.release(g(1)).unwrap();
        assert_eq!((freed.slot, freed.width()), (SlotId(1), 4));
        assert_eq!(m.num_slots(), 3);
        assert_eq!(m.slot_of(g(2)), Some(SlotId(2)));
        assert_eq!(m.occupied_slots(), vec![SlotId(0), SlotId(2)]);
        assert_eq!(m.free_cells(SlotId(1)), 4);
        // The interior hole is reused first.
        assert_eq!(alloc(&mut m, 5, 1).slot, SlotId(1));
        m.release(g(5)).unwrap();
        m.release(g(2)).unwrap();
        assert_eq!(m.num_slots(), 1);
        assert_eq!(m.free_cells(SlotId(1)), 0);
        m.release(g(0)).unwrap();
        assert_eq!(m.num_slots(), 0);
        assert_eq!(m.fragmentation(), 0.0);
        assert_eq!(m.utilization(), 0.0);
    }

    #[test]
    fn next_slot_round_robin_skips_empty_and_workless_slots() {
        let mut m = GangMatrix::new(4, None).unwrap();
        for i in 0..4 {
            alloc(&mut m, i, 4);
        }
        m.release(g(1)).unwrap(); // slot 1 empty
        let all = |_| true;
        assert_eq!(m.next_slot(None, all), Some(SlotId(0)));
        assert_eq!(m.next_slot(Some(SlotId(0)), all), Some(SlotId(2)));
        assert_eq!(m.next_slot(Some(SlotId(2)), all), Some(SlotId(3)));
        assert_eq!(m.next_slot(Some(SlotId(3)), all), Some(SlotId(0)));
        assert_eq!(m.next_slot(Some(SlotId(40)), all), Some(SlotId(0)));
        // Gang 2 (slot 2) has no work: early switch past it.
        assert_eq!(m.next_slot(Some(SlotId(0)), |x| x != g(2)), Some(SlotId(3)));
        // Only the current slot has work: it continues.
        assert_eq!(m.next_slot(Some(SlotId(3)), |x| x == g(3)), Some(SlotId(3)));
        assert_eq!(m.next_slot(Some(SlotId(3)), |_| false), None);
        assert_eq!(GangMatrix::new(2, None).unwrap().next_slot(None, all), None);
        // has_work is asked once per gang of each slot visited.
        let mut asked = Vec::new();
        m.next_slot(None, |x| {
            asked.push(x);
            false
        });
        assert_eq!(asked, vec![g(0), g(2), g(3)]);
    }

    #[test]
    fn alternates_fill_idle_cells_from_following_slots() {
        let mut m = GangMatrix::with_options(
            4,
            None,
            opts(SlotAllocation::FirstFit, ProcChoice::Contiguous),
        )
        .unwrap();
        alloc(&mut m, 1, 2); // slot 0: 0, 1
        alloc(&mut m, 2, 4); // slot 1: all
        alloc(&mut m, 3, 3); // slot 2: 0, 1, 2
        assert_eq!(m.slot_of(g(3)), Some(SlotId(2)));
        assert_eq!(
            m.alternates(SlotId(0)),
            vec![(ProcId(2), g(2)), (ProcId(3), g(2))]
        );
        assert_eq!(m.alternates(SlotId(1)), vec![]);
        assert_eq!(m.alternates(SlotId(2)), vec![(ProcId(3), g(2))]);
        assert_eq!(
            m.alternates_where(SlotId(0), |x| x != g(2)),
            vec![(ProcId(2), g(3))]
        );
        assert_eq!(m.alternate_for(SlotId(2), ProcId(0), |_| true), Some(g(1)));
        assert_eq!(m.alternate_for(SlotId(2), ProcId(9), |_| true), None);
    }

    #[test]
    fn fragmentation_counts_idle_cells_of_occupied_slots() {
        let mut m = GangMatrix::new(4, None).unwrap();
        alloc(&mut m, 1, 3);
        alloc(&mut m, 2, 2);
        alloc(&mut m, 3, 4);
        // slot 0: gang 1 (1 free); gang 2 does not fit there → slot 1 (2 free);
        // gang 3 → slot 2 (full).
        assert_eq!(m.slot_of(g(3)), Some(SlotId(2)));
        // idle 1 + 2 + 0 of 12
        assert!((m.fragmentation() - 0.25).abs() < 1e-12);
        assert!((m.utilization() - 0.75).abs() < 1e-12);
        // An empty interior slot is not counted.
        m.release(g(2)).unwrap();
        assert!((m.fragmentation() - 1.0 / 8.0).abs() < 1e-12);
    }

    #[test]
    fn compact_same_procs_and_any_procs() {
        // slot 0: g1 on 0, 1 and g3 on 2; slot 1: g2 (released); slot 2: g4 on 0..3.
        let build = || {
            let mut m = GangMatrix::new(4, None).unwrap();
            alloc(&mut m, 1, 2);
            alloc(&mut m, 2, 3);
            alloc(&mut m, 4, 4);
            alloc(&mut m, 3, 1);
            m.release(g(2)).unwrap();
            m
        };
        let mut m = build();
        // slot 0: g1 [0,1], g3 [2]; slot 1: empty; slot 2: g4 all.
        assert_eq!(m.slot_of(g(3)), Some(SlotId(0)));
        assert_eq!(m.num_slots(), 3);
        let moves = m.compact(Repack::SameProcs);
        assert_eq!(moves.len(), 1);
        assert_eq!(moves[0].gang, g(4));
        assert_eq!(moves[0].to.slot, SlotId(1));
        assert_eq!(moves[0].to.procs, moves[0].from.procs);
        assert_eq!(m.num_slots(), 2);

        // SameProcs cannot merge disjoint-slot gangs on overlapping processors;
        // AnyProcs can.
        let mut m = GangMatrix::new(4, None).unwrap();
        alloc(&mut m, 1, 2); // slot 0: 0, 1
        alloc(&mut m, 2, 4); // slot 1
        alloc(&mut m, 3, 2); // slot 0: 2, 3
        alloc(&mut m, 4, 2); // slot 2: 0, 1
        m.release(g(3)).unwrap();
        let mut same = m.clone();
        assert!(same.compact(Repack::SameProcs).is_empty());
        assert_eq!(same, m);
        let moves = m.compact(Repack::AnyProcs);
        assert_eq!(
            moves,
            vec![Move {
                gang: g(4),
                from: Allocation {
                    slot: SlotId(2),
                    procs: procs(&[0, 1])
                },
                to: Allocation {
                    slot: SlotId(0),
                    procs: procs(&[2, 3])
                },
            }]
        );
        assert_eq!(m.num_slots(), 2);
        assert_eq!(m.fragmentation(), 0.0);
        assert!(m.compact(Repack::AnyProcs).is_empty());
    }

    #[test]
    fn ids_convert_and_display() {
        assert_eq!(GangId::from(JobId(9)), GangId(9));
        assert_eq!(GangId(3).to_string(), "gang3");
        assert_eq!(SlotId(2).to_string(), "slot2");
        assert_eq!(SlotId(2).idx(), 2);
    }

    // ---- property tests -------------------------------------------------

    #[derive(Debug, Clone)]
    enum Op {
        Alloc(u64, u32),
        Release(u64),
        Compact(Repack),
    }

    fn op(p: u32) -> impl Strategy<Value = Op> {
        prop_oneof![
            5 => (0u64..24, 0..=p + 1).prop_map(|(g, w)| Op::Alloc(g, w)),
            3 => (0u64..24).prop_map(Op::Release),
            1 => prop_oneof![Just(Repack::SameProcs), Just(Repack::AnyProcs)].prop_map(Op::Compact),
        ]
    }

    fn options() -> impl Strategy<Value = MatrixOptions> {
        (
            prop_oneof![
                Just(SlotAllocation::FirstFit),
                Just(SlotAllocation::BestFit)
            ],
            prop_oneof![Just(ProcChoice::Lowest), Just(ProcChoice::Contiguous)],
        )
            .prop_map(|(s, p)| opts(s, p))
    }

    fn case() -> impl Strategy<Value = (u32, Option<u32>, MatrixOptions, Vec<Op>)> {
        (1u32..=8, proptest::option::of(1u32..=5), options()).prop_flat_map(|(p, m, o)| {
            (
                Just(p),
                Just(m),
                Just(o),
                proptest::collection::vec(op(p), 0..80),
            )
        })
    }

    /// The whole grid read through the public `cell` query.
    fn grid(m: &GangMatrix) -> Vec<Vec<Option<GangId>>> {
        (0..m.num_slots())
            .map(|s| {
                (0..m.procs())
                    .map(|p| m.cell(SlotId(s), ProcId(p)))
                    .collect()
            })
            .collect()
    }

    /// Does a gang of `w` fit in this row (brute force)?
    fn fits_brute(row: &[Option<GangId>], w: usize, choice: ProcChoice) -> bool {
        match choice {
            ProcChoice::Lowest => row.iter().filter(|c| c.is_none()).count() >= w,
            ProcChoice::Contiguous => row.windows(w).any(|win| win.iter().all(|c| c.is_none())),
        }
    }

    /// The processors the rules pick in a row where the gang fits (brute force).
    fn procs_brute(row: &[Option<GangId>], w: usize, o: MatrixOptions) -> Vec<ProcId> {
        let free: Vec<usize> = (0..row.len()).filter(|&q| row[q].is_none()).collect();
        let start = match o.proc_choice {
            ProcChoice::Lowest => return free[..w].iter().map(|&q| ProcId(q as u32)).collect(),
            ProcChoice::Contiguous => {
                // Maximal free runs as (start, len).
                let runs: Vec<(usize, usize)> = free
                    .iter()
                    .filter(|&&q| q == 0 || row[q - 1].is_some())
                    .map(|&q| (q, row[q..].iter().take_while(|c| c.is_none()).count()))
                    .filter(|&(_, len)| len >= w)
                    .collect();
                match o.slot_allocation {
                    SlotAllocation::FirstFit => runs[0].0,
                    SlotAllocation::BestFit => {
                        runs.iter().min_by_key(|&&(q, len)| (len, q)).unwrap().0
                    }
                }
            }
        };
        (start..start + w).map(|q| ProcId(q as u32)).collect()
    }

    /// Every invariant, checked by recounting the grid.
    #[allow(clippy::needless_range_loop)] // brute force reads clearer by index
    fn audit(m: &GangMatrix, live: &BTreeMap<GangId, u32>) -> Result<(), TestCaseError> {
        let gr = grid(m);
        let p = m.procs() as usize;
        if let Some(max) = m.max_slots() {
            prop_assert!(m.num_slots() <= max);
        }
        // Trailing slot is occupied.
        if let Some(last) = gr.last() {
            prop_assert!(last.iter().any(|c| c.is_some()));
        }
        // Cell counts per gang, and at most one cell per (gang, processor).
        let mut cells: BTreeMap<GangId, Vec<(usize, usize)>> = BTreeMap::new();
        for (s, row) in gr.iter().enumerate() {
            for (q, c) in row.iter().enumerate() {
                if let Some(x) = c {
                    cells.entry(*x).or_default().push((s, q));
                }
            }
        }
        prop_assert_eq!(
            cells.keys().copied().collect::<BTreeSet<_>>(),
            live.keys().copied().collect::<BTreeSet<_>>()
        );
        prop_assert_eq!(m.num_gangs(), live.len());
        // The per-slot gang lists agree with the grid (ordered by lowest processor).
        for (s, row) in gr.iter().enumerate() {
            let mut want: Vec<GangId> = Vec::new();
            for c in row.iter().flatten() {
                if !want.contains(c) {
                    want.push(*c);
                }
            }
            prop_assert_eq!(m.gangs_in(SlotId(s as u32)), want);
        }
        for (&x, &w) in live {
            let a = m.allocation(x).expect("live gang placed");
            let cs = &cells[&x];
            prop_assert_eq!(cs.len(), w as usize);
            prop_assert_eq!(a.width(), w);
            let slots: BTreeSet<usize> = cs.iter().map(|&(s, _)| s).collect();
            prop_assert_eq!(slots.len(), 1, "gang in two slots");
            prop_assert_eq!(*slots.iter().next().unwrap(), a.slot.idx());
            let ps: Vec<usize> = cs.iter().map(|&(_, q)| q).collect();
            let want: Vec<usize> = a.procs.iter().map(|q| q.idx()).collect();
            prop_assert_eq!(&ps, &want);
            prop_assert!(want.windows(2).all(|v| v[0] < v[1]), "procs not distinct");
            prop_assert!(m.gangs_in(a.slot).contains(&x));
            prop_assert_eq!(m.slot_of(x), Some(a.slot));
        }
        // Per-slot queries.
        let mut occupied = Vec::new();
        let (mut idle, mut busy) = (0usize, 0usize);
        for (s, row) in gr.iter().enumerate() {
            let free = row.iter().filter(|c| c.is_none()).count();
            prop_assert_eq!(m.free_cells(SlotId(s as u32)) as usize, free);
            let mut seen: Vec<GangId> = Vec::new();
            for c in row.iter().flatten() {
                if !seen.contains(c) {
                    seen.push(*c);
                }
            }
            prop_assert_eq!(m.gangs_in(SlotId(s as u32)), seen);
            if free < p {
                occupied.push(SlotId(s as u32));
                idle += free;
                busy += p - free;
            }
        }
        prop_assert_eq!(m.occupied_slots(), occupied.clone());
        prop_assert_eq!(m.num_occupied_slots() as usize, occupied.len());
        let f = m.fragmentation();
        prop_assert!((0.0..=1.0).contains(&f));
        let total = occupied.len() * p;
        let (bf, bu) = if total == 0 {
            (0.0, 0.0)
        } else {
            (idle as f64 / total as f64, busy as f64 / total as f64)
        };
        prop_assert!((f - bf).abs() < 1e-12);
        prop_assert!((m.utilization() - bu).abs() < 1e-12);
        // Round robin visits every occupied slot once, ascending, then wraps.
        let mut cur = None;
        let mut visited = Vec::new();
        for _ in 0..occupied.len() {
            cur = m.next_slot(cur, |_| true);
            visited.push(cur.expect("occupied slot"));
        }
        prop_assert_eq!(&visited, &occupied);
        prop_assert_eq!(m.next_slot(cur, |_| true), occupied.first().copied());
        // Alternates against a brute-force search.
        let n = gr.len();
        for s in 0..=n {
            let mut want = Vec::new();
            for q in 0..p {
                if s < n && gr[s][q].is_some() {
                    continue;
                }
                let order: Vec<usize> = if s < n {
                    (s + 1..n).chain(0..s).collect()
                } else {
                    (0..n).collect()
                };
                if let Some(x) = order.iter().find_map(|&t| gr[t][q]) {
                    want.push((ProcId(q as u32), x));
                }
            }
            prop_assert_eq!(m.alternates(SlotId(s as u32)), want);
        }
        Ok(())
    }

    fn run_ops(
        p: u32,
        max: Option<u32>,
        o: MatrixOptions,
        ops: Vec<Op>,
    ) -> Result<(), TestCaseError> {
        let mut m = GangMatrix::with_options(p, max, o).unwrap();
        let mut live: BTreeMap<GangId, u32> = BTreeMap::new();
        for op in ops {
            let before = m.clone();
            let gb = grid(&before);
            match op {
                Op::Alloc(x, w) => {
                    let x = GangId(x);
                    let was_live = live.contains_key(&x);
                    let r = m.allocate(x, w);
                    if w == 0 || w > p {
                        prop_assert_eq!(r, Err(MatrixError::Width { width: w, procs: p }));
                    } else if was_live {
                        let dup = matches!(r, Err(MatrixError::AlreadyPlaced { .. }));
                        prop_assert!(dup);
                    } else {
                        let fits: Vec<usize> = (0..gb.len())
                            .filter(|&s| fits_brute(&gb[s], w as usize, o.proc_choice))
                            .collect();
                        let can_grow = !matches!(max, Some(mx) if gb.len() as u32 >= mx);
                        match r.unwrap() {
                            None => {
                                prop_assert!(fits.is_empty() && !can_grow);
                                prop_assert_eq!(&m, &before);
                            }
                            Some(a) => {
                                prop_assert_eq!(a.width(), w);
                                // Slot rule.
                                if fits.is_empty() {
                                    prop_assert_eq!(a.slot.idx(), gb.len());
                                } else {
                                    let free =
                                        |s: usize| gb[s].iter().filter(|c| c.is_none()).count();
                                    let want = match o.slot_allocation {
                                        SlotAllocation::FirstFit => fits[0],
                                        SlotAllocation::BestFit => {
                                            *fits.iter().min_by_key(|&&s| (free(s), s)).unwrap()
                                        }
                                    };
                                    prop_assert_eq!(a.slot.idx(), want);
                                }
                                // Took only free cells; changed nothing else.
                                let ga = grid(&m);
                                for (s, row) in ga.iter().enumerate() {
                                    for (q, c) in row.iter().enumerate() {
                                        let old = gb.get(s).and_then(|r| r[q]);
                                        if s == a.slot.idx() && a.procs.contains(&ProcId(q as u32))
                                        {
                                            prop_assert_eq!(old, None);
                                            prop_assert_eq!(*c, Some(x));
                                        } else {
                                            prop_assert_eq!(*c, old);
                                        }
                                    }
                                }
                                let want_procs = if a.slot.idx() < gb.len() {
                                    procs_brute(&gb[a.slot.idx()], w as usize, o)
                                } else {
                                    (0..w).map(ProcId).collect()
                                };
                                prop_assert_eq!(&a.procs, &want_procs);
                                if o.proc_choice == ProcChoice::Contiguous {
                                    prop_assert!(a.procs.windows(2).all(|v| v[1].0 == v[0].0 + 1));
                                }
                                // Probe agrees with allocate.
                                prop_assert_eq!(before.probe(w), Ok(Some(a.clone())));
                                live.insert(x, w);
                            }
                        }
                    }
                }
                Op::Release(x) => {
                    let x = GangId(x);
                    let r = m.release(x);
                    if live.remove(&x).is_some() {
                        let a = r.unwrap();
                        prop_assert_eq!(Some(&a), before.allocation(x));
                        // Exactly its cells freed; trailing empty rows dropped.
                        let ga = grid(&m);
                        prop_assert!(ga.len() <= gb.len());
                        for (s, row) in gb.iter().enumerate() {
                            for (q, &old) in row.iter().enumerate() {
                                let now = ga.get(s).and_then(|r| r[q]);
                                let want = if old == Some(x) { None } else { old };
                                prop_assert_eq!(now, want);
                            }
                        }
                    } else {
                        prop_assert_eq!(r, Err(MatrixError::UnknownGang { gang: x }));
                        prop_assert_eq!(&m, &before);
                    }
                }
                Op::Compact(mode) => {
                    let moves = m.compact(mode);
                    prop_assert!(m.num_slots() <= before.num_slots());
                    prop_assert!(m.occupied_slots().len() <= before.occupied_slots().len());
                    let moved: BTreeSet<GangId> = moves.iter().map(|mv| mv.gang).collect();
                    for mv in &moves {
                        prop_assert!(mv.to.slot < mv.from.slot);
                        prop_assert_eq!(mv.to.width(), mv.from.width());
                        if mode == Repack::SameProcs {
                            prop_assert_eq!(&mv.to.procs, &mv.from.procs);
                        }
                    }
                    for (x, a) in before.gangs() {
                        let now = m.allocation(x).unwrap();
                        if moved.contains(&x) {
                            prop_assert_eq!(
                                &moves.iter().rev().find(|mv| mv.gang == x).unwrap().to,
                                now
                            );
                        } else {
                            prop_assert_eq!(a, now);
                        }
                    }
                    if mode == Repack::AnyProcs {
                        // No empty slot below an occupied one.
                        prop_assert_eq!(m.occupied_slots().len() as u32, m.num_slots());
                    }
                }
            }
            // Live gangs other than the one touched never move (except compaction).
            if !matches!(op, Op::Compact(_)) {
                for (x, a) in before.gangs() {
                    if let Some(now) = m.allocation(x) {
                        prop_assert_eq!(a, now);
                    }
                }
            }
            audit(&m, &live)?;
        }
        Ok(())
    }

    fn check_next_slot(
        (p, max, o, ops): (u32, Option<u32>, MatrixOptions, Vec<Op>),
        work: Vec<bool>,
        after: Option<u32>,
    ) -> Result<(), TestCaseError> {
        let mut m = GangMatrix::with_options(p, max, o).unwrap();
        for op in ops {
            match op {
                Op::Alloc(x, w) => {
                    let _ = m.allocate(GangId(x), w);
                }
                Op::Release(x) => {
                    let _ = m.release(GangId(x));
                }
                Op::Compact(r) => {
                    m.compact(r);
                }
            }
        }
        let has = |x: GangId| work[x.0 as usize];
        let n = m.num_slots() as usize;
        let start = match after {
            Some(a) if (a as usize) + 1 < n => a as usize + 1,
            _ => 0,
        };
        let want = (0..n)
            .map(|k| (start + k) % n)
            .find(|&s| m.gangs_in(SlotId(s as u32)).into_iter().any(has))
            .map(|s| SlotId(s as u32));
        let got = m.next_slot(after.map(SlotId), has);
        prop_assert_eq!(got, want);
        if let Some(s) = got {
            prop_assert!(!m.gangs_in(s).is_empty());
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn matrix_invariants_under_random_operations((p, max, o, ops) in case()) {
            run_ops(p, max, o, ops)?;
        }

        #[test]
        fn next_slot_matches_brute_force_with_work(
            c in case(),
            work in proptest::collection::vec(any::<bool>(), 24),
            after in proptest::option::of(0u32..8),
        ) {
            check_next_slot(c, work, after)?;
        }
    }
}
