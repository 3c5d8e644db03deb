//! Helpers shared by the runtime's integration tests: serialization, the
//! `bench/bsp` program, and the preconditions of the privileged tests (which
//! panic, saying what is missing, rather than pass without having run).

#![allow(dead_code)]

use parsched_runtime::{BackendKind, JobSpec};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Path of an example binary built by `cargo test` (not by `cargo test
/// --test integration`); panics if it is missing.
#[track_caller]
pub fn example(name: &str) -> PathBuf {
    let p = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.join("examples").join(name)));
    match p {
        Some(p) if p.exists() => p,
        _ => panic!(
            "precondition failed: examples/{name} not built (run `cargo test` without --test)"
        ),
    }
}

pub static SERIAL: Mutex<()> = Mutex::new(());

/// One test at a time on the machine's CPUs; as root, the test process (and
/// every job it starts) first moves into the CPU shield ([`shield`]).
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    if is_root() {
        let _ = shield();
    }
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// The v1 cpu cgroup the real tests run in, beside the other programs of
/// the machine (which stay where they are).
pub const SHIELD_GROUP: &str = "parsched-tests";
/// Its `cpu.shares` (the maximum; a task of the root group weighs 1024 at
/// nice 0).
const SHIELD_SHARES: u64 = 262_144;

/// Moves this test process into a v1 cpu cgroup of the highest weight
/// ([`SHIELD_GROUP`], `cpu.shares` 262144, created if missing, with
/// `cpu.rt_runtime_us` for the controller's SCHED_FIFO under RT group
/// scheduling), once; the jobs it starts inherit it. Other programs on the
/// machine (a compiler, a busy loop, at nice 0 in the root group) then take
/// about 0.4% of a CPU the tests' jobs want instead of half of it, so a
/// spinning job keeps its processors as on a quiet machine; they still get
/// every cycle the jobs leave idle. What the tests check is unchanged: a
/// quiet machine behaves the same in or out of the group, and the checks
/// that still fail under load are retried by [`retry_under_foreign_load`].
/// Returns why it could not (no v1 cpu hierarchy — a pure cgroup v2 machine,
/// where the runtime's own groups would take the jobs out of a shield —
/// or not root; or `PARSCHED_TEST_SHIELD=0`, to measure the tests without
/// it); the tests then run unshielded.
pub fn shield() -> Result<(), String> {
    static SHIELD: OnceLock<Result<(), String>> = OnceLock::new();
    SHIELD
        .get_or_init(|| {
            let r = enter_shield();
            if let Err(why) = &r {
                eprintln!("real tests not shielded from other programs: {why}");
            }
            r
        })
        .clone()
}

fn enter_shield() -> Result<(), String> {
    if std::env::var("PARSCHED_TEST_SHIELD").as_deref() == Ok("0") {
        return Err("PARSCHED_TEST_SHIELD=0".into());
    }
    let mount = parsched_runtime::cgroup::v1_mount("cpu").ok_or("no cgroup v1 cpu hierarchy")?;
    let dir = mount.join(SHIELD_GROUP);
    let err = |what: &str, e: std::io::Error| format!("{what} {}: {e}", dir.display());
    match std::fs::create_dir(&dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(err("create", e)),
        _ => {}
    }
    std::fs::write(dir.join("cpu.shares"), SHIELD_SHARES.to_string())
        .map_err(|e| err("cpu.shares of", e))?;
    let rt = dir.join("cpu.rt_runtime_us");
    if std::fs::read_to_string(&rt).is_ok_and(|s| s.trim() == "0") {
        std::fs::write(&rt, "50000").map_err(|e| err("cpu.rt_runtime_us of", e))?;
    }
    std::fs::write(dir.join("cgroup.procs"), std::process::id().to_string())
        .map_err(|e| err("join", e))?;
    eprintln!(
        "real tests shielded: cpu cgroup {} (cpu.shares {SHIELD_SHARES})",
        dir.display()
    );
    Ok(())
}

