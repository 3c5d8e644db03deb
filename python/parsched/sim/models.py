"""The one registry of parsched's simulated models (:data:`MODELS`).

Each :class:`Model` says, for one config class, how to run it
(``simulate``: config → its result, what :func:`parsched.simulate` calls),
how a sweep runs it (``summary``: the config's dict → the summary dict, a
module-level function so that it pickles for process and Dask executors),
which summary number a CI target defaults to (``headline``), which key a
replication varies (``seed_key``), and how its non-scalar fields show in a
sweep row (``cells``). :func:`parsched.simulate`, :func:`parsched.sweep`,
sweep spec files and ``parsched simulate MODEL`` all look models up here;
adding a model is adding an entry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from parsched.config import (
    BarrierConfig,
    BatchConfig,
    CoschedConfig,
    FcsConfig,
    FcsFigureConfig,
    PoolsConfig,
    RegionsConfig,
)
from parsched.config.base import ConfigBase

__all__ = ["MODELS", "Model", "model_of", "resolve"]


def resolve(ref: str) -> Callable[..., Any]:
    """The function named ``"module:function"`` (imported on first use)."""
    module, _, name = ref.partition(":")
    return getattr(import_module(module), name)


@dataclass(frozen=True)
class Model:
    """One model: its name (the config's ``MODEL`` and the CLI's MODEL), its
    config class and references (``"module:function"``) to its runners."""

    name: str
    config: type[ConfigBase]
    #: ``(config, **options) -> result``
    simulate: str
    #: ``(config dict) -> summary dict`` for sweeps; None: not swept
    summary: str | None
    #: the summary number a sweep's CI target applies to by default
    headline: str | None = None
    #: ``"module:NAME"`` of the tuple of the result's summary keys
    summary_keys: str | None = None
    #: keys a sweep row adds to the summary
    extra_keys: tuple[str, ...] = ()
    #: the key a sweep replication varies
    seed_key: str = "seed"
    #: sweep-row cells of the non-scalar fields: field -> config value -> cell
    cells: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)

    @property
    def keys(self) -> tuple[str, ...]:
        """The summary keys of this model's result (and of its sweep rows)."""
        base = resolve(self.summary_keys) if self.summary_keys else ()
        return (*base, *self.extra_keys)

    @property
    def metrics(self) -> tuple[str, ...]:
        """Summary keys a sweep's CI target may name (numbers that depend on
        the seed only)."""
        return tuple(k for k in self.keys if k not in _NOT_METRICS)

    def run(self, config: ConfigBase, **options: Any) -> Any:
        return resolve(self.simulate)(config, **options)

    def runner(self) -> Callable[[dict[str, Any]], dict[str, Any]]:
        if self.summary is None:
            raise ValueError(f"no sweep runner for model {self.name!r}")
        return resolve(self.summary)


def _count(v: Any) -> int | None:
    return None if v is None else len(v)


def _names(v: Any) -> str:
    return v if isinstance(v, str) else ",".join(v)


def _lists(v: Any) -> str:
    if isinstance(v, str):
        return v
    return ";".join(",".join(f"{x:g}" for x in job) for job in v)


#: Summary entries that are not numbers a CI target could name.
_NOT_METRICS = ("wall_seconds", "rep_means", "scheme", "machine", "workload", "livelock")

#: Every model, by name, in documentation order.
MODELS: dict[str, Model] = {m.name: m for m in (
    Model("pools", PoolsConfig, "parsched.sim.api:simulate_pools",
          "parsched.sim.api:_run_summary", "mean_response_time",
          "parsched.sim.api:SUMMARY_KEYS", cells={"arrivals": _count}),
    Model("barrier", BarrierConfig, "parsched.sim.api:simulate_barrier",
          "parsched.sim.api:_run_barrier_summary", "time_per_iteration",
          "parsched.sim.api:BARRIER_SUMMARY_KEYS", cells={"samples": len}),
    Model("batch", BatchConfig, "parsched.sim.batch:simulate_batch",
          "parsched.sim.batch:_run_batch_summary", "avg_bounded_slowdown",
          "parsched.sim.batch:BATCH_SUMMARY_KEYS", ("dropped",), seed_key="workload_seed"),
    Model("cosched", CoschedConfig, "parsched.sim.cosched:simulate_cosched",
          "parsched.sim.cosched:_run_cosched_summary", "completion_time",
          "parsched.sim.cosched:COSCHED_SUMMARY_KEYS", ("livelock",),
          cells={"jobs": _names}),
    Model("fcs", FcsConfig, "parsched.sim.fcs:simulate_fcs",
          "parsched.sim.fcs:_run_fcs_summary", "makespan",
          "parsched.sim.fcs:FCS_SUMMARY_KEYS", ("livelock",), cells={"jobs": _lists}),
    Model("fcs_figure", FcsFigureConfig, "parsched.sim.fcs:simulate_fcs_figure",
          "parsched.sim.fcs:_run_fcs_figure_summary",
          summary_keys="parsched.sim.fcs:FIGURE_SUMMARY_KEYS",
          cells={"schedulers": _names}),
    Model("regions", RegionsConfig, "parsched.sim.regions:simulate_regions",
          "parsched.sim.regions:_run_regions_summary", "normalized_performance",
          "parsched.sim.regions:REGIONS_SUMMARY_KEYS"),
)}


def model_of(config: Any) -> Model:
    """The :class:`Model` of a config object (or of a model's name); a
    ``TypeError`` for anything else."""
    if isinstance(config, str):
        if config in MODELS:
            return MODELS[config]
        raise ValueError(f"no model {config!r}; models: {', '.join(MODELS)}")
    for m in MODELS.values():
        if isinstance(config, m.config):
            return m
    names = ", ".join(m.config.__name__ for m in MODELS.values())
    raise TypeError(f"config must be one of {names}, not {type(config).__name__}")
