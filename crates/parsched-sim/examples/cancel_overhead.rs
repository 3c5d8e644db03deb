//! The cost of watching the cancel flag: the same runs with and without a
//! flag installed (`parsched_sim::cancel::with_cancel`), interleaved, best of
//! N each, and a check that the results are identical.
//! `cargo run --release -p parsched-sim --example cancel_overhead [N]`
use parsched_sim::cancel::with_cancel;
use parsched_sim::machines::barrier::{self, SyncConfig, SyncOptions};
use parsched_sim::machines::pools::{self, PoolsConfig, RunOptions, Value};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

fn best<T>(n: usize, mut f: impl FnMut() -> T) -> (f64, Option<T>) {
    let mut out = None;
    let mut best = f64::INFINITY;
    for _ in 0..n {
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed().as_secs_f64());
        out = Some(r);
    }
    (best, out)
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5);
    let flag = Arc::new(AtomicBool::new(false));
    let mut pc = PoolsConfig::default();
    for (k, v) in [
        ("D", 20.0),
        ("pool_size", 30.0),
        ("jobs", 30000.0),
        ("warmup", 0.0),
        ("reps", 1.0),
    ] {
        pc.set(k, &Value::Float(v)).unwrap();
    }
    let opts = RunOptions {
        workers: 1,
        audit: false,
        records: false,
    };
    let mut sc = SyncConfig::default();
    sc.set("wait", &Value::Str("block".into())).unwrap();
    // Alternating which goes first: the machine may be shared.
    for round in 0..4 {
        let first = round % 2 == 0;
        let (mut a, mut b) = ((f64::INFINITY, None), (f64::INFINITY, None));
        for turn in 0..2 {
            if (turn == 0) == first {
                a = best(n, || pools::run(&pc, opts, None).unwrap());
            } else {
                b = best(n, || {
                    with_cancel(&flag, || pools::run(&pc, opts, None).unwrap())
                });
            }
        }
        let (ra, rb) = (a.1.unwrap(), b.1.unwrap());
        assert_eq!(ra.summary.rep_means, rb.summary.rep_means);
        println!(
            "round {round} pools ({} events): no flag {:.3} s, flag {:.3} s ({:+.1}%)",
            ra.summary.events,
            a.0,
            b.0,
            (b.0 / a.0 - 1.0) * 100.0
        );
        let (mut a, mut b) = ((f64::INFINITY, None), (f64::INFINITY, None));
        for turn in 0..2 {
            if (turn == 0) == first {
                a = best(n, || barrier::run(&sc, SyncOptions::default()).unwrap());
            } else {
                b = best(n, || {
                    with_cancel(&flag, || barrier::run(&sc, SyncOptions::default()).unwrap())
                });
            }
        }
        let (ra, rb) = (a.1.unwrap(), b.1.unwrap());
        assert!(ra.same_simulation(&rb));
        println!(
            "round {round} barrier block ({} events): no flag {:.3} s, flag {:.3} s ({:+.1}%)",
            ra.events,
            a.0,
            b.0,
            (b.0 / a.0 - 1.0) * 100.0
        );
    }
}
