"""Seed 002 from Python: flexible coscheduling on the parallel desktop
(Frachtenberg, "Process Scheduling for the Parallel Desktop").

* :func:`simulate_fcs` — Table 1's load-imbalanced workload (or any jobs of
  per-process compute multipliers) under one scheduler: ``default`` (the Linux
  2.6 O(1) scheduler), ``fcfs``, ``gang``, ``sb`` (spin-block) or ``fcs``;
  returns an :class:`FcsResult` (``job_times``, ``makespan``, the classes FCS
  assigned over time).
* :func:`fcs_table` — the five schedulers on one configuration, one row each.
* :data:`PAPER_TABLE1` — the paper's Table 1.

The model and its keys: docs/policies/fcs.md (``fcs_keys()`` lists them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from parsched.config import FcsConfig, FcsFigureConfig
from parsched.config.base import ConfigBase
from parsched.config.schema import schema as _schema
from parsched.config.table import summary_keys
from parsched.errors import ConfigError, TimeLimitError
from parsched.sim.result import SimResult

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["FCS_SUMMARY_KEYS", "FIGURE_SUMMARY_KEYS", "PAPER_TABLE1", "SCHEMES",
           "FcsFigureResult", "FcsResult", "fcs_figure", "fcs_keys", "fcs_table",
           "simulate_fcs", "simulate_fcs_figure"]

#: Seed 002's schedulers, in Table 1's order (the core's schema).
SCHEMES = tuple(next(k for k in _schema("fcs") if k["key"] == "scheme")["choices"])

#: Seed 002's Table 1: run times (s) of jobs 1-3 and the makespan.
PAPER_TABLE1: dict[str, tuple[float, float, float, float]] = {
    "default": (233.0, 233.0, 284.0, 284.0),
    "fcfs": (120.0, 240.0, 300.0, 300.0),
    "gang": (303.0, 303.0, 181.0, 303.0),
    "sb": (210.0, 211.0, 271.0, 271.0),
    "fcs": (248.0, 248.0, 151.0, 248.0),
}


#: Keys of :attr:`FcsResult.summary` (docs/glossary.md).
FCS_SUMMARY_KEYS = summary_keys("fcs")

#: Keys of :attr:`FcsFigureResult.summary`.
FIGURE_SUMMARY_KEYS = summary_keys("fcs_figure")


def _core():
    from parsched.sim.api import core

    return core()


def _keys(config: Mapping[str, Any] | ConfigBase | None, keys: Mapping[str, Any]) -> dict:
    """A config object or mapping, with keyword overrides, as the core's keys."""
    if isinstance(config, ConfigBase):
        return {**config.to_dict(), **keys}
    return {**(dict(config) if config else {}), **keys}


def _run(fn: Any, keys: dict[str, Any], workers: int) -> dict[str, Any]:
    """``fn(keys, workers=...)`` (an extension function) with its errors as
    parsched's."""
    from parsched.sim.api import call_core

    return call_core(fn, keys, workers=workers)


def fcs_keys() -> list[str]:
    """The keys :func:`simulate_fcs` accepts, in documentation order."""
    return list(_core().keys("fcs"))


