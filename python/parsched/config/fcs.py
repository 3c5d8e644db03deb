"""Seed 002's parallel desktop (Frachtenberg, "Process Scheduling for the
Parallel Desktop"): :class:`FcsConfig`, the keys of
``parsched._core.simulate_fcs`` (Rust ``DesktopConfig``, Table 1's
load-imbalanced workload under one scheduler), and :class:`FcsFigureConfig`,
the keys of ``simulate_fcs_figure`` (Rust ``FigureConfig``, Figures 1-2),
both built from the core's schemas (``parsched._core.schema("fcs")``,
``schema("fcs_figure")``). The keys of the cluster both lower onto are
declared once in the core and accept the same values in both. The model:
docs/policies/fcs.md.
"""

from __future__ import annotations

from typing import ClassVar

from .base import ConfigBase, _class_doc
from .schema import model_class

__all__ = ["FcsConfig", "FcsFigureConfig"]


class _FcsMethods(ConfigBase):
    """What :class:`FcsConfig` adds to its schema's keys: its model's name
    (``jobs``, a table, is a tuple of per-process multiplier tuples)."""

    __slots__ = ()
    TOML_TABLE: ClassVar[str] = "fcs"
    MODEL: ClassVar[str] = "fcs"

    def __post_init__(self) -> None:
        self._coerce_fields()
        self._validate()


class _FcsFigureMethods(ConfigBase):
    """What :class:`FcsFigureConfig` adds to its schema's keys: its model's
    name (``schedulers``, names, is a tuple)."""

    __slots__ = ()
    TOML_TABLE: ClassVar[str] = "fcs_figure"
    MODEL: ClassVar[str] = "fcs_figure"

    def __post_init__(self) -> None:
        self._coerce_fields()
        self._validate()


FcsConfig = model_class(
    "FcsConfig", "fcs", _FcsMethods, module=__name__,
    doc="""One run of seed 002's Table 1 model: MPI-like jobs on dual-processor
    nodes under default (Linux O(1)), fcfs, gang, sb (spin-block) or fcs
    (flexible coscheduling). Keys, types, choices, ranges, docs and defaults
    come from the core's schema; ``jobs``: per-job lists of per-process
    compute multipliers (or the text ``1,1,2,2;2,2,1,1;1,1,1,1``).""")
FcsConfig.__doc__ = _class_doc(FcsConfig)

FcsFigureConfig = model_class(
    "FcsFigureConfig", "fcs_figure", _FcsFigureMethods, module=__name__,
    doc="""Seed 002's Figures 1-2 in simulation: k parallel programs plus s
    sequential stressors under each of ``schedulers`` on ``machine`` (es40 or
    potomac). Keys, types, choices, ranges, docs and defaults come from the
    core's schema.""")
FcsFigureConfig.__doc__ = _class_doc(FcsFigureConfig)
