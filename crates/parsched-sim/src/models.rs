//! The one table of models ([`MODELS`]): everything the bindings, the
//! command line, sweeps and the documentation know of a model comes from
//! its row.
//!
//! A model's folder (`machines/pools/`, ...) declares its row as a
//! `pub const MODEL: ModelDef` beside its schema; this file lists the rows,
//! one line each. From the table come: the Python registry
//! (`parsched.sim.models.MODELS`) and config classes, the bindings' config
//! handling (`_core.validate_config`, `config_values`, `schema`), the
//! command line's model choices, the docs' model pages and the site's nav.
//! Adding a model is its folder plus one line here (docs/contributing.md).

use parsched_core::schema::Configuration;
use serde::Serialize;

/// What a model is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    /// Run by `parsched simulate MODEL` / `parsched.simulate(config)`, swept.
    Simulated,
    /// Writes a workload (`parsched generate MODEL`).
    Generator,
}

/// A model's page of the documentation site (`models/<name>.md`); several
/// rows may share one (the parallel desktop's Table 1 and Figures 1-2).
#[derive(Debug, Serialize)]
pub struct ModelPage {
    /// The page, under the site's root (`models/pools.md`).
    pub path: &'static str,
    /// Its title in the site's navigation.
    pub nav: &'static str,
    /// Its heading.
    pub title: &'static str,
    /// The paper (a citation, Markdown).
    pub paper: &'static str,
    /// What is modelled, one paragraph.
    pub what: &'static str,
    /// A command that runs it.
    pub cli: &'static str,
    /// The same in Python (after `import parsched`).
    pub python: &'static str,
    /// `(link text, site path)` of its policy and format pages.
    pub policies: &'static [(&'static str, &'static str)],
    /// The `parsched reproduce` kinds that regenerate its paper's results.
    pub reproductions: &'static [&'static str],
}

/// Why a generic run ([`Runner`]) failed.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// A key's value (the message names the key).
    #[error(transparent)]
    Config(#[from] parsched_core::ConfigError),
    /// Stopped through its cancel flag ([`crate::cancel`]).
    #[error("interrupted")]
    Interrupted,
    /// Anything else the model reports (a time limit, a program error).
    #[error("{0}")]
    Failed(String),
}

/// A model's generic run: its configuration in (the row's own type), its
/// result out as its fields by name, with `workers` threads for the
/// replications where it runs several (the result does not depend on it).
/// Cancelled through the flag of [`crate::cancel::with_cancel`].
pub type Runner = fn(Box<dyn Configuration>, usize) -> Result<serde_json::Value, ModelError>;

/// A configuration's own type (the row's).
pub fn typed<T: 'static>(cfg: Box<dyn Configuration>) -> Box<T> {
    cfg.into_any()
        .downcast::<T>()
        .unwrap_or_else(|_| unreachable!("a model's row makes its own configuration type"))
}

/// A result's fields by name.
pub fn fields<T: Serialize>(result: &T) -> Result<serde_json::Value, ModelError> {
    serde_json::to_value(result).map_err(|e| ModelError::Failed(e.to_string()))
}

/// Whether the flag of [`crate::cancel::with_cancel`] is set (a run that
/// failed then was interrupted).
pub fn cancelled() -> bool {
    crate::cancel::current().is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
}

/// One model: a row of [`MODELS`].
#[derive(Serialize)]
pub struct ModelDef {
    /// The name (`parsched simulate NAME`, the schema's and config's `MODEL`).
    pub name: &'static str,
    pub kind: ModelKind,
    /// Its Python configuration class (`parsched.PoolsConfig`).
    pub class: &'static str,
    /// The unit of its times ("ms", "s", or the paper's own).
    pub time_unit: &'static str,
    /// Its result's summary keys, in order (each defined in docs/glossary.md).
    pub summary_keys: &'static [&'static str],
    /// Keys a sweep row adds to the summary.
    pub sweep_keys: &'static [&'static str],
    /// The summary number a sweep's CI target applies to by default.
    pub headline: Option<&'static str>,
    /// The key a sweep's replications vary.
    pub seed_key: &'static str,
    /// Its documentation page.
    pub page: &'static ModelPage,
    /// A default configuration (the paper's values).
    #[serde(skip)]
    pub config: fn() -> Box<dyn Configuration>,
    /// Its generic run (`None`: run only through its own front end, e.g. a
    /// generator, or the batch machine, which needs a trace). Exported as
    /// whether it has one.
    #[serde(serialize_with = "has_run")]
    pub run: Option<Runner>,
}

fn has_run<S: serde::Serializer>(run: &Option<Runner>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bool(run.is_some())
}

impl std::fmt::Debug for ModelDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelDef")
            .field("name", &self.name)
            .finish()
    }
}

/// Every model, in documentation order: one line each.
pub static MODELS: &[&ModelDef] = &[
    &crate::machines::pools::MODEL,
    &crate::machines::barrier::MODEL,
    &crate::machines::batch::MODEL,
    &crate::machines::cluster::MODEL,
    &crate::machines::desktop::FCS_MODEL,
    &crate::machines::desktop::FIGURE_MODEL,
    &crate::machines::regions::MODEL,
    &crate::workloads::lublin::MODEL,
];

/// The row of `name`.
pub fn model(name: &str) -> Option<&'static ModelDef> {
    MODELS.iter().copied().find(|m| m.name == name)
}

/// Every model's name, in table order, joined by ", " (what an error allows).
pub fn names() -> String {
    MODELS.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
}

/// The error of a name that is not a model's.
pub fn unknown(name: &str) -> parsched_core::ConfigError {
    parsched_core::ConfigError::new(
        "model",
        format!(
            "{:?} is not a model",
            parsched_core::clip(name, parsched_core::ECHO_MAX)
        ),
        names(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_named_once_and_its_default_configuration_is_valid() {
        let mut seen = std::collections::HashSet::new();
        for m in MODELS {
            assert!(seen.insert(m.name), "{} listed twice", m.name);
            let c = (m.config)();
            c.validate()
                .unwrap_or_else(|e| panic!("{}: default invalid: {e}", m.name));
            assert!(!c.keys().is_empty(), "{}: no keys", m.name);
            assert!(m.page.path.starts_with("models/") && m.page.path.ends_with(".md"));
            if let Some(h) = m.headline {
                assert!(m.summary_keys.contains(&h), "{}: headline {h}", m.name);
            }
            assert_eq!(
                m.kind == ModelKind::Simulated,
                !m.summary_keys.is_empty(),
                "{}: a simulated model has summary keys, a generator none",
                m.name
            );
        }
        assert!(model("pools").is_some());
        let e = unknown("nope");
        assert_eq!(e.field, "model");
        assert!(e.allowed.contains("regions"), "{}", e.allowed);
    }
}
