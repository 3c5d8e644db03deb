//! The rows of the model table (`crate::models`) of seed 002's parallel
//! desktop: `fcs` (Table 1) and `fcs_figure` (Figures 1-2).

use super::figs::{FigureConfig, FIGURES_SCHEMA};
use super::{DesktopConfig, FCS_SCHEMA};
use crate::machines::cluster::{model_error, model_options};
use crate::models::def::{fields, typed, ModelDef, ModelError, ModelKind, ModelPage};
use parsched_core::schema::Configuration;

parsched_core::schematic!(DesktopConfig, FCS_SCHEMA);

parsched_core::schematic!(FigureConfig, FIGURES_SCHEMA);

fn run_fcs(cfg: Box<dyn Configuration>, workers: usize) -> Result<serde_json::Value, ModelError> {
    let cfg = typed::<DesktopConfig>(cfg);
    fields(&super::run(&cfg, &model_options(workers)).map_err(model_error)?)
}

fn run_figure(
    cfg: Box<dyn Configuration>,
    workers: usize,
) -> Result<serde_json::Value, ModelError> {
    let cfg = typed::<FigureConfig>(cfg);
    fields(&super::figs::run_figure(&cfg, &model_options(workers)).map_err(model_error)?)
}

static DESKTOP_PAGE: ModelPage = ModelPage {
    path: "models/fcs.md",
    nav: "Flexible coscheduling",
    title: "Flexible coscheduling on the parallel desktop",
    paper: "E. Frachtenberg, *Process scheduling for the parallel desktop* (seed 002)",
    what: "Processes are classified from what they do (CS: coscheduled, F: frustrated, \
           DC: don't-care) and scheduled by class, against Linux, FCFS, gang and \
           spin-block on a load-imbalanced workload (Table 1) and beside sequential \
           stressors (Figures 1-2).",
    cli: "parsched simulate fcs --set scheme=fcs",
    python: "r = parsched.simulate(parsched.FcsConfig())",
    policies: &[
        ("Flexible coscheduling", "policies/fcs.md"),
        ("The classifier", "policies/classifier.md"),
    ],
    reproductions: &["fcs", "desktop"],
};

/// The parallel desktop's Table 1 (seed 002).
pub const FCS_MODEL: ModelDef = ModelDef {
    name: "fcs",
    kind: ModelKind::Simulated,
    class: "FcsConfig",
    time_unit: "s",
    summary_keys: &[
        "scheme",
        "makespan",
        "makespan_ci90",
        "optimum",
        "over_optimum",
        "context_switches",
        "blocks",
        "slot_switches",
        "events",
        "wall_seconds",
    ],
    sweep_keys: &["livelock"],
    headline: Some("makespan"),
    seed_key: "seed",
    page: &DESKTOP_PAGE,
    config: || Box::new(DesktopConfig::default()),
    run: Some(run_fcs),
};

/// The parallel desktop's Figures 1-2 (seed 002).
pub const FIGURE_MODEL: ModelDef = ModelDef {
    name: "fcs_figure",
    kind: ModelKind::Simulated,
    class: "FcsFigureConfig",
    time_unit: "s",
    summary_keys: &["machine", "work_s", "events", "wall_seconds"],
    sweep_keys: &[],
    headline: None,
    seed_key: "seed",
    page: &DESKTOP_PAGE,
    config: || Box::new(FigureConfig::default()),
    run: Some(run_figure),
};
