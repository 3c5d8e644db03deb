//! The keys of [`RegionsConfig`] (`parsched simulate regions`, seed 004): its
//! declarative schema ([`parsched_core::schema`]), from which `set`, the
//! per-key checks of `validate`, [`keys`], the Python `RegionsConfig` class and
//! the `[regions]` key table of `docs/formats/config-toml.md` come.

use super::config::{Regioning, RegionsConfig, Workload, MACHINES};
use super::CacheModel;
use parsched_core::program::Pattern;
use parsched_core::schema::{Field, Kind, Schema, Typed, U64};
use parsched_core::Value;
use parsched_core::{choices, field, ConfigError};

choices!(Workload {
    Memlat => "memlat",
    Balance => "balance",
});
choices!(Regioning {
    Declared => "declared",
    Online => "online",
});
choices!(CacheModel {
    Footprint => "footprint",
    Lru => "lru",
});

type C = RegionsConfig;
/// A size in MB: (0, 4096].
const MB: Kind = Kind::float_range(0.0, false, 4096.0, true);

fn set_machine(c: &mut C, v: &Value) -> Result<(), ConfigError> {
    c.machine = v.as_str("machine", MACHINES)?;
    Ok(())
}

fn get_machine(c: &C) -> Typed {
    Typed::Text(c.machine.clone())
}

#[rustfmt::skip]
static FIELDS: &[Field<C>] = &[
    field!(C, "machine", custom(get_machine, optional = false), Kind::Choice { choices: MACHINES },
        "", "", "§5", "the machine: clovertown (2 × 4 cores, 4 MB L2 per pair) or westmere (2 × 6 \
         cores, 12 MB L3 per socket)")
    .parsed(set_machine),
    field!(C, "workload", workload: choice, Kind::choice::<Workload>(), "", "", "§5",
        "memlat (Figure 9: two regions, one thread) or balance (§5.2: two large and two small \
         single-region programs)"),
    field!(C, "wss_mb", wss_mb: f64, MB, "MB", "", "Figure 9",
        "memlat: total working set (both regions)")
    .worded("got {}", "a number in (0, 4096]")
    .eager(),
    field!(C, "access_time", access_time: u64, Kind::int_min(1, 1 << 32), "accesses", "", "",
        "accesses per visit to a region (memlat's access time; the balancing programs' touch \
         length)")
    .worded("got {}", "an integer in [1, 2^32]"),
    field!(C, "accesses", accesses: u64, Kind::int_min(1, 1 << 34), "accesses", "", "",
        "accesses per program in all (the run length; at most 2^26 with cache_model=lru)")
    .worded("got {}", "an integer in [1, 2^34]"),
    field!(C, "large_mb", large_mb: opt_f64, MB, "MB", "", "§5.2",
        "balance: the large programs' working set; unset: the paper's (4 MB on clovertown, 12 \
         MB on westmere)")
    .worded("got {}", "a number in (0, 4096]")
    .eager(),
    field!(C, "small_kb", small_kb: opt_f64, Kind::float_range(0.0, false, 4194304.0, true),
        "KB", "", "§5.2",
        "balance: the small programs' working set; unset: the paper's (16 KB on clovertown, \
         512 KB on westmere)")
    .worded("got {}", "a number in (0, 4194304]")
    .eager(),
    field!(C, "cache_model", cache_model: choice, Kind::choice::<CacheModel>(), "", "", "",
        "footprint (the expected footprint of uniform random touches) or lru (a simulated LRU \
         cache)"),
    field!(C, "pattern", pattern: choice, Kind::choice::<Pattern>(), "", "", "",
        "how touches fall in a region: uniform_random (memlat) or sequential (a cyclic sweep; \
         cache_model=lru only)"),
    field!(C, "fallback", fallback: bool, Kind::Bool, "", "", "§4",
        "apply conditions 1-3 (the paper's thresholds for the machine)"),
    field!(C, "hit_ns", hit_ns: opt_f64, Kind::POSITIVE, "ns", "", "",
        "time of a cache hit; unset: the machine's")
    .worded("got {}", "a finite number > 0")
    .eager(),
    field!(C, "miss_ns", miss_ns: opt_f64, Kind::NONNEG, "ns", "", "",
        "time of a cache miss; unset: the machine's")
    .worded("got {}", "a finite number >= 0")
    .eager(),
    field!(C, "microschedule_us", microschedule_us: opt_f64, Kind::NONNEG, "µs", "", "",
        "cost of a micro-schedule; unset: the machine's")
    .worded("got {}", "a finite number >= 0")
    .eager(),
    field!(C, "effective_cache_mb", effective_cache_mb: opt_f64, MB, "MB", "", "",
        "the capacity of each last-level cache the workload can use; unset: the whole cache")
    .worded("got {}", "a number in (0, 4096]")
    .eager(),
    field!(C, "regioning", regioning: choice, Kind::choice::<Regioning>(), "", "", "§4",
        "declared (the declared regions, placed before the run) or online (§4's estimator on \
         simulated access bits every scan_ms)"),
    field!(C, "scan_ms", scan_ms: f64, Kind::float_range(0.01, true, 10_000.0, true), "ms", "",
        "§4", "online: simulated time between scans (the paper: 100 ms)")
    .worded("got {}", "a number in [0.01, 10000]")
    .eager(),
    field!(C, "chunk", chunk: u64, Kind::int_min(1, 1 << 24), "accesses", "", "",
        "accesses simulated per engine event at most")
    .worded("got {}", "an integer in [1, 2^24]"),
    field!(C, "seed", seed: u64, Kind::int(U64), "", "", "", "random seed"),
];

/// The schema of [`RegionsConfig`].
pub static SCHEMA: Schema<RegionsConfig> = Schema {
    model: "regions",
    fields: FIELDS,
};

/// Every key [`RegionsConfig::set`] accepts, in documentation order.
pub fn keys() -> Vec<&'static str> {
    SCHEMA.keys()
}
