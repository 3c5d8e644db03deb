//! Configurations from Python dicts: values, the typed configs of every model, their keys, values and estimates.

use super::*;

pub(crate) fn value_of(key: &str, v: &Bound<'_, PyAny>) -> PyResult<Value> {
    if v.is_instance_of::<PyBool>() {
        Ok(Value::Bool(v.extract()?))
    } else if v.is_instance_of::<PyInt>() {
        match v.extract::<i64>() {
            Ok(i) => Ok(Value::Int(i)),
            // Above i64::MAX (seeds up to 2^64 − 1): passed as text, parsed as u64.
            Err(_) => v
                .extract::<u64>()
                .map(|u| Value::Str(u.to_string()))
                .map_err(|_| {
                    ConfigError::new_err(format!(
                        "{key}: integer out of range; allowed: 0 <= value < 2^64"
                    ))
                }),
        }
    } else if v.is_instance_of::<PyFloat>() {
        Ok(Value::Float(v.extract()?))
    } else if v.is_instance_of::<PyString>() {
        Ok(Value::Str(v.extract()?))
    } else if v.is_instance_of::<PyList>()
        || v.is_instance_of::<PyTuple>()
        || v.hasattr("__array__")?
    {
        v.extract::<Vec<f64>>().map(Value::List).map_err(|_| {
            ConfigError::new_err(format!("{key}: not a list of numbers; allowed: numbers"))
        })
    } else {
        Err(ConfigError::new_err(format!(
            "{key}: value of type {} is not accepted; allowed: a bool, int, float, str or a \
             list of numbers",
            v.get_type().name()?
        )))
    }
}

/// Calls `f(key, value)` for every entry of a config dict whose value is not
/// `None` (a `None` keeps the default).
pub(crate) fn apply_config<'py>(
    config: &Bound<'py, PyDict>,
    mut f: impl FnMut(&str, &Bound<'py, PyAny>) -> PyResult<()>,
) -> PyResult<()> {
    for (k, v) in config.iter() {
        let key: String = k
            .extract()
            .map_err(|_| ConfigError::new_err("config keys must be strings"))?;
        if !v.is_none() {
            f(&key, &v)?;
        }
    }
    Ok(())
}

/// Converts a Python value and hands it to a typed config's `set`.
pub(crate) fn set_value(
    key: &str,
    v: &Bound<'_, PyAny>,
    set: impl FnOnce(&str, &Value) -> Result<(), parsched_core::ConfigError>,
) -> PyResult<()> {
    let val = value_of(key, v)?;
    set(key, &val).map_err(config_err)
}

/// Applies every key of `config` with `set`, the key `list_key` given as a
/// Python list or tuple first turned into the core's text form by `text`
/// (which gives `None` for any other value), the rest as [`set_value`]
/// converts them: the configurations with one list-valued key (cosched's
/// and fcs's `jobs`, the desktop figures' `schedulers`).
fn apply_with_list<'py>(
    config: &Bound<'py, PyDict>,
    list_key: &str,
    text: impl Fn(&Bound<'py, PyAny>) -> PyResult<Option<String>>,
    mut set: impl FnMut(&str, &Value) -> Result<(), parsched_core::ConfigError>,
) -> PyResult<()> {
    apply_config(config, |key, v| {
        if key == list_key {
            if let Some(t) = text(v)? {
                return set(key, &Value::Str(t)).map_err(config_err);
            }
        }
        set_value(key, v, &mut set)
    })
}

pub(crate) fn arrivals_of(v: &Bound<'_, PyAny>) -> PyResult<Vec<Arrival>> {
    let d: &Bound<'_, PyDict> = v
        .downcast()
        .map_err(|_| ConfigError::new_err("arrivals: not a dict of columns; allowed: {'arrival': [...], 'd': [...], 'para_work': [...]}"))?;
    let col = |name: &str| -> PyResult<Option<Vec<f64>>> {
        match d.get_item(name)? {
            None => Ok(None),
            Some(c) => c.extract::<Vec<f64>>().map(Some).map_err(|_| {
                ConfigError::new_err(format!(
                    "arrivals: column {name} is not a list of numbers; allowed: numbers"
                ))
            }),
        }
    };
    let arrival = col("arrival")?.ok_or_else(|| {
        ConfigError::new_err(
            "arrivals: column arrival is missing; allowed: columns arrival, d, para_work",
        )
    })?;
    let dd = col("d")?.ok_or_else(|| {
        ConfigError::new_err(
            "arrivals: column d is missing; allowed: columns arrival, d, para_work",
        )
    })?;
    let work = col("para_work")?;
    if dd.len() != arrival.len() || work.as_ref().is_some_and(|w| w.len() != arrival.len()) {
        return Err(ConfigError::new_err(
            "arrivals: columns have different lengths; allowed: equal-length columns",
        ));
    }
    let mut out = Vec::with_capacity(arrival.len());
    for (i, (&t, &dv)) in arrival.iter().zip(&dd).enumerate() {
        if dv.fract() != 0.0 || !(1.0..4e9).contains(&dv) {
            return Err(config_err(parsched_core::ConfigError::new(
                format!("arrivals row {}: d", i + 1),
                format!("{dv} is not a positive integer"),
                "1 <= d <= P",
            )));
        }
        out.push(Arrival {
            arrival: t,
            d: dv as u32,
            // NaN: the default demand (an empty cell of an arrivals file)
            para_work: work.as_ref().map(|w| w[i]).filter(|w| !w.is_nan()),
        });
    }
    Ok(out)
}

