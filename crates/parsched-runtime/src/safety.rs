//! No job is ever left frozen.
//!
//! * **Normal exit and errors**: the controller thaws and removes every group
//!   before `run_jobs` returns; the backends also do it on drop (unwinding).
//! * **SIGINT / SIGTERM / SIGHUP**: [`SignalGuard`] turns them into bytes on a
//!   self-pipe that the controller polls; it then forwards the signal to the
//!   jobs, thaws them and cleans up. Handlers are restored afterwards.
//! * **SIGKILL of the controller**: [`Supervisor`] is a tiny `/bin/sh`
//!   process (its own process group, so a terminal's Ctrl-C does not reach
//!   it) holding the read end of a pipe whose only writer is the controller
//!   (close-on-exec, so jobs never inherit it). When it reads EOF — the
//!   controller exited or died — it SIGCONTs the process groups it was told
//!   about, puts the threads it was told were boosted to `SCHED_FIFO` back
//!   at `SCHED_OTHER`, thaws every group under the parsched roots, moves any remaining
//!   processes back to the hierarchy's root and removes the directories.
//! * **Next start**: [`recover_stale`] thaws and removes `parsched.<pid>*`
//!   directories whose owner pid is dead (for instance if the supervisor was
//!   killed too).

use crate::cgroup::{cgroup_mounts, release_tree, thaw_tree, ROOT_PREFIX};
use crate::error::{Result, RuntimeError};
use std::fs;
use std::io::Write;
use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::Mutex;

static SEQ: AtomicU32 = AtomicU32::new(0);

/// A fresh owner tag: `<pid>` for the first controller of this process,
/// `<pid>-<n>` after, so concurrent controllers in one process never share a
/// root and recovery can still read the owner pid.
pub fn owner_tag() -> String {
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    let pid = std::process::id();
    if n == 0 {
        pid.to_string()
    } else {
        format!("{pid}-{n}")
    }
}

/// The owner pid of a root directory name `parsched.<pid>[-<n>]`.
pub fn owner_pid(name: &str) -> Option<i32> {
    let rest = name.strip_prefix(ROOT_PREFIX)?;
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

fn pid_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks existence.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Thaws and removes stale parsched roots (owner dead) in every cgroup
/// hierarchy below `mounts` (default: this namespace's cgroup mounts).
/// Returns the roots cleaned.
pub fn recover_stale_in(mounts: &[PathBuf]) -> Vec<PathBuf> {
    let mut cleaned = Vec::new();
    for m in mounts {
        let Ok(rd) = fs::read_dir(m) else { continue };
        for e in rd.filter_map(|e| e.ok()) {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = owner_pid(&name) else {
                continue;
            };
            if pid_alive(pid) {
                continue;
            }
            let dir = e.path();
            thaw_tree(&dir);
            release_tree(&dir, &m.join("cgroup.procs"));
            cleaned.push(dir);
        }
    }
    cleaned
}

/// [`recover_stale_in`] over all cgroup mounts.
pub fn recover_stale() -> Vec<PathBuf> {
    let mounts: Vec<PathBuf> = cgroup_mounts().into_iter().map(|m| m.path).collect();
    recover_stale_in(&mounts)
}

// ---------------------------------------------------------------- supervisor

const SUPERVISOR_SH: &str = r#"
trap '' INT TERM HUP
P=""
T=""
A=""
ALL=$(taskset -c -p $$ 2>/dev/null | sed 's/.*: //')
while IFS= read -r l; do
  case "$l" in pg:*) P="$P ${l#pg:}";; rt:*) T="$T ${l#rt:}";; pin:*) A="$A ${l#pin:}";; esac
done
for p in $P; do kill -CONT -- "-$p" 2>/dev/null; kill -CONT "$p" 2>/dev/null; done
for t in $T; do
  [ -d "/proc/$t" ] && chrt -p "$t" 2>/dev/null | grep -q SCHED_FIFO && chrt -o -p 0 "$t"
done 2>/dev/null
if [ -n "$ALL" ]; then
  for t in $A; do [ -d "/proc/$t" ] && taskset -c -p "$ALL" "$t"; done >/dev/null 2>&1
