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
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | the [`Freezer`] trait, mount parsing, shared file helpers, [`open_freezer`] |
//! | `v2.rs`, `v1.rs` | the cgroup v2 and v1 freezers |
//! | `groups.rs` | the group bookkeeping both share |
//! | `signal.rs` | SIGSTOP/SIGCONT |
//! | `mock.rs` | the recording mock |
//! | `cpuset.rs` | cpusets and affinity |

use crate::error::{Result, RuntimeError};
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod cpuset;
mod groups;
mod mock;
mod signal;
mod v1;
mod v2;

pub use cpuset::{set_affinity, Cpuset};
pub use mock::{Mock, MockCall, MockLog};
pub use signal::{proc_state, task_state, Signal};
pub use v1::{Cgroup1, KEEP_FROZEN};
pub use v2::Cgroup2;

/// Prefix of the per-controller directory in every hierarchy.
pub const ROOT_PREFIX: &str = "parsched.";

/// How long a freeze or thaw may take before it is reported as an error.
pub const FREEZE_TIMEOUT: Duration = Duration::from_secs(2);

/// Which freezer backend (its names: the `choices!` below, the one place).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendKind {
    /// cgroup v2 where a cgroup2 mount offers `cgroup.freeze`, else v1, else signals.
    #[default]
    Auto,
    Cgroup2,
    Cgroup1,
    Signal,
    Mock,
}

parsched_core::choices!(BackendKind {
    Auto => "auto",
    Cgroup2 => "cgroup2",
    Cgroup1 => "cgroup1",
    Signal => "signal",
    Mock => "mock",
});

impl Serialize for BackendKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(parsched_core::schema::Choice::name(*self))
    }
}

impl<'de> Deserialize<'de> for BackendKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use parsched_core::schema::Choice;
        let name = String::deserialize(d)?;
        BackendKind::parse(&name).ok_or_else(|| {
            serde::de::Error::custom(parsched_core::ConfigError::new(
                "backend",
                format!("unknown backend {:?}", parsched_core::clip(&name, 60)),
                BackendKind::NAMES.join(", "),
            ))
        })
    }
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

/// Thaws every group under `dir` (both freezer interfaces), best effort.
/// Removes a job's group after its freeze file was reset: its processes go
/// back to the mount's root group, then the directory must be gone.
fn remove_group_dir(dir: &Path, mount: &Path) -> Result<()> {
    release_tree(dir, &mount.join("cgroup.procs"));
    if dir.exists() {
        return Err(RuntimeError::Io {
            what: format!("remove cgroup {}", dir.display()),
            source: io::Error::other("still populated"),
        });
    }
    Ok(())
}

/// The end of a backend's life: every group removed (errors ignored: the
/// root's release below catches stragglers), the tree thawed and emptied.
fn cleanup_root<F: Freezer + ?Sized>(f: &mut F, names: Vec<String>, root: &Path, mount: &Path) {
    for n in names {
        let _ = f.remove(&n);
    }
    thaw_tree(root);
    release_tree(root, &mount.join("cgroup.procs"));
}

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
}
