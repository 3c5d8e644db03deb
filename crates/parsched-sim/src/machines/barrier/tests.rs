use super::*;

/// The paper's equations as printed, restated here as the tests' oracle (the
/// library's one implementation is Python's `parsched.models.feitelson_rudolph`,
/// which `tests/test_feitelson_rudolph.py` checks against these runs too).
fn eq6(c: &SyncConfig) -> f64 {
    (1.0 + c.tcs / c.tq) * (c.t_p() + c.t_w()) * c.l as f64
}

fn eq12(c: &SyncConfig) -> f64 {
    let n = c.n as f64;
    (c.t_p() + (n - 1.0) / n * c.alpha * c.tcs) * c.l as f64
}

fn eq13(c: &SyncConfig) -> f64 {
    let l = c.l as f64;
    c.t_p() + (l - 1.0) * c.tq + (l + c.alpha - 1.0) * c.tcs
}

fn cfg(pairs: &[(&str, Value)]) -> SyncConfig {
    let mut c = SyncConfig::default();
    for (k, v) in pairs {
        c.set(k, v).unwrap();
    }
    c
}

const AUDIT: SyncOptions = SyncOptions {
    audit: true,
    fast: true,
};

fn s(v: &str) -> Value {
    Value::Str(v.into())
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b
}

#[test]
fn dedicated_busy_wait_is_tp_plus_tw() {
    for sched in ["gang", "local"] {
        let c = cfg(&[
            ("l", Value::Int(1)),
            ("k", Value::Int(20_000)),
            ("sched", s(sched)),
        ]);
        let r = run(&c, SyncOptions::default()).unwrap();
        let want = c.t_p() + c.t_w();
        assert!(
            rel(r.time_per_iter, want) < 0.01,
            "{sched}: {} vs t_p + t_w = {want}",
            r.time_per_iter
        );
        assert_eq!(r.blocking_events, 0);
        assert!(r.busy_wait_time > 0.0);
    }
}

/// Exponential compute times: t_w = var·(H_n − 1) exceeds t_p, and the
/// dedicated-machine time per iteration is still t_p + t_w.
#[test]
fn exponential_compute_gives_large_waits() {
    let c = cfg(&[
        ("l", Value::Int(1)),
        ("k", Value::Int(40_000)),
        ("grain", Value::Float(0.0)),
        ("var", Value::Float(2.0)),
        ("dist", s("exponential")),
    ]);
    assert!(c.t_w() > c.t_p(), "t_w {} <= t_p {}", c.t_w(), c.t_p());
    let r = run(&c, SyncOptions::default()).unwrap();
    let want = c.t_p() + c.t_w();
    assert!(
        rel(r.time_per_iter, want) < 0.02,
        "{} vs {want}",
        r.time_per_iter
    );
    let mut bad = SyncConfig::default();
    assert!(bad.set("dist", &s("normal")).is_err());
}

#[test]
fn gang_busy_wait_matches_eq6() {
    for grain in [0.1, 1.0] {
        let c = cfg(&[("grain", Value::Float(grain)), ("var", Value::Float(grain))]);
        let c = SyncConfig { k: 30_000, ..c };
        let r = run(&c, SyncOptions::default()).unwrap();
        assert!(
            rel(r.time_per_iter, eq6(&c)) < 0.05,
            "grain {grain}: {} vs eq6 {}",
            r.time_per_iter,
            eq6(&c)
        );
        assert!(r.fragmentation == 0.0);
        assert!(r.slot_switches > 0);
    }
}

#[test]
fn local_blocking_same_competitors_matches_eq12() {
    let c = cfg(&[
        ("sched", s("local")),
        ("wait", s("block")),
        ("k", Value::Int(20_000)),
    ]);
    let r = run(&c, SyncOptions::default()).unwrap();
    assert!(
        rel(r.time_per_iter, eq12(&c)) < 0.10,
        "{} vs eq12 {}",
        r.time_per_iter,
        eq12(&c)
    );
    assert_eq!(r.busy_wait_time, 0.0);
    assert!(r.blocking_events > 0);
}

#[test]
fn local_blocking_compute_competitors_matches_eq13() {
    let c = cfg(&[
        ("sched", s("local")),
        ("wait", s("block")),
        ("competitors", s("compute")),
        ("k", Value::Int(3_000)),
    ]);
    let r = run(&c, SyncOptions::default()).unwrap();
    assert!(
        rel(r.time_per_iter, eq13(&c)) < 0.10,
        "{} vs eq13 {}",
        r.time_per_iter,
        eq13(&c)
    );
}

