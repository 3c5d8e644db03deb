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

/// One model's configuration, built from a Python dict by the model's own
/// schema (so keys, types and ranges are the core's): the row of the model
/// table (`parsched_sim::models::MODELS`) and its configuration.
pub(crate) struct ModelConfig {
    pub(crate) def: &'static ModelDef,
    pub(crate) cfg: Box<dyn Configuration>,
}

impl ModelConfig {
    pub(crate) fn build(model: &str, config: &Bound<'_, PyDict>) -> PyResult<ModelConfig> {
        let def = models::model(model).ok_or_else(|| config_err(models::unknown(model)))?;
        let mut cfg = (def.config)();
        let mut arrivals = None;
        apply_config(config, |key, v| {
            if key == "arrivals" && def.name == "pools" {
                // (columns: not a key of the schema)
                arrivals = Some(arrivals_of(v)?);
                return Ok(());
            }
            let val = value_by_kind(key, cfg.kind(key), v)?;
            cfg.set(key, &val).map_err(config_err)
        })?;
        if let Some(a) = arrivals {
            let mut pools = downcast::<PoolsConfig>(cfg);
            pools.arrivals = Some(a);
            cfg = pools;
        }
        Ok(ModelConfig { def, cfg })
    }

    pub(crate) fn validate(&self) -> Result<(), parsched_core::ConfigError> {
        self.cfg.validate()
    }

    /// The configuration as its own type (the row's).
    pub(crate) fn into_typed<T: 'static>(self) -> Box<T> {
        downcast(self.cfg)
    }
}

fn downcast<T: 'static>(cfg: Box<dyn Configuration>) -> Box<T> {
    cfg.into_any()
        .downcast::<T>()
        .unwrap_or_else(|_| unreachable!("a model's row makes its own configuration type"))
}

/// `model`'s configuration from a Python dict, checked, as its own type.
pub(crate) fn typed_config<T: 'static>(
    model: &str,
    config: &Bound<'_, PyDict>,
) -> PyResult<Box<T>> {
    Ok(ModelConfig::build(model, config)?.into_typed())
}

/// A Python value as the core's [`Value`] for a key of kind `kind`: a list
/// or tuple of names for a `names` key as the names' text, a list of lists
/// of numbers for a `table` key as its rows, anything else as [`value_of`]
/// converts it.
fn value_by_kind(key: &str, kind: Option<Kind>, v: &Bound<'_, PyAny>) -> PyResult<Value> {
    let listed = v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>();
    match kind {
        Some(Kind::Names { choices }) if listed => {
            let names: Vec<String> = v.extract().map_err(|_| {
                config_err(parsched_core::ConfigError::new(
                    key,
                    "not a list of names",
                    choices.join(", "),
                ))
            })?;
            Ok(Value::Str(names.join(",")))
        }
        Some(Kind::Table { .. }) if listed => {
            v.extract::<Vec<Vec<f64>>>().map(Value::Rows).or_else(|_| {
                v.extract::<Vec<f64>>().map(Value::List).map_err(|_| {
                    config_err(parsched_core::ConfigError::new(
                    key,
                    "not a list of lists of numbers",
                    "rows of numbers, e.g. [[1,1,2,2],[2,2,1,1]], or their text (1,1,2,2;2,2,1,1)",
                ))
                })
            })
        }
        _ => value_of(key, v),
    }
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

/// The value of every key of `model`'s configuration, as `validate_config` /
/// `simulate_*` read them back: the core's defaults when `config` is empty.
#[pyfunction]
#[pyo3(signature = (model, config=None))]
pub(crate) fn config_values<'py>(
    py: Python<'py>,
    model: &str,
    config: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let empty = PyDict::new(py);
    let m = ModelConfig::build(model, config.unwrap_or(&empty))?;
    erased_values(py, &*m.cfg)
}

/// Every key of an erased configuration with its value, read through its
/// schema's getters.
pub(crate) fn erased_values<'py>(
    py: Python<'py>,
    cfg: &dyn Configuration,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (key, v) in cfg.values() {
        let v =
            pythonize::pythonize(py, &v).map_err(|e| SimulationError::new_err(e.to_string()))?;
        out.set_item(key, v)?;
    }
    Ok(out)
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
    let m = ModelConfig::build(model, config)?;
    if let Some(c) = m.cfg.as_any().downcast_ref::<SyncConfig>() {
        let e = c.estimate();
        out.set_item("sim_time", e.sim_time_ms)?;
        out.set_item("events", e.events)?;
    } else if let Some(c) = m.cfg.as_any().downcast_ref::<PoolsConfig>() {
        let e = c.estimate();
        out.set_item("events", e.events)?;
        out.set_item("placement", e.placement)?;
        out.set_item("cost", e.cost())?;
    } else {
        return Err(config_err(parsched_core::ConfigError::new(
            "model",
            format!("no estimate for {model}"),
            "barrier, pools",
        )));
    }
    Ok(out)
}

