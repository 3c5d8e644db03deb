//! The keys of the Lublin–Feitelson generator ([`LublinConfig`],
//! `parsched generate lublin`): its declarative schema
//! ([`parsched_core::schema`]), from which `set`, the per-key checks of
//! `validate`, [`keys`], the bindings' coercions, the Python `LublinConfig`
//! class and the `[lublin]` key table of `docs/formats/config-toml.md` come.

use super::tsafrir05::{BinCount, RequestedTimes, MIN_MAX_ESTIMATE};
use super::{LublinConfig, MAX_WORKLOAD_JOBS};
use parsched_core::schema::{Field, Kind, Schema, Typed};
use parsched_core::Value;
use parsched_core::{field, ConfigError};

type C = LublinConfig;

/// `procs` retargets the model's size parameters (the other keys are kept).
fn set_procs(c: &mut C, v: &Value) -> Result<(), ConfigError> {
    let p = v.as_u32("procs")?;
    let fresh = LublinConfig::for_machine(p);
    (c.procs, c.batch, c.interactive, c.typeless) =
        (p, fresh.batch, fresh.interactive, fresh.typeless);
    Ok(())
}

fn get_procs(c: &C) -> Typed {
    Typed::Int(c.procs as u64)
}

#[rustfmt::skip]
static FIELDS: &[Field<C>] = &[
    field!(C, "procs", custom(get_procs, optional = false), Kind::int_min(1, u32::MAX as u64),
        "processors", "", "", "processors of the machine (the model is retargeted to it; the \
         published model: 128)")
    .worded("{} processors", "an integer >= 1")
    .parsed(set_procs),
    field!(C, "jobs", jobs: u64, Kind::int_min(1, MAX_WORKLOAD_JOBS), "jobs", "", "",
        "number of jobs")
    .worded("{} jobs", "an integer in 1..=50000000"),
    field!(C, "load", load: opt_f64, Kind::float_range(0.0, false, 100.0, true), "", "", "",
        "offered load the interarrival times are scaled to (Σ procs·run time over P·span); \
         unset (none, model): the model's own arrival process")
    .worded("{} is not an offered load", "a number in (0, 100], or none (the model's own arrivals)")
    .aliased(&[("model", "")]),
    field!(C, "seed", seed: u64, Kind::int(u64::MAX), "", "", "",
        "the model's seed (its own random streams: the same keys give the same jobs)"),
    field!(C, "include_types", include_types: bool, Kind::Bool, "", "", "",
        "batch and interactive job types (the published model) or the typeless variant"),
    field!(C, "requested", requested: choice, Kind::choice::<RequestedTimes>(), "", "", "",
        "requested times: none (unknown, -1: the loader's missing_requested_time rule \
         applies), exact (the run time) or tsafrir05 (user estimates drawn from Tsafrir, \
         Etsion & Feitelson, JSSPP 2005; their own random stream)"),
    field!(C, "estimate_max", estimate_max: u64, Kind::int_min(MIN_MAX_ESTIMATE, u32::MAX as u64),
        "s", "", "",
        "requested=tsafrir05: the maximal estimate, the most popular one; longer run times \
         are cut to it (default: the model's longest run time, round(e^12), none cut; the \
         model authors used 36000 for this workload)")
    .worded("{} seconds", "an integer >= 7200 (seconds)"),
    field!(C, "estimate_max_percent", estimate_max_percent: opt_f64,
        Kind::float_range(0.0, false, 89.0, true), "percent", "", "",
        "requested=tsafrir05: percent of jobs whose estimate is estimate_max; unset (none, \
         model): the model's own (about 21.7)")
    .worded("{} is not a percent of jobs", "a number in (0, 89], or none (the model's share)")
    .aliased(&[("model", "")]),
    field!(C, "estimate_bins", estimate_bins: choice, Kind::choice::<BinCount>(), "", "", "",
        "requested=tsafrir05: how the number of distinct estimates grows with the jobs: the \
         model's linear fit or its power fit"),
];

/// The schema of [`LublinConfig`].
pub static SCHEMA: Schema<LublinConfig> = Schema {
    model: "lublin",
    fields: FIELDS,
};

/// Every key [`LublinConfig::set`] accepts, in documentation order.
pub fn keys() -> Vec<&'static str> {
    SCHEMA.keys()
}

parsched_core::schematic!(LublinConfig, SCHEMA);

static PAGE: crate::models::def::ModelPage = crate::models::def::ModelPage {
    path: "models/lublin.md",
    nav: "Lublin-Feitelson workloads",
    title: "The Lublin-Feitelson workload model",
    paper: "U. Lublin and D. G. Feitelson, *The workload on parallel supercomputers: \
            modeling the characteristics of rigid jobs*, JPDC 2003",
    what: "A generator of rigid batch jobs (sizes, runtimes and daily-cycle arrivals) \
           written as an SWF trace, for the batch model. Requested times can be drawn \
           from the user-estimate model of Tsafrir, Etsion and Feitelson (JSSPP 2005): \
           `requested = tsafrir05`.",
    cli: "parsched generate lublin -o lublin.swf --set procs=128 jobs=5000",
    python: "parsched.generate_lublin(\"lublin.swf\", procs=128, jobs=5000)",
    policies: &[("The SWF format", "formats/swf.md")],
    reproductions: &["batch"],
};

/// The generator's row of the model table (`crate::models`).
pub const MODEL: crate::models::def::ModelDef = crate::models::def::ModelDef {
    name: "lublin",
    kind: crate::models::def::ModelKind::Generator,
    class: "LublinConfig",
    time_unit: "s",
    summary_keys: &[],
    sweep_keys: &[],
    headline: None,
    seed_key: "seed",
    page: &PAGE,
    config: || Box::new(LublinConfig::generator_default()),
    run: None,
};
