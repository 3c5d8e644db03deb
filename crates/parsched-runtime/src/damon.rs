//! The kernel's DAMON monitors: which run, and whether one clears the
//! accessed bits of a process's pages.
//!
//! The runtime measures working sets from page accessed bits
//! ([`crate::procfs::clear_refs_flush`], then `Referenced:` in smaps). DAMON
//! samples the same bits and clears them: a monitor with `paddr` operations
//! (physical address space; DAMON-based proactive reclaim, LRU sorting, the
//! `damon_stat` module) clears them on every process's pages, one with
//! `vaddr` / `fvaddr` operations on its target processes' pages. A page
//! touched after `clear_refs` whose bit DAMON cleared again before the
//! reading does not show as referenced: the working set reads low (8 MB
//! touched read as 6.8 MB on a machine running a `paddr` kdamond with 500 ms
//! sampling). [`status`] says which monitors run, and
//! [`DamonStatus::disturbs`] whether one of them touches a given process.
//!
//! Sources, all read-only (nothing here starts, stops or reconfigures a
//! monitor): the sysfs admin interface
//! (`/sys/kernel/mm/damon/admin/kdamonds/N/`: `state`, `pid`,
//! `contexts/M/operations`, `contexts/M/avail_operations`,
//! `contexts/M/targets/K/pid_target`) and the DAMON modules' parameters
//! (`/sys/module/damon_{reclaim,lru_sort,stat}/parameters/enabled`, their
//! `kdamond_pid`), which run kdamonds the admin interface does not list.

use serde::Serialize;
use std::fs;
use std::path::Path;

/// Where the admin interface lives.
pub const ADMIN: &str = "/sys/kernel/mm/damon/admin";
/// Where the DAMON modules' parameters live.
pub const MODULES: &str = "/sys/module";
/// The DAMON modules that run their own kdamond, all on physical addresses.
const PADDR_MODULES: [&str; 3] = ["damon_reclaim", "damon_lru_sort", "damon_stat"];

/// One running DAMON monitor (one context of a kdamond, or a module's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Monitor {
    /// `kdamond N` (admin interface) or the module's name.
    pub name: String,
    /// The kdamond thread's pid, when known.
    pub pid: Option<i32>,
    /// The context's operations: `paddr`, `vaddr`, `fvaddr` (or what the
    /// kernel names).
    pub ops: String,
    /// The monitored processes (`vaddr`, `fvaddr`); empty for `paddr`.
    pub targets: Vec<i32>,
}

impl Monitor {
    /// Whether this monitor clears accessed bits of `pid`'s pages: a
    /// physical-address monitor clears everyone's; a virtual-address one
    /// its targets'; operations this module does not know are taken as
    /// clearing everyone's (it never claims a reading is clean when it
    /// cannot tell).
    pub fn disturbs(&self, pid: i32) -> bool {
        match self.ops.as_str() {
            "vaddr" | "fvaddr" => self.targets.contains(&pid),
            _ => true,
        }
    }

    /// One line naming it: `DAMON kdamond 0 (pid 77) with paddr operations`.
    pub fn describe(&self) -> String {
        let pid = self.pid.map_or(String::new(), |p| format!(" (pid {p})"));
        format!("DAMON {}{pid} with {} operations", self.name, self.ops)
    }
}

/// What DAMON does on this machine.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DamonStatus {
    /// The running monitors (a kdamond whose `state` is `on`, an enabled
    /// module).
    pub monitors: Vec<Monitor>,
    /// Every operations set the kernel offers (`avail_operations` of any
    /// context): `vaddr` here means DAMON could monitor a job's virtual
    /// address space.
    pub available_ops: Vec<String>,
}

impl DamonStatus {
    /// Why a working set of `pid` read from accessed bits is unreliable —
    /// `unreliable: DAMON kdamond 0 (pid 77) with paddr operations clears
    /// accessed bits` — or `None` when no running monitor touches its pages.
    pub fn disturbs(&self, pid: i32) -> Option<String> {
        let m = self.monitors.iter().find(|m| m.disturbs(pid))?;
        Some(format!("unreliable: {} clears accessed bits", m.describe()))
    }

    /// Whether the kernel offers virtual-address monitoring.
    pub fn offers_vaddr(&self) -> bool {
        self.available_ops.iter().any(|o| o == "vaddr")
    }
}

/// DAMON's state on this machine (no monitors where the kernel has no
/// DAMON or sysfs is not mounted).
pub fn status() -> DamonStatus {
    status_in(Path::new(ADMIN), Path::new(MODULES))
}

fn read_trim(p: &Path) -> Option<String> {
    fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

/// The numbered subdirectories of `dir`, ascending.
fn numbered(dir: &Path) -> Vec<(u32, std::path::PathBuf)> {
    let mut v: Vec<(u32, std::path::PathBuf)> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path())))
        .collect();
    v.sort();
    v
}

