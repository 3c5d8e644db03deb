use super::*;
use crate::workloads::swf::SwfRules;
use parsched_core::schema::Choice;
use parsched_core::Value;

fn j(id: i64, submit: u64, runtime: u64, procs: u32, requested: u64) -> BatchJob {
    BatchJob::new(id, submit, runtime, procs, requested)
}

fn starts(jobs: &[BatchJob], procs: u32, policy: &str) -> Vec<u64> {
    let mut c = BatchConfig::default();
    c.set("policy", &Value::Str(policy.into())).unwrap();
    let r = simulate(jobs.to_vec(), procs, &c).unwrap();
    r.outcomes.iter().map(|o| o.start).collect()
}

#[test]
fn completions_before_arrivals_at_equal_times() {
    // Job 0 holds the whole machine until 10; job 1 arrives at exactly
    // 10 and starts at 10 under every policy.
    let jobs = [j(1, 0, 10, 4, 10), j(2, 10, 5, 4, 5)];
    for p in ["fcfs", "easy", "conservative", "gang"] {
        assert_eq!(starts(&jobs, 4, p), vec![0, 10], "{p}");
    }
}

#[test]
fn zero_runtime_jobs_finish_at_their_start() {
    let jobs = [j(1, 0, 0, 4, 1), j(2, 0, 0, 4, 1), j(3, 0, 3, 4, 3)];
    for p in ["fcfs", "easy", "conservative", "gang"] {
        let mut c = BatchConfig::default();
        c.set("policy", &Value::Str(p.into())).unwrap();
        let r = simulate(jobs.to_vec(), 4, &c).unwrap();
        let se: Vec<(u64, u64)> = r.outcomes.iter().map(|o| (o.start, o.end)).collect();
        assert_eq!(se, vec![(0, 0), (0, 0), (0, 3)], "{p}");
    }
}

#[test]
fn kill_on_overrun() {
    let jobs = [j(1, 0, 100, 2, 50), j(2, 0, 10, 2, 10)];
    let mut c = BatchConfig {
        kill_on_overrun: true,
        ..BatchConfig::default()
    };
    let r = simulate(jobs.to_vec(), 2, &c).unwrap();
    assert_eq!(r.outcomes[0].end, 50);
    assert!(r.outcomes[0].killed);
    assert_eq!(r.outcomes[1].start, 50);
    assert_eq!(r.summary.killed, 1);
    c.kill_on_overrun = false;
    let r = simulate(jobs.to_vec(), 2, &c).unwrap();
    assert_eq!(r.outcomes[1].start, 100);
}

#[test]
fn metrics_and_exports() {
    // 2 procs: A(2 procs, 0..10), B submitted 0 waits until 10, runs 5.
    let jobs = [j(7, 0, 10, 2, 20), j(8, 0, 5, 1, 5)];
    let r = simulate(jobs.to_vec(), 2, &BatchConfig::default()).unwrap();
    let s = &r.summary;
    assert_eq!(s.makespan, 15);
    assert_eq!(s.avg_wait, 5.0);
    assert_eq!(s.avg_response, 12.5);
    // bsld: A 10/10 = 1; B 15/max(5,10) = 1.5.
    assert_eq!(s.avg_bounded_slowdown, 1.25);
    assert_eq!(s.avg_slowdown, (1.0 + 3.0) / 2.0);
    assert!((s.utilization - 25.0 / 30.0).abs() < 1e-12);
    assert_eq!(r.queue_length, vec![(0, 1), (10, 0)]);
    assert!((s.avg_queue - 10.0 / 15.0).abs() < 1e-12);
    assert_eq!(r.resources(0), &[(0, 1)]);
    assert_eq!(r.resources(1), &[(0, 0)]);
    let mut csv = Vec::new();
    r.write_jobs_csv(&mut csv).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], JOBS_CSV_COLUMNS.join(","));
    assert_eq!(
        lines[2],
        "8,w0,delay,0,1,5,1,COMPLETED_SUCCESSFULLY,10,5,15,10,15,3,0,-1,"
    );
    let mut swf_out = Vec::new();
    r.write_swf(&mut swf_out).unwrap();
    let (h, recs) = swf::read_all(&swf_out[..]).unwrap();
    assert_eq!(h.max_procs, Some(2));
    assert_eq!(recs[1].wait_time, 10);
    assert_eq!(recs[1].run_time, 5);
    assert_eq!(recs[1].status, 1);
}

