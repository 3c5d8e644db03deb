//! What a row of the table of models ([`super::MODELS`]) holds: the types a
//! model's folder uses to declare its row (`model.rs`), apart from the table,
//! so that a row imports nothing that lists the rows.

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

/// One model: a row of [`super::MODELS`].
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
