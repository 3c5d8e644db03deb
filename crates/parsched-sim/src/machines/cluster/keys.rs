//! The keys of [`ClusterConfig`] (the `cosched` model, seed 003): its
//! declarative schema ([`parsched_core::schema`]), from which `set`, the
//! per-key checks of `validate`, [`keys`], the Python `CoschedConfig` class,
//! the command line's key list and the `[cosched]` key table of
//! `docs/formats/config-toml.md` come. Times carry their unit in the key.

use super::apps::AppKind;
use super::config::{parse_table, BoostQueue, ClusterConfig, LocalKind, PendingRule};
use crate::machines::node_costs::{self, impl_node_costs};
use parsched_core::policy::cosched::CoschedScheme;
use parsched_core::policy::ts::{BoostTo, TsSemantics};
use parsched_core::schema::{End, Field, Kind, Schema, Typed, U32, U64};
use parsched_core::Value;
use parsched_core::{choices, field, ConfigError};
use std::str::FromStr;

choices!(LocalKind {
    Ts => "ts",
    Rr => "rr",
    O1 => "o1",
    Fair => "fair",
});
choices!(BoostQueue {
    Head => "head",
    Tail => "tail",
});
choices!(PendingRule {
    Unpolled => "unpolled",
    Unconsumed => "unconsumed",
});

type C = ClusterConfig;
impl_node_costs!(ClusterConfig);
const APPS: &[&str] = &["LIFE3.5", "LIFE12", "MG", "LU", "EP"];

fn set_jobs(c: &mut C, v: &Value) -> Result<(), ConfigError> {
    let Value::Str(s) = v else {
        return Err(ConfigError::new(
            "jobs",
            "not a list of names",
            "application names separated by commas (LIFE3.5, LIFE12, MG, LU, EP)",
        ));
    };
    c.jobs = s
        .split(',')
        .filter(|t| !t.trim().is_empty())
        .map(AppKind::from_str)
        .collect::<Result<_, _>>()?;
    Ok(())
}

fn get_jobs(c: &C) -> Typed {
    Typed::Names(c.jobs.iter().map(|a| a.name()).collect())
}

fn set_scheme(c: &mut C, v: &Value) -> Result<(), ConfigError> {
    let Value::Str(s) = v else {
        return Err(ConfigError::new(
            "scheme",
            "not a name",
            "a scheme of Table 1 (e.g. PB, DCS-SB), gang or fcfs",
        ));
    };
    c.scheme = CoschedScheme::from_str(s)?;
    Ok(())
}

fn is_none(v: &Value) -> bool {
    matches!(v, Value::Str(s) if s.trim().is_empty() || s.trim().eq_ignore_ascii_case("none"))
}

fn set_table(c: &mut C, v: &Value) -> Result<(), ConfigError> {
    c.dispatch_table = match v {
        Value::Str(s) if is_none(v) || s.trim() == "solaris" => None,
        Value::Str(s) => Some(parse_table(s)?),
        _ => {
            return Err(ConfigError::new(
                "dispatch_table",
                "not a table",
                "a table's text (TOML [[level]] entries or `dispadmin -c TS -g` output), or \
                 solaris",
            ))
        }
    };
    Ok(())
}

const BSP_ALLOWED: &str = "jobs separated by ';', each NAME:GRAIN_US:ITERATIONS:M1/M2/... \
     (compute per iteration in µs, iterations, one multiplier per process), e.g. \
     lo:10000:150:1/1;hi:500:3000:1/1";

