//! Integration tests of the simulator: queueing-theory validation and
//! property tests over random configurations (one test binary: the batch
//! policies' equality with the reference ones is in `batch_indexed/`, the
//! SWF mutation fuzzer in `fuzz_swf/`).

mod batch_indexed;
mod batch_select;
mod batch_stepper;
mod fuzz_swf;

use parsched_core::time::TICKS_PER_UNIT;
use parsched_sim::machines::pools::{
    run, ParallelismMode, PoolsConfig, RunOptions, SpanningMode, Value,
};
use proptest::prelude::*;

fn no_overheads(mut c: PoolsConfig) -> PoolsConfig {
    for k in ["W", "S", "r", "c"] {
        c.set(k, &Value::Float(0.0)).unwrap();
    }
    c
}

/// With D = 1 on one processor, no overheads and a small time slice, the model
/// is an M/G/1 round-robin queue close to processor sharing, whose mean
/// response time is E[S] / (1 − ρ) whatever the service distribution.
#[test]
fn mg1_round_robin_matches_processor_sharing() {
    for load in [0.3, 0.7] {
        let cfg = no_overheads(PoolsConfig {
            procs: 1,
            pool_size: 1,
            mean_parallelism: 1.0,
            load,
            slice: 0.5,
            jobs: 40_000,
            warmup: 2_000,
            reps: 4,
            seed: 5,
            ..Default::default()
        });
        let r = run(
            &cfg,
            RunOptions {
                workers: 2,
                records: false,
                audit: false,
            },
            None,
        )
        .unwrap();
        let es = 10.0 + 100.0 + 10.0;
        let expected = es / (1.0 - load);
        let got = r.summary.mean_response_time;
        let rel = (got - expected).abs() / expected;
        assert!(
            rel < 0.04,
            "L={load}: simulated {got:.1}, M/G/1-PS {expected:.1} ({:.1}% off)",
            rel * 100.0
        );
        // Utilisation without overheads equals the offered load.
        assert!(
            (r.summary.utilization - load).abs() < 0.02,
            "U = {}",
            r.summary.utilization
        );
        assert!(r.summary.context_switches > 0);
    }
}

/// A system with ample processors and no overheads gives every job its
/// minimum: INIT + the longest PARA thread + FINAL (about 127 at D = 20).
#[test]
fn light_load_approaches_the_paper_lower_bound() {
    let cfg = no_overheads(PoolsConfig {
        load: 0.02,
        pool_size: 60,
        jobs: 3_000,
        warmup: 100,
        reps: 2,
        ..Default::default()
    });
    let r = run(&cfg, RunOptions::default(), None).unwrap();
    let rt = r.summary.mean_response_time;
    assert!((rt - 127.0).abs() < 4.0, "{rt}");
    assert!((r.summary.actual_parallelism - 20.0).abs() < 1.0);
}

