"""Seed 004 from Python: region scheduling (Lee & Schwan, "Region Scheduling:
Efficiently Using the Cache Architectures via Page-level Affinity", ASPLOS
2012) on the simulated machine.

* :func:`simulate_regions` — one workload (``memlat``: Figure 9's two-region
  benchmark; ``balance``: §5.2's two large and two small programs) on a
  Clovertown- or Westmere-like machine, the same work under the standard
  scheduler and under region scheduling; returns a :class:`RegionsResult`
  (``normalized_performance``, ``speedup``, ``microschedules_per_s``, the
  per-cache loads, both runs).
* :func:`regions_keys` — the keys it accepts.
* :data:`PAPER` — the paper's numbers the experiments are compared with.

The model, its keys and what it gives: docs/policies/regions.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from parsched.config import RegionsConfig
from parsched.config.base import ConfigBase
from parsched.config.table import summary_keys
from parsched.sim.result import SimResult

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["PAPER", "REGIONS_SUMMARY_KEYS", "RegionsResult", "regions_keys",
           "simulate_regions"]

#: Keys of :attr:`RegionsResult.summary` (docs/glossary.md).
REGIONS_SUMMARY_KEYS = summary_keys("regions")

#: The paper's statements (§3.1, §5.1, §5.2) the experiments are set beside.
PAPER: dict[str, Any] = {
    "microschedule_us": {"clovertown": 15.86, "westmere": 6.357},
    "fig9_peak_gain": {"clovertown": 1.45, "westmere": "over 300% (ratio > 3)"},
    "fig9_rates_per_s": {"clovertown": (295, 2240), "westmere": (180, 5100)},
    "condition1_no_gain_at_or_below_access_time": 2 ** 12,
    "condition1_marginal_from_access_time_clovertown": 2 ** 16,
    "condition2_harmful_at_or_below_mb": {"clovertown": 2 * 1.8, "westmere": 2 * 4.0},
    "condition3_fits_unified_mb": {"clovertown": 8.0, "westmere": 24.0},
    "balance_speedup_more_than": 1.5,
}


def _core():
    from parsched.sim.api import core

    return core()


def regions_keys() -> list[str]:
    """The keys :func:`simulate_regions` accepts, in documentation order."""
    return list(_core().keys("regions"))


@dataclass(frozen=True, eq=False, repr=False)
class RegionsResult(SimResult):
    """The outcome of one :func:`simulate_regions` call.

    ``normalized_performance``: the standard scheduler's time over region
    scheduling's on the same work (> 1: region scheduling is faster);
    ``speedup``: the same for ``workload=balance`` (None for memlat);
    ``speedup_per_program``: per program; ``microschedules_per_s`` and
    ``microschedules`` of the region run; ``cache_loads`` (bytes mapped to
    each last-level cache under region scheduling) and
    ``cache_loads_standard`` (the standard placement's); the miss ratios;
    ``standard`` / ``region``: each run's details (finish times in ns,
    per-cache accesses, misses and loads, the fallback decisions, each
    region's final ``placement`` and ``estimates``, and with
    ``regioning="online"`` the ``rebalances`` and ``last_rebalance_ns``);
    ``cache_loads`` is the final placement's with ``regioning="online"``;
    ``timing``: hit/miss ns and the micro-schedule cost used; ``config``:
    every key's value as the core read it. ``summary``:
    :data:`REGIONS_SUMMARY_KEYS`; :meth:`frames`: ``caches`` (one row per
    last-level cache: ``cache``, ``load_region``, ``load_standard``, bytes)
    and ``programs`` (``program``, ``speedup``; balance only).
    """

    machine: str
    workload: str
    normalized_performance: float
    speedup: float | None
    speedup_per_program: list[float]
    microschedules_per_s: float
    microschedules: int
    cache_loads: list[int]
    cache_loads_standard: list[int]
    miss_ratio_standard: float
    miss_ratio_region: float
    standard: dict[str, Any]
    region: dict[str, Any]
    timing: dict[str, Any]
    config: dict[str, Any] = field(default_factory=dict)

    _HEADLINE = ("normalized_performance", "speedup", "microschedules_per_s", "cache_loads")
    FRAMES = ("caches", "programs")

    def _label(self) -> str:
        return f"machine={self.machine}, workload={self.workload}"

    @property
    def summary(self) -> dict[str, Any]:
        """The scalars, :data:`REGIONS_SUMMARY_KEYS`."""
        return {k: getattr(self, k) for k in REGIONS_SUMMARY_KEYS}

    @property
    def caches(self) -> pd.DataFrame:
        """One row per last-level cache: bytes mapped to it under region
        scheduling and under the standard placement."""
        import pandas as pd

        return pd.DataFrame({"cache": range(len(self.cache_loads)),
                             "load_region": self.cache_loads,
                             "load_standard": self.cache_loads_standard})

    @property
    def programs(self) -> pd.DataFrame:
        """One row per program: its speedup (balance; empty for memlat)."""
        import pandas as pd

        return pd.DataFrame({"program": range(len(self.speedup_per_program)),
                             "speedup": self.speedup_per_program})

    def _extra_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in (
            "speedup_per_program", "cache_loads", "cache_loads_standard", "standard",
            "region", "timing")}


def simulate_regions(config: RegionsConfig | Mapping[str, Any] | None = None, /,
                     **keys: Any) -> RegionsResult:
    """Runs seed 004's region machine with ``config`` (a :class:`RegionsConfig`
    or a mapping of keys) and
    ``keys`` (keyword overrides, e.g. ``machine="westmere", wss_mb=20,
    access_time=2**14``); default: memlat, 6 MB, access time 2^16 on the
    Clovertown-like machine. Raises :class:`ConfigError` (with ``field``) for
    a bad key or value, :class:`PolicyError` if a policy decision cannot be
    applied, :class:`SimulationError` for a bad program. Releases the GIL."""
    if isinstance(config, ConfigBase):
        config = config.to_dict()
    from parsched.sim.api import call_core

    merged = {**(dict(config) if config else {}), **keys}
    out = call_core(_core().simulate_regions, merged)
    sp = out["speedup"]
    return RegionsResult(
        machine=str(out["machine"]),
        workload=str(out["workload"]),
        normalized_performance=float(out["normalized_performance"]),
        speedup=None if sp is None else float(sp),
        speedup_per_program=[float(x) for x in out["speedup_per_program"]],
        microschedules_per_s=float(out["microschedules_per_s"]),
        microschedules=int(out["microschedules"]),
        cache_loads=[int(x) for x in out["cache_loads"]],
        cache_loads_standard=[int(x) for x in out["cache_loads_standard"]],
        miss_ratio_standard=float(out["miss_ratio_standard"]),
        miss_ratio_region=float(out["miss_ratio_region"]),
        standard=dict(out["standard"]),
        region=dict(out["region"]),
        timing=dict(out["timing"]),
        config=dict(out["config"]),
    )


def _run_regions_summary(cfg: dict[str, Any]) -> dict[str, Any]:
    """Worker entry point of :func:`parsched.sweep` for a :class:`RegionsConfig`."""
    return simulate_regions(cfg).summary
