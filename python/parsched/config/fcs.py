"""Seed 002's parallel desktop (Frachtenberg): :class:`FcsConfig`, the keys of
``parsched._core.simulate_fcs`` (Rust ``desktop::DesktopConfig``, Table 1's
load-imbalanced workload under one scheduler), and :class:`FcsFigureConfig`,
the keys of ``simulate_fcs_figure`` (Rust ``desktop_figs::FigureConfig``,
Figures 1-2), each with the core's defaults. The keys: docs/policies/fcs.md.
"""

from __future__ import annotations

from ._from_core import core_config

__all__ = ["FcsConfig", "FcsFigureConfig"]

FcsConfig = core_config(
    "FcsConfig", "fcs",
    "One run of seed 002's Table 1 model: MPI-like jobs on dual-processor nodes "
    "under default (Linux O(1)), fcfs, gang, sb (spin-block) or fcs (flexible "
    "coscheduling). ``jobs``: per-job lists of per-process compute multipliers "
    "(or the text ``1,1,2,2;2,2,1,1;1,1,1,1``).",
    where="docs/policies/fcs.md")

FcsFigureConfig = core_config(
    "FcsFigureConfig", "fcs_figure",
    "Seed 002's Figures 1-2 in simulation: k parallel programs plus s sequential "
    "stressors under each of ``schedulers`` on ``machine`` (es40 or potomac).",
    where='docs/policies/fcs.md ("Figures 1-2")', optional={"threads": int})
