//! The FCS policy with the mock freezer: class changes applied, a released
//! job taken back into the matrix, DC slots giving a released job its share,
//! F jobs filling each other's slots while CS jobs keep theirs. The mock
//! freezes nothing, so the jobs (bench/bsp, built with `cc`) really run side
//! by side; what is tested is what the controller decided and asked for.
//! Real-cgroup versions are the `real_fcs_*` tests of `integration.rs`.

use parsched_core::policy::classify::CoschedClass;
use parsched_core::policy::fcs::{Fcs, Slot, Step};
use parsched_core::policy::gang::GangId;
use parsched_core::topology::Topology;
use parsched_runtime::cgroup::{Mock, MockCall};
use parsched_runtime::{Controller, JobSpec, Policy, RunSpec};
use std::collections::BTreeSet;
use std::time::Duration;

use crate::common::*;

fn bsp_job(args: &[&str]) -> JobSpec {
    let b = bsp();
    let mut argv = vec![b.display().to_string()];
    argv.extend(args.iter().map(|s| s.to_string()));
    argv.extend(["--loops-per-us".to_string(), "300".to_string()]);
    let mut j = JobSpec::new(argv).width(2);
    j.stdout = Some(std::env::temp_dir().join(format!("parsched-fcs-{}.out", std::process::id())));
    j
}

fn fcs_spec(jobs: Vec<JobSpec>) -> RunSpec {
    RunSpec {
        policy: Policy::named("fcs").unwrap(),
        slot: Duration::from_millis(20),
        topology: Some(Topology::flat(2).unwrap()),
        cpus: Some(vec![0, 1]),
        realtime: false,
        supervisor: false,
        recover: false,
        spread: false,
        jobs,
        ..Default::default()
    }
}

#[test]
fn mock_fcs_releases_a_blocking_job_and_takes_it_back_when_it_spins() {
    let _g = serial();
    // Coarse-grained blocking (50 ms per barrier) for 1.2 s, then a 1 ms spin
    // barrier for 1.2 s (nominal: bsp runs at 300 loops per us; on a faster
    // CPU both phases are shorter, e.g. 0.8 s and 0.8 s at 450, and the first
    // must outlast discovery plus two periods with room to spare, or the
    // first class already mixes in the spinning phase; the grain must stay
    // well above the 10 ms coarse threshold: 20 ms nominal was 10 ms on a
    // CPU running at 600 loops per us).
    let job = bsp_job(&[
        "--threads",
        "2",
        "--iters",
        "24",
        "--grain-us",
        "50000",
        "--wait",
        "block",
        "--then",
        "1200,1000,spin",
    ]);
    let mut spec = fcs_spec(vec![job, JobSpec::new(["sleep", "0.4"]).width(2)]);
    // One barrier per 20 ms of two threads is 25 switches per thread-second:
    // a lower threshold keeps the first phase clearly "blocking".
    spec.fcs.blocking_rate = 5.0;
    spec.fcs.window_s = 0.3;
    let mut c = Controller::with_freezer(spec, Box::new(Mock::new())).unwrap();
    c.record_fcs();
    let r = c.run().unwrap();
    assert!(r.iter().all(|j| j.success), "{r:?}");
    check_core_decisions(&c, &r);
    let classes: Vec<&str> = r[0].classes.iter().map(|(_, c)| c.as_str()).collect();
    println!("classes over time: {:?}", r[0].classes);
    assert_eq!(classes.first(), Some(&"DC"), "{:?}", r[0].classes);
    // Taken back: CS, or F when the tests running beside this one preempt a
    // spinning thread (the mock coschedules nothing, and the job's own
    // statistics then show the waits)
    assert!(
        matches!(classes.last(), Some(&"CS") | Some(&"F")),
        "{:?}",
        r[0].classes
    );
    assert_eq!(r[0].coscheduled, Some(true));
    assert!(r[0].classes.windows(2).all(|w| w[0].0 <= w[1].0));
    // Out of the matrix while live, then back in it.
    let g = GangId(0);
    let trace = c.trace();
    let out = trace
        .iter()
        .position(|t| t.live.contains(&g) && t.matrix.allocation(g).is_none());
    let out = out.expect("the blocking job left the matrix");
    assert!(
        trace[out..]
            .iter()
            .any(|t| t.matrix.allocation(g).is_some()),
        "the job that started to spin was taken back"
    );
    // What the classifier saw: CPU and blocked time are measured.
    let o = r[0].observed.unwrap();
    assert!(o.cpu_s > 0.0 && o.voluntary > 0, "{o:?}");
}

