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

from ._from_core import CoreConfig
from .base import _class_doc
from .schema import model_class

__all__ = ["FcsConfig", "FcsFigureConfig"]


class _FcsMethods(CoreConfig):
    """What :class:`FcsConfig` adds to its schema's keys: ``jobs`` as a tuple
    of per-process multiplier tuples, in the core's spelling."""

    __slots__ = ()
    TOML_TABLE: ClassVar[str] = "fcs"
    MODEL: ClassVar[str] = "fcs"
    LISTS: ClassVar[tuple[str, ...]] = ("jobs",)


class _FcsFigureMethods(CoreConfig):
    """What :class:`FcsFigureConfig` adds to its schema's keys:
    ``schedulers`` as a tuple of names, in the core's spelling."""

    __slots__ = ()
    TOML_TABLE: ClassVar[str] = "fcs_figure"
    MODEL: ClassVar[str] = "fcs_figure"
    LISTS: ClassVar[tuple[str, ...]] = ("schedulers",)


FcsConfig = model_class(
    "FcsConfig", "fcs", _FcsMethods, module=__name__, types={"jobs": tuple},
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