#[test]
fn config_keys_and_errors() {
    let mut c = BatchConfig::default();
    for (k, v) in [
        ("policy", Value::Str("gang".into())),
        ("procs", Value::Int(64)),
        ("kill_on_overrun", Value::Bool(true)),
        ("bsld_tau", Value::Float(60.0)),
        ("procs_rule", Value::Str("requested".into())),
        ("missing_requested_time", Value::Str("factor".into())),
        ("requested_time_factor", Value::Float(2.0)),
        ("missing_runtime", Value::Str("requested".into())),
        ("zero_runtime", Value::Str("drop".into())),
        ("cancelled", Value::Str("keep".into())),
        ("unsorted", Value::Str("reject".into())),
        ("too_wide", Value::Str("clamp".into())),
        ("mpl", Value::Int(3)),
        ("quantum", Value::Int(30)),
        ("gang_backfill", Value::Str("false".into())),
        ("slot_allocation", Value::Str("best_fit".into())),
        ("load_factor", Value::Float(1.2)),
        ("track_resources", Value::Bool(false)),
        ("workload", Value::Str("lublin".into())),
        ("workload_jobs", Value::Int(500)),
        ("workload_load", Value::Float(0.7)),
        ("workload_seed", Value::Int(9)),
        ("workload_types", Value::Bool(false)),
        ("workload_requested", Value::Str("tsafrir05".into())),
        ("workload_estimate_max", Value::Int(36000)),
        ("workload_estimate_max_percent", Value::Float(30.0)),
        ("workload_estimate_bins", Value::Str("power".into())),
        ("extra_fields", Value::Str("error".into())),
        ("max_events", Value::Int(5)),
        ("order", Value::Str("wfp3".into())),
        ("backfill_order", Value::Str("priority".into())),
        ("mf_weight_age", Value::Float(1.0)),
        ("mf_weight_fairshare", Value::Float(2.0)),
        ("mf_weight_size", Value::Float(3.0)),
        ("mf_weight_partition", Value::Float(4.0)),
        ("mf_weight_qos", Value::Float(5.0)),
        ("mf_max_age_s", Value::Int(60)),
        ("mf_half_life_s", Value::Int(0)),
        ("mf_favor_small", Value::Bool(true)),
        ("mf_partition_tiers", Value::Str("1:10, 2:5".into())),
        ("mf_qos_tiers", Value::Str("none".into())),
    ] {
        c.set(k, &v).unwrap();
    }
    assert_eq!(super::keys().len(), 42);
    let m = &c.multifactor;
    assert_eq!(
        (
            m.weight_age,
            m.weight_fairshare,
            m.weight_size,
            m.weight_partition,
            m.weight_qos
        ),
        (1.0, 2.0, 3.0, 4.0, 5.0)
    );
    assert_eq!((m.max_age_s, m.half_life_s, m.favor_small), (60, 0, true));
    assert_eq!(m.partition_tiers, vec![(1, 10.0), (2, 5.0)]);
    assert!(m.qos_tiers.is_empty());
    // reservation_depth: none under gang
    c.set("reservation_depth", &Value::Int(3)).unwrap();
    assert_eq!(c.reservation_depth, Some(3));
    c.order = parsched_core::policy::batch::QueueOrder::FCFS;
    assert_eq!(c.validate().unwrap_err().field, "reservation_depth");
    c.set("reservation_depth", &Value::Str("auto".into()))
        .unwrap();
    assert_eq!(c.reservation_depth, None);
    c.order = parsched_core::policy::batch::QueueOrder::named("wfp3");
    assert_eq!(
        c.order,
        parsched_core::policy::batch::QueueOrder::named("wfp3")
    );
    // (gang admits in arrival order: an order is refused with it)
    assert_eq!(c.validate().unwrap_err().field, "order");
    c.order = parsched_core::policy::batch::QueueOrder::FCFS;
    assert_eq!(
        c.rules.extra_fields,
        crate::workloads::swf::ExtraFields::Error
    );
    assert_eq!(c.workload, WorkloadKind::Lublin);
    assert_eq!(
        (
            c.workload_jobs,
            c.workload_load,
            c.workload_seed,
            c.workload_types
        ),
        (500, Some(0.7), 9, false)
    );
    let lc = super::lublin_config(&c);
    assert_eq!(
        (
            lc.requested.name(),
            lc.estimate_max,
            lc.estimate_max_percent,
            lc.estimate_bins.name()
        ),
        ("tsafrir05", 36000, Some(30.0), "power")
    );
    c.validate().unwrap();
    assert_eq!(c.policy, BatchPolicyKind::Gang);
    assert_eq!(c.procs, Some(64));
    assert_eq!(c.rules.requested_time_factor, 2.0);
    let e = c.set("policy", &Value::Str("sjf".into())).unwrap_err();
    assert_eq!(e.field, "policy");
    assert_eq!(e.allowed, "fcfs|easy|conservative|gang");
    let e = c.set("nope", &Value::Int(1)).unwrap_err();
    assert_eq!(e.message, "unknown key");
    c.mpl = 0;
    assert_eq!(c.validate().unwrap_err().field, "mpl");
    c.mpl = 2;
    c.bsld_tau = 0.0;
    assert_eq!(c.validate().unwrap_err().field, "bsld_tau");
}

