//! Queue orders: the priority rules batch schedulers are compared under.
//!
//! A [`QueueOrder`] sorts the waiting jobs before a batch policy (FCFS, EASY,
//! conservative: `mod.rs`) sees them; the policy then starts, reserves and
//! backfills in that order instead of arrival order ("EASY-SJF" is EASY
//! under `order = "sjf"`). Each rule is a score, lowest first; ties keep
//! arrival order (a stable sort over the arrival-ordered queue).
//!
//! Every rule is one row of [`ORDERS`] (name, score, formula, what goes
//! first, source, whether it is stateful); the configuration names of
//! `order` and `backfill_order`, the key docs, the Python list
//! (`_core.queue_orders()`) and the table of docs/policies/batch-orders.md
//! all come from it, so adding an order is adding its row (and its prose).
//!
//! With `w` the job's wait so far (`now − submit`, the real wait: RLScheduler's
//! `HPCEnv` computes it from a `scheduled_time` that is −1 for every queued
//! job), `r` its requested time (at least 1 s), `n` its processors. F1–F4's
//! `s` is the submit time, and the rules depend on its origin (they add a
//! logarithm of it): here `s` counts seconds from the first job's
//! submission, plus one (`s = submit − first submit + 1`, so the first
//! job's log₁₀ s is 0, not −∞). RLScheduler's F1 is the same formula with
//! `s` the trace's own submit time (docs/policies/batch-orders.md).
//!
//! Scores are computed once per scheduling pass, at the pass's `now`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::schema::Choice;

/// A job's score under a rule: `(job, now, arrival position, origin)`,
/// lowest first (see [`QueueOrder::score`]).
pub type ScoreFn = fn(&OrderJob, u64, usize, u64) -> f64;

/// One queue order: everything said about it, in one place.
#[derive(Debug, Clone, Copy)]
pub struct OrderRow {
    /// Its name in configurations (`order = "sjf"`).
    pub name: &'static str,
    /// Its score, lowest first.
    pub score: ScoreFn,
    /// The score as the documentation writes it.
    pub formula: &'static str,
    /// Which jobs go first (one line).
    pub doc: &'static str,
    /// Where the rule comes from (a citation, or — ).
    pub source: &'static str,
    /// Needs the machine's history (multifactor's fair share): `score`
    /// alone gives arrival order, the machine computes the real one.
    pub stateful: bool,
    /// `score` is the arrival position: sorting is skipped.
    pub arrival: bool,
}

const CS: &str = "D. Carastan-Santos, R. Y. de Camargo, \"Obtaining dynamic scheduling \
                  policies with simulation and machine learning\", SC 2017";

fn wait(j: &OrderJob, now: u64) -> f64 {
    now.saturating_sub(j.submit) as f64
}
fn req(j: &OrderJob) -> f64 {
    j.requested.max(1) as f64
}
fn log_s(j: &OrderJob, origin: u64) -> f64 {
    (j.submit.saturating_sub(origin) as f64 + 1.0).log10()
}

