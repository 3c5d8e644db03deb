//! The row of the model table (`crate::models`) of seed 003's network of
//! workstations (`cosched`).

use super::{ClusterConfig, SCHEMA};
use super::{ClusterError, ClusterOptions};
use crate::models::def::{fields, typed, ModelDef, ModelError, ModelKind, ModelPage};
use parsched_core::schema::Configuration;

parsched_core::schematic!(ClusterConfig, SCHEMA);

/// A cluster run's error as a model's (the desktop's rows use it too).
pub(crate) fn model_error(e: ClusterError) -> ModelError {
    match e {
        ClusterError::Config(e) => e.into(),
        ClusterError::Interrupted => ModelError::Interrupted,
        e => ModelError::Failed(e.to_string()),
    }
}

/// The options of a generic run with `workers` threads.
pub(crate) fn model_options(workers: usize) -> ClusterOptions {
    ClusterOptions {
        workers,
        ..Default::default()
    }
}

fn run_cosched(
    cfg: Box<dyn Configuration>,
    workers: usize,
) -> Result<serde_json::Value, ModelError> {
    fields(&super::run(&typed::<ClusterConfig>(cfg), &model_options(workers)).map_err(model_error)?)
}

static COSCHED_PAGE: ModelPage = ModelPage {
    path: "models/cosched.md",
    nav: "Network of workstations",
    title: "Coscheduling on a network of workstations",
    paper: "S. Nagar, A. Banerjee, A. Sivasubramaniam and C. R. Das, *A closer look at \
            coscheduling approaches for a network of workstations*, SPAA 1999 (seed 003)",
    what: "Parallel applications on workstations that each run Solaris time-sharing \
           (the dispatch table) and communicate over a network; the ten schemes combine \
           the wait (spin, block, spin-block, spin-yield) with the coscheduling \
           (demand-based, periodic boost, local).",
    cli: "parsched simulate cosched --set scheme=DCS workload=7 scale=0.05",
    python: "r = parsched.simulate(parsched.CoschedConfig(workload=5, scale=0.05))",
    policies: &[
        ("Coscheduling", "policies/cosched.md"),
        ("Solaris time-sharing", "policies/time-sharing.md"),
    ],
    reproductions: &["cosched"],
};

/// The network of workstations (seed 003).
pub const MODEL: ModelDef = ModelDef {
    name: "cosched",
    kind: ModelKind::Simulated,
    class: "CoschedConfig",
    time_unit: "s",
    summary_keys: &[
        "scheme",
        "completion_time",
        "completion_time_ci90",
        "mean_job_time",
        "cv",
        "over_ideal",
        "ideal",
        "events",
        "wall_seconds",
    ],
    sweep_keys: &["livelock"],
    headline: Some("completion_time"),
    seed_key: "seed",
    page: &COSCHED_PAGE,
    config: || Box::new(ClusterConfig::default()),
    run: Some(run_cosched),
};
