//! The Gymnasium environment's core (`machines::batch::stepper`): an agent
//! that always picks the first job of the arrival-ordered window gives
//! exactly the built-in EASY schedule (without backfilling: FCFS), on random
//! workloads and on every shared trace; any agent gives a valid schedule in
//! which every job runs; the dense rewards of an episode add up to the
//! run's own metric.
use crate::batch_indexed::workload;
use parsched_sim::machines::batch::stepper::{
    Action, RewardMetric, RewardMode, StepConfig, Stepper, JOB_FEATURES, MACHINE_FEATURES,
};
use parsched_sim::machines::batch::{simulate, BatchConfig, BatchPolicyKind, BatchResult};
use parsched_sim::workloads::swf::{self, BatchJob};
use proptest::prelude::*;

/// Runs an episode, choosing with `pick` (given the stepper and its mask);
/// returns the result and the rewards.
fn episode(
    jobs: Vec<BatchJob>,
    procs: u32,
    cfg: &BatchConfig,
    sc: StepConfig,
    mut pick: impl FnMut(&Stepper, &[bool]) -> Action,
) -> (BatchResult, Vec<f64>) {
    let mut s = Stepper::new(jobs, procs, cfg, sc).unwrap();
    let w = sc.window;
    let mut obs = vec![0f32; w * JOB_FEATURES.len()];
    let mut machine = [0f32; MACHINE_FEATURES.len()];
    let mut mask = vec![false; w + 1];
    let mut rewards = Vec::new();
    while !s.done() {
        s.observe(&mut obs, &mut machine, &mut mask);
        assert!(
            mask.iter().any(|&m| m),
            "a decision point with no allowed action"
        );
        let a = pick(&s, &mask);
        rewards.push(s.step(a).unwrap());
    }
    (s.into_result(), rewards)
}

fn first(_: &Stepper, _: &[bool]) -> Action {
    Action::Pick(0)
}

fn same(a: &BatchResult, b: &BatchResult) -> Result<(), TestCaseError> {
    prop_assert_eq!(&a.outcomes, &b.outcomes);
    prop_assert_eq!(&a.queue_length, &b.queue_length);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn first_job_agent_is_easy_and_without_backfilling_fcfs((procs, jobs, kill) in workload()) {
        for (kind, backfill) in [(BatchPolicyKind::Easy, true), (BatchPolicyKind::Fcfs, false)] {
            for wait_action in [true, false] {
                let cfg = BatchConfig { policy: kind, kill_on_overrun: kill, ..BatchConfig::default() };
                let built_in = simulate(jobs.clone(), procs, &cfg).unwrap();
                let sc = StepConfig { backfill, wait_action, window: 4, ..StepConfig::default() };
                let (r, _) = episode(jobs.clone(), procs, &cfg, sc, first);
                same(&r, &built_in)?;
            }
        }
    }

    #[test]
    fn any_agent_gives_a_valid_schedule_and_dense_rewards_add_up(
        (procs, jobs, kill) in workload(), seed in any::<u64>(),
    ) {
        let cfg = BatchConfig { kill_on_overrun: kill, ..BatchConfig::default() };
        for metric in [
            RewardMetric::BoundedSlowdown, RewardMetric::Wait,
            RewardMetric::Turnaround, RewardMetric::Utilization,
        ] {
            let mut x = seed | 1;
            let sc = StepConfig { metric, mode: RewardMode::Dense, window: 5, ..StepConfig::default() };
            let (r, rewards) = episode(jobs.clone(), procs, &cfg, sc, |_, mask| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let allowed: Vec<usize> = (0..mask.len()).filter(|&k| mask[k]).collect();
                let k = allowed[(x % allowed.len() as u64) as usize];
                if k == mask.len() - 1 { Action::Wait } else { Action::Pick(k) }
            });
            crate::batch_machine::check_schedule(&r);
            if rewards.is_empty() {
                continue; // the core took every decision: no step
            }
            let total: f64 = rewards.iter().sum();
            let s = &r.summary;
            let want = match metric {
                RewardMetric::BoundedSlowdown => -s.avg_bounded_slowdown,
                RewardMetric::Wait => -s.avg_wait,
                RewardMetric::Turnaround => -s.avg_response,
                RewardMetric::Utilization => s.utilization,
            };
            prop_assert!((total - want).abs() <= 1e-9 * want.abs().max(1.0),
                "{metric:?}: rewards add up to {total}, the run's metric is {want}");
            // sparse: the metric at the last step only
            let sc = StepConfig { metric, mode: RewardMode::Sparse, wait_action: false, window: 5,
                                  ..StepConfig::default() };
            let (r2, rewards) = episode(jobs.clone(), procs, &cfg, sc, first);
            let s = &r2.summary;
            let want = match metric {
                RewardMetric::BoundedSlowdown => -s.avg_bounded_slowdown,
                RewardMetric::Wait => -s.avg_wait,
                RewardMetric::Turnaround => -s.avg_response,
                RewardMetric::Utilization => s.utilization,
            };
            // (an episode in which the core takes every decision has no step)
            let Some((last, rest)) = rewards.split_last() else { continue };
            prop_assert!(rest.iter().all(|&r| r == 0.0));
            prop_assert!((last - want).abs() <= 1e-9 * want.abs().max(1.0));
        }
    }
}

