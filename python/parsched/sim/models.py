"""The Python registry of parsched's simulated models (:data:`MODELS`).

The models themselves are rows of the Rust core's table
(:mod:`parsched.config.table`): name, configuration class, summary keys, the
summary number a CI target defaults to (``headline``), the key a
replication varies (``seed_key``) and the keys a sweep row adds. This
module adds what only Python has: each model's front end (``simulate``:
config → its result, what :func:`parsched.simulate` calls; ``summary``: the
config's dict → the summary dict, a module-level function so that it
pickles for process and Dask executors) and how its non-scalar fields show
in a sweep row (``cells``). :func:`parsched.simulate`, :func:`parsched.sweep`,
sweep spec files and ``parsched simulate MODEL`` all look models up here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

import parsched.config as _configs
from parsched.config.base import ConfigBase
from parsched.config.table import rows

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
    #: the result's summary keys, in order
    summary_keys: tuple[str, ...] = ()
    #: keys a sweep row adds to the summary
    extra_keys: tuple[str, ...] = ()
    #: the key a sweep replication varies
    seed_key: str = "seed"
    #: sweep-row cells of the non-scalar fields: field -> config value -> cell
    cells: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)

    @property
    def keys(self) -> tuple[str, ...]:
        """The summary keys of this model's result (and of its sweep rows)."""
        return (*self.summary_keys, *self.extra_keys)

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
        if self.summary == _GENERIC_SUMMARY:
            return functools.partial(resolve(self.summary), self.name)
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

#: Each simulated model's Python front end: ``(simulate, summary)``
#: references (``"module:function"``) and its sweep-row cells.
_FRONT_ENDS: dict[str, tuple[str, str, Mapping[str, Callable[[Any], Any]]]] = {
    "pools": ("parsched.sim.api:simulate_pools", "parsched.sim.api:_run_summary",
              {"arrivals": _count}),
    "barrier": ("parsched.sim.api:simulate_barrier", "parsched.sim.api:_run_barrier_summary",
                {"samples": len}),
    "batch": ("parsched.sim.batch:simulate_batch", "parsched.sim.batch:_run_batch_summary", {}),
    "cosched": ("parsched.sim.cosched:simulate_cosched",
                "parsched.sim.cosched:_run_cosched_summary", {"jobs": _names}),
    "fcs": ("parsched.sim.fcs:simulate_fcs", "parsched.sim.fcs:_run_fcs_summary",
            {"jobs": _lists}),
    "fcs_figure": ("parsched.sim.fcs:simulate_fcs_figure",
                   "parsched.sim.fcs:_run_fcs_figure_summary", {"schedulers": _names}),
    "regions": ("parsched.sim.regions:simulate_regions",
                "parsched.sim.regions:_run_regions_summary", {}),
}


#: The generic front end (:mod:`parsched.sim.generic`), for a model with
#: none of its own.
_GENERIC = ("parsched.sim.generic:simulate_generic", "parsched.sim.generic:summary_of", {})
_GENERIC_SUMMARY = _GENERIC[1]


def _model(r: dict[str, Any]) -> Model:
    simulate, summary, cells = _FRONT_ENDS.get(r["name"], _GENERIC)
    return Model(r["name"], getattr(_configs, r["class"]), simulate, summary, r["headline"],
                 tuple(r["summary_keys"]), tuple(r["sweep_keys"]), r["seed_key"], cells)


#: Every simulated model with a front end (its own, or the generic one for a
#: model with a generic run), by name, in the core table's order.
MODELS: dict[str, Model] = {r["name"]: _model(r) for r in rows("simulated")
                            if r["name"] in _FRONT_ENDS or r["run"]}


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