fn set_bsp(c: &mut C, v: &Value) -> Result<(), ConfigError> {
    if is_none(v) {
        c.bsp_jobs = Vec::new();
        return Ok(());
    }
    let Value::Str(s) = v else {
        return Err(ConfigError::new("bsp_jobs", "not text", BSP_ALLOWED));
    };
    let bad = |what: String| ConfigError::new("bsp_jobs", what, BSP_ALLOWED);
    let mut jobs = Vec::new();
    for (i, part) in s
        .split(';')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .enumerate()
    {
        let f: Vec<&str> = part.split(':').map(str::trim).collect();
        let [name, grain, iters, mults] = f[..] else {
            return Err(bad(format!("job {i} ({part:?}) does not have four fields")));
        };
        let grain_us: f64 = grain
            .parse()
            .ok()
            .filter(|g: &f64| g.is_finite() && *g > 0.0)
            .ok_or_else(|| bad(format!("job {i}: grain {grain:?} is not a number > 0")))?;
        let iterations: u64 = iters.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
            bad(format!(
                "job {i}: iterations {iters:?} is not an integer > 0"
            ))
        })?;
        let mult = mults
            .split('/')
            .map(|m| {
                m.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x > 0.0)
            })
            .collect::<Option<Vec<f64>>>()
            .filter(|v| !v.is_empty())
            .ok_or_else(|| {
                bad(format!(
                    "job {i}: multipliers {mults:?} are not numbers > 0"
                ))
            })?;
        if name.is_empty() {
            return Err(bad(format!("job {i} has no name")));
        }
        jobs.push(super::config::BspJob {
            name: name.to_string(),
            mult,
            grain_us,
            iterations,
            background: false,
        });
    }
    c.bsp_jobs = jobs;
    Ok(())
}

fn get_bsp(c: &C) -> Typed {
    if c.bsp_jobs.is_empty() {
        return Typed::None;
    }
    let fmt = |x: f64| format!("{x}");
    Typed::Text(
        c.bsp_jobs
            .iter()
            .map(|j| {
                let m: Vec<String> = j.mult.iter().map(|&x| fmt(x)).collect();
                format!(
                    "{}:{}:{}:{}",
                    j.name,
                    fmt(j.grain_us),
                    j.iterations,
                    m.join("/")
                )
            })
            .collect::<Vec<_>>()
            .join(";"),
    )
}

fn get_table(c: &C) -> Typed {
    match &c.dispatch_table {
        None => Typed::None,
        Some(t) => Typed::Text(t.dispadmin_text()),
    }
}

fn set_boost_to(c: &mut C, v: &Value) -> Result<(), ConfigError> {
    c.boost_to = match v {
        Value::Str(s) => s.parse()?,
        Value::Int(i) => i.to_string().parse()?,
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 1e9 => (*f as i64).to_string().parse()?,
        _ => {
            return Err(ConfigError::new(
                "boost_to",
                "not a level or a name",
                BoostTo::ALLOWED,
            ))
        }
    };
    Ok(())
}

fn get_boost_to(c: &C) -> Typed {
    Typed::Text(c.boost_to.to_string())
}

/// A time or cost: a finite number >= 0.
const NONNEG: Kind = Kind::NONNEG;