#[test]
fn bad_job_lists_are_errors() {
    let c = BatchConfig::default();
    let e = simulate(vec![j(1, 0, 1, 5, 1)], 4, &c).unwrap_err();
    assert!(e.to_string().contains("needs 5 processors"), "{e}");
    let e = simulate(vec![j(1, 5, 1, 1, 1), j(2, 4, 1, 1, 1)], 4, &c).unwrap_err();
    assert!(e.to_string().contains("sort the jobs"), "{e}");
}

#[test]
fn too_wide_rules() {
    let trace = || Trace {
        jobs: vec![j(1, 0, 5, 8, 5), j(2, 1, 5, 2, 5)],
        report: LoadReport {
            records: 2,
            kept: 2,
            ..LoadReport::default()
        },
        ..Trace::default()
    };
    let mut c = BatchConfig {
        procs: Some(4),
        ..BatchConfig::default()
    };
    let (jobs, p, rep) = prepare(trace(), &c).unwrap();
    assert_eq!(
        (jobs.len(), p, rep.dropped_too_wide, rep.kept),
        (1, 4, 1, 1)
    );
    c.too_wide = TooWide::Clamp;
    let (jobs, _, rep) = prepare(trace(), &c).unwrap();
    assert_eq!((jobs[0].procs, rep.repaired_too_wide), (4, 1));
    c.too_wide = TooWide::Error;
    assert!(prepare(trace(), &c).is_err());
    c.procs = None;
    let e = prepare(trace(), &c).unwrap_err();
    assert!(e.to_string().starts_with("procs:"), "{e}");
}

#[test]
fn gang_time_slices_two_slots() {
    // 4 procs, mpl 2, quantum 10. A(4 wide, 30 s) at 0 in slot 0; B(4
    // wide, 15 s) at 0 in slot 1. Slot 0 runs 0..10 (A:20 left), slot 1
    // 10..20 (B:5 left), slot 0 20..30 (A:10 left), slot 1 30..35 (B
    // ends), slot 0 35..45 (A ends, alone, no more switches).
    let jobs = [j(1, 0, 30, 4, 30), j(2, 0, 15, 4, 15)];
    let c = BatchConfig {
        policy: BatchPolicyKind::Gang,
        mpl: 2,
        quantum: 10,
        ..BatchConfig::default()
    };
    let r = simulate(jobs.to_vec(), 4, &c).unwrap();
    let se: Vec<(u64, u64)> = r.outcomes.iter().map(|o| (o.start, o.end)).collect();
    assert_eq!(se, vec![(0, 45), (10, 35)]);
    assert_eq!(r.summary.slot_switches, 4);
    // A third job (2 wide) submitted at 1 finds both slots full (mpl 2)
    // and waits. B ends at 35 inside slot 1's quantum (30..40); the
    // emptied slot is reused for C, which runs at once: 35..40. A then
    // runs alone 40..50.
    let jobs = [j(1, 0, 30, 4, 30), j(2, 0, 15, 4, 15), j(3, 1, 5, 2, 5)];
    let r = simulate(jobs.to_vec(), 4, &c).unwrap();
    let se: Vec<(u64, u64)> = r.outcomes.iter().map(|o| (o.start, o.end)).collect();
    assert_eq!(se, vec![(0, 50), (10, 35), (35, 40)]);
}

#[test]
fn load_scaling_compresses_interarrivals() {
    let mut jobs = vec![
        j(1, 100, 10, 2, 10),
        j(2, 110, 10, 2, 10),
        j(3, 130, 10, 2, 10),
    ];
    let before = offered_load(&jobs, 4);
    scale_load(&mut jobs, 2.0);
    let s: Vec<u64> = jobs.iter().map(|x| x.submit).collect();
    assert_eq!(s, vec![100, 105, 115]);
    assert!((offered_load(&jobs, 4) - 2.0 * before).abs() < 1e-12);
    scale_load(&mut jobs, 0.5);
    let s: Vec<u64> = jobs.iter().map(|x| x.submit).collect();
    assert_eq!(s, vec![100, 110, 130]);
}

