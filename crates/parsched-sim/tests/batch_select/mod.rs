//! A policy with full control (`machines::batch::select`): EASY written as
//! such a policy (start in order while jobs fit, reserve the first that does
//! not at its shadow time, the machine backfilling around it) gives exactly
//! the built-in EASY schedule; every kind of bad decision is an error naming
//! the job (strict) or a recorded violation (repair).
use crate::batch_indexed::workload;
use parsched_core::policy::batch::select::{
    Decision, OnViolation, SelectPolicy, SelectView, ViolationKind,
};
use parsched_core::policy::batch::{BatchKind, Easy};
use parsched_sim::machines::batch::{
    simulate, simulate_select, BatchConfig, BatchError, BatchPolicyKind, SelectOptions,
};
use parsched_sim::workloads::swf::BatchJob;
use proptest::prelude::*;

/// EASY as a full-control policy: the queue's head starts while it fits;
/// the first job that does not fit is reserved at its shadow time.
struct EasyBySelect;

impl SelectPolicy for EasyBySelect {
    fn select(&mut self, v: &SelectView<'_>, out: &mut Decision) -> Result<(), String> {
        let mut free = v.free;
        let mut ends: Vec<(u64, u32)> = v
            .running
            .iter()
            .map(|r| (r.requested_end.max(v.now + 1), r.procs))
            .collect();
        ends.sort_unstable();
        for j in v.queue {
            if j.procs <= free {
                free -= j.procs;
                out.start.push(j.id);
                ends.push((v.now + j.requested.max(1), j.procs));
                ends.sort_unstable();
            } else {
                let s = Easy::shadow(v.now, free, &ends, j.procs).expect("a shadow time");
                out.reserve.push((j.id, Some(s.time)));
                break;
            }
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn easy_written_as_a_select_policy_is_easy((procs, jobs, kill) in workload()) {
        let cfg = BatchConfig { policy: BatchPolicyKind::Easy, kill_on_overrun: kill,
                                ..BatchConfig::default() };
        let want = simulate(jobs.clone(), procs, &cfg).unwrap();
        let got = simulate_select(jobs, procs, &mut EasyBySelect, &cfg, SelectOptions::default())
            .unwrap();
        prop_assert_eq!(&got.outcomes, &want.outcomes);
        prop_assert!(got.violations.is_empty());
    }
}

/// A policy that answers from a script: at time `t`, the decision given.
struct Script(Vec<(u64, Decision)>, bool);

impl SelectPolicy for Script {
    fn select(&mut self, v: &SelectView<'_>, out: &mut Decision) -> Result<(), String> {
        if self.1 {
            return Err("raised ZeroDivisionError: division by zero".into());
        }
        if let Some((_, d)) = self.0.iter().find(|(t, _)| *t == v.now) {
            *out = d.clone();
        }
        Ok(())
    }
}

fn run(
    script: Vec<(u64, Decision)>,
    raises: bool,
    on_violation: OnViolation,
    fallback: Option<BatchKind>,
) -> Result<parsched_sim::machines::batch::BatchResult, BatchError> {
    // 4 processors. J1 (t=0, 2 procs, 10 s), J2 (0, 4 procs, 10 s),
    // J3 (0, 2 procs, 30 s), J4 (5, 1 proc, 5 s).
    let jobs = vec![
        BatchJob::new(1, 0, 10, 2, 10),
        BatchJob::new(2, 0, 10, 4, 10),
        BatchJob::new(3, 0, 30, 2, 30),
        BatchJob::new(4, 5, 5, 1, 5),
    ];
    let cfg = BatchConfig {
        policy: BatchPolicyKind::Fcfs,
        ..BatchConfig::default()
    };
    let opts = SelectOptions {
        on_violation,
        fallback,
        stall_passes: 50,
    };
    simulate_select(jobs, 4, &mut Script(script, raises), &cfg, opts)
}

fn d(start: &[i64], reserve: &[(i64, Option<u64>)], wake_at: Option<u64>) -> Decision {
    Decision {
        start: start.to_vec(),
        reserve: reserve.to_vec(),
        wake_at,
    }
}

/// Each bad decision: its error (strict) and its violation row (repair).
#[test]
fn bad_decisions_are_errors_or_violation_rows() {
    let later = |t: u64| (t, d(&[], &[], None));
    type Case = (Vec<(u64, Decision)>, bool, &'static str, ViolationKind);
    let cases: Vec<Case> = vec![
        // J1 then J2 (4 procs, 2 free): does not fit
        (
            vec![(0, d(&[1, 2], &[], Some(10))), later(10)],
            false,
            "job 2 needs 4 processors, 2 free",
            ViolationKind::DoesNotFit,
        ),
        // J1 twice, the second time while it runs
        (
            vec![(0, d(&[1], &[], Some(5))), (5, d(&[1], &[], None))],
            false,
            "job 1 is running",
            ViolationKind::NotWaiting,
        ),
        // J2 reserved at 10; J3 (2 procs until 35), started at 5, would delay it
        (
            vec![
                (0, d(&[1], &[(2, Some(10))], None)),
                (5, d(&[3], &[], None)),
            ],
            false,
            "would delay job 2's reservation",
            ViolationKind::BreaksReservation,
        ),
        // an unknown job and one not yet submitted
        (
            vec![(0, d(&[99], &[], None))],
            false,
            "job 99 is not a job of this run",
            ViolationKind::UnknownJob,
        ),
        (
            vec![(0, d(&[4], &[], None))],
            false,
            "job 4 is not submitted yet",
            ViolationKind::NotSubmitted,
        ),
        // a reservation in the past, one that cannot fit
        (
            vec![(0, d(&[1], &[(2, Some(5))], None))],
            false,
            "only 2 free at 5",
            ViolationKind::BadReservation,
        ),
        (
            vec![(0, d(&[], &[], Some(0)))],
            false,
            "wake_at 0 is not after now",
            ViolationKind::WakeInPast,
        ),
        // raising
        (
            vec![],
            true,
            "select raised ZeroDivisionError",
            ViolationKind::Raised,
        ),
        // never starting anything: nothing runs, nothing will happen
        (vec![], false, "stalled: ", ViolationKind::Stalled),
    ];
    for (script, raises, msg, kind) in cases {
        let e = run(script.clone(), raises, OnViolation::Strict, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains(msg) && e.contains(kind.name()), "{kind:?}: {e}");
        assert!(!e.contains('\n'));
        let r = run(script, raises, OnViolation::Repair, None).unwrap();
        assert!(
            r.violations
                .iter()
                .any(|v| v.kind == kind && v.message.contains(msg)),
            "{kind:?}: {:?}",
            r.violations
        );
        // the run still completes, with a valid schedule
        assert!(r.outcomes.iter().all(|o| o.end != u64::MAX));
    }
}

/// A raising policy with a fallback: the built-in runs the pass, each raise
/// is a row (strict or not), and the schedule is the built-in's.
#[test]
fn a_raising_policy_falls_back_to_the_built_in() {
    let r = run(vec![], true, OnViolation::Strict, Some(BatchKind::Fcfs)).unwrap();
    assert!(!r.violations.is_empty());
    assert!(r.violations.iter().all(|v| v.kind == ViolationKind::Raised));
    let starts: Vec<u64> = r.outcomes.iter().map(|o| o.start).collect();
    // FCFS: J1 at 0, J2 at 10 (needs all 4), J3 at 20, J4 at 20
    assert_eq!(starts, vec![0, 10, 20, 20]);
}

/// Reservations are kept: J2 reserved at 10 starts at 10 with no further
/// decision, and the machine's backfilling (policy = easy) starts J4 at 5
/// (it ends at 10) but not J3.
#[test]
fn reservations_are_kept_and_backfilled_around() {
    let jobs = vec![
        BatchJob::new(1, 0, 10, 2, 10),
        BatchJob::new(2, 0, 10, 4, 10),
        BatchJob::new(3, 0, 30, 2, 30),
        BatchJob::new(4, 5, 5, 1, 5),
    ];
    let cfg = BatchConfig {
        policy: BatchPolicyKind::Easy,
        ..BatchConfig::default()
    };
    let mut p = Script(vec![(0, d(&[1], &[(2, Some(10))], None))], false);
    let r = simulate_select(jobs, 4, &mut p, &cfg, SelectOptions::default()).unwrap();
    let starts: Vec<u64> = r.outcomes.iter().map(|o| o.start).collect();
    assert_eq!(starts, vec![0, 10, 20, 5]);
}
