//! The keys of [`BatchConfig`]: its declarative schema
//! ([`parsched_core::schema`]), from which `set`, `validate`'s per-key checks,
//! [`keys`], the Python `BatchConfig` class, the command line's key list and
//! the `[batch]` key table of `docs/formats/config-toml.md` come. Times in
//! seconds; the SWF loading rules by their own names (`docs/formats/swf.md`).

use super::config::{BatchConfig, BatchPolicyKind, TooWide, WorkloadKind, MAX_WORKLOAD_JOBS};
use crate::workloads::swf::{
    ExtraFields, KeepDrop, MissingRequested, MissingRuntime, ProcsRule, Unsorted,
};
use crate::workloads::tsafrir05::{BinCount, RequestedTimes, MIN_MAX_ESTIMATE};
use parsched_core::policy::batch::{BackfillOrder, QueueOrder};
use parsched_core::policy::gang::SlotAllocation;
use parsched_core::schema::{Field, Kind, Schema, Typed, U32, U64};
use parsched_core::Value;
use parsched_core::{choices, field, ConfigError};

const TIERS_ALLOWED: &str =
    "NUMBER:PRIORITY pairs separated by commas (e.g. 1:10,2:5), each number once, priorities \
     >= 0; none: no tiers";

/// `"1:10,2:5"` → `[(1, 10.0), (2, 5.0)]`.
fn parse_tiers(key: &str, v: &Value) -> Result<Vec<(i32, f64)>, ConfigError> {
    let Value::Str(s) = v else {
        return Err(ConfigError::new(key, "not text", TIERS_ALLOWED));
    };
    let s = s.trim();
    if s.is_empty() || s.eq_ignore_ascii_case("none") {
        return Ok(Vec::new());
    }
    let mut out: Vec<(i32, f64)> = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || ConfigError::new(key, format!("{part:?}"), TIERS_ALLOWED);
        let (n, p) = part.split_once(':').ok_or_else(bad)?;
        let n: i32 = n.trim().parse().map_err(|_| bad())?;
        let p: f64 = p.trim().parse().map_err(|_| bad())?;
        if !(p.is_finite() && p >= 0.0) || out.iter().any(|t| t.0 == n) {
            return Err(bad());
        }
        out.push((n, p));
    }
    Ok(out)
}

fn show_tiers(t: &[(i32, f64)]) -> Typed {
    if t.is_empty() {
        return Typed::None;
    }
    let parts: Vec<String> = t.iter().map(|(n, p)| format!("{n}:{p}")).collect();
    Typed::Text(parts.join(","))
}

fn set_partition_tiers(c: &mut C, v: &Value) -> Result<(), ConfigError> {
    c.multifactor.partition_tiers = parse_tiers("mf_partition_tiers", v)?;
    Ok(())
}

fn set_qos_tiers(c: &mut C, v: &Value) -> Result<(), ConfigError> {
    c.multifactor.qos_tiers = parse_tiers("mf_qos_tiers", v)?;
    Ok(())
}

fn get_partition_tiers(c: &C) -> Typed {
    show_tiers(&c.multifactor.partition_tiers)
}

fn get_qos_tiers(c: &C) -> Typed {
    show_tiers(&c.multifactor.qos_tiers)
}

choices!(BatchPolicyKind {
    Fcfs => "fcfs",
    Easy => "easy",
    Conservative => "conservative",
    Gang => "gang",
});
choices!(TooWide {
    Drop => "drop",
    Clamp => "clamp",
    Error => "error",
});
choices!(WorkloadKind {
    Trace => "trace",
    Lublin => "lublin",
});
choices!(ProcsRule {
    Allocated => "allocated",
    Requested => "requested",
});
choices!(MissingRequested {
    Runtime => "runtime",
    Factor => "factor",
    Drop => "drop",
});
choices!(MissingRuntime {
    Drop => "drop",
    Requested => "requested",
});
choices!(KeepDrop {
    Keep => "keep",
    Drop => "drop",
});
choices!(Unsorted {
    Sort => "sort",
    Reject => "reject",
});
choices!(ExtraFields {
    Ignore => "ignore",
    Error => "error",
});

