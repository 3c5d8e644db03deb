//! Integration tests of the runtime.
//!
//! The Mock and default-policy tests run anywhere. The `real_*` tests need
//! root, a cgroup freezer (or cpuset, or RT cpu cgroup; each says which in its
//! `#[ignore]` reason) and a C compiler for `bench/bsp.c`: they are ignored by
//! default, so `cargo test` reports them as ignored rather than passed, and
//! run with `cargo test -p parsched-runtime -- --ignored` (the Makefile's
//! `rust-test` does so as root with a writable cgroup hierarchy, see
//! `tests/privileged.sh`). Run that way where a precondition is missing they
//! fail, saying which. They are serialized (one at a time) because they
//! measure CPU time on a small machine, and each takes under 5 s. Shared
//! helpers are in `common/mod.rs`.

use parsched_core::policy::gang::{GangId, SlotId};
use parsched_core::topology::Topology;
use parsched_runtime::cgroup::{Mock, MockCall};
use parsched_runtime::procfs;
use parsched_runtime::safety::recover_stale;
use parsched_runtime::{BackendKind, Controller, FcsSpec, JobSpec, Policy, RunSpec};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[macro_use]
mod common;
mod fcs;
mod mpi;
mod regions;
use common::*;

fn flat2() -> (Topology, Vec<u32>) {
    (Topology::flat(2).unwrap(), vec![0, 1])
}

// ---------------------------------------------------------------- mock

#[test]
fn mock_slot_sequence_follows_next_slot_and_never_overlaps() {
    slot_sequence_case(true);
}

#[test]
fn mock_slot_sequence_without_freeze_confirmation() {
    slot_sequence_case(false);
}

fn slot_sequence_case(confirm_freeze: bool) {
    let (t, cpus) = flat2();
    // Widths 2,1,1,2 on 2 processors: slots {0}, {1,2}, {3}.
    let jobs = [(2u32, "0.35"), (1, "0.5"), (1, "0.2"), (2, "0.3")];
    let spec = RunSpec {
        policy: Policy::named("gang").unwrap(),
        slot: Duration::from_millis(40),
        topology: Some(t),
        cpus: Some(cpus),
        realtime: false,
        supervisor: false,
        recover: false,
        spread: false,
        confirm_freeze,
        jobs: jobs
            .iter()
            .map(|&(w, s)| JobSpec::new(["sleep", s]).width(w))
            .collect(),
        ..Default::default()
    };
    let mock = Mock::new();
    let log = mock.log();
    let mut c = Controller::with_freezer(spec, Box::new(mock)).unwrap();
    let reports = c.run().unwrap();
    assert!(reports.iter().all(|r| r.success), "{reports:?}");
    let trace = c.trace();
    assert!(trace.len() > 5, "too few switches: {}", trace.len());

    // Every decision is GangMatrix::next_slot's on the matrix of the moment.
    let mut slot_of: BTreeMap<GangId, SlotId> = BTreeMap::new();
    for r in trace {
        let want = r.matrix.next_slot(r.from, |g| r.live.contains(&g));
        assert_eq!(r.to, want, "switch at {:?}", r.at);
        for (g, a) in r.matrix.gangs() {
            let old = slot_of.insert(g, a.slot);
            assert!(old.is_none_or(|s| s == a.slot), "{g} moved slots");
        }
    }
    assert_eq!(slot_of[&GangId(0)], SlotId(0));
    assert_eq!(slot_of[&GangId(1)], SlotId(1));
    assert_eq!(slot_of[&GangId(2)], SlotId(1));
    assert_eq!(slot_of[&GangId(3)], SlotId(2));
    // The first rotation visits 0, 1, 2 in order.
    let firsts: Vec<Option<SlotId>> = trace.iter().take(3).map(|r| r.to).collect();
    assert_eq!(
        firsts,
        vec![Some(SlotId(0)), Some(SlotId(1)), Some(SlotId(2))]
    );

    // Replay the freezer calls: thawed groups always belong to one slot.
    let mut thawed: BTreeSet<String> = BTreeSet::new();
    let slot = |name: &str| slot_of[&GangId(name.trim_start_matches("job").parse().unwrap())];
    let mut thaws = 0;
    for call in log.lock().unwrap().iter() {
        match call {
            MockCall::Create(n) | MockCall::Thaw(n) => {
                thawed.insert(n.clone());
                if matches!(call, MockCall::Thaw(_)) {
                    thaws += 1;
                }
            }
            MockCall::Freeze(n) | MockCall::Remove(n) => {
                thawed.remove(n);
            }
            _ => {}
        }
        let slots: BTreeSet<SlotId> = thawed.iter().map(|n| slot(n)).collect();
        assert!(
            slots.len() <= 1,
            "two slots thawed together: {thawed:?} after {call:?}"
        );
    }
    assert!(thaws >= 3);
    // Suspension was accounted.
    assert!(reports[1].suspended_s > 0.0);
}