#[test]
fn uncoordinated_busy_wait_is_slow_and_quadratic_in_load() {
    // Experiment 4: pairs of threads, GRAIN = VAR = 100 instructions. The
    // pattern a run falls into depends on its seed (which quanta line up),
    // so pool seeds as equation (8) does: rounds / expected iterations
    // per round, i.e. the harmonic mean of the per-seed times.
    let t = |sched: &str, l: i64| {
        let seeds = 12;
        let inv: f64 = (1..=seeds)
            .map(|seed| {
                let c = cfg(&[
                    ("n", Value::Int(2)),
                    ("l", Value::Int(l)),
                    ("grain", Value::Float(0.141)),
                    ("var", Value::Float(0.141)),
                    ("k", Value::Int(4_000)),
                    ("sched", s(sched)),
                    ("seed", Value::Int(seed)),
                ]);
                1.0 / run(&c, SyncOptions::default()).unwrap().time_per_iter
            })
            .sum();
        seeds as f64 / inv
    };
    let gang: Vec<f64> = (2..=4).map(|l| t("gang", l)).collect();
    let local: Vec<f64> = (2..=4).map(|l| t("local", l)).collect();
    // Gang: linear in l.
    assert!(rel(gang[2] / gang[0], 2.0) < 0.05, "{gang:?}");
    // Uncoordinated: much slower, growing about as l^2 (eq. 8).
    assert!(local[1] > 2.0 * gang[1], "{local:?} vs {gang:?}");
    let growth = local[2] / local[0];
    assert!(growth > 3.0, "local {local:?}: l=4/l=2 ratio {growth}");
}

#[test]
fn audit_every_combination() {
    for sched in ["gang", "local"] {
        for wait in ["busy", "block", "twophase", "yield"] {
            for comp in ["same", "compute"] {
                for wakeup in ["tail", "priority"] {
                    let c = cfg(&[
                        ("n", Value::Int(4)),
                        ("P", Value::Int(6)),
                        ("l", Value::Int(3)),
                        ("k", Value::Int(300)),
                        ("tq", Value::Float(5.0)),
                        ("sched", s(sched)),
                        ("wait", s(wait)),
                        ("competitors", s(comp)),
                        ("wakeup", s(wakeup)),
                    ]);
                    let r = run(&c, AUDIT)
                        .unwrap_or_else(|e| panic!("{sched}/{wait}/{comp}/{wakeup}: {e}"));
                    assert_eq!(r.iterations, 300);
                    if wait == "block" {
                        assert_eq!(r.busy_wait_time, 0.0, "blocked threads spun");
                    }
                    let cap = c.procs() as f64 * r.end;
                    assert!(r.useful_time + r.busy_wait_time <= cap + 1e-6);
                    if sched == "gang" && comp == "same" {
                        // Gangs of 4 on 6 processors: one gang per slot
                        // (4 + 4 > 6), so 2 of 6 cells idle.
                        assert!(rel(r.fragmentation, 2.0 / 6.0) < 0.2, "{}", r.fragmentation);
                    }
                }
            }
        }
    }
}

#[test]
fn gang_threads_stay_in_their_slot_and_blocked_threads_use_no_cpu() {
    // The audit (run with `true`) fails the run if a thread runs outside
    // its gang's slot or a blocked thread holds a processor or queue place.
    let c = cfg(&[("k", Value::Int(2_000)), ("wait", s("twophase"))]);
    let r = run(&c, AUDIT).unwrap();
    assert!(r.blocking_events > 0 || r.busy_wait_time > 0.0);
    let c = cfg(&[
        ("k", Value::Int(2_000)),
        ("wait", s("block")),
        ("sched", s("local")),
    ]);
    let r = run(&c, AUDIT).unwrap();
    assert_eq!(r.busy_wait_time, 0.0);
    assert!(r.blocking_events > 0);
}

#[test]
fn deterministic() {
    for sched in ["gang", "local"] {
        let c = cfg(&[
            ("k", Value::Int(3_000)),
            ("sched", s(sched)),
            ("wait", s("twophase")),
        ]);
        let a = run(&c, SyncOptions::default()).unwrap();
        let b = run(&c, SyncOptions::default()).unwrap();
        assert!(a.same_simulation(&b));
        let d = run(&SyncConfig { seed: 2, ..c }, SyncOptions::default()).unwrap();
        assert_ne!(a.time_per_iter, d.time_per_iter);
    }
}