/// Every queue order, in documentation order: the one table.
pub const ORDERS: &[OrderRow] = &[
    OrderRow {
        name: "fcfs",
        score: |_, _, arrival, _| arrival as f64,
        formula: "arrival position",
        doc: "the earliest submitted",
        source: "—",
        stateful: false,
        arrival: true,
    },
    OrderRow {
        name: "sjf",
        score: |j, _, _, _| req(j),
        formula: "`r`",
        doc: "the shortest requested time",
        source: "shortest job first",
        stateful: false,
        arrival: false,
    },
    OrderRow {
        name: "ljf",
        score: |j, _, _, _| -req(j),
        formula: "`−r`",
        doc: "the longest requested time",
        source: "longest job first",
        stateful: false,
        arrival: false,
    },
    OrderRow {
        name: "smallest",
        score: |j, _, _, _| j.procs as f64,
        formula: "`n`",
        doc: "the fewest processors",
        source: "smallest job first",
        stateful: false,
        arrival: false,
    },
    OrderRow {
        name: "saf",
        score: |j, _, _, _| req(j) * j.procs as f64,
        formula: "`r·n`",
        doc: "the smallest requested area",
        source: "smallest area first",
        stateful: false,
        arrival: false,
    },
    OrderRow {
        name: "wfp3",
        score: |j, now, _, _| -(wait(j, now) / req(j)).powi(3) * j.procs as f64,
        formula: "`−(w/r)³·n`",
        doc: "large waits relative to length, wide jobs",
        source: "W. Tang, Z. Lan, N. Desai, D. Buettner, \"Fault-aware, utility-based job \
                 scheduling on Blue Gene/P systems\", IEEE Cluster 2009",
        stateful: false,
        arrival: false,
    },
    OrderRow {
        name: "unicef",
        score: |j, now, _, _| -wait(j, now) / ((j.procs as f64).max(2.0).log2() * req(j)),
        formula: "`−w / (log₂(max(n, 2))·r)`",
        doc: "large waits relative to length, narrow jobs",
        source: "S. Vasupongayya, S.-H. Chiang, \"On job fairness in non-preemptive parallel \
                 job scheduling\", PDCS 2005",
        stateful: false,
        arrival: false,
    },
    OrderRow {
        name: "f1",
        score: |j, _, _, o| req(j).log10() * j.procs as f64 + 870.0 * log_s(j, o),
        formula: "`log₁₀(r)·n + 870·log₁₀(s)`",
        doc: "early, then short and narrow",
        source: CS,
        stateful: false,
        arrival: false,
    },
    OrderRow {
        name: "f2",
        score: |j, _, _, o| req(j).sqrt() * j.procs as f64 + 25_600.0 * log_s(j, o),
        formula: "`√r·n + 25600·log₁₀(s)`",
        doc: "idem",
        source: "idem",
        stateful: false,
        arrival: false,
    },
    OrderRow {
        name: "f3",
        score: |j, _, _, o| req(j) * j.procs as f64 + 6_860_000.0 * log_s(j, o),
        formula: "`r·n + 6860000·log₁₀(s)`",
        doc: "idem",
        source: "idem",
        stateful: false,
        arrival: false,
    },
    OrderRow {
        name: "f4",
        score: |j, _, _, o| req(j) * (j.procs as f64).sqrt() + 530_000.0 * log_s(j, o),
        formula: "`r·√n + 530000·log₁₀(s)`",
        doc: "idem",
        source: "idem",
        stateful: false,
        arrival: false,
    },
    OrderRow {
        name: "multifactor",
        score: |_, _, arrival, _| arrival as f64,
        formula: "`−(w_age·A + w_fs·F + w_size·Z + w_part·P + w_qos·Q)`",
        doc: "Slurm's weighted factors: age, fair share with decay, size, partition, QOS",
        source: "Slurm's `priority/multifactor` plugin (classic fair share); its own page: \
                 [batch-multifactor.md](batch-multifactor.md)",
        stateful: true,
        arrival: true,
    },
];

/// Whether two names are equal (a `const fn`).
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// How many rows are stateless (the backfill orders but `priority`).
const STATELESS: usize = {
    let mut k = 0;
    let mut i = 0;
    while i < ORDERS.len() {
        if !ORDERS[i].stateful {
            k += 1;
        }
        i += 1;
    }
    k
};

const ORDER_NAMES: [&str; ORDERS.len()] = {
    let mut out = [""; ORDERS.len()];
    let mut i = 0;
    while i < ORDERS.len() {
        out[i] = ORDERS[i].name;
        i += 1;
    }
    out
};

const BACKFILL_NAMES: [&str; STATELESS + 1] = {
    let mut out = ["priority"; STATELESS + 1];
    let (mut i, mut k) = (0, 1);
    while i < ORDERS.len() {
        if !ORDERS[i].stateful {
            out[k] = ORDERS[i].name;
            k += 1;
        }
        i += 1;
    }
    out
};

/// A priority rule for the waiting jobs: a row of [`ORDERS`].
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct QueueOrder(u8);

impl QueueOrder {
    /// Arrival order (the batch policies' own; the default).
    pub const FCFS: QueueOrder = QueueOrder::named("fcfs");

    /// The rule of a name; panics (at compile time in a `const`) if there
    /// is none: for names written in the code.
    pub const fn named(name: &str) -> QueueOrder {
        let mut i = 0;
        while i < ORDERS.len() {
            if same(ORDERS[i].name, name) {
                return QueueOrder(i as u8);
            }
            i += 1;
        }
        panic!("no such queue order")
    }

    /// Every rule, in documentation order.
    pub fn all() -> impl Iterator<Item = QueueOrder> {
        (0..ORDERS.len()).map(|i| QueueOrder(i as u8))
    }

    /// The rule's row.
    pub fn row(self) -> &'static OrderRow {
        &ORDERS[self.0 as usize]
    }

    /// Whether the rule needs the machine's history (multifactor's fair
    /// share): [`QueueOrder::score`] cannot compute it alone.
    pub fn stateful(self) -> bool {
        self.row().stateful
    }
}

impl Default for QueueOrder {
    fn default() -> QueueOrder {
        QueueOrder::FCFS
    }
}

impl std::fmt::Debug for QueueOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.row().name)
    }
}

