//! Queue orders: the priority rules batch schedulers are compared under.
//!
//! A [`QueueOrder`] sorts the waiting jobs before a batch policy (FCFS, EASY,
//! conservative: `mod.rs`) sees them; the policy then starts, reserves and
//! backfills in that order instead of arrival order ("EASY-SJF" is EASY
//! under [`QueueOrder::Sjf`]). Each rule is a score, lowest first; ties keep
//! arrival order (a stable sort over the arrival-ordered queue).
//!
//! With `w` the job's wait so far (`now − submit`, the real wait: RLScheduler's
//! `HPCEnv` computes it from a `scheduled_time` that is −1 for every queued
//! job), `r` its requested time (at least 1 s), `n` its processors:
//!
//! | rule | score (lowest first) | source |
//! |---|---|---|
//! | `fcfs` | arrival | — |
//! | `sjf` | `r` | shortest (requested) job first |
//! | `ljf` | `−r` | longest job first |
//! | `smallest` | `n` | fewest processors first |
//! | `saf` | `r·n` | smallest area first |
//! | `wfp3` | `−(w/r)³·n` | W. Tang, Z. Lan, N. Desai, D. Buettner, "Fault-aware, utility-based job scheduling on Blue Gene/P systems", IEEE Cluster 2009 |
//! | `unicef` | `−w / (log₂(max(n, 2))·r)` | S. Vasupongayya, S.-H. Chiang, "On job fairness in non-preemptive parallel job scheduling", PDCS 2005 (the UNICEF policy); `max(n, 2)` keeps one-processor jobs finite (log₂ 1 = 0) |
//!
//! Scores are computed once per scheduling pass, at the pass's `now`.

use serde::{Deserialize, Serialize};

/// A priority rule for the waiting jobs (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum QueueOrder {
    /// Arrival order (the batch policies' own).
    #[default]
    Fcfs,
    /// Shortest requested time first.
    Sjf,
    /// Longest requested time first.
    Ljf,
    /// Fewest processors first.
    Smallest,
    /// Smallest area (requested time × processors) first.
    Saf,
    /// WFP3: largest (wait / requested)³ × processors first.
    Wfp3,
    /// UNICEF: largest wait / (log₂(max(processors, 2)) × requested) first.
    Unicef,
}

/// What a queue order knows of a waiting job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderJob {
    pub submit: u64,
    /// Requested (estimated) duration, seconds.
    pub requested: u64,
    pub procs: u32,
    /// The trace's user, group, queue and partition numbers (−1: unknown).
    pub user: i32,
    pub group: i32,
    pub queue: i32,
    pub partition: i32,
}

impl OrderJob {
    /// A job with unknown user, group, queue and partition.
    pub fn new(submit: u64, requested: u64, procs: u32) -> OrderJob {
        OrderJob {
            submit,
            requested,
            procs,
            user: -1,
            group: -1,
            queue: -1,
            partition: -1,
        }
    }
}

/// A queue order computed outside the core — a rule written in Python
/// (`parsched.simulate_batch(..., priority=f)`) — called once per
/// scheduling pass over the whole queue, never once per job.
pub trait QueueScorer {
    /// Appends to `out` one score per job of `jobs` (the queue, arrival
    /// order), lowest first, at `now` with `free` processors free. An error
    /// is the policy's message (it raised, or returned something else).
    fn scores(
        &mut self,
        now: u64,
        free: u32,
        jobs: &[OrderJob],
        out: &mut Vec<f64>,
    ) -> Result<(), String>;
}

/// Fills `perm` with the order of `scores` (lowest first, ties in arrival
/// order). Every score must be a number: the first NaN is returned as
/// `Err(position)`.
pub fn sort_by_scores(scores: &[f64], perm: &mut Vec<usize>) -> Result<(), usize> {
    if let Some(k) = scores.iter().position(|s| s.is_nan()) {
        return Err(k);
    }
    perm.clear();
    perm.extend(0..scores.len());
    perm.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]).then(a.cmp(&b)));
    Ok(())
}

impl QueueOrder {
    /// Every rule, in documentation order.
    pub const ALL: [QueueOrder; 7] = [
        QueueOrder::Fcfs,
        QueueOrder::Sjf,
        QueueOrder::Ljf,
        QueueOrder::Smallest,
        QueueOrder::Saf,
        QueueOrder::Wfp3,
        QueueOrder::Unicef,
    ];

    /// The job's score at `now` (lowest first); `arrival` is its position
    /// in the arrival-ordered queue (FCFS's score).
    pub fn score(self, j: &OrderJob, now: u64, arrival: usize) -> f64 {
        let r = j.requested.max(1) as f64;
        let n = j.procs as f64;
        let w = now.saturating_sub(j.submit) as f64;
        match self {
            QueueOrder::Fcfs => arrival as f64,
            QueueOrder::Sjf => r,
            QueueOrder::Ljf => -r,
            QueueOrder::Smallest => n,
            QueueOrder::Saf => r * n,
            QueueOrder::Wfp3 => -(w / r).powi(3) * n,
            QueueOrder::Unicef => -w / (n.max(2.0).log2() * r),
        }
    }

