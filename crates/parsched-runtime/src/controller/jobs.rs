//! The jobs' life cycle: start (in their groups), freeze and thaw, reap and
//! report, and the shutdown on a signal or an error.

use super::{pidfd_open, Controller};
use crate::cgroup::BackendKind;
use crate::error::Result;
use crate::spawn::Prepared;
use crate::spec::{ExitStatus, JobReport};
use parsched_core::policy::classify::CoschedClass;
use parsched_core::policy::gang::GangId;
use std::time::{Duration, Instant};

impl Controller {
    /// Creates the group and starts job `i` (thawed).
    pub(super) fn spawn(&mut self, i: usize) -> Result<()> {
        let group = self.jobs[i].group.clone();
        self.freezer.create(&group)?;
        let mut join = self.freezer.join_files(&group);
        if self.jobs[i].cpuset {
            if let Some(c) = &self.cpuset {
                join.extend(c.join_files(&group));
            }
        }
        let mut spec = std::borrow::Cow::Borrowed(&self.jobs[i].spec);
        // FCS publishes the job's class to it (a cooperating program, e.g.
        // `bsp --wait adaptive`, waits by class) and reads the
        // synchronization statistics such a program writes (bench/bsp does);
        // the job's own environment wins.
        let files = [
            (super::fcs::CLASS_FILE_ENV, self.class_file(i)),
            (super::fcs::SYNC_FILE_ENV, self.sync_file(i)),
        ];
        for (key, path) in files.into_iter().filter_map(|(k, p)| Some((k, p?))) {
            if !spec.env.contains_key(key) {
                spec.to_mut()
                    .env
                    .insert(key.into(), path.to_string_lossy().into_owned());
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

    pub(super) fn freeze_job(&mut self, i: usize) -> Result<()> {
        self.request_freeze_job(i)?;
        self.confirm_frozen_job(i)
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
        self.fcs_own_slot(i);
        self.start_observing(i);
        Ok(())
    }

    /// Reaps exited jobs; returns whether any exited.
    pub(super) fn reap(&mut self) -> Result<bool> {
        let mut any = false;
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
                any = true;
                self.finish_job(i, ExitStatus::from_wait(st), &ru)?;
            } else if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::ECHILD) {
                    // Reaped elsewhere (should not happen): report unknown.
                    any = true;
                    // SAFETY: zeroed rusage.
                    let ru: libc::rusage = unsafe { std::mem::zeroed() };
                    self.finish_job(
                        i,
                        ExitStatus {
                            code: None,
                            signal: None,
                        },
                        &ru,
                    )?;
                }
            }
        }
        Ok(any)
    }

    pub(super) fn finish_job(
        &mut self,
        i: usize,
        status: ExitStatus,
        ru: &libc::rusage,
    ) -> Result<()> {
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
        for &(p, n) in &self.jobs[i].placement {
            self.pool_load[p.idx()] = self.pool_load[p.idx()].saturating_sub(n);
        }
        self.leave_matrix(i)?;
        let fcs = self.is_fcs();
        let class = self.fcs.class(i);
        self.fcs.finished(i);
        let j = &mut self.jobs[i];
        j.fcs.filling = false;
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
            pool: j.pool,
            wss_bytes: j.wss_bytes,
            coscheduled: class.map(CoschedClass::is_coscheduled),
            classes: j
                .fcs
                .classes
                .iter()
                .map(|&(t, c)| (t, c.short_name().to_string()))
                .collect(),
            observed: fcs.then_some(j.fcs.observed),
        });
        Ok(())
    }

    /// SIGINT/SIGTERM/SIGHUP: forward to the jobs, thaw them, give them 2 s,
    /// then kill what is left.
    pub(super) fn shutdown(&mut self, sig: i32) -> Result<()> {
        self.warn(format!("received signal {sig}: stopping the jobs"));
        for i in 0..self.jobs.len() {
            if let Some(pid) = self.jobs[i].pid.filter(|_| self.jobs[i].live()) {
                // SAFETY: the job's process group.
                unsafe { libc::killpg(pid, sig) };
            }
            let _ = self.thaw_job(i);
        }
        let waiting: Vec<GangId> = self.sched.waiting().map(|(g, _)| g).collect();
        for g in waiting {
            let _ = self.sched.finish(g);
            self.never_started(g.0 as usize, "interrupted before it could start");
        }
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(2) && self.jobs.iter().any(|j| j.live()) {
            self.reap()?;
            std::thread::sleep(Duration::from_millis(5));
        }
        self.abort_jobs();
        Ok(())
    }

    pub(super) fn never_started(&mut self, i: usize, why: &str) {
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
                coscheduled: None,
                classes: Vec::new(),
                observed: None,
            });
            let _ = why;
        }
    }

    /// Thaws and SIGKILLs every live job and reaps it.
    pub(super) fn abort_jobs(&mut self) {
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
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(2) && self.jobs.iter().any(|j| j.live()) {
            let _ = self.reap();
            std::thread::sleep(Duration::from_millis(2));
        }
        for i in 0..self.jobs.len() {
            self.never_started(i, "not started");
        }
    }
}