#[test]
fn lublin_workload_runs_under_every_policy() {
    let mut lc = crate::workloads::lublin::LublinConfig::for_machine(64);
    lc.jobs = 2000;
    let trace = crate::workloads::lublin::generate(&lc, &SwfRules::default()).unwrap();
    assert_eq!(trace.header.machine_procs(), Some(64));
    for p in ["fcfs", "easy", "conservative", "gang"] {
        let mut c = BatchConfig::default();
        c.set("policy", &Value::Str(p.into())).unwrap();
        c.set("load_factor", &Value::Float(1.5)).unwrap();
        let r = run_loaded(trace.clone(), &c).unwrap();
        assert_eq!(r.summary.jobs, 2000, "{p}");
        assert_eq!(r.procs, 64);
    }
}

#[test]
fn absurd_times_are_errors() {
    let c = BatchConfig::default();
    let e = simulate(vec![j(1, 0, MAX_TIME, 1, 1)], 4, &c).unwrap_err();
    assert!(e.to_string().contains("2^40"), "{e}");
    let e = simulate(vec![j(1, 0, 1, 1, u64::MAX)], 4, &c).unwrap_err();
    assert!(e.to_string().contains("2^40"), "{e}");
}

/// A generated workload run in memory is the workload written as SWF (the
/// `parsched generate lublin` file) and run from that file: same jobs, same
/// schedule, with and without a target load, under every policy.
#[test]
fn generated_workload_equals_its_written_file() {
    let dir = std::env::temp_dir().join(format!("parsched-gen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (load, policy) in [
        (Some(0.9), "easy"),
        (None, "fcfs"),
        (Some(1.3), "conservative"),
    ] {
        let mut c = BatchConfig::default();
        for (k, v) in [
            ("workload", Value::Str("lublin".into())),
            ("workload_jobs", Value::Int(3000)),
            ("workload_seed", Value::Int(7)),
            ("procs", Value::Int(256)),
            ("policy", Value::Str(policy.into())),
        ] {
            c.set(k, &v).unwrap();
        }
        c.workload_load = load;
        let mem = run_generated(&c).unwrap();
        assert_eq!(mem.summary.jobs, 3000);
        let path = dir.join(format!("w-{policy}.swf"));
        let lc = lublin_config(&c);
        let f = std::fs::File::create(&path).unwrap();
        let factor = match load {
            Some(l) => crate::workloads::lublin::write_swf_at_load(&lc, l, f).unwrap(),
            None => {
                crate::workloads::lublin::write_swf(&lc, f).unwrap();
                1.0
            }
        };
        let mut from_file = c.clone();
        from_file.workload = WorkloadKind::Trace;
        let file = run_trace(&path, &from_file).unwrap();
        assert!(mem.same_schedule(&file), "{policy} {load:?}");
        if let Some(l) = load {
            // The scaled workload offers (close to) the asked load.
            let (jobs, procs, _) =
                prepare(swf::load_file(&path, &c.rules).unwrap(), &from_file).unwrap();
            let offered = offered_load(&jobs, procs);
            assert!((offered / l - 1.0).abs() < 0.01, "{offered} vs {l}");
            assert!(factor != 1.0);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn generated_workload_keys_are_checked() {
    let mut c = BatchConfig::default();
    assert!(c.set("workload", &Value::Str("lubin".into())).is_err());
    c.set("workload_jobs", &Value::Int(0)).unwrap();
    assert_eq!(c.validate().unwrap_err().field, "workload_jobs");
    c.workload_jobs = 10;
    c.set("workload_load", &Value::Float(-1.0)).unwrap();
    assert_eq!(c.validate().unwrap_err().field, "workload_load");
    c.set("workload_load", &Value::Str("none".into())).unwrap();
    assert_eq!(c.workload_load, None);
    c.validate().unwrap();
}

#[test]
fn gang_runs_estimated_above_max_events_are_refused() {
    // One job of 2^39 s: under 60 s quanta about 1.8·10^10 slot ends.
    let jobs = vec![BatchJob::new(1, 0, 1 << 39, 4, 1 << 39)];
    let mut cfg = BatchConfig {
        policy: BatchPolicyKind::Gang,
        ..BatchConfig::default()
    };
    let e = simulate(jobs.clone(), 8, &cfg).unwrap_err().to_string();
    assert!(e.starts_with("max_events: the run would take about"), "{e}");
    // Space sharing: a few events per job, whatever the run times.
    cfg.policy = BatchPolicyKind::Easy;
    simulate(jobs.clone(), 8, &cfg).unwrap();
    // The estimate bounds a real gang run's events.
    let mut jobs: Vec<BatchJob> = (0..200)
        .map(|i| {
            BatchJob::new(
                i,
                i as u64 * 7,
                50 + (i as u64 * 37) % 900,
                1 + (i as u32 % 8),
                2000,
            )
        })
        .collect();
    jobs.sort_by_key(|j| j.submit);
    cfg.policy = BatchPolicyKind::Gang;
    cfg.quantum = 5;
    let r = simulate(jobs.clone(), 8, &cfg).unwrap();
    assert!(r.summary.slot_switches > 0);
    assert!(((r.summary.slot_switches + 3 * 200) as f64) <= cfg.estimate_events(&jobs));
}

fn starts_ordered(jobs: &[BatchJob], procs: u32, policy: &str, order: &str) -> Vec<u64> {
    let mut c = BatchConfig::default();
    c.set("policy", &Value::Str(policy.into())).unwrap();
    c.set("order", &Value::Str(order.into())).unwrap();
    let r = simulate(jobs.to_vec(), procs, &c).unwrap();
    r.outcomes.iter().map(|o| o.start).collect()
}

/// Exact schedules worked out by hand on 4 processors: A (0, 10 s, 4
/// procs) holds the machine; B (t=1, 5 s, 4), C (t=2, 2 s, 4) and D (t=3,
/// 1 s, 2) wait for it (requested = run).
///
/// * fcfs / ljf (5 > 2 > 1): B at 10; C is the head (shadow 15), D cannot
///   backfill (nothing free): C at 15, D at 17.
/// * sjf (D, C, B): D at 10 (2 free left); C is the head, shadow 11; B does
///   not fit in 2: C at 11, B at 13.
/// * smallest (D 2 procs, then B, C by arrival): D at 10; B the head at 11;
///   C at 16.
/// * saf (areas B 20, C 8, D 2: D, C, B): as sjf.
#[test]
fn easy_starts_in_the_priority_order_hand_worked() {
    let jobs = [
        j(1, 0, 10, 4, 10),
        j(2, 1, 5, 4, 5),
        j(3, 2, 2, 4, 2),
        j(4, 3, 1, 2, 1),
    ];
    let cases = [
        ("fcfs", vec![0, 10, 15, 17]),
        ("ljf", vec![0, 10, 15, 17]),
        ("sjf", vec![0, 13, 11, 10]),
        ("smallest", vec![0, 11, 16, 10]),
        ("saf", vec![0, 13, 11, 10]),
    ];
    for (order, want) in cases {
        for policy in ["easy", "conservative"] {
            assert_eq!(
                starts_ordered(&jobs, 4, policy, order),
                want,
                "{policy} {order}"
            );
        }
    }
    // the arrival order is the default
    assert_eq!(starts(&jobs, 4, "easy"), vec![0, 10, 15, 17]);
}

/// Backfilling and reservations follow the order too: under EASY-SJF a
/// short job is the head, not the first to arrive. 4 processors: A (0, 10 s, 3 procs); B (t=1,
/// 100 s, 4) waits; C (t=2, 20 s, 1) and D (t=3, 5 s, 1) arrive.
/// * fcfs: B is the head, shadow 10, extra 0; C would end at 22 > 10, D at
///   8 <= 10: D backfills at 3; B at 10; C after B, at 110.
/// * sjf: at 2 the order is C, B and C fits in the free processor: C at 2
///   (B's shadow moves to 22, when C ends); at 3 the order is D, B and
///   nothing is free: D is the head (shadow 10); at 10 D starts, and B, the
///   head again, waits for C: B at 22.
#[test]
fn easy_backfills_in_the_priority_order_hand_worked() {
    let jobs = [
        j(1, 0, 10, 3, 10),
        j(2, 1, 100, 4, 100),
        j(3, 2, 20, 1, 20),
        j(4, 3, 5, 1, 5),
    ];
    assert_eq!(
        starts_ordered(&jobs, 4, "easy", "fcfs"),
        vec![0, 10, 110, 3]
    );
    assert_eq!(starts_ordered(&jobs, 4, "easy", "sjf"), vec![0, 22, 2, 10]);
}

#[test]
fn an_order_with_gang_is_refused_by_name() {
    let mut c = BatchConfig::default();
    c.set("policy", &Value::Str("gang".into())).unwrap();
    c.set("order", &Value::Str("sjf".into())).unwrap();
    let e = c.validate().unwrap_err();
    assert_eq!(e.field, "order");
    let e = BatchConfig::default()
        .set("order", &Value::Str("random".into()))
        .unwrap_err();
    assert_eq!(e.field, "order");
    assert!(e.to_string().contains("wfp3"), "{e}");
}

/// EASY with SJF backfilling (the head by arrival, candidates shortest
/// first), by hand on 4 processors: A (0, 10 s, 3 procs); B (t=1, 20 s, 4)
/// is the head, shadow 10, extra 0; C (t=2, 8 s, 1) and D (t=2, 5 s, 1)
/// both end by 10 but only one fits in the free processor.
/// * backfill in queue order: C at 2; B at 10; D after B, at 30.
/// * backfill SJF: D at 2 (ends 7); at 7 C would end at 15 > 10: C after B.
#[test]
fn easy_backfills_in_its_own_order_hand_worked() {
    let jobs = [
        j(1, 0, 10, 3, 10),
        j(2, 1, 20, 4, 20),
        j(3, 2, 8, 1, 8),
        j(4, 2, 5, 1, 5),
    ];
    let run = |bf: &str| {
        let mut c = BatchConfig::default();
        c.set("backfill_order", &Value::Str(bf.into())).unwrap();
        let r = simulate(jobs.to_vec(), 4, &c).unwrap();
        r.outcomes.iter().map(|o| o.start).collect::<Vec<u64>>()
    };
    assert_eq!(run("priority"), vec![0, 10, 2, 30]);
    assert_eq!(run("fcfs"), vec![0, 10, 2, 30]);
    assert_eq!(run("sjf"), vec![0, 10, 30, 2]);
    // only EASY has backfill candidates of its own
    let mut c = BatchConfig::default();
    c.set("policy", &Value::Str("conservative".into())).unwrap();
    c.set("backfill_order", &Value::Str("sjf".into())).unwrap();
    assert_eq!(c.validate().unwrap_err().field, "backfill_order");
}

/// Slurm's multifactor by hand, 2 processors. J1 (user 1, group 1; t=0,
/// 100 s, 2 procs) runs 0–100; J2 (user 1, group 1; t=10, 10 s, 2) and J3
/// (user 2, group 2; t=20, 10 s, 2) wait for it.
/// * At 100, with the default weights (fair share 10000, age 1000 over
///   PriorityMaxAge 7 days, size 1000 not favouring small): user 1 has used
///   2·100 processor-seconds, user 2 nothing, so J3's fair-share factor is
///   2^0 = 1 and J2's is below 1 (account 1 holds all the usage: effective
///   usage 1, shares 1/2: 2^(−2) = 0.25); ages differ by 10 s (0.017
///   points), sizes are equal: J3 at 100, J2 at 110.
/// * Without the fair-share weight, age decides (J2 waited longer): J2 at
///   100, J3 at 110 — FCFS's order.
/// * The fair-share factor is relative: the half-life changes how much
///   usage user 1 has, not that it has all of it (J3 still first with a
///   1 s half-life).
#[test]
fn multifactor_by_hand() {
    let mut jobs = vec![
        j(1, 0, 100, 2, 100),
        j(2, 10, 10, 2, 10),
        j(3, 20, 10, 2, 10),
    ];
    for (k, jb) in jobs.iter_mut().enumerate() {
        let u = if k < 2 { 1 } else { 2 };
        jb.user = u;
        jb.group = u;
    }
    let run = |jobs: &[BatchJob], set: &[(&str, Value)]| {
        let mut c = BatchConfig::default();
        c.set("order", &Value::Str("multifactor".into())).unwrap();
        for (k, v) in set {
            c.set(k, v).unwrap();
        }
        let r = simulate(jobs.to_vec(), 2, &c).unwrap();
        r.outcomes.iter().map(|o| o.start).collect::<Vec<u64>>()
    };
    assert_eq!(run(&jobs, &[]), vec![0, 110, 100]);
    assert_eq!(
        run(&jobs, &[("mf_weight_fairshare", Value::Float(0.0))]),
        vec![0, 100, 110]
    );
    assert_eq!(
        run(&jobs, &[("mf_half_life_s", Value::Int(1))]),
        vec![0, 110, 100]
    );
    // the QOS tier of J3's queue (QOS weight 0 by default) puts it first
    // even without fair share
    jobs[2].queue = 3;
    assert_eq!(
        run(
            &jobs,
            &[
                ("mf_weight_fairshare", Value::Float(0.0)),
                ("mf_qos_tiers", Value::Str("3:10".into())),
                ("mf_weight_qos", Value::Float(1000.0)),
            ]
        ),
        vec![0, 110, 100]
    );
    // bad tiers name the key
    let mut c = BatchConfig::default();
    let e = c
        .set("mf_qos_tiers", &Value::Str("3=10".into()))
        .unwrap_err();
    assert_eq!(e.field, "mf_qos_tiers");
}

/// Reservation depth by hand, 4 processors: J1 (0, 10 s, 3 procs) runs;
/// J2 (2 procs, 10 s), J3 (4, 10 s) and J4 (1, 25 s) wait (requested =
/// run).
/// * depth 1 (EASY): J2's shadow time is 10 with 2 extra processors; J4
///   (ends at 25) uses one of them: it starts at 0. J2 at 10; J3 then waits
///   for J2 and J4: 25.
/// * depth 2: J2 is reserved at 10 and J3 at 20 (when J2 ends); J4 would
///   hold a processor J3 needs at 20: it waits, for J3: J2 10, J3 20, J4 30.
/// * conservative: as depth 2 (two reservations are all it makes here).
#[test]
fn reservation_depth_by_hand() {
    let jobs = [
        j(1, 0, 10, 3, 10),
        j(2, 0, 10, 2, 10),
        j(3, 0, 10, 4, 10),
        j(4, 0, 25, 1, 25),
    ];
    let run = |policy: &str, depth: Option<i64>| {
        let mut c = BatchConfig::default();
        c.set("policy", &Value::Str(policy.into())).unwrap();
        if let Some(k) = depth {
            c.set("reservation_depth", &Value::Int(k)).unwrap();
        }
        let r = simulate(jobs.to_vec(), 4, &c).unwrap();
        (
            r.policy,
            r.outcomes.iter().map(|o| o.start).collect::<Vec<u64>>(),
        )
    };
    assert_eq!(run("easy", None), ("easy", vec![0, 10, 25, 0]));
    assert_eq!(run("easy", Some(1)), ("depth", vec![0, 10, 25, 0]));
    assert_eq!(run("easy", Some(2)), ("depth", vec![0, 10, 20, 30]));
    assert_eq!(
        run("conservative", None),
        ("conservative", vec![0, 10, 20, 30])
    );
    // no reservations under fcfs: the key is refused, naming itself
    let mut c = BatchConfig::default();
    c.set("policy", &Value::Str("fcfs".into())).unwrap();
    c.set("reservation_depth", &Value::Int(2)).unwrap();
    assert_eq!(c.validate().unwrap_err().field, "reservation_depth");
}

/// Gang admission's slot chosen outside the core, by hand on 4 processors,
/// mpl 3, quantum 10: A and B (3 wide, 100 s) at 0 take slots 0 and 1; C
/// (1 wide, 5 s) at 1. First fit puts C in slot 0, which is running: C runs
/// 1..6. "The last slot with room" puts it in slot 1, which runs 10..20: C
/// runs 10..15. A and B alternate either way (A ends 190, B 200).
#[test]
fn gang_slot_rule_from_outside_hand_worked() {
    use parsched_core::policy::gang_place::{FirstFit, SlotChooser, SlotView};
    struct LastFit;
    impl SlotChooser for LastFit {
        fn choose(&mut self, v: &SlotView) -> Result<Option<usize>, String> {
            if let Some(s) = v.slot_free.iter().rposition(|&f| f >= v.procs) {
                return Ok(Some(s));
            }
            Ok(((v.slots() as u64) < v.mpl as u64).then_some(v.slots()))
        }
    }
    let jobs = [j(1, 0, 100, 3, 100), j(2, 0, 100, 3, 100), j(3, 1, 5, 1, 5)];
    let c = BatchConfig {
        policy: BatchPolicyKind::Gang,
        mpl: 3,
        quantum: 10,
        ..BatchConfig::default()
    };
    let se = |r: &BatchResult| -> Vec<(u64, u64, u32)> {
        r.outcomes
            .iter()
            .map(|o| (o.start, o.end, o.slot))
            .collect()
    };
    let built_in = simulate(jobs.to_vec(), 4, &c).unwrap();
    let ff = simulate_ordered(
        jobs.to_vec(),
        4,
        &c,
        Some(BatchHook::GangPlace(&mut FirstFit)),
    );
    assert_eq!(se(&ff.unwrap()), se(&built_in));
    assert_eq!(se(&built_in), vec![(0, 190, 0), (10, 200, 1), (1, 6, 0)]);
    let lf = simulate_ordered(
        jobs.to_vec(),
        4,
        &c,
        Some(BatchHook::GangPlace(&mut LastFit)),
    );
    assert_eq!(
        se(&lf.unwrap()),
        vec![(0, 190, 0), (10, 200, 1), (10, 15, 1)]
    );
    // Only gang has slots.
    let easy = BatchConfig::default();
    let e = simulate_ordered(
        jobs.to_vec(),
        4,
        &easy,
        Some(BatchHook::GangPlace(&mut FirstFit)),
    )
    .unwrap_err();
    assert!(
        matches!(&e, BatchError::Config(c) if c.field == "gang_place"),
        "{e}"
    );
}

/// EASY backfilling sees the requested times: the same generated jobs
/// (arrivals, sizes and run times) with Tsafrir05 user estimates instead of
/// exact ones give another schedule, and none of them overruns.
#[test]
fn lublin_estimates_change_an_easy_schedule() {
    let run = |requested: &str| {
        let mut c = BatchConfig::default();
        for (k, v) in [
            ("policy", Value::Str("easy".into())),
            ("workload", Value::Str("lublin".into())),
            ("procs", Value::Int(64)),
            ("workload_jobs", Value::Int(3000)),
            ("workload_load", Value::Float(0.9)),
            ("workload_requested", Value::Str(requested.into())),
        ] {
            c.set(k, &v).unwrap();
        }
        run_generated(&c).unwrap()
    };
    let exact = run("exact");
    let est = run("tsafrir05");
    let none = run("none");
    // same jobs; "none" is exact through the loader's default rule
    let key = |r: &BatchResult| {
        r.jobs
            .iter()
            .map(|j| (j.submit, j.runtime, j.procs))
            .collect::<Vec<_>>()
    };
    assert_eq!(key(&exact), key(&est));
    assert_eq!(none.summary.avg_wait, exact.summary.avg_wait);
    assert!(exact.jobs.iter().all(|j| j.requested == j.runtime));
    assert!(est.jobs.iter().all(|j| j.requested >= j.runtime));
    assert!(est.jobs.iter().filter(|j| j.requested > j.runtime).count() > 2500);
    assert_ne!(exact.summary.avg_wait, est.summary.avg_wait);
    eprintln!(
        "avg wait exact {} tsafrir05 {}",
        exact.summary.avg_wait, est.summary.avg_wait
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// The gang estimate (`BatchConfig::estimate_events`) bounds a run's
    /// engine events, for any jobs, machine, mpl, quantum and slot rule.
    /// It counts every job's run time as time-sliced: a job alone in the
    /// matrix has no slot ends, so it can be far above a run whose jobs do
    /// not overlap; when they all do (wide jobs, submitted together, of
    /// equal length, mpl >= 2) it is within 64 + 4x the events.
    #[test]
    fn the_gang_estimate_bounds_events(
        specs in proptest::collection::vec(
            (0u64..2000, 0u64..5000, 1u32..64, 0u64..3), 1..120),
        procs in 1u32..64, mpl in 1u32..6, quantum in 1u64..300,
        backfill in proptest::bool::ANY, best in proptest::bool::ANY,
    ) {
        let mut t = 0;
        let jobs: Vec<BatchJob> = specs.iter().enumerate().map(|(i, &(gap, run, w, over))| {
            t += gap;
            // Some jobs ask for less than they run (killed at their request).
            let req = if over == 0 { run / 2 + 1 } else { run + 100 };
            j(i as i64 + 1, t, run, 1 + (w - 1) % procs, req)
        }).collect();
        let mut cfg = BatchConfig::default();
        cfg.set("policy", &Value::Str("gang".into())).unwrap();
        cfg.set("kill_on_overrun", &Value::Bool(true)).unwrap();
        cfg.set("gang_backfill", &Value::Bool(backfill)).unwrap();
        cfg.set("slot_allocation",
            &Value::Str(if best { "best_fit" } else { "first_fit" }.into())).unwrap();
        cfg.mpl = mpl;
        cfg.quantum = quantum;
        let est = cfg.estimate_events(&jobs);
        let r = simulate(jobs.clone(), procs, &cfg).unwrap();
        let ev = r.summary.events as f64;
        proptest::prop_assert!(ev > 0.0 && ev <= est, "{ev} events > estimate {est}");
        // All overlapping: as many wide jobs as slots, submitted together.
        let run = 1000 + specs[0].1;
        let wide: Vec<BatchJob> = (0..mpl.max(2))
            .map(|i| j(i as i64 + 1, 0, run, procs / 2 + 1, run))
            .collect();
        cfg.mpl = mpl.max(2);
        cfg.quantum = quantum.min(run / 10);
        let est = cfg.estimate_events(&wide);
        let ev = simulate(wide, procs, &cfg).unwrap().summary.events as f64;
        proptest::prop_assert!(ev <= est && est <= 64.0 + 4.0 * ev, "estimate {est}, {ev} events");
    }
}
