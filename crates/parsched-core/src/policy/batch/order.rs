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
//! | `f1` | `log₁₀(r)·n + 870·log₁₀(s)` | D. Carastan-Santos, R. Y. de Camargo, "Obtaining dynamic scheduling policies with simulation and machine learning", SC 2017 |
//! | `f2` | `√r·n + 25600·log₁₀(s)` | idem |
//! | `f3` | `r·n + 6860000·log₁₀(s)` | idem |
//! | `f4` | `r·√n + 530000·log₁₀(s)` | idem |
//!
//! F1–F4's `s` is the submit time, and the rules depend on its origin (they
//! add a logarithm of it): here `s` counts seconds from the first job's
//! submission, plus one (`s = submit − first submit + 1`, so the first job's
//! log₁₀ s is 0, not −∞). RLScheduler's F1 is the same formula with `s` the
//! trace's own submit time (docs/policies/batch-orders.md).
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
    /// Carastan-Santos & de Camargo's F1: log₁₀(r)·n + 870·log₁₀(s).
    F1,
    /// F2: √r·n + 25600·log₁₀(s).
    F2,
    /// F3: r·n + 6860000·log₁₀(s).
    F3,
    /// F4: r·√n + 530000·log₁₀(s).
    F4,
    /// Slurm's multifactor priority (age, fair share with decay, job size,
    /// partition, QOS: `multifactor.rs`). Stateful — the fair share is the
    /// machine's usage so far — so the machine computes it; a stateless
    /// caller of [`QueueOrder::score`] gets arrival order.
    Multifactor,
}

// (their names in configurations: the schema's `Choice`)
crate::choices!(QueueOrder {
    Fcfs => "fcfs",
    Sjf => "sjf",
    Ljf => "ljf",
    Smallest => "smallest",
    Saf => "saf",
    Wfp3 => "wfp3",
    Unicef => "unicef",
    F1 => "f1",
    F2 => "f2",
    F3 => "f3",
    F4 => "f4",
    Multifactor => "multifactor",
});
crate::choices!(BackfillOrder {
    Priority => "priority",
    Fcfs => "fcfs",
    Sjf => "sjf",
    Ljf => "ljf",
    Smallest => "smallest",
    Saf => "saf",
    Wfp3 => "wfp3",
    Unicef => "unicef",
    F1 => "f1",
    F2 => "f2",
    F3 => "f3",
    F4 => "f4",
});

/// The order in which EASY examines backfill candidates: the queue's own
/// (`priority`, the default) or a rule of its own (`sjf`: "EASY with SJF
/// backfilling", the queue in arrival order; Tsafrir, Etsion, Feitelson,
/// "Backfilling using system-generated predictions rather than user runtime
/// estimates", IEEE TPDS 18(6), 2007). Ties keep arrival order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum BackfillOrder {
    /// The queue's order (`order`, or the Python priority).
    #[default]
    Priority,
    Fcfs,
    Sjf,
    Ljf,
    Smallest,
    Saf,
    Wfp3,
    Unicef,
    F1,
    F2,
    F3,
    F4,
}

impl BackfillOrder {
    /// The rule, unless it is the queue's own.
    pub fn rule(self) -> Option<QueueOrder> {
        Some(match self {
            BackfillOrder::Priority => return None,
            BackfillOrder::Fcfs => QueueOrder::Fcfs,
            BackfillOrder::Sjf => QueueOrder::Sjf,
            BackfillOrder::Ljf => QueueOrder::Ljf,
            BackfillOrder::Smallest => QueueOrder::Smallest,
            BackfillOrder::Saf => QueueOrder::Saf,
            BackfillOrder::Wfp3 => QueueOrder::Wfp3,
            BackfillOrder::Unicef => QueueOrder::Unicef,
            BackfillOrder::F1 => QueueOrder::F1,
            BackfillOrder::F2 => QueueOrder::F2,
            BackfillOrder::F3 => QueueOrder::F3,
            BackfillOrder::F4 => QueueOrder::F4,
        })
    }
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

    /// Whether [`QueueScorer::observe`] wants to be called.
    fn observes(&self) -> bool {
        false
    }

    /// The jobs submitted and completed (trace ids) since the last call,
    /// batched per timestamp, before the pass at `now`.
    fn observe(&mut self, _now: u64, _submitted: &[i64], _completed: &[i64]) -> Result<(), String> {
        Ok(())
    }
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
    pub const ALL: [QueueOrder; 12] = [
        QueueOrder::Fcfs,
        QueueOrder::Sjf,
        QueueOrder::Ljf,
        QueueOrder::Smallest,
        QueueOrder::Saf,
        QueueOrder::Wfp3,
        QueueOrder::Unicef,
        QueueOrder::F1,
        QueueOrder::F2,
        QueueOrder::F3,
        QueueOrder::F4,
        QueueOrder::Multifactor,
    ];

    /// Whether the rule needs the machine's history (multifactor's fair
    /// share): [`QueueOrder::score`] cannot compute it alone.
    pub fn stateful(self) -> bool {
        self == QueueOrder::Multifactor
    }

