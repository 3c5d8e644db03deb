//! MPI programs under the runtime with libparsched_mpi (crates/parsched-runtime/mpi,
//! built by `make mpi`): FCS classifies them from the library's statistics.
//! Needs root, a writable cgroup freezer and MPICH (Debian's `mpich`;
//! privileged.sh says "NOT RUN" without it, as the Python tests skip).

use parsched_runtime::{BackendKind, Controller, CoschedSpec, JobSpec, Policy, RunSpec};
use std::path::PathBuf;
use std::time::Duration;

use crate::common::*;

fn mpi_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/mpi/mpich");
    assert!(
        d.join("libparsched_mpi.so").exists() && d.join("mpi_bsp").exists(),
        "precondition failed: {} is not built: run `make mpi` (needs MPICH)",
        d.display()
    );
    d
}

/// Runs `spec`, checks that every job succeeded and nothing was warned;
/// prints the jobs' wall times; returns the reports and the boosts given.
fn run_clean(label: &str, spec: RunSpec) -> (Vec<parsched_runtime::JobReport>, u64) {
    let mut c = Controller::new(spec).unwrap();
    let r = c.run().unwrap();
    let boosts = c.stats().reported::<u64>("boosts").unwrap();
    let walls: Vec<f64> = r.iter().map(|j| j.wall_s).collect();
    println!("{label}: {walls:?} s, {boosts} boosts");
    assert!(r.iter().all(|j| j.success), "{r:?}");
    assert!(c.warnings().is_empty(), "{:?}", c.warnings());
    (r, boosts)
}

/// `mpirun.mpich -np 2` of mpi_bsp with the library and a waiting strategy
/// (hydra passes the controller's PARSCHED_FCS_SYNC_FILE on to the ranks).
fn mpi_job(d: &std::path::Path, wait: &str, args: &[&str]) -> JobSpec {
    let lib = d.join("libparsched_mpi.so").display().to_string();
    let mut argv: Vec<String> = ["mpirun.mpich", "-np", "2", "-env", "LD_PRELOAD", &lib]
        .iter()
        .map(|s| s.to_string())
        .collect();
    argv.extend(["-env", "PARSCHED_MPI_WAIT", wait].map(String::from));
    argv.push(d.join("mpi_bsp").display().to_string());
    argv.extend(args.iter().map(|s| s.to_string()));
    JobSpec::new(argv).width(2)
}

#[test]
#[ignore = "needs root, a writable cgroup freezer and MPICH"]
fn real_fcs_classifies_mpi_jobs_from_the_library_statistics() {
    let d = mpi_dir();
    require_real(BackendKind::Auto);
    let _g = serial();
    let spec = RunSpec {
        policy: Policy::named("fcs").unwrap(),
        slot: Duration::from_millis(50),
        jobs: vec![
            // balanced, fine-grained (1 ms between barriers), busy waiting
            mpi_job(&d, "busy", &["1500", "1000"]),
            // imbalanced: one rank computes twice as long; spin-block
            mpi_job(&d, "spin-block", &["700", "1000", "1,2"]),
            // compute-bound: a barrier every 50 ms
            mpi_job(&d, "spin-block", &["30", "50000"]),
        ],
        ..Default::default()
    };
    // A rank preempted by foreign load makes its partner wait: retried only
    // when the machine was busy.
    retry_under_foreign_load(4, || {
        let r = run_checking_first_classes(
            &spec,
            &[
                ("balanced MPI job", "CS"),
                ("imbalanced MPI job", "F"),
                ("compute-bound MPI job", "DC"),
            ],
        )?;
        // classified from the library's statistics (rule 1), not /proc
        check!(
            r.iter()
                .all(|j| j.observed.as_ref().is_some_and(|o| o.sync_events.is_some())),
            "no synchronization statistics: {:?}",
            r.iter().map(|j| &j.observed).collect::<Vec<_>>()
        );
        Ok(())
    });
}