@dataclass(frozen=True, eq=False, repr=False)
class FcsResult(SimResult):
    """The outcome of one :func:`simulate_fcs` call (seconds of simulated time
    from the start).

    ``job_times``: each job's finish, in job order; ``makespan``: the last
    one (mean over replications; ``makespan_ci90`` its 90% CI half-width, NaN
    for one replication); ``optimum``: total demand over processors, the
    makespan no schedule beats; ``over_optimum``: (makespan − optimum) /
    optimum; ``classes``: FCS's class changes in the first replication
    (``time_s``, ``job`` 0-based, ``class`` CS/F/DC); the counters
    (``context_switches``, ``blocks``, ``slot_switches``, ``events``) are totals
    over the replications; ``config``: every key's
    value as the core read it. ``summary``: :data:`FCS_SUMMARY_KEYS`;
    :meth:`frames`: ``jobs`` (``job``, ``finish_s``) and ``classes``.
    """

    scheme: str
    job_times: list[float]
    makespan: float
    makespan_ci90: float
    optimum: float
    over_optimum: float
    classes: list[dict[str, Any]]
    counters: dict[str, float]
    config: dict[str, Any] = field(default_factory=dict)

    _HEADLINE = ("job_times", "makespan", "optimum", "over_optimum")
    FRAMES = ("jobs", "classes")

    def _label(self) -> str:
        return f"scheme={self.scheme}"

    @property
    def summary(self) -> dict[str, Any]:
        """The scalars, :data:`FCS_SUMMARY_KEYS`."""
        out = {k: getattr(self, k) for k in FCS_SUMMARY_KEYS[:5]}
        out.update(self.counters)
        return out

    def frames(self) -> dict[str, pd.DataFrame]:
        """``jobs``: one row per job (``job`` 0-based, ``finish_s``);
        ``classes``: :meth:`classes_frame`."""
        import pandas as pd

        return {"jobs": pd.DataFrame({"job": range(len(self.job_times)),
                                      "finish_s": self.job_times}),
                "classes": self.classes_frame()}

    def _extra_dict(self) -> dict[str, Any]:
        return {"job_times": self.job_times, "classes": self.classes}

    def classes_frame(self) -> pd.DataFrame:
        """The class changes as a DataFrame (time_s, job, class)."""
        import pandas as pd

        return pd.DataFrame(self.classes, columns=["time_s", "job", "class"])


@dataclass(frozen=True, eq=False, repr=False)
class FcsFigureResult(SimResult):
    """The outcome of one :func:`simulate_fcs_figure` call: ``runs`` (one row
    per scheduler, k parallel programs and s stressors: ``machine``,
    ``scheduler``, ``k``, ``s``, ``runtime_s``), ``summary``
    (:data:`FIGURE_SUMMARY_KEYS`: ``work_s`` is one program's work alone) and
    ``config`` (every key's value as the core read it)."""

    summary: dict[str, Any]
    rows: list[dict[str, Any]] = field(repr=False)
    config: dict[str, Any] = field(default_factory=dict)

    _HEADLINE = ("work_s", "events")
    FRAMES = ("runs",)

    def _label(self) -> str:
        return f"machine={self.summary.get('machine')}"

    @property
    def runs(self) -> pd.DataFrame:
        """One row per (scheduler, k, s), with ``attrs`` ``work_s`` and ``config``."""
        import pandas as pd

        df = pd.DataFrame(self.rows, columns=["machine", "scheduler", "k", "s", "runtime_s"])
        df.attrs["work_s"] = float(self.summary["work_s"])
        df.attrs["config"] = dict(self.config)
        return df

    def _extra_dict(self) -> dict[str, Any]:
        return {"runs": [dict(r) for r in self.rows]}


def _num(v: Any) -> float:
    return math.nan if v is None else float(v)


def simulate_fcs(config: FcsConfig | Mapping[str, Any] | None = None, /, *,
                 workers: int | None = None, **keys: Any) -> FcsResult:
    """Runs seed 002's Table 1 model with ``config`` (an :class:`FcsConfig` or
    a mapping of keys) and
    ``keys`` (keyword overrides, e.g. ``scheme="gang", scale=0.1``); default:
    the paper's workload under FCS. ``jobs`` takes a list of per-process
    multiplier lists (``[[1, 1, 2, 2], [2, 2, 1, 1], [1, 1, 1, 1]]``) or the
    text ``"1,1,2,2;2,2,1,1;1,1,1,1"``. Raises :class:`ConfigError` (with
    ``field``) for a bad key or value, :class:`TimeLimitError` past
    ``max_time_s``, ``KeyboardInterrupt`` promptly on Ctrl-C. Releases the GIL.
    """
    merged = _keys(config, keys)
    reps = merged.get("reps", 1)
    try:
        w = max(1, min(int(workers or 1), int(reps) if str(reps).isdigit() else 1))
    except (TypeError, ValueError):
        w = 1
    out = _run(_core().simulate_fcs, merged, w)
    counters = {k: float(out[k]) for k in ("context_switches", "blocks", "slot_switches",
                                           "events", "wall_seconds")}
    return FcsResult(
        scheme=str(out["scheme"]),
        job_times=[float(x) for x in out["job_times"]],
        makespan=_num(out["makespan"]),
        makespan_ci90=_num(out["makespan_ci90"]),
        optimum=_num(out["optimum"]),
        over_optimum=_num(out["over_optimum"]),
        classes=[{"time_s": float(r["time_s"]), "job": int(r["job"]), "class": str(r["class"])}
                 for r in out["classes"]],
        counters=counters,
        config=dict(out["config"]),
    )


