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

pub mod def;
pub use def::*;

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