#[test]
#[ignore = "needs root, a writable cgroup freezer and MPICH"]
fn real_cosched_pins_each_rank_to_its_workstation_and_sets_the_waiting() {
    use parsched_core::policy::cosched::{CoschedScheme, Scheme};
    use parsched_runtime::{CoschedLayout, CoschedSpec};
    let d = mpi_dir();
    require_real(BackendKind::Auto);
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    // The job's command is a shell that runs mpirun and then prints what the
    // controller put in its environment (the library's setting).
    let job = |n: usize| {
        let lib = d.join("libparsched_mpi.so").display().to_string();
        let prog = d.join("mpi_bsp").display().to_string();
        let script = format!(
            "mpirun.mpich -np 2 -env LD_PRELOAD {lib} {prog} 200 2000 1,2 && \
             echo \"wait=$PARSCHED_MPI_WAIT spin=$PARSCHED_MPI_SPIN_US\""
        );
        let mut j = JobSpec::new(["sh", "-c", &script]).width(2);
        j.stdout = Some(dir.path().join(format!("out{n}")));
        j
    };
    let spec = RunSpec {
        policy: Policy::named("cosched").unwrap(),
        cosched: CoschedSpec {
            scheme: CoschedScheme::Dynamic(Scheme::SB),
            layout: CoschedLayout::Workstations,
            spin_us: 50,
        },
        jobs: vec![job(0), job(1)],
        ..Default::default()
    };
    let (r, _) = run_clean("SB", spec);
    for (n, j) in r.iter().enumerate() {
        let out = std::fs::read_to_string(dir.path().join(format!("out{n}"))).unwrap();
        assert!(out.contains("wait=spin-block spin=50"), "{out}");
        // both ranks pinned, to different CPUs
        assert_eq!(
            j.ranks.iter().map(|x| x.0).collect::<Vec<_>>(),
            [0, 1],
            "{j:?}"
        );
        assert_ne!(j.ranks[0].1, j.ranks[1].1, "{j:?}");
    }
    // rank k of every job on the same CPU: each CPU is one workstation
    assert_eq!(r[0].ranks, r[1].ranks, "{r:?}");
}

#[test]
#[ignore = "needs root, a writable cgroup freezer and MPICH"]
fn real_cosched_pb_boosts_ranks_with_pending_messages_and_leaves_none_boosted() {
    use parsched_core::policy::cosched::{CoschedScheme, Scheme};
    let d = mpi_dir();
    require_real(BackendKind::Auto);
    let _g = serial();
    // Two busy-waiting jobs, one rank of each on every CPU: without
    // coordination each waits for the other's slices; PB boosts the rank
    // with a message pending on each CPU every 10 ms.
    let spec = |scheme: Scheme, wait: &str| RunSpec {
        policy: Policy::named("cosched").unwrap(),
        cosched: CoschedSpec {
            scheme: CoschedScheme::Dynamic(scheme),
            ..Default::default()
        },
        jobs: vec![
            mpi_job(&d, wait, &["400", "2000"]),
            mpi_job(&d, wait, &["400", "2000"]),
        ],
        ..Default::default()
    };
    let (r, boosts) = run_clean("PB", spec(Scheme::PB, "busy"));
    // 10 ms periods over the run, a boost on most of them
    assert!(boosts >= 20, "{boosts} boosts in {:.2} s", r[0].wall_s);
    // nothing left at SCHED_FIFO: every rank ended, and no thread of this
    // process tree is real-time
    let rt: Vec<_> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.contains("mpi_bsp"))
        })
        .collect();
    assert!(rt.is_empty(), "mpi_bsp processes still alive: {rt:?}");
    // PB-SB: the same timer over spin-blocking ranks
    run_clean("PB-SB", spec(Scheme::PB_SB, "spin-block"));
    // DCS boosts on arrival (the library rings the controller's bell), SY
    // when a rank's spin ends (it asks for another rank's boost)
    let (_, boosts) = run_clean("DCS", spec(Scheme::DCS, "busy"));
    assert!(boosts >= 20, "DCS: {boosts} boosts");
    let (_, boosts) = run_clean("SY", spec(Scheme::SY, "spin-yield"));
    assert!(boosts >= 1, "SY: {boosts} boosts");
    // Local (no boost) on the same jobs gives no boosts
    let (_, boosts) = run_clean("Local", spec(Scheme::LOCAL, "busy"));
    assert_eq!(boosts, 0);
}