/// Every trace of `../shared/traces`: the first-job agent is EASY.
#[test]
fn first_job_agent_is_easy_on_every_shared_trace() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    if !dir.is_dir() {
        eprintln!("../shared/traces not found; skipped");
        return;
    }
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.ends_with(".swf.gz"))
        .collect();
    names.sort();
    assert!(names.len() >= 6, "{names:?}");
    for name in names {
        let trace = swf::load_file(dir.join(&name), &Default::default()).unwrap();
        let cfg = BatchConfig::default();
        let (jobs, procs, _) = parsched_sim::machines::batch::prepare(trace, &cfg).unwrap();
        let built_in = simulate(jobs.clone(), procs, &cfg).unwrap();
        let (r, _) = episode(jobs, procs, &cfg, StepConfig::default(), first);
        assert_eq!(r.outcomes, built_in.outcomes, "{name}");
        assert_eq!(r.queue_length, built_in.queue_length, "{name}");
    }
}

/// A wait, a reservation and a backfill by hand. Four processors:
/// J1 (0 s, 3 procs, 10 s), J2 (0 s, 4 procs, 5 s), J3 (0 s, 1 proc, 8 s
/// requested, 8 s run), J4 (0 s, 1 proc, 20 s).
/// At 0 the agent picks J1 (starts: 1 free), then J2 (does not fit:
/// reserved; shadow time 10, no extra processors). The core backfills J3
/// (ends at 8 <= 10) and not J4 (ends at 20 > 10). At 8 J3 ends: J4 still
/// may not start (it would end at 28 > 10); at 10 J1 ends and J2 starts, J4
/// waits for it (4 processors), so the agent is asked only at 15 — when J4
/// is the lone job and wait is not allowed, the core starts it itself.
#[test]
fn reservation_and_backfill_by_hand() {
    let jobs = vec![
        BatchJob::new(1, 0, 10, 3, 10),
        BatchJob::new(2, 0, 5, 4, 5),
        BatchJob::new(3, 0, 8, 1, 8),
        BatchJob::new(4, 0, 20, 1, 20),
    ];
    let cfg = BatchConfig::default();
    let mut s = Stepper::new(
        jobs,
        4,
        &cfg,
        StepConfig {
            window: 4,
            ..StepConfig::default()
        },
    )
    .unwrap();
    assert_eq!(s.now(), 0);
    assert_eq!(s.window().len(), 4);
    s.step(Action::Pick(0)).unwrap(); // J1 starts
    assert_eq!(s.now(), 0);
    assert_eq!(s.window_job(0), Some(1), "J2 heads the window");
    s.step(Action::Pick(0)).unwrap(); // J2 reserved, J3 backfilled
    assert!(s.done(), "the rest needs no decision");
    let r = s.into_result();
    let starts: Vec<u64> = r.outcomes.iter().map(|o| o.start).collect();
    assert_eq!(starts, vec![0, 10, 0, 15]);
    // A pick past the window and a wait with nothing to come are errors.
    let jobs = vec![BatchJob::new(1, 0, 10, 3, 10), BatchJob::new(2, 0, 5, 3, 5)];
    let sc = StepConfig {
        window: 4,
        ..StepConfig::default()
    };
    let mut s = Stepper::new(jobs, 4, &cfg, sc).unwrap();
    let e = s.step(Action::Pick(3)).unwrap_err().to_string();
    assert!(e.contains("empty window slot") && e.contains("0..2"), "{e}");
    let e = s.step(Action::Wait).unwrap_err().to_string();
    assert!(e.contains("wait is not allowed"), "{e}");
}

/// The stepper watches the thread's cancel flag on the engine's cadence,
/// across steps: set after 100 steps, it stops the episode with
/// `Interrupted` within CHECK_EVERY events (so fewer steps: each takes at
/// least one); never set, the same episode runs to the end.
#[test]
fn a_cancel_flag_stops_the_stepper_within_one_cadence() {
    use parsched_sim::cancel::{with_cancel, CHECK_EVERY};
    use parsched_sim::machines::batch::BatchError;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let n = 4 * CHECK_EVERY as i64;
    let jobs: Vec<BatchJob> = (0..n)
        .map(|i| BatchJob::new(i, 10 * i as u64, 5, 1, 5))
        .collect();
    let cfg = BatchConfig::default();
    let sc = StepConfig {
        window: 4,
        ..StepConfig::default()
    };
    let flag = Arc::new(AtomicBool::new(false));
    let (steps, err) = with_cancel(&flag, || {
        let mut s = Stepper::new(jobs.clone(), 1, &cfg, sc).unwrap();
        let mut k = 0u32;
        loop {
            if k == 100 {
                flag.store(true, Ordering::Relaxed);
            }
            match s.step(Action::Pick(0)) {
                Ok(_) => k += 1,
                Err(e) => return (k, e),
            }
            assert!(!s.done(), "the flag did not stop the episode");
        }
    });
    assert!(matches!(err, BatchError::Interrupted), "{err}");
    // (at least one event a step)
    assert!((100..100 + CHECK_EVERY).contains(&steps), "{steps}");
    let (r, _) = episode(jobs, 1, &cfg, sc, first);
    assert_eq!(r.outcomes.len(), n as usize);
}
