//! The queue orders' table (`parsched_core::policy::batch::ORDERS`) for
//! Python: the docs generator and the tests read it from here.

use parsched_core::policy::batch::ORDERS;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Every queue order, in documentation order: a dict per row with `name`,
/// `formula`, `doc`, `source`, `stateful` and `backfill` (whether
/// `backfill_order` accepts it: every stateless order).
#[pyfunction]
pub(crate) fn queue_orders(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    ORDERS
        .iter()
        .map(|r| {
            let d = PyDict::new(py);
            d.set_item("name", r.name)?;
            d.set_item("formula", r.formula)?;
            d.set_item("doc", r.doc)?;
            d.set_item("source", r.source)?;
            d.set_item("stateful", r.stateful)?;
            d.set_item("backfill", !r.stateful)?;
            Ok(d)
        })
        .collect()
}
