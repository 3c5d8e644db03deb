//! The default policy: start every job and let Linux schedule them (the
//! baseline). No timer, no freezer, no confinement.

use super::mechanism::{Decision, Mechanism};
use super::policy::{PolicyEntry, RuntimePolicy};
use crate::error::Result;

/// `default`, as [`super::policy::POLICIES`] lists it.
pub(crate) const ENTRY: PolicyEntry = PolicyEntry {
    name: "default",
    aliases: &[],
    doc: "start every job and let Linux schedule them (the baseline)",
    fragment: None,
    build: |_, _| Ok(Box::new(DefaultPolicy)),
};

/// The default policy (it has no state).
pub(crate) struct DefaultPolicy;

impl RuntimePolicy for DefaultPolicy {
    fn name(&self) -> &'static str {
        "default"
    }

    fn start(&mut self, m: &mut Mechanism) -> Result<()> {
        for i in 0..m.jobs().len() {
            m.apply(Decision::spawn(i))?;
        }
        Ok(())
    }
}
