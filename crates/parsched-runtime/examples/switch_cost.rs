//! Measures the slot-switch cost (freeze + thaw) of each freezer backend for
//! 1, 8 and 64 busy processes in one group, the way the controller does it
//! (at SCHED_FIFO where permitted). Needs root.
//!
//! ```text
//! switch_cost [--reps 40] [--sizes 1,8,64] [--backends cgroup2,cgroup1,cgroup1-nokeep,signal]
//! ```
//! Prints a Markdown table (medians and 90th percentiles, µs) and, with
//! `--json`, one JSON object per row.

use parsched_runtime::cgroup::{Cgroup1, Cgroup2, Freezer, Signal};
use parsched_runtime::controller::{enter_realtime, leave_realtime};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn open(kind: &str, tag: &str) -> Result<Box<dyn Freezer>, String> {
    let r: Result<Box<dyn Freezer>, _> = match kind {
        "cgroup2" => Cgroup2::detect(tag).map(|c| Box::new(c) as _),
        "cgroup1" => Cgroup1::detect(tag).map(|c| Box::new(c) as _),
        "cgroup1-nokeep" => match parsched_runtime::cgroup::v1_mount("freezer") {
            Some(m) => Cgroup1::new(&m, tag, false).map(|c| Box::new(c) as _),
            None => return Err("no v1 freezer".into()),
        },
        "signal" => Ok(Box::new(Signal::new()) as _),
        k => return Err(format!("unknown backend {k}")),
    };
    r.map_err(|e| e.to_string())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let get = |k: &str| {
        args.iter()
            .position(|a| a == k)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let reps: usize = get("--reps").and_then(|s| s.parse().ok()).unwrap_or(40);
    let sizes: Vec<usize> = get("--sizes")
        .unwrap_or("1,8,64".into())
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    let backends: Vec<String> = get("--backends")
        .unwrap_or("cgroup2,cgroup1,cgroup1-nokeep,signal".into())
        .split(',')
        .map(String::from)
        .collect();
    let json = args.iter().any(|a| a == "--json");
    let rt = enter_realtime(10);
    if let Err(w) = &rt {
        eprintln!("warning: {w}");
    }
    println!("µs, p50 / p90. request = the freeze write returns; confirmed = the kernel reports");
    println!("the group frozen; switch = confirmed freeze + thaw.\n");
    println!("| backend | N | freeze request | freeze confirmed | thaw | switch |");
    println!("|---|---|---|---|---|---|");
    for b in &backends {
        for &n in &sizes {
            let tag = format!("{}-cost-{b}-{n}", std::process::id());
            let mut f = match open(b, &tag) {
                Ok(f) => f,
                Err(e) => {
                    println!("| {b} | {n} | unavailable: {e} | | | |");
                    continue;
                }
            };
            f.create("g").unwrap();
            let join = f.join_files("g");
            let mut kids: Vec<Child> = (0..n)
                .map(|_| {
                    let mut c = Command::new("sh");
                    c.args(["-c", "while :; do :; done"]).stdout(Stdio::null());
                    let _ = &join;
                    c.spawn().unwrap()
                })
                .collect();
            for k in &kids {
                f.add_pid("g", k.id() as i32).unwrap();
            }
            std::thread::sleep(Duration::from_millis(100));
            let (mut fz, mut th, mut sw, mut rq) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for _ in 0..reps {
                let t0 = Instant::now();
                f.request_freeze("g").unwrap();
                rq.push(t0.elapsed().as_secs_f64() * 1e6);
                f.confirm_frozen("g").unwrap();
                let t1 = Instant::now();
                f.thaw("g").unwrap();
                let t2 = Instant::now();
                fz.push((t1 - t0).as_secs_f64() * 1e6);
                th.push((t2 - t1).as_secs_f64() * 1e6);
                sw.push((t2 - t0).as_secs_f64() * 1e6);
                std::thread::sleep(Duration::from_millis(20));
            }
            let row = [
                pct(&mut rq, 0.5),
                pct(&mut rq, 0.9),
                pct(&mut fz, 0.5),
                pct(&mut fz, 0.9),
                pct(&mut th, 0.5),
                pct(&mut th, 0.9),
                pct(&mut sw, 0.5),
                pct(&mut sw, 0.9),
            ];
            println!(
                "| {b} | {n} | {:.0} / {:.0} | {:.0} / {:.0} | {:.0} / {:.0} | {:.0} / {:.0} |",
                row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7]
            );
            if json {
                eprintln!(
                    "{}",
                    serde_json::json!({"backend": b, "n": n, "request_p50_us": row[0],
                        "request_p90_us": row[1], "freeze_p50_us": row[2],
                        "freeze_p90_us": row[3], "thaw_p50_us": row[4], "thaw_p90_us": row[5],
                        "switch_p50_us": row[6], "switch_p90_us": row[7]})
                );
            }
            f.kill("g").unwrap();
            for k in kids.iter_mut() {
                let _ = k.kill();
                let _ = k.wait();
            }
            f.cleanup().unwrap();
        }
    }
    if rt.is_ok() {
        leave_realtime();
    }
}
