//! What the examples share: reading `KEY=VALUE` arguments into a model's
//! configuration, and the pseudo-random requested times of the batch
//! examples. Each example uses only part of it.
#![allow(dead_code)]

use parsched_core::Value;
use parsched_sim::machines::batch::BatchResult;
use parsched_sim::workloads::swf::BatchJob;
use std::fmt::Display;

/// `KEY=VALUE` split at the first `=` (exits 2 naming the argument otherwise).
pub fn key_value(arg: &str) -> (&str, &str) {
    arg.split_once('=').unwrap_or_else(|| {
        eprintln!("error: argument {arg:?}: allowed: KEY=VALUE");
        std::process::exit(2)
    })
}

/// A command-line value as the schema's setters take it: an integer, else a
/// float, else the string itself.
pub fn value(v: &str) -> Value {
    v.parse::<i64>()
        .map(Value::Int)
        .or_else(|_| v.parse::<f64>().map(Value::Float))
        .unwrap_or(Value::Str(v.into()))
}

/// Sets `key` to `v` with a configuration's `set`; on a refused value prints
/// the one-line error and exits 2.
pub fn set_or_exit<E: Display>(
    key: &str,
    v: &str,
    set: impl FnOnce(&str, &Value) -> Result<(), E>,
) {
    if let Err(e) = set(key, &value(v)) {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

/// Replaces every job's requested time by a pseudo-random one (xorshift from
/// `seed`): 30% exact, 10% half the run time, 10% up to 10 min over, 50%
/// 2-10x over, as users' estimates are.
pub fn random_estimates(jobs: &mut [BatchJob], seed: u64) {
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ seed;
    for j in jobs.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        j.requested = match x % 10 {
            0..=2 => j.runtime,
            3 => j.runtime / 2,
            4 => j.runtime + (x >> 8) % 600,
            _ => j.runtime.max(1) * (2 + (x >> 8) % 9),
        };
    }
}

/// FNV-1a over `bytes`, into `h`.
pub fn fnv(h: &mut u64, bytes: &[u8]) {
    for b in bytes {
        *h ^= *b as u64;
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

/// A digest of a schedule: each job's start, end, killed flag and
/// processors, the queue-length series, the summary without the wall-clock
/// time.
pub fn digest(r: &BatchResult) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for (i, o) in r.outcomes.iter().enumerate() {
        fnv(&mut h, &o.start.to_le_bytes());
        fnv(&mut h, &o.end.to_le_bytes());
        fnv(&mut h, &[o.killed as u8]);
        for (a, b) in r.resources(i) {
            fnv(&mut h, &a.to_le_bytes());
            fnv(&mut h, &b.to_le_bytes());
        }
    }
    for (t, q) in &r.queue_length {
        fnv(&mut h, &t.to_le_bytes());
        fnv(&mut h, &q.to_le_bytes());
    }
    let mut s = r.summary.clone();
    s.wall_seconds = 0.0;
    // the engine's event count is how the schedule was computed, not the
    // schedule (a faster algorithm may take fewer events): left out, so the
    // digest is the one taken before the field existed
    s.events = 0;
    fnv(
        &mut h,
        format!("{s:?}").replace(", events: 0 }", " }").as_bytes(),
    );
    h
}