fn strip(mut r: SyncResult) -> SyncResult {
    r.events = 0;
    r.max_pending = 0;
    r.wall_seconds = 0.0;
    r
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    /// The fast paths for busy waiting — the periodic solver (local round
    /// robin) and batches of co-scheduled iterations (gang scheduling) —
    /// give exactly the event-by-event results: draws, times, batch means
    /// and totals.
    #[test]
    fn periodic_solver_matches_the_event_path(
        n in 1i64..6, extra in 0i64..3, l in 1i64..5, k in 1i64..2500,
        compute in proptest::bool::ANY, skew in proptest::bool::ANY,
        shuffle in proptest::bool::ANY, expo in proptest::bool::ANY,
        tq in 1u32..40, tcs10 in 0u32..5, grain10 in 0u32..60, var10 in 0u32..60,
        seed in 0i64..1000, batches in 1i64..12, gang in proptest::bool::ANY,
    ) {
        let tcs = f64::from(tcs10) / 10.0;
        let tq = f64::from(tq).max(tcs + 0.5);
        let c = cfg(&[
            ("n", Value::Int(n)),
            ("P", Value::Int(n + extra)),
            ("l", Value::Int(l)),
            ("k", Value::Int(k)),
            ("tq", Value::Float(tq)),
            ("tcs", Value::Float(tcs)),
            ("grain", Value::Float(f64::from(grain10) / 10.0)),
            ("var", Value::Float(f64::from(var10) / 10.0)),
            ("dist", s(if expo { "exponential" } else { "uniform" })),
            ("competitors", s(if compute { "compute" } else { "same" })),
            ("skew", Value::Bool(skew)),
            ("shuffle", Value::Bool(shuffle)),
            ("seed", Value::Int(seed)),
            ("batches", Value::Int(batches)),
            ("sched", s(if gang { "gang" } else { "local" })),
            ("wait", s("busy")),
        ]);
        let fast = run(&c, SyncOptions::default()).unwrap();
        let slow = run(&c, SyncOptions { audit: false, fast: false }).unwrap();
        // Debug strings: exact floats, and NaN (one batch) equals NaN.
        if k >= 300 && !skew && l >= 2 {
            // Periodic from the first quantum or slot: a handful of events.
            proptest::prop_assert!(fast.events < 4 * (n + extra) as u64 * l as u64 + 8,
                "{} events", fast.events);
        }
        proptest::prop_assert_eq!(format!("{:?}", strip(fast)), format!("{:?}", strip(slow)));
    }
}

#[test]
fn iteration_time_distribution() {
    // Dedicated processors, constant compute: every iteration is alike.
    let r = run(
        &cfg(&[
            ("l", Value::Int(1)),
            ("k", Value::Int(3_000)),
            ("var", Value::Float(0.0)),
        ]),
        AUDIT,
    )
    .unwrap();
    assert_eq!(r.iteration_min, r.iteration_max);
    assert!(rel(r.iteration_p50, r.iteration_min) < 0.01);
    let total: u64 = r.iteration_histogram.iter().map(|b| b.2).sum();
    assert_eq!(total, 3_000);
    assert_eq!(r.iteration_histogram.len(), 1);
    // Uncoordinated busy waiting: most iterations are fast (inside the
    // overlap), a few span a whole round — a long tail.
    let r = run(
        &cfg(&[
            ("n", Value::Int(2)),
            ("l", Value::Int(3)),
            ("k", Value::Int(20_000)),
            ("grain", Value::Float(0.05)),
            ("var", Value::Float(0.05)),
            ("sched", s("local")),
            ("seed", Value::Int(3)),
        ]),
        SyncOptions::default(),
    )
    .unwrap();
    assert!(r.iteration_min <= r.iteration_p10 && r.iteration_p10 <= r.iteration_p50);
    assert!(r.iteration_p50 <= r.iteration_p90 && r.iteration_p99 <= r.iteration_max);
    assert!(r.iteration_max > 20.0 * r.iteration_p50, "{r:?}");
    let total: u64 = r.iteration_histogram.iter().map(|b| b.2).sum();
    assert_eq!(total, 20_000);
    for w in r.iteration_histogram.windows(2) {
        assert!(w[0].1 <= w[1].0 + 1e-12, "bins ordered and disjoint");
    }
    // The mean of the distribution is the time per iteration.
    let mean: f64 = r
        .iteration_histogram
        .iter()
        .map(|&(lo, hi, c)| (lo * hi).sqrt() * c as f64)
        .sum::<f64>()
        / 20_000.0;
    assert!(
        rel(mean, r.time_per_iter) < 0.15,
        "{mean} vs {}",
        r.time_per_iter
    );
}

#[test]
fn empirical_compute_times() {
    // Any distribution a user brings, as a sample. n = 2 threads drawing
    // from {1, 3}: E[max] = 1·1/4 + 3·3/4 = 2.5, mean 2, so t_w = 0.5.
    let c = cfg(&[
        ("n", Value::Int(2)),
        ("l", Value::Int(1)),
        ("k", Value::Int(20_000)),
        ("dist", s("empirical")),
        ("samples", Value::Str("1, 3".into())),
        ("barrier_cost", Value::Float(0.0)),
    ]);
    assert!(rel(c.t_p(), 2.0) < 1e-12 && rel(c.t_w(), 0.5) < 1e-12);
    let r = run(&c, AUDIT).unwrap();
    // Dedicated processors: an iteration takes the slower thread's time.
    assert!(rel(r.time_per_iter, 2.5) < 0.01, "{}", r.time_per_iter);
    assert_eq!(r.iteration_min, 1.0);
    assert_eq!(r.iteration_max, 3.0);
    // The same as a list value; errors name the field.
    let mut c2 = c.clone();
    c2.set("samples", &Value::List(vec![1.0, 3.0])).unwrap();
    assert_eq!(c2.samples, c.samples);
    for (key, v) in [
        ("samples", Value::List(vec![])),
        ("samples", Value::List(vec![1.0, -2.0])),
    ] {
        let mut bad = c.clone();
        bad.set(key, &v).unwrap();
        assert_eq!(bad.validate().unwrap_err().field, "samples");
    }
    let mut bad = c.clone();
    assert_eq!(
        bad.set("samples", &Value::Str("1, x".into()))
            .unwrap_err()
            .field,
        "samples"
    );
    bad.set("dist", &s("uniform")).unwrap();
    assert_eq!(bad.validate().unwrap_err().field, "samples");
}

