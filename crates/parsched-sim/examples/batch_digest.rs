//! Prints a digest of every schedule (each job's start, end and killed flag,
//! the queue-length series, the processors given, the summary without the
//! wall-clock time) for every trace of a directory under a set of batch
//! configurations, for before/after comparisons of the batch simulator:
//! `cargo run --release -p parsched-sim --example batch_digest -- DIR`.
use parsched_sim::batch::{run_loaded, BatchConfig, BatchResult};
use parsched_sim::pools::Value;
use parsched_sim::swf;

fn fnv(h: &mut u64, bytes: &[u8]) {
    for b in bytes {
        *h ^= *b as u64;
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

fn digest(r: &BatchResult) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for (i, o) in r.outcomes.iter().enumerate() {
        fnv(&mut h, &o.start.to_le_bytes());
        fnv(&mut h, &o.end.to_le_bytes());
        fnv(&mut h, &[o.killed as u8]);
        for (a, b) in r.resources(i) {
            fnv(&mut h, &a.to_le_bytes());
            fnv(&mut h, &b.to_le_bytes());
        }
    }
    for (t, q) in &r.queue_length {
        fnv(&mut h, &t.to_le_bytes());
        fnv(&mut h, &q.to_le_bytes());
    }
    let mut s = r.summary.clone();
    s.wall_seconds = 0.0;
    fnv(&mut h, format!("{s:?}").as_bytes());
    h
}

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
                let val = x
                    .parse::<i64>()
                    .map(Value::Int)
                    .or_else(|_| x.parse::<f64>().map(Value::Float))
                    .unwrap_or(Value::Str(x.to_string()));
                cfg.set(k, &val).unwrap();
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
    println!("all {all:016x}");
}