/// One model's typed configuration, built from a Python dict by the model's
/// own `set` (so keys, types and ranges are the core's).
pub(crate) enum ModelConfig {
    Pools(PoolsConfig),
    Barrier(SyncConfig),
    Batch(BatchConfig),
    Cosched(Box<ClusterConfig>),
    Fcs(Box<DesktopConfig>),
    FcsFigure(Box<desktop_figs::FigureConfig>),
    Regions(Box<RegionsConfig>),
    Lublin(Box<parsched_sim::workloads::lublin::LublinConfig>),
}

pub(crate) const MODELS: &str = "pools, barrier, batch, cosched, fcs, fcs_figure, regions, lublin";

pub(crate) fn unknown_model(model: &str) -> PyErr {
    config_err(parsched_core::ConfigError::new(
        "model",
        format!(
            "{:?} is not a model",
            parsched_core::clip(model, parsched_core::ECHO_MAX)
        ),
        MODELS,
    ))
}

impl ModelConfig {
    pub(crate) fn build(model: &str, config: &Bound<'_, PyDict>) -> PyResult<ModelConfig> {
        Ok(match model {
            "pools" => {
                let mut cfg = PoolsConfig::default();
                let mut arrivals = None;
                apply_config(config, |key, v| {
                    if key == "arrivals" {
                        arrivals = Some(arrivals_of(v)?);
                        return Ok(());
                    }
                    set_value(key, v, |k, val| cfg.set(k, val))
                })?;
                cfg.arrivals = arrivals;
                ModelConfig::Pools(cfg)
            }
            "barrier" => {
                let mut cfg = SyncConfig::default();
                apply_config(config, |key, v| set_value(key, v, |k, val| cfg.set(k, val)))?;
                ModelConfig::Barrier(cfg)
            }
            "batch" => {
                let mut cfg = BatchConfig::default();
                apply_config(config, |key, v| set_value(key, v, |k, val| cfg.set(k, val)))?;
                ModelConfig::Batch(cfg)
            }
            "cosched" => {
                let mut cfg = ClusterConfig::default();
                let allowed = "application names (LIFE3.5, LIFE12, MG, LU, EP)";
                apply_with_list(
                    config,
                    "jobs",
                    |v| names_text("jobs", v, allowed),
                    |k, val| cfg.set(k, val),
                )?;
                ModelConfig::Cosched(Box::new(cfg))
            }
            "fcs" => {
                let mut cfg = DesktopConfig::default();
                apply_with_list(config, "jobs", fcs_jobs_text, |k, val| cfg.set(k, val))?;
                ModelConfig::Fcs(Box::new(cfg))
            }
            "fcs_figure" => {
                let mut cfg = desktop_figs::FigureConfig::default();
                apply_with_list(
                    config,
                    "schedulers",
                    |v| names_text("schedulers", v, "default, gang"),
                    |k, val| cfg.set(k, val),
                )?;
                ModelConfig::FcsFigure(Box::new(cfg))
            }
            "regions" => {
                let mut cfg = RegionsConfig::default();
                apply_config(config, |key, v| set_value(key, v, |k, val| cfg.set(k, val)))?;
                ModelConfig::Regions(Box::new(cfg))
            }
            "lublin" => {
                let mut cfg = parsched_sim::workloads::lublin::LublinConfig::generator_default();
                apply_config(config, |key, v| set_value(key, v, |k, val| cfg.set(k, val)))?;
                ModelConfig::Lublin(Box::new(cfg))
            }
            _ => return Err(unknown_model(model)),
        })
    }

