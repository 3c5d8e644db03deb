//! The statistics files a policy shares with its jobs (a neutral module:
//! `fcs.rs` and `cosched.rs` both use it): each job's class, published to it
//! ([`ClassFiles`], named by [`CLASS_FILE_ENV`]), the synchronization
//! statistics a cooperating job publishes ([`SYNC_FILE_ENV`], read by
//! [`read_sync_file`]), the MPI ranks' views ([`read_ranks`]) and the
//! controller's bell.

use parsched_core::policy::classify::CoschedClass;

/// The environment variable that names a job's synchronization-statistics
/// file under FCS.
pub const SYNC_FILE_ENV: &str = "PARSCHED_FCS_SYNC_FILE";

/// The first 8 bytes of a synchronization-statistics file a job writes.
pub const SYNC_MAGIC: &[u8; 8] = b"PSYNC1\0\0";

/// Size of a synchronization-statistics file: the magic, then up to
/// [`SYNC_SLOTS`] slots of four native-endian u64 (synchronizations
/// completed, wall-clock nanoseconds waiting in them (informational), CPU
/// nanoseconds spent spinning in them, unused), one per thread or process
/// of the job, each written only by its owner.
pub const SYNC_FILE_BYTES: usize = 4096;

/// Slots of a synchronization-statistics file.
pub const SYNC_SLOTS: usize = (SYNC_FILE_BYTES - 8) / 32;

/// A job's synchronization statistics, summed over its slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct SyncCounts {
    pub(crate) syncs: u64,
    pub(super) wait_ns: u64,
    pub(super) spin_ns: u64,
    /// Wall-clock nanoseconds the publishing processes spent blocked while
    /// waiting, where the publisher measures it: the MPI library
    /// (`libparsched_mpi`), recognised by its extended file (longer than
    /// [`SYNC_FILE_BYTES`]). `None` for other publishers (bench/bsp), whose
    /// blocked time the controller measures itself.
    pub(super) blocked_ns: Option<u64>,
}

/// Reads a synchronization-statistics file: `None` unless it starts with
/// [`SYNC_MAGIC`] (the job does not publish).
pub(crate) fn read_sync_file(f: &std::fs::File) -> Option<SyncCounts> {
    use std::os::unix::fs::FileExt;
    let mut buf = [0u8; SYNC_FILE_BYTES];
    let n = f.read_at(&mut buf, 0).ok()?;
    if n < 8 || &buf[..8] != SYNC_MAGIC {
        return None;
    }
    let word = |k: usize| -> u64 {
        let o = 8 + 8 * k;
        if o + 8 > n {
            return 0;
        }
        u64::from_ne_bytes(buf[o..o + 8].try_into().expect("8 bytes"))
    };
    let mut c = SyncCounts::default();
    let mut blocked = 0u64;
    for slot in 0..SYNC_SLOTS {
        c.syncs = c.syncs.wrapping_add(word(4 * slot));
        c.wait_ns = c.wait_ns.wrapping_add(word(4 * slot + 1));
        c.spin_ns = c.spin_ns.wrapping_add(word(4 * slot + 2));
        blocked = blocked.wrapping_add(word(4 * slot + 3));
    }
    let extended = f
        .metadata()
        .map(|m| m.len() > SYNC_FILE_BYTES as u64)
        .unwrap_or(false);
    c.blocked_ns = extended.then_some(blocked);
    Some(c)
}

/// Bytes of one rank's slot in the MPI library's extension, after the first
/// `SYNC_FILE_BYTES` (docs/formats/fcs-sync-file.md).
pub const RANK_SLOT_BYTES: usize = 64;

/// How a rank waits now (the extension's "waiting" word).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    Running,
    Spinning,
    Blocked,
}

