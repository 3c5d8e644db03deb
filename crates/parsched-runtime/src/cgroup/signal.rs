//! The last-resort backend: SIGSTOP / SIGCONT to the job's process group,
//! and the task states from /proc that confirm it.

use super::{nap, BackendKind, Freezer, FREEZE_TIMEOUT};
use crate::error::{Result, RuntimeError};
use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;
use std::time::Instant;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_state_of_self_is_running() {
        // SAFETY: getpid has no preconditions.
        let me = unsafe { libc::getpid() };
        assert!(matches!(proc_state(me), Some('R' | 'S')));
        assert_eq!(proc_state(i32::MAX), None);
    }
}
