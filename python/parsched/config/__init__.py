"""Typed configurations of parsched's models, one module a model.

* :class:`PoolsConfig` (:mod:`.pools`) — the processor-pool model (seed 000,
  Zhou & Brecht 1991), the keys of ``parsched._core.simulate_pools``; defaults
  are the paper's Table 2.
* :class:`BarrierConfig` (:mod:`.barrier`) — the fine-grain synchronization
  machine (seed 001, Feitelson & Rudolph 1992), the keys of
  ``parsched._core.simulate_barrier`` (times in ms).
* :class:`BatchConfig` (:mod:`.batch`) — batch space-sharing and gang
  scheduling of rigid jobs on an SWF workload trace, the keys of
  ``parsched._core.keys("batch")`` plus the ``trace`` path.
* :class:`FcsConfig` (:mod:`.fcs`) — flexible coscheduling on the parallel
  desktop (seed 002, Frachtenberg), the keys of ``parsched._core.simulate_fcs``.
* :class:`LublinConfig` (:mod:`.lublin`) — the Lublin–Feitelson workload
  generator's keys (``parsched generate lublin``).
* :class:`RegionsConfig` (:mod:`.regions`) — region scheduling on the simulated
  machine (seed 004, Lee & Schwan), the keys of ``parsched._core.simulate_regions``.
* :class:`CoschedConfig` (:mod:`.cosched`) — coscheduling on a network of
  workstations (seed 003, Nagar et al. 1999), the keys of
  ``parsched._core.keys("cosched")``.
* :class:`FcsConfig`, :class:`FcsFigureConfig` (:mod:`.fcs`) — the parallel
  desktop (seed 002): Table 1's model and Figures 1-2.
* :class:`RegionsConfig` (:mod:`.regions`) — region scheduling (seed 004).
* :class:`LublinConfig` (:mod:`.lublin`) — the Lublin-Feitelson generator.

All are frozen dataclasses built on :class:`ConfigBase` (:mod:`.base`), which
supplies the shared machinery: typed coercion of every field, ``with_``,
``to_dict``, ``from_dict``, ``KEY=VALUE`` overrides (``apply_overrides``,
``parse_value``), TOML in and out, and per-field docs. The Rust core defines
each model's defaults and what is valid: the defaults are read from it at
import, and every config is checked by the core's ``validate`` when it is
made, with the core's one-line ``FIELD: problem; allowed: ...`` messages.
"""

from __future__ import annotations

from collections.abc import Sequence

from .barrier import BarrierConfig, harmonic_number, tw_per_unit_var
from .base import ConfigBase, core_defaults
from .batch import BatchConfig
from .cosched import CoschedConfig
from .fcs import FcsConfig, FcsFigureConfig
from .lublin import LublinConfig
from .pools import Arrivals, PoolsConfig, from_toml, parse_value
from .regions import RegionsConfig
from .table import generic_class

__all__ = [
    "Arrivals",
    "BarrierConfig",
    "BatchConfig",
    "ConfigBase",
    "CoschedConfig",
    "FcsConfig",
    "FcsFigureConfig",
    "LublinConfig",
    "PoolsConfig",
    "RegionsConfig",
    "apply_overrides",
    "core_defaults",
    "from_toml",
    "harmonic_number",
    "parse_value",
    "tw_per_unit_var",
]


def apply_overrides(config: ConfigBase, items: Sequence[str]):
    """Module-level spelling of :meth:`ConfigBase.apply_overrides`."""
    return config.apply_overrides(items)


def __getattr__(name: str):
    """The class of a model of the core's table that has no module here
    (:func:`parsched.config.table.generic_class`)."""
    from .table import rows

    for r in rows():
        if r["class"] == name:
            return generic_class(r["name"])
    raise AttributeError(f"module 'parsched.config' has no attribute {name!r}")
