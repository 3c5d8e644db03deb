//! Model formulas and statistics the Python side shares with the core.

use super::*;

/// Seed 000's bounded-geometric desired parallelism on 1..=`max` with mean
/// `mean`: the parameter q of the geometric law P(d = k) ∝ (1 − q)^(k−1)·q
/// that, truncated at `max`, has that mean (the workload generator's own
/// solve). Raises `ConfigError` (field `D`) when the mean cannot be reached.
#[pyfunction]
pub(crate) fn bounded_geometric_q(mean: f64, max: u32) -> PyResult<f64> {
    BoundedGeometric::with_mean(mean, max)
        .map(|g| g.q)
        .map_err(config_err)
}

/// Seed 001's t_p and t_w (eqs. 1–4) of a barrier configuration (keys as
/// for `simulate_barrier`; unset keys take their defaults): the one
/// computation, behind `BarrierConfig.t_p` / `t_w`.
#[pyfunction]
pub(crate) fn barrier_moments(config: &Bound<'_, PyDict>) -> PyResult<(f64, f64)> {
    let c = typed_config::<SyncConfig>("barrier", config)?;
    Ok((c.t_p(), c.t_w()))
}

/// t_w per unit of var for a gang of `n` (`dist`: "uniform" or
/// "exponential"; 0 for "empirical").
#[pyfunction]
pub(crate) fn tw_per_unit_var(n: u32, dist: &str) -> PyResult<f64> {
    let d = match dist {
        "uniform" => barrier::ComputeDist::Uniform,
        "exponential" => barrier::ComputeDist::Exponential,
        "empirical" => barrier::ComputeDist::Empirical,
        other => {
            return Err(config_err(parsched_core::ConfigError::new(
                "dist",
                format!(
                    "unknown distribution {:?}",
                    parsched_core::clip(other, parsched_core::ECHO_MAX)
                ),
                "uniform, exponential, empirical",
            )))
        }
    };
    Ok(barrier::tw_per_unit_var(n, d))
}

/// H_n = 1 + 1/2 + … + 1/n, correctly rounded.
#[pyfunction]
pub(crate) fn harmonic_number(n: u32) -> f64 {
    barrier::harmonic_number(n)
}

/// Mean and half-width of the two-sided 90% Student-t confidence interval of
/// independent observations (`stats::mean_ci90`; the half-width is NaN for
/// one value): the core's intervals, for `parsched sweep`'s replication targets.
#[pyfunction]
pub(crate) fn mean_ci90(values: Vec<f64>) -> (f64, f64) {
    parsched_sim::stats::mean_ci90(&values)
}

/// Checks an arrivals list (columns `arrival`, `d`, optional `para_work`)
/// with the core's rules; `procs` (if given) bounds d. Raises `ConfigError`
/// naming the row (`arrivals row N: COLUMN`).
#[pyfunction]
#[pyo3(signature = (columns, procs=None))]
pub(crate) fn check_arrivals(columns: &Bound<'_, PyAny>, procs: Option<u32>) -> PyResult<()> {
    let list = arrivals_of(columns)?;
    parsched_sim::workloads::forkjoin::check_arrivals(&list, procs.unwrap_or(u32::MAX))
        .map_err(config_err)
}