    /// The job's score at `now` (lowest first); `arrival` is its position
    /// in the arrival-ordered queue (FCFS's score), `origin` the first job's
    /// submit time (F1–F4's time origin).
    pub fn score(self, j: &OrderJob, now: u64, arrival: usize, origin: u64) -> f64 {
        let r = j.requested.max(1) as f64;
        let n = j.procs as f64;
        let w = now.saturating_sub(j.submit) as f64;
        let log_s = || (j.submit.saturating_sub(origin) as f64 + 1.0).log10();
        match self {
            QueueOrder::F1 => r.log10() * n + 870.0 * log_s(),
            QueueOrder::F2 => r.sqrt() * n + 25_600.0 * log_s(),
            QueueOrder::F3 => r * n + 6_860_000.0 * log_s(),
            QueueOrder::F4 => r * n.sqrt() + 530_000.0 * log_s(),
            QueueOrder::Fcfs | QueueOrder::Multifactor => arrival as f64,
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
    pub fn sort(
        self,
        jobs: &[OrderJob],
        now: u64,
        origin: u64,
        perm: &mut Vec<usize>,
        scores: &mut Vec<f64>,
    ) {
        perm.clear();
        perm.extend(0..jobs.len());
        if matches!(self, QueueOrder::Fcfs | QueueOrder::Multifactor) {
            return;
        }
        scores.clear();
        scores.extend(
            jobs.iter()
                .enumerate()
                .map(|(i, j)| self.score(j, now, i, origin)),
        );
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
        o.sort(jobs, now, 0, &mut p, &mut s);
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

    /// F1–F4 by hand, origin 1000 (so s = submit − 999):
    ///   job  submit  s     r     n   log10 r  log10 s
    ///   0    1000    1     1000  4   3        0
    ///   1    1009    10    10    64  1        1
    ///   2    1099    100   100   1   2        2
    /// F1 = log10(r)·n + 870·log10(s):     12,       64 + 870 = 934,  2 + 1740 = 1742
    /// F2 = √r·n + 25600·log10(s):         126.49,   25802.4,         51210
    /// F3 = r·n + 6860000·log10(s):        4000,     6860640,         13720100
    /// F4 = r·√n + 530000·log10(s):        2000,     530080,          1060100
    #[test]
    fn f1_to_f4_by_hand_with_their_time_origin() {
        let jobs = [j(1000, 1000, 4), j(1009, 10, 64), j(1099, 100, 1)];
        let s = |o: QueueOrder, k: usize| o.score(&jobs[k], 2000, k, 1000);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * b.abs().max(1.0);
        assert!(close(s(QueueOrder::F1, 0), 12.0));
        assert!(close(s(QueueOrder::F1, 1), 934.0));
        assert!(close(s(QueueOrder::F1, 2), 1742.0));
        assert!(close(s(QueueOrder::F2, 0), 1000f64.sqrt() * 4.0));
        assert!(close(s(QueueOrder::F2, 1), 10f64.sqrt() * 64.0 + 25_600.0));
        assert!(close(s(QueueOrder::F3, 2), 100.0 + 13_720_000.0));
        assert!(close(s(QueueOrder::F4, 1), 80.0 + 530_000.0));
        // the first job (s = 1) is finite under every rule
        assert!(QueueOrder::ALL.iter().all(|o| s(*o, 0).is_finite()));
        // the early, long, narrow job first under all four
        for o in [
            QueueOrder::F1,
            QueueOrder::F2,
            QueueOrder::F3,
            QueueOrder::F4,
        ] {
            let (mut p, mut sc) = (Vec::new(), Vec::new());
            o.sort(&jobs, 2000, 1000, &mut p, &mut sc);
            assert_eq!(p, vec![0, 1, 2], "{o:?}");
        }
        // the origin matters: from 0, log10(s) of job 0 is log10(1001)
        assert!(close(
            QueueOrder::F1.score(&jobs[0], 2000, 0, 0),
            12.0 + 870.0 * 1001f64.log10()
        ));
    }

    #[test]
    fn wfp3_and_unicef_use_the_real_wait() {
        // Same shape, different waits: the job that has waited longer wins,
        // and a job submitted "now" has score 0 (not a negative wait).
        let jobs = [j(90, 10, 4), j(0, 10, 4), j(100, 10, 4)];
        assert_eq!(order(QueueOrder::Wfp3, &jobs, 100), vec![1, 0, 2]);
        assert_eq!(order(QueueOrder::Unicef, &jobs, 100), vec![1, 0, 2]);
        let s = QueueOrder::Wfp3.score(&jobs[0], 100, 0, 0);
        assert_eq!(s, -(1.0f64).powi(3) * 4.0);
        assert_eq!(QueueOrder::Wfp3.score(&jobs[2], 100, 2, 0), 0.0);
        // a one-processor job's UNICEF score is finite (log2 of 2)
        let one = QueueOrder::Unicef.score(&j(0, 10, 1), 100, 0, 0);
        assert_eq!(one, -10.0);
    }

    #[test]
    fn a_zero_requested_time_counts_as_one_second() {
        let jobs = [j(0, 0, 1), j(0, 1, 1)];
        assert_eq!(QueueOrder::Sjf.score(&jobs[0], 5, 0, 0), 1.0);
        // equal scores: arrival order
        assert_eq!(order(QueueOrder::Sjf, &jobs, 5), vec![0, 1]);
        assert!(QueueOrder::ALL
            .iter()
            .all(|o| QueueOrder::score(*o, &jobs[0], 5, 0, 0).is_finite()));
    }
}