#[test]
#[ignore = "needs root"]
fn real_supervisor_puts_a_boosted_pinned_thread_back_when_the_controller_dies() {
    require_root();
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let p = libc::sched_param { sched_priority: 1 };
    // SAFETY: valid sched_param for our own child.
    assert_eq!(
        unsafe { libc::sched_setscheduler(pid, libc::SCHED_FIFO, &p) },
        0
    );
    // pinned to one CPU, as a cosched workstation's rank
    let allowed = |pid: i32| {
        // SAFETY: a zeroed cpu_set_t filled by the kernel.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::sched_getaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .count()
        }
    };
    let ours = allowed(0);
    // SAFETY: as above, for our own child.
    unsafe {
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(0, &mut one);
        assert_eq!(
            libc::sched_setaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &one),
            0
        );
    }
    assert_eq!(allowed(pid), 1);
    let mut s = parsched_runtime::safety::Supervisor::start(&[]).unwrap();
    s.watch_rt_tid(pid);
    s.watch_pinned_tid(pid);
    s.finish(); // as if the controller died: the pipe closes
                // SAFETY: a plain query.
    let policy = unsafe { libc::sched_getscheduler(pid) };
    let cpus = allowed(pid);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        policy,
        libc::SCHED_OTHER,
        "still real-time after the supervisor ran"
    );
    assert_eq!(cpus, ours, "still pinned after the supervisor ran");
}

/// Runs `script` (python3) as a one-process job under cosched `scheme`, its
/// output to `out`: the reports, what it printed and the boosts given.
fn run_fake_rank(
    script: &str,
    scheme: parsched_core::policy::cosched::Scheme,
    out: &std::path::Path,
) -> (Vec<parsched_runtime::JobReport>, String, u64) {
    let mut j = JobSpec::new(["python3", "-c", script]).width(1);
    j.stdout = Some(out.to_path_buf());
    let spec = RunSpec {
        policy: Policy::named("cosched").unwrap(),
        cosched: parsched_runtime::CoschedSpec {
            scheme: parsched_core::policy::cosched::CoschedScheme::Dynamic(scheme),
            ..Default::default()
        },
        jobs: vec![j],
        ..Default::default()
    };
    let mut c = Controller::new(spec).unwrap();
    let r = c.run().unwrap();
    let text = std::fs::read_to_string(out).unwrap_or_default();
    (r, text, c.stats().reported::<u64>("boosts").unwrap())
}

/// A job that publishes itself as MPI rank 0 with one message pending (the
/// library's layout, written by hand: no MPI involved) and reports how long
/// after that it found itself at SCHED_FIFO.
const PENDING_RANK: &str = r#"
import mmap, os, struct, threading, time
f = open(os.environ["PARSCHED_FCS_SYNC_FILE"], "r+b")
f.truncate(4096 + 127 * 64)
m = mmap.mmap(f.fileno(), 4096 + 127 * 64)
m[0:8] = b"PSYNC1\0\0"
o = 4096
# waiting (spinning), sent 1, consumed 0, pid, tid
struct.pack_into("=I", m, o + 4, 1)
struct.pack_into("=QQ", m, o + 8, 1, 0)
t0 = time.monotonic()
struct.pack_into("=II", m, o + 32, os.getpid(), threading.get_native_id())
while os.sched_getscheduler(0) != os.SCHED_FIFO and time.monotonic() - t0 < 2:
    pass
print("boosted after %.4f s" % (time.monotonic() - t0), flush=True)
"#;

