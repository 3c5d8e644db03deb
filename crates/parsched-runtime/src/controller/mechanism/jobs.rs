//! The jobs' life cycle: start (in their groups), freeze and thaw, reap and
//! report, and the stop on a signal or an error.

use super::wait::pidfd_open;
use super::Mechanism;
use crate::cgroup::BackendKind;
use crate::error::Result;
use crate::spawn::Prepared;
use crate::spec::{ExitStatus, JobReport};
use std::time::Instant;

impl Mechanism {
    /// Creates the group and starts job `i` (thawed), with `env` added to
    /// its environment where its spec does not set the variable.
    pub(super) fn spawn(&mut self, i: usize, env: Vec<(String, String)>) -> Result<()> {
        let group = self.jobs[i].group.clone();
        self.freezer.create(&group)?;
        let mut join = self.freezer.join_files(&group);
        if self.jobs[i].cpuset {
            if let Some(c) = &self.cpuset {
                join.extend(c.join_files(&group));
            }
        }
        let mut spec = std::borrow::Cow::Borrowed(&self.jobs[i].spec);
        // (FCS publishes the job's class to it and reads the
        // synchronization statistics a cooperating program writes: the
        // files' names; the job's own environment wins.)
        for (key, value) in env {
            if !spec.env.contains_key(&key) {
                spec.to_mut().env.insert(key, value);
            }
        }
        let prep = Prepared::new(&self.jobs[i].name, &spec, &join, self.identity)?;
        let pid = prep.spawn()?;
        let j = &mut self.jobs[i];
        j.pid = Some(pid);
        j.started = Some(Instant::now());
        j.pidfd = pidfd_open(pid);
        self.freezer.add_pid(&group, pid)?;
        if let Some(s) = self.supervisor.as_mut() {
            s.watch_pgid(pid);
        }
        Ok(())
    }

    pub(super) fn request_freeze_job(&mut self, i: usize) -> Result<()> {
        if !self.jobs[i].live() || self.jobs[i].frozen_since.is_some() {
            return Ok(());
        }
        let g = self.jobs[i].group.clone();
        self.freezer.request_freeze(&g)?;
        self.jobs[i].frozen_since = Some(Instant::now());
        Ok(())
    }

    pub(super) fn confirm_frozen_job(&mut self, i: usize) -> Result<()> {
        if !self.jobs[i].live() || self.jobs[i].frozen_since.is_none() {
            return Ok(());
        }
        let g = self.jobs[i].group.clone();
        self.freezer.confirm_frozen(&g)
    }

    pub(super) fn thaw_job(&mut self, i: usize) -> Result<()> {
        if !self.jobs[i].live() {
            return Ok(());
        }
        let g = self.jobs[i].group.clone();
        if let Some(s) = self.jobs[i].frozen_since.take() {
            self.freezer.thaw(&g)?;
            self.jobs[i].suspended += s.elapsed();
        }
        self.jobs[i].slots_run += 1;
        Ok(())
    }

