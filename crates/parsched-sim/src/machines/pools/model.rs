//! The processor-pool model's row of the model table (`crate::models`).

use super::{PoolsConfig, SCHEMA};
use crate::models::def::{cancelled, fields, typed, ModelDef, ModelError, ModelKind, ModelPage};
use parsched_core::schema::Configuration;

parsched_core::schematic!(PoolsConfig, SCHEMA);

static PAGE: ModelPage = ModelPage {
    path: "models/pools.md",
    nav: "Processor pools",
    title: "Processor pools",
    paper: "S. Zhou and T. Brecht, *Processor pool-based scheduling for large-scale NUMA \
            multiprocessors*, SIGMETRICS 1991 (seed 000)",
    what: "Fork-join jobs arrive (Poisson) at a machine of `P` processors split into pools \
           of `pool_size`; a job's threads are placed in the least-loaded pools, may span \
           pools (none, limited by `F`, unlimited) and may run with less than their \
           desired parallelism (`G`). Overheads grow with the pool size (in-pool, \
           run-queue, spanning, cache reload).",
    cli: "parsched simulate pools --set D=10 pool_size=15 jobs=2000 reps=2",
    python: "r = parsched.simulate(parsched.PoolsConfig(D=10, pool_size=15, jobs=2000, reps=2))",
    policies: &[("Processor pools", "policies/pools.md")],
    reproductions: &["pools"],
};

fn run(cfg: Box<dyn Configuration>, workers: usize) -> Result<serde_json::Value, ModelError> {
    let opts = super::RunOptions {
        workers,
        records: false,
        ..Default::default()
    };
    match super::run(&typed::<PoolsConfig>(cfg), opts, None) {
        Ok(r) => fields(&r),
        Err(super::RunError::Config(e)) => Err(e.into()),
        Err(_) if cancelled() => Err(ModelError::Interrupted),
        Err(e) => Err(ModelError::Failed(e.to_string())),
    }
}

/// The row.
pub const MODEL: ModelDef = ModelDef {
    name: "pools",
    kind: ModelKind::Simulated,
    class: "PoolsConfig",
    time_unit: "the paper's time unit (mean compute time 1)",
    summary_keys: &[
        "mean_response_time",
        "ci90_half_width",
        "actual_parallelism",
        "utilization",
        "jobs",
        "events",
        "wall_seconds",
        "reps",
        "rep_means",
        "context_switches",
        "makespan",
    ],
    sweep_keys: &[],
    headline: Some("mean_response_time"),
    seed_key: "seed",
    page: &PAGE,
    config: || Box::new(PoolsConfig::default()),
    run: Some(run),
};
