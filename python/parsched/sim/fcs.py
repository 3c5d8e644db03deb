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

from parsched.config.base import _core_error
from parsched.errors import ConfigError, SimulationError, TimeLimitError
from parsched.report.common import ResultRepr, jsonable

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["PAPER_TABLE1", "SCHEMES", "FcsResult", "fcs_figure", "fcs_keys", "fcs_table",
           "simulate_fcs"]

#: Seed 002's schedulers, in Table 1's order.
SCHEMES = ("default", "fcfs", "gang", "sb", "fcs")

#: Seed 002's Table 1: run times (s) of jobs 1-3 and the makespan.
PAPER_TABLE1: dict[str, tuple[float, float, float, float]] = {
    "default": (233.0, 233.0, 284.0, 284.0),
    "fcfs": (120.0, 240.0, 300.0, 300.0),
    "gang": (303.0, 303.0, 181.0, 303.0),
    "sb": (210.0, 211.0, 271.0, 271.0),
    "fcs": (248.0, 248.0, 151.0, 248.0),
}


def _core():
    from parsched.sim.api import core

    return core()


def fcs_keys() -> list[str]:
    """The keys :func:`simulate_fcs` accepts, in documentation order."""
    return list(_core().fcs_keys())


@dataclass(frozen=True, eq=False, repr=False)
class FcsResult(ResultRepr):
    """The outcome of one :func:`simulate_fcs` call (seconds of simulated time
    from the start).

    ``job_times``: each job's finish, in job order; ``makespan``: the last
    one (mean over replications; ``makespan_ci90`` its 90% CI half-width, NaN
    for one replication); ``optimum``: total demand over processors, the
    makespan no schedule beats; ``over_optimum``: (makespan − optimum) /
    optimum; ``classes``: FCS's class changes in the first replication
    (``time_s``, ``job`` 0-based, ``class`` CS/F/DC); ``config``: every key's
    value.
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

    def _label(self) -> str:
        return f"scheme={self.scheme}"

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON-ready values."""
        return jsonable({
            "scheme": self.scheme,
            "job_times": self.job_times,
            "makespan": self.makespan,
            "makespan_ci90": self.makespan_ci90,
            "optimum": self.optimum,
            "over_optimum": self.over_optimum,
            "classes": self.classes,
            **self.counters,
            "config": self.config,
        })

    def classes_frame(self) -> pd.DataFrame:
        """The class changes as a DataFrame (time_s, job, class)."""
        import pandas as pd

        return pd.DataFrame(self.classes, columns=["time_s", "job", "class"])


def _num(v: Any) -> float:
    return math.nan if v is None else float(v)


def simulate_fcs(config: Mapping[str, Any] | None = None, /, *, workers: int | None = None,
                 **keys: Any) -> FcsResult:
    """Runs seed 002's Table 1 model with ``config`` (a mapping of keys) and
    ``keys`` (keyword overrides, e.g. ``scheme="gang", scale=0.1``); default:
    the paper's workload under FCS. ``jobs`` takes a list of per-process
    multiplier lists (``[[1, 1, 2, 2], [2, 2, 1, 1], [1, 1, 1, 1]]``) or the
    text ``"1,1,2,2;2,2,1,1;1,1,1,1"``. Raises :class:`ConfigError` (with
    ``field``) for a bad key or value, :class:`TimeLimitError` past
    ``max_time_s``, ``KeyboardInterrupt`` promptly on Ctrl-C. Releases the GIL.
    """
    merged = {**(dict(config) if config else {}), **keys}
    c = _core()
    reps = merged.get("reps", 1)
    try:
        w = max(1, min(int(workers or 1), int(reps) if str(reps).isdigit() else 1))
    except (TypeError, ValueError):
        w = 1
    try:
        out = c.simulate_fcs(merged, workers=w)
    except c.ConfigError as e:
        raise _core_error(e) from None
    except c.TimeLimitError as e:
        raise TimeLimitError(str(e)) from None
    except c.SimulationError as e:
        raise SimulationError(str(e)) from None
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


def fcs_table(config: Mapping[str, Any] | None = None, /,
              schemes: Sequence[str] = SCHEMES, **keys: Any) -> list[FcsResult]:
    """:func:`simulate_fcs` under each of ``schemes`` (default: all five, in
    Table 1's order) on one configuration."""
    bad = [s for s in schemes if s not in SCHEMES]
    if bad:
        raise ConfigError("scheme", f"{bad[0]!r} is not a scheme", "|".join(SCHEMES))
    return [simulate_fcs(config, **{**keys, "scheme": s}) for s in schemes]


def fcs_figure(config: Mapping[str, Any] | None = None, /, *, workers: int | None = None,
               **keys: Any) -> pd.DataFrame:
    """Seed 002's Figures 1-2 in simulation: k parallel programs plus s
    sequential stressors under the default scheduler (the O(1) model) and gang
    scheduling, on ``machine="es40"`` (4 processors, 4-thread programs) or
    ``"potomac"`` (4 cores x 2 hardware threads, 7-thread programs; two busy
    siblings each run at ``smt_speed``). Returns one row per (scheduler, k, s):
    columns machine, scheduler, k, s, runtime_s (the last parallel program's
    finish, s). Keys: docs/policies/fcs.md ("Figures 1-2")."""
    import pandas as pd

    merged = {**(dict(config) if config else {}), **keys}
    c = _core()
    try:
        out = c.simulate_fcs_figure(merged, workers=max(1, int(workers or 1)))
    except c.ConfigError as e:
        raise _core_error(e) from None
    except c.TimeLimitError as e:
        raise TimeLimitError(str(e)) from None
    except c.SimulationError as e:
        raise SimulationError(str(e)) from None
    df = pd.DataFrame(out["rows"], columns=["machine", "scheduler", "k", "s", "runtime_s"])
    df.attrs["work_s"] = float(out["work_s"])
    df.attrs["config"] = dict(out["config"])
    return df