pub fn is_root() -> bool {
    // SAFETY: no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// What a test needing a C compiler says when there is none (`make test`
/// installs one where it is missing).
const NEED_CC: &str = "this test needs a C compiler (cc) to build its benchmark program from \
                       bench/; `make test` installs one where it is missing";

/// `bench/NAME.c` compiled into a temporary directory (`None` when it does
/// not build: no C compiler).
fn build_bench(name: &str, libs: &[&str]) -> Option<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../bench/{name}.c"));
    let dir = std::env::temp_dir().join(format!("parsched-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let out = dir.join(name);
    let ok = Command::new("cc")
        .args(["-O2", "-std=gnu11", "-o"])
        .arg(&out)
        .arg(&src)
        .args(libs)
        .status()
        .ok()?
        .success();
    ok.then_some(out)
}

/// bench/bsp compiled into a temporary directory, once (`None` without a C
/// compiler).
fn bsp_built() -> &'static Option<PathBuf> {
    static BSP: OnceLock<Option<PathBuf>> = OnceLock::new();
    BSP.get_or_init(|| build_bench("bsp", &["-lpthread"]))
}

/// Whether bench/bsp builds here.
pub fn have_bsp() -> bool {
    bsp_built().is_some()
}

/// bench/bsp's path; panics, saying why, without a C compiler (a test that
/// cannot run fails; it never passes).
pub fn bsp() -> PathBuf {
    bsp_built().clone().expect(NEED_CC)
}

/// bench/memlat compiled into a temporary directory, once; panics, saying
/// why, without a C compiler.
pub fn memlat() -> PathBuf {
    static MEMLAT: OnceLock<Option<PathBuf>> = OnceLock::new();
    MEMLAT
        .get_or_init(|| build_bench("memlat", &[]))
        .clone()
        .expect(NEED_CC)
}

/// Why real-cgroup tests cannot run here, if they cannot.
fn real_missing(backend: BackendKind) -> Option<String> {
    if !is_root() {
        return Some("not root".into());
    }
    if !have_bsp() {
        return Some("no C compiler to build bench/bsp.c".into());
    }
    match parsched_runtime::cgroup::open_freezer(backend, &format!("{}-probe", std::process::id()))
    {
        Ok(f) if backend == BackendKind::Auto && f.kind() == BackendKind::Signal => {
            Some("no cgroup freezer on this machine".into())
        }
        Ok(_) => None,
        Err(e) => Some(format!("{backend:?} unavailable: {e}")),
    }
}

/// Panics, saying why, unless this process is root, `bench/bsp.c` builds and
/// the `backend` freezer works here. The real tests are `#[ignore]`d; run
/// with `--ignored` they must not pass without having run.
#[track_caller]
pub fn require_real(backend: BackendKind) {
    if let Some(why) = real_missing(backend) {
        panic!("precondition failed: this test needs root, a C compiler and the {backend:?} freezer: {why}");
    }
}

/// Panics unless this process is root.
#[track_caller]
pub fn require_root() {
    assert!(is_root(), "precondition failed: this test needs root");
}

/// A job that computes for about `ms` ms of CPU (one thread), writing its pid
/// to `pidfile` first.
pub fn busy_job(ms: u64, pidfile: &Path) -> JobSpec {
    let b = bsp();
    let mut j = JobSpec::new([
        "sh".to_string(),
        "-c".into(),
        format!(
            "echo $$ > {}; exec {} --threads 1 --iters {ms} --grain-us 1000 --wait spin --loops-per-us 300",
            pidfile.display(),
            b.display()
        ),
    ]);
    j.stdout = Some(pidfile.with_extension("out"));
    j
}

pub fn read_pid(p: &Path, timeout: Duration) -> i32 {
    let t = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(p)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        assert!(t.elapsed() < timeout, "no pid in {}", p.display());
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Whether `pid`'s freezer cgroup (v2 or v1) reports it frozen; `None` if it
/// is in no parsched group.
pub fn cgroup_frozen(pid: i32) -> Option<bool> {
    let cg = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    for line in cg.lines() {
        let mut it = line.splitn(3, ':');
        let (_, ctl, path) = (it.next()?, it.next()?, it.next()?);
        if !path.contains("parsched.") {
            continue;
        }
        if ctl.is_empty() {
            for m in parsched_runtime::cgroup::cgroup_mounts()
                .iter()
                .filter(|m| m.v2)
            {
                let ev = m
                    .path
                    .join(path.trim_start_matches('/'))
                    .join("cgroup.events");
                if let Ok(s) = std::fs::read_to_string(ev) {
                    return Some(s.lines().any(|l| l == "frozen 1"));
                }
            }
        } else if ctl.split(',').any(|c| c == "freezer") {
            let m = parsched_runtime::cgroup::v1_mount("freezer")?;
            let st =
                std::fs::read_to_string(m.join(path.trim_start_matches('/')).join("freezer.state"))
                    .ok()?;
            return Some(st.trim() != "THAWED");
        }
    }
    None
}

/// Busy CPU-seconds of the whole machine so far (/proc/stat's first line:
/// user, nice, system, irq, softirq, steal; USER_HZ = 100).
fn machine_busy_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let f: Vec<f64> = stat
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let at = |i: usize| f.get(i).copied().unwrap_or(0.0);
    (at(0) + at(1) + at(2) + at(5) + at(6) + at(7)) / 100.0
}

/// CPU-seconds of this process and of its reaped children (the jobs).
fn own_cpu_s() -> f64 {
    let used = |who| {
        // SAFETY: getrusage writes the struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(who, &mut u) };
        let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
        t(u.ru_utime) + t(u.ru_stime)
    };
    used(libc::RUSAGE_SELF) + used(libc::RUSAGE_CHILDREN)
}

/// Runs `f`; returns its value and the foreign load meanwhile: processors'
/// worth of CPU used by processes other than this one and its children (the
/// machine's busy time minus ours, over the wall time).
pub fn with_foreign_load<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let (busy0, own0, t0) = (machine_busy_s(), own_cpu_s(), Instant::now());
    let v = f();
    let wall = t0.elapsed().as_secs_f64().max(1e-3);
    let foreign = ((machine_busy_s() - busy0) - (own_cpu_s() - own0)).max(0.0) / wall;
    (v, foreign)
}