    pub(crate) fn validate(&self) -> Result<(), parsched_core::ConfigError> {
        match self {
            ModelConfig::Pools(c) => c.validate(),
            ModelConfig::Barrier(c) => c.validate(),
            ModelConfig::Batch(c) => c.validate(),
            ModelConfig::Cosched(c) => c.validate(),
            ModelConfig::Fcs(c) => c.validate(),
            ModelConfig::FcsFigure(c) => c.validate(),
            ModelConfig::Regions(c) => c.validate(),
            ModelConfig::Lublin(c) => c.validate(),
        }
    }
}

/// A list or tuple of names as the core's comma-separated text (None for
/// any other value, which the config's `set` parses itself).
pub(crate) fn names_text(
    key: &str,
    v: &Bound<'_, PyAny>,
    allowed: &str,
) -> PyResult<Option<String>> {
    if !(v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>()) {
        return Ok(None);
    }
    let names: Vec<String> = v.extract().map_err(|_| {
        config_err(parsched_core::ConfigError::new(
            key,
            "not a list of names",
            allowed,
        ))
    })?;
    Ok(Some(names.join(",")))
}

/// Builds `model`'s configuration from `config` (keys as in `*_keys()`; `None`
/// values keep the default) and checks it with the core's `validate`. Raises
/// `ConfigError` (attributes `field`, `message`, `allowed`) on the first
/// problem. `model` is `pools`, `barrier`, `batch` or `cosched`.
#[pyfunction]
pub(crate) fn validate_config(model: &str, config: &Bound<'_, PyDict>) -> PyResult<()> {
    ModelConfig::build(model, config)?
        .validate()
        .map_err(config_err)
}

/// Where a key's value sits in the serialised configuration when it is not
/// a field of that name (top level, or in a nested struct such as
/// `overheads` or `rules`).
pub(crate) const SERIALISED_AS: &[(&str, &str, &str)] = &[
    ("W", "overheads", "w"),
    ("S", "overheads", "s"),
    ("procs_rule", "rules", "procs"),
];

/// `keys` with their values in the serialised `cfg`.
pub(crate) fn values_of<'py, T: serde::Serialize>(
    py: Python<'py>,
    cfg: &T,
    keys: &[&str],
) -> PyResult<Bound<'py, PyDict>> {
    let tree =
        pythonize::pythonize(py, cfg).map_err(|e| SimulationError::new_err(e.to_string()))?;
    let tree: Bound<'py, PyDict> = tree
        .downcast_into()
        .map_err(|_| SimulationError::new_err("a configuration did not serialise to a dict"))?;
    let out = PyDict::new(py);
    for &key in keys {
        let renamed = SERIALISED_AS.iter().find(|(k, _, _)| *k == key);
        let mut found = match renamed {
            Some((_, table, name)) => match tree.get_item(table)? {
                Some(t) => t.downcast_into::<PyDict>()?.get_item(name)?,
                None => None,
            },
            None => tree.get_item(key)?,
        };
        if found.is_none() && renamed.is_none() {
            // a field of a nested struct (e.g. `overheads.p0`, `rules.cancelled`)
            for (_, sub) in tree.iter() {
                if let Ok(sub) = sub.downcast::<PyDict>() {
                    if let Some(v) = sub.get_item(key)? {
                        found = Some(v);
                        break;
                    }
                }
            }
        }
        let v = found.ok_or_else(|| {
            SimulationError::new_err(format!("key {key} is missing from the serialised config"))
        })?;
        out.set_item(key, v)?;
    }
    Ok(out)
}

/// The value of every key of `model`'s configuration (`pools_keys()`,
/// `barrier_keys()`, `batch_keys()`, `cosched_keys()`), as `validate_config` / `simulate_*`
/// read them back: the core's defaults when `config` is empty.
#[pyfunction]
#[pyo3(signature = (model, config=None))]
pub(crate) fn config_values<'py>(
    py: Python<'py>,
    model: &str,
    config: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let empty = PyDict::new(py);
    match ModelConfig::build(model, config.unwrap_or(&empty))? {
        ModelConfig::Pools(c) => schema_values(py, &pools::SCHEMA, &c),
        ModelConfig::Barrier(c) => schema_values(py, &barrier::SCHEMA, &c),
        ModelConfig::Batch(c) => schema_values(py, &batch::SCHEMA, &c),
        ModelConfig::Cosched(c) => cosched_values(py, &c),
        ModelConfig::Fcs(c) => values_of(py, &*c, &desktop::FCS_SCHEMA.keys()),
        ModelConfig::FcsFigure(c) => values_of(py, &*c, &desktop_figs::FIGURES_SCHEMA.keys()),
        ModelConfig::Regions(c) => schema_values(py, &parsched_sim::machines::regions::SCHEMA, &*c),
        ModelConfig::Lublin(c) => schema_values(py, &parsched_sim::workloads::lublin::SCHEMA, &*c),
    }
}