/// One rank as the MPI library (`libparsched_mpi`) publishes it: what the
/// seed 003 arrival actions need to know of an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankView {
    /// MPI_COMM_WORLD rank (the slot).
    pub rank: usize,
    pub pid: u32,
    pub tid: u32,
    /// Messages sent to it and not yet received by it.
    pub pending: u64,
    pub waiting: Waiting,
    /// CLOCK_MONOTONIC ns of the last send to it (0: none).
    pub last_arrival_ns: u64,
    /// What it rang the controller's bell for (`PARSCHED_MPI_BELL`), until
    /// the controller clears it (`ClassFiles::clear_bell`).
    pub bell: Bell,
    /// CLOCK_MONOTONIC ns of its last poll while spinning (recent: it runs).
    pub poll_ns: u64,
    /// It holds a boost the controller flagged and it has not given up.
    pub boosted: bool,
}

/// Why a rank's slot rang the controller's bell (the extension's word at 52).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bell {
    None,
    /// A message was sent to it while it spun (dynamic coscheduling).
    Arrival,
    /// Its spin time ran out under spin-yield: boost another process.
    Yield,
}

/// The ranks of an MPI library's statistics file that have started (a pid
/// published), in rank order; empty for a file without the magic or the
/// extension.
pub fn read_ranks(f: &std::fs::File) -> Vec<RankView> {
    use std::os::unix::fs::FileExt;
    let len = SYNC_FILE_BYTES + SYNC_SLOTS * RANK_SLOT_BYTES;
    let mut buf = vec![0u8; len];
    let n = f.read_at(&mut buf, 0).unwrap_or(0);
    if n < len || &buf[..8] != SYNC_MAGIC {
        return Vec::new();
    }
    let u32_at = |o: usize| u32::from_ne_bytes(buf[o..o + 4].try_into().expect("4 bytes"));
    let u64_at = |o: usize| u64::from_ne_bytes(buf[o..o + 8].try_into().expect("8 bytes"));
    (0..SYNC_SLOTS)
        .filter_map(|rank| {
            let o = SYNC_FILE_BYTES + rank * RANK_SLOT_BYTES;
            let pid = u32_at(o + 32);
            (pid != 0).then(|| RankView {
                rank,
                pid,
                tid: u32_at(o + 36),
                pending: u64_at(o + 8).saturating_sub(u64_at(o + 16)),
                waiting: match u32_at(o + 4) {
                    1 => Waiting::Spinning,
                    2 => Waiting::Blocked,
                    _ => Waiting::Running,
                },
                last_arrival_ns: u64_at(o + 40),
                bell: match u32_at(o + 52) {
                    1 => Bell::Arrival,
                    2 => Bell::Yield,
                    _ => Bell::None,
                },
                poll_ns: u64_at(o + 56),
                boosted: u32_at(o + 48) != 0,
            })
        })
        .collect()
}

/// The environment variable that names a job's class file under FCS.
pub const CLASS_FILE_ENV: &str = "PARSCHED_FCS_CLASS_FILE";

/// Files that publish each job's current FCS class to the job itself, so a
/// cooperating program can wait by class as the FCS papers' communication
/// library does (coscheduled CS processes busy-wait, the others spin-block):
/// `bench/bsp --wait adaptive`. One file per job in a private directory
/// (under /dev/shm when it exists), named to the job by
/// [`CLASS_FILE_ENV`]; its content is always 4 bytes, `CS \n`, `F  \n`,
/// `DC \n` or `-  \n` (unclassified), rewritten in place (never truncated:
/// a reader may have it mapped), so the first byte says the class. Removed
/// with the controller.
#[derive(Debug)]
pub(crate) struct ClassFiles {
    dir: tempfile::TempDir,
    files: Vec<std::fs::File>,
    /// The jobs' synchronization-statistics files ([`SYNC_FILE_ENV`]),
    /// zeroed, writable by the job; none without `fcs_sync_stats`.
    sync: Vec<std::fs::File>,
}

