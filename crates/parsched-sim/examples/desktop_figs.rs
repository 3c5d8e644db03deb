//! Seed 002's Figures 1–2 (§4.1) in simulation: `cargo run --release -p
//! parsched-sim --example desktop_figs -- [key=value ...]` (keys of
//! `parsched_sim::machines::desktop::figs::FigureConfig`; `machine=es40|potomac` runs
//! one machine, default both). Prints each machine's grid of run times (s):
//! k parallel programs down, s sequential stressors across, per scheduler.
use parsched_core::Value;
use parsched_sim::machines::cluster::ClusterOptions;
use parsched_sim::machines::desktop::figs::{format_grid, run_figure, FigureConfig, FigureMachine};

fn main() {
    let mut sets: Vec<(String, String)> = Vec::new();
    let mut machines = vec![FigureMachine::Es40, FigureMachine::Potomac];
    for a in std::env::args().skip(1) {
        let (k, v) = a.split_once('=').expect("key=value");
        if k == "machine" {
            machines = vec![match v {
                "potomac" => FigureMachine::Potomac,
                "es40" => FigureMachine::Es40,
                _ => {
                    eprintln!("machine: {v:?} is not es40 or potomac");
                    std::process::exit(2)
                }
            }];
            continue;
        }
        sets.push((k.to_string(), v.to_string()));
    }
    for m in machines {
        let mut cfg = FigureConfig::for_machine(m);
        for (k, v) in &sets {
            cfg.set(k, &Value::Str(v.clone())).unwrap_or_else(|e| {
                eprintln!("{e}");
                std::process::exit(2)
            });
        }
        let r = run_figure(&cfg, &ClusterOptions::default()).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(1)
        });
        print!("{}", format_grid(&cfg, &r));
        println!("  ({} events, {:.1} s wall)\n", r.events, r.wall_seconds);
    }
}
