//! cgroup v1 freezer: `freezer.state` FROZEN / THAWED, with one empty group
//! kept frozen for good (the kernel's freezer static key stays on).

use super::{
    cleanup_root, make_root, nap, open_rw, pread, pwrite, read_pids, remove_group_dir, v1_mount,
    write_file, BackendKind, Freezer, FREEZE_TIMEOUT,
};
use crate::error::{Result, RuntimeError};
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;

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
        remove_group_dir(&g.dir, &self.mount)
    }
    fn roots(&self) -> Vec<PathBuf> {
        vec![self.root.clone()]
    }
    fn cleanup(&mut self) -> Result<()> {
        let names: Vec<String> = self.groups.keys().cloned().collect();
        let (root, mount) = (self.root.clone(), self.mount.clone());
        cleanup_root(self, names, &root, &mount);
        Ok(())
    }
}

impl Drop for Cgroup1 {
    fn drop(&mut self) {
        let _ = self.cleanup();
    }
}