    /// Fills `perm` with the positions of `jobs` (arrival order) in this
    /// order at `now`: `perm[k]` is the arrival position of the k-th job.
    /// Ties keep arrival order. `scores` is scratch space.
    pub fn sort(self, jobs: &[OrderJob], now: u64, perm: &mut Vec<usize>, scores: &mut Vec<f64>) {
        perm.clear();
        perm.extend(0..jobs.len());
        if self == QueueOrder::Fcfs {
            return;
        }
        scores.clear();
        scores.extend(jobs.iter().enumerate().map(|(i, j)| self.score(j, now, i)));
        // (no NaN from these formulas)
        let _ = sort_by_scores(scores, perm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(submit: u64, requested: u64, procs: u32) -> OrderJob {
        OrderJob::new(submit, requested, procs)
    }

    #[test]
    fn scores_sort_stably_and_a_nan_is_named_by_position() {
        let mut p = Vec::new();
        sort_by_scores(&[2.0, 1.0, 2.0, -1.0], &mut p).unwrap();
        assert_eq!(p, vec![3, 1, 0, 2]);
        assert_eq!(sort_by_scores(&[1.0, f64::NAN, f64::NAN], &mut p), Err(1));
        // infinities are numbers
        sort_by_scores(&[f64::INFINITY, f64::NEG_INFINITY], &mut p).unwrap();
        assert_eq!(p, vec![1, 0]);
    }

    fn order(o: QueueOrder, jobs: &[OrderJob], now: u64) -> Vec<usize> {
        let (mut p, mut s) = (Vec::new(), Vec::new());
        o.sort(jobs, now, &mut p, &mut s);
        p
    }

    /// Four jobs on which the seven rules give seven different orders,
    /// worked out by hand at now = 100 (ties, marked =, keep arrival order):
    ///   job  submit  r    n   w   r·n   (w/r)³·n          w/(log2(max(n,2))·r)
    ///   0    20      200  16  80  3200  0.4³·16 = 1.024   80/(4·200) = 0.1
    ///   1    20      400  1   80  400   0.2³·1  = 0.008   80/(1·400) = 0.2
    ///   2    40      200  2   60  400   0.3³·2  = 0.054   60/(1·200) = 0.3
    ///   3    60      100  16  40  1600  0.4³·16 = 1.024   40/(4·100) = 0.1
    #[test]
    fn each_rule_gives_its_hand_worked_order() {
        let jobs = [j(20, 200, 16), j(20, 400, 1), j(40, 200, 2), j(60, 100, 16)];
        let cases = [
            (QueueOrder::Fcfs, vec![0, 1, 2, 3]),
            (QueueOrder::Sjf, vec![3, 0, 2, 1]), // 100, 200 = 200, 400
            (QueueOrder::Ljf, vec![1, 0, 2, 3]), // 400, 200 = 200, 100
            (QueueOrder::Smallest, vec![1, 2, 0, 3]), // 1, 2, 16 = 16
            (QueueOrder::Saf, vec![1, 2, 3, 0]), // 400 = 400, 1600, 3200
            (QueueOrder::Wfp3, vec![0, 3, 2, 1]), // 1.024 = 1.024, 0.054, 0.008
            (QueueOrder::Unicef, vec![2, 1, 0, 3]), // 0.3, 0.2, 0.1 = 0.1
        ];
        for (o, want) in cases {
            assert_eq!(order(o, &jobs, 100), want, "{o:?}");
        }
    }

    #[test]
    fn wfp3_and_unicef_use_the_real_wait() {
        // Same shape, different waits: the job that has waited longer wins,
        // and a job submitted "now" has score 0 (not a negative wait).
        let jobs = [j(90, 10, 4), j(0, 10, 4), j(100, 10, 4)];
        assert_eq!(order(QueueOrder::Wfp3, &jobs, 100), vec![1, 0, 2]);
        assert_eq!(order(QueueOrder::Unicef, &jobs, 100), vec![1, 0, 2]);
        let s = QueueOrder::Wfp3.score(&jobs[0], 100, 0);
        assert_eq!(s, -(1.0f64).powi(3) * 4.0);
        assert_eq!(QueueOrder::Wfp3.score(&jobs[2], 100, 2), 0.0);
        // a one-processor job's UNICEF score is finite (log2 of 2)
        let one = QueueOrder::Unicef.score(&j(0, 10, 1), 100, 0);
        assert_eq!(one, -10.0);
    }

    #[test]
    fn a_zero_requested_time_counts_as_one_second() {
        let jobs = [j(0, 0, 1), j(0, 1, 1)];
        assert_eq!(QueueOrder::Sjf.score(&jobs[0], 5, 0), 1.0);
        // equal scores: arrival order
        assert_eq!(order(QueueOrder::Sjf, &jobs, 5), vec![0, 1]);
        assert!(QueueOrder::ALL
            .iter()
            .all(|o| QueueOrder::score(*o, &jobs[0], 5, 0).is_finite()));
    }
}
