//! The region-scheduling machine's row of the model table (`crate::models`).

use super::{RegionsConfig, SCHEMA};
use crate::models::def::{fields, typed, ModelDef, ModelError, ModelKind, ModelPage};
use parsched_core::schema::Configuration;

parsched_core::schematic!(RegionsConfig, SCHEMA);

static PAGE: ModelPage = ModelPage {
    path: "models/regions.md",
    nav: "Cache regions",
    title: "Cache regions",
    paper: "M. Lee and K. Schwan, *Region scheduling: efficiently using the cache \
            architectures via page-level affinity*, ASPLOS 2012 (seed 004)",
    what: "Threads are grouped by the memory regions they touch and placed on cache \
           domains by working set; a miss model (exact, and a fast one checked against \
           it) gives the bandwidth and latency of each placement.",
    cli: "parsched simulate regions --set machine=westmere",
    python: "r = parsched.simulate(parsched.RegionsConfig())",
    policies: &[("Region scheduling", "policies/regions.md")],
    reproductions: &["regions"],
};

fn run(cfg: Box<dyn Configuration>, _workers: usize) -> Result<serde_json::Value, ModelError> {
    match super::run(&typed::<RegionsConfig>(cfg)) {
        Ok(r) => fields(&r),
        Err(super::RegionMachineError::Config(e)) => Err(e.into()),
        Err(super::RegionMachineError::Interrupted) => Err(ModelError::Interrupted),
        Err(e) => Err(ModelError::Failed(e.to_string())),
    }
}

/// The row.
pub const MODEL: ModelDef = ModelDef {
    name: "regions",
    kind: ModelKind::Simulated,
    class: "RegionsConfig",
    time_unit: "s",
    summary_keys: &[
        "machine",
        "workload",
        "normalized_performance",
        "speedup",
        "microschedules_per_s",
        "microschedules",
        "miss_ratio_standard",
        "miss_ratio_region",
    ],
    sweep_keys: &[],
    headline: Some("normalized_performance"),
    seed_key: "seed",
    page: &PAGE,
    config: || Box::new(RegionsConfig::default()),
    run: Some(run),
};