#[test]
fn mock_fcs_dc_job_gets_its_share_in_dc_slots() {
    let _g = serial();
    // Two CS spinners keep both CPUs busy (the mock freezes nothing); a DC
    // job at SCHED_IDLE starves, so it is owed slots of its own.
    let spin = bsp_job(&[
        "--threads",
        "2",
        "--iters",
        "400",
        "--grain-us",
        "1000",
        "--wait",
        "spin",
    ]);
    let mut cs = spin.clone();
    cs.fcs_class = Some(CoschedClass::RequiresCoscheduling);
    let mut dc = bsp_job(&[
        "--threads",
        "1",
        "--iters",
        "100",
        "--grain-us",
        "1000",
        "--wait",
        "spin",
    ]);
    dc.width = Some(1);
    dc.fcs_class = Some(CoschedClass::DoesNotCare);
    let mut spec = fcs_spec(vec![dc, cs.clone(), cs]);
    spec.fcs.dc_min_share = 0.25;
    let mock = Mock::new();
    let log = mock.log();
    let mut c = Controller::with_freezer(spec, Box::new(mock)).unwrap();
    c.record_fcs();
    let r = c.run().unwrap();
    assert!(r.iter().all(|j| j.success), "{r:?}");
    check_core_decisions(&c, &r);
    assert_eq!(r[0].classes, vec![(0.0, "DC".to_string())]);
    let st = c.stats().clone();
    let trace = c.trace();
    println!(
        "dc slots {} ({:.3} s), dc wall {:.3}",
        st.reported::<u64>("dc_slots").unwrap(),
        st.reported::<f64>("dc_slot_s").unwrap(),
        r[0].wall_s
    );
    assert!(st.reported::<u64>("dc_slots").unwrap() > 0);
    // Never two DC slots in a row, and a DC slot thaws no gang.
    let dc_rec: Vec<usize> = (0..trace.len()).filter(|&k| trace[k].dc_slot).collect();
    assert!(dc_rec.windows(2).all(|w| w[1] > w[0] + 1));
    assert!(dc_rec.iter().all(|&k| trace[k].to.is_none()));
    // While the gangs ran, the DC job had at least its share: either of CPU
    // time (it spins: it always wants its processor) or, where it could not
    // take it, as DC slots of the time both were live.
    let gangs_end = r[1].wall_s.max(r[2].wall_s);
    let both = r[0].wall_s.min(gangs_end);
    let cpu_share = r[0].cpu_s() / r[0].wall_s;
    println!(
        "DC CPU share {cpu_share:.3}, DC slots {:.3} s of {both:.3} s",
        st.reported::<f64>("dc_slot_s").unwrap()
    );
    assert!(
        cpu_share >= 0.25 * 0.8
            || st.reported::<f64>("dc_slot_s").unwrap() >= 0.25 * both * 0.8 - 0.05,
        "DC CPU share {cpu_share:.3}, DC slots {:.3} s of {both:.3} s",
        st.reported::<f64>("dc_slot_s").unwrap(),
    );
    // ... and not much more: DC slots are bounded by the same share of the
    // wall time since its release (plus a slot).
    assert!(
        st.reported::<f64>("dc_slot_s").unwrap() <= 0.25 * r[0].wall_s + 0.05,
        "DC slots {:.3} s of {:.3} s",
        st.reported::<f64>("dc_slot_s").unwrap(),
        r[0].wall_s
    );
    // The DC job was never frozen.
    assert!(!log
        .lock()
        .unwrap()
        .iter()
        .any(|c| *c == MockCall::Freeze("job0".into())));
}

