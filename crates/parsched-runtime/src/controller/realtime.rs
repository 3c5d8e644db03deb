//! The controller at SCHED_FIFO (with `SCHED_RESET_ON_FORK`, so jobs do not
//! inherit it); on cgroup v1 with `CONFIG_RT_GROUP_SCHED` it first gives its
//! cpu cgroup some `cpu.rt_runtime_us` if it has none.

use crate::cgroup::v1_mount;
use crate::error::{Result, RuntimeError};
use std::path::Path;

/// SCHED_FIFO for the calling thread (reset on fork). On EPERM, gives the
/// thread's v1 cpu cgroup some RT runtime if it has none, then retries.
/// Returns a warning on failure.
pub fn enter_realtime(prio: i32) -> std::result::Result<(), String> {
    let try_set = || {
        let p = libc::sched_param {
            sched_priority: prio,
        };
        // SAFETY: valid sched_param; 0 = calling thread.
        unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK, &p) }
    };
    if try_set() == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EPERM) && give_rt_runtime().is_ok() && try_set() == 0 {
        return Ok(());
    }
    Err(format!(
        "could not run the controller at SCHED_FIFO ({e}); running at normal priority, \
         so slot switches may be delayed by the jobs (needs root and, on cgroup v1 with \
         RT group scheduling, cpu.rt_runtime_us > 0 in the controller's cpu cgroup)"
    ))
}

/// Back to SCHED_OTHER.
pub fn leave_realtime() {
    let p = libc::sched_param { sched_priority: 0 };
    // SAFETY: valid sched_param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &p) };
}

/// Writes `cpu.rt_runtime_us = 10000` on every ancestor (top-down) of this
/// thread's v1 cpu cgroup that has 0.
pub(super) fn give_rt_runtime() -> Result<()> {
    let mount = v1_mount("cpu").ok_or_else(|| RuntimeError::Unsupported("no v1 cpu".into()))?;
    let cg = std::fs::read_to_string("/proc/thread-self/cgroup")
        .map_err(|e| RuntimeError::io("read /proc/thread-self/cgroup", e))?;
    let path = cg
        .lines()
        .find_map(|l| {
            let mut it = l.splitn(3, ':');
            let (_, ctl, p) = (it.next()?, it.next()?, it.next()?);
            ctl.split(',').any(|c| c == "cpu").then(|| p.to_string())
        })
        .ok_or_else(|| RuntimeError::Unsupported("no cpu cgroup line".into()))?;
    let mut dir = mount.clone();
    for comp in Path::new(&path).components().skip(1) {
        dir.push(comp);
        let f = dir.join("cpu.rt_runtime_us");
        let cur: i64 = std::fs::read_to_string(&f)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(-1);
        if cur == 0 {
            crate::cgroup::write_file(&f, "10000")?;
        }
    }
    Ok(())
}