#[test]
fn mock_bounded_slots_admit_waiting_jobs_at_a_switch() {
    let (t, cpus) = flat2();
    let spec = RunSpec {
        slot: Duration::from_millis(30),
        topology: Some(t),
        cpus: Some(cpus),
        max_slots: Some(1),
        realtime: false,
        supervisor: false,
        recover: false,
        jobs: vec![
            JobSpec::new(["sleep", "0.15"]).width(2),
            JobSpec::new(["sleep", "0.05"]).width(2),
        ],
        ..Default::default()
    };
    let mut c = Controller::with_freezer(spec, Box::new(Mock::new())).unwrap();
    let t = Instant::now();
    let r = c.run().unwrap();
    assert!(r.iter().all(|r| r.success));
    // The second job could only start after the first ended.
    assert!(t.elapsed() >= Duration::from_millis(200), "{r:?}");
    let admitted = c.trace().iter().position(|s| s.live.contains(&GangId(1)));
    let ended = c.trace().iter().position(|s| !s.live.contains(&GangId(0)));
    assert!(admitted.is_some() && admitted >= ended, "{:?}", c.trace());
    assert!(c.trace().iter().all(|s| s.matrix.num_slots() <= 1));
}

#[test]
fn mock_auto_width_refits_gangs_to_their_threads() {
    let (t, cpus) = flat2();
    let spec = RunSpec {
        slot: Duration::from_millis(30),
        topology: Some(t),
        cpus: Some(cpus),
        realtime: false,
        supervisor: false,
        recover: false,
        // No width: each starts as a full-width gang (three slots).
        jobs: (0..3).map(|_| JobSpec::new(["sleep", "0.4"])).collect(),
        ..Default::default()
    };
    let mut c = Controller::with_freezer(spec, Box::new(Mock::new())).unwrap();
    let r = c.run().unwrap();
    assert!(r.iter().all(|j| j.success && j.width == 1), "{r:?}");
    let first = &c.trace()[0].matrix;
    assert_eq!(first.num_slots(), 3);
    // Once every job has left its slot once, the single-threaded gangs share
    // slots: two per slot on two processors.
    let packed = c
        .trace()
        .iter()
        .find(|s| s.matrix.gangs().all(|(_, a)| a.width() == 1))
        .expect("all refitted");
    assert_eq!(packed.matrix.occupied_slots().len(), 2);
    assert_eq!(
        packed.matrix.slot_of(GangId(0)),
        packed.matrix.slot_of(GangId(1))
    );
    for s in c.trace() {
        assert_eq!(s.to, s.matrix.next_slot(s.from, |g| s.live.contains(&g)));
    }
}

#[test]
fn missing_program_is_a_clear_error_not_a_panic() {
    let spec = RunSpec {
        realtime: false,
        supervisor: false,
        recover: false,
        jobs: vec![JobSpec::new(["/nonexistent/program"])],
        ..Default::default()
    };
    let mut c = Controller::with_freezer(spec, Box::new(Mock::new())).unwrap();
    let e = c.run().unwrap_err().to_string();
    assert!(e.contains("not found"), "{e}");
}