fn arb_config() -> impl Strategy<Value = PoolsConfig> {
    (
        (1u32..=16, 0usize..8, 0.1f64..0.9, 0.0f64..1.0, 0.2f64..20.0),
        (
            0.0f64..2.0,
            0.0f64..=1.0,
            0u32..6,
            0.0f64..0.05,
            0.0f64..0.05,
            0.0f64..0.05,
        ),
        (
            0u8..3,
            0u8..2,
            0u8..2,
            20u64..120,
            any::<u64>(),
            0.0f64..15.0,
        ),
    )
        .prop_map(
            |((p, pi, l, dfrac, t), (f, g, p0, w, s, rc), (sp, par, comb, jobs, seed, spread))| {
                let divs: Vec<u32> = (1..=p).filter(|d| p % d == 0).collect();
                let pool_size = divs[pi % divs.len()];
                let dmax = (p as f64 + 1.0) / 2.0;
                let d = if p == 1 {
                    1.0
                } else {
                    1.0 + dfrac * (dmax - 1.0) * 0.999
                };
                let mut c = PoolsConfig {
                    procs: p,
                    pool_size,
                    load: l,
                    mean_parallelism: d,
                    slice: t,
                    f,
                    g,
                    jobs,
                    warmup: jobs / 10,
                    reps: 1,
                    seed,
                    spread,
                    spanning: [
                        SpanningMode::None,
                        SpanningMode::Limited,
                        SpanningMode::Unlimited,
                    ][sp as usize],
                    parallelism: [ParallelismMode::Restricted, ParallelismMode::Unrestricted]
                        [par as usize],
                    ..Default::default()
                };
                c.overheads.p0 = p0;
                c.overheads.w = w;
                c.overheads.s = s;
                c.overheads.r = rc;
                c.overheads.c = rc;
                if comb == 1 {
                    c.set("combine", &Value::Str("multiply".into())).unwrap();
                }
                c
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Invariants hold after every event (the audit: no processor runs two
    /// threads, no thread is in two places, no pool idles with work queued,
    /// threads stay in their pools); every job finishes; CPU time charged is
    /// the inflated demand plus the switch overheads; runs are reproducible.
    #[test]
    fn random_configurations_keep_invariants(cfg in arb_config()) {
        let opts = RunOptions { workers: 1, audit: true, records: true };
        let r = run(&cfg, opts, None).unwrap();
        let rep = &r.reps[0];
        prop_assert_eq!(rep.stats.jobs_finished, cfg.jobs);
        prop_assert_eq!(rep.records.len() as u64, cfg.jobs);
        prop_assert_eq!(rep.stats.busy_work, rep.stats.demand);
        for j in &rep.records {
            prop_assert!(j.a >= 1 && j.a <= j.d);
            prop_assert!(j.arrival <= j.init_start && j.init_start <= j.para_start);
            prop_assert!(j.para_start <= j.para_end && j.para_end <= j.final_start && j.final_start <= j.finish);
            prop_assert!(j.pools_used >= 1 && j.pools_used <= cfg.procs / cfg.pool_size);
            if cfg.spanning == SpanningMode::None {
                prop_assert_eq!(j.pools_used, 1);
            }
            if cfg.parallelism == ParallelismMode::Unrestricted {
                prop_assert_eq!(j.a, j.d);
            }
        }
        // Overheads are bounded by the number of switches times the largest cost.
        let ov = cfg.overheads;
        let max_cost = ov.contention(cfg.pool_size) + ov.c.max(ov.c * ov.t);
        let max_ticks = (max_cost * TICKS_PER_UNIT as f64).round() as u64 + 1;
        prop_assert!(rep.stats.busy_overhead <= rep.stats.context_switches * max_ticks);
        let again = run(&cfg, opts, None).unwrap();
        prop_assert_eq!(&again.reps[0].records, &rep.records);
        prop_assert_eq!(again.summary.events, r.summary.events);
    }

    /// With no demand spread, the CPU time charged can be recomputed from the
    /// job records alone: INIT + FINAL + PARA work inflated by 1 + w + s.
    #[test]
    fn charged_time_equals_inflated_demand(cfg in arb_config()) {
        let mut cfg = cfg;
        cfg.spread = 0.0;
        let r = run(&cfg, RunOptions { workers: 1, audit: false, records: true }, None).unwrap();
        let rep = &r.reps[0];
        let ov = cfg.overheads;
        let p = cfg.pool_size;
        let mut expected = 0.0f64;
        let mut slack = 0u64;
        for j in &rep.records {
            let para = cfg.para_unit * j.d as f64;
            let infl = ov.inflation(p, j.pools_used, p as f64);
            expected += cfg.init + cfg.final_ + para * infl;
            slack += j.a as u64 + 2;
        }
        let expected_ticks = expected * TICKS_PER_UNIT as f64;
        let diff = (rep.stats.busy_work as f64 - expected_ticks).abs();
        prop_assert!(diff <= slack as f64 + 1e-6 * expected_ticks, "charged {} vs expected {}", rep.stats.busy_work, expected_ticks);
    }

    /// Results do not depend on how many threads run the replications.
    #[test]
    fn replications_independent_of_workers(seed in any::<u64>()) {
        let cfg = PoolsConfig { procs: 12, pool_size: 4, mean_parallelism: 4.0, jobs: 150, warmup: 10, reps: 3, seed, ..Default::default() };
        let a = run(&cfg, RunOptions { workers: 1, ..Default::default() }, None).unwrap();
        let b = run(&cfg, RunOptions { workers: 3, ..Default::default() }, None).unwrap();
        prop_assert_eq!(a.summary.rep_means, b.summary.rep_means);
        for (x, y) in a.reps.iter().zip(&b.reps) {
            prop_assert_eq!(&x.records, &y.records);
        }
    }
}

/// Common random numbers: two policies run on the same seed see the same jobs
/// (arrival times and desired parallelism).
#[test]
fn policies_see_the_same_jobs() {
    let base = PoolsConfig {
        jobs: 500,
        warmup: 0,
        reps: 1,
        ..Default::default()
    };
    let other = PoolsConfig {
        pool_size: 10,
        spanning: SpanningMode::Unlimited,
        ..base.clone()
    };
    let a = run(&base, RunOptions::default(), None).unwrap();
    let b = run(&other, RunOptions::default(), None).unwrap();
    let key = |r: &parsched_sim::machines::pools::PoolsResult| {
        r.reps[0]
            .records
            .iter()
            .map(|j| (j.arrival.to_bits(), j.d))
            .collect::<Vec<_>>()
    };
    assert_eq!(key(&a), key(&b));
    assert_ne!(a.summary.mean_response_time, b.summary.mean_response_time);
}

// ---- Seed 001's sync machine (parsched_sim::machines::barrier) ----

mod sync_machine {
    use parsched_sim::machines::barrier::{
        run, Competitors, ComputeDist, SyncConfig, SyncOptions, SyncResult, SyncSched,
        WaitStrategy, Wakeup,
    };
    use proptest::prelude::*;

    fn arb_sync() -> impl Strategy<Value = SyncConfig> {
        (
            (1u32..5, 0u32..3, 1u32..4, 20u64..300),
            (
                0.0f64..2.0,
                0.0f64..2.0,
                0.0f64..0.3,
                0.5f64..10.0,
                0.0f64..0.5,
            ),
            (
                0.0f64..3.0,
                0usize..4,
                0.0f64..1.0,
                any::<bool>(),
                any::<bool>(),
            ),
            (any::<bool>(), any::<bool>(), any::<bool>(), 0u64..1000),
        )
            .prop_map(
                |(
                    (n, extra, l, k),
                    (grain, var, bc, tq, tcs),
                    (alpha, wait, spin_limit, local, compute),
                    (priority, skew, shuffle, seed),
                )| SyncConfig {
                    n,
                    l,
                    procs: Some(n + extra),
                    k,
                    grain,
                    var,
                    // Both compute distributions, chosen by a bit of the seed.
                    samples: Vec::new(),
                    dist: if seed % 2 == 0 {
                        ComputeDist::Uniform
                    } else {
                        ComputeDist::Exponential
                    },
                    barrier_cost: bc.max(0.001),
                    tq,
                    // (yield-waiting needs τcs > 0)
                    tcs: tcs.min(tq * 0.5).max(if wait == 3 { 0.001 } else { 0.0 }),
                    alpha,
                    wait: [
                        WaitStrategy::Busy,
                        WaitStrategy::Block,
                        WaitStrategy::TwoPhase,
                        WaitStrategy::Yield,
                    ][wait],
                    spin_limit,
                    wakeup: if priority {
                        Wakeup::Priority
                    } else {
                        Wakeup::Tail
                    },
                    sched: if local {
                        SyncSched::Local
                    } else {
                        SyncSched::Gang
                    },
                    competitors: if compute {
                        Competitors::Compute
                    } else {
                        Competitors::Same
                    },
                    max_events: parsched_sim::machines::barrier::DEFAULT_MAX_EVENTS,
                    skew,
                    shuffle,
                    batches: 5,
                    seed,
                },
            )
    }

    fn strip(mut r: SyncResult) -> SyncResult {
        r.events = 0;
        r.max_pending = 0;
        r.wall_seconds = 0.0;
        r
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Every invariant holds after every event (audit: threads only on
        /// their own processor, inside their gang's slot under gang
        /// scheduling, blocked threads off processors and queues, barrier
        /// and runnable counts consistent); the measured gang finishes; the
        /// batched fast path gives exactly the event-by-event result; runs
        /// are reproducible; pending events stay bounded.
        #[test]
        fn sync_random_configurations_keep_invariants(cfg in arb_sync()) {
            let fast = SyncOptions { audit: true, fast: true };
            let slow = SyncOptions { audit: true, fast: false };
            let a = run(&cfg, fast).unwrap();
            prop_assert_eq!(a.iterations, cfg.k);
            prop_assert!(a.time_per_iter >= cfg.grain + cfg.barrier_cost - 1e-6);
            prop_assert!(a.useful_time + a.busy_wait_time <= cfg.procs() as f64 * a.end + 1e-6);
            prop_assert!(a.max_pending <= 3 * cfg.procs() as usize + 4);
            if cfg.wait == WaitStrategy::Block {
                prop_assert_eq!(a.busy_wait_time, 0.0);
            }
            if cfg.wait == WaitStrategy::Busy {
                prop_assert_eq!(a.blocking_events, 0);
            }
            let b = run(&cfg, slow).unwrap();
            prop_assert_eq!(strip(a.clone()), strip(b));
            let c = run(&cfg, fast).unwrap();
            prop_assert!(a.same_simulation(&c));
        }
    }
}

/// Batch space-sharing (issue 4): hand-worked instances with every start
/// time written down, the traces of `../shared/traces/`, determinism.
mod batch_machine {
    use parsched_core::Value;
    use parsched_sim::machines::batch::{
        run_loaded, simulate, BatchConfig, BatchPolicyKind, BatchResult,
    };
    use parsched_sim::workloads::swf::{self, BatchJob};
    use std::path::PathBuf;

    /// (submit, runtime, procs, requested)
    type J = (u64, u64, u32, u64);

    fn jobs(js: &[J]) -> Vec<BatchJob> {
        js.iter()
            .enumerate()
            .map(|(i, &(s, r, p, q))| BatchJob::new(i as i64 + 1, s, r, p, q))
            .collect()
    }

    fn starts(procs: u32, js: &[J], policy: &str) -> Vec<u64> {
        let mut c = BatchConfig::default();
        c.set("policy", &Value::Str(policy.into())).unwrap();
        let r = simulate(jobs(js), procs, &c).unwrap();
        check_schedule(&r);
        r.outcomes.iter().map(|o| o.start).collect()
    }

    /// Never more processors in use than the machine has; every job starts
    /// after its submission and runs exactly its run time (space sharing).
    pub(super) fn check_schedule(r: &BatchResult) {
        let mut ev: Vec<(u64, i64)> = Vec::new();
        for (j, o) in r.jobs.iter().zip(&r.outcomes) {
            assert!(
                o.start >= j.submit && o.start != u64::MAX,
                "job {} never started",
                j.id
            );
            let run = if o.killed { j.requested } else { j.runtime };
            if r.policy == "gang" {
                // Time-sliced: at least its run time between start and end.
                assert!(o.end - o.start >= run);
            } else {
                assert_eq!(o.end - o.start, run);
                ev.push((o.start, j.procs as i64));
                ev.push((o.end, -(j.procs as i64)));
            }
        }
        // Releases before acquisitions at equal times.
        ev.sort();
        let mut used = 0i64;
        for (_, d) in ev {
            used += d;
            assert!(
                used <= r.procs as i64,
                "overcommitted: {used} > {}",
                r.procs
            );
        }
    }

    fn all_three(procs: u32, js: &[J], fcfs: &[u64], easy: &[u64], cons: &[u64]) {
        assert_eq!(starts(procs, js, "fcfs"), fcfs, "fcfs");
        assert_eq!(starts(procs, js, "easy"), easy, "easy");
        assert_eq!(starts(procs, js, "conservative"), cons, "conservative");
    }

    /// 1. A short job backfills past a blocked head (FCFS makes it wait).
    #[test]
    fn hand_01_backfill_past_blocked_head() {
        // J1 2 procs 0..10; J2 needs all 4: shadow 10, extra 0; J3 (s1, 1
        // proc, 2 s) ends at 3 <= 10: backfills at 1.
        all_three(
            4,
            &[(0, 10, 2, 10), (0, 5, 4, 5), (1, 2, 1, 2)],
            &[0, 10, 15],
            &[0, 10, 1],
            &[0, 10, 1],
        );
    }

    /// 2. A candidate that would delay the reservation must wait; one ending
    ///    exactly at the shadow time backfills.
    #[test]
    fn hand_02_candidate_that_would_delay_waits() {
        // J1 3 procs 0..10 → free 1. J2 (4) head: shadow 10, extra 0.
        // J3 (1 proc, 20 s) would run past 10 on a processor J2 needs: waits.
        // J4 (1 proc, 10 s) ends exactly at 10: backfills at 0.
        // At 10 J1 and J4 end, J2 runs 10..15, then J3 at 15.
        all_three(
            4,
            &[(0, 10, 3, 10), (0, 5, 4, 5), (0, 20, 1, 20), (0, 10, 1, 10)],
            &[0, 10, 15, 15],
            &[0, 10, 15, 0],
            &[0, 10, 15, 0],
        );
    }

    /// 3. EASY protects only the head: it backfills a job that delays the
    ///    second queued job; conservative does not.
    #[test]
    fn hand_03_easy_delays_second_job_conservative_does_not() {
        // J1 2 procs 0..10. J2 (3, 5 s) head: shadow 10, extra 1.
        // J3 (4, 5 s) reserved by conservative at 15.
        // J4 (1, 20 s): EASY backfills it on the extra processor (0..20),
        // so J3 waits for it: 20. Conservative sees J4 would overlap J3's
        // [15, 20) and reserves J4 at 20.
        all_three(
            4,
            &[(0, 10, 2, 10), (0, 5, 3, 5), (0, 5, 4, 5), (0, 20, 1, 20)],
            &[0, 10, 15, 20],
            &[0, 10, 20, 0],
            &[0, 10, 15, 20],
        );
    }

    /// 4. Jobs ending earlier than requested: reservations move earlier.
    #[test]
    fn hand_04_early_completion_moves_reservations() {
        // J1 3 procs requests 10 s, ends at 4. J2 (4) head: shadow 10.
        // J3 (1, 8 s) ends at 8 <= 10: backfills at 0. At 4 J1 ends early:
        // free 3, J2 still cannot start; new shadow = J3's requested end 8.
        // J4 (s5, 2 procs, runs 2 s, requests 3) ends by 8: backfills at 5.
        // J2 starts when J3 ends, at 8. FCFS: J2 at 4, J3 and J4 at 9.
        all_three(
            4,
            &[(0, 4, 3, 10), (0, 5, 4, 5), (0, 8, 1, 8), (5, 2, 2, 3)],
            &[0, 4, 9, 9],
            &[0, 8, 0, 5],
            &[0, 8, 0, 5],
        );
    }

    /// 5. A job as wide as the machine.
    #[test]
    fn hand_05_job_as_wide_as_the_machine() {
        // 8 procs. J2 needs all 8: reserved at 10 (J1's end) until 20.
        // J3 (s2, 2 procs, 3 s) ends at 5: backfills. J4 (s2, 2 procs, 20 s)
        // would overlap J2: waits until 20.
        all_three(
            8,
            &[(0, 10, 2, 10), (0, 10, 8, 10), (2, 3, 2, 3), (2, 20, 2, 20)],
            &[0, 10, 20, 20],
            &[0, 10, 2, 20],
            &[0, 10, 2, 20],
        );
    }

    /// 6. Ties: a completion and three submissions at the same time; the
    ///    completion is handled first, submissions in trace order.
    #[test]
    fn hand_06_completion_and_submissions_at_equal_time() {
        // J1 holds the machine until 5. At 5: J1 ends, then J2 (3), J3 (2),
        // J4 (1, 1 s) arrive. J2 starts at 5. J3 head: shadow 10, extra 2.
        // EASY/conservative backfill J4 (ends 6) at 5; FCFS keeps it behind J3.
        all_three(
            4,
            &[(0, 5, 4, 5), (5, 5, 3, 5), (5, 5, 2, 5), (5, 1, 1, 1)],
            &[0, 5, 10, 10],
            &[0, 5, 10, 5],
            &[0, 5, 10, 5],
        );
    }

    /// 7. EASY's extra processors: a long job backfills if it uses only the
    ///    processors the head leaves free at the shadow time.
    #[test]
    fn hand_07_extra_processors() {
        // 10 procs. J1 6 procs 0..100. J2 (8) head: shadow 100, extra 2.
        // J3 (3, 500 s): ends after 100 and 3 > 2: waits. J4 (2, 500 s): 2 <=
        // extra: starts at 0. J5 (2, 50 s) ends before 100: starts at 0.
        // J2 at 100 (J1 ends; J4 still holds 2), J3 when J2 ends at 110.
        all_three(
            10,
            &[
                (0, 100, 6, 100),
                (0, 10, 8, 10),
                (0, 500, 3, 500),
                (0, 500, 2, 500),
                (0, 50, 2, 50),
            ],
            &[0, 100, 110, 110, 110],
            &[0, 100, 110, 0, 0],
            &[0, 100, 110, 0, 0],
        );
    }

    /// 8. A job running past its requested time (not killed) is expected to
    ///    end one second from now at every pass.
    #[test]
    fn hand_08_overrunning_job() {
        // J1 requests 5 s but runs 20. J2 (4) waits for it. At 6 J3 (1 s)
        // and J4 (3 s) arrive; J1 is expected to end at 7: J3 (ends 7)
        // backfills, J4 (ends 9) does not, nor at 7 (expected end 8). J1
        // ends at 20: J2 20..25, then J4.
        all_three(
            4,
            &[(0, 20, 2, 5), (0, 5, 4, 5), (6, 1, 1, 1), (6, 3, 1, 3)],
            &[0, 20, 25, 25],
            &[0, 20, 6, 25],
            &[0, 20, 6, 25],
        );
    }

    /// 9. Jobs with equal requests queue in submission order; conservative
    ///    gives each a reservation.
    #[test]
    fn hand_09_chain_of_reservations() {
        // 6 procs. J1, J2, J3 need 4 each for 10 s: 0, 10, 20. J4 (2, 30 s)
        // fits beside all three: 0. J5 (1, 5 s) finds nothing free until 30.
        all_three(
            6,
            &[
                (0, 10, 4, 10),
                (0, 10, 4, 10),
                (0, 10, 4, 10),
                (0, 30, 2, 30),
                (0, 5, 1, 5),
            ],
            &[0, 10, 20, 20, 30],
            &[0, 10, 20, 0, 30],
            &[0, 10, 20, 0, 30],
        );
    }

    /// 10. Two completions and two submissions at one time.
    #[test]
    fn hand_10_simultaneous_completions() {
        all_three(
            4,
            &[(0, 10, 2, 10), (0, 10, 2, 10), (10, 5, 4, 5), (10, 5, 1, 5)],
            &[0, 0, 10, 15],
            &[0, 0, 10, 15],
            &[0, 0, 10, 15],
        );
    }

    /// 11. Zero run times and a zero requested time (counted as 1 s).
    #[test]
    fn hand_11_zero_runtimes() {
        // J1 takes the machine for 0 s; J2 starts at once at 0; J3 after J2.
        all_three(
            2,
            &[(0, 0, 2, 0), (0, 5, 2, 5), (0, 0, 1, 1)],
            &[0, 0, 5],
            &[0, 0, 5],
            &[0, 0, 5],
        );
    }

    /// 12. Every running job ending exactly at the shadow time counts toward
    ///     the extra processors.
    #[test]
    fn hand_12_all_jobs_ending_at_the_shadow_count() {
        // 7 procs; J1 2, J2 2, J3 1 all end at 10 → free 2. J4 (5) head:
        // shadow 10 with 7 free then, extra 2. J5 (2, 50 s) uses the extra
        // processors: starts at 0.
        all_three(
            7,
            &[
                (0, 10, 2, 10),
                (0, 10, 2, 10),
                (0, 10, 1, 10),
                (0, 5, 5, 5),
                (0, 50, 2, 50),
            ],
            &[0, 0, 0, 10, 10],
            &[0, 0, 0, 10, 0],
            &[0, 0, 0, 10, 0],
        );
    }

    /// 13. Killing at the requested time (machine option).
    #[test]
    fn hand_13_kill_on_overrun() {
        // Instance 8 with kill_on_overrun: J1 is killed at 5; J2 runs 5..10;
        // J3 and J4 (s6) find nothing free and start at 10.
        let js = [(0, 20, 2, 5), (0, 5, 4, 5), (6, 1, 1, 1), (6, 3, 1, 3)];
        for p in ["fcfs", "easy", "conservative"] {
            let mut c = BatchConfig::default();
            c.set("policy", &Value::Str(p.into())).unwrap();
            c.set("kill_on_overrun", &Value::Bool(true)).unwrap();
            let r = simulate(jobs(&js), 4, &c).unwrap();
            check_schedule(&r);
            let s: Vec<u64> = r.outcomes.iter().map(|o| o.start).collect();
            assert_eq!(s, vec![0, 5, 10, 10], "{p}");
            assert!(r.outcomes[0].killed && r.outcomes[0].end == 5);
        }
    }

    fn traces_dir() -> Option<PathBuf> {
        let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
        d.is_dir().then_some(d)
    }

    /// The smaller traces load and run under every policy, twice with
    /// identical results. (The larger ones — KTH-SP2, NASA-iPSC, SDSC-Par —
    /// run in the `batch` example; see the report.)
    #[test]
    fn small_traces_run_under_every_policy() {
        let Some(dir) = traces_dir() else {
            eprintln!("../shared/traces not found; skipped");
            return;
        };
        for name in [
            "HPC2N-subset.swf.gz",
            "SDSC-SP2-5K-sample.swf.gz",
            "lublin_256.swf.gz",
        ] {
            let trace = swf::load_file(dir.join(name), &Default::default()).unwrap();
            assert!(trace.report.kept > 3000, "{name}");
            assert_eq!(
                trace.report.kept + trace.report.dropped(),
                trace.report.records,
                "{name}"
            );
            for p in [
                BatchPolicyKind::Fcfs,
                BatchPolicyKind::Easy,
                BatchPolicyKind::Conservative,
                BatchPolicyKind::Gang,
            ] {
                let c = BatchConfig {
                    policy: p,
                    ..BatchConfig::default()
                };
                let a = run_loaded(trace.clone(), &c).unwrap();
                let b = run_loaded(trace.clone(), &c).unwrap();
                assert!(a.same_schedule(&b), "{name} {p:?} not deterministic");
                check_schedule(&a);
                assert_eq!(
                    a.summary.jobs,
                    trace.report.kept - a.report.dropped_too_wide
                );
                assert!(a.summary.utilization > 0.0 && a.summary.utilization <= 1.0);
                let mut out = Vec::new();
                a.write_jobs_csv(&mut out).unwrap();
                assert_eq!(
                    out.iter().filter(|&&c| c == b'\n').count() as u64,
                    a.summary.jobs + 1
                );
            }
        }
    }

    /// A malformed trace gives an error with its line number, never a panic.
    #[test]
    fn bad_traces_are_errors() {
        let text = "; MaxProcs: 4\n1 0 -1 10 2 -1 -1 2 10 -1 1 1 1 -1 1 -1 -1 -1\n2 0 -1 10 2 -1 -1 2 10 -1 1 1\n";
        let e = swf::load_jobs(
            swf::SwfReader::new(text.as_bytes()).unwrap(),
            &Default::default(),
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "line 3: 12 fields; an SWF job line has 18");
        let c = BatchConfig {
            procs: Some(1),
            too_wide: parsched_sim::machines::batch::TooWide::Error,
            ..BatchConfig::default()
        };
        let good = "; MaxProcs: 4\n1 0 -1 10 2 -1 -1 2 10 -1 1 1 1 -1 1 -1 -1 -1\n";
        let t = swf::load_jobs(
            swf::SwfReader::new(good.as_bytes()).unwrap(),
            &Default::default(),
        )
        .unwrap();
        let e = run_loaded(t, &c).unwrap_err();
        assert!(e.to_string().contains("needs 2 processors"), "{e}");
    }
}

/// The batch machine against a brute-force reference written independently
/// from the policy code (brute-force shadow time and a per-second capacity
/// array instead of profiles; lists scanned instead of heaps), on random
/// small instances with under- and over-estimated requested times.
mod batch_reference {
    use parsched_sim::machines::batch::{simulate, BatchConfig, BatchPolicyKind};
    use parsched_sim::workloads::swf::BatchJob;
    use proptest::prelude::*;

    #[derive(Clone, Copy)]
    struct Run {
        procs: u32,
        start: u64,
        requested: u64,
        end: u64,
    }

    fn dur(req: u64) -> u64 {
        req.max(1)
    }

    /// Starts for FCFS (0), EASY (1) or conservative (2), by brute force.
    fn reference(procs: u32, jobs: &[BatchJob], policy: u8) -> Vec<u64> {
        let n = jobs.len();
        let mut start = vec![u64::MAX; n];
        let mut running: Vec<(usize, Run)> = Vec::new();
        let mut queue: Vec<usize> = Vec::new();
        let mut next = 0;
        let mut t = jobs.first().map_or(0, |j| j.submit);
        while next < n || !queue.is_empty() || !running.is_empty() {
            let mut arrivals_done = false;
            loop {
                running.retain(|(_, r)| r.end != t);
                if !arrivals_done {
                    while next < n && jobs[next].submit == t {
                        queue.push(next);
                        next += 1;
                    }
                    arrivals_done = true;
                }
                let before = running.len();
                let free = procs - running.iter().map(|(_, r)| r.procs).sum::<u32>();
                let chosen = pass(procs, free, t, &running, &queue, jobs, policy);
                for &k in &chosen {
                    let j = &jobs[k];
                    start[k] = t;
                    running.push((
                        k,
                        Run {
                            procs: j.procs,
                            start: t,
                            requested: j.requested,
                            end: t + j.runtime,
                        },
                    ));
                }
                queue.retain(|k| !chosen.contains(k));
                let zero = running[before..].iter().any(|(_, r)| r.end == t);
                if !zero {
                    break;
                }
            }
            // Next event: a submission or a completion. (Passes run only at
            // events: between them the view can change only by a running
            // job passing its requested end, which is not an event.)
            let next_sub = jobs.get(next).map_or(u64::MAX, |j| j.submit);
            let next_end = running.iter().map(|(_, r)| r.end).min().unwrap_or(u64::MAX);
            t = next_sub.min(next_end);
        }
        start
    }

    fn expected_end(r: &Run, t: u64) -> u64 {
        (r.start + r.requested).max(t + 1)
    }

    fn pass(
        procs: u32,
        mut free: u32,
        t: u64,
        running: &[(usize, Run)],
        queue: &[usize],
        jobs: &[BatchJob],
        policy: u8,
    ) -> Vec<usize> {
        let mut out = Vec::new();
        match policy {
            0 | 1 => {
                let mut ends: Vec<(u64, u32)> = running
                    .iter()
                    .map(|(_, r)| (expected_end(r, t), r.procs))
                    .collect();
                let mut h = 0;
                while h < queue.len() && jobs[queue[h]].procs <= free {
                    let j = &jobs[queue[h]];
                    free -= j.procs;
                    ends.push((t + dur(j.requested), j.procs));
                    out.push(queue[h]);
                    h += 1;
                }
                if policy == 0 || h >= queue.len() {
                    return out;
                }
                let need = jobs[queue[h]].procs;
                let mut shadow = t;
                let extra;
                loop {
                    let avail = free
                        + ends
                            .iter()
                            .filter(|e| e.0 <= shadow)
                            .map(|e| e.1)
                            .sum::<u32>();
                    if avail >= need {
                        extra = avail - need;
                        break;
                    }
                    shadow += 1;
                }
                let mut extra = extra;
                for &k in &queue[h + 1..] {
                    let c = &jobs[k];
                    if c.procs > free {
                        continue;
                    }
                    if t + dur(c.requested) <= shadow {
                        free -= c.procs;
                        out.push(k);
                    } else if c.procs <= extra {
                        free -= c.procs;
                        extra -= c.procs;
                        out.push(k);
                    }
                }
            }
            _ => {
                let horizon = (t
                    + running
                        .iter()
                        .map(|(_, r)| expected_end(r, t) - t)
                        .max()
                        .unwrap_or(0)
                    + queue.iter().map(|&k| dur(jobs[k].requested)).sum::<u64>()
                    + 2) as usize;
                let mut cap = vec![procs; horizon + 1];
                for (_, r) in running {
                    for c in cap
                        .iter_mut()
                        .take(expected_end(r, t) as usize)
                        .skip(t as usize)
                    {
                        *c -= r.procs;
                    }
                }
                for &k in queue {
                    let j = &jobs[k];
                    let d = dur(j.requested) as usize;
                    let mut s = t as usize;
                    while !(s..s + d).all(|u| cap[u] >= j.procs) {
                        s += 1;
                    }
                    for c in &mut cap[s..s + d] {
                        *c -= j.procs;
                    }
                    if s == t as usize {
                        out.push(k);
                    }
                }
            }
        }
        out
    }

    fn instance() -> impl Strategy<Value = (u32, Vec<BatchJob>)> {
        (1u32..=8).prop_flat_map(|p| {
            let job = (0u64..25, 0u64..15, 1u32..=p, 0u64..12, any::<bool>());
            (
                Just(p),
                proptest::collection::vec(job, 1..12).prop_map(|mut v| {
                    v.sort_by_key(|x| x.0);
                    v.into_iter()
                        .enumerate()
                        .map(|(i, (s, r, w, e, over))| {
                            // Requested times both above and below the run time.
                            let q = if over { r + e } else { r.saturating_sub(e % 4) };
                            BatchJob::new(i as i64 + 1, s, r, w, q)
                        })
                        .collect()
                }),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

        #[test]
        fn machine_matches_brute_force_reference((p, jobs) in instance()) {
            for (k, kind) in [
                (0u8, BatchPolicyKind::Fcfs),
                (1, BatchPolicyKind::Easy),
                (2, BatchPolicyKind::Conservative),
            ] {
                let c = BatchConfig { policy: kind, ..BatchConfig::default() };
                let r = simulate(jobs.clone(), p, &c).unwrap();
                let got: Vec<u64> = r.outcomes.iter().map(|o| o.start).collect();
                prop_assert_eq!(got, reference(p, &jobs, k), "{:?}", kind);
            }
        }

        /// Under every queue order and policy the schedule is valid: every
        /// job starts at or after its submission, runs its run time, and
        /// the machine is never overcommitted.
        #[test]
        fn every_queue_order_gives_a_valid_schedule((p, jobs) in instance()) {
            use parsched_core::policy::batch::QueueOrder;
            use parsched_core::policy::batch::BackfillOrder;
            let mut configs = Vec::new();
            for order in QueueOrder::all() {
                for kind in [BatchPolicyKind::Fcfs, BatchPolicyKind::Easy, BatchPolicyKind::Conservative] {
                    configs.push(BatchConfig { policy: kind, order, ..BatchConfig::default() });
                }
                for backfill_order in [BackfillOrder::named("fcfs"), BackfillOrder::named("sjf"), BackfillOrder::named("f3")] {
                    configs.push(BatchConfig {
                        policy: BatchPolicyKind::Easy,
                        order,
                        backfill_order,
                        ..BatchConfig::default()
                    });
                }
            }
            for c in configs {
                // no overcommit; every job after its submission, for its run time
                super::batch_machine::check_schedule(&simulate(jobs.clone(), p, &c).unwrap());
            }
        }

        /// With exact requested times (and no zero run times), conservative
        /// backfilling never starts a job later than FCFS.
        #[test]
        fn conservative_never_later_than_fcfs_with_exact_estimates((p, jobs) in instance()) {
            let jobs: Vec<BatchJob> = jobs
                .into_iter()
                .map(|j| BatchJob { runtime: j.runtime.max(1), requested: j.runtime.max(1), ..j })
                .collect();
            let run = |kind| {
                let c = BatchConfig { policy: kind, ..BatchConfig::default() };
                simulate(jobs.clone(), p, &c).unwrap().outcomes
            };
            let f = run(BatchPolicyKind::Fcfs);
            let c = run(BatchPolicyKind::Conservative);
            for (a, b) in c.iter().zip(&f) {
                prop_assert!(a.start <= b.start);
            }
        }
    }
}

/// Gang scheduling of rigid jobs on the Ousterhout matrix.
mod batch_gang {
    use parsched_sim::machines::batch::{simulate, BatchConfig, BatchPolicyKind};
    use parsched_sim::workloads::swf::BatchJob;
    use proptest::prelude::*;

    fn instance() -> impl Strategy<Value = (u32, Vec<BatchJob>)> {
        (1u32..=8).prop_flat_map(|p| {
            let job = (0u64..40, 0u64..30, 1u32..=p);
            (
                Just(p),
                proptest::collection::vec(job, 1..14).prop_map(|mut v| {
                    v.sort_by_key(|x| x.0);
                    v.into_iter()
                        .enumerate()
                        .map(|(i, (s, r, w))| BatchJob::new(i as i64 + 1, s, r, w, r))
                        .collect()
                }),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

        /// One slot without backfilling is FCFS exactly.
        #[test]
        fn one_slot_without_backfill_is_fcfs((p, jobs) in instance(), q in 1u64..20) {
            let g = BatchConfig {
                policy: BatchPolicyKind::Gang,
                mpl: 1,
                quantum: q,
                gang_backfill: false,
                ..BatchConfig::default()
            };
            let f = BatchConfig { policy: BatchPolicyKind::Fcfs, ..BatchConfig::default() };
            let a = simulate(jobs.clone(), p, &g).unwrap();
            let b = simulate(jobs.clone(), p, &f).unwrap();
            prop_assert_eq!(a.outcomes, b.outcomes);
            prop_assert_eq!(a.summary.slot_switches, 0);
        }

        /// Every job completes, receives at least its run time between start
        /// and end, and the whole machine's work fits in the elapsed time of
        /// the slots; runs are deterministic.
        #[test]
        fn gang_invariants((p, jobs) in instance(), mpl in 1u32..4, q in 1u64..20, bf in any::<bool>()) {
            let c = BatchConfig {
                policy: BatchPolicyKind::Gang,
                mpl,
                quantum: q,
                gang_backfill: bf,
                ..BatchConfig::default()
            };
            let a = simulate(jobs.clone(), p, &c).unwrap();
            let b = simulate(jobs.clone(), p, &c).unwrap();
            prop_assert!(a.same_schedule(&b));
            let mut work = 0u64;
            for (j, o) in jobs.iter().zip(&a.outcomes) {
                prop_assert!(o.start >= j.submit && o.end >= o.start + j.runtime);
                work += j.runtime * j.procs as u64;
            }
            prop_assert!(work <= a.summary.makespan * p as u64);
            // With one slot there is no time slicing: each job runs straight.
            if mpl == 1 {
                for (j, o) in jobs.iter().zip(&a.outcomes) {
                    prop_assert_eq!(o.end - o.start, j.runtime);
                }
            }
        }
    }
}

/// SWF input and output on real traces.
mod batch_swf {
    use parsched_sim::workloads::swf::{self, SwfError, SwfWriter};
    use std::path::PathBuf;

    fn trace(name: &str) -> Option<PathBuf> {
        let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/traces")
            .join(name);
        p.is_file().then_some(p)
    }

    /// A real trace cut in the middle of its gzip stream: an error naming
    /// the line being read, after the complete lines before it.
    #[test]
    fn truncated_real_gzip_is_an_error_with_a_line_number() {
        let Some(p) = trace("HPC2N-subset.swf.gz") else {
            return;
        };
        let bytes = std::fs::read(p).unwrap();
        let cut = &bytes[..bytes.len() * 2 / 3];
        let mut n = 0u64;
        let mut err = None;
        for r in swf::from_bytes(cut).unwrap() {
            match r {
                Ok(_) => n += 1,
                Err(e) => {
                    err = Some(e);
                    break;
                }
            }
        }
        let e = err.expect("a truncated gzip must not read as a complete trace");
        let line = match &e {
            SwfError::Io { line, .. } | SwfError::Malformed { line, .. } => *line,
            other => panic!("unexpected {other}"),
        };
        assert!(
            n > 1000 && line > n,
            "{n} records, error at line {line}: {e}"
        );
    }

    /// Eight zeroed bytes inside a real trace's gzip stream: the corrupt
    /// archive is the error (it was reported as "line 1260: 14 fields", the
    /// garbage the damaged stream decoded to).
    #[test]
    fn corrupt_real_gzip_is_reported_as_a_corrupt_archive() {
        let Some(p) = trace("KTH-SP2-1996-2.1-cln.swf.gz") else {
            return;
        };
        let mut bytes = std::fs::read(p).unwrap();
        let dir = std::env::temp_dir().join(format!("parsched-gz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for k in 1..=3 {
            let off = bytes.len() * k / 4;
            let saved: Vec<u8> = bytes[off..off + 8].to_vec();
            bytes[off..off + 8].fill(0);
            let f = dir.join("z.swf.gz");
            std::fs::write(&f, &bytes).unwrap();
            let e = swf::load_file(&f, &Default::default())
                .expect_err("a corrupt archive must not load")
                .to_string();
            assert!(
                e.contains("the gzip archive is corrupt"),
                "offset {off}: {e}"
            );
            bytes[off..off + 8].copy_from_slice(&saved);
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Read, write, read again: the same header fields and records.
    #[test]
    fn real_trace_round_trips_through_the_writer() {
        let Some(p) = trace("SDSC-SP2-5K-sample.swf.gz") else {
            return;
        };
        let mut r = swf::open(p).unwrap();
        let recs: Vec<_> = r.by_ref().collect::<Result<_, _>>().unwrap();
        let header = r.header().clone();
        assert_eq!(header.max_procs, Some(128));
        assert_eq!(header.unix_start_time, Some(893466664));
        let mut w = SwfWriter::new(Vec::new(), &header).unwrap();
        for x in &recs {
            w.write(x).unwrap();
        }
        let out = w.finish().unwrap();
        let (h2, recs2) = swf::read_all(&out[..]).unwrap();
        assert_eq!(recs, recs2);
        assert_eq!(header.fields, h2.fields);
        assert_eq!(header.max_procs, h2.max_procs);
    }

    /// What the default rules do to each real trace (counts pinned, so any
    /// change in the loader shows here).
    #[test]
    fn load_reports_of_the_real_traces() {
        for (name, records, kept) in [
            ("HPC2N-subset.swf.gz", 3170, 3145),
            ("SDSC-SP2-5K-sample.swf.gz", 4961, 3525),
            ("lublin_256.swf.gz", 10000, 10000),
        ] {
            let Some(p) = trace(name) else {
                continue;
            };
            let t = swf::load_file(p, &Default::default()).unwrap();
            assert_eq!((t.report.records, t.report.kept), (records, kept), "{name}");
            assert_eq!(t.report.kept + t.report.dropped(), t.report.records);
        }
    }
}

/// Gang scheduling worked by hand: backfilling into free slot space, and a
/// job admitted into a slot whose quantum ends at that moment.
mod batch_gang_hand {
    use parsched_sim::machines::batch::{simulate, BatchConfig, BatchPolicyKind};
    use parsched_sim::workloads::swf::BatchJob;

    fn run(backfill: bool) -> Vec<(u64, u64)> {
        // 4 processors, mpl 2, quantum 10.
        // J1 (3 procs, 20 s) → slot 0; J2 (4, 20 s) → slot 1; both at 0.
        // At 1: J3 (2, 10 s) fits nowhere (slot 0 has 1 free cell, mpl
        // reached); J4 (1, 5 s) fits slot 0's free cell.
        let jobs = vec![
            BatchJob::new(1, 0, 20, 3, 20),
            BatchJob::new(2, 0, 20, 4, 20),
            BatchJob::new(3, 1, 10, 2, 10),
            BatchJob::new(4, 1, 5, 1, 5),
        ];
        let c = BatchConfig {
            policy: BatchPolicyKind::Gang,
            mpl: 2,
            quantum: 10,
            gang_backfill: backfill,
            ..BatchConfig::default()
        };
        let r = simulate(jobs, 4, &c).unwrap();
        r.outcomes.iter().map(|o| (o.start, o.end)).collect()
    }

    #[test]
    fn backfilling_into_free_slot_space() {
        // With backfilling J4 joins running slot 0 at 1 and ends at 6.
        // Slots: 0 [0,10) J1; 1 [10,20) J2; 0 [20,30) J1 ends at 30. At 30
        // J3 takes the emptied slot 0, but slot 0's quantum ends then: slot
        // 1 runs [30,40) (J2 ends at 40); J3 starts at 40, alone: ends 50.
        assert_eq!(run(true), vec![(0, 30), (10, 40), (40, 50), (1, 6)]);
        // Without: J4 waits behind J3; both enter slot 0 at 30 and start
        // when it runs again at 40.
        assert_eq!(run(false), vec![(0, 30), (10, 40), (40, 50), (40, 45)]);
    }
}

mod cluster_properties {
    use parsched_core::policy::cosched::{CoschedScheme, Scheme};
    use parsched_sim::machines::cluster::{
        run_once, AppKind, ClusterConfig, ClusterOptions, LocalKind,
    };
    use proptest::prelude::*;

    fn scheme() -> impl Strategy<Value = CoschedScheme> {
        let mut all: Vec<CoschedScheme> = Scheme::ALL
            .iter()
            .map(|&s| CoschedScheme::Dynamic(s))
            .collect();
        all.extend([CoschedScheme::Gang, CoschedScheme::Fcfs]);
        prop::sample::select(all)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// On random small clusters, schemes and costs: every message is
        /// delivered exactly once and in order per sender–receiver pair; no
        /// processor runs two processes at once, every running process is on
        /// exactly one processor and a blocked one on none; priorities stay
        /// within the table (the machine's audit after every event); and no
        /// job finishes faster than it runs alone (one processor per node).
        #[test]
        fn the_cluster_keeps_its_invariants(
            scheme in scheme(),
            apps in prop::sample::subsequence(AppKind::ALL.to_vec(), 1..=4).prop_shuffle(),
            nodes in 1u32..=4,
            cpus in 1u32..=2,
            rr in any::<bool>(),
            spin_us in 0.0f64..3000.0,
            costs_us in 0.0f64..40.0,
            seed in 0u64..1000,
        ) {
            let base = ClusterConfig {
                jobs: apps.clone(),
                scheme,
                nodes,
                cpus_per_node: cpus,
                local: if rr { LocalKind::Rr } else { LocalKind::Ts },
                rr_quantum_ms: 20.0,
                spin_time_us: Some(spin_us),
                context_switch_us: costs_us,
                interrupt_us: costs_us,
                syscall_us: costs_us,
                start_skew_ms: 0.0,
                scale: 0.01,
                seed,
                ..ClusterConfig::default()
            };
            let audit = ClusterOptions { audit: true, ..Default::default() };
            let r = run_once(&base, seed, &audit).unwrap();
            prop_assert_eq!(r.audit_failures, 0);
            prop_assert_eq!(r.order_violations, 0);
            prop_assert_eq!(r.messages, r.messages_received);
            // With several processors per node, alone a job may sit on the
            // processor that takes the node's interrupts and timer, in the mix
            // on another: compare on one processor per node.
            let compare = cpus == 1;
            for (j, app) in apps.iter().enumerate().filter(|_| compare) {
                let alone = ClusterConfig { jobs: vec![*app], ..base.clone() };
                let a = run_once(&alone, seed, &ClusterOptions::default()).unwrap();
                prop_assert!(
                    r.job_completion_times[j] >= a.completion_time * (1.0 - 1e-9),
                    "{} took {} in the mix, {} alone", app, r.job_completion_times[j], a.completion_time
                );
            }
        }
    }
}

mod fcs_properties {
    use parsched_core::policy::fcs::{FRows, Fill};
    use parsched_sim::machines::cluster::{ClusterOptions, LocalKind};
    use parsched_sim::machines::desktop::{run, DesktopConfig, DesktopScheme, RunQueues};
    use proptest::prelude::*;

    fn job(width: usize) -> impl Strategy<Value = Vec<f64>> {
        prop::collection::vec(prop::sample::select(vec![1.0, 1.5, 2.0, 3.0]), 1..=width)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

        /// Seed 002's schemes on random small desktops (1-3 jobs of random
        /// widths and per-process multipliers, grain, spin, slot, F rows and
        /// filling): every job finishes (no livelock within 100x the
        /// optimum), no job beats its own critical path, and under FCS the
        /// machine's audit after every event holds: a CS job runs only in
        /// its slot, and while one of its processes is ready no processor of
        /// its node runs another job's process (its processes run together;
        /// nobody fills its cells).
        #[test]
        fn every_job_finishes_and_cs_jobs_run_together(
            jobs in prop::collection::vec(job(4), 1..=3),
            scheme in prop::sample::select(DesktopScheme::ALL.to_vec()),
            grain_us in 200.0f64..3000.0,
            spin_us in 0.0f64..200.0,
            slot_ms in 5.0f64..60.0,
            own in any::<bool>(),
            fill_dc in any::<bool>(),
            local in prop::sample::select(vec![LocalKind::O1, LocalKind::Fair, LocalKind::Rr]),
            per_cpu in any::<bool>(),
            seed in 0u64..1000,
        ) {
            let cfg = DesktopConfig {
                scheme,
                local,
                runqueues: if per_cpu { RunQueues::PerCpu } else { RunQueues::PerNode },
                rr_quantum_ms: 20.0,
                jobs: jobs.clone(),
                grain_us,
                iterations: 400,
                spin_us,
                slot_ms,
                f_rows: if own { FRows::Own } else { FRows::Shared },
                fill: if fill_dc { Fill::Dc } else { Fill::FDc },
                seed,
                ..DesktopConfig::default()
            };
            let opt = cfg.optimum_s();
            let cfg = DesktopConfig { max_time_s: opt * 100.0 + 10.0, ..cfg };
            let audit = ClusterOptions { audit: true, ..Default::default() };
            let r = run(&cfg, &audit).unwrap();
            prop_assert_eq!(r.job_times.len(), jobs.len());
            for (j, t) in r.job_times.iter().enumerate() {
                let critical = jobs[j].iter().cloned().fold(0.0, f64::max) * grain_us * 400.0 * 1e-6;
                prop_assert!(*t >= critical * (1.0 - 1e-9), "job {} took {} < {}", j, t, critical);
            }
            prop_assert!(r.makespan >= opt * (1.0 - 1e-9));
        }
    }
    /// The machine's FCS decisions are the core policy's: its recorded
    /// inputs, replayed through a new `parsched_core::policy::fcs::Fcs`,
    /// give the same decisions, and the class changes the machine reports
    /// (and applied: rows, waiting) are the ones the log holds. The runtime
    /// checks the same of its controller (`fcs::mock_fcs_decisions_are_the_core_policys`).
    #[test]
    fn the_machine_applies_the_core_policy() {
        use parsched_core::policy::fcs::{Fcs, Slot, Step};
        use parsched_sim::machines::cluster::run_once;
        let cfg = DesktopConfig {
            scheme: DesktopScheme::Fcs,
            iterations: 3000,
            ..DesktopConfig::default()
        };
        let cl = cfg.cluster();
        let opts = ClusterOptions {
            audit: true,
            fcs_log: true,
            ..Default::default()
        };
        let r = run_once(&cl, 1, &opts).unwrap();
        let log = &r.fcs_log;
        let advances = log
            .iter()
            .filter(|s| matches!(s, Step::Advance { .. }))
            .count();
        assert!(advances > 10, "{advances} slots");
        assert!(log
            .iter()
            .all(|s| !matches!(s, Step::Advance { slot: Slot::Dc, .. })));
        let changes: Vec<(u32, String)> = log
            .iter()
            .filter_map(|s| match s {
                Step::Observe {
                    job,
                    change: Some(c),
                    ..
                } => Some((*job as u32, c.short_name().to_string())),
                _ => None,
            })
            .collect();
        let reported: Vec<(u32, String)> =
            r.classes.iter().map(|(_, j, c)| (*j, c.clone())).collect();
        assert_eq!(changes, reported);
        // seed 002's classes: jobs 1 and 2 F, job 3 CS
        let last = |j: u32| {
            changes
                .iter()
                .rev()
                .find(|c| c.0 == j)
                .map(|c| c.1.as_str())
        };
        assert_eq!(
            (last(0), last(1), last(2)),
            (Some("F"), Some("F"), Some("CS"))
        );
        let replayed = Fcs::replay(3, cl.flexible.unwrap(), log).unwrap();
        assert_eq!(&replayed, log);
    }
}
