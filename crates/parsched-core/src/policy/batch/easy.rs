//! EASY backfilling (Lifka 1995; Mu'alem & Feitelson 2001, section 2): see
//! the module documentation of [`super`].

use super::*;

/// EASY backfilling (aggressive backfilling with one reservation).
#[derive(Debug, Clone, Default)]
pub struct Easy {
    ends: Vec<(u64, u32)>,
}

/// The head's reservation computed by [`Easy::shadow`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shadow {
    /// When the head job is expected to be able to start.
    pub time: u64,
    /// Processors free at `time` beyond the head's need.
    pub extra: u32,
}

impl Easy {
    /// The shadow time and extra processors for a job of `procs` processors,
    /// given `free` processors now and running jobs expected to end at
    /// `ends` (sorted by time). `None` if the job can never fit.
    pub fn shadow(now: u64, free: u32, ends: &[(u64, u32)], procs: u32) -> Option<Shadow> {
        if procs <= free {
            return Some(Shadow {
                time: now,
                extra: free - procs,
            });
        }
        let mut avail = free;
        let mut i = 0;
        while i < ends.len() {
            let t = ends[i].0;
            while i < ends.len() && ends[i].0 == t {
                avail += ends[i].1;
                i += 1;
            }
            if avail >= procs {
                return Some(Shadow {
                    time: t,
                    extra: avail - procs,
                });
            }
        }
        None
    }
}

impl BatchPolicy for Easy {
    fn name(&self) -> &'static str {
        "easy"
    }
    fn schedule(&mut self, view: &BatchView<'_>, start: &mut Vec<usize>) {
        let now = view.now;
        let mut free = view.free;
        let q = view.queue;
        // In order while they fit.
        let mut head = 0;
        while head < q.len() && q[head].procs <= free {
            free -= q[head].procs;
            start.push(head);
            head += 1;
        }
        if head >= q.len() || free == 0 {
            return;
        }
        // Reservation for the head, from requested end times (including the
        // jobs started above).
        expected_ends(&mut self.ends, view);
        if !start.is_empty() {
            self.ends.extend(
                start
                    .iter()
                    .map(|&i| (now.saturating_add(duration(&q[i])), q[i].procs)),
            );
            // (a sorted run and a few more: the stable sort merges them)
            self.ends.sort();
        }
        let Some(shadow) = Easy::shadow(now, free, &self.ends, q[head].procs) else {
            return;
        };
        let mut extra = shadow.extra;
        let in_order = |k: usize| view.backfill.map_or(k, |b| b[k]);
        for i in (0..q.len()).map(in_order).filter(|&i| i > head) {
            let c = &q[i];
            if c.procs > free {
                continue;
            }
            if now.saturating_add(duration(c)) <= shadow.time {
                free -= c.procs;
                start.push(i);
            } else if c.procs <= extra {
                free -= c.procs;
                extra -= c.procs;
                start.push(i);
            } else {
                continue;
            }
            if free == 0 {
                break;
            }
        }
    }
}
