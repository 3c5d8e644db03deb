//! Small readers of `/proc`: a process's threads, its CPU time, where each
//! thread last ran, its context-switch counts, and its working set (the
//! pages referenced since the referenced bits were last cleared).

use std::fs;

/// The thread ids of a process, ascending (empty if it is gone).
pub fn tasks(pid: i32) -> Vec<i32> {
    let mut v: Vec<i32> = fs::read_dir(format!("/proc/{pid}/task"))
        .map(|rd| {
            rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort_unstable();
    v
}

/// Fields of `/proc/PID[/task/TID]/stat` after the command name, split on
/// spaces: index 0 is the state (field 3 of proc(5)).
fn stat_fields(path: &str) -> Option<Vec<String>> {
    let s = fs::read_to_string(path).ok()?;
    let after = &s[s.rfind(')')? + 2..];
    Some(after.split_whitespace().map(String::from).collect())
}

fn clk_tck() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// utime + stime of a process (all its threads, not its children), seconds.
pub fn cpu_seconds(pid: i32) -> Option<f64> {
    let f = stat_fields(&format!("/proc/{pid}/stat"))?;
    // utime = field 14, stime = 15 → indices 11, 12 after the name.
    let u: f64 = f.get(11)?.parse().ok()?;
    let s: f64 = f.get(12)?.parse().ok()?;
    Some((u + s) / clk_tck())
}

/// Exact CPU time of one thread from `/proc/PID/task/TID/schedstat`, ns.
pub fn thread_cpu_ns(pid: i32, tid: i32) -> Option<u64> {
    let s = fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat")).ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// (time on a CPU, time waiting on a run queue) of one thread from
/// `/proc/PID/task/TID/schedstat`, ns.
pub fn thread_schedstat(pid: i32, tid: i32) -> Option<(u64, u64)> {
    let s = fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat")).ok()?;
    let mut it = s.split_whitespace();
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// Exact CPU time of a process (sum over its threads' schedstat), seconds.
pub fn cpu_seconds_exact(pid: i32) -> Option<f64> {
    let ts = tasks(pid);
    if ts.is_empty() {
        return None;
    }
    Some(
        ts.iter()
            .filter_map(|&t| thread_cpu_ns(pid, t))
            .sum::<u64>() as f64
            / 1e9,
    )
}

/// The CPU a thread last ran on (field 39, `processor`).
pub fn last_cpu(pid: i32, tid: i32) -> Option<u32> {
    let f = stat_fields(&format!("/proc/{pid}/task/{tid}/stat"))?;
    f.get(36)?.parse().ok()
}

/// `Cpus_allowed_list` of a thread.
pub fn cpus_allowed(pid: i32, tid: i32) -> Option<Vec<u32>> {
    let s = fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("Cpus_allowed_list:"))?;
    crate::topology::parse_cpu_list(line.split(':').nth(1)?).ok()
}

/// (voluntary, nonvoluntary) context switches of a process — the signal a
/// flexible mode would classify jobs by (spinning jobs switch involuntarily).
pub fn ctxt_switches(pid: i32) -> Option<(u64, u64)> {
    status_ctxt_switches(&fs::read_to_string(format!("/proc/{pid}/status")).ok()?)
}

/// (voluntary, nonvoluntary) context switches of one thread.
pub fn task_ctxt_switches(pid: i32, tid: i32) -> Option<(u64, u64)> {
    status_ctxt_switches(&fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).ok()?)
}

/// (voluntary, nonvoluntary) context switches from the text of a `status` file.
fn status_ctxt_switches(status: &str) -> Option<(u64, u64)> {
    let get = |k: &str| -> Option<u64> {
        status
            .lines()
            .find(|l| l.starts_with(k))?
            .split(':')
            .nth(1)?
            .trim()
            .parse()
            .ok()
    };
    Some((
        get("voluntary_ctxt_switches")?,
        get("nonvoluntary_ctxt_switches")?,
    ))
}

/// The bytes of an smaps line `KEY   N kB`, when the line is that key's.
fn smaps_bytes(line: &str, key: &str) -> Option<u64> {
    let kb: u64 = line
        .strip_prefix(key)?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// Resident and referenced bytes of a process: `Rss:` and `Referenced:`
/// from `/proc/PID/smaps_rollup` (summed over `/proc/PID/smaps` on kernels
/// without the rollup). `Referenced` counts the resident pages whose
/// referenced (accessed) bit is set: since the last [`clear_refs`], the
/// pages touched in between — the working set of that period, measured to
/// the page (4 KB), as the kernel sees it (it includes shared pages).
pub fn rss_referenced(pid: i32) -> Option<(u64, u64)> {
    let s = fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .or_else(|_| fs::read_to_string(format!("/proc/{pid}/smaps")))
        .ok()?;
    let (mut rss, mut refd, mut seen) = (0u64, 0u64, false);
    for l in s.lines() {
        if let Some(v) = smaps_bytes(l, "Rss:") {
            rss += v;
            seen = true;
        } else if let Some(v) = smaps_bytes(l, "Referenced:") {
            refd += v;
        }
    }
    seen.then_some((rss, refd))
}

/// Resident and referenced bytes of a process's *private data*: `Rss:` and
/// `Referenced:` summed over the mappings of `/proc/PID/smaps` with no file
/// behind them (anonymous memory, `[heap]`, `[stack]`, `[anon:…]`) — seed
/// 004's private regions; code and shared libraries are its global regions,
/// mapped into every cache and left out of balancing. (File pages shared with
/// other processes also show as referenced when another process touched
/// them: about 1.3 MB of libc and loader for a small C program here.)
pub fn private_referenced(pid: i32) -> Option<(u64, u64)> {
    let s = fs::read_to_string(format!("/proc/{pid}/smaps")).ok()?;
    let (mut rss, mut refd, mut private) = (0u64, 0u64, false);
    for l in s.lines() {
        let mut f = l.split_whitespace();
        let first = f.next().unwrap_or("");
        if first.contains('-') && !first.ends_with(':') {
            // A mapping header: range perms offset dev inode [path].
            let path = f.nth(4);
            private = match path {
                None => true,
                Some(p) => p == "[heap]" || p == "[stack]" || p.starts_with("[anon"),
            };
            continue;
        }
        if !private {
            continue;
        }
        if let Some(v) = smaps_bytes(l, "Rss:") {
            rss += v;
        } else if let Some(v) = smaps_bytes(l, "Referenced:") {
            refd += v;
        }
    }
    Some((rss, refd))
}

/// Clears the referenced bits of all of a process's pages (`echo 1 >
/// /proc/PID/clear_refs`). Needs the right to ptrace the process (the same
/// user, or root).
///
/// Alone this does **not** start a reliable measurement period: the kernel
/// (6.x; since 5.12 only the soft-dirty variant flushes) clears the
/// accessed bits in the page tables without flushing the process's TLB
/// entries, and an x86 CPU sets a page's accessed bit only when it walks
/// the page table — a page whose translation stays cached in the TLB is
/// touched again and again without showing as referenced. A working set
/// that fits the TLB (1536+ entries here: 6 MB of 4 KB pages) then reads as
/// a fraction of itself, varying with whatever else evicts the TLB
/// (`docs/policies/regions.md`, "The working-set estimate"). Use
/// [`clear_refs_flush`].
pub fn clear_refs(pid: i32) -> std::io::Result<()> {
    fs::write(format!("/proc/{pid}/clear_refs"), "1")
}

/// Starts a working-set measurement period: clears the referenced bits
/// ([`clear_refs`], `1`) and then flushes the process's TLB by writing `4`
/// (clear soft-dirty), whose page-table walk ends in a `flush_tlb_mm`; every
/// page touched afterwards goes through a page walk and shows as
/// `Referenced`. On a kernel built without `CONFIG_MEM_SOFT_DIRTY` (this
/// machine's) the `4` pass changes nothing but that flush; with it, the pass
/// also write-protects the process's present pages, so its next write to
/// each costs a minor fault, and soft-dirty tracking by another tool on the
/// same process is reset.
pub fn clear_refs_flush(pid: i32) -> std::io::Result<()> {
    clear_refs(pid)?;
    fs::write(format!("/proc/{pid}/clear_refs"), "4")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_ctxt_switches_reads_both_counters() {
        let text = "Name:\tx\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(status_ctxt_switches(text), Some((12, 3)));
        assert_eq!(status_ctxt_switches("voluntary_ctxt_switches:\t1\n"), None);
    }

    #[test]
    fn reads_own_process() {
        let me = std::process::id() as i32;
        let ts = tasks(me);
        assert!(ts.contains(&me));
        assert!(cpu_seconds(me).is_some());
        assert!(cpu_seconds_exact(me).unwrap() > 0.0);
        let cpu = last_cpu(me, me).unwrap();
        assert!(cpus_allowed(me, me).unwrap().contains(&cpu) || cpu < 1024);
        let (run, _wait) = thread_schedstat(me, me).unwrap();
        assert!(run > 0);
        let (v, n) = ctxt_switches(me).unwrap();
        assert!(v + n > 0);
        assert!(tasks(i32::MAX).is_empty());
    }

    /// Clears the accessed bits, touches the first `touch` bytes of `buf`
    /// (one byte per page) and returns (referenced after − referenced
    /// before, referenced after) by `read`.
    fn touched_since_clear(
        buf: &mut [u8],
        touch: usize,
        read: fn(i32) -> Option<(u64, u64)>,
    ) -> (u64, u64) {
        let me = std::process::id() as i32;
        clear_refs(me).unwrap();
        let (_, idle) = read(me).unwrap();
        for k in (0..touch).step_by(4096) {
            buf[k] = buf[k].wrapping_add(1);
        }
        std::hint::black_box(&*buf);
        let (_, hot) = read(me).unwrap();
        (hot.saturating_sub(idle), hot)
    }

    /// Up to `ATTEMPTS` measurements until one lies in `lo..=hi`; every one
    /// must stay at or below `hi`. Another user of the accessed bits (the
    /// kernel's DAMON monitor, which this machine kind runs; see
    /// shared/notes/linux-mechanisms.md) can only make a reading miss pages,
    /// never add pages that were not touched, so a low reading is retried
    /// and a high one fails at once. While a DAMON monitor is on, its own
    /// sampling clears accessed bits between the touch and the reading (on
    /// this machine 80–86% of 8 MB seen in every one of five readings), so
    /// the floor there is half of `lo`: what a machine without DAMON must
    /// show is unchanged, and `hi` holds on both. (Issue #27: the
    /// working-set estimator says its estimate is unreliable there:
    /// `crate::damon`, and the regions policy marks its
    /// estimates with the reason.)
    fn assert_measures(
        buf: &mut [u8],
        touch: usize,
        read: fn(i32) -> Option<(u64, u64)>,
        (lo, hi): (u64, u64),
    ) {
        const ATTEMPTS: usize = 5;
        let me = std::process::id() as i32;
        let damon = crate::damon::status().disturbs(me);
        let lo = if damon.is_some() { lo / 2 } else { lo };
        let mut seen = Vec::new();
        for _ in 0..ATTEMPTS {
            let (touched, hot) = touched_since_clear(buf, touch, read);
            assert!(touched <= hi, "touched {touched} > {hi} (hot {hot})");
            seen.push(touched);
            if touched >= lo {
                if seen.len() > 1 {
                    eprintln!("readings of {touch} touched bytes: {seen:?}");
                }
                return;
            }
        }
        panic!(
            "touched {touch} bytes, {ATTEMPTS} readings below {lo}: {seen:?} (DAMON: {damon:?})"
        );
    }

    /// A working set appears in `Referenced` only once touched after a
    /// `clear_refs`; untouched resident memory does not.
    #[test]
    fn referenced_measures_what_was_touched_since_clear_refs() {
        let me = std::process::id() as i32;
        const MB: usize = 1 << 20;
        let mut buf = vec![1u8; 32 * MB]; // resident: written once
        let (rss, _) = rss_referenced(me).unwrap();
        assert!(rss >= 32 * MB as u64, "rss {rss}");
        // Touch 16 MB of the 32: the test harness's other threads touch a
        // little, so 16 MB within -1 / +4 MB; the untouched half never counts.
        let mb = |m: usize| (m * MB) as u64;
        assert_measures(&mut buf, 16 * MB, rss_referenced, (mb(15), mb(20)));
        assert!(rss_referenced(i32::MAX).is_none());
        // The private reading sees the same buffer (anonymous memory) and not
        // the executable's file pages.
        let (prss, _) = private_referenced(me).unwrap();
        assert!(prss >= 32 * MB as u64 && prss <= rss, "private rss {prss}");
        assert_measures(&mut buf, 8 * MB, private_referenced, (mb(7), mb(12)));
        assert!(private_referenced(i32::MAX).is_none());
        assert!(clear_refs(i32::MAX).is_err());
    }

    /// A working set small enough to stay in the TLB: after the flushed
    /// clear every page touched again shows as referenced, in every round
    /// (with `clear_refs` alone, most rounds here read a fraction of it: the
    /// translations stay cached and the accessed bits are not set again).
    #[test]
    fn flushed_clear_sees_pages_the_tlb_still_holds() {
        let me = std::process::id() as i32;
        const KB: usize = 1024;
        let mut buf = vec![1u8; 512 * KB];
        let touch = |b: &mut Vec<u8>| {
            for _ in 0..50 {
                for k in (0..b.len()).step_by(4096) {
                    b[k] = b[k].wrapping_add(1);
                }
            }
            std::hint::black_box(&*b);
        };
        touch(&mut buf); // the translations are in the TLB now
        for round in 0..5 {
            clear_refs_flush(me).unwrap();
            touch(&mut buf);
            let (_, hot) = private_referenced(me).unwrap();
            assert!(
                hot >= 500 * KB as u64,
                "round {round}: {hot} bytes referenced of the 512 KB touched"
            );
        }
        assert!(clear_refs_flush(i32::MAX).is_err());
    }
}