#[test]
fn mock_fcs_f_jobs_fill_each_others_slots_and_cs_slots_are_dedicated() {
    let _g = serial();
    let base = bsp_job(&[
        "--threads",
        "2",
        "--iters",
        "400",
        "--grain-us",
        "1000",
        "--wait",
        "spinblock",
    ]);
    let with = |c| {
        let mut j = base.clone();
        j.fcs_class = Some(c);
        j
    };
    let spec = fcs_spec(vec![
        with(CoschedClass::PrefersCoscheduling),
        with(CoschedClass::PrefersCoscheduling),
        with(CoschedClass::RequiresCoscheduling),
    ]);
    let mock = Mock::new();
    let log = mock.log();
    let mut c = Controller::with_freezer(spec, Box::new(mock)).unwrap();
    let r = c.run().unwrap();
    assert!(r.iter().all(|j| j.success), "{r:?}");
    // Replay the freezer calls.
    let mut thawed: BTreeSet<String> = BTreeSet::new();
    let mut together = 0;
    for call in log.lock().unwrap().iter() {
        match call {
            MockCall::Create(n) | MockCall::Thaw(n) => {
                thawed.insert(n.clone());
            }
            MockCall::Freeze(n) | MockCall::Remove(n) => {
                thawed.remove(n);
            }
            _ => {}
        }
        if matches!(call, MockCall::Thaw(_)) {
            if thawed.contains("job2") {
                assert_eq!(
                    thawed.len(),
                    1,
                    "the CS job's slot is dedicated: {thawed:?}"
                );
            }
            if thawed.contains("job0") && thawed.contains("job1") {
                together += 1;
            }
        }
    }
    assert!(together > 0, "F jobs never filled each other's slots");
    for j in &r {
        assert!(j.observed.is_some());
    }
}

/// What the controller did is what the core policy decided: its recorded
/// inputs replay through a new `parsched_core::policy::fcs::Fcs` to the same
/// decisions (the code the simulator applies: `fcs_properties::
/// the_machine_applies_the_core_policy` in the simulator's tests), each
/// switch's DC-slot decision is the one applied, and the classes reported
/// are the policy's changes.
fn check_core_decisions(c: &Controller, r: &[parsched_runtime::JobReport]) {
    let log = c.fcs_log();
    let replayed = Fcs::replay(r.len(), c.fcs_config(), log).unwrap();
    assert_eq!(replayed.as_slice(), log);
    let slots: Vec<bool> = log
        .iter()
        .filter_map(|s| match s {
            Step::Advance { slot, .. } => Some(*slot == Slot::Dc),
            _ => None,
        })
        .collect();
    let applied: Vec<bool> = c.trace()[1..].iter().map(|t| t.dc_slot).collect();
    assert_eq!(slots, applied, "DC slots decided vs applied");
    for (i, job) in r.iter().enumerate() {
        let fixed = log
            .iter()
            .filter_map(|s| match s {
                Step::FixClass { job, class } if *job == i => Some(*class),
                _ => None,
            })
            .chain(log.iter().filter_map(|s| match s {
                Step::Observe {
                    job,
                    change: Some(c),
                    ..
                } if *job == i => Some(*c),
                _ => None,
            }))
            .map(|c| c.short_name().to_string());
        let reported: Vec<String> = job.classes.iter().map(|(_, c)| c.clone()).collect();
        assert_eq!(fixed.collect::<Vec<_>>(), reported, "job {i}");
    }
}

