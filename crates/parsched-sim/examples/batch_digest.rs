//! Prints a digest of every schedule (each job's start, end and killed flag,
//! the queue-length series, the processors given, the summary without the
//! wall-clock time) for every trace of a directory under a set of batch
//! configurations, for before/after comparisons of the batch simulator:
//! `cargo run --release -p parsched-sim --example batch_digest -- DIR`.
//! After the traces: generated Lublin–Feitelson workloads (fixed seeds) with
//! pseudo-random requested times (exact, over- and under-estimates), load
//! scaled, under fcfs, easy and conservative (`synthetic ...` lines).
use parsched_core::Value;
use parsched_sim::machines::batch::{offered_load, run_loaded, scale_load, simulate, BatchConfig};
use parsched_sim::workloads::{lublin, swf};

mod common;

use common::{digest, fnv};

fn main() {
    let dir = std::env::args().nth(1).expect("usage: batch_digest DIR");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".swf"))
        .collect();
    paths.sort();
    let variants: &[&[(&str, &str)]] = &[
        &[("policy", "fcfs")],
        &[("policy", "easy")],
        &[("policy", "conservative")],
        &[("policy", "gang")],
        &[("policy", "gang"), ("gang_backfill", "false")],
        &[
            ("policy", "gang"),
            ("slot_allocation", "best_fit"),
            ("mpl", "2"),
            ("quantum", "600"),
        ],
        &[("policy", "gang"), ("mpl", "1")],
        &[
            ("policy", "gang"),
            ("kill_on_overrun", "true"),
            ("quantum", "7"),
            ("load_factor", "1.7"),
        ],
        &[
            ("policy", "easy"),
            ("kill_on_overrun", "true"),
            ("load_factor", "1.5"),
        ],
        &[("policy", "conservative"), ("track_resources", "false")],
        &[
            ("policy", "fcfs"),
            ("load_factor", "2.5"),
            ("too_wide", "clamp"),
        ],
    ];
    let mut all = 0xcbf2_9ce4_8422_2325u64;
    for p in &paths {
        for v in variants {
            let mut cfg = BatchConfig::default();
            for (k, x) in v.iter() {
                cfg.set(k, &common::value(x)).unwrap();
            }
            let trace = swf::load_file(p, &cfg.rules).unwrap();
            let r = run_loaded(trace, &cfg).unwrap();
            let d = digest(&r);
            fnv(&mut all, &d.to_le_bytes());
            let s = &r.summary;
            println!(
                "{} {:?}: {d:016x} jobs {} wait {} bsld {} util {} switches {}",
                p.file_name().unwrap().to_string_lossy(),
                v,
                s.jobs,
                s.avg_wait,
                s.avg_bounded_slowdown,
                s.utilization,
                s.slot_switches
            );
        }
    }
    // Generated workloads: (jobs, procs, seed, offered load).
    for &(n, procs, seed, load) in &[
        (20_000u64, 256u32, 1u64, 0.95),
        (20_000, 1024, 2, 1.05),
        (30_000, 8192, 3, 0.9),
        (5_000, 64, 4, 1.3),
    ] {
        let mut lc = lublin::LublinConfig::for_machine(procs);
        lc.jobs = n;
        lc.seed = seed;
        lc.include_types = false;
        let mut jobs = lublin::generate(&lc, &Default::default()).unwrap().jobs;
        jobs.retain(|j| j.procs <= procs);
        common::random_estimates(&mut jobs, seed);
        let f = load / offered_load(&jobs, procs);
        scale_load(&mut jobs, f);
        for policy in ["fcfs", "easy", "conservative"] {
            for kill in [false, true] {
                let mut cfg = BatchConfig::default();
                cfg.set("policy", &Value::Str(policy.into())).unwrap();
                cfg.set("kill_on_overrun", &Value::Bool(kill)).unwrap();
                let r = simulate(jobs.clone(), procs, &cfg).unwrap();
                let d = digest(&r);
                fnv(&mut all, &d.to_le_bytes());
                let s = &r.summary;
                println!(
                    "synthetic {n}x{procs} seed {seed} load {load} {policy} kill {kill}: {d:016x} jobs {} wait {} bsld {} sim {:.3}s",
                    s.jobs, s.avg_wait, s.avg_bounded_slowdown, s.wall_seconds
                );
            }
        }
    }
    println!("all {all:016x}");
}