#[test]
fn yield_needs_a_switch_cost() {
    let mut c = cfg(&[("wait", s("yield")), ("tcs", Value::Float(0.0))]);
    let e = c.validate().unwrap_err();
    assert_eq!(e.field, "tcs");
    c.set("tcs", &Value::Float(0.01)).unwrap();
    c.validate().unwrap();
}

#[test]
fn yield_blocking_measures_alpha() {
    // Seed 001 §3.3, experiment 3 (GRAIN = VAR = 1000, Table 1's τcs): the
    // yields per wait are "about 4 for a load of one down to about 1.2
    // for a load of four" — here with compute-bound competitors.
    let alpha = |l: i64, comp: &str| {
        let r = run(
            &cfg(&[
                ("l", Value::Int(l)),
                ("k", Value::Int(1_500)),
                ("grain", Value::Float(1.41)),
                ("var", Value::Float(1.41)),
                ("tcs", Value::Float(0.07 + 0.14 / l as f64)),
                ("sched", s("local")),
                ("wait", s("yield")),
                ("competitors", s(comp)),
            ]),
            AUDIT,
        )
        .unwrap();
        assert_eq!(r.busy_wait_time, 0.0, "yielders do not spin");
        assert_eq!(r.blocking_events, 0);
        assert!(r.yields > 0);
        r.alpha_measured.expect("threads waited")
    };
    let (a1, a4) = (alpha(1, "compute"), alpha(4, "compute"));
    assert!((3.0..5.0).contains(&a1), "load 1: {a1}");
    assert!((1.0..1.5).contains(&a4), "load 4: {a4}");
    let a4_alike = alpha(4, "same");
    assert!(
        a4_alike > a4,
        "alike competitors yield back sooner: {a4_alike}"
    );
    // Not measured without yields.
    let r = run(&cfg(&[("k", Value::Int(100))]), AUDIT).unwrap();
    assert!(r.alpha_measured.is_none() && r.yields == 0);
}

#[test]
fn busy_waiting_competitors_do_not_matter_to_the_measured_gang() {
    // Seed 001 §2.1: with busy waiting the other threads' character does
    // not matter (every thread uses whole quanta), so alike and
    // compute-bound competitors give the measured gang the same times
    // (with P = n, so that both kinds fill the same processors).
    for (seed, n, p, l, grain) in [(1, 4, 4, 3, 0.03), (2, 2, 2, 2, 1.0), (3, 3, 3, 4, 7.0)] {
        let run_with = |comp: &str| {
            run(
                &cfg(&[
                    ("n", Value::Int(n)),
                    ("P", Value::Int(p)),
                    ("l", Value::Int(l)),
                    ("k", Value::Int(2_000)),
                    ("grain", Value::Float(grain)),
                    ("var", Value::Float(grain)),
                    ("tq", Value::Float(10.0)),
                    ("sched", s("local")),
                    ("competitors", s(comp)),
                    ("seed", Value::Int(seed)),
                ]),
                SyncOptions::default(),
            )
            .unwrap()
        };
        let (a, b) = (run_with("same"), run_with("compute"));
        assert_eq!(a.time_per_iter, b.time_per_iter, "seed {seed}");
        assert_eq!(a.batch_means, b.batch_means, "seed {seed}");
        assert_eq!(a.measured_busy_wait_time, b.measured_busy_wait_time);
        assert_ne!(a.busy_wait_time, b.busy_wait_time, "competitors differ");
    }
}

#[test]
fn fast_path_changes_nothing_but_the_event_count() {
    let slow = SyncOptions {
        audit: true,
        fast: false,
    };
    for sched in ["gang", "local"] {
        for l in [1, 3] {
            for comp in ["same", "compute"] {
                let c = cfg(&[
                    ("n", Value::Int(4)),
                    ("l", Value::Int(l)),
                    ("k", Value::Int(3_000)),
                    ("tq", Value::Float(10.0)),
                    ("sched", s(sched)),
                    ("competitors", s(comp)),
                ]);
                let mut a = run(&c, AUDIT).unwrap();
                let mut b = run(&c, slow).unwrap();
                assert!(a.events < b.events || l > 1, "{sched} l={l}");
                for r in [&mut a, &mut b] {
                    r.events = 0;
                    r.max_pending = 0;
                    r.wall_seconds = 0.0;
                }
                assert_eq!(a, b, "{sched} l={l} {comp}");
            }
        }
    }
}

