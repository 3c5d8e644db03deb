//! Starting a job: `fork`, join the job's cgroups, own process group, drop to
//! the invoking user, `execve`. Everything the child needs is prepared before
//! the fork, and the child makes only async-signal-safe system calls, so this
//! is sound in a multi-threaded process (the Python interpreter, a test
//! harness). An exec failure is reported back through a close-on-exec pipe.

use crate::error::{Result, RuntimeError};
use crate::spec::JobSpec;
use std::ffi::CString;
use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// A user and group id the jobs run as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobIdentity {
    pub uid: u32,
    pub gid: u32,
}

/// The identity jobs run as: the invoking user behind `sudo` when the
/// controller is root, else unchanged (`None`).
pub fn job_identity() -> Option<JobIdentity> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let uid: u32 = std::env::var("SUDO_UID").ok()?.parse().ok()?;
    let gid: u32 = std::env::var("SUDO_GID")
        .ok()
        .and_then(|g| g.parse().ok())
        .unwrap_or(uid);
    (uid != 0).then_some(JobIdentity { uid, gid })
}

fn cstr(s: impl AsRef<[u8]>, what: &str) -> Result<CString> {
    CString::new(s.as_ref()).map_err(|_| RuntimeError::Spawn {
        job: String::new(),
        program: what.into(),
        message: "contains a NUL byte".into(),
    })
}

/// Finds `prog` on `path` (a `PATH` value) unless it contains a slash.
pub fn resolve_program(prog: &str, path: &str, cwd: Option<&Path>) -> Option<PathBuf> {
    if prog.contains('/') {
        let p = match cwd {
            Some(c) if !prog.starts_with('/') => c.join(prog),
            _ => PathBuf::from(prog),
        };
        return is_executable(&p).then_some(PathBuf::from(prog));
    }
    path.split(':')
        .map(|d| Path::new(if d.is_empty() { "." } else { d }).join(prog))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    let Ok(c) = CString::new(p.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: valid C string.
    p.is_file() && unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0
}

/// A job ready to fork.
pub struct Prepared {
    name: String,
    program: CString,
    argv: Vec<CString>,
    envp: Vec<CString>,
    join: Vec<CString>,
    cwd: Option<CString>,
    stdin: OwnedFd,
    stdout: Option<OwnedFd>,
    stderr: Option<OwnedFd>,
    identity: Option<JobIdentity>,
}

/// Stages at which the child can fail (reported with errno).
const STAGES: [&str; 7] = [
    "join cgroup",
    "setpgid",
    "redirect output",
    "chdir",
    "drop privileges",
    "exec",
    "unknown",
];

impl Prepared {
    pub fn new(
        name: &str,
        job: &JobSpec,
        join: &[PathBuf],
        identity: Option<JobIdentity>,
    ) -> Result<Prepared> {
        let spawn_err = |m: String| RuntimeError::Spawn {
            job: name.into(),
            program: job.argv.first().cloned().unwrap_or_default(),
            message: m,
        };
        let mut env: Vec<(String, String)> = std::env::vars().collect();
        for (k, v) in &job.env {
            env.retain(|(a, _)| a != k);
            env.push((k.clone(), v.clone()));
        }
        let path_var = env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
        let prog = resolve_program(&job.argv[0], &path_var, job.cwd.as_deref())
            .ok_or_else(|| spawn_err("not found or not executable".into()))?;
        let open_out = |p: &Option<PathBuf>| -> Result<Option<OwnedFd>> {
            match p {
                None => Ok(None),
                Some(p) => {
                    let f = File::create(p).map_err(|e| RuntimeError::path("create", p, e))?;
                    if let Some(JobIdentity { uid, gid }) = identity {
                        // SAFETY: valid fd.
                        unsafe { libc::fchown(f.as_raw_fd(), uid, gid) };
                    }
                    Ok(Some(OwnedFd::from(f)))
                }
            }
        };
        Ok(Prepared {
            name: name.into(),
            program: cstr(prog.as_os_str().as_bytes(), &job.argv[0])?,
            argv: job.argv.iter().map(|a| cstr(a, a)).collect::<Result<_>>()?,
            envp: env
                .iter()
                .map(|(k, v)| cstr(format!("{k}={v}"), k))
                .collect::<Result<_>>()?,
            join: join
                .iter()
                .map(|p| cstr(p.as_os_str().as_bytes(), "cgroup path"))
                .collect::<Result<_>>()?,
            cwd: job
                .cwd
                .as_ref()
                .map(|c| cstr(c.as_os_str().as_bytes(), "cwd"))
                .transpose()?,
            // Jobs run in their own process groups, which a terminal treats
            // as background: reading it would stop them (SIGTTIN).
            stdin: OwnedFd::from(
                File::open("/dev/null").map_err(|e| RuntimeError::io("open /dev/null", e))?,
            ),
            stdout: open_out(&job.stdout)?,
            stderr: open_out(&job.stderr)?,
            identity,
        })
    }

    /// Forks and execs; returns the pid once the exec has succeeded.
    pub fn spawn(&self) -> Result<i32> {
        let mut argv: Vec<*const libc::c_char> = self.argv.iter().map(|c| c.as_ptr()).collect();
        argv.push(std::ptr::null());
        let mut envp: Vec<*const libc::c_char> = self.envp.iter().map(|c| c.as_ptr()).collect();
        envp.push(std::ptr::null());
        let join: Vec<*const libc::c_char> = self.join.iter().map(|c| c.as_ptr()).collect();
        let mut fds = [0i32; 2];
        // SAFETY: fds has room for two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(RuntimeError::last_os("pipe2"));
        }
        // SAFETY: both ends are ours now.
        let (rd, wr) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let inp = self.stdin.as_raw_fd();
        let out = self.stdout.as_ref().map_or(-1, |f| f.as_raw_fd());
        let err = self.stderr.as_ref().map_or(-1, |f| f.as_raw_fd());
        let cwd = self.cwd.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
        let ident = self.identity;
        let wfd = wr.as_raw_fd();
        // SAFETY: the child only makes async-signal-safe calls on data
        // prepared before the fork, then execs or _exits.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(RuntimeError::last_os("fork"));
        }
        if pid == 0 {
            unsafe {
                child(
                    &join,
                    [inp, out, err],
                    cwd,
                    ident,
                    &self.program,
                    &argv,
                    &envp,
                    wfd,
                )
            }
        }
        drop(wr);
        let mut buf = [0u8; 8];
        let mut got = 0usize;
        loop {
            // SAFETY: reading into our buffer.
            let n = unsafe {
                libc::read(
                    rd.as_raw_fd(),
                    buf[got..].as_mut_ptr().cast(),
                    buf.len() - got,
                )
            };
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            if n <= 0 {
                break;
            }
            got += n as usize;
            if got == buf.len() {
                break;
            }
        }
        if got == 0 {
            return Ok(pid);
        }
        // The child failed before exec: reap it and report.
        let mut st = 0;
        // SAFETY: our child.
        unsafe { libc::waitpid(pid, &mut st, 0) };
        let stage = u32::from_ne_bytes(buf[..4].try_into().expect("4 bytes")) as usize;
        let errno = i32::from_ne_bytes(buf[4..8].try_into().expect("4 bytes"));
        let e = std::io::Error::from_raw_os_error(errno);
        let stage_name = STAGES[stage.min(STAGES.len() - 1)];
        let program = self.argv[0].to_string_lossy().into_owned();
        if matches!(errno, libc::EACCES | libc::EPERM) && stage == 0 {
            return Err(RuntimeError::Permission {
                what: format!("job {}: {stage_name}: {e}", self.name),
                hint: "run parsched as root".into(),
            });
        }
        Err(RuntimeError::Spawn {
            job: self.name.clone(),
            program,
            message: format!("{stage_name}: {e}"),
        })
    }
}

