use super::*;
use crate::engine::run as run_engine;
use parsched_core::policy::cosched::{CoschedScheme, Scheme};

fn cfg(scheme: CoschedScheme, workload: u32, scale: f64) -> ClusterConfig {
    ClusterConfig {
        scheme,
        workload,
        scale,
        ..ClusterConfig::default()
    }
}

fn all_schemes() -> Vec<CoschedScheme> {
    let mut v: Vec<CoschedScheme> = Scheme::ALL
        .iter()
        .map(|&s| CoschedScheme::Dynamic(s))
        .collect();
    v.extend([CoschedScheme::Gang, CoschedScheme::Fcfs]);
    v
}

#[test]
fn a_small_workload_runs_under_every_scheme_with_its_invariants() {
    let audit = ClusterOptions {
        audit: true,
        ..Default::default()
    };
    for s in all_schemes() {
        let mut c = cfg(s, 7, 0.02);
        c.daemon_period_ms = 50.0;
        c.daemon_run_us = 500.0;
        c.wake_delay_us = 20.0;
        let r = run_once(&c, 1, &audit).unwrap();
        assert_eq!(r.audit_failures, 0, "{s}");
        assert_eq!(r.order_violations, 0, "{s}");
        assert_eq!(r.messages, r.messages_received, "{s}");
        let max = r.job_completion_times.iter().cloned().fold(0.0, f64::max);
        assert_eq!(max, r.completion_time, "{s}");
    }
}

/// Each application alone on 8 nodes runs about 25 s and communicates its
/// stated share (the calibration of `apps.rs`).
#[test]
fn applications_are_calibrated() {
    for app in AppKind::ALL {
        let c = ClusterConfig {
            jobs: vec![app],
            scheme: CoschedScheme::Dynamic(Scheme::LOCAL),
            ..ClusterConfig::default()
        };
        let r = run_once(&c, 7, &ClusterOptions::default()).unwrap();
        let t = r.job_completion_times[0] - c.start_skew_ms * 1e-3;
        assert!((t - 25.0).abs() < 1.5, "{app}: alone {t} s");
        let share = r.comm_share[0];
        let want = app.comm_share();
        if app == AppKind::Ep {
            assert!(share < 0.01, "EP communicates {share}");
        } else {
            assert!(
                (share - want).abs() < 0.2 * want,
                "{app}: communicates {share}, paper {want}"
            );
        }
    }
}