#[rustfmt::skip]
static FIELDS: &[Field<C>] = &[
    field!(C, "workload", workload: u32, Kind::int(U32), "", "", "Table 2",
        "workload 1-9 of the paper's Table 2, four jobs each (ignored when jobs is given)"),
    field!(C, "jobs", custom(get_jobs, optional = false), Kind::Names { choices: APPS }, "", "", "",
        "a custom mix of applications, LIFE3.5, LIFE12, MG, LU, EP (overrides workload; \
         empty: use workload); `--set jobs=LIFE12,MG,LU,EP`")
    .parsed(set_jobs),
    field!(C, "bsp_jobs", custom(get_bsp, optional = true), Kind::Text, "", "", "",
        "bulk-synchronous jobs instead of the paper's applications (overrides workload and \
         jobs): `NAME:GRAIN_US:ITERATIONS:M1/M2/...;...`, each iteration GRAIN_US × the \
         process's multiplier of compute then a barrier from messages (what `reproduce \
         cosched --real` runs on Linux, e.g. `lo:10000:150:1/1;hi:500:3000:1/1`)")
    .parsed(set_bsp),
    field!(C, "scheme", scheme: choice, Kind::choice::<CoschedScheme>(), "", "", "Table 1",
        "one of the ten schemes of Table 1 or the references gang / fcfs (case-insensitive; \
         _ = -)")
    .folded().aliased(&[("batch", "fcfs")]).parsed(set_scheme),
    field!(C, "nodes", nodes: u32, Kind::int_min(1, 4096), "nodes", "", "",
        "workstations (the paper: 8)")
    .worded("{}", "1..=4096"),
    field!(C, "cpus_per_node", cpus_per_node: u32, Kind::int_min(1, 256), "processors", "", "",
        "processors per workstation (one shared run queue per node)")
    .worded("{}", "1..=256"),
    field!(C, "job_width", job_width: opt_u32, Kind::int_min(1, U32), "processes", "", "",
        "processes per job; unset (none): one per node")
    .worded("{}", "1..=nodes*cpus_per_node"),
    field!(C, "local", local: choice, Kind::choice::<LocalKind>(), "", "", "",
        "every node's local scheduler: ts (priority time-sharing from the dispatch table, \
         Solaris TS; the seed's), rr (round robin with rr_quantum_ms), o1 (Linux 2.6's O(1) \
         with its interactivity bonus) or fair (CFS-like)")
    .aliased(&[("linux26", "o1")]),
    field!(C, "rr_quantum_ms", rr_quantum_ms: f64, Kind::POSITIVE, "ms", "", "",
        "round robin's quantum"),
    field!(C, "dispatch_table", custom(get_table, optional = true), Kind::Text, "", "", "",
        "the time-sharing table: its text (`dispadmin -c TS -g` output or TOML [[level]] \
         entries; in Python and TOML files a file path, docs/formats/dispatch-table.md); \
         unset or solaris: the stock Solaris TS table")
    .aliased(&[("solaris", "")]).parsed(set_table),
    field!(C, "initial_level", initial_level: u8, Kind::int(255), "", "", "",
        "the table level new processes start at"),
    field!(C, "age_running", age_running: bool, Kind::Bool, "", "", "",
        "once-a-second ageing also ages the running processes (Solaris ts_update walks every \
         time-sharing thread); off: only queued ones"),
    field!(C, "ts_semantics", ts_semantics: choice, Kind::choice::<TsSemantics>(), "", "", "",
        "the time-sharing rules: solaris (Solaris 2.6 ts.c, the default: ts_slpret only past \
         ts_maxwait, else the level and the rest of the quantum are kept; running processes \
         aged through ts_trapret; implies age_running) or parsched (every wake-up gets \
         ts_slpret and a full quantum, running processes age to ts_lwait)"),
    field!(C, "boost_refreshes_quantum", boost_refreshes_quantum: bool, Kind::Bool, "", "", "",
        "boosting a running process gives it a fresh quantum of its new level (Solaris \
         ts_change_priority); off: it keeps the rest of its quantum"),
    field!(C, "boost_to", custom(get_boost_to, optional = false), Kind::Text, "", "", "",
        "where a boost (DCS, PB, PBT, spin-yield) puts its target: top (TS 59), sleep_return \
         (the level a wake-up gives, ts_slpret), sleep_return+K (K levels above that) or a \
         fixed level 0-59 (never lower than the target's own level); the paper does not say")
    .parsed(set_boost_to),
    field!(C, "boost_cap", boost_cap: u32, Kind::int(U32), "boosts/s", "", "§4",
        "the most boosts one process gets per second; 0: no cap (the paper's future work)"),
    field!(C, "boost_queue", boost_queue: choice, Kind::choice::<BoostQueue>(), "", "", "",
        "where a boosted queued process goes in its new level's queue: head, or tail (as \
         Solaris does for a priority set from outside the dispatcher)"),
    field!(C, "boost_transient", boost_transient: bool, Kind::Bool, "", "", "",
        "a boost lasts until the process's quantum ends or it blocks (off: the table moves it \
         from the boosted level)"),
    node_costs::tick_ms::<C>("the clock tick: quanta end on one of the node's ticks, each \
         node with its own phase (0: quanta end exactly)"),
    field!(C, "launch_gap_ms", launch_gap_ms: f64, NONNEG, "ms", "", "",
        "job j's processes start at j × launch_gap_ms plus the start skew"),
    field!(C, "start_skew_ms", start_skew_ms: f64, NONNEG, "ms", "", "",
        "each process starts at a random time in [0, start_skew_ms) after its job's launch"),
    node_costs::latency_us::<C>("one-way user-to-user latency of a small message, send and \
         receive overheads included (the seed: 32)"),
    field!(C, "send_overhead_us", send_overhead_us: f64, NONNEG, "µs", "", "",
        "host time to post a send"),
    field!(C, "recv_overhead_us", recv_overhead_us: f64, NONNEG, "µs", "", "",
        "host time to take a message from the endpoint"),
    field!(C, "per_byte_ns", per_byte_ns: f64, NONNEG, "ns", "", "", "wire time per byte"),
    node_costs::context_switch_us::<C>("a context switch"),
    node_costs::interrupt_us::<C>("an interrupt and its service routine"),
    node_costs::syscall_us::<C>("the driver call (ioctl) to block or to yield"),
    field!(C, "timer_us", timer_us: f64, NONNEG, "µs", "", "",
        "one invocation of the periodic boost function"),
    field!(C, "spin_time_us", spin_time_us: opt_f64, NONNEG, "µs", "", "",
        "spin time before blocking or yielding; unset (none): each application's own (`parsched \
         tune cosched`)"),
    field!(C, "app_spin_us", app_spin_us: list, Kind::List {
            min: Some(End { value: 0.0, closed: true }),
            max: None,
        }, "µs", "", "§2",
        "each application's spin time, in the order LIFE3.5, LIFE12, MG, LU, EP (as `parsched \
         tune cosched` chooses them; `--set app_spin_us=1000,3000,1000,1000,1000`); empty: each \
         application's own; spin_time_us overrides"),
    field!(C, "boost_period_ms", boost_period_ms: f64, Kind::POSITIVE, "ms", "", "",
        "period of the boost function (PB, PBT, PB-SB, PB-SY; the seed: 10)"),
    field!(C, "spin_cap_at_boost_period", spin_cap_at_boost_period: bool, Kind::Bool, "", "",
        "", "with a periodic boost, spin at most one boost period before blocking or yielding"),
    field!(C, "pb_sb_wake_interrupts", pb_sb_wake_interrupts: bool, Kind::Bool, "", "", "",
        "PB-SB: the interface also interrupts to wake a blocked receiver (as for SB); off: \
         only the periodic function wakes blocked processes"),
    field!(C, "pb_sb_driver_flag", pb_sb_driver_flag: bool, Kind::Bool, "", "", "§2",
        "PB-SB: the timer's sleeping processes are those with the driver's blocked flag set \
         (cleared only when the process runs again), so waking one the interrupt already woke \
         uses the timer's turn (the default); off: only processes still asleep"),
    field!(C, "resize_apps", resize_apps: bool, Kind::Bool, "", "", "Table 2",
        "size the applications for this machine's message costs (latency_us, \
         send_overhead_us, recv_overhead_us, per_byte_ns) by the same procedure, so each \
         communicates its Table 2 share here; off: the sizes found for the default costs \
         (the default)"),
    field!(C, "pb_skip_running", pb_skip_running: bool, Kind::Bool, "", "", "§2",
        "the periodic-boost timer (PB, PBT, PB-SB, PB-SY) never chooses the running process \
         (the paper's timer boosts the first endpoint with an unconsumed message; the \
         default); off: the runner may be chosen"),
    field!(C, "pending", pending: choice, Kind::choice::<PendingRule>(), "", "", "",
        "what counts as a pending message for PB, PBT and spin-yield: unpolled (arrived since \
         the process last polled its endpoint) or unconsumed (arrived, not yet received)"),
    field!(C, "nic_sample_us", nic_sample_us: f64, NONNEG, "µs", "", "",
        "how often the interface samples which process runs (0: always current)"),
    field!(C, "wake_delay_us", wake_delay_us: f64, NONNEG, "µs", "", "",
        "a woken process becomes ready this long after its interrupt"),
    field!(C, "wake_loss", wake_loss: f64, Kind::float_range(0.0, true, 1.0, true), "", "", "",
        "probability that a wake-up interrupt is lost (the process stays blocked until another \
         message, the PB-SB timer or block_timeout_ms)")
    .worded("{}", "a probability in [0, 1]"),
    field!(C, "block_timeout_ms", block_timeout_ms: f64, NONNEG, "ms", "", "",
        "a blocked process wakes by itself after this (0: never; > 0 needed when wake_loss > \
         0)"),
    field!(C, "daemon_period_ms", daemon_period_ms: f64, NONNEG, "ms", "", "",
        "a background daemon on every node: its period (0: none)"),
    field!(C, "daemon_run_us", daemon_run_us: f64, NONNEG, "µs", "", "",
        "the background daemon's CPU per activation"),
    field!(C, "gang_slot_ms", gang_slot_ms: f64, Kind::POSITIVE, "ms", "", "",
        "gang scheduling's time slot"),
    field!(C, "probe_ms", probe_ms: f64, Kind::POSITIVE, "ms", "", "",
        "period of the CPU-share probe behind the timeline"),
    field!(C, "probe_node", probe_node: u32, Kind::int(U32), "", "", "",
        "the node whose CPU shares are probed (0..nodes-1)"),
    field!(C, "scale", scale: f64, Kind::POSITIVE, "", "", "",
        "multiplies every application's iteration count (1: the calibrated 25 s alone; \
         smaller for quick runs)"),
    field!(C, "alone_s", alone_s: f64, Kind::POSITIVE, "s", "", "",
        "one job's alone time for the slowdown's ideal (jobs × alone_s × scale; the seed: 25)"),
    field!(C, "max_time_s", max_time_s: f64, Kind::POSITIVE, "s", "", "",
        "the run stops with TimeLimitError past this much simulated time (a livelock or \
         deadlock)"),
    field!(C, "max_events", max_events: u64, Kind::int(U64), "events", "", "",
        "a replication stops with an error naming max_events past this many events (the \
         cost cannot be bounded before the run: local scheduling can stretch it 100x); \
         0: no limit"),
    field!(C, "seed", seed: u64, Kind::int(U64), "", "", "",
        "random seed; replication i uses a seed derived from it"),
    field!(C, "reps", reps: u32, Kind::int_min(1, 10_000), "", "", "",
        "replications (different seeds; 90% CI over them)")
    .worded("{}", "1..=10000"),
];

/// The schema of [`ClusterConfig`].
pub static SCHEMA: Schema<ClusterConfig> = Schema {
    model: "cosched",
    fields: FIELDS,
};

/// Every key [`ClusterConfig::set`] accepts, in documentation order.
pub fn keys() -> Vec<&'static str> {
    SCHEMA.keys()
}

#[cfg(test)]
mod tests {
    use super::*;
    use parsched_core::schema::Choice;

    #[test]
    fn local_accepts_every_local_scheduler_and_its_alias() {
        let mut c = ClusterConfig::default();
        for n in LocalKind::NAMES {
            c.set("local", &Value::Str((*n).into())).unwrap();
            assert_eq!(c.local.name(), *n);
        }
        c.set("local", &Value::Str("linux26".into())).unwrap();
        assert_eq!(c.local, LocalKind::O1);
        let e = c.set("local", &Value::Str("cfs".into())).unwrap_err();
        assert_eq!(e.allowed, "ts|rr|o1|fair");
    }
}