#[test]
fn mock_fcs_decisions_are_the_core_policys() {
    let _g = serial();
    // Job 0: coarse-grained blocking, then a 1 ms spin barrier (released,
    // then taken back); job 1: fixed CS, spinning (keeps the CPUs busy, so
    // the released job 0 starves and is owed DC slots). Job 0's first class
    // comes about 0.8 s into the run (it is observed in its own slots only):
    // its blocking phase (36 × 50 ms nominal, 1.2 s of CPU at 450 loops per
    // us) must outlast that, and its grain stay well above the 10 ms coarse
    // threshold on a fast CPU.
    let job = bsp_job(&[
        "--threads",
        "2",
        "--iters",
        "36",
        "--grain-us",
        "50000",
        "--wait",
        "block",
        "--then",
        "1000,1000,spin",
    ]);
    let mut cs = bsp_job(&[
        "--threads",
        "2",
        "--iters",
        "1500",
        "--grain-us",
        "1000",
        "--wait",
        "spin",
    ]);
    cs.fcs_class = Some(CoschedClass::RequiresCoscheduling);
    let mut spec = fcs_spec(vec![job, cs]);
    spec.fcs.blocking_rate = 5.0;
    spec.fcs.window_s = 0.3;
    spec.fcs.dc_min_share = 0.25;
    let mut c = Controller::with_freezer(spec, Box::new(Mock::new())).unwrap();
    c.record_fcs();
    let r = c.run().unwrap();
    assert!(r.iter().all(|j| j.success), "{r:?}");
    println!(
        "classes {:?}, dc slots {}, log {} steps",
        r[0].classes,
        c.stats().reported::<u64>("dc_slots").unwrap(),
        c.fcs_log().len()
    );
    let released = c.fcs_log().iter().any(|s| {
        matches!(
            s,
            Step::Observe {
                job: 0,
                change: Some(CoschedClass::DoesNotCare),
                ..
            }
        )
    });
    assert!(released, "job 0 was never released: {:?}", r[0].classes);
    check_core_decisions(&c, &r);
}

/// With `fcs_discovery_fill`, jobs in discovery fill each other's slots (at
/// SCHED_IDLE); once both are CS (they spin), their slots are dedicated
/// again. Without it they never run together.
#[test]
fn mock_fcs_discovery_fill_runs_discovering_jobs_together() {
    let _g = serial();
    let spin = bsp_job(&[
        "--threads",
        "2",
        "--iters",
        "600",
        "--grain-us",
        "1000",
        "--wait",
        "spin",
    ]);
    for fill in [false, true] {
        let mut spec = fcs_spec(vec![spin.clone(), spin.clone()]);
        spec.fcs.discovery_fill = fill;
        // (the /proc rule: the mock freezes nothing, so both spinners run at
        // once and their own statistics show the long waits of spinning
        // without coscheduling (F), and F jobs fill each other's slots by
        // design; what is tested here is discovery)
        spec.fcs.sync_stats = false;
        let mock = Mock::new();
        let log = mock.log();
        let mut c = Controller::with_freezer(spec, Box::new(mock)).unwrap();
        c.record_fcs();
        let r = c.run().unwrap();
        assert!(r.iter().all(|j| j.success), "{r:?}");
        check_core_decisions(&c, &r);
        let mut thawed: BTreeSet<String> = BTreeSet::new();
        let mut together = 0;
        for call in log.lock().unwrap().iter() {
            match call {
                MockCall::Create(n) | MockCall::Thaw(n) => {
                    thawed.insert(n.clone());
                }
                MockCall::Freeze(n) | MockCall::Remove(n) => {
                    thawed.remove(n);
                }
                _ => {}
            }
            if matches!(call, MockCall::Thaw(_)) && thawed.len() == 2 {
                together += 1;
            }
        }
        println!(
            "discovery fill {fill}: thawed together {together} times, {:?}",
            r[0].classes
        );
        assert_eq!(
            together > 0,
            fill,
            "discovery fill {fill}: together {together}"
        );
    }
}

