//! Criterion benchmark of seed 000's model: D = 20, pool size 30, 100,000 jobs,
//! one replication on one core. Reports simulated events per second as
//! throughput (`cargo bench -p parsched-sim --bench pools`).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use parsched_sim::machines::pools::{run, PoolsConfig, RunOptions};

fn config() -> PoolsConfig {
    PoolsConfig {
        jobs: 100_000,
        warmup: 0,
        reps: 1,
        ..Default::default()
    }
}

fn bench_pools(c: &mut Criterion) {
    let cfg = config();
    let opts = RunOptions {
        workers: 1,
        audit: false,
        records: false,
    };
    let events = run(&cfg, opts, None).expect("valid config").summary.events;
    let mut g = c.benchmark_group("pools");
    g.sample_size(10);
    g.throughput(Throughput::Elements(events));
    g.bench_function("D20_p30_100k_jobs", |b| {
        b.iter(|| run(&cfg, opts, None).unwrap().summary.mean_response_time)
    });
    g.finish();
}

criterion_group!(benches, bench_pools);
criterion_main!(benches);