#[test]
fn batches_cut_at_max_batch_change_nothing() {
    // ~5,000 iterations per slot: batches are cut at MAX_BATCH.
    for sched in ["gang", "local"] {
        let c = cfg(&[
            ("n", Value::Int(3)),
            ("l", Value::Int(2)),
            ("grain", Value::Float(0.001)),
            ("var", Value::Float(0.001)),
            ("barrier_cost", Value::Float(0.0)),
            ("tq", Value::Float(10.0)),
            ("k", Value::Int(20_000)),
            ("sched", s(sched)),
            // Processors in lockstep: the gangs are co-scheduled.
            ("skew", Value::Bool(false)),
            ("shuffle", Value::Bool(false)),
        ]);
        let fast = run(&c, SyncOptions::default()).unwrap();
        let slow = run(
            &c,
            SyncOptions {
                audit: false,
                fast: false,
            },
        )
        .unwrap();
        assert!(fast.events * 10 < slow.events, "{sched}");
        let strip = |mut r: SyncResult| {
            r.events = 0;
            r.max_pending = 0;
            r.wall_seconds = 0.0;
            r
        };
        assert_eq!(strip(fast), strip(slow), "{sched}");
    }
}

#[test]
fn long_runs_do_not_grow_memory() {
    for sched in ["gang", "local"] {
        for wait in ["busy", "block"] {
            let c = cfg(&[("sched", s(sched)), ("wait", s(wait))]);
            assert_eq!(c.k, 50_000);
            let short = run(
                &SyncConfig {
                    k: 1_000,
                    ..c.clone()
                },
                SyncOptions::default(),
            )
            .unwrap();
            let long = run(&c, SyncOptions::default()).unwrap();
            assert_eq!(long.iterations, 50_000);
            assert!(
                long.max_pending <= 2 * c.procs() as usize + 4,
                "{}",
                long.max_pending
            );
            assert!(long.max_pending <= short.max_pending + 2);
            assert_eq!(long.batch_means.len(), 20);
            assert!(long.ci90_half_width < 0.05 * long.time_per_iter);
        }
    }
}

#[test]
fn config_keys_and_errors() {
    let mut c = SyncConfig::default();
    assert_eq!(c.procs(), 10);
    c.validate().unwrap();
    c.set("P", &Value::Int(8)).unwrap();
    assert_eq!(c.validate().unwrap_err().field, "n");
    let mut c = SyncConfig::default();
    c.set("tcs", &Value::Float(50.0)).unwrap();
    assert_eq!(c.validate().unwrap_err().field, "tcs");
    let mut c = SyncConfig::default();
    c.set("grain", &Value::Float(-1.0)).unwrap();
    assert_eq!(c.validate().unwrap_err().field, "grain");
    let e = c.set("quantum", &Value::Int(1)).unwrap_err();
    assert_eq!(e.field, "quantum");
    assert!(e.allowed.contains("tq"));
    assert_eq!(c.set("wait", &s("spin")).unwrap_err().field, "wait");
    assert_eq!(c.set("k", &Value::Float(1.5)).unwrap_err().field, "k");
    let c = cfg(&[
        ("wait", s("twophase")),
        ("sched", s("local")),
        ("competitors", s("compute")),
        ("wakeup", s("priority")),
        ("skew", Value::Bool(false)),
        ("P", Value::Int(12)),
    ]);
    assert_eq!(c.wait, WaitStrategy::TwoPhase);
    assert_eq!(c.sched, SyncSched::Local);
    assert_eq!(c.competitors, Competitors::Compute);
    assert_eq!(c.wakeup, Wakeup::Priority);
    assert!(!c.skew);
    assert_eq!(c.procs(), 12);
    assert!(matches!(
        run(&SyncConfig { n: 0, ..c }, SyncOptions::default()),
        Err(crate::machines::common::RunError::Config(e)) if e.field == "n"
    ));
}

#[test]
fn model_inputs() {
    let c = SyncConfig::default();
    assert!((c.t_p() - 1.637).abs() < 1e-12);
    // E[max of 10 U(0,1)] = 10/11; minus the mean 1/2.
    assert!((c.t_w() - (10.0 / 11.0 - 0.5)).abs() < 1e-12);
}

#[test]
fn the_classifier_sees_blocking_gangs_apart_from_spinning_ones() {
    use parsched_core::policy::classify::{Classifier, ClassifierConfig, CoschedClass};
    let classifier = Classifier::new(ClassifierConfig::default()).unwrap();
    let mut classes = Vec::new();
    for wait in ["busy", "block"] {
        let c = cfg(&[
            ("sched", s("local")),
            ("wait", s(wait)),
            ("k", Value::Int(2000)),
            ("grain", Value::Float(1.0)),
        ]);
        let mut m = SyncMachine::new(&c, SyncOptions::default()).unwrap();
        let mut eng = Engine::new();
        let end = m.run(&mut eng).unwrap();
        let obs = m.observation(m.measured_gang(), end);
        assert!(obs.wall_s > 0.2, "past the discovery period: {obs:?}");
        if wait == "busy" {
            assert_eq!(obs.voluntary, 0);
        } else {
            assert!(obs.voluntary > 0);
        }
        classes.push(classifier.classify(&obs));
    }
    assert_eq!(
        classes,
        vec![
            Some(CoschedClass::RequiresCoscheduling),
            Some(CoschedClass::DoesNotCare)
        ]
    );
}