/// [`status`] from an admin directory and a module directory (a fake tree
/// in tests).
pub fn status_in(admin: &Path, modules: &Path) -> DamonStatus {
    let mut st = DamonStatus::default();
    for (n, kd) in numbered(&admin.join("kdamonds")) {
        let on = read_trim(&kd.join("state")).as_deref() == Some("on");
        let pid = read_trim(&kd.join("pid")).and_then(|p| p.parse().ok());
        for (_, ctx) in numbered(&kd.join("contexts")) {
            for op in read_trim(&ctx.join("avail_operations"))
                .unwrap_or_default()
                .split_whitespace()
            {
                if !st.available_ops.iter().any(|o| o == op) {
                    st.available_ops.push(op.to_string());
                }
            }
            if !on {
                continue;
            }
            let targets = numbered(&ctx.join("targets"))
                .into_iter()
                .filter_map(|(_, t)| read_trim(&t.join("pid_target"))?.parse().ok())
                .filter(|&p: &i32| p > 0)
                .collect();
            st.monitors.push(Monitor {
                name: format!("kdamond {n}"),
                pid: pid.filter(|&p: &i32| p > 0),
                ops: read_trim(&ctx.join("operations")).unwrap_or_else(|| "unknown".into()),
                targets,
            });
        }
    }
    for m in PADDR_MODULES {
        let params = modules.join(m).join("parameters");
        if read_trim(&params.join("enabled")).as_deref() == Some("Y") {
            st.monitors.push(Monitor {
                name: m.to_string(),
                pid: read_trim(&params.join("kdamond_pid"))
                    .and_then(|p| p.parse().ok())
                    .filter(|&p: &i32| p > 0),
                ops: "paddr".into(),
                targets: Vec::new(),
            });
        }
    }
    st
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A fresh directory under the temporary directory.
    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("parsched-damon-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn put(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    #[test]
    fn a_running_paddr_kdamond_disturbs_every_process() {
        let root = tmp("paddr");
        let (admin, modules) = (root.join("admin"), root.join("module"));
        put(&admin, "kdamonds/nr_kdamonds", "1\n");
        put(&admin, "kdamonds/0/state", "on\n");
        put(&admin, "kdamonds/0/pid", "77\n");
        put(&admin, "kdamonds/0/contexts/0/operations", "paddr\n");
        put(&admin, "kdamonds/0/contexts/0/avail_operations", "paddr\n");
        let st = status_in(&admin, &modules);
        assert_eq!(st.monitors.len(), 1);
        assert!(!st.offers_vaddr());
        assert_eq!(
            st.disturbs(1234).as_deref(),
            Some("unreliable: DAMON kdamond 0 (pid 77) with paddr operations clears accessed bits")
        );
        // Stopped: nothing disturbs.
        put(&admin, "kdamonds/0/state", "off\n");
        let st = status_in(&admin, &modules);
        assert!(
            st.monitors.is_empty() && st.disturbs(1234).is_none(),
            "{st:?}"
        );
        assert_eq!(st.available_ops, ["paddr"]);
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_vaddr_kdamond_disturbs_only_its_targets_and_modules_everyone() {
        let root = tmp("vaddr");
        let (admin, modules) = (root.join("admin"), root.join("module"));
        put(&admin, "kdamonds/0/state", "on\n");
        put(&admin, "kdamonds/0/pid", "90\n");
        put(&admin, "kdamonds/0/contexts/0/operations", "vaddr\n");
        put(
            &admin,
            "kdamonds/0/contexts/0/avail_operations",
            "vaddr fvaddr paddr\n",
        );
        put(
            &admin,
            "kdamonds/0/contexts/0/targets/0/pid_target",
            "500\n",
        );
        put(
            &admin,
            "kdamonds/0/contexts/0/targets/1/pid_target",
            "501\n",
        );
        let st = status_in(&admin, &modules);
        assert!(st.offers_vaddr());
        assert_eq!(st.monitors[0].targets, [500, 501]);
        assert!(st.disturbs(400).is_none());
        assert!(st
            .disturbs(501)
            .unwrap()
            .contains("kdamond 0 (pid 90) with vaddr"));
        // A reclaim module runs a paddr kdamond the admin tree does not list.
        put(&modules, "damon_reclaim/parameters/enabled", "Y\n");
        put(&modules, "damon_reclaim/parameters/kdamond_pid", "-1\n");
        put(&modules, "damon_lru_sort/parameters/enabled", "N\n");
        let st = status_in(&admin, &modules);
        assert_eq!(st.monitors.len(), 2);
        assert_eq!(
            st.disturbs(400).as_deref(),
            Some("unreliable: DAMON damon_reclaim with paddr operations clears accessed bits")
        );
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn no_damon_no_monitors() {
        let root = tmp("none");
        let st = status_in(&root.join("absent"), &root.join("absent"));
        assert_eq!(st, DamonStatus::default());
        assert!(st.disturbs(1).is_none());
        fs::remove_dir_all(root).unwrap();
    }

    /// This machine's own state reads without error and agrees with its
    /// kdamonds' `state` files.
    #[test]
    fn reads_this_machine() {
        let st = status();
        let on = numbered(&Path::new(ADMIN).join("kdamonds"))
            .iter()
            .any(|(_, kd)| read_trim(&kd.join("state")).as_deref() == Some("on"));
        assert_eq!(
            st.monitors.iter().any(|m| m.name.starts_with("kdamond")),
            on
        );
    }
}
