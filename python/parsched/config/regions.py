"""Seed 004's region scheduling (Lee & Schwan, ASPLOS 2012):
:class:`RegionsConfig`, the keys of ``parsched._core.simulate_regions`` (Rust
``machines::regions::RegionsConfig``) with the core's defaults. The keys and
the model: docs/policies/regions.md.
"""

from __future__ import annotations

from ._from_core import core_config

__all__ = ["RegionsConfig"]

RegionsConfig = core_config(
    "RegionsConfig", "regions",
    "One run of seed 004's region machine: the same work (memlat or balance) "
    "under the standard scheduler and under region scheduling, on a "
    "Clovertown- or Westmere-like machine.",
    where="docs/policies/regions.md")