/// A round robin the machine cannot see through (no `as_round_robin`): the
/// machine runs on any `LocalScheduler`, and without the periodic solver it
/// gets the same schedule event by event.
struct Opaque(RoundRobin);

impl LocalScheduler for Opaque {
    fn enqueue(&mut self, t: ThreadId, reason: EnqueueReason) {
        self.0.enqueue(t, reason)
    }
    fn pick_next(&mut self) -> Option<ThreadId> {
        self.0.pick_next()
    }
    fn remove(&mut self, t: ThreadId) -> bool {
        self.0.remove(t)
    }
    fn quantum(&self, t: ThreadId) -> u64 {
        self.0.quantum(t)
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn queued(&self) -> Vec<ThreadId> {
        self.0.queued()
    }
    fn boost(&mut self, t: ThreadId) -> bool {
        self.0.boost(t)
    }
    fn lower(&mut self, t: ThreadId) -> bool {
        self.0.lower(t)
    }
}

#[test]
fn any_local_scheduler_drives_the_machine() {
    for wait in ["busy", "block", "yield"] {
        let c = cfg(&[
            ("sched", s("local")),
            ("wait", s(wait)),
            ("k", Value::Int(3000)),
        ]);
        let mut rr = SyncMachine::new(&c, SyncOptions::default()).unwrap();
        let mut e1 = Engine::new();
        let end1 = rr.run(&mut e1).unwrap();
        let mut op = SyncMachine::with_local_schedulers(&c, SyncOptions::default(), |_| {
            Opaque(RoundRobin::new(ticks(c.tq), c.wakeup))
        })
        .unwrap();
        let mut e2 = Engine::new();
        let end2 = op.run(&mut e2).unwrap();
        assert_eq!(end1, end2, "{wait}");
        assert_eq!(
            (
                rr.stats.useful,
                rr.stats.spin,
                rr.stats.context_switches,
                rr.stats.preemptions
            ),
            (
                op.stats.useful,
                op.stats.spin,
                op.stats.context_switches,
                op.stats.preemptions
            ),
            "{wait}"
        );
        if wait == "busy" {
            // Round robin took the periodic shortcut; the opaque one did not.
            assert!(
                e2.processed() > 10 * e1.processed(),
                "{} vs {}",
                e2.processed(),
                e1.processed()
            );
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]
    /// The estimate a run is refused by (`SyncConfig::estimate`) bounds what
    /// the run does: its events (event path, the slowest) and simulated time,
    /// for every waiting strategy and both schedulers.
    #[test]
    fn the_estimate_bounds_events_and_time(
        n in 1i64..5, extra in 0i64..3, l in 1i64..4, k in 1i64..400,
        tq in 1u32..40, tcs10 in 1u32..5, grain10 in 0u32..60, var10 in 0u32..200,
        expo in proptest::bool::ANY, gang in proptest::bool::ANY,
        wait in 0usize..4, seed in 0i64..100, fast in proptest::bool::ANY,
    ) {
        let tcs = f64::from(tcs10) / 10.0;
        let tq = f64::from(tq).max(tcs + 0.5);
        let c = cfg(&[
            ("n", Value::Int(n)),
            ("P", Value::Int(n + extra)),
            ("l", Value::Int(l)),
            ("k", Value::Int(k)),
            ("tq", Value::Float(tq)),
            ("tcs", Value::Float(tcs)),
            ("grain", Value::Float(f64::from(grain10) / 10.0 + 0.01)),
            ("var", Value::Float(f64::from(var10) / 10.0)),
            ("dist", s(if expo { "exponential" } else { "uniform" })),
            ("sched", s(if gang { "gang" } else { "local" })),
            ("wait", s(["busy", "block", "twophase", "yield"][wait])),
            ("seed", Value::Int(seed)),
        ]);
        let est = c.estimate();
        let r = run(&c, SyncOptions { audit: false, fast }).unwrap();
        proptest::prop_assert!((r.events as f64) <= est.events,
            "{} events > estimate {}", r.events, est.events);
        proptest::prop_assert!(r.end <= est.sim_time_ms,
            "end {} ms > estimate {}", r.end, est.sim_time_ms);
    }
}

#[test]
fn unbounded_configurations_are_refused_before_the_run() {
    use crate::machines::barrier::config::SyncConfig;
    let bad = |kv: &[(&str, Value)]| {
        let mut c = SyncConfig::default();
        for (k, v) in kv {
            c.set(k, v).unwrap();
        }
        c.validate().unwrap_err()
    };
    let e = bad(&[("tq", Value::Float(1e308)), ("k", Value::Int(1))]);
    assert_eq!(e.field, "tq");
    assert!(e.message.contains("10^9 ms"), "{e}");
    assert_eq!(
        bad(&[("barrier_cost", Value::Float(1e308))]).field,
        "barrier_cost"
    );
    // var = 1e9: a legal value, but 50000 iterations of up to 11 days each.
    let e = bad(&[("var", Value::Float(1e9))]);
    assert_eq!(e.field, "k", "{e}");
    assert!(e.message.contains("years"), "{e}");
    let e = bad(&[("var", Value::Float(1e6))]);
    assert_eq!(e.field, "max_events", "{e}");
    assert!(e.allowed.contains("max_events=0"), "{e}");
    // ... which max_events = 0 lifts.
    let mut c = SyncConfig::default();
    c.set("var", &Value::Float(1e6)).unwrap();
    c.set("max_events", &Value::Int(0)).unwrap();
    c.validate().unwrap();
    // The defaults and a long quantum with one iteration run, and fast.
    SyncConfig::default().validate().unwrap();
    let mut c = SyncConfig::default();
    c.set("tq", &Value::Float(1e9)).unwrap();
    c.set("k", &Value::Int(1)).unwrap();
    let t = std::time::Instant::now();
    let r = run(&c, SyncOptions::default()).unwrap();
    assert!(r.iterations == 1 && t.elapsed().as_secs() < 5);
}

/// The tick the module documents is the one its conversions use: one ms
/// (the model unit) is `TICKS_PER_UNIT` ticks of 1 ns.
#[test]
fn one_tick_is_one_nanosecond() {
    assert_eq!(TICK.per_second(), Some(TICKS_PER_UNIT * 1000));
    assert_eq!(ticks(1.0), 1_000_000);
}

/// Slot choosers for `run_with` (each gang's slot in the matrix, at build).
mod gang_place {
    use super::*;
    use parsched_core::policy::gang_place::{FirstFit, SlotChooser, SlotView};

    /// A chooser that records the views it was shown.
    struct Recording<C>(C, Vec<(i64, u32, Vec<u32>, Vec<u32>)>);
    impl<C: SlotChooser> SlotChooser for Recording<C> {
        fn choose(&mut self, v: &SlotView) -> Result<Option<usize>, String> {
            let seen = (
                v.job.id,
                v.procs,
                v.slot_free.to_vec(),
                v.slot_jobs.to_vec(),
            );
            self.1.push(seen);
            self.0.choose(v)
        }
    }

    /// Every gang after the first in a new slot of its own.
    struct NewSlot;
    impl SlotChooser for NewSlot {
        fn choose(&mut self, v: &SlotView) -> Result<Option<usize>, String> {
            Ok(Some(v.slots()))
        }
    }

    /// A valid slot picked at random (xorshift from `seed`): an existing
    /// slot with room or a new one.
    struct Random(u64);
    impl SlotChooser for Random {
        fn choose(&mut self, v: &SlotView) -> Result<Option<usize>, String> {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            let ok: Vec<usize> = (0..=v.slots())
                .filter(|&s| s == v.slots() || v.slot_free[s] >= v.procs)
                .collect();
            Ok(Some(ok[(self.0 % ok.len() as u64) as usize]))
        }
    }

    /// Gives `answer` for gang `at`, first fit for the others.
    struct At(i64, Result<Option<usize>, String>);
    impl SlotChooser for At {
        fn choose(&mut self, v: &SlotView) -> Result<Option<usize>, String> {
            if v.job.id == self.0 {
                return self.1.clone();
            }
            FirstFit.choose(v)
        }
    }

    /// Gangs of 4 on 8 processors, 3 per processor: room for choices.
    fn eight(sched: &str, skew: bool) -> SyncConfig {
        cfg(&[
            ("n", Value::Int(4)),
            ("P", Value::Int(8)),
            ("l", Value::Int(3)),
            ("k", Value::Int(400)),
            ("tq", Value::Float(5.0)),
            ("sched", s(sched)),
            ("skew", Value::Bool(skew)),
        ])
    }

    #[test]
    fn barrier_first_fit_chooser_is_the_built_in() {
        for sched in ["gang", "local"] {
            for wait in ["busy", "block"] {
                for skew in [true, false] {
                    let c = SyncConfig {
                        wait: if wait == "busy" {
                            WaitStrategy::Busy
                        } else {
                            WaitStrategy::Block
                        },
                        ..eight(sched, skew)
                    };
                    let a = run(&c, SyncOptions::default()).unwrap();
                    let mut rec = Recording(FirstFit, Vec::new());
                    let b = run_with(&c, SyncOptions::default(), Some(&mut rec)).unwrap();
                    assert!(a.same_simulation(&b), "{sched}/{wait}/{skew}");
                    // Asked once per gang, in order, with the matrix so far.
                    let ids: Vec<i64> = rec.1.iter().map(|v| v.0).collect();
                    assert_eq!(ids, (0..3 + i64::from(skew)).collect::<Vec<_>>());
                    let last = rec.1.last().unwrap();
                    let want = if skew {
                        (3, 4, vec![0, 0], vec![1, 2])
                    } else {
                        (2, 4, vec![0], vec![2])
                    };
                    assert_eq!(*last, want, "{sched}/{wait}/{skew}");
                }
            }
        }
    }

    #[test]
    fn barrier_competitors_in_new_slots() {
        // P = 8, n = 4, l = 3, no skew. First fit: the measured gang and the
        // first competitor share slot 0 (processors 0-3 and 4-7), the second
        // competitor has slot 1 (0-3; 4-7 idle): the measured gang runs one
        // slot in 2, and a quarter of the cells idle. NewSlot gives every
        // gang a slot of its own (all on processors 0-3): the measured gang
        // runs one slot in 3, so an iteration takes 3/2 as long (its
        // iterations, a few ms, run within its quanta of 5 ms either way),
        // and half of the cells idle.
        let c = eight("gang", false);
        let ff = run(&c, AUDIT).unwrap();
        let ns = run_with(&c, AUDIT, Some(&mut NewSlot)).unwrap();
        let ratio = ns.time_per_iter / ff.time_per_iter;
        assert!(rel(ratio, 1.5) < 0.05, "{ratio}");
        assert!(rel(ff.fragmentation, 0.25) < 0.05, "{}", ff.fragmentation);
        assert!(rel(ns.fragmentation, 0.5) < 0.05, "{}", ns.fragmentation);
        // Under local round robin the allocation fixes the processors:
        // first fit puts 2 threads on processors 0-3 and 1 on 4-7 (the
        // measured gang on 0-3 shares them with one competitor); NewSlot
        // puts all 3 on 0-3 and leaves 4-7 idle, so the measured gang's
        // threads get one quantum in 3 instead of one in 2.
        let c = SyncConfig {
            wait: WaitStrategy::Block,
            ..eight("local", false)
        };
        let ff = run(&c, AUDIT).unwrap();
        let ns = run_with(&c, AUDIT, Some(&mut NewSlot)).unwrap();
        assert!(
            ns.time_per_iter > 1.3 * ff.time_per_iter,
            "{ns:?} vs {ff:?}"
        );
        assert!(ns.useful_utilization < 0.6 * ff.useful_utilization);
    }

    #[test]
    fn barrier_bad_answers_name_the_gang() {
        let c = eight("gang", true);
        let err = |gang: i64, a: Result<Option<usize>, String>| match run_with(
            &c,
            SyncOptions::default(),
            Some(&mut At(gang, a)),
        ) {
            Err(RunError::Machine(MachineError::Policy(e))) => e.0,
            other => panic!("{other:?}"),
        };
        // Skew has slot 0 (all 8 processors), the measured gang slot 1.
        assert_eq!(
            err(1, Ok(Some(5))),
            "gang_place for gang 1 (measured): slot 5 is out of range; allowed: 0..1 (an \
             existing slot) or 1 (a new slot)"
        );
        assert_eq!(
            err(1, Ok(Some(0))),
            "gang_place for gang 1 (measured): slot 0 has no room (0 free cells, the gang \
             needs 4)"
        );
        assert_eq!(
            err(0, Ok(None)),
            "gang_place for gang 0 (skew): returned None; allowed: a slot index in 0..=0 \
             (every gang is placed when the machine is built)"
        );
        assert_eq!(
            err(3, Err("place raised ValueError: no".into())),
            "gang_place for gang 3 (competitor): place raised ValueError: no"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// Any valid placement: the fast paths (batches, the periodic
        /// solver) give exactly the event path's results, and the audit
        /// (threads in their gang's slot, blocked threads off the
        /// processors) holds.
        #[test]
        fn barrier_fast_paths_hold_for_any_placement(
            n in 1i64..5, extra in 0i64..5, l in 1i64..5, k in 1i64..800,
            compute in proptest::bool::ANY, skew in proptest::bool::ANY,
            gang in proptest::bool::ANY, wait in 0usize..3, pick in 1u64..u64::MAX,
            seed in 0i64..1000, tq in 1u32..20,
        ) {
            let c = cfg(&[
                ("n", Value::Int(n)),
                ("P", Value::Int(n + extra)),
                ("l", Value::Int(l)),
                ("k", Value::Int(k)),
                ("tq", Value::Float(f64::from(tq))),
                ("competitors", s(if compute { "compute" } else { "same" })),
                ("skew", Value::Bool(skew)),
                ("seed", Value::Int(seed)),
                ("sched", s(if gang { "gang" } else { "local" })),
                ("wait", s(["busy", "block", "twophase"][wait])),
            ]);
            let fast = run_with(&c, SyncOptions::default(), Some(&mut Random(pick))).unwrap();
            let slow = SyncOptions { audit: true, fast: false };
            let slow = run_with(&c, slow, Some(&mut Random(pick))).unwrap();
            proptest::prop_assert_eq!(format!("{:?}", strip(fast)), format!("{:?}", strip(slow)));
        }
    }
}
