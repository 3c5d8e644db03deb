//! Probes the real working-set estimate the regions controller makes: runs
//! `bench/memlat` with a known working set (two regions of `--size` bytes),
//! scans it like the controller (once per `--scan-ms` of its own CPU time:
//! `Rss`/`Referenced` of its private mappings from `/proc/PID/smaps`, §4's
//! estimator, then a clear), and prints per scan the CPU time since the clear,
//! the wall time since the clear, `Rss`, `Referenced` and the estimate.
//!
//! ```text
//! wss_probe [--memlat PATH] [--size 192K] [--access-time 4096] [--scan-ms 5]
//!           [--scans 40] [--clear plain|flush] [--load N] [--cpu C] [--quiet]
//! ```
//!
//! `--clear plain` is `echo 1 > clear_refs` alone (the controller before the
//! fix); `flush` adds the TLB flush (`procfs::clear_refs_flush`). `--load N`
//! runs N foreign processes that sweep 8 MB each (they compete for the CPUs,
//! the caches and the TLB); `--cpu C` pins memlat to CPU C (as a placed job
//! is: alone there, nothing evicts its TLB entries). Without `--memlat` the probe compiles
//! `bench/memlat.c` with `cc`. The last line is a JSON summary: the true
//! working set (`2 × size`), min / median / max of `Referenced`, and the
//! final estimate over the true size. Bad arguments: one line, exit 2.

use parsched_core::policy::regions::{HistogramReading, WssEstimator};
use parsched_core::RegionId;
use parsched_runtime::procfs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn die(field: &str, msg: &str) -> ! {
    eprintln!("wss_probe: {field}: {msg}");
    std::process::exit(2);
}