impl ClassFiles {
    /// The class files of `jobs` jobs and, with `sync_stats`, their
    /// synchronization-statistics files.
    pub(crate) fn create(jobs: usize, sync_stats: bool) -> std::io::Result<ClassFiles> {
        use std::os::unix::fs::PermissionsExt;
        let shm = std::path::Path::new("/dev/shm");
        let mut b = tempfile::Builder::new();
        b.prefix("parsched-fcs-");
        let dir = if shm.is_dir() {
            b.tempdir_in(shm)
        } else {
            b.tempdir()
        }?;
        // Jobs may run as the invoking user (sudo): readable by all.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))?;
        let mut files = Vec::with_capacity(jobs);
        let mut sync = Vec::with_capacity(jobs);
        for i in 0..jobs {
            let path = dir.path().join(format!("job{i}.class"));
            let f = std::fs::File::create(&path)?;
            f.set_permissions(std::fs::Permissions::from_mode(0o644))?;
            files.push(f);
            if !sync_stats {
                continue;
            }
            let path = dir.path().join(format!("job{i}.sync"));
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path)?;
            f.set_len(SYNC_FILE_BYTES as u64)?;
            // (the job may run as the invoking user: it writes the file)
            f.set_permissions(std::fs::Permissions::from_mode(0o666))?;
            sync.push(f);
        }
        let c = ClassFiles { dir, files, sync };
        for i in 0..jobs {
            c.publish(i, None)?;
        }
        Ok(c)
    }

    pub(crate) fn path(&self, i: usize) -> std::path::PathBuf {
        self.dir.path().join(format!("job{i}.class"))
    }

    /// Job `i`'s synchronization-statistics file, if there are any.
    pub(crate) fn sync_path(&self, i: usize) -> Option<std::path::PathBuf> {
        (i < self.sync.len()).then(|| self.dir.path().join(format!("job{i}.sync")))
    }

    /// Job `i`'s synchronization-statistics file, if there are any.
    pub(crate) fn sync_file(&self, i: usize) -> Option<&std::fs::File> {
        self.sync.get(i)
    }

    /// Flags rank `rank` of job `i` as boosted in its statistics file (the
    /// MPI library drops the boost itself once the rank has received).
    pub(crate) fn flag_boost(&self, i: usize, rank: usize) -> std::io::Result<()> {
        self.write_slot_word(i, rank, 48, 1)
    }

    /// Clears rank `rank` of job `i`'s bell word (the library rings again
    /// only once it is clear).
    pub(crate) fn clear_bell(&self, i: usize, rank: usize) -> std::io::Result<()> {
        self.write_slot_word(i, rank, 52, 0)
    }

    fn write_slot_word(&self, i: usize, rank: usize, at: usize, v: u32) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        let Some(f) = self.sync.get(i) else {
            return Ok(());
        };
        let at = (SYNC_FILE_BYTES + rank * RANK_SLOT_BYTES + at) as u64;
        f.write_all_at(&v.to_ne_bytes(), at)
    }

    /// Makes the controller's bell: a FIFO in the files' directory that the
    /// MPI library writes a byte to (`PARSCHED_MPI_BELL`), opened here for
    /// reading without blocking (and for writing, so it never reports a
    /// hang-up when the last rank closes it). Returns its path and the
    /// descriptor.
    pub(crate) fn make_bell(&self) -> std::io::Result<(std::path::PathBuf, std::os::fd::OwnedFd)> {
        use std::os::fd::FromRawFd;
        use std::os::unix::ffi::OsStrExt;
        let path = self.dir.path().join("bell");
        let c = std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        // SAFETY: a valid C string; plain syscalls.
        if unsafe { libc::mkfifo(c.as_ptr(), 0o622) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // (mkfifo's mode is masked by the umask: jobs may run as the user)
        // SAFETY: as above.
        unsafe { libc::chmod(c.as_ptr(), 0o622) };
        // SAFETY: as above; a non-negative result is a new descriptor.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: fd is ours.
        Ok((path, unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }))
    }

    /// Job `i`'s synchronization statistics, if it publishes them.
    pub(super) fn sync_counts(&self, i: usize) -> Option<SyncCounts> {
        read_sync_file(self.sync.get(i)?)
    }

    /// Writes job `i`'s class (`None`: unclassified).
    pub(crate) fn publish(&self, i: usize, class: Option<CoschedClass>) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        let text: &[u8; 4] = match class {
            Some(CoschedClass::RequiresCoscheduling) => b"CS \n",
            Some(CoschedClass::PrefersCoscheduling) => b"F  \n",
            Some(CoschedClass::DoesNotCare) => b"DC \n",
            None => b"-  \n",
        };
        self.files[i].write_all_at(text, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file(len: usize, words: &[(usize, u64)]) -> std::fs::File {
        let mut buf = vec![0u8; len];
        buf[..8].copy_from_slice(SYNC_MAGIC);
        for &(k, v) in words {
            buf[8 + 8 * k..16 + 8 * k].copy_from_slice(&v.to_ne_bytes());
        }
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&buf).unwrap();
        f
    }

    #[test]
    fn the_mpi_library_s_blocked_time_is_read_from_its_extended_file_only() {
        // slot 0: 3 syncs, 5 ns spinning, 7 ns blocked; slot 1: 2 syncs, 11 ns blocked
        let words = [(0, 3), (2, 5), (3, 7), (4, 2), (7, 11)];
        let plain = read_sync_file(&file(SYNC_FILE_BYTES, &words)).unwrap();
        assert_eq!((plain.syncs, plain.spin_ns, plain.blocked_ns), (5, 5, None));
        let mpi = read_sync_file(&file(SYNC_FILE_BYTES + 127 * 64, &words)).unwrap();
        assert_eq!((mpi.syncs, mpi.blocked_ns), (5, Some(18)));
        assert!(read_sync_file(&tempfile::tempfile().unwrap()).is_none());
    }

    #[test]
    fn ranks_are_read_from_the_extension_with_their_pending_messages() {
        let len = SYNC_FILE_BYTES + SYNC_SLOTS * RANK_SLOT_BYTES;
        let mut buf = vec![0u8; len];
        buf[..8].copy_from_slice(SYNC_MAGIC);
        let put32 =
            |b: &mut Vec<u8>, o: usize, v: u32| b[o..o + 4].copy_from_slice(&v.to_ne_bytes());
        let put64 =
            |b: &mut Vec<u8>, o: usize, v: u64| b[o..o + 8].copy_from_slice(&v.to_ne_bytes());
        // rank 0: pid 100, 5 sent, 3 received, blocked; rank 2: pid 102,
        // spinning, nothing pending; rank 1 never started
        let o0 = SYNC_FILE_BYTES;
        let o2 = SYNC_FILE_BYTES + 2 * RANK_SLOT_BYTES;
        put32(&mut buf, o0 + 4, 2);
        put64(&mut buf, o0 + 8, 5);
        put64(&mut buf, o0 + 16, 3);
        put32(&mut buf, o0 + 32, 100);
        put32(&mut buf, o0 + 36, 101);
        put64(&mut buf, o0 + 40, 777);
        put32(&mut buf, o0 + 48, 1);
        put32(&mut buf, o0 + 52, 2);
        put64(&mut buf, o0 + 56, 555);
        put32(&mut buf, o2 + 4, 1);
        put32(&mut buf, o2 + 32, 102);
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&buf).unwrap();
        let r = read_ranks(&f);
        assert_eq!(r.len(), 2);
        assert_eq!(
            r[0],
            RankView {
                rank: 0,
                pid: 100,
                tid: 101,
                pending: 2,
                waiting: Waiting::Blocked,
                last_arrival_ns: 777,
                bell: Bell::Yield,
                poll_ns: 555,
                boosted: true,
            }
        );
        assert_eq!(
            (r[1].rank, r[1].waiting, r[1].pending),
            (2, Waiting::Spinning, 0)
        );
        assert_eq!(r[1].bell, Bell::None);
        // a plain 4096-byte file (bench/bsp's) has no ranks
        assert!(read_ranks(&file(SYNC_FILE_BYTES, &[(0, 1)])).is_empty());
    }
}
