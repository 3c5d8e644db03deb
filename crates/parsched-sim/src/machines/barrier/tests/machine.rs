//! The machine itself: the audit of every combination, slots and blocked
//! threads, determinism, the fast paths against the event-by-event path,
//! batches, memory, the classifier's view, any local scheduler.

use super::*;

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
