//! The faster batch policies (`Easy`, `Conservative`: early stops, skipped
//! profile steps, reused placements, an indexed queue) must give exactly the
//! schedules of the straightforward ones (`policy::batch::reference`): every
//! start, end, killed flag, processor interval, the queue-length series and
//! the summary, on random workloads (ties, zero run times, under- and
//! over-estimates, overruns, kills, jobs as wide as the machine). A second
//! property loads the machine with mostly over-estimated jobs, so that
//! early completions keep long queues re-planned: the path where
//! conservative checks the placements of earlier passes (and of passes
//! that stopped before a job) instead of searching afresh. A third loads
//! it with runs of identical jobs (the same processors and requested time,
//! different run times), as real logs' queues mostly are: the paths where
//! conservative defers and places a run's jobs together.
use parsched_core::policy::batch::{reference, BatchPolicy};
use parsched_sim::machines::batch::{
    simulate, simulate_with, BatchConfig, BatchPolicyKind, BatchResult,
};
use parsched_sim::workloads::swf::BatchJob;
use proptest::prelude::*;

fn same(a: &BatchResult, b: &BatchResult) -> Result<(), TestCaseError> {
    prop_assert_eq!(&a.outcomes, &b.outcomes);
    prop_assert_eq!(&a.queue_length, &b.queue_length);
    for i in 0..a.outcomes.len() {
        prop_assert_eq!(a.resources(i), b.resources(i));
    }
    let (mut sa, mut sb) = (a.summary.clone(), b.summary.clone());
    sa.wall_seconds = 0.0;
    sb.wall_seconds = 0.0;
    prop_assert_eq!(format!("{sa:?}"), format!("{sb:?}"));
    Ok(())
}

/// Conservative backfilling gives the reference's schedule.
fn conservative_is_the_reference(
    procs: u32,
    jobs: Vec<BatchJob>,
    kill: bool,
) -> Result<(), TestCaseError> {
    let cfg = BatchConfig {
        policy: BatchPolicyKind::Conservative,
        kill_on_overrun: kill,
        ..BatchConfig::default()
    };
    let fast = simulate(jobs.clone(), procs, &cfg).unwrap();
    let mut naive = reference::Conservative::default();
    let slow = simulate_with(jobs, procs, &mut naive, &cfg).unwrap();
    same(&fast, &slow)
}

