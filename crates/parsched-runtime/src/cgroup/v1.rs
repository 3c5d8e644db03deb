//! cgroup v1 freezer: `freezer.state` FROZEN / THAWED, with one empty group
//! kept frozen for good (the kernel's freezer static key stays on).

use super::groups::{self, GroupFiles, Groups};
use super::{
    make_root, nap, open_rw, pread, pwrite, v1_mount, BackendKind, Freezer, FREEZE_TIMEOUT,
};
use crate::error::{Result, RuntimeError};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Instant;

struct V1Group {
    dir: PathBuf,
    state: File,
}

impl GroupFiles for V1Group {
    fn open(dir: PathBuf) -> Result<V1Group> {
        let state = open_rw(&dir.join("freezer.state"))?;
        Ok(V1Group { dir, state })
    }
    fn dir(&self) -> &Path {
        &self.dir
    }
    fn reset(&self) -> Result<()> {
        pwrite(&self.state, &self.dir, "THAWED")
    }
}

/// The cgroup v1 freezer.
pub struct Cgroup1 {
    groups: Groups<V1Group>,
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
            groups: Groups::new(mount, root),
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
        self.groups.get(name)
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
        self.groups.pids(name)
    }
    fn kill(&mut self, name: &str) -> Result<()> {
        // Freeze so that nothing forks while we kill, then thaw to let the
        // signals be delivered.
        let _ = self.freeze(name);
        self.groups.kill_pids(name)?;
        self.thaw(name)
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

impl Drop for Cgroup1 {
    fn drop(&mut self) {
        let _ = self.cleanup();
    }
}
