//! The controller's wait: one `poll` on the signal self-pipe, a `timerfd`
//! armed with an absolute CLOCK_MONOTONIC deadline (policies with a timer)
//! and one `pidfd` per live job, so it sleeps until something happens; and
//! what a run sets up around it (signal guard, timer, SCHED_FIFO).

use super::Mechanism;
use crate::controller::{enter_realtime, leave_realtime};
use crate::error::{Result, RuntimeError};
use crate::safety::SignalGuard;
use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Instant;

pub(crate) fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub(crate) fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

pub(super) fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    // SAFETY: plain syscall; a non-negative result is a new descriptor.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as i32;
    // SAFETY: fd is ours.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

fn timerfd() -> Option<OwnedFd> {
    // SAFETY: plain syscall.
    let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
    // SAFETY: fd is ours.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Arms `fd` for the absolute CLOCK_MONOTONIC time `ns`.
fn arm(fd: &OwnedFd, ns: u64) {
    let spec = libc::itimerspec {
        it_interval: libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        },
    };
    // SAFETY: valid itimerspec.
    unsafe {
        libc::timerfd_settime(
            fd.as_raw_fd(),
            libc::TFD_TIMER_ABSTIME,
            &spec,
            std::ptr::null_mut(),
        )
    };
}

impl Mechanism {
    /// Starts a run: the clock, the signal guard, the timer and (where
    /// asked and permitted) SCHED_FIFO. Returns the thread's CPU time.
    pub(crate) fn begin_run(&mut self) -> Result<f64> {
        self.t0 = Instant::now();
        let cpu0 = thread_cpu_s();
        self.signals = Some(SignalGuard::install()?);
        self.timerfd = timerfd();
        if self.spec.realtime {
            match enter_realtime(self.spec.rt_priority) {
                Ok(()) => self.stats.realtime = true,
                Err(w) => self.warn(w),
            }
        }
        Ok(cpu0)
    }

    /// Ends a run begun when the thread had used `cpu0` seconds.
    pub(crate) fn end_run(&mut self, cpu0: f64) {
        if self.stats.realtime {
            leave_realtime();
        }
        self.signals = None;
        self.stats.cpu_s = thread_cpu_s() - cpu0;
        self.stats.wall_s = self.t0.elapsed().as_secs_f64();
    }

    /// Sleeps until a job exits, a signal arrives, (if given) the absolute
    /// CLOCK_MONOTONIC `deadline` passes or (if given) `event` becomes
    /// readable; returns the signal, if one came, and whether `event` is
    /// readable.
    pub(crate) fn wait(
        &mut self,
        deadline: Option<u64>,
        event: Option<RawFd>,
    ) -> Result<(Option<i32>, bool)> {
        if let (Some(d), Some(t)) = (deadline, &self.timerfd) {
            arm(t, d);
        }
        let woke = self.wait_events(deadline, event)?;
        self.stats.wakeups += 1;
        Ok(woke)
    }

    fn wait_events(
        &mut self,
        deadline: Option<u64>,
        event: Option<RawFd>,
    ) -> Result<(Option<i32>, bool)> {
        let mut fds = Vec::new();
        let sig_fd = self.signals.as_ref().expect("installed").fd();
        fds.push(libc::pollfd {
            fd: sig_fd,
            events: libc::POLLIN,
            revents: 0,
        });
        let event_idx = event.map(|fd| {
            fds.push(libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            });
            fds.len() - 1
        });
        let mut timer_idx = None;
        if let (Some(_), Some(t)) = (deadline, &self.timerfd) {
            timer_idx = Some(fds.len());
            fds.push(libc::pollfd {
                fd: t.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
        }
        let mut all_pidfds = true;
        for j in self.jobs.iter().filter(|j| j.live()) {
            match &j.pidfd {
                Some(f) => fds.push(libc::pollfd {
                    fd: f.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                }),
                None => all_pidfds = false,
            }
        }
        // Without a timerfd or pidfds, fall back to a bounded timeout.
        let timeout: i32 = match (deadline, timer_idx, all_pidfds) {
            (Some(d), None, _) => (d.saturating_sub(mono_ns()) / 1_000_000).max(1) as i32,
            (_, _, false) => 10,
            _ => -1,
        };
        // SAFETY: fds is a valid array.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(RuntimeError::io("poll", e));
            }
        }
        if let Some(i) = timer_idx {
            if fds[i].revents & libc::POLLIN != 0 {
                let mut b = [0u8; 8];
                // SAFETY: reading the expiration count.
                unsafe { libc::read(fds[i].fd, b.as_mut_ptr().cast(), 8) };
            }
        }
        let signal = self
            .signals
            .as_ref()
            .expect("installed")
            .take()
            .into_iter()
            .next();
        let event = n > 0 && event_idx.is_some_and(|i| fds[i].revents & libc::POLLIN != 0);
        Ok((signal, event))
    }
}