type C = BatchConfig;

static FIELDS: &[Field<C>] = &[
    field!(C, "policy", policy: choice, Kind::choice::<BatchPolicyKind>(), "", "", "",
        "scheduler: fcfs, easy (EASY backfilling: a reservation for the first queued job), \
         conservative (a reservation for every queued job) or gang (time slicing on an \
         Ousterhout matrix with mpl slots, with backfilling)"),
    field!(C, "order", order: choice, Kind::choice::<QueueOrder>(), "", "", "",
        "a queue order (docs/policies/batch-orders.md): the priority rule the queue is sorted \
         by before fcfs, easy or conservative sees it (the policy then starts, reserves and \
         backfills in that order; ties keep arrival order); multifactor is Slurm's, set by \
         the mf_* keys"),
    field!(C, "backfill_order", backfill_order: choice, Kind::choice::<BackfillOrder>(), "", "",
        "", "easy: the order backfilling examines the queue in: priority (the queue's own, as \
         order sorts it) or a stateless queue order (sjf: EASY with SJF backfilling, the head \
         still chosen by order); docs/policies/batch-orders.md"),
    field!(C, "reservation_depth", reservation_depth: opt_u32, Kind::int_min(1, U32), "jobs",
        "", "", "easy or conservative: at most this many waiting jobs hold reservations, the \
         others backfill around them (Maui's RESERVATIONDEPTH; 1 is EASY, the queue's length \
         conservative); unset (or auto): the policy's own; docs/policies/batch.md")
    .worded("{} reservations", "an integer >= 1, or auto")
    .aliased(&[("auto", "")]),
    field!(C, "mf_weight_age", multifactor.weight_age: f64, Kind::NONNEG, "", "", "",
        "order = multifactor: PriorityWeightAge, the weight of the age factor min(wait, \
         mf_max_age_s) / mf_max_age_s (Slurm's multifactor plugin; \
         docs/policies/batch-multifactor.md)"),
    field!(C, "mf_weight_fairshare", multifactor.weight_fairshare: f64, Kind::NONNEG, "", "", "",
        "order = multifactor: PriorityWeightFairshare, the weight of the fair-share factor \
         2^(-effective usage / shares) (accounts = SWF groups, users = SWF users, equal \
         shares)"),
    field!(C, "mf_weight_size", multifactor.weight_size: f64, Kind::NONNEG, "", "", "",
        "order = multifactor: PriorityWeightJobSize, the weight of the job-size factor \
         (processors / machine, or 1 minus that with mf_favor_small)"),
    field!(C, "mf_weight_partition", multifactor.weight_partition: f64, Kind::NONNEG, "", "",
        "", "order = multifactor: PriorityWeightPartition, the weight of the partition factor \
         (mf_partition_tiers)"),
    field!(C, "mf_weight_qos", multifactor.weight_qos: f64, Kind::NONNEG, "", "", "",
        "order = multifactor: PriorityWeightQOS, the weight of the QOS factor (mf_qos_tiers, \
         by the SWF queue number)"),
    field!(C, "mf_max_age_s", multifactor.max_age_s: u64, Kind::int(U64), "s", "", "",
        "order = multifactor: PriorityMaxAge, the wait at which the age factor reaches 1 (0: \
         always 1)"),
    field!(C, "mf_half_life_s", multifactor.half_life_s: u64, Kind::int(U64), "s", "", "",
        "order = multifactor: PriorityDecayHalfLife of the fair-share usage (processor-seconds \
         decayed continuously; 0: no decay)"),
    field!(C, "mf_favor_small", multifactor.favor_small: bool, Kind::Bool, "", "", "",
        "order = multifactor: PriorityFavorSmall (the job-size factor favours narrow jobs)"),
    field!(
        C,
        "mf_partition_tiers",
        custom(get_partition_tiers, optional = true),
        Kind::Text,
        "",
        "",
        "",
        "order = multifactor: SWF partition number -> priority, NUMBER:PRIORITY \
         pairs (e.g. 1:10,2:5), normalised by the largest (Slurm's partition \
         PriorityJobFactor); none: partition factor 0"
    )
    .parsed(set_partition_tiers),
    field!(
        C,
        "mf_qos_tiers",
        custom(get_qos_tiers, optional = true),
        Kind::Text,
        "",
        "",
        "",
        "order = multifactor: SWF queue number -> priority as mf_partition_tiers (the QOS's \
         Priority); none: QOS factor 0"
    )
    .parsed(set_qos_tiers),
    field!(C, "procs", procs: opt_u32, Kind::int_min(1, U32), "processors", "", "",
        "processors of the machine; unset (or auto): the trace header's MaxProcs, else \
         MaxNodes")
    .worded("{} processors", "an integer >= 1, or auto")
    .aliased(&[("auto", ""), ("header", "")]),
    field!(C, "kill_on_overrun", kill_on_overrun: bool, Kind::Bool, "", "", "",
        "end a job at its requested time if it runs longer (final_state \
         COMPLETED_WALLTIME_REACHED)"),
    field!(C, "bsld_tau", bsld_tau: f64, Kind::POSITIVE, "s", "τ", "",
        "bounded slowdown threshold: max(1, response / max(run, τ))")
    .worded("{} is not positive", "a finite number > 0 (seconds)"),
    field!(C, "procs_rule", rules.procs: choice, Kind::choice::<ProcsRule>(), "", "", "",
        "job width: allocated (SWF field 5, else field 8) or requested (field 8, else 5); a \
         fallback is counted as repaired"),
    field!(C, "missing_requested_time", rules.missing_requested_time: choice,
        Kind::choice::<MissingRequested>(), "", "", "",
        "requested time (field 9) unknown: runtime (use the run time: exact estimates), \
         factor (ceil(run time × requested_time_factor)) or drop the job"),
    field!(C, "requested_time_factor", rules.requested_time_factor: f64, Kind::POSITIVE, "",
        "", "", "factor of missing_requested_time=factor")
    .worded("{} is not positive", "a finite number > 0"),
    field!(C, "missing_runtime", rules.missing_runtime: choice, Kind::choice::<MissingRuntime>(),
        "", "", "",
        "run time (field 4) unknown: drop the job, or use the requested time (dropped if that \
         is unknown too)"),
    field!(C, "zero_runtime", rules.zero_runtime: choice, Kind::choice::<KeepDrop>(), "", "", "",
        "jobs with run time 0: keep (they start and end at once) or drop"),
    field!(C, "cancelled", rules.cancelled: choice, Kind::choice::<KeepDrop>(), "", "", "",
        "jobs with status 5 (cancelled): drop, or keep if their run time is known"),
    field!(C, "unsorted", rules.unsorted: choice, Kind::choice::<Unsorted>(), "", "", "",
        "submit times out of order: sort (stable, trace order among equal times; counted) or \
         reject (error naming the first line out of order)"),
    field!(C, "extra_fields", rules.extra_fields: choice, Kind::choice::<ExtraFields>(), "", "",
        "", "job lines with more than SWF's 18 fields (some conversions of real logs append \
         columns): ignore (read the first 18, count the lines in the report) or error (refuse \
         the line)"),
    field!(C, "too_wide", too_wide: choice, Kind::choice::<TooWide>(), "", "", "",
        "jobs wider than the machine: drop (counted), clamp to the machine width (counted as \
         repaired) or error (refuse the trace; also spelled reject)")
    .aliased(&[("reject", "error")]),
    field!(C, "mpl", mpl: u32, Kind::int_min(1, U32), "slots", "", "",
        "gang: multiprogramming level, slots of the matrix")
    .worded(
        "a multiprogramming level of {} admits no job",
        "an integer >= 1",
    ),
    field!(C, "quantum", quantum: u64, Kind::int_min(1, U64), "s", "", "",
        "gang: slot quantum, whole seconds")
    .worded("{} seconds", "an integer >= 1 (seconds)"),
    field!(C, "gang_backfill", gang_backfill: bool, Kind::Bool, "", "", "",
        "gang: later jobs may take free slot space when an earlier one does not fit"),
    field!(C, "slot_allocation", slot_allocation: choice, Kind::choice::<SlotAllocation>(), "",
        "", "", "gang: the matrix's slot allocation rule"),
    field!(C, "load_factor", load_factor: f64, Kind::POSITIVE, "", "", "",
        "multiplies the offered load by dividing interarrival times by it (1: the trace as is)")
    .worded("{} is not positive", "a finite number > 0"),
    field!(C, "track_resources", track_resources: bool, Kind::Bool, "", "", "",
        "record which processors each job gets (lowest free first) for allocated_resources \
         and the Gantt chart"),
    field!(C, "workload", workload: choice, Kind::choice::<WorkloadKind>(), "", "", "",
        "where the jobs come from: trace (the SWF file of trace) or lublin (the \
         Lublin-Feitelson model generated in memory from the workload_* keys, for procs \
         processors, 128 when procs is unset; no file needed)"),
    field!(C, "workload_jobs", workload_jobs: u64, Kind::int_min(1, MAX_WORKLOAD_JOBS), "jobs",
        "", "", "workload=lublin: number of jobs")
    .worded("{} jobs", "an integer in 1..=50000000"),
    field!(C, "workload_load", workload_load: opt_f64, Kind::float_range(0.0, false, 100.0, true),
        "", "", "",
        "workload=lublin: offered load the arrivals are scaled to; unset (or none): the \
         model's own arrival process")
    .worded(
        "{} is not an offered load",
        "a number in (0, 100], or none (the model's own arrivals)",
    )
    .aliased(&[("model", "")]),
    field!(C, "workload_seed", workload_seed: u64, Kind::int(U64), "", "", "",
        "workload=lublin: the model's seed (its own random streams: every policy sees the same \
         jobs)"),
    field!(C, "workload_types", workload_types: bool, Kind::Bool, "", "", "",
        "workload=lublin: batch and interactive job types (the published model) or the \
         typeless variant"),
    field!(C, "workload_requested", workload_requested: choice, Kind::choice::<RequestedTimes>(),
        "", "", "",
        "workload=lublin: requested times: none (unknown: missing_requested_time applies), \
         exact (the run time) or tsafrir05 (user estimates of Tsafrir, Etsion & Feitelson, \
         JSSPP 2005)"),
    field!(C, "workload_estimate_max", workload_estimate_max: u64,
        Kind::int_min(MIN_MAX_ESTIMATE, U32), "s", "", "",
        "workload=lublin, workload_requested=tsafrir05: the maximal (and most popular) \
         estimate; longer run times are cut to it (default round(e^12), the model's longest \
         run time)")
    .worded("{} seconds", "an integer >= 7200 (seconds)"),
    field!(C, "workload_estimate_max_percent", workload_estimate_max_percent: opt_f64,
        Kind::float_range(0.0, false, 89.0, true), "percent", "", "",
        "workload=lublin, workload_requested=tsafrir05: percent of jobs whose estimate is \
         workload_estimate_max; unset (none, model): the model's own (about 21.7)")
    .worded(
        "{} is not a percent of jobs",
        "a number in (0, 89], or none (the model's share)",
    )
    .aliased(&[("model", "")]),
    field!(C, "workload_estimate_bins", workload_estimate_bins: choice,
        Kind::choice::<BinCount>(), "", "", "",
        "workload=lublin, workload_requested=tsafrir05: the number of distinct estimates: \
         the model's linear or power fit of it against the jobs"),
    field!(C, "max_events", max_events: u64, Kind::int(U64), "events", "", "",
        "gang: a run whose estimated event count (a few per job plus two per quantum over the \
         jobs' total run time) is above this is refused before it starts; 0: no limit"),
];

/// The schema of [`BatchConfig`].
pub static SCHEMA: Schema<BatchConfig> = Schema {
    model: "batch",
    fields: FIELDS,
};

/// Every key [`BatchConfig::set`] accepts, in documentation order.
pub fn keys() -> Vec<&'static str> {
    SCHEMA.keys()
}
