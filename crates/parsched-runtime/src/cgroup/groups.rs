//! The group bookkeeping both cgroup freezers share: one directory per group
//! under the backend's root, its open control files, joining, listing,
//! killing by pid and removal. Each backend says only which files a group
//! keeps open ([`GroupFiles::open`]) and how a removed group is reset
//! ([`GroupFiles::reset`]).

use super::{cleanup_root, read_pids, remove_group_dir, write_file, Freezer};
use crate::error::{Result, RuntimeError};
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The open control files of one group of a backend.
pub(super) trait GroupFiles: Sized {
    /// Opens the control files of the (existing) group directory `dir`.
    fn open(dir: PathBuf) -> Result<Self>;
    /// The group's directory.
    fn dir(&self) -> &Path;
    /// Leaves the group thawed before its directory is removed.
    fn reset(&self) -> Result<()>;
}

/// The groups of one backend under `<mount>/parsched.<owner>`.
pub(super) struct Groups<G> {
    pub(super) mount: PathBuf,
    pub(super) root: PathBuf,
    map: BTreeMap<String, G>,
}

impl<G: GroupFiles> Groups<G> {
    pub(super) fn new(mount: &Path, root: PathBuf) -> Groups<G> {
        Groups {
            mount: mount.to_path_buf(),
            root,
            map: BTreeMap::new(),
        }
    }

    /// Creates (or reuses) the group's directory and opens its files.
    pub(super) fn create(&mut self, name: &str) -> Result<()> {
        let dir = self.root.join(name);
        match fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(RuntimeError::path("create cgroup", &dir, e)),
        }
        self.map.insert(name.to_string(), G::open(dir)?);
        Ok(())
    }

    pub(super) fn get(&self, name: &str) -> Result<&G> {
        self.map
            .get(name)
            .ok_or_else(|| RuntimeError::Unsupported(format!("no group {name}")))
    }

    /// The files a job writes `0` into to join the group.
    pub(super) fn join_files(&self, name: &str) -> Vec<PathBuf> {
        vec![self.root.join(name).join("cgroup.procs")]
    }

    pub(super) fn add_pid(&self, name: &str, pid: i32) -> Result<()> {
        write_file(
            &self.get(name)?.dir().join("cgroup.procs"),
            &pid.to_string(),
        )
    }

    pub(super) fn pids(&self, name: &str) -> Result<Vec<i32>> {
        read_pids(&self.get(name)?.dir().join("cgroup.procs"))
    }

    /// SIGKILLs every process of the group.
    pub(super) fn kill_pids(&self, name: &str) -> Result<()> {
        for pid in self.pids(name)? {
            // SAFETY: plain syscall.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        Ok(())
    }

    /// Forgets the group, resets it and removes its directory (a group not
    /// known is no error).
    pub(super) fn remove(&mut self, name: &str) -> Result<()> {
        let Some(g) = self.map.remove(name) else {
            return Ok(());
        };
        let _ = g.reset();
        remove_group_dir(g.dir(), &self.mount)
    }

    pub(super) fn roots(&self) -> Vec<PathBuf> {
        vec![self.root.clone()]
    }
}

/// The end of a backend's life: every group of `groups(f)` removed, the
/// root thawed and emptied (see [`cleanup_root`]).
pub(super) fn cleanup<F, G>(f: &mut F, groups: fn(&F) -> &Groups<G>) -> Result<()>
where
    F: Freezer,
    G: GroupFiles,
{
    let g = groups(f);
    let names: Vec<String> = g.map.keys().cloned().collect();
    let (root, mount) = (g.root.clone(), g.mount.clone());
    cleanup_root(f, names, &root, &mount);
    Ok(())
}
