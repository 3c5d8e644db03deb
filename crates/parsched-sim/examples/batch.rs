//! Runs a workload trace on the batch machine:
//! `cargo run --release --example batch -- TRACE.swf[.gz] [KEY=VALUE ...] [repeat=N] [jobs_csv=FILE] [swf_out=FILE]`
//! (keys of `BatchConfig`, e.g. `policy=fcfs|easy|conservative|gang`,
//! `procs=N`). `TRACE` may also be `lublin:JOBS:PROCS` (a generated
//! Lublin–Feitelson workload, typeless). `concat=N` repeats the trace N times
//! back to back (for large benchmarks); `widen=N` runs N copies side by side
//! on N times the processors (copy `k` rotated by `k/N` of the trace's span,
//! so a real log's estimates and job mix meet a large machine's long
//! queues). `load=X` scales the interarrival
//! times so that the offered load is X (after `concat`), e.g. the
//! 450,000-job benchmark: `lublin:450000:8192 load=0.9 policy=easy`.
//! `estimates=random` replaces requested times by pseudo-random ones (30%
//! exact, 10% half the run time, 10% up to 10 min over, 50% 2-10× over;
//! the rule of the `batch_digest` example), as users' estimates are.
//! Prints the load report, the metrics, the schedule's digest (that of
//! the `batch_digest` example)
//! and the speed in jobs per second (simulation only, and including reading
//! the trace).
use parsched_sim::machines::batch::{self, run_loaded, BatchConfig};
use parsched_sim::workloads::{lublin, swf};
use std::time::Instant;

mod common;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: batch TRACE [KEY=VALUE ...]");
        std::process::exit(2);
    };
    let mut cfg = BatchConfig::default();
    let mut repeat = 1;
    let mut jobs_csv = None;
    let mut swf_out = None;
    let mut concat = 1u64;
    let mut widen = 1u64;
    let mut load = None;
    let mut random_estimates = false;
    for arg in args {
        let (k, v) = common::key_value(&arg);
        match k {
            "repeat" => repeat = v.parse().expect("repeat=N"),
            "concat" => concat = v.parse().expect("concat=N"),
            "widen" => widen = v.parse().expect("widen=N"),
            "estimates" => random_estimates = v == "random",
            "load" => load = Some(v.parse::<f64>().expect("load=X")),
            "jobs_csv" => jobs_csv = Some(v.to_string()),
            "swf_out" => swf_out = Some(v.to_string()),
            _ => common::set_or_exit(k, v, |k, val| cfg.set(k, val)),
        }
    }
    let t0 = Instant::now();
    let loaded = if let Some(spec) = path.strip_prefix("lublin:") {
        let (n, p) = spec.split_once(':').expect("lublin:JOBS:PROCS");
        let mut lc = lublin::LublinConfig::for_machine(p.parse().expect("PROCS"));
        lc.jobs = n.parse().expect("JOBS");
        lc.include_types = false;
        lublin::generate(&lc, &cfg.rules).map_err(|e| e.to_string())
    } else {
        swf::load_file(&path, &cfg.rules).map_err(|e| e.to_string())
    };
    let mut trace = match loaded {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {path}: {e}");
            std::process::exit(2);
        }
    };
    if concat > 1 {
        let span = trace.jobs.last().map_or(0, |j| j.submit) + 1;
        let base = trace.jobs.clone();
        for k in 1..concat {
            trace.jobs.extend(base.iter().map(|j| swf::BatchJob {
                id: j.id + (k * base.len() as u64) as i64,
                submit: j.submit + k * span,
                ..*j
            }));
        }
        trace.report.kept *= concat;
        trace.report.records *= concat;
    }
    if widen > 1 {
        let span = trace.jobs.last().map_or(0, |j| j.submit) + 1;
        let base = trace.jobs.clone();
        for k in 1..widen {
            let shift = span * k / widen;
            trace.jobs.extend(base.iter().map(|j| swf::BatchJob {
                id: j.id + (k * base.len() as u64) as i64,
                submit: (j.submit + shift) % span,
                ..*j
            }));
        }
        trace.jobs.sort_by_key(|j| (j.submit, j.id));
        let procs = cfg
            .procs
            .or(trace.header.machine_procs().map(|p| p as u32))
            .expect("procs");
        cfg.procs = Some(procs * widen as u32);
        trace.report.kept *= widen;
        trace.report.records *= widen;
    }
    if random_estimates {
        common::random_estimates(&mut trace.jobs, 0);
    }
    if let Some(target) = load {
        let procs = cfg
            .procs
            .or(trace.header.machine_procs().map(|p| p as u32))
            .expect("procs");
        trace.jobs.retain(|j| j.procs <= procs);
        let f = target / batch::offered_load(&trace.jobs, procs);
        batch::scale_load(&mut trace.jobs, f);
        println!("offered load scaled by {f:.4} to {target}");
    }
    let load = t0.elapsed().as_secs_f64();
    println!(
        "{path}: {} records, {} kept, read in {:.3}s",
        trace.report.records, trace.report.kept, load
    );
    for (why, n) in trace.report.reasons() {
        println!("  {n:>7}  {why}");
    }
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..repeat {
        match run_loaded(trace.clone(), &cfg) {
            Ok(r) => {
                best = best.min(r.summary.wall_seconds);
                last = Some(r);
            }
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(2);
            }
        }
    }
    let r = last.expect("at least one run");
    let s = &r.summary;
    println!(
        "policy {} procs {}: jobs {} avg_wait {:.1}s avg_bsld {:.3} avg_slowdown {:.3} util {:.4} makespan {}s max_queue {} avg_queue {:.2} killed {} switches {}",
        r.policy, r.procs, s.jobs, s.avg_wait, s.avg_bounded_slowdown, s.avg_slowdown,
        s.utilization, s.makespan, s.max_queue, s.avg_queue, s.killed, s.slot_switches
    );
    println!("digest {:016x}", common::digest(&r));
    println!(
        "simulation {:.4}s (best of {repeat}): {:.0} jobs/s; with reading {:.0} jobs/s",
        best,
        s.jobs as f64 / best,
        s.jobs as f64 / (best + load)
    );
    if let Some(f) = jobs_csv {
        r.write_jobs_csv(std::io::BufWriter::new(std::fs::File::create(f).unwrap()))
            .unwrap();
    }
    if let Some(f) = swf_out {
        r.write_swf(std::io::BufWriter::new(std::fs::File::create(f).unwrap()))
            .unwrap();
    }
}
