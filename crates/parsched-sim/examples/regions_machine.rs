//! Figure 9 and the balancing experiment from the simulated machine:
//! `cargo run --release -p parsched-sim --example regions_machine [lru]`.
use parsched_sim::machines::regions::{run, CacheModel, Regioning, RegionsConfig, Workload};
use std::time::Instant;

fn main() {
    let lru = std::env::args().any(|a| a == "lru");
    let model = if lru {
        CacheModel::Lru
    } else {
        CacheModel::Footprint
    };
    for (machine, sizes) in [
        (
            "clovertown",
            vec![2.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 16.0, 24.0],
        ),
        (
            "westmere",
            vec![4.0, 8.0, 12.0, 16.0, 20.0, 24.0, 32.0, 48.0],
        ),
    ] {
        let t0 = Instant::now();
        println!("{machine} ({model:?}): normalized performance (micro-schedules/s)");
        print!("| WSS MB |");
        for k in (8..=20).step_by(2) {
            print!(" 2^{k} |");
        }
        println!();
        for &w in &sizes {
            print!("| {w} |");
            for k in (8..=20).step_by(2) {
                let cfg = RegionsConfig {
                    machine: machine.into(),
                    workload: Workload::Memlat,
                    wss_mb: w,
                    access_time: 1 << k,
                    accesses: if lru { 1 << 23 } else { 1 << 24 },
                    cache_model: model,
                    ..RegionsConfig::default()
                };
                let r = run(&cfg).unwrap();
                print!(
                    " {:.2} ({:.0}) |",
                    r.normalized_performance, r.microschedules_per_s
                );
            }
            println!();
        }
        let b = run(&RegionsConfig {
            machine: machine.into(),
            workload: Workload::Balance,
            cache_model: model,
            ..RegionsConfig::default()
        })
        .unwrap();
        println!(
            "balance: speedup {:.2}, per program {:?}, loads {:?} vs standard {:?}; {:.1} s",
            b.speedup.unwrap(),
            b.speedup_per_program
                .iter()
                .map(|x| (x * 100.0).round() / 100.0)
                .collect::<Vec<_>>(),
            b.cache_loads,
            b.cache_loads_standard,
            t0.elapsed().as_secs_f64()
        );
    }
    online();
}

/// `regioning=online` beside `declared`: the same placement reached from
/// simulated access bits (§4's estimator every `scan_ms`) and the balancer.
fn online() {
    println!("\nonline regioning (scan every 5 ms / 10 ms) against the declared regions, 2^25 accesses per program:");
    for (machine, workload, wss) in [
        ("clovertown", Workload::Memlat, 6.0),
        ("westmere", Workload::Memlat, 20.0),
        ("clovertown", Workload::Balance, 6.0),
        ("westmere", Workload::Balance, 6.0),
    ] {
        for k in [14u32, 16] {
            let declared = RegionsConfig {
                machine: machine.into(),
                workload,
                wss_mb: wss,
                access_time: 1 << k,
                accesses: 1 << 25,
                ..RegionsConfig::default()
            };
            let d = run(&declared).unwrap();
            for scan in [5.0, 10.0] {
                let o = run(&RegionsConfig {
                    regioning: Regioning::Online,
                    scan_ms: scan,
                    ..declared.clone()
                })
                .unwrap();
                println!(
                    "  {machine} {workload:?} 2^{k} scan {scan} ms: gain {:.3} (declared {:.3}); placement {} ({:?}); estimates MB {:?}; {} re-balances, last at {:.0} ms of {:.0} ms; {} micro-schedules (declared {})",
                    o.normalized_performance,
                    d.normalized_performance,
                    if o.region.placement == d.region.placement { "same" } else { "DIFFERENT" },
                    o.region.placement,
                    o.region
                        .estimates
                        .iter()
                        .map(|p| p.iter().map(|b| (*b as f64 / 1048576.0 * 1000.0).round() / 1000.0).collect::<Vec<_>>())
                        .collect::<Vec<_>>(),
                    o.region.rebalances,
                    o.region.last_rebalance_ns / 1e6,
                    o.region.makespan_ns / 1e6,
                    o.region.microschedules,
                    d.region.microschedules
                );
            }
        }
    }
}
