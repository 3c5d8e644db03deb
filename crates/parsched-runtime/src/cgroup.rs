//! Freezing and placing jobs: the [`Freezer`] trait with its backends, and
//! [`Cpuset`] for processor pools.
//!
//! | backend | stop | resume | kill | notes |
//! |---|---|---|---|---|
//! | [`Cgroup2`] | `cgroup.freeze` = 1, wait for `frozen 1` in `cgroup.events` | `cgroup.freeze` = 0 | `cgroup.kill` | any cgroup2 mount, including `/sys/fs/cgroup/unified` on hybrid hosts |
//! | [`Cgroup1`] | `freezer.state` = FROZEN, wait until it reads FROZEN | THAWED | freeze, SIGKILL, thaw | keeps one empty group permanently frozen (the kernel's freezer static key stays on; measured 2.5× cheaper) |
//! | [`Signal`] | `SIGSTOP` to the job's process group | `SIGCONT` | `SIGKILL` | last resort: a job that leaves its process group escapes |
//! | [`Mock`] | records the call | records | records, then SIGKILLs the registered pids | deterministic tests |
//!
//! Every group lives under one directory `parsched.<controller pid>` per
//! hierarchy, so the supervisor and the next start ([`crate::safety`]) can find
//! and thaw them. Jobs join their groups themselves between `fork` and `exec`
//! (by writing `0` into the files of [`Freezer::join_files`]), so no thread or
//! child of a job is ever outside its group.

use crate::error::{Result, RuntimeError};
use crate::topology::format_cpu_list;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Prefix of the per-controller directory in every hierarchy.
pub const ROOT_PREFIX: &str = "parsched.";

/// How long a freeze or thaw may take before it is reported as an error.
pub const FREEZE_TIMEOUT: Duration = Duration::from_secs(2);

/// Which freezer backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum BackendKind {
    /// cgroup v2 where a cgroup2 mount offers `cgroup.freeze`, else v1, else signals.
    #[default]
    Auto,
    Cgroup2,
    Cgroup1,
    Signal,
    Mock,
}

/// Stops and resumes whole jobs (process trees). Groups are named by the
/// caller (`job0`, …) and live under the backend's parsched root.
pub trait Freezer: Send {
    fn kind(&self) -> BackendKind;
    /// Creates an empty, thawed group.
    fn create(&mut self, name: &str) -> Result<()>;
    /// Files a child writes `0` into (between fork and exec) to join the
    /// group; empty when the parent must call [`Freezer::add_pid`].
    fn join_files(&self, name: &str) -> Vec<PathBuf>;
    /// Puts a process (and, for cgroups, its future children) in the group.
    fn add_pid(&mut self, name: &str, pid: i32) -> Result<()>;
    /// Stops every task of the group; returns once the kernel confirms.
    fn freeze(&mut self, name: &str) -> Result<()> {
        self.request_freeze(name)?;
        self.confirm_frozen(name)
    }
    /// Asks the kernel to stop the group and returns at once. From then on no
    /// task of the group runs user code (running tasks are interrupted at
    /// once; runnable ones trap into the freezer as soon as they are
    /// scheduled), but the kernel may not yet report the group frozen: on a
    /// loaded machine that takes until every task has been scheduled once.
    fn request_freeze(&mut self, name: &str) -> Result<()>;
    /// Waits until the kernel reports every task of the group stopped.
    fn confirm_frozen(&mut self, name: &str) -> Result<()>;
    fn thaw(&mut self, name: &str) -> Result<()>;
    fn is_frozen(&self, name: &str) -> Result<bool>;
    /// The processes in the group.
    fn pids(&self, name: &str) -> Result<Vec<i32>>;
    /// SIGKILLs every process of the group (frozen or not).
    fn kill(&mut self, name: &str) -> Result<()>;
    /// (user, system) CPU seconds of everything that ever ran in the group,
    /// where the backend can tell (cgroup v2 `cpu.stat`).
    fn cpu_usage(&self, _name: &str) -> Option<(f64, f64)> {
        None
    }
    /// Removes the group; remaining processes are thawed and released (moved
    /// out), never left frozen.
    fn remove(&mut self, name: &str) -> Result<()>;
    /// The parsched root directories this backend created (cleaned by the
    /// supervisor if the controller dies).
    fn roots(&self) -> Vec<PathBuf>;
    /// Thaws and removes every group and the root. Idempotent.
    fn cleanup(&mut self) -> Result<()>;
}

// ---------------------------------------------------------------- mounts

/// A cgroup mount from `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupMount {
    pub path: PathBuf,
    /// true for cgroup2.
    pub v2: bool,
    /// v1: the controllers of the hierarchy (from the super options); v2: the
    /// contents of `cgroup.controllers`.
    pub controllers: Vec<String>,
}