/// Each job is told its class through the file `PARSCHED_FCS_CLASS_FILE`
/// names: a fixed class at once, a classified job its latest class (the
/// report's last); the files are gone after the run.
#[test]
fn mock_fcs_publishes_each_jobs_class_to_it() {
    let _g = serial();
    // 1500 iterations of 1 ms nominal (about 1 s here): 500 ran in 0.3 s on
    // a fast CPU, at the edge of the first classification, and one run in a
    // fresh-clone CI ended before any class.
    let mut spinner = bsp_job(&[
        "--threads",
        "2",
        "--iters",
        "1500",
        "--grain-us",
        "1000",
        "--wait",
        "spin",
    ]);
    let dir = tempfile::tempdir().unwrap();
    // The spinner prints its class file after it ran (bsp's JSON first).
    let bsp_argv = spinner.argv.join(" ");
    spinner.argv = vec![
        "sh".into(),
        "-c".into(),
        format!("{bsp_argv} >/dev/null && cat \"$PARSCHED_FCS_CLASS_FILE\" && echo \"$PARSCHED_FCS_CLASS_FILE\""),
    ];
    spinner.stdout = Some(dir.path().join("spinner.out"));
    let mut fixed =
        JobSpec::new(["sh", "-c", "sleep 0.2; cat \"$PARSCHED_FCS_CLASS_FILE\""]).width(1);
    fixed.fcs_class = Some(CoschedClass::DoesNotCare);
    fixed.stdout = Some(dir.path().join("fixed.out"));
    let spec = fcs_spec(vec![spinner, fixed]);
    let mut c = Controller::with_freezer(spec, Box::new(Mock::new())).unwrap();
    let r = c.run().unwrap();
    assert!(r.iter().all(|j| j.success), "{r:?}");
    let fixed_out = std::fs::read_to_string(dir.path().join("fixed.out")).unwrap();
    assert_eq!(fixed_out, "DC \n");
    let out = std::fs::read_to_string(dir.path().join("spinner.out")).unwrap();
    let mut lines = out.lines();
    let class = lines.next().unwrap().trim();
    let last = r[0].classes.last().map(|(_, c)| c.as_str()).unwrap_or("-");
    assert_eq!(class, last, "{out:?} against {:?}", r[0].classes);
    assert_ne!(class, "-", "the spinner was classified: {:?}", r[0].classes);
    let path = lines.next().unwrap();
    assert!(!std::path::Path::new(path).exists(), "{path} left behind");
}

#[test]
fn mock_fcs_classifies_from_the_jobs_own_sync_statistics() {
    let _g = serial();
    // Imbalanced and spinning: worker 1 computes 3 ms per barrier, worker 0
    // 1 ms and then spins 2 ms. /proc sees two threads that never block (CS
    // by the blocking rate); bsp's own statistics show a wait of 1 ms per
    // synchronization against a 2 ms grain: frustrated (F).
    let args = [
        "--threads",
        "2",
        "--iters",
        "400",
        "--grain-us",
        "1000",
        "--wait",
        "spin",
        "--mult",
        "1,3",
    ];
    let classes = |sync_stats: bool| -> Vec<String> {
        let job = bsp_job(&args);
        let mut spec = fcs_spec(vec![job]);
        spec.fcs.sync_stats = sync_stats;
        spec.fcs.window_s = 0.3;
        let mut c = Controller::with_freezer(spec, Box::new(Mock::new())).unwrap();
        let r = c.run().unwrap();
        assert!(r.iter().all(|j| j.success), "{r:?}");
        let o = r[0].observed.unwrap();
        if sync_stats {
            // the job's own counts reached the classifier
            let n = o.sync_events.expect("sync statistics observed");
            assert!(n > 100, "{o:?}");
            assert!(o.spin_s > 0.1 && o.wait_s >= o.spin_s, "{o:?}");
        } else {
            assert_eq!(o.sync_events, None, "{o:?}");
        }
        r[0].classes.iter().map(|(_, c)| c.clone()).collect()
    };
    let with = classes(true);
    let without = classes(false);
    assert_eq!(with.last().map(String::as_str), Some("F"), "{with:?}");
    assert_eq!(
        without.last().map(String::as_str),
        Some("CS"),
        "{without:?}"
    );
}
