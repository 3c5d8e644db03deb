//! The fine-grain synchronization machine's row of the model table
//! (`crate::models`).

use super::{SyncConfig, SCHEMA};
use crate::models::def::{cancelled, fields, typed, ModelDef, ModelError, ModelKind, ModelPage};
use parsched_core::schema::Configuration;

parsched_core::schematic!(SyncConfig, SCHEMA);

static PAGE: ModelPage = ModelPage {
    path: "models/barrier.md",
    nav: "Gang vs busy-wait and blocking",
    title: "Gang scheduling against busy-waiting and blocking",
    paper: "D. G. Feitelson and L. Rudolph, *Gang scheduling performance benefits for \
            fine-grain synchronization*, JPDC 1992 (seed 001)",
    what: "Iterative programs of `n` threads that compute and meet at barriers, on `P` \
           processors under gang scheduling (the Ousterhout matrix) or uncoordinated \
           local scheduling; a thread waits at a barrier by spinning, blocking, or \
           spinning then blocking.",
    cli: "parsched simulate barrier --set sched=local wait=block k=2000",
    python: "r = parsched.simulate(parsched.BarrierConfig(k=2000))",
    policies: &[
        ("Synchronisation and waiting", "policies/sync.md"),
        ("The gang matrix", "policies/gang-matrix.md"),
        ("The gang scheduler", "policies/gang-scheduler.md"),
        ("The analytic model", "policies/gang-analytic-model.md"),
        ("Local schedulers", "policies/local-schedulers.md"),
    ],
    reproductions: &["gang"],
};

fn run(cfg: Box<dyn Configuration>, _workers: usize) -> Result<serde_json::Value, ModelError> {
    match super::run(&typed::<SyncConfig>(cfg), super::SyncOptions::default()) {
        Ok(r) => fields(&r),
        Err(crate::machines::common::RunError::Config(e)) => Err(e.into()),
        Err(_) if cancelled() => Err(ModelError::Interrupted),
        Err(e) => Err(ModelError::Failed(e.to_string())),
    }
}

/// The row.
pub const MODEL: ModelDef = ModelDef {
    name: "barrier",
    kind: ModelKind::Simulated,
    class: "BarrierConfig",
    time_unit: "ms",
    summary_keys: &[
        "time_per_iteration",
        "ci90_half_width",
        "start",
        "end",
        "iterations",
        "useful_utilization",
        "useful_time",
        "busy_wait_time",
        "measured_busy_wait_time",
        "overhead_time",
        "context_switches",
        "blocking_events",
        "yields",
        "alpha_measured",
        "preemptions",
        "slot_switches",
        "fragmentation",
        "gang_iterations",
        "events",
        "max_pending",
        "t_p",
        "t_w",
        "eq6",
        "eq8",
        "eq12",
        "eq13",
        "wall_seconds",
        "iteration_min",
        "iteration_p10",
        "iteration_p50",
        "iteration_p90",
        "iteration_p99",
        "iteration_max",
    ],
    sweep_keys: &[],
    headline: Some("time_per_iteration"),
    seed_key: "seed",
    page: &PAGE,
    config: || Box::new(SyncConfig::default()),
    run: Some(run),
};
