//! cgroup v2 freezer: `cgroup.freeze`, confirmed by `frozen 1` in
//! `cgroup.events`; `cgroup.kill`; CPU time from `cpu.stat`.

use super::groups::{self, GroupFiles, Groups};
use super::{
    cgroup_mounts, make_root, nap, open_rw, pread, pwrite, write_file, BackendKind, Freezer,
    FREEZE_TIMEOUT,
};
use crate::error::{Result, RuntimeError};
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::time::Instant;

struct V2Group {
    dir: PathBuf,
    freeze: File,
    events: File,
}

impl GroupFiles for V2Group {
    fn open(dir: PathBuf) -> Result<V2Group> {
        let freeze = open_rw(&dir.join("cgroup.freeze"))?;
        let ev = dir.join("cgroup.events");
        let events = File::open(&ev).map_err(|e| RuntimeError::path("open", &ev, e))?;
        Ok(V2Group {
            dir,
            freeze,
            events,
        })
    }
    fn dir(&self) -> &Path {
        &self.dir
    }
    fn reset(&self) -> Result<()> {
        pwrite(&self.freeze, &self.dir, "0")
    }
}

/// The cgroup v2 freezer.
pub struct Cgroup2 {
    groups: Groups<V2Group>,
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
            groups: Groups::new(mount, root),
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
        &self.groups.mount
    }

    /// The directory of a group.
    pub fn dir(&self, name: &str) -> PathBuf {
        self.groups.root.join(name)
    }

    fn group(&self, name: &str) -> Result<&V2Group> {
        self.groups.get(name)
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
        self.groups.create(name)
    }
    fn join_files(&self, name: &str) -> Vec<PathBuf> {
        self.groups.join_files(name)
    }
    fn add_pid(&mut self, name: &str, pid: i32) -> Result<()> {
        self.groups.add_pid(name, pid)
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
        self.groups.pids(name)
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
        self.groups.kill_pids(name)
    }
    fn remove(&mut self, name: &str) -> Result<()> {
        self.groups.remove(name)
    }
    fn roots(&self) -> Vec<PathBuf> {
        self.groups.roots()
    }
    fn cleanup(&mut self) -> Result<()> {
        groups::cleanup(self, |c| &c.groups)
    }
}

impl Drop for Cgroup2 {
    fn drop(&mut self) {
        let _ = self.cleanup();
    }
}