/// Random workloads: bunches of simultaneous submissions and long gaps,
/// exact, under- and over-estimated requested times, zero run times (also
/// the stepper's and the select machine's properties').
pub(crate) fn workload() -> impl Strategy<Value = (u32, Vec<BatchJob>, bool)> {
    (1u32..48, any::<bool>())
        .prop_flat_map(|(procs, kill)| {
            let job = (0u64..40, 0u64..200, 1..=procs, 0u8..6, 0u64..400);
            (Just(procs), prop::collection::vec(job, 1..160), Just(kill))
        })
        .prop_map(|(procs, raw, kill)| {
            let mut t = 0;
            let jobs = raw
                .into_iter()
                .enumerate()
                .map(|(i, (gap, run, w, est, extra))| {
                    // bunches of simultaneous submissions and long gaps
                    t += if gap < 15 { 0 } else { gap * gap };
                    let requested = match est {
                        0 | 1 => run,
                        2 => run / 2,
                        3 => run + extra,
                        4 => run * 3 + 1,
                        _ => extra,
                    };
                    BatchJob::new(i as i64 + 1, t, run, w, requested)
                })
                .collect();
            (procs, jobs, kill)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn batch_indexed_policies_equal_the_reference((procs, jobs, kill) in workload()) {
        for (kind, mut naive) in [
            (BatchPolicyKind::Easy, Box::new(reference::Easy::default()) as Box<dyn BatchPolicy>),
            (BatchPolicyKind::Conservative, Box::new(reference::Conservative::default())),
        ] {
            let cfg = BatchConfig { policy: kind, kill_on_overrun: kill, ..BatchConfig::default() };
            let fast = simulate(jobs.clone(), procs, &cfg).unwrap();
            let slow = simulate_with(jobs.clone(), procs, naive.as_mut(), &cfg).unwrap();
            same(&fast, &slow)?;
        }
    }
}

/// Long queues of over-estimated jobs (2-10x, as users' estimates), a few
/// under-estimates and exact ones; arrivals faster than the machine
/// drains them.
fn loaded_workload() -> impl Strategy<Value = (u32, Vec<BatchJob>, bool)> {
    (2u32..64, any::<bool>())
        .prop_flat_map(|(procs, kill)| {
            let job = (0u64..6, 1u64..300, 1..=procs, 0u8..10, 0u64..10);
            (Just(procs), prop::collection::vec(job, 50..400), Just(kill))
        })
        .prop_map(|(procs, raw, kill)| {
            let mut t = 0;
            let jobs = raw
                .into_iter()
                .enumerate()
                .map(|(i, (gap, run, w, est, k))| {
                    t += gap * gap;
                    // narrow jobs are the usual ones
                    let w = if est % 3 == 0 { w } else { 1 + w / 8 };
                    let requested = match est {
                        0 => run,
                        1 => run / 2,
                        2 => run + k * 7,
                        _ => run * (2 + k % 9),
                    };
                    BatchJob::new(i as i64 + 1, t, run, w, requested)
                })
                .collect();
            (procs, jobs, kill)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn batch_indexed_conservative_under_early_completions((procs, jobs, kill) in loaded_workload()) {
        conservative_is_the_reference(procs, jobs, kill)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// Backfilling with reservation depth 1 is EASY (under any queue order
    /// and EASY's own backfill orders), and with a depth of at least the
    /// queue's length conservative backfilling; depth 3 lies between (a
    /// valid schedule, checked by the other properties' machine).
    #[test]
    fn reservation_depth_one_is_easy_and_unbounded_is_conservative(
        (procs, jobs, kill) in workload(), order_k in 0usize..4,
    ) {
        use parsched_core::policy::batch::{BackfillOrder, Depth, QueueOrder};
        let order = [QueueOrder::FCFS, QueueOrder::named("sjf"), QueueOrder::named("wfp3"), QueueOrder::named("f3")][order_k];
        for bf in [BackfillOrder::PRIORITY, BackfillOrder::named("sjf")] {
            let cfg = BatchConfig { policy: BatchPolicyKind::Easy, kill_on_overrun: kill, order,
                                    backfill_order: bf, ..BatchConfig::default() };
            let easy = simulate(jobs.clone(), procs, &cfg).unwrap();
            let d1 = simulate_with(jobs.clone(), procs, &mut Depth::new(1), &cfg).unwrap();
            prop_assert_eq!(&d1.outcomes, &easy.outcomes);
        }
        let cfg = BatchConfig { policy: BatchPolicyKind::Conservative, kill_on_overrun: kill,
                                order, ..BatchConfig::default() };
        let cons = simulate(jobs.clone(), procs, &cfg).unwrap();
        let all = simulate_with(jobs.clone(), procs, &mut Depth::new(jobs.len()), &cfg).unwrap();
        prop_assert_eq!(&all.outcomes, &cons.outcomes);
    }
}

/// As `loaded_workload`, each job submitted as a run of 1-10 copies at
/// once (an array job: the same processors and requested time), their run
/// times spread below and around the requested time.
fn runs_workload() -> impl Strategy<Value = (u32, Vec<BatchJob>, bool)> {
    (2u32..64, any::<bool>())
        .prop_flat_map(|(procs, kill)| {
            let job = (
                0u64..8,
                1u64..300,
                1..=procs,
                0u8..10,
                0u64..10,
                1usize..=10,
            );
            (Just(procs), prop::collection::vec(job, 20..120), Just(kill))
        })
        .prop_map(|(procs, raw, kill)| {
            let mut t = 0;
            let mut jobs = Vec::new();
            for (gap, run, w, est, k, copies) in raw {
                t += gap * gap;
                let w = if est % 3 == 0 { w } else { 1 + w / 8 };
                let requested = match est {
                    0 => run,
                    1 => run / 2,
                    _ => run * (2 + k % 9),
                };
                for c in 0..copies as u64 {
                    // (copies end early, on time or late, in turn)
                    let r = match (c + k) % 4 {
                        0 => run,
                        1 => run / 3,
                        2 => requested,
                        _ => (run * (c + 1)) % (requested + 2),
                    };
                    jobs.push(BatchJob::new(jobs.len() as i64 + 1, t, r, w, requested));
                }
            }
            (procs, jobs, kill)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn batch_indexed_conservative_on_runs_of_identical_jobs((procs, jobs, kill) in runs_workload()) {
        conservative_is_the_reference(procs, jobs, kill)?;
    }
}