/// Parses mountinfo text into cgroup mounts.
pub fn parse_mountinfo(text: &str) -> Vec<CgroupMount> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        if l.len() < 5 || r.len() < 3 {
            continue;
        }
        let path = PathBuf::from(unescape_mount(l[4]));
        match r[0] {
            "cgroup2" => {
                let controllers = fs::read_to_string(path.join("cgroup.controllers"))
                    .unwrap_or_default()
                    .split_whitespace()
                    .map(String::from)
                    .collect();
                out.push(CgroupMount {
                    path,
                    v2: true,
                    controllers,
                });
            }
            "cgroup" => {
                let controllers = r[2]
                    .split(',')
                    .filter(|o| {
                        ![
                            "rw",
                            "ro",
                            "relatime",
                            "noexec",
                            "nosuid",
                            "nodev",
                            "clone_children",
                        ]
                        .contains(o)
                            && !o.starts_with("release_agent")
                    })
                    .map(String::from)
                    .collect();
                out.push(CgroupMount {
                    path,
                    v2: false,
                    controllers,
                });
            }
            _ => {}
        }
    }
    out
}

fn unescape_mount(s: &str) -> String {
    s.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

/// The cgroup mounts of this process's mount namespace.
pub fn cgroup_mounts() -> Vec<CgroupMount> {
    parse_mountinfo(&fs::read_to_string("/proc/self/mountinfo").unwrap_or_default())
}

/// The v1 hierarchy carrying `controller`.
pub fn v1_mount(controller: &str) -> Option<PathBuf> {
    cgroup_mounts()
        .into_iter()
        .find(|m| !m.v2 && m.controllers.iter().any(|c| c == controller))
        .map(|m| m.path)
}

// ---------------------------------------------------------------- helpers

pub(crate) fn write_file(path: &Path, s: &str) -> Result<()> {
    fs::write(path, s).map_err(|e| RuntimeError::path("write", path, e))
}

/// Writes to an existing file only (never creates one), ignoring errors.
pub(crate) fn write_existing(path: &Path, s: &str) {
    if let Ok(mut f) = OpenOptions::new().write(true).open(path) {
        let _ = io::Write::write_all(&mut f, s.as_bytes());
    }
}

fn read_pids(path: &Path) -> Result<Vec<i32>> {
    let s = fs::read_to_string(path).map_err(|e| RuntimeError::path("read", path, e))?;
    Ok(s.split_whitespace()
        .filter_map(|t| t.parse().ok())
        .collect())
}

fn open_rw(path: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| RuntimeError::path("open", path, e))
}

fn pwrite(f: &File, path: &Path, s: &str) -> Result<()> {
    f.write_at(s.as_bytes(), 0)
        .map(|_| ())
        .map_err(|e| RuntimeError::path("write", path, e))
}

/// Sleeps 20 µs, 40 µs, … up to 1 ms (the k-th call of a wait loop).
fn nap(k: &mut u32) {
    let us = (20u64 << (*k).min(6)).min(1000);
    *k += 1;
    std::thread::sleep(Duration::from_micros(us));
}

fn pread(f: &File, buf: &mut [u8]) -> io::Result<usize> {
    f.read_at(buf, 0)
}

/// `<mount>/parsched.<owner>`, created if missing.
fn make_root(mount: &Path, owner: &str) -> Result<PathBuf> {
    let root = mount.join(format!("{ROOT_PREFIX}{owner}"));
    match fs::create_dir(&root) {
        Ok(()) => Ok(root),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(root),
        Err(e) => Err(RuntimeError::path("create cgroup", &root, e)),
    }
}

