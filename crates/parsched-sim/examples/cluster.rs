//! Runs seed 003's cluster: `cargo run --release --example cluster -- KEY=VALUE ...`
//! (keys of `ClusterConfig`; values parsed as TOML, bare words as strings).
use parsched_sim::machines::cluster::{run, ClusterConfig, ClusterOptions};

fn main() {
    let mut table = toml::Table::new();
    for a in std::env::args().skip(1) {
        let (k, v) = a.split_once('=').expect("KEY=VALUE");
        let val: toml::Value = toml::from_str::<toml::Table>(&format!("x = {v}"))
            .map(|t| t["x"].clone())
            .unwrap_or_else(|_| toml::Value::String(v.to_string()));
        table.insert(k.to_string(), val);
    }
    let cfg: ClusterConfig = match table.try_into() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    match run(
        &cfg,
        &ClusterOptions {
            workers: 2,
            ..Default::default()
        },
    ) {
        Ok(r) => {
            let r0 = &r.runs[0];
            println!(
                "{} {:?}: T={:.1} jobs={:?} cv={:.2} comm={:?} cs={} intr={} boosts={} blocks={} yields={} wake={} spin={:.1}s lat={:.1}us ev={} wall={:.2}s ({:.2} Mev/s)",
                r.scheme, r.jobs, r.completion_time,
                r.job_completion_times.iter().map(|x| (x * 10.0).round() / 10.0).collect::<Vec<_>>(),
                r.cv, r0.comm_share.iter().map(|x| (x * 1000.0).round() / 10.0).collect::<Vec<_>>(),
                r0.context_switches, r0.interrupts, r0.boosts, r0.blocks, r0.yields, r0.wakeups, r0.spin_time, r0.latency_us,
                r0.events, r0.wall_seconds, r0.events as f64 / r0.wall_seconds / 1e6
            );
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