#[test]
fn default_policy_reports_exit_status_and_cpu_time() {
    let spec = RunSpec {
        policy: Policy::named("default").unwrap(),
        realtime: false,
        supervisor: false,
        recover: false,
        jobs: vec![
            JobSpec::new(["sh", "-c", "exit 3"]),
            JobSpec::new([
                "sh",
                "-c",
                "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done",
            ]),
        ],
        ..Default::default()
    };
    let r = parsched_runtime::run_jobs(spec).unwrap();
    assert_eq!(r[0].status.code, Some(3));
    assert!(!r[0].success);
    assert!(r[1].success);
    assert!(r[1].user_s + r[1].sys_s > 0.0);
    assert!(r[1].wall_s > 0.0);
}

// ---------------------------------------------------------------- real cgroups

/// Two single-threaded busy jobs of width 2 alternate; whenever the test sees
/// a job frozen at both ends of a 10 ms sampling interval, the job's exact CPU
/// time (schedstat) must not have grown.
fn frozen_job_uses_no_cpu(backend: BackendKind, confirm_freeze: bool) {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (dir.path().join("a.pid"), dir.path().join("b.pid"));
    let spec = RunSpec {
        slot: Duration::from_millis(150),
        backend,
        confirm_freeze,
        jobs: vec![busy_job(700, &pa).width(2), busy_job(700, &pb).width(2)],
        ..Default::default()
    };
    let mut c = Controller::new(spec).unwrap();
    let h = std::thread::spawn(move || {
        let r = c.run();
        (r, c.stats().clone())
    });
    let pids = [
        read_pid(&pa, Duration::from_secs(3)),
        read_pid(&pb, Duration::from_secs(3)),
    ];
    let mut prev: [Option<(bool, f64)>; 2] = [None, None];
    let (mut frozen_time, mut leaked) = (0.0f64, 0.0f64);
    let mut worst = 0.0f64;
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(4) && !h.is_finished() {
        for k in 0..2 {
            let (Some(f), Some(cpu)) = (cgroup_frozen(pids[k]), procfs::cpu_seconds_exact(pids[k]))
            else {
                prev[k] = None;
                continue;
            };
            if let Some((pf, pc)) = prev[k] {
                if pf && f {
                    frozen_time += 0.010;
                    leaked += cpu - pc;
                    worst = worst.max(cpu - pc);
                }
            }
            prev[k] = Some((f, cpu));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let (r, stats) = h.join().unwrap();
    let r = r.unwrap();
    println!(
        "{backend:?}: frozen samples {frozen_time:.2}s, CPU while frozen {:.3} ms (worst interval {:.3} ms); \
         switches {} avg {:.0} us; reports {:?}",
        leaked * 1e3,
        worst * 1e3,
        stats.switches,
        stats.switch_s / stats.switches.max(1) as f64 * 1e6,
        r.iter().map(|j| (j.wall_s, j.suspended_s, j.user_s)).collect::<Vec<_>>()
    );
    assert!(r.iter().all(|j| j.success));
    assert!(frozen_time > 0.2, "the jobs were hardly ever seen frozen");
    assert!(
        leaked < 0.002,
        "a frozen job used {:.3} ms of CPU",
        leaked * 1e3
    );
    // And from the reports: CPU time never exceeds time not suspended (1 thread).
    for j in &r {
        assert!(
            j.user_s + j.sys_s <= j.wall_s - j.suspended_s + 0.05,
            "{j:?}"
        );
        assert!(j.suspended_s > 0.1);
    }
}

#[test]
#[ignore = "needs root and a cgroup v2 freezer"]
fn real_frozen_job_uses_no_cpu_cgroup2() {
    require_real(BackendKind::Cgroup2);
    frozen_job_uses_no_cpu(BackendKind::Cgroup2, false);
}

#[test]
#[ignore = "needs root and a cgroup v2 freezer"]
fn real_frozen_job_uses_no_cpu_cgroup2_strict() {
    require_real(BackendKind::Cgroup2);
    frozen_job_uses_no_cpu(BackendKind::Cgroup2, true);
}

#[test]
#[ignore = "needs root and a cgroup v1 freezer"]
fn real_frozen_job_uses_no_cpu_cgroup1() {
    require_real(BackendKind::Cgroup1);
    frozen_job_uses_no_cpu(BackendKind::Cgroup1, false);
}

#[test]
#[ignore = "needs root and a writable cgroup freezer"]
fn real_job_exiting_mid_slot_frees_its_slot() {
    require_real(BackendKind::Auto);
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let spec = RunSpec {
        slot: Duration::from_secs(2),
        jobs: vec![
            JobSpec::new(["sleep", "0.2"]).width(2),
            busy_job(200, &dir.path().join("b.pid")).width(2),
        ],
        ..Default::default()
    };
    let t = Instant::now();
    let mut c = Controller::new(spec).unwrap();
    let r = c.run().unwrap();
    let wall = t.elapsed();
    assert!(r.iter().all(|j| j.success), "{r:?}");
    // Job 0 held slot 0 and exited after 0.2 s of a 2 s slot: job 1 ran at once.
    let early: Vec<_> = c.trace().iter().filter(|s| s.early).collect();
    assert!(!early.is_empty(), "no early switch");
    assert!(
        early[0].at < Duration::from_millis(800),
        "{:?}",
        early[0].at
    );
    assert_eq!(early[0].to, Some(SlotId(1)));
    assert!(
        r[1].suspended_s < 0.8,
        "job 1 waited {:.2}s",
        r[1].suspended_s
    );
    // No 2 s slot was sat out: the run took at most job 1's own thawed
    // time (load-dependent) plus the 0.2 s of job 0 and some margin.
    let thawed1 = r[1].wall_s - r[1].suspended_s;
    assert!(wall.as_secs_f64() < thawed1 + 0.9, "run took {wall:?}");
    // Its cells were freed: the matrix after the switch holds only job 1.
    assert_eq!(early[0].matrix.num_gangs(), 1);
}

fn kill_controller_and_check(supervisor: bool) {
    let _g = serial();
    let runner = example("parsched_run");
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (dir.path().join("a.pid"), dir.path().join("b.pid"));
    let b = bsp();
    let job = |pf: &Path| {
        format!(
            "echo $$ > {}; exec {} --threads 1 --iters 100000 --grain-us 1000 --wait spin --loops-per-us 300",
            pf.display(),
            b.display()
        )
    };
    let mut args = vec![
        "--slot".to_string(),
        "100ms".into(),
        "--width".into(),
        "2".into(),
    ];
    if !supervisor {
        args.push("--no-supervisor".into());
    }
    args.extend(["--", "sh", "-c"].map(String::from));
    args.push(job(&pa));
    args.extend([":", "sh", "-c"].map(String::from));
    args.push(job(&pb));
    let mut ctl = Command::new(runner)
        .args(&args)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pids = [
        read_pid(&pa, Duration::from_secs(3)),
        read_pid(&pb, Duration::from_secs(3)),
    ];
    // Wait until one of them is frozen, then SIGKILL the controller.
    let t = Instant::now();
    while !pids.iter().any(|&p| cgroup_frozen(p) == Some(true)) {
        assert!(
            t.elapsed() < Duration::from_secs(3),
            "nothing was ever frozen"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    ctl.kill().unwrap();
    ctl.wait().unwrap();
    if !supervisor {
        // Without a supervisor a job stays frozen until recovery.
        std::thread::sleep(Duration::from_millis(100));
        assert!(pids.iter().any(|&p| cgroup_frozen(p) == Some(true)));
        let cleaned = recover_stale();
        assert!(!cleaned.is_empty(), "recovery found nothing");
    }
    // Within 2 s both jobs run again: out of any parsched group, and
    // accumulating CPU time.
    let t = Instant::now();
    while pids.iter().any(|&p| cgroup_frozen(p).is_some()) {
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "still in a parsched group: {:?}",
            pids.map(cgroup_frozen)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let before = pids.map(|p| procfs::cpu_seconds_exact(p).unwrap());
    std::thread::sleep(Duration::from_millis(400));
    let after = pids.map(|p| procfs::cpu_seconds_exact(p).unwrap());
    for &p in &pids {
        // SAFETY: the orphaned jobs are ours to end.
        unsafe { libc::kill(p, libc::SIGKILL) };
        assert_ne!(procfs_state(p), Some('T'));
    }
    for k in 0..2 {
        assert!(after[k] > before[k] + 0.01, "job {k} makes no progress");
    }
    // No parsched root of the dead controller is left.
    let tag = format!("parsched.{}", ctl.id());
    for m in parsched_runtime::cgroup::cgroup_mounts() {
        assert!(
            !m.path.join(&tag).exists(),
            "{} left behind",
            m.path.join(&tag).display()
        );
    }
}

fn procfs_state(pid: i32) -> Option<char> {
    parsched_runtime::cgroup::proc_state(pid)
}

#[test]
#[ignore = "needs root and a writable cgroup freezer"]
fn real_sigkill_of_controller_leaves_nothing_frozen() {
    require_real(BackendKind::Auto);
    kill_controller_and_check(true);
}

#[test]
#[ignore = "needs root and a writable cgroup freezer"]
fn real_recovery_thaws_groups_of_a_dead_controller() {
    require_real(BackendKind::Auto);
    kill_controller_and_check(false);
}

#[test]
#[ignore = "needs root, a writable cpuset hierarchy and 2 CPUs"]
fn real_pooled_threads_stay_in_their_cpuset() {
    require_real(BackendKind::Auto);
    if let Err(e) =
        parsched_runtime::cgroup::Cpuset::detect(&format!("{}-cpuprobe", std::process::id()))
    {
        panic!("precondition failed: this test needs a cpuset controller: {e}");
    }
    let _g = serial();
    let ncpu = parsched_runtime::topology::machine_topology()
        .unwrap()
        .cpus
        .len();
    assert!(
        ncpu >= 2,
        "precondition failed: this test needs 2 CPUs, the machine has {ncpu}"
    );
    let dir = tempfile::tempdir().unwrap();
    let b = bsp();
    let job = |pf: &Path| {
        JobSpec::new([
            "sh".to_string(),
            "-c".into(),
            format!(
                "echo $$ > {}; exec {} --threads 2 --iters 300 --grain-us 1000 --wait block --loops-per-us 300",
                pf.display(),
                b.display()
            ),
        ])
        .width(1)
    };
    let quiet = |mut j: JobSpec, pf: &Path| {
        j.stdout = Some(pf.with_extension("out"));
        j
    };
    let (pa, pb) = (dir.path().join("a.pid"), dir.path().join("b.pid"));
    let mut spec = RunSpec {
        policy: Policy::named("pools").unwrap(),
        jobs: vec![quiet(job(&pa), &pa), quiet(job(&pb), &pb)],
        ..Default::default()
    };
    spec.pools.pool_size = Some(1);
    let h = std::thread::spawn(move || parsched_runtime::run_jobs(spec));
    let pids = [
        read_pid(&pa, Duration::from_secs(3)),
        read_pid(&pb, Duration::from_secs(3)),
    ];
    let mut seen: [BTreeSet<u32>; 2] = [BTreeSet::new(), BTreeSet::new()];
    let mut allowed: [BTreeSet<u32>; 2] = [BTreeSet::new(), BTreeSet::new()];
    let mut samples = 0;
    while !h.is_finished() {
        for k in 0..2 {
            for tid in procfs::tasks(pids[k]) {
                if let Some(c) = procfs::last_cpu(pids[k], tid) {
                    seen[k].insert(c);
                    samples += 1;
                }
                if let Some(a) = procfs::cpus_allowed(pids[k], tid) {
                    allowed[k].extend(a);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let r = h.join().unwrap().unwrap();
    assert!(r.iter().all(|j| j.success), "{r:?}");
    assert!(samples > 20);
    for k in 0..2 {
        let cs: BTreeSet<u32> = r[k].cpus.iter().copied().collect();
        assert_eq!(cs.len(), 1, "one pool of one CPU: {:?}", r[k].cpus);
        assert!(
            seen[k].is_subset(&cs),
            "job {k} ran on {:?}, allowed {cs:?}",
            seen[k]
        );
        assert!(
            allowed[k].is_subset(&cs),
            "job {k} allowed {:?}",
            allowed[k]
        );
    }
    assert_ne!(
        r[0].cpus, r[1].cpus,
        "least-loaded placement uses both pools"
    );
}

#[test]
#[ignore = "needs root (SIGSTOP/SIGCONT of real jobs, SCHED_FIFO)"]
fn real_signal_backend_runs_gangs() {
    require_real(BackendKind::Signal);
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let spec = RunSpec {
        slot: Duration::from_millis(50),
        backend: BackendKind::Signal,
        jobs: vec![
            busy_job(150, &dir.path().join("a.pid")).width(2),
            busy_job(150, &dir.path().join("b.pid")).width(2),
        ],
        ..Default::default()
    };
    let r = parsched_runtime::run_jobs(spec).unwrap();
    assert!(r.iter().all(|j| j.success && j.suspended_s > 0.0), "{r:?}");
}

#[test]
#[ignore = "needs root (switches to SUDO_UID)"]
fn real_jobs_run_as_the_sudo_user() {
    require_root();
    let runner = example("parsched_run");
    let _g = serial();
    let out = Command::new(runner)
        .env("SUDO_UID", "65534")
        .env("SUDO_GID", "65534")
        .args([
            "--width",
            "1",
            "--",
            "sh",
            "-c",
            "echo ids=$(id -u):$(id -g):$(id -G)",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("ids=65534:65534:65534\n"), "{text}");
}

fn bsp_job(b: &Path, args: &[&str], out: &Path) -> JobSpec {
    let mut argv = vec![b.display().to_string()];
    argv.extend(args.iter().map(|s| s.to_string()));
    argv.extend(["--loops-per-us".to_string(), "300".to_string()]);
    let mut j = JobSpec::new(argv).width(2);
    j.stdout = Some(out.to_path_buf());
    j
}

#[test]
#[ignore = "needs root and a writable cgroup freezer"]
fn real_fcs_classifies_spinners_cs_imbalanced_f_coarse_blockers_dc() {
    require_real(BackendKind::Auto);
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let b = bsp();
    let o = |n: &str| dir.path().join(n);
    let spec = RunSpec {
        policy: Policy::named("fcs").unwrap(),
        slot: Duration::from_millis(50),
        // A coarse blocker (one barrier per 20 ms) switches about 25 times
        // per thread-second: below the default threshold's margin.
        fcs: FcsSpec {
            blocking_rate: 5.0,
            ..Default::default()
        },
        jobs: vec![
            bsp_job(
                &b,
                &[
                    "--threads",
                    "2",
                    "--iters",
                    "600",
                    "--grain-us",
                    "1000",
                    "--wait",
                    "spin",
                ],
                &o("a"),
            ),
            bsp_job(
                &b,
                &[
                    "--threads",
                    "2",
                    "--iters",
                    "300",
                    "--grain-us",
                    "1000",
                    "--wait",
                    "spinblock",
                    "--mult",
                    "1,2",
                ],
                &o("b"),
            ),
            bsp_job(
                &b,
                &[
                    "--threads",
                    "2",
                    "--iters",
                    "12",
                    "--grain-us",
                    "50000",
                    "--wait",
                    "block",
                ],
                &o("c"),
            ),
        ],
        ..Default::default()
    };
    // A job preempted by foreign load spins through its peer's absence
    // and looks imbalanced (F): retried only when the machine was busy.
    retry_under_foreign_load(4, || {
        run_checking_first_classes(
            &spec,
            &[
                ("spin barrier", "CS"),
                ("imbalanced spin-block barrier", "F"),
                ("coarse blocking barrier", "DC"),
            ],
        )?;
        Ok(())
    });
}

#[test]
#[ignore = "needs root and a writable cgroup freezer"]
fn real_fcs_takes_back_a_job_that_starts_to_spin() {
    require_real(BackendKind::Auto);
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let b = bsp();
    let o = |n: &str| dir.path().join(n);
    let spec = RunSpec {
        policy: Policy::named("fcs").unwrap(),
        slot: Duration::from_millis(50),
        fcs: FcsSpec {
            blocking_rate: 5.0,
            window_s: 0.5,
            ..Default::default()
        },
        jobs: vec![
            bsp_job(
                &b,
                &[
                    "--threads",
                    "2",
                    "--iters",
                    "12",
                    "--grain-us",
                    "50000",
                    "--wait",
                    "block",
                    "--then",
                    "2500,1000,spin",
                ],
                &o("a"),
            ),
            bsp_job(
                &b,
                &[
                    "--threads",
                    "2",
                    "--iters",
                    "800",
                    "--grain-us",
                    "1000",
                    "--wait",
                    "spin",
                ],
                &o("b"),
            ),
        ],
        ..Default::default()
    };
    retry_under_foreign_load(4, || {
        let mut c = Controller::new(spec.clone()).unwrap();
        let r = c.run().unwrap();
        println!("classes {:?}; stats {:?}", r[0].classes, c.stats());
        assert!(r.iter().all(|j| j.success), "{r:?}");
        let classes: Vec<&str> = r[0].classes.iter().map(|(_, c)| c.as_str()).collect();
        check!(classes.first() == Some(&"DC"), "first class: {classes:?}");
        check!(classes.last() == Some(&"CS"), "last class: {classes:?}");
        let g = GangId(0);
        let trace = c.trace();
        let out = trace
            .iter()
            .position(|t| t.live.contains(&g) && t.matrix.allocation(g).is_none())
            .expect("released");
        check!(
            trace[out..]
                .iter()
                .any(|t| t.matrix.allocation(g).is_some()),
            "taken back"
        );
        check!(
            r[0].coscheduled == Some(true),
            "coscheduled: {:?}",
            r[0].coscheduled
        );
        Ok(())
    });
}

#[test]
#[ignore = "needs root and a cgroup v1 cpu hierarchy with RT group scheduling"]
fn real_realtime_gets_rt_runtime_in_a_v1_cpu_cgroup() {
    require_root();
    let cpu = parsched_runtime::cgroup::v1_mount("cpu")
        .expect("precondition failed: this test needs a cgroup v1 cpu hierarchy");
    let dir = cpu.join(format!("parsched-rttest-{}", std::process::id()));
    std::fs::create_dir(&dir).unwrap();
    let rt = dir.join("cpu.rt_runtime_us");
    if !rt.exists() {
        let _ = std::fs::remove_dir(&dir);
        panic!("precondition failed: this test needs RT group scheduling (cpu.rt_runtime_us)");
    }
    let d = dir.clone();
    let home = cpu.clone();
    // A dedicated thread moves itself into the fresh group (rt_runtime 0).
    let r = std::thread::spawn(move || {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        std::fs::write(d.join("tasks"), tid.to_string()).unwrap();
        let before: i64 = std::fs::read_to_string(d.join("cpu.rt_runtime_us"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let got = parsched_runtime::controller::enter_realtime(10);
        // SAFETY: no preconditions.
        let policy = unsafe { libc::sched_getscheduler(0) } & !libc::SCHED_RESET_ON_FORK;
        parsched_runtime::controller::leave_realtime();
        std::fs::write(home.join("tasks"), tid.to_string()).unwrap();
        (before, got, policy)
    })
    .join()
    .unwrap();
    let after: i64 = std::fs::read_to_string(&rt)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _ = std::fs::remove_dir(&dir);
    assert_eq!(r.0, 0, "a new group starts without RT runtime");
    assert!(r.1.is_ok(), "{:?}", r.1);
    assert_eq!(r.2, libc::SCHED_FIFO);
    assert!(after > 0);
}

#[test]
#[ignore = "needs root and a cgroup v2 freezer"]
fn real_cgroup2_cpu_time_covers_unreaped_descendants() {
    require_real(BackendKind::Cgroup2);
    let _g = serial();
    let spec = RunSpec {
        backend: BackendKind::Cgroup2,
        jobs: vec![JobSpec::new([
            "sh",
            "-c",
            "sh -c 'while :; do :; done' & sleep 0.3; exit 0",
        ])
        .width(1)],
        ..Default::default()
    };
    let r = parsched_runtime::run_jobs(spec).unwrap();
    // The leader's rusage would show ~0: the busy child was never reaped by
    // it (the controller killed it as a straggler).
    assert!(r[0].user_s + r[0].sys_s > 0.05, "{r:?}");
}
