//! Runs seed 001's machine once: `cargo run --release --example sync -- KEY=VALUE ...`
//! (keys of `SyncConfig`, plus `audit=true`). Prints the time per iteration,
//! the model's predictions and the simulation speed.
use parsched_sim::machines::barrier::{run, SyncConfig, SyncOptions};

mod common;

fn main() {
    let mut cfg = SyncConfig::default();
    let mut audit = false;
    for arg in std::env::args().skip(1) {
        let (k, v) = common::key_value(&arg);
        if k == "audit" {
            audit = v == "true";
            continue;
        }
        common::set_or_exit(k, v, |k, val| cfg.set(k, val));
    }
    match run(
        &cfg,
        SyncOptions {
            audit,
            ..SyncOptions::default()
        },
    ) {
        Ok(r) => {
            println!(
                "t/iter {:.4} ± {:.4} ms  (t_p {:.4} t_w {:.4})",
                r.time_per_iter, r.ci90_half_width, r.t_p, r.t_w
            );
            println!(
                "U {:.4}  spin {:.1} ms (measured {:.1})  overhead {:.1} ms  cs {}  blocks {}  yields {} (alpha {:.2})  preempt {}  slots {}  frag {:.4}",
                r.useful_utilization, r.busy_wait_time, r.measured_busy_wait_time, r.overhead_time,
                r.context_switches, r.blocking_events, r.yields, r.alpha_measured.unwrap_or(f64::NAN), r.preemptions,
                r.slot_switches, r.fragmentation
            );
            println!(
                "events {}  max pending {}  wall {:.3}s  measured iter/s {:.2}M  gang iter/s {:.2}M  events/s {:.1}M",
                r.events, r.max_pending, r.wall_seconds,
                r.iterations as f64 / r.wall_seconds / 1e6,
                r.gang_iterations as f64 / r.wall_seconds / 1e6,
                r.events as f64 / r.wall_seconds / 1e6
            );
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