/// Foreign load (processors' worth) above which a failed real-machine
/// check is retried: a job preempted by another program spins through
/// its peers' absence, which no policy can prevent.
pub const FOREIGN_LOAD_RETRY: f64 = 0.25;

/// Waits (at most `limit`) for a second in which the foreign load is at most
/// [`FOREIGN_LOAD_RETRY`].
pub fn wait_for_quiet(limit: Duration) {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        let ((), foreign) = with_foreign_load(|| std::thread::sleep(Duration::from_secs(1)));
        if foreign <= FOREIGN_LOAD_RETRY {
            return;
        }
    }
}

/// Runs `attempt` (a real-machine run and its checks, `Err` naming the check
/// that failed) until it passes, at most `tries` times. A failure on a quiet
/// machine (foreign load at most [`FOREIGN_LOAD_RETRY`]) fails at once; one
/// under foreign load is retried once the machine is quiet again (or after
/// 60 s), and the last failure is reported with the load of every attempt.
/// What a quiet machine must show is never weakened.
#[track_caller]
pub fn retry_under_foreign_load(tries: usize, mut attempt: impl FnMut() -> Result<(), String>) {
    let mut seen = Vec::new();
    for k in 1..=tries {
        let (r, foreign) = with_foreign_load(&mut attempt);
        match r {
            Ok(()) => {
                eprintln!("passed on attempt {k} (foreign load {foreign:.2} CPUs)");
                if k > 1 {
                    eprintln!("earlier failures: {seen:?}");
                }
                return;
            }
            Err(e) if foreign <= FOREIGN_LOAD_RETRY => {
                panic!("{e} (foreign load {foreign:.2} CPUs: a quiet machine; earlier: {seen:?})")
            }
            Err(e) => {
                seen.push(format!("{e} (foreign load {foreign:.2} CPUs)"));
                if k < tries {
                    wait_for_quiet(Duration::from_secs(60));
                }
            }
        }
    }
    panic!("failed {tries} times, each under foreign load: {seen:?}");
}

/// `Err(message)` from a check that does not hold (for [`retry_under_foreign_load`]).
#[macro_export]
macro_rules! check {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+));
        }
    };
}

/// Runs `spec` (FCS) and checks each job's first class: job k's must be
/// `want[k].1` (`want[k].0` names the job in the message). Prints what each
/// job was classified from; returns the reports for further checks.
pub fn run_checking_first_classes(
    spec: &parsched_runtime::RunSpec,
    want: &[(&str, &str)],
) -> Result<Vec<parsched_runtime::JobReport>, String> {
    let mut c = parsched_runtime::Controller::new(spec.clone()).unwrap();
    let r = c.run().unwrap();
    for j in &r {
        println!(
            "{}: {:?} {:?} wall {:.2}",
            j.name, j.classes, j.observed, j.wall_s
        );
    }
    assert!(r.iter().all(|j| j.success), "{r:?}");
    for (k, (what, class)) in want.iter().enumerate() {
        let first = r[k].classes.first().map(|c| c.1.clone());
        check!(first.as_deref() == Some(*class), "{what}: {first:?}");
    }
    Ok(r)
}