// (their names in configurations: the schema's `Choice`)
impl Choice for QueueOrder {
    const NAMES: &'static [&'static str] = &ORDER_NAMES;
    fn name(self) -> &'static str {
        self.row().name
    }
    fn parse(name: &str) -> Option<QueueOrder> {
        let i = ORDERS.iter().position(|r| r.name == name)?;
        Some(QueueOrder(i as u8))
    }
}

/// The order in which EASY examines backfill candidates: the queue's own
/// (`priority`, the default) or a stateless rule of its own (`sjf`: "EASY
/// with SJF backfilling", the queue in arrival order; Tsafrir, Etsion,
/// Feitelson, "Backfilling using system-generated predictions rather than
/// user runtime estimates", IEEE TPDS 18(6), 2007). Ties keep arrival order.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct BackfillOrder(Option<QueueOrder>);

impl BackfillOrder {
    /// The queue's order (`order`, or the Python priority).
    pub const PRIORITY: BackfillOrder = BackfillOrder(None);

    /// A stateless rule of [`ORDERS`] by name; panics (at compile time in
    /// a `const`) if there is none.
    pub const fn named(name: &str) -> BackfillOrder {
        let o = QueueOrder::named(name);
        assert!(!ORDERS[o.0 as usize].stateful, "not a backfill order");
        BackfillOrder(Some(o))
    }

    /// The rule, unless it is the queue's own.
    pub fn rule(self) -> Option<QueueOrder> {
        self.0
    }
}

impl std::fmt::Debug for BackfillOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Choice for BackfillOrder {
    const NAMES: &'static [&'static str] = &BACKFILL_NAMES;
    fn name(self) -> &'static str {
        self.0.map_or("priority", |o| o.row().name)
    }
    fn parse(name: &str) -> Option<BackfillOrder> {
        if name == "priority" {
            return Some(BackfillOrder::PRIORITY);
        }
        QueueOrder::parse(name)
            .filter(|o| !o.stateful())
            .map(|o| BackfillOrder(Some(o)))
    }
}