#[test]
fn runs_are_deterministic_whatever_the_workers() {
    let mut c = cfg(CoschedScheme::Dynamic(Scheme::PBT), 3, 0.02);
    c.reps = 3;
    let one = run(
        &c,
        &ClusterOptions {
            workers: 1,
            ..Default::default()
        },
    )
    .unwrap();
    let two = run(
        &c,
        &ClusterOptions {
            workers: 2,
            ..Default::default()
        },
    )
    .unwrap();
    let strip = |r: &ClusterResult| {
        r.runs
            .iter()
            .map(|x| {
                (
                    x.completion_time,
                    x.job_completion_times.clone(),
                    x.events,
                    x.context_switches,
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&one), strip(&two));
    assert!(one.completion_time_ci90.is_finite());
    assert_ne!(one.runs[0].seed, one.runs[1].seed);
}

#[test]
fn the_references_schedule_as_expected() {
    // FCFS runs the jobs one after the other; gang rotates them, so all
    // finish near the end.
    let f = run_once(
        &cfg(CoschedScheme::Fcfs, 5, 0.05),
        1,
        &ClusterOptions::default(),
    )
    .unwrap();
    let t = &f.job_completion_times;
    assert!(t.windows(2).all(|w| w[0] < w[1]), "{t:?}");
    let alone = t[0];
    for (k, x) in t.iter().enumerate() {
        assert!((x - alone * (k + 1) as f64).abs() < 0.05 * x, "{t:?}");
    }
    let g = run_once(
        &cfg(CoschedScheme::Gang, 5, 0.05),
        1,
        &ClusterOptions::default(),
    )
    .unwrap();
    assert!(g.slot_switches > 10);
    let first = g
        .job_completion_times
        .iter()
        .cloned()
        .fold(f64::MAX, f64::min);
    assert!(
        first > 0.8 * g.completion_time,
        "{:?}",
        g.job_completion_times
    );
    assert!((g.completion_time - f.completion_time).abs() < 0.05 * f.completion_time);
}

#[test]
fn schemes_use_their_mechanisms() {
    let o = ClusterOptions::default();
    let get = |s: Scheme| run_once(&cfg(CoschedScheme::Dynamic(s), 5, 0.02), 3, &o).unwrap();
    let local = get(Scheme::LOCAL);
    assert_eq!(
        (local.interrupts, local.boosts, local.blocks, local.yields),
        (0, 0, 0, 0)
    );
    let dcs = get(Scheme::DCS);
    assert!(dcs.interrupts > 0 && dcs.boosts > 0 && dcs.blocks == 0);
    let pb = get(Scheme::PB);
    assert!(pb.interrupts == 0 && pb.boosts > 0);
    let mut c = cfg(CoschedScheme::Dynamic(Scheme::SB), 5, 0.02);
    c.spin_time_us = Some(100.0);
    let sb = run_once(&c, 3, &o).unwrap();
    assert!(sb.blocks > 0 && sb.wakeups > 0 && sb.interrupts > 0 && sb.boosts == 0);
    c.scheme = CoschedScheme::Dynamic(Scheme::SY);
    let sy = run_once(&c, 3, &o).unwrap();
    assert!(sy.yields > 0 && sy.blocks == 0 && sy.interrupts == 0);
    // Messages keep their one-way latency whatever the scheme.
    for r in [&local, &dcs, &pb, &sb, &sy] {
        assert!(
            r.latency_us >= 32.0 && r.latency_us < 400.0,
            "{}",
            r.latency_us
        );
    }
}

#[test]
fn bad_configurations_name_their_field() {
    let bad = |f: &dyn Fn(&mut ClusterConfig), field: &str| {
        let mut c = ClusterConfig::default();
        f(&mut c);
        let e = c.validate().unwrap_err();
        assert_eq!(e.field, field, "{e}");
    };
    bad(&|c| c.workload = 0, "workload");
    bad(&|c| c.workload = 10, "workload");
    bad(&|c| c.latency_us = -1.0, "latency_us");
    bad(&|c| c.spin_time_us = Some(-5.0), "spin_time_us");
    bad(&|c| c.latency_us = 4.0, "latency_us");
    bad(&|c| c.boost_period_ms = 0.0, "boost_period_ms");
    bad(&|c| c.wake_loss = 0.5, "block_timeout_ms");
    bad(&|c| c.probe_node = 8, "probe_node");
    assert_eq!("XYZ".parse::<CoschedScheme>().unwrap_err().field, "scheme");
    assert_eq!("LIFE7".parse::<AppKind>().unwrap_err().field, "jobs");
    assert_eq!("life(12)".parse::<AppKind>().unwrap(), AppKind::Life12);
}

#[test]
fn lost_wakeups_are_rescued_by_the_timeout() {
    let mut c = cfg(CoschedScheme::Dynamic(Scheme::SB), 1, 0.05);
    c.spin_time_us = Some(200.0);
    c.wake_loss = 0.2;
    c.block_timeout_ms = 5.0;
    let r = run_once(
        &c,
        1,
        &ClusterOptions {
            audit: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(r.lost_wakeups > 0);
    assert_eq!(r.audit_failures, 0);
    assert_eq!(r.messages, r.messages_received);
}

#[test]
fn every_key_is_settable_and_names_itself_in_errors() {
    use parsched_core::Value;
    for key in super::keys() {
        let mut c = ClusterConfig::default();
        let e = c
            .set(key, &Value::Str("not-a-value".into()))
            .expect_err(key);
        assert_eq!(e.field, key);
        assert_ne!(e.message, "unknown key", "{key} is listed but not handled");
    }
    let e = ClusterConfig::default()
        .set("nodez", &parsched_core::Value::Int(3))
        .unwrap_err();
    assert_eq!(
        (e.field.as_str(), e.message.as_str()),
        ("nodez", "unknown key")
    );
    let mut c = ClusterConfig::default();
    c.set("jobs", &Value::Str("LIFE(12), mg,ep".into()))
        .unwrap();
    assert_eq!(c.apps(), vec![AppKind::Life12, AppKind::Mg, AppKind::Ep]);
    c.set("scheme", &Value::Str("dcs_sb".into())).unwrap();
    assert_eq!(c.scheme.name(), "DCS-SB");
    c.set("spin_time_us", &Value::Float(500.0)).unwrap();
    assert_eq!(c.spin_time_us, Some(500.0));
    c.set("spin_time_us", &Value::Str("none".into())).unwrap();
    assert_eq!(c.spin_time_us, None);
    c.set("local", &Value::Str("rr".into())).unwrap();
    assert_eq!(c.local, LocalKind::Rr);
    c.set("dispatch_table", &Value::Str("solaris".into()))
        .unwrap();
    assert!(c.dispatch_table.is_none());
}

#[test]
fn dispatch_tables_load_from_toml_or_dispadmin_text() {
    use parsched_core::policy::ts::DispatchTable;
    use parsched_core::Value;
    let stock = DispatchTable::solaris();
    let text = toml::to_string(&stock).unwrap();
    let mut c = ClusterConfig::default();
    c.set("dispatch_table", &Value::Str(text.clone())).unwrap();
    assert_eq!(c.dispatch_table.as_ref(), Some(&stock));
    // a malformed entry: the error names the field and a line
    let bad = text.replacen("quantum_ms = 200", "quantum_ms = \"x\"", 1);
    assert_ne!(bad, text);
    let e = c.set("dispatch_table", &Value::Str(bad)).unwrap_err();
    assert_eq!(e.field, "dispatch_table");
    assert!(e.message.starts_with("line "), "{}", e.message);
    // a level pointing outside the table
    let out = text.replacen("tqexp = 0", "tqexp = 99", 1);
    assert_ne!(out, text);
    let e = c.set("dispatch_table", &Value::Str(out)).unwrap_err();
    assert_eq!(e.field, "dispatch_table");
    let e = c
        .set("dispatch_table", &Value::Str("garbage".into()))
        .unwrap_err();
    assert_eq!(e.field, "dispatch_table");
}

#[test]
fn small_messages_take_the_papers_32_us_one_way() {
    // LIFE(12) alone: 4-byte barrier messages, receivers polling on their
    // own processors
    let c = ClusterConfig {
        jobs: vec![AppKind::Life12],
        scheme: CoschedScheme::Dynamic(Scheme::LOCAL),
        scale: 0.01,
        ..ClusterConfig::default()
    };
    let r = run(&c, &ClusterOptions::default()).unwrap();
    let lat = r.runs[0].small_latency_us;
    // 32 µs plus 4 bytes of wire time (0.1 µs) and rare link queueing
    assert!((32.0..33.0).contains(&lat), "{lat}");
    // big LIFE(3.5) messages are slower on average, and are not small
    let c = ClusterConfig {
        jobs: vec![AppKind::Life3_5],
        ..c
    };
    let r = run(&c, &ClusterOptions::default()).unwrap();
    // 3.5-7 KB boundaries: 32 µs + 100-210 µs of bytes, queued on the link
    assert!(r.runs[0].latency_us > 150.0, "{}", r.runs[0].latency_us);
}

#[test]
fn boost_to_takes_a_name_a_level_or_an_offset() {
    use parsched_core::policy::ts::BoostTo;
    use parsched_core::Value;
    let mut c = ClusterConfig::default();
    for (v, want) in [
        (Value::Str("sleep_return".into()), BoostTo::SleepReturn),
        (
            Value::Str("sleep_return+2".into()),
            BoostTo::AboveSleepReturn(2),
        ),
        (Value::Str("57".into()), BoostTo::Level(57)),
        (Value::Int(55), BoostTo::Level(55)),
        (Value::Float(58.0), BoostTo::Level(58)),
        (Value::Str("top".into()), BoostTo::Top),
    ] {
        c.set("boost_to", &v).unwrap();
        assert_eq!(c.boost_to, want, "{v:?}");
        c.validate().unwrap();
    }
    // errors: one line naming boost_to
    for v in [
        Value::Str("middle".into()),
        Value::Int(-1),
        Value::Int(300),
        Value::Float(57.5),
        Value::Bool(true),
        Value::Str("sleep_return+x".into()),
    ] {
        let e = ClusterConfig::default().set("boost_to", &v).unwrap_err();
        assert_eq!(e.field, "boost_to", "{v:?}");
        assert!(!e.to_string().contains('\n'), "{e}");
    }
    // a level is checked against the table in use
    c.set("boost_to", &parsched_core::Value::Int(60)).unwrap();
    let e = c.validate().unwrap_err();
    assert_eq!(e.field, "boost_to");
    assert!(e.to_string().contains("0..=59"), "{e}");
    for (key, bad) in [
        ("boost_cap", Value::Int(-3)),
        ("boost_queue", Value::Str("mid".into())),
    ] {
        let e = ClusterConfig::default().set(key, &bad).unwrap_err();
        assert_eq!(e.field, key);
    }
}

/// The cap holds every process to `boost_cap` boosts per second, and the
/// refused ones are counted; without a cap none are refused.
#[test]
fn boost_cap_limits_the_boosts_per_second() {
    let o = ClusterOptions {
        audit: true,
        ..Default::default()
    };
    let mut c = cfg(CoschedScheme::Dynamic(Scheme::PB), 5, 0.05);
    let free = run_once(&c, 1, &o).unwrap();
    assert_eq!(free.boosts_capped, 0);
    c.boost_cap = 2;
    let capped = run_once(&c, 1, &o).unwrap();
    assert_eq!(capped.audit_failures, 0);
    assert!(capped.boosts_capped > 0);
    // 32 processes, each at most 2 boosts in each (per-node) second
    let seconds = capped.completion_time.ceil() + 1.0;
    assert!(
        (capped.boosts as f64) <= 32.0 * 2.0 * seconds,
        "{} boosts in {seconds} s",
        capped.boosts
    );
    assert!(free.boosts as f64 > 32.0 * 2.0 * seconds);
}

/// The other readings of a boost run clean under the busy-waiting schemes
/// that boost (the audit checks the machine's invariants).
#[test]
fn every_boost_reading_runs_clean() {
    use parsched_core::policy::ts::BoostTo;
    let o = ClusterOptions {
        audit: true,
        ..Default::default()
    };
    for s in [Scheme::DCS, Scheme::PBT, Scheme::PB_SY] {
        for (to, tail, transient) in [
            (BoostTo::Level(55), false, false),
            (BoostTo::AboveSleepReturn(1), true, false),
            (BoostTo::Top, true, true),
        ] {
            let mut c = cfg(CoschedScheme::Dynamic(s), 3, 0.02);
            c.boost_to = to;
            c.boost_queue = if tail {
                BoostQueue::Tail
            } else {
                BoostQueue::Head
            };
            c.boost_transient = transient;
            c.boost_cap = 5;
            let r = run_once(&c, 2, &o).unwrap();
            assert_eq!(r.audit_failures, 0, "{s} {to}");
            assert_eq!(r.messages, r.messages_received, "{s} {to}");
            assert!(r.boosts > 0, "{s} {to}");
        }
    }
}

/// Two single-process jobs (no barrier) of `w1` and `w2` µs of work on one
/// node of two processors, with nothing else costing time.
fn two_sequential(scheme: CoschedScheme, smt: u32, speed: f64, w1: f64, w2: f64) -> ClusterConfig {
    use crate::machines::cluster::config::BspJob;
    let job = |name: &str, w: f64| BspJob {
        name: name.into(),
        mult: vec![1.0],
        grain_us: w,
        iterations: 1,
        background: false,
    };
    ClusterConfig {
        scheme,
        nodes: 1,
        cpus_per_node: 2,
        local: LocalKind::O1,
        smt_threads_per_core: smt,
        smt_speed: speed,
        bsp_jobs: vec![job("a", w1), job("b", w2)],
        start_skew_ms: 0.0,
        context_switch_us: 0.0,
        latency_us: 0.0,
        send_overhead_us: 0.0,
        recv_overhead_us: 0.0,
        spin_time_us: Some(0.0),
        ..ClusterConfig::default()
    }
}

/// By hand: both jobs start at 0 on the two hardware threads of one core.
/// At `smt_speed` 0.5 job a's 1 ms takes 2 ms; by then job b has done 1 of
/// its 2 ms and runs the rest alone at full speed: 3 ms. At 0.6: a takes
/// 1/0.6 ms = 1,666,667 ns (rounded up); b has done 1 ms by then and ends
/// 1 ms later, at 2,666,667 ns. Without SMT: 1 and 2 ms.
#[test]
fn smt_siblings_run_at_smt_speed_exactly() {
    let opts = ClusterOptions {
        audit: true,
        ..Default::default()
    };
    for scheme in [CoschedScheme::Gang, CoschedScheme::Dynamic(Scheme::SB)] {
        let ns = |c: &ClusterConfig| -> Vec<u64> {
            let r = run_once(c, 1, &opts).unwrap();
            r.job_completion_times
                .iter()
                .map(|t| (t * 1e9).round() as u64)
                .collect()
        };
        let off = two_sequential(scheme, 1, 0.5, 1000.0, 2000.0);
        assert_eq!(ns(&off), vec![1_000_000, 2_000_000], "{scheme} off");
        let half = two_sequential(scheme, 2, 0.5, 1000.0, 2000.0);
        assert_eq!(ns(&half), vec![2_000_000, 3_000_000], "{scheme} 0.5");
        let six = two_sequential(scheme, 2, 0.6, 1000.0, 2000.0);
        assert_eq!(ns(&six), vec![1_666_667, 2_666_667], "{scheme} 0.6");
    }
}

#[test]
fn smt_configurations_are_checked() {
    let mut c = two_sequential(CoschedScheme::Gang, 2, 0.6, 1.0, 1.0);
    c.validate().unwrap();
    c.cpus_per_node = 3;
    assert_eq!(c.validate().unwrap_err().field, "smt_threads_per_core");
    c.cpus_per_node = 2;
    c.smt_threads_per_core = 4;
    assert_eq!(c.validate().unwrap_err().field, "smt_threads_per_core");
    c.smt_threads_per_core = 2;
    c.smt_speed = 1.5;
    assert_eq!(c.validate().unwrap_err().field, "smt_speed");
}

/// Gang scheduling with `gang_background_apart`: a background job never
/// shares a row with a foreground job; without it first fit packs it into
/// the free cell of the first row.
#[test]
fn gang_background_apart_gives_stressors_rows_of_their_own() {
    use crate::machines::cluster::config::BspJob;
    let job = |w: usize, bg: bool| BspJob {
        name: "j".into(),
        mult: vec![1.0; w],
        grain_us: 1000.0,
        iterations: if bg { 1_000_000 } else { 100 },
        background: bg,
    };
    let base = ClusterConfig {
        scheme: CoschedScheme::Gang,
        nodes: 1,
        cpus_per_node: 4,
        local: LocalKind::O1,
        bsp_jobs: vec![job(3, false), job(1, true)],
        gang_slot_ms: 10.0,
        ..ClusterConfig::default()
    };
    let opts = ClusterOptions {
        audit: true,
        ..Default::default()
    };
    let packed = run_once(&base, 1, &opts).unwrap();
    let apart = run_once(
        &ClusterConfig {
            gang_background_apart: true,
            ..base.clone()
        },
        1,
        &opts,
    )
    .unwrap();
    // Packed: the program runs every slot (≈ 0.1 s of compute plus its
    // barriers); apart: every other slot, about twice as long.
    let (p, a) = (packed.completion_time, apart.completion_time);
    assert!(p < 0.13, "packed {p}");
    assert!(a > 1.8 * p, "apart {a} vs packed {p}");
}

/// A program that touches regions reaches the cluster machine's `Op::Touch`
/// arm as a typed program error, not a panic (the machine models no caches;
/// its constructor refuses such programs too).
#[test]
fn a_region_touch_is_a_program_error_not_a_panic() {
    let c = cfg(CoschedScheme::Dynamic(Scheme::LOCAL), 7, 0.02);
    let mut eng = Engine::new();
    let mut m = ClusterMachine::new(&c, &c.plans(), 1, false, &mut eng).unwrap();
    let memlat = std::sync::Arc::new(parsched_core::program::Program::memlat(1 << 20, 4096, 10));
    for p in m.programs.iter_mut() {
        *p = memlat.clone();
    }
    match run_engine(&mut m, &mut eng) {
        Err(ClusterError::Program(msg)) => assert!(msg.contains("models no caches"), "{msg}"),
        other => panic!("expected a program error, got {other:?}"),
    }
}

/// A set cancel flag stops a cluster run with `Interrupted` (the one flag of
/// `crate::cancel`, given as an option or installed by `with_cancel`); an
/// unset flag changes nothing.
#[test]
fn a_set_cancel_flag_interrupts_the_run() {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    let c = cfg(CoschedScheme::Dynamic(Scheme::LOCAL), 1, 0.05);
    let set = Arc::new(AtomicBool::new(true));
    let opts = ClusterOptions {
        cancel: Some(set.clone()),
        ..Default::default()
    };
    assert_eq!(run_once(&c, 1, &opts), Err(ClusterError::Interrupted));
    let plain = ClusterOptions::default();
    let r = crate::cancel::with_cancel(&set, || run(&c, &plain));
    assert_eq!(r.unwrap_err(), ClusterError::Interrupted);
    let unset = ClusterOptions {
        cancel: Some(Arc::new(AtomicBool::new(false))),
        ..Default::default()
    };
    let a = run_once(&c, 1, &unset).unwrap();
    let b = run_once(&c, 1, &plain).unwrap();
    assert!(
        a.events > u64::from(crate::cancel::CHECK_EVERY),
        "{}",
        a.events
    );
    assert_eq!(a.completion_time, b.completion_time);
    assert_eq!(a.events, b.events);
}

/// `ts_semantics`: both rule sets (Solaris `ts.c`'s, the default, and
/// parsched's earlier ones) run every scheme with the machine's invariants,
/// deterministically, and the rules change the schedule of a coscheduling
/// scheme.
#[test]
fn both_time_sharing_rule_sets_run_every_scheme_clean_and_differ() {
    use parsched_core::policy::ts::TsSemantics;
    assert_eq!(ClusterConfig::default().ts_semantics, TsSemantics::Solaris);
    let audit = ClusterOptions {
        audit: true,
        ..Default::default()
    };
    for (s, rules) in all_schemes()
        .into_iter()
        .flat_map(|s| [(s, TsSemantics::Solaris), (s, TsSemantics::Parsched)])
    {
        let mut c = cfg(s, 5, 0.02);
        c.ts_semantics = rules;
        let r = run_once(&c, 1, &audit).unwrap();
        assert_eq!(r.audit_failures, 0, "{s}");
        assert_eq!(r.order_violations, 0, "{s}");
        assert_eq!(r.messages, r.messages_received, "{s}");
        let again = run_once(&c, 1, &audit).unwrap();
        assert_eq!(r.completion_time, again.completion_time, "{s}");
    }
    let mut c = cfg(CoschedScheme::Dynamic(Scheme::SB), 5, 0.02);
    let solaris = run_once(&c, 1, &audit).unwrap();
    c.ts_semantics = TsSemantics::Parsched;
    let parsched = run_once(&c, 1, &audit).unwrap();
    assert_ne!(parsched.job_completion_times, solaris.job_completion_times);
}

/// `pb_skip_running` (default on): the periodic-boost schemes run clean
/// whether or not the timer passes over the running process, and the
/// choice changes PB's schedule.
#[test]
fn the_boost_timer_passes_over_the_running_process() {
    assert!(ClusterConfig::default().pb_skip_running);
    let audit = ClusterOptions {
        audit: true,
        ..Default::default()
    };
    for s in [Scheme::PB, Scheme::PBT, Scheme::PB_SB, Scheme::PB_SY] {
        let mut c = cfg(CoschedScheme::Dynamic(s), 5, 0.02);
        c.pb_skip_running = false;
        let before = run_once(&c, 1, &audit).unwrap();
        c.pb_skip_running = true;
        let r = run_once(&c, 1, &audit).unwrap();
        assert_eq!(r.audit_failures, 0, "{s}");
        assert_eq!(r.messages, r.messages_received, "{s}");
        assert!(r.boosts > 0, "{s}");
        if s == Scheme::PB {
            assert_ne!(before.job_completion_times, r.job_completion_times);
        }
    }
}

#[test]
fn one_tick_is_one_nanosecond_in_every_conversion() {
    assert_eq!(super::TICKS_PER_S, 1_000_000_000);
    assert_eq!(super::TICK.seconds(1_500_000_000), Some(1.5));
}

/// The periodic boost's target chosen outside the core: a rule written from
/// the view (PB's round robin from `next`) gives the built-in run exactly;
/// a rule that never boosts leaves only the timer's cost; a scheme without
/// a periodic boost is refused by name, a bad answer names the node.
#[test]
fn a_boost_rule_from_outside_is_checked_and_pb_from_the_view_is_pb() {
    use parsched_core::policy::cosched::{BoostChooser, BoostView, ProcState};
    struct Pb;
    impl BoostChooser for Pb {
        fn choose(&mut self, v: &BoostView) -> Result<Option<usize>, String> {
            let n = v.endpoints.len();
            let e = v.endpoints;
            Ok((0..n).map(|k| (v.next + k) % n).find(|&i| {
                e[i].pending > 0
                    && e[i].state != ProcState::Done
                    && !(v.skip_running && e[i].state == ProcState::Running)
            }))
        }
    }
    struct Never;
    impl BoostChooser for Never {
        fn choose(&mut self, _: &BoostView) -> Result<Option<usize>, String> {
            Ok(None)
        }
    }
    struct Fixed(usize);
    impl BoostChooser for Fixed {
        fn choose(&mut self, _: &BoostView) -> Result<Option<usize>, String> {
            Ok(Some(self.0))
        }
    }
    let o = ClusterOptions::default();
    let mut c = cfg(CoschedScheme::Dynamic(Scheme::PB), 5, 0.02);
    c.reps = 2;
    let strip = |mut r: ClusterResult| {
        for run in &mut r.runs {
            run.wall_seconds = 0.0;
        }
        r
    };
    let built_in = strip(run(&c, &o).unwrap());
    let mine = strip(run_with_boost(&c, &o, &mut Pb).unwrap());
    assert_eq!(mine, built_in);
    assert!(built_in.runs[0].boosts > 0);
    let never = run_with_boost(&c, &o, &mut Never).unwrap();
    assert_eq!(never.runs[0].boosts, 0);
    assert_ne!(never.completion_time, built_in.completion_time);
    let e = run_with_boost(&c, &o, &mut Fixed(99)).unwrap_err();
    assert!(
        matches!(&e, ClusterError::Policy(p) if p.0.starts_with("boost on node ") && p.0.contains(": endpoint 99 is out of range")),
        "{e}"
    );
    let local = cfg(CoschedScheme::Dynamic(Scheme::DCS), 5, 0.02);
    let e = run_with_boost(&local, &o, &mut Pb).unwrap_err();
    assert!(
        matches!(&e, ClusterError::Config(c) if c.field == "boost"),
        "{e}"
    );
}

/// Issue #27: networks of workstations (cosched) and the parallel desktop
/// (fcs) had no bound on a run's cost (`scale=200` runs for hours). Their
/// cost cannot be bounded before the run (local scheduling stretches a run
/// 100x), so a replication stops once it passes `max_events`, with one line
/// naming the key; a run under the limit is unchanged, and 0 lifts it.
#[test]
fn runs_past_max_events_stop_with_one_line_naming_the_key() {
    let mut c = cfg(CoschedScheme::Gang, 7, 0.02);
    let full = run(&c, &ClusterOptions::default()).unwrap();
    let events = full.runs[0].events;
    c.set("max_events", &parsched_core::Value::Int(events as i64))
        .unwrap();
    let same = run(&c, &ClusterOptions::default()).unwrap();
    assert_eq!(
        same.runs[0].job_completion_times,
        full.runs[0].job_completion_times
    );
    assert_eq!(same.runs[0].events, events);
    c.set("max_events", &parsched_core::Value::Int(events as i64 / 2))
        .unwrap();
    let e = run(&c, &ClusterOptions::default()).unwrap_err();
    let ClusterError::Config(e) = e else {
        panic!("{e}")
    };
    assert_eq!(e.field, "max_events");
    let line = e.to_string();
    assert!(
        !line.contains('\n') && line.contains("max_events=0"),
        "{line}"
    );
    c.set("max_events", &parsched_core::Value::Int(0)).unwrap();
    assert_eq!(
        run(&c, &ClusterOptions::default()).unwrap().runs[0].events,
        events
    );
    // The parallel desktop and its figures take the key too: `desktop`'s
    // tests.
}