def _run_fcs_summary(cfg: dict[str, Any]) -> dict[str, Any]:
    """Worker entry point of :func:`parsched.sweep` for an :class:`FcsConfig`:
    the summary of one configuration (its replications on one thread); a run
    that passes ``max_time_s`` gives NaNs and ``livelock`` True."""
    try:
        summary = simulate_fcs(cfg, workers=1).summary
    except TimeLimitError:
        nan = math.nan
        return {**dict.fromkeys(FCS_SUMMARY_KEYS, nan), "scheme": cfg.get("scheme"),
                "events": 0, "livelock": True}
    return {**summary, "livelock": False}


def fcs_table(config: Mapping[str, Any] | None = None, /,
              schemes: Sequence[str] = SCHEMES, **keys: Any) -> list[FcsResult]:
    """:func:`simulate_fcs` under each of ``schemes`` (default: all five, in
    Table 1's order) on one configuration."""
    bad = [s for s in schemes if s not in SCHEMES]
    if bad:
        raise ConfigError("scheme", f"{bad[0]!r} is not a scheme", "|".join(SCHEMES))
    return [simulate_fcs(config, **{**keys, "scheme": s}) for s in schemes]


def simulate_fcs_figure(config: FcsFigureConfig | Mapping[str, Any] | None = None, /, *,
                        workers: int | None = None, **keys: Any) -> FcsFigureResult:
    """Seed 002's Figures 1-2 in simulation (:class:`FcsFigureConfig` or a
    mapping, and keyword overrides) as an :class:`FcsFigureResult`; see
    :func:`fcs_figure`."""
    out = _run(_core().simulate_fcs_figure, _keys(config, keys), max(1, int(workers or 1)))
    rows = [dict(zip(("machine", "scheduler", "k", "s", "runtime_s"), _row(r), strict=True))
            for r in out["rows"]]
    config_values = dict(out["config"])
    summary = {"machine": config_values.get("machine"), "work_s": float(out["work_s"]),
               "events": int(out.get("events", 0)),
               "wall_seconds": float(out.get("wall_seconds", 0.0))}
    return FcsFigureResult(summary=summary, rows=rows, config=config_values)


def _run_fcs_figure_summary(cfg: dict[str, Any]) -> dict[str, Any]:
    """Worker entry point of :func:`parsched.sweep` for an
    :class:`FcsFigureConfig`: the summary, then one column per point of the
    figure, ``runtime_s_SCHEDULER_kK_sS`` (the run time of k programs beside s
    stressors under that scheduler), so that a sweep row keeps the whole grid."""
    res = simulate_fcs_figure(cfg, workers=1)
    out = dict(res.summary)
    for r in res.rows:
        out[f"runtime_s_{r['scheduler']}_k{r['k']}_s{r['s']}"] = r["runtime_s"]
    return out


def _row(r: Any) -> tuple:
    if isinstance(r, Mapping):
        return tuple(r[k] for k in ("machine", "scheduler", "k", "s", "runtime_s"))
    return tuple(r)


def fcs_figure(config: FcsFigureConfig | Mapping[str, Any] | None = None, /, *,
               workers: int | None = None, **keys: Any) -> pd.DataFrame:
    """Seed 002's Figures 1-2 in simulation: k parallel programs plus s
    sequential stressors under the default scheduler (the O(1) model) and gang
    scheduling, on ``machine="es40"`` (4 processors, 4-thread programs) or
    ``"potomac"`` (4 cores x 2 hardware threads, 7-thread programs; two busy
    siblings each run at ``smt_speed``). Returns one row per (scheduler, k, s):
    columns machine, scheduler, k, s, runtime_s (the last parallel program's
    finish, s). Keys: docs/policies/fcs.md ("Figures 1-2")."""
    return simulate_fcs_figure(config, workers=workers, **keys).runs
