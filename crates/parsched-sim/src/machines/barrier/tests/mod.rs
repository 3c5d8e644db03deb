//! The barrier machine's tests, by subject: [`paper`] (the equations and
//! measurements of Feitelson & Rudolph), [`machine`] (audit, determinism,
//! fast paths, schedulers), [`config`] (keys, estimates, units),
//! [`gang_place`] (slot choosers at build). What they share is here.

use super::*;

/// The paper's equations as printed, restated here as the tests' oracle (the
/// library's one implementation is Python's `parsched.models.feitelson_rudolph`,
/// which `tests/test_feitelson_rudolph.py` checks against these runs too).
fn eq6(c: &SyncConfig) -> f64 {
    (1.0 + c.tcs / c.tq) * (c.t_p() + c.t_w()) * c.l as f64
}

fn eq12(c: &SyncConfig) -> f64 {
    let n = c.n as f64;
    (c.t_p() + (n - 1.0) / n * c.alpha * c.tcs) * c.l as f64
}

fn eq13(c: &SyncConfig) -> f64 {
    let l = c.l as f64;
    c.t_p() + (l - 1.0) * c.tq + (l + c.alpha - 1.0) * c.tcs
}

fn cfg(pairs: &[(&str, Value)]) -> SyncConfig {
    let mut c = SyncConfig::default();
    for (k, v) in pairs {
        c.set(k, v).unwrap();
    }
    c
}

const AUDIT: SyncOptions = SyncOptions {
    audit: true,
    fast: true,
};

fn s(v: &str) -> Value {
    Value::Str(v.into())
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b
}

/// A result without what depends on the path taken (events, queue size, wall
/// time): what the fast paths must leave unchanged.
fn strip(mut r: SyncResult) -> SyncResult {
    r.events = 0;
    r.max_pending = 0;
    r.wall_seconds = 0.0;
    r
}

mod config;
mod gang_place;
mod machine;
mod paper;
