//! Confining jobs to processors: [`Cpuset`] groups for pools and
//! [`set_affinity`] for single threads.

use super::{cgroup_mounts, make_root, release_tree, v1_mount, write_file};
use crate::error::{Result, RuntimeError};
use crate::topology::format_cpu_list;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

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
