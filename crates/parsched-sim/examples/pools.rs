//! Runs seed 000's model once: `cargo run --release --example pools -- KEY=VALUE ...`
use parsched_sim::machines::pools::{run, PoolsConfig, RunOptions};

mod common;

fn main() {
    let mut cfg = PoolsConfig::default();
    for arg in std::env::args().skip(1) {
        let (k, v) = common::key_value(&arg);
        common::set_or_exit(k, v, |k, val| cfg.set(k, val));
    }
    match run(
        &cfg,
        RunOptions {
            workers: 2,
            records: false,
            audit: false,
        },
        None,
    ) {
        Ok(r) => {
            let s = r.summary;
            println!(
                "RT {:.1} ± {:.1}  A {:.2}  U {:.3}  events {}  wall {:.2}s  ({:.1} Mev/s)  reps {:?}",
                s.mean_response_time, s.ci90_half_width, s.actual_parallelism, s.utilization, s.events, s.wall_seconds,
                s.events as f64 / s.wall_seconds / 1e6, s.rep_means
            );
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