/// Moves every process of `dir` (and its subgroups) to `to_procs` and removes
/// the directories bottom-up. Thawing is the caller's job.
pub(crate) fn release_tree(dir: &Path, to_procs: &Path) {
    if let Ok(rd) = fs::read_dir(dir) {
        for e in rd.filter_map(|e| e.ok()) {
            if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                release_tree(&e.path(), to_procs);
            }
        }
    }
    for _ in 0..50 {
        for pid in read_pids(&dir.join("cgroup.procs")).unwrap_or_default() {
            write_existing(to_procs, &pid.to_string());
        }
        match fs::remove_dir(dir) {
            Ok(()) => return,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return,
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
}

// ---------------------------------------------------------------- cgroup v2

struct V2Group {
    dir: PathBuf,
    freeze: File,
    events: File,
}

/// The cgroup v2 freezer.
pub struct Cgroup2 {
    mount: PathBuf,
    root: PathBuf,
    groups: BTreeMap<String, V2Group>,
}

impl Cgroup2 {
    /// Uses the cgroup2 mount at `mount`; the root is `parsched.<owner>`.
    /// Fails with [`RuntimeError::Unsupported`] when groups there have no
    /// `cgroup.freeze` (kernels before 5.2).
    pub fn new(mount: &Path, owner: &str) -> Result<Cgroup2> {
        let root = make_root(mount, owner)?;
        if !root.join("cgroup.freeze").exists() {
            let _ = fs::remove_dir(&root);
            return Err(RuntimeError::Unsupported(format!(
                "{} has no cgroup.freeze (the cgroup v2 freezer needs Linux >= 5.2)",
                mount.display()
            )));
        }
        Ok(Cgroup2 {
            mount: mount.to_path_buf(),
            root,
            groups: BTreeMap::new(),
        })
    }

    /// The first cgroup2 mount where a freezer group can be created.
    pub fn detect(owner: &str) -> Result<Cgroup2> {
        let mut last = RuntimeError::Unsupported("no cgroup2 mount".into());
        for m in cgroup_mounts().into_iter().filter(|m| m.v2) {
            match Cgroup2::new(&m.path, owner) {
                Ok(c) => return Ok(c),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    pub fn mount(&self) -> &Path {
        &self.mount
    }

    /// The directory of a group.
    pub fn dir(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    fn group(&self, name: &str) -> Result<&V2Group> {
        self.groups
            .get(name)
            .ok_or_else(|| RuntimeError::Unsupported(format!("no group {name}")))
    }

    fn wait_frozen(&self, name: &str, want: bool) -> Result<()> {
        let g = self.group(name)?;
        let want_line = if want { "frozen 1" } else { "frozen 0" };
        let start = Instant::now();
        let mut buf = [0u8; 256];
        let mut k = 0u32;
        loop {
            let n = pread(&g.events, &mut buf)
                .map_err(|e| RuntimeError::path("read", &g.dir.join("cgroup.events"), e))?;
            let s = std::str::from_utf8(&buf[..n]).unwrap_or("");
            if s.lines().any(|l| l.trim() == want_line) {
                return Ok(());
            }
            if start.elapsed() > FREEZE_TIMEOUT {
                return Err(RuntimeError::Timeout(format!(
                    "{}: cgroup.events did not reach '{want_line}' within {FREEZE_TIMEOUT:?}",
                    g.dir.display()
                )));
            }
            // cgroup.events does signal changes with POLLPRI, but the kernel
            // rate-limits those notifications to one per 10 ms: re-read after
            // short, growing sleeps instead (sleeping, not spinning, lets the
            // tasks reach the freezer even when the controller is real-time).
            nap(&mut k);
        }
    }
}

impl Freezer for Cgroup2 {
    fn kind(&self) -> BackendKind {
        BackendKind::Cgroup2
    }
    fn create(&mut self, name: &str) -> Result<()> {
        let dir = self.root.join(name);
        match fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(RuntimeError::path("create cgroup", &dir, e)),
        }
        let freeze = open_rw(&dir.join("cgroup.freeze"))?;
        let ev = dir.join("cgroup.events");
        let events = File::open(&ev).map_err(|e| RuntimeError::path("open", &ev, e))?;
        self.groups.insert(
            name.to_string(),
            V2Group {
                dir,
                freeze,
                events,
            },
        );
        Ok(())
    }
    fn join_files(&self, name: &str) -> Vec<PathBuf> {
        vec![self.root.join(name).join("cgroup.procs")]
    }
    fn add_pid(&mut self, name: &str, pid: i32) -> Result<()> {
        write_file(
            &self.group(name)?.dir.join("cgroup.procs"),
            &pid.to_string(),
        )
    }
    fn request_freeze(&mut self, name: &str) -> Result<()> {
        let g = self.group(name)?;
        pwrite(&g.freeze, &g.dir, "1")
    }
    fn confirm_frozen(&mut self, name: &str) -> Result<()> {
        self.wait_frozen(name, true)
    }
    fn thaw(&mut self, name: &str) -> Result<()> {
        let g = self.group(name)?;
        pwrite(&g.freeze, &g.dir, "0")?;
        self.wait_frozen(name, false)
    }
    fn is_frozen(&self, name: &str) -> Result<bool> {
        let g = self.group(name)?;
        let mut buf = [0u8; 256];
        let n = pread(&g.events, &mut buf)
            .map_err(|e| RuntimeError::path("read", &g.dir.join("cgroup.events"), e))?;
        Ok(std::str::from_utf8(&buf[..n])
            .unwrap_or("")
            .lines()
            .any(|l| l.trim() == "frozen 1"))
    }
    fn pids(&self, name: &str) -> Result<Vec<i32>> {
        read_pids(&self.group(name)?.dir.join("cgroup.procs"))
    }
    fn cpu_usage(&self, name: &str) -> Option<(f64, f64)> {
        let s = fs::read_to_string(self.group(name).ok()?.dir.join("cpu.stat")).ok()?;
        let get = |k: &str| -> Option<f64> {
            let v: f64 = s
                .lines()
                .find_map(|l| l.strip_prefix(k)?.trim().parse().ok())?;
            Some(v / 1e6)
        };
        Some((get("user_usec")?, get("system_usec")?))
    }
    fn kill(&mut self, name: &str) -> Result<()> {
        let dir = self.group(name)?.dir.clone();
        let k = dir.join("cgroup.kill");
        if k.exists() {
            return write_file(&k, "1");
        }
        for pid in self.pids(name)? {
            // SAFETY: plain syscall.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        Ok(())
    }
    fn remove(&mut self, name: &str) -> Result<()> {
        let Some(g) = self.groups.remove(name) else {
            return Ok(());
        };
        let _ = pwrite(&g.freeze, &g.dir, "0");
        release_tree(&g.dir, &self.mount.join("cgroup.procs"));
        if g.dir.exists() {
            return Err(RuntimeError::Io {
                what: format!("remove cgroup {}", g.dir.display()),
                source: io::Error::other("still populated"),
            });
        }
        Ok(())
    }
    fn roots(&self) -> Vec<PathBuf> {
        vec![self.root.clone()]
    }
    fn cleanup(&mut self) -> Result<()> {
        let names: Vec<String> = self.groups.keys().cloned().collect();
        for n in names {
            let _ = self.remove(&n);
        }
        thaw_tree(&self.root);
        release_tree(&self.root, &self.mount.join("cgroup.procs"));
        Ok(())
    }
}

impl Drop for Cgroup2 {
    fn drop(&mut self) {
        let _ = self.cleanup();
    }
}

/// Thaws every group under `dir` (both freezer interfaces), best effort.
pub(crate) fn thaw_tree(dir: &Path) {
    write_existing(&dir.join("cgroup.freeze"), "0");
    write_existing(&dir.join("freezer.state"), "THAWED");
    if let Ok(rd) = fs::read_dir(dir) {
        for e in rd.filter_map(|e| e.ok()) {
            if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                thaw_tree(&e.path());
            }
        }
    }
}

// ---------------------------------------------------------------- cgroup v1

struct V1Group {
    dir: PathBuf,
    state: File,
}

/// The cgroup v1 freezer.
pub struct Cgroup1 {
    mount: PathBuf,
    root: PathBuf,
    groups: BTreeMap<String, V1Group>,
}

/// The permanently frozen empty group of [`Cgroup1`].
pub const KEEP_FROZEN: &str = "keepfrozen";

impl Cgroup1 {
    /// Uses the v1 freezer hierarchy at `mount`. With `keep_frozen`, creates
    /// an empty group kept FROZEN for the backend's lifetime, so the kernel's
    /// freezer static key stays enabled and each freeze avoids toggling it.
    pub fn new(mount: &Path, owner: &str, keep_frozen: bool) -> Result<Cgroup1> {
        if !mount.join("freezer.state").exists() && !mount.join("tasks").exists() {
            return Err(RuntimeError::Unsupported(format!(
                "{} is not a cgroup v1 freezer hierarchy",
                mount.display()
            )));
        }
        let root = make_root(mount, owner)?;
        let mut c = Cgroup1 {
            mount: mount.to_path_buf(),
            root,
            groups: BTreeMap::new(),
        };
        if keep_frozen {
            c.create(KEEP_FROZEN)?;
            c.freeze(KEEP_FROZEN)?;
        }
        Ok(c)
    }

    pub fn detect(owner: &str) -> Result<Cgroup1> {
        let m = v1_mount("freezer").ok_or_else(|| {
            RuntimeError::Unsupported("no cgroup v1 freezer hierarchy is mounted".into())
        })?;
        Cgroup1::new(&m, owner, true)
    }

    fn group(&self, name: &str) -> Result<&V1Group> {
        self.groups
            .get(name)
            .ok_or_else(|| RuntimeError::Unsupported(format!("no group {name}")))
    }

    fn state(&self, name: &str) -> Result<String> {
        let g = self.group(name)?;
        let mut buf = [0u8; 64];
        let n = pread(&g.state, &mut buf)
            .map_err(|e| RuntimeError::path("read", &g.dir.join("freezer.state"), e))?;
        Ok(String::from_utf8_lossy(&buf[..n]).trim().to_string())
    }
}

impl Freezer for Cgroup1 {
    fn kind(&self) -> BackendKind {
        BackendKind::Cgroup1
    }
    fn create(&mut self, name: &str) -> Result<()> {
        let dir = self.root.join(name);
        match fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(RuntimeError::path("create cgroup", &dir, e)),
        }
        let state = open_rw(&dir.join("freezer.state"))?;
        self.groups.insert(name.to_string(), V1Group { dir, state });
        Ok(())
    }
    fn join_files(&self, name: &str) -> Vec<PathBuf> {
        vec![self.root.join(name).join("cgroup.procs")]
    }
    fn add_pid(&mut self, name: &str, pid: i32) -> Result<()> {
        write_file(
            &self.group(name)?.dir.join("cgroup.procs"),
            &pid.to_string(),
        )
    }
    fn request_freeze(&mut self, name: &str) -> Result<()> {
        let g = self.group(name)?;
        pwrite(&g.state, &g.dir, "FROZEN")
    }
    fn confirm_frozen(&mut self, name: &str) -> Result<()> {
        let start = Instant::now();
        let mut k = 0u32;
        // Reading freezer.state advances FREEZING to FROZEN once every task stopped.
        loop {
            let s = self.state(name)?;
            if s == "FROZEN" {
                return Ok(());
            }
            if start.elapsed() > FREEZE_TIMEOUT {
                return Err(RuntimeError::Timeout(format!(
                    "{}: freezer.state still {s} after {FREEZE_TIMEOUT:?}",
                    self.group(name)?.dir.display()
                )));
            }
            let g = self.group(name)?;
            // Re-request (a task forked during freezing may need another pass).
            pwrite(&g.state, &g.dir, "FROZEN")?;
            nap(&mut k);
        }
    }
    fn thaw(&mut self, name: &str) -> Result<()> {
        let g = self.group(name)?;
        pwrite(&g.state, &g.dir, "THAWED")
    }
    fn is_frozen(&self, name: &str) -> Result<bool> {
        Ok(self.state(name)? != "THAWED")
    }
    fn pids(&self, name: &str) -> Result<Vec<i32>> {
        read_pids(&self.group(name)?.dir.join("cgroup.procs"))
    }
    fn kill(&mut self, name: &str) -> Result<()> {
        // Freeze so that nothing forks while we kill, then thaw to let the
        // signals be delivered.
        let _ = self.freeze(name);
        for pid in self.pids(name)? {
            // SAFETY: plain syscall.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        self.thaw(name)
    }
    fn remove(&mut self, name: &str) -> Result<()> {
        let Some(g) = self.groups.remove(name) else {
            return Ok(());
        };
        let _ = pwrite(&g.state, &g.dir, "THAWED");
        release_tree(&g.dir, &self.mount.join("cgroup.procs"));
        if g.dir.exists() {
            return Err(RuntimeError::Io {
                what: format!("remove cgroup {}", g.dir.display()),
                source: io::Error::other("still populated"),
            });
        }
        Ok(())
    }
    fn roots(&self) -> Vec<PathBuf> {
        vec![self.root.clone()]
    }
    fn cleanup(&mut self) -> Result<()> {
        let names: Vec<String> = self.groups.keys().cloned().collect();
        for n in names {
            let _ = self.remove(&n);
        }
        thaw_tree(&self.root);
        release_tree(&self.root, &self.mount.join("cgroup.procs"));
        Ok(())
    }
}

impl Drop for Cgroup1 {
    fn drop(&mut self) {
        let _ = self.cleanup();
    }
}

// ---------------------------------------------------------------- signals

/// SIGSTOP/SIGCONT to each job's process group (the job leader calls
/// `setpgid(0, 0)` before exec, so its pid is the group id). `freeze` waits
/// until every thread of every registered pid shows state `T`. Unlike the
/// freezers, a SIGSTOP *request* does not stop the other threads at once (the
/// group stop starts only when one thread handles the signal), so the
/// controller always confirms with this backend.
#[derive(Default)]
pub struct Signal {
    groups: BTreeMap<String, (Vec<i32>, bool)>,
}

impl Signal {
    pub fn new() -> Signal {
        Signal::default()
    }

    fn get(&self, name: &str) -> Result<&(Vec<i32>, bool)> {
        self.groups
            .get(name)
            .ok_or_else(|| RuntimeError::Unsupported(format!("no group {name}")))
    }

    fn signal_all(&self, name: &str, sig: i32) -> Result<()> {
        for &pid in &self.get(name)?.0 {
            // SAFETY: plain syscalls. The pid's process group if it leads one,
            // else the pid alone.
            unsafe {
                if libc::killpg(pid, sig) != 0 {
                    libc::kill(pid, sig);
                }
            }
        }
        Ok(())
    }
}

/// The state letter of one thread (`/proc/PID/task/TID/stat`).
pub fn task_state(pid: i32, tid: i32) -> Option<char> {
    let s = fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
    let after = &s[s.rfind(')')? + 2..];
    after.chars().next()
}

/// The state letter of `/proc/PID/stat` (`R`, `S`, `T`, `Z`, …); `None` if gone.
pub fn proc_state(pid: i32) -> Option<char> {
    let s = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &s[s.rfind(')')? + 2..];
    after.chars().next()
}

impl Freezer for Signal {
    fn kind(&self) -> BackendKind {
        BackendKind::Signal
    }
    fn create(&mut self, name: &str) -> Result<()> {
        self.groups.insert(name.to_string(), (Vec::new(), false));
        Ok(())
    }
    fn join_files(&self, _name: &str) -> Vec<PathBuf> {
        Vec::new()
    }
    fn add_pid(&mut self, name: &str, pid: i32) -> Result<()> {
        let g = self
            .groups
            .get_mut(name)
            .ok_or_else(|| RuntimeError::Unsupported(format!("no group {name}")))?;
        if !g.0.contains(&pid) {
            g.0.push(pid);
        }
        Ok(())
    }
    fn request_freeze(&mut self, name: &str) -> Result<()> {
        self.signal_all(name, libc::SIGSTOP)?;
        self.groups.get_mut(name).expect("checked").1 = true;
        Ok(())
    }
    fn confirm_frozen(&mut self, name: &str) -> Result<()> {
        let start = Instant::now();
        let mut k = 0u32;
        for &pid in &self.get(name)?.0 {
            // Every thread must have stopped (group stop reaches the threads
            // one by one). Sleep between checks: a real-time controller
            // spinning here would keep them from running to the stop.
            for tid in crate::procfs::tasks(pid) {
                while let Some(st) = task_state(pid, tid) {
                    if matches!(st, 'T' | 't' | 'Z' | 'X') || start.elapsed() > FREEZE_TIMEOUT {
                        break;
                    }
                    nap(&mut k);
                }
            }
        }
        Ok(())
    }
    fn thaw(&mut self, name: &str) -> Result<()> {
        self.signal_all(name, libc::SIGCONT)?;
        self.groups.get_mut(name).expect("checked").1 = false;
        Ok(())
    }
    fn is_frozen(&self, name: &str) -> Result<bool> {
        Ok(self.get(name)?.1)
    }
    fn pids(&self, name: &str) -> Result<Vec<i32>> {
        Ok(self
            .get(name)?
            .0
            .iter()
            .copied()
            .filter(|&p| proc_state(p).is_some_and(|s| s != 'Z'))
            .collect())
    }
    fn kill(&mut self, name: &str) -> Result<()> {
        self.signal_all(name, libc::SIGKILL)?;
        self.signal_all(name, libc::SIGCONT)
    }
    fn remove(&mut self, name: &str) -> Result<()> {
        if self.groups.contains_key(name) {
            let _ = self.signal_all(name, libc::SIGCONT);
            self.groups.remove(name);
        }
        Ok(())
    }
    fn roots(&self) -> Vec<PathBuf> {
        Vec::new()
    }
    fn cleanup(&mut self) -> Result<()> {
        let names: Vec<String> = self.groups.keys().cloned().collect();
        for n in names {
            let _ = self.remove(&n);
        }
        Ok(())
    }
}

impl Drop for Signal {
    fn drop(&mut self) {
        let _ = self.cleanup();
    }
}

// ---------------------------------------------------------------- mock

/// One call recorded by [`Mock`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MockCall {
    Create(String),
    AddPid(String, i32),
    Freeze(String),
    Thaw(String),
    Kill(String),
    Remove(String),
}

/// The shared log of a [`Mock`].
pub type MockLog = Arc<Mutex<Vec<MockCall>>>;

/// Records calls and keeps a frozen flag per group; touches no process except
/// that `kill` SIGKILLs the registered pids (so tests never leak processes).
#[derive(Default)]
pub struct Mock {
    log: MockLog,
    groups: BTreeMap<String, (Vec<i32>, bool)>,
}

impl Mock {
    pub fn new() -> Mock {
        Mock::default()
    }

    /// A handle on the call log, readable after the mock has been moved into
    /// a controller.
    pub fn log(&self) -> MockLog {
        self.log.clone()
    }

    fn rec(&self, c: MockCall) {
        self.log.lock().expect("mock log").push(c);
    }

    fn get_mut(&mut self, name: &str) -> Result<&mut (Vec<i32>, bool)> {
        self.groups
            .get_mut(name)
            .ok_or_else(|| RuntimeError::Unsupported(format!("no group {name}")))
    }
}

impl Freezer for Mock {
    fn kind(&self) -> BackendKind {
        BackendKind::Mock
    }
    fn create(&mut self, name: &str) -> Result<()> {
        self.rec(MockCall::Create(name.into()));
        self.groups.insert(name.into(), (Vec::new(), false));
        Ok(())
    }
    fn join_files(&self, _name: &str) -> Vec<PathBuf> {
        Vec::new()
    }
    fn add_pid(&mut self, name: &str, pid: i32) -> Result<()> {
        self.get_mut(name)?.0.push(pid);
        self.rec(MockCall::AddPid(name.into(), pid));
        Ok(())
    }
    fn request_freeze(&mut self, name: &str) -> Result<()> {
        self.get_mut(name)?.1 = true;
        self.rec(MockCall::Freeze(name.into()));
        Ok(())
    }
    fn confirm_frozen(&mut self, name: &str) -> Result<()> {
        self.get_mut(name).map(|_| ())
    }
    fn thaw(&mut self, name: &str) -> Result<()> {
        self.get_mut(name)?.1 = false;
        self.rec(MockCall::Thaw(name.into()));
        Ok(())
    }
    fn is_frozen(&self, name: &str) -> Result<bool> {
        self.groups
            .get(name)
            .map(|g| g.1)
            .ok_or_else(|| RuntimeError::Unsupported(format!("no group {name}")))
    }
    fn pids(&self, name: &str) -> Result<Vec<i32>> {
        self.groups
            .get(name)
            .map(|g| g.0.clone())
            .ok_or_else(|| RuntimeError::Unsupported(format!("no group {name}")))
    }
    fn kill(&mut self, name: &str) -> Result<()> {
        for &pid in &self.get_mut(name)?.0 {
            // SAFETY: plain syscall.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        self.rec(MockCall::Kill(name.into()));
        Ok(())
    }
    fn remove(&mut self, name: &str) -> Result<()> {
        self.rec(MockCall::Remove(name.into()));
        self.groups.remove(name);
        Ok(())
    }
    fn roots(&self) -> Vec<PathBuf> {
        Vec::new()
    }
    fn cleanup(&mut self) -> Result<()> {
        self.groups.clear();
        Ok(())
    }
}

// ---------------------------------------------------------------- detection

/// Builds the backend asked for; `Auto` tries cgroup v2, then v1, then signals.
/// `owner` names the root directory `parsched.<owner>`: the controller's pid,
/// optionally followed by `-<n>` ([`crate::safety::owner_tag`]).
pub fn open_freezer(kind: BackendKind, owner: &str) -> Result<Box<dyn Freezer>> {
    open_freezer_explained(kind, owner).map(|(f, _)| f)
}

/// As [`open_freezer`], also saying why `Auto` passed over the cgroup
/// backends (empty when it did not).
pub fn open_freezer_explained(
    kind: BackendKind,
    owner: &str,
) -> Result<(Box<dyn Freezer>, Vec<String>)> {
    Ok(match kind {
        BackendKind::Cgroup2 => (Box::new(Cgroup2::detect(owner)?), Vec::new()),
        BackendKind::Cgroup1 => (Box::new(Cgroup1::detect(owner)?), Vec::new()),
        BackendKind::Signal => (Box::new(Signal::new()), Vec::new()),
        BackendKind::Mock => (Box::new(Mock::new()), Vec::new()),
        BackendKind::Auto => {
            let mut why = Vec::new();
            match Cgroup2::detect(owner) {
                Ok(c) => return Ok((Box::new(c), why)),
                Err(e) => why.push(format!("cgroup v2: {e}")),
            }
            match Cgroup1::detect(owner) {
                Ok(c) => return Ok((Box::new(c), why)),
                Err(e) => why.push(format!("cgroup v1: {e}")),
            }
            (Box::new(Signal::new()), why)
        }
    })
}

// ---------------------------------------------------------------- cpusets

/// Cpuset groups for processor pools: v1 `cpuset` hierarchy or v2
/// `cpuset.cpus` (needs the cpuset controller enabled on the cgroup2 mount).
/// Each job gets its own cpuset group whose CPUs are its pools' CPUs.
pub struct Cpuset {
    mount: PathBuf,
    root: PathBuf,
    v2: bool,
    groups: Vec<String>,
}

impl Cpuset {
    /// Prefers the v1 cpuset hierarchy on hybrid hosts (the v2 mount there has
    /// no controllers), else a v2 mount offering `cpuset`.
    pub fn detect(owner: &str) -> Result<Cpuset> {
        if let Some(m) = v1_mount("cpuset") {
            return Cpuset::new(&m, owner, false);
        }
        for m in cgroup_mounts()
            .into_iter()
            .filter(|m| m.v2 && m.controllers.iter().any(|c| c == "cpuset"))
        {
            if let Ok(c) = Cpuset::new(&m.path, owner, true) {
                return Ok(c);
            }
        }
        Err(RuntimeError::Unsupported(
            "no cpuset controller (neither a v1 cpuset hierarchy nor cpuset on a cgroup2 mount)"
                .into(),
        ))
    }

    pub fn new(mount: &Path, owner: &str, v2: bool) -> Result<Cpuset> {
        let root = make_root(mount, owner)?;
        if v2 {
            write_file(&mount.join("cgroup.subtree_control"), "+cpuset")?;
            write_file(&root.join("cgroup.subtree_control"), "+cpuset")?;
        } else {
            // A new v1 cpuset starts with no CPUs and no memory nodes.
            for f in ["cpuset.cpus", "cpuset.mems"] {
                let v = fs::read_to_string(mount.join(f))
                    .map_err(|e| RuntimeError::path("read", &mount.join(f), e))?;
                write_file(&root.join(f), v.trim())?;
            }
        }
        Ok(Cpuset {
            mount: mount.to_path_buf(),
            root,
            v2,
            groups: Vec::new(),
        })
    }

    pub fn is_v2(&self) -> bool {
        self.v2
    }

    pub fn dir(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// Creates (or updates) group `name` restricted to `cpus`.
    pub fn create(&mut self, name: &str, cpus: &[u32]) -> Result<()> {
        let dir = self.root.join(name);
        match fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(RuntimeError::path("create cgroup", &dir, e)),
        }
        if !self.v2 {
            let mems = fs::read_to_string(self.root.join("cpuset.mems")).unwrap_or_default();
            write_file(&dir.join("cpuset.mems"), mems.trim())?;
        }
        self.set_cpus(name, cpus)?;
        if !self.groups.iter().any(|g| g == name) {
            self.groups.push(name.to_string());
        }
        Ok(())
    }

    pub fn set_cpus(&self, name: &str, cpus: &[u32]) -> Result<()> {
        write_file(
            &self.root.join(name).join("cpuset.cpus"),
            &format_cpu_list(cpus),
        )
    }

    /// The CPUs the group allows (`cpuset.cpus`, or `cpuset.cpus.effective`).
    pub fn cpus(&self, name: &str) -> Result<Vec<u32>> {
        let p = self.root.join(name).join("cpuset.cpus");
        let s = fs::read_to_string(&p).map_err(|e| RuntimeError::path("read", &p, e))?;
        crate::topology::parse_cpu_list(&s)
    }

    pub fn join_files(&self, name: &str) -> Vec<PathBuf> {
        vec![self.root.join(name).join("cgroup.procs")]
    }

    pub fn add_pid(&self, name: &str, pid: i32) -> Result<()> {
        write_file(&self.root.join(name).join("cgroup.procs"), &pid.to_string())
    }

    pub fn remove(&mut self, name: &str) -> Result<()> {
        release_tree(&self.root.join(name), &self.mount.join("cgroup.procs"));
        self.groups.retain(|g| g != name);
        Ok(())
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn cleanup(&mut self) {
        for g in std::mem::take(&mut self.groups) {
            release_tree(&self.root.join(&g), &self.mount.join("cgroup.procs"));
        }
        release_tree(&self.root, &self.mount.join("cgroup.procs"));
    }
}

impl Drop for Cpuset {
    fn drop(&mut self) {
        self.cleanup();
    }
}

/// Pins one thread (tid) to `cpus` with `sched_setaffinity`.
pub fn set_affinity(tid: i32, cpus: &[u32]) -> Result<()> {
    // SAFETY: cpu_set_t is plain data.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c as usize, &mut set);
        }
        if libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(RuntimeError::last_os(format!("sched_setaffinity({tid})")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_finds_v1_and_v2() {
        let text = "\
30 25 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755
31 30 0:27 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
35 30 0:31 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
36 30 0:32 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
37 30 0:33 / /sys/fs/cgroup/my\\040dir rw - cgroup cgroup rw,cpuset,clone_children
";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 4);
        assert!(m[0].v2);
        assert_eq!(m[0].path, PathBuf::from("/sys/fs/cgroup/unified"));
        assert_eq!(m[1].controllers, vec!["freezer"]);
        assert_eq!(m[2].controllers, vec!["cpu", "cpuacct"]);
        assert_eq!(m[3].path, PathBuf::from("/sys/fs/cgroup/my dir"));
        assert_eq!(m[3].controllers, vec!["cpuset"]);
    }

    #[test]
    fn mock_records_calls_in_order() {
        let mut m = Mock::new();
        let log = m.log();
        m.create("a").unwrap();
        m.freeze("a").unwrap();
        assert!(m.is_frozen("a").unwrap());
        m.thaw("a").unwrap();
        assert!(!m.is_frozen("a").unwrap());
        m.remove("a").unwrap();
        assert!(m.freeze("a").is_err());
        assert_eq!(
            *log.lock().unwrap(),
            vec![
                MockCall::Create("a".into()),
                MockCall::Freeze("a".into()),
                MockCall::Thaw("a".into()),
                MockCall::Remove("a".into()),
            ]
        );
    }

    #[test]
    fn proc_state_of_self_is_running() {
        // SAFETY: getpid has no preconditions.
        let me = unsafe { libc::getpid() };
        assert!(matches!(proc_state(me), Some('R' | 'S')));
        assert_eq!(proc_state(i32::MAX), None);
    }
}
