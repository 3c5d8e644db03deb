//! Seed 002's Table 1 under every scheme: `cargo run --release -p
//! parsched-sim --example desktop -- [key=value ...]` (keys of
//! `parsched_sim::machines::desktop::DesktopConfig`; `scheme=` picks one scheme).
use parsched_core::Value;
use parsched_sim::machines::cluster::ClusterOptions;
use parsched_sim::machines::desktop::{run, DesktopConfig, DesktopScheme};

fn main() {
    let mut cfg = DesktopConfig::default();
    let mut schemes: Vec<DesktopScheme> = DesktopScheme::ALL.to_vec();
    for a in std::env::args().skip(1) {
        let (k, v) = a.split_once('=').expect("key=value");
        cfg.set(k, &Value::Str(v.to_string())).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        });
        if k == "scheme" {
            schemes = vec![cfg.scheme];
        }
    }
    for s in schemes {
        cfg.scheme = s;
        let r = run(&cfg, &ClusterOptions::default()).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(1)
        });
        let jobs: Vec<String> = r.job_times.iter().map(|t| format!("{t:7.1}")).collect();
        println!(
            "{:8} jobs {} makespan {:7.1} (+{:5.1}%)  cs {} blocks {} slots {} events {} wall {:.2}s",
            r.scheme,
            jobs.join(" "),
            r.makespan,
            r.over_optimum * 100.0,
            r.context_switches,
            r.blocks,
            r.slot_switches,
            r.events,
            r.wall_seconds
        );
        if !r.classes.is_empty() {
            let c: Vec<String> = r
                .classes
                .iter()
                .take(12)
                .map(|c| format!("{:.2}s:j{}={}", c.time_s, c.job + 1, c.class))
                .collect();
            println!("         classes {}", c.join(" "));
        }
    }
}