/// Serde by name, as configurations spell it.
macro_rules! serde_by_name {
    ($t:ty) => {
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                let name = std::borrow::Cow::<'de, str>::deserialize(d)?;
                <$t>::parse(&name)
                    .ok_or_else(|| serde::de::Error::unknown_variant(&name, <$t>::NAMES))
            }
        }
    };
}
serde_by_name!(QueueOrder);
serde_by_name!(BackfillOrder);

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
    /// The job's score at `now` (lowest first); `arrival` is its position
    /// in the arrival-ordered queue (FCFS's score), `origin` the first job's
    /// submit time (F1–F4's time origin).
    pub fn score(self, j: &OrderJob, now: u64, arrival: usize, origin: u64) -> f64 {
        (self.row().score)(j, now, arrival, origin)
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
        let row = self.row();
        if row.arrival {
            return;
        }
        let score = row.score;
        scores.clear();
        scores.extend(
            jobs.iter()
                .enumerate()
                .map(|(i, j)| score(j, now, i, origin)),
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
            (QueueOrder::named("fcfs"), vec![0, 1, 2, 3]),
            (QueueOrder::named("sjf"), vec![3, 0, 2, 1]), // 100, 200 = 200, 400
            (QueueOrder::named("ljf"), vec![1, 0, 2, 3]), // 400, 200 = 200, 100
            (QueueOrder::named("smallest"), vec![1, 2, 0, 3]), // 1, 2, 16 = 16
            (QueueOrder::named("saf"), vec![1, 2, 3, 0]), // 400 = 400, 1600, 3200
            (QueueOrder::named("wfp3"), vec![0, 3, 2, 1]), // 1.024 = 1.024, 0.054, 0.008
            (QueueOrder::named("unicef"), vec![2, 1, 0, 3]), // 0.3, 0.2, 0.1 = 0.1
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
        assert!(close(s(QueueOrder::named("f1"), 0), 12.0));
        assert!(close(s(QueueOrder::named("f1"), 1), 934.0));
        assert!(close(s(QueueOrder::named("f1"), 2), 1742.0));
        assert!(close(s(QueueOrder::named("f2"), 0), 1000f64.sqrt() * 4.0));
        assert!(close(
            s(QueueOrder::named("f2"), 1),
            10f64.sqrt() * 64.0 + 25_600.0
        ));
        assert!(close(s(QueueOrder::named("f3"), 2), 100.0 + 13_720_000.0));
        assert!(close(s(QueueOrder::named("f4"), 1), 80.0 + 530_000.0));
        // the first job (s = 1) is finite under every rule
        assert!(QueueOrder::all().all(|o| s(o, 0).is_finite()));
        // the early, long, narrow job first under all four
        for o in [
            QueueOrder::named("f1"),
            QueueOrder::named("f2"),
            QueueOrder::named("f3"),
            QueueOrder::named("f4"),
        ] {
            let (mut p, mut sc) = (Vec::new(), Vec::new());
            o.sort(&jobs, 2000, 1000, &mut p, &mut sc);
            assert_eq!(p, vec![0, 1, 2], "{o:?}");
        }
        // the origin matters: from 0, log10(s) of job 0 is log10(1001)
        assert!(close(
            QueueOrder::named("f1").score(&jobs[0], 2000, 0, 0),
            12.0 + 870.0 * 1001f64.log10()
        ));
    }

    #[test]
    fn wfp3_and_unicef_use_the_real_wait() {
        // Same shape, different waits: the job that has waited longer wins,
        // and a job submitted "now" has score 0 (not a negative wait).
        let jobs = [j(90, 10, 4), j(0, 10, 4), j(100, 10, 4)];
        assert_eq!(order(QueueOrder::named("wfp3"), &jobs, 100), vec![1, 0, 2]);
        assert_eq!(
            order(QueueOrder::named("unicef"), &jobs, 100),
            vec![1, 0, 2]
        );
        let s = QueueOrder::named("wfp3").score(&jobs[0], 100, 0, 0);
        assert_eq!(s, -(1.0f64).powi(3) * 4.0);
        assert_eq!(QueueOrder::named("wfp3").score(&jobs[2], 100, 2, 0), 0.0);
        // a one-processor job's UNICEF score is finite (log2 of 2)
        let one = QueueOrder::named("unicef").score(&j(0, 10, 1), 100, 0, 0);
        assert_eq!(one, -10.0);
    }

    #[test]
    fn a_zero_requested_time_counts_as_one_second() {
        let jobs = [j(0, 0, 1), j(0, 1, 1)];
        assert_eq!(QueueOrder::named("sjf").score(&jobs[0], 5, 0, 0), 1.0);
        // equal scores: arrival order
        assert_eq!(order(QueueOrder::named("sjf"), &jobs, 5), vec![0, 1]);
        assert!(QueueOrder::all().all(|o| o.score(&jobs[0], 5, 0, 0).is_finite()));
    }

    #[test]
    fn the_table_names_each_order_once_and_backfill_is_priority_and_the_stateless() {
        let mut seen = std::collections::HashSet::new();
        for o in QueueOrder::all() {
            assert!(seen.insert(o.name()), "{o:?} twice");
            assert_eq!(QueueOrder::parse(o.name()), Some(o));
            assert_eq!(QueueOrder::named(o.name()), o);
            // arrival-order rows score the arrival position
            if o.row().arrival {
                assert_eq!(o.score(&j(5, 7, 3), 9, 4, 0), 4.0, "{o:?}");
            }
        }
        assert_eq!(QueueOrder::NAMES.len(), ORDERS.len());
        assert_eq!(QueueOrder::parse("nope"), None);
        let stateless: Vec<&str> = ORDERS
            .iter()
            .filter(|r| !r.stateful)
            .map(|r| r.name)
            .collect();
        assert_eq!(BackfillOrder::NAMES[0], "priority");
        assert_eq!(&BackfillOrder::NAMES[1..], &stateless[..]);
        for n in BackfillOrder::NAMES {
            let b = BackfillOrder::parse(n).unwrap();
            assert_eq!(b.name(), *n);
            assert_eq!(b.rule().map(|o| o.name()), (*n != "priority").then_some(*n));
        }
        assert_eq!(BackfillOrder::parse("multifactor"), None);
        assert_eq!(BackfillOrder::default(), BackfillOrder::PRIORITY);
        assert_eq!(QueueOrder::default(), QueueOrder::FCFS);
    }

    #[test]
    fn orders_serialise_as_their_names() {
        #[derive(Debug, PartialEq, Serialize, Deserialize)]
        struct W {
            order: QueueOrder,
            backfill_order: BackfillOrder,
        }
        let w = W {
            order: QueueOrder::named("wfp3"),
            backfill_order: BackfillOrder::PRIORITY,
        };
        let text = toml::to_string(&w).unwrap();
        assert_eq!(text, "order = \"wfp3\"\nbackfill_order = \"priority\"\n");
        assert_eq!(toml::from_str::<W>(&text).unwrap(), w);
        let bad = "order = \"sjf\"\nbackfill_order = \"multifactor\"\n";
        let e = toml::from_str::<W>(bad).unwrap_err();
        assert!(e.to_string().contains("priority"), "{e}");
    }
}
