//! The batch machine's row of the model table (`crate::models`).

use super::{BatchConfig, SCHEMA};
use crate::models::def::{ModelDef, ModelKind, ModelPage};

parsched_core::schematic!(BatchConfig, SCHEMA);

static PAGE: ModelPage = ModelPage {
    path: "models/batch.md",
    nav: "Batch on real logs",
    title: "Batch scheduling on real logs",
    paper: "FCFS, EASY and conservative backfilling (Lifka 1995; Mu'alem & Feitelson 2001), \
            reservation depth, the priority rules people compare (SJF, WFP3, UNICEF, F1-F4, \
            Slurm's multifactor), and gang scheduling with backfilling",
    what: "A workload trace in the Standard Workload Format (SWF), from a file or one of \
           the logs bundled with parsched (`parsched datasets`), runs under a space-sharing \
           or gang policy. Your own policy can be written in Python (a priority or full \
           control), and a Gymnasium environment lets an agent pick the next job.",
    cli: "parsched simulate batch --trace kth-sp2 --set policy=easy order=wfp3",
    python: "r = parsched.simulate_batch(\"kth-sp2\", priority=lambda q: q[\"requested\"])",
    policies: &[
        ("Batch policies", "policies/batch.md"),
        ("Queue orders", "policies/batch-orders.md"),
        (
            "Slurm's multifactor priority",
            "policies/batch-multifactor.md",
        ),
        ("Your own policy in Python", "policies/batch-python.md"),
        ("The Gymnasium environment", "policies/batch-gym.md"),
    ],
    reproductions: &["batch"],
};

/// The row.
pub const MODEL: ModelDef = ModelDef {
    name: "batch",
    kind: ModelKind::Simulated,
    class: "BatchConfig",
    time_unit: "s",
    summary_keys: &[
        "jobs",
        "procs",
        "avg_wait",
        "max_wait",
        "avg_response",
        "avg_slowdown",
        "avg_bounded_slowdown",
        "utilization",
        "makespan",
        "first_submit",
        "last_end",
        "killed",
        "max_queue",
        "avg_queue",
        "slot_switches",
        "wall_seconds",
    ],
    sweep_keys: &["dropped"],
    headline: Some("avg_bounded_slowdown"),
    seed_key: "workload_seed",
    page: &PAGE,
    config: || Box::new(BatchConfig::default()),
    run: None,
};