    /// Reaps exited jobs and reports on each (its base report: the policy
    /// may add to it); returns them.
    pub(crate) fn reap(&mut self) -> Result<Vec<usize>> {
        let mut exited = Vec::new();
        for i in 0..self.jobs.len() {
            if !self.jobs[i].live() {
                continue;
            }
            let pid = self.jobs[i].pid.expect("live");
            let mut st = 0;
            // SAFETY: rusage is plain data.
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: our child.
            let r = unsafe { libc::wait4(pid, &mut st, libc::WNOHANG, &mut ru) };
            if r == pid {
                exited.push(i);
                self.finish_job(i, ExitStatus::from_wait(st), &ru);
            } else if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::ECHILD) {
                    // Reaped elsewhere (should not happen): report unknown.
                    exited.push(i);
                    // SAFETY: zeroed rusage.
                    let ru: libc::rusage = unsafe { std::mem::zeroed() };
                    self.finish_job(
                        i,
                        ExitStatus {
                            code: None,
                            signal: None,
                        },
                        &ru,
                    );
                }
            }
        }
        Ok(exited)
    }

    fn finish_job(&mut self, i: usize, status: ExitStatus, ru: &libc::rusage) {
        let now = Instant::now();
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        {
            let j = &mut self.jobs[i];
            if let Some(s) = j.frozen_since.take() {
                j.suspended += now - s;
            }
        }
        // The group's own CPU accounting also covers descendants the leader
        // never reaped; prefer it when it saw more.
        let group_cpu = self.freezer.cpu_usage(&self.jobs[i].group);
        // Stragglers of the tree go with the leader. Only a cgroup can name
        // them safely: the leader's pid (and process group id) may already
        // be reused now that it has been reaped.
        let group = self.jobs[i].group.clone();
        if matches!(
            self.freezer.kind(),
            BackendKind::Cgroup2 | BackendKind::Cgroup1
        ) {
            let _ = self.freezer.kill(&group);
        }
        if let Err(e) = self.freezer.remove(&group) {
            self.warn(format!("{group}: {e}"));
        }
        if self.jobs[i].cpuset {
            if let Some(c) = self.cpuset.as_mut() {
                let _ = c.remove(&group);
            }
        }
        let j = &mut self.jobs[i];
        j.pidfd = None;
        j.report = Some(JobReport {
            name: j.name.clone(),
            argv: j.spec.argv.clone(),
            pid: j.pid.unwrap_or(0),
            status,
            success: status.success(),
            wall_s: j.started.map_or(0.0, |s| (now - s).as_secs_f64()),
            user_s: match group_cpu {
                Some((u, s)) if u + s > tv(ru.ru_utime) + tv(ru.ru_stime) => u,
                _ => tv(ru.ru_utime),
            },
            sys_s: match group_cpu {
                Some((u, s)) if u + s > tv(ru.ru_utime) + tv(ru.ru_stime) => s,
                _ => tv(ru.ru_stime),
            },
            suspended_s: j.suspended.as_secs_f64(),
            width: j.width,
            slots_run: j.slots_run,
            cpus: j.cpus.clone(),
            pool: None,
            wss_bytes: None,
            wss_unreliable: None,
            coscheduled: None,
            classes: Vec::new(),
            observed: None,
            ranks: Vec::new(),
        });
    }

    /// Sends `sig` to every live job's process group and thaws every job.
    pub(crate) fn signal_and_thaw(&mut self, sig: i32) {
        for i in 0..self.jobs.len() {
            if let Some(pid) = self.jobs[i].pid.filter(|_| self.jobs[i].live()) {
                // SAFETY: the job's process group.
                unsafe { libc::killpg(pid, sig) };
            }
            let _ = self.thaw_job(i);
        }
    }

    pub(crate) fn never_started(&mut self, i: usize, why: &str) {
        let j = &mut self.jobs[i];
        if j.report.is_none() && j.pid.is_none() {
            j.report = Some(JobReport {
                name: j.name.clone(),
                argv: j.spec.argv.clone(),
                pid: 0,
                status: ExitStatus {
                    code: None,
                    signal: None,
                },
                success: false,
                wall_s: 0.0,
                user_s: 0.0,
                sys_s: 0.0,
                suspended_s: 0.0,
                width: j.width,
                slots_run: 0,
                cpus: Vec::new(),
                pool: None,
                wss_bytes: None,
                wss_unreliable: None,
                coscheduled: None,
                classes: Vec::new(),
                observed: None,
                ranks: Vec::new(),
            });
            let _ = why;
        }
    }

    /// Kills every live job's group, thaws it and SIGKILLs its process
    /// group.
    pub(crate) fn kill_and_thaw(&mut self) {
        for i in 0..self.jobs.len() {
            if self.jobs[i].live() {
                let g = self.jobs[i].group.clone();
                let _ = self.freezer.kill(&g);
                let _ = self.thaw_job(i);
                if let Some(pid) = self.jobs[i].pid {
                    // SAFETY: the job's process group.
                    unsafe { libc::killpg(pid, libc::SIGKILL) };
                }
            }
        }
    }

    /// Whether any job is live.
    pub(crate) fn any_live(&self) -> bool {
        self.jobs.iter().any(|j| j.live())
    }
}