/// What a run of `model`'s configuration `config` will cost, estimated from
/// the configuration alone (an upper bound): `{"sim_time": ..., "events":
/// ...}` (simulated time in the model's unit: ms for barrier; pools:
/// `events`, `placement` (the placement's scans of the pools, in
/// event-equivalents) and `cost`, their sum). `validate` refuses a run
/// estimated above its `max_events`. Models: barrier, pools.
#[pyfunction]
pub(crate) fn estimate_run<'py>(
    py: Python<'py>,
    model: &str,
    config: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    match ModelConfig::build(model, config)? {
        ModelConfig::Barrier(c) => {
            let e = c.estimate();
            out.set_item("sim_time", e.sim_time_ms)?;
            out.set_item("events", e.events)?;
        }
        ModelConfig::Pools(c) => {
            let e = c.estimate();
            out.set_item("events", e.events)?;
            out.set_item("placement", e.placement)?;
            out.set_item("cost", e.cost())?;
        }
        _ => {
            return Err(config_err(parsched_core::ConfigError::new(
                "model",
                format!("no estimate for {model}"),
                "barrier, pools",
            )))
        }
    }
    Ok(out)
}

/// The keys `simulate_cosched` accepts, in documentation order.
#[pyfunction]
pub(crate) fn cosched_keys() -> Vec<&'static str> {
    cluster::keys()
}

/// The keys `simulate_batch` accepts.
#[pyfunction]
pub(crate) fn batch_keys() -> Vec<&'static str> {
    batch::keys()
}

/// The keys `simulate_barrier` accepts.
#[pyfunction]
pub(crate) fn barrier_keys() -> Vec<&'static str> {
    barrier::keys()
}

/// Default values of `simulate_barrier`'s keys.
#[pyfunction]
pub(crate) fn barrier_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    pythonize::pythonize(py, &SyncConfig::default())
        .map_err(|e| SimulationError::new_err(e.to_string()))
}

/// The keys `simulate_pools` accepts, in documentation order.
#[pyfunction]
pub(crate) fn pools_keys() -> Vec<&'static str> {
    pools::keys()
}

/// The models whose configuration has a declarative schema (`schema(model)`).
pub(crate) const SCHEMA_MODELS: &str =
    "pools, barrier, batch, cosched, fcs, fcs_figure, regions, lublin";

/// The schema of `model`'s configuration, from the core: one dict per key, in
/// documentation order, with `key`, `type` (`bool`, `int`, `float`, `choice`,
/// `list`, `text`), its range (`min` / `max`: for an int a number, for a
/// float or a list `{"value": x, "closed": bool}` or `None`) or `choices`,
/// `optional`, `unit`, `symbol` and `section` (the paper's), `doc` and
/// `default`.
#[pyfunction]
pub(crate) fn schema<'py>(py: Python<'py>, model: &str) -> PyResult<Bound<'py, PyAny>> {
    let info = match model {
        "pools" => pools::SCHEMA.describe(&PoolsConfig::default()),
        "barrier" => barrier::SCHEMA.describe(&SyncConfig::default()),
        "batch" => batch::SCHEMA.describe(&BatchConfig::default()),
        "cosched" => cluster::SCHEMA.describe(&ClusterConfig::default()),
        "fcs" => desktop::FCS_SCHEMA.describe(&DesktopConfig::default()),
        "fcs_figure" => {
            desktop_figs::FIGURES_SCHEMA.describe(&desktop_figs::FigureConfig::default())
        }
        "lublin" => parsched_sim::workloads::lublin::SCHEMA
            .describe(&parsched_sim::workloads::lublin::LublinConfig::generator_default()),
        "regions" => parsched_sim::machines::regions::SCHEMA
            .describe(&parsched_sim::machines::regions::RegionsConfig::default()),
        _ => {
            return Err(config_err(parsched_core::ConfigError::new(
                "model",
                format!(
                    "{:?} has no schema",
                    parsched_core::clip(model, parsched_core::ECHO_MAX)
                ),
                SCHEMA_MODELS,
            )))
        }
    };
    pythonize::pythonize(py, &info).map_err(|e| SimulationError::new_err(e.to_string()))
}

/// Every key of `cfg` with its value, read through `schema`'s getters.
pub(crate) fn schema_values<'py, C>(
    py: Python<'py>,
    schema: &parsched_core::schema::Schema<C>,
    cfg: &C,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for f in schema.fields {
        let v = pythonize::pythonize(py, &(f.get)(cfg))
            .map_err(|e| SimulationError::new_err(e.to_string()))?;
        out.set_item(f.key, v)?;
    }
    Ok(out)
}