/// The keys `model`'s configuration accepts, in documentation order.
#[pyfunction]
pub(crate) fn keys(model: &str) -> PyResult<Vec<&'static str>> {
    let def = models::model(model).ok_or_else(|| config_err(models::unknown(model)))?;
    Ok((def.config)().keys())
}

/// Default values of `simulate_barrier`'s keys.
#[pyfunction]
pub(crate) fn barrier_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    pythonize::pythonize(py, &SyncConfig::default())
        .map_err(|e| SimulationError::new_err(e.to_string()))
}

/// The schema of `model`'s configuration, from the core: one dict per key, in
/// documentation order, with `key`, `type` (`bool`, `int`, `float`, `choice`,
/// `list`, `names`, `text`), its range (`min` / `max`: for an int a number,
/// for a float or a list `{"value": x, "closed": bool}` or `None`) or
/// `choices`, `optional`, `unit`, `symbol` and `section` (the paper's), `doc`
/// and `default`.
#[pyfunction]
pub(crate) fn schema<'py>(py: Python<'py>, model: &str) -> PyResult<Bound<'py, PyAny>> {
    let def = models::model(model).ok_or_else(|| config_err(models::unknown(model)))?;
    let info = (def.config)().describe();
    pythonize::pythonize(py, &info).map_err(|e| SimulationError::new_err(e.to_string()))
}

/// The table of models (`parsched_sim::models::MODELS`), in documentation
/// order: one dict per model with `name`, `kind` (`simulated`, `generator`),
/// `class` (its Python configuration class), `time_unit`, `summary_keys`,
/// `sweep_keys`, `headline`, `seed_key`, `run` (whether it has a generic run) and `page` (`path`, `nav`, `title`,
/// `paper`, `what`, `cli`, `python`, `policies`, `reproductions`).
#[pyfunction]
pub(crate) fn models_table(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    pythonize::pythonize(py, &models::MODELS).map_err(|e| SimulationError::new_err(e.to_string()))
}

/// Runs `model`'s generic run (its row's runner) on `config`: the result's
/// fields by name, plus `config` (every key's value). `workers` threads run
/// the replications where the model runs several (the result does not
/// depend on it). Releases the GIL; Ctrl-C or `cancel_runs()` stops it with
/// `KeyboardInterrupt`. A model without one (a generator; batch, which
/// needs a trace) raises `ConfigError` naming the models that have one.
#[pyfunction]
#[pyo3(signature = (model, config, workers=1))]
pub(crate) fn simulate<'py>(
    py: Python<'py>,
    model: &str,
    config: &Bound<'py, PyDict>,
    workers: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let m = ModelConfig::build(model, config)?;
    let Some(run) = m.def.run else {
        let with: Vec<&str> = models::MODELS
            .iter()
            .filter(|d| d.run.is_some())
            .map(|d| d.name)
            .collect();
        return Err(config_err(parsched_core::ConfigError::new(
            "model",
            format!("{model} has no generic run"),
            with.join(", "),
        )));
    };
    m.validate().map_err(config_err)?;
    let values = erased_values(py, &*m.cfg)?;
    let cancel = Arc::new(AtomicBool::new(false));
    let cfg = m.cfg;
    let out = run_interruptible(py, &cancel, || {
        parsched_sim::cancel::with_cancel(&cancel, || run(cfg, workers.max(1)))
    })?
    .map_err(|e| match e {
        models::ModelError::Config(c) => config_err(c),
        models::ModelError::Interrupted => {
            pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted")
        }
        e @ models::ModelError::Failed(_) => SimulationError::new_err(e.to_string()),
    })?;
    let out =
        pythonize::pythonize(py, &out).map_err(|e| SimulationError::new_err(e.to_string()))?;
    if let Ok(d) = out.downcast::<PyDict>() {
        d.set_item("config", values)?;
    }
    Ok(out)
}
