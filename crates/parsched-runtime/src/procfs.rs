//! Small readers of `/proc`: a process's threads, its CPU time, where each
//! thread last ran, and its context-switch counts.

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
    let s = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let get = |k: &str| -> Option<u64> {
        s.lines()
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

/// (voluntary, nonvoluntary) context switches of one thread.
pub fn task_ctxt_switches(pid: i32, tid: i32) -> Option<(u64, u64)> {
    let s = fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).ok()?;
    let get = |k: &str| -> Option<u64> {
        s.lines()
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
