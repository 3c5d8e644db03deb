//! Criterion benchmark of seed 001's machine: n = 10, ℓ = 3, k = 50,000
//! iterations of the measured gang, busy waiting and blocking, under gang and
//! local scheduling, one core. Throughput is the measured gang's iterations
//! (`cargo bench -p parsched-sim --bench sync`); the target is one
//! million per second.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use parsched_sim::machines::barrier::{run, SyncConfig, SyncOptions, SyncSched, WaitStrategy};

fn bench_sync(c: &mut Criterion) {
    let mut g = c.benchmark_group("sync_n10_l3_k50000");
    g.sample_size(10);
    g.throughput(Throughput::Elements(50_000));
    for sched in [SyncSched::Gang, SyncSched::Local] {
        for wait in [WaitStrategy::Busy, WaitStrategy::Block] {
            let cfg = SyncConfig {
                n: 10,
                l: 3,
                k: 50_000,
                sched,
                wait,
                ..SyncConfig::default()
            };
            let name = format!("{sched:?}_{wait:?}").to_lowercase();
            g.bench_function(name, |b| {
                b.iter(|| run(&cfg, SyncOptions::default()).unwrap().time_per_iter)
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_sync);
criterion_main!(benches);
