//! Figure 9 and the balancing experiment from the simulated machine:
//! `cargo run --release -p parsched-sim --example regions_machine [lru]`.
use parsched_sim::region_machine::{run, CacheModel, RegionsConfig, Workload};
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
}
