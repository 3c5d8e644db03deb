//! Integration tests of the simulator: queueing-theory validation and
//! property tests over random configurations.

use parsched_core::time::TICKS_PER_UNIT;
use parsched_sim::pools::{run, ParallelismMode, PoolsConfig, RunOptions, SpanningMode, Value};
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
    let key = |r: &parsched_sim::pools::PoolsResult| {
        r.reps[0]
            .records
            .iter()
            .map(|j| (j.arrival.to_bits(), j.d))
            .collect::<Vec<_>>()
    };
    assert_eq!(key(&a), key(&b));
    assert_ne!(a.summary.mean_response_time, b.summary.mean_response_time);
}

// ---- Seed 001's sync machine (parsched_sim::sync) ----

mod sync_machine {
    use parsched_sim::sync::{
        run, Competitors, SyncConfig, SyncOptions, SyncResult, SyncSched, WaitStrategy, Wakeup,
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
                0usize..3,
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
                    barrier_cost: bc.max(0.001),
                    tq,
                    tcs: tcs.min(tq * 0.5),
                    alpha,
                    wait: [
                        WaitStrategy::Busy,
                        WaitStrategy::Block,
                        WaitStrategy::TwoPhase,
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