/// The forked child. Never returns.
#[allow(clippy::too_many_arguments)]
unsafe fn child(
    join: &[*const libc::c_char],
    [inp, out, err]: [i32; 3],
    cwd: *const libc::c_char,
    ident: Option<JobIdentity>,
    program: &CString,
    argv: &[*const libc::c_char],
    envp: &[*const libc::c_char],
    wfd: i32,
) -> ! {
    let fail = |stage: u32| -> ! {
        let errno = *libc::__errno_location();
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&stage.to_ne_bytes());
        b[4..].copy_from_slice(&errno.to_ne_bytes());
        libc::write(wfd, b.as_ptr().cast(), 8);
        libc::_exit(127)
    };
    for &f in join {
        let fd = libc::open(f, libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 || libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
            fail(0);
        }
        libc::close(fd);
    }
    if libc::setpgid(0, 0) != 0 {
        fail(1);
    }
    if libc::dup2(inp, 0) < 0 {
        fail(2);
    }
    if out >= 0 && libc::dup2(out, 1) < 0 {
        fail(2);
    }
    if err >= 0 && libc::dup2(err, 2) < 0 {
        fail(2);
    }
    if !cwd.is_null() && libc::chdir(cwd) != 0 {
        fail(3);
    }
    if let Some(JobIdentity { uid, gid }) = ident {
        let groups = [gid];
        if libc::setgroups(1, groups.as_ptr()) != 0
            || libc::setgid(gid) != 0
            || libc::setuid(uid) != 0
        {
            fail(4);
        }
    }
    // Default signal mask for the job.
    let mut set: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut set);
    libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
    libc::execve(program.as_ptr(), argv.as_ptr(), envp.as_ptr());
    fail(5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_on_path_and_reports_missing_programs() {
        assert!(resolve_program("sh", "/nonexistent:/bin:/usr/bin", None).is_some());
        assert!(resolve_program("no-such-program-xyz", "/bin:/usr/bin", None).is_none());
        assert!(resolve_program("/bin/sh", "", None).is_some());
        let job = JobSpec::new(["no-such-program-xyz"]);
        match Prepared::new("j", &job, &[], None) {
            Err(RuntimeError::Spawn { message, .. }) => assert!(message.contains("not found")),
            _ => panic!("expected a spawn error"),
        }
    }

    #[test]
    fn spawn_runs_in_own_process_group_and_reports_exec_failure() {
        let job = JobSpec::new(["sh", "-c", "exit 3"]);
        let p = Prepared::new("j", &job, &[], None).unwrap();
        let pid = p.spawn().unwrap();
        let mut st = 0;
        unsafe { libc::waitpid(pid, &mut st, 0) };
        assert_eq!(crate::spec::ExitStatus::from_wait(st).code, Some(3));
        // Joining a cgroup file that does not exist fails in the child.
        let bad = Prepared::new(
            "j",
            &job,
            &[PathBuf::from("/nonexistent/cgroup.procs")],
            None,
        )
        .unwrap();
        match bad.spawn() {
            Err(RuntimeError::Spawn { message, .. }) => assert!(message.contains("join cgroup")),
            other => panic!("expected a spawn error, got {other:?}"),
        }
    }
}
