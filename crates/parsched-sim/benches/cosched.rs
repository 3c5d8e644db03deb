//! Criterion benchmark of seed 003's cluster: workload 5 (four LIFE(12) jobs
//! on 8 nodes) at scale 0.1 under Local, PB and DCS-SB, one replication on one
//! core. Reports simulated events per second as throughput
//! (`cargo bench -p parsched-sim --bench cosched`).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use parsched_sim::machines::cluster::{run, ClusterConfig, ClusterOptions};
use std::str::FromStr;

fn config(scheme: &str) -> ClusterConfig {
    ClusterConfig {
        workload: 5,
        scale: 0.1,
        scheme: FromStr::from_str(scheme).expect("a scheme"),
        ..Default::default()
    }
}

fn bench_cosched(c: &mut Criterion) {
    let opts = ClusterOptions {
        workers: 1,
        ..Default::default()
    };
    let mut g = c.benchmark_group("cosched");
    g.sample_size(10);
    for scheme in ["Local", "PB", "DCS-SB"] {
        let cfg = config(scheme);
        let events = run(&cfg, &opts).expect("valid config").runs[0].events;
        g.throughput(Throughput::Elements(events));
        g.bench_function(format!("W5_{scheme}_scale0.1"), |b| {
            b.iter(|| run(&cfg, &opts).unwrap().completion_time)
        });
    }
    g.finish();
}

criterion_group!(benches, bench_cosched);
criterion_main!(benches);