fn parse_size(s: &str) -> Option<u64> {
    let (num, mul) = match s.char_indices().last()? {
        (i, 'K' | 'k') => (&s[..i], 1024),
        (i, 'M' | 'm') => (&s[..i], 1024 * 1024),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().filter(|&v| v > 0).map(|v| v * mul)
}

fn build_memlat() -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/memlat.c");
    let out = std::env::temp_dir().join(format!("wss-probe-memlat-{}", std::process::id()));
    let ok = Command::new("cc")
        .args(["-O2", "-std=gnu11", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        die(
            "memlat",
            "cannot build bench/memlat.c with cc (give --memlat PATH)",
        );
    }
    out
}

fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut memlat: Option<PathBuf> = None;
    let (mut size, mut access, mut scan_ms, mut scans, mut load) =
        (192 * 1024u64, 4096u64, 5.0f64, 40u32, 0u32);
    let mut flush = true;
    let mut quiet = false;
    let mut pin: Option<u32> = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--quiet" {
            quiet = true;
            i += 1;
            continue;
        }
        let v = args
            .get(i + 1)
            .unwrap_or_else(|| die(a, "missing value"))
            .as_str();
        match a {
            "--memlat" => memlat = Some(PathBuf::from(v)),
            "--size" => {
                size = parse_size(v).unwrap_or_else(|| die("size", "expected e.g. 192K, 2M"))
            }
            "--access-time" => {
                access = v
                    .parse()
                    .ok()
                    .filter(|&x| x > 0)
                    .unwrap_or_else(|| die("access-time", "expected a positive integer"))
            }
            "--scan-ms" => {
                scan_ms = v
                    .parse()
                    .ok()
                    .filter(|&x: &f64| x > 0.0)
                    .unwrap_or_else(|| die("scan-ms", "expected a positive number"))
            }
            "--scans" => {
                scans = v
                    .parse()
                    .ok()
                    .filter(|&x| x > 0)
                    .unwrap_or_else(|| die("scans", "expected a positive integer"))
            }
            "--cpu" => {
                pin = Some(
                    v.parse()
                        .unwrap_or_else(|_| die("cpu", "expected a CPU number")),
                )
            }
            "--load" => {
                load = v
                    .parse()
                    .unwrap_or_else(|_| die("load", "expected an integer"))
            }
            "--clear" => {
                flush = match v {
                    "plain" => false,
                    "flush" => true,
                    _ => die("clear", "expected plain or flush"),
                }
            }
            _ => die(a, "unknown option"),
        }
        i += 2;
    }
    let built = memlat.is_none();
    let exe = memlat.unwrap_or_else(build_memlat);
    // Foreign load: processes sweeping 8 MB (CPU, cache and TLB pressure).
    let mut loaders: Vec<Child> = (0..load)
        .map(|_| {
            Command::new("python3")
                .args([
                    "-c",
                    "b=bytearray(8<<20)\nwhile True:\n for k in range(0,len(b),4096): b[k]=(b[k]+1)&255",
                ])
                .stdout(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| die("load", &e.to_string()))
        })
        .collect();
    let mut child = Command::new(&exe)
        .args([
            "--size",
            &size.to_string(),
            "--access-time",
            &access.to_string(),
            "--seconds",
            "600",
        ])
        .stdout(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| die("memlat", &e.to_string()));
    let pid = child.id() as i32;
    if let Some(c) = pin {
        if let Err(e) = parsched_runtime::cgroup::set_affinity(pid, &[c]) {
            die("cpu", &e.to_string());
        }
    }
    let page = 4096u64;
    let mut est = WssEstimator::new(page, HistogramReading::default());
    let clear = |pid| {
        if flush {
            procfs::clear_refs_flush(pid)
        } else {
            procfs::clear_refs(pid)
        }
    };
    let _ = clear(pid);
    let mut last_cpu = 0.0;
    let mut t_clear = Instant::now();
    let mut refs = Vec::new();
    let mut clear_us = Vec::new();
    let mut n = 0;
    if !quiet {
        println!("scan cpu_ms wall_ms rss_kb ref_kb est_kb");
    }
    while n < scans {
        std::thread::sleep(Duration::from_millis(1));
        let Some(cpu) = procfs::cpu_seconds_exact(pid) else {
            die("memlat", "exited early")
        };
        if (cpu - last_cpu) * 1e3 < scan_ms {
            continue;
        }
        let wall = t_clear.elapsed().as_secs_f64() * 1e3;
        let Some((rss, refd)) = procfs::private_referenced(pid) else {
            die("memlat", "exited early")
        };
        let pages = (rss / page) as usize;
        est.observe_count(RegionId(0), pages, ((refd / page) as usize).min(pages));
        let e = est.estimate_bytes(RegionId(0));
        n += 1;
        refs.push(refd);
        if !quiet {
            println!(
                "{n} {:.2} {wall:.2} {} {} {}",
                (cpu - last_cpu) * 1e3,
                rss / 1024,
                refd / 1024,
                e / 1024
            );
        }
        last_cpu = cpu;
        let c0 = Instant::now();
        let _ = clear(pid);
        clear_us.push(c0.elapsed().as_secs_f64() * 1e6);
        t_clear = Instant::now();
    }
    let _ = child.kill();
    let _ = child.wait();
    for l in &mut loaders {
        let _ = l.kill();
        let _ = l.wait();
    }
    if built {
        let _ = std::fs::remove_file(&exe);
    }
    let truth = 2 * size;
    let final_est = est.estimate_bytes(RegionId(0));
    // The first scans include memlat's initialisation: summarise the rest.
    let skip = (refs.len() / 4).min(8);
    let mut steady: Vec<u64> = refs[skip..].to_vec();
    let (lo, hi) = (
        *steady.iter().min().unwrap_or(&0),
        *steady.iter().max().unwrap_or(&0),
    );
    let med = median(&mut steady);
    println!(
        "{{\"size\":{size},\"access_time\":{access},\"scan_ms\":{scan_ms},\"clear\":\"{}\",\
         \"load\":{load},\"cpu\":{},\"scans\":{scans},\"true_kb\":{},\"ref_min_kb\":{},\"ref_median_kb\":{},\
         \"ref_max_kb\":{},\"estimate_kb\":{},\"estimate_over_true\":{:.3},\"clear_us_mean\":{:.1}}}",
        if flush { "flush" } else { "plain" },
        pin.map_or("null".to_string(), |c| c.to_string()),
        truth / 1024,
        lo / 1024,
        med / 1024,
        hi / 1024,
        final_est / 1024,
        final_est as f64 / truth as f64,
        clear_us.iter().sum::<f64>() / clear_us.len().max(1) as f64
    );
}
