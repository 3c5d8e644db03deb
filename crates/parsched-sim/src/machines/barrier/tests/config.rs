//! Keys, errors and units: every key and its error, the model's inputs,
//! the cost estimate bounding a run (refused before it starts), ticks.

use super::*;

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