#[test]
#[ignore = "needs root and a writable cgroup freezer"]
fn real_cosched_pb_boosts_a_rank_with_a_pending_message_within_one_scan() {
    use parsched_core::policy::cosched::Scheme;
    require_real(BackendKind::Auto);
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    retry_under_foreign_load(4, || {
        let (r, text, boosts) = run_fake_rank(PENDING_RANK, Scheme::PB, &out);
        check!(r[0].success, "{r:?}");
        let s: f64 = text
            .trim()
            .strip_prefix("boosted after ")
            .and_then(|t| t.strip_suffix(" s"))
            .and_then(|t| t.parse().ok())
            .unwrap_or(f64::INFINITY);
        // the controller scans every 10 ms: boosted within one scan (plus
        // the time to see it, 20 ms in all)
        let within_a_scan = s < 0.020;
        check!(within_a_scan, "boosted after {s} s: {text}");
        check!(boosts >= 1, "no boost");
        Ok(())
    });
}

/// A job that publishes itself as MPI rank 0 (the library's layout, by
/// hand) and flags two arrivals in its slot's bell word, as the library
/// does under DCS: one while it spins without polling (descheduled, as the
/// controller must believe), one while it polls. Reports how soon the
/// first boost came, whether the second brought one, and its bell word.
const ARRIVING_RANK: &str = r#"
import mmap, os, struct, threading, time
f = open(os.environ["PARSCHED_FCS_SYNC_FILE"], "r+b")
f.truncate(4096 + 127 * 64)
m = mmap.mmap(f.fileno(), 4096 + 127 * 64)
m[0:8] = b"PSYNC1\0\0"
o = 4096
assert os.environ["PARSCHED_MPI_ARRIVALS"] == "1" and os.environ["PARSCHED_MPI_BELL"]
struct.pack_into("=I", m, o + 4, 1)
struct.pack_into("=II", m, o + 32, os.getpid(), threading.get_native_id())
time.sleep(0.03)
struct.pack_into("=Q", m, o + 8, 1)
struct.pack_into("=I", m, o + 52, 1)
t0 = time.monotonic()
while os.sched_getscheduler(0) != os.SCHED_FIFO and time.monotonic() - t0 < 2:
    pass
a = time.monotonic() - t0
struct.pack_into("=I", m, o + 48, 0)
os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
struct.pack_into("=Q", m, o + 56, time.monotonic_ns())
struct.pack_into("=Q", m, o + 8, 2)
struct.pack_into("=I", m, o + 52, 1)
t1, again = time.monotonic(), False
while time.monotonic() - t1 < 0.05:
    struct.pack_into("=Q", m, o + 56, time.monotonic_ns())
    again = again or os.sched_getscheduler(0) == os.SCHED_FIFO
print("%.5f %d %d" % (a, again, struct.unpack_from("=I", m, o + 52)[0]), flush=True)
"#;

#[test]
#[ignore = "needs root and a writable cgroup freezer"]
fn real_cosched_dcs_boosts_a_descheduled_destination_on_arrival_only() {
    use parsched_core::policy::cosched::Scheme;
    require_real(BackendKind::Auto);
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    retry_under_foreign_load(4, || {
        let (r, text, boosts) = run_fake_rank(ARRIVING_RANK, Scheme::DCS, &out);
        check!(r[0].success, "{r:?}");
        let f: Vec<f64> = text
            .split_whitespace()
            .filter_map(|t| t.parse().ok())
            .collect();
        println!("DCS: {text}");
        check!(f.len() == 3, "job printed {text:?}");
        // within a scan of the arrival flags (every 0.2 ms), not at a 10 ms
        // period
        let at_once = f[0] < 0.005;
        check!(at_once, "boosted {} s after the arrival", f[0]);
        // a destination seen polling is running: no boost, and the
        // controller looked (cleared the bell word)
        check!(f[1] == 0.0, "a polling destination was boosted");
        check!(f[2] == 0.0, "bell word left at {}", f[2]);
        check!(boosts == 1, "{boosts} boosts");
        Ok(())
    });
}