fi
for r in "$@"; do
  [ -d "$r" ] || continue
  up="${r%/*}/cgroup.procs"
  for d in "$r"/*/ "$r/"; do
    d="${d%/}"; [ -d "$d" ] || continue
    [ -e "$d/cgroup.freeze" ] && echo 0 > "$d/cgroup.freeze"
    [ -e "$d/freezer.state" ] && echo THAWED > "$d/freezer.state"
  done
  for d in "$r"/*/ "$r/"; do
    d="${d%/}"; [ -d "$d" ] || continue
    for i in 1 2 3 4 5 6 7 8 9 10; do
      if [ -e "$d/cgroup.procs" ]; then
        while read -r pid; do echo "$pid" > "$up"; done < "$d/cgroup.procs"
      fi
      rmdir "$d" && break
      sleep 0.01
    done
  done
done 2>/dev/null
exit 0
"#;

/// The watchdog process that cleans up if the controller dies.
pub struct Supervisor {
    child: Child,
    pipe: Option<std::fs::File>,
}

impl Supervisor {
    /// Starts the supervisor for these parsched root directories.
    pub fn start(roots: &[PathBuf]) -> Result<Supervisor> {
        let mut fds = [0i32; 2];
        // SAFETY: room for two descriptors. Both ends close-on-exec; the
        // child's stdin is a dup2 of the read end (which clears the flag).
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(RuntimeError::last_os("pipe2"));
        }
        // SAFETY: both descriptors are fresh and ours.
        let (rd, wr) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let child = Command::new("/bin/sh")
            .arg("-c")
            .arg(SUPERVISOR_SH)
            .arg("parsched-supervisor")
            .args(roots)
            .stdin(Stdio::from(rd))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| RuntimeError::io("start the supervisor (/bin/sh)", e))?;
        Ok(Supervisor {
            child,
            pipe: Some(std::fs::File::from(wr)),
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Tells the supervisor about a process group to SIGCONT if the
    /// controller dies (the signal backend has no cgroup to thaw).
    pub fn watch_pgid(&mut self, pgid: i32) {
        if let Some(p) = self.pipe.as_mut() {
            let _ = writeln!(p, "pg:{pgid}");
        }
    }

    /// Tells the supervisor about a thread the controller raised to
    /// `SCHED_FIFO` (a cosched boost): if the controller dies, the
    /// supervisor puts it back at `SCHED_OTHER` if it is still real-time.
    pub fn watch_rt_tid(&mut self, tid: i32) {
        if let Some(p) = self.pipe.as_mut() {
            let _ = writeln!(p, "rt:{tid}");
        }
    }

    /// Tells the supervisor about a thread the controller pinned to one CPU
    /// (a cosched workstation): if the controller dies, the supervisor
    /// gives it back every CPU the controller had.
    pub fn watch_pinned_tid(&mut self, tid: i32) {
        if let Some(p) = self.pipe.as_mut() {
            let _ = writeln!(p, "pin:{tid}");
        }
    }

    /// Closes the pipe (as a dying controller would) and waits for the
    /// supervisor's cleanup to finish.
    pub fn finish(mut self) {
        self.pipe.take();
        let _ = self.child.wait();
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        if self.pipe.take().is_some() {
            let _ = self.child.wait();
        }
    }
}

// ---------------------------------------------------------------- signals

const SLOTS: usize = 32;
static PIPES: [AtomicI32; SLOTS] = [const { AtomicI32::new(-1) }; SLOTS];
static INSTALLED: Mutex<(usize, Vec<(i32, libc::sigaction)>)> = Mutex::new((0, Vec::new()));

/// The signals a controller turns into an orderly shutdown.
pub const SHUTDOWN_SIGNALS: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn on_signal(sig: libc::c_int) {
    let b = sig as u8;
    for p in &PIPES {
        let fd = p.load(Ordering::Relaxed);
        if fd >= 0 {
            // SAFETY: write(2) is async-signal-safe; the pipe is non-blocking.
            unsafe { libc::write(fd, (&b as *const u8).cast(), 1) };
        }
    }
}

/// While alive, SIGINT/SIGTERM/SIGHUP are written as bytes to a pipe that
/// [`SignalGuard::fd`] reads. The previous handlers come back when the last
/// guard drops.
pub struct SignalGuard {
    slot: usize,
    rd: OwnedFd,
    _wr: OwnedFd,
}

impl SignalGuard {
    pub fn install() -> Result<SignalGuard> {
        let mut fds = [0i32; 2];
        // SAFETY: room for two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
            return Err(RuntimeError::last_os("pipe2"));
        }
        // SAFETY: fresh descriptors.
        let (rd, wr) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let mut inst = INSTALLED.lock().unwrap_or_else(|p| p.into_inner());
        let slot = PIPES
            .iter()
            .position(|p| {
                p.compare_exchange(-1, wr.as_raw_fd(), Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
            })
            .ok_or_else(|| RuntimeError::Unsupported("too many concurrent controllers".into()))?;
        if inst.0 == 0 {
            for sig in SHUTDOWN_SIGNALS {
                // SAFETY: installing a handler that only writes to pipes.
                unsafe {
                    let mut sa: libc::sigaction = std::mem::zeroed();
                    sa.sa_sigaction = on_signal as *const () as usize;
                    sa.sa_flags = libc::SA_RESTART;
                    libc::sigemptyset(&mut sa.sa_mask);
                    let mut old: libc::sigaction = std::mem::zeroed();
                    libc::sigaction(sig, &sa, &mut old);
                    inst.1.push((sig, old));
                }
            }
        }
        inst.0 += 1;
        Ok(SignalGuard { slot, rd, _wr: wr })
    }

    /// The read end, for poll.
    pub fn fd(&self) -> i32 {
        self.rd.as_raw_fd()
    }

    /// Signals received since the last call.
    pub fn take(&self) -> Vec<i32> {
        let mut out = Vec::new();
        let mut buf = [0u8; 64];
        loop {
            // SAFETY: non-blocking read into our buffer.
            let n = unsafe { libc::read(self.rd.as_raw_fd(), buf.as_mut_ptr().cast(), 64) };
            if n <= 0 {
                break;
            }
            out.extend(buf[..n as usize].iter().map(|&b| b as i32));
        }
        out
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        let mut inst = INSTALLED.lock().unwrap_or_else(|p| p.into_inner());
        inst.0 -= 1;
        if inst.0 == 0 {
            for (sig, old) in inst.1.drain(..) {
                // SAFETY: restoring the saved disposition.
                unsafe { libc::sigaction(sig, &old, std::ptr::null_mut()) };
            }
        }
        PIPES[self.slot].store(-1, Ordering::SeqCst);
    }
}

/// Whether `dir` is a parsched root of a live owner.
pub fn is_live_root(dir: &Path) -> bool {
    dir.file_name()
        .and_then(|n| owner_pid(&n.to_string_lossy()))
        .is_some_and(pid_alive)
}

/// Held by unit tests that raise a shutdown signal or run a controller
/// (whose guard would see the signal), so they never overlap.
#[cfg(test)]
pub(crate) static SIGNAL_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_tags_parse_back() {
        assert_eq!(owner_pid("parsched.1234"), Some(1234));
        assert_eq!(owner_pid("parsched.1234-7"), Some(1234));
        assert_eq!(owner_pid("other.1234"), None);
        assert_eq!(owner_pid("parsched.x"), None);
        let t = owner_tag();
        assert_eq!(
            owner_pid(&format!("{ROOT_PREFIX}{t}")),
            Some(std::process::id() as i32)
        );
    }

    #[test]
    fn recovery_removes_dead_owners_only() {
        let m = tempfile::tempdir().unwrap();
        // A pid that cannot exist (above pid_max) and our own.
        let dead = m.path().join("parsched.2147483600");
        let live = m.path().join(format!("parsched.{}", std::process::id()));
        fs::create_dir_all(dead.join("job0")).unwrap();
        fs::create_dir_all(&live).unwrap();
        fs::write(dead.join("job0/cgroup.freeze"), "1").unwrap();
        // tmpfs rmdir fails on non-empty dirs: remove the fake file first so
        // only the logic (not cgroupfs semantics) is tested.
        fs::remove_file(dead.join("job0/cgroup.freeze")).unwrap();
        let got = recover_stale_in(&[m.path().to_path_buf()]);
        assert_eq!(got, vec![dead.clone()]);
        assert!(!dead.exists());
        assert!(live.exists());
        assert!(is_live_root(&live));
    }

    #[test]
    fn signal_guard_sees_a_raised_signal() {
        let _serial = SIGNAL_TESTS.lock().unwrap_or_else(|p| p.into_inner());
        let g = SignalGuard::install().unwrap();
        // SAFETY: raising SIGHUP with our handler installed.
        unsafe { libc::raise(libc::SIGHUP) };
        assert_eq!(g.take(), vec![libc::SIGHUP]);
        assert!(g.take().is_empty());
    }
}
