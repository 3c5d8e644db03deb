//! The rows of the model table (`crate::models`) of the two papers' machines
//! in this folder: seed 003's network of workstations (`cosched`) and seed
//! 002's parallel desktop (`fcs`, Table 1; `fcs_figure`, Figures 1-2).

use super::desktop::{DesktopConfig, FCS_SCHEMA};
use super::desktop_figs::{FigureConfig, FIGURES_SCHEMA};
use super::{ClusterConfig, SCHEMA};
use super::{ClusterError, ClusterOptions};
use crate::models::{fields, typed, ModelDef, ModelError, ModelKind, ModelPage};
use parsched_core::schema::{Configuration, Schema, Schematic};
use parsched_core::ConfigError;

impl Schematic for ClusterConfig {
    fn schema() -> &'static Schema<Self> {
        &SCHEMA
    }
    fn validate_all(&self) -> Result<(), ConfigError> {
        self.validate()
    }
}

impl Schematic for DesktopConfig {
    fn schema() -> &'static Schema<Self> {
        &FCS_SCHEMA
    }
    fn validate_all(&self) -> Result<(), ConfigError> {
        self.validate()
    }
}

impl Schematic for FigureConfig {
    fn schema() -> &'static Schema<Self> {
        &FIGURES_SCHEMA
    }
    fn validate_all(&self) -> Result<(), ConfigError> {
        self.validate()
    }
}

fn failed(e: ClusterError) -> ModelError {
    match e {
        ClusterError::Config(e) => e.into(),
        ClusterError::Interrupted => ModelError::Interrupted,
        e => ModelError::Failed(e.to_string()),
    }
}

fn options(workers: usize) -> ClusterOptions {
    ClusterOptions {
        workers,
        ..Default::default()
    }
}

fn run_cosched(
    cfg: Box<dyn Configuration>,
    workers: usize,
) -> Result<serde_json::Value, ModelError> {
    fields(&super::run(&typed::<ClusterConfig>(cfg), &options(workers)).map_err(failed)?)
}

fn run_fcs(cfg: Box<dyn Configuration>, workers: usize) -> Result<serde_json::Value, ModelError> {
    fields(&super::desktop::run(&typed::<DesktopConfig>(cfg), &options(workers)).map_err(failed)?)
}

fn run_figure(
    cfg: Box<dyn Configuration>,
    workers: usize,
) -> Result<serde_json::Value, ModelError> {
    let cfg = typed::<FigureConfig>(cfg);
    fields(&super::desktop_figs::run_figure(&cfg, &options(workers)).map_err(failed)?)
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
